/* sandbox-driver.c — what a backend implements per live session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-driver.h"
#include "sandbox-error.h"
#include "sandbox-log-private.h"
#include "sandbox-path.h"
#include "sandbox-signal-context-private.h"
#include "sandbox-task-private.h"

/**
 * SandboxDriver:
 *
 * The per-session interface a backend implements: byte I/O, spawn and
 * network policy enforcement. [class@Sandbox.Session] adds path handling, text
 * conversion and run() on top, once, for every backend.
 *
 * Implementations provide the blocking vfuncs; the async ones default to
 * running the blocking ones in a thread (spawn, which must not block, is
 * called directly).
 */

G_DEFINE_INTERFACE (SandboxDriver, sandbox_driver, G_TYPE_OBJECT)

/* ----- the file-operation ritual, once for every driver ----- */

static G_DEFINE_QUARK (sandbox-driver-max-file-bytes, max_file_bytes)

/**
 * sandbox_driver_get_max_file_bytes:
 * @self: a [iface@Sandbox.Driver]
 *
 * The bound on one workspace file read or write of the session: what its
 * backend set ([property@Sandbox.BackendBase:max-file-bytes]), else
 * %SANDBOX_MAX_FILE_BYTES. The file operations refuse a larger write and
 * a larger read with %SANDBOX_ERROR_LIMIT; a driver passes it to its
 * workspace reads and writes.
 *
 * Returns: the bound, in bytes
 */
gsize
sandbox_driver_get_max_file_bytes (SandboxDriver *self)
{
  gpointer set;

  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), SANDBOX_MAX_FILE_BYTES);

  set = g_object_get_qdata (G_OBJECT (self), max_file_bytes_quark ());
  return set != NULL ? GPOINTER_TO_SIZE (set) : SANDBOX_MAX_FILE_BYTES;
}

/**
 * sandbox_driver_set_max_file_bytes:
 * @self: a [iface@Sandbox.Driver]
 * @max_bytes: the bound, at least 1
 *
 * Sets the bound on one workspace file read or write of the session. The
 * base class's session protocol sets its backend's
 * [property@Sandbox.BackendBase:max-file-bytes] on every session it opens;
 * a backend that does not use it may call this itself.
 */
void
sandbox_driver_set_max_file_bytes (SandboxDriver *self,
                                   gsize          max_bytes)
{
  g_return_if_fail (SANDBOX_IS_DRIVER (self));
  g_return_if_fail (max_bytes > 0);

  g_object_set_qdata (G_OBJECT (self), max_file_bytes_quark (), GSIZE_TO_POINTER (max_bytes));
}

/* The reference's checks before a file operation, in its order: the size
 * of what is written (@contents, NULL for a read or a removal), the
 * session's gate, the path. Returns the canonical path the driver gets. */
static char *
begin_file_operation (SandboxDriver  *self,
                      const char     *path,
                      GBytes         *contents,
                      gboolean        removal,
                      GCancellable   *cancellable,
                      GError        **error)
{
  SandboxDriverInterface *iface = SANDBOX_DRIVER_GET_IFACE (self);
  g_autofree char *canonical = NULL;

  if (contents != NULL && g_bytes_get_size (contents) > sandbox_driver_get_max_file_bytes (self))
    return sandbox_set_error_write_limit (error), NULL;
  if (iface->check_active != NULL && !iface->check_active (self, cancellable, error))
    return NULL;
  canonical = sandbox_path_canonicalize (path, error);
  if (canonical != NULL && removal && g_str_equal (canonical, SANDBOX_WORKSPACE))
    return sandbox_set_error_workspace_root (error), NULL;
  return g_steal_pointer (&canonical);
}

/* And after a read: its size. */
static GBytes *
end_read (SandboxDriver  *self,
          GBytes         *bytes,
          GError        **error)
{
  if (bytes != NULL && g_bytes_get_size (bytes) > sandbox_driver_get_max_file_bytes (self))
    {
      g_bytes_unref (bytes);
      return sandbox_set_error_read_limit (error), NULL;
    }
  return bytes;
}

/* ----- the default async forms: the blocking vfunc in a thread ----- */

