/* sandbox-memory-script.c — the declared answers of scripted commands
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/**
 * SECTION:sandbox-memory-script
 * @title: Memory driver script
 * @short_description: how the memory driver answers commands
 *
 * The memory driver never executes anything. Each command a session spawns
 * is answered from a script, a JSON document given to the backend as the
 * construct property `script` (the document itself) and/or `script-file` (a
 * path to it). When both are given, the entries of `script` come first, then
 * those of `script-file`; at most one of them may declare a `default`.
 *
 * |[
 * {
 *   "commands": [
 *     { "match": { "executable": "/usr/bin/cat", "args": ["hello.txt"] },
 *       "stdout": "hello" },
 *     { "match": { "executable": "/usr/bin/cat" }, "stdout-from-file-arg": true },
 *     { "match": { "executable": "/usr/bin/tee" }, "stdout-from-stdin": true,
 *       "writes": { "out.txt": "written by tee\n" } },
 *     { "match": { "executable": "/usr/bin/sleep" }, "delay-ms": 200 },
 *     { "match": { "executable": "/usr/bin/make" },
 *       "chunks": [ { "stdout": "step 1\n" },
 *                   { "stdout": "step 2\n", "delay-ms": 50 },
 *                   { "stderr-base64": "d2FybmluZwo=", "delay-ms": 50 } ],
 *       "exit": 2 },
 *     { "match": { "executable": "/bin/forever" }, "fault": "never-ends" },
 *     { "match": { "executable": "/bin/flood" }, "fault": "output-flood" },
 *     { "match": { "executable": "/bin/broken" }, "fault": "spawn-failure" }
 *   ],
 *   "default": { "exit": 127, "stderr": "command not scripted\n" }
 * }
 * ]|
 *
 * The top level is an object with two optional members:
 * - `commands`: an array of entries. A command is answered by the first
 *   entry whose `match` fits it.
 * - `default`: the answer, without `match`, to a command no entry matches.
 *   Without it such a command exits with 127 and says on stderr that it is
 *   not scripted.
 *
 * `match` is an object: `executable` (a non-empty string, compared exactly)
 * and optionally `args` (an array of strings; when present the command's
 * arguments must be exactly these, when absent any arguments match).
 *
 * An answer may have these members, all optional:
 * - `exit`: the exit status, an integer from 0 to 255 (default 0);
 * - `stdout`, `stderr`: text written at once; or `stdout-base64`,
 *   `stderr-base64` for arbitrary bytes (not both forms of one stream);
 * - `stdout-from-stdin`: %TRUE to copy the command's stdin to stdout;
 * - `stdout-from-file-arg`: %TRUE to copy the workspace file named by the
 *   command's first argument (relative to its working directory, or under
 *   `/workspace/`) to stdout; a missing or unreadable file gives exit status
 *   1 and a message on stderr, as `cat` would;
 * - `writes`: an object from workspace paths to text; those files are
 *   written (parents created) when the command starts, in order; a write
 *   that fails gives exit status 1 and a message on stderr;
 * - `chunks`: an array of output pieces written after the immediate output,
 *   each an object with exactly one of `stdout`, `stderr`, `stdout-base64`,
 *   `stderr-base64` and optionally `delay-ms` (milliseconds after the
 *   previous output); this is how a test sees live [signal@Sandbox.Process::stdout-data];
 * - `delay-ms`: milliseconds between the last output and the exit;
 * - `fault`: `"spawn-failure"` (spawning fails with %SANDBOX_ERROR_UNAVAILABLE
 *   and nothing starts; no other member is allowed), `"never-ends"` (the
 *   command writes its output and then runs until its deadline, a stop or a
 *   cancellation) or `"output-flood"` (after its output the command writes
 *   to stdout without end until the output limit kills it); neither of the
 *   last two may have `exit` or `delay-ms`.
 *
 * A command runs in this order: `writes`, then stdin (with
 * `stdout-from-stdin`), the file (with `stdout-from-file-arg`), `stdout`,
 * `stderr`, the `chunks` in order, then `delay-ms`, then the exit.
 *
 * The script is checked when the backend is initialized: a document that is
 * not JSON, an unknown member, a member of the wrong type, an out-of-range
 * number, invalid base64 or a path that is not a canonical workspace path
 * fails with %SANDBOX_ERROR_INVALID naming the member, such as
 * `“commands[2].chunks[0].delay-ms”`.
 */

