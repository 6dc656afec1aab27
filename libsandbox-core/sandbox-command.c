/* sandbox-command.c — what to run in a sandbox
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "sandbox-command.h"
#include "sandbox-error.h"
#include "sandbox-json-private.h"

/* Number.MAX_SAFE_INTEGER: the largest integer a JSON double holds exactly. */
#define MAX_SAFE_INTEGER G_GINT64_CONSTANT (9007199254740991)

/**
 * SandboxCommand:
 *
 * A command to run inside a sandbox: the executable, its arguments, the
 * working directory (a workspace path, `"."` by default), extra environment
 * variables, a deadline, a cap on combined output and optional standard
 * input.
 *
 * Setters accept any value; sandbox_command_validate() (which the session
 * calls before running) reports everything that is out of range. The working
 * directory is checked when the session canonicalizes it.
 */
struct _SandboxCommand
{
  GObject parent_instance;

  char *executable;
  GPtrArray *args;        /* (element-type utf8), NULL-terminated */
  char *cwd;
  GPtrArray *env_keys;    /* (element-type utf8), insertion order */
  GPtrArray *env_values;  /* (element-type utf8), same order */
  guint timeout_ms;
  guint64 max_output_bytes;
  GBytes *stdin_bytes;
};

enum {
  PROP_0,
  PROP_EXECUTABLE,
  PROP_ARGS,
  PROP_CWD,
  PROP_TIMEOUT_MS,
  PROP_MAX_OUTPUT_BYTES,
  PROP_STDIN,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (SandboxCommand, sandbox_command, G_TYPE_OBJECT)

static void
sandbox_command_finalize (GObject *object)
{
  SandboxCommand *self = SANDBOX_COMMAND (object);

  g_clear_pointer (&self->executable, g_free);
  g_clear_pointer (&self->args, g_ptr_array_unref);
  g_clear_pointer (&self->cwd, g_free);
  g_clear_pointer (&self->env_keys, g_ptr_array_unref);
  g_clear_pointer (&self->env_values, g_ptr_array_unref);
  g_clear_pointer (&self->stdin_bytes, g_bytes_unref);

  G_OBJECT_CLASS (sandbox_command_parent_class)->finalize (object);
}

static void
sandbox_command_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  SandboxCommand *self = SANDBOX_COMMAND (object);

