/* sandbox-bubblewrap-network-private.h — an allow-all guest's own network
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sys/types.h>

#include <glib.h>

G_BEGIN_DECLS

/* What an allow-all guest's /etc/resolv.conf names: slirp4netns's DNS
 * forwarder, which asks the host's resolvers. */
#define SANDBOX_BUBBLEWRAP_NETWORK_RESOLV_CONF "nameserver 10.0.2.3\noptions edns0\n"

/**
 * SandboxBubblewrapNetwork:
 *
 * The user-mode network of one allow-all sandbox: slirp4netns attached to
 * the sandbox's network namespace while bwrap waits on its --block-fd
 * (see sandbox-bubblewrap-network.c).
 */
typedef struct _SandboxBubblewrapNetwork SandboxBubblewrapNetwork;

gboolean                  sandbox_bubblewrap_network_check (GError                  **error);
SandboxBubblewrapNetwork *sandbox_bubblewrap_network_new   (gboolean                  host_loopback,
                                                            int                      *info_fd,
                                                            int                      *block_fd,
                                                            GError                  **error);
void                      sandbox_bubblewrap_network_attach (SandboxBubblewrapNetwork *self,
                                                             pid_t                     bwrap_pid,
                                                             int                       bwrap_pidfd);
SandboxBubblewrapNetwork *sandbox_bubblewrap_network_start_in (gboolean                  host_loopback,
                                                               int                       netns_fd,
                                                               GError                  **error);
void                      sandbox_bubblewrap_network_free  (SandboxBubblewrapNetwork *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxBubblewrapNetwork, sandbox_bubblewrap_network_free)

G_END_DECLS
