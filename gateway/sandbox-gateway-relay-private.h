/* sandbox-gateway-relay-private.h — the gateway's signals, relayed to its creator's context
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "sandbox-gateway-event.h"

G_BEGIN_DECLS

typedef struct _SandboxGatewayRelay SandboxGatewayRelay;

/* Emits, in the owner's context, what one queued emission holds: an audit
 * @event, or an upstream error's @cause. */
typedef void (*SandboxGatewayRelayEmitFunc) (GObject             *owner,
                                             SandboxGatewayEvent *event,
                                             const GError        *cause);

SandboxGatewayRelay *sandbox_gateway_relay_new         (GObject                     *owner,
                                                        SandboxGatewayRelayEmitFunc  emit);
SandboxGatewayRelay *sandbox_gateway_relay_ref         (SandboxGatewayRelay         *relay);
void                 sandbox_gateway_relay_unref       (SandboxGatewayRelay         *relay);
void                 sandbox_gateway_relay_queue       (SandboxGatewayRelay         *relay,
                                                        SandboxGatewayEvent         *event,
                                                        const GError                *cause);
void                 sandbox_gateway_relay_set_context (SandboxGatewayRelay         *relay,
                                                        GMainContext                *context);
void                 sandbox_gateway_relay_close       (SandboxGatewayRelay         *relay);
guint64              sandbox_gateway_relay_get_dropped (SandboxGatewayRelay         *relay);

G_END_DECLS
