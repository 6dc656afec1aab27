/* sandbox-workspace.c — the workspace object: opening it, plain or layered
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
 *
 * The descriptor primitives all of these use are in sandbox-workspace-fd.c.
 * A workspace opened plain or layered gets a table of its verbs
 * (SandboxWorkspaceOps) here: the public read, list, write and remove check
 * their arguments and call through it, into the plain verbs of the -read,
 * -write and -remove files or into sandbox-workspace-overlay.c, which builds
 * on the plain files' primitives and never calls the public verbs.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>

#include "sandbox-workspace-overlay-private.h"

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

G_DEFINE_BOXED_TYPE (SandboxWorkspace, sandbox_workspace, sandbox_workspace_ref,
                     sandbox_workspace_unref)

/* A workspace of one directory; a layered one has the overlay's table
 * (sandbox_workspace_overlay_ops). */
static const SandboxWorkspaceOps plain_ops = {
  .read = sandbox_workspace_plain_read,
  .list = sandbox_workspace_plain_list,
  .write = sandbox_workspace_plain_write,
  .remove = sandbox_workspace_plain_remove,
};

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
  self->ops = &plain_ops;
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
  self->ops = &sandbox_workspace_overlay_ops;
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
