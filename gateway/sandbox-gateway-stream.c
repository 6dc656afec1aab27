/* sandbox-gateway-stream.c — the guest connections handed to libsoup
 *
 * A SandboxGatewayStream is a GSocketConnection whose input stream reads the
 * socket as GSocketInputStream does, but follows the framing of every request
 * on the connection itself, byte by byte, before libsoup sees the bytes:
 * libsoup 3.2's server is not hardened against a hostile client, and the
 * gateway must know exactly where each request begins and ends.
 *
 * Request framing. The stream follows each head to the empty line that ends
 * it (with libsoup's own rule), and hands libsoup nothing past that line in
 * the same read: libsoup then parses the head and emits "got-headers", and
 * the gateway tells the stream how the body is framed
 * (sandbox_gateway_stream_begin_body(), from libsoup's parsed headers, so
 * both agree), before a byte of the body reaches libsoup. A body of known
 * length is counted; a chunked body is checked against RFC 9112's grammar,
 * strictly: libsoup 3.2 parses chunk sizes with an unchecked strtoul() ("zz",
 * an empty line, "-1" or an overflowing size all end the body early, and the
 * rest of it is parsed as a new request), does not check the line after a
 * chunk's data, and ends the body at the first line after the last chunk, so
 * that trailer lines after it become a request of their own. Any framing the
 * stream does not fully understand — and any request trailer — ends the
 * connection's input with a refusal that the gateway answers with 400,
 * before the request can be handled. The stream also records the first byte
 * of each request's target (libsoup's own split of the request line), since
 * libsoup does not say whether a target was in origin form.
 *
 * The input stream also ends a request cut short: libsoup 3.2 takes the end
 * of the stream in the middle of a head for the head's end, and in the
 * middle of a chunked body for the body's end, and would handle, and the
 * gateway forward, whatever part arrived. An end of stream inside a request
 * is reported as an error instead; a head past 64 KiB is ended by the stream
 * itself (libsoup would, a read later), so that each refusal reaches the
 * gateway, which answers 431 (414 while still in the request line).
 *
 * It also works around a libsoup 3.2 bug (fixed upstream in libsoup commit
 * d20c6601, "Don't leak idle connections closed by the client", after
 * 3.2.3): after a keep-alive response, libsoup 3.2 prepares the next message
 * without a completion callback and only "starts" it once a first byte has
 * arrived. When the guest closes the idle connection instead — or its socket
 * fails, or the gateway's own header deadline shuts it down — that message
 * fails silently and nothing ever disconnects the connection: its socket,
 * its stream and its SoupServerConnection stay alive until the server is
 * disposed, one file descriptor per connection. So, between requests, end of
 * stream or a read error is reported as a stand-in line "X\n" followed by an
 * error. The line makes libsoup start the message, the error then ends it
 * through its completion callback, and libsoup disconnects the connection
 * itself. The stand-in can never complete a request: it holds no blank line,
 * and nothing follows it but the error, so libsoup answers nothing and
 * forwards nothing.
 *
 * The input stream also gives libsoup read sources that poll nothing
 * themselves. GLib writes a context's wakeup eventfd (and runs one more loop
 * iteration) whenever its set of polled fds changes, even on its own thread:
 * when a source with an fd is attached or destroyed, and twice whenever a
 * source that may not recurse is dispatched, for each fd of it and of its
 * children. libsoup nests the socket's source four deep and makes one per
 * read, which cost eight such writes per request. Instead, one watch per
 * connection polls the socket for the connection's life, and the read
 * sources are ready when its poll result says so.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <errno.h>
#include <string.h>

#include "sandbox-gateway-stream-private.h"

#define STAND_IN_LINE "X\n"

/* libsoup 3.2 refuses a head longer than this, after reading it; the stream
 * stops at the same size, so that the refusal is the gateway's (and audited). */
#define MAX_HEAD_BYTES (64 * 1024)

/* libsoup 3.2 reads a chunk-size line into a 128-byte buffer and fails the
 * request, without an answer, when its LF is not among them: the line, LF
 * included, must fit, and is refused at its 128th byte otherwise. */
#define MAX_CHUNK_LINE_BYTES 128

/* Chunk sizes above this are refused rather than risk an overflow anywhere
 * (libsoup keeps them in a goffset); no body of the gateway's comes close. */
#define MAX_CHUNK_SIZE (G_MAXINT64 >> 4)

/* Where the stream is in the connection's byte stream. */
typedef enum
{
  FRAMING_HEAD,    /* in a request head, or before one */
  FRAMING_AWAIT,   /* a head ended: nothing more until its body's framing is known */
  FRAMING_LENGTH,  /* in a body of known length */
  FRAMING_CHUNKED, /* in a chunked body */
  FRAMING_OPAQUE,  /* past what can be followed: the connection ends with this request */
} Framing;

/* Where the request line is, as libsoup splits it: CR and LF before it are
 * skipped, the method runs to a space or tab, the target starts after them. */
typedef enum
{
  LINE_LEADING,
  LINE_METHOD,
  LINE_GAP,
  LINE_TARGET,
} RequestLine;

