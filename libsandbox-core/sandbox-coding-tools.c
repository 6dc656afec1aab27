/* sandbox-coding-tools.c — an AI coding agent's shell and file tools over a sandbox
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "sandbox-coding-tools.h"
#include "sandbox-json-private.h"
#include "sandbox-coding-launch-private.h"
#include "sandbox-enums.h"
#include "sandbox-error.h"
#include "sandbox-path.h"
#include "sandbox-session.h"

/*
 * An invocation runs in three phases:
 *
 *  1. in the caller's thread: the session must be active, the arguments
 *     are parsed strictly, paths canonicalized, and the host authorizes the
 *     operation (#SandboxCodingTools::authorize, then ::authorize-path);
 *  2. the work: file I/O through the session's contained host-side
 *     implementation, listings through the binding, shell commands through
 *     prepare/spawn on the binding (in a worker thread for _async);
 *  3. back in the caller's thread: ::tool-error for a refusal's cause, and
 *     the result JSON.
 *
 * Everything the model can get wrong comes back as a result
 * {"ok": false, "error": {"code", "message"}}; messages are fixed strings
 * plus the canonical workspace path the model itself gave, never a GError
 * message from below (which could name host paths) and never a policy.
 */

#define FIXED_REFUSAL "Sandbox session cannot execute this operation"
#define MAX_ARGUMENTS_BYTES (4 * 1024 * 1024)
#define MAX_SHELL_COMMAND_BYTES (64 * 1024)
#define DEFAULT_READ_LIMIT_LINES 2000
/* SandboxProcess's message for an output overflow (a fixed reference string). */
#define OUTPUT_LIMIT_MESSAGE "Sandbox output limit exceeded"

/**
 * SandboxCodingTools:
 *
 * The coding profile an AI agent mounts to work in a sandbox: `shell`,
 * `read_file`, `write_file`, `edit_file` and `list_files`.
 *
 * sandbox_coding_tools_get_definitions_json() describes the tools in the
 * shape LLM function calling uses; sandbox_coding_tools_invoke() runs one
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
 * #SandboxCodingTools::tool-error for the host to log. Messages never hold
 * host paths or credentials.
 *
 * Authorization is deny by default: every operation is refused unless a
 * #SandboxCodingTools::authorize handler returns %TRUE. An
 * #SandboxCodingTools::authorize-path handler, if connected, can further
 * refuse individual workspace paths.
 *
 * File tools use the session's contained host-side file access; shell
 * commands run inside the namespace with `/workspace` as their root and
 * count against the same admission limit as direct commands. After the
 * session is stopped every call is refused; after a reconnect, create new
 * tools from the new handle.
 *
 * Signals are emitted in the thread that calls sandbox_coding_tools_invoke()
 * or sandbox_coding_tools_invoke_async(); _async runs the work itself in a
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
  guint max_artifacts;
  GHashTable *artifacts;     /* id → Artifact */
  GQueue artifact_order;     /* ids, oldest first */
  guint64 next_artifact;
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

typedef struct
{
  GBytes *stdout_bytes;
  GBytes *stderr_bytes;
} Artifact;

static void
artifact_free (Artifact *artifact)
{
  g_bytes_unref (artifact->stdout_bytes);
  g_bytes_unref (artifact->stderr_bytes);
  g_free (artifact);
}

static void
sandbox_coding_tools_finalize (GObject *object)
{
  SandboxCodingTools *self = SANDBOX_CODING_TOOLS (object);

  g_clear_object (&self->binding);
  g_clear_object (&self->session);
  g_free (self->shell);
  g_strfreev (self->required_restrictions);
  g_hash_table_unref (self->artifacts);
  g_queue_clear_full (&self->artifact_order, g_free);
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
      g_value_set_uint (value, self->max_artifacts);
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
      self->max_artifacts = g_value_get_uint (value);
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
   * #SandboxCodingTools:shell-timeout-ms, set by the host, may exceed it.
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
   * which the host fetches with sandbox_coding_tools_get_artifact(). The
   * command runs on regardless: only
   * #SandboxCodingTools:max-command-output-bytes stops it.
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
   * whole). Up to #SandboxCodingTools:max-artifacts of these are kept in
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
   * be touched. Emitted after #SandboxCodingTools::authorize allowed the
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
   *   sandbox_coding_tools_probe() and sandbox_coding_tools_prepare()
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
}

static void
sandbox_coding_tools_init (SandboxCodingTools *self)
{
  g_mutex_init (&self->lock);
  self->artifacts = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                           (GDestroyNotify) artifact_free);
  g_queue_init (&self->artifact_order);
  self->next_artifact = 1;
}

/**
 * sandbox_coding_tools_new:
 * @handle: a live #SandboxHandle
 * @error: return location for a #GError
 *
 * Creates the coding profile over @handle's host-only coding binding.
 * Fails with %SANDBOX_ERROR_UNAVAILABLE "Backend does not expose a host
 * coding workspace" for backends without one, and with
 * %SANDBOX_ERROR_STOPPED when the session is already stopped.
 *
 * The tools deny everything until an #SandboxCodingTools::authorize handler
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
 * @self: a #SandboxCodingTools
 *
 * Gets #SandboxCodingTools:shell.
 *
 * Returns: (transfer full): the shell `shell` commands run with
 */
char *
sandbox_coding_tools_dup_shell (SandboxCodingTools *self)
{
  char *shell;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);

  g_mutex_lock (&self->lock);
  shell = g_strdup (self->shell);
  g_mutex_unlock (&self->lock);
  return shell;
}

/**
 * sandbox_coding_tools_set_shell:
 * @self: a #SandboxCodingTools
 * @shell: (nullable): the shell's path inside the sandbox, or %NULL for
 *   %SANDBOX_CODING_DEFAULT_SHELL
 *
 * Sets #SandboxCodingTools:shell.
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
 * @self: a #SandboxCodingTools
 *
 * Gets #SandboxCodingTools:shell-timeout-ms.
 *
 * Returns: the deadline of a `shell` call, in milliseconds
 */
guint
sandbox_coding_tools_get_shell_timeout_ms (SandboxCodingTools *self)
{
  guint value;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), 0);
  g_mutex_lock (&self->lock);
  value = self->shell_timeout_ms;
  g_mutex_unlock (&self->lock);
  return value;
}

/**
 * sandbox_coding_tools_set_shell_timeout_ms:
 * @self: a #SandboxCodingTools
 * @timeout_ms: the deadline, 1 … %G_MAXINT32
 *
 * Sets #SandboxCodingTools:shell-timeout-ms.
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
 * @self: a #SandboxCodingTools
 *
 * Gets #SandboxCodingTools:max-shell-output-bytes.
 *
 * Returns: the most output a `shell` result shows the model
 */
