/* sandbox-gateway-tunnel.c — the guest's TLS after an allowed CONNECT, ended by the gateway
 *
 * A CONNECT carries TLS the gateway could not see, so it never relays one:
 * after an allowed CONNECT it answers the guest's TLS itself, with GIO's
 * GTlsServerConnection and a certificate for the CONNECT's host from the
 * backend's CA (sandbox-gateway-ca.c), and serves what comes out of it as
 * HTTP.
 *
 * What comes out is not parsed here: it is handed, through a socket pair,
 * to the gateway's server as a connection of its own (arrival "tunnel"), so
 * every request in the tunnel goes through the same framing checks, the
 * same deadlines, the same checks against the policy and the same upstream
 * path as one on the gateway's socket; GIO's g_io_stream_splice_async()
 * moves the bytes between the TLS connection and the pair. That connection
 * is bound to the CONNECT's origin: a request in it naming another (domain
 * fronting) is refused (sandbox-gateway-exchange-check.c).
 *
 * The ClientHello must ask for the CONNECT's host, if for any
 * (sandbox-gateway-sni.c): it is peeked before GIO's handshake starts, and
 * a guest that asks for another is refused, audited, and closed.
 *
 * ALPN offers http/1.1 alone, so a client that negotiates protocols never
 * picks h2; one that speaks HTTP/2 anyway (prior knowledge) is refused by
 * the framing checks, as on the socket.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox-gateway-sni-private.h"
#include "sandbox-gateway-tunnel-private.h"

/* A TLS record's largest plaintext, its header and some: a ClientHello
 * larger than this is refused. */
#define MAX_CLIENT_HELLO (16384 + 5 + 2048)
/* How often a ClientHello that came in pieces is looked at again. */
#define PEEK_RETRY_MS 10

typedef struct
{
  GSocket *socket;                /* until the handshake starts */
  char *hostname;                 /* the CONNECT's */
  GSource *peek;
  GTlsConnection *tls;
  SandboxGatewayCa *ca;
  GCancellable *cancellable;      /* the server's: it stops every tunnel */
  GCancellable *handshake;        /* the handshake's own, for its deadline */
  GSource *deadline;
  gulong cancelled_id;
  char *origin;
  const SandboxGatewayTunnelHooks *hooks;
  gpointer user_data;
} Tunnel;

static void
tunnel_free (Tunnel *tunnel)
{
  if (tunnel->peek != NULL)
    g_source_destroy (tunnel->peek);
  g_clear_pointer (&tunnel->peek, g_source_unref);
  g_clear_object (&tunnel->socket);
  g_free (tunnel->hostname);
  if (tunnel->deadline != NULL)
    g_source_destroy (tunnel->deadline);
  g_clear_pointer (&tunnel->deadline, g_source_unref);
  if (tunnel->cancellable != NULL)
    g_cancellable_disconnect (tunnel->cancellable, tunnel->cancelled_id);
  g_clear_object (&tunnel->tls);
  g_clear_pointer (&tunnel->ca, sandbox_gateway_ca_unref);
  g_clear_object (&tunnel->cancellable);
  g_clear_object (&tunnel->handshake);
  g_free (tunnel->origin);
  g_free (tunnel);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Tunnel, tunnel_free)

static gboolean
on_handshake_deadline (gpointer user_data)
{
  Tunnel *tunnel = user_data;

  g_debug ("A guest's TLS handshake in a tunnel overran its deadline");
  g_cancellable_cancel (tunnel->handshake);
  return G_SOURCE_REMOVE;
}

static void
on_cancelled (GCancellable *cancellable,
              gpointer      user_data)
{
  g_cancellable_cancel (user_data);
}

static void
on_spliced (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  /* Either side's end (or failure) ends the tunnel; both were closed. */
  if (!g_io_stream_splice_finish (result, &error))
    g_debug ("A tunnel ended: %s", error->message);
}

/* Makes the pair whose one end the server reads as a connection of its
 * own; the other is spliced to @tls. */
