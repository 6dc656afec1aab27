/* sandbox-gateway-server.c — the gateway-thread side of a gateway
 *
 * A SandboxGatewayServer owns a SoupServer, the connections accepted on the
 * gateway's socket and the upstream transfers, and lives entirely on the
 * gateway thread; only the policy (under its lock) is touched from other
 * threads.
 *
 * Connections are accepted here rather than by libsoup so that each one can
 * carry a deadline (libsoup 3.2 has no header or request timeout) and so that
 * libsoup sees an inet local address: given the Unix socket's address, it
 * logs criticals while building the URI of an HTTP/1.0 request without Host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <string.h>

#include <glib/gstdio.h>
#include <gio/gunixsocketaddress.h>
#include <libsoup/soup.h>

#include "sandbox-error.h"
#include "sandbox-network-policy-private.h"
#include "sandbox-gateway-event-private.h"
#include "sandbox-gateway-http-private.h"
#include "sandbox-gateway-loop-private.h"
#include "sandbox-gateway-server-private.h"
#include "sandbox-gateway-stream-private.h"
#include "sandbox-gateway-upstream-private.h"

/* The reference broker's limit on concurrent upstream requests. */
#define MAX_IN_FLIGHT 16

/* A guest holding more connections than this open is refused new ones, so a
 * guest cannot exhaust the host's file descriptors. */
#define MAX_CONNECTIONS 256

/* Values of the Sandbox-Error header on gateway-generated answers. */
#define SANDBOX_ERROR_HEADER "Sandbox-Error"
#define UPSTREAM_FAILED_CODE "SANDBOX_UPSTREAM_FAILED"

/* RFC 6585; libsoup 3.2 has no name for it. */
#define STATUS_HEADER_FIELDS_TOO_LARGE 431

#define DENIED_BODY "Sandbox network denied"
#define BUSY_BODY "Sandbox broker busy"
#define FAILED_BODY "Sandbox upstream request failed"
#define BAD_REQUEST_BODY "Sandbox bad request"

struct _SandboxGatewayServer
{
  GMutex policy_lock;
  SandboxNetworkPolicy *policy;
  guint policy_generation;

  guint request_timeout_ms;
  guint header_timeout_ms;
  SandboxGatewayServerCallbacks callbacks;
  gpointer user_data;

  /* Everything below belongs to the gateway thread. */
  GSocket *listener;
  GSource *accept_source;
  SoupServer *soup;
  SandboxUpstream *upstream;
  GSocketAddress *stand_in_address;
  GHashTable *exchanges;   /* SoupServerMessage → Exchange */
  GHashTable *connections; /* Connection set */
  guint n_forwarding;
  gboolean closed;
};

typedef enum
{
  PHASE_IDLE,
  PHASE_HEADERS,
  PHASE_REQUEST,
  PHASE_RESPONSE,
} ConnectionPhase;

typedef struct
{
  SandboxGatewayServer *server;
  GSocket *socket;             /* weak: libsoup owns the connection */
  SandboxGatewayStream *stream; /* weak, likewise */
  GSocketAddress *address;    /* the stand-in remote address that carries it */
  GSource *deadline;
  gint64 deadline_us;
  ConnectionPhase phase;
  SoupServerMessage *current; /* borrowed, the message the phase is about */
  gboolean input_refused;     /* a request cut short or too slow was audited */
} Connection;

typedef enum
{
  EXCHANGE_READING,
  EXCHANGE_FORWARDING,
  EXCHANGE_ANSWERED,
} ExchangeState;

typedef struct
{
  SandboxGatewayServer *server;
  SoupServerMessage *msg;
  Connection *connection;
  ExchangeState state;

  SandboxNetworkPolicy *policy;
  const SandboxNetworkRule *rule;
  guint policy_generation;

  char *host;
  char *target;
  gint64 started_us;

  GByteArray *chunked_body;
  gboolean request_too_large;
  GBytes *request_body;

  CURL *easy;
  struct curl_slist *upstream_headers;
  GByteArray *response_body;
  gboolean response_too_large;
  gboolean redirected;
  char error_buffer[CURL_ERROR_SIZE];
} Exchange;

/* How an upstream exchange failed: the guest's answer, the audit reason and
 * the error reported on upstream-error. */
typedef struct
{
  const char *reason;
  const char *sandbox_error;
  GError *cause;
} Failure;

static GQuark
connection_quark (void)
{
  return g_quark_from_static_string ("sandbox-gateway-connection");
}

/* Audit */

static GQuark
audited_quark (void)
{
  return g_quark_from_static_string ("sandbox-gateway-audited");
}

static void
emit_audit (SandboxGatewayServer            *self,
            const SandboxGatewayAuditRecord *record)
{
  g_autoptr(SandboxGatewayEvent) event = NULL;

  if (self->callbacks.audit == NULL)
    return;

  event = sandbox_gateway_event_new (record);
  self->callbacks.audit (event, self->user_data);
}

/* Audits @msg once: @record gets its method and, from @started_us (0: not
 * started), its duration. */
static void
audit (SandboxGatewayServer      *self,
       SoupServerMessage         *msg,
       gint64                     started_us,
       SandboxGatewayAuditRecord *record)
{
  record->method = soup_server_message_get_method (msg);
  record->duration_us = started_us > 0 ? g_get_monotonic_time () - started_us : 0;
  g_object_set_qdata (G_OBJECT (msg), audited_quark (), GINT_TO_POINTER (TRUE));
  emit_audit (self, record);
}

static void
report_upstream_error (SandboxGatewayServer *self,
                       const GError         *cause)
{
  if (self->callbacks.upstream_error != NULL)
    self->callbacks.upstream_error (cause, self->user_data);
}

/* Answers */

static const char *
sandbox_error_for (SandboxGatewayDecision decision)
{
  switch (decision)
    {
    case SANDBOX_GATEWAY_DECISION_DENIED:
      return sandbox_error_code_name (SANDBOX_ERROR_NETWORK_DENIED);
    case SANDBOX_GATEWAY_DECISION_BUSY:
      return sandbox_error_code_name (SANDBOX_ERROR_BUSY);
    case SANDBOX_GATEWAY_DECISION_BAD_REQUEST:
      return sandbox_error_code_name (SANDBOX_ERROR_INVALID);
    case SANDBOX_GATEWAY_DECISION_FAILED:
    case SANDBOX_GATEWAY_DECISION_ALLOWED:
    default:
      return UPSTREAM_FAILED_CODE;
    }
}

static const char *
body_for (guint status)
{
  switch (status)
    {
    case SOUP_STATUS_FORBIDDEN:
      return DENIED_BODY;
    case SOUP_STATUS_SERVICE_UNAVAILABLE:
      return BUSY_BODY;
    case SOUP_STATUS_BAD_REQUEST:
    case SOUP_STATUS_REQUEST_URI_TOO_LONG:
    case STATUS_HEADER_FIELDS_TOO_LARGE:
      return BAD_REQUEST_BODY;
    default:
      return FAILED_BODY;
    }
}

