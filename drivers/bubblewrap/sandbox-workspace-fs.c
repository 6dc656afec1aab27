/* sandbox-workspace-fs.c: contained host-side access to a session workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host reads and writes a session's workspace directly instead of
 * spawning cat/tee inside the sandbox. Guest commands own the workspace
 * and can change it while the host works in it, so:
 *
 *  - paths are resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
 *    | RESOLVE_NO_XDEV) relative to an fd of the workspace root: symbolic
 *    links that stay inside are followed, anything that would leave fails in
 *    the kernel, atomically, whatever the guest swaps meanwhile;
 *  - everything after resolution uses *at() calls on directory fds, and final
 *    components that are created or removed are never followed;
 *  - reads open with O_NONBLOCK and insist on a regular file, so a FIFO or a
 *    socket never blocks the host, and are bounded whatever st_size claims;
 *  - writes go to an unnamed O_TMPFILE file that is then linked into place
 *    (a new target) or linked under a temporary name and renamed over it
 *    (an existing one), so a planted symbolic link or guest hard link is
 *    replaced, never written through, a failed write leaves nothing
 *    half-written and a host killed mid-write leaves no temporary behind
 *    (where the filesystem has no O_TMPFILE: a named O_EXCL temporary file,
 *    which recovery removes — sandbox_workspace_remove_temporaries());
 *  - removal never follows symbolic links, walks directories with a constant
 *    number of fds, and checks every step back up by inode identity;
 *  - what the host creates is given to the workspace's owner by descriptor
 *    (give_to_owner()), before it gets its final name.
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-driver.h"
#include "sandbox-workspace-fs.h"

/* How many times an openat2() that the kernel refused with EAGAIN (a
 * concurrent rename while resolving "..") is retried before giving up. */
#define RESOLVE_RETRIES 64

/* How many times a directory that filled up again while it was being
 * emptied is rescanned before removal gives up. */
#define REMOVE_RETRIES 8

/* Templates are trusted host data, but their depth still bounds recursion and
 * the fds held open (two per level) while copying. */
#define COPY_MAX_DEPTH 256

#define DIRENT_BUFFER_SIZE (32 * 1024)
#define COPY_BUFFER_SIZE (128 * 1024)

/* An fd closed when it leaves scope; 2.74 has no g_autofd. */
typedef int WorkspaceFd;

static void
workspace_fd_close (WorkspaceFd fd)
{
  int saved_errno = errno;

  close (fd);
  errno = saved_errno;
}

G_DEFINE_AUTO_CLEANUP_FREE_FUNC (WorkspaceFd, workspace_fd_close, -1)

/**
 * workspace_fd_clear:
 * @fd: (inout): an fd, or -1
 *
 * Closes *@fd if it is open and sets it to -1, keeping errno.
 */
static void
workspace_fd_clear (int *fd)
{
  if (*fd >= 0)
    workspace_fd_close (g_steal_fd (fd));
}

/**
 * set_escape_error:
 * @error: return location for a #GError
 *
 * Reports a resolution the kernel refused because it would leave the
 * workspace. The message deliberately names no path at all.
 *
 * Returns: %FALSE
 */
static gboolean
set_escape_error (GError **error)
{
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, "Path escapes the workspace");
  return FALSE;
}

/**
 * set_errno_error:
 * @error: return location for a #GError
 * @saved_errno: the errno of the failed call
 * @action: what was attempted ("read", "write", "remove", …)
 * @relative: the workspace-relative path it was attempted on
 *
 * Turns a failed system call into a #GError naming the workspace-relative
 * path. Escapes become %SANDBOX_ERROR_PATH, a kernel without openat2()
 * %SANDBOX_ERROR_UNAVAILABLE, everything else the matching #GIOErrorEnum.
 *
 * Returns: %FALSE
 */
static gboolean
set_errno_error (GError     **error,
                 int          saved_errno,
                 const char  *action,
                 const char  *relative)
{
  switch (saved_errno)
    {
    case EXDEV:
    case ELOOP:
      return set_escape_error (error);

    case ENOSYS:
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "Contained workspace file access needs openat2() (Linux 5.6 or newer)");
      return FALSE;

    case EAGAIN:
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                   "Cannot %s ‘%s’: the workspace kept changing while the path was resolved",
                   action, relative);
      return FALSE;

    default:
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Cannot %s ‘%s’: %s", action, relative, g_strerror (saved_errno));
      return FALSE;
    }
}

/**
 * validate_relative:
 * @relative: the path to check
 * @error: return location for a #GError
 *
 * Defence in depth: the session canonicalizes paths before they reach the
 * driver, but this layer must hold on its own, so it refuses anything but
 * "." or slash-separated names that are neither empty, "." nor "..".
 *
 * Returns: %TRUE if @relative is a canonical workspace-relative path
 */
static gboolean
validate_relative (const char  *relative,
                   GError     **error)
{
  const char *segment;

  if (relative != NULL && strcmp (relative, ".") == 0)
    return TRUE;

  if (relative == NULL || relative[0] == '\0' || relative[0] == '/')
    goto invalid;

  segment = relative;
  while (TRUE)
    {
      const char *end = strchrnul (segment, '/');
      gsize length = end - segment;

      if (length == 0 ||
          (length == 1 && segment[0] == '.') ||
          (length == 2 && segment[0] == '.' && segment[1] == '.'))
        goto invalid;

      if (*end == '\0')
        return TRUE;
      segment = end + 1;
    }

invalid:
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH,
                       "Expected a canonical workspace-relative path");
  return FALSE;
}

