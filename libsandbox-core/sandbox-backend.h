/* sandbox-backend.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-handle.h"
#include "sandbox-lease-owner.h"
#include "sandbox-network-policy.h"
#include "sandbox-session-info.h"
#include "sandbox-state.h"
#include "sandbox-template.h"
#include "sandbox-template-info.h"
#include "sandbox-runtime-info.h"

G_BEGIN_DECLS

/**
 * SANDBOX_BACKEND_EXTENSION_POINT_NAME:
 *
 * The GIO extension point driver modules implement, each under its driver
 * name (`bubblewrap`, `memory`, …).
 */
#define SANDBOX_BACKEND_EXTENSION_POINT_NAME "sandbox-backend"

/**
 * SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS:
 *
 * The default admission limit of a backend's sessions.
 */
#define SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS 8

/**
 * SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT:
 *
 * The largest admission limit a backend accepts.
 */
#define SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT 1024

/**
 * SandboxWorkspaceFillFunc:
 * @parent_fd: a directory of the backend's store
 * @name: the entry of @parent_fd to make: the workspace's directory, which
 *   does not exist yet
 * @user_data: (closure): the caller's data
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Makes a session's workspace for [method@Sandbox.Backend.import_session]
 * (the `cluster` driver materialises a checkpoint with it). What it makes
 * is the host's; the backend gives it to the session's guest afterwards.
 *
 * Returns: %TRUE when @name holds the workspace
 */
typedef gboolean (*SandboxWorkspaceFillFunc) (int            parent_fd,
                                              const char    *name,
                                              gpointer       user_data,
                                              GCancellable  *cancellable,
                                              GError       **error);

#define SANDBOX_TYPE_BACKEND (sandbox_backend_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (SandboxBackend, sandbox_backend, SANDBOX, BACKEND, GObject)

/**
 * SandboxBackendInterface:
 * @parent_iface: the parent interface
 * @prewarm: stores @template under its content-addressed key (blocking,
 *   thread-safe); sets @reused when it was already stored
 * @create: creates a session from a stored template, or resumes the session
 *   @state describes, under @policy (blocking, thread-safe)
 * @prewarm_async: async form of @prewarm; the default runs it in a thread
 * @prewarm_finish: finishes @prewarm_async
 * @create_async: async form of @create; the default runs it in a thread
 * @create_finish: finishes @create_async
 * @gateway_error: class closure of [signal@Sandbox.Backend::gateway-error]
 * @recover_session: takes over the session @state describes from an owner
 *   that died without releasing it, once none of its sandboxed processes
 *   are left (blocking, thread-safe; optional: the default fails with
 *   %SANDBOX_ERROR_UNAVAILABLE)
 * @list_sessions: the sessions the backend stores, as a #GPtrArray of
 *   [class@Sandbox.SessionInfo] that unrefs them when freed (blocking,
 *   thread-safe)
 * @list_templates: the templates the backend stores, as a #GPtrArray of
 *   [class@Sandbox.TemplateInfo] that unrefs them when freed (blocking,
 *   thread-safe)
 * @lookup_state: the saved [class@Sandbox.State] of a stored session (blocking,
 *   thread-safe)
 * @query_lease_owner: who holds a stored session's lease, %NULL in @owner
 *   when nobody does (blocking, thread-safe)
 * @delete_template: removes a stored template that no stored session was
 *   created from (blocking, thread-safe)
 * @import_session: stores the session a state describes with a workspace
 *   made by a [callback@Sandbox.WorkspaceFillFunc] (blocking, thread-safe)
 * @open_session_files: a directory descriptor of a stopped session's
 *   files (blocking, thread-safe)
 * @open_template_files: a directory descriptor of a stored template's
 *   files (blocking, thread-safe)
 * @import_runtime: stores the runtime tree at @source (a root file system
 *   directory or an OCI image layout) under its content-addressed key
 *   (blocking, thread-safe); sets @reused when it was already stored
 * @list_runtimes: the runtimes the backend stores, as a #GPtrArray of
 *   [class@Sandbox.RuntimeInfo] that unrefs them when freed (blocking,
 *   thread-safe)
 * @delete_runtime: removes a stored runtime that no stored template names
 *   (blocking, thread-safe)
 *
 * The store's own view (@list_sessions, @list_templates, @lookup_state,
 * @query_lease_owner, @delete_template) and runtimes (@import_runtime,
 * @list_runtimes, @delete_runtime) are optional: the defaults fail with
 * %G_IO_ERROR_NOT_SUPPORTED. It is how tools ask a backend about what it
 * stores without knowing where or how it stores it. So are the ways a
 * driver built on another backend (the `cluster` driver over `bubblewrap`)
 * moves sessions and templates in and out of it (@import_session,
 * @open_session_files, @open_template_files; see
 * [method@Sandbox.Backend.import_session]).
 *
 * What a driver module implements. Implementations also implement
 * #GInitable, and validate their properties in init() with
 * %SANDBOX_ERROR_INVALID (or %SANDBOX_ERROR_UNAVAILABLE where the driver cannot
 * work on this system).
 */
