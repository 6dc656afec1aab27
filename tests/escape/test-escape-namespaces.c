/* test-escape-namespaces.c — namespaces a guest could share, make or join
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The attack class "namespaces" of issue 14. Modelled on:
 * - bubblewrap CVE-2017-5226 and flatpak's follow-ups: what the sandbox
 *   shares with the host by default is attack surface;
 * - runc CVE-2016-3697 and Docker's `--pid=host`/`--net=host` advisories: a
 *   container in the host's pid or network namespace sees and signals host
 *   processes, reaches host-local services;
 * - the long list of kernel CVEs reached through unprivileged namespaces
 *   (CVE-2022-0185 fsconfig, CVE-2022-25636 netfilter, CVE-2023-32233
 *   nf_tables): creating a namespace is how an unprivileged process gets
 *   capabilities over kernel code.
 * Already covered and not repeated here (tests/bubblewrap/test-hardening.c):
 * nested user namespaces refused with and without seccomp
 * (/sandbox/hardening/userns/…), setns and clone(CLONE_NEWUSER) refused by
 * the filter (/sandbox/hardening/seccomp/denies).
 * Run as root and, through run-unprivileged.sh, as an unprivileged user.
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape-common.h"

/* The namespaces bwrap --unshare-all gives the guest. `time` is not among
 * them (bwrap 0.8 has no --unshare-time); it holds only clock offsets. */
static const char * const unshared[] = {
  "user", "mnt", "pid", "net", "ipc", "uts", "cgroup", NULL
};

/* Every namespace but time is the guest's own: none is the host's.
 *
 * To see it fail: replace `--unshare-all` by `--unshare-user` alone in
 * sandbox-bubblewrap-args.c; pid, net, ipc, uts and cgroup are then the
 * host's. */
static void
test_namespaces_are_the_guests_own (void)
{
  EscapeSession s = { 0 };
  g_autoptr(GString) script = g_string_new ("");

  for (guint i = 0; unshared[i] != NULL; i++)
    g_string_append_printf (script, "readlink /proc/self/ns/%s; ", unshared[i]);

  escape_session_open (&s, NULL);
  {
    g_autofree char *out = escape_sh (s.session, script->str);
    g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

    for (guint i = 0; unshared[i] != NULL; i++)
      {
        g_autofree char *path = g_strdup_printf ("/proc/self/ns/%s", unshared[i]);
        g_autofree char *host = g_file_read_link (path, NULL);

        g_assert_nonnull (host);
        g_assert_nonnull (lines[i]);
        g_assert_true (g_str_has_prefix (lines[i], unshared[i]));
        if (g_str_equal (lines[i], host))
          g_error ("the guest shares the host's %s namespace (%s)", unshared[i], host);
      }
  }
  escape_session_close (&s);
}

/* New namespaces of any kind are refused, with and without the seccomp
 * filter: the guest has no capability (--cap-drop ALL) and sits in a user
 * namespace that may hold no further one (--disable-userns). The user
 * namespace cases are test-hardening.c's; these are the others, which an
 * unprivileged process can only make with CAP_SYS_ADMIN in its own user
 * namespace.
 *
 * To see it fail: with seccomp = FALSE, replace `--cap-drop ALL` by
 * `--cap-add ALL` in sandbox-bubblewrap-args.c: `unshare -m`, `-n`, … then
 * succeed. */
static void
check_unshare_refused (gboolean seccomp)
{
  EscapeSession s = { 0 };
  static const char * const attacks[] = {
    "unshare -m true", "unshare -n true", "unshare -i true", "unshare -u true",
    "unshare -C true", "unshare -p -f true", "unshare -T true",
    "unshare -m -n -i -u -p -f --mount-proc true", NULL
  };

  escape_session_open (&s, "seccomp", seccomp ? "true" : "false", NULL);
  for (guint i = 0; attacks[i] != NULL; i++)
    if (escape_sh_status (s.session, attacks[i], NULL, NULL) == 0)
      g_error ("guest succeeded: %s (seccomp %s)", attacks[i], seccomp ? "on" : "off");
  escape_session_close (&s);
}

