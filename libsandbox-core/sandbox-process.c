/* sandbox-process.c — a running command and its limits
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-command.h"
#include "sandbox-enums.h"
#include "sandbox-error.h"
#include "sandbox-log-private.h"
#include "sandbox-process-private.h"
#include "sandbox-session-gate-private.h"
#include "sandbox-worker-private.h"

/**
 * SandboxProcess:
 *
 * A command running in a sandbox.
 *
 * The base class owns everything every backend must do the same way: the
 * deadline (%SANDBOX_ERROR_LIMIT "Sandbox command deadline exceeded"), the cap
 * on combined stdout and stderr (%SANDBOX_ERROR_LIMIT "Sandbox output limit
 * exceeded"), cancellation through the #GCancellable given at spawn time
 * (%G_IO_ERROR_CANCELLED), stop, and the final #SandboxResult. Drivers
 * subclass it, implement #SandboxProcessClass.kill, feed output with
 * sandbox_process_push_output() and report the end with
 * sandbox_process_complete().
 *
 * Output is delivered live through #SandboxProcess::stdout-data and
 * #SandboxProcess::stderr-data, emitted in the thread-default main context of
 * the thread that spawned the command, always before the wait completes.
 */

typedef struct
{
  SandboxOutputStream stream;
  GBytes *data;
} OutputEvent;

typedef struct
{
  GMutex mutex;
  GCond cond;

  guint timeout_ms;
  gsize max_output_bytes;

  /* Where output signals are emitted: the spawning thread's context. */
  GMainContext *owner_context;

  GByteArray *stdout_buffer;
  GByteArray *stderr_buffer;
  gsize output_bytes;

  GQueue pending_output;
  GSource *dispatch;   /* the queued output dispatch on the owner context */

  GSource *deadline;
  GCancellable *cancellable;
  gulong cancelled_id;

  GError *failure;
  int exit_status;
  SandboxResult *result;

  GPtrArray *waiters;

  SandboxSessionGate *gate;   /* holds the admission slot, if admitted */

  guint started : 1;
  guint kill_requested : 1;
  guint completed : 1;
} SandboxProcessPrivate;

G_DEFINE_TYPE_WITH_PRIVATE (SandboxProcess, sandbox_process, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_TIMEOUT_MS,
  PROP_MAX_OUTPUT_BYTES,
  N_PROPS
};

