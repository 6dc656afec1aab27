/* sandbox-coding-call-private.h — one coding-tool call: its state and its results
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The bottom of the coding tools: the adapter (sandbox-coding-invoke.c,
 * over the object of sandbox-coding-tools.c) fills a SandboxCodingCall
 * through the schema (sandbox-coding-schema.c), whose table hands it to a
 * tool (sandbox-coding-file-tools.c, sandbox-coding-shell.c). Everything
 * here is shared by all of them.
 */

#pragma once

#include <json-glib/json-glib.h>

#include "sandbox-coding-binding.h"
#include "sandbox-process.h"
#include "sandbox-session.h"

G_BEGIN_DECLS

/* What the model gets when a call is refused; the cause goes to ::tool-error. */
#define SANDBOX_CODING_FIXED_REFUSAL "Sandbox session cannot execute this operation"

typedef struct _SandboxCodingToolEntry SandboxCodingToolEntry;
typedef struct _SandboxCodingArtifacts SandboxCodingArtifacts;

/* One invocation: where it runs, the model's arguments, a snapshot of the
 * configuration, the outcome. */
typedef struct
{
  const SandboxCodingToolEntry *tool;       /* NULL for an unknown tool */
  SandboxCodingBinding *binding;
  SandboxSession *session;
  SandboxCodingArtifacts *artifacts;        /* the adapter's, which outlives the call */
  GObject *tools;                           /* the adapter, which emits ::shell-output */
  GThread *caller;                          /* the thread that invoked the call */
  GMainContext *caller_context;             /* its thread-default context then */

  /* The arguments, where the tool's table row puts them. */
  char *path;               /* canonical; the shell's cwd for shell */
  char *command;            /* search_files: the pattern */
  char *glob;               /* search_files: file names to search, or NULL for all */
  char *content;
  char *old_string;
  char *new_string;
  gint64 offset;
  gint64 limit;             /* read_file: lines; search_files: matches */
  gint64 timeout_ms;        /* the model's, 0 when not given */
  char *id;                 /* a background command's, for write_stdin and kill_command */
  gint64 yield_ms;          /* how long exec_command and write_stdin wait for output */
  gboolean tty;             /* exec_command: on a terminal */

  /* The configuration, taken once the call is authorized. */
  char *shell;
  guint shell_timeout_ms;
  gsize max_shell_output_bytes;
  gsize max_command_output_bytes;
  char **required;
  guint max_list_entries;

  JsonNode *result;
  GError *cause;            /* for ::tool-error */
} SandboxCodingCall;

/* A tool's work, in the caller's thread or a worker thread. It sets
 * call->result and returns TRUE, or sets @error (cancellation only) and
 * returns FALSE: the model's outcome and a cancellation never mix. */
typedef gboolean (*SandboxCodingToolFunc) (SandboxCodingCall  *call,
                                           GCancellable       *cancellable,
                                           GError            **error);

SandboxCodingCall *sandbox_coding_call_new        (GObject                *tools,
                                                   SandboxCodingBinding   *binding,
                                                   SandboxSession         *session,
                                                   SandboxCodingArtifacts *artifacts);
void               sandbox_coding_call_free       (SandboxCodingCall      *call);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxCodingCall, sandbox_coding_call_free)

void               sandbox_coding_call_emit_output (SandboxCodingCall     *call,
                                                   SandboxOutputStream    stream,
                                                   GBytes                *data);

void               sandbox_coding_add_error_member (JsonBuilder          *builder,
                                                    const char           *code,
                                                    const char           *message,
                                                    const char           *reason);
JsonNode          *sandbox_coding_error_result    (const char             *code,
                                                   const char             *reason,
                                                   const char             *format,
                                                   ...) G_GNUC_PRINTF (3, 4);
JsonNode          *sandbox_coding_refusal_result  (GError                 *cause,
                                                   GError                **cause_out);
JsonBuilder       *sandbox_coding_ok_builder_new  (const char             *path);
JsonNode          *sandbox_coding_ok_builder_finish (JsonBuilder          *builder);

G_END_DECLS
