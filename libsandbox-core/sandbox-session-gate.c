/* sandbox-session-gate.c — what every live session refuses, admits and waits for
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-error.h"
#include "sandbox-process-private.h"
#include "sandbox-session-gate-private.h"

/**
 * SandboxSessionGate:
 *
 * The live-session rules every driver must apply the same way, in one
 * object a driver owns per live session (the base owns the policy, the
 * driver reports facts, as with [class@Sandbox.Process]):
 *
 * - the stopped state: after [method@Sandbox.SessionGate.stop] every operation is
 *   refused with %SANDBOX_ERROR_STOPPED "Sandbox session is stopped"
 *   ([method@Sandbox.SessionGate.check_active]);
 * - admission: at most `max-concurrent-commands` live commands, refused with
 *   %SANDBOX_ERROR_BUSY "Sandbox command concurrency limit reached" before
 *   anything starts ([method@Sandbox.SessionGate.admit]). The slot is released by
 *   [method@Sandbox.Process.complete] itself — a driver cannot forget it — before
 *   the command's waiters are answered, so a waiter that spawns again at once
 *   is admitted. Only a process that was admitted but never started gives its
 *   slot back by hand ([method@Sandbox.SessionGate.withdraw]);
 * - the network policy and its revision: a policy change while commands are
 *   live is refused with %SANDBOX_ERROR_BUSY "Stop live commands before
 *   changing network policy"; each accepted change bumps the revision, and a
 *   command prepared at an older revision is refused with %SANDBOX_ERROR_BUSY
 *   "Sandbox policy changed after command preparation"
 *   ([method@Sandbox.SessionGate.admit_prepared]);
 * - stop: refuse from now on, kill every live command (through
 *   [struct@Sandbox.ProcessClass].kill) and wait until each has completed, so that
 *   when stop returns every waiter has its result.
 *
 * All of it is thread-safe. A driver typically calls
 * [method@Sandbox.SessionGate.check_active] first in every file operation,
 * [method@Sandbox.SessionGate.admit] between creating its [class@Sandbox.Process] and
 * launching it, [method@Sandbox.SessionGate.set_policy] from its
 * [struct@Sandbox.DriverInterface].set_network_policy and [method@Sandbox.SessionGate.stop]
 * from its backend's stop.
 */

struct _SandboxSessionGate
{
  GObject parent_instance;

  guint max_concurrent_commands;   /* read-only after construction */

  GMutex lock;
  GCond idle;
  /* Guarded by @lock. */
  SandboxNetworkPolicy *policy;
  guint64 policy_revision;         /* bumped by every accepted policy */
  GPtrArray *live;                 /* (element-type SandboxProcess): admitted */
  guint n_ending;                  /* released, not yet completed */
  gboolean stopped;
};

G_DEFINE_FINAL_TYPE (SandboxSessionGate, sandbox_session_gate, G_TYPE_OBJECT)

static void
sandbox_session_gate_finalize (GObject *object)
{
  SandboxSessionGate *self = SANDBOX_SESSION_GATE (object);

  /* A live process holds a reference to its gate until it completes. */
  g_assert (self->live->len == 0);
  g_ptr_array_unref (self->live);
  g_clear_object (&self->policy);
  g_mutex_clear (&self->lock);
  g_cond_clear (&self->idle);

  G_OBJECT_CLASS (sandbox_session_gate_parent_class)->finalize (object);
}

static void
sandbox_session_gate_class_init (SandboxSessionGateClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_session_gate_finalize;
}

static void
sandbox_session_gate_init (SandboxSessionGate *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->idle);
  self->live = g_ptr_array_new_with_free_func (g_object_unref);
}

/**
 * sandbox_session_gate_new:
 * @max_concurrent_commands: the admission limit (at least 1)
 * @policy: the session's initial network policy, already enforced
 *
 * Creates the gate of one live session, active, with no live command and
 * @policy at revision 0.
 *
 * Returns: (transfer full): the new gate
 */
SandboxSessionGate *
sandbox_session_gate_new (guint                 max_concurrent_commands,
                          SandboxNetworkPolicy *policy)
{
  SandboxSessionGate *self;

  g_return_val_if_fail (max_concurrent_commands > 0, NULL);
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (policy), NULL);

  self = g_object_new (SANDBOX_TYPE_SESSION_GATE, NULL);
  self->max_concurrent_commands = max_concurrent_commands;
  self->policy = g_object_ref (policy);
  return self;
}

