/* sandbox-conformance-live.c — reaching a running command: terminals, signals, background, ports
 *
 * A driver that cannot give a command a terminal, signal one or expose a
 * port of the session's loopback says so
 * (G_IO_ERROR_NOT_SUPPORTED) and the check is skipped with that reason;
 * one that can must do what the API documents.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include "sandbox-conformance-private.h"

static void
collect (SandboxProcess *process,
         GBytes         *data,
         GString        *collected)
{
  gsize size = 0;
  const char *bytes = g_bytes_get_data (data, &size);

  g_string_append_len (collected, bytes, size);
}

/* Runs the thread-default context until @collected shows @wanted or 10 s
 * pass. */
static gboolean
wait_to_see (GString    *collected,
             const char *wanted)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (strstr (collected->str, wanted) == NULL && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (context, FALSE))
      g_usleep (1000);
  return strstr (collected->str, wanted) != NULL;
}

static gboolean
skip_if_unsupported (ConformanceRun  *run,
                     GError         **local_error,
                     const char      *what)
{
  if (!g_error_matches (*local_error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED))
    return FALSE;
  run->skip_reason = g_strdup_printf ("the driver cannot %s: %s", what, (*local_error)->message);
  g_clear_error (local_error);
  return TRUE;
}

/* cat on a terminal: what is typed shows before the input ends (the
 * terminal's echo, cat's copy or both), the terminal can be resized while
 * it runs, closing the input types end of file, nothing comes on stderr,
 * and a terminal cannot be resized once its command is over. */
static gboolean
check_command_terminal (ConformanceRun  *run,
                        GError         **error)
{
  g_autoptr(SandboxCommand) cat = conformance_probe_command ("/usr/bin/cat", NULL);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GString) collected = g_string_new (NULL);
  GOutputStream *input;
  GError *local_error = NULL;
  gboolean seen;

  sandbox_command_set_terminal (cat, TRUE);
  sandbox_command_set_terminal_size (cat, 40, 120);
  process = sandbox_session_spawn (run->session, cat, run->cancellable, &local_error);
  if (process == NULL && skip_if_unsupported (run, &local_error, "give a command a terminal"))
    return TRUE;
  if (!conformance_expect_success (&local_error, "spawn /usr/bin/cat on a terminal", error))
    return FALSE;
  if (!sandbox_process_has_terminal (process))
    return CHECK_FAILED (error, "a command spawned with a terminal has none");
  input = sandbox_process_get_stdin_stream (process);
  if (input == NULL)
    return CHECK_FAILED (error, "a command on a terminal has no input stream");
  g_signal_connect (process, "stdout-data", G_CALLBACK (collect), collected);
  g_output_stream_write_all (input, "typed\n", 6, NULL, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "type on the terminal", error))
    return FALSE;
  seen = wait_to_see (collected, "typed");
  g_signal_handlers_disconnect_by_func (process, collect, collected);
  if (!seen)
    return CHECK_FAILED (error, "what was typed on the terminal never showed");
  sandbox_process_resize_terminal (process, 50, 132, &local_error);
  if (!conformance_expect_success (&local_error, "resize a running command's terminal", error))
    return FALSE;
  g_output_stream_close (input, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "close the terminal's input", error))
    return FALSE;
  result = sandbox_process_wait (process, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "wait for cat on a terminal", error))
    return FALSE;
  if (sandbox_result_get_exit_status (result) != 0)
    return CHECK_FAILED (error, "cat exited %d after end of file was typed",
                         sandbox_result_get_exit_status (result));
  if (g_bytes_get_size (sandbox_result_get_stderr_bytes (result)) != 0)
    return CHECK_FAILED (error, "a command on a terminal had output on stderr");
  sandbox_process_resize_terminal (process, 24, 80, &local_error);
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                                   "resize the terminal of a command that is over", error);
}

/* A signal ends a command that does not handle it with 128 + its number;
 * a number that is no signal is refused; none is sent once it is over. */
static gboolean
check_command_signal (ConformanceRun  *run,
                      GError         **error)
{
  g_autoptr(SandboxCommand) sleep_ = conformance_probe_command ("/usr/bin/sleep", "30");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  GError *local_error = NULL;

  process = sandbox_session_spawn (run->session, sleep_, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "spawn /usr/bin/sleep 30", error))
    return FALSE;
  sandbox_process_send_signal (process, 0, &local_error);
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                                 "send signal 0", error))
    return FALSE;
  if (!sandbox_process_send_signal (process, SIGTERM, &local_error) &&
      skip_if_unsupported (run, &local_error, "signal its commands"))
    {
      sandbox_process_stop (process, run->cancellable, NULL);
      return TRUE;
    }
  if (!conformance_expect_success (&local_error, "send SIGTERM", error))
    return FALSE;
  result = sandbox_process_wait (process, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "wait for the signalled sleep", error))
    return FALSE;
  if (sandbox_result_get_exit_status (result) != 128 + SIGTERM)
    return CHECK_FAILED (error, "sleep exited %d after SIGTERM, not %d",
                         sandbox_result_get_exit_status (result), 128 + SIGTERM);
  sandbox_process_send_signal (process, SIGTERM, &local_error);
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                                   "signal a command that is over", error);
}

