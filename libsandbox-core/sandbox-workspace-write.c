/* sandbox-workspace-write.c — replacing files in a hostile workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Writes go to an unnamed O_TMPFILE file that is then linked into place (a
 * new target) or linked under a temporary name and renamed over it (an
 * existing one), so a planted symbolic link or guest hard link is replaced,
 * never written through, a failed write leaves nothing half-written and a
 * host killed mid-write leaves no temporary behind. Where the filesystem has
 * no O_TMPFILE: a named O_EXCL temporary file, which recovery removes
 * (sandbox_workspace_remove_temporaries()).
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-workspace-private.h"

/*
 * sandbox_workspace_owner_of_root:
 * @root_fd: the workspace root
 * @owner: (out): its owner and group
 *
 * Returns: whether what the host creates must be given to @owner: %FALSE
 *   when the host is the owner (or the root cannot be examined, in which
 *   case the creation that follows fails on its own)
 */
gboolean
sandbox_workspace_owner_of_root (int                    root_fd,
                                 SandboxWorkspaceOwner *owner)
{
  struct stat st;

  if (fstat (root_fd, &st) < 0)
    return FALSE;
  owner->uid = st.st_uid;
  owner->gid = st.st_gid;
  return st.st_uid != geteuid () || st.st_gid != getegid ();
}

/*
 * open_parent_creating:
 * @root_fd: the workspace root
 * @parent: the workspace-relative path of the directory to open
 * @relative: the path being written, for messages
 * @owner: (nullable): who gets the directories created, or %NULL
 * @error: return location for a #GError
 *
 * Opens @parent beneath the root, creating missing directories (mode 0700,
 * given to @owner) one component at a time. Each mkdirat() runs on a
 * directory fd that was itself resolved beneath the root, and each new
 * component is re-resolved from the root, so a directory the guest swaps
 * for a symbolic link mid-way is either followed inside the workspace or
 * refused.
 *
 * Returns: an O_PATH directory fd, or -1 with @error set
 */
static int
open_parent_creating (int                          root_fd,
                      const char                  *parent,
                      const char                  *relative,
                      const SandboxWorkspaceOwner *owner,
                      GError                     **error)
{
  g_auto(SandboxWorkspaceFd) current_fd = -1;
  g_autofree char *prefix = NULL;
  const char *segment;
  int fd;

  fd = sandbox_workspace_open_beneath (root_fd, parent, O_PATH | O_DIRECTORY, 0);
  if (fd >= 0)
    return fd;
  if (errno != ENOENT)
    goto failed;

  prefix = g_strdup (parent);
  segment = parent;
  while (TRUE)
    {
      const char *end = strchrnul (segment, '/');
      g_autofree char *name = g_strndup (segment, end - segment);

      prefix[end - parent] = '\0';
      fd = sandbox_workspace_open_beneath (root_fd, prefix, O_PATH | O_DIRECTORY, 0);
      if (fd < 0 && errno == ENOENT)
        {
          gboolean created = mkdirat (current_fd >= 0 ? current_fd : root_fd, name, 0700) == 0;

          if (!created && errno != EEXIST)
            goto failed;
          fd = sandbox_workspace_open_beneath (root_fd, prefix, O_PATH | O_DIRECTORY, 0);
          /* Should the guest have swapped ours meanwhile, what is given is
           * a directory of its workspace, to its owner: nothing new. */
          if (fd >= 0 && created && !sandbox_workspace_give_to_owner (fd, owner))
            {
              close (fd);
              fd = -1;
            }
        }
      if (fd < 0)
        goto failed;

      sandbox_workspace_fd_clear (&current_fd);
      current_fd = fd;
      if (*end == '\0')
        return g_steal_fd (&current_fd);

      prefix[end - parent] = '/';
      segment = end + 1;
    }

failed:
  if (errno == ENOTDIR)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY,
                   "Cannot write ‘%s’: a parent is not a directory", relative);
      return -1;
    }
  sandbox_workspace_set_errno_error (error, errno, "write", relative);
  return -1;
}

/* Our named temporaries: TEMPORARY_PREFIX, 16 lowercase hex digits,
 * TEMPORARY_SUFFIX. Nothing else is ever removed as one. */
#define TEMPORARY_PREFIX ".sandbox-write-"
#define TEMPORARY_SUFFIX ".tmp"
#define TEMPORARY_DIGITS 16