enum {
  SIGNAL_STDOUT_DATA,
  SIGNAL_STDERR_DATA,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static void
output_event_free (OutputEvent *event)
{
  g_bytes_unref (event->data);
  g_free (event);
}

static void
sandbox_process_finalize (GObject *object)
{
  SandboxProcess *self = SANDBOX_PROCESS (object);
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  g_queue_clear_full (&priv->pending_output, (GDestroyNotify) output_event_free);
  g_clear_pointer (&priv->dispatch, g_source_unref);
  g_clear_pointer (&priv->stdout_buffer, g_byte_array_unref);
  g_clear_pointer (&priv->stderr_buffer, g_byte_array_unref);
  g_clear_pointer (&priv->owner_context, g_main_context_unref);
  g_clear_pointer (&priv->waiters, g_ptr_array_unref);
  g_clear_object (&priv->cancellable);
  g_clear_object (&priv->result);
  g_clear_object (&priv->gate);
  g_clear_error (&priv->failure);
  if (priv->deadline != NULL)
    {
      g_source_destroy (priv->deadline);
      g_source_unref (priv->deadline);
    }
  g_mutex_clear (&priv->mutex);
  g_cond_clear (&priv->cond);

  G_OBJECT_CLASS (sandbox_process_parent_class)->finalize (object);
}

static void
sandbox_process_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  SandboxProcess *self = SANDBOX_PROCESS (object);
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_TIMEOUT_MS:
      g_value_set_uint (value, priv->timeout_ms);
      break;
    case PROP_MAX_OUTPUT_BYTES:
      g_value_set_uint64 (value, priv->max_output_bytes);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_process_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  SandboxProcess *self = SANDBOX_PROCESS (object);
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_TIMEOUT_MS:
      priv->timeout_ms = g_value_get_uint (value);
      break;
    case PROP_MAX_OUTPUT_BYTES:
      priv->max_output_bytes = g_value_get_uint64 (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_process_class_init (SandboxProcessClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_process_finalize;
  object_class->get_property = sandbox_process_get_property;
  object_class->set_property = sandbox_process_set_property;

  /**
   * SandboxProcess:timeout-ms:
   *
   * The command's deadline in milliseconds, armed by sandbox_process_start().
   */
  properties[PROP_TIMEOUT_MS] =
    g_param_spec_uint ("timeout-ms", NULL, NULL,
                       1, G_MAXINT32, SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxProcess:max-output-bytes:
   *
   * The cap on the command's combined stdout and stderr, in bytes.
   */
  properties[PROP_MAX_OUTPUT_BYTES] =
    g_param_spec_uint64 ("max-output-bytes", NULL, NULL,
                         1, G_MAXSIZE, SANDBOX_COMMAND_DEFAULT_MAX_OUTPUT_BYTES,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SandboxProcess::stdout-data:
   * @self: the process
   * @data: the chunk of standard output that just arrived
   *
   * Emitted as standard output arrives, in the thread-default main context
   * of the thread that spawned the command.
   */
  signals[SIGNAL_STDOUT_DATA] =
    g_signal_new ("stdout-data",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  G_STRUCT_OFFSET (SandboxProcessClass, stdout_data),
                  NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_BYTES);

  /**
   * SandboxProcess::stderr-data:
   * @self: the process
   * @data: the chunk of standard error that just arrived
   *
   * Emitted as standard error arrives, in the thread-default main context
   * of the thread that spawned the command.
   */
  signals[SIGNAL_STDERR_DATA] =
    g_signal_new ("stderr-data",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  G_STRUCT_OFFSET (SandboxProcessClass, stderr_data),
                  NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_BYTES);
}

static void
sandbox_process_init (SandboxProcess *self)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  g_mutex_init (&priv->mutex);
  g_cond_init (&priv->cond);
  priv->timeout_ms = SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS;
  priv->max_output_bytes = SANDBOX_COMMAND_DEFAULT_MAX_OUTPUT_BYTES;
  priv->owner_context = g_main_context_ref_thread_default ();
  priv->stdout_buffer = g_byte_array_new ();
  priv->stderr_buffer = g_byte_array_new ();
  priv->waiters = g_ptr_array_new_with_free_func (g_object_unref);
  g_queue_init (&priv->pending_output);
}

/* Asks the driver to kill, once. Never called with the lock held. */
static void
sandbox_process_request_kill (SandboxProcess *self,
                              const GError   *reason)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
  gboolean should_kill, recorded;

  g_mutex_lock (&priv->mutex);
  recorded = reason != NULL && priv->failure == NULL && !priv->completed;
  if (recorded)
    priv->failure = g_error_copy (reason);
  should_kill = !priv->kill_requested && !priv->completed;
  priv->kill_requested = TRUE;
  g_mutex_unlock (&priv->mutex);

  if (recorded && g_error_matches (reason, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT))
    sandbox_log_limit_kill (self, reason);

  if (should_kill && SANDBOX_PROCESS_GET_CLASS (self)->kill != NULL)
    SANDBOX_PROCESS_GET_CLASS (self)->kill (self);
}

/**
 * sandbox_process_kill:
 * @self: a #SandboxProcess
 *
 * Kills the command without recording a failure (its result is the exit
 * status the kill gives it): how a stopping session ends its commands.
 */
void
sandbox_process_kill (SandboxProcess *self)
{
  sandbox_process_request_kill (self, NULL);
}

/**
 * sandbox_process_set_gate:
 * @self: a #SandboxProcess
 * @gate: (nullable): the gate that admitted @self, or %NULL once it took the
 *   slot back
 *
 * sandbox_process_complete() releases @gate's admission slot.
 */
void
sandbox_process_set_gate (SandboxProcess     *self,
                          SandboxSessionGate *gate)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  g_mutex_lock (&priv->mutex);
  g_set_object (&priv->gate, gate);
  g_mutex_unlock (&priv->mutex);
}

static void
sandbox_process_fail_with (SandboxProcess *self,
                           GQuark          domain,
                           int             code,
                           const char     *message)
{
  g_autoptr(GError) error = g_error_new_literal (domain, code, message);

  sandbox_process_request_kill (self, error);
}

static void sandbox_process_disconnect_later (GCancellable *cancellable,
                                              gulong        handler_id);

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
 * @self: a #SandboxProcess
 * @cancellable: (nullable): the spawn's #GCancellable; cancelling it kills
 *   the command
 *
 * For drivers: call once the command is launched. Arms the deadline on the
 * library's worker thread and connects @cancellable. The process keeps itself
 * alive until sandbox_process_complete() is called.
 */
void
sandbox_process_start (SandboxProcess *self,
                       GCancellable   *cancellable)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
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

static gboolean sandbox_process_dispatch_cb (gpointer data);

/* Called with the lock held. */
static void
sandbox_process_schedule_dispatch_locked (SandboxProcess *self)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
  GSource *source;

