/* sandbox-network-policy.c — deny-all, allow-all or an HTTP allow-list
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Header values in a policy are credentials the guest must never see: they
 * are never logged, never put in an error message and never serialized except
 * as "<redacted>". Origins are not echoed in errors either, because a rejected
 * origin may carry a password in its userinfo.
 */

#include "config.h"

#include <string.h>

#include "sandbox-enums.h"
#include "sandbox-error.h"
#include "sandbox-json-private.h"
#include "sandbox-network-policy-private.h"

#define REDACTED "<redacted>"

/* ---- SandboxNetworkPolicy --------------------------------------------- */

/**
 * SandboxNetworkPolicy:
 *
 * What network a sandbox gets: none (`deny-all`), the host's
 * (`allow-all`), or HTTP to a list of origins through the session's gateway,
 * with headers (credentials) the gateway adds and the guest never sees.
 *
 * A policy is immutable once created, so one instance can be shared between
 * threads and sessions. Its header values are never logged or serialized;
 * [method@Sandbox.NetworkPolicy.to_redacted_json] replaces them with `"<redacted>"`.
 */
struct _SandboxNetworkPolicy
{
  GObject parent_instance;

  SandboxNetworkPolicyKind kind;
  GPtrArray *rules; /* (element-type SandboxNetworkRule) */
};

enum {
  PROP_0,
  PROP_KIND,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (SandboxNetworkPolicy, sandbox_network_policy, G_TYPE_OBJECT)

static void
sandbox_network_policy_finalize (GObject *object)
{
  SandboxNetworkPolicy *self = SANDBOX_NETWORK_POLICY (object);

  g_clear_pointer (&self->rules, g_ptr_array_unref);

  G_OBJECT_CLASS (sandbox_network_policy_parent_class)->finalize (object);
}

static void
sandbox_network_policy_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  SandboxNetworkPolicy *self = SANDBOX_NETWORK_POLICY (object);

  switch (prop_id)
    {
    case PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_network_policy_class_init (SandboxNetworkPolicyClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_network_policy_finalize;
  object_class->get_property = sandbox_network_policy_get_property;

  /**
   * SandboxNetworkPolicy:kind:
   *
   * Which of the three shapes this policy has.
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL,
                       SANDBOX_TYPE_NETWORK_POLICY_KIND,
                       SANDBOX_NETWORK_POLICY_DENY_ALL,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
sandbox_network_policy_init (SandboxNetworkPolicy *self)
{
  self->kind = SANDBOX_NETWORK_POLICY_DENY_ALL;
  self->rules = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_network_rule_free);
}

static SandboxNetworkPolicy *
policy_new (SandboxNetworkPolicyKind  kind,
            GPtrArray                *rules)
{
  SandboxNetworkPolicy *self = g_object_new (SANDBOX_TYPE_NETWORK_POLICY, NULL);

  self->kind = kind;
  if (rules != NULL)
    {
      g_ptr_array_unref (self->rules);
      self->rules = g_ptr_array_ref (rules);
    }
  return self;
}

/* An allow-list policy of @rules (taking a reference), for the builder. */
SandboxNetworkPolicy *
sandbox_network_policy_new_allow_list (GPtrArray *rules)
{
  return policy_new (SANDBOX_NETWORK_POLICY_ALLOW_LIST, rules);
}

/**
 * sandbox_network_policy_new_deny_all:
 *
 * Creates the policy that gives a sandbox no network at all.
 *
 * Returns: (transfer full): a new deny-all policy
 */
SandboxNetworkPolicy *
sandbox_network_policy_new_deny_all (void)
{
  return policy_new (SANDBOX_NETWORK_POLICY_DENY_ALL, NULL);
}

/**
 * sandbox_network_policy_new_allow_all:
 *
 * Creates the policy that shares the host's network with a sandbox.
 *
 * Returns: (transfer full): a new allow-all policy
 */
SandboxNetworkPolicy *
sandbox_network_policy_new_allow_all (void)
{
  return policy_new (SANDBOX_NETWORK_POLICY_ALLOW_ALL, NULL);
}

static gboolean
expect_type (JsonNode    *node,
             JsonNodeType type,
             const char  *expected,
             const char  *where,
             GError     **error)
{
  if (node != NULL && JSON_NODE_TYPE (node) == type)
    return TRUE;

  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "%s: Invalid input: expected %s, received %s",
               where, expected, sandbox_json_type_name (node));
  return FALSE;
}

static gboolean
reject_unknown_members (JsonObject         *object,
                        const char * const *known,
                        const char         *where,
                        GError            **error)
{
  g_autoptr(GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (known, l->data))
      {
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                     "%s: Unrecognized key: \"%s\"", where, (const char *) l->data);
        return FALSE;
      }

  return TRUE;
}

static gboolean
prefix_error (GError     **error,
              const char  *where)
{
  g_prefix_error (error, "%s: ", where);
  return FALSE;
}

/* A positive JSON integer no larger than @max, or FALSE with @error set. */
static gboolean
positive_integer_from_json (JsonObject  *object,
                            const char  *member,
                            guint64      max,
                            const char  *where,
                            guint64     *value,
                            GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);
  gint64 number;

