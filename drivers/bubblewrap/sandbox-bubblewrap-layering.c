/* sandbox-bubblewrap-layering.c — whether workspaces can be layered here
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A layered session's /workspace is an overlay mounted inside the sandbox
 * (stub/sandbox-stub-overlay.c): in the guest's user namespace, with
 * `userxattr`. Whether that works depends on the kernel (5.11 for overlayfs
 * in a user namespace, 5.8 for an unprivileged whiteout) and on the state
 * directory's filesystem (xattrs in the user namespace, O_TMPFILE; not an
 * overlay itself). So the backend tries, once, at construction: a
 * throw-away overlay on a directory of the store, mounted by a child
 * process in a new user and mount namespace as the guest ids, with a
 * whiteout and a copy-up made through it. If anything fails, sessions
 * are copied as before.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>

#include "sandbox-bubblewrap-layering-private.h"

/* What the probe's child reports on its pipe: the step that failed and
 * its errno. */
typedef struct
{
  int step;
  int errno_value;
} ProbeFailure;

static const char * const probe_steps[] = {
  "enter the probe directory or switch to the guest ids",
  "make a user and mount namespace",
  "map the ids",
  "mount the overlay",
  "make a whiteout through it",
  "copy a directory up through it",
};

/* In the child, async-signal-safe calls only: reports @step and exits. */
static void G_GNUC_NORETURN
child_fail (int pipe_fd,
            int step)
{
  ProbeFailure failure = { step, errno };

  (void) ! write (pipe_fd, &failure, sizeof failure);
  _exit (1);
}

static gboolean
write_string (const char *path,
              const char *text)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  gboolean written;

  if (fd < 0)
    return FALSE;
  written = write (fd, text, strlen (text)) == (ssize_t) strlen (text);
  close (fd);
  return written;
}

/* The probe's paths are relative to its directory, which the child enters
 * before it becomes the guest: a root host's state directory is 0700
 * root, which the guest ids could not pass. */
#define PROBE_OPTIONS "lowerdir=lower,upperdir=layers/upper,workdir=layers/work," \
                      SANDBOX_BUBBLEWRAP_OVERLAY_OPTIONS
#define PROBE_MOUNT_POINT "mnt"
#define PROBE_WHITEOUT "mnt/f"    /* a lower file */
#define PROBE_COPY_UP "mnt/d/g"   /* in a lower directory */

typedef struct
{
  const SandboxBubblewrapGuest *guest;
  const char *top;
  char uid_map[64];
  char gid_map[64];
} Probe;

