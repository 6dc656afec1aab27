/* sandbox-backend-runtimes.c — the userlands a backend's sessions run on
 *
 * A runtime is a root file system (a distribution's /usr, /etc and the
 * rest) that a template names ([method@Sandbox.Template.set_runtime]), so
 * that its sessions' commands see it instead of the host's /usr. Backends
 * store runtimes as they store templates: content-addressed, shared and
 * read-only. The wrappers check their arguments once for every backend
 * (a key is checked before any driver builds a path from it); the
 * defaults (sandbox-backend-unsupported.c) say a backend has none.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend.h"
#include "sandbox-backend-private.h"
#include "sandbox-signal-context-private.h"
#include "sandbox-task-private.h"

typedef struct
{
  char *key;
  gboolean reused;
} ImportResult;

static void
import_result_free (ImportResult *result)
{
  g_free (result->key);
  g_free (result);
}

static int
compare_runtimes (gconstpointer a,
                  gconstpointer b)
{
  return g_strcmp0 (sandbox_runtime_info_get_key (*(SandboxRuntimeInfo **) a),
                    sandbox_runtime_info_get_key (*(SandboxRuntimeInfo **) b));
}

/**
 * sandbox_backend_import_runtime:
 * @self: a [iface@Sandbox.Backend]
 * @source: a root file system directory (as `mmdebstrap` makes), or an OCI
 *   image layout directory (as `skopeo copy … oci:DIR` makes)
 * @reused: (out) (optional): set to whether the runtime was already stored
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stores the tree at @source under its content-addressed key, which a
 * template then names ([method@Sandbox.Template.set_runtime]). What is kept
 * is directories, regular files with their permission bits (never setuid
 * or setgid), symbolic links (verbatim) and hard links; owners, extended
 * attributes, devices, FIFOs and sockets are not. An OCI layout's layers
 * are applied in order, with their whiteouts. The same tree imported twice
 * has the same key and is stored once. While the tree is unpacked,
 * [signal@Sandbox.Backend::import-progress] reports how far it is. Blocking;
 * see [method@Sandbox.Backend.import_runtime_async].
 *
 * Returns: (transfer full): the runtime's key (64 lowercase hex digits),
 *   or %NULL with @error set: %SANDBOX_ERROR_INVALID when @source is not a
 *   directory or holds what cannot be imported (a path escaping the tree, a
 *   tree over the backend's limits), %G_IO_ERROR_NOT_SUPPORTED when the
 *   backend has no runtimes
 */
char *
sandbox_backend_import_runtime (SandboxBackend  *self,
                                GFile           *source,
                                gboolean        *reused,
                                GCancellable    *cancellable,
                                GError         **error)
{
  gboolean stored = FALSE;
  char *key;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (G_IS_FILE (source), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  key = SANDBOX_BACKEND_GET_IFACE (self)->import_runtime (self, source, &stored, cancellable,
                                                          error);
  if (key != NULL && reused != NULL)
    *reused = stored;
  return key;
}

/* An import_async's source and its caller's context, where
 * ::import-progress is emitted. */
typedef struct
{
  GFile *source;
  GMainContext *context;
} ImportData;

static void
import_data_free (ImportData *data)
{
  g_object_unref (data->source);
  g_main_context_unref (data->context);
  g_free (data);
}

static void
import_runtime_thread (GTask        *task,
                       gpointer      source_object,
                       gpointer      task_data,
                       GCancellable *cancellable)
{
  ImportData *data = task_data;
  ImportResult *result = g_new0 (ImportResult, 1);
  SandboxSignalScope scope;
  GError *error = NULL;

  sandbox_signal_scope_begin (&scope, data->context);
  result->key = sandbox_backend_import_runtime (source_object, data->source, &result->reused,
                                                cancellable, &error);
  sandbox_signal_scope_end (&scope);
  if (result->key == NULL)
    g_clear_pointer (&result, import_result_free);
  sandbox_task_return_pointer (task, result, (GDestroyNotify) import_result_free, error);
}

/**
 * sandbox_backend_import_runtime_async:
 * @self: a [iface@Sandbox.Backend]
 * @source: a root file system or OCI image layout directory
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Stores a runtime in a worker thread; see
 * [method@Sandbox.Backend.import_runtime]. Its
 * [signal@Sandbox.Backend::import-progress] is emitted in the
 * thread-default main context of the caller, each before @callback.
 */
void
sandbox_backend_import_runtime_async (SandboxBackend      *self,
                                      GFile               *source,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data)
{
  ImportData *data;

  g_return_if_fail (SANDBOX_IS_BACKEND (self));
  g_return_if_fail (G_IS_FILE (source));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  data = g_new0 (ImportData, 1);
  data->source = g_object_ref (source);
  data->context = sandbox_signal_context_ref ();
  sandbox_task_run_in_thread (self, data, (GDestroyNotify) import_data_free,
                              import_runtime_thread, sandbox_backend_import_runtime_async,
                              "[sandbox] import runtime", cancellable, callback, user_data);
}

/**
 * sandbox_backend_import_runtime_finish:
 * @self: a [iface@Sandbox.Backend]
 * @result: the #GAsyncResult
 * @reused: (out) (optional): set to whether the runtime was already stored
 * @error: return location for a #GError
 *
 * Finishes an operation started with
 * [method@Sandbox.Backend.import_runtime_async].
 *
 * Returns: (transfer full): the runtime's key, or %NULL with @error set
 */
char *
sandbox_backend_import_runtime_finish (SandboxBackend  *self,
                                       GAsyncResult    *result,
                                       gboolean        *reused,
                                       GError         **error)
{
  ImportResult *imported;
  char *key;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  imported = g_task_propagate_pointer (G_TASK (result), error);
  if (imported == NULL)
    return NULL;
  if (reused != NULL)
    *reused = imported->reused;
  key = g_steal_pointer (&imported->key);
  import_result_free (imported);
  return key;
}

/**
 * sandbox_backend_list_runtimes:
 * @self: a [iface@Sandbox.Backend]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Lists the runtimes the backend stores, sorted by key, each with its size
 * and how many stored templates name it. A runtime still being imported is
 * not listed. Blocking.
 *
 * Returns: (transfer container) (element-type SandboxRuntimeInfo): the
 *   runtimes, or %NULL with @error set: %G_IO_ERROR_NOT_SUPPORTED when the
 *   backend has no runtimes, a #GIOErrorEnum error when its store cannot be
 *   read
 */
GPtrArray *
sandbox_backend_list_runtimes (SandboxBackend  *self,
                               GCancellable    *cancellable,
                               GError         **error)
{
  GPtrArray *runtimes;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);

  runtimes = SANDBOX_BACKEND_GET_IFACE (self)->list_runtimes (self, cancellable, error);
  if (runtimes != NULL)
    g_ptr_array_sort (runtimes, compare_runtimes);
  return runtimes;
}

