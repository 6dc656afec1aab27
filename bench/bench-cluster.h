/* bench-cluster.h — resuming a checkpointed session on another host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "bench-common.h"

G_BEGIN_DECLS

gboolean bench_cluster_resume (const char  *state_root,
                               guint        n_files,
                               guint        rounds,
                               Samples     *local,
                               Samples     *remote,
                               GError     **error);

G_END_DECLS
