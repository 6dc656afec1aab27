/* sandbox-coding-shell.c — the shell tool, its launches and its artifacts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A `shell` call runs `SHELL -c COMMAND` inside the namespace through a
 * launch bound to the policy revision it was prepared under; the model
 * sees a bounded view of the output, and the host may fetch the whole of a
 * truncated output from the artifacts.
 */

#include "config.h"

#include <string.h>

#include "sandbox-coding-shell-private.h"
#include "sandbox-coding-launch-private.h"
#include "sandbox-error.h"

/* SandboxProcess's message for an output overflow (a fixed reference string). */
#define OUTPUT_LIMIT_MESSAGE "Sandbox output limit exceeded"

/* Artifacts -------------------------------------------------------------- */

/* The whole output of the last truncated `shell` calls, oldest dropped
 * first; shared by the calls of one SandboxCodingTools in any thread. */
struct _SandboxCodingArtifacts
{
  guint max_artifacts;       /* atomic; read once per artifact stored */

  GMutex lock;
  /* Guarded by @lock. */
  GHashTable *artifacts;     /* id → Artifact */
  GQueue order;              /* ids, oldest first */
  guint64 next_id;
};

typedef struct
{
  GBytes *stdout_bytes;
  GBytes *stderr_bytes;
} Artifact;

static void
artifact_free (Artifact *artifact)
{
  g_bytes_unref (artifact->stdout_bytes);
  g_bytes_unref (artifact->stderr_bytes);
  g_free (artifact);
}

SandboxCodingArtifacts *
sandbox_coding_artifacts_new (void)
{
  SandboxCodingArtifacts *self = g_new0 (SandboxCodingArtifacts, 1);

  g_mutex_init (&self->lock);
  self->artifacts = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                           (GDestroyNotify) artifact_free);
  g_queue_init (&self->order);
  self->next_id = 1;
  return self;
}

void
sandbox_coding_artifacts_free (SandboxCodingArtifacts *self)
{
  g_hash_table_unref (self->artifacts);
  g_queue_clear_full (&self->order, g_free);
  g_mutex_clear (&self->lock);
  g_free (self);
}

guint
sandbox_coding_artifacts_get_max (SandboxCodingArtifacts *self)
{
  return g_atomic_int_get (&self->max_artifacts);
}

/* Takes effect at the next artifact stored. */
void
sandbox_coding_artifacts_set_max (SandboxCodingArtifacts *self,
                                  guint                   max_artifacts)
{
  g_atomic_int_set (&self->max_artifacts, max_artifacts);
}

/* Keeps a copy of @out and @err; returns its id, or NULL when none are kept. */
static char *
store_artifact (SandboxCodingArtifacts *self,
                GByteArray             *out,
                GByteArray             *err)
{
  guint max_artifacts = g_atomic_int_get (&self->max_artifacts);
  Artifact *artifact;
  char *id;

  if (max_artifacts == 0)
    return NULL;

  g_mutex_lock (&self->lock);
  while (g_queue_get_length (&self->order) >= max_artifacts)
    {
      g_autofree char *oldest = g_queue_pop_head (&self->order);

      g_hash_table_remove (self->artifacts, oldest);
    }
  id = g_strdup_printf ("artifact-%" G_GUINT64_FORMAT, self->next_id++);
  artifact = g_new0 (Artifact, 1);
  artifact->stdout_bytes = g_bytes_new (out->data, out->len);
  artifact->stderr_bytes = g_bytes_new (err->data, err->len);
  g_queue_push_tail (&self->order, id);
  g_hash_table_insert (self->artifacts, id, artifact);
  g_mutex_unlock (&self->lock);

  return g_strdup (id);
}