gsize
sandbox_coding_tools_get_max_shell_output_bytes (SandboxCodingTools *self)
{
  gsize value;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), 0);
  g_mutex_lock (&self->lock);
  value = self->max_shell_output_bytes;
  g_mutex_unlock (&self->lock);
  return value;
}

/**
 * sandbox_coding_tools_set_max_shell_output_bytes:
 * @self: a #SandboxCodingTools
 * @max_bytes: the cap, at least 1
 *
 * Sets #SandboxCodingTools:max-shell-output-bytes.
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
 * @self: a #SandboxCodingTools
 *
 * Gets #SandboxCodingTools:required-restrictions.
 *
 * Returns: (transfer full) (array zero-terminated=1): the restrictions every
 *   shell launch requires
 */
char **
sandbox_coding_tools_dup_required_restrictions (SandboxCodingTools *self)
{
  char **value;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_mutex_lock (&self->lock);
  value = g_strdupv (self->required_restrictions);
  g_mutex_unlock (&self->lock);
  return value;
}

/**
 * sandbox_coding_tools_set_required_restrictions:
 * @self: a #SandboxCodingTools
 * @restrictions: (nullable) (array zero-terminated=1): the restrictions, or
 *   %NULL for the default
 *
 * Sets #SandboxCodingTools:required-restrictions.
 */
void
sandbox_coding_tools_set_required_restrictions (SandboxCodingTools *self,
                                                const char * const *restrictions)
{
  g_return_if_fail (SANDBOX_IS_CODING_TOOLS (self));
  g_object_set (self, "required-restrictions", restrictions, NULL);
}

/* Results --------------------------------------------------------------- */

static JsonNode *
error_result (const char *code,
              const char *reason,
              const char *format,
              ...) G_GNUC_PRINTF (3, 4);

static JsonNode *
error_result (const char *code,
              const char *reason,
              const char *format,
              ...)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, FALSE);
  json_builder_set_member_name (builder, "error");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "code");
  json_builder_add_string_value (builder, code);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, message);
  if (reason != NULL)
    {
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, reason);
    }
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

static const char *
error_code_name (const GError *error)
{
  if (error->domain == SANDBOX_ERROR)
    return sandbox_error_code_name (error->code);
  return "SANDBOX_UNAVAILABLE";
}

/* The refusal of the reference's assertToolActive/prepare: a fixed message
 * and the cause's code; the cause is kept for ::tool-error. */
static JsonNode *
refusal_result (GError  *cause,
                GError **cause_out)
{
  JsonNode *result = error_result ("SANDBOX_UNAVAILABLE", error_code_name (cause),
                                   "%s", FIXED_REFUSAL);

  g_propagate_error (cause_out, cause);
  return result;
}

/* Maps an error of the contained file layer to what the model may see.
 * @path is the canonical path the model asked for. */
static JsonNode *
file_error_result (const char  *verb,
                   const char  *path,
                   GError      *error,
                   GError     **cause_out)
{
  g_autoptr(GError) owned = error;

  if (error->domain == SANDBOX_ERROR)
    switch (error->code)
      {
      case SANDBOX_ERROR_PATH:
        return error_result ("SANDBOX_PATH", NULL, "Cannot %s %s: the path leads out of the workspace",
                             verb, path);
      case SANDBOX_ERROR_LIMIT:
        return error_result ("SANDBOX_LIMIT", NULL, "Cannot %s %s: files are limited to %d bytes",
                             verb, path, SANDBOX_MAX_FILE_BYTES);
      case SANDBOX_ERROR_BUSY:
        return error_result ("SANDBOX_BUSY", NULL, "Cannot %s %s: the sandbox is busy", verb, path);
      case SANDBOX_ERROR_STOPPED:
      case SANDBOX_ERROR_UNAVAILABLE:
        return refusal_result (g_steal_pointer (&owned), cause_out);
      default:
        break;
      }
  else if (error->domain == G_IO_ERROR)
    switch (error->code)
      {
      case G_IO_ERROR_NOT_FOUND:
        return error_result ("SANDBOX_NOT_FOUND", NULL, "Cannot %s %s: no such file or directory",
                             verb, path);
      case G_IO_ERROR_IS_DIRECTORY:
        return error_result ("SANDBOX_IS_DIRECTORY", NULL, "Cannot %s %s: it is a directory",
                             verb, path);
      case G_IO_ERROR_NOT_DIRECTORY:
        return error_result ("SANDBOX_NOT_DIRECTORY", NULL,
                             "Cannot %s %s: it or one of its parents is not a directory",
                             verb, path);
      case G_IO_ERROR_NOT_REGULAR_FILE:
        return error_result ("SANDBOX_NOT_REGULAR_FILE", NULL,
                             "Cannot %s %s: it is not a regular file", verb, path);
      case G_IO_ERROR_BUSY:
        return error_result ("SANDBOX_BUSY", NULL,
                             "Cannot %s %s: the workspace kept changing, try again", verb, path);
      default:
        break;
      }
  else if (error->domain == G_CONVERT_ERROR)
    return error_result ("SANDBOX_NOT_TEXT", NULL,
                         "Cannot %s %s: it is not UTF-8 text (binary files are not supported)",
                         verb, path);

  /* Anything else: a generic message for the model, the cause for the host. */
  g_propagate_error (cause_out, g_steal_pointer (&owned));
  return error_result ("SANDBOX_IO", NULL, "Cannot %s %s", verb, path);
}

/* Arguments ------------------------------------------------------------- */

typedef enum
{
  TOOL_SHELL,
  TOOL_READ_FILE,
  TOOL_WRITE_FILE,
  TOOL_EDIT_FILE,
  TOOL_LIST_FILES,
} Tool;

typedef enum
{
  ARG_STRING,
  ARG_INTEGER,
} ArgType;

typedef struct
{
  const char *name;
  ArgType type;
  gboolean required;
} ArgSpec;

typedef struct
{
  const char *name;
  Tool tool;
  SandboxCodingOperationKind kind;
  const ArgSpec *args;
} ToolSpec;

static const ArgSpec shell_args[] = {
  { "command", ARG_STRING, TRUE },
  { "cwd", ARG_STRING, FALSE },
  { "timeout_ms", ARG_INTEGER, FALSE },
  { NULL }
};
static const ArgSpec read_file_args[] = {
  { "path", ARG_STRING, TRUE },
  { "offset", ARG_INTEGER, FALSE },
  { "limit", ARG_INTEGER, FALSE },
  { NULL }
};
static const ArgSpec write_file_args[] = {
  { "path", ARG_STRING, TRUE },
  { "content", ARG_STRING, TRUE },
  { NULL }
};
static const ArgSpec edit_file_args[] = {
  { "path", ARG_STRING, TRUE },
  { "old_string", ARG_STRING, TRUE },
  { "new_string", ARG_STRING, TRUE },
  { NULL }
};
static const ArgSpec list_files_args[] = {
  { "path", ARG_STRING, FALSE },
  { NULL }
};