/* The Sandbox-Error of an answer written without libsoup. */
static const char *
sandbox_error_for_status (guint status)
{
  switch (status)
    {
    case SOUP_STATUS_SERVICE_UNAVAILABLE:
      return sandbox_error_code_name (SANDBOX_ERROR_BUSY);
    case SOUP_STATUS_REQUEST_URI_TOO_LONG:
    case STATUS_HEADER_FIELDS_TOO_LARGE:
      return sandbox_error_code_name (SANDBOX_ERROR_LIMIT);
    case SOUP_STATUS_BAD_REQUEST:
    default:
      return sandbox_error_code_name (SANDBOX_ERROR_INVALID);
    }
}

/* The gateway's answer, written on @socket directly, without blocking, for a
 * connection libsoup is about to drop without a word (or never saw). The
 * connection closes right after, so a guest that does not read loses it,
 * and nothing else may be written on the connection at the time: libsoup is
 * reading a request, or has not started. */
static void
answer_directly (GSocket *socket,
                 guint    status)
{
  const char *body = body_for (status);
  g_autofree char *response = NULL;

  if (socket == NULL)
    return;

  response = g_strdup_printf ("HTTP/1.1 %u %s\r\n"
                              "Content-Type: text/plain\r\n"
                              "Content-Length: %" G_GSIZE_FORMAT "\r\n"
                              SANDBOX_ERROR_HEADER ": %s\r\n"
                              "Connection: close\r\n"
                              "\r\n"
                              "%s",
                              status,
                              status == STATUS_HEADER_FIELDS_TOO_LARGE ? "Request Header Fields Too Large"
                                                                       : soup_status_get_phrase (status),
                              strlen (body),
                              sandbox_error_for_status (status), body);
  g_socket_send_with_blocking (socket, response, strlen (response), FALSE, NULL, NULL);
}

/* A gateway-generated answer. After a refusal made before the body was read,
 * the connection is closed: whatever follows must not be parsed as the next
 * request. */
static void
answer (SoupServerMessage *msg,
        guint              status,
        const char        *sandbox_error,
        gboolean           close_connection)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (msg);
  const char *body = body_for (status);

  soup_server_message_set_status (msg, status, NULL);
  soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, body, strlen (body));
  soup_message_headers_replace (headers, SANDBOX_ERROR_HEADER, sandbox_error);
  if (close_connection)
    soup_message_headers_replace (headers, "Connection", "close");
}

static gboolean
request_has_body (SoupServerMessage *msg)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);

  return soup_message_headers_get_one (headers, "Transfer-Encoding") != NULL ||
         soup_message_headers_get_content_length (headers) > 0;
}

/* Connections and their deadlines */

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

static void
connection_arm (Connection        *connection,
                ConnectionPhase    phase,
                SoupServerMessage *msg,
                guint              timeout_ms)
{
  gint64 ready_us = g_source_get_ready_time (connection->deadline);

  connection->phase = phase;
  connection->current = msg;
  connection->deadline_us = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  /* g_source_set_ready_time() wakes the context up (an eventfd write and an
   * extra loop iteration) even on its own thread, and a request re-arms its
   * connection four times. Only an earlier deadline needs the source moved:
   * a later one is found when the source fires early and re-arms itself. */
  if (ready_us < 0 || ready_us > connection->deadline_us)
    g_source_set_ready_time (connection->deadline, connection->deadline_us);
}

/* The source may still fire once; it then finds nothing armed. */
static void
connection_disarm (Connection *connection)
{
  connection->phase = PHASE_IDLE;
  connection->current = NULL;
  connection->deadline_us = -1;
}

/* Shutting the socket down, rather than closing it, makes libsoup's pending
 * I/O fail and lets it tear the connection down itself. */
static void
connection_drop (Connection *connection)
{
  connection_disarm (connection);
  if (connection->socket != NULL)
    g_socket_shutdown (connection->socket, TRUE, TRUE, NULL);
}

static void fail_exchange (Exchange *exchange,
                           Failure  *failure);
static void refuse_input  (Connection *connection,
                           guint       status,
                           const char *reason);

static gboolean
on_connection_deadline (gpointer user_data)
{
  Connection *connection = user_data;
  Exchange *exchange = NULL;

  /* A source that was ready in this iteration is dispatched even if another
   * source re-armed it meanwhile (an answer decided at the same moment). */
  if (connection->deadline_us < 0)
    return G_SOURCE_CONTINUE;
  if (g_get_monotonic_time () < connection->deadline_us)
    {
      g_source_set_ready_time (connection->deadline, connection->deadline_us);
      return G_SOURCE_CONTINUE;
    }

  if (connection->phase == PHASE_REQUEST && connection->current != NULL)
    exchange = g_hash_table_lookup (connection->server->exchanges, connection->current);

  if (exchange != NULL && exchange->state == EXCHANGE_FORWARDING)
    {
      Failure failure = {
        "timeout", sandbox_error_code_name (SANDBOX_ERROR_LIMIT),
        g_error_new_literal (G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "Sandbox request deadline exceeded"),
      };

      fail_exchange (exchange, &failure);
    }
  else if (connection->phase != PHASE_IDLE)
    {
      g_debug ("Closing a connection that overran its deadline (phase %d, exchange state %d)",
               connection->phase, exchange != NULL ? (int) exchange->state : -1);
      /* A head begun and not finished in time, or a body; a connection
       * that sent nothing (or is idle between requests) ending at its
       * deadline is no refusal. */
      if (connection->phase == PHASE_HEADERS && connection->stream != NULL &&
          sandbox_gateway_stream_is_in_head (connection->stream))
        refuse_input (connection, 0, "header-timeout");
      else if (exchange != NULL && exchange->state == EXCHANGE_READING)
        refuse_input (connection, 0, "body-timeout");
      connection_drop (connection);
    }

  return G_SOURCE_CONTINUE;
}

static void
connection_free (gpointer data)
{
  Connection *connection = data;

  if (connection->server != NULL)
    g_hash_table_remove (connection->server->connections, connection);
  if (connection->stream != NULL)
    {
      sandbox_gateway_stream_set_refusal_func (connection->stream, NULL, NULL);
      sandbox_gateway_stream_set_hangup_func (connection->stream, NULL, NULL);
    }

  g_source_destroy (connection->deadline);
  g_source_unref (connection->deadline);
  g_clear_weak_pointer (&connection->socket);
  g_clear_weak_pointer (&connection->stream);
  g_free (connection);
}

/* libsoup does not expose the socket of a connection accepted as a stream,
 * but it hands back the remote address it was given: each connection gets
 * its own stand-in address object, which carries the connection and frees
 * it when libsoup lets go of the connection. */
