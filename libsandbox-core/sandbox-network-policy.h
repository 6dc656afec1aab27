/* sandbox-network-policy.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"

G_BEGIN_DECLS

/**
 * SandboxNetworkPolicyKind:
 * @SANDBOX_NETWORK_POLICY_DENY_ALL: no network at all, not even loopback or DNS
 * @SANDBOX_NETWORK_POLICY_ALLOW_ALL: the host's network is shared
 * @SANDBOX_NETWORK_POLICY_ALLOW_LIST: no network except HTTP to allowed
 *   origins through the gateway socket
 *
 * The three shapes of a [class@Sandbox.NetworkPolicy].
 */
typedef enum
{
  SANDBOX_NETWORK_POLICY_DENY_ALL,
  SANDBOX_NETWORK_POLICY_ALLOW_ALL,
  SANDBOX_NETWORK_POLICY_ALLOW_LIST,
} SandboxNetworkPolicyKind;

#define SANDBOX_TYPE_NETWORK_POLICY (sandbox_network_policy_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxNetworkPolicy, sandbox_network_policy, SANDBOX, NETWORK_POLICY, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxNetworkPolicy     *sandbox_network_policy_new_deny_all    (void);
SANDBOX_AVAILABLE_IN_ALL
SandboxNetworkPolicy     *sandbox_network_policy_new_allow_all   (void);
SANDBOX_AVAILABLE_IN_ALL
SandboxNetworkPolicy     *sandbox_network_policy_new_from_json   (const char            *json,
                                                                  GError               **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxNetworkPolicyKind  sandbox_network_policy_get_kind        (SandboxNetworkPolicy  *self);
SANDBOX_AVAILABLE_IN_ALL
guint                     sandbox_network_policy_get_n_rules     (SandboxNetworkPolicy  *self);
SANDBOX_AVAILABLE_IN_ALL
const char               *sandbox_network_policy_get_rule_origin (SandboxNetworkPolicy  *self,
                                                                  guint                  index);
SANDBOX_AVAILABLE_IN_ALL
char                    **sandbox_network_policy_get_rule_header_names (SandboxNetworkPolicy *self,
                                                                        guint                 index);
SANDBOX_AVAILABLE_IN_ALL
gboolean                  sandbox_network_policy_get_rule_stream (SandboxNetworkPolicy  *self,
                                                                  guint                  index,
                                                                  guint64               *max_bytes,
                                                                  guint                 *idle_timeout_ms,
                                                                  guint                 *timeout_ms);
SANDBOX_AVAILABLE_IN_ALL
char                     *sandbox_network_policy_to_redacted_json (SandboxNetworkPolicy *self);

#define SANDBOX_TYPE_NETWORK_POLICY_BUILDER (sandbox_network_policy_builder_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxNetworkPolicyBuilder, sandbox_network_policy_builder, SANDBOX, NETWORK_POLICY_BUILDER, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxNetworkPolicyBuilder *sandbox_network_policy_builder_new        (void);
SANDBOX_AVAILABLE_IN_ALL
gboolean                     sandbox_network_policy_builder_add_origin (SandboxNetworkPolicyBuilder  *self,
                                                                        const char                   *origin,
                                                                        GError                      **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean                     sandbox_network_policy_builder_add_pattern (SandboxNetworkPolicyBuilder  *self,
                                                                         const char                   *pattern,
                                                                         GError                      **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean                     sandbox_network_policy_builder_add_header (SandboxNetworkPolicyBuilder  *self,
                                                                        const char                   *origin,
                                                                        const char                   *name,
                                                                        const char                   *value,
                                                                        GError                      **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean                     sandbox_network_policy_builder_set_stream (SandboxNetworkPolicyBuilder  *self,
                                                                        const char                   *origin,
                                                                        guint64                       max_bytes,
                                                                        guint                         idle_timeout_ms,
                                                                        guint                         timeout_ms,
                                                                        GError                      **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxNetworkPolicy        *sandbox_network_policy_builder_build      (SandboxNetworkPolicyBuilder  *self,
                                                                        GError                      **error);

G_END_DECLS
