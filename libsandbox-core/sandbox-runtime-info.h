/* sandbox-runtime-info.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_RUNTIME_INFO (sandbox_runtime_info_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxRuntimeInfo, sandbox_runtime_info, SANDBOX, RUNTIME_INFO, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxRuntimeInfo *sandbox_runtime_info_new              (const char         *key,
                                                           guint64             n_entries,
                                                           guint64             n_bytes,
                                                           guint               n_templates,
                                                           guint               n_sessions);
SANDBOX_AVAILABLE_IN_ALL
const char         *sandbox_runtime_info_get_key          (SandboxRuntimeInfo *self);
SANDBOX_AVAILABLE_IN_ALL
guint64             sandbox_runtime_info_get_n_entries    (SandboxRuntimeInfo *self);
SANDBOX_AVAILABLE_IN_ALL
guint64             sandbox_runtime_info_get_n_bytes      (SandboxRuntimeInfo *self);
SANDBOX_AVAILABLE_IN_ALL
guint               sandbox_runtime_info_get_n_templates  (SandboxRuntimeInfo *self);
SANDBOX_AVAILABLE_IN_ALL
guint               sandbox_runtime_info_get_n_sessions   (SandboxRuntimeInfo *self);

G_END_DECLS
