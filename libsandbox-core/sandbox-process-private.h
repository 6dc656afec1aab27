/* sandbox-process-private.h — what the session gate asks of a process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_COMPILATION
# error "This is a private header."
#endif

#include "sandbox-process.h"
#include "sandbox-session-gate.h"

G_BEGIN_DECLS

void sandbox_process_set_gate (SandboxProcess     *self,
                               SandboxSessionGate *gate);
void sandbox_process_kill     (SandboxProcess     *self);

G_END_DECLS
