/* sandbox-process-live.c — reaching a running command: signals and its terminal
 *
 * The checks every driver would repeat (the command still runs, the
 * signal is one, the command has a terminal, the size fits one) are made
 * here once; the driver's vfuncs only act.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <signal.h>

#include "sandbox-error.h"
#include "sandbox-process-state-private.h"

static gboolean
check_running (SandboxProcess  *self,
               const char      *what,
               GError         **error)
{
  if (!sandbox_process_is_finished (self))
    return TRUE;
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
               "Cannot %s: the command is over", what);
  return FALSE;
}

/**
 * sandbox_process_send_signal:
 * @self: a [class@Sandbox.Process]
 * @signum: a signal number, such as `SIGINT` or `SIGTERM`
 * @error: return location for a #GError
 *
 * Sends @signum to the command's own process (the program the command
 * executed, not what it started: a shell's jobs get it only if the shell
 * passes it on). On a terminal, typing the interrupt character (`"\x03"`,
 * Ctrl-C) on [method@Sandbox.Process.get_stdin_stream] reaches the
 * foreground job instead, as a keyboard does. A signal sent before the
 * command's process exists reaches it as it starts.
 *
 * Returns: %TRUE once sent; %FALSE with %SANDBOX_ERROR_INVALID for a
 *   number that is no signal, %SANDBOX_ERROR_STOPPED once the command is
 *   over, %G_IO_ERROR_NOT_SUPPORTED when the backend cannot signal its
 *   commands
 */
gboolean
sandbox_process_send_signal (SandboxProcess  *self,
                             int              signum,
                             GError         **error)
{
  SandboxProcessClass *klass;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (signum <= 0 || signum >= NSIG)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%d is not a signal number (1 to %d)", signum, NSIG - 1);
      return FALSE;
    }
  if (!check_running (self, "send a signal", error))
    return FALSE;
  sandbox_idle_clock_note (sandbox_process_get_private (self)->idle_clock);
  klass = SANDBOX_PROCESS_GET_CLASS (self);
  if (klass->send_signal == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "This backend cannot send signals to its commands");
      return FALSE;
    }
  return klass->send_signal (self, signum, error);
}

/**
 * sandbox_process_has_terminal:
 * @self: a [class@Sandbox.Process]
 *
 * Whether the command runs on a terminal (see
 * [property@Sandbox.Command:terminal]).
 *
 * Returns: %TRUE when it does
 */
gboolean
sandbox_process_has_terminal (SandboxProcess *self)
{
  SandboxProcessPrivate *priv;
  gboolean terminal;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), FALSE);

  priv = sandbox_process_get_private (self);
  g_mutex_lock (&priv->mutex);
  terminal = priv->terminal;
  g_mutex_unlock (&priv->mutex);
  return terminal;
}

/**
 * sandbox_process_resize_terminal:
 * @self: a [class@Sandbox.Process] with a terminal
 * @rows: the new height, 1 … 65535
 * @columns: the new width, 1 … 65535
 * @error: return location for a #GError
 *
 * Resizes the command's terminal, as a terminal window does: the
 * terminal's foreground job gets `SIGWINCH` and `stty size` shows the new
 * size.
 *
 * Returns: %TRUE once asked; %FALSE with %SANDBOX_ERROR_INVALID without a
 *   terminal or for a size out of range, %SANDBOX_ERROR_STOPPED once the
 *   command is over
 */
gboolean
sandbox_process_resize_terminal (SandboxProcess  *self,
                                 guint            rows,
                                 guint            columns,
                                 GError         **error)
{
  SandboxProcessClass *klass;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  klass = SANDBOX_PROCESS_GET_CLASS (self);
  if (!sandbox_process_has_terminal (self) || klass->resize_terminal == NULL)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "Cannot resize the terminal: the command has none");
      return FALSE;
    }
  if (rows == 0 || rows > G_MAXUINT16 || columns == 0 || columns > G_MAXUINT16)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Cannot resize the terminal to %u×%u: rows and columns are 1 to 65535",
                   rows, columns);
      return FALSE;
    }
  if (!check_running (self, "resize the terminal", error))
    return FALSE;
  klass->resize_terminal (self, rows, columns);
  return TRUE;
}

/**
 * sandbox_process_open_terminal:
 * @self: a [class@Sandbox.Process]
 * @error: return location for a #GError
 *
 * For drivers, while spawning a command whose
 * [property@Sandbox.Command:terminal] is set, before the process is
 * returned to the consumer: the process has a terminal from now on, and
 * its stdin stream is what is typed on it. As
 * [method@Sandbox.Process.open_stdin_stream], whose descriptor it returns; the
 * driver writes what it reads there to the terminal, and types the
 * terminal's end-of-file character once the consumer closed the stream.
 * The driver implements [struct@Sandbox.ProcessClass].resize_terminal and passes
 * what the terminal shows as standard output.
 *
 * Returns: the driver's descriptor, or -1 with %SANDBOX_ERROR_UNAVAILABLE
 */
int
sandbox_process_open_terminal (SandboxProcess  *self,
                               GError         **error)
{
  SandboxProcessPrivate *priv;
  int reader;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), -1);

  reader = sandbox_process_open_stdin_stream (self, error);
  if (reader < 0)
    return -1;
  priv = sandbox_process_get_private (self);
  g_mutex_lock (&priv->mutex);
  priv->terminal = TRUE;
  g_mutex_unlock (&priv->mutex);
  return reader;
}
