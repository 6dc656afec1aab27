/* sandbox-gateway-framing.c — where each request on a connection begins and ends
 *
 * The scanner follows the framing of every request on a guest connection,
 * byte by byte, before libsoup sees the bytes: libsoup 3.2's server is not
 * hardened against a hostile client, and the gateway must know exactly where
 * each request begins and ends. It is plain data and pure functions: no
 * socket, no GObject, no libsoup (its rules are restated here, with the
 * libsoup function each one follows), so tests and fuzzers drive it with
 * bytes alone.
 *
 * Request framing. The scanner follows each head to the empty line that
 * ends it (with libsoup's own rule), and sandbox_gateway_framing_follow()
 * takes nothing past that line: libsoup then parses the head and emits
 * "got-headers", and the gateway tells the scanner how the body is framed
 * (sandbox_gateway_framing_begin_body(), from libsoup's parsed headers, so
 * both agree), before a byte of the body reaches libsoup. A body of known
 * length is counted; a chunked body is checked against RFC 9112's grammar,
 * strictly: libsoup 3.2 parses chunk sizes with an unchecked strtoul() ("zz",
 * an empty line, "-1" or an overflowing size all end the body early, and the
 * rest of it is parsed as a new request), does not check the line after a
 * chunk's data, and ends the body at the first line after the last chunk, so
 * that trailer lines after it become a request of their own. Any framing the
 * scanner does not fully understand — and any request trailer — is refused,
 * and the gateway answers 400 before the request can be handled. A head past
 * 64 KiB is refused too (libsoup would, a read later), with 431 (414 while
 * still in the request line). The scanner also records the first byte of
 * each request's target (libsoup's own split of the request line), since
 * libsoup does not say whether a target was in origin form.
 *
 * libsoup has since hardened its chunked reader: 3.6.5 reports a chunked
 * body cut short (commit 1e32b5e1), and 3.7.1 checks chunk sizes (96ac392b,
 * "server: improve parsing of chunked request body"), ends chunk lines at
 * CRLF (b9a1c066) and finds the end of trailers (8a2e15c8). With those, the
 * strict grammar here would no longer be what keeps a smuggled request out;
 * the scanner would stay, since it is also how the gateway knows where each
 * head ends (one head per read, the origin-form test) and answers a refusal
 * itself rather than have libsoup drop the connection without a word.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-gateway-framing-private.h"

/* libsoup 3.2 reads a chunk-size line into a 128-byte buffer and fails the
 * request, without an answer, when its LF is not among them: the line, LF
 * included, must fit, and is refused at its 128th byte otherwise. */
#define MAX_CHUNK_LINE_BYTES 128

/* Chunk sizes above this are refused rather than risk an overflow anywhere
 * (libsoup keeps them in a goffset); no body of the gateway's comes close. */
#define MAX_CHUNK_SIZE (G_MAXINT64 >> 4)

static void
start_head (SandboxGatewayFraming *self)
{
  self->state = SANDBOX_GATEWAY_FRAMING_HEAD;
  self->head_bytes = 0;
  self->line_bytes = 0;
  self->line_first = '\0';
  self->request_line = SANDBOX_GATEWAY_LINE_LEADING;
  self->request_line_ended = FALSE;
  self->target_first = '\0';
}

static gboolean
is_blank (char c)
{
  return c == ' ' || c == '\t';
}

/* libsoup splits the request line at spaces and tabs, after skipping any CR
 * and LF before it (soup_headers_parse_request()). */
static void
follow_request_line (SandboxGatewayFraming *self,
                     char                   c)
{
  switch (self->request_line)
    {
    case SANDBOX_GATEWAY_LINE_LEADING:
      if (c == '\r' || c == '\n')
        break;
      self->request_line = is_blank (c) ? SANDBOX_GATEWAY_LINE_GAP : SANDBOX_GATEWAY_LINE_METHOD;
      break;
    case SANDBOX_GATEWAY_LINE_METHOD:
      if (is_blank (c))
        self->request_line = SANDBOX_GATEWAY_LINE_GAP;
      break;
    case SANDBOX_GATEWAY_LINE_GAP:
      if (!is_blank (c))
        {
          self->target_first = c;
          self->request_line = SANDBOX_GATEWAY_LINE_TARGET;
        }
      break;
    case SANDBOX_GATEWAY_LINE_TARGET:
    default:
      break;
    }

  if (c == '\n' && self->request_line != SANDBOX_GATEWAY_LINE_LEADING)
    self->request_line_ended = TRUE;
}

