/* sandbox-bubblewrap-launcher.c — the long-lived thread bwrap is spawned from
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sandbox-bubblewrap-launcher-child-private.h"
#include "sandbox-bubblewrap-limits-private.h"
#include "sandbox-bubblewrap-stub-private.h"

/*
 * bwrap's --die-with-parent is PR_SET_PDEATHSIG, which fires when the
 * *thread* that forked bwrap exits, not the process. Commands are spawned
 * from threads that come and go (GTask pools, application threads), so every
 * bwrap is spawned from this one thread, which lives as long as the process.
 * It also runs the main context that reads command output and reaps bwrap,
 * so a command costs no extra thread.
 */

typedef struct
{
  GMainContext *context;
  GThread *thread;
} Launcher;

static gpointer
launcher_thread_main (gpointer data)
{
  Launcher *launcher = data;
  g_autoptr(GMainLoop) loop = NULL;
  sigset_t blocked;

  /* A guest that closes its stdin makes our write fail with EPIPE; blocked,
   * SIGPIPE stays pending on this thread instead of killing the process.
   * Spawned children reset their signal mask (child_reset_signals()). */
  sigemptyset (&blocked);
  sigaddset (&blocked, SIGPIPE);
  pthread_sigmask (SIG_BLOCK, &blocked, NULL);

  g_main_context_push_thread_default (launcher->context);
  loop = g_main_loop_new (launcher->context, FALSE);
  g_main_loop_run (loop);   /* never quits */
  return NULL;
}

static Launcher *
launcher_get (void)
{
  static gsize initialized = 0;
  static Launcher launcher;

  if (g_once_init_enter (&initialized))
    {
      launcher.context = g_main_context_new ();
      launcher.thread = g_thread_new ("sandbox-bwrap", launcher_thread_main, &launcher);
      g_once_init_leave (&initialized, 1);
    }
  return &launcher;
}

/**
 * sandbox_bubblewrap_launcher_get_context:
 *
 * Returns: (transfer none): the launcher thread's main context, which owns
 *   every command's pipes and bwrap's reaping
 */
GMainContext *
sandbox_bubblewrap_launcher_get_context (void)
{
  return launcher_get ()->context;
}

/**
 * sandbox_bubblewrap_launcher_is_current:
 *
 * Returns: whether the caller runs on the launcher thread
 */
gboolean
sandbox_bubblewrap_launcher_is_current (void)
{
  return g_thread_self () == launcher_get ()->thread;
}

typedef struct
{
  GMutex mutex;
  GCond cond;
  GSourceFunc func;
  gpointer data;
  gboolean done;
} SyncCall;

