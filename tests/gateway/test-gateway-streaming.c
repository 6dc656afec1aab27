/* test-gateway-streaming.c — allow-list rules that stream their answers
 *
 * The kit's upstream on 127.0.0.1 (tests/kit), in its own thread, sends chunked answers
 * piece by piece (server-sent events, a bulk download, a stream that stalls);
 * guests are raw byte clients on the gateway's Unix socket that decode the
 * chunked body themselves, so they see exactly what the gateway wrote: which
 * bytes arrived before the upstream finished, and whether the body ended with
 * its last chunk or was cut.
 *
 * To see these tests fail: drop `"stream": true` from stream_policy() (the
 * gateway then buffers: the gated test waits for bytes that never come before
 * the upstream's end), or remove the pause in
 * sandbox_gateway_streamed_answer_push() (the slow-guest test then finds the
 * whole upstream answer read into the gateway), or make
 * sandbox_gateway_streamed_answer_cut() complete the body before dropping the
 * connection (the cut tests then read a final chunk). The defaults: in
 * sandbox_gateway_streamed_answer_new(), a default byte limit other than
 * SANDBOX_GATEWAY_MAX_BODY_BYTES, or a default deadline or idle timeout
 * other than the request timeout, fails the default-* tests; not resetting
 * the idle deadline in sandbox_gateway_streamed_answer_push() fails
 * longer-than-request-timeout, and never stopping a stream idle in
 * sandbox_gateway_streamed_answer_check_deadline() fails idle-gap-cuts.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>
#include <sys/socket.h>
#include <gio/gunixsocketaddress.h>
#include <libsoup/soup.h>

#include "sandbox-test-gateway.h"

#define SECRET "Bearer stream-secret-41c9"
#define KIB 1024
#define MIB (1024 * 1024)

/* The fixture: the kit's gateway fixture, and what the /gated answer and
 * the test share across the upstream's thread. */

typedef struct
{
  SandboxTestGatewayFixture base;
  gint guest_saw_first;         /* atomic: the guest read the gated event */
  gint gate_timed_out;          /* atomic */
} Fixture;

/* The upstream's answers */

/* /gated: one event, then the next only once the guest has read the first
 * (or after 3 s, which the test counts as a failure). */
static gboolean
send_after_gate (gpointer data)
{
  SandboxTestSender *sender = data;
  Fixture *fixture = sender->data;
  gboolean timed_out = ++sender->sent > 600;

  if (sandbox_test_sender_is_done (sender))
    return G_SOURCE_REMOVE;
  if (!g_atomic_int_get (&fixture->guest_saw_first) && !timed_out)
    return G_SOURCE_CONTINUE;

  if (timed_out)
    g_atomic_int_set (&fixture->gate_timed_out, TRUE);
  sandbox_test_upstream_append (sender->msg, "data: 2\n\n");
  sandbox_test_upstream_complete (sender->msg);
  return G_SOURCE_REMOVE;
}

/* /gap?ms=N: one event at once, the second N ms later, then the end. */
static gboolean
send_after_gap (gpointer data)
{
  SandboxTestSender *sender = data;

  if (sandbox_test_sender_is_done (sender))
    return G_SOURCE_REMOVE;
  sandbox_test_upstream_append (sender->msg, "data: 2\n\n");
  sandbox_test_upstream_complete (sender->msg);
  return G_SOURCE_REMOVE;
}

/* Starts a text/event-stream answer with its first event, and schedules
 * @func to go on with it after @interval_ms. */
static void
first_event_then (SoupServerMessage *msg,
                  guint              interval_ms,
                  GSourceFunc        func,
                  Fixture           *fixture)
{
  SandboxTestUpstream *upstream = sandbox_test_upstream_of (msg);
  SandboxTestSender *sender = sandbox_test_sender_new (upstream, msg);

  sender->data = fixture;
  sandbox_test_upstream_start_chunked (msg, "text/event-stream");
  sandbox_test_upstream_append (msg, "data: 1\n\n");
  sandbox_test_upstream_schedule (upstream, interval_ms, func, sender, sandbox_test_sender_free);
}

