/* sandbox-bubblewrap-guest-private.h — starting bwrap as the guest ids
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"

G_BEGIN_DECLS

/**
 * SandboxBubblewrapGuestView:
 *
 * What bwrap's process does before exec when it is to run as guest ids
 * that are not the host's: the paths bwrap must reach made reachable for
 * those ids in a mount namespace of its own, then the switch of ids.
 * Prepared in the host, which takes copies of those paths' mounts in its
 * own namespace then; only read in the child.
 */
typedef struct _SandboxBubblewrapGuestView SandboxBubblewrapGuestView;

SandboxBubblewrapGuestView *sandbox_bubblewrap_guest_view_new   (const SandboxBubblewrapGuest *guest,
                                                                 const char                   *workspace,
                                                                 const char                   *gateway_socket);
void                        sandbox_bubblewrap_guest_view_expose_lower (SandboxBubblewrapGuestView *view,
                                                                        const char                 *path);
void                        sandbox_bubblewrap_guest_view_expose_runtime (SandboxBubblewrapGuestView *view,
                                                                          const char                 *path);
void                        sandbox_bubblewrap_guest_view_free  (SandboxBubblewrapGuestView   *view);

/* In the child between fork and exec: async-signal-safe, FALSE with errno
 * set on failure. */
gboolean                    sandbox_bubblewrap_guest_view_enter (const SandboxBubblewrapGuestView *view,
                                                                 gboolean                          in_keeper);
gboolean                    sandbox_bubblewrap_guest_switch_ids (const SandboxBubblewrapGuestView *view);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxBubblewrapGuestView, sandbox_bubblewrap_guest_view_free)

G_END_DECLS
