/* sandbox-backend-store.c — a backend's own view of what it stores
 *
 * Tools (sandboxctl list, stop, --session, template management) ask the
 * backend about its sessions and templates instead of spelling out one
 * driver's on-disk layout: a store may be a directory tree, memory, or a
 * cluster's database. The wrappers check their arguments once for every
 * backend, so a driver's store never builds a path from an id that is not
 * one; the defaults (sandbox-backend-unsupported.c) say the backend has no
 * such view.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend.h"
#include "sandbox-backend-private.h"
#include "sandbox-error.h"
#include "sandbox-task-private.h"

/* Session ids and template keys have the same form: lowercase hex SHA-256.
 * The reference's text; the session protocol (sandbox-backend-protocol.c)
 * checks with it too. */
gboolean
sandbox_backend_check_id (const char  *id,
                          const char  *what,
                          GError     **error)
{
  if (sandbox_template_key_is_valid (id))
    return TRUE;
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Expected a %s: 64 lowercase hexadecimal characters", what);
  return FALSE;
}

static int
compare_sessions (gconstpointer a,
                  gconstpointer b)
{
  SandboxState *state_a = sandbox_session_info_get_state (*(SandboxSessionInfo **) a);
  SandboxState *state_b = sandbox_session_info_get_state (*(SandboxSessionInfo **) b);

  return g_strcmp0 (sandbox_state_get_session_id (state_a),
                    sandbox_state_get_session_id (state_b));
}

static int
compare_templates (gconstpointer a,
                   gconstpointer b)
{
  return g_strcmp0 (sandbox_template_info_get_key (*(SandboxTemplateInfo **) a),
                    sandbox_template_info_get_key (*(SandboxTemplateInfo **) b));
}

/**
 * sandbox_backend_list_sessions:
 * @self: a [iface@Sandbox.Backend]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Lists the sessions the backend stores (those a backend of the same name
 * and state directory can resume), sorted by session id, each with its
 * saved state, its lease owner if it has one, and the size of its
 * workspace. Sizes are measured now, so listing costs a walk of every
 * workspace in stores on disk. Blocking; see
 * [method@Sandbox.Backend.list_sessions_async].
 *
 * A session that is being created or deleted meanwhile may or may not be
 * listed; one the store cannot read is left out (with a warning in the
 * log), so one damaged session never hides the others.
 *
 * The array unrefs its infos when freed: g_ptr_array_unref() it, and ref an
 * info you keep. (It is annotated `transfer container` for that reason: a
 * binding told `transfer full` would take the infos' references as its own
 * and PyGObject 3.42 then hands out objects the array has freed.)
 *
 * Returns: (transfer container) (element-type SandboxSessionInfo): the
 *   sessions, or %NULL with @error set: %G_IO_ERROR_NOT_SUPPORTED when the
 *   backend cannot list them, a #GIOErrorEnum error when its store cannot
 *   be read
 */
GPtrArray *
sandbox_backend_list_sessions (SandboxBackend  *self,
                               GCancellable    *cancellable,
                               GError         **error)
{
  GPtrArray *sessions;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);

  sessions = SANDBOX_BACKEND_GET_IFACE (self)->list_sessions (self, cancellable, error);
  if (sessions != NULL)
    g_ptr_array_sort (sessions, compare_sessions);
  return sessions;
}

static void
list_sessions_thread (GTask        *task,
                      gpointer      source_object,
                      gpointer      task_data,
                      GCancellable *cancellable)
{
  GError *error = NULL;
  GPtrArray *sessions = sandbox_backend_list_sessions (source_object, cancellable, &error);

  sandbox_task_return_pointer (task, sessions, (GDestroyNotify) g_ptr_array_unref, error);
}

/**
 * sandbox_backend_list_sessions_async:
 * @self: a [iface@Sandbox.Backend]
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Lists the stored sessions in a worker thread; see
 * [method@Sandbox.Backend.list_sessions].
 */
void
sandbox_backend_list_sessions_async (SandboxBackend      *self,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SANDBOX_IS_BACKEND (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = sandbox_task_new (self, sandbox_backend_list_sessions_async, "[sandbox] list sessions",
                           cancellable, callback, user_data);
  g_task_run_in_thread (task, list_sessions_thread);
}

/**
 * sandbox_backend_list_sessions_finish:
 * @self: a [iface@Sandbox.Backend]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Backend.list_sessions_async].
 *
 * Returns: (transfer container) (element-type SandboxSessionInfo): the
 *   sessions, or %NULL with @error set
 */
GPtrArray *
sandbox_backend_list_sessions_finish (SandboxBackend  *self,
                                      GAsyncResult    *result,
                                      GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * sandbox_backend_list_templates:
 * @self: a [iface@Sandbox.Backend]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Lists the templates the backend stores, sorted by key, each with its
 * size and the number of stored sessions created from it. A template still
 * being stored is not listed. Blocking. The array unrefs its infos when
 * freed, as [method@Sandbox.Backend.list_sessions]'s does.
 *
 * Returns: (transfer container) (element-type SandboxTemplateInfo): the
 *   templates, or %NULL with @error set: %G_IO_ERROR_NOT_SUPPORTED when the
 *   backend cannot list them, a #GIOErrorEnum error when its store cannot
 *   be read
 */
GPtrArray *
sandbox_backend_list_templates (SandboxBackend  *self,
                                GCancellable    *cancellable,
                                GError         **error)
{
  GPtrArray *templates;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);

  templates = SANDBOX_BACKEND_GET_IFACE (self)->list_templates (self, cancellable, error);
  if (templates != NULL)
    g_ptr_array_sort (templates, compare_templates);
  return templates;
}

/**
 * sandbox_backend_lookup_state:
 * @self: a [iface@Sandbox.Backend]
 * @session_id: the id of a stored session
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Looks up the saved reconnect descriptor of a stored session, the one
 * [method@Sandbox.Handle.capture_state] gave when it was created, so that a
 * session can be addressed by its id alone. Blocking.
 *
 * Returns: (transfer full): the session's state, or %NULL with @error set:
 *   %SANDBOX_ERROR_INVALID when @session_id is not a session id,
 *   %SANDBOX_ERROR_NOT_FOUND for an unknown session,
 *   %G_IO_ERROR_NOT_SUPPORTED when the backend cannot look sessions up
 */
SandboxState *
sandbox_backend_lookup_state (SandboxBackend  *self,
                              const char      *session_id,
                              GCancellable    *cancellable,
                              GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);

  if (!sandbox_backend_check_id (session_id, "session id", error))
    return NULL;
  return SANDBOX_BACKEND_GET_IFACE (self)->lookup_state (self, session_id, cancellable, error);
}

