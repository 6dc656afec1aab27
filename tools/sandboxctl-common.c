/* sandboxctl-common.c — options, errors, exit codes and the backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>

#include "sandboxctl.h"

#define DEFAULT_DRIVER "bubblewrap"

G_DEFINE_QUARK (sandboxctl-run-error-quark, sandboxctl_run_error)

void
sandboxctl_context_clear (SandboxctlContext *ctx)
{
  g_clear_pointer (&ctx->driver, g_free);
  g_clear_pointer (&ctx->state_dir, g_free);
  g_clear_pointer (&ctx->driver_options, g_strfreev);
  g_clear_object (&ctx->cancellable);
  sandboxctl_network_options_clear (&ctx->network);
}

static GOptionEntry *
global_entries_new (SandboxctlContext *ctx)
{
  GOptionEntry entries[] = {
    { "driver", 0, 0, G_OPTION_ARG_STRING, &ctx->driver,
      "Sandbox driver (default: " DEFAULT_DRIVER ")", "NAME" },
    { "state-dir", 0, 0, G_OPTION_ARG_FILENAME, &ctx->state_dir,
      "State directory (default: $SANDBOX_STATE_DIR, else $XDG_STATE_HOME/sandbox)", "DIR" },
    { "driver-option", 0, 0, G_OPTION_ARG_STRING_ARRAY, &ctx->driver_options,
      "Set a property of the backend, typed by the property (repeatable)", "KEY=VALUE" },
    { "max-concurrent-commands", 0, 0, G_OPTION_ARG_INT, &ctx->max_concurrent_commands,
      "Admission limit of the backend (1…1024)", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &ctx->json,
      "Machine-readable JSON output", NULL },
    { "verbose", 'v', 0, G_OPTION_ARG_NONE, &ctx->verbose,
      "Log what the library and the driver do (debug messages on stderr)", NULL },
    G_OPTION_ENTRY_NULL
  };

  return g_memdup2 (entries, sizeof entries);
}

/**
 * sandboxctl_option_context_new:
 * @ctx: the invocation
 * @parameter_string: what follows the options in --help
 * @summary: one paragraph about the command
 * @command_entries: the command's own options
 * @with_network: whether the command takes the network options
 *
 * Makes one command's option context: its own entries, the global options
 * and, for commands that create or resume a session, the network options,
 * all in the main group so --help shows them together. Callbacks receive
 * @ctx.
 *
 * Returns: (transfer full): the context
 */
GOptionContext *
sandboxctl_option_context_new (SandboxctlContext  *ctx,
                               const char         *parameter_string,
                               const char         *summary,
                               const GOptionEntry *command_entries,
                               gboolean            with_network)
{
  GOptionContext *context = g_option_context_new (parameter_string);
  GOptionGroup *group = g_option_group_new (ctx->command_name, NULL, NULL, ctx, NULL);
  g_autofree GOptionEntry *global_entries = global_entries_new (ctx);

  if (command_entries != NULL)
    g_option_group_add_entries (group, command_entries);
  if (with_network)
    g_option_group_add_entries (group, sandboxctl_network_entries ());
  g_option_group_add_entries (group, global_entries);
  g_option_context_set_main_group (context, group);
  g_option_context_set_summary (context, summary);
  g_option_context_set_description (context, SANDBOXCTL_HELP_FOOTER);
  return context;
}

/* The log domains -v shows: the library (and its gateway), sandboxctl and
 * the drivers shipped with it. */
#define VERBOSE_LOG_DOMAINS "Sandbox Sandbox-Ctl Sandbox-Bubblewrap Sandbox-Gateway Sandbox-Memory Sandbox-Cluster"

/**
 * sandboxctl_enable_verbose:
 *
 * Turns on debug messages of our log domains, keeping any the user asked for
 * in `G_MESSAGES_DEBUG`. GLib reads the variable at each message, so this
 * works after startup; it runs before any thread of ours exists.
 */
void
sandboxctl_enable_verbose (void)
{
  const char *current = g_getenv ("G_MESSAGES_DEBUG");
  g_autofree char *domains = NULL;

  if (current != NULL && (g_str_equal (current, "all") ||
                          strstr (current, VERBOSE_LOG_DOMAINS) != NULL))
    return;
  domains = current != NULL && current[0] != '\0'
    ? g_strconcat (current, " ", VERBOSE_LOG_DOMAINS, NULL)
    : g_strdup (VERBOSE_LOG_DOMAINS);
  g_setenv ("G_MESSAGES_DEBUG", domains, TRUE);
}

