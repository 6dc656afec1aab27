/* sandbox-bubblewrap-guest.c — starting bwrap as the guest ids
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>

#include <glib-unix.h>
#include <grp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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
 *   directories), and the workspace and socket themselves are attached
 *   back at their own paths. bwrap gets the same arguments as always (the
 *   same paths, which recovery and error messages name) and can reach
 *   these two and nothing else of the state directory; the host's own view
 *   is untouched, no host directory changes mode. The namespace lives as
 *   long as bwrap's processes.
 *
 * What is attached back is a detached copy of its mount, taken with
 * open_tree(OPEN_TREE_CLONE) in the host's mount namespace when the view
 * is planned (Linux 5.2; the descriptors are close-on-exec), because the
 * namespace bwrap starts in need not show it: a layered session's
 * commands start in its keeper's (sandbox-bubblewrap-keeper.c), where the
 * keeper's own view has covered the way to the session's layers. When
 * TMPDIR, which holds the gateway's socket, is at or below one of those
 * covers (TMPDIR and the state directory nest, or share a parent the
 * guest cannot pass), the socket is hidden there (issue 31). And such a
 * cover must not be covered again, which would hide the layers: in a
 * keeper's namespace a directory the plan would cover, where another
 * directory than the host's is found (the keeper's tmpfs), is left as it
 * is and the way to the socket made inside it, beside the keeper's, as
 * the guest's ids. That way stays there for the session's later commands,
 * seen only by processes in the keeper's namespaces, never by guests.
 *
 * The guest ids can then use: the workspace, which belongs to them (the
 * store and SandboxWorkspace give what the host creates to them), and
 * the socket, which the driver gives to them (connect() needs write
 * permission on it).
 */

/* One path bwrap must reach: attached over itself once its way is made. */
typedef struct
{
  char *path;
  gboolean is_directory;
  int tree_fd;      /* the host's detached copy of its mount, or -1 */
  int tree_errno;   /* why there is none */
} Exposed;

/* A directory the guest cannot pass, covered with a tmpfs, and which
 * directory the plan found there (all zero if it could not look). */
typedef struct
{
  char *path;
  dev_t dev;
  ino_t ino;
} Cover;

struct _SandboxBubblewrapGuestView
{
  uid_t uid;
  gid_t gid;
  GArray *covers;           /* Cover */
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

/* @st: (nullable): what stat() found at @path */
static void
add_cover (SandboxBubblewrapGuestView *view,
           const char                 *path,
           const struct stat          *st)
{
  Cover cover = { g_strdup (path), 0, 0 };

  for (guint i = 0; i < view->covers->len; i++)
    if (strcmp (g_array_index (view->covers, Cover, i).path, path) == 0)
      {
        g_free (cover.path);
        return;
      }
  if (st != NULL)
    {
      cover.dev = st->st_dev;
      cover.ino = st->st_ino;
    }
  g_array_append_val (view->covers, cover);
}

/* Writes "FROM TO 1" into /proc/@pid/@map. */
static gboolean
write_id_map (pid_t       pid,
              const char *map,
              guint32     from,
              guint32     to)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/%s", (int) pid, map);
  g_autofree char *line = g_strdup_printf ("%u %u 1\n", from, to);
  g_auto(SandboxBubblewrapFd) fd = open (path, O_WRONLY | O_CLOEXEC);

  return fd >= 0 && write (fd, line, strlen (line)) == (ssize_t) strlen (line);
}

/* A user namespace that maps the host's ids to @view's (uid_map and
 * gid_map "HOST GUEST 1"), as MOUNT_ATTR_IDMAP takes one: a child that
 * makes it and waits until its namespace is open here. -1 with errno set.
 * The child calls async-signal-safe functions only (this process has
 * threads). */
static int
new_idmap_userns (const SandboxBubblewrapGuestView *view)
{
  g_auto(SandboxBubblewrapFd) ready_read = -1, ready_write = -1;
  g_auto(SandboxBubblewrapFd) hold_read = -1, hold_write = -1;
  int fds[2];
  int userns_fd = -1;
  int saved_errno = 0;
  pid_t pid;
  char byte;

  if (!g_unix_open_pipe (fds, FD_CLOEXEC, NULL))
    return -1;
  ready_read = fds[0], ready_write = fds[1];
  if (!g_unix_open_pipe (fds, FD_CLOEXEC, NULL))
    return -1;
  hold_read = fds[0], hold_write = fds[1];

  pid = fork ();
  if (pid < 0)
    return -1;
  if (pid == 0)
    {
      close (hold_write);
      if (unshare (CLONE_NEWUSER) == 0)
        (void) ! write (ready_write, "u", 1);
      (void) ! read (hold_read, &byte, 1);
      _exit (0);
    }
  sandbox_bubblewrap_clear_fd (&ready_write);
  if (TEMP_FAILURE_RETRY (read (ready_read, &byte, 1)) == 1 &&
      write_id_map (pid, "uid_map", getuid (), view->uid) &&
      write_id_map (pid, "gid_map", getgid (), view->gid))
    {
      g_autofree char *path = g_strdup_printf ("/proc/%d/ns/user", (int) pid);

      userns_fd = open (path, O_RDONLY | O_CLOEXEC);
    }
  saved_errno = userns_fd < 0 ? (errno != 0 ? errno : EPERM) : 0;
  sandbox_bubblewrap_clear_fd (&hold_write);
  while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
    ;
  errno = saved_errno;
  return userns_fd;
}