static Connection *
connection_new (SandboxGatewayServer *self,
                GSocket              *socket)
{
  Connection *connection = g_new0 (Connection, 1);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);

  connection->server = self;
  g_set_weak_pointer (&connection->socket, socket);
  connection->address = g_inet_socket_address_new (loopback, 0);
  connection->deadline = g_source_new (&deadline_funcs, sizeof (GSource));
  g_source_set_callback (connection->deadline, on_connection_deadline, connection, NULL);
  g_source_set_static_name (connection->deadline, "[sandbox] gateway connection deadline");
  g_source_attach (connection->deadline, g_main_context_get_thread_default ());

  g_hash_table_add (self->connections, connection);
  g_object_set_qdata_full (G_OBJECT (connection->address), connection_quark (),
                           connection, connection_free);

  /* Until libsoup starts reading, the headers deadline already runs. */
  connection_arm (connection, PHASE_HEADERS, NULL, self->header_timeout_ms);

  return connection;
}

static Connection *
connection_of (SoupServerMessage *msg)
{
  GSocketAddress *address = soup_server_message_get_remote_address (msg);

  if (address == NULL)
    return NULL;

  return g_object_get_qdata (G_OBJECT (address), connection_quark ());
}

/* The stream refused what the guest sent; libsoup drops the connection
 * when the stream's error reaches it, right after this. */
static void
on_input_refused (guint       status,
                  const char *reason,
                  gpointer    user_data)
{
  Connection *connection = user_data;

  refuse_input (connection, status, reason);
  if (status != 0)
    answer_directly (connection->socket, status);
}

static void abandon_exchange (Exchange *exchange);

/* The guest closed its connection while nobody read it: a request of its in
 * flight upstream is abandoned at once (its transfer removed, its slot
 * freed), as the reference aborts its fetch when the guest goes away. */
static gboolean
on_guest_hangup (gpointer user_data)
{
  Connection *connection = user_data;
  Exchange *exchange = NULL;

  if (connection->server != NULL && connection->phase == PHASE_REQUEST && connection->current != NULL)
    exchange = g_hash_table_lookup (connection->server->exchanges, connection->current);

  if (exchange != NULL && exchange->state == EXCHANGE_FORWARDING)
    abandon_exchange (exchange);

  return G_SOURCE_CONTINUE;
}

static void
accept_connection (SandboxGatewayServer *self,
                   GSocket              *socket)
{
  g_autoptr(SandboxGatewayStream) stream = NULL;
  g_autoptr(GSocketAddress) address = NULL;
  g_autoptr(GError) error = NULL;
  Connection *connection;

  if (g_hash_table_size (self->connections) >= MAX_CONNECTIONS)
    {
      g_debug ("Refusing a connection: %u are open", g_hash_table_size (self->connections));
      /* The guest learns why rather than seeing a reset; the socket is not
       * kept a moment longer than the answer takes. */
      answer_directly (socket, SOUP_STATUS_SERVICE_UNAVAILABLE);
      g_socket_close (socket, NULL);
      emit_audit (self, &(SandboxGatewayAuditRecord) {
        .decision = SANDBOX_GATEWAY_DECISION_BUSY, .reason = "too-many-connections",
        .status = SOUP_STATUS_SERVICE_UNAVAILABLE,
      });
      return;
    }

  connection = connection_new (self, socket);
  address = connection->address;   /* the address owns the connection */
  /* Not a plain GSocketConnection: see sandbox-gateway-stream.c. */
  stream = sandbox_gateway_stream_new (socket);
  g_set_weak_pointer (&connection->stream, stream);
  sandbox_gateway_stream_set_refusal_func (stream, on_input_refused, connection);
  sandbox_gateway_stream_set_hangup_func (stream, on_guest_hangup, connection);

  if (!soup_server_accept_iostream (self->soup, G_IO_STREAM (stream),
                                    self->stand_in_address, address, &error))
    {
      g_debug ("Could not serve a connection: %s", error->message);
      g_socket_close (socket, NULL);
    }
}

static gboolean
on_listener_ready (GSocket      *listener,
                   GIOCondition  condition,
                   gpointer      user_data)
{
  SandboxGatewayServer *self = user_data;

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

      accept_connection (self, socket);
    }

  return G_SOURCE_CONTINUE;
}

/* Exchanges */

static void
exchange_free (Exchange *exchange)
{
  if (exchange->easy != NULL)
    {
      if (exchange->state == EXCHANGE_FORWARDING)
        sandbox_upstream_cancel (exchange->server->upstream, exchange->easy);
      sandbox_upstream_return_easy (exchange->server->upstream, exchange->easy);
    }

  g_clear_pointer (&exchange->upstream_headers, curl_slist_free_all);
  g_clear_pointer (&exchange->chunked_body, g_byte_array_unref);
  g_clear_pointer (&exchange->request_body, g_bytes_unref);
  g_clear_pointer (&exchange->response_body, g_byte_array_unref);
  g_clear_object (&exchange->policy);
  g_free (exchange->host);
  g_free (exchange->target);
  g_object_unref (exchange->msg);
  g_free (exchange);
}

static Exchange *
exchange_new (SandboxGatewayServer     *self,
              SoupServerMessage        *msg,
              Connection               *connection,
              SandboxNetworkPolicy     *policy,
              const SandboxNetworkRule *rule,
              guint                     generation,
              const char               *host,
              char                     *target,
              gint64                    started_us)
{
  Exchange *exchange = g_new0 (Exchange, 1);

  exchange->server = self;
  exchange->msg = g_object_ref (msg);
  exchange->connection = connection;
  exchange->state = EXCHANGE_READING;
  exchange->policy = g_object_ref (policy);
  exchange->rule = rule;
  exchange->policy_generation = generation;
  exchange->host = g_strdup (host);
  exchange->target = target;
  exchange->started_us = started_us;

  g_hash_table_insert (self->exchanges, msg, exchange);
  return exchange;
}

/* Once an answer is decided, writing it gets a deadline of its own, so that
 * an answer decided just before the request deadline is still delivered, and
 * a guest that does not read it is still dropped. */
static void
start_answer_deadline (Exchange *exchange)
{
  if (exchange->connection != NULL && exchange->connection->current == exchange->msg)
    connection_arm (exchange->connection, PHASE_RESPONSE, exchange->msg,
                    exchange->server->header_timeout_ms);
}

static guint64
bytes_sent_of (Exchange *exchange)
{
  return exchange->request_body != NULL ? g_bytes_get_size (exchange->request_body) : 0;
}

/* Audits @exchange's request: @record gets its host and target. */
static void
audit_exchange (Exchange                  *exchange,
                SandboxGatewayAuditRecord *record)
{
  record->host = exchange->host;
  record->path = exchange->target;
  audit (exchange->server, exchange->msg, exchange->started_us, record);
}

