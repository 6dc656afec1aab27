/* sandbox-coding-invoke.c — how a coding-tool call runs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An invocation runs in three phases:
 *
 *  1. in the caller's thread: the session must be active, the arguments
 *     are parsed strictly, paths canonicalized (the schema), and the host
 *     authorizes the operation (#SandboxCodingTools::authorize, then
 *     ::authorize-path);
 *  2. the work, by the tool the table names: file I/O through the
 *     session's contained host-side implementation, listings through the
 *     binding, shell commands through prepare/spawn on the binding (in a
 *     worker thread for _async);
 *  3. back in the caller's thread: ::tool-error for a refusal's cause, and
 *     the result JSON.
 *
 * The adapter's probe and prepare are here too; the object itself (its
 * configuration and signals) is sandbox-coding-tools.c.
 */

#include "config.h"

#include "sandbox-coding-tools.h"
#include "sandbox-coding-tools-private.h"
#include "sandbox-coding-schema-private.h"
#include "sandbox-coding-shell-private.h"
#include "sandbox-error.h"
#include "sandbox-task-private.h"

/* Tools made by g_object_new() alone have no session to work in. */
static gboolean
made_by_new (SandboxCodingTools *self)
{
  return sandbox_coding_tools_get_binding (self) != NULL;
}

/* Phase 1, in the caller's thread. Returns the call, with ->result already
 * set when it ends here. */
static SandboxCodingCall *
call_begin (SandboxCodingTools *self,
            const char         *name,
            const char         *arguments_json)
{
  g_autoptr(SandboxCodingCall) call = sandbox_coding_tools_new_call (self);
  g_autoptr(GError) error = NULL;
  SandboxCodingLimits limits;

  /* A stopped session refuses everything, as the reference's assertToolActive. */
  if (!sandbox_coding_binding_check_active (call->binding, &error))
    {
      call->result = sandbox_coding_refusal_result (g_steal_pointer (&error), &call->cause);
      return g_steal_pointer (&call);
    }

  call->tool = sandbox_coding_schema_lookup (name);
  if (call->tool == NULL)
    {
      call->result = sandbox_coding_schema_unknown_tool ();
      return g_steal_pointer (&call);
    }

  sandbox_coding_tools_get_limits (self, &limits);
  call->result = sandbox_coding_schema_parse (call, arguments_json, &limits);
  if (call->result == NULL)
    call->result = sandbox_coding_tools_authorize (self, call);
  if (call->result == NULL)
    sandbox_coding_tools_snapshot (self, call);
  return g_steal_pointer (&call);
}

/* Phase 3, in the caller's thread. */
static char *
call_finish (SandboxCodingTools *self,
             SandboxCodingCall  *call)
{
  if (call->cause != NULL)
    sandbox_coding_tools_emit_tool_error (self, call->tool != NULL ? call->tool->name : NULL,
                                          call->cause);
  return json_to_string (call->result, FALSE);
}

/**
 * sandbox_coding_tools_invoke:
 * @self: a [class@Sandbox.CodingTools]
 * @name: the tool to call, as the model named it
 * @arguments_json: (nullable): the call's arguments, a JSON object as the
 *   model produced it (%NULL or empty for none)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs one tool call and returns its result for the model. Everything the
 * model can get wrong, and every refusal, is a result with `"ok": false`
 * (see [class@Sandbox.CodingTools]); @error is set only for cancellation. Blocks
 * until the call is done — a `shell` call up to
 * [property@Sandbox.CodingTools:shell-timeout-ms].
 *
 * Returns: (transfer full): the result as JSON, or %NULL if cancelled
 */
char *
sandbox_coding_tools_invoke (SandboxCodingTools  *self,
                             const char          *name,
                             const char          *arguments_json,
                             GCancellable        *cancellable,
                             GError             **error)
{
  g_autoptr(SandboxCodingCall) call = NULL;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_return_val_if_fail (made_by_new (self), NULL);
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  call = call_begin (self, name, arguments_json);
  if (!sandbox_coding_schema_dispatch (call, cancellable, error))
    return NULL;
  return call_finish (self, call);
}

static void
invoke_thread (GTask        *task,
               gpointer      source_object,
               gpointer      task_data,
               GCancellable *cancellable)
{
  GError *error = NULL;
  gboolean ok = sandbox_coding_schema_dispatch (task_data, cancellable, &error);

  sandbox_task_return_boolean (task, ok, error);
}

static void
invoke_done (GObject      *source_object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SandboxCodingCall *call = g_task_get_task_data (G_TASK (result));
  GError *error = NULL;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, call_finish (SANDBOX_CODING_TOOLS (source_object), call), g_free);
}

/**
 * sandbox_coding_tools_invoke_async:
 * @self: a [class@Sandbox.CodingTools]
 * @name: the tool to call
 * @arguments_json: (nullable): the call's arguments as JSON
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the call is done
 * @user_data: data for @callback
 *
 * Runs one tool call; see [method@Sandbox.CodingTools.invoke]. Authorization
 * signals are emitted before this returns; the work runs in a worker
 * thread, and [signal@Sandbox.CodingTools::tool-error] is emitted in the calling
 * thread's thread-default main context before @callback runs.
 */
