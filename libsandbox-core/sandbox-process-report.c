/* sandbox-process-report.c — what a driver reports about its command
 *
 * The driver starts the process, pushes its output, aborts it or completes
 * it; the base class applies the deadline, the output cap and the spawn's
 * cancellable here, the same way for every backend.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-error.h"
#include "sandbox-process-private.h"
#include "sandbox-result-private.h"
#include "sandbox-process-state-private.h"
#include "sandbox-session-gate-private.h"
#include "sandbox-worker-private.h"

static void
sandbox_process_fail_with (SandboxProcess *self,
                           GQuark          domain,
                           int             code,
                           const char     *message)
{
  g_autoptr(GError) error = g_error_new_literal (domain, code, message);

  sandbox_process_request_kill (self, error);
}

typedef struct
{
  GCancellable *cancellable;
  gulong handler_id;
} Disconnect;

static gboolean
sandbox_process_disconnect_cb (gpointer data)
{
  Disconnect *disconnect = data;

  g_cancellable_disconnect (disconnect->cancellable, disconnect->handler_id);
  g_object_unref (disconnect->cancellable);
  g_free (disconnect);
  return G_SOURCE_REMOVE;
}

static void
sandbox_process_disconnect_later (GCancellable *cancellable,
                                  gulong        handler_id)
{
  Disconnect *disconnect = g_new0 (Disconnect, 1);
  GSource *source = g_idle_source_new ();

  disconnect->cancellable = cancellable;   /* takes the reference */
  disconnect->handler_id = handler_id;
  g_source_set_callback (source, sandbox_process_disconnect_cb, disconnect, NULL);
  g_source_set_static_name (source, "[sandbox] disconnect cancellable");
  sandbox_worker_attach (source);
  g_source_unref (source);
}

static gboolean
sandbox_process_deadline_cb (gpointer data)
{
  SandboxProcess *self = data;

  sandbox_process_fail_with (self, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                             "Sandbox command deadline exceeded");
  return G_SOURCE_REMOVE;
}

static void
sandbox_process_cancelled_cb (GCancellable *cancellable,
                              gpointer      data)
{
  sandbox_process_fail_with (SANDBOX_PROCESS (data), G_IO_ERROR, G_IO_ERROR_CANCELLED,
                             "Sandbox command was cancelled");
}

/**
 * sandbox_process_start:
 * @self: a [class@Sandbox.Process]
 * @cancellable: (nullable): the spawn's #GCancellable; cancelling it kills
 *   the command
 *
 * For drivers: call once the command is launched. Arms the deadline on the
 * library's worker thread and connects @cancellable. The process keeps itself
 * alive until [method@Sandbox.Process.complete] is called.
 */