#include <errno.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "sandbox-memory-script.h"

#define SCRIPT_MAX_EXIT_STATUS 255
#define SCRIPT_MAX_DELAY_MS    G_MAXINT32

struct _SandboxMemoryScript
{
  GPtrArray         *rules;          /* (element-type SandboxMemoryRule) */
  SandboxMemoryRule *default_rule;
  SandboxMemoryRule *not_found_rule;       /* a workspace executable that is not there */
  SandboxMemoryRule *not_directory_rule;   /* a path through a file */
  SandboxMemoryRule *not_executable_rule;  /* one without its execute bit, a directory */
};

/* Where in which document a member is, for error messages. */
typedef struct
{
  const char  *source;
  GError     **error;
} ScriptParser;

static const char * const match_members[] = { "executable", "args", NULL };
static const char * const chunk_members[] = {
  "stdout", "stderr", "stdout-base64", "stderr-base64", "delay-ms", NULL
};
static const char * const answer_members[] = {
  "exit", "stdout", "stderr", "stdout-base64", "stderr-base64",
  "stdout-from-stdin", "stdout-from-file-arg", "writes", "chunks",
  "delay-ms", "fault", NULL
};

static void
chunk_free (gpointer data)
{
  SandboxMemoryChunk *chunk = data;

  g_clear_pointer (&chunk->data, g_bytes_unref);
  g_free (chunk);
}

static void
write_free (gpointer data)
{
  SandboxMemoryWrite *write = data;

  g_free (write->relative);
  g_clear_pointer (&write->contents, g_bytes_unref);
  g_free (write);
}

static SandboxMemoryRule *
rule_new (void)
{
  SandboxMemoryRule *rule = g_new0 (SandboxMemoryRule, 1);

  rule->writes = g_ptr_array_new_with_free_func (write_free);
  rule->chunks = g_ptr_array_new_with_free_func (chunk_free);

  return rule;
}

static void
rule_free (gpointer data)
{
  SandboxMemoryRule *rule = data;

  if (rule == NULL)
    return;

  g_free (rule->executable);
  g_strfreev (rule->args);
  g_clear_pointer (&rule->stdout_bytes, g_bytes_unref);
  g_clear_pointer (&rule->stderr_bytes, g_bytes_unref);
  g_clear_pointer (&rule->writes, g_ptr_array_unref);
  g_clear_pointer (&rule->chunks, g_ptr_array_unref);
  g_free (rule);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxMemoryRule, rule_free)

