/* sandbox-backend.c — the interface driver modules implement
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend.h"
#include "sandbox-backend-private.h"
#include "sandbox-template-private.h"
#include "sandbox-error.h"
#include "sandbox-log-private.h"
#include "sandbox-signal-context-private.h"
#include "sandbox-task-private.h"

/**
 * SandboxBackend:
 *
 * A sandbox backend, provided by a driver module and created by name with
 * [func@Sandbox.Backend.new].
 *
 * A backend stores templates under content-addressed keys (prewarm) and
 * creates or resumes sessions from them (create). Implementations also
 * implement #GInitable and refuse, in init(), a configuration they can't
 * honour.
 */

G_DEFINE_INTERFACE (SandboxBackend, sandbox_backend, G_TYPE_OBJECT)

enum {
  SIGNAL_GATEWAY_ERROR,
  SIGNAL_CREATE_PROGRESS,
  SIGNAL_IMPORT_PROGRESS,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* The default import_runtime (sandbox-backend-unsupported.c): a backend
 * that keeps it has no runtimes. */
static gpointer default_import_runtime;

typedef struct
{
  SandboxTemplate *template_;
  char *template_key;
  SandboxState *state;
  SandboxNetworkPolicy *policy;
  GMainContext *context;   /* the caller's, for the session's signals */
  gboolean reused;
  gboolean recover;        /* recover_session() rather than create() */
} OperationData;

static void
operation_data_free (OperationData *data)
{
  g_clear_object (&data->template_);
  g_clear_pointer (&data->template_key, g_free);
  g_clear_object (&data->state);
  g_clear_object (&data->policy);
  g_clear_pointer (&data->context, g_main_context_unref);
  g_free (data);
}

/* Logs a session opened (or refused) by @self. The log is handed what its
 * context is made of: the session's state and the objects that report its
 * later events (the handle, its session, the session's driver and its
 * coding binding), so it never asks the handle. */
static void
log_session_opened (SandboxBackend        *self,
                    const char            *event,
                    const char            *template_key,
                    SandboxState          *state,
                    SandboxNetworkPolicy  *policy,
                    SandboxHandle         *handle,
                    GError               **error)
{
  g_autoptr(SandboxState) opened = NULL;
  gpointer objects[5] = { NULL, };

  if (handle != NULL)
    {
      SandboxSession *session = sandbox_handle_get_session (handle);

      g_object_get (handle, "state", &opened, NULL);
      objects[0] = handle;
      objects[1] = session;
      objects[2] = sandbox_session_get_driver (session);
      objects[3] = sandbox_handle_get_coding_binding (handle);   /* or NULL */
    }
  sandbox_log_session_opened (self, event, template_key, opened != NULL ? opened : state, policy,
                              handle != NULL ? objects : NULL, error);
}

/* Refuses (G_IO_ERROR_NOT_SUPPORTED) a template naming a runtime for a
 * backend without runtimes, which would store it on the host's /usr. */
static gboolean
check_runtime_support (SandboxBackend   *self,
                       SandboxTemplate  *template_,
                       GError          **error)
{
  if (sandbox_template_get_runtime (template_) == NULL ||
      (gpointer) SANDBOX_BACKEND_GET_IFACE (self)->import_runtime != default_import_runtime)
    return TRUE;
  return sandbox_set_error_not_supported (G_OBJECT_TYPE (self), "Runtimes", TRUE, error);
}

typedef struct
{
  char *key;
  gboolean reused;
} PrewarmResult;

static void
prewarm_result_free (PrewarmResult *result)
{
  g_free (result->key);
  g_free (result);
}

static void
prewarm_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  OperationData *data = task_data;
  GError *error = NULL;
  gboolean reused = FALSE;
  char *key;

