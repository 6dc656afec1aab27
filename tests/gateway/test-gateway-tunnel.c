/* test-gateway-tunnel.c — SandboxGateway ending a CONNECT tunnel's TLS
 *
 * With a CA (SandboxGateway:ca-directory) an allowed CONNECT on a proxy
 * listener is answered 200, the gateway answers the guest's TLS with a
 * certificate for the CONNECT's host signed by that CA, and the requests
 * inside go through the same checks and upstream path as any other: the
 * rule's credential reaches the kit's HTTPS upstream (trusted through
 * SandboxGateway:upstream-ca-file, its own test CA). Clients: the real
 * curl, and GIO's TLS client for what curl will not send (another server
 * name than the CONNECT's, another Host inside the tunnel, HTTP/2's
 * preface, ambiguous framing), and raw bytes for a tunnel without TLS.
 *
 * The upstream's certificate names localhost and 127.0.0.1; the allowed
 * origins are https://localhost:PORT (tunnelled) and
 * https://127.0.0.1:PORT (an IP literal: never tunnelled, but a second
 * allowed origin to front with); http://plain.example is never tunnelled
 * either (its requests go upstream in the clear).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sandbox-test-gateway.h"

#define SECRET SANDBOX_TEST_GATEWAY_SECRET

typedef struct
{
  SandboxTestGatewayFixture base;
  char *state;              /* the test's, holding the CA directory */
  char *ca_directory;
  char *origin;             /* https://localhost:PORT */
  char *authority;          /* localhost:PORT */
} Fixture;

static void
set_up (Fixture       *fixture,
        gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  SandboxGateway *gateway;
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  guint16 port;

  sandbox_test_gateway_set_up_full (&fixture->base, SANDBOX_TEST_UPSTREAM_TLS, NULL, NULL);
  port = sandbox_test_upstream_get_port (fixture->base.upstream);
  fixture->authority = g_strdup_printf ("localhost:%u", port);
  fixture->origin = g_strdup_printf ("https://%s", fixture->authority);
  json = g_strdup_printf ("{\"allow\": ["
                          "{\"origin\": \"%s\", \"headers\": {\"Authorization\": \"" SECRET "\"}},"
                          "{\"origin\": \"https://127.0.0.1:%u\"},"
                          "{\"origin\": \"http://plain.example\"},"
                          "{\"pattern\": \"https://*.pat.localhost:%u\"}]}",
                          fixture->origin, port, port);
  policy = sandbox_network_policy_new_from_json (json, &error);
  g_assert_no_error (error);

  fixture->state = g_dir_make_tmp ("sandbox-test-tunnel-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->ca_directory = g_build_filename (fixture->state, "gateway-ca", NULL);
  gateway = g_initable_new (SANDBOX_TYPE_GATEWAY, NULL, &error,
                            "policy", policy,
                            "request-timeout-ms", 60000,
                            "header-timeout-ms", 10000,
                            "ca-directory", fixture->ca_directory,
                            "upstream-ca-file",
                            sandbox_test_upstream_get_ca_file (fixture->base.upstream),
                            NULL);
  g_assert_no_error (error);
  sandbox_test_gateway_adopt (&fixture->base, gateway);
  sandbox_test_gateway_add_proxy (&fixture->base);
}

static void
tear_down (Fixture       *fixture,
           gconstpointer  data)
{
  g_autofree char *certificate = g_build_filename (fixture->ca_directory, "ca.pem", NULL);
  g_autofree char *key = g_build_filename (fixture->ca_directory, "ca.key", NULL);

  sandbox_test_gateway_tear_down (&fixture->base, data);
  g_unlink (certificate);
  g_unlink (key);
  g_rmdir (fixture->ca_directory);
  g_rmdir (fixture->state);
  g_free (fixture->ca_directory);
  g_free (fixture->state);
  g_free (fixture->origin);
  g_free (fixture->authority);
}

/* Clients */

/* curl through the proxy, trusting the gateway's CA only; its output is
 * the body, then the status on a line of its own. */
static char *
run_curl (Fixture    *fixture,
          const char *url,
          int        *exit_status)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                                                       G_SUBPROCESS_FLAGS_STDERR_MERGE);
  g_autoptr(GSubprocess) curl = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *proxy = g_strdup_printf ("http://127.0.0.1:%u", fixture->base.proxy_port);
  g_autofree char *ca_file = g_build_filename (fixture->ca_directory, "ca.pem", NULL);
  char *output = NULL;
  const char * const environment[] = { "PATH=/usr/bin:/bin", NULL };

  g_subprocess_launcher_set_environ (launcher, (char **) environment);
  curl = g_subprocess_launcher_spawn (launcher, &error, "curl", "-sS", "--max-time", "60",
                                      "--proxy", proxy, "--noproxy", "", "--cacert", ca_file,
                                      "-w", "\n%{http_code}", url, NULL);
  g_assert_no_error (error);
  g_subprocess_communicate_utf8 (curl, NULL, NULL, &output, NULL, &error);
  g_assert_no_error (error);
  *exit_status = g_subprocess_get_exit_status (curl);
  return output;
}