G_GNUC_PRINTF (3, 4)
static gboolean
parser_fail (ScriptParser *parser,
             const char   *where,
             const char   *format,
             ...)
{
  g_autofree char *detail = NULL;
  va_list args;

  va_start (args, format);
  detail = g_strdup_vprintf (format, args);
  va_end (args);

  g_set_error (parser->error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Invalid memory driver script%s: “%s” %s", parser->source, where, detail);
  return FALSE;
}

static gboolean
check_object (ScriptParser  *parser,
              JsonNode      *node,
              const char    *where,
              JsonObject   **object)
{
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return parser_fail (parser, where, "must be an object");

  *object = json_node_get_object (node);
  return TRUE;
}

static gboolean
check_array (ScriptParser  *parser,
             JsonNode      *node,
             const char    *where,
             const char    *expected,
             JsonArray    **array)
{
  if (!JSON_NODE_HOLDS_ARRAY (node))
    return parser_fail (parser, where, "%s", expected);

  *array = json_node_get_array (node);
  return TRUE;
}

/* Whether @node is a JSON value of @type (string, boolean or integer). */
static gboolean
holds_value (JsonNode *node,
             GType     type)
{
  return JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == type;
}

/* The member @name of @object, or %NULL when absent; @member_where is set to
 * its place in the document ("where.name") for messages. */
static JsonNode *
optional_member (JsonObject  *object,
                 const char  *where,
                 const char  *name,
                 char       **member_where)
{
  g_free (*member_where);
  *member_where = g_strdup_printf ("%s.%s", where, name);
  return json_object_get_member (object, name);
}

static gboolean
check_known_members (ScriptParser       *parser,
                     JsonObject         *object,
                     const char         *where,
                     const char * const *allowed)
{
  g_autoptr(GList) members = json_object_get_members (object);

  for (const GList *l = members; l != NULL; l = l->next)
    {
      if (!g_strv_contains (allowed, l->data))
        {
          g_autofree char *member = g_strdup_printf ("%s.%s", where, (const char *) l->data);

          return parser_fail (parser, member, "is not a known member");
        }
    }

  return TRUE;
}

static gboolean
read_string (ScriptParser  *parser,
             JsonNode      *node,
             const char    *where,
             const char   **value)
{
  if (!holds_value (node, G_TYPE_STRING))
    return parser_fail (parser, where, "must be a string");

  *value = json_node_get_string (node);
  return TRUE;
}

static gboolean
read_boolean (ScriptParser *parser,
              JsonNode     *node,
              const char   *where,
              gboolean     *value)
{
  if (!holds_value (node, G_TYPE_BOOLEAN))
    return parser_fail (parser, where, "must be true or false");

  *value = json_node_get_boolean (node);
  return TRUE;
}

static gboolean
read_integer (ScriptParser *parser,
              JsonNode     *node,
              const char   *where,
              gint64        minimum,
              gint64        maximum,
              gint64       *value)
{
  if (!holds_value (node, G_TYPE_INT64) ||
      json_node_get_int (node) < minimum || json_node_get_int (node) > maximum)
    return parser_fail (parser, where,
                        "must be an integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                        minimum, maximum);

  *value = json_node_get_int (node);
  return TRUE;
}

static gboolean
read_delay (ScriptParser *parser,
            JsonNode     *node,
            const char   *where,
            guint        *delay_ms)
{
  gint64 value = 0;

  if (!read_integer (parser, node, where, 0, SCRIPT_MAX_DELAY_MS, &value))
    return FALSE;

  *delay_ms = (guint) value;
  return TRUE;
}

/* g_base64_decode() skips characters it does not know, so check the text
 * first: only the base64 alphabet, whole quanta, padding only at the end. */
static gboolean
base64_is_valid (const char *text)
{
  gsize length = strlen (text);
  gsize padding = 0;

  if (length % 4 != 0)
    return FALSE;

  for (gsize i = 0; i < length; i++)
    {
      char c = text[i];

      if (c == '=')
        {
          if (i + 2 < length)
            return FALSE;
          padding++;
        }
      else if (padding > 0 || !(g_ascii_isalnum (c) || c == '+' || c == '/'))
        return FALSE;
    }

  return TRUE;
}

/* Reads a "text" or "base64" output member into bytes. */
static gboolean
read_output (ScriptParser  *parser,
             JsonNode      *node,
             const char    *where,
             gboolean       is_base64,
             GBytes       **bytes)
{
  const char *text = NULL;

  if (!read_string (parser, node, where, &text))
    return FALSE;

  if (is_base64)
    {
      guchar *data;
      gsize length = 0;

      if (!base64_is_valid (text))
        return parser_fail (parser, where, "must be valid base64");

      data = g_base64_decode (text, &length);
      *bytes = g_bytes_new_take (data, length);
    }
  else
    {
      *bytes = g_bytes_new (text, strlen (text));
    }

  return TRUE;
}

/* Reads `stdout`/`stdout-base64` (or the stderr pair) of @object, refusing
 * both forms at once. @bytes stays NULL when neither is present. */
static gboolean
read_stream_output (ScriptParser  *parser,
                    JsonObject    *object,
                    const char    *where,
                    const char    *stream_name,
                    GBytes       **bytes)
{
  g_autofree char *base64_name = g_strconcat (stream_name, "-base64", NULL);
  g_autofree char *text_where = g_strdup_printf ("%s.%s", where, stream_name);
  g_autofree char *base64_where = g_strdup_printf ("%s.%s", where, base64_name);
  JsonNode *text_node = json_object_get_member (object, stream_name);
  JsonNode *base64_node = json_object_get_member (object, base64_name);

  if (text_node != NULL && base64_node != NULL)
    return parser_fail (parser, base64_where, "cannot be combined with “%s”", stream_name);
  if (text_node != NULL)
    return read_output (parser, text_node, text_where, FALSE, bytes);
  if (base64_node != NULL)
    return read_output (parser, base64_node, base64_where, TRUE, bytes);

  return TRUE;
}

static gboolean
parse_chunk (ScriptParser       *parser,
             JsonNode           *node,
             const char         *where,
             SandboxMemoryChunk *chunk)
{
  g_autoptr(GBytes) stdout_bytes = NULL;
  g_autoptr(GBytes) stderr_bytes = NULL;
  g_autofree char *delay_where = NULL;
  JsonObject *object = NULL;
  JsonNode *delay;

  if (!check_object (parser, node, where, &object) ||
      !check_known_members (parser, object, where, chunk_members) ||
      !read_stream_output (parser, object, where, "stdout", &stdout_bytes) ||
      !read_stream_output (parser, object, where, "stderr", &stderr_bytes))
    return FALSE;

  if ((stdout_bytes != NULL) == (stderr_bytes != NULL))
    return parser_fail (parser, where,
                        "must have exactly one of “stdout”, “stderr”, “stdout-base64” and “stderr-base64”");

  chunk->stream = stdout_bytes != NULL ? SANDBOX_OUTPUT_STDOUT : SANDBOX_OUTPUT_STDERR;
  chunk->data = stdout_bytes != NULL ? g_steal_pointer (&stdout_bytes) : g_steal_pointer (&stderr_bytes);

  delay = optional_member (object, where, "delay-ms", &delay_where);
  if (delay != NULL)
    return read_delay (parser, delay, delay_where, &chunk->delay_ms);

  return TRUE;
}

static gboolean
parse_chunks (ScriptParser      *parser,
              JsonNode          *node,
              const char        *where,
              SandboxMemoryRule *rule)
{
  JsonArray *array = NULL;

  if (!check_array (parser, node, where, "must be an array", &array))
    return FALSE;

  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      g_autofree char *chunk_where = g_strdup_printf ("%s[%u]", where, i);
      SandboxMemoryChunk *chunk = g_new0 (SandboxMemoryChunk, 1);

      g_ptr_array_add (rule->chunks, chunk);
      if (!parse_chunk (parser, json_array_get_element (array, i), chunk_where, chunk))
        return FALSE;
    }

  return TRUE;
}

static gboolean
parse_writes (ScriptParser      *parser,
              JsonNode          *node,
              const char        *where,
              SandboxMemoryRule *rule)
{
  g_autoptr(GList) members = NULL;
  JsonObject *object = NULL;

  if (!check_object (parser, node, where, &object))
    return FALSE;

  members = json_object_get_members (object);
  for (const GList *l = members; l != NULL; l = l->next)
    {
      const char *path = l->data;
      g_autofree char *member_where = g_strdup_printf ("%s.%s", where, path);
      g_autofree char *canonical = NULL;
      g_autoptr(GError) path_error = NULL;
      SandboxMemoryWrite *write;
      const char *text = NULL;

      if (!read_string (parser, json_object_get_member (object, path), member_where, &text))
        return FALSE;

      canonical = sandbox_path_canonicalize (path, &path_error);
      if (canonical == NULL)
        return parser_fail (parser, member_where, "does not name a workspace file: %s",
                            path_error->message);
      if (g_str_equal (canonical, SANDBOX_WORKSPACE))
        return parser_fail (parser, member_where, "names the workspace root, not a file");

      write = g_new0 (SandboxMemoryWrite, 1);
      write->relative = g_strdup (sandbox_path_relative (canonical));
      write->contents = g_bytes_new (text, strlen (text));
      g_ptr_array_add (rule->writes, write);
    }

  return TRUE;
}

static gboolean
parse_fault (ScriptParser       *parser,
             JsonNode           *node,
             const char         *where,
             SandboxMemoryFault *fault)
{
  const char *name = NULL;

  if (!read_string (parser, node, where, &name))
    return FALSE;

  if (g_str_equal (name, "spawn-failure"))
    *fault = SANDBOX_MEMORY_FAULT_SPAWN_FAILURE;
  else if (g_str_equal (name, "never-ends"))
    *fault = SANDBOX_MEMORY_FAULT_NEVER_ENDS;
  else if (g_str_equal (name, "output-flood"))
    *fault = SANDBOX_MEMORY_FAULT_OUTPUT_FLOOD;
  else
    return parser_fail (parser, where,
                        "must be “spawn-failure”, “never-ends” or “output-flood”, not “%s”", name);

  return TRUE;
}

/* A fault that ends the command some other way makes members describing a
 * normal run meaningless; refuse them rather than ignore them silently. */
static gboolean
check_fault_members (ScriptParser      *parser,
                     JsonObject        *object,
                     const char        *where,
                     SandboxMemoryFault fault)
{
  static const char * const ending_members[] = { "exit", "delay-ms", NULL };
  g_autoptr(GList) members = json_object_get_members (object);
  const char *fault_name;

  if (fault == SANDBOX_MEMORY_FAULT_NONE)
    return TRUE;

  fault_name = fault == SANDBOX_MEMORY_FAULT_SPAWN_FAILURE ? "spawn-failure"
             : fault == SANDBOX_MEMORY_FAULT_NEVER_ENDS ? "never-ends"
             : "output-flood";

  for (const GList *l = members; l != NULL; l = l->next)
    {
      const char *member = l->data;
      g_autofree char *member_where = NULL;

      if (g_str_equal (member, "fault") || g_str_equal (member, "match"))
        continue;
      if (fault != SANDBOX_MEMORY_FAULT_SPAWN_FAILURE && !g_strv_contains (ending_members, member))
        continue;

      member_where = g_strdup_printf ("%s.%s", where, member);
      return parser_fail (parser, member_where, "cannot be combined with the fault “%s”",
                          fault_name);
    }

  return TRUE;
}

/* Reads the answer members of a command entry or of the default. */
static gboolean
parse_answer (ScriptParser      *parser,
              JsonObject        *object,
              const char        *where,
              SandboxMemoryRule *rule)
{
  g_autofree char *member_where = NULL;
  JsonNode *node;

  if (!read_stream_output (parser, object, where, "stdout", &rule->stdout_bytes) ||
      !read_stream_output (parser, object, where, "stderr", &rule->stderr_bytes))
    return FALSE;

  if ((node = optional_member (object, where, "exit", &member_where)) != NULL)
    {
      gint64 exit_status = 0;

      if (!read_integer (parser, node, member_where, 0, SCRIPT_MAX_EXIT_STATUS, &exit_status))
        return FALSE;
      rule->exit_status = (int) exit_status;
    }

  if ((node = optional_member (object, where, "delay-ms", &member_where)) != NULL &&
      !read_delay (parser, node, member_where, &rule->delay_ms))
    return FALSE;

  if ((node = optional_member (object, where, "stdout-from-stdin", &member_where)) != NULL &&
      !read_boolean (parser, node, member_where, &rule->stdout_from_stdin))
    return FALSE;

  if ((node = optional_member (object, where, "stdout-from-file-arg", &member_where)) != NULL &&
      !read_boolean (parser, node, member_where, &rule->stdout_from_file_arg))
    return FALSE;

  if ((node = optional_member (object, where, "writes", &member_where)) != NULL &&
      !parse_writes (parser, node, member_where, rule))
    return FALSE;

  if ((node = optional_member (object, where, "chunks", &member_where)) != NULL &&
      !parse_chunks (parser, node, member_where, rule))
    return FALSE;

  if ((node = optional_member (object, where, "fault", &member_where)) != NULL &&
      !parse_fault (parser, node, member_where, &rule->fault))
    return FALSE;

  return check_fault_members (parser, object, where, rule->fault);
}

static gboolean
parse_match (ScriptParser      *parser,
             JsonNode          *node,
             const char        *where,
             SandboxMemoryRule *rule)
{
  g_autofree char *executable_where = NULL;
  g_autofree char *args_where = NULL;
  JsonObject *object = NULL;
  JsonNode *executable;
  JsonNode *args;
  const char *text = NULL;

  if (!check_object (parser, node, where, &object) ||
      !check_known_members (parser, object, where, match_members))
    return FALSE;

  executable = optional_member (object, where, "executable", &executable_where);
  if (executable == NULL)
    return parser_fail (parser, executable_where, "is required");
  if (!read_string (parser, executable, executable_where, &text))
    return FALSE;
  if (*text == '\0')
    return parser_fail (parser, executable_where, "must not be empty");
  rule->executable = g_strdup (text);

  args = optional_member (object, where, "args", &args_where);
  if (args != NULL)
    {
      g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
      JsonArray *array = NULL;

      if (!check_array (parser, args, args_where, "must be an array of strings", &array))
        return FALSE;

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          g_autofree char *arg_where = g_strdup_printf ("%s[%u]", args_where, i);

          if (!read_string (parser, json_array_get_element (array, i), arg_where, &text))
            return FALSE;
          g_strv_builder_add (builder, text);
        }
      rule->args = g_strv_builder_end (builder);
    }

  return TRUE;
}

