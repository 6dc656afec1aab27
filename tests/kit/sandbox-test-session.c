/* sandbox-test-session.c — running commands in a test's sessions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox-test-session.h"

/**
 * sandbox_test_command_newv:
 * @argv: the program, then its arguments, %NULL-terminated
 *
 * Returns: (transfer full): a command running @argv
 */
SandboxCommand *
sandbox_test_command_newv (const char * const *argv)
{
  SandboxCommand *command = sandbox_command_new (argv[0]);

  for (guint i = 1; argv[i] != NULL; i++)
    sandbox_command_add_arg (command, argv[i]);
  return command;
}

/**
 * sandbox_test_run:
 * @command: (transfer full): the command, taken (tests build them inline)
 *
 * Returns: (transfer full) (nullable): sandbox_session_run()'s result
 */
SandboxResult *
sandbox_test_run (SandboxSession  *session,
                  SandboxCommand  *command,
                  GError         **error)
{
  g_autoptr(SandboxCommand) owned = command;

  return sandbox_session_run (session, owned, NULL, error);
}

/**
 * sandbox_test_spawn:
 * @command: (transfer full): the command, taken (tests build them inline)
 *
 * Returns: (transfer full) (nullable): sandbox_session_spawn()'s process
 */
SandboxProcess *
sandbox_test_spawn (SandboxSession  *session,
                    SandboxCommand  *command,
                    GCancellable    *cancellable,
                    GError         **error)
{
  g_autoptr(SandboxCommand) owned = command;

  return sandbox_session_spawn (session, owned, cancellable, error);
}

/**
 * sandbox_test_guest_sh:
 * @script: a /usr/bin/sh script
 *
 * Runs @script in the guest; fails the test, with its stderr, unless it
 * exits 0.
 *
 * Returns: (transfer full): its stdout
 */
char *
sandbox_test_guest_sh (SandboxSession *session,
                       const char     *script)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result =
    sandbox_test_run (session, SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c", script), &error);

  g_assert_no_error (error);
  if (sandbox_result_get_exit_status (result) != 0)
    {
      g_autofree char *err = sandbox_result_dup_stderr_text (result);

      g_error ("guest script failed (%d): %s\n%s", sandbox_result_get_exit_status (result),
               script, err);
    }
  return sandbox_result_dup_stdout_text (result);
}

/**
 * sandbox_test_guest_status:
 * @script: a /usr/bin/sh script
 *
 * Returns: @script's exit status in the guest (the run itself must work)
 */
int
sandbox_test_guest_status (SandboxSession *session,
                           const char     *script)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result =
    sandbox_test_run (session, SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c", script), &error);

  g_assert_no_error (error);
  return sandbox_result_get_exit_status (result);
}

/* A guest that daemonizes: setsid, double fork, SIGTERM ignored, stdio
 * closed, its command line marked "<token>-daemon". */
static const char daemon_script[] =
  "token=\"$1\"\n"
  "trap '' TERM HUP INT\n"
  "( setsid /usr/bin/sh -c 'trap \"\" TERM HUP INT; while :; do /usr/bin/sleep 1; done' "
  "\"$token-daemon\" </dev/null >/dev/null 2>&1 & ) &\n"
  "echo started\n"
  "while :; do /usr/bin/sleep 1; done\n";

/**
 * sandbox_test_daemon_command:
 * @token: what its command line is marked with (sandbox_test_unique_token())
 *
 * Writes daemon.sh into the session's workspace.
 *
 * Returns: (transfer full): a command running it, which prints "started"
 *   once its daemon is on its way and then waits forever
 */
SandboxCommand *
sandbox_test_daemon_command (SandboxSession *session,
                             const char     *token)
{
  g_autoptr(GError) error = NULL;

  sandbox_session_write_text (session, "daemon.sh", daemon_script, NULL, &error);
  g_assert_no_error (error);
  return SANDBOX_TEST_COMMAND ("/usr/bin/sh", "/workspace/daemon.sh", token);
}

/**
 * sandbox_test_unique_token:
 *
 * Returns: (transfer full): a word no other process's command line has,
 *   to mark a guest's processes with
 */
char *
sandbox_test_unique_token (void)
{
  g_autofree char *uuid = g_uuid_string_random ();

  return g_strdup_printf ("sbxmark%s", uuid);
}

/**
 * sandbox_test_count_processes_with:
 *
 * Returns: how many host processes, this one left out, have @token in
 *   their command line
 */
guint
sandbox_test_count_processes_with (const char *token)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint count = 0;

  g_assert_nonnull (proc);
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      gsize length;

      if (!g_ascii_isdigit (name[0]) || atoi (name) == getpid ())
        continue;
      path = g_strdup_printf ("/proc/%s/cmdline", name);
      if (!g_file_get_contents (path, &cmdline, &length, NULL))
        continue;
      for (gsize i = 0; i < length; i++)
        if (cmdline[i] == '\0')
          cmdline[i] = ' ';
      if (strstr (cmdline, token) != NULL)
        count++;
    }
  return count;
}

/**
 * sandbox_test_wait_for_processes_with:
 *
 * Waits up to 5 s for a host process with @token in its command line. The
 * kernel may return an empty /proc/PID/cmdline while the process is busy
 * (seen on 6.x while it forks), so one scan can miss a live process:
 * presence is proven by any scan that sees it…
 */
void
sandbox_test_wait_for_processes_with (const char *token)
{
  gboolean seen = FALSE;

  for (guint i = 0; i < 500 && !seen; i++)
    {
      seen = sandbox_test_count_processes_with (token) > 0;
      if (!seen)
        g_usleep (10 * 1000);
    }
  g_assert_true (seen);
}

/**
 * sandbox_test_assert_no_processes_with:
 *
 * …and absence only by several scans that all see none.
 */
void
sandbox_test_assert_no_processes_with (const char *token)
{
  for (guint i = 0; i < 5; i++)
    {
      g_assert_cmpuint (sandbox_test_count_processes_with (token), ==, 0);
      g_usleep (20 * 1000);
    }
}
