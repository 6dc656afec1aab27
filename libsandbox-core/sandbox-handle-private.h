/* sandbox-handle-private.h — between the parts of SandboxHandle
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-handle.h"

G_BEGIN_DECLS

/* sandbox-handle.c: the one slot checkpoints, snapshots and restores
 * share, never taken during or after a stop. */
gboolean sandbox_handle_begin_exclusive (SandboxHandle  *self,
                                         GError        **error);
void     sandbox_handle_end_exclusive   (SandboxHandle  *self);

G_END_DECLS
