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

#include <string.h>

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

/* The rule for a CONNECT's @hostname and @port: one whose origin has both,
 * whatever its scheme (the tunnel will carry its TLS); an exact origin
 * before a pattern that covers them too. */
static const SandboxNetworkRule *
find_rule_for_authority (SandboxNetworkPolicy *policy,
                         const char           *hostname,
                         guint16               port)
{
  guint n_rules = sandbox_network_policy_get_n_rules (policy);
  const SandboxNetworkRule *found = NULL;

  for (guint i = 0; i < n_rules; i++)
    {
      const SandboxNetworkRule *rule = sandbox_network_policy_get_rule (policy, i);

      if (sandbox_network_rule_covers (rule, hostname, port) && (found == NULL || found->pattern))
        found = rule;
    }

  return found;
}

/* Answers an allowed CONNECT with 200 and has the server end the guest's
 * TLS once the answer is written (sandbox-gateway-tunnel.c). */
static void
open_tunnel (SandboxGatewayExchanges  *exchanges,
             SoupServerMessage        *msg,
             const char               *hostname,
             const char               *authority,
             const SandboxNetworkRule *rule,
             gint64                    started_us)
{
  /* As a Host header names it (without the scheme's default port): a
   * pattern's rule gives the origin of the host it covered. */
  g_autofree char *origin =
    sandbox_network_rule_dup_origin_for (rule, rule->port == 443 ? hostname : authority);

  soup_message_body_set_accumulate (soup_server_message_get_request_body (msg), FALSE);
  soup_server_message_set_status (msg, SOUP_STATUS_OK, "Connection established");
  sandbox_gateway_exchanges_audit (exchanges, msg, started_us, &(SandboxGatewayAuditRecord) {
    .host = authority, .decision = SANDBOX_GATEWAY_DECISION_ALLOWED, .reason = "tunnel-opened",
    .status = SOUP_STATUS_OK,
  });
  exchanges->open_tunnel (msg, hostname, origin, exchanges->open_tunnel_data);
}

/* Why a CONNECT an origin allows is still not tunnelled, or NULL: the
 * gateway makes certificates for host names of https origins only (an IP
 * literal has no name to give the guest's TLS, and the tunnel's requests go
 * upstream over https). */
static const char *
tunnel_refusal (const char               *hostname,
                const SandboxNetworkRule *rule)
{
  if (g_hostname_is_ip_address (hostname))
    return "tunnel-to-ip-literal";
  if (g_strcmp0 (rule->scheme, "https") != 0)
    return "tunnel-not-https";
  return NULL;
}

/* A CONNECT on a proxy listener: refused (403) unless an allowed https
 * origin has its host (a name) and port; then answered 200 and tunnelled,
 * or 501 when the gateway has no CA to end TLS with. Nothing of the
 * connection is ever relayed as it is: a refusal closes it. */
static void
check_connect (SandboxGatewayExchanges *exchanges,
               SoupServerMessage       *msg,
               SandboxNetworkPolicy    *policy,
               gint64                   started_us)
{
  g_autofree char *hostname = NULL;
  g_autofree char *authority = NULL;
  const SandboxNetworkRule *rule = NULL;
  SandboxGatewayRefusal refusal;
  const char *reason;
  guint16 port;

  if (!sandbox_gateway_http_check_connect (msg, &hostname, &port, &refusal))
    {
      sandbox_gateway_exchanges_refuse (exchanges, msg, NULL, NULL, started_us, &refusal);
      return;
    }
  authority = strchr (hostname, ':') != NULL ? g_strdup_printf ("[%s]:%u", hostname, port)
                                             : g_strdup_printf ("%s:%u", hostname, port);
  if (sandbox_network_policy_get_kind (policy) == SANDBOX_NETWORK_POLICY_ALLOW_LIST)
    rule = find_rule_for_authority (policy, hostname, port);
  reason = rule == NULL ? "host-not-allowed"
         : exchanges->open_tunnel != NULL ? tunnel_refusal (hostname, rule)
         : NULL;
  if (reason != NULL)
    {
      refusal = (SandboxGatewayRefusal) {
        SOUP_STATUS_FORBIDDEN, SANDBOX_GATEWAY_DECISION_DENIED, reason,
      };
      refuse_early (exchanges, msg, authority, NULL, started_us, &refusal,
                    sandbox_gateway_answer_error_for (refusal.decision), TRUE);
      return;
    }
  if (exchanges->open_tunnel != NULL)
    {
      open_tunnel (exchanges, msg, hostname, authority, rule, started_us);
      return;
    }

  refusal = (SandboxGatewayRefusal) {
    SOUP_STATUS_NOT_IMPLEMENTED, SANDBOX_GATEWAY_DECISION_DENIED, "tunnel-not-served",
  };
  refuse_early (exchanges, msg, authority, NULL, started_us, &refusal,
                sandbox_error_code_name (SANDBOX_ERROR_UNAVAILABLE), TRUE);
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
  const char *tunnel_origin;
  g_autofree char *origin = NULL;
  SandboxGatewayExchange *exchange;
  gboolean origin_form;
  gboolean proxy = sandbox_gateway_connection_get_arrival (connection) == SANDBOX_GATEWAY_ARRIVAL_PROXY;

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
  if (proxy && soup_server_message_get_method (msg) == SOUP_METHOD_CONNECT)
    {
      check_connect (exchanges, msg, policy, started_us);
      return NULL;
    }
  if (!sandbox_gateway_http_check_request (msg, origin_form, proxy, &host, &target, &refusal))
    {
      sandbox_gateway_exchanges_refuse (exchanges, msg, host, target, started_us, &refusal);
      return NULL;
    }

  if (sandbox_network_policy_get_kind (policy) == SANDBOX_NETWORK_POLICY_ALLOW_LIST)
    rule = sandbox_network_policy_find_rule (policy, host);

  /* A tunnel's requests must name the origin its CONNECT named, whose
   * certificate the guest's TLS was answered with: another, even an allowed
   * one, is domain fronting. */
  tunnel_origin = sandbox_gateway_connection_get_tunnel_origin (connection);
  if (rule != NULL)
    origin = sandbox_network_rule_dup_origin_for (rule, host);
  if (rule == NULL || (tunnel_origin != NULL && g_ascii_strcasecmp (origin, tunnel_origin) != 0))
    {
      refusal = (SandboxGatewayRefusal) {
        SOUP_STATUS_FORBIDDEN, SANDBOX_GATEWAY_DECISION_DENIED,
        rule == NULL ? "host-not-allowed" : "host-not-tunnel-origin",
      };
      sandbox_gateway_exchanges_refuse (exchanges, msg, host, target, started_us, &refusal);
      return NULL;
    }

  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CONTENT_LENGTH &&
      soup_message_headers_get_content_length (headers) > SANDBOX_GATEWAY_MAX_BODY_BYTES)
    {
      refuse_too_large_early (exchanges, msg, host, target, started_us, origin);
      return NULL;
    }

  exchange = sandbox_gateway_exchange_new (exchanges, msg, connection, policy, rule,
                                           g_steal_pointer (&origin), generation, host,
                                           g_steal_pointer (&target), started_us);

  /* A chunked body is counted as it arrives and never kept past the limit. */
  if (soup_message_headers_get_encoding (headers) == SOUP_ENCODING_CHUNKED)
    {
      exchange->chunked_body = g_byte_array_new ();
      soup_message_body_set_accumulate (soup_server_message_get_request_body (msg), FALSE);
      g_signal_connect (msg, "got-chunk", G_CALLBACK (on_got_chunk), exchange);
    }

  return exchange;
}