  switch (prop_id)
    {
    case PROP_EXECUTABLE:
      g_value_set_string (value, self->executable);
      break;
    case PROP_ARGS:
      g_value_set_boxed (value, self->args->pdata);
      break;
    case PROP_CWD:
      g_value_set_string (value, self->cwd);
      break;
    case PROP_TIMEOUT_MS:
      g_value_set_uint (value, self->timeout_ms);
      break;
    case PROP_MAX_OUTPUT_BYTES:
      g_value_set_uint64 (value, self->max_output_bytes);
      break;
    case PROP_STDIN:
      g_value_set_boxed (value, self->stdin_bytes);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_command_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  SandboxCommand *self = SANDBOX_COMMAND (object);

  switch (prop_id)
    {
    case PROP_EXECUTABLE:
      sandbox_command_set_executable (self, g_value_get_string (value) ?: "");
      break;
    case PROP_ARGS:
      sandbox_command_set_args (self, g_value_get_boxed (value));
      break;
    case PROP_CWD:
      sandbox_command_set_cwd (self, g_value_get_string (value) ?: ".");
      break;
    case PROP_TIMEOUT_MS:
      sandbox_command_set_timeout_ms (self, g_value_get_uint (value));
      break;
    case PROP_MAX_OUTPUT_BYTES:
      sandbox_command_set_max_output_bytes (self, (gsize) g_value_get_uint64 (value));
      break;
    case PROP_STDIN:
      sandbox_command_set_stdin (self, g_value_get_boxed (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_command_class_init (SandboxCommandClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_command_finalize;
  object_class->get_property = sandbox_command_get_property;
  object_class->set_property = sandbox_command_set_property;

  /**
   * SandboxCommand:executable:
   *
   * The program to run, looked up on the sandbox's `PATH` unless absolute.
   */
  properties[PROP_EXECUTABLE] =
    g_param_spec_string ("executable", NULL, NULL, "",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCommand:args:
   *
   * The arguments after the executable.
   */
  properties[PROP_ARGS] =
    g_param_spec_boxed ("args", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCommand:cwd:
   *
   * The working directory, a workspace path (`"."` is the workspace root).
   */
  properties[PROP_CWD] =
    g_param_spec_string ("cwd", NULL, NULL, ".",
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCommand:timeout-ms:
   *
   * The deadline in milliseconds, 1 … %SANDBOX_COMMAND_MAX_TIMEOUT_MS.
   * Values outside that range are stored and then refused by
   * sandbox_command_validate().
   */
  properties[PROP_TIMEOUT_MS] =
    g_param_spec_uint ("timeout-ms", NULL, NULL, 0, G_MAXUINT,
                       SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCommand:max-output-bytes:
   *
   * The cap on stdout and stderr together, at least 1. Zero is stored and
   * then refused by sandbox_command_validate().
   */
  properties[PROP_MAX_OUTPUT_BYTES] =
    g_param_spec_uint64 ("max-output-bytes", NULL, NULL, 0, G_MAXUINT64,
                         SANDBOX_COMMAND_DEFAULT_MAX_OUTPUT_BYTES,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCommand:stdin:
   *
   * Bytes written to the command's standard input, or %NULL for none.
   */
  properties[PROP_STDIN] =
    g_param_spec_boxed ("stdin", NULL, NULL, G_TYPE_BYTES,
                        G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static GPtrArray *
strv_array_new (void)
{
  GPtrArray *array = g_ptr_array_new_with_free_func (g_free);

  g_ptr_array_add (array, NULL);
  return array;
}

static void
sandbox_command_init (SandboxCommand *self)
{
  self->executable = g_strdup ("");
  self->args = strv_array_new ();
  self->cwd = g_strdup (".");
  self->env_keys = g_ptr_array_new_with_free_func (g_free);
  self->env_values = g_ptr_array_new_with_free_func (g_free);
  self->timeout_ms = SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS;
  self->max_output_bytes = SANDBOX_COMMAND_DEFAULT_MAX_OUTPUT_BYTES;
}

/**
 * sandbox_command_new:
 * @executable: the program to run
 *
 * Creates a command with no arguments, the workspace root as working
 * directory, no extra environment, the default deadline
 * (%SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS) and output cap
 * (%SANDBOX_COMMAND_DEFAULT_MAX_OUTPUT_BYTES).
 *
 * Returns: (transfer full): a new #SandboxCommand
 */
SandboxCommand *
sandbox_command_new (const char *executable)
{
  g_return_val_if_fail (executable != NULL, NULL);

  return g_object_new (SANDBOX_TYPE_COMMAND, "executable", executable, NULL);
}

/**
 * sandbox_command_copy:
 * @self: a #SandboxCommand
 *
 * Makes an independent copy of @self; changing one does not change the other.
 * The stdin bytes are shared, as #GBytes is immutable.
 *
 * Returns: (transfer full): a new #SandboxCommand
 */
SandboxCommand *
sandbox_command_copy (SandboxCommand *self)
{
  SandboxCommand *copy;

  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), NULL);

  copy = sandbox_command_new (self->executable);
  sandbox_command_set_args (copy, sandbox_command_get_args (self));
  sandbox_command_set_cwd (copy, self->cwd);
  for (guint i = 0; i < self->env_keys->len; i++)
    sandbox_command_setenv (copy, g_ptr_array_index (self->env_keys, i),
                            g_ptr_array_index (self->env_values, i));
  copy->timeout_ms = self->timeout_ms;
  copy->max_output_bytes = self->max_output_bytes;
  sandbox_command_set_stdin (copy, self->stdin_bytes);
  return copy;
}

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

/**
 * sandbox_command_validate:
 * @self: a #SandboxCommand
 * @error: return location for a #GError, or %NULL
 *
 * Checks that @self can be run: a non-empty executable, valid UTF-8 in every
 * string, a deadline of 1 … %SANDBOX_COMMAND_MAX_TIMEOUT_MS, an output cap of
 * at least 1, and environment keys that are non-empty and contain no `=`.
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

  return TRUE;
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
 * and the result must pass sandbox_command_validate().
 *
 * Returns: (transfer full): a new #SandboxCommand, or %NULL with
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

  root = sandbox_json_parse_strict (json, -1, error);
  if (root == NULL)
    return NULL;

  if (!JSON_NODE_HOLDS_OBJECT (root))
    {
      invalid (error, "Invalid input: expected object, received %s", sandbox_json_type_name (root));
      return NULL;
    }

  self = g_object_new (SANDBOX_TYPE_COMMAND, NULL);
  if (!read_command_object (self, json_node_get_object (root), error))
    return NULL;

  return g_steal_pointer (&self);
}

/* ---- accessors ---------------------------------------------------------- */

/**
 * sandbox_command_get_executable:
 * @self: a #SandboxCommand
 *
 * Gets the program the command runs.
 *
 * Returns: (transfer none): the program to run
 */
const char *
sandbox_command_get_executable (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), NULL);

  return self->executable;
}

/**
 * sandbox_command_set_executable:
 * @self: a #SandboxCommand
 * @executable: the program to run
 *
 * Sets the program to run.
 */
void
sandbox_command_set_executable (SandboxCommand *self,
                                const char     *executable)
{
  g_return_if_fail (SANDBOX_IS_COMMAND (self));
  g_return_if_fail (executable != NULL);

  if (g_strcmp0 (self->executable, executable) == 0)
    return;
  g_free (self->executable);
  self->executable = g_strdup (executable);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_EXECUTABLE]);
}

/**
 * sandbox_command_get_args:
 * @self: a #SandboxCommand
 *
 * Gets the arguments passed to the command after its executable.
 *
 * Returns: (transfer none) (array zero-terminated=1): the arguments after the
 *   executable; never %NULL
 */
const char * const *
sandbox_command_get_args (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), NULL);

  return (const char * const *) self->args->pdata;
}

/**
 * sandbox_command_set_args:
 * @self: a #SandboxCommand
 * @args: (nullable) (array zero-terminated=1): the arguments after the
 *   executable, or %NULL for none
 *
 * Replaces the arguments.
 */
void
sandbox_command_set_args (SandboxCommand     *self,
                          const char * const *args)
{
  g_autoptr(GPtrArray) old = NULL;

  g_return_if_fail (SANDBOX_IS_COMMAND (self));

  /* @args may point into the current array. */
  old = g_steal_pointer (&self->args);
  self->args = strv_array_new ();
  for (guint i = 0; args != NULL && args[i] != NULL; i++)
    g_ptr_array_insert (self->args, (int) self->args->len - 1, g_strdup (args[i]));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ARGS]);
}

/**
 * sandbox_command_add_arg:
 * @self: a #SandboxCommand
 * @arg: an argument
 *
 * Appends one argument.
 */
void
sandbox_command_add_arg (SandboxCommand *self,
                         const char     *arg)
{
  g_return_if_fail (SANDBOX_IS_COMMAND (self));
  g_return_if_fail (arg != NULL);

  g_ptr_array_insert (self->args, (int) self->args->len - 1, g_strdup (arg));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ARGS]);
}

