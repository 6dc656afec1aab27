/* test-ready.c — sandboxes started ahead of a session's next command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A session that has run a command keeps the next command's sandbox ready
 * (drivers/bubblewrap/sandbox-bubblewrap-ready.c): the next command runs in
 * it, with a /tmp, mount and pid namespace of its own as always; a policy
 * change, stop, delete and the idle timeout end it (its bwrap is found by
 * pid: a child of this process named bwrap, which the launcher thread
 * spawned); the backend bounds how many exist; the deadline counts from the
 * command's delivery. Run as root and, through run-unprivileged.sh, as an
 * unprivileged user.
 */

#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include <sandbox.h>

#include "sandbox-test-bwrap-children.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"

/* The kit's fixture (tests/kit): a backend on a fresh state directory with
 * extra properties (name/value pairs of strings, then NULL, given to
 * sandbox_test_fixture_set_up()) and the hello template for its sessions. */
typedef SandboxTestFixture Fixture;

static void
fixture_open (Fixture *f,
              ...)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  va_list ap;

  va_start (ap, f);
  sandbox_test_fixture_set_up_valist (f, "bubblewrap", template_, ap);
  va_end (ap);
}

static SandboxHandle *
create_session (Fixture    *f,
                const char *policy_json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (policy_json,
                                                                                 &error);
  SandboxHandle *handle;

  g_assert_no_error (error);
  handle = sandbox_backend_create (f->backend, f->template_key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  return handle;
}

static guint
count_bwrap_children (void)
{
  g_autoptr(GArray) pids = sandbox_test_bwrap_children ();

  return pids->len;
}


/* The one ready sandbox's bwrap, pinned by a pidfd. */
static int
ready_pidfd (void)
{
  g_autoptr(GArray) pids = sandbox_test_wait_for_bwrap_children (1);
  int pidfd;

  g_assert_cmpuint (pids->len, ==, 1);
  pidfd = pidfd_open (g_array_index (pids, pid_t, 0), 0);
  g_assert_cmpint (pidfd, >=, 0);
  return pidfd;
}

static gboolean
has_exited (int pidfd,
            int timeout_ms)
{
  struct pollfd exited = { .fd = pidfd, .events = POLLIN };

  return poll (&exited, 1, timeout_ms) == 1;
}

/* The second command runs in the sandbox the first left ready, with its
 * own /tmp. Set max-ready-sandboxes to 0 to see no bwrap
 * waiting between the commands. */
static void
test_next_command_runs_in_ready_sandbox (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) handle = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autoptr(GArray) children = NULL;
  int pidfd;

  fixture_open (&f, NULL);
  handle = create_session (&f, "\"deny-all\"");
  /* create's proof keeps none (its bwrap may still be exiting) */
  g_clear_pointer (&children, g_array_unref);
  children = sandbox_test_wait_for_bwrap_children (0);
  g_assert_cmpuint (children->len, ==, 0);

  first = sandbox_test_guest_sh (sandbox_handle_get_session (handle),
                                 "echo x > /tmp/left-behind; echo first");
  pidfd = ready_pidfd ();
  second = sandbox_test_guest_sh (sandbox_handle_get_session (handle),
                                  "test ! -e /tmp/left-behind && echo second");
  /* It ran in the ready bwrap, which ends with it (the command completes
   * once the stub has reported its sandbox empty, and bwrap exits right
   * after); the next is ready. (Namespace inode numbers cannot tell the
   * two sandboxes apart: the first's are free again by then, and the
   * kernel hands out the lowest free numbers, so the second's are often
   * the same.) */
  g_assert_true (has_exited (pidfd, 10000));
  close (pidfd);
  g_assert_cmpstr (first, ==, "first\n");
  g_assert_cmpstr (second, ==, "second\n");
  close (ready_pidfd ());
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* What a command sees of its own confinement, from inside: its capability
 * sets, no_new_privs and seccomp state; whether unshare can make a user
 * namespace (its status: 1 refused, 0 made, 127 missing); the processes it
 * sees and its own pid; whether a file an earlier command of the session
 * left in /tmp is there (it leaves one for the next); then the /proc stat
 * lines of the sandbox's init and of itself. */
static const char confinement_script[] =
  "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp|Seccomp_filters):' /proc/self/status; "
  "unshare -U true 2>/dev/null; echo \"unshare -U: $?\"; "
  "unshare -Ur true 2>/dev/null; echo \"unshare -Ur: $?\"; "
  "echo processes: /proc/[0-9]*; echo \"pid: $$\"; "
  "if test -e /tmp/left-behind; then echo 'tmp: shared'; else echo 'tmp: own'; fi; "
  "echo x > /tmp/left-behind; "
  "read -r init < /proc/1/stat; echo \"init: $init\"; "
  "read -r self < /proc/$$/stat; echo \"self: $self\"";

/* What it shows in every sandbox, cold or ready: no capability in any set,
 * no_new_privs, the session's filter attached once (the stub's: bwrap's
 * own --seccomp would add a second), no nested user namespace, a pid
 * namespace holding only the stub (1) and the command (2), and an empty
 * /tmp. */
static const char confined[] =
  "CapInh:\t0000000000000000\n"
  "CapPrm:\t0000000000000000\n"
  "CapEff:\t0000000000000000\n"
  "CapBnd:\t0000000000000000\n"
  "CapAmb:\t0000000000000000\n"
  "NoNewPrivs:\t1\n"
  "Seccomp:\t2\n"
  "Seccomp_filters:\t1\n"
  "unshare -U: 1\n"
  "unshare -Ur: 1\n"
  "processes: /proc/1 /proc/2\n"
  "pid: 2\n"
  "tmp: own\n";

/* Field 22 of a /proc/PID/stat line: when the process started, in clock
 * ticks since boot. (The name in parentheses may hold spaces: count the
 * fields after the last ")", the first of which is field 3.) */
static guint64
stat_start_time (const char *stat)
{
  const char *close_paren = strrchr (stat, ')');
  g_auto(GStrv) fields = NULL;

  g_assert_nonnull (close_paren);
  fields = g_strsplit (close_paren + 2, " ", -1);
  g_assert_cmpuint (g_strv_length (fields), >, 19);
  return g_ascii_strtoull (fields[19], NULL, 10);
}

/* Runs confinement_script; returns what it printed but the stat lines, and
 * sets when the sandbox's init and the command started (clock ticks). */
static char *
run_confinement (SandboxHandle *handle,
                 guint64       *init_start,
                 guint64       *command_start)
{
  g_autofree char *out =
    sandbox_test_guest_sh (sandbox_handle_get_session (handle), confinement_script);
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
  g_autoptr(GString) rest = g_string_new (NULL);

  *init_start = 0;
  *command_start = 0;
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      if (g_str_has_prefix (lines[i], "init: "))
        *init_start = stat_start_time (lines[i]);
      else if (g_str_has_prefix (lines[i], "self: "))
        *command_start = stat_start_time (lines[i]);
      else
        g_string_append_printf (rest, "%s\n", lines[i]);
    }
  g_assert_cmpuint (*init_start, >, 0);
  g_assert_cmpuint (*command_start, >=, *init_start);
  return g_string_free (g_steal_pointer (&rest), FALSE);
}

