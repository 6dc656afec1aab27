/* sandbox-session-background.c — a session's background commands
 *
 * A background command is spawned as any other, then kept by the session
 * under an id: it outlives the call that started it (and the caller's
 * reference), keeps its own deadline (the background default unless the
 * command set another), holds an admission slot while it runs, and keeps
 * its output as a bounded log (sandbox-process-background.c) that any
 * caller re-attaches to. The session's owner lists, looks up, signals,
 * waits for and stops them through the SandboxProcess they are. Stopping
 * or deleting the session ends them with its other commands; a network
 * policy change ends them first (sandbox-session-policy.c), and so does
 * the backend's idle timeout (sandbox-session-idle.c) when nothing was
 * asked of the session for that long. They live in this process: a handle
 * resumed elsewhere has none.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-error.h"
#include "sandbox-process-private.h"
#include "sandbox-session-private.h"

/* Finished background commands kept for listing, oldest forgotten first. */
#define MAX_FINISHED 32

struct _SandboxBackgroundSet
{
  GMutex lock;
  /* Guarded by @lock. */
  GPtrArray *processes;    /* (element-type SandboxProcess), oldest first */
  guint64 next_id;
  guint max_timeout_ms;    /* the backend's maximum (SandboxBackendBase) */
};

static SandboxBackgroundSet *
sandbox_background_set_new (void)
{
  SandboxBackgroundSet *self = g_new0 (SandboxBackgroundSet, 1);

  g_mutex_init (&self->lock);
  self->processes = g_ptr_array_new_with_free_func (g_object_unref);
  self->next_id = 1;
  self->max_timeout_ms = SANDBOX_DEFAULT_MAX_BACKGROUND_TIMEOUT_MS;
  return self;
}

static void
sandbox_background_set_free (SandboxBackgroundSet *self)
{
  g_ptr_array_unref (self->processes);
  g_mutex_clear (&self->lock);
  g_free (self);
}

#define SET_KEY "sandbox-background-commands"

/* Made the first time it is asked for, and freed with the session. */
SandboxBackgroundSet *
sandbox_session_get_background_set (SandboxSession *self)
{
  static GMutex making;
  SandboxBackgroundSet *set;

  g_mutex_lock (&making);
  set = g_object_get_data (G_OBJECT (self), SET_KEY);
  if (set == NULL)
    {
      set = sandbox_background_set_new ();
      g_object_set_data_full (G_OBJECT (self), SET_KEY, set,
                              (GDestroyNotify) sandbox_background_set_free);
    }
  g_mutex_unlock (&making);
  return set;
}

/* Forgets the oldest finished ones past MAX_FINISHED. Called locked. */
static void
forget_old_locked (SandboxBackgroundSet *self)
{
  guint finished = 0;

  for (guint i = self->processes->len; i > 0; i--)
    if (sandbox_process_is_finished (g_ptr_array_index (self->processes, i - 1)) &&
        ++finished > MAX_FINISHED)
      g_ptr_array_remove_index (self->processes, i - 1);
}

/* Set by SandboxBackendBase on every session it opens. */
void
sandbox_session_set_max_background_timeout_ms (SandboxSession *self,
                                               guint           max_ms)
{
  SandboxBackgroundSet *set = sandbox_session_get_background_set (self);

  g_mutex_lock (&set->lock);
  set->max_timeout_ms = max_ms;
  g_mutex_unlock (&set->lock);
}

/*
 * sandbox_session_detach_command:
 * @self: the session
 * @command: a valid command
 * @capacity: (out): how much output its log keeps
 * @error: return location for a #GError
 *
 * A copy of @command to spawn in the background: the background deadline
 * unless it set its own (either at most the backend's maximum), and no
 * one-shot output cap (the log bounds the output; the cap, which kills,
 * must not).
 *
 * Returns: (transfer full): the copy, or %NULL with %SANDBOX_ERROR_INVALID
 *   for a deadline above the maximum
 */
