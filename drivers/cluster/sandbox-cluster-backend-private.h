/* sandbox-cluster-backend-private.h — the `cluster` backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_CLUSTER_COMPILATION
# error "sandbox-cluster-backend-private.h is private to the cluster driver."
#endif

#include <sandbox-backend-driver.h>

G_BEGIN_DECLS

#define SANDBOX_CLUSTER_DEFAULT_NAME   "cluster"
#define SANDBOX_CLUSTER_DEFAULT_PREFIX "/libsandbox/"

#define SANDBOX_CLUSTER_TYPE_BACKEND (sandbox_cluster_backend_get_type ())
G_DECLARE_FINAL_TYPE (SandboxClusterBackend, sandbox_cluster_backend, SANDBOX_CLUSTER, BACKEND,
                      SandboxBackendBase)

void     sandbox_cluster_backend_register        (GTypeModule            *module);

/* What a cluster handle asks of its backend (sandbox-cluster-handle.c). */
gboolean sandbox_cluster_backend_is_lost         (SandboxClusterBackend  *self);
gboolean sandbox_cluster_backend_checkpoint_stopped (SandboxClusterBackend  *self,
                                                     SandboxState           *state,
                                                     gint64                  epoch,
                                                     GCancellable           *cancellable,
                                                     GError                **error);
gboolean sandbox_cluster_backend_checkpoint_live    (SandboxClusterBackend  *self,
                                                     SandboxState           *state,
                                                     gint64                  epoch,
                                                     GCancellable           *cancellable,
                                                     GError                **error);
gboolean sandbox_cluster_backend_release         (SandboxClusterBackend  *self,
                                                  SandboxState           *state,
                                                  gint64                  epoch,
                                                  GCancellable           *cancellable,
                                                  GError                **error);
void     sandbox_cluster_backend_forget          (SandboxClusterBackend  *self,
                                                  SandboxHandle          *handle);

G_END_DECLS
