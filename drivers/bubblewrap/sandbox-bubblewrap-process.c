/* sandbox-bubblewrap-process.c — a command running under bwrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <glib-unix.h>

#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-limits-private.h"
#include "sandbox-bubblewrap-process-fields-private.h"
#include "sandbox-bubblewrap-seccomp-private.h"
#include "sandbox-bubblewrap-stub-private.h"
#include "stub/sandbox-stub-message.h"

/*
 * Life of a command
 *
 * The spawning thread builds the command line and hands the launch to the
 * launcher thread, which spawns bwrap (with an empty environment, as the
 * init of a pid namespace of its own: see sandbox-bubblewrap-launcher.c),
 * opens a pidfd on it and watches its pipes. bwrap reports the sandbox's
 * first process on --json-status-fd, which tells that it got as far as
 * creating the sandbox (its pid is one of the wrapper namespace's, of no
 * use out here).
 *
 * Killing is SIGKILL to bwrap through its pidfd, which cannot hit a recycled
 * pid. bwrap is the init of the wrapper pid namespace, and every process of
 * the sandbox — the sandbox's own init, the guest, whatever it daemonized
 * (--new-session puts the guest in another session) — is a member of it,
 * so the kernel kills them all with it, at any point of bwrap's setup.
 * Before the wrapper, a kill within milliseconds of bwrap's start could
 * leave the sandbox running (bwrap's --die-with-parent race, bubblewrap
 * issues 633 and 700) and had to be held until the sandbox's init was known.
 *
 * The command is over when its sandbox is empty and both output pipes are
 * at EOF. A sandbox is empty when bwrap is reaped — the kernel reaps the
 * init of a pid namespace only after every other member is gone — or,
 * sooner, when the stub reports that it has killed and reaped every other
 * process itself (see stub/sandbox-stub.c: a ready sandbox's stub reports
 * on its control socket, a cold one's on a pipe of its own). Every writer
 * of the output pipes but bwrap is gone by then, so what is in them is all
 * the command wrote: they are drained and closed without waiting for
 * bwrap's EOF. Then the
 * owner hears of it (its #SandboxBubblewrapProcessExitedFunc: the driver
 * starts the session's next sandbox), and the base class completes (which
 * releases the admission slot, see #SandboxSessionGate) — but never before
 * sandbox_process_start() has run in the spawning thread. What is left of
 * a reported sandbox (its stub exiting, the kernel tearing its namespaces
 * down, bwrap) is reaped after; its #SandboxBubblewrapTrees counts it until
 * then, so that a stopping session can wait for it.
 *
 * Under an allow-list the stub hands the host descriptors on a handoff
 * socket (see stub/sandbox-stub-message.h): the proxy's listener, bound on
 * the sandbox's 127.0.0.1 before the guest ran. A cold sandbox's stub sends
 * it as it starts, a ready one's when it started; either way it waits in
 * the socket until the launcher thread takes it and gives it to the
 * session's gateway, which accepts on it until the command is over (guest
 * connections made meanwhile wait in its backlog). Then it is removed from
 * the gateway, which closes it.
 */

#define READ_CHUNK_SIZE 65536
#define STATUS_LIMIT 4096

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxBubblewrapProcess, sandbox_bubblewrap_process,
                                SANDBOX_TYPE_PROCESS, G_TYPE_FLAG_FINAL, {})

/* Kills bwrap and with it the whole sandbox. Called with @lock held. The
 * pidfd refers to our bwrap even once reaped (the signal then fails). */
static void
signal_tree_locked (SandboxBubblewrapProcess *self)
{
  if (self->bwrap_pidfd >= 0 && !self->bwrap_reaped)
    pidfd_send_signal (self->bwrap_pidfd, SIGKILL, NULL, 0);
}

/**
 * sandbox_bubblewrap_process_kill_tree:
 * @self: a process
 *
 * Kills every process of the command: bwrap and its whole pid namespace.
 * Idempotent, non-blocking and callable from any thread. A process that has
 * not been launched yet never will be.
 */
void
sandbox_bubblewrap_process_kill_tree (SandboxBubblewrapProcess *self)
{
  g_mutex_lock (&self->lock);
  self->kill_requested = TRUE;
  signal_tree_locked (self);
  g_mutex_unlock (&self->lock);
}

