/* test-process.c — the limits every driver's processes share
 *
 * A tiny in-test SandboxProcess subclass plays the driver: it records kills
 * and completes when told to, so the base class's deadline, output cap,
 * cancellation, stop and signal ordering can be checked on their own.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>

#include <sandbox.h>

#define TEST_TYPE_PROCESS (test_process_get_type ())
G_DECLARE_FINAL_TYPE (TestProcess, test_process, TEST, PROCESS, SandboxProcess)

struct _TestProcess
{
  SandboxProcess parent_instance;
  int kills;
  gboolean complete_on_kill;
};

G_DEFINE_FINAL_TYPE (TestProcess, test_process, SANDBOX_TYPE_PROCESS)

static void
test_process_kill (SandboxProcess *process)
{
  TestProcess *self = TEST_PROCESS (process);

  g_atomic_int_inc (&self->kills);
  if (self->complete_on_kill)
    sandbox_process_complete (process, 128 + 9);
}

static void
test_process_class_init (TestProcessClass *klass)
{
  SANDBOX_PROCESS_CLASS (klass)->kill = test_process_kill;
}

static void
test_process_init (TestProcess *self)
{
  self->complete_on_kill = TRUE;
}

static TestProcess *
start_process (guint         timeout_ms,
               gsize         max_output,
               GCancellable *cancellable)
{
  TestProcess *process = g_object_new (TEST_TYPE_PROCESS,
                                       "timeout-ms", timeout_ms,
                                       "max-output-bytes", (guint64) max_output,
                                       NULL);

  sandbox_process_start (SANDBOX_PROCESS (process), cancellable);
  return process;
}

static void
push (TestProcess         *process,
      SandboxOutputStream  stream,
      const char          *text)
{
  sandbox_process_push_output (SANDBOX_PROCESS (process), stream,
                               (const guint8 *) text, strlen (text));
}

static void
assert_bytes_equal (GBytes     *bytes,
                    const char *expected)
{
  gsize length;
  const char *data = g_bytes_get_data (bytes, &length);

  g_assert_cmpmem (data, length, expected, strlen (expected));
}

/* A driver reports a failed exec as an errno; the core gives the result a
 * shell's status for it, the typed field and its GError. */
static void
test_exec_failure_is_typed (void)
{
  struct {
    int exec_errno;
    int status;
    int code;
  } cases[] = {
    { ENOENT, 127, G_IO_ERROR_NOT_FOUND },
    { ENOTDIR, 127, G_IO_ERROR_NOT_DIRECTORY },
    { EACCES, 126, G_IO_ERROR_PERMISSION_DENIED },
    { ENOEXEC, 126, G_IO_ERROR_FAILED },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(TestProcess) process = start_process (10000, 1024, NULL);
      g_autoptr(SandboxResult) result = NULL;
      g_autoptr(GError) error = NULL;
      int property = 0;

      sandbox_process_complete_exec_failure (SANDBOX_PROCESS (process), cases[i].exec_errno);
      result = sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (sandbox_result_get_exit_status (result), ==, cases[i].status);
      g_assert_cmpint (sandbox_result_get_exec_errno (result), ==, cases[i].exec_errno);
      g_object_get (result, "exec-errno", &property, NULL);
      g_assert_cmpint (property, ==, cases[i].exec_errno);
      g_assert_false (sandbox_result_check_executed (result, &error));
      g_assert_error (error, G_IO_ERROR, cases[i].code);
    }
}

/* A command that ran and exited 127 itself is no exec failure. */
static void
test_exit_127_is_executed (void)
{
  g_autoptr(TestProcess) process = start_process (10000, 1024, NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  push (process, SANDBOX_OUTPUT_STDERR, "bwrap: execvp x: No such file or directory\n");
  sandbox_process_complete (SANDBOX_PROCESS (process), 127);
  result = sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 127);
  g_assert_cmpint (sandbox_result_get_exec_errno (result), ==, 0);
  g_assert_true (sandbox_result_check_executed (result, &error));
  g_assert_no_error (error);
}

static void
test_result_carries_status_and_output (void)
{
  g_autoptr(TestProcess) process = start_process (10000, 1024, NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  push (process, SANDBOX_OUTPUT_STDOUT, "out");
  push (process, SANDBOX_OUTPUT_STDERR, "err");
  push (process, SANDBOX_OUTPUT_STDOUT, "put");
  sandbox_process_complete (SANDBOX_PROCESS (process), 3);

  result = sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 3);
  assert_bytes_equal (sandbox_result_get_stdout_bytes (result), "output");
  assert_bytes_equal (sandbox_result_get_stderr_bytes (result), "err");
  g_assert_cmpint (process->kills, ==, 0);
  g_assert_true (sandbox_process_is_finished (SANDBOX_PROCESS (process)));
}

