/* test-handle-signals.c — a session's signals arrive in their caller's context
 *
 * SandboxHandle::gateway-audit (and SandboxBackend::gateway-error) belong to
 * the thread-default main context of whoever set the session's policy —
 * also through create_async() and set_network_policy_async(), whose work
 * runs in a GTask worker that has no thread-default context. Each test
 * here makes that call from a thread of its own with a private context,
 * while the main thread iterates the global default context, the one events
 * reached before the fix; every event must arrive in the caller's.
 *
 * The guest asks the gateway for a host the policy does not allow (curl
 * over the gateway socket): the refusal is audited before its 403 is sent,
 * so the event is queued once the guest command has finished.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>
#include <string.h>

#include <sandbox.h>

#define MAX_PENDING 1024
#define ALLOW_LIST "{\"allow\":[{\"origin\":\"http://127.0.0.1:9\"}]}"

typedef struct
{
  char *state_directory;
  SandboxBackend *backend;
  char *template_key;
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("signals");
  g_autoptr(GBytes) readme = g_bytes_new_static ("hi\n", 3);

  fixture->state_directory = g_dir_make_tmp ("sandbox-signals-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->backend = sandbox_backend_new ("bubblewrap", NULL, &error,
                                          "state-directory", fixture->state_directory, NULL);
  g_assert_no_error (error);
  sandbox_template_add_file (template_, "README", readme, &error);
  g_assert_no_error (error);
  fixture->template_key = sandbox_backend_prewarm (fixture->backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", fixture->state_directory);

  g_clear_object (&fixture->backend);
  g_free (fixture->template_key);
  g_assert_cmpint (system (command), ==, 0);
  g_free (fixture->state_directory);
}

static SandboxNetworkPolicy *
policy_from_json (const char *json)
{
  g_autoptr(GError) error = NULL;
  SandboxNetworkPolicy *policy = sandbox_network_policy_new_from_json (json, &error);

  g_assert_no_error (error);
  return policy;
}

/* The guest makes @count refused requests, GET /1 … /@count, on one
 * connection; returns once all are answered. */
static void
guest_requests (SandboxHandle *handle,
                guint          count)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/curl");
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *url = g_strdup_printf ("http://denied.example/[1-%u]", count);

  sandbox_command_add_arg (command, "-s");
  sandbox_command_add_arg (command, "-o");
  sandbox_command_add_arg (command, "/dev/null");
  sandbox_command_add_arg (command, "--unix-socket");
  sandbox_command_add_arg (command, SANDBOX_GATEWAY_GUEST_SOCKET);
  sandbox_command_add_arg (command, url);
  result = sandbox_session_run (sandbox_handle_get_session (handle), command, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
}

/* What arrived, and where. */
typedef struct
{
  GMutex lock;
  GMainContext *expected;   /* the caller's context */
  GPtrArray *paths;
  guint elsewhere;          /* emitted in any other context */
} Events;

static void
on_audit (SandboxHandle       *handle,
          SandboxGatewayEvent *event,
          Events              *events)
{
  g_mutex_lock (&events->lock);
  if (g_main_context_is_owner (events->expected))
    g_ptr_array_add (events->paths, g_strdup (sandbox_gateway_event_get_path (event)));
  else
    events->elsewhere++;
  g_mutex_unlock (&events->lock);
  g_main_context_wakeup (events->expected);
}

static guint
events_count (Events *events)
{
  guint count;

  g_mutex_lock (&events->lock);
  count = events->paths->len + events->elsewhere;
  g_mutex_unlock (&events->lock);
  return count;
}

/* Whether a source waits in @context to deliver something, now or at a
 * time it has set: what g_main_context_pending() says only once that time
 * has come. */
static gboolean
source_waits (GMainContext *context)
{
  GPollFD fds[8];
  gint priority;
  gint timeout;

  g_assert_true (g_main_context_acquire (context));
  g_main_context_prepare (context, &priority);
  g_main_context_query (context, G_MAXINT, &timeout, fds, G_N_ELEMENTS (fds));
  g_main_context_release (context);
  return timeout >= 0;
}

/* The caller: a thread of its own with a private thread-default context. */
typedef struct
{
  Fixture *fixture;
  GMainContext *context;
  Events events;
  gboolean use_set_policy;   /* created deny-all, then the async policy change */
  gboolean done;
  SandboxHandle *handle;
} Caller;

static void
created_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      data)
{
  Caller *caller = data;
  g_autoptr(GError) error = NULL;

  caller->handle = sandbox_backend_create_finish (SANDBOX_BACKEND (source), result, &error);
  g_assert_no_error (error);
}

static void
policy_set_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  gboolean *set = data;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_set_network_policy_finish (SANDBOX_SESSION (source), result,
                                                            &error));
  g_assert_no_error (error);
  *set = TRUE;
}