static gboolean
sync_call_cb (gpointer data)
{
  SyncCall *call = data;

  call->func (call->data);
  g_mutex_lock (&call->mutex);
  call->done = TRUE;
  g_cond_signal (&call->cond);
  g_mutex_unlock (&call->mutex);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_bubblewrap_launcher_run_sync:
 * @func: what to run; its return value is ignored
 * @data: data for @func
 *
 * Runs @func on the launcher thread and waits for it to return.
 */
void
sandbox_bubblewrap_launcher_run_sync (GSourceFunc func,
                                      gpointer    data)
{
  SyncCall call = { .func = func, .data = data };

  if (sandbox_bubblewrap_launcher_is_current ())
    {
      func (data);
      return;
    }

  g_mutex_init (&call.mutex);
  g_cond_init (&call.cond);
  g_main_context_invoke_full (sandbox_bubblewrap_launcher_get_context (),
                              G_PRIORITY_HIGH, sync_call_cb, &call, NULL);
  g_mutex_lock (&call.mutex);
  while (!call.done)
    g_cond_wait (&call.cond, &call.mutex);
  g_mutex_unlock (&call.mutex);
  g_mutex_clear (&call.mutex);
  g_cond_clear (&call.cond);
}

/*
 * Spawning bwrap so that a crash of the host leaves nothing running
 *
 * `--die-with-parent` is bwrap's PR_SET_PDEATHSIG, armed in three places
 * (bwrap 0.8, bubblewrap.c), each with a window before it:
 *
 * 1. bwrap itself (the monitor) arms it only after it parsed its arguments
 *    and cloned the sandbox (the parent branch after raw_clone()). A host
 *    that dies before that leaves a bwrap that goes on with the setup.
 * 2. The sandbox's first process, the init of its pid namespace, arms it
 *    in do_init(), after the whole mount setup and after forking the
 *    command. If the monitor dies before that — because the host died and
 *    took the monitor with it — the init and the command run on under
 *    pid 1 forever, holding the workspace lock (bubblewrap issue 633). If
 *    the monitor dies before it released the child (child_wait_fd), the
 *    child instead waits on that eventfd forever.
 * 3. The command arms it just before exec, relative to the init; the init
 *    dying kills the whole namespace anyway.
 *
 * No bwrap option closes window 2: --block-fd and --userns-block-fd go on
 * at EOF (and the latter is refused with --disable-userns), --sync-fd only
 * reports. So the launcher closes both windows itself:
 *
 * - bwrap runs as the init of a pid namespace of its own (the "wrapper"),
 *   created by clone() right here. Everything bwrap creates — the sandbox's
 *   init and every guest process, whose pid namespace is nested in the
 *   wrapper's — is a member of the wrapper namespace, and the kernel kills
 *   every member of a pid namespace when its init dies. So once bwrap dies,
 *   by any cause at any point of its setup, nothing of it is left; and bwrap
 *   is reaped only after every member is gone.
 * - bwrap's PR_SET_PDEATHSIG is armed before exec (it survives exec of a
 *   binary that is not set-id), after any credential change (which would
 *   clear it), and then the parent is checked to still be the host: if
 *   the host died before the prctl, the child is already an orphan and
 *   exits instead of exec'ing.
 *
 * The wrapper also gets a mount namespace with a /proc of its own pid
 * namespace, since bwrap reads /proc/<pid> with pids of its own namespace
 * (namespace_ids_read() dies without it). The host's mounts are made
 * slaves first, so that mount never reaches the host; the wrapper also
 * drops /sys, which bwrap has no use for and pays for on every bind (see
 * child_trim_host_mounts() in sandbox-bubblewrap-launcher-child.c). Unprivileged, the
 * wrapper needs a user namespace for both; it maps only the host's own
 * uid and gid to themselves, so bwrap runs with the same ids and, after
 * exec as a non-zero uid, without capabilities, exactly as before.
 */

static const char *
child_step_describe (ChildStep step)
{
  switch (step)
    {
    case STEP_SIGNALS: return "reset signals";
    case STEP_ENTER: return "enter the namespaces of the session's overlay";
    case STEP_ENTER_NET: return "enter the session's network namespace";
    case STEP_PROCESS_GROUP: return "create its process group";
    case STEP_CGROUPS: return "join its cgroups";
    case STEP_ID_MAPS: return "map its ids in the wrapper user namespace";
    case STEP_PROC: return "mount /proc in the wrapper namespace";
    case STEP_GUEST_VIEW: return "give the guest its way to the workspace";
    case STEP_GUEST_IDS: return "switch to the guest's ids";
    case STEP_PARENT_DEATH_SIGNAL: return "arm its parent-death signal";
    case STEP_DESCRIPTORS: return "place its descriptors";
    case STEP_RLIMITS: return "set its resource limits";
    case STEP_EXEC: default: return "execute";
    }
}

/* The dup2() calls run in order: 0, 1, 2, then 3…. None may clobber a source
 * a later call still needs, so stdio sources must be above 2 and passed
 * sources above the last passed target. */
static gboolean
fds_are_placeable (int     stdin_fd,
                   int     stdout_fd,
                   int     stderr_fd,
                   GArray *passed_fds)
{
  if (stdin_fd < 3 || stdout_fd < 3 || stderr_fd < 3)
    return FALSE;
  for (guint i = 0; i < passed_fds->len; i++)
    if (g_array_index (passed_fds, int, i) < 3 + (int) passed_fds->len)
      return FALSE;
  return TRUE;
}

/* Where the child's report pipe sits: above the stdio and passed
 * descriptors (which are at or above 3 but kept below 64). */
#define REPORT_FD_FLOOR 64

/* The rlimits @limits asks for, ready for the child to copy in. */
static void
setup_rlimits (ChildSetup                    *setup,
               const SandboxBubblewrapLimits *limits)
{
  guint n = 0;

  if (limits == NULL || !sandbox_bubblewrap_limits_has_rlimits (limits))
    return;
  if (limits->max_file_size > 0)
    {
      setup->resources[n] = RLIMIT_FSIZE;
      setup->rlimits[n++] = (struct rlimit) { limits->max_file_size, limits->max_file_size };
    }
  if (limits->max_open_files > 0)
    {
      setup->resources[n] = RLIMIT_NOFILE;
      setup->rlimits[n++] = (struct rlimit) { limits->max_open_files, limits->max_open_files };
    }
  if (limits->max_address_space > 0)
    {
      setup->resources[n] = RLIMIT_AS;
      setup->rlimits[n++] = (struct rlimit) { limits->max_address_space, limits->max_address_space };
    }
  setup->resources[n] = RLIMIT_CORE;
  setup->rlimits[n++] = (struct rlimit) { 0, 0 };
  setup->n_rlimits = n;
}

/* The wrapper's namespaces: a pid namespace bwrap is the init of, and a
 * mount namespace for its /proc; unprivileged, a user namespace to own
 * them. */
static int
wrapper_clone_flags (const ChildSetup *setup)
{
  /* In a keeper's user namespace, whose the namespaces then are. */
  if (setup->enter_pidfd >= 0 || (setup->net_flags & CLONE_NEWUSER) != 0)
    return CLONE_NEWPID | CLONE_NEWNS;
  return CLONE_NEWPID | CLONE_NEWNS | (geteuid () == 0 ? 0 : CLONE_NEWUSER);
}

/* The host's /proc, where the child finds its own stat whatever /proc its
 * namespace shows (a keeper's shows another pid namespace's). */
static int
host_proc_fd (void)
{
  static int fd = -1;

  if (fd < 0)
    fd = open ("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  return fd;
}

/* The intermediate child has exited: reaps it and returns bwrap's pid
 * (0 when it made none). */
static pid_t
reap_intermediate (ChildSetup *setup,
                   pid_t       intermediate)
{
  TEMP_FAILURE_RETRY (waitpid (intermediate, NULL, 0));
  return setup->entered_pid;
}

/* Runs the child's setup in a clone of this process. Returns its pid, or 0
 * with @error set (the child is reaped then). */
static GPid
spawn_child (ChildSetup  *setup,
             GError     **error)
{
  ChildReport report = { 0 };
  sigset_t all, previous;
  int report_pipe[2];
  int clone_errno;
  gssize got;
  pid_t pid;

  if (pipe2 (report_pipe, O_CLOEXEC) < 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: pipe: %s", g_strerror (errno));
      return 0;
    }
  /* Above every descriptor the child places, which it can then close. */
  setup->report_fd = fcntl (report_pipe[1], F_DUPFD_CLOEXEC, REPORT_FD_FLOOR);
  close (report_pipe[1]);
  if (setup->report_fd < 0)
    {
      int saved_errno = errno;

      close (report_pipe[0]);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: %s", g_strerror (saved_errno));
      return 0;
    }

  /* No handler of ours may run in the child before it resets them. */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &previous);
  pid = sandbox_bubblewrap_launcher_clone_child (setup);
  clone_errno = errno;
  pthread_sigmask (SIG_SETMASK, &previous, NULL);
  close (setup->report_fd);

  if (pid < 0)
    {
      close (report_pipe[0]);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: could not create its pid namespace: %s",
                   g_strerror (clone_errno));
      return 0;
    }
  if (setup->enter_pidfd >= 0 || setup->net_pidfd >= 0)
    pid = reap_intermediate (setup, pid);

  got = TEMP_FAILURE_RETRY (read (report_pipe[0], &report, sizeof report));
  close (report_pipe[0]);
  if (got > 0 || pid == 0)
    {
      if (pid > 0)
        waitpid (pid, NULL, 0);
      if (got <= 0)
        report = (ChildReport) { STEP_ENTER, ECHILD };
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: could not %s: %s%s%s",
                   child_step_describe (report.step),
                   report.step == STEP_EXEC ? setup->argv[0] : "",
                   report.step == STEP_EXEC ? ": " : "",
                   g_strerror (report.errno_value));
      return 0;
    }
  return pid;
}

