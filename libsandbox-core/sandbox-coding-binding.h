/* sandbox-coding-binding.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-command.h"
#include "sandbox-process.h"

G_BEGIN_DECLS

/**
 * SANDBOX_RESTRICTION_NETWORK_DENIED:
 *
 * The restriction a session offers only under a deny-all network policy.
 */
#define SANDBOX_RESTRICTION_NETWORK_DENIED "network-denied"
/**
 * SANDBOX_RESTRICTION_WRITE_CONTAINED:
 *
 * Writes stay inside the workspace.
 */
#define SANDBOX_RESTRICTION_WRITE_CONTAINED "write-contained"
/**
 * SANDBOX_RESTRICTION_PROCESS_CONTAINED:
 *
 * Processes run in their own namespaces and die with the session.
 */
#define SANDBOX_RESTRICTION_PROCESS_CONTAINED "process-contained"
/**
 * SANDBOX_RESTRICTION_SECRETS_HIDDEN:
 *
 * Host files, environment and credentials are not visible to the guest.
 */
#define SANDBOX_RESTRICTION_SECRETS_HIDDEN "secrets-hidden"
/**
 * SANDBOX_RESTRICTION_SYSCALLS_FILTERED:
 *
 * Commands run under a seccomp filter (beyond the reference's
 * restrictions; offered by backends that filter system calls).
 */
#define SANDBOX_RESTRICTION_SYSCALLS_FILTERED "syscalls-filtered"

/**
 * SANDBOX_WORKSPACE_LAYERING_OVERLAY:
 *
 * The session's workspace is an overlay: the template's data below, the
 * session's own files above; create copied nothing.
 */
#define SANDBOX_WORKSPACE_LAYERING_OVERLAY "overlay"

/**
 * SANDBOX_WORKSPACE_LAYERING_COPY:
 *
 * The session's workspace is its own copy of the template (the fallback
 * where the kernel or the state directory's filesystem refuses overlays).
 */
#define SANDBOX_WORKSPACE_LAYERING_COPY "copy"

#define SANDBOX_TYPE_CODING_BINDING (sandbox_coding_binding_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (SandboxCodingBinding, sandbox_coding_binding, SANDBOX, CODING_BINDING, GObject)

/**
 * SandboxCodingBindingInterface:
 * @parent_iface: the parent interface
 * @check_active: fails with %SANDBOX_ERROR_STOPPED once the session is
 *   stopped. Thread-safe, never blocks.
 * @get_restrictions: returns the restrictions the session currently
 *   guarantees and, atomically with them, the policy revision they belong
 *   to. Thread-safe, never blocks.
 * @list_directory: lists a directory of the workspace without leaving it
 *   (symbolic links are reported, never followed out), at most @max_entries
 *   entries, as a `a(sst)` #GVariant of (name, type, size) where type is
 *   one of "file", "directory", "symlink" or "other". Blocking, thread-safe.
 * @spawn: starts @command inside the sandbox, counted against the same
 *   admission limit as the session's direct commands, or fails with
 *   %SANDBOX_ERROR_BUSY "Sandbox policy changed after command preparation"
 *   when the policy revision is no longer @revision. The revision check and
 *   the admission must be atomic with respect to policy changes. Must not
 *   block.
 * @get_workspace_layering: how the session's workspace is made:
 *   %SANDBOX_WORKSPACE_LAYERING_OVERLAY or %SANDBOX_WORKSPACE_LAYERING_COPY.
 *   Optional: a binding without it reports %SANDBOX_WORKSPACE_LAYERING_COPY.
 *   Thread-safe, never blocks.
 * @get_landlock_abi: the Landlock ABI the session's sandboxes are scoped
 *   with, 0 for none. Optional: a binding without it reports 0.
 *   Thread-safe, never blocks.
 * @get_runtime: the key of the runtime the session's commands run on
 *   ([method@Sandbox.Template.set_runtime]), %NULL for the host's.
 *   Optional: a binding without it reports %NULL. Thread-safe, never blocks.
 *
 * The host-only binding a backend's live session offers to
 * [class@Sandbox.CodingTools]. It is never serialized and never reaches a model.
 */
struct _SandboxCodingBindingInterface
{
  GTypeInterface parent_iface;

  gboolean        (*check_active)     (SandboxCodingBinding  *self,
                                       GError               **error);
  char          **(*get_restrictions) (SandboxCodingBinding  *self,
                                       guint64               *revision);
  GVariant       *(*list_directory)   (SandboxCodingBinding  *self,
                                       const char            *path,
                                       guint                  max_entries,
                                       gboolean              *truncated,
                                       GCancellable          *cancellable,
                                       GError               **error);
  SandboxProcess *(*spawn)            (SandboxCodingBinding  *self,
                                       SandboxCommand        *command,
                                       guint64                revision,
                                       GCancellable          *cancellable,
                                       GError               **error);
  const char     *(*get_workspace_layering) (SandboxCodingBinding *self);
  guint           (*get_landlock_abi) (SandboxCodingBinding  *self);
  const char     *(*get_runtime)      (SandboxCodingBinding  *self);

  /*< private >*/
  gpointer _padding[5];
};

SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_coding_binding_check_active     (SandboxCodingBinding  *self,
                                                         GError               **error);
SANDBOX_AVAILABLE_IN_ALL
char          **sandbox_coding_binding_get_restrictions (SandboxCodingBinding  *self,
                                                         guint64               *revision);
SANDBOX_AVAILABLE_IN_ALL
GVariant       *sandbox_coding_binding_list_directory   (SandboxCodingBinding  *self,
                                                         const char            *path,
                                                         guint                  max_entries,
                                                         gboolean              *truncated,
                                                         GCancellable          *cancellable,
                                                         GError               **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxProcess *sandbox_coding_binding_spawn            (SandboxCodingBinding  *self,
                                                         SandboxCommand        *command,
                                                         guint64                revision,
                                                         GCancellable          *cancellable,
                                                         GError               **error);
SANDBOX_AVAILABLE_IN_ALL
const char     *sandbox_coding_binding_get_workspace_layering (SandboxCodingBinding *self);
SANDBOX_AVAILABLE_IN_ALL
guint           sandbox_coding_binding_get_landlock_abi (SandboxCodingBinding  *self);
SANDBOX_AVAILABLE_IN_ALL
const char     *sandbox_coding_binding_get_runtime      (SandboxCodingBinding  *self);

G_END_DECLS
