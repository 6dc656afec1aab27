/* sandbox-command-schema.c — what the reference's command schema accepts
 *
 * sandbox_command_validate() and sandbox_command_new_from_json() refuse what
 * the reference's zod schema refuses, with its messages.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "sandbox-command-private.h"
#include "sandbox-error.h"
#include "sandbox-json-private.h"

/* Number.MAX_SAFE_INTEGER: the largest integer a JSON double holds exactly. */
#define MAX_SAFE_INTEGER G_GINT64_CONSTANT (9007199254740991)

static gboolean
invalid (GError    **error,
         const char *format,
         ...) G_GNUC_PRINTF (2, 3);

static gboolean
invalid (GError    **error,
         const char *format,
         ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                                                format, args));
  va_end (args);
  return FALSE;
}

static gboolean
check_utf8 (const char  *value,
            const char  *what,
            GError     **error)
{
  if (g_utf8_validate (value, -1, NULL))
    return TRUE;
  return invalid (error, "%s: Invalid input: expected a valid UTF-8 string", what);
}

/* A terminal type names a terminfo entry: a file name, so no `/`. */
static gboolean
terminal_type_is_valid (const char *type)
{
  gsize length = strlen (type);

  if (length == 0 || length > 64)
    return FALSE;
  for (const char *c = type; *c != '\0'; c++)
    if (!g_ascii_isalnum (*c) && strchr ("._+-", *c) == NULL)
      return FALSE;
  return TRUE;
}

static gboolean
validate_terminal (SandboxCommand  *self,
                   GError         **error)
{
  if (self->stdin_bytes != NULL)
    return invalid (error, "stdin: a terminal's input is what is typed on it "
                           "(the process's stdin stream), not bytes (stdin)");
  if (self->terminal_rows == 0 || self->terminal_rows > G_MAXUINT16)
    return invalid (error, "terminalRows: expected a number from 1 to 65535, got %u",
                    self->terminal_rows);
  if (self->terminal_columns == 0 || self->terminal_columns > G_MAXUINT16)
    return invalid (error, "terminalColumns: expected a number from 1 to 65535, got %u",
                    self->terminal_columns);
  if (!terminal_type_is_valid (self->terminal_type))
    return invalid (error, "terminalType: expected 1 to 64 letters, digits, “.”, “_”, "
                           "“+” or “-”");
  return TRUE;
}

/**
 * sandbox_command_validate:
 * @self: a [class@Sandbox.Command]
 * @error: return location for a #GError, or %NULL
 *
 * Checks that @self can be run: a non-empty executable, valid UTF-8 in every
 * string, a deadline of 1 … %SANDBOX_COMMAND_MAX_TIMEOUT_MS, an output cap of
 * at least 1, environment keys that are non-empty and contain no `=`, and,
 * for a terminal, its size and type and no stdin bytes.
 * The working directory is checked later, when a session canonicalizes it.
 *
 * Returns: %TRUE if @self is valid; %FALSE with %SANDBOX_ERROR_INVALID
 *   naming the first problem otherwise
 */
gboolean
sandbox_command_validate (SandboxCommand  *self,
                          GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (!check_utf8 (self->executable, "executable", error))
    return FALSE;
  if (self->executable[0] == '\0')
    return invalid (error, "executable: Too small: expected string to have >=1 characters");

  for (guint i = 0; i + 1 < self->args->len; i++)
    {
      g_autofree char *what = g_strdup_printf ("args[%u]", i);

      if (!check_utf8 (g_ptr_array_index (self->args, i), what, error))
        return FALSE;
    }

  if (!check_utf8 (self->cwd, "cwd", error))
    return FALSE;

  for (guint i = 0; i < self->env_keys->len; i++)
    {
      const char *key = g_ptr_array_index (self->env_keys, i);

      if (!check_utf8 (key, "environment", error) ||
          !check_utf8 (g_ptr_array_index (self->env_values, i), "environment", error))
        return FALSE;
      if (key[0] == '\0' || strchr (key, '=') != NULL)
        return invalid (error, "environment: Invalid input: a variable name must be non-empty "
                               "and must not contain “=”");
    }

  if (self->timeout_ms == 0)
    return invalid (error, "timeoutMs: Too small: expected number to be >0");
  if (self->timeout_ms > SANDBOX_COMMAND_MAX_TIMEOUT_MS)
    return invalid (error, "timeoutMs: Too big: expected number to be <=%d",
                    SANDBOX_COMMAND_MAX_TIMEOUT_MS);
  if (self->max_output_bytes == 0)
    return invalid (error, "maxOutputBytes: Too small: expected number to be >0");
  if (self->stdin_stream && self->stdin_bytes != NULL)
    return invalid (error, "stdin: a command's standard input is either bytes (stdin) or "
                           "a stream (stdin-stream), not both");

  return !self->terminal || validate_terminal (self, error);
}

/* ---- JSON --------------------------------------------------------------- */

static gboolean
node_is_number (JsonNode *node)
{
  GType type;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  type = json_node_get_value_type (node);
  return type == G_TYPE_INT64 || type == G_TYPE_DOUBLE;
}

static const char *
read_string (JsonNode    *node,
             const char  *where,
             GError     **error)
{
  if (sandbox_json_node_is_string (node))
    return json_node_get_string (node);

  invalid (error, "%s: Invalid input: expected string, received %s",
           where, sandbox_json_type_name (node));
  return NULL;
}

/* zod's z.number().int().positive().max(@max), on a JSON number that
 * json-glib gives as an int64 or, for "1e3" or "1.5", as a double. */
