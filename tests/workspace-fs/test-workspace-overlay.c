/* test-workspace-overlay.c: the host's merged view of an overlay workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every test builds, under a fresh temporary directory, "lower" (a
 * template's data), "upper" (what the guest controls) and "outside" (host
 * files nothing may reach), by hand, as overlayfs with `userxattr` would
 * have them: whiteouts are 0/0 character devices (which an unprivileged
 * process may make since Linux 5.8), opaque directories carry
 * `user.overlay.opaque` = "y". Then it checks that reads, listings, writes
 * and removals see and make what the guest's overlay would, and that
 * nothing the guest plants in the upper layer leads outside.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <gio/gio.h>

#include "sandbox-driver.h"
#include "sandbox-error.h"
#include "sandbox-workspace.h"

#define SECRET "host secret"

typedef struct
{
  char *base;
  char *lower;
  char *upper;
  char *outside;
  SandboxWorkspace *ws;
} Fixture;

static char *
at (const char *root,
    const char *relative)
{
  return g_build_filename (root, relative, NULL);
}

static void
put_file (const char *root,
          const char *relative,
          const char *contents,
          mode_t      mode)
{
  g_autofree char *path = at (root, relative);
  g_autofree char *parent = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_assert_no_errno (g_mkdir_with_parents (parent, 0755));
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
  g_assert_no_errno (chmod (path, mode));
}

static void
put_dir (const char *root,
         const char *relative)
{
  g_autofree char *path = at (root, relative);

  g_assert_no_errno (g_mkdir_with_parents (path, 0755));
}

static void
put_whiteout (const char *root,
              const char *relative)
{
  g_autofree char *path = at (root, relative);

  g_assert_no_errno (mknod (path, S_IFCHR | 0, makedev (0, 0)));
}

static void
put_opaque (const char *root,
            const char *relative)
{
  g_autofree char *path = at (root, relative);

  g_assert_no_errno (g_mkdir_with_parents (path, 0755));
  g_assert_no_errno (setxattr (path, "user.overlay.opaque", "y", 1, 0));
}

static void
put_symlink (const char *root,
             const char *target,
             const char *relative)
{
  g_autofree char *path = at (root, relative);

  g_assert_no_errno (symlink (target, path));
}

static gboolean
is_whiteout_at (const char *root,
                const char *relative)
{
  g_autofree char *path = at (root, relative);
  struct stat st;

  return lstat (path, &st) == 0 && S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0);
}

static gboolean
exists_at (const char *root,
           const char *relative)
{
  g_autofree char *path = at (root, relative);
  struct stat st;

  return lstat (path, &st) == 0;
}

static char *
contents_at (const char *root,
             const char *relative)
{
  g_autofree char *path = at (root, relative);
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;
  return contents;
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->base = g_dir_make_tmp ("workspace-overlay-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->lower = at (fixture->base, "lower");
  fixture->upper = at (fixture->base, "upper");
  fixture->outside = at (fixture->base, "outside");
  put_dir (fixture->lower, ".");
  put_dir (fixture->upper, ".");
  put_file (fixture->outside, "secret", SECRET, 0600);
  put_file (fixture->outside, "dir/f", SECRET, 0600);

  /* The template. */
  put_file (fixture->lower, "README", "lower readme", 0644);
  put_file (fixture->lower, "configure", "#!/bin/sh\n", 0755);
  put_file (fixture->lower, "src/main.c", "int main;", 0644);
  put_file (fixture->lower, "src/util.c", "int util;", 0644);
  put_file (fixture->lower, "node_modules/x/bin/x", "#!/bin/sh\n", 0755);
  put_dir (fixture->lower, "node_modules/.bin");
  put_symlink (fixture->lower, "../x/bin/x", "node_modules/.bin/x");
  put_dir (fixture->lower, "empty");

  fixture->ws = sandbox_workspace_open_overlay (fixture->upper, fixture->lower,
                                                SANDBOX_WORKSPACE_FLAGS_NONE, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_workspace_is_overlay (fixture->ws));
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *parent = g_path_get_dirname (fixture->base);
  g_autofree char *name = g_path_get_basename (fixture->base);
  int parent_fd;

  g_clear_pointer (&fixture->ws, sandbox_workspace_unref);
  parent_fd = open (parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (parent_fd, >=, 0);
  sandbox_workspace_remove_tree_at (parent_fd, name, &error);
  g_assert_no_error (error);
  close (parent_fd);
  g_free (fixture->base);
  g_free (fixture->lower);
  g_free (fixture->upper);
  g_free (fixture->outside);
}

