/* test-escape-dev.c — /dev, shared memory and terminals
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The attack class "/dev" of issue 14. Modelled on:
 * - Docker CVE-2014-6407/6408-era and `--privileged` advisories, runc
 *   CVE-2023-25809-style device exposures: a block device of the host
 *   (its disk) reachable from the sandbox is the whole host;
 * - flatpak's `--device=all` and `--device=shm` advisories (and
 *   CVE-2021-41133's portal bypasses): a /dev/shm or devpts shared with
 *   the host is a channel to host processes;
 * - CVE-2017-5226 again for the host's ptys (see test-escape-signals.c
 *   for TIOCSTI itself).
 * /proc (kcore, sysrq-trigger, sys) belongs to test-escape-proc.c.
 * Run as root and, through run-unprivileged.sh, as an unprivileged user.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <unistd.h>

#include "escape-common.h"

/* What bwrap's --dev gives: `name|type|major:minor (hex)`, in C byte order. */
static const char expected_dev[] =
  "/dev/core|symbolic link|0:0\n"
  "/dev/fd|symbolic link|0:0\n"
  "/dev/full|character special file|1:7\n"
  "/dev/null|character special file|1:3\n"
  "/dev/ptmx|symbolic link|0:0\n"
  "/dev/pts/ptmx|character special file|5:2\n"
  "/dev/pts|directory|0:0\n"
  "/dev/random|character special file|1:8\n"
  "/dev/shm|directory|0:0\n"
  "/dev/stderr|symbolic link|0:0\n"
  "/dev/stdin|symbolic link|0:0\n"
  "/dev/stdout|symbolic link|0:0\n"
  "/dev/tty|character special file|5:0\n"
  "/dev/urandom|character special file|1:9\n"
  "/dev/zero|character special file|1:5\n";

/* The guest's /dev is the minimal set: null, zero, full, random, urandom,
 * tty and a private devpts, nothing else; no block device anywhere the
 * guest can write or list outside /usr (which the host owns). Listed with
 * stat, not find -type: bind-mounted device nodes sit on placeholder files
 * whose directory entries say "regular file".
 *
 * To see it fail: replace `--dev /dev` by `--dev-bind /dev /dev` in
 * sandbox-bubblewrap-args.c: the host's devices (its disk among them) then
 * appear. */
static void
test_minimal_dev (void)
{
  EscapeSession s = { 0 };
  g_autofree char *dev = NULL;
  g_autofree char *devices = NULL;

  escape_session_open (&s, NULL);
  dev = escape_sh (s.session,
                   "stat -c '%n|%F|%t:%T' /dev/* /dev/pts/* /dev/shm/* 2>/dev/null | LC_ALL=C sort");
  g_assert_cmpstr (dev, ==, expected_dev);
  /* Every block or character device outside /dev and /proc. */
  devices = escape_sh (s.session,
                       "{ find / -xdev; find /tmp /run /workspace; } 2>/dev/null | "
                       "  while read -r f; do stat -c '%F %n' \"$f\"; done | "
                       "  grep -E '^(block|character)' || true");
  g_assert_cmpstr (devices, ==, "");
  escape_session_close (&s);
}

/* Device nodes cannot be made: mknod of a block or character device fails
 * with and without the filter (the kernel allows it only with CAP_MKNOD
 * in the initial user namespace), and every writable mount is nodev
 * besides, so a node would not open.
 *
 * To see it fail: not from our code (the kernel's rule holds whatever bwrap
 * is told); the nodev flags are checked in mountinfo here, and dropping
 * them (bwrap has no option to) would not make mknod work either. */
static void
check_mknod_refused (gboolean seccomp)
{
  EscapeSession s = { 0 };
  static const char * const attacks[] = {
    "mknod /tmp/disk b 254 0", "mknod /workspace/disk b 8 0", "mknod /tmp/mem c 1 1",
    "mknod /dev/shm/kmsg c 1 11", "mknod /workspace/tty c 4 1", NULL
  };
  g_autofree char *rw_dev_mounts = NULL;

  escape_session_open (&s, "seccomp", seccomp ? "true" : "false", NULL);
  for (guint i = 0; attacks[i] != NULL; i++)
    if (escape_sh_status (s.session, attacks[i], NULL, NULL) == 0)
      g_error ("guest succeeded: %s (seccomp %s)", attacks[i], seccomp ? "on" : "off");
  /* Writable mounts without nodev: only the /dev tmpfs itself holds nodes,
   * which bwrap binds read-write one by one. */
  rw_dev_mounts = escape_sh (s.session,
                             "while read -r id parent dev root point options rest; do "
                             "  case \",$options,\" in *,ro,*|*,nodev,*) ;; *) echo \"$point\";; esac; "
                             "done < /proc/self/mountinfo");
  g_assert_cmpstr (rw_dev_mounts,
                   ==, "/dev/null\n/dev/zero\n/dev/full\n/dev/random\n/dev/urandom\n/dev/tty\n/dev/pts\n");
  escape_session_close (&s);
}

