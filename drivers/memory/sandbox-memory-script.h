/* sandbox-memory-script.h — the declared answers of scripted commands
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-memory-private.h"

G_BEGIN_DECLS

/**
 * SandboxMemoryFault:
 * @SANDBOX_MEMORY_FAULT_NONE: the command runs its script and exits
 * @SANDBOX_MEMORY_FAULT_SPAWN_FAILURE: the command cannot start
 * @SANDBOX_MEMORY_FAULT_NEVER_ENDS: the command never exits on its own
 * @SANDBOX_MEMORY_FAULT_OUTPUT_FLOOD: the command writes to stdout until it
 *   is killed
 *
 * Failures a scripted command can simulate.
 */
typedef enum
{
  SANDBOX_MEMORY_FAULT_NONE,
  SANDBOX_MEMORY_FAULT_SPAWN_FAILURE,
  SANDBOX_MEMORY_FAULT_NEVER_ENDS,
  SANDBOX_MEMORY_FAULT_OUTPUT_FLOOD,
} SandboxMemoryFault;

/**
 * SandboxMemoryChunk:
 * @stream: where the chunk goes
 * @data: the chunk's bytes
 * @delay_ms: how long after the previous output the chunk is written
 *
 * One piece of output a scripted command writes over time.
 */
typedef struct
{
  SandboxOutputStream  stream;
  GBytes              *data;
  guint                delay_ms;
} SandboxMemoryChunk;

/**
 * SandboxMemoryWrite:
 * @relative: the workspace-relative path of the file
 * @contents: what the file holds afterwards, or %NULL for a link
 * @target: (nullable): the symbolic link's target, for a link
 *
 * A workspace file (or symbolic link) a scripted command writes when it
 * starts.
 */
typedef struct
{
  char   *relative;
  GBytes *contents;
  char   *target;
} SandboxMemoryWrite;

/**
 * SandboxMemoryRule:
 * @executable: the executable a command must have, or %NULL for the default
 * @args: (nullable): the exact arguments a command must have, or %NULL to
 *   match any arguments
 * @exit_status: the exit status the command ends with
 * @stdout_bytes: (nullable): what the command writes to stdout at once
 * @stderr_bytes: (nullable): what the command writes to stderr at once
 * @stdout_from_stdin: whether the command first copies its stdin to stdout
 * @stdout_from_file_arg: whether the command copies the workspace file named
 *   by its first argument to stdout
 * @unscripted: whether this is the built-in answer to a command the script
 *   does not mention (it names the executable on stderr)
 * @writes: (element-type SandboxMemoryWrite): files written at start
 * @chunks: (element-type SandboxMemoryChunk): output written over time
 * @delay_ms: how long after its last output the command exits
 * @fault: the failure the command simulates
 *
 * How the memory driver answers the commands that match one script entry.
 * Rules are immutable once parsed.
 */
typedef struct
{
  char                *executable;
  char               **args;
  int                  exit_status;
  GBytes              *stdout_bytes;
  GBytes              *stderr_bytes;
  gboolean             stdout_from_stdin;
  gboolean             stdout_from_file_arg;
  gboolean             unscripted;
  GPtrArray           *writes;
  GPtrArray           *chunks;
  guint                delay_ms;
  SandboxMemoryFault   fault;
} SandboxMemoryRule;

typedef struct _SandboxMemoryScript SandboxMemoryScript;

SandboxMemoryScript     *sandbox_memory_script_new    (const char           *json,
                                                       const char           *path,
                                                       GError              **error);
SandboxMemoryScript     *sandbox_memory_script_ref    (SandboxMemoryScript  *self);
void                     sandbox_memory_script_unref  (SandboxMemoryScript  *self);
const SandboxMemoryRule *sandbox_memory_script_lookup (SandboxMemoryScript  *self,
                                                       const char           *executable,
                                                       const char * const   *args);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxMemoryScript, sandbox_memory_script_unref)

G_END_DECLS