static SandboxMemoryRule *
parse_command (ScriptParser *parser,
               JsonNode     *node,
               const char   *where)
{
  g_autoptr(SandboxMemoryRule) rule = rule_new ();
  g_autofree char *match_where = g_strdup_printf ("%s.match", where);
  g_auto(GStrv) allowed = NULL;
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  JsonObject *object = NULL;
  JsonNode *match;

  g_strv_builder_add (builder, "match");
  g_strv_builder_addv (builder, (const char **) answer_members);
  allowed = g_strv_builder_end (builder);

  if (!check_object (parser, node, where, &object) ||
      !check_known_members (parser, object, where, (const char * const *) allowed))
    return NULL;

  match = json_object_get_member (object, "match");
  if (match == NULL)
    {
      parser_fail (parser, match_where, "is required");
      return NULL;
    }

  if (!parse_match (parser, match, match_where, rule) ||
      !parse_answer (parser, object, where, rule))
    return NULL;

  return g_steal_pointer (&rule);
}

static SandboxMemoryRule *
parse_default (ScriptParser *parser,
               JsonNode     *node)
{
  g_autoptr(SandboxMemoryRule) rule = rule_new ();
  JsonObject *object = NULL;

  if (!check_object (parser, node, "default", &object) ||
      !check_known_members (parser, object, "default", answer_members) ||
      !parse_answer (parser, object, "default", rule))
    return NULL;

  return g_steal_pointer (&rule);
}

