/* sandbox-bubblewrap-ports-private.h — ports of a session's loopback, reachable from the host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "sandbox-bubblewrap-session-net-private.h"

G_BEGIN_DECLS

/**
 * SandboxBubblewrapPortsNetFunc:
 * @owner: the object given to sandbox_bubblewrap_ports_new()
 *
 * Returns: (transfer full) (nullable): the session's network now, or
 *   %NULL when it has none (stopped, or no command ran yet)
 */
typedef SandboxBubblewrapSessionNet *(*SandboxBubblewrapPortsNetFunc) (GObject *owner);

/**
 * SandboxBubblewrapPorts:
 *
 * The ports of a session's loopback exposed to the host as Unix sockets
 * (see sandbox-bubblewrap-ports.c).
 */
typedef struct _SandboxBubblewrapPorts SandboxBubblewrapPorts;

SandboxBubblewrapPorts *sandbox_bubblewrap_ports_new    (SandboxBubblewrapPortsNetFunc  dup_net,
                                                         GObject                       *owner);
char                   *sandbox_bubblewrap_ports_expose (SandboxBubblewrapPorts        *self,
                                                         guint16                        port,
                                                         GError                       **error);
void                    sandbox_bubblewrap_ports_close  (SandboxBubblewrapPorts        *self);
void                    sandbox_bubblewrap_ports_free   (SandboxBubblewrapPorts        *self);

G_END_DECLS
