/* sandbox-memory-module.c — the memory driver's GIO module entry points
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <sandbox-backend-driver.h>

#include "sandbox-memory-backend.h"
#include "sandbox-memory-driver.h"
#include "sandbox-memory-handle.h"
#include "sandbox-memory-process.h"

/* Only these three are exported (see sandbox-memory.map). */
void   g_io_module_load   (GIOModule *module);
void   g_io_module_unload (GIOModule *module);
char **g_io_module_query  (void);

/**
 * g_io_module_load:
 * @module: the module being loaded
 *
 * Registers the memory driver's types and its backend under the name
 * `memory`. The module stays resident: objects of its types (and the worker
 * thread running scripted commands) may outlive any use count.
 */
G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  GTypeModule *type_module = G_TYPE_MODULE (module);

  g_type_module_use (type_module);

  sandbox_memory_driver_register (type_module);
  sandbox_memory_process_register (type_module);
  sandbox_memory_handle_register (type_module);
  sandbox_memory_backend_register (type_module);

  g_io_extension_point_implement (SANDBOX_BACKEND_EXTENSION_POINT_NAME,
                                  SANDBOX_TYPE_MEMORY_BACKEND, "memory", 0);
}

/**
 * g_io_module_unload:
 * @module: the module
 *
 * Never called in practice: the module is resident.
 */
G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

/**
 * g_io_module_query:
 *
 * Tells GIO which extension point the module implements, so it can be
 * loaded only when that point is used.
 *
 * Returns: (transfer full): the extension point names
 */
G_MODULE_EXPORT char **
g_io_module_query (void)
{
  const char *extension_points[] = { SANDBOX_BACKEND_EXTENSION_POINT_NAME, NULL };

  return g_strdupv ((char **) extension_points);
}
