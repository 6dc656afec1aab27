/* test-gateway-head.c — the gateway's request-head scanner and header checks, without sockets
 *
 * The scanner (gateway/sandbox-gateway-framing.c) is fed hostile bytes
 * directly; heads it lets through are parsed by libsoup's own
 * soup_headers_parse_request() (what the gateway's SoupServer runs on them)
 * and checked by sandbox_gateway_http_check_head(). The end-to-end cases,
 * over a real socket and a real upstream, are in test-gateway.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <libsoup/soup.h>

#include "sandbox-gateway-framing-private.h"
#include "sandbox-gateway-http-private.h"

#define HEAD "GET /x HTTP/1.1\r\nHost: a.example\r\n\r\n"

/* A string literal and its length, NUL bytes in it included. */
#define BYTES(literal) literal, sizeof (literal) - 1

/* Feeds @data to a fresh scanner @piece bytes at a time, as reads of that
 * size would; stops at a head's end or a refusal. Returns how many bytes
 * were taken. */
static gsize
follow_in_pieces (SandboxGatewayFraming        *framing,
                  const char                   *data,
                  gsize                         length,
                  gsize                         piece,
                  SandboxGatewayFramingRefusal *refusal)
{
  gsize done = 0;

  *refusal = (SandboxGatewayFramingRefusal) { 0, NULL };
  while (done < length)
    {
      gsize n = MIN (piece, length - done);
      gsize taken = sandbox_gateway_framing_follow (framing, data + done, n, refusal);

      if (refusal->reason != NULL)
        return done;
      done += taken;
      if (taken < n || framing->state == SANDBOX_GATEWAY_FRAMING_AWAIT)
        break;
    }

  return done;
}

/* A head ends at its empty line, and nothing after it is taken: what follows
 * waits for the body's framing. Whatever the reads' sizes, the same bytes
 * are taken (remove the "return i + 1" at a head's end in follow_head(): the
 * second request is then taken with the first). */
static void
test_ends_at_empty_line (void)
{
  const char *data = HEAD "GET /smuggled HTTP/1.1\r\nHost: a.example\r\n\r\n";
  SandboxGatewayHeadScan scan;

  g_assert_true (sandbox_gateway_framing_scan_head (data, strlen (data), &scan));
  g_assert_cmpuint (scan.length, ==, strlen (HEAD));
  g_assert_true (scan.origin_form);
  g_assert_null (scan.refusal.reason);

  for (gsize piece = 1; piece <= strlen (data); piece++)
    {
      SandboxGatewayFraming framing;
      SandboxGatewayFramingRefusal refusal;

      sandbox_gateway_framing_init (&framing);
      g_assert_cmpuint (follow_in_pieces (&framing, data, strlen (data), piece, &refusal), ==, strlen (HEAD));
      g_assert_null (refusal.reason);
      g_assert_true (sandbox_gateway_framing_target_is_origin_form (&framing));
    }
}

typedef struct
{
  const char *name;
  const char *head;
  gsize length;
  gboolean complete;
  gboolean origin_form;
} EndCase;

/* libsoup ends a head at a line "\n" with two bytes before it, or "\r\n"
 * with three (soup_message_io_data_read_headers()): the scanner must end it
 * at exactly the same byte, or the two disagree about where the body (and
 * the next request) starts. */
