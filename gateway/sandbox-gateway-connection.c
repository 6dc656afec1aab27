/* sandbox-gateway-connection.c — one guest connection and its deadline
 *
 * A SandboxGatewayConnection is the gateway's side of one connection it
 * accepted and handed to libsoup: the socket, the stream libsoup reads and
 * writes (sandbox-gateway-stream.c), the deadline of what the connection is
 * doing (reading a head, a request, writing an answer), and its lifetime.
 * It reports what happened through SandboxGatewayConnectionEvents and never
 * calls into the server.
 *
 * Connections are accepted by the gateway rather than by libsoup so that
 * each one can carry a deadline: libsoup 3.2 has no header or request
 * timeout, and no release has one yet (SoupServer and SoupServerConnection
 * have no timeout on libsoup's main branch after 3.7.1). libsoup does not expose the socket of a connection
 * accepted as a stream, but it hands back the remote address it was given:
 * each connection gets its own stand-in address object, which carries the
 * connection and frees it when libsoup lets go of the connection. The
 * address is an inet one: given the Unix socket's address, libsoup logs
 * criticals while building the URI of an HTTP/1.0 request without Host
 * (parse_headers() in soup-server-message-io-http1.c casts the local address
 * to GInetSocketAddress; so in 3.2 and still on libsoup's main branch after
 * 3.7.1).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <sys/socket.h>

#include "sandbox-gateway-answer-private.h"
#include "sandbox-gateway-connection-private.h"
#include "sandbox-gateway-stream-private.h"

struct _SandboxGatewayConnection
{
  const SandboxGatewayConnectionEvents *events; /* NULL once detached */
  gpointer user_data;

  GSocket *socket;              /* weak: libsoup owns the connection */
  SandboxGatewayStream *stream; /* weak, likewise */
  GSocketAddress *address;      /* the stand-in remote address that carries it */
  GSource *deadline;
  gint64 deadline_us;
  SandboxGatewayPhase phase;
  SoupServerMessage *current;   /* borrowed, the message the phase is about */
  gboolean input_refused;       /* a request cut short or too slow was audited */
  SandboxGatewayArrival arrival; /* the listener it was accepted on */
  char *tunnel_origin;          /* a tunnel's: the origin its CONNECT named */
};

static GQuark
connection_quark (void)
{
  return g_quark_from_static_string ("sandbox-gateway-connection");
}

static GQuark
framed_quark (void)
{
  return g_quark_from_static_string ("sandbox-gateway-framed");
}

/* The deadline */

static gboolean
dispatch_deadline (GSource     *source,
                   GSourceFunc  callback,
                   gpointer     user_data)
{
  g_source_set_ready_time (source, -1);
  return callback (user_data);
}

static GSourceFuncs deadline_funcs = {
  .dispatch = dispatch_deadline,
};

static gboolean
on_deadline (gpointer user_data)
{
  SandboxGatewayConnection *self = user_data;

  /* A source that was ready in this iteration is dispatched even if another
   * source re-armed it meanwhile (an answer decided at the same moment). */
  if (self->deadline_us < 0)
    return G_SOURCE_CONTINUE;
  if (g_get_monotonic_time () < self->deadline_us)
    {
      g_source_set_ready_time (self->deadline, self->deadline_us);
      return G_SOURCE_CONTINUE;
    }

  if (self->events != NULL)
    self->events->deadline (self, self->user_data);

  return G_SOURCE_CONTINUE;
}

/*
 * sandbox_gateway_connection_arm:
 * @msg: (nullable): the message the phase is about
 *
 * Starts @phase, which must end within @timeout_ms.
 */
void
sandbox_gateway_connection_arm (SandboxGatewayConnection *self,
                                SandboxGatewayPhase       phase,
                                SoupServerMessage        *msg,
                                guint                     timeout_ms)
{
  gint64 ready_us = g_source_get_ready_time (self->deadline);

  self->phase = phase;
  self->current = msg;
  self->deadline_us = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  /* g_source_set_ready_time() wakes the context up (an eventfd write and an
   * extra loop iteration) even on its own thread, and a request re-arms its
   * connection four times. Only an earlier deadline needs the source moved:
   * a later one is found when the source fires early and re-arms itself. */
  if (ready_us < 0 || ready_us > self->deadline_us)
    g_source_set_ready_time (self->deadline, self->deadline_us);
}

