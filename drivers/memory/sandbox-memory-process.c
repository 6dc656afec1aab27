/* sandbox-memory-process.c — a scripted command of the memory driver
 *
 * A scripted command is a small state machine driven on the module's worker
 * thread: it applies its writes, writes its
 * immediate output, its chunks on timers, then exits after its delay — or
 * never ends, or floods stdout, as its rule says. Nothing is executed.
 *
 * Every step runs on the worker thread, so the steps, the timer and the
 * "finished" flag need no lock. The one thing that comes from elsewhere is
 * the kill (the core calls it on deadline, output cap, cancellation and
 * stop, from any thread): it only sets an atomic flag and queues a
 * high-priority step on the worker that ends the command with status 137,
 * as SIGKILL would. A signal sent to it does the same with 128 + its
 * number, unless it is one a process ignores by default. On a terminal,
 * what is typed is echoed on stdout as a terminal echoes it, and closing
 * the input is the typed end of file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>

#include "sandbox-context-thread-private.h"
#include "sandbox-memory-process.h"

/* The steps run on timers on a thread the module owns, with its own
 * GMainContext (the core's SandboxContextThread), so that a caller blocking
 * its main thread in sandbox_process_wait() (or a busy application main
 * loop) never stops a scripted command from finishing. It lives as long as
 * the process, like the module. */
static SandboxContextThread worker = SANDBOX_CONTEXT_THREAD_INIT ("sandbox-memory");

/* The status of a command killed by SIGKILL: 128 + 9. */
#define KILLED_EXIT_STATUS 137

/* A streamed stdin is read this much at a time. */
#define STDIN_CHUNK_BYTES  65536

/* An output flood writes this much every FLOOD_INTERVAL_MS. */
#define FLOOD_CHUNK_BYTES  65536
#define FLOOD_INTERVAL_MS  1

struct _SandboxMemoryProcess
{
  SandboxProcess           parent_instance;

  SandboxMemoryDriver     *driver;
  SandboxMemoryScript     *script;     /* keeps @rule alive */
  const SandboxMemoryRule *rule;
  int                      exec_errno; /* execve()'s refusal, or 0 */
  SandboxMemoryWorkspace  *workspace;
  SandboxCommand          *command;

  int                      killed;     /* atomic */
  int                      launched;   /* atomic */
  int                      kill_queued; /* atomic: the kill step is queued once */
  int                      signalled;  /* atomic: the terminating signal sent, or 0 */
  gboolean                 terminal;   /* the command runs on a (scripted) terminal */

  /* Worker thread only. */
  gboolean                 finished;
  guint                    next_chunk;
  GSource                 *timer;
  int                      stdin_reader;   /* a streamed stdin, or -1 */
  GSource                 *stdin_source;   /* reading it, for stdout-from-stdin */
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxMemoryProcess, sandbox_memory_process,
                                SANDBOX_TYPE_PROCESS, G_TYPE_FLAG_FINAL, {})

static void sandbox_memory_process_continue_chunks (SandboxMemoryProcess *self);
static void sandbox_memory_process_run_rest (SandboxMemoryProcess *self);

static gboolean
sandbox_memory_process_is_over (SandboxMemoryProcess *self)
{
  return self->finished || g_atomic_int_get (&self->killed);
}

static void
sandbox_memory_process_clear_timer (SandboxMemoryProcess *self)
{
  if (self->timer != NULL)
    {
      g_source_destroy (self->timer);
      g_clear_pointer (&self->timer, g_source_unref);
    }
}

/* Runs @step on the worker thread after @delay_ms, holding a reference to
 * @self until then. Worker thread only (it replaces the timer). */
static void
sandbox_memory_process_schedule (SandboxMemoryProcess *self,
                                 guint                 delay_ms,
                                 GSourceFunc           step)
{
  GSource *source = g_timeout_source_new (delay_ms);

  g_source_set_callback (source, step, g_object_ref (self), g_object_unref);
  g_source_set_static_name (source, "[sandbox-memory] command step");
  sandbox_memory_process_clear_timer (self);
  self->timer = source;
  sandbox_context_thread_attach (&worker, source);
}

/* Queues @step on the worker thread without touching the timer, so any
 * thread may call it. */
