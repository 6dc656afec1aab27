/* sandbox-command.c — what to run in a sandbox: the object and its accessors
 *
 * What the reference's schema accepts (sandbox_command_validate() and the
 * strict JSON form) is in sandbox-command-schema.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-command-private.h"

/**
 * SandboxCommand:
 *
 * A command to run inside a sandbox: the executable, its arguments, the
 * working directory (a workspace path, `"."` by default), extra environment
 * variables, a deadline, a cap on combined output and optional standard
 * input.
 *
 * Setters accept any value; [method@Sandbox.Command.validate] (which the session
 * calls before running) reports everything that is out of range. The working
 * directory is checked when the session canonicalizes it.
 */

enum {
  PROP_0,
  PROP_EXECUTABLE,
  PROP_ARGS,
  PROP_CWD,
  PROP_TIMEOUT_MS,
  PROP_MAX_OUTPUT_BYTES,
  PROP_STDIN,
  PROP_STDIN_STREAM,
  PROP_TERMINAL,
  PROP_TERMINAL_ROWS,
  PROP_TERMINAL_COLUMNS,
  PROP_TERMINAL_TYPE,
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
  g_clear_pointer (&self->terminal_type, g_free);

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
    case PROP_STDIN_STREAM:
      g_value_set_boolean (value, self->stdin_stream);
      break;
    case PROP_TERMINAL:
      g_value_set_boolean (value, self->terminal);
      break;
    case PROP_TERMINAL_ROWS:
      g_value_set_uint (value, self->terminal_rows);
      break;
    case PROP_TERMINAL_COLUMNS:
      g_value_set_uint (value, self->terminal_columns);
      break;
    case PROP_TERMINAL_TYPE:
      g_value_set_string (value, self->terminal_type);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_terminal_field (SandboxCommand *self,
                    GParamSpec     *pspec,
                    guint          *field,
                    guint           value)
{
  if (*field == value)
    return;
  *field = value;
  g_object_notify_by_pspec (G_OBJECT (self), pspec);
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
    case PROP_STDIN_STREAM:
      sandbox_command_set_stdin_stream (self, g_value_get_boolean (value));
      break;
    /* The terminal's setters are sandbox-command-terminal.c's, which calls
     * into this file: set here directly, so the two files do not call
     * each other. */
    case PROP_TERMINAL:
      set_terminal_field (self, pspec, &self->terminal, g_value_get_boolean (value) != FALSE);
      break;
    case PROP_TERMINAL_ROWS:
      set_terminal_field (self, pspec, &self->terminal_rows, g_value_get_uint (value));
      break;
    case PROP_TERMINAL_COLUMNS:
      set_terminal_field (self, pspec, &self->terminal_columns, g_value_get_uint (value));
      break;
    case PROP_TERMINAL_TYPE:
      {
        const char *type = g_value_get_string (value) ?: SANDBOX_COMMAND_DEFAULT_TERMINAL_TYPE;

        if (g_strcmp0 (self->terminal_type, type) != 0)
          {
            g_free (self->terminal_type);
            self->terminal_type = g_strdup (type);
            g_object_notify_by_pspec (object, pspec);
          }
      }
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
   * [method@Sandbox.Command.validate].
   */
  properties[PROP_TIMEOUT_MS] =
    g_param_spec_uint ("timeout-ms", NULL, NULL, 0, G_MAXUINT,
                       SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCommand:max-output-bytes:
   *
   * The cap on stdout and stderr together, at least 1. Zero is stored and
   * then refused by [method@Sandbox.Command.validate].
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

  /**
   * SandboxCommand:stdin-stream:
   *
   * Whether the command's standard input is streamed while it runs: the
   * spawned process's [method@Sandbox.Process.get_stdin_stream] takes the
   * bytes as they come, and closing it gives the command end of file.
   * Exclusive with [property@Sandbox.Command:stdin]. A command run to its
   * end at once ([method@Sandbox.Session.run]) has no one to write: its
   * input ends at once.
   */
  properties[PROP_STDIN_STREAM] =
    g_param_spec_boolean ("stdin-stream", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCommand:terminal:
   *
   * Whether the command runs on a pseudo-terminal made inside its sandbox:
   * its standard input, output and error are that terminal, and it is the
   * terminal's controlling process, as a login shell is. What the command
   * writes arrives as [signal@Sandbox.Process::stdout-data] (nothing on
   * stderr: the terminal merges them); what the consumer writes to
   * [method@Sandbox.Process.get_stdin_stream] is typed on it, and closing
   * that stream types the terminal's end-of-file character (Ctrl-D).
   * [method@Sandbox.Process.resize_terminal] resizes it. Exclusive with
   * [property@Sandbox.Command:stdin]. `TERM` is
   * [property@Sandbox.Command:terminal-type] unless the command's
   * environment sets it.
   */
  properties[PROP_TERMINAL] =
    g_param_spec_boolean ("terminal", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCommand:terminal-rows:
   *
   * The terminal's height in character cells when the command starts,
   * 1 … 65535 (a zero is stored and refused by
   * [method@Sandbox.Command.validate]).
   */
  properties[PROP_TERMINAL_ROWS] =
    g_param_spec_uint ("terminal-rows", NULL, NULL, 0, G_MAXUINT,
                       SANDBOX_COMMAND_DEFAULT_TERMINAL_ROWS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCommand:terminal-columns:
   *
   * The terminal's width in character cells when the command starts,
   * 1 … 65535.
   */
  properties[PROP_TERMINAL_COLUMNS] =
    g_param_spec_uint ("terminal-columns", NULL, NULL, 0, G_MAXUINT,
                       SANDBOX_COMMAND_DEFAULT_TERMINAL_COLUMNS,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCommand:terminal-type:
   *
   * The terminal's type, the command's `TERM` (unless its environment
   * sets one): 1 to 64 letters, digits, `.`, `_`, `+` or `-`.
   */
  properties[PROP_TERMINAL_TYPE] =
    g_param_spec_string ("terminal-type", NULL, NULL, SANDBOX_COMMAND_DEFAULT_TERMINAL_TYPE,
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
  self->terminal_rows = SANDBOX_COMMAND_DEFAULT_TERMINAL_ROWS;
  self->terminal_columns = SANDBOX_COMMAND_DEFAULT_TERMINAL_COLUMNS;
  self->terminal_type = g_strdup (SANDBOX_COMMAND_DEFAULT_TERMINAL_TYPE);
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
 * Returns: (transfer full): a new [class@Sandbox.Command]
 */
SandboxCommand *
sandbox_command_new (const char *executable)
{
  g_return_val_if_fail (executable != NULL, NULL);

  return g_object_new (SANDBOX_TYPE_COMMAND, "executable", executable, NULL);
}

/**
 * sandbox_command_copy:
 * @self: a [class@Sandbox.Command]
 *
 * Makes an independent copy of @self; changing one does not change the other.
 * The stdin bytes are shared, as #GBytes is immutable.
 *
 * Returns: (transfer full): a new [class@Sandbox.Command]
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
  copy->stdin_stream = self->stdin_stream;
  copy->terminal = self->terminal;
  copy->terminal_rows = self->terminal_rows;
  copy->terminal_columns = self->terminal_columns;
  g_free (copy->terminal_type);
  copy->terminal_type = g_strdup (self->terminal_type);
  return copy;
}

/* ---- accessors ---------------------------------------------------------- */

/**
 * sandbox_command_get_executable:
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
 * @key: a variable name (non-empty, without `=`, or
 *   [method@Sandbox.Command.validate] refuses the command)
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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
 * @self: a [class@Sandbox.Command]
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

/**
 * sandbox_command_get_stdin_stream:
 * @self: a [class@Sandbox.Command]
 *
 * Gets [property@Sandbox.Command:stdin-stream].
 *
 * Returns: whether the command's standard input is streamed; see
 *   [property@Sandbox.Command:stdin-stream]
 */
gboolean
sandbox_command_get_stdin_stream (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), FALSE);

  return self->stdin_stream;
}

/**
 * sandbox_command_set_stdin_stream:
 * @self: a [class@Sandbox.Command]
 * @stdin_stream: %TRUE to stream the command's standard input
 *
 * Sets [property@Sandbox.Command:stdin-stream].
 */
void
sandbox_command_set_stdin_stream (SandboxCommand *self,
                                  gboolean        stdin_stream)
{
  g_return_if_fail (SANDBOX_IS_COMMAND (self));

  stdin_stream = !!stdin_stream;
  if (self->stdin_stream == stdin_stream)
    return;
  self->stdin_stream = stdin_stream;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STDIN_STREAM]);
}
