/* sandbox-cluster-module.c — the cluster driver as a GIO module
 *
 * Only the three entry points SANDBOX_DEFINE_DRIVER_MODULE() defines are
 * exported (sandbox-cluster.map). The module stays resident: its types back
 * live objects, and its context thread and the etcd renewal thread run its
 * code for as long as the process lives.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-cluster-handle-private.h"

static void
register_types (GTypeModule *module)
{
  sandbox_cluster_handle_register (module);
  sandbox_cluster_backend_register (module);
}

SANDBOX_DEFINE_DRIVER_MODULE (SANDBOX_CLUSTER_DEFAULT_NAME, SANDBOX_CLUSTER_TYPE_BACKEND,
                              register_types)
