/* test-quota.c — a disk quota per session (workspace-quota-bytes) on btrfs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * With `workspace-quota-bytes` set, the bubblewrap backend makes each new
 * session's workspace a btrfs subvolume whose qgroup limits what it
 * references; the session's lease and state stay outside, so a full
 * session can still be stopped, resumed and deleted.
 *
 * Refused: a state directory that is not on btrfs (as root and
 * unprivileged), and, as root, a btrfs without quotas, a process without
 * CAP_SYS_ADMIN on a btrfs with them, and the seccomp filter off — each
 * fails construction with SANDBOX_ERROR_UNAVAILABLE naming the property.
 * Enforced (root only): each case makes a btrfs of its own in a file on a
 * loop device (mkfs.btrfs, mount -o loop, btrfs quota enable) and runs
 * once with `layering` "copy" and once with "auto". A backend with a quota
 * copies new sessions either way (an overlay's work directories would
 * have to share the full quota); a layered session made before the quota
 * is resumed layered.
 *
 * The filesystem is set up and torn down by the fixture in the test
 * process; the test's body runs in a subprocess (g_test_trap_subprocess()),
 * so a failed assertion aborts only the subprocess and the teardown still
 * unmounts and removes the file. Nothing in the test process asserts
 * between the mount and the unmount: a step that fails marks the test
 * failed (g_test_fail_printf()) and the teardown undoes what was done. The
 * subprocess finds the state directory in SANDBOX_TEST_QUOTA_STATE.
 */

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"

#define MIB (G_GUINT64_CONSTANT (1024) * 1024)
#define QUOTA (16 * MIB)
/* btrfs checks a qgroup's limit against reservations, in blocks: a writer
 * may end a little past the limit, never a megabyte past. */
#define QUOTA_SLACK MIB
#define STATE_VARIABLE "SANDBOX_TEST_QUOTA_STATE"
#define QUOTA_EXCEEDED "Disk quota exceeded"
/* Debian's btrfs-progs; /usr/sbin may be missing from PATH. */
#define MKFS_BTRFS "/usr/sbin/mkfs.btrfs"
#define BTRFS "/usr/bin/btrfs"
/* Who the refusal of an unprivileged process runs as: the kit's, Debian's
 * nobody. */
#define UNPRIVILEGED_ID SANDBOX_TEST_UNPRIVILEGED_ID

/* Host commands ---------------------------------------------------------------- */

/* Runs @argv (searched in PATH) to completion. Returns its stdout, or
 * %NULL with @error set, naming the command and its stderr, unless it
 * exits 0. */
static char *
host_run (const char * const  *argv,
          GError             **error)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *command = g_strjoinv (" ", (char **) argv);
  int status;

  if (!g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                     &out, &err, &status, error))
    return NULL;
  if (!g_spawn_check_wait_status (status, error))
    {
      g_prefix_error (error, "%s: %s: ", command, g_strstrip (err));
      return NULL;
    }
  return g_steal_pointer (&out);
}

#define HOST_RUN(error, ...) host_run ((const char * const []) { __VA_ARGS__, NULL }, error)

/* Runs @argv and fails the test unless it exits 0; returns its stdout. */
static char *
host_check (const char * const *argv)
{
  g_autoptr(GError) error = NULL;
  char *out = host_run (argv, &error);

  g_assert_no_error (error);
  return out;
}

#define HOST_CHECK(...) host_check ((const char * const []) { __VA_ARGS__, NULL })

/* Fixture: a btrfs on a loop device ----------------------------------------- */

typedef struct
{
  const char *layering;       /* the backend's "layering": "copy" or "auto" */
  gboolean quotas;            /* btrfs quota enable */
  void (*body) (const char *state, const char *layering);
} Case;

