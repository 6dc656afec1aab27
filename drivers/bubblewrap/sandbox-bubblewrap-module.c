/* sandbox-bubblewrap-module.c — the bubblewrap driver as a GIO module
 *
 * Only the three entry points SANDBOX_DEFINE_DRIVER_MODULE() defines are
 * exported (sandbox-bubblewrap.map). The module stays resident: its types
 * back live objects and threads (the launcher thread runs this module's
 * code for as long as the process lives).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-bubblewrap-backend-private.h"

static void
register_types (GTypeModule *module)
{
  sandbox_bubblewrap_process_register (module);
  sandbox_bubblewrap_driver_register (module);
  sandbox_bubblewrap_handle_register (module);
  sandbox_bubblewrap_backend_register (module);
}

SANDBOX_DEFINE_DRIVER_MODULE ("bubblewrap", SANDBOX_TYPE_BUBBLEWRAP_BACKEND, register_types)