static const ToolSpec tool_specs[] = {
  { "shell", TOOL_SHELL, SANDBOX_CODING_OPERATION_EXECUTE, shell_args },
  { "read_file", TOOL_READ_FILE, SANDBOX_CODING_OPERATION_READ, read_file_args },
  { "write_file", TOOL_WRITE_FILE, SANDBOX_CODING_OPERATION_WRITE, write_file_args },
  { "edit_file", TOOL_EDIT_FILE, SANDBOX_CODING_OPERATION_EDIT, edit_file_args },
  { "list_files", TOOL_LIST_FILES, SANDBOX_CODING_OPERATION_LIST, list_files_args },
};

/* What the model sees: the function-calling shape, strict schemas. A
 * printf format: the two %u are the default and the largest timeout_ms. */
static const char tool_definitions_format[] =
  "["
  "{\"name\":\"shell\","
  "\"description\":\"Run a shell command inside the sandbox with /workspace as the working "
  "directory (or cwd). Returns exit_status, stdout, stderr and truncated; long output shows "
  "its beginning and its end with a marker saying how many bytes were left out between. "
  "The command has a deadline (timeout_ms, default %u) and no network unless the host allows "
  "it. Each call starts afresh: only files under /workspace persist between calls; /tmp, "
  "background processes, environment changes and network state do not.\","
  "\"parameters\":{\"type\":\"object\",\"properties\":{"
  "\"command\":{\"type\":\"string\",\"description\":\"The command line, run with sh -c\"},"
  "\"cwd\":{\"type\":\"string\",\"description\":\"Working directory, relative to /workspace\"},"
  "\"timeout_ms\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":%u,\"description\":"
  "\"Deadline of this command in milliseconds; give a longer one for long builds or test "
  "suites\"}},"
  "\"required\":[\"command\"],\"additionalProperties\":false}},"
  "{\"name\":\"read_file\","
  "\"description\":\"Read a UTF-8 text file of the workspace, optionally a range of lines. "
  "Binary files are refused.\","
  "\"parameters\":{\"type\":\"object\",\"properties\":{"
  "\"path\":{\"type\":\"string\",\"description\":\"File path, relative to /workspace\"},"
  "\"offset\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"First line to read, from 1\"},"
  "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"How many lines to read\"}},"
  "\"required\":[\"path\"],\"additionalProperties\":false}},"
  "{\"name\":\"write_file\","
  "\"description\":\"Create or replace a file of the workspace with the given text, creating "
  "parent directories.\","
  "\"parameters\":{\"type\":\"object\",\"properties\":{"
  "\"path\":{\"type\":\"string\",\"description\":\"File path, relative to /workspace\"},"
  "\"content\":{\"type\":\"string\",\"description\":\"The complete new contents\"}},"
  "\"required\":[\"path\",\"content\"],\"additionalProperties\":false}},"
  "{\"name\":\"edit_file\","
  "\"description\":\"Replace exactly one occurrence of old_string with new_string in a text "
  "file of the workspace. Fails if old_string occurs zero or several times.\","
  "\"parameters\":{\"type\":\"object\",\"properties\":{"
  "\"path\":{\"type\":\"string\",\"description\":\"File path, relative to /workspace\"},"
  "\"old_string\":{\"type\":\"string\",\"minLength\":1,\"description\":\"The exact text to "
  "replace; include enough context to make it unique\"},"
  "\"new_string\":{\"type\":\"string\",\"description\":\"The replacement text\"}},"
  "\"required\":[\"path\",\"old_string\",\"new_string\"],\"additionalProperties\":false}},"
  "{\"name\":\"list_files\","
  "\"description\":\"List a directory of the workspace: names, types and sizes.\","
  "\"parameters\":{\"type\":\"object\",\"properties\":{"
  "\"path\":{\"type\":\"string\",\"description\":\"Directory, relative to /workspace; "
  "default the workspace root\"}},"
  "\"additionalProperties\":false}}"
  "]";

/**
 * sandbox_coding_tools_get_definitions_json:
 * @self: a #SandboxCodingTools
 *
 * Describes the tools for a model, as a JSON array of
 * `{"name", "description", "parameters"}` objects whose parameters are JSON
 * Schemas with `additionalProperties: false` — the shape LLM function
 * calling uses. The `shell` definition states the current
 * #SandboxCodingTools:shell-timeout-ms and
 * #SandboxCodingTools:max-shell-timeout-ms.
 *
 * Returns: (transfer full): the definitions as JSON
 */
char *
sandbox_coding_tools_get_definitions_json (SandboxCodingTools *self)
{
  char *json;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);

  g_mutex_lock (&self->lock);
  json = g_strdup_printf (tool_definitions_format,
                          self->shell_timeout_ms, self->max_shell_timeout_ms);
  g_mutex_unlock (&self->lock);
  return json;
}

/* One invocation: arguments, a snapshot of the configuration, the outcome. */
typedef struct
{
  const ToolSpec *spec;
  char *path;               /* canonical; the shell's cwd for shell */
  char *command;
  char *content;
  char *old_string;
  char *new_string;
  gint64 offset;
  gint64 limit;
  gint64 timeout_ms;        /* the model's, 0 when not given */

  char *shell;
  guint shell_timeout_ms;
  gsize max_shell_output_bytes;
  gsize max_command_output_bytes;
  char **required;
  guint max_list_entries;

  JsonNode *result;
  GError *cause;            /* for ::tool-error */
} Call;

static void
call_free (Call *call)
{
  g_free (call->path);
  g_free (call->command);
  g_free (call->content);
  g_free (call->old_string);
  g_free (call->new_string);
  g_free (call->shell);
  g_strfreev (call->required);
  g_clear_pointer (&call->result, json_node_unref);
  g_clear_error (&call->cause);
  g_free (call);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Call, call_free)

static const ToolSpec *
find_tool (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (tool_specs); i++)
    if (g_strcmp0 (tool_specs[i].name, name) == 0)
      return &tool_specs[i];
  return NULL;
}

static const ArgSpec *
find_arg (const ToolSpec *spec,
          const char     *name)
{
  for (const ArgSpec *arg = spec->args; arg->name != NULL; arg++)
    if (strcmp (arg->name, name) == 0)
      return arg;
  return NULL;
}

