/* test-ready-take.c — a ready sandbox is taken only at the revision it was built for
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * sandbox_bubblewrap_ready_take() refuses a ready sandbox built for another
 * policy revision than the command's. Through the public API that check is
 * a second defence, never reached: a policy change discards the session's
 * ready sandbox first (tests/bubblewrap/test-ready.c, policy-change-discards,
 * which also runs the next command cold under the new policy). So it is
 * tested here on its own, against the driver's internal library: a sandbox
 * built at revision 1 under allow-all (slirp4netns's way out) is not
 * taken for a command at revision 2, and is gone at once; one built at the
 * command's revision is taken and runs the command. Run as root and,
 * through run-unprivileged.sh, as an unprivileged user.
 */

#include "config.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-ready-private.h"
#include "sandbox-bubblewrap-stub-private.h"
#include "sandbox-test-bwrap-children.h"

typedef struct
{
  char *workspace;
  SandboxBubblewrapReadyPool *pool;
} Fixture;

static void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->workspace = g_dir_make_tmp ("sandbox-ready-take-XXXXXX", &error);
  g_assert_no_error (error);
  f->pool = sandbox_bubblewrap_ready_pool_new (1, 60 * 1000);
}

static void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  g_assert_cmpuint (sandbox_bubblewrap_ready_pool_get_n_ready (f->pool), ==, 0);
  sandbox_bubblewrap_ready_pool_unref (f->pool);
  g_assert_cmpint (g_rmdir (f->workspace), ==, 0);
  g_free (f->workspace);
}

/* A session's setup without a command: @executable, the workspace, @kind,
 * nothing more (no seccomp filter, no curated /etc, the guest is the
 * host's user). */
static SandboxBubblewrapReady *
start_ready_with (Fixture                  *f,
                  const char               *executable,
                  SandboxNetworkPolicyKind  kind,
                  guint64                   revision)
{
  SandboxBubblewrapArgsInput input = {
    .executable = executable,
    .workspace = f->workspace,
    .policy_kind = kind,
  };
  SandboxBubblewrapReady *ready = sandbox_bubblewrap_ready_start (f->pool, &input, revision);

  g_assert_nonnull (ready);
  return ready;
}

static SandboxBubblewrapReady *
start_ready (Fixture                  *f,
             SandboxNetworkPolicyKind  kind,
             guint64                   revision)
{
  return start_ready_with (f, "/usr/bin/bwrap", kind, revision);
}


static gboolean
nothing_cb (gpointer data)
{
  return G_SOURCE_REMOVE;
}

/* Until the launch sandbox_bubblewrap_ready_start() queued (after a delay)
 * has run: once bwrap shows up, the launch is under way on the launcher
 * thread, which then runs nothing_cb() only after it. */
static void
wait_for_launch (void)
{
  for (guint waited = 0; waited < 10 * 1000; waited += 5)
    {
      g_autoptr(GArray) pids = sandbox_test_bwrap_children ();

      if (pids->len > 0)
        break;
      g_usleep (5 * 1000);
    }
  sandbox_bubblewrap_launcher_run_sync (nothing_cb, NULL);
}

/* The one bwrap of this process, pinned by a pidfd. */
static int
only_bwrap_pidfd (void)
{
  g_autoptr(GArray) pids = sandbox_test_bwrap_children ();
  int pidfd;

  g_assert_cmpuint (pids->len, ==, 1);
  pidfd = pidfd_open (g_array_index (pids, pid_t, 0), 0);
  g_assert_cmpint (pidfd, >=, 0);
  return pidfd;
}

/* Runs `readlink /proc/self/ns/net` in a taken sandbox; returns its output. */
static char *
run_in_taken (SandboxBubblewrapTaken *taken)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/readlink");
  g_autoptr(GString) output = g_string_new (NULL);
  g_autoptr(GBytes) message = NULL;
  g_autoptr(GError) error = NULL;
  struct pollfd readable = { .fd = taken->launched.stdout_fd, .events = POLLIN };
  gsize size;
  const char *data;

  sandbox_command_add_arg (command, "/proc/self/ns/net");
  sandbox_command_set_cwd (command, SANDBOX_WORKSPACE);
  message = sandbox_bubblewrap_stub_message_new (command, FALSE, &error);
  g_assert_no_error (error);
  data = g_bytes_get_data (message, &size);
  g_assert_cmpint (send (taken->control_fd, data, size, MSG_NOSIGNAL), ==, (gssize) size);
  sandbox_bubblewrap_clear_fd (&taken->control_fd);

  for (;;)
    {
      char buffer[256];
      gssize n;

      g_assert_cmpint (poll (&readable, 1, 10 * 1000), ==, 1);
      n = read (taken->launched.stdout_fd, buffer, sizeof buffer);
      if (n == 0)
        break;
      g_assert_cmpint (n, >, 0);
      g_string_append_len (output, buffer, n);
    }
  sandbox_bubblewrap_launched_kill_and_reap (&taken->launched);
  sandbox_bubblewrap_clear_fd (&taken->status_fd);
  return g_strdup (g_strstrip (output->str));
}