/**
 * validate_entry_name:
 * @name: a single directory entry name
 * @error: return location for a #GError
 *
 * Checks that @name names an entry directly inside a directory, so *at()
 * calls with it can neither climb nor descend.
 *
 * Returns: %TRUE if @name is a plain entry name
 */
static gboolean
validate_entry_name (const char  *name,
                     GError     **error)
{
  if (name == NULL || name[0] == '\0' || strchr (name, '/') != NULL ||
      strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "Expected a single directory entry name, not ‘%s’", name ? name : "(null)");
      return FALSE;
    }

  return TRUE;
}

/**
 * open_beneath:
 * @root_fd: the directory resolution may not leave
 * @relative: a path relative to @root_fd
 * @flags: open(2) flags; O_CLOEXEC is always added
 *
 * Opens @relative with openat2() so the kernel refuses every way out of
 * @root_fd: absolute symbolic links, ".." above the root, /proc magic links
 * and mount crossings. EINTR and the EAGAIN openat2() returns when a
 * concurrent rename could have let ".." escape are retried a bounded number
 * of times.
 *
 * Returns: a new fd, or -1 with errno set
 */
static int
open_beneath_resolving (int         root_fd,
                        const char *relative,
                        guint64     flags,
                        guint64     resolve)
{
  struct open_how how = {
    .flags = flags | O_CLOEXEC,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV | resolve,
  };
  guint attempts = 0;
  int fd;

  do
    fd = syscall (SYS_openat2, root_fd, relative, &how, sizeof how);
  while (fd < 0 && (errno == EINTR || (errno == EAGAIN && ++attempts < RESOLVE_RETRIES)));

  return fd;
}

static int
open_beneath (int         root_fd,
              const char *relative,
              guint64     flags)
{
  return open_beneath_resolving (root_fd, relative, flags, 0);
}

/**
 * split_parent:
 * @relative: a validated workspace-relative path other than "."
 * @parent: (out) (transfer full) (nullable): the parent directory path, or
 *   %NULL when it is the root
 *
 * Returns: (transfer none): the final component of @relative
 */
static const char *
split_parent (const char  *relative,
              char       **parent)
{
  const char *slash = strrchr (relative, '/');

  if (slash == NULL)
    {
      *parent = NULL;
      return relative;
    }

  *parent = g_strndup (relative, slash - relative);
  return slash + 1;
}

/**
 * sandbox_workspace_open:
 * @workspace_path: the host path of a workspace directory
 * @error: return location for a #GError
 *
 * Opens the workspace root as an O_PATH directory fd for the other
 * functions, and checks that the kernel can resolve paths beneath it, so a
 * kernel without openat2() is reported here rather than at the first read.
 *
 * Returns: a new fd the caller closes, or -1 with @error set
 */
int
sandbox_workspace_open (const char  *workspace_path,
                        GError     **error)
{
  g_auto(WorkspaceFd) root_fd = -1;
  g_auto(WorkspaceFd) probe_fd = -1;

  g_return_val_if_fail (workspace_path != NULL, -1);
  g_return_val_if_fail (error == NULL || *error == NULL, -1);

  root_fd = open (workspace_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Cannot open the workspace directory: %s", g_strerror (saved_errno));
      return -1;
    }

  probe_fd = open_beneath (root_fd, ".", O_PATH | O_DIRECTORY);
  if (probe_fd < 0)
    {
      set_errno_error (error, errno, "open", ".");
      return -1;
    }

  return g_steal_fd (&root_fd);
}

/**
 * read_bounded:
 * @fd: a regular file open for reading
 * @size_hint: the file's size according to fstat()
 * @max_bytes: the most bytes the caller accepts
 * @relative: the workspace-relative path, for messages
 * @error: return location for a #GError
 *
 * Reads @fd to its end, but never more than @max_bytes + 1 bytes: the guest
 * may grow the file after fstat(), and one byte past the bound is enough to
 * know it is over.
 *
 * Returns: (transfer full): the contents, or %NULL with @error set
 */
static GBytes *
read_bounded (int          fd,
              gsize        size_hint,
              gsize        max_bytes,
              const char  *relative,
              GError     **error)
{
  gsize capacity = MIN (size_hint, max_bytes) + 1;
  gsize length = 0;
  g_autofree guint8 *buffer = g_malloc (capacity);

  while (TRUE)
    {
      ssize_t n;

      if (length == capacity)
        {
          if (capacity > max_bytes)
            {
              sandbox_set_error_read_limit (error);
              return NULL;
            }
          /* The file grew since fstat(): keep going up to the bound. */
          capacity = MIN (MAX (capacity * 2, 4096), max_bytes + 1);
          buffer = g_realloc (buffer, capacity);
        }

      n = read (fd, buffer + length, capacity - length);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          set_errno_error (error, errno, "read", relative);
          return NULL;
        }
      if (n == 0)
        break;
      length += n;
    }

  if (length > max_bytes)
    {
      sandbox_set_error_read_limit (error);
      return NULL;
    }

  return g_bytes_new_take (g_steal_pointer (&buffer), length);
}