/* Reads a CONNECT's answer head, and nothing after it. */
static guint
read_connect_answer (GSocketConnection *connection)
{
  GInputStream *input = g_io_stream_get_input_stream (G_IO_STREAM (connection));
  g_autoptr(GString) head = g_string_new (NULL);
  guint status = 0;

  while (!g_str_has_suffix (head->str, "\r\n\r\n"))
    {
      char byte;
      g_autoptr(GError) error = NULL;

      if (g_input_stream_read (input, &byte, 1, NULL, &error) != 1)
        break;
      g_string_append_c (head, byte);
    }
  sscanf (head->str, "HTTP/1.1 %u", &status);
  return status;
}

static gboolean
accept_any (GTlsConnection       *connection,
            GTlsCertificate      *certificate,
            GTlsCertificateFlags  errors,
            gpointer              user_data)
{
  return TRUE;
}

/*
 * open_tunnel:
 * @authority: what the CONNECT names
 * @sni: (nullable): the server name the TLS client sends
 *
 * Returns: (transfer full) (nullable): the TLS connection inside the tunnel,
 *   or %NULL when the CONNECT was not answered 200 (*status says what)
 */
static GIOStream *
open_tunnel (Fixture    *fixture,
             const char *authority,
             const char *sni,
             guint      *status)
{
  g_autoptr(GSocketConnection) connection = sandbox_test_proxy_connect (&fixture->base);
  g_autofree char *request = g_strdup_printf ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
                                              authority, authority);
  g_autoptr(GSocketConnectable) identity = NULL;
  g_autoptr(GIOStream) tls = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_test_guest_send (connection, request, strlen (request));
  *status = read_connect_answer (connection);
  if (*status != 200)
    return NULL;

  identity = sni != NULL ? g_network_address_new (sni, 443) : NULL;
  tls = g_tls_client_connection_new (G_IO_STREAM (connection), identity, &error);
  g_assert_no_error (error);
  /* The guest is the attacker here: it takes any certificate. */
  g_signal_connect (tls, "accept-certificate", G_CALLBACK (accept_any), NULL);
  g_tls_connection_handshake (G_TLS_CONNECTION (tls), NULL, &error);
  g_assert_no_error (error);
  return g_steal_pointer (&tls);
}

/* Sends @request in the tunnel and reads until the gateway closes it. */
static char *
exchange_in_tunnel (GIOStream  *tls,
                    const char *request)
{
  GOutputStream *output = g_io_stream_get_output_stream (tls);
  GInputStream *input = g_io_stream_get_input_stream (tls);
  g_autoptr(GByteArray) answer = g_byte_array_new ();
  g_autoptr(GError) error = NULL;
  guint8 buffer[4096];
  gssize n;

  g_output_stream_write_all (output, request, strlen (request), NULL, NULL, &error);
  g_assert_no_error (error);
  while ((n = g_input_stream_read (input, buffer, sizeof buffer, NULL, &error)) > 0)
    g_byte_array_append (answer, buffer, (guint) n);
  g_byte_array_append (answer, (const guint8 *) "", 1);
  return (char *) g_byte_array_free (g_steal_pointer (&answer), FALSE);
}

