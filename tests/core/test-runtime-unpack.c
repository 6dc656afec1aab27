/* test-runtime-unpack.c — a runtime's tree unpacked contained, and its key
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Real files in a scratch directory under $TMPDIR: a source tree (or an OCI
 * layout, test-runtime-unpack-oci.c's part), an empty target, and a canary
 * directory next to them that nothing may reach. Run as root and, through
 * tests/bubblewrap/run-unprivileged.sh, as an unprivileged user.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-runtime-unpack-private.h"
#include "test-runtime-unpack-common.h"

/* --- the scratch directory -------------------------------------------- */

static int
make_removable (const char        *path,
                const struct stat *st,
                int                type,
                struct FTW        *ftw)
{
  if (type == FTW_D)
    chmod (path, 0700);
  /* A directory nftw() could not read (mode 0000): opened up, then walked. */
  if (type == FTW_DNR && chmod (path, 0700) == 0)
    nftw (path, make_removable, 64, FTW_PHYS);
  return 0;
}

static int
remove_one (const char        *path,
            const struct stat *st,
            int                type,
            struct FTW        *ftw)
{
  if (remove (path) < 0 && errno != ENOENT)
    g_warning ("Cannot remove %s: %s", path, g_strerror (errno));
  return 0;
}

void
scratch_remove (const char *path)
{
  /* Directories first made writable (pre-order), then everything removed
   * children first; links are never followed (FTW_PHYS). */
  nftw (path, make_removable, 64, FTW_PHYS);
  nftw (path, remove_one, 64, FTW_PHYS | FTW_DEPTH);
}

void
scratch_set_up (Scratch       *scratch,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  scratch->root = g_dir_make_tmp ("runtime-unpack-XXXXXX", &error);
  g_assert_no_error (error);
  scratch->source = g_build_filename (scratch->root, "source", NULL);
  scratch->target = g_build_filename (scratch->root, "target", NULL);
  scratch->outside = g_build_filename (scratch->root, "outside", NULL);
  g_assert_no_errno (mkdir (scratch->source, 0755));
  g_assert_no_errno (mkdir (scratch->target, 0755));
  g_assert_no_errno (mkdir (scratch->outside, 0755));
  scratch->target_fd = open (scratch->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (scratch->target_fd, >=, 0);
}

void
scratch_tear_down (Scratch       *scratch,
                   gconstpointer  data)
{
  close (scratch->target_fd);
  scratch_remove (scratch->root);
  g_free (scratch->root);
  g_free (scratch->source);
  g_free (scratch->target);
  g_free (scratch->outside);
}

/* Nothing may appear in the canary directory, nor anywhere in the scratch
 * root but source/, target/, outside/, layout/ and a test's host secret. */
void
scratch_assert_outside_untouched (Scratch *scratch)
{
  g_autoptr(GDir) dir = NULL;
  g_autoptr(GError) error = NULL;
  const char *name;
  guint count = 0;

  dir = g_dir_open (scratch->outside, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    g_error ("Something was written outside the target: outside/%s", name);
  g_clear_pointer (&dir, g_dir_close);

  dir = g_dir_open (scratch->root, 0, &error);
  g_assert_no_error (error);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      if (g_strcmp0 (name, "source") != 0 && g_strcmp0 (name, "target") != 0 &&
          g_strcmp0 (name, "outside") != 0 && g_strcmp0 (name, "layout") != 0 &&
          g_strcmp0 (name, "secret") != 0)
        g_error ("Something was written outside the target: %s", name);
      count++;
    }
  g_assert_cmpuint (count, <=, 5);
}

char *
tree_key (const char *path)
{
  g_autoptr(GError) error = NULL;
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char *key;

  g_assert_cmpint (fd, >=, 0);
  key = sandbox_runtime_compute_key (fd, NULL, &error);
  g_assert_no_error (error);
  close (fd);
  g_assert_nonnull (key);
  g_assert_cmpuint (strlen (key), ==, 64);
  for (const char *p = key; *p != '\0'; p++)
    g_assert_true (g_ascii_isdigit (*p) || (*p >= 'a' && *p <= 'f'));
  return key;
}

/* --- building a source tree ------------------------------------------- */

static void
put_file (const char *root,
          const char *relative,
          const char *contents,
          mode_t      mode)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  g_autoptr(GError) error = NULL;

  /* No fsync: a scratch tree need not survive a crash. */
  g_file_set_contents_full (path, contents, -1, G_FILE_SET_CONTENTS_NONE, mode, &error);
  g_assert_no_error (error);
  g_assert_no_errno (chmod (path, mode));
}