/**
 * sandbox_workspace_read:
 * @root_fd: the workspace root, from sandbox_workspace_open()
 * @relative: a canonical workspace-relative path
 * @max_bytes: the largest file accepted
 * @error: return location for a #GError
 *
 * Reads a whole regular file of the workspace. Symbolic links that stay
 * inside the workspace are followed; any way out is %SANDBOX_ERROR_PATH.
 * A directory is %G_IO_ERROR_IS_DIRECTORY, a FIFO, socket or device
 * %G_IO_ERROR_NOT_REGULAR_FILE (without blocking), a missing file
 * %G_IO_ERROR_NOT_FOUND and a file over @max_bytes %SANDBOX_ERROR_LIMIT.
 *
 * Returns: (transfer full): the contents, or %NULL with @error set
 */
GBytes *
sandbox_workspace_read (int          root_fd,
                        const char  *relative,
                        gsize        max_bytes,
                        GError     **error)
{
  g_auto(WorkspaceFd) fd = -1;
  struct stat st;

  g_return_val_if_fail (root_fd >= 0, NULL);
  g_return_val_if_fail (max_bytes < G_MAXSIZE, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!validate_relative (relative, error))
    return NULL;

  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. */
  fd = open_beneath (root_fd, relative, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    {
      int saved_errno = errno;

      /* Opening a socket fails with ENXIO; say what it is. */
      if (saved_errno == ENXIO)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                       "Cannot read ‘%s’: not a regular file", relative);
          return NULL;
        }
      set_errno_error (error, saved_errno, "read", relative);
      return NULL;
    }

  if (fstat (fd, &st) < 0)
    {
      set_errno_error (error, errno, "read", relative);
      return NULL;
    }

  if (S_ISDIR (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY,
                   "Cannot read ‘%s’: it is a directory", relative);
      return NULL;
    }

  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                   "Cannot read ‘%s’: not a regular file", relative);
      return NULL;
    }

  if (st.st_size < 0 || (guint64) st.st_size > max_bytes)
    {
      sandbox_set_error_read_limit (error);
      return NULL;
    }

  return read_bounded (fd, st.st_size, max_bytes, relative, error);
}

/* Re-owning a whole tree bounds its recursion (one fd per level). */
#define GIVE_MAX_DEPTH 512

/**
 * owner_of_root:
 * @root_fd: the workspace root
 * @owner: (out): its owner and group
 *
 * Returns: whether what the host creates must be given to @owner: %FALSE
 *   when the host is the owner (or the root cannot be examined, in which
 *   case the creation that follows fails on its own)
 */
static gboolean
owner_of_root (int                    root_fd,
               SandboxWorkspaceOwner *owner)
{
  struct stat st;

  if (fstat (root_fd, &st) < 0)
    return FALSE;
  owner->uid = st.st_uid;
  owner->gid = st.st_gid;
  return st.st_uid != geteuid () || st.st_gid != getegid ();
}

/**
 * give_to_owner:
 * @fd: what this process just created (any fd, O_PATH included)
 * @owner: (nullable): who gets it, or %NULL to keep the creator's ids
 *
 * Returns: %TRUE, or %FALSE with errno set
 */
static gboolean
give_to_owner (int                          fd,
               const SandboxWorkspaceOwner *owner)
{
  return owner == NULL || fchownat (fd, "", owner->uid, owner->gid, AT_EMPTY_PATH) == 0;
}

/**
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
  g_auto(WorkspaceFd) current_fd = -1;
  g_autofree char *prefix = NULL;
  const char *segment;
  int fd;

  fd = open_beneath (root_fd, parent, O_PATH | O_DIRECTORY);
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
      fd = open_beneath (root_fd, prefix, O_PATH | O_DIRECTORY);
      if (fd < 0 && errno == ENOENT)
        {
          gboolean created = mkdirat (current_fd >= 0 ? current_fd : root_fd, name, 0700) == 0;

          if (!created && errno != EEXIST)
            goto failed;
          fd = open_beneath (root_fd, prefix, O_PATH | O_DIRECTORY);
          /* Should the guest have swapped ours meanwhile, what is given is
           * a directory of its workspace, to its owner: nothing new. */
          if (fd >= 0 && created && !give_to_owner (fd, owner))
            {
              close (fd);
              fd = -1;
            }
        }
      if (fd < 0)
        goto failed;

      workspace_fd_clear (&current_fd);
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
  set_errno_error (error, errno, "write", relative);
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

static void
make_temporary_name (char *name)
{
  g_snprintf (name, 64, TEMPORARY_PREFIX "%08x%08x" TEMPORARY_SUFFIX,
              g_random_int (), g_random_int ());
}

/**
 * create_temporary:
 * @dir_fd: the directory to create the file in
 * @name: (out caller-allocates): a buffer of at least 64 bytes for its name
 *
 * Creates a fresh file with a random name, mode 0600. O_CREAT | O_EXCL never
 * follows a symbolic link, so a link planted at the name fails with EEXIST
 * and another name is drawn. Only where O_TMPFILE is missing: a crash while
 * it exists leaves it behind (sandbox_workspace_remove_temporaries()).
 *
 * Returns: the fd open for writing, or -1 with errno set
 */
static int
create_temporary (int   dir_fd,
                  char *name)
{
  for (guint attempt = 0; attempt < 16; attempt++)
    {
      int fd;

      make_temporary_name (name);
      fd = openat (dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                   0600);
      if (fd >= 0 || errno != EEXIST)
        return fd;
    }

  errno = EEXIST;
  return -1;
}

