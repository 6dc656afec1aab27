/* sandbox-workspace-copy.c — copying a template in, re-owning a tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A copy creates every entry itself (O_CREAT | O_EXCL, mkdirat, symlinkat)
 * and gives it to its owner by descriptor before anything else sees it.
 * Symbolic links are copied as links (their targets read with readlinkat()
 * and never resolved on the host). Re-owning a
 * tree someone else left never reaches anything through a link.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-workspace-private.h"

/* Templates are trusted host data, but their depth still bounds recursion and
 * the fds held open (two per level) while copying. */
#define COPY_MAX_DEPTH 256

#define COPY_BUFFER_SIZE (128 * 1024)

/* Re-owning a whole tree bounds its recursion (one fd per level). */
#define GIVE_MAX_DEPTH 512

/* The state of one copy_tree() call, shared by all its files. */
typedef struct
{
  GCancellable *cancellable;
  guint8       *dirents;
  guint8       *buffer;           /* for the read/write fallback, lazily */
  gboolean      try_clone;        /* FICLONE works between these filesystems */
  gboolean      try_copy_range;   /* copy_file_range() works */
  const SandboxWorkspaceOwner *owner;   /* who gets the copies; NULL: the host */
  SandboxWorkspaceCopyProgress progress;   /* NULL: nobody asked */
  gpointer      progress_data;
  guint64       files_done;       /* regular files and links */
  guint64       bytes_done;
  gint64        last_report;      /* monotonic µs */
} CopyState;

/*
 * count_copied:
 * @state: the copy's state
 * @bytes: the size of the file just copied (0 for a link)
 *
 * Counts one more file and reports the counts if the last report is
 * SANDBOX_WORKSPACE_COPY_PROGRESS_INTERVAL old: one clock read per file,
 * which is nothing next to the file's open, create and copy.
 */
static void
count_copied (CopyState *state,
              guint64    bytes)
{
  gint64 now;

  state->files_done++;
  state->bytes_done += bytes;
  if (state->progress == NULL)
    return;
  now = g_get_monotonic_time ();
  if (now - state->last_report < SANDBOX_WORKSPACE_COPY_PROGRESS_INTERVAL)
    return;
  state->last_report = now;
  state->progress (state->files_done, state->bytes_done, state->progress_data);
}

/*
 * copy_is_unsupported:
 * @saved_errno: the errno of a failed FICLONE or copy_file_range()
 *
 * Returns: whether the failure means "not supported here", so the next,
 *   plainer method should be used instead
 */
static gboolean
copy_is_unsupported (int saved_errno)
{
  return saved_errno == EOPNOTSUPP || saved_errno == ENOTTY || saved_errno == EXDEV ||
         saved_errno == EINVAL || saved_errno == ENOSYS || saved_errno == EBADF ||
         saved_errno == ETXTBSY || saved_errno == EPERM;
}

/*
 * copy_contents:
 * @state: the copy's state
 * @src_fd: a regular file open for reading, at offset 0
 * @dst_fd: an empty file open for writing
 * @size: @src_fd's size
 *
 * Copies the bytes the cheapest way the filesystems allow: a reflink, then
 * copy_file_range() in the kernel, then read() and write(). A method found
 * unsupported is not tried again for the rest of the tree.
 *
 * Returns: %TRUE, or %FALSE with errno set
 */
static gboolean
copy_contents (CopyState *state,
               int        src_fd,
               int        dst_fd,
               off_t      size)
{
  off_t copied = 0;

  if (size == 0)
    return TRUE;

  if (state->try_clone)
    {
      if (ioctl (dst_fd, FICLONE, src_fd) == 0)
        return TRUE;
      if (!copy_is_unsupported (errno))
        return FALSE;
      state->try_clone = FALSE;
    }

  while (state->try_copy_range && copied < size)
    {
      ssize_t n = copy_file_range (src_fd, NULL, dst_fd, NULL, size - copied, 0);

      if (n > 0)
        copied += n;
      else if (n == 0)
        return TRUE;  /* shrank meanwhile */
      else if (errno == EINTR)
        continue;
      else if (copied == 0 && copy_is_unsupported (errno))
        state->try_copy_range = FALSE;
      else
        return FALSE;
    }
  if (copied >= size)
    return TRUE;

  if (state->buffer == NULL)
    state->buffer = g_malloc (COPY_BUFFER_SIZE);

  while (TRUE)
    {
      ssize_t n = TEMP_FAILURE_RETRY (read (src_fd, state->buffer, COPY_BUFFER_SIZE));

      if (n < 0)
        return FALSE;
      if (n == 0)
        return TRUE;
      if (!sandbox_workspace_write_all (dst_fd, state->buffer, n))
        return FALSE;
    }
}