/* A pidfd of @pid, whose namespaces the child enters at @step; or -1 with
 * %SANDBOX_ERROR_UNAVAILABLE saying the step could not be taken. */
static int
open_step_pidfd (pid_t       pid,
                 ChildStep   step,
                 GError    **error)
{
  int pidfd = pidfd_open (pid, 0);

  if (pidfd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: could not %s: %s",
                   child_step_describe (step), g_strerror (saved_errno));
    }
  return pidfd;
}

/**
 * sandbox_bubblewrap_launcher_spawn:
 * @argv: the bwrap command line; argv[0] is the executable
 * @stdin_fd: becomes bwrap's fd 0
 * @stdout_fd: becomes bwrap's fd 1
 * @stderr_fd: becomes bwrap's fd 2
 * @passed_fds: (element-type int): become bwrap's fds 3, 4, …
 * @extras: (nullable): rlimits and cgroups for bwrap's process
 * @error: return location for a #GError
 *
 * Starts bwrap with an empty environment in a new process group, as the
 * init of a pid namespace of its own and with SIGKILL armed for when this
 * thread dies (see above), so that nothing bwrap starts can outlive it or
 * the host, and as the guest's ids when @extras names them. Must run on the
 * launcher thread. The caller keeps its
 * descriptors and must reap the child; killing it (SIGKILL) kills every
 * process of the sandbox.
 *
 * Returns: the pid of bwrap, or 0 with %SANDBOX_ERROR_UNAVAILABLE
 */