  *value = 0;
  if (node == NULL)
    return TRUE;

  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_INT64)
    {
      number = json_node_get_int (node);
      if (number > 0 && (guint64) number <= max)
        {
          *value = (guint64) number;
          return TRUE;
        }
    }

  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "%s.%s: Invalid input: expected an integer from 1 to %" G_GUINT64_FORMAT,
               where, member, max);
  return FALSE;
}

/* `"stream": true` or `"stream": {"maxBytes": …, "idleTimeoutMs": …,
 * "timeoutMs": …}`, each limit optional. */
static gboolean
stream_from_json (SandboxNetworkRule  *rule,
                  JsonNode            *node,
                  const char          *where,
                  GError             **error)
{
  static const char * const known[] = { "maxBytes", "idleTimeoutMs", "timeoutMs", NULL };
  guint64 max_bytes, idle_timeout_ms, timeout_ms;
  JsonObject *object;

  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_BOOLEAN)
    return !json_node_get_boolean (node) || sandbox_network_rule_set_stream (rule, 0, 0, 0, error);

  if (!expect_type (node, JSON_NODE_OBJECT, "boolean or object", where, error))
    return FALSE;
  object = json_node_get_object (node);
  if (!reject_unknown_members (object, known, where, error) ||
      !positive_integer_from_json (object, "maxBytes", SANDBOX_NETWORK_STREAM_MAX_BYTES,
                                   where, &max_bytes, error) ||
      !positive_integer_from_json (object, "idleTimeoutMs", SANDBOX_NETWORK_STREAM_MAX_TIMEOUT_MS,
                                   where, &idle_timeout_ms, error) ||
      !positive_integer_from_json (object, "timeoutMs", SANDBOX_NETWORK_STREAM_MAX_TIMEOUT_MS,
                                   where, &timeout_ms, error))
    return FALSE;

  return sandbox_network_rule_set_stream (rule, max_bytes, (guint) idle_timeout_ms,
                                          (guint) timeout_ms, error);
}

