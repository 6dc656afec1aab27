/* sandbox-error.c — the SANDBOX_ERROR domain
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
 * @code: a #SandboxError code
 *
 * Gives the spelling the reference design uses for @code, such as
 * `"SANDBOX_BUSY"`, so logs and tool results can name errors the same way on
 * every implementation.
 *
 * Returns: (transfer none): the static name of @code, or `"SANDBOX_UNKNOWN"`
 *   for a value outside #SandboxError
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
