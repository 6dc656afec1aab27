/* sandbox-memory-worker.h — the memory driver's own worker thread
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-memory-private.h"

G_BEGIN_DECLS

GMainContext *sandbox_memory_worker_get_context (void);
void          sandbox_memory_worker_attach      (GSource *source);

G_END_DECLS
