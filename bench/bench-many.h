/* bench-many.h — ten thousand sessions in one process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

void bench_many (const char *state_root,
                 guint       n);

G_END_DECLS
