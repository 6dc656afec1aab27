/* sandbox-workspace-overlay-private.h — the merged view of a layered workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The verbs of a layered workspace (its lower_fd is open), the table
 * sandbox-workspace.c gives a workspace it opens with a lower layer.
 * Paths are already checked; "." is left to the callers.
 */

#pragma once

#include "sandbox-workspace-private.h"

G_BEGIN_DECLS

/* What overlayfs, mounted with `userxattr`, reads from its upper layer. */
#define SANDBOX_WORKSPACE_OVERLAY_OPAQUE_XATTR "user.overlay.opaque"

extern const SandboxWorkspaceOps sandbox_workspace_overlay_ops;

G_END_DECLS
