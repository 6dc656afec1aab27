/* sandbox-gateway-input.c — what libsoup reads of a guest connection
 *
 * A SandboxGatewayInput reads the socket as GSocketInputStream does, but
 * hands libsoup only what the request-framing scanner
 * (sandbox-gateway-framing.c) has followed: nothing past a head's end in the
 * same read (the rest is stashed until the body's framing is known), and
 * nothing after a refusal, which ends the connection's input and is reported
 * through the refusal function.
 *
 * It also ends a request cut short: libsoup 3.2 takes the end of the stream
 * in the middle of a head for the head's end, and in the middle of a chunked
 * body for the body's end, and would handle, and the gateway forward,
 * whatever part arrived. An end of stream inside a request is reported as an
 * error instead. (libsoup 3.6.5 fixed the chunked body's case, commit
 * 1e32b5e1 "Report an error in case of unexpected stream end"; the head's is
 * still there on its main branch after 3.7.1, in
 * soup_message_io_data_read_headers(). The refusal stays either way: it is
 * what gets the cut-short request audited.)
 *
 * It also works around a libsoup 3.2 bug, fixed upstream by libsoup commit
 * d20c6601 ("server: do not leak idle connections closed by the client",
 * first released in 3.3.0, stable in 3.4.0; not in 3.2.3): after a
 * keep-alive response, libsoup 3.2 prepares the next message without a
 * completion callback and only "starts" it once a first byte has arrived.
 * When the guest closes the idle connection instead — or its socket fails,
 * or the gateway's own header deadline shuts it down — that message fails
 * silently and nothing ever disconnects the connection: its socket, its
 * stream and its SoupServerConnection stay alive until the server is
 * disposed, one file descriptor per connection. So, between requests, end of
 * stream or a read error is reported as a stand-in line "X\n" followed by an
 * error. The line makes libsoup start the message, the error then ends it
 * through its completion callback, and libsoup disconnects the connection
 * itself. The stand-in can never complete a request: it holds no blank line,
 * and nothing follows it but the error, so libsoup answers nothing and
 * forwards nothing. With libsoup 3.4.0 or later the stand-in is not needed,
 * and not sent: the error alone ends the message.
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

#include <string.h>

#include <libsoup/soup.h>

#include "sandbox-gateway-input-private.h"

#define STAND_IN_LINE "X\n"

struct _SandboxGatewayInput
{
  GInputStream parent_instance;

  GSocket *socket;
  gboolean received;         /* the guest sent a byte on the connection */
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

  SandboxGatewayFraming framing;

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

/* Ends the connection's input with @message; reports @reason once. */
static gssize
refuse_input (SandboxGatewayInput                 *self,
              GIOErrorEnum                         code,
              const SandboxGatewayFramingRefusal  *refusal,
              const char                          *message,
              GError                             **error)
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

/* Whether an end of stream or a read failure (@error) between requests must
 * be reported as the stand-in line first: see the top of the file. */
static gboolean
needs_stand_in (SandboxGatewayInput *self,
                gsize                count,
                const GError        *error)
{
#if SOUP_CHECK_VERSION (3, 3, 0)
  return FALSE;
#else
  return sandbox_gateway_framing_incomplete_reason (&self->framing) == NULL &&
         count >= strlen (STAND_IN_LINE) &&
         !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK) &&
         !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
#endif
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
  const char *incomplete;
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
      SandboxGatewayFramingRefusal refusal = { 0, NULL };
      gsize taken = sandbox_gateway_framing_follow (&self->framing, buffer, n, &refusal);

      self->received = TRUE;
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
  incomplete = sandbox_gateway_framing_incomplete_reason (&self->framing);
  if (n == 0 && incomplete != NULL)
    {
      SandboxGatewayFramingRefusal refusal = { 0, incomplete };

      return refuse_input (self, G_IO_ERROR_PARTIAL_INPUT, &refusal,
                           g_str_equal (incomplete, "incomplete-head")
                             ? "The guest ended its connection in the middle of a request head"
                             : "The guest ended its connection in the middle of a request body",
                           error);
    }

  if (!needs_stand_in (self, count, local_error))
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
  sandbox_gateway_framing_init (&self->framing);
  self->readers = g_ptr_array_new ();
}
SandboxGatewayInput *
sandbox_gateway_input_new (GSocket *socket)
{
  SandboxGatewayInput *self = g_object_new (SANDBOX_TYPE_GATEWAY_INPUT, NULL);

  self->socket = g_object_ref (socket);
  return self;
}

/*
 * sandbox_gateway_input_get_framing:
 *
 * Returns: (transfer none): the connection's request-framing scanner
 */
SandboxGatewayFraming *
sandbox_gateway_input_get_framing (SandboxGatewayInput *self)
{
  return &self->framing;
}

/* Whether the guest has sent a byte that was read from the socket. */
gboolean
sandbox_gateway_input_has_received (SandboxGatewayInput *self)
{
  return self->received;
}

/* See sandbox_gateway_stream_set_refusal_func(). */
void
sandbox_gateway_input_set_refusal_func (SandboxGatewayInput             *self,
                                        SandboxGatewayStreamRefusalFunc  func,
                                        gpointer                         user_data)
{
  self->refusal_func = func;
  self->refusal_data = user_data;
}

/* See sandbox_gateway_stream_set_hangup_func(). */
void
sandbox_gateway_input_set_hangup_func (SandboxGatewayInput *self,
                                       GSourceFunc          func,
                                       gpointer             user_data)
{
  self->hangup_func = func;
  self->hangup_data = user_data;
}

/* See sandbox_gateway_stream_watch_for_hangup(). */
void
sandbox_gateway_input_watch_for_hangup (SandboxGatewayInput *self)
{
  if (!self->ended && !g_input_stream_is_closed (G_INPUT_STREAM (self)))
    ensure_watch (self);
}