static void
serve (SoupServer        *server,
       SoupServerMessage *msg,
       const char        *path,
       GHashTable        *query,
       gpointer           data)
{
  SandboxTestUpstream *upstream = sandbox_test_upstream_of (msg);

  if (g_str_equal (soup_server_message_get_method (msg), "HEAD"))
    {
      /* No body follows, so nothing is scheduled. */
      soup_server_message_set_status (msg, 200, NULL);
      soup_message_headers_replace (soup_server_message_get_response_headers (msg),
                                    "Content-Type", "text/event-stream");
    }
  else if (g_str_equal (path, "/events"))
    {
      sandbox_test_upstream_answer_events (upstream, msg, sandbox_test_query_uint (query, "n", 3),
                                           sandbox_test_query_uint (query, "every", 10));
    }
  else if (g_str_equal (path, "/gated"))
    {
      first_event_then (msg, 5, send_after_gate, data);
    }
  else if (g_str_equal (path, "/gap"))
    {
      first_event_then (msg, sandbox_test_query_uint (query, "ms", 400), send_after_gap, data);
    }
  else if (g_str_equal (path, "/bulk"))
    {
      sandbox_test_upstream_answer_bulk (upstream, msg,
                                         sandbox_test_query_uint (query, "bytes", MIB));
    }
  else if (g_str_equal (path, "/stall"))
    {
      sandbox_test_upstream_start_chunked (msg, "text/event-stream");
      sandbox_test_upstream_append (msg, "data: 1\n\n");
      sandbox_test_upstream_hold (upstream, msg);
    }
  else if (g_str_equal (path, "/redirect"))
    {
      g_autofree char *location = g_strdup_printf ("http://127.0.0.1:%u/events",
                                                   sandbox_test_upstream_get_port (upstream));

      soup_server_message_set_redirect (msg, 302, location);
    }
  else if (g_str_equal (path, "/nocontent"))
    {
      soup_server_message_set_status (msg, 204, NULL);
    }
  else
    {
      soup_server_message_set_status (msg, 404, NULL);
    }
}

/* The upstream allowed with a credential, its answers streamed within
 * @limits (a JSON member list, or "" for `"stream": true`). */
static SandboxNetworkPolicy *
stream_policy (guint16     port,
               const char *limits)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *stream = *limits != '\0' ? g_strdup_printf ("{%s}", limits) : g_strdup ("true");
  g_autofree char *json = g_strdup_printf ("{\"allow\": [{\"origin\": \"http://127.0.0.1:%u\", "
                                           "\"headers\": {\"Authorization\": \"" SECRET "\"}, "
                                           "\"stream\": %s}]}", port, stream);
  SandboxNetworkPolicy *policy = sandbox_network_policy_new_from_json (json, &error);

  g_assert_no_error (error);
  return policy;
}

static void
fixture_start_with_policy (Fixture              *fixture,
                           SandboxNetworkPolicy *policy,
                           guint                 request_timeout_ms)
{
  sandbox_test_gateway_start (&fixture->base, policy, request_timeout_ms, 2000);
}

static void
fixture_start (Fixture    *fixture,
               const char *limits,
               guint       request_timeout_ms)
{
  g_autoptr(SandboxNetworkPolicy) policy =
    stream_policy (sandbox_test_upstream_get_port (fixture->base.upstream), limits);

  fixture_start_with_policy (fixture, policy, request_timeout_ms);
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  sandbox_test_gateway_set_up_full (&fixture->base, SANDBOX_TEST_UPSTREAM_NONE, serve, fixture);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  sandbox_test_gateway_tear_down (&fixture->base, data);
}

static SandboxGatewayEvent *
wait_for_event (Fixture *fixture)
{
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  while (fixture->base.events->len == 0 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);

  g_assert_cmpuint (fixture->base.events->len, ==, 1);
  return g_ptr_array_index (fixture->base.events, 0);
}

/* The guest: a raw client that decodes the chunked body itself */

typedef struct
{
  GSocketConnection *connection;
  GByteArray *raw;
  guint status;
  gsize body_start;      /* 0 until the head is in */
  gboolean chunked;
  goffset content_length; /* -1 unless the head declared one */
  GByteArray *payload;   /* the decoded body so far */
  gboolean complete;     /* the last chunk arrived */
  gboolean eof;
} Guest;

static void
guest_free (Guest *guest)
{
  g_clear_object (&guest->connection);
  g_byte_array_unref (guest->raw);
  g_byte_array_unref (guest->payload);
  g_free (guest);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Guest, guest_free)

