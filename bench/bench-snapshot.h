/* bench-snapshot.h — snapshots, forks and restores of layered sessions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

void bench_snapshot (const char *state_root,
                     gboolean    quick);

G_END_DECLS
