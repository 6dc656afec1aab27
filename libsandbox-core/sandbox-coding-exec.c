/* sandbox-coding-exec.c — the interactive shell tools: exec_command, write_stdin,
 * list_commands and kill_command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * In the shape coding agents use across turns: exec_command starts
 * `SHELL -c COMMAND` as one of the session's background commands (with a
 * stdin stream) through a launch bound to the policy revision, waits a
 * little (yield_time_ms) and returns the output so far, with the id to
 * come back with if it still runs; write_stdin types into it and returns
 * what is new; list_commands and kill_command manage them. What the model
 * sees of the output is bounded as the one-shot shell's is (head and tail
 * around a marker), and every call shows only what came since the last
 * one: the position read to is kept on the command.
 */

#include "config.h"

#include <string.h>

#include "sandbox-coding-exec-private.h"
#include "sandbox-coding-shell-private.h"
#include "sandbox-error.h"
#include "sandbox-process-private.h"
#include "sandbox-session-private.h"

/* The position of a command's output a coding tool has shown up to. */
#define SHOWN_KEY "sandbox-coding-shown"

static GMutex shown_lock;

/* What yield() waits on: set from any thread, then its context woken. */
typedef struct
{
  GMainContext *context;
  gint over;
} YieldWait;

static void
yield_end (YieldWait *wait)
{
  g_atomic_int_set (&wait->over, TRUE);
  g_main_context_wakeup (wait->context);
}

static void
yield_cancelled_cb (GCancellable *cancellable,
                    gpointer      data)
{
  yield_end (data);
}

static gboolean
yield_timeout_cb (gpointer data)
{
  yield_end (data);
  return G_SOURCE_REMOVE;
}

/* Waits until @process ends, @yield_ms pass or @cancellable is cancelled.
 * On a context of its own: the process's owner context, where its waiters
 * are answered, may be the application's, which this thread (a worker's,
 * or the caller's inside a blocking call) must not iterate. The ends come
 * as the cancellables' handlers, not GCancellableSources: GLib 2.74's
 * source leaks itself when its cancellable is cancelled on another thread
 * while it is destroyed (as the process's end is). */
static void
yield (SandboxProcess *process,
       gint64          yield_ms,
       GCancellable   *cancellable)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GCancellable) ended = sandbox_process_dup_ended (process);
  g_autoptr(GSource) timeout = g_timeout_source_new ((guint) CLAMP (yield_ms, 0, G_MAXUINT));
  YieldWait wait = { context, FALSE };
  gulong ended_id, cancelled_id = 0;

  g_source_set_callback (timeout, yield_timeout_cb, &wait, NULL);
  g_source_attach (timeout, context);
  /* Each calls its handler at once if cancelled already. */
  ended_id = g_cancellable_connect (ended, G_CALLBACK (yield_cancelled_cb), &wait, NULL);
  if (cancellable != NULL)
    cancelled_id = g_cancellable_connect (cancellable, G_CALLBACK (yield_cancelled_cb), &wait,
                                          NULL);
  while (!g_atomic_int_get (&wait.over))
    g_main_context_iteration (context, TRUE);
  /* @wait lives on this stack: a disconnect waits for a handler running
   * on another thread, and no handler runs after it. */
  g_cancellable_disconnect (ended, ended_id);
  if (cancellable != NULL)
    g_cancellable_disconnect (cancellable, cancelled_id);
  g_source_destroy (timeout);
}

/* What came since the last call, bounded for the model; moves the shown
 * position on. */
static char *
take_new_output (SandboxCodingCall *call,
                 SandboxProcess    *process,
                 gboolean          *truncated)
{
  g_autoptr(GByteArray) fresh = g_byte_array_new ();
  guint64 position, dropped = 0;
  char *text;

  g_mutex_lock (&shown_lock);
  position = GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (process), SHOWN_KEY));
  for (;;)
    {
      guint64 skipped = 0, next = 0;
      g_autoptr(GBytes) bytes = sandbox_process_read_output (process, position, &next, &skipped);

      dropped += skipped;
      g_byte_array_append (fresh, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
      if (next == position)
        break;
      position = next;
    }
  g_object_set_data (G_OBJECT (process), SHOWN_KEY, GSIZE_TO_POINTER ((gsize) position));
  g_mutex_unlock (&shown_lock);

  text = sandbox_coding_model_text (fresh, call->max_shell_output_bytes, truncated);
  if (dropped == 0)
    return text;
  *truncated = TRUE;
  return g_strdup_printf ("[... %" G_GUINT64_FORMAT " earlier bytes no longer kept ...]\n%s",
                          dropped, text);
}

/* {"ok", "id", "running", "exit_status" (once over), "output", "truncated"} */
static JsonNode *
command_result (SandboxCodingCall *call,
                SandboxProcess    *process)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) failure = NULL;
  g_autofree char *output = NULL;
  gboolean running = !sandbox_process_is_finished (process);
  gboolean truncated = FALSE;

  if (!running)
    result = sandbox_process_wait (process, NULL, &failure);
  output = take_new_output (call, process, &truncated);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, failure == NULL);
  json_builder_set_member_name (builder, "id");
  json_builder_add_string_value (builder, sandbox_process_get_background_id (process));
  json_builder_set_member_name (builder, "running");
  json_builder_add_boolean_value (builder, running);
  if (result != NULL)
    {
      json_builder_set_member_name (builder, "exit_status");
      json_builder_add_int_value (builder, sandbox_result_get_exit_status (result));
    }
  if (failure != NULL)
    sandbox_coding_add_error_member (builder, "SANDBOX_LIMIT", failure->message, NULL);
  json_builder_set_member_name (builder, "output");
  json_builder_add_string_value (builder, output);
  json_builder_set_member_name (builder, "truncated");
  json_builder_add_boolean_value (builder, truncated);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

