/* sandbox-session-commands.c — the session's commands: spawn and run
 *
 * Every command is validated and its working directory canonicalized here,
 * once for every backend, before the driver spawns it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-path.h"
#include "sandbox-session-private.h"

/* A validated copy of @command whose working directory is canonical. */
static SandboxCommand *
prepare_command (SandboxCommand  *command,
                 GError         **error)
{
  g_autoptr(SandboxCommand) prepared = NULL;
  g_autofree char *cwd = NULL;

  if (!sandbox_command_validate (command, error))
    return NULL;

  cwd = sandbox_path_canonicalize (sandbox_command_get_cwd (command), error);
  if (cwd == NULL)
    return NULL;

  prepared = sandbox_command_copy (command);
  sandbox_command_set_cwd (prepared, cwd);
  if (sandbox_command_get_terminal (prepared) && sandbox_command_getenv (prepared, "TERM") == NULL)
    sandbox_command_setenv (prepared, "TERM", sandbox_command_get_terminal_type (prepared));
  return g_steal_pointer (&prepared);
}

/* ----- blocking forms ----- */

/* A driver that cannot stream a command's input, or give it a terminal,
 * returns a process without them: the consumer would have nothing to
 * write to, so the command is ended and refused rather than left waiting
 * for input. Takes @process; returns it, or NULL with @error set. */
static SandboxProcess *
check_stdin_stream (SandboxCommand  *command,
                    SandboxProcess  *process,
                    GError         **error)
{
  g_autoptr(SandboxProcess) owned = process;
  const char *missing = NULL;

  if (owned == NULL)
    return NULL;
  if (sandbox_command_get_terminal (command) && !sandbox_process_has_terminal (owned))
    missing = "give a command a terminal (terminal)";
  else if (sandbox_command_get_stdin_stream (command) &&
           sandbox_process_get_stdin_stream (owned) == NULL)
    missing = "stream a command's standard input (stdin-stream)";
  if (missing == NULL)
    return g_steal_pointer (&owned);
  sandbox_process_stop_async (owned, NULL, NULL, NULL);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "This backend cannot %s", missing);
  return NULL;
}

/* sandbox_session_run() has no one to write a streamed input: it ends at
 * once, as the property says. */
static void
end_unwritten_stdin (SandboxProcess *process)
{
  GOutputStream *stdin_stream = sandbox_process_get_stdin_stream (process);

  if (stdin_stream != NULL)
    g_output_stream_close (stdin_stream, NULL, NULL);
}

/**
 * sandbox_session_spawn:
 * @self: a [class@Sandbox.Session]
 * @command: the command to run
 * @cancellable: (nullable): cancelling it kills the command
 * @error: return location for a #GError
 *
 * Starts @command and returns at once. Invalid commands fail with
 * %SANDBOX_ERROR_INVALID (or %SANDBOX_ERROR_PATH for the working
 * directory); a full admission limit with %SANDBOX_ERROR_BUSY before
 * anything starts.
 *
 * Returns: (transfer full): the running command, or %NULL with @error set
 */
SandboxProcess *
sandbox_session_spawn (SandboxSession  *self,
                       SandboxCommand  *command,
                       GCancellable    *cancellable,
                       GError         **error)
{
  g_autoptr(SandboxCommand) prepared = NULL;

  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);
  g_return_val_if_fail (SANDBOX_IS_COMMAND (command), NULL);

  prepared = prepare_command (command, error);
  if (prepared == NULL)
    return NULL;

  return check_stdin_stream (prepared,
                             sandbox_driver_spawn (sandbox_session_driver_for_call (self), prepared,
                                                   cancellable, error),
                             error);
}

/**
 * sandbox_session_run:
 * @self: a [class@Sandbox.Session]
 * @command: the command to run
 * @cancellable: (nullable): cancelling it kills the command
 * @error: return location for a #GError
 *
 * Runs @command to the end. Use [method@Sandbox.Result.dup_stdout_text] for its
 * output as text (invalid UTF-8 replaced with U+FFFD).
 *
 * Returns: (transfer full): the command's result, or %NULL with @error set
 */
