/* sandbox-lease-owner.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_LEASE_OWNER (sandbox_lease_owner_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxLeaseOwner, sandbox_lease_owner, SANDBOX, LEASE_OWNER, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxLeaseOwner *sandbox_lease_owner_new      (int                 pid,
                                                 const char         *host,
                                                 gboolean            alive);
SANDBOX_AVAILABLE_IN_ALL
int                sandbox_lease_owner_get_pid  (SandboxLeaseOwner  *self);
SANDBOX_AVAILABLE_IN_ALL
const char        *sandbox_lease_owner_get_host (SandboxLeaseOwner  *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean           sandbox_lease_owner_is_alive (SandboxLeaseOwner  *self);

G_END_DECLS
