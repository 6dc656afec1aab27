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

/* The Landlock ABI from which the stub scopes every sandbox (abstract
 * sockets and signals); the stub has its own copy of the number. */
#define SANDBOX_BUBBLEWRAP_LANDLOCK_SCOPING_ABI 6

guint sandbox_bubblewrap_kernel_landlock_abi (void);

G_END_DECLS