  if (priv->dispatch != NULL)
    return;

  source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, sandbox_process_dispatch_cb, g_object_ref (self), g_object_unref);
  g_source_set_static_name (source, "[sandbox] process output");
  priv->dispatch = source;
  g_source_attach (source, priv->owner_context);
}

/* A blocking wait that drained the queue itself cancels the queued dispatch,
 * which would otherwise keep the process (and its session) alive until
 * somebody iterates the owner context. */
static void
sandbox_process_cancel_dispatch (SandboxProcess *self)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
  GSource *source;

  g_mutex_lock (&priv->mutex);
  source = g_steal_pointer (&priv->dispatch);
  g_mutex_unlock (&priv->mutex);

  if (source != NULL)
    {
      g_source_destroy (source);
      g_source_unref (source);
    }
}

/**
 * sandbox_process_push_output:
 * @self: a #SandboxProcess
 * @stream: which stream @data came from
 * @data: (array length=length): the bytes
 * @length: the number of bytes in @data
 *
 * For drivers: records output as it arrives. Thread-safe. When the combined
 * output would exceed #SandboxProcess:max-output-bytes, the part of the chunk
 * that still fits is kept (and emitted), the rest is dropped,
 * %SANDBOX_ERROR_LIMIT is recorded and the command is killed.
 *
 * Returns: %FALSE once the output cap has been exceeded
 */
gboolean
sandbox_process_push_output (SandboxProcess      *self,
                             SandboxOutputStream  stream,
                             const guint8        *data,
                             gsize                length)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
  OutputEvent *event;
  gboolean over_cap;
  gsize room;
  gsize kept;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), FALSE);
  g_return_val_if_fail (data != NULL || length == 0, FALSE);

  if (length == 0)
    return TRUE;

  g_mutex_lock (&priv->mutex);
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
      event = g_new0 (OutputEvent, 1);
      event->stream = stream;
      event->data = g_bytes_new (data, kept);
      g_queue_push_tail (&priv->pending_output, event);
      sandbox_process_schedule_dispatch_locked (self);
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
 * @self: a #SandboxProcess
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

/**
 * sandbox_process_complete:
 * @self: a #SandboxProcess
 * @exit_status: the exit code, or 128 plus the number of the signal that
 *   ended the command
 *
 * For drivers: reports that the command is over — its whole process tree is
 * gone and its output drained. Call exactly once, from any thread. The
 * admission slot of a process a #SandboxSessionGate admitted is released
 * here, before the waiters are answered.
 */
void
sandbox_process_complete (SandboxProcess *self,
                          int             exit_status)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
  g_autoptr(SandboxSessionGate) gate = NULL;
  GCancellable *cancellable;
  gulong handler_id;
  GSource *deadline;
  gboolean started;

  g_return_if_fail (SANDBOX_IS_PROCESS (self));

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
  priv->exit_status = exit_status;
  if (priv->failure == NULL)
    {
      g_autoptr(GBytes) out = g_bytes_new (priv->stdout_buffer->data, priv->stdout_buffer->len);
      g_autoptr(GBytes) err = g_bytes_new (priv->stderr_buffer->data, priv->stderr_buffer->len);

      priv->result = sandbox_result_new (exit_status, out, err);
    }
  cancellable = g_steal_pointer (&priv->cancellable);
  handler_id = priv->cancelled_id;
  priv->cancelled_id = 0;
  deadline = g_steal_pointer (&priv->deadline);
  started = priv->started;
  sandbox_process_schedule_dispatch_locked (self);
  g_cond_broadcast (&priv->cond);
  g_mutex_unlock (&priv->mutex);

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

static void
sandbox_process_destroy_source (GSource *source)
{
  g_source_destroy (source);
  g_source_unref (source);
}

static void
sandbox_process_return_to (SandboxProcess *self,
                           GTask          *task)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  if (priv->failure != NULL)
    g_task_return_error (task, g_error_copy (priv->failure));
  else
    g_task_return_pointer (task, g_object_ref (priv->result), g_object_unref);
}

