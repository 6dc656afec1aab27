/* sandbox-bubblewrap-layering.c — whether workspaces can be layered here
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A layered session's /workspace is an overlay its keeper mounts
 * (sandbox-bubblewrap-keeper.c): in a user namespace of the guest's ids,
 * with `userxattr`. Whether that works depends on the kernel (5.11 for
 * overlayfs in a user namespace, 5.8 for an unprivileged whiteout) and on
 * the state directory's filesystem (xattrs in the user namespace,
 * O_TMPFILE; not an overlay itself), and on a root host on idmapped mounts
 * (the lower layer shown as the guest's, 5.19 for an overlay's layer, and
 * a filesystem that allows them). So the backend tries, once, at
 * construction: a keeper on a throw-away tree of the store, with a
 * whiteout and a copy-up made through its overlay as the host's file
 * calls make them. If anything fails, sessions are copied as before.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sandbox-bubblewrap-keeper-private.h"
#include "sandbox-bubblewrap-layering-private.h"

/* Makes the probe's tree under @top: lower/{f,d/}, the host's as a
 * template's data, and layers/{upper,work}/, the guest's on a root host, as
 * a session's. */
static gboolean
make_probe_tree (const char                   *top,
                 const SandboxBubblewrapGuest *guest,
                 GError                      **error)
{
  const char *directories[] = { "", "lower", "lower/d", "layers", "layers/upper",
                                "layers/work" };
  g_autofree char *file = g_build_filename (top, "lower", "f", NULL);
  g_auto(SandboxBubblewrapFd) top_fd = -1;
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
  top_fd = open (top, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (top_fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open %s: %s", top, g_strerror (saved_errno));
      return FALSE;
    }
  return !guest->switched || sandbox_workspace_give_tree_at (top_fd, "layers", &owner, error);
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

/* A whiteout and a copy-up through the keeper's overlay, as the host's
 * file calls make them. */
static gboolean
write_through (SandboxBubblewrapKeeper  *keeper,
               GError                  **error)
{
  g_autoptr(SandboxWorkspace) files = NULL;
  g_autoptr(GBytes) empty = g_bytes_new_static ("", 0);

  files = sandbox_bubblewrap_keeper_open_workspace (keeper, SANDBOX_WORKSPACE_FLAGS_NONE, error);
  return files != NULL &&
         sandbox_workspace_remove (files, "f", error) &&
         sandbox_workspace_write (files, "d/g", empty, 1, error);
}

/* What the mount made in the upper layer is what overlayfs with userxattr
 * makes. */
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
                       "the upper layer is not as overlayfs with userxattr makes it");
  return FALSE;
}

/**
 * sandbox_bubblewrap_layering_probe:
 * @directory: a directory of the store (on the filesystem sessions and
 *   templates are on), writable by the host
 * @guest: who guests are
 * @error: return location for a #GError
 *
 * Starts a keeper (sandbox-bubblewrap-keeper.c), exactly as a layered
 * session's, on a throw-away tree in a temporary directory of @directory,
 * makes a whiteout and a copy-up through its overlay, checks the upper
 * layer, and removes it all.
 *
 * Returns: %TRUE when layered workspaces work here, or %FALSE with @error
 *   set (%SANDBOX_ERROR_UNAVAILABLE saying what failed)
 */
gboolean
sandbox_bubblewrap_layering_probe (const char                   *directory,
                                   const SandboxBubblewrapGuest *guest,
                                   GError                      **error)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *name = g_strconcat (".overlay-probe-", uuid, NULL);
  g_autofree char *top = g_build_filename (directory, name, NULL);
  g_autofree char *lower = g_build_filename (top, "lower", NULL);
  g_autofree char *layers = g_build_filename (top, "layers", NULL);
  g_autoptr(GError) cause = NULL;
  gboolean ok = make_probe_tree (top, guest, &cause);

  if (ok)
    {
      g_autoptr(SandboxBubblewrapKeeper) keeper =
        sandbox_bubblewrap_keeper_start ((const char * const[]) { lower, NULL }, NULL, layers, guest,
                                         &cause);

      ok = keeper != NULL && write_through (keeper, &cause);
    }
  ok = ok && check_upper (top, &cause);
  remove_probe_tree (top);
  if (!ok)
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                 "Overlay workspaces are unavailable here: %s", cause->message);
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