/* Ends the forwarding state of an exchange, cancelling its transfer when it
 * is still running. Returns whether the message was paused for it. */
static gboolean
end_forwarding (Exchange *exchange,
                gboolean  cancel_transfer)
{
  if (exchange->state != EXCHANGE_FORWARDING)
    return FALSE;

  if (cancel_transfer)
    sandbox_upstream_cancel (exchange->server->upstream, exchange->easy);

  exchange->state = EXCHANGE_ANSWERED;
  exchange->server->n_forwarding--;
  return TRUE;
}

/* Answers 502 for an exchange that was allowed but failed, and reports it.
 * Takes the failure's cause. */
static void
answer_failure (Exchange *exchange,
                Failure  *failure)
{
  SandboxGatewayServer *self = exchange->server;
  guint upstream_status = 0;
  long code = 0;

  if (exchange->easy != NULL && curl_easy_getinfo (exchange->easy, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK)
    upstream_status = (guint) code;

  answer (exchange->msg, SOUP_STATUS_BAD_GATEWAY, failure->sandbox_error, FALSE);
  exchange->state = EXCHANGE_ANSWERED;
  start_answer_deadline (exchange);

  audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
    .decision = SANDBOX_GATEWAY_DECISION_FAILED,
    .reason = failure->reason,
    .status = SOUP_STATUS_BAD_GATEWAY,
    .upstream_status = upstream_status,
    .bytes_sent = bytes_sent_of (exchange),
    .bytes_received = exchange->response_body != NULL ? exchange->response_body->len : 0,
  });
  report_upstream_error (self, failure->cause);
  g_clear_error (&failure->cause);
}

/* Ends an exchange whose guest went away: nobody will read an answer, so
 * none is reported; the connection is shut, so that libsoup's write of the
 * answer fails at once and it lets go of the message. */
static void
abandon_exchange (Exchange *exchange)
{
  gboolean paused = end_forwarding (exchange, TRUE);

  audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
    .decision = SANDBOX_GATEWAY_DECISION_FAILED,
    .reason = "client-closed",
    .bytes_sent = bytes_sent_of (exchange),
  });
  answer (exchange->msg, SOUP_STATUS_BAD_GATEWAY, UPSTREAM_FAILED_CODE, TRUE);
  if (exchange->connection != NULL)
    connection_drop (exchange->connection);
  if (paused)
    soup_server_message_unpause (exchange->msg);
}

static void
fail_exchange (Exchange *exchange,
               Failure  *failure)
{
  gboolean paused = end_forwarding (exchange, TRUE);

  answer_failure (exchange, failure);
  if (paused)
    soup_server_message_unpause (exchange->msg);
}

static void
failure_for_result (Exchange *exchange,
                    CURLcode  result,
                    Failure  *failure)
{
  const char *origin = exchange->rule->origin;
  const char *detail = exchange->error_buffer[0] != '\0' ? exchange->error_buffer
                                                         : curl_easy_strerror (result);

  if (exchange->redirected)
    *failure = (Failure) {
      "redirect", sandbox_error_code_name (SANDBOX_ERROR_NETWORK_DENIED),
      g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_NETWORK_DENIED,
                   "Sandbox redirects are denied (%s answered with a redirect)", origin),
    };
  else if (exchange->response_too_large || result == CURLE_FILESIZE_EXCEEDED)
    *failure = (Failure) {
      "response-too-large", sandbox_error_code_name (SANDBOX_ERROR_LIMIT),
      g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                   "Sandbox response limit exceeded (%s sent more than %d bytes)",
                   origin, SANDBOX_GATEWAY_MAX_BODY_BYTES),
    };
  else if (result == CURLE_OPERATION_TIMEDOUT)
    *failure = (Failure) {
      "timeout", sandbox_error_code_name (SANDBOX_ERROR_LIMIT),
      g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                   "Sandbox upstream request to %s timed out: %s", origin, detail),
    };
  else if (result == CURLE_COULDNT_CONNECT)
    *failure = (Failure) {
      "connect-refused", UPSTREAM_FAILED_CODE,
      g_error_new (G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED,
                   "Sandbox upstream request to %s failed: %s", origin, detail),
    };
  else if (result == CURLE_COULDNT_RESOLVE_HOST)
    *failure = (Failure) {
      "upstream-error", UPSTREAM_FAILED_CODE,
      g_error_new (G_IO_ERROR, G_IO_ERROR_HOST_NOT_FOUND,
                   "Sandbox upstream request to %s failed: %s", origin, detail),
    };
  else
    *failure = (Failure) {
      "upstream-error", UPSTREAM_FAILED_CODE,
      g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED,
                   "Sandbox upstream request to %s failed: %s", origin, detail),
    };
}

static void
fail_with_unexpected_status (Exchange *exchange,
                             long      status)
{
  Failure failure = {
    "upstream-error", UPSTREAM_FAILED_CODE,
    g_error_new (G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 "Sandbox upstream request to %s failed: unexpected status %ld",
                 exchange->rule->origin, status),
  };

  answer_failure (exchange, &failure);
}

/* Relays the upstream's status, content-type and body, and nothing else.
 * The type goes as the upstream named it, as the reference relays it: none
 * when it named none (or an empty one), and none when it holds a control
 * byte. libsoup's soup_server_message_set_response() is not used: it refuses
 * a body without a type (and would leave the body to leak), and warns about
 * a type without a "/". */
static void
relay_response (Exchange *exchange,
                long      status)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (exchange->msg);
  const char *content_type = NULL;
  guint64 received = exchange->response_body->len;
  gsize length = 0;
  gpointer body;

  curl_easy_getinfo (exchange->easy, CURLINFO_CONTENT_TYPE, &content_type);
  if (content_type != NULL &&
      (*content_type == '\0' || !sandbox_gateway_http_value_is_clean (content_type)))
    content_type = NULL;

  body = g_byte_array_steal (exchange->response_body, &length);
  soup_server_message_set_status (exchange->msg, (guint) status, NULL);
  if (content_type != NULL)
    soup_message_headers_replace (headers, "Content-Type", content_type);
  else
    soup_message_headers_remove (headers, "Content-Type");
  soup_message_body_append (soup_server_message_get_response_body (exchange->msg),
                            SOUP_MEMORY_TAKE, body, length);
  start_answer_deadline (exchange);

  /* libsoup writes the head and the body in two writes, which wake the
   * guest twice: have them sent together when a body follows the head. */
  if (length > 0 && status != SOUP_STATUS_NO_CONTENT && status != SOUP_STATUS_NOT_MODIFIED &&
      strcmp (soup_server_message_get_method (exchange->msg), "HEAD") != 0 &&
      exchange->connection != NULL && exchange->connection->stream != NULL)
    sandbox_gateway_stream_hold_response_head (exchange->connection->stream);

  audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
    .decision = SANDBOX_GATEWAY_DECISION_ALLOWED,
    .reason = "forwarded",
    .status = (guint) status,
    .upstream_status = (guint) status,
    .bytes_sent = bytes_sent_of (exchange),
    .bytes_received = received,
  });
}