static void
sandbox_bubblewrap_process_kill (SandboxProcess *process)
{
  sandbox_bubblewrap_process_kill_tree (SANDBOX_BUBBLEWRAP_PROCESS (process));
}

/* Completes (the core releases the admission slot first), then lets the
 * driver go. */
static void
complete_now (SandboxBubblewrapProcess *self)
{
  g_autoptr(GObject) owner = g_steal_pointer (&self->owner);

  if (self->exec_errno != 0)
    sandbox_process_complete_exec_failure (SANDBOX_PROCESS (self), self->exec_errno);
  else
    sandbox_process_complete (SANDBOX_PROCESS (self), self->exit_status);
}

static void
close_everything (SandboxBubblewrapProcess *self)
{
  sandbox_bubblewrap_process_close_handoff (self);
  sandbox_bubblewrap_process_close_live (self);
  sandbox_bubblewrap_process_finish_stdin (self);
  sandbox_bubblewrap_source_destroy (&self->stdout_source);
  sandbox_bubblewrap_source_destroy (&self->stderr_source);
  sandbox_bubblewrap_source_destroy (&self->status_source);
  sandbox_bubblewrap_source_destroy (&self->report_source);
  sandbox_bubblewrap_source_destroy (&self->bwrap_source);
  sandbox_bubblewrap_clear_fd (&self->control_fd);
  sandbox_bubblewrap_clear_fd (&self->report_fd);
  sandbox_bubblewrap_clear_fd (&self->stdout_fd);
  sandbox_bubblewrap_clear_fd (&self->stderr_fd);
  sandbox_bubblewrap_clear_fd (&self->status_fd);

  g_mutex_lock (&self->lock);
  sandbox_bubblewrap_clear_fd (&self->bwrap_pidfd);
  g_mutex_unlock (&self->lock);
}

static void drain_status (SandboxBubblewrapProcess *self);
static gboolean read_report (SandboxBubblewrapProcess *self);

/* Launcher thread: the command is over. Tells the owner, then completes. */
static void
end_command (SandboxBubblewrapProcess *self)
{
  gboolean complete;

  /* Everything bwrap reported came before the sandbox ended. */
  drain_status (self);
  /* And so did the stub's report, if the reaping came first: the sandbox is
   * gone, so the report is there or will never be (no EAGAIN). */
  if (self->report_fd >= 0)
    read_report (self);
  sandbox_bubblewrap_source_destroy (&self->status_source);
  sandbox_bubblewrap_clear_fd (&self->status_fd);
  sandbox_bubblewrap_process_close_handoff (self);
  sandbox_bubblewrap_process_finish_stdin (self);
  /* Before @finished: until then sandbox_bubblewrap_process_mark_started()
   * cannot complete the process, which lets the owner go. */
  if (self->exited_func != NULL && self->owner != NULL)
    self->exited_func (self, self->owner);

  g_mutex_lock (&self->lock);
  self->finished = TRUE;
  complete = self->started && !self->completed;
  if (complete)
    self->completed = TRUE;
  g_mutex_unlock (&self->lock);

  if (self->cgroup != NULL)
    {
      /* The tree is gone: did the kernel enforce a limit on it? */
      g_autoptr(GError) exceeded = sandbox_bubblewrap_cgroup_check_exceeded (self->cgroup);

      if (exceeded != NULL)
        sandbox_process_abort (SANDBOX_PROCESS (self), exceeded);
      g_clear_pointer (&self->cgroup, sandbox_bubblewrap_cgroup_free);
    }

  if (complete)
    complete_now (self);
}

/* Launcher thread: the command ends once its sandbox is empty (bwrap
 * reaped, or the stub's report) and both pipes are drained; the launcher's
 * reference goes once bwrap is reaped. */
static void
maybe_finish (SandboxBubblewrapProcess *self)
{
  gboolean reaped;

  if (self->stdout_fd >= 0 || self->stderr_fd >= 0)
    return;
  g_mutex_lock (&self->lock);
  reaped = self->bwrap_reaped;
  g_mutex_unlock (&self->lock);
  if (!reaped && !self->reported)
    return;
  /* The sandbox is empty: what its terminal shows is all there will be. */
  sandbox_bubblewrap_process_drain_terminal (self);

  if (!self->over)
    {
      self->over = TRUE;
      end_command (self);
    }
  if (reaped)
    {
      close_everything (self);
      if (self->trees != NULL)
        sandbox_bubblewrap_trees_leave (self->trees);
      g_object_unref (self);
    }
}

