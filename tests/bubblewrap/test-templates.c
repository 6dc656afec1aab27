/* test-templates.c — what templates keep, against real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A checkout as agents have it (an executable ./configure, node_modules/.bin
 * links, absolute links, empty directories) goes through prewarm, create,
 * the guest, resume and delete; hostile links in the imported tree are
 * stored as links and never followed on the host; an imported file changed
 * before prewarm is never stored; and importing and storing a 1 GiB tree
 * keeps the process small.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"

#define TMPFS_MAGIC 0x01021994

static void
write_host_file (const char *root,
                 const char *relative,
                 const char *contents,
                 mode_t      mode)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  g_autofree char *parent = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_assert_no_errno (g_mkdir_with_parents (parent, 0755));
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
  g_assert_no_errno (chmod (path, mode));
}

static void
make_host_link (const char *root,
                const char *relative,
                const char *target)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  g_autofree char *parent = g_path_get_dirname (path);

  g_assert_no_errno (g_mkdir_with_parents (parent, 0755));
  g_assert_no_errno (symlink (target, path));
}

/* The path of templates/KEY/data for the default backend name. */
static char *
template_data (const char *state_directory,
               const char *key)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);

  return g_build_filename (state_directory, digest, "templates", key, "data", NULL);
}

static void
assert_entry (const char *root,
              const char *relative,
              mode_t      type,
              mode_t      mode)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  struct stat st;

  g_assert_no_errno (lstat (path, &st));
  g_assert_cmpint (st.st_mode & S_IFMT, ==, type);
  if (type != S_IFLNK)
    g_assert_cmpint (st.st_mode & 07777, ==, mode);
}

static void
assert_link (const char *root,
             const char *relative,
             const char *target)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *read = g_file_read_link (path, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (read, ==, target);
}

static char *
guest_sh (SandboxSession *session,
          const char     *script,
          int            *status)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sh");
  g_autoptr(SandboxResult) result = NULL;

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, script);
  result = sandbox_session_run (session, command, NULL, &error);
  g_assert_no_error (error);
  *status = sandbox_result_get_exit_status (result);
  return sandbox_result_dup_stdout_text (result);
}

static void
assert_guest_prints (SandboxSession *session,
                     const char     *script,
                     const char     *expected)
{
  int status;
  g_autofree char *out = guest_sh (session, script, &status);

  if (status != 0 || g_strcmp0 (out, expected) != 0)
    g_error ("guest script “%s”: status %d, printed “%s”, expected “%s”", script, status, out,
             expected);
}

/* The backend lists @key with the name it was prewarmed with, and counts
 * its files and links. Drop the name from ready_record() and this fails. */
static void
assert_listed_with_name (SandboxBackend *backend,
                         const char     *key,
                         const char     *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) templates = sandbox_backend_list_templates (backend, NULL, &error);
  SandboxTemplateInfo *found = NULL;

  g_assert_no_error (error);
  for (guint i = 0; i < templates->len; i++)
    if (g_str_equal (sandbox_template_info_get_key (templates->pdata[i]), key))
      found = templates->pdata[i];
  g_assert_nonnull (found);
  g_assert_cmpstr (sandbox_template_info_get_name (found), ==, name);
}

/* A host tree shaped like a real checkout, plus hostile links out of it:
 * one to a host secret, and two decoys (a file and a directory in
 * @outside) that delete must leave alone. */
static void
make_checkout (const char *root,
               const char *outside)
{
  g_autofree char *decoy = g_build_filename (outside, "decoy", NULL);
  g_autofree char *decoy_dir = g_build_filename (outside, "decoy-dir", NULL);
  g_autofree char *empty = NULL;

  write_host_file (root, "configure", "#!/bin/sh\necho configured \"$@\"\n", 0755);
  write_host_file (root, "plain.sh", "#!/bin/sh\necho ran\n", 0644);
  write_host_file (root, "README", "read me\n", 0600);
  write_host_file (root, "node_modules/x/bin/x.js", "#!/bin/sh\necho x from node_modules\n", 0700);
  make_host_link (root, "node_modules/.bin/x", "../x/bin/x.js");
  make_host_link (root, ".venv/bin/python", "/usr/bin/python3");
  make_host_link (root, "docs/readme", "/workspace/README");
  make_host_link (root, "shadow", "/etc/shadow");
  make_host_link (root, "decoy", decoy);
  make_host_link (root, "decoy-dir", decoy_dir);
  empty = g_build_filename (root, "build", "out", NULL);
  g_assert_no_errno (g_mkdir_with_parents (empty, 0700));
  write_host_file (outside, "decoy", "host decoy\n", 0644);
  write_host_file (outside, "decoy-dir/keep", "keep\n", 0644);
}