static void
on_upstream_done (CURL     *easy,
                  CURLcode  result,
                  gpointer  user_data)
{
  Exchange *exchange = user_data;
  long status = 0;

  /* libcurl has already let go of the transfer. */
  end_forwarding (exchange, FALSE);

  curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &status);
  if (result == CURLE_OK && status >= 300 && status < 400)
    exchange->redirected = TRUE;

  if (result != CURLE_OK || exchange->redirected)
    {
      Failure failure;

      failure_for_result (exchange, result, &failure);
      answer_failure (exchange, &failure);
    }
  else if (status < 200 || status > 599)
    {
      fail_with_unexpected_status (exchange, status);
    }
  else
    {
      relay_response (exchange, status);
    }

  soup_server_message_unpause (exchange->msg);
}

static size_t
on_upstream_header (char   *data,
                    size_t  size,
                    size_t  count,
                    void   *user_data)
{
  Exchange *exchange = user_data;
  long status = 0;

  /* A redirect is refused as soon as its status line arrives, so nothing of
   * it is read, let alone followed. */
  curl_easy_getinfo (exchange->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300 && status < 400)
    {
      exchange->redirected = TRUE;
      return 0;
    }

  return size * count;
}

static size_t
on_upstream_data (char   *data,
                  size_t  size,
                  size_t  count,
                  void   *user_data)
{
  Exchange *exchange = user_data;
  gsize length = size * count;

  /* Stop reading at the limit: memory stays bounded whatever the upstream
   * sends. */
  if (exchange->response_body->len + length > SANDBOX_GATEWAY_MAX_BODY_BYTES)
    {
      exchange->response_too_large = TRUE;
      return 0;
    }

  g_byte_array_append (exchange->response_body, (const guint8 *) data, length);
  return length;
}

static gboolean
rule_sets_header (const SandboxNetworkRule *rule,
                  const char               *name)
{
  for (guint i = 0; rule->header_names != NULL && rule->header_names[i] != NULL; i++)
    if (g_ascii_strcasecmp (rule->header_names[i], name) == 0)
      return TRUE;

  return FALSE;
}

/* libcurl adds some headers of its own unless told not to: "Name:" removes
 * one, "Name;" sends it empty. */
static struct curl_slist *
append_header (struct curl_slist *list,
               const char        *name,
               const char        *value)
{
  g_autofree char *line = NULL;

  if (value == NULL)
    line = g_strconcat (name, ":", NULL);
  else if (*value == '\0')
    line = g_strconcat (name, ";", NULL);
  else
    line = g_strconcat (name, ": ", value, NULL);

  return curl_slist_append (list, line);
}

/* Only the guest's content-type and accept, then the rule's own headers. */
static struct curl_slist *
build_upstream_headers (Exchange *exchange)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (exchange->msg);
  const SandboxNetworkRule *rule = exchange->rule;
  static const char * const forwarded[] = { "Content-Type", "Accept" };
  struct curl_slist *list = append_header (NULL, "Expect", NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (forwarded); i++)
    {
      const char *value = soup_message_headers_get_one (headers, forwarded[i]);

      if (rule_sets_header (rule, forwarded[i]))
        continue;
      list = append_header (list, forwarded[i], value);
    }

  for (guint i = 0; rule->header_names != NULL && rule->header_names[i] != NULL; i++)
    list = append_header (list, rule->header_names[i], rule->header_values[i]);

  return list;
}

static void
set_method (CURL       *easy,
            const char *method,
            GBytes     *body)
{
  gsize length = 0;
  const char *data = body != NULL ? g_bytes_get_data (body, &length) : NULL;

  if (strcmp (method, "HEAD") == 0)
    {
      curl_easy_setopt (easy, CURLOPT_NOBODY, 1L);
      return;
    }

  if (length > 0 || strcmp (method, "POST") == 0 ||
      strcmp (method, "PUT") == 0 || strcmp (method, "PATCH") == 0)
    {
      curl_easy_setopt (easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) length);
      curl_easy_setopt (easy, CURLOPT_POSTFIELDS, length > 0 ? data : "");
    }

  if (strcmp (method, "POST") != 0 && strcmp (method, "GET") != 0)
    curl_easy_setopt (easy, CURLOPT_CUSTOMREQUEST, method);
  else if (strcmp (method, "GET") == 0 && length > 0)
    curl_easy_setopt (easy, CURLOPT_CUSTOMREQUEST, "GET");
}

static void
configure_easy (Exchange *exchange,
                gint64    remaining_ms)
{
  CURL *easy = exchange->easy;
  g_autofree char *url = g_strconcat (exchange->rule->origin, exchange->target, NULL);

  curl_easy_setopt (easy, CURLOPT_URL, url);
  curl_easy_setopt (easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt (easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt (easy, CURLOPT_FOLLOWLOCATION, 0L);
  /* The host's proxy environment must not route guest traffic. */
  curl_easy_setopt (easy, CURLOPT_PROXY, "");
  curl_easy_setopt (easy, CURLOPT_NOPROXY, "*");
  curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (easy, CURLOPT_TIMEOUT_MS, (long) MAX (remaining_ms, 1));
  curl_easy_setopt (easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) SANDBOX_GATEWAY_MAX_BODY_BYTES);
  curl_easy_setopt (easy, CURLOPT_ERRORBUFFER, exchange->error_buffer);
  curl_easy_setopt (easy, CURLOPT_HTTPHEADER, exchange->upstream_headers);
  curl_easy_setopt (easy, CURLOPT_HEADERFUNCTION, on_upstream_header);
  curl_easy_setopt (easy, CURLOPT_HEADERDATA, exchange);
  curl_easy_setopt (easy, CURLOPT_WRITEFUNCTION, on_upstream_data);
  curl_easy_setopt (easy, CURLOPT_WRITEDATA, exchange);
  set_method (easy, soup_server_message_get_method (exchange->msg), exchange->request_body);
}

static GBytes *
take_request_body (Exchange *exchange)
{
  if (exchange->chunked_body != NULL)
    return g_byte_array_free_to_bytes (g_steal_pointer (&exchange->chunked_body));

  return soup_message_body_flatten (soup_server_message_get_request_body (exchange->msg));
}

static void
forward (Exchange *exchange)
{
  SandboxGatewayServer *self = exchange->server;
  gint64 elapsed_ms = (g_get_monotonic_time () - exchange->started_us) / 1000;

  exchange->request_body = take_request_body (exchange);
  exchange->response_body = g_byte_array_new ();
  exchange->upstream_headers = build_upstream_headers (exchange);
  if (self->upstream == NULL)
    self->upstream = sandbox_upstream_new (g_main_context_get_thread_default ());
  exchange->easy = sandbox_upstream_take_easy (self->upstream);
  configure_easy (exchange, (gint64) self->request_timeout_ms - elapsed_ms);

  soup_server_message_pause (exchange->msg);
  exchange->state = EXCHANGE_FORWARDING;
  self->n_forwarding++;
  if (exchange->connection != NULL && exchange->connection->stream != NULL)
    sandbox_gateway_stream_watch_for_hangup (exchange->connection->stream);

  if (!sandbox_upstream_start (self->upstream, exchange->easy, on_upstream_done, exchange))
    {
      Failure failure = {
        "upstream-error", UPSTREAM_FAILED_CODE,
        g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED,
                     "Sandbox upstream request to %s could not be started",
                     exchange->rule->origin),
      };

      /* Nothing runs yet, so there is nothing to cancel. */
      end_forwarding (exchange, FALSE);
      answer_failure (exchange, &failure);
      soup_server_message_unpause (exchange->msg);
    }
}

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