/* A request for @path to the upstream on @port. */
static Guest *
guest_get_from (Fixture    *fixture,
                guint16     port,
                const char *method,
                const char *path)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketAddress) address =
    g_unix_socket_address_new (sandbox_gateway_get_socket_path (fixture->base.gateway));
  g_autoptr(GError) error = NULL;
  g_autofree char *request = g_strdup_printf ("%s %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n",
                                              method, path, port);
  Guest *guest = g_new0 (Guest, 1);

  guest->raw = g_byte_array_new ();
  guest->payload = g_byte_array_new ();
  guest->connection = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL,
                                               &error);
  g_assert_no_error (error);
  g_socket_set_timeout (g_socket_connection_get_socket (guest->connection), 10);
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (guest->connection)),
                             request, strlen (request), NULL, NULL, &error);
  g_assert_no_error (error);
  return guest;
}

static Guest *
guest_get (Fixture    *fixture,
           const char *method,
           const char *path)
{
  return guest_get_from (fixture, sandbox_test_upstream_get_port (fixture->base.upstream), method,
                         path);
}

/* Decodes what arrived: the head once, then every whole chunk, or the
 * whole body of a declared length. */
static void
guest_decode (Guest *guest)
{
  const char *data = (const char *) guest->raw->data;

  if (guest->body_start == 0)
    {
      const char *end = g_strstr_len (data, guest->raw->len, "\r\n\r\n");
      g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_RESPONSE);
      g_autofree char *head = NULL;
      g_autofree char *whole_head = NULL;

      if (end == NULL)
        return;
      head = g_strndup (data, end - data);
      g_assert_true (g_str_has_prefix (head, "HTTP/1.1 "));
      guest->status = (guint) g_ascii_strtoull (head + 9, NULL, 10);
      guest->chunked = strstr (head, "\r\nTransfer-Encoding: chunked") != NULL;
      guest->body_start = end + 4 - data;
      /* libsoup's status-line parser runs strtoul() on what it is given:
       * a NUL-terminated copy, not the raw buffer. */
      whole_head = g_strndup (data, guest->body_start);
      g_assert_true (soup_headers_parse_response (whole_head, guest->body_start, headers,
                                                  NULL, NULL, NULL));
      guest->content_length = soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CONTENT_LENGTH
                                ? soup_message_headers_get_content_length (headers) : -1;
    }

  if (!guest->chunked && guest->content_length >= 0 && !guest->complete &&
      guest->raw->len - guest->body_start >= (gsize) guest->content_length)
    {
      g_byte_array_append (guest->payload, (const guint8 *) data + guest->body_start,
                           guest->content_length);
      guest->complete = TRUE;
    }

  while (guest->chunked && !guest->complete)
    {
      const char *line = data + guest->body_start;
      gsize available = guest->raw->len - guest->body_start;
      const char *line_end = g_strstr_len (line, available, "\r\n");
      guint64 size;
      gsize needed;

      if (line_end == NULL)
        return;
      size = g_ascii_strtoull (line, NULL, 16);
      needed = (line_end + 2 - line) + size + 2;
      if (available < needed)
        return;
      g_byte_array_append (guest->payload, (const guint8 *) line_end + 2, size);
      guest->body_start += needed;
      guest->complete = size == 0;
    }
}

/* Reads once; returns FALSE at the end of the stream. */
static gboolean
guest_read (Guest *guest)
{
  GInputStream *input = g_io_stream_get_input_stream (G_IO_STREAM (guest->connection));
  g_autoptr(GError) error = NULL;
  guint8 chunk[64 * KIB];
  gssize n = g_input_stream_read (input, chunk, sizeof chunk, NULL, &error);

  /* A connection cut by the gateway may end with a reset. */
  if (n <= 0)
    {
      if (error != NULL)
        g_assert_true (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED) ||
                       g_error_matches (error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE));
      guest->eof = TRUE;
      return FALSE;
    }

  g_byte_array_append (guest->raw, chunk, n);
  guest_decode (guest);
  return TRUE;
}

static gboolean
payload_contains (Guest      *guest,
                  const char *text)
{
  return guest->payload->len > 0 &&
         g_strstr_len ((const char *) guest->payload->data, guest->payload->len, text) != NULL;
}

