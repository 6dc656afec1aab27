/* sandbox-test-runtime.h — the runtimes the tests build once per build directory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sandbox.h>

G_BEGIN_DECLS

char *sandbox_test_runtime_path   (const char     *name);
char *sandbox_test_import_runtime (SandboxBackend *backend,
                                   const char     *path,
                                   gboolean       *reused);
SandboxRuntimeInfo *sandbox_test_find_runtime (SandboxBackend *backend,
                                               const char     *key);

G_END_DECLS
