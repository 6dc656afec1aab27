/* sandbox-gateway-tunnel-private.h — the guest's TLS after an allowed CONNECT, ended by the gateway
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>

#include "sandbox-gateway-ca-private.h"
#include "sandbox-gateway-connection-private.h"

G_BEGIN_DECLS

/* How a tunnel tells its server what happened; both run on the gateway
 * thread, never after the server's cancellable was cancelled. */
typedef struct
{
  /* The CONNECT's connection leaves libsoup for the tunnel: the server
   * forgets it (it is detached right after). */
  void (*taken) (SandboxGatewayConnection *connection,
                 gpointer                  user_data);
  /* The handshake is done: @plain carries what the guest sends inside the
   * tunnel, in the clear, to be served as a connection of its own. */
  void (*ready) (GSocket                  *plain,
                 const char               *origin,
                 gpointer                  user_data);
  /* The guest's TLS was refused before the handshake: @reason, a static
   * string, says why, and @host is what the guest asked for. */
  void (*refused) (const char             *host,
                   const char             *reason,
                   gpointer                user_data);
} SandboxGatewayTunnelHooks;

void sandbox_gateway_tunnel_open (SoupServerMessage               *msg,
                                  SandboxGatewayCa                *ca,
                                  const char                      *hostname,
                                  const char                      *origin,
                                  guint                            handshake_timeout_ms,
                                  GCancellable                    *cancellable,
                                  const SandboxGatewayTunnelHooks *hooks,
                                  gpointer                         user_data);

G_END_DECLS
