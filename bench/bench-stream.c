/* bench-stream.c — a server-sent-events upstream, and time to first byte
 *
 * The upstream answers each request with the head at once, its first event
 * after @first_ms, then one every @every_ms, in a chunked body, one request
 * per connection. The client measures the time from its request to the first
 * event's bytes, and reads the answer to its last chunk.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "bench-common.h"
#include "bench-gateway.h"
#include "bench-stream.h"

typedef struct
{
  int fd;
  guint first_ms;
  guint every_ms;
  guint n_events;
} Stream;

typedef struct
{
  int listener;
  guint first_ms;
  guint every_ms;
  guint n_events;
} Upstream;

static gboolean
write_text (int         fd,
            const char *text)
{
  gsize length = strlen (text);

  return write (fd, text, length) == (ssize_t) length;
}

static gpointer
serve_stream (gpointer data)
{
  Stream *stream = data;
  char buffer[8192];
  gsize filled = 0;

  /* The request: read up to the end of its head. */
  while (filled < sizeof buffer - 1)
    {
      ssize_t n = read (stream->fd, buffer + filled, sizeof buffer - 1 - filled);

      if (n <= 0)
        goto out;
      filled += n;
      buffer[filled] = '\0';
      if (strstr (buffer, "\r\n\r\n") != NULL)
        break;
    }

  if (!write_text (stream->fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n"))
    goto out;
  for (guint i = 1; i <= stream->n_events; i++)
    {
      g_autofree char *event = g_strdup_printf ("data: %u\n\n", i);
      g_autofree char *chunk = g_strdup_printf ("%zx\r\n%s\r\n", strlen (event), event);

      g_usleep ((i == 1 ? stream->first_ms : stream->every_ms) * 1000);
      if (!write_text (stream->fd, chunk))
        goto out;
    }
  write_text (stream->fd, "0\r\n\r\n");

out:
  close (stream->fd);
  g_free (stream);
  return NULL;
}

static gpointer
accept_streams (gpointer data)
{
  Upstream *upstream = data;

  for (;;)
    {
      int fd = accept4 (upstream->listener, NULL, NULL, SOCK_CLOEXEC);
      Stream *stream;

      if (fd < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      stream = g_new0 (Stream, 1);
      *stream = (Stream) { fd, upstream->first_ms, upstream->every_ms, upstream->n_events };
      g_thread_unref (g_thread_new ("bench-sse", serve_stream, stream));
    }
  return NULL;
}

guint16
bench_sse_upstream_start (guint first_ms,
                          guint every_ms,
                          guint n_events)
{
  struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t length = sizeof address;
  Upstream *upstream = g_new0 (Upstream, 1);

  *upstream = (Upstream) { socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), first_ms, every_ms, n_events };
  if (bind (upstream->listener, (struct sockaddr *) &address, sizeof address) < 0 ||
      listen (upstream->listener, 64) < 0 ||
      getsockname (upstream->listener, (struct sockaddr *) &address, &length) < 0)
    g_error ("sse upstream: %s", g_strerror (errno));

  /* Runs until the process exits, as the other bench upstreams do. */
  g_thread_unref (g_thread_new ("bench-sse-accept", accept_streams, upstream));
  return ntohs (address.sin_port);
}

/*
 * bench_sse_get:
 * @socket_path: the gateway's socket, or NULL for the upstream directly
 * @first_byte_us: (out): from the request to the first event's bytes
 * @n_events: (out): the events read
 *
 * Returns: whether the answer ended with its last chunk
 */
gboolean
bench_sse_get (const char *socket_path,
               guint16     port,
               double     *first_byte_us,
               guint      *n_events)
{
  int fd = socket_path != NULL ? bench_client_connect_unix (socket_path) : bench_client_connect_tcp (port);
  g_autofree char *request = g_strdup_printf ("GET /events HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", port);
  g_autoptr(GString) received = g_string_new (NULL);
  double start = bench_now_us ();
  gboolean complete = FALSE;

  *first_byte_us = -1;
  if (!write_text (fd, request))
    g_error ("sse request: %s", g_strerror (errno));

  while (!complete)
    {
      char buffer[16384];
      ssize_t n = read (fd, buffer, sizeof buffer);

      if (n <= 0)
        break;
      g_string_append_len (received, buffer, n);
      if (*first_byte_us < 0 && strstr (received->str, "data: 1\n") != NULL)
        *first_byte_us = bench_now_us () - start;
      complete = g_str_has_suffix (received->str, "\r\n0\r\n\r\n");
    }
  close (fd);

  *n_events = 0;
  for (const char *p = received->str; (p = strstr (p, "data: ")) != NULL; p++)
    (*n_events)++;
  return complete;
}