/* A command in a ready sandbox is confined exactly as one started cold (the
 * session's first command): see confined[]; and /tmp is each command's
 * own, ready or not. That the later commands ran in a ready sandbox shows
 * from inside: its init started before the pause, the command after. (Its
 * bwrap ending with the command does not show it: a ready sandbox
 * discarded instead of taken ends too.) Pass -1 for seccomp_fd in
 * build_locked() (sandbox-bubblewrap-ready.c) to see the ready sandboxes'
 * commands unfiltered (Seccomp: 0); discard the ready sandbox in
 * spawn_process() (sandbox-bubblewrap-driver.c) to see the command start
 * with its init. */
static void
test_ready_confined_as_cold (void)
{
  const guint pause_ms = 300;
  const guint64 pause_ticks = (guint64) pause_ms * sysconf (_SC_CLK_TCK) / 1000;
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GArray) children = NULL;
  g_autofree char *cold = NULL;
  guint64 init_start, command_start;

  fixture_open (&f, NULL);
  handle = create_session (&f, "\"deny-all\"");
  /* Nothing ready yet: the first command starts its own sandbox. */
  children = sandbox_test_wait_for_bwrap_children (0);
  g_assert_cmpuint (children->len, ==, 0);
  cold = run_confinement (handle, &init_start, &command_start);
  g_assert_cmpstr (cold, ==, confined);

  /* Twice: the second ready sandbox's /tmp is not the first's either. */
  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *hot = NULL;
      int pidfd = ready_pidfd ();

      g_usleep (pause_ms * 1000);   /* the session's think time */
      hot = run_confinement (handle, &init_start, &command_start);
      g_assert_true (has_exited (pidfd, 10000));
      close (pidfd);
      g_assert_cmpstr (hot, ==, confined);
      g_assert_cmpuint (command_start, >=, init_start + pause_ticks);
    }
  close (ready_pidfd ());
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* Writes up to twice @budget bytes of zeros into a new file at every mount
 * point of the guest's mount table but /workspace (a disk: issue 31's
 * quota) and keeps them, so that what one mount took still counts while
 * the next is filled; prints "MOUNT FSTYPE BYTES OUTCOME" for each
 * directory, OUTCOME the error dd stopped on (its first line, after the
 * last ": ") or
 * "unbounded" when all of it fit. Then the stat lines of the sandbox's
 * init and of itself, as confinement_script does. */
