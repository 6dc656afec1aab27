/* sandbox-memory-backend.h — the memory test driver's backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-memory-private.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_MEMORY_BACKEND (sandbox_memory_backend_get_type ())

G_DECLARE_FINAL_TYPE (SandboxMemoryBackend, sandbox_memory_backend, SANDBOX, MEMORY_BACKEND,
                      SandboxBackendBase)

void sandbox_memory_backend_register (GTypeModule *module);

G_END_DECLS
