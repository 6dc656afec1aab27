/* sandbox-gateway-server.c — the gateway-thread side of a gateway
 *
 * A SandboxGatewayServer owns a SoupServer, the connections accepted on the
 * gateway's socket (sandbox-gateway-connection.c) and the exchanges of their
 * requests (sandbox-gateway-exchange.c), and lives entirely on the gateway
 * thread; only the policy (under its lock) is touched from other threads.
 * It turns libsoup's handlers and signals, and what its connections report,
 * into calls on the right exchange: the checks and the forwarding are the
 * exchange's, the answers sandbox-gateway-answer.c's.
 *
 * Besides the Unix socket it accepts on proxy listeners a driver adds (a
 * TCP socket a sandbox's stub bound inside the sandbox's network namespace):
 * their connections are marked SANDBOX_GATEWAY_ARRIVAL_PROXY, which is all
 * that differs, and the checks allow them absolute-form targets and CONNECT.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <glib/gstdio.h>
#include <gio/gunixsocketaddress.h>
#include <libsoup/soup.h>

#include "sandbox-gateway-answer-private.h"
#include "sandbox-gateway-connection-private.h"
#include "sandbox-gateway-exchange-private.h"
#include "sandbox-gateway-loop-private.h"
#include "sandbox-gateway-server-private.h"
#include "sandbox-gateway-tunnel-private.h"

/* A guest holding this many connections open is refused new ones, so a
 * guest cannot exhaust the host's file descriptors; unless one of them has
 * sent nothing yet, or nothing since its last answer, which is closed
 * instead (evict_quiet_connection(), evict_idle_connection()). */
#define MAX_CONNECTIONS 256

struct _SandboxGatewayServer
{
  GMutex policy_lock;
  SandboxNetworkPolicy *policy;
  guint policy_generation;

  guint request_timeout_ms;
  guint header_timeout_ms;
  SandboxGatewayServerCallbacks callbacks;
  gpointer user_data;
  SandboxGatewayCa *ca;             /* NULL: CONNECT is not tunnelled */
  char *upstream_ca_file;
  GCancellable *tunnels;            /* cancelled when the server stops */

  /* Everything below belongs to the gateway thread. */
  GSocket *listener;
  GSource *accept_source;
  /* Proxy listeners by id (GUINT_TO_POINTER), each a ProxyListener. */
  GHashTable *proxy_listeners;
  SoupServer *soup;
  GSocketAddress *stand_in_address;
  SandboxGatewayExchanges exchanges;
  /* Every connection libsoup has not let go of yet, mapped to its link in
   * quiet while it is there, else to NULL. */
  GHashTable *connections;
  /* Connections on which the guest had sent nothing when last looked at,
   * oldest first. */
  GQueue quiet;
  /* Connections closed to make room that libsoup has not let go of yet:
   * they no longer count against the cap. */
  GHashTable *evicted;
  gboolean closed;
};

/* Policy */

static SandboxNetworkPolicy *
current_policy (SandboxGatewayServer *self,
                guint                *generation)
{
  SandboxNetworkPolicy *policy;

  g_mutex_lock (&self->policy_lock);
  policy = g_object_ref (self->policy);
  *generation = self->policy_generation;
  g_mutex_unlock (&self->policy_lock);

  return policy;
}

/* The generation changes under the lock, with the policy, but is read
 * alone without it. */
static guint
current_generation (SandboxGatewayServer *self)
{
  return (guint) g_atomic_int_get (&self->policy_generation);
}

/* Aborts every exchange decided under an older policy than the current one. */
static gboolean
abort_stale_exchanges (gpointer user_data)
{
  SandboxGatewayServer *self = user_data;

  if (!self->closed)
    sandbox_gateway_exchanges_abort_stale (&self->exchanges, current_generation (self));

  return G_SOURCE_REMOVE;
}

/* What connections report */

static SandboxGatewayExchange *
exchange_of_request (SandboxGatewayServer     *self,
                     SandboxGatewayConnection *connection)
{
  if (sandbox_gateway_connection_get_phase (connection) != SANDBOX_GATEWAY_PHASE_REQUEST)
    return NULL;

  return sandbox_gateway_exchanges_lookup (&self->exchanges,
                                           sandbox_gateway_connection_get_current (connection));
}

