/* sandbox-bubblewrap-keeper.c — a layered session's one overlay mount
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <gio/gunixfdmessage.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "sandbox-bubblewrap-guest-private.h"
#include "sandbox-bubblewrap-keeper-private.h"
#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-layering-private.h"
#include "sandbox-bubblewrap-stub-private.h"
#include "stub/sandbox-stub-keeper.h"

/*
 * Every command of a layered session used to mount an overlay of its own
 * on the session's layers. overlayfs calls changes to its layers made
 * meanwhile undefined, and they were: a running command did not see a
 * file another command, or the host, created after it had looked the name
 * up (its overlay cached the miss), and inotify in the guest saw nothing
 * the host wrote. Now a live layered session has exactly one overlay,
 * mounted by its keeper (the stub in keeper mode, as the guest's ids, in a
 * user and mount namespace of its own) from create or resume until stop:
 *
 * - each command's bwrap is started in the keeper's namespaces (the
 *   launcher's setns(), see sandbox-bubblewrap-launcher-child.c) and binds
 *   /workspace from layers/mount, which is that overlay there;
 * - the host's file calls go through the descriptor on the overlay's root
 *   the keeper sends back, with SandboxWorkspace's containment as for a
 *   copied workspace.
 *
 * So a layered workspace behaves as a copied one does. The keeper is
 * started through the launcher like bwrap (its parent-death signal, a pid
 * namespace of its own, the guest's ids on a root host), holds the
 * session's lock file as sandboxes do (lease recovery finds it after a
 * crash), and ends when its pipe closes or it is killed; the overlay goes
 * with the last namespace that holds it.
 */

/* How long the keeper may take to mount and answer, in seconds. */
#define KEEPER_ANSWER_TIMEOUT_S 10

struct _SandboxBubblewrapKeeper
{
  SandboxBubblewrapLaunched launched;   /* its pid only: no pipe, no pidfd
                                         * (a descriptor per session less) */
  int root_fd;                          /* O_PATH, the overlay's root, until
                                         * a workspace is opened on it */
  char **lowers;                        /* what it mounted, to mount it again */
  char **runtime_lowers;                /* its writable runtime's, or NULL */
  char *layers;
  char *work_name;
  char *mount;                          /* layers/mount */
  char *runtime_mount;                  /* layers/runtime-mount, or NULL */
  char *lock;                           /* layers/lock */
};

/* @lower relative to @layers (both absolute, canonical, in one store:
 * `../../../templates/KEY/data`), as the keeper's mount options take it,
 * or NULL when the result holds what they cannot (see
 * stub/sandbox-stub-keeper.c). */
static char *
lower_relative_to_layers (const char *lower,
                          const char *layers)
{
  g_auto(GStrv) from = g_strsplit (layers + 1, "/", -1);
  g_auto(GStrv) to = g_strsplit (lower + 1, "/", -1);
  g_autoptr(GString) relative = g_string_new (NULL);
  guint common = 0;

  if (!g_path_is_absolute (lower) || !g_path_is_absolute (layers))
    return NULL;
  while (from[common] != NULL && to[common] != NULL && strcmp (from[common], to[common]) == 0)
    common++;
  for (guint i = common; from[i] != NULL; i++)
    g_string_append (relative, "../");
  for (guint i = common; to[i] != NULL; i++)
    g_string_append_printf (relative, "%s%s", to[i], to[i + 1] != NULL ? "/" : "");
  if (relative->len == 0 || relative->len > 1000 || strpbrk (relative->str, ",:\\") != NULL)
    return NULL;
  return g_string_free (g_steal_pointer (&relative), FALSE);
}

static gboolean
set_layers_error (GError     **error,
                  int          saved_errno,
                  const char  *what)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Could not prepare the layered workspace: %s: %s", what,
               g_strerror (saved_errno));
  return FALSE;
}

/* layers/runtime-upper and layers/runtime-mount, the guest's (@guest
 * non-NULL) like upper/ and mount/. */
