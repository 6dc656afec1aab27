/* sandbox-template.h
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

#define SANDBOX_TYPE_TEMPLATE (sandbox_template_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxTemplate, sandbox_template, SANDBOX, TEMPLATE, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxTemplate  *sandbox_template_new            (const char       *name);
SANDBOX_AVAILABLE_IN_ALL
const char       *sandbox_template_get_name       (SandboxTemplate  *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean          sandbox_template_add_file       (SandboxTemplate  *self,
                                                   const char       *path,
                                                   GBytes           *contents,
                                                   GError          **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean          sandbox_template_add_directory  (SandboxTemplate  *self,
                                                   GFile            *directory,
                                                   GCancellable     *cancellable,
                                                   GError          **error);
SANDBOX_AVAILABLE_IN_ALL
guint             sandbox_template_get_n_files    (SandboxTemplate  *self);
SANDBOX_AVAILABLE_IN_ALL
char            **sandbox_template_list_paths     (SandboxTemplate  *self);
SANDBOX_AVAILABLE_IN_ALL
GBytes           *sandbox_template_lookup_file    (SandboxTemplate  *self,
                                                   const char       *path);
SANDBOX_AVAILABLE_IN_ALL
char             *sandbox_template_compute_key    (SandboxTemplate  *self,
                                                   const char       *backend_name,
                                                   GError          **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean          sandbox_template_key_is_valid   (const char       *key);

G_END_DECLS