typedef enum
{
  CHUNK_SIZE,      /* 1*HEXDIG */
  CHUNK_EXT,       /* [ chunk-ext ] */
  CHUNK_SIZE_LF,   /* CR seen, LF expected */
  CHUNK_DATA,
  CHUNK_DATA_CR,
  CHUNK_DATA_LF,
  CHUNK_TRAILER,   /* after the last chunk: only the final CRLF is accepted */
  CHUNK_FINAL_LF,
} ChunkState;

/* Why the stream refuses a request: the status the gateway answers (0: the
 * guest gets no answer) and the audit reason. */
typedef struct
{
  guint status;
  const char *reason;
} Refusal;

/* The input stream */

#define SANDBOX_TYPE_GATEWAY_INPUT (sandbox_gateway_input_get_type ())
G_DECLARE_FINAL_TYPE (SandboxGatewayInput, sandbox_gateway_input, SANDBOX, GATEWAY_INPUT, GInputStream)

struct _SandboxGatewayInput
{
  GInputStream parent_instance;

  GSocket *socket;
  gboolean ended;            /* the stand-in was delivered: only errors from now */
  gboolean refused;          /* a request was refused: only errors from now */
  SandboxGatewayStreamRefusalFunc refusal_func;
  gpointer refusal_data;
  GSourceFunc hangup_func;
  gpointer hangup_data;

  /* Bytes read from the socket and not handed to libsoup yet: what followed
   * a head's end in the same read. */
  GByteArray *stash;
  gsize stash_offset;

  Framing framing;
  /* FRAMING_HEAD */
  gsize head_bytes;          /* bytes of the current head so far */
  gsize line_bytes;          /* bytes of its current line so far */
  char line_first;           /* the first byte of that line */
  RequestLine request_line;
  gboolean request_line_ended;
  char target_first;         /* the first byte of the head's target, or NUL */
  /* FRAMING_LENGTH, and FRAMING_CHUNKED's data */
  guint64 body_remaining;
  /* FRAMING_CHUNKED */
  ChunkState chunk_state;
  gsize chunk_line_bytes;
  gboolean chunk_has_digits;

  GSource *watch;            /* polls the socket, from the first read source on */
  gpointer watch_tag;        /* NULL once the guest hung up and nobody read since */
  GIOCondition watch_events; /* G_IO_IN, or 0 (hang-ups only) while nobody reads */
  GPtrArray *readers;        /* ReaderSource, weak: the read sources alive */
};

typedef struct
{
  GSource source;
  SandboxGatewayInput *input; /* strong */
} ReaderSource;

static void sandbox_gateway_input_pollable_iface_init (GPollableInputStreamInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SandboxGatewayInput, sandbox_gateway_input, G_TYPE_INPUT_STREAM,
                               G_IMPLEMENT_INTERFACE (G_TYPE_POLLABLE_INPUT_STREAM,
                                                      sandbox_gateway_input_pollable_iface_init))

static gsize
stash_length (SandboxGatewayInput *self)
{
  return self->stash != NULL ? self->stash->len - self->stash_offset : 0;
}

/* The connection's watch, and the read sources it drives */

#define READABLE (G_IO_IN | G_IO_HUP | G_IO_ERR | G_IO_NVAL)

static gboolean
reader_is_live (ReaderSource *reader)
{
  return g_source_get_context ((GSource *) reader) != NULL &&
         !g_source_is_destroyed ((GSource *) reader);
}

static gboolean
watch_dispatch (GSource     *source,
                GSourceFunc  callback,
                gpointer     user_data)
{
  SandboxGatewayInput *self = user_data;
  GIOCondition condition;

  if (self->watch_tag == NULL || g_source_query_unix_fd (source, self->watch_tag) == 0)
    return G_SOURCE_CONTINUE;

  for (guint i = 0; i < self->readers->len; i++)
    if (reader_is_live (g_ptr_array_index (self->readers, i)))
      return G_SOURCE_CONTINUE;

  /* Nobody reads: libsoup is serving a request (paused while it goes
   * upstream) or writing its answer. The poll result may be stale. */
  condition = g_socket_condition_check (self->socket, READABLE);
  if (condition == 0)
    return G_SOURCE_CONTINUE;

  if (condition & (G_IO_HUP | G_IO_ERR | G_IO_NVAL))
    {
      /* The guest closed its connection (a half-close is no hang-up: it
       * still reads its answer). libsoup would only find out when it
       * writes the answer; the gateway abandons the request now. */
      g_source_remove_unix_fd (source, self->watch_tag);
      self->watch_tag = NULL;
      if (self->hangup_func != NULL)
        self->hangup_func (self->hangup_data);
      return G_SOURCE_CONTINUE;
    }

  /* Readable (the guest sent more, or half-closed): polling for input would
   * spin until a reader comes, so poll for a hang-up only (poll() reports
   * one whatever it is asked for). */
  g_source_modify_unix_fd (source, self->watch_tag, 0);
  self->watch_events = 0;

  return G_SOURCE_CONTINUE;
}

static GSourceFuncs watch_funcs = {
  .dispatch = watch_dispatch,
};

