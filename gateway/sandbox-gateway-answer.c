/* sandbox-gateway-answer.c — the answers the gateway makes itself
 *
 * Every answer the gateway writes rather than relays carries the
 * Sandbox-Error header (SANDBOX_GATEWAY_ERROR_HEADER) and a short plain-text
 * body, both chosen here from the status and the decision. Most go through
 * libsoup; those written directly on the socket are for connections libsoup
 * is about to drop without a word, or never saw.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-gateway.h"
#include "sandbox-gateway-answer-private.h"

/* RFC 6585. libsoup names no status 431 (none in soup-status.h in 3.2, nor
 * on its main branch after 3.7.1): should a release add one, use it. */
#define STATUS_HEADER_FIELDS_TOO_LARGE 431

#define DENIED_BODY "Sandbox network denied"
#define BUSY_BODY "Sandbox broker busy"
#define FAILED_BODY "Sandbox upstream request failed"
#define BAD_REQUEST_BODY "Sandbox bad request"
#define TUNNEL_BODY "CONNECT tunnels are not served yet"

/*
 * sandbox_gateway_answer_error_for:
 *
 * Returns: the Sandbox-Error of a request refused with @decision
 */
const char *
sandbox_gateway_answer_error_for (SandboxGatewayDecision decision)
{
  switch (decision)
    {
    case SANDBOX_GATEWAY_DECISION_DENIED:
      return sandbox_error_code_name (SANDBOX_ERROR_NETWORK_DENIED);
    case SANDBOX_GATEWAY_DECISION_BUSY:
      return sandbox_error_code_name (SANDBOX_ERROR_BUSY);
    case SANDBOX_GATEWAY_DECISION_BAD_REQUEST:
      return sandbox_error_code_name (SANDBOX_ERROR_INVALID);
    case SANDBOX_GATEWAY_DECISION_FAILED:
    case SANDBOX_GATEWAY_DECISION_ALLOWED:
    default:
      return SANDBOX_GATEWAY_UPSTREAM_FAILED;
    }
}

static const char *
body_for (guint status)
{
  switch (status)
    {
    case SOUP_STATUS_FORBIDDEN:
      return DENIED_BODY;
    case SOUP_STATUS_SERVICE_UNAVAILABLE:
      return BUSY_BODY;
    case SOUP_STATUS_NOT_IMPLEMENTED:
      return TUNNEL_BODY;
    case SOUP_STATUS_BAD_REQUEST:
    case SOUP_STATUS_REQUEST_URI_TOO_LONG:
    case STATUS_HEADER_FIELDS_TOO_LARGE:
      return BAD_REQUEST_BODY;
    default:
      return FAILED_BODY;
    }
}

/* The Sandbox-Error of an answer written without libsoup. */
static const char *
sandbox_error_for_status (guint status)
{
  switch (status)
    {
    case SOUP_STATUS_SERVICE_UNAVAILABLE:
      return sandbox_error_code_name (SANDBOX_ERROR_BUSY);
    case SOUP_STATUS_REQUEST_URI_TOO_LONG:
    case STATUS_HEADER_FIELDS_TOO_LARGE:
      return sandbox_error_code_name (SANDBOX_ERROR_LIMIT);
    case SOUP_STATUS_BAD_REQUEST:
    default:
      return sandbox_error_code_name (SANDBOX_ERROR_INVALID);
    }
}

/*
 * sandbox_gateway_answer_directly:
 * @socket: (nullable): the guest's connection
 * @status: 400, 414, 431 or 503
 *
 * The gateway's answer, written on @socket directly, without blocking, for a
 * connection libsoup is about to drop without a word (or never saw). The
 * connection closes right after, so a guest that does not read loses it,
 * and nothing else may be written on the connection at the time: libsoup is
 * reading a request, or has not started.
 */
