/* sandbox-driver.c — what a backend implements per live session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-driver.h"
#include "sandbox-log-private.h"
#include "sandbox-signal-context-private.h"

/**
 * SandboxDriver:
 *
 * The per-session interface a backend implements: byte I/O, spawn and
 * network policy enforcement. #SandboxSession adds path handling, text
 * conversion and run() on top, once, for every backend.
 *
 * Implementations provide the blocking vfuncs; the async ones default to
 * running the blocking ones in a thread (spawn, which must not block, is
 * called directly).
 */

G_DEFINE_INTERFACE (SandboxDriver, sandbox_driver, G_TYPE_OBJECT)

typedef struct
{
  const char *path;
} ReadBytesData;

static void
read_bytes_data_free (ReadBytesData *data)
{
  g_free ((char *) data->path);
  g_free (data);
}

static void
read_bytes_thread (GTask        *task,
                  gpointer      source_object,
                  gpointer      task_data,
                  GCancellable *cancellable)
{
  ReadBytesData *data = task_data;
  GError *error = NULL;
  GBytes *ret = SANDBOX_DRIVER_GET_IFACE (source_object)->read_bytes (source_object, data->path, cancellable, &error);

  if (ret == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, ret, (GDestroyNotify) g_bytes_unref);
}

static void
sandbox_driver_real_read_bytes_async (SandboxDriver        *self,
                                      const char *path,
                                      GCancellable         *cancellable,
                                      GAsyncReadyCallback   callback,
                                      gpointer              user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, sandbox_driver_real_read_bytes_async);
  g_task_set_name (task, "[sandbox] driver read bytes");
  {
    ReadBytesData *data = g_new0 (ReadBytesData, 1);

    data->path = g_strdup (path);
    g_task_set_task_data (task, data, (GDestroyNotify) read_bytes_data_free);
  }
  g_task_run_in_thread (task, read_bytes_thread);
}

