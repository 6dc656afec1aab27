/* bench-cpu.c — CPU time of the benchmark's whole process tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench-cpu.h"

#include <stdio.h>

static double
timeval_us (const struct timeval *tv)
{
  return (double) tv->tv_sec * 1e6 + (double) tv->tv_usec;
}

static double
rusage_us (int who)
{
  struct rusage usage;

  if (getrusage (who, &usage) != 0)
    return 0;
  return timeval_us (&usage.ru_utime) + timeval_us (&usage.ru_stime);
}

/* A live process's own CPU, to the nanosecond: the first field of each
 * of its threads' schedstat (the scheduler's sum_exec_runtime). Its
 * /proc/PID/stat utime and stime would do too, but in clock ticks
 * (10 ms here), coarser than a command. */
static double
threads_cpu_us (const char *pid)
{
  g_autofree char *tasks = g_strdup_printf ("/proc/%s/task", pid);
  g_autoptr(GDir) dir = g_dir_open (tasks, 0, NULL);
  const char *tid;
  double sum = 0;

  while (dir != NULL && (tid = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_strdup_printf ("%s/%s/schedstat", tasks, tid);
      g_autofree char *text = NULL;

      if (g_file_get_contents (path, &text, NULL, NULL))
        sum += g_ascii_strtod (text, NULL) / 1e3;
    }
  return sum;
}

/* What a live process's reaped children cost: cutime + cstime of its
 * /proc/PID/stat (fields 16 and 17), in clock ticks — the only place the
 * kernel shows it for another process. Mostly 0 here: bwrap reaps its
 * sandbox's init when the sandbox ends and exits right after, and then its
 * own reap moves the whole figure, exactly, into our RUSAGE_CHILDREN. */
static double
reaped_children_cpu_us (const char *pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%s/stat", pid);
  g_autofree char *text = NULL;
  g_auto(GStrv) fields = NULL;
  const char *after_name;

  if (!g_file_get_contents (path, &text, NULL, NULL) ||
      (after_name = strrchr (text, ')')) == NULL)
    return 0;
  /* fields[0] is field 3 (the state), so field N is fields[N - 3]. */
  fields = g_strsplit (after_name + 2, " ", 0);
  if (g_strv_length (fields) < 15)
    return 0;
  return (g_ascii_strtod (fields[13], NULL) + g_ascii_strtod (fields[14], NULL)) * 1e6 /
         sysconf (_SC_CLK_TCK);
}

typedef void (*DescendantFunc) (const char *pid, gpointer data);

/* Calls @func on each of @pid's live descendants, following each of its
 * threads' children lists (a child belongs to the thread that forked
 * it). */
static void
for_each_descendant (const char     *pid,
                     DescendantFunc  func,
                     gpointer        data)
{
  g_autofree char *tasks = g_strdup_printf ("/proc/%s/task", pid);
  g_autoptr(GDir) dir = g_dir_open (tasks, 0, NULL);
  const char *tid;

  while (dir != NULL && (tid = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_strdup_printf ("%s/%s/children", tasks, tid);
      g_autofree char *text = NULL;
      g_auto(GStrv) children = NULL;

      if (!g_file_get_contents (path, &text, NULL, NULL))
        continue;
      children = g_strsplit (g_strstrip (text), " ", 0);
      for (guint i = 0; children[i] != NULL; i++)
        {
          if (children[i][0] == '\0')
            continue;
          func (children[i], data);
          for_each_descendant (children[i], func, data);
        }
    }
}

static void
add_cpu (const char *pid,
         gpointer    data)
{
  *(double *) data += threads_cpu_us (pid) + reaped_children_cpu_us (pid);
}

static double
descendants_cpu_us (void)
{
  g_autofree char *self = g_strdup_printf ("%d", (int) getpid ());
  double sum = 0;

  for_each_descendant (self, add_cpu, &sum);
  return sum;
}

static void
add_process (const char *pid,
             gpointer    data)
{
  BenchTree *tree = data;
  g_autofree char *path = g_strdup_printf ("/proc/%s/statm", pid);
  g_autofree char *statm = NULL;
  unsigned long size = 0, resident = 0;

  tree->n_processes++;
  if (g_file_get_contents (path, &statm, NULL, NULL))
    sscanf (statm, "%lu %lu", &size, &resident);
  tree->rss_bytes += resident * (gsize) sysconf (_SC_PAGESIZE);
}

/**
 * bench_tree_read:
 * @tree: (out): the live descendants of this process
 *
 * How many processes this process's tree holds besides itself, and their
 * resident memory summed (shared pages counted in each).
 */
void
bench_tree_read (BenchTree *tree)
{
  g_autofree char *self = g_strdup_printf ("%d", (int) getpid ());

  *tree = (BenchTree) { 0, 0 };
  for_each_descendant (self, add_process, tree);
}

/* The walk through /proc costs this process CPU of its own, which is not
 * the operation's: it runs before the start's RUSAGE_SELF reading and
 * after the stop's, outside the window. */
void
bench_cpu_start (BenchCpu *cpu)
{
  cpu->descendants_us = descendants_cpu_us ();
  cpu->children_us = rusage_us (RUSAGE_CHILDREN);
  cpu->self_us = rusage_us (RUSAGE_SELF);
}

/* Returns: the microseconds of CPU the tree spent since
 * bench_cpu_start (@cpu). */
double
bench_cpu_stop (BenchCpu *cpu)
{
  double self_us = rusage_us (RUSAGE_SELF);
  double children_us = rusage_us (RUSAGE_CHILDREN);
  double descendants_us = descendants_cpu_us ();

  return (self_us - cpu->self_us) + (children_us - cpu->children_us) +
         (descendants_us - cpu->descendants_us);
}

/* This process's CPU (every thread), for work that starts no process (a
 * gateway request): two system calls, no walk through /proc. */
double
bench_cpu_process_us (void)
{
  return rusage_us (RUSAGE_SELF);
}

/* "LIB us / FLOOR us (RATIO)" of the medians, for the table's CPU column.
 * @floor_cpu is %NULL where the floor's CPU cannot be counted: bwrap with
 * its own init (the reference's argv) exits without waiting for that
 * init, which is reparented to the system's init and reaped there, so
 * RUSAGE_CHILDREN never sees the sandbox's side (6.6 ms counted of the
 * 12.8 ms `perf stat` counts here). */
char *
bench_cpu_format_pair (Samples *cpu,
                       Samples *floor_cpu)
{
  if (floor_cpu == NULL)
    return g_strdup_printf ("%.0f us / n/a", samples_median (cpu));
  return g_strdup_printf ("%.0f us / %.0f us (%.2fx)", samples_median (cpu),
                          samples_median (floor_cpu),
                          samples_median (cpu) / samples_median (floor_cpu));
}
