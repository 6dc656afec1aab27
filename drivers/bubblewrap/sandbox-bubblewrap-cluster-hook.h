/* sandbox-bubblewrap-cluster-hook.h — the one private hook the cluster driver uses
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The cluster driver (drivers/cluster) wraps a bubblewrap backend it makes
 * through the driver kit, and moves workspaces between hosts as
 * checkpoints. Three things it needs are no public API and spell no store
 * layout: putting a session whose workspace comes from a checkpoint into
 * this host's store, reading a stopped session's workspace to checkpoint
 * it, and reading a template's files to publish them. The bubblewrap backend type carries them as type data
 * (g_type_get_qdata (G_OBJECT_TYPE (backend),
 * g_quark_from_static_string (SANDBOX_BUBBLEWRAP_CLUSTER_HOOK))), so the
 * module boundary stays: nothing is exported, and a backend without the
 * hook (another driver) simply has none.
 *
 * This header needs only <sandbox.h>: the cluster driver includes it.
 */

#pragma once

#include <sandbox.h>

G_BEGIN_DECLS

#define SANDBOX_BUBBLEWRAP_CLUSTER_HOOK "sandbox-bubblewrap-cluster-hook"

/**
 * SandboxBubblewrapPopulateFunc:
 * @parent_fd: the new session's directory
 * @name: the entry of @parent_fd to create: the workspace, which must not
 *   exist yet
 * @user_data: the caller's data
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Makes a workspace (the cluster driver materialises a checkpoint).
 *
 * Returns: %TRUE when @name holds the workspace
 */
typedef gboolean (*SandboxBubblewrapPopulateFunc) (int            parent_fd,
                                                   const char    *name,
                                                   gpointer       user_data,
                                                   GCancellable  *cancellable,
                                                   GError       **error);

/**
 * SandboxBubblewrapClusterHook:
 * @import_session: stores the session @state describes with the workspace
 *   @populate makes (%NULL: a fresh copy of its template), replacing this
 *   host's copy of it if there is one (under that copy's lease:
 *   %SANDBOX_ERROR_BUSY while it is live here). The template must be stored
 *   here (%SANDBOX_ERROR_NOT_FOUND otherwise); the workspace is given to
 *   the guest ids. The session is left unleased, ready for a resume
 *   through create(). On failure nothing of it is left.
 * @open_workspace: an O_PATH descriptor of a stored session's workspace
 *   (%SANDBOX_ERROR_NOT_FOUND for an unknown session), for a checkpoint of
 *   a session that is stopped here
 * @open_template: an O_PATH descriptor of a stored template's files
 *   (%SANDBOX_ERROR_NOT_FOUND for an unknown template), to publish it to
 *   the hosts that do not have it
 *
 * Blocking and thread-safe.
 */
typedef struct
{
  gboolean (*import_session) (SandboxBackend                 *backend,
                              SandboxState                   *state,
                              SandboxBubblewrapPopulateFunc   populate,
                              gpointer                        user_data,
                              GCancellable                   *cancellable,
                              GError                        **error);
  int      (*open_workspace) (SandboxBackend                 *backend,
                              const char                     *session_id,
                              GError                        **error);
  int      (*open_template)  (SandboxBackend                 *backend,
                              const char                     *template_key,
                              GError                        **error);
} SandboxBubblewrapClusterHook;

G_END_DECLS
