/* bench-proxy.c — HTTPS through the allow-list's proxy, and pip through it
 *
 * Issue 33's rows. The upstream is the test kit's loopback HTTPS server
 * (a certificate for localhost from a CA of its own), so the bench measures
 * against the same server the tunnel tests talk to.
 *
 * HTTPS GET: a client on the host speaks to the gateway's proxy listener as
 * a guest's curl does (CONNECT localhost:PORT, then TLS the gateway ends
 * with a leaf of its CA; each request re-originated through libcurl with
 * real verification), against the same client speaking TLS to the
 * upstream itself. The listener is a TCP socket on 127.0.0.1 given to the
 * gateway with sandbox_gateway_add_proxy_listener(), which is what the
 * stub hands over from inside a sandbox: the gateway's work per request is
 * the same, and no process start blurs a per-request figure.
 *
 * pip: `pip install --no-deps --target` of ten wheels made at bench time,
 * from a simple index on the kit's HTTPS upstream, inside a real bubblewrap
 * sandbox through the proxy (the guest's own https_proxy and PIP_CERT)
 * against the same pip on the host reaching the index directly.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>

#include <glib/gstdio.h>
#include <sandbox.h>

#include "bench-gateway.h"
#include "bench-proxy.h"
#include "bench-table.h"
#include "sandbox-test-gateway.h"
#include "sandbox-test-session.h"

#define BODY_BYTES 1024

/* Each pair side by side: through the gateway's proxy port and direct
 * HTTPS to the same loopback upstream. */
typedef struct
{
  Samples *tunnel_get;       /* one GET on an open connection, us */
  Samples *direct_get;
  Samples *tunnel_fresh;     /* connect (+ CONNECT) + handshake + GET, us */
  Samples *direct_fresh;
  Samples *tunnel_rate;      /* req/s, 16 connections */
  Samples *direct_rate;
} BenchHttps;

/* Clients */

static GIOStream *
tcp_connect (guint16   port,
             GError  **error)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, port);
  GSocketConnection *connection;

  /* No GProxyResolver: it would read GSettings and the proxy variables. */
  g_socket_client_set_enable_proxy (client, FALSE);
  connection = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL, error);
  if (connection != NULL)
    g_socket_set_option (g_socket_connection_get_socket (connection), IPPROTO_TCP, TCP_NODELAY, 1, NULL);
  return G_IO_STREAM (connection);
}

/* Reads until @buffer holds a whole head, then the whole body its
 * Content-Length announces; FALSE on anything but a 200 read whole. */
static gboolean
read_answer (GInputStream  *input,
             GByteArray    *buffer,
             GError       **error)
{
  guint8 chunk[16384];
  const char *end = NULL;
  const char *length_header;
  gsize head_length, content_length;
  gssize n;

  g_byte_array_set_size (buffer, 0);
  while (end == NULL)
    {
      n = g_input_stream_read (input, chunk, sizeof chunk - 1, NULL, error);
      if (n <= 0)
        return FALSE;
      g_byte_array_append (buffer, chunk, n);
      g_byte_array_append (buffer, (const guint8 *) "", 1);
      g_byte_array_set_size (buffer, buffer->len - 1);
      end = strstr ((const char *) buffer->data, "\r\n\r\n");
    }
  if (!g_str_has_prefix ((const char *) buffer->data, "HTTP/1.1 200"))
    return FALSE;
  head_length = end + 4 - (const char *) buffer->data;
  length_header = strcasestr ((const char *) buffer->data, "\r\nContent-Length:");
  if (length_header == NULL || length_header > end)
    return FALSE;
  content_length = g_ascii_strtoull (length_header + 17, NULL, 10);
  while (buffer->len < head_length + content_length)
    {
      n = g_input_stream_read (input, chunk, MIN (sizeof chunk, head_length + content_length - buffer->len),
                               NULL, error);
      if (n <= 0)
        return FALSE;
      g_byte_array_append (buffer, chunk, n);
    }
  return TRUE;
}

