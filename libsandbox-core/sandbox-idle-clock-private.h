/* sandbox-idle-clock-private.h — when a session was last asked for something
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * SandboxIdleClock:
 *
 * The time of a session's last call, shared by the session and its
 * background commands (which may outlive it): a call on either sets it.
 * Reference-counted and thread-safe.
 */
typedef struct _SandboxIdleClock SandboxIdleClock;

SandboxIdleClock *sandbox_idle_clock_new       (void);
SandboxIdleClock *sandbox_idle_clock_ref       (SandboxIdleClock *self);
void              sandbox_idle_clock_unref     (SandboxIdleClock *self);
void              sandbox_idle_clock_note      (SandboxIdleClock *self);
gint64            sandbox_idle_clock_get_last  (SandboxIdleClock *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxIdleClock, sandbox_idle_clock_unref)

G_END_DECLS
