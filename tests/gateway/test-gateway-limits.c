/* test-gateway-limits.c — SandboxGateway's limits
 *
 * The bounds a guest cannot talk its way past: concurrent requests, body
 * and head sizes, the host's memory under endless heads and huge answers,
 * the connection cap, redirects, and deadlines for slow heads, slow bodies
 * and an upstream that never answers. The upstream and the raw guests are
 * the kit's (tests/kit/sandbox-test-gateway.h).
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

typedef struct
{
  Fixture *fixture;
  guint status;
} SlowGuest;

static gpointer
run_slow_guest (gpointer data)
{
  SlowGuest *guest = data;
  g_autoptr(SandboxTestResponse) response = sandbox_test_guest_request (guest->fixture, "GET /slow HTTP/1.1\r\nHost: %s\r\n\r\n",
                                                guest->fixture->host);

  guest->status = response->status;
  return NULL;
}

/* A guest that closes its connection while its request is upstream has the
 * upstream exchange aborted at once: libcurl lets go of the upstream's
 * connection and the request's slot is freed, so that 20 requests abandoned
 * one after the other (more than the 16 in flight allowed) leave every later
 * one served, not 503 busy. (Without the hang-up watch in
 * sandbox-gateway-stream.c the exchanges ran until the request deadline:
 * the 17th request got 503 and never reached the upstream.) */
static void
test_abandoned_requests_aborted (Fixture       *fixture,
                                 gconstpointer  data)
{
  g_autofree char *request = g_strdup_printf ("GET /never HTTP/1.1\r\nHost: %s\r\n\r\n",
                                              fixture->host);
  const guint n_guests = 20;
  guint abandoned = 0;
  gint64 started, deadline;

  /* A request deadline far longer than the test: only the hang-up can end
   * these exchanges. */
  {
    g_autoptr(SandboxNetworkPolicy) policy = sandbox_test_gateway_policy (sandbox_test_upstream_get_port (fixture->upstream));

    sandbox_test_gateway_start (fixture, policy, 60000, 2000);
  }

  started = g_get_monotonic_time ();
  for (guint i = 0; i < n_guests; i++)
    {
      g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);

      sandbox_test_guest_send (connection, request, strlen (request));
      sandbox_test_upstream_wait_for (fixture->upstream, i + 1);
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
    }

  sandbox_test_gateway_wait_for_events (fixture, n_guests);
  for (guint i = 0; i < fixture->events->len; i++)
    {
      SandboxGatewayEvent *event = g_ptr_array_index (fixture->events, i);

      if (g_str_equal (sandbox_gateway_event_get_reason (event), "client-closed"))
        abandoned++;
    }
  g_assert_cmpuint (abandoned, ==, n_guests);
  g_assert_cmpint (g_get_monotonic_time () - started, <, 30 * G_USEC_PER_SEC);

  /* The upstream sees each of its connections closed by libcurl. */
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  while (sandbox_test_upstream_count_held_closed (fixture->upstream) < n_guests && g_get_monotonic_time () < deadline)
    g_usleep (10 * 1000);
  g_assert_cmpuint (sandbox_test_upstream_count_held_closed (fixture->upstream), ==, n_guests);

  /* Every slot is free again. */
  {
    g_autoptr(SandboxTestResponse) response = sandbox_test_guest_request (fixture, "GET /after HTTP/1.1\r\nHost: %s\r\n\r\n",
                                                  fixture->host);

    g_assert_cmpuint (response->status, ==, 200);
    sandbox_test_assert_body (response, "GET /after 0");
  }
  g_assert_cmpuint (fixture->errors->len, ==, 0);
}

static void
test_busy_at_seventeen (Fixture       *fixture,
                        gconstpointer  data)
{
  SlowGuest guests[17];
  GThread *threads[17];
  guint busy = 0, ok = 0;

  for (guint i = 0; i < G_N_ELEMENTS (guests); i++)
    {
      guests[i] = (SlowGuest) { fixture, 0 };
      threads[i] = g_thread_new ("slow-guest", run_slow_guest, &guests[i]);
    }

  for (guint i = 0; i < G_N_ELEMENTS (guests); i++)
    {
      g_thread_join (threads[i]);
      if (guests[i].status == 503)
        busy++;
      else if (guests[i].status == 200)
        ok++;
    }

  g_assert_cmpuint (busy, ==, 1);
  g_assert_cmpuint (ok, ==, 16);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 16);

  sandbox_test_gateway_wait_for_events (fixture, 17);
  {
    guint busy_events = 0;

    for (guint i = 0; i < fixture->events->len; i++)
      if (sandbox_gateway_event_get_decision (g_ptr_array_index (fixture->events, i)) ==
          SANDBOX_GATEWAY_DECISION_BUSY)
        busy_events++;
    g_assert_cmpuint (busy_events, ==, 1);
  }
}

