/* sandboxctl-run.c — run a command in a session, streaming its output
 *
 *   sandboxctl run (--state FILE | --session ID) [OPTION…] [--] EXECUTABLE [ARG…]
 *   sandboxctl run --ephemeral NAME [--dir HOSTDIR] [--file PATH=HOSTFILE…] [--] …
 *
 * Output is written to our stdout and stderr as it arrives, and we exit with
 * the command's own status (128+N for a signal). When the library fails
 * instead (a deadline, the output cap, a busy session…) we exit with its
 * error's code (80–90). An --ephemeral run prewarms a template, creates a
 * session, runs the command and deletes the session.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include "sandboxctl.h"

typedef struct
{
  SandboxctlContext *ctx;
  GMainLoop         *loop;
  SandboxResult     *result;
  GError            *error;
} RunWait;

typedef struct
{
  int     timeout_ms;
  gint64  max_output_bytes;
  char   *cwd;
  char  **environment;
  gboolean use_stdin;
  char  **command_line;
} RunOptions;

static void
run_options_clear (RunOptions *options)
{
  g_clear_pointer (&options->cwd, g_free);
  g_clear_pointer (&options->environment, g_strfreev);
  g_clear_pointer (&options->command_line, g_strfreev);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (RunOptions, run_options_clear)

static SandboxCommand *
build_command (RunOptions  *options,
               GError     **error)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new (options->command_line[0]);

  sandbox_command_set_args (command, (const char * const *) options->command_line + 1);
  if (options->cwd != NULL)
    sandbox_command_set_cwd (command, options->cwd);
  if (options->timeout_ms != 0)
    {
      if (options->timeout_ms < 0)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--timeout-ms must be between 1 and %d", G_MAXINT32);
          return NULL;
        }
      sandbox_command_set_timeout_ms (command, (guint) options->timeout_ms);
    }
  if (options->max_output_bytes != 0)
    {
      if (options->max_output_bytes < 0)
        {
          g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                               "--max-output-bytes must be at least 1");
          return NULL;
        }
      sandbox_command_set_max_output_bytes (command, (gsize) options->max_output_bytes);
    }
  for (guint i = 0; options->environment != NULL && options->environment[i] != NULL; i++)
    {
      const char *pair = options->environment[i];
      const char *equals = strchr (pair, '=');
      g_autofree char *key = NULL;

      if (equals == NULL || equals == pair)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--env expects KEY=VALUE, not “%s”", pair);
          return NULL;
        }
      key = g_strndup (pair, equals - pair);
      sandbox_command_setenv (command, key, equals + 1);
    }
  if (options->use_stdin)
    {
      g_autoptr(GBytes) input = sandboxctl_read_stdin (error);

      if (input == NULL)
        return NULL;
      sandbox_command_set_stdin (command, input);
    }
  if (!sandbox_command_validate (command, error))
    return NULL;
  return g_steal_pointer (&command);
}

/* Live output: a failed write (say, a closed pipe) cancels the command. */
static void
forward_output (SandboxctlContext *ctx,
                int                fd,
                GBytes            *data)
{
  g_autoptr(GError) error = NULL;

  if (!sandboxctl_write_all (fd, g_bytes_get_data (data, NULL), g_bytes_get_size (data), &error))
    g_cancellable_cancel (ctx->cancellable);
}

static void
on_stdout_data (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  forward_output (user_data, STDOUT_FILENO, data);
}

static void
on_stderr_data (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  forward_output (user_data, STDERR_FILENO, data);
}

static void
on_wait_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  RunWait *wait = user_data;

  wait->result = sandbox_process_wait_finish (SANDBOX_PROCESS (source), result, &wait->error);
  g_main_loop_quit (wait->loop);
}

static JsonNode *
result_to_json (SandboxResult *result)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *stdout_text = sandbox_result_dup_stdout_text (result);
  g_autofree char *stderr_text = sandbox_result_dup_stderr_text (result);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "exitStatus");
  json_builder_add_int_value (builder, sandbox_result_get_exit_status (result));
  json_builder_set_member_name (builder, "stdout");
  json_builder_add_string_value (builder, stdout_text);
  json_builder_set_member_name (builder, "stderr");
  json_builder_add_string_value (builder, stderr_text);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

/**
 * run_in_session:
 * @ctx: the invocation
 * @session: a live session
 * @command: what to run
 *
 * Spawns @command, forwards its output as it arrives (unless --json), and
 * waits in a main loop, where SIGINT/SIGTERM/SIGHUP cancel it.
 *
 * Returns: the command's exit status, or an error's exit code
 */
static int
run_in_session (SandboxctlContext *ctx,
                SandboxSession    *session,
                SandboxCommand    *command)
{
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GError) error = NULL;
  RunWait wait = { ctx, loop, NULL, NULL };
  int status;

  process = sandbox_session_spawn (session, command, ctx->cancellable, &error);
  if (process == NULL)
    return sandboxctl_report_error (ctx, error);

  if (!ctx->json)
    {
      g_signal_connect (process, "stdout-data", G_CALLBACK (on_stdout_data), ctx);
      g_signal_connect (process, "stderr-data", G_CALLBACK (on_stderr_data), ctx);
    }
  /* No cancellable for the wait: cancelling the spawn kills the command,
   * and we wait for it to be gone. */
  sandbox_process_wait_async (process, NULL, on_wait_done, &wait);
  g_main_loop_run (loop);
  g_signal_handlers_disconnect_by_data (process, ctx);

  if (wait.result == NULL)
    {
      status = sandboxctl_report_error (ctx, wait.error);
      g_clear_error (&wait.error);
      return status;
    }

  status = sandbox_result_get_exit_status (wait.result);
  if (ctx->json)
    {
      g_autoptr(JsonNode) node = result_to_json (wait.result);

      sandboxctl_print_json (node);
    }
  g_clear_object (&wait.result);
  return status;
}

