/* sandbox-conformance-commands.c — the checks of commands: running, stdin,
 * live output, cancellation, limits, admission, and what a live command
 * means for policy changes and stop
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include "sandbox-conformance-private.h"

static gboolean
check_commands_refused (ConformanceRun  *run,
                        GError         **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) command = conformance_probe_command ("/usr/bin/cat", "conformance.txt");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  GError *local_error = NULL;

  if (conformance_claims_commands (run))
    {
      run->skip_reason = g_strdup ("the driver claims to run commands");
      return TRUE;
    }

  handle = conformance_new_session (run, error);
  if (handle == NULL)
    return FALSE;
  process = sandbox_session_spawn (sandbox_handle_get_session (handle), command,
                                   run->cancellable, &local_error);
  if (process != NULL)
    return CHECK_FAILED (error, "a driver that claims no commands started one");
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, "spawn",
                                 error))
    return FALSE;
  result = sandbox_session_run (sandbox_handle_get_session (handle), command, run->cancellable,
                                &local_error);
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, "run",
                                   error);
}

static gboolean
check_command_run (ConformanceRun  *run,
                   GError         **error)
{
  g_autoptr(SandboxCommand) cat = conformance_probe_command ("/usr/bin/cat", "conformance.txt");
  g_autoptr(SandboxCommand) false_ = conformance_probe_command ("/usr/bin/false", NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxResult) failed = NULL;
  g_autofree char *text = NULL;
  SandboxSession *session = run->session;
  GError *local_error = NULL;

  sandbox_session_write_text (session, "conformance.txt", "written by the host\n",
                              run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "write_text", error))
    return FALSE;
  result = sandbox_session_run (session, cat, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "run /usr/bin/cat conformance.txt", error))
    return FALSE;
  if (sandbox_result_get_exit_status (result) != 0)
    return CHECK_FAILED (error, "/usr/bin/cat exited with %d",
                         sandbox_result_get_exit_status (result));
  text = sandbox_result_dup_stdout_text (result);
  if (g_strcmp0 (text, "written by the host\n") != 0)
    return CHECK_FAILED (error, "the command did not see the file the host wrote (stdout “%s”)",
                         text);

  failed = sandbox_session_run (session, false_, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "run /usr/bin/false", error))
    return FALSE;
  if (sandbox_result_get_exit_status (failed) != 1)
    return CHECK_FAILED (error, "/usr/bin/false exited with %d, expected 1",
                         sandbox_result_get_exit_status (failed));
  return TRUE;
}

/* @executable could not be executed: the result says so with @exec_errno
 * and a shell's @status. */
static gboolean
expect_exec_failure (ConformanceRun  *run,
                     const char      *executable,
                     int              exec_errno,
                     int              status,
                     GError         **error)
{
  g_autoptr(SandboxCommand) command = conformance_probe_command (executable, NULL);
  g_autoptr(SandboxResult) result = NULL;
  GError *local_error = NULL;

  result = sandbox_session_run (run->session, command, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, executable, error))
    return FALSE;
  if (sandbox_result_get_exec_errno (result) != exec_errno)
    return CHECK_FAILED (error, "%s: exec-errno %d, expected %d (%s)", executable,
                         sandbox_result_get_exec_errno (result), exec_errno,
                         g_strerror (exec_errno));
  if (sandbox_result_get_exit_status (result) != status)
    return CHECK_FAILED (error, "%s could not be executed but exited with %d, expected %d",
                         executable, sandbox_result_get_exit_status (result), status);
  return TRUE;
}

/* A workspace executable that is not there, or is not executable, is an
 * exec failure in the result; a command that ran and failed is not. */