static char *
ws_read (Fixture     *fixture,
         const char  *relative,
         GError     **error)
{
  g_autoptr(GBytes) bytes = sandbox_workspace_read (fixture->ws, relative,
                                                    SANDBOX_MAX_FILE_BYTES, error);

  if (bytes == NULL)
    return NULL;
  return g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
}

static void
assert_reads (Fixture    *fixture,
              const char *relative,
              const char *expected)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = ws_read (fixture, relative, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, expected);
}

static void
assert_missing (Fixture    *fixture,
                const char *relative)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = ws_read (fixture, relative, &error);

  g_assert_null (text);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
}

static void
ws_write (Fixture    *fixture,
          const char *relative,
          const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new (text, strlen (text));

  g_assert_true (sandbox_workspace_write (fixture->ws, relative, bytes, SANDBOX_MAX_FILE_BYTES,
                                          &error));
  g_assert_no_error (error);
}

static void
ws_remove (Fixture    *fixture,
           const char *relative)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_workspace_remove (fixture->ws, relative, &error));
  g_assert_no_error (error);
}

static int
compare_words (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The listing of @relative as "name:type" words, sorted, space-separated. */
static char *
ws_list (Fixture    *fixture,
         const char *relative)
{
  g_autoptr(GError) error = NULL;
  gboolean truncated = TRUE;
  g_autoptr(GVariant) list = sandbox_workspace_list (fixture->ws, relative, 1000, &truncated,
                                                     &error);
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  GVariantIter iter;
  const char *name, *type;
  guint64 size;

  g_assert_no_error (error);
  g_assert_false (truncated);
  g_variant_iter_init (&iter, list);
  while (g_variant_iter_next (&iter, "(&s&st)", &name, &type, &size))
    g_ptr_array_add (words, g_strdup_printf ("%s:%s", name, type));
  g_ptr_array_sort (words, compare_words);
  g_ptr_array_add (words, NULL);
  return g_strjoinv (" ", (char **) words->pdata);
}

/* The lower layer is exactly what set-up made, and so is the outside. */
static void
assert_untouched (Fixture *fixture)
{
  g_autofree char *readme = contents_at (fixture->lower, "README");
  g_autofree char *main_c = contents_at (fixture->lower, "src/main.c");
  g_autofree char *secret = contents_at (fixture->outside, "secret");
  g_autofree char *dir_f = contents_at (fixture->outside, "dir/f");
  g_autofree char *configure = at (fixture->lower, "configure");
  struct stat st;

  g_assert_cmpstr (readme, ==, "lower readme");
  g_assert_cmpstr (main_c, ==, "int main;");
  g_assert_true (exists_at (fixture->lower, "src/util.c"));
  g_assert_true (exists_at (fixture->lower, "empty"));
  g_assert_cmpstr (secret, ==, SECRET);
  g_assert_cmpstr (dir_f, ==, SECRET);
  g_assert_no_errno (lstat (configure, &st));
  g_assert_cmpint (st.st_mode & 07777, ==, 0755);
}

/* Reading and listing */

static void
test_read_falls_through (Fixture       *fixture,
                         gconstpointer  data)
{
  put_file (fixture->upper, "README", "upper readme", 0644);
  put_file (fixture->upper, "src/new.c", "int new;", 0644);

  assert_reads (fixture, "README", "upper readme");
  assert_reads (fixture, "src/main.c", "int main;");
  assert_reads (fixture, "src/new.c", "int new;");
  /* A relative link of the template, walked in the merged view. */
  assert_reads (fixture, "node_modules/.bin/x", "#!/bin/sh\n");
  assert_missing (fixture, "nothing");
  assert_untouched (fixture);
}

static void
test_list_merges (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *root = NULL;
  g_autofree char *src = NULL;

  put_file (fixture->upper, "README", "upper readme", 0644);
  put_file (fixture->upper, "src/new.c", "int new;", 0644);
  put_whiteout (fixture->upper, "src/util.c");

  root = ws_list (fixture, ".");
  g_assert_cmpstr (root, ==,
                   "README:file configure:file empty:directory node_modules:directory "
                   "src:directory");
  src = ws_list (fixture, "src");
  g_assert_cmpstr (src, ==, "main.c:file new.c:file");
}

static void
test_whiteout_hides (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *root = NULL;

  put_whiteout (fixture->upper, "README");
  put_whiteout (fixture->upper, "src");

  assert_missing (fixture, "README");
  assert_missing (fixture, "src/main.c");
  g_assert_null (sandbox_workspace_list (fixture->ws, "src", 10, &(gboolean) { FALSE }, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  root = ws_list (fixture, ".");
  g_assert_cmpstr (root, ==, "configure:file empty:directory node_modules:directory");
}

static void
test_opaque_directory_hides_lower (Fixture       *fixture,
                                   gconstpointer  data)
{
  g_autofree char *src = NULL;

  put_opaque (fixture->upper, "src");
  put_file (fixture->upper, "src/only.c", "only", 0644);

  assert_missing (fixture, "src/main.c");
  assert_reads (fixture, "src/only.c", "only");
  src = ws_list (fixture, "src");
  g_assert_cmpstr (src, ==, "only.c:file");
}

static void
test_upper_file_hides_lower_directory (Fixture       *fixture,
                                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  put_file (fixture->upper, "src", "a file now", 0644);

  assert_reads (fixture, "src", "a file now");
  text = ws_read (fixture, "src/main.c", &error);
  g_assert_null (text);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
}

/* Writing */

static void
test_write_copies_up (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autofree char *upper_main = NULL;
  g_autofree char *src = NULL;
  g_autofree char *configure = at (fixture->upper, "configure");
  struct stat st;

  ws_write (fixture, "src/main.c", "int changed;");
  ws_write (fixture, "configure", "#!/bin/sh\nexit 0\n");

  assert_reads (fixture, "src/main.c", "int changed;");
  upper_main = contents_at (fixture->upper, "src/main.c");
  g_assert_cmpstr (upper_main, ==, "int changed;");
  /* Only what was written is in the upper layer; the rest still shows. */
  g_assert_false (exists_at (fixture->upper, "src/util.c"));
  src = ws_list (fixture, "src");
  g_assert_cmpstr (src, ==, "main.c:file util.c:file");
  /* A script stays executable, as replacing it in a plain workspace. */
  g_assert_no_errno (lstat (configure, &st));
  g_assert_cmpint (st.st_mode & 0777, ==, 0755);
  assert_untouched (fixture);
}

static void
test_write_through_lower_symlink (Fixture       *fixture,
                                  gconstpointer  data)
{
  ws_write (fixture, "node_modules/.bin/x", "replaced link");

  /* The link itself is replaced, as in a plain workspace, in the upper
   * layer; its target stays. */
  assert_reads (fixture, "node_modules/.bin/x", "replaced link");
  assert_reads (fixture, "node_modules/x/bin/x", "#!/bin/sh\n");
  g_assert_true (exists_at (fixture->upper, "node_modules/.bin/x"));
  assert_untouched (fixture);
}

static void
test_write_over_whiteout_directory_is_opaque (Fixture       *fixture,
                                              gconstpointer  data)
{
  g_autofree char *path = at (fixture->upper, "src");
  g_autofree char *src = NULL;
  char value[4] = { 0, };

  ws_remove (fixture, "src");
  g_assert_true (is_whiteout_at (fixture->upper, "src"));
  ws_write (fixture, "src/fresh.c", "fresh");

  /* The lower src/ must stay hidden under the new directory. */
  src = ws_list (fixture, "src");
  g_assert_cmpstr (src, ==, "fresh.c:file");
  assert_missing (fixture, "src/main.c");
  g_assert_cmpint (getxattr (path, "user.overlay.opaque", value, sizeof value), ==, 1);
  g_assert_cmpstr (value, ==, "y");
  assert_untouched (fixture);
}

static void
test_write_onto_lower_directory (Fixture       *fixture,
                                 gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);

  g_assert_false (sandbox_workspace_write (fixture->ws, "empty", bytes, SANDBOX_MAX_FILE_BYTES,
                                           &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  assert_untouched (fixture);
}

/* Removing */

static void
test_remove_lower_leaves_whiteouts (Fixture       *fixture,
                                    gconstpointer  data)
{
  g_autofree char *root = NULL;

  ws_remove (fixture, "README");
  ws_remove (fixture, "node_modules");
  ws_remove (fixture, "src/util.c");

  g_assert_true (is_whiteout_at (fixture->upper, "README"));
  g_assert_true (is_whiteout_at (fixture->upper, "node_modules"));
  g_assert_true (is_whiteout_at (fixture->upper, "src/util.c"));
  assert_missing (fixture, "README");
  assert_missing (fixture, "node_modules/x/bin/x");
  root = ws_list (fixture, ".");
  g_assert_cmpstr (root, ==, "configure:file empty:directory src:directory");
  /* Removing what is gone is success, and makes nothing. */
  ws_remove (fixture, "README");
  ws_remove (fixture, "src/util.c/deeper");
  assert_untouched (fixture);
}

static void
test_remove_merged_directory (Fixture       *fixture,
                              gconstpointer  data)
{
  put_file (fixture->upper, "src/new.c", "int new;", 0644);
  put_file (fixture->upper, "src/deep/er/f", "f", 0644);

  ws_remove (fixture, "src");

  g_assert_true (is_whiteout_at (fixture->upper, "src"));
  assert_missing (fixture, "src/main.c");
  assert_missing (fixture, "src/new.c");
  assert_untouched (fixture);
}

static void
test_remove_upper_only (Fixture       *fixture,
                        gconstpointer  data)
{
  put_file (fixture->upper, "mine/a", "a", 0644);

  ws_remove (fixture, "mine");

  /* Nothing below: no whiteout either. */
  g_assert_false (exists_at (fixture->upper, "mine"));
}

/* What the guest plants in the upper layer */

static void
assert_escape (Fixture      *fixture,
               const GError *error)
{
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_null (strstr (error->message, fixture->base));
}

/* Remove the EXDEV of follow_link()'s absolute-target check, or the stack
 * check of "..", in sandbox-workspace-overlay.c: these then read the
 * secret. */
static void
test_planted_symlinks_stay_inside (Fixture       *fixture,
                                   gconstpointer  data)
{
  g_autofree char *secret = at (fixture->outside, "secret");
  g_autofree char *dir = at (fixture->outside, "dir");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("pwned", 5);
  const char *paths[] = { "abs", "up", "src/up2", "absdir/f", "updir/f", "src/loop" };

  put_symlink (fixture->upper, secret, "abs");
  put_symlink (fixture->upper, "../outside/secret", "up");
  put_dir (fixture->upper, "src");
  put_symlink (fixture->upper, "../../outside/secret", "src/up2");
  put_symlink (fixture->upper, dir, "absdir");
  put_symlink (fixture->upper, "../outside/dir", "updir");
  put_symlink (fixture->upper, "loop", "src/loop");

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *text = ws_read (fixture, paths[i], &error);

      g_assert_null (text);
      assert_escape (fixture, error);
    }
  for (guint i = 3; i < 5; i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (sandbox_workspace_write (fixture->ws, paths[i], bytes,
                                               SANDBOX_MAX_FILE_BYTES, &error));
      assert_escape (fixture, error);
      g_clear_error (&error);
      g_assert_false (sandbox_workspace_remove (fixture->ws, paths[i], &error));
      assert_escape (fixture, error);
    }
  /* A link inside is followed in the merged view, into the lower layer. */
  put_symlink (fixture->upper, "src/../README", "inside");
  assert_reads (fixture, "inside", "lower readme");
  /* Removing or writing a link acts on the link, never its target. */
  ws_remove (fixture, "abs");
  ws_write (fixture, "up", "replaced");
  g_assert_false (exists_at (fixture->upper, "abs"));
  assert_reads (fixture, "up", "replaced");
  assert_untouched (fixture);
}

static void
test_planted_special_files (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autofree char *fifo = at (fixture->upper, "README");
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  gint64 start = g_get_monotonic_time ();

  /* A FIFO where the template has a file: what the guest sees, and read
   * promptly as not a regular file, never the lower file. */
  g_assert_no_errno (mkfifo (fifo, 0644));
  text = ws_read (fixture, "README", &error);
  g_assert_null (text);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE);
  g_assert_cmpint (g_get_monotonic_time () - start, <, 5 * G_USEC_PER_SEC);

  /* A planted opaque xattr on a directory only hides what the guest could
   * remove anyway. */
  put_opaque (fixture->upper, "node_modules");
  assert_missing (fixture, "node_modules/.bin/x");

  /* Replacing a FIFO writes a file in its place, never into it. */
  ws_write (fixture, "README", "file again");
  assert_reads (fixture, "README", "file again");
  assert_untouched (fixture);
}

/* The guest swaps an upper directory for a link out while the host works
 * in it: nothing outside is ever read, written or removed. */
typedef struct
{
  Fixture *fixture;
  gint stop;
  guint swaps;
} Swapper;

static gpointer
swapper_thread (gpointer data)
{
  Swapper *swapper = data;
  g_autofree char *dir = at (swapper->fixture->upper, "src");
  g_autofree char *aside = at (swapper->fixture->upper, "src.aside");
  g_autofree char *link = at (swapper->fixture->upper, "src.link");
  g_autofree char *outside = at (swapper->fixture->outside, "dir");

  while (!g_atomic_int_get (&swapper->stop))
    {
      unlink (link);
      if (symlink (outside, link) < 0)
        continue;
      if (renameat2 (AT_FDCWD, link, AT_FDCWD, dir, RENAME_EXCHANGE) == 0)
        {
          swapper->swaps++;
          renameat2 (AT_FDCWD, link, AT_FDCWD, dir, RENAME_EXCHANGE);
        }
      rename (aside, dir);
    }
  return NULL;
}

static void
test_race_upper_swaps (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static ("pwned", 5);
  Swapper swapper = { fixture, 0, 0 };
  g_autoptr(GThread) thread = NULL;

  put_file (fixture->upper, "src/new.c", "int new;", 0644);
  thread = g_thread_new ("swapper", swapper_thread, &swapper);
  for (guint i = 0; i < 2000; i++)
    {
      g_autofree char *text = NULL;

      switch (i % 4)
        {
        case 0:
          text = ws_read (fixture, (i % 8) == 0 ? "src/new.c" : "src/f", NULL);
          g_assert_true (text == NULL || g_str_equal (text, "int new;") ||
                         g_str_equal (text, "pwned"));
          break;
        case 1:
          sandbox_workspace_write (fixture->ws, "src/f", bytes, SANDBOX_MAX_FILE_BYTES, NULL);
          break;
        case 2:
          sandbox_workspace_write (fixture->ws, "src/sub/g", bytes, SANDBOX_MAX_FILE_BYTES, NULL);
          break;
        default:
          sandbox_workspace_remove (fixture->ws, (i % 8) == 3 ? "src/f" : "src/main.c", NULL);
          break;
        }
    }
  g_atomic_int_set (&swapper.stop, 1);
  g_thread_join (g_steal_pointer (&thread));
  g_test_message ("%u swaps", swapper.swaps);
  g_assert_cmpuint (swapper.swaps, >, 0);
  {
    g_autofree char *dir_f = contents_at (fixture->outside, "dir/f");
    g_autofree char *outside_dir = at (fixture->outside, "dir");
    g_autoptr(GDir) listing = g_dir_open (outside_dir, 0, NULL);

    g_assert_cmpstr (dir_f, ==, SECRET);
    g_assert_cmpstr (g_dir_read_name (listing), ==, "f");
    g_assert_null (g_dir_read_name (listing));
  }
  g_assert_true (exists_at (fixture->lower, "src/main.c"));
}

static void
test_copy_tree_refused (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (sandbox_workspace_copy_tree (fixture->ws, fixture->ws, "copy", NULL, NULL,
                                               &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
}

#define ADD(path, func) \
  g_test_add ("/sandbox/workspace-overlay/" path, Fixture, NULL, fixture_set_up, func, \
              fixture_tear_down)

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  ADD ("read/falls-through", test_read_falls_through);
  ADD ("list/merges", test_list_merges);
  ADD ("read/whiteout", test_whiteout_hides);
  ADD ("read/opaque", test_opaque_directory_hides_lower);
  ADD ("read/upper-file-over-lower-directory", test_upper_file_hides_lower_directory);
  ADD ("write/copies-up", test_write_copies_up);
  ADD ("write/lower-symlink", test_write_through_lower_symlink);
  ADD ("write/over-whiteout-is-opaque", test_write_over_whiteout_directory_is_opaque);
  ADD ("write/onto-lower-directory", test_write_onto_lower_directory);
  ADD ("remove/whiteouts", test_remove_lower_leaves_whiteouts);
  ADD ("remove/merged-directory", test_remove_merged_directory);
  ADD ("remove/upper-only", test_remove_upper_only);
  ADD ("hostile/symlinks", test_planted_symlinks_stay_inside);
  ADD ("hostile/special-files", test_planted_special_files);
  ADD ("hostile/race-swaps", test_race_upper_swaps);
  ADD ("copy-tree/refused", test_copy_tree_refused);

  return g_test_run ();
}
