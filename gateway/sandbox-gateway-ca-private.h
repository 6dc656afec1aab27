/* sandbox-gateway-ca-private.h — the certificate authority the gateway ends guests' TLS with
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _SandboxGatewayCa SandboxGatewayCa;

SandboxGatewayCa *sandbox_gateway_ca_open      (const char        *directory,
                                                GError           **error);
SandboxGatewayCa *sandbox_gateway_ca_ref       (SandboxGatewayCa  *self);
void              sandbox_gateway_ca_unref     (SandboxGatewayCa  *self);
const char       *sandbox_gateway_ca_get_file  (SandboxGatewayCa  *self);
GTlsCertificate  *sandbox_gateway_ca_dup_leaf  (SandboxGatewayCa  *self,
                                                const char        *hostname,
                                                GError           **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxGatewayCa, sandbox_gateway_ca_unref)

G_END_DECLS
