/* sandbox-gateway-request.c — what the gateway sends upstream for a guest request
 *
 * The upstream request is built here, from the allowed rule and the little
 * of the guest's request that is forwarded: the URL (the rule's origin and
 * the checked target), the method and body, two of the guest's headers and
 * the rule's own, no proxy, no redirects, and the gateway's limits; and
 * what a transfer that failed is reported as.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-gateway-answer-private.h"
#include "sandbox-gateway-http-private.h"
#include "sandbox-gateway-request-private.h"

static gboolean
rule_sets_header (const SandboxNetworkRule *rule,
                  const char               *name)
{
  for (guint i = 0; rule->header_names != NULL && rule->header_names[i] != NULL; i++)
    if (g_ascii_strcasecmp (rule->header_names[i], name) == 0)
      return TRUE;

  return FALSE;
}

/* libcurl adds some headers of its own unless told not to: "Name:" removes
 * one, "Name;" sends it empty. */
static struct curl_slist *
append_header (struct curl_slist *list,
               const char        *name,
               const char        *value)
{
  g_autofree char *line = NULL;

  if (value == NULL)
    line = g_strconcat (name, ":", NULL);
  else if (*value == '\0')
    line = g_strconcat (name, ";", NULL);
  else
    line = g_strconcat (name, ": ", value, NULL);

  return curl_slist_append (list, line);
}

/*
 * sandbox_gateway_request_headers:
 * @headers: the guest's request headers
 * @rule: the rule the request was allowed by
 *
 * Only the guest's content-type and accept, then the rule's own headers
 * (its credentials): nothing else the guest sent goes upstream.
 *
 * Returns: (transfer full): the list for CURLOPT_HTTPHEADER, freed with
 *   curl_slist_free_all()
 */
struct curl_slist *
sandbox_gateway_request_headers (SoupMessageHeaders       *headers,
                                 const SandboxNetworkRule *rule)
{
  static const char * const forwarded[] = { "Content-Type", "Accept" };
  struct curl_slist *list = append_header (NULL, "Expect", NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (forwarded); i++)
    {
      const char *value = soup_message_headers_get_one (headers, forwarded[i]);

      if (rule_sets_header (rule, forwarded[i]))
        continue;
      list = append_header (list, forwarded[i], value);
    }

  for (guint i = 0; rule->header_names != NULL && rule->header_names[i] != NULL; i++)
    list = append_header (list, rule->header_names[i], rule->header_values[i]);

  return list;
}

static void
set_method (CURL       *easy,
            const char *method,
            GBytes     *body)
{
  gsize length = 0;
  const char *data = body != NULL ? g_bytes_get_data (body, &length) : NULL;

  if (strcmp (method, "HEAD") == 0)
    {
      curl_easy_setopt (easy, CURLOPT_NOBODY, 1L);
      return;
    }

  if (length > 0 || strcmp (method, "POST") == 0 ||
      strcmp (method, "PUT") == 0 || strcmp (method, "PATCH") == 0)
    {
      curl_easy_setopt (easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) length);
      curl_easy_setopt (easy, CURLOPT_POSTFIELDS, length > 0 ? data : "");
    }

  if (strcmp (method, "POST") != 0 && strcmp (method, "GET") != 0)
    curl_easy_setopt (easy, CURLOPT_CUSTOMREQUEST, method);
  else if (strcmp (method, "GET") == 0 && length > 0)
    curl_easy_setopt (easy, CURLOPT_CUSTOMREQUEST, "GET");
}

/*
 * sandbox_gateway_request_configure:
 * @url: the rule's origin and the checked target
 * @body: (nullable): the guest's request body
 * @headers: from sandbox_gateway_request_headers(), kept alive by the caller
 *   until the transfer ends
 * @remaining_ms: what is left of the request deadline
 * @ca_file: (nullable): the CA certificates to trust for upstreams instead
 *   of the system's
 *
 * Sets everything about @easy that is not the caller's own callbacks.
 */
