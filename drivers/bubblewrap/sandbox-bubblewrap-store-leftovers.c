/* sandbox-bubblewrap-store-leftovers.c — ending what a dead owner's sandboxes left
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/pidfd.h>
#include <sys/stat.h>

#include <json-glib/json-glib.h>

#include "sandbox-bubblewrap-store-layout-private.h"
#include "sandbox-bubblewrap-stub-private.h"

/* Leftovers of a dead owner ---------------------------------------------------
 *
 * Since the launcher runs bwrap as the init of a pid namespace of its own,
 * with its parent-death signal armed before exec, nothing of a sandbox
 * outlives its owner. What recovery may still meet was left by an older
 * version (bwrap's --die-with-parent race, bubblewrap issue 633), by a
 * set-id bwrap (exec of which drops the parent-death signal) or by a bug.
 * Recovery ends it, once it holds the lease (so no live owner can start
 * more), and only what is identified beyond doubt as a sandbox of this
 * session:
 *
 * - bwrap's own processes — the monitor, the sandbox's init, the forks of
 *   its setup, none of which exec anything else: argv[0] is the backend's
 *   bwrap executable, the kernel's name for the process is bwrap's, and the
 *   arguments bind this workspace at /workspace, as the driver's command
 *   line did before it moved bwrap's options into an `--args` memfd (so
 *   this finds what older versions left, and bwraps run by hand; the
 *   driver's own sandboxes since then are found by their lock, below). A
 *   host process whose arguments merely name the workspace, or a bwrap of
 *   another session, is neither.
 * - the holder of a lock on the workspace directory, which the init of
 *   every sandbox of the session takes (bwrap's --lock-file), if it is a
 *   bwrap process that is the first of a pid namespace nested in ours. Any
 *   other holder — a host process — makes recovery refuse with BUSY: it is
 *   not ours to kill.
 *
 * Killing a sandbox's init kills the guest with its pid namespace. A
 * candidate is pinned with pidfd_open() before its /proc entries are read,
 * the pidfd must still be alive after the reading (or what was read may
 * have been a later process's that reused the pid), and the signal goes
 * through the pidfd.
 */

/* A process's cmdline can read empty for a moment (while it forks or
 * execs), so one scan can miss a live bwrap: the session counts as clean
 * only when several scans a little apart all find nothing. Recovery is
 * rare; the pauses cost it 20 ms. */
#define SCAN_ATTEMPTS 3
#define SCAN_PAUSE_US (10 * 1000)
/* Rounds of killing before recovery gives up on a session whose
 * leftovers keep coming back. */
#define LEFTOVER_ROUNDS 16
/* How long a SIGKILLed leftover may take to be gone. */
#define LEFTOVER_EXIT_TIMEOUT_MS 5000

static char *
read_proc_file (pid_t       pid,
                const char *name,
                gsize      *length)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/%s", (int) pid, name);
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, length, NULL))
    return NULL;
  return contents;
}

/* Whether @pid is a bwrap process by the kernel's name for it: the first
 * 15 bytes of the base name of the @executable it ran. */
static gboolean
process_is_named_like (pid_t       pid,
                       const char *executable)
{
  g_autofree char *basename = g_path_get_basename (executable);
  g_autofree char *comm = read_proc_file (pid, "comm", NULL);

  if (comm == NULL)
    return FALSE;
  g_strchomp (comm);
  return strncmp (comm, basename, 15) == 0 && strlen (comm) == MIN (strlen (basename), 15);
}

