/* sandbox-gateway.c — the per-session network gateway
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <gio/gunixsocketaddress.h>
#include <sys/stat.h>

#include "sandbox-error.h"
#include "sandbox-gateway.h"
#include "sandbox-gateway-ca-private.h"
#include "sandbox-gateway-relay-private.h"
#include "sandbox-gateway-event-private.h"
#include "sandbox-gateway-server-private.h"
#include "sandbox-log-private.h"
#include "sandbox-signal-context-private.h"

/**
 * SandboxGateway:
 *
 * The per-session network gateway: an HTTP server on a Unix socket that
 * forwards requests to the origins a [class@Sandbox.NetworkPolicy] allows, adding the
 * headers (credentials) the policy holds for them, so that the guest never
 * sees them.
 *
 * The socket lives in a fresh directory of mode 0700 and has mode 0600; a
 * driver binds it into the guest. Each request must name an allowed origin's
 * host in a single `Host` header and use an origin-form target (on a proxy
 * listener, see [method@Sandbox.Gateway.add_proxy_listener], also an
 * absolute-form one); `CONNECT` and methods other than GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS are
 * refused with 403 (on a proxy listener an allowed `CONNECT` opens a tunnel
 * whose TLS the gateway ends, see [property@Sandbox.Gateway:ca-directory]),
 * more than 16 requests in flight with 503, and malformed or
 * ambiguous requests with 400 — before anything is forwarded. Upstream
 * requests carry only the guest's `Content-Type` and `Accept` plus the rule's
 * headers, follow no redirect (a 3xx becomes 502), use no proxy, and are
 * limited to 1 MiB of body each way and to the request deadline; any failure
 * becomes 502 and is reported on [signal@Sandbox.Gateway::upstream-error]. Answers the
 * gateway makes itself carry a %SANDBOX_GATEWAY_ERROR_HEADER.
 *
 * Every gateway of a process is served by one shared gateway thread with its
 * own #GMainContext, so a busy application main loop never stalls a guest.
 * Signals are emitted in the thread-default main context of the thread that
 * created the gateway or last set its policy — for a call the library makes
 * on a caller's behalf in a worker thread ([method@Sandbox.Backend.create_async],
 * [method@Sandbox.Session.set_network_policy_async]), the caller's. They are
 * delivered while that context is iterated; at most 1024 emissions wait for
 * it, past that the oldest are dropped and counted
 * ([method@Sandbox.Gateway.get_dropped_events]); those still waiting when the
 * gateway is finalized are freed with it.
 */

#define DEFAULT_REQUEST_TIMEOUT_MS 30000
#define DEFAULT_HEADER_TIMEOUT_MS 5000
#define SOCKET_NAME "network.sock"
#define LISTEN_BACKLOG 256

struct _SandboxGateway
{
  GObject parent_instance;

  SandboxNetworkPolicy *initial_policy;
  guint request_timeout_ms;
  guint header_timeout_ms;
  char *ca_directory;
  char *upstream_ca_file;
  char *ca_file;
  char *session_id;

  GMutex lock;
  char *directory;
  char *socket_path;
  SandboxGatewayServer *server;
  SandboxGatewayRelay *relay;
  SandboxNetworkPolicy *parked_policy;   /* while parked: server NULL */
  GMutex park_lock;                      /* one park or unpark at a time */
};

static void sandbox_gateway_initable_iface_init (GInitableIface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SandboxGateway, sandbox_gateway, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                      sandbox_gateway_initable_iface_init))

enum {
  PROP_0,
  PROP_POLICY,
  PROP_REQUEST_TIMEOUT_MS,
  PROP_HEADER_TIMEOUT_MS,
  PROP_SOCKET_PATH,
  PROP_CA_DIRECTORY,
  PROP_UPSTREAM_CA_FILE,
  PROP_SESSION_ID,
  N_PROPS
};