static gboolean
https_get (GIOStream   *stream,
           const char  *request,
           GByteArray  *buffer,
           GError     **error)
{
  return g_output_stream_write_all (g_io_stream_get_output_stream (stream), request, strlen (request),
                                    NULL, NULL, error) &&
         read_answer (g_io_stream_get_input_stream (stream), buffer, error);
}

typedef struct
{
  guint16 upstream_port;
  guint16 proxy_port;        /* 0: straight to the upstream */
  GTlsDatabase *database;    /* what the client trusts on that path */
  char *authority;           /* localhost:PORT */
  char *request;
} Path;

/* A connection on @path, its TLS handshake done: CONNECT first on the
 * proxy's, as curl and pip do. */
static GIOStream *
path_open (Path    *path,
           GError **error)
{
  g_autoptr(GIOStream) connection = tcp_connect (path->proxy_port != 0 ? path->proxy_port
                                                                        : path->upstream_port, error);
  g_autoptr(GSocketConnectable) identity = g_network_address_new ("localhost", path->upstream_port);
  g_autoptr(GIOStream) tls = NULL;

  if (connection == NULL)
    return NULL;
  if (path->proxy_port != 0)
    {
      g_autofree char *connect = g_strdup_printf ("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n",
                                                  path->authority, path->authority);
      g_autoptr(GByteArray) head = g_byte_array_new ();
      guint8 byte;

      if (!g_output_stream_write_all (g_io_stream_get_output_stream (connection), connect,
                                      strlen (connect), NULL, NULL, error))
        return NULL;
      /* Byte by byte: what follows the head is the TLS server's. */
      while (head->len < 4 || memcmp (head->data + head->len - 4, "\r\n\r\n", 4) != 0)
        {
          if (g_input_stream_read (g_io_stream_get_input_stream (connection), &byte, 1, NULL, error) != 1)
            return NULL;
          g_byte_array_append (head, &byte, 1);
        }
      if (head->len < 12 || memcmp (head->data, "HTTP/1.1 200", 12) != 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED, "CONNECT %s refused",
                       path->authority);
          return NULL;
        }
    }
  tls = g_tls_client_connection_new (connection, identity, error);
  if (tls == NULL)
    return NULL;
  g_tls_connection_set_database (G_TLS_CONNECTION (tls), path->database);
  if (!g_tls_connection_handshake (G_TLS_CONNECTION (tls), NULL, error))
    return NULL;
  return g_steal_pointer (&tls);
}

static void
time_get (Path       *path,
          GIOStream  *stream,
          GByteArray *buffer,
          Samples    *samples)
{
  g_autoptr(GError) error = NULL;
  double start = bench_now_us ();

  if (!https_get (stream, path->request, buffer, &error))
    g_error ("HTTPS GET (%s): %s", path->proxy_port != 0 ? "tunnel" : "direct",
             error != NULL ? error->message : "not a whole 200");
  samples_add (samples, bench_now_us () - start);
}

/* What a one-shot client pays: the connection, the CONNECT on the
 * proxy's path, the handshake and one GET (the close is after its answer,
 * not counted). */
static void
time_fresh (Path       *path,
            GByteArray *buffer,
            Samples    *samples)
{
  g_autoptr(GError) error = NULL;
  double start = bench_now_us ();
  g_autoptr(GIOStream) stream = path_open (path, &error);

  if (stream == NULL || !https_get (stream, path->request, buffer, &error))
    g_error ("HTTPS GET on a new connection (%s): %s", path->proxy_port != 0 ? "tunnel" : "direct",
             error != NULL ? error->message : "not a whole 200");
  samples_add (samples, bench_now_us () - start);
  g_io_stream_close (stream, NULL, NULL);
}

/* bench_rate()'s client on @path: a connection with its own buffer. */
typedef struct
{
  GIOStream *stream;
  GByteArray *buffer;
} Connection;