/* Whether @cmdline is @executable's and binds @workspace at /workspace. */
static gboolean
cmdline_binds_workspace (const char *cmdline,
                         gsize       length,
                         const char *executable,
                         const char *workspace)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();

  for (gsize i = 0; i < length; i += strlen (cmdline + i) + 1)
    g_ptr_array_add (args, (gpointer) (cmdline + i));
  if (args->len == 0 || strcmp (args->pdata[0], executable) != 0)
    return FALSE;
  for (guint i = 1; i + 2 < args->len; i++)
    if (strcmp (args->pdata[i], "--bind") == 0 &&
        strcmp (args->pdata[i + 1], workspace) == 0 &&
        strcmp (args->pdata[i + 2], SANDBOX_WORKSPACE) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
is_bwrap_of_workspace (pid_t       pid,
                       const char *executable,
                       const char *workspace)
{
  gsize length = 0;
  g_autofree char *cmdline = read_proc_file (pid, "cmdline", &length);

  return cmdline != NULL && length > 0 &&
         cmdline[length - 1] == '\0' &&   /* complete, not cut by an exec */
         cmdline_binds_workspace (cmdline, length, executable, workspace) &&
         process_is_named_like (pid, executable);
}

/* Whether @pid is the first process of a pid namespace nested in ours: its
 * NSpid line lists more than one pid, the last of them 1. */
static gboolean
is_nested_pid_namespace_init (pid_t pid)
{
  g_autofree char *status = read_proc_file (pid, "status", NULL);
  g_autofree char *pids = NULL;
  g_auto(GStrv) fields = NULL;
  const char *line;
  guint n;

  if (status == NULL || (line = strstr (status, "\nNSpid:\t")) == NULL)
    return FALSE;
  line += strlen ("\nNSpid:\t");
  pids = g_strndup (line, strcspn (line, "\n"));
  fields = g_strsplit (pids, "\t", -1);
  n = g_strv_length (fields);
  return n >= 2 && strcmp (fields[n - 1], "1") == 0;
}

/* The init of a sandbox is bwrap's (older versions) or the stub bwrap runs
 * as pid 1 (see stub/sandbox-stub.c), which holds the workspace lock. */
static gboolean
is_sandbox_init (pid_t       pid,
                 const char *executable)
{
  return is_nested_pid_namespace_init (pid) &&
         (process_is_named_like (pid, executable) ||
          process_is_named_like (pid, SANDBOX_BUBBLEWRAP_STUB_NAME));
}

static gboolean
pidfd_is_alive (int pidfd)
{
  struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

  return poll (&pfd, 1, 0) == 0;
}

typedef gboolean (*LeftoverCheck) (pid_t       pid,
                                   const char *executable,
                                   const char *workspace);

static gboolean
check_sandbox_init (pid_t       pid,
                    const char *executable,
                    const char *workspace)
{
  return is_sandbox_init (pid, executable);
}

/* A pidfd for @pid if it passes @check, read while it was pinned; else -1. */
static int
open_verified_leftover (pid_t          pid,
                        LeftoverCheck  check,
                        const char    *executable,
                        const char    *workspace)
{
  g_auto(SandboxBubblewrapFd) pidfd = pidfd_open (pid, 0);

  if (pidfd < 0 || !check (pid, executable, workspace) || !pidfd_is_alive (pidfd))
    return -1;
  return g_steal_fd (&pidfd);
}

static void
close_fd_in_array (gpointer data)
{
  sandbox_bubblewrap_fd_close (*(int *) data);
}

static GArray *
pidfd_array_new (void)
{
  GArray *pidfds = g_array_new (FALSE, FALSE, sizeof (int));

  g_array_set_clear_func (pidfds, close_fd_in_array);
  return pidfds;
}

/* Pidfds of the bwrap processes of @workspace that run now. */
static GArray *
find_bwrap_leftovers (const char *executable,
                      const char *workspace)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  GArray *pidfds = pidfd_array_new ();
  const char *name;

  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    {
      pid_t pid;
      int pidfd;

      if (!g_ascii_isdigit (name[0]))
        continue;
      pid = (pid_t) g_ascii_strtoll (name, NULL, 10);
      if (pid == getpid ())
        continue;
      pidfd = open_verified_leftover (pid, is_bwrap_of_workspace, executable, workspace);
      if (pidfd >= 0)
        g_array_append_val (pidfds, pidfd);
    }
  return pidfds;
}

typedef enum
{
  LOCK_FREE,
  LOCK_HELD_BY_SANDBOX,
  LOCK_HELD_BY_STRANGER,
} LockHolder;

/* Who holds a lock on @target, the workspace directory or a layered
 * session's lock file; a sandbox's init (or the session's keeper, which
 * is the stub too) is pinned in *@pidfd. Only POSIX locks tell their
 * holder (the stub takes one). */
