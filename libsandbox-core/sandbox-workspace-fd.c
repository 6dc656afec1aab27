/* sandbox-workspace-fd.c — the descriptor primitives of SandboxWorkspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The bottom of the workspace files: closing descriptors, mapping errno to
 * errors, checking paths, resolving beneath a root with openat2(), giving
 * what the host creates to the workspace's owner, and walking a directory's
 * entries. The plain verbs (sandbox-workspace-read.c, -write.c, -remove.c),
 * the overlay (sandbox-workspace-overlay.c) and the copies
 * (sandbox-workspace-copy.c) build on these; nothing here calls up into
 * them. The threat model is in sandbox-workspace.h, how the files use these
 * primitives at the top of sandbox-workspace.c.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/fsuid.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-workspace-private.h"

/* How many times an openat2() that the kernel refused with EAGAIN (a
 * concurrent rename while resolving "..") is retried before giving up. */
#define RESOLVE_RETRIES 64

void
sandbox_workspace_fd_close (int fd)
{
  int saved_errno = errno;

  close (fd);
  errno = saved_errno;
}

/* Closes *@fd if it is open and sets it to -1, keeping errno. */
void
sandbox_workspace_fd_clear (int *fd)
{
  if (*fd >= 0)
    sandbox_workspace_fd_close (g_steal_fd (fd));
}

/*
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

/*
 * sandbox_workspace_set_errno_error:
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
gboolean
sandbox_workspace_set_errno_error (GError     **error,
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
      /* GLib 2.74 maps EDQUOT to nothing: a full quota is no space, as
       * ENOSPC is (the backend's workspace-quota-bytes). */
      g_set_error (error, G_IO_ERROR,
                   saved_errno == EDQUOT ? G_IO_ERROR_NO_SPACE : g_io_error_from_errno (saved_errno),
                   "Cannot %s ‘%s’: %s", action, relative, g_strerror (saved_errno));
      return FALSE;
    }
}

/*
 * sandbox_workspace_check_relative:
 * @relative: the path to check
 * @error: return location for a #GError
 *
 * Defence in depth: the session canonicalizes paths before they reach the
 * driver, but this layer must hold on its own, so it refuses anything but
 * "." or slash-separated names that are neither empty, "." nor "..".
 *
 * Returns: %TRUE if @relative is a canonical workspace-relative path
 */
gboolean
sandbox_workspace_check_relative (const char  *relative,
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

/*
 * sandbox_workspace_check_entry_name:
 * @name: a single directory entry name
 * @error: return location for a #GError
 *
 * Checks that @name names an entry directly inside a directory, so *at()
 * calls with it can neither climb nor descend.
 *
 * Returns: %TRUE if @name is a plain entry name
 */
gboolean
sandbox_workspace_check_entry_name (const char  *name,
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

/*
 * sandbox_workspace_open_beneath:
 * @root_fd: the directory resolution may not leave
 * @relative: a path relative to @root_fd
 * @flags: open(2) flags; O_CLOEXEC is always added
 * @resolve: RESOLVE_* flags on top of the ones that keep it beneath
 *
 * Opens @relative with openat2() so the kernel refuses every way out of
 * @root_fd: absolute symbolic links, ".." above the root, /proc magic links
 * and mount crossings. EINTR and the EAGAIN openat2() returns when a
 * concurrent rename could have let ".." escape are retried a bounded number
 * of times.
 *
 * Returns: a new fd, or -1 with errno set
 */
int
sandbox_workspace_open_beneath (int         root_fd,
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

/*
 * sandbox_workspace_split_parent:
 * @relative: a validated workspace-relative path other than "."
 * @parent: (out) (transfer full) (nullable): the parent directory path, or
 *   %NULL when it is the root
 *
 * Returns: (transfer none): the final component of @relative
 */
const char *
sandbox_workspace_split_parent (const char  *relative,
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

/*
 * sandbox_workspace_give_to_owner:
 * @fd: what this process just created (any fd, O_PATH included)
 * @owner: (nullable): who gets it, or %NULL to keep the creator's ids
 *
 * Returns: %TRUE, or %FALSE with errno set
 */
gboolean
sandbox_workspace_give_to_owner (int                          fd,
                                 const SandboxWorkspaceOwner *owner)
{
  return owner == NULL || fchownat (fd, "", owner->uid, owner->gid, AT_EMPTY_PATH) == 0;
}

/*
 * sandbox_workspace_fs_ids_enter:
 * @owner: (nullable): who the calling thread creates as, or %NULL to stay
 *   as it is
 *
 * As root, makes @owner's ids the calling thread's filesystem ids
 * (setfsuid() and setfsgid() change this thread only, and drop the
 * capabilities that override file permissions until they are undone), so
 * that what it creates is @owner's from the start and it gets @owner's
 * permissions. Not as root: changes nothing.
 *
 * Returns: what sandbox_workspace_fs_ids_leave() undoes
 */
SandboxWorkspaceFsIds
sandbox_workspace_fs_ids_enter (const SandboxWorkspaceOwner *owner)
{
  SandboxWorkspaceFsIds saved = { FALSE, 0, 0 };

  if (owner == NULL || geteuid () != 0)
    return saved;
  saved.changed = TRUE;
  saved.gid = (gid_t) setfsgid (owner->gid);
  saved.uid = (uid_t) setfsuid (owner->uid);
  return saved;
}

/*
 * sandbox_workspace_fs_ids_leave:
 * @saved: what sandbox_workspace_fs_ids_enter() returned
 *
 * Gives the calling thread its filesystem ids back.
 */
void
sandbox_workspace_fs_ids_leave (const SandboxWorkspaceFsIds *saved)
{
  if (!saved->changed)
    return;
  setfsuid (saved->uid);
  setfsgid (saved->gid);
}

/*
 * sandbox_workspace_write_all:
 * @fd: a file open for writing
 * @data: the bytes to write
 * @size: how many
 *
 * Returns: %TRUE when all of @data was written, or %FALSE with errno set
 */
gboolean
sandbox_workspace_write_all (int           fd,
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

void
sandbox_workspace_dirents_init (SandboxWorkspaceDirents *dirents,
                                int                      fd,
                                guint8                  *buffer)
{
  *dirents = (SandboxWorkspaceDirents) { fd, buffer, 0, 0 };
}

/*
 * sandbox_workspace_dirents_next:
 * @dirents: a listing from sandbox_workspace_dirents_init()
 * @entry: (out): the next entry other than "." and "..", or %NULL at the end
 *
 * Reads the directory a buffer at a time, retrying on EINTR. The entry
 * lives in the buffer until the next call.
 *
 * Returns: %TRUE, or %FALSE with errno set if the directory cannot be read
 */
gboolean
sandbox_workspace_dirents_next (SandboxWorkspaceDirents  *dirents,
                                struct dirent64         **entry)
{
  while (TRUE)
    {
      struct dirent64 *next;

      if (dirents->offset >= dirents->length)
        {
          ssize_t n = TEMP_FAILURE_RETRY (getdents64 (dirents->fd, dirents->buffer,
                                                      SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE));

          if (n < 0)
            return FALSE;
          if (n == 0)
            {
              *entry = NULL;
              return TRUE;
            }
          dirents->length = n;
          dirents->offset = 0;
        }

      next = (struct dirent64 *) (dirents->buffer + dirents->offset);
      dirents->offset += next->d_reclen;
      if (strcmp (next->d_name, ".") != 0 && strcmp (next->d_name, "..") != 0)
        {
          *entry = next;
          return TRUE;
        }
    }
}
