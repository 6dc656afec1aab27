/* test-workspace-fs.c: the contained workspace file I/O against a hostile guest
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every test builds a real directory pair under a fresh temporary directory:
 * "workspace" (what the guest controls) and "outside" (host files the guest
 * must never reach through the host), then plays the guest with symbolic
 * links, hard links, FIFOs, sockets, sparse files and races.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <gio/gio.h>

#include "sandbox-error.h"
#include "sandbox-driver.h"
#include "sandbox-workspace.h"

#define SECRET "host secret"

/* The data of tests that run on the fallback for filesystems without
 * O_TMPFILE. */
static const char named_temporaries[] = "named";
#define NAMED_TEMPORARIES ((gconstpointer) named_temporaries)
/* The data of tests that run on an overlay workspace (its workspace the
 * upper layer, over an empty lower one): every guarantee holds there too. */
static const char overlay_layers[] = "overlay";
#define OVERLAY ((gconstpointer) overlay_layers)
#define SENTINEL "sentinel"

typedef struct
{
  char *base;        /* the temporary directory holding both trees */
  char *workspace;   /* base/workspace */
  char *outside;     /* base/outside: secret, dir/f */
  SandboxWorkspace *ws;
} Fixture;

static char *
ws_path (Fixture    *fixture,
         const char *relative)
{
  return g_build_filename (fixture->workspace, relative, NULL);
}

static char *
outside_path (Fixture    *fixture,
              const char *relative)
{
  return g_build_filename (fixture->outside, relative, NULL);
}

static void
set_host_file (const char *path,
               const char *contents)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

static char *
get_host_file (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  return contents;
}

static void
ws_mkdir (Fixture    *fixture,
          const char *relative)
{
  g_autofree char *path = ws_path (fixture, relative);

  g_assert_no_errno (g_mkdir_with_parents (path, 0700));
}

static void
ws_symlink (Fixture    *fixture,
            const char *target,
            const char *relative)
{
  g_autofree char *path = ws_path (fixture, relative);

  g_assert_no_errno (symlink (target, path));
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;

  fixture->base = g_dir_make_tmp ("workspace-fs-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->workspace = g_build_filename (fixture->base, "workspace", NULL);
  fixture->outside = g_build_filename (fixture->base, "outside", NULL);
  dir = g_build_filename (fixture->outside, "dir", NULL);
  g_assert_no_errno (g_mkdir_with_parents (fixture->workspace, 0700));
  g_assert_no_errno (g_mkdir_with_parents (dir, 0700));
  {
    g_autofree char *secret = outside_path (fixture, "secret");
    g_autofree char *sentinel = outside_path (fixture, "dir/f");

    set_host_file (secret, SECRET);
    set_host_file (sentinel, SENTINEL);
  }

  /* Tests registered with NAMED_TEMPORARIES write as on a filesystem
   * without O_TMPFILE. */
  if (data == OVERLAY)
    {
      g_autofree char *lower = g_build_filename (fixture->base, "lower", NULL);

      g_assert_no_errno (g_mkdir_with_parents (lower, 0755));
      fixture->ws = sandbox_workspace_open_overlay (fixture->workspace, lower,
                                                    SANDBOX_WORKSPACE_FLAGS_NONE, &error);
    }
  else
    fixture->ws = sandbox_workspace_open (fixture->workspace,
                                          data == NAMED_TEMPORARIES
                                          ? SANDBOX_WORKSPACE_FLAGS_NAMED_TEMPORARIES
                                          : SANDBOX_WORKSPACE_FLAGS_NONE,
                                          &error);
  g_assert_no_error (error);
  g_assert_nonnull (fixture->ws);
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
  g_free (fixture->workspace);
  g_free (fixture->outside);
}

/* The outside tree is exactly what set-up made: nothing read through,
 * written through, created or removed. */
static void
assert_outside_untouched (Fixture *fixture)
{
  g_autofree char *secret_path = outside_path (fixture, "secret");
  g_autofree char *sentinel_path = outside_path (fixture, "dir/f");
  g_autofree char *dir_path = outside_path (fixture, "dir");
  g_autofree char *secret = get_host_file (secret_path);
  g_autofree char *sentinel = get_host_file (sentinel_path);
  g_autoptr(GDir) outside = g_dir_open (fixture->outside, 0, NULL);
  g_autoptr(GDir) dir = g_dir_open (dir_path, 0, NULL);
  guint count = 0;

  g_assert_cmpstr (secret, ==, SECRET);
  g_assert_cmpstr (sentinel, ==, SENTINEL);

  g_assert_nonnull (outside);
  while (g_dir_read_name (outside) != NULL)
    count++;
  g_assert_cmpuint (count, ==, 2);

  g_assert_nonnull (dir);
  count = 0;
  while (g_dir_read_name (dir) != NULL)
    count++;
  g_assert_cmpuint (count, ==, 1);
}

/* Messages may name workspace-relative paths, never host paths. */
static void
assert_no_host_path (Fixture      *fixture,
                     const GError *error)
{
  g_assert_nonnull (error);
  g_assert_null (strstr (error->message, fixture->base));
}

static void
assert_escape_error (Fixture      *fixture,
                     const GError *error)
{
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_cmpstr (error->message, ==, "Path escapes the workspace");
  assert_no_host_path (fixture, error);
}

static void
ws_write (Fixture    *fixture,
          const char *relative,
          const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new (text, strlen (text));

  sandbox_workspace_write (fixture->ws, relative, bytes, SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_no_error (error);
}

static void
assert_ws_contents (Fixture    *fixture,
                    const char *relative,
                    const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = sandbox_workspace_read (fixture->ws, relative,
                                                    SANDBOX_MAX_FILE_BYTES, &error);

  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), text, strlen (text));
}