static gboolean
prepare_runtime_layers (int                           layers_fd,
                        const SandboxBubblewrapGuest *guest,
                        GError                      **error)
{
  const char *names[] = { STUB_KEEPER_RUNTIME_UPPER, STUB_KEEPER_RUNTIME_MOUNT };

  for (gsize i = 0; i < G_N_ELEMENTS (names); i++)
    {
      if (mkdirat (layers_fd, names[i], 0755) < 0 && errno != EEXIST)
        return set_layers_error (error, errno, names[i]);
      if (guest != NULL &&
          fchownat (layers_fd, names[i], guest->uid, guest->gid, AT_SYMLINK_NOFOLLOW) < 0)
        return set_layers_error (error, errno, names[i]);
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_keeper_prepare_layers:
 * @layers: the host path of a layered session's layers/
 * @runtime: whether the session's runtime is writable
 * @guest: (nullable): who guests are; %NULL: the host itself
 * @error: return location for a #GError
 *
 * Makes layers/mount (the overlay's mount point) and layers/lock (the
 * file sandboxes and the keeper hold their locks on) if they are missing
 * — sessions made before the keeper have neither — the guest's on a root
 * host; and with @runtime, the writable runtime's upper layer and mount
 * point (made on its first use). Never follows a link.
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_UNAVAILABLE
 */
gboolean
sandbox_bubblewrap_keeper_prepare_layers (const char                   *layers,
                                          gboolean                      runtime,
                                          const SandboxBubblewrapGuest *guest,
                                          GError                      **error)
{
  g_auto(SandboxBubblewrapFd) layers_fd = open (layers, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                                        O_CLOEXEC);
  g_auto(SandboxBubblewrapFd) lock_fd = -1;
  gboolean give = guest != NULL && guest->switched;

  if (layers_fd < 0)
    return set_layers_error (error, errno, "layers");
  if (mkdirat (layers_fd, "mount", 0755) < 0 && errno != EEXIST)
    return set_layers_error (error, errno, "mount");
  if (give && fchownat (layers_fd, "mount", guest->uid, guest->gid, AT_SYMLINK_NOFOLLOW) < 0)
    return set_layers_error (error, errno, "mount");
  if (runtime && !prepare_runtime_layers (layers_fd, give ? guest : NULL, error))
    return FALSE;
  lock_fd = openat (layers_fd, "lock", O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (lock_fd < 0)
    return set_layers_error (error, errno, "lock");
  if (give && fchown (lock_fd, guest->uid, guest->gid) < 0)
    return set_layers_error (error, errno, "lock");
  return TRUE;
}

/* Reads the keeper's answer on @socket_fd (taken): the overlay's root, or
 * -1 with @error. */
static int
receive_root (int      socket_fd,
              GError **error)
{
  g_autoptr(GSocket) socket = g_socket_new_from_fd (socket_fd, error);
  g_autoptr(GError) cause = NULL;
  int fd = -1;

  if (socket == NULL)
    {
      sandbox_bubblewrap_fd_close (socket_fd);
      return -1;
    }
  g_socket_set_timeout (socket, KEEPER_ANSWER_TIMEOUT_S);
  if (sandbox_bubblewrap_stub_receive_answer (socket, 'K', &fd, &cause) && fd >= 0)
    return fd;
  sandbox_bubblewrap_clear_fd (&fd);
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Could not mount the layered workspace: %s",
               cause != NULL ? cause->message : "its keeper sent no root");
  return -1;
}

/* The keeper as the guest on a root host: the launcher covers the way to
 * its layers as it does for bwrap, and switches to the guest's ids. */
static SandboxBubblewrapGuestView *
keeper_view (const char * const           *lowers,
             const char * const           *runtime_lowers,
             const char                   *layers,
             const SandboxBubblewrapGuest *guest)
{
  SandboxBubblewrapGuestView *view = sandbox_bubblewrap_guest_view_new (guest, layers, NULL);

  for (guint i = 0; lowers[i] != NULL; i++)
    sandbox_bubblewrap_guest_view_expose_lower (view, lowers[i]);
  /* Shown as the guest's too, so that its commands can change (copy up)
   * what the runtime holds, in their session's upper layer only. */
  for (guint i = 0; runtime_lowers != NULL && runtime_lowers[i] != NULL; i++)
    sandbox_bubblewrap_guest_view_expose_lower (view, runtime_lowers[i]);
  return view;
}

/* The lower= option: each of @lowers relative to @layers, top first,
 * joined by ':' (overlayfs' separator, which no element may hold), or
 * NULL. */
static char *
lowers_relative_to_layers (const char * const *lowers,
                           const char         *layers)
{
  g_autoptr(GString) option = g_string_new (NULL);

  for (guint i = 0; lowers[i] != NULL; i++)
    {
      g_autofree char *relative = lower_relative_to_layers (lowers[i], layers);

      if (relative == NULL)
        return NULL;
      g_string_append_printf (option, "%s%s", i > 0 ? ":" : "", relative);
    }
  if (option->len == 0 || option->len > STUB_KEEPER_MAX_LOWER)
    return NULL;
  return g_string_free (g_steal_pointer (&option), FALSE);
}

static gboolean
spawn_keeper (SandboxBubblewrapKeeper      *self,
              const SandboxBubblewrapGuest *guest,
              int                           answer_fd,
              GError                      **error)
{
  const char * const *lowers = (const char * const *) self->lowers;
  const char * const *runtime_lowers = (const char * const *) self->runtime_lowers;
  g_autoptr(SandboxBubblewrapGuestView) view = keeper_view (lowers, runtime_lowers, self->layers,
                                                            guest);
  g_autofree char *keep_arg = g_strconcat (STUB_KEEPER_OPTION, self->work_name, NULL);
  g_autofree char *relative_lower = lowers_relative_to_layers (lowers, self->layers);
  g_autofree char *lower_arg = g_strconcat ("lower=", relative_lower, NULL);
  g_autofree char *layers_arg = g_strconcat ("layers=", self->layers, NULL);
  g_autofree char *relative_runtime = runtime_lowers != NULL
                                      ? lowers_relative_to_layers (runtime_lowers, self->layers)
                                      : NULL;
  g_autofree char *runtime_arg = g_strconcat ("runtime=", relative_runtime, NULL);
  const char *options[] = { keep_arg, lower_arg, layers_arg,
                            runtime_lowers != NULL ? runtime_arg : NULL, NULL };
  SandboxBubblewrapSpawnExtras extras = SANDBOX_BUBBLEWRAP_SPAWN_EXTRAS_INIT;

  extras.guest_view = view;
  if (relative_lower == NULL || (runtime_lowers != NULL && relative_runtime == NULL))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not mount the layered workspace: the template's (or runtime's) "
                   "path relative to the session's holds ',', ':' or '\\', which overlay "
                   "options cannot, or its layers' paths are too long");
      return FALSE;
    }
  /* The answer socket at 0, 1 and 2: the keeper reads nothing. */
  self->launched.pid = sandbox_bubblewrap_launcher_spawn_stub (options, answer_fd, &extras,
                                                               error);
  return self->launched.pid != 0;
}

