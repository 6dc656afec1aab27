/* sandbox.h — the libsandbox umbrella header
 *
 * It lives in lib/, beside the declaration of libsandbox-1, because it
 * includes the gateway's header as well as the core's: the core never
 * includes upward (tests/core/test-layering.py). It installs with the other
 * public headers into $includedir/sandbox-1/, so applications, out-of-tree
 * drivers and the GIR include <sandbox.h> as before. What only drivers
 * need is in <sandbox-backend-driver.h>, which includes this one.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

#define SANDBOX_INSIDE
# include "sandbox-version.h"
# include "sandbox-version-macros.h"
# include "sandbox-enums.h"
# include "sandbox-error.h"
# include "sandbox-path.h"
# include "sandbox-command.h"
# include "sandbox-network-policy.h"
# include "sandbox-state.h"
# include "sandbox-template.h"
# include "sandbox-result.h"
# include "sandbox-lease-owner.h"
# include "sandbox-session-info.h"
# include "sandbox-template-info.h"
# include "sandbox-runtime-info.h"
# include "sandbox-process.h"
# include "sandbox-driver.h"
# include "sandbox-session.h"
# include "sandbox-handle.h"
# include "sandbox-coding-binding.h"
# include "sandbox-coding-operation.h"
# include "sandbox-coding-launch.h"
# include "sandbox-coding-tools.h"
# include "sandbox-backend.h"
# include "sandbox-gateway.h"
#undef SANDBOX_INSIDE

G_END_DECLS
