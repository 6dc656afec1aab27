/* sandbox-cluster-backend.c — the `cluster` backend: bubblewrap here, ownership in etcd
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each host runs one of these over a bubblewrap backend of its own (made
 * through the driver kit, named like this backend so states read
 * {backend:"cluster", sessionId, templateKey}, in <state-directory>/bubblewrap).
 * etcd decides who owns a session (sandbox-cluster-owner-private.h); the
 * blob store (checkpoint-store, shared between hosts) holds its workspace
 * as of its last checkpoint.
 *
 * SandboxBackendBase runs create, resume, recover and delete; the cluster's
 * hooks (what a session, its lease and its local copy are here) are in
 * sandbox-cluster-backend-sessions.c. stop and checkpoint: see
 * sandbox-cluster-handle.c.
 * Losing the lease (::lost, on the driver's own context thread, so it
 * arrives whatever the application's main loop does): every live handle is
 * fenced — its commands killed, STOPPED, nothing published. The host
 * rejoins with a new lease at its next claim (sandbox_cluster_host_rejoin()).
 */

#include "config.h"

#include <glib/gstdio.h>

#include "sandbox-cluster-backend-fields-private.h"
#include "sandbox-cluster-deleted-private.h"
#include "sandbox-cluster-handle-private.h"
#include "sandbox-cluster-runtime-share-private.h"
#include "sandbox-cluster-template-share-private.h"

enum
{
  PROP_0,
  PROP_ENDPOINTS,
  PROP_PREFIX,
  PROP_HOST_ID,
  PROP_LEASE_TTL,
  PROP_CHECKPOINT_STORE,
  PROP_SESSION_SLOTS,
};

static void sandbox_cluster_backend_backend_iface_init (SandboxBackendInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxClusterBackend, sandbox_cluster_backend,
                                SANDBOX_TYPE_BACKEND_BASE, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SANDBOX_TYPE_BACKEND,
                                                               sandbox_cluster_backend_backend_iface_init))

/* Live handles and ::lost -------------------------------------------------- */

/* The registry is advisory (placement only): a failed announcement is
 * logged, never the error of what changed the view. */
static void
announce (SandboxClusterBackend *self)
{
  g_autoptr(GError) error = NULL;

  if (!sandbox_cluster_placement_announce (self->placement, NULL, &error))
    g_debug ("Could not update host %s in the cluster registry: %s", self->host_id,
             error->message);
}

void
sandbox_cluster_backend_track (SandboxClusterBackend *self,
                               SandboxHandle         *handle)
{
  g_mutex_lock (&self->lock);
  g_hash_table_add (self->live, handle);
  sandbox_cluster_placement_set_live (self->placement, g_hash_table_size (self->live));
  g_mutex_unlock (&self->lock);
  announce (self);
}

void
sandbox_cluster_backend_forget (SandboxClusterBackend *self,
                                SandboxHandle         *handle)
{
  gboolean forgotten;

  g_mutex_lock (&self->lock);
  forgotten = g_hash_table_remove (self->live, handle);
  sandbox_cluster_placement_set_live (self->placement, g_hash_table_size (self->live));
  g_mutex_unlock (&self->lock);
  if (forgotten && !sandbox_cluster_host_is_lost (self->host))
    announce (self);
}

gboolean
sandbox_cluster_backend_is_lost (SandboxClusterBackend *self)
{
  return sandbox_cluster_host_is_lost (self->host);
}

/* The host lost its lease: fence every live session of this backend. */
void
sandbox_cluster_backend_on_lost (SandboxClusterHost *host,
                                 const GError       *reason,
                                 gpointer            user_data)
{
  SandboxClusterBackend *self = user_data;
  g_autoptr(GPtrArray) handles = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer handle;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->live);
  while (g_hash_table_iter_next (&iter, &handle, NULL))
    g_ptr_array_add (handles, g_object_ref (handle));
  g_mutex_unlock (&self->lock);

  g_log_structured ("Sandbox", G_LOG_LEVEL_WARNING, "SANDBOX_EVENT", "fenced",
                    "SANDBOX_DRIVER", "cluster",
                    "MESSAGE", "Host %s stops its %u sessions: %s",
                    sandbox_cluster_host_get_id (host), handles->len, reason->message);
  /* Every command first: a handle's stop waits for its checkpoint in
   * progress, if any (whose commit this host now refuses). */
  for (guint i = 0; i < handles->len; i++)
    sandbox_cluster_handle_fence_commands (handles->pdata[i]);
  for (guint i = 0; i < handles->len; i++)
    sandbox_cluster_handle_fence (handles->pdata[i]);
}

