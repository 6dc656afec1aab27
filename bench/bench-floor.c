/* bench-floor.c — raw bwrap, spawned from C with the driver's own argument list
 * (and with the reference's)
 *
 * The floor of a command round trip: the argument vector comes from the
 * bubblewrap driver's builder (sandbox-bubblewrap-args.c, compiled into the
 * benchmark), with the same status and seccomp descriptors, spawned with
 * posix_spawn() exactly as the driver's launcher does (own process group,
 * empty environment, pipes at 0/1/2, passed fds at 3…, the rest closed), and
 * reaped after both output pipes and the status pipe reached EOF. Nothing of
 * the library runs: no admission, no threads, no GTask, no main loop.
 *
 * On a root host the driver starts bwrap as the guest's ids (guest-uid,
 * guest-gid), so the floor does too: a vfork()ed child switches ids with raw
 * system calls and execs bwrap, the least any launcher can do to start bwrap
 * as another user. The benchmark makes the way to its workspaces passable for
 * those ids, so the driver needs no covering namespace either.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox-bubblewrap-args-private.h"
#include "sandbox-bubblewrap-seccomp-private.h"
#include "bench-floor.h"

static GBytes *seccomp_program;

gboolean
bench_floor_init (gboolean   seccomp,
                  GError   **error)
{
  if (seccomp && seccomp_program == NULL)
    seccomp_program = sandbox_bubblewrap_seccomp_get_program (error);
  return !seccomp || seccomp_program != NULL;
}

static int
fd_above_two (int fd)
{
  int moved;

  if (fd > 2)
    return fd;
  moved = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  close (fd);
  return moved;
}

/* Runs @argv_command in bwrap over @workspace; returns bwrap's wait status,
 * or -1. @stdin_data may be NULL; stdout is appended to @output if given. */
static uid_t guest_uid = (uid_t) -1;
static gid_t guest_gid = (gid_t) -1;

/* Raw bwrap runs as @uid/@gid from now on (when this process is root). */
void
bench_floor_set_guest_ids (uid_t uid,
                           gid_t gid)
{
  guest_uid = uid;
  guest_gid = gid;
}

/* The backend's curated /etc and /tmp size, which are part of the
 * driver's argument list: without them, "raw bwrap, driver argv" left out
 * the /etc mounts and counted their cost as the library's. */
static SandboxBubblewrapEtc floor_etc;
static SandboxBubblewrapLimits floor_limits;

void
bench_floor_set_driver_settings (gboolean    curated_etc,
                                 const char *git_name,
                                 const char *git_email,
                                 guint64     tmp_size)
{
  sandbox_bubblewrap_etc_clear (&floor_etc);
  floor_etc.curated = curated_etc;
  floor_etc.git_name = g_strdup (git_name);
  floor_etc.git_email = g_strdup (git_email);
  floor_limits.tmp_size = tmp_size;
}

/* The vfork() child: only raw system calls and async-signal-safe calls, as
 * it shares the parent's memory. The passed fds are above the ones they are
 * moved to (PASSED_FD_FLOOR in sandbox-bubblewrap-args.c). */
static pid_t
spawn_as_guest (char * const *argv,
                const int    *passed,
                guint         n_passed,
                int           in_fd,
                int           out_fd,
                int           err_fd)
{
  static char *const empty_environment[] = { NULL };
  sigset_t empty;
  pid_t pid;

  sigemptyset (&empty);
  pid = vfork ();
  if (pid != 0)
    return pid;

  signal (SIGPIPE, SIG_DFL);
  sigprocmask (SIG_SETMASK, &empty, NULL);
  setpgid (0, 0);
  if (dup2 (in_fd, 0) < 0 || dup2 (out_fd, 1) < 0 || dup2 (err_fd, 2) < 0)
    _exit (126);
  for (guint i = 0; i < n_passed; i++)
    if (dup2 (passed[i], 3 + (int) i) < 0)
      _exit (126);
  syscall (SYS_close_range, 3 + n_passed, ~0U, 0);
  if (syscall (SYS_setgroups, 0, NULL) < 0 ||
      syscall (SYS_setresgid, guest_gid, guest_gid, guest_gid) < 0 ||
      syscall (SYS_setresuid, guest_uid, guest_uid, guest_uid) < 0)
    _exit (126);
  execve (argv[0], argv, empty_environment);
  _exit (127);
}

/* The reference's bubblewrapArgs (../shared/reference/002_*), flag for
 * flag, for deny-all: no seccomp, no status fd, no --disable-userns, bwrap's
 * own init, the command on bwrap's command line. Its gateway socket is a
 * plain file beside the workspace, bound as the reference binds it. */