void
sandbox_gateway_answer_directly (GSocket *socket,
                                 guint    status)
{
  const char *body = body_for (status);
  g_autofree char *response = NULL;

  if (socket == NULL)
    return;

  response = g_strdup_printf ("HTTP/1.1 %u %s\r\n"
                              "Content-Type: text/plain\r\n"
                              "Content-Length: %" G_GSIZE_FORMAT "\r\n"
                              SANDBOX_GATEWAY_ERROR_HEADER ": %s\r\n"
                              "Connection: close\r\n"
                              "\r\n"
                              "%s",
                              status,
                              status == STATUS_HEADER_FIELDS_TOO_LARGE ? "Request Header Fields Too Large"
                                                                       : soup_status_get_phrase (status),
                              strlen (body),
                              sandbox_error_for_status (status), body);
  g_socket_send_with_blocking (socket, response, strlen (response), FALSE, NULL, NULL);
}

/*
 * sandbox_gateway_answer:
 *
 * A gateway-generated answer. After a refusal made before the body was read,
 * @close_connection must be set: whatever follows must not be parsed as the
 * next request.
 */
void
sandbox_gateway_answer (SoupServerMessage *msg,
                        guint              status,
                        const char        *sandbox_error,
                        gboolean           close_connection)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (msg);
  const char *body = body_for (status);

  soup_server_message_set_status (msg, status, NULL);
  soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_STATIC, body, strlen (body));
  soup_message_headers_replace (headers, SANDBOX_GATEWAY_ERROR_HEADER, sandbox_error);
  if (close_connection)
    soup_message_headers_replace (headers, "Connection", "close");
}

/*
 * sandbox_gateway_answer_early:
 *
 * Answers a request refused from an early handler, before its body is read.
 * libsoup still reads the body of such a request before it answers
 * (io_read() in soup-server-message-io-http1.c moves on to
 * SOUP_MESSAGE_IO_STATE_BODY_START after "got-headers" whatever status the
 * handler set, in 3.2 and on libsoup's main branch after 3.7.1): none of it
 * is kept. The request deadline bounds how long that may take.
 */
void
sandbox_gateway_answer_early (SoupServerMessage *msg,
                              guint              status,
                              const char        *sandbox_error,
                              gboolean           close_connection)
{
  soup_message_body_set_accumulate (soup_server_message_get_request_body (msg), FALSE);
  sandbox_gateway_answer (msg, status, sandbox_error, close_connection);
}

/*
 * sandbox_gateway_answer_relay:
 * @content_type: (nullable): the upstream's type, already checked
 * @body: (transfer full): the upstream's body, freed with g_free()
 *
 * Relays the upstream's status, content-type and body, and nothing else.
 * libsoup's soup_server_message_set_response() is not used: it refuses a
 * body without a type (and would leave the body to leak), and warns about a
 * type without a "/".
 */
void
sandbox_gateway_answer_relay (SoupServerMessage *msg,
                              guint              status,
                              const char        *content_type,
                              gpointer           body,
                              gsize              length)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (msg);

  soup_server_message_set_status (msg, status, NULL);
  if (content_type != NULL)
    soup_message_headers_replace (headers, "Content-Type", content_type);
  else
    soup_message_headers_remove (headers, "Content-Type");
  soup_message_body_append (soup_server_message_get_response_body (msg), SOUP_MEMORY_TAKE, body, length);
}

/*
 * sandbox_gateway_answer_is_own:
 *
 * Returns: whether the answer set on @msg is the gateway's (rather than one
 *   libsoup made itself)
 */
gboolean
sandbox_gateway_answer_is_own (SoupServerMessage *msg)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (msg);

  return soup_message_headers_get_one (headers, SANDBOX_GATEWAY_ERROR_HEADER) != NULL;
}

gboolean
sandbox_gateway_request_has_body (SoupServerMessage *msg)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);

  return soup_message_headers_get_one (headers, "Transfer-Encoding") != NULL ||
         soup_message_headers_get_content_length (headers) > 0;
}
