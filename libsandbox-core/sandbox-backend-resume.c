/* sandbox-backend-resume.c — resuming a saved session by its state alone
 *
 * A saved state names its template: resuming is creating with that key, so
 * the caller need not keep the key beside the state (and cannot pass a
 * different one by mistake, which create() would refuse with
 * STATE_MISMATCH).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend.h"
#include "sandbox-state.h"

/**
 * sandbox_backend_resume:
 * @self: a [iface@Sandbox.Backend]
 * @state: the saved state of the session to resume
 * @policy: the session's network policy (never stored: pass it again)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Resumes the session @state describes and takes its exclusive lease:
 * [method@Sandbox.Backend.create] with the template key the state holds.
 * Blocking.
 *
 * Returns: (transfer full): the live session's handle, or %NULL with
 *   @error set, as for [method@Sandbox.Backend.create]
 */
SandboxHandle *
sandbox_backend_resume (SandboxBackend        *self,
                        SandboxState          *state,
                        SandboxNetworkPolicy  *policy,
                        GCancellable          *cancellable,
                        GError               **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (SANDBOX_IS_STATE (state), NULL);

  return sandbox_backend_create (self, sandbox_state_get_template_key (state), state, policy,
                                 cancellable, error);
}

/**
 * sandbox_backend_resume_async:
 * @self: a [iface@Sandbox.Backend]
 * @state: the saved state of the session to resume
 * @policy: the session's network policy
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Resumes a session; see [method@Sandbox.Backend.resume].
 */
void
sandbox_backend_resume_async (SandboxBackend        *self,
                              SandboxState          *state,
                              SandboxNetworkPolicy  *policy,
                              GCancellable          *cancellable,
                              GAsyncReadyCallback    callback,
                              gpointer               user_data)
{
  g_return_if_fail (SANDBOX_IS_BACKEND (self));
  g_return_if_fail (SANDBOX_IS_STATE (state));

  sandbox_backend_create_async (self, sandbox_state_get_template_key (state), state, policy,
                                cancellable, callback, user_data);
}

/**
 * sandbox_backend_resume_finish:
 * @self: a [iface@Sandbox.Backend]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Backend.resume_async].
 *
 * Returns: (transfer full): the live session's handle, or %NULL with @error set
 */
SandboxHandle *
sandbox_backend_resume_finish (SandboxBackend  *self,
                               GAsyncResult    *result,
                               GError         **error)
{
  return sandbox_backend_create_finish (self, result, error);
}
