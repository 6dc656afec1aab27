/* sandbox-process-background.c — a background command: its id, its command line, its bounded output
 *
 * A session's background command (sandbox-session-background.c) is a
 * SandboxProcess like any other, with three things more: an id the session
 * finds it by, what it runs and since when (for listing), and its output
 * as a bounded log of both streams in the order they came, which a caller
 * re-attaching reads from any position, instead of the one-shot buffers
 * whose cap ends the command.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-process-private.h"
#include "sandbox-process-state-private.h"

/* Called with the process's mutex held. */
void
sandbox_process_log_output_locked (SandboxProcess      *self,
                                   SandboxOutputStream  stream,
                                   const guint8        *data,
                                   gsize                length)
{
  SandboxProcessPrivate *priv = sandbox_process_get_private (self);

  if (priv->completed)
    return;
  sandbox_output_log_append (&priv->log, data, length);
  sandbox_process_queue_output_locked (self, stream, data, length);
}

/*
 * sandbox_process_make_background:
 * @self: a process the session just spawned
 * @id: the id the session lists it under
 * @command: what it runs
 * @capacity: how many bytes of its output the log keeps
 * @clock: the session's idle clock, which reading its output and
 *   signalling it set
 *
 * From now on the output goes to a log of @capacity bytes (half its head,
 * half its tail). What came before, in the moment between the spawn and
 * this call, moves there first, stdout then stderr.
 */
void
sandbox_process_make_background (SandboxProcess *self,
                                 const char     *id,
                                 SandboxCommand   *command,
                                 gsize             capacity,
                                 SandboxIdleClock *clock)
{
  SandboxProcessPrivate *priv = sandbox_process_get_private (self);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  const char * const *args = sandbox_command_get_args (command);

  g_ptr_array_add (argv, g_strdup (sandbox_command_get_executable (command)));
  for (guint i = 0; args != NULL && args[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (args[i]));
  g_ptr_array_add (argv, NULL);

  g_mutex_lock (&priv->mutex);
  priv->background = TRUE;
  priv->background_id = g_strdup (id);
  priv->idle_clock = sandbox_idle_clock_ref (clock);
  priv->argv = (char **) g_ptr_array_free (g_steal_pointer (&argv), FALSE);
  priv->start_time = g_date_time_new_now_utc ();
  sandbox_output_log_init (&priv->log, capacity);
  sandbox_output_log_append (&priv->log, priv->stdout_buffer->data, priv->stdout_buffer->len);
  sandbox_output_log_append (&priv->log, priv->stderr_buffer->data, priv->stderr_buffer->len);
  g_byte_array_set_size (priv->stdout_buffer, 0);
  g_byte_array_set_size (priv->stderr_buffer, 0);
  g_mutex_unlock (&priv->mutex);
}

/**
 * sandbox_process_get_background_id:
 * @self: a [class@Sandbox.Process]
 *
 * The id of a background command, which
 * [method@Sandbox.Session.lookup_background] finds it by.
 *
 * Returns: (nullable): the id, or %NULL for a command that is not a
 *   background one
 */
const char *
sandbox_process_get_background_id (SandboxProcess *self)
{
  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), NULL);

  /* Set once, before the process is handed out. */
  return sandbox_process_get_private (self)->background_id;
}

/**
 * sandbox_process_get_argv:
 * @self: a background [class@Sandbox.Process]
 *
 * What a background command runs: its executable, then its arguments.
 *
 * Returns: (transfer none) (array zero-terminated=1) (nullable): the
 *   command line, or %NULL for a command that is not a background one
 */
const char * const *
sandbox_process_get_argv (SandboxProcess *self)
{
  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), NULL);

  return (const char * const *) sandbox_process_get_private (self)->argv;
}

/**
 * sandbox_process_get_start_time:
 * @self: a background [class@Sandbox.Process]
 *
 * When a background command was started.
 *
 * Returns: (transfer none) (nullable): the time, in UTC, or %NULL for a
 *   command that is not a background one
 */
GDateTime *
sandbox_process_get_start_time (SandboxProcess *self)
{
  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), NULL);

  return sandbox_process_get_private (self)->start_time;
}

/**
 * sandbox_process_read_output:
 * @self: a background [class@Sandbox.Process]
 * @from: the position to read from: 0 for its beginning, else a @next
 *   an earlier call gave
 * @next: (out) (optional): where the next read starts
 * @skipped: (out) (optional): how many bytes from @from on were dropped
 *   (the log keeps the head and the tail of the output)
 *
 * Reads a background command's output, both streams in the order they
 * came, from position @from (bytes written before it), while it runs and
 * after it ended. Reading from 0 and then from each @next sees every byte
 * kept exactly once; a read that reaches the dropped middle says how much
 * was dropped in @skipped and goes on with the tail. New output is
 * announced by [signal@Sandbox.Process::stdout-data] and
 * [signal@Sandbox.Process::stderr-data] as for any command.
 *
 * Returns: (transfer full): the bytes (none when nothing new came)
 */
GBytes *
sandbox_process_read_output (SandboxProcess *self,
                             guint64         from,
                             guint64        *next,
                             guint64        *skipped)
{
  SandboxProcessPrivate *priv;
  guint64 next_position = 0, skipped_bytes = 0;
  GBytes *bytes;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), NULL);
  priv = sandbox_process_get_private (self);
  g_return_val_if_fail (priv->background, NULL);

  sandbox_idle_clock_note (priv->idle_clock);
  g_mutex_lock (&priv->mutex);
  bytes = sandbox_output_log_read (&priv->log, from, &next_position, &skipped_bytes);
  g_mutex_unlock (&priv->mutex);
  if (next != NULL)
    *next = next_position;
  if (skipped != NULL)
    *skipped = skipped_bytes;
  return bytes;
}