/* The child: what the stub does, in one user namespace of its own. */
static void G_GNUC_NORETURN
run_child (const Probe *probe,
           int          pipe_fd)
{
  int fd;

  if (chdir (probe->top) < 0)
    child_fail (pipe_fd, 0);
  if (probe->guest->switched &&
      (setgroups (0, NULL) < 0 || setresgid (probe->guest->gid, probe->guest->gid,
                                             probe->guest->gid) < 0 ||
       setresuid (probe->guest->uid, probe->guest->uid, probe->guest->uid) < 0 ||
       /* The id change made it non-dumpable: /proc/self would be root's,
        * and its uid_map not ours to write. */
       prctl (PR_SET_DUMPABLE, 1, 0, 0, 0) < 0))
    child_fail (pipe_fd, 0);
  if (unshare (CLONE_NEWUSER | CLONE_NEWNS) < 0)
    child_fail (pipe_fd, 1);
  if (!write_string ("/proc/self/setgroups", "deny") ||
      !write_string ("/proc/self/uid_map", probe->uid_map) ||
      !write_string ("/proc/self/gid_map", probe->gid_map) ||
      mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    child_fail (pipe_fd, 2);
  if (mount ("overlay", PROBE_MOUNT_POINT, "overlay", MS_NOSUID | MS_NODEV, PROBE_OPTIONS) < 0)
    child_fail (pipe_fd, 3);
  if (unlink (PROBE_WHITEOUT) < 0)
    child_fail (pipe_fd, 4);
  fd = open (PROBE_COPY_UP, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    child_fail (pipe_fd, 5);
  _exit (0);
}

/* Makes the probe's tree under @top: lower/{f,d/}, layers/{upper,work}/,
 * mnt/, given to the guest ids. */
static gboolean
make_probe_tree (const char                   *top,
                 const SandboxBubblewrapGuest *guest,
                 GError                      **error)
{
  const char *directories[] = { "", "lower", "lower/d", "layers", "layers/upper",
                                "layers/work", "mnt" };
  g_autofree char *file = g_build_filename (top, "lower", "f", NULL);
  g_autofree char *parent = g_path_get_dirname (top);
  g_autofree char *name = g_path_get_basename (top);
  g_auto(SandboxBubblewrapFd) parent_fd = -1;
  SandboxWorkspaceOwner owner = { guest->uid, guest->gid };

  for (guint i = 0; i < G_N_ELEMENTS (directories); i++)
    {
      g_autofree char *path = g_build_filename (top, directories[i], NULL);

      if (mkdir (path, 0700) < 0)
        {
          int saved_errno = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       "Could not make the overlay probe %s: %s", path, g_strerror (saved_errno));
          return FALSE;
        }
    }
  if (!g_file_set_contents (file, "", 0, error))
    return FALSE;
  parent_fd = open (parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open %s: %s", parent, g_strerror (saved_errno));
      return FALSE;
    }
  return !guest->switched || sandbox_workspace_give_tree_at (parent_fd, name, &owner, error);
}

static void
remove_probe_tree (const char *top)
{
  g_autofree char *parent = g_path_get_dirname (top);
  g_autofree char *name = g_path_get_basename (top);
  g_auto(SandboxBubblewrapFd) parent_fd = open (parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
  g_autoptr(GError) error = NULL;

  if (parent_fd < 0 || !sandbox_workspace_remove_tree_at (parent_fd, name, &error))
    g_warning ("Could not remove the overlay probe %s: %s", top,
               error != NULL ? error->message : g_strerror (errno));
}

/* Waits for the child and reads what it said. */
static gboolean
wait_for_child (pid_t    pid,
                int      pipe_fd,
                GError **error)
{
  ProbeFailure failure = { -1, 0 };
  ssize_t n;
  int status;

  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      {
        int saved_errno = errno;

        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                     "Could not wait for the overlay probe: %s", g_strerror (saved_errno));
        return FALSE;
      }
  n = TEMP_FAILURE_RETRY (read (pipe_fd, &failure, sizeof failure));
  if (WIFEXITED (status) && WEXITSTATUS (status) == 0)
    return TRUE;
  if (n == sizeof failure && failure.step >= 0 && failure.step < (int) G_N_ELEMENTS (probe_steps))
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                 "Overlay workspaces are unavailable here: could not %s: %s",
                 probe_steps[failure.step], g_strerror (failure.errno_value));
  else
    g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                         "Overlay workspaces are unavailable here: the probe failed");
  return FALSE;
}

/* What the mount made in the upper layer is what the stub's would. */
static gboolean
check_upper (const char  *top,
             GError     **error)
{
  g_autofree char *whiteout = g_build_filename (top, "layers", "upper", "f", NULL);
  g_autofree char *copied = g_build_filename (top, "layers", "upper", "d", "g", NULL);
  struct stat st;

  if (lstat (whiteout, &st) == 0 && S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0) &&
      lstat (copied, &st) == 0 && S_ISREG (st.st_mode))
    return TRUE;
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       "Overlay workspaces are unavailable here: the upper layer is not as "
                       "overlayfs with userxattr makes it");
  return FALSE;
}

/**
 * sandbox_bubblewrap_layering_probe:
 * @directory: a directory of the store (on the filesystem sessions and
 *   templates are on), writable by the host
 * @guest: who guests are
 * @error: return location for a #GError
 *
 * Tries a throw-away overlay (the options the stub mounts with) in a new
 * user and mount namespace as @guest, in a temporary directory of
 * @directory, and a whiteout and a copy-up through it; removes it all.
 *
 * Returns: %TRUE when layered workspaces work here, or %FALSE with @error
 *   set (%SANDBOX_ERROR_UNAVAILABLE naming the step that failed)
 */
gboolean
sandbox_bubblewrap_layering_probe (const char                   *directory,
                                   const SandboxBubblewrapGuest *guest,
                                   GError                      **error)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *name = g_strconcat (".overlay-probe-", uuid, NULL);
  g_autofree char *top = g_build_filename (directory, name, NULL);
  Probe probe = { guest, top, };
  int pipe_fds[2];
  gboolean ok;
  pid_t pid;

  g_snprintf (probe.uid_map, sizeof probe.uid_map, "0 %u 1", (guint) guest->uid);
  g_snprintf (probe.gid_map, sizeof probe.gid_map, "0 %u 1", (guint) guest->gid);

  ok = make_probe_tree (top, guest, error);
  if (ok && !g_unix_open_pipe (pipe_fds, FD_CLOEXEC, error))
    ok = FALSE;
  if (ok)
    {
      pid = fork ();
      if (pid == 0)
        run_child (&probe, pipe_fds[1]);
      close (pipe_fds[1]);
      if (pid < 0)
        {
          int saved_errno = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       "Could not start the overlay probe: %s", g_strerror (saved_errno));
          ok = FALSE;
        }
      else
        ok = wait_for_child (pid, pipe_fds[0], error) && check_upper (top, error);
      close (pipe_fds[0]);
    }
  remove_probe_tree (top);
  return ok;
}

