/* sandbox-gateway-stream.c — the guest connections handed to libsoup
 *
 * A SandboxGatewayStream is a GSocketConnection whose input stream reads the
 * socket exactly as GSocketInputStream does, with one difference that works
 * around a libsoup 3.2 bug (fixed upstream in libsoup commit d20c6601, "Don't
 * leak idle connections closed by the client", after 3.2.3):
 *
 * After a keep-alive response, libsoup 3.2 prepares the next message without
 * a completion callback and only "starts" it once a first byte has arrived.
 * When the guest closes the idle connection instead — or its socket fails, or
 * the gateway's own header deadline shuts it down — that message fails
 * silently and nothing ever disconnects the connection: its socket, its
 * stream and its SoupServerConnection stay alive until the server is
 * disposed, one file descriptor per connection.
 *
 * So, on a connection that is waiting for a request (sandbox_gateway_stream_expect_request()
 * since the last response, and not a single byte read since), end of stream
 * or a read error is reported as a stand-in line "X\n" followed by an error.
 * The line makes libsoup start the message, the error then ends it through
 * its completion callback, and libsoup disconnects the connection itself. The
 * stand-in can never complete a request: it holds no blank line, and nothing
 * follows it but the error, so libsoup answers nothing and forwards nothing.
 *
 * The input stream also ends a request cut short: libsoup 3.2 takes the end
 * of the stream in the middle of a head for the head's end, and in the
 * middle of a chunked body for the body's end, and would handle, and the
 * gateway forward, whatever part arrived. The stream follows each head to
 * its empty line, and reports an end of stream before the request is
 * answered as an error instead; it also ends a head past 64 KiB itself
 * (libsoup would, a read later), so that the refusals reach the gateway's
 * audit.
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

/* The input stream */

#define SANDBOX_TYPE_GATEWAY_INPUT (sandbox_gateway_input_get_type ())
G_DECLARE_FINAL_TYPE (SandboxGatewayInput, sandbox_gateway_input, SANDBOX, GATEWAY_INPUT, GInputStream)

struct _SandboxGatewayInput
{
  GInputStream parent_instance;

  GSocket *socket;
  gboolean awaiting_request; /* no byte read since the last response */
  gboolean ended;            /* the stand-in was delivered: only errors from now */
  gboolean in_head;          /* a request head has begun, its blank line not read yet */
  char head_tail[2];         /* the head's last two bytes read, to find that line */
  gsize head_bytes;          /* bytes of the head read so far */
  gboolean refused;          /* a head was refused: only errors from now */
  SandboxGatewayStreamRefusalFunc refusal_func;
  gpointer refusal_data;

  GSource *watch;            /* polls the socket, from the first read source on */
  gpointer watch_tag;        /* NULL while not polled: readable, and nobody reading */
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

  if (self->watch_tag == NULL || g_source_query_unix_fd (source, self->watch_tag) == 0)
    return G_SOURCE_CONTINUE;

  for (guint i = 0; i < self->readers->len; i++)
    if (reader_is_live (g_ptr_array_index (self->readers, i)))
      return G_SOURCE_CONTINUE;

  /* Readable while nobody reads (the guest sent more, or closed, while its
   * request is served): polling on would spin. Stop until a reader comes. */
  if (g_socket_condition_check (self->socket, READABLE) != 0)
    {
      g_source_remove_unix_fd (source, self->watch_tag);
      self->watch_tag = NULL;
    }

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

static gboolean
reader_prepare (GSource *source,
                gint    *timeout)
{
  ReaderSource *reader = (ReaderSource *) source;

  *timeout = -1;
  return reader->input->ended;
}

static gboolean
reader_check (GSource *source)
{
  SandboxGatewayInput *input = ((ReaderSource *) source)->input;

  if (input->ended)
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

static void
start_head (SandboxGatewayInput *self)
{
  self->in_head = TRUE;
  self->head_tail[0] = self->head_tail[1] = '\0';
  self->head_bytes = 0;
}

/* Ends the connection's input with @message; reports @reason once. */
static gssize
refuse_input (SandboxGatewayInput  *self,
             GIOErrorEnum          code,
             const char           *reason,
             const char           *message,
             GError              **error)
{
  if (!self->refused && self->refusal_func != NULL)
    self->refusal_func (reason, self->refusal_data);
  self->refused = TRUE;

  g_set_error_literal (error, G_IO_ERROR, code, message);
  return -1;
}

/* Follows the bytes of a request head up to its end, the empty line that
 * libsoup also takes for one: LF LF or LF CR LF. What follows belongs to the
 * body (or to a later request, which starts after the next response). */
static void
scan_head (SandboxGatewayInput *self,
           const char          *data,
           gsize                length)
{
  for (gsize i = 0; i < length && self->in_head; i++)
    {
      self->head_bytes++;
      if (data[i] == '\n' &&
          (self->head_tail[1] == '\n' || (self->head_tail[1] == '\r' && self->head_tail[0] == '\n')))
        self->in_head = FALSE;

      self->head_tail[0] = self->head_tail[1];
      self->head_tail[1] = data[i];
    }
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
                           "The gateway refused this connection's request head");
      return -1;
    }