/* The source may still fire once; it then finds nothing armed. */
void
sandbox_gateway_connection_disarm (SandboxGatewayConnection *self)
{
  self->phase = SANDBOX_GATEWAY_PHASE_IDLE;
  self->current = NULL;
  self->deadline_us = -1;
}

/* Shutting the socket down, rather than closing it, makes libsoup's pending
 * I/O fail and lets it tear the connection down itself. */
void
sandbox_gateway_connection_drop (SandboxGatewayConnection *self)
{
  sandbox_gateway_connection_disarm (self);
  if (self->socket != NULL)
    g_socket_shutdown (self->socket, TRUE, TRUE, NULL);
}

SandboxGatewayPhase
sandbox_gateway_connection_get_phase (SandboxGatewayConnection *self)
{
  return self->phase;
}

/* Returns: (nullable) (transfer none): the message the phase is about */
SoupServerMessage *
sandbox_gateway_connection_get_current (SandboxGatewayConnection *self)
{
  return self->current;
}

gboolean
sandbox_gateway_connection_is_current (SandboxGatewayConnection *self,
                                       SoupServerMessage        *msg)
{
  return self != NULL && self->current == msg;
}

/* Life cycle */

static void
connection_free (gpointer data)
{
  SandboxGatewayConnection *self = data;

  if (self->events != NULL)
    self->events->closed (self, self->user_data);
  if (self->stream != NULL)
    {
      sandbox_gateway_stream_set_refusal_func (self->stream, NULL, NULL);
      sandbox_gateway_stream_set_hangup_func (self->stream, NULL, NULL);
    }

  g_source_destroy (self->deadline);
  g_source_unref (self->deadline);
  g_clear_weak_pointer (&self->socket);
  g_clear_weak_pointer (&self->stream);
  g_free (self->tunnel_origin);
  g_free (self);
}

/*
 * sandbox_gateway_connection_new:
 * @socket: a connection just accepted
 * @arrival: the kind of listener it was accepted on
 * @events: (not nullable): how to report what happens; must outlive the
 *   connection, or be detached first
 *
 * Returns: (transfer full): the connection, with its headers deadline
 *   running; hand it to sandbox_gateway_connection_serve()
 */
SandboxGatewayConnection *
sandbox_gateway_connection_new (GSocket                              *socket,
                                SandboxGatewayArrival                 arrival,
                                guint                                 header_timeout_ms,
                                const SandboxGatewayConnectionEvents *events,
                                gpointer                              user_data)
{
  SandboxGatewayConnection *self = g_new0 (SandboxGatewayConnection, 1);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);

  self->events = events;
  self->user_data = user_data;
  self->arrival = arrival;
  g_set_weak_pointer (&self->socket, socket);
  self->address = g_inet_socket_address_new (loopback, 0);
  self->deadline = g_source_new (&deadline_funcs, sizeof (GSource));
  g_source_set_callback (self->deadline, on_deadline, self, NULL);
  g_source_set_static_name (self->deadline, "[sandbox] gateway connection deadline");
  g_source_attach (self->deadline, g_main_context_get_thread_default ());

  g_object_set_qdata_full (G_OBJECT (self->address), connection_quark (), self, connection_free);

  /* Until libsoup starts reading, the headers deadline already runs. */
  sandbox_gateway_connection_arm (self, SANDBOX_GATEWAY_PHASE_HEADERS, NULL, header_timeout_ms);

  return self;
}

static void
on_input_refused (guint       status,
                  const char *reason,
                  gpointer    user_data)
{
  SandboxGatewayConnection *self = user_data;

  if (self->events != NULL)
    self->events->input_refused (self, status, reason, self->user_data);
  if (status != 0)
    sandbox_gateway_answer_directly (self->socket, status);
}

static gboolean
on_hangup (gpointer user_data)
{
  SandboxGatewayConnection *self = user_data;

  if (self->events != NULL)
    self->events->hangup (self, self->user_data);
  return G_SOURCE_CONTINUE;
}

/*
 * sandbox_gateway_connection_serve:
 * @self: (transfer full): a new connection
 * @local_address: the address libsoup is told the connection was made to
 *
 * Hands the connection to libsoup, which owns it from now on. On failure the
 * connection is freed and its socket closed.
 */
