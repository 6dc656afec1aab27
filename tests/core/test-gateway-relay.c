/* test-gateway-relay.c — where and how long a gateway's signals wait
 *
 * A gateway's events are emitted in the main context they belong to; while
 * nobody iterates it they wait, bounded, and they go with the gateway. The
 * guests here send requests the deny-all policy refuses: a refusal is
 * audited before its 403 is sent, so once a guest has read its answer the
 * event is queued — the tests count, they never wait for time to pass.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <gio/gunixsocketaddress.h>

#include "sandbox-gateway.h"
#include "sandbox-signal-context-private.h"

#define MAX_PENDING 1024   /* RELAY_MAX_PENDING of sandbox-gateway.c */

/* One refused request on a connection of its own: GET /@index. */
static void
guest_request (SandboxGateway *gateway,
               guint           index)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketAddress) address =
    g_unix_socket_address_new (sandbox_gateway_get_socket_path (gateway));
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *request = NULL;
  g_autoptr(GString) answer = g_string_new (NULL);
  char buffer[4096];
  gssize got;

  connection = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL, &error);
  g_assert_no_error (error);
  request = g_strdup_printf ("GET /%u HTTP/1.1\r\nHost: denied.example\r\nConnection: close\r\n\r\n",
                             index);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (connection)),
                             request, strlen (request), NULL, NULL, &error);
  g_assert_no_error (error);
  while ((got = g_input_stream_read (g_io_stream_get_input_stream (G_IO_STREAM (connection)),
                                     buffer, sizeof buffer, NULL, &error)) > 0)
    g_string_append_len (answer, buffer, got);
  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (answer->str, "HTTP/1.1 403"));
}

typedef struct
{
  GPtrArray *paths;            /* of the events, in delivery order */
  GMainContext *expected;      /* where they must arrive */
} Events;

static void
on_audit (SandboxGateway      *gateway,
          SandboxGatewayEvent *event,
          Events              *events)
{
  /* Emitted while its context runs, in the thread that runs it. */
  g_assert_true (g_main_context_is_owner (events->expected));
  g_ptr_array_add (events->paths, g_strdup (sandbox_gateway_event_get_path (event)));
}

static void
events_init (Events       *events,
             GMainContext *expected)
{
  events->paths = g_ptr_array_new_with_free_func (g_free);
  events->expected = expected;
}

static void
events_clear (Events *events)
{
  g_ptr_array_unref (events->paths);
}

/* Delivers everything @context has ready, as its owner would. */
static void
drain (GMainContext *context)
{
  g_assert_true (g_main_context_acquire (context));
  while (g_main_context_iteration (context, FALSE))
    ;
  g_main_context_release (context);
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

/* A gateway created with @context as the thread-default context. */
static SandboxGateway *
gateway_new_in (GMainContext *context)
{
  g_autoptr(GError) error = NULL;
  SandboxGateway *gateway;

  g_main_context_push_thread_default (context);
  gateway = sandbox_gateway_new (NULL, &error);
  g_main_context_pop_thread_default (context);
  g_assert_no_error (error);
  return gateway;
}

/* Nobody iterates the gateway's context: at most MAX_PENDING events wait,
 * the oldest are dropped first and counted, and the rest arrive in order
 * once the context runs. Before the bound every event waited, with its
 * strings, queue entry and source, for as long as the process lived (make
 * RELAY_MAX_PENDING of sandbox-gateway.c huge: nothing is dropped here). */
static void
test_bounded (void)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(SandboxGateway) gateway = gateway_new_in (context);
  const guint requests = MAX_PENDING + 76;
  Events events;

  events_init (&events, context);
  g_signal_connect (gateway, "audit", G_CALLBACK (on_audit), &events);

  for (guint i = 1; i <= requests; i++)
    guest_request (gateway, i);

  g_assert_cmpuint (sandbox_gateway_get_dropped_events (gateway), ==, requests - MAX_PENDING);
  g_assert_cmpuint (events.paths->len, ==, 0);

  drain (context);
  g_assert_cmpuint (events.paths->len, ==, MAX_PENDING);
  g_assert_cmpstr (g_ptr_array_index (events.paths, 0), ==, "/77");
  g_assert_cmpstr (g_ptr_array_index (events.paths, MAX_PENDING - 1), ==, "/1100");

  /* Iterated again, the context takes events as they come (within the
   * relay's batching interval: a blocking iteration waits for it). */
  guest_request (gateway, 1101);
  g_assert_true (g_main_context_acquire (context));
  while (events.paths->len < MAX_PENDING + 1)
    g_main_context_iteration (context, TRUE);
  g_main_context_release (context);
  g_assert_cmpuint (events.paths->len, ==, MAX_PENDING + 1);
  g_assert_cmpuint (sandbox_gateway_get_dropped_events (gateway), ==, requests - MAX_PENDING);
  events_clear (&events);
}

/* Events waiting for a context nobody iterates go with the gateway: its
 * source leaves the context, nothing is delivered later. Before the fix the
 * source kept the relay and every event alive while the context lived (take
 * relay_close() out of sandbox_gateway_finalize() to see it stay). */
