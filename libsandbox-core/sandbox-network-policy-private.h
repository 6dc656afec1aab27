/* sandbox-network-policy-private.h — what only the library's gateway may see
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-network-policy.h"

G_BEGIN_DECLS

/*
 * SandboxNetworkRule:
 * @origin: the normalized origin, "scheme://host[:port]" without a trailing slash
 *   and without a default port ("https://api.example.com", "http://127.0.0.1:8080")
 * @scheme: "http" or "https"
 * @host: the host as it must appear in a Host header: lowercase hostname, IPv6
 *   literals in brackets, plus ":port" when the port is not the scheme's default
 * @hostname: the hostname alone (brackets kept for IPv6)
 * @port: the port number, explicit or the scheme's default
 * @header_names: (array zero-terminated=1): injected header names, in insertion order
 * @header_values: (array zero-terminated=1): their values, same order
 * @stream: whether (and within which limits) the upstream's answer is relayed
 *   as it arrives
 *
 * One validated allow-list rule. Immutable, owned by its policy.
 */

/*
 * SandboxNetworkStream:
 * @enabled: whether the rule opted into streaming
 * @max_bytes: the most bytes of body relayed, 0 for the gateway's own limit
 * @idle_timeout_ms: the longest wait for the next bytes, 0 for the gateway's
 *   request timeout
 * @timeout_ms: the whole exchange's deadline, 0 for the gateway's request
 *   timeout
 */
typedef struct
{
  gboolean enabled;
  guint64 max_bytes;
  guint idle_timeout_ms;
  guint timeout_ms;
} SandboxNetworkStream;

/* The largest limits a rule may set: beyond them a value is a mistake. */
#define SANDBOX_NETWORK_STREAM_MAX_BYTES (G_GUINT64_CONSTANT (1) << 40)
#define SANDBOX_NETWORK_STREAM_MAX_TIMEOUT_MS (24u * 60 * 60 * 1000)

typedef struct
{
  char *origin;
  char *scheme;
  char *host;
  char *hostname;               /* a pattern's begins with "*." */
  guint16 port;
  gboolean pattern;             /* "*.example.com": one label more than its name */
  char **header_names;
  char **header_values;
  SandboxNetworkStream stream;
} SandboxNetworkRule;

/* The rule whose host equals @host (compared case-insensitively, as hosts
 * are), else the first pattern's that covers it, or NULL. */
const SandboxNetworkRule *sandbox_network_policy_find_rule (SandboxNetworkPolicy *self,
                                                            const char           *host);
const SandboxNetworkRule *sandbox_network_policy_get_rule  (SandboxNetworkPolicy *self,
                                                            guint                 index);
/* An allow-list of @rules (a reference is taken), for the builder. */
SandboxNetworkPolicy     *sandbox_network_policy_new_allow_list (GPtrArray        *rules);

/* The rules themselves (sandbox-network-rule.c), for the policy and its
 * builder. Errors never echo a header value or an origin. */
#define SANDBOX_NETWORK_HEADER_VALUE_MESSAGE "Invalid header value"

void                      sandbox_network_rule_free            (SandboxNetworkRule        *rule);
SandboxNetworkRule       *sandbox_network_rule_new_from_origin (const char                *origin,
                                                                GError                   **error);
SandboxNetworkRule       *sandbox_network_rule_new_from_pattern (const char               *pattern,
                                                                 GError                  **error);
gboolean                  sandbox_network_rule_covers          (const SandboxNetworkRule  *rule,
                                                                const char                *hostname,
                                                                guint16                    port);
char                     *sandbox_network_rule_dup_origin_for  (const SandboxNetworkRule  *rule,
                                                                const char                *host);
gboolean                  sandbox_network_rule_add_header      (SandboxNetworkRule        *rule,
                                                                const char                *name,
                                                                const char                *value,
                                                                GError                   **error);
gboolean                  sandbox_network_rule_set_stream      (SandboxNetworkRule        *rule,
                                                                guint64                    max_bytes,
                                                                guint                      idle_timeout_ms,
                                                                guint                      timeout_ms,
                                                                GError                   **error);
SandboxNetworkRule       *sandbox_network_rule_copy            (const SandboxNetworkRule  *rule);
/* In @rules, the rule whose host equals @host case-insensitively, else the
 * first pattern's that covers it, or NULL. */
const SandboxNetworkRule *sandbox_network_rules_find           (GPtrArray                 *rules,
                                                                const char                *host);
/* Adds @rule (taking it) unless @rules has its host already. */
gboolean                  sandbox_network_rules_add_once       (GPtrArray                 *rules,
                                                                SandboxNetworkRule        *rule,
                                                                GError                   **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxNetworkRule, sandbox_network_rule_free)

G_END_DECLS