static void
test_deadline_kills_with_limit (void)
{
  gint64 start = g_get_monotonic_time ();   /* before the deadline is armed */
  g_autoptr(TestProcess) process = start_process (50, 1024, NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  /* Nobody iterates this thread's context: the deadline fires on the
   * library's own worker thread. */
  result = sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox command deadline exceeded");
  g_assert_cmpint (process->kills, ==, 1);
  g_assert_cmpint (g_get_monotonic_time () - start, >=, 50 * 1000);
}

static void
test_output_cap_kills_with_limit (void)
{
  g_autoptr(TestProcess) process = start_process (10000, 10, NULL);
  g_autoptr(GError) error = NULL;

  process->complete_on_kill = FALSE;
  g_assert_true (sandbox_process_push_output (SANDBOX_PROCESS (process), SANDBOX_OUTPUT_STDOUT,
                                              (const guint8 *) "123456", 6));
  g_assert_true (sandbox_process_push_output (SANDBOX_PROCESS (process), SANDBOX_OUTPUT_STDERR,
                                              (const guint8 *) "7890", 4));
  g_assert_cmpint (process->kills, ==, 0);   /* exactly at the cap is fine */
  g_assert_false (sandbox_process_push_output (SANDBOX_PROCESS (process), SANDBOX_OUTPUT_STDOUT,
                                               (const guint8 *) "x", 1));
  g_assert_false (sandbox_process_push_output (SANDBOX_PROCESS (process), SANDBOX_OUTPUT_STDOUT,
                                               (const guint8 *) "y", 1));
  g_assert_cmpint (process->kills, ==, 1);
  sandbox_process_complete (SANDBOX_PROCESS (process), 137);

  g_assert_null (sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox output limit exceeded");
}

static void
on_stdout_collect (SandboxProcess *process,
                   GBytes         *data,
                   GString        *collected)
{
  gsize length;
  const char *chars = g_bytes_get_data (data, &length);

  g_string_append_len (collected, chars, length);
}

static void
test_output_cap_keeps_the_head_that_fits (void)
{
  g_autoptr(TestProcess) process = start_process (10000, 10, NULL);
  g_autoptr(GString) collected = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  g_signal_connect (process, "stdout-data", G_CALLBACK (on_stdout_collect), collected);
  push (process, SANDBOX_OUTPUT_STDOUT, "1234");
  /* This chunk crosses the cap: its first six bytes still fit. */
  g_assert_false (sandbox_process_push_output (SANDBOX_PROCESS (process), SANDBOX_OUTPUT_STDOUT,
                                               (const guint8 *) "56789abcdef", 11));
  g_assert_cmpint (process->kills, ==, 1);

  g_assert_null (sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (collected->str, ==, "123456789a");
}

static void
test_cancellation_kills (void)
{
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(TestProcess) process = start_process (10000, 1024, cancellable);
  g_autoptr(GError) error = NULL;

  g_cancellable_cancel (cancellable);
  g_assert_null (sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpint (process->kills, ==, 1);
}

static void
test_already_cancelled_kills_at_start (void)
{
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(TestProcess) process = NULL;
  g_autoptr(GError) error = NULL;

  g_cancellable_cancel (cancellable);
  process = start_process (10000, 1024, cancellable);
  g_assert_cmpint (process->kills, ==, 1);
  g_assert_null (sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

static void
test_stop_gives_killed_status (void)
{
  g_autoptr(TestProcess) process = start_process (10000, 1024, NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  push (process, SANDBOX_OUTPUT_STDOUT, "partial");
  g_assert_true (sandbox_process_stop (SANDBOX_PROCESS (process), NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_process_stop (SANDBOX_PROCESS (process), NULL, &error));
  g_assert_cmpint (process->kills, ==, 1);

  result = sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 137);
  assert_bytes_equal (sandbox_result_get_stdout_bytes (result), "partial");
}

static void
test_first_failure_wins (void)
{
  g_autoptr(TestProcess) process = start_process (10000, 4, NULL);
  g_autoptr(GError) abort_error = g_error_new_literal (SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                                                       "driver failure");
  g_autoptr(GError) error = NULL;

  process->complete_on_kill = FALSE;
  sandbox_process_abort (SANDBOX_PROCESS (process), abort_error);
  push (process, SANDBOX_OUTPUT_STDOUT, "too much output");
  g_assert_cmpint (process->kills, ==, 1);
  sandbox_process_complete (SANDBOX_PROCESS (process), 1);

  g_assert_null (sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
}

typedef struct
{
  GMainLoop *loop;
  GString *events;
  GThread *main_thread;
  gboolean wrong_thread;
  SandboxResult *result;
  GError *error;
} Observer;

static void
on_output (SandboxProcess *process,
           GBytes         *data,
           gpointer        user_data)
{
  Observer *observer = user_data;
  gsize length;
  const char *chars = g_bytes_get_data (data, &length);

  if (g_thread_self () != observer->main_thread)
    observer->wrong_thread = TRUE;
  g_string_append_len (observer->events, chars, length);
  g_string_append_c (observer->events, '|');
}

static void
on_wait_done (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Observer *observer = user_data;

  observer->result = sandbox_process_wait_finish (SANDBOX_PROCESS (object), result,
                                                  &observer->error);
  g_string_append (observer->events, "done");
  g_main_loop_quit (observer->loop);
}

static gpointer
feed_from_thread (gpointer data)
{
  TestProcess *process = data;

  push (process, SANDBOX_OUTPUT_STDOUT, "a");
  push (process, SANDBOX_OUTPUT_STDERR, "b");
  push (process, SANDBOX_OUTPUT_STDOUT, "c");
  sandbox_process_complete (SANDBOX_PROCESS (process), 0);
  return NULL;
}

static void
test_signals_arrive_in_order_on_the_spawning_thread (void)
{
  g_autoptr(TestProcess) process = start_process (10000, 1024, NULL);
  Observer observer = { 0 };
  GThread *thread;

  observer.loop = g_main_loop_new (NULL, FALSE);
  observer.events = g_string_new (NULL);
  observer.main_thread = g_thread_self ();
  g_signal_connect (process, "stdout-data", G_CALLBACK (on_output), &observer);
  g_signal_connect (process, "stderr-data", G_CALLBACK (on_output), &observer);
  sandbox_process_wait_async (SANDBOX_PROCESS (process), NULL, on_wait_done, &observer);

  thread = g_thread_new ("feeder", feed_from_thread, process);
  g_main_loop_run (observer.loop);
  g_thread_join (thread);

  g_assert_no_error (observer.error);
  g_assert_nonnull (observer.result);
  g_assert_cmpstr (observer.events->str, ==, "a|b|c|done");
  g_assert_false (observer.wrong_thread);

  g_object_unref (observer.result);
  g_string_free (observer.events, TRUE);
  g_main_loop_unref (observer.loop);
}

static void
test_cancelled_wait_leaves_the_command_running (void)
{
  g_autoptr(TestProcess) process = start_process (10000, 1024, NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  Observer observer = { 0 };

  observer.loop = g_main_loop_new (NULL, FALSE);
  observer.events = g_string_new (NULL);
  sandbox_process_wait_async (SANDBOX_PROCESS (process), cancellable, on_wait_done, &observer);
  g_cancellable_cancel (cancellable);
  g_main_loop_run (observer.loop);

  g_assert_error (observer.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (sandbox_process_is_finished (SANDBOX_PROCESS (process)));
  g_assert_cmpint (process->kills, ==, 0);

  sandbox_process_complete (SANDBOX_PROCESS (process), 0);
  result = sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);

  g_clear_error (&observer.error);
  g_string_free (observer.events, TRUE);
  g_main_loop_unref (observer.loop);
}

static void
test_blocking_wait_honours_its_cancellable (void)
{
  g_autoptr(TestProcess) process = start_process (10000, 1024, NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;

  g_cancellable_cancel (cancellable);
  g_assert_null (sandbox_process_wait (SANDBOX_PROCESS (process), cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpint (process->kills, ==, 0);
  sandbox_process_complete (SANDBOX_PROCESS (process), 0);
}

static void
test_blocking_wait_leaves_no_reference_behind (void)
{
  TestProcess *process = start_process (10000, 1024, NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_object_add_weak_pointer (G_OBJECT (process), (gpointer *) &process);
  push (process, SANDBOX_OUTPUT_STDOUT, "queued output");
  sandbox_process_complete (SANDBOX_PROCESS (process), 0);
  result = sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &error);
  g_assert_no_error (error);

  /* Nobody iterates this thread's main context, and yet the last
   * reference really is the last one. */
  g_object_unref (process);
  g_assert_null (process);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/process/result-carries-status-and-output",
                   test_result_carries_status_and_output);
  g_test_add_func ("/sandbox/process/exec-failure-is-typed", test_exec_failure_is_typed);
  g_test_add_func ("/sandbox/process/exit-127-is-executed", test_exit_127_is_executed);
  g_test_add_func ("/sandbox/process/deadline-kills-with-limit", test_deadline_kills_with_limit);
  g_test_add_func ("/sandbox/process/output-cap-kills-with-limit", test_output_cap_kills_with_limit);
  g_test_add_func ("/sandbox/process/output-cap-keeps-the-head-that-fits",
                   test_output_cap_keeps_the_head_that_fits);
  g_test_add_func ("/sandbox/process/cancellation-kills", test_cancellation_kills);
  g_test_add_func ("/sandbox/process/already-cancelled-kills-at-start",
                   test_already_cancelled_kills_at_start);
  g_test_add_func ("/sandbox/process/stop-gives-killed-status", test_stop_gives_killed_status);
  g_test_add_func ("/sandbox/process/first-failure-wins", test_first_failure_wins);
  g_test_add_func ("/sandbox/process/signals-arrive-in-order-on-the-spawning-thread",
                   test_signals_arrive_in_order_on_the_spawning_thread);
  g_test_add_func ("/sandbox/process/cancelled-wait-leaves-the-command-running",
                   test_cancelled_wait_leaves_the_command_running);
  g_test_add_func ("/sandbox/process/blocking-wait-honours-its-cancellable",
                   test_blocking_wait_honours_its_cancellable);

  g_test_add_func ("/sandbox/process/blocking-wait-leaves-no-reference-behind",
                   test_blocking_wait_leaves_no_reference_behind);

  return g_test_run ();
}