static SandboxNetworkRule *
rule_new_from_json (JsonNode    *node,
                    const char  *where,
                    GError     **error)
{
  static const char * const known[] = { "origin", "pattern", "headers", "stream", NULL };
  g_autoptr(SandboxNetworkRule) rule = NULL;
  g_autofree char *origin_where = NULL;
  g_autofree char *headers_where = g_strdup_printf ("%s.headers", where);
  g_autofree char *stream_where = g_strdup_printf ("%s.stream", where);
  JsonObject *object;
  JsonNode *origin;
  JsonNode *pattern;
  JsonNode *headers;
  JsonNode *stream;
  g_autoptr(GList) names = NULL;

  if (!expect_type (node, JSON_NODE_OBJECT, "object", where, error))
    return NULL;
  object = json_node_get_object (node);
  if (!reject_unknown_members (object, known, where, error))
    return NULL;

  /* "pattern" is the opt-in to a host of "*.example.com"; "origin" stays
   * exact, as the reference validates it. */
  pattern = json_object_get_member (object, "pattern");
  origin = json_object_get_member (object, pattern != NULL ? "pattern" : "origin");
  origin_where = g_strdup_printf ("%s.%s", where, pattern != NULL ? "pattern" : "origin");
  if (pattern != NULL && json_object_has_member (object, "origin"))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Invalid input: a rule has an origin or a pattern, not both", where);
      return NULL;
    }
  if (!sandbox_json_node_is_string (origin))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Invalid input: expected string, received %s",
                   origin_where, sandbox_json_type_name (origin));
      return NULL;
    }
  rule = pattern != NULL ? sandbox_network_rule_new_from_pattern (json_node_get_string (origin), error)
                         : sandbox_network_rule_new_from_origin (json_node_get_string (origin), error);
  if (rule == NULL)
    return prefix_error (error, origin_where), NULL;

  stream = json_object_get_member (object, "stream");
  if (stream != NULL && !stream_from_json (rule, stream, stream_where, error))
    return NULL;

  headers = json_object_get_member (object, "headers");
  if (headers == NULL)
    return g_steal_pointer (&rule);
  if (!expect_type (headers, JSON_NODE_OBJECT, "record", headers_where, error))
    return NULL;

  names = json_object_get_members (json_node_get_object (headers));
  for (GList *l = names; l != NULL; l = l->next)
    {
      const char *name = l->data;
      JsonNode *value = json_object_get_member (json_node_get_object (headers), name);

      if (!sandbox_json_node_is_string (value))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "%s: Invalid input: expected string, received %s",
                       headers_where, sandbox_json_type_name (value));
          return NULL;
        }
      if (!sandbox_network_rule_add_header (rule, name, json_node_get_string (value), error))
        return prefix_error (error, headers_where), NULL;
    }

  return g_steal_pointer (&rule);
}

static SandboxNetworkPolicy *
allow_list_new_from_json (JsonObject  *object,
                          GError     **error)
{
  static const char * const known[] = { "allow", NULL };
  g_autoptr(GPtrArray) rules = NULL;
  JsonNode *allow;
  JsonArray *entries;

  if (!reject_unknown_members (object, known, "policy", error))
    return NULL;

  allow = json_object_get_member (object, "allow");
  if (!expect_type (allow, JSON_NODE_ARRAY, "array", "allow", error))
    return NULL;

  entries = json_node_get_array (allow);
  rules = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_network_rule_free);
  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      g_autofree char *where = g_strdup_printf ("allow[%u]", i);
      SandboxNetworkRule *rule = rule_new_from_json (json_array_get_element (entries, i),
                                                     where, error);

      if (rule == NULL || !sandbox_network_rules_add_once (rules, rule, error))
        return NULL;
    }

  return policy_new (SANDBOX_NETWORK_POLICY_ALLOW_LIST, rules);
}

/**
 * sandbox_network_policy_new_from_json:
 * @json: a JSON document
 * @error: return location for a #GError, or %NULL
 *
 * Parses a policy in the reference's JSON form: the string `"deny-all"` or
 * `"allow-all"`, or `{"allow": [{"origin": "https://host[:port][/]",
 * "headers": {"name": "value", …}}, …]}`.
 *
 * A rule may also carry `"stream": true`, or `"stream": {"maxBytes": N,
 * "idleTimeoutMs": N, "timeoutMs": N}` with any of the three limits: the
 * upstream's answer is then relayed to the guest as it arrives rather than
 * once it is complete (see
 * [method@Sandbox.NetworkPolicyBuilder.set_stream]); this member is ours,
 * not the reference's.
 *
 * Parsing is strict: unknown members,
 * wrong types, origins that are not bare http(s) origins, reserved or
 * malformed header names, header values with CR or LF, and two origins with
 * the same host are all rejected. `{"allow": []}` is valid: a gateway that
 * allows nothing.
 *
 * Returns: (transfer full): a new policy, or %NULL with
 *   %SANDBOX_ERROR_INVALID set
 */