static gboolean
make_pair (GSocket  **plain,
           GSocket  **inner,
           GError   **error)
{
  int fds[2];

  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
                   "Could not make a tunnel's socket pair: %s", g_strerror (errno));
      return FALSE;
    }
  *plain = g_socket_new_from_fd (fds[0], error);
  if (*plain == NULL)
    {
      close (fds[0]);
      close (fds[1]);
      return FALSE;
    }
  *inner = g_socket_new_from_fd (fds[1], error);
  if (*inner == NULL)
    {
      close (fds[1]);
      g_clear_object (plain);
      return FALSE;
    }
  return TRUE;
}

static void
on_handshake_done (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(Tunnel) tunnel = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) plain = NULL;
  g_autoptr(GSocket) inner = NULL;
  g_autoptr(GSocketConnection) inner_stream = NULL;

  if (!g_tls_connection_handshake_finish (tunnel->tls, result, &error))
    {
      g_debug ("A guest's TLS handshake in a tunnel failed: %s", error->message);
      g_io_stream_close (G_IO_STREAM (tunnel->tls), NULL, NULL);
      return;
    }
  if (g_cancellable_is_cancelled (tunnel->cancellable) || !make_pair (&plain, &inner, &error))
    {
      if (error != NULL)
        g_debug ("%s", error->message);
      g_io_stream_close (G_IO_STREAM (tunnel->tls), NULL, NULL);
      return;
    }

  inner_stream = g_socket_connection_factory_create_connection (inner);
  g_io_stream_splice_async (G_IO_STREAM (tunnel->tls), G_IO_STREAM (inner_stream),
                            G_IO_STREAM_SPLICE_CLOSE_STREAM1 | G_IO_STREAM_SPLICE_CLOSE_STREAM2,
                            G_PRIORITY_DEFAULT, tunnel->cancellable, on_spliced, NULL);
  tunnel->hooks->ready (plain, tunnel->origin, tunnel->user_data);
}

/* The handshake, once the ClientHello passed */
static void
start_handshake (Tunnel *tunnel)
{
  static const char * const protocols[] = { "http/1.1", NULL };
  g_autoptr(GSocketConnection) base = g_socket_connection_factory_create_connection (tunnel->socket);
  g_autoptr(GTlsCertificate) certificate = NULL;
  g_autoptr(GIOStream) tls = NULL;
  g_autoptr(GError) error = NULL;

  certificate = sandbox_gateway_ca_dup_leaf (tunnel->ca, tunnel->hostname, &error);
  if (certificate != NULL)
    tls = g_tls_server_connection_new (G_IO_STREAM (base), certificate, &error);
  if (tls == NULL)
    {
      g_warning ("Could not answer a guest's TLS for %s: %s", tunnel->hostname, error->message);
      g_io_stream_close (G_IO_STREAM (base), NULL, NULL);
      tunnel_free (tunnel);
      return;
    }

  g_clear_object (&tunnel->socket);
  tunnel->tls = G_TLS_CONNECTION (g_steal_pointer (&tls));
  g_tls_connection_set_advertised_protocols (tunnel->tls, protocols);
  /* Clients close TLS without close_notify often enough (and the guest
   * losing its own response is its own business). */
  g_tls_connection_set_require_close_notify (tunnel->tls, FALSE);
  g_tls_connection_handshake_async (tunnel->tls, G_PRIORITY_DEFAULT, tunnel->handshake,
                                    on_handshake_done, tunnel);
}

/* A name and the CONNECT's host match as DNS names do: without regard to
 * case, and to a root's trailing dot. */
static gboolean
names_match (const char *server_name,
             const char *hostname)
{
  gsize length = strlen (server_name);

  if (length > 0 && server_name[length - 1] == '.')
    length--;
  return length == strlen (hostname) && g_ascii_strncasecmp (server_name, hostname, length) == 0;
}

static void watch_client_hello (Tunnel *tunnel, guint delay_ms);
static gboolean on_client_hello (gpointer user_data);

static gboolean
on_client_hello_ready (GSocket      *socket,
                       GIOCondition  condition,
                       gpointer      user_data)
{
  return on_client_hello (user_data);
}

