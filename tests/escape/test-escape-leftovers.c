/* test-escape-leftovers.c — nothing a guest starts outlives its command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The attack class "leftovers after stop/deadline" of issue 14: a guest
 * double-forks, calls setsid(), ignores SIGTERM and SIGHUP, so that its
 * background processes leave the command's process group and survive the
 * group kill. Modelled on:
 * - bubblewrap issue 633 and --die-with-parent's limits, runc's and
 *   Docker's `docker exec` orphans (moby#9098-era reports, runc
 *   CVE-2016-9962's long-lived init): a process escaping its supervisor
 *   keeps running on the host after the sandbox is "stopped";
 * - kill-by-process-group supervisors defeated by setsid().
 * The defence is two pid namespaces, each enough alone: when bwrap's
 * sandbox init (pid 1 of the guest's namespace) dies, or bwrap itself (the
 * init of the launcher's wrapper namespace, issue 14 item 2), the kernel
 * kills every process of that namespace, whatever its session or group. Host crashes (the host process itself killed) belong to
 * test-escape-crash.c.
 * Run as root and, through run-unprivileged.sh, as an unprivileged user.
 */

#include <errno.h>
#include <string.h>

#include "escape-common.h"

static char *
new_marker (void)
{
  return g_strdup_printf ("%u.%03u", 200000 + g_random_int_range (0, 99999),
                          g_random_int_range (0, 999));
}

/* Starts, in the background, every kind of escapee a shell can make, each a
 * `sleep MARKER` (so the host can find it in /proc), then runs @tail. */
static char *
escapees_script (const char *marker,
                 const char *tail)
{
  return g_strdup_printf ("trap '' TERM HUP INT; "
                          /* plain background child */
                          "sleep %1$s </dev/null >/dev/null 2>&1 & "
                          /* double fork: reparented to the namespace's init */
                          "( sleep %1$s </dev/null >/dev/null 2>&1 & ) ; "
                          /* its own session and group, SIGHUP ignored */
                          "setsid sh -c 'trap \"\" TERM HUP; exec sleep %1$s' </dev/null >/dev/null 2>&1 & "
                          /* double fork and setsid */
                          "( setsid nohup sleep %1$s </dev/null >/dev/null 2>&1 & ) ; "
                          /* wait until all four run (every sleep of this
                           * namespace is one of them) */
                          "n=0; while [ \"$(pgrep -c -x sleep)\" -lt 4 ]; do "
                          "  n=$((n+1)); [ $n -lt 5000 ] || exit 3; "
                          "done; %2$s",
                          marker, tail);
}

/* A command that exits at once, leaving its escapees behind: none of them
 * outlives it.
 *
 * To see it fail (verified): remove both pid namespaces: bwrap's (replace
 * `--unshare-all` by `--unshare-user --unshare-net --unshare-ipc
 * --unshare-uts --unshare-cgroup-try` in sandbox-bubblewrap-args.c) and the
 * launcher's wrapper (drop CLONE_NEWPID from wrapper_clone_flags() in
 * sandbox-bubblewrap-launcher.c); either alone keeps the case passing: the
 * setsid'd and double-forked sleeps then survive on the host. */
static void
test_no_leftovers_after_exit (void)
{
  EscapeSession s = { 0 };
  g_autofree char *marker = new_marker ();
  g_autofree char *script = escapees_script (marker, "exit 0");

  escape_session_open (&s, NULL);
  g_free (escape_sh (s.session, script));
  escape_wait_until_no_process_with (marker);
  escape_session_close (&s);
}

/* The deadline kills the group; the escapees, outside it, die with the
 * namespace. */
static void
test_no_leftovers_after_deadline (void)
{
  EscapeSession s = { 0 };
  g_autofree char *marker = new_marker ();
  g_autofree char *tail = g_strdup_printf ("exec sleep %s", marker);
  g_autofree char *script = escapees_script (marker, tail);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  escape_session_open (&s, NULL);
  result = escape_run_sh (s.session, script, 2000, &error);
  g_assert_null (result);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  escape_wait_until_no_process_with (marker);
  escape_session_close (&s);
}

static void
on_stdout_data (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  gboolean *ready = user_data;
  gsize length;
  const char *text = g_bytes_get_data (data, &length);

  if (g_strstr_len (text, length, "ready") != NULL)
    *ready = TRUE;
}

/* Spawns @script and waits until its escapees all run (the script prints
 * "ready" once they do; the stdout-data signal brings it). */
static SandboxProcess *
spawn_ready (SandboxSession *session,
             const char     *marker)
{
  g_autofree char *tail = g_strdup_printf ("echo ready; exec sleep %s", marker);
  g_autofree char *script = escapees_script (marker, tail);
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sh");
  g_autoptr(GError) error = NULL;
  SandboxProcess *process;
  gboolean ready = FALSE;

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, script);
  process = sandbox_session_spawn (session, command, NULL, &error);
  g_assert_no_error (error);
  /* Connected before the main context runs: no output is missed. */
  g_signal_connect (process, "stdout-data", G_CALLBACK (on_stdout_data), &ready);
  while (!ready && !sandbox_process_is_finished (process))
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (ready);
  g_signal_handlers_disconnect_by_data (process, &ready);
  g_assert_false (sandbox_process_is_finished (process));
  return process;
}

/* Stopping one process, and stopping or deleting the session, leaves no
 * escapee running. */
static void
test_no_leftovers_after_process_stop (void)
{
  EscapeSession s = { 0 };
  g_autofree char *marker = new_marker ();
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) error = NULL;

  escape_session_open (&s, NULL);
  process = spawn_ready (s.session, marker);
  g_assert_true (sandbox_process_stop (process, NULL, &error));
  g_assert_no_error (error);
  escape_wait_until_no_process_with (marker);
  escape_session_close (&s);
}

static void
test_no_leftovers_after_session_stop (void)
{
  EscapeSession s = { 0 };
  g_autofree char *first = new_marker ();
  g_autofree char *second = new_marker ();
  g_autoptr(SandboxProcess) a = NULL;
  g_autoptr(SandboxProcess) b = NULL;
  g_autoptr(GError) error = NULL;

  escape_session_open (&s, NULL);
  a = spawn_ready (s.session, first);
  b = spawn_ready (s.session, second);
  g_assert_true (sandbox_handle_stop (s.handle, NULL, &error));
  g_assert_no_error (error);
  escape_wait_until_no_process_with (first);
  escape_wait_until_no_process_with (second);
  escape_session_close (&s);
}

static void
test_no_leftovers_after_delete (void)
{
  EscapeSession s = { 0 };
  g_autofree char *marker = new_marker ();
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) error = NULL;

  escape_session_open (&s, NULL);
  process = spawn_ready (s.session, marker);
  g_assert_true (sandbox_handle_delete (s.handle, NULL, &error));
  g_assert_no_error (error);
  escape_wait_until_no_process_with (marker);
  g_clear_object (&s.handle);
  s.session = NULL;
  escape_session_close (&s);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/escape/leftovers/after-exit", test_no_leftovers_after_exit);
  g_test_add_func ("/sandbox/escape/leftovers/after-deadline", test_no_leftovers_after_deadline);
  g_test_add_func ("/sandbox/escape/leftovers/after-process-stop",
                   test_no_leftovers_after_process_stop);
  g_test_add_func ("/sandbox/escape/leftovers/after-session-stop",
                   test_no_leftovers_after_session_stop);
  g_test_add_func ("/sandbox/escape/leftovers/after-delete", test_no_leftovers_after_delete);

  return g_test_run ();
}