static guint
status_of (const char *answer)
{
  guint status = 0;

  sscanf (answer, "HTTP/1.1 %u", &status);
  return status;
}

/* Allowed */

/* curl https:// through the proxy: the answer is the upstream's, the
 * upstream saw the rule's credential, and the events say the request came
 * through a tunnel the CONNECT opened. */
static void
test_curl_through_tunnel (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autofree char *url = g_strdup_printf ("%s/x?q=1", fixture->origin);
  g_autofree char *output = NULL;
  SandboxGatewayEvent *event;
  int status;

  output = run_curl (fixture, url, &status);
  g_assert_cmpstr (output, ==, "GET /x?q=1 0\n200");
  g_assert_cmpint (status, ==, 0);

  g_assert_cmpuint (sandbox_test_upstream_count (fixture->base.upstream), ==, 1);
  g_assert_nonnull (strstr (sandbox_test_upstream_get (fixture->base.upstream, 0)->headers,
                            "Authorization: " SECRET "\n"));
  sandbox_test_gateway_wait_for_events (&fixture->base, 2);
  event = g_ptr_array_index (fixture->base.events, 0);
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_ALLOWED, "tunnel-opened", 200);
  g_assert_cmpstr (sandbox_gateway_event_get_method (event), ==, "CONNECT");
  g_assert_cmpint (sandbox_gateway_event_get_arrival (event), ==, SANDBOX_GATEWAY_ARRIVAL_PROXY);
  event = g_ptr_array_index (fixture->base.events, 1);
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_ALLOWED, "forwarded", 200);
  g_assert_cmpint (sandbox_gateway_event_get_arrival (event), ==, SANDBOX_GATEWAY_ARRIVAL_TUNNEL);
  g_assert_cmpstr (sandbox_gateway_event_get_path (event), ==, "/x?q=1");
}

/* The leaf is for the CONNECT's host, signed by the CA in ca-directory;
 * ALPN offers http/1.1 alone, even to a client that asks for h2 first. */
