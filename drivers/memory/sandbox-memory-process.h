/* sandbox-memory-process.h — a scripted command of the memory driver
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-memory-private.h"

#include "sandbox-memory-driver.h"
#include "sandbox-memory-script.h"
#include "sandbox-memory-workspace.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_MEMORY_PROCESS (sandbox_memory_process_get_type ())

G_DECLARE_FINAL_TYPE (SandboxMemoryProcess, sandbox_memory_process, SANDBOX, MEMORY_PROCESS, SandboxProcess)

void                  sandbox_memory_process_register (GTypeModule             *module);
SandboxMemoryProcess *sandbox_memory_process_new      (SandboxMemoryDriver     *driver,
                                                       SandboxMemoryScript     *script,
                                                       const SandboxMemoryRule *rule,
                                                       int                      exec_errno,
                                                       SandboxMemoryWorkspace  *workspace,
                                                       SandboxCommand          *command,
                                                       GError                 **error);
void                  sandbox_memory_process_launch   (SandboxMemoryProcess    *self,
                                                       GCancellable            *cancellable);

G_END_DECLS