static void
ensure_watch (SandboxGatewayInput *self)
{
  if (self->watch == NULL)
    {
      self->watch = g_source_new (&watch_funcs, sizeof (GSource));
      g_source_set_callback (self->watch, NULL, self, NULL);
      g_source_set_static_name (self->watch, "[sandbox] gateway connection socket");
      /* A source that may not recurse leaves the poll set while dispatched. */
      g_source_set_can_recurse (self->watch, TRUE);
      g_source_attach (self->watch, g_main_context_get_thread_default ());
    }

  if (self->watch_tag == NULL)
    self->watch_tag = g_source_add_unix_fd (self->watch, g_socket_get_fd (self->socket), G_IO_IN);
  else if (self->watch_events != G_IO_IN)
    g_source_modify_unix_fd (self->watch, self->watch_tag, G_IO_IN);
  self->watch_events = G_IO_IN;
}

static void
drop_watch (SandboxGatewayInput *self)
{
  if (self->watch != NULL)
    {
      g_source_destroy (self->watch);
      g_clear_pointer (&self->watch, g_source_unref);
    }
  self->watch_tag = NULL;
}

/* Stashed bytes, the stand-in, or an error are there to read at once. */
static gboolean
input_has_pending (SandboxGatewayInput *self)
{
  return self->ended || stash_length (self) > 0;
}

static gboolean
reader_prepare (GSource *source,
                gint    *timeout)
{
  ReaderSource *reader = (ReaderSource *) source;

  *timeout = -1;
  return input_has_pending (reader->input);
}

static gboolean
reader_check (GSource *source)
{
  SandboxGatewayInput *input = ((ReaderSource *) source)->input;

  if (input_has_pending (input))
    return TRUE;

  return input->watch != NULL && input->watch_tag != NULL &&
         !g_source_is_destroyed (input->watch) &&
         (g_source_query_unix_fd (input->watch, input->watch_tag) & READABLE) != 0;
}

static gboolean
reader_dispatch (GSource     *source,
                 GSourceFunc  callback,
                 gpointer     user_data)
{
  /* As a child source: the parent calls the callback. */
  return callback != NULL ? callback (user_data) : G_SOURCE_CONTINUE;
}

static void
reader_finalize (GSource *source)
{
  ReaderSource *reader = (ReaderSource *) source;

  g_ptr_array_remove_fast (reader->input->readers, reader);
  g_object_unref (reader->input);
}

/* g_pollable_source_new_full() gives its child a dummy closure, which only
 * sources with a closure callback may have; the parent runs the real one. */
static gboolean
reader_closure_callback (gpointer closure)
{
  return G_SOURCE_CONTINUE;
}

static GSourceFuncs reader_funcs = {
  .prepare = reader_prepare,
  .check = reader_check,
  .dispatch = reader_dispatch,
  .finalize = reader_finalize,
  .closure_callback = reader_closure_callback,
};

/* Following the requests */

