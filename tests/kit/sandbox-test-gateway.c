/* sandbox-test-gateway.c — a gateway, its upstream and raw guests, for the gateway's tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>
#include <sys/socket.h>
#include <gio/gunixsocketaddress.h>

#include "sandbox-test-gateway.h"

static void
on_audit (SandboxGateway      *gateway,
          SandboxGatewayEvent *event,
          gpointer             data)
{
  SandboxTestGatewayFixture *fixture = data;

  g_assert_true (g_main_context_is_owner (g_main_context_default ()));
  g_ptr_array_add (fixture->events, sandbox_gateway_event_ref (event));
}

static void
on_upstream_error (SandboxGateway *gateway,
                   GError         *cause,
                   gpointer        data)
{
  SandboxTestGatewayFixture *fixture = data;

  g_ptr_array_add (fixture->errors, g_error_copy (cause));
}

/**
 * sandbox_test_gateway_policy:
 * @port: the upstream's port on 127.0.0.1
 *
 * Returns: (transfer full): a policy that allows http://127.0.0.1:@port
 *   with %SANDBOX_TEST_GATEWAY_SECRET injected as its Authorization
 */
SandboxNetworkPolicy *
sandbox_test_gateway_policy (guint16 port)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *json = g_strdup_printf ("{\"allow\": [{\"origin\": \"http://127.0.0.1:%u\", "
                                           "\"headers\": {\"Authorization\": \"" SANDBOX_TEST_GATEWAY_SECRET "\"}}]}",
                                           port);
  SandboxNetworkPolicy *policy = sandbox_network_policy_new_from_json (json, &error);

  g_assert_no_error (error);
  return policy;
}

/**
 * sandbox_test_gateway_start:
 * @policy: what the gateway allows
 * @request_timeout_ms: its request timeout
 * @header_timeout_ms: its header deadline
 *
 * (Re)starts the fixture's gateway, its audit events and upstream errors
 * collected in the fixture.
 */
void
sandbox_test_gateway_start (SandboxTestGatewayFixture *fixture,
                            SandboxNetworkPolicy      *policy,
                            guint                      request_timeout_ms,
                            guint                      header_timeout_ms)
{
  g_autoptr(GError) error = NULL;
  SandboxGateway *gateway = sandbox_gateway_new_full (policy, request_timeout_ms, header_timeout_ms,
                                                      &error);

  g_assert_no_error (error);
  sandbox_test_gateway_adopt (fixture, gateway);
}

/**
 * sandbox_test_gateway_adopt:
 * @gateway: (transfer full): a gateway the test made itself (with
 *   properties sandbox_test_gateway_start() does not set)
 *
 * Makes @gateway the fixture's, replacing any, its audit events and
 * upstream errors collected in the fixture.
 */
void
sandbox_test_gateway_adopt (SandboxTestGatewayFixture *fixture,
                            SandboxGateway            *gateway)
{
  g_clear_object (&fixture->gateway);
  fixture->gateway = gateway;
  g_signal_connect (fixture->gateway, "audit", G_CALLBACK (on_audit), fixture);
  g_signal_connect (fixture->gateway, "upstream-error", G_CALLBACK (on_upstream_error), fixture);
}

/**
 * sandbox_test_gateway_set_up_full:
 * @flags: the upstream's
 * @handler: (nullable): the upstream's handler, %NULL for the standard
 *   answers (sandbox_test_upstream_start())
 * @data: for @handler
 *
 * Starts the upstream and readies the fixture's event and error lists; no
 * gateway yet (sandbox_test_gateway_start()).
 */
void
sandbox_test_gateway_set_up_full (SandboxTestGatewayFixture *fixture,
                                  SandboxTestUpstreamFlags   flags,
                                  SoupServerCallback         handler,
                                  gpointer                   data)
{
  fixture->upstream = sandbox_test_upstream_start (flags, handler, data);
  g_assert_nonnull (fixture->upstream);
  fixture->host = g_strdup_printf ("127.0.0.1:%u",
                                   sandbox_test_upstream_get_port (fixture->upstream));
  fixture->events = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_gateway_event_unref);
  fixture->errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
}