static char *
fill_script (guint64 budget)
{
  return g_strdup_printf (
    "count=%" G_GUINT64_FORMAT "; "
    "while read -r line; do "
    "  mount=$(echo \"$line\" | cut -d ' ' -f 5); "
    "  type=${line#* - }; type=${type%%%% *}; "
    "  case $mount in /workspace|/workspace/*) continue;; esac; "
    "  test -d \"$mount\" || continue; "
    "  file=\"${mount%%/}/.fill\"; "
    "  if error=$(dd if=/dev/zero of=\"$file\" bs=65536 count=$count 2>&1 >/dev/null); "
    "  then outcome=unbounded; "
    "  else error=$(echo \"$error\" | head -n 1); outcome=${error##*: }; fi; "
    "  bytes=$(stat -c %%s \"$file\" 2>/dev/null || echo 0); "
    "  echo \"$mount $type $bytes $outcome\"; "
    "done < /proc/self/mountinfo; "
    "read -r init < /proc/1/stat; echo \"init: $init\"; "
    "read -r self < /proc/$$/stat; echo \"self: $self\"",
    2 * budget / 65536);
}

/* Runs fill_script() and checks what it found: the memory-backed places
 * together took at most @budget bytes, /tmp and /dev/shm stopped at
 * ENOSPC, the root and /dev are read-only, and no directory took all it
 * was given. Returns the command's and its init's start times. */
