/* sandbox-coding-schema.c — the coding tools' table, their definitions and
 * their strict argument check
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One row per tool, the way GActionEntry describes actions: its name, what
 * the model is told, its arguments and the function that does the work.
 * The JSON definitions, the argument check and the dispatch all read the
 * table, so a tool cannot be described one way and checked another.
 *
 * The model's arguments are untrusted. They are checked in three passes,
 * in the order the model has always seen the messages in:
 *
 *  1. the members, in the order given: no unknown one, each of its type;
 *     then every required one present;
 *  2. the workspace path, canonicalized (it is never echoed back: it could
 *     be a host path);
 *  3. the bounds, argument by argument: the schema's own (minLength, the
 *     host's maximum) and the ones it does not state (the shell command's
 *     size, an edit that changes nothing).
 */

#include "config.h"

#include <string.h>

#include "sandbox-coding-schema-private.h"
#include "sandbox-coding-exec-private.h"
#include "sandbox-coding-file-tools-private.h"
#include "sandbox-coding-search-private.h"
#include "sandbox-coding-shell-private.h"
#include "sandbox-json-private.h"
#include "sandbox-path.h"

#define MAX_ARGUMENTS_BYTES (4 * 1024 * 1024)
#define MAX_SHELL_COMMAND_BYTES (64 * 1024)
#define DEFAULT_READ_LIMIT_LINES 2000
#define DEFAULT_SEARCH_RESULTS 200
#define MAX_PATTERN_BYTES 4096
#define MAX_GLOB_BYTES 1024
#define DEFAULT_YIELD_MS 2000
#define MAX_YIELD_MS 30000
#define MAX_INPUT_BYTES (64 * 1024)

/* Where an argument's value goes. */
#define CALL_MEMBER(member) G_STRUCT_OFFSET (SandboxCodingCall, member)

/* The table ---------------------------------------------------------------- */

static guint
max_shell_timeout_ms (const SandboxCodingLimits *limits)
{
  return limits->max_shell_timeout_ms;
}

static char *
describe_shell (const SandboxCodingLimits *limits)
{
  return g_strdup_printf ("Run a shell command inside the sandbox with /workspace as the working "
                          "directory (or cwd). Returns exit_status, stdout, stderr and truncated; "
                          "long output shows its beginning and its end with a marker saying how "
                          "many bytes were left out between. The command has a deadline "
                          "(timeout_ms, default %u) and no network unless the host allows it. "
                          "Each call starts afresh: only files under /workspace persist between "
                          "calls; /tmp, processes it leaves behind and environment changes do "
                          "not (exec_command keeps a server running).",
                          limits->shell_timeout_ms);
}

static JsonNode *
check_shell_command (const SandboxCodingCall *call)
{
  if (call->command[0] == '\0')
    return sandbox_coding_error_result ("SANDBOX_INVALID", NULL, "The shell command is empty");
  if (strlen (call->command) > MAX_SHELL_COMMAND_BYTES)
    return sandbox_coding_error_result ("SANDBOX_LIMIT", NULL,
                                        "The shell command exceeds %d bytes",
                                        MAX_SHELL_COMMAND_BYTES);
  return NULL;
}

static JsonNode *
check_edit_changes (const SandboxCodingCall *call)
{
  if (strcmp (call->old_string, call->new_string) == 0)
    return sandbox_coding_error_result ("SANDBOX_INVALID", NULL,
                                        "old_string and new_string of edit_file are identical");
  return NULL;
}

#define FILE_PATH_DESCRIPTION "File path, relative to /workspace"

