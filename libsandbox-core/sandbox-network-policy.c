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

#define HTTP_ORIGIN_MESSAGE "Expected an HTTP origin"
#define DUPLICATE_HOST_MESSAGE "Each gateway host must have exactly one origin"
#define HOP_BY_HOP_MESSAGE "Routing and hop-by-hop headers cannot be brokered"
#define HEADER_VALUE_MESSAGE "Invalid header value"
#define REDACTED "<redacted>"

static const char * const reserved_header_names[] = {
  "host", "connection", "content-length", "transfer-encoding",
  "proxy-authorization", "proxy-connection", "upgrade", "trailer", "te",
};

/* ---- rules ------------------------------------------------------------ */

static void
network_rule_free (SandboxNetworkRule *rule)
{
  if (rule == NULL)
    return;
  g_free (rule->origin);
  g_free (rule->scheme);
  g_free (rule->host);
  g_free (rule->hostname);
  g_strfreev (rule->header_names);
  if (rule->header_values != NULL)
    {
      /* Scrub credentials before the memory goes back to the allocator. */
      for (guint i = 0; rule->header_values[i] != NULL; i++)
        memset (rule->header_values[i], 0, strlen (rule->header_values[i]));
      g_strfreev (rule->header_values);
    }
  g_free (rule);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxNetworkRule, network_rule_free)

static guint16
default_port (const char *scheme)
{
  return g_str_equal (scheme, "https") ? 443 : 80;
}

/* GUri is lenient where the WHATWG URL parser is strict or normalizes
 * (whitespace, backslashes, percent-decoded hosts, zone ids), so anything
 * that could be read two ways is refused before GUri sees it. */
static gboolean
origin_text_is_plain (const char *origin)
{
  const char *authority;
  const char *authority_end;

  for (const char *p = origin; *p != '\0'; p++)
    {
      guchar c = (guchar) *p;

      if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '%')
        return FALSE;
    }

  if (g_ascii_strncasecmp (origin, "http://", 7) == 0)
    authority = origin + 7;
  else if (g_ascii_strncasecmp (origin, "https://", 8) == 0)
    authority = origin + 8;
  else
    return FALSE;

  authority_end = authority + strcspn (authority, "/?#");
  /* An empty port ("https://host:") means the default one to a browser;
   * refuse it rather than guess. */
  return authority_end > authority && authority_end[-1] != ':';
}

/* WHATWG URL parsers read a host ending in a number as IPv4 ("127.1",
 * "0x7f.1"), so such a host is accepted only as a canonical dotted quad. */
