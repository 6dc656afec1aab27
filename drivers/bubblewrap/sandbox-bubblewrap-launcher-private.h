/* sandbox-bubblewrap-launcher-private.h — the long-lived thread bwrap is spawned from
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "sandbox-bubblewrap-guest-private.h"

G_BEGIN_DECLS

/**
 * SandboxBubblewrapSpawnExtras:
 * @limits: (nullable): rlimits to set in bwrap's process before exec
 * @cgroup_procs_fds: (nullable) (element-type int): `cgroup.procs` files
 *   bwrap's process joins before exec
 * @guest_view: (nullable): how bwrap's process becomes the guest before
 *   exec, when the guest is not the host
 *
 * What the launcher does in bwrap's process before exec, on request.
 */
typedef struct
{
  const SandboxBubblewrapLimits *limits;
  GArray *cgroup_procs_fds;
  const SandboxBubblewrapGuestView *guest_view;
} SandboxBubblewrapSpawnExtras;

GMainContext *sandbox_bubblewrap_launcher_get_context (void);
gboolean      sandbox_bubblewrap_launcher_is_current  (void);
void          sandbox_bubblewrap_launcher_run_sync    (GSourceFunc   func,
                                                       gpointer      data);
GPid          sandbox_bubblewrap_launcher_spawn       (const char * const *argv,
                                                       int            stdin_fd,
                                                       int            stdout_fd,
                                                       int            stderr_fd,
                                                       GArray        *passed_fds,
                                                       const SandboxBubblewrapSpawnExtras *extras,
                                                       GError       **error);

G_END_DECLS
