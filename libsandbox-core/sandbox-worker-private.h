/* sandbox-worker-private.h — the library's own long-lived worker thread
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

GMainContext *sandbox_worker_get_context (void);
void          sandbox_worker_attach      (GSource *source);

G_END_DECLS