/* Parses one document into @self, appending its command entries. */
static gboolean
sandbox_memory_script_parse (SandboxMemoryScript  *self,
                             const char           *json,
                             gssize                length,
                             const char           *source,
                             GError              **error)
{
  static const char * const document_members[] = { "commands", "default", NULL };
  g_autoptr(JsonParser) json_parser = json_parser_new_immutable ();
  g_autoptr(GError) json_error = NULL;
  ScriptParser parser = { source, error };
  JsonObject *document;
  JsonNode *root;
  JsonNode *commands;
  JsonNode *fallback;

  if (!json_parser_load_from_data (json_parser, json, length, &json_error))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Invalid memory driver script%s: not JSON: %s", source, json_error->message);
      return FALSE;
    }

  root = json_parser_get_root (json_parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Invalid memory driver script%s: the document must be a JSON object", source);
      return FALSE;
    }

  document = json_node_get_object (root);
  if (!check_known_members (&parser, document, "(document)", document_members))
    return FALSE;

  commands = json_object_get_member (document, "commands");
  if (commands != NULL)
    {
      JsonArray *array = NULL;

      if (!check_array (&parser, commands, "commands", "must be an array", &array))
        return FALSE;

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          g_autofree char *where = g_strdup_printf ("commands[%u]", i);
          SandboxMemoryRule *rule = parse_command (&parser, json_array_get_element (array, i), where);

          if (rule == NULL)
            return FALSE;
          g_ptr_array_add (self->rules, rule);
        }
    }

  fallback = json_object_get_member (document, "default");
  if (fallback != NULL)
    {
      if (self->default_rule != NULL)
        return parser_fail (&parser, "default",
                            "is declared by both “script” and “script-file”");

      self->default_rule = parse_default (&parser, fallback);
      if (self->default_rule == NULL)
        return FALSE;
    }

  return TRUE;
}

