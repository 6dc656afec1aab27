/* sandbox-handle.c — a live session's owner
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend-private.h"
#include "sandbox-error.h"
#include "sandbox-handle.h"
#include "sandbox-handle-private.h"
#include "sandbox-log-private.h"
#include "sandbox-task-private.h"

/**
 * SandboxHandle:
 *
 * The owner of a live session, returned by [method@Sandbox.Backend.create].
 *
 * While a handle is live it holds the session's exclusive lease. stop() and
 * shutdown() kill live commands and keep the workspace; delete() also removes
 * the session's state and workspace, keeping templates. Stopping is
 * idempotent, and dropping the last reference to a live handle stops it.
 *
 * A backend that can save a live session's workspace (the `cluster` backend)
 * offers [method@Sandbox.Handle.checkpoint]; others report
 * %G_IO_ERROR_NOT_SUPPORTED.
 *
 * A backend that layers workspaces (`bubblewrap`) offers
 * [method@Sandbox.Handle.snapshot] and [method@Sandbox.Handle.restore]
 * (sandbox-handle-snapshot.c); others report %G_IO_ERROR_NOT_SUPPORTED.
 *
 * Backends subclass [class@Sandbox.Handle] and implement [struct@Sandbox.HandleClass].stop and
 * [struct@Sandbox.HandleClass].delete_session (and optionally
 * [struct@Sandbox.HandleClass].checkpoint). The base class stops a live handle in
 * its dispose, so a subclass's dispose must chain up *before* it releases
 * anything its stop needs.
 */

typedef struct
{
  GMutex mutex;
  SandboxSession *session;
  SandboxState *state;

  /* Stop runs once; later callers wait for it and share its outcome. */
  GCond stop_cond;
  gboolean stop_started;
  gboolean stop_done;
  GError *stop_error;

  /* One checkpoint at a time, never during a stop: a stop waits for the
   * checkpoint in progress, and no checkpoint starts once a stop has. */
  GCond checkpoint_cond;
  gboolean checkpoint_running;

  gboolean deleted;
} SandboxHandlePrivate;

G_DEFINE_TYPE_WITH_PRIVATE (SandboxHandle, sandbox_handle, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_SESSION,
  PROP_STATE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum {
  SIGNAL_GATEWAY_AUDIT,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
sandbox_handle_dispose (GObject *object)
{
  SandboxHandle *self = SANDBOX_HANDLE (object);
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);
  g_autoptr(GError) error = NULL;

  if (priv->state != NULL && !sandbox_handle_stop (self, NULL, &error))
    g_warning ("Could not stop sandbox session %s: %s",
               sandbox_state_get_session_id (priv->state), error->message);

  G_OBJECT_CLASS (sandbox_handle_parent_class)->dispose (object);
}

static void
sandbox_handle_finalize (GObject *object)
{
  SandboxHandle *self = SANDBOX_HANDLE (object);
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);

  g_clear_object (&priv->session);
  g_clear_object (&priv->state);
  g_clear_error (&priv->stop_error);
  g_mutex_clear (&priv->mutex);
  g_cond_clear (&priv->stop_cond);
  g_cond_clear (&priv->checkpoint_cond);

  G_OBJECT_CLASS (sandbox_handle_parent_class)->finalize (object);
}