typedef struct
{
  char *base;       /* g_dir_make_tmp(): holds the image and the mount point */
  char *image;
  char *mount;
  char *state;      /* the state directory, mount/state */
  gboolean mounted;
  gboolean ready;   /* the body may run */
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  const Case *test_case = data;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  if (g_test_subprocess ())
    {
      fixture->state = g_strdup (g_getenv (STATE_VARIABLE));
      g_assert_nonnull (fixture->state);
      fixture->ready = TRUE;
      return;
    }
  if (geteuid () != 0)
    {
      g_test_skip ("making and mounting a btrfs needs root (the unprivileged run covers "
                   "the refusal on a filesystem that is not btrfs)");
      return;
    }
  if (!g_file_test (BTRFS, G_FILE_TEST_IS_EXECUTABLE) ||
      !g_file_test (MKFS_BTRFS, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("btrfs-progs is not installed: no btrfs to make (./dev deps installs it)");
      return;
    }

  /* From here on, no assertion: the teardown must run to undo what was
   * done, so a step that fails marks the test failed and stops. */
  fixture->base = g_dir_make_tmp ("sandbox-quota-XXXXXX", &error);
  if (fixture->base == NULL)
    {
      g_test_fail_printf ("%s", error->message);
      return;
    }
  fixture->image = g_build_filename (fixture->base, "btrfs.img", NULL);
  fixture->mount = g_build_filename (fixture->base, "mnt", NULL);
  fixture->state = g_build_filename (fixture->mount, "state", NULL);
  if (g_mkdir (fixture->mount, 0700) != 0)
    {
      g_test_fail_printf ("mkdir %s: %s", fixture->mount, g_strerror (errno));
      return;
    }
  if ((out = HOST_RUN (&error, "truncate", "-s", "512M", fixture->image)) == NULL)
    goto failed;
  g_clear_pointer (&out, g_free);
  if ((out = HOST_RUN (&error, MKFS_BTRFS, "-q", fixture->image)) == NULL)
    goto failed;
  g_clear_pointer (&out, g_free);
  if ((out = HOST_RUN (&error, "mount", "-o", "loop", fixture->image, fixture->mount)) == NULL)
    goto failed;
  g_clear_pointer (&out, g_free);
  fixture->mounted = TRUE;
  if (test_case->quotas &&
      (out = HOST_RUN (&error, BTRFS, "quota", "enable", fixture->mount)) == NULL)
    goto failed;
  if (g_mkdir (fixture->state, 0700) != 0)
    {
      g_test_fail_printf ("mkdir %s: %s", fixture->state, g_strerror (errno));
      return;
    }
  g_setenv (STATE_VARIABLE, fixture->state, TRUE);
  fixture->ready = TRUE;
  return;

failed:
  g_test_fail_printf ("%s", error->message);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  if (!g_test_subprocess ())
    g_unsetenv (STATE_VARIABLE);
  if (fixture->mounted)
    {
      out = HOST_RUN (&error, "umount", fixture->mount);
      if (out == NULL)
        {
          /* Something still holds it: a leak the test reports. Detach it
           * anyway, so the loop device goes once the holder does. */
          g_test_fail_printf ("%s", error->message);
          g_clear_error (&error);
          g_free (HOST_RUN (&error, "umount", "--lazy", fixture->mount));
          g_clear_error (&error);
        }
    }
  if (fixture->base != NULL)
    {
      g_free (HOST_RUN (&error, "rm", "-rf", "--one-file-system", fixture->base));
      if (error != NULL)
        g_test_fail_printf ("%s", error->message);
    }
  g_free (fixture->base);
  g_free (fixture->image);
  g_free (fixture->mount);
  g_free (fixture->state);
}

static void
test_in_subprocess (Fixture       *fixture,
                    gconstpointer  data)
{
  const Case *test_case = data;

  if (!fixture->ready)
    return;
  if (g_test_subprocess ())
    {
      test_case->body (fixture->state, test_case->layering);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  /* Not g_test_trap_assert_passed (), which would abort before the
   * teardown: the subprocess's own message is on stderr already. */
  if (!g_test_trap_has_passed ())
    g_test_fail_printf ("the test's subprocess failed");
}

/* Backends and sessions ------------------------------------------------------ */

/* A backend on @state with @layering ("copy" or "auto") and @quota.
 * Its new sessions are layered only when asked to and without a quota:
 * with one they are copied (the property's documented fallback). */
static SandboxBackend *
quota_backend_new (const char  *state,
                   const char  *layering,
                   guint64      quota,
                   GError     **error)
{
  g_autofree char *quota_text = g_strdup_printf ("%" G_GUINT64_FORMAT, quota);
  g_autofree char *chosen = NULL;
  SandboxBackend *backend;

  backend = sandbox_test_bubblewrap_new (state, error,
                                         "layering", layering,
                                         "workspace-quota-bytes", quota_text,
                                         NULL);
  if (backend == NULL)
    return NULL;
  g_object_get (backend, "workspace-layering", &chosen, NULL);
  g_assert_cmpstr (chosen, ==,
                   g_str_equal (layering, "auto") && quota == 0 ? "overlay" : "copy");
  return backend;
}

static SandboxBackend *
quota_backend_check (const char *state,
                     const char *layering,
                     guint64     quota)
{
  g_autoptr(GError) error = NULL;
  SandboxBackend *backend = quota_backend_new (state, layering, quota, &error);

  g_assert_no_error (error);
  g_assert_nonnull (backend);
  return backend;
}

static char *
prewarm_hello (SandboxBackend *backend)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("quota");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(GError) error = NULL;
  char *key;

  g_assert_true (sandbox_template_add_file (template_, "hello.txt", hello, &error));
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  return key;
}

static SandboxHandle *
create_session (SandboxBackend *backend,
                const char     *key,
                SandboxState   *state)
{
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  SandboxHandle *handle = sandbox_backend_create (backend, key, state, deny, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (handle);
  return handle;
}

static void
delete_session (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_handle_delete (handle, NULL, &error));
  g_assert_no_error (error);
}

/* The host path of @session's directory in the store of @state_directory:
 * what becomes a subvolume. */
static char *
session_directory (const char     *state_directory,
                   SandboxSession *session)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);

  return g_build_filename (state_directory, digest, "sessions",
                           sandbox_session_get_id (session), NULL);
}