/**
 * sandbox_backend_query_lease_owner:
 * @self: a [iface@Sandbox.Backend]
 * @session_id: the id of a stored session
 * @owner: (out) (transfer full) (optional) (nullable): set to who holds the
 *   session's lease, or to %NULL when nobody does
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Asks who holds a stored session's exclusive lease right now: a process
 * (of this or another host) that resumed it, alive or — for a stale lease,
 * one left by an owner that died — not. The answer may be out of date as
 * soon as it is given; it tells a user or a tool whom to ask to stop, never
 * whether [method@Sandbox.Backend.create] will succeed. Blocking.
 *
 * Returns: %TRUE with @owner set, or %FALSE with @error set:
 *   %SANDBOX_ERROR_INVALID when @session_id is not a session id,
 *   %SANDBOX_ERROR_NOT_FOUND for an unknown session,
 *   %G_IO_ERROR_NOT_SUPPORTED when the backend cannot tell
 */
gboolean
sandbox_backend_query_lease_owner (SandboxBackend     *self,
                                   const char         *session_id,
                                   SandboxLeaseOwner **owner,
                                   GCancellable       *cancellable,
                                   GError            **error)
{
  g_autoptr(SandboxLeaseOwner) found = NULL;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);
  g_return_val_if_fail (owner == NULL || *owner == NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);

  if (!sandbox_backend_check_id (session_id, "session id", error) ||
      !SANDBOX_BACKEND_GET_IFACE (self)->query_lease_owner (self, session_id, &found,
                                                            cancellable, error))
    return FALSE;
  if (owner != NULL)
    *owner = g_steal_pointer (&found);
  return TRUE;
}

/**
 * sandbox_backend_delete_template:
 * @self: a [iface@Sandbox.Backend]
 * @template_key: the key of a stored template
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Removes a stored template. A template that a stored session was created
 * from is refused with %SANDBOX_ERROR_BUSY, as long as that session exists
 * (its resume checks the template), so a store never loses a template a
 * session needs; delete the sessions first. A session being created from
 * the template at the same time either completes first (and the delete is
 * refused) or fails with %SANDBOX_ERROR_NOT_FOUND. Blocking; see
 * [method@Sandbox.Backend.delete_template_async].
 *
 * Returns: %TRUE when the template is gone, or %FALSE with @error set:
 *   %SANDBOX_ERROR_INVALID when @template_key is not a key,
 *   %SANDBOX_ERROR_NOT_FOUND for an unknown template, %SANDBOX_ERROR_BUSY,
 *   %G_IO_ERROR_NOT_SUPPORTED when the backend cannot delete templates
 */
gboolean
sandbox_backend_delete_template (SandboxBackend  *self,
                                 const char      *template_key,
                                 GCancellable    *cancellable,
                                 GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), FALSE);
  g_return_val_if_fail (template_key != NULL, FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);

  if (!sandbox_backend_check_id (template_key, "template key", error))
    return FALSE;
  return SANDBOX_BACKEND_GET_IFACE (self)->delete_template (self, template_key, cancellable,
                                                            error);
}

static void
delete_template_thread (GTask        *task,
                        gpointer      source_object,
                        gpointer      task_data,
                        GCancellable *cancellable)
{
  GError *error = NULL;
  gboolean ok = sandbox_backend_delete_template (source_object, task_data, cancellable, &error);

  sandbox_task_return_boolean (task, ok, error);
}

/**
 * sandbox_backend_delete_template_async:
 * @self: a [iface@Sandbox.Backend]
 * @template_key: the key of a stored template
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Removes a stored template in a worker thread; see
 * [method@Sandbox.Backend.delete_template].
 */
void
sandbox_backend_delete_template_async (SandboxBackend      *self,
                                       const char          *template_key,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SANDBOX_IS_BACKEND (self));
  g_return_if_fail (template_key != NULL);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  task = sandbox_task_new (self, sandbox_backend_delete_template_async,
                           "[sandbox] delete template", cancellable, callback, user_data);
  g_task_set_task_data (task, g_strdup (template_key), g_free);
  g_task_run_in_thread (task, delete_template_thread);
}

/**
 * sandbox_backend_delete_template_finish:
 * @self: a [iface@Sandbox.Backend]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Backend.delete_template_async].
 *
 * Returns: %TRUE when the template is gone, or %FALSE with @error set
 */
gboolean
sandbox_backend_delete_template_finish (SandboxBackend  *self,
                                        GAsyncResult    *result,
                                        GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), FALSE);
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
