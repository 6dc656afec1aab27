/* sandbox-coding-tools.c — an AI coding agent's shell and file tools over a sandbox
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-coding-tools.h"
#include "sandbox-coding-tools-private.h"
#include "sandbox-coding-shell-private.h"
#include "sandbox-enums.h"
#include "sandbox-error.h"
#include "sandbox-session.h"

/*
 * The adapter: the public object, its configuration, its signals, the
 * definitions and the artifacts. The adapter's entry points (invoke, probe,
 * prepare) are in sandbox-coding-invoke.c; the calls run through the tool table of
 * sandbox-coding-schema.c, by the tools of sandbox-coding-file-tools.c and
 * sandbox-coding-shell.c, over the per-call state of
 * sandbox-coding-call-private.h.
 *
 * Everything the model can get wrong comes back as a result
 * {"ok": false, "error": {"code", "message"}}; messages are fixed strings
 * plus the canonical workspace path the model itself gave, never a GError
 * message from below (which could name host paths) and never a policy.
 */

/**
 * SandboxCodingTools:
 *
 * The coding profile an AI agent mounts to work in a sandbox: `shell`,
 * `read_file`, `write_file`, `edit_file`, `list_files` and `search_files`.
 *
 * [method@Sandbox.CodingTools.get_definitions_json] describes the tools in the
 * shape LLM function calling uses; [method@Sandbox.CodingTools.invoke] runs one
 * call and returns its result as JSON for the model. A call the model got
 * wrong — bad arguments, a path outside the workspace, a missing or binary
 * file, a denied operation, a busy sandbox, an exceeded limit — gives a
 * result `{"ok": false, "error": {"code": …, "message": …}}`, never a
 * #GError; codes are `SANDBOX_INVALID`, `SANDBOX_PATH`, `SANDBOX_DENIED`,
 * `SANDBOX_NOT_FOUND`, `SANDBOX_IS_DIRECTORY`, `SANDBOX_NOT_DIRECTORY`,
 * `SANDBOX_NOT_REGULAR_FILE`, `SANDBOX_NOT_TEXT`, `SANDBOX_NO_MATCH`,
 * `SANDBOX_AMBIGUOUS`, `SANDBOX_LIMIT`, `SANDBOX_BUSY`, `SANDBOX_IO` and
 * `SANDBOX_UNAVAILABLE`. A refusal (the session is stopped, or no longer
 * satisfies the required restrictions) is `SANDBOX_UNAVAILABLE` with the
 * fixed message "Sandbox session cannot execute this operation" and a
 * `reason` naming the cause's code; the cause itself goes to
 * [signal@Sandbox.CodingTools::tool-error] for the host to log. Messages never hold
 * host paths or credentials.
 *
 * Authorization is deny by default: every operation is refused unless a
 * [signal@Sandbox.CodingTools::authorize] handler returns %TRUE. An
 * [signal@Sandbox.CodingTools::authorize-path] handler, if connected, can further
 * refuse individual workspace paths.
 *
 * File tools use the session's contained host-side file access; shell
 * commands run inside the namespace with `/workspace` as their root and
 * count against the same admission limit as direct commands. After the
 * session is stopped every call is refused; after a reconnect, create new
 * tools from the new handle.
 *
 * Signals are emitted in the thread that calls [method@Sandbox.CodingTools.invoke]
 * or [method@Sandbox.CodingTools.invoke_async]; _async runs the work itself in a
 * worker thread.
 */
struct _SandboxCodingTools
{
  GObject parent_instance;

  SandboxCodingBinding *binding;
  SandboxSession *session;

  GMutex lock;
  /* Guarded by @lock. */
  char *shell;
  guint shell_timeout_ms;
  guint max_shell_timeout_ms;
  guint64 max_shell_output_bytes;
  guint64 max_command_output_bytes;
  char **required_restrictions;
  guint max_list_entries;

  SandboxCodingArtifacts *artifacts;   /* with its own lock */
};