/* The size of the file @name of @session's own workspace, from the host. */
static guint64
workspace_file_size (const char     *state_directory,
                     SandboxSession *session,
                     const char     *name)
{
  g_autofree char *directory = session_directory (state_directory, session);
  g_autofree char *workspace = sandbox_test_workspace_directory (directory);
  g_autofree char *path = g_build_filename (workspace, name, NULL);
  GStatBuf st;

  if (g_stat (path, &st) != 0)
    {
      g_assert_cmpint (errno, ==, ENOENT);
      return 0;
    }
  return st.st_size;
}

/* Runs `dd` in the guest, writing @mib MiB of zeros to /workspace/@name
 * and syncing them. */
static SandboxResult *
guest_dd (SandboxSession *session,
          const char     *name,
          guint           mib)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/dd");
  g_autoptr(GError) error = NULL;
  g_autofree char *of = g_strdup_printf ("of=/workspace/%s", name);
  g_autofree char *count = g_strdup_printf ("count=%u", mib);
  SandboxResult *result;

  sandbox_command_add_arg (command, "if=/dev/zero");
  sandbox_command_add_arg (command, of);
  sandbox_command_add_arg (command, "bs=1M");
  sandbox_command_add_arg (command, count);
  sandbox_command_add_arg (command, "conv=fsync");
  result = sandbox_session_run (session, command, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static void
assert_dd_succeeded (SandboxResult *result)
{
  g_autofree char *err = sandbox_result_dup_stderr_text (result);

  if (sandbox_result_get_exit_status (result) != 0)
    g_error ("dd in the guest failed (%d): %s", sandbox_result_get_exit_status (result), err);
}

static void
assert_dd_quota_exceeded (SandboxResult *result)
{
  g_autofree char *err = sandbox_result_dup_stderr_text (result);

  g_assert_cmpint (sandbox_result_get_exit_status (result), !=, 0);
  if (strstr (err, QUOTA_EXCEEDED) == NULL)
    g_error ("dd in the guest failed, but not with “%s”: %s", QUOTA_EXCEEDED, err);
}

/* Fills @session's quota from the guest: a 64 MiB write stops with EDQUOT
 * within a block of the limit. */
static void
fill_from_guest (const char     *state_directory,
                 SandboxSession *session)
{
  g_autoptr(SandboxResult) result = guest_dd (session, "fill", 64);
  guint64 size;

  assert_dd_quota_exceeded (result);
  size = workspace_file_size (state_directory, session, "fill");
  g_assert_cmpuint (size, <=, QUOTA + QUOTA_SLACK);
  /* Stopped by this limit, not by some far smaller one. */
  g_assert_cmpuint (size, >=, QUOTA / 2);
}

/* Refused construction --------------------------------------------------------- */

static void
assert_refused (GError *error)
{
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  if (strstr (error->message, "workspace-quota-bytes") == NULL)
    g_error ("the refusal does not name workspace-quota-bytes: %s", error->message);
}

static void
test_refused_not_btrfs (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state = g_dir_make_tmp ("sandbox-quota-XXXXXX", &error);
  g_autoptr(SandboxBackend) backend = NULL;

  g_assert_no_error (error);
  backend = quota_backend_new (state, "copy", QUOTA, &error);
  assert_refused (error);
  g_assert_null (backend);
  g_assert_cmpint (g_rmdir (state), ==, 0);
}

static void
test_off_constructs_anywhere (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state = g_dir_make_tmp ("sandbox-quota-XXXXXX", &error);
  g_autoptr(SandboxBackend) backend = NULL;
  guint64 quota = G_MAXUINT64;

  g_assert_no_error (error);
  backend = quota_backend_new (state, "copy", 0, &error);
  g_assert_no_error (error);
  g_assert_nonnull (backend);
  g_object_get (backend, "workspace-quota-bytes", &quota, NULL);
  g_assert_cmpuint (quota, ==, 0);
  g_clear_object (&backend);
  g_free (HOST_CHECK ("rm", "-rf", state));
}

static void
body_refused_without_quotas (const char *state,
                             const char *layering)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = quota_backend_new (state, layering, QUOTA, &error);

  assert_refused (error);
  g_assert_null (backend);
}