/* The keeper's work directory in layers/work/, and its runtime overlay's
 * beside it; none when either cannot be made. */
static gboolean
make_work_directories (SandboxBubblewrapKeeper      *self,
                       const SandboxBubblewrapGuest *guest,
                       GError                      **error)
{
  g_autofree char *name = sandbox_bubblewrap_layering_new_work_name ();
  g_autofree char *runtime_name = g_strconcat (name, STUB_KEEPER_RUNTIME_WORK_SUFFIX, NULL);

  if (!sandbox_bubblewrap_layering_make_work (self->layers, name, guest, error))
    return FALSE;
  if (self->runtime_lowers != NULL &&
      !sandbox_bubblewrap_layering_make_work (self->layers, runtime_name, guest, error))
    {
      sandbox_bubblewrap_layering_remove_work (self->layers, name);
      return FALSE;
    }
  self->work_name = g_steal_pointer (&name);
  return TRUE;
}

/**
 * sandbox_bubblewrap_keeper_start:
 * @lowers: the host paths of the lower layers, top first: the template's
 *   data, under the snapshots the session lies over
 * @runtime_lowers: (nullable): of a session whose runtime is writable, the
 *   lower layers of its runtime's overlay, top first; %NULL otherwise
 * @layers: the host path of the session's layers/
 * @guest: (nullable): who guests are; %NULL: the host itself
 * @error: return location for a #GError
 *
 * Starts the session's keeper and waits until it has mounted the overlay.
 * Any thread.
 *
 * Returns: (transfer full): the keeper, or %NULL with
 *   %SANDBOX_ERROR_UNAVAILABLE
 */
