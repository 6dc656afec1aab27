/* sandbox-gateway-output.c — what libsoup writes to a guest connection
 *
 * libsoup writes a response's head and its body in two writes, and each
 * wakes the guest (its read returns the head, and it waits again for the
 * body). When the gateway knows a body follows the head, the head is held
 * and sent together with the first body write, in one sendmsg().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <errno.h>

#include "sandbox-gateway-output-private.h"

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
gboolean
sandbox_gateway_output_release (SandboxGatewayOutput *self)
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
  sandbox_gateway_output_release (SANDBOX_GATEWAY_OUTPUT (stream));
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

SandboxGatewayOutput *
sandbox_gateway_output_new (GSocket *socket)
{
  SandboxGatewayOutput *self = g_object_new (SANDBOX_TYPE_GATEWAY_OUTPUT, NULL);

  self->socket = g_object_ref (socket);
  return self;
}

/* The next write is a response's head, and a body follows it. */
void
sandbox_gateway_output_hold_next (SandboxGatewayOutput *self)
{
  self->hold_next = TRUE;
}
