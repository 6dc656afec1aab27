/* sandbox-session-idle.c — a session's idle clock, and the timeout that ends its background commands
 *
 * Every call of the session's owner notes the time on the session's idle
 * clock (sandbox_session_driver_for_call() for the session's operations;
 * a background command's own calls note it through the clock it holds).
 * With SandboxBackendBase:background-idle-timeout-ms set, a session that
 * has background commands is watched by a timer on the core's worker
 * thread: when the timeout has passed since the last call, the watcher's
 * function ends them (sandbox-session-background.c), and the timer goes
 * until the next background command starts. Nothing here holds the
 * session: the timer finds it through a weak reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-session-private.h"
#include "sandbox-worker-private.h"

typedef struct
{
  SandboxIdleClock *clock;
  GMutex lock;
  /* Guarded by @lock. */
  guint timeout_ms;             /* 0: never */
  GSource *timer;               /* (owned) (nullable): armed */
  SandboxSessionIdleFunc on_idle;
} SessionIdle;

static void
session_idle_free (gpointer data)
{
  SessionIdle *idle = data;

  if (idle->timer != NULL)
    {
      g_source_destroy (idle->timer);
      g_source_unref (idle->timer);
    }
  sandbox_idle_clock_unref (idle->clock);
  g_mutex_clear (&idle->lock);
  g_free (idle);
}

#define IDLE_KEY "sandbox-session-idle"

/* Made the first time it is asked for, and freed with the session. */
static SessionIdle *
get_session_idle (SandboxSession *self)
{
  static GMutex making;
  SessionIdle *idle;

  g_mutex_lock (&making);
  idle = g_object_get_data (G_OBJECT (self), IDLE_KEY);
  if (idle == NULL)
    {
      idle = g_new0 (SessionIdle, 1);
      idle->clock = sandbox_idle_clock_new ();
      g_mutex_init (&idle->lock);
      g_object_set_data_full (G_OBJECT (self), IDLE_KEY, idle, session_idle_free);
    }
  g_mutex_unlock (&making);
  return idle;
}

/* Returns: (transfer none): the session's idle clock */
SandboxIdleClock *
sandbox_session_get_idle_clock (SandboxSession *self)
{
  return get_session_idle (self)->clock;
}

/* Returns: (transfer none): the session's driver, for a call of the
 * session's owner, which counts as activity */
SandboxDriver *
sandbox_session_driver_for_call (SandboxSession *self)
{
  sandbox_idle_clock_note (get_session_idle (self)->clock);
  return sandbox_session_get_driver (self);
}

/* Set by SandboxBackendBase on every session it opens. */
void
sandbox_session_set_idle_timeout_ms (SandboxSession *self,
                                     guint           timeout_ms)
{
  SessionIdle *idle = get_session_idle (self);

  g_mutex_lock (&idle->lock);
  idle->timeout_ms = timeout_ms;
  g_mutex_unlock (&idle->lock);
}

static void arm_locked (SessionIdle *idle, GWeakRef *session, gint64 ready_us);

static void
weak_ref_free (gpointer data)
{
  GWeakRef *session = data;

  g_weak_ref_clear (session);
  g_free (session);
}

/* Worker thread: the timeout may have passed since the last call. */
static gboolean
timer_cb (gpointer data)
{
  g_autoptr(SandboxSession) session = g_weak_ref_get (data);
  SessionIdle *idle;
  SandboxSessionIdleFunc on_idle = NULL;
  guint timeout_ms;
  gint64 due;

  if (session == NULL)
    return G_SOURCE_REMOVE;
  idle = get_session_idle (session);
  g_mutex_lock (&idle->lock);
  timeout_ms = idle->timeout_ms;
  due = sandbox_idle_clock_get_last (idle->clock) + (gint64) timeout_ms * 1000;
  g_clear_pointer (&idle->timer, g_source_unref);
  if (timeout_ms > 0 && g_get_monotonic_time () < due)
    arm_locked (idle, data, due);       /* a call came since: wait for its timeout */
  else if (timeout_ms > 0)
    on_idle = idle->on_idle;
  g_mutex_unlock (&idle->lock);

  if (on_idle != NULL)
    on_idle (session, timeout_ms);
  return G_SOURCE_REMOVE;
}

/* A timer on the worker thread, at monotonic time @ready_us. */
static void
arm_locked (SessionIdle *idle,
            GWeakRef    *session,
            gint64       ready_us)
{
  GWeakRef *again = g_new0 (GWeakRef, 1);
  g_autoptr(SandboxSession) strong = g_weak_ref_get (session);
  gint64 wait_us = MAX (ready_us - g_get_monotonic_time (), 0);

  g_weak_ref_init (again, strong);
  idle->timer = g_timeout_source_new ((guint) MIN ((wait_us + 999) / 1000, G_MAXUINT));
  g_source_set_callback (idle->timer, timer_cb, again, weak_ref_free);
  g_source_set_static_name (idle->timer, "[sandbox] session idle timeout");
  sandbox_worker_attach (idle->timer);
}

/*
 * sandbox_session_watch_idle:
 * @self: a session that has just started a background command
 * @on_idle: called on the worker thread when the session's idle timeout
 *   has passed since its last call
 *
 * Arms the session's idle timer, unless it has no idle timeout or the
 * timer is armed already. It calls @on_idle at most once, and is armed
 * again by the next call of this.
 */
void
sandbox_session_watch_idle (SandboxSession         *self,
                            SandboxSessionIdleFunc  on_idle)
{
  SessionIdle *idle = get_session_idle (self);
  GWeakRef session;

  g_weak_ref_init (&session, self);
  g_mutex_lock (&idle->lock);
  idle->on_idle = on_idle;
  if (idle->timeout_ms > 0 && idle->timer == NULL)
    arm_locked (idle, &session,
                sandbox_idle_clock_get_last (idle->clock) + (gint64) idle->timeout_ms * 1000);
  g_mutex_unlock (&idle->lock);
  g_weak_ref_clear (&session);
}
