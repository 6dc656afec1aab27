/* sandbox-backend-private.h — between the parts of SandboxBackend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-backend.h"
#include "sandbox-backend-base.h"

G_BEGIN_DECLS

/* sandbox-backend-unsupported.c: the defaults of the store's own view. */
void sandbox_backend_install_store_defaults (SandboxBackendInterface *iface);


/* sandbox-backend-unsupported.c: the defaults of moving sessions and
 * templates in and out (sandbox-backend-transfer.c). */
void sandbox_backend_install_transfer_defaults (SandboxBackendInterface *iface);

/* sandbox-backend-unsupported.c: the name of the driver @type belongs to (a
 * backend type or another type its module registered), for messages and
 * logs; the type's own name when no driver registered it. */
const char *sandbox_driver_name_of_type (GType type);

/* sandbox-backend-unsupported.c: G_IO_ERROR_NOT_SUPPORTED for an optional
 * operation @type's driver lacks, naming the driver; for the backend's
 * defaults and SandboxHandle's. */
gboolean sandbox_set_error_not_supported (GType        type,
                                          const char  *what,
                                          gboolean     plural,
                                          GError     **error);

/* sandbox-backend-construct.c: the settable property @name names for @type's
 * backends, its own or (`DRIVER.NAME`) that of the driver @type wraps;
 * @owner_type: whose it is. NULL if there is none. */
GParamSpec *sandbox_backend_find_settable_property (GType       type,
                                                    const char *name,
                                                    GType      *owner_type);

/* sandbox-backend-store.c: INVALID with the reference's text unless @id is
 * a well-formed session id or template key (@what says which). */
gboolean sandbox_backend_check_id (const char  *id,
                                   const char  *what,
                                   GError     **error);

/* sandbox-backend.c: SandboxBackend::recover_session of a backend that
 * cannot recover sessions (%SANDBOX_ERROR_UNAVAILABLE). */
SandboxHandle *sandbox_backend_real_recover_session (SandboxBackend        *self,
                                                     SandboxState          *state,
                                                     SandboxNetworkPolicy  *policy,
                                                     GCancellable          *cancellable,
                                                     GError               **error);

/* sandbox-backend-base.c: whether g_initable_init() of @self succeeded. */
gboolean sandbox_backend_base_is_initialized (SandboxBackendBase *self);

G_END_DECLS