static SandboxBubblewrapArgs *
reference_args (const char         *workspace,
                const char * const *argv_command)
{
  SandboxBubblewrapArgs *args = sandbox_bubblewrap_args_new (SANDBOX_BUBBLEWRAP_DEFAULT_EXECUTABLE);
  g_autofree char *socket = g_strconcat (workspace, ".reference-socket", NULL);

  if (!g_file_test (socket, G_FILE_TEST_EXISTS))
    g_file_set_contents (socket, "", 0, NULL);
  sandbox_bubblewrap_args_add_many (args,
                                    "--unshare-all", "--die-with-parent", "--new-session",
                                    "--cap-drop", "ALL",
                                    "--ro-bind", "/usr", "/usr",
                                    "--ro-bind", "/lib", "/lib",
                                    "--ro-bind", "/lib64", "/lib64",
                                    "--symlink", "usr/bin", "/bin",
                                    "--symlink", "usr/sbin", "/sbin",
                                    "--proc", "/proc", "--dev", "/dev",
                                    "--tmpfs", "/tmp", "--dir", "/run",
                                    "--bind", workspace, "/workspace",
                                    "--ro-bind", socket, "/run/stitchkit-network.sock",
                                    "--clearenv",
                                    "--setenv", "PATH", "/usr/bin:/bin",
                                    "--setenv", "HOME", "/workspace",
                                    "--chdir", "/workspace",
                                    "--", NULL);
  for (guint i = 0; argv_command[i] != NULL; i++)
    sandbox_bubblewrap_args_add (args, argv_command[i]);
  sandbox_bubblewrap_args_finish (args);
  return args;
}

static int floor_run (const char         *workspace,
                      const char * const *argv_command,
                      GBytes             *stdin_data,
                      GByteArray         *output,
                      gboolean            reference);

int
bench_floor_run (const char         *workspace,
                 const char * const *argv_command,
                 GBytes             *stdin_data,
                 GByteArray         *output)
{
  return floor_run (workspace, argv_command, stdin_data, output, FALSE);
}

/* Raw bwrap with the reference's own argument list (reference_args()). */
int
bench_floor_run_reference (const char         *workspace,
                           const char * const *argv_command)
{
  return floor_run (workspace, argv_command, NULL, NULL, TRUE);
}

/* Starts raw bwrap for @argv_command and fills @child with its pid and
 * our ends of its pipes. Returns FALSE if it could not be started. */
