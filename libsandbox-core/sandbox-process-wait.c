/* sandbox-process-wait.c — waiting for a command, and stopping it
 *
 * Blocking and async waits are answered with the same result, after every
 * output signal; stop kills the command and waits until it is gone.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-process-private.h"
#include "sandbox-process-state-private.h"
#include "sandbox-task-private.h"

static void
sandbox_process_destroy_source (GSource *source)
{
  g_source_destroy (source);
  g_source_unref (source);
}

static gboolean
sandbox_process_wait_cancelled_cb (GCancellable *cancellable,
                                   gpointer      data)
{
  GTask *task = data;
  SandboxProcess *self = g_task_get_source_object (task);
  SandboxProcessPrivate *priv = sandbox_process_get_private (self);
  gboolean was_waiting;

  g_object_ref (task);
  g_mutex_lock (&priv->mutex);
  was_waiting = g_ptr_array_remove (priv->waiters, task);
  g_mutex_unlock (&priv->mutex);

  if (was_waiting)
    g_task_return_error_if_cancelled (task);
  g_object_unref (task);

  return G_SOURCE_REMOVE;
}

/**
 * sandbox_process_wait_async:
 * @self: a [class@Sandbox.Process]
 * @cancellable: (nullable): stops waiting (the command keeps running)
 * @callback: (scope async): called when the command is over
 * @user_data: data for @callback
 *
 * Waits for the command to end. Output signals are all emitted before
 * @callback runs.
 */
void
sandbox_process_wait_async (SandboxProcess      *self,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  SandboxProcessPrivate *priv = sandbox_process_get_private (self);
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SANDBOX_IS_PROCESS (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = sandbox_task_new (self, sandbox_process_wait_async, "[sandbox] process wait", cancellable,
                           callback, user_data);

  /* Cancelling stops this wait only; the command itself is not affected. */
  if (cancellable != NULL)
    {
      GSource *source = g_cancellable_source_new (cancellable);

      g_source_set_callback (source, G_SOURCE_FUNC (sandbox_process_wait_cancelled_cb),
                             task, NULL);
      g_source_attach (source, g_task_get_context (task));
      g_task_set_task_data (task, source, (GDestroyNotify) sandbox_process_destroy_source);
    }

  g_mutex_lock (&priv->mutex);
  g_ptr_array_add (priv->waiters, g_object_ref (task));
  if (priv->completed)
    sandbox_process_schedule_dispatch_locked (self);
  g_mutex_unlock (&priv->mutex);
}

/*
 * sandbox_process_dup_ended:
 * @self: a process
 *
 * A cancellable cancelled once @self completes (at once if it has). A
 * wait_async() is answered on the owner context, after the output signals,
 * which a thread that did not spawn the command may not iterate; this end
 * it waits for on a context of its own, through g_cancellable_connect().
 *
 * Returns: (transfer full): the cancellable
 */
GCancellable *
sandbox_process_dup_ended (SandboxProcess *self)
{
  SandboxProcessPrivate *priv = sandbox_process_get_private (self);
  GCancellable *ended;
  gboolean completed;

  g_mutex_lock (&priv->mutex);
  if (priv->ended == NULL)
    priv->ended = g_cancellable_new ();
  ended = g_object_ref (priv->ended);
  completed = priv->completed;
  g_mutex_unlock (&priv->mutex);

  /* Made after the completion, which found none to cancel. */
  if (completed)
    g_cancellable_cancel (ended);
  return ended;
}

/**
 * sandbox_process_wait_finish:
 * @self: a [class@Sandbox.Process]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Process.wait_async].
 *
 * Returns: (transfer full): the command's result, or %NULL with @error set
 *   (a limit, a cancellation or a driver failure)
 */
SandboxResult *
sandbox_process_wait_finish (SandboxProcess  *self,
                             GAsyncResult    *result,
                             GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
sandbox_process_wake_waiter (GCancellable *cancellable,
                             gpointer      data)
{
  SandboxProcess *self = data;
  SandboxProcessPrivate *priv = sandbox_process_get_private (self);

  g_mutex_lock (&priv->mutex);
  g_cond_broadcast (&priv->cond);
  g_mutex_unlock (&priv->mutex);
}

/**
 * sandbox_process_wait:
 * @self: a [class@Sandbox.Process]
 * @cancellable: (nullable): stops waiting (the command keeps running)
 * @error: return location for a #GError
 *
 * Blocks until the command ends. Where this thread can take the spawning
 * context, pending output signals are emitted before this returns.
 *
 * Returns: (transfer full): the command's result, or %NULL with @error set
 */
SandboxResult *
sandbox_process_wait (SandboxProcess  *self,
                      GCancellable    *cancellable,
                      GError         **error)
{
  SandboxProcessPrivate *priv = sandbox_process_get_private (self);
  gulong handler_id = 0;
  SandboxResult *result = NULL;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), NULL);

  if (cancellable != NULL)
    handler_id = g_cancellable_connect (cancellable, G_CALLBACK (sandbox_process_wake_waiter),
                                        self, NULL);

  g_mutex_lock (&priv->mutex);
  while (!priv->completed && !g_cancellable_is_cancelled (cancellable))
    g_cond_wait (&priv->cond, &priv->mutex);
  g_mutex_unlock (&priv->mutex);

  if (cancellable != NULL)
    g_cancellable_disconnect (cancellable, handler_id);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  if (g_main_context_acquire (priv->owner_context))
    {
      sandbox_process_cancel_dispatch (self);
      sandbox_process_drain (self);
      g_main_context_release (priv->owner_context);
    }

  g_mutex_lock (&priv->mutex);
  if (priv->failure != NULL)
    g_propagate_error (error, g_error_copy (priv->failure));
  else
    result = g_object_ref (priv->result);
  g_mutex_unlock (&priv->mutex);

  return result;
}