static const SandboxCodingArgEntry shell_args[] = {
  { "command", SANDBOX_CODING_ARG_STRING, TRUE, "The command line, run with sh -c",
    CALL_MEMBER (command), .check = check_shell_command },
  { "cwd", SANDBOX_CODING_ARG_PATH, FALSE, "Working directory, relative to /workspace",
    CALL_MEMBER (path) },
  { "timeout_ms", SANDBOX_CODING_ARG_COUNT, FALSE,
    "Deadline of this command in milliseconds; give a longer one for long builds or test suites",
    CALL_MEMBER (timeout_ms), .fallback = 0, .maximum_ms = max_shell_timeout_ms },
  { NULL }
};
static const SandboxCodingArgEntry read_file_args[] = {
  { "path", SANDBOX_CODING_ARG_PATH, TRUE, FILE_PATH_DESCRIPTION, CALL_MEMBER (path) },
  { "offset", SANDBOX_CODING_ARG_COUNT, FALSE, "First line to read, from 1",
    CALL_MEMBER (offset), .fallback = 1 },
  { "limit", SANDBOX_CODING_ARG_COUNT, FALSE, "How many lines to read",
    CALL_MEMBER (limit), .fallback = DEFAULT_READ_LIMIT_LINES },
  { NULL }
};
static const SandboxCodingArgEntry write_file_args[] = {
  { "path", SANDBOX_CODING_ARG_PATH, TRUE, FILE_PATH_DESCRIPTION, CALL_MEMBER (path) },
  { "content", SANDBOX_CODING_ARG_STRING, TRUE, "The complete new contents",
    CALL_MEMBER (content) },
  { NULL }
};
static const SandboxCodingArgEntry edit_file_args[] = {
  { "path", SANDBOX_CODING_ARG_PATH, TRUE, FILE_PATH_DESCRIPTION, CALL_MEMBER (path) },
  { "old_string", SANDBOX_CODING_ARG_STRING, TRUE,
    "The exact text to replace; include enough context to make it unique",
    CALL_MEMBER (old_string), .non_empty = TRUE },
  { "new_string", SANDBOX_CODING_ARG_STRING, TRUE, "The replacement text",
    CALL_MEMBER (new_string), .check = check_edit_changes },
  { NULL }
};
static const SandboxCodingArgEntry list_files_args[] = {
  { "path", SANDBOX_CODING_ARG_PATH, FALSE,
    "Directory, relative to /workspace; default the workspace root", CALL_MEMBER (path) },
  { NULL }
};

static JsonNode *
check_input (const SandboxCodingCall *call)
{
  if (strlen (call->content) > MAX_INPUT_BYTES)
    return sandbox_coding_error_result ("SANDBOX_LIMIT", NULL, "The input exceeds %d bytes",
                                        MAX_INPUT_BYTES);
  return NULL;
}

static JsonNode *
check_glob (const SandboxCodingCall *call)
{
  if (call->glob != NULL && strlen (call->glob) > MAX_GLOB_BYTES)
    return sandbox_coding_error_result ("SANDBOX_LIMIT", NULL, "The glob exceeds %d bytes",
                                        MAX_GLOB_BYTES);
  return NULL;
}

static JsonNode *
check_pattern (const SandboxCodingCall *call)
{
  if (strlen (call->command) > MAX_PATTERN_BYTES)
    return sandbox_coding_error_result ("SANDBOX_LIMIT", NULL, "The pattern exceeds %d bytes",
                                        MAX_PATTERN_BYTES);
  return NULL;
}

static const SandboxCodingArgEntry search_files_args[] = {
  { "pattern", SANDBOX_CODING_ARG_STRING, TRUE,
    "Extended regular expression (grep -E) to look for in the files' lines",
    CALL_MEMBER (command), .non_empty = TRUE, .check = check_pattern },
  { "path", SANDBOX_CODING_ARG_PATH, FALSE,
    "Directory to search recursively, relative to /workspace; default the workspace root",
    CALL_MEMBER (path) },
  { "glob", SANDBOX_CODING_ARG_STRING, FALSE,
    "Only files whose name matches this glob, e.g. *.py", CALL_MEMBER (glob),
    .non_empty = TRUE, .check = check_glob },
  { "max_results", SANDBOX_CODING_ARG_COUNT, FALSE, "How many matching lines to return at most",
    CALL_MEMBER (limit), .fallback = DEFAULT_SEARCH_RESULTS },
  { NULL }
};

static guint
max_yield_ms (const SandboxCodingLimits *limits)
{
  return MAX_YIELD_MS;
}

#define YIELD_DESCRIPTION \
  "How long to wait for output before returning, in milliseconds; the call returns at once " \
  "when the command ends"