/* Without the seccomp filter nothing keeps a guest from making a
 * subvolume of its own in the workspace, outside its qgroup: refused. */
static void
body_refused_without_seccomp (const char *state,
                              const char *layering)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;

  backend = sandbox_test_bubblewrap_new (state, &error,
                                         "layering", layering,
                                         "seccomp", "false",
                                         "workspace-quota-bytes", "16777216",
                                         NULL);
  assert_refused (error);
  g_assert_null (backend);
}

/* On a btrfs with quotas, a process that is not root cannot make
 * subvolumes or set limits: refused. Run as nobody, in the subprocess. */
static void
body_refused_unprivileged (const char *state,
                           const char *layering)
{
  g_autofree char *mount = g_path_get_dirname (state);
  g_autofree char *base = g_path_get_dirname (mount);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;

  /* nobody may reach its own state directory, and nothing else. */
  g_assert_cmpint (chmod (base, 0711), ==, 0);
  g_assert_cmpint (chmod (mount, 0711), ==, 0);
  g_assert_cmpint (chown (state, UNPRIVILEGED_ID, UNPRIVILEGED_ID), ==, 0);
  sandbox_test_become_unprivileged ();

  backend = quota_backend_new (state, layering, QUOTA, &error);
  assert_refused (error);
  g_assert_null (backend);
}

/* Enforced --------------------------------------------------------------------- */

/* A new session's workspace is a subvolume (inode 256) whose qgroup
 * limits its referenced bytes to the quota. */
static void
body_workspace_is_limited_subvolume (const char *state,
                                     const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, QUOTA);
  g_autofree char *key = prewarm_hello (backend);
  g_autoptr(SandboxHandle) handle = create_session (backend, key, NULL);
  g_autofree char *session = session_directory (state, sandbox_handle_get_session (handle));
  g_autofree char *directory = sandbox_test_workspace_directory (session);
  g_autofree char *show = NULL;
  g_autofree char *qgroups = NULL;
  g_autofree char *limit = g_strdup_printf ("%" G_GUINT64_FORMAT, QUOTA);
  g_auto(GStrv) lines = NULL;
  gboolean found = FALSE;
  GStatBuf st;

  g_assert_cmpint (g_stat (directory, &st), ==, 0);
  g_assert_cmpuint (st.st_ino, ==, 256);
  show = HOST_CHECK (BTRFS, "subvolume", "show", directory);

  /* Qgroupid  Referenced  Exclusive  Max referenced  Path, for the qgroups
   * that limit the subvolume: its own, 0/<subvolume id>, limited. */
  qgroups = HOST_CHECK (BTRFS, "qgroup", "show", "-rf", "--raw", directory);
  lines = g_strsplit (qgroups, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit_set (g_strstrip (lines[i]), " \t", -1);
      g_autoptr(GPtrArray) words = g_ptr_array_new ();

      for (guint j = 0; fields[j] != NULL; j++)
        if (fields[j][0] != '\0')
          g_ptr_array_add (words, fields[j]);
      if (words->len >= 4 && g_str_has_prefix (words->pdata[0], "0/"))
        {
          g_assert_cmpstr (words->pdata[3], ==, limit);
          found = TRUE;
        }
    }
  if (!found)
    g_error ("no qgroup of the session's subvolume in:\n%s", qgroups);

  delete_session (handle);
}

