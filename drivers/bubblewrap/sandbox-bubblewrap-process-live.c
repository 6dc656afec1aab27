/* sandbox-bubblewrap-process-live.c — a command's terminal and its signals
 *
 * Both come from the stub on the handoff socket
 * (sandbox-bubblewrap-process-handoff.c): the master side of the terminal
 * its `terminal=` step made inside the sandbox, and a pidfd of the guest
 * once it is spawned. The terminal is the command's output (read like its
 * pipes, to EIO: no side of it is left open once the sandbox is empty)
 * and its input (the stdin stream's relay writes into it). Resizing and
 * signalling come from any thread: they use copies of the descriptors kept
 * under the process's lock, and what is asked before the stub handed them
 * over is applied when it does.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox-bubblewrap-process-fields-private.h"

static gboolean
terminal_cb (int          fd,
             GIOCondition condition,
             gpointer     data)
{
  SandboxBubblewrapProcess *self = data;

  return sandbox_bubblewrap_process_read_output (self, SANDBOX_OUTPUT_STDOUT,
                                                 &self->terminal_fd, &self->terminal_source);
}

static void
resize_locked (SandboxBubblewrapProcess *self)
{
  struct winsize size = { .ws_row = self->terminal_rows, .ws_col = self->terminal_columns };

  if (self->terminal_control_fd >= 0 && self->terminal_rows != 0)
    ioctl (self->terminal_control_fd, TIOCSWINSZ, &size);
}

/**
 * sandbox_bubblewrap_process_take_terminal:
 * @self: a launched process whose command asked for a terminal
 * @master: (transfer full): the terminal's master side
 *
 * The command's output is read from @master from now on, and its input
 * written there. Launcher thread.
 */
void
sandbox_bubblewrap_process_take_terminal (SandboxBubblewrapProcess *self,
                                          int                       master)
{
  int control = fcntl (master, F_DUPFD_CLOEXEC, 3);

  fcntl (master, F_SETFL, O_NONBLOCK);
  self->terminal_fd = master;
  self->terminal_source = sandbox_bubblewrap_process_watch_fd (self, master,
                                                               G_IO_IN | G_IO_HUP | G_IO_ERR,
                                                               terminal_cb,
                                                               "[sandbox] command terminal");
  g_mutex_lock (&self->lock);
  self->terminal_control_fd = control;
  resize_locked (self);
  g_mutex_unlock (&self->lock);
  sandbox_bubblewrap_process_stdin_to_terminal (self);
}

/**
 * sandbox_bubblewrap_process_drain_terminal:
 * @self: a process whose sandbox is empty
 *
 * Reads what the terminal still holds and closes it: with the sandbox
 * empty, no side of it is open but ours. Takes a terminal still waiting in
 * the handoff socket first. Launcher thread.
 */
void
sandbox_bubblewrap_process_drain_terminal (SandboxBubblewrapProcess *self)
{
  sandbox_bubblewrap_process_receive_handoffs (self);
  sandbox_bubblewrap_process_drain_output (self, SANDBOX_OUTPUT_STDOUT,
                                           &self->terminal_fd, &self->terminal_source);
}

/**
 * sandbox_bubblewrap_process_type_eof:
 * @self: a process with a terminal
 *
 * Types the terminal's end-of-file character, as Ctrl-D does: a program
 * reading a line then reads end of file. Launcher thread.
 */
void
sandbox_bubblewrap_process_type_eof (SandboxBubblewrapProcess *self)
{
  struct termios modes;
  char eof = 4;   /* ^D, unless the guest chose another */

  if (self->terminal_fd < 0)
    return;
  if (tcgetattr (self->terminal_fd, &modes) == 0 && modes.c_cc[VEOF] != _POSIX_VDISABLE)
    eof = (char) modes.c_cc[VEOF];
  (void) ! write (self->terminal_fd, &eof, 1);
}

static void
deliver_pending_signals_locked (SandboxBubblewrapProcess *self)
{
  for (int signum = 1; signum < NSIG && self->pending_signals != 0; signum++)
    if (self->pending_signals & (G_GUINT64_CONSTANT (1) << (signum - 1)))
      {
        self->pending_signals &= ~(G_GUINT64_CONSTANT (1) << (signum - 1));
        pidfd_send_signal (self->guest_pidfd, signum, NULL, 0);
      }
}

/**
 * sandbox_bubblewrap_process_take_guest:
 * @self: a launched process
 * @pidfd: (transfer full): a pidfd of its guest
 *
 * Signals reach the guest through @pidfd from now on; those sent before
 * are delivered now. A second one is refused. Launcher thread.
 */
void
sandbox_bubblewrap_process_take_guest (SandboxBubblewrapProcess *self,
                                       int                       pidfd)
{
  g_mutex_lock (&self->lock);
  if (self->guest_pidfd < 0)
    {
      self->guest_pidfd = pidfd;
      deliver_pending_signals_locked (self);
      pidfd = -1;
    }
  g_mutex_unlock (&self->lock);
  sandbox_bubblewrap_clear_fd (&pidfd);
}

/**
 * sandbox_bubblewrap_process_close_live:
 * @self: a process
 *
 * Closes its terminal and the guest's pidfd: the command is over.
 */
void
sandbox_bubblewrap_process_close_live (SandboxBubblewrapProcess *self)
{
  sandbox_bubblewrap_source_destroy (&self->terminal_source);
  sandbox_bubblewrap_clear_fd (&self->terminal_fd);
  g_mutex_lock (&self->lock);
  sandbox_bubblewrap_clear_fd (&self->terminal_control_fd);
  sandbox_bubblewrap_clear_fd (&self->guest_pidfd);
  self->pending_signals = 0;
  g_mutex_unlock (&self->lock);
}

/* SandboxProcessClass.send_signal: the core checked @signum and that the
 * command runs. A guest not spawned yet gets it once it is. */
gboolean
sandbox_bubblewrap_process_send_signal (SandboxProcess  *process,
                                        int              signum,
                                        GError         **error)
{
  SandboxBubblewrapProcess *self = SANDBOX_BUBBLEWRAP_PROCESS (process);
  gboolean sent = TRUE;
  int saved_errno = 0;

  g_mutex_lock (&self->lock);
  if (self->guest_pidfd >= 0)
    {
      sent = pidfd_send_signal (self->guest_pidfd, signum, NULL, 0) == 0;
      saved_errno = errno;
    }
  else if (!self->finished)
    self->pending_signals |= G_GUINT64_CONSTANT (1) << (signum - 1);
  g_mutex_unlock (&self->lock);

  if (sent)
    return TRUE;
  if (saved_errno == ESRCH)
    g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                         "Cannot send a signal: the command's process has exited");
  else
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                 "Cannot send a signal to the command: %s", g_strerror (saved_errno));
  return FALSE;
}

/* SandboxProcessClass.resize_terminal: the core checked the size. */
void
sandbox_bubblewrap_process_resize_terminal (SandboxProcess *process,
                                            guint           rows,
                                            guint           columns)
{
  SandboxBubblewrapProcess *self = SANDBOX_BUBBLEWRAP_PROCESS (process);

  g_mutex_lock (&self->lock);
  self->terminal_rows = rows;
  self->terminal_columns = columns;
  resize_locked (self);
  g_mutex_unlock (&self->lock);
}