static SandboxMemoryRule *
unscripted_rule_new (void)
{
  SandboxMemoryRule *rule = rule_new ();

  rule->exit_status = 127;
  rule->unscripted = TRUE;

  return rule;
}

/* What the bubblewrap driver reports when execvp() fails in the guest: the
 * errno, as data (the core gives the status), and no output. */
static SandboxMemoryRule *
exec_failure_rule_new (int exec_errno)
{
  SandboxMemoryRule *rule = rule_new ();

  rule->exec_errno = exec_errno;

  return rule;
}

static void
sandbox_memory_script_free (SandboxMemoryScript *self)
{
  g_clear_pointer (&self->rules, g_ptr_array_unref);
  g_clear_pointer (&self->default_rule, rule_free);
  g_clear_pointer (&self->not_found_rule, rule_free);
  g_clear_pointer (&self->not_directory_rule, rule_free);
  g_clear_pointer (&self->not_executable_rule, rule_free);
}

/**
 * sandbox_memory_script_new:
 * @json: (nullable): a script document
 * @path: (nullable): the path of a script document
 * @error: return location for a #GError, or %NULL
 *
 * Parses the script of a memory backend: the entries of @json, then those of
 * the file at @path. With neither, every command gets the default answer.
 *
 * Returns: (transfer full): the script, or %NULL with %SANDBOX_ERROR_INVALID
 *   set, naming the offending member
 */