static void
start_head (SandboxGatewayInput *self)
{
  self->framing = FRAMING_HEAD;
  self->head_bytes = 0;
  self->line_bytes = 0;
  self->line_first = '\0';
  self->request_line = LINE_LEADING;
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
follow_request_line (SandboxGatewayInput *self,
                     char                 c)
{
  switch (self->request_line)
    {
    case LINE_LEADING:
      if (c == '\r' || c == '\n')
        break;
      self->request_line = is_blank (c) ? LINE_GAP : LINE_METHOD;
      break;
    case LINE_METHOD:
      if (is_blank (c))
        self->request_line = LINE_GAP;
      break;
    case LINE_GAP:
      if (!is_blank (c))
        {
          self->target_first = c;
          self->request_line = LINE_TARGET;
        }
      break;
    case LINE_TARGET:
    default:
      break;
    }

  if (c == '\n' && self->request_line != LINE_LEADING)
    self->request_line_ended = TRUE;
}

/* Follows a head up to its end, and returns how many bytes of @data belong
 * to it. libsoup reads a head line by line and ends it at a line "\n" with at
 * least two bytes before it, or "\r\n" with at least three
 * (soup_message_io_data_read_headers()). */
static gsize
follow_head (SandboxGatewayInput *self,
             const char          *data,
             gsize                length,
             Refusal             *refusal)
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
      if (self->head_bytes > MAX_HEAD_BYTES)
        {
          gboolean in_request_line = self->request_line != LINE_LEADING && !self->request_line_ended;

          *refusal = in_request_line ? (Refusal) { 414, "target-too-long" }
                                     : (Refusal) { 431, "head-too-large" };
          return 0;
        }

      if (c != '\n')
        continue;

      if ((self->line_bytes == 1 && self->head_bytes - 1 >= 2) ||
          (self->line_bytes == 2 && self->line_first == '\r' && self->head_bytes - 2 >= 3))
        {
          self->framing = FRAMING_AWAIT;
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
invalid_chunk (Refusal    *refusal,
               const char *reason)
{
  *refusal = (Refusal) { 400, reason };
  return FALSE;
}

/* One byte of a chunk-size line: 1*HEXDIG [ chunk-ext ] CRLF. Extensions
 * are visible ASCII, spaces and tabs; libsoup ignores what follows the
 * digits, and nothing else may follow them. */
static gboolean
follow_chunk_line (SandboxGatewayInput *self,
                   char                 c,
                   Refusal             *refusal)
{
  int digit = hex_value (c);

  if (++self->chunk_line_bytes >= MAX_CHUNK_LINE_BYTES && c != '\n')
    return invalid_chunk (refusal, "invalid-chunk");

  switch (self->chunk_state)
    {
    case CHUNK_SIZE:
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
        self->chunk_state = CHUNK_SIZE_LF;
      else if (c == ';' || is_blank (c))
        self->chunk_state = CHUNK_EXT;
      else
        return invalid_chunk (refusal, "invalid-chunk");
      return TRUE;

    case CHUNK_EXT:
      if (c == '\r')
        self->chunk_state = CHUNK_SIZE_LF;
      else if (!is_blank (c) && (c < 0x21 || c > 0x7e))
        return invalid_chunk (refusal, "invalid-chunk");
      return TRUE;

    case CHUNK_SIZE_LF:
      if (c != '\n')
        return invalid_chunk (refusal, "invalid-chunk");
      self->chunk_state = self->body_remaining > 0 ? CHUNK_DATA : CHUNK_TRAILER;
      return TRUE;

    case CHUNK_DATA:
    case CHUNK_DATA_CR:
    case CHUNK_DATA_LF:
    case CHUNK_TRAILER:
    case CHUNK_FINAL_LF:
    default:
      g_assert_not_reached ();
    }
}

static void
start_chunk (SandboxGatewayInput *self)
{
  self->chunk_state = CHUNK_SIZE;
  self->chunk_line_bytes = 0;
  self->chunk_has_digits = FALSE;
  self->body_remaining = 0;
}

/* Follows a chunked body up to its end, and returns how many bytes of @data
 * belong to it (all of them, or it ended). */
static gsize
follow_chunked (SandboxGatewayInput *self,
                const char          *data,
                gsize                length,
                Refusal             *refusal)
{
  gsize i = 0;

  while (i < length)
    {
      char c = data[i];

      switch (self->chunk_state)
        {
        case CHUNK_SIZE:
        case CHUNK_EXT:
        case CHUNK_SIZE_LF:
          if (!follow_chunk_line (self, c, refusal))
            return 0;
          i++;
          break;

        case CHUNK_DATA:
          {
            gsize run = (gsize) MIN ((guint64) (length - i), self->body_remaining);

            self->body_remaining -= run;
            i += run;
            if (self->body_remaining == 0)
              self->chunk_state = CHUNK_DATA_CR;
          }
          break;

        case CHUNK_DATA_CR:
          if (c != '\r')
            return invalid_chunk (refusal, "invalid-chunk");
          self->chunk_state = CHUNK_DATA_LF;
          i++;
          break;

        case CHUNK_DATA_LF:
          if (c != '\n')
            return invalid_chunk (refusal, "invalid-chunk");
          start_chunk (self);
          i++;
          break;

        /* libsoup 3.2 ends the body at the first line after the last chunk,
         * whatever it holds, and would parse the trailer lines after it as a
         * request of their own: trailers are refused. */
        case CHUNK_TRAILER:
          if (c != '\r')
            return invalid_chunk (refusal, c == '\n' ? "invalid-chunk" : "request-trailers");
          self->chunk_state = CHUNK_FINAL_LF;
          i++;
          break;

        case CHUNK_FINAL_LF:
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

/* Follows @length bytes read from the guest, and returns how many of them
 * libsoup may have now: up to a head's end at most. Sets @refusal and
 * returns 0 when the request is refused. */
static gsize
follow_requests (SandboxGatewayInput *self,
                 const char          *data,
                 gsize                length,
                 Refusal             *refusal)
{
  gsize done = 0;

  while (done < length && refusal->reason == NULL)
    {
      gsize taken;

      switch (self->framing)
        {
        case FRAMING_HEAD:
          taken = follow_head (self, data + done, length - done, refusal);
          if (refusal->reason == NULL && self->framing == FRAMING_AWAIT)
            return done + taken;
          break;

        case FRAMING_LENGTH:
          taken = (gsize) MIN ((guint64) (length - done), self->body_remaining);
          self->body_remaining -= taken;
          if (self->body_remaining == 0)
            start_head (self);
          break;

        case FRAMING_CHUNKED:
          taken = follow_chunked (self, data + done, length - done, refusal);
          break;

        case FRAMING_OPAQUE:
          taken = length - done;
          break;

        case FRAMING_AWAIT:
        default:
          /* libsoup reads nothing between a head and its "got-headers". */
          *refusal = (Refusal) { 400, "invalid-framing" };
          taken = 0;
          break;
        }

      done += taken;
    }

  return refusal->reason != NULL ? 0 : done;
}

/* Ends the connection's input with @message; reports @reason once. */
static gssize
refuse_input (SandboxGatewayInput  *self,
              GIOErrorEnum          code,
              const Refusal        *refusal,
              const char           *message,
              GError              **error)
{
  if (!self->refused && self->refusal_func != NULL)
    self->refusal_func (refusal->status, refusal->reason, self->refusal_data);
  self->refused = TRUE;
  g_clear_pointer (&self->stash, g_byte_array_unref);

  g_set_error_literal (error, G_IO_ERROR, code, message);
  return -1;
}

/* Bytes from the stash, else from the socket. */
static gssize
receive_raw (SandboxGatewayInput  *self,
             void                 *buffer,
             gsize                 count,
             gboolean              blocking,
             gboolean             *from_stash,
             GCancellable         *cancellable,
             GError              **error)
{
  gsize pending = stash_length (self);

  *from_stash = pending > 0;
  if (pending == 0)
    return g_socket_receive_with_blocking (self->socket, buffer, count, blocking, cancellable, error);

  count = MIN (count, pending);
  memcpy (buffer, self->stash->data + self->stash_offset, count);
  return count;
}

/* Keeps what follows @taken bytes of @n just received for the next read. */
static void
stash_rest (SandboxGatewayInput *self,
            const char          *buffer,
            gsize                taken,
            gsize                n,
            gboolean             from_stash)
{
  if (from_stash)
    {
      self->stash_offset += taken;
    }
  else if (taken < n)
    {
      /* The stash was empty, or the socket would not have been read. */
      if (self->stash == NULL)
        self->stash = g_byte_array_new ();
      g_byte_array_set_size (self->stash, 0);
      g_byte_array_append (self->stash, (const guint8 *) buffer + taken, n - taken);
      self->stash_offset = 0;
    }

  if (self->stash != NULL && stash_length (self) == 0)
    g_clear_pointer (&self->stash, g_byte_array_unref);
}

static gboolean
between_requests (SandboxGatewayInput *self)
{
  return self->framing == FRAMING_HEAD && self->head_bytes == 0;
}

static gssize
receive (SandboxGatewayInput  *self,
         void                 *buffer,
         gsize                 count,
         gboolean              blocking,
         GCancellable         *cancellable,
         GError              **error)
{
  g_autoptr(GError) local_error = NULL;
  gboolean from_stash = FALSE;
  gssize n;

  if (self->ended)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                           "The guest closed an idle gateway connection");
      return -1;
    }

  if (self->refused)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED,
                           "The gateway refused this connection's request");
      return -1;
    }

  n = receive_raw (self, buffer, count, blocking, &from_stash, cancellable, &local_error);
  if (n > 0)
    {
      Refusal refusal = { 0, NULL };
      gsize taken = follow_requests (self, buffer, n, &refusal);

      if (refusal.reason != NULL)
        return refuse_input (self, refusal.status == 400 ? G_IO_ERROR_INVALID_DATA
                                                         : G_IO_ERROR_MESSAGE_TOO_LARGE,
                             &refusal, "The gateway refused the guest's request framing", error);

      stash_rest (self, buffer, taken, n, from_stash);
      return taken;
    }

  /* libsoup 3.2 takes a request cut short by the end of the stream for a
   * whole one: a head (soup_message_io_data_read_headers()), and a chunked
   * body before its last chunk or the end of its trailers (its chunked
   * reader returns the end of the stream as the body's end). A guest that
   * half-closes mid-request, or a connection a deadline shuts down, would
   * have what arrived handled and forwarded as if complete. */
  if (n == 0 && !between_requests (self))
    {
      Refusal refusal = { 0, self->framing == FRAMING_HEAD ? "incomplete-head" : "incomplete-body" };

      return refuse_input (self, G_IO_ERROR_PARTIAL_INPUT, &refusal,
                           self->framing == FRAMING_HEAD
                             ? "The guest ended its connection in the middle of a request head"
                             : "The guest ended its connection in the middle of a request body",
                           error);
    }

  if (!between_requests (self) || count < strlen (STAND_IN_LINE) ||
      g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK) ||
      g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      if (local_error != NULL)
        g_propagate_error (error, g_steal_pointer (&local_error));
      return n;
    }

  /* End of stream (or a failure) between requests: see the top of the
   * file. */
  self->ended = TRUE;
  memcpy (buffer, STAND_IN_LINE, strlen (STAND_IN_LINE));
  return strlen (STAND_IN_LINE);
}