static void
sandbox_memory_process_queue (SandboxMemoryProcess *self,
                              int                   priority,
                              GSourceFunc           step)
{
  GSource *source = g_idle_source_new ();

  g_source_set_priority (source, priority);
  g_source_set_callback (source, step, g_object_ref (self), g_object_unref);
  g_source_set_static_name (source, "[sandbox-memory] command event");
  sandbox_context_thread_attach (&worker, source);
  g_source_unref (source);
}

/* The command's input is over: a consumer still writing gets
 * G_IO_ERROR_BROKEN_PIPE. Worker thread only. */
static void
sandbox_memory_process_close_stdin (SandboxMemoryProcess *self)
{
  if (self->stdin_source != NULL)
    {
      g_source_destroy (self->stdin_source);
      g_clear_pointer (&self->stdin_source, g_source_unref);
    }
  if (self->stdin_reader >= 0)
    {
      close (self->stdin_reader);
      self->stdin_reader = -1;
    }
}

/* Marks the command over; FALSE if it already was. */
static gboolean
sandbox_memory_process_end (SandboxMemoryProcess *self)
{
  if (self->finished)
    return FALSE;

  self->finished = TRUE;
  sandbox_memory_process_clear_timer (self);
  sandbox_memory_process_close_stdin (self);
  return TRUE;
}

/* Ends the command once and reports the status to the core (which frees
 * the admission slot first, so a waiter that spawns again at once is
 * admitted, and then lets a pending stop return). */
static void
sandbox_memory_process_finish (SandboxMemoryProcess *self,
                               int                   exit_status)
{
  if (sandbox_memory_process_end (self))
    sandbox_process_complete (SANDBOX_PROCESS (self), exit_status);
}

/* Ends the command once as one whose executable could not be executed. */
static void
sandbox_memory_process_finish_exec_failure (SandboxMemoryProcess *self,
                                            int                   exec_errno)
{
  if (sandbox_memory_process_end (self))
    sandbox_process_complete_exec_failure (SANDBOX_PROCESS (self), exec_errno);
}

/* Returns FALSE once the output cap is exceeded; the core then kills us. */
static gboolean
sandbox_memory_process_write (SandboxMemoryProcess *self,
                              SandboxOutputStream   stream,
                              GBytes               *data)
{
  gsize length = 0;
  const guint8 *bytes;

  if (data == NULL)
    return TRUE;

  bytes = g_bytes_get_data (data, &length);
  return sandbox_process_push_output (SANDBOX_PROCESS (self), stream, bytes, length);
}

static gboolean
sandbox_memory_process_write_text (SandboxMemoryProcess *self,
                                   SandboxOutputStream   stream,
                                   char                 *text)
{
  g_autoptr(GBytes) data = g_bytes_new_take (text, strlen (text));

  return sandbox_memory_process_write (self, stream, data);
}

/* Fails the command the way a shell utility does: a message on stderr and
 * exit status 1. */
static void
sandbox_memory_process_fail (SandboxMemoryProcess *self,
                             char                 *message)
{
  if (sandbox_memory_process_write_text (self, SANDBOX_OUTPUT_STDERR, message))
    sandbox_memory_process_finish (self, 1);
}

static gboolean
sandbox_memory_process_apply_writes (SandboxMemoryProcess *self)
{
  for (guint i = 0; i < self->rule->writes->len; i++)
    {
      const SandboxMemoryWrite *write = g_ptr_array_index (self->rule->writes, i);
      g_autoptr(GError) error = NULL;

      if (write->target != NULL
          ? !sandbox_memory_workspace_make_symlink (self->workspace, write->relative,
                                                    write->target, &error)
          : !sandbox_memory_workspace_write (self->workspace, write->relative, write->contents,
                                             FALSE, &error))
        {
          sandbox_memory_process_fail (self,
                                       g_strdup_printf ("%s: cannot write “/workspace/%s”: %s\n",
                                                        sandbox_command_get_executable (self->command),
                                                        write->relative, error->message));
          return FALSE;
        }
    }

  return TRUE;
}

/* Resolves a file argument the way a command running in its working
 * directory inside the sandbox would, but only ever into the workspace. */
static char *
sandbox_memory_process_resolve_arg (SandboxMemoryProcess  *self,
                                    const char            *arg,
                                    GError               **error)
{
  const char *cwd = sandbox_command_get_cwd (self->command);
  g_autofree char *path = NULL;
  g_autofree char *canonical = NULL;

  if (g_path_is_absolute (arg) || cwd == NULL || g_str_equal (cwd, SANDBOX_WORKSPACE))
    path = g_strdup (arg);
  else
    path = g_strconcat (cwd, "/", arg, NULL);

  canonical = sandbox_path_canonicalize (path, NULL);
  if (canonical == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                           "No such file in the workspace");
      return NULL;
    }

  return g_strdup (sandbox_path_relative (canonical));
}