struct _SandboxBackendInterface
{
  GTypeInterface parent_iface;

  char          *(*prewarm)        (SandboxBackend        *self,
                                    SandboxTemplate       *template_,
                                    gboolean              *reused,
                                    GCancellable          *cancellable,
                                    GError               **error);
  SandboxHandle *(*create)         (SandboxBackend        *self,
                                    const char            *template_key,
                                    SandboxState          *state,
                                    SandboxNetworkPolicy  *policy,
                                    GCancellable          *cancellable,
                                    GError               **error);

  void           (*prewarm_async)  (SandboxBackend        *self,
                                    SandboxTemplate       *template_,
                                    GCancellable          *cancellable,
                                    GAsyncReadyCallback    callback,
                                    gpointer               user_data);
  char          *(*prewarm_finish) (SandboxBackend        *self,
                                    GAsyncResult          *result,
                                    gboolean              *reused,
                                    GError               **error);
  void           (*create_async)   (SandboxBackend        *self,
                                    const char            *template_key,
                                    SandboxState          *state,
                                    SandboxNetworkPolicy  *policy,
                                    GCancellable          *cancellable,
                                    GAsyncReadyCallback    callback,
                                    gpointer               user_data);
  SandboxHandle *(*create_finish)  (SandboxBackend        *self,
                                    GAsyncResult          *result,
                                    GError               **error);

  void           (*gateway_error)  (SandboxBackend        *self,
                                    const GError          *cause);

  SandboxHandle *(*recover_session) (SandboxBackend       *self,
                                     SandboxState         *state,
                                     SandboxNetworkPolicy *policy,
                                     GCancellable         *cancellable,
                                     GError              **error);

  GPtrArray     *(*list_sessions)     (SandboxBackend      *self,
                                       GCancellable        *cancellable,
                                       GError             **error);
  GPtrArray     *(*list_templates)    (SandboxBackend      *self,
                                       GCancellable        *cancellable,
                                       GError             **error);
  SandboxState  *(*lookup_state)      (SandboxBackend      *self,
                                       const char          *session_id,
                                       GCancellable        *cancellable,
                                       GError             **error);
  gboolean       (*query_lease_owner) (SandboxBackend      *self,
                                       const char          *session_id,
                                       SandboxLeaseOwner  **owner,
                                       GCancellable        *cancellable,
                                       GError             **error);
  gboolean       (*delete_template)   (SandboxBackend      *self,
                                       const char          *template_key,
                                       GCancellable        *cancellable,
                                       GError             **error);

  gboolean       (*import_session)    (SandboxBackend           *self,
                                       SandboxState             *state,
                                       SandboxWorkspaceFillFunc  fill,
                                       gpointer                  user_data,
                                       GCancellable             *cancellable,
                                       GError                  **error);
  int            (*open_session_files)  (SandboxBackend      *self,
                                         const char          *session_id,
                                         GCancellable        *cancellable,
                                         GError             **error);
  int            (*open_template_files) (SandboxBackend      *self,
                                         const char          *template_key,
                                         GCancellable        *cancellable,
                                         GError             **error);

  /* Took the last three padding slots. */
  char          *(*import_runtime)  (SandboxBackend      *self,
                                     GFile               *source,
                                     gboolean            *reused,
                                     GCancellable        *cancellable,
                                     GError             **error);
  GPtrArray     *(*list_runtimes)   (SandboxBackend      *self,
                                     GCancellable        *cancellable,
                                     GError             **error);
  gboolean       (*delete_runtime)  (SandboxBackend      *self,
                                     const char          *runtime_key,
                                     GCancellable        *cancellable,
                                     GError             **error);
};

SANDBOX_AVAILABLE_IN_ALL
SandboxBackend  *sandbox_backend_new            (const char            *driver,
                                                 GCancellable          *cancellable,
                                                 GError               **error,
                                                 const char            *first_property_name,
                                                 ...);
