/* sandbox-test-upstream.c — a loopback HTTP(S) server for the gateway's tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>
#include <sys/socket.h>

#include <glib/gstdio.h>

#include "sandbox-test-upstream.h"

#define BULK_CHUNK (64 * 1024)
#define MIB (1024 * 1024)

struct _SandboxTestUpstream
{
  SandboxTestUpstreamFlags flags;
  SoupServerCallback handler;
  gpointer handler_data;

  GThread *thread;
  GMainContext *context;
  GMainLoop *loop;
  SoupServer *server;
  guint16 port;
  char *origin;
  char *certificate_directory;   /* TLS only: the CA and the server's key pair */
  char *ca_file;

  GMutex lock;
  GCond cond;
  gboolean ready;
  GError *start_error;
  gboolean stopping;             /* upstream thread only: its server is going */
  GPtrArray *recorded;           /* SandboxTestRequest */
  GPtrArray *held;               /* SoupServerMessage, kept open by a handler */
  GPtrArray *held_sockets;       /* GSocket, of the held messages */
  gint64 bulk_written;
  guint64 huge_bytes_sent;        /* upstream thread only */
};

static void
request_free (SandboxTestRequest *request)
{
  g_free (request->method);
  g_free (request->path);
  g_free (request->headers);
  g_free (request);
}

static SandboxTestRequest *
record_request (SandboxTestUpstream *upstream,
                SoupServerMessage   *msg)
{
  SandboxTestRequest *request = g_new0 (SandboxTestRequest, 1);
  GUri *uri = soup_server_message_get_uri (msg);
  GString *headers = g_string_new (NULL);
  SoupMessageHeadersIter iter;
  const char *name, *value;

  soup_message_headers_iter_init (&iter, soup_server_message_get_request_headers (msg));
  while (soup_message_headers_iter_next (&iter, &name, &value))
    g_string_append_printf (headers, "%s: %s\n", name, value);

  request->method = g_strdup (soup_server_message_get_method (msg));
  request->path = g_uri_get_query (uri) != NULL
    ? g_strconcat (g_uri_get_path (uri), "?", g_uri_get_query (uri), NULL)
    : g_strdup (g_uri_get_path (uri));
  request->headers = g_string_free (headers, FALSE);
  request->body_length = soup_server_message_get_request_body (msg)->length;

  g_mutex_lock (&upstream->lock);
  g_ptr_array_add (upstream->recorded, request);
  g_cond_broadcast (&upstream->cond);
  g_mutex_unlock (&upstream->lock);
  return request;
}

static gboolean
unpause_later (gpointer data)
{
  SoupServerMessage *msg = data;

  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, "slow", 4);
  soup_server_message_unpause (msg);
  return G_SOURCE_REMOVE;
}

#define HUGE_CHUNK (64 * 1024)
#define HUGE_TOTAL (G_GUINT64_CONSTANT (4) * 1024 * 1024 * 1024)

static void
on_huge_chunk_written (SoupServerMessage *msg,
                       gpointer           data)
{
  SandboxTestUpstream *upstream = data;
  SoupMessageBody *body = soup_server_message_get_response_body (msg);
  static char chunk[HUGE_CHUNK];

  if (upstream->huge_bytes_sent >= HUGE_TOTAL)
    {
      soup_message_body_complete (body);
      return;
    }

  upstream->huge_bytes_sent += sizeof chunk;
  soup_message_body_append (body, SOUP_MEMORY_STATIC, chunk, sizeof chunk);
}

static void
serve_huge (SandboxTestUpstream *upstream,
            SoupServerMessage *msg)
{
  SoupMessageBody *body = soup_server_message_get_response_body (msg);

  soup_server_message_set_status (msg, 200, NULL);
  soup_message_headers_set_encoding (soup_server_message_get_response_headers (msg),
                                     SOUP_ENCODING_CHUNKED);
  soup_message_body_set_accumulate (body, FALSE);
  g_signal_connect (msg, "wrote-chunk", G_CALLBACK (on_huge_chunk_written), upstream);
  on_huge_chunk_written (msg, upstream);
}

/* A body of ?bytes=N bytes (default "hello") with no Content-Type at all, or
 * with one holding a control byte; with ?slow, sent after a pause. (Plain
 * http.server and presigned object-store GETs send none.) libsoup's own
 * soup_server_message_set_response() insists on a type, so the body goes
 * in by hand. */
