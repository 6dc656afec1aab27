/* sandbox-bubblewrap-quota-private.h — a disk quota per session, on btrfs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

gboolean sandbox_bubblewrap_quota_check            (const char  *state_directory,
                                                    guint64      quota_bytes,
                                                    GError     **error);
/**
 * SandboxBubblewrapFillFunc:
 * @parent_fd: where to make it
 * @name: the directory to make and fill; it does not exist
 * @data: the caller's
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Makes a session's workspace (or layers) directory @name in @parent_fd.
 *
 * Returns: %TRUE, or %FALSE with @error set
 */
typedef gboolean (*SandboxBubblewrapFillFunc) (int            parent_fd,
                                               const char    *name,
                                               gpointer       data,
                                               GCancellable  *cancellable,
                                               GError       **error);

gboolean sandbox_bubblewrap_quota_fill_directory   (int                        parent_fd,
                                                    const char                *name,
                                                    guint64                    quota_bytes,
                                                    SandboxBubblewrapFillFunc  fill,
                                                    gpointer                   data,
                                                    GCancellable              *cancellable,
                                                    GError                   **error);

G_END_DECLS
