/* sandbox-session-info.c — a stored session, as a backend lists it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-session-info.h"

/**
 * SandboxSessionInfo:
 *
 * A session a backend stores, as [method@Sandbox.Backend.list_sessions] reports
 * it: its saved [class@Sandbox.State] (pass it to [method@Sandbox.Backend.create] to
 * resume the session), who holds its lease if anyone does, and the size of
 * its workspace when it was listed. Immutable.
 */
struct _SandboxSessionInfo
{
  GObject parent_instance;

  SandboxState *state;
  SandboxLeaseOwner *lease_owner;
  guint64 workspace_n_files;
  guint64 workspace_n_bytes;
};

G_DEFINE_FINAL_TYPE (SandboxSessionInfo, sandbox_session_info, G_TYPE_OBJECT)

static void
sandbox_session_info_finalize (GObject *object)
{
  SandboxSessionInfo *self = SANDBOX_SESSION_INFO (object);

  g_clear_object (&self->state);
  g_clear_object (&self->lease_owner);

  G_OBJECT_CLASS (sandbox_session_info_parent_class)->finalize (object);
}

static void
sandbox_session_info_class_init (SandboxSessionInfoClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_session_info_finalize;
}

static void
sandbox_session_info_init (SandboxSessionInfo *self)
{
}

/**
 * sandbox_session_info_new:
 * @state: the session's saved state
 * @lease_owner: (nullable): who holds the session's lease, or %NULL when
 *   the lease is free
 * @workspace_n_files: how many files the workspace holds
 * @workspace_n_bytes: how many bytes those files hold
 *
 * Creates a session record; backends make these.
 *
 * Returns: (transfer full): a new [class@Sandbox.SessionInfo]
 */
SandboxSessionInfo *
sandbox_session_info_new (SandboxState      *state,
                          SandboxLeaseOwner *lease_owner,
                          guint64            workspace_n_files,
                          guint64            workspace_n_bytes)
{
  SandboxSessionInfo *self;

  g_return_val_if_fail (SANDBOX_IS_STATE (state), NULL);
  g_return_val_if_fail (lease_owner == NULL || SANDBOX_IS_LEASE_OWNER (lease_owner), NULL);

  self = g_object_new (SANDBOX_TYPE_SESSION_INFO, NULL);
  self->state = g_object_ref (state);
  self->lease_owner = lease_owner != NULL ? g_object_ref (lease_owner) : NULL;
  self->workspace_n_files = workspace_n_files;
  self->workspace_n_bytes = workspace_n_bytes;
  return self;
}

/**
 * sandbox_session_info_get_state:
 * @self: a [class@Sandbox.SessionInfo]
 *
 * Gets the session's saved reconnect descriptor.
 *
 * Returns: (transfer none): the session's state
 */
SandboxState *
sandbox_session_info_get_state (SandboxSessionInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION_INFO (self), NULL);

  return self->state;
}

/**
 * sandbox_session_info_get_lease_owner:
 * @self: a [class@Sandbox.SessionInfo]
 *
 * Gets who held the session's lease when it was listed.
 *
 * Returns: (transfer none) (nullable): the lease's owner, or %NULL when the
 *   lease was free
 */
SandboxLeaseOwner *
sandbox_session_info_get_lease_owner (SandboxSessionInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION_INFO (self), NULL);

  return self->lease_owner;
}

/**
 * sandbox_session_info_get_workspace_n_files:
 * @self: a [class@Sandbox.SessionInfo]
 *
 * Gets how many files (of any kind but directories) the workspace held.
 *
 * Returns: the number of files
 */
guint64
sandbox_session_info_get_workspace_n_files (SandboxSessionInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION_INFO (self), 0);

  return self->workspace_n_files;
}

/**
 * sandbox_session_info_get_workspace_n_bytes:
 * @self: a [class@Sandbox.SessionInfo]
 *
 * Gets how many bytes the workspace's regular files held.
 *
 * Returns: the number of bytes
 */
guint64
sandbox_session_info_get_workspace_n_bytes (SandboxSessionInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION_INFO (self), 0);

  return self->workspace_n_bytes;
}
