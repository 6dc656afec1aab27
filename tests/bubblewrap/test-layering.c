/* test-layering.c — layered (overlay) workspaces of the bubblewrap backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Real bwrap, real overlayfs in the sandbox's user namespace. Run as root
 * and as the unprivileged sandbox-test (run-unprivileged.sh).
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <sys/xattr.h>

#include <glib/gstdio.h>
#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"

/* Fixture: a layered session ------------------------------------------------ */

/* The data of fixtures whose backend runs guests without the seccomp
 * filter: what the kernel and overlayfs refuse on their own. */
static const char no_seccomp[] = "no-seccomp";
#define NO_SECCOMP ((gconstpointer) no_seccomp)

typedef struct
{
  char *state_directory;
  SandboxBackend *backend;
  char *template_key;
  char *template_data;     /* the lower layer's host path */
  SandboxHandle *handle;
  SandboxSession *session;
  char *session_dir;
  char *upper;             /* the upper layer's host path */
} Fixture;

static char *
store_base (const char *state_directory)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);

  return g_build_filename (state_directory, digest, NULL);
}

static char *
backend_layering (SandboxBackend *backend)
{
  char *value = NULL;

  g_object_get (backend, "workspace-layering", &value, NULL);
  return value;
}

/* What the coding tools' probe says of @handle's workspace. */
static const char *
probe_layering (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxCodingTools) tools = sandbox_coding_tools_new (handle, &error);
  g_auto(GStrv) restrictions = NULL;
  g_autofree char *grade = NULL;
  const char *layering = NULL;

  g_assert_no_error (error);
  grade = sandbox_coding_tools_probe_full (tools, &restrictions, &layering, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (grade, ==, "full");
  /* Not a restriction: the reference's words stay as they are. */
  g_assert_false (g_strv_contains ((const char * const *) restrictions, layering));
  return layering;
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("layered");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  g_autofree char *base = NULL;
  g_autofree char *layering = NULL;

  fixture->state_directory = sandbox_test_state_directory_new ();
  if (data == NO_SECCOMP)
    fixture->backend = sandbox_test_bubblewrap_new (fixture->state_directory, &error,
                                                    "layering", "auto", "seccomp", "false", NULL);
  else
    fixture->backend = sandbox_test_bubblewrap_new (fixture->state_directory, &error, "layering",
                                                    "auto", NULL);
  g_assert_no_error (error);
  layering = backend_layering (fixture->backend);
  g_assert_cmpstr (layering, ==, "overlay");

  sandbox_test_template_add_text (template_, "hello.txt", "hello");
  sandbox_test_template_add_text (template_, "src/main.c", "int main;");
  sandbox_test_template_add_text (template_, "src/util.c", "int util;");
  fixture->template_key = sandbox_backend_prewarm (fixture->backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  fixture->handle = sandbox_backend_create (fixture->backend, fixture->template_key, NULL, policy,
                                            NULL, &error);
  g_assert_no_error (error);
  fixture->session = sandbox_handle_get_session (fixture->handle);

  base = store_base (fixture->state_directory);
  fixture->template_data = g_build_filename (base, "templates", fixture->template_key, "data",
                                             NULL);
  fixture->session_dir = g_build_filename (base, "sessions",
                                           sandbox_session_get_id (fixture->session), NULL);
  fixture->upper = g_build_filename (fixture->session_dir, "layers", "upper", NULL);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  if (fixture->handle != NULL)
    sandbox_test_delete_session (fixture->handle);
  g_clear_object (&fixture->handle);
  g_clear_object (&fixture->backend);
  sandbox_test_remove_tree (fixture->state_directory);
  g_free (fixture->state_directory);
  g_free (fixture->template_key);
  g_free (fixture->template_data);
  g_free (fixture->session_dir);
  g_free (fixture->upper);
}

static char *
host_read (Fixture     *fixture,
           const char  *path,
           GError     **error)
{
  return sandbox_session_read_text (fixture->session, path, NULL, error);
}

static char *
file_contents (const char *directory,
               const char *relative)
{
  g_autofree char *path = g_build_filename (directory, relative, NULL);
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;
  return contents;
}

static gboolean
exists_at (const char *directory,
           const char *relative)
{
  g_autofree char *path = g_build_filename (directory, relative, NULL);
  struct stat st;

  return lstat (path, &st) == 0;
}

static void
assert_template_intact (Fixture *fixture)
{
  g_autofree char *hello = file_contents (fixture->template_data, "hello.txt");
  g_autofree char *main_c = file_contents (fixture->template_data, "src/main.c");

  g_assert_cmpstr (hello, ==, "hello");
  g_assert_cmpstr (main_c, ==, "int main;");
  g_assert_true (exists_at (fixture->template_data, "src/util.c"));
}

/* Layered sessions ---------------------------------------------------------- */

/* Create copies nothing: the session's upper layer is empty, the guest
 * sees the template through the overlay. */
static void
test_create_copies_nothing (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(GDir) upper = g_dir_open (fixture->upper, 0, NULL);
  g_autofree char *out = NULL;

  g_assert_nonnull (upper);
  g_assert_null (g_dir_read_name (upper));
  g_assert_false (exists_at (fixture->session_dir, "workspace"));
  out = sandbox_test_guest_sh (fixture->session, "cat hello.txt src/main.c");
  g_assert_cmpstr (out, ==, "helloint main;");
}

/* What the guest changes the host sees, and the other way round; the
 * template never changes. */
static void
test_guest_and_host_agree (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *guest_write = NULL;
  g_autofree char *seen = NULL;
  g_autofree char *gone = NULL;
  g_autofree char *listing = NULL;
  g_autofree char *host_written = NULL;

  guest_write =
    sandbox_test_guest_sh (fixture->session,
                           "printf changed > hello.txt && printf new > src/new.c && "
                           "rm src/util.c && mkdir -p deep/er && printf d > deep/er/f");
  seen = host_read (fixture, "hello.txt", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (seen, ==, "changed");
  gone = host_read (fixture, "src/util.c", &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);
  assert_template_intact (fixture);

  g_assert_true (sandbox_session_write_text (fixture->session, "src/main.c", "int host;", NULL,
                                             &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_session_remove_path (fixture->session, "deep", NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_session_write_text (fixture->session, "src/util.c", "back", NULL,
                                             &error));
  g_assert_no_error (error);
  listing = sandbox_test_guest_sh (fixture->session, "cat src/main.c src/util.c; ls -A src; ls -A; "
                                   "test ! -e deep && echo nodeep");
  g_assert_cmpstr (listing, ==, "int host;backmain.c\nnew.c\nutil.c\nhello.txt\nsrc\nnodeep\n");
  host_written = file_contents (fixture->template_data, "src/main.c");
  g_assert_cmpstr (host_written, ==, "int main;");
}

/* Stop, resume and delete touch the upper layer only; delete removes it
 * all (overlayfs' work directory included) as root and unprivileged; the
 * template stays, BUSY to delete while the session exists. */
static void
test_lifecycle (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxBackend) copying = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *after = NULL;

  /* Exercise the work directory: copy-up, whiteouts, a directory removed. */
  out = sandbox_test_guest_sh (fixture->session,
                               "printf kept > hello.txt && rm -r src && mkdir src && "
                               "printf x > src/x && mv src src2");
  g_assert_false (sandbox_backend_delete_template (fixture->backend, fixture->template_key, NULL,
                                                   &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);

  state = sandbox_handle_capture_state (fixture->handle, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (fixture->handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&fixture->handle);

  /* Resumed by a backend that copies new sessions: it stays layered. */
  copying = sandbox_test_bubblewrap_new (fixture->state_directory, &error, "layering", "copy",
                                         NULL);
  g_assert_no_error (error);
  fixture->handle = sandbox_backend_create (copying, fixture->template_key, state, policy, NULL,
                                            &error);
  g_assert_no_error (error);
  fixture->session = sandbox_handle_get_session (fixture->handle);
  after = sandbox_test_guest_sh (fixture->session, "cat hello.txt src2/x; ls -A");
  g_assert_cmpstr (after, ==, "keptxhello.txt\nsrc2\n");
  g_assert_false (exists_at (fixture->session_dir, "workspace"));
  /* The probe reports the session's workspace, not the backend's choice. */
  g_assert_cmpstr (probe_layering (fixture->handle), ==, SANDBOX_WORKSPACE_LAYERING_OVERLAY);

  g_assert_true (sandbox_handle_delete (fixture->handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&fixture->handle);
  g_assert_false (exists_at (fixture->session_dir, "."));
  assert_template_intact (fixture);
  g_assert_true (sandbox_backend_delete_template (fixture->backend, fixture->template_key, NULL,
                                                  &error));
  g_assert_no_error (error);
}

/* The coding tools' probe reports each session's own workspace: an
 * overlay, or a copy made by a copying backend, which stays a copy when a
 * layering backend resumes it. */
static void
test_probe_reports_layering (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxBackend) copying = NULL;
  g_autoptr(SandboxHandle) copied = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpstr (probe_layering (fixture->handle), ==, SANDBOX_WORKSPACE_LAYERING_OVERLAY);

  copying = sandbox_test_bubblewrap_new (fixture->state_directory, &error, "layering", "copy",
                                         NULL);
  g_assert_no_error (error);
  copied = sandbox_backend_create (copying, fixture->template_key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (probe_layering (copied), ==, SANDBOX_WORKSPACE_LAYERING_COPY);

  state = sandbox_handle_capture_state (copied, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (copied, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&copied);
  copied = sandbox_backend_create (fixture->backend, fixture->template_key, state, policy, NULL,
                                   &error);
  g_assert_no_error (error);
  g_assert_cmpstr (probe_layering (copied), ==, SANDBOX_WORKSPACE_LAYERING_COPY);
  g_assert_true (sandbox_handle_delete (copied, NULL, &error));
  g_assert_no_error (error);
}

/* The probe finds overlays usable on this kernel (6.x, ext4 or tmpfs: the
 * CI machines are the same kind); "copy" forces copies; anything else is
 * refused. */
static void
test_property (void)
{
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) automatic = NULL;
  g_autoptr(SandboxBackend) copy = NULL;
  g_autoptr(SandboxBackend) bogus = NULL;
  g_autofree char *automatic_layering = NULL;
  g_autofree char *copy_layering = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;

  automatic = sandbox_test_bubblewrap_new (state_directory, &error, "layering", "auto", NULL);
  g_assert_no_error (error);
  automatic_layering = backend_layering (automatic);
  g_assert_cmpstr (automatic_layering, ==, "overlay");

  copy = sandbox_test_bubblewrap_new (state_directory, &error, "layering", "copy", NULL);
  g_assert_no_error (error);
  copy_layering = backend_layering (copy);
  g_assert_cmpstr (copy_layering, ==, "copy");

  /* Layered is the default. */
  {
    g_autoptr(SandboxBackend) default_backend =
      sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", state_directory, NULL);
    g_autofree char *default_layering = NULL;

    g_assert_no_error (error);
    default_layering = backend_layering (default_backend);
    g_assert_cmpstr (default_layering, ==, "overlay");
  }

  bogus = sandbox_test_bubblewrap_new (state_directory, &error, "layering", "overlayfs", NULL);
  g_assert_null (bogus);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);

  /* The probe leaves nothing behind in the store. */
  dir = g_dir_open (state_directory, 0, NULL);
  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (state_directory, name, NULL);
      g_autoptr(GDir) store = g_dir_open (path, 0, NULL);
      const char *entry;

      g_assert_false (g_str_has_prefix (name, ".overlay-probe-"));
      while (store != NULL && (entry = g_dir_read_name (store)) != NULL)
        g_assert_false (g_str_has_prefix (entry, ".overlay-probe-"));
    }
  sandbox_test_remove_tree (state_directory);
}

/* Where overlays are unavailable, sessions are copied: a state directory
 * on an overlayfs (which overlayfs refuses as an upper layer) makes the
 * probe fail, and the default backend then copies; the session works as
 * any. Root only (it mounts the overlay). */
static void
test_fallback_to_copy (void)
{
  g_autofree char *top = g_dir_make_tmp ("sandbox-layering-fallback-XXXXXX", NULL);
  g_autofree char *lower = g_build_filename (top, "l", NULL);
  g_autofree char *upper = g_build_filename (top, "u", NULL);
  g_autofree char *work = g_build_filename (top, "w", NULL);
  g_autofree char *merged = g_build_filename (top, "m", NULL);
  g_autofree char *state_directory = g_build_filename (merged, "state", NULL);
  g_autofree char *options = g_strdup_printf ("lowerdir=%s,upperdir=%s,workdir=%s",
                                              lower, upper, work);
  g_autofree char *umount_command = g_strdup_printf ("umount '%s'", merged);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("fallback");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;

  if (getuid () != 0)
    {
      g_test_skip ("mounting an overlay for the state directory needs root");
      return;
    }
  g_assert_cmpint (g_mkdir (lower, 0700) | g_mkdir (upper, 0700) | g_mkdir (work, 0700) |
                   g_mkdir (merged, 0700), ==, 0);
  g_assert_cmpint (mount ("overlay", merged, "overlay", 0, options), ==, 0);
  g_assert_cmpint (g_mkdir (state_directory, 0700), ==, 0);
  {
    g_autoptr(SandboxBackend) backend =
      sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", state_directory, NULL);
    g_autoptr(SandboxHandle) handle = NULL;
    g_autofree char *layering = NULL;
    g_autofree char *key = NULL;
    g_autofree char *out = NULL;

    g_assert_no_error (error);
    layering = backend_layering (backend);
    g_assert_cmpstr (layering, ==, "copy");
    sandbox_test_template_add_text (template_, "hello.txt", "hello");
    key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
    g_assert_no_error (error);
    handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (probe_layering (handle), ==, SANDBOX_WORKSPACE_LAYERING_COPY);
    g_assert_true (sandbox_session_write_text (sandbox_handle_get_session (handle), "new.txt",
                                               "new", NULL, &error));
    g_assert_no_error (error);
    {
      g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/cat");
      g_autoptr(SandboxResult) result = NULL;

      sandbox_command_add_arg (command, "hello.txt");
      sandbox_command_add_arg (command, "new.txt");
      result = sandbox_session_run (sandbox_handle_get_session (handle), command, NULL, &error);
      g_assert_no_error (error);
      out = sandbox_result_dup_stdout_text (result);
    }
    g_assert_cmpstr (out, ==, "hellonew");
    g_assert_true (sandbox_handle_delete (handle, NULL, &error));
    g_assert_no_error (error);
  }
  g_assert_cmpint (system (umount_command), ==, 0);
  sandbox_test_remove_tree (top);
}

/* The overlay CVE classes --------------------------------------------------- */

/* The stub mounted the overlay with capabilities in the sandbox's user
 * namespace; none is left to the guest or to the stub itself, the bounding
 * set included, and no_new_privs holds. Remove drop_capabilities() from
 * stub/sandbox-stub.c: CapBnd (and CapEff, CapPrm, CapAmb) then shows the
 * overlay's capabilities. */
static void
test_no_capability_left (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autofree char *out =
    sandbox_test_guest_sh (fixture->session,
                           "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):' "
                           "/proc/self/status /proc/1/status");
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
  guint checked = 0;

  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (lines[i][0] == '\0')
        continue;
      if (strstr (lines[i], "NoNewPrivs:") != NULL)
        g_assert_nonnull (g_strrstr (lines[i], "\t1"));
      else
        g_assert_nonnull (strstr (lines[i], "0000000000000000"));
      checked++;
    }
  g_assert_cmpuint (checked, ==, 12);
}

/* /workspace is the session's keeper's overlay, nosuid and nodev, and no
 * layer is in the sandbox: the guest reaches them only through it. The
 * overlay's options name the layers relative to the session's layers/
 * (the keeper's working directory), so the guest's mountinfo shows no
 * host path for them; make the keeper pass absolute paths
 * (stub/sandbox-stub-keeper.c) to see the state directory show. The
 * session's lock file is not there either: the stub gets it open. */
static void
test_mount_and_cover (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autofree char *mounts =
    sandbox_test_guest_sh (fixture->session,
                           "grep ' /workspace ' /proc/self/mountinfo");
  g_autofree char *others =
    sandbox_test_guest_sh (fixture->session,
                           "grep -c -e upper -e /work/ -e layers "
                           "/proc/self/mountinfo; ls -A /run | wc -l");

  g_assert_nonnull (strstr (mounts, " overlay overlay "));
  g_assert_nonnull (strstr (mounts, "nosuid"));
  g_assert_nonnull (strstr (mounts, "nodev"));
  g_assert_nonnull (strstr (mounts, "userxattr"));
  g_assert_nonnull (strstr (mounts, "upperdir=upper,"));
  g_assert_null (strstr (mounts, fixture->state_directory));
  /* The /workspace line only; nothing in /run. */
  g_assert_cmpstr (others, ==, "1\n0\n");
}

/* The guest writing overlayfs' own xattrs through the overlay (opaque,
 * redirect, metacopy, on a merged directory and a file) changes nothing
 * the overlay or the host interprets: overlayfs refuses them or, since
 * Linux 6.7, stores them escaped (`user.overlay.overlay.*`) for a nested
 * overlay; trusted.* needs a capability the guest has not. The merged
 * directory stays merged in the next command and in the host's view. */
static void
test_overlay_xattrs_inert (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autofree char *upper_src = g_build_filename (fixture->upper, "src", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *listing = NULL;
  g_autofree char *main_c = NULL;
  g_autofree char *out =
    sandbox_test_guest_sh (fixture->session,
                           "printf x > src/new.c && for name in user.overlay.opaque user.overlay.redirect "
                           "user.overlay.metacopy trusted.overlay.opaque; do "
                           "python3 -c 'import os, sys; os.setxattr(\"src\", sys.argv[1], b\"y\"); "
                           "os.setxattr(\"hello.txt\", sys.argv[1], b\"y\")' $name 2>/dev/null; done; echo end");
  char value[8];

  g_assert_cmpstr (out, ==, "end\n");
  g_assert_cmpint (getxattr (upper_src, "user.overlay.opaque", value, sizeof value), <, 0);
  g_assert_cmpint (getxattr (upper_src, "user.overlay.redirect", value, sizeof value), <, 0);
  g_assert_cmpint (getxattr (upper_src, "trusted.overlay.opaque", value, sizeof value), <, 0);
  listing = sandbox_test_guest_sh (fixture->session, "ls src");
  g_assert_cmpstr (listing, ==, "main.c\nnew.c\nutil.c\n");
  main_c = host_read (fixture, "src/main.c", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (main_c, ==, "int main;");
}

/* CVE-2023-0386 and GameOver(lay) (CVE-2023-2640, CVE-2023-32629): a
 * set-user-id file or one with file capabilities reaching the overlay
 * never gives the guest a privilege. The host (root) plants them in the
 * upper layer: a set-user-id-root copy of id, and a copy of cat with
 * cap_dac_read_search+ep (a v2 security.capability, which the kernel
 * honours in every user namespace). Three defences: the mount is nosuid
 * (which ignores file capabilities too), the stub keeps no_new_privs, and
 * root is not mapped in the guest's user namespace. Only as root (planting
 * them needs it). */
static void
test_setuid_and_file_capabilities (Fixture       *fixture,
                                   gconstpointer  data)
{
  /* VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE, permitted = bit 2
   * (CAP_DAC_READ_SEARCH), inheritable 0, second word 0. */
  static const guint32 capability[5] = { 0x02000001, 1 << 2, 0, 0, 0 };
  g_autofree char *id_copy = g_build_filename (fixture->upper, "suid-id", NULL);
  g_autofree char *cat_copy = g_build_filename (fixture->upper, "cap-cat", NULL);
  g_autofree char *id_contents = NULL;
  g_autofree char *cat_contents = NULL;
  g_autofree char *out = NULL;
  gsize id_length, cat_length;
  uid_t guest_uid;

  if (getuid () != 0)
    {
      g_test_skip ("planting set-user-id-root files and file capabilities needs root");
      return;
    }
  g_assert_true (g_file_get_contents ("/usr/bin/id", &id_contents, &id_length, NULL));
  g_assert_true (g_file_get_contents ("/usr/bin/cat", &cat_contents, &cat_length, NULL));
  g_assert_true (g_file_set_contents (id_copy, id_contents, id_length, NULL));
  g_assert_true (g_file_set_contents (cat_copy, cat_contents, cat_length, NULL));
  g_assert_cmpint (chown (id_copy, 0, 0), ==, 0);
  g_assert_cmpint (chmod (id_copy, 04755), ==, 0);
  g_assert_cmpint (chmod (cat_copy, 0755), ==, 0);
  g_assert_cmpint (setxattr (cat_copy, "security.capability", capability, sizeof capability, 0),
                   ==, 0);

  out = sandbox_test_guest_sh (fixture->session,
                               "id -u; ./suid-id -u; ./cap-cat /proc/self/status | "
                               "grep -E '^Cap(Prm|Eff):'");
  {
    g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

    guest_uid = (uid_t) g_ascii_strtoull (lines[0], NULL, 10);
    g_assert_cmpuint (guest_uid, !=, 0);
    g_assert_cmpstr (lines[1], ==, lines[0]);
    g_assert_nonnull (strstr (lines[2], "0000000000000000"));
    g_assert_nonnull (strstr (lines[3], "0000000000000000"));
  }
}

/* What the guest plants through the overlay -------------------------------- */

/* Whether a regular file, directory or link in the upper layer is set-id
 * and owned by root (user or group); lists the offenders. */
static void
find_root_set_id (int         dir_fd,
                  const char *prefix,
                  GString    *found)
{
  g_autoptr(GDir) dir = NULL;
  g_autofree char *path = g_strdup_printf ("/proc/self/fd/%d", dir_fd);
  const char *name;

  dir = g_dir_open (path, 0, NULL);
  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *relative = g_build_filename (prefix, name, NULL);
      struct stat st;

      g_assert_cmpint (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW), ==, 0);
      if (((st.st_mode & S_ISUID) && st.st_uid == 0) ||
          ((st.st_mode & S_ISGID) && st.st_gid == 0 && !S_ISDIR (st.st_mode)))
        g_string_append_printf (found, "%s ", relative);
      if (S_ISDIR (st.st_mode))
        {
          int child = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          g_assert_cmpint (child, >=, 0);
          find_root_set_id (child, relative, found);
          close (child);
        }
    }
}

static char *
upper_root_set_id (Fixture *fixture)
{
  GString *found = g_string_new (NULL);
  int fd = open (fixture->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  find_root_set_id (fd, "", found);
  close (fd);
  return g_string_free (found, FALSE);
}

/* How many whiteouts (0/0 character devices) the upper layer holds. */
static guint
count_whiteouts (int dir_fd)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/fd/%d", dir_fd);
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;
  guint count = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      struct stat st;

      g_assert_cmpint (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW), ==, 0);
      if (S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0))
        count++;
      if (S_ISDIR (st.st_mode))
        {
          int child = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          g_assert_cmpint (child, >=, 0);
          count += count_whiteouts (child);
          close (child);
        }
    }
  return count;
}

