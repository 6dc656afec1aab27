/* fuzz-gateway.c — raw guest bytes against a live SandboxGateway
 *
 * One gateway lives for the whole run, served by its own gateway thread, with
 * a policy that allows a stub libsoup upstream on 127.0.0.1 (with an injected
 * credential) and a dead loopback port. Each input is written as raw bytes to
 * the gateway's Unix socket, the write side is shut down, and the response is
 * read to EOF. In the input, "@HOST@" becomes the upstream's host:port,
 * "@DEAD@" the dead port's and "@STRM@" the upstream's second port, whose
 * rule streams its answers (within 64 KiB and a 500 ms idle timeout, so
 * /big is cut), so seeds can name the allowed origins.
 *
 * What counts as a finding, besides ASan/UBSan reports and GLib criticals or
 * warnings (fatal here):
 * - the gateway does not finish with a connection in time (a hang);
 * - a response that does not start with "HTTP/1.", that carries the
 *   injected credential back to the guest, or whose Content-Type holds a
 *   control byte (the stub upstream sends one on /ctl-type);
 * - any answer to an input in which no request head ends (no empty line: LF
 *   LF or LF CR LF): the guest half-closes after it, and libsoup 3.2 alone
 *   would take a head cut short by the end of the stream for a whole one;
 * - anything reaching the upstream with a target that holds a control byte or
 *   a space, without exactly one injected credential, or with a header the
 *   gateway must not forward;
 * - every 32 inputs, a well-formed request no longer gets its 200 (the
 *   gateway wedged or lost its policy).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <libsoup/soup.h>

#include "sandbox-gateway.h"
#include "sandbox-network-policy.h"
#include "sandbox-error.h"

#define SECRET "Bearer fuzz-credential-5d1c93e0b7"
#define MIB (1024 * 1024)
/* A connection the gateway has not finished within this is a hang. */
#define CONNECTION_DEADLINE_MS 8000

static struct
{
  GMainContext *upstream_context;
  GMainLoop *upstream_loop;
  SoupServer *upstream;
  guint16 port;
  int dead_socket;
  guint16 dead_port;
  guint16 stream_port;
  SandboxGateway *gateway;
  char *socket_path;
  char *host;
  char *dead_host;
  char *stream_host;
  guint64 iterations;
} fuzz;

/* The stub upstream */

static void
check_forwarded_request (SoupServerMessage *msg)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  SoupMessageHeadersIter iter;
  const char *name, *value;
  guint credentials = 0;
  GUri *uri = soup_server_message_get_uri (msg);
  const char *path = g_uri_get_path (uri);
  const char *query = g_uri_get_query (uri);

  for (const guchar *p = (const guchar *) path; *p != '\0'; p++)
    FUZZ_CHECK (*p > 0x20 && *p < 0x7f);
  for (const guchar *p = (const guchar *) (query != NULL ? query : ""); *p != '\0'; p++)
    FUZZ_CHECK (*p > 0x20 && *p < 0x7f);

  soup_message_headers_iter_init (&iter, headers);
  while (soup_message_headers_iter_next (&iter, &name, &value))
    {
      if (g_ascii_strcasecmp (name, "Authorization") == 0)
        {
          FUZZ_CHECK (g_str_equal (value, SECRET));
          credentials++;
          continue;
        }
      if (g_ascii_strcasecmp (name, "Host") == 0 ||
          g_ascii_strcasecmp (name, "Accept") == 0 ||
          g_ascii_strcasecmp (name, "Content-Type") == 0 ||
          g_ascii_strcasecmp (name, "Content-Length") == 0)
        continue;
      /* Framing the gateway (libcurl) chooses when it streams a body. */
      if (g_ascii_strcasecmp (name, "Transfer-Encoding") == 0 && g_str_equal (value, "chunked"))
        continue;
      g_printerr ("the gateway forwarded a header it must not: %s\n", name);
      abort ();
    }
  FUZZ_CHECK (credentials == 1);
}

