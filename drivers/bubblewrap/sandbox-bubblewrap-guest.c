/* sandbox-bubblewrap-guest.c — starting bwrap as the guest ids
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-bubblewrap-guest-private.h"

/*
 * When the host runs as root, guests must not be host uid 0
 * (SandboxBubblewrapBackend:guest-uid). bwrap gives the guest the ids
 * bwrap itself runs as (--unshare-user maps the sandbox uid to bwrap's real
 * uid, and --uid changes only the id inside), so bwrap has to be started
 * as the guest ids: the launcher's child switches to them before exec
 * (sandbox_bubblewrap_guest_switch_ids()), and bwrap then runs exactly as
 * it does for an unprivileged host.
 *
 * The hard part: bwrap, now the guest, resolves every bind source itself
 * (realpath() as the sandbox user, then below its old root), and the
 * workspace lies in a state directory that is 0700 root (and maybe below
 * /root, 0700 too); the gateway socket in a 0700 temporary directory. What
 * was considered, in bwrap 0.8:
 *
 * - Traversal-only (0711) directories with unguessable names: needs every
 *   ancestor of the state directory to be passable (not so under /root),
 *   and /tmp lists the gateway's directory, so any host process running as
 *   the guest uid could connect to the gateway and use its credentials.
 * - Passing the workspace as a descriptor: 0.8 has no --bind-fd; a
 *   /proc/self/fd/N source is realpath()ed to the very path the guest
 *   cannot pass (so it fails anyway), and the descriptor would stay open
 *   in the guest (bwrap closes no inherited fd), a host directory fd inside
 *   the sandbox: runc CVE-2024-21626.
 * - A prepared user namespace (--userns FD): bwrap switches to --uid inside
 *   it before its setup (switch_to_user_with_privs()), so the setup meets
 *   the same permissions; and --userns excludes --unshare-user, which
 *   --disable-userns requires.
 * - What is done: the child, still root, makes itself a mount namespace
 *   (a slave of the host's, so nothing propagates back) in which each
 *   directory on the way to the workspace and to the socket that the guest
 *   ids cannot pass is covered with a tmpfs holding only the way down (0711
 *   directories), and the workspace and socket themselves are bound back
 *   at their own paths from descriptors opened before the covering. bwrap
 *   gets the same arguments as always (the same paths, which recovery and
 *   error messages name) and can reach these two and nothing else of the
 *   state directory; the host's own view is untouched, no host directory changes
 *   mode, and the descriptors are closed before exec. The namespace lives
 *   as long as bwrap's processes.
 *
 * The guest ids can then use: the workspace, which belongs to them (the
 * store and SandboxWorkspace give what the host creates to them), and
 * the socket, which the driver gives to them (connect() needs write
 * permission on it).
 */

/* One path bwrap must reach: bound over itself once its way is covered. */
typedef struct
{
  char *path;
  gboolean is_directory;
} Exposed;

struct _SandboxBubblewrapGuestView
{
  uid_t uid;
  gid_t gid;
  GPtrArray *covers;        /* directories covered with a tmpfs */
  GPtrArray *directories;   /* the way down inside the covers, parents first */
  GArray *exposed;          /* Exposed */
};

/* Whether the guest ids may pass a directory: its owner, group or other
 * bits, as the kernel checks them without capabilities (ACLs are not read:
 * a directory an ACL closes to the guest makes bwrap fail, never pass). */
static gboolean
guest_can_pass (const SandboxBubblewrapGuestView *view,
                const struct stat                *st)
{
  if (st->st_uid == view->uid)
    return (st->st_mode & S_IXUSR) != 0;
  if (st->st_gid == view->gid)
    return (st->st_mode & S_IXGRP) != 0;
  return (st->st_mode & S_IXOTH) != 0;
}

static void
add_unique (GPtrArray  *paths,
            const char *path)
{
  for (guint i = 0; i < paths->len; i++)
    if (strcmp (paths->pdata[i], path) == 0)
      return;
  g_ptr_array_add (paths, g_strdup (path));
}

/* Plans the way to @path: the first directory from / down that the guest
 * cannot pass is covered, the directories below it are made inside. A
 * directory that cannot be examined counts as closed. Two paths' first
 * closed directories are either the same or not nested, as each is the
 * first closed one on its way. */
