/* test-gateway-hostile.c — SandboxGateway against denied and hostile requests
 *
 * What the policy denies (other hosts, CONNECT, TRACE, deny-all) and what a
 * hostile guest writes as raw bytes (smuggling, ambiguous framing, control
 * bytes, truncated heads and bodies, malformed chunks): refused, audited,
 * and nothing of it reaching the upstream. The upstream and the raw guests
 * are the kit's (tests/kit/sandbox-test-gateway.h).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <malloc.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <gio/gunixsocketaddress.h>
#include <libsoup/soup.h>

#include "sandbox-test-gateway.h"

#define SECRET SANDBOX_TEST_GATEWAY_SECRET
#define MIB (1024 * 1024)

typedef SandboxTestGatewayFixture Fixture;

static void
test_denied_host (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = NULL;

  response = sandbox_test_guest_request (fixture,
                                         "GET /echo HTTP/1.1\r\nHost: api.example.com\r\n\r\n");

  sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED", "Sandbox network denied");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);

  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_DENIED, "host-not-allowed", 403);
  g_assert_cmpstr (sandbox_gateway_event_get_host (sandbox_test_gateway_last_event (fixture)), ==,
                   "api.example.com");
}

static void
test_denied_by_deny_all_and_allow_all (Fixture       *fixture,
                                       gconstpointer  data)
{
  SandboxNetworkPolicy *policies[] = {
    sandbox_network_policy_new_deny_all (),
    sandbox_network_policy_new_allow_all (),
  };

  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_autoptr(SandboxTestResponse) response = NULL;

      sandbox_gateway_set_policy (fixture->gateway, policies[i]);
      response = sandbox_test_guest_request (fixture, "GET /echo HTTP/1.1\r\nHost: %s\r\n\r\n",
                                             fixture->host);
      sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED",
                                   "Sandbox network denied");
      g_object_unref (policies[i]);
    }

  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
}

static void
test_denied_double_slash (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = NULL;

  response = sandbox_test_guest_request (fixture,
                                         "GET //evil.example/x HTTP/1.1\r\nHost: %s\r\n\r\n", fixture->host);

  sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED", "Sandbox network denied");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_DENIED, "target-not-allowed", 403);
}

static void
test_denied_connect (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = NULL;

  response = sandbox_test_guest_request (fixture, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
                            fixture->host, fixture->host);

  sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED", "Sandbox network denied");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_DENIED, "method-not-allowed", 403);
}

static void
test_denied_trace (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = NULL;

  response = sandbox_test_guest_request (fixture, "TRACE /echo HTTP/1.1\r\nHost: %s\r\n\r\n",
                                         fixture->host);

  sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED", "Sandbox network denied");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_DENIED, "method-not-allowed", 403);
}

typedef struct
{
  const char *name;
  const char *request;   /* %s is the allowed host */
  guint status;
  const char *reason;
} HostileCase;

