/* test-output-log.c — a background command's bounded output log
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Against a model (every byte written, kept in full): whatever is written
 * in whatever chunks, the head holds the first bytes, the tail the last,
 * reading from 0 and then from each next gives every kept byte once, in
 * order, with the gap reported exactly once and equal to what was dropped.
 */

#include <string.h>

#include "sandbox-output-log-private.h"

/* Writes @total bytes (a pattern) in chunks of @chunk into a log of
 * @capacity and checks every read against what was written. */
static void
check_log (gsize capacity,
           gsize total,
           gsize chunk)
{
  SandboxOutputLog log;
  g_autoptr(GByteArray) written = g_byte_array_new ();
  g_autoptr(GByteArray) read_back = g_byte_array_new ();
  guint64 position = 0, skipped_total = 0;
  gsize head, tail;
  guint reads = 0;

  sandbox_output_log_init (&log, capacity);
  for (gsize done = 0; done < total;)
    {
      gsize n = MIN (chunk, total - done);
      g_autofree guint8 *data = g_malloc (MAX (n, 1));

      for (gsize i = 0; i < n; i++)
        data[i] = (guint8) ((done + i) * 7 + 3);
      sandbox_output_log_append (&log, data, n);
      g_byte_array_append (written, data, n);
      done += n;
    }

  head = MIN (total, capacity / 2);
  tail = MIN (total - head, capacity - capacity / 2);
  g_assert_cmpuint (sandbox_output_log_dropped (&log), ==, total - head - tail);

  for (;;)
    {
      guint64 skipped = 0, next = 0;
      g_autoptr(GBytes) bytes = sandbox_output_log_read (&log, position, &next, &skipped);
      gsize size = g_bytes_get_size (bytes);

      g_assert_cmpuint (reads++, <, 3);
      skipped_total += skipped;
      if (size > 0)
        g_assert_cmpmem (g_bytes_get_data (bytes, NULL), size,
                         written->data + position + skipped, size);
      g_byte_array_append (read_back, g_bytes_get_data (bytes, NULL), size);
      g_assert_cmpuint (next, ==, position + skipped + size);
      if (next == position)
        break;
      position = next;
    }
  g_assert_cmpuint (position, ==, total);
  g_assert_cmpuint (skipped_total, ==, total - head - tail);
  g_assert_cmpuint (read_back->len, ==, head + tail);

  {
    g_autoptr(GBytes) all = sandbox_output_log_dup_all (&log);

    g_assert_cmpmem (g_bytes_get_data (all, NULL), g_bytes_get_size (all),
                     read_back->data, read_back->len);
  }
  sandbox_output_log_clear (&log);
}

static void
test_output_log (void)
{
  const gsize capacities[] = { 2, 3, 16, 17, 4096 };
  const gsize totals[] = { 0, 1, 7, 8, 9, 16, 17, 100, 10000 };
  const gsize chunks[] = { 1, 3, 8, 9, 5000 };

  for (gsize c = 0; c < G_N_ELEMENTS (capacities); c++)
    for (gsize t = 0; t < G_N_ELEMENTS (totals); t++)
      for (gsize k = 0; k < G_N_ELEMENTS (chunks); k++)
        check_log (capacities[c], totals[t], chunks[k]);
}

/* Reading from past the end, or from inside the dropped middle. */
static void
test_output_log_positions (void)
{
  SandboxOutputLog log;
  guint8 data[100];
  guint64 next = 0, skipped = 0;
  g_autoptr(GBytes) beyond = NULL;
  g_autoptr(GBytes) middle = NULL;

  for (gsize i = 0; i < sizeof data; i++)
    data[i] = (guint8) i;
  sandbox_output_log_init (&log, 20);
  sandbox_output_log_append (&log, data, sizeof data);
  beyond = sandbox_output_log_read (&log, 1000, &next, &skipped);
  g_assert_cmpuint (g_bytes_get_size (beyond), ==, 0);
  g_assert_cmpuint (next, ==, 100);
  middle = sandbox_output_log_read (&log, 50, &next, &skipped);
  g_assert_cmpuint (skipped, ==, 40);
  g_assert_cmpuint (g_bytes_get_size (middle), ==, 10);
  g_assert_cmpuint (((const guint8 *) g_bytes_get_data (middle, NULL))[0], ==, 90);
  sandbox_output_log_clear (&log);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/output-log/against-a-model", test_output_log);
  g_test_add_func ("/output-log/positions", test_output_log_positions);

  return g_test_run ();
}
