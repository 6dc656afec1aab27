/* sandbox-path.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <glib.h>

#include "sandbox-version-macros.h"

G_BEGIN_DECLS

/**
 * SANDBOX_WORKSPACE:
 *
 * The absolute path of the workspace inside a sandbox.
 */
#define SANDBOX_WORKSPACE "/workspace"

SANDBOX_AVAILABLE_IN_ALL
char       *sandbox_path_canonicalize  (const char  *path,
                                        GError     **error);
SANDBOX_AVAILABLE_IN_ALL
const char *sandbox_path_relative      (const char  *canonical_path);

G_END_DECLS