static const HostileCase hostile_cases[] = {
  { "absolute-form", "GET http://evil.example/x HTTP/1.1\r\nHost: %1$s\r\n\r\n", 403, "absolute-target" },
  /* The target must start with "/" even when it names the Host's own
   * authority (libsoup builds the same request URI from both: without the
   * stream's record of the raw target, this was forwarded, 200). */
  { "absolute-form-same-authority", "GET http://%1$s/ok HTTP/1.1\r\nHost: %1$s\r\n\r\n", 403, "absolute-target" },
  { "absolute-form-same-authority-post",
    "POST http://%1$s/ok HTTP/1.1\r\nHost: %1$s\r\nContent-Length: 2\r\n\r\nhi", 403, "absolute-target" },
  /* libsoup answered it 404 itself before. */
  { "options-asterisk", "OPTIONS * HTTP/1.1\r\nHost: %1$s\r\n\r\n", 403, "target-not-allowed" },
  { "absolute-form-https", "GET https://%1$s/x HTTP/1.1\r\nHost: %1$s\r\n\r\n", 400, "malformed" },
  { "duplicate-host", "GET /x HTTP/1.1\r\nHost: %1$s\r\nHost: evil.example\r\n\r\n", 400, "duplicate-host" },
  { "duplicate-host-reversed", "GET /x HTTP/1.1\r\nHost: evil.example\r\nHost: %1$s\r\n\r\n", 400, "duplicate-host" },
  { "host-userinfo", "GET /x HTTP/1.1\r\nHost: %1$s@evil.example\r\n\r\n", 400, "invalid-host" },
  { "encoded-crlf", "GET /x%%0d%%0aX-Injected:%%20evil HTTP/1.1\r\nHost: %1$s\r\n\r\n", 400, "invalid-target" },
  { "encoded-crlf-upper", "GET /x?a=%%0D%%0AX:%%20evil HTTP/1.1\r\nHost: %1$s\r\n\r\n", 400, "invalid-target" },
  { "encoded-nul", "GET /x%%00evil HTTP/1.1\r\nHost: %1$s\r\n\r\n", 400, "invalid-target" },
  { "backslash", "GET /\\evil.example/x HTTP/1.1\r\nHost: %1$s\r\n\r\n", 400, "invalid-target" },
  { "inner-double-slash", "GET /a//evil.example HTTP/1.1\r\nHost: %1$s\r\n\r\n", 400, "invalid-target" },
  { "content-length-and-chunked",
    "POST /x HTTP/1.1\r\nHost: %1$s\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
    "0\r\n\r\nGET /evil HTTP/1.1\r\nHost: %1$s\r\n\r\n", 400, "ambiguous-framing" },
  { "conflicting-content-length",
    "POST /x HTTP/1.1\r\nHost: %1$s\r\nContent-Length: 3\r\nContent-Length: 40\r\n\r\n"
    "abcGET /evil HTTP/1.1\r\nHost: %1$s\r\n\r\n", 400, "ambiguous-framing" },
  { "duplicate-content-length",
    "POST /x HTTP/1.1\r\nHost: %1$s\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 400, "ambiguous-framing" },
  { "http10-without-host", "GET /x HTTP/1.0\r\n\r\n", 400, "missing-host" },
  { "http11-without-host", "GET /x HTTP/1.1\r\n\r\n", 400, "malformed" },
};

static void
test_hostile (Fixture       *fixture,
              gconstpointer  data)
{
  const HostileCase *hostile = data;
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);
  g_autoptr(SandboxTestResponse) response = NULL;
  g_autofree char *request = NULL;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  request = g_strdup_printf (hostile->request, fixture->host);
#pragma GCC diagnostic pop

  sandbox_test_guest_send (connection, request, strlen (request));
  response = sandbox_test_guest_read_response (connection);

  g_assert_cmpuint (response->status, ==, hostile->status);

  /* A refused request is the last thing read on its connection: a smuggled
   * second request is never parsed. */
  if (hostile->status == 400)
    g_assert_true (sandbox_test_guest_sees_eof (connection));

  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);

  sandbox_test_gateway_wait_for_events (fixture, 1);
  if (hostile->status == 403)
    {
      /* Routing attempts are denials, like a disallowed host. */
      sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                                 SANDBOX_GATEWAY_DECISION_DENIED, hostile->reason, 403);
      sandbox_test_assert_refused (response, 403, "SANDBOX_NETWORK_DENIED",
                                   "Sandbox network denied");
    }
  else
    {
      sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                                 SANDBOX_GATEWAY_DECISION_BAD_REQUEST, hostile->reason, 400);
      /* libsoup refuses some requests itself, without the gateway's header. */
      if (!g_str_equal (hostile->reason, "malformed"))
        g_assert_cmpstr (sandbox_test_response_header (response, "sandbox-error"), ==,
                         "SANDBOX_INVALID");
    }

  /* The gateway is still healthy. */
  {
    g_autoptr(SandboxTestResponse) healthy = sandbox_test_guest_request (fixture, "GET /ok HTTP/1.1\r\nHost: %s\r\n\r\n",
                                                 fixture->host);

    g_assert_cmpuint (healthy->status, ==, 200);
  }

  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 1);
  sandbox_test_upstream_assert_targets_clean (fixture->upstream);
}

/* libsoup percent-encodes a raw CTL byte in the target; what goes upstream
 * is that encoded form, never the raw byte. */
