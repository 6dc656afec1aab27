/* sandbox-backend-transfer.c — sessions and templates into and out of a backend
 *
 * What a driver built on another backend needs of it beyond the
 * reference's API: the `cluster` driver moves sessions between hosts as
 * checkpoints, so it stores a session whose workspace it made itself,
 * reads a stopped session's files to checkpoint them, and reads a
 * template's files to publish them to hosts that lack it. Snapshots and
 * forks need the same. Each is optional: the defaults
 * (sandbox-backend-unsupported.c) fail with %G_IO_ERROR_NOT_SUPPORTED
 * naming the driver.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend-transfer.h"

/**
 * sandbox_backend_import_session:
 * @self: a [iface@Sandbox.Backend]
 * @state: the session's identity: this backend's name, its id and its
 *   template's key
 * @fill: (scope call) (closure user_data) (nullable): makes the workspace;
 *   %NULL for a fresh copy of the template
 * @user_data: data for @fill
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stores the session @state describes, with the workspace @fill makes in
 * the backend's store, replacing a stored copy of it if there is one
 * (under that copy's lease: %SANDBOX_ERROR_BUSY while it is live). The
 * template must be stored (%SANDBOX_ERROR_NOT_FOUND otherwise). The
 * session is left unleased, ready for a resume through
 * [method@Sandbox.Backend.create] with @state; on failure nothing of it is
 * left. Blocking, thread-safe.
 *
 * For drivers built on another backend. Optional: drivers that do not
 * store sessions fail with %G_IO_ERROR_NOT_SUPPORTED.
 *
 * Returns: %TRUE when the session is stored
 */
gboolean
sandbox_backend_import_session (SandboxBackend            *self,
                                SandboxState              *state,
                                SandboxWorkspaceFillFunc   fill,
                                gpointer                   user_data,
                                GCancellable              *cancellable,
                                GError                   **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), FALSE);
  g_return_val_if_fail (SANDBOX_IS_STATE (state), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return SANDBOX_BACKEND_GET_IFACE (self)->import_session (self, state, fill, user_data,
                                                           cancellable, error);
}

/**
 * sandbox_backend_open_session_files:
 * @self: a [iface@Sandbox.Backend]
 * @session_id: a stored session's id
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Opens the directory of a stored session's files, to read them while the
 * session is stopped here (a checkpoint of it): an `O_PATH` descriptor the
 * caller closes. The directory was shaped by guests: walk it with
 * descriptors, never following a link. %SANDBOX_ERROR_NOT_FOUND for an
 * unknown session; %G_IO_ERROR_NOT_SUPPORTED where the files are no one
 * directory (a layered workspace: its template's files and its own
 * changes) or the driver stores none. Blocking, thread-safe.
 *
 * Returns: a descriptor, or -1 with @error set
 */
int
sandbox_backend_open_session_files (SandboxBackend  *self,
                                    const char      *session_id,
                                    GCancellable    *cancellable,
                                    GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), -1);
  g_return_val_if_fail (session_id != NULL, -1);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), -1);
  g_return_val_if_fail (error == NULL || *error == NULL, -1);

  return SANDBOX_BACKEND_GET_IFACE (self)->open_session_files (self, session_id, cancellable,
                                                               error);
}

/**
 * sandbox_backend_open_template_files:
 * @self: a [iface@Sandbox.Backend]
 * @template_key: a stored template's key
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Opens the directory of a stored template's files (to publish them to
 * hosts that lack it): an `O_PATH` descriptor the caller closes, whose
 * tree must not be changed. %SANDBOX_ERROR_NOT_FOUND for an unknown
 * template; %G_IO_ERROR_NOT_SUPPORTED where the driver stores none.
 * Blocking, thread-safe.
 *
 * Returns: a descriptor, or -1 with @error set
 */
int
sandbox_backend_open_template_files (SandboxBackend  *self,
                                     const char      *template_key,
                                     GCancellable    *cancellable,
                                     GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), -1);
  g_return_val_if_fail (template_key != NULL, -1);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), -1);
  g_return_val_if_fail (error == NULL || *error == NULL, -1);

  return SANDBOX_BACKEND_GET_IFACE (self)->open_template_files (self, template_key, cancellable,
                                                                error);
}