static void
test_certificate_and_alpn (Fixture       *fixture,
                           gconstpointer  data)
{
  static const char * const protocols[] = { "h2", "http/1.1", NULL };
  g_autoptr(GSocketConnection) connection = sandbox_test_proxy_connect (&fixture->base);
  g_autofree char *request = g_strdup_printf ("CONNECT %s HTTP/1.1\r\n\r\n", fixture->authority);
  g_autofree char *ca_file = g_build_filename (fixture->ca_directory, "ca.pem", NULL);
  g_autoptr(GTlsDatabase) database = g_tls_file_database_new (ca_file, NULL);
  g_autoptr(GSocketConnectable) identity = g_network_address_new ("localhost", 443);
  g_autoptr(GIOStream) tls = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (database);
  g_assert_cmpstr (sandbox_gateway_get_ca_file (fixture->base.gateway), ==, ca_file);
  sandbox_test_guest_send (connection, request, strlen (request));
  g_assert_cmpuint (read_connect_answer (connection), ==, 200);
  tls = g_tls_client_connection_new (G_IO_STREAM (connection), identity, &error);
  g_assert_no_error (error);
  g_tls_connection_set_database (G_TLS_CONNECTION (tls), database);
  g_tls_connection_set_advertised_protocols (G_TLS_CONNECTION (tls), protocols);
  /* No accept-certificate handler: the handshake fails unless the
   * certificate names localhost and the CA signed it. */
  g_tls_connection_handshake (G_TLS_CONNECTION (tls), NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (g_tls_connection_get_negotiated_protocol (G_TLS_CONNECTION (tls)), ==, "http/1.1");
}

/* The CA's key is 0600; a second gateway on the same directory uses the
 * same CA rather than making another. */
static void
test_ca_kept (Fixture       *fixture,
              gconstpointer  data)
{
  g_autofree char *key = g_build_filename (fixture->ca_directory, "ca.key", NULL);
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autoptr(SandboxGateway) other = NULL;
  g_autoptr(GError) error = NULL;
  GStatBuf status;

  g_assert_cmpint (g_stat (key, &status), ==, 0);
  g_assert_cmpint (status.st_mode & 0777, ==, 0600);
  g_file_get_contents (sandbox_gateway_get_ca_file (fixture->base.gateway), &first, NULL, &error);
  g_assert_no_error (error);

  other = g_initable_new (SANDBOX_TYPE_GATEWAY, NULL, &error, "ca-directory", fixture->ca_directory, NULL);
  g_assert_no_error (error);
  g_file_get_contents (sandbox_gateway_get_ca_file (other), &second, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (first, ==, second);

  /* A key others may read is refused, not used. */
  g_assert_cmpint (g_chmod (key, 0644), ==, 0);
  g_clear_object (&other);
  other = g_initable_new (SANDBOX_TYPE_GATEWAY, NULL, &error, "ca-directory", fixture->ca_directory, NULL);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_null (other);
  g_chmod (key, 0600);
}

/* Refused */

/* CONNECTs no tunnel may follow: a host no rule has, the allowed host on
 * another port, an allowed origin's IP literal, an http origin's host. Each is refused with
 * 403 before a byte is relayed, and audited. */
static void
test_connect_refused (Fixture       *fixture,
                      gconstpointer  data)
{
  guint16 port = sandbox_test_upstream_get_port (fixture->base.upstream);
  g_autofree char *other_port = g_strdup_printf ("localhost:%u", port == 1 ? 2 : 1);
  g_autofree char *literal = g_strdup_printf ("127.0.0.1:%u", port);
  struct
  {
    const char *authority;
    const char *reason;
  } cases[] = {
    { "evil.example:443", "host-not-allowed" },
    { other_port, "host-not-allowed" },
    { literal, "tunnel-to-ip-literal" },
    { "plain.example:80", "tunnel-not-https" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GIOStream) tls = NULL;
      SandboxGatewayEvent *event;
      guint status;

      tls = open_tunnel (fixture, cases[i].authority, NULL, &status);
      g_assert_null (tls);
      g_assert_cmpuint (status, ==, 403);
      sandbox_test_gateway_wait_for_events (&fixture->base, i + 1);
      event = sandbox_test_gateway_last_event (&fixture->base);
      sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_DENIED, cases[i].reason, 403);
      g_assert_cmpstr (sandbox_gateway_event_get_host (event), ==, cases[i].authority);
    }
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->base.upstream), ==, 0);
}

/* A TLS client that asks for another host than its CONNECT named (even
 * one the policy allows): refused before the handshake, audited with the
 * name it asked for, and nothing goes upstream. */
static void
test_sni_not_connect_host (Fixture       *fixture,
                           gconstpointer  data)
{
  const char *names[] = { "other.example", "localhost.evil.example" };

  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(GSocketConnection) connection = sandbox_test_proxy_connect (&fixture->base);
      g_autofree char *request = g_strdup_printf ("CONNECT %s HTTP/1.1\r\n\r\n", fixture->authority);
      g_autoptr(GSocketConnectable) identity = g_network_address_new (names[i], 443);
      g_autoptr(GIOStream) tls = NULL;
      g_autoptr(GError) error = NULL;
      SandboxGatewayEvent *event;

      sandbox_test_guest_send (connection, request, strlen (request));
      g_assert_cmpuint (read_connect_answer (connection), ==, 200);
      tls = g_tls_client_connection_new (G_IO_STREAM (connection), identity, &error);
      g_assert_no_error (error);
      g_signal_connect (tls, "accept-certificate", G_CALLBACK (accept_any), NULL);
      g_assert_false (g_tls_connection_handshake (G_TLS_CONNECTION (tls), NULL, &error));
      g_assert_nonnull (error);

      /* The CONNECT's event, then the refusal's. */
      sandbox_test_gateway_wait_for_events (&fixture->base, 2 * (i + 1));
      event = sandbox_test_gateway_last_event (&fixture->base);
      sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_DENIED, "sni-not-connect-host", 0);
      g_assert_cmpstr (sandbox_gateway_event_get_host (event), ==, names[i]);
      g_assert_cmpint (sandbox_gateway_event_get_arrival (event), ==, SANDBOX_GATEWAY_ARRIVAL_TUNNEL);
    }
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->base.upstream), ==, 0);
}