/**
 * sandbox_test_gateway_set_up:
 *
 * A g_test_add() set-up: the upstream with its standard answers (raw
 * paths), and a gateway that allows it with sandbox_test_gateway_policy(),
 * a 5 s request timeout and a 2 s header deadline.
 */
void
sandbox_test_gateway_set_up (SandboxTestGatewayFixture *fixture,
                             gconstpointer              data)
{
  g_autoptr(SandboxNetworkPolicy) policy = NULL;

  sandbox_test_gateway_set_up_full (fixture, SANDBOX_TEST_UPSTREAM_RAW_PATHS, NULL, NULL);
  policy = sandbox_test_gateway_policy (sandbox_test_upstream_get_port (fixture->upstream));
  sandbox_test_gateway_start (fixture, policy, 5000, 2000);
}

/**
 * sandbox_test_gateway_tear_down:
 *
 * A g_test_add() tear-down: the gateway goes first, then the upstream.
 */
void
sandbox_test_gateway_tear_down (SandboxTestGatewayFixture *fixture,
                                gconstpointer              data)
{
  g_clear_object (&fixture->gateway);
  sandbox_test_upstream_stop (fixture->upstream);
  g_ptr_array_unref (fixture->events);
  g_ptr_array_unref (fixture->errors);
  g_free (fixture->host);
}

void
sandbox_test_gateway_wait_for_events (SandboxTestGatewayFixture *fixture,
                                      guint                      count)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (fixture->events->len < count && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);

  g_assert_cmpuint (fixture->events->len, >=, count);
}

/* Waits for @count events, lets any late one arrive, and checks that no
 * more than @count came. */
void
sandbox_test_gateway_wait_for_exactly (SandboxTestGatewayFixture *fixture,
                                       guint                      count)
{
  sandbox_test_gateway_wait_for_events (fixture, count);
  g_usleep (100 * 1000);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpuint (fixture->events->len, ==, count);
}

/* The first upstream-error, waiting for it to be emitted. */
GError *
sandbox_test_gateway_first_error (SandboxTestGatewayFixture *fixture)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (fixture->errors->len == 0 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);

  g_assert_cmpuint (fixture->errors->len, >, 0);
  return g_ptr_array_index (fixture->errors, 0);
}

SandboxGatewayEvent *
sandbox_test_gateway_last_event (SandboxTestGatewayFixture *fixture)
{
  g_assert_cmpuint (fixture->events->len, >, 0);
  return g_ptr_array_index (fixture->events, fixture->events->len - 1);
}

void
sandbox_test_assert_event (SandboxGatewayEvent    *event,
                           SandboxGatewayDecision  decision,
                           const char             *reason,
                           guint                   status)
{
  g_assert_cmpint (sandbox_gateway_event_get_decision (event), ==, decision);
  g_assert_cmpstr (sandbox_gateway_event_get_reason (event), ==, reason);
  g_assert_cmpuint (sandbox_gateway_event_get_status (event), ==, status);
  g_assert_cmpint (sandbox_gateway_event_get_duration_us (event), >=, 0);
}

/* A refused request head: no request was made of it; @status is what the
 * guest was answered, 0 for nothing. */
void
sandbox_test_assert_refused_head (SandboxGatewayEvent *event,
                                  const char          *reason,
                                  guint                status)
{
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_BAD_REQUEST, reason, status);
  g_assert_cmpstr (sandbox_gateway_event_get_method (event), ==, "");
  g_assert_cmpstr (sandbox_gateway_event_get_host (event), ==, "");
  g_assert_cmpstr (sandbox_gateway_event_get_path (event), ==, "");
}

/* Raw guests */

GSocketConnection *
sandbox_test_guest_connect (SandboxTestGatewayFixture *fixture)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketAddress) address =
    g_unix_socket_address_new (sandbox_gateway_get_socket_path (fixture->gateway));
  g_autoptr(GError) error = NULL;
  GSocketConnection *connection;

  connection = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL, &error);
  g_assert_no_error (error);
  g_socket_set_timeout (g_socket_connection_get_socket (connection), 10);

  return connection;
}

