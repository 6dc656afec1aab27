/* sandbox-gateway-request-private.h — what the gateway sends upstream for a guest request
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <curl/curl.h>
#include <libsoup/soup.h>

#include "sandbox-network-policy-private.h"

G_BEGIN_DECLS

/* How an upstream exchange failed: the guest's answer, the audit reason and
 * the error reported on upstream-error (owned by whoever holds the
 * failure). */
typedef struct
{
  const char *reason;
  const char *sandbox_error;
  GError *cause;
} SandboxGatewayFailure;

struct curl_slist *sandbox_gateway_request_headers   (SoupMessageHeaders       *headers,
                                                      const SandboxNetworkRule *rule);
void               sandbox_gateway_request_configure (CURL                     *easy,
                                                      const char               *url,
                                                      const char               *method,
                                                      GBytes                   *body,
                                                      struct curl_slist        *headers,
                                                      gint64                    remaining_ms,
                                                      const char               *ca_file);
void               sandbox_gateway_request_failure   (CURLcode                  result,
                                                      const char               *origin,
                                                      const char               *error_buffer,
                                                      gboolean                  redirected,
                                                      gboolean                  response_too_large,
                                                      SandboxGatewayFailure    *failure);

G_END_DECLS
