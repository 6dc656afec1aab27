/* sandbox-bubblewrap-store-layout-private.h — between the store's files
 *
 * The store is split by concern: the state directory and durability
 * (sandbox-bubblewrap-store.c), templates (-templates.c), sessions and
 * leases (-sessions.c), their guests' ids (-guests.c), a dead owner's
 * leftovers (-leftovers.c) and the store's own view (-view.c). This is
 * what they share.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-bubblewrap-store-private.h"

G_BEGIN_DECLS

/*
 * The layout and semantics are the reference's sandboxStorage. The state
 * directory belongs to the trusted host; only workspace contents are shaped
 * by guests, so everything that walks into a workspace (copying a template
 * in, removing a session) goes through SandboxWorkspace, which never
 * follows a link out.
 *
 * Templates are written into a temporary directory and renamed into place;
 * losing that race to an identical key is fine. Directories are 0700, files
 * 0600.
 */

struct _SandboxBubblewrapStore
{
  char *root;       /* the realpath of the state directory */
  char *name;
  char *base;       /* root/sha256(name) */
  char *templates;  /* base/templates */
  char *sessions;   /* base/sessions */
  char *runtimes;   /* base/runtimes */
  gboolean durable; /* fsync before renames and state writes */
  SandboxWorkspaceOwner guest;   /* who owns workspaces, unless @per_session */
  gboolean give;    /* whether that is not the host: workspaces are given to it */
  gboolean per_session;   /* each session's guest has ids of its own, from: */
  SandboxBubblewrapGuestRange range;
  gboolean overlay; /* whether new sessions are layered over their template */
  guint64 workspace_quota;   /* bytes each new session may hold (0: no limit) */
  /* Template key → its measure (guint64[2]: files, bytes), for reporting
   * copies. A stored template never changes (its key covers its content),
   * so each is walked once. */
  GMutex measures_lock;
  GHashTable *measures;
};

/*
 * A session's workspace is either its own copy of the template
 * (sessions/<id>/workspace/) or layered (sessions/<id>/layers/): the
 * upper layer layers/upper/ and overlayfs' work directories in
 * layers/work/, one per running sandbox (the upper layer and a work
 * directory must be on one mount inside the sandbox, so they share a
 * directory), over the template's data, templates/<key>/data/. Which one
 * a session has is its layout; it keeps it for life.
 */
#define SESSION_LAYERS "layers"

static inline gboolean
session_is_layered (const char *directory)
{
  g_autofree char *layers = g_build_filename (directory, SESSION_LAYERS, NULL);

  return g_file_test (layers, G_FILE_TEST_IS_DIR);
}

/* The host path of the directory the session's files are in: its own
 * copy, or its upper layer. */
static inline char *
session_workspace_path (const char *directory)
{
  if (session_is_layered (directory))
    return g_build_filename (directory, SESSION_LAYERS, "upper", NULL);
  return g_build_filename (directory, "workspace", NULL);
}

static inline gboolean
set_errno_error (GError    **error,
                 int         saved_errno,
                 const char *what,
                 const char *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s", what, path, g_strerror (saved_errno));
  return FALSE;
}

static inline char *
sha256_hex (const char *text)
{
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
}

static inline gboolean
ensure_directory (const char  *path,
                  GError     **error)
{
  if (mkdir (path, 0700) == 0 || errno == EEXIST)
    return TRUE;
  return set_errno_error (error, errno, "Could not create directory", path);
}

static inline int
open_directory (const char  *path,
                GError     **error)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

  if (fd < 0)
    set_errno_error (error, errno, "Could not open directory", path);
  return fd;
}

/* fsync()s @fd, the descriptor of @path. */
static inline gboolean
sync_fd (int          fd,
         const char  *path,
         GError     **error)
{
  if (fsync (fd) < 0)
    return set_errno_error (error, errno, "Could not sync", path);
  return TRUE;
}