static const SandboxCodingArgEntry exec_command_args[] = {
  { "command", SANDBOX_CODING_ARG_STRING, TRUE, "The command line, run with sh -c",
    CALL_MEMBER (command), .check = check_shell_command },
  { "cwd", SANDBOX_CODING_ARG_PATH, FALSE, "Working directory, relative to /workspace",
    CALL_MEMBER (path) },
  { "yield_time_ms", SANDBOX_CODING_ARG_COUNT, FALSE, YIELD_DESCRIPTION,
    CALL_MEMBER (yield_ms), .fallback = DEFAULT_YIELD_MS, .maximum_ms = max_yield_ms },
  { "tty", SANDBOX_CODING_ARG_FLAG, FALSE,
    "Run it on a terminal, for programs that need one (prompts, REPLs, full-screen tools); "
    "its output is then what the terminal shows, with \\r\\n line ends",
    CALL_MEMBER (tty) },
  { NULL }
};
static const SandboxCodingArgEntry write_stdin_args[] = {
  { "id", SANDBOX_CODING_ARG_STRING, TRUE, "The command's id, as exec_command gave it",
    CALL_MEMBER (id), .non_empty = TRUE },
  { "input", SANDBOX_CODING_ARG_STRING, TRUE,
    "What to type on its standard input (include \\n to end a line); empty to only read",
    CALL_MEMBER (content), .check = check_input },
  { "yield_time_ms", SANDBOX_CODING_ARG_COUNT, FALSE, YIELD_DESCRIPTION,
    CALL_MEMBER (yield_ms), .fallback = DEFAULT_YIELD_MS, .maximum_ms = max_yield_ms },
  { NULL }
};
static const SandboxCodingArgEntry kill_command_args[] = {
  { "id", SANDBOX_CODING_ARG_STRING, TRUE, "The command's id, as exec_command gave it",
    CALL_MEMBER (id), .non_empty = TRUE },
  { NULL }
};
static const SandboxCodingArgEntry list_commands_args[] = {
  { NULL }
};

static const SandboxCodingToolEntry tool_entries[] = {
  { "shell", SANDBOX_CODING_OPERATION_EXECUTE, NULL, describe_shell,
    shell_args, sandbox_coding_shell },
  { "read_file", SANDBOX_CODING_OPERATION_READ,
    "Read a UTF-8 text file of the workspace, optionally a range of lines. Binary files are "
    "refused.", NULL,
    read_file_args, sandbox_coding_read_file },
  { "write_file", SANDBOX_CODING_OPERATION_WRITE,
    "Create or replace a file of the workspace with the given text, creating parent "
    "directories.", NULL,
    write_file_args, sandbox_coding_write_file },
  { "edit_file", SANDBOX_CODING_OPERATION_EDIT,
    "Replace exactly one occurrence of old_string with new_string in a text file of the "
    "workspace. Fails if old_string occurs zero or several times.", NULL,
    edit_file_args, sandbox_coding_edit_file },
  { "list_files", SANDBOX_CODING_OPERATION_LIST,
    "List a directory of the workspace: names, types and sizes.", NULL,
    list_files_args, sandbox_coding_list_files },
  { "exec_command", SANDBOX_CODING_OPERATION_EXECUTE,
    "Start a shell command inside the sandbox (sh -c, /workspace or cwd) that keeps running "
    "between calls: a server, a watcher, a REPL, a long build. Waits up to yield_time_ms, "
    "then returns the output so far (stdout and stderr together, long output shown as its "
    "beginning and end), running, and the id to pass to write_stdin, list_commands and "
    "kill_command; exit_status once it ended. It runs until it exits, is killed, or the "
    "session ends (an hour at most). Files under /workspace persist; each command has its "
    "own /tmp, and the session's commands share one loopback, so a server it starts answers "
    "the next commands on 127.0.0.1.",
    NULL, exec_command_args, sandbox_coding_exec_command },
  { "write_stdin", SANDBOX_CODING_OPERATION_EXECUTE,
    "Type input on the standard input of a command exec_command started, wait up to "
    "yield_time_ms, and return the output that came since the last call on it.",
    NULL, write_stdin_args, sandbox_coding_write_stdin },
  { "list_commands", SANDBOX_CODING_OPERATION_EXECUTE,
    "List the commands exec_command started: id, command, start time and whether each "
    "still runs.", NULL, list_commands_args, sandbox_coding_list_commands },
  { "kill_command", SANDBOX_CODING_OPERATION_EXECUTE,
    "End a command exec_command started (and everything it started), and return its last "
    "output.", NULL, kill_command_args, sandbox_coding_kill_command },
  { "search_files", SANDBOX_CODING_OPERATION_READ,
    "Search the text files under a directory of the workspace for lines matching a regular "
    "expression; returns matches as path, line number and text (binary files are skipped).",
    NULL, search_files_args, sandbox_coding_search_files },
};

