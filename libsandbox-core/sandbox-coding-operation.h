/* sandbox-coding-operation.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"

G_BEGIN_DECLS

/**
 * SandboxCodingOperationKind:
 * @SANDBOX_CODING_OPERATION_READ: reading a file (`read_file`), or searching files
 *   (`search_files`)
 * @SANDBOX_CODING_OPERATION_WRITE: writing a file (`write_file`)
 * @SANDBOX_CODING_OPERATION_EDIT: editing a file in place (`edit_file`)
 * @SANDBOX_CODING_OPERATION_LIST: listing a directory (`list_files`)
 * @SANDBOX_CODING_OPERATION_EXECUTE: running a shell command (`shell`), or starting,
 *   typing into, listing and killing background ones (`exec_command`, `write_stdin`,
 *   `list_commands`, `kill_command`)
 *
 * What a coding tool is about to do, as given to
 * [signal@Sandbox.CodingTools::authorize].
 */
typedef enum
{
  SANDBOX_CODING_OPERATION_READ,
  SANDBOX_CODING_OPERATION_WRITE,
  SANDBOX_CODING_OPERATION_EDIT,
  SANDBOX_CODING_OPERATION_LIST,
  SANDBOX_CODING_OPERATION_EXECUTE,
} SandboxCodingOperationKind;

#define SANDBOX_TYPE_CODING_OPERATION (sandbox_coding_operation_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxCodingOperation, sandbox_coding_operation,
                      SANDBOX, CODING_OPERATION, GObject)

SANDBOX_AVAILABLE_IN_ALL
const char                 *sandbox_coding_operation_get_tool    (SandboxCodingOperation *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxCodingOperationKind  sandbox_coding_operation_get_kind    (SandboxCodingOperation *self);
SANDBOX_AVAILABLE_IN_ALL
const char                 *sandbox_coding_operation_get_path    (SandboxCodingOperation *self);
SANDBOX_AVAILABLE_IN_ALL
const char                 *sandbox_coding_operation_get_command (SandboxCodingOperation *self);

G_END_DECLS