static gboolean
policy_is_current (SandboxGatewayServer *self,
                   guint                 generation)
{
  gboolean current;

  g_mutex_lock (&self->policy_lock);
  current = self->policy_generation == generation;
  g_mutex_unlock (&self->policy_lock);

  return current;
}

static Failure
policy_changed_failure (void)
{
  return (Failure) {
    "policy-changed", sandbox_error_code_name (SANDBOX_ERROR_UNAVAILABLE),
    g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                         "Sandbox upstream request aborted: the network policy changed"),
  };
}

/* Aborts every exchange decided under an older policy than the current one. */
static gboolean
abort_stale_exchanges (gpointer user_data)
{
  SandboxGatewayServer *self = user_data;
  g_autoptr(GPtrArray) stale = g_ptr_array_new ();
  GHashTableIter iter;
  Exchange *exchange;

  if (self->closed)
    return G_SOURCE_REMOVE;

  g_hash_table_iter_init (&iter, self->exchanges);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &exchange))
    if (exchange->state == EXCHANGE_FORWARDING &&
        !policy_is_current (self, exchange->policy_generation))
      g_ptr_array_add (stale, exchange);

  for (guint i = 0; i < stale->len; i++)
    {
      Failure failure = policy_changed_failure ();

      fail_exchange (g_ptr_array_index (stale, i), &failure);
    }

  return G_SOURCE_REMOVE;
}

/* Audits a request the guest cut short, sent too slowly or framed in a way
 * the stream refused, once per connection: with its method, host and target
 * when its head was read (and it was not answered and audited already), else
 * as a refused head. Nothing is forwarded; the guest gets @status as its
 * answer, or none for 0. */
static void
refuse_input (Connection *connection,
              guint       status,
              const char *reason)
{
  SandboxGatewayServer *self = connection->server;
  SoupServerMessage *msg = connection->current;
  Exchange *exchange;

  if (self == NULL || connection->input_refused)
    return;
  connection->input_refused = TRUE;

  if (msg != NULL && g_object_get_qdata (G_OBJECT (msg), audited_quark ()) != NULL)
    return;
  exchange = msg != NULL ? g_hash_table_lookup (self->exchanges, msg) : NULL;
  if (exchange != NULL)
    audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
      .decision = SANDBOX_GATEWAY_DECISION_BAD_REQUEST, .reason = reason, .status = status,
    });
  else
    /* A head refused before libsoup made a request of it: there is no
     * method, host or target to report. */
    emit_audit (self, &(SandboxGatewayAuditRecord) {
      .decision = SANDBOX_GATEWAY_DECISION_BAD_REQUEST, .reason = reason, .status = status,
    });
}

/* libsoup handlers */

static GQuark
framed_quark (void)
{
  return g_quark_from_static_string ("sandbox-gateway-framed");
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

/* Tells the connection's stream how the body of @msg is framed, as libsoup
 * parsed it, once per message and before libsoup reads any of it. Returns
 * FALSE if the stream can follow the connection no further: the request
 * must be refused and the connection closed. */
static gboolean
track_body (Connection        *connection,
            SoupServerMessage *msg)
{
  SandboxGatewayBody body;
  guint64 length;

  if (g_object_get_qdata (G_OBJECT (msg), framed_quark ()) != NULL)
    return TRUE;
  g_object_set_qdata (G_OBJECT (msg), framed_quark (), GINT_TO_POINTER (TRUE));

  if (connection == NULL || connection->stream == NULL)
    return FALSE;

  body = body_of (msg, &length);
  return sandbox_gateway_stream_begin_body (connection->stream, body, length) &&
         body != SANDBOX_GATEWAY_BODY_UNKNOWN;
}

static GQuark
checked_quark (void)
{
  return g_quark_from_static_string ("sandbox-gateway-checked");
}

static void refuse_early (SandboxGatewayServer        *self,
                          SoupServerMessage           *msg,
                          const char                  *host,
                          const char                  *target,
                          gint64                       started_us,
                          const SandboxGatewayRefusal *refusal);

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
  gboolean tracked = track_body (connection_of (msg), msg);

  if (soup_server_message_get_status (msg) == 0 &&
      g_object_get_qdata (G_OBJECT (msg), checked_quark ()) == NULL)
    {
      const char *host = soup_message_headers_get_one (soup_server_message_get_request_headers (msg), "Host");
      SandboxGatewayRefusal refusal = tracked
        ? (SandboxGatewayRefusal) { SOUP_STATUS_FORBIDDEN, SANDBOX_GATEWAY_DECISION_DENIED, "target-not-allowed" }
        : (SandboxGatewayRefusal) { SOUP_STATUS_BAD_REQUEST, SANDBOX_GATEWAY_DECISION_BAD_REQUEST, "invalid-framing" };

      refuse_early (self, msg, host, NULL, g_get_monotonic_time (), &refusal);
      return;
    }

  if (soup_server_message_get_status (msg) != 0 &&
      soup_message_headers_get_one (response_headers, SANDBOX_ERROR_HEADER) == NULL)
    soup_message_headers_replace (response_headers, "Connection", "close");
}

static void
on_request_started (SoupServer        *soup,
                    SoupServerMessage *msg,
                    gpointer           user_data)
{
  SandboxGatewayServer *self = user_data;
  Connection *connection = connection_of (msg);

  if (connection != NULL)
    connection_arm (connection, PHASE_HEADERS, msg, self->header_timeout_ms);
  g_signal_connect (msg, "got-headers", G_CALLBACK (on_got_headers), self);
}

