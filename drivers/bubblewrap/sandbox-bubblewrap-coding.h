/* sandbox-bubblewrap-coding.h — the host-only coding binding of a bubblewrap session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "sandbox-bubblewrap-driver-private.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_BUBBLEWRAP_CODING (sandbox_bubblewrap_coding_get_type ())
G_DECLARE_FINAL_TYPE (SandboxBubblewrapCoding, sandbox_bubblewrap_coding,
                      SANDBOX, BUBBLEWRAP_CODING, GObject)

SandboxCodingBinding *sandbox_bubblewrap_coding_new      (SandboxBubblewrapDriver *driver);
void                  sandbox_bubblewrap_coding_register (GTypeModule             *module);

G_END_DECLS
