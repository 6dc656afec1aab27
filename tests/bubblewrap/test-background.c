/* test-background.c — a session's background commands against real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A background command outlives the call and the caller's reference, is
 * listed (id, command line, start, state), looked up and re-attached to
 * (its log read from any position), signalled and waited for; its output
 * flood is kept as head and tail with the middle counted, and never ends
 * it (to see it fail, drop the background branch of
 * sandbox_process_push_output(): the flood then ends the command with
 * SANDBOX_ERROR_LIMIT); it holds an admission slot; its own deadline ends
 * it; and stopping the session, changing its policy or leaving it idle
 * past the backend's idle timeout ends it, counted by
 * the bwrap processes left (none), not by name. Run as root and, through
 * run-unprivileged.sh, as an unprivileged user.
 */

#include <signal.h>
#include <string.h>

#include <sandbox.h>

#include "sandbox-test-bwrap-children.h"
#include "sandbox-test-fixture.h"

static void
set_up (SandboxTestFixture *f,
        gconstpointer       data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();

  /* No ready sandboxes: the bwrap processes counted are the commands'. */
  sandbox_test_fixture_set_up (f, "bubblewrap", template_, "max-ready-sandboxes", "0",
                               "max-concurrent-commands", "2", NULL);
  sandbox_test_fixture_open_session (f, NULL);
}

static SandboxProcess *
start (SandboxTestFixture *f,
       const char         *script,
       gsize               log_bytes)
{
  const char *args[] = { "-c", script, NULL };
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sh");
  g_autoptr(GError) error = NULL;
  SandboxProcess *process;

  sandbox_command_set_args (command, args);
  if (log_bytes > 0)
    sandbox_command_set_max_output_bytes (command, log_bytes);
  process = sandbox_session_spawn_background (f->session, command, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sandbox_process_get_background_id (process));
  return process;
}

/* Reads the log from @from until it holds @text (or 20 s pass). */
static GString *
read_until (SandboxProcess *process,
            const char     *text)
{
  GString *seen = g_string_new (NULL);
  gint64 until = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  guint64 position = 0;

  while (strstr (seen->str, text) == NULL && g_get_monotonic_time () < until)
    {
      guint64 skipped = 0;
      g_autoptr(GBytes) bytes = sandbox_process_read_output (process, position, &position,
                                                             &skipped);
      gsize size;
      const char *data = g_bytes_get_data (bytes, &size);

      g_assert_cmpuint (skipped, ==, 0);
      g_string_append_len (seen, data, size);
      if (size == 0)
        g_usleep (20 * 1000);
    }
  g_assert_nonnull (strstr (seen->str, text));
  return seen;
}

static void
test_outlives_the_caller (SandboxTestFixture *f,
                          gconstpointer       data)
{
  g_autofree char *id = NULL;
  g_autoptr(SandboxProcess) again = NULL;
  g_autoptr(GPtrArray) listed = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GString) seen = NULL;
  g_autoptr(GError) error = NULL;

  {
    g_autoptr(SandboxProcess) process = start (f, "trap 'echo terminated; exit 9' TERM; "
                                                  "echo banner; while :; do sleep 0.1; done",
                                                  0);

    id = g_strdup (sandbox_process_get_background_id (process));
    /* The caller drops its reference: the session keeps the command. */
  }

  listed = sandbox_session_list_background (f->session);
  g_assert_cmpuint (listed->len, ==, 1);
  g_assert_cmpstr (sandbox_process_get_background_id (g_ptr_array_index (listed, 0)), ==, id);
  g_assert_cmpstr (sandbox_process_get_argv (g_ptr_array_index (listed, 0))[0], ==, "/bin/sh");
  g_assert_nonnull (sandbox_process_get_start_time (g_ptr_array_index (listed, 0)));
  g_assert_false (sandbox_process_is_finished (g_ptr_array_index (listed, 0)));
  g_assert_null (sandbox_session_lookup_background (f->session, "bg-none"));

  again = sandbox_session_lookup_background (f->session, id);
  g_assert_nonnull (again);
  seen = read_until (again, "banner\n");
  g_string_free (seen, TRUE);
  g_assert_true (sandbox_process_send_signal (again, SIGTERM, &error));
  g_assert_no_error (error);
  result = sandbox_process_wait (again, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 9);
  seen = read_until (again, "terminated\n");
  g_assert_true (g_str_has_prefix (seen->str, "banner\n"));
  g_assert_true (sandbox_process_is_finished (g_ptr_array_index (listed, 0)));
}