SandboxResult *
sandbox_session_run (SandboxSession  *self,
                     SandboxCommand  *command,
                     GCancellable    *cancellable,
                     GError         **error)
{
  g_autoptr(SandboxProcess) process = sandbox_session_spawn (self, command, cancellable, error);

  if (process == NULL)
    return NULL;
  end_unwritten_stdin (process);

  /* The spawn's cancellable already kills the command, so wait without one:
   * the result then carries G_IO_ERROR_CANCELLED once the command is gone. */
  return sandbox_process_wait (process, NULL, error);
}

/* ----- async forms ----- */

static void
spawn_cb (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  SandboxProcess *process = sandbox_driver_spawn_finish (SANDBOX_DRIVER (object), result, &error);

  process = check_stdin_stream (g_task_get_task_data (task), process, &error);
  sandbox_task_return_pointer (task, process, g_object_unref, error);
}

/**
 * sandbox_session_spawn_async:
 * @self: a [class@Sandbox.Session]
 * @command: the command to run
 * @cancellable: (nullable): cancelling it kills the command
 * @callback: (scope async): called once the command has started
 * @user_data: data for @callback
 *
 * Starts @command; see [method@Sandbox.Session.spawn].
 */
void
sandbox_session_spawn_async (SandboxSession      *self,
                             SandboxCommand      *command,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(SandboxCommand) prepared = NULL;
  GError *error = NULL;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (SANDBOX_IS_COMMAND (command));

  task = sandbox_session_task_new (self, cancellable, callback, user_data,
                                   sandbox_session_spawn_async, "[sandbox] spawn");
  prepared = prepare_command (command, &error);
  if (prepared == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  g_task_set_task_data (task, g_object_ref (prepared), g_object_unref);
  sandbox_driver_spawn_async (sandbox_session_driver_for_call (self), prepared, cancellable, spawn_cb,
                              g_steal_pointer (&task));
}

/**
 * sandbox_session_spawn_finish:
 * @self: a [class@Sandbox.Session]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Session.spawn_async].
 *
 * Returns: (transfer full): the running command, or %NULL with @error set
 */
SandboxProcess *
sandbox_session_spawn_finish (SandboxSession  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
run_wait_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  SandboxResult *run_result = sandbox_process_wait_finish (SANDBOX_PROCESS (object), result, &error);

  sandbox_task_return_pointer (task, run_result, g_object_unref, error);
}

static void
run_spawn_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(SandboxProcess) process = NULL;
  GError *error = NULL;

  process = sandbox_session_spawn_finish (SANDBOX_SESSION (object), result, &error);
  if (process == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  end_unwritten_stdin (process);

  sandbox_process_wait_async (process, NULL, run_wait_cb, g_steal_pointer (&task));
}

/**
 * sandbox_session_run_async:
 * @self: a [class@Sandbox.Session]
 * @command: the command to run
 * @cancellable: (nullable): cancelling it kills the command
 * @callback: (scope async): called when the command is over
 * @user_data: data for @callback
 *
 * Runs @command to the end; see [method@Sandbox.Session.run].
 */
void
sandbox_session_run_async (SandboxSession      *self,
                           SandboxCommand      *command,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (SANDBOX_IS_COMMAND (command));

  task = sandbox_session_task_new (self, cancellable, callback, user_data,
                                   sandbox_session_run_async, "[sandbox] run");
  sandbox_session_spawn_async (self, command, cancellable, run_spawn_cb, task);
}

/**
 * sandbox_session_run_finish:
 * @self: a [class@Sandbox.Session]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Session.run_async].
 *
 * Returns: (transfer full): the command's result, or %NULL with @error set
 */
SandboxResult *
sandbox_session_run_finish (SandboxSession  *self,
                            GAsyncResult    *result,
                            GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
