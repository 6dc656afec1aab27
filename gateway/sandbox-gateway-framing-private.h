/* sandbox-gateway-framing-private.h — where each request on a connection begins and ends
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* libsoup 3.2 refuses a head longer than this, after reading it; the scanner
 * stops at the same size, so that the refusal is the gateway's (and audited). */
#define SANDBOX_GATEWAY_MAX_HEAD_BYTES (64 * 1024)

/* How a request body is framed. */
typedef enum
{
  SANDBOX_GATEWAY_BODY_NONE,
  SANDBOX_GATEWAY_BODY_LENGTH,
  SANDBOX_GATEWAY_BODY_CHUNKED,
  SANDBOX_GATEWAY_BODY_UNKNOWN,
} SandboxGatewayBody;

/* Why the scanner refuses a request: the status the gateway answers (0: the
 * guest gets no answer) and the audit reason, a static string. */
typedef struct
{
  guint status;
  const char *reason;
} SandboxGatewayFramingRefusal;

/* Where the scanner is in the connection's byte stream. */
typedef enum
{
  SANDBOX_GATEWAY_FRAMING_HEAD,    /* in a request head, or before one */
  SANDBOX_GATEWAY_FRAMING_AWAIT,   /* a head ended: nothing more until its body's framing is known */
  SANDBOX_GATEWAY_FRAMING_LENGTH,  /* in a body of known length */
  SANDBOX_GATEWAY_FRAMING_CHUNKED, /* in a chunked body */
  SANDBOX_GATEWAY_FRAMING_OPAQUE,  /* past what can be followed: the connection ends with this request */
} SandboxGatewayFramingState;

/* Where the request line is, as libsoup splits it: CR and LF before it are
 * skipped, the method runs to a space or tab, the target starts after them. */
typedef enum
{
  SANDBOX_GATEWAY_LINE_LEADING,
  SANDBOX_GATEWAY_LINE_METHOD,
  SANDBOX_GATEWAY_LINE_GAP,
  SANDBOX_GATEWAY_LINE_TARGET,
} SandboxGatewayRequestLine;

/* Where a chunked body is (RFC 9112, section 7.1). */
typedef enum
{
  SANDBOX_GATEWAY_CHUNK_SIZE,      /* 1*HEXDIG */
  SANDBOX_GATEWAY_CHUNK_EXT,       /* [ chunk-ext ] */
  SANDBOX_GATEWAY_CHUNK_SIZE_LF,   /* CR seen, LF expected */
  SANDBOX_GATEWAY_CHUNK_DATA,
  SANDBOX_GATEWAY_CHUNK_DATA_CR,
  SANDBOX_GATEWAY_CHUNK_DATA_LF,
  SANDBOX_GATEWAY_CHUNK_TRAILER,   /* after the last chunk: only the final CRLF is accepted */
  SANDBOX_GATEWAY_CHUNK_FINAL_LF,
} SandboxGatewayChunkState;

/* The scanner's state for one connection; read it through the functions
 * below. Plain data: it owns nothing, and a zeroed one is not valid (use
 * sandbox_gateway_framing_init()). */
typedef struct
{
  SandboxGatewayFramingState state;
  /* SANDBOX_GATEWAY_FRAMING_HEAD */
  gsize head_bytes;          /* bytes of the current head so far */
  gsize line_bytes;          /* bytes of its current line so far */
  char line_first;           /* the first byte of that line */
  SandboxGatewayRequestLine request_line;
  gboolean request_line_ended;
  char target_first;         /* the first byte of the head's target, or NUL */
  /* SANDBOX_GATEWAY_FRAMING_LENGTH, and the data of a chunk */
  guint64 body_remaining;
  /* SANDBOX_GATEWAY_FRAMING_CHUNKED */
  SandboxGatewayChunkState chunk_state;
  gsize chunk_line_bytes;
  gboolean chunk_has_digits;
} SandboxGatewayFraming;

/* What sandbox_gateway_framing_scan_head() found at the start of a buffer. */
typedef struct
{
  gboolean complete;        /* a head ended within the buffer */
  gsize length;             /* its length, final empty line included */
  gboolean origin_form;     /* its target starts with "/" */
  SandboxGatewayFramingRefusal refusal; /* reason NULL unless refused */
} SandboxGatewayHeadScan;

void        sandbox_gateway_framing_init              (SandboxGatewayFraming        *self);
gsize       sandbox_gateway_framing_follow            (SandboxGatewayFraming        *self,
                                                       const char                   *data,
                                                       gsize                         length,
                                                       SandboxGatewayFramingRefusal *refusal);
gboolean    sandbox_gateway_framing_begin_body        (SandboxGatewayFraming        *self,
                                                       SandboxGatewayBody            body,
                                                       guint64                       length);
gboolean    sandbox_gateway_framing_target_is_origin_form (const SandboxGatewayFraming *self);
gboolean    sandbox_gateway_framing_is_in_head        (const SandboxGatewayFraming  *self);
const char *sandbox_gateway_framing_incomplete_reason (const SandboxGatewayFraming  *self);

gboolean    sandbox_gateway_framing_scan_head         (const char                   *data,
                                                       gsize                         length,
                                                       SandboxGatewayHeadScan       *scan);

G_END_DECLS
