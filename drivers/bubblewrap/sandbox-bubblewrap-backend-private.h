/* sandbox-bubblewrap-backend-private.h — the bubblewrap backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_BUBBLEWRAP_BACKEND (sandbox_bubblewrap_backend_get_type ())
G_DECLARE_FINAL_TYPE (SandboxBubblewrapBackend, sandbox_bubblewrap_backend,
                      SANDBOX, BUBBLEWRAP_BACKEND, SandboxBackendBase)

G_END_DECLS
