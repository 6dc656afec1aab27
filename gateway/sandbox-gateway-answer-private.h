/* sandbox-gateway-answer-private.h — the answers the gateway makes itself
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <libsoup/soup.h>

#include "sandbox-gateway-event.h"

G_BEGIN_DECLS

/* The Sandbox-Error of an upstream that could not be reached or failed. */
#define SANDBOX_GATEWAY_UPSTREAM_FAILED "SANDBOX_UPSTREAM_FAILED"

const char *sandbox_gateway_answer_error_for   (SandboxGatewayDecision  decision);
void        sandbox_gateway_answer             (SoupServerMessage      *msg,
                                                guint                   status,
                                                const char             *sandbox_error,
                                                gboolean                close_connection);
void        sandbox_gateway_answer_early       (SoupServerMessage      *msg,
                                                guint                   status,
                                                const char             *sandbox_error,
                                                gboolean                close_connection);
void        sandbox_gateway_answer_directly    (GSocket                *socket,
                                                guint                   status);
void        sandbox_gateway_answer_relay       (SoupServerMessage      *msg,
                                                guint                   status,
                                                const char             *content_type,
                                                gpointer                body,
                                                gsize                   length);
gboolean    sandbox_gateway_answer_is_own      (SoupServerMessage      *msg);
gboolean    sandbox_gateway_request_has_body   (SoupServerMessage      *msg);

G_END_DECLS