SandboxCommand *
sandbox_session_detach_command (SandboxSession  *self,
                                SandboxCommand  *command,
                                gsize           *capacity,
                                GError         **error)
{
  SandboxBackgroundSet *set = sandbox_session_get_background_set (self);
  g_autoptr(SandboxCommand) detached = sandbox_command_copy (command);
  guint timeout = sandbox_command_get_timeout_ms (detached);
  guint max_ms;

  g_mutex_lock (&set->lock);
  max_ms = set->max_timeout_ms;
  g_mutex_unlock (&set->lock);
  if (timeout == SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS)
    timeout = MIN (SANDBOX_COMMAND_DEFAULT_BACKGROUND_TIMEOUT_MS, max_ms);
  if (timeout > max_ms)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "timeoutMs: a background command's deadline is at most %u ms here, "
                   "not %u", max_ms, timeout);
      return NULL;
    }
  sandbox_command_set_timeout_ms (detached, timeout);
  *capacity = sandbox_command_get_max_output_bytes (detached);
  sandbox_command_set_max_output_bytes (detached, G_MAXSIZE);
  return g_steal_pointer (&detached);
}

/* Worker thread: nothing was asked of the session for @timeout_ms. Each
 * running background command is killed with the reason recorded (the
 * kill is sent here; each completes as its driver reports it). */
static void
end_idle_background (SandboxSession *self,
                     guint           timeout_ms)
{
  g_autoptr(GPtrArray) running =
    sandbox_background_set_running (sandbox_session_get_background_set (self));
  g_autoptr(GError) reason = NULL;

  if (running->len == 0)
    return;
  reason = g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                        "Sandbox session idle timeout reached (%u ms without a call)",
                        timeout_ms);
  g_debug ("Ending %u background command(s) of session %s: idle for %u ms", running->len,
           sandbox_session_get_id (self), timeout_ms);
  for (guint i = 0; i < running->len; i++)
    sandbox_process_request_kill (g_ptr_array_index (running, i), reason);
}

/*
 * sandbox_session_adopt_background:
 * @self: a session
 * @process: what was just spawned from a sandbox_session_detach_command()
 * @command: that command
 * @capacity: its log's size
 *
 * Makes @process one of the session's background commands.
 *
 * Returns: (transfer full): its id
 */
char *
sandbox_session_adopt_background (SandboxSession *self,
                                  SandboxProcess *process,
                                  SandboxCommand *command,
                                  gsize           capacity)
{
  SandboxBackgroundSet *set = sandbox_session_get_background_set (self);
  char *id;

  g_mutex_lock (&set->lock);
  id = g_strdup_printf ("bg-%" G_GUINT64_FORMAT, set->next_id++);
  sandbox_process_make_background (process, id, command, capacity,
                                   sandbox_session_get_idle_clock (self));
  forget_old_locked (set);
  g_ptr_array_add (set->processes, g_object_ref (process));
  g_mutex_unlock (&set->lock);
  sandbox_session_watch_idle (self, end_idle_background);
  g_debug ("Background command %s started in session %s", id, sandbox_session_get_id (self));
  return id;
}

/*
 * sandbox_background_set_running:
 * @self: a session's background commands
 *
 * Returns: (transfer full) (element-type SandboxProcess): those still running
 */
GPtrArray *
sandbox_background_set_running (SandboxBackgroundSet *self)
{
  GPtrArray *running = g_ptr_array_new_with_free_func (g_object_unref);

  g_mutex_lock (&self->lock);
  for (guint i = 0; i < self->processes->len; i++)
    if (!sandbox_process_is_finished (g_ptr_array_index (self->processes, i)))
      g_ptr_array_add (running, g_object_ref (g_ptr_array_index (self->processes, i)));
  g_mutex_unlock (&self->lock);
  return running;
}