/* The stdout of artifact @id (and its stderr in @stderr_bytes), or NULL. */
GBytes *
sandbox_coding_artifacts_lookup (SandboxCodingArtifacts  *self,
                                 const char              *id,
                                 GBytes                 **stderr_bytes)
{
  Artifact *artifact;
  GBytes *out = NULL;

  g_mutex_lock (&self->lock);
  artifact = g_hash_table_lookup (self->artifacts, id);
  if (artifact != NULL)
    {
      out = g_bytes_ref (artifact->stdout_bytes);
      if (stderr_bytes != NULL)
        *stderr_bytes = g_bytes_ref (artifact->stderr_bytes);
    }
  g_mutex_unlock (&self->lock);
  return out;
}

/* Launches --------------------------------------------------------------- */

static gboolean
restrictions_satisfied (char               **available,
                        const char * const  *required)
{
  for (gsize i = 0; required != NULL && required[i] != NULL; i++)
    if (!g_strv_contains ((const char * const *) available, required[i]))
      return FALSE;
  return TRUE;
}

/* The adapter's prepare(): NULL with @error set to the *cause*; callers
 * turn it into the fixed refusal. */
SandboxCodingLaunch *
sandbox_coding_shell_prepare_launch (SandboxCodingBinding  *binding,
                                     SandboxCommand        *command,
                                     const char * const    *required,
                                     GError               **error)
{
  g_auto(GStrv) restrictions = NULL;
  guint64 revision;

  if (!sandbox_coding_binding_check_active (binding, error))
    return NULL;
  if (!sandbox_command_validate (command, error))
    return NULL;

  /* The revision comes with the restrictions it was computed from. */
  restrictions = sandbox_coding_binding_get_restrictions (binding, &revision);
  if (!restrictions_satisfied (restrictions, required))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_NETWORK_DENIED,
                           "Sandbox policy no longer satisfies required restrictions");
      return NULL;
    }

  return sandbox_coding_launch_new (binding, command, revision);
}

/* The model's view of the output ---------------------------------------- */

/* The length of the longest prefix of @data, at most @budget bytes long,
 * that ends between two units of its decoding: a whole valid character, or
 * one invalid byte (which g_utf8_make_valid() replaces, one by one). */
static gsize
unit_prefix_length (const char *data,
                    gsize       length,
                    gsize       budget)
{
  gsize position = 0;

  if (length <= budget)
    return length;

  while (position < budget)
    {
      const char *valid_end;
      gsize valid_length;

      g_utf8_validate_len (data + position, length - position, &valid_end);
      valid_length = valid_end - data;
      if (valid_length >= budget)
        {
          gsize cut = budget;

          /* Inside a valid run: back off to the start of a character. */
          while (cut > position && cut < valid_length && (data[cut] & 0xc0) == 0x80)
            cut--;
          return cut;
        }
      /* The invalid byte at @valid_length is one unit of its own. */
      position = valid_length + 1;
    }

  return budget;
}

/* The start of the longest suffix of @data, at most @budget bytes long,
 * that begins between two units of the whole's decoding. A byte that
 * is not a continuation byte (10xxxxxx) always begins a unit; a
 * continuation byte three past the candidate start cannot belong to a
 * sequence begun before it (a sequence is at most four bytes), so at most
 * three bytes are skipped. */
static gsize
unit_suffix_start (const char *data,
                   gsize       length,
                   gsize       budget)
{
  gsize start;

  if (length <= budget)
    return 0;
  start = length - budget;
  for (guint skipped = 0; skipped < 3 && start < length && (data[start] & 0xc0) == 0x80; skipped++)
    start++;
  return start;
}

static void
append_valid (GString    *text,
              const char *data,
              gsize       length)
{
  g_autofree char *valid = NULL;

  if (length == 0)
    return;
  valid = g_utf8_make_valid (data, length);
  g_string_append (text, valid);
}

/* The model's view of @bytes: at most @budget bytes of the command's output
 * (never a part of a character), invalid UTF-8 replaced with U+FFFD. The
 * budget counts the command's bytes, so an invalid byte costs one although
 * it shows as three. Past the budget the view is the head and the tail —
 * a build's errors and a test run's summary come last — joined by a
 * marker naming how many bytes were left out; @cut is then set. */
