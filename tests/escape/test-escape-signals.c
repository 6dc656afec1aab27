/* test-escape-signals.c — ptrace, signals and the terminal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The attack class "ptrace and signals" of issue 14. Modelled on:
 * - bubblewrap CVE-2017-5226 (and flatpak's, and util-linux su/runuser's
 *   CVE-2016-2779, and lxc's CVE-2016-8655-era reports): a sandboxed
 *   process sharing the host's controlling terminal pushes input into it
 *   with ioctl(TIOCSTI), typed into the host's shell when the sandbox
 *   exits; bwrap's --new-session is the fix;
 * - Docker's `--pid=host` advisories and runc CVE-2016-3697: a process
 *   that sees host pids can signal or ptrace them;
 * - kill(-1, SIGKILL) from a sandbox, which reaches every process the
 *   sender may signal when there is no pid namespace.
 * The seccomp refusals of ptrace and TIOCSTI themselves are checked in
 * tests/bubblewrap/test-hardening.c (/sandbox/hardening/seccomp/denies);
 * this file shows what holds with the filter off as well.
 * Run as root and, through run-unprivileged.sh, as an unprivileged user.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "escape-common.h"

/* A running `sleep MARKER` in session @s; returns its host pid. */
static SandboxProcess *
spawn_sleeper (EscapeSession *s,
               const char    *marker,
               GPid          *host_pid)
{
  g_autofree char *script = g_strdup_printf ("exec sleep %s", marker);
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sh");
  g_autoptr(GError) error = NULL;
  SandboxProcess *process;

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, script);
  process = sandbox_session_spawn (s->session, command, NULL, &error);
  g_assert_no_error (error);

  *host_pid = 0;
  for (guint i = 0; i < 2000 && *host_pid == 0; i++)
    {
      g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
      const char *name;

      while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
        {
          g_autofree char *path = g_strdup_printf ("/proc/%s/cmdline", name);
          g_autofree char *cmdline = NULL;
          gsize length;

          if (g_ascii_isdigit (name[0]) &&
              g_file_get_contents (path, &cmdline, &length, NULL) &&
              g_str_equal (cmdline, "sleep") && length > 6 && g_str_equal (cmdline + 6, marker))
            *host_pid = atoi (name);
        }
      if (*host_pid == 0)
        g_usleep (5 * 1000);   /* /proc has no notification of a new process */
    }
  g_assert_cmpint (*host_pid, >, 0);
  return process;
}

static char *
new_marker (void)
{
  return g_strdup_printf ("%u.%03u", 100000 + g_random_int_range (0, 99999),
                          g_random_int_range (0, 999));
}

/* Another session's process and the host's own (this test) cannot be
 * signalled or traced from a guest: their pids do not exist in its pid
 * namespace (ESRCH), with the seccomp filter off too (which cannot scope
 * ptrace or kill by pid namespace, so the namespace is the defence).
 *
 * To see it fail (verified): remove both pid namespaces: bwrap's (replace
 * `--unshare-all` by `--unshare-user --unshare-net --unshare-ipc
 * --unshare-uts --unshare-cgroup-try` in sandbox-bubblewrap-args.c) and the
 * launcher's wrapper (drop CLONE_NEWPID from wrapper_clone_flags() in
 * sandbox-bubblewrap-launcher.c); either alone keeps the case passing:
 * `kill -0` of A's sleep then succeeds (0) — and a root-hosted guest could
 * signal every process of its host uid. */
static void
test_other_processes_unreachable (void)
{
  EscapeSession a = { 0 };
  EscapeSession b = { 0 };
  g_autofree char *marker = new_marker ();
  g_autoptr(SandboxProcess) sleeper = NULL;
  g_autoptr(GError) error = NULL;
  GPid victim = 0;
  const GPid targets[2] = { 0, getpid () };

  escape_session_open (&a, NULL);
  escape_session_open (&b, "seccomp", "false", NULL);
  escape_install_probe (b.session);
  sleeper = spawn_sleeper (&a, marker, &victim);

  for (guint i = 0; i < G_N_ELEMENTS (targets); i++)
    {
      GPid pid = i == 0 ? victim : targets[i];
      g_autofree char *kill_args = g_strdup_printf ("kill %d 0", (int) pid);
      g_autofree char *kill9_args = g_strdup_printf ("kill %d 9", (int) pid);
      g_autofree char *ptrace_args = g_strdup_printf ("ptrace-attach %d", (int) pid);

      g_assert_cmpint (pid, >, 16);   /* not a pid the guest's namespace has */
      g_assert_cmpint (escape_probe_errno (b.session, kill_args), ==, ESRCH);
      g_assert_cmpint (escape_probe_errno (b.session, kill9_args), ==, ESRCH);
      g_assert_cmpint (escape_probe_errno (b.session, ptrace_args), ==, ESRCH);
    }
  /* The victim lives on. */
  g_assert_cmpint (kill (victim, 0), ==, 0);
  g_assert_false (sandbox_process_is_finished (sleeper));

  sandbox_process_stop (sleeper, NULL, &error);
  g_assert_no_error (error);
  escape_session_close (&b);
  escape_session_close (&a);
}

