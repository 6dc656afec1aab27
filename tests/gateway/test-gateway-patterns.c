/* test-gateway-patterns.c — allow-list rules that name a pattern
 *
 * A rule's "pattern" (the opt-in; "origin" stays exact) allows every host
 * one DNS label deeper than its name, on its scheme and port. The upstream
 * is the kit's on 127.0.0.1; the hosts are under "pat.localhost", which
 * libcurl resolves to the loopback itself (any *.localhost), so the
 * gateway's upstream request really goes to the host the pattern covered.
 * Refused: the pattern's own name, two labels deeper, another port, a
 * bracketed address, the default port spelled out. An exact origin of the
 * same policy wins over the pattern, with its own headers.
 *
 * To see it fail: make pattern_matches_hostname()
 * (libsandbox-core/sandbox-network-rule.c) accept a label with dots; the
 * two-labels-deeper request is then forwarded.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-test-gateway.h"

#define PATTERN_SECRET "Bearer pattern-secret-41"
#define EXACT_SECRET "Bearer exact-secret-42"

typedef SandboxTestGatewayFixture Fixture;

static void
set_up (Fixture       *fixture,
        gconstpointer  data)
{
  guint16 port;
  g_autofree char *json = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_test_gateway_set_up_full (fixture, SANDBOX_TEST_UPSTREAM_RAW_PATHS, NULL, NULL);
  port = sandbox_test_upstream_get_port (fixture->upstream);
  json = g_strdup_printf ("{\"allow\": ["
                          "{\"pattern\": \"http://*.pat.localhost:%u\","
                          " \"headers\": {\"Authorization\": \"" PATTERN_SECRET "\"}},"
                          "{\"origin\": \"http://exact.pat.localhost:%u\","
                          " \"headers\": {\"Authorization\": \"" EXACT_SECRET "\"}}]}",
                          port, port);
  policy = sandbox_network_policy_new_from_json (json, &error);
  g_assert_no_error (error);
  sandbox_test_gateway_start (fixture, policy, 5000, 2000);
}

static SandboxTestResponse *
request_to (Fixture    *fixture,
            const char *hostname)
{
  guint16 port = sandbox_test_upstream_get_port (fixture->upstream);

  return sandbox_test_guest_request (fixture, "GET /echo HTTP/1.1\r\nHost: %s:%u\r\n\r\n",
                                     hostname, port);
}

static void
test_covered_host_forwarded (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = request_to (fixture, "api.pat.localhost");
  g_autoptr(SandboxTestResponse) upper = request_to (fixture, "API2.Pat.LocalHost");
  g_autofree char *host = g_strdup_printf ("Host: api.pat.localhost:%u\n",
                                           sandbox_test_upstream_get_port (fixture->upstream));
  const char *headers;

  g_assert_cmpuint (response->status, ==, 200);
  g_assert_cmpuint (upper->status, ==, 200);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 2);
  headers = sandbox_test_upstream_get (fixture->upstream, 0)->headers;
  g_assert_nonnull (strstr (headers, "Authorization: " PATTERN_SECRET "\n"));
  /* The upstream request went to the covered host, not the pattern. */
  g_assert_nonnull (strstr (headers, host));
  sandbox_test_gateway_wait_for_events (fixture, 2);
  g_assert_true (g_str_has_prefix (sandbox_gateway_event_get_host (
                                    g_ptr_array_index (fixture->events, 0)),
                                  "api.pat.localhost:"));
}

static void
assert_denied (Fixture    *fixture,
               const char *request_host)
{
  g_autoptr(SandboxTestResponse) response =
    sandbox_test_guest_request (fixture, "GET /echo HTTP/1.1\r\nHost: %s\r\n\r\n", request_host);

  if (response->status != 403)
    g_error ("a request to %s was answered %u, not refused", request_host, response->status);
}

static void
test_uncovered_hosts_refused (Fixture       *fixture,
                              gconstpointer  data)
{
  guint16 port = sandbox_test_upstream_get_port (fixture->upstream);
  const char *hosts[] = { "pat.localhost", "a.b.pat.localhost", "-bad.pat.localhost",
                          "pat.localhost.evil.test", "api.pat.localhostx", "[::1]" };

  for (guint i = 0; i < G_N_ELEMENTS (hosts); i++)
    {
      g_autofree char *with_port = g_strdup_printf ("%s:%u", hosts[i], port);

      assert_denied (fixture, with_port);
    }
  /* Another port, and none (the scheme's default, 80). */
  {
    g_autofree char *other_port = g_strdup_printf ("api.pat.localhost:%u", port + 1);

    assert_denied (fixture, other_port);
    assert_denied (fixture, "api.pat.localhost");
  }
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
}

/* The exact origin's rule wins over the pattern that also covers it. */
static void
test_exact_origin_wins (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = request_to (fixture, "exact.pat.localhost");
  const char *headers;

  g_assert_cmpuint (response->status, ==, 200);
  headers = sandbox_test_upstream_get (fixture->upstream, 0)->headers;
  g_assert_nonnull (strstr (headers, "Authorization: " EXACT_SECRET "\n"));
  g_assert_null (strstr (headers, PATTERN_SECRET));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add ("/gateway/patterns/covered-host-forwarded", Fixture, NULL, set_up,
              test_covered_host_forwarded, sandbox_test_gateway_tear_down);
  g_test_add ("/gateway/patterns/uncovered-hosts-refused", Fixture, NULL, set_up,
              test_uncovered_hosts_refused, sandbox_test_gateway_tear_down);
  g_test_add ("/gateway/patterns/exact-origin-wins", Fixture, NULL, set_up,
              test_exact_origin_wins, sandbox_test_gateway_tear_down);
  return g_test_run ();
}