/**
 * sandbox_session_spawn_background:
 * @self: a [class@Sandbox.Session]
 * @command: the command to run
 * @error: return location for a #GError
 *
 * Starts @command in the background and returns at once: the session keeps
 * it, under [method@Sandbox.Process.get_background_id], until it ends and
 * a while after, whether or not the caller keeps the process. It holds an
 * admission slot while it runs. Its deadline is
 * %SANDBOX_COMMAND_DEFAULT_BACKGROUND_TIMEOUT_MS unless the command set
 * another than %SANDBOX_COMMAND_DEFAULT_TIMEOUT_MS, and at most the
 * backend's [property@Sandbox.BackendBase:max-background-timeout-ms] (a
 * longer one is refused with %SANDBOX_ERROR_INVALID). Its output (both
 * streams, in the order they came) is kept as a log of
 * [property@Sandbox.Command:max-output-bytes]: its first half and its
 * last half, with what came between dropped and counted, and never ends
 * the command; read it with [method@Sandbox.Process.read_output]. Signal
 * it, feed its stdin stream or terminal, wait for it or stop it as any
 * process. Stopping or deleting the session, or changing its network
 * policy, ends it, and so does the backend's
 * [property@Sandbox.BackendBase:background-idle-timeout-ms] once nothing
 * was asked of the session for that long (it then fails with
 * %SANDBOX_ERROR_LIMIT). Background commands live in this process: they end
 * when it exits, and a session resumed elsewhere has none.
 *
 * Returns: (transfer full): the background command, or %NULL with @error
 *   set as for [method@Sandbox.Session.spawn]
 */
SandboxProcess *
sandbox_session_spawn_background (SandboxSession  *self,
                                  SandboxCommand  *command,
                                  GError         **error)
{
  g_autoptr(SandboxCommand) detached = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autofree char *id = NULL;
  gsize capacity;

  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);
  g_return_val_if_fail (SANDBOX_IS_COMMAND (command), NULL);

  /* Not the same check as the spawn's, which sees the detached copy: the
   * caller's own output cap (0 would be a log of nothing) and deadline are
   * replaced there, and a command wrong in several ways must be refused
   * for its first problem, as sandbox_session_spawn() would. */
  if (!sandbox_command_validate (command, error))
    return NULL;
  detached = sandbox_session_detach_command (self, command, &capacity, error);
  if (detached == NULL)
    return NULL;
  /* No cancellable: it outlives the call. */
  process = sandbox_session_spawn (self, detached, NULL, error);
  if (process == NULL)
    return NULL;
  id = sandbox_session_adopt_background (self, process, detached, capacity);
  return g_steal_pointer (&process);
}

/**
 * sandbox_session_list_background:
 * @self: a [class@Sandbox.Session]
 *
 * The session's background commands, running and recently finished, in
 * the order they were started.
 *
 * Returns: (transfer container) (element-type SandboxProcess): the commands
 *   (the array holds a reference to each, released with it)
 */
GPtrArray *
sandbox_session_list_background (SandboxSession *self)
{
  SandboxBackgroundSet *set;
  GPtrArray *list;

  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);

  sandbox_idle_clock_note (sandbox_session_get_idle_clock (self));
  set = sandbox_session_get_background_set (self);
  list = g_ptr_array_new_with_free_func (g_object_unref);
  g_mutex_lock (&set->lock);
  for (guint i = 0; i < set->processes->len; i++)
    g_ptr_array_add (list, g_object_ref (g_ptr_array_index (set->processes, i)));
  g_mutex_unlock (&set->lock);
  return list;
}

/**
 * sandbox_session_lookup_background:
 * @self: a [class@Sandbox.Session]
 * @id: a background command's id
 *
 * Finds a background command, to re-attach to it.
 *
 * Returns: (transfer full) (nullable): the command, or %NULL when the
 *   session has none of that id (or forgot it)
 */
SandboxProcess *
sandbox_session_lookup_background (SandboxSession *self,
                                   const char     *id)
{
  SandboxBackgroundSet *set;
  SandboxProcess *found = NULL;

  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);
  g_return_val_if_fail (id != NULL, NULL);

  sandbox_idle_clock_note (sandbox_session_get_idle_clock (self));
  set = sandbox_session_get_background_set (self);
  g_mutex_lock (&set->lock);
  for (guint i = 0; i < set->processes->len && found == NULL; i++)
    if (g_strcmp0 (sandbox_process_get_background_id (g_ptr_array_index (set->processes, i)),
                   id) == 0)
      found = g_object_ref (g_ptr_array_index (set->processes, i));
  g_mutex_unlock (&set->lock);
  return found;
}
