/* sandbox-template-private.h — template internals for backends and tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_COMPILATION
# error "This is a private header."
#endif

#include "sandbox-template.h"

G_BEGIN_DECLS

/* The exact bytes sandbox_template_compute_key() hashes (no validation of
 * the names): [backend_name, name, [[path, sha256hex], …]] as JSON.stringify
 * writes it. */
char *sandbox_template_dup_canonical_json (SandboxTemplate *self,
                                           const char      *backend_name);

G_END_DECLS
