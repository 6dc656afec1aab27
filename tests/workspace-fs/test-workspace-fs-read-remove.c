/* test-workspace-fs-read-remove.c: contained workspace reads and removals against a hostile guest
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reads and removals on real directory pairs (see workspace-fs-fixture.h):
 * missing files and directories, non-canonical paths, the read bound,
 * links planted by the guest, FIFOs and sockets that must never block the
 * host, removals that never follow links, and a guest swapping a directory
 * for a link to a host directory while the host reads, writes and removes.
 */

#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gio/gio.h>

#include "sandbox-error.h"
#include "sandbox-driver.h"
#include "sandbox-workspace.h"
#include "sandbox-test-backend.h"
#include "workspace-fs-fixture.h"

/* Basics */

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

  g_assert_cmpuint (sandbox_test_count_entries (fixture->workspace), ==, 0);
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
  g_assert_cmpuint (sandbox_test_count_entries (fixture->workspace), ==, 1);
  assert_ws_contents (fixture, "tree/a/d", "x");

  g_assert_true (sandbox_workspace_remove (fixture->ws, "tree", &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sandbox_test_count_entries (fixture->workspace), ==, 0);
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

  g_assert_cmpuint (sandbox_test_count_entries (fixture->workspace), ==, 0);
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
  g_assert_cmpuint (sandbox_test_count_entries (fixture->workspace), ==, 0);
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

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

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

  return g_test_run ();
}
