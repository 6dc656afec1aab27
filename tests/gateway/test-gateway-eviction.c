/* test-gateway-eviction.c — the connection cap against a guest's own quiet connections
 *
 * A guest that holds the gateway's 256 connections open and sends nothing on
 * them (a client's pool of spare connections, or a guest locking itself
 * out) must not make its next request wait for the header deadline to close
 * them: at the cap, the oldest connection that has sent nothing is closed to
 * make room. Connections that have sent something are never closed for a
 * newcomer; when every one has, the newcomer is refused with 503.
 *
 * The header deadline is 30 s here, so nothing in these tests is ended by
 * it. A libsoup upstream on 127.0.0.1, in its own thread, answers every
 * request; guests are raw byte clients on the gateway's Unix socket.
 *
 * To see these tests fail: make accept_connection() in
 * gateway/sandbox-gateway-server.c refuse at the cap without trying
 * evict_quiet_connection() (the newcomer of quiet-connection-evicted and
 * busy-connections-skipped is answered 503); make
 * sandbox_gateway_connection_has_spoken() always return FALSE (busy
 * connections are evicted: the newcomer of busy-connections-refused is
 * served, and busy-connections-skipped finds connection 0 closed); or take
 * the newest quiet connection in evict_quiet_connection() (g_queue_pop_tail:
 * quiet-connection-evicted and busy-connections-skipped find the oldest
 * still open).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <gio/gunixsocketaddress.h>
#include <libsoup/soup.h>

#include "sandbox-gateway.h"
#include "sandbox-network-policy.h"

/* MAX_CONNECTIONS in gateway/sandbox-gateway-server.c */
#define CAP 256

/* A request head the guest has begun and not finished. */
#define PARTIAL_HEAD "GET /partial HTTP/1.1\r\nHost: "

/* The upstream */

typedef struct
{
  GThread *thread;
  GMainContext *context;
  GMainLoop *loop;
  SoupServer *server;
  guint16 port;
  gint requests;   /* atomic */

  GMutex lock;
  GCond cond;
  gboolean ready;
} Upstream;

static void
serve (SoupServer        *server,
       SoupServerMessage *msg,
       const char        *path,
       GHashTable        *query,
       gpointer           data)
{
  Upstream *upstream = data;

  g_atomic_int_inc (&upstream->requests);
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, "ok", 2);
}

static gpointer
run_upstream (gpointer data)
{
  Upstream *upstream = data;
  g_autoptr(GError) error = NULL;
  GSList *uris;

  g_main_context_push_thread_default (upstream->context);

  upstream->server = soup_server_new (NULL, NULL);
  soup_server_add_handler (upstream->server, NULL, serve, upstream, NULL);
  soup_server_listen_local (upstream->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error);
  g_assert_no_error (error);

  uris = soup_server_get_uris (upstream->server);
  upstream->port = g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  g_mutex_lock (&upstream->lock);
  upstream->ready = TRUE;
  g_cond_broadcast (&upstream->cond);
  g_mutex_unlock (&upstream->lock);

  g_main_loop_run (upstream->loop);

  soup_server_disconnect (upstream->server);
  g_clear_object (&upstream->server);
  while (g_main_context_iteration (upstream->context, FALSE))
    ;
  g_main_context_pop_thread_default (upstream->context);

  return NULL;
}

static Upstream *
upstream_start (void)
{
  Upstream *upstream = g_new0 (Upstream, 1);

  g_mutex_init (&upstream->lock);
  g_cond_init (&upstream->cond);
  upstream->context = g_main_context_new ();
  upstream->loop = g_main_loop_new (upstream->context, FALSE);
  upstream->thread = g_thread_new ("test-upstream", run_upstream, upstream);

  g_mutex_lock (&upstream->lock);
  while (!upstream->ready)
    g_cond_wait (&upstream->cond, &upstream->lock);
  g_mutex_unlock (&upstream->lock);

  return upstream;
}

static gboolean
quit_upstream (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

static void
upstream_stop (Upstream *upstream)
{
  g_main_context_invoke (upstream->context, quit_upstream, upstream->loop);
  g_thread_join (upstream->thread);

  g_main_loop_unref (upstream->loop);
  g_main_context_unref (upstream->context);
  g_mutex_clear (&upstream->lock);
  g_cond_clear (&upstream->cond);
  g_free (upstream);
}

/* The fixture */

typedef struct
{
  Upstream *upstream;
  SandboxGateway *gateway;
  GPtrArray *events;
  char *request;   /* a request the policy allows */
} Fixture;

static void
on_audit (SandboxGateway      *gateway,
          SandboxGatewayEvent *event,
          gpointer             data)
{
  Fixture *fixture = data;

  g_ptr_array_add (fixture->events, sandbox_gateway_event_ref (event));
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;

  fixture->upstream = upstream_start ();
  fixture->events = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_gateway_event_unref);
  fixture->request = g_strdup_printf ("GET /ok HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
                                      fixture->upstream->port);

  json = g_strdup_printf ("{\"allow\": [{\"origin\": \"http://127.0.0.1:%u\"}]}",
                          fixture->upstream->port);
  policy = sandbox_network_policy_new_from_json (json, &error);
  g_assert_no_error (error);

  /* No connection here reaches its header deadline. */
  fixture->gateway = sandbox_gateway_new_full (policy, 30000, 30000, &error);
  g_assert_no_error (error);
  g_signal_connect (fixture->gateway, "audit", G_CALLBACK (on_audit), fixture);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_clear_object (&fixture->gateway);
  upstream_stop (fixture->upstream);
  g_ptr_array_unref (fixture->events);
  g_free (fixture->request);
}

