/* sandbox-workspace-fs.h: contained host-side access to a session workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#if !defined(SANDBOX_COMPILATION) && !defined(SANDBOX_BUBBLEWRAP_COMPILATION)
# error "sandbox-workspace-fs.h is private to the bubblewrap driver."
#endif

#pragma once

#include <sys/types.h>

#include <gio/gio.h>

G_BEGIN_DECLS

/*
 * Every function here treats the workspace as hostile: guest commands run
 * as the same uid and may replace any entry with a symbolic link, a FIFO, a
 * socket, a hard link to a host file or a huge sparse file at any moment.
 * Resolution goes through openat2() with RESOLVE_BENEATH, so nothing outside
 * the workspace root is ever read, written, created or removed, and no call
 * blocks on a FIFO. Error messages name workspace-relative paths only.
 *
 * @relative arguments are canonical workspace-relative paths ("dir/file"),
 * or "." for the root itself. All functions are thread-safe.
 *
 * Ownership: guests may run as other ids than the host (a root host runs
 * them as the backend's guest-uid), and must still be able to change what
 * the host put in their workspace. So whatever these functions create —
 * files, the directories a write makes on the way, a template's copy — gets
 * the owner and group of the workspace root (copy_tree: the owner it is
 * given), set with fchown() on the descriptor of what was just created,
 * never by path. Nothing the guest made is ever chowned by them, except by
 * sandbox_workspace_give_tree(), which is for when no guest runs.
 */

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

int       sandbox_workspace_open        (const char    *workspace_path,
                                         GError       **error);

GBytes   *sandbox_workspace_read        (int            root_fd,
                                         const char    *relative,
                                         gsize          max_bytes,
                                         GError       **error);

gboolean  sandbox_workspace_write       (int            root_fd,
                                         const char    *relative,
                                         GBytes        *contents,
                                         gsize          max_bytes,
                                         GError       **error);

gboolean  sandbox_workspace_write_full  (int            root_fd,
                                         const char    *relative,
                                         GBytes        *contents,
                                         gsize          max_bytes,
                                         gboolean       durable,
                                         GError       **error);

guint     sandbox_workspace_remove_temporaries (int     root_fd);

void      sandbox_workspace_set_unnamed_files_enabled (gboolean enabled);

gboolean  sandbox_workspace_remove      (int            root_fd,
                                         const char    *relative,
                                         GError       **error);

GVariant *sandbox_workspace_list        (int            root_fd,
                                         const char    *relative,
                                         guint          max_entries,
                                         gboolean      *truncated,
                                         GError       **error);

gboolean  sandbox_workspace_copy_tree   (int            src_dir_fd,
                                         int            dst_parent_fd,
                                         const char    *dst_name,
                                         const SandboxWorkspaceOwner *owner,
                                         GCancellable  *cancellable,
                                         GError       **error);

gboolean  sandbox_workspace_give_tree   (int            parent_fd,
                                         const char    *name,
                                         const SandboxWorkspaceOwner *owner,
                                         GError       **error);

gboolean  sandbox_workspace_remove_tree (int            parent_fd,
                                         const char    *name,
                                         GError       **error);

G_END_DECLS