GPid
sandbox_bubblewrap_launcher_spawn (const char * const *argv,
                                   int                 stdin_fd,
                                   int                 stdout_fd,
                                   int                 stderr_fd,
                                   GArray             *passed_fds,
                                   const SandboxBubblewrapSpawnExtras *extras,
                                   GError            **error)
{
  ChildSetup setup = {
    .argv = argv,
    .stdin_fd = stdin_fd,
    .stdout_fd = stdout_fd,
    .stderr_fd = stderr_fd,
    .passed_fds = passed_fds,
    .cgroup_procs_fds = extras != NULL ? extras->cgroup_procs_fds : NULL,
    .guest_view = extras != NULL ? extras->guest_view : NULL,
    .host_pid = getpid (),
    .host_proc_fd = host_proc_fd (),
    .report_fd = -1,
    .enter_pidfd = -1,
    .net_pidfd = -1,
  };
  g_auto(SandboxBubblewrapFd) enter_pidfd = -1;
  g_auto(SandboxBubblewrapFd) net_pidfd = -1;
  GPid pid;

  g_assert (sandbox_bubblewrap_launcher_is_current ());

  if (!fds_are_placeable (stdin_fd, stdout_fd, stderr_fd, passed_fds))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: its descriptors overlap "
                   "the numbers bwrap receives them at");
      return 0;
    }

  setup_rlimits (&setup, extras != NULL ? extras->limits : NULL);
  g_snprintf (setup.uid_map, sizeof setup.uid_map, "%u %u 1\n",
              (guint) geteuid (), (guint) geteuid ());
  g_snprintf (setup.gid_map, sizeof setup.gid_map, "%u %u 1\n",
              (guint) getegid (), (guint) getegid ());
  if (extras != NULL && extras->enter_pid > 0)
    {
      enter_pidfd = open_step_pidfd (extras->enter_pid, STEP_ENTER, error);
      if (enter_pidfd < 0)
        return 0;
      setup.enter_pidfd = enter_pidfd;
    }
  if (extras != NULL && extras->net_pid > 0)
    {
      net_pidfd = open_step_pidfd (extras->net_pid, STEP_ENTER_NET, error);
      if (net_pidfd < 0)
        return 0;
      setup.net_pidfd = net_pidfd;
      setup.net_flags = CLONE_NEWNET | (extras->net_owns_user ? CLONE_NEWUSER : 0);
      /* Root enters the network keeper's namespace while it is still in
       * the initial user namespace, which owns it; anyone else from the
       * keeper's user namespace, which owns the network keeper's. */
      setup.net_first = geteuid () == 0 || enter_pidfd < 0;
    }
  setup.clone_flags = wrapper_clone_flags (&setup);
  pid = spawn_child (&setup, error);
  return pid;
}

