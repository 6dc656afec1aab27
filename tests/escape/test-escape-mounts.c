/* test-escape-mounts.c — mounts and filesystems
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The attack class "mounts and filesystems" of issue 14: remounting the
 * read-only runtime writable, mounting over it, new mounts, writing the
 * runtime or the template, mount propagation. Modelled on:
 * - runc CVE-2019-5736: the container rewrote the host's runc binary
 *   through /proc/self/exe, a magic link that leads to the host's mount
 *   of the binary whatever the container's own mounts say;
 * - runc CVE-2019-19921 and CVE-2021-30465: mounts placed over paths
 *   the runtime later used (a symlink or a bind over /proc);
 * - Docker CVE-2014-9357 / CVE-2019-14271: the host side trusting files
 *   and binaries the container could write;
 * - bubblewrap CVE-2016-8659: mounts made by the sandbox's own setup
 *   ending up shared with the host;
 * - flatpak CVE-2021-21261 and its run-time "--filesystem" advisories: a
 *   sandbox that can write what the host later executes.
 * Host-side file calls on guest-planted symlinks are in
 * test-escape-store.c. Nested user namespaces and the new mount API calls
 * (fsopen, open_tree, move_mount, …) are in tests/bubblewrap/
 * test-hardening.c (/sandbox/hardening/userns/…, …/seccomp/denies).
 * Run as root and, through run-unprivileged.sh, as an unprivileged user.
 */

#include <errno.h>
#include <string.h>

#include "escape-common.h"

/* Mount operations a guest tries; each must fail. */
static const char * const mount_attacks[] = {
  "mount -o remount,rw /usr",
  "mount -o remount,bind,rw /usr",
  "mount -o remount,rw /lib",
  "mount -o remount,rw /",
  "mount -o remount,rw,suid,dev /workspace",
  "mount --bind /workspace /usr/bin",
  "mount --bind /tmp /proc",
  "mount -t tmpfs none /usr/lib",
  "mount -t proc proc /tmp",
  "mount -t sysfs sysfs /tmp",
  "mount -t devpts devpts /tmp",
  "umount -l /usr",
  "umount -l /workspace",
  NULL
};