/* Audits a request the guest cut short, sent too slowly or framed in a way
 * the stream refused, once per connection: with its method, host and target
 * when its head was read (and it was not answered and audited already), else
 * as a refused head. Nothing is forwarded. */
static void
refuse_input (SandboxGatewayServer     *self,
              SandboxGatewayConnection *connection,
              guint                     status,
              const char               *reason)
{
  SoupServerMessage *msg = sandbox_gateway_connection_get_current (connection);
  SandboxGatewayExchange *exchange;

  if (!sandbox_gateway_connection_claim_refusal (connection))
    return;

  if (msg != NULL && sandbox_gateway_message_is_audited (msg))
    return;
  exchange = sandbox_gateway_exchanges_lookup (&self->exchanges, msg);
  if (exchange != NULL)
    sandbox_gateway_exchange_refuse_input (exchange, status, reason);
  else
    /* A head refused before libsoup made a request of it: there is no
     * method, host or target to report. */
    sandbox_gateway_exchanges_report (&self->exchanges, &(SandboxGatewayAuditRecord) {
      .arrival = sandbox_gateway_connection_get_arrival (connection),
      .decision = SANDBOX_GATEWAY_DECISION_BAD_REQUEST, .reason = reason, .status = status,
    });
}

static void
on_connection_deadline (SandboxGatewayConnection *connection,
                        gpointer                  user_data)
{
  SandboxGatewayServer *self = user_data;
  SandboxGatewayExchange *exchange = exchange_of_request (self, connection);
  SandboxGatewayPhase phase = sandbox_gateway_connection_get_phase (connection);
  SandboxGatewayExchangeState state = exchange != NULL ? sandbox_gateway_exchange_get_state (exchange)
                                                       : (SandboxGatewayExchangeState) -1;

  if (state == SANDBOX_GATEWAY_EXCHANGE_FORWARDING)
    {
      sandbox_gateway_exchange_time_out (exchange);
    }
  else if (phase != SANDBOX_GATEWAY_PHASE_IDLE)
    {
      g_debug ("Closing a connection that overran its deadline (phase %d, exchange state %d)",
               phase, (int) state);
      /* A head begun and not finished in time, or a body; a connection
       * that sent nothing (or is idle between requests) ending at its
       * deadline is no refusal. */
      if (phase == SANDBOX_GATEWAY_PHASE_HEADERS && sandbox_gateway_connection_is_in_head (connection))
        refuse_input (self, connection, 0, "header-timeout");
      else if (state == SANDBOX_GATEWAY_EXCHANGE_READING)
        refuse_input (self, connection, 0, "body-timeout");
      sandbox_gateway_connection_drop (connection);
    }
}

/* The stream refused what the guest sent; libsoup drops the connection
 * when the stream's error reaches it, right after this. */
static void
on_connection_input_refused (SandboxGatewayConnection *connection,
                             guint                     status,
                             const char               *reason,
                             gpointer                  user_data)
{
  refuse_input (user_data, connection, status, reason);
}

/* The guest closed its connection while nobody read it. */
static void
on_connection_hangup (SandboxGatewayConnection *connection,
                      gpointer                  user_data)
{
  SandboxGatewayExchange *exchange = exchange_of_request (user_data, connection);

  if (exchange != NULL)
    sandbox_gateway_exchange_abandon (exchange);
}

static void
on_connection_closed (SandboxGatewayConnection *connection,
                      gpointer                  user_data)
{
  SandboxGatewayServer *self = user_data;
  GList *link = g_hash_table_lookup (self->connections, connection);

  if (link != NULL)
    g_queue_delete_link (&self->quiet, link);
  g_hash_table_remove (self->connections, connection);
  g_hash_table_remove (self->evicted, connection);
}

static const SandboxGatewayConnectionEvents connection_events = {
  .deadline = on_connection_deadline,
  .input_refused = on_connection_input_refused,
  .hangup = on_connection_hangup,
  .closed = on_connection_closed,
};

/* Accepting connections */

