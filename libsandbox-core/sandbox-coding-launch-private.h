/* sandbox-coding-launch-private.h — how the coding tools make a launch
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-coding-binding.h"
#include "sandbox-coding-launch.h"
#include "sandbox-command.h"

G_BEGIN_DECLS

SandboxCodingLaunch *sandbox_coding_launch_new (SandboxCodingBinding *binding,
                                                SandboxCommand       *command,
                                                guint64               revision);

G_END_DECLS
