/* sandbox-backend-protocol.c — the session protocol, once for every driver
 *
 * Opening a session is the same walk in every driver: the key is well
 * formed, a saved state names this backend and this template, the template
 * is stored, the session id is well formed, the session is stored, its
 * lease is free, and what is stored is the state the caller saved. Each
 * driver used to type that out again, in its own order and with its own
 * texts. Here it is once, the way glib-networking's tls/base drives the
 * TLS handshake and leaves small hooks to the backends: a driver derives
 * from SandboxBackendBase, implements the hooks of its class (check_template,
 * has_session, take_lease, release_lease, load_state, new_session,
 * new_handle, remove_session; check_policy if it enforces only some
 * policies, take_over_lease if it recovers sessions) and calls
 * sandbox_backend_base_implement_sessions() from its interface init, which
 * makes SandboxBackend::create, ::recover_session and ::lookup_state the
 * protocol's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-session-private.h"

#include "sandbox-backend-base.h"
#include "sandbox-backend-private.h"
#include "sandbox-error.h"

/**
 * sandbox_backend_base_check_ready:
 * @self: a [class@Sandbox.BackendBase]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * What every operation of a backend checks first: that g_initable_init()
 * succeeded (%SANDBOX_ERROR_INVALID: the backend was made with
 * g_object_new() instead of [func@Sandbox.Backend.new]) and that
 * @cancellable is not cancelled.
 *
 * Returns: %TRUE if the operation may go on, %FALSE with @error set
 */
gboolean
sandbox_backend_base_check_ready (SandboxBackendBase  *self,
                                  GCancellable        *cancellable,
                                  GError             **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (self), FALSE);

  if (!sandbox_backend_base_is_initialized (self))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "The %s backend was not initialized; create it with sandbox_backend_new()",
                   sandbox_driver_name_of_type (G_OBJECT_TYPE (self)));
      return FALSE;
    }
  return !g_cancellable_set_error_if_cancelled (cancellable, error);
}

/* The lease is held: what comes next fails without it. */
static SandboxHandle *
new_handle_or_release (SandboxBackendBase    *self,
                       SandboxState          *state,
                       SandboxNetworkPolicy  *policy,
                       GCancellable          *cancellable,
                       GError               **error)
{
  SandboxBackendBaseClass *klass = SANDBOX_BACKEND_BASE_GET_CLASS (self);
  SandboxHandle *handle = klass->new_handle (self, state, policy, cancellable, error);

  if (handle == NULL)
    klass->release_lease (self, sandbox_state_get_session_id (state));
  else
    {
      SandboxSession *session = sandbox_handle_get_session (handle);

      sandbox_session_set_max_background_timeout_ms (
        session, sandbox_backend_base_get_max_background_timeout_ms (self));
      sandbox_session_set_idle_timeout_ms (
        session, sandbox_backend_base_get_background_idle_timeout_ms (self));
      sandbox_driver_set_max_file_bytes (sandbox_session_get_driver (session),
                                         sandbox_backend_base_get_max_file_bytes (self));
    }
  return handle;
}

/* A recovery takes over a dead owner's lease where a resume is refused. */
static SandboxHandle *
resume_session (SandboxBackendBase    *self,
                SandboxState          *saved,
                gboolean               recover,
                SandboxNetworkPolicy  *policy,
                GCancellable          *cancellable,
                GError               **error)
{
  SandboxBackendBaseClass *klass = SANDBOX_BACKEND_BASE_GET_CLASS (self);
  const char *session_id = sandbox_state_get_session_id (saved);
  g_autoptr(SandboxState) stored = NULL;

  if (!sandbox_backend_check_id (session_id, "session id", error))
    return NULL;
  if (!klass->has_session (self, session_id))
    {
      sandbox_set_error_unknown_session (error, session_id);
      return NULL;
    }
  if (!(recover ? klass->take_over_lease : klass->take_lease) (self, session_id, cancellable,
                                                               error))
    return NULL;
  stored = klass->load_state (self, session_id, cancellable, error);
  if (stored == NULL || !sandbox_state_equal (stored, saved))
    {
      klass->release_lease (self, session_id);
      if (stored != NULL)
        sandbox_set_error_identity_mismatch (error);
      return NULL;
    }
  return new_handle_or_release (self, saved, policy, cancellable, error);
}