/**
 * sandbox_bubblewrap_launcher_open_pipe:
 * @fds: (out caller-allocates): the read and write ends
 * @nonblocking_read: whether the read end is non-blocking
 * @nonblocking_write: whether the write end is non-blocking
 * @error: return location for a #GError
 *
 * pipe2() with both ends close-on-exec.
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_UNAVAILABLE
 */
gboolean
sandbox_bubblewrap_launcher_open_pipe (int       fds[2],
                                       gboolean  nonblocking_read,
                                       gboolean  nonblocking_write,
                                       GError  **error)
{
  if (pipe2 (fds, O_CLOEXEC) < 0)
    {
      int saved_errno = errno;

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: pipe: %s", g_strerror (saved_errno));
      return FALSE;
    }
  if (nonblocking_read)
    fcntl (fds[0], F_SETFL, O_NONBLOCK);
  if (nonblocking_write)
    fcntl (fds[1], F_SETFL, O_NONBLOCK);
  return TRUE;
}

/* Moves @fd to a number of at least @minimum, keeping close-on-exec. */
static int
move_fd_to_at_least (int fd,
                     int minimum)
{
  int moved;

  if (fd < 0 || fd >= minimum)
    return fd;
  moved = fcntl (fd, F_DUPFD_CLOEXEC, minimum);
  close (fd);
  return moved;
}

/**
 * sandbox_bubblewrap_launched_close_pipes:
 * @launched: a started bwrap
 *
 * Closes our ends of its pipes (not the pidfd).
 */
void
sandbox_bubblewrap_launched_close_pipes (SandboxBubblewrapLaunched *launched)
{
  sandbox_bubblewrap_clear_fd (&launched->stdin_fd);
  sandbox_bubblewrap_clear_fd (&launched->stdout_fd);
  sandbox_bubblewrap_clear_fd (&launched->stderr_fd);
}

/**
 * sandbox_bubblewrap_launched_kill_and_reap:
 * @launched: a started bwrap nobody else reaps
 *
 * SIGKILLs it (and with it the whole sandbox), reaps it and closes
 * everything; @launched is then empty. Any thread.
 */
void
sandbox_bubblewrap_launched_kill_and_reap (SandboxBubblewrapLaunched *launched)
{
  if (launched->pid != 0)
    {
      pidfd_send_signal (launched->pidfd, SIGKILL, NULL, 0);
      TEMP_FAILURE_RETRY (waitpid (launched->pid, NULL, 0));
      launched->pid = 0;
    }
  sandbox_bubblewrap_clear_fd (&launched->pidfd);
  sandbox_bubblewrap_launched_close_pipes (launched);
}

/**
 * sandbox_bubblewrap_launcher_start:
 * @argv: the bwrap command line; argv[0] is the executable
 * @passed_fds: (element-type int): become bwrap's fds 3, 4, … (the caller
 *   keeps and closes its own)
 * @extras: (nullable): as for sandbox_bubblewrap_launcher_spawn()
 * @launched: (out caller-allocates): the started bwrap
 * @error: return location for a #GError
 *
 * sandbox_bubblewrap_launcher_spawn() with fresh pipes at bwrap's 0, 1 and
 * 2 and a pidfd on it. Must run on the launcher thread.
 *
 * Returns: %TRUE once bwrap runs, or %FALSE with %SANDBOX_ERROR_UNAVAILABLE
 */
