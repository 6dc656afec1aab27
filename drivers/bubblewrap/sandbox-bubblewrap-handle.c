/* sandbox-bubblewrap-handle.c — the owner of a live bubblewrap session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-bubblewrap-coding.h"
#include "sandbox-bubblewrap-handle-private.h"
#include "sandbox-bubblewrap-store-layout-private.h"

/*
 * Stop and delete exactly as DESIGN.md §5: stop kills every live command
 * and waits for their trees to be gone, closes the gateway (removing its
 * temporary socket directory), then releases the lease, keeping
 * the workspace; delete is the core's sandbox_backend_base_delete_session():
 * it re-acquires the lease (BUSY if someone attached meanwhile) and removes
 * the session directory, keeping templates. The base
 * class makes stop idempotent, orders it before delete and stops on the
 * last unref.
 */

struct _SandboxBubblewrapHandle
{
  SandboxHandle parent_instance;

  SandboxBubblewrapDriver *driver;
  SandboxBubblewrapLease *lease;
  SandboxBackendBase *backend;
  SandboxCodingBinding *coding;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxBubblewrapHandle, sandbox_bubblewrap_handle,
                                SANDBOX_TYPE_HANDLE, G_TYPE_FLAG_FINAL, {})

static gboolean
sandbox_bubblewrap_handle_stop (SandboxHandle  *handle,
                                GCancellable   *cancellable,
                                GError        **error)
{
  SandboxBubblewrapHandle *self = SANDBOX_BUBBLEWRAP_HANDLE (handle);

  /* Not cancellable: a half-done stop would leave commands or the lease. */
  sandbox_bubblewrap_driver_stop (self->driver);
  sandbox_bubblewrap_lease_release (self->lease);
  return TRUE;
}

static gboolean
sandbox_bubblewrap_handle_delete_session (SandboxHandle  *handle,
                                          GCancellable   *cancellable,
                                          GError        **error)
{
  SandboxBubblewrapHandle *self = SANDBOX_BUBBLEWRAP_HANDLE (handle);

  return sandbox_backend_base_delete_session (self->backend,
                                              sandbox_state_get_session_id (self->lease->state),
                                              cancellable, error);
}

typedef struct
{
  SandboxBubblewrapLease *lease;
  GCancellable *cancellable;
  char *key;
} Snapshot;

static gboolean
take_snapshot (SandboxNetworkPolicy  *unused,
               gpointer               data,
               GError               **error)
{
  Snapshot *snapshot = data;

  snapshot->key = sandbox_bubblewrap_store_snapshot (snapshot->lease->store, snapshot->lease,
                                                     snapshot->cancellable, error);
  return snapshot->key != NULL;
}

/* While no command runs (BUSY otherwise) and none starts: the session's
 * upper layer, copied (sandbox-bubblewrap-store-snapshots.c). */
static char *
sandbox_bubblewrap_handle_snapshot (SandboxHandle  *handle,
                                    GCancellable   *cancellable,
                                    GError        **error)
{
  SandboxBubblewrapHandle *self = SANDBOX_BUBBLEWRAP_HANDLE (handle);
  Snapshot snapshot = { self->lease, cancellable, NULL };

  if (!sandbox_bubblewrap_driver_run_quiet (self->driver, "taking a snapshot", take_snapshot,
                                            &snapshot, cancellable, error))
    return NULL;
  return snapshot.key;
}

typedef struct
{
  SandboxBubblewrapLease *lease;
  const char *source;
  const char *rebase_key;   /* the new base, or NULL */
  char **rebase_lowers;     /* its chain, taken once the uppers are empty */
} Refill;

static gboolean
refill_upper (gpointer   data,
              GError   **error)
{
  Refill *refill = data;

  if (!sandbox_bubblewrap_store_refill (refill->lease->store, refill->lease, refill->source,
                                        error))
    return FALSE;
  /* Empty upper layers now: the state may name the new base. */
  return refill->rebase_key == NULL ||
         sandbox_bubblewrap_store_rebase_state (refill->lease->store, refill->lease,
                                                refill->rebase_key,
                                                g_steal_pointer (&refill->rebase_lowers), error);
}

/* The session's keeper stopped and started again around new upper layers
 * (sandbox-bubblewrap-driver-layers.c); over a new base's lower layers for
 * a key further along the session's line, which its state then names
 * (sandbox-bubblewrap-store-restore.c). */