static void
body_guest_write_stops_at_quota (const char *state,
                                 const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, QUOTA);
  g_autofree char *key = prewarm_hello (backend);
  g_autoptr(SandboxHandle) handle = create_session (backend, key, NULL);

  fill_from_guest (state, sandbox_handle_get_session (handle));
  delete_session (handle);
}

/* Runs @script with sh in the guest; returns its exit status. */
static int
guest_sh_status (SandboxSession *session,
                 const char     *script)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sh");
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, script);
  result = sandbox_session_run (session, command, NULL, &error);
  g_assert_no_error (error);
  return sandbox_result_get_exit_status (result);
}

/* A guest cannot make a subvolume (or a snapshot, one) of its own in the
 * workspace: it would have a qgroup of its own, outside the quota. */
static void
body_guest_makes_no_subvolume (const char *state,
                               const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, QUOTA);
  g_autofree char *key = prewarm_hello (backend);
  g_autoptr(SandboxHandle) handle = create_session (backend, key, NULL);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autofree char *directory = session_directory (state, session);
  g_autofree char *workspace = sandbox_test_workspace_directory (directory);
  g_autofree char *escape = g_build_filename (workspace, "escape", NULL);
  g_autofree char *snapshot = g_build_filename (workspace, "snapshot", NULL);

  g_assert_cmpint (guest_sh_status (session, BTRFS " subvolume create /workspace/escape"), !=, 0);
  g_assert_cmpint (guest_sh_status (session, BTRFS " subvolume snapshot /workspace "
                                             "/workspace/snapshot"), !=, 0);
  g_assert_false (g_file_test (escape, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (snapshot, G_FILE_TEST_EXISTS));

  delete_session (handle);
}

/* A guest that removes files makes room again: the quota counts what the
 * workspace holds, not what was ever written. */
static void
body_removing_files_makes_room (const char *state,
                                const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, QUOTA);
  g_autofree char *key = prewarm_hello (backend);
  g_autoptr(SandboxHandle) handle = create_session (backend, key, NULL);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autoptr(SandboxCommand) remove = sandbox_command_new ("/usr/bin/rm");
  g_autoptr(SandboxResult) removed = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  fill_from_guest (state, session);
  sandbox_command_add_arg (remove, "/workspace/fill");
  removed = sandbox_session_run (session, remove, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (removed), ==, 0);
  result = guest_dd (session, "half", QUOTA / MIB / 2);
  assert_dd_succeeded (result);
  g_assert_cmpuint (workspace_file_size (state, session, "half"), ==, QUOTA / 2);

  delete_session (handle);
}

static void
body_other_session_unaffected (const char *state,
                               const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, QUOTA);
  g_autofree char *key = prewarm_hello (backend);
  g_autoptr(SandboxHandle) full = create_session (backend, key, NULL);
  g_autoptr(SandboxHandle) other = create_session (backend, key, NULL);
  g_autoptr(SandboxResult) result = NULL;

  fill_from_guest (state, sandbox_handle_get_session (full));
  result = guest_dd (sandbox_handle_get_session (other), "half", QUOTA / MIB / 2);
  assert_dd_succeeded (result);
  g_assert_cmpuint (workspace_file_size (state, sandbox_handle_get_session (other), "half"), ==,
                    QUOTA / 2);

  delete_session (full);
  delete_session (other);
}

/* Stopped and resumed, by a backend made afresh as after a restart, the
 * session keeps its limit. */
static void
body_limit_survives_resume (const char *state,
                            const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, QUOTA);
  g_autofree char *key = prewarm_hello (backend);
  g_autoptr(SandboxHandle) handle = create_session (backend, key, NULL);
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) saved = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  SandboxSession *session;

  fill_from_guest (state, sandbox_handle_get_session (handle));
  saved = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&handle);
  g_clear_object (&backend);

  backend = quota_backend_check (state, layering, QUOTA);
  resumed = create_session (backend, key, saved);
  session = sandbox_handle_get_session (resumed);
  result = guest_dd (session, "more", QUOTA / MIB / 2);
  assert_dd_quota_exceeded (result);
  g_assert_cmpuint (workspace_file_size (state, session, "fill") +
                    workspace_file_size (state, session, "more"), <=, QUOTA + QUOTA_SLACK);

  delete_session (resumed);
}

