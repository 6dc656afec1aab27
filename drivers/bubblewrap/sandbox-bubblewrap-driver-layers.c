/* sandbox-bubblewrap-driver-layers.c — a live layered session's layers replaced
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-bubblewrap-driver-fields-private.h"

/*
 * A restore rewrites the session's upper layer, which overlayfs forbids
 * while it is mounted: the session's keeper is stopped and started again
 * around it, under @layers_lock's writer side (no command is being built
 * from the old keeper, no file call goes through its overlay) and the
 * gate's quiet section (no command runs, none is admitted: BUSY
 * otherwise). What lived in the old keeper's namespaces goes first: the
 * exited commands' leftovers (waited for before the gate's lock, which
 * their completion takes, once the writer side has made sure no command
 * can start and none runs), the ready sandbox, and the network (an
 * unprivileged host's network keeper is in the keeper's user namespace;
 * the next command starts it again, exposed ports stay). When the new
 * keeper cannot start, the session's commands are refused from then on
 * (UNAVAILABLE) and its file calls still reach the old overlay.
 *
 * A session that copies its template has no keeper: its workspace
 * directory is swapped for a new one, so the ready sandbox (which bound
 * the old one) goes and the file calls open the new one.
 */

typedef struct
{
  SandboxBubblewrapDriver *self;
  const char * const *lowers;
  const char * const *runtime_lowers;
  const char *layers;
  SandboxBubblewrapRefillFunc refill;
  gpointer refill_data;
} Replace;

/* A copying session's: its files opened again once @refill swapped them. */
static gboolean
replace_copied_workspace (Replace  *replace,
                          GError  **error)
{
  SandboxBubblewrapDriver *self = replace->self;
  SandboxWorkspace *files;

  if (!replace->refill (replace->refill_data, error))
    return FALSE;
  files = sandbox_workspace_open (self->workspace, self->files_flags, error);
  if (files == NULL)
    {
      self->layers_lost = TRUE;
      return FALSE;
    }
  sandbox_workspace_unref (self->files);
  self->files = files;
  return TRUE;
}

static gboolean
replace_quietly (SandboxNetworkPolicy  *unused,
                 gpointer               data,
                 GError               **error)
{
  Replace *replace = data;
  SandboxBubblewrapDriver *self = replace->self;
  g_autoptr(SandboxBubblewrapKeeper) keeper = NULL;
  g_autoptr(SandboxWorkspace) files = NULL;
  g_autoptr(GError) cause = NULL;
  SandboxBubblewrapReady *ready;
  gboolean refilled;

  g_mutex_lock (&self->ready_lock);
  ready = g_steal_pointer (&self->ready);
  g_mutex_unlock (&self->ready_lock);
  sandbox_bubblewrap_ready_discard (ready);
  if (self->keeper == NULL)
    return replace_copied_workspace (replace, error);
  sandbox_bubblewrap_net_slot_drop (&self->net);
  sandbox_bubblewrap_keeper_stop (self->keeper);

  /* Whether or not it refilled the layer, the session needs its overlay:
   * the same layers when there is no refill (a keeper that exited). */
  refilled = replace->refill == NULL || replace->refill (replace->refill_data, error);
  /* New lowers only over what was refilled for them (a restore further
   * down the session's line); the old ones otherwise. */
  if (replace->lowers != NULL && refilled)
    keeper = sandbox_bubblewrap_keeper_start (
      replace->lowers,
      replace->runtime_lowers != NULL ? replace->runtime_lowers
                                      : sandbox_bubblewrap_keeper_get_runtime_lowers (self->keeper),
      replace->layers, &self->guest, &cause);
  else
    keeper = sandbox_bubblewrap_keeper_start_again (self->keeper, &self->guest, &cause);
  if (keeper != NULL)
    files = sandbox_bubblewrap_keeper_open_workspace (keeper, self->files_flags, &cause);
  if (files == NULL)
    {
      self->layers_lost = TRUE;
      if (refilled)
        g_propagate_error (error, g_steal_pointer (&cause));
      return FALSE;
    }
  sandbox_bubblewrap_keeper_free (self->keeper);
  self->keeper = g_steal_pointer (&keeper);
  g_clear_pointer (&self->files, sandbox_workspace_unref);   /* NULL when parked */
  self->files = g_steal_pointer (&files);
  return refilled;
}