/* Reads until the payload holds @text; FALSE if the stream ended first. */
static gboolean
guest_read_until (Guest      *guest,
                  const char *text)
{
  while (!payload_contains (guest, text))
    if (guest->complete || !guest_read (guest))
      return FALSE;
  return TRUE;
}

static void
guest_read_to_end (Guest *guest)
{
  while (!guest->complete && guest_read (guest))
    ;
}

/* The tests */

/* The guest gets the first event while the upstream is still waiting for it
 * to: a buffering gateway would deliver nothing until the upstream's end. */
static void
test_first_bytes_before_end (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  g_autofree char *authorization = NULL;
  SandboxGatewayEvent *event;

  fixture_start (fixture, "", 5000);
  guest = guest_get (fixture, "GET", "/gated");

  g_assert_true (guest_read_until (guest, "data: 1\n\n"));
  g_assert_cmpuint (guest->status, ==, 200);
  g_assert_true (guest->chunked);
  g_assert_nonnull (g_strstr_len ((const char *) guest->raw->data, guest->raw->len,
                                 "Content-Type: text/event-stream"));
  g_atomic_int_set (&fixture->guest_saw_first, TRUE);

  guest_read_to_end (guest);
  g_assert_false (g_atomic_int_get (&fixture->gate_timed_out));
  g_assert_true (guest->complete);
  g_assert_cmpmem (guest->payload->data, guest->payload->len, "data: 1\n\ndata: 2\n\n", 18);

  event = wait_for_event (fixture);
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_ALLOWED, "forwarded", 200);
  g_assert_cmpuint (sandbox_gateway_event_get_upstream_status (event), ==, 200);
  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (event), ==, 18);

  /* The credential was injected, and the guest never saw it. */
  authorization = sandbox_test_upstream_dup_last_header (fixture->base.upstream, "Authorization");
  g_assert_cmpstr (authorization, ==, SECRET);
  g_assert_null (g_strstr_len ((const char *) guest->raw->data, guest->raw->len, "stream-secret"));
}

/* A stream longer than the gateway's request timeout passes whole when its
 * rule allows it; every event arrives in order. Each chunk resets the idle
 * timeout: the stream lasts five times its 200 ms idle timeout, with a 50 ms
 * gap between events (a quarter of it), well within its 5 s deadline. */
static void
test_longer_than_request_timeout (Fixture       *fixture,
                                  gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  g_autoptr(GString) expected = g_string_new (NULL);
  SandboxGatewayEvent *event;

  fixture_start (fixture, "\"timeoutMs\": 5000, \"idleTimeoutMs\": 200", 300);
  guest = guest_get (fixture, "GET", "/events?n=20&every=50");

  guest_read_to_end (guest);
  for (guint i = 1; i <= 20; i++)
    g_string_append_printf (expected, "data: %u\n\n", i);
  g_assert_true (guest->complete);
  g_assert_cmpmem (guest->payload->data, guest->payload->len, expected->str, expected->len);

  event = wait_for_event (fixture);
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_ALLOWED, "forwarded", 200);
  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (event), ==, expected->len);
  /* The upstream's timers make the stream last at least 20 × 50 ms: the
   * idle timeout was outlived several times over. */
  g_assert_cmpint (sandbox_gateway_event_get_duration_us (event), >=, 4 * 200 * 1000);
}

/* Reads a stream that is cut: the connection ends without the body's last
 * chunk, and the exchange is audited as failed for @reason, with the status
 * the guest already has. Returns the event. */
static SandboxGatewayEvent *
read_cut_stream (Fixture    *fixture,
                 Guest      *guest,
                 const char *reason)
{
  SandboxGatewayEvent *event;

  guest_read_to_end (guest);
  g_assert_false (guest->complete);
  g_assert_true (guest->eof);
  event = wait_for_event (fixture);
  sandbox_test_assert_event (event, SANDBOX_GATEWAY_DECISION_FAILED, reason, 200);
  return event;
}

/* With `"stream": true` and no limits, the total byte limit is the one on a
 * buffered answer, 1 MiB: a 2 MiB stream is cut there, the guest gets what
 * was relayed up to the cut and no last chunk, and the event says why. */