/* The blocking vfunc's arguments, as the thread gets them. */
typedef struct
{
  char *path;
  GBytes *contents;
  SandboxNetworkPolicy *policy;
  SandboxCommand *command;
  /* set_network_policy and spawn: the caller's, for the gateway's and the
   * process's signals */
  GMainContext *context;
} DriverCall;

static DriverCall *
driver_call_new (const char *path)
{
  DriverCall *call = g_new0 (DriverCall, 1);

  call->path = g_strdup (path);
  return call;
}

static void
driver_call_free (DriverCall *call)
{
  g_free (call->path);
  g_clear_pointer (&call->contents, g_bytes_unref);
  g_clear_object (&call->policy);
  g_clear_object (&call->command);
  g_clear_pointer (&call->context, g_main_context_unref);
  g_free (call);
}

static void
read_bytes_thread (GTask        *task,
                   gpointer      source_object,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  DriverCall *call = task_data;
  GError *error = NULL;
  GBytes *bytes = sandbox_driver_read_bytes (source_object, call->path, cancellable, &error);

  sandbox_task_return_pointer (task, bytes, (GDestroyNotify) g_bytes_unref, error);
}

static void
write_bytes_thread (GTask        *task,
                    gpointer      source_object,
                    gpointer      task_data,
                    GCancellable *cancellable)
{
  DriverCall *call = task_data;
  GError *error = NULL;
  gboolean ok = sandbox_driver_write_bytes (source_object, call->path, call->contents,
                                            cancellable, &error);

  sandbox_task_return_boolean (task, ok, error);
}

static void
remove_path_thread (GTask        *task,
                    gpointer      source_object,
                    gpointer      task_data,
                    GCancellable *cancellable)
{
  DriverCall *call = task_data;
  GError *error = NULL;
  gboolean ok = sandbox_driver_remove_path (source_object, call->path, cancellable, &error);

  sandbox_task_return_boolean (task, ok, error);
}

static void
set_network_policy_thread (GTask        *task,
                           gpointer      source_object,
                           gpointer      task_data,
                           GCancellable *cancellable)
{
  DriverCall *call = task_data;
  SandboxSignalScope scope;
  GError *error = NULL;
  gboolean ok;

  /* A gateway this starts (or retargets) signals to the caller of
   * set_network_policy_async(), not to this worker thread. */
  sandbox_signal_scope_begin (&scope, call->context);
  ok = sandbox_driver_set_network_policy (source_object, call->policy, cancellable, &error);
  sandbox_signal_scope_end (&scope);
  sandbox_task_return_boolean (task, ok, error);
}

static void
sandbox_driver_real_read_bytes_async (SandboxDriver       *self,
                                      const char          *path,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data)
{
  sandbox_task_run_in_thread (self, driver_call_new (path), (GDestroyNotify) driver_call_free,
                              read_bytes_thread, sandbox_driver_real_read_bytes_async,
                              "[sandbox] driver read bytes", cancellable, callback, user_data);
}

