/* sandboxctl-run.c — run a command in a session, streaming its output
 *
 *   sandboxctl run (--state FILE | --session ID) [OPTION…] [--] EXECUTABLE [ARG…]
 *   sandboxctl run --ephemeral NAME [--dir HOSTDIR] [--file PATH=HOSTFILE…] [--] …
 *   sandboxctl shell (--state FILE | --session ID) [OPTION…] [--] [EXECUTABLE [ARG…]]
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

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <gio/gunixinputstream.h>

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
  gboolean terminal;
  gboolean events;
  gboolean audit;
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
  /* Streamed as it comes, so an interactive program answers line by line. */
  if (options->terminal)
    sandboxctl_terminal_prepare (command);
  else if (options->use_stdin)
    sandbox_command_set_stdin_stream (command, TRUE);
  if (!sandbox_command_validate (command, error))
    return NULL;
  return g_steal_pointer (&command);
}

/* How run reports what happens. */
typedef enum
{
  RUN_OUTPUT_STREAM,   /* the command's output to ours as it arrives (default) */
  RUN_OUTPUT_JSON,     /* --json: one object at the end */
  RUN_OUTPUT_EVENTS,   /* --events: one JSON object a line, as things happen */
} RunOutputMode;

typedef struct
{
  SandboxctlContext *ctx;
  RunOutputMode      mode;
  gboolean           audit;           /* --audit */
  GPtrArray         *audit_events;    /* JsonNode, for --json */
  /* The UTF-8 tail of a chunk cut inside a character, per stream (--events). */
  GByteArray        *partial[2];
} RunOutput;

static void
run_output_init (RunOutput         *output,
                 SandboxctlContext *ctx,
                 RunOutputMode      mode,
                 gboolean           audit)
{
  output->ctx = ctx;
  output->mode = mode;
  output->audit = audit;
  output->audit_events = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  output->partial[0] = g_byte_array_new ();
  output->partial[1] = g_byte_array_new ();
}

