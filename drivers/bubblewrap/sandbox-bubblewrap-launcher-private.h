/* sandbox-bubblewrap-launcher-private.h — the long-lived thread bwrap is spawned from
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "sandbox-bubblewrap-guest-private.h"
#include "sandbox-bubblewrap-network-private.h"

G_BEGIN_DECLS

/**
 * SandboxBubblewrapSpawnExtras:
 * @limits: (nullable): rlimits to set in bwrap's process before exec
 * @cgroup_procs_fds: (nullable) (element-type int): `cgroup.procs` files
 *   bwrap's process joins before exec
 * @guest_view: (nullable): how bwrap's process becomes the guest before
 *   exec, when the guest is not the host
 * @enter_pid: a layered session's keeper (a child of this process, not
 *   reaped), whose user and mount namespaces bwrap is started in (see
 *   sandbox-bubblewrap-keeper.c), or 0
 * @network: (nullable): where an allow-all sandbox's network is, to attach
 *   to bwrap's sandbox once bwrap runs: the launcher takes it then (and
 *   sets *@network to %NULL)
 * @net_pid: a session's network keeper (a child of this process, not
 *   reaped), whose network namespace bwrap is started in (see
 *   sandbox-bubblewrap-session-net.c), or 0
 * @net_owns_user: whether bwrap's process also starts in that keeper's
 *   user namespace, which owns its network namespace (a host that is not
 *   root, without a layered session's keeper)
 *
 * What the launcher does in bwrap's process before exec, and just after,
 * on request.
 */
typedef struct
{
  const SandboxBubblewrapLimits *limits;
  GArray *cgroup_procs_fds;
  const SandboxBubblewrapGuestView *guest_view;
  pid_t enter_pid;
  SandboxBubblewrapNetwork **network;
  pid_t net_pid;
  gboolean net_owns_user;
} SandboxBubblewrapSpawnExtras;

#define SANDBOX_BUBBLEWRAP_SPAWN_EXTRAS_INIT { NULL, NULL, NULL, 0, NULL, 0, FALSE }

/**
 * SandboxBubblewrapLaunched:
 * @pid: bwrap's pid, 0 when nothing runs
 * @pidfd: a pidfd on it
 * @stdin_fd: the write end of the command's stdin pipe (non-blocking)
 * @stdout_fd: the read end of its stdout pipe (non-blocking)
 * @stderr_fd: the read end of its stderr pipe (non-blocking)
 *
 * A bwrap the launcher started, with the pipes that are its 0, 1 and 2,
 * not reaped yet. Its owner watches @pidfd and reaps @pid.
 */
typedef struct
{
  GPid pid;
  int pidfd;
  int stdin_fd;
  int stdout_fd;
  int stderr_fd;
} SandboxBubblewrapLaunched;

#define SANDBOX_BUBBLEWRAP_LAUNCHED_INIT { 0, -1, -1, -1, -1 }

/**
 * sandbox_bubblewrap_source_destroy:
 * @source: a pointer to a source on the launcher's context, or to %NULL
 *
 * Destroys and unrefs *@source, if any, and sets it to %NULL.
 */
static inline void
sandbox_bubblewrap_source_destroy (GSource **source)
{
  if (*source != NULL)
    {
      g_source_destroy (*source);
      g_clear_pointer (source, g_source_unref);
    }
}

GMainContext *sandbox_bubblewrap_launcher_get_context (void);
gboolean      sandbox_bubblewrap_launcher_is_current  (void);
void          sandbox_bubblewrap_launcher_run_sync    (GSourceFunc   func,
                                                       gpointer      data);
GPid          sandbox_bubblewrap_launcher_spawn_stub  (const char * const                 *options,
                                                        int                                 socket_fd,
                                                        const SandboxBubblewrapSpawnExtras *extras,
                                                        GError                            **error);
GPid          sandbox_bubblewrap_launcher_spawn       (const char * const *argv,
                                                       int            stdin_fd,
                                                       int            stdout_fd,
                                                       int            stderr_fd,
                                                       GArray        *passed_fds,
                                                       const SandboxBubblewrapSpawnExtras *extras,
                                                       GError       **error);
gboolean      sandbox_bubblewrap_launcher_start       (const char * const *argv,
                                                       GArray        *passed_fds,
                                                       const SandboxBubblewrapSpawnExtras *extras,
                                                       SandboxBubblewrapLaunched *launched,
                                                       GError       **error);
gboolean      sandbox_bubblewrap_launcher_open_pipe   (int            fds[2],
                                                       gboolean       nonblocking_read,
                                                       gboolean       nonblocking_write,
                                                       GError       **error);
void          sandbox_bubblewrap_launched_kill_and_reap (SandboxBubblewrapLaunched *launched);
void          sandbox_bubblewrap_launched_close_pipes (SandboxBubblewrapLaunched *launched);

G_END_DECLS