/* Looks at what has come of the ClientHello, without reading it. */
static gboolean
on_client_hello (gpointer user_data)
{
  Tunnel *tunnel = user_data;
  g_autofree guint8 *data = g_malloc (MAX_CLIENT_HELLO);
  g_autofree char *server_name = NULL;
  gssize length;
  SandboxGatewaySniResult result;

  g_clear_pointer (&tunnel->peek, g_source_unref);
  if (g_cancellable_is_cancelled (tunnel->handshake))
    {
      tunnel_free (tunnel);
      return G_SOURCE_REMOVE;
    }
  length = recv (g_socket_get_fd (tunnel->socket), data, MAX_CLIENT_HELLO, MSG_PEEK | MSG_DONTWAIT);
  if (length < 0 && (errno == EAGAIN || errno == EINTR))
    {
      watch_client_hello (tunnel, 0);
      return G_SOURCE_REMOVE;
    }
  result = length > 0 ? sandbox_gateway_sni_read (data, (gsize) length, &server_name)
                      : SANDBOX_GATEWAY_SNI_INVALID;
  if (result == SANDBOX_GATEWAY_SNI_INCOMPLETE && length < MAX_CLIENT_HELLO)
    {
      /* Readable as long as the peeked bytes are there: look again
       * shortly, until the deadline. */
      watch_client_hello (tunnel, PEEK_RETRY_MS);
      return G_SOURCE_REMOVE;
    }
  if (result != SANDBOX_GATEWAY_SNI_READ)
    {
      g_debug ("A guest's tunnel to %s began with no ClientHello", tunnel->hostname);
      tunnel->hooks->refused (tunnel->hostname, "invalid-client-hello", tunnel->user_data);
      tunnel_free (tunnel);
      return G_SOURCE_REMOVE;
    }
  if (server_name != NULL && !names_match (server_name, tunnel->hostname))
    {
      tunnel->hooks->refused (server_name, "sni-not-connect-host", tunnel->user_data);
      tunnel_free (tunnel);
      return G_SOURCE_REMOVE;
    }

  start_handshake (tunnel);
  return G_SOURCE_REMOVE;
}

static void
watch_client_hello (Tunnel *tunnel,
                    guint   delay_ms)
{
  tunnel->peek = delay_ms > 0 ? g_timeout_source_new (delay_ms)
                              : g_socket_create_source (tunnel->socket, G_IO_IN, tunnel->handshake);
  if (delay_ms > 0)
    g_source_set_callback (tunnel->peek, on_client_hello, tunnel, NULL);
  else
    g_source_set_callback (tunnel->peek, G_SOURCE_FUNC (on_client_hello_ready), tunnel, NULL);
  g_source_set_static_name (tunnel->peek, "[sandbox] gateway tunnel ClientHello");
  g_source_attach (tunnel->peek, g_main_context_get_thread_default ());
}

/* What a CONNECT's answer carries to the tunnel it opens. */
typedef struct
{
  SandboxGatewayCa *ca;
  GCancellable *cancellable;    /* the server's: cancelled once it stopped */
  const SandboxGatewayTunnelHooks *hooks;
  gpointer user_data;
  guint handshake_timeout_ms;
  char *hostname;
  char *origin;
} TunnelRequest;

/* Answers the guest's TLS on @socket, which the tunnel owns from now on,
 * once its ClientHello asked for @request's host name (or for no name). A
 * handshake that fails, or does not end within the request's deadline,
 * closes the connection. */