/* Makes the detached mount @tree_fd show what the host owns as owned by
 * @view's ids (Linux 5.12; an overlay's lower layer may be one from 5.19),
 * read-only: the keeper, which runs as those ids, could otherwise write
 * the template through it. */
static gboolean
idmap_tree (const SandboxBubblewrapGuestView *view,
            int                               tree_fd)
{
  g_auto(SandboxBubblewrapFd) userns_fd = new_idmap_userns (view);
  struct mount_attr attr = {
    .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
  };

  if (userns_fd < 0)
    return FALSE;
  attr.userns_fd = (guint64) userns_fd;
  return mount_setattr (tree_fd, "", AT_EMPTY_PATH, &attr, sizeof attr) == 0;
}

/* Plans the way to @path: the first directory from / down that the guest
 * cannot pass is covered, the directories below it are made inside. A
 * directory that cannot be examined counts as closed. Two paths' first
 * closed directories are either the same or not nested, as each is the
 * first closed one on its way. */
static void
plan_way (SandboxBubblewrapGuestView *view,
          const char                 *path,
          gboolean                    is_directory,
          gboolean                    idmapped)
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
      gboolean examined;

      g_string_append_c (prefix, '/');
      g_string_append (prefix, components[i]);
      if (covered)
        {
          add_unique (view->directories, prefix->str);
          continue;
        }
      examined = stat (prefix->str, &st) == 0;
      if (!examined || !guest_can_pass (view, &st))
        {
          add_cover (view, prefix->str, examined ? &st : NULL);
          covered = TRUE;
        }
    }
  if (covered || idmapped)
    {
      Exposed exposed = { g_steal_pointer (&resolved), is_directory, -1, 0 };

      /* Here, in the host's namespace; it is attached in bwrap's. */
      exposed.tree_fd = open_tree (AT_FDCWD, exposed.path,
                                   OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW);
      if (exposed.tree_fd >= 0 && idmapped && !idmap_tree (view, exposed.tree_fd))
        sandbox_bubblewrap_clear_fd (&exposed.tree_fd);
      exposed.tree_errno = exposed.tree_fd < 0 ? errno : 0;
      g_array_append_val (view->exposed, exposed);
    }
}

static void
cover_clear (gpointer data)
{
  g_free (((Cover *) data)->path);
}

static void
exposed_clear (gpointer data)
{
  Exposed *exposed = data;

  g_free (exposed->path);
  if (exposed->tree_fd >= 0)
    close (exposed->tree_fd);
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
  view->covers = g_array_new (FALSE, TRUE, sizeof (Cover));
  g_array_set_clear_func (view->covers, cover_clear);
  view->directories = g_ptr_array_new_with_free_func (g_free);
  view->exposed = g_array_new (FALSE, TRUE, sizeof (Exposed));
  g_array_set_clear_func (view->exposed, exposed_clear);
  if (workspace != NULL)
    plan_way (view, workspace, TRUE, FALSE);
  if (gateway_socket != NULL)
    plan_way (view, gateway_socket, FALSE, FALSE);
  return view;
}

/**
 * sandbox_bubblewrap_guest_view_expose_lower:
 * @view: (nullable): a view
 * @path: a layered session's lower layer (its template's data, the
 *   host's)
 *
 * Adds @path to what @view exposes, idmapped: what the host owns there
 * shows as owned by the guest's ids, so that the keeper's overlay, in a
 * user namespace that maps those ids only, can copy it up (see
 * sandbox-bubblewrap-store-guests.c). Nothing without a view (the guest
 * is the host, which owns the template).
 */
void
sandbox_bubblewrap_guest_view_expose_lower (SandboxBubblewrapGuestView *view,
                                            const char                 *path)
{
  if (view != NULL)
    plan_way (view, path, TRUE, TRUE);
}