static void
test_redirect_refused (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = NULL;

  response = sandbox_test_guest_request (fixture, "GET /redirect HTTP/1.1\r\nHost: %s\r\n\r\n",
                                         fixture->host);

  sandbox_test_assert_refused (response, 502, "SANDBOX_NETWORK_DENIED",
                               "Sandbox upstream request failed");
  g_assert_null (sandbox_test_response_header (response, "location"));
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 1);
  g_assert_cmpstr (sandbox_test_upstream_get (fixture->upstream, 0)->path, ==, "/redirect");

  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_FAILED, "redirect", 502);
  g_assert_cmpuint (sandbox_gateway_event_get_upstream_status (sandbox_test_gateway_last_event (fixture)), ==, 302);
  g_assert_cmpuint (fixture->errors->len, ==, 1);
  g_assert_error (sandbox_test_gateway_first_error (fixture), SANDBOX_ERROR,
                  SANDBOX_ERROR_NETWORK_DENIED);
}

static void
test_request_body_too_large (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);
  g_autofree char *head = g_strdup_printf ("POST /upload HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n",
                                           fixture->host, MIB + 1);
  g_autofree char *body = g_malloc0 (MIB + 1);
  g_autoptr(SandboxTestResponse) response = NULL;

  sandbox_test_guest_send (connection, head, strlen (head));
  sandbox_test_guest_send (connection, body, MIB + 1);
  response = sandbox_test_guest_read_response (connection);

  sandbox_test_assert_refused (response, 502, "SANDBOX_LIMIT", "Sandbox upstream request failed");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);

  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_FAILED, "request-too-large", 502);
  g_assert_cmpuint (fixture->errors->len, ==, 1);
  g_assert_error (sandbox_test_gateway_first_error (fixture), SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
}

static void
test_chunked_request_body_too_large (Fixture       *fixture,
                                     gconstpointer  data)
{
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);
  g_autofree char *head = g_strdup_printf ("POST /upload HTTP/1.1\r\nHost: %s\r\n"
                                           "Transfer-Encoding: chunked\r\n\r\n", fixture->host);
  g_autofree char *chunk = g_malloc (65536 + 16);
  gsize chunk_length;
  g_autoptr(SandboxTestResponse) response = NULL;

  memcpy (chunk, "10000\r\n", 7);
  memset (chunk + 7, 'a', 65536);
  memcpy (chunk + 7 + 65536, "\r\n", 2);
  chunk_length = 7 + 65536 + 2;

  sandbox_test_guest_send (connection, head, strlen (head));
  for (guint i = 0; i < 17; i++)
    sandbox_test_guest_send (connection, chunk, chunk_length);
  sandbox_test_guest_send (connection, "0\r\n\r\n", 5);

  response = sandbox_test_guest_read_response (connection);
  sandbox_test_assert_refused (response, 502, "SANDBOX_LIMIT", "Sandbox upstream request failed");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);

  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_FAILED, "request-too-large", 502);
}

static void
test_response_body_too_large (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(SandboxTestResponse) response = NULL;

  response = sandbox_test_guest_request (fixture, "GET /big HTTP/1.1\r\nHost: %s\r\n\r\n",
                                         fixture->host);

  sandbox_test_assert_refused (response, 502, "SANDBOX_LIMIT", "Sandbox upstream request failed");
  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_FAILED, "response-too-large", 502);
  g_assert_cmpuint (fixture->errors->len, ==, 1);
  g_assert_error (sandbox_test_gateway_first_error (fixture), SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
}

/* A memory figure of this process from /proc/self/status, in KiB. */
static gsize
status_kib (const char *field)
{
  g_autofree char *status = NULL;
  const char *line;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  line = strstr (status, field);
  g_assert_nonnull (line);
  return g_ascii_strtoull (line + strlen (field), NULL, 10);
}

static gsize
resident_kib (void)
{
  return status_kib ("VmRSS:");
}

static gsize
peak_resident_kib (void)
{
  return status_kib ("VmHWM:");
}

/* A guest streaming an endless request head is cut off at 64 KiB with a 431,
 * audited, nothing reaches the upstream, and the host's memory does not
 * follow what the guest sends. */