static void
test_raw_ctl_in_target (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autofree char *request = g_strdup_printf ("GET /x\001y HTTP/1.1\r\nHost: %s\r\n\r\n",
                                              fixture->host);
  g_autoptr(SandboxTestResponse) response = sandbox_test_guest_exchange (fixture, request, strlen (request));

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 1);
  g_assert_cmpstr (sandbox_test_upstream_get (fixture->upstream, 0)->path, ==, "/x%01y");
  sandbox_test_upstream_assert_targets_clean (fixture->upstream);
}

/* libsoup 3.2 takes a request head cut short by the end of the stream for a
 * whole one: a guest that sends part of a head and half-closes must get no
 * answer but the end of the connection, and nothing may reach the upstream. */
static void
test_truncated_head_not_forwarded (Fixture       *fixture,
                                   gconstpointer  data)
{
  const char *line_end = data;
  g_autofree char *partial = g_strdup_printf ("GET /echo HTTP/1.1%sHost: %s%sAccept: */*%s",
                                              line_end, fixture->host, line_end, line_end);
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);
  g_autoptr(SandboxTestResponse) response = NULL;

  sandbox_test_guest_send_and_half_close (connection, partial);

  response = sandbox_test_guest_read_response (connection);
  g_assert_cmpuint (response->status, ==, 0);

  /* Audited as a refused head, and only so: a request that reached the
   * upstream would be audited as allowed too. */
  sandbox_test_gateway_wait_for_exactly (fixture, 1);
  sandbox_test_assert_refused_head (sandbox_test_gateway_last_event (fixture), "incomplete-head",
                                    0);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
}

/* A body cut short by the end of the connection — fewer bytes than its
 * Content-Length, a chunked body without its last chunk, or one without the
 * end of its trailers — is never forwarded, and is audited with the request
 * it belonged to. (libsoup 3.2 alone ends a chunked body at the end of the
 * stream, and the gateway used to forward its first part as the whole.) */
static void
test_truncated_body_not_forwarded (Fixture       *fixture,
                                   gconstpointer  data)
{
  const char *framing_and_body = data;
  g_autofree char *partial = g_strdup_printf ("POST /echo HTTP/1.1\r\nHost: %s\r\n%s",
                                              fixture->host, framing_and_body);
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);
  g_autoptr(SandboxTestResponse) response = NULL;

  sandbox_test_guest_send_and_half_close (connection, partial);

  response = sandbox_test_guest_read_response (connection);
  g_assert_cmpuint (response->status, ==, 0);

  sandbox_test_gateway_wait_for_exactly (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_BAD_REQUEST, "incomplete-body", 0);
  g_assert_cmpstr (sandbox_gateway_event_get_method (sandbox_test_gateway_last_event (fixture)),
                   ==, "POST");
  g_assert_cmpstr (sandbox_gateway_event_get_path (sandbox_test_gateway_last_event (fixture)), ==,
                   "/echo");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
}

typedef struct
{
  const char *name;
  const char *body;     /* after the chunked head */
  const char *reason;
} ChunkedCase;

/* Chunked framing libsoup 3.2 would misread: its chunk sizes go through an
 * unchecked strtoul() (so "zz", an empty line, a sign or an overflow end the
 * body early, and the rest is parsed as a new request), the line after a
 * chunk's data and the length of a size line are not checked, and the first
 * line after the last chunk ends the body whatever it holds (so trailer
 * lines become a request). Without the stream's own check, the upstream
 * received the POST with an empty or cut body and the credential, the guest
 * got 200, and the smuggled GET was forwarded too. */