/**
 * sandbox_bubblewrap_process_set_trees:
 * @self: a process not launched yet
 * @trees: what counts its session's sandboxes until each is reaped
 */
void
sandbox_bubblewrap_process_set_trees (SandboxBubblewrapProcess *self,
                                      SandboxBubblewrapTrees   *trees)
{
  g_clear_pointer (&self->trees, sandbox_bubblewrap_trees_unref);
  self->trees = sandbox_bubblewrap_trees_ref (trees);
}

/**
 * sandbox_bubblewrap_process_set_exited_func:
 * @self: a process not launched yet
 * @func: (nullable): what to call once its sandbox has fully exited
 *
 * See #SandboxBubblewrapProcessExitedFunc.
 */
void
sandbox_bubblewrap_process_set_exited_func (SandboxBubblewrapProcess           *self,
                                            SandboxBubblewrapProcessExitedFunc  func)
{
  self->exited_func = func;
}

/**
 * sandbox_bubblewrap_process_mark_started:
 * @self: a launched process
 *
 * Call after [method@Sandbox.Process.start]: from now on the process may complete,
 * at once if it is already over.
 */
void
sandbox_bubblewrap_process_mark_started (SandboxBubblewrapProcess *self)
{
  gboolean complete;

  g_mutex_lock (&self->lock);
  self->started = TRUE;
  complete = self->finished && !self->completed;
  if (complete)
    self->completed = TRUE;
  g_mutex_unlock (&self->lock);

  if (complete)
    complete_now (self);
}

/**
 * sandbox_bubblewrap_process_was_isolated:
 * @self: a process
 *
 * Returns: whether bwrap reported the namespace's first process, that is,
 *   whether it got as far as creating the sandbox
 */
gboolean
sandbox_bubblewrap_process_was_isolated (SandboxBubblewrapProcess *self)
{
  gboolean isolated;

  g_mutex_lock (&self->lock);
  isolated = self->isolated;
  g_mutex_unlock (&self->lock);
  return isolated;
}

/* Output ----------------------------------------------------------------- */

/* Reads once from an output pipe and passes on what came: the read()'s
 * result. */
static gssize
read_chunk (SandboxBubblewrapProcess *self,
            SandboxOutputStream       stream,
            int                       fd)
{
  guint8 buffer[READ_CHUNK_SIZE];
  gssize n;

  n = TEMP_FAILURE_RETRY (read (fd, buffer, sizeof buffer));

  /* Past the cap the base class kills; keep draining to reach EOF. */
  if (n > 0 && !self->output_capped &&
      !sandbox_process_push_output (SANDBOX_PROCESS (self), stream, buffer, n))
    self->output_capped = TRUE;
  return n;
}

/**
 * sandbox_bubblewrap_process_read_output:
 * @self: a launched process
 * @stream: which output @fd carries
 * @fd: an output descriptor, non-blocking
 * @source: its watch
 *
 * Reads once from @fd; at its end (EOF, or an error such as a terminal's
 * EIO) closes it and destroys @source. Launcher thread.
 *
 * Returns: whether @source stays
 */