static gboolean
is_temporary_name (const char *name)
{
  gsize prefix = strlen (TEMPORARY_PREFIX);

  if (strlen (name) != prefix + TEMPORARY_DIGITS + strlen (TEMPORARY_SUFFIX) ||
      !g_str_has_prefix (name, TEMPORARY_PREFIX) || !g_str_has_suffix (name, TEMPORARY_SUFFIX))
    return FALSE;
  for (gsize i = prefix; i < prefix + TEMPORARY_DIGITS; i++)
    if (!g_ascii_isdigit (name[i]) && !(name[i] >= 'a' && name[i] <= 'f'))
      return FALSE;
  return TRUE;
}

/*
 * sandbox_workspace_make_temporary:
 * @dir_fd: the directory to make the entry in
 * @name: (out caller-allocates): a buffer of at least 64 bytes for its name
 * @make: makes the entry
 * @data: data for @make
 *
 * Draws a fresh random temporary name into @name and has @make make an
 * entry under it in @dir_fd; a name taken (EEXIST, a link planted there
 * included: nothing @make does may follow one) draws another, up to 16.
 *
 * Returns: what @make returned (an fd, or 0), or -1 with errno set
 */
int
sandbox_workspace_make_temporary (int                              dir_fd,
                                  char                            *name,
                                  SandboxWorkspaceMakeTemporaryFunc  make,
                                  gpointer                         data)
{
  for (guint attempt = 0; attempt < 16; attempt++)
    {
      int result;

      g_snprintf (name, 64, TEMPORARY_PREFIX "%08x%08x" TEMPORARY_SUFFIX,
                  g_random_int (), g_random_int ());
      result = make (dir_fd, name, data);
      if (result >= 0 || errno != EEXIST)
        return result;
    }

  errno = EEXIST;
  return -1;
}

/*
 * open_new_file:
 *
 * Creates a file of mode 0600 (a SandboxWorkspaceMakeTemporaryFunc).
 * O_CREAT | O_EXCL never follows a symbolic link, so a link planted at the
 * name fails with EEXIST. Only where O_TMPFILE is missing: a crash while
 * it exists leaves it behind (sandbox_workspace_remove_temporaries()).
 *
 * Returns: the fd open for writing, or -1 with errno set
 */
static int
open_new_file (int         dir_fd,
               const char *name,
               gpointer    data)
{
  return openat (dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                 0600);
}

/* Whether openat(O_TMPFILE) failed because the filesystem (EOPNOTSUPP) or
 * the kernel (EISDIR: O_TMPFILE includes O_DIRECTORY) has no unnamed
 * files. */
static gboolean
unnamed_files_unsupported (int saved_errno)
{
  return saved_errno == EOPNOTSUPP || saved_errno == EISDIR || saved_errno == EINVAL;
}

/*
 * create_unnamed:
 * @dir_fd: the directory the file will be linked into
 * @flags: the workspace's flags
 *
 * Creates an unnamed file (O_TMPFILE, mode 0600) on @dir_fd's filesystem.
 * It has no directory entry until link_unnamed() gives it one, so a host
 * killed while writing it leaves nothing behind.
 *
 * Returns: the fd open for writing, or -1 with errno set
 */
static int
create_unnamed (int                    dir_fd,
                SandboxWorkspaceFlags  flags)
{
  /* As on a filesystem without O_TMPFILE. */
  if (flags & SANDBOX_WORKSPACE_FLAGS_NAMED_TEMPORARIES)
    {
      errno = EOPNOTSUPP;
      return -1;
    }
  return openat (dir_fd, ".", O_TMPFILE | O_WRONLY | O_NOCTTY | O_CLOEXEC, 0600);
}

/*
 * link_unnamed:
 * @fd: an unnamed file from create_unnamed()
 * @dir_fd: the directory to link it into
 * @name: its new entry name
 *
 * Gives @fd the name @name, atomically and only if nothing is there:
 * linkat() never follows or replaces an existing entry (EEXIST). Before Linux
 * 6.10, linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH (ENOENT otherwise);
 * the /proc/self/fd link works for whoever opened the file.
 *
 * Returns: %TRUE when @name is the file, or %FALSE with errno set
 */
static gboolean
link_unnamed (int         fd,
              int         dir_fd,
              const char *name)
{
  char proc_path[64];

  if (linkat (fd, "", dir_fd, name, AT_EMPTY_PATH) == 0)
    return TRUE;
  if (errno != ENOENT && errno != EPERM)
    return FALSE;
  g_snprintf (proc_path, sizeof proc_path, "/proc/self/fd/%d", fd);
  return linkat (AT_FDCWD, proc_path, dir_fd, name, AT_SYMLINK_FOLLOW) == 0;
}

/* Links the unnamed file @data (an fd) as @name in @dir_fd (a
 * SandboxWorkspaceMakeTemporaryFunc). */