static void
run_output_clear (RunOutput *output)
{
  g_clear_pointer (&output->audit_events, g_ptr_array_unref);
  g_clear_pointer (&output->partial[0], g_byte_array_unref);
  g_clear_pointer (&output->partial[1], g_byte_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (RunOutput, run_output_clear)

static void
print_event (JsonBuilder *builder)
{
  g_autoptr(JsonNode) node = json_builder_get_root (builder);

  sandboxctl_print_json (node);
  fflush (stdout);
}

/* Starts {"event": NAME, … in @builder. */
static JsonBuilder *
event_begin (const char *name)
{
  JsonBuilder *builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "event");
  json_builder_add_string_value (builder, name);
  return builder;
}

/* The length of the longest prefix of @data that ends on a character
 * boundary, if all before it is valid UTF-8 and what follows is the start
 * of one character cut off; else @length (nothing to carry). */
static gsize
utf8_complete_length (const guint8 *data,
                      gsize         length)
{
  const char *end = NULL;
  gsize valid;

  if (g_utf8_validate_len ((const char *) data, length, &end))
    return length;
  valid = (const guint8 *) end - data;
  if (length - valid < 4 && g_utf8_get_char_validated (end, length - valid) == (gunichar) -2)
    return valid;
  return length;
}

/* One {"event": "stdout"|"stderr", "text": …} per chunk; a chunk that is not
 * UTF-8 goes as "base64". A character cut between chunks is carried over. */
static void
print_output_event (RunOutput    *output,
                    int           fd,
                    const guint8 *data,
                    gsize         length)
{
  GByteArray *partial = output->partial[fd == STDOUT_FILENO ? 0 : 1];
  g_autoptr(JsonBuilder) builder = event_begin (fd == STDOUT_FILENO ? "stdout" : "stderr");
  g_autoptr(GByteArray) chunk = g_byte_array_new ();
  gsize complete;

  g_byte_array_append (chunk, partial->data, partial->len);
  g_byte_array_append (chunk, data, length);
  g_byte_array_set_size (partial, 0);
  complete = utf8_complete_length (chunk->data, chunk->len);
  g_byte_array_append (partial, chunk->data + complete, chunk->len - complete);
  if (complete == 0)
    return;

  if (g_utf8_validate_len ((const char *) chunk->data, complete, NULL))
    {
      g_autofree char *text = g_strndup ((const char *) chunk->data, complete);

      json_builder_set_member_name (builder, "text");
      json_builder_add_string_value (builder, text);
    }
  else
    {
      g_autofree char *base64 = g_base64_encode (chunk->data, complete);

      json_builder_set_member_name (builder, "base64");
      json_builder_add_string_value (builder, base64);
    }
  json_builder_end_object (builder);
  print_event (builder);
}

/* Live output: a failed write (say, a closed pipe) cancels the command. */
static void
emit_output (RunOutput    *output,
             int           fd,
             const guint8 *data,
             gsize         length)
{
  g_autoptr(GError) error = NULL;

  if (length == 0)
    return;
  if (output->mode == RUN_OUTPUT_EVENTS)
    print_output_event (output, fd, data, length);
  else if (output->mode == RUN_OUTPUT_STREAM &&
           !sandboxctl_write_all (fd, data, length, &error))
    g_cancellable_cancel (output->ctx->cancellable);
}

static void
on_stdout_data (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  RunOutput *output = user_data;
  gsize length;
  const guint8 *bytes = g_bytes_get_data (data, &length);

  emit_output (output, STDOUT_FILENO, bytes, length);
}

static void
on_stderr_data (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  RunOutput *output = user_data;
  gsize length;
  const guint8 *bytes = g_bytes_get_data (data, &length);

  emit_output (output, STDERR_FILENO, bytes, length);
}

/* Run's error for a command whose executable could not be executed, with
 * execve()'s @exec_errno, and the shell's status for it: 127 when the file
 * is not there (ENOENT, ENOTDIR), 126 when it is but cannot be executed
 * (EACCES, ENOEXEC, …). Only the guest knows, so this comes from the result
 * (sandbox_result_get_exec_errno(), taken from the failed execve() itself),
 * never from the output: whatever a guest that ran prints, and whatever it
 * exits with, is its own. */
static GError *
exec_failure_error (SandboxCommand *command,
                    int             exec_errno,
                    int            *exit_status)
{
  const char *executable = sandbox_command_get_executable (command);
  const char *reason = g_strerror (exec_errno);

  if (exec_errno == ENOENT || exec_errno == ENOTDIR)
    {
      *exit_status = SANDBOXCTL_EXIT_NOT_FOUND;
      return g_error_new (SANDBOXCTL_RUN_ERROR, SANDBOXCTL_RUN_ERROR_NOT_FOUND,
                          "%s: command not found in the sandbox (%s)", executable, reason);
    }
  *exit_status = SANDBOXCTL_EXIT_NOT_EXECUTABLE;
  return g_error_new (SANDBOXCTL_RUN_ERROR, SANDBOXCTL_RUN_ERROR_NOT_EXECUTABLE,
                      "%s: cannot be executed in the sandbox (%s)", executable, reason);
}

static JsonNode *
audit_event_to_node (SandboxGatewayEvent *event)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  const char *decision =
    sandbox_gateway_decision_to_string (sandbox_gateway_event_get_decision (event));

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, sandbox_gateway_event_get_host (event));
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, sandbox_gateway_event_get_method (event));
  json_builder_set_member_name (builder, "path");
  json_builder_add_string_value (builder, sandbox_gateway_event_get_path (event));
  json_builder_set_member_name (builder, "decision");
  json_builder_add_string_value (builder, decision != NULL ? decision : "unknown");
  json_builder_set_member_name (builder, "reason");
  json_builder_add_string_value (builder, sandbox_gateway_event_get_reason (event));
  json_builder_set_member_name (builder, "status");
  json_builder_add_int_value (builder, sandbox_gateway_event_get_status (event));
  json_builder_set_member_name (builder, "upstreamStatus");
  json_builder_add_int_value (builder, sandbox_gateway_event_get_upstream_status (event));
  json_builder_set_member_name (builder, "bytesSent");
  json_builder_add_int_value (builder, sandbox_gateway_event_get_bytes_sent (event));
  json_builder_set_member_name (builder, "bytesReceived");
  json_builder_add_int_value (builder, sandbox_gateway_event_get_bytes_received (event));
  json_builder_set_member_name (builder, "durationUs");
  json_builder_add_int_value (builder, sandbox_gateway_event_get_duration_us (event));
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

/* --audit: the gateway's decisions as they happen. Events carry no header
 * value, so they can be printed as they are. */
