/* sandbox-bubblewrap-launcher-child.c — bwrap's process between clone() and exec
 *
 * What the launcher's child does before it execs bwrap (see "Spawning bwrap
 * so that a crash of the host leaves nothing running" in
 * sandbox-bubblewrap-launcher.c): clone() with vfork()'s semantics into the
 * wrapper's namespaces (through a keeper's, for a layered session), then
 * its signals, process group, cgroups, id maps, /proc, the guest's view
 * and ids, the parent-death signal, descriptors and rlimits, each step's
 * failure reported to the parent on a pipe. Only async-signal-safe code.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "sandbox-bubblewrap-launcher-child-private.h"

/* The child's code runs between clone() and exec in a copy of a
 * multi-threaded process: only async-signal-safe calls from here to
 * child_main(). Each returns FALSE with errno set on failure. */

static gboolean
child_reset_signals (void)
{
  struct sigaction default_action = { .sa_handler = SIG_DFL };
  sigset_t mask;

  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction (sig, &default_action, NULL);   /* EINVAL for glibc's reserved ones */
  sigemptyset (&mask);
  return sigprocmask (SIG_SETMASK, &mask, NULL) == 0;
}

/* Everything bwrap starts stays in the command's cgroups. */
static gboolean
child_join_cgroups (const ChildSetup *setup)
{
  for (guint i = 0; setup->cgroup_procs_fds != NULL && i < setup->cgroup_procs_fds->len; i++)
    if (write (g_array_index (setup->cgroup_procs_fds, int, i), "0", 1) != 1)
      return FALSE;
  return TRUE;
}

static gboolean
child_write_file (const char *path,
                  const char *contents)
{
  size_t length = strlen (contents);
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  gboolean written;

  if (fd < 0)
    return FALSE;
  written = write (fd, contents, length) == (ssize_t) length;
  close (fd);
  return written;
}

/* The wrapper user namespace maps the host's uid and gid to themselves and
 * nothing else (all an unprivileged process may map). */
static gboolean
child_write_id_maps (const ChildSetup *setup)
{
  if ((setup->clone_flags & CLONE_NEWUSER) == 0)
    return TRUE;
  return child_write_file ("/proc/self/setgroups", "deny") &&
         child_write_file ("/proc/self/gid_map", setup->gid_map) &&
         child_write_file ("/proc/self/uid_map", setup->uid_map);
}

/* A /proc of the wrapper's pid namespace, for bwrap. The host's mounts
 * become slaves first, so the mount cannot propagate to the host. */
static gboolean
child_mount_proc (void)
{
  return mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) == 0 &&
         mount ("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0;
}

/* bwrap 0.8 re-reads its whole /proc/self/mountinfo for every bind it
 * makes (bind_mount()), some thirty times per sandbox with the hardened
 * command line, so every host mount it can see is paid for thirty times:
 * a host's cgroup v1 hierarchy alone made a cold command 1.5-1.8 ms
 * slower (issue 20). Nothing bwrap is given lives under /sys and the
 * sandbox has none, so the wrapper namespace goes without it; the mounts
 * are slaves by now, so the host keeps its own. Where the kernel locks
 * the host's mounts together (an unprivileged wrapper's namespace is less
 * privileged than the host's) or /sys is no mount point, this fails and
 * changes nothing, which is harmless: bwrap then sees what it saw before. */
static void
child_trim_host_mounts (void)
{
  (void) umount2 ("/sys", MNT_DETACH);
}

/* The parent's pid from a /proc/PID/stat file: the number after the state,
 * which follows the last ')' (the command name may contain anything). */
static pid_t
child_parse_parent_pid (const char *stat,
                        ssize_t     length)
{
  ssize_t i = length - 1;
  pid_t parent = 0;

  while (i >= 0 && stat[i] != ')')
    i--;
  /* ") S 1234 " */
  i += 4;
  if (i <= 3 || i >= length)
    return 0;
  for (; i < length && stat[i] >= '0' && stat[i] <= '9'; i++)
    parent = parent * 10 + (stat[i] - '0');
  return parent;
}