static int
link_unnamed_as (int         dir_fd,
                 const char *name,
                 gpointer    data)
{
  return link_unnamed (GPOINTER_TO_INT (data), dir_fd, name) ? 0 : -1;
}

/*
 * move_into_place:
 * @dir_fd: the directory holding both names
 * @temporary: the name of the finished temporary file
 * @name: the target name
 *
 * Atomically puts @temporary in place of @name: readers see the old entry or
 * the new file, never neither. An existing entry is exchanged with
 * RENAME_EXCHANGE and then unlinked under the temporary name, rather than
 * renamed over: on ext4 a rename over an existing file starts writeback of
 * the new data (auto_da_alloc), which costs ~100 µs per write. The entry
 * unlinked is whatever the guest had at @name, link or not; unlinkat() never
 * follows it. If the guest put a directory there meanwhile, the exchange is
 * undone and the write fails with EISDIR.
 *
 * Returns: %TRUE when @name is the new file, or %FALSE with errno set and
 *   the new file still at @temporary
 */
static gboolean
move_into_place (int         dir_fd,
                 const char *temporary,
                 const char *name)
{
  int saved_errno;

  if (renameat2 (dir_fd, temporary, dir_fd, name, RENAME_EXCHANGE) < 0)
    {
      /* No target yet (or a filesystem without exchange): a plain rename. */
      if (errno != ENOENT && errno != EINVAL && errno != ENOSYS)
        return FALSE;
      return renameat (dir_fd, temporary, dir_fd, name) == 0;
    }

  if (unlinkat (dir_fd, temporary, 0) == 0 || errno == ENOENT)
    return TRUE;

  saved_errno = errno;
  renameat2 (dir_fd, temporary, dir_fd, name, RENAME_EXCHANGE);
  errno = saved_errno;
  return FALSE;
}

/* Gives the new file @fd to @owner, fills it with @data, gives it @mode
 * and, if @durable, syncs it. */
static gboolean
fill_file (int                          fd,
           const guint8                *data,
           gsize                        size,
           mode_t                       mode,
           const SandboxWorkspaceOwner *owner,
           gboolean                     durable)
{
  return sandbox_workspace_give_to_owner (fd, owner) &&
         sandbox_workspace_write_all (fd, data, size) &&
         (mode == 0600 || fchmod (fd, mode) == 0) &&
         (!durable || fdatasync (fd) == 0);
}

/* Syncs the directory @dir_fd (an O_PATH fd): a new name in it survives a
 * power loss. */
static gboolean
sync_directory (int dir_fd)
{
  g_auto(SandboxWorkspaceFd) fd = openat (dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  return fd >= 0 && fsync (fd) == 0;
}

/* After the new file got its name: with @durable, the name is synced too. */
static gboolean
finish_write (int          parent_fd,
              gboolean     durable,
              const char  *relative,
              GError     **error)
{
  if (durable && !sync_directory (parent_fd))
    return sandbox_workspace_set_errno_error (error, errno, "sync", relative);
  return TRUE;
}

static gboolean
set_write_error (GError     **error,
                 int          saved_errno,
                 const char  *relative)
{
  if (saved_errno == EISDIR)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY,
                   "Cannot write ‘%s’: it is a directory", relative);
      return FALSE;
    }
  return sandbox_workspace_set_errno_error (error, saved_errno, "write", relative);
}

/*
 * replace_with_named:
 *
 * sandbox_workspace_replace_file() where the filesystem has no O_TMPFILE: the contents go to a
 * named temporary file that is then moved into place. A host killed
 * meanwhile leaves the temporary behind, for
 * sandbox_workspace_remove_temporaries() to remove at recovery.
 */
static gboolean
replace_with_named (int                          parent_fd,
                    const char                  *name,
                    const guint8                *data,
                    gsize                        size,
                    mode_t                       mode,
                    gboolean                     durable,
                    const char                  *relative,
                    const SandboxWorkspaceOwner *owner,
                    GError                     **error)
{
  g_auto(SandboxWorkspaceFd) fd = -1;
  char temporary[64];
  int saved_errno;

  fd = sandbox_workspace_make_temporary (parent_fd, temporary, open_new_file, NULL);
  if (fd < 0)
    return sandbox_workspace_set_errno_error (error, errno, "write", relative);

  if (!fill_file (fd, data, size, mode, owner, durable) ||
      (close (g_steal_fd (&fd)) < 0 && errno != EINTR) ||
      !move_into_place (parent_fd, temporary, name))
    {
      saved_errno = errno;
      unlinkat (parent_fd, temporary, 0);
      return set_write_error (error, saved_errno, relative);
    }
  return finish_write (parent_fd, durable, relative, error);
}