static void
test_mknod_refused (void)
{
  check_mknod_refused (TRUE);
}

static void
test_mknod_refused_without_seccomp (void)
{
  check_mknod_refused (FALSE);
}

/* /dev/shm is the guest's own: a file the host keeps there is not visible,
 * one the guest makes does not reach the host. SysV shared memory (not in
 * any filesystem) is the IPC namespace's: a segment of the host is not
 * listed in the guest.
 *
 * To see it fail: `--dev-bind /dev /dev` instead of `--dev /dev` shows the
 * host's /dev/shm file; removing the IPC namespace (`--unshare-all` →
 * `--unshare-user --unshare-pid --unshare-net --unshare-uts
 * --unshare-cgroup-try`) lists the host's segment. */
static void
test_shared_memory_private (void)
{
  EscapeSession s = { 0 };
  g_autofree char *marker = g_strdup_printf ("sandbox-escape-%08x", g_random_int ());
  g_autofree char *host_file = g_build_filename ("/dev/shm", marker, NULL);
  g_autofree char *guest_check = g_strdup_printf ("test -e /dev/shm/%s", marker);
  g_autofree char *guest_write = g_strdup_printf ("echo guest > /dev/shm/%s-guest", marker);
  g_autofree char *guest_file = g_strdup_printf ("%s-guest", host_file);
  g_autofree char *segments = NULL;
  g_autofree char *key_text = NULL;
  gboolean have_shm = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) && access ("/dev/shm", W_OK) == 0;
  key_t key = (key_t) (0x5e000000 | (g_random_int () & 0xffffff));
  int segment = shmget (key, 4096, IPC_CREAT | IPC_EXCL | 0600);

  escape_session_open (&s, NULL);
  if (have_shm)
    {
      g_assert_true (g_file_set_contents (host_file, "host", -1, NULL));
      g_assert_cmpint (escape_sh_status (s.session, guest_check, NULL, NULL), !=, 0);
    }
  else
    g_test_message ("no writable /dev/shm on the host: only the guest's side checked");
  g_free (escape_sh (s.session, guest_write));
  g_assert_false (g_file_test (guest_file, G_FILE_TEST_EXISTS));

  g_assert_cmpint (segment, >=, 0);
  key_text = g_strdup_printf ("0x%08x", (unsigned) key);
  segments = escape_sh (s.session, "ipcs -m");
  g_assert_null (strstr (segments, key_text));
  g_assert_cmpint (shmctl (segment, IPC_RMID, NULL), ==, 0);

  if (have_shm)
    g_assert_cmpint (unlink (host_file), ==, 0);
  escape_session_close (&s);
}

/* The guest's /dev/pts is a new devpts instance: the host's pseudo-terminals
 * (this test holds one open) are not there to open.
 *
 * To see it fail: `--dev-bind /dev /dev` instead of `--dev /dev` in
 * sandbox-bubblewrap-args.c: the host's pty then appears. */
static void
test_host_ptys_not_visible (void)
{
  EscapeSession s = { 0 };
  g_autofree char *out = NULL;
  int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  const char *name;
  g_autofree char *check = NULL;

  g_assert_cmpint (master, >=, 0);
  g_assert_cmpint (unlockpt (master), ==, 0);
  name = ptsname (master);
  g_assert_nonnull (name);
  check = g_strdup_printf ("test -e %s", name);

  escape_session_open (&s, NULL);
  out = escape_sh (s.session, "ls /dev/pts");
  g_assert_cmpstr (out, ==, "ptmx\n");
  g_assert_cmpint (escape_sh_status (s.session, check, NULL, NULL), !=, 0);
  escape_session_close (&s);
  close (master);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/escape/dev/minimal", test_minimal_dev);
  g_test_add_func ("/sandbox/escape/dev/mknod-refused", test_mknod_refused);
  g_test_add_func ("/sandbox/escape/dev/mknod-refused-without-seccomp",
                   test_mknod_refused_without_seccomp);
  g_test_add_func ("/sandbox/escape/dev/shared-memory-private", test_shared_memory_private);
  g_test_add_func ("/sandbox/escape/dev/host-ptys-not-visible", test_host_ptys_not_visible);

  return g_test_run ();
}