/* Follows a head up to its end, and returns how many bytes of @data belong
 * to it. libsoup reads a head line by line and ends it at a line "\n" with at
 * least two bytes before it, or "\r\n" with at least three
 * (soup_message_io_data_read_headers()). */
static gsize
follow_head (SandboxGatewayFraming        *self,
             const char                   *data,
             gsize                         length,
             SandboxGatewayFramingRefusal *refusal)
{
  for (gsize i = 0; i < length; i++)
    {
      char c = data[i];

      self->head_bytes++;
      if (self->line_bytes++ == 0)
        self->line_first = c;
      follow_request_line (self, c);

      /* head_bytes counts only the current head, so whether it would end in
       * this read or not, it is too large. */
      if (self->head_bytes > SANDBOX_GATEWAY_MAX_HEAD_BYTES)
        {
          gboolean in_request_line = self->request_line != SANDBOX_GATEWAY_LINE_LEADING &&
                                     !self->request_line_ended;

          *refusal = in_request_line ? (SandboxGatewayFramingRefusal) { 414, "target-too-long" }
                                     : (SandboxGatewayFramingRefusal) { 431, "head-too-large" };
          return 0;
        }

      if (c != '\n')
        continue;

      if ((self->line_bytes == 1 && self->head_bytes - 1 >= 2) ||
          (self->line_bytes == 2 && self->line_first == '\r' && self->head_bytes - 2 >= 3))
        {
          self->state = SANDBOX_GATEWAY_FRAMING_AWAIT;
          return i + 1;
        }
      self->line_bytes = 0;
    }

  return length;
}