static void
test_freed_with_gateway (void)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  SandboxGateway *gateway = gateway_new_in (context);
  Events events;

  events_init (&events, context);
  g_signal_connect (gateway, "audit", G_CALLBACK (on_audit), &events);
  for (guint i = 1; i <= 10; i++)
    guest_request (gateway, i);

  g_assert_true (source_waits (context));
  g_object_add_weak_pointer (G_OBJECT (gateway), (gpointer *) &gateway);
  g_object_unref (gateway);
  g_assert_null (gateway);

  g_assert_false (source_waits (context));
  drain (context);
  g_assert_cmpuint (events.paths->len, ==, 0);
  events_clear (&events);
}

/* Closing is not going: events of the requests a close aborts, and those
 * still waiting, are delivered when the context runs. */
static void
test_close_keeps_waiting_events (void)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(SandboxGateway) gateway = gateway_new_in (context);
  Events events;

  events_init (&events, context);
  g_signal_connect (gateway, "audit", G_CALLBACK (on_audit), &events);
  guest_request (gateway, 1);
  sandbox_gateway_close (gateway);
  drain (context);
  g_assert_cmpuint (events.paths->len, ==, 1);
  events_clear (&events);
}

typedef struct
{
  SandboxGateway *gateway;
  GMainContext *context;
  Events events;
  gboolean in_scope;
} Worker;

static gpointer
set_policy_in_worker (gpointer data)
{
  Worker *worker = data;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();

  if (worker->in_scope)
    {
      /* A worker running a blocking call on a caller's behalf: no
       * thread-default context of its own, the caller's in the scope. */
      SandboxSignalScope scope;

      sandbox_signal_scope_begin (&scope, worker->context);
      sandbox_gateway_set_policy (worker->gateway, policy);
      sandbox_signal_scope_end (&scope);
    }
  else
    {
      g_main_context_push_thread_default (worker->context);
      sandbox_gateway_set_policy (worker->gateway, policy);
      g_main_context_pop_thread_default (worker->context);
    }
  return NULL;
}

/* Setting the policy makes the caller's context the events' (the ones
 * already waiting too): a thread-default context pushed by the caller, or
 * the caller's context a worker carries in its scope. */
static void
test_follows_set_policy (void)
{
  for (guint in_scope = 0; in_scope <= 1; in_scope++)
    {
      g_autoptr(GMainContext) creator = g_main_context_new ();
      g_autoptr(GMainContext) caller = g_main_context_new ();
      g_autoptr(SandboxGateway) gateway = gateway_new_in (creator);
      Worker worker = { gateway, caller, { 0 }, in_scope };

      events_init (&worker.events, caller);
      g_signal_connect (gateway, "audit", G_CALLBACK (on_audit), &worker.events);

      guest_request (gateway, 1);
      g_thread_join (g_thread_new ("set-policy", set_policy_in_worker, &worker));
      guest_request (gateway, 2);

      drain (creator);
      g_assert_cmpuint (worker.events.paths->len, ==, 0);
      drain (caller);
      g_assert_cmpuint (worker.events.paths->len, ==, 2);
      g_assert_cmpstr (g_ptr_array_index (worker.events.paths, 0), ==, "/1");
      events_clear (&worker.events);
    }
}

/* A scope stands for its caller only as long as the worker's own
 * thread-default context is unchanged: a context the worker pushes inside
 * it is the worker's business, as for any call made there. */
static void
test_scope_yields_to_pushed_context (void)
{
  g_autoptr(GMainContext) caller = g_main_context_new ();
  g_autoptr(GMainContext) pushed = g_main_context_new ();
  g_autoptr(GMainContext) seen = NULL;
  SandboxSignalScope scope;

  seen = sandbox_signal_context_ref ();
  g_assert_true (seen == g_main_context_default ());
  g_clear_pointer (&seen, g_main_context_unref);

  sandbox_signal_scope_begin (&scope, caller);
  seen = sandbox_signal_context_ref ();
  g_assert_true (seen == caller);
  g_clear_pointer (&seen, g_main_context_unref);

  g_main_context_push_thread_default (pushed);
  seen = sandbox_signal_context_ref ();
  g_assert_true (seen == pushed);
  g_clear_pointer (&seen, g_main_context_unref);
  g_main_context_pop_thread_default (pushed);

  sandbox_signal_scope_end (&scope);
  seen = sandbox_signal_context_ref ();
  g_assert_true (seen == g_main_context_default ());
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/gateway-relay/bounded", test_bounded);
  g_test_add_func ("/gateway-relay/freed-with-gateway", test_freed_with_gateway);
  g_test_add_func ("/gateway-relay/close-keeps-waiting-events", test_close_keeps_waiting_events);
  g_test_add_func ("/gateway-relay/follows-set-policy", test_follows_set_policy);
  g_test_add_func ("/gateway-relay/scope-yields-to-pushed-context",
                   test_scope_yields_to_pushed_context);

  return g_test_run ();
}