  key = check_runtime_support (source_object, data->template_, &error)
        ? SANDBOX_BACKEND_GET_IFACE (source_object)->prewarm (source_object, data->template_,
                                                              &reused, cancellable, &error)
        : NULL;
  if (key == NULL)
    {
      g_task_return_error (task, error);
    }
  else
    {
      PrewarmResult *result = g_new0 (PrewarmResult, 1);

      result->key = key;
      result->reused = reused;
      g_task_return_pointer (task, result, (GDestroyNotify) prewarm_result_free);
    }
}

static void
sandbox_backend_real_prewarm_async (SandboxBackend      *self,
                                    SandboxTemplate     *template_,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  OperationData *data = g_new0 (OperationData, 1);

  data->template_ = g_object_ref (template_);
  sandbox_task_run_in_thread (self, data, (GDestroyNotify) operation_data_free, prewarm_thread,
                              sandbox_backend_real_prewarm_async, "[sandbox] prewarm",
                              cancellable, callback, user_data);
}

static char *
sandbox_backend_real_prewarm_finish (SandboxBackend  *self,
                                     GAsyncResult    *result,
                                     gboolean        *reused,
                                     GError         **error)
{
  PrewarmResult *prewarm = g_task_propagate_pointer (G_TASK (result), error);
  char *key;

  if (prewarm == NULL)
    return NULL;

  if (reused != NULL)
    *reused = prewarm->reused;
  key = g_steal_pointer (&prewarm->key);
  prewarm_result_free (prewarm);
  return key;
}

/* create_async() and recover_session_async(): both give a live session. */
static void
session_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  OperationData *data = task_data;
  SandboxSignalScope scope;
  GError *error = NULL;
  SandboxHandle *handle;

  /* The session's signals (its gateway's audit events) belong to the
   * caller of the async call, not to this worker thread. */
  sandbox_signal_scope_begin (&scope, data->context);
  if (data->recover)
    handle = sandbox_backend_recover_session (source_object, data->state, data->policy,
                                              cancellable, &error);   /* logs itself */
  else
    {
      handle = SANDBOX_BACKEND_GET_IFACE (source_object)->create (source_object,
                                                                  data->template_key,
                                                                  data->state, data->policy,
                                                                  cancellable, &error);
      log_session_opened (source_object, data->state != NULL ? "resume" : "create",
                          data->template_key, data->state, data->policy, handle, &error);
    }
  sandbox_signal_scope_end (&scope);
  sandbox_task_return_pointer (task, handle, g_object_unref, error);
}

/* Runs session_thread() for @task with the caller's session arguments. */
static void
run_session_task (GTask                *task,
                  const char           *template_key,
                  SandboxState         *state,
                  SandboxNetworkPolicy *policy,
                  gboolean              recover)
{
  OperationData *data = g_new0 (OperationData, 1);

  data->template_key = g_strdup (template_key);
  data->state = state != NULL ? g_object_ref (state) : NULL;
  data->policy = g_object_ref (policy);
  data->context = sandbox_signal_context_ref ();
  data->recover = recover;
  g_task_set_task_data (task, data, (GDestroyNotify) operation_data_free);
  g_task_run_in_thread (task, session_thread);
}

static void
sandbox_backend_real_create_async (SandboxBackend       *self,
                                   const char           *template_key,
                                   SandboxState         *state,
                                   SandboxNetworkPolicy *policy,
                                   GCancellable         *cancellable,
                                   GAsyncReadyCallback   callback,
                                   gpointer              user_data)
{
  g_autoptr(GTask) task = sandbox_task_new (self, sandbox_backend_real_create_async,
                                            "[sandbox] create", cancellable, callback,
                                            user_data);

  run_session_task (task, template_key, state, policy, FALSE);
}

static SandboxHandle *
sandbox_backend_real_create_finish (SandboxBackend  *self,
                                    GAsyncResult    *result,
                                    GError         **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* The default, and the session protocol's for a driver without
 * take_over_lease (sandbox-backend-protocol.c). */
SandboxHandle *
sandbox_backend_real_recover_session (SandboxBackend        *self,
                                      SandboxState          *state,
                                      SandboxNetworkPolicy  *policy,
                                      GCancellable          *cancellable,
                                      GError               **error)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "The %s backend cannot recover sessions", G_OBJECT_TYPE_NAME (self));
  return NULL;
}