enum {
  SIGNAL_UPSTREAM_ERROR,
  SIGNAL_AUDIT,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

/* What the relay delivers, as the gateway's signals. */
static void
emit_signals (GObject             *owner,
              SandboxGatewayEvent *event,
              const GError        *cause)
{
  if (event != NULL)
    {
      /* Here, before any handler sees it: the server that made it knows
       * nothing of sessions. */
      sandbox_gateway_event_set_session_id (event, SANDBOX_GATEWAY (owner)->session_id);
      g_signal_emit (owner, signals[SIGNAL_AUDIT], 0, event);
    }
  if (cause != NULL)
    g_signal_emit (owner, signals[SIGNAL_UPSTREAM_ERROR], 0, cause);
}

static void
on_server_audit (SandboxGatewayEvent *event,
                 gpointer             user_data)
{
  sandbox_gateway_relay_queue (user_data, event, NULL);
}

static void
on_server_upstream_error (const GError *cause,
                          gpointer      user_data)
{
  sandbox_gateway_relay_queue (user_data, NULL, cause);
}

static const SandboxGatewayServerCallbacks server_callbacks = {
  .audit = on_server_audit,
  .upstream_error = on_server_upstream_error,
};

/* Socket and directory */

static GSocket *
listen_on (const char  *path,
           GError     **error)
{
  g_autoptr(GSocket) socket = NULL;
  g_autoptr(GSocketAddress) address = NULL;

  socket = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT, error);
  if (socket == NULL)
    return NULL;

  address = g_unix_socket_address_new (path);
  if (!g_socket_bind (socket, address, FALSE, error))
    return NULL;

  /* The directory is 0700 already; the socket gets 0600 before anyone can
   * connect to it. */
  if (g_chmod (path, 0600) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not restrict the gateway socket %s: %s", path, g_strerror (saved_errno));
      return NULL;
    }

  /* Guests may open many connections at once; the default backlog of 10
   * would make their connect() fail with EAGAIN. */
  g_socket_set_listen_backlog (socket, LISTEN_BACKLOG);
  if (!g_socket_listen (socket, error))
    return NULL;

  return g_steal_pointer (&socket);
}

static void
remove_socket_and_directory (SandboxGateway *self)
{
  if (self->socket_path != NULL && g_unlink (self->socket_path) != 0 && errno != ENOENT)
    g_warning ("Could not remove the gateway socket %s: %s", self->socket_path, g_strerror (errno));
  if (self->directory != NULL && g_rmdir (self->directory) != 0 && errno != ENOENT)
    g_warning ("Could not remove the gateway directory %s: %s", self->directory, g_strerror (errno));

  g_clear_pointer (&self->directory, g_free);
}

/* Listens on the socket again and serves it with a new server over
 * @policy (the CA read again from its directory, where it stays). */
static SandboxGatewayServer *
start_server (SandboxGateway        *self,
              SandboxNetworkPolicy  *policy,
              GError               **error)
{
  g_autoptr(GSocket) listener = NULL;
  g_autoptr(SandboxGatewayCa) ca = NULL;

  if (self->ca_directory != NULL)
    {
      ca = sandbox_gateway_ca_open (self->ca_directory, error);
      if (ca == NULL)
        return NULL;
      if (self->ca_file == NULL)
        self->ca_file = g_strdup (sandbox_gateway_ca_get_file (ca));
    }
  listener = listen_on (self->socket_path, error);
  if (listener == NULL)
    return NULL;
  return sandbox_gateway_server_new (listener, policy, self->request_timeout_ms,
                                     self->header_timeout_ms, ca, self->upstream_ca_file,
                                     &server_callbacks, self->relay, error);
}

static gboolean
sandbox_gateway_initable_init (GInitable     *initable,
                               GCancellable  *cancellable,
                               GError       **error)
{
  SandboxGateway *self = SANDBOX_GATEWAY (initable);
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (self->server == NULL, FALSE);

  policy = self->initial_policy != NULL ? g_object_ref (self->initial_policy)
                                        : sandbox_network_policy_new_deny_all ();

  self->directory = g_dir_make_tmp ("sandbox-gw-XXXXXX", &local_error);
  if (self->directory == NULL)
    {
      g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                  "Could not create the gateway directory: ");
      return FALSE;
    }
  g_chmod (self->directory, 0700);
  self->socket_path = g_build_filename (self->directory, SOCKET_NAME, NULL);

  self->relay = sandbox_gateway_relay_new (G_OBJECT (self), emit_signals);
  self->server = start_server (self, policy, error);
  if (self->server == NULL)
    {
      remove_socket_and_directory (self);
      return FALSE;
    }

  sandbox_log_gateway_event ("gateway-start", self->socket_path, self->session_id, policy);
  g_clear_object (&self->initial_policy);
  return TRUE;
}