/* Closes @connection to make room, without an answer, and audits it; @why
 * names which connection it is, for the debug log. */
static void
evict_connection (SandboxGatewayServer     *self,
                  SandboxGatewayConnection *connection,
                  const char               *why)
{
  g_debug ("Closing %s, to make room", why);
  g_hash_table_add (self->evicted, connection);
  /* A shutdown: libsoup lets go of the connection later, and
   * on_connection_closed() runs then, not from here. */
  sandbox_gateway_connection_drop (connection);
  sandbox_gateway_exchanges_report (&self->exchanges, &(SandboxGatewayAuditRecord) {
    .arrival = sandbox_gateway_connection_get_arrival (connection),
    .decision = SANDBOX_GATEWAY_DECISION_BUSY, .reason = "idle-connection-evicted",
  });
}

/* Connections a guest opened and sent nothing on (a client's spare ones, or
 * a guest locking itself out) must not make its next request wait at the
 * cap until their header deadline closes them: the oldest is closed now,
 * without an answer, as any HTTP server may close an idle connection (the
 * client retries on a new one). One that has sent something is never closed
 * for a newcomer: it may be a request under way.
 *
 * A connection leaves the queue when libsoup lets go of it, or the first
 * time it is found to have spoken (it cannot become quiet again), so each
 * is looked at here at most once after it spoke.
 *
 * Returns: %TRUE if a connection was closed to make room */
static gboolean
evict_quiet_connection (SandboxGatewayServer *self)
{
  SandboxGatewayConnection *connection;

  /* An evicted connection keeps its descriptor until libsoup notices the
   * shutdown, a main-loop iteration or so later; connections accepted
   * faster than that must not hold more than twice the cap. */
  if (g_hash_table_size (self->evicted) >= MAX_CONNECTIONS)
    return FALSE;

  while ((connection = g_queue_pop_head (&self->quiet)) != NULL)
    {
      g_hash_table_insert (self->connections, connection, NULL);
      if (sandbox_gateway_connection_has_spoken (connection))
        continue;

      evict_connection (self, connection, "the oldest connection that has sent nothing");
      return TRUE;
    }

  return FALSE;
}

/* Failing a quiet one: the kept-alive connection that has waited longest
 * for its next request, having sent nothing of it (a client's pool of idle
 * connections, 256 of which locked the gateway as the quiet ones did). The
 * guest's HTTP client retries on a new connection, as it does whenever a
 * server closes an idle one. A scan, at the cap only.
 *
 * Returns: %TRUE if a connection was closed to make room */
static gboolean
evict_idle_connection (SandboxGatewayServer *self)
{
  SandboxGatewayConnection *oldest = NULL;
  GHashTableIter iter;
  gpointer key;

  if (g_hash_table_size (self->evicted) >= MAX_CONNECTIONS)
    return FALSE;

  g_hash_table_iter_init (&iter, self->connections);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    {
      SandboxGatewayConnection *connection = key;

      if (g_hash_table_contains (self->evicted, connection) ||
          !sandbox_gateway_connection_waits_for_head (connection))
        continue;
      if (oldest == NULL || sandbox_gateway_connection_get_deadline_us (connection) <
                            sandbox_gateway_connection_get_deadline_us (oldest))
        oldest = connection;
    }
  if (oldest == NULL)
    return FALSE;

  evict_connection (self, oldest, "the kept-alive connection idle longest");
  return TRUE;
}

