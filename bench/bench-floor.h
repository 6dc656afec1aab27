/* bench-floor.h — raw bwrap with the driver's argument list
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

gboolean bench_floor_init (gboolean             seccomp,
                           GError             **error);
int      bench_floor_run  (const char          *workspace,
                           const char * const  *argv_command,
                           GBytes              *stdin_data,
                           GByteArray          *output);
