/* sandbox-coding-tools.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-coding-binding.h"
#include "sandbox-coding-launch.h"
#include "sandbox-coding-operation.h"
#include "sandbox-command.h"
#include "sandbox-handle.h"

G_BEGIN_DECLS

/**
 * SandboxCodingDefinitionShape:
 * @SANDBOX_CODING_DEFINITION_SHAPE_PARAMETERS: `{"name", "description",
 *   "parameters"}`: the shape of OpenAI-style function calling, and of
 *   [method@Sandbox.CodingTools.get_definitions_json]
 * @SANDBOX_CODING_DEFINITION_SHAPE_INPUT_SCHEMA: `{"name", "description",
 *   "input_schema"}`: the shape of the Anthropic Messages API's tools
 *
 * How [method@Sandbox.CodingTools.get_definitions_json_full] spells each
 * tool's definition; the JSON Schema of its arguments is the same in both.
 */
typedef enum
{
  SANDBOX_CODING_DEFINITION_SHAPE_PARAMETERS,
  SANDBOX_CODING_DEFINITION_SHAPE_INPUT_SCHEMA,
} SandboxCodingDefinitionShape;

/**
 * SANDBOX_CODING_DEFAULT_SHELL:
 *
 * The shell the `shell` tool runs commands with unless configured.
 */
#define SANDBOX_CODING_DEFAULT_SHELL "/usr/bin/sh"
/**
 * SANDBOX_CODING_DEFAULT_SHELL_TIMEOUT_MS:
 *
 * The default deadline of a `shell` call, in milliseconds: two minutes,
 * long enough for a build or a test suite.
 */
#define SANDBOX_CODING_DEFAULT_SHELL_TIMEOUT_MS 120000
/**
 * SANDBOX_CODING_DEFAULT_MAX_SHELL_TIMEOUT_MS:
 *
 * The default bound on the `timeout_ms` a model may ask of one `shell`
 * call, in milliseconds: ten minutes.
 */
#define SANDBOX_CODING_DEFAULT_MAX_SHELL_TIMEOUT_MS 600000
/**
 * SANDBOX_CODING_DEFAULT_MAX_SHELL_OUTPUT_BYTES:
 *
 * The default cap on the output a `shell` result shows the model.
 */
#define SANDBOX_CODING_DEFAULT_MAX_SHELL_OUTPUT_BYTES 65536
/**
 * SANDBOX_CODING_DEFAULT_MAX_COMMAND_OUTPUT_BYTES:
 *
 * The default cap on the whole output of a `shell` command (and so of its
 * artifact), far above what the model is shown: 8 MiB.
 */
#define SANDBOX_CODING_DEFAULT_MAX_COMMAND_OUTPUT_BYTES (8 * 1024 * 1024)
/**
 * SANDBOX_CODING_DEFAULT_MAX_LIST_ENTRIES:
 *
 * The default cap on the entries a `list_files` result holds.
 */
#define SANDBOX_CODING_DEFAULT_MAX_LIST_ENTRIES 1000
/**
 * SANDBOX_CODING_DEFAULT_MAX_ARTIFACTS:
 *
 * How many truncated outputs are kept for the host by default.
 */
#define SANDBOX_CODING_DEFAULT_MAX_ARTIFACTS 16

#define SANDBOX_TYPE_CODING_TOOLS (sandbox_coding_tools_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxCodingTools, sandbox_coding_tools, SANDBOX, CODING_TOOLS, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxCodingTools  *sandbox_coding_tools_new                  (SandboxHandle        *handle,
                                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
char                *sandbox_coding_tools_dup_shell            (SandboxCodingTools   *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_coding_tools_set_shell            (SandboxCodingTools   *self,
                                                                const char           *shell);
SANDBOX_AVAILABLE_IN_ALL
guint                sandbox_coding_tools_get_shell_timeout_ms (SandboxCodingTools   *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_coding_tools_set_shell_timeout_ms (SandboxCodingTools   *self,
                                                                guint                 timeout_ms);
SANDBOX_AVAILABLE_IN_ALL
gsize                sandbox_coding_tools_get_max_shell_output_bytes (SandboxCodingTools *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_coding_tools_set_max_shell_output_bytes (SandboxCodingTools *self,
                                                                      gsize               max_bytes);
SANDBOX_AVAILABLE_IN_ALL
char               **sandbox_coding_tools_dup_required_restrictions (SandboxCodingTools   *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_coding_tools_set_required_restrictions (SandboxCodingTools   *self,
                                                                     const char * const   *restrictions);

SANDBOX_AVAILABLE_IN_ALL
char                *sandbox_coding_tools_get_definitions_json (SandboxCodingTools   *self);
SANDBOX_AVAILABLE_IN_ALL
char                *sandbox_coding_tools_get_definitions_json_full (SandboxCodingTools          *self,
                                                                     SandboxCodingDefinitionShape shape);
SANDBOX_AVAILABLE_IN_ALL
char                *sandbox_coding_tools_invoke               (SandboxCodingTools   *self,
                                                                const char           *name,
                                                                const char           *arguments_json,
                                                                GCancellable         *cancellable,
                                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_coding_tools_invoke_async         (SandboxCodingTools   *self,
                                                                const char           *name,
                                                                const char           *arguments_json,
                                                                GCancellable         *cancellable,
                                                                GAsyncReadyCallback   callback,
                                                                gpointer              user_data);
SANDBOX_AVAILABLE_IN_ALL
char                *sandbox_coding_tools_invoke_finish        (SandboxCodingTools   *self,
                                                                GAsyncResult         *result,
                                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
GBytes              *sandbox_coding_tools_get_artifact         (SandboxCodingTools   *self,
                                                                const char           *artifact_id,
                                                                GBytes              **stderr_bytes);

SANDBOX_AVAILABLE_IN_ALL
char                *sandbox_coding_tools_probe                (SandboxCodingTools   *self,
                                                                char               ***restrictions,
                                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean             sandbox_coding_tools_probe_runtime        (SandboxCodingTools   *self,
                                                                char                **runtime_key,
                                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
char                *sandbox_coding_tools_probe_full           (SandboxCodingTools   *self,
                                                                char               ***restrictions,
                                                                const char          **workspace_layering,
                                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
GVariant            *sandbox_coding_tools_probe_report         (SandboxCodingTools   *self,
                                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxCodingLaunch *sandbox_coding_tools_prepare              (SandboxCodingTools   *self,
                                                                SandboxCommand       *command,
                                                                const char * const   *required,
                                                                GError              **error);

G_END_DECLS