static GBytes *
sandbox_driver_real_read_bytes_finish (SandboxDriver  *self,
                                      GAsyncResult   *result,
                                      GError        **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct
{
  const char *path;
  GBytes *contents;
} WriteBytesData;

static void
write_bytes_data_free (WriteBytesData *data)
{
  g_free ((char *) data->path);
  g_bytes_unref (data->contents);
  g_free (data);
}

static void
write_bytes_thread (GTask        *task,
                   gpointer      source_object,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  WriteBytesData *data = task_data;
  GError *error = NULL;

  if (!SANDBOX_DRIVER_GET_IFACE (source_object)->write_bytes (source_object, data->path, data->contents, cancellable, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
sandbox_driver_real_write_bytes_async (SandboxDriver        *self,
                                       const char *path,
                                       GBytes *contents,
                                       GCancellable         *cancellable,
                                       GAsyncReadyCallback   callback,
                                       gpointer              user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, sandbox_driver_real_write_bytes_async);
  g_task_set_name (task, "[sandbox] driver write bytes");
  {
    WriteBytesData *data = g_new0 (WriteBytesData, 1);

    data->path = g_strdup (path);
    data->contents = g_bytes_ref (contents);
    g_task_set_task_data (task, data, (GDestroyNotify) write_bytes_data_free);
  }
  g_task_run_in_thread (task, write_bytes_thread);
}

static gboolean
sandbox_driver_real_write_bytes_finish (SandboxDriver  *self,
                                       GAsyncResult   *result,
                                       GError        **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

typedef struct
{
  const char *path;
} RemovePathData;

static void
remove_path_data_free (RemovePathData *data)
{
  g_free ((char *) data->path);
  g_free (data);
}

static void
remove_path_thread (GTask        *task,
                   gpointer      source_object,
                   gpointer      task_data,
                   GCancellable *cancellable)
{
  RemovePathData *data = task_data;
  GError *error = NULL;

  if (!SANDBOX_DRIVER_GET_IFACE (source_object)->remove_path (source_object, data->path, cancellable, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
sandbox_driver_real_remove_path_async (SandboxDriver        *self,
                                       const char *path,
                                       GCancellable         *cancellable,
                                       GAsyncReadyCallback   callback,
                                       gpointer              user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, sandbox_driver_real_remove_path_async);
  g_task_set_name (task, "[sandbox] driver remove path");
  {
    RemovePathData *data = g_new0 (RemovePathData, 1);

    data->path = g_strdup (path);
    g_task_set_task_data (task, data, (GDestroyNotify) remove_path_data_free);
  }
  g_task_run_in_thread (task, remove_path_thread);
}

static gboolean
sandbox_driver_real_remove_path_finish (SandboxDriver  *self,
                                       GAsyncResult   *result,
                                       GError        **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
sandbox_driver_real_spawn_async (SandboxDriver        *self,
                                 SandboxCommand *command,
                                 GCancellable         *cancellable,
                                 GAsyncReadyCallback   callback,
                                 gpointer              user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, sandbox_driver_real_spawn_async);
  g_task_set_name (task, "[sandbox] driver spawn");
  {
    GError *error = NULL;
    SandboxProcess *process = sandbox_driver_spawn (self, command, cancellable, &error);

    if (process == NULL)
      g_task_return_error (task, error);
    else
      g_task_return_pointer (task, process, g_object_unref);
  }
}

static SandboxProcess *
sandbox_driver_real_spawn_finish (SandboxDriver  *self,
                                 GAsyncResult   *result,
                                 GError        **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct
{
  SandboxNetworkPolicy *policy;
  GMainContext *context;   /* the caller's, for the gateway's signals */
} SetNetworkPolicyData;

static void
set_network_policy_data_free (SetNetworkPolicyData *data)
{
  g_object_unref (data->policy);
  g_main_context_unref (data->context);
  g_free (data);
}

static void
set_network_policy_thread (GTask        *task,
                          gpointer      source_object,
                          gpointer      task_data,
                          GCancellable *cancellable)
{
  SetNetworkPolicyData *data = task_data;
  SandboxSignalScope scope;
  GError *error = NULL;
  gboolean ok;

  /* A gateway this starts (or retargets) signals to the caller of
   * set_network_policy_async(), not to this worker thread. */
  sandbox_signal_scope_begin (&scope, data->context);
  ok = sandbox_driver_set_network_policy (source_object, data->policy, cancellable, &error);
  sandbox_signal_scope_end (&scope);
  if (!ok)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
sandbox_driver_real_set_network_policy_async (SandboxDriver        *self,
                                              SandboxNetworkPolicy *policy,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, sandbox_driver_real_set_network_policy_async);
  g_task_set_name (task, "[sandbox] driver set network policy");
  {
    SetNetworkPolicyData *data = g_new0 (SetNetworkPolicyData, 1);

    data->policy = g_object_ref (policy);
    data->context = sandbox_signal_context_ref ();
    g_task_set_task_data (task, data, (GDestroyNotify) set_network_policy_data_free);
  }
  g_task_run_in_thread (task, set_network_policy_thread);
}

static gboolean
sandbox_driver_real_set_network_policy_finish (SandboxDriver  *self,
                                              GAsyncResult   *result,
                                              GError        **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
sandbox_driver_default_init (SandboxDriverInterface *iface)
{
  iface->read_bytes_async = sandbox_driver_real_read_bytes_async;
  iface->read_bytes_finish = sandbox_driver_real_read_bytes_finish;
  iface->write_bytes_async = sandbox_driver_real_write_bytes_async;
  iface->write_bytes_finish = sandbox_driver_real_write_bytes_finish;
  iface->remove_path_async = sandbox_driver_real_remove_path_async;
  iface->remove_path_finish = sandbox_driver_real_remove_path_finish;
  iface->spawn_async = sandbox_driver_real_spawn_async;
  iface->spawn_finish = sandbox_driver_real_spawn_finish;
  iface->set_network_policy_async = sandbox_driver_real_set_network_policy_async;
  iface->set_network_policy_finish = sandbox_driver_real_set_network_policy_finish;
}

/**
 * sandbox_driver_read_bytes:
 * @self: a #SandboxDriver
 * @path: a canonical workspace path
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads the whole workspace file at the canonical @path. Blocking.
 *
 * Returns: (transfer full): the file's contents, or NULL with @error set
 */
GBytes *
sandbox_driver_read_bytes (SandboxDriver  *self,
                           const char *path,
                           GCancellable   *cancellable,
                           GError        **error)
{
  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  return SANDBOX_DRIVER_GET_IFACE (self)->read_bytes (self, path, cancellable, error);
}

/**
 * sandbox_driver_read_bytes_async:
 * @self: a #SandboxDriver
 * @path: a canonical workspace path
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Reads the whole workspace file at the canonical @path.
 */
void
sandbox_driver_read_bytes_async (SandboxDriver        *self,
                                 const char *path,
                                 GCancellable         *cancellable,
                                 GAsyncReadyCallback   callback,
                                 gpointer              user_data)
{
  g_return_if_fail (SANDBOX_IS_DRIVER (self));
  g_return_if_fail (path != NULL);

  SANDBOX_DRIVER_GET_IFACE (self)->read_bytes_async (self, path, cancellable, callback, user_data);
}

/**
 * sandbox_driver_read_bytes_finish:
 * @self: a #SandboxDriver
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes sandbox_driver_read_bytes_async().
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
 * @self: a #SandboxDriver
 * @path: a canonical workspace path
 * @contents: the new contents
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Replaces the workspace file at the canonical @path with @contents, creating parent directories. Blocking.
 *
 * Returns: %TRUE on success, or FALSE with @error set
 */
gboolean
sandbox_driver_write_bytes (SandboxDriver  *self,
                            const char *path,
                            GBytes *contents,
                            GCancellable   *cancellable,
                            GError        **error)
{
  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);

  return SANDBOX_DRIVER_GET_IFACE (self)->write_bytes (self, path, contents, cancellable, error);
}

/**
 * sandbox_driver_write_bytes_async:
 * @self: a #SandboxDriver
 * @path: a canonical workspace path
 * @contents: the new contents
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Replaces the workspace file at the canonical @path with @contents, creating parent directories.
 */
void
sandbox_driver_write_bytes_async (SandboxDriver        *self,
                                  const char *path,
                                  GBytes *contents,
                                  GCancellable         *cancellable,
                                  GAsyncReadyCallback   callback,
                                  gpointer              user_data)
{
  g_return_if_fail (SANDBOX_IS_DRIVER (self));
  g_return_if_fail (path != NULL);
  g_return_if_fail (contents != NULL);

  SANDBOX_DRIVER_GET_IFACE (self)->write_bytes_async (self, path, contents, cancellable, callback, user_data);
}

/**
 * sandbox_driver_write_bytes_finish:
 * @self: a #SandboxDriver
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes sandbox_driver_write_bytes_async().
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
 * @self: a #SandboxDriver
 * @path: a canonical workspace path
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Removes the file or directory tree at the canonical @path; a missing path is not an error. Blocking.
 *
 * Returns: %TRUE on success, or FALSE with @error set
 */
gboolean
sandbox_driver_remove_path (SandboxDriver  *self,
                            const char *path,
                            GCancellable   *cancellable,
                            GError        **error)
{
  g_return_val_if_fail (SANDBOX_IS_DRIVER (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  return SANDBOX_DRIVER_GET_IFACE (self)->remove_path (self, path, cancellable, error);
}

/**
 * sandbox_driver_remove_path_async:
 * @self: a #SandboxDriver
 * @path: a canonical workspace path
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Removes the file or directory tree at the canonical @path; a missing path is not an error.
 */
void
sandbox_driver_remove_path_async (SandboxDriver        *self,
                                  const char *path,
                                  GCancellable         *cancellable,
                                  GAsyncReadyCallback   callback,
                                  gpointer              user_data)
{
  g_return_if_fail (SANDBOX_IS_DRIVER (self));
  g_return_if_fail (path != NULL);

  SANDBOX_DRIVER_GET_IFACE (self)->remove_path_async (self, path, cancellable, callback, user_data);
}

/**
 * sandbox_driver_remove_path_finish:
 * @self: a #SandboxDriver
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes sandbox_driver_remove_path_async().
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
 * @self: a #SandboxDriver
 * @command: the command to run
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Starts @command, which has been validated and has a canonical working directory. Blocking.
 *
 * Returns: (transfer full): the running command, or NULL with @error set
 */
SandboxProcess *
sandbox_driver_spawn (SandboxDriver  *self,
                      SandboxCommand *command,
                      GCancellable   *cancellable,
                      GError        **error)
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
 * @self: a #SandboxDriver
 * @command: the command to run
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Starts @command, which has been validated and has a canonical working directory.
 */
void
sandbox_driver_spawn_async (SandboxDriver        *self,
                            SandboxCommand *command,
                            GCancellable         *cancellable,
                            GAsyncReadyCallback   callback,
                            gpointer              user_data)
{
  g_return_if_fail (SANDBOX_IS_DRIVER (self));
  g_return_if_fail (command != NULL);

  SANDBOX_DRIVER_GET_IFACE (self)->spawn_async (self, command, cancellable, callback, user_data);
}

/**
 * sandbox_driver_spawn_finish:
 * @self: a #SandboxDriver
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes sandbox_driver_spawn_async().
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
 * @self: a #SandboxDriver
 * @policy: the new policy
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Replaces the session's network policy; commands started afterwards see it. Blocking.
 *
 * Returns: %TRUE on success, or FALSE with @error set
 */
gboolean
sandbox_driver_set_network_policy (SandboxDriver  *self,
                                   SandboxNetworkPolicy *policy,
                                   GCancellable   *cancellable,
                                   GError        **error)
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
 * @self: a #SandboxDriver
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

  SANDBOX_DRIVER_GET_IFACE (self)->set_network_policy_async (self, policy, cancellable, callback, user_data);
}

/**
 * sandbox_driver_set_network_policy_finish:
 * @self: a #SandboxDriver
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes sandbox_driver_set_network_policy_async().
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

