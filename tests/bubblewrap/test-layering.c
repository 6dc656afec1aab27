/* test-layering.c — layered (overlay) workspaces of the bubblewrap backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Real bwrap, real overlayfs in the sandbox's user namespace. Run as root
 * and as the unprivileged sandbox-test (run-unprivileged.sh).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/xattr.h>

#include <sandbox.h>

/* Fixture: a layered session ------------------------------------------------ */

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

static void
add_text (SandboxTemplate *template_,
          const char      *path,
          const char      *text)
{
  g_autoptr(GBytes) bytes = g_bytes_new (text, strlen (text));
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_template_add_file (template_, path, bytes, &error));
  g_assert_no_error (error);
}

static SandboxBackend *
new_backend (const char  *state_directory,
             const char  *layering,
             GError     **error)
{
  return sandbox_backend_new ("bubblewrap", NULL, error,
                              "state-directory", state_directory,
                              "layering", layering,
                              NULL);
}

static char *
backend_layering (SandboxBackend *backend)
{
  char *value = NULL;

  g_object_get (backend, "workspace-layering", &value, NULL);
  return value;
}

static void
remove_directory (const char *path)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", path);

  g_assert_cmpint (system (command), ==, 0);
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

  fixture->state_directory = g_dir_make_tmp ("sandbox-layering-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->backend = new_backend (fixture->state_directory, "auto", &error);
  g_assert_no_error (error);
  layering = backend_layering (fixture->backend);
  g_assert_cmpstr (layering, ==, "overlay");

  add_text (template_, "hello.txt", "hello");
  add_text (template_, "src/main.c", "int main;");
  add_text (template_, "src/util.c", "int util;");
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
    {
      g_autoptr(GError) error = NULL;

      sandbox_handle_delete (fixture->handle, NULL, &error);
      g_assert_no_error (error);
    }
  g_clear_object (&fixture->handle);
  g_clear_object (&fixture->backend);
  remove_directory (fixture->state_directory);
  g_free (fixture->state_directory);
  g_free (fixture->template_key);
  g_free (fixture->template_data);
  g_free (fixture->session_dir);
  g_free (fixture->upper);
}