static void
plan_way (SandboxBubblewrapGuestView *view,
          const char                 *path,
          gboolean                    is_directory)
{
  g_autofree char *resolved = realpath (path, NULL);
  g_auto(GStrv) components = NULL;
  g_autoptr(GString) prefix = g_string_new (NULL);
  gboolean covered = FALSE;
  guint n;

  if (resolved == NULL)
    return;   /* gone: bwrap reports it */
  components = g_strsplit (resolved + 1, "/", -1);
  n = g_strv_length (components);
  for (guint i = 0; i + 1 < n; i++)
    {
      struct stat st;

      g_string_append_c (prefix, '/');
      g_string_append (prefix, components[i]);
      if (covered)
        add_unique (view->directories, prefix->str);
      else if (stat (prefix->str, &st) < 0 || !guest_can_pass (view, &st))
        {
          add_unique (view->covers, prefix->str);
          covered = TRUE;
        }
    }
  if (covered)
    {
      Exposed exposed = { g_steal_pointer (&resolved), is_directory };

      g_array_append_val (view->exposed, exposed);
    }
}

static void
exposed_clear (gpointer data)
{
  g_free (((Exposed *) data)->path);
}

/**
 * sandbox_bubblewrap_guest_view_new:
 * @guest: who guests are
 * @workspace: (nullable): the host path of the workspace, or %NULL when
 *   the namespace bwrap starts in makes it reachable already (a layered
 *   session's keeper's)
 * @gateway_socket: (nullable): the host path of the gateway socket
 *
 * Returns: (transfer full) (nullable): how bwrap's process becomes the
 *   guest, or %NULL when @guest is the host itself (nothing to do)
 */
SandboxBubblewrapGuestView *
sandbox_bubblewrap_guest_view_new (const SandboxBubblewrapGuest *guest,
                                   const char                   *workspace,
                                   const char                   *gateway_socket)
{
  SandboxBubblewrapGuestView *view;

  if (guest == NULL || !guest->switched)
    return NULL;
  view = g_new0 (SandboxBubblewrapGuestView, 1);
  view->uid = guest->uid;
  view->gid = guest->gid;
  view->covers = g_ptr_array_new_with_free_func (g_free);
  view->directories = g_ptr_array_new_with_free_func (g_free);
  view->exposed = g_array_new (FALSE, TRUE, sizeof (Exposed));
  g_array_set_clear_func (view->exposed, exposed_clear);
  if (workspace != NULL)
    plan_way (view, workspace, TRUE);
  if (gateway_socket != NULL)
    plan_way (view, gateway_socket, FALSE);
  return view;
}

/**
 * sandbox_bubblewrap_guest_view_expose_directory:
 * @view: (nullable): a view
 * @path: another directory bwrap must reach (a layered session's lower
 *   layer)
 *
 * Adds @path to what @view exposes; nothing without a view.
 */
void
sandbox_bubblewrap_guest_view_expose_directory (SandboxBubblewrapGuestView *view,
                                                const char                 *path)
{
  if (view != NULL)
    plan_way (view, path, TRUE);
}

/**
 * sandbox_bubblewrap_guest_view_free:
 * @view: (nullable) (transfer full): a view
 */
void
sandbox_bubblewrap_guest_view_free (SandboxBubblewrapGuestView *view)
{
  if (view == NULL)
    return;
  g_ptr_array_unref (view->covers);
  g_ptr_array_unref (view->directories);
  g_array_unref (view->exposed);
  g_free (view);
}

/* The child's side: async-signal-safe calls only ------------------------- */

/* The most paths a view exposes: the workspace (a layered session's
 * layers and its lower layer, or its keeper's mount) and the gateway
 * socket. */
#define MAX_EXPOSED 3

/* "/proc/self/fd/N" into @buffer (at least 32 bytes), without snprintf(). */
static void
format_fd_path (char *buffer,
                int   fd)
{
  static const char prefix[] = "/proc/self/fd/";
  char digits[16];
  int n = 0;

  memcpy (buffer, prefix, sizeof prefix - 1);
  do
    digits[n++] = '0' + fd % 10;
  while ((fd /= 10) > 0);
  for (int i = 0; i < n; i++)
    buffer[sizeof prefix - 1 + i] = digits[n - 1 - i];
  buffer[sizeof prefix - 1 + n] = '\0';
}

static void
close_all (int  *fds,
           guint n)
{
  int saved_errno = errno;

  for (guint i = 0; i < n; i++)
    if (fds[i] >= 0)
      close (fds[i]);
  errno = saved_errno;
}

/* Makes the covers' way down and the mount points, 0711 whatever the
 * umask (which bwrap and the guest must still inherit unchanged). */