static void
sandbox_handle_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  SandboxHandle *self = SANDBOX_HANDLE (object);
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_SESSION:
      g_value_set_object (value, priv->session);
      break;
    case PROP_STATE:
      g_value_set_object (value, priv->state);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_handle_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  SandboxHandle *self = SANDBOX_HANDLE (object);
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_SESSION:
      priv->session = g_value_dup_object (value);
      break;
    case PROP_STATE:
      priv->state = g_value_dup_object (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_handle_class_init (SandboxHandleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sandbox_handle_dispose;
  object_class->finalize = sandbox_handle_finalize;
  object_class->get_property = sandbox_handle_get_property;
  object_class->set_property = sandbox_handle_set_property;

  /**
   * SandboxHandle:session:
   *
   * The live session.
   */
  properties[PROP_SESSION] =
    g_param_spec_object ("session", NULL, NULL, SANDBOX_TYPE_SESSION,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxHandle:state:
   *
   * The session's reconnect descriptor.
   */
  properties[PROP_STATE] =
    g_param_spec_object ("state", NULL, NULL, SANDBOX_TYPE_STATE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SandboxHandle::gateway-audit:
   * @self: the handle
   * @event: what the session's network gateway decided about one request
   *
   * Relays the audit stream of the session's network gateway (see
   * [signal@Sandbox.Gateway::audit]): one event per request the gateway decided on —
   * host, method, path, decision and reason, statuses, byte counts and
   * duration, never a header value.
   *
   * Emitted in the thread-default main context of the caller of the call
   * that last set the session's network policy — [method@Sandbox.Backend.create]
   * (or its resume, or [method@Sandbox.Backend.recover_session]) and
   * [method@Sandbox.Session.set_network_policy], blocking or _async alike: for an
   * _async call, the context of the thread that made the call, where its
   * callback runs too, never the worker thread's. Events are delivered only
   * while that context is iterated; at most 1024 wait for it, past that the
   * oldest are dropped ([class@Sandbox.Gateway] counts them), and those still
   * waiting are freed with the session's gateway when the handle goes.
   */
  signals[SIGNAL_GATEWAY_AUDIT] =
    g_signal_new ("gateway-audit",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, SANDBOX_TYPE_GATEWAY_EVENT);
}

static void
sandbox_handle_init (SandboxHandle *self)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);

  g_mutex_init (&priv->mutex);
  g_cond_init (&priv->stop_cond);
  g_cond_init (&priv->checkpoint_cond);
}

/**
 * sandbox_handle_get_session:
 * @self: a [class@Sandbox.Handle]
 *
 * Gets the session this handle owns.
 *
 * Returns: (transfer none): the live session
 */
SandboxSession *
sandbox_handle_get_session (SandboxHandle *self)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);

  g_return_val_if_fail (SANDBOX_IS_HANDLE (self), NULL);

  return priv->session;
}

/**
 * sandbox_handle_emit_gateway_audit:
 * @self: a [class@Sandbox.Handle]
 * @event: the gateway's event
 *
 * For backends: relays one event of the session gateway's audit stream as
 * [signal@Sandbox.Handle::gateway-audit].
 */
void
sandbox_handle_emit_gateway_audit (SandboxHandle       *self,
                                   SandboxGatewayEvent *event)
{
  g_return_if_fail (SANDBOX_IS_HANDLE (self));
  g_return_if_fail (event != NULL);

  g_signal_emit (self, signals[SIGNAL_GATEWAY_AUDIT], 0, event);
}

/**
 * sandbox_handle_capture_state:
 * @self: a [class@Sandbox.Handle]
 * @error: return location for a #GError
 *
 * Returns the descriptor to persist in the host's store, to resume the session
 * later with [method@Sandbox.Backend.create]. It holds no policy and no credential.
 * After delete, fails with %SANDBOX_ERROR_STOPPED.
 *
 * Returns: (transfer full): the session's state, or %NULL with @error set
 */
SandboxState *
sandbox_handle_capture_state (SandboxHandle  *self,
                              GError        **error)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);
  SandboxState *state;
  gboolean deleted;

  g_return_val_if_fail (SANDBOX_IS_HANDLE (self), NULL);

  g_mutex_lock (&priv->mutex);
  deleted = priv->deleted;
  state = deleted ? NULL : g_object_ref (priv->state);
  g_mutex_unlock (&priv->mutex);

  if (deleted)
    sandbox_set_error_deleted (error);
  return state;
}

/**
 * sandbox_handle_set_state:
 * @self: a [class@Sandbox.Handle]
 * @state: the session's state from now on: the same backend and session id
 *
 * For backends: a restore that moved the live session onto another
 * template or snapshot (see [method@Sandbox.Handle.restore]) makes its
 * stored state name that key, and reports it here, so that
 * [method@Sandbox.Handle.capture_state] gives what a resume now needs.
 */
void
sandbox_handle_set_state (SandboxHandle *self,
                          SandboxState  *state)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);

  g_return_if_fail (SANDBOX_IS_HANDLE (self));
  g_return_if_fail (SANDBOX_IS_STATE (state));
  g_return_if_fail (g_str_equal (sandbox_state_get_session_id (state),
                                 sandbox_state_get_session_id (priv->state)));

  g_mutex_lock (&priv->mutex);
  g_set_object (&priv->state, state);
  g_mutex_unlock (&priv->mutex);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
}