static gboolean
check_command_exec_failure (ConformanceRun  *run,
                            GError         **error)
{
  g_autoptr(SandboxCommand) false_ = conformance_probe_command ("/usr/bin/false", NULL);
  g_autoptr(SandboxResult) failed = NULL;
  GError *local_error = NULL;

  if (!expect_exec_failure (run, "/workspace/conformance-missing", ENOENT, 127, error) ||
      !expect_exec_failure (run, "/workspace/conformance.txt", EACCES, 126, error))
    return FALSE;
  failed = sandbox_session_run (run->session, false_, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "run /usr/bin/false", error))
    return FALSE;
  if (sandbox_result_get_exec_errno (failed) != 0)
    return CHECK_FAILED (error, "/usr/bin/false ran, but its result says it could not be "
                         "executed (exec-errno %d)", sandbox_result_get_exec_errno (failed));
  return TRUE;
}

static gboolean
check_command_stdin (ConformanceRun  *run,
                     GError         **error)
{
  g_autoptr(SandboxCommand) cat = conformance_probe_command ("/usr/bin/cat", NULL);
  g_autoptr(GBytes) input = g_bytes_new_static ("from stdin\n", 11);
  g_autoptr(SandboxResult) result = NULL;
  GError *local_error = NULL;

  sandbox_command_set_stdin (cat, input);
  result = sandbox_session_run (run->session, cat, run->cancellable,
                                &local_error);
  if (!conformance_expect_success (&local_error, "run /usr/bin/cat with stdin", error))
    return FALSE;
  return conformance_expect_bytes (sandbox_result_get_stdout_bytes (result), "from stdin\n", 11,
                                   "stdout of cat with stdin", error);
}

static void
collect_output (SandboxProcess *process,
                GBytes         *data,
                GByteArray     *collected)
{
  gsize size = 0;
  const guint8 *bytes = g_bytes_get_data (data, &size);

  g_byte_array_append (collected, bytes, size);
}

static gboolean
check_command_live_output (ConformanceRun  *run,
                           GError         **error)
{
  g_autoptr(SandboxCommand) cat = conformance_probe_command ("/usr/bin/cat", "conformance.txt");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GByteArray) collected = g_byte_array_new ();
  GError *local_error = NULL;

  process = sandbox_session_spawn (run->session, cat, run->cancellable,
                                   &local_error);
  if (!conformance_expect_success (&local_error, "spawn /usr/bin/cat conformance.txt", error))
    return FALSE;
  g_signal_connect (process, "stdout-data", G_CALLBACK (collect_output), collected);
  result = sandbox_process_wait (process, run->cancellable, &local_error);
  g_signal_handlers_disconnect_by_func (process, collect_output, collected);
  if (!conformance_expect_success (&local_error, "wait", error))
    return FALSE;
  if (!conformance_expect_bytes (sandbox_result_get_stdout_bytes (result), CONFORMANCE_HELLO,
                                 strlen (CONFORMANCE_HELLO),
                                 "the result's stdout", error))
    return FALSE;
  /* Output that arrived before the handler was connected is not replayed, so
   * what the signal saw must be a suffix of the result. */
  if (collected->len > strlen (CONFORMANCE_HELLO)
      || memcmp (collected->data, CONFORMANCE_HELLO + strlen (CONFORMANCE_HELLO) - collected->len,
                 collected->len) != 0)
    return CHECK_FAILED (error, "stdout-data delivered bytes that are not the command's output");
  return TRUE;
}

/* Runs the thread-default context until @collected holds @wanted or 10 s
 * pass. */
static gboolean
wait_for_output (GByteArray *collected,
                 const char *wanted)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (collected->len < strlen (wanted) && g_get_monotonic_time () < deadline)
    if (!g_main_context_iteration (context, FALSE))
      g_usleep (1000);
  return collected->len == strlen (wanted) &&
         memcmp (collected->data, wanted, collected->len) == 0;
}

/* A streamed stdin: cat echoes the first line before the second is
 * written (so input reaches it as it goes, not at the end), closing the
 * stream ends its input, and the result has both lines. */
