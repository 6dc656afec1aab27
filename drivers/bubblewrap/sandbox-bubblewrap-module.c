/* sandbox-bubblewrap-module.c — the bubblewrap driver as a GIO module
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-bubblewrap-backend-private.h"

/* Only these three symbols are exported (sandbox-bubblewrap.map). */
G_MODULE_EXPORT void   g_io_module_load   (GIOModule *module);
G_MODULE_EXPORT void   g_io_module_unload (GIOModule *module);
G_MODULE_EXPORT char **g_io_module_query  (void);

/**
 * g_io_module_load:
 * @module: this module
 *
 * Registers the driver's types and the `bubblewrap` backend. The module
 * stays resident: its types back live objects and threads (the launcher
 * thread runs this module's code for as long as the process lives).
 */
void
g_io_module_load (GIOModule *module)
{
  GTypeModule *type_module = G_TYPE_MODULE (module);

  g_type_module_use (type_module);   /* never unused: resident */

  sandbox_bubblewrap_process_register (type_module);
  sandbox_bubblewrap_driver_register (type_module);
  sandbox_bubblewrap_handle_register (type_module);
  sandbox_bubblewrap_backend_register (type_module);

  g_io_extension_point_implement (SANDBOX_BACKEND_EXTENSION_POINT_NAME,
                                  SANDBOX_TYPE_BUBBLEWRAP_BACKEND,
                                  "bubblewrap", 0);
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
  char *extension_points[] = { (char *) SANDBOX_BACKEND_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (extension_points);
}
