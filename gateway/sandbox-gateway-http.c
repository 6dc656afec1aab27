/* sandbox-gateway-http.c — what a guest request must look like
 *
 * libsoup 3.2's server is not hardened against untrusted clients: it hands
 * the handler the target's authority for absolute-form targets, keeps
 * duplicate Host and Content-Length headers (using the last), parses
 * "Host: allowed@evil" as "evil", and accepts Content-Length together with
 * Transfer-Encoding. These checks run on the parsed request, with every
 * header occurrence still visible, before anything is forwarded. They are
 * the gateway's contract, not workarounds: they stay whatever a later
 * libsoup accepts.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <string.h>

#include "sandbox-gateway-http-private.h"

static gboolean
refuse (SandboxGatewayRefusal  *refusal,
        guint                   status,
        SandboxGatewayDecision  decision,
        const char             *reason)
{
  refusal->status = status;
  refusal->decision = decision;
  refusal->reason = reason;
  return FALSE;
}

static gboolean
bad_request (SandboxGatewayRefusal *refusal,
             const char            *reason)
{
  return refuse (refusal, SOUP_STATUS_BAD_REQUEST, SANDBOX_GATEWAY_DECISION_BAD_REQUEST, reason);
}

static gboolean
denied (SandboxGatewayRefusal *refusal,
        const char            *reason)
{
  return refuse (refusal, SOUP_STATUS_FORBIDDEN, SANDBOX_GATEWAY_DECISION_DENIED, reason);
}

typedef struct
{
  guint hosts;
  const char *host;
  guint content_lengths;
  const char *content_length;
  guint transfer_encodings;
  const char *transfer_encoding;
} HeaderCensus;

static void
count_header (const char *name,
              const char *value,
              gpointer    user_data)
{
  HeaderCensus *census = user_data;

  if (g_ascii_strcasecmp (name, "Host") == 0)
    {
      census->hosts++;
      census->host = value;
    }
  else if (g_ascii_strcasecmp (name, "Content-Length") == 0)
    {
      census->content_lengths++;
      census->content_length = value;
    }
  else if (g_ascii_strcasecmp (name, "Transfer-Encoding") == 0)
    {
      census->transfer_encodings++;
      census->transfer_encoding = value;
    }
}

static gboolean
is_digits (const char *text)
{
  if (*text == '\0')
    return FALSE;

  for (; *text != '\0'; text++)
    if (!g_ascii_isdigit (*text))
      return FALSE;

  return TRUE;
}

/* Exactly one way to find the end of the body, or none at all. */
static gboolean
framing_is_unambiguous (const HeaderCensus *census)
{
  if (census->content_lengths > 1 || census->transfer_encodings > 1)
    return FALSE;
  if (census->content_lengths == 1 && census->transfer_encodings == 1)
    return FALSE;
  if (census->content_lengths == 1 && !is_digits (census->content_length))
    return FALSE;
  if (census->transfer_encodings == 1 &&
      g_ascii_strcasecmp (census->transfer_encoding, "chunked") != 0)
    return FALSE;

  return TRUE;
}

/* A host, an IPv4 address or a bracketed IPv6 literal, optionally with a
 * port: no userinfo, no path, no whitespace. */
static gboolean
host_is_well_formed (const char *host)
{
  if (*host == '\0')
    return FALSE;

  for (const char *p = host; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr ("-.:[]", *p) == NULL)
      return FALSE;

  return TRUE;
}

/* Splits a well-formed Host header into its hostname (brackets dropped from
 * an IPv6 literal) and its port, -1 when it names none. */
static gboolean
split_host (const char  *host,
            char       **hostname,
            int         *port)
{
  const char *colon;

  if (host[0] == '[')
    {
      const char *bracket = strchr (host, ']');

      if (bracket == NULL)
        return FALSE;
      *hostname = g_strndup (host + 1, bracket - host - 1);
      colon = bracket[1] == ':' ? bracket + 1 : NULL;
      if (colon == NULL && bracket[1] != '\0')
        return FALSE;
    }
  else
    {
      colon = strchr (host, ':');
      *hostname = colon != NULL ? g_strndup (host, colon - host) : g_strdup (host);
    }

  *port = -1;
  if (colon != NULL)
    {
      guint64 value = 0;

      if (!g_ascii_string_to_unsigned (colon + 1, 10, 1, 65535, &value, NULL))
        return FALSE;
      *port = (int) value;
    }

  return TRUE;
}

