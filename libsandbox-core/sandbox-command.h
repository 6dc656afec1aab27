/* sandbox-command.h
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
 * SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS:
 *
 * The default deadline of a command, in milliseconds (30 s).
 */
#define SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS 30000

/**
 * SANDBOX_COMMAND_DEFAULT_BACKGROUND_TIMEOUT_MS:
 *
 * The deadline of a background command whose own is left at
 * %SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS, in milliseconds (one hour).
 */
#define SANDBOX_COMMAND_DEFAULT_BACKGROUND_TIMEOUT_MS 3600000

/**
 * SANDBOX_DEFAULT_MAX_BACKGROUND_TIMEOUT_MS:
 *
 * The longest deadline of a background command unless the backend says
 * otherwise, in milliseconds (a day).
 */
#define SANDBOX_DEFAULT_MAX_BACKGROUND_TIMEOUT_MS 86400000

/**
 * SANDBOX_COMMAND_MAX_TIMEOUT_MS:
 *
 * The largest deadline a command accepts, in milliseconds.
 */
#define SANDBOX_COMMAND_MAX_TIMEOUT_MS G_MAXINT32

/**
 * SANDBOX_COMMAND_DEFAULT_MAX_OUTPUT_BYTES:
 *
 * The default cap on a command's combined stdout and stderr (1 MiB).
 */
#define SANDBOX_COMMAND_DEFAULT_MAX_OUTPUT_BYTES 1048576

/**
 * SANDBOX_COMMAND_DEFAULT_TERMINAL_ROWS:
 *
 * A terminal's height when the command does not say (24 rows).
 */
#define SANDBOX_COMMAND_DEFAULT_TERMINAL_ROWS 24

/**
 * SANDBOX_COMMAND_DEFAULT_TERMINAL_COLUMNS:
 *
 * A terminal's width when the command does not say (80 columns).
 */
#define SANDBOX_COMMAND_DEFAULT_TERMINAL_COLUMNS 80

/**
 * SANDBOX_COMMAND_DEFAULT_TERMINAL_TYPE:
 *
 * A terminal's type when the command does not say: `xterm-256color`.
 */
#define SANDBOX_COMMAND_DEFAULT_TERMINAL_TYPE "xterm-256color"

#define SANDBOX_TYPE_COMMAND (sandbox_command_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxCommand, sandbox_command, SANDBOX, COMMAND, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxCommand      *sandbox_command_new                (const char            *executable);
SANDBOX_AVAILABLE_IN_ALL
SandboxCommand      *sandbox_command_new_from_json      (const char            *json,
                                                         GError               **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxCommand      *sandbox_command_copy               (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean             sandbox_command_validate           (SandboxCommand        *self,
                                                         GError               **error);
SANDBOX_AVAILABLE_IN_ALL
const char          *sandbox_command_get_executable     (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_set_executable     (SandboxCommand        *self,
                                                         const char            *executable);
SANDBOX_AVAILABLE_IN_ALL
const char * const  *sandbox_command_get_args           (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_set_args           (SandboxCommand        *self,
                                                         const char * const    *args);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_add_arg            (SandboxCommand        *self,
                                                         const char            *arg);
SANDBOX_AVAILABLE_IN_ALL
const char          *sandbox_command_get_cwd            (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_set_cwd            (SandboxCommand        *self,
                                                         const char            *cwd);
SANDBOX_AVAILABLE_IN_ALL
char               **sandbox_command_get_environment    (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_setenv             (SandboxCommand        *self,
                                                         const char            *key,
                                                         const char            *value);
SANDBOX_AVAILABLE_IN_ALL
const char          *sandbox_command_getenv             (SandboxCommand        *self,
                                                         const char            *key);
SANDBOX_AVAILABLE_IN_ALL
guint                sandbox_command_get_timeout_ms     (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_set_timeout_ms     (SandboxCommand        *self,
                                                         guint                  timeout_ms);
SANDBOX_AVAILABLE_IN_ALL
gsize                sandbox_command_get_max_output_bytes (SandboxCommand      *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_set_max_output_bytes (SandboxCommand      *self,
                                                         gsize                  max_output_bytes);
SANDBOX_AVAILABLE_IN_ALL
GBytes              *sandbox_command_get_stdin          (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_set_stdin          (SandboxCommand        *self,
                                                         GBytes                *stdin_bytes);
SANDBOX_AVAILABLE_IN_ALL
gboolean             sandbox_command_get_stdin_stream   (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_set_stdin_stream   (SandboxCommand        *self,
                                                         gboolean               stdin_stream);
SANDBOX_AVAILABLE_IN_ALL
gboolean             sandbox_command_get_terminal       (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_set_terminal       (SandboxCommand        *self,
                                                         gboolean               terminal);
SANDBOX_AVAILABLE_IN_ALL
guint                sandbox_command_get_terminal_rows  (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
guint                sandbox_command_get_terminal_columns (SandboxCommand      *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_set_terminal_size  (SandboxCommand        *self,
                                                         guint                  rows,
                                                         guint                  columns);
SANDBOX_AVAILABLE_IN_ALL
const char          *sandbox_command_get_terminal_type  (SandboxCommand        *self);
SANDBOX_AVAILABLE_IN_ALL
void                 sandbox_command_set_terminal_type  (SandboxCommand        *self,
                                                         const char            *terminal_type);

G_END_DECLS