static int
hex_value (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

static gboolean
invalid_chunk (SandboxGatewayFramingRefusal *refusal,
               const char                   *reason)
{
  *refusal = (SandboxGatewayFramingRefusal) { 400, reason };
  return FALSE;
}

/* One byte of a chunk-size line: 1*HEXDIG [ chunk-ext ] CRLF. Extensions
 * are visible ASCII, spaces and tabs; libsoup ignores what follows the
 * digits, and nothing else may follow them. */
static gboolean
follow_chunk_line (SandboxGatewayFraming        *self,
                   char                          c,
                   SandboxGatewayFramingRefusal *refusal)
{
  int digit = hex_value (c);

  if (++self->chunk_line_bytes >= MAX_CHUNK_LINE_BYTES && c != '\n')
    return invalid_chunk (refusal, "invalid-chunk");

  switch (self->chunk_state)
    {
    case SANDBOX_GATEWAY_CHUNK_SIZE:
      if (digit >= 0)
        {
          if (self->body_remaining > MAX_CHUNK_SIZE)
            return invalid_chunk (refusal, "invalid-chunk");
          self->body_remaining = self->body_remaining * 16 + (guint64) digit;
          self->chunk_has_digits = TRUE;
          return TRUE;
        }
      if (!self->chunk_has_digits)
        return invalid_chunk (refusal, "invalid-chunk");
      if (c == '\r')
        self->chunk_state = SANDBOX_GATEWAY_CHUNK_SIZE_LF;
      else if (c == ';' || is_blank (c))
        self->chunk_state = SANDBOX_GATEWAY_CHUNK_EXT;
      else
        return invalid_chunk (refusal, "invalid-chunk");
      return TRUE;

    case SANDBOX_GATEWAY_CHUNK_EXT:
      if (c == '\r')
        self->chunk_state = SANDBOX_GATEWAY_CHUNK_SIZE_LF;
      else if (!is_blank (c) && (c < 0x21 || c > 0x7e))
        return invalid_chunk (refusal, "invalid-chunk");
      return TRUE;

    case SANDBOX_GATEWAY_CHUNK_SIZE_LF:
      if (c != '\n')
        return invalid_chunk (refusal, "invalid-chunk");
      self->chunk_state = self->body_remaining > 0 ? SANDBOX_GATEWAY_CHUNK_DATA
                                                   : SANDBOX_GATEWAY_CHUNK_TRAILER;
      return TRUE;

    case SANDBOX_GATEWAY_CHUNK_DATA:
    case SANDBOX_GATEWAY_CHUNK_DATA_CR:
    case SANDBOX_GATEWAY_CHUNK_DATA_LF:
    case SANDBOX_GATEWAY_CHUNK_TRAILER:
    case SANDBOX_GATEWAY_CHUNK_FINAL_LF:
    default:
      g_assert_not_reached ();
    }
}

static void
start_chunk (SandboxGatewayFraming *self)
{
  self->chunk_state = SANDBOX_GATEWAY_CHUNK_SIZE;
  self->chunk_line_bytes = 0;
  self->chunk_has_digits = FALSE;
  self->body_remaining = 0;
}

/* Follows a chunked body up to its end, and returns how many bytes of @data
 * belong to it (all of them, or it ended). */
static gsize
follow_chunked (SandboxGatewayFraming        *self,
                const char                   *data,
                gsize                         length,
                SandboxGatewayFramingRefusal *refusal)
{
  gsize i = 0;

  while (i < length)
    {
      char c = data[i];

      switch (self->chunk_state)
        {
        case SANDBOX_GATEWAY_CHUNK_SIZE:
        case SANDBOX_GATEWAY_CHUNK_EXT:
        case SANDBOX_GATEWAY_CHUNK_SIZE_LF:
          if (!follow_chunk_line (self, c, refusal))
            return 0;
          i++;
          break;

        case SANDBOX_GATEWAY_CHUNK_DATA:
          {
            gsize run = (gsize) MIN ((guint64) (length - i), self->body_remaining);

            self->body_remaining -= run;
            i += run;
            if (self->body_remaining == 0)
              self->chunk_state = SANDBOX_GATEWAY_CHUNK_DATA_CR;
          }
          break;

        case SANDBOX_GATEWAY_CHUNK_DATA_CR:
          if (c != '\r')
            return invalid_chunk (refusal, "invalid-chunk");
          self->chunk_state = SANDBOX_GATEWAY_CHUNK_DATA_LF;
          i++;
          break;

        case SANDBOX_GATEWAY_CHUNK_DATA_LF:
          if (c != '\n')
            return invalid_chunk (refusal, "invalid-chunk");
          start_chunk (self);
          i++;
          break;

        /* libsoup 3.2 ends the body at the first line after the last chunk,
         * whatever it holds, and would parse the trailer lines after it as a
         * request of their own: trailers are refused. */
        case SANDBOX_GATEWAY_CHUNK_TRAILER:
          if (c != '\r')
            return invalid_chunk (refusal, c == '\n' ? "invalid-chunk" : "request-trailers");
          self->chunk_state = SANDBOX_GATEWAY_CHUNK_FINAL_LF;
          i++;
          break;

        case SANDBOX_GATEWAY_CHUNK_FINAL_LF:
          if (c != '\n')
            return invalid_chunk (refusal, "invalid-chunk");
          start_head (self);
          return i + 1;

        default:
          g_assert_not_reached ();
        }
    }

  return length;
}

/*
 * sandbox_gateway_framing_follow:
 * @data: bytes read from the guest
 * @length: how many
 * @refusal: (out caller-allocates): set when the request is refused; its
 *   reason must be NULL on entry
 *
 * Follows @length bytes of the connection.
 *
 * Returns: how many of them libsoup may have now: up to a head's end at
 *   most; 0 when the request is refused
 */
gsize
sandbox_gateway_framing_follow (SandboxGatewayFraming        *self,
                                const char                   *data,
                                gsize                         length,
                                SandboxGatewayFramingRefusal *refusal)
{
  gsize done = 0;

  while (done < length && refusal->reason == NULL)
    {
      gsize taken;

      switch (self->state)
        {
        case SANDBOX_GATEWAY_FRAMING_HEAD:
          taken = follow_head (self, data + done, length - done, refusal);
          if (refusal->reason == NULL && self->state == SANDBOX_GATEWAY_FRAMING_AWAIT)
            return done + taken;
          break;

        case SANDBOX_GATEWAY_FRAMING_LENGTH:
          taken = (gsize) MIN ((guint64) (length - done), self->body_remaining);
          self->body_remaining -= taken;
          if (self->body_remaining == 0)
            start_head (self);
          break;

        case SANDBOX_GATEWAY_FRAMING_CHUNKED:
          taken = follow_chunked (self, data + done, length - done, refusal);
          break;

        case SANDBOX_GATEWAY_FRAMING_OPAQUE:
          taken = length - done;
          break;

        case SANDBOX_GATEWAY_FRAMING_AWAIT:
        default:
          /* libsoup reads nothing between a head and its "got-headers". */
          *refusal = (SandboxGatewayFramingRefusal) { 400, "invalid-framing" };
          taken = 0;
          break;
        }

      done += taken;
    }

  return refusal->reason != NULL ? 0 : done;
}
/*
 * sandbox_gateway_framing_init:
 *
 * Starts @self at the beginning of a connection: before a request head.
 */
void
sandbox_gateway_framing_init (SandboxGatewayFraming *self)
{
  start_head (self);
}

/*
 * sandbox_gateway_framing_begin_body:
 * @body: how the body of the request whose head was just read is framed, as
 *   libsoup took it from the head
 * @length: its length, for %SANDBOX_GATEWAY_BODY_LENGTH
 *
 * Called from "got-headers", before libsoup reads any of the body: the
 * scanner lets nothing past a head's end through until it knows how the
 * body that follows is framed.
 *
 * Returns: %FALSE if the scanner was not waiting at a head's end: libsoup
 *   and the scanner disagree about where this request is, and the scanner
 *   follows nothing more on the connection (it must be closed after this
 *   request)
 */
gboolean
sandbox_gateway_framing_begin_body (SandboxGatewayFraming *self,
                                    SandboxGatewayBody     body,
                                    guint64                length)
{
  if (self->state != SANDBOX_GATEWAY_FRAMING_AWAIT)
    {
      self->state = SANDBOX_GATEWAY_FRAMING_OPAQUE;
      return FALSE;
    }

  switch (body)
    {
    case SANDBOX_GATEWAY_BODY_NONE:
      start_head (self);
      break;
    case SANDBOX_GATEWAY_BODY_LENGTH:
      if (length == 0)
        {
          start_head (self);
          break;
        }
      self->state = SANDBOX_GATEWAY_FRAMING_LENGTH;
      self->body_remaining = length;
      break;
    case SANDBOX_GATEWAY_BODY_CHUNKED:
      self->state = SANDBOX_GATEWAY_FRAMING_CHUNKED;
      start_chunk (self);
      break;
    case SANDBOX_GATEWAY_BODY_UNKNOWN:
    default:
      self->state = SANDBOX_GATEWAY_FRAMING_OPAQUE;
      break;
    }

  return TRUE;
}

/*
 * sandbox_gateway_framing_target_is_origin_form:
 *
 * Returns: whether the target of the request whose head was just read
 *   starts with "/", as libsoup splits its request line; ask before
 *   sandbox_gateway_framing_begin_body()
 */
gboolean
sandbox_gateway_framing_target_is_origin_form (const SandboxGatewayFraming *self)
{
  return self->state == SANDBOX_GATEWAY_FRAMING_AWAIT && self->target_first == '/';
}

/*
 * sandbox_gateway_framing_is_in_head:
 *
 * Returns: whether part of a request head has been read and its end not yet
 */
gboolean
sandbox_gateway_framing_is_in_head (const SandboxGatewayFraming *self)
{
  return self->state == SANDBOX_GATEWAY_FRAMING_HEAD && self->head_bytes > 0;
}

/*
 * sandbox_gateway_framing_incomplete_reason:
 *
 * What an end of stream here cuts short.
 *
 * Returns: (nullable): %NULL between requests (nothing is cut short),
 *   "incomplete-head" inside a head, else "incomplete-body"
 */
const char *
sandbox_gateway_framing_incomplete_reason (const SandboxGatewayFraming *self)
{
  if (self->state != SANDBOX_GATEWAY_FRAMING_HEAD)
    return "incomplete-body";

  return self->head_bytes > 0 ? "incomplete-head" : NULL;
}

/*
 * sandbox_gateway_framing_scan_head:
 * @data: the first bytes a guest sent on a connection
 * @length: how many
 * @scan: (out caller-allocates): what was found
 *
 * Scans the request head at the start of @data, as a fresh connection's
 * scanner does: a total function of the bytes, for tests and fuzzers.
 *
 * Returns: whether a head ended within @data (and was not refused)
 */
gboolean
sandbox_gateway_framing_scan_head (const char             *data,
                                   gsize                   length,
                                   SandboxGatewayHeadScan *scan)
{
  SandboxGatewayFraming framing;

  *scan = (SandboxGatewayHeadScan) { 0 };
  sandbox_gateway_framing_init (&framing);
  scan->length = sandbox_gateway_framing_follow (&framing, data, length, &scan->refusal);
  scan->complete = scan->refusal.reason == NULL && framing.state == SANDBOX_GATEWAY_FRAMING_AWAIT;
  scan->origin_form = sandbox_gateway_framing_target_is_origin_form (&framing);

  return scan->complete;
}
