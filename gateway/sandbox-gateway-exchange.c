/* sandbox-gateway-exchange.c — one guest request and its answer
 *
 * A SandboxGatewayExchange is one request the gateway let past its first
 * checks, from its head to its answer: the checks that need only the head
 * (framing, Host, method, target, the policy's rule, the declared size:
 * sandbox-gateway-exchange-check.c),
 * the body as it arrives, the upstream transfer over libcurl, and the answer
 * relayed or made, each audited once. It lives on the gateway thread and
 * learns what it needs from SandboxGatewayExchanges, which the server owns;
 * it never sees the server itself.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-network-policy-private.h"
#include "sandbox-gateway-answer-private.h"
#include "sandbox-gateway-exchange-private.h"
#include "sandbox-gateway-exchange-fields-private.h"
#include "sandbox-gateway-request-private.h"
#include "sandbox-gateway-streamed-answer-private.h"

/* The reference broker's limit on concurrent upstream requests. */
#define MAX_IN_FLIGHT 16


/* Audit */

static GQuark
audited_quark (void)
{
  return g_quark_from_static_string ("sandbox-gateway-audited");
}

/* Reports @record, which belongs to no request libsoup made. */
void
sandbox_gateway_exchanges_report (SandboxGatewayExchanges         *self,
                                  const SandboxGatewayAuditRecord *record)
{
  g_autoptr(SandboxGatewayEvent) event = NULL;

  if (self->callbacks.audit == NULL)
    return;

  event = sandbox_gateway_event_new (record);
  self->callbacks.audit (event, self->user_data);
}

/* Audits @msg once: @record gets its method and, from @started_us (0: not
 * started), its duration. */
void
sandbox_gateway_exchanges_audit (SandboxGatewayExchanges   *self,
                                 SoupServerMessage         *msg,
                                 gint64                     started_us,
                                 SandboxGatewayAuditRecord *record)
{
  record->method = soup_server_message_get_method (msg);
  record->arrival = sandbox_gateway_connection_get_arrival (sandbox_gateway_connection_of (msg));
  record->duration_us = started_us > 0 ? g_get_monotonic_time () - started_us : 0;
  g_object_set_qdata (G_OBJECT (msg), audited_quark (), GINT_TO_POINTER (TRUE));
  sandbox_gateway_exchanges_report (self, record);
}

gboolean
sandbox_gateway_message_is_audited (SoupServerMessage *msg)
{
  return g_object_get_qdata (G_OBJECT (msg), audited_quark ()) != NULL;
}

void
sandbox_gateway_exchanges_report_error (SandboxGatewayExchanges *self,
                                        const GError            *cause)
{
  if (self->callbacks.upstream_error != NULL)
    self->callbacks.upstream_error (cause, self->user_data);
}

/* Life cycle */

static void
exchange_free (SandboxGatewayExchange *exchange)
{
  if (exchange->easy != NULL)
    {
      if (exchange->state == SANDBOX_GATEWAY_EXCHANGE_FORWARDING)
        sandbox_upstream_cancel (exchange->exchanges->upstream, exchange->easy);
      sandbox_upstream_return_easy (exchange->exchanges->upstream, exchange->easy);
    }

  g_clear_pointer (&exchange->stream, sandbox_gateway_streamed_answer_free);
  g_clear_pointer (&exchange->upstream_headers, curl_slist_free_all);
  g_clear_pointer (&exchange->chunked_body, g_byte_array_unref);
  g_clear_pointer (&exchange->request_body, g_bytes_unref);
  g_clear_pointer (&exchange->response_body, g_byte_array_unref);
  g_clear_object (&exchange->policy);
  g_free (exchange->host);
  g_free (exchange->target);
  g_object_unref (exchange->msg);
  g_free (exchange->origin);
  g_free (exchange);
}

SandboxGatewayExchange *
sandbox_gateway_exchange_new (SandboxGatewayExchanges  *exchanges,
                              SoupServerMessage        *msg,
                              SandboxGatewayConnection *connection,
                              SandboxNetworkPolicy     *policy,
                              const SandboxNetworkRule *rule,
                              char                     *origin,
                              guint                     generation,
                              const char               *host,
                              char                     *target,
                              gint64                    started_us)
{
  SandboxGatewayExchange *exchange = g_new0 (SandboxGatewayExchange, 1);

  exchange->exchanges = exchanges;
  exchange->msg = g_object_ref (msg);
  exchange->connection = connection;
  exchange->state = SANDBOX_GATEWAY_EXCHANGE_READING;
  exchange->policy = g_object_ref (policy);
  exchange->rule = rule;
  exchange->origin = origin;
  exchange->policy_generation = generation;
  exchange->host = g_strdup (host);
  exchange->target = target;
  exchange->started_us = started_us;

  g_hash_table_insert (exchanges->table, msg, exchange);
  return exchange;
}

