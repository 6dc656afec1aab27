/* test-session-gate.c — the live-session rules every driver shares
 *
 * A tiny in-test SandboxProcess subclass plays the driver's command, and the
 * test drives a SandboxSessionGate through the public API only, as an
 * out-of-tree driver does.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <sandbox-backend-driver.h>

#define TEST_TYPE_PROCESS (test_process_get_type ())
G_DECLARE_FINAL_TYPE (TestProcess, test_process, TEST, PROCESS, SandboxProcess)

struct _TestProcess
{
  SandboxProcess parent_instance;
  GMutex lock;
  GCond killed;
  int kills;                  /* guarded by @lock */
  gboolean complete_on_kill;
};

G_DEFINE_FINAL_TYPE (TestProcess, test_process, SANDBOX_TYPE_PROCESS)

static void
test_process_kill (SandboxProcess *process)
{
  TestProcess *self = TEST_PROCESS (process);

  g_mutex_lock (&self->lock);
  self->kills++;
  g_cond_broadcast (&self->killed);
  g_mutex_unlock (&self->lock);
  if (self->complete_on_kill)
    sandbox_process_complete (process, 128 + 9);
}

static void
test_process_finalize (GObject *object)
{
  TestProcess *self = TEST_PROCESS (object);

  g_mutex_clear (&self->lock);
  g_cond_clear (&self->killed);
  G_OBJECT_CLASS (test_process_parent_class)->finalize (object);
}

static void
test_process_class_init (TestProcessClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = test_process_finalize;
  SANDBOX_PROCESS_CLASS (klass)->kill = test_process_kill;
}

static void
test_process_init (TestProcess *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->killed);
  self->complete_on_kill = TRUE;
}

static int
get_kills (TestProcess *self)
{
  int kills;

  g_mutex_lock (&self->lock);
  kills = self->kills;
  g_mutex_unlock (&self->lock);
  return kills;
}

static SandboxSessionGate *
new_gate (guint max_concurrent_commands)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();

  return sandbox_session_gate_new (max_concurrent_commands, policy);
}

/* A process admitted by @gate and started, as a driver's spawn leaves it. */
static TestProcess *
spawn (SandboxSessionGate  *gate,
       GError             **error)
{
  g_autoptr(TestProcess) process = g_object_new (TEST_TYPE_PROCESS, NULL);

  if (!sandbox_session_gate_admit (gate, SANDBOX_PROCESS (process), error))
    return NULL;
  sandbox_process_start (SANDBOX_PROCESS (process), NULL);
  return g_steal_pointer (&process);
}

static void
assert_concurrency_refused (SandboxSessionGate *gate)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TestProcess) refused = spawn (gate, &error);

  g_assert_null (refused);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Sandbox command concurrency limit reached");
}

/* The slot comes back through sandbox_process_complete() alone: remove the
 * sandbox_session_gate_release() call in sandbox-process-report.c and the
 * third spawn is refused. */
static void
test_admission_released_by_completion (void)
{
  g_autoptr(SandboxSessionGate) gate = new_gate (2);
  g_autoptr(TestProcess) first = spawn (gate, NULL);
  g_autoptr(TestProcess) second = spawn (gate, NULL);
  g_autoptr(TestProcess) third = NULL;
  g_autoptr(SandboxResult) result = NULL;

  g_assert_nonnull (first);
  g_assert_nonnull (second);
  g_assert_cmpuint (sandbox_session_gate_get_n_live (gate), ==, 2);
  assert_concurrency_refused (gate);

  sandbox_process_complete (SANDBOX_PROCESS (first), 0);
  g_assert_cmpuint (sandbox_session_gate_get_n_live (gate), ==, 1);
  third = spawn (gate, NULL);
  g_assert_nonnull (third);
  assert_concurrency_refused (gate);

  sandbox_process_complete (SANDBOX_PROCESS (second), 0);
  sandbox_process_complete (SANDBOX_PROCESS (third), 0);
  g_assert_cmpuint (sandbox_session_gate_get_n_live (gate), ==, 0);
  result = sandbox_process_wait (SANDBOX_PROCESS (first), NULL, NULL);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
}

typedef struct
{
  SandboxSessionGate *gate;
  TestProcess *again;
  GError *error;
  gboolean done;
} Respawn;

static void
respawn_cb (GObject      *source,
            GAsyncResult *res,
            gpointer      data)
{
  Respawn *respawn = data;
  g_autoptr(SandboxResult) result = sandbox_process_wait_finish (SANDBOX_PROCESS (source), res,
                                                                  NULL);

  g_assert_nonnull (result);
  respawn->again = spawn (respawn->gate, &respawn->error);
  respawn->done = TRUE;
}

/* A waiter that spawns again as soon as it has its result is admitted: the
 * slot is released before the waiters are answered. Release it any later
 * (say, when the process's last reference goes: the waiter still holds it
 * here) and this spawn is refused with the concurrency limit. */
