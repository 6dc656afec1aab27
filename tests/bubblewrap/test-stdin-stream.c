/* test-stdin-stream.c — a streamed standard input against real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Conformance checks the behaviour every driver owes (input as it goes,
 * end of file on close, writes refused once the command is over). Here what
 * only bwrap's sandboxes can show, cold and hot (the second command of a
 * session takes its ready sandbox):
 *
 * - the guest's standard input is a pipe, never the host's socket, and
 *   writing to it from the guest goes nowhere;
 * - a guest that never reads holds the writer back after a bounded amount
 *   (to see it fail: make pump() in sandbox-bubblewrap-process-stdin.c
 *   keep the reader watched while a chunk waits, so the relay buffers
 *   without end — the count then passes the bound);
 * - a guest that closes its standard input holds the writer back (the
 *   sandbox's init still holds the pipe) until it exits; then the writes
 *   fail rather than block for ever.
 *
 * Run as root and, through run-unprivileged.sh, as an unprivileged user.
 */

#include <string.h>

#include <sandbox.h>

#include "sandbox-test-fixture.h"

/* What may be on the way between a writer and a guest that never reads:
 * the socket's buffer (64 KiB asked, the kernel doubles it), one relayed
 * chunk (64 KiB) and the guest's pipe (64 KiB), with room to spare. */
#define IN_FLIGHT_BOUND (1024 * 1024)

static SandboxProcess *
spawn_streamed (SandboxTestFixture *f,
                const char         *script)
{
  const char *args[] = { "-c", script, NULL };
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sh");
  g_autoptr(GError) error = NULL;
  SandboxProcess *process;

  sandbox_command_set_args (command, args);
  sandbox_command_set_stdin_stream (command, TRUE);
  process = sandbox_session_spawn (f->session, command, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sandbox_process_get_stdin_stream (process));
  return process;
}

static SandboxResult *
wait_for (SandboxProcess *process)
{
  g_autoptr(GError) error = NULL;
  SandboxResult *result = sandbox_process_wait (process, NULL, &error);

  g_assert_no_error (error);
  return result;
}

static void
test_guest_sees_a_pipe (SandboxTestFixture *f,
                        gconstpointer       data)
{
  for (int round = 0; round < 2; round++)
    {
      g_autoptr(SandboxProcess) process =
        spawn_streamed (f, "readlink /proc/self/fd/0; "
                           "(echo back >&0) 2>/dev/null; echo \"write back: $?\"; cat");
      GOutputStream *input = sandbox_process_get_stdin_stream (process);
      g_autoptr(SandboxResult) result = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *out = NULL;

      g_output_stream_write_all (input, "streamed\n", 9, NULL, NULL, &error);
      g_assert_no_error (error);
      g_output_stream_close (input, NULL, &error);
      g_assert_no_error (error);
      result = wait_for (process);
      g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
      out = sandbox_result_dup_stdout_text (result);
      g_assert_true (g_str_has_prefix (out, "pipe:["));
      g_assert_nonnull (strstr (out, "]\nwrite back: 1\nstreamed\n"));
    }
}

/* Writes without blocking until the stream has refused for a while. */
static gsize
fill (GOutputStream *input)
{
  static const char block[4096] = { 0 };
  gsize accepted = 0;
  guint refusals = 0;

  while (refusals < 10 && accepted <= 4 * IN_FLIGHT_BOUND)
    {
      g_autoptr(GError) error = NULL;
      gssize n = g_pollable_output_stream_write_nonblocking (G_POLLABLE_OUTPUT_STREAM (input),
                                                             block, sizeof block, NULL, &error);

      if (n > 0)
        {
          accepted += n;
          refusals = 0;
          continue;
        }
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
      refusals++;
      g_usleep (50 * 1000);   /* time for the relay to move what it can */
    }
  return accepted;
}

static void
test_backpressure (SandboxTestFixture *f,
                   gconstpointer       data)
{
  for (int round = 0; round < 2; round++)
    {
      g_autoptr(SandboxProcess) process = spawn_streamed (f, "exec sleep 30");
      g_autoptr(GError) error = NULL;
      gsize accepted = fill (sandbox_process_get_stdin_stream (process));

      g_test_message ("round %d: %" G_GSIZE_FORMAT " bytes accepted before the writer waited",
                      round, accepted);
      g_assert_cmpuint (accepted, >, 0);
      g_assert_cmpuint (accepted, <=, IN_FLIGHT_BOUND);
      g_assert_true (sandbox_process_stop (process, NULL, &error));
      g_assert_no_error (error);
    }
}

/* Cancels a blocking write that would otherwise hang the test, unless
 * told first that it is no longer needed. */
typedef struct
{
  GMutex mutex;
  GCond cond;
  gboolean done;
  GCancellable *cancellable;
  GThread *thread;
} Watchdog;

static gpointer
watchdog_run (gpointer data)
{
  Watchdog *w = data;
  gint64 until = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  g_mutex_lock (&w->mutex);
  while (!w->done && g_cond_wait_until (&w->cond, &w->mutex, until))
    ;
  if (!w->done)
    g_cancellable_cancel (w->cancellable);
  g_mutex_unlock (&w->mutex);
  return NULL;
}

static void
watchdog_start (Watchdog *w)
{
  g_mutex_init (&w->mutex);
  g_cond_init (&w->cond);
  w->done = FALSE;
  w->cancellable = g_cancellable_new ();
  w->thread = g_thread_new ("watchdog", watchdog_run, w);
}

static void
watchdog_stop (Watchdog *w)
{
  g_mutex_lock (&w->mutex);
  w->done = TRUE;
  g_cond_signal (&w->cond);
  g_mutex_unlock (&w->mutex);
  g_thread_join (w->thread);
  g_clear_object (&w->cancellable);
  g_mutex_clear (&w->mutex);
  g_cond_clear (&w->cond);
}

static void
test_guest_closes_stdin (SandboxTestFixture *f,
                         gconstpointer       data)
{
  for (int round = 0; round < 2; round++)
    {
      g_autoptr(SandboxProcess) process = spawn_streamed (f, "exec 0<&-; exec sleep 1");
      GOutputStream *input = sandbox_process_get_stdin_stream (process);
      Watchdog watchdog;
      g_autofree char *block = g_malloc0 (65536);
      g_autoptr(GError) error = NULL;
      g_autoptr(GError) stop_error = NULL;

      watchdog_start (&watchdog);
      while (g_output_stream_write_all (input, block, 65536, NULL, watchdog.cancellable, &error))
        ;
      watchdog_stop (&watchdog);
      /* EPIPE, or ECONNRESET where unread bytes were dropped. */
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE) &&
          !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED))
        g_error ("round %d: writing to a stdin the guest closed: %s", round, error->message);
      g_assert_true (sandbox_process_stop (process, NULL, &stop_error));
      g_assert_no_error (stop_error);
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/bubblewrap/stdin-stream/guest-sees-a-pipe", SandboxTestFixture, "bubblewrap",
              sandbox_test_fixture_set_up_session, test_guest_sees_a_pipe,
              sandbox_test_fixture_tear_down);
  g_test_add ("/bubblewrap/stdin-stream/backpressure", SandboxTestFixture, "bubblewrap",
              sandbox_test_fixture_set_up_session, test_backpressure,
              sandbox_test_fixture_tear_down);
  g_test_add ("/bubblewrap/stdin-stream/guest-closes-stdin", SandboxTestFixture, "bubblewrap",
              sandbox_test_fixture_set_up_session, test_guest_closes_stdin,
              sandbox_test_fixture_tear_down);
  return g_test_run ();
}
