/* test-terminal.c — commands on a terminal, and signals, against real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A real bash on the terminal the stub makes inside the sandbox, driven
 * as a person at a keyboard would: keys typed on the process's stdin
 * stream, the screen read from its output. The prompt, job control (a job
 * in the background, brought back and interrupted with Ctrl-C), a resize
 * that `stty size` and a WINCH trap see, vi and less leaving cleanly, a
 * Python REPL fed line by line, end of file typed as Ctrl-D, a flood
 * capped. Signals reach a command's own process through the pidfd the
 * stub hands over, cold and in a ready sandbox, even when sent before it
 * started.
 *
 * The attacks: the guest's terminal is its own sandbox's, never the
 * host's or another session's (their devpts instances are disjoint: to
 * see it fail, make the stub open /dev/ptmx of a shared devpts — there is
 * none to share in bwrap's --dev, which is the defence); TIOCSTI and
 * TIOCLINUX are refused by the seccomp filter (to see it fail, remove the
 * two DENY_IF lines in sandbox-bubblewrap-seccomp.c: the injected byte
 * then shows up as typed input); and the guest holds no descriptor of the
 * terminal's master side (to see it fail, leave the master open in the
 * stub after the handoff: /proc/self/fd then shows a ptmx).
 *
 * Run as root and, through run-unprivileged.sh, as an unprivileged user.
 */

#include <signal.h>
#include <string.h>

#include <sandbox.h>

#include "sandbox-test-fixture.h"

#define SCREEN_WAIT_SECONDS 20

typedef struct
{
  SandboxProcess *process;
  GString *screen;
} Terminal;

static void
screen_cb (SandboxProcess *process,
           GBytes         *data,
           gpointer        user_data)
{
  Terminal *terminal = user_data;
  gsize size;
  const char *bytes = g_bytes_get_data (data, &size);

  g_string_append_len (terminal->screen, bytes, size);
}

static Terminal *
terminal_spawn (SandboxSession *session,
                const char     *executable,
                const char     *script)
{
  const char *args[] = { "-c", script, NULL };
  g_autoptr(SandboxCommand) command = sandbox_command_new (executable);
  g_autoptr(GError) error = NULL;
  Terminal *terminal = g_new0 (Terminal, 1);

  if (script != NULL)
    sandbox_command_set_args (command, args);
  sandbox_command_set_terminal (command, TRUE);
  sandbox_command_set_terminal_size (command, 30, 100);
  /* A wrapper that is not bash: a non-interactive bash unsets PS1. */
  sandbox_command_setenv (command, "PS1", "READY> ");
  terminal->process = sandbox_session_spawn (session, command, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_process_has_terminal (terminal->process));
  g_assert_nonnull (sandbox_process_get_stdin_stream (terminal->process));
  terminal->screen = g_string_new (NULL);
  g_signal_connect (terminal->process, "stdout-data", G_CALLBACK (screen_cb), terminal);
  return terminal;
}

static void
terminal_free (Terminal *terminal)
{
  g_signal_handlers_disconnect_by_data (terminal->process, terminal);
  g_object_unref (terminal->process);
  g_string_free (terminal->screen, TRUE);
  g_free (terminal);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Terminal, terminal_free)

/* Waits until the screen shows @text after what was seen before; what was
 * seen up to its end is then consumed. */
static void
terminal_expect (Terminal   *terminal,
                 const char *text)
{
  gint64 until = g_get_monotonic_time () + SCREEN_WAIT_SECONDS * G_USEC_PER_SEC;
  const char *found;

  while ((found = strstr (terminal->screen->str, text)) == NULL &&
         g_get_monotonic_time () < until)
    if (!g_main_context_iteration (NULL, FALSE))
      g_usleep (1000);
  if (found == NULL)
    g_error ("the terminal never showed “%s”; it shows:\n%s", text, terminal->screen->str);
  g_string_erase (terminal->screen, 0, (found - terminal->screen->str) + strlen (text));
}

static void
terminal_type (Terminal   *terminal,
               const char *keys)
{
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all (sandbox_process_get_stdin_stream (terminal->process),
                             keys, strlen (keys), NULL, NULL, &error);
  g_assert_no_error (error);
}

static SandboxResult *
terminal_wait (Terminal *terminal)
{
  g_autoptr(GError) error = NULL;
  SandboxResult *result = sandbox_process_wait (terminal->process, NULL, &error);

  g_assert_no_error (error);
  return result;
}

