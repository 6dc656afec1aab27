/* sandbox-network-policy-builder.c — an allow-list built one rule at a time
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The same rules and validation as an allow-list's JSON
 * (sandbox-network-policy.c), added by calls. Header values are credentials:
 * never logged, never echoed in an error.
 */

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-network-policy-private.h"

/* ---- SandboxNetworkPolicyBuilder -------------------------------------- */

/**
 * SandboxNetworkPolicyBuilder:
 *
 * Builds an allow-list [class@Sandbox.NetworkPolicy] one origin and header at a
 * time, with the same validation as [ctor@Sandbox.NetworkPolicy.new_from_json].
 */
struct _SandboxNetworkPolicyBuilder
{
  GObject parent_instance;

  GPtrArray *rules; /* (element-type SandboxNetworkRule) */
};

G_DEFINE_FINAL_TYPE (SandboxNetworkPolicyBuilder, sandbox_network_policy_builder, G_TYPE_OBJECT)

static void
sandbox_network_policy_builder_finalize (GObject *object)
{
  SandboxNetworkPolicyBuilder *self = SANDBOX_NETWORK_POLICY_BUILDER (object);

  g_clear_pointer (&self->rules, g_ptr_array_unref);

  G_OBJECT_CLASS (sandbox_network_policy_builder_parent_class)->finalize (object);
}

static void
sandbox_network_policy_builder_class_init (SandboxNetworkPolicyBuilderClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_network_policy_builder_finalize;
}

static void
sandbox_network_policy_builder_init (SandboxNetworkPolicyBuilder *self)
{
  self->rules = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_network_rule_free);
}

/**
 * sandbox_network_policy_builder_new:
 *
 * Creates a builder with no origins. Building it right away gives an
 * allow-list that allows nothing.
 *
 * Returns: (transfer full): a new [class@Sandbox.NetworkPolicyBuilder]
 */
SandboxNetworkPolicyBuilder *
sandbox_network_policy_builder_new (void)
{
  return g_object_new (SANDBOX_TYPE_NETWORK_POLICY_BUILDER, NULL);
}

/**
 * sandbox_network_policy_builder_add_origin:
 * @self: a [class@Sandbox.NetworkPolicyBuilder]
 * @origin: an http or https origin, such as `"https://api.example.com"`
 * @error: return location for a #GError, or %NULL
 *
 * Allows HTTP requests to @origin through the gateway.
 *
 * Returns: %TRUE on success; %FALSE with %SANDBOX_ERROR_INVALID if @origin
 *   is not a bare http(s) origin or its host is already allowed
 */
gboolean
sandbox_network_policy_builder_add_origin (SandboxNetworkPolicyBuilder  *self,
                                           const char                   *origin,
                                           GError                      **error)
{
  SandboxNetworkRule *rule;

  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY_BUILDER (self), FALSE);
  g_return_val_if_fail (origin != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  rule = sandbox_network_rule_new_from_origin (origin, error);
  if (rule == NULL)
    return FALSE;

  return sandbox_network_rules_add_once (self->rules, rule, error);
}

/**
 * sandbox_network_policy_builder_add_pattern:
 * @self: a [class@Sandbox.NetworkPolicyBuilder]
 * @pattern: an http or https origin whose host begins with `*.`: the
 *   scheme, `://`, then a host such as `*.example.com`
 * @error: return location for a #GError, or %NULL
 *
 * Allows HTTP requests to every host one DNS label deeper than the
 * pattern's name (`api.example.com` for `*.example.com`; not
 * `example.com`, not `a.b.example.com`), on the pattern's scheme and port.
 * Never a bare `*`, an address, or a name of one label. A request to a
 * host that an origin of the policy names exactly takes that origin's rule
 * (and its headers). Headers are added with
 * [method@Sandbox.NetworkPolicyBuilder.add_header] naming the pattern.
 *
 * Returns: %TRUE on success; %FALSE with %SANDBOX_ERROR_INVALID if @pattern
 *   is no such pattern or was added already
 */
gboolean
sandbox_network_policy_builder_add_pattern (SandboxNetworkPolicyBuilder  *self,
                                            const char                   *pattern,
                                            GError                      **error)
{
  SandboxNetworkRule *rule;

  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY_BUILDER (self), FALSE);
  g_return_val_if_fail (pattern != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  rule = sandbox_network_rule_new_from_pattern (pattern, error);
  if (rule == NULL)
    return FALSE;

  return sandbox_network_rules_add_once (self->rules, rule, error);
}