static void
test_endless_head_cut_off (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);
  GOutputStream *output = g_io_stream_get_output_stream (G_IO_STREAM (connection));
  g_autofree char *start = g_strdup_printf ("GET /echo HTTP/1.1\r\nHost: %s\r\n", fixture->host);
  g_autofree char *line = g_strdup_printf ("X-Fill: %0*d\r\n", 1000, 0);
  g_autoptr(GString) chunk = g_string_new (NULL);
  g_autoptr(SandboxTestResponse) response = NULL;
  g_autoptr(GError) error = NULL;
  gsize before = peak_resident_kib ();
  gsize sent = 0;

  while (chunk->len < 1024 * 1024)
    g_string_append (chunk, line);

  sandbox_test_guest_send (connection, start, strlen (start));
  /* Up to 256 MiB, or until the gateway stops reading. */
  while (sent < 256 * MIB)
    {
      gsize written = 0;

      if (!g_output_stream_write_all (output, chunk->str, chunk->len, &written, NULL, &error))
        break;
      sent += written;
    }
  g_assert_cmpuint (sent, <, 256 * MIB);
  g_assert_true (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE) ||
                 g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED));

  /* Answered before the connection closed, not reset. */
  response = sandbox_test_guest_read_response (connection);
  sandbox_test_assert_refused (response, 431, "SANDBOX_LIMIT", "Sandbox bad request");
  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_refused_head (sandbox_test_gateway_last_event (fixture), "head-too-large",
                                    431);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
  g_assert_cmpuint (peak_resident_kib (), <, before + 16 * 1024);
}

/* A head over 64 KiB is answered before the connection closes, not reset:
 * 414 while still in the request line (a 100 KB target), 431 after it (a
 * 100 KB header). (Without the answers in on_input_refused(), the guest read
 * the end of the connection and nothing else.) */
static void
test_oversized_head_answered (Fixture       *fixture,
                              gconstpointer  data)
{
  gboolean long_target = GPOINTER_TO_INT (data);
  g_autofree char *filler = g_strnfill (100 * 1024, 'a');
  g_autofree char *request = long_target
    ? g_strdup_printf ("GET /%s HTTP/1.1\r\nHost: %s\r\n\r\n", filler, fixture->host)
    : g_strdup_printf ("GET /echo HTTP/1.1\r\nHost: %s\r\nX-Fill: %s\r\n\r\n", fixture->host,
                       filler);
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);
  GOutputStream *output = g_io_stream_get_output_stream (G_IO_STREAM (connection));
  g_autoptr(SandboxTestResponse) response = NULL;

  /* The gateway may stop reading before all of it is sent. */
  g_output_stream_write_all (output, request, strlen (request), NULL, NULL, NULL);
  response = sandbox_test_guest_read_response (connection);

  if (long_target)
    sandbox_test_assert_refused (response, 414, "SANDBOX_LIMIT", "Sandbox bad request");
  else
    sandbox_test_assert_refused (response, 431, "SANDBOX_LIMIT", "Sandbox bad request");
  g_assert_cmpstr (sandbox_test_response_header (response, "connection"), ==, "close");
  g_assert_true (sandbox_test_guest_sees_eof (connection));
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);

  sandbox_test_gateway_wait_for_exactly (fixture, 1);
  sandbox_test_assert_refused_head (sandbox_test_gateway_last_event (fixture),
                                    long_target ? "target-too-long" : "head-too-large",
                       long_target ? 414 : 431);
}

/* Sends @request on a new connection, ignoring a failed send (a gateway that
 * refuses the connection may close it first), and reads one response. */
static SandboxTestResponse *
guest_try_request (Fixture    *fixture,
                   const char *request)
{
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);
  GOutputStream *output = g_io_stream_get_output_stream (G_IO_STREAM (connection));

  g_output_stream_write_all (output, request, strlen (request), NULL, NULL, NULL);
  return sandbox_test_guest_read_response (connection);
}

/* Past 256 open connections, every one with a request under way, a new
 * one is answered 503, with the gateway's body and Sandbox-Error, before it
 * is closed; once the guest lets go of its connections, new ones are served
 * again. (Without answer_directly() at the cap, the connection was closed
 * silently: status 0 here. Idle connections would be closed to make room
 * instead: test-gateway-eviction.c.) */