G_DEFINE_FINAL_TYPE (SandboxCodingTools, sandbox_coding_tools, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_SHELL,
  PROP_SHELL_TIMEOUT_MS,
  PROP_MAX_SHELL_TIMEOUT_MS,
  PROP_MAX_SHELL_OUTPUT_BYTES,
  PROP_MAX_COMMAND_OUTPUT_BYTES,
  PROP_REQUIRED_RESTRICTIONS,
  PROP_MAX_LIST_ENTRIES,
  PROP_MAX_ARTIFACTS,
  N_PROPS
};

enum {
  SIGNAL_AUTHORIZE,
  SIGNAL_AUTHORIZE_PATH,
  SIGNAL_TOOL_ERROR,
  SIGNAL_SHELL_OUTPUT,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

static const char * const default_required[] = {
  SANDBOX_RESTRICTION_WRITE_CONTAINED,
  SANDBOX_RESTRICTION_PROCESS_CONTAINED,
  SANDBOX_RESTRICTION_SECRETS_HIDDEN,
  NULL
};

static void
sandbox_coding_tools_finalize (GObject *object)
{
  SandboxCodingTools *self = SANDBOX_CODING_TOOLS (object);

  g_clear_object (&self->binding);
  g_clear_object (&self->session);
  g_free (self->shell);
  g_strfreev (self->required_restrictions);
  sandbox_coding_artifacts_free (self->artifacts);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (sandbox_coding_tools_parent_class)->finalize (object);
}

static void
sandbox_coding_tools_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  SandboxCodingTools *self = SANDBOX_CODING_TOOLS (object);

  g_mutex_lock (&self->lock);
  switch (prop_id)
    {
    case PROP_SHELL:
      g_value_set_string (value, self->shell);
      break;
    case PROP_SHELL_TIMEOUT_MS:
      g_value_set_uint (value, self->shell_timeout_ms);
      break;
    case PROP_MAX_SHELL_TIMEOUT_MS:
      g_value_set_uint (value, self->max_shell_timeout_ms);
      break;
    case PROP_MAX_SHELL_OUTPUT_BYTES:
      g_value_set_uint64 (value, self->max_shell_output_bytes);
      break;
    case PROP_MAX_COMMAND_OUTPUT_BYTES:
      g_value_set_uint64 (value, self->max_command_output_bytes);
      break;
    case PROP_REQUIRED_RESTRICTIONS:
      g_value_set_boxed (value, self->required_restrictions);
      break;
    case PROP_MAX_LIST_ENTRIES:
      g_value_set_uint (value, self->max_list_entries);
      break;
    case PROP_MAX_ARTIFACTS:
      g_value_set_uint (value, sandbox_coding_artifacts_get_max (self->artifacts));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
  g_mutex_unlock (&self->lock);
}

static void
sandbox_coding_tools_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  SandboxCodingTools *self = SANDBOX_CODING_TOOLS (object);

