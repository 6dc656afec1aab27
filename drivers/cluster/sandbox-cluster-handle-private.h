/* sandbox-cluster-handle-private.h — a live session of the `cluster` backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-cluster-backend-private.h"

G_BEGIN_DECLS

#define SANDBOX_CLUSTER_TYPE_HANDLE (sandbox_cluster_handle_get_type ())
G_DECLARE_FINAL_TYPE (SandboxClusterHandle, sandbox_cluster_handle, SANDBOX_CLUSTER, HANDLE,
                      SandboxHandle)

void           sandbox_cluster_handle_register (GTypeModule           *module);
SandboxHandle *sandbox_cluster_handle_new      (SandboxClusterBackend *backend,
                                                SandboxHandle         *inner,
                                                gint64                 epoch);
void           sandbox_cluster_handle_fence_commands (SandboxClusterHandle *self);
void           sandbox_cluster_handle_fence    (SandboxClusterHandle  *self);

G_END_DECLS
