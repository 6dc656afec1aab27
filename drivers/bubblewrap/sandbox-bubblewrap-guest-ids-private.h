/* sandbox-bubblewrap-guest-ids-private.h — a host uid and gid per session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"

G_BEGIN_DECLS

/**
 * SANDBOX_BUBBLEWRAP_GUEST_ID_RANGE_DEFAULT:
 *
 * The ids a root host gives its sessions' guests unless
 * SandboxBubblewrapBackend:guest-id-range names others: 65,536 from
 * 0x70000000, a block systemd leaves unused (between the ranges it gives
 * containers and the ones it warns about) and `useradd` never reaches.
 */
#define SANDBOX_BUBBLEWRAP_GUEST_ID_RANGE_DEFAULT "1879048192:65536"

/**
 * SandboxBubblewrapGuestRange:
 * @uid_start: the first uid
 * @gid_start: the first gid
 * @count: how many of each; a session's uid and gid are the same distance
 *   from their starts
 *
 * The subordinate ids sessions' guests are given, one uid and gid each.
 */
typedef struct
{
  uid_t uid_start;
  gid_t gid_start;
  guint32 count;
} SandboxBubblewrapGuestRange;

gboolean sandbox_bubblewrap_guest_range_parse  (const char                        *text,
                                                const char                        *subuid_path,
                                                const char                        *subgid_path,
                                                SandboxBubblewrapGuestRange       *range,
                                                GError                           **error);
gboolean sandbox_bubblewrap_guest_range_holds  (const SandboxBubblewrapGuestRange *range,
                                                const SandboxBubblewrapGuest      *guest);

gboolean sandbox_bubblewrap_guest_ids_claim    (int                                root_fd,
                                                const SandboxBubblewrapGuestRange *range,
                                                const char                        *session,
                                                SandboxBubblewrapGuest            *guest,
                                                GError                           **error);
gboolean sandbox_bubblewrap_guest_ids_is_held  (int                                root_fd,
                                                const SandboxBubblewrapGuest      *guest,
                                                const char                        *session);
void     sandbox_bubblewrap_guest_ids_release  (int                                root_fd,
                                                const SandboxBubblewrapGuest      *guest,
                                                const char                        *session);

G_END_DECLS