/* Templates --------------------------------------------------------------- */

static SandboxClusterTemplateShare
share_of (SandboxClusterBackend *self)
{
  SandboxClusterTemplateShare share = {
    self->host, self->blobs, self->bubblewrap, self->incoming,
  };

  return share;
}

/* The session protocol's check_template: a template this host lacks is
 * fetched from the cluster, if published. */
static gboolean
sandbox_cluster_backend_check_template (SandboxBackendBase  *base,
                                        const char          *template_key,
                                        GCancellable        *cancellable,
                                        GError             **error)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (base);
  SandboxClusterTemplateShare share = share_of (self);
  g_autoptr(GError) local_error = NULL;
  int fd = sandbox_backend_open_template_files (self->bubblewrap, template_key, cancellable,
                                                &local_error);

  if (fd >= 0)
    return g_close (fd, error);
  if (!g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (!sandbox_cluster_template_fetch (&share, template_key, cancellable, error))
    return FALSE;
  sandbox_cluster_placement_add_template (self->placement, template_key);
  announce (self);
  return TRUE;
}

/* The runtime @template_ names, fetched first when this host lacks it and
 * the cluster published it, so that a prewarm works on any host. What is
 * no key or not published is left to bubblewrap's prewarm (INVALID,
 * NOT_FOUND) and the publish (NOT_FOUND). */
static gboolean
fetch_runtime_of (SandboxClusterBackend  *self,
                  SandboxTemplate        *template_,
                  GCancellable           *cancellable,
                  GError                **error)
{
  SandboxClusterTemplateShare share = share_of (self);
  const char *runtime_key = sandbox_template_get_runtime (template_);
  g_autoptr(GError) local_error = NULL;

  if (runtime_key == NULL || !sandbox_template_key_is_valid (runtime_key))
    return TRUE;
  if (!sandbox_cluster_runtime_is_published (&share, runtime_key, cancellable, &local_error))
    {
      if (g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return sandbox_cluster_runtime_ensure (&share, runtime_key, cancellable, error);
}

/* Templates and this host's own view are bubblewrap's. */

static char *
sandbox_cluster_backend_prewarm (SandboxBackend   *backend,
                                 SandboxTemplate  *template_,
                                 gboolean         *reused,
                                 GCancellable     *cancellable,
                                 GError          **error)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (backend);
  SandboxClusterTemplateShare share = share_of (self);
  g_autofree char *key = NULL;

  /* A session's changes to such a runtime are layers of the host it runs
   * on, which its checkpoints do not carry: another host would resume it
   * on the runtime as published, silently without them. */
  if (sandbox_template_get_runtime_writable (template_))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   "The cluster driver does not support a runtime writable per session yet "
                   "(a session's checkpoints carry its workspace, not its changes to the "
                   "runtime)");
      return NULL;
    }
  if (!fetch_runtime_of (self, template_, cancellable, error))
    return NULL;
  key = sandbox_backend_prewarm (self->bubblewrap, template_, reused, cancellable, error);
  if (key == NULL ||
      !sandbox_cluster_template_publish (&share, key, sandbox_template_get_name (template_),
                                         sandbox_template_get_runtime (template_),
                                         cancellable, error))
    return NULL;
  sandbox_cluster_placement_add_template (self->placement, key);
  announce (self);
  return g_steal_pointer (&key);
}

/* This host's copies, less those of sessions the cluster deleted (which
 * go now): read before etcd, so a copy made meanwhile is not taken for a
 * deleted one. etcd not answering fails the list rather than show a
 * session that may be deleted. */
