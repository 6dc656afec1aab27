/* test-escape-identity.c — which host identity a guest has
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attack class "identities" (issue 14, item 1, defence in depth): a guest
 * of a host that runs as root must not be host uid 0, so that a /proc file
 * the covering missed, a setuid-root file reachable by mistake or a kernel
 * bug that honours the euid does not hand out root. Guests run as their
 * session's own ids from guest-id-range when the host is root (or the
 * backend's guest-uid/guest-gid for all, if set), the host's own otherwise;
 * the workspace and whatever the host creates in it belong to them, so
 * guests can still change their files. test-escape-session-ids.c shows
 * that two sessions' guests cannot reach each other.
 *
 * Stands for: runc/Docker's "containers run as root" class (user
 * namespaces and non-root container users as the fix, e.g. the runc
 * CVE-2019-5736 exploit needs a root container process), flatpak's
 * "sandboxed app has the user's uid, never root" invariant, and the
 * sysctl/core_pattern escapes of test-escape-proc.c, which need host uid 0.
 *
 * To see them fail: as root, make the automatic guest-uid/guest-gid the
 * host's euid/egid in sandbox-bubblewrap-backend.c (resolve_guest_ids()):
 * the guest's /proc/PID/status then shows Uid 0 (guest-is-not-host-root);
 * drop the credential switch and keep the chown (guest_view in
 * sandbox-bubblewrap-launcher.c) and bwrap cannot reach the workspace;
 * make sandbox_workspace_give_to_owner() in libsandbox-core/
 * sandbox-workspace-fd.c do nothing and the guest can no longer write what
 * the host wrote (host-written-files-writable).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sandbox-backend-driver.h>

#include "escape-common.h"
#include "sandbox-test-backend.h"

/* The first id and the size of guest-id-range's default. */
#define DEFAULT_RANGE_START 1879048192u
#define DEFAULT_RANGE_COUNT 65536u

/* The ids a default backend gives @s's guest, as documented: the host's
 * own unless the host runs as root; then the session's own pair, recorded
 * in its directory, from the default range, uid and gid alike. */
static void
expected_guest_ids (EscapeSession *s,
                    guint         *uid,
                    guint         *gid)
{
  g_autofree char *directory = NULL;
  g_autofree char *path = NULL;
  g_autofree char *record = NULL;

  if (!escape_running_as_root ())
    {
      *uid = getuid ();
      *gid = getgid ();
      return;
    }
  directory = escape_session_directory (s);
  path = g_build_filename (directory, "guest-ids", NULL);
  g_assert_true (g_file_get_contents (path, &record, NULL, NULL));
  g_assert_cmpint (sscanf (record, "%u:%u", uid, gid), ==, 2);
  g_assert_cmpuint (*uid, >=, DEFAULT_RANGE_START);
  g_assert_cmpuint (*uid - DEFAULT_RANGE_START, <, DEFAULT_RANGE_COUNT);
  g_assert_cmpuint (*gid, ==, *uid);
}

static void
on_stdout_data (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  gboolean *ready = user_data;

  *ready = TRUE;
}

/* Seen from the host, a guest process runs with the guest ids: real,
 * effective, saved and filesystem ids alike, and no supplementary group.
 * As root that is never uid or gid 0. */
