/* sandbox-workspace-overlay-private.h — the merged view of a layered workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The verbs of a layered workspace (its lower_fd is open), which
 * sandbox-workspace.c puts in its SandboxWorkspaceOps when it opens one.
 * Paths are already checked; "." is left to the callers.
 */

#pragma once

#include "sandbox-workspace-private.h"

G_BEGIN_DECLS

/* What overlayfs, mounted with `userxattr`, reads from its upper layer. */
#define SANDBOX_WORKSPACE_OVERLAY_OPAQUE_XATTR "user.overlay.opaque"

GBytes   *sandbox_workspace_overlay_read   (SandboxWorkspace  *self,
                                            const char        *relative,
                                            gsize              max_bytes,
                                            GError           **error);
GVariant *sandbox_workspace_overlay_list   (SandboxWorkspace  *self,
                                            const char        *relative,
                                            guint              max_entries,
                                            gboolean          *truncated,
                                            GError           **error);
gboolean  sandbox_workspace_overlay_write  (SandboxWorkspace  *self,
                                            const char        *relative,
                                            GBytes            *contents,
                                            GError           **error);
gboolean  sandbox_workspace_overlay_remove (SandboxWorkspace  *self,
                                            const char        *relative,
                                            GError           **error);

G_END_DECLS
