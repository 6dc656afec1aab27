/* sandbox-bubblewrap-seccomp-private.h — the default seccomp filter of the guest
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"

G_BEGIN_DECLS

GBytes *sandbox_bubblewrap_seccomp_get_program     (GError **error);
int     sandbox_bubblewrap_seccomp_open_program_fd (GBytes  *program,
                                                    GError **error);

G_END_DECLS
