/* test-gateway-eviction.c — the connection cap against a guest's own quiet connections
 *
 * A guest that holds the gateway's 256 connections open and sends nothing on
 * them (a client's pool of spare connections, or a guest locking itself
 * out) must not make its next request wait for the header deadline to close
 * them: at the cap, the oldest connection that has sent nothing is closed to
 * make room. Connections that have sent something are never closed for a
 * newcomer; when every one has, the newcomer is refused with 503. Failing
 * a quiet one, the kept-alive connection idle longest (served, and nothing
 * of its next request sent) is closed: a client's pool of idle keep-alive
 * connections locked the gateway as well.
 *
 * The header deadline is 30 s here, so nothing in these tests is ended by
 * it. The kit's upstream on 127.0.0.1, in its own thread, answers every
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
 * still open); make evict_idle_connection() return FALSE (the newcomer
 * of kept-alive-connection-evicted is answered 503), or
 * sandbox_gateway_connection_waits_for_head() ignore a begun head
 * (next-request-begun-refused is served).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <gio/gunixsocketaddress.h>
#include <libsoup/soup.h>

#include "sandbox-test-gateway.h"

/* MAX_CONNECTIONS in gateway/sandbox-gateway-server.c */
#define CAP 256

/* A request head the guest has begun and not finished. */
#define PARTIAL_HEAD "GET /partial HTTP/1.1\r\nHost: "

/* The fixture: the kit's gateway fixture, its upstream answering every
 * request (tests/kit/sandbox-test-gateway.h) */

typedef struct
{
  SandboxTestGatewayFixture base;
  char *request;   /* a request the policy allows */
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;

  sandbox_test_gateway_set_up_full (&fixture->base, SANDBOX_TEST_UPSTREAM_NONE, NULL, NULL);
  fixture->request = g_strdup_printf ("GET /ok HTTP/1.1\r\nHost: %s\r\n\r\n", fixture->base.host);

  json = g_strdup_printf ("{\"allow\": [{\"origin\": \"%s\"}]}",
                          sandbox_test_upstream_get_origin (fixture->base.upstream));
  policy = sandbox_network_policy_new_from_json (json, &error);
  g_assert_no_error (error);

  /* No connection here reaches its header deadline. */
  sandbox_test_gateway_start (&fixture->base, policy, 30000, 30000);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  sandbox_test_gateway_tear_down (&fixture->base, data);
  g_free (fixture->request);
}

/* Waits for @count audit events, lets any late one arrive, and checks that
 * no more than @count came. */
static void
wait_for_exactly (Fixture *fixture,
                  guint    count)
{
  sandbox_test_gateway_wait_for_exactly (&fixture->base, count);
}

static void
assert_forwarded (SandboxGatewayEvent *event)
{
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_ALLOWED, "forwarded", 200);
}

/* A connection closed before it made a request: no method, host or path. */
static void
assert_connection_event (SandboxGatewayEvent *event,
                         const char          *reason,
                         guint                status)
{
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_BUSY, reason, status);
  g_assert_cmpstr (sandbox_gateway_event_get_method (event), ==, "");
  g_assert_cmpstr (sandbox_gateway_event_get_host (event), ==, "");
  g_assert_cmpstr (sandbox_gateway_event_get_path (event), ==, "");
}

/* Raw guests */