/* Waits for @count audit events, lets any late one arrive, and checks that
 * no more than @count came. */
static void
wait_for_exactly (Fixture *fixture,
                  guint    count)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (fixture->events->len < count && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
  g_usleep (100 * 1000);
  while (g_main_context_iteration (NULL, FALSE))
    ;

  g_assert_cmpuint (fixture->events->len, ==, count);
}

static void
assert_event (SandboxGatewayEvent    *event,
              SandboxGatewayDecision  decision,
              const char             *reason,
              guint                   status)
{
  g_assert_cmpint (sandbox_gateway_event_get_decision (event), ==, decision);
  g_assert_cmpstr (sandbox_gateway_event_get_reason (event), ==, reason);
  g_assert_cmpuint (sandbox_gateway_event_get_status (event), ==, status);
}

static void
assert_forwarded (SandboxGatewayEvent *event)
{
  assert_event (event, SANDBOX_GATEWAY_DECISION_ALLOWED, "forwarded", 200);
}

/* A connection closed before it made a request: no method, host or path. */
static void
assert_connection_event (SandboxGatewayEvent *event,
                         const char          *reason,
                         guint                status)
{
  assert_event (event, SANDBOX_GATEWAY_DECISION_BUSY, reason, status);
  g_assert_cmpstr (sandbox_gateway_event_get_method (event), ==, "");
  g_assert_cmpstr (sandbox_gateway_event_get_host (event), ==, "");
  g_assert_cmpstr (sandbox_gateway_event_get_path (event), ==, "");
}

/* Raw guests */

static GSocket *
guest_connect (Fixture *fixture)
{
  g_autoptr(GSocketAddress) address =
    g_unix_socket_address_new (sandbox_gateway_get_socket_path (fixture->gateway));
  g_autoptr(GError) error = NULL;
  GSocket *socket = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM,
                                  G_SOCKET_PROTOCOL_DEFAULT, &error);

  g_assert_no_error (error);
  /* A guard against a gateway that never answers; no test waits for it. */
  g_socket_set_timeout (socket, 10);
  g_socket_connect (socket, address, NULL, &error);
  g_assert_no_error (error);

  return socket;
}

static void
guest_send (GSocket    *socket,
            const char *data)
{
  g_autoptr(GError) error = NULL;
  gsize length = strlen (data);

  g_assert_cmpint (g_socket_send (socket, data, length, NULL, &error), ==, (gssize) length);
  g_assert_no_error (error);
}

/* Opens @n connections, and begins a request (PARTIAL_HEAD) on every
 * @partial_every-th one, from the first (0: on none). */
static GPtrArray *
guest_connect_many (Fixture *fixture,
                    guint    n,
                    guint    partial_every)
{
  GPtrArray *sockets = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < n; i++)
    {
      GSocket *socket = guest_connect (fixture);

      if (partial_every != 0 && i % partial_every == 0)
        guest_send (socket, PARTIAL_HEAD);
      g_ptr_array_add (sockets, socket);
    }

  return sockets;
}

/* Whether @received holds a whole response: a head, and as much body as its
 * Content-Length says (the gateway's answers always carry one). */
static gboolean
response_is_complete (GString *received)
{
  const char *end = strstr (received->str, "\r\n\r\n");
  const char *length = strstr (received->str, "\r\nContent-Length: ");

  if (end == NULL || length == NULL)
    return FALSE;

  return received->len >= (gsize) (end + 4 - received->str) +
                          g_ascii_strtoull (length + strlen ("\r\nContent-Length: "), NULL, 10);
}

/* The status of the one response on @socket, or 0 if the connection ended
 * without one. */
static guint
guest_read_status (GSocket *socket)
{
  g_autoptr(GString) received = g_string_new (NULL);

  while (!response_is_complete (received))
    {
      char chunk[4096];
      g_autoptr(GError) error = NULL;
      gssize n = g_socket_receive (socket, chunk, sizeof chunk, NULL, &error);

      g_assert_no_error (error);
      if (n == 0)
        return 0;
      g_string_append_len (received, chunk, n);
    }

  g_assert_true (g_str_has_prefix (received->str, "HTTP/1.1 "));
  return (guint) g_ascii_strtoull (received->str + strlen ("HTTP/1.1 "), NULL, 10);
}

