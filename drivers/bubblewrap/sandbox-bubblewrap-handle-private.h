/* sandbox-bubblewrap-handle-private.h — the owner of a live bubblewrap session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "sandbox-bubblewrap-driver-private.h"
#include "sandbox-bubblewrap-store-private.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_BUBBLEWRAP_HANDLE (sandbox_bubblewrap_handle_get_type ())
G_DECLARE_FINAL_TYPE (SandboxBubblewrapHandle, sandbox_bubblewrap_handle,
                      SANDBOX, BUBBLEWRAP_HANDLE, SandboxHandle)

SandboxHandle *sandbox_bubblewrap_handle_new (SandboxBubblewrapDriver *driver,
                                              SandboxBubblewrapLease  *lease,
                                              SandboxBackendBase      *backend);

G_END_DECLS
