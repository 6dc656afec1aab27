/* sandbox-bubblewrap-session-net-private.h — the network namespace a session's commands share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "sandbox-bubblewrap-keeper-private.h"

G_BEGIN_DECLS

/**
 * SandboxBubblewrapSessionNet:
 *
 * One network namespace for the commands of a session under one network
 * policy, held by a process of its own (stub/sandbox-stub-net.c), with
 * what joins it to the outside: the gateway's proxy listener under an
 * allow-list, slirp4netns under allow-all. Reference-counted: a command
 * holds it while it runs.
 */
typedef struct _SandboxBubblewrapSessionNet SandboxBubblewrapSessionNet;

SandboxBubblewrapSessionNet *sandbox_bubblewrap_session_net_start (SandboxNetworkPolicyKind   kind,
                                                                   gboolean                   host_loopback,
                                                                   SandboxBubblewrapKeeper   *keeper,
                                                                   SandboxGateway            *gateway,
                                                                   GError                   **error);
SandboxBubblewrapSessionNet *sandbox_bubblewrap_session_net_ref   (SandboxBubblewrapSessionNet *self);
void     sandbox_bubblewrap_session_net_unref      (SandboxBubblewrapSessionNet *self);
void     sandbox_bubblewrap_session_net_close      (SandboxBubblewrapSessionNet *self);
pid_t    sandbox_bubblewrap_session_net_get_pid    (SandboxBubblewrapSessionNet *self);
gboolean sandbox_bubblewrap_session_net_owns_user  (SandboxBubblewrapSessionNet *self);
GSocket *sandbox_bubblewrap_session_net_new_socket (SandboxBubblewrapSessionNet  *self,
                                                    GError                      **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxBubblewrapSessionNet, sandbox_bubblewrap_session_net_unref)

/**
 * SandboxBubblewrapNetSlot:
 *
 * Where a session keeps the network its commands share: none until its
 * first command, then one per network policy revision, until stop.
 */
typedef struct
{
  /*< private >*/
  GMutex lock;
  SandboxBubblewrapSessionNet *net;
  guint64 revision;
  gboolean closed;
} SandboxBubblewrapNetSlot;

void     sandbox_bubblewrap_net_slot_init  (SandboxBubblewrapNetSlot *slot);
void     sandbox_bubblewrap_net_slot_clear (SandboxBubblewrapNetSlot *slot);
SandboxBubblewrapSessionNet *sandbox_bubblewrap_net_slot_dup (SandboxBubblewrapNetSlot *slot,
                                                              guint64                   revision);
SandboxBubblewrapSessionNet *sandbox_bubblewrap_net_slot_dup_current (SandboxBubblewrapNetSlot *slot);
SandboxBubblewrapSessionNet *sandbox_bubblewrap_net_slot_dup_or_start (SandboxBubblewrapNetSlot  *slot,
                                                                       guint64                    revision,
                                                                       SandboxNetworkPolicyKind   kind,
                                                                       gboolean                   host_loopback,
                                                                       SandboxBubblewrapKeeper   *keeper,
                                                                       SandboxGateway            *gateway,
                                                                       GError                   **error);
void     sandbox_bubblewrap_net_slot_drop  (SandboxBubblewrapNetSlot *slot);
void     sandbox_bubblewrap_net_slot_close (SandboxBubblewrapNetSlot *slot);

G_END_DECLS
