/* sandbox-gateway-streamed-answer-private.h — an upstream's answer relayed as it arrives
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>
#include <curl/curl.h>

#include "sandbox-network-policy-private.h"
#include "sandbox-gateway-connection-private.h"

G_BEGIN_DECLS

typedef struct _SandboxGatewayStreamedAnswer SandboxGatewayStreamedAnswer;

/* Why a stream stopped before its end. */
typedef enum
{
  SANDBOX_GATEWAY_STREAM_RUNNING,
  SANDBOX_GATEWAY_STREAM_TOO_LARGE,
  SANDBOX_GATEWAY_STREAM_IDLE,
  SANDBOX_GATEWAY_STREAM_DEADLINE,
} SandboxGatewayStreamStop;

SandboxGatewayStreamedAnswer *sandbox_gateway_streamed_answer_new      (SoupServerMessage            *msg,
                                                                        SandboxGatewayConnection     *connection,
                                                                        CURL                         *easy,
                                                                        const SandboxNetworkStream   *limits,
                                                                        guint                         request_timeout_ms,
                                                                        gint64                        started_us);
void                          sandbox_gateway_streamed_answer_free     (SandboxGatewayStreamedAnswer *self);
gint64                        sandbox_gateway_streamed_answer_get_remaining_ms (SandboxGatewayStreamedAnswer *self);
void                          sandbox_gateway_streamed_answer_arm      (SandboxGatewayStreamedAnswer *self);
void                          sandbox_gateway_streamed_answer_begin    (SandboxGatewayStreamedAnswer *self,
                                                                        guint                         status,
                                                                        const char                   *content_type);
gboolean                      sandbox_gateway_streamed_answer_has_begun (SandboxGatewayStreamedAnswer *self);
size_t                        sandbox_gateway_streamed_answer_push     (SandboxGatewayStreamedAnswer *self,
                                                                        const char                   *data,
                                                                        size_t                        length);
SandboxGatewayStreamStop      sandbox_gateway_streamed_answer_check_deadline (SandboxGatewayStreamedAnswer *self);
SandboxGatewayStreamStop      sandbox_gateway_streamed_answer_get_stop (SandboxGatewayStreamedAnswer *self);
guint64                       sandbox_gateway_streamed_answer_get_limit (SandboxGatewayStreamedAnswer *self);
guint64                       sandbox_gateway_streamed_answer_get_bytes (SandboxGatewayStreamedAnswer *self);
guint                         sandbox_gateway_streamed_answer_get_status (SandboxGatewayStreamedAnswer *self);
void                          sandbox_gateway_streamed_answer_finish   (SandboxGatewayStreamedAnswer *self);
void                          sandbox_gateway_streamed_answer_cut      (SandboxGatewayStreamedAnswer *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxGatewayStreamedAnswer, sandbox_gateway_streamed_answer_free)

G_END_DECLS
