/* sandboxctl-tree.c — removing trees without following links
 *
 * Workspaces are shaped by guests, which may plant symlinks or swap
 * directories for links while we walk. Every step here is relative to an
 * open directory fd, opens with O_NOFOLLOW and stats with
 * AT_SYMLINK_NOFOLLOW, so a walk never leaves the tree it started in.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandboxctl.h"

/* Deeper trees are refused rather than exhausting file descriptors. */
#define TREE_MAX_DEPTH 256

typedef gboolean (*TreeVisitFunc) (int                 parent_fd,
                                   const char         *name,
                                   const struct stat  *st,
                                   gpointer            user_data,
                                   GError            **error);

static gboolean
set_errno_error (GError     **error,
                 int          saved_errno,
                 const char  *what,
                 const char  *name)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s", what, name, g_strerror (saved_errno));
  return FALSE;
}

static int
open_directory_at (int          parent_fd,
                   const char  *name)
{
  return openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Calls @visit for every entry under @dir_fd (children first, then the
 * directory itself), taking ownership of @dir_fd. */
static gboolean
walk_directory (int             dir_fd,
                const char     *display_name,
                guint           depth,
                TreeVisitFunc   visit,
                gpointer        user_data,
                GError        **error)
{
  DIR *dir;
  struct dirent *entry;
  gboolean ok = TRUE;

  if (depth > TREE_MAX_DEPTH)
    {
      close (dir_fd);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "%s is nested deeper than %d directories", display_name, TREE_MAX_DEPTH);
      return FALSE;
    }

  dir = fdopendir (dir_fd);
  if (dir == NULL)
    {
      int saved_errno = errno;

      close (dir_fd);
      return set_errno_error (error, saved_errno, "Could not read directory", display_name);
    }

  while (ok && (errno = 0, entry = readdir (dir)) != NULL)
    {
      struct stat st;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      if (fstatat (dirfd (dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        {
          if (errno == ENOENT)
            continue;  /* removed while we walk */
          ok = set_errno_error (error, errno, "Could not stat", entry->d_name);
          break;
        }
      if (S_ISDIR (st.st_mode))
        {
          int child_fd = open_directory_at (dirfd (dir), entry->d_name);

          if (child_fd < 0)
            {
              if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
                continue;  /* swapped for something else while we walk */
              ok = set_errno_error (error, errno, "Could not open directory", entry->d_name);
              break;
            }
          ok = walk_directory (child_fd, entry->d_name, depth + 1, visit, user_data, error);
        }
      if (ok)
        ok = visit (dirfd (dir), entry->d_name, &st, user_data, error);
    }
  if (ok && errno != 0)
    ok = set_errno_error (error, errno, "Could not read directory", display_name);

  closedir (dir);
  return ok;
}

static gboolean
walk_tree (const char     *path,
           TreeVisitFunc   visit,
           gpointer        user_data,
           GError        **error)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    return set_errno_error (error, errno, "Could not open directory", path);
  return walk_directory (fd, path, 0, visit, user_data, error);
}

static gboolean
remove_entry (int                 parent_fd,
              const char         *name,
              const struct stat  *st,
              gpointer            user_data,
              GError            **error)
{
  int flags = S_ISDIR (st->st_mode) ? AT_REMOVEDIR : 0;

  if (unlinkat (parent_fd, name, flags) != 0 && errno != ENOENT)
    return set_errno_error (error, errno, "Could not remove", name);
  return TRUE;
}

/**
 * sandboxctl_tree_remove:
 * @path: a directory
 * @error: return location for a #GError
 *
 * Removes @path and everything under it, never following a link.
 *
 * Returns: %TRUE on success
 */
gboolean
sandboxctl_tree_remove (const char  *path,
                        GError     **error)
{
  if (!walk_tree (path, remove_entry, NULL, error))
    return FALSE;
  if (rmdir (path) != 0 && errno != ENOENT)
    return set_errno_error (error, errno, "Could not remove", path);
  return TRUE;
}