/* The exec_command tool; a SandboxCodingToolFunc. */
gboolean
sandbox_coding_exec_command (SandboxCodingCall  *call,
                             GCancellable       *cancellable,
                             GError            **error)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new (call->shell);
  g_autoptr(SandboxCommand) detached = NULL;
  g_autoptr(SandboxCodingLaunch) launch = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *id = NULL;
  gsize capacity;

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, call->command);
  sandbox_command_set_cwd (command, call->path);
  sandbox_command_set_max_output_bytes (command, call->max_command_output_bytes);
  if (call->tty)
    sandbox_command_set_terminal (command, TRUE);
  else
    sandbox_command_set_stdin_stream (command, TRUE);
  detached = sandbox_session_detach_command (call->session, command, &capacity, &local_error);
  if (detached == NULL)
    {
      call->result = sandbox_coding_error_result ("SANDBOX_LIMIT", NULL, "%s",
                                                  local_error->message);
      return TRUE;
    }

  launch = sandbox_coding_shell_prepare_launch (call->binding, detached,
                                                (const char * const *) call->required,
                                                &local_error);
  if (launch != NULL)
    process = sandbox_coding_launch_spawn (launch, NULL, &local_error);
  if (process == NULL)
    {
      if (g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY))
        call->result = sandbox_coding_error_result ("SANDBOX_BUSY", NULL, "%s",
                                                    local_error->message);
      else
        call->result = sandbox_coding_refusal_result (g_steal_pointer (&local_error),
                                                      &call->cause);
      return TRUE;
    }
  id = sandbox_session_adopt_background (call->session, process, detached, capacity);
  yield (process, call->yield_ms, cancellable);
  call->result = command_result (call, process);
  return TRUE;
}

/* The command @call->id names, or NULL with call->result set. */
static SandboxProcess *
lookup (SandboxCodingCall *call)
{
  SandboxProcess *process = sandbox_session_lookup_background (call->session, call->id);

  if (process == NULL)
    call->result = sandbox_coding_error_result ("SANDBOX_NOT_FOUND", NULL,
                                                "No command has that id (list_commands "
                                                "lists them)");
  return process;
}

/* The write_stdin tool; a SandboxCodingToolFunc. Input the command does
 * not take at once is refused, rather than left to block the call. */
gboolean
sandbox_coding_write_stdin (SandboxCodingCall  *call,
                            GCancellable       *cancellable,
                            GError            **error)
{
  g_autoptr(SandboxProcess) process = lookup (call);
  GOutputStream *input;
  gsize length = strlen (call->content), written = 0;

  if (process == NULL)
    return TRUE;
  input = sandbox_process_get_stdin_stream (process);
  if (length > 0 && (input == NULL || sandbox_process_is_finished (process)))
    {
      call->result = sandbox_coding_error_result ("SANDBOX_INVALID", NULL,
                                                  "The command no longer reads its input");
      return TRUE;
    }
  while (written < length)
    {
      g_autoptr(GError) local_error = NULL;
      gssize n = g_pollable_output_stream_write_nonblocking (G_POLLABLE_OUTPUT_STREAM (input),
                                                             call->content + written,
                                                             length - written, NULL,
                                                             &local_error);

      if (n < 0)
        {
          call->result = sandbox_coding_error_result ("SANDBOX_BUSY", NULL,
                                                      "The command is not reading its input; "
                                                      "%" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
                                                      " bytes were written", written, length);
          return TRUE;
        }
      written += n;
    }
  yield (process, call->yield_ms, cancellable);
  call->result = command_result (call, process);
  return TRUE;
}

/* The kill_command tool; a SandboxCodingToolFunc. */
gboolean
sandbox_coding_kill_command (SandboxCodingCall  *call,
                             GCancellable       *cancellable,
                             GError            **error)
{
  g_autoptr(SandboxProcess) process = lookup (call);

  if (process == NULL)
    return TRUE;
  sandbox_process_stop (process, NULL, NULL);
  call->result = command_result (call, process);
  return TRUE;
}

/* The list_commands tool; a SandboxCodingToolFunc. */
gboolean
sandbox_coding_list_commands (SandboxCodingCall  *call,
                              GCancellable       *cancellable,
                              GError            **error)
{
  g_autoptr(GPtrArray) commands = sandbox_session_list_background (call->session);
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, TRUE);
  json_builder_set_member_name (builder, "commands");
  json_builder_begin_array (builder);
  for (guint i = 0; i < commands->len; i++)
    {
      SandboxProcess *process = g_ptr_array_index (commands, i);
      const char * const *argv = sandbox_process_get_argv (process);
      g_autofree char *started = g_date_time_format_iso8601 (sandbox_process_get_start_time (process));

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "id");
      json_builder_add_string_value (builder, sandbox_process_get_background_id (process));
      /* Ours run SHELL -c COMMAND: the model knows them by COMMAND. */
      json_builder_set_member_name (builder, "command");
      json_builder_add_string_value (builder, g_strv_length ((char **) argv) == 3 &&
                                              g_str_equal (argv[1], "-c") ? argv[2] : argv[0]);
      json_builder_set_member_name (builder, "started");
      json_builder_add_string_value (builder, started);
      json_builder_set_member_name (builder, "running");
      json_builder_add_boolean_value (builder, !sandbox_process_is_finished (process));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  call->result = json_builder_get_root (builder);
  return TRUE;
}