static void
respond_untyped (SoupServerMessage *msg)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (msg);
  const char *path = g_uri_get_path (soup_server_message_get_uri (msg));
  const char *bytes = g_object_get_data (G_OBJECT (msg), "untyped-bytes");
  SoupMessageBody *body = soup_server_message_get_response_body (msg);

  soup_server_message_set_status (msg, 200, NULL);
  soup_message_headers_remove (headers, "Content-Type");
  if (g_str_equal (path, "/ctl-content-type"))
    soup_message_headers_replace (headers, "Content-Type", "text/plain\001evil");
  else if (g_str_equal (path, "/odd-content-type"))
    soup_message_headers_replace (headers, "Content-Type", "textplain; x=\"y\"");

  if (bytes != NULL)
    {
      gsize length = g_ascii_strtoull (bytes, NULL, 10);
      guint8 *data = g_malloc (length);

      memset (data, 'u', length);
      soup_message_body_append (body, SOUP_MEMORY_TAKE, data, length);
    }
  else
    {
      soup_message_body_append (body, SOUP_MEMORY_STATIC, "hello", 5);
    }
}

static gboolean
respond_untyped_later (gpointer data)
{
  respond_untyped (data);
  soup_server_message_unpause (data);
  return G_SOURCE_REMOVE;
}

static void
serve_untyped (SandboxTestUpstream *upstream,
               SoupServerMessage *msg,
               GHashTable        *query)
{
  const char *bytes = query != NULL ? g_hash_table_lookup (query, "bytes") : NULL;

  if (bytes != NULL)
    g_object_set_data_full (G_OBJECT (msg), "untyped-bytes", g_strdup (bytes), g_free);

  if (query != NULL && g_hash_table_contains (query, "slow"))
    {
      GSource *source = g_timeout_source_new (200);

      soup_server_message_pause (msg);
      g_source_set_callback (source, respond_untyped_later, g_object_ref (msg), g_object_unref);
      g_source_attach (source, upstream->context);
      g_source_unref (source);
      return;
    }

  respond_untyped (msg);
}

/* The standard answers, by path: what a test without a handler of its own
 * gets (see sandbox_test_upstream_start()). */
static void
serve_standard (SoupServer        *server,
                SoupServerMessage *msg,
                const char        *path,
                GHashTable        *query,
                gpointer           data)
{
  SandboxTestUpstream *upstream = data;
  SandboxTestRequest *recorded = sandbox_test_request_of (msg);
  SoupMessageHeaders *response_headers = soup_server_message_get_response_headers (msg);

  /* Headers the gateway must not relay. */
  soup_message_headers_append (response_headers, "Set-Cookie", "upstream=1");
  soup_message_headers_append (response_headers, "X-Upstream-Secret", "do-not-relay");

  if (g_str_equal (path, "/reflect"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "text/x-reflect", SOUP_MEMORY_COPY,
                                        recorded->headers, strlen (recorded->headers));
    }
  else if (g_str_equal (path, "/slow"))
    {
      GSource *source = g_timeout_source_new (1500);

      soup_server_message_pause (msg);
      g_source_set_callback (source, unpause_later, g_object_ref (msg), g_object_unref);
      g_source_attach (source, upstream->context);
      g_source_unref (source);
    }
  else if (g_str_equal (path, "/never"))
    {
      soup_server_message_pause (msg);
      sandbox_test_upstream_hold (upstream, msg);
    }
  else if (g_str_equal (path, "/redirect"))
    {
      g_autofree char *location = g_strdup_printf ("http://127.0.0.1:%u/echo", upstream->port);

      soup_server_message_set_redirect (msg, 302, location);
    }
  else if (g_str_equal (path, "/big"))
    {
      gsize length = MIB + 1;

      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "application/octet-stream", SOUP_MEMORY_TAKE,
                                        g_malloc0 (length), length);
    }
  else if (g_str_equal (path, "/huge"))
    {
      serve_huge (upstream, msg);
    }
  else if (g_str_equal (path, "/events"))
    {
      sandbox_test_upstream_answer_events (upstream, msg, sandbox_test_query_uint (query, "n", 3),
                                           sandbox_test_query_uint (query, "every", 10));
    }
  else if (g_str_equal (path, "/bulk"))
    {
      sandbox_test_upstream_answer_bulk (upstream, msg,
                                         sandbox_test_query_uint (query, "bytes", MIB));
    }
  else if (g_str_equal (path, "/no-content-type") || g_str_equal (path, "/ctl-content-type") ||
           g_str_equal (path, "/odd-content-type"))
    {
      serve_untyped (upstream, msg, query);
    }
  else
    {
      sandbox_test_upstream_answer_echo (msg, recorded);
    }
}