void
sandbox_gateway_exchanges_init (SandboxGatewayExchanges             *self,
                                const SandboxGatewayServerCallbacks *callbacks,
                                gpointer                             user_data,
                                guint                                request_timeout_ms,
                                guint                                header_timeout_ms)
{
  *self = (SandboxGatewayExchanges) {
    .callbacks = *callbacks,
    .user_data = user_data,
    .request_timeout_ms = request_timeout_ms,
    .header_timeout_ms = header_timeout_ms,
    .table = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) exchange_free),
  };
  /* The upstream (a curl multi handle, which holds a socketpair of its own)
   * is made on the first forwarded request: an idle session's gateway costs
   * its two listening sockets and nothing more. */
}

/* Frees every exchange, then the upstream. */
void
sandbox_gateway_exchanges_clear (SandboxGatewayExchanges *self)
{
  if (self->table != NULL)
    g_hash_table_remove_all (self->table);
  g_clear_pointer (&self->upstream, sandbox_upstream_free);
  g_clear_pointer (&self->table, g_hash_table_unref);
}

/* Returns: (nullable) (transfer none): the exchange of @msg */
SandboxGatewayExchange *
sandbox_gateway_exchanges_lookup (SandboxGatewayExchanges *self,
                                  SoupServerMessage       *msg)
{
  return msg != NULL ? g_hash_table_lookup (self->table, msg) : NULL;
}

SandboxGatewayExchangeState
sandbox_gateway_exchange_get_state (SandboxGatewayExchange *self)
{
  return self->state;
}

/* Answers */

/* Once an answer is decided, writing it gets a deadline of its own, so that
 * an answer decided just before the request deadline is still delivered, and
 * a guest that does not read it is still dropped. */
static void
start_answer_deadline (SandboxGatewayExchange *exchange)
{
  if (sandbox_gateway_connection_is_current (exchange->connection, exchange->msg))
    sandbox_gateway_connection_arm (exchange->connection, SANDBOX_GATEWAY_PHASE_RESPONSE, exchange->msg,
                                    exchange->exchanges->header_timeout_ms);
}

static guint64
bytes_sent_of (SandboxGatewayExchange *exchange)
{
  return exchange->request_body != NULL ? g_bytes_get_size (exchange->request_body) : 0;
}

/* Audits @exchange's request: @record gets its host and target. */
static void
audit_exchange (SandboxGatewayExchange    *exchange,
                SandboxGatewayAuditRecord *record)
{
  record->host = exchange->host;
  record->path = exchange->target;
  sandbox_gateway_exchanges_audit (exchange->exchanges, exchange->msg, exchange->started_us, record);
}

/* Ends the forwarding state of an exchange, cancelling its transfer when it
 * is still running. Returns whether the message was paused for it. */
static gboolean
end_forwarding (SandboxGatewayExchange *exchange,
                gboolean                cancel_transfer)
{
  if (exchange->state != SANDBOX_GATEWAY_EXCHANGE_FORWARDING)
    return FALSE;

  if (cancel_transfer)
    sandbox_upstream_cancel (exchange->exchanges->upstream, exchange->easy);

  exchange->state = SANDBOX_GATEWAY_EXCHANGE_ANSWERED;
  exchange->exchanges->n_forwarding--;
  return TRUE;
}

/* Answers 502 for an exchange that was allowed but failed, and reports it.
 * Takes the failure's cause. */