/**
 * sandbox_bubblewrap_driver_replace_layers:
 * @self: a session's driver
 * @lowers: (nullable): the session's lower layers, top first (%NULL for a
 *   session that copies its template)
 * @runtime_lowers: (nullable): its writable runtime's, top first; %NULL:
 *   those the keeper has
 * @layers: (nullable): the host path of the session's layers/
 * @refill: (scope call): rewrites layers/upper while nothing has it mounted
 *   (or swaps a copying session's workspace while no command runs)
 * @refill_data: data for @refill
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stops the session's keeper, calls @refill and starts the keeper again
 * (see above), over @lowers and @runtime_lowers when @refill succeeded,
 * over the old ones when it failed. %SANDBOX_ERROR_BUSY while a command runs.
 *
 * Returns: %TRUE when @refill succeeded and the session's overlay is
 *   mounted again
 */
gboolean
sandbox_bubblewrap_driver_replace_layers (SandboxBubblewrapDriver     *self,
                                          const char * const          *lowers,
                                          const char * const          *runtime_lowers,
                                          const char                  *layers,
                                          SandboxBubblewrapRefillFunc  refill,
                                          gpointer                     refill_data,
                                          GCancellable                *cancellable,
                                          GError                     **error)
{
  g_autoptr(GRWLockWriterLocker) locker = NULL;
  Replace replace = { self, lowers, runtime_lowers, layers, refill, refill_data };

  /* Before the gate's lock, as commands take them. */
  locker = g_rw_lock_writer_locker_new (&self->layers_lock);
  if (self->layers_lost)
    return sandbox_bubblewrap_driver_set_layers_lost_error (error);
  /* No command starts now; one that runs makes the gate refuse below. */
  if (sandbox_session_gate_get_n_live (self->gate) == 0)
    sandbox_bubblewrap_trees_wait (self->trees);
  return sandbox_session_gate_run_quiet (self->gate, "restoring a snapshot", replace_quietly,
                                         &replace, cancellable, error);
}

/* Whether the session's keeper has exited (read under @layers_lock). */
static gboolean
keeper_has_exited_locked (SandboxBubblewrapDriver *self)
{
  return self->keeper != NULL && !self->layers_lost &&
         !sandbox_session_gate_is_stopped (self->gate) &&
         sandbox_bubblewrap_keeper_has_exited (self->keeper);
}

/**
 * sandbox_bubblewrap_driver_revive_keeper:
 * @self: a session's driver
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * A layered session whose keeper has exited (the OOM killer, an operator's
 * kill) gets a new one over the same layers before its next command, as a
 * restore without a refill does: commands can only enter a live keeper's
 * namespaces. Commands still running in the old namespaces hold its
 * overlay and its upper layer: until they end, %SANDBOX_ERROR_BUSY. The
 * host's file calls meanwhile work on the overlay they hold open.
 *
 * Returns: %TRUE when the keeper lives (or the session has none)
 */
gboolean
sandbox_bubblewrap_driver_revive_keeper (SandboxBubblewrapDriver  *self,
                                         GCancellable             *cancellable,
                                         GError                  **error)
{
  g_autoptr(GRWLockWriterLocker) locker = NULL;
  Replace replace = { self, NULL, NULL, NULL, NULL, NULL };
  gboolean exited;

  g_rw_lock_reader_lock (&self->layers_lock);
  exited = keeper_has_exited_locked (self);
  g_rw_lock_reader_unlock (&self->layers_lock);
  if (!exited)
    return TRUE;

  locker = g_rw_lock_writer_locker_new (&self->layers_lock);
  /* Another command's call may have replaced it meanwhile. */
  if (!keeper_has_exited_locked (self))
    return TRUE;
  /* Parked (sandbox-bubblewrap-driver-park.c) or killed. */
  if (self->files == NULL)
    g_debug ("Session %s is used again: starting its keeper", self->session_id);
  else
    g_message ("The workspace keeper of session %s exited: mounting its layers again",
               self->session_id);
  if (sandbox_session_gate_get_n_live (self->gate) == 0)
    sandbox_bubblewrap_trees_wait (self->trees);
  return sandbox_session_gate_run_quiet (self->gate,
                                         "its workspace can be mounted again (its keeper exited)",
                                         replace_quietly, &replace, cancellable, error);
}

/**
 * sandbox_bubblewrap_driver_set_layers_lost_error:
 * @error: return location for a #GError
 *
 * The error of a session whose overlay could not be mounted again.
 *
 * Returns: %FALSE
 */
gboolean
sandbox_bubblewrap_driver_set_layers_lost_error (GError **error)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "The session's workspace could not be mounted again; stop the session and "
               "resume it");
  return FALSE;
}
