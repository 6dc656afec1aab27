/* sandbox-memory-handle.h — the owner of a live memory session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-memory-private.h"

#include "sandbox-memory-driver.h"
#include "sandbox-memory-store.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_MEMORY_HANDLE (sandbox_memory_handle_get_type ())

G_DECLARE_FINAL_TYPE (SandboxMemoryHandle, sandbox_memory_handle, SANDBOX, MEMORY_HANDLE, SandboxHandle)

void           sandbox_memory_handle_register (GTypeModule         *module);
SandboxHandle *sandbox_memory_handle_new      (SandboxSession      *session,
                                               SandboxState        *state,
                                               SandboxMemoryDriver *driver,
                                               SandboxBackendBase  *backend,
                                               SandboxMemoryStore  *store);

G_END_DECLS
