/* sandbox-coding-exec-private.h — the interactive shell tools
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-coding-call-private.h"

G_BEGIN_DECLS

/* SandboxCodingToolFuncs, for the schema's table. */
gboolean sandbox_coding_exec_command  (SandboxCodingCall  *call,
                                       GCancellable       *cancellable,
                                       GError            **error);
gboolean sandbox_coding_write_stdin   (SandboxCodingCall  *call,
                                       GCancellable       *cancellable,
                                       GError            **error);
gboolean sandbox_coding_kill_command  (SandboxCodingCall  *call,
                                       GCancellable       *cancellable,
                                       GError            **error);
gboolean sandbox_coding_list_commands (SandboxCodingCall  *call,
                                       GCancellable       *cancellable,
                                       GError            **error);

G_END_DECLS
