/* sandbox-bubblewrap-layering-private.h — layered workspaces: probe and mount
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "stub/sandbox-stub-keeper.h"

G_BEGIN_DECLS

/* The values of SandboxBubblewrapBackend:layering and :workspace-layering. */
#define SANDBOX_BUBBLEWRAP_LAYERING_AUTO    "auto"
#define SANDBOX_BUBBLEWRAP_LAYERING_COPY    "copy"
#define SANDBOX_BUBBLEWRAP_LAYERING_OVERLAY "overlay"

#define SANDBOX_BUBBLEWRAP_DEFAULT_LAYERING SANDBOX_BUBBLEWRAP_LAYERING_AUTO

gboolean sandbox_bubblewrap_layering_probe       (const char                   *directory,
                                                  const SandboxBubblewrapGuest *guest,
                                                  GError                      **error);

char    *sandbox_bubblewrap_layering_new_work_name (void);
gboolean sandbox_bubblewrap_layering_make_work   (const char                   *layers,
                                                  const char                   *name,
                                                  const SandboxBubblewrapGuest *guest,
                                                  GError                      **error);
void     sandbox_bubblewrap_layering_remove_work (const char                   *layers,
                                                  const char                   *name);
guint    sandbox_bubblewrap_layering_remove_all_work (const char               *layers);

G_END_DECLS