/**
 * sandbox_handle_get_coding_binding:
 * @self: a [class@Sandbox.Handle]
 *
 * The host-only binding [class@Sandbox.CodingTools] builds on. It belongs to the
 * host: never serialize it, and never hand it to a model.
 *
 * Returns: (transfer none) (nullable): the session's coding binding, or
 *   %NULL when the backend offers none
 */
SandboxCodingBinding *
sandbox_handle_get_coding_binding (SandboxHandle *self)
{
  SandboxHandleClass *klass;

  g_return_val_if_fail (SANDBOX_IS_HANDLE (self), NULL);

  klass = SANDBOX_HANDLE_GET_CLASS (self);
  return klass->get_coding_binding != NULL ? klass->get_coding_binding (self) : NULL;
}

/**
 * sandbox_handle_is_stopped:
 * @self: a [class@Sandbox.Handle]
 *
 * Checks whether a stop (or delete) of the session has begun through this
 * handle.
 *
 * Returns: whether the handle has been stopped (or deleted)
 */
gboolean
sandbox_handle_is_stopped (SandboxHandle *self)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);
  gboolean stopped;

  g_return_val_if_fail (SANDBOX_IS_HANDLE (self), FALSE);

  g_mutex_lock (&priv->mutex);
  stopped = priv->stop_started;
  g_mutex_unlock (&priv->mutex);

  return stopped;
}

/**
 * sandbox_handle_is_deleted:
 * @self: a [class@Sandbox.Handle]
 *
 * Checks whether the session has been deleted through this handle.
 *
 * Returns: whether the session has been deleted through this handle
 */
gboolean
sandbox_handle_is_deleted (SandboxHandle *self)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);
  gboolean deleted;

  g_return_val_if_fail (SANDBOX_IS_HANDLE (self), FALSE);

  g_mutex_lock (&priv->mutex);
  deleted = priv->deleted;
  g_mutex_unlock (&priv->mutex);

  return deleted;
}

/**
 * sandbox_handle_stop:
 * @self: a [class@Sandbox.Handle]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Kills live commands, closes the network gateway and releases the lease;
 * the workspace stays. Idempotent: later calls wait for the first and report
 * its outcome. A checkpoint in progress ([method@Sandbox.Handle.checkpoint])
 * finishes first. Afterwards every session operation fails with
 * %SANDBOX_ERROR_STOPPED.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_handle_stop (SandboxHandle  *self,
                     GCancellable   *cancellable,
                     GError        **error)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);
  g_autoptr(GError) local_error = NULL;
  gboolean ok;

  g_return_val_if_fail (SANDBOX_IS_HANDLE (self), FALSE);

  g_mutex_lock (&priv->mutex);
  if (priv->stop_started)
    {
      while (!priv->stop_done)
        g_cond_wait (&priv->stop_cond, &priv->mutex);
      ok = priv->stop_error == NULL;
      if (!ok)
        g_propagate_error (error, g_error_copy (priv->stop_error));
      g_mutex_unlock (&priv->mutex);
      return ok;
    }
  priv->stop_started = TRUE;
  while (priv->checkpoint_running)
    g_cond_wait (&priv->checkpoint_cond, &priv->mutex);
  g_mutex_unlock (&priv->mutex);

  ok = SANDBOX_HANDLE_GET_CLASS (self)->stop (self, cancellable, &local_error);
  sandbox_log_handle_event (self, "stop", ok, &local_error);

  g_mutex_lock (&priv->mutex);
  priv->stop_done = TRUE;
  if (!ok)
    priv->stop_error = g_error_copy (local_error);
  g_cond_broadcast (&priv->stop_cond);
  g_mutex_unlock (&priv->mutex);

  if (!ok)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return ok;
}

/* Waits for the checkpoint in progress, then claims the slot unless the
 * handle is stopped or deleted. Called and returns with the mutex held. */
static gboolean
begin_checkpoint (SandboxHandlePrivate  *priv,
                  GError               **error)
{
  while (priv->checkpoint_running && !priv->stop_started)
    g_cond_wait (&priv->checkpoint_cond, &priv->mutex);
  if (priv->deleted)
    return sandbox_set_error_deleted (error);
  if (priv->stop_started)
    return sandbox_set_error_stopped (error);
  priv->checkpoint_running = TRUE;
  return TRUE;
}

