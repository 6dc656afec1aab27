/* sandbox-process-stdin.c — a command's standard input, streamed as it runs
 *
 * A command whose [property@Sandbox.Command:stdin-stream] is set gets its
 * input while it runs, from a #GOutputStream the consumer writes to and
 * closes. The stream is one end of a connected pair of UNIX sockets, the
 * driver reads the other end: GSocket sends with MSG_NOSIGNAL (a pipe's
 * write end would raise SIGPIPE in the application once the command is
 * gone), and a pollable GOutputStream gets asynchronous and blocking
 * writes and g_output_stream_splice() from GIO. Each end is shut down in the direction
 * it does not use, so bytes only ever flow towards the command.
 *
 * Backpressure: the consumer's end sends into a buffer of
 * STDIN_SEND_BUFFER_BYTES (the kernel doubles it for its bookkeeping);
 * when the command does not read, the driver stops reading too, the
 * buffer fills and writes wait (or return %G_IO_ERROR_WOULD_BLOCK on the
 * pollable stream).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-process-state-private.h"

#define STDIN_SEND_BUFFER_BYTES 65536

/* The consumer's end. GSocketConnection's output stream would send with
 * MSG_NOSIGNAL too, but closing it leaves the socket open (only closing the
 * whole connection closes it): the command would never see end of file.
 * So a stream of its own over the GSocket, whose close is the socket's. */
#define STDIN_TYPE_STREAM (stdin_stream_get_type ())
G_DECLARE_FINAL_TYPE (StdinStream, stdin_stream, STDIN, STREAM, GOutputStream)

struct _StdinStream
{
  GOutputStream parent_instance;
  GSocket *socket;
};