/* Emits queued output and, once complete, answers waiters — in order, on the
 * owner context. */
static void
sandbox_process_drain (SandboxProcess *self)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
  g_autoptr(GPtrArray) waiters = NULL;

  for (;;)
    {
      OutputEvent *event;

      g_mutex_lock (&priv->mutex);
      event = g_queue_pop_head (&priv->pending_output);
      if (event == NULL)
        {
          if (priv->completed)
            {
              waiters = g_steal_pointer (&priv->waiters);
              priv->waiters = g_ptr_array_new_with_free_func (g_object_unref);
            }
          g_mutex_unlock (&priv->mutex);
          break;
        }
      g_mutex_unlock (&priv->mutex);

      g_signal_emit (self,
                     signals[event->stream == SANDBOX_OUTPUT_STDOUT ? SIGNAL_STDOUT_DATA
                                                                    : SIGNAL_STDERR_DATA],
                     0, event->data);
      output_event_free (event);
    }

  if (waiters != NULL)
    for (guint i = 0; i < waiters->len; i++)
      sandbox_process_return_to (self, g_ptr_array_index (waiters, i));
}

static gboolean
sandbox_process_dispatch_cb (gpointer data)
{
  SandboxProcess *self = data;
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  GSource *source;

  g_mutex_lock (&priv->mutex);
  source = g_steal_pointer (&priv->dispatch);
  g_mutex_unlock (&priv->mutex);
  g_clear_pointer (&source, g_source_unref);

  sandbox_process_drain (self);
  return G_SOURCE_REMOVE;
}

static gboolean
sandbox_process_wait_cancelled_cb (GCancellable *cancellable,
                                   gpointer      data)
{
  GTask *task = data;
  SandboxProcess *self = g_task_get_source_object (task);
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
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
 * @self: a #SandboxProcess
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
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SANDBOX_IS_PROCESS (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sandbox_process_wait_async);
  g_task_set_name (task, "[sandbox] process wait");

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

/**
 * sandbox_process_wait_finish:
 * @self: a #SandboxProcess
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with sandbox_process_wait_async().
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
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  g_mutex_lock (&priv->mutex);
  g_cond_broadcast (&priv->cond);
  g_mutex_unlock (&priv->mutex);
}

/**
 * sandbox_process_wait:
 * @self: a #SandboxProcess
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
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
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
 * @self: a #SandboxProcess
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
 * @self: a #SandboxProcess
 * @cancellable: (nullable): stops waiting (the kill is already sent)
 * @callback: (scope async): called once the command is gone
 * @user_data: data for @callback
 *
 * Kills the command and everything it started; see sandbox_process_stop().
 */
void
sandbox_process_stop_async (SandboxProcess      *self,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (SANDBOX_IS_PROCESS (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sandbox_process_stop_async);
  g_task_set_name (task, "[sandbox] process stop");

  sandbox_process_request_kill (self, NULL);
  sandbox_process_wait_async (self, cancellable, sandbox_process_stop_wait_cb, task);
}

/**
 * sandbox_process_stop_finish:
 * @self: a #SandboxProcess
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with sandbox_process_stop_async().
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

/**
 * sandbox_process_is_finished:
 * @self: a #SandboxProcess
 *
 * Checks whether the command is over, as reported by the driver.
 *
 * Returns: whether the driver reported the command over
 */
gboolean
sandbox_process_is_finished (SandboxProcess *self)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
  gboolean completed;

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), FALSE);

  g_mutex_lock (&priv->mutex);
  completed = priv->completed;
  g_mutex_unlock (&priv->mutex);

  return completed;
}

/**
 * sandbox_process_get_timeout_ms:
 * @self: a #SandboxProcess
 *
 * Gets the command's deadline in milliseconds.
 *
 * Returns: the command's deadline in milliseconds
 */
guint
sandbox_process_get_timeout_ms (SandboxProcess *self)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), 0);

  return priv->timeout_ms;
}

/**
 * sandbox_process_get_max_output_bytes:
 * @self: a #SandboxProcess
 *
 * Gets the limit on how much output the command may produce.
 *
 * Returns: the cap on combined output, in bytes
 */
gsize
sandbox_process_get_max_output_bytes (SandboxProcess *self)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  g_return_val_if_fail (SANDBOX_IS_PROCESS (self), 0);

  return priv->max_output_bytes;
}