SANDBOX_AVAILABLE_IN_ALL
SandboxBackend  *sandbox_backend_newv           (const char            *driver,
                                                 guint                  n_properties,
                                                 const char           **names,
                                                 const GValue          *values,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean         sandbox_backend_parse_property (GType                  backend_type,
                                                 const char            *name,
                                                 const char            *text,
                                                 GValue                *value,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
char           **sandbox_list_drivers           (void);
SANDBOX_AVAILABLE_IN_ALL
GType            sandbox_lookup_driver          (const char            *driver,
                                                 GError               **error);

SANDBOX_AVAILABLE_IN_ALL
const char      *sandbox_backend_get_name       (SandboxBackend        *self);
SANDBOX_AVAILABLE_IN_ALL
char            *sandbox_backend_dup_state_directory (SandboxBackend   *self);
SANDBOX_AVAILABLE_IN_ALL
guint            sandbox_backend_get_max_concurrent_commands (SandboxBackend *self);

SANDBOX_AVAILABLE_IN_ALL
char            *sandbox_backend_prewarm        (SandboxBackend        *self,
                                                 SandboxTemplate       *template_,
                                                 gboolean              *reused,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void             sandbox_backend_prewarm_async  (SandboxBackend        *self,
                                                 SandboxTemplate       *template_,
                                                 GCancellable          *cancellable,
                                                 GAsyncReadyCallback    callback,
                                                 gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
char            *sandbox_backend_prewarm_finish (SandboxBackend        *self,
                                                 GAsyncResult          *result,
                                                 gboolean              *reused,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxHandle   *sandbox_backend_create         (SandboxBackend        *self,
                                                 const char            *template_key,
                                                 SandboxState          *state,
                                                 SandboxNetworkPolicy  *policy,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void             sandbox_backend_create_async   (SandboxBackend        *self,
                                                 const char            *template_key,
                                                 SandboxState          *state,
                                                 SandboxNetworkPolicy  *policy,
                                                 GCancellable          *cancellable,
                                                 GAsyncReadyCallback    callback,
                                                 gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
SandboxHandle   *sandbox_backend_create_finish  (SandboxBackend        *self,
                                                 GAsyncResult          *result,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxHandle   *sandbox_backend_resume         (SandboxBackend        *self,
                                                 SandboxState          *state,
                                                 SandboxNetworkPolicy  *policy,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void             sandbox_backend_resume_async   (SandboxBackend        *self,
                                                 SandboxState          *state,
                                                 SandboxNetworkPolicy  *policy,
                                                 GCancellable          *cancellable,
                                                 GAsyncReadyCallback    callback,
                                                 gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
SandboxHandle   *sandbox_backend_resume_finish  (SandboxBackend        *self,
                                                 GAsyncResult          *result,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxHandle   *sandbox_backend_recover_session (SandboxBackend       *self,
                                                 SandboxState          *state,
                                                 SandboxNetworkPolicy  *policy,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void             sandbox_backend_recover_session_async (SandboxBackend       *self,
                                                 SandboxState          *state,
                                                 SandboxNetworkPolicy  *policy,
                                                 GCancellable          *cancellable,
                                                 GAsyncReadyCallback    callback,
                                                 gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
SandboxHandle   *sandbox_backend_recover_session_finish (SandboxBackend      *self,
                                                 GAsyncResult          *result,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
GPtrArray       *sandbox_backend_list_sessions  (SandboxBackend        *self,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void             sandbox_backend_list_sessions_async (SandboxBackend   *self,
                                                 GCancellable          *cancellable,
                                                 GAsyncReadyCallback    callback,
                                                 gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
GPtrArray       *sandbox_backend_list_sessions_finish (SandboxBackend  *self,
                                                 GAsyncResult          *result,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
GPtrArray       *sandbox_backend_list_templates (SandboxBackend        *self,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxState    *sandbox_backend_lookup_state   (SandboxBackend        *self,
                                                 const char            *session_id,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean         sandbox_backend_query_lease_owner (SandboxBackend     *self,
                                                 const char            *session_id,
                                                 SandboxLeaseOwner    **owner,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean         sandbox_backend_delete_template (SandboxBackend       *self,
                                                 const char            *template_key,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void             sandbox_backend_delete_template_async (SandboxBackend *self,
                                                 const char            *template_key,
                                                 GCancellable          *cancellable,
                                                 GAsyncReadyCallback    callback,
                                                 gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean         sandbox_backend_delete_template_finish (SandboxBackend *self,
                                                 GAsyncResult          *result,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
char            *sandbox_backend_import_runtime (SandboxBackend        *self,
                                                 GFile                 *source,
                                                 gboolean              *reused,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void             sandbox_backend_import_runtime_async (SandboxBackend  *self,
                                                 GFile                 *source,
                                                 GCancellable          *cancellable,
                                                 GAsyncReadyCallback    callback,
                                                 gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
char            *sandbox_backend_import_runtime_finish (SandboxBackend *self,
                                                 GAsyncResult          *result,
                                                 gboolean              *reused,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
GPtrArray       *sandbox_backend_list_runtimes  (SandboxBackend        *self,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean         sandbox_backend_delete_runtime (SandboxBackend        *self,
                                                 const char            *runtime_key,
                                                 GCancellable          *cancellable,
                                                 GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void             sandbox_backend_emit_import_progress (SandboxBackend  *self,
                                                 guint64                n_entries,
                                                 guint64                n_bytes);
SANDBOX_AVAILABLE_IN_ALL
void             sandbox_backend_emit_gateway_error (SandboxBackend    *self,
                                                 const GError          *cause);
SANDBOX_AVAILABLE_IN_ALL
void             sandbox_backend_emit_create_progress (SandboxBackend  *self,
                                                 const char            *session_id,
                                                 guint64                files_done,
                                                 guint64                files_total,
                                                 guint64                bytes_done,
                                                 guint64                bytes_total);

G_END_DECLS