static void
assert_writable_places_bounded (SandboxHandle *handle,
                                guint64        budget,
                                guint64       *init_start,
                                guint64       *command_start)
{
  g_autofree char *script = fill_script (budget);
  g_autofree char *out = sandbox_test_guest_sh (sandbox_handle_get_session (handle), script);
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
  guint64 total = 0;
  guint found = 0;

  *init_start = *command_start = 0;
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      g_auto(GStrv) fields = NULL;
      guint64 bytes;

      if (g_str_has_prefix (lines[i], "init: "))
        {
          *init_start = stat_start_time (lines[i]);
          continue;
        }
      if (g_str_has_prefix (lines[i], "self: "))
        {
          *command_start = stat_start_time (lines[i]);
          continue;
        }
      g_test_message ("%s", lines[i]);
      fields = g_strsplit (lines[i], " ", 4);
      g_assert_cmpuint (g_strv_length (fields), ==, 4);
      bytes = g_ascii_strtoull (fields[2], NULL, 10);
      g_assert_cmpstr (fields[3], !=, "unbounded");
      total += bytes;
      if (g_str_equal (fields[0], "/tmp") || g_str_equal (fields[0], "/dev/shm"))
        {
          g_assert_cmpstr (fields[1], ==, "tmpfs");
          g_assert_cmpstr (fields[3], ==, "No space left on device");
          g_assert_cmpuint (bytes, >, 0);
          found++;
        }
      else if (g_str_equal (fields[0], "/") || g_str_equal (fields[0], "/dev"))
        {
          g_assert_cmpstr (fields[3], ==, "Read-only file system");
          found++;
        }
      else
        g_assert_cmpuint (bytes, ==, 0);
    }
  g_assert_cmpuint (found, ==, 4);
  g_assert_cmpuint (total, <=, budget);
  /* Most of the budget was there to take: the fill itself works. */
  g_assert_cmpuint (total, >=, budget / 2);
  g_assert_cmpuint (*init_start, >, 0);
  g_assert_cmpuint (*command_start, >=, *init_start);
}

/* A guest that writes wherever it can write, cold and in a ready sandbox,
 * holds at most tmp-size in memory-backed files (issue 31): /tmp and
 * /dev/shm share it, and the root and /dev, tmpfs the kernel sizes at half
 * of the host's RAM, are read-only. Drop the --remount-ro of / or /dev in
 * sandbox-bubblewrap-args.c, or size /dev/shm as /tmp, to see it fail. */