static gpointer
connection_open (gpointer data)
{
  g_autoptr(GError) error = NULL;
  Connection *connection = g_new0 (Connection, 1);

  connection->stream = path_open (data, &error);
  if (connection->stream == NULL)
    g_error ("HTTPS connection: %s", error->message);
  connection->buffer = g_byte_array_new ();
  return connection;
}

static gboolean
connection_get (gpointer connection,
                gpointer data)
{
  Connection *self = connection;
  Path *path = data;

  return https_get (self->stream, path->request, self->buffer, NULL);
}

static void
connection_close (gpointer connection)
{
  Connection *self = connection;

  g_io_stream_close (self->stream, NULL, NULL);
  g_object_unref (self->stream);
  g_byte_array_unref (self->buffer);
  g_free (self);
}

static double
throughput (Path   *path,
            guint   n_clients,
            double  seconds)
{
  BenchRateClient client = { connection_open, connection_get, connection_close, path };

  return bench_rate (&client, n_clients, seconds);
}

/* The upstream: the kit's, serving files under a directory (index.html
 * for a path ending in "/"), and BODY_BYTES at /bench. */
static void
serve_files (SoupServer        *server,
             SoupServerMessage *msg,
             const char        *path,
             GHashTable        *query,
             gpointer           data)
{
  const char *root = data;
  g_autofree char *file = NULL;
  char *contents = NULL;
  gsize length = 0;

  if (g_str_equal (path, "/bench"))
    {
      soup_server_message_set_status (msg, 200, NULL);
      soup_server_message_set_response (msg, "application/octet-stream", SOUP_MEMORY_TAKE,
                                        g_strnfill (BODY_BYTES, 'x'), BODY_BYTES);
      return;
    }
  if (root != NULL && strstr (path, "..") == NULL)
    file = g_strconcat (root, path, g_str_has_suffix (path, "/") ? "index.html" : "", NULL);
  if (file == NULL || !g_file_get_contents (file, &contents, &length, NULL))
    {
      soup_server_message_set_status (msg, 404, NULL);
      return;
    }
  soup_server_message_set_status (msg, 200, NULL);
  soup_server_message_set_response (msg, g_str_has_suffix (file, ".html") ? "text/html"
                                                                           : "application/octet-stream",
                                    SOUP_MEMORY_TAKE, contents, length);
}

/* Measured in a thread of its own while the caller's runs the main
 * context, which receives the gateway's audit events as an application's
 * does. */
typedef struct
{
  Path tunnel;
  Path direct;
  guint rounds;
  guint rate_rounds;
  double seconds;
  BenchHttps *https;
  gboolean done;
} HttpsRun;

static gpointer
https_measure (gpointer data)
{
  HttpsRun *run = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GByteArray) buffer = g_byte_array_new ();
  g_autoptr(GIOStream) tunnel = path_open (&run->tunnel, &error);
  g_autoptr(GIOStream) direct = NULL;
  guint per_round = 50;

  if (tunnel == NULL || (direct = path_open (&run->direct, &error)) == NULL)
    g_error ("HTTPS bench: %s", error->message);
  for (guint i = 0; i < 100; i++)
    {
      https_get (tunnel, run->tunnel.request, buffer, NULL);
      https_get (direct, run->direct.request, buffer, NULL);
    }
  for (guint i = 0; i < run->rounds; i++)
    {
      for (guint j = 0; j < per_round; j++)
        {
          time_get (&run->tunnel, tunnel, buffer, run->https->tunnel_get);
          time_get (&run->direct, direct, buffer, run->https->direct_get);
        }
      time_fresh (&run->tunnel, buffer, run->https->tunnel_fresh);
      time_fresh (&run->direct, buffer, run->https->direct_fresh);
    }
  g_io_stream_close (tunnel, NULL, NULL);
  g_io_stream_close (direct, NULL, NULL);

  for (guint i = 0; i < run->rate_rounds; i++)
    {
      samples_add (run->https->tunnel_rate, throughput (&run->tunnel, 16, run->seconds));
      samples_add (run->https->direct_rate, throughput (&run->direct, 16, run->seconds));
    }

  g_atomic_int_set (&run->done, TRUE);
  g_main_context_wakeup (NULL);
  return NULL;
}