/**
 * sandbox_bubblewrap_guest_view_expose_runtime:
 * @view: (nullable): a view
 * @path: the host path of a session's runtime tree, which the host owns
 *   and the guest may read (never write: see
 *   sandbox-bubblewrap-store-runtimes.c)
 *
 * Adds @path to what @view exposes, as it is: bwrap binds it read-only.
 * Nothing without a view.
 */
void
sandbox_bubblewrap_guest_view_expose_runtime (SandboxBubblewrapGuestView *view,
                                              const char                 *path)
{
  if (view != NULL)
    plan_way (view, path, TRUE, FALSE);
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
  g_array_unref (view->covers);
  g_ptr_array_unref (view->directories);
  g_array_unref (view->exposed);
  g_free (view);
}

/* The child's side: async-signal-safe calls only ------------------------- */

/* Whether a keeper's view has covered @cover already: its namespace shows
 * another directory there than the host's the plan found closed (the
 * keeper's tmpfs). Compared by identity, as ownership cannot tell: the
 * keeper's user namespace maps the guest's ids only, so the host's root
 * shows as the overflow uid, which may well be the guest's (65534). */
static gboolean
covered_already (const Cover *cover)
{
  struct stat st;

  if ((cover->dev == 0 && cover->ino == 0) || stat (cover->path, &st) < 0)
    return FALSE;   /* mount() says why */
  return st.st_dev != cover->dev || st.st_ino != cover->ino;
}

/* Makes the covers' way down and the mount points, 0711 whatever the
 * umask (which bwrap and the guest must still inherit unchanged). In a
 * keeper's cover, a part of the way may be there already: made by the
 * keeper's view, or by an earlier command's. */
static gboolean
make_way (const SandboxBubblewrapGuestView *view)
{
  mode_t old_umask = umask (0);
  gboolean ok = TRUE;

  for (guint i = 0; ok && i < view->directories->len; i++)
    ok = mkdir (view->directories->pdata[i], 0711) == 0 || errno == EEXIST;
  for (guint i = 0; ok && i < view->exposed->len; i++)
    {
      const Exposed *exposed = &g_array_index (view->exposed, Exposed, i);

      if (exposed->is_directory)
        ok = mkdir (exposed->path, 0700) == 0 || errno == EEXIST;
      else
        {
          int fd = open (exposed->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

          ok = fd >= 0 || errno == EEXIST;
          if (fd >= 0)
            close (fd);
        }
    }
  umask (old_umask);
  return ok;
}

/**
 * sandbox_bubblewrap_guest_view_enter:
 * @view: a view
 * @in_keeper: whether this process is in a layered session's keeper's
 *   namespaces, whose view may have covered some of the way already
 *
 * In bwrap's process, still with the host's privileges: a mount namespace
 * of its own in which the workspace and the gateway socket can be reached
 * by the guest ids at their own paths (see the top of this file).
 *
 * Returns: %TRUE, or %FALSE with errno set
 */
gboolean
sandbox_bubblewrap_guest_view_enter (const SandboxBubblewrapGuestView *view,
                                     gboolean                          in_keeper)
{
  guint n = view->exposed->len;
  gboolean ok = TRUE;

  if (n == 0)
    return TRUE;   /* the guest can pass every way already */
  for (guint i = 0; i < n; i++)
    if (g_array_index (view->exposed, Exposed, i).tree_fd < 0)
      {
        errno = g_array_index (view->exposed, Exposed, i).tree_errno;
        return FALSE;
      }
  if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
    return FALSE;

  /* The covers and the way down, made as the guest's ids: in a layered
   * session's keeper's user namespace (sandbox-bubblewrap-keeper.c), which
   * maps those ids only, a file made as root could not be owned
   * (EOVERFLOW). setfsuid() changes this thread alone and keeps
   * CAP_SYS_ADMIN for the mounts; the old ids come back with
   * sandbox_bubblewrap_guest_switch_ids(). */
  syscall (SYS_setfsgid, view->gid);
  syscall (SYS_setfsuid, view->uid);
  for (guint i = 0; ok && i < view->covers->len; i++)
    {
      const Cover *cover = &g_array_index (view->covers, Cover, i);

      ok = (in_keeper && covered_already (cover)) ||
           mount ("tmpfs", cover->path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "mode=0711") == 0;
    }
  ok = ok && make_way (view);
  for (guint i = 0; ok && i < n; i++)
    {
      const Exposed *exposed = &g_array_index (view->exposed, Exposed, i);

      ok = move_mount (exposed->tree_fd, "", AT_FDCWD, exposed->path,
                       MOVE_MOUNT_F_EMPTY_PATH) == 0;
    }
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
   * sandbox-bubblewrap-launcher-child.c). */
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
