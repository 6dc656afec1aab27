/* test-runtime.c — sessions on a runtime instead of the host's /usr
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A runtime (issue 35) is a root file system imported into the store and
 * named by a template: its sessions' commands see it as /usr, /bin, /lib*,
 * /sbin and /etc, read-only, with the curated identity files over its /etc
 * (drivers/bubblewrap/sandbox-bubblewrap-store-runtimes.c,
 * sandbox-bubblewrap-args.c). The runtime is Debian's busybox-static with
 * a merged /usr, which with-test-runtime.sh makes once per build directory
 * in tests/runtime-cache/busybox. Run as root and, through
 * run-unprivileged.sh, as an unprivileged user.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-runtime.h"
#include "sandbox-test-session.h"

typedef SandboxTestFixture Fixture;

/* The hello template on @runtime_key, prewarmed. */
static char *
prewarm_on (SandboxBackend *backend,
            const char     *runtime_key)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();

  sandbox_template_set_runtime (template_, runtime_key);
  return sandbox_test_prewarm (backend, template_, NULL);
}

/* A template's key covers its runtime, and only when it has one (the
 * conformance vectors pin the keys of templates without). */
static void
test_template_key_covers_runtime (void)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autoptr(GError) error = NULL;
  g_autofree char *plain = sandbox_template_compute_key (template_, "bubblewrap", &error);
  g_autofree char *on_a = NULL;
  g_autofree char *on_b = NULL;
  g_autofree char *plain_again = NULL;

  g_assert_no_error (error);
  sandbox_template_set_runtime (template_, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  on_a = sandbox_template_compute_key (template_, "bubblewrap", &error);
  sandbox_template_set_runtime (template_, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
  on_b = sandbox_template_compute_key (template_, "bubblewrap", &error);
  sandbox_template_set_runtime (template_, NULL);
  plain_again = sandbox_template_compute_key (template_, "bubblewrap", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (plain, !=, on_a);
  g_assert_cmpstr (on_a, !=, on_b);
  g_assert_cmpstr (plain, ==, plain_again);
}

typedef struct
{
  guint n_reports;
  guint64 n_entries, n_bytes;
} Progress;

static void
import_progress_cb (SandboxBackend *backend,
                    guint64         n_entries,
                    guint64         n_bytes,
                    gpointer        user_data)
{
  Progress *progress = user_data;

  g_assert_cmpuint (n_entries, >=, progress->n_entries);
  progress->n_reports++;
  progress->n_entries = n_entries;
  progress->n_bytes = n_bytes;
}

/* A session on the runtime sees the runtime's /usr and /etc, the curated
 * identity over it, nothing of the host's /usr, and cannot write any of it;
 * its workspace and /tmp are as always. */
static void
test_session_runs_on_runtime (void)
{
  Fixture f = { 0 };
  g_autofree char *busybox = sandbox_test_runtime_path ("busybox");
  g_autofree char *runtime_key = NULL;
  g_autofree char *again = NULL;
  g_autofree char *os_release = NULL;
  g_autofree char *passwd = NULL;
  g_autofree char *mounts = NULL;
  g_autofree char *workspace = NULL;
  g_autofree char *hostname = NULL;
  g_auto(GStrv) lines = NULL;
  Progress progress = { 0 };
  g_autofree char *snapshot_key = NULL;
  g_autoptr(SandboxHandle) fork = NULL;
  g_autofree char *forked = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxCodingTools) tools = NULL;
  g_autofree char *probed = NULL;
  gboolean reused = TRUE;
  SandboxSession *session;

  sandbox_test_fixture_set_up (&f, "bubblewrap", NULL, NULL);
  g_signal_connect (f.backend, "import-progress", G_CALLBACK (import_progress_cb), &progress);
  runtime_key = sandbox_test_import_runtime (f.backend, busybox, &reused);
  g_assert_false (reused);
  /* Its totals last: busybox's 2 MB, its links. */
  g_assert_cmpuint (progress.n_reports, >=, 1);
  g_assert_cmpuint (progress.n_bytes, >, 1000000);
  g_assert_cmpuint (progress.n_entries, >, 10);
  again = sandbox_test_import_runtime (f.backend, busybox, &reused);
  g_assert_true (reused);
  g_assert_cmpstr (runtime_key, ==, again);

  f.template_key = prewarm_on (f.backend, runtime_key);
  sandbox_test_fixture_open_session (&f, NULL);
  session = f.session;

  os_release = sandbox_test_guest_sh (session, "cat /etc/os-release");
  g_assert_nonnull (strstr (os_release, "ID=libsandbox-test-runtime\n"));
  /* The session's second command: the sandbox the first left ready. */
  g_assert_cmpint (sandbox_test_guest_status (session, "/bin/busybox true"), ==, 0);
  /* Host-only files: bwrap and GLib are on the host, not in busybox. */
  g_assert_cmpint (sandbox_test_guest_status (session, "test -e /usr/bin/bwrap"), ==, 1);
  g_assert_cmpint (sandbox_test_guest_status (
                     session, "test -e /usr/lib/x86_64-linux-gnu/libglib-2.0.so.0"), ==, 1);
  g_assert_cmpint (sandbox_test_guest_status (session, "test -e /lib64/ld-linux-x86-64.so.2"),
                   ==, 1);
  /* The curated identity, over the runtime's /etc. */
  passwd = sandbox_test_guest_sh (session, "cat /etc/passwd");
  g_assert_nonnull (strstr (passwd, ":/workspace:/bin/sh\n"));
  hostname = sandbox_test_guest_sh (session, "cat /etc/hostname");
  g_assert_cmpstr (hostname, ==, "sandbox\n");
  /* Read-only, nosuid and nodev, for every user the guest can be. */
  g_assert_cmpint (sandbox_test_guest_status (session, "touch /usr/bin/x 2>/dev/null"), !=, 0);
  g_assert_cmpint (sandbox_test_guest_status (session, "touch /etc/x 2>/dev/null"), !=, 0);
  g_assert_cmpint (sandbox_test_guest_status (session, "touch /etc/passwd 2>/dev/null"), !=, 0);
  mounts = sandbox_test_guest_sh (session, "grep -E ' /(usr|etc) ' /proc/self/mounts");
  g_assert_nonnull (strstr (mounts, " /usr "));
  g_assert_nonnull (strstr (mounts, " /etc "));
  lines = g_strsplit (mounts, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (lines[i][0] != '\0')
      {
        g_assert_nonnull (strstr (lines[i], " ro,"));
        g_assert_nonnull (strstr (lines[i], "nosuid"));
        g_assert_nonnull (strstr (lines[i], "nodev"));
      }
  /* The workspace and /tmp as always. */
  workspace = sandbox_test_guest_sh (session,
                                     "cat /workspace/hello.txt; echo x > /tmp/t; cat /tmp/t; "
                                     "echo y > /workspace/new; cat /workspace/new");
  g_assert_cmpstr (workspace, ==, "hellox\ny\n");

  /* The coding tools' probe says which runtime. */
  tools = sandbox_coding_tools_new (f.handle, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_coding_tools_probe_runtime (tools, &probed, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (probed, ==, runtime_key);

  /* A snapshot's sessions run on its template's runtime. */
  snapshot_key = sandbox_handle_snapshot (f.handle, NULL, &error);
  g_assert_no_error (error);
  fork = sandbox_test_create_session (f.backend, snapshot_key);
  forked = sandbox_test_guest_sh (sandbox_handle_get_session (fork),
                                  "cat /workspace/new; grep ^ID= /etc/os-release");
  g_assert_cmpstr (forked, ==, "y\nID=libsandbox-test-runtime\n");
  sandbox_test_delete_session (fork);
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* A runtime is listed with its users, refused as BUSY while a template
 * names it, and deleted once none does. */
static void
test_list_and_delete (void)
{
  Fixture f = { 0 };
  g_autofree char *busybox = sandbox_test_runtime_path ("busybox");
  g_autofree char *runtime_key = NULL;
  g_autoptr(SandboxRuntimeInfo) info = NULL;
  g_autoptr(SandboxRuntimeInfo) gone = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_test_fixture_set_up (&f, "bubblewrap", NULL, NULL);
  runtime_key = sandbox_test_import_runtime (f.backend, busybox, NULL);
  f.template_key = prewarm_on (f.backend, runtime_key);
  sandbox_test_fixture_open_session (&f, NULL);

  info = sandbox_test_find_runtime (f.backend, runtime_key);
  g_assert_nonnull (info);
  g_assert_cmpuint (sandbox_runtime_info_get_n_templates (info), ==, 1);
  g_assert_cmpuint (sandbox_runtime_info_get_n_sessions (info), ==, 1);
  /* busybox itself is near 2 MB; its applets' links are entries. */
  g_assert_cmpuint (sandbox_runtime_info_get_n_bytes (info), >, 1000000);
  g_assert_cmpuint (sandbox_runtime_info_get_n_entries (info), >, 10);

  g_assert_false (sandbox_backend_delete_runtime (f.backend, runtime_key, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);

  sandbox_test_delete_session (f.handle);
  g_clear_object (&f.handle);
  g_assert_true (sandbox_backend_delete_template (f.backend, f.template_key, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_backend_delete_runtime (f.backend, runtime_key, NULL, &error));
  g_assert_no_error (error);
  gone = sandbox_test_find_runtime (f.backend, runtime_key);
  g_assert_null (gone);
  g_assert_false (sandbox_backend_delete_runtime (f.backend, runtime_key, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* What cannot be imported or named. */
static void
test_refusals (void)
{
  Fixture f = { 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *file = NULL;
  g_autoptr(GFile) not_directory = NULL;
  g_autoptr(GFile) missing = NULL;
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  const char *unknown = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  g_autoptr(SandboxBackend) memory = NULL;
  g_autofree char *key = NULL;

  sandbox_test_fixture_set_up (&f, "bubblewrap", NULL, NULL);
  file = g_build_filename (f.state_directory, "a-file", NULL);
  g_assert_true (g_file_set_contents (file, "x", -1, NULL));
  not_directory = g_file_new_for_path (file);
  g_assert_null (sandbox_backend_import_runtime (f.backend, not_directory, NULL, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);
  missing = g_file_new_for_path ("/nonexistent/runtime");
  g_assert_null (sandbox_backend_import_runtime (f.backend, missing, NULL, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  sandbox_template_set_runtime (template_, unknown);
  key = sandbox_backend_prewarm (f.backend, template_, NULL, NULL, &error);
  g_assert_null (key);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, unknown));
  g_clear_error (&error);
  /* Never a path below runtimes/ built from it. */
  sandbox_template_set_runtime (template_, "../../templates");
  g_assert_null (sandbox_backend_prewarm (f.backend, template_, NULL, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (sandbox_backend_delete_runtime (f.backend, "not-a-key", NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  /* A backend without runtimes never stores a template on the host's /usr
   * that names one. */
  memory = sandbox_test_backend_new ("memory", f.state_directory, &error, NULL);
  g_assert_no_error (error);
  sandbox_template_set_runtime (template_, unknown);
  g_assert_null (sandbox_backend_prewarm (memory, template_, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* Makes a copy of the busybox runtime in @directory/name with @link_name
 * a symbolic link to @target at its top. */
static char *
hostile_runtime (const char *directory,
                 const char *link_name,
                 const char *target)
{
  g_autofree char *busybox = sandbox_test_runtime_path ("busybox");
  g_autofree char *root = g_build_filename (directory, "hostile", NULL);
  g_autofree char *command = g_strdup_printf ("cp -a '%s' '%s'", busybox, root);
  g_autofree char *link = g_build_filename (root, link_name, NULL);
  g_autofree char *doomed = g_strdup_printf ("rm -rf '%s'", link);

  g_assert_cmpint (system (command), ==, 0);
  g_assert_cmpint (system (doomed), ==, 0);
  g_assert_cmpint (symlink (target, link), ==, 0);
  return g_steal_pointer (&root);
}

/* A runtime whose top-level lib32 links to a host directory: the guest
 * gets the link, resolved in its own root, never the host directory (a
 * link must not be a bind's source, which bwrap resolves on the host).
 * Seen to fail with add_runtime() binding links too. */
static void
test_top_level_link_stays_inside (void)
{
  Fixture f = { 0 };
  g_autofree char *outside = NULL;
  g_autofree char *secret = NULL;
  g_autofree char *root = NULL;
  g_autofree char *runtime_key = NULL;
  g_autofree char *seen = NULL;

  sandbox_test_fixture_set_up (&f, "bubblewrap", NULL, NULL);
  outside = g_build_filename (f.state_directory, "outside", NULL);
  g_assert_cmpint (g_mkdir (outside, 0755), ==, 0);
  g_assert_cmpint (chmod (f.state_directory, 0755), ==, 0);
  secret = g_build_filename (outside, "secret", NULL);
  g_assert_true (g_file_set_contents (secret, "host secret", -1, NULL));
  g_assert_cmpint (chmod (secret, 0644), ==, 0);
  root = hostile_runtime (f.state_directory, "lib32", outside);
  runtime_key = sandbox_test_import_runtime (f.backend, root, NULL);
  f.template_key = prewarm_on (f.backend, runtime_key);
  sandbox_test_fixture_open_session (&f, NULL);

  seen = sandbox_test_guest_sh (f.session, "readlink /lib32; cat /lib32/secret 2>&1 || echo absent");
  g_assert_null (strstr (seen, "host secret"));
  g_assert_nonnull (strstr (seen, "absent"));
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* A runtime whose etc links out of the tree is refused: the import makes
 * the curated /etc's mount points in it, which through the link would be
 * files made in a host directory. Seen to fail (files made outside) with
 * prepare_etc() following the link. */
static void
test_etc_link_refused (void)
{
  Fixture f = { 0 };
  g_autofree char *outside = NULL;
  g_autofree char *root = NULL;
  g_autoptr(GFile) source = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = NULL;

  sandbox_test_fixture_set_up (&f, "bubblewrap", NULL, NULL);
  outside = g_build_filename (f.state_directory, "outside-etc", NULL);
  g_assert_cmpint (g_mkdir (outside, 0755), ==, 0);
  root = hostile_runtime (f.state_directory, "etc", outside);
  source = g_file_new_for_path (root);
  g_assert_null (sandbox_backend_import_runtime (f.backend, source, NULL, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  dir = g_dir_open (outside, 0, NULL);
  g_assert_nonnull (dir);
  g_assert_null (g_dir_read_name (dir));
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* Runs @argv; fails the test unless it exits 0. */
static void
run_tool (const char * const *argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
                               &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, &error))
    g_error ("%s %s: %s: %s", argv[0], argv[1], error->message, err);
}

/* The busybox runtime as an OCI image layout (umoci's, one layer): the
 * same tree, so the same key as the directory, and a session on it. */
static void
test_oci_layout (void)
{
  Fixture f = { 0 };
  g_autofree char *busybox = sandbox_test_runtime_path ("busybox");
  g_autofree char *umoci = g_find_program_in_path ("umoci");
  g_autofree char *layout = NULL;
  g_autofree char *image = NULL;
  g_autofree char *bundle = NULL;
  g_autofree char *copy_from = g_strconcat (busybox, "/.", NULL);
  g_autofree char *copy_to = NULL;
  g_autofree char *from_directory = NULL;
  g_autofree char *from_image = NULL;
  g_autofree char *os_release = NULL;
  gboolean reused = FALSE;

  if (umoci == NULL)
    {
      g_test_skip ("umoci is not installed");
      return;
    }
  sandbox_test_fixture_set_up (&f, "bubblewrap", NULL, NULL);
  layout = g_build_filename (f.state_directory, "layout", NULL);
  image = g_strconcat (layout, ":latest", NULL);
  bundle = g_build_filename (f.state_directory, "bundle", NULL);
  copy_to = g_build_filename (bundle, "rootfs", NULL);
  {
    const char * const init[] = { "umoci", "init", "--layout", layout, NULL };
    const char * const new_image[] = { "umoci", "new", "--image", image, NULL };
    const char * const unpack[] = { "umoci", "unpack", "--rootless", "--image", image, bundle, NULL };
    const char * const cp[] = { "cp", "-a", copy_from, copy_to, NULL };
    const char * const repack[] = { "umoci", "repack", "--image", image, bundle, NULL };

    run_tool (init);
    run_tool (new_image);
    run_tool (unpack);
    run_tool (cp);
    run_tool (repack);
  }

  from_directory = sandbox_test_import_runtime (f.backend, busybox, NULL);
  from_image = sandbox_test_import_runtime (f.backend, layout, &reused);
  g_assert_cmpstr (from_image, ==, from_directory);
  g_assert_true (reused);
  f.template_key = prewarm_on (f.backend, from_image);
  sandbox_test_fixture_open_session (&f, NULL);
  os_release = sandbox_test_guest_sh (f.session, "grep ^ID= /etc/os-release");
  g_assert_cmpstr (os_release, ==, "ID=libsandbox-test-runtime\n");
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* A dynamically linked stub would load the runtime's own loader and libc
 * before its seccomp filter: sessions on a runtime refuse it. The stub
 * here is this test's own executable (dynamic), in a subprocess, which
 * looks the stub up afresh. Without the check the session fails later
 * and otherwise (UNAVAILABLE: the stub could not start on busybox's /usr,
 * which has no loader for it). */
static void
test_dynamic_stub_refused (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
      g_autofree char *busybox = sandbox_test_runtime_path ("busybox");
      g_autofree char *state_directory = sandbox_test_state_directory_new ();
      g_autoptr(SandboxBackend) backend = NULL;
      g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
      g_autoptr(SandboxHandle) handle = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *runtime_key = NULL;
      g_autofree char *template_key = NULL;

      g_setenv ("SANDBOX_BUBBLEWRAP_STUB", self, TRUE);
      backend = sandbox_test_bubblewrap_new (state_directory, NULL, "layering", "copy", NULL);
      runtime_key = sandbox_test_import_runtime (backend, busybox, NULL);
      template_key = prewarm_on (backend, runtime_key);
      handle = sandbox_backend_create (backend, template_key, NULL, policy, NULL, &error);
      g_assert_null (handle);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
      g_assert_nonnull (strstr (error->message, "statically linked"));
      g_clear_object (&backend);
      sandbox_test_state_directory_remove (state_directory);
      return;
    }
  g_test_trap_subprocess (NULL, 60 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
  g_test_trap_assert_passed ();
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/bubblewrap/runtime/template-key", test_template_key_covers_runtime);
  g_test_add_func ("/bubblewrap/runtime/session", test_session_runs_on_runtime);
  g_test_add_func ("/bubblewrap/runtime/list-and-delete", test_list_and_delete);
  g_test_add_func ("/bubblewrap/runtime/refusals", test_refusals);
  g_test_add_func ("/bubblewrap/runtime/top-level-link", test_top_level_link_stays_inside);
  g_test_add_func ("/bubblewrap/runtime/etc-link", test_etc_link_refused);
  g_test_add_func ("/bubblewrap/runtime/oci-layout", test_oci_layout);
  g_test_add_func ("/bubblewrap/runtime/dynamic-stub-refused", test_dynamic_stub_refused);

  return g_test_run ();
}
