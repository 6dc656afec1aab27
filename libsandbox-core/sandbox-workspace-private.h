/* sandbox-workspace-private.h — what the SandboxWorkspace files share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The resolution primitives, error reporting and descriptor helpers of
 * sandbox-workspace-fd.c, used by the -read, -write, -remove, -copy and
 * -overlay files; the table of a workspace's verbs, plain or layered.
 */

#pragma once

#include <dirent.h>

#include "sandbox-workspace.h"

G_BEGIN_DECLS

/* What read, list, write and remove do for one form of workspace, plain
 * (the -read, -write and -remove files) or layered (the -overlay file).
 * sandbox-workspace.c chooses the table when it opens the workspace; the
 * public verbs have checked the path (and a write its size) and left out
 * "." where it is refused before they call through it. */
typedef struct
{
  GBytes   *(*read)   (SandboxWorkspace  *self,
                       const char        *relative,
                       gsize              max_bytes,
                       GError           **error);
  GVariant *(*list)   (SandboxWorkspace  *self,
                       const char        *relative,
                       guint              max_entries,
                       gboolean          *truncated,
                       GError           **error);
  gboolean  (*write)  (SandboxWorkspace  *self,
                       const char        *relative,
                       GBytes            *contents,
                       GError           **error);
  gboolean  (*remove) (SandboxWorkspace  *self,
                       const char        *relative,
                       GError           **error);
} SandboxWorkspaceOps;

/* Immutable once open; in a g_atomic_rc_box. */
struct _SandboxWorkspace
{
  int                        fd;        /* O_PATH | O_DIRECTORY, the root (an
                                         * overlay's upper layer) */
  int                        lower_fd;  /* O_PATH | O_DIRECTORY, an overlay's
                                         * lower layer, or -1 */
  SandboxWorkspaceFlags      flags;
  const SandboxWorkspaceOps *ops;       /* plain or overlay */
};

/* The plain verbs, of sandbox-workspace-read.c, -write.c and -remove.c. */
GBytes   *sandbox_workspace_plain_read   (SandboxWorkspace  *self,
                                          const char        *relative,
                                          gsize              max_bytes,
                                          GError           **error);
GVariant *sandbox_workspace_plain_list   (SandboxWorkspace  *self,
                                          const char        *relative,
                                          guint              max_entries,
                                          gboolean          *truncated,
                                          GError           **error);
gboolean  sandbox_workspace_plain_write  (SandboxWorkspace  *self,
                                          const char        *relative,
                                          GBytes            *contents,
                                          GError           **error);
gboolean  sandbox_workspace_plain_remove (SandboxWorkspace  *self,
                                          const char        *relative,
                                          GError           **error);

/* The listing buffer of one getdents64() call. */
#define SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE (32 * 1024)

/* An fd closed when it leaves scope; 2.74 has no g_autofd. */
typedef int SandboxWorkspaceFd;

void     sandbox_workspace_fd_close (int fd);
void     sandbox_workspace_fd_clear (int *fd);

G_DEFINE_AUTO_CLEANUP_FREE_FUNC (SandboxWorkspaceFd, sandbox_workspace_fd_close, -1)

gboolean sandbox_workspace_set_errno_error (GError     **error,
                                            int          saved_errno,
                                            const char  *action,
                                            const char  *relative);
gboolean sandbox_workspace_check_relative  (const char  *relative,
                                            GError     **error);
gboolean sandbox_workspace_check_entry_name (const char  *name,
                                             GError     **error);

int      sandbox_workspace_open_beneath    (int          root_fd,
                                            const char  *relative,
                                            guint64      flags,
                                            guint64      resolve);
const char *sandbox_workspace_split_parent (const char  *relative,
                                            char       **parent);

gboolean sandbox_workspace_give_to_owner   (int                          fd,
                                            const SandboxWorkspaceOwner *owner);

/* The calling thread's filesystem ids, while it creates as the owner. */
typedef struct
{
  gboolean changed;
  uid_t    uid;
  gid_t    gid;
} SandboxWorkspaceFsIds;

SandboxWorkspaceFsIds sandbox_workspace_fs_ids_enter (const SandboxWorkspaceOwner *owner);
void     sandbox_workspace_fs_ids_leave    (const SandboxWorkspaceFsIds *saved);
gboolean sandbox_workspace_write_all       (int           fd,
                                            const guint8 *data,
                                            gsize         size);

/* What the plain verbs' files give the overlay (sandbox-workspace-overlay.c)
 * too. */
gboolean sandbox_workspace_set_read_open_error (GError    **error,
                                                int         saved_errno,
                                                const char *relative);
GBytes  *sandbox_workspace_read_opened     (int           fd,
                                            gsize         max_bytes,
                                            const char   *relative,
                                            GError      **error);
const char *sandbox_workspace_entry_type_name (mode_t     mode);
gboolean sandbox_workspace_owner_of_root   (int                    root_fd,
                                            SandboxWorkspaceOwner *owner);
/* Makes an entry (a file, a directory, a link) named @name in @dir_fd
 * only if nothing is there (EEXIST otherwise), following no link. */
typedef int (*SandboxWorkspaceMakeTemporaryFunc) (int         dir_fd,
                                                  const char *name,
                                                  gpointer    data);
int      sandbox_workspace_make_temporary  (int                                dir_fd,
                                            char                              *name,
                                            SandboxWorkspaceMakeTemporaryFunc  make,
                                            gpointer                           data);
gboolean sandbox_workspace_replace_file    (int                          parent_fd,
                                            const char                  *name,
                                            GBytes                      *contents,
                                            SandboxWorkspaceFlags        flags,
                                            mode_t                       inherited_mode,
                                            const char                  *relative,
                                            const SandboxWorkspaceOwner *owner,
                                            GError                     **error);
gboolean sandbox_workspace_remove_entry    (int           parent_fd,
                                            const char   *name,
                                            const char   *top,
                                            GError      **error);

/* Walks the entries of a directory fd, "." and ".." left out, one
 * getdents64() buffer at a time. */
typedef struct
{
  int      fd;
  guint8  *buffer;    /* SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE bytes */
  ssize_t  length;
  ssize_t  offset;
} SandboxWorkspaceDirents;

void     sandbox_workspace_dirents_init (SandboxWorkspaceDirents  *dirents,
                                         int                       fd,
                                         guint8                   *buffer);
gboolean sandbox_workspace_dirents_next (SandboxWorkspaceDirents  *dirents,
                                         struct dirent64         **entry);

G_END_DECLS