/**
 * sandbox_test_gateway_add_proxy:
 *
 * Gives the fixture's gateway a proxy listener, as a sandbox's stub would:
 * a TCP socket listening on 127.0.0.1, on a port of the kernel's choice
 * (in @fixture->proxy_port).
 *
 * Returns: the listener's id
 */
guint
sandbox_test_gateway_add_proxy (SandboxTestGatewayFixture *fixture)
{
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GSocket) listener = NULL;
  g_autoptr(GError) error = NULL;
  guint id;

  listener = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_socket_bind (listener, address, FALSE, &error);
  g_assert_no_error (error);
  g_socket_listen (listener, &error);
  g_assert_no_error (error);
  bound = g_socket_get_local_address (listener, &error);
  g_assert_no_error (error);
  fixture->proxy_port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));

  id = sandbox_gateway_add_proxy_listener (fixture->gateway, listener, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (id, !=, 0);
  return id;
}

/* A guest's connection to the proxy listener. */
GSocketConnection *
sandbox_test_proxy_connect (SandboxTestGatewayFixture *fixture)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, fixture->proxy_port);
  g_autoptr(GError) error = NULL;
  GSocketConnection *connection;

  g_assert_cmpuint (fixture->proxy_port, !=, 0);
  /* No GProxyResolver: it would read GSettings. */
  g_socket_client_set_enable_proxy (client, FALSE);
  connection = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL, &error);
  g_assert_no_error (error);
  g_socket_set_timeout (g_socket_connection_get_socket (connection), 10);

  return connection;
}

/* Sends a request on a fresh connection to the proxy listener and reads
 * one response. */
SandboxTestResponse *
sandbox_test_proxy_request (SandboxTestGatewayFixture *fixture,
                            const char                *format,
                            ...)
{
  g_autoptr(GSocketConnection) connection = sandbox_test_proxy_connect (fixture);
  g_autofree char *request = NULL;
  va_list args;

  va_start (args, format);
  request = g_strdup_vprintf (format, args);
  va_end (args);

  sandbox_test_guest_send (connection, request, strlen (request));
  return sandbox_test_guest_read_response (connection);
}

void
sandbox_test_guest_send (GSocketConnection *connection,
                         const char        *data,
                         gsize              length)
{
  GOutputStream *output = g_io_stream_get_output_stream (G_IO_STREAM (connection));
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all (output, data, length, NULL, NULL, &error);
  g_assert_no_error (error);
}

/* Sends @data and shuts the guest's write side down. */
void
sandbox_test_guest_send_and_half_close (GSocketConnection *connection,
                                        const char        *data)
{
  g_autoptr(GError) error = NULL;

  sandbox_test_guest_send (connection, data, strlen (data));
  g_assert_true (g_socket_shutdown (g_socket_connection_get_socket (connection), FALSE, TRUE,
                                    &error));
  g_assert_no_error (error);
}

void
sandbox_test_response_free (SandboxTestResponse *response)
{
  g_clear_pointer (&response->headers, g_hash_table_unref);
  g_clear_pointer (&response->body, g_bytes_unref);
  g_free (response);
}


gssize
sandbox_test_guest_read_some (GSocketConnection *connection,
                              GByteArray        *buffer)
{
  GInputStream *input = g_io_stream_get_input_stream (G_IO_STREAM (connection));
  guint8 chunk[16384];
  gssize n = g_input_stream_read (input, chunk, sizeof chunk, NULL, NULL);

  if (n > 0)
    g_byte_array_append (buffer, chunk, n);
  return n;
}

static void
parse_head (SandboxTestResponse *response,
            const char          *head)
{
  g_auto(GStrv) lines = g_strsplit (head, "\r\n", -1);

  g_assert_true (g_str_has_prefix (lines[0], "HTTP/1."));
  response->status = (guint) g_ascii_strtoull (lines[0] + 9, NULL, 10);

  for (guint i = 1; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      const char *colon = strchr (lines[i], ':');

      g_assert_nonnull (colon);
      g_hash_table_replace (response->headers,
                            g_ascii_strdown (lines[i], colon - lines[i]),
                            g_strdup (g_strchug ((char *) colon + 1)));
    }
}

