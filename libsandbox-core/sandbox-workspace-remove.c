/* sandbox-workspace-remove.c — removing trees a hostile guest shapes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Removal never follows symbolic links, walks directories with a constant
 * number of fds whatever their depth, and checks every step back up by
 * inode identity, so a guest that moves directories meanwhile stops the
 * walk instead of sending it outside.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-workspace-private.h"

/* How many times a directory that filled up again while it was being
 * emptied is rescanned before removal gives up. */
#define REMOVE_RETRIES 8

/* One directory on the path from the top of a removal down to where it is
 * working. */
typedef struct
{
  dev_t      dev;
  ino_t      ino;
  GPtrArray *subdirectories;  /* names still to remove below this one */
  char      *child;           /* the subdirectory being removed below */
  guint      retries;
} RemoveLevel;

static void
remove_level_clear (gpointer data)
{
  RemoveLevel *level = data;

  g_clear_pointer (&level->subdirectories, g_ptr_array_unref);
  g_clear_pointer (&level->child, g_free);
}

/*
 * remove_error_path:
 * @levels: the removal's directory stack
 * @top: the display path of the top of the removal
 * @leaf: (nullable): an entry of the deepest directory
 *
 * Returns: (transfer full): the workspace-relative path of @leaf for a message
 */
static char *
remove_error_path (GArray     *levels,
                   const char *top,
                   const char *leaf)
{
  GString *path = g_string_new (top);

  for (guint i = 0; i + 1 < levels->len; i++)
    {
      g_string_append_c (path, '/');
      g_string_append (path, g_array_index (levels, RemoveLevel, i).child);
    }
  if (leaf != NULL)
    {
      g_string_append_c (path, '/');
      g_string_append (path, leaf);
    }

  return g_string_free (path, FALSE);
}

/*
 * open_directory_nofollow:
 * @dir_fd: the directory holding @name
 * @name: an entry name
 * @st: (out): the opened directory's status
 *
 * Opens a subdirectory for listing without following a symbolic link, so a
 * directory the guest swapped for a link fails with ELOOP or ENOTDIR. A
 * directory without owner rwx (read-only trees such as Go's module cache)
 * gets it, on the fd we hold, so its entries can be removed.
 *
 * Returns: the fd, or -1 with errno set
 */
static int
open_directory_nofollow (int          dir_fd,
                         const char  *name,
                         struct stat *st)
{
  g_auto(SandboxWorkspaceFd) fd = -1;

  fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == EACCES &&
      fchmodat (dir_fd, name, 0700, AT_SYMLINK_NOFOLLOW) == 0)
    fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fstat (fd, st) < 0)
    return -1;

  if ((st->st_mode & 0700) != 0700 && fchmod (fd, (st->st_mode & 07777) | 0700) < 0)
    return -1;

  return g_steal_fd (&fd);
}

/*
 * scan_directory:
 * @fd: a directory open for reading, positioned at its start
 * @level: the directory's level, whose subdirectory list is filled
 * @buffer: a SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE scratch buffer
 * @failed_name: (out): the entry that could not be removed, on failure
 *
 * Unlinks every entry of @fd that is not a directory (symbolic links
 * included, never followed) and queues the subdirectories.
 *
 * Returns: %TRUE, or %FALSE with errno set and @failed_name filled
 */
static gboolean
scan_directory (int           fd,
                RemoveLevel  *level,
                guint8       *buffer,
                char        **failed_name)
{
  SandboxWorkspaceDirents dirents;

  if (level->subdirectories == NULL)
    level->subdirectories = g_ptr_array_new_with_free_func (g_free);

  sandbox_workspace_dirents_init (&dirents, fd, buffer);
  while (TRUE)
    {
      struct dirent64 *entry;
      gboolean is_directory;

      if (!sandbox_workspace_dirents_next (&dirents, &entry))
        return FALSE;
      if (entry == NULL)
        return TRUE;

      is_directory = entry->d_type == DT_DIR;
      if (!is_directory && unlinkat (fd, entry->d_name, 0) < 0)
        {
          if (errno == EISDIR)
            is_directory = TRUE;
          else if (errno != ENOENT)
            {
              *failed_name = g_strdup (entry->d_name);
              return FALSE;
            }
        }

      if (is_directory)
        g_ptr_array_add (level->subdirectories, g_strdup (entry->d_name));
    }
}

