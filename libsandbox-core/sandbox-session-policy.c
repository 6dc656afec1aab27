/* sandbox-session-policy.c — a session's network policy
 *
 * Changing it ends the session's background commands first: they run
 * under the policy they started with, which is going.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-session-private.h"

/**
 * sandbox_session_set_network_policy:
 * @self: a [class@Sandbox.Session]
 * @policy: the new policy
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Replaces the session's network policy. Background commands are ended
 * first: they run under the policy they started with, which is going. Then
 * refused with %SANDBOX_ERROR_BUSY while other commands are live, and with
 * %SANDBOX_ERROR_UNAVAILABLE when the backend can't enforce @policy.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_session_set_network_policy (SandboxSession        *self,
                                    SandboxNetworkPolicy  *policy,
                                    GCancellable          *cancellable,
                                    GError               **error)
{
  g_autoptr(GPtrArray) running = NULL;

  g_return_val_if_fail (SANDBOX_IS_SESSION (self), FALSE);
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (policy), FALSE);

  running = sandbox_background_set_running (sandbox_session_get_background_set (self));
  for (guint i = 0; i < running->len; i++)
    sandbox_process_stop (g_ptr_array_index (running, i), NULL, NULL);
  return sandbox_driver_set_network_policy (sandbox_session_driver_for_call (self), policy, cancellable, error);
}

typedef struct
{
  SandboxNetworkPolicy *policy;
  guint pending;             /* background commands still ending */
} PolicyChange;

static void
policy_change_free (PolicyChange *change)
{
  g_object_unref (change->policy);
  g_free (change);
}

static void
policy_changed_cb (GObject      *object,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  gboolean ok = sandbox_driver_set_network_policy_finish (SANDBOX_DRIVER (object), result,
                                                          &error);

  sandbox_task_return_boolean (task, ok, error);
}

/* Every background command is gone: the driver's turn. */
static void
change_policy_now (GTask *task)
{
  SandboxSession *self = g_task_get_source_object (task);
  PolicyChange *change = g_task_get_task_data (task);

  sandbox_driver_set_network_policy_async (sandbox_session_driver_for_call (self), change->policy,
                                           g_task_get_cancellable (task),
                                           policy_changed_cb, task);
}

static void
background_stopped_cb (GObject      *object,
                       GAsyncResult *result,
                       gpointer      user_data)
{
  GTask *task = user_data;
  PolicyChange *change = g_task_get_task_data (task);

  sandbox_process_stop_finish (SANDBOX_PROCESS (object), result, NULL);
  if (--change->pending == 0)
    change_policy_now (task);
}

/**
 * sandbox_session_set_network_policy_async:
 * @self: a [class@Sandbox.Session]
 * @policy: the new policy
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Replaces the session's network policy; see
 * [method@Sandbox.Session.set_network_policy].
 */
void
sandbox_session_set_network_policy_async (SandboxSession        *self,
                                          SandboxNetworkPolicy  *policy,
                                          GCancellable          *cancellable,
                                          GAsyncReadyCallback    callback,
                                          gpointer               user_data)
{
  GTask *task;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (SANDBOX_IS_NETWORK_POLICY (policy));

  g_autoptr(GPtrArray) running = NULL;
  PolicyChange *change;

  task = sandbox_session_task_new (self, cancellable, callback, user_data,
                                   sandbox_session_set_network_policy_async,
                                   "[sandbox] set network policy");
  change = g_new0 (PolicyChange, 1);
  change->policy = g_object_ref (policy);
  g_task_set_task_data (task, change, (GDestroyNotify) policy_change_free);
  running = sandbox_background_set_running (sandbox_session_get_background_set (self));
  change->pending = running->len;
  if (running->len == 0)
    {
      change_policy_now (task);
      return;
    }
  for (guint i = 0; i < running->len; i++)
    sandbox_process_stop_async (g_ptr_array_index (running, i), NULL, background_stopped_cb,
                                task);
}

/**
 * sandbox_session_set_network_policy_finish:
 * @self: a [class@Sandbox.Session]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with
 * [method@Sandbox.Session.set_network_policy_async].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_session_set_network_policy_finish (SandboxSession  *self,
                                           GAsyncResult    *result,
                                           GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