/* Whether openat(O_TMPFILE) failed because the filesystem (EOPNOTSUPP) or
 * the kernel (EISDIR: O_TMPFILE includes O_DIRECTORY) has no unnamed
 * files. */
static gboolean
unnamed_files_unsupported (int saved_errno)
{
  return saved_errno == EOPNOTSUPP || saved_errno == EISDIR || saved_errno == EINVAL;
}

/* Tests take the named-temporary path as on a filesystem without O_TMPFILE. */
static gboolean unnamed_files_disabled = FALSE;

/**
 * sandbox_workspace_set_unnamed_files_enabled:
 * @enabled: whether writes may use O_TMPFILE
 *
 * For tests only: makes writes use the fallback for filesystems without
 * O_TMPFILE, a named temporary file. Not thread-safe; call it before any
 * write.
 */
void
sandbox_workspace_set_unnamed_files_enabled (gboolean enabled)
{
  unnamed_files_disabled = !enabled;
}

/**
 * create_unnamed:
 * @dir_fd: the directory the file will be linked into
 *
 * Creates an unnamed file (O_TMPFILE, mode 0600) on @dir_fd's filesystem.
 * It has no directory entry until link_unnamed() gives it one, so a host
 * killed while writing it leaves nothing behind.
 *
 * Returns: the fd open for writing, or -1 with errno set
 */
static int
create_unnamed (int dir_fd)
{
  if (unnamed_files_disabled)
    {
      errno = EOPNOTSUPP;
      return -1;
    }
  return openat (dir_fd, ".", O_TMPFILE | O_WRONLY | O_NOCTTY | O_CLOEXEC, 0600);
}

/**
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

/* Links the unnamed @fd under a fresh temporary name in @dir_fd. */
static gboolean
link_temporary (int   fd,
                int   dir_fd,
                char *name)
{
  for (guint attempt = 0; attempt < 16; attempt++)
    {
      make_temporary_name (name);
      if (link_unnamed (fd, dir_fd, name))
        return TRUE;
      if (errno != EEXIST)
        return FALSE;
    }

  errno = EEXIST;
  return FALSE;
}

/**
 * write_all:
 * @fd: a file open for writing
 * @data: the bytes to write
 * @size: how many
 *
 * Returns: %TRUE when all of @data was written, or %FALSE with errno set
 */
static gboolean
write_all (int           fd,
           const guint8 *data,
           gsize         size)
{
  while (size > 0)
    {
      ssize_t n = write (fd, data, size);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return FALSE;
        }
      data += n;
      size -= n;
    }

  return TRUE;
}

/**
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
  return give_to_owner (fd, owner) && write_all (fd, data, size) &&
         (mode == 0600 || fchmod (fd, mode) == 0) &&
         (!durable || fdatasync (fd) == 0);
}

/* Syncs the directory @dir_fd (an O_PATH fd): a new name in it survives a
 * power loss. */