static void
test_bash_job_control (SandboxTestFixture *f,
                       gconstpointer       data)
{
  g_autoptr(Terminal) bash = terminal_spawn (f->session, "/bin/sh",
                                             "exec /bin/bash --norc --noprofile -i");
  g_autoptr(SandboxResult) result = NULL;

  terminal_expect (bash, "READY> ");
  terminal_type (bash, "tty; echo \"term=$TERM\"\r");
  terminal_expect (bash, "/dev/pts/0\r\nterm=xterm-256color\r\n");
  terminal_expect (bash, "READY> ");
  terminal_type (bash, "sleep 100 &\r");
  terminal_expect (bash, "READY> ");
  terminal_type (bash, "jobs\r");
  terminal_expect (bash, "Running");
  terminal_expect (bash, "READY> ");
  terminal_type (bash, "fg\r");
  terminal_expect (bash, "sleep 100");
  g_usleep (200 * 1000);
  terminal_type (bash, "\003");   /* Ctrl-C reaches the foreground job */
  terminal_expect (bash, "READY> ");
  terminal_type (bash, "echo \"status=$?\"\r");
  terminal_expect (bash, "status=130");
  terminal_type (bash, "exit 7\r");
  result = terminal_wait (bash);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 7);
  g_assert_cmpuint (g_bytes_get_size (sandbox_result_get_stderr_bytes (result)), ==, 0);
}