static void
test_waiter_respawns_at_once (void)
{
  g_autoptr(SandboxSessionGate) gate = new_gate (1);
  g_autoptr(TestProcess) process = spawn (gate, NULL);
  Respawn respawn = { .gate = gate };

  sandbox_process_wait_async (SANDBOX_PROCESS (process), NULL, respawn_cb, &respawn);
  sandbox_process_complete (SANDBOX_PROCESS (process), 0);
  while (!respawn.done)
    g_main_context_iteration (NULL, TRUE);

  g_assert_no_error (respawn.error);
  g_assert_nonnull (respawn.again);
  sandbox_process_complete (SANDBOX_PROCESS (respawn.again), 0);
  g_clear_object (&respawn.again);
}

/* A process admitted but never launched gives its slot back by hand. */
static void
test_withdraw_returns_the_slot (void)
{
  g_autoptr(SandboxSessionGate) gate = new_gate (1);
  g_autoptr(TestProcess) unlaunched = g_object_new (TEST_TYPE_PROCESS, NULL);
  g_autoptr(TestProcess) next = NULL;

  g_assert_true (sandbox_session_gate_admit (gate, SANDBOX_PROCESS (unlaunched), NULL));
  assert_concurrency_refused (gate);
  sandbox_session_gate_withdraw (gate, SANDBOX_PROCESS (unlaunched));
  next = spawn (gate, NULL);
  g_assert_nonnull (next);
  sandbox_process_complete (SANDBOX_PROCESS (next), 0);
}

static gboolean
refuse_apply (SandboxNetworkPolicy  *policy,
              gpointer               data,
              GError               **error)
{
  int *calls = data;

  (*calls)++;
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, "refused by the driver");
  return FALSE;
}

static gboolean
count_apply (SandboxNetworkPolicy  *policy,
             gpointer               data,
             GError               **error)
{
  int *calls = data;

  (*calls)++;
  return TRUE;
}

/* No policy change while a command is live; each accepted change bumps the
 * revision, and a command prepared before is refused at admission. */