/* kill(-1, SIGKILL) from a guest reaches its own namespace only: another
 * session's command and the host survive it. The same defence as
 * test_other_processes_unreachable(); not shown failing here, since without
 * the pid namespaces it would kill every process of the guest's host uid
 * (this test's, unprivileged). */
static void
test_kill_all_stays_inside (void)
{
  EscapeSession a = { 0 };
  EscapeSession b = { 0 };
  g_autofree char *marker = new_marker ();
  g_autoptr(SandboxProcess) sleeper = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  GPid victim = 0;

  escape_session_open (&a, NULL);
  escape_session_open (&b, "seccomp", "false", NULL);
  escape_install_probe (b.session);
  sleeper = spawn_sleeper (&a, marker, &victim);

  /* kill(-1) succeeds only when it signalled something (else ESRCH): here
   * the guest's own background sleep. */
  out = escape_sh (b.session, "sleep 1000 & exec /workspace/.escape-probe kill -1 9");
  g_assert_cmpstr (out, ==, "0\n");

  g_assert_cmpint (kill (victim, 0), ==, 0);
  g_assert_false (sandbox_process_is_finished (sleeper));
  sandbox_process_stop (sleeper, NULL, &error);
  g_assert_no_error (error);
  escape_session_close (&b);
  escape_session_close (&a);
}

/* The child side of test_tiocsti_host_terminal(): run with the test's
 * controlling terminal; prints the probes' errnos. */
static int
tty_child (const char *seccomp)
{
  EscapeSession s = { 0 };
  g_autofree char *open_tty = NULL;
  g_autofree char *tiocsti_tty = NULL;
  g_autofree char *tiocsti_stdin = NULL;

  escape_session_open (&s, "seccomp", seccomp, NULL);
  escape_install_probe (s.session);
  open_tty = escape_probe (s.session, "open-tty");
  tiocsti_tty = escape_probe (s.session, "tiocsti-tty");
  tiocsti_stdin = escape_probe (s.session, "tiocsti 0");
  g_print ("%s%s%s", open_tty, tiocsti_tty, tiocsti_stdin);
  escape_session_close (&s);
  return 0;
}

static void
make_controlling_terminal (gpointer data)
{
  const char *slave = data;
  int fd;

  /* After fork, before exec: only async-signal-safe calls. */
  if (setsid () < 0 || (fd = open (slave, O_RDWR)) < 0 || ioctl (fd, TIOCSCTTY, 0) < 0 ||
      dup2 (fd, 0) < 0)
    _exit (99);
}

/* bubblewrap CVE-2017-5226: the host application runs on a terminal (an
 * agent's CLI in the user's shell). The guest must not be able to reach
 * it: it has no controlling terminal (bwrap's --new-session), its stdin
 * is a pipe, and the seccomp filter refuses TIOCSTI besides. The test
 * gives a child of itself a pseudo-terminal as controlling terminal and
 * runs a session there; nothing may arrive in the terminal's input.
 *
 * To see it fail: remove `--new-session` from sandbox-bubblewrap-args.c;
 * with seccomp off the guest then opens /dev/tty (0) and pushes a newline
 * into the host terminal's input (read back here); with seccomp on it
 * opens /dev/tty but TIOCSTI is refused (EPERM). */
static void
check_tiocsti_host_terminal (gboolean seccomp)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  const char *argv[] = { self, "--tty-child", seccomp ? "true" : "false", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  /* No terminal to open; stdin a pipe, or the filter first. */
  g_autofree char *expected = g_strdup_printf ("%d\n%d\n%d\n", ENXIO, ENXIO,
                                               seccomp ? EPERM : ENOTTY);
  const char *slave;
  int master, reader, status = 0;
  char pending[16];

  master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (master, >=, 0);
  g_assert_cmpint (grantpt (master), ==, 0);
  g_assert_cmpint (unlockpt (master), ==, 0);
  slave = ptsname (master);
  g_assert_nonnull (slave);
  /* Holds the terminal open, so input pushed into it stays queued. */
  reader = open (slave, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  g_assert_cmpint (reader, >=, 0);

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, make_controlling_terminal,
                (gpointer) slave, &out, &err, &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("the terminal child failed (%d): %s", status, err);
  g_assert_cmpstr (out, ==, expected);
  /* Nothing was typed into the host's terminal. */
  g_assert_cmpint (read (reader, pending, sizeof pending), ==, -1);
  g_assert_cmpint (errno, ==, EAGAIN);

  close (reader);
  close (master);
}

static void
test_tiocsti_host_terminal (void)
{
  check_tiocsti_host_terminal (TRUE);
}

static void
test_tiocsti_host_terminal_without_seccomp (void)
{
  check_tiocsti_host_terminal (FALSE);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 3 && g_str_equal (argv[1], "--tty-child"))
    return tty_child (argv[2]);

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/escape/signals/other-processes-unreachable",
                   test_other_processes_unreachable);
  g_test_add_func ("/sandbox/escape/signals/kill-all-stays-inside", test_kill_all_stays_inside);
  g_test_add_func ("/sandbox/escape/signals/tiocsti-host-terminal", test_tiocsti_host_terminal);
  g_test_add_func ("/sandbox/escape/signals/tiocsti-host-terminal-without-seccomp",
                   test_tiocsti_host_terminal_without_seccomp);

  return g_test_run ();
}