/* Checks @object against @spec's schema; NULL when it conforms. */
static JsonNode *
check_arguments (const ToolSpec *spec,
                 JsonObject     *object)
{
  g_autoptr(GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *name = l->data;
      const ArgSpec *arg = find_arg (spec, name);
      JsonNode *node = json_object_get_member (object, name);

      if (arg == NULL)
        {
          g_autoptr(GString) expected = g_string_new (NULL);

          for (const ArgSpec *a = spec->args; a->name != NULL; a++)
            g_string_append_printf (expected, "%s%s", expected->len ? ", " : "", a->name);
          return error_result ("SANDBOX_INVALID", NULL,
                               "Unknown argument for %s; its arguments are: %s",
                               spec->name, expected->str);
        }
      if (arg->type == ARG_STRING &&
          (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING))
        return error_result ("SANDBOX_INVALID", NULL, "Argument %s of %s must be a string",
                             arg->name, spec->name);
      if (arg->type == ARG_INTEGER &&
          (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_INT64 ||
           json_node_get_int (node) < 1))
        return error_result ("SANDBOX_INVALID", NULL, "Argument %s of %s must be a positive integer",
                             arg->name, spec->name);
    }

  for (const ArgSpec *arg = spec->args; arg->name != NULL; arg++)
    if (arg->required && !json_object_has_member (object, arg->name))
      return error_result ("SANDBOX_INVALID", NULL, "Missing required argument %s of %s",
                           arg->name, spec->name);

  return NULL;
}

static char *
get_string (JsonObject *object,
            const char *name)
{
  return json_object_has_member (object, name)
         ? g_strdup (json_object_get_string_member (object, name)) : NULL;
}

static gint64
get_integer (JsonObject *object,
             const char *name,
             gint64      fallback)
{
  return json_object_has_member (object, name)
         ? json_object_get_int_member (object, name) : fallback;
}

static JsonNode *
path_error_result (const ToolSpec *spec)
{
  /* The rejected path is not echoed: it could be a host path. */
  return error_result ("SANDBOX_PATH", NULL,
                       "%s needs a path inside the workspace: relative to /workspace (or "
                       "starting with /workspace/), without '..', '.' or empty segments",
                       spec->name);
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

static guint
get_max_shell_timeout_ms (SandboxCodingTools *self)
{
  guint value;

  g_mutex_lock (&self->lock);
  value = self->max_shell_timeout_ms;
  g_mutex_unlock (&self->lock);
  return value;
}

/* Phase 1, in the caller's thread. Returns the call, with ->result already
 * set when it ends here. */
static Call *
call_begin (SandboxCodingTools *self,
            const char         *name,
            const char         *arguments_json)
{
  g_autoptr(Call) call = g_new0 (Call, 1);
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(SandboxCodingOperation) operation = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *given_path = NULL;
  guint max_timeout_ms;
  JsonObject *object;

  /* A stopped session refuses everything, as the reference's assertToolActive. */
  if (!sandbox_coding_binding_check_active (self->binding, &error))
    {
      call->result = refusal_result (g_steal_pointer (&error), &call->cause);
      return g_steal_pointer (&call);
    }

  call->spec = find_tool (name);
  if (call->spec == NULL)
    {
      call->result = error_result ("SANDBOX_INVALID", NULL,
                                   "Unknown tool; the tools are shell, read_file, write_file, "
                                   "edit_file and list_files");
      return g_steal_pointer (&call);
    }

  if (arguments_json == NULL || arguments_json[0] == '\0')
    arguments_json = "{}";
  if (strlen (arguments_json) > MAX_ARGUMENTS_BYTES)
    {
      call->result = error_result ("SANDBOX_LIMIT", NULL, "Arguments of %s exceed %d bytes",
                                   call->spec->name, MAX_ARGUMENTS_BYTES);
      return g_steal_pointer (&call);
    }

  /* The model's arguments are untrusted: strict JSON only (no comments,
   * duplicate members or wrapped integers). */
  root = sandbox_json_parse_strict (arguments_json, -1, NULL);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      call->result = error_result ("SANDBOX_INVALID", NULL,
                                   "Arguments of %s must be a JSON object", call->spec->name);
      return g_steal_pointer (&call);
    }
  object = json_node_get_object (root);
  call->result = check_arguments (call->spec, object);
  if (call->result != NULL)
    return g_steal_pointer (&call);

  switch (call->spec->tool)
    {
    case TOOL_SHELL:
      call->command = get_string (object, "command");
      given_path = get_string (object, "cwd");
      call->timeout_ms = get_integer (object, "timeout_ms", 0);
      break;
    case TOOL_READ_FILE:
      given_path = get_string (object, "path");
      call->offset = get_integer (object, "offset", 1);
      call->limit = get_integer (object, "limit", DEFAULT_READ_LIMIT_LINES);
      break;
    case TOOL_WRITE_FILE:
      given_path = get_string (object, "path");
      call->content = get_string (object, "content");
      break;
    case TOOL_EDIT_FILE:
      given_path = get_string (object, "path");
      call->old_string = get_string (object, "old_string");
      call->new_string = get_string (object, "new_string");
      break;
    case TOOL_LIST_FILES:
      given_path = get_string (object, "path");
      break;
    default:
      g_assert_not_reached ();
    }

  call->path = sandbox_path_canonicalize (given_path != NULL ? given_path : ".", NULL);
  if (call->path == NULL)
    {
      call->result = path_error_result (call->spec);
      return g_steal_pointer (&call);
    }

  if (call->spec->tool == TOOL_SHELL)
    {
      if (call->command[0] == '\0')
        call->result = error_result ("SANDBOX_INVALID", NULL, "The shell command is empty");
      else if (strlen (call->command) > MAX_SHELL_COMMAND_BYTES)
        call->result = error_result ("SANDBOX_LIMIT", NULL, "The shell command exceeds %d bytes",
                                     MAX_SHELL_COMMAND_BYTES);
      else if (call->timeout_ms > (gint64) get_max_shell_timeout_ms (self))
        call->result = error_result ("SANDBOX_LIMIT", NULL,
                                     "timeout_ms of shell exceeds the host's maximum of %u ms",
                                     get_max_shell_timeout_ms (self));
    }
  else if (call->spec->tool == TOOL_EDIT_FILE)
    {
      if (call->old_string[0] == '\0')
        call->result = error_result ("SANDBOX_INVALID", NULL, "old_string of edit_file is empty");
      else if (strcmp (call->old_string, call->new_string) == 0)
        call->result = error_result ("SANDBOX_INVALID", NULL,
                                     "old_string and new_string of edit_file are identical");
    }
  if (call->result != NULL)
    return g_steal_pointer (&call);

  /* Deny by default: no handler, no operation. */
  operation = g_object_new (SANDBOX_TYPE_CODING_OPERATION,
                            "tool", call->spec->name,
                            "kind", call->spec->kind,
                            "path", call->path,
                            "command", call->command,
                            NULL);
  if (!emit_authorize (self, SIGNAL_AUTHORIZE, operation))
    {
      call->result = error_result ("SANDBOX_DENIED", NULL,
                                   "The host did not authorize this %s call", call->spec->name);
      return g_steal_pointer (&call);
    }
  if (g_signal_has_handler_pending (self, signals[SIGNAL_AUTHORIZE_PATH], 0, TRUE) &&
      !emit_authorize (self, SIGNAL_AUTHORIZE_PATH, operation))
    {
      call->result = error_result ("SANDBOX_DENIED", NULL,
                                   "The host did not authorize access to %s", call->path);
      return g_steal_pointer (&call);
    }

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

  return g_steal_pointer (&call);
}