/* The host's write into a full session fails whole: an error, and no file
 * of that name, not even a partial one. */
static void
body_host_write_fails_whole (const char *state,
                             const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, QUOTA);
  g_autofree char *key = prewarm_hello (backend);
  g_autoptr(SandboxHandle) handle = create_session (backend, key, NULL);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autofree char *directory = session_directory (state, session);
  g_autofree char *workspace = sandbox_test_workspace_directory (directory);
  g_autofree char *written = g_build_filename (workspace, "host.bin", NULL);
  g_autofree guint8 *zeros = g_malloc0 (MIB);
  g_autoptr(GBytes) contents = g_bytes_new_take (g_steal_pointer (&zeros), MIB);
  g_autoptr(GBytes) read_back = NULL;
  g_autoptr(GError) error = NULL;
  guint entries;

  fill_from_guest (state, session);
  entries = sandbox_test_count_entries (workspace);

  g_assert_false (sandbox_session_write_bytes (session, "host.bin", contents, NULL, &error));
  /* GLib 2.74 maps EDQUOT to no code of its own: the backend says no space. */
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE);
  g_clear_error (&error);

  g_assert_false (g_file_test (written, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (sandbox_test_count_entries (workspace), ==, entries);
  read_back = sandbox_session_read_bytes (session, "host.bin", NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_null (read_back);

  delete_session (handle);
}

static void
body_delete_removes_subvolume (const char *state,
                               const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, QUOTA);
  g_autofree char *key = prewarm_hello (backend);
  g_autoptr(SandboxHandle) handle = create_session (backend, key, NULL);
  g_autofree char *directory = session_directory (state, sandbox_handle_get_session (handle));
  g_autofree char *mount = g_path_get_dirname (state);
  g_autofree char *listed = NULL;
  g_autofree char *id = g_strdup (sandbox_session_get_id (sandbox_handle_get_session (handle)));
  g_autoptr(SandboxResult) result = guest_dd (sandbox_handle_get_session (handle), "some", 1);

  assert_dd_succeeded (result);
  g_assert_true (g_file_test (directory, G_FILE_TEST_IS_DIR));
  delete_session (handle);
  g_assert_false (g_file_test (directory, G_FILE_TEST_EXISTS));
  listed = HOST_CHECK (BTRFS, "subvolume", "list", mount);
  g_assert_null (strstr (listed, id));
}

/* The quota is for sessions created from then on: one created by a
 * backend without it (layered with "auto") and resumed by one with it
 * keeps its layout and no limit. */
static void
body_earlier_session_keeps_no_limit (const char *state,
                                     const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, 0);
  g_autofree char *key = prewarm_hello (backend);
  g_autoptr(SandboxHandle) handle = create_session (backend, key, NULL);
  g_autofree char *directory = session_directory (state, sandbox_handle_get_session (handle));
  g_autofree char *layers = g_build_filename (directory, "layers", NULL);
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) saved = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  SandboxSession *session;

  saved = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&handle);
  g_clear_object (&backend);

  backend = quota_backend_check (state, layering, QUOTA);
  resumed = create_session (backend, key, saved);
  session = sandbox_handle_get_session (resumed);
  g_assert_cmpint (g_file_test (layers, G_FILE_TEST_IS_DIR), ==, g_str_equal (layering, "auto"));
  result = guest_dd (session, "past", 2 * QUOTA / MIB);
  assert_dd_succeeded (result);
  g_assert_cmpuint (workspace_file_size (state, session, "past"), ==, 2 * QUOTA);

  delete_session (resumed);
}

/* The session's copy of its template counts: a guest of a session whose
 * template holds half the quota can write the other half, not more. */
static void
body_template_counts (const char *state,
                      const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, QUOTA);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("half");
  g_autoptr(GBytes) half = g_bytes_new_take (g_malloc0 (QUOTA / 2), QUOTA / 2);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  SandboxSession *session;

  g_assert_true (sandbox_template_add_file (template_, "half.bin", half, &error));
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  handle = create_session (backend, key, NULL);
  session = sandbox_handle_get_session (handle);

  result = guest_dd (session, "fill", QUOTA / MIB);
  assert_dd_quota_exceeded (result);
  g_assert_cmpuint (workspace_file_size (state, session, "half.bin") +
                    workspace_file_size (state, session, "fill"), <=, QUOTA + QUOTA_SLACK);

  delete_session (handle);
}