static gboolean
last_label_is_numeric (const char *hostname)
{
  const char *label = strrchr (hostname, '.');

  label = label != NULL ? label + 1 : hostname;
  if (label[0] == '0' && (label[1] == 'x' || label[1] == 'X'))
    {
      for (const char *p = label + 2; *p != '\0'; p++)
        if (!g_ascii_isxdigit (*p))
          return FALSE;
      return TRUE;
    }

  if (*label == '\0')
    return FALSE;
  for (const char *p = label; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

static gboolean
dns_name_is_valid (const char *hostname)
{
  gsize length = strlen (hostname);
  const char *label = hostname;

  if (length == 0 || length > 253)
    return FALSE;

  while (TRUE)
    {
      gsize label_length = strcspn (label, ".");

      if (label_length == 0 || label_length > 63 ||
          label[0] == '-' || label[label_length - 1] == '-')
        return FALSE;
      for (gsize i = 0; i < label_length; i++)
        if (!g_ascii_isalnum (label[i]) && label[i] != '-')
          return FALSE;

      if (label[label_length] == '\0')
        return TRUE;
      label += label_length + 1;
    }
}

/* Returns the hostname as it appears in a Host header (lowercase, IPv6 in
 * brackets), or NULL when @host is not an acceptable host. */
static char *
normalize_hostname (const char *host)
{
  g_autoptr(GInetAddress) address = NULL;
  g_autofree char *lower = NULL;
  g_autofree char *text = NULL;

  if (host == NULL || *host == '\0')
    return NULL;

  if (strchr (host, ':') != NULL)
    {
      address = g_inet_address_new_from_string (host);
      if (address == NULL || g_inet_address_get_family (address) != G_SOCKET_FAMILY_IPV6)
        return NULL;
      text = g_inet_address_to_string (address);
      return g_strdup_printf ("[%s]", text);
    }

  lower = g_ascii_strdown (host, -1);
  if (last_label_is_numeric (lower))
    {
      address = g_inet_address_new_from_string (lower);
      if (address == NULL || g_inet_address_get_family (address) != G_SOCKET_FAMILY_IPV4)
        return NULL;
      text = g_inet_address_to_string (address);
      return g_str_equal (text, lower) ? g_steal_pointer (&lower) : NULL;
    }

  return dns_name_is_valid (lower) ? g_steal_pointer (&lower) : NULL;
}

static SandboxNetworkRule *
network_rule_new_from_origin (const char  *origin,
                              GError     **error)
{
  g_autoptr(SandboxNetworkRule) rule = NULL;
  g_autoptr(GUri) uri = NULL;
  const char *path;
  int port;

  if (!g_utf8_validate (origin, -1, NULL) || !origin_text_is_plain (origin))
    goto invalid;

  uri = g_uri_parse (origin, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL)
    goto invalid;

  path = g_uri_get_path (uri);
  port = g_uri_get_port (uri);
  if (g_uri_get_userinfo (uri) != NULL ||
      g_uri_get_query (uri) != NULL ||
      g_uri_get_fragment (uri) != NULL ||
      !(path[0] == '\0' || g_str_equal (path, "/")) ||
      port == 0 || port > G_MAXUINT16)
    goto invalid;

  rule = g_new0 (SandboxNetworkRule, 1);
  rule->scheme = g_ascii_strdown (g_uri_get_scheme (uri), -1);
  if (!g_str_equal (rule->scheme, "http") && !g_str_equal (rule->scheme, "https"))
    goto invalid;

  rule->hostname = normalize_hostname (g_uri_get_host (uri));
  if (rule->hostname == NULL)
    goto invalid;

  rule->port = port > 0 ? (guint16) port : default_port (rule->scheme);
  if (rule->port == default_port (rule->scheme))
    rule->host = g_strdup (rule->hostname);
  else
    rule->host = g_strdup_printf ("%s:%u", rule->hostname, rule->port);
  rule->origin = g_strdup_printf ("%s://%s", rule->scheme, rule->host);
  rule->header_names = g_new0 (char *, 1);
  rule->header_values = g_new0 (char *, 1);

  return g_steal_pointer (&rule);

invalid:
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       HTTP_ORIGIN_MESSAGE " (http or https, a host and optional port, "
                       "no credentials, path, query or fragment)");
  return NULL;
}

static gboolean
header_name_is_token (const char *name)
{
  if (*name == '\0')
    return FALSE;

  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr ("!#$%&'*+.^_`|~-", *p) == NULL)
      return FALSE;

  return TRUE;
}

static gboolean
validate_header (const char  *name,
                 const char  *value,
                 GError     **error)
{
  if (!header_name_is_token (name))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "Invalid input: a header name must be a non-empty HTTP token");
      return FALSE;
    }

  for (guint i = 0; i < G_N_ELEMENTS (reserved_header_names); i++)
    if (g_ascii_strcasecmp (name, reserved_header_names[i]) == 0)
      {
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                     "Invalid input: " HOP_BY_HOP_MESSAGE " (“%s”)", name);
        return FALSE;
      }

  /* A C string cannot hold NUL; CR and LF would split the request. */
  if (!g_utf8_validate (value, -1, NULL) || strpbrk (value, "\r\n") != NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   HEADER_VALUE_MESSAGE " for header “%s”", name);
      return FALSE;
    }

  return TRUE;
}