static gboolean
check_command_stdin_stream (ConformanceRun  *run,
                            GError         **error)
{
  g_autoptr(SandboxCommand) cat = conformance_probe_command ("/usr/bin/cat", NULL);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GByteArray) collected = g_byte_array_new ();
  GOutputStream *input;
  GError *local_error = NULL;
  gboolean echoed;

  sandbox_command_set_stdin_stream (cat, TRUE);
  process = sandbox_session_spawn (run->session, cat, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "spawn /usr/bin/cat with a stdin stream", error))
    return FALSE;
  input = sandbox_process_get_stdin_stream (process);
  if (input == NULL)
    return CHECK_FAILED (error, "a command spawned with stdin-stream has no stdin stream");
  g_signal_connect (process, "stdout-data", G_CALLBACK (collect_output), collected);
  g_output_stream_write_all (input, "one\n", 4, NULL, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "write to the stdin stream", error))
    return FALSE;
  echoed = wait_for_output (collected, "one\n");
  g_signal_handlers_disconnect_by_func (process, collect_output, collected);
  if (!echoed)
    return CHECK_FAILED (error, "cat did not echo the first line before the stream was closed");
  g_output_stream_write_all (input, "two\n", 4, NULL, run->cancellable, &local_error);
  if (local_error == NULL)
    g_output_stream_close (input, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "write and close the stdin stream", error))
    return FALSE;
  result = sandbox_process_wait (process, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "wait for cat", error))
    return FALSE;
  if (sandbox_result_get_exit_status (result) != 0)
    return CHECK_FAILED (error, "cat exited %d after its stdin stream closed",
                         sandbox_result_get_exit_status (result));
  return conformance_expect_bytes (sandbox_result_get_stdout_bytes (result), "one\ntwo\n", 8,
                                   "stdout of cat fed by a stream", error);
}

/* Once a command is over, its stdin stream refuses writes (rather than
 * taking them into a void or blocking), and a command cannot have both
 * stdin bytes and a stream. */
static gboolean
check_command_stdin_stream_ends (ConformanceRun  *run,
                                 GError         **error)
{
  g_autoptr(SandboxCommand) command = conformance_probe_command ("/usr/bin/false", NULL);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GBytes) input = g_bytes_new_static ("x", 1);
  GError *local_error = NULL;

  sandbox_command_set_stdin_stream (command, TRUE);
  process = sandbox_session_spawn (run->session, command, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "spawn /usr/bin/false with a stdin stream", error))
    return FALSE;
  result = sandbox_process_wait (process, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "wait for /usr/bin/false", error))
    return FALSE;
  g_output_stream_write_all (sandbox_process_get_stdin_stream (process), "late", 4, NULL,
                             run->cancellable, &local_error);
  if (!conformance_expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE,
                                 "write to the stdin stream of a command that is over", error))
    return FALSE;

  g_clear_object (&process);
  sandbox_command_set_stdin (command, input);
  process = sandbox_session_spawn (run->session, command, run->cancellable, &local_error);
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                                   "spawn with both stdin bytes and a stdin stream", error);
}

static gboolean
check_command_invalid_utf8 (ConformanceRun  *run,
                            GError         **error)
{
  g_autoptr(SandboxCommand) printf_ = conformance_probe_command ("/usr/bin/printf", "\\377");
  g_autoptr(SandboxResult) result = NULL;
  g_autofree char *text = NULL;
  GError *local_error = NULL;

  result = sandbox_session_run (run->session, printf_, run->cancellable,
                                &local_error);
  if (!conformance_expect_success (&local_error, "run /usr/bin/printf \\377", error))
    return FALSE;
  if (!conformance_expect_bytes (sandbox_result_get_stdout_bytes (result), "\xFF", 1,
                                 "the raw stdout bytes", error))
    return FALSE;
  text = sandbox_result_dup_stdout_text (result);
  if (g_strcmp0 (text, "\xEF\xBF\xBD") != 0)
    return CHECK_FAILED (error, "invalid UTF-8 output was not replaced with U+FFFD");
  return TRUE;
}

