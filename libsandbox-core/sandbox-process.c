/* sandbox-process.c — a running command and its limits: the object
 *
 * This file holds the object, its kill and how its output and result reach
 * the owner context; what drivers report is in sandbox-process-report.c,
 * waiting and stopping in sandbox-process-wait.c, a streamed standard
 * input in sandbox-process-stdin.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-command.h"
#include "sandbox-error.h"
#include "sandbox-log-private.h"
#include "sandbox-process-private.h"
#include "sandbox-signal-context-private.h"
#include "sandbox-process-state-private.h"

/**
 * SandboxProcess:
 *
 * A command running in a sandbox.
 *
 * The base class owns everything every backend must do the same way: the
 * deadline (%SANDBOX_ERROR_LIMIT "Sandbox command deadline exceeded"), the cap
 * on combined stdout and stderr (%SANDBOX_ERROR_LIMIT "Sandbox output limit
 * exceeded"), cancellation through the #GCancellable given at spawn time
 * (%G_IO_ERROR_CANCELLED), stop, and the final [class@Sandbox.Result]. Drivers
 * subclass it, implement [struct@Sandbox.ProcessClass].kill, feed output with
 * [method@Sandbox.Process.push_output] and report the end with
 * [method@Sandbox.Process.complete].
 *
 * Output is delivered live through [signal@Sandbox.Process::stdout-data] and
 * [signal@Sandbox.Process::stderr-data], emitted in the thread-default main context of
 * the thread that spawned the command, always before the wait completes.
 */

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

void
sandbox_process_output_event_free (OutputEvent *event)
{
  g_bytes_unref (event->data);
  g_free (event);
}

static void
sandbox_process_finalize (GObject *object)
{
  SandboxProcess *self = SANDBOX_PROCESS (object);
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);

  g_queue_clear_full (&priv->pending_output, (GDestroyNotify) sandbox_process_output_event_free);
  g_clear_pointer (&priv->dispatch, g_source_unref);
  g_clear_pointer (&priv->stdout_buffer, g_byte_array_unref);
  g_clear_pointer (&priv->stderr_buffer, g_byte_array_unref);
  g_clear_pointer (&priv->owner_context, g_main_context_unref);
  g_clear_pointer (&priv->waiters, g_ptr_array_unref);
  g_clear_object (&priv->ended);
  g_clear_object (&priv->cancellable);
  g_clear_object (&priv->result);
  g_clear_object (&priv->gate);
  g_clear_object (&priv->stdin_stream);
  g_clear_error (&priv->failure);
  g_clear_pointer (&priv->background_id, g_free);
  g_clear_pointer (&priv->idle_clock, sandbox_idle_clock_unref);
  g_clear_pointer (&priv->argv, g_strfreev);
  g_clear_pointer (&priv->start_time, g_date_time_unref);
  sandbox_output_log_clear (&priv->log);
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
   * The command's deadline in milliseconds, armed by [method@Sandbox.Process.start].
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
  /* The spawning caller's: this thread's, or the caller's an _async
   * spawn runs on behalf of in a worker thread. */
  priv->owner_context = sandbox_signal_context_ref ();
  priv->stdout_buffer = g_byte_array_new ();
  priv->stderr_buffer = g_byte_array_new ();
  priv->waiters = g_ptr_array_new_with_free_func (g_object_unref);
  g_queue_init (&priv->pending_output);
}

SandboxProcessPrivate *
sandbox_process_get_private (SandboxProcess *self)
{
  return sandbox_process_get_instance_private (self);
}

/**
 * sandbox_process_is_finished:
 * @self: a [class@Sandbox.Process]
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
 * @self: a [class@Sandbox.Process]
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
 * @self: a [class@Sandbox.Process]
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

/* ----- kill, and the gate that admitted the command ----- */

/* Asks the driver to kill, once. Never called with the lock held. */
void
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
 * @self: a [class@Sandbox.Process]
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
 * @self: a [class@Sandbox.Process]
 * @gate: (nullable): the gate that admitted @self, or %NULL once it took the
 *   slot back
 *
 * [method@Sandbox.Process.complete] releases @gate's admission slot.
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

/* ----- output and result delivery, on the owner context ----- */

static gboolean sandbox_process_dispatch_cb (gpointer data);

/* Called with the lock held. */
void
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

/* Output signals of a background command waiting for their context to be
 * iterated, at most: whoever spawned it may never iterate that context
 * again (a tool call's own), and its log holds the output anyway. A
 * foreground command's queue is not capped: its streamed output is all a
 * caller such as sandboxctl run or the coding shell sees, and the queue is
 * already bounded by max-output-bytes. */
#define MAX_PENDING_BACKGROUND_EVENTS 64

/* Called with the lock held: queues a stdout-data or stderr-data emission
 * of a copy of @data on the owner context. Both the driver's output
 * (sandbox-process-report.c) and a background command's log
 * (sandbox-process-background.c) go through here. */
void
sandbox_process_queue_output_locked (SandboxProcess      *self,
                                     SandboxOutputStream  stream,
                                     const guint8        *data,
                                     gsize                length)
{
  SandboxProcessPrivate *priv = sandbox_process_get_instance_private (self);
  OutputEvent *event;

  /* The oldest events go first: a re-attaching reader of a background
   * command wants the newest output announced. */
  while (priv->background
         && g_queue_get_length (&priv->pending_output) >= MAX_PENDING_BACKGROUND_EVENTS)
    sandbox_process_output_event_free (g_queue_pop_head (&priv->pending_output));
  event = g_new0 (OutputEvent, 1);
  event->stream = stream;
  event->data = g_bytes_new (data, length);
  g_queue_push_tail (&priv->pending_output, event);
  sandbox_process_schedule_dispatch_locked (self);
}

/* A blocking wait that drained the queue itself cancels the queued dispatch,
 * which would otherwise keep the process (and its session) alive until
 * somebody iterates the owner context. */
void
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
void
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
      sandbox_process_output_event_free (event);
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