/*
 * remove_directory_tree:
 * @parent_fd: the directory holding @name
 * @name: the directory to remove
 * @top: the workspace-relative display path of @name, for messages
 * @error: return location for a #GError
 *
 * Removes a directory tree without recursion and with two fds at most,
 * whatever its depth: each directory is opened O_NOFOLLOW relative to its
 * parent, and the walk returns upwards through "..", checking that ".." is
 * the very directory (device and inode) it came from. If the guest moved a
 * directory meanwhile, the walk stops instead of wandering outside.
 *
 * Returns: %TRUE when @name is gone
 */
static gboolean
remove_directory_tree (int          parent_fd,
                       const char  *name,
                       const char  *top,
                       GError     **error)
{
  g_autoptr(GArray) levels = g_array_new (FALSE, TRUE, sizeof (RemoveLevel));
  g_autofree guint8 *buffer = g_malloc (SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE);
  g_auto(SandboxWorkspaceFd) fd = -1;
  g_autofree char *failed_name = NULL;
  g_autofree char *path = NULL;
  RemoveLevel *level;
  guint top_retries = 0;
  struct stat st;
  int saved_errno;

  g_array_set_clear_func (levels, remove_level_clear);

reopen_top:
  fd = open_directory_nofollow (parent_fd, name, &st);
  if (fd < 0)
    {
      if (errno == ENOENT)
        return TRUE;
      if (errno == ENOTDIR || errno == ELOOP)
        {
          /* Swapped for a non-directory since the caller looked. */
          if (unlinkat (parent_fd, name, 0) == 0 || errno == ENOENT)
            return TRUE;
        }
      return sandbox_workspace_set_errno_error (error, errno, "remove", top);
    }
  g_array_set_size (levels, 1);
  level = &g_array_index (levels, RemoveLevel, 0);
  level->dev = st.st_dev;
  level->ino = st.st_ino;

  while (TRUE)
    {
      level = &g_array_index (levels, RemoveLevel, levels->len - 1);

      if (level->subdirectories == NULL && !scan_directory (fd, level, buffer, &failed_name))
        goto failed;

      if (level->subdirectories->len > 0)
        {
          g_autofree char *child = g_ptr_array_steal_index_fast (level->subdirectories,
                                                                  level->subdirectories->len - 1);
          int child_fd = open_directory_nofollow (fd, child, &st);
          RemoveLevel next = { 0, };

          if (child_fd < 0)
            {
              if (errno == ENOENT)
                continue;
              if ((errno != ENOTDIR && errno != ELOOP) ||
                  (unlinkat (fd, child, 0) < 0 && errno != ENOENT))
                {
                  failed_name = g_steal_pointer (&child);
                  goto failed;
                }
              continue;
            }

          next.dev = st.st_dev;
          next.ino = st.st_ino;
          level->child = g_steal_pointer (&child);
          g_array_append_val (levels, next);
          sandbox_workspace_fd_clear (&fd);
          fd = child_fd;
          continue;
        }

      /* This directory is empty: go up and remove it. */
      if (levels->len == 1)
        {
          sandbox_workspace_fd_clear (&fd);
          if (unlinkat (parent_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
            return TRUE;
          if (errno == ENOTEMPTY && ++top_retries < REMOVE_RETRIES)
            {
              /* Something appeared meanwhile: start over at the top. */
              g_array_set_size (levels, 0);
              goto reopen_top;
            }
          return sandbox_workspace_set_errno_error (error, errno, "remove", top);
        }
      else
        {
          int up_fd = openat (fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
          RemoveLevel *parent = &g_array_index (levels, RemoveLevel, levels->len - 2);

          if (up_fd < 0)
            goto failed;
          if (fstat (up_fd, &st) < 0 || st.st_dev != parent->dev || st.st_ino != parent->ino)
            {
              sandbox_workspace_fd_close (up_fd);
              path = remove_error_path (levels, top, NULL);
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                           "Cannot remove ‘%s’: it was moved during removal", path);
              return FALSE;
            }

          g_array_set_size (levels, levels->len - 1);
          sandbox_workspace_fd_clear (&fd);
          fd = up_fd;
          parent = &g_array_index (levels, RemoveLevel, levels->len - 1);

          if (unlinkat (fd, parent->child, AT_REMOVEDIR) < 0 && errno != ENOENT)
            {
              if (errno != ENOTEMPTY || ++parent->retries >= REMOVE_RETRIES)
                {
                  failed_name = g_steal_pointer (&parent->child);
                  goto failed;
                }
              /* Filled up again meanwhile: queue it for another pass. */
              g_ptr_array_add (parent->subdirectories, g_steal_pointer (&parent->child));
            }
          g_clear_pointer (&parent->child, g_free);
        }
    }

failed:
  saved_errno = errno;
  path = remove_error_path (levels, top, failed_name);
  return sandbox_workspace_set_errno_error (error, saved_errno, "remove", path);
}

/*
 * sandbox_workspace_remove_entry:
 * @parent_fd: the directory holding @name
 * @name: an entry name
 * @top: the display path of @name, for messages
 * @error: return location for a #GError
 *
 * Removes @name whatever it is; a symbolic link is unlinked, never followed;
 * a missing entry is success.
 *
 * Returns: %TRUE when @name is gone
 */
gboolean
sandbox_workspace_remove_entry (int          parent_fd,
                                const char  *name,
                                const char  *top,
                                GError     **error)
{
  if (unlinkat (parent_fd, name, 0) == 0 || errno == ENOENT)
    return TRUE;

  /* Linux answers EISDIR for a directory; EPERM is what POSIX allows. */
  if (errno != EISDIR && errno != EPERM)
    return sandbox_workspace_set_errno_error (error, errno, "remove", top);

  return remove_directory_tree (parent_fd, name, top, error);
}

/**
 * sandbox_workspace_remove:
 * @self: a workspace
 * @relative: a canonical workspace-relative path other than "."
 * @error: return location for a #GError
 *
 * Removes a file or a directory tree, like `rm -rf`, without ever following
 * a symbolic link: a link is unlinked and its target left alone. Parent
 * components are resolved beneath the root; a missing path is success. The
 * root itself is %SANDBOX_ERROR_PATH.
 *
 * Returns: %TRUE when the path no longer exists
 */
gboolean
sandbox_workspace_remove (SandboxWorkspace  *self,
                          const char        *relative,
                          GError           **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!sandbox_workspace_check_relative (relative, error))
    return FALSE;

  if (strcmp (relative, ".") == 0)
    return sandbox_set_error_workspace_root (error);
  return self->ops->remove (self, relative, error);
}

/* The removal of a plain workspace: what sandbox_workspace_remove() says
 * once the path is checked and is not ".". */
gboolean
sandbox_workspace_plain_remove (SandboxWorkspace  *self,
                                const char        *relative,
                                GError           **error)
{
  g_auto(SandboxWorkspaceFd) parent_fd = -1;
  g_autofree char *parent = NULL;
  const char *name;

  name = sandbox_workspace_split_parent (relative, &parent);
  if (parent != NULL)
    {
      parent_fd = sandbox_workspace_open_beneath (self->fd, parent, O_PATH | O_DIRECTORY, 0);
      if (parent_fd < 0)
        {
          if (errno == ENOENT)
            return TRUE;
          return sandbox_workspace_set_errno_error (error, errno, "remove", relative);
        }
    }

  return sandbox_workspace_remove_entry (parent_fd >= 0 ? parent_fd : self->fd, name, relative,
                                         error);
}

/**
 * sandbox_workspace_remove_tree_at: (skip)
 * @parent_fd: a directory fd
 * @name: the entry of @parent_fd to remove
 * @error: return location for a #GError
 *
 * `rm -rf` of one entry of @parent_fd that never follows symbolic links and
 * works at any depth with a constant number of fds. A missing entry is
 * success; @name must be a single entry name
 * (%G_IO_ERROR_INVALID_ARGUMENT otherwise). For a store's session
 * directories, whose workspace the guest shaped.
 *
 * Returns: %TRUE when @name no longer exists
 */
gboolean
sandbox_workspace_remove_tree_at (int          parent_fd,
                                  const char  *name,
                                  GError     **error)
{
  g_return_val_if_fail (parent_fd >= 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!sandbox_workspace_check_entry_name (name, error))
    return FALSE;

  return sandbox_workspace_remove_entry (parent_fd, name, name, error);
}

