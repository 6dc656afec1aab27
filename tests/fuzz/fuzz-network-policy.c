/* fuzz-network-policy.c — sandbox_network_policy_new_from_json()
 *
 * Properties of an accepted policy: its rules are well formed (http or https
 * origin, host found again by find_rule, header names never a hop-by-hop or
 * framing header, values without CR, LF or NUL), and the redacted JSON is
 * strict JSON that never contains a header value.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#include "sandbox-network-policy-private.h"
#include "sandbox-json-private.h"
#include "sandbox-error.h"

static const char * const forbidden_headers[] = {
  "host", "connection", "content-length", "transfer-encoding", "proxy-authorization",
  "proxy-connection", "upgrade", "trailer", "te",
};

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_common_init ();
  return 0;
}

static void
check_rule (SandboxNetworkPolicy     *policy,
            guint                     index,
            const SandboxNetworkRule *rule)
{
  g_auto(GStrv) names = sandbox_network_policy_get_rule_header_names (policy, index);

  FUZZ_CHECK (rule != NULL);
  FUZZ_CHECK (g_str_equal (rule->scheme, "http") || g_str_equal (rule->scheme, "https"));
  FUZZ_CHECK (g_str_has_prefix (rule->origin, rule->scheme));
  FUZZ_CHECK (g_str_equal (sandbox_network_policy_get_rule_origin (policy, index), rule->origin));
  FUZZ_CHECK (rule->host[0] != '\0' && rule->hostname[0] != '\0');
  FUZZ_CHECK (rule->port != 0);
  FUZZ_CHECK (sandbox_network_policy_find_rule (policy, rule->host) == rule);

  for (guint i = 0; rule->header_names[i] != NULL; i++)
    {
      FUZZ_CHECK (rule->header_values[i] != NULL);
      FUZZ_CHECK (rule->header_names[i][0] != '\0');
      for (guint j = 0; j < G_N_ELEMENTS (forbidden_headers); j++)
        FUZZ_CHECK (g_ascii_strcasecmp (rule->header_names[i], forbidden_headers[j]) != 0);
      FUZZ_CHECK (strpbrk (rule->header_values[i], "\r\n") == NULL);
      FUZZ_CHECK (names[i] != NULL && g_str_equal (names[i], rule->header_names[i]));
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *json = fuzz_dup_string (data, size);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autofree char *redacted = NULL;
  g_autoptr(JsonNode) redacted_root = NULL;
  guint n_rules;

  policy = sandbox_network_policy_new_from_json (json, &error);
  if (policy == NULL)
    {
      FUZZ_CHECK (g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID));
      FUZZ_CHECK (g_utf8_validate (error->message, -1, NULL));
      return 0;
    }
  FUZZ_CHECK (error == NULL);

  n_rules = sandbox_network_policy_get_n_rules (policy);
  if (sandbox_network_policy_get_kind (policy) != SANDBOX_NETWORK_POLICY_ALLOW_LIST)
    FUZZ_CHECK (n_rules == 0);

  for (guint i = 0; i < n_rules; i++)
    check_rule (policy, i, sandbox_network_policy_get_rule (policy, i));

  redacted = sandbox_network_policy_to_redacted_json (policy);
  FUZZ_CHECK (redacted != NULL);
  redacted_root = sandbox_json_parse_strict (redacted, -1, NULL);
  FUZZ_CHECK (redacted_root != NULL);

  /* The redacted form reads back as the same policy, every value replaced. */
  {
    g_autoptr(SandboxNetworkPolicy) again = NULL;
    g_autoptr(GError) again_error = NULL;

    again = sandbox_network_policy_new_from_json (redacted, &again_error);
    if (again == NULL)
      g_printerr ("redacted %s does not parse: %s\n", redacted, again_error->message);
    FUZZ_CHECK (again != NULL);
    FUZZ_CHECK (sandbox_network_policy_get_kind (again) == sandbox_network_policy_get_kind (policy));
    FUZZ_CHECK (sandbox_network_policy_get_n_rules (again) == n_rules);
    for (guint i = 0; i < n_rules; i++)
      {
        const SandboxNetworkRule *rule = sandbox_network_policy_get_rule (policy, i);
        const SandboxNetworkRule *other = sandbox_network_policy_get_rule (again, i);

        FUZZ_CHECK (g_str_equal (rule->origin, other->origin));
        FUZZ_CHECK (g_strv_equal ((const char * const *) rule->header_names,
                                  (const char * const *) other->header_names));
        for (guint j = 0; other->header_values[j] != NULL; j++)
          FUZZ_CHECK (g_str_equal (other->header_values[j], "<redacted>"));
      }
  }

  return 0;
}