static void
test_default_byte_limit (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  SandboxGatewayEvent *event;
  GError *error;

  fixture_start (fixture, "", 5000);
  guest = guest_get (fixture, "GET", "/bulk?bytes=2097152");

  event = read_cut_stream (fixture, guest, "response-too-large");
  g_assert_cmpuint (guest->status, ==, 200);
  g_assert_true (guest->chunked);
  /* libcurl hands the body over in pieces of at most 16 KiB: the one that
   * would cross the limit is refused, so the cut is within one piece of it. */
  g_assert_cmpuint (guest->payload->len, <=, MIB);
  g_assert_cmpuint (guest->payload->len, >, MIB - 64 * KIB);

  g_assert_cmpuint (sandbox_gateway_event_get_upstream_status (event), ==, 200);
  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (event), ==, guest->payload->len);
  g_assert_cmpuint (fixture->base.errors->len, ==, 1);
  error = g_ptr_array_index (fixture->base.errors, 0);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_nonnull (strstr (error->message, "more than 1048576 bytes"));
}

/* With `"stream": true` and no limits, the deadline is the gateway's request
 * timeout (300 ms here): a 3 s stream of events 50 ms apart, which its idle
 * timeout (the same 300 ms) lets pass, is cut at the deadline. */
static void
test_default_deadline (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  SandboxGatewayEvent *event;

  fixture_start (fixture, "", 300);
  guest = guest_get (fixture, "GET", "/events?n=60&every=50");

  g_assert_true (guest_read_until (guest, "data: 1\n\n"));
  event = read_cut_stream (fixture, guest, "timeout");
  g_assert_false (payload_contains (guest, "data: 60\n\n"));

  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (event), ==, guest->payload->len);
  g_assert_cmpint (sandbox_gateway_event_get_duration_us (event), >=, 250 * 1000);
  /* Well short of the gateway's header timeout (2 s), the other default. */
  g_assert_cmpint (sandbox_gateway_event_get_duration_us (event), <, 1500 * 1000);
}

/* Without an idle timeout of its own, a stream's idle timeout is the
 * gateway's request timeout (300 ms here). With no limits at all the
 * deadline, the same 300 ms from an earlier start, always comes first; with
 * a longer deadline of the rule's own, a stalled stream is cut idle. */
static void
test_default_idle_timeout (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  SandboxGatewayEvent *event;

  fixture_start (fixture, "\"timeoutMs\": 5000", 300);
  guest = guest_get (fixture, "GET", "/stall");

  g_assert_true (guest_read_until (guest, "data: 1\n\n"));
  event = read_cut_stream (fixture, guest, "idle-timeout");

  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (event), ==, 9);
  g_assert_cmpint (sandbox_gateway_event_get_duration_us (event), >=, 250 * 1000);
  g_assert_cmpint (sandbox_gateway_event_get_duration_us (event), <, 1500 * 1000);
}

/* The idle timeout bounds each gap between chunks: a single 400 ms gap
 * against a 200 ms idle timeout cuts the stream after its first event. */
static void
test_idle_gap_cuts (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  SandboxGatewayEvent *event;

  fixture_start (fixture, "\"timeoutMs\": 5000, \"idleTimeoutMs\": 200", 5000);
  guest = guest_get (fixture, "GET", "/gap?ms=400");

  g_assert_true (guest_read_until (guest, "data: 1\n\n"));
  event = read_cut_stream (fixture, guest, "idle-timeout");
  g_assert_cmpmem (guest->payload->data, guest->payload->len, "data: 1\n\n", 9);

  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (event), ==, 9);
}

/* Past the byte limit the transfer stops and the guest's body is cut short:
 * no last chunk, nothing past the limit. */
static void
test_byte_limit_cuts (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  SandboxGatewayEvent *event;
  GError *error;

  fixture_start (fixture, "\"maxBytes\": 100000", 5000);
  guest = guest_get (fixture, "GET", "/bulk?bytes=1048576");

  event = read_cut_stream (fixture, guest, "response-too-large");
  g_assert_cmpuint (guest->status, ==, 200);
  g_assert_cmpuint (guest->payload->len, <=, 100000);

  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (event), <=, 100000);
  g_assert_cmpuint (fixture->base.errors->len, ==, 1);
  error = g_ptr_array_index (fixture->base.errors, 0);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_nonnull (strstr (error->message, "more than 100000 bytes"));
}