static guint
count_entries (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint count = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    count++;
  return count;
}

/* Basics */

static void
test_write_then_read (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autofree char *path = ws_path (fixture, "file.txt");
  g_autofree char *host = NULL;
  struct stat st;

  ws_write (fixture, "file.txt", "hello");
  assert_ws_contents (fixture, "file.txt", "hello");

  host = get_host_file (path);
  g_assert_cmpstr (host, ==, "hello");
  g_assert_no_errno (stat (path, &st));
  g_assert_cmpint (st.st_mode & 07777, ==, 0600);

  ws_write (fixture, "file.txt", "");
  assert_ws_contents (fixture, "file.txt", "");
  g_assert_cmpuint (count_entries (fixture->workspace), ==, 1);
}

static void
test_write_creates_parents (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autofree char *a = ws_path (fixture, "a");
  g_autofree char *b = ws_path (fixture, "a/b");
  struct stat st;

  ws_write (fixture, "a/b/c.txt", "deep");
  assert_ws_contents (fixture, "a/b/c.txt", "deep");

  g_assert_no_errno (stat (a, &st));
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpint (st.st_mode & 07777, ==, 0700);
  g_assert_no_errno (stat (b, &st));
  g_assert_cmpint (st.st_mode & 07777, ==, 0700);

  /* An existing prefix is reused. */
  ws_write (fixture, "a/d/e.txt", "more");
  assert_ws_contents (fixture, "a/d/e.txt", "more");
  g_assert_cmpuint (count_entries (a), ==, 2);
}

static void
test_write_parent_not_directory (Fixture       *fixture,
                                 gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);

  ws_write (fixture, "file", "plain");
  sandbox_workspace_write (fixture->ws, "file/child", bytes, SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
  g_assert_nonnull (strstr (error->message, "file/child"));
  assert_no_host_path (fixture, error);
  g_clear_error (&error);

  sandbox_workspace_write (fixture->ws, "file/a/b", bytes, SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
  assert_ws_contents (fixture, "file", "plain");
}

static void
test_write_onto_directory (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autofree char *dir = ws_path (fixture, "dir");

  ws_mkdir (fixture, "dir");
  sandbox_workspace_write (fixture->ws, "dir", bytes, SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  g_clear_error (&error);

  sandbox_workspace_write (fixture->ws, ".", bytes, SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);

  /* No temporary file was left behind. */
  g_assert_cmpuint (count_entries (fixture->workspace), ==, 1);
  g_assert_cmpuint (count_entries (dir), ==, 0);
}

static void
test_write_keeps_permission_bits (Fixture       *fixture,
                                  gconstpointer  data)
{
  g_autofree char *path = ws_path (fixture, "script.sh");
  struct stat st;

  ws_write (fixture, "script.sh", "#!/bin/sh\n");
  g_assert_no_errno (chmod (path, 04755));
  ws_write (fixture, "script.sh", "#!/bin/sh\necho hi\n");

  g_assert_no_errno (stat (path, &st));
  /* rwx bits survive an edit; set-id bits never come from the guest. */
  g_assert_cmpint (st.st_mode & 07777, ==, 0755);
}

static void
test_read_missing (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;

  bytes = sandbox_workspace_read (fixture->ws, "nope/missing.txt", SANDBOX_MAX_FILE_BYTES,
                                  &error);
  g_assert_null (bytes);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, "nope/missing.txt"));
  assert_no_host_path (fixture, error);
}

