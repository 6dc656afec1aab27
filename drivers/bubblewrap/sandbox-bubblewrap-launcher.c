/* sandbox-bubblewrap-launcher.c — the long-lived thread bwrap is spawned from
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-limits-private.h"

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
   * Spawned children get an empty signal mask (POSIX_SPAWN_SETSIGMASK). */
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

typedef struct
{
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
} SpawnSetup;

static void
spawn_setup_clear (SpawnSetup *setup)
{
  posix_spawn_file_actions_destroy (&setup->actions);
  posix_spawnattr_destroy (&setup->attr);
}

/* Fills in how bwrap starts: its own process group, default signal
 * dispositions, an empty signal mask, the pipes at 0, 1 and 2, the passed
 * descriptors at 3… and every other descriptor closed — whatever other
 * threads of the application leave without O_CLOEXEC never reaches bwrap. */
static int
spawn_setup_init (SpawnSetup *setup,
                  int         stdin_fd,
                  int         stdout_fd,
                  int         stderr_fd,
                  GArray     *passed_fds)
{
  sigset_t mask;
  sigset_t defaults;
  int error = 0;

  posix_spawn_file_actions_init (&setup->actions);
  posix_spawnattr_init (&setup->attr);

  sigemptyset (&mask);
  sigfillset (&defaults);
  error = error ? error : posix_spawnattr_setflags (&setup->attr,
                                                    POSIX_SPAWN_SETPGROUP |
                                                    POSIX_SPAWN_SETSIGMASK |
                                                    POSIX_SPAWN_SETSIGDEF);
  error = error ? error : posix_spawnattr_setpgroup (&setup->attr, 0);
  error = error ? error : posix_spawnattr_setsigmask (&setup->attr, &mask);
  error = error ? error : posix_spawnattr_setsigdefault (&setup->attr, &defaults);

  error = error ? error : posix_spawn_file_actions_adddup2 (&setup->actions, stdin_fd, 0);
  error = error ? error : posix_spawn_file_actions_adddup2 (&setup->actions, stdout_fd, 1);
  error = error ? error : posix_spawn_file_actions_adddup2 (&setup->actions, stderr_fd, 2);
  for (guint i = 0; i < passed_fds->len; i++)
    error = error ? error : posix_spawn_file_actions_adddup2 (&setup->actions,
                                                              g_array_index (passed_fds, int, i),
                                                              3 + (int) i);
  error = error ? error : posix_spawn_file_actions_addclosefrom_np (&setup->actions,
                                                                    3 + (int) passed_fds->len);
  return error;
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

/* Where the fork path's error pipe sits in the child: above the stdio and
 * passed descriptors (which are at or above 3 but kept below 64). */
#define REPORT_FD_FLOOR 64

static gboolean
extras_needed (const SandboxBubblewrapSpawnExtras *extras)
{
  return extras != NULL &&
         ((extras->limits != NULL && sandbox_bubblewrap_limits_has_rlimits (extras->limits)) ||
          (extras->cgroup_procs_fds != NULL && extras->cgroup_procs_fds->len > 0) ||
          extras->guest_view != NULL);
}

/* In the forked child: only async-signal-safe calls. Reports errno on
 * @report_fd and exits on failure. */
static void G_GNUC_NORETURN
child_exec (const char * const                  *argv,
            int                                  stdin_fd,
            int                                  stdout_fd,
            int                                  stderr_fd,
            GArray                              *passed_fds,
            const SandboxBubblewrapSpawnExtras  *extras,
            const struct rlimit                 *rlimits,
            const int                           *resources,
            guint                                n_rlimits,
            int                                  report_fd)
{
  static char *const empty_environment[] = { NULL };
  struct sigaction default_action = { .sa_handler = SIG_DFL };
  sigset_t mask;
  int saved_errno;

  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction (sig, &default_action, NULL);
  sigemptyset (&mask);
  if (setpgid (0, 0) < 0 || sigprocmask (SIG_SETMASK, &mask, NULL) < 0)
    goto fail;

  /* Join the command's cgroups: everything bwrap starts stays in them. */
  for (guint i = 0; extras->cgroup_procs_fds != NULL && i < extras->cgroup_procs_fds->len; i++)
    if (write (g_array_index (extras->cgroup_procs_fds, int, i), "0", 1) != 1)
      goto fail;

  /* Still with the host's privileges: the guest's way to its workspace. */
  if (extras->guest_view != NULL && !sandbox_bubblewrap_guest_view_enter (extras->guest_view))
    goto fail;

  if (dup2 (stdin_fd, 0) < 0 || dup2 (stdout_fd, 1) < 0 || dup2 (stderr_fd, 2) < 0)
    goto fail;
  for (guint i = 0; i < passed_fds->len; i++)
    if (dup2 (g_array_index (passed_fds, int, i), 3 + (int) i) < 0)
      goto fail;
  /* Everything else goes, but the report pipe (close-on-exec) stays
   * until exec. */
  if (close_range (3 + passed_fds->len, report_fd - 1, 0) < 0 ||
      close_range (report_fd + 1, ~0U, 0) < 0)
    goto fail;

  for (guint i = 0; i < n_rlimits; i++)
    if (setrlimit (resources[i], &rlimits[i]) < 0)
      goto fail;

  /* Last: the guest's ids (this resets anything tied to credentials). */
  if (extras->guest_view != NULL && !sandbox_bubblewrap_guest_switch_ids (extras->guest_view))
    goto fail;

  execve (argv[0], (char * const *) argv, empty_environment);

fail:
  saved_errno = errno;
  (void) ! write (report_fd, &saved_errno, sizeof saved_errno);
  _exit (127);
}

/* fork() + exec, for what posix_spawn() cannot do: rlimits and cgroups. */
static GPid
spawn_with_extras (const char * const                 *argv,
                   int                                 stdin_fd,
                   int                                 stdout_fd,
                   int                                 stderr_fd,
                   GArray                             *passed_fds,
                   const SandboxBubblewrapSpawnExtras *extras,
                   GError                            **error)
{
  const SandboxBubblewrapLimits *limits = extras->limits;
  struct rlimit rlimits[4];
  int resources[4];
  guint n = 0;
  int report[2];
  int child_errno = 0;
  gssize got;
  pid_t pid;

  /* Prepared before fork(): the child only copies them in. */
  if (limits != NULL && sandbox_bubblewrap_limits_has_rlimits (limits))
    {
      if (limits->max_file_size > 0)
        {
          resources[n] = RLIMIT_FSIZE;
          rlimits[n++] = (struct rlimit) { limits->max_file_size, limits->max_file_size };
        }
      if (limits->max_open_files > 0)
        {
          resources[n] = RLIMIT_NOFILE;
          rlimits[n++] = (struct rlimit) { limits->max_open_files, limits->max_open_files };
        }
      if (limits->max_address_space > 0)
        {
          resources[n] = RLIMIT_AS;
          rlimits[n++] = (struct rlimit) { limits->max_address_space, limits->max_address_space };
        }
      resources[n] = RLIMIT_CORE;
      rlimits[n++] = (struct rlimit) { 0, 0 };
    }

  if (pipe2 (report, O_CLOEXEC) < 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: pipe: %s", g_strerror (errno));
      return 0;
    }
  /* Above every descriptor the child places, which it can then close. */
  {
    int high = fcntl (report[1], F_DUPFD_CLOEXEC, REPORT_FD_FLOOR);

    close (report[1]);
    report[1] = high;
    if (high < 0)
      {
        close (report[0]);
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                     "Sandbox process could not start: %s", g_strerror (errno));
        return 0;
      }
  }

  pid = fork ();
  if (pid == 0)
    child_exec (argv, stdin_fd, stdout_fd, stderr_fd, passed_fds, extras,
                rlimits, resources, n, report[1]);
  close (report[1]);
  if (pid < 0)
    {
      int saved_errno = errno;

      close (report[0]);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: fork: %s", g_strerror (saved_errno));
      return 0;
    }

  do
    got = read (report[0], &child_errno, sizeof child_errno);
  while (got < 0 && errno == EINTR);
  close (report[0]);
  if (got > 0)
    {
      waitpid (pid, NULL, 0);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: %s: %s", argv[0], g_strerror (child_errno));
      return 0;
    }
  return pid;
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
 * Starts bwrap with an empty environment in a new process group, through
 * posix_spawn(), or fork() when @extras asks for more (rlimits, cgroups, or
 * running as the guest's ids). Must run on
 * the launcher thread (see above). The caller keeps its descriptors and must
 * reap the child.
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
  static char *const empty_environment[] = { NULL };
  SpawnSetup setup;
  pid_t pid = 0;
  int spawn_error;

  g_assert (sandbox_bubblewrap_launcher_is_current ());

  if (!fds_are_placeable (stdin_fd, stdout_fd, stderr_fd, passed_fds))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: its descriptors overlap "
                   "the numbers bwrap receives them at");
      return 0;
    }

  if (extras_needed (extras))
    return spawn_with_extras (argv, stdin_fd, stdout_fd, stderr_fd, passed_fds, extras, error);

  spawn_error = spawn_setup_init (&setup, stdin_fd, stdout_fd, stderr_fd, passed_fds);
  if (spawn_error == 0)
    spawn_error = posix_spawn (&pid, argv[0], &setup.actions, &setup.attr,
                               (char * const *) argv, empty_environment);
  spawn_setup_clear (&setup);

  if (spawn_error != 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: %s: %s",
                   argv[0], g_strerror (spawn_error));
      return 0;
    }
  return pid;
}