/* A background command: kept by the session once the caller lets it go,
 * listed and found by its id, its output readable from its log, ended by
 * a signal; a command that is not one has no id. */
static gboolean
check_command_background (ConformanceRun  *run,
                          GError         **error)
{
  g_autoptr(SandboxCommand) sleep_ = conformance_probe_command ("/usr/bin/sleep", "30");
  g_autoptr(SandboxProcess) found = NULL;
  g_autoptr(GPtrArray) listed = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GBytes) output = NULL;
  g_autofree char *id = NULL;
  GError *local_error = NULL;

  {
    g_autoptr(SandboxProcess) process =
      sandbox_session_spawn_background (run->session, sleep_, &local_error);

    if (!conformance_expect_success (&local_error, "spawn /usr/bin/sleep 30 in the background",
                                     error))
      return FALSE;
    if (sandbox_process_get_background_id (process) == NULL)
      return CHECK_FAILED (error, "a background command has no id");
    id = g_strdup (sandbox_process_get_background_id (process));
  }
  listed = sandbox_session_list_background (run->session);
  if (listed->len != 1 ||
      g_strcmp0 (sandbox_process_get_background_id (g_ptr_array_index (listed, 0)), id) != 0)
    return CHECK_FAILED (error, "the session does not list its background command");
  found = sandbox_session_lookup_background (run->session, id);
  if (found == NULL || sandbox_process_is_finished (found))
    return CHECK_FAILED (error, "the background command was not kept running by its session");
  if (g_strcmp0 (sandbox_process_get_argv (found)[0], "/usr/bin/sleep") != 0)
    return CHECK_FAILED (error, "the background command's argv is not what it runs");
  output = sandbox_process_read_output (found, 0, NULL, NULL);
  if (output == NULL)
    return CHECK_FAILED (error, "a background command's output cannot be read");
  sandbox_process_send_signal (found, SIGTERM, &local_error);
  if (local_error != NULL && skip_if_unsupported (run, &local_error, "signal its commands"))
    return sandbox_process_stop (found, run->cancellable, error);
  if (!conformance_expect_success (&local_error, "signal the background command", error))
    return FALSE;
  result = sandbox_process_wait (found, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "wait for the background command", error))
    return FALSE;
  if (sandbox_result_get_exit_status (result) != 128 + SIGTERM)
    return CHECK_FAILED (error, "the background command exited %d after SIGTERM",
                         sandbox_result_get_exit_status (result));
  return TRUE;
}

/* A port of the session's loopback: a bad port is INVALID for every
 * driver; one that exposes ports gives a Unix socket's absolute path, in a
 * directory only the host's user enters (0700), the same path again. */
static gboolean
check_session_expose_port (ConformanceRun  *run,
                           GError         **error)
{
  g_autofree char *path = NULL;
  g_autofree char *again = NULL;
  g_autofree char *directory = NULL;
  GError *local_error = NULL;
  struct stat st;

  g_assert_null (sandbox_session_expose_port (run->session, 0, run->cancellable, &local_error));
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                                 "expose port 0", error))
    return FALSE;
  path = sandbox_session_expose_port (run->session, 8473, run->cancellable, &local_error);
  if (path == NULL && skip_if_unsupported (run, &local_error, "expose a port"))
    return TRUE;
  if (!conformance_expect_success (&local_error, "expose port 8473", error))
    return FALSE;
  if (!g_path_is_absolute (path) || stat (path, &st) < 0 || !S_ISSOCK (st.st_mode))
    return CHECK_FAILED (error, "the exposed port's path %s is not a Unix socket", path);
  directory = g_path_get_dirname (path);
  if (stat (directory, &st) < 0 || (st.st_mode & 0077) != 0 || st.st_uid != geteuid ())
    return CHECK_FAILED (error, "the exposed port's directory %s is open to others", directory);
  again = sandbox_session_expose_port (run->session, 8473, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "expose port 8473 again", error))
    return FALSE;
  if (g_strcmp0 (again, path) != 0)
    return CHECK_FAILED (error, "exposing port 8473 again gave %s, not %s", again, path);
  return TRUE;
}

const ConformanceCheck conformance_live_checks[] = {
  { "command/terminal", check_command_terminal, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "command/signal", check_command_signal, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "command/background", check_command_background, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "session/expose-port", check_session_expose_port, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { NULL, NULL, FALSE, FALSE }
};