/* Create, resume and recover up to the session's own steps. */
static SandboxHandle *
open_session (SandboxBackendBase    *self,
              const char            *template_key,
              SandboxState          *state,
              gboolean               recover,
              SandboxNetworkPolicy  *policy,
              GCancellable          *cancellable,
              GError               **error)
{
  SandboxBackendBaseClass *klass = SANDBOX_BACKEND_BASE_GET_CLASS (self);
  g_autofree char *uuid = NULL;
  g_autofree char *session_id = NULL;
  g_autoptr(SandboxState) created = NULL;

  /* A refused policy never takes a lease. */
  if (klass->check_policy != NULL && !klass->check_policy (self, policy, error))
    return NULL;
  if (!sandbox_backend_check_id (template_key, "template key", error))
    return NULL;
  if (state != NULL &&
      (g_strcmp0 (sandbox_state_get_backend (state), sandbox_backend_base_get_name (self)) != 0 ||
       g_strcmp0 (sandbox_state_get_template_key (state), template_key) != 0))
    {
      sandbox_set_error_state_mismatch (error);
      return NULL;
    }
  if (!klass->check_template (self, template_key, cancellable, error))
    return NULL;
  if (state != NULL)
    return resume_session (self, state, recover, policy, cancellable, error);

  uuid = g_uuid_string_random ();
  session_id = g_compute_checksum_for_string (G_CHECKSUM_SHA256, uuid, -1);
  created = sandbox_state_new (sandbox_backend_base_get_name (self), session_id, template_key,
                               error);
  if (created == NULL || !klass->new_session (self, created, cancellable, error))
    return NULL;
  return new_handle_or_release (self, created, policy, cancellable, error);
}

/* SandboxBackend::create: see sandbox_backend_base_implement_sessions(). */
static SandboxHandle *
protocol_create (SandboxBackend        *backend,
                 const char            *template_key,
                 SandboxState          *state,
                 SandboxNetworkPolicy  *policy,
                 GCancellable          *cancellable,
                 GError               **error)
{
  SandboxBackendBase *self = SANDBOX_BACKEND_BASE (backend);

  /* sandbox_backend_create() checked the arguments. */
  if (!sandbox_backend_base_check_ready (self, cancellable, error))
    return NULL;
  return open_session (self, template_key, state, FALSE, policy, cancellable, error);
}

/* SandboxBackend::recover_session: a resume with take_over_lease. The
 * backend's name is checked before the state's template key, which a
 * recovery takes from the state. */
static SandboxHandle *
protocol_recover_session (SandboxBackend        *backend,
                          SandboxState          *state,
                          SandboxNetworkPolicy  *policy,
                          GCancellable          *cancellable,
                          GError               **error)
{
  SandboxBackendBase *self = SANDBOX_BACKEND_BASE (backend);

  if (SANDBOX_BACKEND_BASE_GET_CLASS (self)->take_over_lease == NULL)
    return sandbox_backend_real_recover_session (backend, state, policy, cancellable, error);
  if (!sandbox_backend_base_check_ready (self, cancellable, error))
    return NULL;
  if (g_strcmp0 (sandbox_state_get_backend (state), sandbox_backend_base_get_name (self)) != 0)
    {
      sandbox_set_error_state_mismatch (error);
      return NULL;
    }
  return open_session (self, sandbox_state_get_template_key (state), state, TRUE, policy,
                       cancellable, error);
}