gboolean
sandbox_bubblewrap_process_read_output (SandboxBubblewrapProcess *self,
                                        SandboxOutputStream       stream,
                                        int                      *fd,
                                        GSource                 **source)
{
  gssize n = read_chunk (self, stream, *fd);

  if (n > 0 || (n < 0 && errno == EAGAIN))
    return G_SOURCE_CONTINUE;

  /* EOF, or an error that ends the stream just the same. */
  g_clear_pointer (source, g_source_unref);
  sandbox_bubblewrap_clear_fd (fd);
  maybe_finish (self);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_bubblewrap_process_drain_output:
 * @self: a process whose sandbox is empty
 * @stream: which output @fd carries
 * @fd: an output descriptor, non-blocking, or -1
 * @source: its watch
 *
 * Reads what @fd holds and closes it: once the stub reported its sandbox
 * empty, no writer of it is left but bwrap. Launcher thread.
 */
void
sandbox_bubblewrap_process_drain_output (SandboxBubblewrapProcess *self,
                                         SandboxOutputStream       stream,
                                         int                      *fd,
                                         GSource                 **source)
{
  sandbox_bubblewrap_source_destroy (source);
  if (*fd >= 0)
    while (read_chunk (self, stream, *fd) > 0)
      ;
  sandbox_bubblewrap_clear_fd (fd);
}

static gboolean
stdout_cb (int          fd,
           GIOCondition condition,
           gpointer     data)
{
  SandboxBubblewrapProcess *self = data;

  return sandbox_bubblewrap_process_read_output (self, SANDBOX_OUTPUT_STDOUT,
                                                 &self->stdout_fd, &self->stdout_source);
}

static gboolean
stderr_cb (int          fd,
           GIOCondition condition,
           gpointer     data)
{
  SandboxBubblewrapProcess *self = data;

  return sandbox_bubblewrap_process_read_output (self, SANDBOX_OUTPUT_STDERR,
                                                 &self->stderr_fd, &self->stderr_source);
}

/* bwrap's status and the namespace's init ----------------------------------- */

static gboolean
parse_child_pid (const char *status,
                 pid_t      *pid)
{
  const char *key = strstr (status, "\"child-pid\"");
  const char *p;
  guint64 value;
  char *end;

  if (key == NULL)
    return FALSE;
  p = key + strlen ("\"child-pid\"");
  while (*p == ' ' || *p == ':')
    p++;
  if (!g_ascii_isdigit (*p))
    return FALSE;
  value = g_ascii_strtoull (p, &end, 10);
  /* The number must be complete, not cut by a partial read. */
  if (*end == '\0' || value == 0 || value > G_MAXINT32)
    return FALSE;
  *pid = (pid_t) value;
  return TRUE;
}

/* bwrap reported the sandbox's first process: it created the sandbox. */
static void
learn_isolated (SandboxBubblewrapProcess *self)
{
  g_mutex_lock (&self->lock);
  self->isolated = TRUE;
  g_mutex_unlock (&self->lock);
}

/* Reads bwrap's status once. Returns FALSE at EOF, when the pipe is closed. */
static gboolean
read_status (SandboxBubblewrapProcess *self)
{
  char buffer[1024];
  gssize n;
  pid_t child_pid;

  n = TEMP_FAILURE_RETRY (read (self->status_fd, buffer, sizeof buffer));

  if (n < 0 && errno == EAGAIN)
    return TRUE;

  if (n <= 0)
    {
      sandbox_bubblewrap_source_destroy (&self->status_source);
      sandbox_bubblewrap_clear_fd (&self->status_fd);
      return FALSE;
    }

  if (self->status->len < STATUS_LIMIT)
    {
      g_string_append_len (self->status, buffer, n);
      if (parse_child_pid (self->status->str, &child_pid))
        learn_isolated (self);
    }
  return TRUE;
}

static gboolean
status_cb (int          fd,
           GIOCondition condition,
           gpointer     data)
{
  SandboxBubblewrapProcess *self = data;

  if (read_status (self))
    return G_SOURCE_CONTINUE;
  /* read_status() destroyed this source already. */
  return G_SOURCE_REMOVE;
}

/* After bwrap exited, everything it reported is in the pipe: read it, so a
 * child it reported is known before the process completes. */
static void
drain_status (SandboxBubblewrapProcess *self)
{
  int flags;

  if (self->status_fd < 0)
    return;
  flags = fcntl (self->status_fd, F_GETFL);
  while (self->status_fd >= 0)
    {
      gssize available;

      if (!read_status (self))
        break;
      /* Non-blocking: stop at EAGAIN, which read_status() reports as TRUE. */
      available = 0;
      if ((flags & O_NONBLOCK) == 0 || ioctl (self->status_fd, FIONREAD, &available) < 0 ||
          available == 0)
        break;
    }
}

static int
wait_status_to_exit_status (int wait_status)
{
  if (WIFEXITED (wait_status))
    return WEXITSTATUS (wait_status);
  if (WIFSIGNALED (wait_status))
    return 128 + WTERMSIG (wait_status);
  return 255;
}

static gboolean
bwrap_exited_cb (int          fd,
                 GIOCondition condition,
                 gpointer     data)
{
  SandboxBubblewrapProcess *self = data;
  int wait_status = 0;
  pid_t reaped;

  reaped = TEMP_FAILURE_RETRY (waitpid (self->bwrap_pid, &wait_status, WNOHANG));

  if (reaped == 0)
    return G_SOURCE_CONTINUE;

  /* reaped < 0 means someone else reaped it; the exit status is lost. A
   * status the stub reported stays: the command was over by then. */
  if (!self->reported)
    self->exit_status = reaped > 0 ? wait_status_to_exit_status (wait_status) : 255;
  if (reaped < 0)
    g_warning ("bwrap (pid %d) was reaped by someone else", (int) self->bwrap_pid);

  g_mutex_lock (&self->lock);
  self->bwrap_reaped = TRUE;
  g_mutex_unlock (&self->lock);

  g_clear_pointer (&self->bwrap_source, g_source_unref);
  maybe_finish (self);
  return G_SOURCE_REMOVE;
}

/* Launch ------------------------------------------------------------------ */

/**
 * sandbox_bubblewrap_process_watch_fd:
 * @self: a process
 * @fd: the descriptor to watch
 * @condition: for what
 * @callback: called with @self
 * @name: the source's name
 *
 * Returns: (transfer full): a source on the launcher thread's context
 */
GSource *
sandbox_bubblewrap_process_watch_fd (SandboxBubblewrapProcess *self,
                                     int                       fd,
                                     GIOCondition              condition,
                                     GUnixFDSourceFunc         callback,
                                     const char               *name)
{
  GSource *source = g_unix_fd_source_new (fd, condition);

  g_source_set_callback (source, G_SOURCE_FUNC (callback), self, NULL);
  g_source_set_static_name (source, name);
  g_source_attach (source, sandbox_bubblewrap_launcher_get_context ());
  return source;
}

typedef struct
{
  SandboxBubblewrapProcess *self;
  GError *error;
} LaunchCall;

/* A command started cold: bwrap now, with fresh pipes. */
static gboolean
start_cold (SandboxBubblewrapProcess   *self,
            SandboxBubblewrapLaunched  *launched,
            GError                    **error)
{
  SandboxBubblewrapSpawnExtras extras = SANDBOX_BUBBLEWRAP_SPAWN_EXTRAS_INIT;
  gboolean started;

  extras.limits = &self->limits;
  extras.guest_view = self->args->guest_view;
  extras.enter_pid = self->args->enter_pid;
  extras.network = &self->args->network;
  sandbox_bubblewrap_args_set_net_extras (self->args, &extras);
  extras.cgroup_procs_fds = self->cgroup != NULL
                            ? sandbox_bubblewrap_cgroup_get_procs_fds (self->cgroup) : NULL;
  started = sandbox_bubblewrap_launcher_start ((const char * const *) self->args->argv->pdata,
                                               self->args->fds, &extras, launched, error);
  /* bwrap has its copies now; ours would keep the pipes open forever. */
  g_array_set_size (self->args->fds, 0);
  return started;
}

/* Reads the stub's report (a StubReport, see stub/sandbox-stub-message.h)
 * once it is there. Returns FALSE while it is not (EAGAIN), TRUE once read
 * or once there is none to come (EOF: the stub died, killed with bwrap, or
 * could not tell). A cgroup-limited command records what the stub reported
 * but is over only once its whole tree has left the cgroup (bwrap's
 * reaping). */
static gboolean
read_report (SandboxBubblewrapProcess *self)
{
  StubReport report;
  gssize n;

  n = TEMP_FAILURE_RETRY (read (self->report_fd, &report, sizeof report));
  if (n < 0 && errno == EAGAIN)
    return FALSE;

  sandbox_bubblewrap_source_destroy (&self->report_source);
  sandbox_bubblewrap_clear_fd (&self->report_fd);
  if (n != sizeof report || report.status < 0 || report.status > 255 || report.exec_errno < 0)
    return TRUE;
  self->exec_errno = report.exec_errno;
  if (self->cgroup != NULL)
    return TRUE;
  self->reported = TRUE;
  self->exit_status = report.status;
  sandbox_bubblewrap_process_drain_output (self, SANDBOX_OUTPUT_STDOUT,
                                           &self->stdout_fd, &self->stdout_source);
  sandbox_bubblewrap_process_drain_output (self, SANDBOX_OUTPUT_STDERR,
                                           &self->stderr_fd, &self->stderr_source);
  return TRUE;
}

/* The stub's report: the guest's status once its sandbox is empty, or EOF
 * when there is none (then bwrap's reaping ends the command). */
static gboolean
report_cb (int          fd,
           GIOCondition condition,
           gpointer     data)
{
  SandboxBubblewrapProcess *self = data;

  if (!read_report (self))
    return G_SOURCE_CONTINUE;
  maybe_finish (self);
  return G_SOURCE_REMOVE;
}

/* A command in a ready sandbox: its stub gets the message, then EOF, and
 * reports back on the same socket. The message is at most
 * SANDBOX_BUBBLEWRAP_READY_MESSAGE_MAX, which the socket takes without
 * blocking. */
static void
deliver_message (SandboxBubblewrapProcess *self)
{
  gsize size;
  const char *data = g_bytes_get_data (self->message, &size);
  gsize sent = 0;

  while (sent < size)
    {
      gssize n = TEMP_FAILURE_RETRY (send (self->control_fd, data + sent, size - sent,
                                           MSG_NOSIGNAL));

      if (n <= 0)
        {
          int saved_errno = errno;
          g_autoptr(GError) failure =
            g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                         "Sandbox process could not start: its ready sandbox is gone: %s",
                         g_strerror (saved_errno));

          sandbox_process_abort (SANDBOX_PROCESS (self), failure);
          sandbox_bubblewrap_process_kill_tree (self);
          sandbox_bubblewrap_clear_fd (&self->control_fd);
          return;
        }
      sent += n;
    }
  if (shutdown (self->control_fd, SHUT_WR) < 0)
    {
      /* No EOF, no command: the stub would wait forever. */
      sandbox_bubblewrap_process_kill_tree (self);
      sandbox_bubblewrap_clear_fd (&self->control_fd);
      return;
    }
  self->report_fd = g_steal_fd (&self->control_fd);
  self->report_source = sandbox_bubblewrap_process_watch_fd (self, self->report_fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                  report_cb, "[sandbox] stub report");
}

