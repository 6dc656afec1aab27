/* test-gateway-proxy.c — SandboxGateway on a proxy listener
 *
 * What a guest's ordinary HTTP client sends to the proxy in its
 * `http_proxy`: absolute-form requests, checked and forwarded as on the
 * socket, and CONNECT, refused for an origin no rule allows and otherwise
 * answered 501 with nothing relayed. The socket keeps refusing both. The
 * listener here is a loopback TCP socket of the test's; the one a sandbox's
 * stub binds is tested in tests/bubblewrap/test-proxy.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-test-gateway.h"

#define SECRET SANDBOX_TEST_GATEWAY_SECRET
#define TUNNEL_BODY "CONNECT tunnels are not served yet"

typedef SandboxTestGatewayFixture Fixture;

static void
set_up (Fixture       *fixture,
        gconstpointer  data)
{
  sandbox_test_gateway_set_up (fixture, data);
  sandbox_test_gateway_add_proxy (fixture);
}

static void
test_absolute_form_forwarded (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = NULL;
  SandboxGatewayEvent *event;

  response = sandbox_test_proxy_request (fixture,
                                         "GET http://%s/reflect?q=1 HTTP/1.1\r\n"
                                         "Host: %s\r\n"
                                         "Proxy-Connection: keep-alive\r\n"
                                         "Authorization: Bearer guest-token\r\n\r\n",
                                         fixture->host, fixture->host);

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 1);
  g_assert_cmpstr (sandbox_test_upstream_get (fixture->upstream, 0)->path, ==, "/reflect?q=1");
  g_assert_nonnull (strstr (sandbox_test_upstream_get (fixture->upstream, 0)->headers,
                            "Authorization: " SECRET "\n"));
  g_assert_null (strstr (sandbox_test_upstream_get (fixture->upstream, 0)->headers, "guest-token"));
  g_assert_null (strstr (sandbox_test_upstream_get (fixture->upstream, 0)->headers, "Proxy-"));

  sandbox_test_gateway_wait_for_events (fixture, 1);
  event = sandbox_test_gateway_last_event (fixture);
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_ALLOWED, "forwarded", 200);
  g_assert_cmpint (sandbox_gateway_event_get_arrival (event), ==, SANDBOX_GATEWAY_ARRIVAL_PROXY);
  g_assert_cmpstr (sandbox_gateway_event_get_path (event), ==, "/reflect?q=1");
}

/* An origin-form request works on the proxy as on the socket; each
 * event says which way it came. */
static void
test_origin_form_either_way (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) by_proxy = NULL;
  g_autoptr(SandboxTestResponse) by_socket = NULL;

  by_proxy = sandbox_test_proxy_request (fixture, "GET /echo HTTP/1.1\r\nHost: %s\r\n\r\n",
                                         fixture->host);
  by_socket = sandbox_test_guest_request (fixture, "GET /echo HTTP/1.1\r\nHost: %s\r\n\r\n",
                                          fixture->host);

  g_assert_cmpuint (by_proxy->status, ==, 200);
  g_assert_cmpuint (by_socket->status, ==, 200);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 2);
  sandbox_test_gateway_wait_for_events (fixture, 2);
  g_assert_cmpint (sandbox_gateway_event_get_arrival (g_ptr_array_index (fixture->events, 0)), ==,
                   SANDBOX_GATEWAY_ARRIVAL_PROXY);
  g_assert_cmpint (sandbox_gateway_event_get_arrival (g_ptr_array_index (fixture->events, 1)), ==,
                   SANDBOX_GATEWAY_ARRIVAL_SOCKET);
}

/* A host no rule allows, and an authority other than the Host (which
 * decides the rule while the authority would route): refused, nothing
 * forwarded. */
static void
test_absolute_form_refused (Fixture       *fixture,
                            gconstpointer  data)
{
  struct
  {
    const char *authority;
    const char *host;
    const char *reason;
  } cases[] = {
    { "api.example.com", "api.example.com", "host-not-allowed" },
    { "evil.example", fixture->host, "absolute-target" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(SandboxTestResponse) response = NULL;

      response = sandbox_test_proxy_request (fixture, "GET http://%s/x HTTP/1.1\r\nHost: %s\r\n\r\n",
                                             cases[i].authority, cases[i].host);
      sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED",
                                   "Sandbox network denied");
      sandbox_test_gateway_wait_for_events (fixture, i + 1);
      sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                                 SANDBOX_GATEWAY_DECISION_DENIED, cases[i].reason, 403);
    }
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
}

/* The socket is not a proxy: absolute form stays refused there. */
static void
test_socket_refuses_absolute_form (Fixture       *fixture,
                                   gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = NULL;

  response = sandbox_test_guest_request (fixture,
                                         "GET http://%s/echo HTTP/1.1\r\nHost: %s\r\n\r\n",
                                         fixture->host, fixture->host);

  sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED", "Sandbox network denied");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
}

