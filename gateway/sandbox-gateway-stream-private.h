/* sandbox-gateway-stream-private.h — the guest connections handed to libsoup
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "sandbox-gateway-framing-private.h"
#include "sandbox-gateway-input-private.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_GATEWAY_STREAM (sandbox_gateway_stream_get_type ())
G_DECLARE_FINAL_TYPE (SandboxGatewayStream, sandbox_gateway_stream, SANDBOX, GATEWAY_STREAM, GSocketConnection)

SandboxGatewayStream *sandbox_gateway_stream_new            (GSocket              *socket);
void                  sandbox_gateway_stream_set_refusal_func (SandboxGatewayStream            *self,
                                                               SandboxGatewayStreamRefusalFunc  func,
                                                               gpointer                         user_data);
void                  sandbox_gateway_stream_set_hangup_func (SandboxGatewayStream *self,
                                                              GSourceFunc           func,
                                                              gpointer              user_data);
void                  sandbox_gateway_stream_watch_for_hangup (SandboxGatewayStream *self);
gboolean              sandbox_gateway_stream_begin_body     (SandboxGatewayStream *self,
                                                             SandboxGatewayBody    body,
                                                             guint64               length);
gboolean              sandbox_gateway_stream_target_is_origin_form (SandboxGatewayStream *self);
gboolean              sandbox_gateway_stream_is_in_head     (SandboxGatewayStream *self);
gboolean              sandbox_gateway_stream_has_received   (SandboxGatewayStream *self);
void                  sandbox_gateway_stream_hold_response_head    (SandboxGatewayStream *self);
gboolean              sandbox_gateway_stream_release_response_head (SandboxGatewayStream *self);

G_END_DECLS