static void
serve (SoupServer        *server,
       SoupServerMessage *msg,
       const char        *path,
       GHashTable        *query,
       gpointer           data)
{
  check_forwarded_request (msg);

  if (g_str_equal (path, "/big"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "application/octet-stream", SOUP_MEMORY_TAKE,
                                        g_malloc0 (MIB + 1), MIB + 1);
    }
  else if (g_str_equal (path, "/redirect"))
    {
      soup_server_message_set_redirect (msg, 302, "http://127.0.0.1:1/elsewhere");
    }
  else if (g_str_equal (path, "/status"))
    {
      soup_server_message_set_status (msg, 418, NULL);
    }
  else if (g_str_equal (path, "/untyped") || g_str_equal (path, "/ctl-type") ||
           g_str_equal (path, "/empty-type") || g_str_equal (path, "/odd-type"))
    {
      /* Answers without a usable Content-Type, which libsoup's
       * set_response() would not take: the body goes in by hand. */
      SoupMessageHeaders *headers = soup_server_message_get_response_headers (msg);

      soup_server_message_set_status (msg, 200, NULL);
      if (g_str_equal (path, "/ctl-type"))
        soup_message_headers_replace (headers, "Content-Type", "text/plain\001; x=\177");
      else if (g_str_equal (path, "/empty-type"))
        soup_message_headers_replace (headers, "Content-Type", "");
      else if (g_str_equal (path, "/odd-type"))
        soup_message_headers_replace (headers, "Content-Type", "  ;;; charset=\"\\\"\" ");
      soup_message_body_append (soup_server_message_get_response_body (msg), SOUP_MEMORY_STATIC,
                                "untyped", 7);
    }
  else
    {
      /* Never echo the path or headers: the credential check on responses
       * relies on the upstream not reflecting what the guest sent. */
      g_autofree char *body =
        g_strdup_printf ("%s %" G_GSIZE_FORMAT, soup_server_message_get_method (msg),
                         (gsize) soup_server_message_get_request_body (msg)->length);

      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_COPY, body, strlen (body));
    }
}

static gpointer
run_upstream (gpointer data)
{
  g_main_context_push_thread_default (fuzz.upstream_context);
  g_main_loop_run (fuzz.upstream_loop);   /* for the life of the process */
  return NULL;
}