gboolean sandbox_bubblewrap_store_read_parent (SandboxBubblewrapStore  *self,
                                               const char              *key,
                                               char                   **parent,
                                               GError                 **error);
gboolean sandbox_bubblewrap_store_try_lock_entry (int                      ready_fd,
                                                  const char              *what,
                                                  const char              *key,
                                                  const char              *busy_reason,
                                                  GError                 **error);
gboolean sandbox_bubblewrap_store_remove_entry   (SandboxBubblewrapStore  *self,
                                                  const char              *parent,
                                                  const char              *key,
                                                  const char              *what,
                                                  GError                 **error);
int sandbox_bubblewrap_store_begin_build (const char              *directory,
                                          int                      templates_fd,
                                          char                   **uuid,
                                          GError                 **error);

static inline char *
lease_path (const char *directory)
{
  return g_build_filename (directory, "lease", NULL);
}

static inline guint
count_sessions_of (GPtrArray  *states,
                   const char *template_key)
{
  guint n = 0;

  for (guint i = 0; i < states->len; i++)
    if (g_str_equal (sandbox_state_get_template_key (states->pdata[i]), template_key))
      n++;
  return n;
}

gboolean      sandbox_bubblewrap_store_sync_directory  (const char              *path,
                                                         GError                 **error);
gboolean      sandbox_bubblewrap_store_sync_tree       (int                      parent_fd,
                                                         const char              *name,
                                                         const char              *path,
                                                         guint                    depth,
                                                         GError                 **error);
gboolean      sandbox_bubblewrap_store_write_new_file  (const char              *path,
                                                         const char              *contents,
                                                         gboolean                 durable,
                                                         GError                 **error);
gboolean      sandbox_bubblewrap_store_write_atomically (const char             *path,
                                                         const char              *contents,
                                                         gboolean                 durable,
                                                         GError                 **error);
char         *sandbox_bubblewrap_store_ready_record    (const char              *backend,
                                                         const char              *template_key,
                                                         const char              *name);
gboolean      sandbox_bubblewrap_store_read_template_name (SandboxBubblewrapStore *self,
                                                         const char              *key,
                                                         char                   **name,
                                                         GError                 **error);
int           sandbox_bubblewrap_store_lock_template   (SandboxBubblewrapStore  *self,
                                                         const char              *key,
                                                         GError                 **error);
SandboxState *sandbox_bubblewrap_store_read_state      (const char              *directory,
                                                         const char              *session_id,
                                                         GError                 **error);
GPtrArray    *sandbox_bubblewrap_store_collect_states  (SandboxBubblewrapStore  *self,
                                                         GError                 **error);
GPtrArray    *sandbox_bubblewrap_store_list_ids        (const char              *directory,
                                                         GError                 **error);
SandboxBubblewrapLease *sandbox_bubblewrap_store_make_session (SandboxBubblewrapStore *self,
                                                               SandboxState           *state,
                                                               gboolean                layered,
                                                               GError                **error);
gboolean      sandbox_bubblewrap_store_measure_tree    (const char              *path,
                                                         guint64                 *n_files,
                                                         guint64                 *n_bytes,
                                                         GError                 **error);
gboolean      sandbox_bubblewrap_store_measure_template (SandboxBubblewrapStore *self,
                                                         const char              *key,
                                                         guint64                 *n_files,
                                                         guint64                 *n_bytes,
                                                         GError                 **error);
/* sandbox-bubblewrap-store-snapshots.c */
/* The longest chain of snapshots over a template: each is a lower layer
 * of the sessions forked from it, and the keeper's mount options (the
 * layers' paths relative to the session's) must fit in a page. */
#define SNAPSHOT_MAX_DEPTH 32u

/* In templates/KEY/ of a template whose runtime is writable per session:
 * the mark of it (empty); of a snapshot of a session on one: the
 * session's changes to its runtime, frozen as its workspace's are in
 * data/. */
