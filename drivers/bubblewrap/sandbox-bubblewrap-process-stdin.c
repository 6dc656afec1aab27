/* sandbox-bubblewrap-process-stdin.c — a command's standard input
 *
 * The guest's standard input is always a pipe of ours (cold or from a
 * ready sandbox alike, and so the guest holds no socket: see
 * tests/escape/test-escape-fds.c), or the terminal the stub made for it
 * (sandbox-bubblewrap-process-live.c), whose master we write to. Into it go either the command's stdin
 * bytes, or, for a streamed input, what the consumer writes to the
 * process's stdin stream (sandbox_process_open_stdin_stream()): relayed one
 * chunk at a time, and the next chunk read only once the pipe took the
 * last. So backpressure reaches the consumer: a guest that does not read
 * leaves at most one pipe (64 KiB), one chunk (STDIN_CHUNK_BYTES) and the
 * socket's buffer in flight, and the consumer's writes wait.
 *
 * All of it runs on the launcher thread, where SIGPIPE is blocked: a
 * write to a pipe whose guest closed its end leaves the signal pending,
 * and we consume it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "sandbox-bubblewrap-process-fields-private.h"

#define STDIN_CHUNK_BYTES 65536

typedef enum
{
  CHUNK_WAITS,     /* the pipe is full: wait until it takes more */
  CHUNK_WRITTEN,   /* all of it is in the pipe */
  INPUT_OVER,      /* the guest closed its end, or writing failed */
} ChunkProgress;

static gboolean pipe_writable_cb (int fd, GIOCondition condition, gpointer data);
static gboolean reader_readable_cb (int fd, GIOCondition condition, gpointer data);

/* The guest closed its standard input: not an error. Consumes the
 * SIGPIPE the write left pending on this thread. */
static void
consume_sigpipe (void)
{
  sigset_t pipe_set;
  struct timespec no_wait = { 0, 0 };

  sigemptyset (&pipe_set);
  sigaddset (&pipe_set, SIGPIPE);
  sigtimedwait (&pipe_set, NULL, &no_wait);
}

static ChunkProgress
write_chunk (SandboxBubblewrapProcess *self)
{
  gsize size;
  const guint8 *data = g_bytes_get_data (self->stdin_bytes, &size);

  while (self->stdin_written < size)
    {
      gssize n = TEMP_FAILURE_RETRY (write (self->stdin_fd, data + self->stdin_written,
                                            size - self->stdin_written));
      int saved_errno = errno;

      if (n >= 0)
        {
          self->stdin_written += n;
          continue;
        }
      if (saved_errno == EAGAIN)
        return CHUNK_WAITS;
      if (saved_errno == EPIPE)
        consume_sigpipe ();
      else if (saved_errno == EIO && self->terminal_fd >= 0)
        ;   /* the terminal is hung up: nobody in the sandbox reads it */
      else
        {
          g_autoptr(GError) failure =
            g_error_new (G_IO_ERROR, g_io_error_from_errno (saved_errno),
                         "Could not write the command's standard input: %s",
                         g_strerror (saved_errno));

          sandbox_process_abort (SANDBOX_PROCESS (self), failure);
        }
      return INPUT_OVER;
    }
  return CHUNK_WRITTEN;
}

static void
watch (SandboxBubblewrapProcess *self,
       GSource                 **source,
       int                       fd,
       GIOCondition              condition,
       GUnixFDSourceFunc         callback,
       const char               *name)
{
  if (*source == NULL)
    *source = sandbox_bubblewrap_process_watch_fd (self, fd, condition, callback, name);
}

/* Writes what there is to write, then waits for whichever side must move:
 * the pipe to take the rest, or the consumer to send the next chunk. */
static void
pump (SandboxBubblewrapProcess *self)
{
  switch (write_chunk (self))
    {
    case CHUNK_WAITS:
      sandbox_bubblewrap_source_destroy (&self->stdin_reader_source);
      watch (self, &self->stdin_source, self->stdin_fd, G_IO_OUT | G_IO_HUP | G_IO_ERR,
             pipe_writable_cb, "[sandbox] command stdin");
      break;
    case CHUNK_WRITTEN:
      g_clear_pointer (&self->stdin_bytes, g_bytes_unref);
      self->stdin_written = 0;
      if (self->stdin_reader < 0)
        {
          sandbox_bubblewrap_process_finish_stdin (self);
          break;
        }
      sandbox_bubblewrap_source_destroy (&self->stdin_source);
      watch (self, &self->stdin_reader_source, self->stdin_reader,
             G_IO_IN | G_IO_HUP | G_IO_ERR, reader_readable_cb, "[sandbox] command stdin stream");
      break;
    case INPUT_OVER:
      sandbox_bubblewrap_process_finish_stdin (self);
      break;
    }
}