/**
 * sandbox_backend_base_delete_session:
 * @self: a [class@Sandbox.BackendBase]
 * @session_id: the session to delete
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Deletes a stored session as the reference does, for a driver's
 * [vfunc@Sandbox.Handle.delete_session]: the caller has released its own
 * lease; a session that is gone is not an error; otherwise @take_lease
 * (%SANDBOX_ERROR_BUSY when someone attached meanwhile), then
 * @remove_session, whose failure releases the lease again. The hooks get
 * @cancellable.
 *
 * Returns: %TRUE on success, %FALSE with @error set
 */
gboolean
sandbox_backend_base_delete_session (SandboxBackendBase  *self,
                                     const char          *session_id,
                                     GCancellable        *cancellable,
                                     GError             **error)
{
  SandboxBackendBaseClass *klass;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);

  klass = SANDBOX_BACKEND_BASE_GET_CLASS (self);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  if (!klass->has_session (self, session_id))
    return TRUE;
  if (!klass->take_lease (self, session_id, cancellable, &local_error))
    {
      /* Gone meanwhile: deleted all the same. */
      if (g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (klass->remove_session (self, session_id, cancellable, error))
    return TRUE;
  /* Not removed (cancelled, say): the lease is not kept either. */
  klass->release_lease (self, session_id);
  return FALSE;
}

/* SandboxBackend::lookup_state, the store's view of one session's state
 * (the interface checked the id): has_session, then load_state. */
static SandboxState *
protocol_lookup_state (SandboxBackend  *backend,
                       const char      *session_id,
                       GCancellable    *cancellable,
                       GError         **error)
{
  SandboxBackendBase *self = SANDBOX_BACKEND_BASE (backend);
  SandboxBackendBaseClass *klass = SANDBOX_BACKEND_BASE_GET_CLASS (self);

  if (!sandbox_backend_base_check_ready (self, cancellable, error))
    return NULL;
  if (!klass->has_session (self, session_id))
    {
      sandbox_set_error_unknown_session (error, session_id);
      return NULL;
    }
  return klass->load_state (self, session_id, cancellable, error);
}

/**
 * sandbox_backend_base_implement_sessions: (skip)
 * @iface: the [iface@Sandbox.Backend] of a [class@Sandbox.BackendBase]
 *   subclass, in the driver's interface init function
 *
 * Makes the base's session protocol the driver's
 * [vfunc@Sandbox.Backend.create], [vfunc@Sandbox.Backend.recover_session]
 * and [vfunc@Sandbox.Backend.lookup_state].
 * create runs, in the reference's order and with its codes and texts:
 * [method@Sandbox.BackendBase.check_ready]; @check_policy; the template
 * key is well formed (%SANDBOX_ERROR_INVALID); a saved state names this
 * backend and that template (%SANDBOX_ERROR_STATE_MISMATCH);
 * @check_template. A new session then gets the SHA-256 of a random UUID
 * for its id and @new_session stores it; a resumed one's id is well formed
 * (%SANDBOX_ERROR_INVALID), @has_session (%SANDBOX_ERROR_NOT_FOUND),
 * @take_lease (%SANDBOX_ERROR_BUSY), and @load_state gives a state equal to
 * the saved one (%SANDBOX_ERROR_STATE_MISMATCH,
 * [func@Sandbox.set_error_identity_mismatch]). Last @new_handle; the lease
 * is released again on every failure after it was taken. The hooks that
 * may block get the caller's cancellable.
 * recover_session, for a driver with @take_over_lease (without it,
 * %SANDBOX_ERROR_UNAVAILABLE), checks that the state names this backend
 * (%SANDBOX_ERROR_STATE_MISMATCH) and resumes the session as create does,
 * with @take_over_lease in place of @take_lease.
 * lookup_state is @has_session (%SANDBOX_ERROR_NOT_FOUND) then @load_state.
 */
void
sandbox_backend_base_implement_sessions (SandboxBackendInterface *iface)
{
  iface->create = protocol_create;
  iface->recover_session = protocol_recover_session;
  iface->lookup_state = protocol_lookup_state;
}