/* Sends a CONNECT and, in the same write, what a client would tunnel: none
 * of it may reach anyone, and the connection ends after the answer. */
static SandboxTestResponse *
connect_and_send (Fixture    *fixture,
                  const char *authority)
{
  g_autoptr(GSocketConnection) connection = sandbox_test_proxy_connect (fixture);
  g_autofree char *request = NULL;
  SandboxTestResponse *response;

  request = g_strdup_printf ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n"
                             "GET /echo HTTP/1.1\r\nHost: %s\r\n\r\n",
                             authority, authority, fixture->host);
  sandbox_test_guest_send (connection, request, strlen (request));
  response = sandbox_test_guest_read_response (connection);
  g_assert_true (sandbox_test_guest_sees_eof (connection));
  return response;
}

static void
test_connect_denied (Fixture       *fixture,
                     gconstpointer  data)
{
  const char *authorities[] = {
    "api.example.com:443",
    "127.0.0.1:1",            /* the upstream's host, another port */
  };

  for (guint i = 0; i < G_N_ELEMENTS (authorities); i++)
    {
      g_autoptr(SandboxTestResponse) response = connect_and_send (fixture, authorities[i]);
      SandboxGatewayEvent *event;

      sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED", "Sandbox network denied");
      sandbox_test_gateway_wait_for_events (fixture, i + 1);
      event = sandbox_test_gateway_last_event (fixture);
      sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_DENIED, "host-not-allowed", 403);
      g_assert_cmpstr (sandbox_gateway_event_get_method (event), ==, "CONNECT");
      g_assert_cmpstr (sandbox_gateway_event_get_host (event), ==, authorities[i]);
      g_assert_cmpint (sandbox_gateway_event_get_arrival (event), ==, SANDBOX_GATEWAY_ARRIVAL_PROXY);
    }
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
}

static void
test_connect_allowed_not_served (Fixture       *fixture,
                                 gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = connect_and_send (fixture, fixture->host);
  SandboxGatewayEvent *event;

  sandbox_test_assert_refused (response, 501, "SANDBOX_UNAVAILABLE", TUNNEL_BODY);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
  sandbox_test_gateway_wait_for_events (fixture, 1);
  event = sandbox_test_gateway_last_event (fixture);
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_DENIED, "tunnel-not-served", 501);
  g_assert_cmpstr (sandbox_gateway_event_get_host (event), ==, fixture->host);
  g_assert_cmpint (sandbox_gateway_event_get_arrival (event), ==, SANDBOX_GATEWAY_ARRIVAL_PROXY);
}

static void
test_connect_under_deny_all (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxTestResponse) response = NULL;

  sandbox_gateway_set_policy (fixture->gateway, policy);
  response = connect_and_send (fixture, fixture->host);
  sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED", "Sandbox network denied");
}

/* On the socket CONNECT stays a method the gateway does not serve. */
static void
test_socket_refuses_connect (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = NULL;

  response = sandbox_test_guest_request (fixture, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
                                         fixture->host, fixture->host);
  sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED", "Sandbox network denied");
  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_DENIED, "method-not-allowed", 403);
}

static void
test_remove_closes_listener (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = NULL;
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GError) error = NULL;
  guint id = sandbox_test_gateway_add_proxy (fixture);

  sandbox_gateway_remove_proxy_listener (fixture->gateway, id);
  sandbox_gateway_remove_proxy_listener (fixture->gateway, id);
  address = g_inet_socket_address_new (loopback, fixture->proxy_port);
  g_socket_client_set_enable_proxy (client, FALSE);
  connection = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED);

}

static void
test_add_after_close (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(GSocket) listener = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                              G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GError) error = NULL;

  sandbox_gateway_close (fixture->gateway);
  g_assert_cmpuint (sandbox_gateway_add_proxy_listener (fixture->gateway, listener, &error), ==, 0);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CLOSED);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/sandbox/gateway/proxy/" path, Fixture, NULL, set_up, func, sandbox_test_gateway_tear_down)
  ADD ("absolute-form-forwarded", test_absolute_form_forwarded);
  ADD ("origin-form-either-way", test_origin_form_either_way);
  ADD ("absolute-form-refused", test_absolute_form_refused);
  ADD ("socket-refuses-absolute-form", test_socket_refuses_absolute_form);
  ADD ("connect-denied", test_connect_denied);
  ADD ("connect-allowed-not-served", test_connect_allowed_not_served);
  ADD ("connect-under-deny-all", test_connect_under_deny_all);
  ADD ("socket-refuses-connect", test_socket_refuses_connect);
  ADD ("remove-closes-listener", test_remove_closes_listener);
  ADD ("add-after-close", test_add_after_close);
#undef ADD

  return g_test_run ();
}