static gboolean
read_positive_int (JsonNode     *node,
                   const char   *where,
                   gint64        max,
                   gint64       *out,
                   GError      **error)
{
  if (!node_is_number (node))
    return invalid (error, "%s: Invalid input: expected number, received %s",
                    where, sandbox_json_type_name (node));

  if (json_node_get_value_type (node) == G_TYPE_INT64)
    *out = json_node_get_int (node);
  else
    {
      double value = json_node_get_double (node);

      /* Doubles of 2^63 and beyond are all integral, and too big anyway. */
      if (!isfinite (value) ||
          (value > -9.2e18 && value < 9.2e18 && value != (double) (gint64) value))
        return invalid (error, "%s: Invalid input: expected int, received number", where);
      if (value <= 0)
        return invalid (error, "%s: Too small: expected number to be >0", where);
      if (value > (double) max)
        return invalid (error, "%s: Too big: expected number to be <=%" G_GINT64_FORMAT,
                        where, max);
      *out = (gint64) value;
    }

  if (*out <= 0)
    return invalid (error, "%s: Too small: expected number to be >0", where);
  if (*out > max)
    return invalid (error, "%s: Too big: expected number to be <=%" G_GINT64_FORMAT, where, max);
  return TRUE;
}

static gboolean
read_args (SandboxCommand  *self,
           JsonNode        *node,
           GError         **error)
{
  JsonArray *array;

  if (!JSON_NODE_HOLDS_ARRAY (node))
    return invalid (error, "args: Invalid input: expected array, received %s",
                    sandbox_json_type_name (node));

  array = json_node_get_array (node);
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      g_autofree char *where = g_strdup_printf ("args[%u]", i);
      const char *arg = read_string (json_array_get_element (array, i), where, error);

      if (arg == NULL)
        return FALSE;
      sandbox_command_add_arg (self, arg);
    }

  return TRUE;
}

static gboolean
read_environment (SandboxCommand  *self,
                  JsonNode        *node,
                  GError         **error)
{
  JsonObject *object;
  g_autoptr(GList) keys = NULL;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return invalid (error, "environment: Invalid input: expected record, received %s",
                    sandbox_json_type_name (node));

  object = json_node_get_object (node);
  keys = json_object_get_members (object);
  for (GList *l = keys; l != NULL; l = l->next)
    {
      g_autofree char *where = g_strdup_printf ("environment.%s", (const char *) l->data);
      const char *value = read_string (json_object_get_member (object, l->data), where, error);

      if (value == NULL)
        return FALSE;
      sandbox_command_setenv (self, l->data, value);
    }

  return TRUE;
}

static gboolean
read_command_object (SandboxCommand  *self,
                     JsonObject      *object,
                     GError         **error)
{
  static const char * const known[] = {
    "executable", "args", "cwd", "environment", "timeoutMs", "maxOutputBytes", NULL
  };
  g_autoptr(GList) members = json_object_get_members (object);
  const char *executable;
  JsonNode *node;
  gint64 number;

  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (known, l->data))
      return invalid (error, "Unrecognized key: \"%s\"", (const char *) l->data);

  executable = read_string (json_object_get_member (object, "executable"), "executable", error);
  if (executable == NULL)
    return FALSE;
  sandbox_command_set_executable (self, executable);

  if ((node = json_object_get_member (object, "args")) != NULL &&
      !read_args (self, node, error))
    return FALSE;

  if ((node = json_object_get_member (object, "cwd")) != NULL)
    {
      const char *cwd = read_string (node, "cwd", error);

      if (cwd == NULL)
        return FALSE;
      sandbox_command_set_cwd (self, cwd);
    }

  if ((node = json_object_get_member (object, "environment")) != NULL &&
      !read_environment (self, node, error))
    return FALSE;

  if ((node = json_object_get_member (object, "timeoutMs")) != NULL)
    {
      if (!read_positive_int (node, "timeoutMs", SANDBOX_COMMAND_MAX_TIMEOUT_MS, &number, error))
        return FALSE;
      self->timeout_ms = (guint) number;
    }

  if ((node = json_object_get_member (object, "maxOutputBytes")) != NULL)
    {
      gint64 max = MIN (MAX_SAFE_INTEGER, (gint64) MIN (G_MAXSIZE, (guint64) G_MAXINT64));

      if (!read_positive_int (node, "maxOutputBytes", max, &number, error))
        return FALSE;
      self->max_output_bytes = (guint64) number;
    }

  return sandbox_command_validate (self, error);
}

/**
 * sandbox_command_new_from_json:
 * @json: a JSON object in the reference's command form
 * @error: return location for a #GError, or %NULL
 *
 * Parses `{"executable": …, "args": […], "cwd": …, "environment": {…},
 * "timeoutMs": …, "maxOutputBytes": …}`; only `executable` is required.
 * Parsing is strict: unknown members, wrong types, non-integral, zero,
 * negative or too large limits are refused with the reference's messages,
 * and the result must pass [method@Sandbox.Command.validate].
 *
 * Returns: (transfer full): a new [class@Sandbox.Command], or %NULL with
 *   %SANDBOX_ERROR_INVALID set
 */
SandboxCommand *
sandbox_command_new_from_json (const char  *json,
                               GError     **error)
{
  g_autoptr(SandboxCommand) self = NULL;
  g_autoptr(JsonNode) root = NULL;

  g_return_val_if_fail (json != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  root = sandbox_json_parse_object (json, error);
  if (root == NULL)
    return NULL;

  self = g_object_new (SANDBOX_TYPE_COMMAND, NULL);
  if (!read_command_object (self, json_node_get_object (root), error))
    return NULL;

  return g_steal_pointer (&self);
}