/* @tunnel_origin: (nullable): a tunnel's origin, for its plain side */
static void
accept_connection (SandboxGatewayServer  *self,
                   GSocket               *socket,
                   SandboxGatewayArrival  arrival,
                   const char            *tunnel_origin)
{
  g_autoptr(GError) error = NULL;
  SandboxGatewayConnection *connection;
  guint open = g_hash_table_size (self->connections) - g_hash_table_size (self->evicted);

  if (open >= MAX_CONNECTIONS &&
      !evict_quiet_connection (self) && !evict_idle_connection (self))
    {
      g_debug ("Refusing a connection: %u are open", g_hash_table_size (self->connections));
      /* The guest learns why rather than seeing a reset; the socket is not
       * kept a moment longer than the answer takes. */
      sandbox_gateway_answer_directly (socket, SOUP_STATUS_SERVICE_UNAVAILABLE);
      g_socket_close (socket, NULL);
      sandbox_gateway_exchanges_report (&self->exchanges, &(SandboxGatewayAuditRecord) {
        .arrival = arrival, .decision = SANDBOX_GATEWAY_DECISION_BUSY,
        .reason = "too-many-connections", .status = SOUP_STATUS_SERVICE_UNAVAILABLE,
      });
      return;
    }

  connection = sandbox_gateway_connection_new (socket, arrival, self->header_timeout_ms,
                                               &connection_events, self);
  if (tunnel_origin != NULL)
    sandbox_gateway_connection_set_tunnel_origin (connection, tunnel_origin);
  g_queue_push_tail (&self->quiet, connection);
  g_hash_table_insert (self->connections, connection, g_queue_peek_tail_link (&self->quiet));
  if (!sandbox_gateway_connection_serve (connection, self->soup, self->stand_in_address, &error))
    g_debug ("Could not serve a connection: %s", error->message);
}

static void
accept_all (SandboxGatewayServer  *self,
            GSocket               *listener,
            SandboxGatewayArrival  arrival)
{
  for (;;)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GSocket) socket = g_socket_accept (listener, NULL, &error);

      if (socket == NULL)
        {
          if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            g_debug ("Could not accept a connection: %s", error->message);
          break;
        }

      accept_connection (self, socket, arrival, NULL);
    }
}

static gboolean
on_listener_ready (GSocket      *listener,
                   GIOCondition  condition,
                   gpointer      user_data)
{
  accept_all (user_data, listener, SANDBOX_GATEWAY_ARRIVAL_SOCKET);
  return G_SOURCE_CONTINUE;
}

/* Proxy listeners */

typedef struct
{
  SandboxGatewayServer *server;
  GSocket *socket;
  GSource *source;
} ProxyListener;

static void
proxy_listener_free (gpointer data)
{
  ProxyListener *listener = data;

  g_source_destroy (listener->source);
  g_source_unref (listener->source);
  g_socket_close (listener->socket, NULL);
  g_object_unref (listener->socket);
  g_free (listener);
}

static gboolean
on_proxy_listener_ready (GSocket      *socket,
                         GIOCondition  condition,
                         gpointer      user_data)
{
  ProxyListener *listener = user_data;

  accept_all (listener->server, socket, SANDBOX_GATEWAY_ARRIVAL_PROXY);
  return G_SOURCE_CONTINUE;
}

static GSource *
watch_listener (GSocket           *socket,
                GSocketSourceFunc  func,
                gpointer           user_data,
                const char        *name)
{
  GSource *source = g_socket_create_source (socket, G_IO_IN, NULL);

  g_socket_set_blocking (socket, FALSE);
  g_source_set_callback (source, G_SOURCE_FUNC (func), user_data, NULL);
  g_source_set_static_name (source, name);
  g_source_attach (source, g_main_context_get_thread_default ());
  return source;
}

typedef struct
{
  SandboxGatewayServer *server;
  GSocket *socket;
  guint id;
} ProxyCall;

/* The last proxy listener id given out, by any server: gateway thread only. */
static guint last_proxy_id;

static gboolean
add_proxy_on_gateway_thread (gpointer user_data)
{
  ProxyCall *call = user_data;
  SandboxGatewayServer *self = call->server;
  ProxyListener *listener;

  if (self->closed)
    return G_SOURCE_REMOVE;
  listener = g_new0 (ProxyListener, 1);
  listener->server = self;
  listener->socket = g_object_ref (call->socket);
  listener->source = watch_listener (listener->socket, on_proxy_listener_ready, listener,
                                     "[sandbox] gateway proxy accept");
  /* 0 is no id: after 2^32 listeners the count wraps past it. Counted
   * across servers (on the one gateway thread), so that an id a parked
   * gateway's old server gave out is never its new server's. */
  do
    call->id = ++last_proxy_id;
  while (call->id == 0 || g_hash_table_contains (self->proxy_listeners, GUINT_TO_POINTER (call->id)));
  g_hash_table_insert (self->proxy_listeners, GUINT_TO_POINTER (call->id), listener);
  return G_SOURCE_REMOVE;
}