static const EndCase end_cases[] = {
  { "lf-only", BYTES ("GET /x HTTP/1.1\nHost: a.example\n\n"), TRUE, TRUE },
  { "lf-then-crlf", BYTES ("GET /x HTTP/1.1\nHost: a.example\n\r\n"), TRUE, TRUE },
  /* A bare CR ends no line: libsoup reads lines up to LF. */
  { "bare-cr", BYTES ("GET /x HTTP/1.1\r\rHost: a.example\r\r"), FALSE, TRUE },
  { "bare-cr-before-crlf", BYTES ("GET /x HTTP/1.1\r\n\r\r\n"), FALSE, TRUE },
  /* Empty lines before the request line are skipped, as libsoup skips
   * them; they end nothing. */
  { "leading-crlf", BYTES ("\r\n\r\nGET /x HTTP/1.1\r\nHost: a.example\r\n\r\n"), TRUE, TRUE },
  { "leading-lf", BYTES ("\nGET /x HTTP/1.1\n\n"), TRUE, TRUE },
  /* libsoup checks only the bytes before an empty line, not whether a
   * request line came: three CRLFs are a head (one its parser refuses). */
  { "empty-lines", BYTES ("\r\n\r\n\r\n"), TRUE, FALSE },
  { "two-lfs", BYTES ("\n\n"), FALSE, FALSE },
  /* NUL bytes are the parser's to refuse; they do not end a head early. */
  { "nul-in-request-line", BYTES ("GET /x\0y HTTP/1.1\r\nHost: a.example\r\n\r\n"), TRUE, TRUE },
  { "nul-in-header", BYTES ("GET /x HTTP/1.1\r\nHost: a.exa\0mple\r\n\r\n"), TRUE, TRUE },
  /* The target's first byte, as libsoup splits the request line. */
  { "absolute-form", BYTES ("GET http://a.example/x HTTP/1.1\r\nHost: a.example\r\n\r\n"), TRUE, FALSE },
  { "absolute-form-uppercase", BYTES ("GET HTTP://a.example/x HTTP/1.1\r\n\r\n"), TRUE, FALSE },
  { "asterisk", BYTES ("OPTIONS * HTTP/1.1\r\nHost: a.example\r\n\r\n"), TRUE, FALSE },
  { "authority-form", BYTES ("CONNECT a.example:443 HTTP/1.1\r\n\r\n"), TRUE, FALSE },
  { "tab-separated", BYTES ("GET\t/x HTTP/1.1\r\n\r\n"), TRUE, TRUE },
  { "two-spaces", BYTES ("GET  /x HTTP/1.1\r\n\r\n"), TRUE, TRUE },
  /* An empty method: the target is still split off after the blank. */
  { "leading-space", BYTES (" /x HTTP/1.1\r\n\r\n"), TRUE, TRUE },
  { "no-target", BYTES ("GET\r\n\r\n"), TRUE, FALSE },
  { "unfinished", BYTES ("GET /x HTTP/1.1\r\nHost: a.example\r\n"), FALSE, FALSE },
};

static void
test_head_end (gconstpointer data)
{
  const EndCase *end = data;
  SandboxGatewayHeadScan scan;

  g_assert_cmpint (sandbox_gateway_framing_scan_head (end->head, end->length, &scan), ==, end->complete);
  g_assert_null (scan.refusal.reason);
  g_assert_cmpuint (scan.length, ==, end->length);
  if (end->complete)
    g_assert_cmpint (scan.origin_form, ==, end->origin_form);
}

/* A head stops at 64 KiB, answered 414 while still in the request line and
 * 431 after it (change SANDBOX_GATEWAY_MAX_HEAD_BYTES in follow_head() to
 * G_MAXSIZE: these heads then end, and libsoup drops the connection
 * without a word). A head of exactly the limit is whole. */
static void
test_head_limit (void)
{
  g_autoptr(GString) head = g_string_new ("GET /x HTTP/1.1\r\nX: ");
  SandboxGatewayHeadScan scan;
  gsize filler = SANDBOX_GATEWAY_MAX_HEAD_BYTES - head->len - strlen ("\r\n\r\n");

  for (gsize i = 0; i < filler; i++)
    g_string_append_c (head, 'a');
  g_string_append (head, "\r\n\r\n");
  g_assert_cmpuint (head->len, ==, SANDBOX_GATEWAY_MAX_HEAD_BYTES);
  g_assert_true (sandbox_gateway_framing_scan_head (head->str, head->len, &scan));
  g_assert_cmpuint (scan.length, ==, SANDBOX_GATEWAY_MAX_HEAD_BYTES);

  g_string_insert_c (head, head->len - 4, 'a');
  g_assert_false (sandbox_gateway_framing_scan_head (head->str, head->len, &scan));
  g_assert_cmpuint (scan.refusal.status, ==, 431);
  g_assert_cmpstr (scan.refusal.reason, ==, "head-too-large");
  g_assert_cmpuint (scan.length, ==, 0);

  g_string_assign (head, "GET /");
  while (head->len <= SANDBOX_GATEWAY_MAX_HEAD_BYTES)
    g_string_append_c (head, 'a');
  g_assert_false (sandbox_gateway_framing_scan_head (head->str, head->len, &scan));
  g_assert_cmpuint (scan.refusal.status, ==, 414);
  g_assert_cmpstr (scan.refusal.reason, ==, "target-too-long");
}

