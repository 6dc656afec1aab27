/* sandbox-gateway-loop-private.h — the one thread that serves every gateway
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

GMainContext *sandbox_gateway_loop_get_context (void);
gboolean      sandbox_gateway_loop_is_current  (void);
void          sandbox_gateway_loop_invoke_sync (GSourceFunc func,
                                                gpointer    data);

G_END_DECLS
