/* test-handle-checkpoint.c — what SandboxHandle's base class makes of checkpoint()
 *
 * A handle class of this file's own implements the checkpoint vfunc and
 * counts its calls, so the base class's policy is seen on its own: a
 * stopped or deleted handle is STOPPED without the vfunc being called, a
 * stop waits for the checkpoint in progress, and no checkpoint starts
 * once a stop has. The in-tree drivers without checkpoints (memory,
 * bubblewrap, loaded as modules as an application loads them) report
 * G_IO_ERROR_NOT_SUPPORTED naming the driver; the cluster driver's
 * checkpoints are tested against etcd in tests/cluster.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>
#include <unistd.h>

#include <sandbox.h>

#define TEST_TYPE_HANDLE (test_handle_get_type ())
G_DECLARE_FINAL_TYPE (TestHandle, test_handle, TEST, HANDLE, SandboxHandle)

struct _TestHandle
{
  SandboxHandle parent_instance;

  GMutex lock;
  GCond changed;
  guint checkpoints;        /* checkpoint vfunc calls begun */
  guint stops;              /* stop vfunc calls begun */
  gboolean hold;            /* the checkpoint vfunc waits while set */
  gboolean overlapped;      /* stop began while a checkpoint ran */
  gboolean in_checkpoint;
};

G_DEFINE_FINAL_TYPE (TestHandle, test_handle, SANDBOX_TYPE_HANDLE)

static gboolean
test_handle_checkpoint (SandboxHandle  *handle,
                        GCancellable   *cancellable,
                        GError        **error)
{
  TestHandle *self = TEST_HANDLE (handle);

  g_mutex_lock (&self->lock);
  self->checkpoints++;
  self->in_checkpoint = TRUE;
  g_cond_broadcast (&self->changed);
  while (self->hold)
    g_cond_wait (&self->changed, &self->lock);
  self->in_checkpoint = FALSE;
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static gboolean
test_handle_stop (SandboxHandle  *handle,
                  GCancellable   *cancellable,
                  GError        **error)
{
  TestHandle *self = TEST_HANDLE (handle);

  g_mutex_lock (&self->lock);
  self->stops++;
  self->overlapped |= self->in_checkpoint;
  g_cond_broadcast (&self->changed);
  g_mutex_unlock (&self->lock);
  return TRUE;
}

static gboolean
test_handle_delete_session (SandboxHandle  *handle,
                            GCancellable   *cancellable,
                            GError        **error)
{
  return TRUE;
}

static void
test_handle_finalize (GObject *object)
{
  TestHandle *self = TEST_HANDLE (object);

  g_mutex_clear (&self->lock);
  g_cond_clear (&self->changed);
  G_OBJECT_CLASS (test_handle_parent_class)->finalize (object);
}

static void
test_handle_class_init (TestHandleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SandboxHandleClass *handle_class = SANDBOX_HANDLE_CLASS (klass);

  object_class->finalize = test_handle_finalize;
  handle_class->stop = test_handle_stop;
  handle_class->delete_session = test_handle_delete_session;
  handle_class->checkpoint = test_handle_checkpoint;
}

static void
test_handle_init (TestHandle *self)
{
  g_mutex_init (&self->lock);
  g_cond_init (&self->changed);
}

static TestHandle *
test_handle_new (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *id = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "session", -1);
  g_autofree char *key = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "template", -1);
  g_autoptr(SandboxState) state = sandbox_state_new ("test", id, key, &error);

  g_assert_no_error (error);
  return g_object_new (TEST_TYPE_HANDLE, "state", state, NULL);
}

/* Waits until @handle's counter at @field reaches @count. */
static void
wait_for_count (TestHandle *handle,
                guint      *field,
                guint       count)
{
  g_mutex_lock (&handle->lock);
  while (*field < count)
    g_cond_wait (&handle->changed, &handle->lock);
  g_mutex_unlock (&handle->lock);
}

static void
release_hold (TestHandle *handle)
{
  g_mutex_lock (&handle->lock);
  handle->hold = FALSE;
  g_cond_broadcast (&handle->changed);
  g_mutex_unlock (&handle->lock);
}

/* Records an async call's outcome and quits nothing: the tests iterate the
 * default context until it is set. */
typedef struct
{
  gboolean done;
  gboolean ok;
  GError *error;
} Outcome;

static void
checkpoint_done (GObject      *source,
                 GAsyncResult *result,
                 gpointer      data)
{
  Outcome *outcome = data;

  outcome->ok = sandbox_handle_checkpoint_finish (SANDBOX_HANDLE (source), result,
                                                  &outcome->error);
  outcome->done = TRUE;
}

static void
stop_done (GObject      *source,
           GAsyncResult *result,
           gpointer      data)
{
  Outcome *outcome = data;

  outcome->ok = sandbox_handle_stop_finish (SANDBOX_HANDLE (source), result, &outcome->error);
  outcome->done = TRUE;
}