/* A destroyed source is never dispatched again, whatever its callback
 * returned; pump() destroys the ones it no longer wants. */
static gboolean
pipe_writable_cb (int          fd,
                  GIOCondition condition,
                  gpointer     data)
{
  pump (data);
  return G_SOURCE_CONTINUE;
}

static gboolean
reader_readable_cb (int          fd,
                    GIOCondition condition,
                    gpointer     data)
{
  SandboxBubblewrapProcess *self = data;
  g_autofree guint8 *chunk = g_malloc (STDIN_CHUNK_BYTES);
  gssize n = TEMP_FAILURE_RETRY (read (fd, chunk, STDIN_CHUNK_BYTES));

  if (n < 0 && errno == EAGAIN)
    return G_SOURCE_CONTINUE;
  if (n <= 0)
    {
      /* The consumer closed the stream (or it broke): end of file, which
       * a terminal gets as its end-of-file character. */
      sandbox_bubblewrap_process_type_eof (self);
      sandbox_bubblewrap_process_finish_stdin (self);
      return G_SOURCE_CONTINUE;
    }
  self->stdin_bytes = g_bytes_new_take (g_steal_pointer (&chunk), n);
  self->stdin_written = 0;
  pump (self);
  return G_SOURCE_CONTINUE;
}

/**
 * sandbox_bubblewrap_process_open_stdin:
 * @self: a process being made
 * @command: its command
 * @error: return location for a #GError
 *
 * Takes the command's stdin bytes, or opens its stdin stream.
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_UNAVAILABLE
 */
gboolean
sandbox_bubblewrap_process_open_stdin (SandboxBubblewrapProcess  *self,
                                       SandboxCommand            *command,
                                       GError                   **error)
{
  GBytes *stdin_bytes = sandbox_command_get_stdin (command);

  self->stdin_bytes = stdin_bytes != NULL ? g_bytes_ref (stdin_bytes) : NULL;
  self->wants_terminal = sandbox_command_get_terminal (command);
  if (self->wants_terminal)
    self->stdin_reader = sandbox_process_open_terminal (SANDBOX_PROCESS (self), error);
  else if (sandbox_command_get_stdin_stream (command))
    self->stdin_reader = sandbox_process_open_stdin_stream (SANDBOX_PROCESS (self), error);
  else
    return TRUE;
  if (self->stdin_reader < 0)
    return FALSE;
  fcntl (self->stdin_reader, F_SETFL, O_NONBLOCK);
  return TRUE;
}

/**
 * sandbox_bubblewrap_process_start_stdin:
 * @self: a process whose bwrap was just launched
 *
 * Starts feeding the guest's standard input, or, for a terminal, waits
 * for it. Launcher thread.
 */
void
sandbox_bubblewrap_process_start_stdin (SandboxBubblewrapProcess *self)
{
  /* A terminal's input starts once the stub handed it over. */
  if (self->wants_terminal)
    return;
  if (self->stdin_reader >= 0)
    watch (self, &self->stdin_reader_source, self->stdin_reader, G_IO_IN | G_IO_HUP | G_IO_ERR,
           reader_readable_cb, "[sandbox] command stdin stream");
  else if (self->stdin_bytes == NULL || g_bytes_get_size (self->stdin_bytes) == 0)
    sandbox_bubblewrap_process_finish_stdin (self);
  else
    pump (self);
}

/**
 * sandbox_bubblewrap_process_finish_stdin:
 * @self: a process
 *
 * Ends the guest's standard input (end of file) and the consumer's stream
 * (its writes now fail). Launcher thread, or before the launch.
 */
void
sandbox_bubblewrap_process_finish_stdin (SandboxBubblewrapProcess *self)
{
  sandbox_bubblewrap_source_destroy (&self->stdin_source);
  sandbox_bubblewrap_source_destroy (&self->stdin_reader_source);
  sandbox_bubblewrap_clear_fd (&self->stdin_fd);
  sandbox_bubblewrap_clear_fd (&self->stdin_reader);
}

/**
 * sandbox_bubblewrap_process_stdin_to_terminal:
 * @self: a process whose terminal the stub just handed over
 *
 * What the consumer writes goes to the terminal from now on; the pipe
 * bwrap was given as the stub's standard input is closed (the guest reads
 * the terminal). Launcher thread.
 */
void
sandbox_bubblewrap_process_stdin_to_terminal (SandboxBubblewrapProcess *self)
{
  sandbox_bubblewrap_clear_fd (&self->stdin_fd);
  if (self->stdin_reader < 0)
    return;
  self->stdin_fd = fcntl (self->terminal_fd, F_DUPFD_CLOEXEC, 3);
  watch (self, &self->stdin_reader_source, self->stdin_reader, G_IO_IN | G_IO_HUP | G_IO_ERR,
         reader_readable_cb, "[sandbox] command terminal input");
}
