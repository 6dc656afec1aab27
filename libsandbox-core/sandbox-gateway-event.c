/* sandbox-gateway-event.c — one audited gateway decision
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include "sandbox-gateway-event-private.h"

struct _SandboxGatewayEvent
{
  gatomicrefcount ref_count;
  char *host;
  char *method;
  char *path;
  SandboxGatewayArrival arrival;
  SandboxGatewayDecision decision;
  const char *reason;
  guint status;
  guint upstream_status;
  guint64 bytes_sent;
  guint64 bytes_received;
  gint64 duration_us;
  char *session_id;   /* the gateway's, set before the event is published */
};

G_DEFINE_ENUM_TYPE (SandboxGatewayDecision, sandbox_gateway_decision,
  G_DEFINE_ENUM_VALUE (SANDBOX_GATEWAY_DECISION_ALLOWED, "allowed"),
  G_DEFINE_ENUM_VALUE (SANDBOX_GATEWAY_DECISION_DENIED, "denied"),
  G_DEFINE_ENUM_VALUE (SANDBOX_GATEWAY_DECISION_BUSY, "busy"),
  G_DEFINE_ENUM_VALUE (SANDBOX_GATEWAY_DECISION_FAILED, "failed"),
  G_DEFINE_ENUM_VALUE (SANDBOX_GATEWAY_DECISION_BAD_REQUEST, "bad-request"))

G_DEFINE_ENUM_TYPE (SandboxGatewayArrival, sandbox_gateway_arrival,
  G_DEFINE_ENUM_VALUE (SANDBOX_GATEWAY_ARRIVAL_SOCKET, "socket"),
  G_DEFINE_ENUM_VALUE (SANDBOX_GATEWAY_ARRIVAL_PROXY, "proxy"),
  G_DEFINE_ENUM_VALUE (SANDBOX_GATEWAY_ARRIVAL_TUNNEL, "tunnel"))

/* @value's nick in the enum @type: static types keep their class, so the
 * string lives as long as the process. */
static const char *
enum_nick (GType type,
           int   value)
{
  GEnumClass *klass = g_type_class_ref (type);
  GEnumValue *found = g_enum_get_value (klass, value);

  g_type_class_unref (klass);
  return found != NULL ? found->value_nick : NULL;
}

/**
 * sandbox_gateway_decision_to_string:
 * @decision: a [enum@Sandbox.GatewayDecision]
 *
 * The decision's name as logs and JSON spell it: `allowed`, `denied`,
 * `busy`, `failed` or `bad-request`.
 *
 * Returns: (nullable): the name, or %NULL for a value that is no decision
 */
const char *
sandbox_gateway_decision_to_string (SandboxGatewayDecision decision)
{
  return enum_nick (SANDBOX_TYPE_GATEWAY_DECISION, decision);
}

/**
 * sandbox_gateway_arrival_to_string:
 * @arrival: a [enum@Sandbox.GatewayArrival]
 *
 * How a request arrived, as logs and JSON spell it: `socket`, `proxy` or
 * `tunnel`.
 *
 * Returns: (nullable): the name, or %NULL for a value that is no arrival
 */
const char *
sandbox_gateway_arrival_to_string (SandboxGatewayArrival arrival)
{
  return enum_nick (SANDBOX_TYPE_GATEWAY_ARRIVAL, arrival);
}

G_DEFINE_BOXED_TYPE (SandboxGatewayEvent, sandbox_gateway_event,
                     sandbox_gateway_event_ref, sandbox_gateway_event_unref)

/* Guest-supplied strings are reported as valid UTF-8 so that bindings and
 * loggers can take them as they are. */
static char *
dup_as_utf8 (const char *text)
{
  if (text == NULL)
    return g_strdup ("");

  return g_utf8_make_valid (text, -1);
}

