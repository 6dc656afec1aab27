/* sandbox-coding-launch.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-process.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_CODING_LAUNCH (sandbox_coding_launch_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxCodingLaunch, sandbox_coding_launch,
                      SANDBOX, CODING_LAUNCH, GObject)

SANDBOX_AVAILABLE_IN_ALL
guint64         sandbox_coding_launch_get_revision (SandboxCodingLaunch  *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxProcess *sandbox_coding_launch_spawn        (SandboxCodingLaunch  *self,
                                                    GCancellable         *cancellable,
                                                    GError              **error);

G_END_DECLS
