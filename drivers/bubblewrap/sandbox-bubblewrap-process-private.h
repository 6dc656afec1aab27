/* sandbox-bubblewrap-process-private.h — a command running under bwrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "sandbox-bubblewrap-args-private.h"
#include "sandbox-bubblewrap-ready-private.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_BUBBLEWRAP_PROCESS (sandbox_bubblewrap_process_get_type ())
G_DECLARE_FINAL_TYPE (SandboxBubblewrapProcess, sandbox_bubblewrap_process,
                      SANDBOX, BUBBLEWRAP_PROCESS, SandboxProcess)

/**
 * SandboxBubblewrapProcessExitedFunc:
 * @process: a process whose sandbox is gone
 * @owner: the owner @process was created with
 *
 * Called once, on the launcher thread, when the command's sandbox has
 * ended — bwrap reaped, which the kernel does only once every other
 * process of its pid namespace is gone, or the stub's report that it
 * reaped them all itself; both pipes at EOF and the status pipe read and
 * closed — and before the process completes: the command
 * still holds its admission slot, so its session's policy cannot change
 * and its stop cannot return meanwhile.
 */
typedef void (*SandboxBubblewrapProcessExitedFunc) (SandboxBubblewrapProcess *process,
                                                    GObject                  *owner);

/**
 * SandboxBubblewrapTrees:
 *
 * How many of a session's sandboxes are launched and not reaped yet. A
 * command may complete before its sandbox is reaped (the stub reported it
 * empty); a session that stops waits for the rest with
 * sandbox_bubblewrap_trees_wait(). Thread-safe, reference-counted.
 */
typedef struct _SandboxBubblewrapTrees SandboxBubblewrapTrees;

SandboxBubblewrapTrees *sandbox_bubblewrap_trees_new   (void);
SandboxBubblewrapTrees *sandbox_bubblewrap_trees_ref   (SandboxBubblewrapTrees *trees);
void                    sandbox_bubblewrap_trees_unref (SandboxBubblewrapTrees *trees);
void                    sandbox_bubblewrap_trees_wait  (SandboxBubblewrapTrees *trees);
gboolean                sandbox_bubblewrap_trees_is_empty (SandboxBubblewrapTrees *trees);
void                    sandbox_bubblewrap_trees_enter (SandboxBubblewrapTrees *trees);
void                    sandbox_bubblewrap_trees_leave (SandboxBubblewrapTrees *trees);

SandboxBubblewrapProcess *sandbox_bubblewrap_process_new           (const SandboxBubblewrapArgsInput *input,
                                                                    GObject                   *owner,
                                                                    SandboxBubblewrapReady    *ready,
                                                                    guint64                    revision,
                                                                    GError                   **error);
void                      sandbox_bubblewrap_process_set_exited_func (SandboxBubblewrapProcess *self,
                                                                      SandboxBubblewrapProcessExitedFunc func);
void                      sandbox_bubblewrap_process_set_trees     (SandboxBubblewrapProcess *self,
                                                                    SandboxBubblewrapTrees   *trees);
gboolean                  sandbox_bubblewrap_process_launch        (SandboxBubblewrapProcess  *self,
                                                                    GError                   **error);
void                      sandbox_bubblewrap_process_mark_started  (SandboxBubblewrapProcess  *self);
void                      sandbox_bubblewrap_process_kill_tree     (SandboxBubblewrapProcess  *self);
gboolean                  sandbox_bubblewrap_process_was_isolated  (SandboxBubblewrapProcess  *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxBubblewrapTrees, sandbox_bubblewrap_trees_unref)

G_END_DECLS