static gboolean
rule_has_header (const SandboxNetworkRule *rule,
                 const char               *name)
{
  for (guint i = 0; rule->header_names[i] != NULL; i++)
    if (g_ascii_strcasecmp (rule->header_names[i], name) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
rule_add_header (SandboxNetworkRule  *rule,
                 const char          *name,
                 const char          *value,
                 GError             **error)
{
  guint n = g_strv_length (rule->header_names);

  if (!validate_header (name, value, error))
    return FALSE;

  /* Two spellings of one header would leave it to the HTTP stack which value
   * is sent. */
  if (rule_has_header (rule, name))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Invalid input: header “%s” is given more than once for %s",
                   name, rule->origin);
      return FALSE;
    }

  rule->header_names = g_renew (char *, rule->header_names, n + 2);
  rule->header_values = g_renew (char *, rule->header_values, n + 2);
  rule->header_names[n] = g_strdup (name);
  rule->header_values[n] = g_strdup (value);
  rule->header_names[n + 1] = NULL;
  rule->header_values[n + 1] = NULL;
  return TRUE;
}

static const SandboxNetworkRule *
find_rule_in (GPtrArray  *rules,
              const char *host)
{
  for (guint i = 0; i < rules->len; i++)
    {
      const SandboxNetworkRule *rule = g_ptr_array_index (rules, i);

      if (g_ascii_strcasecmp (rule->host, host) == 0)
        return rule;
    }
  return NULL;
}

static gboolean
add_rule_once (GPtrArray           *rules,
               SandboxNetworkRule  *rule,
               GError             **error)
{
  if (find_rule_in (rules, rule->host) != NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   DUPLICATE_HOST_MESSAGE " (“%s” appears twice)", rule->host);
      network_rule_free (rule);
      return FALSE;
    }

  g_ptr_array_add (rules, rule);
  return TRUE;
}

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
 * sandbox_network_policy_to_redacted_json() replaces them with `"<redacted>"`.
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
  self->rules = g_ptr_array_new_with_free_func ((GDestroyNotify) network_rule_free);
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

