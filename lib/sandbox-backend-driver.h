/* sandbox-backend-driver.h — the driver kit: what only drivers include
 *
 * An application includes <sandbox.h>. A driver module — a backend of its
 * own, in tree or out — also includes this header, which adds what only a
 * driver needs (docs/driver-guide.md walks through it):
 *
 * - SandboxBackendBase, the class a driver's backend derives from, with
 *   its init hook and its inner-driver support (a driver built on
 *   another);
 * - SandboxSessionGate, one live session's admission, policy and stop;
 * - SandboxWorkspace, the contained descriptor-level file calls a driver
 *   makes in a guest-shaped workspace;
 * - the backend methods a driver built on another uses to move sessions
 *   and templates in and out of it (sandbox_backend_import_session() and
 *   its kin);
 * - sandbox_runtime_import_at(), the contained unpacking of a runtime into
 *   a driver's store.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sandbox.h>

G_BEGIN_DECLS

#define SANDBOX_DRIVER_INSIDE
# include "sandbox-workspace.h"
# include "sandbox-session-gate.h"
# include "sandbox-backend-base.h"
# include "sandbox-backend-transfer.h"
# include "sandbox-runtime-import.h"
#undef SANDBOX_DRIVER_INSIDE

G_END_DECLS
