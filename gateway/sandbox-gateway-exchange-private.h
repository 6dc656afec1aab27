/* sandbox-gateway-exchange-private.h — one guest request and its answer
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>

#include "sandbox-network-policy.h"
#include "sandbox-gateway-event-private.h"
#include "sandbox-gateway-http-private.h"
#include "sandbox-gateway-connection-private.h"
#include "sandbox-gateway-server-private.h"
#include "sandbox-gateway-upstream-private.h"

G_BEGIN_DECLS

typedef struct _SandboxGatewayExchange SandboxGatewayExchange;

typedef enum
{
  SANDBOX_GATEWAY_EXCHANGE_READING,
  SANDBOX_GATEWAY_EXCHANGE_FORWARDING,
  SANDBOX_GATEWAY_EXCHANGE_ANSWERED,
} SandboxGatewayExchangeState;

/* Opens the tunnel an allowed CONNECT asked for, once its answer is
 * written: @origin is the rule's, @hostname the CONNECT's host. */
typedef void (*SandboxGatewayTunnelOpener) (SoupServerMessage *msg,
                                            const char        *hostname,
                                            const char        *origin,
                                            gpointer           user_data);

/* What the exchanges of one server share: the server owns it; everything
 * in it belongs to the gateway thread. */
typedef struct
{
  SandboxGatewayServerCallbacks callbacks;
  gpointer user_data;
  guint request_timeout_ms;
  guint header_timeout_ms;
  GHashTable *table;          /* SoupServerMessage → SandboxGatewayExchange */
  SandboxUpstream *upstream;  /* made on the first forwarded request */
  guint n_forwarding;
  /* NULL without a CA: an allowed CONNECT is then answered 501. */
  SandboxGatewayTunnelOpener open_tunnel;
  gpointer open_tunnel_data;
  const char *upstream_ca_file; /* the server's; NULL: the system's store */
} SandboxGatewayExchanges;

void                     sandbox_gateway_exchanges_init    (SandboxGatewayExchanges             *self,
                                                            const SandboxGatewayServerCallbacks *callbacks,
                                                            gpointer                             user_data,
                                                            guint                                request_timeout_ms,
                                                            guint                                header_timeout_ms);
void                     sandbox_gateway_exchanges_clear   (SandboxGatewayExchanges             *self);
SandboxGatewayExchange  *sandbox_gateway_exchanges_lookup  (SandboxGatewayExchanges             *self,
                                                            SoupServerMessage                   *msg);
void                     sandbox_gateway_exchanges_abort_stale (SandboxGatewayExchanges         *self,
                                                                guint                            generation);
void                     sandbox_gateway_exchanges_abort_all   (SandboxGatewayExchanges         *self);
void                     sandbox_gateway_exchanges_report  (SandboxGatewayExchanges             *self,
                                                            const SandboxGatewayAuditRecord     *record);
void                     sandbox_gateway_exchanges_audit   (SandboxGatewayExchanges             *self,
                                                            SoupServerMessage                   *msg,
                                                            gint64                               started_us,
                                                            SandboxGatewayAuditRecord           *record);
gboolean                 sandbox_gateway_message_is_audited (SoupServerMessage                  *msg);
void                     sandbox_gateway_exchanges_refuse  (SandboxGatewayExchanges             *self,
                                                            SoupServerMessage                   *msg,
                                                            const char                          *host,
                                                            const char                          *target,
                                                            gint64                               started_us,
                                                            const SandboxGatewayRefusal         *refusal);
gboolean                 sandbox_gateway_exchanges_finish  (SandboxGatewayExchanges             *self,
                                                            SoupServerMessage                   *msg);

SandboxGatewayExchange  *sandbox_gateway_exchange_check    (SandboxGatewayExchanges             *exchanges,
                                                            SoupServerMessage                   *msg,
                                                            SandboxGatewayConnection            *connection,
                                                            SandboxNetworkPolicy                *policy,
                                                            guint                                generation);
void                     sandbox_gateway_exchange_run      (SandboxGatewayExchange              *self,
                                                            guint                                generation);
SandboxGatewayExchangeState sandbox_gateway_exchange_get_state (SandboxGatewayExchange          *self);
void                     sandbox_gateway_exchange_time_out (SandboxGatewayExchange              *self);
void                     sandbox_gateway_exchange_abandon  (SandboxGatewayExchange              *self);
void                     sandbox_gateway_exchange_refuse_input (SandboxGatewayExchange          *self,
                                                                guint                            status,
                                                                const char                      *reason);

G_END_DECLS