/* A tunnel that carries no TLS (plain HTTP after the 200) is no way
 * around the gateway's TLS: closed, audited, nothing relayed. */
static void
test_plain_bytes_in_tunnel (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(GSocketConnection) connection = sandbox_test_proxy_connect (&fixture->base);
  g_autofree char *request = g_strdup_printf ("CONNECT %s HTTP/1.1\r\n\r\n", fixture->authority);
  g_autofree char *inner = g_strdup_printf ("GET /x HTTP/1.1\r\nHost: %s\r\n\r\n", fixture->authority);

  sandbox_test_guest_send (connection, request, strlen (request));
  g_assert_cmpuint (read_connect_answer (connection), ==, 200);
  sandbox_test_guest_send (connection, inner, strlen (inner));
  g_assert_true (sandbox_test_guest_sees_eof (connection));
  sandbox_test_gateway_wait_for_events (&fixture->base, 2);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (&fixture->base),
                             SANDBOX_GATEWAY_DECISION_DENIED, "invalid-client-hello", 0);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->base.upstream), ==, 0);
}

/* curl refused for an origin no rule allows: its CONNECT fails. */
static void
test_curl_refused (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autofree char *output = NULL;
  int status;

  output = run_curl (fixture, "https://evil.example/x", &status);
  g_assert_cmpint (status, !=, 0);
  g_assert_nonnull (strstr (output, "403"));
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->base.upstream), ==, 0);
}

/* Inside a tunnel to one allowed origin, requests that name another (even
 * an allowed one), that are not origin-form, that start HTTP/2 or that are
 * ambiguously framed: refused, and nothing reaches the upstream. */
static void
test_tunnel_requests_refused (Fixture       *fixture,
                              gconstpointer  data)
{
  guint16 port = sandbox_test_upstream_get_port (fixture->base.upstream);
  g_autofree char *fronted = g_strdup_printf ("GET /x HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                                              "Connection: close\r\n\r\n", port);
  g_autofree char *absolute = g_strdup_printf ("GET %s/x HTTP/1.1\r\nHost: %s\r\n"
                                               "Connection: close\r\n\r\n",
                                               fixture->origin, fixture->authority);
  g_autofree char *smuggled = g_strdup_printf ("POST /x HTTP/1.1\r\nHost: %s\r\n"
                                               "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                                               "0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: %s\r\n\r\n",
                                               fixture->authority, fixture->authority);
  struct
  {
    const char *name;
    const char *request;
    guint status;        /* 0: no success, the connection closed */
    const char *reason;
  } cases[] = {
    { "host-not-connect-host", fronted, 403, "host-not-tunnel-origin" },
    /* libsoup answers a target of another scheme itself (400). */
    { "absolute-form", absolute, 400, NULL },
    /* libsoup 3.2 drops the connection without an answer. */
    { "http2-prior-knowledge", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 0, NULL },
    { "ambiguous-framing", smuggled, 400, "ambiguous-framing" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GIOStream) tls = NULL;
      g_autofree char *answer = NULL;
      guint status;

      g_test_message ("%s", cases[i].name);
      tls = open_tunnel (fixture, fixture->authority, "localhost", &status);
      g_assert_nonnull (tls);
      answer = exchange_in_tunnel (tls, cases[i].request);
      if (cases[i].status != 0)
        g_assert_cmpuint (status_of (answer), ==, cases[i].status);
      else
        g_assert_true (status_of (answer) == 0 || status_of (answer) >= 400);
      if (cases[i].reason != NULL)
        {
          SandboxGatewayEvent *event;

          /* The CONNECT's own event comes first. */
          sandbox_test_gateway_wait_for_events (&fixture->base, fixture->base.events->len + 1);
          event = sandbox_test_gateway_last_event (&fixture->base);
          sandbox_test_assert_event (event, cases[i].status == 400 ? SANDBOX_GATEWAY_DECISION_BAD_REQUEST
                                                                   : SANDBOX_GATEWAY_DECISION_DENIED,
                                     cases[i].reason, cases[i].status);
          g_assert_cmpint (sandbox_gateway_event_get_arrival (event), ==, SANDBOX_GATEWAY_ARRIVAL_TUNNEL);
        }
    }
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->base.upstream), ==, 0);
}