static void
test_guest_is_not_host_root (void)
{
  EscapeSession s = { 0 };
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sh");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = g_strdup_printf ("escape-identity-%08x", g_random_int ());
  g_autofree char *expected_uid = NULL;
  g_autofree char *expected_gid = NULL;
  g_autofree char *uids = NULL;
  g_autofree char *gids = NULL;
  g_autofree char *groups = NULL;
  gboolean ready = FALSE;
  guint uid, gid;
  int pid;

  escape_session_open (&s, NULL);
  expected_guest_ids (&s, &uid, &gid);
  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, "echo ready; sleep 60");
  sandbox_command_add_arg (command, marker);   /* the script's $0 */
  process = sandbox_session_spawn (s.session, command, NULL, &error);
  g_assert_no_error (error);
  g_signal_connect (process, "stdout-data", G_CALLBACK (on_stdout_data), &ready);
  while (!ready)
    g_main_context_iteration (NULL, TRUE);

  /* The shell printed: it runs, with its arguments in place. */
  pid = escape_find_guest_pid ("/usr/bin/sh", marker);
  g_assert_cmpint (pid, >, 0);
  uids = escape_status_field (pid, "Uid");
  gids = escape_status_field (pid, "Gid");
  groups = escape_status_field (pid, "Groups");
  g_test_message ("guest pid %d: Uid %s, Gid %s, Groups '%s'", pid, uids, gids, groups);
  expected_uid = g_strdup_printf ("%u\t%u\t%u\t%u", uid, uid, uid, uid);
  expected_gid = g_strdup_printf ("%u\t%u\t%u\t%u", gid, gid, gid, gid);
  g_assert_cmpstr (uids, ==, expected_uid);
  g_assert_cmpstr (gids, ==, expected_gid);
  if (escape_running_as_root ())
    g_assert_cmpstr (g_strstrip (groups), ==, "");

  g_assert_true (sandbox_process_stop (process, NULL, &error));
  g_assert_no_error (error);
  escape_session_close (&s);
}

static void
assert_owned_by (const char *path,
                 guint       uid,
                 guint       gid)
{
  struct stat st;

  g_assert_cmpint (lstat (path, &st), ==, 0);
  if (st.st_uid != uid || st.st_gid != gid)
    g_error ("%s is owned by %u:%u, not the guest's %u:%u",
             path, (guint) st.st_uid, (guint) st.st_gid, uid, gid);
}

/* The workspace, the template's copy in it and what the host's file API
 * creates (files, and the directories a write makes on the way) belong to
 * the guest ids. */
