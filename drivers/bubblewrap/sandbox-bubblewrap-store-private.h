/* sandbox-bubblewrap-store-private.h — templates, sessions and leases on disk
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "sandbox-bubblewrap-guest-ids-private.h"

G_BEGIN_DECLS

/**
 * SandboxBubblewrapStore:
 *
 * The state directory of one backend name (DESIGN.md §5):
 * `<root>/<sha256(name)>/templates/<key>/{ready,data/}` and
 * `<root>/<sha256(name)>/sessions/<id>/{lease,state.json,workspace/}` and
 * `<root>/<sha256(name)>/runtimes/<key>/{ready,tree/}`.
 * Reference-counted and thread-safe.
 */
typedef struct _SandboxBubblewrapStore SandboxBubblewrapStore;

/**
 * SandboxBubblewrapLease:
 * @state: the session's identity
 * @directory: the host path of the session directory
 * @workspace: the host path of the session's workspace (of a layered
 *   session, its upper layer)
 * @lower: (nullable): of a layered session, the host path of its lower
 *   layer (the template's data); %NULL for a copy
 * @layers: (nullable): of a layered session, the host path of the
 *   directory holding the upper layer and overlayfs' work directory
 * @guest: who the session's guest is on the host
 * @created: whether the session was created (rather than resumed)
 * @recovered: whether the lease was taken over from a dead owner
 * @held: whether the lease is held
 * @lock_fd: the lease file, OFD-write-locked while @held
 *
 * A session opened under its exclusive lease.
 */
typedef struct
{
  SandboxBubblewrapStore *store;
  SandboxState *state;
  char *directory;
  char *workspace;
  char **lowers;
  char *layers;
  SandboxBubblewrapGuest guest;
  gboolean created;
  gboolean recovered;
  gboolean held;
  int lock_fd;
} SandboxBubblewrapLease;

SandboxBubblewrapStore *sandbox_bubblewrap_store_open           (const char              *state_directory,
                                                                 const char              *name,
                                                                 gboolean                 durable,
                                                                 const SandboxBubblewrapGuest *guest,
                                                                 GError                 **error);
SandboxBubblewrapStore *sandbox_bubblewrap_store_ref            (SandboxBubblewrapStore  *self);
void                    sandbox_bubblewrap_store_unref          (SandboxBubblewrapStore  *self);
const char             *sandbox_bubblewrap_store_get_root       (SandboxBubblewrapStore  *self);
char                   *sandbox_bubblewrap_store_prewarm        (SandboxBubblewrapStore  *self,
                                                                 SandboxTemplate         *template_,
                                                                 gboolean                *reused,
                                                                 GCancellable            *cancellable,
                                                                 GError                 **error);
gboolean                sandbox_bubblewrap_store_check_template (SandboxBubblewrapStore  *self,
                                                                 const char              *key,
                                                                 GError                 **error);
gboolean                sandbox_bubblewrap_store_has_session    (SandboxBubblewrapStore  *self,
                                                                 const char              *session_id);
SandboxBubblewrapLease *sandbox_bubblewrap_store_take_lease     (SandboxBubblewrapStore  *self,
                                                                 const char              *session_id,
                                                                 const char              *recover_executable,
                                                                 GError                 **error);
SandboxBubblewrapLease *sandbox_bubblewrap_store_new_session    (SandboxBubblewrapStore  *self,
                                                                 SandboxState            *state,
                                                                 SandboxBackend          *reporter,
                                                                 GCancellable            *cancellable,
                                                                 GError                 **error);
gboolean                sandbox_bubblewrap_store_prepare_resumed (SandboxBubblewrapStore *self,
                                                                  SandboxBubblewrapLease *lease,
                                                                  SandboxState           *state,
                                                                  GError                **error);
gboolean                sandbox_bubblewrap_store_remove_session (SandboxBubblewrapStore  *self,
                                                                 SandboxBubblewrapLease  *lease,
                                                                 GError                 **error);
GPtrArray              *sandbox_bubblewrap_store_list_sessions  (SandboxBubblewrapStore  *self,
                                                                 GCancellable            *cancellable,
                                                                 GError                 **error);
GPtrArray              *sandbox_bubblewrap_store_list_templates (SandboxBubblewrapStore  *self,
                                                                 GCancellable            *cancellable,
                                                                 GError                 **error);