static void
sandbox_backend_default_init (SandboxBackendInterface *iface)
{
  iface->prewarm_async = sandbox_backend_real_prewarm_async;
  iface->prewarm_finish = sandbox_backend_real_prewarm_finish;
  iface->create_async = sandbox_backend_real_create_async;
  iface->create_finish = sandbox_backend_real_create_finish;
  iface->recover_session = sandbox_backend_real_recover_session;
  sandbox_backend_install_store_defaults (iface);
  default_import_runtime = (gpointer) iface->import_runtime;
  sandbox_backend_install_transfer_defaults (iface);

  /**
   * SandboxBackend:name:
   *
   * The backend's name. It is part of every template key and of every
   * saved [class@Sandbox.State], so a session can only be resumed by a backend of
   * the same name. Must not be empty.
   */
  g_object_interface_install_property (iface,
    g_param_spec_string ("name", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBackend:state-directory:
   *
   * Where the backend keeps templates and sessions. It belongs to the
   * trusted host.
   */
  g_object_interface_install_property (iface,
    g_param_spec_string ("state-directory", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBackend:max-concurrent-commands:
   *
   * The admission limit of each session: at most this many live commands
   * (1 … %SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT). Out-of-range values make
   * init() fail with %SANDBOX_ERROR_INVALID.
   */
  g_object_interface_install_property (iface,
    g_param_spec_uint ("max-concurrent-commands", NULL, NULL,
                       0, G_MAXUINT, SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBackend::gateway-error:
   * @self: the backend
   * @cause: what went wrong
   *
   * Emitted when a session's network gateway fails to serve a request (the
   * guest then gets a 502). The place to log internal gateway errors.
   *
   * Emitted in the same main context as the session's
   * [signal@Sandbox.Handle::gateway-audit]: the thread-default main context of the
   * caller of the call that last set the session's network policy.
   */
  signals[SIGNAL_GATEWAY_ERROR] =
    g_signal_new ("gateway-error",
                  G_TYPE_FROM_INTERFACE (iface),
                  G_SIGNAL_RUN_LAST,
                  G_STRUCT_OFFSET (SandboxBackendInterface, gateway_error),
                  NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_ERROR);

  /**
   * SandboxBackend::create-progress:
   * @self: the backend
   * @session_id: the id of the session being created
   * @files_done: how many of the template's files (regular files and
   *   symbolic links) were copied into the session's workspace
   * @files_total: how many files the template holds
   * @bytes_done: how many bytes of its regular files were copied
   * @bytes_total: how many bytes its regular files hold
   *
   * Reports how far [method@Sandbox.Backend.create] (or its async form) is
   * in copying a template into a new session's workspace. The totals are
   * those [method@Sandbox.Backend.list_templates] gives for the template.
   *
   * Emitted only when a create copies, and only by a backend that reports
   * its copies: the bubblewrap driver does where it cannot layer workspaces
   * (its `workspace-layering` is `copy`); the memory driver (whose copies
   * are in memory) and the cluster driver do not. A layered create copies
   * nothing, and a resume copies nothing either: neither emits anything.
   *
   * A copy emits at most 20 times a second while it runs, then once more
   * with @files_done and @bytes_done equal to the totals when it is
   * complete; a copy that fails ends without that last emission. A backend may skip counting the totals when no handler is
   * connected as the copy starts, so connect before calling create.
   *
   * Emitted in the thread-default main context of the thread that called
   * create or create_async, whatever thread the backend copies in:
   * directly during a blocking create, otherwise from a source attached
   * there, each emission before the create's callback.
   */
  signals[SIGNAL_CREATE_PROGRESS] =
    g_signal_new ("create-progress",
                  G_TYPE_FROM_INTERFACE (iface),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 5, G_TYPE_STRING, G_TYPE_UINT64, G_TYPE_UINT64,
                  G_TYPE_UINT64, G_TYPE_UINT64);

  /**
   * SandboxBackend::import-progress:
   * @self: the backend
   * @n_entries: how many entries of the runtime were created so far
   * @n_bytes: how many bytes of its regular files were written so far
   *
   * Reports how far [method@Sandbox.Backend.import_runtime] (or its async
   * form) is in unpacking a runtime: every few hundred entries, at most 20
   * times a second, then once with the totals when the tree is unpacked
   * (an import that fails ends without it; a runtime already stored is
   * still unpacked to learn its key). Emitted, as
   * [signal@Sandbox.Backend::create-progress] is, in the thread-default
   * main context of the thread that called the import.
   */
  signals[SIGNAL_IMPORT_PROGRESS] =
    g_signal_new ("import-progress",
                  G_TYPE_FROM_INTERFACE (iface),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT64, G_TYPE_UINT64);
}

/**
 * sandbox_backend_get_name:
 * @self: a [iface@Sandbox.Backend]
 *
 * Gets the backend's name ([property@Sandbox.Backend:name]), as recorded in the
 * [class@Sandbox.State] of its sessions.
 *
 * Returns: the backend's name
 */
const char *
sandbox_backend_get_name (SandboxBackend *self)
{
  g_autofree char *name = NULL;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);

  /* Interned, so the string lives as long as the process and can be
   * returned without transferring ownership. */
  g_object_get (self, "name", &name, NULL);
  return g_intern_string (name);
}

/**
 * sandbox_backend_dup_state_directory:
 * @self: a [iface@Sandbox.Backend]
 *
 * Gets a copy of the directory where the backend keeps templates and
 * sessions ([property@Sandbox.Backend:state-directory]).
 *
 * Returns: (transfer full) (nullable): the backend's state directory
 */
char *
sandbox_backend_dup_state_directory (SandboxBackend *self)
{
  char *directory = NULL;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);

  g_object_get (self, "state-directory", &directory, NULL);
  return directory;
}

/**
 * sandbox_backend_get_max_concurrent_commands:
 * @self: a [iface@Sandbox.Backend]
 *
 * Gets how many live commands each session of the backend admits at once
 * ([property@Sandbox.Backend:max-concurrent-commands]).
 *
 * Returns: the admission limit of each session
 */
guint
sandbox_backend_get_max_concurrent_commands (SandboxBackend *self)
{
  guint max = 0;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), 0);

  g_object_get (self, "max-concurrent-commands", &max, NULL);
  return max;
}

/**
 * sandbox_backend_prewarm:
 * @self: a [iface@Sandbox.Backend]
 * @template_: the template to store
 * @reused: (out) (optional): set to whether the template was already stored
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stores @template_ under its content-addressed key (see
 * [method@Sandbox.Template.compute_key]). Blocking. While the backend reads
 * the template's files, [signal@Sandbox.Template::progress] reports how far
 * it is. A template naming a runtime ([method@Sandbox.Template.set_runtime])
 * needs a backend with runtimes, where that runtime is imported.
 *
 * Returns: (transfer full): the template key, or %NULL with @error set
 *   (%G_IO_ERROR_NOT_SUPPORTED for a runtime the backend cannot have,
 *   %SANDBOX_ERROR_NOT_FOUND for one it has not imported)
 */
char *
sandbox_backend_prewarm (SandboxBackend   *self,
                         SandboxTemplate  *template_,
                         gboolean         *reused,
                         GCancellable     *cancellable,
                         GError          **error)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  gboolean local_reused = FALSE;
  char *key;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (template_), NULL);

  /* SandboxTemplate::progress counts from zero, in the caller's context. */
  sandbox_template_begin_progress (template_, context);
  if (!check_runtime_support (self, template_, error))
    return NULL;
  key = SANDBOX_BACKEND_GET_IFACE (self)->prewarm (self, template_, &local_reused,
                                                   cancellable, error);
  if (reused != NULL)
    *reused = key != NULL && local_reused;
  return key;
}