/* data/'s modes are 0755 and 0644 whatever the umask: a strict one would
 * make an executable 0700 (and, on a root host, unreadable to the guest
 * ids); the import skips its fchmod() only where the umask cannot clear a
 * bit. Make umask_may_clear_template_modes() return FALSE and the 077 case
 * fails. */
static void
test_modes_whatever_the_umask (void)
{
  const mode_t umasks[] = { 077, 027, 022, 0 };
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, NULL);

  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (umasks); i++)
    {
      g_autofree char *name = g_strdup_printf ("umask-%04o", (unsigned) umasks[i]);
      g_autoptr(SandboxTemplate) template_ = sandbox_template_new (name);
      g_autoptr(GBytes) script = g_bytes_new_static ("#!/bin/sh\n", 10);
      g_autoptr(GBytes) text = g_bytes_new_static ("text\n", 5);
      g_autofree char *key = NULL;
      g_autofree char *data = NULL;
      mode_t saved;

      g_assert_true (sandbox_template_add_file_full (template_, "bin/run", script,
                                                     SANDBOX_TEMPLATE_FILE_EXECUTABLE, &error));
      g_assert_no_error (error);
      g_assert_true (sandbox_template_add_file (template_, "notes.txt", text, &error));
      g_assert_no_error (error);
      saved = umask (umasks[i]);
      key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
      umask (saved);
      g_assert_no_error (error);
      data = template_data (state_directory, key);
      assert_entry (data, "bin/run", S_IFREG, 0755);
      assert_entry (data, "notes.txt", S_IFREG, 0644);
      assert_entry (data, "bin", S_IFDIR, 0755);
    }
}

/* The whole life of a checkout template, as root and unprivileged. Make
 * write_template_file() create every file 0644 and ./configure is
 * "Permission denied" in the guest; make write_template_entry() skip links
 * or empty directories and their checks fail. */
