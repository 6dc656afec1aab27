/* sandbox-gateway-streamed-answer.c — an upstream's answer relayed as it arrives
 *
 * For a rule that opted into streaming, the guest gets the upstream's
 * status as soon as its head is in and each piece of the body as libcurl
 * hands it over, in a chunked body, instead of the whole answer at its end.
 * The limits apply as the answer goes: the body's size, the wait for its
 * next bytes, the exchange's deadline. A stream that stops short has its
 * connection shut before the last chunk, so the guest sees a truncated
 * answer and never one that looks whole.
 *
 * Memory stays bounded whatever the two sides do: when the guest reads more
 * slowly than the upstream sends, the transfer is paused once BACKLOG_HIGH
 * bytes wait to be written, and resumed when they are down to BACKLOG_LOW;
 * a guest that stops reading is then cut off by the idle timeout, since no
 * new bytes arrive while the transfer is paused.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include "sandbox-gateway-http-private.h"
#include "sandbox-gateway-streamed-answer-private.h"

#define BACKLOG_HIGH (256 * 1024)
#define BACKLOG_LOW (64 * 1024)

struct _SandboxGatewayStreamedAnswer
{
  SoupServerMessage *msg;
  SandboxGatewayConnection *connection;
  CURL *easy;

  guint64 max_bytes;
  guint idle_timeout_ms;
  gint64 deadline_us;
  gint64 idle_deadline_us;

  gboolean begun;
  guint status;
  guint64 bytes;
  guint64 unsent;
  gboolean upstream_paused;
  gboolean head_written;
  gboolean cutting;
  SandboxGatewayStreamStop stop;
  gulong wrote_headers_id;
  gulong wrote_body_data_id;
};

/*
 * sandbox_gateway_streamed_answer_new:
 * @connection: the connection @msg came on; it outlives the answer (libsoup
 *   lets go of @msg, and its exchange frees the answer, before it lets go of
 *   the connection)
 * @limits: the rule's limits, a zero one standing for the gateway's own
 * @started_us: when the exchange began, which the deadline counts from
 */
SandboxGatewayStreamedAnswer *
sandbox_gateway_streamed_answer_new (SoupServerMessage          *msg,
                                     SandboxGatewayConnection   *connection,
                                     CURL                       *easy,
                                     const SandboxNetworkStream *limits,
                                     guint                       request_timeout_ms,
                                     gint64                      started_us)
{
  SandboxGatewayStreamedAnswer *self = g_new0 (SandboxGatewayStreamedAnswer, 1);
  guint timeout_ms = limits->timeout_ms != 0 ? limits->timeout_ms : request_timeout_ms;

  self->msg = g_object_ref (msg);
  self->connection = connection;
  self->easy = easy;
  self->max_bytes = limits->max_bytes != 0 ? limits->max_bytes : SANDBOX_GATEWAY_MAX_BODY_BYTES;
  self->idle_timeout_ms = limits->idle_timeout_ms != 0 ? limits->idle_timeout_ms : request_timeout_ms;
  self->deadline_us = started_us + (gint64) timeout_ms * 1000;
  self->idle_deadline_us = g_get_monotonic_time () + (gint64) self->idle_timeout_ms * 1000;
  return self;
}

void
sandbox_gateway_streamed_answer_free (SandboxGatewayStreamedAnswer *self)
{
  g_clear_signal_handler (&self->wrote_headers_id, self->msg);
  g_clear_signal_handler (&self->wrote_body_data_id, self->msg);
  g_object_unref (self->msg);
  g_free (self);
}

/* What is left of the exchange's deadline, for libcurl's own timeout. */
gint64
sandbox_gateway_streamed_answer_get_remaining_ms (SandboxGatewayStreamedAnswer *self)
{
  return (self->deadline_us - g_get_monotonic_time ()) / 1000;
}

/* Arms the connection's deadline at the earlier of the exchange's deadline
 * and the wait for the next bytes. */
void
sandbox_gateway_streamed_answer_arm (SandboxGatewayStreamedAnswer *self)
{
  gint64 next_us = MIN (self->deadline_us, self->idle_deadline_us);
  gint64 wait_ms = MAX (next_us - g_get_monotonic_time (), 0) / 1000;

  sandbox_gateway_connection_arm (self->connection, SANDBOX_GATEWAY_PHASE_REQUEST, self->msg,
                                  (guint) MIN (wait_ms, G_MAXUINT));
}

/*
 * sandbox_gateway_streamed_answer_check_deadline:
 *
 * The connection's deadline passed: says which one, and records it as the
 * reason the stream stops; RUNNING (and the deadline re-armed) if neither
 * has passed yet after all.
 */
SandboxGatewayStreamStop
sandbox_gateway_streamed_answer_check_deadline (SandboxGatewayStreamedAnswer *self)
{
  gint64 now = g_get_monotonic_time ();

  if (now >= self->deadline_us)
    self->stop = SANDBOX_GATEWAY_STREAM_DEADLINE;
  else if (now >= self->idle_deadline_us)
    self->stop = SANDBOX_GATEWAY_STREAM_IDLE;
  else
    sandbox_gateway_streamed_answer_arm (self);

  return self->stop;
}

static void cut_now (SandboxGatewayStreamedAnswer *self);

/* A cut waits until the head and every relayed byte are written. */
static gboolean
is_flushed (SandboxGatewayStreamedAnswer *self)
{
  return self->head_written && self->unsent == 0;
}