/**
 * sandbox_backend_delete_runtime:
 * @self: a [iface@Sandbox.Backend]
 * @runtime_key: the key of a stored runtime
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Removes a stored runtime. One that a stored template names is refused
 * with %SANDBOX_ERROR_BUSY as long as that template exists, so a store
 * never loses a runtime a session needs; delete the templates first.
 * Blocking.
 *
 * Returns: %TRUE when the runtime is gone, or %FALSE with @error set:
 *   %SANDBOX_ERROR_INVALID when @runtime_key is not a key,
 *   %SANDBOX_ERROR_NOT_FOUND for an unknown runtime, %SANDBOX_ERROR_BUSY,
 *   %G_IO_ERROR_NOT_SUPPORTED when the backend has no runtimes
 */
gboolean
sandbox_backend_delete_runtime (SandboxBackend  *self,
                                const char      *runtime_key,
                                GCancellable    *cancellable,
                                GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), FALSE);
  g_return_val_if_fail (runtime_key != NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);

  if (!sandbox_backend_check_id (runtime_key, "runtime key", error))
    return FALSE;
  return SANDBOX_BACKEND_GET_IFACE (self)->delete_runtime (self, runtime_key, cancellable,
                                                           error);
}

/* One ::import-progress emission queued to the import's caller. */
typedef struct
{
  SandboxBackend *backend;
  guint64 n_entries, n_bytes;
} ImportProgress;

static void
import_progress_free (ImportProgress *progress)
{
  g_object_unref (progress->backend);
  g_free (progress);
}

static gboolean
emit_queued_import_progress (gpointer data)
{
  ImportProgress *progress = data;

  g_signal_emit_by_name (progress->backend, "import-progress", progress->n_entries,
                         progress->n_bytes);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_backend_emit_import_progress:
 * @self: a [iface@Sandbox.Backend]
 * @n_entries: how many entries of the runtime were created so far
 * @n_bytes: how many bytes of its regular files were written so far
 *
 * For backends, from their import_runtime (in whatever thread it runs):
 * emits [signal@Sandbox.Backend::import-progress] in the thread-default
 * main context of the caller of [method@Sandbox.Backend.import_runtime] or
 * [method@Sandbox.Backend.import_runtime_async], at most 20 times a second
 * and once with the totals, as the signal's documentation says.
 */
void
sandbox_backend_emit_import_progress (SandboxBackend *self,
                                      guint64         n_entries,
                                      guint64         n_bytes)
{
  g_autoptr(GMainContext) context = NULL;
  g_autoptr(GSource) source = NULL;
  ImportProgress *progress;

  g_return_if_fail (SANDBOX_IS_BACKEND (self));

  /* A blocking import runs in its caller's thread: emit here. */
  if (!sandbox_signal_scope_is_open ())
    {
      g_signal_emit_by_name (self, "import-progress", n_entries, n_bytes);
      return;
    }
  /* A worker queues each report to the caller's context at the priority
   * of the GTask's completion, so all come before the callback. */
  progress = g_new0 (ImportProgress, 1);
  progress->backend = g_object_ref (self);
  progress->n_entries = n_entries;
  progress->n_bytes = n_bytes;
  context = sandbox_signal_context_ref ();
  source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_static_name (source, "[sandbox] import progress");
  g_source_set_callback (source, emit_queued_import_progress, progress,
                         (GDestroyNotify) import_progress_free);
  g_source_attach (source, context);
}