static void
test_checkout_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autofree char *root = g_dir_make_tmp ("sandbox-src-XXXXXX", &error);
  g_autofree char *outside = g_dir_make_tmp ("sandbox-out-XXXXXX", &error);
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, NULL);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("checkout");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GFile) directory = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GBytes) leaked = NULL;
  g_autofree char *key = NULL;
  g_autofree char *data = NULL;
  g_autofree char *decoy = NULL;
  SandboxSession *session;
  int status;

  g_assert_no_error (error);
  make_checkout (root, outside);
  directory = g_file_new_for_path (root);
  g_assert_true (sandbox_template_add_directory (template_, directory, NULL, &error));
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);

  /* data/ holds what the guest should see: it is an overlay's lower layer. */
  data = template_data (state_directory, key);
  assert_entry (data, "configure", S_IFREG, 0755);
  assert_entry (data, "plain.sh", S_IFREG, 0644);
  assert_entry (data, "README", S_IFREG, 0644);
  assert_entry (data, "node_modules/x/bin/x.js", S_IFREG, 0755);
  assert_entry (data, "node_modules", S_IFDIR, 0755);
  assert_entry (data, "build/out", S_IFDIR, 0755);
  assert_entry (data, "shadow", S_IFLNK, 0);
  assert_link (data, "node_modules/.bin/x", "../x/bin/x.js");
  assert_link (data, ".venv/bin/python", "/usr/bin/python3");
  assert_link (data, "docs/readme", "/workspace/README");
  assert_link (data, "shadow", "/etc/shadow");

  assert_listed_with_name (backend, key, "checkout");

  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  session = sandbox_handle_get_session (handle);

  assert_guest_prints (session, "./configure --prefix=/usr", "configured --prefix=/usr\n");
  assert_guest_prints (session, "node_modules/.bin/x", "x from node_modules\n");
  assert_guest_prints (session, "cat docs/readme", "read me\n");
  assert_guest_prints (session, "readlink .venv/bin/python shadow",
                       "/usr/bin/python3\n/etc/shadow\n");
  assert_guest_prints (session, "test -d build/out && ls -A build/out && echo empty", "empty\n");
  g_free (guest_sh (session, "./plain.sh", &status));
  g_assert_cmpint (status, ==, 126);

  /* Hostile: the host-side file API does not follow the link out. */
  leaked = sandbox_session_read_bytes (session, "shadow", NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_null (leaked);
  g_clear_error (&error);

  /* Stop, resume: the links and modes are the workspace's own. */
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  resumed = sandbox_backend_create (backend, key, state, policy, NULL, &error);
  g_assert_no_error (error);
  session = sandbox_handle_get_session (resumed);
  assert_guest_prints (session, "./configure && node_modules/.bin/x",
                       "configured\nx from node_modules\n");

  /* Delete never follows a link: the decoys outside are untouched. */
  g_assert_true (sandbox_handle_delete (resumed, NULL, &error));
  g_assert_no_error (error);
  decoy = g_build_filename (outside, "decoy", NULL);
  g_assert_true (g_file_test (decoy, G_FILE_TEST_IS_REGULAR));
  g_clear_pointer (&decoy, g_free);
  decoy = g_build_filename (outside, "decoy-dir", "keep", NULL);
  g_assert_true (g_file_test (decoy, G_FILE_TEST_IS_REGULAR));

  g_clear_object (&handle);
  g_clear_object (&resumed);
  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
  sandbox_test_remove_tree (root);
  sandbox_test_remove_tree (outside);
}

/* Hostile: a file changed on the host between add_directory() and prewarm
 * is never stored under the key of its old contents, and nothing is left
 * in the store. Make the template's stream skip its final check and the
 * prewarm succeeds with the new bytes in data/. */
static void
test_changed_file_is_not_stored (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autofree char *root = g_dir_make_tmp ("sandbox-src-XXXXXX", &error);
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *templates = g_build_filename (state_directory, digest, "templates", NULL);
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, NULL);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("changing");
  g_autoptr(GFile) directory = NULL;
  g_autoptr(GDir) listing = NULL;
  g_autofree char *key = NULL;

  g_assert_no_error (error);
  write_host_file (root, "a.txt", "before", 0644);
  write_host_file (root, "z.txt", "last", 0644);
  directory = g_file_new_for_path (root);
  g_assert_true (sandbox_template_add_directory (template_, directory, NULL, &error));
  g_assert_no_error (error);
  write_host_file (root, "a.txt", "BEFORE", 0644);

  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
  g_assert_nonnull (strstr (error->message, "/workspace/a.txt"));
  g_assert_null (key);

  listing = g_dir_open (templates, 0, NULL);
  g_assert_nonnull (listing);
  g_assert_null (g_dir_read_name (listing));

  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
  sandbox_test_remove_tree (root);
}

/* Longer than the import's margin for recently changed files (20 ms):
 * files older than this are read once, when they are stored, hashed as
 * they are copied; younger ones are hashed at the import too. */
#define SETTLE_US (60 * 1000)

/* Rewrites @relative below @root in place: same inode, same size. */
static void
overwrite_in_place (const char *root,
                    const char *relative,
                    const char *contents)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  int fd = open (path, O_WRONLY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (pwrite (fd, contents, strlen (contents), 0), ==, strlen (contents));
  g_assert_no_errno (close (fd));
}