static void
bench_https_init (BenchHttps *https)
{
  *https = (BenchHttps) { samples_new (), samples_new (), samples_new (), samples_new (),
                          samples_new (), samples_new () };
}

static void
bench_https_clear (BenchHttps *https)
{
  g_clear_pointer (&https->tunnel_get, samples_free);
  g_clear_pointer (&https->direct_get, samples_free);
  g_clear_pointer (&https->tunnel_fresh, samples_free);
  g_clear_pointer (&https->direct_fresh, samples_free);
  g_clear_pointer (&https->tunnel_rate, samples_free);
  g_clear_pointer (&https->direct_rate, samples_free);
}

/* https://localhost:@port allowed, with a credential to inject: the
 * gateway's whole work on each request. */
static SandboxNetworkPolicy *
allow_localhost (guint16   port,
                 GError  **error)
{
  g_autofree char *json = g_strdup_printf ("{\"allow\": [{\"origin\": \"https://localhost:%u\", "
                                           "\"headers\": {\"Authorization\": \"Bearer bench\"}}]}",
                                           port);

  return sandbox_network_policy_new_from_json (json, error);
}

/* A gateway with a CA in a directory of @state's, trusting the upstream's
 * CA, allowing https://localhost:PORT with a credential, with a proxy
 * listener as a sandbox's stub would give it. */
static gboolean
start_gateway (SandboxTestGatewayFixture *fixture,
               const char                *state,
               GError                   **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = allow_localhost (sandbox_test_upstream_get_port (fixture->upstream),
                                                            error);
  g_autofree char *ca_directory = g_build_filename (state, "gateway-ca", NULL);
  SandboxGateway *gateway;

  if (policy == NULL)
    return FALSE;
  gateway = g_initable_new (SANDBOX_TYPE_GATEWAY, NULL, error,
                            "policy", policy,
                            "ca-directory", ca_directory,
                            "upstream-ca-file", sandbox_test_upstream_get_ca_file (fixture->upstream),
                            NULL);
  if (gateway == NULL)
    return FALSE;
  sandbox_test_gateway_adopt (fixture, gateway);
  sandbox_test_gateway_add_proxy (fixture);
  return TRUE;
}

static void
path_init (Path         *path,
           guint16       upstream_port,
           guint16       proxy_port,
           GTlsDatabase *database)
{
  path->upstream_port = upstream_port;
  path->proxy_port = proxy_port;
  path->database = database;
  path->authority = g_strdup_printf ("localhost:%u", upstream_port);
  path->request = g_strdup_printf ("GET /bench HTTP/1.1\r\nHost: %s\r\n\r\n", path->authority);
}

static void
path_clear (Path *path)
{
  g_clear_object (&path->database);
  g_clear_pointer (&path->authority, g_free);
  g_clear_pointer (&path->request, g_free);
}

/*
 * bench_https_measure:
 * @state: a directory for the gateway's CA
 * @rounds: rounds of 50 GETs on an open connection and one on a new one,
 *   each path in turn
 * @rate_rounds: rounds of 16 connections for @seconds on each path
 */