static void
on_request_done (SoupServer        *soup,
                 SoupServerMessage *msg,
                 gpointer           user_data)
{
  SandboxGatewayServer *self = user_data;
  Connection *connection = connection_of (msg);
  Exchange *exchange = g_hash_table_lookup (self->exchanges, msg);

  /* An idle keep-alive connection waits for its next request's headers. */
  if (connection != NULL && connection->current == msg)
    connection_arm (connection, PHASE_HEADERS, NULL, self->header_timeout_ms);
  if (connection != NULL && connection->stream != NULL)
    {
      /* A held head is sent with its body; should none have followed, it
       * goes now, or the connection's response is broken. */
      if (!sandbox_gateway_stream_release_response_head (connection->stream))
        connection_drop (connection);
    }

  /* libsoup answers some malformed requests itself, before any handler. */
  if (exchange == NULL)
    {
      guint status = soup_server_message_get_status (msg);

      if (status >= 400 && g_object_get_qdata (G_OBJECT (msg), audited_quark ()) == NULL)
        audit (self, msg, 0, &(SandboxGatewayAuditRecord) {
          .decision = SANDBOX_GATEWAY_DECISION_BAD_REQUEST, .reason = "malformed", .status = status,
        });
      return;
    }

  /* The guest went away while the upstream was still working. */
  if (end_forwarding (exchange, TRUE))
    {
      audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
        .decision = SANDBOX_GATEWAY_DECISION_FAILED,
        .reason = "client-closed",
        .bytes_sent = bytes_sent_of (exchange),
      });
    }

  g_hash_table_remove (self->exchanges, msg);
}

static void
on_got_chunk (SoupServerMessage *msg,
              GBytes            *chunk,
              gpointer           user_data)
{
  Exchange *exchange = user_data;
  gsize length = 0;
  const guint8 *data = g_bytes_get_data (chunk, &length);

  if (exchange->request_too_large)
    return;

  if (exchange->chunked_body->len + length > SANDBOX_GATEWAY_MAX_BODY_BYTES)
    {
      /* Keep reading, to answer on a sane connection, but keep nothing. */
      exchange->request_too_large = TRUE;
      g_byte_array_set_size (exchange->chunked_body, 0);
      return;
    }

  g_byte_array_append (exchange->chunked_body, data, length);
}

/* libsoup 3.2 still reads the body of a request refused by an early handler
 * before it answers: keep none of it. The request deadline bounds how long
 * that may take, and the connection is closed after the answer. */
static void
discard_request_body (SoupServerMessage *msg)
{
  soup_message_body_set_accumulate (soup_server_message_get_request_body (msg), FALSE);
}

static void
refuse_early (SandboxGatewayServer        *self,
              SoupServerMessage           *msg,
              const char                  *host,
              const char                  *target,
              gint64                       started_us,
              const SandboxGatewayRefusal *refusal)
{
  gboolean close_connection = refusal->status == SOUP_STATUS_BAD_REQUEST ||
                              request_has_body (msg);

  discard_request_body (msg);
  answer (msg, refusal->status, sandbox_error_for (refusal->decision), close_connection);
  audit (self, msg, started_us, &(SandboxGatewayAuditRecord) {
    .host = host, .path = target,
    .decision = refusal->decision, .reason = refusal->reason, .status = refusal->status,
  });
}

static void
refuse_too_large_early (SandboxGatewayServer *self,
                        SoupServerMessage    *msg,
                        const char           *host,
                        const char           *target,
                        gint64                started_us,
                        const char           *origin)
{
  g_autoptr(GError) cause = g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                                         "Sandbox request limit exceeded (a request to %s "
                                         "declared more than %d bytes)",
                                         origin, SANDBOX_GATEWAY_MAX_BODY_BYTES);

  discard_request_body (msg);
  answer (msg, SOUP_STATUS_BAD_GATEWAY, sandbox_error_code_name (SANDBOX_ERROR_LIMIT), TRUE);
  audit (self, msg, started_us, &(SandboxGatewayAuditRecord) {
    .host = host, .path = target,
    .decision = SANDBOX_GATEWAY_DECISION_FAILED, .reason = "request-too-large",
    .status = SOUP_STATUS_BAD_GATEWAY,
  });
  report_upstream_error (self, cause);
}

/* Runs once the request headers are read, before any of the body is: every
 * check that does not need the body happens here, so nothing of a refused
 * request is read or forwarded. */
static void
on_headers_read (SoupServer        *soup,
                 SoupServerMessage *msg,
                 const char        *path,
                 GHashTable        *query,
                 gpointer           user_data)
{
  SandboxGatewayServer *self = user_data;
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  Connection *connection = connection_of (msg);
  gint64 started_us = g_get_monotonic_time ();
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  const SandboxNetworkRule *rule = NULL;
  SandboxGatewayRefusal refusal;
  g_autofree char *target = NULL;
  const char *host = NULL;
  gboolean origin_form;
  Exchange *exchange;
  guint generation = 0;

  g_object_set_qdata (G_OBJECT (msg), checked_quark (), GINT_TO_POINTER (TRUE));
  if (connection != NULL)
    connection_arm (connection, PHASE_REQUEST, msg, self->request_timeout_ms);

  /* libsoup takes a target not starting with "/" for an absolute URI (or
   * "*"), and builds the request URI from it rather than from Host: only
   * the stream saw which one the guest sent. Asked before the stream moves
   * on to the body. */
  origin_form = connection != NULL && connection->stream != NULL &&
                sandbox_gateway_stream_target_is_origin_form (connection->stream);

  if (!track_body (connection, msg))
    {
      refusal = (SandboxGatewayRefusal) {
        SOUP_STATUS_BAD_REQUEST, SANDBOX_GATEWAY_DECISION_BAD_REQUEST, "invalid-framing",
      };
      refuse_early (self, msg, NULL, NULL, started_us, &refusal);
      return;
    }
  if (!sandbox_gateway_http_check_request (msg, origin_form, &host, &target, &refusal))
    {
      refuse_early (self, msg, host, target, started_us, &refusal);
      return;
    }

  policy = current_policy (self, &generation);
  if (sandbox_network_policy_get_kind (policy) == SANDBOX_NETWORK_POLICY_ALLOW_LIST)
    rule = sandbox_network_policy_find_rule (policy, host);

  if (rule == NULL)
    {
      refusal = (SandboxGatewayRefusal) {
        SOUP_STATUS_FORBIDDEN, SANDBOX_GATEWAY_DECISION_DENIED, "host-not-allowed",
      };
      refuse_early (self, msg, host, target, started_us, &refusal);
      return;
    }

  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CONTENT_LENGTH &&
      soup_message_headers_get_content_length (headers) > SANDBOX_GATEWAY_MAX_BODY_BYTES)
    {
      refuse_too_large_early (self, msg, host, target, started_us, rule->origin);
      return;
    }

  exchange = exchange_new (self, msg, connection, policy, rule, generation,
                           host, g_steal_pointer (&target), started_us);

  /* A chunked body is counted as it arrives and never kept past the limit. */
  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CHUNKED)
    {
      exchange->chunked_body = g_byte_array_new ();
      soup_message_body_set_accumulate (soup_server_message_get_request_body (msg), FALSE);
      g_signal_connect (msg, "got-chunk", G_CALLBACK (on_got_chunk), exchange);
    }
}

