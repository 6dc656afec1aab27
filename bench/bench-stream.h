/* bench-stream.h — a server-sent-events upstream, and time to first byte
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

guint16  bench_sse_upstream_start (guint       first_ms,
                                   guint       every_ms,
                                   guint       n_events);
gboolean bench_sse_get            (const char *socket_path,
                                   guint16     port,
                                   double     *first_byte_us,
                                   guint      *n_events);