static void
put_dir (const char *root,
         const char *relative,
         mode_t      mode)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);

  g_assert_no_errno (mkdir (path, 0755));
  g_assert_no_errno (chmod (path, mode));
}

static void
put_link (const char *root,
          const char *relative,
          const char *target)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);

  g_assert_no_errno (symlink (target, path));
}

static struct stat
lstat_in (const char *root,
          const char *relative)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  struct stat st;

  if (lstat (path, &st) < 0)
    g_error ("%s: %s", relative, g_strerror (errno));
  return st;
}

static gboolean
exists_in (const char *root,
           const char *relative)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  struct stat st;

  return lstat (path, &st) == 0;
}

static char *
link_in (const char *root,
         const char *relative)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  g_autoptr(GError) error = NULL;
  char *target = g_file_read_link (path, &error);

  g_assert_no_error (error);
  return target;
}

static char *
contents_in (const char *root,
             const char *relative)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  return contents;
}

/* A small root file system: what a runtime has, and what it must lose. */
void
runtime_unpack_make_sample_tree (const char *root)
{
  put_dir (root, "usr", 0755);
  put_dir (root, "usr/bin", 0755);
  put_file (root, "usr/bin/tool", "#!/bin/sh\necho tool\n", 0755);
  put_file (root, "usr/bin/su", "setuid root, pretend\n", 04755);
  put_file (root, "usr/bin/wall", "setgid, pretend\n", 02755);
  put_dir (root, "etc", 0755);
  put_file (root, "etc/shadow", "secret\n", 0600);
  put_file (root, "etc/os-release", "ID=test\n", 0644);
  put_dir (root, "tmp", 01777);
  put_dir (root, "empty", 0700);
  put_dir (root, "readonly", 0755);
  put_file (root, "readonly/inside", "in a read-only directory\n", 0444);
  put_link (root, "bin", "usr/bin");
  put_link (root, "host-etc", "/etc");
  put_link (root, "dangling", "no/such/file");
  put_link (root, "usr/bin/sh", "/usr/bin/dash");
  {
    g_autofree char *first = g_build_filename (root, "usr/bin/tool", NULL);
    g_autofree char *second = g_build_filename (root, "usr/bin/tool-again", NULL);

    g_assert_no_errno (link (first, second));
  }
  {
    g_autofree char *readonly = g_build_filename (root, "readonly", NULL);

    /* Read-only last, once its file is in. */
    g_assert_no_errno (chmod (readonly, 0555));
  }
}

