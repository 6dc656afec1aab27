/* test-workspace-fs-copy-open.c: copying template trees and opening workspaces
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A template tree copied into a workspace: contents and modes, links
 * copied as links, special files refused, cancellation, progress, copies
 * between workspaces and names that climb; and opening a workspace from a
 * directory fd or a path that is no workspace.
 */

#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>

#include "sandbox-error.h"
#include "sandbox-driver.h"
#include "sandbox-workspace.h"
#include "sandbox-test-backend.h"
#include "workspace-fs-fixture.h"

/* Copying a template tree */

typedef struct
{
  char *template_dir;
  int   template_fd;
  int   sessions_fd;
} CopyFixture;

static void
make_template (Fixture     *fixture,
               CopyFixture *copy)
{
  g_autofree char *sessions = g_build_filename (fixture->base, "sessions", NULL);
  g_autofree char *large = g_malloc (300 * 1024);
  g_autofree char *large_path = NULL;
  g_autofree char *script = NULL;
  g_autoptr(GError) error = NULL;

  copy->template_dir = g_build_filename (fixture->base, "template", NULL);
  g_assert_no_errno (g_mkdir_with_parents (copy->template_dir, 0755));
  g_assert_no_errno (g_mkdir_with_parents (sessions, 0700));
  {
    g_autofree char *sub = g_build_filename (copy->template_dir, "src/lib", NULL);
    g_autofree char *empty = g_build_filename (copy->template_dir, "empty", NULL);
    g_autofree char *readme = g_build_filename (copy->template_dir, "README", NULL);
    g_autofree char *nested = g_build_filename (copy->template_dir, "src/lib/util.c", NULL);
    g_autofree char *nothing = g_build_filename (copy->template_dir, "src/zero", NULL);

    g_assert_no_errno (g_mkdir_with_parents (sub, 0755));
    g_assert_no_errno (g_mkdir_with_parents (empty, 0755));
    set_host_file (readme, "read me");
    set_host_file (nested, "int x;");
    set_host_file (nothing, "");
  }
  for (gsize i = 0; i < 300 * 1024; i++)
    large[i] = (char) (i * 7);
  large_path = g_build_filename (copy->template_dir, "src/large.bin", NULL);
  g_file_set_contents (large_path, large, 300 * 1024, &error);
  g_assert_no_error (error);
  script = g_build_filename (copy->template_dir, "run.sh", NULL);
  set_host_file (script, "#!/bin/sh");
  g_assert_no_errno (chmod (script, 0755));

  copy->template_fd = open (copy->template_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  copy->sessions_fd = open (sessions, O_PATH | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (copy->template_fd, >=, 0);
  g_assert_cmpint (copy->sessions_fd, >=, 0);
}

static void
copy_fixture_clear (CopyFixture *copy)
{
  close (copy->template_fd);
  close (copy->sessions_fd);
  g_free (copy->template_dir);
}

static void
assert_same_file (const char *a,
                  const char *b)
{
  g_autofree char *left = NULL;
  g_autofree char *right = NULL;
  gsize left_size, right_size;

  g_assert_true (g_file_get_contents (a, &left, &left_size, NULL));
  g_assert_true (g_file_get_contents (b, &right, &right_size, NULL));
  g_assert_cmpmem (left, left_size, right, right_size);
}

static void
assert_mode (const char *path,
             mode_t      mode)
{
  struct stat st;

  g_assert_no_errno (lstat (path, &st));
  g_assert_cmpint (st.st_mode & 07777, ==, mode);
}

static void
test_copy_tree_copies_contents_and_modes (Fixture       *fixture,
                                          gconstpointer  data)
{
  CopyFixture copy = { 0, };
  g_autoptr(GError) error = NULL;
  const char *files[] = { "README", "src/large.bin", "src/zero", "src/lib/util.c" };
  const char *dirs[] = { "", "src", "src/lib", "empty" };

  make_template (fixture, &copy);
  g_assert_true (sandbox_workspace_copy_tree_at (copy.template_fd, copy.sessions_fd, "s1", NULL,
                                                 NULL, &error));
  g_assert_no_error (error);

  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *src = g_build_filename (copy.template_dir, files[i], NULL);
      g_autofree char *dst = g_build_filename (fixture->base, "sessions/s1", files[i], NULL);

      assert_same_file (src, dst);
      assert_mode (dst, 0600);
    }
  /* The execute bit is kept (make copy_file() always use 0600 to see
   * run.sh lose it). */
  {
    g_autofree char *src = g_build_filename (copy.template_dir, "run.sh", NULL);
    g_autofree char *dst = g_build_filename (fixture->base, "sessions/s1/run.sh", NULL);

    assert_same_file (src, dst);
    assert_mode (dst, 0700);
  }
  for (gsize i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree char *dst = g_build_filename (fixture->base, "sessions/s1", dirs[i], NULL);

      assert_mode (dst, 0700);
    }
  {
    g_autofree char *top = g_build_filename (fixture->base, "sessions/s1", NULL);
    g_autofree char *src = g_build_filename (fixture->base, "sessions/s1/src", NULL);

    g_assert_cmpuint (sandbox_test_count_entries (top), ==, 4);
    g_assert_cmpuint (sandbox_test_count_entries (src), ==, 3);
  }
  copy_fixture_clear (&copy);
}

/* Hostile: a template's symbolic links are copied as links with the same
 * target, never followed: a link to a host secret copies no byte of it.
 * Make copy_directory() send DT_LNK entries to copy_file() and the copy
 * fails (O_NOFOLLOW); open the source without O_NOFOLLOW there and it
 * copies the secret. */
static void
test_copy_tree_copies_symlinks (Fixture       *fixture,
                                gconstpointer  data)
{
  CopyFixture copy = { 0, };
  g_autoptr(GError) error = NULL;
  g_autofree char *secret = outside_path (fixture, "secret");
  g_autofree char *link = NULL;
  g_autofree char *relative = NULL;
  const struct { const char *path, *target; } links[] = {
    { "src/lib/leak", secret }, { "src/up", "../README" }, { "abs", "/workspace/README" },
  };

  make_template (fixture, &copy);
  link = g_build_filename (copy.template_dir, "src/lib/leak", NULL);
  g_assert_no_errno (symlink (secret, link));
  relative = g_build_filename (copy.template_dir, "src/up", NULL);
  g_assert_no_errno (symlink ("../README", relative));
  g_clear_pointer (&relative, g_free);
  relative = g_build_filename (copy.template_dir, "abs", NULL);
  g_assert_no_errno (symlink ("/workspace/README", relative));

  g_assert_true (sandbox_workspace_copy_tree_at (copy.template_fd, copy.sessions_fd, "s1", NULL,
                                                 NULL, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (links); i++)
    {
      g_autofree char *dst = g_build_filename (fixture->base, "sessions/s1", links[i].path, NULL);
      g_autofree char *target = g_file_read_link (dst, &error);
      struct stat st;

      g_assert_no_error (error);
      g_assert_no_errno (lstat (dst, &st));
      g_assert_true (S_ISLNK (st.st_mode));
      g_assert_cmpstr (target, ==, links[i].target);
    }
  assert_outside_untouched (fixture);
  copy_fixture_clear (&copy);
}

/* Special files in a template are refused, not skipped; the partial copy
 * is removed. */
static void
test_copy_tree_refuses_fifos (Fixture       *fixture,
                              gconstpointer  data)
{
  CopyFixture copy = { 0, };
  g_autoptr(GError) error = NULL;
  g_autofree char *fifo = NULL;
  g_autofree char *sessions = g_build_filename (fixture->base, "sessions", NULL);

  make_template (fixture, &copy);
  fifo = g_build_filename (copy.template_dir, "src/lib/pipe", NULL);
  g_assert_no_errno (mkfifo (fifo, 0600));

  g_assert_false (sandbox_workspace_copy_tree_at (copy.template_fd, copy.sessions_fd, "s1", NULL,
                                                  NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE);
  g_assert_nonnull (strstr (error->message, "src/lib/pipe"));
  assert_no_host_path (fixture, error);
  g_assert_cmpuint (sandbox_test_count_entries (sessions), ==, 0);
  copy_fixture_clear (&copy);
}

static void
test_copy_tree_refuses_existing_destination (Fixture       *fixture,
                                             gconstpointer  data)
{
  CopyFixture copy = { 0, };
  g_autoptr(GError) error = NULL;
  g_autofree char *existing = g_build_filename (fixture->base, "sessions/s1/keep", NULL);

  make_template (fixture, &copy);
  g_assert_no_errno (g_mkdir_with_parents (existing, 0700));
  g_assert_false (sandbox_workspace_copy_tree_at (copy.template_fd, copy.sessions_fd, "s1", NULL,
                                                  NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS);
  g_assert_true (g_file_test (existing, G_FILE_TEST_IS_DIR));
  copy_fixture_clear (&copy);
}

static void
test_copy_tree_cancelled (Fixture       *fixture,
                          gconstpointer  data)
{
  CopyFixture copy = { 0, };
  g_autoptr(GError) error = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *sessions = g_build_filename (fixture->base, "sessions", NULL);

  make_template (fixture, &copy);
  g_cancellable_cancel (cancellable);
  g_assert_false (sandbox_workspace_copy_tree_at (copy.template_fd, copy.sessions_fd, "s1", NULL,
                                                  cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (sandbox_test_count_entries (sessions), ==, 0);
  copy_fixture_clear (&copy);
}

typedef struct
{
  guint calls;
  gboolean went_back;
  guint64 files_done;
  guint64 bytes_done;
} CopyProgressLog;

static void
record_copy_progress (guint64  files_done,
                      guint64  bytes_done,
                      gpointer data)
{
  CopyProgressLog *log = data;

  log->went_back |= files_done < log->files_done || bytes_done < log->bytes_done;
  log->files_done = files_done;
  log->bytes_done = bytes_done;
  log->calls++;
}

/* A copy with progress reports files (regular files and links) and the
 * bytes of the regular files, up to the tree's totals, at most once per
 * SANDBOX_WORKSPACE_COPY_PROGRESS_INTERVAL, and once more at the end.
 * (The reports are counted against the copy's time rather than timed one
 * by one: a loaded machine may delay the callback after the copy read the
 * clock.) Call state->progress from count_copied() for every file and
 * there are far too many reports; drop the final call and the last
 * report falls short of the totals. */
static void
test_copy_tree_reports_progress (Fixture       *fixture,
                                 gconstpointer  data)
{
  CopyFixture copy = { 0, };
  g_autoptr(GError) error = NULL;
  CopyProgressLog log = { 0, };
  guint64 files = 0, bytes = 0;
  gint64 started, elapsed;
  g_autofree char *link = NULL;

  make_template (fixture, &copy);
  link = g_build_filename (copy.template_dir, "src/link", NULL);
  g_assert_no_errno (symlink ("lib/util.c", link));
  for (guint i = 0; i < 3000; i++)
    {
      g_autofree char *name = g_strdup_printf ("many/%u/f%u", i % 10, i);
      g_autofree char *path = g_build_filename (copy.template_dir, name, NULL);
      g_autofree char *parent = g_path_get_dirname (path);
      g_autofree char *text = g_strnfill (i % 100, 'y');

      g_assert_no_errno (g_mkdir_with_parents (parent, 0755));
      set_host_file (path, text);
    }
  /* README, run.sh, src/{large.bin,zero,link,lib/util.c}, and the many. */
  files = 6 + 3000;
  bytes = strlen ("read me") + strlen ("int x;") + strlen ("#!/bin/sh") + 300 * 1024;
  for (guint i = 0; i < 3000; i++)
    bytes += i % 100;

  started = g_get_monotonic_time ();
  g_assert_true (sandbox_workspace_copy_tree_with_progress_at (copy.template_fd, copy.sessions_fd,
                                                               "s1", NULL, record_copy_progress,
                                                               &log, NULL, &error));
  elapsed = g_get_monotonic_time () - started;
  g_assert_no_error (error);
  g_test_message ("%u progress reports in %" G_GINT64_FORMAT " µs", log.calls, elapsed);
  g_assert_cmpuint (log.calls, >, 0);
  g_assert_false (log.went_back);
  g_assert_cmpint (log.calls, <=, 1 + elapsed / SANDBOX_WORKSPACE_COPY_PROGRESS_INTERVAL);
  g_assert_cmpuint (log.files_done, ==, files);
  g_assert_cmpuint (log.bytes_done, ==, bytes);
  copy_fixture_clear (&copy);
}

/* The same copy between two SandboxWorkspace objects, as an out-of-tree
 * store makes a session's workspace from its template. */
static void
test_copy_tree_between_workspaces (Fixture       *fixture,
                                   gconstpointer  data)
{
  CopyFixture copy = { 0, };
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxWorkspace) template_ = NULL;
  g_autoptr(SandboxWorkspace) sessions = NULL;
  g_autofree char *sessions_dir = g_build_filename (fixture->base, "sessions", NULL);
  const char *files[] = { "README", "run.sh", "src/large.bin", "src/zero", "src/lib/util.c" };

  make_template (fixture, &copy);
  template_ = sandbox_workspace_open (copy.template_dir, SANDBOX_WORKSPACE_FLAGS_NONE, &error);
  g_assert_no_error (error);
  sessions = sandbox_workspace_open (sessions_dir, SANDBOX_WORKSPACE_FLAGS_NONE, &error);
  g_assert_no_error (error);

  g_assert_true (sandbox_workspace_copy_tree (template_, sessions, "s1", NULL, NULL, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *src = g_build_filename (copy.template_dir, files[i], NULL);
      g_autofree char *dst = g_build_filename (sessions_dir, "s1", files[i], NULL);

      assert_same_file (src, dst);
      assert_mode (dst, g_str_equal (files[i], "run.sh") ? 0700 : 0600);
    }
  copy_fixture_clear (&copy);
}

/* The copy's name is one entry of the destination: a name that climbs
 * would make the copy outside it. Remove the
 * sandbox_workspace_check_entry_name() call of
 * sandbox_workspace_copy_tree_at() to see "outside/escaped" appear. */
static void
test_copy_tree_refuses_climbing_name (Fixture       *fixture,
                                      gconstpointer  data)
{
  CopyFixture copy = { 0, };
  g_autoptr(GError) error = NULL;
  g_autofree char *escaped = outside_path (fixture, "escaped");
  const char *names[] = { "../outside/escaped", "..", "s1/sub", "" };

  make_template (fixture, &copy);
  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_assert_false (sandbox_workspace_copy_tree_at (copy.template_fd, copy.sessions_fd,
                                                      names[i], NULL, NULL, &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
      g_clear_error (&error);
    }
  g_assert_false (g_file_test (escaped, G_FILE_TEST_EXISTS));
  assert_outside_untouched (fixture);
  copy_fixture_clear (&copy);
}

/* open_at() resolves the root's path from a directory fd; the flags stay
 * with the workspace, and a reference keeps the root's fd open. */
static void
test_open_at_keeps_flags_and_fd (Fixture       *fixture,
                                 gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) contents = g_bytes_new_static ("kept", 4);
  g_autoptr(GBytes) read_back = NULL;
  SandboxWorkspace *workspace;
  SandboxWorkspace *extra;
  int base_fd = open (fixture->base, O_PATH | O_DIRECTORY | O_CLOEXEC);

  g_assert_cmpint (base_fd, >=, 0);
  workspace = sandbox_workspace_open_at (base_fd, "workspace", SANDBOX_WORKSPACE_FLAGS_DURABLE,
                                         &error);
  close (base_fd);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_workspace_get_flags (workspace), ==, SANDBOX_WORKSPACE_FLAGS_DURABLE);
  g_assert_cmpint (sandbox_workspace_get_fd (workspace), >=, 0);

  extra = sandbox_workspace_ref (workspace);
  g_assert_true (extra == workspace);
  sandbox_workspace_unref (workspace);
  g_assert_true (sandbox_workspace_write (extra, "kept", contents, 16, &error));
  g_assert_no_error (error);
  read_back = sandbox_workspace_read (fixture->ws, "kept", 16, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (read_back, contents));
  sandbox_workspace_unref (extra);

  /* A file is no workspace; the message names no host path. */
  {
    g_autofree char *secret = outside_path (fixture, "secret");

    g_assert_null (sandbox_workspace_open (secret, SANDBOX_WORKSPACE_FLAGS_NONE, &error));
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
    g_assert_null (strstr (error->message, fixture->base));
  }
}

static void
test_open_missing_workspace (void)
{
  g_autoptr(GError) error = NULL;

  g_assert_null (sandbox_workspace_open ("/nonexistent/workspace-fs", SANDBOX_WORKSPACE_FLAGS_NONE,
                                         &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_null (strstr (error->message, "/nonexistent"));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/workspace-fs/open/missing", test_open_missing_workspace);
  ADD ("copy-tree/contents-and-modes", test_copy_tree_copies_contents_and_modes);
  ADD ("copy-tree/symlink", test_copy_tree_copies_symlinks);
  ADD ("copy-tree/fifo", test_copy_tree_refuses_fifos);
  ADD ("copy-tree/existing-destination", test_copy_tree_refuses_existing_destination);
  ADD ("copy-tree/cancelled", test_copy_tree_cancelled);
  ADD ("copy-tree/progress", test_copy_tree_reports_progress);
  ADD ("copy-tree/between-workspaces", test_copy_tree_between_workspaces);
  ADD ("copy-tree/climbing-name", test_copy_tree_refuses_climbing_name);
  ADD ("open/at-flags-and-references", test_open_at_keeps_flags_and_fd);

  return g_test_run ();
}