/* File tools ------------------------------------------------------------ */

static JsonNode *
ok_builder_finish (JsonBuilder *builder)
{
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

static JsonBuilder *
ok_builder_new (const char *path)
{
  JsonBuilder *builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, TRUE);
  if (path != NULL)
    {
      json_builder_set_member_name (builder, "path");
      json_builder_add_string_value (builder, path);
    }
  return builder;
}

/* The file tools' outcomes: a result for the model in ->result (TRUE), or
 * a cancellation in @error (FALSE), never both. */

/* Reads @path as UTF-8 text (a BOM dropped). NULL either with ->result set
 * (the model's outcome: a missing file, binary content, …) or with @error
 * set (cancellation only). */
static char *
read_text (SandboxCodingTools  *self,
           Call                *call,
           const char          *verb,
           gsize               *length,
           GCancellable        *cancellable,
           GError             **error)
{
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *data;
  gsize size;

  bytes = sandbox_session_read_bytes (self->session, call->path, cancellable, &local_error);
  if (bytes == NULL)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        call->result = file_error_result (verb, call->path, g_steal_pointer (&local_error),
                                          &call->cause);
      return NULL;
    }

  data = g_bytes_get_data (bytes, &size);
  /* Explicit length: embedded NULs fail validation too, so binary is refused. */
  if (!g_utf8_validate_len (data, size, NULL))
    {
      call->result = error_result ("SANDBOX_NOT_TEXT", NULL,
                                   "Cannot %s %s: it is not UTF-8 text (binary files are not "
                                   "supported)", verb, call->path);
      return NULL;
    }
  if (size >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    {
      data += 3;
      size -= 3;
    }
  *length = size;
  return g_strndup (data, size);
}

static gboolean
run_read_file (SandboxCodingTools  *self,
               Call                *call,
               GCancellable        *cancellable,
               GError             **error)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autofree char *text = NULL;
  const char *start, *end, *p;
  gint64 line = 1, total_lines, shown = 0;
  gsize length;

  text = read_text (self, call, "read", &length, cancellable, error);
  if (text == NULL)
    return call->result != NULL;

  /* Lines end with \n; a last line without one still counts. */
  total_lines = 0;
  for (p = text; p < text + length; p++)
    if (*p == '\n')
      total_lines++;
  if (length > 0 && text[length - 1] != '\n')
    total_lines++;

  if (call->offset > MAX (total_lines, 1))
    {
      call->result = error_result ("SANDBOX_INVALID", NULL,
                                   "offset %" G_GINT64_FORMAT " is past the end of %s (%"
                                   G_GINT64_FORMAT " lines)",
                                   call->offset, call->path, total_lines);
      return TRUE;
    }

  start = text;
  while (line < call->offset)
    {
      start = strchr (start, '\n') + 1;
      line++;
    }
  end = start;
  while (end < text + length && shown < call->limit)
    {
      const char *newline = memchr (end, '\n', text + length - end);

      end = newline != NULL ? newline + 1 : text + length;
      shown++;
    }

  builder = ok_builder_new (call->path);
  json_builder_set_member_name (builder, "content");
  {
    g_autofree char *slice = g_strndup (start, end - start);

    json_builder_add_string_value (builder, slice);
  }
  json_builder_set_member_name (builder, "start_line");
  json_builder_add_int_value (builder, call->offset);
  json_builder_set_member_name (builder, "lines");
  json_builder_add_int_value (builder, shown);
  json_builder_set_member_name (builder, "total_lines");
  json_builder_add_int_value (builder, total_lines);
  json_builder_set_member_name (builder, "truncated");
  json_builder_add_boolean_value (builder, call->offset - 1 + shown < total_lines);
  call->result = ok_builder_finish (builder);
  return TRUE;
}

/* Writes @contents to @path: FALSE either with ->result set or with @error
 * set (cancellation only), as read_text(). */
static gboolean
write_contents (SandboxCodingTools  *self,
                Call                *call,
                const char          *verb,
                const char          *contents,
                GCancellable        *cancellable,
                GError             **error)
{
  g_autoptr(GBytes) bytes = g_bytes_new (contents, strlen (contents));
  g_autoptr(GError) local_error = NULL;

  if (sandbox_session_write_bytes (self->session, call->path, bytes, cancellable, &local_error))
    return TRUE;

  if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_propagate_error (error, g_steal_pointer (&local_error));
  else
    call->result = file_error_result (verb, call->path, g_steal_pointer (&local_error),
                                      &call->cause);
  return FALSE;
}

static gboolean
run_write_file (SandboxCodingTools  *self,
                Call                *call,
                GCancellable        *cancellable,
                GError             **error)
{
  g_autoptr(JsonBuilder) builder = NULL;

  if (strcmp (call->path, SANDBOX_WORKSPACE) == 0)
    {
      call->result = error_result ("SANDBOX_IS_DIRECTORY", NULL,
                                   "Cannot write %s: it is a directory", call->path);
      return TRUE;
    }
  if (!write_contents (self, call, "write", call->content, cancellable, error))
    return call->result != NULL;

  builder = ok_builder_new (call->path);
  json_builder_set_member_name (builder, "bytes_written");
  json_builder_add_int_value (builder, strlen (call->content));
  call->result = ok_builder_finish (builder);
  return TRUE;
}

static gboolean
run_edit_file (SandboxCodingTools  *self,
               Call                *call,
               GCancellable        *cancellable,
               GError             **error)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(GString) edited = NULL;
  g_autofree char *text = NULL;
  gsize old_length = strlen (call->old_string);
  const char *first = NULL;
  guint matches = 0;
  gsize length;

  text = read_text (self, call, "edit", &length, cancellable, error);
  if (text == NULL)
    return call->result != NULL;

  for (const char *p = strstr (text, call->old_string); p != NULL;
       p = strstr (p + old_length, call->old_string))
    {
      if (matches++ == 0)
        first = p;
    }

  if (matches == 0)
    {
      call->result = error_result ("SANDBOX_NO_MATCH", NULL,
                                   "old_string was not found in %s (0 matches); it must match "
                                   "the file exactly, whitespace included", call->path);
      return TRUE;
    }
  if (matches > 1)
    {
      call->result = error_result ("SANDBOX_AMBIGUOUS", NULL,
                                   "old_string occurs %u times in %s; include more surrounding "
                                   "text so it matches exactly once", matches, call->path);
      return TRUE;
    }

  edited = g_string_sized_new (length - old_length + strlen (call->new_string));
  g_string_append_len (edited, text, first - text);
  g_string_append (edited, call->new_string);
  g_string_append (edited, first + old_length);

  if (!write_contents (self, call, "edit", edited->str, cancellable, error))
    return call->result != NULL;

  builder = ok_builder_new (call->path);
  json_builder_set_member_name (builder, "replacements");
  json_builder_add_int_value (builder, 1);
  call->result = ok_builder_finish (builder);
  return TRUE;
}

