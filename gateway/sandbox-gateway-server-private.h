/* sandbox-gateway-server-private.h — the gateway-thread side of a gateway
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "sandbox-network-policy.h"
#include "sandbox-gateway-event.h"
#include "sandbox-gateway-ca-private.h"

G_BEGIN_DECLS

typedef struct _SandboxGatewayServer SandboxGatewayServer;

/* Both are called on the gateway thread. */
typedef struct
{
  void (*audit)          (SandboxGatewayEvent *event,
                          gpointer             user_data);
  void (*upstream_error) (const GError        *cause,
                          gpointer             user_data);
} SandboxGatewayServerCallbacks;

SandboxGatewayServer *sandbox_gateway_server_new        (GSocket                             *listener,
                                                         SandboxNetworkPolicy                *policy,
                                                         guint                                request_timeout_ms,
                                                         guint                                header_timeout_ms,
                                                         SandboxGatewayCa                    *ca,
                                                         const char                          *upstream_ca_file,
                                                         const SandboxGatewayServerCallbacks *callbacks,
                                                         gpointer                             user_data,
                                                         GError                             **error);
SandboxNetworkPolicy *sandbox_gateway_server_dup_policy (SandboxGatewayServer                *self);
void                  sandbox_gateway_server_set_policy (SandboxGatewayServer                *self,
                                                         SandboxNetworkPolicy                *policy);
guint                 sandbox_gateway_server_add_proxy_listener    (SandboxGatewayServer *self,
                                                                    GSocket              *listener);
void                  sandbox_gateway_server_remove_proxy_listener (SandboxGatewayServer *self,
                                                                    guint                 id);
void                  sandbox_gateway_server_free       (SandboxGatewayServer                *self);

G_END_DECLS
