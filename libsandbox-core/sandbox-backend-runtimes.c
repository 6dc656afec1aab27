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
 * has the same key and is stored once. Blocking; see
 * [method@Sandbox.Backend.import_runtime_async].
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

static void
import_runtime_thread (GTask        *task,
                       gpointer      source_object,
                       gpointer      task_data,
                       GCancellable *cancellable)
{
  ImportResult *result = g_new0 (ImportResult, 1);
  GError *error = NULL;

  result->key = sandbox_backend_import_runtime (source_object, task_data, &result->reused,
                                                cancellable, &error);
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
 * [method@Sandbox.Backend.import_runtime].
 */
void
sandbox_backend_import_runtime_async (SandboxBackend      *self,
                                      GFile               *source,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data)
{
  g_return_if_fail (SANDBOX_IS_BACKEND (self));
  g_return_if_fail (G_IS_FILE (source));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  sandbox_task_run_in_thread (self, g_object_ref (source), g_object_unref,
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