static gssize
sandbox_gateway_input_read (GInputStream  *stream,
                            void          *buffer,
                            gsize          count,
                            GCancellable  *cancellable,
                            GError       **error)
{
  return receive (SANDBOX_GATEWAY_INPUT (stream), buffer, count, TRUE, cancellable, error);
}

/* The socket belongs to the connection, which closes it right after. */
static gboolean
sandbox_gateway_input_close (GInputStream  *stream,
                             GCancellable  *cancellable,
                             GError       **error)
{
  drop_watch (SANDBOX_GATEWAY_INPUT (stream));
  return TRUE;
}

static gboolean
sandbox_gateway_input_is_readable (GPollableInputStream *stream)
{
  SandboxGatewayInput *self = SANDBOX_GATEWAY_INPUT (stream);

  return input_has_pending (self) || g_socket_condition_check (self->socket, G_IO_IN) != 0;
}

static GSource *
sandbox_gateway_input_create_source (GPollableInputStream *stream,
                                     GCancellable         *cancellable)
{
  SandboxGatewayInput *self = SANDBOX_GATEWAY_INPUT (stream);
  g_autoptr(GSource) reader = g_source_new (&reader_funcs, sizeof (ReaderSource));

  ((ReaderSource *) reader)->input = g_object_ref (self);
  g_ptr_array_add (self->readers, reader);
  g_source_set_static_name (reader, "[sandbox] gateway connection read");
  if (!self->ended && !g_input_stream_is_closed (G_INPUT_STREAM (self)))
    ensure_watch (self);

  return g_pollable_source_new_full (stream, reader, cancellable);
}

static gssize
sandbox_gateway_input_read_nonblocking (GPollableInputStream  *stream,
                                        void                  *buffer,
                                        gsize                  count,
                                        GError               **error)
{
  return receive (SANDBOX_GATEWAY_INPUT (stream), buffer, count, FALSE, NULL, error);
}