/*
 * copy_file:
 * @state: the copy's state
 * @src_dir_fd: the source directory
 * @dst_dir_fd: the destination directory
 * @name: the entry to copy
 * @path: its path below the top of the copy, for messages
 * @error: return location for a #GError
 *
 * Copies one regular file into a new file of mode 0600, or 0700 if any of
 * its execute bits is set. Anything else (a symbolic link swapped in since
 * the directory was listed included) is refused with
 * %G_IO_ERROR_NOT_REGULAR_FILE.
 *
 * Returns: %TRUE on success
 */
static gboolean
copy_file (CopyState   *state,
           int          src_dir_fd,
           int          dst_dir_fd,
           const char  *name,
           const char  *path,
           GError     **error)
{
  g_auto(SandboxWorkspaceFd) src_fd = -1;
  g_auto(SandboxWorkspaceFd) dst_fd = -1;
  struct stat st;
  mode_t mode;

  src_fd = openat (src_dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (src_fd < 0 && errno != ELOOP)
    return sandbox_workspace_set_errno_error (error, errno, "copy", path);
  if (src_fd < 0 || fstat (src_fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                   "Cannot copy ‘%s’: templates hold only regular files, directories and "
                   "symbolic links", path);
      return FALSE;
    }

  mode = (st.st_mode & 0111) != 0 ? 0700 : 0600;
  dst_fd = openat (dst_dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                   mode);
  if (dst_fd < 0)
    return sandbox_workspace_set_errno_error (error, errno, "copy", path);

  if ((mode != 0600 && fchmod (dst_fd, mode) < 0) ||
      !sandbox_workspace_give_to_owner (dst_fd, state->owner) ||
      !copy_contents (state, src_fd, dst_fd, st.st_size) ||
      (close (g_steal_fd (&dst_fd)) < 0 && errno != EINTR))
    return sandbox_workspace_set_errno_error (error, errno, "copy", path);

  count_copied (state, st.st_size);
  return TRUE;
}

/*
 * copy_symlink:
 * @state: the copy's state
 * @src_dir_fd: the source directory
 * @dst_dir_fd: the destination directory
 * @name: the symbolic link to copy
 * @path: its path below the top of the copy, for messages
 * @error: return location for a #GError
 *
 * Creates a symbolic link with the same target, verbatim, and gives the link
 * itself (not what it points to) to the copy's owner. Nothing is resolved.
 *
 * Returns: %TRUE on success
 */
static gboolean
copy_symlink (CopyState   *state,
              int          src_dir_fd,
              int          dst_dir_fd,
              const char  *name,
              const char  *path,
              GError     **error)
{
  g_auto(SandboxWorkspaceFd) link_fd = -1;
  char target[PATH_MAX];
  ssize_t n = readlinkat (src_dir_fd, name, target, sizeof target);

  if (n < 0 || (gsize) n >= sizeof target)
    return sandbox_workspace_set_errno_error (error, n < 0 ? errno : ENAMETOOLONG, "copy", path);
  target[n] = '\0';

  if (symlinkat (target, dst_dir_fd, name) < 0)
    return sandbox_workspace_set_errno_error (error, errno, "copy", path);
  link_fd = openat (dst_dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (link_fd < 0 || !sandbox_workspace_give_to_owner (link_fd, state->owner))
    return sandbox_workspace_set_errno_error (error, errno, "copy", path);
  count_copied (state, 0);
  return TRUE;
}

static gboolean copy_directory (CopyState   *state,
                                int          src_fd,
                                int          dst_fd,
                                const char  *path,
                                guint        depth,
                                GError     **error);

/*
 * copy_subdirectory:
 * @state: the copy's state
 * @src_dir_fd: the source directory
 * @dst_dir_fd: the destination directory
 * @name: the subdirectory to copy
 * @path: its path below the top of the copy, for messages
 * @depth: its depth below the top
 * @error: return location for a #GError
 *
 * Creates @name (mode 0700) in the destination and copies into it.
 *
 * Returns: %TRUE on success
 */
static gboolean
copy_subdirectory (CopyState   *state,
                   int          src_dir_fd,
                   int          dst_dir_fd,
                   const char  *name,
                   const char  *path,
                   guint        depth,
                   GError     **error)
{
  g_auto(SandboxWorkspaceFd) src_fd = -1;
  g_auto(SandboxWorkspaceFd) dst_fd = -1;

  if (depth > COPY_MAX_DEPTH)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_TOO_MANY_LINKS,
                   "Cannot copy ‘%s’: directories nest deeper than %d levels", path, COPY_MAX_DEPTH);
      return FALSE;
    }

  src_fd = openat (src_dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (src_fd < 0)
    return sandbox_workspace_set_errno_error (error, errno, "copy", path);

  if (mkdirat (dst_dir_fd, name, 0700) < 0)
    return sandbox_workspace_set_errno_error (error, errno, "copy", path);
  dst_fd = openat (dst_dir_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dst_fd < 0 || !sandbox_workspace_give_to_owner (dst_fd, state->owner))
    return sandbox_workspace_set_errno_error (error, errno, "copy", path);

  return copy_directory (state, src_fd, dst_fd, path, depth, error);
}

/*
 * copy_directory:
 * @state: the copy's state
 * @src_fd: a source directory open for reading
 * @dst_fd: the empty destination directory
 * @path: the path of @src_fd below the top of the copy ("" at the top)
 * @depth: the depth of @src_fd below the top
 * @error: return location for a #GError
 *
 * Copies the files of @src_fd while listing it, then its subdirectories, so
 * one listing buffer serves the whole tree.
 *
 * Returns: %TRUE on success
 */
static gboolean
copy_directory (CopyState   *state,
                int          src_fd,
                int          dst_fd,
                const char  *path,
                guint        depth,
                GError     **error)
{
  g_autoptr(GPtrArray) subdirectories = g_ptr_array_new_with_free_func (g_free);
  SandboxWorkspaceDirents dirents;

  sandbox_workspace_dirents_init (&dirents, src_fd, state->dirents);
  while (TRUE)
    {
      struct dirent64 *entry;
      const char *name;
      g_autofree char *entry_path = NULL;
      unsigned char type;

      if (!sandbox_workspace_dirents_next (&dirents, &entry))
        return sandbox_workspace_set_errno_error (error, errno, "copy", path[0] ? path : ".");
      if (entry == NULL)
        break;

      if (g_cancellable_set_error_if_cancelled (state->cancellable, error))
        return FALSE;

      name = entry->d_name;
      if (entry->d_type == DT_DIR)
        {
          g_ptr_array_add (subdirectories, g_strdup (name));
          continue;
        }

      entry_path = path[0] ? g_strconcat (path, "/", name, NULL) : g_strdup (name);
      type = entry->d_type;
      if (type == DT_UNKNOWN)
        {
          struct stat st;

          if (fstatat (src_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            return sandbox_workspace_set_errno_error (error, errno, "copy", entry_path);
          type = S_ISDIR (st.st_mode) ? DT_DIR : S_ISLNK (st.st_mode) ? DT_LNK : DT_REG;
        }
      if (type == DT_DIR)
        {
          g_ptr_array_add (subdirectories, g_strdup (name));
          continue;
        }

      /* copy_file() refuses special files, and links swapped in meanwhile. */
      if (type == DT_LNK ? !copy_symlink (state, src_fd, dst_fd, name, entry_path, error)
                         : !copy_file (state, src_fd, dst_fd, name, entry_path, error))
        return FALSE;
    }

  for (guint i = 0; i < subdirectories->len; i++)
    {
      const char *name = subdirectories->pdata[i];
      g_autofree char *entry_path = path[0] ? g_strconcat (path, "/", name, NULL) : g_strdup (name);

      if (!copy_subdirectory (state, src_fd, dst_fd, name, entry_path, depth + 1, error))
        return FALSE;
    }

  return TRUE;
}

/**
 * sandbox_workspace_copy_tree_at: (skip)
 * @src_dir_fd: the directory whose contents to copy (may be O_PATH)
 * @dst_parent_fd: the directory to create the copy in
 * @dst_name: the name of the new directory; it must not exist
 * @owner: (nullable): who gets the copy (the new directory and everything
 *   in it), or %NULL to keep the host's ids
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Creates @dst_name (mode 0700) and copies the tree of @src_dir_fd into it:
 * directories with mode 0700, regular files with mode 0600 (0700 if any of
 * their execute bits is set), contents by reflink where the filesystem can,
 * else copy_file_range(), else read and write, and symbolic links as links
 * with the same target, never followed. FIFOs, sockets and devices are
 * refused with %G_IO_ERROR_NOT_REGULAR_FILE rather than skipped, since a
 * template never holds them and silently dropping files would hand out a
 * different workspace. On failure the partial copy is removed.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_workspace_copy_tree_at (int                          src_dir_fd,
                                int                          dst_parent_fd,
                                const char                  *dst_name,
                                const SandboxWorkspaceOwner *owner,
                                GCancellable                *cancellable,
                                GError                     **error)
{
  return sandbox_workspace_copy_tree_with_progress_at (src_dir_fd, dst_parent_fd, dst_name, owner,
                                                       NULL, NULL, cancellable, error);
}

/**
 * sandbox_workspace_copy_tree_with_progress_at: (skip)
 * @src_dir_fd: the directory whose contents to copy (may be O_PATH)
 * @dst_parent_fd: the directory to create the copy in
 * @dst_name: the name of the new directory; it must not exist
 * @owner: (nullable): who gets the copy, or %NULL to keep the host's ids
 * @progress: (nullable): called with the counts of files and bytes copied so
 *   far, at most every %SANDBOX_WORKSPACE_COPY_PROGRESS_INTERVAL while it
 *   copies, and once with the final counts when the copy succeeded (not
 *   when it failed)
 * @progress_data: data for @progress
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Copies as [func@Sandbox.Workspace.copy_tree_at] does, and reports how far
 * it is. Files are regular files and symbolic links (directories are not
 * counted), bytes those of the regular files: the counts a store's
 * [class@Sandbox.TemplateInfo] gives for the same tree.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_workspace_copy_tree_with_progress_at (int                          src_dir_fd,
                                              int                          dst_parent_fd,
                                              const char                  *dst_name,
                                              const SandboxWorkspaceOwner *owner,
                                              SandboxWorkspaceCopyProgress progress,
                                              gpointer                     progress_data,
                                              GCancellable                *cancellable,
                                              GError                     **error)
{
  g_auto(SandboxWorkspaceFd) src_fd = -1;
  g_auto(SandboxWorkspaceFd) dst_fd = -1;
  g_autofree guint8 *dirents = NULL;
  g_autofree guint8 *buffer = NULL;
  CopyState state = {
    .cancellable = cancellable,
    .try_clone = TRUE,
    .try_copy_range = TRUE,
    .owner = owner,
    .progress = progress,
    .progress_data = progress_data,
    /* The first file is reported only after an interval: a small tree's
     * only report is the final one. */
    .last_report = g_get_monotonic_time (),
  };
  gboolean copied;

  g_return_val_if_fail (src_dir_fd >= 0, FALSE);
  g_return_val_if_fail (dst_parent_fd >= 0, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!sandbox_workspace_check_entry_name (dst_name, error))
    return FALSE;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  src_fd = openat (src_dir_fd, ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  if (src_fd < 0)
    return sandbox_workspace_set_errno_error (error, errno, "copy", ".");

  if (mkdirat (dst_parent_fd, dst_name, 0700) < 0)
    return sandbox_workspace_set_errno_error (error, errno, "create", dst_name);

  dst_fd = openat (dst_parent_fd, dst_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dst_fd < 0 || !sandbox_workspace_give_to_owner (dst_fd, owner))
    copied = sandbox_workspace_set_errno_error (error, errno, "create", dst_name);
  else
    {
      state.dirents = dirents = g_malloc (SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE);
      copied = copy_directory (&state, src_fd, dst_fd, "", 0, error);
      buffer = state.buffer;
    }

  if (!copied)
    {
      sandbox_workspace_fd_clear (&dst_fd);
      /* Best effort: the caller's error is the copy's, not the cleanup's. */
      sandbox_workspace_remove_tree_at (dst_parent_fd, dst_name, NULL);
    }
  else if (progress != NULL)
    progress (state.files_done, state.bytes_done, progress_data);

  return copied;
}

static gboolean
is_owned_by (const struct stat           *st,
             const SandboxWorkspaceOwner *owner)
{
  return st->st_uid == owner->uid && st->st_gid == owner->gid;
}

/*
 * give_directory:
 * @dir_fd: a directory open for reading
 * @owner: who gets it
 * @dirents: a SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE scratch buffer
 * @path: the path of @dir_fd below the top ("" at the top), for messages
 * @depth: the depth of @dir_fd below the top
 * @error: return location for a #GError
 *
 * Gives every entry of @dir_fd to @owner, each subdirectory after its
 * contents, and @dir_fd itself last. Symbolic links are re-owned
 * themselves (AT_SYMLINK_NOFOLLOW), subdirectories opened with O_NOFOLLOW:
 * nothing is ever reached through a link. An entry that vanished is
 * skipped.
 *
 * Returns: %TRUE on success
 */
static gboolean
give_directory (int                          dir_fd,
                const SandboxWorkspaceOwner *owner,
                guint8                      *dirents,
                const char                  *path,
                guint                        depth,
                GError                     **error)
{
  g_autoptr(GPtrArray) subdirectories = g_ptr_array_new_with_free_func (g_free);
  SandboxWorkspaceDirents listing;
  struct stat st;

  sandbox_workspace_dirents_init (&listing, dir_fd, dirents);
  while (TRUE)
    {
      struct dirent64 *entry;
      const char *name;

      if (!sandbox_workspace_dirents_next (&listing, &entry))
        return sandbox_workspace_set_errno_error (error, errno, "re-own", path[0] ? path : ".");
      if (entry == NULL)
        break;

      name = entry->d_name;
      if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno == ENOENT)
            continue;
          return sandbox_workspace_set_errno_error (error, errno, "re-own", name);
        }
      if (S_ISDIR (st.st_mode))
        g_ptr_array_add (subdirectories, g_strdup (name));
      else if (!is_owned_by (&st, owner) &&
               fchownat (dir_fd, name, owner->uid, owner->gid, AT_SYMLINK_NOFOLLOW) < 0 &&
               errno != ENOENT)
        return sandbox_workspace_set_errno_error (error, errno, "re-own", name);
    }

  for (guint i = 0; i < subdirectories->len; i++)
    {
      const char *name = subdirectories->pdata[i];
      g_autofree char *entry_path = path[0] ? g_strconcat (path, "/", name, NULL) : g_strdup (name);
      g_auto(SandboxWorkspaceFd) fd = -1;

      if (depth >= GIVE_MAX_DEPTH)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_TOO_MANY_LINKS,
                       "Cannot re-own ‘%s’: directories nest deeper than %d levels",
                       entry_path, GIVE_MAX_DEPTH);
          return FALSE;
        }
      fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT)
        continue;
      if (fd < 0)
        return sandbox_workspace_set_errno_error (error, errno, "re-own", entry_path);
      if (!give_directory (fd, owner, dirents, entry_path, depth + 1, error))
        return FALSE;
    }

  if (fstat (dir_fd, &st) < 0 ||
      (!is_owned_by (&st, owner) && fchown (dir_fd, owner->uid, owner->gid) < 0))
    return sandbox_workspace_set_errno_error (error, errno, "re-own", path[0] ? path : ".");
  return TRUE;
}