static void
answer_failure (SandboxGatewayExchange *exchange,
                SandboxGatewayFailure  *failure)
{
  guint upstream_status = 0;
  long code = 0;

  if (exchange->easy != NULL && curl_easy_getinfo (exchange->easy, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK)
    upstream_status = (guint) code;

  sandbox_gateway_answer (exchange->msg, SOUP_STATUS_BAD_GATEWAY, failure->sandbox_error, FALSE);
  exchange->state = SANDBOX_GATEWAY_EXCHANGE_ANSWERED;
  start_answer_deadline (exchange);

  audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
    .decision = SANDBOX_GATEWAY_DECISION_FAILED,
    .reason = failure->reason,
    .status = SOUP_STATUS_BAD_GATEWAY,
    .upstream_status = upstream_status,
    .bytes_sent = bytes_sent_of (exchange),
    .bytes_received = exchange->response_body != NULL ? exchange->response_body->len : 0,
  });
  sandbox_gateway_exchanges_report_error (exchange->exchanges, failure->cause);
  g_clear_error (&failure->cause);
}

static gboolean
is_streaming (SandboxGatewayExchange *exchange)
{
  return exchange->stream != NULL && sandbox_gateway_streamed_answer_has_begun (exchange->stream);
}

/* Stops a streamed answer short, its head already sent: audited as failed
 * with what was relayed, and reported unless the guest went away. Takes the
 * failure's cause. */
static void
cut_stream (SandboxGatewayExchange *exchange,
            SandboxGatewayFailure  *failure)
{
  guint status = sandbox_gateway_streamed_answer_get_status (exchange->stream);

  end_forwarding (exchange, TRUE);
  exchange->state = SANDBOX_GATEWAY_EXCHANGE_ANSWERED;
  audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
    .decision = SANDBOX_GATEWAY_DECISION_FAILED,
    .reason = failure->reason,
    .status = status,
    .upstream_status = status,
    .bytes_sent = bytes_sent_of (exchange),
    .bytes_received = sandbox_gateway_streamed_answer_get_bytes (exchange->stream),
  });
  if (failure->cause != NULL)
    sandbox_gateway_exchanges_report_error (exchange->exchanges, failure->cause);
  g_clear_error (&failure->cause);
  start_answer_deadline (exchange);
  sandbox_gateway_streamed_answer_cut (exchange->stream);
}

/* Why a stream that had begun stopped short, from its own limits first. */
static SandboxGatewayFailure
stream_failure (SandboxGatewayExchange *exchange,
                CURLcode                result)
{
  SandboxGatewayStreamedAnswer *stream = exchange->stream;
  const char *origin = exchange->origin;
  SandboxGatewayFailure failure;

  switch (sandbox_gateway_streamed_answer_get_stop (stream))
    {
    case SANDBOX_GATEWAY_STREAM_TOO_LARGE:
      return (SandboxGatewayFailure) {
        "response-too-large", sandbox_error_code_name (SANDBOX_ERROR_LIMIT),
        g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                     "Sandbox response limit exceeded (%s sent more than %" G_GUINT64_FORMAT " bytes)",
                     origin, sandbox_gateway_streamed_answer_get_limit (stream)),
      };
    case SANDBOX_GATEWAY_STREAM_IDLE:
      return (SandboxGatewayFailure) {
        "idle-timeout", sandbox_error_code_name (SANDBOX_ERROR_LIMIT),
        g_error_new (G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                     "Sandbox upstream stream from %s stalled: no bytes within its idle timeout",
                     origin),
      };
    case SANDBOX_GATEWAY_STREAM_DEADLINE:
      return (SandboxGatewayFailure) {
        "timeout", sandbox_error_code_name (SANDBOX_ERROR_LIMIT),
        g_error_new_literal (G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "Sandbox request deadline exceeded"),
      };
    case SANDBOX_GATEWAY_STREAM_RUNNING:
    default:
      sandbox_gateway_request_failure (result, origin, exchange->error_buffer, FALSE, FALSE, &failure);
      return failure;
    }
}

/* Ends an exchange whose guest went away: nobody will read an answer, so
 * none is reported; the connection is shut, so that libsoup's write of the
 * answer fails at once and it lets go of the message. */
static void
abandon_exchange (SandboxGatewayExchange *exchange)
{
  gboolean paused;

  if (is_streaming (exchange))
    {
      SandboxGatewayFailure failure = { "client-closed", NULL, NULL };

      cut_stream (exchange, &failure);
      return;
    }

  paused = end_forwarding (exchange, TRUE);

  audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
    .decision = SANDBOX_GATEWAY_DECISION_FAILED,
    .reason = "client-closed",
    .bytes_sent = bytes_sent_of (exchange),
  });
  sandbox_gateway_answer (exchange->msg, SOUP_STATUS_BAD_GATEWAY, SANDBOX_GATEWAY_UPSTREAM_FAILED, TRUE);
  if (exchange->connection != NULL)
    sandbox_gateway_connection_drop (exchange->connection);
  if (paused)
    soup_server_message_unpause (exchange->msg);
}

