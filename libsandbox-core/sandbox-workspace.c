/* sandbox-workspace.c — the workspace object and path resolution beneath it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The host reads and writes a session's workspace directly instead of
 * spawning cat/tee inside the sandbox. Guest commands own the workspace
 * and can change it while the host works in it, so (the threat model is in
 * sandbox-workspace.h):
 *
 *  - paths are resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS
 *    | RESOLVE_NO_XDEV) relative to an fd of the workspace root: symbolic
 *    links that stay inside are followed, anything that would leave fails in
 *    the kernel, atomically, whatever the guest swaps meanwhile;
 *  - everything after resolution uses *at() calls on directory fds, and final
 *    components that are created or removed are never followed;
 *  - reads open with O_NONBLOCK and insist on a regular file, so a FIFO or a
 *    socket never blocks the host, and are bounded whatever st_size claims
 *    (sandbox-workspace-read.c);
 *  - writes go to an unnamed O_TMPFILE file that is then linked into place
 *    (a new target) or linked under a temporary name and renamed over it
 *    (an existing one), so a planted symbolic link or guest hard link is
 *    replaced, never written through, a failed write leaves nothing
 *    half-written and a host killed mid-write leaves no temporary behind
 *    (where the filesystem has no O_TMPFILE: a named O_EXCL temporary file,
 *    which recovery removes — sandbox_workspace_remove_temporaries())
 *    (sandbox-workspace-write.c);
 *  - removal never follows symbolic links, walks directories with a constant
 *    number of fds, and checks every step back up by inode identity
 *    (sandbox-workspace-remove.c);
 *  - what the host creates is given to the workspace's owner by descriptor
 *    (sandbox_workspace_give_to_owner()), before it gets its final name;
 *    copies and re-owning of whole trees are in sandbox-workspace-copy.c.
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

/**
 * SandboxWorkspace:
 *
 * A host directory that untrusted guests write to, opened for contained
 * host-side file I/O: every operation resolves its path relative to a
 * descriptor of the root and never follows a link out of it, whatever the
 * guest swaps meanwhile (the threat model is in `sandbox-workspace.h`).
 *
 * Drivers use it for [struct@Sandbox.DriverInterface]'s read, write and remove, and
 * stores to copy a template into a new workspace and to remove one. A
 * workspace is immutable once open, so it can be shared between threads.
 */

/* How many times an openat2() that the kernel refused with EAGAIN (a
 * concurrent rename while resolving "..") is retried before giving up. */
#define RESOLVE_RETRIES 64

G_DEFINE_BOXED_TYPE (SandboxWorkspace, sandbox_workspace, sandbox_workspace_ref,
                     sandbox_workspace_unref)

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

static void
sandbox_workspace_clear (gpointer data)
{
  SandboxWorkspace *self = data;

  sandbox_workspace_fd_clear (&self->fd);
  sandbox_workspace_fd_clear (&self->lower_fd);
}

/**
 * sandbox_workspace_ref:
 * @self: a workspace
 *
 * Takes a reference; the root's descriptor stays open until the last one
 * is dropped.
 *
 * Returns: (transfer full): @self
 */
SandboxWorkspace *
sandbox_workspace_ref (SandboxWorkspace *self)
{
  g_return_val_if_fail (self != NULL, NULL);

  return g_atomic_rc_box_acquire (self);
}

/**
 * sandbox_workspace_unref:
 * @self: (transfer full): a workspace
 *
 * Drops a reference; the last one closes the root's descriptor.
 */
void
sandbox_workspace_unref (SandboxWorkspace *self)
{
  g_return_if_fail (self != NULL);

  g_atomic_rc_box_release_full (self, sandbox_workspace_clear);
}

/**
 * sandbox_workspace_open_at: (skip)
 * @dir_fd: a directory fd @path is relative to, or `AT_FDCWD`
 * @path: the host path of a workspace directory
 * @flags: how the workspace writes
 * @error: return location for a #GError
 *
 * Opens the workspace root as an O_PATH directory fd, and checks that the
 * kernel can resolve paths beneath it, so a kernel without openat2() is
 * reported here (%SANDBOX_ERROR_UNAVAILABLE) rather than at the first read.
 * @path itself is the caller's: it is opened as given, links included.
 * The message of a failure names no host path.
 *
 * Returns: (transfer full): the workspace, or %NULL with @error set
 */