gboolean
sandbox_gateway_connection_serve (SandboxGatewayConnection  *self,
                                  SoupServer                *soup,
                                  GSocketAddress            *local_address,
                                  GError                   **error)
{
  g_autoptr(GSocketAddress) address = self->address;   /* the address owns the connection */
  g_autoptr(GSocket) socket = g_object_ref (self->socket);
  g_autoptr(SandboxGatewayStream) stream = NULL;

  /* Not a plain GSocketConnection: see sandbox-gateway-stream.c. */
  stream = sandbox_gateway_stream_new (socket);
  g_set_weak_pointer (&self->stream, stream);
  sandbox_gateway_stream_set_refusal_func (stream, on_input_refused, self);
  sandbox_gateway_stream_set_hangup_func (stream, on_hangup, self);

  if (!soup_server_accept_iostream (soup, G_IO_STREAM (stream), local_address, address, error))
    {
      g_socket_close (socket, NULL);
      return FALSE;
    }

  return TRUE;
}

/*
 * sandbox_gateway_connection_of:
 *
 * Returns: (nullable) (transfer none): the connection @msg came on
 */
SandboxGatewayConnection *
sandbox_gateway_connection_of (SoupServerMessage *msg)
{
  GSocketAddress *address = soup_server_message_get_remote_address (msg);

  if (address == NULL)
    return NULL;

  return g_object_get_qdata (G_OBJECT (address), connection_quark ());
}

/* The server is going away: the connection reports nothing more, and its
 * deadline ends. It may outlive the server inside libsoup for a moment. */
void
sandbox_gateway_connection_detach (SandboxGatewayConnection *self)
{
  self->events = NULL;
  self->user_data = NULL;
  sandbox_gateway_connection_disarm (self);
}

/* The stream */

gboolean
sandbox_gateway_connection_is_in_head (SandboxGatewayConnection *self)
{
  return self->stream != NULL && sandbox_gateway_stream_is_in_head (self->stream);
}

/* A byte the guest sent that nobody has read yet. */
static gboolean
has_unread_bytes (SandboxGatewayConnection *self)
{
  char byte;

  return self->socket != NULL && !g_socket_is_closed (self->socket) &&
         recv (g_socket_get_fd (self->socket), &byte, 1, MSG_PEEK | MSG_DONTWAIT) > 0;
}

/*
 * sandbox_gateway_connection_has_spoken:
 *
 * Whether the guest has sent anything on the connection: a byte read
 * already, or one waiting in the socket. libsoup reads a connection only
 * when the main loop gets to it, so one accepted in the same burst as
 * another may hold a whole request nobody has read yet.
 *
 * Returns: %TRUE once the guest has sent a byte
 */
gboolean
sandbox_gateway_connection_has_spoken (SandboxGatewayConnection *self)
{
  if (self->stream != NULL && sandbox_gateway_stream_has_received (self->stream))
    return TRUE;

  return has_unread_bytes (self);
}

/*
 * sandbox_gateway_connection_waits_for_head:
 *
 * Whether the connection waits for a request of which nothing has come: a
 * kept-alive one between its requests (or a new one), with no byte of the
 * next head read and none waiting in the socket.
 *
 * Returns: %TRUE if closing it now cuts no request short
 */
gboolean
sandbox_gateway_connection_waits_for_head (SandboxGatewayConnection *self)
{
  return self->phase == SANDBOX_GATEWAY_PHASE_HEADERS &&
         !sandbox_gateway_connection_is_in_head (self) && !has_unread_bytes (self);
}

/*
 * sandbox_gateway_connection_get_deadline_us:
 *
 * Returns: the monotonic time its current phase must end by, -1 if none:
 *   of two connections waiting for a head, the one that has waited longer
 *   has the earlier
 */
gint64
sandbox_gateway_connection_get_deadline_us (SandboxGatewayConnection *self)
{
  return self->deadline_us;
}

/* A connection of no listener (none: a test's message) is the socket's. */
SandboxGatewayArrival
sandbox_gateway_connection_get_arrival (SandboxGatewayConnection *self)
{
  return self != NULL ? self->arrival : SANDBOX_GATEWAY_ARRIVAL_SOCKET;
}

/*
 * sandbox_gateway_connection_set_tunnel_origin:
 * @origin: the allowed origin the tunnel's CONNECT named
 *
 * Marks a connection that carries a tunnel's requests: each must name
 * @origin.
 */
