/* sandbox-workspace.h — contained host-side file I/O in a hostile workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Threat model. A workspace is a host directory that untrusted guest
 * commands write to while the host reads and writes it too. The guest may,
 * at any moment and racing every host call, replace any entry of it with a
 * symbolic link (absolute, relative, to /proc magic links), a FIFO, a
 * socket, a device node, a hard link to a host file, a huge or sparse file,
 * or rename directories the host is inside of.
 *
 * What SandboxWorkspace guarantees, whatever the guest does:
 *
 *  - nothing outside the workspace root is read, written, created, removed
 *    or re-owned: every path is resolved by the kernel with openat2()
 *    (RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV) relative to
 *    a descriptor of the root, so symbolic links that stay inside are
 *    followed and any way out fails atomically with %SANDBOX_ERROR_PATH;
 *    after resolution only *at() calls on directory descriptors are used,
 *    and final components that are created or removed are never followed;
 *  - no call blocks on a FIFO or socket (reads open O_NONBLOCK and insist on
 *    a regular file), and reads are bounded by their caller's cap whatever
 *    st_size claims or the file grows to meanwhile;
 *  - writes never write through what is at the target: the contents go to
 *    a new file that is then linked or renamed into place, so a planted
 *    link or guest hard link is replaced, a failed write leaves nothing
 *    half-written, and a host killed mid-write leaves no temporary behind
 *    (on filesystems without O_TMPFILE, a named temporary that
 *    sandbox_workspace_remove_temporaries() removes at recovery);
 *  - removal never follows links, walks any depth with a constant number of
 *    descriptors, and checks each step back up by inode identity, stopping
 *    (%G_IO_ERROR_BUSY) if the guest moved a directory meanwhile;
 *  - error messages name workspace-relative paths only, never host paths.
 *
 * What it does not guarantee: the contents a read returns or a listing
 * shows are whatever the guest had there at that instant (it may change
 * them right after); a removal of a tree the guest keeps filling may fail;
 * the workspace root itself must be a directory the guest cannot replace
 * (its parent belongs to the host). Copying (sandbox_workspace_copy_tree())
 * trusts its source — a template — only to be free of special files, which
 * it refuses; symbolic links are copied as links, never followed.
 *
 * Ownership. Guests may run as other ids than the host, and must still be
 * able to change what the host put in their workspace. So whatever these
 * functions create — files, the directories a write makes on the way, a
 * copy — gets the owner and group of the workspace root (a copy: the owner
 * it is given), set with fchown() on the descriptor of what was just
 * created, never by path. Nothing the guest made is ever chowned, except by
 * sandbox_workspace_give_tree_at(), which is for when no guest runs.
 *
 * Layers. A workspace may be an overlay (sandbox_workspace_open_overlay()):
 * a template's data below, read-only, and the session's own directory
 * above, which the guest controls completely. The same guarantees hold in
 * both layers, and the view is the one overlayfs gives the guest
 * (sandbox-workspace-overlay.c).
 *
 * Relative paths given to these functions are canonical workspace-relative
 * paths ("dir/file", as sandbox_path_relative() returns them), or "." for
 * the root itself; anything else is %SANDBOX_ERROR_PATH. A workspace is
 * immutable once open: all functions are thread-safe.
 */

#pragma once

#if !defined(SANDBOX_DRIVER_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox-backend-driver.h> can be included directly."
#endif

#include <sys/types.h>

#include <gio/gio.h>

#include "sandbox-version-macros.h"

G_BEGIN_DECLS

/**
 * SandboxWorkspaceFlags:
 * @SANDBOX_WORKSPACE_FLAGS_NONE: no flags
 * @SANDBOX_WORKSPACE_FLAGS_DURABLE: writes sync the new file before it is
 *   named and its directory after, so a power loss leaves the old file or
 *   the new one
 * @SANDBOX_WORKSPACE_FLAGS_NAMED_TEMPORARIES: writes go through a named
 *   temporary file, as on a filesystem without O_TMPFILE (for testing that
 *   fallback)
 *
 * How a [struct@Sandbox.Workspace] writes.
 */
typedef enum /*< flags >*/
{
  SANDBOX_WORKSPACE_FLAGS_NONE = 0,
  SANDBOX_WORKSPACE_FLAGS_DURABLE = 1 << 0,
  SANDBOX_WORKSPACE_FLAGS_NAMED_TEMPORARIES = 1 << 1,
} SandboxWorkspaceFlags;

/**
 * SandboxWorkspaceOwner:
 * @uid: the owner
 * @gid: the group
 *
 * Who is to own entries in a workspace.
 */
typedef struct
{
  uid_t uid;
  gid_t gid;
} SandboxWorkspaceOwner;

/* A boxed, reference-counted type (not a GObject: SANDBOX_WORKSPACE is the
 * workspace's mount point, sandbox-path.h). */