char *
sandbox_coding_model_text (GByteArray *bytes,
                           gsize       budget,
                           gboolean   *cut)
{
  const char *data = (const char *) bytes->data;
  gsize head, tail_start;
  GString *text;

  if (bytes->len <= budget)
    return bytes->len == 0 ? g_strdup ("") : g_utf8_make_valid (data, bytes->len);

  *cut = TRUE;
  head = unit_prefix_length (data, bytes->len, budget - budget / 2);
  tail_start = unit_suffix_start (data, bytes->len, budget / 2);
  g_assert (head <= tail_start);

  /* The marker is a line of its own; it is not counted in the budget. */
  text = g_string_new (NULL);
  append_valid (text, data, head);
  if (text->len > 0 && text->str[text->len - 1] != '\n')
    g_string_append_c (text, '\n');
  g_string_append_printf (text, "[... %" G_GSIZE_FORMAT " byte%s omitted ...]\n",
                          tail_start - head, tail_start - head == 1 ? "" : "s");
  append_valid (text, data + tail_start, bytes->len - tail_start);
  return g_string_free (text, FALSE);
}

/* The tool ---------------------------------------------------------------- */

static void
keep_async_result (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  GAsyncResult **kept = user_data;

  *kept = g_object_ref (result);
}

typedef struct
{
  SandboxCodingCall *call;
  GByteArray *buffer;
  SandboxOutputStream stream;
  gboolean emit;              /* ::shell-output for each chunk */
} Collector;

static void
collect_output (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  Collector *collector = user_data;
  gsize length;
  const guint8 *bytes = g_bytes_get_data (data, &length);

  g_byte_array_append (collector->buffer, bytes, length);
  if (collector->emit)
    sandbox_coding_call_emit_output (collector->call, collector->stream, data);
}

static JsonNode *
shell_result (SandboxCodingCall *call,
              GByteArray        *out,
              GByteArray        *err,
              gboolean           over_cap,
              SandboxResult     *result,
              const GError      *failure)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *out_text = NULL;
  g_autofree char *err_text = NULL;
  g_autofree char *artifact_id = NULL;
  gsize budget = call->max_shell_output_bytes;
  gsize out_budget, err_budget;
  gboolean truncated = over_cap;

  /* Each stream gets at least half the budget, or all it needs. */
  out_budget = MIN (out->len, MAX (budget / 2, budget - MIN (budget, err->len)));
  err_budget = budget - out_budget;
  out_text = sandbox_coding_model_text (out, out_budget, &truncated);
  err_text = sandbox_coding_model_text (err, err_budget, &truncated);
  if (truncated)
    artifact_id = store_artifact (call->artifacts, out, err);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, result != NULL);
  if (result != NULL)
    {
      json_builder_set_member_name (builder, "exit_status");
      json_builder_add_int_value (builder, sandbox_result_get_exit_status (result));
    }
  else
    {
      sandbox_coding_add_error_member (builder, "SANDBOX_LIMIT", failure->message, NULL);
    }
  json_builder_set_member_name (builder, "stdout");
  json_builder_add_string_value (builder, out_text);
  json_builder_set_member_name (builder, "stderr");
  json_builder_add_string_value (builder, err_text);
  json_builder_set_member_name (builder, "truncated");
  json_builder_add_boolean_value (builder, truncated);
  if (artifact_id != NULL)
    {
      json_builder_set_member_name (builder, "artifact_id");
      json_builder_add_string_value (builder, artifact_id);
    }
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

/**
 * sandbox_coding_run_command:
 * @call: the call, authorized
 * @command: what to run, with its cwd, deadline and output cap set
 * @emit: whether its output goes to ::shell-output too, as it comes
 * @out: where its stdout goes
 * @err: where its stderr goes
 * @result: (out): its result, or %NULL
 * @failure: (out): a deadline or output overflow that ended it, or %NULL
 * @cancellable: (nullable): cancels the call
 * @error: cancellation only
 *
 * Runs @command inside the namespace through a launch bound to the
 * policy revision the call was prepared under. A refusal (the session
 * stopped, restrictions no longer met) or a busy sandbox is the model's
 * answer already: call->result is set, and neither @result nor @failure.
 *
 * Returns: %FALSE only when cancelled
 */