/**
 * sandbox_session_gate_check_active:
 * @self: a [class@Sandbox.SessionGate]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * The check every operation of a live session starts with.
 *
 * Returns: %TRUE if the session is not stopped and @cancellable is not
 *   cancelled; otherwise %FALSE with %G_IO_ERROR_CANCELLED or
 *   %SANDBOX_ERROR_STOPPED
 */
gboolean
sandbox_session_gate_check_active (SandboxSessionGate  *self,
                                   GCancellable        *cancellable,
                                   GError             **error)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION_GATE (self), FALSE);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  if (sandbox_session_gate_is_stopped (self))
    return sandbox_set_error_stopped (error);
  return TRUE;
}

/**
 * sandbox_session_gate_is_stopped:
 * @self: a [class@Sandbox.SessionGate]
 *
 * Tells whether the session was stopped, without setting an error (see
 * [method@Sandbox.SessionGate.check_active] for the check operations start with).
 *
 * Returns: whether [method@Sandbox.SessionGate.stop] was called
 */
gboolean
sandbox_session_gate_is_stopped (SandboxSessionGate *self)
{
  gboolean stopped;

  g_return_val_if_fail (SANDBOX_IS_SESSION_GATE (self), TRUE);

  g_mutex_lock (&self->lock);
  stopped = self->stopped;
  g_mutex_unlock (&self->lock);
  return stopped;
}

/**
 * sandbox_session_gate_dup_policy:
 * @self: a [class@Sandbox.SessionGate]
 * @revision: (out) (optional): the revision of the returned policy
 *
 * Reads the current network policy and its revision together: a driver
 * builds a command from them, then admits it with
 * [method@Sandbox.SessionGate.admit_prepared] at that revision.
 *
 * Returns: (transfer full): the current network policy
 */
SandboxNetworkPolicy *
sandbox_session_gate_dup_policy (SandboxSessionGate *self,
                                 guint64            *revision)
{
  SandboxNetworkPolicy *policy;

  g_return_val_if_fail (SANDBOX_IS_SESSION_GATE (self), NULL);

  g_mutex_lock (&self->lock);
  policy = g_object_ref (self->policy);
  if (revision != NULL)
    *revision = self->policy_revision;
  g_mutex_unlock (&self->lock);
  return policy;
}

static gboolean
admit (SandboxSessionGate  *self,
       SandboxProcess      *process,
       const guint64       *revision,
       GError             **error)
{
  gboolean admitted = FALSE;

  g_return_val_if_fail (SANDBOX_IS_SESSION_GATE (self), FALSE);
  g_return_val_if_fail (SANDBOX_IS_PROCESS (process), FALSE);

  g_mutex_lock (&self->lock);
  if (self->stopped)
    sandbox_set_error_stopped (error);
  else if (revision != NULL && *revision != self->policy_revision)
    sandbox_set_error_policy_changed (error);
  else if (self->live->len >= self->max_concurrent_commands)
    sandbox_set_error_concurrency_limit (error);
  else
    {
      g_ptr_array_add (self->live, g_object_ref (process));
      /* Lock order: the gate's, then the process's. */
      sandbox_process_set_gate (process, self);
      admitted = TRUE;
    }
  g_mutex_unlock (&self->lock);
  return admitted;
}

/**
 * sandbox_session_gate_admit:
 * @self: a [class@Sandbox.SessionGate]
 * @process: a process created but not started yet
 * @error: return location for a #GError
 *
 * Takes an admission slot for @process, or refuses before anything starts:
 * %SANDBOX_ERROR_STOPPED after stop, %SANDBOX_ERROR_BUSY "Sandbox command
 * concurrency limit reached" at the limit. The slot is released when the
 * driver calls [method@Sandbox.Process.complete] on @process (or
 * [method@Sandbox.SessionGate.withdraw] if it never starts it).
 *
 * Returns: %TRUE if @process is admitted
 */
gboolean
sandbox_session_gate_admit (SandboxSessionGate  *self,
                            SandboxProcess      *process,
                            GError             **error)
{
  return admit (self, process, NULL, error);
}

/**
 * sandbox_session_gate_admit_prepared:
 * @self: a [class@Sandbox.SessionGate]
 * @process: a process created but not started yet
 * @revision: the policy revision @process was prepared at (see
 *   [method@Sandbox.SessionGate.dup_policy])
 * @error: return location for a #GError
 *
 * Like [method@Sandbox.SessionGate.admit], and also refuses, with
 * %SANDBOX_ERROR_BUSY "Sandbox policy changed after command preparation", a
 * process set up from a network policy that has been replaced since.
 *
 * Returns: %TRUE if @process is admitted
 */