static void
test_policy_revision_and_busy (void)
{
  g_autoptr(SandboxSessionGate) gate = new_gate (4);
  g_autoptr(SandboxNetworkPolicy) allow_all = sandbox_network_policy_new_allow_all ();
  g_autoptr(SandboxNetworkPolicy) current = NULL;
  g_autoptr(TestProcess) live = spawn (gate, NULL);
  g_autoptr(TestProcess) stale = g_object_new (TEST_TYPE_PROCESS, NULL);
  g_autoptr(TestProcess) fresh = g_object_new (TEST_TYPE_PROCESS, NULL);
  g_autoptr(GError) error = NULL;
  guint64 prepared, revision;
  int calls = 0;

  current = sandbox_session_gate_dup_policy (gate, &prepared);
  g_assert_cmpint (sandbox_network_policy_get_kind (current), ==, SANDBOX_NETWORK_POLICY_DENY_ALL);

  g_assert_false (sandbox_session_gate_set_policy (gate, allow_all, count_apply, &calls, NULL,
                                                   &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Stop live commands before changing network policy");
  g_assert_cmpint (calls, ==, 0);
  g_clear_error (&error);

  sandbox_process_complete (SANDBOX_PROCESS (live), 0);

  /* The driver's refusal leaves policy and revision as they were. */
  g_assert_false (sandbox_session_gate_set_policy (gate, allow_all, refuse_apply, &calls, NULL,
                                                   &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_clear_error (&error);
  g_clear_object (&current);
  current = sandbox_session_gate_dup_policy (gate, &revision);
  g_assert_cmpuint (revision, ==, prepared);
  g_assert_cmpint (sandbox_network_policy_get_kind (current), ==, SANDBOX_NETWORK_POLICY_DENY_ALL);

  g_assert_true (sandbox_session_gate_set_policy (gate, allow_all, count_apply, &calls, NULL,
                                                  &error));
  g_assert_no_error (error);
  g_assert_cmpint (calls, ==, 2);
  g_clear_object (&current);
  current = sandbox_session_gate_dup_policy (gate, &revision);
  g_assert_cmpuint (revision, !=, prepared);
  g_assert_true (current == allow_all);

  g_assert_false (sandbox_session_gate_admit_prepared (gate, SANDBOX_PROCESS (stale), prepared,
                                                       &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Sandbox policy changed after command preparation");
  g_clear_error (&error);
  g_assert_cmpuint (sandbox_session_gate_get_n_live (gate), ==, 0);

  g_assert_true (sandbox_session_gate_admit_prepared (gate, SANDBOX_PROCESS (fresh), revision,
                                                      &error));
  g_assert_no_error (error);
  sandbox_session_gate_withdraw (gate, SANDBOX_PROCESS (fresh));
}

static void
assert_stopped (GError **error)
{
  g_assert_error (*error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_cmpstr ((*error)->message, ==, "Sandbox session is stopped");
  g_clear_error (error);
}

/* Stop kills every live command and returns only once each has its
 * result; from then on everything is refused. */
static void
test_stop_kills_and_refuses (void)
{
  g_autoptr(SandboxSessionGate) gate = new_gate (4);
  g_autoptr(SandboxNetworkPolicy) deny_all = sandbox_network_policy_new_deny_all ();
  g_autoptr(TestProcess) first = spawn (gate, NULL);
  g_autoptr(TestProcess) second = spawn (gate, NULL);
  g_autoptr(TestProcess) late = g_object_new (TEST_TYPE_PROCESS, NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_gate_check_active (gate, NULL, NULL));
  g_assert_false (sandbox_session_gate_is_stopped (gate));
  g_assert_true (sandbox_session_gate_stop (gate, NULL, &error));
  g_assert_no_error (error);

  g_assert_cmpint (get_kills (first), ==, 1);
  g_assert_cmpint (get_kills (second), ==, 1);
  g_assert_cmpuint (sandbox_session_gate_get_n_live (gate), ==, 0);
  g_assert_true (sandbox_process_is_finished (SANDBOX_PROCESS (first)));
  result = sandbox_process_wait (SANDBOX_PROCESS (first), NULL, NULL);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 137);

  g_assert_true (sandbox_session_gate_is_stopped (gate));
  g_assert_false (sandbox_session_gate_check_active (gate, NULL, &error));
  assert_stopped (&error);
  g_assert_false (sandbox_session_gate_admit (gate, SANDBOX_PROCESS (late), &error));
  assert_stopped (&error);
  g_assert_false (sandbox_session_gate_set_policy (gate, deny_all, NULL, NULL, NULL, &error));
  assert_stopped (&error);

  /* Idempotent. */
  g_assert_true (sandbox_session_gate_stop (gate, NULL, NULL));
}

typedef struct
{
  SandboxSessionGate *gate;
  int returned;   /* atomic */
} StopThread;

static gpointer
stop_thread (gpointer data)
{
  StopThread *stop = data;
  gboolean ok = sandbox_session_gate_stop (stop->gate, NULL, NULL);

  g_atomic_int_set (&stop->returned, TRUE);
  return GINT_TO_POINTER (ok);
}

/* A command that takes its time to die keeps stop waiting: stop returns
 * after its completion, not after the kill. Remove the wait loop of
 * sandbox_session_gate_stop() and the flag is set before the completion. */
static void
test_stop_waits_for_completion (void)
{
  g_autoptr(SandboxSessionGate) gate = new_gate (1);
  g_autoptr(TestProcess) slow = spawn (gate, NULL);
  StopThread stop = { .gate = gate };
  GThread *thread;

  slow->complete_on_kill = FALSE;
  thread = g_thread_new ("stop", stop_thread, &stop);

  g_mutex_lock (&slow->lock);
  while (slow->kills == 0)
    g_cond_wait (&slow->killed, &slow->lock);
  g_mutex_unlock (&slow->lock);
  g_assert_false (g_atomic_int_get (&stop.returned));

  sandbox_process_complete (SANDBOX_PROCESS (slow), 137);
  g_assert_true (GPOINTER_TO_INT (g_thread_join (thread)));
  g_assert_true (g_atomic_int_get (&stop.returned));
}

/* The wait of a stop can be given up; the session stays stopped. */
static void
test_stop_wait_cancelled (void)
{
  g_autoptr(SandboxSessionGate) gate = new_gate (1);
  g_autoptr(TestProcess) slow = spawn (gate, NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;

  slow->complete_on_kill = FALSE;
  g_cancellable_cancel (cancellable);
  g_assert_false (sandbox_session_gate_stop (gate, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpint (get_kills (slow), ==, 1);
  g_assert_true (sandbox_session_gate_is_stopped (gate));
  g_assert_cmpuint (sandbox_session_gate_get_n_live (gate), ==, 1);

  sandbox_process_complete (SANDBOX_PROCESS (slow), 137);
  g_assert_true (sandbox_session_gate_stop (gate, NULL, NULL));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/session-gate/admission-released-by-completion",
                   test_admission_released_by_completion);
  g_test_add_func ("/session-gate/waiter-respawns-at-once", test_waiter_respawns_at_once);
  g_test_add_func ("/session-gate/withdraw-returns-the-slot", test_withdraw_returns_the_slot);
  g_test_add_func ("/session-gate/policy-revision-and-busy", test_policy_revision_and_busy);
  g_test_add_func ("/session-gate/stop-kills-and-refuses", test_stop_kills_and_refuses);
  g_test_add_func ("/session-gate/stop-waits-for-completion", test_stop_waits_for_completion);
  g_test_add_func ("/session-gate/stop-wait-cancelled", test_stop_wait_cancelled);
  return g_test_run ();
}