static gboolean
unpack_directory (const char                 *source,
                  int                         target_fd,
                  const SandboxRuntimeLimits *limits,
                  GError                    **error)
{
  int source_fd = open (source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  gboolean ok;

  g_assert_cmpint (source_fd, >=, 0);
  ok = sandbox_runtime_unpack_directory (source_fd, target_fd, limits, NULL, NULL, NULL, error);
  close (source_fd);
  return ok;
}

/* --- the directory unpack --------------------------------------------- */

static void
test_directory_round_trip (Scratch       *scratch,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *shebang = NULL;
  g_autofree char *link_target = NULL;
  struct stat st, again;

  runtime_unpack_make_sample_tree (scratch->source);
  {
    g_autofree char *fifo = g_build_filename (scratch->source, "tmp/fifo", NULL);
    g_autofree char *tmp = g_build_filename (scratch->source, "tmp", NULL);

    g_assert_no_errno (chmod (tmp, 0755));
    g_assert_no_errno (mkfifo (fifo, 0644));
    g_assert_no_errno (chmod (tmp, 01777));
  }

  g_assert_true (unpack_directory (scratch->source, scratch->target_fd, NULL, &error));
  g_assert_no_error (error);

  st = lstat_in (scratch->target, "usr/bin/tool");
  g_assert_true (S_ISREG (st.st_mode));
  g_assert_cmpint (st.st_mode & 07777, ==, 0755);
  g_assert_cmpint (st.st_uid, ==, geteuid ());
  shebang = contents_in (scratch->target, "usr/bin/tool");
  g_assert_cmpstr (shebang, ==, "#!/bin/sh\necho tool\n");
  again = lstat_in (scratch->target, "usr/bin/tool-again");
  g_assert_cmpuint (again.st_ino, ==, st.st_ino);
  g_assert_cmpuint (st.st_nlink, ==, 2);

  /* setuid and setgid dropped, the rest kept. */
  g_assert_cmpint (lstat_in (scratch->target, "usr/bin/su").st_mode & 07777, ==, 0755);
  g_assert_cmpint (lstat_in (scratch->target, "usr/bin/wall").st_mode & 07777, ==, 0755);
  g_assert_cmpint (lstat_in (scratch->target, "etc/shadow").st_mode & 07777, ==, 0600);
  g_assert_cmpint (lstat_in (scratch->target, "etc/os-release").st_mode & 07777, ==, 0644);

  /* Directories: the sticky bit kept on tmp, empty and read-only ones. */
  st = lstat_in (scratch->target, "tmp");
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpint (st.st_mode & 07777, ==, 01777);
  g_assert_cmpint (lstat_in (scratch->target, "empty").st_mode & 07777, ==, 0700);
  g_assert_cmpint (lstat_in (scratch->target, "readonly").st_mode & 07777, ==, 0555);
  g_assert_cmpint (lstat_in (scratch->target, "readonly/inside").st_mode & 07777, ==, 0444);

  /* Links verbatim, absolute ones and dangling ones too, never followed. */
  g_assert_true (S_ISLNK (lstat_in (scratch->target, "host-etc").st_mode));
  link_target = link_in (scratch->target, "host-etc");
  g_assert_cmpstr (link_target, ==, "/etc");
  g_clear_pointer (&link_target, g_free);
  link_target = link_in (scratch->target, "bin");
  g_assert_cmpstr (link_target, ==, "usr/bin");
  g_clear_pointer (&link_target, g_free);
  link_target = link_in (scratch->target, "dangling");
  g_assert_cmpstr (link_target, ==, "no/such/file");
  g_clear_pointer (&link_target, g_free);
  link_target = link_in (scratch->target, "usr/bin/sh");
  g_assert_cmpstr (link_target, ==, "/usr/bin/dash");

  /* The FIFO skipped. */
  g_assert_false (exists_in (scratch->target, "tmp/fifo"));
  scratch_assert_outside_untouched (scratch);
}

static void
test_directory_device_skipped (Scratch       *scratch,
                               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *device = g_build_filename (scratch->source, "null", NULL);

  if (geteuid () != 0)
    {
      g_test_skip ("Only root can make a device node");
      return;
    }

  g_assert_no_errno (mknod (device, S_IFCHR | 0666, makedev (1, 3)));
  put_file (scratch->source, "kept", "x", 0644);
  g_assert_true (unpack_directory (scratch->source, scratch->target_fd, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (exists_in (scratch->target, "null"));
  g_assert_true (exists_in (scratch->target, "kept"));
}

/* The same tree gives the same key, whatever order its directories list
 * in; the unpacked copy of a tree has the key of a copy of that copy. */
static void
test_directory_key (Scratch       *scratch,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *again = g_build_filename (scratch->root, "layout", NULL);
  g_autofree char *key = NULL;
  g_autofree char *key_again = NULL;
  g_autofree char *changed = NULL;
  int again_fd;

  runtime_unpack_make_sample_tree (scratch->source);
  g_assert_true (unpack_directory (scratch->source, scratch->target_fd, NULL, &error));
  g_assert_no_error (error);
  key = tree_key (scratch->target);

  g_assert_no_errno (mkdir (again, 0755));
  again_fd = open (again, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_true (unpack_directory (scratch->target, again_fd, NULL, &error));
  g_assert_no_error (error);
  close (again_fd);
  key_again = tree_key (again);
  g_assert_cmpstr (key, ==, key_again);

  /* One byte of one file, one mode, one link's target: another key. */
  {
    g_autofree char *path = g_build_filename (again, "etc/os-release", NULL);

    g_file_set_contents (path, "ID=tesT\n", -1, &error);
    g_assert_no_error (error);
    changed = tree_key (again);
    g_assert_cmpstr (changed, !=, key);
    g_file_set_contents (path, "ID=test\n", -1, &error);
    g_assert_no_error (error);
    g_clear_pointer (&changed, g_free);
    changed = tree_key (again);
    g_assert_cmpstr (changed, ==, key);
    g_clear_pointer (&changed, g_free);

    g_assert_no_errno (chmod (path, 0640));
    changed = tree_key (again);
    g_assert_cmpstr (changed, !=, key);
    g_assert_no_errno (chmod (path, 0644));
    g_clear_pointer (&changed, g_free);
  }
  {
    g_autofree char *path = g_build_filename (again, "dangling", NULL);

    g_assert_no_errno (unlink (path));
    g_assert_no_errno (symlink ("no/such/filE", path));
    changed = tree_key (again);
    g_assert_cmpstr (changed, !=, key);
    g_clear_pointer (&changed, g_free);
    /* A file where the link was, with the link's text as contents. */
    g_assert_no_errno (unlink (path));
    g_file_set_contents (path, "no/such/file", -1, &error);
    g_assert_no_error (error);
    changed = tree_key (again);
    g_assert_cmpstr (changed, !=, key);
  }
}

/* Two trees of the same entries made in opposite orders: the file systems
 * the tests run on (tmpfs, ext4) list them in different orders, the key
 * does not see it. */
static void
test_key_ignores_listing_order (Scratch       *scratch,
                                gconstpointer  data)
{
  g_autofree char *key_forward = NULL;
  g_autofree char *key_backward = NULL;

  for (guint i = 0; i < 64; i++)
    {
      g_autofree char *name = g_strdup_printf ("entry-%02u", i);
      g_autofree char *other = g_strdup_printf ("entry-%02u", 63 - i);

      put_file (scratch->source, name, name, 0644);
      put_file (scratch->target, other, other, 0644);
    }
  key_forward = tree_key (scratch->source);
  key_backward = tree_key (scratch->target);
  g_assert_cmpstr (key_forward, ==, key_backward);

  /* A directory of the same name gives another key than a file. */
  put_dir (scratch->source, "x", 0755);
  put_file (scratch->target, "x", "", 0755);
  g_clear_pointer (&key_forward, g_free);
  g_clear_pointer (&key_backward, g_free);
  key_forward = tree_key (scratch->source);
  key_backward = tree_key (scratch->target);
  g_assert_cmpstr (key_forward, !=, key_backward);
}

static void
test_directory_limits (Scratch       *scratch,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  SandboxRuntimeLimits few_entries = { SANDBOX_RUNTIME_DEFAULT_MAX_BYTES, 10 };
  SandboxRuntimeLimits few_bytes = { 1 << 20, SANDBOX_RUNTIME_DEFAULT_MAX_ENTRIES };
  g_autofree char *sparse = g_build_filename (scratch->source, "sparse", NULL);
  gint64 start;
  int fd;

  for (guint i = 0; i < 11; i++)
    {
      g_autofree char *name = g_strdup_printf ("f%u", i);

      put_file (scratch->source, name, "", 0644);
    }
  g_assert_false (unpack_directory (scratch->source, scratch->target_fd, &few_entries, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_nonnull (strstr (error->message, "max_entries (10)"));
  g_clear_error (&error);
  scratch_remove (scratch->source);
  g_assert_no_errno (mkdir (scratch->source, 0755));
  scratch_remove (scratch->target);
  g_assert_no_errno (mkdir (scratch->target, 0755));
  close (scratch->target_fd);
  scratch->target_fd = open (scratch->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  /* A 10 GiB sparse file, refused before a byte of it is written. */
  fd = open (sparse, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  g_assert_cmpint (fd, >=, 0);
  g_assert_no_errno (ftruncate (fd, G_GINT64_CONSTANT (10) << 30));
  close (fd);
  start = g_get_monotonic_time ();
  g_assert_false (unpack_directory (scratch->source, scratch->target_fd, &few_bytes, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_nonnull (strstr (error->message, "max_bytes (1048576 bytes)"));
  g_assert_false (exists_in (scratch->target, "sparse"));
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
}

static void
count_progress (guint64  n_entries,
                guint64  n_bytes,
                gpointer user_data)
{
  GArray *calls = user_data;

  g_array_append_val (calls, n_entries);
}

static void
test_directory_progress_and_cancel (Scratch       *scratch,
                                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) calls = g_array_new (FALSE, FALSE, sizeof (guint64));
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  int source_fd;

  for (guint i = 0; i < 300; i++)
    {
      g_autofree char *name = g_strdup_printf ("f%u", i);

      put_file (scratch->source, name, "", 0644);
    }
  source_fd = open (scratch->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_true (sandbox_runtime_unpack_directory (source_fd, scratch->target_fd, NULL,
                                                   count_progress, calls, NULL, &error));
  g_assert_no_error (error);
  /* Every 256 entries, then the end: 256, 300. */
  g_assert_cmpuint (calls->len, ==, 2);
  g_assert_cmpuint (g_array_index (calls, guint64, 0), ==, 256);
  g_assert_cmpuint (g_array_index (calls, guint64, 1), ==, 300);

  scratch_remove (scratch->target);
  g_assert_no_errno (mkdir (scratch->target, 0755));
  close (scratch->target_fd);
  scratch->target_fd = open (scratch->target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_cancellable_cancel (cancellable);
  g_assert_false (sandbox_runtime_unpack_directory (source_fd, scratch->target_fd, NULL,
                                                    NULL, NULL, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (sandbox_test_count_dir (scratch->target), ==, 0);
  close (source_fd);
}

guint
sandbox_test_count_dir (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint count = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    count++;
  return count;
}

/* valgrind 3.19 does not know openat2(), which the contained writes need
 * (ENOSYS): .ci/valgrind runs the core suite under it. */
static gboolean
have_openat2 (void)
{
  struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_BENEATH };
  int fd = syscall (SYS_openat2, AT_FDCWD, ".", &how, sizeof how);

  if (fd >= 0)
    close (fd);
  return fd >= 0 || errno != ENOSYS;
}

static void
test_needs_openat2 (void)
{
  g_test_skip ("openat2() is not available here (under valgrind?): runtime unpacks need it");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  if (!have_openat2 ())
    {
      g_test_add_func ("/runtime-unpack/needs-openat2", test_needs_openat2);
      return g_test_run ();
    }

#define ADD(path, func) g_test_add (path, Scratch, NULL, scratch_set_up, func, scratch_tear_down)
  ADD ("/runtime-unpack/directory/round-trip", test_directory_round_trip);
  ADD ("/runtime-unpack/directory/device-skipped", test_directory_device_skipped);
  ADD ("/runtime-unpack/directory/key", test_directory_key);
  ADD ("/runtime-unpack/directory/limits", test_directory_limits);
  ADD ("/runtime-unpack/directory/progress-and-cancel", test_directory_progress_and_cancel);
  ADD ("/runtime-unpack/key/listing-order", test_key_ignores_listing_order);
#undef ADD
  runtime_unpack_oci_add_tests ();

  return g_test_run ();
}