void
sandbox_process_start (SandboxProcess *self,
                       GCancellable   *cancellable)
{
  SandboxProcessPrivate *priv = sandbox_process_get_private (self);
  GSource *deadline;

  g_return_if_fail (SANDBOX_IS_PROCESS (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  g_mutex_lock (&priv->mutex);
  if (priv->started)
    {
      g_mutex_unlock (&priv->mutex);
      g_critical ("sandbox_process_start() called twice");
      return;
    }
  priv->started = TRUE;
  g_object_ref (self);   /* dropped when the process completes */

  /* Attached before the lock is released: a driver may complete the
   * process from another thread at any moment after this, and complete()
   * must find the deadline attached to destroy it. The source holds its own
   * reference, so a deadline already dispatching never sees a finalized
   * process. */
  deadline = g_timeout_source_new (priv->timeout_ms);
  g_source_set_callback (deadline, sandbox_process_deadline_cb, g_object_ref (self),
                         g_object_unref);
  g_source_set_static_name (deadline, "[sandbox] command deadline");
  priv->deadline = deadline;
  sandbox_worker_attach (deadline);
  g_mutex_unlock (&priv->mutex);

  if (cancellable != NULL)
    {
      /* The handler holds a reference until it is disconnected. */
      gulong id = g_cancellable_connect (cancellable,
                                         G_CALLBACK (sandbox_process_cancelled_cb),
                                         g_object_ref (self), g_object_unref);

      gboolean completed;

      g_mutex_lock (&priv->mutex);
      completed = priv->completed;
      if (!completed)
        {
          priv->cancellable = g_object_ref (cancellable);
          priv->cancelled_id = id;
        }
      g_mutex_unlock (&priv->mutex);

      /* Completed meanwhile: complete() found nothing to disconnect. */
      if (completed && id != 0)
        sandbox_process_disconnect_later (g_object_ref (cancellable), id);
    }
}

/**
 * sandbox_process_push_output:
 * @self: a [class@Sandbox.Process]
 * @stream: which stream @data came from
 * @data: (array length=length): the bytes
 * @length: the number of bytes in @data
 *
 * For drivers: records output as it arrives. Thread-safe. When the combined
 * output would exceed [property@Sandbox.Process:max-output-bytes], the part of the chunk
 * that still fits is kept (and emitted), the rest is dropped,
 * %SANDBOX_ERROR_LIMIT is recorded and the command is killed. A background
 * command's output goes to its bounded log instead, which keeps its head
 * and its tail, and never ends the command.
 *
 * Returns: %FALSE once the output cap has been exceeded
 */
gboolean
sandbox_process_push_output (SandboxProcess      *self,
                             SandboxOutputStream  stream,
                             const guint8        *data,
                             gsize                length)
{
  SandboxProcessPrivate *priv = sandbox_process_get_private (self);
  gboolean over_cap;
  gsize room;
  gsize kept;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  if (length == 0)
    return TRUE;

  g_mutex_lock (&priv->mutex);
  if (priv->background)
    {
      sandbox_process_log_output_locked (self, stream, data, length);
      g_mutex_unlock (&priv->mutex);
      return TRUE;
    }
  room = priv->max_output_bytes - MIN (priv->output_bytes, priv->max_output_bytes);
  over_cap = priv->output_bytes > priv->max_output_bytes || length > room;
  /* Keep what still fits: the head of the output up to the cap is what a
   * caller streaming it (say, an agent's output artifact) can still use. */
  kept = over_cap ? (priv->output_bytes > priv->max_output_bytes ? 0 : room) : length;
  if (kept > 0 && !priv->completed)
    {
      priv->output_bytes += kept;
      g_byte_array_append (stream == SANDBOX_OUTPUT_STDOUT ? priv->stdout_buffer
                                                           : priv->stderr_buffer,
                           data, kept);
      sandbox_process_queue_output_locked (self, stream, data, kept);
    }
  if (over_cap)
    priv->output_bytes = priv->max_output_bytes + 1;
  g_mutex_unlock (&priv->mutex);

  if (over_cap)
    sandbox_process_fail_with (self, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                               "Sandbox output limit exceeded");

  return !over_cap;
}

/**
 * sandbox_process_abort:
 * @self: a [class@Sandbox.Process]
 * @error: (transfer none): why the command failed (copied)
 *
 * For drivers: records @error as the command's failure (the first recorded
 * failure wins) and kills the command. Thread-safe.
 */
void
sandbox_process_abort (SandboxProcess *self,
                       GError         *error)
{
  g_return_if_fail (SANDBOX_IS_PROCESS (self));
  g_return_if_fail (error != NULL);

  sandbox_process_request_kill (self, error);
}

/* Completes with @exit_status, or as a command that could not be executed
 * when @exec_errno is not 0 (the core, not the driver, then gives it its
 * status). */
static void
sandbox_process_complete_with (SandboxProcess *self,
                               int             exit_status,
                               int             exec_errno)
{
  SandboxProcessPrivate *priv = sandbox_process_get_private (self);
  g_autoptr(SandboxSessionGate) gate = NULL;
  g_autoptr(GCancellable) ended = NULL;
  GCancellable *cancellable;
  gulong handler_id;
  GSource *deadline;
  gboolean started;

  /* The slot first: a waiter that spawns again as soon as it has the
   * result is admitted. */
  g_mutex_lock (&priv->mutex);
  gate = g_steal_pointer (&priv->gate);
  g_mutex_unlock (&priv->mutex);
  if (gate != NULL)
    sandbox_session_gate_release (gate, self);

  g_mutex_lock (&priv->mutex);
  if (priv->completed)
    {
      g_mutex_unlock (&priv->mutex);
      g_critical ("sandbox_process_complete() called twice");
      return;
    }
  priv->completed = TRUE;
  if (exec_errno != 0)
    exit_status = sandbox_result_exec_failure_status (exec_errno);
  priv->exit_status = exit_status;
  if (priv->failure == NULL)
    {
      /* A background command's output is its log, both streams as they came. */
      g_autoptr(GBytes) out = priv->background
                              ? sandbox_output_log_dup_all (&priv->log)
                              : g_bytes_new (priv->stdout_buffer->data, priv->stdout_buffer->len);
      g_autoptr(GBytes) err = g_bytes_new (priv->stderr_buffer->data, priv->stderr_buffer->len);

      priv->result = exec_errno != 0 ? sandbox_result_new_exec_failure (exec_errno, out, err)
                                     : sandbox_result_new (exit_status, out, err);
    }
  cancellable = g_steal_pointer (&priv->cancellable);
  handler_id = priv->cancelled_id;
  priv->cancelled_id = 0;
  deadline = g_steal_pointer (&priv->deadline);
  started = priv->started;
  if (priv->ended != NULL)
    ended = g_object_ref (priv->ended);
  sandbox_process_schedule_dispatch_locked (self);
  g_cond_broadcast (&priv->cond);
  g_mutex_unlock (&priv->mutex);

  /* Outside the lock: cancelling runs its handlers here. */
  if (ended != NULL)
    g_cancellable_cancel (ended);

  if (deadline != NULL)
    {
      g_source_destroy (deadline);
      g_source_unref (deadline);
    }
  if (cancellable != NULL)
    sandbox_process_disconnect_later (cancellable, handler_id);
  /* The result is there: a stop waiting for the session to be idle may
   * return. */
  if (gate != NULL)
    sandbox_session_gate_completed (gate);
  if (started)
    g_object_unref (self);
}

/**
 * sandbox_process_complete:
 * @self: a [class@Sandbox.Process]
 * @exit_status: the exit code, or 128 plus the number of the signal that
 *   ended the command
 *
 * For drivers: reports that the command is over — its whole process tree is
 * gone and its output drained. Call exactly once (this or
 * [method@Sandbox.Process.complete_exec_failure]), from any thread. The
 * admission slot of a process a [class@Sandbox.SessionGate] admitted is released
 * here, before the waiters are answered.
 */
void
sandbox_process_complete (SandboxProcess *self,
                          int             exit_status)
{
  g_return_if_fail (SANDBOX_IS_PROCESS (self));

  sandbox_process_complete_with (self, exit_status, 0);
}

/**
 * sandbox_process_complete_exec_failure:
 * @self: a [class@Sandbox.Process]
 * @exec_errno: the `errno` of the guest's failed `execve()`, not 0
 *
 * For drivers: reports that the command is over because its executable
 * could not be executed, as [method@Sandbox.Process.complete] does
 * otherwise. The driver must know this from the `execve()` itself, never
 * from what the command wrote. The result has
 * [property@Sandbox.Result:exec-errno] set and the exit status a POSIX
 * shell gives (127 when the file is not there, 126 when it cannot be
 * executed).
 */
void
sandbox_process_complete_exec_failure (SandboxProcess *self,
                                       int             exec_errno)
{
  g_return_if_fail (SANDBOX_IS_PROCESS (self));
  g_return_if_fail (exec_errno > 0);

  sandbox_process_complete_with (self, 0, exec_errno);
}