/* A stream whose upstream goes quiet is cut after its idle timeout. */
static void
test_idle_timeout_cuts (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  SandboxGatewayEvent *event;

  fixture_start (fixture, "\"idleTimeoutMs\": 300", 5000);
  guest = guest_get (fixture, "GET", "/stall");

  g_assert_true (guest_read_until (guest, "data: 1\n\n"));
  event = read_cut_stream (fixture, guest, "idle-timeout");

  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (event), ==, 9);
  g_assert_cmpint (sandbox_gateway_event_get_duration_us (event), >=, 250 * 1000);
}

/* A stream that keeps sending is still cut at its rule's deadline. */
static void
test_deadline_cuts (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  SandboxGatewayEvent *event;

  fixture_start (fixture, "\"timeoutMs\": 500, \"idleTimeoutMs\": 5000", 5000);
  guest = guest_get (fixture, "GET", "/events?n=1000&every=20");

  g_assert_true (guest_read_until (guest, "data: 1\n\n"));
  event = read_cut_stream (fixture, guest, "timeout");

  g_assert_cmpint (sandbox_gateway_event_get_duration_us (event), >=, 450 * 1000);
  g_assert_cmpint (sandbox_gateway_event_get_duration_us (event), <, 5 * G_USEC_PER_SEC);
}

/* The guest's head, up to its blank line. */
static char *
guest_head (Guest *guest)
{
  return g_strndup ((const char *) guest->raw->data, guest->body_start);
}

/* A streaming rule and a buffering one side by side: each answer is framed
 * its own way (chunked, or with a Content-Length), and both are audited
 * alike, but for the host each was addressed to. */
static void
test_same_audit_as_buffered (Fixture       *fixture,
                             gconstpointer  data)
{
  const char *path = "/events?n=3&every=10";
  const char *expected = "data: 1\n\ndata: 2\n\ndata: 3\n\n";
  SandboxTestUpstream *buffered_upstream = sandbox_test_upstream_start (SANDBOX_TEST_UPSTREAM_NONE,
                                                                     serve, fixture);
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  g_autofree char *streamed_host = NULL;
  g_autofree char *buffered_host = NULL;
  g_autofree char *streamed_head = NULL;
  g_autofree char *buffered_head = NULL;
  g_autoptr(Guest) streamed = NULL;
  g_autoptr(Guest) buffered = NULL;
  g_autoptr(SandboxGatewayEvent) streamed_event = NULL;
  g_autoptr(SandboxGatewayEvent) buffered_event = NULL;

  json = g_strdup_printf ("{\"allow\": ["
                          "{\"origin\": \"http://127.0.0.1:%u\", "
                          "\"headers\": {\"Authorization\": \"" SECRET "\"}, \"stream\": true}, "
                          "{\"origin\": \"http://127.0.0.1:%u\", "
                          "\"headers\": {\"Authorization\": \"" SECRET "\"}}]}",
                          sandbox_test_upstream_get_port (fixture->base.upstream),
                          sandbox_test_upstream_get_port (buffered_upstream));
  policy = sandbox_network_policy_new_from_json (json, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_network_policy_get_rule_stream (policy, 0, NULL, NULL, NULL));
  g_assert_false (sandbox_network_policy_get_rule_stream (policy, 1, NULL, NULL, NULL));
  fixture_start_with_policy (fixture, policy, 5000);
  streamed_host = g_strdup_printf ("127.0.0.1:%u",
                                   sandbox_test_upstream_get_port (fixture->base.upstream));
  buffered_host = g_strdup_printf ("127.0.0.1:%u",
                                   sandbox_test_upstream_get_port (buffered_upstream));

  streamed = guest_get_from (fixture, sandbox_test_upstream_get_port (fixture->base.upstream),
                             "GET", path);
  guest_read_to_end (streamed);
  streamed_event = sandbox_gateway_event_ref (wait_for_event (fixture));
  g_ptr_array_set_size (fixture->base.events, 0);

  buffered = guest_get_from (fixture, sandbox_test_upstream_get_port (buffered_upstream), "GET",
                             path);
  guest_read_to_end (buffered);
  buffered_event = sandbox_gateway_event_ref (wait_for_event (fixture));

  /* The streamed answer is chunked, the buffered one plainly sized. */
  g_assert_cmpuint (streamed->status, ==, 200);
  g_assert_true (streamed->chunked);
  g_assert_cmpint (streamed->content_length, ==, -1);
  g_assert_true (streamed->complete);
  g_assert_cmpuint (buffered->status, ==, 200);
  g_assert_false (buffered->chunked);
  g_assert_cmpint (buffered->content_length, ==, strlen (expected));
  g_assert_true (buffered->complete);
  streamed_head = guest_head (streamed);
  buffered_head = guest_head (buffered);
  g_assert_null (strstr (buffered_head, "Transfer-Encoding"));
  g_assert_nonnull (strstr (streamed_head, "\r\nContent-Type: text/event-stream\r\n"));
  g_assert_nonnull (strstr (buffered_head, "\r\nContent-Type: text/event-stream\r\n"));
  g_assert_cmpmem (streamed->payload->data, streamed->payload->len, expected, strlen (expected));
  g_assert_cmpmem (buffered->payload->data, buffered->payload->len, expected, strlen (expected));

  /* Every field of the two events matches, but the host and the time taken. */
  g_assert_cmpstr (sandbox_gateway_event_get_host (streamed_event), ==, streamed_host);
  g_assert_cmpstr (sandbox_gateway_event_get_host (buffered_event), ==, buffered_host);
  g_assert_cmpstr (sandbox_gateway_event_get_method (streamed_event), ==, "GET");
  g_assert_cmpstr (sandbox_gateway_event_get_method (buffered_event), ==, "GET");
  g_assert_cmpstr (sandbox_gateway_event_get_path (streamed_event), ==, path);
  g_assert_cmpstr (sandbox_gateway_event_get_path (buffered_event), ==, path);
  sandbox_test_assert_event (streamed_event, SANDBOX_GATEWAY_DECISION_ALLOWED, "forwarded", 200);
  sandbox_test_assert_event (buffered_event, SANDBOX_GATEWAY_DECISION_ALLOWED, "forwarded", 200);
  g_assert_cmpuint (sandbox_gateway_event_get_upstream_status (streamed_event), ==, 200);
  g_assert_cmpuint (sandbox_gateway_event_get_upstream_status (buffered_event), ==, 200);
  g_assert_cmpuint (sandbox_gateway_event_get_bytes_sent (streamed_event), ==, 0);
  g_assert_cmpuint (sandbox_gateway_event_get_bytes_sent (buffered_event), ==, 0);
  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (streamed_event), ==,
                    strlen (expected));
  g_assert_cmpuint (sandbox_gateway_event_get_bytes_received (buffered_event), ==,
                    strlen (expected));
  g_assert_cmpint (sandbox_gateway_event_get_duration_us (streamed_event), >, 0);
  g_assert_cmpint (sandbox_gateway_event_get_duration_us (buffered_event), >, 0);
  g_assert_cmpuint (fixture->base.errors->len, ==, 0);

  sandbox_test_upstream_stop (buffered_upstream);
}