gboolean
sandboxctl_parse_options (SandboxctlContext   *ctx,
                          GOptionContext      *context,
                          char              ***argv)
{
  g_autoptr(GError) error = NULL;

  if (!g_option_context_parse_strv (context, argv, &error))
    {
      sandboxctl_report_usage (ctx, error->message);
      return FALSE;
    }

  /* From here on the parsed --json decides, not main()'s early scan (which
   * cannot tell a guest's "--json" after EXECUTABLE from ours). */
  ctx->usage_json = ctx->json;
  if (ctx->verbose)
    sandboxctl_enable_verbose ();
  return TRUE;
}

/**
 * sandboxctl_report_usage:
 * @ctx: the invocation
 * @message: what is wrong with the command line
 *
 * Prints a usage error: `sandboxctl COMMAND: message` and a pointer to
 * --help on stderr, or with --json `{"error": {"code": "USAGE", …}}` on
 * stdout like every other error.
 *
 * Returns: %SANDBOXCTL_EXIT_USAGE
 */
int
sandboxctl_report_usage (SandboxctlContext *ctx,
                         const char        *message)
{
  if (ctx->json || ctx->usage_json || ctx->events)
    {
      g_autoptr(GError) error = g_error_new_literal (G_OPTION_ERROR, G_OPTION_ERROR_FAILED,
                                                     message);

      sandboxctl_print_error_json (ctx, error);
      return SANDBOXCTL_EXIT_USAGE;
    }

  if (ctx->command_name != NULL)
    {
      g_printerr ("sandboxctl %s: %s\n", ctx->command_name, message);
      g_printerr ("Try “sandboxctl %s --help”.\n", ctx->command_name);
    }
  else
    {
      g_printerr ("sandboxctl: %s\n", message);
      g_printerr ("Try “sandboxctl --help”.\n");
    }
  return SANDBOXCTL_EXIT_USAGE;
}

int
sandboxctl_usage_error (SandboxctlContext *ctx,
                        const char        *format,
                        ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  return sandboxctl_report_usage (ctx, message);
}

static char *
enum_value_name (GType type,
                 int   code)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (type);
  GEnumValue *value = g_enum_get_value (klass, code);

  return value != NULL ? g_strdup (value->value_name) : NULL;
}

/**
 * sandboxctl_error_code_name:
 * @error: an error
 *
 * The name scripts match on: the reference spelling for sandbox errors
 * (`SANDBOX_BUSY`), the enum value name for GIO errors
 * (`G_IO_ERROR_NOT_FOUND`), else the domain and code.
 *
 * Returns: (transfer full): the name
 */
char *
sandboxctl_error_code_name (const GError *error)
{
  char *name = NULL;

  if (error->domain == SANDBOX_ERROR)
    return g_strdup (sandbox_error_code_name (error->code));
  if (error->domain == SANDBOXCTL_RUN_ERROR)
    return g_strdup (error->code == SANDBOXCTL_RUN_ERROR_NOT_FOUND ? "COMMAND_NOT_FOUND"
                                                                  : "COMMAND_NOT_EXECUTABLE");
  if (error->domain == G_IO_ERROR)
    name = enum_value_name (G_TYPE_IO_ERROR_ENUM, error->code);
  else if (error->domain == G_CONVERT_ERROR)
    name = g_strdup ("G_CONVERT_ERROR");
  else if (error->domain == G_FILE_ERROR)
    name = g_strdup ("G_FILE_ERROR");
  else if (error->domain == G_OPTION_ERROR)
    name = g_strdup ("USAGE");
  if (name == NULL)
    name = g_strdup_printf ("%s:%d", g_quark_to_string (error->domain), error->code);
  return name;
}

int
sandboxctl_exit_code_for_error (const GError *error)
{
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return SANDBOXCTL_EXIT_INTERRUPTED;
  if (error->domain == SANDBOX_ERROR && error->code >= SANDBOX_ERROR_BUSY &&
      error->code <= SANDBOX_ERROR_NOT_FOUND)
    return SANDBOXCTL_EXIT_SANDBOX_BASE + error->code;
  if (error->domain == G_IO_ERROR || error->domain == G_FILE_ERROR)
    return SANDBOXCTL_EXIT_HOST_IO;
  if (error->domain == G_CONVERT_ERROR)
    return SANDBOXCTL_EXIT_ENCODING;
  if (error->domain == G_OPTION_ERROR)
    return SANDBOXCTL_EXIT_USAGE;
  if (error->domain == SANDBOXCTL_RUN_ERROR)
    return error->code == SANDBOXCTL_RUN_ERROR_NOT_FOUND ? SANDBOXCTL_EXIT_NOT_FOUND
                                                         : SANDBOXCTL_EXIT_NOT_EXECUTABLE;
  return SANDBOXCTL_EXIT_FAILURE;
}