/* Built at revision 1 under allow-all, it is not taken for a command at
 * revision 2 (after a change to deny-all, say): it is killed and reaped
 * before the take returns, and its pool slot is free again. Remove
 * `self->revision == revision` in sandbox_bubblewrap_ready_take() to see
 * it taken. */
static void
test_older_revision_not_taken (Fixture       *f,
                               gconstpointer  data)
{
  SandboxBubblewrapTaken taken = SANDBOX_BUBBLEWRAP_TAKEN_INIT;
  SandboxBubblewrapReady *ready = start_ready (f, SANDBOX_NETWORK_POLICY_ALLOW_ALL, 1);
  struct pollfd exited = { .events = POLLIN };
  g_autoptr(GArray) after = NULL;

  wait_for_launch ();
  exited.fd = only_bwrap_pidfd ();

  g_assert_false (sandbox_bubblewrap_ready_take (ready, 2, &taken));
  g_assert_cmpint (taken.launched.pid, ==, 0);
  g_assert_cmpint (poll (&exited, 1, 0), ==, 1);
  close (exited.fd);
  after = sandbox_test_bwrap_children ();
  g_assert_cmpuint (after->len, ==, 0);
  g_assert_cmpuint (sandbox_bubblewrap_ready_pool_get_n_ready (f->pool), ==, 0);
}

/* Built at the command's revision, it is taken and runs the command under
 * its policy: deny-all, a network namespace of its own. The other half of
 * the check, so that the test above fails for the check alone. */
static void
test_same_revision_taken (Fixture       *f,
                          gconstpointer  data)
{
  SandboxBubblewrapTaken taken = SANDBOX_BUBBLEWRAP_TAKEN_INIT;
  SandboxBubblewrapReady *ready = start_ready (f, SANDBOX_NETWORK_POLICY_DENY_ALL, 2);
  g_autofree char *host_net = g_file_read_link ("/proc/self/ns/net", NULL);
  g_autofree char *guest_net = NULL;

  wait_for_launch ();
  g_assert_true (sandbox_bubblewrap_ready_take (ready, 2, &taken));
  g_assert_cmpint (taken.launched.pid, >, 0);
  /* Taken: the pool's slot is free for the next one. */
  g_assert_cmpuint (sandbox_bubblewrap_ready_pool_get_n_ready (f->pool), ==, 0);
  guest_net = run_in_taken (&taken);
  g_assert_true (g_str_has_prefix (guest_net, "net:["));
  g_assert_cmpstr (guest_net, !=, host_net);
}

/* One that cannot be launched (its command line is built at the launch,
 * and here bwrap is not there) gives its pool slot back then, without a
 * take, and is never taken. Make launch_cb() in sandbox-bubblewrap-ready.c
 * return without kill_locked() on failure to see the slot held. */
static void
test_unlaunchable_gives_slot_back (Fixture       *f,
                                   gconstpointer  data)
{
  SandboxBubblewrapTaken taken = SANDBOX_BUBBLEWRAP_TAKEN_INIT;
  SandboxBubblewrapReady *ready = start_ready_with (f, "/nonexistent/bwrap",
                                                    SANDBOX_NETWORK_POLICY_DENY_ALL, 1);

  g_assert_cmpuint (sandbox_bubblewrap_ready_pool_get_n_ready (f->pool), ==, 1);
  for (guint waited = 0;
       sandbox_bubblewrap_ready_pool_get_n_ready (f->pool) > 0 && waited < 10 * 1000;
       waited += 5)
    g_usleep (5 * 1000);
  g_assert_cmpuint (sandbox_bubblewrap_ready_pool_get_n_ready (f->pool), ==, 0);
  g_assert_false (sandbox_bubblewrap_ready_take (ready, 1, &taken));
  g_assert_cmpint (taken.launched.pid, ==, 0);
}

/* No bwrap of this process is left once @ms have passed: nothing was
 * launched behind the test's back. */
static void
assert_no_bwrap_after (guint ms)
{
  g_autoptr(GArray) pids = NULL;

  g_usleep (ms * 1000);
  sandbox_bubblewrap_launcher_run_sync (nothing_cb, NULL);
  pids = sandbox_test_bwrap_children ();
  g_assert_cmpuint (pids->len, ==, 0);
}

/* A command that comes while the sandbox's launch is still queued (within
 * SANDBOX_BUBBLEWRAP_READY_LAUNCH_DELAY_MS of the previous command's end)
 * launches it and takes it, instead of discarding it and starting cold:
 * every command after a session's first goes through a ready sandbox, the
 * hostile suites' included. Take the is_queued() launch out of
 * sandbox_bubblewrap_ready_take() to see it refused. */
