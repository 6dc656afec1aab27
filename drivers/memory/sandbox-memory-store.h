/* sandbox-memory-store.h — templates and sessions of memory backends
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-memory-private.h"

#include "sandbox-memory-workspace.h"

G_BEGIN_DECLS

typedef struct _SandboxMemoryStore SandboxMemoryStore;

SandboxMemoryStore     *sandbox_memory_store_new            (const char          *backend_name);
SandboxMemoryStore     *sandbox_memory_store_get_shared     (const char          *state_directory,
                                                             const char          *backend_name);
SandboxMemoryStore     *sandbox_memory_store_ref            (SandboxMemoryStore  *self);
void                    sandbox_memory_store_unref          (SandboxMemoryStore  *self);
char                   *sandbox_memory_store_prewarm        (SandboxMemoryStore  *self,
                                                             SandboxTemplate     *template_,
                                                             gboolean            *reused,
                                                             GError             **error);
gboolean                sandbox_memory_store_has            (SandboxMemoryStore  *self,
                                                             gboolean             sessions,
                                                             const char          *key);
gboolean                sandbox_memory_store_take_lease     (SandboxMemoryStore  *self,
                                                             const char          *session_id,
                                                             GError             **error);
void                    sandbox_memory_store_release_lease  (SandboxMemoryStore  *self,
                                                             const char          *session_id);
gboolean                sandbox_memory_store_new_session    (SandboxMemoryStore  *self,
                                                             SandboxState        *state,
                                                             GError             **error);
void                    sandbox_memory_store_remove_session (SandboxMemoryStore  *self,
                                                             const char          *session_id);
GPtrArray              *sandbox_memory_store_list_sessions  (SandboxMemoryStore  *self);
GPtrArray              *sandbox_memory_store_list_templates (SandboxMemoryStore  *self);
SandboxState           *sandbox_memory_store_lookup_state   (SandboxMemoryStore  *self,
                                                             const char          *session_id,
                                                             SandboxMemoryWorkspace **workspace,
                                                             GError             **error);
gboolean                sandbox_memory_store_query_lease_owner (SandboxMemoryStore *self,
                                                             const char          *session_id,
                                                             SandboxLeaseOwner  **owner,
                                                             GError             **error);
gboolean                sandbox_memory_store_delete_template (SandboxMemoryStore *self,
                                                             const char          *template_key,
                                                             GError             **error);
char                   *sandbox_memory_store_snapshot       (SandboxMemoryStore  *self,
                                                             const char          *session_id,
                                                             GError             **error);
gboolean                sandbox_memory_store_restore        (SandboxMemoryStore  *self,
                                                             const char          *session_id,
                                                             const char          *key,
                                                             GError             **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxMemoryStore, sandbox_memory_store_unref)

G_END_DECLS