/**
 * sandbox_backend_prewarm_async:
 * @self: a [iface@Sandbox.Backend]
 * @template_: the template to store
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Stores @template_; see [method@Sandbox.Backend.prewarm].
 * [signal@Sandbox.Template::progress] is emitted in the thread-default main
 * context of the thread that calls this.
 */
void
sandbox_backend_prewarm_async (SandboxBackend      *self,
                               SandboxTemplate     *template_,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();

  g_return_if_fail (SANDBOX_IS_BACKEND (self));
  g_return_if_fail (SANDBOX_IS_TEMPLATE (template_));

  /* SandboxTemplate::progress counts from zero, in the caller's context. */
  sandbox_template_begin_progress (template_, context);
  SANDBOX_BACKEND_GET_IFACE (self)->prewarm_async (self, template_, cancellable,
                                                   callback, user_data);
}

/**
 * sandbox_backend_prewarm_finish:
 * @self: a [iface@Sandbox.Backend]
 * @result: the #GAsyncResult
 * @reused: (out) (optional): set to whether the template was already stored
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Backend.prewarm_async].
 *
 * Returns: (transfer full): the template key, or %NULL with @error set
 */
char *
sandbox_backend_prewarm_finish (SandboxBackend  *self,
                                GAsyncResult    *result,
                                gboolean        *reused,
                                GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);

  return SANDBOX_BACKEND_GET_IFACE (self)->prewarm_finish (self, result, reused, error);
}