static void
on_gateway_audit (SandboxHandle       *handle,
                  SandboxGatewayEvent *event,
                  gpointer             user_data)
{
  RunOutput *output = user_data;
  g_autoptr(JsonNode) node = audit_event_to_node (event);

  switch (output->mode)
    {
    case RUN_OUTPUT_EVENTS:
      {
        g_autoptr(JsonBuilder) builder = event_begin ("audit");

        json_builder_set_member_name (builder, "audit");
        json_builder_add_value (builder, g_steal_pointer (&node));
        json_builder_end_object (builder);
        print_event (builder);
      }
      break;
    case RUN_OUTPUT_JSON:
      g_ptr_array_add (output->audit_events, g_steal_pointer (&node));
      break;
    case RUN_OUTPUT_STREAM:
    default:
      g_printerr ("sandboxctl: audit: %s %s%s: %s (%s), status %u, upstream %u, "
                  "%" G_GUINT64_FORMAT " bytes sent, %" G_GUINT64_FORMAT " received\n",
                  sandbox_gateway_event_get_method (event),
                  sandbox_gateway_event_get_host (event),
                  sandbox_gateway_event_get_path (event),
                  json_object_get_string_member (json_node_get_object (node), "decision"),
                  sandbox_gateway_event_get_reason (event),
                  sandbox_gateway_event_get_status (event),
                  sandbox_gateway_event_get_upstream_status (event),
                  sandbox_gateway_event_get_bytes_sent (event),
                  sandbox_gateway_event_get_bytes_received (event));
      break;
    }
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
result_to_json (RunOutput     *output,
                SandboxResult *result)
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
  if (output->audit)
    {
      json_builder_set_member_name (builder, "audit");
      json_builder_begin_array (builder);
      for (guint i = 0; i < output->audit_events->len; i++)
        json_builder_add_value (builder, json_node_ref (g_ptr_array_index (output->audit_events, i)));
      json_builder_end_array (builder);
    }
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

/* Reports a failure of the run in the output's mode. */
static int
report_run_error (RunOutput    *output,
                  const GError *error,
                  int           exit_status)
{
  sandboxctl_report_error (output->ctx, error);
  fflush (stdout);
  return exit_status;
}

static int
report_result (RunOutput      *output,
               SandboxCommand *command,
               SandboxResult  *result)
{
  int exec_errno = sandbox_result_get_exec_errno (result);
  int status = sandbox_result_get_exit_status (result);

  if (exec_errno != 0)
    {
      g_autoptr(GError) error = exec_failure_error (command, exec_errno, &status);

      return report_run_error (output, error, status);
    }

  g_debug ("%s exited with status %d", sandbox_command_get_executable (command), status);
  if (output->mode == RUN_OUTPUT_JSON)
    {
      g_autoptr(JsonNode) node = result_to_json (output, result);

      sandboxctl_print_json (node);
    }
  else if (output->mode == RUN_OUTPUT_EVENTS)
    {
      g_autoptr(JsonBuilder) builder = event_begin ("exit");

      /* Whatever UTF-8 tail was carried has no more bytes coming. */
      for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
        {
          GByteArray *partial = output->partial[fd - STDOUT_FILENO];

          if (partial->len > 0)
            {
              g_autofree char *base64 = g_base64_encode (partial->data, partial->len);
              g_autoptr(JsonBuilder) tail = event_begin (fd == STDOUT_FILENO ? "stdout" : "stderr");

              json_builder_set_member_name (tail, "base64");
              json_builder_add_string_value (tail, base64);
              json_builder_end_object (tail);
              print_event (tail);
            }
        }
      json_builder_set_member_name (builder, "exitStatus");
      json_builder_add_int_value (builder, status);
      json_builder_end_object (builder);
      print_event (builder);
    }
  return status;
}

static void
on_stdin_forwarded (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  /* A command that ends before our stdin does is no error of ours. */
  if (g_output_stream_splice_finish (G_OUTPUT_STREAM (source), result, &error) < 0)
    g_debug ("Our stdin stopped reaching the command: %s", error->message);
}

/* Copies our stdin to the command's as it arrives; our end of file closes
 * the command's. Cancelling @cancellable stops it. */
static void
forward_our_stdin (SandboxProcess *process,
                   GCancellable   *cancellable)
{
  g_autoptr(GInputStream) ours = g_unix_input_stream_new (STDIN_FILENO, FALSE);

  g_output_stream_splice_async (sandbox_process_get_stdin_stream (process), ours,
                                G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, G_PRIORITY_DEFAULT,
                                cancellable, on_stdin_forwarded, NULL);
}

/**
 * run_in_session:
 * @ctx: the invocation
 * @handle: a live handle
 * @command: what to run
 * @output: how to report
 *
 * Spawns @command, forwards its output (and with --audit the gateway's
 * decisions) as it arrives in @output's mode, and waits in a main loop,
 * where SIGINT/SIGTERM/SIGHUP cancel it.
 *
 * Returns: the command's exit status, or an error's exit code
 */
static int
run_in_session (SandboxctlContext *ctx,
                SandboxHandle     *handle,
                SandboxCommand    *command,
                RunOutput         *output)
{
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GError) error = NULL;
  g_autoptr(GCancellable) forwarding = g_cancellable_new ();
  RunWait wait = { ctx, loop, NULL, NULL };
  SandboxctlTerminal *terminal = NULL;
  gulong audit_handler = 0;
  int status;

  if (output->audit)
    audit_handler = g_signal_connect (handle, "gateway-audit", G_CALLBACK (on_gateway_audit),
                                      output);
  g_debug ("Running %s in session %s", sandbox_command_get_executable (command),
           sandbox_session_get_id (session));
  process = sandbox_session_spawn (session, command, ctx->cancellable, &error);
  if (process == NULL)
    {
      g_clear_signal_handler (&audit_handler, handle);
      return report_run_error (output, error, sandboxctl_exit_code_for_error (error));
    }

  if (output->mode == RUN_OUTPUT_EVENTS)
    {
      g_autoptr(JsonBuilder) builder = event_begin ("start");

      json_builder_set_member_name (builder, "sessionId");
      json_builder_add_string_value (builder, sandbox_session_get_id (session));
      json_builder_end_object (builder);
      print_event (builder);
    }
  g_signal_connect (process, "stdout-data", G_CALLBACK (on_stdout_data), output);
  g_signal_connect (process, "stderr-data", G_CALLBACK (on_stderr_data), output);
  if (sandbox_process_has_terminal (process))
    terminal = sandboxctl_terminal_attach (process);
  if (sandbox_process_get_stdin_stream (process) != NULL)
    forward_our_stdin (process, forwarding);
  /* No cancellable for the wait: cancelling the spawn kills the command,
   * and we wait for it to be gone. */
  sandbox_process_wait_async (process, NULL, on_wait_done, &wait);
  g_main_loop_run (loop);
  g_clear_pointer (&terminal, sandboxctl_terminal_detach);
  g_cancellable_cancel (forwarding);
  g_signal_handlers_disconnect_by_data (process, output);
  g_clear_signal_handler (&audit_handler, handle);

  if (wait.result == NULL)
    {
      status = report_run_error (output, wait.error, sandboxctl_exit_code_for_error (wait.error));
      g_clear_error (&wait.error);
      return status;
    }

  status = report_result (output, command, wait.result);
  g_clear_object (&wait.result);
  return status;
}