static gpointer
caller_thread (gpointer data)
{
  Caller *caller = data;
  g_autoptr(SandboxNetworkPolicy) allow = policy_from_json (ALLOW_LIST);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;

  g_main_context_push_thread_default (caller->context);

  sandbox_backend_create_async (caller->fixture->backend, caller->fixture->template_key, NULL,
                                caller->use_set_policy ? deny : allow, NULL, created_cb, caller);
  while (caller->handle == NULL)
    g_main_context_iteration (caller->context, TRUE);
  g_signal_connect (caller->handle, "gateway-audit", G_CALLBACK (on_audit), &caller->events);

  if (caller->use_set_policy)
    {
      gboolean set = FALSE;

      sandbox_session_set_network_policy_async (sandbox_handle_get_session (caller->handle),
                                                allow, NULL, policy_set_cb, &set);
      while (!set)
        g_main_context_iteration (caller->context, TRUE);
    }

  guest_requests (caller->handle, 3);
  while (events_count (&caller->events) < 3)
    g_main_context_iteration (caller->context, TRUE);

  sandbox_handle_delete (caller->handle, NULL, &error);
  g_assert_no_error (error);
  g_clear_object (&caller->handle);

  g_main_context_pop_thread_default (caller->context);
  g_atomic_int_set (&caller->done, TRUE);
  g_main_context_wakeup (NULL);
  return NULL;
}

/* Runs the caller while this thread iterates the global default context. */
static void
run_caller (Fixture  *fixture,
            gboolean  use_set_policy)
{
  Caller caller = { fixture, g_main_context_new (), { { 0 } }, use_set_policy };
  GThread *thread;

  g_mutex_init (&caller.events.lock);
  caller.events.expected = caller.context;
  caller.events.paths = g_ptr_array_new_with_free_func (g_free);

  thread = g_thread_new ("caller", caller_thread, &caller);
  while (!g_atomic_int_get (&caller.done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (thread);
  /* Whatever is still ready in the default context, too. */
  while (g_main_context_iteration (NULL, FALSE))
    ;

  g_assert_cmpuint (caller.events.elsewhere, ==, 0);
  g_assert_cmpuint (caller.events.paths->len, ==, 3);
  g_assert_cmpstr (g_ptr_array_index (caller.events.paths, 0), ==, "/1");

  g_ptr_array_unref (caller.events.paths);
  g_mutex_clear (&caller.events.lock);
  g_main_context_unref (caller.context);
}

/* create_async() from a thread with its own context: the events of the
 * gateway it started arrive there. Before the fix the gateway was created
 * in the GTask worker, without a thread-default context, so they went to
 * the global default context (counted as "elsewhere": take the signal
 * scope out of create_thread() in sandbox-backend.c to see it). */
static void
test_create_async (Fixture       *fixture,
                   gconstpointer  data)
{
  run_caller (fixture, FALSE);
}

/* The same through set_network_policy_async(), which starts the gateway
 * of a session created deny-all (the scope in set_network_policy_thread()
 * of sandbox-driver.c). */
static void
test_set_network_policy_async (Fixture       *fixture,
                               gconstpointer  data)
{
  run_caller (fixture, TRUE);
}

/* Nobody iterates the context the events belong to: at most MAX_PENDING
 * wait (the oldest dropped first), and those still waiting go with the
 * session — nothing of it stays attached to the context (without
 * relay_close() in sandbox_gateway_finalize() its source stays). */
static void
test_nobody_iterates (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(SandboxNetworkPolicy) allow = policy_from_json (ALLOW_LIST);
  g_autoptr(GError) error = NULL;
  SandboxHandle *handle;
  Events events = { { 0 } };

  g_mutex_init (&events.lock);
  events.expected = context;
  events.paths = g_ptr_array_new_with_free_func (g_free);

  g_main_context_push_thread_default (context);
  handle = sandbox_backend_create (fixture->backend, fixture->template_key, NULL, allow, NULL,
                                   &error);
  g_main_context_pop_thread_default (context);
  g_assert_no_error (error);
  g_signal_connect (handle, "gateway-audit", G_CALLBACK (on_audit), &events);

  /* Bounded: only the newest MAX_PENDING of 1100 are delivered. */
  guest_requests (handle, MAX_PENDING + 76);
  g_assert_cmpuint (events_count (&events), ==, 0);
  g_assert_true (g_main_context_acquire (context));
  while (g_main_context_iteration (context, FALSE))
    ;
  g_main_context_release (context);
  g_assert_cmpuint (events.elsewhere, ==, 0);
  g_assert_cmpuint (events.paths->len, ==, MAX_PENDING);
  g_assert_cmpstr (g_ptr_array_index (events.paths, 0), ==, "/77");

  /* Freed with the session: after delete, with the last reference gone,
   * nothing waits in the context and nothing arrives. */
  guest_requests (handle, 10);
  g_assert_true (source_waits (context));
  sandbox_handle_delete (handle, NULL, &error);
  g_assert_no_error (error);
  g_object_add_weak_pointer (G_OBJECT (handle), (gpointer *) &handle);
  g_object_unref (handle);
  g_assert_null (handle);
  g_assert_false (source_waits (context));
  g_assert_true (g_main_context_acquire (context));
  while (g_main_context_iteration (context, FALSE))
    ;
  g_main_context_release (context);
  g_assert_cmpuint (events.paths->len, ==, MAX_PENDING);

  g_ptr_array_unref (events.paths);
  g_mutex_clear (&events.lock);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  if (!g_file_test ("/usr/bin/bwrap", G_FILE_TEST_IS_EXECUTABLE) ||
      !g_file_test ("/usr/bin/curl", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("bubblewrap or curl is not installed");
      return 77;
    }

#define ADD(name, func) \
  g_test_add ("/handle-signals/" name, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("create-async", test_create_async);
  ADD ("set-network-policy-async", test_set_network_policy_async);
  ADD ("nobody-iterates", test_nobody_iterates);

  return g_test_run ();
}