static GBytes *
sandbox_driver_real_read_bytes_finish (SandboxDriver  *self,
                                       GAsyncResult   *result,
                                       GError        **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
sandbox_driver_real_write_bytes_async (SandboxDriver       *self,
                                       const char          *path,
                                       GBytes              *contents,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  DriverCall *call = driver_call_new (path);

  call->contents = g_bytes_ref (contents);
  sandbox_task_run_in_thread (self, call, (GDestroyNotify) driver_call_free, write_bytes_thread,
                              sandbox_driver_real_write_bytes_async,
                              "[sandbox] driver write bytes", cancellable, callback, user_data);
}

static void
sandbox_driver_real_remove_path_async (SandboxDriver       *self,
                                       const char          *path,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  sandbox_task_run_in_thread (self, driver_call_new (path), (GDestroyNotify) driver_call_free,
                              remove_path_thread, sandbox_driver_real_remove_path_async,
                              "[sandbox] driver remove path", cancellable, callback, user_data);
}

static void
sandbox_driver_real_set_network_policy_async (SandboxDriver        *self,
                                              SandboxNetworkPolicy *policy,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data)
{
  DriverCall *call = driver_call_new (NULL);

  call->policy = g_object_ref (policy);
  call->context = sandbox_signal_context_ref ();
  sandbox_task_run_in_thread (self, call, (GDestroyNotify) driver_call_free,
                              set_network_policy_thread,
                              sandbox_driver_real_set_network_policy_async,
                              "[sandbox] driver set network policy", cancellable, callback,
                              user_data);
}

/* write_bytes, remove_path and set_network_policy alike. */
static gboolean
sandbox_driver_real_boolean_finish (SandboxDriver  *self,
                                    GAsyncResult   *result,
                                    GError        **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
spawn_thread (GTask        *task,
              gpointer      source_object,
              gpointer      task_data,
              GCancellable *cancellable)
{
  DriverCall *call = task_data;
  SandboxSignalScope scope;
  GError *error = NULL;
  SandboxProcess *process;

  /* The process emits its output in the caller's context, not this
   * thread's (sandbox_process_init() asks the scope). */
  sandbox_signal_scope_begin (&scope, call->context);
  process = sandbox_driver_spawn (source_object, call->command, cancellable, &error);
  sandbox_signal_scope_end (&scope);
  sandbox_task_return_pointer (task, process, g_object_unref, error);
}

/* A spawn can block for milliseconds (building the sandbox's arguments,
 * handing it to the launcher, a session's first network): the caller's
 * thread, often a UI's main loop, must not wait for it. */
static void
sandbox_driver_real_spawn_async (SandboxDriver       *self,
                                 SandboxCommand      *command,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  DriverCall *call = driver_call_new (NULL);

  call->command = g_object_ref (command);
  call->context = sandbox_signal_context_ref ();
  sandbox_task_run_in_thread (self, call, (GDestroyNotify) driver_call_free, spawn_thread,
                              sandbox_driver_real_spawn_async, "[sandbox] driver spawn",
                              cancellable, callback, user_data);
}

static SandboxProcess *
sandbox_driver_real_spawn_finish (SandboxDriver  *self,
                                  GAsyncResult   *result,
                                  GError        **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
sandbox_driver_default_init (SandboxDriverInterface *iface)
{
  iface->read_bytes_async = sandbox_driver_real_read_bytes_async;
  iface->read_bytes_finish = sandbox_driver_real_read_bytes_finish;
  iface->write_bytes_async = sandbox_driver_real_write_bytes_async;
  iface->write_bytes_finish = sandbox_driver_real_boolean_finish;
  iface->remove_path_async = sandbox_driver_real_remove_path_async;
  iface->remove_path_finish = sandbox_driver_real_boolean_finish;
  iface->spawn_async = sandbox_driver_real_spawn_async;
  iface->spawn_finish = sandbox_driver_real_spawn_finish;
  iface->set_network_policy_async = sandbox_driver_real_set_network_policy_async;
  iface->set_network_policy_finish = sandbox_driver_real_boolean_finish;
}

/* ----- the public wrappers ----- */

/**
 * sandbox_driver_read_bytes:
 * @self: a [iface@Sandbox.Driver]
 * @path: a workspace path (made canonical here)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads the whole workspace file at @path, after the checks every file
 * operation runs (see [struct@Sandbox.DriverInterface]). Blocking.
 *
 * Returns: (transfer full): the file's contents, or NULL with @error set
 */
GBytes *
sandbox_driver_read_bytes (SandboxDriver  *self,
                           const char     *path,
                           GCancellable   *cancellable,
                           GError        **error)
{
  g_autofree char *canonical = NULL;

  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  canonical = begin_file_operation (self, path, NULL, FALSE, cancellable, error);
  if (canonical == NULL)
    return NULL;
  return end_read (self, SANDBOX_DRIVER_GET_IFACE (self)->read_bytes (self, canonical,
                                                                      cancellable, error),
                   error);
}

/**
 * sandbox_driver_read_bytes_async:
 * @self: a [iface@Sandbox.Driver]
 * @path: a workspace path (made canonical here)
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Reads the whole workspace file at @path.
 */
void
sandbox_driver_read_bytes_async (SandboxDriver       *self,
                                 const char          *path,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_return_if_fail (SANDBOX_IS_DRIVER (self));
  g_return_if_fail (path != NULL);

  SANDBOX_DRIVER_GET_IFACE (self)->read_bytes_async (self, path, cancellable, callback, user_data);
}

/**
 * sandbox_driver_read_bytes_finish:
 * @self: a [iface@Sandbox.Driver]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes [method@Sandbox.Driver.read_bytes_async].
 *
 * Returns: (transfer full): the file's contents, or NULL with @error set
 */
GBytes *
sandbox_driver_read_bytes_finish (SandboxDriver  *self,
                                  GAsyncResult   *result,
                                  GError        **error)
{
  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);

  return SANDBOX_DRIVER_GET_IFACE (self)->read_bytes_finish (self, result, error);
}

/**
 * sandbox_driver_write_bytes:
 * @self: a [iface@Sandbox.Driver]
 * @path: a workspace path (made canonical here)
 * @contents: the new contents
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Replaces the workspace file at @path with @contents, creating parent directories. Blocking.
 *
 * Returns: %TRUE on success, or FALSE with @error set
 */
gboolean
sandbox_driver_write_bytes (SandboxDriver  *self,
                            const char     *path,
                            GBytes         *contents,
                            GCancellable   *cancellable,
                            GError        **error)
{
  g_autofree char *canonical = NULL;

  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);

  canonical = begin_file_operation (self, path, contents, FALSE, cancellable, error);
  return canonical != NULL &&
         SANDBOX_DRIVER_GET_IFACE (self)->write_bytes (self, canonical, contents, cancellable,
                                                       error);
}

/**
 * sandbox_driver_write_bytes_async:
 * @self: a [iface@Sandbox.Driver]
 * @path: a workspace path (made canonical here)
 * @contents: the new contents
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Replaces the workspace file at @path with @contents, creating parent directories.
 */
void
sandbox_driver_write_bytes_async (SandboxDriver       *self,
                                  const char          *path,
                                  GBytes              *contents,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_return_if_fail (SANDBOX_IS_DRIVER (self));
  g_return_if_fail (path != NULL);
  g_return_if_fail (contents != NULL);

  SANDBOX_DRIVER_GET_IFACE (self)->write_bytes_async (self, path, contents, cancellable,
                                                      callback, user_data);
}

/**
 * sandbox_driver_write_bytes_finish:
 * @self: a [iface@Sandbox.Driver]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes [method@Sandbox.Driver.write_bytes_async].
 *
 * Returns: %TRUE on success, or FALSE with @error set
 */
gboolean
sandbox_driver_write_bytes_finish (SandboxDriver  *self,
                                   GAsyncResult   *result,
                                   GError        **error)
{
  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);

  return SANDBOX_DRIVER_GET_IFACE (self)->write_bytes_finish (self, result, error);
}