static gboolean
sync_directory (int dir_fd)
{
  g_auto(WorkspaceFd) fd = openat (dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

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
    return set_errno_error (error, errno, "sync", relative);
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
  return set_errno_error (error, saved_errno, "write", relative);
}

/**
 * replace_with_named:
 *
 * replace_file() where the filesystem has no O_TMPFILE: the contents go to a
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
  g_auto(WorkspaceFd) fd = -1;
  char temporary[64];
  int saved_errno;

  fd = create_temporary (parent_fd, temporary);
  if (fd < 0)
    return set_errno_error (error, errno, "write", relative);

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

/**
 * replace_file:
 * @parent_fd: the directory holding the target
 * @name: the target's entry name in @parent_fd
 * @contents: the new contents
 * @durable: whether to sync the file before it is named and its directory
 *   after
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
 * bits of a regular file being replaced are kept, as editing a script in
 * place would. Filesystems without O_TMPFILE use replace_with_named().
 * With @durable the file is synced before it is named and its directory
 * after.
 *
 * Returns: %TRUE on success; on failure nothing was changed (but for a
 *   failed sync of the directory, after which the file is in place)
 */
static gboolean
replace_file (int                          parent_fd,
              const char                  *name,
              GBytes                      *contents,
              gboolean                     durable,
              const char                  *relative,
              const SandboxWorkspaceOwner *owner,
              GError                     **error)
{
  g_auto(WorkspaceFd) fd = -1;
  char temporary[64];
  mode_t mode = 0600;
  gboolean exists = FALSE;
  struct stat st;
  gsize size;
  const guint8 *data = g_bytes_get_data (contents, &size);
  int saved_errno;

  if (fstatat (parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (S_ISDIR (st.st_mode))
        return set_write_error (error, EISDIR, relative);
      if (S_ISREG (st.st_mode))
        mode = st.st_mode & 0777;
      exists = TRUE;
    }

  fd = create_unnamed (parent_fd);
  if (fd < 0 && unnamed_files_unsupported (errno))
    return replace_with_named (parent_fd, name, data, size, mode, durable, relative, owner,
                               error);
  if (fd < 0 || !fill_file (fd, data, size, mode, owner, durable))
    return set_errno_error (error, errno, "write", relative);

  /* Nothing there: the file gets its name and nothing else. If the guest
   * put something there meanwhile, it is replaced as below. */
  if (!exists && link_unnamed (fd, parent_fd, name))
    return finish_write (parent_fd, durable, relative, error);
  if (!exists && errno != EEXIST)
    return set_errno_error (error, errno, "write", relative);

  if (!link_temporary (fd, parent_fd, temporary))
    return set_errno_error (error, errno, "write", relative);
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
 * @root_fd: the workspace root, from sandbox_workspace_open()
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
 * %SANDBOX_ERROR_PATH. A new file gets mode 0600. The file and the
 * directories created belong to the owner of the workspace root. Not synced
 * to disk: see sandbox_workspace_write_full().
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_workspace_write (int          root_fd,
                         const char  *relative,
                         GBytes      *contents,
                         gsize        max_bytes,
                         GError     **error)
{
  return sandbox_workspace_write_full (root_fd, relative, contents, max_bytes, FALSE, error);
}

/**
 * sandbox_workspace_write_full:
 * @root_fd: the workspace root, from sandbox_workspace_open()
 * @relative: a canonical workspace-relative path
 * @contents: the new contents
 * @max_bytes: the largest contents accepted
 * @durable: whether to sync the file before it is named and its directory
 *   after, so that a power loss leaves the old file or the new one
 * @error: return location for a #GError
 *
 * sandbox_workspace_write(), optionally durable.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_workspace_write_full (int          root_fd,
                              const char  *relative,
                              GBytes      *contents,
                              gsize        max_bytes,
                              gboolean     durable,
                              GError     **error)
{
  g_auto(WorkspaceFd) parent_fd = -1;
  g_autofree char *parent = NULL;
  SandboxWorkspaceOwner root_owner;
  const SandboxWorkspaceOwner *owner;
  const char *name;

  g_return_val_if_fail (root_fd >= 0, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!validate_relative (relative, error))
    return FALSE;

  if (g_bytes_get_size (contents) > max_bytes)
    return sandbox_set_error_write_limit (error);

  if (strcmp (relative, ".") == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY,
                           "Cannot write ‘.’: it is the workspace directory");
      return FALSE;
    }

  owner = owner_of_root (root_fd, &root_owner) ? &root_owner : NULL;
  name = split_parent (relative, &parent);
  if (parent != NULL)
    {
      parent_fd = open_parent_creating (root_fd, parent, relative, owner, error);
      if (parent_fd < 0)
        return FALSE;
    }

  return replace_file (parent_fd >= 0 ? parent_fd : root_fd, name, contents, durable, relative,
                       owner, error);
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
  int fd = open_beneath_resolving (root_fd, relative, O_RDONLY | O_DIRECTORY,
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
 * @root_fd: the workspace root, from sandbox_workspace_open()
 *
 * Removes the named temporary files a host killed in the middle of
 * sandbox_workspace_write() may have left: regular files named exactly
 * `.sandbox-write-` + 16 lowercase hex digits + `.tmp`, anywhere beneath
 * the root. Symbolic links are never followed and never removed, nor is any
 * other name; mount points are not crossed. Meant for recovery, while no
 * guest runs: it walks the whole tree, one directory fd at a time.
 *
 * Returns: how many files were removed
 */
guint
sandbox_workspace_remove_temporaries (int root_fd)
{
  g_autoptr(GQueue) pending = g_queue_new ();
  guint removed = 0;
  char *relative;

  g_return_val_if_fail (root_fd >= 0, 0);

  g_queue_push_tail (pending, g_strdup ("."));
  while ((relative = g_queue_pop_head (pending)) != NULL)
    {
      remove_temporaries_in (root_fd, relative, pending, &removed);
      g_free (relative);
    }
  return removed;
}

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

/**
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

/**
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
  g_auto(WorkspaceFd) fd = -1;

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

/**
 * scan_directory:
 * @fd: a directory open for reading, positioned at its start
 * @level: the directory's level, whose subdirectory list is filled
 * @buffer: a DIRENT_BUFFER_SIZE scratch buffer
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
  if (level->subdirectories == NULL)
    level->subdirectories = g_ptr_array_new_with_free_func (g_free);

  while (TRUE)
    {
      ssize_t n = getdents64 (fd, buffer, DIRENT_BUFFER_SIZE);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return FALSE;
        }
      if (n == 0)
        return TRUE;

      for (ssize_t offset = 0; offset < n; )
        {
          struct dirent64 *entry = (struct dirent64 *) (buffer + offset);
          const char *name = entry->d_name;
          gboolean is_directory = entry->d_type == DT_DIR;

          offset += entry->d_reclen;
          if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
            continue;

          if (!is_directory && unlinkat (fd, name, 0) < 0)
            {
              if (errno == EISDIR)
                is_directory = TRUE;
              else if (errno != ENOENT)
                {
                  *failed_name = g_strdup (name);
                  return FALSE;
                }
            }

          if (is_directory)
            g_ptr_array_add (level->subdirectories, g_strdup (name));
        }
    }
}

/**
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
  g_autofree guint8 *buffer = g_malloc (DIRENT_BUFFER_SIZE);
  g_auto(WorkspaceFd) fd = -1;
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
      return set_errno_error (error, errno, "remove", top);
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
          workspace_fd_clear (&fd);
          fd = child_fd;
          continue;
        }

      /* This directory is empty: go up and remove it. */
      if (levels->len == 1)
        {
          workspace_fd_clear (&fd);
          if (unlinkat (parent_fd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
            return TRUE;
          if (errno == ENOTEMPTY && ++top_retries < REMOVE_RETRIES)
            {
              /* Something appeared meanwhile: start over at the top. */
              g_array_set_size (levels, 0);
              goto reopen_top;
            }
          return set_errno_error (error, errno, "remove", top);
        }
      else
        {
          int up_fd = openat (fd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
          RemoveLevel *parent = &g_array_index (levels, RemoveLevel, levels->len - 2);

          if (up_fd < 0)
            goto failed;
          if (fstat (up_fd, &st) < 0 || st.st_dev != parent->dev || st.st_ino != parent->ino)
            {
              workspace_fd_close (up_fd);
              path = remove_error_path (levels, top, NULL);
              g_set_error (error, G_IO_ERROR, G_IO_ERROR_BUSY,
                           "Cannot remove ‘%s’: it was moved during removal", path);
              return FALSE;
            }

          g_array_set_size (levels, levels->len - 1);
          workspace_fd_clear (&fd);
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
  return set_errno_error (error, saved_errno, "remove", path);
}

/**
 * remove_entry:
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
static gboolean
remove_entry (int          parent_fd,
              const char  *name,
              const char  *top,
              GError     **error)
{
  if (unlinkat (parent_fd, name, 0) == 0 || errno == ENOENT)
    return TRUE;

  /* Linux answers EISDIR for a directory; EPERM is what POSIX allows. */
  if (errno != EISDIR && errno != EPERM)
    return set_errno_error (error, errno, "remove", top);

  return remove_directory_tree (parent_fd, name, top, error);
}

/**
 * sandbox_workspace_remove:
 * @root_fd: the workspace root, from sandbox_workspace_open()
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
sandbox_workspace_remove (int          root_fd,
                          const char  *relative,
                          GError     **error)
{
  g_auto(WorkspaceFd) parent_fd = -1;
  g_autofree char *parent = NULL;
  const char *name;

  g_return_val_if_fail (root_fd >= 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!validate_relative (relative, error))
    return FALSE;

  if (strcmp (relative, ".") == 0)
    return sandbox_set_error_workspace_root (error);

  name = split_parent (relative, &parent);
  if (parent != NULL)
    {
      parent_fd = open_beneath (root_fd, parent, O_PATH | O_DIRECTORY);
      if (parent_fd < 0)
        {
          if (errno == ENOENT)
            return TRUE;
          return set_errno_error (error, errno, "remove", relative);
        }
    }

  return remove_entry (parent_fd >= 0 ? parent_fd : root_fd, name, relative, error);
}

/**
 * sandbox_workspace_remove_tree:
 * @parent_fd: a directory fd
 * @name: the entry of @parent_fd to remove
 * @error: return location for a #GError
 *
 * `rm -rf` of one entry of @parent_fd that never follows symbolic links and
 * works at any depth with a constant number of fds. A missing entry is
 * success. Used for session directories, whose workspace the guest shaped.
 *
 * Returns: %TRUE when @name no longer exists
 */
gboolean
sandbox_workspace_remove_tree (int          parent_fd,
                               const char  *name,
                               GError     **error)
{
  g_return_val_if_fail (parent_fd >= 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!validate_entry_name (name, error))
    return FALSE;

  return remove_entry (parent_fd, name, name, error);
}

/* The state of one copy_tree() call, shared by all its files. */
typedef struct
{
  GCancellable *cancellable;
  guint8       *dirents;
  guint8       *buffer;           /* for the read/write fallback, lazily */
  gboolean      try_clone;        /* FICLONE works between these filesystems */
  gboolean      try_copy_range;   /* copy_file_range() works */
  const SandboxWorkspaceOwner *owner;   /* who gets the copies; NULL: the host */
} CopyState;

/**
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

/**
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
      ssize_t n = read (src_fd, state->buffer, COPY_BUFFER_SIZE);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return FALSE;
      if (n == 0)
        return TRUE;
      if (!write_all (dst_fd, state->buffer, n))
        return FALSE;
    }
}

/**
 * copy_file:
 * @state: the copy's state
 * @src_dir_fd: the source directory
 * @dst_dir_fd: the destination directory
 * @name: the entry to copy
 * @path: its path below the top of the copy, for messages
 * @error: return location for a #GError
 *
 * Copies one regular file into a new file of mode 0600. Anything else,
 * symbolic links included, is refused with %G_IO_ERROR_NOT_REGULAR_FILE.
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
  g_auto(WorkspaceFd) src_fd = -1;
  g_auto(WorkspaceFd) dst_fd = -1;
  struct stat st;

  src_fd = openat (src_dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (src_fd < 0 && errno != ELOOP)
    return set_errno_error (error, errno, "copy", path);
  if (src_fd < 0 || fstat (src_fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                   "Cannot copy ‘%s’: templates hold only regular files and directories", path);
      return FALSE;
    }

  dst_fd = openat (dst_dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                   0600);
  if (dst_fd < 0)
    return set_errno_error (error, errno, "copy", path);

  if (!give_to_owner (dst_fd, state->owner) ||
      !copy_contents (state, src_fd, dst_fd, st.st_size) ||
      (close (g_steal_fd (&dst_fd)) < 0 && errno != EINTR))
    return set_errno_error (error, errno, "copy", path);

  return TRUE;
}

static gboolean copy_directory (CopyState   *state,
                                int          src_fd,
                                int          dst_fd,
                                const char  *path,
                                guint        depth,
                                GError     **error);

/**
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
  g_auto(WorkspaceFd) src_fd = -1;
  g_auto(WorkspaceFd) dst_fd = -1;

  if (depth > COPY_MAX_DEPTH)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_TOO_MANY_LINKS,
                   "Cannot copy ‘%s’: directories nest deeper than %d levels", path, COPY_MAX_DEPTH);
      return FALSE;
    }

  src_fd = openat (src_dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (src_fd < 0)
    return set_errno_error (error, errno, "copy", path);

  if (mkdirat (dst_dir_fd, name, 0700) < 0)
    return set_errno_error (error, errno, "copy", path);
  dst_fd = openat (dst_dir_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dst_fd < 0 || !give_to_owner (dst_fd, state->owner))
    return set_errno_error (error, errno, "copy", path);

  return copy_directory (state, src_fd, dst_fd, path, depth, error);
}

/**
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

  while (TRUE)
    {
      ssize_t n = getdents64 (src_fd, state->dirents, DIRENT_BUFFER_SIZE);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return set_errno_error (error, errno, "copy", path[0] ? path : ".");
      if (n == 0)
        break;

      for (ssize_t offset = 0; offset < n; )
        {
          struct dirent64 *entry = (struct dirent64 *) (state->dirents + offset);
          const char *name = entry->d_name;
          g_autofree char *entry_path = NULL;

          offset += entry->d_reclen;
          if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
            continue;

          if (g_cancellable_set_error_if_cancelled (state->cancellable, error))
            return FALSE;

          if (entry->d_type == DT_DIR)
            {
              g_ptr_array_add (subdirectories, g_strdup (name));
              continue;
            }

          entry_path = path[0] ? g_strconcat (path, "/", name, NULL) : g_strdup (name);
          if (entry->d_type == DT_UNKNOWN)
            {
              struct stat st;

              if (fstatat (src_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return set_errno_error (error, errno, "copy", entry_path);
              if (S_ISDIR (st.st_mode))
                {
                  g_ptr_array_add (subdirectories, g_strdup (name));
                  continue;
                }
            }

          /* copy_file() refuses symbolic links and special files. */
          if (!copy_file (state, src_fd, dst_fd, name, entry_path, error))
            return FALSE;
        }
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
 * sandbox_workspace_copy_tree:
 * @src_dir_fd: the directory whose contents to copy (may be O_PATH)
 * @dst_parent_fd: the directory to create the copy in
 * @dst_name: the name of the new directory; it must not exist
 * @owner: (nullable): who gets the copy (the new directory and everything
 *   in it), or %NULL to keep the host's ids
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Creates @dst_name (mode 0700) and copies the tree of @src_dir_fd into it:
 * directories with mode 0700, regular files with mode 0600, contents by
 * reflink where the filesystem can, else copy_file_range(), else read and
 * write. Symbolic links, FIFOs, sockets and devices are refused with
 * %G_IO_ERROR_NOT_REGULAR_FILE rather than skipped, since a template never
 * holds them and silently dropping files would hand out a different
 * workspace. On failure the partial copy is removed.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_workspace_copy_tree (int                          src_dir_fd,
                             int                          dst_parent_fd,
                             const char                  *dst_name,
                             const SandboxWorkspaceOwner *owner,
                             GCancellable                *cancellable,
                             GError                     **error)
{
  g_auto(WorkspaceFd) src_fd = -1;
  g_auto(WorkspaceFd) dst_fd = -1;
  g_autofree guint8 *dirents = NULL;
  g_autofree guint8 *buffer = NULL;
  CopyState state = { cancellable, NULL, NULL, TRUE, TRUE, owner };
  gboolean copied;

  g_return_val_if_fail (src_dir_fd >= 0, FALSE);
  g_return_val_if_fail (dst_parent_fd >= 0, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!validate_entry_name (dst_name, error))
    return FALSE;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  src_fd = openat (src_dir_fd, ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  if (src_fd < 0)
    return set_errno_error (error, errno, "copy", ".");

  if (mkdirat (dst_parent_fd, dst_name, 0700) < 0)
    return set_errno_error (error, errno, "create", dst_name);

  dst_fd = openat (dst_parent_fd, dst_name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dst_fd < 0 || !give_to_owner (dst_fd, owner))
    copied = set_errno_error (error, errno, "create", dst_name);
  else
    {
      state.dirents = dirents = g_malloc (DIRENT_BUFFER_SIZE);
      copied = copy_directory (&state, src_fd, dst_fd, "", 0, error);
      buffer = state.buffer;
    }

  if (!copied)
    {
      workspace_fd_clear (&dst_fd);
      /* Best effort: the caller's error is the copy's, not the cleanup's. */
      sandbox_workspace_remove_tree (dst_parent_fd, dst_name, NULL);
    }

  return copied;
}

static gboolean
is_owned_by (const struct stat           *st,
             const SandboxWorkspaceOwner *owner)
{
  return st->st_uid == owner->uid && st->st_gid == owner->gid;
}

/**
 * give_directory:
 * @dir_fd: a directory open for reading
 * @owner: who gets it
 * @dirents: a DIRENT_BUFFER_SIZE scratch buffer
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
  struct stat st;

  while (TRUE)
    {
      ssize_t n = getdents64 (dir_fd, dirents, DIRENT_BUFFER_SIZE);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return set_errno_error (error, errno, "re-own", path[0] ? path : ".");
      if (n == 0)
        break;

      for (ssize_t offset = 0; offset < n; )
        {
          struct dirent64 *entry = (struct dirent64 *) (dirents + offset);
          const char *name = entry->d_name;

          offset += entry->d_reclen;
          if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
            continue;
          if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            {
              if (errno == ENOENT)
                continue;
              return set_errno_error (error, errno, "re-own", name);
            }
          if (S_ISDIR (st.st_mode))
            g_ptr_array_add (subdirectories, g_strdup (name));
          else if (!is_owned_by (&st, owner) &&
                   fchownat (dir_fd, name, owner->uid, owner->gid, AT_SYMLINK_NOFOLLOW) < 0 &&
                   errno != ENOENT)
            return set_errno_error (error, errno, "re-own", name);
        }
    }

  for (guint i = 0; i < subdirectories->len; i++)
    {
      const char *name = subdirectories->pdata[i];
      g_autofree char *entry_path = path[0] ? g_strconcat (path, "/", name, NULL) : g_strdup (name);
      g_auto(WorkspaceFd) fd = -1;

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
        return set_errno_error (error, errno, "re-own", entry_path);
      if (!give_directory (fd, owner, dirents, entry_path, depth + 1, error))
        return FALSE;
    }

  if (fstat (dir_fd, &st) < 0 ||
      (!is_owned_by (&st, owner) && fchown (dir_fd, owner->uid, owner->gid) < 0))
    return set_errno_error (error, errno, "re-own", path[0] ? path : ".");
  return TRUE;
}

/**
 * sandbox_workspace_give_tree:
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
sandbox_workspace_give_tree (int                          parent_fd,
                             const char                  *name,
                             const SandboxWorkspaceOwner *owner,
                             GError                     **error)
{
  g_auto(WorkspaceFd) fd = -1;
  g_autofree guint8 *dirents = NULL;

  g_return_val_if_fail (parent_fd >= 0, FALSE);
  g_return_val_if_fail (owner != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!validate_entry_name (name, error))
    return FALSE;
  fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return set_errno_error (error, errno, "re-own", name);
  dirents = g_malloc (DIRENT_BUFFER_SIZE);
  return give_directory (fd, owner, dirents, "", 0, error);
}

static const char *
entry_type_name (mode_t mode)
{
  if (S_ISREG (mode))
    return "file";
  if (S_ISDIR (mode))
    return "directory";
  if (S_ISLNK (mode))
    return "symlink";
  return "other";
}

/**
 * sandbox_workspace_list:
 * @root_fd: the workspace root
 * @relative: a canonical workspace-relative directory path, or "."
 * @max_entries: the most entries to return, at least 1
 * @truncated: (out): set to whether entries were left out
 * @error: return location for a #GError
 *
 * Lists a directory of the workspace. The directory itself is resolved
 * beneath the root (symbolic links that stay inside are followed, any way
 * out is %SANDBOX_ERROR_PATH); its entries are examined with
 * fstatat(AT_SYMLINK_NOFOLLOW) on the directory fd, so a symbolic link is
 * reported as "symlink" with its own size and never followed. Entries that
 * vanish while listing are skipped; names that are not UTF-8 are shown with
 * U+FFFD. A file is %G_IO_ERROR_NOT_DIRECTORY.
 *
 * Returns: (transfer full): a non-floating `a(sst)` #GVariant of
 *   (name, type, size), or %NULL with @error set
 */
GVariant *
sandbox_workspace_list (int          root_fd,
                        const char  *relative,
                        guint        max_entries,
                        gboolean    *truncated,
                        GError     **error)
{
  g_auto(WorkspaceFd) fd = -1;
  g_autofree guint8 *buffer = NULL;
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sst)"));
  guint count = 0;

  g_return_val_if_fail (root_fd >= 0, NULL);
  g_return_val_if_fail (max_entries > 0, NULL);
  g_return_val_if_fail (truncated != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  *truncated = FALSE;
  if (!validate_relative (relative, error))
    return NULL;

  /* O_DIRECTORY: a FIFO or socket fails at once instead of blocking. */
  fd = open_beneath (root_fd, relative, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    {
      set_errno_error (error, errno, "list", relative);
      return NULL;
    }

  buffer = g_malloc (DIRENT_BUFFER_SIZE);
  while (TRUE)
    {
      ssize_t n = getdents64 (fd, buffer, DIRENT_BUFFER_SIZE);

      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          set_errno_error (error, errno, "list", relative);
          return NULL;
        }
      if (n == 0)
        break;

      for (ssize_t offset = 0; offset < n; )
        {
          struct dirent64 *entry = (struct dirent64 *) (buffer + offset);
          g_autofree char *name = NULL;
          struct stat st;

          offset += entry->d_reclen;
          if (strcmp (entry->d_name, ".") == 0 || strcmp (entry->d_name, "..") == 0)
            continue;
          if (fstatat (fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;   /* removed meanwhile */
          if (count == max_entries)
            {
              *truncated = TRUE;
              return g_variant_ref_sink (g_variant_builder_end (&builder));
            }

          name = g_utf8_make_valid (entry->d_name, -1);
          g_variant_builder_add (&builder, "(sst)", name, entry_type_name (st.st_mode),
                                 (guint64) MAX (st.st_size, 0));
          count++;
        }
    }

  return g_variant_ref_sink (g_variant_builder_end (&builder));
}
