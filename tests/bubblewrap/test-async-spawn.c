/* test-async-spawn.c — an _async spawn returns at once, and its process signals the caller's context
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * sandbox_session_spawn_async() and run_async() do the spawn on a worker
 * thread (the core's default spawn_async), so they return before the
 * command has started: their callback never runs inside the call. The
 * process's output signals and the callbacks still come in the main
 * context of the thread that called, here a thread of the test's own with
 * a context of its own (not the global default one, which nobody runs
 * here). Against real bubblewrap, as root and unprivileged. To see it
 * fail, make sandbox_process_init() take g_main_context_ref_thread_default():
 * the output then goes to the worker thread's (the default) context and
 * never arrives.
 */

#include <sandbox.h>

#include "sandbox-test-fixture.h"

typedef struct
{
  SandboxSession *session;
  GMainContext *context;
  gboolean returned;          /* the _async call has returned */
  gboolean spawned_in_call;   /* a callback ran inside the call */
  gboolean foreign_context;   /* a signal or callback came elsewhere */
  GString *output;
  SandboxResult *result;
  gboolean done;
} Caller;

static void
check_context (Caller *caller)
{
  if (!g_main_context_is_owner (caller->context))
    caller->foreign_context = TRUE;
}

static void
stdout_cb (SandboxProcess *process,
           GBytes         *data,
           gpointer        user_data)
{
  Caller *caller = user_data;
  gsize size;
  const char *bytes = g_bytes_get_data (data, &size);

  check_context (caller);
  g_string_append_len (caller->output, bytes, size);
}

static void
waited_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Caller *caller = user_data;
  g_autoptr(GError) error = NULL;

  check_context (caller);
  caller->result = sandbox_process_wait_finish (SANDBOX_PROCESS (source), result, &error);
  g_assert_no_error (error);
  caller->done = TRUE;
}

static void
spawned_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  Caller *caller = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) process =
    sandbox_session_spawn_finish (SANDBOX_SESSION (source), result, &error);

  g_assert_no_error (error);
  if (!caller->returned)
    caller->spawned_in_call = TRUE;
  check_context (caller);
  g_signal_connect (process, "stdout-data", G_CALLBACK (stdout_cb), caller);
  sandbox_process_wait_async (process, NULL, waited_cb, caller);
}

static gpointer
caller_thread (gpointer data)
{
  Caller *caller = data;
  const char *args[] = { "-c", "sleep 0.2; echo from-the-guest", NULL };
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sh");
  gint64 give_up = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

  g_main_context_push_thread_default (caller->context);
  sandbox_command_set_args (command, args);

  sandbox_session_spawn_async (caller->session, command, NULL, spawned_cb, caller);
  caller->returned = TRUE;
  /* Output sent elsewhere never arrives here: give up, the test fails. */
  while (!caller->done && g_get_monotonic_time () < give_up)
    if (!g_main_context_iteration (caller->context, FALSE))
      g_usleep (10 * 1000);
  g_main_context_pop_thread_default (caller->context);
  return NULL;
}

static void
test_spawn_async_from_a_thread (SandboxTestFixture *f,
                                gconstpointer       data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  Caller caller = { 0 };
  GThread *thread;

  sandbox_test_fixture_set_up (f, "bubblewrap", template_, NULL);
  sandbox_test_fixture_open_session (f, NULL);
  caller.session = f->session;
  caller.context = g_main_context_new ();
  caller.output = g_string_new (NULL);

  thread = g_thread_new ("caller", caller_thread, &caller);
  g_thread_join (thread);

  g_assert_true (caller.done);
  g_assert_false (caller.spawned_in_call);
  g_assert_false (caller.foreign_context);
  g_assert_cmpstr (caller.output->str, ==, "from-the-guest\n");
  g_assert_nonnull (caller.result);
  g_assert_cmpint (sandbox_result_get_exit_status (caller.result), ==, 0);
  g_object_unref (caller.result);
  g_string_free (caller.output, TRUE);
  g_main_context_unref (caller.context);
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

  g_test_add ("/bubblewrap/async-spawn/from-a-thread", SandboxTestFixture, NULL,
              no_set_up, test_spawn_async_from_a_thread, sandbox_test_fixture_tear_down);

  return g_test_run ();
}
