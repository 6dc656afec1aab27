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
 * @check_policy: refuses a network policy the driver cannot enforce, before
 *   anything is looked up (%SANDBOX_ERROR_UNAVAILABLE). Optional: without it
 *   every policy is accepted.
 * @check_template: that a template is stored under a (well-formed) key:
 *   %SANDBOX_ERROR_NOT_FOUND ([func@Sandbox.set_error_unknown_template]) or
 *   whatever else makes it unusable.
 * @has_session: whether a session is stored under a (well-formed) id.
 * @take_lease: takes a stored session's exclusive lease: fails with
 *   %SANDBOX_ERROR_BUSY ([func@Sandbox.set_error_has_owner]) while someone
 *   holds it, %SANDBOX_ERROR_NOT_FOUND if the session went meanwhile.
 * @release_lease: releases a lease @take_lease or @new_session took, if
 *   it is still held (a @remove_session that failed may have ended it).
 * @load_state: the saved [class@Sandbox.State] of a session whose lease the
 *   caller holds (%SANDBOX_ERROR_NOT_FOUND without one).
 * @new_session: stores a new session named by a state (its id fresh, its
 *   template stored) with its workspace a copy of the template's files,
 *   and holds its lease; on failure leaves nothing behind.
 * @new_handle: opens the leased session's workspace and gives the handle
 *   that owns it, enforcing the policy; on failure the base releases the
 *   lease.
 * @remove_session: removes a session whose lease the caller holds, with
 *   its workspace (templates stay).
 * @take_over_lease: takes a stored session's lease like @take_lease, and
 *   also one whose owner died without releasing it, once nothing of that
 *   owner's sandboxes is left (%SANDBOX_ERROR_BUSY while the owner lives).
 *   Optional: without it [method@Sandbox.Backend.recover_session] fails
 *   with %SANDBOX_ERROR_UNAVAILABLE.
 *
 * The class a driver's backend derives from. The hooks from @check_policy
 * on are the steps of the session protocol the base runs in
 * `sandbox_backend_base_implement_sessions()` and
 * [method@Sandbox.BackendBase.delete_session]; a driver that uses those
 * implements all of them but @check_policy and @take_over_lease. A lease
 * that is more than a flag (a lock, a fencing epoch) waits between the
 * hook that takes it and the one that uses it in
 * `sandbox_backend_base_hold_lease()`.
 *
 * The hooks that may block on the driver's store (@check_template,
 * @take_lease, @take_over_lease, @load_state, @new_session, @new_handle,
 * @remove_session) get the caller's cancellable and fail with
 * %G_IO_ERROR_CANCELLED once it is cancelled, wherever they would wait;
 * the protocol then releases a lease taken before. @check_policy and @has_session only
 * look, and @release_lease must finish even for a cancelled caller: they
 * get none.
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

  /*< public >*/
  gboolean       (*check_policy)   (SandboxBackendBase    *self,
                                    SandboxNetworkPolicy  *policy,
                                    GError               **error);
  gboolean       (*check_template) (SandboxBackendBase    *self,
                                    const char            *template_key,
                                    GCancellable          *cancellable,
                                    GError               **error);
  gboolean       (*has_session)    (SandboxBackendBase    *self,
                                    const char            *session_id);
  gboolean       (*take_lease)     (SandboxBackendBase    *self,
                                    const char            *session_id,
                                    GCancellable          *cancellable,
                                    GError               **error);
  void           (*release_lease)  (SandboxBackendBase    *self,
                                    const char            *session_id);
  SandboxState  *(*load_state)     (SandboxBackendBase    *self,
                                    const char            *session_id,
                                    GCancellable          *cancellable,
                                    GError               **error);
  gboolean       (*new_session)    (SandboxBackendBase    *self,
                                    SandboxState          *state,
                                    GCancellable          *cancellable,
                                    GError               **error);
  SandboxHandle *(*new_handle)     (SandboxBackendBase    *self,
                                    SandboxState          *state,
                                    SandboxNetworkPolicy  *policy,
                                    GCancellable          *cancellable,
                                    GError               **error);
  gboolean       (*remove_session) (SandboxBackendBase    *self,
                                    const char            *session_id,
                                    GCancellable          *cancellable,
                                    GError               **error);
  gboolean       (*take_over_lease) (SandboxBackendBase   *self,
                                     const char           *session_id,
                                     GCancellable         *cancellable,
                                     GError              **error);

  /*< private >*/
  /* The hooks came after the padding, not into it (the private fields
   * above sit between): the class grew by nine pointers, then took one of
   * its seven slots for take_over_lease. */
  gpointer _padding[6];
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
guint        sandbox_backend_base_get_max_background_timeout_ms (SandboxBackendBase *self);
SANDBOX_AVAILABLE_IN_ALL
guint        sandbox_backend_base_get_background_idle_timeout_ms (SandboxBackendBase *self);
SANDBOX_AVAILABLE_IN_ALL
guint        sandbox_backend_base_get_max_file_bytes       (SandboxBackendBase      *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxBackend *sandbox_backend_base_new_inner             (SandboxBackendBase      *self,
                                                            guint                    n_properties,
                                                            const char             **names,
                                                            const GValue            *values,
                                                            GCancellable            *cancellable,
                                                            GError                 **error);

SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_backend_base_check_ready              (SandboxBackendBase      *self,
                                                            GCancellable            *cancellable,
                                                            GError                 **error);
SANDBOX_AVAILABLE_IN_ALL
void         sandbox_backend_base_implement_sessions       (SandboxBackendInterface *iface);
SANDBOX_AVAILABLE_IN_ALL
void         sandbox_backend_base_hold_lease               (SandboxBackendBase      *self,
                                                            const char              *session_id,
                                                            gpointer                 lease,
                                                            GDestroyNotify           destroy);
SANDBOX_AVAILABLE_IN_ALL
gpointer     sandbox_backend_base_steal_lease              (SandboxBackendBase      *self,
                                                            const char              *session_id);
SANDBOX_AVAILABLE_IN_ALL
gboolean     sandbox_backend_base_delete_session           (SandboxBackendBase      *self,
                                                            const char              *session_id,
                                                            GCancellable            *cancellable,
                                                            GError                 **error);

/**
 * SANDBOX_DEFINE_DRIVER_MODULE:
 * @name: the driver's name, as applications give it to
 *   [func@Sandbox.Backend.new]
 * @backend_type: the #GType of the module's backend class, an expression
 *   evaluated once @register_types has run
 * @register_types: a function `void (GTypeModule *module)` that registers
 *   the module's dynamic types
 *
 * Defines the three GIO module entry points a driver module exports.
 * `g_io_module_load()` keeps the module resident (its types cannot be
 * unregistered while objects of them or threads running its code may
 * live), calls @register_types and implements
 * %SANDBOX_BACKEND_EXTENSION_POINT_NAME as @name; `g_io_module_unload()`
 * does nothing; `g_io_module_query()` names the extension point. Use it
 * once, at file scope, in one file of the module, and export only these
 * three symbols (hidden visibility, or a linker version script).
 */
#define SANDBOX_DEFINE_DRIVER_MODULE(name, backend_type, register_types) \
  G_MODULE_EXPORT void   g_io_module_load   (GIOModule *module); \
  G_MODULE_EXPORT void   g_io_module_unload (GIOModule *module); \
  G_MODULE_EXPORT char **g_io_module_query  (void); \
  G_MODULE_EXPORT void \
  g_io_module_load (GIOModule *module) \
  { \
    g_type_module_use (G_TYPE_MODULE (module)); \
    register_types (G_TYPE_MODULE (module)); \
    g_io_extension_point_implement (SANDBOX_BACKEND_EXTENSION_POINT_NAME, (backend_type), \
                                    (name), 0); \
  } \
  G_MODULE_EXPORT void \
  g_io_module_unload (GIOModule *module) \
  { \
    (void) module; \
  } \
  G_MODULE_EXPORT char ** \
  g_io_module_query (void) \
  { \
    char *extension_points[] = { (char *) SANDBOX_BACKEND_EXTENSION_POINT_NAME, NULL }; \
    \
    return g_strdupv (extension_points); \
  }

G_END_DECLS