static gboolean
sandbox_bubblewrap_handle_restore (SandboxHandle  *handle,
                                   const char     *key,
                                   GCancellable   *cancellable,
                                   GError        **error)
{
  SandboxBubblewrapHandle *self = SANDBOX_BUBBLEWRAP_HANDLE (handle);
  SandboxBubblewrapStore *store = self->lease->store;
  g_autofree char *source = NULL;
  g_auto(GStrv) lowers = NULL;
  g_autofree char *runtime_key = NULL;
  g_autofree char *runtime = NULL;
  g_auto(GStrv) runtime_lowers = NULL;
  g_auto(SandboxBubblewrapFd) key_lock = -1;
  Refill refill = { self->lease, NULL, NULL, NULL };
  gboolean rebase;
  gboolean ok;

  if (!sandbox_bubblewrap_store_restore_source (store, self->lease, key, &source, &rebase,
                                                error))
    return FALSE;
  refill.source = source;
  if (rebase)
    {
      /* Held until the state names the key: no delete takes it meanwhile. */
      key_lock = sandbox_bubblewrap_store_lock_template (store, key, error);
      if (key_lock < 0 || !sandbox_bubblewrap_store_check_template (store, key, error))
        return FALSE;
      /* A copying session has no lower layers to follow the key. */
      if (self->lease->layers != NULL &&
          ((lowers = sandbox_bubblewrap_store_lower_chain (store, key, error)) == NULL ||
           !sandbox_bubblewrap_store_runtime_of (store, key, &runtime_key, &runtime,
                                                 &runtime_lowers, error) ||
           !sandbox_bubblewrap_store_give_template_to_host (store, key, error)))
        return FALSE;
      refill.rebase_key = key;
      refill.rebase_lowers = g_strdupv (lowers);
    }
  ok = sandbox_bubblewrap_driver_replace_layers (self->driver,
                                                 (const char * const *) (lowers != NULL
                                                                         ? lowers
                                                                         : self->lease->lowers),
                                                 (const char * const *) runtime_lowers,
                                                 self->lease->layers, refill_upper, &refill,
                                                 cancellable, error);
  g_strfreev (refill.rebase_lowers);
  /* Whether or not the keeper came back, the stored state may name the
   * key now: so does the handle's. */
  if (rebase && g_str_equal (sandbox_state_get_template_key (self->lease->state), key))
    sandbox_handle_set_state (handle, self->lease->state);
  return ok;
}

static SandboxCodingBinding *
sandbox_bubblewrap_handle_get_coding_binding (SandboxHandle *handle)
{
  return SANDBOX_BUBBLEWRAP_HANDLE (handle)->coding;
}

/**
 * sandbox_bubblewrap_handle_new:
 * @driver: the session's driver
 * @lease: (transfer full): the session, leased
 * @backend: the backend whose session protocol deletes the session
 *
 * Returns: (transfer full): a handle owning the session
 */
SandboxHandle *
sandbox_bubblewrap_handle_new (SandboxBubblewrapDriver *driver,
                               SandboxBubblewrapLease  *lease,
                               SandboxBackendBase      *backend)
{
  g_autoptr(SandboxSession) session = NULL;
  SandboxBubblewrapHandle *self;

  /* The backend serves a gateway whenever the policy is an allow-list. */
  session = sandbox_session_new (sandbox_state_get_session_id (lease->state),
                                 SANDBOX_DRIVER (driver), SANDBOX_GATEWAY_GUEST_SOCKET);
  self = g_object_new (SANDBOX_TYPE_BUBBLEWRAP_HANDLE,
                       "session", session,
                       "state", lease->state,
                       NULL);
  self->driver = g_object_ref (driver);
  self->lease = lease;
  self->backend = g_object_ref (backend);
  self->coding = sandbox_bubblewrap_coding_new (driver);
  sandbox_bubblewrap_driver_set_handle (driver, SANDBOX_HANDLE (self));
  return SANDBOX_HANDLE (self);
}

static void
sandbox_bubblewrap_handle_finalize (GObject *object)
{
  SandboxBubblewrapHandle *self = SANDBOX_BUBBLEWRAP_HANDLE (object);

  /* The base class's dispose has stopped the session by now. */
  g_clear_object (&self->coding);
  g_clear_object (&self->driver);
  g_clear_object (&self->backend);
  g_clear_pointer (&self->lease, sandbox_bubblewrap_lease_free);

  G_OBJECT_CLASS (sandbox_bubblewrap_handle_parent_class)->finalize (object);
}

static void
sandbox_bubblewrap_handle_class_init (SandboxBubblewrapHandleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SandboxHandleClass *handle_class = SANDBOX_HANDLE_CLASS (klass);

  object_class->finalize = sandbox_bubblewrap_handle_finalize;
  handle_class->stop = sandbox_bubblewrap_handle_stop;
  handle_class->delete_session = sandbox_bubblewrap_handle_delete_session;
  handle_class->get_coding_binding = sandbox_bubblewrap_handle_get_coding_binding;
  handle_class->snapshot = sandbox_bubblewrap_handle_snapshot;
  handle_class->restore = sandbox_bubblewrap_handle_restore;
}

static void
sandbox_bubblewrap_handle_class_finalize (SandboxBubblewrapHandleClass *klass)
{
}

static void
sandbox_bubblewrap_handle_init (SandboxBubblewrapHandle *self)
{
}

/**
 * sandbox_bubblewrap_handle_register:
 * @module: the driver module
 *
 * Registers #SandboxBubblewrapHandle with @module.
 */
void
sandbox_bubblewrap_handle_register (GTypeModule *module)
{
  sandbox_bubblewrap_handle_register_type (module);
  sandbox_bubblewrap_coding_register (module);
}