/* Scans @head to its end and returns the scanner waiting there. */
static void
scan_to_body (SandboxGatewayFraming *framing,
              const char            *head)
{
  SandboxGatewayFramingRefusal refusal = { 0, NULL };

  sandbox_gateway_framing_init (framing);
  g_assert_cmpuint (sandbox_gateway_framing_follow (framing, head, strlen (head), &refusal), ==, strlen (head));
  g_assert_null (refusal.reason);
  g_assert_cmpint (framing->state, ==, SANDBOX_GATEWAY_FRAMING_AWAIT);
}

/* Nothing passes a head's end before the body's framing is known (make
 * sandbox_gateway_framing_follow() treat SANDBOX_GATEWAY_FRAMING_AWAIT as the head state:
 * these bytes are then taken as the start of another request). */
static void
test_body_awaited (void)
{
  SandboxGatewayFraming framing;
  SandboxGatewayFramingRefusal refusal = { 0, NULL };

  scan_to_body (&framing, HEAD);
  g_assert_cmpuint (sandbox_gateway_framing_follow (&framing, "x", 1, &refusal), ==, 0);
  g_assert_cmpuint (refusal.status, ==, 400);
  g_assert_cmpstr (refusal.reason, ==, "invalid-framing");

  /* Told of a body when not at a head's end, the scanner follows nothing
   * more: the connection ends with this request. */
  sandbox_gateway_framing_init (&framing);
  g_assert_false (sandbox_gateway_framing_begin_body (&framing, SANDBOX_GATEWAY_BODY_NONE, 0));
  refusal = (SandboxGatewayFramingRefusal) { 0, NULL };
  g_assert_cmpuint (sandbox_gateway_framing_follow (&framing, HEAD HEAD, 2 * strlen (HEAD), &refusal),
                    ==, 2 * strlen (HEAD));
  g_assert_null (refusal.reason);
  g_assert_false (sandbox_gateway_framing_target_is_origin_form (&framing));

  /* A framing libsoup could not name, likewise. */
  scan_to_body (&framing, HEAD);
  g_assert_true (sandbox_gateway_framing_begin_body (&framing, SANDBOX_GATEWAY_BODY_UNKNOWN, 0));
  g_assert_cmpint (framing.state, ==, SANDBOX_GATEWAY_FRAMING_OPAQUE);
}

/* A body of known length is counted to its last byte, and the next head
 * starts right after it, whatever it claims to be (count one byte less in
 * sandbox_gateway_framing_follow(): the smuggled head then starts with "b" and is not
 * the request "GET /evil"). */
static void
test_length_body (void)
{
  const char *rest = "abcGET /evil HTTP/1.1\r\nHost: a.example\r\n\r\n";
  SandboxGatewayFraming framing;
  SandboxGatewayFramingRefusal refusal = { 0, NULL };

  scan_to_body (&framing, "POST /x HTTP/1.1\r\nHost: a.example\r\nContent-Length: 3\r\n\r\n");
  g_assert_true (sandbox_gateway_framing_begin_body (&framing, SANDBOX_GATEWAY_BODY_LENGTH, 3));
  g_assert_cmpstr (sandbox_gateway_framing_incomplete_reason (&framing), ==, "incomplete-body");
  g_assert_cmpuint (sandbox_gateway_framing_follow (&framing, rest, 2, &refusal), ==, 2);
  g_assert_cmpuint (sandbox_gateway_framing_follow (&framing, rest + 2, strlen (rest) - 2, &refusal),
                    ==, strlen (rest) - 2);
  g_assert_null (refusal.reason);
  g_assert_cmpint (framing.state, ==, SANDBOX_GATEWAY_FRAMING_AWAIT);
  g_assert_true (sandbox_gateway_framing_target_is_origin_form (&framing));

  /* An empty body is no body. */
  scan_to_body (&framing, HEAD);
  g_assert_true (sandbox_gateway_framing_begin_body (&framing, SANDBOX_GATEWAY_BODY_LENGTH, 0));
  g_assert_null (sandbox_gateway_framing_incomplete_reason (&framing));
}

typedef struct
{
  const char *name;
  const char *body;
  gsize length;
  const char *reason;   /* NULL: accepted */
} ChunkedCase;

/* libsoup 3.2's chunked reader takes each of these for the end of the body
 * (or for something else than what RFC 9112 says), and would parse the rest
 * as a new request: the scanner refuses them all. The same bodies are sent
 * to a live gateway in test-gateway.c. */