static void
sandbox_gateway_input_pollable_iface_init (GPollableInputStreamInterface *iface)
{
  iface->is_readable = sandbox_gateway_input_is_readable;
  iface->create_source = sandbox_gateway_input_create_source;
  iface->read_nonblocking = sandbox_gateway_input_read_nonblocking;
}

static void
sandbox_gateway_input_finalize (GObject *object)
{
  SandboxGatewayInput *self = SANDBOX_GATEWAY_INPUT (object);

  drop_watch (self);
  g_clear_pointer (&self->stash, g_byte_array_unref);
  g_ptr_array_unref (self->readers);
  g_clear_object (&self->socket);

  G_OBJECT_CLASS (sandbox_gateway_input_parent_class)->finalize (object);
}

static void
sandbox_gateway_input_class_init (SandboxGatewayInputClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GInputStreamClass *stream_class = G_INPUT_STREAM_CLASS (klass);

  object_class->finalize = sandbox_gateway_input_finalize;
  stream_class->read_fn = sandbox_gateway_input_read;
  stream_class->close_fn = sandbox_gateway_input_close;
}

static void
sandbox_gateway_input_init (SandboxGatewayInput *self)
{
  start_head (self);
  self->readers = g_ptr_array_new ();
}

/* The output stream
 *
 * libsoup writes a response's head and its body in two writes, and each
 * wakes the guest (its read returns the head, and it waits again for the
 * body). When the gateway knows a body follows the head, the head is held
 * and sent together with the first body write, in one sendmsg(). */

#define SANDBOX_TYPE_GATEWAY_OUTPUT (sandbox_gateway_output_get_type ())
G_DECLARE_FINAL_TYPE (SandboxGatewayOutput, sandbox_gateway_output, SANDBOX, GATEWAY_OUTPUT, GOutputStream)

struct _SandboxGatewayOutput
{
  GOutputStream parent_instance;

  GSocket *socket;
  gboolean hold_next; /* hold the next write: a head that a body follows */
  GByteArray *held;   /* a held head not sent yet, or NULL */
};

static void sandbox_gateway_output_pollable_iface_init (GPollableOutputStreamInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SandboxGatewayOutput, sandbox_gateway_output, G_TYPE_OUTPUT_STREAM,
                               G_IMPLEMENT_INTERFACE (G_TYPE_POLLABLE_OUTPUT_STREAM,
                                                      sandbox_gateway_output_pollable_iface_init))

/* Sends what is held, then @buffer, in one call; returns how much of
 * @buffer went out. Whatever of the held head did not go out stays held. */
static gssize
send_with_held (SandboxGatewayOutput  *self,
                const void            *buffer,
                gsize                  count,
                gboolean               blocking,
                GCancellable          *cancellable,
                GError               **error)
{
  GOutputVector vectors[2] = {
    { self->held->data, self->held->len },
    { buffer, count },
  };
  gsize written = 0;
  GPollableReturn result;

  result = g_socket_send_message_with_timeout (self->socket, NULL, vectors, G_N_ELEMENTS (vectors),
                                               NULL, 0, 0, blocking ? -1 : 0, &written,
                                               cancellable, error);
  if (result == G_POLLABLE_RETURN_WOULD_BLOCK)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK,
                           g_strerror (EAGAIN));
      return -1;
    }
  if (result != G_POLLABLE_RETURN_OK)
    return -1;

  if (written < self->held->len)
    {
      g_byte_array_remove_range (self->held, 0, written);
      written = 0;
    }
  else
    {
      written -= self->held->len;
      g_clear_pointer (&self->held, g_byte_array_unref);
    }

  if (written > 0)
    return written;

  /* Only (part of) the head went out: the caller tries again. */
  if (!blocking)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK, g_strerror (EAGAIN));
      return -1;
    }
  return self->held != NULL ? send_with_held (self, buffer, count, blocking, cancellable, error)
                            : g_socket_send_with_blocking (self->socket, buffer, count, TRUE,
                                                           cancellable, error);
}

static gssize
output_send (SandboxGatewayOutput  *self,
             const void            *buffer,
             gsize                  count,
             gboolean               blocking,
             GCancellable          *cancellable,
             GError               **error)
{
  if (self->held != NULL)
    return send_with_held (self, buffer, count, blocking, cancellable, error);

  if (self->hold_next && count > 0)
    {
      self->hold_next = FALSE;
      self->held = g_byte_array_sized_new (count);
      g_byte_array_append (self->held, buffer, count);
      return count;
    }

  return g_socket_send_with_blocking (self->socket, buffer, count, blocking, cancellable, error);
}

static gssize
sandbox_gateway_output_write (GOutputStream  *stream,
                              const void     *buffer,
                              gsize           count,
                              GCancellable   *cancellable,
                              GError        **error)
{
  return output_send (SANDBOX_GATEWAY_OUTPUT (stream), buffer, count, TRUE, cancellable, error);
}

static gssize
sandbox_gateway_output_write_nonblocking (GPollableOutputStream  *stream,
                                          const void             *buffer,
                                          gsize                   count,
                                          GError                **error)
{
  return output_send (SANDBOX_GATEWAY_OUTPUT (stream), buffer, count, FALSE, NULL, error);
}

