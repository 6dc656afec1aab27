/* workspace-fs-fixture.c — what the workspace-fs test executables share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-driver.h"
#include "workspace-fs-fixture.h"

const char named_temporaries[] = "named";
const char overlay_layers[] = "overlay";

char *
ws_path (Fixture    *fixture,
         const char *relative)
{
  return g_build_filename (fixture->workspace, relative, NULL);
}

char *
outside_path (Fixture    *fixture,
              const char *relative)
{
  return g_build_filename (fixture->outside, relative, NULL);
}

void
set_host_file (const char *path,
               const char *contents)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

char *
get_host_file (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  return contents;
}

void
ws_mkdir (Fixture    *fixture,
          const char *relative)
{
  g_autofree char *path = ws_path (fixture, relative);

  g_assert_no_errno (g_mkdir_with_parents (path, 0700));
}

void
ws_symlink (Fixture    *fixture,
            const char *target,
            const char *relative)
{
  g_autofree char *path = ws_path (fixture, relative);

  g_assert_no_errno (symlink (target, path));
}

void
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

void
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
void
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
void
assert_no_host_path (Fixture      *fixture,
                     const GError *error)
{
  g_assert_nonnull (error);
  g_assert_null (strstr (error->message, fixture->base));
}

void
assert_escape_error (Fixture      *fixture,
                     const GError *error)
{
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_cmpstr (error->message, ==, "Path escapes the workspace");
  assert_no_host_path (fixture, error);
}

void
ws_write (Fixture    *fixture,
          const char *relative,
          const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new (text, strlen (text));

  sandbox_workspace_write (fixture->ws, relative, bytes, SANDBOX_MAX_FILE_BYTES, &error);
  g_assert_no_error (error);
}

void
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