  g_mutex_lock (&self->lock);
  switch (prop_id)
    {
    case PROP_SHELL:
      g_free (self->shell);
      self->shell = g_value_dup_string (value);
      if (self->shell == NULL || self->shell[0] == '\0')
        {
          g_free (self->shell);
          self->shell = g_strdup (SANDBOX_CODING_DEFAULT_SHELL);
        }
      break;
    case PROP_SHELL_TIMEOUT_MS:
      self->shell_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_MAX_SHELL_TIMEOUT_MS:
      self->max_shell_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_MAX_SHELL_OUTPUT_BYTES:
      self->max_shell_output_bytes = g_value_get_uint64 (value);
      break;
    case PROP_MAX_COMMAND_OUTPUT_BYTES:
      self->max_command_output_bytes = g_value_get_uint64 (value);
      break;
    case PROP_REQUIRED_RESTRICTIONS:
      g_strfreev (self->required_restrictions);
      self->required_restrictions = g_value_dup_boxed (value);
      if (self->required_restrictions == NULL)
        self->required_restrictions = g_strdupv ((char **) default_required);
      break;
    case PROP_MAX_LIST_ENTRIES:
      self->max_list_entries = g_value_get_uint (value);
      break;
    case PROP_MAX_ARTIFACTS:
      sandbox_coding_artifacts_set_max (self->artifacts, g_value_get_uint (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
  g_mutex_unlock (&self->lock);
}

static void
sandbox_coding_tools_class_init (SandboxCodingToolsClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_coding_tools_finalize;
  object_class->get_property = sandbox_coding_tools_get_property;
  object_class->set_property = sandbox_coding_tools_set_property;

  /**
   * SandboxCodingTools:shell:
   *
   * The shell inside the sandbox that runs `shell` commands as
   * `SHELL -c COMMAND`.
   */
  properties[PROP_SHELL] =
    g_param_spec_string ("shell", NULL, NULL, SANDBOX_CODING_DEFAULT_SHELL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCodingTools:shell-timeout-ms:
   *
   * The deadline of a `shell` call that does not give `timeout_ms`; past
   * it the command's process group is killed and the result is a
   * `SANDBOX_LIMIT` error. Two minutes by default, for builds and tests.
   */
  properties[PROP_SHELL_TIMEOUT_MS] =
    g_param_spec_uint ("shell-timeout-ms", NULL, NULL,
                       1, SANDBOX_COMMAND_MAX_TIMEOUT_MS, SANDBOX_CODING_DEFAULT_SHELL_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCodingTools:max-shell-timeout-ms:
   *
   * The largest `timeout_ms` a model may give a `shell` call; a larger one
   * is refused with `SANDBOX_LIMIT` naming this bound, which the tool
   * definitions also state. It bounds only what the model asks for:
   * [property@Sandbox.CodingTools:shell-timeout-ms], set by the host, may exceed it.
   */
  properties[PROP_MAX_SHELL_TIMEOUT_MS] =
    g_param_spec_uint ("max-shell-timeout-ms", NULL, NULL,
                       1, SANDBOX_COMMAND_MAX_TIMEOUT_MS, SANDBOX_CODING_DEFAULT_MAX_SHELL_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCodingTools:max-shell-output-bytes:
   *
   * The most output (stdout and stderr together) a `shell` result shows the
   * model, counted in the command's own bytes: invalid UTF-8 shows as
   * U+FFFD and counts one byte per invalid byte. Past it a stream shows its
   * head and its tail (where build errors and test summaries are), about
   * half the stream's share each and never cut inside a character, joined
   * by a line `[... N bytes omitted ...]`; the result says
   * `"truncated": true` and names an artifact holding the whole output,
   * which the host fetches with [method@Sandbox.CodingTools.get_artifact]. The
   * command runs on regardless: only
   * [property@Sandbox.CodingTools:max-command-output-bytes] stops it.
   */
  properties[PROP_MAX_SHELL_OUTPUT_BYTES] =
    g_param_spec_uint64 ("max-shell-output-bytes", NULL, NULL,
                         1, G_MAXSIZE, SANDBOX_CODING_DEFAULT_MAX_SHELL_OUTPUT_BYTES,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCodingTools:max-command-output-bytes:
   *
   * The output cap of the sandbox command a `shell` call runs, and so of
   * its artifact (8 MiB by default); past it the command is killed
   * ("Sandbox output limit exceeded") and the artifact holds the output
   * that arrived within the cap (the read that crossed it is dropped
   * whole). Up to [property@Sandbox.CodingTools:max-artifacts] of these are kept in
   * memory.
   */
  properties[PROP_MAX_COMMAND_OUTPUT_BYTES] =
    g_param_spec_uint64 ("max-command-output-bytes", NULL, NULL,
                         1, G_MAXSIZE, SANDBOX_CODING_DEFAULT_MAX_COMMAND_OUTPUT_BYTES,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCodingTools:required-restrictions:
   *
   * The restrictions every shell launch requires, checked again at each
   * preparation. Defaults to write-contained, process-contained and
   * secrets-hidden; add network-denied to refuse commands unless the
   * policy is deny-all.
   */
  properties[PROP_REQUIRED_RESTRICTIONS] =
    g_param_spec_boxed ("required-restrictions", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCodingTools:max-list-entries:
   *
   * The most entries a `list_files` result holds.
   */
  properties[PROP_MAX_LIST_ENTRIES] =
    g_param_spec_uint ("max-list-entries", NULL, NULL,
                       1, 1000000, SANDBOX_CODING_DEFAULT_MAX_LIST_ENTRIES,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCodingTools:max-artifacts:
   *
   * How many truncated outputs are kept in memory for the host; the oldest
   * is dropped first.
   */
  properties[PROP_MAX_ARTIFACTS] =
    g_param_spec_uint ("max-artifacts", NULL, NULL,
                       0, 4096, SANDBOX_CODING_DEFAULT_MAX_ARTIFACTS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SandboxCodingTools::authorize:
   * @self: the tools
   * @operation: the operation about to run
   *
   * Asks the host whether @operation may run. The first handler decides;
   * with no handler every operation is denied and the model gets a
   * `SANDBOX_DENIED` result.
   *
   * Returns: %TRUE to allow @operation
   */
  signals[SIGNAL_AUTHORIZE] =
    g_signal_new ("authorize",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0,
                  g_signal_accumulator_first_wins, NULL, NULL,
                  G_TYPE_BOOLEAN, 1, SANDBOX_TYPE_CODING_OPERATION);

  /**
   * SandboxCodingTools::authorize-path:
   * @self: the tools
   * @operation: the operation about to run, whose path is set
   *
   * Asks the host whether the canonical workspace path of @operation may
   * be touched. Emitted after [signal@Sandbox.CodingTools::authorize] allowed the
   * operation, for operations with a path; with no handler every path
   * inside the workspace is allowed.
   *
   * Returns: %TRUE to allow the path
   */
  signals[SIGNAL_AUTHORIZE_PATH] =
    g_signal_new ("authorize-path",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0,
                  g_signal_accumulator_first_wins, NULL, NULL,
                  G_TYPE_BOOLEAN, 1, SANDBOX_TYPE_CODING_OPERATION);

  /**
   * SandboxCodingTools::tool-error:
   * @self: the tools
   * @tool: (nullable): the tool whose call was refused, or %NULL for
   *   [method@Sandbox.CodingTools.probe] and [method@Sandbox.CodingTools.prepare]
   * @cause: the error behind the refusal
   *
   * Emitted when a call is refused with a fixed reason (or failed for a
   * reason the model is not told), with the real error, for the host to
   * log. The cause may name host details; never pass it to the model.
   */
  signals[SIGNAL_TOOL_ERROR] =
    g_signal_new ("tool-error",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_ERROR);

  /**
   * SandboxCodingTools::shell-output:
   * @self: the tools
   * @stream: which stream @data came on
   * @data: a chunk of output, as it arrived
   *
   * Emitted while a `shell` call runs, for each chunk of its command's
   * output, so the host can show the command live (the model still gets
   * its bounded view at the end). In the thread that called
   * [method@Sandbox.CodingTools.invoke]; for
   * [method@Sandbox.CodingTools.invoke_async], in the thread-default main
   * context of the thread that called it, while that context runs.
   */
  signals[SIGNAL_SHELL_OUTPUT] =
    g_signal_new ("shell-output",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, SANDBOX_TYPE_OUTPUT_STREAM, G_TYPE_BYTES);
}

static void
sandbox_coding_tools_init (SandboxCodingTools *self)
{
  g_mutex_init (&self->lock);
  self->artifacts = sandbox_coding_artifacts_new ();
}

/**
 * sandbox_coding_tools_new:
 * @handle: a live [class@Sandbox.Handle]
 * @error: return location for a #GError
 *
 * Creates the coding profile over @handle's host-only coding binding.
 * Fails with %SANDBOX_ERROR_UNAVAILABLE "Backend does not expose a host
 * coding workspace" for backends without one, and with
 * %SANDBOX_ERROR_STOPPED when the session is already stopped.
 *
 * The tools deny everything until an [signal@Sandbox.CodingTools::authorize] handler
 * is connected.
 *
 * Returns: (transfer full): the tools, or %NULL with @error set
 */
SandboxCodingTools *
sandbox_coding_tools_new (SandboxHandle  *handle,
                          GError        **error)
{
  SandboxCodingBinding *binding;
  SandboxCodingTools *self;

  g_return_val_if_fail (SANDBOX_IS_HANDLE (handle), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  binding = sandbox_handle_get_coding_binding (handle);
  if (binding == NULL)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "Backend does not expose a host coding workspace");
      return NULL;
    }
  if (!sandbox_coding_binding_check_active (binding, error))
    return NULL;

  self = g_object_new (SANDBOX_TYPE_CODING_TOOLS, NULL);
  self->binding = g_object_ref (binding);
  self->session = g_object_ref (sandbox_handle_get_session (handle));
  return self;
}

/**
 * sandbox_coding_tools_dup_shell:
 * @self: a [class@Sandbox.CodingTools]
 *
 * Gets [property@Sandbox.CodingTools:shell].
 *
 * Returns: (transfer full): the shell `shell` commands run with
 */
char *
sandbox_coding_tools_dup_shell (SandboxCodingTools *self)
{
  char *shell;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_object_get (self, "shell", &shell, NULL);
  return shell;
}

/**
 * sandbox_coding_tools_set_shell:
 * @self: a [class@Sandbox.CodingTools]
 * @shell: (nullable): the shell's path inside the sandbox, or %NULL for
 *   %SANDBOX_CODING_DEFAULT_SHELL
 *
 * Sets [property@Sandbox.CodingTools:shell].
 */
void
sandbox_coding_tools_set_shell (SandboxCodingTools *self,
                                const char         *shell)
{
  g_return_if_fail (SANDBOX_IS_CODING_TOOLS (self));
  g_object_set (self, "shell", shell, NULL);
}

/**
 * sandbox_coding_tools_get_shell_timeout_ms:
 * @self: a [class@Sandbox.CodingTools]
 *
 * Gets [property@Sandbox.CodingTools:shell-timeout-ms].
 *
 * Returns: the deadline of a `shell` call, in milliseconds
 */
guint
sandbox_coding_tools_get_shell_timeout_ms (SandboxCodingTools *self)
{
  guint value;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), 0);
  g_object_get (self, "shell-timeout-ms", &value, NULL);
  return value;
}

/**
 * sandbox_coding_tools_set_shell_timeout_ms:
 * @self: a [class@Sandbox.CodingTools]
 * @timeout_ms: the deadline, 1 … %G_MAXINT32
 *
 * Sets [property@Sandbox.CodingTools:shell-timeout-ms].
 */
void
sandbox_coding_tools_set_shell_timeout_ms (SandboxCodingTools *self,
                                           guint               timeout_ms)
{
  g_return_if_fail (SANDBOX_IS_CODING_TOOLS (self));
  g_return_if_fail (timeout_ms >= 1 && timeout_ms <= SANDBOX_COMMAND_MAX_TIMEOUT_MS);
  g_object_set (self, "shell-timeout-ms", timeout_ms, NULL);
}

/**
 * sandbox_coding_tools_get_max_shell_output_bytes:
 * @self: a [class@Sandbox.CodingTools]
 *
 * Gets [property@Sandbox.CodingTools:max-shell-output-bytes].
 *
 * Returns: the most output a `shell` result shows the model
 */
gsize
sandbox_coding_tools_get_max_shell_output_bytes (SandboxCodingTools *self)
{
  guint64 value;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), 0);
  g_object_get (self, "max-shell-output-bytes", &value, NULL);
  return value;
}

/**
 * sandbox_coding_tools_set_max_shell_output_bytes:
 * @self: a [class@Sandbox.CodingTools]
 * @max_bytes: the cap, at least 1
 *
 * Sets [property@Sandbox.CodingTools:max-shell-output-bytes].
 */
void
sandbox_coding_tools_set_max_shell_output_bytes (SandboxCodingTools *self,
                                                 gsize               max_bytes)
{
  g_return_if_fail (SANDBOX_IS_CODING_TOOLS (self));
  g_return_if_fail (max_bytes >= 1);
  g_object_set (self, "max-shell-output-bytes", (guint64) max_bytes, NULL);
}

/**
 * sandbox_coding_tools_dup_required_restrictions:
 * @self: a [class@Sandbox.CodingTools]
 *
 * Gets [property@Sandbox.CodingTools:required-restrictions].
 *
 * Returns: (transfer full) (array zero-terminated=1): the restrictions every
 *   shell launch requires
 */
char **
sandbox_coding_tools_dup_required_restrictions (SandboxCodingTools *self)
{
  char **value;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_object_get (self, "required-restrictions", &value, NULL);
  return value;
}

/**
 * sandbox_coding_tools_set_required_restrictions:
 * @self: a [class@Sandbox.CodingTools]
 * @restrictions: (nullable) (array zero-terminated=1): the restrictions, or
 *   %NULL for the default
 *
 * Sets [property@Sandbox.CodingTools:required-restrictions].
 */
void
sandbox_coding_tools_set_required_restrictions (SandboxCodingTools *self,
                                                const char * const *restrictions)
{
  g_return_if_fail (SANDBOX_IS_CODING_TOOLS (self));
  g_object_set (self, "required-restrictions", restrictions, NULL);
}

/* What a call needs of its tools ------------------------------------------ */

/* A call over the tools' session, binding and artifacts. */
SandboxCodingCall *
sandbox_coding_tools_new_call (SandboxCodingTools *self)
{
  return sandbox_coding_call_new (G_OBJECT (self), self->binding, self->session,
                                  self->artifacts);
}

SandboxCodingBinding *
sandbox_coding_tools_get_binding (SandboxCodingTools *self)
{
  return self->binding;
}

/* The limits the definitions and the argument check state. */
void
sandbox_coding_tools_get_limits (SandboxCodingTools  *self,
                                 SandboxCodingLimits *limits)
{
  g_mutex_lock (&self->lock);
  limits->shell_timeout_ms = self->shell_timeout_ms;
  limits->max_shell_timeout_ms = self->max_shell_timeout_ms;
  g_mutex_unlock (&self->lock);
}

/**
 * sandbox_coding_tools_get_definitions_json:
 * @self: a [class@Sandbox.CodingTools]
 *
 * Describes the tools for a model, as a JSON array of
 * `{"name", "description", "parameters"}` objects whose parameters are JSON
 * Schemas with `additionalProperties: false` — the shape LLM function
 * calling uses. The `shell` definition states the current
 * [property@Sandbox.CodingTools:shell-timeout-ms] and
 * [property@Sandbox.CodingTools:max-shell-timeout-ms].
 *
 * Returns: (transfer full): the definitions as JSON
 */
char *
sandbox_coding_tools_get_definitions_json (SandboxCodingTools *self)
{
  return sandbox_coding_tools_get_definitions_json_full (self,
                                                        SANDBOX_CODING_DEFINITION_SHAPE_PARAMETERS);
}

/**
 * sandbox_coding_tools_get_definitions_json_full:
 * @self: a [class@Sandbox.CodingTools]
 * @shape: how each definition is spelled
 *
 * [method@Sandbox.CodingTools.get_definitions_json] in the shape a model's
 * API takes: with %SANDBOX_CODING_DEFINITION_SHAPE_INPUT_SCHEMA each
 * definition is `{"name", "description", "input_schema"}`, as the
 * Anthropic Messages API's `tools` array wants it.
 *
 * Returns: (transfer full): the definitions as JSON
 */
char *
sandbox_coding_tools_get_definitions_json_full (SandboxCodingTools           *self,
                                                SandboxCodingDefinitionShape  shape)
{
  SandboxCodingLimits limits;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_return_val_if_fail (shape == SANDBOX_CODING_DEFINITION_SHAPE_PARAMETERS ||
                        shape == SANDBOX_CODING_DEFINITION_SHAPE_INPUT_SCHEMA, NULL);

  sandbox_coding_tools_get_limits (self, &limits);
  return sandbox_coding_schema_dup_definitions (&limits,
                                                shape == SANDBOX_CODING_DEFINITION_SHAPE_INPUT_SCHEMA
                                                ? "input_schema" : "parameters");
}

static gboolean
emit_authorize (SandboxCodingTools     *self,
                guint                   signal_id,
                SandboxCodingOperation *operation)
{
  gboolean allowed = FALSE;

  g_signal_emit (self, signals[signal_id], 0, operation, &allowed);
  return allowed;
}

/* The configuration a call runs with, taken once it is authorized. */
void
sandbox_coding_tools_snapshot (SandboxCodingTools *self,
                               SandboxCodingCall  *call)
{
  guint max_timeout_ms;

  g_mutex_lock (&self->lock);
  call->shell = g_strdup (self->shell);
  call->shell_timeout_ms = self->shell_timeout_ms;
  max_timeout_ms = self->max_shell_timeout_ms;
  call->max_shell_output_bytes = self->max_shell_output_bytes;
  call->max_command_output_bytes = self->max_command_output_bytes;
  call->required = g_strdupv (self->required_restrictions);
  call->max_list_entries = self->max_list_entries;
  g_mutex_unlock (&self->lock);

  /* The model may ask for a deadline, bounded above. */
  if (call->timeout_ms > 0)
    call->shell_timeout_ms = (guint) MIN (call->timeout_ms, (gint64) max_timeout_ms);
}

/* Deny by default: no handler, no operation. NULL when the host allows
 * @call, otherwise the refusal for the model. */
JsonNode *
sandbox_coding_tools_authorize (SandboxCodingTools      *self,
                                const SandboxCodingCall *call)
{
  g_autoptr(SandboxCodingOperation) operation = NULL;

  operation = g_object_new (SANDBOX_TYPE_CODING_OPERATION,
                            "tool", call->tool->name,
                            "kind", call->tool->kind,
                            "path", call->path,
                            "command", call->command,
                            NULL);
  if (!emit_authorize (self, SIGNAL_AUTHORIZE, operation))
    return sandbox_coding_error_result ("SANDBOX_DENIED", NULL,
                                        "The host did not authorize this %s call", call->tool->name);
  if (g_signal_has_handler_pending (self, signals[SIGNAL_AUTHORIZE_PATH], 0, TRUE) &&
      !emit_authorize (self, SIGNAL_AUTHORIZE_PATH, operation))
    return sandbox_coding_error_result ("SANDBOX_DENIED", NULL,
                                        "The host did not authorize access to %s", call->path);
  return NULL;
}

/* For the cause of a refusal: the host's log, never the model. */
void
sandbox_coding_tools_emit_tool_error (SandboxCodingTools *self,
                                      const char         *tool,
                                      const GError       *cause)
{
  g_signal_emit (self, signals[SIGNAL_TOOL_ERROR], 0, tool, cause);
}

/**
 * sandbox_coding_tools_get_artifact:
 * @self: a [class@Sandbox.CodingTools]
 * @artifact_id: an `artifact_id` from a truncated `shell` result
 * @stderr_bytes: (out) (optional) (transfer full): the command's standard
 *   error
 *
 * Gives the host the whole output of a `shell` call whose result was
 * truncated, up to [property@Sandbox.CodingTools:max-command-output-bytes]. Only the
 * last [property@Sandbox.CodingTools:max-artifacts] artifacts are kept, in memory.
 *
 * Returns: (transfer full) (nullable): the command's standard output, or
 *   %NULL if @artifact_id is unknown or was dropped
 */
GBytes *
sandbox_coding_tools_get_artifact (SandboxCodingTools  *self,
                                   const char          *artifact_id,
                                   GBytes             **stderr_bytes)
{
  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_return_val_if_fail (artifact_id != NULL, NULL);

  if (stderr_bytes != NULL)
    *stderr_bytes = NULL;
  return sandbox_coding_artifacts_lookup (self->artifacts, artifact_id, stderr_bytes);
}