void
sandbox_gateway_request_configure (CURL              *easy,
                                   const char        *url,
                                   const char        *method,
                                   GBytes            *body,
                                   struct curl_slist *headers,
                                   gint64             remaining_ms,
                                   const char        *ca_file)
{
  curl_easy_setopt (easy, CURLOPT_URL, url);
  if (ca_file != NULL)
    curl_easy_setopt (easy, CURLOPT_CAINFO, ca_file);
  curl_easy_setopt (easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt (easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt (easy, CURLOPT_FOLLOWLOCATION, 0L);
  /* The host's proxy environment must not route guest traffic. */
  curl_easy_setopt (easy, CURLOPT_PROXY, "");
  curl_easy_setopt (easy, CURLOPT_NOPROXY, "*");
  curl_easy_setopt (easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (easy, CURLOPT_TIMEOUT_MS, (long) MAX (remaining_ms, 1));
  curl_easy_setopt (easy, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) SANDBOX_GATEWAY_MAX_BODY_BYTES);
  curl_easy_setopt (easy, CURLOPT_HTTPHEADER, headers);
  set_method (easy, method, body);
}

/*
 * sandbox_gateway_request_failure:
 * @result: libcurl's result for the transfer
 * @origin: the origin of the rule the request went to
 * @error_buffer: the transfer's CURLOPT_ERRORBUFFER
 * @redirected: the upstream answered with a redirect
 * @response_too_large: the upstream sent more than the gateway carries
 * @failure: (out caller-allocates): the failure, its cause for the caller
 *
 * Says how an upstream transfer that did not end with a response failed.
 */
void
sandbox_gateway_request_failure (CURLcode               result,
                                 const char            *origin,
                                 const char            *error_buffer,
                                 gboolean               redirected,
                                 gboolean               response_too_large,
                                 SandboxGatewayFailure *failure)
{
  const char *detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror (result);

  if (redirected)
    *failure = (SandboxGatewayFailure) {
      "redirect", sandbox_error_code_name (SANDBOX_ERROR_NETWORK_DENIED),
      g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_NETWORK_DENIED,
                   "Sandbox redirects are denied (%s answered with a redirect)", origin),
    };
  else if (response_too_large || result == CURLE_FILESIZE_EXCEEDED)
    *failure = (SandboxGatewayFailure) {
      "response-too-large", sandbox_error_code_name (SANDBOX_ERROR_LIMIT),
      g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                   "Sandbox response limit exceeded (%s sent more than %d bytes)",
                   origin, SANDBOX_GATEWAY_MAX_BODY_BYTES),
    };
  else if (result == CURLE_OPERATION_TIMEDOUT)
    *failure = (SandboxGatewayFailure) {
      "timeout", sandbox_error_code_name (SANDBOX_ERROR_LIMIT),
      g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                   "Sandbox upstream request to %s timed out: %s", origin, detail),
    };
  else if (result == CURLE_COULDNT_CONNECT)
    *failure = (SandboxGatewayFailure) {
      "connect-refused", SANDBOX_GATEWAY_UPSTREAM_FAILED,
      g_error_new (G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED,
                   "Sandbox upstream request to %s failed: %s", origin, detail),
    };
  else if (result == CURLE_COULDNT_RESOLVE_HOST)
    *failure = (SandboxGatewayFailure) {
      "upstream-error", SANDBOX_GATEWAY_UPSTREAM_FAILED,
      g_error_new (G_IO_ERROR, G_IO_ERROR_HOST_NOT_FOUND,
                   "Sandbox upstream request to %s failed: %s", origin, detail),
    };
  else
    *failure = (SandboxGatewayFailure) {
      "upstream-error", SANDBOX_GATEWAY_UPSTREAM_FAILED,
      g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED,
                   "Sandbox upstream request to %s failed: %s", origin, detail),
    };
}