static void
test_read_directory (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;

  ws_mkdir (fixture, "dir");
  bytes = sandbox_workspace_read (fixture->ws, "dir", SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_null (bytes);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  g_clear_error (&error);

  bytes = sandbox_workspace_read (fixture->ws, ".", SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_null (bytes);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
}

static void
test_non_canonical_paths (Fixture       *fixture,
                          gconstpointer  data)
{
  const char *bad[] = { "", "/etc/passwd", "../outside/secret", "a/../../outside/secret",
                        "a//b", "a/./b", "./a", "a/", "..", "a/.." };
  g_autoptr(GBytes) contents = g_bytes_new_static ("x", 1);

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) read_error = NULL;
      g_autoptr(GError) write_error = NULL;
      g_autoptr(GError) remove_error = NULL;
      g_autoptr(GBytes) bytes = NULL;

      bytes = sandbox_workspace_read (fixture->ws, bad[i], SANDBOX_MAX_FILE_BYTES,
                                      &read_error);
      g_assert_null (bytes);
      g_assert_error (read_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
      g_assert_false (sandbox_workspace_write (fixture->ws, bad[i], contents,
                                               SANDBOX_MAX_FILE_BYTES, &write_error));
      g_assert_error (write_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
      g_assert_false (sandbox_workspace_remove (fixture->ws, bad[i], &remove_error));
      g_assert_error (remove_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
    }

  g_assert_cmpuint (count_entries (fixture->workspace), ==, 0);
  assert_outside_untouched (fixture);
}

/* Bounds */

static void
write_sized_file (Fixture    *fixture,
                  const char *relative,
                  gsize       size)
{
  g_autofree char *path = ws_path (fixture, relative);
  g_autofree char *contents = g_malloc (size);
  g_autoptr(GError) error = NULL;

  memset (contents, 'x', size);
  g_file_set_contents (path, contents, size, &error);
  g_assert_no_error (error);
}

static void
test_read_limit (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) exact = NULL;
  g_autoptr(GBytes) over = NULL;

  write_sized_file (fixture, "exact", SANDBOX_MAX_FILE_BYTES);
  write_sized_file (fixture, "over", SANDBOX_MAX_FILE_BYTES + 1);

  exact = sandbox_workspace_read (fixture->ws, "exact", SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (exact), ==, SANDBOX_MAX_FILE_BYTES);

  over = sandbox_workspace_read (fixture->ws, "over", SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_null (over);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox file read limit exceeded");
}

static void
test_read_huge_sparse_file (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *path = ws_path (fixture, "sparse");
  gint64 start;
  int fd;

  fd = open (path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  g_assert_cmpint (fd, >=, 0);
  g_assert_no_errno (ftruncate (fd, (off_t) 1 << 40));
  close (fd);

  start = g_get_monotonic_time ();
  bytes = sandbox_workspace_read (fixture->ws, "sparse", SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_null (bytes);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
}

static void
test_write_limit (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *big = g_malloc0 (SANDBOX_MAX_FILE_BYTES + 1);
  g_autoptr(GBytes) exact = g_bytes_new (big, SANDBOX_MAX_FILE_BYTES);
  g_autoptr(GBytes) over = g_bytes_new (big, SANDBOX_MAX_FILE_BYTES + 1);
  g_autoptr(GBytes) back = NULL;

  g_assert_false (sandbox_workspace_write (fixture->ws, "new/dir/over", over,
                                           SANDBOX_MAX_FILE_BYTES, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox file write limit exceeded");
  /* Refused before anything was touched: not even the parents exist. */
  g_assert_cmpuint (count_entries (fixture->workspace), ==, 0);
  g_clear_error (&error);

  g_assert_true (sandbox_workspace_write (fixture->ws, "exact", exact,
                                          SANDBOX_MAX_FILE_BYTES, &error));
  g_assert_no_error (error);
  back = sandbox_workspace_read (fixture->ws, "exact", SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (back, exact));
}

/* Symbolic links planted by the guest */

static void
test_read_symlink_to_host_file (Fixture       *fixture,
                                gconstpointer  data)
{
  g_autofree char *secret = outside_path (fixture, "secret");
  g_autofree char *relative_secret = g_strdup ("../outside/secret");
  const char *names[] = { "passwd", "secret", "relative", "nested/relative" };

  ws_symlink (fixture, "/etc/passwd", "passwd");
  ws_symlink (fixture, secret, "secret");
  ws_symlink (fixture, relative_secret, "relative");
  ws_mkdir (fixture, "nested");
  ws_symlink (fixture, "../../outside/secret", "nested/relative");

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) bytes = sandbox_workspace_read (fixture->ws, names[i],
                                                        SANDBOX_MAX_FILE_BYTES, &error);

      g_assert_null (bytes);
      assert_escape_error (fixture, error);
    }
  assert_outside_untouched (fixture);
}

static void
test_read_symlink_to_host_directory (Fixture       *fixture,
                                     gconstpointer  data)
{
  g_autofree char *dir = outside_path (fixture, "dir");
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;

  ws_symlink (fixture, dir, "hostdir");
  ws_symlink (fixture, "/proc/self/root/etc", "magic");

  bytes = sandbox_workspace_read (fixture->ws, "hostdir/f", SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_null (bytes);
  assert_escape_error (fixture, error);
  g_clear_error (&error);

  bytes = sandbox_workspace_read (fixture->ws, "magic/passwd", SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_null (bytes);
  assert_escape_error (fixture, error);
}

static void
test_read_symlink_inside_is_followed (Fixture       *fixture,
                                      gconstpointer  data)
{
  ws_write (fixture, "real.txt", "real");
  ws_mkdir (fixture, "sub");
  ws_symlink (fixture, "real.txt", "link");
  ws_symlink (fixture, "../real.txt", "sub/up");
  ws_symlink (fixture, "sub", "sublink");

  assert_ws_contents (fixture, "link", "real");
  assert_ws_contents (fixture, "sub/up", "real");
  assert_ws_contents (fixture, "sublink/up", "real");
}

static void
test_write_through_symlinked_parent (Fixture       *fixture,
                                     gconstpointer  data)
{
  g_autofree char *dir = outside_path (fixture, "dir");
  const char *paths[] = { "abs/new.txt", "abs/f", "abs/deeper/new.txt", "rel/new.txt", "rel/f" };

  ws_symlink (fixture, dir, "abs");
  ws_symlink (fixture, "../outside/dir", "rel");

  for (gsize i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) bytes = g_bytes_new_static ("pwned", 5);

      g_assert_false (sandbox_workspace_write (fixture->ws, paths[i], bytes,
                                               SANDBOX_MAX_FILE_BYTES, &error));
      assert_escape_error (fixture, error);
    }
  assert_outside_untouched (fixture);
}

static void
test_write_replaces_symlink (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autofree char *secret = outside_path (fixture, "secret");
  g_autofree char *link = ws_path (fixture, "link");
  struct stat st;

  ws_symlink (fixture, secret, "link");
  ws_symlink (fixture, "../outside/secret", "rel");
  ws_write (fixture, "link", "replaced");
  ws_write (fixture, "rel", "replaced too");

  g_assert_no_errno (lstat (link, &st));
  g_assert_true (S_ISREG (st.st_mode));
  assert_ws_contents (fixture, "link", "replaced");
  assert_ws_contents (fixture, "rel", "replaced too");
  assert_outside_untouched (fixture);
}

static void
test_write_replaces_hard_link (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autofree char *secret = outside_path (fixture, "secret");
  g_autofree char *linked = ws_path (fixture, "linked");
  g_autofree char *first = ws_path (fixture, "first");
  g_autofree char *second = ws_path (fixture, "second");

  /* A hard link to a host file, as a guest on the same filesystem could make
   * if it ever got hold of one. */
  g_assert_no_errno (link (secret, linked));
  ws_write (fixture, "linked", "replaced");
  assert_ws_contents (fixture, "linked", "replaced");

  ws_write (fixture, "first", "one");
  g_assert_no_errno (link (first, second));
  ws_write (fixture, "first", "two");
  assert_ws_contents (fixture, "first", "two");
  assert_ws_contents (fixture, "second", "one");

  assert_outside_untouched (fixture);
}

static void
test_write_ignores_planted_temporary_names (Fixture       *fixture,
                                            gconstpointer  data)
{
  g_autofree char *secret = outside_path (fixture, "secret");
  const char *planted[] = { "target~", ".target.tmp", "target.tmp", ".target.swp",
                            ".sandbox-write-0000000000000000.tmp", ".sandbox-write.tmp" };

  for (gsize i = 0; i < G_N_ELEMENTS (planted); i++)
    ws_symlink (fixture, secret, planted[i]);

  ws_write (fixture, "target", "written");
  assert_ws_contents (fixture, "target", "written");
  g_assert_cmpuint (count_entries (fixture->workspace), ==, G_N_ELEMENTS (planted) + 1);
  assert_outside_untouched (fixture);
}

/* A guest that replaces every temporary file it sees with a link outside. */
typedef struct
{
  Fixture  *fixture;
  gint      stop;
  guint     swaps;
} TemporaryThief;

static gpointer
temporary_thief_thread (gpointer data)
{
  TemporaryThief *thief = data;
  g_autofree char *secret = outside_path (thief->fixture, "secret");

  while (!g_atomic_int_get (&thief->stop))
    {
      g_autoptr(GDir) dir = g_dir_open (thief->fixture->workspace, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = NULL;
          g_autofree char *planted = NULL;

          if (!g_str_has_prefix (name, ".sandbox-write-"))
            continue;
          path = ws_path (thief->fixture, name);
          planted = g_strconcat (path, ".planted", NULL);
          if (symlink (secret, planted) == 0 && rename (planted, path) == 0)
            thief->swaps++;
          unlink (planted);
        }
    }

  return NULL;
}

static void
test_write_survives_temporary_swaps (Fixture       *fixture,
                                     gconstpointer  data)
{
  TemporaryThief thief = { fixture, 0, 0 };
  g_autoptr(GThread) thread = g_thread_new ("thief", temporary_thief_thread, &thief);
  g_autofree char *contents = g_malloc0 (64 * 1024);
  g_autoptr(GBytes) bytes = g_bytes_new_take (g_steal_pointer (&contents), 64 * 1024);

  for (guint i = 0; i < 500; i++)
    sandbox_workspace_write (fixture->ws, "target", bytes, SANDBOX_MAX_FILE_BYTES, NULL);

  g_atomic_int_set (&thief.stop, 1);
  g_thread_join (g_steal_pointer (&thread));
  g_test_message ("the thief swapped %u temporary files", thief.swaps);
  assert_outside_untouched (fixture);
}

/* Debris after a crash -------------------------------------------------------- */

static gboolean
is_our_temporary_name (const char *name)
{
  return g_regex_match_simple ("^\\.sandbox-write-[0-9a-f]{16}\\.tmp$", name, 0, 0);
}

/* How many of our temporaries lie anywhere below @path (not following
 * symbolic links). */
static guint
count_temporaries (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;
  guint count = 0;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      if (is_our_temporary_name (name))
        count++;
      else if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        count += count_temporaries (child);
    }
  return count;
}

/* A watcher that counts every temporary name it ever sees. */
typedef struct
{
  Fixture  *fixture;
  gint      stop;
  guint     seen;
} TemporaryWatcher;

static gpointer
temporary_watcher_thread (gpointer data)
{
  TemporaryWatcher *watcher = data;

  while (!g_atomic_int_get (&watcher->stop))
    watcher->seen += count_temporaries (watcher->fixture->workspace);
  return NULL;
}

/* A new file is linked into place straight from an unnamed O_TMPFILE file:
 * no name but its own ever appears, so nothing is left by a crash. With
 * create_unnamed() returning EOPNOTSUPP (the named fallback), the watcher
 * sees the temporaries. */
static void
test_write_new_file_has_no_temporary (Fixture       *fixture,
                                      gconstpointer  data)
{
  TemporaryWatcher watcher = { fixture, 0, 0 };
  g_autoptr(GThread) thread = g_thread_new ("watcher", temporary_watcher_thread, &watcher);
  g_autofree char *contents = g_malloc0 (256 * 1024);
  g_autoptr(GBytes) bytes = g_bytes_new_take (g_steal_pointer (&contents), 256 * 1024);
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < 200; i++)
    {
      g_autofree char *name = g_strdup_printf ("dir/new-%u", i);

      g_assert_true (sandbox_workspace_write (fixture->ws, name, bytes,
                                              SANDBOX_MAX_FILE_BYTES, &error));
      g_assert_no_error (error);
    }
  g_atomic_int_set (&watcher.stop, 1);
  g_thread_join (g_steal_pointer (&thread));
  g_test_message ("temporaries seen while writing 200 new files: %u", watcher.seen);
  g_assert_cmpuint (watcher.seen, ==, 0);
}

#define CRASH_TRIALS 50
#define CRASH_WRITE_BYTES (1024 * 1024)

/* In a forked child: replaces "big" and writes new files, 1 MiB each,
 * until killed; says when the first write is done. */
static void G_GNUC_NORETURN
write_until_killed (Fixture *fixture,
                    int      ready_fd,
                    guint    trial)
{
  g_autofree char *contents = g_malloc (CRASH_WRITE_BYTES);
  g_autoptr(GBytes) bytes = NULL;

  memset (contents, 'x', CRASH_WRITE_BYTES);
  bytes = g_bytes_new_take (g_steal_pointer (&contents), CRASH_WRITE_BYTES);
  for (guint i = 0; ; i++)
    {
      g_autofree char *name = g_strdup_printf ("new/%u-%u", trial, i);

      if (!sandbox_workspace_write (fixture->ws, "big", bytes, SANDBOX_MAX_FILE_BYTES, NULL) ||
          !sandbox_workspace_write (fixture->ws, name, bytes, SANDBOX_MAX_FILE_BYTES, NULL))
        _exit (1);
      if (i == 0 && write (ready_fd, "r", 1) != 1)
        _exit (1);
    }
}

/* The crash: SIGKILL of the host during 1 MiB writes, 50 times at
 * random points. On main each kill left a `.sandbox-write-*.tmp` of up to
 * 1 MiB (43–46 per 50). With O_TMPFILE only the few microseconds between
 * linking and renaming a replacement can leave one, and
 * sandbox_workspace_remove_temporaries() removes whatever is left and
 * nothing else. Take the O_TMPFILE path out (create_unnamed() failing with
 * EOPNOTSUPP, as the "write-named" registration does) to see the debris. */
static void
test_crash_during_writes_leaves_no_debris (Fixture       *fixture,
                                           gconstpointer  data)
{
  guint left = 0;
  guint removed;

  for (guint trial = 0; trial < CRASH_TRIALS; trial++)
    {
      int ready[2];
      char byte;
      pid_t pid;
      int status;

      g_assert_no_errno (pipe (ready));
      pid = fork ();
      g_assert_cmpint (pid, >=, 0);
      if (pid == 0)
        {
          close (ready[0]);
          write_until_killed (fixture, ready[1], trial);
        }
      close (ready[1]);
      g_assert_cmpint (read (ready[0], &byte, 1), ==, 1);
      close (ready[0]);
      /* A random point in the next few writes (each a few milliseconds). */
      g_usleep (g_random_int_range (0, 20000));
      g_assert_no_errno (kill (pid, SIGKILL));
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      g_assert_true (WIFSIGNALED (status));
    }

  left = count_temporaries (fixture->workspace);
  g_test_message ("%s: %u temporaries after %u kills", data == NAMED_TEMPORARIES
                  ? "named temporaries" : "O_TMPFILE", left, CRASH_TRIALS);
  if (data == NAMED_TEMPORARIES)
    g_assert_cmpuint (left, >, 0);   /* the fallback does leave them: recovery's job */
  else
    g_assert_cmpuint (left, <=, CRASH_TRIALS / 10);
  removed = sandbox_workspace_remove_temporaries (fixture->ws);
  g_assert_cmpuint (removed, ==, left);
  g_assert_cmpuint (count_temporaries (fixture->workspace), ==, 0);
  assert_outside_untouched (fixture);
}

/* Recovery removes exactly our temporaries: regular files with our exact
 * name pattern, at any depth; never a symbolic link, a directory, a near
 * miss, or anything reached through a link. */
static void
test_remove_temporaries_only_ours (Fixture       *fixture,
                                   gconstpointer  data)
{
  g_autofree char *outside_dir = outside_path (fixture, "dir");
  g_autofree char *outside_debris = outside_path (fixture, "dir/.sandbox-write-0123456789abcdef.tmp");
  g_autofree char *secret = outside_path (fixture, "secret");
  const char *ours[] = { ".sandbox-write-0123456789abcdef.tmp",
                         "a/.sandbox-write-fedcba9876543210.tmp",
                         "a/b/c/.sandbox-write-0000000000000000.tmp" };
  const char *kept[] = { ".sandbox-write-0123456789ABCDEF.tmp", ".sandbox-write-0123456789abcde.tmp",
                         ".sandbox-write-0123456789abcdef0.tmp", ".sandbox-write-0123456789abcdef.tm",
                         "sandbox-write-0123456789abcdef.tmp", "a/.sandbox-write-0123456789abcdeg.tmp",
                         "a/b/keep.txt" };

  for (gsize i = 0; i < G_N_ELEMENTS (ours); i++)
    ws_write (fixture, ours[i], "debris");
  for (gsize i = 0; i < G_N_ELEMENTS (kept); i++)
    ws_write (fixture, kept[i], "kept");
  /* A link and a directory with our name, and a link into a host
   * directory holding a file with our name. */
  ws_symlink (fixture, secret, "a/b/.sandbox-write-1111111111111111.tmp");
  ws_mkdir (fixture, "a/.sandbox-write-2222222222222222.tmp");
  ws_write (fixture, "a/.sandbox-write-2222222222222222.tmp/inside", "kept");
  ws_symlink (fixture, outside_dir, "a/b/out");
  set_host_file (outside_debris, "host");

  g_assert_cmpuint (sandbox_workspace_remove_temporaries (fixture->ws), ==,
                    G_N_ELEMENTS (ours));
  for (gsize i = 0; i < G_N_ELEMENTS (ours); i++)
    {
      g_autofree char *path = ws_path (fixture, ours[i]);

      g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
    }
  for (gsize i = 0; i < G_N_ELEMENTS (kept); i++)
    assert_ws_contents (fixture, kept[i], "kept");
  assert_ws_contents (fixture, "a/.sandbox-write-2222222222222222.tmp/inside", "kept");
  {
    g_autofree char *link = ws_path (fixture, "a/b/.sandbox-write-1111111111111111.tmp");

    g_assert_true (g_file_test (link, G_FILE_TEST_IS_SYMLINK));
  }
  g_assert_true (g_file_test (outside_debris, G_FILE_TEST_IS_REGULAR));
  g_assert_no_errno (unlink (outside_debris));
  assert_outside_untouched (fixture);
}

/* FIFOs and sockets never block the host */

static void
test_read_fifo_returns_promptly (Fixture       *fixture,
                                 gconstpointer  data)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) bytes = NULL;
      g_autofree char *path = ws_path (fixture, "fifo");

      g_assert_no_errno (mkfifo (path, 0600));
      bytes = sandbox_workspace_read (fixture->ws, "fifo", SANDBOX_MAX_FILE_BYTES, &error);
      g_assert_null (bytes);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE);
      assert_no_host_path (fixture, error);
      return;
    }

  /* A hang fails the test instead of stalling the suite. */
  g_test_trap_subprocess (NULL, 5 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_read_socket_refused (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *path = ws_path (fixture, "sock");
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpuint (strlen (path), <, sizeof address.sun_path);
  strcpy (address.sun_path, path);
  g_assert_no_errno (bind (fd, (struct sockaddr *) &address, sizeof address));
  g_assert_no_errno (listen (fd, 1));

  bytes = sandbox_workspace_read (fixture->ws, "sock", SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_null (bytes);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE);
  close (fd);
}

/* Removal */

static void
test_remove_file_and_tree (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  ws_write (fixture, "file", "x");
  ws_write (fixture, "tree/a/b/c", "x");
  ws_write (fixture, "tree/a/d", "x");
  ws_mkdir (fixture, "tree/empty");

  g_assert_true (sandbox_workspace_remove (fixture->ws, "file", &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_workspace_remove (fixture->ws, "tree/a/b", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_entries (fixture->workspace), ==, 1);
  assert_ws_contents (fixture, "tree/a/d", "x");

  g_assert_true (sandbox_workspace_remove (fixture->ws, "tree", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_entries (fixture->workspace), ==, 0);
}

static void
test_remove_missing_is_success (Fixture       *fixture,
                                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_workspace_remove (fixture->ws, "missing", &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_workspace_remove (fixture->ws, "missing/deeper/still", &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_workspace_remove_tree_at (sandbox_workspace_get_fd (fixture->ws),
                                                   "missing", &error));
  g_assert_no_error (error);
}

static void
test_remove_root_refused (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  ws_write (fixture, "keep", "x");
  g_assert_false (sandbox_workspace_remove (fixture->ws, ".", &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_cmpstr (error->message, ==, "Cannot remove the workspace root");
  g_clear_error (&error);

  g_assert_false (sandbox_workspace_remove_tree_at (sandbox_workspace_get_fd (fixture->ws), "..",
                                                    &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  assert_ws_contents (fixture, "keep", "x");
}

static void
test_remove_never_follows_symlinks (Fixture       *fixture,
                                    gconstpointer  data)
{
  g_autofree char *outside_dir = outside_path (fixture, "dir");
  g_autofree char *secret = outside_path (fixture, "secret");
  g_autoptr(GError) error = NULL;

  ws_symlink (fixture, outside_dir, "dirlink");
  ws_mkdir (fixture, "tree/sub");
  ws_symlink (fixture, outside_dir, "tree/dirlink");
  ws_symlink (fixture, secret, "tree/sub/filelink");
  ws_symlink (fixture, "../../../outside", "tree/sub/rel");
  ws_symlink (fixture, "/", "tree/rootlink");

  g_assert_true (sandbox_workspace_remove (fixture->ws, "dirlink", &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_workspace_remove (fixture->ws, "tree", &error));
  g_assert_no_error (error);

  g_assert_cmpuint (count_entries (fixture->workspace), ==, 0);
  assert_outside_untouched (fixture);
}

static void
test_remove_through_symlinked_parent (Fixture       *fixture,
                                      gconstpointer  data)
{
  g_autofree char *outside_dir = outside_path (fixture, "dir");
  g_autoptr(GError) error = NULL;

  ws_symlink (fixture, outside_dir, "abs");
  ws_symlink (fixture, "../outside", "rel");

  g_assert_false (sandbox_workspace_remove (fixture->ws, "abs/f", &error));
  assert_escape_error (fixture, error);
  g_clear_error (&error);
  g_assert_false (sandbox_workspace_remove (fixture->ws, "rel/dir", &error));
  assert_escape_error (fixture, error);

  assert_outside_untouched (fixture);
}

static void
test_remove_deep_chain (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  int fd = open (fixture->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  /* 5000 levels: far past PATH_MAX and the default fd limit if each level
   * held an fd. */
  g_assert_cmpint (fd, >=, 0);
  g_assert_no_errno (mkdirat (fd, "deep", 0700));
  for (guint i = 0; i < 5000; i++)
    {
      int child = openat (fd, i == 0 ? "deep" : "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

      g_assert_cmpint (child, >=, 0);
      close (fd);
      fd = child;
      g_assert_no_errno (mkdirat (fd, "d", 0700));
      if (i % 1000 == 0)
        {
          int file = openat (fd, "file", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);

          g_assert_cmpint (file, >=, 0);
          close (file);
        }
    }
  close (fd);

  g_assert_true (sandbox_workspace_remove (fixture->ws, "deep", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_entries (fixture->workspace), ==, 0);
}

/* A guest swapping a directory and a link to a host directory in a loop */

typedef struct
{
  Fixture *fixture;
  gint     stop;
  guint    swaps;
} Swapper;

static gpointer
swapper_thread (gpointer data)
{
  Swapper *swapper = data;
  int fd = open (swapper->fixture->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  while (!g_atomic_int_get (&swapper->stop))
    {
      if (renameat2 (fd, "swap", fd, "other", RENAME_EXCHANGE) == 0)
        swapper->swaps++;
    }
  close (fd);

  return NULL;
}

static void
test_race_directory_symlink_swap (Fixture       *fixture,
                                  gconstpointer  data)
{
  g_autofree char *outside_dir = outside_path (fixture, "dir");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("pwned", 5);
  Swapper swapper = { fixture, 0, 0 };
  g_autoptr(GThread) thread = NULL;
  guint reads = 0;

  ws_write (fixture, "swap/f", "inside");
  ws_symlink (fixture, outside_dir, "other");
  thread = g_thread_new ("swapper", swapper_thread, &swapper);

  for (guint i = 0; i < 2000; i++)
    {
      g_autoptr(GBytes) read = NULL;

      switch (i % 4)
        {
        case 0:
          read = sandbox_workspace_read (fixture->ws, "swap/f", SANDBOX_MAX_FILE_BYTES, NULL);
          if (read != NULL)
            {
              g_autofree char *text = g_strndup (g_bytes_get_data (read, NULL),
                                                 g_bytes_get_size (read));

              /* Whatever was read came from inside. */
              g_assert_true (g_str_equal (text, "inside") || g_str_equal (text, "pwned"));
              reads++;
            }
          break;
        case 1:
          sandbox_workspace_write (fixture->ws, "swap/f", bytes, SANDBOX_MAX_FILE_BYTES, NULL);
          break;
        case 2:
          sandbox_workspace_write (fixture->ws, "swap/sub/g", bytes, SANDBOX_MAX_FILE_BYTES, NULL);
          break;
        default:
          sandbox_workspace_remove (fixture->ws, (i % 8) == 3 ? "swap/f" : "swap/sub", NULL);
          break;
        }
    }

  g_atomic_int_set (&swapper.stop, 1);
  g_thread_join (g_steal_pointer (&thread));
  g_test_message ("%u swaps, %u successful reads", swapper.swaps, reads);
  g_assert_cmpuint (swapper.swaps, >, 0);
  assert_outside_untouched (fixture);
}

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

    g_assert_cmpuint (count_entries (top), ==, 4);
    g_assert_cmpuint (count_entries (src), ==, 3);
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
  g_assert_cmpuint (count_entries (sessions), ==, 0);
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
  g_assert_cmpuint (count_entries (sessions), ==, 0);
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

/* ADD_FILE and ADD_WRITE tests run on a plain workspace and on an overlay
 * one; ADD tests (copies, opening) on a plain one only. */
#define ADD(path, func) \
  g_test_add ("/sandbox/workspace-fs/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
#define ADD_FILE(path, func) \
  G_STMT_START { \
    ADD (path, func); \
    g_test_add ("/sandbox/workspace-fs/overlay/" path, Fixture, OVERLAY, \
                fixture_set_up, func, fixture_tear_down); \
  } G_STMT_END
#define ADD_WRITE(path, func) \
  G_STMT_START { \
    g_test_add ("/sandbox/workspace-fs/write/" path, Fixture, NULL, \
                fixture_set_up, func, fixture_tear_down); \
    g_test_add ("/sandbox/workspace-fs/write-named/" path, Fixture, NAMED_TEMPORARIES, \
                fixture_set_up, func, fixture_tear_down); \
    g_test_add ("/sandbox/workspace-fs/overlay/write/" path, Fixture, OVERLAY, \
                fixture_set_up, func, fixture_tear_down); \
  } G_STMT_END

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/workspace-fs/open/missing", test_open_missing_workspace);
  /* Every write test twice: with O_TMPFILE, and with the named temporary
   * of filesystems without it. */
  ADD_WRITE ("read-back", test_write_then_read);
  ADD_WRITE ("creates-parents", test_write_creates_parents);
  ADD_WRITE ("parent-not-directory", test_write_parent_not_directory);
  ADD_WRITE ("onto-directory", test_write_onto_directory);
  ADD_WRITE ("keeps-permission-bits", test_write_keeps_permission_bits);
  ADD_WRITE ("limit", test_write_limit);
  ADD_WRITE ("symlinked-parent", test_write_through_symlinked_parent);
  ADD_WRITE ("replaces-symlink", test_write_replaces_symlink);
  ADD_WRITE ("replaces-hard-link", test_write_replaces_hard_link);
  ADD_WRITE ("planted-temporary-names", test_write_ignores_planted_temporary_names);
  ADD_WRITE ("temporary-swaps", test_write_survives_temporary_swaps);
  ADD_WRITE ("crash-leaves-no-debris", test_crash_during_writes_leaves_no_debris);
  ADD_FILE ("write/new-file-has-no-temporary", test_write_new_file_has_no_temporary);
  ADD_FILE ("remove-temporaries/only-ours", test_remove_temporaries_only_ours);
  ADD_FILE ("read/missing", test_read_missing);
  ADD_FILE ("read/directory", test_read_directory);
  ADD_FILE ("read/limit", test_read_limit);
  ADD_FILE ("read/huge-sparse-file", test_read_huge_sparse_file);
  ADD_FILE ("read/symlink-to-host-file", test_read_symlink_to_host_file);
  ADD_FILE ("read/symlink-to-host-directory", test_read_symlink_to_host_directory);
  ADD_FILE ("read/symlink-inside", test_read_symlink_inside_is_followed);
  ADD_FILE ("read/fifo", test_read_fifo_returns_promptly);
  ADD_FILE ("read/socket", test_read_socket_refused);
  ADD_FILE ("paths/non-canonical", test_non_canonical_paths);
  ADD_FILE ("remove/file-and-tree", test_remove_file_and_tree);
  ADD_FILE ("remove/missing", test_remove_missing_is_success);
  ADD_FILE ("remove/root", test_remove_root_refused);
  ADD_FILE ("remove/symlinks", test_remove_never_follows_symlinks);
  ADD_FILE ("remove/symlinked-parent", test_remove_through_symlinked_parent);
  ADD_FILE ("remove/deep-chain", test_remove_deep_chain);
  ADD_FILE ("race/directory-symlink-swap", test_race_directory_symlink_swap);
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