/* Arms SIGKILL for when the host's launcher thread dies, then checks that
 * the host is still the parent: if it died before the prctl, nothing will
 * ever send that signal. getppid() cannot tell (it is 0 for the init of a
 * pid namespace), so @host_stat_fd is this process's stat in the host's
 * /proc, opened before the wrapper's /proc covered it. Must come after any
 * credential change, which clears the parent-death signal. */
static gboolean
child_arm_parent_death_signal (const ChildSetup *setup,
                               int               host_stat_fd)
{
  char stat[512];
  ssize_t length;

  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    return FALSE;
  length = pread (host_stat_fd, stat, sizeof stat, 0);
  if (length <= 0)
    return FALSE;
  if (child_parse_parent_pid (stat, length) != setup->host_pid)
    {
      /* Orphaned already (or /proc is not of the host's pid namespace):
       * never exec. The report reaches a host that is still there. */
      errno = ESRCH;
      return FALSE;
    }
  return TRUE;
}

/* The pipes at 0, 1 and 2, the passed descriptors at 3… and every other
 * descriptor closed, but the report pipe (close-on-exec) until exec —
 * whatever other threads leave without O_CLOEXEC never reaches bwrap. */
static gboolean
child_place_descriptors (const ChildSetup *setup)
{
  GArray *passed_fds = setup->passed_fds;

  if (dup2 (setup->stdin_fd, 0) < 0 || dup2 (setup->stdout_fd, 1) < 0 ||
      dup2 (setup->stderr_fd, 2) < 0)
    return FALSE;
  for (guint i = 0; i < passed_fds->len; i++)
    if (dup2 (g_array_index (passed_fds, int, i), 3 + (int) i) < 0)
      return FALSE;
  return close_range (3 + passed_fds->len, setup->report_fd - 1, 0) == 0 &&
         close_range (setup->report_fd + 1, ~0U, 0) == 0;
}

static gboolean
child_set_rlimits (const ChildSetup *setup)
{
  for (guint i = 0; i < setup->n_rlimits; i++)
    if (setrlimit (setup->resources[i], &setup->rlimits[i]) < 0)
      return FALSE;
  return TRUE;
}

static void G_GNUC_NORETURN
child_fail (const ChildSetup *setup,
            ChildStep         step)
{
  ChildReport report = { step, errno };

  (void) ! write (setup->report_fd, &report, sizeof report);
  _exit (127);
}

static void G_GNUC_NORETURN
child_main (const ChildSetup *setup)
{
  static char *const empty_environment[] = { NULL };
  int host_stat_fd;

  if (!child_reset_signals ())
    child_fail (setup, STEP_SIGNALS);
  if (setpgid (0, 0) < 0)
    child_fail (setup, STEP_PROCESS_GROUP);
  if (!child_join_cgroups (setup))
    child_fail (setup, STEP_CGROUPS);
  host_stat_fd = openat (setup->host_proc_fd, "self/stat", O_RDONLY | O_CLOEXEC);
  if (host_stat_fd < 0)
    child_fail (setup, STEP_PARENT_DEATH_SIGNAL);
  if (!child_write_id_maps (setup))
    child_fail (setup, STEP_ID_MAPS);
  if (!child_mount_proc ())
    child_fail (setup, STEP_PROC);
  child_trim_host_mounts ();
  /* Still with the host's privileges: the guest's way to its workspace. */
  if (setup->guest_view != NULL &&
      !sandbox_bubblewrap_guest_view_enter (setup->guest_view, setup->enter_pidfd >= 0))
    child_fail (setup, STEP_GUEST_VIEW);
  /* The guest's ids: a credential change clears the parent-death signal,
   * so this comes before it. */
  if (setup->guest_view != NULL && !sandbox_bubblewrap_guest_switch_ids (setup->guest_view))
    child_fail (setup, STEP_GUEST_IDS);
  if (!child_arm_parent_death_signal (setup, host_stat_fd))
    child_fail (setup, STEP_PARENT_DEATH_SIGNAL);
  close (host_stat_fd);
  if (!child_place_descriptors (setup))
    child_fail (setup, STEP_DESCRIPTORS);
  if (!child_set_rlimits (setup))
    child_fail (setup, STEP_RLIMITS);

  execve (setup->argv[0], (char * const *) setup->argv, empty_environment);
  child_fail (setup, STEP_EXEC);
}

/* The child's own stack: it runs in our memory until it execs. */
#define CHILD_STACK_SIZE (128 * 1024)