static void
check_mount_attacks_fail (gboolean seccomp)
{
  EscapeSession s = { 0 };

  escape_session_open (&s, "seccomp", seccomp ? "true" : "false", NULL);
  for (guint i = 0; mount_attacks[i] != NULL; i++)
    {
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;
      int status = escape_sh_status (s.session, mount_attacks[i], &out, &err);

      if (status == 0)
        g_error ("guest succeeded: %s (seccomp %s)", mount_attacks[i], seccomp ? "on" : "off");
      g_test_message ("%s: %s", mount_attacks[i], err);
    }
  /* …and the runtime is still read-only. */
  g_assert_cmpint (escape_sh_status (s.session, "touch /usr/escape-test", NULL, NULL), !=, 0);
  g_assert_cmpint (escape_sh_status (s.session, "touch /lib/escape-test", NULL, NULL), !=, 0);
  g_assert_false (g_file_test ("/usr/escape-test", G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test ("/usr/lib/escape-test", G_FILE_TEST_EXISTS));
  escape_session_close (&s);
}

/* Remounts, binds over the runtime, new filesystems and unmounts all fail,
 * under three independent layers: the seccomp filter (mount, umount2 →
 * EPERM); no capability in the guest's user namespace (bwrap's --cap-drop
 * ALL); and, since --disable-userns puts the guest in a user namespace
 * nested below the one owning its mount namespace, no capability over its
 * mounts even if it had some.
 *
 * To see it fail (verified): with seccomp = FALSE, `--cap-drop ALL`
 * replaced by `--cap-add ALL` and `--disable-userns` removed in
 * sandbox-bubblewrap-args.c, `mount -o remount,bind,rw /usr` succeeds (the
 * bind was made inside the guest's own namespace, so it is not locked); a
 * root-hosted guest could then write the host's /usr. The test stops at
 * that assertion, before any write. Either of the two bwrap options alone
 * keeps the case passing. */
static void
test_mount_attacks_fail (void)
{
  check_mount_attacks_fail (TRUE);
}

/* … and without the filter, by the other two layers. */
static void
test_mount_attacks_fail_without_seccomp (void)
{
  check_mount_attacks_fail (FALSE);
}

/* runc CVE-2019-5736: /proc/1/exe (bwrap's init in the guest's pid
 * namespace) and /proc/self/exe are magic links: opened, they lead to the
 * host's mount of the binary, where the guest's read-only bind does not
 * apply. A root-hosted guest is host uid 0 and owns /usr/bin/bwrap, so
 * permissions alone do not stop the write: the kernel's refusal to write a
 * running executable (ETXTBSY) does, and bwrap's init runs for as long as
 * any process of the guest exists, so a guest never holds such a link
 * without the binary running. Unprivileged guests get EACCES. Opening is
 * all the probe does: it never writes.
 *
 * To see it fail: nothing in our code stands between; the case fails on a
 * kernel without the ETXTBSY rule (it was briefly dropped in 6.11-rc) for
 * a root-hosted guest that is host uid 0. */
static void
test_runtime_binaries_not_writable (void)
{
  EscapeSession s = { 0 };
  static const char * const targets[] = {
    "/proc/1/exe", "/proc/self/exe", "/usr/bin/bwrap", "/usr/bin/sh", "/proc/1/root/usr/bin/sh",
    NULL
  };

  escape_session_open (&s, NULL);
  escape_install_probe (s.session);
  for (guint i = 0; targets[i] != NULL; i++)
    {
      g_autofree char *arguments = g_strdup_printf ("open-write %s", targets[i]);
      int err = escape_probe_errno (s.session, arguments);

      g_test_message ("open %s for writing: %s", targets[i], g_strerror (err));
      if (err == 0)
        g_error ("the guest opened %s for writing", targets[i]);
      g_assert_true (err == ETXTBSY || err == EROFS || err == EACCES || err == EPERM);
    }
  /* Nor can the guest name one of them in its workspace, where the host's
   * file API (or a later bwrap bind) would reach it: a hard link across
   * mounts is EXDEV, through a path or through an O_PATH descriptor of the
   * magic link. (/proc/self/exe is left out: for the probe it is the
   * probe, a workspace file.) */
  for (guint i = 0; targets[i] != NULL; i++)
    {
      if (g_str_equal (targets[i], "/proc/self/exe"))
        continue;
      g_autofree char *link_args = g_strdup_printf ("link-fd %s /workspace/runtime-link", targets[i]);
      g_autofree char *ln = g_strdup_printf ("ln %s /workspace/runtime-link", targets[i]);
      int err;

      err = escape_probe_errno (s.session, link_args);

      if (err == 0)
        g_error ("the guest hard-linked %s into its workspace", targets[i]);
      g_assert_cmpint (escape_sh_status (s.session, ln, NULL, NULL), !=, 0);
    }
  escape_session_close (&s);
}

/* The guest's writes outside /workspace land in its own tmpfs /tmp and
 * /dev/shm: nothing reaches the host, nothing survives to the next
 * command (each command is a fresh namespace). The curated /etc (issue 21),
 * the root and /run on it, and /dev (issue 31) are read-only: a write
 * there fails.
 *
 * To see it fail: bind the host's /tmp (`--bind /tmp /tmp` instead of
 * `--tmpfs /tmp` in sandbox-bubblewrap-args.c): the marker then appears on
 * the host; or drop the `--remount-ro /` there: the root's write works. */
static void
test_writes_outside_workspace_are_private (void)
{
  EscapeSession s = { 0 };
  g_autofree char *marker = g_strdup_printf ("escape-marker-%08x", g_random_int ());
  /* (`! cmd` would not stop a `set -e` script: each refusal is an if.) */
  g_autofree char *script = g_strdup_printf ("set -e; echo x > /tmp/%s; echo x > /dev/shm/%s; "
                                             "for place in /etc/%s /%s /dev/%s; do "
                                             "  if (echo x > $place) 2>/dev/null; then "
                                             "    echo wrote $place; exit 1; fi; "
                                             "done; "
                                             "if mkdir /run/%s 2>/dev/null; then exit 1; fi",
                                             marker, marker, marker, marker, marker, marker);
  g_autofree char *check = g_strdup_printf ("ls /tmp/%s /dev/shm/%s /etc/%s /%s /run/%s /dev/%s",
                                            marker, marker, marker, marker, marker, marker);
  g_autofree char *host_tmp = g_build_filename (g_get_tmp_dir (), marker, NULL);
  g_autofree char *host_root = g_build_filename ("/", marker, NULL);
  g_autofree char *host_etc = g_build_filename ("/etc", marker, NULL);

  escape_session_open (&s, NULL);
  g_free (escape_sh (s.session, script));
  g_assert_false (g_file_test (host_tmp, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test ("/tmp/escape-marker", G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (host_root, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (host_etc, G_FILE_TEST_EXISTS));
  g_assert_cmpint (escape_sh_status (s.session, check, NULL, NULL), !=, 0);
  escape_session_close (&s);
}

/* The template a session starts from is the host's: whatever the guest
 * does to its workspace (rewrite, chmod, remove, replace by a symlink), a
 * second session of the same template starts from the pristine files.
 *
 * To see it fail: make the store bind the template's data directory
 * itself as the workspace (skip the copy in sandbox-bubblewrap-store.c):
 * the second session then reads "owned". */
static void
test_template_stays_pristine (void)
{
  EscapeSession s = { 0 };
  g_autoptr(SandboxHandle) second = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *hello = NULL;
  g_autofree char *file = NULL;
  g_autofree char *mode_before = NULL;
  g_autofree char *mode_after = NULL;

  escape_session_open (&s, NULL);
  mode_before = escape_sh (s.session, "stat -c %a hello.txt");
  g_free (escape_sh (s.session,
                     "set -e; echo owned > hello.txt; chmod 0777 hello.txt; rm -r dir; "
                     "ln -s /etc/hostname dir; echo new > new.txt"));
  second = escape_create (s.backend, s.template_key);
  hello = sandbox_session_read_text (sandbox_handle_get_session (second), "hello.txt", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hello, ==, "hello");
  file = sandbox_session_read_text (sandbox_handle_get_session (second), "dir/file.txt", NULL,
                                    &error);
  g_assert_no_error (error);
  g_assert_cmpstr (file, ==, "file");
  mode_after = escape_sh (sandbox_handle_get_session (second), "stat -c %a hello.txt");
  g_assert_cmpstr (mode_after, ==, mode_before);
  g_assert_cmpint (escape_sh_status (sandbox_handle_get_session (second), "test -e new.txt",
                                     NULL, NULL), !=, 0);
  sandbox_handle_delete (second, NULL, &error);
  g_assert_no_error (error);
  escape_session_close (&s);
}

/* bubblewrap CVE-2016-8659 and mount propagation in general: a mount
 * event reaches another namespace only through a shared peer group. Every
 * mount the guest sees is private: mountinfo lists no `shared:N` and no
 * `master:N` tag, so nothing a guest could mount reaches the host (and
 * nothing the host mounts later appears in a running guest).
 *
 * To see it fail: this is bwrap's doing (it makes the new root private
 * before building it) and cannot be taken out from our code; the same
 * check run on the host's /proc/self/mountinfo of a systemd machine finds
 * `shared:1` on / at once. */
static void
test_mounts_are_private (void)
{
  EscapeSession s = { 0 };
  g_autofree char *mountinfo = NULL;
  g_auto(GStrv) lines = NULL;

  escape_session_open (&s, NULL);
  mountinfo = escape_sh (s.session, "cat /proc/self/mountinfo");
  lines = g_strsplit (mountinfo, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), >, 5);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      /* Optional fields sit between the mount options and " - ". */
      const char *end = strstr (lines[i], " - ");
      g_autofree char *head = end != NULL ? g_strndup (lines[i], end - lines[i]) : NULL;

      if (head != NULL && (strstr (head, " shared:") != NULL || strstr (head, " master:") != NULL))
        g_error ("a guest mount propagates: %s", lines[i]);
    }
  escape_session_close (&s);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/escape/mounts/attacks-fail", test_mount_attacks_fail);
  g_test_add_func ("/sandbox/escape/mounts/attacks-fail-without-seccomp",
                   test_mount_attacks_fail_without_seccomp);
  g_test_add_func ("/sandbox/escape/mounts/runtime-binaries-not-writable",
                   test_runtime_binaries_not_writable);
  g_test_add_func ("/sandbox/escape/mounts/writes-outside-workspace-are-private",
                   test_writes_outside_workspace_are_private);
  g_test_add_func ("/sandbox/escape/mounts/template-stays-pristine", test_template_stays_pristine);
  g_test_add_func ("/sandbox/escape/mounts/mounts-are-private", test_mounts_are_private);

  return g_test_run ();
}
