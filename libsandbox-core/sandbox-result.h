/* sandbox-result.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_RESULT (sandbox_result_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxResult, sandbox_result, SANDBOX, RESULT, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxResult *sandbox_result_new              (int             exit_status,
                                                GBytes         *stdout_bytes,
                                                GBytes         *stderr_bytes);
SANDBOX_AVAILABLE_IN_ALL
int            sandbox_result_get_exit_status  (SandboxResult  *self);
SANDBOX_AVAILABLE_IN_ALL
GBytes        *sandbox_result_get_stdout_bytes (SandboxResult  *self);
SANDBOX_AVAILABLE_IN_ALL
GBytes        *sandbox_result_get_stderr_bytes (SandboxResult  *self);
SANDBOX_AVAILABLE_IN_ALL
char          *sandbox_result_dup_stdout_text  (SandboxResult  *self);
SANDBOX_AVAILABLE_IN_ALL
char          *sandbox_result_dup_stderr_text  (SandboxResult  *self);
SANDBOX_AVAILABLE_IN_ALL
int            sandbox_result_get_exec_errno   (SandboxResult  *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean       sandbox_result_check_executed   (SandboxResult  *self,
                                                GError        **error);

G_END_DECLS