  n = g_socket_receive_with_blocking (self->socket, buffer, count, blocking, cancellable, &local_error);
  if (n > 0)
    {
      if (self->awaiting_request)
        start_head (self);
      self->awaiting_request = FALSE;
      scan_head (self, buffer, n);
      /* head_bytes counts only the current head, so whether it ended in this
       * read or not, it is too large. */
      if (self->head_bytes > MAX_HEAD_BYTES)
        return refuse_input (self, G_IO_ERROR_MESSAGE_TOO_LARGE, "head-too-large",
                            "The guest's request head is larger than 64 KiB", error);
      return n;
    }

  /* libsoup 3.2 takes a request cut short by the end of the stream for a
   * whole one: a head (soup_message_io_data_read_headers()), and a chunked
   * body before its last chunk or the end of its trailers (its chunked
   * reader returns the end of the stream as the body's end). A guest that
   * half-closes mid-request, or a connection a deadline shuts down, would
   * have what arrived handled and forwarded as if complete. libsoup reads
   * nothing past a whole request until its answer is written, so an end of
   * stream read while a request is open always cuts it short. */
  if (n == 0 && !self->awaiting_request)
    return self->in_head
             ? refuse_input (self, G_IO_ERROR_PARTIAL_INPUT, "incomplete-head",
                            "The guest ended its connection in the middle of a request head", error)
             : refuse_input (self, G_IO_ERROR_PARTIAL_INPUT, "incomplete-body",
                            "The guest ended its connection in the middle of a request body", error);

  if (!self->awaiting_request || count < strlen (STAND_IN_LINE) ||
      g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK) ||
      g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      if (local_error != NULL)
        g_propagate_error (error, g_steal_pointer (&local_error));
      return n;
    }

  /* End of stream (or a failure) on an idle connection: see the top of the
   * file. */
  self->awaiting_request = FALSE;
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

  return self->ended || g_socket_condition_check (self->socket, G_IO_IN) != 0;
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
  self->awaiting_request = TRUE;
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
 * sandbox_gateway_stream_expect_request:
 *
 * Marks the connection as waiting for a new request: until its next byte, an
 * end of stream ends the connection (see the top of the file).
 */
void
sandbox_gateway_stream_expect_request (SandboxGatewayStream *self)
{
  sandbox_gateway_stream_get_input_stream (G_IO_STREAM (self));
  self->input->awaiting_request = TRUE;
  /* Head tracking starts again with the next byte (a head pipelined behind
   * the last one may already sit in libsoup's buffer, unseen here). */
  self->input->in_head = FALSE;
}

/*
 * sandbox_gateway_stream_set_refusal_func:
 * @func: (nullable): called on the gateway thread, with a reason
 *   ("incomplete-head", "incomplete-body" or "head-too-large"), when the
 *   stream refuses a request (at most once per connection); %NULL to stop
 *
 * The stream ends its input when a request is cut short or its head grows
 * past 64 KiB; libsoup then drops the connection without a word, so this is
 * how the gateway learns of it.
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
 * sandbox_gateway_stream_is_in_head:
 *
 * Returns: whether part of a request head has been read and its end not yet
 */
gboolean
sandbox_gateway_stream_is_in_head (SandboxGatewayStream *self)
{
  return self->input != NULL && self->input->in_head;
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