void
sandbox_coding_tools_invoke_async (SandboxCodingTools  *self,
                                   const char          *name,
                                   const char          *arguments_json,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GTask) work = NULL;
  SandboxCodingCall *call;

  g_return_if_fail (SANDBOX_IS_CODING_TOOLS (self));
  g_return_if_fail (made_by_new (self));
  g_return_if_fail (name != NULL);

  task = sandbox_task_new (self, sandbox_coding_tools_invoke_async, "[sandbox] coding tool",
                           cancellable, callback, user_data);

  call = call_begin (self, name, arguments_json);
  work = sandbox_task_new (self, sandbox_coding_tools_invoke_async, "[sandbox] coding tool work",
                           cancellable, invoke_done, g_steal_pointer (&task));
  g_task_set_task_data (work, call, (GDestroyNotify) sandbox_coding_call_free);
  g_task_set_check_cancellable (work, FALSE);
  if (call->result != NULL)
    g_task_return_boolean (work, TRUE);
  else
    g_task_run_in_thread (work, invoke_thread);
}

/**
 * sandbox_coding_tools_invoke_finish:
 * @self: a [class@Sandbox.CodingTools]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes [method@Sandbox.CodingTools.invoke_async].
 *
 * Returns: (transfer full): the result as JSON, or %NULL if cancelled
 */
char *
sandbox_coding_tools_invoke_finish (SandboxCodingTools  *self,
                                    GAsyncResult        *result,
                                    GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* The adapter ------------------------------------------------------------ */

static gboolean
refuse (SandboxCodingTools  *self,
        GError              *cause,
        GError             **error)
{
  g_autoptr(GError) owned = cause;

  sandbox_coding_tools_emit_tool_error (self, NULL, cause);
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       SANDBOX_CODING_FIXED_REFUSAL);
  return FALSE;
}

/**
 * sandbox_coding_tools_probe:
 * @self: a [class@Sandbox.CodingTools]
 * @restrictions: (out) (optional) (transfer full) (array zero-terminated=1):
 *   the restrictions the session guarantees now
 * @error: return location for a #GError
 *
 * The adapter's probe: the isolation grade (always `"full"` for a live
 * session) and its restrictions — write-contained, process-contained and
 * secrets-hidden, plus network-denied under a deny-all policy. A stopped
 * session is refused with %SANDBOX_ERROR_UNAVAILABLE "Sandbox session
 * cannot execute this operation"; the cause goes to
 * [signal@Sandbox.CodingTools::tool-error].
 *
 * [method@Sandbox.CodingTools.probe_full] also says how the workspace is
 * made.
 *
 * Returns: (transfer full): the grade, or %NULL with @error set
 */
char *
sandbox_coding_tools_probe (SandboxCodingTools   *self,
                            char               ***restrictions,
                            GError              **error)
{
  return sandbox_coding_tools_probe_full (self, restrictions, NULL, error);
}

/**
 * sandbox_coding_tools_probe_runtime:
 * @self: a [class@Sandbox.CodingTools]
 * @runtime_key: (out) (transfer full) (nullable): the key of the runtime the
 *   session's commands run on ([method@Sandbox.Template.set_runtime]), or
 *   %NULL where they see the host's /usr
 * @error: return location for a #GError
 *
 * What the adapter's probe reports beside the grade: the userland the
 * session's commands run on. Refuses a stopped session as
 * [method@Sandbox.CodingTools.probe] does.
 *
 * Returns: %TRUE with @runtime_key set, or %FALSE with @error set
 */
gboolean
sandbox_coding_tools_probe_runtime (SandboxCodingTools  *self,
                                    char               **runtime_key,
                                    GError             **error)
{
  SandboxCodingBinding *binding;
  GError *cause = NULL;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), FALSE);
  g_return_val_if_fail (made_by_new (self), FALSE);
  g_return_val_if_fail (runtime_key != NULL && *runtime_key == NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  binding = sandbox_coding_tools_get_binding (self);
  if (!sandbox_coding_binding_check_active (binding, &cause))
    {
      refuse (self, cause, error);
      return FALSE;
    }
  *runtime_key = g_strdup (sandbox_coding_binding_get_runtime (binding));
  return TRUE;
}

/**
 * sandbox_coding_tools_probe_full:
 * @self: a [class@Sandbox.CodingTools]
 * @restrictions: (out) (optional) (transfer full) (array zero-terminated=1):
 *   the restrictions the session guarantees now
 * @workspace_layering: (out) (optional) (transfer none): how the session's
 *   workspace is made: %SANDBOX_WORKSPACE_LAYERING_OVERLAY, or
 *   %SANDBOX_WORKSPACE_LAYERING_COPY where the backend fell back to copying
 *   the template
 * @error: return location for a #GError
 *
 * [method@Sandbox.CodingTools.probe], and the workspace's layering. The
 * layering is not a restriction (a copied workspace is as contained as an
 * overlay), so it is not in @restrictions, whose words stay the
 * reference's; it tells an operator that creates from this template cost a
 * copy.
 *
 * Returns: (transfer full): the grade, or %NULL with @error set
 */