static void
start_upstream (void)
{
  g_autoptr(GError) error = NULL;
  GSList *uris;

  fuzz.upstream_context = g_main_context_new ();
  fuzz.upstream_loop = g_main_loop_new (fuzz.upstream_context, FALSE);
  g_main_context_push_thread_default (fuzz.upstream_context);
  fuzz.upstream = soup_server_new ("raw-paths", TRUE, NULL);
  soup_server_add_handler (fuzz.upstream, NULL, serve, NULL, NULL);
  if (!soup_server_listen_local (fuzz.upstream, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    g_error ("upstream: %s", error->message);
  /* The same upstream on a second port, for the streaming rule. */
  if (!soup_server_listen_local (fuzz.upstream, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    g_error ("upstream: %s", error->message);
  uris = soup_server_get_uris (fuzz.upstream);
  FUZZ_CHECK (g_slist_length (uris) == 2);
  fuzz.port = g_uri_get_port (uris->data);
  fuzz.stream_port = g_uri_get_port (uris->next->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  g_main_context_pop_thread_default (fuzz.upstream_context);

  g_thread_unref (g_thread_new ("fuzz-upstream", run_upstream, NULL));
}

/* A loopback port that refuses connections: bound, never listening, held. */
static void
reserve_dead_port (void)
{
  struct sockaddr_in address = { .sin_family = AF_INET };
  socklen_t length = sizeof address;

  address.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  fuzz.dead_socket = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  FUZZ_CHECK (fuzz.dead_socket >= 0);
  FUZZ_CHECK (bind (fuzz.dead_socket, (struct sockaddr *) &address, sizeof address) == 0);
  FUZZ_CHECK (getsockname (fuzz.dead_socket, (struct sockaddr *) &address, &length) == 0);
  fuzz.dead_port = ntohs (address.sin_port);
}

/* The gateway */

static void
on_audit (SandboxGateway      *gateway,
          SandboxGatewayEvent *event,
          gpointer             data)
{
  FUZZ_CHECK (sandbox_gateway_event_get_method (event) != NULL);
  FUZZ_CHECK (sandbox_gateway_event_get_duration_us (event) >= 0);
}

static void
on_upstream_error (SandboxGateway *gateway,
                   GError         *cause,
                   gpointer        data)
{
  FUZZ_CHECK (cause != NULL && cause->message != NULL);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autofree char *json = NULL;

  fuzz_common_init ();
  start_upstream ();
  reserve_dead_port ();

  fuzz.host = g_strdup_printf ("127.0.0.1:%u", fuzz.port);
  fuzz.dead_host = g_strdup_printf ("127.0.0.1:%u", fuzz.dead_port);
  fuzz.stream_host = g_strdup_printf ("127.0.0.1:%u", fuzz.stream_port);
  json = g_strdup_printf ("{\"allow\": ["
                          "{\"origin\": \"http://%s\", \"headers\": {\"Authorization\": \"" SECRET "\"}},"
                          "{\"origin\": \"http://%s\", \"headers\": {\"Authorization\": \"" SECRET "\"}},"
                          "{\"origin\": \"http://%s\", \"headers\": {\"Authorization\": \"" SECRET "\"},"
                          " \"stream\": {\"maxBytes\": 65536, \"idleTimeoutMs\": 500}}"
                          "]}", fuzz.host, fuzz.dead_host, fuzz.stream_host);
  policy = sandbox_network_policy_new_from_json (json, &error);
  if (policy == NULL)
    g_error ("policy: %s", error->message);

  /* Short limits keep slow inputs cheap; they stay far below the deadline
   * this harness allows a connection. */
  fuzz.gateway = sandbox_gateway_new_full (policy, 2000, 1000, &error);
  if (fuzz.gateway == NULL)
    g_error ("gateway: %s", error->message);
  g_signal_connect (fuzz.gateway, "audit", G_CALLBACK (on_audit), NULL);
  g_signal_connect (fuzz.gateway, "upstream-error", G_CALLBACK (on_upstream_error), NULL);
  fuzz.socket_path = g_strdup (sandbox_gateway_get_socket_path (fuzz.gateway));

  return 0;
}

/* One guest connection */

static char *
expand (const uint8_t *data,
        size_t         size,
        gsize         *length)
{
  GString *out = g_string_sized_new (size + 32);

  for (size_t i = 0; i < size; i++)
    {
      if (data[i] == '@' && size - i >= 6 && memcmp (data + i, "@HOST@", 6) == 0)
        {
          g_string_append (out, fuzz.host);
          i += 5;
        }
      else if (data[i] == '@' && size - i >= 6 && memcmp (data + i, "@DEAD@", 6) == 0)
        {
          g_string_append (out, fuzz.dead_host);
          i += 5;
        }
      else if (data[i] == '@' && size - i >= 6 && memcmp (data + i, "@STRM@", 6) == 0)
        {
          g_string_append (out, fuzz.stream_host);
          i += 5;
        }
      else
        g_string_append_c (out, (char) data[i]);
    }

  *length = out->len;
  return g_string_free (out, FALSE);
}

/* Runs the gateway's signal emissions queued on this thread's context. */
static void
drain_main_context (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* Whether @response holds one or more whole responses and nothing more: each
 * gateway answer has a Content-Length (a HEAD answer's body may be absent). */
static gboolean
responses_complete (GByteArray *response)
{
  const char *data = (const char *) response->data;
  gsize pos = 0;

  if (response->len == 0)
    return FALSE;

  while (pos < response->len)
    {
      const char *head_end = g_strstr_len (data + pos, response->len - pos, "\r\n\r\n");
      g_autofree char *head = NULL;
      const char *length_header;
      guint64 length = 0;
      gsize body_start;

      if (head_end == NULL)
        return FALSE;
      body_start = head_end + 4 - data;
      head = g_ascii_strdown (data + pos, body_start - pos);
      length_header = strstr (head, "\r\ncontent-length:");
      if (length_header != NULL)
        length = g_ascii_strtoull (length_header + strlen ("\r\ncontent-length:"), NULL, 10);

      if (body_start == response->len)
        return TRUE;   /* a HEAD answer, or a body yet to come: quiet decides */
      if (response->len - body_start < length)
        return FALSE;
      pos = body_start + length;
    }

  return TRUE;
}

/* Sends @request, half-closes, and returns what the gateway wrote until it
 * closed the connection or, its answers complete, went quiet for QUIET_MS.
 * (libsoup keeps a half-closed keep-alive connection until the gateway's
 * header deadline, which would cost every input that deadline; closing
 * early is something guests do too.) */
#define QUIET_MS 25

static GByteArray *
exchange (const char *request,
          gsize       length)
{
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  GByteArray *response = g_byte_array_new ();
  gint64 deadline = g_get_monotonic_time () + CONNECTION_DEADLINE_MS * 1000;
  gint64 last_activity = g_get_monotonic_time ();
  gsize sent = 0;
  gboolean write_closed = FALSE;
  int fd;

  FUZZ_CHECK (strlen (fuzz.socket_path) < sizeof address.sun_path);
  strcpy (address.sun_path, fuzz.socket_path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  FUZZ_CHECK (fd >= 0);
  FUZZ_CHECK (connect (fd, (struct sockaddr *) &address, sizeof address) == 0);

  for (;;)
    {
      struct pollfd pfd = { .fd = fd, .events = POLLIN };
      gint64 now = g_get_monotonic_time ();
      guint8 buffer[16384];
      ssize_t n;

      if (!write_closed && sent == length)
        {
          shutdown (fd, SHUT_WR);
          write_closed = TRUE;
        }
      if (!write_closed)
        pfd.events |= POLLOUT;

      if (write_closed && now - last_activity >= QUIET_MS * 1000 && responses_complete (response))
        break;
      if (now >= deadline)
        {
          g_printerr ("the gateway did not finish with a connection in %d ms\n",
                      CONNECTION_DEADLINE_MS);
          abort ();
        }
      if (poll (&pfd, 1, 5) < 0 && errno != EINTR)
        abort ();
      drain_main_context ();

      if (pfd.revents & POLLOUT)
        {
          n = send (fd, request + sent, length - sent, MSG_NOSIGNAL);
          if (n > 0)
            sent += n;
          else if (n < 0 && errno != EAGAIN && errno != EINTR)
            sent = length;   /* the gateway stopped reading: fine */
          last_activity = g_get_monotonic_time ();
        }

      if (pfd.revents & (POLLIN | POLLHUP | POLLERR))
        {
          n = recv (fd, buffer, sizeof buffer, 0);
          if (n > 0)
            {
              g_byte_array_append (response, buffer, n);
              last_activity = g_get_monotonic_time ();
            }
          else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            break;
        }
    }

  close (fd);
  return response;
}

/* Whether a request head can end in @request: libsoup ends one at an empty
 * line, LF LF or LF CR LF. (memmem, not g_strstr_len(): inputs hold NULs.) */
static gboolean
has_head_end (const char *request,
              gsize       length)
{
  return memmem (request, length, "\n\n", 2) != NULL ||
         memmem (request, length, "\n\r\n", 3) != NULL;
}

/* No relayed Content-Type holds a control byte (heads end at the first CRLF
 * CRLF; a body never holds one from the stub upstream's answers here). */
static void
check_content_types (GByteArray *response)
{
  const char *data = (const char *) response->data;
  const char *end = data + response->len;
  const char *p = data;

  while ((p = memmem (p, end - p, "\r\nContent-Type:", strlen ("\r\nContent-Type:"))) != NULL)
    {
      p += strlen ("\r\nContent-Type:");
      for (; p < end && *p != '\r'; p++)
        if ((guchar) *p == 0x7f || ((guchar) *p < 0x20 && *p != '\t'))
          {
            g_printerr ("the gateway relayed a Content-Type with a control byte\n");
            abort ();
          }
    }
}

/* At its connection cap the gateway refuses a new connection before it
 * reads a byte of it (503, SANDBOX_BUSY; see accept_connection() in
 * gateway/sandbox-gateway-server.c): an answer to the connection, not to
 * its request, whether or not that request's head ever ends. The
 * harness's closed connections reach the cap when the gateway has not yet
 * seen them close (a main-loop iteration or so each); check_health()
 * still requires the gateway to serve again afterwards. */
static gboolean
is_refused_at_cap (GByteArray *response)
{
  static const char status[] = "HTTP/1.1 503 ";
  static const char busy[] = "\r\nSandbox-Error: SANDBOX_BUSY\r\n";

  return response->len >= strlen (status) &&
         memcmp (response->data, status, strlen (status)) == 0 &&
         memmem (response->data, response->len, busy, strlen (busy)) != NULL;
}

static void
check_response (const char *request,
                gsize       length,
                GByteArray *response)
{
  if (response->len == 0)
    return;

  if (!has_head_end (request, length) && !is_refused_at_cap (response))
    {
      g_printerr ("the gateway answered a request whose head never ended: %.*s\n",
                  (int) MIN (response->len, 200), (const char *) response->data);
      abort ();
    }

  FUZZ_CHECK (response->len >= 7 && memcmp (response->data, "HTTP/1.", 7) == 0);
  FUZZ_CHECK (g_strstr_len ((const char *) response->data, response->len,
                            "fuzz-credential-5d1c93e0b7") == NULL);
  check_content_types (response);
}

/* A well-formed allowed request must still get the upstream's 200: once
 * the gateway has seen the harness's connections close, if it was at its
 * cap (within two seconds). */
static void
check_health (void)
{
  g_autofree char *request =
    g_strdup_printf ("GET /health HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", fuzz.host);
  g_autoptr(GByteArray) response = exchange (request, strlen (request));

  for (guint attempt = 0; attempt < 40 && is_refused_at_cap (response); attempt++)
    {
      gint64 until = g_get_monotonic_time () + 50 * 1000;

      while (g_get_monotonic_time () < until)
        if (!g_main_context_iteration (NULL, FALSE))
          g_usleep (1000);
      g_byte_array_unref (response);
      response = exchange (request, strlen (request));
    }

  if (response->len < 12 || memcmp (response->data + 9, "200", 3) != 0)
    {
      g_printerr ("the gateway stopped serving allowed requests: %.*s\n",
                  (int) MIN (response->len, 200), (const char *) response->data);
      abort ();
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  gsize length;
  g_autofree char *request = expand (data, size, &length);
  g_autoptr(GByteArray) response = NULL;

  response = exchange (request, length);
  check_response (request, length, response);
  drain_main_context ();

  if (++fuzz.iterations % 32 == 0)
    check_health ();

  return 0;
}