/* For sandbox-handle-snapshot.c: snapshots and restores take the
 * checkpoint's slot, so that one of the three runs at a time and never
 * during a stop. */
gboolean
sandbox_handle_begin_exclusive (SandboxHandle  *self,
                                GError        **error)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);
  gboolean ok;

  g_mutex_lock (&priv->mutex);
  ok = begin_checkpoint (priv, error);
  g_mutex_unlock (&priv->mutex);
  return ok;
}

void
sandbox_handle_end_exclusive (SandboxHandle *self)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);

  g_mutex_lock (&priv->mutex);
  priv->checkpoint_running = FALSE;
  g_cond_broadcast (&priv->checkpoint_cond);
  g_mutex_unlock (&priv->mutex);
}

/**
 * sandbox_handle_checkpoint:
 * @self: a [class@Sandbox.Handle]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Saves the live session's workspace where the backend resumes sessions
 * from, without stopping it: the handle keeps the session, and its commands
 * keep running. After it returns %TRUE, a resume after this host crashes
 * sees at least the workspace as it was when the call started. Files the
 * guest writes while the call runs may be saved as they were at any moment
 * of it, a file caught mid-write included; checkpoint when the guest is
 * quiet (between commands) for a workspace that is consistent as a whole.
 *
 * Changes made after the checkpoint are lost if the host crashes; call it
 * again (periodically, or after each step of an agent) to lose less. A
 * stop checkpoints too, for backends that move sessions between hosts.
 *
 * Checkpoints run one at a time and never during a stop: a stop waits for
 * the checkpoint in progress. A stopped or deleted handle fails with
 * %SANDBOX_ERROR_STOPPED; a backend without checkpoints (bubblewrap,
 * memory) with %G_IO_ERROR_NOT_SUPPORTED. The `cluster` backend also fails
 * with %SANDBOX_ERROR_STOPPED once its host has lost its lease, publishing
 * nothing.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_handle_checkpoint (SandboxHandle  *self,
                           GCancellable   *cancellable,
                           GError        **error)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);
  SandboxHandleClass *klass;
  g_autoptr(GError) local_error = NULL;
  gboolean ok;

  g_return_val_if_fail (SANDBOX_IS_HANDLE (self), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  klass = SANDBOX_HANDLE_GET_CLASS (self);
  if (klass->checkpoint == NULL)
    return sandbox_set_error_not_supported (G_OBJECT_TYPE (self), "Checkpoints", TRUE,
                                            error);

  g_mutex_lock (&priv->mutex);
  ok = begin_checkpoint (priv, error);
  g_mutex_unlock (&priv->mutex);
  if (!ok)
    return FALSE;

  ok = klass->checkpoint (self, cancellable, &local_error);
  sandbox_log_handle_event (self, "checkpoint", ok, &local_error);

  g_mutex_lock (&priv->mutex);
  priv->checkpoint_running = FALSE;
  g_cond_broadcast (&priv->checkpoint_cond);
  g_mutex_unlock (&priv->mutex);

  if (!ok)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return ok;
}

/**
 * sandbox_handle_shutdown:
 * @self: a [class@Sandbox.Handle]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * The same as [method@Sandbox.Handle.stop].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_handle_shutdown (SandboxHandle  *self,
                         GCancellable   *cancellable,
                         GError        **error)
{
  return sandbox_handle_stop (self, cancellable, error);
}

/**
 * sandbox_handle_delete:
 * @self: a [class@Sandbox.Handle]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stops the session, then removes its state and workspace; templates are
 * kept. Fails with %SANDBOX_ERROR_BUSY when another owner attached after the
 * stop. Deleting twice is a no-op.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_handle_delete (SandboxHandle  *self,
                       GCancellable   *cancellable,
                       GError        **error)
{
  SandboxHandlePrivate *priv = sandbox_handle_get_instance_private (self);
  gboolean deleted;

  g_return_val_if_fail (SANDBOX_IS_HANDLE (self), FALSE);

  g_mutex_lock (&priv->mutex);
  deleted = priv->deleted;
  g_mutex_unlock (&priv->mutex);
  if (deleted)
    return TRUE;

  if (!sandbox_handle_stop (self, cancellable, error))
    return FALSE;

  deleted = SANDBOX_HANDLE_GET_CLASS (self)->delete_session (self, cancellable, error);
  sandbox_log_handle_event (self, "delete", deleted, error);
  if (!deleted)
    return FALSE;

  g_mutex_lock (&priv->mutex);
  priv->deleted = TRUE;
  g_mutex_unlock (&priv->mutex);

  return TRUE;
}

typedef gboolean (*HandleOperation) (SandboxHandle *, GCancellable *, GError **);

static void
sandbox_handle_operation_thread (GTask        *task,
                                 gpointer      source_object,
                                 gpointer      task_data,
                                 GCancellable *cancellable)
{
  HandleOperation operation = task_data;
  GError *error = NULL;
  gboolean ok = operation (source_object, cancellable, &error);

  sandbox_task_return_boolean (task, ok, error);
}

/**
 * sandbox_handle_stop_async:
 * @self: a [class@Sandbox.Handle]
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the session is stopped
 * @user_data: data for @callback
 *
 * Stops the session; see [method@Sandbox.Handle.stop].
 */
