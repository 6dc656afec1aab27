/* sandbox-gateway-sni-private.h — the server name a guest's TLS asks for
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  SANDBOX_GATEWAY_SNI_INCOMPLETE,   /* the ClientHello has not all come */
  SANDBOX_GATEWAY_SNI_READ,         /* read: the name, or none */
  SANDBOX_GATEWAY_SNI_INVALID,      /* not a ClientHello OpenSSL takes */
} SandboxGatewaySniResult;

SandboxGatewaySniResult sandbox_gateway_sni_read (const guint8  *data,
                                                  gsize          length,
                                                  char         **server_name);

G_END_DECLS