static gboolean
remove_proxy_on_gateway_thread (gpointer user_data)
{
  ProxyCall *call = user_data;

  if (call->server->proxy_listeners != NULL)
    g_hash_table_remove (call->server->proxy_listeners, GUINT_TO_POINTER (call->id));
  return G_SOURCE_REMOVE;
}

/*
 * sandbox_gateway_server_add_proxy_listener:
 * @listener: a listening stream socket
 *
 * Accepts connections on @listener too, as proxy connections, until
 * sandbox_gateway_server_remove_proxy_listener() or the server's end, which
 * close it. Connections accepted on it live on after.
 *
 * Returns: its id, or 0 when the server is closing
 */
guint
sandbox_gateway_server_add_proxy_listener (SandboxGatewayServer *self,
                                           GSocket              *listener)
{
  ProxyCall call = { self, listener, 0 };

  sandbox_gateway_loop_invoke_sync (add_proxy_on_gateway_thread, &call);
  return call.id;
}

void
sandbox_gateway_server_remove_proxy_listener (SandboxGatewayServer *self,
                                              guint                 id)
{
  ProxyCall call = { self, NULL, id };

  sandbox_gateway_loop_invoke_sync (remove_proxy_on_gateway_thread, &call);
}

/* libsoup handlers */

/* Tunnels */

static void
on_tunnel_ready (GSocket    *plain,
                 const char *origin,
                 gpointer    user_data)
{
  accept_connection (user_data, plain, SANDBOX_GATEWAY_ARRIVAL_TUNNEL, origin);
}

/* The tunnel's connection leaves the server's accounting: it is libsoup's
 * no more. */
static void
on_tunnel_taken (SandboxGatewayConnection *connection,
                 gpointer                  user_data)
{
  on_connection_closed (connection, user_data);
}

static void
on_tunnel_refused (const char *host,
                   const char *reason,
                   gpointer    user_data)
{
  SandboxGatewayServer *self = user_data;

  sandbox_gateway_exchanges_report (&self->exchanges, &(SandboxGatewayAuditRecord) {
    .host = host, .arrival = SANDBOX_GATEWAY_ARRIVAL_TUNNEL,
    .decision = SANDBOX_GATEWAY_DECISION_DENIED, .reason = reason,
  });
}

static const SandboxGatewayTunnelHooks tunnel_hooks = {
  .taken = on_tunnel_taken,
  .ready = on_tunnel_ready,
  .refused = on_tunnel_refused,
};

static void
open_tunnel (SoupServerMessage *msg,
             const char        *hostname,
             const char        *origin,
             gpointer           user_data)
{
  SandboxGatewayServer *self = user_data;

  sandbox_gateway_tunnel_open (msg, self->ca, hostname, origin, self->header_timeout_ms,
                               self->tunnels, &tunnel_hooks, self);
}

static GQuark
checked_quark (void)
{
  return g_quark_from_static_string ("sandbox-gateway-checked");
}

/* Runs after libsoup's own "got-headers" handler, and so after
 * on_headers_read() when libsoup called it. libsoup answers some requests
 * itself, without an early handler (a target it will not route, a scheme
 * that is not http), or finds no handler for the target ("*"): the first
 * are closed after libsoup's answer, since libsoup may skip their body (an
 * "Expect: 100-continue" answered with an error) and would parse it as the
 * next request; the others are refused. The stream must know the body's
 * framing in every case. */