gboolean
sandbox_session_gate_admit_prepared (SandboxSessionGate  *self,
                                     SandboxProcess      *process,
                                     guint64              revision,
                                     GError             **error)
{
  return admit (self, process, &revision, error);
}

/* Removes @process from the live set, counting it as ending (its waiters
 * are not answered yet) or not. Drops the gate's reference outside the lock:
 * it may be the last one. */
static void
take_out (SandboxSessionGate *self,
          SandboxProcess     *process,
          gboolean            ending)
{
  gpointer taken = NULL;
  guint index;

  g_mutex_lock (&self->lock);
  if (g_ptr_array_find (self->live, process, &index))
    {
      taken = g_ptr_array_steal_index_fast (self->live, index);
      if (ending)
        self->n_ending++;
      else if (self->live->len == 0 && self->n_ending == 0)
        g_cond_broadcast (&self->idle);
    }
  g_mutex_unlock (&self->lock);

  g_clear_object (&taken);
}

/**
 * sandbox_session_gate_withdraw:
 * @self: a [class@Sandbox.SessionGate]
 * @process: an admitted process that will never be started
 *
 * Gives back the slot of a process the driver admitted but could not
 * launch. A started process's slot is released by [method@Sandbox.Process.complete].
 */
void
sandbox_session_gate_withdraw (SandboxSessionGate *self,
                               SandboxProcess     *process)
{
  g_return_if_fail (SANDBOX_IS_SESSION_GATE (self));
  g_return_if_fail (SANDBOX_IS_PROCESS (process));

  sandbox_process_set_gate (process, NULL);
  take_out (self, process, FALSE);
}

/**
 * sandbox_session_gate_release:
 * @self: a [class@Sandbox.SessionGate]
 * @process: an admitted process that is completing
 *
 * Called by [method@Sandbox.Process.complete] before it answers the waiters.
 */
void
sandbox_session_gate_release (SandboxSessionGate *self,
                              SandboxProcess     *process)
{
  take_out (self, process, TRUE);
}

/**
 * sandbox_session_gate_completed:
 * @self: a [class@Sandbox.SessionGate]
 *
 * Called by [method@Sandbox.Process.complete] once the process it released has
 * its result: wakes a pending stop.
 */
void
sandbox_session_gate_completed (SandboxSessionGate *self)
{
  g_mutex_lock (&self->lock);
  g_assert (self->n_ending > 0);
  self->n_ending--;
  g_cond_broadcast (&self->idle);
  g_mutex_unlock (&self->lock);
}

/**
 * sandbox_session_gate_get_n_live:
 * @self: a [class@Sandbox.SessionGate]
 *
 * Counts the admitted commands still holding a slot, for a driver's
 * assertions and for tests.
 *
 * Returns: the number of admitted commands that have not released their
 *   slot yet
 */
guint
sandbox_session_gate_get_n_live (SandboxSessionGate *self)
{
  guint n_live;

  g_return_val_if_fail (SANDBOX_IS_SESSION_GATE (self), 0);

  g_mutex_lock (&self->lock);
  n_live = self->live->len;
  g_mutex_unlock (&self->lock);
  return n_live;
}

/* With the lock held: @run (if any) when the gate is neither stopped
 * (STOPPED) nor running a command (BUSY, the policy's message). */
static gboolean
run_quiet_locked (SandboxSessionGate           *self,
                  SandboxSessionGateApplyFunc   run,
                  SandboxNetworkPolicy         *policy,
                  gpointer                      user_data,
                  GError                      **error)
{
  if (self->stopped)
    return sandbox_set_error_stopped (error);
  if (self->live->len > 0)
    return sandbox_set_error_commands_live (error);
  return run == NULL || run (policy, user_data, error);
}

/**
 * sandbox_session_gate_set_policy:
 * @self: a [class@Sandbox.SessionGate]
 * @policy: the new network policy
 * @apply: (nullable) (scope call): makes the driver enforce @policy, with the
 *   gate's lock held
 * @user_data: (closure apply): data for @apply
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Replaces the session's network policy: refused when @cancellable is
 * cancelled, after stop (%SANDBOX_ERROR_STOPPED), while commands are live
 * (%SANDBOX_ERROR_BUSY "Stop live commands before changing network
 * policy"), or by @apply. On success the revision is bumped, so commands
 * prepared before are refused at admission.
 *
 * Returns: %TRUE if @policy is the session's policy now
 */