static gboolean
sandbox_memory_process_copy_file_arg (SandboxMemoryProcess *self)
{
  const char * const *args = sandbox_command_get_args (self->command);
  const char *executable = sandbox_command_get_executable (self->command);
  g_autofree char *relative = NULL;
  g_autoptr(GBytes) contents = NULL;
  g_autoptr(GError) error = NULL;

  if (args == NULL || args[0] == NULL)
    {
      sandbox_memory_process_fail (self, g_strdup_printf ("%s: missing file operand\n", executable));
      return FALSE;
    }

  relative = sandbox_memory_process_resolve_arg (self, args[0], &error);
  if (relative != NULL)
    contents = sandbox_memory_workspace_read (self->workspace, relative, &error);
  if (contents == NULL)
    {
      sandbox_memory_process_fail (self, g_strdup_printf ("%s: %s: %s\n", executable, args[0],
                                                          error->message));
      return FALSE;
    }

  return sandbox_memory_process_write (self, SANDBOX_OUTPUT_STDOUT, contents);
}

static gboolean sandbox_memory_process_run_after_stdin (SandboxMemoryProcess *self);

static gboolean
sandbox_memory_process_stdin_readable_cb (int          fd,
                                          GIOCondition condition,
                                          gpointer     data)
{
  SandboxMemoryProcess *self = data;
  g_autofree guint8 *chunk = NULL;
  gssize n;

  if (sandbox_memory_process_is_over (self))
    return G_SOURCE_CONTINUE;   /* the kill's step closes it */
  chunk = g_malloc (STDIN_CHUNK_BYTES);
  n = TEMP_FAILURE_RETRY (read (fd, chunk, STDIN_CHUNK_BYTES));
  if (n < 0 && errno == EAGAIN)
    return G_SOURCE_CONTINUE;
  if (n > 0)
    {
      /* A terminal echoes what is typed; stdout-from-stdin copies it. */
      if (self->terminal)
        sandbox_process_push_output (SANDBOX_PROCESS (self), SANDBOX_OUTPUT_STDOUT, chunk, n);
      if (self->rule->stdout_from_stdin)
        sandbox_process_push_output (SANDBOX_PROCESS (self), SANDBOX_OUTPUT_STDOUT, chunk, n);
      return G_SOURCE_CONTINUE;
    }
  /* End of file: the consumer closed the stream (or typed it). A command
   * not waiting for it goes on with its script. */
  sandbox_memory_process_close_stdin (self);
  if (self->rule->stdout_from_stdin)
    sandbox_memory_process_run_rest (self);
  return G_SOURCE_CONTINUE;
}

/* stdout-from-stdin on a streamed stdin: echoes chunks as they come. */
static void
sandbox_memory_process_echo_stdin_stream (SandboxMemoryProcess *self)
{
  GSource *source = g_unix_fd_source_new (self->stdin_reader, G_IO_IN | G_IO_HUP | G_IO_ERR);

  g_source_set_callback (source, G_SOURCE_FUNC (sandbox_memory_process_stdin_readable_cb),
                         g_object_ref (self), g_object_unref);
  g_source_set_static_name (source, "[sandbox-memory] command stdin");
  self->stdin_source = source;
  sandbox_context_thread_attach (&worker, source);
}

/* Writes, then everything the command writes at once. Returns FALSE when
 * the command ended (or is being killed) on the way. */
static gboolean
sandbox_memory_process_run_immediate (SandboxMemoryProcess *self)
{
  const SandboxMemoryRule *rule = self->rule;

  /* Nothing ran: nothing is written, nothing printed. */
  if (self->exec_errno != 0)
    {
      sandbox_memory_process_finish_exec_failure (self, self->exec_errno);
      return FALSE;
    }

  if (!sandbox_memory_process_apply_writes (self))
    return FALSE;

  if (rule->stdout_from_stdin && self->stdin_reader >= 0)
    {
      /* Echoed as it comes; the rest runs at its end of file. */
      sandbox_memory_process_echo_stdin_stream (self);
      return FALSE;
    }
  /* A terminal echoes what is typed for as long as the command runs. */
  if (self->terminal)
    sandbox_memory_process_echo_stdin_stream (self);
  if (rule->stdout_from_stdin &&
      !sandbox_memory_process_write (self, SANDBOX_OUTPUT_STDOUT,
                                     sandbox_command_get_stdin (self->command)))
    return FALSE;

  return sandbox_memory_process_run_after_stdin (self);
}