static void
test_resize (SandboxTestFixture *f,
             gconstpointer       data)
{
  g_autoptr(Terminal) bash = terminal_spawn (f->session, "/bin/sh",
                                             "exec /bin/bash --norc --noprofile -i");
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  terminal_expect (bash, "READY> ");
  terminal_type (bash, "stty size\r");
  terminal_expect (bash, "30 100\r\n");
  terminal_expect (bash, "READY> ");
  terminal_type (bash, "trap 'echo winched' WINCH; sleep 1\r");
  g_usleep (300 * 1000);
  g_assert_true (sandbox_process_resize_terminal (bash->process, 50, 132, &error));
  g_assert_no_error (error);
  terminal_expect (bash, "winched");
  terminal_expect (bash, "READY> ");
  terminal_type (bash, "stty size\r");
  terminal_expect (bash, "50 132\r\n");

  g_assert_false (sandbox_process_resize_terminal (bash->process, 0, 80, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (sandbox_process_resize_terminal (bash->process, 24, 70000, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  terminal_type (bash, "exit\r");
  result = terminal_wait (bash);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  g_assert_false (sandbox_process_resize_terminal (bash->process, 24, 80, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
}

/* Full-screen programs leave the way they are told to. */
static void
test_vi_and_less (SandboxTestFixture *f,
                  gconstpointer       data)
{
  g_autoptr(Terminal) vi = terminal_spawn (f->session, "/bin/sh",
                                           "exec vi -u NONE -N hello.txt");
  g_autoptr(Terminal) less = NULL;
  g_autoptr(SandboxResult) result = NULL;

  terminal_expect (vi, "hello");
  terminal_type (vi, "\033:q!\r");
  result = terminal_wait (vi);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  g_clear_object (&result);

  less = terminal_spawn (f->session, "/bin/sh", "exec less hello.txt");
  terminal_expect (less, "hello");
  terminal_type (less, "q");
  result = terminal_wait (less);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
}

/* A REPL kept across calls: each line's answer is read before the next. */
static void
test_python_repl (SandboxTestFixture *f,
                  gconstpointer       data)
{
  g_autoptr(Terminal) python = terminal_spawn (f->session, "/usr/bin/python3", NULL);
  g_autoptr(SandboxResult) result = NULL;

  terminal_expect (python, ">>> ");
  terminal_type (python, "x = 40\r");
  terminal_expect (python, ">>> ");
  terminal_type (python, "x += 2\r");
  terminal_expect (python, ">>> ");
  terminal_type (python, "print('x is', x)\r");
  terminal_expect (python, "x is 42\r\n");
  terminal_expect (python, ">>> ");
  /* Closing the input types Ctrl-D: the REPL's end of file. */
  g_output_stream_close (sandbox_process_get_stdin_stream (python->process), NULL, NULL);
  result = terminal_wait (python);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
}

static void
test_output_capped (SandboxTestFixture *f,
                    gconstpointer       data)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/yes");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_command_set_terminal (command, TRUE);
  sandbox_command_set_max_output_bytes (command, 65536);
  process = sandbox_session_spawn (f->session, command, NULL, &error);
  g_assert_no_error (error);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
}

/* The guest's terminal: the sandbox's own devpts, with nothing in it but
 * its own terminal, though another session runs one at the same time; no
 * descriptor of the master side; TIOCSTI and TIOCLINUX refused. */
static void
test_terminal_is_the_sandboxs_own (SandboxTestFixture *f,
                                   gconstpointer       data)
{
  g_autoptr(SandboxHandle) other = sandbox_test_create_session (f->backend, f->template_key);
  g_autoptr(Terminal) neighbour = terminal_spawn (sandbox_handle_get_session (other), "/bin/sh",
                                                  "echo neighbour-up; exec sleep 60");
  g_autoptr(Terminal) guest = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  terminal_expect (neighbour, "neighbour-up");
  guest = terminal_spawn (f->session, "/usr/bin/python3",
                          "import fcntl, os, termios\n"
                          "print('pts', sorted(os.listdir('/dev/pts')))\n"
                          "fds = ['/proc/self/fd/' + n for n in os.listdir('/proc/self/fd')]\n"
                          "print('fds', sorted(os.readlink(p) for p in fds if os.path.exists(p)))\n"
                          "for name, request in (('TIOCSTI', termios.TIOCSTI),\n"
                          "                      ('TIOCLINUX', getattr(termios, 'TIOCLINUX', 0x541C))):\n"
                          "    try:\n"
                          "        fcntl.ioctl(0, request, b'\\x0c' if name == 'TIOCLINUX' else b'Z')\n"
                          "        print(name, 'allowed')\n"
                          "    except OSError as e:\n"
                          "        print(name, 'refused', e.errno)\n"
                          "print('done')\n");
  terminal_expect (guest, "pts ['0', 'ptmx']");
  terminal_expect (guest, "fds ['/dev/pts/0', '/dev/pts/0', '/dev/pts/0']");
  terminal_expect (guest, "TIOCSTI refused 1");
  terminal_expect (guest, "TIOCLINUX refused 1");
  terminal_expect (guest, "done");
  result = terminal_wait (guest);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  /* Nothing typed by the ioctl, so nothing echoed after the output. */
  g_assert_null (strchr (guest->screen->str, 'Z'));

  g_assert_true (sandbox_process_stop (neighbour->process, NULL, &error));
  g_assert_no_error (error);
  sandbox_test_delete_session (other);
}

/* A daemon keeping the terminal open after the command exits does not keep
 * the command from ending: the sandbox's init ends it, and with it the last
 * holder of the terminal. (Waiting for the terminal's EIO without the
 * stub's report would hang here until the deadline.) */
static void
test_daemon_keeping_the_terminal (SandboxTestFixture *f,
                                  gconstpointer       data)
{
  for (int round = 0; round < 2; round++)
    {
      g_autoptr(Terminal) shell = terminal_spawn (f->session, "/bin/sh",
                                                  "setsid sh -c 'sleep 300' </dev/tty >/dev/tty 2>&1 & "
                                                  "echo left-behind");
      g_autoptr(SandboxResult) result = NULL;
      gint64 started = g_get_monotonic_time ();

      result = terminal_wait (shell);
      g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
      g_assert_cmpint (g_get_monotonic_time () - started, <, 20 * G_USEC_PER_SEC);
      terminal_expect (shell, "left-behind");
    }
}

static void
test_signals (SandboxTestFixture *f,
              gconstpointer       data)
{
  /* Cold, then from the session's ready sandbox; the first signal goes
   * before the guest can have started. */
  for (int round = 0; round < 3; round++)
    {
      const char *args[] = { "-c", "trap 'echo got-usr1' USR1; sleep 30 & wait; "
                                   "sleep 30 & wait", NULL };
      g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sh");
      g_autoptr(SandboxProcess) process = NULL;
      g_autoptr(SandboxResult) result = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *out = NULL;

      sandbox_command_set_args (command, args);
      process = sandbox_session_spawn (f->session, command, NULL, &error);
      g_assert_no_error (error);
      if (round == 0)
        {
          g_assert_true (sandbox_process_send_signal (process, SIGTERM, &error));
          g_assert_no_error (error);
        }
      else
        {
          g_usleep (300 * 1000);
          g_assert_true (sandbox_process_send_signal (process, SIGUSR1, &error));
          g_assert_no_error (error);
          g_usleep (300 * 1000);
          g_assert_true (sandbox_process_send_signal (process, SIGTERM, &error));
          g_assert_no_error (error);
        }
      result = sandbox_process_wait (process, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 128 + SIGTERM);
      out = sandbox_result_dup_stdout_text (result);
      g_assert_cmpstr (out, ==, round == 0 ? "" : "got-usr1\n");

      g_assert_false (sandbox_process_send_signal (process, SIGTERM, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
      g_clear_error (&error);
      g_assert_false (sandbox_process_send_signal (process, 0, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_clear_error (&error);
      g_assert_false (sandbox_process_send_signal (process, 4096, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
    }
}

static void
test_terminal_refuses_stdin_bytes (SandboxTestFixture *f,
                                   gconstpointer       data)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/cat");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) process = NULL;

  sandbox_command_set_terminal (command, TRUE);
  sandbox_command_set_stdin (command, bytes);
  process = sandbox_session_spawn (f->session, command, NULL, &error);
  g_assert_null (process);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  sandbox_command_set_stdin (command, NULL);
  sandbox_command_set_terminal_type (command, "../../etc/passwd");
  process = sandbox_session_spawn (f->session, command, NULL, &error);
  g_assert_null (process);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/bubblewrap/terminal/" path, SandboxTestFixture, "bubblewrap", \
              sandbox_test_fixture_set_up_session, func, sandbox_test_fixture_tear_down)
  ADD ("bash-job-control", test_bash_job_control);
  ADD ("resize", test_resize);
  ADD ("vi-and-less", test_vi_and_less);
  ADD ("python-repl", test_python_repl);
  ADD ("output-capped", test_output_capped);
  ADD ("own-devpts-no-tiocsti", test_terminal_is_the_sandboxs_own);
  ADD ("signals", test_signals);
  ADD ("daemon-keeping-the-terminal", test_daemon_keeping_the_terminal);
  ADD ("refuses-stdin-bytes", test_terminal_refuses_stdin_bytes);
#undef ADD

  return g_test_run ();
}
