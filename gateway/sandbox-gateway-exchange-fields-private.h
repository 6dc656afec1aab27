/* sandbox-gateway-exchange-fields-private.h — what an exchange holds, for its two files
 *
 * sandbox-gateway-exchange.c (its life, the upstream transfer and the answer)
 * and sandbox-gateway-exchange-check.c (the checks before the body is read)
 * share it; nothing else sees an exchange's fields.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-gateway-exchange-private.h"
#include "sandbox-gateway-streamed-answer-private.h"

G_BEGIN_DECLS

struct _SandboxGatewayExchange
{
  SandboxGatewayExchanges *exchanges;
  SoupServerMessage *msg;
  SandboxGatewayConnection *connection;
  SandboxGatewayExchangeState state;

  SandboxNetworkPolicy *policy;
  const SandboxNetworkRule *rule;
  char *origin;              /* where it goes: the rule's, or the host a pattern covered */
  guint policy_generation;

  char *host;
  char *target;
  gint64 started_us;

  GByteArray *chunked_body;
  gboolean request_too_large;
  GBytes *request_body;

  CURL *easy;
  struct curl_slist *upstream_headers;
  GByteArray *response_body;
  gboolean response_too_large;
  gboolean redirected;
  char error_buffer[CURL_ERROR_SIZE];

  SandboxGatewayStreamedAnswer *stream;  /* the rule streams its answers */
};

SandboxGatewayExchange *sandbox_gateway_exchange_new            (SandboxGatewayExchanges  *exchanges,
                                                                 SoupServerMessage        *msg,
                                                                 SandboxGatewayConnection *connection,
                                                                 SandboxNetworkPolicy     *policy,
                                                                 const SandboxNetworkRule *rule,
                                                                 char                     *origin,
                                                                 guint                     generation,
                                                                 const char               *host,
                                                                 char                     *target,
                                                                 gint64                    started_us);
void                    sandbox_gateway_exchanges_report_error  (SandboxGatewayExchanges  *self,
                                                                 const GError             *cause);
GError                 *sandbox_gateway_request_too_large_error (const char               *origin,
                                                                 const char               *verb);

G_END_DECLS
