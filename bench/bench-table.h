/* bench-table.h — the results table of sandbox-bench
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every section adds its rows here, whichever file it lives in; the table
 * is printed (markdown) once all have run.
 */

#pragma once

#include <glib.h>

#include "bench-common.h"

void   add_row      (const char *name,
                     char       *value,
                     char       *floor,
                     char       *ratio,
                     const char *target,
                     gboolean    judged,
                     gboolean    met);
void   set_row_cpu  (char       *cpu);
char  *format_time  (Samples    *s);
void   print_table  (void);
guint  count_missed (void);