static void
test_connection_cap_answered (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_test_gateway_policy (sandbox_test_upstream_get_port (fixture->upstream));
  g_autoptr(GPtrArray) connections = g_ptr_array_new_with_free_func (g_object_unref);
  g_autofree char *request = g_strdup_printf ("GET /ok HTTP/1.1\r\nHost: %s\r\n\r\n",
                                              fixture->host);
  const char *denied = "GET /x HTTP/1.1\r\nHost: denied.example\r\n\r\n";
  const char *begun = "GET /next HTTP/1.1\r\nHost: ";
  gint64 deadline;

  /* Idle connections stay open for the whole test. */
  sandbox_test_gateway_start (fixture, policy, 30000, 30000);

  /* Each connection answered is one the gateway holds (a denial keeps the
   * connection alive, and costs the upstream nothing), busy with the head
   * of its next request. */
  for (guint i = 0; i < 256; i++)
    {
      GSocketConnection *connection = sandbox_test_guest_connect (fixture);
      g_autoptr(SandboxTestResponse) response = NULL;

      g_ptr_array_add (connections, connection);
      sandbox_test_guest_send (connection, denied, strlen (denied));
      response = sandbox_test_guest_read_response (connection);
      g_assert_cmpuint (response->status, ==, 403);
      sandbox_test_guest_send (connection, begun, strlen (begun));
    }

  {
    g_autoptr(SandboxTestResponse) response = guest_try_request (fixture, request);

    sandbox_test_assert_refused (response, 503, "SANDBOX_BUSY", "Sandbox broker busy");
    g_assert_cmpstr (sandbox_test_response_header (response, "connection"), ==, "close");
  }
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);

  /* The gateway lets go of closed connections as it notices them. */
  g_ptr_array_set_size (connections, 0);
  deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;
  for (;;)
    {
      g_autoptr(SandboxTestResponse) response = guest_try_request (fixture, request);

      if (response->status == 200 || g_get_monotonic_time () > deadline)
        {
          g_assert_cmpuint (response->status, ==, 200);
          break;
        }
      g_assert_cmpuint (response->status, ==, 503);
      g_usleep (10 * 1000);
    }
}

static void
test_huge_response_bounded_memory (Fixture       *fixture,
                                   gconstpointer  data)
{
  g_autoptr(GSocketConnection) connection = sandbox_test_guest_connect (fixture);
  g_autofree char *request = g_strdup_printf ("GET /huge HTTP/1.1\r\nHost: %s\r\n\r\n",
                                              fixture->host);
  gsize before = resident_kib ();

  /* The guest sends its request and never reads. */
  sandbox_test_guest_send (connection, request, strlen (request));

  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_FAILED, "response-too-large", 502);
  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (sandbox_test_gateway_last_event (fixture)), <=, MIB);
  g_assert_cmpuint (resident_kib (), <, before + 32 * 1024);
}

static void
test_upstream_never_answers (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_test_gateway_policy (sandbox_test_upstream_get_port (fixture->upstream));
  g_autoptr(SandboxTestResponse) response = NULL;
  gint64 started;

  sandbox_test_gateway_start (fixture, policy, 400, 2000);
  started = g_get_monotonic_time ();
  response = sandbox_test_guest_request (fixture, "GET /never HTTP/1.1\r\nHost: %s\r\n\r\n",
                                         fixture->host);

  sandbox_test_assert_refused (response, 502, "SANDBOX_LIMIT", "Sandbox upstream request failed");
  g_assert_cmpint (g_get_monotonic_time () - started, >=, 350 * 1000);
  g_assert_cmpint (g_get_monotonic_time () - started, <, 5 * G_USEC_PER_SEC);

  sandbox_test_gateway_wait_for_events (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_FAILED, "timeout", 502);
  g_assert_cmpuint (fixture->errors->len, ==, 1);
  g_assert_error (sandbox_test_gateway_first_error (fixture), G_IO_ERROR, G_IO_ERROR_TIMED_OUT);
}

static void
test_slow_headers_closed (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_test_gateway_policy (sandbox_test_upstream_get_port (fixture->upstream));
  g_autoptr(GSocketConnection) connection = NULL;
  g_autofree char *partial = NULL;
  g_autoptr(SandboxTestResponse) response = NULL;
  gint64 started;

  sandbox_test_gateway_start (fixture, policy, 5000, 300);
  connection = sandbox_test_guest_connect (fixture);
  partial = g_strdup_printf ("GET /echo HTTP/1.1\r\nHost: %s\r\n", fixture->host);

  started = g_get_monotonic_time ();
  sandbox_test_guest_send (connection, partial, strlen (partial));
  response = sandbox_test_guest_read_response (connection);

  g_assert_cmpuint (response->status, ==, 0);
  g_assert_cmpint (g_get_monotonic_time () - started, >=, 250 * 1000);
  g_assert_cmpint (g_get_monotonic_time () - started, <, 3 * G_USEC_PER_SEC);
  sandbox_test_gateway_wait_for_exactly (fixture, 1);
  sandbox_test_assert_refused_head (sandbox_test_gateway_last_event (fixture), "header-timeout", 0);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
}