gboolean
sandbox_coding_run_command (SandboxCodingCall  *call,
                            SandboxCommand     *command,
                            gboolean            emit,
                            GByteArray         *out,
                            GByteArray         *err,
                            SandboxResult     **result,
                            GError            **failure,
                            GCancellable       *cancellable,
                            GError            **error)
{
  g_autoptr(SandboxCodingLaunch) launch = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GMainContext) context = NULL;
  g_autoptr(GError) local_error = NULL;
  Collector out_collector = { call, out, SANDBOX_OUTPUT_STDOUT, emit };
  Collector err_collector = { call, err, SANDBOX_OUTPUT_STDERR, emit };
  gulong out_id, err_id;

  *result = NULL;
  *failure = NULL;
  launch = sandbox_coding_shell_prepare_launch (call->binding, command,
                                                (const char * const *) call->required,
                                                &local_error);
  if (launch == NULL)
    {
      call->result = sandbox_coding_refusal_result (g_steal_pointer (&local_error), &call->cause);
      return TRUE;
    }

  /* Output signals come to a context only this call iterates, as they
   * come (so ::shell-output is live), and all of them before the wait's
   * answer. */
  context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  process = sandbox_coding_launch_spawn (launch, cancellable, &local_error);
  if (process != NULL)
    {
      g_autoptr(GAsyncResult) waited = NULL;

      out_id = g_signal_connect (process, "stdout-data", G_CALLBACK (collect_output),
                                 &out_collector);
      err_id = g_signal_connect (process, "stderr-data", G_CALLBACK (collect_output),
                                 &err_collector);
      sandbox_process_wait_async (process, NULL, keep_async_result, &waited);
      while (waited == NULL)
        g_main_context_iteration (context, TRUE);
      *result = sandbox_process_wait_finish (process, waited, &local_error);
      g_signal_handler_disconnect (process, out_id);
      g_signal_handler_disconnect (process, err_id);
    }
  g_main_context_pop_thread_default (context);

  if (*result != NULL)
    return TRUE;
  if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (process == NULL && g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY))
    call->result = sandbox_coding_error_result ("SANDBOX_BUSY", NULL, "%s", local_error->message);
  else if (process == NULL || !g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT))
    call->result = sandbox_coding_refusal_result (g_steal_pointer (&local_error), &call->cause);
  else
    *failure = g_steal_pointer (&local_error);
  return TRUE;
}

/**
 * sandbox_coding_output_overflowed:
 * @failure: (nullable): what ended a command, from sandbox_coding_run_command()
 *
 * Returns: whether it was the output cap (rather than the deadline)
 */
gboolean
sandbox_coding_output_overflowed (const GError *failure)
{
  return failure != NULL && g_strcmp0 (failure->message, OUTPUT_LIMIT_MESSAGE) == 0;
}

/* The shell tool; a SandboxCodingToolFunc. */
gboolean
sandbox_coding_shell (SandboxCodingCall  *call,
                      GCancellable       *cancellable,
                      GError            **error)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new (call->shell);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autoptr(GByteArray) err = g_byte_array_new ();
  g_autoptr(GError) failure = NULL;

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, call->command);
  sandbox_command_set_cwd (command, call->path);
  sandbox_command_set_timeout_ms (command, call->shell_timeout_ms);
  sandbox_command_set_max_output_bytes (command, call->max_command_output_bytes);

  if (!sandbox_coding_run_command (call, command, TRUE, out, err, &result, &failure, cancellable,
                                   error))
    return FALSE;
  if (call->result != NULL)
    return TRUE;

  /* A deadline keeps what arrived; an output overflow keeps the output up
   * to the command's cap, so the result is truncated either way. */
  call->result = shell_result (call, out, err, sandbox_coding_output_overflowed (failure),
                               result, failure);
  return TRUE;
}
