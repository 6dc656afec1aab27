/* sandbox-cluster-module.c — the cluster driver as a GIO module
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-cluster-handle-private.h"

/* Only these three symbols are exported (sandbox-cluster.map). */
G_MODULE_EXPORT void   g_io_module_load   (GIOModule *module);
G_MODULE_EXPORT void   g_io_module_unload (GIOModule *module);
G_MODULE_EXPORT char **g_io_module_query  (void);

/**
 * g_io_module_load:
 * @module: this module
 *
 * Registers the `cluster` backend. The module stays resident: its types
 * back live objects, and its context thread and the etcd renewal thread
 * run its code for as long as the process lives.
 */
void
g_io_module_load (GIOModule *module)
{
  GTypeModule *type_module = G_TYPE_MODULE (module);

  g_type_module_use (type_module);   /* never unused: resident */
  sandbox_cluster_handle_register (type_module);
  sandbox_cluster_backend_register (type_module);
  g_io_extension_point_implement (SANDBOX_BACKEND_EXTENSION_POINT_NAME,
                                  SANDBOX_CLUSTER_TYPE_BACKEND, SANDBOX_CLUSTER_DEFAULT_NAME, 0);
}

/**
 * g_io_module_unload:
 * @module: this module
 *
 * Nothing to do: the module is resident.
 */
void
g_io_module_unload (GIOModule *module)
{
}

/**
 * g_io_module_query:
 *
 * Returns: (transfer full): the extension points this module implements
 */
char **
g_io_module_query (void)
{
  return g_strdupv ((char *[]) { (char *) SANDBOX_BACKEND_EXTENSION_POINT_NAME, NULL });
}