static gboolean
check_command_cancel (ConformanceRun  *run,
                      GError         **error)
{
  g_autoptr(SandboxCommand) sleep_ = conformance_probe_command ("/usr/bin/sleep", "30");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  gint64 start;
  GError *local_error = NULL;

  process = sandbox_session_spawn (run->session, sleep_, cancellable,
                                   &local_error);
  if (!conformance_expect_success (&local_error, "spawn /usr/bin/sleep 30", error))
    return FALSE;
  start = g_get_monotonic_time ();
  g_cancellable_cancel (cancellable);
  result = sandbox_process_wait (process, run->cancellable, &local_error);
  if (!conformance_expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                 "waiting for a command whose spawn was cancelled", error))
    return FALSE;
  if (g_get_monotonic_time () - start > SLOW_BOUND_US)
    return CHECK_FAILED (error, "cancellation took more than 15 s");
  if (!sandbox_process_is_finished (process))
    return CHECK_FAILED (error, "the cancelled process is not finished");
  return TRUE;
}

static gboolean
check_limits_deadline (ConformanceRun  *run,
                       GError         **error)
{
  g_autoptr(SandboxCommand) sleep_ = conformance_probe_command ("/usr/bin/sleep", "30");
  g_autoptr(SandboxResult) result = NULL;
  gint64 start;
  GError *local_error = NULL;

  sandbox_command_set_timeout_ms (sleep_, DEADLINE_TEST_MS);
  start = g_get_monotonic_time ();
  result = sandbox_session_run (run->session, sleep_, run->cancellable,
                                &local_error);
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                                 "run /usr/bin/sleep 30 with a 300 ms deadline", error))
    return FALSE;
  if (g_get_monotonic_time () - start > SLOW_BOUND_US)
    return CHECK_FAILED (error, "the deadline took more than 15 s to fire");
  return TRUE;
}

static gboolean
check_limits_output (ConformanceRun  *run,
                     GError         **error)
{
  g_autoptr(SandboxCommand) yes = conformance_probe_command ("/usr/bin/yes", NULL);
  g_autoptr(SandboxResult) result = NULL;
  GError *local_error = NULL;

  sandbox_command_set_max_output_bytes (yes, 4096);
  sandbox_command_set_timeout_ms (yes, 10000);
  result = sandbox_session_run (run->session, yes, run->cancellable,
                                &local_error);
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                                   "run /usr/bin/yes with a 4096-byte output cap", error);
}

static gboolean
stop_all (GPtrArray *processes)
{
  for (guint i = 0; i < processes->len; i++)
    sandbox_process_stop (g_ptr_array_index (processes, i), NULL, NULL);
  return TRUE;
}

static gboolean
check_admission (ConformanceRun  *run,
                 GError         **error)
{
  g_autoptr(SandboxBackend) limited = NULL;
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GPtrArray) processes = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SandboxProcess) refused = NULL;
  g_autoptr(SandboxProcess) admitted = NULL;
  g_autoptr(SandboxCommand) sleep_ = conformance_probe_command ("/usr/bin/sleep", "30");
  SandboxSession *session;
  GError *local_error = NULL;
  const guint limit = 2;

  limited = conformance_new_backend (run->self, run->temporary_directory, limit, run->cancellable,
                                     &local_error);
  if (!conformance_expect_success (&local_error,
                                   "constructing a backend with max-concurrent-commands 2",
                                   error))
    return FALSE;
  if (sandbox_backend_get_max_concurrent_commands (limited) != limit)
    return CHECK_FAILED (error, "max-concurrent-commands was not applied");
  handle = sandbox_backend_create (limited, run->key, NULL, policy, run->cancellable,
                                   &local_error);
  if (!conformance_expect_success (&local_error, "create", error))
    return FALSE;
  session = sandbox_handle_get_session (handle);

  for (guint i = 0; i < limit; i++)
    {
      SandboxProcess *process = sandbox_session_spawn (session, sleep_, run->cancellable,
                                                       &local_error);

      if (!conformance_expect_success (&local_error, "spawning up to the admission limit", error))
        return stop_all (processes) && FALSE;
      g_ptr_array_add (processes, process);
    }

  refused = sandbox_session_spawn (session, sleep_, run->cancellable, &local_error);
  if (refused != NULL)
    sandbox_process_stop (refused, NULL, NULL);
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                                 "spawning past max-concurrent-commands", error))
    return stop_all (processes) && FALSE;

  /* A stopped command gives its slot back. */
  sandbox_process_stop (g_ptr_array_index (processes, 0), run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "stopping a command", error))
    return stop_all (processes) && FALSE;
  admitted = sandbox_session_spawn (session, sleep_, run->cancellable, &local_error);
  if (admitted != NULL)
    g_ptr_array_add (processes, g_object_ref (admitted));
  stop_all (processes);
  return conformance_expect_success (&local_error,
                                     "spawning after a stopped command freed its slot", error);
}