static int
child_entry (void *data)
{
  child_main (data);
}

/* For a layered session (see sandbox-bubblewrap-keeper.c), the child
 * clone() makes runs this first: it enters the keeper's user and mount
 * namespaces, and the session's network namespace (see
 * sandbox-bubblewrap-session-net.c) — before the keeper's on a root host,
 * whose network namespace the initial user namespace owns; after, on a
 * host that is not root, whose keeper's user namespace owns the one its
 * network keeper made, or with its user namespace for an unlayered
 * session — then makes bwrap's process with the wrapper's namespace
 * flags — a pid namespace can only be entered by a new process, and one
 * made now is owned by the keeper's user namespace, as its mount
 * namespace is, so the wrapper can mount its /proc — as a child of the
 * host (CLONE_PARENT: the host reaps it, its parent-death signal follows
 * the launcher thread) and exits. On a root host the supplementary groups
 * go first: the keeper's user namespace denies setgroups(), and the
 * guest's process must not keep the host's. Same rules as child_main(). */
static int
intermediate_entry (void *data)
{
  ChildSetup *setup = data;
  pid_t pid;

  if (setup->guest_view != NULL && syscall (SYS_setgroups, 0, NULL) < 0)
    child_fail (setup, STEP_GUEST_IDS);
  if (setup->net_pidfd >= 0 && setup->net_first &&
      setns (setup->net_pidfd, setup->net_flags) < 0)
    child_fail (setup, STEP_ENTER_NET);
  if (setup->enter_pidfd >= 0 && setns (setup->enter_pidfd, CLONE_NEWUSER | CLONE_NEWNS) < 0)
    child_fail (setup, STEP_ENTER);
  if (setup->net_pidfd >= 0 && !setup->net_first &&
      setns (setup->net_pidfd, setup->net_flags) < 0)
    child_fail (setup, STEP_ENTER_NET);
  pid = clone (child_entry, setup->entered_stack,
               setup->clone_flags | CLONE_PARENT | CLONE_VM | CLONE_VFORK | SIGCHLD, setup);
  if (pid < 0)
    child_fail (setup, STEP_ENTER);
  setup->entered_pid = pid;
  /* The system call, not _exit(): a call to a noreturn function here, on
   * a stack the sanitizers do not know, makes ASan print a warning on the
   * host's stderr (seen by sandboxctl's callers as the guest's). */
  syscall (SYS_exit_group, 0);
  return 0;
}

/* clone() with vfork()'s semantics and namespace flags, which vfork()
 * cannot take: the child shares our memory (CLONE_VM) and this thread
 * waits until it has exec'd or exited (CLONE_VFORK), as posix_spawn()
 * does. A copy of the whole process, as fork() makes, costs the page
 * tables of every thread's mappings and then a copy-on-write fault for
 * each page we touch before bwrap execs, on every cold command (issue
 * 20). Safe because the child only reads @setup and calls
 * async-signal-safe functions, resets every signal handler before it
 * unblocks signals (its handler table is a copy: no CLONE_SIGHAND), and
 * never returns into our frames. Returns the pid, or -1 with errno. */
pid_t
sandbox_bubblewrap_launcher_clone_child (ChildSetup *setup)
{
  gboolean entering = setup->enter_pidfd >= 0 || setup->net_pidfd >= 0;
  size_t size = entering ? 2 * CHILD_STACK_SIZE : CHILD_STACK_SIZE;
  void *stack = mmap (NULL, size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  pid_t pid;
  int saved_errno;

  if (stack == MAP_FAILED)
    return -1;
  /* Stacks grow down on every architecture Debian runs this on. */
  if (entering)
    {
      setup->entered_stack = (char *) stack + 2 * CHILD_STACK_SIZE;
      pid = clone (intermediate_entry, (char *) stack + CHILD_STACK_SIZE,
                   CLONE_VM | CLONE_VFORK | SIGCHLD, setup);
    }
  else
    pid = clone (child_entry, (char *) stack + CHILD_STACK_SIZE,
                 setup->clone_flags | CLONE_VM | CLONE_VFORK | SIGCHLD, setup);
  saved_errno = errno;
  munmap (stack, size);   /* the children are past using it */
  errno = saved_errno;
  return pid;
}
