/* sandbox-gateway-stream-private.h — the guest connections handed to libsoup
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_COMPILATION
# error "This is a private header."
#endif

#include <gio/gio.h>

G_BEGIN_DECLS

#define SANDBOX_TYPE_GATEWAY_STREAM (sandbox_gateway_stream_get_type ())
G_DECLARE_FINAL_TYPE (SandboxGatewayStream, sandbox_gateway_stream, SANDBOX, GATEWAY_STREAM, GSocketConnection)

typedef void (*SandboxGatewayStreamRefusalFunc) (const char *reason,
                                                 gpointer    user_data);

SandboxGatewayStream *sandbox_gateway_stream_new            (GSocket              *socket);
void                  sandbox_gateway_stream_set_refusal_func (SandboxGatewayStream            *self,
                                                               SandboxGatewayStreamRefusalFunc  func,
                                                               gpointer                         user_data);
void                  sandbox_gateway_stream_expect_request (SandboxGatewayStream *self);
gboolean              sandbox_gateway_stream_is_in_head     (SandboxGatewayStream *self);
void                  sandbox_gateway_stream_hold_response_head    (SandboxGatewayStream *self);
gboolean              sandbox_gateway_stream_release_response_head (SandboxGatewayStream *self);

G_END_DECLS
