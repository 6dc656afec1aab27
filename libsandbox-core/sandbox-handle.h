/* sandbox-handle.h
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
#include "sandbox-gateway-event.h"
#include "sandbox-session.h"
#include "sandbox-state.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_HANDLE (sandbox_handle_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_DERIVABLE_TYPE (SandboxHandle, sandbox_handle, SANDBOX, HANDLE, GObject)

/**
 * SandboxHandleClass:
 * @parent_class: the parent class
 * @stop: kills live commands, closes the gateway and releases the lease; the
 *   workspace stays. Called at most once per handle (the base class makes
 *   stop idempotent); blocking and thread-safe.
 * @delete_session: removes the session's state and workspace, keeping
 *   templates. Called after @stop has completed; returns %SANDBOX_ERROR_BUSY
 *   when another owner attached meanwhile. Blocking and thread-safe.
 * @get_coding_binding: returns the session's host-only coding binding, or
 *   %NULL (the default) for a backend without one.
 * @checkpoint: saves the live session's workspace so that a resume after
 *   this host crashes starts from it at least, and keeps the session and
 *   its commands running. Called only while the handle is live, never at
 *   the same time as @stop or another @checkpoint. %NULL (the default) for
 *   a backend without checkpoints. Blocking and thread-safe.
 * @snapshot: freezes the live session's workspace as an immutable
 *   snapshot and returns its key, a template key. Called only while the
 *   handle is live, never at the same time as @stop, @checkpoint, @restore
 *   or another @snapshot. %NULL (the default) for a backend without
 *   snapshots: %G_IO_ERROR_NOT_SUPPORTED. Blocking and thread-safe.
 * @restore: resets the live session's workspace to one of its snapshots
 *   (or its template), keeping its id. Called as @snapshot is. %NULL (the
 *   default) for a backend without it: %G_IO_ERROR_NOT_SUPPORTED. Blocking
 *   and thread-safe.
 *
 * The class a backend subclasses for its live sessions. The base class keeps
 * the session and state, makes stop idempotent and ordered before delete,
 * refuses capture_state() after delete, keeps checkpoints away from a stopped
 * handle and from a stop in progress, provides the async forms (running the
 * blocking vfuncs in a thread) and stops the session when the last reference
 * is dropped.
 */
struct _SandboxHandleClass
{
  GObjectClass parent_class;

  gboolean (*stop)           (SandboxHandle  *self,
                              GCancellable   *cancellable,
                              GError        **error);
  gboolean (*delete_session) (SandboxHandle  *self,
                              GCancellable   *cancellable,
                              GError        **error);
  SandboxCodingBinding *(*get_coding_binding) (SandboxHandle *self);
  gboolean (*checkpoint)     (SandboxHandle  *self,
                              GCancellable   *cancellable,
                              GError        **error);
  char    *(*snapshot)       (SandboxHandle  *self,
                              GCancellable   *cancellable,
                              GError        **error);
  gboolean (*restore)        (SandboxHandle  *self,
                              const char     *key,
                              GCancellable   *cancellable,
                              GError        **error);

  /*< private >*/
  gpointer _padding[8];
};

SANDBOX_AVAILABLE_IN_ALL
SandboxSession *sandbox_handle_get_session     (SandboxHandle        *self);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_handle_emit_gateway_audit (SandboxHandle       *self,
                                                   SandboxGatewayEvent *event);
SANDBOX_AVAILABLE_IN_ALL
SandboxState   *sandbox_handle_capture_state   (SandboxHandle        *self,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_handle_set_state       (SandboxHandle        *self,
                                                SandboxState         *state);
SANDBOX_AVAILABLE_IN_ALL
SandboxCodingBinding *sandbox_handle_get_coding_binding (SandboxHandle *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_is_stopped      (SandboxHandle        *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_is_deleted      (SandboxHandle        *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_stop            (SandboxHandle        *self,
                                                GCancellable         *cancellable,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_handle_stop_async      (SandboxHandle        *self,
                                                GCancellable         *cancellable,
                                                GAsyncReadyCallback   callback,
                                                gpointer              user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_stop_finish     (SandboxHandle        *self,
                                                GAsyncResult         *result,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_shutdown        (SandboxHandle        *self,
                                                GCancellable         *cancellable,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_handle_shutdown_async  (SandboxHandle        *self,
                                                GCancellable         *cancellable,
                                                GAsyncReadyCallback   callback,
                                                gpointer              user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_shutdown_finish (SandboxHandle        *self,
                                                GAsyncResult         *result,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_checkpoint      (SandboxHandle        *self,
                                                GCancellable         *cancellable,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_handle_checkpoint_async (SandboxHandle       *self,
                                                 GCancellable        *cancellable,
                                                 GAsyncReadyCallback  callback,
                                                 gpointer             user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_checkpoint_finish (SandboxHandle      *self,
                                                  GAsyncResult       *result,
                                                  GError            **error);
SANDBOX_AVAILABLE_IN_ALL
char           *sandbox_handle_snapshot        (SandboxHandle        *self,
                                                GCancellable         *cancellable,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_handle_snapshot_async  (SandboxHandle        *self,
                                                GCancellable         *cancellable,
                                                GAsyncReadyCallback   callback,
                                                gpointer              user_data);
SANDBOX_AVAILABLE_IN_ALL
char           *sandbox_handle_snapshot_finish (SandboxHandle        *self,
                                                GAsyncResult         *result,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_restore         (SandboxHandle        *self,
                                                const char           *key,
                                                GCancellable         *cancellable,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_handle_restore_async   (SandboxHandle        *self,
                                                const char           *key,
                                                GCancellable         *cancellable,
                                                GAsyncReadyCallback   callback,
                                                gpointer              user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_restore_finish  (SandboxHandle        *self,
                                                GAsyncResult         *result,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_delete          (SandboxHandle        *self,
                                                GCancellable         *cancellable,
                                                GError              **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_handle_delete_async    (SandboxHandle        *self,
                                                GCancellable         *cancellable,
                                                GAsyncReadyCallback   callback,
                                                gpointer              user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_handle_delete_finish   (SandboxHandle        *self,
                                                GAsyncResult         *result,
                                                GError              **error);

G_END_DECLS
