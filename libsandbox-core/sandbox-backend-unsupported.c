/* sandbox-backend-unsupported.c — what a driver does not do
 *
 * The name of the driver a type belongs to (for messages and logs), the
 * G_IO_ERROR_NOT_SUPPORTED that names it for an optional operation a
 * driver lacks (its backend's or its handle's), and the defaults of the
 * backend's store view and of its transfers, which say the backend has
 * none. Below the backend
 * (sandbox-backend.c installs the defaults), its store view, its handles
 * and the log; it calls none of them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend.h"
#include "sandbox-backend-private.h"

/* Whether @extension is the driver @type belongs to: its backend type (or
 * a subclass of it), or a type the same module registered (a handle, which
 * has no extension of its own; the first dynamic type among its ancestors
 * decides). */
static gboolean
extension_owns_type (GIOExtension *extension,
                     GType         type)
{
  GType backend_type = g_io_extension_get_type (extension);
  GTypePlugin *plugin = g_type_get_plugin (backend_type);

  if (g_type_is_a (type, backend_type))
    return TRUE;
  for (GType t = type; plugin != NULL && t != G_TYPE_INVALID; t = g_type_parent (t))
    if (g_type_get_plugin (t) != NULL)
      return g_type_get_plugin (t) == plugin;
  return FALSE;
}

/*
 * sandbox_driver_name_of_type:
 * @type: a backend type, or another type a driver module registered
 *
 * Returns: the name the driver of @type was registered under ("memory"),
 *   which a backend's `name` property need not be; the type's name for a
 *   type no driver registered (an application's own backend)
 */
const char *
sandbox_driver_name_of_type (GType type)
{
  GIOExtensionPoint *point = g_io_extension_point_lookup (SANDBOX_BACKEND_EXTENSION_POINT_NAME);

  for (GList *l = point != NULL ? g_io_extension_point_get_extensions (point) : NULL;
       l != NULL; l = l->next)
    if (extension_owns_type (l->data, type))
      return g_io_extension_get_name (l->data);
  return g_type_name (type);
}

/*
 * sandbox_set_error_not_supported:
 * @type: the type of the backend or handle that lacks the operation
 * @what: the operation, capitalised ("Listing sessions", "Checkpoints")
 * @plural: whether @what is plural ("… are not supported")
 * @error: return location for a #GError
 *
 * Sets %G_IO_ERROR_NOT_SUPPORTED "@what is (are) not supported by the
 * DRIVER driver", naming the driver @type belongs to.
 *
 * Returns: %FALSE
 */
gboolean
sandbox_set_error_not_supported (GType        type,
                                 const char  *what,
                                 gboolean     plural,
                                 GError     **error)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
               "%s %s not supported by the %s driver", what, plural ? "are" : "is",
               sandbox_driver_name_of_type (type));
  return FALSE;
}

static gboolean
set_not_supported (SandboxBackend  *self,
                   const char      *what,
                   GError         **error)
{
  return sandbox_set_error_not_supported (G_OBJECT_TYPE (self), what, FALSE, error);
}

static GPtrArray *
sandbox_backend_real_list_sessions (SandboxBackend  *self,
                                    GCancellable    *cancellable,
                                    GError         **error)
{
  set_not_supported (self, "Listing sessions", error);
  return NULL;
}

static GPtrArray *
sandbox_backend_real_list_templates (SandboxBackend  *self,
                                     GCancellable    *cancellable,
                                     GError         **error)
{
  set_not_supported (self, "Listing templates", error);
  return NULL;
}

static SandboxState *
sandbox_backend_real_lookup_state (SandboxBackend  *self,
                                   const char      *session_id,
                                   GCancellable    *cancellable,
                                   GError         **error)
{
  set_not_supported (self, "Looking up a session's state", error);
  return NULL;
}

static gboolean
sandbox_backend_real_query_lease_owner (SandboxBackend     *self,
                                        const char         *session_id,
                                        SandboxLeaseOwner **owner,
                                        GCancellable       *cancellable,
                                        GError            **error)
{
  return set_not_supported (self, "Querying a session's lease owner", error);
}

static gboolean
sandbox_backend_real_delete_template (SandboxBackend  *self,
                                      const char      *template_key,
                                      GCancellable    *cancellable,
                                      GError         **error)
{
  return set_not_supported (self, "Deleting templates", error);
}

static char *
sandbox_backend_real_import_runtime (SandboxBackend  *self,
                                     GFile           *source,
                                     gboolean        *reused,
                                     GCancellable    *cancellable,
                                     GError         **error)
{
  set_not_supported (self, "Importing runtimes", error);
  return NULL;
}

static GPtrArray *
sandbox_backend_real_list_runtimes (SandboxBackend  *self,
                                    GCancellable    *cancellable,
                                    GError         **error)
{
  set_not_supported (self, "Listing runtimes", error);
  return NULL;
}

static gboolean
sandbox_backend_real_delete_runtime (SandboxBackend  *self,
                                     const char      *runtime_key,
                                     GCancellable    *cancellable,
                                     GError         **error)
{
  return set_not_supported (self, "Deleting runtimes", error);
}

void
sandbox_backend_install_store_defaults (SandboxBackendInterface *iface)
{
  iface->list_sessions = sandbox_backend_real_list_sessions;
  iface->list_templates = sandbox_backend_real_list_templates;
  iface->lookup_state = sandbox_backend_real_lookup_state;
  iface->query_lease_owner = sandbox_backend_real_query_lease_owner;
  iface->delete_template = sandbox_backend_real_delete_template;
  iface->import_runtime = sandbox_backend_real_import_runtime;
  iface->list_runtimes = sandbox_backend_real_list_runtimes;
  iface->delete_runtime = sandbox_backend_real_delete_runtime;
}

/* Moving sessions and templates in and out (sandbox-backend-transfer.c). */

static gboolean
sandbox_backend_real_import_session (SandboxBackend           *self,
                                     SandboxState             *state,
                                     SandboxWorkspaceFillFunc  fill,
                                     gpointer                  user_data,
                                     GCancellable             *cancellable,
                                     GError                  **error)
{
  return sandbox_set_error_not_supported (G_OBJECT_TYPE (self), "Importing sessions", FALSE,
                                          error);
}

static int
sandbox_backend_real_open_session_files (SandboxBackend  *self,
                                         const char      *session_id,
                                         GCancellable    *cancellable,
                                         GError         **error)
{
  sandbox_set_error_not_supported (G_OBJECT_TYPE (self), "Opening a session's files", FALSE,
                                   error);
  return -1;
}

static int
sandbox_backend_real_open_template_files (SandboxBackend  *self,
                                          const char      *template_key,
                                          GCancellable    *cancellable,
                                          GError         **error)
{
  sandbox_set_error_not_supported (G_OBJECT_TYPE (self), "Opening a template's files", FALSE,
                                   error);
  return -1;
}

void
sandbox_backend_install_transfer_defaults (SandboxBackendInterface *iface)
{
  iface->import_session = sandbox_backend_real_import_session;
  iface->open_session_files = sandbox_backend_real_open_session_files;
  iface->open_template_files = sandbox_backend_real_open_template_files;
}