/* What a command writes at once after its stdin. Returns FALSE when the
 * command ended (or is being killed) on the way. */
static gboolean
sandbox_memory_process_run_after_stdin (SandboxMemoryProcess *self)
{
  const SandboxMemoryRule *rule = self->rule;

  if (rule->stdout_from_file_arg && !sandbox_memory_process_copy_file_arg (self))
    return FALSE;

  if (rule->unscripted &&
      !sandbox_memory_process_write_text (self, SANDBOX_OUTPUT_STDERR,
                                          g_strdup_printf ("%s: command not found in the memory driver script\n",
                                                           sandbox_command_get_executable (self->command))))
    return FALSE;

  return sandbox_memory_process_write (self, SANDBOX_OUTPUT_STDOUT, rule->stdout_bytes) &&
         sandbox_memory_process_write (self, SANDBOX_OUTPUT_STDERR, rule->stderr_bytes);
}

static gboolean
sandbox_memory_process_flood_cb (gpointer data)
{
  static guint8 flood[FLOOD_CHUNK_BYTES];
  SandboxMemoryProcess *self = data;

  g_clear_pointer (&self->timer, g_source_unref);
  if (sandbox_memory_process_is_over (self))
    return G_SOURCE_REMOVE;

  if (flood[0] == 0)
    for (gsize i = 0; i < sizeof flood; i += 2)
      {
        flood[i] = 'y';
        flood[i + 1] = '\n';
      }

  if (sandbox_process_push_output (SANDBOX_PROCESS (self), SANDBOX_OUTPUT_STDOUT,
                                   flood, sizeof flood))
    sandbox_memory_process_schedule (self, FLOOD_INTERVAL_MS, sandbox_memory_process_flood_cb);

  return G_SOURCE_REMOVE;
}

static gboolean
sandbox_memory_process_exit_cb (gpointer data)
{
  SandboxMemoryProcess *self = data;

  g_clear_pointer (&self->timer, g_source_unref);
  if (!sandbox_memory_process_is_over (self))
    sandbox_memory_process_finish (self, self->rule->exit_status);

  return G_SOURCE_REMOVE;
}

/* After the last scripted output: exit, wait forever, or flood. */
static void
sandbox_memory_process_after_output (SandboxMemoryProcess *self)
{
  switch (self->rule->fault)
    {
    case SANDBOX_MEMORY_FAULT_NEVER_ENDS:
      /* Only a kill ends it. */
      break;
    case SANDBOX_MEMORY_FAULT_OUTPUT_FLOOD:
      sandbox_memory_process_schedule (self, 0, sandbox_memory_process_flood_cb);
      break;
    case SANDBOX_MEMORY_FAULT_NONE:
    case SANDBOX_MEMORY_FAULT_SPAWN_FAILURE:
    default:
      if (self->rule->delay_ms > 0)
        sandbox_memory_process_schedule (self, self->rule->delay_ms, sandbox_memory_process_exit_cb);
      else
        sandbox_memory_process_finish (self, self->rule->exit_status);
      break;
    }
}

static gboolean
sandbox_memory_process_chunk_due_cb (gpointer data)
{
  SandboxMemoryProcess *self = data;
  const SandboxMemoryChunk *chunk;

  g_clear_pointer (&self->timer, g_source_unref);
  if (sandbox_memory_process_is_over (self))
    return G_SOURCE_REMOVE;

  chunk = g_ptr_array_index (self->rule->chunks, self->next_chunk++);
  if (sandbox_memory_process_write (self, chunk->stream, chunk->data))
    sandbox_memory_process_continue_chunks (self);

  return G_SOURCE_REMOVE;
}

/* Writes the chunks from @next_chunk on, waiting on a timer before each
 * chunk that has a delay. */
