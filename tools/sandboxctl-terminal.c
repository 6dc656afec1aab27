/* sandboxctl-terminal.c — `run -t` and `shell`: our terminal relayed to the command's
 *
 * The command's terminal is made inside its sandbox; ours is never handed
 * to it. We only relay bytes: what is typed here goes to the command's
 * stdin stream, what it shows comes back as its output, and a window
 * change here (SIGWINCH) resizes its terminal. While it runs, our terminal
 * is in raw mode, so every key (Ctrl-C and Ctrl-Z included) reaches the
 * command's terminal as a byte, to do there what it would at a console;
 * the mode is restored however the command ends. A terminal-control
 * sequence the command prints reaches our terminal as any program's
 * output would; nothing it does can type into ours (TIOCSTI on its own
 * terminal is refused in the sandbox, and would reach only that one).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <glib-unix.h>

#include "sandboxctl.h"

struct _SandboxctlTerminal
{
  SandboxProcess *process;
  struct termios saved;
  gboolean raw;
  guint winch_source;
};

/* Our terminal's size, or the defaults when stdin is no terminal. */
static void
our_size (guint *rows,
          guint *columns)
{
  struct winsize size = { 0 };

  *rows = SANDBOX_COMMAND_DEFAULT_TERMINAL_ROWS;
  *columns = SANDBOX_COMMAND_DEFAULT_TERMINAL_COLUMNS;
  if (ioctl (STDIN_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_row > 0 && size.ws_col > 0)
    {
      *rows = size.ws_row;
      *columns = size.ws_col;
    }
}

/**
 * sandboxctl_terminal_prepare:
 * @command: the command to run
 *
 * Asks for a terminal of our terminal's size and type (`TERM`, when set).
 * Whether that type is one a command accepts is the library's to say:
 * sandbox_command_validate() refuses a malformed one, with the reason run
 * reports, rather than a copy of its rule here that could drift.
 */
void
sandboxctl_terminal_prepare (SandboxCommand *command)
{
  const char *type = g_getenv ("TERM");
  guint rows, columns;

  our_size (&rows, &columns);
  sandbox_command_set_terminal (command, TRUE);
  sandbox_command_set_terminal_size (command, rows, columns);
  /* An empty TERM is no type at all: the default is kept. */
  if (type != NULL && type[0] != '\0')
    sandbox_command_set_terminal_type (command, type);
}

static gboolean
on_window_changed (gpointer data)
{
  SandboxctlTerminal *terminal = data;
  g_autoptr(GError) error = NULL;
  guint rows, columns;

  our_size (&rows, &columns);
  if (!sandbox_process_resize_terminal (terminal->process, rows, columns, &error))
    g_debug ("Could not resize the command's terminal: %s", error->message);
  return G_SOURCE_CONTINUE;
}

/**
 * sandboxctl_terminal_attach:
 * @process: a command running on a terminal
 *
 * Puts our terminal (if stdin is one) in raw mode and follows its size.
 *
 * Returns: (transfer full): what sandboxctl_terminal_detach() undoes
 */
SandboxctlTerminal *
sandboxctl_terminal_attach (SandboxProcess *process)
{
  SandboxctlTerminal *terminal = g_new0 (SandboxctlTerminal, 1);

  terminal->process = g_object_ref (process);
  if (isatty (STDIN_FILENO) && tcgetattr (STDIN_FILENO, &terminal->saved) == 0)
    {
      struct termios raw = terminal->saved;

      cfmakeraw (&raw);
      terminal->raw = tcsetattr (STDIN_FILENO, TCSADRAIN, &raw) == 0;
      terminal->winch_source = g_unix_signal_add (SIGWINCH, on_window_changed, terminal);
    }
  return terminal;
}

/**
 * sandboxctl_terminal_detach:
 * @terminal: (transfer full): from sandboxctl_terminal_attach()
 *
 * Gives our terminal back its mode.
 */
void
sandboxctl_terminal_detach (SandboxctlTerminal *terminal)
{
  if (terminal->raw)
    tcsetattr (STDIN_FILENO, TCSADRAIN, &terminal->saved);
  g_clear_handle_id (&terminal->winch_source, g_source_remove);
  g_object_unref (terminal->process);
  g_free (terminal);
}
