/* test-memory-commands.c — scripted commands of a session over the memory
 * driver: results, streaming, limits, cancellation and admission
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "memory-test-common.h"

static SandboxResult *
run_ok (SandboxSession *session,
        SandboxCommand *command)
{
  g_autoptr(GError) error = NULL;
  SandboxResult *result = sandbox_session_run (session, command, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static void
assert_result (SandboxResult *result,
               int            exit_status,
               const char    *stdout_text,
               const char    *stderr_text)
{
  g_autofree char *out = sandbox_result_dup_stdout_text (result);
  g_autofree char *err = sandbox_result_dup_stderr_text (result);

  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, exit_status);
  g_assert_cmpstr (out, ==, stdout_text);
  g_assert_cmpstr (err, ==, stderr_text);
}

static void
test_run_scripted_output (MemoryFixture *fixture,
                          gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/cat", "hello.txt", NULL);
  g_autoptr(SandboxResult) result = run_ok (fixture->session, command);

  assert_result (result, 0, "hello", "");
}

static void
test_run_async (MemoryFixture *fixture,
                gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/false", NULL);
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_session_run_async (fixture->session, command, NULL, memory_test_store_result,
                             &async_result);
  result = sandbox_session_run_finish (fixture->session, memory_test_await (&async_result),
                                       &error);
  g_assert_no_error (error);
  assert_result (result, 1, "", "false\n");
}

static void
test_args_must_match_exactly (MemoryFixture *fixture,
                              gconstpointer  data)
{
  g_autoptr(SandboxCommand) other_args = memory_test_command_new ("/usr/bin/cat", "docs/readme.md",
                                                                  NULL);
  g_autoptr(SandboxCommand) extra_arg = memory_test_command_new ("/usr/bin/cat", "hello.txt",
                                                                 "docs/readme.md", NULL);
  g_autoptr(SandboxResult) first = run_ok (fixture->session, other_args);
  g_autoptr(SandboxResult) second = NULL;

  /* Not the "hello.txt" entry: the next one, which reads its file argument. */
  assert_result (first, 0, "# readme\n", "");

  /* With an extra argument the exact entry does not match either; the file
   * entry copies the first argument. */
  second = run_ok (fixture->session, extra_arg);
  assert_result (second, 0, "hello", "");
}

static void
test_unscripted_command_gets_default (MemoryFixture *fixture,
                                      gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/rm", "-rf", "/", NULL);
  g_autoptr(SandboxResult) result = run_ok (fixture->session, command);

  assert_result (result, 127, "", "command not scripted\n");
}

static void
test_builtin_default_names_executable (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = sandbox_backend_new ("memory", NULL, &error,
                                                           "script", "{}", NULL);
  g_autofree char *key = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/whoami", NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autofree char *err = NULL;

  g_assert_no_error (error);
  key = memory_test_prewarm (backend);
  handle = memory_test_create (backend, key, NULL);

  result = run_ok (sandbox_handle_get_session (handle), command);
  err = sandbox_result_dup_stderr_text (result);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 127);
  g_assert_nonnull (strstr (err, "/usr/bin/whoami"));

  memory_test_drain ();
}

static void
test_stdin_echo_and_writes (MemoryFixture *fixture,
                            gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/tee", NULL);
  g_autoptr(GBytes) input = g_bytes_new_static ("piped\0bytes", 11);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *written = NULL;

  sandbox_command_set_stdin (command, input);
  process = sandbox_session_spawn (fixture->session, command, NULL, &error);
  g_assert_no_error (error);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);

  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  g_assert_true (g_bytes_equal (sandbox_result_get_stdout_bytes (result), input));

  written = sandbox_session_read_text (fixture->session, "tee/out.txt", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (written, ==, "written by tee\n");
}

static void
test_file_arg_relative_to_cwd (MemoryFixture *fixture,
                               gconstpointer  data)
{
  g_autoptr(SandboxCommand) relative = memory_test_command_new ("/usr/bin/cat", "readme.md", NULL);
  g_autoptr(SandboxCommand) absolute = memory_test_command_new ("/usr/bin/cat",
                                                                "/workspace/hello.txt", NULL);
  g_autoptr(SandboxResult) first = NULL;
  g_autoptr(SandboxResult) second = NULL;

  sandbox_command_set_cwd (relative, "docs");
  first = run_ok (fixture->session, relative);
  assert_result (first, 0, "# readme\n", "");

  sandbox_command_set_cwd (absolute, "docs");
  second = run_ok (fixture->session, absolute);
  assert_result (second, 0, "hello", "");
}