#define RUNTIME_WRITABLE "runtime-writable"
#define RUNTIME_LAYER "runtime-data"
/* In templates/KEY/ of a snapshot past SNAPSHOT_MAX_DEPTH: the key of the
 * whole tree its data lies over (the bottom of its line). */
#define FLATTENED_MARK "flattened"
gboolean      sandbox_bubblewrap_store_read_flattened  (SandboxBubblewrapStore  *self,
                                                         const char              *key,
                                                         char                   **below,
                                                         GError                 **error);
gboolean      sandbox_bubblewrap_store_copy_entry_at   (int                      from,
                                                         int                      to,
                                                         const char              *name,
                                                         const char              *path,
                                                         GCancellable            *cancellable,
                                                         GError                 **error);
gboolean      sandbox_bubblewrap_store_copy_attributes_at (int                   from,
                                                            int                   to,
                                                            const char           *path,
                                                            GError              **error);
/* sandbox-bubblewrap-store-merge.c */
gboolean      sandbox_bubblewrap_store_merge_layers_at (const char * const      *layers,
                                                         gboolean                 as_layer,
                                                         int                      parent_fd,
                                                         const char              *name,
                                                         GCancellable            *cancellable,
                                                         GError                 **error);
char         *sandbox_bubblewrap_store_copy_layer_at   (int                      from,
                                                         int                      to,
                                                         const char              *path,
                                                         GCancellable            *cancellable,
                                                         GError                 **error);
char        **sandbox_bubblewrap_store_lower_chain     (SandboxBubblewrapStore  *self,
                                                         const char              *key,
                                                         GError                 **error);
gboolean      sandbox_bubblewrap_store_is_layer        (SandboxBubblewrapStore  *self,
                                                         const char              *key);
gboolean      sandbox_bubblewrap_store_is_flat         (SandboxBubblewrapStore  *self,
                                                         const char              *key);
gboolean      sandbox_bubblewrap_store_copy_exactly    (SandboxBubblewrapStore  *self,
                                                         SandboxBubblewrapLease  *lease,
                                                         int                      session_fd,
                                                         const char              *name,
                                                         const char              *source,
                                                         GCancellable            *cancellable,
                                                         GError                 **error);
guint         sandbox_bubblewrap_store_count_children  (SandboxBubblewrapStore  *self,
                                                         const char              *key);
/* sandbox-bubblewrap-store-guests.c */
gboolean      sandbox_bubblewrap_store_read_guest_ids  (const char              *directory,
                                                         SandboxBubblewrapGuest  *guest);
void          sandbox_bubblewrap_store_release_guest_ids (SandboxBubblewrapStore *self,
                                                         const char              *directory,
                                                         const SandboxBubblewrapGuest *guest);
gboolean      sandbox_bubblewrap_store_assign_guest    (SandboxBubblewrapStore  *self,
                                                         SandboxBubblewrapLease  *lease,
                                                         GError                 **error);
const SandboxWorkspaceOwner *
              sandbox_bubblewrap_lease_owner           (SandboxBubblewrapLease  *lease,
                                                         SandboxWorkspaceOwner   *owner);
gboolean      sandbox_bubblewrap_store_give_template_to_host (SandboxBubblewrapStore *self,
                                                         const char              *template_key,
                                                         GError                 **error);

/* sandbox-bubblewrap-store-runtimes.c */
gboolean      sandbox_bubblewrap_store_lock_runtime    (SandboxBubblewrapStore  *self,
                                                         SandboxTemplate         *template_,
                                                         int                     *lock_fd,
                                                         GError                 **error);
gboolean      sandbox_bubblewrap_store_record_runtime  (SandboxBubblewrapStore  *self,
                                                         SandboxTemplate         *template_,
                                                         const char              *build,
                                                         GError                 **error);

gboolean      sandbox_bubblewrap_lease_end_leftovers   (SandboxBubblewrapLease  *lease,
                                                         const char              *executable,
                                                         GError                 **error);

G_END_DECLS