SandboxGatewayEvent *
sandbox_gateway_event_new (const SandboxGatewayAuditRecord *record)
{
  SandboxGatewayEvent *self = g_new0 (SandboxGatewayEvent, 1);

  g_atomic_ref_count_init (&self->ref_count);
  self->host = dup_as_utf8 (record->host);
  self->method = dup_as_utf8 (record->method);
  self->path = dup_as_utf8 (record->path);
  self->arrival = record->arrival;
  self->decision = record->decision;
  self->reason = record->reason;
  self->status = record->status;
  self->upstream_status = record->upstream_status;
  self->bytes_sent = record->bytes_sent;
  self->bytes_received = record->bytes_received;
  self->duration_us = record->duration_us;

  return self;
}

/**
 * sandbox_gateway_event_ref:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Atomically increases the reference count of @self by one.
 *
 * Returns: (transfer full): @self
 */
SandboxGatewayEvent *
sandbox_gateway_event_ref (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * sandbox_gateway_event_unref:
 * @self: (transfer full): a [struct@Sandbox.GatewayEvent]
 *
 * Atomically decreases the reference count of @self by one, freeing it when
 * the count drops to zero.
 */
void
sandbox_gateway_event_unref (SandboxGatewayEvent *self)
{
  g_return_if_fail (self != NULL);

  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  g_free (self->host);
  g_free (self->method);
  g_free (self->path);
  g_free (self->session_id);
  g_free (self);
}

/**
 * sandbox_gateway_event_get_host:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets the host the guest addressed the request to.
 *
 * Returns: the guest's `Host` header, or "" when there was none
 */
const char *
sandbox_gateway_event_get_host (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->host;
}

/**
 * sandbox_gateway_event_get_method:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets the HTTP method of the request.
 *
 * Returns: the request method
 */
const char *
sandbox_gateway_event_get_method (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->method;
}

/**
 * sandbox_gateway_event_get_path:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets the path and query of the request.
 *
 * Returns: the request's path and query, as the guest sent them
 */
const char *
sandbox_gateway_event_get_path (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->path;
}

/* Called once, by the gateway, before anyone else holds @self: the event
 * stays immutable for everyone who sees it. */
void
sandbox_gateway_event_set_session_id (SandboxGatewayEvent *self,
                                      const char          *session_id)
{
  g_return_if_fail (self->session_id == NULL);
  self->session_id = g_strdup (session_id);
}

/**
 * sandbox_gateway_event_get_session_id:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets the session whose guest sent the request, so that an audit record
 * can be tied to its session (the bubblewrap backend's gateways know it;
 * see [property@Sandbox.Gateway:session-id]).
 *
 * Returns: (nullable): the session id, or %NULL for a gateway made without
 *   one
 */
const char *
sandbox_gateway_event_get_session_id (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->session_id;
}

/**
 * sandbox_gateway_event_get_arrival:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets how the request reached the gateway: on its Unix socket, or on a
 * proxy listener, where the guest's HTTP clients find it through
 * `http_proxy` and may send absolute-form targets and `CONNECT`.
 *
 * Returns: how the request arrived
 */
SandboxGatewayArrival
sandbox_gateway_event_get_arrival (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, SANDBOX_GATEWAY_ARRIVAL_SOCKET);
  return self->arrival;
}

/**
 * sandbox_gateway_event_get_decision:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets what the gateway decided to do with the request.
 *
 * Returns: what the gateway did with the request
 */
SandboxGatewayDecision
sandbox_gateway_event_get_decision (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, SANDBOX_GATEWAY_DECISION_BAD_REQUEST);
  return self->decision;
}