static const ChunkedCase chunked_cases[] = {
  { "whole", BYTES ("5\r\nhello\r\n5;ext=1\r\nhello\r\n0\r\n\r\n"), NULL },
  { "uppercase-hex", BYTES ("A\r\n0123456789\r\n0\r\n\r\n"), NULL },
  { "overflow", BYTES ("FFFFFFFFFFFFFFFF1\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "overflow-exact", BYTES ("10000000000000000\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "not-hex", BYTES ("zz\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "empty-size", BYTES ("\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "plus-sign", BYTES ("+5\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "minus-one", BYTES ("-1\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "hex-prefix", BYTES ("0x5\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "leading-space", BYTES (" 5\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "ext-control-byte", BYTES ("5;a\001b\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "ext-bare-cr", BYTES ("5;a\rb\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "ext-nul", BYTES ("5;a\0b\r\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "size-bare-lf", BYTES ("5\nhello\r\n0\r\n\r\n"), "invalid-chunk" },
  { "data-bare-lf", BYTES ("5\r\nhello\n0\r\n\r\n"), "invalid-chunk" },
  { "data-overrun", BYTES ("5\r\nhelloXX\r\n0\r\n\r\n"), "invalid-chunk" },
  { "last-chunk-bare-lf", BYTES ("5\r\nhello\r\n0\n\r\n"), "invalid-chunk" },
  { "final-bare-lf", BYTES ("5\r\nhello\r\n0\r\n\n"), "invalid-chunk" },
  { "trailer", BYTES ("5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n"), "request-trailers" },
  { "trailer-smuggled-request", BYTES ("5\r\nhello\r\n0\r\nGET /evil HTTP/1.1\r\nHost: x\r\n\r\n"), "request-trailers" },
};

/* Whole bodies end at their last CRLF, so the next request starts right
 * after; each hostile one is refused at the byte that breaks the grammar,
 * whatever the reads' sizes (make follow_chunk_line() accept any byte in
 * CHUNK_SIZE: "zz" and its siblings then pass). */
static void
test_chunked_body (gconstpointer data)
{
  const ChunkedCase *chunked = data;
  g_autoptr(GString) bytes = g_string_new_len (chunked->body, chunked->length);

  g_string_append (bytes, HEAD);
  for (gsize piece = 1; piece <= bytes->len; piece++)
    {
      SandboxGatewayFraming framing;
      SandboxGatewayFramingRefusal refusal;
      gsize taken;

      scan_to_body (&framing, "POST /x HTTP/1.1\r\nHost: a.example\r\nTransfer-Encoding: chunked\r\n\r\n");
      g_assert_true (sandbox_gateway_framing_begin_body (&framing, SANDBOX_GATEWAY_BODY_CHUNKED, 0));
      taken = follow_in_pieces (&framing, bytes->str, bytes->len, piece, &refusal);

      if (chunked->reason == NULL)
        {
          g_assert_null (refusal.reason);
          g_assert_cmpuint (taken, ==, bytes->len);
          g_assert_cmpint (framing.state, ==, SANDBOX_GATEWAY_FRAMING_AWAIT);
        }
      else
        {
          g_assert_cmpuint (refusal.status, ==, 400);
          g_assert_cmpstr (refusal.reason, ==, chunked->reason);
          g_assert_cmpuint (taken, <, chunked->length);
        }
    }
}

/* A chunk-size line of 128 bytes, LF included, fits libsoup 3.2's buffer;
 * one of 129 would be dropped by libsoup without an answer, and is refused
 * (raise MAX_CHUNK_LINE_BYTES: the second body then passes the scanner). */
static void
test_chunk_line_limit (void)
{
  for (gsize line = 128; line <= 129; line++)
    {
      g_autoptr(GString) body = g_string_new ("5;");
      SandboxGatewayFraming framing;
      SandboxGatewayFramingRefusal refusal = { 0, NULL };

      while (body->len < line - 2)
        g_string_append_c (body, 'e');
      g_string_append (body, "\r\nhello\r\n0\r\n\r\n");

      scan_to_body (&framing, "POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
      sandbox_gateway_framing_begin_body (&framing, SANDBOX_GATEWAY_BODY_CHUNKED, 0);
      sandbox_gateway_framing_follow (&framing, body->str, body->len, &refusal);
      g_assert_cmpstr (refusal.reason, ==, line == 128 ? NULL : "invalid-chunk");
    }
}

/* What an end of stream cuts short: nothing between requests, a head or a
 * body (make sandbox_gateway_framing_incomplete_reason() return NULL in a
 * chunked body: a half-close after "5\r\nhello\r\n" then forwards "hello"
 * as the whole body). */
static void
test_incomplete (void)
{
  SandboxGatewayFraming framing;
  SandboxGatewayFramingRefusal refusal = { 0, NULL };

  sandbox_gateway_framing_init (&framing);
  g_assert_null (sandbox_gateway_framing_incomplete_reason (&framing));
  g_assert_false (sandbox_gateway_framing_is_in_head (&framing));

  sandbox_gateway_framing_follow (&framing, "GET", 3, &refusal);
  g_assert_cmpstr (sandbox_gateway_framing_incomplete_reason (&framing), ==, "incomplete-head");
  g_assert_true (sandbox_gateway_framing_is_in_head (&framing));

  scan_to_body (&framing, HEAD);
  g_assert_false (sandbox_gateway_framing_is_in_head (&framing));
  sandbox_gateway_framing_begin_body (&framing, SANDBOX_GATEWAY_BODY_CHUNKED, 0);
  sandbox_gateway_framing_follow (&framing, "5\r\nhello\r\n", 10, &refusal);
  g_assert_cmpstr (sandbox_gateway_framing_incomplete_reason (&framing), ==, "incomplete-body");
  sandbox_gateway_framing_follow (&framing, "0\r\n\r\n", 5, &refusal);
  g_assert_null (refusal.reason);
  g_assert_null (sandbox_gateway_framing_incomplete_reason (&framing));
}

typedef struct
{
  const char *name;
  const char *headers;   /* after "GET /x HTTP/1.1\r\n", before the empty line */
  gsize length;
  const char *reason;    /* NULL: accepted */
  const char *host;      /* for accepted ones: the Host the checks saw */
} HeaderCase;

static const HeaderCase header_cases[] = {
  { "plain", BYTES ("Host: a.example\r\n"), NULL, "a.example" },
  { "host-port", BYTES ("Host: a.example:8080\r\n"), NULL, "a.example:8080" },
  { "host-ipv6", BYTES ("Host: [::1]:8080\r\n"), NULL, "[::1]:8080" },
  { "missing-host", BYTES ("Accept: */*\r\n"), "missing-host", NULL },
  { "duplicate-host", BYTES ("Host: a.example\r\nHost: evil.example\r\n"), "duplicate-host", NULL },
  { "duplicate-host-case",
    BYTES ("Host: a.example\r\nhOsT: a.example\r\n"),
    "duplicate-host", NULL },
  { "host-userinfo", BYTES ("Host: a.example@evil.example\r\n"), "invalid-host", NULL },
  { "host-space", BYTES ("Host: a.example evil.example\r\n"), "invalid-host", NULL },
  { "host-empty", BYTES ("Host:\r\n"), "invalid-host", NULL },
  { "host-path", BYTES ("Host: a.example/x\r\n"), "invalid-host", NULL },
  /* libsoup unfolds an obs-fold continuation into the value before it. */
  { "host-obs-fold", BYTES ("Host: a.example\r\n evil.example\r\n"), "invalid-host", NULL },
  { "obs-fold-hides-no-host",
    BYTES ("X-A: 1\r\n Host: evil.example\r\nHost: a.example\r\n"),
    NULL, "a.example" },
  /* A CR inside a line is no line end for libsoup: it stays in the value. */
  { "host-bare-cr", BYTES ("Host: a.example\rX-Injected: 1\r\n"), "invalid-host", NULL },
  /* libsoup 3.2.3 drops NUL bytes from header lines (3.5.2 refuses the
   * head, as Debian's 3.2.3 does with that fix backported): either way
   * this is refused. */
  { "host-nul-userinfo", BYTES ("Host: a.example\0@evil.example\r\n"), "invalid-host", NULL },
  { "content-length-and-chunked",
    BYTES ("Host: a.example\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n"),
    "ambiguous-framing", NULL },
  { "chunked-and-content-length",
    BYTES ("Host: a.example\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n"),
    "ambiguous-framing", NULL },
  { "conflicting-content-length",
    BYTES ("Host: a.example\r\nContent-Length: 3\r\nContent-Length: 40\r\n"),
    "ambiguous-framing", NULL },
  { "duplicate-content-length",
    BYTES ("Host: a.example\r\nContent-Length: 3\r\nContent-Length: 3\r\n"),
    "ambiguous-framing", NULL },
  { "content-length-list",
    BYTES ("Host: a.example\r\nContent-Length: 3, 3\r\n"),
    "ambiguous-framing", NULL },
  { "content-length-plus",
    BYTES ("Host: a.example\r\nContent-Length: +3\r\n"),
    "ambiguous-framing", NULL },
  { "content-length-negative",
    BYTES ("Host: a.example\r\nContent-Length: -1\r\n"),
    "ambiguous-framing", NULL },
  { "content-length-hex",
    BYTES ("Host: a.example\r\nContent-Length: 0x3\r\n"),
    "ambiguous-framing", NULL },
  { "content-length-empty",
    BYTES ("Host: a.example\r\nContent-Length:\r\n"),
    "ambiguous-framing", NULL },
  { "content-length-obs-fold",
    BYTES ("Host: a.example\r\nContent-Length: 3\r\n 4\r\n"),
    "ambiguous-framing", NULL },
  { "transfer-encoding-gzip",
    BYTES ("Host: a.example\r\nTransfer-Encoding: gzip, chunked\r\n"),
    "ambiguous-framing", NULL },
  { "transfer-encoding-twice",
    BYTES ("Host: a.example\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n"),
    "ambiguous-framing", NULL },
  { "transfer-encoding-identity",
    BYTES ("Host: a.example\r\nTransfer-Encoding: identity\r\n"),
    "ambiguous-framing", NULL },
  { "content-length", BYTES ("Host: a.example\r\nContent-Length: 3\r\n"), NULL, "a.example" },
  { "chunked-any-case",
    BYTES ("Host: a.example\r\nTransfer-Encoding: Chunked\r\n"),
    NULL, "a.example" },
};

/* Each head goes through the scanner, then libsoup's parser, then the
 * checks, as on a live connection (make framing_is_unambiguous() return
 * TRUE: "content-length-and-chunked" then passes, and libsoup would frame
 * the body by Transfer-Encoding while an upstream might use the length). */
static void
test_header_checks (gconstpointer data)
{
  const HeaderCase *check = data;
  g_autoptr(GString) head = g_string_new ("GET /x HTTP/1.1\r\n");
  g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_REQUEST);
  g_autofree char *method = NULL;
  g_autofree char *path = NULL;
  SandboxGatewayRefusal refusal = { 0 };
  SandboxGatewayHeadScan scan;
  const char *host = NULL;
  SoupHTTPVersion version;
  guint status;

  g_string_append_len (head, check->headers, check->length);
  g_string_append (head, "\r\n");

  g_assert_true (sandbox_gateway_framing_scan_head (head->str, head->len, &scan));
  g_assert_cmpuint (scan.length, ==, head->len);
  status = soup_headers_parse_request (head->str, (int) scan.length, headers, &method, &path, &version);

  /* A head libsoup's parser refuses is answered by libsoup (the gateway
   * audits it as "malformed"); only a refused one may be. */
  if (status != SOUP_STATUS_OK)
    g_assert_nonnull (check->reason);
  else if (check->reason == NULL)
    {
      g_assert_true (sandbox_gateway_http_check_head (headers, &host, &refusal));
      g_assert_cmpstr (host, ==, check->host);
    }
  else
    {
      g_assert_false (sandbox_gateway_http_check_head (headers, &host, &refusal));
      g_assert_cmpuint (refusal.status, ==, SOUP_STATUS_BAD_REQUEST);
      g_assert_cmpint (refusal.decision, ==, SANDBOX_GATEWAY_DECISION_BAD_REQUEST);
      g_assert_cmpstr (refusal.reason, ==, check->reason);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/gateway/head/ends-at-empty-line", test_ends_at_empty_line);
  for (gsize i = 0; i < G_N_ELEMENTS (end_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sandbox/gateway/head/end/%s", end_cases[i].name);

      g_test_add_data_func (path, &end_cases[i], test_head_end);
    }
  g_test_add_func ("/sandbox/gateway/head/limit", test_head_limit);
  g_test_add_func ("/sandbox/gateway/head/body-awaited", test_body_awaited);
  g_test_add_func ("/sandbox/gateway/head/length-body", test_length_body);
  for (gsize i = 0; i < G_N_ELEMENTS (chunked_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sandbox/gateway/head/chunked/%s", chunked_cases[i].name);

      g_test_add_data_func (path, &chunked_cases[i], test_chunked_body);
    }
  g_test_add_func ("/sandbox/gateway/head/chunk-line-limit", test_chunk_line_limit);
  g_test_add_func ("/sandbox/gateway/head/incomplete", test_incomplete);
  for (gsize i = 0; i < G_N_ELEMENTS (header_cases); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sandbox/gateway/head/headers/%s", header_cases[i].name);

      g_test_add_data_func (path, &header_cases[i], test_header_checks);
    }

  return g_test_run ();
}