gboolean
sandbox_bubblewrap_launcher_start (const char * const                 *argv,
                                   GArray                             *passed_fds,
                                   const SandboxBubblewrapSpawnExtras *extras,
                                   SandboxBubblewrapLaunched          *launched,
                                   GError                            **error)
{
  g_auto(SandboxBubblewrapFd) stdin_read = -1;
  g_auto(SandboxBubblewrapFd) stdout_write = -1;
  g_auto(SandboxBubblewrapFd) stderr_write = -1;
  int stdin_pipe[2], stdout_pipe[2], stderr_pipe[2];

  *launched = (SandboxBubblewrapLaunched) SANDBOX_BUBBLEWRAP_LAUNCHED_INIT;
  if (!sandbox_bubblewrap_launcher_open_pipe (stdin_pipe, FALSE, TRUE, error))
    return FALSE;
  stdin_read = move_fd_to_at_least (stdin_pipe[0], 3);
  launched->stdin_fd = stdin_pipe[1];
  if (!sandbox_bubblewrap_launcher_open_pipe (stdout_pipe, TRUE, FALSE, error))
    goto fail;
  launched->stdout_fd = stdout_pipe[0];
  stdout_write = move_fd_to_at_least (stdout_pipe[1], 3);
  if (!sandbox_bubblewrap_launcher_open_pipe (stderr_pipe, TRUE, FALSE, error))
    goto fail;
  launched->stderr_fd = stderr_pipe[0];
  stderr_write = move_fd_to_at_least (stderr_pipe[1], 3);

  launched->pid = sandbox_bubblewrap_launcher_spawn (argv, stdin_read, stdout_write, stderr_write,
                                                     passed_fds, extras, error);
  if (launched->pid == 0)
    goto fail;
  launched->pidfd = pidfd_open (launched->pid, 0);
  if (launched->pidfd < 0)
    {
      int saved_errno = errno;

      kill (launched->pid, SIGKILL);   /* not reaped yet: the pid is still ours */
      waitpid (launched->pid, NULL, 0);
      launched->pid = 0;
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: pidfd_open: %s", g_strerror (saved_errno));
      goto fail;
    }
  if (extras != NULL && extras->network != NULL && *extras->network != NULL)
    sandbox_bubblewrap_network_attach (g_steal_pointer (extras->network), launched->pid,
                                       launched->pidfd);
  return TRUE;

fail:
  sandbox_bubblewrap_launched_close_pipes (launched);
  return FALSE;
}

typedef struct
{
  const char * const *argv;
  int socket_fd;
  GArray *passed_fds;
  const SandboxBubblewrapSpawnExtras *extras;
  GPid pid;
  GError *error;
} SpawnHelperCall;

static gboolean
spawn_helper_cb (gpointer data)
{
  SpawnHelperCall *call = data;

  call->pid = sandbox_bubblewrap_launcher_spawn (call->argv, call->socket_fd, call->socket_fd,
                                                 call->socket_fd, call->passed_fds,
                                                 call->extras, &call->error);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_bubblewrap_launcher_spawn_stub:
 * @options: (array zero-terminated=1): the stub's arguments, its mode first
 * @socket_fd: its socket to the host, which becomes its 0, 1 and 2: above
 *   2 (kept by the caller)
 * @extras: (nullable): as for sandbox_bubblewrap_launcher_spawn()
 * @error: return location for a #GError
 *
 * The trusted stub in a mode of its own (a session's keeper or network
 * keeper, which outlive the call: the caller reaps them), through
 * sandbox_bubblewrap_launcher_spawn() on the launcher thread, from any
 * thread.
 *
 * Returns: its pid, or 0 with %SANDBOX_ERROR_UNAVAILABLE
 */
GPid
sandbox_bubblewrap_launcher_spawn_stub (const char * const                 *options,
                                        int                                 socket_fd,
                                        const SandboxBubblewrapSpawnExtras *extras,
                                        GError                            **error)
{
  g_autoptr(GArray) passed_fds = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_auto(SandboxBubblewrapFd) stub_fd = sandbox_bubblewrap_stub_open (error);
  SpawnHelperCall call = {
    .socket_fd = socket_fd,
    .passed_fds = passed_fds,
    .extras = extras,
  };

  if (stub_fd < 0)
    return 0;
  /* Above 3, where the child places it (the rule of fds_are_placeable()). */
  if (stub_fd < 4)
    {
      int moved = fcntl (stub_fd, F_DUPFD_CLOEXEC, 4);

      sandbox_bubblewrap_fd_close (stub_fd);
      stub_fd = moved;
      if (stub_fd < 0)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       "Could not start the sandbox stub: %s", g_strerror (errno));
          return 0;
        }
    }
  g_array_append_val (passed_fds, stub_fd);
  g_ptr_array_add (argv, (char *) "/proc/self/fd/3");
  for (guint i = 0; options[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) options[i]);
  g_ptr_array_add (argv, NULL);
  call.argv = (const char * const *) argv->pdata;
  sandbox_bubblewrap_launcher_run_sync (spawn_helper_cb, &call);
  if (call.pid == 0)
    g_propagate_error (error, call.error);
  return call.pid;
}