/* Sends a held head that no body followed, without blocking. */
static gboolean
output_release (SandboxGatewayOutput *self)
{
  gssize n;

  self->hold_next = FALSE;
  if (self->held == NULL)
    return TRUE;

  n = g_socket_send_with_blocking (self->socket, (const char *) self->held->data, self->held->len,
                                   FALSE, NULL, NULL);
  if (n > 0 && (gsize) n == self->held->len)
    {
      g_clear_pointer (&self->held, g_byte_array_unref);
      return TRUE;
    }

  g_clear_pointer (&self->held, g_byte_array_unref);
  return FALSE;
}

/* The socket belongs to the connection, which closes it right after. */
static gboolean
sandbox_gateway_output_close (GOutputStream  *stream,
                              GCancellable   *cancellable,
                              GError        **error)
{
  output_release (SANDBOX_GATEWAY_OUTPUT (stream));
  return TRUE;
}

static gboolean
sandbox_gateway_output_is_writable (GPollableOutputStream *stream)
{
  SandboxGatewayOutput *self = SANDBOX_GATEWAY_OUTPUT (stream);

  return g_socket_condition_check (self->socket, G_IO_OUT) != 0;
}

static GSource *
sandbox_gateway_output_create_source (GPollableOutputStream *stream,
                                      GCancellable          *cancellable)
{
  SandboxGatewayOutput *self = SANDBOX_GATEWAY_OUTPUT (stream);
  g_autoptr(GSource) socket_source = g_socket_create_source (self->socket, G_IO_OUT, cancellable);

  return g_pollable_source_new_full (stream, socket_source, cancellable);
}

static void
sandbox_gateway_output_pollable_iface_init (GPollableOutputStreamInterface *iface)
{
  iface->is_writable = sandbox_gateway_output_is_writable;
  iface->create_source = sandbox_gateway_output_create_source;
  iface->write_nonblocking = sandbox_gateway_output_write_nonblocking;
}

static void
sandbox_gateway_output_finalize (GObject *object)
{
  SandboxGatewayOutput *self = SANDBOX_GATEWAY_OUTPUT (object);

  g_clear_pointer (&self->held, g_byte_array_unref);
  g_clear_object (&self->socket);

  G_OBJECT_CLASS (sandbox_gateway_output_parent_class)->finalize (object);
}

static void
sandbox_gateway_output_class_init (SandboxGatewayOutputClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GOutputStreamClass *stream_class = G_OUTPUT_STREAM_CLASS (klass);

  object_class->finalize = sandbox_gateway_output_finalize;
  stream_class->write_fn = sandbox_gateway_output_write;
  stream_class->close_fn = sandbox_gateway_output_close;
}

static void
sandbox_gateway_output_init (SandboxGatewayOutput *self)
{
}

/* The connection */

struct _SandboxGatewayStream
{
  GSocketConnection parent_instance;

  SandboxGatewayInput *input;
  SandboxGatewayOutput *output;
};

G_DEFINE_FINAL_TYPE (SandboxGatewayStream, sandbox_gateway_stream, G_TYPE_SOCKET_CONNECTION)

static GInputStream *
sandbox_gateway_stream_get_input_stream (GIOStream *stream)
{
  SandboxGatewayStream *self = SANDBOX_GATEWAY_STREAM (stream);

  if (self->input == NULL)
    {
      self->input = g_object_new (SANDBOX_TYPE_GATEWAY_INPUT, NULL);
      self->input->socket = g_object_ref (g_socket_connection_get_socket (G_SOCKET_CONNECTION (self)));
    }

  return G_INPUT_STREAM (self->input);
}

static GOutputStream *
sandbox_gateway_stream_get_output_stream (GIOStream *stream)
{
  SandboxGatewayStream *self = SANDBOX_GATEWAY_STREAM (stream);

  if (self->output == NULL)
    {
      self->output = g_object_new (SANDBOX_TYPE_GATEWAY_OUTPUT, NULL);
      self->output->socket = g_object_ref (g_socket_connection_get_socket (G_SOCKET_CONNECTION (self)));
    }

  return G_OUTPUT_STREAM (self->output);
}

static void
sandbox_gateway_stream_finalize (GObject *object)
{
  SandboxGatewayStream *self = SANDBOX_GATEWAY_STREAM (object);

  g_clear_object (&self->input);
  g_clear_object (&self->output);

  G_OBJECT_CLASS (sandbox_gateway_stream_parent_class)->finalize (object);
}

static void
sandbox_gateway_stream_class_init (SandboxGatewayStreamClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GIOStreamClass *stream_class = G_IO_STREAM_CLASS (klass);

  object_class->finalize = sandbox_gateway_stream_finalize;
  stream_class->get_input_stream = sandbox_gateway_stream_get_input_stream;
  stream_class->get_output_stream = sandbox_gateway_stream_get_output_stream;
}

static void
sandbox_gateway_stream_init (SandboxGatewayStream *self)
{
}

SandboxGatewayStream *
sandbox_gateway_stream_new (GSocket *socket)
{
  return g_object_new (SANDBOX_TYPE_GATEWAY_STREAM, "socket", socket, NULL);
}

/*
 * sandbox_gateway_stream_begin_body:
 * @body: how the body of the request whose head was just read is framed, as
 *   libsoup took it from the head
 * @length: its length, for %SANDBOX_GATEWAY_BODY_LENGTH
 *
 * Called from "got-headers", before libsoup reads any of the body: the
 * stream hands libsoup nothing past a head's end until it knows how the body
 * that follows is framed.
 *
 * Returns: %FALSE if the stream was not waiting at a head's end: libsoup and
 *   the stream disagree about where this request is, and the stream follows
 *   nothing more on the connection (it must be closed after this request)
 */
