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
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <string.h>

#include "sandbox-gateway-stream-private.h"

#define STAND_IN_LINE "X\n"

/* The input stream */

#define SANDBOX_TYPE_GATEWAY_INPUT (sandbox_gateway_input_get_type ())
G_DECLARE_FINAL_TYPE (SandboxGatewayInput, sandbox_gateway_input, SANDBOX, GATEWAY_INPUT, GInputStream)

struct _SandboxGatewayInput
{
  GInputStream parent_instance;

  GSocket *socket;
  gboolean awaiting_request; /* no byte read since the last response */
  gboolean ended;            /* the stand-in was delivered: only errors from now */
};

static void sandbox_gateway_input_pollable_iface_init (GPollableInputStreamInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SandboxGatewayInput, sandbox_gateway_input, G_TYPE_INPUT_STREAM,
                               G_IMPLEMENT_INTERFACE (G_TYPE_POLLABLE_INPUT_STREAM,
                                                      sandbox_gateway_input_pollable_iface_init))

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

  n = g_socket_receive_with_blocking (self->socket, buffer, count, blocking, cancellable, &local_error);
  if (n > 0)
    {
      self->awaiting_request = FALSE;
      return n;
    }

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

/* The socket belongs to the connection, which closes it. */
static gboolean
sandbox_gateway_input_close (GInputStream  *stream,
                             GCancellable  *cancellable,
                             GError       **error)
{
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
  g_autoptr(GSource) socket_source = NULL;

  if (self->ended)
    return g_pollable_source_new_full (stream, NULL, cancellable);

  socket_source = g_socket_create_source (self->socket, G_IO_IN, cancellable);
  return g_pollable_source_new_full (stream, socket_source, cancellable);
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
}

/* The connection */

struct _SandboxGatewayStream
{
  GSocketConnection parent_instance;

  SandboxGatewayInput *input;
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

static void
sandbox_gateway_stream_finalize (GObject *object)
{
  SandboxGatewayStream *self = SANDBOX_GATEWAY_STREAM (object);

  g_clear_object (&self->input);

  G_OBJECT_CLASS (sandbox_gateway_stream_parent_class)->finalize (object);
}

static void
sandbox_gateway_stream_class_init (SandboxGatewayStreamClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GIOStreamClass *stream_class = G_IO_STREAM_CLASS (klass);

  object_class->finalize = sandbox_gateway_stream_finalize;
  stream_class->get_input_stream = sandbox_gateway_stream_get_input_stream;
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
}