/**
 * sandbox_workspace_give_tree_at: (skip)
 * @parent_fd: the directory holding the tree
 * @name: the tree's top directory in @parent_fd
 * @owner: who gets it
 * @error: return location for a #GError
 *
 * Gives the whole tree @name and everything in it to @owner, without
 * following any link, the top directory last: a tree whose top belongs to
 * @owner was given whole, even if an earlier call was interrupted. Entries
 * that already belong to @owner are left alone. For a workspace no guest
 * runs in (the caller holds its lease): one a guest of another identity
 * left. Setuid and setgid bits of re-owned files are cleared by the kernel.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_workspace_give_tree_at (int                          parent_fd,
                                const char                  *name,
                                const SandboxWorkspaceOwner *owner,
                                GError                     **error)
{
  g_auto(SandboxWorkspaceFd) fd = -1;
  g_autofree guint8 *dirents = NULL;

  g_return_val_if_fail (parent_fd >= 0, FALSE);
  g_return_val_if_fail (owner != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!sandbox_workspace_check_entry_name (name, error))
    return FALSE;
  fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return sandbox_workspace_set_errno_error (error, errno, "re-own", name);
  dirents = g_malloc (SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE);
  return give_directory (fd, owner, dirents, "", 0, error);
}


/**
 * sandbox_workspace_copy_tree:
 * @self: the workspace to copy (a template's files)
 * @destination: the workspace to create the copy in
 * @name: the name of the new directory in @destination's root; it must
 *   not exist
 * @owner: (nullable): who gets the copy, or %NULL to keep the host's ids
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Copies the whole tree of @self into a new directory @name of
 * @destination, as [func@Sandbox.Workspace.copy_tree_at] does: a store keeps
 * its sessions' directories in @destination and makes @name a new
 * session's workspace, owned by @owner from the start. An overlay
 * workspace ([func@Sandbox.Workspace.open_overlay]) cannot be copied this
 * way (%G_IO_ERROR_NOT_SUPPORTED): its tree is two layers.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_workspace_copy_tree (SandboxWorkspace             *self,
                             SandboxWorkspace             *destination,
                             const char                   *name,
                             const SandboxWorkspaceOwner  *owner,
                             GCancellable                 *cancellable,
                             GError                      **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (destination != NULL, FALSE);

  if (self->lower_fd >= 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "Cannot copy an overlay workspace as one tree");
      return FALSE;
    }
  return sandbox_workspace_copy_tree_at (self->fd, destination->fd, name, owner, cancellable,
                                         error);
}
