/* sandbox-error.c — the SANDBOX_ERROR domain and the reference's contract errors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-error.h"

/**
 * sandbox_error_quark:
 *
 * The quark of the %SANDBOX_ERROR domain. Its #GType is
 * `sandbox_error_get_type()` from the generated `sandbox-enums.h`, so language
 * bindings see errors in this domain as a typed enum.
 *
 * Returns: the error domain quark
 */
G_DEFINE_QUARK (sandbox-error-quark, sandbox_error)

/**
 * sandbox_error_code_name:
 * @code: a [error@Sandbox.Error] code
 *
 * Gives the spelling the reference design uses for @code, such as
 * `"SANDBOX_BUSY"`, so logs and tool results can name errors the same way on
 * every implementation.
 *
 * Returns: (transfer none): the static name of @code, or `"SANDBOX_UNKNOWN"`
 *   for a value outside [error@Sandbox.Error]
 */
const char *
sandbox_error_code_name (SandboxError code)
{
  switch (code)
    {
    case SANDBOX_ERROR_BUSY:
      return "SANDBOX_BUSY";
    case SANDBOX_ERROR_PATH:
      return "SANDBOX_PATH";
    case SANDBOX_ERROR_LIMIT:
      return "SANDBOX_LIMIT";
    case SANDBOX_ERROR_UNAVAILABLE:
      return "SANDBOX_UNAVAILABLE";
    case SANDBOX_ERROR_STOPPED:
      return "SANDBOX_STOPPED";
    case SANDBOX_ERROR_STATE_MISMATCH:
      return "SANDBOX_STATE_MISMATCH";
    case SANDBOX_ERROR_NETWORK_DENIED:
      return "SANDBOX_NETWORK_DENIED";
    case SANDBOX_ERROR_INVALID:
      return "SANDBOX_INVALID";
    case SANDBOX_ERROR_NOT_FOUND:
      return "SANDBOX_NOT_FOUND";
    default:
      return "SANDBOX_UNKNOWN";
    }
}

/* One place for each message the reference design fixes, so a driver cannot
 * mistype one: tests and applications compare these texts. */
static gboolean
set_contract_error (GError       **error,
                    SandboxError   code,
                    const char    *message)
{
  g_set_error_literal (error, SANDBOX_ERROR, code, message);
  return FALSE;
}

/**
 * sandbox_set_error_stopped:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_STOPPED with the reference's message
 * "Sandbox session is stopped": the session was stopped: no new operation starts on it.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_stopped (error);`
 */
gboolean
sandbox_set_error_stopped (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_STOPPED,
                             "Sandbox session is stopped");
}

/**
 * sandbox_set_error_deleted:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_STOPPED with the reference's message
 * "Sandbox session is deleted": the session was deleted: its handle can no longer capture a state.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_deleted (error);`
 */
gboolean
sandbox_set_error_deleted (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_STOPPED,
                             "Sandbox session is deleted");
}

/**
 * sandbox_set_error_has_owner:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_BUSY with the reference's message
 * "Sandbox session already has an owner": another live handle (in this or another process) holds the session's lease.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_has_owner (error);`
 */
gboolean
sandbox_set_error_has_owner (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_BUSY,
                             "Sandbox session already has an owner");
}

/**
 * sandbox_set_error_previous_owner_live:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_BUSY with the reference's message
 * "Sandbox session still has processes of its previous owner": the lease is free but commands its previous owner started still run.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_previous_owner_live (error);`
 */
gboolean
sandbox_set_error_previous_owner_live (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_BUSY,
                             "Sandbox session still has processes of its previous owner");
}

/**
 * sandbox_set_error_concurrency_limit:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_BUSY with the reference's message
 * "Sandbox command concurrency limit reached": admitting one more command would exceed [property@Sandbox.Backend:max-concurrent-commands].
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_concurrency_limit (error);`
 */
gboolean
sandbox_set_error_concurrency_limit (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_BUSY,
                             "Sandbox command concurrency limit reached");
}

/**
 * sandbox_set_error_commands_live:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_BUSY with the reference's message
 * "Stop live commands before changing network policy": a network policy change was asked for while commands of the session run.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_commands_live (error);`
 */