static void
test_checkpoint_calls_vfunc (void)
{
  g_autoptr(TestHandle) handle = test_handle_new ();
  g_autoptr(GError) error = NULL;
  Outcome outcome = { FALSE, FALSE, NULL };

  g_assert_true (sandbox_handle_checkpoint (SANDBOX_HANDLE (handle), NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (handle->checkpoints, ==, 1);

  sandbox_handle_checkpoint_async (SANDBOX_HANDLE (handle), NULL, checkpoint_done, &outcome);
  while (!outcome.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (outcome.error);
  g_assert_true (outcome.ok);
  g_assert_cmpuint (handle->checkpoints, ==, 2);
  g_assert_false (sandbox_handle_is_stopped (SANDBOX_HANDLE (handle)));
}

/* To see it fail, drop the stopped check from begin_checkpoint()
 * (sandbox-handle.c): the vfunc is called on a stopped handle. */
static void
test_checkpoint_after_stop (void)
{
  g_autoptr(TestHandle) handle = test_handle_new ();
  g_autoptr(GError) error = NULL;
  Outcome outcome = { FALSE, FALSE, NULL };

  g_assert_true (sandbox_handle_stop (SANDBOX_HANDLE (handle), NULL, &error));
  g_assert_false (sandbox_handle_checkpoint (SANDBOX_HANDLE (handle), NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_cmpstr (error->message, ==, "Sandbox session is stopped");

  sandbox_handle_checkpoint_async (SANDBOX_HANDLE (handle), NULL, checkpoint_done, &outcome);
  while (!outcome.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (outcome.ok);
  g_assert_error (outcome.error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_clear_error (&outcome.error);
  g_assert_cmpuint (handle->checkpoints, ==, 0);
}

/* To see it fail, drop the deleted check from begin_checkpoint(): the
 * message is the stopped one. */
static void
test_checkpoint_after_delete (void)
{
  g_autoptr(TestHandle) handle = test_handle_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_handle_delete (SANDBOX_HANDLE (handle), NULL, &error));
  g_assert_false (sandbox_handle_checkpoint (SANDBOX_HANDLE (handle), NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_cmpstr (error->message, ==, "Sandbox session is deleted");
  g_assert_cmpuint (handle->checkpoints, ==, 0);
}

/* A stop called while a checkpoint runs waits for it, and a checkpoint
 * asked for meanwhile is STOPPED. To see it fail, drop the wait for
 * checkpoint_running from sandbox_handle_stop(): the stop vfunc runs while
 * the checkpoint is held. */
static void
test_stop_waits_for_checkpoint (void)
{
  g_autoptr(TestHandle) handle = test_handle_new ();
  g_autoptr(GError) error = NULL;
  Outcome checkpointed = { FALSE, FALSE, NULL };
  Outcome stopped = { FALSE, FALSE, NULL };

  handle->hold = TRUE;
  sandbox_handle_checkpoint_async (SANDBOX_HANDLE (handle), NULL, checkpoint_done, &checkpointed);
  wait_for_count (handle, &handle->checkpoints, 1);

  sandbox_handle_stop_async (SANDBOX_HANDLE (handle), NULL, stop_done, &stopped);
  /* The stop has begun (the handle says so) but its vfunc waits. */
  while (!sandbox_handle_is_stopped (SANDBOX_HANDLE (handle)))
    g_usleep (1000);
  g_usleep (100 * 1000);
  g_assert_cmpuint (handle->stops, ==, 0);

  g_assert_false (sandbox_handle_checkpoint (SANDBOX_HANDLE (handle), NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);

  release_hold (handle);
  while (!checkpointed.done || !stopped.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_no_error (checkpointed.error);
  g_assert_true (checkpointed.ok);
  g_assert_no_error (stopped.error);
  g_assert_true (stopped.ok);
  g_assert_cmpuint (handle->checkpoints, ==, 1);
  g_assert_cmpuint (handle->stops, ==, 1);
  g_assert_false (handle->overlapped);
}

/* Two checkpoints at once run one after the other. To see it fail, make
 * begin_checkpoint() not wait for checkpoint_running: the second vfunc
 * call begins while the first is held. */
static void
test_checkpoints_one_at_a_time (void)
{
  g_autoptr(TestHandle) handle = test_handle_new ();
  Outcome first = { FALSE, FALSE, NULL };
  Outcome second = { FALSE, FALSE, NULL };

  handle->hold = TRUE;
  sandbox_handle_checkpoint_async (SANDBOX_HANDLE (handle), NULL, checkpoint_done, &first);
  wait_for_count (handle, &handle->checkpoints, 1);
  sandbox_handle_checkpoint_async (SANDBOX_HANDLE (handle), NULL, checkpoint_done, &second);
  g_usleep (100 * 1000);
  g_assert_cmpuint (handle->checkpoints, ==, 1);

  release_hold (handle);
  while (!first.done || !second.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (first.ok && second.ok);
  g_assert_cmpuint (handle->checkpoints, ==, 2);
}

/* A live handle of @driver on the test template. */
static SandboxHandle *
driver_handle_new (const char  *driver,
                   char       **directory_out)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *directory = g_dir_make_tmp ("sandbox-checkpoint-XXXXXX", &error);
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("checkpoint");
  g_autoptr(GBytes) readme = g_bytes_new_static ("hi\n", 3);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autofree char *key = NULL;
  SandboxHandle *handle;

  g_assert_no_error (error);
  backend = sandbox_backend_new (driver, NULL, &error, "state-directory", directory, NULL);
  g_assert_no_error (error);
  sandbox_template_add_file (template_, "README", readme, &error);
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  *directory_out = g_steal_pointer (&directory);
  return handle;
}

static void
remove_directory (const char *directory)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", directory);

  g_assert_cmpint (system (command), ==, 0);
}

/* The driver's own name in the message, through the module that
 * registered the handle's type. To see it fail, make driver_name()
 * (sandbox-backend-store.c) match the backend type only: the message then
 * names the handle's type. */
static void
test_not_supported (gconstpointer data)
{
  const char *driver = data;
  g_autofree char *directory = NULL;
  g_autofree char *expected = g_strdup_printf ("Checkpoints are not supported by the %s driver",
                                               driver);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  Outcome outcome = { FALSE, FALSE, NULL };

  if (g_str_equal (driver, "bubblewrap") && access ("/usr/bin/bwrap", X_OK) != 0)
    {
      g_test_skip ("/usr/bin/bwrap is not installed");
      return;
    }
  handle = driver_handle_new (driver, &directory);

  g_assert_false (sandbox_handle_checkpoint (handle, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_assert_cmpstr (error->message, ==, expected);
  g_clear_error (&error);

  sandbox_handle_checkpoint_async (handle, NULL, checkpoint_done, &outcome);
  while (!outcome.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (outcome.ok);
  g_assert_error (outcome.error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_clear_error (&outcome.error);

  /* The session is untouched: it still stops normally. */
  g_assert_false (sandbox_handle_is_stopped (handle));
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&handle);
  remove_directory (directory);
}

static void
snapshot_done (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  Outcome *outcome = data;
  g_autofree char *key = sandbox_handle_snapshot_finish (SANDBOX_HANDLE (source), result,
                                                         &outcome->error);

  outcome->ok = key != NULL;
  outcome->done = TRUE;
}

/* Snapshots and restores share the checkpoint's slot; a handle class
 * without them (this file's) is NOT_SUPPORTED, naming its driver, and the
 * handle goes on. The in-tree drivers' snapshots are checked by the
 * conformance suite. */
static void
test_snapshot_not_supported (void)
{
  g_autoptr(TestHandle) handle = test_handle_new ();
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  Outcome outcome = { FALSE, FALSE, NULL };

  key = sandbox_handle_snapshot (SANDBOX_HANDLE (handle), NULL, &error);
  g_assert_null (key);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_assert_true (g_str_has_prefix (error->message, "Snapshots are not supported by the "));
  g_clear_error (&error);
  sandbox_handle_snapshot_async (SANDBOX_HANDLE (handle), NULL, snapshot_done, &outcome);
  while (!outcome.done)
    g_main_context_iteration (NULL, TRUE);
  g_assert_false (outcome.ok);
  g_assert_error (outcome.error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_clear_error (&outcome.error);

  state = sandbox_handle_capture_state (SANDBOX_HANDLE (handle), &error);
  g_assert_no_error (error);
  g_assert_false (sandbox_handle_restore (SANDBOX_HANDLE (handle),
                                          sandbox_state_get_template_key (state), NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_assert_true (g_str_has_prefix (error->message,
                                   "Restoring snapshots is not supported by the "));
  g_clear_error (&error);

  g_assert_true (sandbox_handle_stop (SANDBOX_HANDLE (handle), NULL, &error));
  g_assert_no_error (error);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/handle/checkpoint/calls-vfunc", test_checkpoint_calls_vfunc);
  g_test_add_func ("/sandbox/handle/checkpoint/after-stop", test_checkpoint_after_stop);
  g_test_add_func ("/sandbox/handle/checkpoint/after-delete", test_checkpoint_after_delete);
  g_test_add_func ("/sandbox/handle/checkpoint/stop-waits", test_stop_waits_for_checkpoint);
  g_test_add_func ("/sandbox/handle/checkpoint/one-at-a-time", test_checkpoints_one_at_a_time);
  g_test_add_func ("/sandbox/handle/snapshot/not-supported", test_snapshot_not_supported);
  g_test_add_data_func ("/sandbox/handle/checkpoint/not-supported/memory", "memory",
                        test_not_supported);
  g_test_add_data_func ("/sandbox/handle/checkpoint/not-supported/bubblewrap", "bubblewrap",
                        test_not_supported);

  return g_test_run ();
}
