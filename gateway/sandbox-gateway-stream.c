/* sandbox-gateway-stream.c — the guest connections handed to libsoup
 *
 * A SandboxGatewayStream is a GSocketConnection whose input stream
 * (sandbox-gateway-input.c) follows the framing of every request on the
 * connection before libsoup sees the bytes (sandbox-gateway-framing.c), and
 * whose output stream (sandbox-gateway-output.c) can send a response's head
 * together with its body. This file joins the two and is what the gateway's
 * connections (sandbox-gateway-connection.c) talk to.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include "sandbox-gateway-input-private.h"
#include "sandbox-gateway-output-private.h"
#include "sandbox-gateway-stream-private.h"

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
    self->input = sandbox_gateway_input_new (g_socket_connection_get_socket (G_SOCKET_CONNECTION (self)));

  return G_INPUT_STREAM (self->input);
}

static GOutputStream *
sandbox_gateway_stream_get_output_stream (GIOStream *stream)
{
  SandboxGatewayStream *self = SANDBOX_GATEWAY_STREAM (stream);

  if (self->output == NULL)
    self->output = sandbox_gateway_output_new (g_socket_connection_get_socket (G_SOCKET_CONNECTION (self)));

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

static SandboxGatewayFraming *
framing_of (SandboxGatewayStream *self)
{
  sandbox_gateway_stream_get_input_stream (G_IO_STREAM (self));
  return sandbox_gateway_input_get_framing (self->input);
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
  return sandbox_gateway_framing_begin_body (framing_of (self), body, length);
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
  return self->input != NULL &&
         sandbox_gateway_framing_target_is_origin_form (sandbox_gateway_input_get_framing (self->input));
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
  sandbox_gateway_input_set_refusal_func (self->input, func, user_data);
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
  sandbox_gateway_input_set_hangup_func (self->input, func, user_data);
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
  sandbox_gateway_stream_get_input_stream (G_IO_STREAM (self));
  sandbox_gateway_input_watch_for_hangup (self->input);
}

/*
 * sandbox_gateway_stream_is_in_head:
 *
 * Returns: whether part of a request head has been read and its end not yet
 */
gboolean
sandbox_gateway_stream_is_in_head (SandboxGatewayStream *self)
{
  return self->input != NULL &&
         sandbox_gateway_framing_is_in_head (sandbox_gateway_input_get_framing (self->input));
}

/*
 * sandbox_gateway_stream_has_received:
 *
 * Returns: whether a byte the guest sent has been read from the connection
 */
gboolean
sandbox_gateway_stream_has_received (SandboxGatewayStream *self)
{
  return self->input != NULL && sandbox_gateway_input_has_received (self->input);
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
  sandbox_gateway_output_hold_next (self->output);
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

  return sandbox_gateway_output_release (self->output);
}