static gboolean
bench_https_measure (const char  *state,
                     guint        rounds,
                     guint        rate_rounds,
                     double       seconds,
                     BenchHttps  *https,
                     GError     **error)
{
  SandboxTestGatewayFixture fixture = { 0 };
  HttpsRun run = { .rounds = rounds, .rate_rounds = rate_rounds, .seconds = seconds, .https = https };
  GTlsDatabase *gateway_ca, *upstream_ca;
  GThread *thread;
  guint16 port;
  gboolean ok = FALSE;

  sandbox_test_gateway_set_up_full (&fixture, SANDBOX_TEST_UPSTREAM_TLS, serve_files, NULL);
  if (!start_gateway (&fixture, state, error))
    goto out;
  port = sandbox_test_upstream_get_port (fixture.upstream);
  gateway_ca = g_tls_file_database_new (sandbox_gateway_get_ca_file (fixture.gateway), error);
  if (gateway_ca == NULL)
    goto out;
  path_init (&run.tunnel, port, fixture.proxy_port, gateway_ca);
  upstream_ca = g_tls_file_database_new (sandbox_test_upstream_get_ca_file (fixture.upstream), error);
  if (upstream_ca == NULL)
    goto out;
  path_init (&run.direct, port, 0, upstream_ca);

  g_printerr ("HTTPS GET, 1 KiB body, through the proxy (CONNECT, TLS ended by the gateway) and direct "
              "(%u rounds x 50 requests; 16 connections: %u rounds x %.1f s)\n",
              rounds, rate_rounds, seconds);
  thread = g_thread_new ("bench-https", https_measure, &run);
  while (!g_atomic_int_get (&run.done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (thread);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_printerr ("  (%u audit events)\n", fixture.events->len);
  ok = TRUE;

out:
  path_clear (&run.tunnel);
  path_clear (&run.direct);
  sandbox_test_gateway_tear_down (&fixture, NULL);
  return ok;
}

/* pip */

/* Writes @n pure-Python wheels (benchpkgN 1.0) under ROOT/files and a
 * PEP 503 simple index for them under ROOT/simple: what a private package
 * index serves, made at bench time so nothing leaves the loopback. */
static const char make_index_py[] =
  "import hashlib, os, sys, zipfile\n"
  "root, n = sys.argv[1], int(sys.argv[2])\n"
  "os.makedirs(os.path.join(root, 'files'), exist_ok=True)\n"
  "for i in range(n):\n"
  "    name = 'benchpkg%d' % i\n"
  "    info = name + '-1.0.dist-info/'\n"
  "    members = [(name + '/__init__.py', 'VALUE = %d\\n' % i),\n"
  "               (info + 'METADATA', 'Metadata-Version: 2.1\\nName: %s\\nVersion: 1.0\\n' % name),\n"
  "               (info + 'WHEEL', 'Wheel-Version: 1.0\\nGenerator: sandbox-bench\\n'\n"
  "                                'Root-Is-Purelib: true\\nTag: py3-none-any\\n')]\n"
  "    members.append((info + 'RECORD', ''.join(m + ',,\\n' for m, _ in members) + info + 'RECORD,,\\n'))\n"
  "    wheel = name + '-1.0-py3-none-any.whl'\n"
  "    with zipfile.ZipFile(os.path.join(root, 'files', wheel), 'w') as archive:\n"
  "        for member, text in members:\n"
  "            archive.writestr(member, text)\n"
  "    with open(os.path.join(root, 'files', wheel), 'rb') as f:\n"
  "        digest = hashlib.sha256(f.read()).hexdigest()\n"
  "    os.makedirs(os.path.join(root, 'simple', name), exist_ok=True)\n"
  "    with open(os.path.join(root, 'simple', name, 'index.html'), 'w') as f:\n"
  "        f.write('<a href=\"/files/%s#sha256=%s\">%s</a>\\n' % (wheel, digest, wheel))\n";

/* The pip command line both sides run, but for the host's --cert. */
static char *
pip_arguments (guint16     port,
               guint       n_packages,
               const char *target)
{
  g_autoptr(GString) line = g_string_new (NULL);

  g_string_append_printf (line, "/usr/bin/python3 -m pip install --quiet --no-cache-dir "
                          "--disable-pip-version-check --no-deps --target %s "
                          "--index-url https://localhost:%u/simple/", target, port);
  for (guint i = 0; i < n_packages; i++)
    g_string_append_printf (line, " benchpkg%u", i);
  return g_string_free (g_steal_pointer (&line), FALSE);
}

/* On the host, straight to the index; no proxy variables, no pip
 * configuration but the command line's. */
static double
pip_on_host (const char  *state,
             const char  *ca_file,
             guint16      port,
             guint        n_packages,
             guint        round,
             GError     **error)
{
  g_autofree char *target = g_strdup_printf ("%s/host-%u", state, round);
  g_autofree char *arguments = pip_arguments (port, n_packages, target);
  g_autofree char *line = g_strdup_printf ("%s --cert %s", arguments, ca_file);
  g_autofree char *home = g_strdup_printf ("HOME=%s", state);
  g_autofree char *installed = g_strdup_printf ("%s/benchpkg%u/__init__.py", target, n_packages - 1);
  g_autofree char *err = NULL;
  g_auto(GStrv) argv = NULL;
  const char *envp[] = { "PATH=/usr/bin:/bin", "PIP_CONFIG_FILE=/dev/null", home, NULL };
  int status = -1;
  double start;

  if (!g_shell_parse_argv (line, NULL, &argv, error))
    return -1;
  start = bench_now_us ();
  if (!g_spawn_sync (NULL, argv, (char **) envp, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                     &status, error))
    return -1;
  if (!g_spawn_check_wait_status (status, error))
    {
      g_prefix_error (error, "pip on the host: %s: ", err);
      return -1;
    }
  if (!g_file_test (installed, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "pip on the host did not install %s", installed);
      return -1;
    }
  return bench_now_us () - start;
}

/* In the sandbox, through its proxy: its own https_proxy, PIP_CERT (the
 * gateway's CA) and no other pip configuration. The index's name is
 * localhost, which the guest's no_proxy exempts: a real index is not on
 * localhost, so the command clears no_proxy, as the client tests do. */
static double
pip_in_guest (SandboxSession *session,
              guint16         port,
              guint           n_packages,
              guint           round)
{
  g_autofree char *target = g_strdup_printf ("/tmp/pip-%u", round);
  g_autofree char *arguments = pip_arguments (port, n_packages, target);
  g_autofree char *script = g_strdup_printf ("no_proxy= PIP_CONFIG_FILE=/dev/null %s && "
                                             "test -e %s/benchpkg%u/__init__.py",
                                             arguments, target, n_packages - 1);
  double start = bench_now_us ();

  g_free (sandbox_test_guest_sh (session, script));
  return bench_now_us () - start;
}

static SandboxHandle *
open_pip_session (SandboxBackend  *backend,
                  guint16          port,
                  GError         **error)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("bench-pip");
  g_autoptr(GBytes) readme = g_bytes_new_static ("pip bench\n", 10);
  g_autoptr(SandboxNetworkPolicy) policy = allow_localhost (port, error);
  g_autofree char *key = NULL;

  if (policy == NULL || !sandbox_template_add_file (template_, "README", readme, error))
    return NULL;
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, error);
  if (key == NULL)
    return NULL;
  return sandbox_backend_create (backend, key, NULL, policy, NULL, error);
}

