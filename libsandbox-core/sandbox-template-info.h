/* sandbox-template-info.h
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

#define SANDBOX_TYPE_TEMPLATE_INFO (sandbox_template_info_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxTemplateInfo, sandbox_template_info, SANDBOX, TEMPLATE_INFO, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxTemplateInfo *sandbox_template_info_new            (const char          *key,
                                                           guint64              n_files,
                                                           guint64              n_bytes,
                                                           guint                n_sessions);
SANDBOX_AVAILABLE_IN_ALL
SandboxTemplateInfo *sandbox_template_info_new_full       (const char          *key,
                                                           const char          *name,
                                                           guint64              n_files,
                                                           guint64              n_bytes,
                                                           guint                n_sessions);
SANDBOX_AVAILABLE_IN_ALL
SandboxTemplateInfo *sandbox_template_info_new_with_lineage (const char       *key,
                                                             const char       *name,
                                                             const char       *parent_key,
                                                             guint64           n_files,
                                                             guint64           n_bytes,
                                                             guint             n_sessions,
                                                             guint             n_snapshots);
SANDBOX_AVAILABLE_IN_ALL
const char          *sandbox_template_info_get_key        (SandboxTemplateInfo *self);
SANDBOX_AVAILABLE_IN_ALL
const char          *sandbox_template_info_get_name       (SandboxTemplateInfo *self);
SANDBOX_AVAILABLE_IN_ALL
guint64              sandbox_template_info_get_n_files    (SandboxTemplateInfo *self);
SANDBOX_AVAILABLE_IN_ALL
guint64              sandbox_template_info_get_n_bytes    (SandboxTemplateInfo *self);
SANDBOX_AVAILABLE_IN_ALL
guint                sandbox_template_info_get_n_sessions (SandboxTemplateInfo *self);
SANDBOX_AVAILABLE_IN_ALL
const char          *sandbox_template_info_get_parent_key (SandboxTemplateInfo *self);
SANDBOX_AVAILABLE_IN_ALL
guint                sandbox_template_info_get_n_snapshots (SandboxTemplateInfo *self);

G_END_DECLS