/* libsoup builds the request URI from the Host header for origin-form
 * targets, and from the target itself for absolute-form ones; an authority
 * that differs from the Host header, or carries userinfo, gives the latter
 * away. */
static gboolean
authority_matches_host (GUri       *uri,
                        const char *host)
{
  g_autofree char *hostname = NULL;
  int uri_port = g_uri_get_port (uri);
  int port;

  if (g_uri_get_host (uri) == NULL || g_uri_get_userinfo (uri) != NULL)
    return FALSE;
  if (g_strcmp0 (g_uri_get_scheme (uri), "http") != 0)
    return FALSE;
  if (!split_host (host, &hostname, &port))
    return FALSE;
  if (g_ascii_strcasecmp (hostname, g_uri_get_host (uri)) != 0)
    return FALSE;

  if (port == -1)
    return uri_port == -1 || uri_port == 80;

  return uri_port == port;
}

gboolean
sandbox_gateway_http_method_is_allowed (const char *method)
{
  static const char * const allowed[] = {
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (allowed); i++)
    if (strcmp (method, allowed[i]) == 0)
      return TRUE;

  return FALSE;
}

/* Printable ASCII only: no CTL bytes, no spaces, nothing a URL parser might
 * reinterpret (backslash, fragment), and no percent-encoded NUL, CR or LF
 * that an upstream might decode into its own framing. */
gboolean
sandbox_gateway_http_target_is_clean (const char *target)
{
  const char *query = strchr (target, '?');
  gsize path_length = query != NULL ? (gsize) (query - target) : strlen (target);

  for (const char *p = target; *p != '\0'; p++)
    {
      guchar c = *p;

      if (c <= 0x20 || c >= 0x7f || c == '\\' || c == '#')
        return FALSE;

      if (c == '%' && p[1] == '0' &&
          (p[2] == '0' || p[2] == 'a' || p[2] == 'A' || p[2] == 'd' || p[2] == 'D'))
        return FALSE;
    }

  /* An empty path segment could be read as an authority by an upstream. */
  if (g_strstr_len (target, path_length, "//") != NULL)
    return FALSE;

  return TRUE;
}

/* A forwarded header value: no CTL bytes but horizontal tab. */
gboolean
sandbox_gateway_http_value_is_clean (const char *value)
{
  for (const guchar *p = (const guchar *) value; *p != '\0'; p++)
    if ((*p < 0x20 && *p != '\t') || *p == 0x7f)
      return FALSE;

  return TRUE;
}

static char *
target_of (GUri *uri)
{
  const char *path = g_uri_get_path (uri);
  const char *query = g_uri_get_query (uri);

  if (query != NULL)
    return g_strconcat (path, "?", query, NULL);

  return g_strdup (path);
}

/*
 * sandbox_gateway_http_check_head:
 * @headers: a request's headers, as libsoup parsed them
 * @host: (out) (transfer none): the single Host header, or NULL
 * @refusal: (out caller-allocates): why the request is refused
 *
 * Checks what the headers alone decide: exactly one way to frame the body
 * (or none), and exactly one well-formed Host header. Needs no connection:
 * soup_headers_parse_request() gives the headers of raw bytes.
 *
 * Returns: whether the headers may go on to the method and target checks
 */
gboolean
sandbox_gateway_http_check_head (SoupMessageHeaders     *headers,
                                 const char            **host,
                                 SandboxGatewayRefusal  *refusal)
{
  HeaderCensus census = { 0 };

  soup_message_headers_foreach (headers, count_header, &census);
  *host = census.hosts == 1 ? census.host : NULL;

  if (!framing_is_unambiguous (&census))
    return bad_request (refusal, "ambiguous-framing");
  if (census.hosts == 0)
    return bad_request (refusal, "missing-host");
  if (census.hosts > 1)
    return bad_request (refusal, "duplicate-host");
  if (!host_is_well_formed (census.host))
    return bad_request (refusal, "invalid-host");

  return TRUE;
}

