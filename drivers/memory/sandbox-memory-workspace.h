/* sandbox-memory-workspace.h — an in-memory workspace file tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-memory-private.h"

G_BEGIN_DECLS

typedef struct _SandboxMemoryWorkspace SandboxMemoryWorkspace;

SandboxMemoryWorkspace *sandbox_memory_workspace_new         (void);
SandboxMemoryWorkspace *sandbox_memory_workspace_ref         (SandboxMemoryWorkspace  *self);
void                    sandbox_memory_workspace_unref       (SandboxMemoryWorkspace  *self);
SandboxMemoryWorkspace *sandbox_memory_workspace_copy        (SandboxMemoryWorkspace  *self);
void                    sandbox_memory_workspace_assign      (SandboxMemoryWorkspace  *self,
                                                              SandboxMemoryWorkspace  *source);
char                   *sandbox_memory_workspace_compute_key (SandboxMemoryWorkspace  *self,
                                                              const char              *parent);
GBytes                 *sandbox_memory_workspace_read        (SandboxMemoryWorkspace  *self,
                                                              const char              *relative,
                                                              GError                 **error);
gboolean                sandbox_memory_workspace_write       (SandboxMemoryWorkspace  *self,
                                                              const char              *relative,
                                                              GBytes                  *contents,
                                                              gboolean                 executable,
                                                              GError                 **error);
gboolean                sandbox_memory_workspace_make_symlink (SandboxMemoryWorkspace *self,
                                                              const char              *relative,
                                                              const char              *target,
                                                              GError                 **error);
gboolean                sandbox_memory_workspace_query_executable (SandboxMemoryWorkspace *self,
                                                              const char              *relative,
                                                              gboolean                *executable,
                                                              GError                 **error);
gboolean                sandbox_memory_workspace_make_directory (SandboxMemoryWorkspace *self,
                                                              const char              *relative,
                                                              GError                 **error);
gboolean                sandbox_memory_workspace_remove      (SandboxMemoryWorkspace  *self,
                                                              const char              *relative,
                                                              GError                 **error);
void                    sandbox_memory_workspace_measure     (SandboxMemoryWorkspace  *self,
                                                              guint64                 *n_files,
                                                              guint64                 *n_bytes);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxMemoryWorkspace, sandbox_memory_workspace_unref)

G_END_DECLS