const SandboxCodingToolEntry *
sandbox_coding_schema_lookup (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (tool_entries); i++)
    if (g_strcmp0 (tool_entries[i].name, name) == 0)
      return &tool_entries[i];
  return NULL;
}

/* "Unknown tool; the tools are a, b and c". */
JsonNode *
sandbox_coding_schema_unknown_tool (void)
{
  g_autoptr(GString) names = g_string_new (NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (tool_entries); i++)
    {
      if (i > 0)
        g_string_append (names, i + 1 < G_N_ELEMENTS (tool_entries) ? ", " : " and ");
      g_string_append (names, tool_entries[i].name);
    }
  return sandbox_coding_error_result ("SANDBOX_INVALID", NULL, "Unknown tool; the tools are %s",
                                      names->str);
}

/* Definitions -------------------------------------------------------------- */

static void
add_argument_schema (JsonBuilder                 *builder,
                     const SandboxCodingArgEntry *arg,
                     const SandboxCodingLimits   *limits)
{
  json_builder_set_member_name (builder, arg->name);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, arg->type == SANDBOX_CODING_ARG_COUNT ? "integer"
                                          : arg->type == SANDBOX_CODING_ARG_FLAG ? "boolean"
                                          : "string");
  if (arg->type == SANDBOX_CODING_ARG_COUNT)
    {
      json_builder_set_member_name (builder, "minimum");
      json_builder_add_int_value (builder, 1);
    }
  if (arg->maximum_ms != NULL)
    {
      json_builder_set_member_name (builder, "maximum");
      json_builder_add_int_value (builder, arg->maximum_ms (limits));
    }
  if (arg->non_empty)
    {
      json_builder_set_member_name (builder, "minLength");
      json_builder_add_int_value (builder, 1);
    }
  json_builder_set_member_name (builder, "description");
  json_builder_add_string_value (builder, arg->description);
  json_builder_end_object (builder);
}

/* {"type": "object", "properties", "required", "additionalProperties": false} */
static void
add_parameters_schema (JsonBuilder                  *builder,
                       const SandboxCodingToolEntry *tool,
                       const SandboxCodingLimits    *limits)
{
  const SandboxCodingArgEntry *arg;
  gboolean any_required = FALSE;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "object");
  json_builder_set_member_name (builder, "properties");
  json_builder_begin_object (builder);
  for (arg = tool->args; arg->name != NULL; arg++)
    {
      add_argument_schema (builder, arg, limits);
      any_required |= arg->required;
    }
  json_builder_end_object (builder);
  if (any_required)
    {
      json_builder_set_member_name (builder, "required");
      json_builder_begin_array (builder);
      for (arg = tool->args; arg->name != NULL; arg++)
        if (arg->required)
          json_builder_add_string_value (builder, arg->name);
      json_builder_end_array (builder);
    }
  json_builder_set_member_name (builder, "additionalProperties");
  json_builder_add_boolean_value (builder, FALSE);
  json_builder_end_object (builder);
}

/* What the model sees: strict schemas, each under @schema_member
 * ("parameters" for function calling, "input_schema" for Anthropic's). */