/*
 * sandbox_workspace_replace_file:
 * @parent_fd: the directory holding the target
 * @name: the target's entry name in @parent_fd
 * @contents: the new contents
 * @flags: the workspace's flags: with %SANDBOX_WORKSPACE_FLAGS_DURABLE,
 *   sync the file before it is named and its directory after
 * @inherited_mode: the permission bits of the file the new one shadows
 *   when there is none at @name (an overlay's lower file), or 0
 * @relative: the workspace-relative path, for messages
 * @owner: (nullable): who gets the new file, or %NULL
 * @error: return location for a #GError
 *
 * Writes @contents to an unnamed file (O_TMPFILE) in @parent_fd and then
 * names it: a host killed while writing leaves no file behind. A new target
 * is linked into place directly, atomically and without any other name; an
 * existing one is replaced by linking under a temporary name and moving it
 * into place (move_into_place()): a host killed between those two calls,
 * microseconds apart, leaves the temporary behind, for recovery to remove.
 * Renaming replaces the entry itself, so a symbolic link or a guest hard
 * link at @name is replaced rather than written through. The permission
 * bits of a regular file being replaced (or shadowed: @inherited_mode)
 * are kept, as editing a script in place would. Filesystems without O_TMPFILE (and
 * %SANDBOX_WORKSPACE_FLAGS_NAMED_TEMPORARIES) use replace_with_named().
 * When durable, the file is synced before it is named and its directory
 * after.
 *
 * Returns: %TRUE on success; on failure nothing was changed (but for a
 *   failed sync of the directory, after which the file is in place)
 */
