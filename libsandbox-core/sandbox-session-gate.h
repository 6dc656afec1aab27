/* sandbox-session-gate.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_DRIVER_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox-backend-driver.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-network-policy.h"
#include "sandbox-process.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_SESSION_GATE (sandbox_session_gate_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxSessionGate, sandbox_session_gate, SANDBOX, SESSION_GATE, GObject)

/**
 * SandboxSessionGateApplyFunc:
 * @policy: the network policy about to become the session's
 * @user_data: the data given to [method@Sandbox.SessionGate.set_policy]
 * @error: return location for a #GError
 *
 * Makes the driver enforce @policy, or refuses it. Called with the gate's
 * lock held, so no command is admitted meanwhile: it must not call back
 * into the gate.
 *
 * Returns: %TRUE if @policy is now enforced, %FALSE with @error set
 */
typedef gboolean (*SandboxSessionGateApplyFunc) (SandboxNetworkPolicy  *policy,
                                                 gpointer               user_data,
                                                 GError               **error);

SANDBOX_AVAILABLE_IN_ALL
SandboxSessionGate   *sandbox_session_gate_new             (guint                         max_concurrent_commands,
                                                            SandboxNetworkPolicy         *policy);
SANDBOX_AVAILABLE_IN_ALL
gboolean              sandbox_session_gate_check_active    (SandboxSessionGate           *self,
                                                            GCancellable                 *cancellable,
                                                            GError                      **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean              sandbox_session_gate_is_stopped      (SandboxSessionGate           *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxNetworkPolicy *sandbox_session_gate_dup_policy      (SandboxSessionGate           *self,
                                                            guint64                      *revision);
SANDBOX_AVAILABLE_IN_ALL
gboolean              sandbox_session_gate_admit           (SandboxSessionGate           *self,
                                                            SandboxProcess               *process,
                                                            GError                      **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean              sandbox_session_gate_admit_prepared  (SandboxSessionGate           *self,
                                                            SandboxProcess               *process,
                                                            guint64                       revision,
                                                            GError                      **error);
SANDBOX_AVAILABLE_IN_ALL
void                  sandbox_session_gate_withdraw        (SandboxSessionGate           *self,
                                                            SandboxProcess               *process);
SANDBOX_AVAILABLE_IN_ALL
guint                 sandbox_session_gate_get_n_live      (SandboxSessionGate           *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean              sandbox_session_gate_set_policy      (SandboxSessionGate           *self,
                                                            SandboxNetworkPolicy         *policy,
                                                            SandboxSessionGateApplyFunc   apply,
                                                            gpointer                      user_data,
                                                            GCancellable                 *cancellable,
                                                            GError                      **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean              sandbox_session_gate_run_quiet       (SandboxSessionGate           *self,
                                                            const char                   *what,
                                                            SandboxSessionGateApplyFunc   run,
                                                            gpointer                      user_data,
                                                            GCancellable                 *cancellable,
                                                            GError                      **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean              sandbox_session_gate_stop            (SandboxSessionGate           *self,
                                                            GCancellable                 *cancellable,
                                                            GError                      **error);

G_END_DECLS
