/* sandbox-bubblewrap-store-import.c — sessions whose workspace comes from elsewhere
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The store side of sandbox_backend_import_session() and
 * sandbox_backend_open_session_files(), which the cluster driver uses: a
 * session resumed on this host from
 * a checkpoint taken on another is stored as if it had been created here,
 * with its given id, then resumed by an ordinary create(). Only the
 * workspace's origin differs: the caller makes it in the new session
 * directory, under the session's lease, before state.json names the
 * session; it is then given to the guest like a template copy. Where each
 * session's guest has ids of its own, those are claimed by the resume,
 * which gives the workspace to them: it is left the host's here.
 */

#include "config.h"

#include "sandbox-bubblewrap-quota-private.h"
#include "sandbox-bubblewrap-store-layout-private.h"

typedef struct
{
  SandboxBubblewrapStore        *store;
  const char                    *template_key;
  SandboxWorkspaceFillFunc       populate;
  gpointer                       user_data;
} Import;

/* Who an imported workspace is given to: the backend's one guest, or
 * nobody yet (the host itself, or sessions with ids of their own). */
static const SandboxWorkspaceOwner *
shared_guest (SandboxBubblewrapStore *self)
{
  return self->give && !self->per_session ? &self->guest : NULL;
}

/* A session that was never checkpointed: a fresh copy of its template. */
static gboolean
copy_template (Import        *import,
               int            parent_fd,
               const char    *name,
               GCancellable  *cancellable,
               GError       **error)
{
  SandboxBubblewrapStore *self = import->store;
  g_autofree char *data = g_build_filename (self->templates, import->template_key, "data", NULL);
  g_auto(SandboxBubblewrapFd) data_fd = open_directory (data, error);

  return data_fd >= 0 &&
         sandbox_workspace_copy_tree_at (data_fd, parent_fd, name, shared_guest (self),
                                         cancellable, error);
}

/* The workspace as @name in @parent_fd (a SandboxBubblewrapFillFunc). */
static gboolean
fill_workspace (int            parent_fd,
                const char    *name,
                gpointer       data,
                GCancellable  *cancellable,
                GError       **error)
{
  Import *import = data;

  if (import->populate == NULL)
    return copy_template (import, parent_fd, name, cancellable, error);
  return import->populate (parent_fd, name, import->user_data, cancellable, error);
}

static gboolean
make_workspace (Import        *import,
                int            session_fd,
                GCancellable  *cancellable,
                GError       **error)
{
  SandboxBubblewrapStore *self = import->store;

  if (!sandbox_bubblewrap_quota_fill_directory (session_fd, "workspace", self->workspace_quota,
                                                fill_workspace, import, cancellable, error))
    return FALSE;
  /* What the caller made is the host's: no guest saw it yet, so giving it
   * whole is safe (nothing runs in the session before create()). */
  return import->populate == NULL || shared_guest (self) == NULL ||
         sandbox_workspace_give_tree_at (session_fd, "workspace", &self->guest, error);
}

/* Fills the new, leased session directory and writes state.json last. */
static gboolean
fill_session (Import                  *import,
              SandboxBubblewrapLease  *lease,
              GCancellable            *cancellable,
              GError                 **error)
{
  SandboxBubblewrapStore *self = import->store;
  g_autofree char *state_path = g_build_filename (lease->directory, "state.json", NULL);
  g_autofree char *state_json = sandbox_state_to_json (lease->state);
  g_auto(SandboxBubblewrapFd) session_fd = open_directory (lease->directory, error);

  if (session_fd < 0 || !make_workspace (import, session_fd, cancellable, error))
    return FALSE;
  if (self->durable &&
      (!sandbox_bubblewrap_store_sync_tree (session_fd, "workspace", lease->workspace, 0, error) ||
       !sandbox_bubblewrap_store_sync_directory (self->sessions, error)))
    return FALSE;
  return sandbox_bubblewrap_store_write_atomically (state_path, state_json, self->durable, error);
}

/* Before an older copy of the session goes (the backend deletes it through
 * the core's session protocol): the state must be one this store takes. */
gboolean
sandbox_bubblewrap_store_check_import (SandboxBubblewrapStore  *self,
                                       SandboxState            *state,
                                       GError                 **error)
{
  if (g_strcmp0 (sandbox_state_get_backend (state), self->name) != 0)
    return sandbox_set_error_state_mismatch (error);
  if (!sandbox_template_key_is_valid (sandbox_state_get_session_id (state)))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "Expected a session id: 64 lowercase hexadecimal characters");
      return FALSE;
    }
  return sandbox_bubblewrap_store_check_template (self, sandbox_state_get_template_key (state),
                                                  error);
}

/**
 * sandbox_bubblewrap_store_import_session:
 * @self: a store
 * @state: the session's identity (backend, id, template)
 * @populate: (nullable): makes the workspace; %NULL for a copy of the template
 * @user_data: for @populate
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * See sandbox_backend_import_session(). The caller has checked @state
 * (sandbox_bubblewrap_store_check_import()) and deleted the session.
 *
 * Returns: %TRUE when the session is stored, unleased
 */
gboolean
sandbox_bubblewrap_store_import_session (SandboxBubblewrapStore         *self,
                                         SandboxState                   *state,
                                         SandboxWorkspaceFillFunc        populate,
                                         gpointer                        user_data,
                                         GCancellable                   *cancellable,
                                         GError                        **error)
{
  Import import = { self, sandbox_state_get_template_key (state), populate, user_data };
  g_autoptr(SandboxBubblewrapLease) lease = NULL;

  /* Never layered: its workspace is its own. */
  lease = sandbox_bubblewrap_store_make_session (self, state, FALSE, error);
  if (lease == NULL)
    return FALSE;
  if (!fill_session (&import, lease, cancellable, error))
    {
      sandbox_bubblewrap_lease_abandon (lease);
      return FALSE;
    }
  sandbox_bubblewrap_lease_release (lease);
  return TRUE;
}

/**
 * sandbox_bubblewrap_store_open_workspace:
 * @self: a store
 * @session_id: a stored session
 * @error: return location for a #GError
 *
 * See sandbox_backend_open_session_files().
 *
 * Returns: an O_PATH directory descriptor, or -1 with @error set
 */
int
sandbox_bubblewrap_store_open_workspace (SandboxBubblewrapStore  *self,
                                         const char              *session_id,
                                         GError                 **error)
{
  g_autofree char *directory = NULL;
  g_auto(SandboxBubblewrapFd) session_fd = -1;
  int fd;

  if (!sandbox_template_key_is_valid (session_id))
    {
      sandbox_set_error_unknown_session (error, session_id);
      return -1;
    }
  directory = g_build_filename (self->sessions, session_id, NULL);
  session_fd = open (directory, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  fd = session_fd < 0 ? -1 : openat (session_fd, "workspace",
                                     O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && session_fd >= 0 &&
      faccessat (session_fd, SESSION_LAYERS, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                 "Session %s is layered over its template: its files are no one directory",
                 session_id);
  else if (fd < 0)
    {
      if (errno == ENOENT)
        sandbox_set_error_unknown_session (error, session_id);
      else
        set_errno_error (error, errno, "Could not open", directory);
    }
  return fd;
}