SandboxState           *sandbox_bubblewrap_store_lookup_state   (SandboxBubblewrapStore  *self,
                                                                 const char              *session_id,
                                                                 GError                 **error);
gboolean                sandbox_bubblewrap_store_query_lease_owner (SandboxBubblewrapStore *self,
                                                                 const char              *session_id,
                                                                 SandboxLeaseOwner      **owner,
                                                                 GError                 **error);
void                    sandbox_bubblewrap_store_set_layered    (SandboxBubblewrapStore  *self,
                                                                 gboolean                 layered);
void                    sandbox_bubblewrap_store_set_guest_range (SandboxBubblewrapStore *self,
                                                                  const SandboxBubblewrapGuestRange *range);
void                    sandbox_bubblewrap_store_set_workspace_quota (SandboxBubblewrapStore *self,
                                                                      guint64                 quota_bytes);
gboolean                sandbox_bubblewrap_store_delete_template (SandboxBubblewrapStore *self,
                                                                 const char              *key,
                                                                 GError                 **error);
gboolean                sandbox_bubblewrap_store_check_import   (SandboxBubblewrapStore *self,
                                                                 SandboxState           *state,
                                                                 GError                **error);
gboolean                sandbox_bubblewrap_store_import_session (SandboxBubblewrapStore *self,
                                                                 SandboxState           *state,
                                                                 SandboxWorkspaceFillFunc fill,
                                                                 gpointer                user_data,
                                                                 GCancellable           *cancellable,
                                                                 GError                **error);
int                     sandbox_bubblewrap_store_open_workspace (SandboxBubblewrapStore *self,
                                                                 const char             *session_id,
                                                                 GError                **error);
int                     sandbox_bubblewrap_store_open_template  (SandboxBubblewrapStore *self,
                                                                 const char             *key,
                                                                 GError                **error);

gboolean                sandbox_bubblewrap_store_restore_source (SandboxBubblewrapStore  *self,
                                                                 SandboxBubblewrapLease  *lease,
                                                                 const char              *key,
                                                                 char                   **source,
                                                                 gboolean                *rebase,
                                                                 GError                 **error);
gboolean                sandbox_bubblewrap_store_rebase_state   (SandboxBubblewrapStore  *self,
                                                                 SandboxBubblewrapLease  *lease,
                                                                 const char              *key,
                                                                 char                   **lowers,
                                                                 GError                 **error);
gboolean                sandbox_bubblewrap_store_refill         (SandboxBubblewrapStore  *self,
                                                                 SandboxBubblewrapLease  *lease,
                                                                 const char              *source,
                                                                 GError                 **error);
guint                   sandbox_bubblewrap_store_remove_restore_leftovers (SandboxBubblewrapLease *lease);
guint                   sandbox_bubblewrap_store_remove_build_leftovers (SandboxBubblewrapStore *self);
char                   *sandbox_bubblewrap_store_import_runtime (SandboxBubblewrapStore *self,
                                                                 GFile                  *source,
                                                                 gboolean               *reused,
                                                                 SandboxBackend         *reporter,
                                                                 GCancellable           *cancellable,
                                                                 GError                **error);
GPtrArray              *sandbox_bubblewrap_store_list_runtimes  (SandboxBubblewrapStore  *self,
                                                                 GCancellable            *cancellable,
                                                                 GError                 **error);
gboolean                sandbox_bubblewrap_store_delete_runtime (SandboxBubblewrapStore *self,
                                                                 const char             *key,
                                                                 GError                **error);
gboolean                sandbox_bubblewrap_store_runtime_of     (SandboxBubblewrapStore  *self,
                                                                 const char              *template_key,
                                                                 char                   **key,
                                                                 char                   **tree,
                                                                 char                  ***writable_lowers,
                                                                 GError                 **error);
char                   *sandbox_bubblewrap_store_snapshot       (SandboxBubblewrapStore  *self,
                                                                 SandboxBubblewrapLease  *lease,
                                                                 GCancellable            *cancellable,
                                                                 GError                 **error);
void                    sandbox_bubblewrap_lease_release        (SandboxBubblewrapLease  *lease);
void                    sandbox_bubblewrap_lease_abandon        (SandboxBubblewrapLease  *lease);
void                    sandbox_bubblewrap_lease_free           (SandboxBubblewrapLease  *lease);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxBubblewrapStore, sandbox_bubblewrap_store_unref)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxBubblewrapLease, sandbox_bubblewrap_lease_free)

G_END_DECLS