static LockHolder
workspace_lock_holder (const char *target,
                       const char *executable,
                       const char *workspace,
                       int        *pidfd)
{
  g_auto(SandboxBubblewrapFd) fd = open (target, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

  *pidfd = -1;
  if (fd < 0)
    return errno == ENOENT ? LOCK_FREE : LOCK_HELD_BY_STRANGER;
  if (fcntl (fd, F_OFD_GETLK, &lock) < 0)
    return LOCK_HELD_BY_STRANGER;
  if (lock.l_type == F_UNLCK)
    return LOCK_FREE;
  if (lock.l_pid <= 0)   /* an OFD lock, or a holder outside our pid namespace */
    return LOCK_HELD_BY_STRANGER;
  *pidfd = open_verified_leftover (lock.l_pid, check_sandbox_init, executable, workspace);
  return *pidfd >= 0 ? LOCK_HELD_BY_SANDBOX : LOCK_HELD_BY_STRANGER;
}

/* SIGKILLs every process in @pidfds and waits, on the pidfds, until they
 * are gone. */
static void
kill_leftovers (GArray *pidfds)
{
  g_autofree struct pollfd *fds = g_new0 (struct pollfd, pidfds->len);
  gint64 deadline = g_get_monotonic_time () +
                    LEFTOVER_EXIT_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;

  for (guint i = 0; i < pidfds->len; i++)
    {
      fds[i].fd = g_array_index (pidfds, int, i);
      fds[i].events = POLLIN;
      pidfd_send_signal (fds[i].fd, SIGKILL, NULL, 0);
    }
  for (;;)
    {
      gint64 left = (deadline - g_get_monotonic_time ()) / G_TIME_SPAN_MILLISECOND;
      gboolean pending = FALSE;

      for (guint i = 0; i < pidfds->len; i++)
        if (fds[i].fd >= 0)
          pending = TRUE;
      if (!pending || left <= 0 || poll (fds, pidfds->len, (int) left) < 0)
        return;
      for (guint i = 0; i < pidfds->len; i++)
        if (fds[i].revents & POLLIN)
          fds[i].fd = -1;   /* gone; poll() skips negative descriptors */
    }
}

/* Ends what is left of the session's sandboxes (see above). Call with the
 * lease held. Fails with BUSY when a stranger holds the workspace lock or
 * leftovers keep coming. */
gboolean
sandbox_bubblewrap_lease_end_leftovers (SandboxBubblewrapLease  *lease,
                                        const char              *executable,
                                        GError                 **error)
{
  /* Named by its directory: a lease being taken has no state yet. */
  g_autofree char *session_id = g_path_get_basename (lease->directory);
  guint clean_scans = 0;

  for (guint round = 0; round < LEFTOVER_ROUNDS && clean_scans < SCAN_ATTEMPTS; round++)
    {
      g_autoptr(GArray) leftovers = find_bwrap_leftovers (executable, lease->workspace);
      /* A layered session's sandboxes and keeper lock layers/lock; the
       * upper layer is looked at too, for sandboxes of a library from
       * before the keeper. */
      g_autofree char *lock_file = lease->layers != NULL
                                   ? g_build_filename (lease->layers, "lock", NULL) : NULL;
      const char *targets[] = { lease->workspace, lock_file };

      for (guint t = 0; leftovers->len == 0 && t < G_N_ELEMENTS (targets); t++)
        {
          int holder = -1;

          if (targets[t] == NULL)
            continue;
          switch (workspace_lock_holder (targets[t], executable, lease->workspace, &holder))
            {
            case LOCK_FREE:
              break;
            case LOCK_HELD_BY_SANDBOX:
              g_array_append_val (leftovers, holder);
              break;
            case LOCK_HELD_BY_STRANGER:
            default:
              return sandbox_set_error_previous_owner_live (error);
            }
        }

      if (leftovers->len == 0)
        {
          if (++clean_scans < SCAN_ATTEMPTS)
            g_usleep (SCAN_PAUSE_US);
          continue;
        }
      clean_scans = 0;
      kill_leftovers (leftovers);
      /* A lifecycle event (docs/operations.md, "Log fields"): info, since
       * it means an owner died with sandboxes still running. */
      g_log_structured ("Sandbox", G_LOG_LEVEL_INFO, "SANDBOX_EVENT", "leftovers",
                        "SANDBOX_DRIVER", "bubblewrap",
                        "SANDBOX_SESSION_ID", session_id,
                        "MESSAGE", "Killed %u processes an earlier owner of session %s left",
                        leftovers->len, session_id);
    }

  if (clean_scans < SCAN_ATTEMPTS)
    return sandbox_set_error_previous_owner_live (error);
  return TRUE;
}

/* Takes over a stale lease, ending its dead owner's leftovers. Returns the
 * locked descriptor, or -1: with BUSY when its owner lives or leftovers
 * cannot be ended; with nothing set and *@missing when there is no lease
 * to take over. */
