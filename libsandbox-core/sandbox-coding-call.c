/* sandbox-coding-call.c — one coding-tool call: its state and its results
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-coding-call-private.h"
#include "sandbox-error.h"

SandboxCodingCall *
sandbox_coding_call_new (GObject                *tools,
                         SandboxCodingBinding   *binding,
                         SandboxSession         *session,
                         SandboxCodingArtifacts *artifacts)
{
  SandboxCodingCall *call = g_new0 (SandboxCodingCall, 1);

  call->tools = g_object_ref (tools);
  call->caller = g_thread_self ();
  call->caller_context = g_main_context_ref_thread_default ();
  call->binding = g_object_ref (binding);
  call->session = g_object_ref (session);
  call->artifacts = artifacts;
  return call;
}

void
sandbox_coding_call_free (SandboxCodingCall *call)
{
  g_clear_object (&call->tools);
  g_clear_pointer (&call->caller_context, g_main_context_unref);
  g_clear_object (&call->binding);
  g_clear_object (&call->session);
  g_free (call->path);
  g_free (call->command);
  g_free (call->glob);
  g_free (call->id);
  g_free (call->content);
  g_free (call->old_string);
  g_free (call->new_string);
  g_free (call->shell);
  g_strfreev (call->required);
  g_clear_pointer (&call->result, json_node_unref);
  g_clear_error (&call->cause);
  g_free (call);
}

/* Adds "error": {"code", "message"[, "reason"]} to the object @builder is
 * in. Every result that reports an error (a refusal, a mistake, a command
 * that failed) builds it here, so the model always sees one shape. */
void
sandbox_coding_add_error_member (JsonBuilder *builder,
                                 const char  *code,
                                 const char  *message,
                                 const char  *reason)
{
  json_builder_set_member_name (builder, "error");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "code");
  json_builder_add_string_value (builder, code);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, message);
  if (reason != NULL)
    {
      json_builder_set_member_name (builder, "reason");
      json_builder_add_string_value (builder, reason);
    }
  json_builder_end_object (builder);
}

/* {"ok": false, "error": {"code", "message"[, "reason"]}}: what the model
 * sees of everything it got wrong and of every refusal. */
JsonNode *
sandbox_coding_error_result (const char *code,
                             const char *reason,
                             const char *format,
                             ...)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, FALSE);
  sandbox_coding_add_error_member (builder, code, message, reason);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

static const char *
error_code_name (const GError *error)
{
  if (error->domain == SANDBOX_ERROR)
    return sandbox_error_code_name (error->code);
  return "SANDBOX_UNAVAILABLE";
}

/* The refusal of the reference's assertToolActive/prepare: a fixed message
 * and the cause's code; the cause is kept for ::tool-error. */
JsonNode *
sandbox_coding_refusal_result (GError  *cause,
                               GError **cause_out)
{
  JsonNode *result = sandbox_coding_error_result ("SANDBOX_UNAVAILABLE", error_code_name (cause),
                                                  "%s", SANDBOX_CODING_FIXED_REFUSAL);

  g_propagate_error (cause_out, cause);
  return result;
}

/* {"ok": true[, "path"], …}: the tool adds its members, then finishes. */
JsonBuilder *
sandbox_coding_ok_builder_new (const char *path)
{
  JsonBuilder *builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, TRUE);
  if (path != NULL)
    {
      json_builder_set_member_name (builder, "path");
      json_builder_add_string_value (builder, path);
    }
  return builder;
}

JsonNode *
sandbox_coding_ok_builder_finish (JsonBuilder *builder)
{
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

typedef struct
{
  GObject *tools;
  SandboxOutputStream stream;
  GBytes *data;
} OutputEmission;

static gboolean
emit_output_cb (gpointer user_data)
{
  OutputEmission *emission = user_data;

  g_signal_emit_by_name (emission->tools, "shell-output", emission->stream, emission->data);
  return G_SOURCE_REMOVE;
}

static void
output_emission_free (OutputEmission *emission)
{
  g_object_unref (emission->tools);
  g_bytes_unref (emission->data);
  g_free (emission);
}

/* ::shell-output, in the thread that invoked the call: at once in a
 * blocking invoke (its own thread runs the command), through the
 * caller's context for an async one (a worker thread runs it). */
void
sandbox_coding_call_emit_output (SandboxCodingCall   *call,
                                 SandboxOutputStream  stream,
                                 GBytes              *data)
{
  OutputEmission *emission;

  if (g_thread_self () == call->caller)
    {
      g_signal_emit_by_name (call->tools, "shell-output", stream, data);
      return;
    }
  emission = g_new0 (OutputEmission, 1);
  emission->tools = g_object_ref (call->tools);
  emission->stream = stream;
  emission->data = g_bytes_ref (data);
  g_main_context_invoke_full (call->caller_context, G_PRIORITY_DEFAULT, emit_output_cb,
                              emission, (GDestroyNotify) output_emission_free);
}
