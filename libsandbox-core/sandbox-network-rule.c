/* sandbox-network-rule.c — one allow-list rule: its origin parsed and
 * normalized, its injected headers validated, and the rule lists a policy
 * keeps (one origin per host)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Header values are credentials: never logged, never put in an error
 * message. Origins are not echoed in errors either, because a rejected
 * origin may carry a password in its userinfo.
 */

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-network-policy-private.h"

#define HTTP_ORIGIN_MESSAGE "Expected an HTTP origin"
#define DUPLICATE_HOST_MESSAGE "Each gateway host must have exactly one origin"
#define HOP_BY_HOP_MESSAGE "Routing and hop-by-hop headers cannot be brokered"

static const char * const reserved_header_names[] = {
  "host", "connection", "content-length", "transfer-encoding",
  "proxy-authorization", "proxy-connection", "upgrade", "trailer", "te",
};

void
sandbox_network_rule_free (SandboxNetworkRule *rule)
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

/* A pattern's host name: "*." and then a DNS name of two labels or more
 * ("*.com" would be a whole top-level domain), never an address
 * ("*.0.0.1"); the wildcard stands for exactly one label. */
static char *
normalize_pattern (const char *host)
{
  g_autofree char *rest = NULL;

  if (!g_str_has_prefix (host, "*."))
    return NULL;
  rest = g_ascii_strdown (host + 2, -1);
  if (strchr (rest, '.') == NULL || last_label_is_numeric (rest) || !dns_name_is_valid (rest))
    return NULL;
  return g_strconcat ("*.", rest, NULL);
}

/* A rule from an origin, or from a pattern (an origin whose host is
 * "*.example.com"),
 * whose host name matches one label more than its name. */
static SandboxNetworkRule *
rule_new (const char  *text,
          gboolean     pattern,
          GError     **error)
{
  g_autoptr(SandboxNetworkRule) rule = NULL;
  g_autoptr(GUri) uri = NULL;
  const char *path;
  int port;

  if (!g_utf8_validate (text, -1, NULL) || !origin_text_is_plain (text))
    goto invalid;

  uri = g_uri_parse (text, G_URI_FLAGS_NONE, NULL);
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

  rule->pattern = pattern;
  rule->hostname = pattern ? normalize_pattern (g_uri_get_host (uri))
                           : normalize_hostname (g_uri_get_host (uri));
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
  if (pattern)
    g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                         "Expected an HTTP origin pattern (http or https, “*.” and a "
                         "host name of two labels or more, an optional port; never a bare “*”, "
                         "an address or a wildcard anywhere else)");
  else
    g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                         HTTP_ORIGIN_MESSAGE " (http or https, a host and optional port, "
                         "no credentials, path, query or fragment)");
  return NULL;
}

SandboxNetworkRule *
sandbox_network_rule_new_from_origin (const char  *origin,
                                      GError     **error)
{
  return rule_new (origin, FALSE, error);
}

SandboxNetworkRule *
sandbox_network_rule_new_from_pattern (const char  *pattern,
                                       GError     **error)
{
  return rule_new (pattern, TRUE, error);
}

/* Whether @hostname (no port) is one DNS label followed by the pattern
 * @rule's name: "api.example.com" for "*.example.com", never
 * "example.com" nor "a.b.example.com". */
static gboolean
pattern_matches_hostname (const SandboxNetworkRule *rule,
                          const char               *hostname)
{
  const char *suffix = rule->hostname + 1;   /* ".example.com" */
  gsize length = strlen (hostname);
  gsize suffix_length = strlen (suffix);
  g_autofree char *label = NULL;

  if (length <= suffix_length ||
      g_ascii_strcasecmp (hostname + length - suffix_length, suffix) != 0)
    return FALSE;
  label = g_strndup (hostname, length - suffix_length);
  return strchr (label, '.') == NULL && dns_name_is_valid (label);
}

/**
 * sandbox_network_rule_covers:
 * @rule: a rule
 * @hostname: a host name, without port and brackets, lower or upper case
 * @port: the port a request goes to
 *
 * Returns: whether a request to @hostname:@port is @rule's: its own host,
 *   or for a pattern, a host name it covers
 */
gboolean
sandbox_network_rule_covers (const SandboxNetworkRule *rule,
                             const char               *hostname,
                             guint16                   port)
{
  const char *name = rule->hostname;
  gsize length = strlen (name);

  if (rule->port != port)
    return FALSE;
  if (rule->pattern)
    return pattern_matches_hostname (rule, hostname);
  /* The rule keeps an IPv6 literal's brackets. */
  if (name[0] == '[' && length >= 2)
    {
      name++;
      length -= 2;
    }
  return strlen (hostname) == length && g_ascii_strncasecmp (name, hostname, length) == 0;
}