char *
sandbox_coding_schema_dup_definitions (const SandboxCodingLimits *limits,
                                       const char                *schema_member)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_array (builder);
  for (gsize i = 0; i < G_N_ELEMENTS (tool_entries); i++)
    {
      const SandboxCodingToolEntry *tool = &tool_entries[i];
      g_autofree char *described = tool->describe != NULL ? tool->describe (limits) : NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, tool->name);
      json_builder_set_member_name (builder, "description");
      json_builder_add_string_value (builder, described != NULL ? described : tool->description);
      json_builder_set_member_name (builder, schema_member);
      add_parameters_schema (builder, tool, limits);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);

  root = json_builder_get_root (builder);
  return json_to_string (root, FALSE);
}

/* The argument check ------------------------------------------------------- */

static const SandboxCodingArgEntry *
find_arg (const SandboxCodingToolEntry *tool,
          const char                   *name)
{
  for (const SandboxCodingArgEntry *arg = tool->args; arg->name != NULL; arg++)
    if (strcmp (arg->name, name) == 0)
      return arg;
  return NULL;
}

static gboolean
holds_type (JsonNode *node,
            GType     type)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == type;
}

static gboolean
holds_arg_type (JsonNode             *node,
                SandboxCodingArgType  type)
{
  switch (type)
    {
    case SANDBOX_CODING_ARG_COUNT:
      return holds_type (node, G_TYPE_INT64) && json_node_get_int (node) >= 1;
    case SANDBOX_CODING_ARG_FLAG:
      return holds_type (node, G_TYPE_BOOLEAN);
    case SANDBOX_CODING_ARG_STRING:
    case SANDBOX_CODING_ARG_PATH:
    default:
      return holds_type (node, G_TYPE_STRING);
    }
}

/* Pass 1: @object against @tool's schema; NULL when it conforms. */
static JsonNode *
check_members (const SandboxCodingToolEntry *tool,
               JsonObject                   *object)
{
  g_autoptr(GList) members = json_object_get_members (object);

  for (GList *l = members; l != NULL; l = l->next)
    {
      const SandboxCodingArgEntry *arg = find_arg (tool, l->data);
      JsonNode *node = json_object_get_member (object, l->data);

      if (arg == NULL)
        {
          g_autoptr(GString) expected = g_string_new (NULL);

          for (const SandboxCodingArgEntry *a = tool->args; a->name != NULL; a++)
            g_string_append_printf (expected, "%s%s", expected->len ? ", " : "", a->name);
          return sandbox_coding_error_result ("SANDBOX_INVALID", NULL,
                                              "Unknown argument for %s; its arguments are: %s",
                                              tool->name, expected->str);
        }
      if (!holds_arg_type (node, arg->type))
        return sandbox_coding_error_result ("SANDBOX_INVALID", NULL,
                                            arg->type == SANDBOX_CODING_ARG_COUNT
                                            ? "Argument %s of %s must be a positive integer"
                                            : arg->type == SANDBOX_CODING_ARG_FLAG
                                            ? "Argument %s of %s must be true or false"
                                            : "Argument %s of %s must be a string",
                                            arg->name, tool->name);
    }

  for (const SandboxCodingArgEntry *arg = tool->args; arg->name != NULL; arg++)
    if (arg->required && !json_object_has_member (object, arg->name))
      return sandbox_coding_error_result ("SANDBOX_INVALID", NULL,
                                          "Missing required argument %s of %s",
                                          arg->name, tool->name);

  return NULL;
}

static JsonNode *
path_error_result (const SandboxCodingToolEntry *tool)
{
  /* The rejected path is not echoed: it could be a host path. */
  return sandbox_coding_error_result ("SANDBOX_PATH", NULL,
                                      "%s needs a path inside the workspace: relative to "
                                      "/workspace (or starting with /workspace/), without '..', "
                                      "'.' or empty segments",
                                      tool->name);
}

static gpointer
call_slot (SandboxCodingCall           *call,
           const SandboxCodingArgEntry *arg)
{
  return G_STRUCT_MEMBER_P (call, arg->offset);
}

/* Pass 2: the conforming @object's values into @call, the path canonical.
 * FALSE when the path is not a workspace path. */
