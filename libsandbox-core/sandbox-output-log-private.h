/* sandbox-output-log-private.h — a bounded log of a command's output: its head and its tail
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The first half of the capacity keeps the first bytes ever written, the
 * second half the last ones (a ring); what falls between is dropped and
 * counted. Every byte has a position: how many bytes came before it. Not
 * thread-safe: its owner locks.
 */
typedef struct
{
  guint8 *head;
  gsize head_capacity;
  gsize head_length;
  guint8 *tail;            /* a ring of tail_capacity bytes */
  gsize tail_capacity;
  gsize tail_start;        /* the ring's oldest byte */
  gsize tail_length;
  guint64 total;           /* bytes ever appended */
} SandboxOutputLog;

void    sandbox_output_log_init    (SandboxOutputLog *log,
                                    gsize             capacity);
void    sandbox_output_log_clear   (SandboxOutputLog *log);
void    sandbox_output_log_append  (SandboxOutputLog *log,
                                    const guint8     *data,
                                    gsize             length);
GBytes *sandbox_output_log_read    (SandboxOutputLog *log,
                                    guint64           from,
                                    guint64          *next,
                                    guint64          *skipped);
GBytes *sandbox_output_log_dup_all (SandboxOutputLog *log);
guint64 sandbox_output_log_dropped (SandboxOutputLog *log);

G_END_DECLS