static SandboxNetworkRule *
rule_new_from_json (JsonNode    *node,
                    const char  *where,
                    GError     **error)
{
  static const char * const known[] = { "origin", "headers", NULL };
  g_autoptr(SandboxNetworkRule) rule = NULL;
  g_autofree char *origin_where = g_strdup_printf ("%s.origin", where);
  g_autofree char *headers_where = g_strdup_printf ("%s.headers", where);
  JsonObject *object;
  JsonNode *origin;
  JsonNode *headers;
  g_autoptr(GList) names = NULL;

  if (!expect_type (node, JSON_NODE_OBJECT, "object", where, error))
    return NULL;
  object = json_node_get_object (node);
  if (!reject_unknown_members (object, known, where, error))
    return NULL;

  origin = json_object_get_member (object, "origin");
  if (!sandbox_json_node_is_string (origin))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Invalid input: expected string, received %s",
                   origin_where, sandbox_json_type_name (origin));
      return NULL;
    }
  rule = network_rule_new_from_origin (json_node_get_string (origin), error);
  if (rule == NULL)
    return prefix_error (error, origin_where), NULL;

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
      if (!rule_add_header (rule, name, json_node_get_string (value), error))
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
  rules = g_ptr_array_new_with_free_func ((GDestroyNotify) network_rule_free);
  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      g_autofree char *where = g_strdup_printf ("allow[%u]", i);
      SandboxNetworkRule *rule = rule_new_from_json (json_array_get_element (entries, i),
                                                     where, error);

      if (rule == NULL || !add_rule_once (rules, rule, error))
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
 * "headers": {"name": "value", …}}, …]}`. Parsing is strict: unknown members,
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
                                         HEADER_VALUE_MESSAGE " (or origin): strings in a "
                                         "network policy cannot contain \\u0000 (NUL)",
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
 * @self: a #SandboxNetworkPolicy
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
 * @self: a #SandboxNetworkPolicy
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
 * @self: a #SandboxNetworkPolicy
 * @index: a rule index, less than sandbox_network_policy_get_n_rules()
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
 * @self: a #SandboxNetworkPolicy
 * @index: a rule index, less than sandbox_network_policy_get_n_rules()
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

/**
 * sandbox_network_policy_to_redacted_json:
 * @self: a #SandboxNetworkPolicy
 *
 * Serializes @self in the form sandbox_network_policy_new_from_json() reads,
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
          json_builder_set_member_name (builder, "origin");
          json_builder_add_string_value (builder, rule->origin);
          json_builder_set_member_name (builder, "headers");
          json_builder_begin_object (builder);
          for (guint j = 0; rule->header_names[j] != NULL; j++)
            {
              json_builder_set_member_name (builder, rule->header_names[j]);
              json_builder_add_string_value (builder, REDACTED);
            }
          json_builder_end_object (builder);
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

  return find_rule_in (self->rules, host);
}

const SandboxNetworkRule *
sandbox_network_policy_get_rule (SandboxNetworkPolicy *self,
                                 guint                 index)
{
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (self), NULL);
  g_return_val_if_fail (index < self->rules->len, NULL);

  return g_ptr_array_index (self->rules, index);
}

/* ---- SandboxNetworkPolicyBuilder -------------------------------------- */

/**
 * SandboxNetworkPolicyBuilder:
 *
 * Builds an allow-list #SandboxNetworkPolicy one origin and header at a
 * time, with the same validation as sandbox_network_policy_new_from_json().
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
  self->rules = g_ptr_array_new_with_free_func ((GDestroyNotify) network_rule_free);
}

/**
 * sandbox_network_policy_builder_new:
 *
 * Creates a builder with no origins. Building it right away gives an
 * allow-list that allows nothing.
 *
 * Returns: (transfer full): a new #SandboxNetworkPolicyBuilder
 */
SandboxNetworkPolicyBuilder *
sandbox_network_policy_builder_new (void)
{
  return g_object_new (SANDBOX_TYPE_NETWORK_POLICY_BUILDER, NULL);
}

/**
 * sandbox_network_policy_builder_add_origin:
 * @self: a #SandboxNetworkPolicyBuilder
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

  rule = network_rule_new_from_origin (origin, error);
  if (rule == NULL)
    return FALSE;

  return add_rule_once (self->rules, rule, error);
}

/**
 * sandbox_network_policy_builder_add_header:
 * @self: a #SandboxNetworkPolicyBuilder
 * @origin: an origin already added with
 *   sandbox_network_policy_builder_add_origin()
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
  g_autoptr(SandboxNetworkRule) parsed = NULL;
  SandboxNetworkRule *rule = NULL;

  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY_BUILDER (self), FALSE);
  g_return_val_if_fail (origin != NULL, FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (value != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  parsed = network_rule_new_from_origin (origin, error);
  if (parsed == NULL)
    return FALSE;

  for (guint i = 0; i < self->rules->len && rule == NULL; i++)
    {
      SandboxNetworkRule *candidate = g_ptr_array_index (self->rules, i);

      if (g_str_equal (candidate->origin, parsed->origin))
        rule = candidate;
    }

  if (rule == NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Invalid input: origin %s has not been added to the policy",
                   parsed->origin);
      return FALSE;
    }

  return rule_add_header (rule, name, value, error);
}

static SandboxNetworkRule *
network_rule_copy (const SandboxNetworkRule *rule)
{
  SandboxNetworkRule *copy = g_new0 (SandboxNetworkRule, 1);

  copy->origin = g_strdup (rule->origin);
  copy->scheme = g_strdup (rule->scheme);
  copy->host = g_strdup (rule->host);
  copy->hostname = g_strdup (rule->hostname);
  copy->port = rule->port;
  copy->header_names = g_strdupv (rule->header_names);
  copy->header_values = g_strdupv (rule->header_values);
  return copy;
}

/**
 * sandbox_network_policy_builder_build:
 * @self: a #SandboxNetworkPolicyBuilder
 * @error: return location for a #GError, or %NULL
 *
 * Creates an allow-list policy from the origins and headers added so far.
 * The builder stays usable; later changes do not affect the policy.
 *
 * Returns: (transfer full): a new allow-list #SandboxNetworkPolicy, or %NULL
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
  rules = g_ptr_array_new_full (self->rules->len, (GDestroyNotify) network_rule_free);
  for (guint i = 0; i < self->rules->len; i++)
    g_ptr_array_add (rules, network_rule_copy (g_ptr_array_index (self->rules, i)));

  return policy_new (SANDBOX_NETWORK_POLICY_ALLOW_LIST, rules);
}