/**
 * sandbox_backend_create:
 * @self: a [iface@Sandbox.Backend]
 * @template_key: the key [method@Sandbox.Backend.prewarm] returned
 * @state: (nullable): a saved state to resume, or %NULL for a new session
 * @policy: the session's network policy (policies are never stored: pass it
 *   again on every resume)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Creates a session from a stored template, or resumes the one @state
 * describes, and takes its exclusive lease. Blocking.
 *
 * Returns: (transfer full): the live session's handle, or %NULL with @error
 *   set: %SANDBOX_ERROR_BUSY (another owner), %SANDBOX_ERROR_STATE_MISMATCH,
 *   %SANDBOX_ERROR_NOT_FOUND (unknown template or session),
 *   %SANDBOX_ERROR_UNAVAILABLE (isolation can't be established, or @policy
 *   can't be enforced), %SANDBOX_ERROR_INVALID
 */
SandboxHandle *
sandbox_backend_create (SandboxBackend        *self,
                        const char            *template_key,
                        SandboxState          *state,
                        SandboxNetworkPolicy  *policy,
                        GCancellable          *cancellable,
                        GError               **error)
{
  SandboxHandle *handle;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (template_key != NULL, NULL);
  g_return_val_if_fail (state == NULL || SANDBOX_IS_STATE (state), NULL);
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (policy), NULL);

  handle = SANDBOX_BACKEND_GET_IFACE (self)->create (self, template_key, state, policy,
                                                     cancellable, error);
  log_session_opened (self, state != NULL ? "resume" : "create", template_key, state, policy,
                      handle, error);
  return handle;
}

/**
 * sandbox_backend_create_async:
 * @self: a [iface@Sandbox.Backend]
 * @template_key: the key [method@Sandbox.Backend.prewarm] returned
 * @state: (nullable): a saved state to resume, or %NULL for a new session
 * @policy: the session's network policy
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Creates or resumes a session; see [method@Sandbox.Backend.create].
 */