static void
test_unshare_refused (void)
{
  check_unshare_refused (TRUE);
}

static void
test_unshare_refused_without_seccomp (void)
{
  check_unshare_refused (FALSE);
}

/* The guest sees its own processes only: bwrap's init (pid 1), the command
 * and what it starts (and bwrap itself without bwrap's pid namespace). Not
 * the host's, not another session's, whose namespaces it therefore cannot
 * name in /proc/N/ns to setns() into them (runc CVE-2016-3697-style
 * joins).
 *
 * To see it fail (verified): remove both pid namespaces: bwrap's (replace
 * `--unshare-all` by `--unshare-user --unshare-net --unshare-ipc
 * --unshare-uts --unshare-cgroup-try` in sandbox-bubblewrap-args.c) and the
 * launcher's wrapper (drop CLONE_NEWPID from wrapper_clone_flags() in
 * sandbox-bubblewrap-launcher.c); either alone keeps the case passing: the
 * guest then lists every host process, session A's sleep among them (109
 * here). */
static void
test_sees_only_its_own_processes (void)
{
  EscapeSession a = { 0 };
  EscapeSession b = { 0 };
  g_autofree char *marker = g_strdup_printf ("%u.%03u", 100000 + g_random_int_range (0, 99999),
                                             g_random_int_range (0, 999));
  g_autofree char *script = g_strdup_printf ("exec sleep %s", marker);
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sh");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  /* The marker split in two, so that the grep's own command line (and
   * bwrap's, which holds it) does not match. */
  g_autofree char *grep = g_strdup_printf ("x='%.3s'; y='%s'; grep -l -- \"$x$y\" /proc/[0-9]*/cmdline || true",
                                           marker, marker + 3);
  g_autofree char *control = g_strdup_printf ("x='%.3s'; y='%s'; sleep \"$x$y\" & "
                                              "for i in $(seq 1000); do "
                                              "  grep -l -- \"$x$y\" /proc/[0-9]*/cmdline && break; "
                                              "done; kill $!",
                                              marker, marker + 3);
  g_auto(GStrv) pids = NULL;
  gboolean running = FALSE;

  escape_session_open (&a, NULL);
  escape_session_open (&b, NULL);
  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, script);
  process = sandbox_session_spawn (a.session, command, NULL, &error);
  g_assert_no_error (error);
  /* /proc has no notification of a new process. Seen once is enough: a
   * second look can miss it while the shell's exec of sleep swaps its
   * command line (once in 105 runs of CI). */
  for (guint i = 0; i < 1000 && !running; i++)
    {
      running = escape_count_processes_with_arg (marker) > 0;
      if (!running)
        g_usleep (5 * 1000);
    }
  g_assert_true (running);

  /* B's guest: bwrap's processes, its shell and what the shell runs (a
   * handful, where the host has a hundred or more); no sleep of A. */
  out = escape_sh (b.session, "ls -d /proc/[0-9]* | wc -l");
  g_assert_cmpint (atoi (out), <=, 8);
  g_clear_pointer (&out, g_free);
  out = escape_sh (b.session, grep);
  g_assert_cmpstr (out, ==, "");
  g_clear_pointer (&out, g_free);
  /* The search finds such a sleep where there is one: B's own. */
  out = escape_sh (b.session, control);
  g_assert_cmpstr (out, !=, "");

  sandbox_process_stop (process, NULL, &error);
  g_assert_no_error (error);
  escape_session_close (&b);
  escape_session_close (&a);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/escape/namespaces/the-guests-own", test_namespaces_are_the_guests_own);
  g_test_add_func ("/sandbox/escape/namespaces/unshare-refused", test_unshare_refused);
  g_test_add_func ("/sandbox/escape/namespaces/unshare-refused-without-seccomp",
                   test_unshare_refused_without_seccomp);
  g_test_add_func ("/sandbox/escape/namespaces/sees-only-its-own-processes",
                   test_sees_only_its_own_processes);

  return g_test_run ();
}