/* The names in @directory, sorted. */
static GPtrArray *
list_names (const char *directory)
{
  g_autoptr(GDir) listing = g_dir_open (directory, 0, NULL);
  GPtrArray *names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  g_assert_nonnull (listing);
  while ((name = g_dir_read_name (listing)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
  return names;
}

/* Hostile: the same with a file the import did not hash (it is read once,
 * as it is copied): changed in place with the same size, only its times
 * tell. Nothing is stored, not even under the key of the new bytes. Make
 * matches_stamp() return TRUE and the prewarm stores "BEFORE". */
static void
test_changed_settled_file_is_not_stored (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autofree char *root = g_dir_make_tmp ("sandbox-src-XXXXXX", &error);
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *templates = g_build_filename (state_directory, digest, "templates", NULL);
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, NULL);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("changing");
  g_autoptr(GFile) directory = NULL;
  g_autoptr(GPtrArray) names = NULL;
  g_autofree char *key = NULL;

  g_assert_no_error (error);
  write_host_file (root, "a.txt", "before", 0644);
  write_host_file (root, "z.txt", "last", 0644);
  g_usleep (SETTLE_US);
  directory = g_file_new_for_path (root);
  g_assert_true (sandbox_template_add_directory (template_, directory, NULL, &error));
  g_assert_no_error (error);
  overwrite_in_place (root, "a.txt", "BEFORE");

  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
  g_assert_nonnull (strstr (error->message, "/workspace/a.txt"));
  g_assert_null (key);

  names = list_names (templates);
  g_assert_cmpuint (names->len, ==, 0);

  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
  sandbox_test_remove_tree (root);
}

static void
count_progress (SandboxTemplate *template_,
                guint64          files_done,
                guint64          files_total,
                guint64          bytes_done,
                guint64          bytes_total,
                guint           *emissions)
{
  (*emissions)++;
}

/* A tree imported afresh has no digests until it is read. The first
 * prewarm copies it, hashing as it copies (no template of its name is
 * stored, so its key cannot be); a second import of it, a template of a
 * stored name, is hashed first and found stored: reused, the same key,
 * not copied (no progress: nothing was stored), nothing left beside it.
 * Make name_may_be_stored() return FALSE and the second prewarm copies
 * the tree (and reports progress) before it finds the key stored. */
static void
test_fresh_import_of_stored_tree_is_reused (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autofree char *root = g_dir_make_tmp ("sandbox-src-XXXXXX", &error);
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *templates = g_build_filename (state_directory, digest, "templates", NULL);
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, NULL);
  g_autoptr(GFile) directory = NULL;
  g_autoptr(GPtrArray) names = NULL;
  g_autofree char *first = NULL;
  g_autofree char *data = NULL;

  g_assert_no_error (error);
  write_host_file (root, "a.txt", "alpha", 0644);
  write_host_file (root, "bin/run", "#!/bin/sh\n", 0755);
  g_usleep (SETTLE_US);
  directory = g_file_new_for_path (root);

  for (guint round = 0; round < 2; round++)
    {
      g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("again");
      g_autofree char *key = NULL;
      gboolean reused = round == 0;
      guint emissions = 0;

      g_assert_true (sandbox_template_add_directory (template_, directory, NULL, &error));
      g_assert_no_error (error);
      g_signal_connect (template_, "progress", G_CALLBACK (count_progress), &emissions);
      key = sandbox_backend_prewarm (backend, template_, &reused, NULL, &error);
      g_assert_no_error (error);
      g_assert_true (reused == (round == 1));
      if (round == 0)
        g_assert_cmpuint (emissions, >, 0);
      else
        g_assert_cmpuint (emissions, ==, 0);
      if (round == 0)
        first = g_steal_pointer (&key);
      else
        g_assert_cmpstr (key, ==, first);
    }

  names = list_names (templates);
  g_assert_cmpuint (names->len, ==, 1);
  g_assert_cmpstr (names->pdata[0], ==, first);
  data = template_data (state_directory, first);
  assert_entry (data, "a.txt", S_IFREG, 0644);
  assert_entry (data, "bin/run", S_IFREG, 0755);

  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
  sandbox_test_remove_tree (root);
}

/* The peak resident set of this process, in KiB. */
static guint64
read_vm_hwm (void)
{
  g_autofree char *status = NULL;
  const char *line;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  line = strstr (status, "\nVmHWM:");
  g_assert_nonnull (line);
  return g_ascii_strtoull (line + strlen ("\nVmHWM:"), NULL, 10);
}

#define BIG_FILES 4
#define BIG_FILE_SIZE ((goffset) 256 * 1024 * 1024)
#define MAX_PEAK_KIB (64 * 1024)