static void
test_flood_keeps_head_and_tail (SandboxTestFixture *f,
                                gconstpointer       data)
{
  g_autoptr(SandboxProcess) process = start (f, "echo first-line; seq 1 200000; "
                                                "echo last-line; sleep 30", 4096);
  g_autoptr(GBytes) head = NULL;
  g_autoptr(GBytes) tail = NULL;
  g_autoptr(GString) seen = NULL;
  g_autoptr(GError) error = NULL;
  guint64 next = 0, skipped = 0, after = 0;

  /* Wait for the end of the flood through the whole log. */
  for (gint64 until = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
       g_get_monotonic_time () < until; g_usleep (50 * 1000))
    {
      g_autoptr(GBytes) all = sandbox_process_read_output (process, 2048, NULL, NULL);

      if (g_bytes_get_size (all) > 0 &&
          g_strstr_len (g_bytes_get_data (all, NULL), g_bytes_get_size (all), "last-line"))
        break;
    }
  head = sandbox_process_read_output (process, 0, &next, &skipped);
  g_assert_cmpuint (g_bytes_get_size (head), ==, 2048);
  g_assert_cmpuint (next, ==, 2048);
  g_assert_cmpuint (skipped, ==, 0);
  g_assert_true (g_str_has_prefix (g_bytes_get_data (head, NULL), "first-line\n1\n2\n"));
  tail = sandbox_process_read_output (process, next, &after, &skipped);
  g_assert_cmpuint (g_bytes_get_size (tail), ==, 2048);
  g_assert_cmpuint (skipped, >, 1000000);
  g_assert_cmpuint (after, ==, next + skipped + 2048);
  g_assert_nonnull (g_strstr_len (g_bytes_get_data (tail, NULL), 2048, "200000\nlast-line\n"));
  /* The flood did not end it. */
  g_assert_false (sandbox_process_is_finished (process));
  g_assert_true (sandbox_process_stop (process, NULL, &error));
  g_assert_no_error (error);
}