static gboolean
take_arguments (SandboxCodingCall *call,
                JsonObject        *object)
{
  for (const SandboxCodingArgEntry *arg = call->tool->args; arg->name != NULL; arg++)
    {
      const char *given_string = NULL;
      gboolean given = json_object_has_member (object, arg->name);

      if (given && (arg->type == SANDBOX_CODING_ARG_STRING || arg->type == SANDBOX_CODING_ARG_PATH))
        given_string = json_object_get_string_member (object, arg->name);

      switch (arg->type)
        {
        case SANDBOX_CODING_ARG_STRING:
          *(char **) call_slot (call, arg) = g_strdup (given_string);
          break;
        case SANDBOX_CODING_ARG_PATH:
          *(char **) call_slot (call, arg) =
            sandbox_path_canonicalize (given ? given_string : ".", NULL);
          if (*(char **) call_slot (call, arg) == NULL)
            return FALSE;
          break;
        case SANDBOX_CODING_ARG_COUNT:
          *(gint64 *) call_slot (call, arg) =
            given ? json_object_get_int_member (object, arg->name) : arg->fallback;
          break;
        case SANDBOX_CODING_ARG_FLAG:
          *(gboolean *) call_slot (call, arg) =
            given && json_object_get_boolean_member (object, arg->name);
          break;
        default:
          g_assert_not_reached ();
        }
    }
  return TRUE;
}

/* Pass 3: each argument's bounds, in the table's order. */
static JsonNode *
check_bounds (const SandboxCodingCall   *call,
              const SandboxCodingLimits *limits)
{
  for (const SandboxCodingArgEntry *arg = call->tool->args; arg->name != NULL; arg++)
    {
      gconstpointer slot = G_STRUCT_MEMBER_P (call, arg->offset);
      JsonNode *invalid;

      if (arg->non_empty && *(char * const *) slot != NULL && **(char * const *) slot == '\0')
        return sandbox_coding_error_result ("SANDBOX_INVALID", NULL, "%s of %s is empty",
                                            arg->name, call->tool->name);
      if (arg->maximum_ms != NULL && *(const gint64 *) slot > (gint64) arg->maximum_ms (limits))
        return sandbox_coding_error_result ("SANDBOX_LIMIT", NULL,
                                            "%s of %s exceeds the host's maximum of %u ms",
                                            arg->name, call->tool->name, arg->maximum_ms (limits));
      if (arg->check != NULL && (invalid = arg->check (call)) != NULL)
        return invalid;
    }
  return NULL;
}

/* Checks the model's @arguments_json for @call's tool and takes its values
 * into @call; NULL when they pass, otherwise the result for the model. */
JsonNode *
sandbox_coding_schema_parse (SandboxCodingCall         *call,
                             const char                *arguments_json,
                             const SandboxCodingLimits *limits)
{
  g_autoptr(JsonNode) root = NULL;
  JsonNode *invalid;

  if (arguments_json == NULL || arguments_json[0] == '\0')
    arguments_json = "{}";
  if (strlen (arguments_json) > MAX_ARGUMENTS_BYTES)
    return sandbox_coding_error_result ("SANDBOX_LIMIT", NULL, "Arguments of %s exceed %d bytes",
                                        call->tool->name, MAX_ARGUMENTS_BYTES);

  /* Strict JSON only: no comments, duplicate members or wrapped integers. */
  root = sandbox_json_parse_strict (arguments_json, -1, NULL);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return sandbox_coding_error_result ("SANDBOX_INVALID", NULL,
                                        "Arguments of %s must be a JSON object", call->tool->name);

  invalid = check_members (call->tool, json_node_get_object (root));
  if (invalid != NULL)
    return invalid;
  if (!take_arguments (call, json_node_get_object (root)))
    return path_error_result (call->tool);
  return check_bounds (call, limits);
}

/* The dispatch ------------------------------------------------------------- */

/* Phase 2 of a call: the work of the tool its row names, unless the call
 * already has its result. FALSE only for cancellation. */
gboolean
sandbox_coding_schema_dispatch (SandboxCodingCall  *call,
                                GCancellable       *cancellable,
                                GError            **error)
{
  gboolean ok;

  if (call->result != NULL)
    return TRUE;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  ok = call->tool->run (call, cancellable, error);

  /* One channel: a result for the model, or a cancellation. */
  g_assert (ok == (call->result != NULL));
  return ok;
}
