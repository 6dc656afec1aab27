/* sandbox-cluster-backend-init.c — constructing a cluster backend
 *
 * The backend's init(): its properties checked, its directories, the inner
 * bubblewrap backend, the checkpoint store, etcd and this host's lease
 * (made on the driver's context thread, where ::lost is then emitted), and
 * the host's first announcement. What the backend does once made is
 * sandbox-cluster-backend.c's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "sandbox-cluster-backend-fields-private.h"
#include "sandbox-cluster-deleted-private.h"
#include "sandbox-context-thread-private.h"

/* ::lost arrives here, whatever the application's main loop does. */
static SandboxContextThread cluster_thread = SANDBOX_CONTEXT_THREAD_INIT ("sandbox-cluster");

/* The inner bubblewrap backend, named like this one, in its own directory,
 * with the `bubblewrap.*` properties this backend was given
 * (sandbox_backend_base_new_inner()). Its workspaces are whole copies
 * ("layering" "copy"): a checkpoint walks the workspace directory, and a
 * layered one holds only the session's own changes, the template's files
 * being below it. */
static gboolean
make_bubblewrap (SandboxClusterBackend  *self,
                 const char             *state_directory,
                 GCancellable           *cancellable,
                 GError                **error)
{
  SandboxBackendBase *base = SANDBOX_BACKEND_BASE (self);
  g_autofree char *directory = g_build_filename (state_directory, "bubblewrap", NULL);
  const char *names[] = { "name", "state-directory", "max-concurrent-commands", "layering" };
  GValue values[G_N_ELEMENTS (names)] = { G_VALUE_INIT, };

  g_value_init (&values[0], G_TYPE_STRING);
  g_value_set_string (&values[0], sandbox_backend_base_get_name (base));
  g_value_init (&values[1], G_TYPE_STRING);
  g_value_set_string (&values[1], directory);
  g_value_init (&values[2], G_TYPE_UINT);
  g_value_set_uint (&values[2], sandbox_backend_base_get_max_concurrent_commands (base));
  g_value_init (&values[3], G_TYPE_STRING);
  g_value_set_string (&values[3], "copy");

  self->bubblewrap = sandbox_backend_base_new_inner (base, G_N_ELEMENTS (names), names, values,
                                                     cancellable, error);
  for (guint i = 0; i < G_N_ELEMENTS (values); i++)
    g_value_unset (&values[i]);
  return self->bubblewrap != NULL;
}

typedef struct
{
  SandboxClusterBackend *self;
  GCancellable *cancellable;
  GError *error;
} MakeHost;

/* On the driver's context thread, so ::lost is emitted there. */
static gboolean
make_host (gpointer data)
{
  MakeHost *make = data;
  SandboxClusterBackend *self = make->self;

  self->host = sandbox_cluster_host_new (self->etcd, self->prefix, self->host_id,
                                         self->lease_ttl, make->cancellable, &make->error);
  return G_SOURCE_REMOVE;
}

static gboolean
check_properties (SandboxClusterBackend  *self,
                  const char             *state_directory,
                  GError                **error)
{
  if (state_directory == NULL || state_directory[0] == '\0')
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "The cluster backend requires a state-directory");
      return FALSE;
    }
  if (self->endpoints == NULL || self->endpoints[0] == '\0')
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "The cluster backend requires endpoints (etcd client URLs, comma-separated)");
      return FALSE;
    }
  if (self->prefix == NULL || !g_str_has_prefix (self->prefix, "/") ||
      !g_str_has_suffix (self->prefix, "/"))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "The cluster prefix must start and end with “/”, not “%s”",
                   self->prefix != NULL ? self->prefix : "");
      return FALSE;
    }
  if (self->host_id == NULL || self->host_id[0] == '\0' || strchr (self->host_id, '/') != NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "The host-id must be non-empty without “/”, not “%s”",
                   self->host_id != NULL ? self->host_id : "");
      return FALSE;
    }
  return TRUE;
}

static gboolean
make_private_directory (const char  *path,
                        GError     **error)
{
  int saved_errno;

  if (g_mkdir_with_parents (path, 0700) == 0)
    return TRUE;
  saved_errno = errno;
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "Could not create %s: %s", path, g_strerror (saved_errno));
  return FALSE;
}

/* The templates stored here, and the first announcement in the registry:
 * etcd has just answered, so failing now is an error of the construction. */
static gboolean
announce_first (SandboxClusterBackend  *self,
                GCancellable           *cancellable,
                GError                **error)
{
  g_autoptr(GPtrArray) templates = sandbox_backend_list_templates (self->bubblewrap, cancellable,
                                                                   error);

  if (templates == NULL)
    return FALSE;
  self->placement = sandbox_cluster_placement_new (self->host, self->session_slots, templates);
  return sandbox_cluster_placement_announce (self->placement, cancellable, error);
}

/* The base has checked the name and the admission limit. etcd down is
 * UNAVAILABLE: there is no local-only fallback. */
gboolean
sandbox_cluster_backend_init_backend (SandboxBackendBase  *base,
                                      GCancellable        *cancellable,
                                      GError             **error)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (base);
  const char *state_directory = sandbox_backend_base_get_state_directory (base);
  g_autofree char *store_path = NULL;
  MakeHost make = { self, cancellable, NULL };

  if (!check_properties (self, state_directory, error))
    return FALSE;

  self->markers = g_build_filename (state_directory, "checkpoints", NULL);
  self->incoming = g_build_filename (state_directory, "incoming", NULL);
  if (!make_private_directory (self->markers, error) ||
      !make_private_directory (self->incoming, error))
    return FALSE;
  if (!make_bubblewrap (self, state_directory, cancellable, error))
    return FALSE;

  store_path = self->checkpoint_store != NULL
    ? g_strdup (self->checkpoint_store)
    : g_build_filename (state_directory, "checkpoint-store", NULL);
  self->blobs = SANDBOX_CLUSTER_BLOB_STORE (sandbox_cluster_blob_dir_new (store_path, error));
  if (self->blobs == NULL)
    return FALSE;

  self->etcd = sandbox_cluster_etcd_new_from_list (self->endpoints,
                                                   SANDBOX_CLUSTER_ETCD_DEFAULT_TIMEOUT_MS, error);
  if (self->etcd == NULL)
    return FALSE;
  sandbox_context_thread_invoke_sync (&cluster_thread, make_host, &make);
  if (self->host == NULL)
    {
      g_propagate_error (error, make.error);
      return FALSE;
    }
  self->lost_id = g_signal_connect (self->host, "lost", G_CALLBACK (sandbox_cluster_backend_on_lost), self);
  if (!announce_first (self, cancellable, error))
    return FALSE;
  /* What was deleted elsewhere while this host was down goes now. */
  sandbox_cluster_deleted_sweep (self, cancellable);
  return TRUE;
}
