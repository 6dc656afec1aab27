/* bench-cpu.h — CPU time of the benchmark's whole process tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Wall time on a shared machine moves with the load; the CPU time an
 * operation costs does not (issue 36 item 5). A window measures the user +
 * system time, between its start and its stop, of this process (every
 * thread), of its children it has reaped (and theirs, as the kernel adds
 * them up at each reap: a bwrap's sandbox), and of its descendants still
 * alive (a ready sandbox, a session's keeper). Kernel threads are not
 * counted (a network namespace's teardown runs in a kworker), nor any
 * process that left the tree by being reparented to init.
 */

#pragma once

#include <glib.h>

#include "bench-common.h"

typedef struct
{
  double self_us;        /* getrusage (RUSAGE_SELF) */
  double children_us;    /* getrusage (RUSAGE_CHILDREN): the reaped ones */
  double descendants_us; /* the live descendants, read from /proc */
} BenchCpu;

typedef struct
{
  guint n_processes;     /* live descendants */
  gsize rss_bytes;       /* their resident memory, summed */
} BenchTree;

void    bench_tree_read        (BenchTree *tree);

void    bench_cpu_start        (BenchCpu *cpu);
double  bench_cpu_stop         (BenchCpu *cpu);
double  bench_cpu_process_us   (void);
char   *bench_cpu_format_pair  (Samples  *cpu,
                                Samples  *floor_cpu);