static void
fail_exchange (SandboxGatewayExchange *exchange,
               SandboxGatewayFailure  *failure)
{
  gboolean paused;

  if (is_streaming (exchange))
    {
      cut_stream (exchange, failure);
      return;
    }

  paused = end_forwarding (exchange, TRUE);

  answer_failure (exchange, failure);
  if (paused)
    soup_server_message_unpause (exchange->msg);
}

static void
fail_with_unexpected_status (SandboxGatewayExchange *exchange,
                             long                    status)
{
  SandboxGatewayFailure failure = {
    "upstream-error", SANDBOX_GATEWAY_UPSTREAM_FAILED,
    g_error_new (G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                 "Sandbox upstream request to %s failed: unexpected status %ld",
                 exchange->origin, status),
  };

  answer_failure (exchange, &failure);
}

/* Relays the upstream's status, content-type and body, and nothing else.
 * The type goes as the upstream named it, as the reference relays it: none
 * when it named none (or an empty one), and none when it holds a control
 * byte. */
static const char *
upstream_content_type (SandboxGatewayExchange *exchange)
{
  const char *content_type = NULL;

  curl_easy_getinfo (exchange->easy, CURLINFO_CONTENT_TYPE, &content_type);
  if (content_type != NULL &&
      (*content_type == '\0' || !sandbox_gateway_http_value_is_clean (content_type)))
    return NULL;

  return content_type;
}

static void
relay_response (SandboxGatewayExchange *exchange,
                long                    status)
{
  guint64 received = exchange->response_body->len;
  gsize length = 0;
  gpointer body;

  body = g_byte_array_steal (exchange->response_body, &length);
  sandbox_gateway_answer_relay (exchange->msg, (guint) status, upstream_content_type (exchange), body, length);
  start_answer_deadline (exchange);

  /* libsoup writes the head and the body in two writes, which wake the
   * guest twice: have them sent together when a body follows the head. */
  if (length > 0 && status != SOUP_STATUS_NO_CONTENT && status != SOUP_STATUS_NOT_MODIFIED &&
      strcmp (soup_server_message_get_method (exchange->msg), "HEAD") != 0)
    sandbox_gateway_connection_hold_response_head (exchange->connection);

  audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
    .decision = SANDBOX_GATEWAY_DECISION_ALLOWED,
    .reason = "forwarded",
    .status = (guint) status,
    .upstream_status = (guint) status,
    .bytes_sent = bytes_sent_of (exchange),
    .bytes_received = received,
  });
}

/* The upstream's streamed answer ended, whole or not. */
static void
finish_stream (SandboxGatewayExchange *exchange,
               CURLcode                result)
{
  guint status = sandbox_gateway_streamed_answer_get_status (exchange->stream);
  SandboxGatewayFailure failure;

  if (result != CURLE_OK)
    {
      failure = stream_failure (exchange, result);
      cut_stream (exchange, &failure);
      return;
    }

  exchange->state = SANDBOX_GATEWAY_EXCHANGE_ANSWERED;
  start_answer_deadline (exchange);
  audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
    .decision = SANDBOX_GATEWAY_DECISION_ALLOWED,
    .reason = "forwarded",
    .status = status,
    .upstream_status = status,
    .bytes_sent = bytes_sent_of (exchange),
    .bytes_received = sandbox_gateway_streamed_answer_get_bytes (exchange->stream),
  });
  sandbox_gateway_streamed_answer_finish (exchange->stream);
}

/* For a streaming rule, the head of a final answer with a body starts the
 * stream, once its last line is in; anything else is answered as always
 * when the transfer ends. */
static void
maybe_begin_stream (SandboxGatewayExchange *exchange,
                    const char             *line,
                    size_t                  length,
                    long                    status)
{
  gboolean head_ends = (length == 2 && line[0] == '\r' && line[1] == '\n') ||
                       (length == 1 && line[0] == '\n');

  if (exchange->stream == NULL || sandbox_gateway_streamed_answer_has_begun (exchange->stream) ||
      !head_ends || status < 200 || status > 599 ||
      status == SOUP_STATUS_NO_CONTENT || status == SOUP_STATUS_NOT_MODIFIED)
    return;

  sandbox_gateway_streamed_answer_begin (exchange->stream, (guint) status,
                                         upstream_content_type (exchange));
}