static void
test_slot_deadline_and_ending (SandboxTestFixture *f,
                               gconstpointer       data)
{
  g_autoptr(SandboxProcess) first = start (f, "sleep 60", 0);
  g_autoptr(SandboxProcess) second = start (f, "sleep 60", 0);
  g_autoptr(SandboxCommand) third = sandbox_command_new ("/bin/true");
  g_autoptr(SandboxCommand) short_lived = sandbox_command_new ("/bin/sleep");
  const char *seconds[] = { "60", NULL };
  g_autoptr(SandboxProcess) timed = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GArray) children = NULL;
  g_autoptr(GError) error = NULL;

  /* Two slots, both held by background commands. */
  result = sandbox_session_run (f->session, third, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);
  children = sandbox_test_wait_for_bwrap_children (2);
  g_assert_cmpuint (children->len, ==, 2);
  g_clear_pointer (&children, g_array_unref);

  /* A policy change ends them first, then goes through. */
  g_assert_true (sandbox_session_set_network_policy (f->session, policy, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_process_is_finished (first));
  g_assert_true (sandbox_process_is_finished (second));
  children = sandbox_test_wait_for_bwrap_children (0);
  g_assert_cmpuint (children->len, ==, 0);
  g_clear_pointer (&children, g_array_unref);

  /* Its own deadline. */
  sandbox_command_set_args (short_lived, seconds);
  sandbox_command_set_timeout_ms (short_lived, 300);
  timed = sandbox_session_spawn_background (f->session, short_lived, &error);
  g_assert_no_error (error);
  result = sandbox_process_wait (timed, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_clear_error (&error);

  /* Stopping the session ends what runs in the background. */
  g_clear_object (&first);
  first = start (f, "sleep 60", 0);
  children = sandbox_test_wait_for_bwrap_children (1);
  g_assert_cmpuint (children->len, ==, 1);
  g_clear_pointer (&children, g_array_unref);
  g_assert_true (sandbox_handle_stop (f->handle, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_process_is_finished (first));
  children = sandbox_test_wait_for_bwrap_children (0);
  g_assert_cmpuint (children->len, ==, 0);
}

/* Deleting the session ends them too. */
static void
test_delete_ends_them (SandboxTestFixture *f,
                       gconstpointer       data)
{
  g_autoptr(SandboxProcess) process = start (f, "sleep 60", 0);
  g_autoptr(GArray) children = sandbox_test_wait_for_bwrap_children (1);
  g_autoptr(GError) error = NULL;

  g_assert_cmpuint (children->len, ==, 1);
  g_clear_pointer (&children, g_array_unref);
  g_assert_true (sandbox_handle_delete (f->handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&f->handle);
  f->session = NULL;
  g_assert_true (sandbox_process_is_finished (process));
  children = sandbox_test_wait_for_bwrap_children (0);
  g_assert_cmpuint (children->len, ==, 0);
}

/* The backend's maximum bounds a background deadline: the default comes
 * down to it, and a longer one asked for is refused. */
static void
test_backend_maximum (SandboxTestFixture *f,
                      gconstpointer       data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sleep");
  const char *seconds[] = { "60", NULL };
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  gint64 started;

  sandbox_test_fixture_set_up (f, "bubblewrap", template_, "max-background-timeout-ms", "800",
                               NULL);
  sandbox_test_fixture_open_session (f, NULL);
  sandbox_command_set_args (command, seconds);
  started = g_get_monotonic_time ();
  process = sandbox_session_spawn_background (f->session, command, &error);
  g_assert_no_error (error);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_clear_error (&error);
  g_assert_cmpint (g_get_monotonic_time () - started, <, 20 * G_USEC_PER_SEC);

  g_clear_object (&process);
  sandbox_command_set_timeout_ms (command, 5000);
  process = sandbox_session_spawn_background (f->session, command, &error);
  g_assert_null (process);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
}

/* Calls @touch on @process every 100 ms for @ms, and checks it still runs. */
static void
keep_busy_for (SandboxTestFixture *f,
               SandboxProcess     *process,
               void              (*touch) (SandboxTestFixture *, SandboxProcess *),
               guint               ms)
{
  gint64 until = g_get_monotonic_time () + (gint64) ms * 1000;

  while (g_get_monotonic_time () < until)
    {
      touch (f, process);
      g_usleep (100 * 1000);
    }
  g_assert_false (sandbox_process_is_finished (process));
}

static void
read_its_output (SandboxTestFixture *f,
                 SandboxProcess     *process)
{
  g_autoptr(GBytes) bytes = sandbox_process_read_output (process, 0, NULL, NULL);
}

static void
write_a_file (SandboxTestFixture *f,
              SandboxProcess     *process)
{
  g_autoptr(GBytes) contents = g_bytes_new_static ("x", 1);
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_write_bytes (f->session, "touched", contents, NULL, &error));
  g_assert_no_error (error);
}

/* Waits (20 s at most) until nothing asked of the session for the idle
 * timeout has ended @process, with the reason recorded. */
static void
assert_ended_for_idleness (SandboxProcess *process)
{
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  gint64 until = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  while (!sandbox_process_is_finished (process) && g_get_monotonic_time () < until)
    g_usleep (50 * 1000);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_nonnull (strstr (error->message, "idle timeout"));
}

/* background-idle-timeout-ms: a call on the session, or on the command
 * itself, keeps its background commands running; nothing asked of it for
 * that long ends them (counted as bwrap processes, not by name). */
static void
test_idle_timeout (SandboxTestFixture *f,
                   gconstpointer       data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autoptr(SandboxProcess) first = NULL;
  g_autoptr(SandboxProcess) second = NULL;
  g_autoptr(GArray) children = NULL;

  sandbox_test_fixture_set_up (f, "bubblewrap", template_, "max-ready-sandboxes", "0",
                               "background-idle-timeout-ms", "1500", NULL);
  sandbox_test_fixture_open_session (f, NULL);

  first = start (f, "sleep 60", 0);
  keep_busy_for (f, first, read_its_output, 3500);
  second = start (f, "sleep 60", 0);
  keep_busy_for (f, second, write_a_file, 3500);
  children = sandbox_test_wait_for_bwrap_children (2);
  g_assert_cmpuint (children->len, ==, 2);
  g_clear_pointer (&children, g_array_unref);

  assert_ended_for_idleness (first);
  assert_ended_for_idleness (second);
  children = sandbox_test_wait_for_bwrap_children (0);
  g_assert_cmpuint (children->len, ==, 0);

  /* The session stays open, and watches the next one again. */
  g_clear_object (&first);
  first = start (f, "sleep 60", 0);
  assert_ended_for_idleness (first);
}

static void
no_set_up (SandboxTestFixture *f,
           gconstpointer       data)
{
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/bubblewrap/background/outlives-the-caller", SandboxTestFixture, NULL,
              set_up, test_outlives_the_caller, sandbox_test_fixture_tear_down);
  g_test_add ("/bubblewrap/background/flood-keeps-head-and-tail", SandboxTestFixture, NULL,
              set_up, test_flood_keeps_head_and_tail, sandbox_test_fixture_tear_down);
  g_test_add ("/bubblewrap/background/slot-deadline-and-ending", SandboxTestFixture, NULL,
              set_up, test_slot_deadline_and_ending, sandbox_test_fixture_tear_down);

  g_test_add ("/bubblewrap/background/delete-ends-them", SandboxTestFixture, NULL,
              set_up, test_delete_ends_them, sandbox_test_fixture_tear_down);
  g_test_add ("/bubblewrap/background/backend-maximum", SandboxTestFixture, NULL,
              no_set_up, test_backend_maximum, sandbox_test_fixture_tear_down);
  g_test_add ("/bubblewrap/background/idle-timeout", SandboxTestFixture, NULL,
              no_set_up, test_idle_timeout, sandbox_test_fixture_tear_down);

  return g_test_run ();
}