void
sandbox_backend_create_async (SandboxBackend        *self,
                              const char            *template_key,
                              SandboxState          *state,
                              SandboxNetworkPolicy  *policy,
                              GCancellable          *cancellable,
                              GAsyncReadyCallback    callback,
                              gpointer               user_data)
{
  g_return_if_fail (SANDBOX_IS_BACKEND (self));
  g_return_if_fail (template_key != NULL);
  g_return_if_fail (state == NULL || SANDBOX_IS_STATE (state));
  g_return_if_fail (SANDBOX_IS_NETWORK_POLICY (policy));

  SANDBOX_BACKEND_GET_IFACE (self)->create_async (self, template_key, state, policy,
                                                  cancellable, callback, user_data);
}

/**
 * sandbox_backend_create_finish:
 * @self: a [iface@Sandbox.Backend]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Backend.create_async].
 *
 * Returns: (transfer full): the live session's handle, or %NULL with @error set
 */
SandboxHandle *
sandbox_backend_create_finish (SandboxBackend  *self,
                               GAsyncResult    *result,
                               GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);

  return SANDBOX_BACKEND_GET_IFACE (self)->create_finish (self, result, error);
}

/**
 * sandbox_backend_recover_session:
 * @self: a [iface@Sandbox.Backend]
 * @state: the saved state of the session to recover
 * @policy: the session's network policy
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Resumes the session @state describes, taking over its lease from an
 * owner that died without releasing it (a crashed host process).
 * [method@Sandbox.Backend.create] keeps refusing such a session with
 * %SANDBOX_ERROR_BUSY, because it cannot tell a dead owner from a live
 * one; this call can, and takes the lease over once nothing of the dead
 * owner's sandboxes is left: the bubblewrap backend kills what is left of
 * them, and only processes it identifies as that session's. A session
 * without a lease is resumed as by [method@Sandbox.Backend.create]. Blocking.
 *
 * Backends that cannot recover sessions fail with
 * %SANDBOX_ERROR_UNAVAILABLE.
 *
 * Returns: (transfer full): the live session's handle, or %NULL with @error
 *   set: %SANDBOX_ERROR_BUSY (the owner is alive, or processes of the dead
 *   owner are left that the backend cannot end), %SANDBOX_ERROR_STATE_MISMATCH,
 *   %SANDBOX_ERROR_NOT_FOUND,
 *   %SANDBOX_ERROR_UNAVAILABLE, %SANDBOX_ERROR_INVALID
 */
SandboxHandle *
sandbox_backend_recover_session (SandboxBackend        *self,
                                 SandboxState          *state,
                                 SandboxNetworkPolicy  *policy,
                                 GCancellable          *cancellable,
                                 GError               **error)
{
  SandboxHandle *handle;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (SANDBOX_IS_STATE (state), NULL);
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (policy), NULL);

  handle = SANDBOX_BACKEND_GET_IFACE (self)->recover_session (self, state, policy,
                                                              cancellable, error);
  log_session_opened (self, "recover", sandbox_state_get_template_key (state), state, policy,
                      handle, error);
  return handle;
}

/**
 * sandbox_backend_recover_session_async:
 * @self: a [iface@Sandbox.Backend]
 * @state: the saved state of the session to recover
 * @policy: the session's network policy
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Recovers a session in a worker thread; see
 * [method@Sandbox.Backend.recover_session].
 */
void
sandbox_backend_recover_session_async (SandboxBackend        *self,
                                       SandboxState          *state,
                                       SandboxNetworkPolicy  *policy,
                                       GCancellable          *cancellable,
                                       GAsyncReadyCallback    callback,
                                       gpointer               user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SANDBOX_IS_BACKEND (self));
  g_return_if_fail (SANDBOX_IS_STATE (state));
  g_return_if_fail (SANDBOX_IS_NETWORK_POLICY (policy));

  task = sandbox_task_new (self, sandbox_backend_recover_session_async,
                           "[sandbox] recover session", cancellable, callback, user_data);
  run_session_task (task, NULL, state, policy, TRUE);
}