static void
on_request (SoupServer        *soup,
            SoupServerMessage *msg,
            const char        *path,
            GHashTable        *query,
            gpointer           user_data)
{
  SandboxGatewayServer *self = user_data;
  Exchange *exchange = g_hash_table_lookup (self->exchanges, msg);

  if (exchange == NULL)
    {
      /* Every request that passed on_headers_read() has an exchange. */
      answer (msg, SOUP_STATUS_BAD_REQUEST, sandbox_error_for (SANDBOX_GATEWAY_DECISION_BAD_REQUEST), TRUE);
      return;
    }

  if (exchange->request_too_large)
    {
      g_autoptr(GError) cause = g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                                             "Sandbox request limit exceeded (a request to %s "
                                             "sent more than %d bytes)",
                                             exchange->rule->origin, SANDBOX_GATEWAY_MAX_BODY_BYTES);

      answer (msg, SOUP_STATUS_BAD_GATEWAY, sandbox_error_code_name (SANDBOX_ERROR_LIMIT), FALSE);
      exchange->state = EXCHANGE_ANSWERED;
      audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
        .decision = SANDBOX_GATEWAY_DECISION_FAILED, .reason = "request-too-large",
        .status = SOUP_STATUS_BAD_GATEWAY,
      });
      report_upstream_error (self, cause);
      return;
    }

  if (!policy_is_current (self, exchange->policy_generation))
    {
      Failure failure = policy_changed_failure ();

      fail_exchange (exchange, &failure);
      return;
    }

  if (self->n_forwarding >= MAX_IN_FLIGHT)
    {
      answer (msg, SOUP_STATUS_SERVICE_UNAVAILABLE, sandbox_error_for (SANDBOX_GATEWAY_DECISION_BUSY), FALSE);
      exchange->state = EXCHANGE_ANSWERED;
      audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
        .decision = SANDBOX_GATEWAY_DECISION_BUSY, .reason = "busy",
        .status = SOUP_STATUS_SERVICE_UNAVAILABLE,
      });
      return;
    }

  forward (exchange);
}

/* Life cycle, on the gateway thread */

/* libsoup 3.2 keeps a connection alive after a response only while the server
 * has a listener of its own, and ours are accepted by hand. Give it one that
 * nobody can reach: bound next to the real socket, then unlinked. */
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
  self->exchanges = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) exchange_free);
  self->connections = g_hash_table_new (NULL, NULL);
  /* The upstream (a curl multi handle, which holds a socketpair of its own)
   * is made on the first forwarded request: an idle session's gateway costs
   * its two listening sockets and nothing more. */

  /* raw-paths: the handler must see the target as sent, not decoded. */
  self->soup = soup_server_new ("raw-paths", TRUE, "server-header", NULL, NULL);
  soup_server_add_early_handler (self->soup, NULL, on_headers_read, self, NULL);
  soup_server_add_handler (self->soup, NULL, on_request, self, NULL);
  g_signal_connect (self->soup, "request-started", G_CALLBACK (on_request_started), self);
  g_signal_connect (self->soup, "request-finished", G_CALLBACK (on_request_done), self);
  g_signal_connect (self->soup, "request-aborted", G_CALLBACK (on_request_done), self);

  if (!listen_unreachably (self->soup, self->listener, &call->error))
    return G_SOURCE_REMOVE;

  g_socket_set_blocking (self->listener, FALSE);
  self->accept_source = g_socket_create_source (self->listener, G_IO_IN, NULL);
  g_source_set_callback (self->accept_source, G_SOURCE_FUNC (on_listener_ready), self, NULL);
  g_source_set_static_name (self->accept_source, "[sandbox] gateway accept");
  g_source_attach (self->accept_source, g_main_context_get_thread_default ());

  call->ok = TRUE;
  return G_SOURCE_REMOVE;
}

static void
abort_all_exchanges (SandboxGatewayServer *self)
{
  g_autoptr(GPtrArray) live = g_ptr_array_new ();
  GHashTableIter iter;
  Exchange *exchange;

  g_hash_table_iter_init (&iter, self->exchanges);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &exchange))
    if (exchange->state == EXCHANGE_FORWARDING)
      g_ptr_array_add (live, exchange);

  for (guint i = 0; i < live->len; i++)
    {
      Failure failure = {
        "closed", sandbox_error_code_name (SANDBOX_ERROR_UNAVAILABLE),
        g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                             "Sandbox upstream request aborted: the gateway closed"),
      };

      fail_exchange (g_ptr_array_index (live, i), &failure);
    }
}

static gboolean
stop_on_gateway_thread (gpointer user_data)
{
  SandboxGatewayServer *self = user_data;
  GHashTableIter iter;
  Connection *connection;

  self->closed = TRUE;

  if (self->accept_source != NULL)
    g_source_destroy (self->accept_source);
  g_clear_pointer (&self->accept_source, g_source_unref);
  g_socket_close (self->listener, NULL);

  abort_all_exchanges (self);

  /* Connections may outlive this server inside libsoup for a moment. */
  g_hash_table_iter_init (&iter, self->connections);
  while (g_hash_table_iter_next (&iter, (gpointer *) &connection, NULL))
    {
      connection->server = NULL;
      connection_disarm (connection);
    }
  g_hash_table_remove_all (self->connections);

  g_signal_handlers_disconnect_by_data (self->soup, self);
  soup_server_disconnect (self->soup);
  g_hash_table_remove_all (self->exchanges);
  g_clear_object (&self->soup);

  g_clear_pointer (&self->upstream, sandbox_upstream_free);
  g_clear_pointer (&self->exchanges, g_hash_table_unref);
  g_clear_pointer (&self->connections, g_hash_table_unref);
  g_clear_object (&self->stand_in_address);

  return G_SOURCE_REMOVE;
}

/*
 * sandbox_gateway_server_new:
 * @listener: a bound, listening socket
 *
 * Starts serving @listener on the gateway thread, and returns once it is.
 */
SandboxGatewayServer *
sandbox_gateway_server_new (GSocket                             *listener,
                            SandboxNetworkPolicy                *policy,
                            guint                                request_timeout_ms,
                            guint                                header_timeout_ms,
                            const SandboxGatewayServerCallbacks *callbacks,
                            gpointer                             user_data,
                            GError                             **error)
{
  SandboxGatewayServer *self = g_new0 (SandboxGatewayServer, 1);
  StartCall call = { self };

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
      g_object_unref (self->listener);
      g_object_unref (self->policy);
      g_mutex_clear (&self->policy_lock);
      g_free (self);
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
  self->policy_generation++;
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

  g_object_unref (self->listener);
  g_object_unref (self->policy);
  g_mutex_clear (&self->policy_lock);
  g_free (self);
}
