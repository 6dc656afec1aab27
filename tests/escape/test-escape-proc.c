/* test-escape-proc.c — host kernel state through /proc, as a guest sees it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attack class "host kernel state" (issue 14, item 1). A guest of a host
 * that runs as root used to be host uid 0 without capabilities, and the
 * kernel lets host uid 0 write most of /proc/sys whatever its capabilities
 * (sysctl permissions compare the euid with the global root, nothing
 * else): kernel/core_pattern pointed at a pipe into the workspace is code
 * execution as host root. bwrap's own covering of /proc/sys misses it: it
 * covers a subdirectory only when access(W_OK) on the directory succeeds,
 * and /proc/sys itself is never writable, only the files in it.
 *
 * Stands for: Docker/runc's readonlyPaths and maskedPaths (/proc/sys,
 * /proc/sysrq-trigger, /proc/irq, /proc/bus, /proc/fs; /proc/kcore,
 * /proc/keys, /proc/timer_list, /proc/sched_debug, …), CVE-2016-8867-class
 * "container root writes host sysctls", and the core_pattern escapes
 * (e.g. the 2022 "cgroups release_agent / core_pattern" container breakouts).
 *
 * To see these tests fail: on a build where guests still run as host
 * root (before the guest-uid property), remove the call of
 * add_proc_covering() in drivers/bubblewrap/sandbox-bubblewrap-args.c and
 * run as root: the guest then opens core_pattern, panic, drop_caches, …
 * for writing and writes core_pattern's own value back, and reads
 * /proc/timer_list. Since guests run as the overflow uid, take out both
 * that call and the credential switch (the `guest-uid` default in
 * sandbox-bubblewrap-backend.c made the host's euid) to see the same.
 * Run unprivileged the guest is the host user and never had these powers:
 * the tests pass there with or without the covering, as they must.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sandbox.h>

#include "escape-common.h"

static char *
read_host_file (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, &error))
    return NULL;
  return contents;
}

/* Every file under /proc a guest may open for writing, but its own
 * processes' (/proc/<pid>, self, thread-self). The only ones allowed are
 * the pressure-stall files: a write there adds a trigger to the writer's
 * own open file, it sets nothing host-wide. `find -writable` (access(W_OK):
 * the sysctl permission and the read-only mount) picks the candidates,
 * an open for appending (dash's `>>`, nothing written) decides: a masking
 * /dev/null passes access() but cannot be opened on its nodev mount. */
static void
test_proc_has_no_writable_knob (void)
{
  EscapeSession guest = { 0 };
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GString) unexpected = g_string_new (NULL);

  escape_session_open (&guest, NULL);
  out = escape_sh (guest.session,
                  "find /proc \\( -path '/proc/[0-9]*' -o -path /proc/self "
                  "-o -path /proc/thread-self \\) -prune "
                  "-o -writable \\( -type f -o -type c \\) -print 2>/dev/null |"
                  "while read -r f; do true 2>/dev/null >> \"$f\" && echo \"$f\"; done; true");
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (lines[i][0] != '\0' && !g_str_has_prefix (lines[i], "/proc/pressure/"))
      g_string_append_printf (unexpected, "%s\n", lines[i]);
  if (unexpected->len > 0)
    g_error ("a guest can open these for writing:\n%s", unexpected->str);
  escape_session_close (&guest);
}

/* The knobs the issue names, opened for writing as an attacker would
 * (dash's `>>`: O_WRONLY | O_APPEND, nothing written), and core_pattern
 * written with its own current value — never anything else, and never a
 * key into sysrq-trigger. */
static void
test_named_knobs_refuse_writers (void)
{
  static const char *const knobs[] = {
    "/proc/sys/kernel/core_pattern",
    "/proc/sys/kernel/panic",
    "/proc/sys/kernel/modprobe",
    "/proc/sys/kernel/sysrq",
    "/proc/sys/vm/drop_caches",
    "/proc/sys/fs/protected_symlinks",
    "/proc/sys/fs/suid_dumpable",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sysrq-trigger",
    "/proc/irq/default_smp_affinity",
    NULL,
  };
  EscapeSession guest = { 0 };
  g_autofree char *before = read_host_file ("/proc/sys/kernel/core_pattern");
  g_autofree char *after = NULL;
  g_autofree char *joined = g_strjoinv (" ", (char **) knobs);
  g_autofree char *script = NULL;
  g_autofree char *out = NULL;

  g_assert_nonnull (before);
  escape_session_open (&guest, NULL);
  script = g_strdup_printf ("for f in %s; do"
                            "  [ -e \"$f\" ] || continue;"
                            "  if ( : >> \"$f\" ) 2>/dev/null; then echo \"opened $f\"; fi;"
                            "done;"
                            "v=$(cat /proc/sys/kernel/core_pattern) &&"
                            "  printf '%%s\\n' \"$v\" 2>/dev/null >> /proc/sys/kernel/core_pattern &&"
                            "  echo 'wrote /proc/sys/kernel/core_pattern';"
                            "true", joined);
  out = escape_sh (guest.session, script);
  after = read_host_file ("/proc/sys/kernel/core_pattern");
  /* Never altered, whatever happened inside. */
  g_assert_cmpstr (after, ==, before);
  if (out[0] != '\0')
    g_error ("a guest reached host kernel knobs:\n%s", out);
  escape_session_close (&guest);
}

