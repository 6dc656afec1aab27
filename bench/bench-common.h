/* bench-common.h — samples, medians and the results table of sandbox-bench
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>
#include <time.h>

static inline double
bench_now_us (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

/* A set of samples (microseconds, or any unit). */
typedef struct
{
  GArray *values;
} Samples;

static inline Samples *
samples_new (void)
{
  Samples *s = g_new0 (Samples, 1);

  s->values = g_array_new (FALSE, FALSE, sizeof (double));
  return s;
}

static inline void
samples_free (Samples *s)
{
  g_array_unref (s->values);
  g_free (s);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Samples, samples_free)

static inline void
samples_add (Samples *s,
             double   value)
{
  g_array_append_val (s->values, value);
}

static inline int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y ? 1 : 0;
}

/* The q-quantile, nearest-rank on the sorted samples. */
static inline double
samples_quantile (Samples *s,
                  double   q)
{
  g_autoptr(GArray) sorted = NULL;
  guint index;

  if (s->values->len == 0)
    return 0;

  sorted = g_array_copy (s->values);
  g_array_sort (sorted, compare_doubles);
  if (q == 0.5 && sorted->len % 2 == 0)
    return (g_array_index (sorted, double, sorted->len / 2 - 1) +
            g_array_index (sorted, double, sorted->len / 2)) / 2;
  index = (guint) (q * (sorted->len - 1) + 0.5);
  return g_array_index (sorted, double, MIN (index, sorted->len - 1));
}

static inline double samples_median (Samples *s) { return samples_quantile (s, 0.5); }
static inline double samples_p95 (Samples *s) { return samples_quantile (s, 0.95); }