/* Sends the fixture's request on a new connection, and returns the
 * connection, kept open by the caller: closing it would make room at the
 * cap. */
static GSocket *
guest_request (Fixture *fixture)
{
  GSocket *socket = guest_connect (fixture);

  guest_send (socket, fixture->request);
  return socket;
}

/* The gateway closed @socket: the guest reads the end of the stream. */
static void
assert_closed (GSocket *socket)
{
  char byte;
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_socket_receive (socket, &byte, 1, NULL, &error), ==, 0);
  g_assert_no_error (error);
}

/* The gateway holds @socket open, and has sent nothing on it. */
static void
assert_open (GSocket *socket)
{
  char byte;

  g_assert_cmpint (recv (g_socket_get_fd (socket), &byte, 1, MSG_PEEK | MSG_DONTWAIT), ==, -1);
  g_assert_cmpint (errno, ==, EAGAIN);
}

/* The tests */

/* At the cap, with every connection quiet, a new connection's request is
 * served at once; the oldest quiet connection was closed to make room for
 * it, without an answer, and audited; every other one stays open. */
static void
test_quiet_connection_evicted (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autoptr(GPtrArray) quiet = guest_connect_many (fixture, CAP, 0);
  g_autoptr(GSocket) newcomer = guest_request (fixture);

  g_assert_cmpuint (guest_read_status (newcomer), ==, 200);
  g_assert_cmpint (g_atomic_int_get (&fixture->upstream->requests), ==, 1);

  assert_closed (g_ptr_array_index (quiet, 0));
  for (guint i = 1; i < CAP; i++)
    assert_open (g_ptr_array_index (quiet, i));

  wait_for_exactly (fixture, 2);
  assert_connection_event (g_ptr_array_index (fixture->events, 0), "idle-connection-evicted", 0);
  assert_forwarded (g_ptr_array_index (fixture->events, 1));
}

/* At the cap, with a request begun on every connection, nothing is closed
 * to make room: the newcomer is answered 503. */
static void
test_busy_connections_refused (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autoptr(GPtrArray) busy = guest_connect_many (fixture, CAP, 1);
  g_autoptr(GSocket) newcomer = guest_request (fixture);

  g_assert_cmpuint (guest_read_status (newcomer), ==, 503);
  g_assert_cmpint (g_atomic_int_get (&fixture->upstream->requests), ==, 0);

  for (guint i = 0; i < CAP; i++)
    assert_open (g_ptr_array_index (busy, i));

  wait_for_exactly (fixture, 1);
  assert_connection_event (g_ptr_array_index (fixture->events, 0), "too-many-connections", 503);
}

/* At the cap, quiet connections are closed oldest first, passing over older
 * ones that have sent something: with a request begun on every other
 * connection, two newcomers close the first two quiet ones (1 and 3). */
static void
test_busy_connections_skipped (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autoptr(GPtrArray) sockets = guest_connect_many (fixture, CAP, 2);
  g_autoptr(GSocket) first = guest_request (fixture);
  g_autoptr(GSocket) second = NULL;

  g_assert_cmpuint (guest_read_status (first), ==, 200);
  /* The first newcomer, served and kept open, has sent something too. */
  second = guest_request (fixture);
  g_assert_cmpuint (guest_read_status (second), ==, 200);
  g_assert_cmpint (g_atomic_int_get (&fixture->upstream->requests), ==, 2);

  for (guint i = 0; i < CAP; i++)
    if (i == 1 || i == 3)
      assert_closed (g_ptr_array_index (sockets, i));
    else
      assert_open (g_ptr_array_index (sockets, i));

  wait_for_exactly (fixture, 4);
  assert_connection_event (g_ptr_array_index (fixture->events, 0), "idle-connection-evicted", 0);
  assert_forwarded (g_ptr_array_index (fixture->events, 1));
  assert_connection_event (g_ptr_array_index (fixture->events, 2), "idle-connection-evicted", 0);
  assert_forwarded (g_ptr_array_index (fixture->events, 3));
}

static void
add_fixture_test (const char *path,
                  void      (*test) (Fixture *, gconstpointer))
{
  g_test_add (path, Fixture, NULL, fixture_set_up, test, fixture_tear_down);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  add_fixture_test ("/sandbox/gateway/eviction/quiet-connection-evicted",
                    test_quiet_connection_evicted);
  add_fixture_test ("/sandbox/gateway/eviction/busy-connections-refused",
                    test_busy_connections_refused);
  add_fixture_test ("/sandbox/gateway/eviction/busy-connections-skipped",
                    test_busy_connections_skipped);

  return g_test_run ();
}