/*
 * A work directory per sandbox. overlayfs empties its work directory
 * (work/work/ in it) when it mounts: two overlays of one session sharing
 * one would take each other's away, and a command starting while another
 * runs would break the running one's copy-ups (EPERM) or fail to mount
 * (ENOENT). So each sandbox gets its own, made empty in the session's
 * layers/work/ (on the upper layer's mount, as overlayfs requires) before
 * bwrap starts and removed once the sandbox is gone.
 */

static int
open_work_parent (const char  *layers,
                  GError     **error)
{
  g_autofree char *work = g_build_filename (layers, "work", NULL);
  int fd = open (work, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not open the overlay work directories: %s", g_strerror (saved_errno));
    }
  return fd;
}

/**
 * sandbox_bubblewrap_layering_new_work_name:
 *
 * Returns: (transfer full): a new name for a sandbox's work directory in
 *   layers/work/ (never overlayfs' own "work" or "index")
 */
char *
sandbox_bubblewrap_layering_new_work_name (void)
{
  g_autofree char *uuid = g_uuid_string_random ();

  return g_strconcat ("sandbox-", uuid, NULL);
}

/**
 * sandbox_bubblewrap_layering_make_work:
 * @layers: the host path of a layered session's layers/
 * @name: a name from sandbox_bubblewrap_layering_new_work_name()
 * @guest: (nullable): who guests are; %NULL: the host itself
 * @error: return location for a #GError
 *
 * Makes @name, a new and empty directory in @layers/work/, the guest's,
 * for one sandbox's overlay (the stub's `overlay-work=`).
 *
 * Returns: %TRUE, or %FALSE with @error set (%SANDBOX_ERROR_UNAVAILABLE)
 */
gboolean
sandbox_bubblewrap_layering_make_work (const char                   *layers,
                                       const char                   *name,
                                       const SandboxBubblewrapGuest *guest,
                                       GError                      **error)
{
  g_auto(SandboxBubblewrapFd) parent_fd = open_work_parent (layers, error);

  if (parent_fd < 0)
    return FALSE;
  if (mkdirat (parent_fd, name, 0700) < 0)
    {
      int saved_errno = errno;

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not make an overlay work directory: %s", g_strerror (saved_errno));
      return FALSE;
    }
  if (guest != NULL && guest->switched &&
      fchownat (parent_fd, name, guest->uid, guest->gid, AT_SYMLINK_NOFOLLOW) < 0)
    {
      int saved_errno = errno;

      unlinkat (parent_fd, name, AT_REMOVEDIR);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not give an overlay work directory to the guest: %s",
                   g_strerror (saved_errno));
      return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_layering_remove_work:
 * @layers: the host path of a layered session's layers/
 * @name: a name from sandbox_bubblewrap_layering_make_work() whose sandbox
 *   is gone
 *
 * Removes that work directory and what overlayfs left in it (never
 * following a link). A failure is logged: what is left is removed with
 * the session.
 */
void
sandbox_bubblewrap_layering_remove_work (const char *layers,
                                         const char *name)
{
  g_autoptr(GError) error = NULL;
  g_auto(SandboxBubblewrapFd) parent_fd = open_work_parent (layers, &error);

  if (parent_fd < 0 || !sandbox_workspace_remove_tree_at (parent_fd, name, &error))
    g_debug ("Could not remove the overlay work directory %s: %s", name, error->message);
}

/**
 * sandbox_bubblewrap_layering_remove_all_work:
 * @layers: the host path of a layered session's layers/, none of whose
 *   sandboxes runs
 *
 * Removes the work directories that sandboxes killed with their owner
 * left (the names sandbox_bubblewrap_layering_new_work_name() makes; not
 * overlayfs' own work/ of sessions from before those).
 *
 * Returns: how many were removed
 */
guint
sandbox_bubblewrap_layering_remove_all_work (const char *layers)
{
  g_autofree char *work = g_build_filename (layers, "work", NULL);
  g_autoptr(GDir) dir = g_dir_open (work, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  /* Listed first: removing while reading a directory may skip entries. */
  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, "sandbox-"))
      g_ptr_array_add (names, g_strdup (name));
  for (guint i = 0; i < names->len; i++)
    sandbox_bubblewrap_layering_remove_work (layers, g_ptr_array_index (names, i));
  return names->len;
}
