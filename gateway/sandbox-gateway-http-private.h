/* sandbox-gateway-http-private.h — what a guest request must look like
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>

#include "sandbox-gateway-event.h"

G_BEGIN_DECLS

/* Why a request is refused before anything is forwarded. */
typedef struct
{
  guint status;
  SandboxGatewayDecision decision;
  const char *reason;
} SandboxGatewayRefusal;

/* The largest request or response body the gateway carries. */
#define SANDBOX_GATEWAY_MAX_BODY_BYTES (1024 * 1024)

gboolean    sandbox_gateway_http_check_head      (SoupMessageHeaders     *headers,
                                                  const char            **host,
                                                  SandboxGatewayRefusal  *refusal);
gboolean    sandbox_gateway_http_check_request   (SoupServerMessage      *msg,
                                                  gboolean                origin_form,
                                                  gboolean                proxy,
                                                  const char            **host,
                                                  char                  **target,
                                                  SandboxGatewayRefusal  *refusal);
gboolean    sandbox_gateway_http_check_connect   (SoupServerMessage      *msg,
                                                  char                  **authority,
                                                  guint16                *port,
                                                  SandboxGatewayRefusal  *refusal);
gboolean    sandbox_gateway_http_target_is_clean (const char             *target);
gboolean    sandbox_gateway_http_value_is_clean  (const char             *value);
gboolean    sandbox_gateway_http_method_is_allowed (const char           *method);

G_END_DECLS
