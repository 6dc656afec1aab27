/* sandbox-gateway-event-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_COMPILATION
# error "This is a private header."
#endif

#include "sandbox-gateway-event.h"

G_BEGIN_DECLS

/* Reasons are static strings; host, method and path are copied. */
SandboxGatewayEvent *sandbox_gateway_event_new (const char             *host,
                                                const char             *method,
                                                const char             *path,
                                                SandboxGatewayDecision  decision,
                                                const char             *reason,
                                                guint                   status,
                                                guint                   upstream_status,
                                                guint64                 bytes_sent,
                                                guint64                 bytes_received,
                                                gint64                  duration_us);

G_END_DECLS