static void
test_file_arg_sees_session_writes (MemoryFixture *fixture,
                                   gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/cat", "new.txt", NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_session_write_text (fixture->session, "new.txt", "from the host\n", NULL, &error);
  g_assert_no_error (error);

  result = run_ok (fixture->session, command);
  assert_result (result, 0, "from the host\n", "");
}

static void
test_file_arg_missing_fails_like_cat (MemoryFixture *fixture,
                                      gconstpointer  data)
{
  const char *missing[] = { "missing.txt", "/etc/passwd", "../hello.txt" };

  for (guint i = 0; i < G_N_ELEMENTS (missing); i++)
    {
      g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/cat", missing[i],
                                                                   NULL);
      g_autoptr(SandboxResult) result = run_ok (fixture->session, command);
      g_autofree char *err = sandbox_result_dup_stderr_text (result);

      g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 1);
      g_assert_cmpuint (g_bytes_get_size (sandbox_result_get_stdout_bytes (result)), ==, 0);
      g_assert_true (g_str_has_prefix (err, "/usr/bin/cat: "));
      g_assert_nonnull (strstr (err, missing[i]));
    }
}

static void
test_failed_write_fails_command (MemoryFixture *fixture,
                                 gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/touch", NULL);
  g_autoptr(SandboxResult) result = run_ok (fixture->session, command);
  g_autofree char *err = sandbox_result_dup_stderr_text (result);
  g_autofree char *hello = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 1);
  g_assert_nonnull (strstr (err, "/workspace/hello.txt/below"));

  hello = sandbox_session_read_text (fixture->session, "hello.txt", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hello, ==, "hello");
}

static void
test_run_replaces_invalid_utf8 (MemoryFixture *fixture,
                                gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/printf", "\\xff", NULL);
  g_autoptr(SandboxResult) result = run_ok (fixture->session, command);
  g_autofree char *out = sandbox_result_dup_stdout_text (result);
  gsize length = 0;
  const char *raw = g_bytes_get_data (sandbox_result_get_stdout_bytes (result), &length);

  g_assert_cmpmem (raw, length, "ok\xffk", 4);
  g_assert_cmpstr (out, ==, "ok\xEF\xBF\xBDk");
}

static void
test_spawn_then_wait_async (MemoryFixture *fixture,
                            gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/cat", "hello.txt", NULL);
  g_autoptr(GAsyncResult) spawned = NULL;
  g_autoptr(GAsyncResult) waited = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_session_spawn_async (fixture->session, command, NULL, memory_test_store_result,
                               &spawned);
  process = sandbox_session_spawn_finish (fixture->session, memory_test_await (&spawned), &error);
  g_assert_no_error (error);

  sandbox_process_wait_async (process, NULL, memory_test_store_result, &waited);
  result = sandbox_process_wait_finish (process, memory_test_await (&waited), &error);
  g_assert_no_error (error);
  assert_result (result, 0, "hello", "");
  g_assert_true (sandbox_process_is_finished (process));
}

typedef struct
{
  GString  *events;
  gboolean  waited;
} StreamLog;

static void
log_stdout (SandboxProcess *process,
            GBytes         *data,
            StreamLog      *log)
{
  g_assert_false (log->waited);
  g_string_append (log->events, "out:");
  g_string_append_len (log->events, g_bytes_get_data (data, NULL), g_bytes_get_size (data));
}

static void
log_stderr (SandboxProcess *process,
            GBytes         *data,
            StreamLog      *log)
{
  g_assert_false (log->waited);
  g_string_append (log->events, "err:");
  g_string_append_len (log->events, g_bytes_get_data (data, NULL), g_bytes_get_size (data));
}

