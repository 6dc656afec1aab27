/* sandboxctl-properties.c — --driver-option KEY=VALUE, typed by the property
 *
 * A driver's configuration is its backend's GObject properties. The text of
 * a --driver-option becomes a GValue of the property's own type with
 * sandbox_backend_parse_property(), so booleans (seccomp, durable), integers
 * (every limit), enums and flags (by nick) and strings can all be set from
 * the shell. This file finds the type the driver's properties belong to.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandboxctl.h"

/**
 * sandboxctl_driver_type:
 * @driver: a driver name
 *
 * Loads the driver modules (once) and finds the type @driver registered.
 *
 * Returns: the backend type, or %G_TYPE_INVALID when no module provides
 *   @driver (sandbox_backend_newv() then says so, naming the directories)
 */
GType
sandboxctl_driver_type (const char *driver)
{
  g_auto(GStrv) drivers = sandbox_list_drivers ();
  GIOExtensionPoint *point;
  GIOExtension *extension;

  if (!g_strv_contains ((const char * const *) drivers, driver))
    return G_TYPE_INVALID;
  point = g_io_extension_point_lookup (SANDBOX_BACKEND_EXTENSION_POINT_NAME);
  extension = g_io_extension_point_get_extension_by_name (point, driver);
  return extension != NULL ? g_io_extension_get_type (extension) : G_TYPE_INVALID;
}