/* A template larger than the quota makes no session a guest can write
 * to: either the create fails with no space and leaves no session behind,
 * or the session is full from the start. */
static void
body_oversized_template_leaves_no_room (const char *state,
                                        const char *layering)
{
  g_autoptr(SandboxBackend) backend = quota_backend_check (state, layering, QUOTA);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("oversized");
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(GBytes) big = g_bytes_new_take (g_malloc0 (QUOTA + 4 * MIB), QUOTA + 4 * MIB);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *sessions = g_build_filename (state, digest, "sessions", NULL);

  g_assert_true (sandbox_template_add_file (template_, "big.bin", big, &error));
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);

  handle = sandbox_backend_create (backend, key, NULL, deny, NULL, &error);
  if (handle != NULL)
    {
      g_autoptr(SandboxResult) result = guest_dd (sandbox_handle_get_session (handle), "more", 1);

      assert_dd_quota_exceeded (result);
      delete_session (handle);
      return;
    }
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NO_SPACE);
  if (g_file_test (sessions, G_FILE_TEST_IS_DIR))
    g_assert_cmpuint (sandbox_test_count_entries (sessions), ==, 0);
}

/* Registration ----------------------------------------------------------------- */

typedef struct
{
  const char *name;
  void (*body) (const char *state, const char *layering);
} Enforced;

static const Enforced enforced[] = {
  { "workspace-is-limited-subvolume", body_workspace_is_limited_subvolume },
  { "guest-write-stops-at-quota", body_guest_write_stops_at_quota },
  { "removing-files-makes-room", body_removing_files_makes_room },
  { "guest-makes-no-subvolume", body_guest_makes_no_subvolume },
  { "other-session-unaffected", body_other_session_unaffected },
  { "limit-survives-resume", body_limit_survives_resume },
  { "host-write-fails-whole", body_host_write_fails_whole },
  { "delete-removes-subvolume", body_delete_removes_subvolume },
  { "earlier-session-keeps-no-limit", body_earlier_session_keeps_no_limit },
  { "template-counts", body_template_counts },
  { "oversized-template-leaves-no-room", body_oversized_template_leaves_no_room },
};

static const char * const layerings[] = { "copy", "auto" };

static void
add_case (const char *path,
          const Case *test_case)
{
  g_test_add (path, Fixture, test_case, fixture_set_up, test_in_subprocess, fixture_tear_down);
}

int
main (int    argc,
      char **argv)
{
  /* Static, not allocated: a subprocess runs one case and exits without
   * freeing the suite. */
  static const Case without_quotas = { "copy", FALSE, body_refused_without_quotas };
  static const Case unprivileged = { "copy", TRUE, body_refused_unprivileged };
  static const Case without_seccomp = { "copy", TRUE, body_refused_without_seccomp };
  static Case cases[G_N_ELEMENTS (enforced) * G_N_ELEMENTS (layerings)];
  guint n = 0;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/bubblewrap/quota/refused/not-btrfs", test_refused_not_btrfs);
  g_test_add_func ("/sandbox/bubblewrap/quota/off/constructs-anywhere",
                   test_off_constructs_anywhere);
  add_case ("/sandbox/bubblewrap/quota/refused/btrfs-without-quotas", &without_quotas);
  add_case ("/sandbox/bubblewrap/quota/refused/unprivileged-on-btrfs", &unprivileged);
  add_case ("/sandbox/bubblewrap/quota/refused/without-seccomp", &without_seccomp);

  for (guint i = 0; i < G_N_ELEMENTS (enforced); i++)
    for (guint j = 0; j < G_N_ELEMENTS (layerings); j++)
      {
        Case *test_case = &cases[n++];
        g_autofree char *path = NULL;

        test_case->layering = layerings[j];
        test_case->quotas = TRUE;
        test_case->body = enforced[i].body;
        path = g_strdup_printf ("/sandbox/bubblewrap/quota/layering-%s/%s",
                                layerings[j], enforced[i].name);
        add_case (path, test_case);
      }
  return g_test_run ();
}
