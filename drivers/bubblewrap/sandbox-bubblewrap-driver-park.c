/* sandbox-bubblewrap-driver-park.c — an idle session's helpers ended, and started again on use
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-bubblewrap-driver-fields-private.h"
#include "sandbox-bubblewrap-launcher-private.h"

/*
 * A live session that runs nothing still had processes: a layered
 * session's keeper (its overlay's one mount), the network keeper its
 * commands share, its ready sandbox. Once the backend's
 * idle-helpers-timeout-ms has passed since its last command or file call,
 * with no command (background ones included) live and every sandbox
 * reaped, they end: the session is *parked* and holds no process, no
 * mount and no descriptor on its overlay; an allow-list's gateway is
 * parked (no socket, no connection). The next command or file call
 * starts the keeper again over the same layers (the path a keeper that was
 * killed takes: sandbox_bubblewrap_driver_revive_keeper()), the next
 * command the network. Nothing of the workspace is lost: it is the upper
 * layer on disk.
 *
 * Every command and file call notes its time first (note_use()), so a
 * park decided after it cannot take the overlay from under it: the park
 * runs under @layers_lock's writer side and checks the time again there,
 * and a command is admitted only under the reader side. The timer fires
 * on the launcher thread, which must never wait (commands wait for it to
 * launch them): the park itself runs in a thread of GIO's pool, and a
 * session whose sandboxes are not all reaped yet, or whose lock is held,
 * is looked at again one timeout later.
 */

typedef struct
{
  GWeakRef driver;
} ParkTimer;

static void
park_timer_free (gpointer data)
{
  ParkTimer *timer = data;

  g_weak_ref_clear (&timer->driver);
  g_free (timer);
}

static gboolean park_cb (gpointer data);

/* Under @park_lock. */
static void
arm_locked (SandboxBubblewrapDriver *self,
            guint                    delay_ms)
{
  ParkTimer *timer;

  if (self->park_timeout_ms == 0 || self->park_source != NULL)
    return;
  timer = g_new0 (ParkTimer, 1);
  g_weak_ref_init (&timer->driver, self);
  self->park_source = g_timeout_source_new (delay_ms);
  g_source_set_callback (self->park_source, park_cb, timer, park_timer_free);
  g_source_set_static_name (self->park_source, "[sandbox] idle helpers");
  g_source_attach (self->park_source, sandbox_bubblewrap_launcher_get_context ());
}

static void
note_use (SandboxBubblewrapDriver *self)
{
  g_mutex_lock (&self->park_lock);
  self->last_use = g_get_monotonic_time ();
  arm_locked (self, self->park_timeout_ms);
  g_mutex_unlock (&self->park_lock);
}

/* How long the session has still to be idle before it is parked, in ms:
 * 0 once it may be. */
static guint
remaining_ms (SandboxBubblewrapDriver *self)
{
  gint64 idle_us;

  g_mutex_lock (&self->park_lock);
  idle_us = g_get_monotonic_time () - self->last_use;
  g_mutex_unlock (&self->park_lock);
  if (idle_us >= (gint64) self->park_timeout_ms * 1000)
    return 0;
  return MAX (1, self->park_timeout_ms - (guint) (idle_us / 1000));
}

/* Under @layers_lock's writer side, nothing live: ends the helpers. */
static void
park_locked (SandboxBubblewrapDriver *self)
{
  SandboxBubblewrapReady *ready;

  g_mutex_lock (&self->ready_lock);
  ready = g_steal_pointer (&self->ready);
  g_mutex_unlock (&self->ready_lock);
  sandbox_bubblewrap_ready_discard (ready);
  sandbox_bubblewrap_net_slot_drop (&self->net);
  /* No guest is left to connect: its socket, connections and upstream
   * handles go until the next command (see wake_gateway()). */
  if (self->gateway != NULL)
    sandbox_gateway_park (self->gateway);
  if (self->keeper == NULL)
    return;
  /* As sandbox_bubblewrap_driver_stop() does: the two never overlap. */
  g_mutex_lock (&self->ready_lock);
  sandbox_bubblewrap_keeper_stop (self->keeper);
  g_mutex_unlock (&self->ready_lock);
  /* The last descriptor on the overlay: the mount goes with it. */
  g_clear_pointer (&self->files, sandbox_workspace_unref);
  g_debug ("Session %s is idle: its keeper ended", self->session_id);
}

/* Under @layers_lock's writer side. Returns the delay after which to look
 * again, or 0. */
