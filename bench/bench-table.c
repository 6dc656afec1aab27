/* bench-table.c — the results table of sandbox-bench
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "bench-table.h"

typedef struct
{
  char *name;
  char *value;     /* the library's figure (median, p95) */
  char *floor;     /* the floor's figure, or "" */
  char *ratio;
  char *target;
  char *cpu;       /* CPU per operation (bench-cpu.h), or "" */
  gboolean met;
  gboolean judged; /* FALSE for informational rows */
} Row;

static GPtrArray *rows;   /* Row, in the order added */

static void
row_free (Row *row)
{
  g_free (row->name);
  g_free (row->value);
  g_free (row->floor);
  g_free (row->ratio);
  g_free (row->target);
  g_free (row->cpu);
  g_free (row);
}

void
add_row (const char *name,
         char       *value,
         char       *floor,
         char       *ratio,
         const char *target,
         gboolean    judged,
         gboolean    met)
{
  Row *row = g_new0 (Row, 1);

  if (rows == NULL)
    rows = g_ptr_array_new_with_free_func ((GDestroyNotify) row_free);
  row->name = g_strdup (name);
  row->value = value;
  row->floor = floor != NULL ? floor : g_strdup ("");
  row->ratio = ratio != NULL ? ratio : g_strdup ("");
  row->target = g_strdup (target != NULL ? target : "");
  row->cpu = g_strdup ("");
  row->judged = judged;
  row->met = met;
  g_ptr_array_add (rows, row);

  g_printerr ("  %-44s %-26s %-26s %-10s %s %s\n", row->name, row->value, row->floor, row->ratio,
              row->target, judged ? (met ? "MET" : "MISSED") : "");
}

/* Gives the row added last its CPU figure (see bench-cpu.h), measured in
 * the same rounds as its wall time. */
void
set_row_cpu (char *cpu)
{
  Row *row;

  g_return_if_fail (rows != NULL && rows->len > 0);
  row = g_ptr_array_index (rows, rows->len - 1);
  g_free (row->cpu);
  row->cpu = cpu;
  g_printerr ("  %-44s CPU per op, median: %s\n", "", cpu);
}

char *
format_time (Samples *s)
{
  double median = samples_median (s), p95 = samples_p95 (s);

  if (median >= 1000)
    return g_strdup_printf ("%.2f ms (p95 %.2f)", median / 1000, p95 / 1000);
  return g_strdup_printf ("%.1f us (p95 %.1f)", median, p95);
}

void
print_table (void)
{
  g_print ("\n| benchmark | libsandbox median (p95) | floor median (p95) | ratio "
           "| CPU per op, median: libsandbox / floor (ratio) | target | |\n");
  g_print ("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (guint i = 0; rows != NULL && i < rows->len; i++)
    {
      Row *row = g_ptr_array_index (rows, i);

      g_print ("| %s | %s | %s | %s | %s | %s | %s |\n", row->name, row->value, row->floor,
               row->ratio, row->cpu, row->target, row->judged ? (row->met ? "met" : "**missed**") : "");
    }
}

/* Judged rows whose target was missed. */
guint
count_missed (void)
{
  guint missed = 0;

  for (guint i = 0; rows != NULL && i < rows->len; i++)
    {
      Row *row = g_ptr_array_index (rows, i);

      if (row->judged && !row->met)
        missed++;
    }
  return missed;
}
