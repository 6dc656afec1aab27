/* sandbox-session-gate-private.h — what sandbox_process_complete() tells the gate
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-session-gate.h"

G_BEGIN_DECLS

void sandbox_session_gate_release   (SandboxSessionGate *self,
                                     SandboxProcess     *process);
void sandbox_session_gate_completed (SandboxSessionGate *self);

G_END_DECLS