/**
 * sandbox_gateway_event_get_reason:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * The reason for the decision: "forwarded" for allowed requests; for denials
 * "host-not-allowed", "target-not-allowed", "method-not-allowed" or
 * "absolute-target" (an absolute-form target naming another authority);
 * "busy"; for failures "connect-refused", "redirect", "request-too-large",
 * "response-too-large", "timeout", "upstream-error", "policy-changed",
 * "closed" or "client-closed"; for bad requests "missing-host",
 * "duplicate-host", "invalid-host", "invalid-target", "ambiguous-framing",
 * "malformed" (refused by the HTTP parser itself); for a request the guest
 * did not finish, answered with nothing but the end of the connection and
 * never forwarded, "incomplete-body" (the connection ended inside its body)
 * or "body-timeout" (the body not sent within the request deadline), and —
 * for a head that never became a request, reported with an empty method,
 * host and path — "incomplete-head", "head-too-large" (over 64 KiB) or
 * "header-timeout" (not finished within the headers deadline).
 *
 * Also:
 *
 * - "idle-timeout" (a failure): a streamed answer's upstream sent no new
 *   bytes within the rule's idle timeout, so the stream was cut
 * - "too-many-connections" (busy): a connection refused because 256 were
 *   already open and the guest had sent something on each, reported with an
 *   empty method, host and path
 * - "idle-connection-evicted" (busy, status 0): with 256 open, the oldest
 *   connection on which the guest had sent nothing yet, closed without an
 *   answer to make room for a new one; reported with an empty method, host
 *   and path
 * - "invalid-framing" (a bad request, 400): a request whose body framing the
 *   gateway could not follow
 * - "target-too-long" (a bad request, 414): a request line over 64 KiB,
 *   reported with an empty method, host and path
 * - "invalid-chunk" (a bad request, 400): a malformed chunk in a chunked
 *   request body
 * - "request-trailers" (a bad request, 400): a chunked request body that
 *   ends with trailer fields
 * - "tunnel-not-served" (denied, 501): a `CONNECT` on a proxy listener to
 *   the host and port of an allowed origin; tunnels are not served yet, and
 *   nothing was relayed. A `CONNECT` to any other is "host-not-allowed"
 *   (403). Both are reported with the `CONNECT`'s authority as the host and
 *   an empty path.
 *
 * A streamed answer cut short keeps the upstream's status, and its reason
 * is "response-too-large" (past the rule's byte limit), "idle-timeout",
 * "timeout" (its deadline), "upstream-error" (the upstream's transfer
 * failed), "policy-changed", "closed" or "client-closed".
 *
 * Returns: the reason, a short kebab-case word
 */
const char *
sandbox_gateway_event_get_reason (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, NULL);
  return self->reason;
}

/**
 * sandbox_gateway_event_get_status:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets the HTTP status the gateway answered the guest with.
 *
 * Returns: the HTTP status the guest was answered with, or 0 when the guest
 *   went away before an answer
 */
guint
sandbox_gateway_event_get_status (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->status;
}

/**
 * sandbox_gateway_event_get_upstream_status:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets the HTTP status the upstream server answered with.
 *
 * Returns: the upstream's HTTP status, or 0 when no upstream response arrived
 */
guint
sandbox_gateway_event_get_upstream_status (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->upstream_status;
}

/**
 * sandbox_gateway_event_get_bytes_sent:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets how many request body bytes the gateway sent upstream for the
 * request.
 *
 * Returns: the request body bytes sent upstream
 */
guint64
sandbox_gateway_event_get_bytes_sent (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->bytes_sent;
}

/**
 * sandbox_gateway_event_get_bytes_received:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets how many response body bytes the gateway received from upstream for
 * the request.
 *
 * Returns: the response body bytes received from upstream
 */
guint64
sandbox_gateway_event_get_bytes_received (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->bytes_received;
}

/**
 * sandbox_gateway_event_get_duration_us:
 * @self: a [struct@Sandbox.GatewayEvent]
 *
 * Gets how long the gateway took to decide on the request, in microseconds.
 *
 * Returns: microseconds from the end of the request headers to the decision
 */
gint64
sandbox_gateway_event_get_duration_us (SandboxGatewayEvent *self)
{
  g_return_val_if_fail (self != NULL, 0);
  return self->duration_us;
}
