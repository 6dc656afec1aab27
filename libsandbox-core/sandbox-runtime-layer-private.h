/* sandbox-runtime-layer-private.h — OCI image layers applied to a tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <archive.h>

#include "sandbox-runtime-unpack-private.h"

G_BEGIN_DECLS

/* The tree the layers of one image are applied to, bottom layer first
 * (sandbox-runtime-layer.c); sandbox-runtime-oci.c opens each layer's
 * archive, verifying its blob as libarchive reads it. */
typedef struct _SandboxRuntimeLayers SandboxRuntimeLayers;

SandboxRuntimeLayers *sandbox_runtime_layers_new    (int                    target_fd,
                                                     SandboxRuntimeBudget  *budget);
gboolean              sandbox_runtime_layers_apply  (SandboxRuntimeLayers  *self,
                                                     struct archive        *archive,
                                                     const char            *layer,
                                                     GError               **error);
gboolean              sandbox_runtime_layers_finish (SandboxRuntimeLayers  *self,
                                                     GError               **error);
void                  sandbox_runtime_layers_free   (SandboxRuntimeLayers  *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxRuntimeLayers, sandbox_runtime_layers_free)

G_END_DECLS
