/* sandbox-coding-file-tools-private.h — the coding tools that touch files
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-coding-call-private.h"

G_BEGIN_DECLS

/* SandboxCodingToolFunc's, for the schema's table. */
gboolean sandbox_coding_read_file  (SandboxCodingCall  *call,
                                    GCancellable       *cancellable,
                                    GError            **error);
gboolean sandbox_coding_write_file (SandboxCodingCall  *call,
                                    GCancellable       *cancellable,
                                    GError            **error);
gboolean sandbox_coding_edit_file  (SandboxCodingCall  *call,
                                    GCancellable       *cancellable,
                                    GError            **error);
gboolean sandbox_coding_list_files (SandboxCodingCall  *call,
                                    GCancellable       *cancellable,
                                    GError            **error);

G_END_DECLS