/* Records, then hands over to the test's handler (the standard answers
 * without one). */
static void
serve (SoupServer        *server,
       SoupServerMessage *msg,
       const char        *path,
       GHashTable        *query,
       gpointer           data)
{
  SandboxTestUpstream *upstream = data;
  SandboxTestRequest *request = record_request (upstream, msg);

  /* The array owns it; the message only points at it while it lives. */
  g_object_set_data (G_OBJECT (msg), "sandbox-test-request", request);
  g_object_set_data (G_OBJECT (msg), "sandbox-test-upstream", upstream);
  if (upstream->handler != NULL)
    upstream->handler (server, msg, path, query, upstream->handler_data);
  else
    serve_standard (server, msg, path, query, upstream);
}

/* Runs @argv in @directory; fails with its stderr unless it exits 0. */
static gboolean
run_openssl (const char  *directory,
             const char  *args,
             GError     **error)
{
  g_autofree char *command = g_strdup_printf ("openssl %s", args);
  g_autofree char *err = NULL;
  g_auto(GStrv) argv = NULL;
  int status = 0;

  if (!g_shell_parse_argv (command, NULL, &argv, error) ||
      !g_spawn_sync (directory, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                     NULL, NULL, NULL, &err, &status, error))
    return FALSE;
  if (!g_spawn_check_wait_status (status, error))
    {
      g_prefix_error (error, "%s: %s: ", command, err);
      return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_test_make_certificate:
 * @directory: an existing directory of the test's own
 * @error: return location for a #GError
 *
 * Makes a throw-away CA (`ca.pem`, `ca.key`) and a certificate it signed for
 * `localhost` and `127.0.0.1` (`server.pem`, `server.key`) in @directory,
 * with the openssl command, as tests/escape/test-escape-runtime.c does: a
 * CA of the test's own, so nothing the host trusts vouches for it.
 *
 * Returns: %TRUE, or %FALSE with @error set (openssl is missing or failed)
 */
gboolean
sandbox_test_make_certificate (const char  *directory,
                               GError     **error)
{
  g_autofree char *ext = g_build_filename (directory, "server.ext", NULL);

  return run_openssl (directory, "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                                 "-nodes -keyout ca.key -out ca.pem -days 2 "
                                 "-subj /CN=libsandbox-test-CA "
                                 "-addext basicConstraints=critical,CA:TRUE "
                                 "-addext keyUsage=critical,keyCertSign", error) &&
         run_openssl (directory, "req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                                 "-keyout server.key -out server.csr -subj /CN=localhost",
                      error) &&
         g_file_set_contents (ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\n", -1, error) &&
         run_openssl (directory, "x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
                                 "-CAcreateserial -days 2 -extfile server.ext -out server.pem",
                      error);
}

static SoupServer *
server_new (SandboxTestUpstream  *upstream,
            GError              **error)
{
  g_autoptr(GTlsCertificate) certificate = NULL;
  g_autofree char *cert = NULL;
  g_autofree char *key = NULL;

  if (!(upstream->flags & SANDBOX_TEST_UPSTREAM_TLS))
    return soup_server_new ("raw-paths", (upstream->flags & SANDBOX_TEST_UPSTREAM_RAW_PATHS) != 0,
                            NULL);

  upstream->certificate_directory = g_dir_make_tmp ("sandbox-test-tls-XXXXXX", error);
  if (upstream->certificate_directory == NULL ||
      !sandbox_test_make_certificate (upstream->certificate_directory, error))
    return NULL;
  upstream->ca_file = g_build_filename (upstream->certificate_directory, "ca.pem", NULL);
  cert = g_build_filename (upstream->certificate_directory, "server.pem", NULL);
  key = g_build_filename (upstream->certificate_directory, "server.key", NULL);
  certificate = g_tls_certificate_new_from_files (cert, key, error);
  if (certificate == NULL)
    return NULL;
  return soup_server_new ("raw-paths", (upstream->flags & SANDBOX_TEST_UPSTREAM_RAW_PATHS) != 0,
                          "tls-certificate", certificate, NULL);
}

static gboolean
listen_here (SandboxTestUpstream  *upstream,
             GError              **error)
{
  gboolean ipv6 = (upstream->flags & SANDBOX_TEST_UPSTREAM_IPV6) != 0;
  SoupServerListenOptions options = ipv6 ? SOUP_SERVER_LISTEN_IPV6_ONLY : SOUP_SERVER_LISTEN_IPV4_ONLY;
  gboolean tls = (upstream->flags & SANDBOX_TEST_UPSTREAM_TLS) != 0;
  GSList *uris;

  upstream->server = server_new (upstream, error);
  if (upstream->server == NULL)
    return FALSE;
  soup_server_add_handler (upstream->server, NULL, serve, upstream, NULL);
  if (tls)
    options |= SOUP_SERVER_LISTEN_HTTPS;
  if (!soup_server_listen_local (upstream->server, 0, options, error))
    return FALSE;

  uris = soup_server_get_uris (upstream->server);
  upstream->port = g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);
  upstream->origin = g_strdup_printf ("%s://%s:%u", tls ? "https" : "http",
                                      ipv6 ? "[::1]" : "127.0.0.1", upstream->port);
  return TRUE;
}

static gpointer
run_upstream (gpointer data)
{
  SandboxTestUpstream *upstream = data;
  g_autoptr(GError) error = NULL;
  gboolean listening;

  g_main_context_push_thread_default (upstream->context);
  listening = listen_here (upstream, &error);

  g_mutex_lock (&upstream->lock);
  upstream->ready = TRUE;
  upstream->start_error = g_steal_pointer (&error);
  g_cond_broadcast (&upstream->cond);
  g_mutex_unlock (&upstream->lock);

  if (listening)
    g_main_loop_run (upstream->loop);

  /* soup_server_disconnect() lets go of held messages without a
   * "finished": senders must see `stopping` first, or they would unpause a
   * message that is gone (a CRITICAL). */
  upstream->stopping = TRUE;
  g_ptr_array_set_size (upstream->held, 0);
  if (upstream->server != NULL)
    soup_server_disconnect (upstream->server);
  g_clear_object (&upstream->server);
  while (g_main_context_iteration (upstream->context, FALSE))
    ;
  g_main_context_pop_thread_default (upstream->context);
  return NULL;
}

/**
 * sandbox_test_upstream_start:
 * @flags: TLS, raw paths
 * @handler: (nullable): answers each request, in the upstream's thread;
 *   %NULL for the standard answers: /reflect (the request's headers as the
 *   body), /slow (after 1.5 s), /never (held, never answered), /redirect
 *   (302 to /echo), /big (1 MiB + 1), /huge (4 GiB, chunked), /events and
 *   /bulk (sandbox_test_upstream_answer_events(), _bulk()), answers without
 *   a usable Content-Type (/no-content-type, /ctl-content-type,
 *   /odd-content-type), and the echo for any other path; each with a
 *   Set-Cookie and an X-Upstream-Secret the gateway must not relay
 * @data: for @handler
 *
 * Starts a server on an unused port of 127.0.0.1 and returns once it
 * listens. With %SANDBOX_TEST_UPSTREAM_TLS it serves HTTPS with a fresh
 * certificate; when openssl cannot make one, the test is skipped and
 * %NULL returned.
 *
 * Returns: (transfer full) (nullable): the upstream; stop it with
 *   sandbox_test_upstream_stop()
 */
SandboxTestUpstream *
sandbox_test_upstream_start (SandboxTestUpstreamFlags flags,
                             SoupServerCallback       handler,
                             gpointer                 data)
{
  SandboxTestUpstream *upstream = g_new0 (SandboxTestUpstream, 1);

  upstream->flags = flags;
  upstream->handler = handler;
  upstream->handler_data = data;
  g_mutex_init (&upstream->lock);
  g_cond_init (&upstream->cond);
  upstream->recorded = g_ptr_array_new_with_free_func ((GDestroyNotify) request_free);
  upstream->held = g_ptr_array_new_with_free_func (g_object_unref);
  upstream->held_sockets = g_ptr_array_new_with_free_func (g_object_unref);
  upstream->context = g_main_context_new ();
  upstream->loop = g_main_loop_new (upstream->context, FALSE);
  upstream->thread = g_thread_new ("test-upstream", run_upstream, upstream);

  g_mutex_lock (&upstream->lock);
  while (!upstream->ready)
    g_cond_wait (&upstream->cond, &upstream->lock);
  g_mutex_unlock (&upstream->lock);

  /* No openssl, or no TLS backend in GIO: nothing to test TLS with here. */
  if (upstream->start_error != NULL &&
      (upstream->start_error->domain == G_SPAWN_ERROR ||
       g_error_matches (upstream->start_error, G_TLS_ERROR, G_TLS_ERROR_UNAVAILABLE)))
    {
      g_autofree char *why = g_strdup_printf ("no test certificate: %s",
                                              upstream->start_error->message);

      g_test_skip (why);
      sandbox_test_upstream_stop (upstream);
      return NULL;
    }
  g_assert_no_error (upstream->start_error);
  return upstream;
}

static gboolean
quit_upstream (gpointer data)
{
  g_main_loop_quit (data);
  return G_SOURCE_REMOVE;
}

static void
remove_certificate_directory (const char *directory)
{
  g_autoptr(GDir) dir = g_dir_open (directory, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (directory, name, NULL);

      g_unlink (path);
    }
  g_rmdir (directory);
}

/**
 * sandbox_test_upstream_stop:
 * @upstream: (transfer full): an upstream
 *
 * Stops the server (held answers go first), joins its thread, removes the
 * test certificate, frees @upstream.
 */
void
sandbox_test_upstream_stop (SandboxTestUpstream *upstream)
{
  g_main_context_invoke (upstream->context, quit_upstream, upstream->loop);
  g_thread_join (upstream->thread);

  if (upstream->certificate_directory != NULL)
    remove_certificate_directory (upstream->certificate_directory);
  g_free (upstream->certificate_directory);
  g_free (upstream->ca_file);
  g_free (upstream->origin);
  g_clear_error (&upstream->start_error);
  g_main_loop_unref (upstream->loop);
  g_main_context_unref (upstream->context);
  g_ptr_array_unref (upstream->recorded);
  g_ptr_array_unref (upstream->held);
  g_ptr_array_unref (upstream->held_sockets);
  g_mutex_clear (&upstream->lock);
  g_cond_clear (&upstream->cond);
  g_free (upstream);
}

/** sandbox_test_upstream_get_port: Returns: the port it listens on, on 127.0.0.1 (::1 with %SANDBOX_TEST_UPSTREAM_IPV6) */
guint16
sandbox_test_upstream_get_port (SandboxTestUpstream *upstream)
{
  return upstream->port;
}

/**
 * sandbox_test_upstream_get_origin:
 *
 * Returns: "http://127.0.0.1:PORT", or "https://…" with TLS: what a
 *   policy's allow rule names
 */
const char *
sandbox_test_upstream_get_origin (SandboxTestUpstream *upstream)
{
  return upstream->origin;
}

/**
 * sandbox_test_upstream_get_ca_file:
 *
 * Returns: (nullable): the PEM file of the CA that signed a TLS upstream's
 *   certificate, %NULL without TLS; it goes with the upstream
 */
const char *
sandbox_test_upstream_get_ca_file (SandboxTestUpstream *upstream)
{
  return upstream->ca_file;
}

/** sandbox_test_upstream_get_context: Returns: (transfer none): the context its handlers run in */
GMainContext *
sandbox_test_upstream_get_context (SandboxTestUpstream *upstream)
{
  return upstream->context;
}

/**
 * sandbox_test_upstream_is_stopping:
 *
 * For callbacks in the upstream's thread only.
 *
 * Returns: whether the server is going, so no held message may be touched
 */
gboolean
sandbox_test_upstream_is_stopping (SandboxTestUpstream *upstream)
{
  return upstream->stopping;
}

/** sandbox_test_upstream_count: Returns: how many requests reached it so far */
guint
sandbox_test_upstream_count (SandboxTestUpstream *upstream)
{
  guint count;

  g_mutex_lock (&upstream->lock);
  count = upstream->recorded->len;
  g_mutex_unlock (&upstream->lock);
  return count;
}

/**
 * sandbox_test_upstream_wait_for:
 * @count: how many requests
 *
 * Waits up to 5 s for @count requests to have reached the upstream, and
 * fails the test unless they did.
 */
void
sandbox_test_upstream_wait_for (SandboxTestUpstream *upstream,
                                guint                count)
{
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;

  g_mutex_lock (&upstream->lock);
  while (upstream->recorded->len < count)
    if (!g_cond_wait_until (&upstream->cond, &upstream->lock, deadline))
      break;
  g_mutex_unlock (&upstream->lock);

  g_assert_cmpuint (sandbox_test_upstream_count (upstream), >=, count);
}

/**
 * sandbox_test_upstream_get:
 * @index: which request, from 0
 *
 * Returns: (transfer none): the @index-th request; it lives as long as the
 *   upstream (the array may grow meanwhile, the request never changes)
 */
SandboxTestRequest *
sandbox_test_upstream_get (SandboxTestUpstream *upstream,
                           guint                index)
{
  SandboxTestRequest *request;

  g_mutex_lock (&upstream->lock);
  g_assert_cmpuint (index, <, upstream->recorded->len);
  request = g_ptr_array_index (upstream->recorded, index);
  g_mutex_unlock (&upstream->lock);
  return request;
}

/**
 * sandbox_test_upstream_dup_last_header:
 * @name: a header name, lowercase or not
 *
 * Returns: (transfer full) (nullable): the value of @name in the latest
 *   request, %NULL when it had none or there was no request
 */
char *
sandbox_test_upstream_dup_last_header (SandboxTestUpstream *upstream,
                                       const char          *name)
{
  g_autofree char *prefix = g_strdup_printf ("%s: ", name);
  char *value = NULL;

  g_mutex_lock (&upstream->lock);
  if (upstream->recorded->len > 0)
    {
      SandboxTestRequest *last = g_ptr_array_index (upstream->recorded,
                                                    upstream->recorded->len - 1);
      g_auto(GStrv) lines = g_strsplit (last->headers, "\n", -1);

      for (guint i = 0; lines[i] != NULL && value == NULL; i++)
        if (g_ascii_strncasecmp (lines[i], prefix, strlen (prefix)) == 0)
          value = g_strdup (lines[i] + strlen (prefix));
    }
  g_mutex_unlock (&upstream->lock);
  return value;
}

/**
 * sandbox_test_upstream_assert_targets_clean:
 *
 * Fails the test if any target that reached the upstream carries a control
 * byte, a space, or the word "evil" (what hostile cases smuggle).
 */
void
sandbox_test_upstream_assert_targets_clean (SandboxTestUpstream *upstream)
{
  g_mutex_lock (&upstream->lock);
  for (guint i = 0; i < upstream->recorded->len; i++)
    {
      SandboxTestRequest *request = g_ptr_array_index (upstream->recorded, i);

      for (const guchar *p = (const guchar *) request->path; *p != '\0'; p++)
        g_assert_true (*p > 0x20 && *p < 0x7f);
      g_assert_null (strstr (request->path, "evil"));
    }
  g_mutex_unlock (&upstream->lock);
}

/**
 * sandbox_test_request_of:
 * @msg: a message the upstream is answering
 *
 * Returns: (transfer none): how @msg was recorded
 */
SandboxTestRequest *
sandbox_test_request_of (SoupServerMessage *msg)
{
  return g_object_get_data (G_OBJECT (msg), "sandbox-test-request");
}

/**
 * sandbox_test_upstream_of:
 * @msg: a message the upstream is answering
 *
 * Returns: (transfer none): the upstream answering @msg, for a handler
 *   that serves more than one upstream
 */
SandboxTestUpstream *
sandbox_test_upstream_of (SoupServerMessage *msg)
{
  return g_object_get_data (G_OBJECT (msg), "sandbox-test-upstream");
}

/**
 * sandbox_test_upstream_schedule:
 * @interval_ms: after how long, and how often while @func returns
 *   %G_SOURCE_CONTINUE
 *
 * Runs @func in the upstream's thread: how handlers answer later.
 */
void
sandbox_test_upstream_schedule (SandboxTestUpstream *upstream,
                                guint                interval_ms,
                                GSourceFunc          func,
                                gpointer             data,
                                GDestroyNotify       destroy)
{
  GSource *source = g_timeout_source_new (interval_ms);

  g_source_set_callback (source, func, data, destroy);
  g_source_attach (source, upstream->context);
  g_source_unref (source);
}

/**
 * sandbox_test_upstream_hold:
 * @msg: the message being answered, paused or mid-stream
 *
 * Keeps @msg open until the upstream stops, and its connection watched
 * for sandbox_test_upstream_count_held_closed(). For handlers.
 */
void
sandbox_test_upstream_hold (SandboxTestUpstream *upstream,
                            SoupServerMessage   *msg)
{
  g_mutex_lock (&upstream->lock);
  g_ptr_array_add (upstream->held, g_object_ref (msg));
  g_ptr_array_add (upstream->held_sockets, g_object_ref (soup_server_message_get_socket (msg)));
  g_mutex_unlock (&upstream->lock);
}

/**
 * sandbox_test_upstream_count_held_closed:
 *
 * How many held connections the client (the gateway's libcurl) has closed:
 * the upstream's side reads the end of the stream. libsoup reads nothing
 * while an answer is paused or waits for its next chunk, so peeking is safe.
 *
 * Returns: the number of held connections closed by the client
 */
guint
sandbox_test_upstream_count_held_closed (SandboxTestUpstream *upstream)
{
  guint closed = 0;

  g_mutex_lock (&upstream->lock);
  for (guint i = 0; i < upstream->held_sockets->len; i++)
    {
      int fd = g_socket_get_fd (g_ptr_array_index (upstream->held_sockets, i));
      char byte;

      if (recv (fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
        closed++;
    }
  g_mutex_unlock (&upstream->lock);
  return closed;
}

/**
 * sandbox_test_upstream_answer_echo:
 * @request: how @msg was recorded
 *
 * Answers 200 "METHOD PATH BODY-LENGTH" as text/x-echo.
 */
void
sandbox_test_upstream_answer_echo (SoupServerMessage  *msg,
                                   SandboxTestRequest *request)
{
  g_autofree char *body = g_strdup_printf ("%s %s %zu", request->method, request->path,
                                           request->body_length);

  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, "text/x-echo", SOUP_MEMORY_COPY, body, strlen (body));
}

/**
 * sandbox_test_query_uint:
 * @query: (nullable): a handler's query
 *
 * Returns: the number in @query's @name, or @fallback without one
 */
guint
sandbox_test_query_uint (GHashTable *query,
                         const char *name,
                         guint       fallback)
{
  const char *text = query != NULL ? g_hash_table_lookup (query, name) : NULL;

  return text != NULL ? (guint) g_ascii_strtoull (text, NULL, 10) : fallback;
}

/* Streamed answers ------------------------------------------------------------ */

/**
 * sandbox_test_upstream_start_chunked:
 * @content_type: the answer's Content-Type
 *
 * Begins a 200 answer with a chunked body that the handler (or its
 * scheduled callbacks) appends to piece by piece.
 */
void
sandbox_test_upstream_start_chunked (SoupServerMessage *msg,
                                     const char        *content_type)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (msg);

  soup_server_message_set_status (msg, 200, NULL);
  soup_message_headers_set_encoding (headers, SOUP_ENCODING_CHUNKED);
  soup_message_headers_replace (headers, "Content-Type", content_type);
}

/** sandbox_test_upstream_append: Sends @text as the next chunk. */
void
sandbox_test_upstream_append (SoupServerMessage *msg,
                              const char        *text)
{
  soup_message_body_append (soup_server_message_get_response_body (msg), SOUP_MEMORY_COPY,
                            text, strlen (text));
  soup_server_message_unpause (msg);
}

/** sandbox_test_upstream_complete: Ends a chunked answer with its last chunk. */
void
sandbox_test_upstream_complete (SoupServerMessage *msg)
{
  soup_message_body_complete (soup_server_message_get_response_body (msg));
  soup_server_message_unpause (msg);
}

static void
on_finished (SoupServerMessage *msg,
             gpointer           data)
{
  ((SandboxTestSender *) data)->finished = TRUE;
}

/**
 * sandbox_test_sender_new:
 *
 * Returns: (transfer full): a sender for @msg; free it with
 *   sandbox_test_sender_free(), usually as a scheduled callback's destroy
 */
SandboxTestSender *
sandbox_test_sender_new (SandboxTestUpstream *upstream,
                         SoupServerMessage   *msg)
{
  SandboxTestSender *sender = g_new0 (SandboxTestSender, 1);

  sender->upstream = upstream;
  sender->msg = g_object_ref (msg);
  sender->finished_id = g_signal_connect (msg, "finished", G_CALLBACK (on_finished), sender);
  return sender;
}

/**
 * sandbox_test_sender_is_done:
 *
 * Returns: whether a scheduled sender must stop: the gateway went away (a
 *   limit cut it) or the upstream is stopping. Either way the message can
 *   no longer be unpaused.
 */
gboolean
sandbox_test_sender_is_done (SandboxTestSender *sender)
{
  return sender->finished || sender->upstream->stopping;
}

void
sandbox_test_sender_free (gpointer data)
{
  SandboxTestSender *sender = data;

  if (g_signal_handler_is_connected (sender->msg, sender->finished_id))
    g_signal_handler_disconnect (sender->msg, sender->finished_id);
  g_object_unref (sender->msg);
  g_free (sender);
}

static gboolean
send_next_event (gpointer data)
{
  SandboxTestSender *sender = data;
  g_autofree char *event = NULL;

  if (sandbox_test_sender_is_done (sender))
    return G_SOURCE_REMOVE;
  event = g_strdup_printf ("data: %u\n\n", ++sender->sent);
  sandbox_test_upstream_append (sender->msg, event);
  if (sender->sent < sender->total)
    return G_SOURCE_CONTINUE;

  sandbox_test_upstream_complete (sender->msg);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_test_upstream_answer_events:
 * @count: how many events
 * @every_ms: the gap before each
 *
 * Answers with @count server-sent events "data: N\n\n" (N from 1), one
 * chunk each, every @every_ms, then the last chunk.
 */
void
sandbox_test_upstream_answer_events (SandboxTestUpstream *upstream,
                                     SoupServerMessage   *msg,
                                     guint                count,
                                     guint                every_ms)
{
  SandboxTestSender *sender = sandbox_test_sender_new (upstream, msg);

  sender->total = count;
  sandbox_test_upstream_start_chunked (msg, "text/event-stream");
  sandbox_test_upstream_schedule (upstream, every_ms, send_next_event, sender,
                                  sandbox_test_sender_free);
}

static void
on_bulk_chunk_written (SoupServerMessage *msg,
                       gpointer           data)
{
  SandboxTestSender *sender = data;
  gsize length = MIN (sender->bulk_left, BULK_CHUNK);

  g_mutex_lock (&sender->upstream->lock);
  sender->upstream->bulk_written += sender->sent;
  g_mutex_unlock (&sender->upstream->lock);

  sender->sent = (guint) length;
  if (length == 0)
    {
      sandbox_test_upstream_complete (msg);
      return;
    }
  sender->bulk_left -= length;
  soup_message_body_append (soup_server_message_get_response_body (msg), SOUP_MEMORY_TAKE,
                            g_malloc0 (length), length);
  soup_server_message_unpause (msg);
}

/**
 * sandbox_test_upstream_answer_bulk:
 * @bytes: how many zero bytes
 *
 * Answers with @bytes in 64 KiB chunks, each appended once the previous one
 * is written, so the upstream sends only as fast as it is read (see
 * sandbox_test_upstream_bulk_written()).
 */
void
sandbox_test_upstream_answer_bulk (SandboxTestUpstream *upstream,
                                   SoupServerMessage   *msg,
                                   gsize                bytes)
{
  SandboxTestSender *sender = sandbox_test_sender_new (upstream, msg);

  sender->bulk_left = bytes;
  sandbox_test_upstream_start_chunked (msg, "application/octet-stream");
  g_signal_connect_data (msg, "wrote-chunk", G_CALLBACK (on_bulk_chunk_written), sender,
                         (GClosureNotify) (void (*) (void)) sandbox_test_sender_free, 0);
  on_bulk_chunk_written (msg, sender);
}

/** sandbox_test_upstream_bulk_written: Returns: the bytes bulk answers have written so far */
gint64
sandbox_test_upstream_bulk_written (SandboxTestUpstream *upstream)
{
  gint64 written;

  g_mutex_lock (&upstream->lock);
  written = upstream->bulk_written;
  g_mutex_unlock (&upstream->lock);
  return written;
}