/* A guest that stops reading does not make the gateway read the whole
 * upstream answer into memory: the transfer is paused, so the upstream,
 * which sends only as fast as it is read, stops well short of its end; once
 * the guest reads again, everything arrives. */
static void
test_slow_guest_pauses_upstream (Fixture       *fixture,
                                 gconstpointer  data)
{
  const gsize total = 64 * MIB;
  g_autoptr(Guest) guest = NULL;
  gint64 written = -1;

  fixture_start (fixture, "\"maxBytes\": 134217728, \"idleTimeoutMs\": 5000", 20000);
  guest = guest_get (fixture, "GET", "/bulk?bytes=67108864");
  g_assert_true (guest_read (guest));

  /* Wait until the upstream has stopped making progress. */
  for (guint stable = 0; stable < 5; )
    {
      gint64 now_written;

      g_usleep (100 * 1000);
      now_written = sandbox_test_upstream_bulk_written (fixture->base.upstream);
      stable = now_written == written ? stable + 1 : 0;
      written = now_written;
    }
  /* Socket buffers on both sides hold a few MiB; the gateway's backlog is
   * 256 KiB. Without the pause the upstream would have sent all of it. */
  g_assert_cmpint (written, <, (gint64) total / 2);

  guest_read_to_end (guest);
  g_assert_true (guest->complete);
  g_assert_cmpuint (guest->payload->len, ==, total);
  sandbox_test_assert_event (wait_for_event (fixture), SANDBOX_GATEWAY_DECISION_ALLOWED,
                             "forwarded", 200);
}