SandboxMemoryScript *
sandbox_memory_script_new (const char  *json,
                           const char  *path,
                           GError     **error)
{
  SandboxMemoryScript *self = g_atomic_rc_box_new0 (SandboxMemoryScript);
  g_autoptr(SandboxMemoryScript) script = self;

  self->rules = g_ptr_array_new_with_free_func (rule_free);

  if (json != NULL && !sandbox_memory_script_parse (self, json, -1, "", error))
    return NULL;

  if (path != NULL)
    {
      g_autofree char *contents = NULL;
      g_autofree char *source = g_strdup_printf (" “%s”", path);
      g_autoptr(GError) file_error = NULL;
      gsize length = 0;

      if (!g_file_get_contents (path, &contents, &length, &file_error))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Cannot read the memory driver script-file: %s", file_error->message);
          return NULL;
        }

      if (!sandbox_memory_script_parse (self, contents, length, source, error))
        return NULL;
    }

  if (self->default_rule == NULL)
    self->default_rule = unscripted_rule_new ();
  self->not_found_rule = exec_failure_rule_new (ENOENT);
  self->not_directory_rule = exec_failure_rule_new (ENOTDIR);
  self->not_executable_rule = exec_failure_rule_new (EACCES);

  return g_steal_pointer (&script);
}

/**
 * sandbox_memory_script_ref:
 * @self: a script
 *
 * Returns: (transfer full): @self, with one more reference
 */
SandboxMemoryScript *
sandbox_memory_script_ref (SandboxMemoryScript *self)
{
  return g_atomic_rc_box_acquire (self);
}

/**
 * sandbox_memory_script_unref:
 * @self: (transfer full): a script
 *
 * Drops a reference; the last one frees the script and its rules.
 */
void
sandbox_memory_script_unref (SandboxMemoryScript *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify) sandbox_memory_script_free);
}

static gboolean
rule_matches (const SandboxMemoryRule *rule,
              const char              *executable,
              const char * const      *args)
{
  static const char * const no_args[] = { NULL };

  if (!g_str_equal (rule->executable, executable))
    return FALSE;
  if (rule->args == NULL)
    return TRUE;

  return g_strv_equal ((const char * const *) rule->args, args != NULL ? args : no_args);
}

/**
 * sandbox_memory_script_lookup:
 * @self: a script
 * @executable: the command's executable
 * @args: (nullable): the command's arguments
 *
 * Finds how to answer a command: the first entry that matches it, else the
 * default.
 *
 * Returns: (transfer none): the rule, valid as long as @self
 */
const SandboxMemoryRule *
sandbox_memory_script_lookup (SandboxMemoryScript *self,
                              const char          *executable,
                              const char * const  *args)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (executable != NULL, NULL);

  for (guint i = 0; i < self->rules->len; i++)
    {
      const SandboxMemoryRule *rule = g_ptr_array_index (self->rules, i);

      if (rule_matches (rule, executable, args))
        return rule;
    }

  return self->default_rule;
}

/**
 * sandbox_memory_script_lookup_exec_failure:
 * @self: a script
 * @exec_errno: what execve() would say: `ENOENT` for an executable that is
 *   not in the workspace, `ENOTDIR` for a path through a file, `EACCES`
 *   for one that is there without its execute bit or is a directory
 *
 * Gets the answer to a command whose executable is a workspace file that
 * execve() would refuse, as bubblewrap answers it: the script is not
 * consulted, since the command would never start.
 *
 * Returns: (transfer none): the rule, owned by @self
 */
const SandboxMemoryRule *
sandbox_memory_script_lookup_exec_failure (SandboxMemoryScript *self,
                                           int                  exec_errno)
{
  g_return_val_if_fail (self != NULL, NULL);

  switch (exec_errno)
    {
    case ENOENT:
      return self->not_found_rule;
    case ENOTDIR:
      return self->not_directory_rule;
    case EACCES:
      return self->not_executable_rule;
    default:
      g_return_val_if_reached (self->not_found_rule);
    }
}
