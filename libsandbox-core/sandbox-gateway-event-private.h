/* sandbox-gateway-event-private.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-gateway-event.h"

G_BEGIN_DECLS

/* What an audit event records, as the gateway fills it in: each field named,
 * unset ones zero (NULL strings are reported as ""). The reason is a static
 * string; host, method and path are copied. */
typedef struct
{
  const char *host;
  const char *method;
  const char *path;
  SandboxGatewayArrival arrival;
  SandboxGatewayDecision decision;
  const char *reason;
  guint status;
  guint upstream_status;
  guint64 bytes_sent;
  guint64 bytes_received;
  gint64 duration_us;
} SandboxGatewayAuditRecord;

SandboxGatewayEvent *sandbox_gateway_event_new (const SandboxGatewayAuditRecord *record);
void                 sandbox_gateway_event_set_session_id (SandboxGatewayEvent *self,
                                                           const char          *session_id);

G_END_DECLS