static void
tunnel_start (GSocket             *socket,
              const TunnelRequest *request)
{
  Tunnel *tunnel = g_new0 (Tunnel, 1);

  tunnel->socket = g_object_ref (socket);
  tunnel->ca = sandbox_gateway_ca_ref (request->ca);
  tunnel->hostname = g_strdup (request->hostname);
  tunnel->cancellable = g_object_ref (request->cancellable);
  tunnel->handshake = g_cancellable_new ();
  tunnel->origin = g_strdup (request->origin);
  tunnel->hooks = request->hooks;
  tunnel->user_data = request->user_data;

  tunnel->deadline = g_timeout_source_new (request->handshake_timeout_ms);
  g_source_set_callback (tunnel->deadline, on_handshake_deadline, tunnel, NULL);
  g_source_set_static_name (tunnel->deadline, "[sandbox] gateway tunnel handshake deadline");
  g_source_attach (tunnel->deadline, g_main_context_get_thread_default ());
  tunnel->cancelled_id = g_cancellable_connect (request->cancellable, G_CALLBACK (on_cancelled),
                                                g_object_ref (tunnel->handshake), g_object_unref);

  watch_client_hello (tunnel, 0);
}

/* Opening a tunnel after the CONNECT's answer */


static void
tunnel_request_free (gpointer data,
                     GClosure *closure)
{
  TunnelRequest *request = data;

  sandbox_gateway_ca_unref (request->ca);
  g_object_unref (request->cancellable);
  g_free (request->hostname);
  g_free (request->origin);
  g_free (request);
}

/* A descriptor of the connection's own: libsoup closes the stream it hands
 * back, and the socket with it. */
static GSocket *
take_socket (SandboxGatewayConnection *connection)
{
  GSocket *socket = connection != NULL ? sandbox_gateway_connection_get_socket (connection) : NULL;
  g_autoptr(GError) error = NULL;
  GSocket *own;
  int fd = socket != NULL ? dup (g_socket_get_fd (socket)) : -1;

  if (fd < 0)
    {
      g_debug ("Could not open a tunnel: %s", g_strerror (errno));
      return NULL;
    }
  own = g_socket_new_from_fd (fd, &error);
  if (own == NULL)
    {
      g_debug ("Could not open a tunnel: %s", error->message);
      close (fd);
    }
  return own;
}

/* The 200 is written: the connection leaves libsoup and the server's
 * accounting, and its socket goes to the tunnel. */
static void
on_answer_written (SoupServerMessage *msg,
                   gpointer           user_data)
{
  TunnelRequest *request = user_data;
  SandboxGatewayConnection *connection = sandbox_gateway_connection_of (msg);
  g_autoptr(GIOStream) stolen = NULL;
  g_autoptr(GSocket) socket = NULL;

  /* The server stopped while the answer was being written. */
  if (g_cancellable_is_cancelled (request->cancellable))
    return;

  socket = take_socket (connection);
  if (socket == NULL)
    {
      if (connection != NULL)
        sandbox_gateway_connection_drop (connection);
      return;
    }

  request->hooks->taken (connection, request->user_data);
  sandbox_gateway_connection_detach (connection);
  stolen = soup_server_message_steal_connection (msg);
  tunnel_start (socket, request);
}

/*
 * sandbox_gateway_tunnel_open:
 * @msg: an allowed CONNECT, being answered "200 Connection established"
 * @hostname: the CONNECT's host, which the certificate names
 * @origin: the allowed origin the CONNECT named, which every request in
 *   the tunnel must name too
 * @cancellable: the server's, cancelled when it stops
 * @hooks: (not nullable): how to tell the server; must outlive the server
 *
 * Once the answer is written, takes the connection from libsoup and answers
 * the guest's TLS on it.
 */
void
sandbox_gateway_tunnel_open (SoupServerMessage               *msg,
                             SandboxGatewayCa                *ca,
                             const char                      *hostname,
                             const char                      *origin,
                             guint                            handshake_timeout_ms,
                             GCancellable                    *cancellable,
                             const SandboxGatewayTunnelHooks *hooks,
                             gpointer                         user_data)
{
  TunnelRequest *request = g_new0 (TunnelRequest, 1);

  request->ca = sandbox_gateway_ca_ref (ca);
  request->cancellable = g_object_ref (cancellable);
  request->hooks = hooks;
  request->user_data = user_data;
  request->handshake_timeout_ms = handshake_timeout_ms;
  request->hostname = g_strdup (hostname);
  request->origin = g_strdup (origin);
  g_signal_connect_data (msg, "wrote-body", G_CALLBACK (on_answer_written), request,
                         tunnel_request_free, 0);
}