static gboolean
launch_on_launcher (SandboxBubblewrapProcess  *self,
                    GError                   **error)
{
  SandboxBubblewrapLaunched launched = SANDBOX_BUBBLEWRAP_LAUNCHED_INIT;
  gboolean hot = self->taken.pid != 0;
  GPid pid;
  int pidfd;

  g_mutex_lock (&self->lock);
  if (self->kill_requested)
    {
      g_mutex_unlock (&self->lock);
      return sandbox_set_error_stopped (error);
    }
  g_mutex_unlock (&self->lock);

  if (hot)
    {
      launched = self->taken;
      self->taken = (SandboxBubblewrapLaunched) SANDBOX_BUBBLEWRAP_LAUNCHED_INIT;
    }
  else if (!start_cold (self, &launched, error))
    return FALSE;
  self->stdin_fd = launched.stdin_fd;
  self->stdout_fd = launched.stdout_fd;
  self->stderr_fd = launched.stderr_fd;
  pid = launched.pid;
  pidfd = launched.pidfd;

  g_mutex_lock (&self->lock);
  self->bwrap_pid = pid;
  self->bwrap_pidfd = pidfd;
  /* A kill that came while bwrap was being spawned. */
  if (self->kill_requested)
    signal_tree_locked (self);
  g_mutex_unlock (&self->lock);

  /* From here on the launcher thread owns a reference until maybe_finish(). */
  g_object_ref (self);
  if (self->trees != NULL)
    sandbox_bubblewrap_trees_enter (self->trees);
  self->bwrap_source = sandbox_bubblewrap_process_watch_fd (self, pidfd, G_IO_IN, bwrap_exited_cb, "[sandbox] bwrap exit");
  self->status_source = sandbox_bubblewrap_process_watch_fd (self, self->status_fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                  status_cb, "[sandbox] bwrap status");
  self->stdout_source = sandbox_bubblewrap_process_watch_fd (self, self->stdout_fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                  stdout_cb, "[sandbox] command stdout");
  self->stderr_source = sandbox_bubblewrap_process_watch_fd (self, self->stderr_fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                  stderr_cb, "[sandbox] command stderr");

  sandbox_bubblewrap_process_start_stdin (self);
  if (self->handoff != NULL)
    self->handoff_source = sandbox_bubblewrap_process_watch_fd (self, g_socket_get_fd (self->handoff),
                                     G_IO_IN | G_IO_HUP | G_IO_ERR,
                                     sandbox_bubblewrap_process_handoff_cb,
                                     "[sandbox] stub handoff");
  if (hot)
    deliver_message (self);
  else if (self->report_fd >= 0)
    self->report_source = sandbox_bubblewrap_process_watch_fd (self, self->report_fd, G_IO_IN | G_IO_HUP | G_IO_ERR,
                                    report_cb, "[sandbox] stub report");
  return TRUE;
}

