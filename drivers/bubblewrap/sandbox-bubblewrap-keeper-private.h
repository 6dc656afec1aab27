/* sandbox-bubblewrap-keeper-private.h — a layered session's one overlay mount
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"

G_BEGIN_DECLS

/**
 * SandboxBubblewrapKeeper:
 *
 * The process that holds a live layered session's overlay, mounted once
 * in namespaces of its own (stub/sandbox-stub-keeper.c). Commands are
 * started in its namespaces, and the host's file calls go through the
 * same mount.
 */
typedef struct _SandboxBubblewrapKeeper SandboxBubblewrapKeeper;

SandboxBubblewrapKeeper *sandbox_bubblewrap_keeper_start (const char * const           *lowers,
                                                          const char * const           *runtime_lowers,
                                                          const char                   *layers,
                                                          const SandboxBubblewrapGuest *guest,
                                                          GError                      **error);
pid_t       sandbox_bubblewrap_keeper_get_pid     (SandboxBubblewrapKeeper *self);
gboolean    sandbox_bubblewrap_keeper_has_exited  (SandboxBubblewrapKeeper *self);
SandboxBubblewrapKeeper *sandbox_bubblewrap_keeper_start_again (SandboxBubblewrapKeeper       *self,
                                                                const SandboxBubblewrapGuest  *guest,
                                                                GError                       **error);
SandboxWorkspace *sandbox_bubblewrap_keeper_open_workspace (SandboxBubblewrapKeeper  *self,
                                                            SandboxWorkspaceFlags     flags,
                                                            GError                  **error);
const char *sandbox_bubblewrap_keeper_get_mount   (SandboxBubblewrapKeeper *self);
const char *sandbox_bubblewrap_keeper_get_runtime_mount (SandboxBubblewrapKeeper *self);
const char * const *sandbox_bubblewrap_keeper_get_runtime_lowers (SandboxBubblewrapKeeper *self);
const char *sandbox_bubblewrap_keeper_get_lock    (SandboxBubblewrapKeeper *self);
void        sandbox_bubblewrap_keeper_stop        (SandboxBubblewrapKeeper *self);
void        sandbox_bubblewrap_keeper_free        (SandboxBubblewrapKeeper *self);

gboolean    sandbox_bubblewrap_keeper_prepare_layers (const char                   *layers,
                                                      gboolean                      runtime,
                                                      const SandboxBubblewrapGuest *guest,
                                                      GError                      **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxBubblewrapKeeper, sandbox_bubblewrap_keeper_free)

G_END_DECLS