/* Importing and storing a 1 GiB tree (four sparse 256 MiB files on tmpfs,
 * so the test costs hashing, not disk) keeps the process under 64 MiB:
 * neither add_directory() nor prewarm holds a file's bytes. Go back to
 * reading whole files into GBytes in import_file() and the peak passes
 * 256 MiB. Runs in a subprocess of its own, so the peak is this work's. */
static void
test_big_tree_memory_is_bounded (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *base = NULL;
  g_autofree char *root = NULL;
  g_autofree char *state_directory = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("big");
  g_autoptr(GFile) directory = NULL;
  g_autofree char *key = NULL;
  struct statfs fs;
  guint64 peak;

  if (!g_test_subprocess ())
    {
      if (statfs ("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC ||
          access ("/dev/shm", W_OK) != 0)
        {
          g_test_skip ("no writable tmpfs at /dev/shm");
          return;
        }
      g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      return;
    }

  base = g_mkdtemp (g_strdup ("/dev/shm/sandbox-big-XXXXXX"));
  g_assert_nonnull (base);
  root = g_build_filename (base, "tree", NULL);
  state_directory = g_build_filename (base, "state", NULL);
  for (guint i = 0; i < BIG_FILES; i++)
    {
      g_autofree char *name = g_strdup_printf ("dir%u/file%u.bin", i, i);
      g_autofree char *path = g_build_filename (root, name, NULL);
      g_autofree char *parent = g_path_get_dirname (path);
      int fd;

      g_assert_no_errno (g_mkdir_with_parents (parent, 0700));
      fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      g_assert_cmpint (fd, >=, 0);
      /* A few real bytes, so the files differ; the rest is a hole. */
      g_assert_cmpint (pwrite (fd, name, strlen (name), BIG_FILE_SIZE / 2), ==, strlen (name));
      g_assert_no_errno (ftruncate (fd, BIG_FILE_SIZE));
      g_assert_no_errno (close (fd));
    }

  backend = sandbox_test_setup_backend ("bubblewrap", state_directory, NULL);
  directory = g_file_new_for_path (root);
  /* Settled, so the files are hashed as they are copied, not at import. */
  g_usleep (SETTLE_US);
  g_assert_true (sandbox_template_add_directory (template_, directory, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sandbox_template_get_n_bytes (template_), ==, BIG_FILES * BIG_FILE_SIZE);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);

  peak = read_vm_hwm ();
  g_test_message ("peak RSS %" G_GUINT64_FORMAT " KiB for a %d MiB tree", peak,
                  (int) (BIG_FILES * BIG_FILE_SIZE >> 20));
  g_clear_object (&backend);
  sandbox_test_remove_tree (base);
  g_assert_cmpuint (peak, <, MAX_PEAK_KIB);
}

typedef struct
{
  GThread *thread;       /* where every emission must come */
  guint emissions;
  gboolean wrong_thread;
  gboolean went_back;
  guint64 last[4];       /* files done, files total, bytes done, bytes total */
  GAsyncResult *result;
} ProgressLog;

static void
progress_cb (SandboxTemplate *template_,
             guint64          files_done,
             guint64          files_total,
             guint64          bytes_done,
             guint64          bytes_total,
             ProgressLog     *log)
{
  log->wrong_thread |= g_thread_self () != log->thread;
  log->went_back |= files_done < log->last[0] || bytes_done < log->last[2];
  log->last[0] = files_done;
  log->last[1] = files_total;
  log->last[2] = bytes_done;
  log->last[3] = bytes_total;
  log->emissions++;
}

static void
store_result (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  ProgressLog *log = user_data;

  log->result = g_object_ref (result);
}

/* A tree of 4 files (1 MiB and more) and a link. */
static void
make_progress_tree (const char *root)
{
  g_autofree char *big = g_malloc0 (1 << 20);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *name = g_strdup_printf ("f%u.txt", i);

      write_host_file (root, name, "small", 0644);
    }
  {
    g_autofree char *path = g_build_filename (root, "big.bin", NULL);

    g_file_set_contents (path, big, 1 << 20, &error);
    g_assert_no_error (error);
  }
  make_host_link (root, "link", "f0.txt");
}