static guint
park_if_idle_locked (SandboxBubblewrapDriver *self)
{
  guint remaining;

  if (sandbox_session_gate_is_stopped (self->gate) || self->layers_lost)
    return 0;
  /* A command or file call may have begun since the timer's check. */
  if ((remaining = remaining_ms (self)) > 0)
    return remaining;
  if (sandbox_session_gate_get_n_live (self->gate) > 0 ||
      !sandbox_bubblewrap_trees_is_empty (self->trees))
    return self->park_timeout_ms;
  park_locked (self);
  return 0;
}

/* Returns the delay after which to look again, or 0. */
static guint
park (SandboxBubblewrapDriver *self)
{
  guint remaining;

  if ((remaining = remaining_ms (self)) > 0)
    return remaining;
  /* Never waits for the lock, which would hold up every command and file
   * call queued behind it: whoever holds it is using the session. */
  if (!g_rw_lock_writer_trylock (&self->layers_lock))
    return self->park_timeout_ms;
  remaining = park_if_idle_locked (self);
  g_rw_lock_writer_unlock (&self->layers_lock);
  return remaining;
}

/* A thread of GIO's pool: ending the helpers waits for them (and, for an
 * allow-list, for the gateway's thread), which the launcher thread must
 * not. */
static void
park_in_thread (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  SandboxBubblewrapDriver *self = source_object;
  guint again = park (self);

  g_mutex_lock (&self->park_lock);
  if (again > 0)
    arm_locked (self, again);
  g_mutex_unlock (&self->park_lock);
  g_task_return_boolean (task, TRUE);
}

static gboolean
park_cb (gpointer data)
{
  ParkTimer *timer = data;
  g_autoptr(SandboxBubblewrapDriver) self = g_weak_ref_get (&timer->driver);
  g_autoptr(GTask) task = NULL;
  GSource *fired;

  if (self == NULL)
    return G_SOURCE_REMOVE;
  g_mutex_lock (&self->park_lock);
  fired = g_steal_pointer (&self->park_source);
  g_mutex_unlock (&self->park_lock);
  task = g_task_new (self, NULL, NULL, NULL);
  g_task_set_source_tag (task, park_cb);
  g_task_run_in_thread (task, park_in_thread);
  g_clear_pointer (&fired, g_source_unref);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_bubblewrap_driver_init_park:
 * @self: a new session's driver
 * @timeout_ms: the backend's idle-helpers-timeout-ms (0: never)
 *
 * Starts counting the session's idle time.
 */
void
sandbox_bubblewrap_driver_init_park (SandboxBubblewrapDriver *self,
                                     guint                    timeout_ms)
{
  self->park_timeout_ms = timeout_ms;
  note_use (self);
}

/**
 * sandbox_bubblewrap_driver_note_use:
 * @self: a driver
 *
 * A command begins or ends: the idle time counts from now.
 */
void
sandbox_bubblewrap_driver_note_use (SandboxBubblewrapDriver *self)
{
  note_use (self);
}

/**
 * sandbox_bubblewrap_driver_clear_park:
 * @self: a driver, stopping or finalized
 *
 * No park from now on.
 */
void
sandbox_bubblewrap_driver_clear_park (SandboxBubblewrapDriver *self)
{
  GSource *source;

  g_mutex_lock (&self->park_lock);
  self->park_timeout_ms = 0;
  source = g_steal_pointer (&self->park_source);
  g_mutex_unlock (&self->park_lock);
  if (source != NULL)
    {
      g_source_destroy (source);
      g_source_unref (source);
    }
}

/**
 * sandbox_bubblewrap_driver_lock_files:
 * @self: a driver
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * For a file call: the session's files under @layers_lock's reader side,
 * its keeper started again first if the session was parked.
 *
 * Returns: (transfer full) (nullable): the reader lock, with @self->files
 *   set, or %NULL with @error set
 */
GRWLockReaderLocker *
sandbox_bubblewrap_driver_lock_files (SandboxBubblewrapDriver  *self,
                                      GCancellable             *cancellable,
                                      GError                  **error)
{
  GRWLockReaderLocker *locker;

  /* A park needs a whole timeout without use, which starts again before
   * each try: a second try is all but never needed. */
  for (guint tries = 0; tries < 8; tries++)
    {
      note_use (self);
      locker = g_rw_lock_reader_locker_new (&self->layers_lock);
      if (self->files != NULL)
        return locker;
      g_rw_lock_reader_locker_free (locker);
      if (!sandbox_bubblewrap_driver_revive_keeper (self, cancellable, error) ||
          !sandbox_session_gate_check_active (self->gate, cancellable, error))
        return NULL;
    }
  sandbox_bubblewrap_driver_set_layers_lost_error (error);
  return NULL;
}