gboolean
sandbox_session_gate_set_policy (SandboxSessionGate           *self,
                                 SandboxNetworkPolicy         *policy,
                                 SandboxSessionGateApplyFunc   apply,
                                 gpointer                      user_data,
                                 GCancellable                 *cancellable,
                                 GError                      **error)
{
  gboolean ok = FALSE;

  g_return_val_if_fail (SANDBOX_IS_SESSION_GATE (self), FALSE);
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (policy), FALSE);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  g_mutex_lock (&self->lock);
  ok = run_quiet_locked (self, apply, policy, user_data, error);
  if (ok)
    {
      g_set_object (&self->policy, policy);
      self->policy_revision++;
    }
  g_mutex_unlock (&self->lock);
  return ok;
}

/**
 * sandbox_session_gate_run_quiet:
 * @self: a [class@Sandbox.SessionGate]
 * @what: what @run does, for the refusal ("taking a snapshot")
 * @run: (scope call): the operation, run with the gate's lock held
 * @user_data: (closure run): data for @run
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs @run while no command of the session is live and none can be
 * admitted (nor a policy changed, nor the session's active check pass):
 * refused when @cancellable is cancelled, after stop
 * (%SANDBOX_ERROR_STOPPED) and while commands are live
 * (%SANDBOX_ERROR_BUSY "Stop live commands before @what"). @run gets
 * %NULL for the policy and must not call back into the gate.
 *
 * Returns: what @run returned, or %FALSE with @error set
 */
gboolean
sandbox_session_gate_run_quiet (SandboxSessionGate           *self,
                                const char                   *what,
                                SandboxSessionGateApplyFunc   run,
                                gpointer                      user_data,
                                GCancellable                 *cancellable,
                                GError                      **error)
{
  gboolean ok = FALSE;

  g_return_val_if_fail (SANDBOX_IS_SESSION_GATE (self), FALSE);
  g_return_val_if_fail (what != NULL && run != NULL, FALSE);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  g_mutex_lock (&self->lock);
  if (self->live->len > 0 && !self->stopped)
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                 "Stop live commands before %s (%u running, background ones included)",
                 what, self->live->len);
  else
    ok = run_quiet_locked (self, run, NULL, user_data, error);
  g_mutex_unlock (&self->lock);
  return ok;
}

static void
wake_on_cancel (GCancellable *cancellable,
                gpointer      data)
{
  SandboxSessionGate *self = data;

  g_mutex_lock (&self->lock);
  g_cond_broadcast (&self->idle);
  g_mutex_unlock (&self->lock);
}

/**
 * sandbox_session_gate_stop:
 * @self: a [class@Sandbox.SessionGate]
 * @cancellable: (nullable): stops the waiting (not the stop itself)
 * @error: return location for a #GError
 *
 * Stops the session: refuses everything from now on, kills every live
 * command (SIGKILL or the driver's equivalent: their waiters see status 137)
 * and waits until each one has completed. Idempotent and thread-safe; must
 * not be called from the thread that completes the commands.
 *
 * Returns: %TRUE once no command is live; %FALSE with %G_IO_ERROR_CANCELLED
 *   if @cancellable was cancelled first (the session stays stopped)
 */
gboolean
sandbox_session_gate_stop (SandboxSessionGate  *self,
                           GCancellable        *cancellable,
                           GError             **error)
{
  g_autoptr(GPtrArray) live = g_ptr_array_new_with_free_func (g_object_unref);
  gulong cancelled_id = 0;
  gboolean idle;

  g_return_val_if_fail (SANDBOX_IS_SESSION_GATE (self), FALSE);

  g_mutex_lock (&self->lock);
  self->stopped = TRUE;
  for (guint i = 0; i < self->live->len; i++)
    g_ptr_array_add (live, g_object_ref (g_ptr_array_index (self->live, i)));
  g_mutex_unlock (&self->lock);

  for (guint i = 0; i < live->len; i++)
    sandbox_process_kill (g_ptr_array_index (live, i));

  if (cancellable != NULL)
    cancelled_id = g_cancellable_connect (cancellable, G_CALLBACK (wake_on_cancel), self, NULL);

  g_mutex_lock (&self->lock);
  while ((self->live->len > 0 || self->n_ending > 0) &&
         !g_cancellable_is_cancelled (cancellable))
    g_cond_wait (&self->idle, &self->lock);
  idle = self->live->len == 0 && self->n_ending == 0;
  g_mutex_unlock (&self->lock);

  g_cancellable_disconnect (cancellable, cancelled_id);
  if (idle)
    return TRUE;
  g_cancellable_set_error_if_cancelled (cancellable, error);
  return FALSE;
}