static void
test_workspace_owned_by_guest (void)
{
  EscapeSession s = { 0 };
  g_autoptr(GBytes) data = g_bytes_new_static ("x", 1);
  g_autoptr(GError) error = NULL;
  g_autofree char *workspace = NULL;
  const char *const paths[] = {
    "", "hello.txt", "made", "made/by", "made/by/host.txt", NULL,
  };
  guint uid, gid;

  escape_session_open (&s, NULL);
  expected_guest_ids (&s, &uid, &gid);
  g_assert_true (sandbox_session_write_bytes (s.session, "made/by/host.txt", data, NULL, &error));
  g_assert_no_error (error);
  /* A rewrite replaces the file: the new one is the guest's too. */
  g_assert_true (sandbox_session_write_bytes (s.session, "hello.txt", data, NULL, &error));
  g_assert_no_error (error);

  workspace = escape_workspace_directory (&s);
  for (guint i = 0; paths[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (workspace, paths[i], NULL);

      assert_owned_by (path, uid, gid);
    }
  escape_session_close (&s);
}

/* What the host wrote, the guest can change: append to it, create next to
 * it, remove it, and the directory the host made on the way. */
static void
test_host_written_files_writable (void)
{
  EscapeSession s = { 0 };
  g_autoptr(GBytes) data = g_bytes_new_static ("host\n", 5);
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  escape_session_open (&s, NULL);
  g_assert_true (sandbox_session_write_bytes (s.session, "deep/dir/notes.txt", data, NULL, &error));
  g_assert_no_error (error);
  out = escape_sh (s.session,
                   "set -e; cd /workspace;"
                   "echo guest >> hello.txt;"
                   "echo guest >> deep/dir/notes.txt;"
                   "touch deep/dir/new deep/new;"
                   "rm deep/dir/notes.txt deep/dir/new;"
                   "rmdir deep/dir;"
                   "mkdir -p deep/again && echo ok");
  g_assert_cmpstr (out, ==, "ok\n");
  escape_session_close (&s);
}

/* Outside /workspace a guest writes nothing of the host: the runtime and
 * /proc/sys are read-only for it, whatever its identity. (/, /run, /tmp and
 * /dev are tmpfs private to the sandbox; test-escape-mounts.c shows that.) */
static void
test_no_write_outside_workspace (void)
{
  EscapeSession s = { 0 };
  g_autofree char *out = NULL;

  escape_session_open (&s, NULL);
  out = escape_sh (s.session,
                   "for d in /usr /usr/bin /usr/lib /usr/sbin /lib /lib64 /proc/sys/kernel /proc/sys/vm; do"
                   "  if ( : > \"$d/.escape-identity\" ) 2>/dev/null; then echo \"wrote $d\"; fi;"
                   "done;"
                   "( : >> /usr/bin/sh ) 2>/dev/null && echo 'opened /usr/bin/sh';"
                   "true");
  g_assert_cmpstr (out, ==, "");
  escape_session_close (&s);
}

/* Under an allow-list the guest (not root) still reaches its gateway. */
static void
test_gateway_socket_reachable (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autofree char *directory = escape_state_directory_new ();
  g_autoptr(SandboxBackend) backend = escape_backend_new (directory, NULL);
  g_autofree char *key = escape_prewarm (backend);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autofree char *out = NULL;

  policy = sandbox_network_policy_new_from_json ("{\"allow\":[{\"origin\":\"http://127.0.0.1:9/\","
                                                 "\"headers\":{}}]}", &error);
  g_assert_no_error (error);
  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  /* A host the policy does not allow: the gateway itself answers. */
  out = escape_sh (sandbox_handle_get_session (handle),
                   "curl -s --unix-socket /run/sandbox-network.sock http://not-allowed.invalid/");
  g_assert_cmpstr (out, ==, "Sandbox network denied");
  sandbox_handle_delete (handle, NULL, &error);
  g_assert_no_error (error);
  escape_state_directory_remove (directory);
}

/* A state directory deep below a directory only the host may pass (as
 * under /root), with open directories between: the guest still gets its
 * workspace and its gateway, and nothing else of the way down. */
static void
test_state_directory_below_closed_directory (void)
{
  g_autofree char *closed = escape_state_directory_new ();   /* 0700 */
  g_autofree char *open_between = g_build_filename (closed, "open", "between", NULL);
  g_autofree char *directory = g_build_filename (open_between, "state", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autofree char *key = NULL;
  g_autofree char *out = NULL;

  g_assert_cmpint (g_mkdir_with_parents (open_between, 0755), ==, 0);
  g_assert_cmpint (chmod (closed, 0700), ==, 0);
  backend = escape_backend_new (directory, NULL);
  key = escape_prewarm (backend);
  policy = sandbox_network_policy_new_from_json ("{\"allow\":[{\"origin\":\"http://127.0.0.1:9/\","
                                                 "\"headers\":{}}]}", &error);
  g_assert_no_error (error);
  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  out = escape_sh (sandbox_handle_get_session (handle),
                   "echo guest >> /workspace/hello.txt && cat /workspace/hello.txt &&"
                   "curl -s --unix-socket /run/sandbox-network.sock http://not-allowed.invalid/");
  g_assert_cmpstr (out, ==, "helloguest\nSandbox network denied");
  sandbox_handle_delete (handle, NULL, &error);
  g_assert_no_error (error);
  escape_state_directory_remove (closed);
}

static SandboxBackend *
try_backend_with_ids (const char  *directory,
                      gint64       uid,
                      gint64       gid,
                      GError     **error)
{
  g_autofree char *uid_text = g_strdup_printf ("%" G_GINT64_FORMAT, uid);
  g_autofree char *gid_text = g_strdup_printf ("%" G_GINT64_FORMAT, gid);

  return sandbox_test_bubblewrap_new (directory, error, "guest-uid", uid_text,
                                      "guest-gid", gid_text, NULL);
}

/* guest-uid, guest-gid and guest-id-range read back as the ids in force:
 * a root host's sessions each have their own (-1, and the default range),
 * an unprivileged host's guests are the host. */
static void
test_default_ids_read_back (void)
{
  g_autofree char *directory = escape_state_directory_new ();
  g_autoptr(SandboxBackend) backend = escape_backend_new (directory, NULL);
  g_autofree char *range = NULL;
  gint64 uid = 0, gid = 0;

  g_object_get (backend, "guest-uid", &uid, "guest-gid", &gid, "guest-id-range", &range, NULL);
  if (escape_running_as_root ())
    {
      g_assert_cmpint (uid, ==, -1);
      g_assert_cmpint (gid, ==, -1);
      g_assert_cmpstr (range, ==, "1879048192:65536");
    }
  else
    {
      g_assert_cmpint (uid, ==, getuid ());
      g_assert_cmpint (gid, ==, getgid ());
      g_assert_null (range);
    }
  escape_state_directory_remove (directory);
}

/* An operator's service ids (root only): the guest runs as them. Root
 * ids are refused, as is any id an unprivileged host cannot switch to. */
static void
test_chosen_ids (void)
{
  g_autofree char *directory = escape_state_directory_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) refused = NULL;

  refused = try_backend_with_ids (directory, 0, 4242, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_null (refused);
  g_clear_error (&error);
  refused = try_backend_with_ids (directory, 4242, 0, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  if (!escape_running_as_root ())
    {
      /* Only root can start a process as another user. */
      refused = try_backend_with_ids (directory, getuid () + 1, getgid (), &error);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
      g_assert_null (refused);
    }
  else
    {
      g_autoptr(SandboxBackend) backend = try_backend_with_ids (directory, 4242, 4343, &error);
      g_autoptr(SandboxHandle) handle = NULL;
      g_autofree char *key = NULL;
      g_autofree char *out = NULL;

      g_assert_no_error (error);
      key = escape_prewarm (backend);
      handle = escape_create (backend, key);
      /* The guest's own namespace maps its ids to themselves. */
      out = escape_sh (sandbox_handle_get_session (handle),
                       "id -u; id -g; stat -c '%u:%g' /workspace /workspace/hello.txt;"
                       "echo more >> /workspace/hello.txt && echo written");
      g_assert_cmpstr (out, ==, "4242\n4343\n4242:4343\n4242:4343\nwritten\n");
      sandbox_handle_delete (handle, NULL, &error);
      g_assert_no_error (error);
    }
  escape_state_directory_remove (directory);
}

/* A workspace an older version left (everything owned by root, as its
 * root guests wrote it) is given to the guest on resume — while no guest
 * runs, never through a link: a symbolic link the old guest planted
 * towards a host file is re-owned itself, its target is not; a FIFO is
 * re-owned without being opened (which would block). */
static void
test_resume_reowns_root_workspace (void)
{
  EscapeSession s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autofree char *workspace = NULL;
  g_autofree char *outside = NULL;
  g_autofree char *command = NULL;
  g_autofree char *out = NULL;
  g_autofree char *link = NULL;
  g_autofree char *session_directory = NULL;
  g_autofree char *layers = NULL;
  const char *top;
  struct stat st;
  guint uid, gid;

  if (!escape_running_as_root ())
    {
      g_test_skip ("only root can leave a root-owned workspace");
      return;
    }
  escape_session_open (&s, NULL);
  expected_guest_ids (&s, &uid, &gid);
  workspace = escape_workspace_directory (&s);
  /* All of the session's own tree: of a layered session, layers/ (the
   * upper layer and overlayfs' work directory). */
  session_directory = escape_session_directory (&s);
  layers = g_build_filename (session_directory, "layers", NULL);
  top = g_file_test (layers, G_FILE_TEST_IS_DIR) ? layers : workspace;
  state = escape_session_stop (&s);

  /* What an older version's root guest left behind. */
  outside = g_build_filename (s.state_directory, "host-file", NULL);
  g_assert_true (g_file_set_contents (outside, "host", -1, &error));
  link = g_build_filename (workspace, "to-host", NULL);
  g_assert_cmpint (symlink (outside, link), ==, 0);
  command = g_strdup_printf ("set -e; cd '%s'; mkdir -p old/dir; echo old > old/dir/file;"
                             "mkfifo old/fifo; chown -hR 0:0 '%s'; chmod 0755 . old old/dir",
                             workspace, top);
  g_assert_cmpint (system (command), ==, 0);

  escape_session_resume (&s, state);
  out = escape_sh (s.session,
                   "set -e; cd /workspace; echo new >> old/dir/file; echo new >> hello.txt;"
                   "touch old/dir/more; echo ok");
  g_assert_cmpstr (out, ==, "ok\n");
  assert_owned_by (workspace, uid, gid);
  assert_owned_by (link, uid, gid);
  {
    g_autofree char *fifo = g_build_filename (workspace, "old", "fifo", NULL);

    assert_owned_by (fifo, uid, gid);
  }
  g_assert_cmpint (stat (outside, &st), ==, 0);
  g_assert_cmpuint (st.st_uid, ==, 0);
  g_assert_cmpuint (st.st_gid, ==, 0);
  escape_session_close (&s);
}

/* A host that is root only of a user namespace mapping nothing but itself
 * (a container's root; here `unshare -r`) cannot switch to the overflow
 * ids: construction says so, rather than every spawn failing. */
static void
test_unmapped_guest_refused_child (void)
{
  g_autofree char *directory = escape_state_directory_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;

  g_assert_cmpint (geteuid (), ==, 0);
  backend = sandbox_backend_new ("bubblewrap", NULL, &error,
                                 "state-directory", directory, NULL);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "not mapped"));
  g_assert_null (backend);
  g_clear_error (&error);

  /* A range the operator named must be mapped: no fallback then. */
  backend = sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", directory,
                                 "guest-id-range", "1879048192:16", NULL);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "guest-id-range"));
  g_assert_null (backend);
  escape_state_directory_remove (directory);
}

