/* sandbox-backend-base.h — what every backend has, for drivers to derive from
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_DRIVER_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox-backend-driver.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-backend.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_BACKEND_BASE (sandbox_backend_base_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (SandboxBackendBase, sandbox_backend_base, SANDBOX, BACKEND_BASE, GObject)

/**
 * SandboxBackendBaseClass:
 * @parent_class: the parent class
 * @init_backend: checks the driver's own properties and opens what the
 *   backend needs (its store); called by g_initable_init() once the
 *   properties every backend has are checked. Fails with
 *   %SANDBOX_ERROR_INVALID for a bad configuration, or
 *   %SANDBOX_ERROR_UNAVAILABLE where the driver cannot work on this system.
 *   Optional.
 *
 * The class a driver's backend derives from.
 */
struct _SandboxBackendBaseClass
{
  GObjectClass parent_class;

  gboolean (*init_backend) (SandboxBackendBase  *self,
                            GCancellable        *cancellable,
                            GError             **error);

  /*< private >*/
  const char *default_name;
  const char *inner_driver;
  gpointer _padding[7];
};

SANDBOX_AVAILABLE_IN_ALL
void         sandbox_backend_base_class_set_default_name   (SandboxBackendBaseClass *klass,
                                                            const char              *name);

SANDBOX_AVAILABLE_IN_ALL
void         sandbox_backend_base_class_set_inner_driver   (SandboxBackendBaseClass *klass,
                                                            const char              *driver);

SANDBOX_AVAILABLE_IN_ALL
const char  *sandbox_backend_base_get_name                 (SandboxBackendBase      *self);
SANDBOX_AVAILABLE_IN_ALL
const char  *sandbox_backend_base_get_state_directory      (SandboxBackendBase      *self);
SANDBOX_AVAILABLE_IN_ALL
void         sandbox_backend_base_set_state_directory      (SandboxBackendBase      *self,
                                                            const char              *directory);
SANDBOX_AVAILABLE_IN_ALL
guint        sandbox_backend_base_get_max_concurrent_commands (SandboxBackendBase   *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxBackend *sandbox_backend_base_new_inner             (SandboxBackendBase      *self,
                                                            guint                    n_properties,
                                                            const char             **names,
                                                            const GValue            *values,
                                                            GCancellable            *cancellable,
                                                            GError                 **error);

G_END_DECLS