/**
 * sandbox_command_get_cwd:
 * @self: a #SandboxCommand
 *
 * Gets the directory the command runs in.
 *
 * Returns: (transfer none): the working directory as given (a workspace path)
 */
const char *
sandbox_command_get_cwd (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), NULL);

  return self->cwd;
}

/**
 * sandbox_command_set_cwd:
 * @self: a #SandboxCommand
 * @cwd: a workspace path such as `"."`, `"src"` or `"/workspace/src"`
 *
 * Sets the working directory. It is canonicalized (and refused if it is not
 * a canonical workspace path) when a session runs the command.
 */
void
sandbox_command_set_cwd (SandboxCommand *self,
                         const char     *cwd)
{
  g_return_if_fail (SANDBOX_IS_COMMAND (self));
  g_return_if_fail (cwd != NULL);

  if (g_strcmp0 (self->cwd, cwd) == 0)
    return;
  g_free (self->cwd);
  self->cwd = g_strdup (cwd);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CWD]);
}

/**
 * sandbox_command_get_environment:
 * @self: a #SandboxCommand
 *
 * Gives the extra environment as `KEY=VALUE` strings, in the order the keys
 * were first set. The sandbox starts from an empty environment with only
 * `PATH` and `HOME` set; these are added on top.
 *
 * Returns: (transfer full) (array zero-terminated=1): the environment
 */
char **
sandbox_command_get_environment (SandboxCommand *self)
{
  GPtrArray *environment;

  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), NULL);

  environment = g_ptr_array_new_full (self->env_keys->len + 1, g_free);
  for (guint i = 0; i < self->env_keys->len; i++)
    g_ptr_array_add (environment, g_strconcat (g_ptr_array_index (self->env_keys, i), "=",
                                               g_ptr_array_index (self->env_values, i), NULL));
  g_ptr_array_add (environment, NULL);
  return (char **) g_ptr_array_free (environment, FALSE);
}

static gboolean
find_env_key (SandboxCommand *self,
              const char     *key,
              guint          *index)
{
  for (guint i = 0; i < self->env_keys->len; i++)
    if (g_str_equal (g_ptr_array_index (self->env_keys, i), key))
      {
        *index = i;
        return TRUE;
      }
  return FALSE;
}