static void
test_unmapped_guest_refused (void)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  g_autoptr(GSubprocess) child = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (self);
  g_subprocess_launcher_setenv (launcher, "ESCAPE_IDENTITY_UNMAPPED_CHILD", "1", TRUE);
  child = g_subprocess_launcher_spawn (launcher, &error, "unshare", "--user", "--map-root-user",
                                       self, "-p", "/sandbox/escape/identity/unmapped-child",
                                       NULL);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_wait_check (child, NULL, &error));
  g_assert_no_error (error);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  if (g_getenv ("ESCAPE_IDENTITY_UNMAPPED_CHILD") != NULL)
    {
      g_test_add_func ("/sandbox/escape/identity/unmapped-child", test_unmapped_guest_refused_child);
      return g_test_run ();
    }

  g_test_add_func ("/sandbox/escape/identity/guest-is-not-host-root", test_guest_is_not_host_root);
  g_test_add_func ("/sandbox/escape/identity/workspace-owned-by-guest",
                   test_workspace_owned_by_guest);
  g_test_add_func ("/sandbox/escape/identity/host-written-files-writable",
                   test_host_written_files_writable);
  g_test_add_func ("/sandbox/escape/identity/no-write-outside-workspace",
                   test_no_write_outside_workspace);
  g_test_add_func ("/sandbox/escape/identity/gateway-socket-reachable",
                   test_gateway_socket_reachable);
  g_test_add_func ("/sandbox/escape/identity/state-directory-below-closed-directory",
                   test_state_directory_below_closed_directory);
  g_test_add_func ("/sandbox/escape/identity/default-ids-read-back", test_default_ids_read_back);
  g_test_add_func ("/sandbox/escape/identity/chosen-ids", test_chosen_ids);
  g_test_add_func ("/sandbox/escape/identity/resume-reowns-root-workspace",
                   test_resume_reowns_root_workspace);
  g_test_add_func ("/sandbox/escape/identity/unmapped-guest-refused", test_unmapped_guest_refused);

  return g_test_run ();
}
