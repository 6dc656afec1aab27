/* sandbox-idle-clock.c — when a session was last asked for something
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-idle-clock-private.h"

struct _SandboxIdleClock
{
  GMutex lock;
  gint64 last_us;   /* monotonic; guarded by @lock (no 64-bit atomics in GLib 2.74) */
};

static void
sandbox_idle_clock_clear (gpointer data)
{
  SandboxIdleClock *self = data;

  g_mutex_clear (&self->lock);
}

/* Returns: (transfer full): a clock whose last call is now */
SandboxIdleClock *
sandbox_idle_clock_new (void)
{
  SandboxIdleClock *self = g_atomic_rc_box_new0 (SandboxIdleClock);

  g_mutex_init (&self->lock);
  self->last_us = g_get_monotonic_time ();
  return self;
}

SandboxIdleClock *
sandbox_idle_clock_ref (SandboxIdleClock *self)
{
  return g_atomic_rc_box_acquire (self);
}

void
sandbox_idle_clock_unref (SandboxIdleClock *self)
{
  g_atomic_rc_box_release_full (self, sandbox_idle_clock_clear);
}

/* A call came now. @self may be %NULL (a command that is not a background one). */
void
sandbox_idle_clock_note (SandboxIdleClock *self)
{
  gint64 now = g_get_monotonic_time ();

  if (self == NULL)
    return;
  g_mutex_lock (&self->lock);
  self->last_us = MAX (self->last_us, now);
  g_mutex_unlock (&self->lock);
}

/* Returns: the monotonic time (g_get_monotonic_time()) of the last call */
gint64
sandbox_idle_clock_get_last (SandboxIdleClock *self)
{
  gint64 last;

  g_mutex_lock (&self->lock);
  last = self->last_us;
  g_mutex_unlock (&self->lock);
  return last;
}