SandboxBubblewrapKeeper *
sandbox_bubblewrap_keeper_start (const char * const           *lowers,
                                 const char * const           *runtime_lowers,
                                 const char                   *layers,
                                 const SandboxBubblewrapGuest *guest,
                                 GError                      **error)
{
  g_autoptr(SandboxBubblewrapKeeper) self = g_new0 (SandboxBubblewrapKeeper, 1);
  g_auto(SandboxBubblewrapFd) answer_child = -1;
  g_auto(SandboxBubblewrapFd) answer_host = -1;
  int sockets[2];

  self->launched = (SandboxBubblewrapLaunched) SANDBOX_BUBBLEWRAP_LAUNCHED_INIT;
  self->root_fd = -1;
  self->lowers = g_strdupv ((char **) lowers);
  self->runtime_lowers = g_strdupv ((char **) runtime_lowers);
  self->layers = g_strdup (layers);
  if (!sandbox_bubblewrap_keeper_prepare_layers (layers, runtime_lowers != NULL, guest, error))
    return NULL;
  if (!make_work_directories (self, guest, error))
    return NULL;
  self->mount = g_build_filename (layers, "mount", NULL);
  self->lock = g_build_filename (layers, "lock", NULL);
  if (runtime_lowers != NULL)
    self->runtime_mount = g_build_filename (layers, STUB_KEEPER_RUNTIME_MOUNT, NULL);

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) < 0)
    {
      set_layers_error (error, errno, "socketpair");
      return NULL;
    }
  answer_host = sockets[0];
  answer_child = sockets[1];
  /* The launcher places 0, 1 and 2 from descriptors above 2. */
  if (answer_child < 3)
    {
      set_layers_error (error, EBADF, "descriptors");
      return NULL;
    }
  if (!spawn_keeper (self, guest, answer_child, error))
    return NULL;
  sandbox_bubblewrap_clear_fd (&answer_child);
  self->root_fd = receive_root (g_steal_fd (&answer_host), error);
  if (self->root_fd < 0)
    return NULL;
  return g_steal_pointer (&self);
}

/**
 * sandbox_bubblewrap_keeper_get_pid:
 * @self: a keeper
 *
 * Returns: the keeper's pid, whose namespaces commands are started in: a
 *   child of this process, reaped only by sandbox_bubblewrap_keeper_stop(),
 *   so until then no other process can have it; 0 once stopped
 */
pid_t
sandbox_bubblewrap_keeper_get_pid (SandboxBubblewrapKeeper *self)
{
  return self->launched.pid;
}

/**
 * sandbox_bubblewrap_keeper_has_exited:
 * @self: a keeper
 *
 * Whether the keeper is gone while the session is live (the OOM killer,
 * an operator's kill): its namespaces then hold no overlay new commands
 * could enter. It is not reaped here (WNOWAIT), so its pid stays its own
 * until sandbox_bubblewrap_keeper_stop().
 *
 * Returns: %TRUE when the keeper has exited or was stopped
 */