SandboxWorkspace *
sandbox_workspace_open_at (int                     dir_fd,
                           const char             *path,
                           SandboxWorkspaceFlags   flags,
                           GError                **error)
{
  g_auto(SandboxWorkspaceFd) root_fd = -1;
  g_auto(SandboxWorkspaceFd) probe_fd = -1;
  SandboxWorkspace *self;

  g_return_val_if_fail (dir_fd >= 0 || dir_fd == AT_FDCWD, NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  root_fd = openat (dir_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Cannot open the workspace directory: %s", g_strerror (saved_errno));
      return NULL;
    }

  probe_fd = sandbox_workspace_open_beneath (root_fd, ".", O_PATH | O_DIRECTORY, 0);
  if (probe_fd < 0)
    {
      sandbox_workspace_set_errno_error (error, errno, "open", ".");
      return NULL;
    }

  self = g_atomic_rc_box_new0 (SandboxWorkspace);
  self->fd = g_steal_fd (&root_fd);
  self->lower_fd = -1;
  self->flags = flags;
  return self;
}

/**
 * sandbox_workspace_open:
 * @path: the host path of a workspace directory
 * @flags: how the workspace writes
 * @error: return location for a #GError
 *
 * Opens a workspace for contained file I/O; see
 * [func@Sandbox.Workspace.open_at]. A missing directory is
 * %G_IO_ERROR_NOT_FOUND.
 *
 * Returns: (transfer full): the workspace, or %NULL with @error set
 */
SandboxWorkspace *
sandbox_workspace_open (const char             *path,
                        SandboxWorkspaceFlags   flags,
                        GError                **error)
{
  return sandbox_workspace_open_at (AT_FDCWD, path, flags, error);
}

/**
 * sandbox_workspace_open_overlay:
 * @upper: the host path of the workspace's own directory, the upper layer
 * @lower: the host path of the directory below it, the lower layer (a
 *   template's data), which is never written
 * @flags: how the workspace writes
 * @error: return location for a #GError
 *
 * Opens a layered workspace: the view overlayfs gives of @lower under
 * @upper (mounted with `userxattr`, `redirect_dir=nofollow`,
 * `metacopy=off`), computed on the host without mounting anything. Reads
 * and listings show the merged view, honouring whiteouts and opaque
 * directories; writes and removals change @upper only, as overlayfs would
 * (directories copied up, whiteouts for what the lower layer has), with
 * the same containment as [func@Sandbox.Workspace.open] in both layers:
 * symbolic links in either are followed only inside the merged view.
 * Errors as [func@Sandbox.Workspace.open_at], for either directory.
 *
 * Returns: (transfer full): the workspace, or %NULL with @error set
 */
SandboxWorkspace *
sandbox_workspace_open_overlay (const char             *upper,
                                const char             *lower,
                                SandboxWorkspaceFlags   flags,
                                GError                **error)
{
  g_autoptr(SandboxWorkspace) self = NULL;
  g_autoptr(SandboxWorkspace) below = NULL;

  g_return_val_if_fail (upper != NULL, NULL);
  g_return_val_if_fail (lower != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  self = sandbox_workspace_open_at (AT_FDCWD, upper, flags, error);
  if (self == NULL)
    return NULL;
  below = sandbox_workspace_open_at (AT_FDCWD, lower, SANDBOX_WORKSPACE_FLAGS_NONE, error);
  if (below == NULL)
    return NULL;
  self->lower_fd = g_steal_fd (&below->fd);
  return g_steal_pointer (&self);
}

/**
 * sandbox_workspace_is_overlay:
 * @self: a workspace
 *
 * Tells whether @self is layered ([func@Sandbox.Workspace.open_overlay]).
 *
 * Returns: %TRUE for an overlay workspace
 */
gboolean
sandbox_workspace_is_overlay (SandboxWorkspace *self)
{
  g_return_val_if_fail (self != NULL, FALSE);

  return self->lower_fd >= 0;
}

/**
 * sandbox_workspace_get_fd: (skip)
 * @self: a workspace
 *
 * The root's descriptor, for a store's own *at() calls next to what
 * SandboxWorkspace does. It is an O_PATH directory fd, open as long as
 * @self is; do not close it. Of an overlay workspace, it is the upper
 * layer's.
 *
 * Returns: the root's O_PATH fd
 */
int
sandbox_workspace_get_fd (SandboxWorkspace *self)
{
  g_return_val_if_fail (self != NULL, -1);

  return self->fd;
}

/**
 * sandbox_workspace_get_flags:
 * @self: a workspace
 *
 * Tells how @self writes: the flags it was opened with, which never change.
 *
 * Returns: the flags @self was opened with
 */
SandboxWorkspaceFlags
sandbox_workspace_get_flags (SandboxWorkspace *self)
{
  g_return_val_if_fail (self != NULL, SANDBOX_WORKSPACE_FLAGS_NONE);

  return self->flags;
}
