/* bench-relay.c — the least a forwarder on a Unix socket pays on this machine
 *
 * A second floor for the gateway section. Direct-to-upstream measures the
 * loopback exchange alone; a gateway necessarily adds a second hop (the
 * guest's Unix socket in, a TCP connection out), and on a small virtual
 * machine the kernel side of that hop — four socket calls and two wake-ups
 * of other threads per request — is most of what a forwarder costs.
 *
 * This relay does only that hop: one thread (or a few), epoll, one upstream connection
 * per guest connection, the request head passed on with one injected header
 * and the response passed back once its Content-Length is in. No checks, no
 * policy, no audit, GET only: it is a yardstick, never a gateway.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "bench-gateway.h"

#define BUFFER_BYTES 8192

typedef struct
{
  int guest_fd;
  int upstream_fd;
  char request[BUFFER_BYTES];
  gsize request_length;
  char response[BUFFER_BYTES];
  gsize response_length;
} Pair;

#define MAX_RELAY_THREADS 8

typedef struct _Relay Relay;

typedef struct
{
  Relay *relay;
  int epoll_fd;
} RelayThread;

struct _Relay
{
  int listener;
  guint16 upstream_port;
  char *forwarded_head;  /* the one request the benchmark sends, rewritten */
  gsize forwarded_length;
  RelayThread threads[MAX_RELAY_THREADS];
  guint n_threads;
  guint next_thread;     /* connections are dealt out in turn */
};

/* epoll data: a Pair pointer, with the low bit set for its upstream side. */
#define UPSTREAM_SIDE ((guintptr) 1)

static void
pair_close (Pair *pair)
{
  close (pair->guest_fd);
  close (pair->upstream_fd);
  g_free (pair);
}

static gboolean
write_all (int         fd,
           const char *data,
           gsize       length)
{
  while (length > 0)
    {
      ssize_t n = write (fd, data, length);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      data += n;
      length -= n;
    }
  return TRUE;
}

static void
accept_pair (Relay *relay)
{
  RelayThread *thread = &relay->threads[relay->next_thread++ % relay->n_threads];
  int fd = accept4 (relay->listener, NULL, NULL, SOCK_CLOEXEC);
  struct epoll_event guest = { .events = EPOLLIN };
  struct epoll_event upstream = { .events = EPOLLIN };
  Pair *pair;

  if (fd < 0)
    return;

  pair = g_new0 (Pair, 1);
  pair->guest_fd = fd;
  pair->upstream_fd = bench_client_connect_tcp (relay->upstream_port);
  guest.data.ptr = pair;
  upstream.data.ptr = (gpointer) ((guintptr) pair | UPSTREAM_SIDE);
  epoll_ctl (thread->epoll_fd, EPOLL_CTL_ADD, pair->guest_fd, &guest);
  epoll_ctl (thread->epoll_fd, EPOLL_CTL_ADD, pair->upstream_fd, &upstream);
}

/* Passes each complete request head on (as the benchmark's one request,
 * with the credential header a gateway would inject). */
static gboolean
relay_request (Relay *relay,
               Pair  *pair)
{
  ssize_t n = read (pair->guest_fd, pair->request + pair->request_length,
                    sizeof pair->request - pair->request_length);
  char *end;

  if (n <= 0)
    return FALSE;
  pair->request_length += n;

  while ((end = g_strstr_len (pair->request, pair->request_length, "\r\n\r\n")) != NULL)
    {
      gsize used = end + 4 - pair->request;

      if (!write_all (pair->upstream_fd, relay->forwarded_head, relay->forwarded_length))
        return FALSE;
      memmove (pair->request, pair->request + used, pair->request_length - used);
      pair->request_length -= used;
    }

  return pair->request_length < sizeof pair->request;
}

/* Passes each response back once its head and Content-Length body are in. */
static gboolean
relay_response (Pair *pair)
{
  ssize_t n = read (pair->upstream_fd, pair->response + pair->response_length,
                    sizeof pair->response - pair->response_length);

  if (n <= 0)
    return FALSE;
  pair->response_length += n;

  for (;;)
    {
      char *end = g_strstr_len (pair->response, pair->response_length, "\r\n\r\n");
      const char *header;
      gsize total;

      if (end == NULL)
        break;
      *end = '\0';
      header = strcasestr (pair->response, "\r\nContent-Length:");
      *end = '\r';
      if (header == NULL)
        return FALSE;
      total = end + 4 - pair->response + g_ascii_strtoull (header + 17, NULL, 10);
      if (total > sizeof pair->response)
        return FALSE;
      if (pair->response_length < total)
        break;

      if (!write_all (pair->guest_fd, pair->response, total))
        return FALSE;
      memmove (pair->response, pair->response + total, pair->response_length - total);
      pair->response_length -= total;
    }

  return pair->response_length < sizeof pair->response;
}

static gpointer
relay_run (gpointer data)
{
  RelayThread *thread = data;
  Relay *relay = thread->relay;
  struct epoll_event events[64];

  for (;;)
    {
      int n = epoll_wait (thread->epoll_fd, events, G_N_ELEMENTS (events), -1);

      for (int i = 0; i < n; i++)
        {
          guintptr tagged = (guintptr) events[i].data.ptr;
          Pair *pair = (Pair *) (tagged & ~UPSTREAM_SIDE);
          gboolean open;

          if (pair == NULL)
            {
              accept_pair (relay);
              continue;
            }

          open = (tagged & UPSTREAM_SIDE) ? relay_response (pair) : relay_request (relay, pair);
          if (!open)
            pair_close (pair);
        }
    }

  return NULL;
}

/* Starts the relay on @n_threads threads of its own (the first one accepts
 * and deals connections out in turn), forwarding to @upstream_port; returns
 * the path of its socket (in @directory). It runs until the process exits. */
char *
bench_relay_start (const char *directory,
                   guint16     upstream_port,
                   guint       n_threads)
{
  Relay *relay = g_new0 (Relay, 1);
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  struct epoll_event listening = { .events = EPOLLIN, .data.ptr = NULL };
  g_autofree char *name = g_strdup_printf ("relay-%u.sock", n_threads);
  char *path = g_build_filename (directory, name, NULL);

  relay->upstream_port = upstream_port;
  relay->forwarded_head = g_strdup_printf ("GET /data HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                                           "Authorization: Bearer bench\r\nAccept: */*\r\n\r\n",
                                           upstream_port);
  relay->forwarded_length = strlen (relay->forwarded_head);
  relay->n_threads = CLAMP (n_threads, 1, MAX_RELAY_THREADS);
  for (guint i = 0; i < relay->n_threads; i++)
    {
      relay->threads[i].relay = relay;
      relay->threads[i].epoll_fd = epoll_create1 (EPOLL_CLOEXEC);
      if (relay->threads[i].epoll_fd < 0)
        g_error ("relay: %s", g_strerror (errno));
    }
  relay->listener = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_strlcpy (address.sun_path, path, sizeof address.sun_path);
  g_unlink (path);
  if (relay->listener < 0 ||
      bind (relay->listener, (struct sockaddr *) &address, sizeof address) < 0 ||
      listen (relay->listener, 128) < 0 ||
      epoll_ctl (relay->threads[0].epoll_fd, EPOLL_CTL_ADD, relay->listener, &listening) < 0)
    g_error ("relay: %s", g_strerror (errno));

  for (guint i = 0; i < relay->n_threads; i++)
    g_thread_unref (g_thread_new ("bench-relay", relay_run, &relay->threads[i]));
  return path;
}