static void
on_got_headers (SoupServerMessage *msg,
                gpointer           user_data)
{
  SandboxGatewayServer *self = user_data;
  SoupMessageHeaders *response_headers = soup_server_message_get_response_headers (msg);
  gboolean tracked = sandbox_gateway_connection_track_body (sandbox_gateway_connection_of (msg), msg);

  if (soup_server_message_get_status (msg) == 0 &&
      g_object_get_qdata (G_OBJECT (msg), checked_quark ()) == NULL)
    {
      const char *host = soup_message_headers_get_one (soup_server_message_get_request_headers (msg), "Host");
      SandboxGatewayRefusal refusal = tracked
        ? (SandboxGatewayRefusal) { SOUP_STATUS_FORBIDDEN, SANDBOX_GATEWAY_DECISION_DENIED, "target-not-allowed" }
        : (SandboxGatewayRefusal) { SOUP_STATUS_BAD_REQUEST, SANDBOX_GATEWAY_DECISION_BAD_REQUEST, "invalid-framing" };

      sandbox_gateway_exchanges_refuse (&self->exchanges, msg, host, NULL, g_get_monotonic_time (), &refusal);
      return;
    }

  if (soup_server_message_get_status (msg) != 0 && !sandbox_gateway_answer_is_own (msg))
    soup_message_headers_replace (response_headers, "Connection", "close");
}

static void
on_request_started (SoupServer        *soup,
                    SoupServerMessage *msg,
                    gpointer           user_data)
{
  SandboxGatewayServer *self = user_data;
  SandboxGatewayConnection *connection = sandbox_gateway_connection_of (msg);

  if (connection != NULL)
    sandbox_gateway_connection_arm (connection, SANDBOX_GATEWAY_PHASE_HEADERS, msg, self->header_timeout_ms);
  g_signal_connect (msg, "got-headers", G_CALLBACK (on_got_headers), self);
}

static void
on_request_done (SoupServer        *soup,
                 SoupServerMessage *msg,
                 gpointer           user_data)
{
  SandboxGatewayServer *self = user_data;
  SandboxGatewayConnection *connection = sandbox_gateway_connection_of (msg);

  /* An idle keep-alive connection waits for its next request's headers. */
  if (sandbox_gateway_connection_is_current (connection, msg))
    sandbox_gateway_connection_arm (connection, SANDBOX_GATEWAY_PHASE_HEADERS, NULL, self->header_timeout_ms);
  /* A held head is sent with its body; should none have followed, it goes
   * now, or the connection's response is broken. */
  if (connection != NULL && !sandbox_gateway_connection_release_response_head (connection))
    sandbox_gateway_connection_drop (connection);

  /* libsoup answers some malformed requests itself, before any handler. */
  if (!sandbox_gateway_exchanges_finish (&self->exchanges, msg))
    {
      guint status = soup_server_message_get_status (msg);

      if (status >= 400 && !sandbox_gateway_message_is_audited (msg))
        sandbox_gateway_exchanges_audit (&self->exchanges, msg, 0, &(SandboxGatewayAuditRecord) {
          .decision = SANDBOX_GATEWAY_DECISION_BAD_REQUEST, .reason = "malformed", .status = status,
        });
    }
}

/* Runs once the request headers are read, before any of the body is. */
static void
on_headers_read (SoupServer        *soup,
                 SoupServerMessage *msg,
                 const char        *path,
                 GHashTable        *query,
                 gpointer           user_data)
{
  SandboxGatewayServer *self = user_data;
  SandboxGatewayConnection *connection = sandbox_gateway_connection_of (msg);
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  guint generation = 0;

  g_object_set_qdata (G_OBJECT (msg), checked_quark (), GINT_TO_POINTER (TRUE));
  if (connection != NULL)
    sandbox_gateway_connection_arm (connection, SANDBOX_GATEWAY_PHASE_REQUEST, msg, self->request_timeout_ms);

  policy = current_policy (self, &generation);
  sandbox_gateway_exchange_check (&self->exchanges, msg, connection, policy, generation);
}

static void
on_request (SoupServer        *soup,
            SoupServerMessage *msg,
            const char        *path,
            GHashTable        *query,
            gpointer           user_data)
{
  SandboxGatewayServer *self = user_data;
  SandboxGatewayExchange *exchange = sandbox_gateway_exchanges_lookup (&self->exchanges, msg);

  if (exchange == NULL)
    {
      /* Every request that passed on_headers_read() has an exchange. */
      sandbox_gateway_answer (msg, SOUP_STATUS_BAD_REQUEST,
                              sandbox_gateway_answer_error_for (SANDBOX_GATEWAY_DECISION_BAD_REQUEST), TRUE);
      return;
    }

  sandbox_gateway_exchange_run (exchange, current_generation (self));
}