static void
test_writable_places_bounded (void)
{
  const guint64 budget = 8 * 1024 * 1024;
  const guint pause_ms = 300;
  const guint64 pause_ticks = (guint64) pause_ms * sysconf (_SC_CLK_TCK) / 1000;
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) handle = NULL;
  guint64 init_start, command_start;

  g_autofree char *budget_text = g_strdup_printf ("%" G_GUINT64_FORMAT, budget);

  fixture_open (&f, "tmp-size", budget_text, NULL);
  handle = create_session (&f, "\"deny-all\"");
  assert_writable_places_bounded (handle, budget, &init_start, &command_start);

  /* The next, after a pause, in the sandbox made ready meanwhile. */
  close (ready_pidfd ());
  g_usleep (pause_ms * 1000);
  assert_writable_places_bounded (handle, budget, &init_start, &command_start);
  g_assert_cmpuint (command_start, >=, init_start + pause_ticks);
  close (ready_pidfd ());
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* Whether a process runs whose command line is exactly @argv0 @argv1. */
static gboolean
process_is_running (const char *argv0,
                    const char *argv1)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  g_autofree char *wanted = g_strdup_printf ("%s%c%s", argv0, '\0', argv1);
  gsize wanted_length = strlen (argv0) + 1 + strlen (argv1) + 1;
  const char *name;

  g_assert_nonnull (proc);
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      gsize length;

      if (!g_ascii_isdigit (name[0]))
        continue;
      path = g_build_filename ("/proc", name, "cmdline", NULL);
      if (g_file_get_contents (path, &cmdline, &length, NULL) && length == wanted_length &&
          memcmp (cmdline, wanted, wanted_length) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Runs a guest that leaves two daemons (one in a session of its own) with
 * the output let go, and checks that neither outlives the command. */
static void
run_leaving_daemons (SandboxHandle *handle)
{
  /* Both run (as sleep) before the guest exits. */
  g_autofree char *started =
    sandbox_test_guest_sh (sandbox_handle_get_session (handle),
                           "setsid sleep 1000.25 </dev/null >/dev/null 2>&1 & "
                           "sleep 1000.5 </dev/null >/dev/null 2>&1 & "
                           "until grep -qs 1000.25 /proc/[0-9]*/cmdline && "
                           "grep -qs 1000.5 /proc/[0-9]*/cmdline; do :; done; echo started");

  g_assert_cmpstr (started, ==, "started\n");
  g_assert_false (process_is_running ("sleep", "1000.25"));
  g_assert_false (process_is_running ("sleep", "1000.5"));
}

/* A command is over only when its whole tree is, whatever the guest left
 * behind: the stub reports its sandbox empty (which completes the command
 * before bwrap is reaped) only once it has killed and reaped every other
 * process in it. A daemon that let go of the
 * command's output would otherwise outlive the command, free to write to
 * the workspace the host then reads. Make end_the_sandbox() in
 * stub/sandbox-stub.c return 1 at once to see the daemon still running. */
static void
test_command_ends_with_its_tree (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) handle = NULL;
  int pidfd;

  fixture_open (&f, NULL);
  handle = create_session (&f, "\"deny-all\"");
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (handle), "true"));
  pidfd = ready_pidfd ();
  run_leaving_daemons (handle);
  /* It ran in the ready sandbox. */
  g_assert_true (has_exited (pidfd, 10000));
  close (pidfd);
  g_clear_object (&handle);
  sandbox_test_fixture_tear_down (&f, NULL);

  /* The same for a command started cold, whose stub reports on a pipe. */
  fixture_open (&f, "max-ready-sandboxes", "0", NULL);
  handle = create_session (&f, "\"deny-all\"");
  run_leaving_daemons (handle);
  g_clear_object (&handle);
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* The next command's sandbox starts once the command's sandbox has exited,
 * not while the command runs, when its bwrap's setup would compete with the
 * command for the CPU: during a command that took the ready sandbox, its
 * bwrap is the only one. Move the start back to the spawn (in
 * spawn_process(), sandbox-bubblewrap-driver.c) to see two. */
static void
test_next_sandbox_starts_after_command_exits (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sleep");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GArray) during = NULL;
  g_autoptr(GError) error = NULL;

  fixture_open (&f, NULL);
  handle = create_session (&f, "\"deny-all\"");
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (handle), "true"));
  close (ready_pidfd ());

  sandbox_command_add_arg (command, "0.6");
  process = sandbox_session_spawn (sandbox_handle_get_session (handle), command, NULL, &error);
  g_assert_no_error (error);
  g_usleep (300 * 1000);   /* long enough for a sandbox's setup, here */
  during = sandbox_test_bwrap_children ();
  g_assert_cmpuint (during->len, ==, 1);

  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  close (ready_pidfd ());
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* Stops the session @delay_us after spawning @command, its first command:
 * however that falls against the command's end (before, as it ends, after),
 * no bwrap is left once stop has returned, nor shows up later from a launch
 * queued before. */
static void
stop_as_command_ends (Fixture        *f,
                      SandboxCommand *command,
                      gulong          delay_us)
{
  g_autoptr(SandboxHandle) handle = create_session (f, "\"deny-all\"");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) after = NULL;
  g_autoptr(GArray) later = NULL;

  process = sandbox_session_spawn (sandbox_handle_get_session (handle), command, NULL, &error);
  g_assert_no_error (error);
  g_usleep (delay_us);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  after = sandbox_test_bwrap_children ();
  g_usleep (50 * 1000);
  later = sandbox_test_bwrap_children ();
  g_assert_cmpuint (after->len, ==, 0);
  g_assert_cmpuint (later->len, ==, 0);
  /* Its end, or the stop's kill, or its deadline: all the same here. */
  result = sandbox_process_wait (process, NULL, NULL);
}