/* What was read from @connection and not consumed yet: a read may bring the
 * start of the next response along with the end of this one (pipelined
 * requests answered before the guest reads), and those bytes belong to the
 * next call. */
static GByteArray *
guest_buffer (GSocketConnection *connection)
{
  GByteArray *buffer = g_object_get_data (G_OBJECT (connection), "guest-buffer");

  if (buffer == NULL)
    {
      buffer = g_byte_array_new ();
      g_object_set_data_full (G_OBJECT (connection), "guest-buffer", buffer,
                              (GDestroyNotify) g_byte_array_unref);
    }

  return buffer;
}

/* Reads one response, and nothing past it; a gateway answer always has a
 * Content-Length. */
SandboxTestResponse *
sandbox_test_guest_read_response (GSocketConnection *connection)
{
  SandboxTestResponse *response = g_new0 (SandboxTestResponse, 1);
  GByteArray *buffer = guest_buffer (connection);
  const char *end = NULL;
  gsize head_length, body_length;
  const char *length_header;

  response->headers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  end = buffer->len > 0 ? g_strstr_len ((const char *) buffer->data, buffer->len,
                                        "\r\n\r\n") : NULL;
  while (end == NULL)
    {
      if (sandbox_test_guest_read_some (connection, buffer) <= 0)
        {
          response->body = g_bytes_new (NULL, 0);
          return response;
        }
      end = g_strstr_len ((const char *) buffer->data, buffer->len, "\r\n\r\n");
    }

  head_length = (const guint8 *) end - buffer->data + 4;
  {
    g_autofree char *head = g_strndup ((const char *) buffer->data, head_length);

    parse_head (response, head);
  }

  length_header = g_hash_table_lookup (response->headers, "content-length");
  g_assert_nonnull (length_header);
  body_length = g_ascii_strtoull (length_header, NULL, 10);

  while (buffer->len < head_length + body_length)
    g_assert_cmpint (sandbox_test_guest_read_some (connection, buffer), >, 0);

  response->body = g_bytes_new (buffer->data + head_length, body_length);
  g_byte_array_remove_range (buffer, 0, head_length + body_length);
  return response;
}

gboolean
sandbox_test_guest_sees_eof (GSocketConnection *connection)
{
  g_autoptr(GByteArray) buffer = g_byte_array_new ();

  while (sandbox_test_guest_read_some (connection, buffer) > 0)
    ;
  return TRUE;
}

/* Sends @request on a fresh connection and reads one response. */
SandboxTestResponse *
sandbox_test_guest_exchange (SandboxTestGatewayFixture *fixture,
                             const char                *request,
                             gsize                      length)
{
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);

  sandbox_test_guest_send (connection, request, length);
  return sandbox_test_guest_read_response (connection);
}

SandboxTestResponse *
sandbox_test_guest_request (SandboxTestGatewayFixture *fixture,
                            const char                *format,
                            ...)
{
  g_autofree char *request = NULL;
  va_list args;

  va_start (args, format);
  request = g_strdup_vprintf (format, args);
  va_end (args);

  return sandbox_test_guest_exchange (fixture, request, strlen (request));
}

const char *
sandbox_test_response_header (SandboxTestResponse *response,
                              const char          *name)
{
  return g_hash_table_lookup (response->headers, name);
}

void
sandbox_test_assert_body (SandboxTestResponse *response,
                          const char          *expected)
{
  gsize length = 0;
  const char *data = g_bytes_get_data (response->body, &length);

  g_assert_cmpmem (data, length, expected, strlen (expected));
}

void
sandbox_test_assert_refused (SandboxTestResponse *response,
                             guint                status,
                             const char          *sandbox_error,
                             const char          *body)
{
  g_assert_cmpuint (response->status, ==, status);
  g_assert_cmpstr (sandbox_test_response_header (response, "sandbox-error"), ==, sandbox_error);
  sandbox_test_assert_body (response, body);
}
