/* sandbox-backend-private.h — between the parts of SandboxBackend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-backend.h"

G_BEGIN_DECLS

/* sandbox-backend-store.c: the defaults of the store's own view. */
void sandbox_backend_install_store_defaults (SandboxBackendInterface *iface);

G_END_DECLS