/* A stop that races the end of a command — one that exits, one that its
 * deadline kills — leaves no ready sandbox. Remove the discard in
 * sandbox_bubblewrap_driver_stop() to see one left when the command had
 * ended first. */
static void
test_stop_as_command_ends_leaves_none (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxCommand) quick = sandbox_command_new ("/usr/bin/true");
  g_autoptr(SandboxCommand) overdue = sandbox_command_new ("/bin/sleep");

  fixture_open (&f, NULL);
  sandbox_command_add_arg (overdue, "5");
  sandbox_command_set_timeout_ms (overdue, 20);
  /* A cold `true` takes 5 to 20 ms here: the stops fall before, during
   * and after its end, and around the deadline. */
  for (guint i = 0; i < 16; i++)
    {
      stop_as_command_ends (&f, quick, i * 1500);
      stop_as_command_ends (&f, overdue, 15 * 1000 + i * 1000);
    }
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* A command after set_network_policy sees the new policy, and the ready
 * sandbox built from the old one is gone before set_network_policy
 * returns. Remove the discard in sandbox_bubblewrap_driver_set_network_policy()
 * to see the old bwrap still there. The revision check in
 * sandbox_bubblewrap_ready_take() is the second defence: remove both to
 * see the deny-all command get the allow-all sandbox's tap0. */
static void
test_policy_change_discards (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  g_autofree char *allowed = NULL;
  g_autofree char *denied = NULL;
  int pidfd;

  /* An allow-all guest has slirp4netns's tap0; a deny-all one only lo. */
  fixture_open (&f, NULL);
  handle = create_session (&f, "\"allow-all\"");
  allowed = sandbox_test_guest_sh (sandbox_handle_get_session (handle), "cat /proc/net/dev");
  g_assert_nonnull (strstr (allowed, "tap0:"));
  pidfd = ready_pidfd ();

  g_assert_true (sandbox_session_set_network_policy (sandbox_handle_get_session (handle), deny,
                                                     NULL, &error));
  g_assert_no_error (error);
  g_assert_true (has_exited (pidfd, 0));
  close (pidfd);
  g_assert_cmpuint (count_bwrap_children (), ==, 0);

  denied = sandbox_test_guest_sh (sandbox_handle_get_session (handle), "cat /proc/net/dev");
  g_assert_null (strstr (denied, "tap0:"));
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* Stop and delete leave no bwrap. Remove the discard in
 * sandbox_bubblewrap_driver_stop() to see one left. */
static void
test_stop_and_delete_discard (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  int pidfd;

  fixture_open (&f, NULL);

  handle = create_session (&f, "\"deny-all\"");
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (handle), "true"));
  pidfd = ready_pidfd ();
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (has_exited (pidfd, 0));
  close (pidfd);
  g_assert_cmpuint (count_bwrap_children (), ==, 0);
  g_clear_object (&handle);

  handle = create_session (&f, "\"deny-all\"");
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (handle), "true"));
  pidfd = ready_pidfd ();
  g_assert_true (sandbox_handle_delete (handle, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (has_exited (pidfd, 0));
  close (pidfd);
  g_assert_cmpuint (count_bwrap_children (), ==, 0);
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* Unused, a ready sandbox goes after ready-idle-timeout-ms, 2 s here: it
 * is still there a moment after its launch, and gone long before the
 * default 30 s would end it. Make idle_cb() in sandbox-bubblewrap-ready.c
 * return without killing, or the pool keep the default whatever the
 * property says, to see it stay; shorten the pool's timeout to a few
 * milliseconds to see it gone at once. */
static void
test_idle_timeout_discards (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  guint idle_timeout_ms = 0;
  int pidfd;

  fixture_open (&f, "ready-idle-timeout-ms", "2000", NULL);
  g_object_get (f.backend, "ready-idle-timeout-ms", &idle_timeout_ms, NULL);
  g_assert_cmpuint (idle_timeout_ms, ==, 2000);
  handle = create_session (&f, "\"deny-all\"");
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (handle), "true"));
  /* The timeout counts from the launch, a moment before this sees the
   * sandbox running: bounds far from 2 s either way, so that neither a
   * slow launch nor a slow wake-up makes a difference. */
  pidfd = ready_pidfd ();
  g_assert_false (has_exited (pidfd, 200));
  g_assert_true (has_exited (pidfd, 10 * 1000));
  close (pidfd);
  /* The next command runs cold, and leaves a new one ready. */
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (handle), "true"));
  close (ready_pidfd ());
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* The deadline counts from the command's delivery, not from the start of
 * the sandbox it runs in: a 1 s deadline, a sandbox ready for 1.5 s. */