static gboolean
launch_cb (gpointer data)
{
  LaunchCall *call = data;

  if (!launch_on_launcher (call->self, &call->error))
    close_everything (call->self);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_bubblewrap_process_launch:
 * @self: a process not launched yet
 * @error: return location for a #GError
 *
 * Spawns bwrap on the launcher thread and waits only for the spawn itself,
 * not for the command. On failure the admission slot is not released: the
 * caller withdraws it. Fails with %SANDBOX_ERROR_STOPPED if the process was killed before
 * it started, and %SANDBOX_ERROR_UNAVAILABLE if bwrap could not be spawned.
 *
 * Returns: %TRUE once bwrap runs
 */
gboolean
sandbox_bubblewrap_process_launch (SandboxBubblewrapProcess  *self,
                                   GError                   **error)
{
  LaunchCall call = { .self = self };

  sandbox_bubblewrap_launcher_run_sync (launch_cb, &call);
  if (call.error != NULL)
    {
      g_propagate_error (error, call.error);
      return FALSE;
    }
  return TRUE;
}

static void
sandbox_bubblewrap_process_finalize (GObject *object)
{
  SandboxBubblewrapProcess *self = SANDBOX_BUBBLEWRAP_PROCESS (object);

  close_everything (self);
  /* A ready sandbox taken for a command that never launched. */
  sandbox_bubblewrap_launched_kill_and_reap (&self->taken);
  sandbox_bubblewrap_clear_fd (&self->control_fd);
  g_clear_pointer (&self->message, g_bytes_unref);
  g_clear_pointer (&self->args, sandbox_bubblewrap_args_free);
  g_clear_pointer (&self->cgroup, sandbox_bubblewrap_cgroup_free);
  g_clear_pointer (&self->trees, sandbox_bubblewrap_trees_unref);
  g_clear_pointer (&self->stdin_bytes, g_bytes_unref);
  g_clear_object (&self->owner);
  g_clear_object (&self->gateway);
  g_string_free (self->status, TRUE);
  g_mutex_clear (&self->lock);

  G_OBJECT_CLASS (sandbox_bubblewrap_process_parent_class)->finalize (object);
}

static void
sandbox_bubblewrap_process_class_init (SandboxBubblewrapProcessClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SandboxProcessClass *process_class = SANDBOX_PROCESS_CLASS (klass);

  object_class->finalize = sandbox_bubblewrap_process_finalize;
  process_class->kill = sandbox_bubblewrap_process_kill;
  process_class->send_signal = sandbox_bubblewrap_process_send_signal;
  process_class->resize_terminal = sandbox_bubblewrap_process_resize_terminal;
}

static void
sandbox_bubblewrap_process_class_finalize (SandboxBubblewrapProcessClass *klass)
{
}

static void
sandbox_bubblewrap_process_init (SandboxBubblewrapProcess *self)
{
  g_mutex_init (&self->lock);
  self->status = g_string_new (NULL);
  self->status_fd = -1;
  self->stdin_fd = -1;
  self->stdin_reader = -1;
  self->stdout_fd = -1;
  self->stderr_fd = -1;
  self->terminal_fd = -1;
  self->terminal_control_fd = -1;
  self->guest_pidfd = -1;
  self->bwrap_pidfd = -1;
  self->control_fd = -1;
  self->report_fd = -1;
  self->taken = (SandboxBubblewrapLaunched) SANDBOX_BUBBLEWRAP_LAUNCHED_INIT;
}

/**
 * sandbox_bubblewrap_process_register:
 * @module: the driver module
 *
 * Registers #SandboxBubblewrapProcess with @module.
 */
void
sandbox_bubblewrap_process_register (GTypeModule *module)
{
  sandbox_bubblewrap_process_register_type (module);
}