/**
 * sandbox_network_rule_dup_origin_for:
 * @rule: a rule
 * @host: a Host header's value the rule was found for
 *
 * Returns: (transfer full): where a request to @host goes: the rule's own
 *   origin, or for a pattern, the origin of the host it covered
 */
char *
sandbox_network_rule_dup_origin_for (const SandboxNetworkRule *rule,
                                     const char               *host)
{
  g_autofree char *lower = NULL;

  if (!rule->pattern)
    return g_strdup (rule->origin);
  lower = g_ascii_strdown (host, -1);
  return g_strdup_printf ("%s://%s", rule->scheme, lower);
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
                   SANDBOX_NETWORK_HEADER_VALUE_MESSAGE " for header “%s”", name);
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

gboolean
sandbox_network_rule_add_header (SandboxNetworkRule  *rule,
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
find_exact (GPtrArray  *rules,
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

/* Whether the pattern @rule covers @host, a Host header's value: a name
 * (never a bracketed address) and the port as the rule's host spells it
 * (none for the scheme's default). */
static gboolean
pattern_covers_host (const SandboxNetworkRule *rule,
                     const char               *host)
{
  const char *colon = strchr (host, ':');
  g_autofree char *hostname = colon != NULL ? g_strndup (host, colon - host) : g_strdup (host);
  guint64 port = default_port (rule->scheme);

  if (host[0] == '[')
    return FALSE;
  if (colon != NULL &&
      (colon[1] == '0' || !g_ascii_string_to_unsigned (colon + 1, 10, 1, G_MAXUINT16, &port, NULL)))
    return FALSE;
  /* "host:443" for https is not how the rule spells it: exact hosts are
   * matched as written, and so are patterns. */
  if (colon != NULL && port == default_port (rule->scheme))
    return FALSE;
  return sandbox_network_rule_covers (rule, hostname, (guint16) port);
}

/* An exact host first; else the first pattern that covers it. */
const SandboxNetworkRule *
sandbox_network_rules_find (GPtrArray  *rules,
                            const char *host)
{
  const SandboxNetworkRule *rule = find_exact (rules, host);

  for (guint i = 0; rule == NULL && i < rules->len; i++)
    {
      const SandboxNetworkRule *candidate = g_ptr_array_index (rules, i);

      if (candidate->pattern && pattern_covers_host (candidate, host))
        rule = candidate;
    }
  return rule;
}

gboolean
sandbox_network_rules_add_once (GPtrArray           *rules,
                                SandboxNetworkRule  *rule,
                                GError             **error)
{
  /* A pattern and an exact host it covers may both be given. */
  if (find_exact (rules, rule->host) != NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   DUPLICATE_HOST_MESSAGE " (“%s” appears twice)", rule->host);
      sandbox_network_rule_free (rule);
      return FALSE;
    }

  g_ptr_array_add (rules, rule);
  return TRUE;
}

/* Opts @rule into streaming; a zero limit stands for the gateway's own. */
gboolean
sandbox_network_rule_set_stream (SandboxNetworkRule  *rule,
                                 guint64              max_bytes,
                                 guint                idle_timeout_ms,
                                 guint                timeout_ms,
                                 GError             **error)
{
  if (max_bytes > SANDBOX_NETWORK_STREAM_MAX_BYTES)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Invalid input: a stream's byte limit must be at most %" G_GUINT64_FORMAT,
                   SANDBOX_NETWORK_STREAM_MAX_BYTES);
      return FALSE;
    }
  if (idle_timeout_ms > SANDBOX_NETWORK_STREAM_MAX_TIMEOUT_MS ||
      timeout_ms > SANDBOX_NETWORK_STREAM_MAX_TIMEOUT_MS)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Invalid input: a stream's timeouts must be at most %u ms",
                   SANDBOX_NETWORK_STREAM_MAX_TIMEOUT_MS);
      return FALSE;
    }

  rule->stream = (SandboxNetworkStream) { TRUE, max_bytes, idle_timeout_ms, timeout_ms };
  return TRUE;
}

SandboxNetworkRule *
sandbox_network_rule_copy (const SandboxNetworkRule *rule)
{
  SandboxNetworkRule *copy = g_new0 (SandboxNetworkRule, 1);

  copy->origin = g_strdup (rule->origin);
  copy->scheme = g_strdup (rule->scheme);
  copy->host = g_strdup (rule->host);
  copy->hostname = g_strdup (rule->hostname);
  copy->port = rule->port;
  copy->pattern = rule->pattern;
  copy->header_names = g_strdupv (rule->header_names);
  copy->header_values = g_strdupv (rule->header_values);
  copy->stream = rule->stream;
  return copy;
}
