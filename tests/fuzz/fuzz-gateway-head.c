/* fuzz-gateway-head.c — the gateway's request-framing scanner and header checks, on bytes alone
 *
 * The first input byte picks the size of the reads (1 to 64 bytes); the rest
 * is what a guest sends on one connection. The bytes go through the scanner
 * (gateway/sandbox-gateway-framing.c) as the gateway's input stream feeds
 * it; each head it lets through is parsed by libsoup's
 * soup_headers_parse_request() and checked by
 * sandbox_gateway_http_check_head(), and the body's framing is taken from
 * the parsed headers, as the gateway does on "got-headers".
 *
 * Properties:
 * - the outcome (heads seen, refusal, and without one the bytes taken) is
 *   the same whether the bytes come in one read or in many small ones;
 * - a head let through ends in LF and is at most 64 KiB; a head refusal is
 *   414 or 431, a body refusal 400, always with a reason;
 * - the header checks accept a head only with exactly one Host header, and
 *   refuse with 400 and a reason otherwise.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#include <libsoup/soup.h>

#include "sandbox-gateway-framing-private.h"
#include "sandbox-gateway-http-private.h"

typedef struct
{
  gsize taken;
  guint heads;
  guint status;
  const char *reason;
  SandboxGatewayFramingState state;
} Outcome;

/* How the body after @head is framed, as the gateway tells the scanner
 * (body_of() in sandbox-gateway-connection.c); FALSE when libsoup would not
 * parse the head (it answers 400 and the connection ends). */
static gboolean
body_after (const char         *head,
            gsize               length,
            SandboxGatewayBody *body,
            guint64            *body_length)
{
  g_autoptr(SoupMessageHeaders) headers = soup_message_headers_new (SOUP_MESSAGE_HEADERS_REQUEST);
  SandboxGatewayRefusal refusal = { 0 };
  const char *host = NULL;

  if (length > G_MAXINT ||
      soup_headers_parse_request (head, (int) length, headers, NULL, NULL, NULL) != SOUP_STATUS_OK)
    return FALSE;

  if (sandbox_gateway_http_check_head (headers, &host, &refusal))
    {
      FUZZ_CHECK (host != NULL);
      FUZZ_CHECK (soup_message_headers_get_list (headers, "Host") != NULL);
    }
  else
    {
      FUZZ_CHECK (refusal.status == SOUP_STATUS_BAD_REQUEST);
      FUZZ_CHECK (refusal.decision == SANDBOX_GATEWAY_DECISION_BAD_REQUEST);
      FUZZ_CHECK (refusal.reason != NULL);
    }

  *body_length = 0;
  switch (soup_message_headers_get_encoding (headers))
    {
    case SOUP_ENCODING_NONE:
      *body = SANDBOX_GATEWAY_BODY_NONE;
      break;
    case SOUP_ENCODING_CONTENT_LENGTH:
      *body = SANDBOX_GATEWAY_BODY_LENGTH;
      *body_length = (guint64) soup_message_headers_get_content_length (headers);
      break;
    case SOUP_ENCODING_CHUNKED:
      *body = SANDBOX_GATEWAY_BODY_CHUNKED;
      break;
    default:
      *body = SANDBOX_GATEWAY_BODY_UNKNOWN;
      break;
    }

  return TRUE;
}

static void
run (const char *data,
     gsize       size,
     gsize       piece,
     Outcome    *outcome)
{
  SandboxGatewayFraming framing;
  gsize done = 0;

  *outcome = (Outcome) { 0 };
  sandbox_gateway_framing_init (&framing);

  while (done < size)
    {
      SandboxGatewayFramingRefusal refusal = { 0, NULL };
      gsize n = MIN (piece, size - done);
      gsize taken;
      SandboxGatewayBody body;
      guint64 body_length;
      gsize head_start;

      taken = sandbox_gateway_framing_follow (&framing, data + done, n, &refusal);
      if (refusal.reason != NULL)
        {
          FUZZ_CHECK (taken == 0);
          outcome->status = refusal.status;
          outcome->reason = refusal.reason;
          if (framing.state == SANDBOX_GATEWAY_FRAMING_HEAD)
            FUZZ_CHECK (refusal.status == 414 || refusal.status == 431);
          else
            FUZZ_CHECK (refusal.status == 400);
          break;
        }
      FUZZ_CHECK (taken <= n);
      done += taken;

      if (framing.state != SANDBOX_GATEWAY_FRAMING_AWAIT)
        {
          FUZZ_CHECK (taken == n);
          continue;
        }

      /* A head ended: at its LF, within the limit. */
      outcome->heads++;
      FUZZ_CHECK (framing.head_bytes > 0 && framing.head_bytes <= done);
      FUZZ_CHECK (framing.head_bytes <= SANDBOX_GATEWAY_MAX_HEAD_BYTES);
      FUZZ_CHECK (data[done - 1] == '\n');
      head_start = done - framing.head_bytes;
      if (!body_after (data + head_start, done - head_start, &body, &body_length))
        break;
      FUZZ_CHECK (sandbox_gateway_framing_begin_body (&framing, body, body_length));
    }

  outcome->taken = done;
  outcome->state = framing.state;
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_common_init ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  Outcome whole, pieces;
  gsize piece;

  if (size < 1)
    return 0;

  piece = 1 + data[0] % 64;
  run ((const char *) data + 1, size - 1, size, &whole);
  run ((const char *) data + 1, size - 1, piece, &pieces);

  /* Bytes of a refused read are not taken, and a read may hold more than
   * the refused request: only without a refusal are all reads taken. */
  if (whole.reason == NULL)
    FUZZ_CHECK (whole.taken == pieces.taken);
  FUZZ_CHECK (whole.heads == pieces.heads);
  FUZZ_CHECK (whole.status == pieces.status);
  FUZZ_CHECK (g_strcmp0 (whole.reason, pieces.reason) == 0);
  FUZZ_CHECK (whole.state == pieces.state);

  return 0;
}