/* Prewarm, create, run, delete: a one-shot sandbox. */
static int
run_ephemeral (SandboxctlContext         *ctx,
               SandboxctlTemplateOptions *template_options,
               SandboxCommand            *command)
{
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxTemplate) template_ = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  int status;

  policy = sandboxctl_network_build_policy (&ctx->network, &error);
  if (policy == NULL)
    return sandboxctl_report_error (ctx, error);
  template_ = sandboxctl_template_build (template_options, ctx->cancellable, &error);
  if (template_ == NULL)
    return sandboxctl_report_error (ctx, error);
  backend = sandboxctl_open_backend (ctx, &error);
  if (backend == NULL)
    return sandboxctl_report_error (ctx, error);
  key = sandbox_backend_prewarm (backend, template_, NULL, ctx->cancellable, &error);
  if (key == NULL)
    return sandboxctl_report_error (ctx, error);

  sandboxctl_install_signal_handlers (ctx);
  handle = sandbox_backend_create (backend, key, NULL, policy, ctx->cancellable, &error);
  if (handle == NULL)
    return sandboxctl_report_error (ctx, error);

  status = run_in_session (ctx, sandbox_handle_get_session (handle), command);

  if (!sandbox_handle_delete (handle, NULL, &error))
    {
      g_autofree char *code = sandboxctl_error_code_name (error);

      g_printerr ("sandboxctl: deleting the ephemeral session failed: %s: %s\n",
                  code, error->message);
      if (status == SANDBOXCTL_EXIT_OK)
        status = sandboxctl_exit_code_for_error (error);
    }
  return sandboxctl_session_finish (ctx, handle, status);
}

int
sandboxctl_cmd_run (SandboxctlContext   *ctx,
                    char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_auto(SandboxctlTemplateOptions) template_options = { 0 };
  g_auto(RunOptions) options = { 0 };
  g_autofree GOptionEntry *session_entries = sandboxctl_session_entries (&session_options);
  const GOptionEntry entries[] = {
    { "timeout-ms", 0, 0, G_OPTION_ARG_INT, &options.timeout_ms,
      "Deadline in milliseconds (default 30000)", "N" },
    { "max-output-bytes", 0, 0, G_OPTION_ARG_INT64, &options.max_output_bytes,
      "Cap on combined stdout and stderr (default 1048576)", "N" },
    { "cwd", 'C', 0, G_OPTION_ARG_STRING, &options.cwd,
      "Working directory inside the workspace (default .)", "DIR" },
    { "env", 'e', 0, G_OPTION_ARG_STRING_ARRAY, &options.environment,
      "Set an environment variable of the command (repeatable)", "KEY=VALUE" },
    { "stdin", 'i', 0, G_OPTION_ARG_NONE, &options.use_stdin,
      "Pass our stdin (read to its end first) to the command", NULL },
    { "ephemeral", 0, 0, G_OPTION_ARG_STRING, &template_options.name,
      "Run in a new session from a template NAME built of --dir/--file, deleted afterwards", "NAME" },
    { "dir", 'd', 0, G_OPTION_ARG_FILENAME, &template_options.directory,
      "With --ephemeral: add a host directory's tree to the template", "HOSTDIR" },
    { "file", 'f', 0, G_OPTION_ARG_FILENAME_ARRAY, &template_options.files,
      "With --ephemeral: add a host file at workspace PATH (repeatable)", "PATH=HOSTFILE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &options.command_line,
      NULL, NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, "[--] EXECUTABLE [ARGUMENT…]",
                                   "Run EXECUTABLE (an absolute path inside the sandbox) in a "
                                   "session, stream its output live and exit with its status. "
                                   "With --json, print {exitStatus, stdout, stderr} at the end "
                                   "instead of streaming.", entries, TRUE);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxCommand) command = NULL;
  g_autoptr(GError) error = NULL;
  gboolean ephemeral;
  int status;

  g_option_group_add_entries (g_option_context_get_main_group (context), session_entries);
  g_option_context_set_strict_posix (context, TRUE);
  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (options.command_line == NULL || options.command_line[0] == NULL)
    return sandboxctl_usage_error (ctx, "missing EXECUTABLE");

  ephemeral = sandboxctl_template_options_given (&template_options);
  if (ephemeral && template_options.name == NULL)
    return sandboxctl_usage_error (ctx, "--dir and --file need --ephemeral NAME");
  if (ephemeral && (session_options.state_file != NULL || session_options.session_id != NULL))
    return sandboxctl_usage_error (ctx, "--ephemeral excludes --state and --session");

  command = build_command (&options, &error);
  if (command == NULL)
    return sandboxctl_report_error (ctx, error);

  if (ephemeral)
    return run_ephemeral (ctx, &template_options, command);

  handle = sandboxctl_session_resume (ctx, &session_options, NULL, &error);
  if (handle == NULL)
    return sandboxctl_report_error (ctx, error);
  status = run_in_session (ctx, sandbox_handle_get_session (handle), command);
  return sandboxctl_session_finish (ctx, handle, status);
}