/*
 * bench_pip_measure:
 * @state: a directory for the index, the backend and the host's targets
 * @n_packages: how many wheels each install takes
 * @rounds: installs on each side, in turn, after one of each not counted
 *   (the first guest command starts a sandbox cold; both warm the caches)
 * @guest: (out caller-allocates): each install's time in the sandbox
 * @host: (out caller-allocates): each install's time on the host
 */
static gboolean
bench_pip_measure (const char  *state,
                   guint        n_packages,
                   guint        rounds,
                   Samples     *guest,
                   Samples     *host,
                   GError     **error)
{
  g_autofree char *root = g_build_filename (state, "index", NULL);
  g_autofree char *backend_state = g_build_filename (state, "backend", NULL);
  g_autofree char *count = g_strdup_printf ("%u", n_packages);
  const char *argv[] = { "/usr/bin/python3", "-c", make_index_py, root, count, NULL };
  SandboxTestUpstream *upstream = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  gboolean ok = FALSE;
  int status = -1;
  guint16 port;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status, error) ||
      !g_spawn_check_wait_status (status, error))
    return FALSE;
  upstream = sandbox_test_upstream_start (SANDBOX_TEST_UPSTREAM_TLS, serve_files, root);
  port = sandbox_test_upstream_get_port (upstream);
  backend = sandbox_backend_new ("bubblewrap", NULL, error, "state-directory", backend_state,
                                 "upstream-ca-file", sandbox_test_upstream_get_ca_file (upstream), NULL);
  if (backend == NULL || (handle = open_pip_session (backend, port, error)) == NULL)
    goto out;

  g_printerr ("pip install of %u local wheels, in a sandbox through the proxy and on the host (%u rounds)\n",
              n_packages, rounds);
  for (guint i = 0; i <= rounds; i++)
    {
      double in_guest = pip_in_guest (sandbox_handle_get_session (handle), port, n_packages, i);
      double on_host = pip_on_host (state, sandbox_test_upstream_get_ca_file (upstream), port, n_packages,
                                    i, error);

      if (on_host < 0)
        goto out;
      if (i == 0)
        continue;
      samples_add (guest, in_guest);
      samples_add (host, on_host);
    }
  ok = TRUE;