/* Files that tell a guest about the host's kernel memory, timers, keys and
 * other processes (Docker's maskedPaths, and the root-only ones a root
 * guest could read): none gives the guest a byte. dd with
 * iflag=nonblock, so /proc/kmsg cannot block. */
static void
test_masked_files_read_nothing (void)
{
  static const char *const masked[] = {
    "kcore", "keys", "key-users", "timer_list", "timer_stats", "sched_debug",
    "latency_stats", "kmsg", "kallsyms", "slabinfo", "vmallocinfo",
    "kpagecount", "kpageflags", "kpagecgroup", NULL,
  };
  static const char *const masked_directories[] = { "acpi", "scsi", "asound", NULL };
  EscapeSession guest = { 0 };
  g_autoptr(GString) script = g_string_new (NULL);
  g_autofree char *out = NULL;

  for (guint i = 0; masked[i] != NULL; i++)
    g_string_append_printf (script,
                            "f=/proc/%s; if [ -e $f ]; then"
                            "  n=$(dd if=$f bs=64 count=1 iflag=nonblock status=none 2>/dev/null | wc -c);"
                            "  [ \"$n\" = 0 ] || echo \"read $n bytes of $f\";"
                            "fi;", masked[i]);
  for (guint i = 0; masked_directories[i] != NULL; i++)
    g_string_append_printf (script,
                            "d=/proc/%s; if [ -d $d ] && [ -n \"$(ls -A $d)\" ]; then"
                            "  echo \"$d lists $(ls -A $d | head -3 | tr '\\n' ' ')\";"
                            "fi;", masked_directories[i]);
  g_string_append (script, "true");

  escape_session_open (&guest, NULL);
  out = escape_sh (guest.session, script->str);
  if (out[0] != '\0')
    g_error ("a guest reads host kernel state:\n%s", out);
  escape_session_close (&guest);
}

/* The covering keeps /proc/sys readable (glibc and tools read it) and, as
 * before, per-namespace values are the guest's own: the guest's network
 * namespace has only lo, whatever interfaces the host has. */
static void
test_sysctls_stay_readable_and_namespaced (void)
{
  EscapeSession guest = { 0 };
  g_autofree char *release = NULL;
  g_autofree char *host_release = read_host_file ("/proc/sys/kernel/osrelease");
  g_autofree char *interfaces = NULL;

  escape_session_open (&guest, NULL);
  release = escape_sh (guest.session, "cat /proc/sys/kernel/osrelease");
  g_assert_cmpstr (release, ==, host_release);
  interfaces = escape_sh (guest.session, "ls /proc/sys/net/ipv4/conf | sort | tr '\\n' ' '");
  g_assert_cmpstr (interfaces, ==, "all default lo ");
  g_free (escape_sh (guest.session, "getconf NGROUPS_MAX >/dev/null && cat /proc/sys/vm/overcommit_memory"));
  escape_session_close (&guest);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  if (!g_file_test ("/usr/bin/bwrap", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("bubblewrap is not installed");
      return g_test_run ();
    }

  g_test_add_func ("/sandbox/escape/proc/no-writable-knob", test_proc_has_no_writable_knob);
  g_test_add_func ("/sandbox/escape/proc/named-knobs-refuse-writers",
                   test_named_knobs_refuse_writers);
  g_test_add_func ("/sandbox/escape/proc/masked-files-read-nothing", test_masked_files_read_nothing);
  g_test_add_func ("/sandbox/escape/proc/sysctls-readable-and-namespaced",
                   test_sysctls_stay_readable_and_namespaced);
  return g_test_run ();
}