/* A connection that sends nothing, or nothing more after its responses, is
 * ended at the headers deadline without a word in the audit stream. */
static void
test_silent_connection_not_audited (Fixture       *fixture,
                                    gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_test_gateway_policy (sandbox_test_upstream_get_port (fixture->upstream));
  g_autofree char *request = g_strdup_printf ("GET /echo HTTP/1.1\r\nHost: %s\r\n\r\n",
                                              fixture->host);
  g_autoptr(GSocketConnection) silent = NULL;
  g_autoptr(GSocketConnection) idle = NULL;
  g_autoptr(SandboxTestResponse) response = NULL;

  sandbox_test_gateway_start (fixture, policy, 5000, 300);
  silent = sandbox_test_guest_connect (fixture);
  idle = sandbox_test_guest_connect (fixture);
  sandbox_test_guest_send (idle, request, strlen (request));
  response = sandbox_test_guest_read_response (idle);
  g_assert_cmpuint (response->status, ==, 200);

  g_assert_true (sandbox_test_guest_sees_eof (silent));
  g_assert_true (sandbox_test_guest_sees_eof (idle));
  sandbox_test_gateway_wait_for_exactly (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_ALLOWED, "forwarded", 200);
}

/* A guest that sends its body too slowly is cut off at the request deadline,
 * audited, and nothing is forwarded. */
static void
test_slow_body_closed (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_test_gateway_policy (sandbox_test_upstream_get_port (fixture->upstream));
  g_autoptr(GSocketConnection) connection = NULL;
  g_autofree char *partial = NULL;
  g_autoptr(SandboxTestResponse) response = NULL;

  sandbox_test_gateway_start (fixture, policy, 300, 2000);
  connection = sandbox_test_guest_connect (fixture);
  partial = g_strdup_printf ("POST /echo HTTP/1.1\r\nHost: %s\r\nContent-Length: 10\r\n\r\nhel",
                             fixture->host);
  sandbox_test_guest_send (connection, partial, strlen (partial));
  response = sandbox_test_guest_read_response (connection);
  g_assert_cmpuint (response->status, ==, 0);

  sandbox_test_gateway_wait_for_exactly (fixture, 1);
  sandbox_test_assert_event (sandbox_test_gateway_last_event (fixture),
                             SANDBOX_GATEWAY_DECISION_BAD_REQUEST, "body-timeout", 0);
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
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

  add_fixture_test ("/sandbox/gateway/limits/slow-body-closed", test_slow_body_closed, NULL);
  add_fixture_test ("/sandbox/gateway/limits/busy-at-seventeen", test_busy_at_seventeen, NULL);
  add_fixture_test ("/sandbox/gateway/limits/abandoned-requests-aborted",
                    test_abandoned_requests_aborted, NULL);
  add_fixture_test ("/sandbox/gateway/limits/redirect-refused", test_redirect_refused, NULL);
  add_fixture_test ("/sandbox/gateway/limits/request-body-too-large", test_request_body_too_large,
                    NULL);
  add_fixture_test ("/sandbox/gateway/limits/chunked-request-body-too-large",
                    test_chunked_request_body_too_large, NULL);
  add_fixture_test ("/sandbox/gateway/limits/response-body-too-large",
                    test_response_body_too_large, NULL);
  add_fixture_test ("/sandbox/gateway/limits/huge-response-bounded-memory",
                    test_huge_response_bounded_memory, NULL);
  add_fixture_test ("/sandbox/gateway/limits/endless-head-cut-off", test_endless_head_cut_off,
                    NULL);
  add_fixture_test ("/sandbox/gateway/limits/long-target-answered-414",
                    test_oversized_head_answered,
                    GINT_TO_POINTER (TRUE));
  add_fixture_test ("/sandbox/gateway/limits/long-header-answered-431",
                    test_oversized_head_answered,
                    GINT_TO_POINTER (FALSE));
  add_fixture_test ("/sandbox/gateway/limits/connection-cap-answered-503",
                    test_connection_cap_answered, NULL);
  add_fixture_test ("/sandbox/gateway/limits/silent-connection-not-audited",
                    test_silent_connection_not_audited, NULL);
  add_fixture_test ("/sandbox/gateway/limits/upstream-never-answers", test_upstream_never_answers,
                    NULL);
  add_fixture_test ("/sandbox/gateway/limits/slow-headers-closed", test_slow_headers_closed, NULL);
  return g_test_run ();
}