void
sandbox_handle_stop_async (SandboxHandle       *self,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_return_if_fail (SANDBOX_IS_HANDLE (self));

  sandbox_task_run_in_thread (self, sandbox_handle_stop, NULL, sandbox_handle_operation_thread,
                              sandbox_handle_stop_async, "[sandbox] stop", cancellable, callback,
                              user_data);
}

/**
 * sandbox_handle_stop_finish:
 * @self: a [class@Sandbox.Handle]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Handle.stop_async].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_handle_stop_finish (SandboxHandle  *self,
                            GAsyncResult   *result,
                            GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * sandbox_handle_shutdown_async:
 * @self: a [class@Sandbox.Handle]
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the session is stopped
 * @user_data: data for @callback
 *
 * The same as [method@Sandbox.Handle.stop_async].
 */
void
sandbox_handle_shutdown_async (SandboxHandle       *self,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (SANDBOX_IS_HANDLE (self));

  sandbox_task_run_in_thread (self, sandbox_handle_stop, NULL, sandbox_handle_operation_thread,
                              sandbox_handle_shutdown_async, "[sandbox] shutdown", cancellable,
                              callback, user_data);
}

/**
 * sandbox_handle_shutdown_finish:
 * @self: a [class@Sandbox.Handle]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Handle.shutdown_async].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_handle_shutdown_finish (SandboxHandle  *self,
                                GAsyncResult   *result,
                                GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * sandbox_handle_checkpoint_async:
 * @self: a [class@Sandbox.Handle]
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the checkpoint is saved
 * @user_data: data for @callback
 *
 * Checkpoints the live session; see [method@Sandbox.Handle.checkpoint].
 */
void
sandbox_handle_checkpoint_async (SandboxHandle       *self,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_return_if_fail (SANDBOX_IS_HANDLE (self));

  sandbox_task_run_in_thread (self, sandbox_handle_checkpoint, NULL,
                              sandbox_handle_operation_thread, sandbox_handle_checkpoint_async,
                              "[sandbox] checkpoint", cancellable, callback, user_data);
}

/**
 * sandbox_handle_checkpoint_finish:
 * @self: a [class@Sandbox.Handle]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Handle.checkpoint_async].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_handle_checkpoint_finish (SandboxHandle  *self,
                                  GAsyncResult   *result,
                                  GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * sandbox_handle_delete_async:
 * @self: a [class@Sandbox.Handle]
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the session is deleted
 * @user_data: data for @callback
 *
 * Deletes the session; see [method@Sandbox.Handle.delete].
 */
void
sandbox_handle_delete_async (SandboxHandle       *self,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (SANDBOX_IS_HANDLE (self));

  sandbox_task_run_in_thread (self, sandbox_handle_delete, NULL, sandbox_handle_operation_thread,
                              sandbox_handle_delete_async, "[sandbox] delete", cancellable,
                              callback, user_data);
}

/**
 * sandbox_handle_delete_finish:
 * @self: a [class@Sandbox.Handle]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Handle.delete_async].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_handle_delete_finish (SandboxHandle  *self,
                              GAsyncResult   *result,
                              GError        **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
