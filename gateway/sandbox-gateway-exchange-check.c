/* sandbox-gateway-exchange-check.c — the checks on a guest request, before its body is read
 *
 * Everything that needs only the request's head — framing, Host, method,
 * target, the policy's rule, the declared size — is decided here, so that
 * nothing of a refused request is read or forwarded; a chunked body is
 * counted as it arrives and never kept past the limit.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include "sandbox-error.h"
#include "sandbox-network-policy-private.h"
#include "sandbox-gateway-answer-private.h"
#include "sandbox-gateway-exchange-fields-private.h"

/* The cause reported for a request body over the limit, @verb being how the
 * guest gave its size ("declared", "sent"). */
GError *
sandbox_gateway_request_too_large_error (const char *origin,
                                         const char *verb)
{
  return g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                      "Sandbox request limit exceeded (a request to %s %s more than %d bytes)",
                      origin, verb, SANDBOX_GATEWAY_MAX_BODY_BYTES);
}

/* Answers @msg, refused from an early handler, and audits it. */
static void
refuse_early (SandboxGatewayExchanges     *self,
              SoupServerMessage           *msg,
              const char                  *host,
              const char                  *target,
              gint64                       started_us,
              const SandboxGatewayRefusal *refusal,
              const char                  *sandbox_error,
              gboolean                     close_connection)
{
  sandbox_gateway_answer_early (msg, refusal->status, sandbox_error, close_connection);
  sandbox_gateway_exchanges_audit (self, msg, started_us, &(SandboxGatewayAuditRecord) {
    .host = host, .path = target,
    .decision = refusal->decision, .reason = refusal->reason, .status = refusal->status,
  });
}

/* The connection is closed after a bad request, and after any refused
 * request with a body: whatever follows must not be parsed as the next
 * request. */
void
sandbox_gateway_exchanges_refuse (SandboxGatewayExchanges     *self,
                                  SoupServerMessage           *msg,
                                  const char                  *host,
                                  const char                  *target,
                                  gint64                       started_us,
                                  const SandboxGatewayRefusal *refusal)
{
  refuse_early (self, msg, host, target, started_us, refusal,
                sandbox_gateway_answer_error_for (refusal->decision),
                refusal->status == SOUP_STATUS_BAD_REQUEST || sandbox_gateway_request_has_body (msg));
}


static void
refuse_too_large_early (SandboxGatewayExchanges *self,
                        SoupServerMessage       *msg,
                        const char              *host,
                        const char              *target,
                        gint64                   started_us,
                        const char              *origin)
{
  g_autoptr(GError) cause = sandbox_gateway_request_too_large_error (origin, "declared");
  SandboxGatewayRefusal refusal = {
    SOUP_STATUS_BAD_GATEWAY, SANDBOX_GATEWAY_DECISION_FAILED, "request-too-large",
  };

  refuse_early (self, msg, host, target, started_us, &refusal,
                sandbox_error_code_name (SANDBOX_ERROR_LIMIT), TRUE);
  sandbox_gateway_exchanges_report_error (self, cause);
}

static void
on_got_chunk (SoupServerMessage *msg,
              GBytes            *chunk,
              gpointer           user_data)
{
  SandboxGatewayExchange *exchange = user_data;
  gsize length = 0;
  const guint8 *data = g_bytes_get_data (chunk, &length);

  if (exchange->request_too_large)
    return;

  if (exchange->chunked_body->len + length > SANDBOX_GATEWAY_MAX_BODY_BYTES)
    {
      /* Keep reading, to answer on a sane connection, but keep nothing. */
      exchange->request_too_large = TRUE;
      g_byte_array_set_size (exchange->chunked_body, 0);
      return;
    }

  g_byte_array_append (exchange->chunked_body, data, length);
}

/*
 * sandbox_gateway_exchange_check:
 * @connection: (nullable): the connection @msg came on
 * @policy: the current policy
 * @generation: its generation
 *
 * Runs once the request headers are read, before any of the body is: every
 * check that does not need the body happens here, so nothing of a refused
 * request is read or forwarded.
 *
 * Returns: (nullable) (transfer none): the request's exchange, or %NULL if
 *   it was refused (answered and audited)
 */
SandboxGatewayExchange *
sandbox_gateway_exchange_check (SandboxGatewayExchanges  *exchanges,
                                SoupServerMessage        *msg,
                                SandboxGatewayConnection *connection,
                                SandboxNetworkPolicy     *policy,
                                guint                     generation)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  gint64 started_us = g_get_monotonic_time ();
  const SandboxNetworkRule *rule = NULL;
  SandboxGatewayRefusal refusal;
  g_autofree char *target = NULL;
  const char *host = NULL;
  SandboxGatewayExchange *exchange;
  gboolean origin_form;

  /* Asked before the stream moves on to the body. */
  origin_form = sandbox_gateway_connection_target_is_origin_form (connection);

  if (!sandbox_gateway_connection_track_body (connection, msg))
    {
      refusal = (SandboxGatewayRefusal) {
        SOUP_STATUS_BAD_REQUEST, SANDBOX_GATEWAY_DECISION_BAD_REQUEST, "invalid-framing",
      };
      sandbox_gateway_exchanges_refuse (exchanges, msg, NULL, NULL, started_us, &refusal);
      return NULL;
    }
  if (!sandbox_gateway_http_check_request (msg, origin_form, &host, &target, &refusal))
    {
      sandbox_gateway_exchanges_refuse (exchanges, msg, host, target, started_us, &refusal);
      return NULL;
    }

  if (sandbox_network_policy_get_kind (policy) == SANDBOX_NETWORK_POLICY_ALLOW_LIST)
    rule = sandbox_network_policy_find_rule (policy, host);

  if (rule == NULL)
    {
      refusal = (SandboxGatewayRefusal) {
        SOUP_STATUS_FORBIDDEN, SANDBOX_GATEWAY_DECISION_DENIED, "host-not-allowed",
      };
      sandbox_gateway_exchanges_refuse (exchanges, msg, host, target, started_us, &refusal);
      return NULL;
    }

  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CONTENT_LENGTH &&
      soup_message_headers_get_content_length (headers) > SANDBOX_GATEWAY_MAX_BODY_BYTES)
    {
      refuse_too_large_early (exchanges, msg, host, target, started_us, rule->origin);
      return NULL;
    }

  exchange = sandbox_gateway_exchange_new (exchanges, msg, connection, policy, rule, generation,
                           host, g_steal_pointer (&target), started_us);

  /* A chunked body is counted as it arrives and never kept past the limit. */
  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CHUNKED)
    {
      exchange->chunked_body = g_byte_array_new ();
      soup_message_body_set_accumulate (soup_server_message_get_request_body (msg), FALSE);
      g_signal_connect (msg, "got-chunk", G_CALLBACK (on_got_chunk), exchange);
    }

  return exchange;
}
