/* sandbox-gateway-connection-private.h — one guest connection and its deadline
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>

#include "sandbox-gateway-event.h"

G_BEGIN_DECLS

typedef struct _SandboxGatewayConnection SandboxGatewayConnection;

/* What the connection's deadline is about. */
typedef enum
{
  SANDBOX_GATEWAY_PHASE_IDLE,
  SANDBOX_GATEWAY_PHASE_HEADERS,
  SANDBOX_GATEWAY_PHASE_REQUEST,
  SANDBOX_GATEWAY_PHASE_RESPONSE,
} SandboxGatewayPhase;

/* How a connection tells its server what happened (as libsoup's
 * SoupServerConnection tells SoupServer through signals): it never calls
 * into the server otherwise. All run on the gateway thread. */
typedef struct
{
  /* The deadline of the current phase passed. */
  void (*deadline)      (SandboxGatewayConnection *connection,
                         gpointer                  user_data);
  /* The stream refused what the guest sent, once per connection; the
   * connection answers @status (0: none) after this, and libsoup drops it. */
  void (*input_refused) (SandboxGatewayConnection *connection,
                         guint                     status,
                         const char               *reason,
                         gpointer                  user_data);
  /* The guest closed the connection while nobody read it. */
  void (*hangup)        (SandboxGatewayConnection *connection,
                         gpointer                  user_data);
  /* libsoup let go of the connection, which is freed after this. */
  void (*closed)        (SandboxGatewayConnection *connection,
                         gpointer                  user_data);
} SandboxGatewayConnectionEvents;

SandboxGatewayConnection *sandbox_gateway_connection_new        (GSocket                              *socket,
                                                                 SandboxGatewayArrival                 arrival,
                                                                 guint                                 header_timeout_ms,
                                                                 const SandboxGatewayConnectionEvents *events,
                                                                 gpointer                              user_data);
gboolean                  sandbox_gateway_connection_serve      (SandboxGatewayConnection             *self,
                                                                 SoupServer                           *soup,
                                                                 GSocketAddress                       *local_address,
                                                                 GError                              **error);
SandboxGatewayConnection *sandbox_gateway_connection_of         (SoupServerMessage                    *msg);
void                      sandbox_gateway_connection_detach     (SandboxGatewayConnection             *self);

void                      sandbox_gateway_connection_arm        (SandboxGatewayConnection             *self,
                                                                 SandboxGatewayPhase                   phase,
                                                                 SoupServerMessage                    *msg,
                                                                 guint                                 timeout_ms);
void                      sandbox_gateway_connection_disarm     (SandboxGatewayConnection             *self);
void                      sandbox_gateway_connection_drop       (SandboxGatewayConnection             *self);
SandboxGatewayPhase       sandbox_gateway_connection_get_phase  (SandboxGatewayConnection             *self);
SoupServerMessage        *sandbox_gateway_connection_get_current (SandboxGatewayConnection            *self);
gboolean                  sandbox_gateway_connection_is_current (SandboxGatewayConnection             *self,
                                                                 SoupServerMessage                    *msg);

gboolean                  sandbox_gateway_connection_is_in_head (SandboxGatewayConnection             *self);
gboolean                  sandbox_gateway_connection_has_spoken (SandboxGatewayConnection             *self);
gboolean                  sandbox_gateway_connection_waits_for_head (SandboxGatewayConnection         *self);
gint64                    sandbox_gateway_connection_get_deadline_us (SandboxGatewayConnection        *self);
SandboxGatewayArrival     sandbox_gateway_connection_get_arrival (SandboxGatewayConnection           *self);
void                      sandbox_gateway_connection_set_tunnel_origin (SandboxGatewayConnection *self,
                                                                        const char               *origin);
const char               *sandbox_gateway_connection_get_tunnel_origin (SandboxGatewayConnection *self);
GSocket                  *sandbox_gateway_connection_get_socket (SandboxGatewayConnection            *self);
gboolean                  sandbox_gateway_connection_target_is_origin_form (SandboxGatewayConnection *self);
gboolean                  sandbox_gateway_connection_track_body (SandboxGatewayConnection             *self,
                                                                 SoupServerMessage                    *msg);
void                      sandbox_gateway_connection_watch_for_hangup (SandboxGatewayConnection       *self);
void                      sandbox_gateway_connection_hold_response_head (SandboxGatewayConnection     *self);
gboolean                  sandbox_gateway_connection_release_response_head (SandboxGatewayConnection  *self);
gboolean                  sandbox_gateway_connection_claim_refusal (SandboxGatewayConnection          *self);

G_END_DECLS
