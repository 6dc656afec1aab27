/* sandbox-session-info.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-lease-owner.h"
#include "sandbox-state.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_SESSION_INFO (sandbox_session_info_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxSessionInfo, sandbox_session_info, SANDBOX, SESSION_INFO, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxSessionInfo *sandbox_session_info_new                   (SandboxState       *state,
                                                                SandboxLeaseOwner  *lease_owner,
                                                                guint64             workspace_n_files,
                                                                guint64             workspace_n_bytes);
SANDBOX_AVAILABLE_IN_ALL
SandboxState       *sandbox_session_info_get_state             (SandboxSessionInfo *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxLeaseOwner  *sandbox_session_info_get_lease_owner       (SandboxSessionInfo *self);
SANDBOX_AVAILABLE_IN_ALL
guint64             sandbox_session_info_get_workspace_n_files (SandboxSessionInfo *self);
SANDBOX_AVAILABLE_IN_ALL
guint64             sandbox_session_info_get_workspace_n_bytes (SandboxSessionInfo *self);

G_END_DECLS