/* The tree imported, and one more file in memory. */
static SandboxTemplate *
progress_template (const char *root)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("progress");
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(GBytes) extra = g_bytes_new_static ("extra", 5);
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_template_add_directory (template_, directory, NULL, &error));
  g_assert_true (sandbox_template_add_file (template_, "extra.txt", extra, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&template_);
}

static void
assert_progress_complete (ProgressLog     *log,
                          SandboxTemplate *template_)
{
  g_assert_cmpuint (log->emissions, >, 0);
  g_assert_false (log->wrong_thread);
  g_assert_false (log->went_back);
  /* Regular files only: the link is not read. */
  g_assert_cmpuint (log->last[0], ==, 5);
  g_assert_cmpuint (log->last[1], ==, 5);
  g_assert_cmpuint (log->last[2], ==, sandbox_template_get_n_bytes (template_));
  g_assert_cmpuint (log->last[3], ==, sandbox_template_get_n_bytes (template_));
}

/* Progress of a blocking prewarm comes in the calling thread, counts up to
 * the totals, and a second prewarm of the stored template reports nothing.
 * The async form reports in the caller's main context although the work
 * runs in a worker thread: make sandbox_template_report_progress() always
 * emit directly and the emissions come from the worker. */
static void
test_prewarm_reports_progress (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autofree char *root = g_dir_make_tmp ("sandbox-src-XXXXXX", &error);
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, NULL);
  g_autoptr(SandboxTemplate) template_ = NULL;
  g_autoptr(SandboxTemplate) again = NULL;
  ProgressLog log = { g_thread_self (), };
  gulong handler;
  g_autofree char *key = NULL;
  g_autofree char *async_key = NULL;
  gboolean reused = TRUE;

  make_progress_tree (root);
  template_ = progress_template (root);
  handler = g_signal_connect (template_, "progress", G_CALLBACK (progress_cb), &log);
  key = sandbox_backend_prewarm (backend, template_, &reused, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (reused);
  assert_progress_complete (&log, template_);

  log = (ProgressLog) { g_thread_self (), };
  g_free (sandbox_backend_prewarm (backend, template_, &reused, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (reused);
  g_assert_cmpuint (log.emissions, ==, 0);
  g_signal_handler_disconnect (template_, handler);

  /* A fresh backend name, so the async prewarm stores (and reads) again. */
  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
  g_assert_no_errno (mkdir (state_directory, 0700));
  backend = sandbox_test_setup_backend ("bubblewrap", state_directory, NULL);
  again = progress_template (root);
  log = (ProgressLog) { g_thread_self (), };
  g_signal_connect (again, "progress", G_CALLBACK (progress_cb), &log);
  sandbox_backend_prewarm_async (backend, again, NULL, store_result, &log);
  while (log.result == NULL)
    g_main_context_iteration (NULL, TRUE);
  async_key = sandbox_backend_prewarm_finish (backend, log.result, &reused, &error);
  g_assert_no_error (error);
  g_clear_object (&log.result);
  /* Merged emissions queued before the result are all delivered by now. */
  while (g_main_context_iteration (NULL, FALSE))
    ;
  assert_progress_complete (&log, again);

  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
  sandbox_test_remove_tree (root);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/bubblewrap/templates/checkout-round-trip", test_checkout_round_trip);
  g_test_add_func ("/sandbox/bubblewrap/templates/modes-whatever-the-umask",
                   test_modes_whatever_the_umask);
  g_test_add_func ("/sandbox/bubblewrap/templates/changed-file-is-not-stored",
                   test_changed_file_is_not_stored);
  g_test_add_func ("/sandbox/bubblewrap/templates/changed-settled-file-is-not-stored",
                   test_changed_settled_file_is_not_stored);
  g_test_add_func ("/sandbox/bubblewrap/templates/fresh-import-of-stored-tree-is-reused",
                   test_fresh_import_of_stored_tree_is_reused);
  g_test_add_func ("/sandbox/bubblewrap/templates/prewarm-reports-progress",
                   test_prewarm_reports_progress);
  g_test_add_func ("/sandbox/bubblewrap/templates/big-tree-memory-is-bounded",
                   test_big_tree_memory_is_bounded);

  return g_test_run ();
}