static void
test_deadline_counts_from_delivery (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sleep");
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  fixture_open (&f, NULL);
  handle = create_session (&f, "\"deny-all\"");
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (handle), "true"));
  close (ready_pidfd ());
  g_usleep (1500 * 1000);   /* the session's think time, the point of the test */
  sandbox_command_add_arg (command, "0.3");
  sandbox_command_set_timeout_ms (command, 1000);
  result = sandbox_session_run (sandbox_handle_get_session (handle), command, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* The backend bounds them: with max-ready-sandboxes 1, two sessions that
 * ran a command hold one between them; with 0, none. */
static void
test_bounded_per_backend (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) a = NULL;
  g_autoptr(SandboxHandle) b = NULL;
  g_autoptr(GArray) pids = NULL;
  g_autoptr(GError) error = NULL;

  fixture_open (&f, "max-ready-sandboxes", "1", NULL);
  a = create_session (&f, "\"deny-all\"");
  b = create_session (&f, "\"deny-all\"");
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (a), "true"));
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (b), "true"));
  /* b found the pool full when its command ended: a's is the only one. */
  pids = sandbox_test_wait_for_bwrap_children (1);
  g_assert_cmpuint (pids->len, ==, 1);
  g_clear_object (&a);
  g_clear_object (&b);
  sandbox_test_fixture_tear_down (&f, NULL);

  fixture_open (&f, "max-ready-sandboxes", "0", NULL);
  a = create_session (&f, "\"deny-all\"");
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (a), "true"));
  g_clear_pointer (&pids, g_array_unref);
  /* The command's own bwrap may still be exiting; none stays (the idle
   * timeout, 30 s, is longer than this waits). */
  pids = sandbox_test_wait_for_bwrap_children (0);
  g_assert_cmpuint (pids->len, ==, 0);
  g_clear_object (&a);
  sandbox_test_fixture_tear_down (&f, NULL);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/ready/next-command-runs-in-ready-sandbox",
                   test_next_command_runs_in_ready_sandbox);
  g_test_add_func ("/sandbox/ready/confined-as-cold", test_ready_confined_as_cold);
  g_test_add_func ("/sandbox/ready/writable-places-bounded", test_writable_places_bounded);
  g_test_add_func ("/sandbox/ready/next-sandbox-starts-after-command-exits",
                   test_next_sandbox_starts_after_command_exits);
  g_test_add_func ("/sandbox/ready/command-ends-with-its-tree", test_command_ends_with_its_tree);
  g_test_add_func ("/sandbox/ready/policy-change-discards", test_policy_change_discards);
  g_test_add_func ("/sandbox/ready/stop-and-delete-discard", test_stop_and_delete_discard);
  g_test_add_func ("/sandbox/ready/stop-as-command-ends-leaves-none",
                   test_stop_as_command_ends_leaves_none);
  g_test_add_func ("/sandbox/ready/idle-timeout-discards", test_idle_timeout_discards);
  g_test_add_func ("/sandbox/ready/deadline-counts-from-delivery",
                   test_deadline_counts_from_delivery);
  g_test_add_func ("/sandbox/ready/bounded-per-backend", test_bounded_per_backend);
  return g_test_run ();
}
