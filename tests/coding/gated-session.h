/* gated-session.h — a test session whose file I/O waits for cancellation
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sandbox.h>

G_BEGIN_DECLS

/* Which operations of the session block until their cancellable is
 * cancelled (and then fail with G_IO_ERROR_CANCELLED). */
typedef enum
{
  GATE_READ = 1 << 0,
  GATE_WRITE = 1 << 1,
  GATE_LIST = 1 << 2,
} GateOps;

typedef struct _Gate Gate;

/* A handle over a session with one file, "file.txt" = @contents, whose
 * operations in @blocking wait in the gate. The handle's coding binding
 * lists directories (through the gate when GATE_LIST) and spawns nothing. */
SandboxHandle *gated_handle_new       (const char *contents,
                                       GateOps     blocking,
                                       Gate      **gate);

/* Blocks until an operation has entered the gate (any thread), up to 30 s. */
void           gate_wait_entered      (Gate       *gate);
guint          gate_get_entered       (Gate       *gate);
/* How many writes reached the session (blocked ones included). */
guint          gate_get_writes        (Gate       *gate);

G_END_DECLS
