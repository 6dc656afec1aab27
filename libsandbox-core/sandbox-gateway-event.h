/* sandbox-gateway-event.h — one audited gateway decision
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <glib-object.h>

#include "sandbox-version-macros.h"

G_BEGIN_DECLS

/**
 * SandboxGatewayDecision:
 * @SANDBOX_GATEWAY_DECISION_ALLOWED: forwarded upstream; the upstream's
 *   response was returned to the guest
 * @SANDBOX_GATEWAY_DECISION_DENIED: refused by the policy or the method rules
 *   (403, `Sandbox-Error: SANDBOX_NETWORK_DENIED`), or a `CONNECT` to an
 *   allowed origin, which is not served yet (501, `Sandbox-Error:
 *   SANDBOX_UNAVAILABLE`)
 * @SANDBOX_GATEWAY_DECISION_BUSY: refused because too many requests were in
 *   flight (503, `Sandbox-Error: SANDBOX_BUSY`)
 * @SANDBOX_GATEWAY_DECISION_FAILED: allowed, but the upstream exchange failed
 *   or broke a limit (502)
 * @SANDBOX_GATEWAY_DECISION_BAD_REQUEST: the request was malformed or
 *   ambiguous and nothing was forwarded (400, `Sandbox-Error: SANDBOX_INVALID`)
 *
 * What the gateway did with a guest request.
 */
typedef enum
{
  SANDBOX_GATEWAY_DECISION_ALLOWED,
  SANDBOX_GATEWAY_DECISION_DENIED,
  SANDBOX_GATEWAY_DECISION_BUSY,
  SANDBOX_GATEWAY_DECISION_FAILED,
  SANDBOX_GATEWAY_DECISION_BAD_REQUEST,
} SandboxGatewayDecision;

#define SANDBOX_TYPE_GATEWAY_DECISION (sandbox_gateway_decision_get_type ())
SANDBOX_AVAILABLE_IN_ALL
GType sandbox_gateway_decision_get_type (void) G_GNUC_CONST;
SANDBOX_AVAILABLE_IN_ALL
const char *sandbox_gateway_decision_to_string (SandboxGatewayDecision decision);

/**
 * SandboxGatewayArrival:
 * @SANDBOX_GATEWAY_ARRIVAL_SOCKET: on the gateway's Unix socket, the
 *   reference way in
 * @SANDBOX_GATEWAY_ARRIVAL_PROXY: on a proxy listener (the guest's
 *   `http_proxy`), see [method@Sandbox.Gateway.add_proxy_listener]
 * @SANDBOX_GATEWAY_ARRIVAL_TUNNEL: inside the TLS of a `CONNECT` tunnel on a
 *   proxy listener, which the gateway ended itself
 *
 * How a request reached the gateway.
 */
typedef enum
{
  SANDBOX_GATEWAY_ARRIVAL_SOCKET,
  SANDBOX_GATEWAY_ARRIVAL_PROXY,
  SANDBOX_GATEWAY_ARRIVAL_TUNNEL,
} SandboxGatewayArrival;

#define SANDBOX_TYPE_GATEWAY_ARRIVAL (sandbox_gateway_arrival_get_type ())
SANDBOX_AVAILABLE_IN_ALL
GType sandbox_gateway_arrival_get_type (void) G_GNUC_CONST;
SANDBOX_AVAILABLE_IN_ALL
const char *sandbox_gateway_arrival_to_string (SandboxGatewayArrival arrival);

/**
 * SandboxGatewayEvent:
 *
 * An immutable record of one request the gateway decided on: host, method,
 * path and query, how it arrived, decision, reason, upstream status, bytes
 * each way, duration and the session it came from. It never holds a header value.
 */
typedef struct _SandboxGatewayEvent SandboxGatewayEvent;

#define SANDBOX_TYPE_GATEWAY_EVENT (sandbox_gateway_event_get_type ())
SANDBOX_AVAILABLE_IN_ALL
GType                   sandbox_gateway_event_get_type           (void) G_GNUC_CONST;

SANDBOX_AVAILABLE_IN_ALL
SandboxGatewayEvent    *sandbox_gateway_event_ref                (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
void                    sandbox_gateway_event_unref              (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
const char             *sandbox_gateway_event_get_host           (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
const char             *sandbox_gateway_event_get_method         (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
const char             *sandbox_gateway_event_get_path           (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxGatewayArrival   sandbox_gateway_event_get_arrival        (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
const char             *sandbox_gateway_event_get_session_id     (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxGatewayDecision  sandbox_gateway_event_get_decision       (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
const char             *sandbox_gateway_event_get_reason         (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
guint                   sandbox_gateway_event_get_status         (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
guint                   sandbox_gateway_event_get_upstream_status (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
guint64                 sandbox_gateway_event_get_bytes_sent     (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
guint64                 sandbox_gateway_event_get_bytes_received (SandboxGatewayEvent *self);
SANDBOX_AVAILABLE_IN_ALL
gint64                  sandbox_gateway_event_get_duration_us    (SandboxGatewayEvent *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxGatewayEvent, sandbox_gateway_event_unref)

G_END_DECLS