gboolean
sandbox_workspace_replace_file (int                          parent_fd,
                                const char                  *name,
                                GBytes                      *contents,
                                SandboxWorkspaceFlags        flags,
                                mode_t                       inherited_mode,
                                const char                  *relative,
                                const SandboxWorkspaceOwner *owner,
                                GError                     **error)
{
  g_auto(SandboxWorkspaceFd) fd = -1;
  char temporary[64];
  mode_t mode = inherited_mode != 0 ? inherited_mode : 0600;
  gboolean exists = FALSE;
  struct stat st;
  gsize size;
  const guint8 *data = g_bytes_get_data (contents, &size);
  gboolean durable = (flags & SANDBOX_WORKSPACE_FLAGS_DURABLE) != 0;
  int saved_errno;

  if (fstatat (parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (S_ISDIR (st.st_mode))
        return set_write_error (error, EISDIR, relative);
      if (S_ISREG (st.st_mode))
        mode = st.st_mode & 0777;
      exists = TRUE;
    }

  fd = create_unnamed (parent_fd, flags);
  if (fd < 0 && unnamed_files_unsupported (errno))
    return replace_with_named (parent_fd, name, data, size, mode, durable, relative, owner,
                               error);
  if (fd < 0 || !fill_file (fd, data, size, mode, owner, durable))
    return sandbox_workspace_set_errno_error (error, errno, "write", relative);

  /* Nothing there: the file gets its name and nothing else. If the guest
   * put something there meanwhile, it is replaced as below. */
  if (!exists && link_unnamed (fd, parent_fd, name))
    return finish_write (parent_fd, durable, relative, error);
  if (!exists && errno != EEXIST)
    return sandbox_workspace_set_errno_error (error, errno, "write", relative);

  if (sandbox_workspace_make_temporary (parent_fd, temporary, link_unnamed_as,
                                        GINT_TO_POINTER (fd)) < 0)
    return sandbox_workspace_set_errno_error (error, errno, "write", relative);
  if (!move_into_place (parent_fd, temporary, name))
    {
      saved_errno = errno;
      unlinkat (parent_fd, temporary, 0);
      return set_write_error (error, saved_errno, relative);
    }
  return finish_write (parent_fd, durable, relative, error);
}

/**
 * sandbox_workspace_write:
 * @self: a workspace
 * @relative: a canonical workspace-relative path
 * @contents: the new contents
 * @max_bytes: the largest contents accepted
 * @error: return location for a #GError
 *
 * Replaces a workspace file atomically, creating missing parent directories
 * with mode 0700. Contents over @max_bytes are %SANDBOX_ERROR_LIMIT before
 * anything is touched; a parent that is not a directory is
 * %G_IO_ERROR_NOT_DIRECTORY, a target that is a directory
 * %G_IO_ERROR_IS_DIRECTORY, a parent leading out of the workspace
 * %SANDBOX_ERROR_PATH. A new file gets mode 0600; a regular file replaced
 * keeps its permission bits. The file and the directories created belong
 * to the owner of the workspace root. With
 * %SANDBOX_WORKSPACE_FLAGS_DURABLE the file is synced before it is named
 * and its directory after, so that a power loss leaves the old file or the
 * new one.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_workspace_write (SandboxWorkspace  *self,
                         const char        *relative,
                         GBytes            *contents,
                         gsize              max_bytes,
                         GError           **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!sandbox_workspace_check_relative (relative, error))
    return FALSE;

  if (g_bytes_get_size (contents) > max_bytes)
    return sandbox_set_error_write_limit (error);

  if (strcmp (relative, ".") == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY,
                           "Cannot write ‘.’: it is the workspace directory");
      return FALSE;
    }
  return self->ops->write (self, relative, contents, error);
}

/* The write of a plain workspace: what sandbox_workspace_write() says once
 * the path and the size are checked. */
gboolean
sandbox_workspace_plain_write (SandboxWorkspace  *self,
                               const char        *relative,
                               GBytes            *contents,
                               GError           **error)
{
  g_auto(SandboxWorkspaceFd) parent_fd = -1;
  g_autofree char *parent = NULL;
  SandboxWorkspaceOwner root_owner;
  const SandboxWorkspaceOwner *owner;
  SandboxWorkspaceFsIds fs_ids;
  gboolean written;
  const char *name;

  owner = sandbox_workspace_owner_of_root (self->fd, &root_owner) ? &root_owner : NULL;
  name = sandbox_workspace_split_parent (relative, &parent);
  /* A root host creates as the owner: in a layered session's overlay,
   * whose user namespace maps the owner's ids only, a file made as root
   * could not be owned (EOVERFLOW), and a copied workspace then gets the
   * same rules. */
  fs_ids = sandbox_workspace_fs_ids_enter (owner);
  if (parent != NULL)
    parent_fd = open_parent_creating (self->fd, parent, relative, owner, error);
  written = (parent == NULL || parent_fd >= 0) &&
            sandbox_workspace_replace_file (parent_fd >= 0 ? parent_fd : self->fd, name, contents,
                                            self->flags, 0, relative, owner, error);
  sandbox_workspace_fs_ids_leave (&fs_ids);
  return written;
}

/* Removes our temporaries from the directory @relative (beneath @root_fd,
 * reached through no symbolic link) and queues its subdirectories on
 * @pending. A directory that cannot be opened or read is skipped. */
static void
remove_temporaries_in (int          root_fd,
                       const char  *relative,
                       GQueue      *pending,
                       guint       *removed)
{
  int fd = sandbox_workspace_open_beneath (root_fd, relative, O_RDONLY | O_DIRECTORY,
                                           RESOLVE_NO_SYMLINKS);
  struct dirent *entry;
  DIR *dir;

  if (fd < 0)
    return;
  dir = fdopendir (fd);
  if (dir == NULL)
    {
      close (fd);
      return;
    }

  while ((entry = readdir (dir)) != NULL)
    {
      const char *name = entry->d_name;
      struct stat st;

      if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
        continue;
      /* Most entries are neither a directory nor ours: no stat for them. */
      if (entry->d_type != DT_UNKNOWN && entry->d_type != DT_DIR && !is_temporary_name (name))
        continue;
      if (fstatat (fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISDIR (st.st_mode))
        g_queue_push_tail (pending, strcmp (relative, ".") == 0
                                    ? g_strdup (name)
                                    : g_strconcat (relative, "/", name, NULL));
      else if (S_ISREG (st.st_mode) && is_temporary_name (name) &&
               unlinkat (fd, name, 0) == 0)
        (*removed)++;
    }
  closedir (dir);
}

/**
 * sandbox_workspace_remove_temporaries:
 * @self: a workspace
 *
 * Removes the named temporary files a host killed in the middle of
 * [method@Sandbox.Workspace.write] may have left: regular files named exactly
 * `.sandbox-write-` + 16 lowercase hex digits + `.tmp`, anywhere beneath
 * the root. Symbolic links are never followed and never removed, nor is any
 * other name; mount points are not crossed. Meant for recovery, while no
 * guest runs: it walks the whole tree, one directory fd at a time.
 *
 * Returns: how many files were removed
 */
guint
sandbox_workspace_remove_temporaries (SandboxWorkspace *self)
{
  g_autoptr(GQueue) pending = g_queue_new ();
  guint removed = 0;
  char *relative;

  g_return_val_if_fail (self != NULL, 0);

  g_queue_push_tail (pending, g_strdup ("."));
  while ((relative = g_queue_pop_head (pending)) != NULL)
    {
      remove_temporaries_in (self->fd, relative, pending, &removed);
      g_free (relative);
    }
  return removed;
}

