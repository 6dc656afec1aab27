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

/**
 * SandboxTemplateFileFlags:
 * @SANDBOX_TEMPLATE_FILE_NONE: a plain file (mode 0644 in a workspace)
 * @SANDBOX_TEMPLATE_FILE_EXECUTABLE: an executable file (mode 0755 in a
 *   workspace), as git records `100755`
 *
 * What a template keeps about a regular file besides its bytes.
 */
typedef enum /*< flags >*/
{
  SANDBOX_TEMPLATE_FILE_NONE = 0,
  SANDBOX_TEMPLATE_FILE_EXECUTABLE = 1 << 0,
} SandboxTemplateFileFlags;

#define SANDBOX_TYPE_TEMPLATE (sandbox_template_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxTemplate, sandbox_template, SANDBOX, TEMPLATE, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxTemplate  *sandbox_template_new            (const char       *name);
SANDBOX_AVAILABLE_IN_ALL
const char       *sandbox_template_get_name       (SandboxTemplate  *self);
SANDBOX_AVAILABLE_IN_ALL
void              sandbox_template_set_runtime    (SandboxTemplate  *self,
                                                   const char       *runtime_key);
SANDBOX_AVAILABLE_IN_ALL
const char       *sandbox_template_get_runtime    (SandboxTemplate  *self);
SANDBOX_AVAILABLE_IN_ALL
void              sandbox_template_set_runtime_writable (SandboxTemplate *self,
                                                         gboolean         writable);
SANDBOX_AVAILABLE_IN_ALL
gboolean          sandbox_template_get_runtime_writable (SandboxTemplate *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean          sandbox_template_add_file       (SandboxTemplate  *self,
                                                   const char       *path,
                                                   GBytes           *contents,
                                                   GError          **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean          sandbox_template_add_file_full  (SandboxTemplate  *self,
                                                   const char       *path,
                                                   GBytes           *contents,
                                                   SandboxTemplateFileFlags flags,
                                                   GError          **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean          sandbox_template_add_symlink    (SandboxTemplate  *self,
                                                   const char       *path,
                                                   const char       *target,
                                                   GError          **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean          sandbox_template_add_empty_directory (SandboxTemplate *self,
                                                   const char       *path,
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
guint64           sandbox_template_get_n_bytes    (SandboxTemplate  *self);
SANDBOX_AVAILABLE_IN_ALL
GBytes           *sandbox_template_lookup_file    (SandboxTemplate  *self,
                                                   const char       *path);
SANDBOX_AVAILABLE_IN_ALL
GFileType         sandbox_template_query_file_type (SandboxTemplate *self,
                                                   const char       *path);
SANDBOX_AVAILABLE_IN_ALL
SandboxTemplateFileFlags sandbox_template_get_file_flags (SandboxTemplate *self,
                                                   const char       *path);
SANDBOX_AVAILABLE_IN_ALL
guint64           sandbox_template_get_file_size  (SandboxTemplate  *self,
                                                   const char       *path);
SANDBOX_AVAILABLE_IN_ALL
const char       *sandbox_template_lookup_symlink (SandboxTemplate  *self,
                                                   const char       *path);
SANDBOX_AVAILABLE_IN_ALL
GInputStream     *sandbox_template_read_file      (SandboxTemplate  *self,
                                                   const char       *path,
                                                   GCancellable     *cancellable,
                                                   GError          **error);
SANDBOX_AVAILABLE_IN_ALL
GBytes           *sandbox_template_load_bytes     (SandboxTemplate  *self,
                                                   const char       *path,
                                                   GCancellable     *cancellable,
                                                   GError          **error);
SANDBOX_AVAILABLE_IN_ALL
char             *sandbox_template_compute_key    (SandboxTemplate  *self,
                                                   const char       *backend_name,
                                                   GError          **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean          sandbox_template_key_is_valid   (const char       *key);

G_END_DECLS