static void
on_wrote_headers (SoupServerMessage *msg,
                  gpointer           user_data)
{
  SandboxGatewayStreamedAnswer *self = user_data;

  self->head_written = TRUE;
  if (self->cutting && is_flushed (self))
    cut_now (self);
}

static void
on_wrote_body_data (SoupServerMessage *msg,
                    guint              size,
                    gpointer           user_data)
{
  SandboxGatewayStreamedAnswer *self = user_data;

  self->unsent -= MIN ((guint64) size, self->unsent);
  if (self->cutting)
    {
      if (is_flushed (self))
        cut_now (self);
      return;
    }
  if (self->upstream_paused && self->unsent <= BACKLOG_LOW)
    {
      self->upstream_paused = FALSE;
      /* libcurl may hand the bytes it held back over right here. */
      curl_easy_pause (self->easy, CURLPAUSE_CONT);
    }
}

/* Sends the answer's head: @status, @content_type (none if NULL), and a
 * chunked body to come. */
void
sandbox_gateway_streamed_answer_begin (SandboxGatewayStreamedAnswer *self,
                                       guint                         status,
                                       const char                   *content_type)
{
  SoupMessageHeaders *headers = soup_server_message_get_response_headers (self->msg);

  self->begun = TRUE;
  self->status = status;
  soup_server_message_set_status (self->msg, status, NULL);
  if (content_type != NULL)
    soup_message_headers_replace (headers, "Content-Type", content_type);
  soup_message_headers_set_encoding (headers, SOUP_ENCODING_CHUNKED);
  /* Written chunks are let go of, or the whole stream would stay in memory. */
  soup_message_body_set_accumulate (soup_server_message_get_response_body (self->msg), FALSE);
  self->wrote_headers_id = g_signal_connect (self->msg, "wrote-headers",
                                             G_CALLBACK (on_wrote_headers), self);
  self->wrote_body_data_id = g_signal_connect (self->msg, "wrote-body-data",
                                               G_CALLBACK (on_wrote_body_data), self);
  sandbox_gateway_streamed_answer_arm (self);
  soup_server_message_unpause (self->msg);
}

gboolean
sandbox_gateway_streamed_answer_has_begun (SandboxGatewayStreamedAnswer *self)
{
  return self->begun;
}

/*
 * sandbox_gateway_streamed_answer_push:
 *
 * Relays bytes of the body, as libcurl's write callback.
 *
 * Returns: @length when relayed, 0 past the byte limit (libcurl then ends
 *   the transfer), CURL_WRITEFUNC_PAUSE while too much waits to be written
 *   (libcurl keeps the bytes and hands them over again once resumed)
 */
size_t
sandbox_gateway_streamed_answer_push (SandboxGatewayStreamedAnswer *self,
                                      const char                   *data,
                                      size_t                        length)
{
  if (length > self->max_bytes - self->bytes)
    {
      self->stop = SANDBOX_GATEWAY_STREAM_TOO_LARGE;
      return 0;
    }
  if (self->unsent >= BACKLOG_HIGH)
    {
      self->upstream_paused = TRUE;
      return CURL_WRITEFUNC_PAUSE;
    }
  if (length == 0)
    return 0;

  soup_message_body_append (soup_server_message_get_response_body (self->msg),
                            SOUP_MEMORY_COPY, data, length);
  self->bytes += length;
  self->unsent += length;
  self->idle_deadline_us = g_get_monotonic_time () + (gint64) self->idle_timeout_ms * 1000;
  sandbox_gateway_streamed_answer_arm (self);
  soup_server_message_unpause (self->msg);
  return length;
}

SandboxGatewayStreamStop
sandbox_gateway_streamed_answer_get_stop (SandboxGatewayStreamedAnswer *self)
{
  return self->stop;
}

guint64
sandbox_gateway_streamed_answer_get_limit (SandboxGatewayStreamedAnswer *self)
{
  return self->max_bytes;
}

guint64
sandbox_gateway_streamed_answer_get_bytes (SandboxGatewayStreamedAnswer *self)
{
  return self->bytes;
}

guint
sandbox_gateway_streamed_answer_get_status (SandboxGatewayStreamedAnswer *self)
{
  return self->status;
}

/* The upstream's answer ended: the last chunk goes out. */
void
sandbox_gateway_streamed_answer_finish (SandboxGatewayStreamedAnswer *self)
{
  g_clear_signal_handler (&self->wrote_headers_id, self->msg);
  g_clear_signal_handler (&self->wrote_body_data_id, self->msg);
  soup_message_body_complete (soup_server_message_get_response_body (self->msg));
  soup_server_message_unpause (self->msg);
}

/* The connection is shut first, so that libsoup's write of the body's end
 * fails and the guest never reads a last chunk. */
static void
cut_now (SandboxGatewayStreamedAnswer *self)
{
  self->cutting = FALSE;
  g_clear_signal_handler (&self->wrote_headers_id, self->msg);
  g_clear_signal_handler (&self->wrote_body_data_id, self->msg);
  sandbox_gateway_connection_drop (self->connection);
  soup_message_body_complete (soup_server_message_get_response_body (self->msg));
  soup_server_message_unpause (self->msg);
}

/*
 * sandbox_gateway_streamed_answer_cut:
 *
 * The stream stops short. The head and what was relayed already are written
 * first, so the guest gets every byte up to the cut; a guest that does not
 * read them is dropped at the answer's own deadline, which the caller arms.
 */
void
sandbox_gateway_streamed_answer_cut (SandboxGatewayStreamedAnswer *self)
{
  if (is_flushed (self))
    cut_now (self);
  else
    self->cutting = TRUE;
}