static gboolean
make_way (const SandboxBubblewrapGuestView *view)
{
  mode_t old_umask = umask (0);
  gboolean ok = TRUE;

  for (guint i = 0; ok && i < view->directories->len; i++)
    ok = mkdir (view->directories->pdata[i], 0711) == 0;
  for (guint i = 0; ok && i < view->exposed->len; i++)
    {
      const Exposed *exposed = &g_array_index (view->exposed, Exposed, i);

      if (exposed->is_directory)
        ok = mkdir (exposed->path, 0700) == 0;
      else
        {
          int fd = open (exposed->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

          ok = fd >= 0;
          if (ok)
            close (fd);
        }
    }
  umask (old_umask);
  return ok;
}

/**
 * sandbox_bubblewrap_guest_view_enter:
 * @view: a view
 *
 * In bwrap's process, still with the host's privileges: a mount namespace
 * of its own in which the workspace and the gateway socket can be reached
 * by the guest ids at their own paths (see the top of this file).
 *
 * Returns: %TRUE, or %FALSE with errno set
 */
gboolean
sandbox_bubblewrap_guest_view_enter (const SandboxBubblewrapGuestView *view)
{
  int fds[MAX_EXPOSED] = { -1, -1, -1 };
  guint n = view->exposed->len;
  gboolean ok = TRUE;

  if (n > MAX_EXPOSED)
    {
      errno = E2BIG;
      return FALSE;
    }
  if (n == 0)
    return TRUE;   /* the guest can pass every way already */
  if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    return FALSE;

  /* Opened in this namespace (a bind source must be a mount of it), before
   * the covers hide them. */
  for (guint i = 0; ok && i < n; i++)
    {
      fds[i] = open (g_array_index (view->exposed, Exposed, i).path,
                     O_PATH | O_NOFOLLOW | O_CLOEXEC);
      ok = fds[i] >= 0;
    }
  /* The covers and the way down, made as the guest's ids: in a layered
   * session's keeper's user namespace (sandbox-bubblewrap-keeper.c), which
   * maps those ids only, a file made as root could not be owned
   * (EOVERFLOW). setfsuid() changes this thread alone and keeps
   * CAP_SYS_ADMIN for the mounts; the old ids come back with
   * sandbox_bubblewrap_guest_switch_ids(). */
  if (ok)
    {
      syscall (SYS_setfsgid, view->gid);
      syscall (SYS_setfsuid, view->uid);
    }
  for (guint i = 0; ok && i < view->covers->len; i++)
    ok = mount ("tmpfs", view->covers->pdata[i], "tmpfs",
                MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0711") == 0;
  ok = ok && make_way (view);
  for (guint i = 0; ok && i < n; i++)
    {
      char source[32];

      format_fd_path (source, fds[i]);
      ok = mount (source, g_array_index (view->exposed, Exposed, i).path, NULL,
                  MS_BIND, NULL) == 0;
    }
  close_all (fds, n);
  return ok;
}

/**
 * sandbox_bubblewrap_guest_switch_ids:
 * @view: a view
 *
 * In bwrap's process, last before exec (and before anything a credential
 * change resets, such as the parent-death signal): the guest ids, real,
 * effective and saved, and no supplementary group. From a non-zero uid the
 * kernel clears every capability; bwrap starts as an unprivileged user.
 *
 * Returns: %TRUE, or %FALSE with errno set
 */
gboolean
sandbox_bubblewrap_guest_switch_ids (const SandboxBubblewrapGuestView *view)
{
  uid_t ruid, euid, suid;

  /* Raw system calls: glibc's setgroups() and setres[ug]id() broadcast the
   * change to every thread glibc knows of (SIGSETXID) and wait for them,
   * and the launcher's clone() child is a copy whose thread list still
   * names the host's threads (glibc's fork() would have reset it): they
   * can wait forever on a thread that was being created or was exiting at
   * the clone. The child has one thread; the plain calls change it. */
  /* In a keeper's user namespace, which denies setgroups(), the groups
   * were dropped before entering it (see intermediate_entry() in
   * sandbox-bubblewrap-launcher.c). */
  if ((syscall (SYS_getgroups, 0, NULL) != 0 && syscall (SYS_setgroups, 0, NULL) < 0) ||
      syscall (SYS_setresgid, view->gid, view->gid, view->gid) < 0 ||
      syscall (SYS_setresuid, view->uid, view->uid, view->uid) < 0)
    return FALSE;
  /* Defence in depth: never exec bwrap as root by mistake. */
  if (getresuid (&ruid, &euid, &suid) < 0 || ruid == 0 || euid == 0 || suid == 0)
    {
      errno = EPERM;
      return FALSE;
    }
  return TRUE;
}