static int
compare_entries (gconstpointer a,
                 gconstpointer b)
{
  const char *name_a, *name_b;

  g_variant_get_child (*(GVariant **) a, 0, "&s", &name_a);
  g_variant_get_child (*(GVariant **) b, 0, "&s", &name_b);
  return strcmp (name_a, name_b);
}

static gboolean
run_list_files (SandboxCodingTools  *self,
                Call                *call,
                GCancellable        *cancellable,
                GError             **error)
{
  g_autoptr(GVariant) entries = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(GPtrArray) sorted = NULL;
  gboolean truncated = FALSE;
  GVariantIter iter;
  GVariant *entry;

  entries = sandbox_coding_binding_list_directory (self->binding, call->path,
                                                   call->max_list_entries, &truncated,
                                                   cancellable, &local_error);
  if (entries == NULL)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      call->result = file_error_result ("list", call->path, g_steal_pointer (&local_error),
                                        &call->cause);
      return TRUE;
    }

  sorted = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  g_variant_iter_init (&iter, entries);
  while ((entry = g_variant_iter_next_value (&iter)) != NULL)
    g_ptr_array_add (sorted, entry);
  g_ptr_array_sort (sorted, compare_entries);

  builder = ok_builder_new (call->path);
  json_builder_set_member_name (builder, "entries");
  json_builder_begin_array (builder);
  for (guint i = 0; i < sorted->len; i++)
    {
      const char *name, *type;
      guint64 size;

      g_variant_get (g_ptr_array_index (sorted, i), "(&s&st)", &name, &type, &size);
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, name);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, type);
      json_builder_set_member_name (builder, "size");
      json_builder_add_int_value (builder, (gint64) MIN (size, (guint64) G_MAXINT64));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "truncated");
  json_builder_add_boolean_value (builder, truncated);
  call->result = ok_builder_finish (builder);
  return TRUE;
}

/* Shell ----------------------------------------------------------------- */

static gboolean
restrictions_satisfied (char               **available,
                        const char * const  *required)
{
  for (gsize i = 0; required != NULL && required[i] != NULL; i++)
    if (!g_strv_contains ((const char * const *) available, required[i]))
      return FALSE;
  return TRUE;
}

/* The adapter's prepare(): NULL with @error set to the *cause*; callers
 * turn it into the fixed refusal. */
static SandboxCodingLaunch *
prepare_launch (SandboxCodingTools  *self,
                SandboxCommand      *command,
                const char * const  *required,
                GError             **error)
{
  g_auto(GStrv) restrictions = NULL;
  guint64 revision;

  if (!sandbox_coding_binding_check_active (self->binding, error))
    return NULL;
  if (!sandbox_command_validate (command, error))
    return NULL;

  /* The revision comes with the restrictions it was computed from. */
  restrictions = sandbox_coding_binding_get_restrictions (self->binding, &revision);
  if (!restrictions_satisfied (restrictions, required))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_NETWORK_DENIED,
                           "Sandbox policy no longer satisfies required restrictions");
      return NULL;
    }

  return sandbox_coding_launch_new (self->binding, command, revision);
}

/* The length of the longest prefix of @data, at most @budget bytes long,
 * that ends between two units of its decoding: a whole valid character, or
 * one invalid byte (which g_utf8_make_valid() replaces, one by one). */
static gsize
unit_prefix_length (const char *data,
                    gsize       length,
                    gsize       budget)
{
  gsize position = 0;

  if (length <= budget)
    return length;

  while (position < budget)
    {
      const char *valid_end;
      gsize valid_length;

      g_utf8_validate_len (data + position, length - position, &valid_end);
      valid_length = valid_end - data;
      if (valid_length >= budget)
        {
          gsize cut = budget;

          /* Inside a valid run: back off to the start of a character. */
          while (cut > position && cut < valid_length && (data[cut] & 0xc0) == 0x80)
            cut--;
          return cut;
        }
      /* The invalid byte at @valid_length is one unit of its own. */
      position = valid_length + 1;
    }

  return budget;
}

/* The start of the longest suffix of @data, at most @budget bytes long,
 * that begins between two units of the whole's decoding. A byte that
 * is not a continuation byte (10xxxxxx) always begins a unit; a
 * continuation byte three past the candidate start cannot belong to a
 * sequence begun before it (a sequence is at most four bytes), so at most
 * three bytes are skipped. */
static gsize
unit_suffix_start (const char *data,
                   gsize       length,
                   gsize       budget)
{
  gsize start;

  if (length <= budget)
    return 0;
  start = length - budget;
  for (guint skipped = 0; skipped < 3 && start < length && (data[start] & 0xc0) == 0x80; skipped++)
    start++;
  return start;
}

static void
append_valid (GString    *text,
              const char *data,
              gsize       length)
{
  g_autofree char *valid = NULL;

  if (length == 0)
    return;
  valid = g_utf8_make_valid (data, length);
  g_string_append (text, valid);
}

/* The model's view of @bytes: at most @budget bytes of the command's output
 * (never a part of a character), invalid UTF-8 replaced with U+FFFD. The
 * budget counts the command's bytes, so an invalid byte costs one although
 * it shows as three. Past the budget the view is the head and the tail —
 * a build's errors and a test run's summary come last — joined by a
 * marker naming how many bytes were left out; @cut is then set. */
static char *
model_text (GByteArray *bytes,
            gsize       budget,
            gboolean   *cut)
{
  const char *data = (const char *) bytes->data;
  gsize head, tail_start;
  GString *text;

  if (bytes->len <= budget)
    return bytes->len == 0 ? g_strdup ("") : g_utf8_make_valid (data, bytes->len);

  *cut = TRUE;
  head = unit_prefix_length (data, bytes->len, budget - budget / 2);
  tail_start = unit_suffix_start (data, bytes->len, budget / 2);
  g_assert (head <= tail_start);

  /* The marker is a line of its own; it is not counted in the budget. */
  text = g_string_new (NULL);
  append_valid (text, data, head);
  if (text->len > 0 && text->str[text->len - 1] != '\n')
    g_string_append_c (text, '\n');
  g_string_append_printf (text, "[... %" G_GSIZE_FORMAT " byte%s omitted ...]\n",
                          tail_start - head, tail_start - head == 1 ? "" : "s");
  append_valid (text, data + tail_start, bytes->len - tail_start);
  return g_string_free (text, FALSE);
}

