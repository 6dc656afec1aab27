/* sandbox-handle-snapshot.c — snapshots of a live session's workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend-private.h"
#include "sandbox-error.h"
#include "sandbox-handle-private.h"
#include "sandbox-log-private.h"
#include "sandbox-template.h"

/*
 * A snapshot is the session's workspace frozen, content-addressed, as a
 * template key: sandbox_backend_create() takes it wherever it takes a
 * template's key, so N sessions forked from it each cost a plain create.
 * Restore resets the session's workspace to one of its snapshots in
 * place. Processes, memory and background commands are not part of a
 * snapshot: a backend refuses both while a command runs (BUSY).
 */

/**
 * sandbox_handle_snapshot:
 * @self: a [class@Sandbox.Handle]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Freezes the live session's workspace as an immutable, content-addressed
 * snapshot: the session's changes over its template (or over the snapshot
 * it was created from), kept exactly — contents, modes, symbolic links,
 * empty directories and deletions. The key it returns is a template key:
 * [method@Sandbox.Backend.create] creates sessions from it (forks, each
 * with its own id, lease and changes), [method@Sandbox.Handle.restore]
 * resets this session to it, and deleting it is refused while a session
 * or another snapshot depends on it. Two snapshots of the same changes
 * over the same parent have the same key.
 *
 * Only files are captured: processes, their memory and background
 * commands are not. A snapshot while a command of the session runs fails
 * with %SANDBOX_ERROR_BUSY; the session's file calls made meanwhile may
 * or may not be in it. Snapshots, restores and checkpoints run one at a
 * time and never during a stop; a stopped or deleted handle fails with
 * %SANDBOX_ERROR_STOPPED. A backend without snapshots (and a bubblewrap
 * session that copies its template instead of layering over it) fails
 * with %G_IO_ERROR_NOT_SUPPORTED.
 *
 * Returns: (transfer full): the snapshot's key, or %NULL with @error set
 */
char *
sandbox_handle_snapshot (SandboxHandle  *self,
                         GCancellable   *cancellable,
                         GError        **error)
{
  SandboxHandleClass *klass;
  g_autoptr(GError) local_error = NULL;
  char *key;

  g_return_val_if_fail (SANDBOX_IS_HANDLE (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  klass = SANDBOX_HANDLE_GET_CLASS (self);
  if (klass->snapshot == NULL)
    {
      sandbox_set_error_not_supported (G_OBJECT_TYPE (self), "Snapshots", TRUE, error);
      return NULL;
    }
  if (!sandbox_handle_begin_exclusive (self, error))
    return NULL;
  key = klass->snapshot (self, cancellable, &local_error);
  sandbox_log_handle_event (self, "snapshot", key != NULL, &local_error);
  sandbox_handle_end_exclusive (self);

  if (key == NULL)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return key;
}

/**
 * sandbox_handle_restore:
 * @self: a [class@Sandbox.Handle]
 * @key: the key of a snapshot of this session (see
 *   [method@Sandbox.Handle.snapshot]) or of the template it was created
 *   from
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Resets the live session's workspace, in place, to the files of @key:
 * what was changed since is gone. The session keeps its id, lease,
 * network policy and exposed ports. @key must be the session's template
 * or a snapshot in its line (taken from it, or from what it was created
 * from; a backend may take any key of the session's line, see the
 * backend's documentation): any other key fails with
 * %SANDBOX_ERROR_INVALID. A restore that moves the session onto another
 * key than the one it was created from changes the state
 * [method@Sandbox.Handle.capture_state] returns: capture it again. Refused with
 * %SANDBOX_ERROR_BUSY while a command of the session runs; otherwise as
 * [method@Sandbox.Handle.snapshot].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_handle_restore (SandboxHandle  *self,
                        const char     *key,
                        GCancellable   *cancellable,
                        GError        **error)
{
  SandboxHandleClass *klass;
  g_autoptr(GError) local_error = NULL;
  gboolean ok;

  g_return_val_if_fail (SANDBOX_IS_HANDLE (self), FALSE);
  g_return_val_if_fail (key != NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!sandbox_template_key_is_valid (key))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Expected a snapshot or template key: 64 lowercase hexadecimal characters");
      return FALSE;
    }
  klass = SANDBOX_HANDLE_GET_CLASS (self);
  if (klass->restore == NULL)
    return sandbox_set_error_not_supported (G_OBJECT_TYPE (self), "Restoring snapshots", FALSE,
                                            error);
  if (!sandbox_handle_begin_exclusive (self, error))
    return FALSE;
  ok = klass->restore (self, key, cancellable, &local_error);
  sandbox_log_handle_event (self, "restore", ok, &local_error);
  sandbox_handle_end_exclusive (self);

  if (!ok)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return ok;
}

static void
snapshot_thread (GTask        *task,
                 gpointer      source_object,
                 gpointer      task_data,
                 GCancellable *cancellable)
{
  GError *error = NULL;
  char *key = sandbox_handle_snapshot (source_object, cancellable, &error);

  if (key == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, key, g_free);
}

/**
 * sandbox_handle_snapshot_async:
 * @self: a [class@Sandbox.Handle]
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the snapshot is stored
 * @user_data: data for @callback
 *
 * Snapshots the live session; see [method@Sandbox.Handle.snapshot].
 */
void
sandbox_handle_snapshot_async (SandboxHandle       *self,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SANDBOX_IS_HANDLE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sandbox_handle_snapshot_async);
  g_task_set_name (task, "[sandbox] snapshot");
  g_task_run_in_thread (task, snapshot_thread);
}

/**
 * sandbox_handle_snapshot_finish:
 * @self: a [class@Sandbox.Handle]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Handle.snapshot_async].
 *
 * Returns: (transfer full): the snapshot's key, or %NULL with @error set
 */
char *
sandbox_handle_snapshot_finish (SandboxHandle  *self,
                                GAsyncResult   *result,
                                GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
restore_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  GError *error = NULL;

  if (!sandbox_handle_restore (source_object, task_data, cancellable, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/**
 * sandbox_handle_restore_async:
 * @self: a [class@Sandbox.Handle]
 * @key: the key of a snapshot of this session, or of its template
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the workspace is restored
 * @user_data: data for @callback
 *
 * Restores the live session's workspace; see [method@Sandbox.Handle.restore].
 */
void
sandbox_handle_restore_async (SandboxHandle       *self,
                              const char          *key,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SANDBOX_IS_HANDLE (self));
  g_return_if_fail (key != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sandbox_handle_restore_async);
  g_task_set_name (task, "[sandbox] restore");
  g_task_set_task_data (task, g_strdup (key), g_free);
  g_task_run_in_thread (task, restore_thread);
}

/**
 * sandbox_handle_restore_finish:
 * @self: a [class@Sandbox.Handle]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Handle.restore_async].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_handle_restore_finish (SandboxHandle  *self,
                               GAsyncResult   *result,
                               GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