/* Runs `sh -c SCRIPT` in the session; returns its stdout, asserting exit 0. */
static char *
guest_sh (Fixture    *fixture,
          const char *script)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sh");
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, script);
  result = sandbox_session_run (fixture->session, command, NULL, &error);
  g_assert_no_error (error);
  err = sandbox_result_dup_stderr_text (result);
  if (sandbox_result_get_exit_status (result) != 0)
    g_test_message ("%s: stderr %s", script, err);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  return sandbox_result_dup_stdout_text (result);
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
  out = guest_sh (fixture, "cat hello.txt src/main.c");
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

  guest_write = guest_sh (fixture, "printf changed > hello.txt && printf new > src/new.c && "
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
  listing = guest_sh (fixture, "cat src/main.c src/util.c; ls -A src; ls -A; "
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
  out = guest_sh (fixture, "printf kept > hello.txt && rm -r src && mkdir src && "
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
  copying = new_backend (fixture->state_directory, "copy", &error);
  g_assert_no_error (error);
  fixture->handle = sandbox_backend_create (copying, fixture->template_key, state, policy, NULL,
                                            &error);
  g_assert_no_error (error);
  fixture->session = sandbox_handle_get_session (fixture->handle);
  after = guest_sh (fixture, "cat hello.txt src2/x; ls -A");
  g_assert_cmpstr (after, ==, "keptxhello.txt\nsrc2\n");
  g_assert_false (exists_at (fixture->session_dir, "workspace"));

  g_assert_true (sandbox_handle_delete (fixture->handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&fixture->handle);
  g_assert_false (exists_at (fixture->session_dir, "."));
  assert_template_intact (fixture);
  g_assert_true (sandbox_backend_delete_template (fixture->backend, fixture->template_key, NULL,
                                                  &error));
  g_assert_no_error (error);
}

/* The probe finds overlays usable on this kernel (6.x, ext4 or tmpfs: the
 * CI machines are the same kind); "copy" forces copies; anything else is
 * refused. */
static void
test_property (void)
{
  g_autofree char *state_directory = g_dir_make_tmp ("sandbox-layering-XXXXXX", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) automatic = NULL;
  g_autoptr(SandboxBackend) copy = NULL;
  g_autoptr(SandboxBackend) bogus = NULL;
  g_autofree char *automatic_layering = NULL;
  g_autofree char *copy_layering = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;

  automatic = new_backend (state_directory, "auto", &error);
  g_assert_no_error (error);
  automatic_layering = backend_layering (automatic);
  g_assert_cmpstr (automatic_layering, ==, "overlay");

  copy = new_backend (state_directory, "copy", &error);
  g_assert_no_error (error);
  copy_layering = backend_layering (copy);
  g_assert_cmpstr (copy_layering, ==, "copy");

  bogus = new_backend (state_directory, "overlayfs", &error);
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
  remove_directory (state_directory);
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
  g_autofree char *out = guest_sh (fixture,
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

/* /workspace is the overlay, nosuid and nodev, and the layers are covered:
 * the guest reaches them only through it. Remove the tmpfs cover in
 * stub/sandbox-stub-overlay.c: the layers then show. */
static void
test_mount_and_cover (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autofree char *mounts = guest_sh (fixture, "grep ' /workspace ' /proc/self/mountinfo");
  g_autofree char *cover = guest_sh (fixture, "ls -A /run/sandbox-overlay | wc -l; "
                                              "touch /run/sandbox-overlay/x 2>/dev/null || echo ro");

  g_assert_nonnull (strstr (mounts, " overlay overlay "));
  g_assert_nonnull (strstr (mounts, "nosuid"));
  g_assert_nonnull (strstr (mounts, "nodev"));
  g_assert_nonnull (strstr (mounts, "userxattr"));
  g_assert_null (strstr (mounts, fixture->state_directory));
  g_assert_cmpstr (cover, ==, "0\nro\n");
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
  g_autofree char *out = guest_sh (fixture,
    "printf x > src/new.c && for name in user.overlay.opaque user.overlay.redirect "
    "user.overlay.metacopy trusted.overlay.opaque; do "
    "python3 -c 'import os, sys; os.setxattr(\"src\", sys.argv[1], b\"y\"); "
    "os.setxattr(\"hello.txt\", sys.argv[1], b\"y\")' $name 2>/dev/null; done; echo end");
  char value[8];

  g_assert_cmpstr (out, ==, "end\n");
  g_assert_cmpint (getxattr (upper_src, "user.overlay.opaque", value, sizeof value), <, 0);
  g_assert_cmpint (getxattr (upper_src, "user.overlay.redirect", value, sizeof value), <, 0);
  g_assert_cmpint (getxattr (upper_src, "trusted.overlay.opaque", value, sizeof value), <, 0);
  listing = guest_sh (fixture, "ls src");
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

  out = guest_sh (fixture, "id -u; ./suid-id -u; ./cap-cat /proc/self/status | "
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

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/layering/property", test_property);
#define ADD(path, func) \
  g_test_add ("/sandbox/layering/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
  ADD ("create-copies-nothing", test_create_copies_nothing);
  ADD ("guest-and-host-agree", test_guest_and_host_agree);
  ADD ("lifecycle", test_lifecycle);
  ADD ("hostile/no-capability-left", test_no_capability_left);
  ADD ("hostile/mount-and-cover", test_mount_and_cover);
  ADD ("hostile/overlay-xattrs-inert", test_overlay_xattrs_inert);
  ADD ("hostile/setuid-and-file-capabilities", test_setuid_and_file_capabilities);

  return g_test_run ();
}