gboolean
sandbox_bubblewrap_keeper_has_exited (SandboxBubblewrapKeeper *self)
{
  siginfo_t info = { 0, };

  if (self->launched.pid == 0)
    return TRUE;
  if (waitid (P_PID, self->launched.pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    return errno != EINTR;
  return info.si_pid == self->launched.pid;
}

/**
 * sandbox_bubblewrap_keeper_start_again:
 * @self: a keeper, stopped or exited
 * @guest: (nullable): who guests are, as for sandbox_bubblewrap_keeper_start()
 * @error: return location for a #GError
 *
 * A new keeper of the same layers, once @self is stopped.
 *
 * Returns: (transfer full): the new keeper, or %NULL with
 *   %SANDBOX_ERROR_UNAVAILABLE
 */
SandboxBubblewrapKeeper *
sandbox_bubblewrap_keeper_start_again (SandboxBubblewrapKeeper       *self,
                                       const SandboxBubblewrapGuest  *guest,
                                       GError                       **error)
{
  return sandbox_bubblewrap_keeper_start ((const char * const *) self->lowers,
                                          (const char * const *) self->runtime_lowers,
                                          self->layers, guest, error);
}

/**
 * sandbox_bubblewrap_keeper_open_workspace:
 * @self: a keeper
 * @flags: how the workspace writes
 * @error: return location for a #GError
 *
 * The host's side of the overlay: a workspace on its root, with the
 * containment of any (see sandbox-workspace.h). Once only: @self then
 * closes its own descriptor on the root, so that a live session holds
 * just this one and the keeper's pidfd.
 *
 * Returns: (transfer full): the workspace, or %NULL with @error set
 */
SandboxWorkspace *
sandbox_bubblewrap_keeper_open_workspace (SandboxBubblewrapKeeper  *self,
                                          SandboxWorkspaceFlags     flags,
                                          GError                  **error)
{
  SandboxWorkspace *workspace;

  g_return_val_if_fail (self->root_fd >= 0, NULL);

  workspace = sandbox_workspace_open_at (self->root_fd, ".", flags, error);
  sandbox_bubblewrap_clear_fd (&self->root_fd);
  return workspace;
}

/**
 * sandbox_bubblewrap_keeper_get_mount:
 * @self: a keeper
 *
 * Returns: the host path of layers/mount, the overlay in the keeper's
 *   namespaces (an empty directory in the host's)
 */
const char *
sandbox_bubblewrap_keeper_get_mount (SandboxBubblewrapKeeper *self)
{
  return self->mount;
}

/**
 * sandbox_bubblewrap_keeper_get_runtime_mount:
 * @self: a keeper
 *
 * Returns: (nullable): the host path of layers/runtime-mount, the
 *   session's writable runtime in the keeper's namespaces, or %NULL when
 *   its runtime (if any) is read-only
 */
const char *
sandbox_bubblewrap_keeper_get_runtime_mount (SandboxBubblewrapKeeper *self)
{
  return self->runtime_mount;
}

/**
 * sandbox_bubblewrap_keeper_get_runtime_lowers:
 * @self: a keeper
 *
 * Returns: (nullable): the lower layers of its writable runtime's overlay,
 *   as sandbox_bubblewrap_keeper_start() took them, or %NULL
 */
const char * const *
sandbox_bubblewrap_keeper_get_runtime_lowers (SandboxBubblewrapKeeper *self)
{
  return (const char * const *) self->runtime_lowers;
}

/**
 * sandbox_bubblewrap_keeper_get_lock:
 * @self: a keeper
 *
 * Returns: the host path of layers/lock
 */
const char *
sandbox_bubblewrap_keeper_get_lock (SandboxBubblewrapKeeper *self)
{
  return self->lock;
}

/**
 * sandbox_bubblewrap_keeper_stop:
 * @self: a keeper
 *
 * Kills the keeper, reaps it and removes its work directory, once the
 * session's commands are gone. The rest of @self stays valid until it is
 * freed: sandbox_bubblewrap_keeper_get_pid() is then 0. The overlay lives on
 * while a descriptor on it is open.
 * Idempotent.
 */
void
sandbox_bubblewrap_keeper_stop (SandboxBubblewrapKeeper *self)
{
  /* Not reaped yet: the pid is still the keeper's. */
  if (self->launched.pid != 0)
    {
      kill (self->launched.pid, SIGKILL);
      TEMP_FAILURE_RETRY (waitpid (self->launched.pid, NULL, 0));
      self->launched.pid = 0;
    }
  sandbox_bubblewrap_launched_close_pipes (&self->launched);
  if (self->work_name != NULL)
    sandbox_bubblewrap_layering_remove_work (self->layers, self->work_name);
  if (self->work_name != NULL && self->runtime_lowers != NULL)
    {
      g_autofree char *runtime_name = g_strconcat (self->work_name,
                                                   STUB_KEEPER_RUNTIME_WORK_SUFFIX, NULL);

      sandbox_bubblewrap_layering_remove_work (self->layers, runtime_name);
    }
  g_clear_pointer (&self->work_name, g_free);
}

/**
 * sandbox_bubblewrap_keeper_free:
 * @self: (nullable): a keeper
 *
 * Stops the keeper (sandbox_bubblewrap_keeper_stop()) and frees @self.
 */
void
sandbox_bubblewrap_keeper_free (SandboxBubblewrapKeeper *self)
{
  if (self == NULL)
    return;
  sandbox_bubblewrap_keeper_stop (self);
  sandbox_bubblewrap_clear_fd (&self->root_fd);
  g_strfreev (self->lowers);
  g_strfreev (self->runtime_lowers);
  g_free (self->layers);
  g_free (self->mount);
  g_free (self->runtime_mount);
  g_free (self->lock);
  g_free (self);
}