static void
test_queued_launched_at_take (Fixture       *f,
                              gconstpointer  data)
{
  SandboxBubblewrapTaken taken = SANDBOX_BUBBLEWRAP_TAKEN_INIT;
  SandboxBubblewrapReady *ready = start_ready (f, SANDBOX_NETWORK_POLICY_DENY_ALL, 1);
  g_autofree char *guest_net = NULL;

  g_assert_true (sandbox_bubblewrap_ready_take (ready, 1, &taken));
  g_assert_cmpint (taken.launched.pid, >, 0);
  g_assert_cmpuint (sandbox_bubblewrap_ready_pool_get_n_ready (f->pool), ==, 0);
  guest_net = run_in_taken (&taken);
  g_assert_true (g_str_has_prefix (guest_net, "net:["));
  /* The queued launch finds it taken and launches nothing. */
  assert_no_bwrap_after (4 * SANDBOX_BUBBLEWRAP_READY_LAUNCH_DELAY_MS);
}

/* A queued sandbox of an older revision is not launched for the take, and
 * never afterwards. */
static void
test_queued_older_revision_never_launched (Fixture       *f,
                                           gconstpointer  data)
{
  SandboxBubblewrapTaken taken = SANDBOX_BUBBLEWRAP_TAKEN_INIT;
  SandboxBubblewrapReady *ready = start_ready (f, SANDBOX_NETWORK_POLICY_ALLOW_ALL, 1);

  g_assert_false (sandbox_bubblewrap_ready_take (ready, 2, &taken));
  g_assert_cmpint (taken.launched.pid, ==, 0);
  g_assert_cmpuint (sandbox_bubblewrap_ready_pool_get_n_ready (f->pool), ==, 0);
  assert_no_bwrap_after (4 * SANDBOX_BUBBLEWRAP_READY_LAUNCH_DELAY_MS);
}

static gboolean
hold_launcher_cb (gpointer data)
{
  g_usleep (GPOINTER_TO_UINT (data) * 1000);
  return G_SOURCE_REMOVE;
}

/* The queued launch and the take's launch both wait for a busy launcher
 * thread; the queued one runs first (its delay is over by then). The take's
 * finds the sandbox launched and launches no second bwrap, which nothing
 * would ever reap. Take `|| self->launched` out of launch_cb() in
 * sandbox-bubblewrap-ready.c to see a bwrap left behind. */
static void
test_queued_launch_and_take_race (Fixture       *f,
                                  gconstpointer  data)
{
  SandboxBubblewrapTaken taken = SANDBOX_BUBBLEWRAP_TAKEN_INIT;
  SandboxBubblewrapReady *ready = NULL;
  g_autofree char *guest_net = NULL;

  g_main_context_invoke_full (sandbox_bubblewrap_launcher_get_context (), G_PRIORITY_HIGH,
                              hold_launcher_cb,
                              GUINT_TO_POINTER (10 * SANDBOX_BUBBLEWRAP_READY_LAUNCH_DELAY_MS),
                              NULL);
  ready = start_ready (f, SANDBOX_NETWORK_POLICY_DENY_ALL, 1);
  g_assert_true (sandbox_bubblewrap_ready_take (ready, 1, &taken));
  guest_net = run_in_taken (&taken);
  g_assert_true (g_str_has_prefix (guest_net, "net:["));
  assert_no_bwrap_after (4 * SANDBOX_BUBBLEWRAP_READY_LAUNCH_DELAY_MS);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  if (!g_file_test ("/usr/bin/bwrap", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no /usr/bin/bwrap");
      return g_test_run ();
    }
  g_test_add ("/sandbox/ready/take/older-revision-not-taken", Fixture, NULL,
              fixture_set_up, test_older_revision_not_taken, fixture_tear_down);
  g_test_add ("/sandbox/ready/take/same-revision-taken", Fixture, NULL,
              fixture_set_up, test_same_revision_taken, fixture_tear_down);
  g_test_add ("/sandbox/ready/take/unlaunchable-gives-slot-back", Fixture, NULL,
              fixture_set_up, test_unlaunchable_gives_slot_back, fixture_tear_down);
  g_test_add ("/sandbox/ready/take/queued-launched-at-take", Fixture, NULL,
              fixture_set_up, test_queued_launched_at_take, fixture_tear_down);
  g_test_add ("/sandbox/ready/take/queued-older-revision-never-launched", Fixture, NULL,
              fixture_set_up, test_queued_older_revision_never_launched, fixture_tear_down);
  g_test_add ("/sandbox/ready/take/queued-launch-and-take-race", Fixture, NULL,
              fixture_set_up, test_queued_launch_and_take_race, fixture_tear_down);
  return g_test_run ();
}