/**
 * sandbox_process_stop:
 * @self: a [class@Sandbox.Process]
 * @cancellable: (nullable): stops waiting (the kill is already sent)
 * @error: return location for a #GError
 *
 * Kills the command and everything it started, and waits until it is gone.
 * A concurrent waiter sees exit status 137 unless a failure was recorded
 * before.
 *
 * Returns: %TRUE once the command is gone
 */
gboolean
sandbox_process_stop (SandboxProcess  *self,
                      GCancellable    *cancellable,
                      GError         **error)
{
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), FALSE);

  sandbox_process_request_kill (self, NULL);
  result = sandbox_process_wait (self, cancellable, &local_error);
  if (result == NULL && g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
      && g_cancellable_is_cancelled (cancellable))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  return TRUE;
}

static void
sandbox_process_stop_wait_cb (GObject      *object,
                              GAsyncResult *result,
                              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(SandboxResult) process_result = NULL;
  g_autoptr(GError) error = NULL;

  process_result = sandbox_process_wait_finish (SANDBOX_PROCESS (object), result, &error);
  if (process_result == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED)
      && g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_boolean (task, TRUE);
}

/**
 * sandbox_process_stop_async:
 * @self: a [class@Sandbox.Process]
 * @cancellable: (nullable): stops waiting (the kill is already sent)
 * @callback: (scope async): called once the command is gone
 * @user_data: data for @callback
 *
 * Kills the command and everything it started; see [method@Sandbox.Process.stop].
 */
void
sandbox_process_stop_async (SandboxProcess      *self,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (SANDBOX_IS_PROCESS (self));

  task = sandbox_task_new (self, sandbox_process_stop_async, "[sandbox] process stop", cancellable,
                           callback, user_data);

  sandbox_process_request_kill (self, NULL);
  sandbox_process_wait_async (self, cancellable, sandbox_process_stop_wait_cb, task);
}

/**
 * sandbox_process_stop_finish:
 * @self: a [class@Sandbox.Process]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Process.stop_async].
 *
 * Returns: %TRUE once the command is gone
 */
gboolean
sandbox_process_stop_finish (SandboxProcess  *self,
                             GAsyncResult    *result,
                             GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