static void
on_upstream_done (CURL     *easy,
                  CURLcode  result,
                  gpointer  user_data)
{
  SandboxGatewayExchange *exchange = user_data;
  long status = 0;

  /* libcurl has already let go of the transfer. */
  end_forwarding (exchange, FALSE);

  curl_easy_getinfo (easy, CURLINFO_RESPONSE_CODE, &status);
  if (is_streaming (exchange))
    {
      finish_stream (exchange, result);
      return;
    }
  if (result == CURLE_OK && status >= 300 && status < 400)
    exchange->redirected = TRUE;

  if (result != CURLE_OK || exchange->redirected)
    {
      SandboxGatewayFailure failure;

      sandbox_gateway_request_failure (result, exchange->origin, exchange->error_buffer,
                                       exchange->redirected, exchange->response_too_large, &failure);
      answer_failure (exchange, &failure);
    }
  else if (status < 200 || status > 599)
    {
      fail_with_unexpected_status (exchange, status);
    }
  else
    {
      relay_response (exchange, status);
    }

  soup_server_message_unpause (exchange->msg);
}

static size_t
on_upstream_header (char   *data,
                    size_t  size,
                    size_t  count,
                    void   *user_data)
{
  SandboxGatewayExchange *exchange = user_data;
  long status = 0;

  /* A redirect is refused as soon as its status line arrives, so nothing of
   * it is read, let alone followed. */
  curl_easy_getinfo (exchange->easy, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300 && status < 400)
    {
      exchange->redirected = TRUE;
      return 0;
    }

  maybe_begin_stream (exchange, data, size * count, status);
  return size * count;
}

static size_t
on_upstream_data (char   *data,
                  size_t  size,
                  size_t  count,
                  void   *user_data)
{
  SandboxGatewayExchange *exchange = user_data;
  gsize length = size * count;

  if (is_streaming (exchange))
    return sandbox_gateway_streamed_answer_push (exchange->stream, data, length);

  /* Stop reading at the limit: memory stays bounded whatever the upstream
   * sends. */
  if (exchange->response_body->len + length > SANDBOX_GATEWAY_MAX_BODY_BYTES)
    {
      exchange->response_too_large = TRUE;
      return 0;
    }

  g_byte_array_append (exchange->response_body, (const guint8 *) data, length);
  return length;
}

static void
configure_easy (SandboxGatewayExchange *exchange,
                gint64                  remaining_ms)
{
  CURL *easy = exchange->easy;
  g_autofree char *url = g_strconcat (exchange->origin, exchange->target, NULL);

  sandbox_gateway_request_configure (easy, url, soup_server_message_get_method (exchange->msg),
                                     exchange->request_body, exchange->upstream_headers, remaining_ms,
                                     exchange->exchanges->upstream_ca_file);
  curl_easy_setopt (easy, CURLOPT_ERRORBUFFER, exchange->error_buffer);
  curl_easy_setopt (easy, CURLOPT_HEADERFUNCTION, on_upstream_header);
  curl_easy_setopt (easy, CURLOPT_HEADERDATA, exchange);
  curl_easy_setopt (easy, CURLOPT_WRITEFUNCTION, on_upstream_data);
  curl_easy_setopt (easy, CURLOPT_WRITEDATA, exchange);
}

static GBytes *
take_request_body (SandboxGatewayExchange *exchange)
{
  if (exchange->chunked_body != NULL)
    return g_byte_array_free_to_bytes (g_steal_pointer (&exchange->chunked_body));

  return soup_message_body_flatten (soup_server_message_get_request_body (exchange->msg));
}

/* A HEAD answer has no body to stream, and a guest we cannot cut off
 * mid-answer gets whole answers only. */
static gboolean
wants_stream (SandboxGatewayExchange *exchange)
{
  return exchange->rule->stream.enabled && exchange->connection != NULL &&
         strcmp (soup_server_message_get_method (exchange->msg), "HEAD") != 0;
}