SandboxNetworkPolicy *
sandbox_network_policy_new_from_json (const char  *json,
                                      GError     **error)
{
  g_autoptr(JsonNode) root = NULL;

  g_return_val_if_fail (json != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Only header values could usefully hold a NUL; say so in their terms. */
  root = sandbox_json_parse_strict_full (json, -1,
                                         SANDBOX_NETWORK_HEADER_VALUE_MESSAGE " (or origin): strings "
                                         "in a network policy cannot contain \\u0000 (NUL)",
                                         error);
  if (root == NULL)
    return NULL;

  if (sandbox_json_node_is_string (root))
    {
      const char *name = json_node_get_string (root);

      if (g_str_equal (name, "deny-all"))
        return sandbox_network_policy_new_deny_all ();
      if (g_str_equal (name, "allow-all"))
        return sandbox_network_policy_new_allow_all ();
    }
  else if (JSON_NODE_HOLDS_OBJECT (root))
    {
      return allow_list_new_from_json (json_node_get_object (root), error);
    }

  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Invalid input: expected \"deny-all\", \"allow-all\" or {\"allow\": […]}");
  return NULL;
}

/**
 * sandbox_network_policy_get_kind:
 * @self: a [class@Sandbox.NetworkPolicy]
 *
 * Gets the kind of the policy: deny-all, allow-all or an allow-list.
 *
 * Returns: the shape of @self
 */
SandboxNetworkPolicyKind
sandbox_network_policy_get_kind (SandboxNetworkPolicy *self)
{
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (self), SANDBOX_NETWORK_POLICY_DENY_ALL);

  return self->kind;
}

/**
 * sandbox_network_policy_get_n_rules:
 * @self: a [class@Sandbox.NetworkPolicy]
 *
 * Gets how many origins the policy allows.
 *
 * Returns: the number of allowed origins (0 unless @self is an allow-list)
 */
guint
sandbox_network_policy_get_n_rules (SandboxNetworkPolicy *self)
{
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (self), 0);

  return self->rules->len;
}

/**
 * sandbox_network_policy_get_rule_origin:
 * @self: a [class@Sandbox.NetworkPolicy]
 * @index: a rule index, less than [method@Sandbox.NetworkPolicy.get_n_rules]
 *
 * Gives the normalized origin of a rule: lowercase scheme and host, no
 * default port and no trailing slash (`"https://api.example.com"`).
 *
 * Returns: (transfer none): the origin of rule @index
 */
const char *
sandbox_network_policy_get_rule_origin (SandboxNetworkPolicy *self,
                                        guint                 index)
{
  const SandboxNetworkRule *rule = sandbox_network_policy_get_rule (self, index);

  return rule != NULL ? rule->origin : NULL;
}

/**
 * sandbox_network_policy_get_rule_header_names:
 * @self: a [class@Sandbox.NetworkPolicy]
 * @index: a rule index, less than [method@Sandbox.NetworkPolicy.get_n_rules]
 *
 * Gives the names of the headers the gateway adds for a rule, in the order
 * they were given. Their values are deliberately not available.
 *
 * Returns: (transfer full) (array zero-terminated=1): the header names
 */
char **
sandbox_network_policy_get_rule_header_names (SandboxNetworkPolicy *self,
                                              guint                 index)
{
  const SandboxNetworkRule *rule = sandbox_network_policy_get_rule (self, index);

  return rule != NULL ? g_strdupv (rule->header_names) : NULL;
}

static void
add_stream_to_json (JsonBuilder                *builder,
                    const SandboxNetworkStream *stream)
{
  json_builder_set_member_name (builder, "stream");
  if (stream->max_bytes == 0 && stream->idle_timeout_ms == 0 && stream->timeout_ms == 0)
    {
      json_builder_add_boolean_value (builder, TRUE);
      return;
    }

  json_builder_begin_object (builder);
  if (stream->max_bytes != 0)
    {
      json_builder_set_member_name (builder, "maxBytes");
      json_builder_add_int_value (builder, (gint64) stream->max_bytes);
    }
  if (stream->idle_timeout_ms != 0)
    {
      json_builder_set_member_name (builder, "idleTimeoutMs");
      json_builder_add_int_value (builder, stream->idle_timeout_ms);
    }
  if (stream->timeout_ms != 0)
    {
      json_builder_set_member_name (builder, "timeoutMs");
      json_builder_add_int_value (builder, stream->timeout_ms);
    }
  json_builder_end_object (builder);
}

