/* sandbox-memory-script-parse.c — reading a memory driver script
 *
 * Parses a script document (its format is documented in
 * sandbox-memory-script.c) into the script's rules, strictly: every member
 * is checked for its type and range, and an unknown one is an error that
 * names where it is. Answering commands from the rules is
 * sandbox-memory-script.c's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "sandbox-memory-script-private.h"
#include "sandbox-json-private.h"

#define SCRIPT_MAX_EXIT_STATUS 255
#define SCRIPT_MAX_DELAY_MS    G_MAXINT32

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
  "stdout-from-stdin", "stdout-from-file-arg", "writes", "links", "chunks",
  "delay-ms", "fault", NULL
};

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
      *bytes = sandbox_json_base64_decode (text);
      if (*bytes == NULL)
        return parser_fail (parser, where, "must be valid base64");
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
              gboolean           links,
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
      if (links && text[0] == '\0')
        return parser_fail (parser, member_where, "must be a link target, not empty");

      canonical = sandbox_path_canonicalize (path, &path_error);
      if (canonical == NULL)
        return parser_fail (parser, member_where, "does not name a workspace file: %s",
                            path_error->message);
      if (g_str_equal (canonical, SANDBOX_WORKSPACE))
        return parser_fail (parser, member_where, "names the workspace root, not a file");

      write = g_new0 (SandboxMemoryWrite, 1);
      write->relative = g_strdup (sandbox_path_relative (canonical));
      write->contents = links ? NULL : g_bytes_new (text, strlen (text));
      write->target = links ? g_strdup (text) : NULL;
      g_ptr_array_add (rule->writes, write);
    }

  return TRUE;
}

/* The "fault" member's values, read by parse_fault() and named back by
 * check_fault_members(). */
static const struct
{
  const char *name;
  SandboxMemoryFault fault;
} fault_names[] = {
  { "spawn-failure", SANDBOX_MEMORY_FAULT_SPAWN_FAILURE },
  { "never-ends", SANDBOX_MEMORY_FAULT_NEVER_ENDS },
  { "output-flood", SANDBOX_MEMORY_FAULT_OUTPUT_FLOOD },
};

static gboolean
parse_fault (ScriptParser       *parser,
             JsonNode           *node,
             const char         *where,
             SandboxMemoryFault *fault)
{
  const char *name = NULL;

  if (!read_string (parser, node, where, &name))
    return FALSE;

  for (gsize i = 0; i < G_N_ELEMENTS (fault_names); i++)
    if (g_str_equal (name, fault_names[i].name))
      {
        *fault = fault_names[i].fault;
        return TRUE;
      }

  return parser_fail (parser, where,
                      "must be “spawn-failure”, “never-ends” or “output-flood”, not “%s”", name);
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
  const char *fault_name = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (fault_names); i++)
    if (fault_names[i].fault == fault)
      fault_name = fault_names[i].name;
  if (fault_name == NULL)
    return TRUE;   /* SANDBOX_MEMORY_FAULT_NONE */

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
      !parse_writes (parser, node, member_where, FALSE, rule))
    return FALSE;

  if ((node = optional_member (object, where, "links", &member_where)) != NULL &&
      !parse_writes (parser, node, member_where, TRUE, rule))
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
  g_autoptr(SandboxMemoryRule) rule = sandbox_memory_rule_new ();
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
  g_autoptr(SandboxMemoryRule) rule = sandbox_memory_rule_new ();
  JsonObject *object = NULL;

  if (!check_object (parser, node, "default", &object) ||
      !check_known_members (parser, object, "default", answer_members) ||
      !parse_answer (parser, object, "default", rule))
    return NULL;

  return g_steal_pointer (&rule);
}

/* Parses one document into @self, appending its command entries. */
gboolean
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