/**
 * sandbox_driver_remove_path:
 * @self: a [iface@Sandbox.Driver]
 * @path: a workspace path (made canonical here)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Removes the file or directory tree at @path; a missing path is not an error. Blocking.
 *
 * Returns: %TRUE on success, or FALSE with @error set
 */
gboolean
sandbox_driver_remove_path (SandboxDriver  *self,
                            const char     *path,
                            GCancellable   *cancellable,
                            GError        **error)
{
  g_autofree char *canonical = NULL;

  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  canonical = begin_file_operation (self, path, NULL, TRUE, cancellable, error);
  return canonical != NULL &&
         SANDBOX_DRIVER_GET_IFACE (self)->remove_path (self, canonical, cancellable, error);
}

/**
 * sandbox_driver_remove_path_async:
 * @self: a [iface@Sandbox.Driver]
 * @path: a workspace path (made canonical here)
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Removes the file or directory tree at @path; a missing path is not an error.
 */
void
sandbox_driver_remove_path_async (SandboxDriver       *self,
                                  const char          *path,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_return_if_fail (SANDBOX_IS_DRIVER (self));
  g_return_if_fail (path != NULL);

  SANDBOX_DRIVER_GET_IFACE (self)->remove_path_async (self, path, cancellable, callback, user_data);
}

/**
 * sandbox_driver_remove_path_finish:
 * @self: a [iface@Sandbox.Driver]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes [method@Sandbox.Driver.remove_path_async].
 *
 * Returns: %TRUE on success, or FALSE with @error set
 */
