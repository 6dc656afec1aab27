/* sandbox-error.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <glib.h>

#include "sandbox-version-macros.h"

G_BEGIN_DECLS

/**
 * SANDBOX_ERROR:
 *
 * The error domain of libsandbox.
 */
#define SANDBOX_ERROR (sandbox_error_quark ())

/**
 * SandboxError:
 * @SANDBOX_ERROR_BUSY: the session has another owner, the admission limit is
 *   reached, or commands are live where none may be ("SANDBOX_BUSY")
 * @SANDBOX_ERROR_PATH: a path is not a canonical workspace path ("SANDBOX_PATH")
 * @SANDBOX_ERROR_LIMIT: a deadline, output, file or body limit was exceeded
 *   ("SANDBOX_LIMIT")
 * @SANDBOX_ERROR_UNAVAILABLE: isolation or a driver is not available; nothing
 *   was run on the host ("SANDBOX_UNAVAILABLE")
 * @SANDBOX_ERROR_STOPPED: the session is stopped or deleted ("SANDBOX_STOPPED")
 * @SANDBOX_ERROR_STATE_MISMATCH: a reconnect state does not match the backend,
 *   template or saved session ("SANDBOX_STATE_MISMATCH")
 * @SANDBOX_ERROR_NETWORK_DENIED: the network policy does not allow the
 *   operation ("SANDBOX_NETWORK_DENIED")
 * @SANDBOX_ERROR_INVALID: an input was rejected by validation
 *   ("SANDBOX_INVALID")
 * @SANDBOX_ERROR_NOT_FOUND: an unknown template or session
 *   ("SANDBOX_NOT_FOUND")
 *
 * Error codes in the %SANDBOX_ERROR domain. Cancellation is reported as
 * %G_IO_ERROR_CANCELLED, host file errors as #GIOErrorEnum codes and invalid
 * UTF-8 text as %G_CONVERT_ERROR_ILLEGAL_SEQUENCE.
 */
typedef enum
{
  SANDBOX_ERROR_BUSY,
  SANDBOX_ERROR_PATH,
  SANDBOX_ERROR_LIMIT,
  SANDBOX_ERROR_UNAVAILABLE,
  SANDBOX_ERROR_STOPPED,
  SANDBOX_ERROR_STATE_MISMATCH,
  SANDBOX_ERROR_NETWORK_DENIED,
  SANDBOX_ERROR_INVALID,
  SANDBOX_ERROR_NOT_FOUND,
} SandboxError;

SANDBOX_AVAILABLE_IN_ALL
GQuark       sandbox_error_quark     (void);
SANDBOX_AVAILABLE_IN_ALL
const char  *sandbox_error_code_name (SandboxError code);

/* The reference's contract errors, so every driver reports them alike. */
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_stopped             (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_deleted             (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_has_owner           (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_previous_owner_live (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_concurrency_limit   (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_commands_live       (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_policy_changed      (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_state_mismatch      (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_identity_mismatch   (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_foreign_template    (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_template_root       (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_workspace_root      (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_read_limit          (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_write_limit         (GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_unknown_template    (GError     **error,
                                                    const char  *template_key);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_set_error_unknown_session     (GError     **error,
                                                    const char  *session_id);

G_END_DECLS