static void
sandbox_memory_process_continue_chunks (SandboxMemoryProcess *self)
{
  GPtrArray *chunks = self->rule->chunks;

  while (self->next_chunk < chunks->len)
    {
      const SandboxMemoryChunk *chunk = g_ptr_array_index (chunks, self->next_chunk);

      if (chunk->delay_ms > 0)
        {
          sandbox_memory_process_schedule (self, chunk->delay_ms,
                                           sandbox_memory_process_chunk_due_cb);
          return;
        }

      self->next_chunk++;
      if (!sandbox_memory_process_write (self, chunk->stream, chunk->data))
        return;
    }

  sandbox_memory_process_after_output (self);
}

static gboolean
sandbox_memory_process_start_cb (gpointer data)
{
  SandboxMemoryProcess *self = data;

  if (sandbox_memory_process_is_over (self))
    return G_SOURCE_REMOVE;

  if (sandbox_memory_process_run_immediate (self) && !sandbox_memory_process_is_over (self))
    sandbox_memory_process_continue_chunks (self);

  return G_SOURCE_REMOVE;
}

/* After a streamed stdin's end of file: the rest of the script. */
static void
sandbox_memory_process_run_rest (SandboxMemoryProcess *self)
{
  if (sandbox_memory_process_run_after_stdin (self) && !sandbox_memory_process_is_over (self))
    sandbox_memory_process_continue_chunks (self);
}

static gboolean
sandbox_memory_process_signalled_cb (gpointer data)
{
  SandboxMemoryProcess *self = data;

  sandbox_memory_process_finish (self, 128 + g_atomic_int_get (&self->signalled));
  return G_SOURCE_REMOVE;
}

/* Signals a command takes no action on by default: it goes on. */
static gboolean
signal_is_ignored (int signum)
{
  return signum == SIGCHLD || signum == SIGCONT || signum == SIGURG || signum == SIGWINCH ||
         signum == SIGSTOP || signum == SIGTSTP || signum == SIGTTIN || signum == SIGTTOU;
}

/* SandboxProcessClass.send_signal: a scripted command handles no signal,
 * so one that ends a process by default ends it, with 128 + its number. */
static gboolean
sandbox_memory_process_send_signal (SandboxProcess  *process,
                                    int              signum,
                                    GError         **error)
{
  SandboxMemoryProcess *self = SANDBOX_MEMORY_PROCESS (process);

  if (!signal_is_ignored (signum) &&
      g_atomic_int_compare_and_exchange (&self->signalled, 0, signum))
    sandbox_memory_process_queue (self, G_PRIORITY_HIGH, sandbox_memory_process_signalled_cb);
  return TRUE;
}

/* SandboxProcessClass.resize_terminal: a scripted terminal has no size to
 * show. */
static void
sandbox_memory_process_resize_terminal (SandboxProcess *process,
                                        guint           rows,
                                        guint           columns)
{
}

static gboolean
sandbox_memory_process_killed_cb (gpointer data)
{
  sandbox_memory_process_finish (data, KILLED_EXIT_STATUS);
  return G_SOURCE_REMOVE;
}

/* Queues the end by kill once the command is both killed and launched,
 * whichever of the two comes last: a command killed before its launch (a
 * stop racing the spawn) ends only after sandbox_process_start(). */
static void
sandbox_memory_process_queue_kill (SandboxMemoryProcess *self)
{
  if (g_atomic_int_get (&self->killed) && g_atomic_int_get (&self->launched) &&
      g_atomic_int_compare_and_exchange (&self->kill_queued, FALSE, TRUE))
    sandbox_memory_process_queue (self, G_PRIORITY_HIGH, sandbox_memory_process_killed_cb);
}

/* SandboxProcessClass.kill: from any thread, without blocking. The
 * command ends on the worker thread with status 137 unless it ended
 * already. */
static void
sandbox_memory_process_kill (SandboxProcess *process)
{
  SandboxMemoryProcess *self = SANDBOX_MEMORY_PROCESS (process);

  g_atomic_int_set (&self->killed, TRUE);
  sandbox_memory_process_queue_kill (self);
}

/**
 * sandbox_memory_process_launch:
 * @self: a scripted command that was admitted
 * @cancellable: (nullable): the spawn's cancellable
 *
 * Starts the command: hands the deadline and @cancellable to the core, then
 * lets the worker thread run the script.
 */
void
sandbox_memory_process_launch (SandboxMemoryProcess *self,
                               GCancellable         *cancellable)
{
  g_return_if_fail (SANDBOX_IS_MEMORY_PROCESS (self));

  sandbox_process_start (SANDBOX_PROCESS (self), cancellable);
  g_atomic_int_set (&self->launched, TRUE);
  sandbox_memory_process_queue (self, G_PRIORITY_DEFAULT, sandbox_memory_process_start_cb);
  sandbox_memory_process_queue_kill (self);
}