/* The rule of @origin (or pattern), which must have been added. */
static SandboxNetworkRule *
builder_find_rule (SandboxNetworkPolicyBuilder  *self,
                   const char                   *origin,
                   GError                      **error)
{
  g_autoptr(SandboxNetworkRule) parsed =
    strstr (origin, "://*.") != NULL ? sandbox_network_rule_new_from_pattern (origin, error)
                                     : sandbox_network_rule_new_from_origin (origin, error);

  if (parsed == NULL)
    return NULL;

  for (guint i = 0; i < self->rules->len; i++)
    {
      SandboxNetworkRule *candidate = g_ptr_array_index (self->rules, i);

      if (g_str_equal (candidate->origin, parsed->origin))
        return candidate;
    }

  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Invalid input: origin %s has not been added to the policy",
               parsed->origin);
  return NULL;
}

/**
 * sandbox_network_policy_builder_add_header:
 * @self: a [class@Sandbox.NetworkPolicyBuilder]
 * @origin: an origin already added with
 *   [method@Sandbox.NetworkPolicyBuilder.add_origin]
 * @name: an HTTP header name
 * @value: its value, which the guest will never see
 * @error: return location for a #GError, or %NULL
 *
 * Makes the gateway add a header to every request it forwards to @origin.
 *
 * Returns: %TRUE on success; %FALSE with %SANDBOX_ERROR_INVALID if @origin
 *   was not added, @name is not a token or is a routing or hop-by-hop header,
 *   @name is already set for @origin, or @value contains CR or LF
 */
gboolean
sandbox_network_policy_builder_add_header (SandboxNetworkPolicyBuilder  *self,
                                           const char                   *origin,
                                           const char                   *name,
                                           const char                   *value,
                                           GError                      **error)
{
  SandboxNetworkRule *rule;

  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY_BUILDER (self), FALSE);
  g_return_val_if_fail (origin != NULL, FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (value != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  rule = builder_find_rule (self, origin, error);
  return rule != NULL && sandbox_network_rule_add_header (rule, name, value, error);
}

/**
 * sandbox_network_policy_builder_set_stream:
 * @self: a [class@Sandbox.NetworkPolicyBuilder]
 * @origin: an origin already added with
 *   [method@Sandbox.NetworkPolicyBuilder.add_origin]
 * @max_bytes: the most bytes of an answer's body relayed, or 0 for the
 *   gateway's limit on a whole answer (1 MiB, as the reference's)
 * @idle_timeout_ms: the longest wait for the upstream's next bytes, or 0 for
 *   the gateway's request timeout
 * @timeout_ms: the deadline of a whole exchange, or 0 for the gateway's
 *   request timeout (30 s by default, as the reference's)
 * @error: return location for a #GError, or %NULL
 *
 * Makes the gateway relay the answers of @origin as they arrive — an LLM
 * API's server-sent events, a long download — instead of buffering each
 * whole answer: the guest gets the status and the first bytes as soon as
 * the upstream sends them, in a chunked body.
 *
 * The limits apply as the answer goes: past @max_bytes, after
 * @idle_timeout_ms without new bytes, or at @timeout_ms, the transfer stops
 * and the guest's connection is closed before the body's end, so the guest
 * sees a truncated answer, never one that looks whole; the audit event says
 * why. A failure before the upstream's status arrives is answered as for
 * any rule. Answers without a body (`HEAD`, 204, 304) are relayed as
 * always.
 *
 * Returns: %TRUE on success; %FALSE with %SANDBOX_ERROR_INVALID if @origin
 *   was not added, @max_bytes is over 1 TiB or a timeout over 24 hours
 */
gboolean
sandbox_network_policy_builder_set_stream (SandboxNetworkPolicyBuilder  *self,
                                           const char                   *origin,
                                           guint64                       max_bytes,
                                           guint                         idle_timeout_ms,
                                           guint                         timeout_ms,
                                           GError                      **error)
{
  SandboxNetworkRule *rule;

  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY_BUILDER (self), FALSE);
  g_return_val_if_fail (origin != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  rule = builder_find_rule (self, origin, error);
  return rule != NULL &&
         sandbox_network_rule_set_stream (rule, max_bytes, idle_timeout_ms, timeout_ms, error);
}


/**
 * sandbox_network_policy_builder_build:
 * @self: a [class@Sandbox.NetworkPolicyBuilder]
 * @error: return location for a #GError, or %NULL
 *
 * Creates an allow-list policy from the origins and headers added so far.
 * The builder stays usable; later changes do not affect the policy.
 *
 * Returns: (transfer full): a new allow-list [class@Sandbox.NetworkPolicy], or %NULL
 *   with @error set
 */
SandboxNetworkPolicy *
sandbox_network_policy_builder_build (SandboxNetworkPolicyBuilder  *self,
                                      GError                      **error)
{
  g_autoptr(GPtrArray) rules = NULL;

  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY_BUILDER (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Every rule was validated as it was added, so copying cannot fail. */
  rules = g_ptr_array_new_full (self->rules->len, (GDestroyNotify) sandbox_network_rule_free);
  for (guint i = 0; i < self->rules->len; i++)
    g_ptr_array_add (rules, sandbox_network_rule_copy (g_ptr_array_index (self->rules, i)));

  return sandbox_network_policy_new_allow_list (rules);
}
