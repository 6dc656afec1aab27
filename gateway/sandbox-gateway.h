/* sandbox-gateway.h — the per-session network gateway
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-network-policy.h"
#include "sandbox-gateway-event.h"

G_BEGIN_DECLS

/**
 * SANDBOX_GATEWAY_ERROR_HEADER:
 *
 * The response header on every answer the gateway makes itself rather than
 * relaying from upstream. Its value tells an agent what happened:
 * `SANDBOX_NETWORK_DENIED` (403: host, method or target not allowed; 502: a
 * redirect was refused), `SANDBOX_BUSY` (503: too many requests in flight),
 * `SANDBOX_LIMIT` (502: a body over 1 MiB or the request deadline),
 * `SANDBOX_INVALID` (400: a malformed or ambiguous request),
 * `SANDBOX_UNAVAILABLE` (502: the policy changed or the gateway closed while
 * the request was in flight) and `SANDBOX_UPSTREAM_FAILED` (502: the upstream
 * could not be reached or failed).
 */
#define SANDBOX_GATEWAY_ERROR_HEADER "Sandbox-Error"

#define SANDBOX_TYPE_GATEWAY (sandbox_gateway_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxGateway, sandbox_gateway, SANDBOX, GATEWAY, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxGateway       *sandbox_gateway_new             (SandboxNetworkPolicy  *policy,
                                                       GError               **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxGateway       *sandbox_gateway_new_full        (SandboxNetworkPolicy  *policy,
                                                       guint                  request_timeout_ms,
                                                       guint                  header_timeout_ms,
                                                       GError               **error);
SANDBOX_AVAILABLE_IN_ALL
const char           *sandbox_gateway_get_socket_path (SandboxGateway        *self);
SANDBOX_AVAILABLE_IN_ALL
const char           *sandbox_gateway_get_ca_file     (SandboxGateway        *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxNetworkPolicy *sandbox_gateway_dup_policy      (SandboxGateway        *self);
SANDBOX_AVAILABLE_IN_ALL
void                  sandbox_gateway_set_policy      (SandboxGateway        *self,
                                                       SandboxNetworkPolicy  *policy);
SANDBOX_AVAILABLE_IN_ALL
guint                 sandbox_gateway_get_request_timeout_ms (SandboxGateway *self);
SANDBOX_AVAILABLE_IN_ALL
guint                 sandbox_gateway_get_header_timeout_ms  (SandboxGateway *self);
SANDBOX_AVAILABLE_IN_ALL
guint64               sandbox_gateway_get_dropped_events (SandboxGateway     *self);
SANDBOX_AVAILABLE_IN_ALL
guint                 sandbox_gateway_add_proxy_listener    (SandboxGateway  *self,
                                                             GSocket         *listener,
                                                             GError         **error);
SANDBOX_AVAILABLE_IN_ALL
void                  sandbox_gateway_remove_proxy_listener (SandboxGateway  *self,
                                                             guint            id);
SANDBOX_AVAILABLE_IN_ALL
void                  sandbox_gateway_close           (SandboxGateway        *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean              sandbox_gateway_park            (SandboxGateway        *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean              sandbox_gateway_unpark          (SandboxGateway        *self,
                                                       GError               **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean              sandbox_gateway_is_parked       (SandboxGateway        *self);

G_END_DECLS
