/* sandbox-memory-module.c — the memory driver's GIO module entry points
 *
 * Only the three entry points SANDBOX_DEFINE_DRIVER_MODULE() defines are
 * exported (see sandbox-memory.map). The module stays resident: objects of
 * its types (and the worker thread running scripted commands) may outlive
 * any use count.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <sandbox-backend-driver.h>

#include "sandbox-memory-backend.h"
#include "sandbox-memory-driver.h"
#include "sandbox-memory-handle.h"
#include "sandbox-memory-process.h"

static void
register_types (GTypeModule *module)
{
  sandbox_memory_driver_register (module);
  sandbox_memory_process_register (module);
  sandbox_memory_handle_register (module);
  sandbox_memory_backend_register (module);
}

SANDBOX_DEFINE_DRIVER_MODULE ("memory", SANDBOX_TYPE_MEMORY_BACKEND, register_types)
