/* sandbox-runtime-import.h — a runtime's tree, unpacked for a driver's store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_DRIVER_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox-backend-driver.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-backend.h"
#include "sandbox-version-macros.h"

G_BEGIN_DECLS

/**
 * SandboxRuntimeImportProgressFunc:
 * @n_entries: entries created so far
 * @n_bytes: bytes of regular files written so far
 * @user_data: the data given with the function
 *
 * How far [func@Sandbox.runtime_import_at] is; called in its thread every
 * few hundred entries and once at the end.
 */
typedef void (*SandboxRuntimeImportProgressFunc) (guint64  n_entries,
                                                  guint64  n_bytes,
                                                  gpointer user_data);

SANDBOX_AVAILABLE_IN_ALL
char *sandbox_runtime_import_at (GFile                            *source,
                                 int                               target_dirfd,
                                 SandboxRuntimeImportProgressFunc  progress,
                                 gpointer                          user_data,
                                 GCancellable                     *cancellable,
                                 GError                          **error);
SANDBOX_AVAILABLE_IN_ALL
char *sandbox_runtime_import_reporting (SandboxBackend  *backend,
                                        GFile           *source,
                                        int              target_dirfd,
                                        GCancellable    *cancellable,
                                        GError         **error);

G_END_DECLS
