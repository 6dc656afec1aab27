/* bench-runtime.h — sessions on a runtime against sessions on the host's /usr
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

void bench_runtime (const char *state_root,
                    gboolean    quick);

G_END_DECLS
