/* sandbox-memory-handle.c — the owner of a live memory session
 *
 * Holds the session's lease in its backend's store. Stop kills the live
 * commands, waits for them and releases the lease, keeping the workspace;
 * delete (which the base class runs after stop) is the core's
 * sandbox_backend_base_delete_session(): it re-acquires the lease and
 * removes the session, keeping templates. Snapshots and restores are the
 * store's (sandbox-memory-store.c), run while no command does.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "sandbox-memory-handle.h"

struct _SandboxMemoryHandle
{
  SandboxHandle        parent_instance;

  SandboxMemoryDriver *driver;
  SandboxBackendBase  *backend;
  SandboxMemoryStore  *store;
  char                *session_id;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxMemoryHandle, sandbox_memory_handle, SANDBOX_TYPE_HANDLE,
                                G_TYPE_FLAG_FINAL, {})

static gboolean
sandbox_memory_handle_stop (SandboxHandle  *handle,
                            GCancellable   *cancellable,
                            GError        **error)
{
  SandboxMemoryHandle *self = SANDBOX_MEMORY_HANDLE (handle);

  /* Not cancellable: a half-done stop would leave commands running and the
   * lease held, and the wait is bounded by the kills. */
  sandbox_memory_driver_stop (self->driver);
  SANDBOX_BACKEND_BASE_GET_CLASS (self->backend)->release_lease (self->backend, self->session_id);

  return TRUE;
}

static gboolean
sandbox_memory_handle_delete_session (SandboxHandle  *handle,
                                      GCancellable   *cancellable,
                                      GError        **error)
{
  SandboxMemoryHandle *self = SANDBOX_MEMORY_HANDLE (handle);

  return sandbox_backend_base_delete_session (self->backend, self->session_id, cancellable,
                                              error);
}

typedef struct
{
  SandboxMemoryHandle *self;
  const char          *key;       /* to restore to; NULL for a snapshot */
  char                *snapshot;
} Quiet;

static gboolean
snapshot_or_restore (SandboxNetworkPolicy  *unused,
                     gpointer               data,
                     GError               **error)
{
  Quiet *quiet = data;

  if (quiet->key != NULL)
    return sandbox_memory_store_restore (quiet->self->store, quiet->self->session_id, quiet->key,
                                         error);
  quiet->snapshot = sandbox_memory_store_snapshot (quiet->self->store, quiet->self->session_id,
                                                   error);
  return quiet->snapshot != NULL;
}

static char *
sandbox_memory_handle_snapshot (SandboxHandle  *handle,
                                GCancellable   *cancellable,
                                GError        **error)
{
  SandboxMemoryHandle *self = SANDBOX_MEMORY_HANDLE (handle);
  Quiet quiet = { self, NULL, NULL };

  sandbox_memory_driver_run_quiet (self->driver, "taking a snapshot", snapshot_or_restore, &quiet,
                                   cancellable, error);
  return quiet.snapshot;
}

static gboolean
sandbox_memory_handle_restore (SandboxHandle  *handle,
                               const char     *key,
                               GCancellable   *cancellable,
                               GError        **error)
{
  SandboxMemoryHandle *self = SANDBOX_MEMORY_HANDLE (handle);
  Quiet quiet = { self, key, NULL };

  return sandbox_memory_driver_run_quiet (self->driver, "restoring a snapshot",
                                          snapshot_or_restore, &quiet, cancellable, error);
}

/**
 * sandbox_memory_handle_new:
 * @session: the live session over @driver
 * @state: the session's state
 * @driver: the session's driver
 * @backend: the backend whose store holds the session's lease, which the
 *   handle now owns
 * @store: that store
 *
 * Creates the handle of a live memory session.
 *
 * Returns: (transfer full): the new handle
 */
SandboxHandle *
sandbox_memory_handle_new (SandboxSession      *session,
                           SandboxState        *state,
                           SandboxMemoryDriver *driver,
                           SandboxBackendBase  *backend,
                           SandboxMemoryStore  *store)
{
  SandboxMemoryHandle *self;

  g_return_val_if_fail (SANDBOX_IS_SESSION (session), NULL);
  g_return_val_if_fail (SANDBOX_IS_STATE (state), NULL);
  g_return_val_if_fail (SANDBOX_IS_MEMORY_DRIVER (driver), NULL);
  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (backend), NULL);

  self = g_object_new (SANDBOX_TYPE_MEMORY_HANDLE,
                       "session", session,
                       "state", state,
                       NULL);
  self->driver = g_object_ref (driver);
  self->backend = g_object_ref (backend);
  self->store = sandbox_memory_store_ref (store);
  self->session_id = g_strdup (sandbox_state_get_session_id (state));

  return SANDBOX_HANDLE (self);
}

static void
sandbox_memory_handle_finalize (GObject *object)
{
  SandboxMemoryHandle *self = SANDBOX_MEMORY_HANDLE (object);

  /* The base class's dispose has stopped the session by now. */
  g_clear_object (&self->driver);
  g_clear_object (&self->backend);
  g_clear_pointer (&self->store, sandbox_memory_store_unref);
  g_clear_pointer (&self->session_id, g_free);

  G_OBJECT_CLASS (sandbox_memory_handle_parent_class)->finalize (object);
}

static void
sandbox_memory_handle_class_init (SandboxMemoryHandleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SandboxHandleClass *handle_class = SANDBOX_HANDLE_CLASS (klass);

  object_class->finalize = sandbox_memory_handle_finalize;
  handle_class->stop = sandbox_memory_handle_stop;
  handle_class->delete_session = sandbox_memory_handle_delete_session;
  handle_class->snapshot = sandbox_memory_handle_snapshot;
  handle_class->restore = sandbox_memory_handle_restore;
}

static void
sandbox_memory_handle_class_finalize (SandboxMemoryHandleClass *klass)
{
}

static void
sandbox_memory_handle_init (SandboxMemoryHandle *self)
{
}

/**
 * sandbox_memory_handle_register:
 * @module: the driver module
 *
 * Registers #SandboxMemoryHandle with @module.
 */
void
sandbox_memory_handle_register (GTypeModule *module)
{
  sandbox_memory_handle_register_type (module);
}