char *
sandbox_coding_tools_probe_full (SandboxCodingTools   *self,
                                 char               ***restrictions,
                                 const char          **workspace_layering,
                                 GError              **error)
{
  SandboxCodingBinding *binding;
  GError *cause = NULL;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_return_val_if_fail (made_by_new (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  binding = sandbox_coding_tools_get_binding (self);
  if (restrictions != NULL)
    *restrictions = NULL;
  if (workspace_layering != NULL)
    *workspace_layering = NULL;
  if (!sandbox_coding_binding_check_active (binding, &cause))
    {
      refuse (self, cause, error);
      return NULL;
    }
  if (restrictions != NULL)
    *restrictions = sandbox_coding_binding_get_restrictions (binding, NULL);
  if (workspace_layering != NULL)
    *workspace_layering = sandbox_coding_binding_get_workspace_layering (binding);
  return g_strdup ("full");
}

/**
 * sandbox_coding_tools_probe_report:
 * @self: a [class@Sandbox.CodingTools]
 * @error: return location for a #GError
 *
 * Everything the probe knows, as one dictionary (`a{sv}`) an operator can
 * log or a program can read by name, and that can grow without a new
 * out argument:
 *
 * - `grade` (`s`): as [method@Sandbox.CodingTools.probe];
 * - `restrictions` (`as`): as [method@Sandbox.CodingTools.probe];
 * - `workspace-layering` (`s`): as [method@Sandbox.CodingTools.probe_full];
 * - `landlock-abi` (`u`): the Landlock ABI the session's sandboxes are
 *   scoped with (abstract sockets and signals outside a sandbox refuse
 *   its guest), 0 for none; see
 *   [method@Sandbox.CodingBinding.get_landlock_abi].
 *
 * A stopped session is refused as by [method@Sandbox.CodingTools.probe].
 *
 * Returns: (transfer full): the report, or %NULL with @error set
 */
GVariant *
sandbox_coding_tools_probe_report (SandboxCodingTools  *self,
                                   GError             **error)
{
  g_auto(GStrv) restrictions = NULL;
  g_autofree char *grade = NULL;
  const char *layering = NULL;
  GVariantDict report;

  grade = sandbox_coding_tools_probe_full (self, &restrictions, &layering, error);
  if (grade == NULL)
    return NULL;
  g_variant_dict_init (&report, NULL);
  g_variant_dict_insert (&report, "grade", "s", grade);
  g_variant_dict_insert_value (&report, "restrictions",
                               g_variant_new_strv ((const char *const *) restrictions, -1));
  g_variant_dict_insert (&report, "workspace-layering", "s", layering);
  g_variant_dict_insert (&report, "landlock-abi", "u",
                         sandbox_coding_binding_get_landlock_abi (
                           sandbox_coding_tools_get_binding (self)));
  return g_variant_ref_sink (g_variant_dict_end (&report));
}

/**
 * sandbox_coding_tools_prepare:
 * @self: a [class@Sandbox.CodingTools]
 * @command: the command to launch
 * @required: (nullable) (array zero-terminated=1): the restrictions the
 *   launch requires, or %NULL for [property@Sandbox.CodingTools:required-restrictions]
 * @error: return location for a #GError
 *
 * The adapter's prepare: checks that the session is active and guarantees
 * @required, and binds a launch of @command to the current network policy
 * revision. Otherwise fails with %SANDBOX_ERROR_UNAVAILABLE "Sandbox session
 * cannot execute this operation" and emits [signal@Sandbox.CodingTools::tool-error]
 * with the cause (%SANDBOX_ERROR_NETWORK_DENIED "Sandbox policy no longer
 * satisfies required restrictions", %SANDBOX_ERROR_STOPPED, or
 * %SANDBOX_ERROR_INVALID for an invalid command).
 *
 * Returns: (transfer full): the prepared launch, or %NULL with @error set
 */
SandboxCodingLaunch *
sandbox_coding_tools_prepare (SandboxCodingTools  *self,
                              SandboxCommand      *command,
                              const char * const  *required,
                              GError             **error)
{
  g_auto(GStrv) configured = NULL;
  SandboxCodingLaunch *launch;
  GError *cause = NULL;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_return_val_if_fail (made_by_new (self), NULL);
  g_return_val_if_fail (SANDBOX_IS_COMMAND (command), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (required == NULL)
    {
      configured = sandbox_coding_tools_dup_required_restrictions (self);
      required = (const char * const *) configured;
    }
  launch = sandbox_coding_shell_prepare_launch (sandbox_coding_tools_get_binding (self), command,
                                                required, &cause);
  if (launch == NULL)
    refuse (self, cause, error);
  return launch;
}