/*
 * sandbox_gateway_http_check_request:
 * @msg: a request whose headers have been read
 * @origin_form: whether the guest sent the target in origin form (starting
 *   with "/"), rather than absolute (or "*")
 * @proxy: whether @msg came on a proxy listener, where an absolute-form
 *   target naming the Host's own authority is what a client sends
 * @host: (out) (transfer none): the single Host header, or NULL
 * @target: (out) (transfer full): the origin-form path and query, or NULL
 * @refusal: (out caller-allocates): why the request is refused
 *
 * Checks everything about a request that does not depend on the policy:
 * the headers (sandbox_gateway_http_check_head()), the method and the
 * target.
 *
 * Returns: whether the request may go on to the policy
 */
gboolean
sandbox_gateway_http_check_request (SoupServerMessage      *msg,
                                    gboolean                origin_form,
                                    gboolean                proxy,
                                    const char            **host,
                                    char                  **target,
                                    SandboxGatewayRefusal  *refusal)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  const char *method = soup_server_message_get_method (msg);
  GUri *uri = soup_server_message_get_uri (msg);

  *target = uri != NULL ? target_of (uri) : NULL;

  if (!sandbox_gateway_http_check_head (headers, host, refusal))
    return FALSE;

  if (method == NULL || !sandbox_gateway_http_method_is_allowed (method))
    return denied (refusal, "method-not-allowed");

  /* On the socket the target must start with "/", as the contract says: an
   * absolute-form target is a routing attempt, not a framing problem, and is
   * denied like a disallowed host, even when it names the Host's own
   * authority. A proxy's clients send absolute-form targets: one naming the
   * Host's own authority goes on, as its origin-form twin would. */
  if ((!origin_form && !proxy) || uri == NULL || !authority_matches_host (uri, *host))
    return denied (refusal, "absolute-target");
  if (g_uri_get_fragment (uri) != NULL)
    return bad_request (refusal, "invalid-target");
  if (!g_str_has_prefix (*target, "/") || g_str_has_prefix (*target, "//"))
    return denied (refusal, "target-not-allowed");
  if (!sandbox_gateway_http_target_is_clean (*target))
    return bad_request (refusal, "invalid-target");

  return TRUE;
}

/*
 * sandbox_gateway_http_check_connect:
 * @msg: a CONNECT request whose headers have been read
 * @authority: (out) (transfer full): the target's host (an IPv6 literal
 *   without brackets), or NULL
 * @port: (out): the target's port
 * @refusal: (out caller-allocates): why the request is refused
 *
 * A CONNECT's target is an authority, host and port, which libsoup made the
 * request URI of. The body framing must be unambiguous, as for any request;
 * a Host header is not needed (clients differ), but must be well formed if
 * there is one.
 *
 * Returns: whether the request may go on to the policy
 */
gboolean
sandbox_gateway_http_check_connect (SoupServerMessage      *msg,
                                    char                  **authority,
                                    guint16                *port,
                                    SandboxGatewayRefusal  *refusal)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  GUri *uri = soup_server_message_get_uri (msg);
  HeaderCensus census = { 0 };

  *authority = NULL;
  *port = 0;
  soup_message_headers_foreach (headers, count_header, &census);
  if (!framing_is_unambiguous (&census))
    return bad_request (refusal, "ambiguous-framing");
  if (census.hosts > 1)
    return bad_request (refusal, "duplicate-host");
  if (census.hosts == 1 && !host_is_well_formed (census.host))
    return bad_request (refusal, "invalid-host");
  if (uri == NULL || g_uri_get_host (uri) == NULL || g_uri_get_userinfo (uri) != NULL ||
      g_uri_get_port (uri) <= 0 || !host_is_well_formed (g_uri_get_host (uri)))
    return bad_request (refusal, "invalid-target");

  *authority = g_strdup (g_uri_get_host (uri));
  *port = (guint16) g_uri_get_port (uri);
  return TRUE;
}