/**
 * sandbox_command_setenv:
 * @self: a #SandboxCommand
 * @key: a variable name (non-empty, without `=`, or
 *   sandbox_command_validate() refuses the command)
 * @value: its value
 *
 * Sets an environment variable for the command. Setting a key again replaces
 * its value and keeps its position.
 */
void
sandbox_command_setenv (SandboxCommand *self,
                        const char     *key,
                        const char     *value)
{
  guint index;

  g_return_if_fail (SANDBOX_IS_COMMAND (self));
  g_return_if_fail (key != NULL);
  g_return_if_fail (value != NULL);

  if (find_env_key (self, key, &index))
    {
      g_free (self->env_values->pdata[index]);
      self->env_values->pdata[index] = g_strdup (value);
      return;
    }

  g_ptr_array_add (self->env_keys, g_strdup (key));
  g_ptr_array_add (self->env_values, g_strdup (value));
}

/**
 * sandbox_command_getenv:
 * @self: a #SandboxCommand
 * @key: a variable name
 *
 * Looks up the value @self sets for the environment variable @key.
 *
 * Returns: (transfer none) (nullable): the value set for @key, or %NULL
 */
const char *
sandbox_command_getenv (SandboxCommand *self,
                        const char     *key)
{
  guint index;

  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), NULL);
  g_return_val_if_fail (key != NULL, NULL);

  return find_env_key (self, key, &index) ? g_ptr_array_index (self->env_values, index) : NULL;
}

/**
 * sandbox_command_get_timeout_ms:
 * @self: a #SandboxCommand
 *
 * Gets the command's deadline in milliseconds.
 *
 * Returns: the deadline in milliseconds
 */
guint
sandbox_command_get_timeout_ms (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), 0);

  return self->timeout_ms;
}

/**
 * sandbox_command_set_timeout_ms:
 * @self: a #SandboxCommand
 * @timeout_ms: the deadline in milliseconds, 1 … %SANDBOX_COMMAND_MAX_TIMEOUT_MS
 *
 * Sets the deadline; once it passes the whole command is killed and the run
 * fails with %SANDBOX_ERROR_LIMIT.
 */
void
sandbox_command_set_timeout_ms (SandboxCommand *self,
                                guint           timeout_ms)
{
  g_return_if_fail (SANDBOX_IS_COMMAND (self));

  if (self->timeout_ms == timeout_ms)
    return;
  self->timeout_ms = timeout_ms;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMEOUT_MS]);
}

/**
 * sandbox_command_get_max_output_bytes:
 * @self: a #SandboxCommand
 *
 * Gets the limit on how much output the command may produce.
 *
 * Returns: the cap on stdout and stderr together, in bytes
 */
gsize
sandbox_command_get_max_output_bytes (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), 0);

  return (gsize) self->max_output_bytes;
}

/**
 * sandbox_command_set_max_output_bytes:
 * @self: a #SandboxCommand
 * @max_output_bytes: the cap on stdout and stderr together, at least 1
 *
 * Sets the output cap; output beyond it kills the command and the run fails
 * with %SANDBOX_ERROR_LIMIT.
 */
void
sandbox_command_set_max_output_bytes (SandboxCommand *self,
                                      gsize           max_output_bytes)
{
  g_return_if_fail (SANDBOX_IS_COMMAND (self));

  if (self->max_output_bytes == max_output_bytes)
    return;
  self->max_output_bytes = max_output_bytes;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_MAX_OUTPUT_BYTES]);
}

/**
 * sandbox_command_get_stdin:
 * @self: a #SandboxCommand
 *
 * Gets the bytes fed to the command's standard input.
 *
 * Returns: (transfer none) (nullable): the bytes for standard input, or %NULL
 */
GBytes *
sandbox_command_get_stdin (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), NULL);

  return self->stdin_bytes;
}

/**
 * sandbox_command_set_stdin:
 * @self: a #SandboxCommand
 * @stdin_bytes: (nullable): the bytes for standard input, or %NULL for none
 *
 * Sets what the command reads on standard input; it then sees end of file.
 */
void
sandbox_command_set_stdin (SandboxCommand *self,
                           GBytes         *stdin_bytes)
{
  g_return_if_fail (SANDBOX_IS_COMMAND (self));

  if (self->stdin_bytes == stdin_bytes)
    return;
  g_clear_pointer (&self->stdin_bytes, g_bytes_unref);
  if (stdin_bytes != NULL)
    self->stdin_bytes = g_bytes_ref (stdin_bytes);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STDIN]);
}
