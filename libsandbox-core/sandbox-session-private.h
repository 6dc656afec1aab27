/* sandbox-session-private.h — what the session's files share
 *
 * SandboxSession is one class in seven files: the object
 * (sandbox-session.c), the workspace file operations
 * (sandbox-session-files.c), commands (sandbox-session-commands.c),
 * background commands (sandbox-session-background.c), the network
 * policy (sandbox-session-policy.c), exposed ports
 * (sandbox-session-ports.c) and the idle clock (sandbox-session-idle.c).
 * Their async forms start and finish their tasks the same way, here.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-idle-clock-private.h"
#include "sandbox-session.h"
#include "sandbox-task-private.h"

G_BEGIN_DECLS

/* A task whose source object is @self, tagged and named for its operation. */
GTask *sandbox_session_task_new (SandboxSession      *self,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data,
                                 gpointer             source_tag,
                                 const char          *name);

/* Forwards a driver's boolean answer to the session task in @user_data,
 * whose task data is the driver's `_finish` function. */
void sandbox_session_return_boolean_cb (GObject      *object,
                                        GAsyncResult *result,
                                        gpointer      user_data);

/* sandbox-session-background.c: the session's background commands. */
typedef struct _SandboxBackgroundSet SandboxBackgroundSet;

GPtrArray            *sandbox_background_set_running  (SandboxBackgroundSet *self);
SandboxBackgroundSet *sandbox_session_get_background_set (SandboxSession    *self);
SandboxCommand       *sandbox_session_detach_command  (SandboxSession       *self,
                                                       SandboxCommand       *command,
                                                       gsize                *capacity,
                                                       GError              **error);
void                  sandbox_session_set_max_background_timeout_ms (SandboxSession *self,
                                                                     guint           max_ms);
char                 *sandbox_session_adopt_background (SandboxSession      *self,
                                                        SandboxProcess      *process,
                                                        SandboxCommand      *command,
                                                        gsize                capacity);

/* sandbox-session-idle.c: the idle clock, and its timeout. */
typedef void (*SandboxSessionIdleFunc) (SandboxSession *self,
                                        guint           timeout_ms);

SandboxIdleClock *sandbox_session_get_idle_clock      (SandboxSession         *self);
SandboxDriver    *sandbox_session_driver_for_call     (SandboxSession         *self);
void              sandbox_session_set_idle_timeout_ms (SandboxSession         *self,
                                                       guint                   timeout_ms);
void              sandbox_session_watch_idle          (SandboxSession         *self,
                                                       SandboxSessionIdleFunc  on_idle);

G_END_DECLS
