/* sandbox-gateway-output-private.h — what libsoup writes to a guest connection
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SANDBOX_TYPE_GATEWAY_OUTPUT (sandbox_gateway_output_get_type ())
G_DECLARE_FINAL_TYPE (SandboxGatewayOutput, sandbox_gateway_output, SANDBOX, GATEWAY_OUTPUT, GOutputStream)

SandboxGatewayOutput *sandbox_gateway_output_new       (GSocket              *socket);
void                  sandbox_gateway_output_hold_next (SandboxGatewayOutput *self);
gboolean              sandbox_gateway_output_release   (SandboxGatewayOutput *self);

G_END_DECLS
