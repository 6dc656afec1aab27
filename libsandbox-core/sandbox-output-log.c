/* sandbox-output-log.c — a bounded log of a command's output: its head and its tail
 *
 * A background command may write for hours; what an agent wants of it is
 * how it started (a server's banner, the first error) and what it says
 * now. So the log keeps both ends and counts what it dropped between,
 * rather than killing the command at a cap as a one-shot command's output
 * does.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-output-log-private.h"

void
sandbox_output_log_init (SandboxOutputLog *log,
                         gsize             capacity)
{
  memset (log, 0, sizeof *log);
  capacity = MAX (capacity, 2);
  log->head_capacity = capacity / 2;
  log->tail_capacity = capacity - log->head_capacity;
  log->head = g_malloc (log->head_capacity);
  log->tail = g_malloc (log->tail_capacity);
}

void
sandbox_output_log_clear (SandboxOutputLog *log)
{
  g_clear_pointer (&log->head, g_free);
  g_clear_pointer (&log->tail, g_free);
}

/* Appends to the ring, overwriting its oldest bytes once it is full. */
static void
tail_append (SandboxOutputLog *log,
             const guint8     *data,
             gsize             length)
{
  if (length >= log->tail_capacity)
    {
      memcpy (log->tail, data + length - log->tail_capacity, log->tail_capacity);
      log->tail_start = 0;
      log->tail_length = log->tail_capacity;
      return;
    }
  for (gsize done = 0; done < length;)
    {
      gsize end = (log->tail_start + log->tail_length) % log->tail_capacity;
      gsize chunk = MIN (length - done, log->tail_capacity - end);

      memcpy (log->tail + end, data + done, chunk);
      done += chunk;
      log->tail_length += chunk;
      if (log->tail_length > log->tail_capacity)
        {
          log->tail_start = (log->tail_start + log->tail_length - log->tail_capacity) %
                            log->tail_capacity;
          log->tail_length = log->tail_capacity;
        }
    }
}

void
sandbox_output_log_append (SandboxOutputLog *log,
                           const guint8     *data,
                           gsize             length)
{
  gsize to_head = MIN (length, log->head_capacity - log->head_length);

  /* An empty buffer's data may be NULL, which memcpy() must not get. */
  if (length == 0)
    return;
  memcpy (log->head + log->head_length, data, to_head);
  log->head_length += to_head;
  if (length > to_head)
    tail_append (log, data + to_head, length - to_head);
  log->total += length;
}

/* The tail's bytes from position @from (within it) to its end. */
static GBytes *
tail_read (SandboxOutputLog *log,
           guint64           from)
{
  guint64 tail_begin = log->total - log->tail_length;
  gsize offset = (gsize) (from - tail_begin);
  gsize length = log->tail_length - offset;
  guint8 *copy = g_malloc (MAX (length, 1));

  for (gsize done = 0; done < length;)
    {
      gsize index = (log->tail_start + offset + done) % log->tail_capacity;
      gsize chunk = MIN (length - done, log->tail_capacity - index);

      memcpy (copy + done, log->tail + index, chunk);
      done += chunk;
    }
  return g_bytes_new_take (copy, length);
}

/*
 * sandbox_output_log_read:
 * @log: a log
 * @from: the position to read from
 * @next: (out): where the next read starts
 * @skipped: (out): how many bytes from @from on are no longer kept
 *
 * The bytes kept from @from on, up to where they stop being contiguous:
 * a read in the head ends at its end, and the next one reports the gap.
 *
 * Returns: (transfer full): the bytes, possibly none
 */
GBytes *
sandbox_output_log_read (SandboxOutputLog *log,
                         guint64           from,
                         guint64          *next,
                         guint64          *skipped)
{
  guint64 tail_begin = log->total - log->tail_length;

  *skipped = 0;
  if (from < log->head_length)
    {
      *next = log->head_length;
      return g_bytes_new (log->head + from, log->head_length - (gsize) from);
    }
  if (from >= log->total)
    {
      *next = log->total;
      return g_bytes_new (NULL, 0);
    }
  if (from < tail_begin)
    {
      *skipped = tail_begin - from;
      from = tail_begin;
    }
  *next = log->total;
  return tail_read (log, from);
}

/* Everything kept, head then tail. */
GBytes *
sandbox_output_log_dup_all (SandboxOutputLog *log)
{
  g_autoptr(GByteArray) all = g_byte_array_sized_new (log->head_length + log->tail_length);
  g_autoptr(GBytes) tail = NULL;

  g_byte_array_append (all, log->head, log->head_length);
  if (log->tail_length > 0)
    {
      tail = tail_read (log, log->total - log->tail_length);
      g_byte_array_append (all, g_bytes_get_data (tail, NULL), g_bytes_get_size (tail));
    }
  return g_byte_array_free_to_bytes (g_steal_pointer (&all));
}

guint64
sandbox_output_log_dropped (SandboxOutputLog *log)
{
  return log->total - log->head_length - log->tail_length;
}