/* Prewarm, create, run, delete: a one-shot sandbox. */
static int
run_ephemeral (SandboxctlContext         *ctx,
               SandboxctlTemplateOptions *template_options,
               SandboxCommand            *command,
               RunOutput                 *output)
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

  status = run_in_session (ctx, handle, command, output);

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

/* The session is busy: when its lease is a holder's (sandboxctl-holder.c),
 * the command runs there, under the holder's network policy, and its output
 * comes at its end. Otherwise @busy, which names the lease's owner, stands. */
static int
run_through_holder (SandboxctlContext         *ctx,
                    SandboxctlSessionOptions  *session_options,
                    RunOptions                *options,
                    SandboxCommand            *command,
                    RunOutput                 *output,
                    GError                   **busy)
{
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  int exec_errno = 0;

  result = sandboxctl_holder_run (ctx, session_options,
                                  (const char * const *) options->command_line,
                                  sandboxctl_command_options (options->cwd,
                                                              (const char * const *) options->environment,
                                                              options->timeout_ms,
                                                              options->max_output_bytes),
                                  &exec_errno, &error);
  if (result == NULL && (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) ||
                         g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED)))
    return sandboxctl_report_error (ctx, *busy);
  if (result == NULL)
    return report_run_error (output, error, sandboxctl_exit_code_for_error (error));
  if (exec_errno != 0)
    {
      int status;
      g_autoptr(GError) exec_error = exec_failure_error (command, exec_errno, &status);

      return report_run_error (output, exec_error, status);
    }
  if (output->mode == RUN_OUTPUT_STREAM)
    {
      GBytes *streams[] = { sandbox_result_get_stdout_bytes (result),
                            sandbox_result_get_stderr_bytes (result) };

      for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
        if (streams[fd - STDOUT_FILENO] != NULL &&
            !sandboxctl_write_all (fd, g_bytes_get_data (streams[fd - STDOUT_FILENO], NULL),
                                   g_bytes_get_size (streams[fd - STDOUT_FILENO]), &error))
          return sandboxctl_report_error (ctx, error);
    }
  return report_result (output, command, result);
}

/* An interactive shell's deadline unless --timeout-ms says otherwise: a
 * day, where a one-shot command's is SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS. */