static GSocket *
guest_connect (Fixture *fixture)
{
  g_autoptr(GSocketAddress) address =
    g_unix_socket_address_new (sandbox_gateway_get_socket_path (fixture->base.gateway));
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
  g_assert_cmpint ((gint) sandbox_test_upstream_count (fixture->base.upstream), ==, 1);

  assert_closed (g_ptr_array_index (quiet, 0));
  for (guint i = 1; i < CAP; i++)
    assert_open (g_ptr_array_index (quiet, i));

  wait_for_exactly (fixture, 2);
  assert_connection_event (g_ptr_array_index (fixture->base.events, 0), "idle-connection-evicted",
                           0);
  assert_forwarded (g_ptr_array_index (fixture->base.events, 1));
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
  g_assert_cmpint ((gint) sandbox_test_upstream_count (fixture->base.upstream), ==, 0);

  for (guint i = 0; i < CAP; i++)
    assert_open (g_ptr_array_index (busy, i));

  wait_for_exactly (fixture, 1);
  assert_connection_event (g_ptr_array_index (fixture->base.events, 0), "too-many-connections",
                           503);
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
  g_assert_cmpint ((gint) sandbox_test_upstream_count (fixture->base.upstream), ==, 2);

  for (guint i = 0; i < CAP; i++)
    if (i == 1 || i == 3)
      assert_closed (g_ptr_array_index (sockets, i));
    else
      assert_open (g_ptr_array_index (sockets, i));

  wait_for_exactly (fixture, 4);
  assert_connection_event (g_ptr_array_index (fixture->base.events, 0), "idle-connection-evicted",
                           0);
  assert_forwarded (g_ptr_array_index (fixture->base.events, 1));
  assert_connection_event (g_ptr_array_index (fixture->base.events, 2), "idle-connection-evicted",
                           0);
  assert_forwarded (g_ptr_array_index (fixture->base.events, 3));
}

/* Opens @n connections and makes a request on each, in turn, reading its
 * answer: @n kept-alive connections, idle. */
static GPtrArray *
guest_keep_alive_many (Fixture *fixture,
                       guint    n)
{
  GPtrArray *sockets = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < n; i++)
    {
      GSocket *socket = guest_request (fixture);

      g_assert_cmpuint (guest_read_status (socket), ==, 200);
      g_ptr_array_add (sockets, socket);
    }
  return sockets;
}

/* At the cap, with every connection served and idle, a new connection's
 * request is served at once; the one idle longest (the first) was closed
 * to make room, audited, and every other one stays open. */
static void
test_kept_alive_connection_evicted (Fixture       *fixture,
                                    gconstpointer  data)
{
  g_autoptr(GPtrArray) idle = guest_keep_alive_many (fixture, CAP);
  g_autoptr(GSocket) newcomer = guest_request (fixture);

  g_assert_cmpuint (guest_read_status (newcomer), ==, 200);
  g_assert_cmpint ((gint) sandbox_test_upstream_count (fixture->base.upstream), ==, CAP + 1);

  assert_closed (g_ptr_array_index (idle, 0));
  for (guint i = 1; i < CAP; i++)
    assert_open (g_ptr_array_index (idle, i));

  wait_for_exactly (fixture, CAP + 2);
  assert_connection_event (g_ptr_array_index (fixture->base.events, CAP), "idle-connection-evicted",
                           0);
  assert_forwarded (g_ptr_array_index (fixture->base.events, CAP + 1));
}

/* A served connection that has begun its next request is busy again: at
 * the cap, with every one so, the newcomer is refused. */
static void
test_next_request_begun_refused (Fixture       *fixture,
                                 gconstpointer  data)
{
  g_autoptr(GPtrArray) busy = guest_keep_alive_many (fixture, CAP);
  g_autoptr(GSocket) newcomer = NULL;

  for (guint i = 0; i < CAP; i++)
    guest_send (g_ptr_array_index (busy, i), PARTIAL_HEAD);
  /* Read by the gateway yet or still in its socket, a begun head makes a
   * connection busy. */
  newcomer = guest_request (fixture);
  g_assert_cmpuint (guest_read_status (newcomer), ==, 503);
  for (guint i = 0; i < CAP; i++)
    assert_open (g_ptr_array_index (busy, i));

  wait_for_exactly (fixture, CAP + 1);
  assert_connection_event (g_ptr_array_index (fixture->base.events, CAP), "too-many-connections",
                           503);
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
  add_fixture_test ("/sandbox/gateway/eviction/kept-alive-connection-evicted",
                    test_kept_alive_connection_evicted);
  add_fixture_test ("/sandbox/gateway/eviction/next-request-begun-refused",
                    test_next_request_begun_refused);

  return g_test_run ();
}
