/* sandbox-coding-search-private.h — the search_files tool
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-coding-call-private.h"

G_BEGIN_DECLS

/* The SandboxCodingToolFunc of `search_files`, for the schema's table. */
gboolean sandbox_coding_search_files (SandboxCodingCall  *call,
                                      GCancellable       *cancellable,
                                      GError            **error);

G_END_DECLS
