/* sandbox-process-private.h — what the session and its gate ask of a process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-command.h"
#include "sandbox-idle-clock-private.h"
#include "sandbox-process.h"
#include "sandbox-session-gate.h"

G_BEGIN_DECLS

void sandbox_process_set_gate (SandboxProcess     *self,
                               SandboxSessionGate *gate);
void sandbox_process_kill     (SandboxProcess     *self);

/* sandbox-process-wait.c, for the coding tools' exec_command and write_stdin. */
GCancellable *sandbox_process_dup_ended (SandboxProcess *self);

/* sandbox-process-background.c, for the session's background commands. */
/* Kills the command once, recording @reason (nullable) as its failure
 * unless one came first. Never called with the process's lock held. */
void sandbox_process_request_kill    (SandboxProcess     *self,
                                      const GError       *reason);
void sandbox_process_make_background (SandboxProcess     *self,
                                      const char         *id,
                                      SandboxCommand     *command,
                                      gsize               capacity,
                                      SandboxIdleClock   *clock);

G_END_DECLS