static GPtrArray *
sandbox_cluster_backend_list_sessions (SandboxBackend  *backend,
                                       GCancellable    *cancellable,
                                       GError         **error)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (backend);
  g_autoptr(GPtrArray) sessions = sandbox_backend_list_sessions (self->bubblewrap, cancellable,
                                                                 error);

  if (sessions == NULL || !sandbox_cluster_deleted_filter (self, sessions, cancellable, error))
    return NULL;
  return g_steal_pointer (&sessions);
}

static GPtrArray *
sandbox_cluster_backend_list_templates (SandboxBackend  *backend,
                                        GCancellable    *cancellable,
                                        GError         **error)
{
  return sandbox_backend_list_templates (SANDBOX_CLUSTER_BACKEND (backend)->bubblewrap,
                                         cancellable, error);
}

static gboolean
sandbox_cluster_backend_query_lease_owner (SandboxBackend      *backend,
                                           const char          *session_id,
                                           SandboxLeaseOwner  **owner,
                                           GCancellable        *cancellable,
                                           GError             **error)
{
  return sandbox_backend_query_lease_owner (SANDBOX_CLUSTER_BACKEND (backend)->bubblewrap,
                                            session_id, owner, cancellable, error);
}

static gboolean
sandbox_cluster_backend_delete_template (SandboxBackend  *backend,
                                         const char      *template_key,
                                         GCancellable    *cancellable,
                                         GError         **error)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (backend);

  if (!sandbox_backend_delete_template (self->bubblewrap, template_key, cancellable, error))
    return FALSE;
  sandbox_cluster_placement_remove_template (self->placement, template_key);
  announce (self);
  return TRUE;
}

/* Runtimes: imported here and published (sandbox-cluster-runtime-share.c);
 * this host's own view and deletes are bubblewrap's. The etcd record and
 * the blobs stay after a delete, as a template's do: another host's
 * templates may name the runtime, and a host can fetch it again. */

static char *
sandbox_cluster_backend_import_runtime (SandboxBackend  *backend,
                                        GFile           *source,
                                        gboolean        *reused,
                                        GCancellable    *cancellable,
                                        GError         **error)
{
  SandboxClusterTemplateShare share = share_of (SANDBOX_CLUSTER_BACKEND (backend));

  return sandbox_cluster_runtime_import (&share, backend, source, reused, cancellable, error);
}

static GPtrArray *
sandbox_cluster_backend_list_runtimes (SandboxBackend  *backend,
                                       GCancellable    *cancellable,
                                       GError         **error)
{
  return sandbox_backend_list_runtimes (SANDBOX_CLUSTER_BACKEND (backend)->bubblewrap,
                                        cancellable, error);
}

static gboolean
sandbox_cluster_backend_delete_runtime (SandboxBackend  *backend,
                                        const char      *runtime_key,
                                        GCancellable    *cancellable,
                                        GError         **error)
{
  return sandbox_backend_delete_runtime (SANDBOX_CLUSTER_BACKEND (backend)->bubblewrap,
                                         runtime_key, cancellable, error);
}

/* Placement: the action signals -------------------------------------------- */

static char *
sandbox_cluster_backend_pick_host (SandboxClusterBackend *self,
                                   const char            *template_key,
                                   guint                  samples)
{
  g_autoptr(GError) error = NULL;
  char *host_id = sandbox_cluster_placement_pick (self->placement, template_key, samples, &error);

  if (host_id == NULL)
    g_debug ("pick-host: %s", error->message);
  return host_id;
}

static char *
sandbox_cluster_backend_list_hosts (SandboxClusterBackend *self)
{
  g_autoptr(GError) error = NULL;
  char *json = sandbox_cluster_placement_list_json (self->placement, &error);

  if (json == NULL)
    g_debug ("list-hosts: %s", error->message);
  return json;
}