static void
collect_output (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  GByteArray *buffer = user_data;
  gsize length;
  const guint8 *bytes = g_bytes_get_data (data, &length);

  g_byte_array_append (buffer, bytes, length);
}

static char *
store_artifact (SandboxCodingTools *self,
                GByteArray         *out,
                GByteArray         *err)
{
  Artifact *artifact;
  char *id;

  g_mutex_lock (&self->lock);
  if (self->max_artifacts == 0)
    {
      g_mutex_unlock (&self->lock);
      return NULL;
    }
  while (g_queue_get_length (&self->artifact_order) >= self->max_artifacts)
    {
      g_autofree char *oldest = g_queue_pop_head (&self->artifact_order);

      g_hash_table_remove (self->artifacts, oldest);
    }
  id = g_strdup_printf ("artifact-%" G_GUINT64_FORMAT, self->next_artifact++);
  artifact = g_new0 (Artifact, 1);
  artifact->stdout_bytes = g_bytes_new (out->data, out->len);
  artifact->stderr_bytes = g_bytes_new (err->data, err->len);
  g_queue_push_tail (&self->artifact_order, id);
  g_hash_table_insert (self->artifacts, id, artifact);
  g_mutex_unlock (&self->lock);

  return g_strdup (id);
}

static JsonNode *
shell_result (SandboxCodingTools *self,
              Call               *call,
              GByteArray         *out,
              GByteArray         *err,
              gboolean            over_cap,
              SandboxResult      *result,
              const GError       *failure)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *out_text = NULL;
  g_autofree char *err_text = NULL;
  g_autofree char *artifact_id = NULL;
  gsize budget = call->max_shell_output_bytes;
  gsize out_budget, err_budget;
  gboolean truncated = over_cap;

  /* Each stream gets at least half the budget, or all it needs. */
  out_budget = MIN (out->len, MAX (budget / 2, budget - MIN (budget, err->len)));
  err_budget = budget - out_budget;
  out_text = model_text (out, out_budget, &truncated);
  err_text = model_text (err, err_budget, &truncated);
  if (truncated)
    artifact_id = store_artifact (self, out, err);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, result != NULL);
  if (result != NULL)
    {
      json_builder_set_member_name (builder, "exit_status");
      json_builder_add_int_value (builder, sandbox_result_get_exit_status (result));
    }
  else
    {
      json_builder_set_member_name (builder, "error");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "code");
      json_builder_add_string_value (builder, "SANDBOX_LIMIT");
      json_builder_set_member_name (builder, "message");
      json_builder_add_string_value (builder, failure->message);
      json_builder_end_object (builder);
    }
  json_builder_set_member_name (builder, "stdout");
  json_builder_add_string_value (builder, out_text);
  json_builder_set_member_name (builder, "stderr");
  json_builder_add_string_value (builder, err_text);
  json_builder_set_member_name (builder, "truncated");
  json_builder_add_boolean_value (builder, truncated);
  if (artifact_id != NULL)
    {
      json_builder_set_member_name (builder, "artifact_id");
      json_builder_add_string_value (builder, artifact_id);
    }
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

static gboolean
run_shell (SandboxCodingTools  *self,
           Call                *call,
           GCancellable        *cancellable,
           GError             **error)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new (call->shell);
  g_autoptr(SandboxCodingLaunch) launch = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autoptr(GByteArray) err = g_byte_array_new ();
  g_autoptr(GMainContext) context = NULL;
  g_autoptr(GError) local_error = NULL;
  gulong out_id, err_id;

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, call->command);
  sandbox_command_set_cwd (command, call->path);
  sandbox_command_set_timeout_ms (command, call->shell_timeout_ms);
  sandbox_command_set_max_output_bytes (command, call->max_command_output_bytes);

  launch = prepare_launch (self, command, (const char * const *) call->required, &local_error);
  if (launch == NULL)
    {
      call->result = refusal_result (g_steal_pointer (&local_error), &call->cause);
      return TRUE;
    }

  /* Output signals come to a context only this call iterates: the blocking
   * wait below drains them, in order, before it returns. */
  context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  process = sandbox_coding_launch_spawn (launch, cancellable, &local_error);
  if (process != NULL)
    {
      out_id = g_signal_connect (process, "stdout-data", G_CALLBACK (collect_output), out);
      err_id = g_signal_connect (process, "stderr-data", G_CALLBACK (collect_output), err);
      result = sandbox_process_wait (process, NULL, &local_error);
      g_signal_handler_disconnect (process, out_id);
      g_signal_handler_disconnect (process, err_id);
    }
  g_main_context_pop_thread_default (context);

  if (process == NULL)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      if (g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY))
        call->result = error_result ("SANDBOX_BUSY", NULL, "%s", local_error->message);
      else
        call->result = refusal_result (g_steal_pointer (&local_error), &call->cause);
      return TRUE;
    }

  if (result == NULL)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return FALSE;
        }
      if (!g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT))
        {
          call->result = refusal_result (g_steal_pointer (&local_error), &call->cause);
          return TRUE;
        }
    }

  /* A deadline keeps what arrived; an output overflow keeps the output up
   * to the command's cap, so the result is truncated either way. */
  call->result = shell_result (self, call, out, err,
                               result == NULL && g_strcmp0 (local_error->message, OUTPUT_LIMIT_MESSAGE) == 0,
                               result, local_error);
  return TRUE;
}

/* Phase 2: the work. FALSE only for cancellation. */
static gboolean
call_run (SandboxCodingTools  *self,
          Call                *call,
          GCancellable        *cancellable,
          GError             **error)
{
  gboolean ok;

  if (call->result != NULL)
    return TRUE;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  switch (call->spec->tool)
    {
    case TOOL_SHELL:
      ok = run_shell (self, call, cancellable, error);
      break;
    case TOOL_READ_FILE:
      ok = run_read_file (self, call, cancellable, error);
      break;
    case TOOL_WRITE_FILE:
      ok = run_write_file (self, call, cancellable, error);
      break;
    case TOOL_EDIT_FILE:
      ok = run_edit_file (self, call, cancellable, error);
      break;
    case TOOL_LIST_FILES:
      ok = run_list_files (self, call, cancellable, error);
      break;
    default:
      g_assert_not_reached ();
    }

  /* One channel: a result for the model, or a cancellation. */
  g_assert (ok == (call->result != NULL));
  return ok;
}

/* Phase 3, in the caller's thread. */
static char *
call_finish (SandboxCodingTools *self,
             Call               *call)
{
  if (call->cause != NULL)
    g_signal_emit (self, signals[SIGNAL_TOOL_ERROR], 0,
                   call->spec != NULL ? call->spec->name : NULL, call->cause);
  return json_to_string (call->result, FALSE);
}