/* A guest that goes away mid-stream ends the upstream transfer at once. */
static void
test_guest_closes_mid_stream (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  gint64 deadline = g_get_monotonic_time () + 10 * G_USEC_PER_SEC;

  fixture_start (fixture, "\"idleTimeoutMs\": 20000", 30000);
  guest = guest_get (fixture, "GET", "/stall");
  g_assert_true (guest_read_until (guest, "data: 1\n\n"));
  g_io_stream_close (G_IO_STREAM (guest->connection), NULL, NULL);

  sandbox_test_assert_event (wait_for_event (fixture), SANDBOX_GATEWAY_DECISION_FAILED,
                             "client-closed", 200);
  /* The upstream sees its answer's connection go. */
  while (sandbox_test_upstream_count_held_closed (fixture->base.upstream) == 0 &&
         g_get_monotonic_time () < deadline)
    g_usleep (10 * 1000);
  g_assert_true (sandbox_test_upstream_count_held_closed (fixture->base.upstream) > 0);
}

/* A policy change cuts a stream decided under the old policy. */
static void
test_policy_change_cuts (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(Guest) guest = NULL;
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();

  fixture_start (fixture, "\"idleTimeoutMs\": 20000", 30000);
  guest = guest_get (fixture, "GET", "/stall");
  g_assert_true (guest_read_until (guest, "data: 1\n\n"));
  sandbox_gateway_set_policy (fixture->base.gateway, deny);

  guest_read_to_end (guest);
  g_assert_false (guest->complete);
  sandbox_test_assert_event (wait_for_event (fixture), SANDBOX_GATEWAY_DECISION_FAILED,
                             "policy-changed", 200);
}

/* What has no body to stream, or must not be followed, is answered as for
 * any rule. */
static void
test_unstreamed_answers (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(Guest) redirect = NULL;
  g_autoptr(Guest) no_content = NULL;
  g_autoptr(Guest) head = NULL;

  fixture_start (fixture, "", 5000);

  redirect = guest_get (fixture, "GET", "/redirect");
  while (guest_read (redirect))
    if (redirect->body_start != 0)
      break;
  g_assert_cmpuint (redirect->status, ==, 502);
  sandbox_test_assert_event (wait_for_event (fixture), SANDBOX_GATEWAY_DECISION_FAILED, "redirect",
                             502);
  g_ptr_array_set_size (fixture->base.events, 0);

  no_content = guest_get (fixture, "GET", "/nocontent");
  while (no_content->body_start == 0 && guest_read (no_content))
    ;
  g_assert_cmpuint (no_content->status, ==, 204);
  g_assert_false (no_content->chunked);
  sandbox_test_assert_event (wait_for_event (fixture), SANDBOX_GATEWAY_DECISION_ALLOWED,
                             "forwarded", 204);
  g_ptr_array_set_size (fixture->base.events, 0);

  head = guest_get (fixture, "HEAD", "/events?n=2&every=5");
  while (head->body_start == 0 && guest_read (head))
    ;
  g_assert_cmpuint (head->status, ==, 200);
  sandbox_test_assert_event (wait_for_event (fixture), SANDBOX_GATEWAY_DECISION_ALLOWED,
                             "forwarded", 200);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/gateway/streaming/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("first-bytes-before-end", test_first_bytes_before_end);
  ADD ("longer-than-request-timeout", test_longer_than_request_timeout);
  ADD ("idle-gap-cuts", test_idle_gap_cuts);
  ADD ("default-byte-limit", test_default_byte_limit);
  ADD ("default-deadline", test_default_deadline);
  ADD ("default-idle-timeout", test_default_idle_timeout);
  ADD ("same-audit-as-buffered", test_same_audit_as_buffered);
  ADD ("byte-limit-cuts", test_byte_limit_cuts);
  ADD ("idle-timeout-cuts", test_idle_timeout_cuts);
  ADD ("deadline-cuts", test_deadline_cuts);
  ADD ("slow-guest-pauses-upstream", test_slow_guest_pauses_upstream);
  ADD ("guest-closes-mid-stream", test_guest_closes_mid_stream);
  ADD ("policy-change-cuts", test_policy_change_cuts);
  ADD ("unstreamed-answers", test_unstreamed_answers);

#undef ADD

  return g_test_run ();
}