static void
sandbox_gateway_initable_iface_init (GInitableIface *iface)
{
  iface->init = sandbox_gateway_initable_init;
}

/* GObject */

static void
sandbox_gateway_finalize (GObject *object)
{
  SandboxGateway *self = SANDBOX_GATEWAY (object);

  sandbox_gateway_close (self);

  g_clear_object (&self->initial_policy);
  g_clear_object (&self->parked_policy);
  if (self->relay != NULL)
    sandbox_gateway_relay_close (self->relay);
  g_clear_pointer (&self->relay, sandbox_gateway_relay_unref);
  g_free (self->socket_path);
  g_free (self->ca_directory);
  g_free (self->upstream_ca_file);
  g_free (self->ca_file);
  g_free (self->session_id);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->park_lock);

  G_OBJECT_CLASS (sandbox_gateway_parent_class)->finalize (object);
}

static void
sandbox_gateway_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  SandboxGateway *self = SANDBOX_GATEWAY (object);

  switch (prop_id)
    {
    case PROP_POLICY:
      g_value_take_object (value, sandbox_gateway_dup_policy (self));
      break;
    case PROP_REQUEST_TIMEOUT_MS:
      g_value_set_uint (value, self->request_timeout_ms);
      break;
    case PROP_HEADER_TIMEOUT_MS:
      g_value_set_uint (value, self->header_timeout_ms);
      break;
    case PROP_SOCKET_PATH:
      g_value_set_string (value, self->socket_path);
      break;
    case PROP_CA_DIRECTORY:
      g_value_set_string (value, self->ca_directory);
      break;
    case PROP_UPSTREAM_CA_FILE:
      g_value_set_string (value, self->upstream_ca_file);
      break;
    case PROP_SESSION_ID:
      g_value_set_string (value, self->session_id);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_gateway_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  SandboxGateway *self = SANDBOX_GATEWAY (object);

  switch (prop_id)
    {
    case PROP_POLICY:
      if (self->server == NULL)
        g_set_object (&self->initial_policy, g_value_get_object (value));
      else if (g_value_get_object (value) != NULL)
        sandbox_gateway_set_policy (self, g_value_get_object (value));
      break;
    case PROP_REQUEST_TIMEOUT_MS:
      self->request_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_HEADER_TIMEOUT_MS:
      self->header_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_CA_DIRECTORY:
      self->ca_directory = g_value_dup_string (value);
      break;
    case PROP_UPSTREAM_CA_FILE:
      self->upstream_ca_file = g_value_dup_string (value);
      break;
    case PROP_SESSION_ID:
      self->session_id = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_gateway_class_init (SandboxGatewayClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_gateway_finalize;
  object_class->get_property = sandbox_gateway_get_property;
  object_class->set_property = sandbox_gateway_set_property;

  /**
   * SandboxGateway:policy:
   *
   * The network policy requests are decided by. Setting it swaps it
   * atomically and aborts requests in flight. A gateway constructed without
   * one denies everything.
   */
  properties[PROP_POLICY] =
    g_param_spec_object ("policy", NULL, NULL,
                         SANDBOX_TYPE_NETWORK_POLICY,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxGateway:request-timeout-ms:
   *
   * How long a request may take, from its first byte to the end of the
   * answer, in milliseconds.
   */
  properties[PROP_REQUEST_TIMEOUT_MS] =
    g_param_spec_uint ("request-timeout-ms", NULL, NULL,
                       1, G_MAXINT, DEFAULT_REQUEST_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxGateway:header-timeout-ms:
   *
   * How long a connection may take to send a request's headers (or stay idle
   * between requests), in milliseconds; slower connections are closed.
   */
  properties[PROP_HEADER_TIMEOUT_MS] =
    g_param_spec_uint ("header-timeout-ms", NULL, NULL,
                       1, G_MAXINT, DEFAULT_HEADER_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxGateway:socket-path:
   *
   * The path of the gateway's Unix socket.
   */
  properties[PROP_SOCKET_PATH] =
    g_param_spec_string ("socket-path", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxGateway:ca-directory:
   *
   * The directory of the certificate authority the gateway answers the
   * guest's TLS with after an allowed `CONNECT` on a proxy listener, made
   * there on first use (`ca.pem`, and `ca.key` of mode 0600, which must
   * stay on the host); its parent must exist. Delete the directory to
   * rotate the CA: the next gateway makes a new one. %NULL (the default)
   * answers an allowed `CONNECT` 501 instead.
   */
  properties[PROP_CA_DIRECTORY] =
    g_param_spec_string ("ca-directory", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxGateway:upstream-ca-file:
   *
   * A PEM file of the CA certificates the gateway trusts for `https`
   * upstreams, instead of the system's store; %NULL (the default) uses the
   * system's.
   */
  properties[PROP_UPSTREAM_CA_FILE] =
    g_param_spec_string ("upstream-ca-file", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxGateway:session-id:
   *
   * The session whose guest the gateway serves, if it has one: it is on
   * every [struct@Sandbox.GatewayEvent] ([method@Sandbox.GatewayEvent.get_session_id])
   * and on the gateway's log events (`SANDBOX_SESSION_ID`), so that an
   * audit line can be tied to its session. The bubblewrap backend sets
   * it; %NULL (the default) for a gateway of no session.
   */
  properties[PROP_SESSION_ID] =
    g_param_spec_string ("session-id", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SandboxGateway::upstream-error:
   * @self: the gateway
   * @cause: why an allowed request failed: a %SANDBOX_ERROR (a limit, a
   *   refused redirect) or a #GIOErrorEnum code (refused, timed out,
   *   cancelled by a policy change)
   *
   * Emitted for every request that was allowed but answered with 502. A
   * backend relays it as its `gateway-error`.
   */
  signals[SIGNAL_UPSTREAM_ERROR] =
    g_signal_new ("upstream-error",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_ERROR);

  /**
   * SandboxGateway::audit:
   * @self: the gateway
   * @event: what was decided
   *
   * Emitted for every request the gateway decides on.
   */
  signals[SIGNAL_AUDIT] =
    g_signal_new ("audit",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, SANDBOX_TYPE_GATEWAY_EVENT);
}

static void
sandbox_gateway_init (SandboxGateway *self)
{
  g_mutex_init (&self->lock);
  g_mutex_init (&self->park_lock);
  self->request_timeout_ms = DEFAULT_REQUEST_TIMEOUT_MS;
  self->header_timeout_ms = DEFAULT_HEADER_TIMEOUT_MS;
}

/* Public API */

/**
 * sandbox_gateway_new:
 * @policy: (nullable): the network policy; %NULL denies everything
 * @error: return location for a #GError
 *
 * Creates a gateway listening on a socket in a fresh 0700 directory, with
 * the default 30 s request and 5 s header deadlines.
 *
 * Returns: (transfer full): the serving gateway, or %NULL on error
 */
SandboxGateway *
sandbox_gateway_new (SandboxNetworkPolicy  *policy,
                     GError               **error)
{
  return sandbox_gateway_new_full (policy, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_HEADER_TIMEOUT_MS, error);
}

/**
 * sandbox_gateway_new_full:
 * @policy: (nullable): the network policy; %NULL denies everything
 * @request_timeout_ms: the per-request deadline, at least 1
 * @header_timeout_ms: the request header deadline, at least 1
 * @error: return location for a #GError
 *
 * Creates a gateway like [ctor@Sandbox.Gateway.new], with explicit deadlines.
 *
 * Returns: (transfer full): the serving gateway, or %NULL on error
 */
SandboxGateway *
sandbox_gateway_new_full (SandboxNetworkPolicy  *policy,
                          guint                  request_timeout_ms,
                          guint                  header_timeout_ms,
                          GError               **error)
{
  g_return_val_if_fail (policy == NULL || SANDBOX_IS_NETWORK_POLICY (policy), NULL);
  g_return_val_if_fail (request_timeout_ms > 0 && request_timeout_ms <= G_MAXINT, NULL);
  g_return_val_if_fail (header_timeout_ms > 0 && header_timeout_ms <= G_MAXINT, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return g_initable_new (SANDBOX_TYPE_GATEWAY, NULL, error,
                         "policy", policy,
                         "request-timeout-ms", request_timeout_ms,
                         "header-timeout-ms", header_timeout_ms,
                         NULL);
}

/**
 * sandbox_gateway_get_socket_path:
 * @self: a [class@Sandbox.Gateway]
 *
 * Gets the host path of the Unix socket the gateway listens on.
 *
 * Returns: (type filename): the path of the gateway's Unix socket; it stays
 *   the same after [method@Sandbox.Gateway.close], though nothing listens there then
 */
const char *
sandbox_gateway_get_socket_path (SandboxGateway *self)
{
  g_return_val_if_fail (SANDBOX_IS_GATEWAY (self), NULL);

  return self->socket_path;
}

/**
 * sandbox_gateway_get_ca_file:
 * @self: a [class@Sandbox.Gateway]
 *
 * Gets the certificate of the CA the gateway ends tunnels' TLS with, which
 * a driver gives its guests to trust
 * (see [property@Sandbox.Gateway:ca-directory]).
 *
 * Returns: (type filename) (nullable): the PEM file of the CA's
 *   certificate, or %NULL if the gateway has no CA
 */
const char *
sandbox_gateway_get_ca_file (SandboxGateway *self)
{
  g_return_val_if_fail (SANDBOX_IS_GATEWAY (self), NULL);

  return self->ca_file;
}

/**
 * sandbox_gateway_dup_policy:
 * @self: a [class@Sandbox.Gateway]
 *
 * Gets the network policy the gateway currently enforces; a gateway with no
 * policy denies everything.
 *
 * Returns: (transfer full): the current network policy
 */
SandboxNetworkPolicy *
sandbox_gateway_dup_policy (SandboxGateway *self)
{
  SandboxNetworkPolicy *policy = NULL;

  g_return_val_if_fail (SANDBOX_IS_GATEWAY (self), NULL);

  g_mutex_lock (&self->lock);
  if (self->server != NULL)
    policy = sandbox_gateway_server_dup_policy (self->server);
  else if (self->parked_policy != NULL)
    policy = g_object_ref (self->parked_policy);
  else if (self->initial_policy != NULL)
    policy = g_object_ref (self->initial_policy);
  g_mutex_unlock (&self->lock);

  return policy != NULL ? policy : sandbox_network_policy_new_deny_all ();
}

/**
 * sandbox_gateway_set_policy:
 * @self: a [class@Sandbox.Gateway]
 * @policy: the new network policy
 *
 * Swaps the policy atomically. Requests in flight are aborted: the guest gets
 * 502 with `Sandbox-Error: SANDBOX_UNAVAILABLE`, and each is audited as
 * failed with the reason "policy-changed". Returns once they are. From now
 * on the gateway's signals are emitted in the caller's thread-default main
 * context (see [class@Sandbox.Gateway]). Does nothing after [method@Sandbox.Gateway.close].
 */
void
sandbox_gateway_set_policy (SandboxGateway       *self,
                            SandboxNetworkPolicy *policy)
{
  g_return_if_fail (SANDBOX_IS_GATEWAY (self));
  g_return_if_fail (SANDBOX_IS_NETWORK_POLICY (policy));

  g_mutex_lock (&self->lock);
  if (self->server != NULL || self->parked_policy != NULL)
    {
      g_autoptr(GMainContext) context = sandbox_signal_context_ref ();

      /* Before the swap, so the aborted requests' events follow the caller. */
      sandbox_gateway_relay_set_context (self->relay, context);
      if (self->server != NULL)
        sandbox_gateway_server_set_policy (self->server, policy);
      else
        g_set_object (&self->parked_policy, policy);   /* applied by unpark */
    }
  g_mutex_unlock (&self->lock);

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_POLICY]);
}

/**
 * sandbox_gateway_get_request_timeout_ms:
 * @self: a [class@Sandbox.Gateway]
 *
 * Gets how long the gateway lets each request take, in milliseconds.
 *
 * Returns: the per-request deadline in milliseconds
 */
guint
sandbox_gateway_get_request_timeout_ms (SandboxGateway *self)
{
  g_return_val_if_fail (SANDBOX_IS_GATEWAY (self), 0);

  return self->request_timeout_ms;
}

/**
 * sandbox_gateway_get_header_timeout_ms:
 * @self: a [class@Sandbox.Gateway]
 *
 * Gets how long the gateway waits for a request's headers, in milliseconds.
 *
 * Returns: the request header deadline in milliseconds
 */
guint
sandbox_gateway_get_header_timeout_ms (SandboxGateway *self)
{
  g_return_val_if_fail (SANDBOX_IS_GATEWAY (self), 0);

  return self->header_timeout_ms;
}

/**
 * sandbox_gateway_get_dropped_events:
 * @self: a [class@Sandbox.Gateway]
 *
 * Counts the emissions of [signal@Sandbox.Gateway::audit] and
 * [signal@Sandbox.Gateway::upstream-error] dropped because the main context they
 * belong to was not iterated: at most 1024 wait for it, and past that the
 * oldest is dropped for each new one.
 *
 * Returns: how many emissions were dropped so far
 */
guint64
sandbox_gateway_get_dropped_events (SandboxGateway *self)
{
  g_return_val_if_fail (SANDBOX_IS_GATEWAY (self), 0);

  return self->relay != NULL ? sandbox_gateway_relay_get_dropped (self->relay) : 0;
}

/**
 * sandbox_gateway_add_proxy_listener:
 * @self: a [class@Sandbox.Gateway]
 * @listener: a bound, listening stream socket
 * @error: return location for a #GError
 *
 * Serves @listener too, as an HTTP proxy: the listening socket a sandbox's
 * trusted init bound on the loopback interface of the sandbox's own network
 * namespace and handed to the host (the bubblewrap driver's stub does), so
 * that the guest's clients reach the gateway through `http_proxy` and the
 * guest can neither kill nor replace what listens there.
 *
 * Requests on it are checked and forwarded exactly as on the Unix socket,
 * with two additions: an absolute-form target (`GET http://host/x`) is
 * accepted when its authority is the request's `Host`, and `CONNECT
 * host:port` is checked against the policy's origins — refused with 403
 * when none has that host and port, and otherwise answered 501 (tunnels are
 * not served yet); nothing is ever relayed for a `CONNECT`. Their audit
 * events' arrival is %SANDBOX_GATEWAY_ARRIVAL_PROXY.
 *
 * The gateway owns @listener from now on: it closes it on
 * [method@Sandbox.Gateway.remove_proxy_listener] or
 * [method@Sandbox.Gateway.close]. Connections accepted on it are served to
 * their end either way.
 *
 * Returns: an id for [method@Sandbox.Gateway.remove_proxy_listener], or 0
 *   with %G_IO_ERROR_CLOSED after [method@Sandbox.Gateway.close]
 */
guint
sandbox_gateway_add_proxy_listener (SandboxGateway  *self,
                                    GSocket         *listener,
                                    GError         **error)
{
  guint id = 0;

  g_return_val_if_fail (SANDBOX_IS_GATEWAY (self), 0);
  g_return_val_if_fail (G_IS_SOCKET (listener), 0);
  g_return_val_if_fail (error == NULL || *error == NULL, 0);

  g_mutex_lock (&self->lock);
  if (self->server != NULL)
    id = sandbox_gateway_server_add_proxy_listener (self->server, listener);
  g_mutex_unlock (&self->lock);

  if (id == 0)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CLOSED, "The gateway is closed");
  return id;
}

/**
 * sandbox_gateway_remove_proxy_listener:
 * @self: a [class@Sandbox.Gateway]
 * @id: what [method@Sandbox.Gateway.add_proxy_listener] returned
 *
 * Stops serving the proxy listener @id and closes it; connections accepted
 * on it already are served to their end. Does nothing for an id removed
 * already, or after [method@Sandbox.Gateway.close].
 */
void
sandbox_gateway_remove_proxy_listener (SandboxGateway *self,
                                       guint           id)
{
  g_return_if_fail (SANDBOX_IS_GATEWAY (self));

  g_mutex_lock (&self->lock);
  if (self->server != NULL && id != 0)
    sandbox_gateway_server_remove_proxy_listener (self->server, id);
  g_mutex_unlock (&self->lock);
}

/**
 * sandbox_gateway_park:
 * @self: a [class@Sandbox.Gateway]
 *
 * Stops serving while nothing needs the gateway — a driver's idle session,
 * none of whose guests runs — so that it holds no socket, no connection
 * and no upstream handle: it closes every connection (as
 * [method@Sandbox.Gateway.close] does) and removes its socket, but keeps
 * its directory, its policy (which [method@Sandbox.Gateway.set_policy]
 * still changes) and its CA. [method@Sandbox.Gateway.unpark] serves again,
 * at the same path. Nothing after [method@Sandbox.Gateway.close].
 *
 * Returns: %TRUE when it was serving and is parked now
 */
gboolean
sandbox_gateway_park (SandboxGateway *self)
{
  SandboxGatewayServer *server;

  g_return_val_if_fail (SANDBOX_IS_GATEWAY (self), FALSE);

  g_mutex_lock (&self->park_lock);
  g_mutex_lock (&self->lock);
  server = g_steal_pointer (&self->server);
  if (server != NULL)
    self->parked_policy = sandbox_gateway_server_dup_policy (server);
  g_mutex_unlock (&self->lock);
  if (server != NULL)
    {
      sandbox_gateway_server_free (server);
      if (g_unlink (self->socket_path) != 0 && errno != ENOENT)
        g_warning ("Could not remove the gateway socket %s: %s", self->socket_path,
                   g_strerror (errno));
    }
  g_mutex_unlock (&self->park_lock);
  return server != NULL;
}

/**
 * sandbox_gateway_unpark:
 * @self: a [class@Sandbox.Gateway]
 * @error: return location for a #GError
 *
 * Serves again after [method@Sandbox.Gateway.park]: listens on a new
 * socket at the same path (mode 0600, as at first), under the policy set
 * last. Does nothing for a gateway that is serving.
 *
 * Returns: %TRUE when the gateway serves; %FALSE with @error set when it
 *   could not listen again (it stays parked), or with %G_IO_ERROR_CLOSED
 *   after [method@Sandbox.Gateway.close]
 */
gboolean
sandbox_gateway_unpark (SandboxGateway  *self,
                        GError         **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  SandboxGatewayServer *server = NULL;
  gboolean closed;

  g_return_val_if_fail (SANDBOX_IS_GATEWAY (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  g_mutex_lock (&self->park_lock);
  g_mutex_lock (&self->lock);
  closed = self->server == NULL && self->parked_policy == NULL;
  g_set_object (&policy, self->parked_policy);
  g_mutex_unlock (&self->lock);
  if (policy != NULL && (server = start_server (self, policy, error)) != NULL)
    {
      g_mutex_lock (&self->lock);
      /* The policy set while it was being started wins. */
      sandbox_gateway_server_set_policy (server, self->parked_policy);
      self->server = server;
      g_clear_object (&self->parked_policy);
      g_mutex_unlock (&self->lock);
    }
  g_mutex_unlock (&self->park_lock);
  if (closed)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CLOSED, "The gateway is closed");
  return !closed && (policy == NULL || server != NULL);
}

/**
 * sandbox_gateway_is_parked:
 * @self: a [class@Sandbox.Gateway]
 *
 * Gets whether the gateway is parked ([method@Sandbox.Gateway.park]).
 *
 * Returns: whether [method@Sandbox.Gateway.park] stopped it and nothing
 *   has served it again since
 */
gboolean
sandbox_gateway_is_parked (SandboxGateway *self)
{
  gboolean parked;

  g_return_val_if_fail (SANDBOX_IS_GATEWAY (self), FALSE);

  g_mutex_lock (&self->lock);
  parked = self->parked_policy != NULL;
  g_mutex_unlock (&self->lock);
  return parked;
}

/**
 * sandbox_gateway_close:
 * @self: a [class@Sandbox.Gateway]
 *
 * Stops listening, aborts requests in flight, closes every connection and
 * removes the socket and its directory. Idempotent; finalizing the gateway
 * closes it too.
 */
void
sandbox_gateway_close (SandboxGateway *self)
{
  SandboxGatewayServer *server;
  g_autoptr(SandboxNetworkPolicy) parked = NULL;

  g_return_if_fail (SANDBOX_IS_GATEWAY (self));

  g_mutex_lock (&self->park_lock);
  g_mutex_lock (&self->lock);
  server = g_steal_pointer (&self->server);
  parked = g_steal_pointer (&self->parked_policy);
  g_mutex_unlock (&self->lock);
  g_mutex_unlock (&self->park_lock);

  if (server == NULL && parked == NULL)
    return;

  if (server != NULL)
    sandbox_gateway_server_free (server);
  remove_socket_and_directory (self);
  sandbox_log_gateway_event ("gateway-stop", self->socket_path, self->session_id, NULL);
}