gboolean
sandbox_set_error_commands_live (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_BUSY,
                             "Stop live commands before changing network policy");
}

/**
 * sandbox_set_error_policy_changed:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_BUSY with the reference's message
 * "Sandbox policy changed after command preparation": the network policy changed between preparing a command and spawning it.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_policy_changed (error);`
 */
gboolean
sandbox_set_error_policy_changed (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_BUSY,
                             "Sandbox policy changed after command preparation");
}

/**
 * sandbox_set_error_state_mismatch:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_STATE_MISMATCH with the reference's message
 * "Reconnect state does not match backend and template": a reconnect state names another backend or template than the one it is given to.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_state_mismatch (error);`
 */
gboolean
sandbox_set_error_state_mismatch (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_STATE_MISMATCH,
                             "Reconnect state does not match backend and template");
}

/**
 * sandbox_set_error_identity_mismatch:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_STATE_MISMATCH with the reference's message
 * "Reconnect identity does not match saved session": a reconnect state does not match what the backend saved for that session.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_identity_mismatch (error);`
 */
gboolean
sandbox_set_error_identity_mismatch (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_STATE_MISMATCH,
                             "Reconnect identity does not match saved session");
}

/**
 * sandbox_set_error_foreign_template:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_STATE_MISMATCH with the reference's message
 * "Template belongs to another backend": a template key was prepared by another backend.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_foreign_template (error);`
 */
gboolean
sandbox_set_error_foreign_template (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_STATE_MISMATCH,
                             "Template belongs to another backend");
}

/**
 * sandbox_set_error_template_root:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_PATH with the reference's message
 * "Template file cannot be the workspace root": a template file's path is the workspace root itself.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_template_root (error);`
 */
gboolean
sandbox_set_error_template_root (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_PATH,
                             "Template file cannot be the workspace root");
}

/**
 * sandbox_set_error_workspace_root:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_PATH with the reference's message
 * "Cannot remove the workspace root": a removal names the workspace root.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_workspace_root (error);`
 */
gboolean
sandbox_set_error_workspace_root (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_PATH,
                             "Cannot remove the workspace root");
}

/**
 * sandbox_set_error_read_limit:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_LIMIT with the reference's message
 * "Sandbox file read limit exceeded": a workspace file is larger than the read limit.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_read_limit (error);`
 */
gboolean
sandbox_set_error_read_limit (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_LIMIT,
                             "Sandbox file read limit exceeded");
}

/**
 * sandbox_set_error_write_limit:
 * @error: (out) (optional) (nullable): return location for a #GError
 *
 * Sets @error to %SANDBOX_ERROR_LIMIT with the reference's message
 * "Sandbox file write limit exceeded": a write is larger than the write limit.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_write_limit (error);`
 */
gboolean
sandbox_set_error_write_limit (GError **error)
{
  return set_contract_error (error, SANDBOX_ERROR_LIMIT,
                             "Sandbox file write limit exceeded");
}

/* NOT_FOUND: nothing stored under @name. */
static gboolean
set_unknown_error (GError     **error,
                   const char  *what,
                   const char  *name)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND, "Unknown sandbox %s %s", what, name);
  return FALSE;
}

/**
 * sandbox_set_error_unknown_template:
 * @error: (out) (optional) (nullable): return location for a #GError
 * @template_key: the key nothing is stored under
 *
 * Sets @error to %SANDBOX_ERROR_NOT_FOUND with the reference's message
 * "Unknown sandbox template KEY": no template is stored under @template_key.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_unknown_template (error, key);`
 */
gboolean
sandbox_set_error_unknown_template (GError     **error,
                                    const char  *template_key)
{
  return set_unknown_error (error, "template", template_key);
}

/**
 * sandbox_set_error_unknown_session:
 * @error: (out) (optional) (nullable): return location for a #GError
 * @session_id: the id no session is stored under
 *
 * Sets @error to %SANDBOX_ERROR_NOT_FOUND with the reference's message
 * "Unknown sandbox session ID": no session is stored under @session_id.
 *
 * Returns: %FALSE, so a caller can `return sandbox_set_error_unknown_session (error, id);`
 */
gboolean
sandbox_set_error_unknown_session (GError     **error,
                                   const char  *session_id)
{
  return set_unknown_error (error, "session", session_id);
}