static guint
upper_whiteouts (Fixture *fixture)
{
  int fd = open (fixture->upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  guint count;

  g_assert_cmpint (fd, >=, 0);
  count = count_whiteouts (fd);
  close (fd);
  return count;
}

/* The guest making whiteouts of its own through the overlay: an
 * unprivileged mknod() of a 0/0 character device (allowed since Linux 5.8,
 * for overlayfs) over a new name, in a merged directory and over a name it
 * removed, and rename(RENAME_WHITEOUT). overlayfs refuses both (EPERM,
 * EINVAL), with or without the seccomp filter, so the upper layer holds
 * only the whiteouts overlayfs made itself and the host's view is the
 * guest's. On a copied workspace (a plain bind mount) the same mknod()
 * succeeds: run this with layering "copy" to see the check fail. */
static void
test_guest_whiteouts_refused (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *hello = NULL;
  g_autofree char *main_c = NULL;
  g_autofree char *listing = NULL;
  g_autofree char *out =
    sandbox_test_guest_sh (fixture->session,
                           "rm src/util.c && python3 -c '\n"
                           "import ctypes, errno, os, stat\n"
                           "libc = ctypes.CDLL(None, use_errno=True)\n"
                           "def mknod(path):\n"
                           "    try:\n"
                           "        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(0, 0))\n"
                           "        return \"made\"\n"
                           "    except OSError as e:\n"
                           "        return errno.errorcode[e.errno]\n"
                           "def rename_whiteout(old, new):\n"
                           "    if libc.renameat2(-100, old.encode(), -100, new.encode(), 4) == 0:\n"
                           "        return \"made\"\n"
                           "    return errno.errorcode[ctypes.get_errno()]\n"
                           "print(mknod(\"w\"), mknod(\"src/w\"), mknod(\"src/util.c\"),\n"
                           "      rename_whiteout(\"hello.txt\", \"moved.txt\"),\n"
                           "      rename_whiteout(\"src/main.c\", \"src/moved.c\"))\n"
                           "'; ls -A; ls -A src");
  g_auto(GStrv) lines = g_strsplit (out, "\n", 2);
  g_auto(GStrv) results = g_strsplit (lines[0], " ", -1);

  g_test_message ("guest: %s", lines[0]);
  g_assert_cmpuint (g_strv_length (results), ==, 5);
  for (guint i = 0; results[i] != NULL; i++)
    g_assert_cmpstr (results[i], !=, "made");
  g_assert_cmpstr (lines[1], ==, "hello.txt\nsrc\nmain.c\n");
  /* The one whiteout is overlayfs' own, for the removed util.c. */
  g_assert_cmpuint (upper_whiteouts (fixture), ==, 1);

  hello = host_read (fixture, "hello.txt", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hello, ==, "hello");
  main_c = host_read (fixture, "src/main.c", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (main_c, ==, "int main;");
  g_assert_null (host_read (fixture, "src/util.c", &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_clear_error (&error);
  /* Written back by the host, util.c is seen again. */
  g_assert_true (sandbox_session_write_text (fixture->session, "src/util.c", "again", NULL,
                                             &error));
  g_assert_no_error (error);
  listing = sandbox_test_guest_sh (fixture->session, "ls -A src; cat src/util.c");
  g_assert_cmpstr (listing, ==, "main.c\nutil.c\nagain");
  assert_template_intact (fixture);
}

/* FIFOs the guest makes through the overlay — over a template file, in a
 * merged directory, at a new name — are in the upper layer; the host reads
 * each promptly as not a regular file (O_NONBLOCK, no writer needed),
 * writes a file in place of one, and removes one. Take O_NONBLOCK out of
 * overlay_read()'s open (and open_regular_fast()'s) in libsandbox-core/
 * sandbox-workspace-overlay.c to see the alarm end the test. */
static void
test_guest_fifos_never_block (Fixture       *fixture,
                              gconstpointer  data)
{
  const char *paths[] = { "hello.txt", "src/pipe", "pipe" };
  g_autoptr(GError) error = NULL;
  g_autofree char *made =
    sandbox_test_guest_sh (fixture->session,
                           "rm hello.txt && mkfifo hello.txt src/pipe pipe && "
                           "stat -c %F hello.txt src/pipe pipe");
  g_autofree char *after = NULL;
  gint64 start = g_get_monotonic_time ();

  g_assert_cmpstr (made, ==, "fifo\nfifo\nfifo\n");
  alarm (20);   /* a blocked read fails the test rather than hanging it */
  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autofree char *text = host_read (fixture, paths[i], &error);

      g_assert_null (text);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE);
      g_clear_error (&error);
    }
  alarm (0);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 5 * G_USEC_PER_SEC);

  g_assert_true (sandbox_session_write_text (fixture->session, "hello.txt", "file again", NULL,
                                             &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_session_remove_path (fixture->session, "src/pipe", NULL, &error));
  g_assert_no_error (error);
  after = sandbox_test_guest_sh (fixture->session,
                                 "cat hello.txt; echo; stat -c %F pipe; test ! -e src/pipe && echo gone");
  g_assert_cmpstr (after, ==, "file again\nfifo\ngone\n");
  assert_template_intact (fixture);
}

static void
assert_contained (Fixture      *fixture,
                  const GError *error)
{
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_null (strstr (error->message, fixture->state_directory));
}

/* The guest replaces template files by links out of the workspace: into
 * the session's own directory (its state.json, which the host trusts), to
 * the template's data by its host path and by climbing to it. The host
 * reads none of them (SANDBOX_ERROR_PATH), writes replace the link itself,
 * removals remove the link (a whiteout then hides the template file); no
 * target changes. Remove the EXDEV of follow_link()'s absolute-target
 * check or the ".." check of walk() in sandbox-workspace-overlay.c to see
 * it fail. */
static void
test_guest_links_over_lower_files (Fixture       *fixture,
                                   gconstpointer  data)
{
  g_autofree char *state_path = g_build_filename (fixture->session_dir, "state.json", NULL);
  g_autofree char *state_before = NULL;
  g_autofree char *state_after = NULL;
  g_autofree char *script = g_strdup_printf (
    "rm src/main.c hello.txt src/util.c && ln -s ../../../state.json src/main.c && "
    "ln -s '%s/hello.txt' hello.txt && "
    "ln -s ../../../../../templates/%s/data/src/util.c src/util.c && "
    "ln -s ../.. up && echo planted",
    fixture->template_data, fixture->template_key);
  const char *paths[] = { "src/main.c", "hello.txt", "src/util.c", "up/state.json" };
  g_autoptr(GError) error = NULL;
  g_autofree char *planted = NULL;
  g_autofree char *after = NULL;

  g_assert_true (g_file_get_contents (state_path, &state_before, NULL, NULL));
  planted = sandbox_test_guest_sh (fixture->session, script);
  g_assert_cmpstr (planted, ==, "planted\n");

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autofree char *text = host_read (fixture, paths[i], &error);

      g_test_message ("read %s: %s", paths[i], error != NULL ? error->message : text);
      g_assert_null (text);
      assert_contained (fixture, error);
      g_clear_error (&error);
    }
  g_assert_false (sandbox_session_write_text (fixture->session, "up/state.json", "{}", NULL,
                                              &error));
  assert_contained (fixture, error);
  g_clear_error (&error);
  g_assert_false (sandbox_session_remove_path (fixture->session, "up/lease", NULL, &error));
  assert_contained (fixture, error);
  g_clear_error (&error);

  g_assert_true (sandbox_session_write_text (fixture->session, "src/main.c", "int host;", NULL,
                                             &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_session_write_text (fixture->session, "src/util.c", "int util2;", NULL,
                                             &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_session_remove_path (fixture->session, "hello.txt", NULL, &error));
  g_assert_no_error (error);

  after = sandbox_test_guest_sh (fixture->session,
                                 "cat src/main.c src/util.c; test ! -e hello.txt && echo gone; "
                                 "test -L src/main.c || echo file");
  g_assert_cmpstr (after, ==, "int host;int util2;gone\nfile\n");
  g_assert_true (g_file_get_contents (state_path, &state_after, NULL, NULL));
  g_assert_cmpstr (state_after, ==, state_before);
  assert_template_intact (fixture);
}

/* The guest swaps links in and out while the host works: for a template
 * file (a link to the session's state.json, then a file again) and for a
 * directory of its own (a link climbing to the session directory). Nothing
 * the host reads is outside, nothing outside is written or removed. */
static void
test_guest_link_swaps_race_the_host (Fixture       *fixture,
                                     gconstpointer  data)
{
  g_autofree char *state_path = g_build_filename (fixture->session_dir, "state.json", NULL);
  g_autofree char *lease_path = g_build_filename (fixture->session_dir, "lease", NULL);
  g_autofree char *escaped = g_build_filename (fixture->session_dir, "sub", NULL);
  g_autofree char *state_before = NULL;
  g_autofree char *state_after = NULL;
  g_autofree char *lease_before = NULL;
  g_autofree char *lease_after = NULL;
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sh");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_static ("host", 4);
  g_autoptr(GError) error = NULL;
  g_autofree char *swaps = NULL;
  guint host_calls = 0;
  gint64 deadline;

  g_assert_true (g_file_get_contents (state_path, &state_before, NULL, NULL));
  g_assert_true (g_file_get_contents (lease_path, &lease_before, NULL, NULL));
  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command,
    "mkdir -p d/sub; i=0; end=$(($(date +%s) + 3)); "
    "while [ $(date +%s) -lt $end ]; do "
    "  ln -sfn ../../../state.json src/l; mv -f src/l src/main.c; "
    "  printf g > src/t; mv -f src/t src/main.c; "
    "  mv -T d d.real; ln -sfn ../.. d; rm -f d; mv -T d.real d 2>/dev/null; mkdir -p d/sub; "
    "  i=$((i + 1)); "
    "done; echo $i");
  process = sandbox_session_spawn (fixture->session, command, NULL, &error);
  g_assert_no_error (error);

  /* The guest's loop runs for 3 s; the host's as long, or until something
   * got out. */
  deadline = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;
  while (!g_file_test (escaped, G_FILE_TEST_EXISTS) && g_get_monotonic_time () < deadline)
    {
      g_autofree char *text = NULL;

      switch (host_calls++ % 5)
        {
        case 0:
          text = host_read (fixture, "src/main.c", NULL);
          g_assert_true (text == NULL || g_str_equal (text, "g") ||
                         g_str_equal (text, "int main;") || g_str_equal (text, "host"));
          break;
        case 1:
          sandbox_session_write_bytes (fixture->session, "src/main.c", bytes, NULL, NULL);
          break;
        case 2:
          sandbox_session_write_bytes (fixture->session, "d/sub/state.json", bytes, NULL, NULL);
          break;
        case 3:
          text = host_read (fixture, "d/state.json", NULL);
          g_assert_null (text);
          break;
        default:
          sandbox_session_remove_path (fixture->session, "d/sub/state.json", NULL, NULL);
          break;
        }
    }
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  swaps = sandbox_result_dup_stdout_text (result);
  g_test_message ("%u host calls against %s guest rounds", host_calls, g_strstrip (swaps));
  g_assert_cmpuint (g_ascii_strtoull (swaps, NULL, 10), >, 0);

  g_assert_false (g_file_test (escaped, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_get_contents (state_path, &state_after, NULL, NULL));
  g_assert_cmpstr (state_after, ==, state_before);
  g_assert_true (g_file_get_contents (lease_path, &lease_after, NULL, NULL));
  g_assert_cmpstr (lease_after, ==, lease_before);
  assert_template_intact (fixture);
}

/* CVE-2023-0386's class from the other side: set-user-id and set-group-id
 * root files in the lower layer (a store tampered with by someone with
 * root; templates never carry those bits). The guest runs them (nosuid,
 * no_new_privs, root unmapped: its own ids), and makes overlayfs copy them
 * up (a rename copies up its source; so does a hard link): the kernel
 * refuses to copy up a file whose owner the namespace does not map
 * (EOVERFLOW, the CVE's fix), and on a root host the lower layer is
 * mounted idmapped, root shown as the session's guest, so a copy-up makes
 * the guest's file: no root-owned set-id file reaches the upper layer,
 * nor through the host's write over one. Only as root (planting needs it). To see
 * the check fail, plant what an unfixed kernel's copy-up made: a copy of
 * the set-user-id file, still root's, in the upper layer. */
static void
test_lower_set_id_never_copied_up_as_root (Fixture       *fixture,
                                           gconstpointer  data)
{
  g_autofree char *suid = g_build_filename (fixture->template_data, "suid-id", NULL);
  g_autofree char *sgid = g_build_filename (fixture->template_data, "sgid-id", NULL);
  g_autofree char *host_written = g_build_filename (fixture->upper, "sgid-id", NULL);
  g_autofree char *contents = NULL;
  g_autofree char *ids = NULL;
  g_autofree char *guest_ids = NULL;
  g_autofree char *attempts = NULL;
  g_autofree char *found = NULL;
  g_autoptr(GError) error = NULL;
  gsize length;
  struct stat st;

  if (getuid () != 0)
    {
      g_test_skip ("planting set-user-id-root files needs root");
      return;
    }
  g_assert_true (g_file_get_contents ("/usr/bin/id", &contents, &length, NULL));
  g_assert_true (g_file_set_contents (suid, contents, length, NULL));
  g_assert_true (g_file_set_contents (sgid, contents, length, NULL));
  g_assert_cmpint (chown (suid, 0, 0), ==, 0);
  g_assert_cmpint (chown (sgid, 0, 0), ==, 0);
  g_assert_cmpint (chmod (suid, 04755), ==, 0);
  g_assert_cmpint (chmod (sgid, 02755), ==, 0);

  guest_ids = sandbox_test_guest_sh (fixture->session, "id -u; id -g");
  ids = sandbox_test_guest_sh (fixture->session, "./suid-id -u; ./sgid-id -g");
  g_assert_cmpstr (ids, ==, guest_ids);
  attempts = sandbox_test_guest_sh (fixture->session,
                                    "mv suid-id moved 2>&1 >/dev/null | grep -c 'too large' || true; "
                                    "ln sgid-id linked 2>/dev/null; "
                                    "for f in moved linked suid-id sgid-id; do "
                                    "  test -x $f && ./$f -u; done; true");
  g_test_message ("guest: %s", attempts);
  found = upper_root_set_id (fixture);
  g_assert_cmpstr (found, ==, "");

  /* The host's write goes through the same overlay (the session's
   * keeper's), whose lower layer shows the host's root as the session's
   * guest (an idmapped mount): the copy-up, if any, is the guest's file,
   * never root's, and no root set-id file reaches the upper layer. */
  if (sandbox_session_write_text (fixture->session, "sgid-id", "#!/bin/sh\n", NULL, &error))
    {
      g_assert_cmpint (lstat (host_written, &st), ==, 0);
      g_assert_cmpuint (st.st_uid, !=, 0);
      g_assert_cmpuint (st.st_gid, !=, 0);
    }
  else
    g_test_message ("host write: %s", error->message);
  found = (g_free (found), upper_root_set_id (fixture));
  g_assert_cmpstr (found, ==, "");
}

/* Locks ------------------------------------------------------------------- */

static void wait_for_guest_file (Fixture *fixture, const char *name);

/* The pid holding a lock on @path that conflicts with a write lock, or 0. */
static pid_t
lock_holder (const char *path)
{
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  int fd = open (path, O_RDONLY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (fcntl (fd, F_GETLK, &lock), ==, 0);
  close (fd);
  return lock.l_type == F_UNLCK ? 0 : lock.l_pid;
}

/* Lease recovery finds a dead owner's keeper and sandboxes by their read
 * locks on layers/lock (sandbox-bubblewrap-store-leftovers.c). The keeper
 * holds one from create; with the keeper gone, a running command's stub
 * still holds its own (`lock-fd=`). Make stub_step_lock_descriptor()
 * (stub/sandbox-stub.c) skip the lock to see this fail. */
static void
test_sandboxes_hold_the_session_lock (Fixture       *fixture,
                                      gconstpointer  data)
{
  g_autofree char *lock = g_build_filename (fixture->session_dir, "layers", "lock", NULL);
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sh");
  g_autoptr(SandboxProcess) running = NULL;
  g_autoptr(GError) error = NULL;
  pid_t keeper, holder = 0;

  keeper = lock_holder (lock);
  g_assert_cmpint (keeper, >, 0);
  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, "touch started; sleep 30");
  running = sandbox_session_spawn (fixture->session, command, NULL, &error);
  g_assert_no_error (error);
  wait_for_guest_file (fixture, "started");
  g_assert_cmpint (kill (keeper, SIGKILL), ==, 0);
  for (guint i = 0; i < 200 && (holder == 0 || holder == keeper); i++)
    {
      holder = lock_holder (lock);
      if (holder == keeper)
        g_usleep (10 * 1000);
    }
  g_assert_cmpint (holder, >, 0);
  g_assert_cmpint (holder, !=, keeper);
  g_assert_true (sandbox_process_stop (running, NULL, &error));
  g_assert_no_error (error);
}

/* A keeper killed under a live session (an operator's kill, the OOM
 * killer) is replaced on the session's next command, over the same
 * layers: what the guest and the host wrote before and after is there,
 * and the command runs in the new overlay (its writes reach the host's
 * file calls). While a command started before still runs in the old
 * keeper's namespaces, the next one is refused (BUSY); once it ends, the
 * keeper comes back. Make sandbox_bubblewrap_driver_revive_keeper() return
 * TRUE at once to see the commands fail (UNAVAILABLE: the overlay is gone). */
static gboolean
is_zombie (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *stat = NULL;
  const char *end;

  if (!g_file_get_contents (path, &stat, NULL, NULL))
    return TRUE;
  end = strrchr (stat, ')');
  return end != NULL && end[1] == ' ' && end[2] == 'Z';
}

/* Kills the keeper and waits until it has exited (the driver reaps it). */
static void
kill_keeper (const char *lock)
{
  pid_t keeper = lock_holder (lock);

  g_assert_cmpint (keeper, >, 0);
  g_assert_cmpint (kill (keeper, SIGKILL), ==, 0);
  for (guint i = 0; i < 500 && !is_zombie (keeper); i++)
    g_usleep (10 * 1000);
  g_assert_true (is_zombie (keeper));
}

static void
test_keeper_killed (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autofree char *lock = g_build_filename (fixture->session_dir, "layers", "lock", NULL);
  g_autoptr(SandboxCommand) sleeper = sandbox_command_new ("/bin/sh");
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/true");
  g_autoptr(SandboxProcess) running = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *seen = NULL;
  g_autofree char *out = NULL;

  g_free (sandbox_test_guest_sh (fixture->session, "echo -n guest > before.txt"));
  kill_keeper (lock);
  g_assert_true (sandbox_session_write_text (fixture->session, "after.txt", "kept", NULL, &error));
  g_assert_no_error (error);
  out = sandbox_test_guest_sh (fixture->session,
                               "cat before.txt after.txt hello.txt; echo -n new > new.txt");
  g_assert_cmpstr (out, ==, "guestkepthello");
  seen = host_read (fixture, "new.txt", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (seen, ==, "new");
  g_assert_cmpint (lock_holder (lock), >, 0);

  /* A command that outlives the keeper holds the old overlay. */
  sandbox_command_add_arg (sleeper, "-c");
  sandbox_command_add_arg (sleeper, "touch started; exec sleep 30");
  running = sandbox_session_spawn (fixture->session, sleeper, NULL, &error);
  g_assert_no_error (error);
  wait_for_guest_file (fixture, "started");
  kill_keeper (lock);
  result = sandbox_session_run (fixture->session, command, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "keeper exited"));
  g_clear_error (&error);
  g_assert_true (sandbox_process_stop (running, NULL, &error));
  g_assert_no_error (error);
  g_clear_pointer (&out, g_free);
  out = sandbox_test_guest_sh (fixture->session, "cat new.txt started && echo -n ok");
  g_assert_cmpstr (out, ==, "newok");
}

/* A real repository's size ------------------------------------------------- */

static void
write_host_file (const char *root,
                 const char *relative,
                 const char *contents,
                 mode_t      mode)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  g_autofree char *parent = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (parent, 0755), ==, 0);
  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
  g_assert_cmpint (chmod (path, mode), ==, 0);
}

/* A checkout of 10,000 files (an executable script, a node_modules/.bin
 * link, an absolute link, an empty directory, 9,996 sources in 100
 * directories) prewarms; a session from it copies nothing (its upper
 * layer stays empty), runs ./script and node_modules/.bin/x, sees every
 * file, reads and changes one through the host's calls, resumes and is
 * deleted, leaving the template whole. As root and unprivileged. 100,000
 * files take ~100 s of this (writing the tree, prewarm, the root host's
 * first give of the template): bench/run's layering rows create from and
 * run in a 100,000-file template. */
#define CHECKOUT_DIRECTORIES 100
#define CHECKOUT_SOURCES (CHECKOUT_DIRECTORIES * 100 - 4)

static void
test_real_checkout (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  /* The checkout on tmpfs, where writing it takes the least time. */
  g_autofree char *root = g_mkdtemp (g_strdup ("/dev/shm/sandbox-checkout-XXXXXX"));
  g_autofree char *empty = g_build_filename (root, "build", "out", NULL);
  g_autoptr(SandboxBackend) backend = sandbox_test_bubblewrap_new (state_directory, &error, "layering", "auto", NULL);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("checkout");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GFile) directory = NULL;
  g_autofree char *key = NULL;
  g_autofree char *session_dir = NULL;
  g_autofree char *upper = NULL;
  g_autofree char *out = NULL;
  g_autofree char *seen = NULL;
  g_autofree char *base = store_base (state_directory);
  Fixture view = { 0 };

  g_assert_no_error (error);
  write_host_file (root, "script", "#!/bin/sh\necho script ran\n", 0755);
  write_host_file (root, "node_modules/x/bin/x.js", "#!/bin/sh\necho x ran\n", 0755);
  {
    g_autofree char *bin = g_build_filename (root, "node_modules", ".bin", NULL);
    g_autofree char *link = g_build_filename (bin, "x", NULL);
    g_autofree char *python = g_build_filename (root, ".venv", "bin", NULL);
    g_autofree char *python_link = g_build_filename (python, "python", NULL);

    g_assert_cmpint (g_mkdir_with_parents (bin, 0755), ==, 0);
    g_assert_cmpint (g_mkdir_with_parents (python, 0755), ==, 0);
    g_assert_cmpint (symlink ("../x/bin/x.js", link), ==, 0);
    g_assert_cmpint (symlink ("/usr/bin/python3", python_link), ==, 0);
  }
  g_assert_cmpint (g_mkdir_with_parents (empty, 0755), ==, 0);
  for (guint d = 0; d < CHECKOUT_DIRECTORIES; d++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/src/d%03u", root, d);

      g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
      for (guint f = 0; f < 100 && d * 100 + f < CHECKOUT_SOURCES; f++)
        {
          g_autofree char *path = g_strdup_printf ("%s/f%02u.c", dir, f);
          g_autofree char *text = g_strdup_printf ("int f%u_%u;\n", d, f);

          g_assert_true (g_file_set_contents (path, text, -1, NULL));
        }
    }

  directory = g_file_new_for_path (root);
  g_assert_true (sandbox_template_add_directory (template_, directory, NULL, &error));
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  session_dir = g_build_filename (base, "sessions",
                                  sandbox_session_get_id (sandbox_handle_get_session (handle)),
                                  NULL);
  upper = g_build_filename (session_dir, "layers", "upper", NULL);
  g_assert_cmpuint (sandbox_test_count_entries (upper), ==, 0);

  view.session = sandbox_handle_get_session (handle);
  out = sandbox_test_guest_sh (view.session,
                               "./script; node_modules/.bin/x; readlink .venv/bin/python; "
                               "test -d build/out && echo empty-dir; "
                               "find src -type f | wc -l; cat src/d099/f95.c");
  g_assert_cmpstr (out, ==, "script ran\nx ran\n/usr/bin/python3\nempty-dir\n9996\nint f99_95;\n");
  seen = host_read (&view, "src/d050/f50.c", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (seen, ==, "int f50_50;\n");
  g_assert_true (sandbox_session_write_text (view.session, "src/d050/f50.c", "changed", NULL,
                                             &error));
  g_assert_no_error (error);

  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&handle);
  handle = sandbox_backend_create (backend, key, state, policy, NULL, &error);
  g_assert_no_error (error);
  view.session = sandbox_handle_get_session (handle);
  g_free (out);
  out = sandbox_test_guest_sh (view.session, "cat src/d050/f50.c; echo; ./script");
  g_assert_cmpstr (out, ==, "changed\nscript ran\n");
  g_assert_true (sandbox_handle_delete (handle, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (session_dir, G_FILE_TEST_EXISTS));
  {
    g_autofree char *data = g_build_filename (base, "templates", key, "data", NULL);
    g_autofree char *kept = file_contents (data, "src/d050/f50.c");

    g_assert_cmpstr (kept, ==, "int f50_50;\n");
  }

  g_clear_object (&handle);
  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
  sandbox_test_remove_tree (root);
}

/* Concurrent commands ------------------------------------------------------- */

/* Waits until the guest has created @name (the host reads it). */
static void
wait_for_guest_file (Fixture    *fixture,
                     const char *name)
{
  g_autofree char *seen = NULL;

  for (guint i = 0; i < 400 && seen == NULL; i++)
    {
      seen = host_read (fixture, name, NULL);
      if (seen == NULL)
        g_usleep (50 * 1000);
    }
  g_assert_nonnull (seen);
}

static guint
count_work_directories (Fixture *fixture)
{
  g_autofree char *work = g_build_filename (fixture->session_dir, "layers", "work", NULL);

  return sandbox_test_count_entries (work);
}

/* All commands of a session and the host's file calls share one overlay
 * (the session's keeper's, see sandbox-bubblewrap-keeper.c), as they
 * share a copied workspace: a command that is running sees at once what
 * another command and the host create, even names it had looked up
 * before they existed. With an overlay per command (as before the
 * keeper) A waits in vain: its overlay remembers that "from-b" was
 * missing (20 s measured), and the host's write goes around every
 * overlay. Eight commands mounting nothing at once, three times, all
 * append. Only the keeper's overlayfs work directory exists while the
 * session lives, none after stop. */
static void
test_concurrent_commands (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(SandboxCommand) first = sandbox_command_new ("/bin/sh");
  g_autoptr(SandboxProcess) running = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autofree char *second = NULL;
  g_autofree char *appended = NULL;

  sandbox_command_add_arg (first, "-c");
  sandbox_command_add_arg (first, "wait_for() { i=0; while [ ! -e \"$1\" ] && [ $i -lt 200 ]; do "
                                  "  sleep 0.05; i=$((i+1)); done; cat \"$1\"; }; "
                                  "test -e from-b; test -e from-host; touch a-started; "
                                  "wait_for from-b && wait_for from-host && "
                                  "echo a >> hello.txt && echo a >> src/main.c && echo A-ok");
  running = sandbox_session_spawn (fixture->session, first, NULL, &error);
  g_assert_no_error (error);
  wait_for_guest_file (fixture, "a-started");
  second = sandbox_test_guest_sh (fixture->session, "printf b > from-b; echo B-ok");
  g_assert_cmpstr (second, ==, "B-ok\n");
  g_assert_true (sandbox_session_write_text (fixture->session, "from-host", "h", NULL, &error));
  g_assert_no_error (error);
  result = sandbox_process_wait (running, NULL, &error);
  g_assert_no_error (error);
  out = sandbox_result_dup_stdout_text (result);
  err = sandbox_result_dup_stderr_text (result);
  g_test_message ("A: %s%s", out, err);
  g_assert_cmpstr (out, ==, "bhA-ok\n");
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);

  for (guint round = 0; round < 3; round++)
    {
      SandboxProcess *processes[8];

      for (guint i = 0; i < G_N_ELEMENTS (processes); i++)
        {
          g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sh");
          g_autofree char *script = g_strdup_printf ("echo %u-%u >> appended", round, i);

          sandbox_command_add_arg (command, "-c");
          sandbox_command_add_arg (command, script);
          processes[i] = sandbox_session_spawn (fixture->session, command, NULL, &error);
          g_assert_no_error (error);
        }
      for (guint i = 0; i < G_N_ELEMENTS (processes); i++)
        {
          g_autoptr(SandboxResult) each = sandbox_process_wait (processes[i], NULL, &error);
          g_autofree char *each_err = NULL;

          g_assert_no_error (error);
          each_err = sandbox_result_dup_stderr_text (each);
          if (sandbox_result_get_exit_status (each) != 0)
            g_error ("round %u, command %u: %s", round, i, each_err);
          g_object_unref (processes[i]);
        }
    }
  /* One overlay: every append landed in one file (24 lines). */
  appended = host_read (fixture, "appended", &error);
  g_assert_no_error (error);
  g_assert_cmpuint (strlen (appended), ==, 24 * 4);

  g_assert_cmpuint (count_work_directories (fixture), ==, 1);
  g_assert_true (sandbox_handle_stop (fixture->handle, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_work_directories (fixture), ==, 0);
  assert_template_intact (fixture);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/layering/property", test_property);
  g_test_add_func ("/sandbox/layering/fallback-to-copy", test_fallback_to_copy);
  g_test_add_func ("/sandbox/layering/real-checkout", test_real_checkout);
#define ADD(path, func) \
  g_test_add ("/sandbox/layering/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("create-copies-nothing", test_create_copies_nothing);
  ADD ("guest-and-host-agree", test_guest_and_host_agree);
  ADD ("lifecycle", test_lifecycle);
  ADD ("probe-reports-layering", test_probe_reports_layering);
  ADD ("concurrent-commands", test_concurrent_commands);
  ADD ("sandboxes-hold-the-session-lock", test_sandboxes_hold_the_session_lock);
  ADD ("keeper-killed", test_keeper_killed);
  ADD ("hostile/no-capability-left", test_no_capability_left);
  ADD ("hostile/mount-and-cover", test_mount_and_cover);
  ADD ("hostile/overlay-xattrs-inert", test_overlay_xattrs_inert);
  ADD ("hostile/setuid-and-file-capabilities", test_setuid_and_file_capabilities);
  ADD ("hostile/guest-whiteouts-refused", test_guest_whiteouts_refused);
  g_test_add ("/sandbox/layering/hostile/guest-whiteouts-refused-without-seccomp", Fixture,
              NO_SECCOMP, fixture_set_up, test_guest_whiteouts_refused, fixture_tear_down);
  ADD ("hostile/guest-fifos-never-block", test_guest_fifos_never_block);
  ADD ("hostile/guest-links-over-lower-files", test_guest_links_over_lower_files);
  ADD ("hostile/guest-link-swaps-race-the-host", test_guest_link_swaps_race_the_host);
  ADD ("hostile/lower-set-id-never-copied-up-as-root", test_lower_set_id_never_copied_up_as_root);

  return g_test_run ();
}