static void
forward (SandboxGatewayExchange *exchange)
{
  SandboxGatewayExchanges *exchanges = exchange->exchanges;
  gint64 elapsed_ms = (g_get_monotonic_time () - exchange->started_us) / 1000;

  exchange->request_body = take_request_body (exchange);
  exchange->response_body = g_byte_array_new ();
  exchange->upstream_headers = sandbox_gateway_request_headers (soup_server_message_get_request_headers (exchange->msg),
                                                                exchange->rule);
  if (exchanges->upstream == NULL)
    exchanges->upstream = sandbox_upstream_new (g_main_context_get_thread_default ());
  exchange->easy = sandbox_upstream_take_easy (exchanges->upstream);
  if (wants_stream (exchange))
    {
      exchange->stream = sandbox_gateway_streamed_answer_new (exchange->msg, exchange->connection, exchange->easy,
                                                              &exchange->rule->stream,
                                                              exchanges->request_timeout_ms,
                                                              exchange->started_us);
      configure_easy (exchange, sandbox_gateway_streamed_answer_get_remaining_ms (exchange->stream));
      sandbox_gateway_streamed_answer_arm (exchange->stream);
    }
  else
    {
      configure_easy (exchange, (gint64) exchanges->request_timeout_ms - elapsed_ms);
    }

  soup_server_message_pause (exchange->msg);
  exchange->state = SANDBOX_GATEWAY_EXCHANGE_FORWARDING;
  exchanges->n_forwarding++;
  sandbox_gateway_connection_watch_for_hangup (exchange->connection);

  if (!sandbox_upstream_start (exchanges->upstream, exchange->easy, on_upstream_done, exchange))
    {
      SandboxGatewayFailure failure = {
        "upstream-error", SANDBOX_GATEWAY_UPSTREAM_FAILED,
        g_error_new (G_IO_ERROR, G_IO_ERROR_FAILED,
                     "Sandbox upstream request to %s could not be started",
                     exchange->origin),
      };

      /* Nothing runs yet, so there is nothing to cancel. */
      end_forwarding (exchange, FALSE);
      answer_failure (exchange, &failure);
      soup_server_message_unpause (exchange->msg);
    }
}
/* Failing exchanges from outside */

static SandboxGatewayFailure
policy_changed_failure (void)
{
  return (SandboxGatewayFailure) {
    "policy-changed", sandbox_error_code_name (SANDBOX_ERROR_UNAVAILABLE),
    g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                         "Sandbox upstream request aborted: the network policy changed"),
  };
}

static SandboxGatewayFailure
closed_failure (void)
{
  return (SandboxGatewayFailure) {
    "closed", sandbox_error_code_name (SANDBOX_ERROR_UNAVAILABLE),
    g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                         "Sandbox upstream request aborted: the gateway closed"),
  };
}

/* Fails every forwarding exchange but those decided under @generation (all
 * of them when @all), each with a failure of its own from @make_failure. */
static void
abort_forwarding (SandboxGatewayExchanges *self,
                  gboolean                 all,
                  guint                    generation,
                  SandboxGatewayFailure  (*make_failure) (void))
{
  g_autoptr(GPtrArray) doomed = g_ptr_array_new ();
  GHashTableIter iter;
  SandboxGatewayExchange *exchange;

  g_hash_table_iter_init (&iter, self->table);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &exchange))
    if (exchange->state == SANDBOX_GATEWAY_EXCHANGE_FORWARDING &&
        (all || exchange->policy_generation != generation))
      g_ptr_array_add (doomed, exchange);

  for (guint i = 0; i < doomed->len; i++)
    {
      SandboxGatewayFailure failure = make_failure ();

      fail_exchange (g_ptr_array_index (doomed, i), &failure);
    }
}

/* Aborts every exchange decided under another policy than @generation's. */
void
sandbox_gateway_exchanges_abort_stale (SandboxGatewayExchanges *self,
                                       guint                    generation)
{
  abort_forwarding (self, FALSE, generation, policy_changed_failure);
}

/* Aborts every exchange in flight: the gateway closes. */
void
sandbox_gateway_exchanges_abort_all (SandboxGatewayExchanges *self)
{
  abort_forwarding (self, TRUE, 0, closed_failure);
}