gboolean
sandbox_gateway_stream_begin_body (SandboxGatewayStream *self,
                                   SandboxGatewayBody    body,
                                   guint64               length)
{
  SandboxGatewayInput *input = SANDBOX_GATEWAY_INPUT (sandbox_gateway_stream_get_input_stream (G_IO_STREAM (self)));

  if (input->framing != FRAMING_AWAIT)
    {
      input->framing = FRAMING_OPAQUE;
      return FALSE;
    }

  switch (body)
    {
    case SANDBOX_GATEWAY_BODY_NONE:
      start_head (input);
      break;
    case SANDBOX_GATEWAY_BODY_LENGTH:
      if (length == 0)
        {
          start_head (input);
          break;
        }
      input->framing = FRAMING_LENGTH;
      input->body_remaining = length;
      break;
    case SANDBOX_GATEWAY_BODY_CHUNKED:
      input->framing = FRAMING_CHUNKED;
      start_chunk (input);
      break;
    case SANDBOX_GATEWAY_BODY_UNKNOWN:
    default:
      input->framing = FRAMING_OPAQUE;
      break;
    }

  return TRUE;
}

/*
 * sandbox_gateway_stream_target_is_origin_form:
 *
 * Returns: whether the target of the request whose head was just read
 *   starts with "/", as libsoup splits its request line; ask before
 *   sandbox_gateway_stream_begin_body()
 */
gboolean
sandbox_gateway_stream_target_is_origin_form (SandboxGatewayStream *self)
{
  return self->input != NULL && self->input->framing == FRAMING_AWAIT &&
         self->input->target_first == '/';
}

/*
 * sandbox_gateway_stream_set_refusal_func:
 * @func: (nullable): called on the gateway thread, with the status to answer
 *   (0: none) and a reason ("incomplete-head", "incomplete-body",
 *   "head-too-large", "target-too-long", "invalid-chunk",
 *   "request-trailers", "invalid-framing"), when the stream refuses a
 *   request (at most once per connection); %NULL to stop
 *
 * The stream ends its input when a request is cut short, its head grows past
 * 64 KiB or its framing is not understood; libsoup then drops the connection
 * without a word, so this is how the gateway learns of it (and answers, when
 * @status is not 0: libsoup is reading a request then, so nothing else is
 * being written on the connection).
 */
void
sandbox_gateway_stream_set_refusal_func (SandboxGatewayStream            *self,
                                         SandboxGatewayStreamRefusalFunc  func,
                                         gpointer                         user_data)
{
  sandbox_gateway_stream_get_input_stream (G_IO_STREAM (self));
  self->input->refusal_func = func;
  self->input->refusal_data = user_data;
}

/*
 * sandbox_gateway_stream_set_hangup_func:
 * @func: (nullable): called on the gateway thread when the guest closes its
 *   connection while libsoup is not reading it (a request in flight); %NULL
 *   to stop
 */
void
sandbox_gateway_stream_set_hangup_func (SandboxGatewayStream *self,
                                        GSourceFunc           func,
                                        gpointer              user_data)
{
  sandbox_gateway_stream_get_input_stream (G_IO_STREAM (self));
  self->input->hangup_func = func;
  self->input->hangup_data = user_data;
}

/*
 * sandbox_gateway_stream_watch_for_hangup:
 *
 * Polls the connection for the guest hanging up while libsoup does not read
 * it (a request paused while it goes upstream), if nothing does yet: libsoup
 * reads a request that is already there without a source of its own.
 */
void
sandbox_gateway_stream_watch_for_hangup (SandboxGatewayStream *self)
{
  SandboxGatewayInput *input = SANDBOX_GATEWAY_INPUT (sandbox_gateway_stream_get_input_stream (G_IO_STREAM (self)));

  if (!input->ended && !g_input_stream_is_closed (G_INPUT_STREAM (input)))
    ensure_watch (input);
}

/*
 * sandbox_gateway_stream_is_in_head:
 *
 * Returns: whether part of a request head has been read and its end not yet
 */
gboolean
sandbox_gateway_stream_is_in_head (SandboxGatewayStream *self)
{
  return self->input != NULL && self->input->framing == FRAMING_HEAD &&
         self->input->head_bytes > 0;
}

/*
 * sandbox_gateway_stream_hold_response_head:
 *
 * The next write is a response's head, and a body follows it: the head is
 * sent together with the body's first write.
 */
void
sandbox_gateway_stream_hold_response_head (SandboxGatewayStream *self)
{
  sandbox_gateway_stream_get_output_stream (G_IO_STREAM (self));
  self->output->hold_next = TRUE;
}

/*
 * sandbox_gateway_stream_release_response_head:
 *
 * Sends a held head that no body followed, without blocking, and holds
 * nothing more.
 *
 * Returns: %FALSE if a held head could not be sent whole: the response on
 *   the connection is broken.
 */
gboolean
sandbox_gateway_stream_release_response_head (SandboxGatewayStream *self)
{
  if (self->output == NULL)
    return TRUE;

  return output_release (self->output);
}