static gboolean
check_network_policy_busy (ConformanceRun  *run,
                           GError         **error)
{
  g_autoptr(SandboxCommand) sleep_ = conformance_probe_command ("/usr/bin/sleep", "30");
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxProcess) process = NULL;
  SandboxSession *session = run->session;
  GError *local_error = NULL;
  gboolean ok;

  process = sandbox_session_spawn (session, sleep_, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "spawn /usr/bin/sleep 30", error))
    return FALSE;
  sandbox_session_set_network_policy (session, deny, run->cancellable, &local_error);
  ok = conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                                 "changing the network policy while a command is live", error);
  sandbox_process_stop (process, NULL, NULL);
  if (!ok)
    return FALSE;

  sandbox_session_set_network_policy (session, deny, run->cancellable, &local_error);
  return conformance_expect_success (&local_error,
                                     "changing the policy once the command is stopped", error);
}

static gboolean
check_lifecycle_stop_kills (ConformanceRun  *run,
                            GError         **error)
{
  SandboxHandle *handle = run->handle;
  g_autoptr(SandboxCommand) sleep_ = conformance_probe_command ("/usr/bin/sleep", "30");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) ignored = NULL;
  gint64 start;
  GError *local_error = NULL;

  process = sandbox_session_spawn (run->session, sleep_, run->cancellable,
                                   &local_error);
  if (!conformance_expect_success (&local_error, "spawn /usr/bin/sleep 30", error))
    return FALSE;
  start = g_get_monotonic_time ();
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    return conformance_expect_success (&local_error, "stop() with a live command", error);
  /* Killed is killed: a result with a signal status or an error both do. */
  result = sandbox_process_wait (process, run->cancellable, &ignored);
  if (g_get_monotonic_time () - start > SLOW_BOUND_US)
    return CHECK_FAILED (error, "stop() took more than 15 s to end a live command");
  if (!sandbox_process_is_finished (process))
    return CHECK_FAILED (error, "a command outlived stop()");
  if (result != NULL && sandbox_result_get_exit_status (result) == 0)
    return CHECK_FAILED (error, "a command killed by stop() reported success");
  return TRUE;
}

const ConformanceCheck conformance_command_checks[] = {
  { "command/refused-without-commands", check_commands_refused, FALSE, CONFORMANCE_FIXTURE_NONE },
  { "command/run", check_command_run, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "command/exec-failure", check_command_exec_failure, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "command/stdin", check_command_stdin, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "command/live-output", check_command_live_output, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "command/stdin-stream", check_command_stdin_stream, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "command/stdin-stream-ends", check_command_stdin_stream_ends,
    TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "command/invalid-utf8-replaced", check_command_invalid_utf8,
    TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "command/cancel", check_command_cancel, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "limits/deadline", check_limits_deadline, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "limits/output", check_limits_output, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "admission/busy", check_admission, TRUE, CONFORMANCE_FIXTURE_NONE },
  { "network/policy-change-busy", check_network_policy_busy, TRUE, CONFORMANCE_FIXTURE_SESSION },
  { "lifecycle/stop-kills-commands", check_lifecycle_stop_kills,
    TRUE, CONFORMANCE_FIXTURE_SESSION },
  { NULL, NULL, FALSE, FALSE }
};