/**
 * sandboxctl_report_error:
 * @ctx: the invocation
 * @error: what failed
 *
 * Prints @error as `sandboxctl: CODE: message` on stderr, or with --json as
 * `{"error": {"code": …, "message": …}}` on stdout.
 *
 * Returns: the exit code for @error
 */
int
sandboxctl_report_error (SandboxctlContext *ctx,
                         const GError      *error)
{
  g_autofree char *code = sandboxctl_error_code_name (error);

  if (ctx->json || ctx->usage_json || ctx->events)
    sandboxctl_print_error_json (ctx, error);
  else
    g_printerr ("sandboxctl: %s: %s\n", code, error->message);

  return sandboxctl_exit_code_for_error (error);
}

/**
 * sandboxctl_error_to_node:
 * @error: what failed
 *
 * Returns: (transfer full): `{"code": …, "message": …, "exitCode": …}`
 */
JsonNode *
sandboxctl_error_to_node (const GError *error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *code = sandboxctl_error_code_name (error);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "code");
  json_builder_add_string_value (builder, code);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, error->message);
  json_builder_set_member_name (builder, "exitCode");
  json_builder_add_int_value (builder, sandboxctl_exit_code_for_error (error));
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

/* {"error": {"code": …, "message": …, "exitCode": …}} on stdout; in run's
 * --events stream an event: {"event": "error", "error": {…}}. */
void
sandboxctl_print_error_json (SandboxctlContext *ctx,
                             const GError      *error)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);
  g_autoptr(JsonObject) object = json_object_new ();

  if (ctx->events)
    json_object_set_string_member (object, "event", "error");
  json_object_set_member (object, "error", sandboxctl_error_to_node (error));
  json_node_set_object (node, object);
  sandboxctl_print_json (node);
}

/**
 * sandboxctl_default_state_dir:
 *
 * `$SANDBOX_STATE_DIR` when set and non-empty, else `$XDG_STATE_HOME/sandbox`
 * (GLib falls back to `~/.local/state`).
 *
 * Returns: (transfer full): the state directory
 */
char *
sandboxctl_default_state_dir (void)
{
  const char *from_environment = g_getenv ("SANDBOX_STATE_DIR");

  if (from_environment != NULL && from_environment[0] != '\0')
    return g_strdup (from_environment);
  return g_build_filename (g_get_user_state_dir (), "sandbox", NULL);
}

static gboolean
parse_driver_option (const char  *option,
                     char       **key,
                     char       **value,
                     GError     **error)
{
  const char *equals = strchr (option, '=');

  if (equals == NULL || equals == option)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--driver-option expects KEY=VALUE, not “%s”", option);
      return FALSE;
    }
  *key = g_strndup (option, equals - option);
  if (g_str_equal (*key, "state-directory") || g_str_equal (*key, "max-concurrent-commands"))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "Use --state-dir or --max-concurrent-commands instead of --driver-option %s",
                   *key);
      g_clear_pointer (key, g_free);
      return FALSE;
    }
  *value = g_strdup (equals + 1);
  return TRUE;
}

/**
 * sandboxctl_open_backend:
 * @ctx: the invocation
 * @error: return location for a #GError
 *
 * Creates the backend the global options describe. The state directory's
 * parents are created 0700; the driver creates and checks the directory
 * itself. Usage errors come back in the %G_OPTION_ERROR domain.
 *
 * Returns: (transfer full): the backend, or %NULL with @error set
 */
/**
 * sandboxctl_driver_name:
 * @ctx: the invocation
 *
 * Returns: the driver --driver names, or the default one
 */
const char *
sandboxctl_driver_name (SandboxctlContext *ctx)
{
  return ctx->driver != NULL ? ctx->driver : DEFAULT_DRIVER;
}