/**
 * sandbox_network_policy_get_rule_stream:
 * @self: a [class@Sandbox.NetworkPolicy]
 * @index: a rule index, less than [method@Sandbox.NetworkPolicy.get_n_rules]
 * @max_bytes: (out) (optional): the rule's byte limit, 0 for the gateway's
 * @idle_timeout_ms: (out) (optional): the rule's idle timeout, 0 for the
 *   gateway's request timeout
 * @timeout_ms: (out) (optional): the rule's deadline, 0 for the gateway's
 *   request timeout
 *
 * Tells whether rule @index streams its answers, and within which limits
 * (see [method@Sandbox.NetworkPolicyBuilder.set_stream]).
 *
 * Returns: whether the rule streams; the limits are 0 when it does not
 */
gboolean
sandbox_network_policy_get_rule_stream (SandboxNetworkPolicy *self,
                                        guint                 index,
                                        guint64              *max_bytes,
                                        guint                *idle_timeout_ms,
                                        guint                *timeout_ms)
{
  const SandboxNetworkRule *rule = sandbox_network_policy_get_rule (self, index);
  SandboxNetworkStream stream = { 0, };

  if (rule != NULL)
    stream = rule->stream;
  if (max_bytes != NULL)
    *max_bytes = stream.max_bytes;
  if (idle_timeout_ms != NULL)
    *idle_timeout_ms = stream.idle_timeout_ms;
  if (timeout_ms != NULL)
    *timeout_ms = stream.timeout_ms;
  return stream.enabled;
}

/**
 * sandbox_network_policy_to_redacted_json:
 * @self: a [class@Sandbox.NetworkPolicy]
 *
 * Serializes @self in the form [ctor@Sandbox.NetworkPolicy.new_from_json] reads,
 * with every header value replaced by `"<redacted>"`, for logs and
 * diagnostics. Origins appear normalized.
 *
 * Returns: (transfer full): compact JSON
 */
char *
sandbox_network_policy_to_redacted_json (SandboxNetworkPolicy *self)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(JsonGenerator) generator = NULL;
  g_autoptr(JsonNode) root = NULL;

  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (self), NULL);

  switch (self->kind)
    {
    case SANDBOX_NETWORK_POLICY_DENY_ALL:
      /* JsonBuilder cannot build a bare scalar document. */
      root = json_node_init_string (json_node_alloc (), "deny-all");
      break;
    case SANDBOX_NETWORK_POLICY_ALLOW_ALL:
      root = json_node_init_string (json_node_alloc (), "allow-all");
      break;
    case SANDBOX_NETWORK_POLICY_ALLOW_LIST:
    default:
      builder = json_builder_new ();
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "allow");
      json_builder_begin_array (builder);
      for (guint i = 0; i < self->rules->len; i++)
        {
          const SandboxNetworkRule *rule = g_ptr_array_index (self->rules, i);

          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, rule->pattern ? "pattern" : "origin");
          json_builder_add_string_value (builder, rule->origin);
          json_builder_set_member_name (builder, "headers");
          json_builder_begin_object (builder);
          for (guint j = 0; rule->header_names[j] != NULL; j++)
            {
              json_builder_set_member_name (builder, rule->header_names[j]);
              json_builder_add_string_value (builder, REDACTED);
            }
          json_builder_end_object (builder);
          if (rule->stream.enabled)
            add_stream_to_json (builder, &rule->stream);
          json_builder_end_object (builder);
        }
      json_builder_end_array (builder);
      json_builder_end_object (builder);
      root = json_builder_get_root (builder);
      break;
    }

  generator = json_generator_new ();
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/* ---- private API for the gateway -------------------------------------- */

const SandboxNetworkRule *
sandbox_network_policy_find_rule (SandboxNetworkPolicy *self,
                                  const char           *host)
{
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (self), NULL);

  if (host == NULL)
    return NULL;

  return sandbox_network_rules_find (self->rules, host);
}

const SandboxNetworkRule *
sandbox_network_policy_get_rule (SandboxNetworkPolicy *self,
                                 guint                 index)
{
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (self), NULL);
  g_return_val_if_fail (index < self->rules->len, NULL);

  return g_ptr_array_index (self->rules, index);
}