/* The request deadline passed while the upstream was still working. */
void
sandbox_gateway_exchange_time_out (SandboxGatewayExchange *self)
{
  SandboxGatewayFailure failure;

  if (self->stream != NULL)
    {
      if (sandbox_gateway_streamed_answer_check_deadline (self->stream) == SANDBOX_GATEWAY_STREAM_RUNNING)
        return;
      if (is_streaming (self))
        {
          failure = stream_failure (self, CURLE_OPERATION_TIMEDOUT);
          cut_stream (self, &failure);
          return;
        }
    }

  failure = (SandboxGatewayFailure) {
    "timeout", sandbox_error_code_name (SANDBOX_ERROR_LIMIT),
    g_error_new_literal (G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "Sandbox request deadline exceeded"),
  };
  fail_exchange (self, &failure);
}

/* The guest closed its connection while nobody read it: a request in
 * flight upstream is abandoned at once (its transfer removed, its slot
 * freed), as the reference aborts its fetch when the guest goes away. */
void
sandbox_gateway_exchange_abandon (SandboxGatewayExchange *self)
{
  if (self->state == SANDBOX_GATEWAY_EXCHANGE_FORWARDING)
    abandon_exchange (self);
}

/* Audits a request the guest cut short, sent too slowly or framed in a way
 * the stream refused; the caller makes sure it was not audited already. */
void
sandbox_gateway_exchange_refuse_input (SandboxGatewayExchange *self,
                                       guint                   status,
                                       const char             *reason)
{
  audit_exchange (self, &(SandboxGatewayAuditRecord) {
    .decision = SANDBOX_GATEWAY_DECISION_BAD_REQUEST, .reason = reason, .status = status,
  });
}

/*
 * sandbox_gateway_exchanges_finish:
 *
 * libsoup is done with @msg (answered, or the connection went away): its
 * exchange, if it has one, is freed.
 *
 * Returns: whether @msg had an exchange
 */
gboolean
sandbox_gateway_exchanges_finish (SandboxGatewayExchanges *self,
                                  SoupServerMessage       *msg)
{
  SandboxGatewayExchange *exchange = sandbox_gateway_exchanges_lookup (self, msg);

  if (exchange == NULL)
    return FALSE;

  /* The guest went away while the upstream was still working. */
  if (end_forwarding (exchange, TRUE))
    {
      audit_exchange (exchange, &(SandboxGatewayAuditRecord) {
        .decision = SANDBOX_GATEWAY_DECISION_FAILED,
        .reason = "client-closed",
        .bytes_sent = bytes_sent_of (exchange),
      });
    }

  g_hash_table_remove (self->table, msg);
  return TRUE;
}

/*
 * sandbox_gateway_exchange_run:
 * @generation: the generation of the policy now
 *
 * The whole request has been read: forwards it, unless it is too large, its
 * policy changed meanwhile or too many are in flight.
 */
void
sandbox_gateway_exchange_run (SandboxGatewayExchange *self,
                              guint                   generation)
{
  if (self->request_too_large)
    {
      g_autoptr(GError) cause = sandbox_gateway_request_too_large_error (self->origin, "sent");

      sandbox_gateway_answer (self->msg, SOUP_STATUS_BAD_GATEWAY,
                              sandbox_error_code_name (SANDBOX_ERROR_LIMIT), FALSE);
      self->state = SANDBOX_GATEWAY_EXCHANGE_ANSWERED;
      audit_exchange (self, &(SandboxGatewayAuditRecord) {
        .decision = SANDBOX_GATEWAY_DECISION_FAILED, .reason = "request-too-large",
        .status = SOUP_STATUS_BAD_GATEWAY,
      });
      sandbox_gateway_exchanges_report_error (self->exchanges, cause);
      return;
    }

  if (self->policy_generation != generation)
    {
      SandboxGatewayFailure failure = policy_changed_failure ();

      fail_exchange (self, &failure);
      return;
    }

  if (self->exchanges->n_forwarding >= MAX_IN_FLIGHT)
    {
      sandbox_gateway_answer (self->msg, SOUP_STATUS_SERVICE_UNAVAILABLE,
                              sandbox_gateway_answer_error_for (SANDBOX_GATEWAY_DECISION_BUSY), FALSE);
      self->state = SANDBOX_GATEWAY_EXCHANGE_ANSWERED;
      audit_exchange (self, &(SandboxGatewayAuditRecord) {
        .decision = SANDBOX_GATEWAY_DECISION_BUSY, .reason = "busy",
        .status = SOUP_STATUS_SERVICE_UNAVAILABLE,
      });
      return;
    }

  forward (self);
}