/* Life cycle, on the gateway thread */

/* libsoup keeps a connection alive after a response only while the server
 * has a listener of its own (soup-server.c's request_finished() tests
 * priv->listeners; so since 3.0, and still on libsoup's main branch after
 * 3.7.1), and ours are accepted by hand. Give it one that nobody can reach:
 * bound next to the real socket, then unlinked. */
static gboolean
listen_unreachably (SoupServer  *soup,
                    GSocket     *listener,
                    GError     **error)
{
  g_autoptr(GSocketAddress) local = g_socket_get_local_address (listener, error);
  g_autoptr(GSocketAddress) address = NULL;
  g_autoptr(GSocket) socket = NULL;
  g_autofree char *directory = NULL;
  g_autofree char *path = NULL;
  gboolean listening;

  if (local == NULL)
    return FALSE;
  if (!G_IS_UNIX_SOCKET_ADDRESS (local))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "The gateway listens on Unix sockets only");
      return FALSE;
    }

  directory = g_path_get_dirname (g_unix_socket_address_get_path (G_UNIX_SOCKET_ADDRESS (local)));
  path = g_build_filename (directory, "unreachable.sock", NULL);
  address = g_unix_socket_address_new (path);

  socket = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT, error);
  if (socket == NULL || !g_socket_bind (socket, address, FALSE, error))
    return FALSE;

  listening = g_socket_listen (socket, error) &&
              soup_server_listen_socket (soup, socket, 0, error);
  g_unlink (path);

  return listening;
}

typedef struct
{
  SandboxGatewayServer *server;
  GError *error;
  gboolean ok;
} StartCall;

static gboolean
start_on_gateway_thread (gpointer user_data)
{
  StartCall *call = user_data;
  SandboxGatewayServer *self = call->server;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);

  self->stand_in_address = g_inet_socket_address_new (loopback, 80);
  sandbox_gateway_exchanges_init (&self->exchanges, &self->callbacks, self->user_data,
                                  self->request_timeout_ms, self->header_timeout_ms);
  self->exchanges.upstream_ca_file = self->upstream_ca_file;
  if (self->ca != NULL)
    {
      self->exchanges.open_tunnel = open_tunnel;
      self->exchanges.open_tunnel_data = self;
    }
  self->connections = g_hash_table_new (NULL, NULL);
  self->evicted = g_hash_table_new (NULL, NULL);
  self->proxy_listeners = g_hash_table_new_full (NULL, NULL, NULL, proxy_listener_free);

  /* raw-paths: the handler must see the target as sent, not decoded. */
  self->soup = soup_server_new ("raw-paths", TRUE, "server-header", NULL, NULL);
  soup_server_add_early_handler (self->soup, NULL, on_headers_read, self, NULL);
  soup_server_add_handler (self->soup, NULL, on_request, self, NULL);
  g_signal_connect (self->soup, "request-started", G_CALLBACK (on_request_started), self);
  g_signal_connect (self->soup, "request-finished", G_CALLBACK (on_request_done), self);
  g_signal_connect (self->soup, "request-aborted", G_CALLBACK (on_request_done), self);

  if (!listen_unreachably (self->soup, self->listener, &call->error))
    return G_SOURCE_REMOVE;

  self->accept_source = watch_listener (self->listener, on_listener_ready, self,
                                        "[sandbox] gateway accept");

  call->ok = TRUE;
  return G_SOURCE_REMOVE;
}

