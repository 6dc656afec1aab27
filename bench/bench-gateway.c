/* bench-gateway.c — a loopback upstream and raw HTTP/1.1 keep-alive clients
 *
 * The upstream is deliberately cheap (a thread per connection answering every
 * request with a fixed 1 KiB body in one write), so the direct path is close
 * to the physical floor of a loopback HTTP exchange and the gateway's own cost
 * is what the ratio shows.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bench-common.h"
#include "bench-gateway.h"

#define BODY_BYTES 1024

static char response[512 + BODY_BYTES];
static gsize response_length;

static gboolean
read_request (int      fd,
              char    *buffer,
              gsize    size,
              gsize   *filled)
{
  for (;;)
    {
      char *end = *filled > 0 ? g_strstr_len (buffer, *filled, "\r\n\r\n") : NULL;
      ssize_t n;

      if (end != NULL)
        {
          gsize used = end + 4 - buffer;

          memmove (buffer, buffer + used, *filled - used);
          *filled -= used;
          return TRUE;
        }
      if (*filled == size)
        return FALSE;
      n = read (fd, buffer + *filled, size - *filled);
      if (n <= 0)
        return FALSE;
      *filled += n;
    }
}

static gpointer
serve_connection (gpointer data)
{
  int fd = GPOINTER_TO_INT (data);
  char buffer[8192];
  gsize filled = 0;

  while (read_request (fd, buffer, sizeof buffer, &filled))
    if (write (fd, response, response_length) != (ssize_t) response_length)
      break;

  close (fd);
  return NULL;
}

static gpointer
accept_loop (gpointer data)
{
  int listener = GPOINTER_TO_INT (data);

  for (;;)
    {
      int fd = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);
      int one = 1;

      if (fd < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      g_thread_unref (g_thread_new ("bench-upstream", serve_connection, GINT_TO_POINTER (fd)));
    }
  return NULL;
}

guint16
bench_upstream_start (void)
{
  struct sockaddr_in address = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t length = sizeof address;
  int listener = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_autofree char *head = g_strdup_printf ("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                                           "Content-Length: %d\r\n\r\n", BODY_BYTES);

  response_length = strlen (head);
  memcpy (response, head, response_length);
  memset (response + response_length, 'x', BODY_BYTES);
  response_length += BODY_BYTES;

  if (bind (listener, (struct sockaddr *) &address, sizeof address) < 0 ||
      listen (listener, 512) < 0 ||
      getsockname (listener, (struct sockaddr *) &address, &length) < 0)
    g_error ("upstream: %s", g_strerror (errno));

  g_thread_unref (g_thread_new ("bench-upstream-accept", accept_loop, GINT_TO_POINTER (listener)));
  return ntohs (address.sin_port);
}

/* Clients */

typedef struct
{
  const BenchRateClient *client;
  double seconds;
  guint64 count;
} RateThread;

static gpointer
rate_thread_run (gpointer data)
{
  RateThread *thread = data;
  const BenchRateClient *client = thread->client;
  gpointer connection = client->open (client->data);
  double end = bench_now_us () + thread->seconds * 1e6;

  for (thread->count = 0; bench_now_us () < end; thread->count++)
    if (!client->request (connection, client->data))
      g_error ("bench: a request failed");
  client->close (connection);
  return NULL;
}

/* Requests per second over @n_clients connections, each kept busy for
 * @seconds from when it is open, each in a thread of its own. */
double
bench_rate (const BenchRateClient *client,
            guint                  n_clients,
            double                 seconds)
{
  RateThread threads[64];
  GThread *running[64];
  guint64 total = 0;
  double start = bench_now_us ();

  g_assert (n_clients <= G_N_ELEMENTS (threads));
  for (guint i = 0; i < n_clients; i++)
    {
      threads[i] = (RateThread) { client, seconds, 0 };
      running[i] = g_thread_new ("bench-client", rate_thread_run, &threads[i]);
    }
  for (guint i = 0; i < n_clients; i++)
    {
      g_thread_join (running[i]);
      total += threads[i].count;
    }
  return total / ((bench_now_us () - start) / 1e6);
}

int
bench_client_connect_tcp (guint16 port)
{
  struct sockaddr_in address = { .sin_family = AF_INET, .sin_port = htons (port),
                                 .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;

  if (connect (fd, (struct sockaddr *) &address, sizeof address) < 0)
    g_error ("connect: %s", g_strerror (errno));
  setsockopt (fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int
bench_client_connect_unix (const char *path)
{
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_strlcpy (address.sun_path, path, sizeof address.sun_path);
  if (connect (fd, (struct sockaddr *) &address, sizeof address) < 0)
    g_error ("connect %s: %s", path, g_strerror (errno));
  return fd;
}

/* One GET and its whole response; FALSE on any failure or a non-200. */
gboolean
bench_client_get (int         fd,
                  const char *request,
                  gsize       request_length)
{
  char buffer[8192];
  gsize filled = 0;
  char *end = NULL;
  gsize head_length, content_length;
  const char *header;

  if (write (fd, request, request_length) != (ssize_t) request_length)
    return FALSE;

  while (end == NULL)
    {
      ssize_t n = read (fd, buffer + filled, sizeof buffer - 1 - filled);

      if (n <= 0)
        return FALSE;
      filled += n;
      buffer[filled] = '\0';
      end = strstr (buffer, "\r\n\r\n");
    }

  if (strncmp (buffer, "HTTP/1.1 200", 12) != 0)
    return FALSE;
  head_length = end + 4 - buffer;
  header = strcasestr (buffer, "\r\nContent-Length:");
  if (header == NULL || header > end)
    return FALSE;
  content_length = g_ascii_strtoull (header + 17, NULL, 10);

  while (filled < head_length + content_length)
    {
      ssize_t n = read (fd, buffer, MIN (sizeof buffer - 1, head_length + content_length - filled));

      if (n <= 0)
        return FALSE;
      filled += n;
    }

  return TRUE;
}