/* A pattern's CONNECT opens a tunnel for the host it covers, with a
 * certificate for that host; inside, only that host: another the same
 * pattern covers is domain fronting too. Hosts it does not cover are
 * refused before any tunnel. */
static void
test_pattern_tunnel (Fixture       *fixture,
                     gconstpointer  data)
{
  guint16 port = sandbox_test_upstream_get_port (fixture->base.upstream);
  g_autofree char *covered = g_strdup_printf ("api.pat.localhost:%u", port);
  g_autofree char *deeper = g_strdup_printf ("a.b.pat.localhost:%u", port);
  g_autofree char *fronted = g_strdup_printf ("GET /x HTTP/1.1\r\nHost: other.pat.localhost:%u\r\n"
                                              "Connection: close\r\n\r\n", port);
  g_autoptr(GIOStream) tls = NULL;
  g_autoptr(GIOStream) refused = NULL;
  g_autofree char *answer = NULL;
  GTlsCertificate *certificate;
  g_autoptr(GSocketConnectable) identity = g_network_address_new ("api.pat.localhost", 443);
  guint status;

  refused = open_tunnel (fixture, deeper, NULL, &status);
  g_assert_null (refused);
  g_assert_cmpuint (status, ==, 403);

  tls = open_tunnel (fixture, covered, "api.pat.localhost", &status);
  g_assert_nonnull (tls);
  certificate = g_tls_connection_get_peer_certificate (G_TLS_CONNECTION (tls));
  g_assert_nonnull (certificate);
  g_assert_cmpint (g_tls_certificate_verify (certificate, identity, NULL) &
                   G_TLS_CERTIFICATE_BAD_IDENTITY, ==, 0);
  answer = exchange_in_tunnel (tls, fronted);
  g_assert_cmpuint (status_of (answer), ==, 403);
  sandbox_test_gateway_wait_for_events (&fixture->base, fixture->base.events->len + 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (&fixture->base),
                             SANDBOX_GATEWAY_DECISION_DENIED, "host-not-tunnel-origin", 403);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->base.upstream), ==, 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  if (!g_file_test ("/usr/bin/curl", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("curl is not installed");
      return g_test_run ();
    }

#define ADD(path, func) \
  g_test_add ("/sandbox/gateway/tunnel/" path, Fixture, NULL, set_up, func, tear_down)
  ADD ("curl-through-tunnel", test_curl_through_tunnel);
  ADD ("certificate-and-alpn", test_certificate_and_alpn);
  ADD ("ca-kept", test_ca_kept);
  ADD ("connect-refused", test_connect_refused);
  ADD ("curl-refused", test_curl_refused);
  ADD ("sni-not-connect-host", test_sni_not_connect_host);
  ADD ("plain-bytes-in-tunnel", test_plain_bytes_in_tunnel);
  ADD ("tunnel-requests-refused", test_tunnel_requests_refused);
  ADD ("pattern-tunnel", test_pattern_tunnel);
#undef ADD

  return g_test_run ();
}