/**
 * sandbox_coding_tools_invoke:
 * @self: a #SandboxCodingTools
 * @name: the tool to call, as the model named it
 * @arguments_json: (nullable): the call's arguments, a JSON object as the
 *   model produced it (%NULL or empty for none)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs one tool call and returns its result for the model. Everything the
 * model can get wrong, and every refusal, is a result with `"ok": false`
 * (see #SandboxCodingTools); @error is set only for cancellation. Blocks
 * until the call is done — a `shell` call up to
 * #SandboxCodingTools:shell-timeout-ms.
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
  g_autoptr(Call) call = NULL;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_return_val_if_fail (self->binding != NULL, NULL);   /* made by sandbox_coding_tools_new() */
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  call = call_begin (self, name, arguments_json);
  if (!call_run (self, call, cancellable, error))
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

  if (!call_run (source_object, task_data, cancellable, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
invoke_done (GObject      *source_object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Call *call = g_task_get_task_data (G_TASK (result));
  GError *error = NULL;

  if (!g_task_propagate_boolean (G_TASK (result), &error))
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, call_finish (SANDBOX_CODING_TOOLS (source_object), call), g_free);
}

/**
 * sandbox_coding_tools_invoke_async:
 * @self: a #SandboxCodingTools
 * @name: the tool to call
 * @arguments_json: (nullable): the call's arguments as JSON
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when the call is done
 * @user_data: data for @callback
 *
 * Runs one tool call; see sandbox_coding_tools_invoke(). Authorization
 * signals are emitted before this returns; the work runs in a worker
 * thread, and #SandboxCodingTools::tool-error is emitted in the calling
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
  Call *call;

  g_return_if_fail (SANDBOX_IS_CODING_TOOLS (self));
  g_return_if_fail (self->binding != NULL);
  g_return_if_fail (name != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, sandbox_coding_tools_invoke_async);
  g_task_set_name (task, "[sandbox] coding tool");

  call = call_begin (self, name, arguments_json);
  work = g_task_new (self, cancellable, invoke_done, g_steal_pointer (&task));
  g_task_set_source_tag (work, sandbox_coding_tools_invoke_async);
  g_task_set_name (work, "[sandbox] coding tool work");
  g_task_set_task_data (work, call, (GDestroyNotify) call_free);
  g_task_set_check_cancellable (work, FALSE);
  if (call->result != NULL)
    g_task_return_boolean (work, TRUE);
  else
    g_task_run_in_thread (work, invoke_thread);
}

/**
 * sandbox_coding_tools_invoke_finish:
 * @self: a #SandboxCodingTools
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes sandbox_coding_tools_invoke_async().
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

/**
 * sandbox_coding_tools_get_artifact:
 * @self: a #SandboxCodingTools
 * @artifact_id: an `artifact_id` from a truncated `shell` result
 * @stderr_bytes: (out) (optional) (transfer full): the command's standard
 *   error
 *
 * Gives the host the whole output of a `shell` call whose result was
 * truncated, up to #SandboxCodingTools:max-command-output-bytes. Only the
 * last #SandboxCodingTools:max-artifacts artifacts are kept, in memory.
 *
 * Returns: (transfer full) (nullable): the command's standard output, or
 *   %NULL if @artifact_id is unknown or was dropped
 */
GBytes *
sandbox_coding_tools_get_artifact (SandboxCodingTools  *self,
                                   const char          *artifact_id,
                                   GBytes             **stderr_bytes)
{
  Artifact *artifact;
  GBytes *out = NULL;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_return_val_if_fail (artifact_id != NULL, NULL);

  if (stderr_bytes != NULL)
    *stderr_bytes = NULL;

  g_mutex_lock (&self->lock);
  artifact = g_hash_table_lookup (self->artifacts, artifact_id);
  if (artifact != NULL)
    {
      out = g_bytes_ref (artifact->stdout_bytes);
      if (stderr_bytes != NULL)
        *stderr_bytes = g_bytes_ref (artifact->stderr_bytes);
    }
  g_mutex_unlock (&self->lock);
  return out;
}

/* The adapter ------------------------------------------------------------ */

static gboolean
refuse (SandboxCodingTools  *self,
        GError              *cause,
        GError             **error)
{
  g_autoptr(GError) owned = cause;

  g_signal_emit (self, signals[SIGNAL_TOOL_ERROR], 0, NULL, cause);
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, FIXED_REFUSAL);
  return FALSE;
}

/**
 * sandbox_coding_tools_probe:
 * @self: a #SandboxCodingTools
 * @restrictions: (out) (optional) (transfer full) (array zero-terminated=1):
 *   the restrictions the session guarantees now
 * @error: return location for a #GError
 *
 * The adapter's probe: the isolation grade (always `"full"` for a live
 * session) and its restrictions — write-contained, process-contained and
 * secrets-hidden, plus network-denied under a deny-all policy. A stopped
 * session is refused with %SANDBOX_ERROR_UNAVAILABLE "Sandbox session
 * cannot execute this operation"; the cause goes to
 * #SandboxCodingTools::tool-error.
 *
 * Returns: (transfer full): the grade, or %NULL with @error set
 */
char *
sandbox_coding_tools_probe (SandboxCodingTools   *self,
                            char               ***restrictions,
                            GError              **error)
{
  GError *cause = NULL;

  g_return_val_if_fail (SANDBOX_IS_CODING_TOOLS (self), NULL);
  g_return_val_if_fail (self->binding != NULL, NULL);   /* made by sandbox_coding_tools_new() */
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (restrictions != NULL)
    *restrictions = NULL;
  if (!sandbox_coding_binding_check_active (self->binding, &cause))
    {
      refuse (self, cause, error);
      return NULL;
    }
  if (restrictions != NULL)
    *restrictions = sandbox_coding_binding_get_restrictions (self->binding, NULL);
  return g_strdup ("full");
}

/**
 * sandbox_coding_tools_prepare:
 * @self: a #SandboxCodingTools
 * @command: the command to launch
 * @required: (nullable) (array zero-terminated=1): the restrictions the
 *   launch requires, or %NULL for #SandboxCodingTools:required-restrictions
 * @error: return location for a #GError
 *
 * The adapter's prepare: checks that the session is active and guarantees
 * @required, and binds a launch of @command to the current network policy
 * revision. Otherwise fails with %SANDBOX_ERROR_UNAVAILABLE "Sandbox session
 * cannot execute this operation" and emits #SandboxCodingTools::tool-error
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
  g_return_val_if_fail (self->binding != NULL, NULL);   /* made by sandbox_coding_tools_new() */
  g_return_val_if_fail (SANDBOX_IS_COMMAND (command), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (required == NULL)
    {
      configured = sandbox_coding_tools_dup_required_restrictions (self);
      required = (const char * const *) configured;
    }
  launch = prepare_launch (self, command, required, &cause);
  if (launch == NULL)
    refuse (self, cause, error);
  return launch;
}