typedef struct _SandboxWorkspace SandboxWorkspace;

#define SANDBOX_TYPE_WORKSPACE (sandbox_workspace_get_type ())

SANDBOX_AVAILABLE_IN_ALL
GType                  sandbox_workspace_get_type  (void) G_GNUC_CONST;

SANDBOX_AVAILABLE_IN_ALL
SandboxWorkspace      *sandbox_workspace_open     (const char             *path,
                                                   SandboxWorkspaceFlags   flags,
                                                   GError                **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxWorkspace      *sandbox_workspace_open_at  (int                     dir_fd,
                                                   const char             *path,
                                                   SandboxWorkspaceFlags   flags,
                                                   GError                **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxWorkspace      *sandbox_workspace_open_overlay (const char          *upper,
                                                   const char             *lower,
                                                   SandboxWorkspaceFlags   flags,
                                                   GError                **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean               sandbox_workspace_is_overlay (SandboxWorkspace      *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxWorkspace      *sandbox_workspace_ref       (SandboxWorkspace       *self);
SANDBOX_AVAILABLE_IN_ALL
void                   sandbox_workspace_unref     (SandboxWorkspace       *self);
SANDBOX_AVAILABLE_IN_ALL
int                    sandbox_workspace_get_fd    (SandboxWorkspace       *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxWorkspaceFlags  sandbox_workspace_get_flags (SandboxWorkspace       *self);

SANDBOX_AVAILABLE_IN_ALL
GBytes   *sandbox_workspace_read        (SandboxWorkspace  *self,
                                         const char        *relative,
                                         gsize              max_bytes,
                                         GError           **error);
SANDBOX_AVAILABLE_IN_ALL
GVariant *sandbox_workspace_list        (SandboxWorkspace  *self,
                                         const char        *relative,
                                         guint              max_entries,
                                         gboolean          *truncated,
                                         GError           **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean  sandbox_workspace_write       (SandboxWorkspace  *self,
                                         const char        *relative,
                                         GBytes            *contents,
                                         gsize              max_bytes,
                                         GError           **error);
SANDBOX_AVAILABLE_IN_ALL
guint     sandbox_workspace_remove_temporaries (SandboxWorkspace *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean  sandbox_workspace_remove      (SandboxWorkspace  *self,
                                         const char        *relative,
                                         GError           **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean  sandbox_workspace_copy_tree   (SandboxWorkspace            *self,
                                         SandboxWorkspace            *destination,
                                         const char                  *name,
                                         const SandboxWorkspaceOwner *owner,
                                         GCancellable                *cancellable,
                                         GError                     **error);

/**
 * SandboxWorkspaceCopyProgress:
 * @files_done: how many files (regular files and symbolic links) were copied
 * @bytes_done: how many bytes of regular files were copied
 * @user_data: the data given with the callback
 *
 * How far [func@Sandbox.Workspace.copy_tree_with_progress_at] is. Called in
 * the copying thread, at most every %SANDBOX_WORKSPACE_COPY_PROGRESS_INTERVAL
 * and once more when the copy is complete.
 */
typedef void (*SandboxWorkspaceCopyProgress) (guint64  files_done,
                                              guint64  bytes_done,
                                              gpointer user_data);

/**
 * SANDBOX_WORKSPACE_COPY_PROGRESS_INTERVAL:
 *
 * The least time between two reports of a copy's progress, in
 * microseconds (50 ms: a bar redrawn 20 times a second looks smooth, and
 * the copy pays one clock read per file).
 */
#define SANDBOX_WORKSPACE_COPY_PROGRESS_INTERVAL (50 * G_TIME_SPAN_MILLISECOND)

/* On directory descriptors, for stores that keep workspaces in their own
 * directories. */
SANDBOX_AVAILABLE_IN_ALL
gboolean  sandbox_workspace_copy_tree_at   (int                          src_dir_fd,
                                            int                          dst_parent_fd,
                                            const char                  *dst_name,
                                            const SandboxWorkspaceOwner *owner,
                                            GCancellable                *cancellable,
                                            GError                     **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean  sandbox_workspace_copy_tree_with_progress_at (int                          src_dir_fd,
                                            int                          dst_parent_fd,
                                            const char                  *dst_name,
                                            const SandboxWorkspaceOwner *owner,
                                            SandboxWorkspaceCopyProgress progress,
                                            gpointer                     progress_data,
                                            GCancellable                *cancellable,
                                            GError                     **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean  sandbox_workspace_give_tree_at   (int                          parent_fd,
                                            const char                  *name,
                                            const SandboxWorkspaceOwner *owner,
                                            GError                     **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean  sandbox_workspace_remove_tree_at (int                          parent_fd,
                                            const char                  *name,
                                            GError                     **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxWorkspace, sandbox_workspace_unref)

G_END_DECLS