static gboolean
floor_spawn (const char         *workspace,
             const char * const *argv_command,
             gboolean            reference,
             BenchFloorChild    *child)
{
  static char *const empty_environment[] = { NULL };
  g_autoptr(SandboxCommand) command = sandbox_command_new (argv_command[0]);
  g_autoptr(SandboxBubblewrapArgs) args = NULL;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  sigset_t mask, defaults;
  int in_pipe[2], out_pipe[2], err_pipe[2], status_pipe[2];
  int seccomp_fd = -1;
  pid_t pid = 0;
  SandboxBubblewrapArgsInput input = { 0 };
  SandboxBubblewrapGuest guest = { 0 };

  for (guint i = 1; argv_command[i] != NULL; i++)
    sandbox_command_add_arg (command, argv_command[i]);
  sandbox_command_set_cwd (command, SANDBOX_WORKSPACE);

  if (pipe2 (in_pipe, O_CLOEXEC) < 0 || pipe2 (out_pipe, O_CLOEXEC) < 0 ||
      pipe2 (err_pipe, O_CLOEXEC) < 0 || pipe2 (status_pipe, O_CLOEXEC) < 0)
    return FALSE;
  if (seccomp_program != NULL)
    seccomp_fd = sandbox_bubblewrap_seccomp_open_program_fd (seccomp_program, NULL);

  input.executable = SANDBOX_BUBBLEWRAP_DEFAULT_EXECUTABLE;
  input.workspace = workspace;
  input.gateway_socket = NULL;
  input.policy_kind = SANDBOX_NETWORK_POLICY_DENY_ALL;
  input.command = command;
  input.seccomp_program = seccomp_program;
  input.limits = &floor_limits;
  input.etc = floor_etc.curated ? &floor_etc : NULL;
  /* Whom the curated /etc names; guest.switched stays FALSE: the floor
   * switches ids itself (spawn_as_guest()). */
  guest.uid = guest_uid != (uid_t) -1 ? guest_uid : getuid ();
  guest.gid = guest_gid != (gid_t) -1 ? guest_gid : getgid ();
  input.guest = &guest;
  if (reference)
    {
      close (status_pipe[1]);
      if (seccomp_fd >= 0)
        close (seccomp_fd);
      args = reference_args (workspace, argv_command);
    }
  else
    args = sandbox_bubblewrap_args_new_for_command (&input, status_pipe[1], seccomp_fd, -1, -1,
                                                   NULL, NULL);
  if (args == NULL)
    return FALSE;
  if (args->argv->len == 0 || g_ptr_array_index (args->argv, args->argv->len - 1) != NULL)
    sandbox_bubblewrap_args_finish (args);

  in_pipe[0] = fd_above_two (in_pipe[0]);
  out_pipe[1] = fd_above_two (out_pipe[1]);
  err_pipe[1] = fd_above_two (err_pipe[1]);

  if (guest_uid != (uid_t) -1 && geteuid () == 0)
    {
      pid = spawn_as_guest ((char * const *) args->argv->pdata, (const int *) args->fds->data,
                            args->fds->len, in_pipe[0], out_pipe[1], err_pipe[1]);
      if (pid < 0)
        pid = 0;
      goto spawned;
    }

  posix_spawn_file_actions_init (&actions);
  posix_spawnattr_init (&attr);
  sigemptyset (&mask);
  sigfillset (&defaults);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup (&attr, 0);
  posix_spawnattr_setsigmask (&attr, &mask);
  posix_spawnattr_setsigdefault (&attr, &defaults);
  posix_spawn_file_actions_adddup2 (&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2 (&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2 (&actions, err_pipe[1], 2);
  for (guint i = 0; i < args->fds->len; i++)
    posix_spawn_file_actions_adddup2 (&actions, g_array_index (args->fds, int, i), 3 + (int) i);
  posix_spawn_file_actions_addclosefrom_np (&actions, 3 + (int) args->fds->len);

  if (posix_spawn (&pid, (char *) g_ptr_array_index (args->argv, 0), &actions, &attr,
                   (char * const *) args->argv->pdata, empty_environment) != 0)
    pid = 0;
  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attr);

spawned:

  close (in_pipe[0]);
  close (out_pipe[1]);
  close (err_pipe[1]);
  g_clear_pointer (&args, sandbox_bubblewrap_args_free);   /* closes the passed fds */
  *child = (BenchFloorChild) { pid, in_pipe[1], out_pipe[0], err_pipe[0], status_pipe[0] };
  return pid > 0;
}

/* Writes @stdin_data to @child, closes its stdin, drains its output (into
 * @output) and reaps it. Returns its wait status, or -1. */
static int
floor_finish (BenchFloorChild *child,
              GBytes          *stdin_data,
              GByteArray      *output)
{
  int status = -1;

  if (stdin_data != NULL)
    {
      gsize length;
      const char *data = g_bytes_get_data (stdin_data, &length);

      while (length > 0)
        {
          ssize_t n = write (child->in_fd, data, length);

          if (n <= 0)
            break;
          data += n;
          length -= n;
        }
    }
  close (child->in_fd);

  {
    struct pollfd fds[3] = {
      { child->out_fd, POLLIN, 0 }, { child->err_fd, POLLIN, 0 }, { child->status_fd, POLLIN, 0 },
    };
    int open_fds = 3;
    char buffer[16384];

    while (open_fds > 0)
      {
        if (poll (fds, 3, -1) < 0)
          break;
        for (int i = 0; i < 3; i++)
          {
            ssize_t n;

            if (fds[i].fd < 0 || fds[i].revents == 0)
              continue;
            n = read (fds[i].fd, buffer, sizeof buffer);
            if (n > 0 && i == 0 && output != NULL)
              g_byte_array_append (output, (guint8 *) buffer, n);
            if (n <= 0)
              {
                close (fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
              }
          }
      }
  }

  if (child->pid > 0)
    waitpid (child->pid, &status, 0);
  return status;
}

static int
floor_run (const char         *workspace,
           const char * const *argv_command,
           GBytes             *stdin_data,
           GByteArray         *output,
           gboolean            reference)
{
  BenchFloorChild child;

  if (!floor_spawn (workspace, argv_command, reference, &child))
    return -1;
  return floor_finish (&child, stdin_data, output);
}

/**
 * bench_floor_start_reference:
 * @workspace: the workspace to bind
 * @argv_command: the command, which should wait for a line on its stdin
 * @child: (out): the started bwrap
 *
 * Raw bwrap with the reference's argument list, started ahead of time:
 * the floor of a ready sandbox. bench_floor_finish() answers it.
 *
 * Returns: %FALSE if bwrap could not be started
 */
gboolean
bench_floor_start_reference (const char         *workspace,
                             const char * const *argv_command,
                             BenchFloorChild    *child)
{
  return floor_spawn (workspace, argv_command, TRUE, child);
}

/**
 * bench_floor_start:
 * @workspace: the workspace to bind
 * @argv_command: the command, which should wait for a line on its stdin
 * @child: (out): the started bwrap
 *
 * As bench_floor_start_reference(), with the driver's argument list.
 *
 * Returns: %FALSE if bwrap could not be started
 */
gboolean
bench_floor_start (const char         *workspace,
                   const char * const *argv_command,
                   BenchFloorChild    *child)
{
  return floor_spawn (workspace, argv_command, FALSE, child);
}

/**
 * bench_floor_finish:
 * @child: a bwrap from bench_floor_start_reference()
 * @stdin_data: (nullable): what to write to its stdin before closing it
 *
 * Returns: its wait status, or -1
 */
int
bench_floor_finish (BenchFloorChild *child,
                    GBytes          *stdin_data)
{
  return floor_finish (child, stdin_data, NULL);
}