out:
  if (handle != NULL)
    sandbox_handle_delete (handle, NULL, NULL);
  sandbox_test_upstream_stop (upstream);
  return ok;
}

/* The section's rows. The issue sets no target: the ratios are
 * informational. */
void
bench_proxy (const char *state_root,
             gboolean    quick)
{
  g_autofree char *https_state = g_build_filename (state_root, "https", NULL);
  g_autofree char *pip_state = g_build_filename (state_root, "pip", NULL);
  g_autoptr(Samples) guest = samples_new (), host = samples_new ();
  g_autoptr(GError) error = NULL;
  BenchHttps https;
  const char *informational = "informational (issue 33)";

  g_mkdir_with_parents (https_state, 0700);
  g_mkdir_with_parents (pip_state, 0700);
  bench_https_init (&https);
  if (!bench_https_measure (https_state, quick ? 10 : 40, quick ? 2 : 5, quick ? 0.4 : 1.0, &https, &error))
    g_error ("HTTPS through the proxy: %s", error->message);
  add_row ("HTTPS GET through the proxy, open tunnel", format_time (https.tunnel_get),
           format_time (https.direct_get),
           g_strdup_printf ("%.2fx", samples_median (https.tunnel_get) / samples_median (https.direct_get)),
           informational, FALSE, TRUE);
  add_row ("HTTPS added latency per request, tunnel",
           g_strdup_printf ("%.1f us", samples_median (https.tunnel_get) - samples_median (https.direct_get)),
           NULL, NULL, "", FALSE, TRUE);
  add_row ("HTTPS GET on a new connection (CONNECT, TLS)", format_time (https.tunnel_fresh),
           format_time (https.direct_fresh),
           g_strdup_printf ("%.2fx", samples_median (https.tunnel_fresh) / samples_median (https.direct_fresh)),
           informational, FALSE, TRUE);
  add_row ("HTTPS GET throughput through the proxy, 16 connections",
           g_strdup_printf ("%.0f req/s (min %.0f)", samples_median (https.tunnel_rate),
                            samples_quantile (https.tunnel_rate, 0)),
           g_strdup_printf ("%.0f req/s (min %.0f)", samples_median (https.direct_rate),
                            samples_quantile (https.direct_rate, 0)),
           g_strdup_printf ("%.2fx", samples_median (https.tunnel_rate) / samples_median (https.direct_rate)),
           informational, FALSE, TRUE);
  bench_https_clear (&https);

  if (!bench_pip_measure (pip_state, 10, quick ? 2 : 5, guest, host, &error))
    g_error ("pip through the proxy: %s", error->message);
  add_row ("pip install, 10 local wheels: sandbox via proxy vs host", format_time (guest), format_time (host),
           g_strdup_printf ("%.2fx", samples_median (guest) / samples_median (host)), informational, FALSE, TRUE);
}
