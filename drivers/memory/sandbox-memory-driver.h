/* sandbox-memory-driver.h — one live session of the memory backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-memory-private.h"

#include "sandbox-memory-script.h"
#include "sandbox-memory-workspace.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_MEMORY_DRIVER (sandbox_memory_driver_get_type ())

G_DECLARE_FINAL_TYPE (SandboxMemoryDriver, sandbox_memory_driver, SANDBOX, MEMORY_DRIVER, GObject)

void                 sandbox_memory_driver_register             (GTypeModule           *module);
SandboxMemoryDriver *sandbox_memory_driver_new                  (SandboxMemoryWorkspace *workspace,
                                                                 SandboxMemoryScript    *script,
                                                                 guint                   max_concurrent_commands,
                                                                 SandboxNetworkPolicy   *policy);
gboolean             sandbox_memory_driver_check_network_policy (SandboxNetworkPolicy   *policy,
                                                                 GError                **error);
void                 sandbox_memory_driver_stop                 (SandboxMemoryDriver    *self);
gboolean             sandbox_memory_driver_run_quiet            (SandboxMemoryDriver    *self,
                                                                 const char             *what,
                                                                 SandboxSessionGateApplyFunc run,
                                                                 gpointer                user_data,
                                                                 GCancellable           *cancellable,
                                                                 GError                **error);

G_END_DECLS