/**
 * sandbox_memory_process_new:
 * @driver: the session's driver, kept alive while the command runs
 * @script: the script @rule belongs to
 * @rule: how to answer @command
 * @exec_errno: what execve() would say of @command's executable (then
 *   the command ends as one that could not be executed, with no output,
 *   whatever @rule says), or 0
 * @workspace: the session's workspace
 * @command: the validated command
 * @error: return location for a #GError
 *
 * Creates a scripted command, not yet started; see
 * sandbox_memory_process_launch(). A streamed stdin is open from here on.
 *
 * Returns: (transfer full): the new command, or %NULL with
 *   %SANDBOX_ERROR_UNAVAILABLE
 */
SandboxMemoryProcess *
sandbox_memory_process_new (SandboxMemoryDriver     *driver,
                            SandboxMemoryScript     *script,
                            const SandboxMemoryRule *rule,
                            int                      exec_errno,
                            SandboxMemoryWorkspace  *workspace,
                            SandboxCommand          *command,
                            GError                 **error)
{
  g_autoptr(SandboxMemoryProcess) self = NULL;

  g_return_val_if_fail (SANDBOX_IS_MEMORY_DRIVER (driver), NULL);
  g_return_val_if_fail (script != NULL && rule != NULL && workspace != NULL, NULL);
  g_return_val_if_fail (SANDBOX_IS_COMMAND (command), NULL);

  self = g_object_new (SANDBOX_TYPE_MEMORY_PROCESS,
                       "timeout-ms", sandbox_command_get_timeout_ms (command),
                       "max-output-bytes", (guint64) sandbox_command_get_max_output_bytes (command),
                       NULL);
  self->driver = g_object_ref (driver);
  self->script = sandbox_memory_script_ref (script);
  self->rule = rule;
  self->exec_errno = exec_errno;
  self->workspace = sandbox_memory_workspace_ref (workspace);
  self->command = g_object_ref (command);
  self->terminal = sandbox_command_get_terminal (command);
  if (self->terminal)
    self->stdin_reader = sandbox_process_open_terminal (SANDBOX_PROCESS (self), error);
  else if (sandbox_command_get_stdin_stream (command))
    self->stdin_reader = sandbox_process_open_stdin_stream (SANDBOX_PROCESS (self), error);
  if ((self->terminal || sandbox_command_get_stdin_stream (command)) && self->stdin_reader < 0)
    return NULL;
  if (self->stdin_reader >= 0)
    fcntl (self->stdin_reader, F_SETFL, O_NONBLOCK);

  return g_steal_pointer (&self);
}

static void
sandbox_memory_process_finalize (GObject *object)
{
  SandboxMemoryProcess *self = SANDBOX_MEMORY_PROCESS (object);

  /* Every step holds a reference, so no timer can be pending here. */
  g_assert (self->timer == NULL);

  g_clear_object (&self->driver);
  g_clear_pointer (&self->script, sandbox_memory_script_unref);
  g_clear_pointer (&self->workspace, sandbox_memory_workspace_unref);
  g_clear_object (&self->command);
  if (self->stdin_reader >= 0)
    close (self->stdin_reader);

  G_OBJECT_CLASS (sandbox_memory_process_parent_class)->finalize (object);
}

static void
sandbox_memory_process_class_init (SandboxMemoryProcessClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SandboxProcessClass *process_class = SANDBOX_PROCESS_CLASS (klass);

  object_class->finalize = sandbox_memory_process_finalize;
  process_class->kill = sandbox_memory_process_kill;
  process_class->send_signal = sandbox_memory_process_send_signal;
  process_class->resize_terminal = sandbox_memory_process_resize_terminal;
}

static void
sandbox_memory_process_class_finalize (SandboxMemoryProcessClass *klass)
{
}

static void
sandbox_memory_process_init (SandboxMemoryProcess *self)
{
  self->stdin_reader = -1;
}

/**
 * sandbox_memory_process_register:
 * @module: the driver module
 *
 * Registers #SandboxMemoryProcess with @module.
 */
void
sandbox_memory_process_register (GTypeModule *module)
{
  sandbox_memory_process_register_type (module);
}