static void
test_live_output_streams_in_order (MemoryFixture *fixture,
                                   gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/make", NULL);
  g_autoptr(GAsyncResult) waited = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  StreamLog log = { g_string_new (NULL), FALSE };
  gboolean saw_first_chunk_before_end = FALSE;

  process = sandbox_session_spawn (fixture->session, command, NULL, &error);
  g_assert_no_error (error);
  g_signal_connect (process, "stdout-data", G_CALLBACK (log_stdout), &log);
  g_signal_connect (process, "stderr-data", G_CALLBACK (log_stderr), &log);

  sandbox_process_wait_async (process, NULL, memory_test_store_result, &waited);

  /* The chunks are 100 ms apart: the first must arrive while the command is
   * still running. */
  while (waited == NULL)
    {
      g_main_context_iteration (NULL, TRUE);
      if (log.events->len > 0 && !sandbox_process_is_finished (process))
        saw_first_chunk_before_end = TRUE;
    }
  log.waited = TRUE;

  result = sandbox_process_wait_finish (process, waited, &error);
  g_assert_no_error (error);
  g_assert_true (saw_first_chunk_before_end);
  g_assert_cmpstr (log.events->str, ==, "out:one\nerr:two\nout:three\n");
  assert_result (result, 2, "one\nthree\n", "two\n");

  g_string_free (log.events, TRUE);
}

static SandboxResult *
run_expecting_error (SandboxSession *session,
                     SandboxCommand *command,
                     GCancellable   *cancellable,
                     GError        **error)
{
  return sandbox_session_run (session, command, cancellable, error);
}

static void
test_deadline_kills_never_ending_command (MemoryFixture *fixture,
                                          gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/bin/forever", NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  gint64 start = g_get_monotonic_time ();

  sandbox_command_set_timeout_ms (command, 50);
  result = run_expecting_error (fixture->session, command, NULL, &error);

  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox command deadline exceeded");
  g_assert_null (result);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 5 * G_USEC_PER_SEC);
}

