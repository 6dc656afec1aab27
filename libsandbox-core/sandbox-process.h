/* sandbox-process.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-result.h"

G_BEGIN_DECLS

/**
 * SandboxOutputStream:
 * @SANDBOX_OUTPUT_STDOUT: the command's standard output
 * @SANDBOX_OUTPUT_STDERR: the command's standard error
 *
 * Which output stream a chunk of command output came from.
 */
typedef enum
{
  SANDBOX_OUTPUT_STDOUT,
  SANDBOX_OUTPUT_STDERR,
} SandboxOutputStream;

#define SANDBOX_TYPE_PROCESS (sandbox_process_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (SandboxProcess, sandbox_process, SANDBOX, PROCESS, GObject)

/**
 * SandboxProcessClass:
 * @parent_class: the parent class
 * @kill: kills the command and everything it started, at once (SIGKILL or the
 *   driver's equivalent). Called at most once, from any thread, with no lock
 *   held; it must not block. The driver still calls [method@Sandbox.Process.complete]
 *   once the command's whole process tree is gone and its output is drained.
 * @stdout_data: class closure of [signal@Sandbox.Process::stdout-data]
 * @stderr_data: class closure of [signal@Sandbox.Process::stderr-data]
 *
 * The class a driver subclasses to report a running command. The base class
 * owns the command's limits: the deadline, the combined output cap,
 * cancellation and the final result. A driver only feeds it output and, at the
 * end, the exit status.
 */
struct _SandboxProcessClass
{
  GObjectClass parent_class;

  void (*kill)        (SandboxProcess *self);

  void (*stdout_data) (SandboxProcess *self,
                       GBytes         *data);
  void (*stderr_data) (SandboxProcess *self,
                       GBytes         *data);

  gboolean (*send_signal)     (SandboxProcess  *self,
                               int              signum,
                               GError         **error);
  void     (*resize_terminal) (SandboxProcess  *self,
                               guint            rows,
                               guint            columns);

  /*< private >*/
  gpointer _padding[10];
};

/* For consumers */
SANDBOX_AVAILABLE_IN_ALL
void           sandbox_process_wait_async      (SandboxProcess       *self,
                                                GCancellable         *cancellable,
                                                GAsyncReadyCallback   callback,
                                                gpointer              user_data);
SANDBOX_AVAILABLE_IN_ALL
SandboxResult *sandbox_process_wait_finish     (SandboxProcess       *self,
                                                GAsyncResult         *result,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxResult *sandbox_process_wait            (SandboxProcess       *self,
                                                GCancellable         *cancellable,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
void           sandbox_process_stop_async      (SandboxProcess       *self,
                                                GCancellable         *cancellable,
                                                GAsyncReadyCallback   callback,
                                                gpointer              user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean       sandbox_process_stop_finish     (SandboxProcess       *self,
                                                GAsyncResult         *result,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean       sandbox_process_stop            (SandboxProcess       *self,
                                                GCancellable         *cancellable,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean       sandbox_process_is_finished     (SandboxProcess       *self);
SANDBOX_AVAILABLE_IN_ALL
guint          sandbox_process_get_timeout_ms  (SandboxProcess       *self);
SANDBOX_AVAILABLE_IN_ALL
gsize          sandbox_process_get_max_output_bytes (SandboxProcess  *self);
SANDBOX_AVAILABLE_IN_ALL
GOutputStream *sandbox_process_get_stdin_stream (SandboxProcess      *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean       sandbox_process_send_signal     (SandboxProcess       *self,
                                                int                   signum,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean       sandbox_process_has_terminal    (SandboxProcess       *self);
SANDBOX_AVAILABLE_IN_ALL
const char    *sandbox_process_get_background_id (SandboxProcess     *self);
SANDBOX_AVAILABLE_IN_ALL
const char * const *sandbox_process_get_argv   (SandboxProcess       *self);
SANDBOX_AVAILABLE_IN_ALL
GDateTime     *sandbox_process_get_start_time  (SandboxProcess       *self);
SANDBOX_AVAILABLE_IN_ALL
GBytes        *sandbox_process_read_output     (SandboxProcess       *self,
                                                guint64               from,
                                                guint64              *next,
                                                guint64              *skipped);
SANDBOX_AVAILABLE_IN_ALL
gboolean       sandbox_process_resize_terminal (SandboxProcess       *self,
                                                guint                 rows,
                                                guint                 columns,
                                                GError              **error);

/* For drivers: all of these are thread-safe. */
SANDBOX_AVAILABLE_IN_ALL
void           sandbox_process_start           (SandboxProcess       *self,
                                                GCancellable         *cancellable);
SANDBOX_AVAILABLE_IN_ALL
gboolean       sandbox_process_push_output     (SandboxProcess       *self,
                                                SandboxOutputStream   stream,
                                                const guint8         *data,
                                                gsize                 length);
SANDBOX_AVAILABLE_IN_ALL
void           sandbox_process_abort           (SandboxProcess       *self,
                                                GError               *error);
SANDBOX_AVAILABLE_IN_ALL
void           sandbox_process_complete        (SandboxProcess       *self,
                                                int                   exit_status);
SANDBOX_AVAILABLE_IN_ALL
void           sandbox_process_complete_exec_failure (SandboxProcess *self,
                                                      int             exec_errno);
SANDBOX_AVAILABLE_IN_ALL
int            sandbox_process_open_stdin_stream (SandboxProcess     *self,
                                                  GError            **error);
SANDBOX_AVAILABLE_IN_ALL
int            sandbox_process_open_terminal   (SandboxProcess       *self,
                                                GError              **error);

G_END_DECLS