SandboxBackend *
sandboxctl_open_backend (SandboxctlContext  *ctx,
                         GError            **error)
{
  const char *driver = sandboxctl_driver_name (ctx);
  g_autofree char *state_dir = ctx->state_dir != NULL ? g_strdup (ctx->state_dir)
                                                      : sandboxctl_default_state_dir ();
  g_autofree char *parent = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GArray) values = g_array_new (FALSE, TRUE, sizeof (GValue));
  GType driver_type;
  GValue *value;

  g_array_set_clear_func (values, (GDestroyNotify) g_value_unset);

  g_ptr_array_add (names, g_strdup ("state-directory"));
  g_array_set_size (values, values->len + 1);
  value = &g_array_index (values, GValue, values->len - 1);
  g_value_init (value, G_TYPE_STRING);
  g_value_set_string (value, state_dir);

  if (ctx->max_concurrent_commands != 0)
    {
      if (ctx->max_concurrent_commands < 1 ||
          ctx->max_concurrent_commands > SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--max-concurrent-commands must be between 1 and %d",
                       SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT);
          return NULL;
        }
      g_ptr_array_add (names, g_strdup ("max-concurrent-commands"));
      g_array_set_size (values, values->len + 1);
      value = &g_array_index (values, GValue, values->len - 1);
      g_value_init (value, G_TYPE_UINT);
      g_value_set_uint (value, (guint) ctx->max_concurrent_commands);
    }

  driver_type = sandbox_lookup_driver (driver, error);
  if (driver_type == G_TYPE_INVALID)
    return NULL;
  for (guint i = 0; ctx->driver_options != NULL && ctx->driver_options[i] != NULL; i++)
    {
      g_autofree char *key = NULL;
      g_autofree char *option_value = NULL;
      GValue parsed = G_VALUE_INIT;

      if (!parse_driver_option (ctx->driver_options[i], &key, &option_value, error))
        return NULL;
      if (!sandbox_backend_parse_property (driver_type, key, option_value, &parsed, error))
        return NULL;
      g_ptr_array_add (names, g_steal_pointer (&key));
      g_array_append_val (values, parsed);   /* the array owns it now */
    }

  parent = g_path_get_dirname (state_dir);
  if (g_mkdir_with_parents (parent, 0700) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not create the state directory's parent %s: %s",
                   parent, g_strerror (saved_errno));
      return NULL;
    }

  for (guint i = 1; i < names->len; i++)
    g_debug ("Backend property %s set from the command line",
             (const char *) g_ptr_array_index (names, i));
  g_debug ("Opening the %s backend with state directory %s", driver, state_dir);
  return sandbox_backend_newv (driver, names->len, (const char **) names->pdata,
                               (const GValue *) values->data, ctx->cancellable, error);
}

void
sandboxctl_print_json (JsonNode *node)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autofree char *text = NULL;

  json_generator_set_root (generator, node);
  text = json_generator_to_data (generator, NULL);
  g_print ("%s\n", text);
}

/* Prints @object as one line of JSON. */
void
sandboxctl_print_json_object (JsonObject *object)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  json_node_set_object (node, object);
  sandboxctl_print_json (node);
}

JsonNode *
sandboxctl_state_to_node (SandboxState *state)
{
  g_autofree char *json = sandbox_state_to_json (state);

  return json_from_string (json, NULL);
}

static gboolean
cancel_on_signal (gpointer user_data)
{
  g_cancellable_cancel (G_CANCELLABLE (user_data));
  return G_SOURCE_CONTINUE;
}

/**
 * sandboxctl_install_signal_handlers:
 * @ctx: the invocation
 *
 * Turns SIGINT, SIGTERM and SIGHUP into cancellation of @ctx's cancellable,
 * so a command holding a lease kills its guest processes and releases the
 * lease instead of dying with it held. The handlers run in the default main
 * context.
 */
void
sandboxctl_install_signal_handlers (SandboxctlContext *ctx)
{
  g_unix_signal_add (SIGINT, cancel_on_signal, ctx->cancellable);
  g_unix_signal_add (SIGTERM, cancel_on_signal, ctx->cancellable);
  g_unix_signal_add (SIGHUP, cancel_on_signal, ctx->cancellable);
}

gboolean
sandboxctl_write_all (int            fd,
                      const guint8  *data,
                      gsize          length,
                      GError       **error)
{
  while (length > 0)
    {
      gssize written = write (fd, data, length);

      if (written < 0 && errno == EINTR)
        continue;
      if (written < 0)
        {
          int saved_errno = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       "Could not write output: %s", g_strerror (saved_errno));
          return FALSE;
        }
      data += written;
      length -= written;
    }
  return TRUE;
}