static void
sandbox_cluster_backend_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (object);

  switch (prop_id)
    {
    case PROP_ENDPOINTS:
      g_value_set_string (value, self->endpoints);
      break;
    case PROP_PREFIX:
      g_value_set_string (value, self->prefix);
      break;
    case PROP_HOST_ID:
      g_value_set_string (value, self->host_id);
      break;
    case PROP_LEASE_TTL:
      g_value_set_uint (value, self->lease_ttl);
      break;
    case PROP_CHECKPOINT_STORE:
      g_value_set_string (value, self->checkpoint_store);
      break;
    case PROP_SESSION_SLOTS:
      g_value_set_uint (value, self->session_slots);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_cluster_backend_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (object);

  switch (prop_id)
    {
    case PROP_ENDPOINTS:
      g_free (self->endpoints);
      self->endpoints = g_value_dup_string (value);
      break;
    case PROP_PREFIX:
      g_free (self->prefix);
      self->prefix = g_value_dup_string (value);
      break;
    case PROP_HOST_ID:
      g_free (self->host_id);
      self->host_id = g_value_dup_string (value);
      break;
    case PROP_LEASE_TTL:
      self->lease_ttl = g_value_get_uint (value);
      break;
    case PROP_CHECKPOINT_STORE:
      g_free (self->checkpoint_store);
      self->checkpoint_store = g_value_dup_string (value);
      break;
    case PROP_SESSION_SLOTS:
      self->session_slots = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_cluster_backend_finalize (GObject *object)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (object);

  /* Every handle holds a reference: none is live any more. */
  g_clear_pointer (&self->placement, sandbox_cluster_placement_free);
  if (self->host != NULL)
    {
      g_clear_signal_handler (&self->lost_id, self->host);
      sandbox_cluster_host_close (self->host);
    }
  g_clear_object (&self->host);
  g_clear_object (&self->etcd);
  g_clear_object (&self->blobs);
  g_clear_object (&self->bubblewrap);
  g_clear_pointer (&self->live, g_hash_table_unref);
  g_mutex_clear (&self->lock);
  g_free (self->markers);
  g_free (self->incoming);
  g_free (self->endpoints);
  g_free (self->prefix);
  g_free (self->host_id);
  g_free (self->checkpoint_store);

  G_OBJECT_CLASS (sandbox_cluster_backend_parent_class)->finalize (object);
}

static void
sandbox_cluster_backend_class_init (SandboxClusterBackendClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SandboxBackendBaseClass *base_class = SANDBOX_BACKEND_BASE_CLASS (klass);

  object_class->get_property = sandbox_cluster_backend_get_property;
  object_class->set_property = sandbox_cluster_backend_set_property;
  object_class->finalize = sandbox_cluster_backend_finalize;
  base_class->init_backend = sandbox_cluster_backend_init_backend;
  base_class->check_template = sandbox_cluster_backend_check_template;
  sandbox_cluster_backend_class_init_sessions (base_class);
  sandbox_backend_base_class_set_default_name (base_class, SANDBOX_CLUSTER_DEFAULT_NAME);
  /* The bubblewrap backend underneath takes its properties as
   * `bubblewrap.NAME` (`bubblewrap.executable`, `bubblewrap.tmp-size`). */
  sandbox_backend_base_class_set_inner_driver (base_class, "bubblewrap");

  /**
   * SandboxClusterBackend:endpoints:
   *
   * The etcd client URLs, comma-separated (`http://127.0.0.1:2379,…`).
   * Required; etcd not answering at construction is
   * %SANDBOX_ERROR_UNAVAILABLE.
   */
  g_object_class_install_property (object_class, PROP_ENDPOINTS,
    g_param_spec_string ("endpoints", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxClusterBackend:prefix:
   *
   * The etcd key prefix of this cluster (starts and ends with “/”).
   */
  g_object_class_install_property (object_class, PROP_PREFIX,
    g_param_spec_string ("prefix", NULL, NULL, SANDBOX_CLUSTER_DEFAULT_PREFIX,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxClusterBackend:host-id:
   *
   * This host's name in the cluster, unique among its hosts (the host
   * name by default).
   */
  g_object_class_install_property (object_class, PROP_HOST_ID,
    g_param_spec_string ("host-id", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxClusterBackend:lease-ttl:
   *
   * The TTL of this host's etcd lease in seconds (0: the default, 10). A
   * host that dies frees its sessions after it; one that cannot renew
   * stops its sessions before it.
   */
  g_object_class_install_property (object_class, PROP_LEASE_TTL,
    g_param_spec_uint ("lease-ttl", NULL, NULL, 0, 3600, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxClusterBackend:checkpoint-store:
   *
   * The directory holding checkpoints, shared by every host of the
   * cluster (NFS, …). By default `checkpoint-store` in the state
   * directory, which only suits a single host.
   */
  g_object_class_install_property (object_class, PROP_CHECKPOINT_STORE,
    g_param_spec_string ("checkpoint-store", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxClusterBackend:session-slots:
   *
   * How many live sessions this host is sized for. The host announces
   * this minus its live sessions as its free slots in the cluster's
   * registry, for placement ([signal@SandboxClusterBackend::pick-host]);
   * it admits no fewer or more sessions because of it.
   */
  g_object_class_install_property (object_class, PROP_SESSION_SLOTS,
    g_param_spec_uint ("session-slots", NULL, NULL, 1, G_MAXUINT16,
                       SANDBOX_CLUSTER_DEFAULT_SESSION_SLOTS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxClusterBackend::pick-host:
   * @backend: the backend
   * @template_key: (nullable): the template the session will need: a host
   *   that stores it is preferred
   * @samples: K of best-of-K sampling, 0 for the default (2)
   *
   * An action signal: `g_signal_emit_by_name (backend, "pick-host", key, 0,
   * &host_id)` (`backend.emit ("pick-host", key, 0)` in Python). Samples K
   * registered hosts at random and returns the best: one with a free slot,
   * then one with the template, then the most free slots — so that many
   * placers acting at once on one slightly stale view spread out. Blocking
   * (one etcd read).
   *
   * Returns: (transfer full) (nullable): the host id, or %NULL when no
   *   sampled host has a free slot or etcd cannot be read (the reason is
   *   logged)
   */
  g_signal_new_class_handler ("pick-host", G_TYPE_FROM_CLASS (klass),
                              G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
                              G_CALLBACK (sandbox_cluster_backend_pick_host),
                              NULL, NULL, NULL, G_TYPE_STRING, 2, G_TYPE_STRING, G_TYPE_UINT);

  /**
   * SandboxClusterBackend::list-hosts:
   * @backend: the backend
   *
   * An action signal: the live hosts of the cluster's registry as JSON,
   * `[{"hostId": …, "freeSlots": N, "templates": [KEY, …]}, …]`, by host
   * id. Blocking (one etcd read).
   *
   * Returns: (transfer full) (nullable): the JSON, or %NULL when etcd
   *   cannot be read (the reason is logged)
   */
  g_signal_new_class_handler ("list-hosts", G_TYPE_FROM_CLASS (klass),
                              G_SIGNAL_RUN_LAST | G_SIGNAL_ACTION,
                              G_CALLBACK (sandbox_cluster_backend_list_hosts),
                              NULL, NULL, NULL, G_TYPE_STRING, 0);
}

static void
sandbox_cluster_backend_class_finalize (SandboxClusterBackendClass *klass)
{
}

static void
sandbox_cluster_backend_init (SandboxClusterBackend *self)
{
  g_mutex_init (&self->lock);
  self->live = g_hash_table_new (NULL, NULL);
  self->prefix = g_strdup (SANDBOX_CLUSTER_DEFAULT_PREFIX);
  self->host_id = g_strdup (g_get_host_name ());
  self->session_slots = SANDBOX_CLUSTER_DEFAULT_SESSION_SLOTS;
}

static void
sandbox_cluster_backend_backend_iface_init (SandboxBackendInterface *iface)
{
  iface->prewarm = sandbox_cluster_backend_prewarm;
  iface->list_sessions = sandbox_cluster_backend_list_sessions;
  iface->list_templates = sandbox_cluster_backend_list_templates;
  iface->query_lease_owner = sandbox_cluster_backend_query_lease_owner;
  iface->delete_template = sandbox_cluster_backend_delete_template;
  iface->import_runtime = sandbox_cluster_backend_import_runtime;
  iface->list_runtimes = sandbox_cluster_backend_list_runtimes;
  iface->delete_runtime = sandbox_cluster_backend_delete_runtime;
  sandbox_cluster_backend_implement_sessions (iface);
}

void
sandbox_cluster_backend_register (GTypeModule *module)
{
  sandbox_cluster_backend_register_type (module);
}
