/* sandbox-cluster-handle.c — a live session of the `cluster` backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Wraps the bubblewrap handle of the session on this host, under the etcd
 * ownership epoch it was claimed with. Its session, state and coding
 * binding are the inner handle's (the inner backend carries the cluster
 * backend's name, so the state reads {backend:"cluster", …}).
 *
 * Stop: the inner stop first (every command killed, the gateway closed),
 * so the checkpoint is of a workspace no guest changes any more; then the
 * checkpoint and its fenced commit; then the ownership is released (also
 * when the checkpoint failed: the error is the stop's). A host
 * that has lost its lease publishes nothing: its handles are stopped
 * (sandbox_cluster_handle_fence()) with only the inner stop.
 *
 * Checkpoint (of the live session): the same walk and fenced commit, while
 * the inner session and its commands run on and this host keeps the
 * ownership; the base class never runs it alongside the stop.
 */

#include "config.h"

#include "sandbox-cluster-handle-private.h"

struct _SandboxClusterHandle
{
  SandboxHandle parent_instance;

  SandboxClusterBackend *backend;
  SandboxHandle *inner;
  gint64 epoch;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxClusterHandle, sandbox_cluster_handle,
                                SANDBOX_TYPE_HANDLE, G_TYPE_FLAG_FINAL, {})

static SandboxState *
handle_state (SandboxClusterHandle *self)
{
  SandboxState *state = NULL;

  g_object_get (self, "state", &state, NULL);
  return state;
}

static gboolean
sandbox_cluster_handle_stop (SandboxHandle  *handle,
                             GCancellable   *cancellable,
                             GError        **error)
{
  SandboxClusterHandle *self = SANDBOX_CLUSTER_HANDLE (handle);
  g_autoptr(SandboxState) state = handle_state (self);
  g_autoptr(GError) local_error = NULL;
  gboolean checkpointed, released;

  /* Not cancellable, like the inner stop: commands and gateway go first. */
  sandbox_handle_stop (self->inner, NULL, NULL);
  sandbox_cluster_backend_forget (self->backend, handle);

  if (sandbox_cluster_backend_is_lost (self->backend))
    return TRUE;   /* fenced: never a checkpoint after the lease is gone */

  /* Released even when the checkpoint failed (an unreadable workspace, a
   * full store): the session then resumes from its previous checkpoint, as
   * after a crash, rather than staying owned by this host. */
  checkpointed = sandbox_cluster_backend_checkpoint_stopped (self->backend, state, self->epoch,
                                                             cancellable, &local_error);
  released = sandbox_cluster_backend_release (self->backend, state, self->epoch, NULL,
                                              checkpointed ? error : NULL);
  if (!checkpointed)
    g_propagate_error (error, g_steal_pointer (&local_error));
  return checkpointed && released;
}

static gboolean
sandbox_cluster_handle_checkpoint (SandboxHandle  *handle,
                                   GCancellable   *cancellable,
                                   GError        **error)
{
  SandboxClusterHandle *self = SANDBOX_CLUSTER_HANDLE (handle);
  g_autoptr(SandboxState) state = handle_state (self);

  return sandbox_cluster_backend_checkpoint_live (self->backend, state, self->epoch, cancellable,
                                                  error);
}

static gboolean
sandbox_cluster_handle_delete_session (SandboxHandle  *handle,
                                       GCancellable   *cancellable,
                                       GError        **error)
{
  SandboxClusterHandle *self = SANDBOX_CLUSTER_HANDLE (handle);
  g_autoptr(SandboxState) state = handle_state (self);

  /* Stopping released the claim: the base claims again (BUSY if another
   * host attached meanwhile) and removes the record; bubblewrap's copy
   * goes last. */
  return sandbox_backend_base_delete_session (SANDBOX_BACKEND_BASE (self->backend),
                                              sandbox_state_get_session_id (state), cancellable,
                                              error) &&
         sandbox_handle_delete (self->inner, cancellable, error);
}

static SandboxCodingBinding *
sandbox_cluster_handle_get_coding_binding (SandboxHandle *handle)
{
  return sandbox_handle_get_coding_binding (SANDBOX_CLUSTER_HANDLE (handle)->inner);
}

/*
 * sandbox_cluster_handle_new:
 * @backend: the cluster backend
 * @inner: the session's bubblewrap handle on this host
 * @epoch: the ownership epoch the session was claimed with
 *
 * Returns: (transfer full): the handle
 */
SandboxHandle *
sandbox_cluster_handle_new (SandboxClusterBackend *backend,
                            SandboxHandle         *inner,
                            gint64                 epoch)
{
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (inner, NULL);
  SandboxClusterHandle *self;

  g_return_val_if_fail (state != NULL, NULL);

  self = g_object_new (SANDBOX_CLUSTER_TYPE_HANDLE,
                       "session", sandbox_handle_get_session (inner),
                       "state", state,
                       NULL);
  self->backend = g_object_ref (backend);
  self->inner = g_object_ref (inner);
  self->epoch = epoch;
  return SANDBOX_HANDLE (self);
}

/*
 * sandbox_cluster_handle_fence_commands:
 * @self: a handle of a host that lost its lease
 *
 * Kills every command and closes the gateway now (the inner stop), even
 * while a checkpoint holds the handle's own stop back.
 */
void
sandbox_cluster_handle_fence_commands (SandboxClusterHandle *self)
{
  g_autoptr(GError) error = NULL;

  if (!sandbox_handle_stop (self->inner, NULL, &error))
    g_warning ("Could not stop the commands of a fenced session: %s", error->message);
}

/*
 * sandbox_cluster_handle_fence:
 * @self: a handle of a host that lost its lease
 *
 * Kills every command and marks the handle stopped, publishing nothing
 * (after a checkpoint in progress, which the lost host refuses to commit).
 */
void
sandbox_cluster_handle_fence (SandboxClusterHandle *self)
{
  g_autoptr(GError) error = NULL;

  if (!sandbox_handle_stop (SANDBOX_HANDLE (self), NULL, &error))
    g_warning ("Could not stop a fenced session: %s", error->message);
}

static void
sandbox_cluster_handle_finalize (GObject *object)
{
  SandboxClusterHandle *self = SANDBOX_CLUSTER_HANDLE (object);

  /* The base class's dispose has stopped the session by now. */
  g_clear_object (&self->inner);
  g_clear_object (&self->backend);

  G_OBJECT_CLASS (sandbox_cluster_handle_parent_class)->finalize (object);
}

static void
sandbox_cluster_handle_class_init (SandboxClusterHandleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SandboxHandleClass *handle_class = SANDBOX_HANDLE_CLASS (klass);

  object_class->finalize = sandbox_cluster_handle_finalize;
  handle_class->stop = sandbox_cluster_handle_stop;
  handle_class->delete_session = sandbox_cluster_handle_delete_session;
  handle_class->get_coding_binding = sandbox_cluster_handle_get_coding_binding;
  handle_class->checkpoint = sandbox_cluster_handle_checkpoint;
}

static void
sandbox_cluster_handle_class_finalize (SandboxClusterHandleClass *klass)
{
}

static void
sandbox_cluster_handle_init (SandboxClusterHandle *self)
{
}

void
sandbox_cluster_handle_register (GTypeModule *module)
{
  sandbox_cluster_handle_register_type (module);
}