static const ChunkedCase chunked_cases[] = {
  { "overflow", "FFFFFFFFFFFFFFFF1\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "overflow-exact", "10000000000000000\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "not-hex", "zz\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "empty-size", "\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "plus-sign", "+5\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "minus-one", "-1\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "hex-prefix", "0x5\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "leading-space", " 5\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "ext-too-long", "5;aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "ext-control-byte", "5;a\001b\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "ext-bare-cr", "5;a\rb\r\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "size-bare-lf", "5\nhello\r\n0\r\n\r\n", "invalid-chunk" },
  { "data-bare-lf", "5\r\nhello\n0\r\n\r\n", "invalid-chunk" },
  { "data-overrun", "5\r\nhelloXX\r\n0\r\n\r\n", "invalid-chunk" },
  { "last-chunk-bare-lf", "5\r\nhello\r\n0\n\r\n", "invalid-chunk" },
  { "final-bare-lf", "5\r\nhello\r\n0\r\n\n", "invalid-chunk" },
  { "trailer", "5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n", "request-trailers" },
  { "trailer-smuggled-request", "5\r\nhello\r\n0\r\nGET /evil HTTP/1.1\r\nHost: x\r\n\r\n", "request-trailers" },
};

static void
test_chunked_framing_refused (Fixture       *fixture,
                              gconstpointer  data)
{
  const ChunkedCase *chunked = data;
  g_autofree char *request = g_strdup_printf ("POST /echo HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n\r\n"
                                              "%sGET /evil HTTP/1.1\r\nHost: %s\r\n\r\n",
                                              fixture->host, chunked->body, fixture->host);
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);
  g_autoptr(SandboxTestResponse) response = NULL;
  SandboxGatewayEvent *event;

  sandbox_test_guest_send (connection, request, strlen (request));
  response = sandbox_test_guest_read_response (connection);

  /* Answered, nothing forwarded, and nothing more parsed. */
  sandbox_test_assert_refused (response, 400, "SANDBOX_INVALID", "Sandbox bad request");
  g_assert_cmpstr (sandbox_test_response_header (response, "connection"), ==, "close");
  g_assert_true (sandbox_test_guest_sees_eof (connection));
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);

  sandbox_test_gateway_wait_for_exactly (fixture, 1);
  event = sandbox_test_gateway_last_event (fixture);
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_BAD_REQUEST, chunked->reason, 400);
  g_assert_cmpstr (sandbox_gateway_event_get_method (event), ==, "POST");
  g_assert_cmpstr (sandbox_gateway_event_get_path (event), ==, "/echo");

  {
    g_autoptr(SandboxTestResponse) healthy = sandbox_test_guest_request (fixture, "GET /ok HTTP/1.1\r\nHost: %s\r\n\r\n",
                                                 fixture->host);

    g_assert_cmpuint (healthy->status, ==, 200);
  }
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 1);
  sandbox_test_upstream_assert_targets_clean (fixture->upstream);
}

static void
add_fixture_test (const char *path,
                  void      (*test) (Fixture *, gconstpointer),
                  gconstpointer data)
{
  g_test_add (path, Fixture, data, sandbox_test_gateway_set_up, test,
              sandbox_test_gateway_tear_down);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  add_fixture_test ("/sandbox/gateway/hostile/truncated-head-crlf",
                    test_truncated_head_not_forwarded, "\r\n");
  add_fixture_test ("/sandbox/gateway/hostile/truncated-head-lf",
                    test_truncated_head_not_forwarded, "\n");
  add_fixture_test ("/sandbox/gateway/hostile/truncated-body-content-length",
                    test_truncated_body_not_forwarded, "Content-Length: 10\r\n\r\nhello");
  add_fixture_test ("/sandbox/gateway/hostile/truncated-body-chunked",
                    test_truncated_body_not_forwarded, "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n");
  add_fixture_test ("/sandbox/gateway/hostile/truncated-body-chunked-trailers",
                    test_truncated_body_not_forwarded, "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n");
  add_fixture_test ("/sandbox/gateway/denied/host", test_denied_host, NULL);
  add_fixture_test ("/sandbox/gateway/denied/deny-all-and-allow-all",
                    test_denied_by_deny_all_and_allow_all, NULL);
  add_fixture_test ("/sandbox/gateway/denied/double-slash", test_denied_double_slash, NULL);
  add_fixture_test ("/sandbox/gateway/denied/connect", test_denied_connect, NULL);
  add_fixture_test ("/sandbox/gateway/denied/trace", test_denied_trace, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (hostile_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sandbox/gateway/hostile/%s",
                                               hostile_cases[i].name);

      add_fixture_test (path, test_hostile, &hostile_cases[i]);
    }

  add_fixture_test ("/sandbox/gateway/hostile/raw-ctl-in-target", test_raw_ctl_in_target, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (chunked_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sandbox/gateway/hostile/chunked-%s",
                                               chunked_cases[i].name);

      add_fixture_test (path, test_chunked_framing_refused, &chunked_cases[i]);
    }

  return g_test_run ();
}