void
sandbox_gateway_connection_set_tunnel_origin (SandboxGatewayConnection *self,
                                              const char               *origin)
{
  g_free (self->tunnel_origin);
  self->tunnel_origin = g_strdup (origin);
}

/* Returns: (nullable): the origin a tunnel's connection is bound to */
const char *
sandbox_gateway_connection_get_tunnel_origin (SandboxGatewayConnection *self)
{
  return self != NULL ? self->tunnel_origin : NULL;
}

/* Returns: (nullable) (transfer none): the connection's socket, while
 * libsoup has it */
GSocket *
sandbox_gateway_connection_get_socket (SandboxGatewayConnection *self)
{
  return self->socket;
}

/* libsoup takes a target not starting with "/" for an absolute URI (or
 * "*"), and builds the request URI from it rather than from Host: only the
 * stream saw which one the guest sent. Ask before the stream moves on to
 * the body. */
gboolean
sandbox_gateway_connection_target_is_origin_form (SandboxGatewayConnection *self)
{
  return self != NULL && self->stream != NULL &&
         sandbox_gateway_stream_target_is_origin_form (self->stream);
}

static SandboxGatewayBody
body_of (SoupServerMessage *msg,
         guint64           *length)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);

  *length = 0;
  switch (soup_message_headers_get_encoding (headers))
    {
    case SOUP_ENCODING_NONE:
      return SANDBOX_GATEWAY_BODY_NONE;
    case SOUP_ENCODING_CONTENT_LENGTH:
      *length = (guint64) soup_message_headers_get_content_length (headers);
      return SANDBOX_GATEWAY_BODY_LENGTH;
    case SOUP_ENCODING_CHUNKED:
      return SANDBOX_GATEWAY_BODY_CHUNKED;
    case SOUP_ENCODING_UNRECOGNIZED:
    case SOUP_ENCODING_EOF:
    case SOUP_ENCODING_BYTERANGES:
    default:
      return SANDBOX_GATEWAY_BODY_UNKNOWN;
    }
}

/*
 * sandbox_gateway_connection_track_body:
 * @self: (nullable): the connection @msg came on
 *
 * Tells the connection's stream how the body of @msg is framed, as libsoup
 * parsed it, once per message and before libsoup reads any of it.
 *
 * Returns: %FALSE if the stream can follow the connection no further: the
 *   request must be refused and the connection closed
 */
gboolean
sandbox_gateway_connection_track_body (SandboxGatewayConnection *self,
                                       SoupServerMessage        *msg)
{
  SandboxGatewayBody body;
  guint64 length;

  if (g_object_get_qdata (G_OBJECT (msg), framed_quark ()) != NULL)
    return TRUE;
  g_object_set_qdata (G_OBJECT (msg), framed_quark (), GINT_TO_POINTER (TRUE));

  if (self == NULL || self->stream == NULL)
    return FALSE;

  body = body_of (msg, &length);
  return sandbox_gateway_stream_begin_body (self->stream, body, length) &&
         body != SANDBOX_GATEWAY_BODY_UNKNOWN;
}

void
sandbox_gateway_connection_watch_for_hangup (SandboxGatewayConnection *self)
{
  if (self != NULL && self->stream != NULL)
    sandbox_gateway_stream_watch_for_hangup (self->stream);
}

void
sandbox_gateway_connection_hold_response_head (SandboxGatewayConnection *self)
{
  if (self != NULL && self->stream != NULL)
    sandbox_gateway_stream_hold_response_head (self->stream);
}

/* Returns: %FALSE if a held head could not be sent: the connection's
 * response is broken. */
gboolean
sandbox_gateway_connection_release_response_head (SandboxGatewayConnection *self)
{
  return self->stream == NULL || sandbox_gateway_stream_release_response_head (self->stream);
}

/*
 * sandbox_gateway_connection_claim_refusal:
 *
 * A request cut short, too slow or badly framed is audited once per
 * connection, whichever of the deadline and the stream notices first.
 *
 * Returns: %TRUE the first time only
 */
gboolean
sandbox_gateway_connection_claim_refusal (SandboxGatewayConnection *self)
{
  if (self->input_refused)
    return FALSE;

  self->input_refused = TRUE;
  return TRUE;
}