/**
 * sandbox_backend_recover_session_finish:
 * @self: a [iface@Sandbox.Backend]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with
 * [method@Sandbox.Backend.recover_session_async].
 *
 * Returns: (transfer full): the live session's handle, or %NULL with @error set
 */
SandboxHandle *
sandbox_backend_recover_session_finish (SandboxBackend  *self,
                                        GAsyncResult    *result,
                                        GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_BACKEND (self), NULL);
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * sandbox_backend_emit_gateway_error:
 * @self: a [iface@Sandbox.Backend]
 * @cause: what went wrong
 *
 * For backends: emits [signal@Sandbox.Backend::gateway-error].
 */
void
sandbox_backend_emit_gateway_error (SandboxBackend *self,
                                    const GError   *cause)
{
  g_return_if_fail (SANDBOX_IS_BACKEND (self));
  g_return_if_fail (cause != NULL);

  g_signal_emit (self, signals[SIGNAL_GATEWAY_ERROR], 0, cause);
}

/* One ::create-progress emission queued to the create's caller. */
typedef struct
{
  SandboxBackend *backend;
  char *session_id;
  guint64 files_done, files_total, bytes_done, bytes_total;
} CreateProgress;

static void
create_progress_free (CreateProgress *progress)
{
  g_object_unref (progress->backend);
  g_free (progress->session_id);
  g_free (progress);
}

static gboolean
emit_queued_create_progress (gpointer data)
{
  CreateProgress *progress = data;

  g_signal_emit (progress->backend, signals[SIGNAL_CREATE_PROGRESS], 0, progress->session_id,
                 progress->files_done, progress->files_total, progress->bytes_done,
                 progress->bytes_total);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_backend_emit_create_progress:
 * @self: a [iface@Sandbox.Backend]
 * @session_id: the id of the session being created
 * @files_done: how many files were copied
 * @files_total: how many files the template holds
 * @bytes_done: how many bytes were copied
 * @bytes_total: how many bytes the template's regular files hold
 *
 * For backends, from their create (in whatever thread it runs): emits
 * [signal@Sandbox.Backend::create-progress] in the thread-default main
 * context of the caller of [method@Sandbox.Backend.create] or
 * [method@Sandbox.Backend.create_async]. Backends throttle their reports
 * as the signal's documentation says (a copy reported by
 * [func@Sandbox.Workspace.copy_tree_with_progress_at] is).
 */
void
sandbox_backend_emit_create_progress (SandboxBackend *self,
                                      const char     *session_id,
                                      guint64         files_done,
                                      guint64         files_total,
                                      guint64         bytes_done,
                                      guint64         bytes_total)
{
  g_autoptr(GMainContext) context = NULL;
  g_autoptr(GSource) source = NULL;
  CreateProgress *progress;

  g_return_if_fail (SANDBOX_IS_BACKEND (self));
  g_return_if_fail (session_id != NULL);

  /* A blocking create runs in its caller's thread: emit here. */
  if (!sandbox_signal_scope_is_open ())
    {
      g_signal_emit (self, signals[SIGNAL_CREATE_PROGRESS], 0, session_id, files_done,
                     files_total, bytes_done, bytes_total);
      return;
    }

  /* A worker queues each report (they come at most 20 times a second, so
   * they are not merged) to the caller's context, at the priority of the
   * GTask's own completion source: same-priority sources run in the order
   * they were attached, so every report is delivered before the callback. */
  progress = g_new0 (CreateProgress, 1);
  progress->backend = g_object_ref (self);
  progress->session_id = g_strdup (session_id);
  progress->files_done = files_done;
  progress->files_total = files_total;
  progress->bytes_done = bytes_done;
  progress->bytes_total = bytes_total;
  context = sandbox_signal_context_ref ();
  source = g_idle_source_new ();
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_static_name (source, "[sandbox] create progress");
  g_source_set_callback (source, emit_queued_create_progress, progress,
                         (GDestroyNotify) create_progress_free);
  g_source_attach (source, context);
}
