/* sandbox-bubblewrap-args-private.h — the bwrap command-line builder
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "sandbox-bubblewrap-keeper-private.h"
#include "sandbox-bubblewrap-guest-private.h"
#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-network-private.h"
#include "sandbox-bubblewrap-session-net-private.h"

G_BEGIN_DECLS

/**
 * SandboxBubblewrapArgs:
 * @argv: the argument vector, %NULL-terminated once finished
 * @fds: descriptors handed to bwrap, as child fds 3, 4, …, closed on free
 * @guest_view: (nullable): how bwrap's process becomes the guest before
 *   exec, when the guest is not the host (see sandbox-bubblewrap-guest.c)
 * @enter_pid: the keeper whose namespaces bwrap starts in, or 0 (the
 *   session's keeper outlives its commands, and it is the host's child,
 *   reaped only after them: the pid cannot name another process)
 * @network: (nullable): an allow-all sandbox's network, to attach once
 *   bwrap runs (the launcher takes it); never with @session_net
 * @session_net: (nullable): the session's network namespace, which bwrap
 *   starts in, held while @self lives
 *
 * A bwrap command line under construction, in the manner of flatpak's
 * FlatpakBwrap.
 */
typedef struct
{
  GPtrArray *argv;
  GArray *fds;
  SandboxBubblewrapGuestView *guest_view;
  pid_t enter_pid;
  SandboxBubblewrapNetwork *network;
  SandboxBubblewrapSessionNet *session_net;
} SandboxBubblewrapArgs;

/**
 * SandboxBubblewrapArgsInput:
 * @executable: the bwrap executable
 * @session_id: (nullable): the session's id, for the command line's log
 *   line
 * @workspace: the host path of the workspace (of a layered session, its
 *   upper layer, which only the keeper uses)
 * @keeper: (nullable): of a layered session, its keeper (see
 *   sandbox-bubblewrap-keeper.c): /workspace is then its overlay
 * @session_net: (nullable): the network namespace the session's commands
 *   share under its current policy (see sandbox-bubblewrap-session-net.c);
 *   %NULL: one of the sandbox's own
 * @gateway_socket: (nullable): the host path of the gateway socket, if any
 * @gateway: (nullable): the session's gateway, if any, which serves the
 *   proxy listener of each of its allow-list sandboxes
 * @policy_kind: the session's network policy kind
 * @command: (nullable): the validated command, with a canonical cwd; %NULL
 *   for a sandbox started before its command is known
 * @seccomp_program: (nullable): the seccomp filter to load, or %NULL
 * @limits: (nullable): the command's resource limits, or %NULL for none
 * @cgroup_root: (nullable): where the cgroup part of @limits is enforced
 * @guest: (nullable): who guests are on the host; %NULL: the host itself
 * @etc: (nullable): the guest's /etc; %NULL: none, as the reference
 * @host_loopback: whether an allow-all guest reaches the host's loopback
 * @gateway_ca: (nullable): with @gateway_socket, the PEM certificate of the
 *   CA the gateway ends tunnels' TLS with: the only one the guest trusts
 * @runtime: (nullable): the host path of the session's runtime tree: the
 *   guest's /usr, /bin, /lib*, /sbin and /etc; %NULL: the host's
 *
 * What a command line is built from.
 */
typedef struct
{
  const char *executable;
  const char *session_id;
  const char *workspace;
  SandboxBubblewrapKeeper *keeper;
  SandboxBubblewrapSessionNet *session_net;
  const char *gateway_socket;
  SandboxGateway *gateway;
  SandboxNetworkPolicyKind policy_kind;
  SandboxCommand *command;
  GBytes *seccomp_program;
  const SandboxBubblewrapLimits *limits;
  SandboxBubblewrapCgroupRoot *cgroup_root;
  const SandboxBubblewrapGuest *guest;
  const SandboxBubblewrapEtc *etc;
  gboolean host_loopback;
  GBytes *gateway_ca;
  const char *runtime;
} SandboxBubblewrapArgsInput;

SandboxBubblewrapArgs *sandbox_bubblewrap_args_new      (const char             *executable);
void                   sandbox_bubblewrap_args_free     (SandboxBubblewrapArgs  *self);
void                   sandbox_bubblewrap_args_add      (SandboxBubblewrapArgs  *self,
                                                         const char             *arg);
void                   sandbox_bubblewrap_args_add_many (SandboxBubblewrapArgs  *self,
                                                         ...) G_GNUC_NULL_TERMINATED;
int                    sandbox_bubblewrap_args_take_fd  (SandboxBubblewrapArgs  *self,
                                                         int                     fd);
void                   sandbox_bubblewrap_args_finish   (SandboxBubblewrapArgs  *self);
void                   sandbox_bubblewrap_args_set_net_extras (const SandboxBubblewrapArgs  *self,
                                                               SandboxBubblewrapSpawnExtras *extras);
SandboxBubblewrapArgs *sandbox_bubblewrap_args_new_for_sandbox (const SandboxBubblewrapArgsInput  *input,
                                                                int                                status_fd,
                                                                int                                seccomp_fd,
                                                                int                                control_fd,
                                                                int                                report_fd,
                                                                int                                handoff_fd,
                                                                GError                           **error);
SandboxBubblewrapArgs *sandbox_bubblewrap_args_new_for_command (const SandboxBubblewrapArgsInput  *input,
                                                                int                                status_fd,
                                                                int                                seccomp_fd,
                                                                int                                report_fd,
                                                                int                                handoff_fd,
                                                                GBytes                            *message,
                                                                GError                           **error);

int                    sandbox_bubblewrap_sealed_memfd_new (const char       *name,
                                                            const char       *data,
                                                            gsize             size);
void                   sandbox_bubblewrap_etc_add       (SandboxBubblewrapArgs  *self,
                                                         uid_t                   uid,
                                                         gid_t                   gid,
                                                         const SandboxBubblewrapEtc *etc,
                                                         gboolean                resolv_conf);
void                   sandbox_bubblewrap_etc_add_runtime (SandboxBubblewrapArgs  *self,
                                                           uid_t                   uid,
                                                           gid_t                   gid,
                                                           const SandboxBubblewrapEtc *etc,
                                                           gboolean                resolv_conf,
                                                           const char             *runtime);
void                   sandbox_bubblewrap_etc_add_gateway_ca (SandboxBubblewrapArgs *self,
                                                              GBytes                *pem,
                                                              gboolean               curated,
                                                              const char            *runtime);
gboolean               sandbox_bubblewrap_etc_load_ca_bundle (SandboxBubblewrapEtc *etc,
                                                         GError                **error);
void                   sandbox_bubblewrap_etc_copy      (SandboxBubblewrapEtc       *dest,
                                                         const SandboxBubblewrapEtc *src);
void                   sandbox_bubblewrap_etc_clear     (SandboxBubblewrapEtc       *etc);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxBubblewrapArgs, sandbox_bubblewrap_args_free)

G_END_DECLS
