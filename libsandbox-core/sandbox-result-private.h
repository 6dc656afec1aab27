/* sandbox-result-private.h — the results the core makes for drivers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-result.h"

G_BEGIN_DECLS

int            sandbox_result_exec_failure_status (int     exec_errno);
SandboxResult *sandbox_result_new_exec_failure    (int     exec_errno,
                                                   GBytes *stdout_bytes,
                                                   GBytes *stderr_bytes);

G_END_DECLS