#define SHELL_DEFAULT_TIMEOUT_MS (24 * 3600 * 1000)

static const char * const default_shell[] = { "/bin/bash", "-l", NULL };

/* run, and shell (@shell): run -t with a login shell unless told which
 * program, and a deadline for a person at a keyboard. */
static int
run_command (SandboxctlContext   *ctx,
             char              ***argv,
             gboolean             shell)
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
      "Stream our stdin to the command as it runs (end of file closes the command's)", NULL },
    { "tty", 't', 0, G_OPTION_ARG_NONE, &options.terminal,
      "Run the command on a terminal inside the sandbox, ours relayed to it (raw mode, "
      "resized with our window)", NULL },
    { "events", 0, 0, G_OPTION_ARG_NONE, &options.events,
      "Stream JSON events, one a line: start, stdout, stderr, audit, exit or error", NULL },
    { "audit", 0, 0, G_OPTION_ARG_NONE, &options.audit,
      "Show the network gateway's decisions on the command's requests as they happen", NULL },
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
    shell ? sandboxctl_option_context_new (ctx, "[--] [EXECUTABLE [ARGUMENT…]]",
                                           "Open an interactive shell in a session: /bin/bash -l "
                                           "(or EXECUTABLE) on a terminal inside the sandbox, "
                                           "ours relayed to it, and exit with its status. Its "
                                           "deadline is a day unless --timeout-ms says otherwise.",
                                           entries, TRUE)
          : sandboxctl_option_context_new (ctx, "[--] EXECUTABLE [ARGUMENT…]",
                                           "Run EXECUTABLE (an absolute path inside the sandbox) in "
                                           "a session, stream its output live and exit with its "
                                           "status. With --json, print {exitStatus, stdout, "
                                           "stderr} at the end instead of streaming; with "
                                           "--events, stream JSON events. A command that is not "
                                           "there exits 127, one that cannot be executed 126.",
                                           entries, TRUE);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxCommand) command = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(RunOutput) output = { 0 };
  gboolean ephemeral;
  int status;

  g_option_group_add_entries (g_option_context_get_main_group (context), session_entries);
  g_option_context_set_strict_posix (context, TRUE);
  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  /* --events is machine output: every error from here on is an error event. */
  ctx->events = options.events;
  if (shell)
    {
      options.terminal = TRUE;
      if (options.timeout_ms == 0)
        options.timeout_ms = SHELL_DEFAULT_TIMEOUT_MS;
      if (options.command_line == NULL || options.command_line[0] == NULL)
        {
          g_strfreev (options.command_line);
          options.command_line = g_strdupv ((char **) default_shell);
        }
    }
  if (options.command_line == NULL || options.command_line[0] == NULL)
    return sandboxctl_usage_error (ctx, "missing EXECUTABLE");
  if (options.terminal && (options.events || ctx->json))
    return sandboxctl_usage_error (ctx, "a terminal (--tty, shell) shows the command as it "
                                        "draws itself: it excludes --json and --events");

  ephemeral = sandboxctl_template_options_given (&template_options);
  if (ephemeral && template_options.name == NULL)
    return sandboxctl_usage_error (ctx, "--dir and --file need --ephemeral NAME");
  if (ephemeral && (session_options.state_file != NULL || session_options.session_id != NULL))
    return sandboxctl_usage_error (ctx, "--ephemeral excludes --state and --session");

  command = build_command (&options, &error);
  if (command == NULL)
    return sandboxctl_report_error (ctx, error);
  run_output_init (&output, ctx,
                   options.events ? RUN_OUTPUT_EVENTS
                                  : ctx->json ? RUN_OUTPUT_JSON : RUN_OUTPUT_STREAM,
                   options.audit);

  if (ephemeral)
    return run_ephemeral (ctx, &template_options, command, &output);

  handle = sandboxctl_session_resume (ctx, &session_options, NULL, &error);
  if (handle == NULL && g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY) &&
      !options.terminal && !options.use_stdin && !options.events && !options.audit)
    return run_through_holder (ctx, &session_options, &options, command, &output, &error);
  if (handle == NULL)
    return sandboxctl_report_error (ctx, error);
  status = run_in_session (ctx, handle, command, &output);
  return sandboxctl_session_finish (ctx, handle, status);
}

int
sandboxctl_cmd_run (SandboxctlContext   *ctx,
                    char              ***argv)
{
  return run_command (ctx, argv, FALSE);
}

int
sandboxctl_cmd_shell (SandboxctlContext   *ctx,
                      char              ***argv)
{
  return run_command (ctx, argv, TRUE);
}
