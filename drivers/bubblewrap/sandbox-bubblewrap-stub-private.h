/* sandbox-bubblewrap-stub-private.h — the host's side of the trusted stub
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"

G_BEGIN_DECLS

/**
 * SANDBOX_BUBBLEWRAP_STUB_NAME:
 *
 * The stub's process name (its comm), by which lease recovery knows a
 * sandbox's init.
 */
#define SANDBOX_BUBBLEWRAP_STUB_NAME "sandbox-stub"

const char *sandbox_bubblewrap_stub_get_path       (GError         **error);
int         sandbox_bubblewrap_stub_open           (GError         **error);
GBytes     *sandbox_bubblewrap_stub_message_new    (SandboxCommand  *command,
                                                    GError         **error);

G_END_DECLS