static void stdin_stream_pollable_init (GPollableOutputStreamInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (StdinStream, stdin_stream, G_TYPE_OUTPUT_STREAM,
                               G_IMPLEMENT_INTERFACE (G_TYPE_POLLABLE_OUTPUT_STREAM,
                                                      stdin_stream_pollable_init))

static gssize
stdin_stream_write (GOutputStream  *stream,
                    const void     *buffer,
                    gsize           count,
                    GCancellable   *cancellable,
                    GError        **error)
{
  return g_socket_send_with_blocking (STDIN_STREAM (stream)->socket, buffer, count, TRUE,
                                      cancellable, error);
}

static gboolean
stdin_stream_close (GOutputStream  *stream,
                    GCancellable   *cancellable,
                    GError        **error)
{
  return g_socket_close (STDIN_STREAM (stream)->socket, error);
}

static gboolean
stdin_stream_is_writable (GPollableOutputStream *stream)
{
  return g_socket_condition_check (STDIN_STREAM (stream)->socket, G_IO_OUT) != 0;
}

static GSource *
stdin_stream_create_source (GPollableOutputStream *stream,
                            GCancellable          *cancellable)
{
  g_autoptr(GSource) socket_source =
    g_socket_create_source (STDIN_STREAM (stream)->socket, G_IO_OUT, cancellable);

  return g_pollable_source_new_full (stream, socket_source, cancellable);
}

static gssize
stdin_stream_write_nonblocking (GPollableOutputStream  *stream,
                                const void             *buffer,
                                gsize                   count,
                                GError                **error)
{
  return g_socket_send_with_blocking (STDIN_STREAM (stream)->socket, buffer, count, FALSE,
                                      NULL, error);
}

static void
stdin_stream_pollable_init (GPollableOutputStreamInterface *iface)
{
  iface->is_writable = stdin_stream_is_writable;
  iface->create_source = stdin_stream_create_source;
  iface->write_nonblocking = stdin_stream_write_nonblocking;
}

static void
stdin_stream_finalize (GObject *object)
{
  g_clear_object (&STDIN_STREAM (object)->socket);

  G_OBJECT_CLASS (stdin_stream_parent_class)->finalize (object);
}

static void
stdin_stream_class_init (StdinStreamClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = stdin_stream_finalize;
  G_OUTPUT_STREAM_CLASS (klass)->write_fn = stdin_stream_write;
  G_OUTPUT_STREAM_CLASS (klass)->close_fn = stdin_stream_close;
}

static void
stdin_stream_init (StdinStream *self)
{
}

static GOutputStream *
stdin_stream_new (int       fd,
                  GError  **error)
{
  g_autoptr(GSocket) socket = g_socket_new_from_fd (fd, error);
  StdinStream *self;

  if (socket == NULL)
    return NULL;
  self = g_object_new (STDIN_TYPE_STREAM, NULL);
  self->socket = g_steal_pointer (&socket);
  return G_OUTPUT_STREAM (self);
}

/**
 * sandbox_process_open_stdin_stream:
 * @self: a [class@Sandbox.Process]
 * @error: return location for a #GError
 *
 * For drivers, while spawning a command whose
 * [property@Sandbox.Command:stdin-stream] is set, before the process is
 * returned to the consumer: makes the stream
 * [method@Sandbox.Process.get_stdin_stream] returns and gives the driver
 * the descriptor to read it from. What the consumer writes arrives there
 * in order; end of file when the consumer closes the stream (or drops the
 * process). The driver passes the bytes to the command, reading only as
 * fast as the command takes them, and closes the descriptor when the
 * command's input is over; the consumer's writes then fail with
 * %G_IO_ERROR_BROKEN_PIPE.
 *
 * Returns: the driver's descriptor (close-on-exec, blocking, read-only;
 *   the caller owns it), or -1 with %SANDBOX_ERROR_UNAVAILABLE
 */
int
sandbox_process_open_stdin_stream (SandboxProcess  *self,
                                   GError         **error)
{
  SandboxProcessPrivate *priv;
  g_autoptr(GOutputStream) stream = NULL;
  int buffer = STDIN_SEND_BUFFER_BYTES;
  int fds[2];

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), -1);
  priv = sandbox_process_get_private (self);
  g_return_val_if_fail (priv->stdin_stream == NULL, -1);

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
    {
      int saved_errno = errno;

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: socketpair: %s", g_strerror (saved_errno));
      return -1;
    }
  /* Bytes flow towards the command only; the send buffer bounds them. */
  shutdown (fds[0], SHUT_RD);
  shutdown (fds[1], SHUT_WR);
  setsockopt (fds[0], SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);

  stream = stdin_stream_new (fds[0], error);
  if (stream == NULL)
    {
      g_prefix_error (error, "Sandbox process could not start: ");
      close (fds[0]);
      close (fds[1]);
      return -1;
    }
  g_mutex_lock (&priv->mutex);
  priv->stdin_stream = g_steal_pointer (&stream);
  g_mutex_unlock (&priv->mutex);
  return fds[1];
}

/**
 * sandbox_process_get_stdin_stream:
 * @self: a [class@Sandbox.Process]
 *
 * The command's standard input, when its
 * [property@Sandbox.Command:stdin-stream] was set: write to it as the
 * command runs (any #GOutputStream call: blocking, asynchronous, pollable,
 * g_output_stream_splice()), and close it to give the command end of file.
 * Writes wait while the command does not read: at most about 64 KiB is
 * buffered on the way (plus what the driver holds, one pipe's worth at
 * most). Once the command is over, writes fail with
 * %G_IO_ERROR_BROKEN_PIPE; a command that only closes its standard input
 * may hold writes back until it exits.
 *
 * Returns: (transfer none) (nullable): the stream, or %NULL when the
 *   command's input was not streamed
 */
GOutputStream *
sandbox_process_get_stdin_stream (SandboxProcess *self)
{
  SandboxProcessPrivate *priv;
  GOutputStream *stream = NULL;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), NULL);

  priv = sandbox_process_get_private (self);
  g_mutex_lock (&priv->mutex);
  stream = priv->stdin_stream;
  g_mutex_unlock (&priv->mutex);
  return stream;
}
