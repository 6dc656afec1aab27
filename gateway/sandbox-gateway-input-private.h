/* sandbox-gateway-input-private.h — what libsoup reads of a guest connection
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "sandbox-gateway-framing-private.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_GATEWAY_INPUT (sandbox_gateway_input_get_type ())
G_DECLARE_FINAL_TYPE (SandboxGatewayInput, sandbox_gateway_input, SANDBOX, GATEWAY_INPUT, GInputStream)

typedef void (*SandboxGatewayStreamRefusalFunc) (guint       status,
                                                 const char *reason,
                                                 gpointer    user_data);

SandboxGatewayInput   *sandbox_gateway_input_new              (GSocket                         *socket);
SandboxGatewayFraming *sandbox_gateway_input_get_framing      (SandboxGatewayInput             *self);
gboolean               sandbox_gateway_input_has_received     (SandboxGatewayInput             *self);
void                   sandbox_gateway_input_set_refusal_func (SandboxGatewayInput             *self,
                                                               SandboxGatewayStreamRefusalFunc  func,
                                                               gpointer                         user_data);
void                   sandbox_gateway_input_set_hangup_func  (SandboxGatewayInput             *self,
                                                               GSourceFunc                      func,
                                                               gpointer                         user_data);
void                   sandbox_gateway_input_watch_for_hangup (SandboxGatewayInput             *self);

G_END_DECLS