static void
test_deadline_before_scripted_exit (MemoryFixture *fixture,
                                    gconstpointer  data)
{
  g_autoptr(SandboxCommand) slow = memory_test_command_new ("/usr/bin/sleep", "1", NULL);
  g_autoptr(SandboxCommand) in_time = memory_test_command_new ("/usr/bin/sleep", "1", NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxResult) ok = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_command_set_timeout_ms (slow, 50);
  result = run_expecting_error (fixture->session, slow, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_null (result);

  ok = run_ok (fixture->session, in_time);
  assert_result (ok, 0, "", "");
}

static void
test_output_flood_hits_cap (MemoryFixture *fixture,
                            gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/bin/flood", NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_command_set_max_output_bytes (command, 100000);
  result = run_expecting_error (fixture->session, command, NULL, &error);

  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox output limit exceeded");
  g_assert_null (result);
}

static void
test_output_cap_counts_both_streams (MemoryFixture *fixture,
                                     gconstpointer  data)
{
  g_autoptr(SandboxCommand) fits = memory_test_command_new ("/usr/bin/make", NULL);
  g_autoptr(SandboxCommand) too_much = memory_test_command_new ("/usr/bin/make", NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxResult) over = NULL;
  g_autoptr(GError) error = NULL;

  /* "one\n" + "two\n" (stderr) + "three\n" = 14 bytes. */
  sandbox_command_set_max_output_bytes (fits, 14);
  result = run_ok (fixture->session, fits);
  assert_result (result, 2, "one\nthree\n", "two\n");

  sandbox_command_set_max_output_bytes (too_much, 13);
  over = run_expecting_error (fixture->session, too_much, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox output limit exceeded");
}

static gboolean
cancel_cb (gpointer data)
{
  g_cancellable_cancel (data);
  return G_SOURCE_REMOVE;
}

static void
test_cancel_running_command (MemoryFixture *fixture,
                             gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/bin/forever", NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxCommand) next = memory_test_command_new ("/usr/bin/true", NULL);
  g_autoptr(SandboxResult) next_result = NULL;

  sandbox_session_run_async (fixture->session, command, cancellable, memory_test_store_result,
                             &async_result);
  g_timeout_add (20, cancel_cb, cancellable);
  result = sandbox_session_run_finish (fixture->session, memory_test_await (&async_result),
                                       &error);

  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (result);

  /* The cancelled command is gone and gave back its slot. */
  next_result = run_ok (fixture->session, next);
  assert_result (next_result, 0, "", "");
}

static void
test_cancelled_before_spawn (MemoryFixture *fixture,
                             gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/true", NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) error = NULL;

  g_cancellable_cancel (cancellable);
  process = sandbox_session_spawn (fixture->session, command, cancellable, &error);

  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (process);
}

static void
note_output (SandboxProcess *process,
             GBytes         *data,
             gboolean       *seen)
{
  *seen = TRUE;
}

static void
test_process_stop_kills (MemoryFixture *fixture,
                         gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/bin/forever", NULL);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  gboolean started = FALSE;

  process = sandbox_session_spawn (fixture->session, command, NULL, &error);
  g_assert_no_error (error);

  /* Let it write its first line, so it is surely running when killed. */
  g_signal_connect (process, "stdout-data", G_CALLBACK (note_output), &started);
  while (!started)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (sandbox_process_is_finished (process));

  g_assert_true (sandbox_process_stop (process, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_process_is_finished (process));

  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  assert_result (result, 137, "started\n", "");
}

static void
test_process_stop_async (MemoryFixture *fixture,
                         gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/bin/forever", NULL);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GAsyncResult) stopped = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  process = sandbox_session_spawn (fixture->session, command, NULL, &error);
  g_assert_no_error (error);

  sandbox_process_stop_async (process, NULL, memory_test_store_result, &stopped);
  g_assert_true (sandbox_process_stop_finish (process, memory_test_await (&stopped), &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_process_is_finished (process));

  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 137);
}

static void
test_spawn_failure (MemoryFixture *fixture,
                    gconstpointer  data)
{
  g_autoptr(SandboxCommand) broken = memory_test_command_new ("/bin/broken", NULL);
  g_autoptr(SandboxCommand) ok = memory_test_command_new ("/usr/bin/true", NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(SandboxProcess) process = sandbox_session_spawn (fixture->session, broken, NULL,
                                                                 &error);

      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
      g_assert_cmpstr (error->message, ==, "Sandbox process could not start");
      g_assert_null (process);
      g_clear_error (&error);
    }

  /* Failed spawns hold no admission slot (the fixture admits two). */
  result = run_ok (fixture->session, ok);
  assert_result (result, 0, "", "");
}

static void
test_admission_limit (MemoryFixture *fixture,
                      gconstpointer  data)
{
  g_autoptr(SandboxCommand) forever = memory_test_command_new ("/bin/forever", NULL);
  g_autoptr(SandboxProcess) first = NULL;
  g_autoptr(SandboxProcess) second = NULL;
  g_autoptr(SandboxProcess) refused = NULL;
  g_autoptr(SandboxProcess) admitted = NULL;
  g_autoptr(SandboxResult) run_result = NULL;
  g_autoptr(GError) error = NULL;

  first = sandbox_session_spawn (fixture->session, forever, NULL, &error);
  g_assert_no_error (error);
  second = sandbox_session_spawn (fixture->session, forever, NULL, &error);
  g_assert_no_error (error);

  refused = sandbox_session_spawn (fixture->session, forever, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Sandbox command concurrency limit reached");
  g_assert_null (refused);
  g_clear_error (&error);

  run_result = run_expecting_error (fixture->session, forever, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);

  /* Once stop returns the slot is free: the next spawn is admitted at once. */
  sandbox_process_stop (first, NULL, &error);
  g_assert_no_error (error);
  admitted = sandbox_session_spawn (fixture->session, forever, NULL, &error);
  g_assert_no_error (error);

  sandbox_process_stop (second, NULL, &error);
  g_assert_no_error (error);
  sandbox_process_stop (admitted, NULL, &error);
  g_assert_no_error (error);
}

typedef struct
{
  SandboxSession *session;
  GMutex          lock;
  GPtrArray      *admitted;
  guint           refused;
} SpawnRace;

static gpointer
spawn_forever_thread (gpointer data)
{
  SpawnRace *race = data;
  g_autoptr(SandboxCommand) forever = memory_test_command_new ("/bin/forever", NULL);
  g_autoptr(GError) error = NULL;
  SandboxProcess *process = sandbox_session_spawn (race->session, forever, NULL, &error);

  g_mutex_lock (&race->lock);
  if (process != NULL)
    g_ptr_array_add (race->admitted, process);
  else if (g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY))
    race->refused++;
  g_mutex_unlock (&race->lock);

  return NULL;
}

static void
test_admission_holds_under_concurrent_spawns (MemoryFixture *fixture,
                                              gconstpointer  data)
{
  SpawnRace race = { fixture->session, { 0 }, g_ptr_array_new_with_free_func (g_object_unref), 0 };
  GThread *threads[8];
  g_autoptr(GError) error = NULL;

  g_mutex_init (&race.lock);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("spawn", spawn_forever_thread, &race);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_thread_join (threads[i]);

  /* The fixture admits two. */
  g_assert_cmpuint (race.admitted->len, ==, 2);
  g_assert_cmpuint (race.refused, ==, G_N_ELEMENTS (threads) - 2);

  sandbox_handle_stop (fixture->handle, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < race.admitted->len; i++)
    g_assert_true (sandbox_process_is_finished (g_ptr_array_index (race.admitted, i)));

  g_ptr_array_unref (race.admitted);
  g_mutex_clear (&race.lock);
}

static void
test_invalid_command_refused (MemoryFixture *fixture,
                              gconstpointer  data)
{
  g_autoptr(SandboxCommand) bad_environment = memory_test_command_new ("/usr/bin/true", NULL);
  g_autoptr(SandboxCommand) bad_timeout = memory_test_command_new ("/usr/bin/true", NULL);
  g_autoptr(SandboxCommand) from_json = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_command_setenv (bad_environment, "A=B", "x");
  result = sandbox_session_run (fixture->session, bad_environment, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  sandbox_command_set_timeout_ms (bad_timeout, 0);
  result = sandbox_session_run (fixture->session, bad_timeout, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  from_json = sandbox_command_new_from_json ("{\"executable\": \"/usr/bin/true\", \"shell\": true}",
                                             &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_null (from_json);
}

static void
test_bad_cwd_refused (MemoryFixture *fixture,
                      gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/true", NULL);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_command_set_cwd (command, "../outside");
  process = sandbox_session_spawn (fixture->session, command, NULL, &error);

  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_null (process);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/sandbox/memory/commands/" path, MemoryFixture, NULL, \
              memory_fixture_set_up, func, memory_fixture_tear_down)

  ADD ("run-scripted-output", test_run_scripted_output);
  ADD ("run-async", test_run_async);
  ADD ("args-must-match-exactly", test_args_must_match_exactly);
  ADD ("unscripted-command-gets-default", test_unscripted_command_gets_default);
  ADD ("stdin-echo-and-writes", test_stdin_echo_and_writes);
  ADD ("file-arg-relative-to-cwd", test_file_arg_relative_to_cwd);
  ADD ("file-arg-sees-session-writes", test_file_arg_sees_session_writes);
  ADD ("file-arg-missing-fails-like-cat", test_file_arg_missing_fails_like_cat);
  ADD ("failed-write-fails-command", test_failed_write_fails_command);
  ADD ("run-replaces-invalid-utf8", test_run_replaces_invalid_utf8);
  ADD ("spawn-then-wait-async", test_spawn_then_wait_async);
  ADD ("live-output-streams-in-order", test_live_output_streams_in_order);
  ADD ("deadline-kills-never-ending-command", test_deadline_kills_never_ending_command);
  ADD ("deadline-before-scripted-exit", test_deadline_before_scripted_exit);
  ADD ("output-flood-hits-cap", test_output_flood_hits_cap);
  ADD ("output-cap-counts-both-streams", test_output_cap_counts_both_streams);
  ADD ("cancel-running-command", test_cancel_running_command);
  ADD ("cancelled-before-spawn", test_cancelled_before_spawn);
  ADD ("process-stop-kills", test_process_stop_kills);
  ADD ("process-stop-async", test_process_stop_async);
  ADD ("spawn-failure", test_spawn_failure);
  ADD ("admission-limit", test_admission_limit);
  ADD ("admission-holds-under-concurrent-spawns", test_admission_holds_under_concurrent_spawns);
  ADD ("invalid-command-refused", test_invalid_command_refused);
  ADD ("bad-cwd-refused", test_bad_cwd_refused);
#undef ADD

  g_test_add_func ("/sandbox/memory/commands/builtin-default-names-executable",
                   test_builtin_default_names_executable);

  return g_test_run ();
}