gboolean
sandbox_driver_remove_path_finish (SandboxDriver  *self,
                                   GAsyncResult   *result,
                                   GError        **error)
{
  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);

  return SANDBOX_DRIVER_GET_IFACE (self)->remove_path_finish (self, result, error);
}

/**
 * sandbox_driver_spawn:
 * @self: a [iface@Sandbox.Driver]
 * @command: the command to run
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Starts @command, which has been validated and has a canonical working directory. Blocking.
 *
 * Returns: (transfer full): the running command, or NULL with @error set
 */
SandboxProcess *
sandbox_driver_spawn (SandboxDriver   *self,
                      SandboxCommand  *command,
                      GCancellable    *cancellable,
                      GError         **error)
{
  SandboxProcess *process;

  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), NULL);
  g_return_val_if_fail (command != NULL, NULL);

  process = SANDBOX_DRIVER_GET_IFACE (self)->spawn (self, command, cancellable, error);
  sandbox_log_spawned (self, process, error);
  return process;
}

/**
 * sandbox_driver_spawn_async:
 * @self: a [iface@Sandbox.Driver]
 * @command: the command to run
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Starts @command, which has been validated and has a canonical working directory.
 */
void
sandbox_driver_spawn_async (SandboxDriver       *self,
                            SandboxCommand      *command,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (SANDBOX_IS_DRIVER (self));
  g_return_if_fail (command != NULL);

  SANDBOX_DRIVER_GET_IFACE (self)->spawn_async (self, command, cancellable, callback, user_data);
}

/**
 * sandbox_driver_spawn_finish:
 * @self: a [iface@Sandbox.Driver]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes [method@Sandbox.Driver.spawn_async].
 *
 * Returns: (transfer full): the running command, or NULL with @error set
 */
SandboxProcess *
sandbox_driver_spawn_finish (SandboxDriver  *self,
                             GAsyncResult   *result,
                             GError        **error)
{
  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);

  return SANDBOX_DRIVER_GET_IFACE (self)->spawn_finish (self, result, error);
}

/**
 * sandbox_driver_set_network_policy:
 * @self: a [iface@Sandbox.Driver]
 * @policy: the new policy
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Replaces the session's network policy; commands started afterwards see it. Blocking.
 *
 * Returns: %TRUE on success, or FALSE with @error set
 */
gboolean
sandbox_driver_set_network_policy (SandboxDriver         *self,
                                   SandboxNetworkPolicy  *policy,
                                   GCancellable          *cancellable,
                                   GError               **error)
{
  gboolean ok;

  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), FALSE);
  g_return_val_if_fail (policy != NULL, FALSE);

  ok = SANDBOX_DRIVER_GET_IFACE (self)->set_network_policy (self, policy, cancellable, error);
  sandbox_log_policy_changed (self, policy, ok, error);
  return ok;
}

/**
 * sandbox_driver_set_network_policy_async:
 * @self: a [iface@Sandbox.Driver]
 * @policy: the new policy
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Replaces the session's network policy; commands started afterwards see it.
 */
void
sandbox_driver_set_network_policy_async (SandboxDriver        *self,
                                         SandboxNetworkPolicy *policy,
                                         GCancellable         *cancellable,
                                         GAsyncReadyCallback   callback,
                                         gpointer              user_data)
{
  g_return_if_fail (SANDBOX_IS_DRIVER (self));
  g_return_if_fail (policy != NULL);

  SANDBOX_DRIVER_GET_IFACE (self)->set_network_policy_async (self, policy, cancellable,
                                                             callback, user_data);
}

/**
 * sandbox_driver_set_network_policy_finish:
 * @self: a [iface@Sandbox.Driver]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes [method@Sandbox.Driver.set_network_policy_async].
 *
 * Returns: %TRUE on success, or FALSE with @error set
 */
gboolean
sandbox_driver_set_network_policy_finish (SandboxDriver  *self,
                                          GAsyncResult   *result,
                                          GError        **error)
{
  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), FALSE);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), FALSE);

  return SANDBOX_DRIVER_GET_IFACE (self)->set_network_policy_finish (self, result, error);
}