static gboolean
stop_on_gateway_thread (gpointer user_data)
{
  SandboxGatewayServer *self = user_data;
  GHashTableIter iter;
  SandboxGatewayConnection *connection;

  self->closed = TRUE;
  g_cancellable_cancel (self->tunnels);

  if (self->accept_source != NULL)
    g_source_destroy (self->accept_source);
  g_clear_pointer (&self->accept_source, g_source_unref);
  g_socket_close (self->listener, NULL);
  g_clear_pointer (&self->proxy_listeners, g_hash_table_unref);

  sandbox_gateway_exchanges_abort_all (&self->exchanges);

  /* Connections may outlive this server inside libsoup for a moment. */
  g_hash_table_iter_init (&iter, self->connections);
  while (g_hash_table_iter_next (&iter, (gpointer *) &connection, NULL))
    sandbox_gateway_connection_detach (connection);
  g_hash_table_remove_all (self->connections);
  g_hash_table_remove_all (self->evicted);
  g_queue_clear (&self->quiet);

  g_signal_handlers_disconnect_by_data (self->soup, self);
  soup_server_disconnect (self->soup);
  sandbox_gateway_exchanges_clear (&self->exchanges);
  g_clear_object (&self->soup);

  g_clear_pointer (&self->connections, g_hash_table_unref);
  g_clear_pointer (&self->evicted, g_hash_table_unref);
  g_clear_object (&self->stand_in_address);

  return G_SOURCE_REMOVE;
}

static void
server_clear (SandboxGatewayServer *self)
{
  g_object_unref (self->listener);
  g_object_unref (self->policy);
  g_clear_pointer (&self->ca, sandbox_gateway_ca_unref);
  g_free (self->upstream_ca_file);
  g_object_unref (self->tunnels);
  g_mutex_clear (&self->policy_lock);
  g_free (self);
}

/*
 * sandbox_gateway_server_new:
 * @listener: a bound, listening socket
 * @ca: (nullable): the CA to end tunnels' TLS with; %NULL answers an
 *   allowed CONNECT 501
 * @upstream_ca_file: (nullable): the CA certificates libcurl trusts for
 *   upstreams; %NULL: the system's
 *
 * Starts serving @listener on the gateway thread, and returns once it is.
 */
SandboxGatewayServer *
sandbox_gateway_server_new (GSocket                              *listener,
                            SandboxNetworkPolicy                 *policy,
                            guint                                 request_timeout_ms,
                            guint                                 header_timeout_ms,
                            SandboxGatewayCa                     *ca,
                            const char                           *upstream_ca_file,
                            const SandboxGatewayServerCallbacks  *callbacks,
                            gpointer                              user_data,
                            GError                              **error)
{
  SandboxGatewayServer *self = g_new0 (SandboxGatewayServer, 1);
  StartCall call = { self };

  self->ca = ca != NULL ? sandbox_gateway_ca_ref (ca) : NULL;
  self->upstream_ca_file = g_strdup (upstream_ca_file);
  self->tunnels = g_cancellable_new ();

  g_mutex_init (&self->policy_lock);
  self->policy = g_object_ref (policy);
  self->request_timeout_ms = request_timeout_ms;
  self->header_timeout_ms = header_timeout_ms;
  self->callbacks = *callbacks;
  self->user_data = user_data;
  self->listener = g_object_ref (listener);

  sandbox_gateway_loop_invoke_sync (start_on_gateway_thread, &call);

  if (!call.ok)
    {
      g_propagate_error (error, call.error);
      sandbox_gateway_loop_invoke_sync (stop_on_gateway_thread, self);
      server_clear (self);
      return NULL;
    }

  return self;
}

SandboxNetworkPolicy *
sandbox_gateway_server_dup_policy (SandboxGatewayServer *self)
{
  guint generation;

  return current_policy (self, &generation);
}

/* Swaps the policy atomically; requests decided under the old one are
 * aborted on the gateway thread. */
void
sandbox_gateway_server_set_policy (SandboxGatewayServer *self,
                                   SandboxNetworkPolicy *policy)
{
  g_autoptr(SandboxNetworkPolicy) old = NULL;

  g_mutex_lock (&self->policy_lock);
  old = g_steal_pointer (&self->policy);
  self->policy = g_object_ref (policy);
  g_atomic_int_inc (&self->policy_generation);
  g_mutex_unlock (&self->policy_lock);

  sandbox_gateway_loop_invoke_sync (abort_stale_exchanges, self);
}

/* Stops listening, aborts in-flight requests and drops every connection. */
void
sandbox_gateway_server_free (SandboxGatewayServer *self)
{
  if (self == NULL)
    return;

  sandbox_gateway_loop_invoke_sync (stop_on_gateway_thread, self);
  server_clear (self);
}
