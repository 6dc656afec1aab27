/* bench-session.h — the sessions the sections make, failing loudly
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A benchmark has no use for an error it could carry on past: these end
 * the run (g_error()) with what failed.
 */

#pragma once

#include <sandbox.h>

G_BEGIN_DECLS

void            check               (GError               *error,
                                     const char           *what);
SandboxBackend *new_layered_backend (const char           *state_directory);
SandboxHandle  *create_session      (SandboxBackend       *backend,
                                     const char           *key,
                                     SandboxNetworkPolicy *policy);
void            delete_session      (SandboxHandle        *handle);

G_END_DECLS
