/* sandbox-backend-transfer.h — sessions and templates into and out of a backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_DRIVER_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox-backend-driver.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-backend.h"

G_BEGIN_DECLS

SANDBOX_AVAILABLE_IN_ALL
gboolean         sandbox_backend_import_session (SandboxBackend        *self,
                                                 SandboxState          *state,
                                                 SandboxWorkspaceFillFunc fill,
                                                 gpointer               user_data,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
int              sandbox_backend_open_session_files (SandboxBackend    *self,
                                                 const char            *session_id,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
int              sandbox_backend_open_template_files (SandboxBackend   *self,
                                                 const char            *template_key,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
G_END_DECLS
