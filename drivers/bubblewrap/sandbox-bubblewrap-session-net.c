/* sandbox-bubblewrap-session-net.c — the network namespace a session's commands share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-network-private.h"
#include "sandbox-bubblewrap-session-net-private.h"
#include "sandbox-bubblewrap-stub-private.h"
#include "stub/sandbox-stub-net.h"

/*
 * A session's loopback
 *
 * Every command used to get a network namespace of its own from bwrap
 * (--unshare-net), so a server one command started (a background dev
 * server) could not be reached by the next. Now the commands of a session
 * share one: the network keeper (the stub in its network mode, see
 * stub/sandbox-stub-net.c) makes it, brings its loopback up and, under an
 * allow-list, binds the proxy's listener there once; every command's bwrap
 * is started in it (the launcher's setns(), see
 * sandbox-bubblewrap-launcher-child.c) with --share-net, and keeps its own
 * pid namespace, /tmp, seccomp filter and Landlock domain (which also
 * keeps one command's abstract sockets from another's). Under allow-all,
 * one slirp4netns per session joins it to the outside.
 *
 * Who owns the namespace decides who may enter it: on a root host the
 * initial user namespace (the network keeper runs as root, then drops
 * every capability); elsewhere a user namespace the network keeper makes,
 * which maps only the host's ids — as a child of a layered session's
 * keeper's, whose user namespace the commands enter first, or as its
 * own, which the commands of an unlayered session then start in (see
 * sandbox_bubblewrap_session_net_owns_user()). A guest never has a
 * capability over it: it cannot change its addresses, routes or
 * interfaces.
 *
 * One per network policy: a policy change makes the next command start a
 * new one (the driver's), and the old one ends with the last command
 * that holds it. Sessions never share one. A session with no command has
 * none.
 */

/* How long the network keeper may take to answer, in seconds. */
#define NET_ANSWER_TIMEOUT_S 10

struct _SandboxBubblewrapSessionNet
{
  gatomicrefcount ref_count;
  SandboxNetworkPolicyKind kind;
  GPid pid;                  /* the network keeper: a child of this process,
                              * reaped only at the last unref */
  gboolean owns_user;
  GSocket *socket;           /* to the network keeper, for new sockets */
  GMutex socket_lock;
  SandboxGateway *gateway;   /* under an allow-list: serves the listener */
  guint proxy_listener_id;
  SandboxBubblewrapNetwork *outside;   /* under allow-all: slirp4netns */
};

static void
session_net_free (SandboxBubblewrapSessionNet *self)
{
  sandbox_bubblewrap_session_net_close (self);
  g_clear_object (&self->socket);
  g_mutex_clear (&self->socket_lock);
  g_free (self);
}

/**
 * sandbox_bubblewrap_session_net_close:
 * @self: a session's network
 *
 * Ends it now, whoever holds it: its proxy listener leaves the gateway,
 * its slirp4netns ends and its network keeper is killed and reaped. For
 * the session's stop, once its commands are gone: nothing launches in it
 * afterwards (the session's gate refuses every command from the stop on,
 * before it launches). Idempotent.
 */
void
sandbox_bubblewrap_session_net_close (SandboxBubblewrapSessionNet *self)
{
  if (self->proxy_listener_id != 0)
    sandbox_gateway_remove_proxy_listener (self->gateway, self->proxy_listener_id);
  self->proxy_listener_id = 0;
  g_clear_object (&self->gateway);
  g_clear_pointer (&self->outside, sandbox_bubblewrap_network_free);
  g_mutex_lock (&self->socket_lock);
  if (self->socket != NULL)
    g_socket_close (self->socket, NULL);
  g_mutex_unlock (&self->socket_lock);
  /* Not reaped yet: the pid is still the network keeper's. */
  if (self->pid != 0)
    {
      kill (self->pid, SIGKILL);
      TEMP_FAILURE_RETRY (waitpid (self->pid, NULL, 0));
      self->pid = 0;
    }
}

/* Whether the network keeper has exited under a live session (the OOM
 * killer, an operator's kill): no command can join its namespace any more.
 * Not reaped here (WNOWAIT): its pid stays its own until the close. Under
 * the slot's lock, which every close of a slot's network takes. */
static gboolean
session_net_has_exited (SandboxBubblewrapSessionNet *self)
{
  siginfo_t info = { 0, };

  if (self->pid == 0)
    return TRUE;
  if (waitid (P_PID, self->pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0)
    return errno != EINTR;
  return info.si_pid == self->pid;
}

/* The network keeper, with @answer_fd at its 0, 1 and 2. */
static gboolean
spawn_net_keeper (SandboxBubblewrapSessionNet  *self,
                  SandboxBubblewrapKeeper      *keeper,
                  int                           answer_fd,
                  GError                      **error)
{
  g_autofree char *proxy_arg = g_strdup_printf ("proxy=%u", SANDBOX_BUBBLEWRAP_PROXY_PORT);
  const char *options[] = {
    STUB_NET_OPTION,
    self->kind == SANDBOX_NETWORK_POLICY_ALLOW_LIST ? proxy_arg : NULL,
    NULL,
  };
  SandboxBubblewrapSpawnExtras extras = SANDBOX_BUBBLEWRAP_SPAWN_EXTRAS_INIT;

  /* Not root: in the layered session's keeper's user namespace, so that
   * the one it makes is a child of it, which commands there may enter.
   * Root makes it in the initial one, as root (no guest view). */
  if (keeper != NULL && geteuid () != 0)
    extras.enter_pid = sandbox_bubblewrap_keeper_get_pid (keeper);
  self->pid = sandbox_bubblewrap_launcher_spawn_stub (options, answer_fd, &extras, error);
  return self->pid != 0;
}

/* The proxy's listener, which the network keeper made (@fd, taken), goes
 * to the session's gateway for as long as @self lives. */
static gboolean
serve_proxy_listener (SandboxBubblewrapSessionNet  *self,
                      SandboxGateway               *gateway,
                      int                           fd,
                      GError                      **error)
{
  g_autoptr(GSocket) listener = g_socket_new_from_fd (fd, error);

  if (listener == NULL)
    {
      close (fd);
      return FALSE;
    }
  self->gateway = g_object_ref (gateway);
  self->proxy_listener_id = sandbox_gateway_add_proxy_listener (gateway, listener, error);
  return self->proxy_listener_id != 0;
}

/* slirp4netns in the network keeper's namespace, which stays its child's
 * (so the pid names it) until @self is freed. */
static gboolean
join_to_outside (SandboxBubblewrapSessionNet  *self,
                 gboolean                      host_loopback,
                 GError                      **error)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/ns/net", (int) self->pid);
  int netns_fd = open (path, O_RDONLY | O_CLOEXEC);

  if (netns_fd < 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "An allow-all session's network could not be set up: %s",
                   g_strerror (errno));
      return FALSE;
    }
  self->outside = sandbox_bubblewrap_network_start_in (host_loopback, netns_fd, error);
  return self->outside != NULL;
}

/**
 * sandbox_bubblewrap_session_net_start:
 * @kind: the session's network policy kind
 * @host_loopback: under allow-all, whether guests reach the host's
 *   loopback (at 10.0.2.2)
 * @keeper: (nullable): a layered session's keeper
 * @gateway: (nullable): under an allow-list, the session's gateway, which
 *   serves the proxy's listener in the namespace
 * @error: return location for a #GError
 *
 * Makes a network namespace for the session's commands under a policy of
 * @kind, and waits until it is ready. Any thread but the launcher's.
 *
 * Returns: (transfer full): the namespace, or %NULL with
 *   %SANDBOX_ERROR_UNAVAILABLE
 */
SandboxBubblewrapSessionNet *
sandbox_bubblewrap_session_net_start (SandboxNetworkPolicyKind   kind,
                                      gboolean                   host_loopback,
                                      SandboxBubblewrapKeeper   *keeper,
                                      SandboxGateway            *gateway,
                                      GError                   **error)
{
  g_autoptr(SandboxBubblewrapSessionNet) self = g_new0 (SandboxBubblewrapSessionNet, 1);
  g_auto(SandboxBubblewrapFd) answer_child = -1;
  g_autoptr(GError) cause = NULL;
  int sockets[2];
  int listener_fd = -1;

  g_return_val_if_fail (kind != SANDBOX_NETWORK_POLICY_ALLOW_LIST || gateway != NULL, NULL);

  g_atomic_ref_count_init (&self->ref_count);
  g_mutex_init (&self->socket_lock);
  self->kind = kind;
  self->owns_user = keeper == NULL && geteuid () != 0;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets) < 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not make the session's network: socketpair: %s", g_strerror (errno));
      return NULL;
    }
  answer_child = sockets[1];
  self->socket = g_socket_new_from_fd (sockets[0], error);
  if (self->socket == NULL)
    {
      close (sockets[0]);
      return NULL;
    }
  g_socket_set_timeout (self->socket, NET_ANSWER_TIMEOUT_S);
  /* The launcher places 0, 1 and 2 from descriptors above 2. */
  if (answer_child < 3 || !spawn_net_keeper (self, keeper, answer_child, error))
    {
      if (answer_child < 3)
        g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                             "Could not make the session's network: descriptors");
      return NULL;
    }
  sandbox_bubblewrap_clear_fd (&answer_child);
  if (!sandbox_bubblewrap_stub_receive_answer (self->socket, 'N', &listener_fd, &cause))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not make the session's network: %s", cause->message);
      return NULL;
    }
  /* The stub sends a listener exactly when asked (proxy=, an allow-list). */
  if ((listener_fd >= 0) != (kind == SANDBOX_NETWORK_POLICY_ALLOW_LIST))
    {
      sandbox_bubblewrap_clear_fd (&listener_fd);
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "Could not make the session's network: the proxy listener "
                           "does not match the policy");
      return NULL;
    }
  if (listener_fd >= 0 && !serve_proxy_listener (self, gateway, listener_fd, error))
    return NULL;
  if (kind == SANDBOX_NETWORK_POLICY_ALLOW_ALL && !join_to_outside (self, host_loopback, error))
    return NULL;
  return g_steal_pointer (&self);
}

/**
 * sandbox_bubblewrap_session_net_ref:
 * @self: a session's network
 *
 * Returns: (transfer full): @self
 */
SandboxBubblewrapSessionNet *
sandbox_bubblewrap_session_net_ref (SandboxBubblewrapSessionNet *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

/**
 * sandbox_bubblewrap_session_net_unref:
 * @self: (transfer full) (nullable): a session's network
 *
 * At the last reference: its proxy listener leaves the gateway, its
 * slirp4netns ends and its network keeper is killed and reaped. The
 * namespace itself lives on while a process is in it.
 */
void
sandbox_bubblewrap_session_net_unref (SandboxBubblewrapSessionNet *self)
{
  if (self != NULL && g_atomic_ref_count_dec (&self->ref_count))
    session_net_free (self);
}

/**
 * sandbox_bubblewrap_session_net_get_pid:
 * @self: a session's network
 *
 * Returns: the network keeper's pid, whose network namespace commands
 *   start in: a child of this process, reaped only when @self is freed
 */
pid_t
sandbox_bubblewrap_session_net_get_pid (SandboxBubblewrapSessionNet *self)
{
  return self->pid;
}

/**
 * sandbox_bubblewrap_session_net_owns_user:
 * @self: a session's network
 *
 * Returns: whether commands also start in the network keeper's user
 *   namespace, which owns its network namespace (a host that is not root,
 *   for a session without a keeper)
 */
gboolean
sandbox_bubblewrap_session_net_owns_user (SandboxBubblewrapSessionNet *self)
{
  return self->owns_user;
}

/**
 * sandbox_bubblewrap_session_net_new_socket:
 * @self: a session's network
 * @error: return location for a #GError
 *
 * A TCP socket of the session's network namespace, not connected yet:
 * the host's way to a port a guest listens on. Any thread; blocks until
 * the network keeper answers.
 *
 * Returns: (transfer full): the socket, or %NULL with
 *   %SANDBOX_ERROR_UNAVAILABLE
 */
GSocket *
sandbox_bubblewrap_session_net_new_socket (SandboxBubblewrapSessionNet  *self,
                                           GError                      **error)
{
  g_autoptr(GError) cause = NULL;
  GSocket *socket = NULL;
  gboolean answered;
  int fd = -1;

  g_mutex_lock (&self->socket_lock);
  answered = g_socket_send (self->socket, "S", 1, NULL, &cause) == 1 &&
             sandbox_bubblewrap_stub_receive_answer (self->socket, 'S', &fd, &cause);
  g_mutex_unlock (&self->socket_lock);
  if (answered && fd >= 0)
    socket = g_socket_new_from_fd (fd, &cause);
  if (socket == NULL)
    {
      sandbox_bubblewrap_clear_fd (&fd);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not reach the session's network: %s",
                   cause != NULL ? cause->message : "no socket came");
    }
  return socket;
}

/* The slot ------------------------------------------------------------- */

/**
 * sandbox_bubblewrap_net_slot_init:
 * @slot: an empty slot
 */
void
sandbox_bubblewrap_net_slot_init (SandboxBubblewrapNetSlot *slot)
{
  g_mutex_init (&slot->lock);
  slot->net = NULL;
  slot->revision = 0;
  slot->closed = FALSE;
}

/**
 * sandbox_bubblewrap_net_slot_clear:
 * @slot: a slot
 *
 * Drops its network (what still holds it keeps it) and frees its lock.
 */
void
sandbox_bubblewrap_net_slot_clear (SandboxBubblewrapNetSlot *slot)
{
  g_clear_pointer (&slot->net, sandbox_bubblewrap_session_net_unref);
  g_mutex_clear (&slot->lock);
}

/**
 * sandbox_bubblewrap_net_slot_dup:
 * @slot: a slot
 * @revision: a network policy revision
 *
 * Any thread, the launcher's too: never starts one.
 *
 * Returns: (transfer full) (nullable): the network made for @revision,
 *   or %NULL
 */
SandboxBubblewrapSessionNet *
sandbox_bubblewrap_net_slot_dup (SandboxBubblewrapNetSlot *slot,
                                 guint64                   revision)
{
  SandboxBubblewrapSessionNet *net = NULL;

  g_mutex_lock (&slot->lock);
  if (slot->net != NULL && slot->revision == revision && !session_net_has_exited (slot->net))
    net = sandbox_bubblewrap_session_net_ref (slot->net);
  g_mutex_unlock (&slot->lock);
  return net;
}

/**
 * sandbox_bubblewrap_net_slot_dup_current:
 * @slot: a slot
 *
 * Returns: (transfer full) (nullable): the newest network, or %NULL
 *   before the first command and after close
 */
SandboxBubblewrapSessionNet *
sandbox_bubblewrap_net_slot_dup_current (SandboxBubblewrapNetSlot *slot)
{
  SandboxBubblewrapSessionNet *net = NULL;

  g_mutex_lock (&slot->lock);
  if (slot->net != NULL && !slot->closed)
    net = sandbox_bubblewrap_session_net_ref (slot->net);
  g_mutex_unlock (&slot->lock);
  return net;
}

/* Installs @started (taken) for @revision unless the slot has that one or
 * a newer one, or is closed. Returns what the command uses: @started, the
 * one there, or NULL. */
static SandboxBubblewrapSessionNet *
install (SandboxBubblewrapNetSlot    *slot,
         guint64                      revision,
         SandboxBubblewrapSessionNet *started)
{
  g_autoptr(SandboxBubblewrapSessionNet) replaced = NULL;
  g_autoptr(SandboxBubblewrapSessionNet) unused = started;
  SandboxBubblewrapSessionNet *net = NULL;

  g_mutex_lock (&slot->lock);
  if (slot->net != NULL && slot->revision == revision)
    net = sandbox_bubblewrap_session_net_ref (slot->net);
  else if (!slot->closed && (slot->net == NULL || slot->revision < revision))
    {
      replaced = g_steal_pointer (&slot->net);
      slot->net = sandbox_bubblewrap_session_net_ref (started);
      slot->revision = revision;
      net = g_steal_pointer (&unused);
    }
  g_mutex_unlock (&slot->lock);
  return net;
}

/**
 * sandbox_bubblewrap_net_slot_dup_or_start:
 * @slot: a slot
 * @revision: the policy revision a command was set up at
 * @kind: that policy's kind
 * @host_loopback: as for sandbox_bubblewrap_session_net_start()
 * @keeper: (nullable): as for sandbox_bubblewrap_session_net_start()
 * @gateway: (nullable): as for sandbox_bubblewrap_session_net_start()
 * @error: return location for a #GError
 *
 * The network for @revision: the slot's, else, when @revision is newer
 * than the slot's, a new one (the old one ends with its last command).
 * Any thread but the launcher's: a start waits for it, so it runs with no
 * lock held (two first commands may both start one: the second to finish
 * uses the first's).
 *
 * Returns: (transfer full) (nullable): the network; %NULL without @error
 *   for a revision older than the slot's (the gate refuses what is built
 *   from it) or after close, %NULL with @error when the start failed
 */
SandboxBubblewrapSessionNet *
sandbox_bubblewrap_net_slot_dup_or_start (SandboxBubblewrapNetSlot  *slot,
                                          guint64                    revision,
                                          SandboxNetworkPolicyKind   kind,
                                          gboolean                   host_loopback,
                                          SandboxBubblewrapKeeper   *keeper,
                                          SandboxGateway            *gateway,
                                          GError                   **error)
{
  g_autoptr(SandboxBubblewrapSessionNet) exited = NULL;
  SandboxBubblewrapSessionNet *net = NULL;
  SandboxBubblewrapSessionNet *started;
  gboolean wanted;

  g_mutex_lock (&slot->lock);
  /* A network keeper that died is replaced for the same revision: the
   * commands still in its namespace keep it, new ones get the new one. */
  if (slot->net != NULL && slot->revision == revision && session_net_has_exited (slot->net))
    exited = g_steal_pointer (&slot->net);
  if (slot->net != NULL && slot->revision == revision)
    net = sandbox_bubblewrap_session_net_ref (slot->net);
  wanted = net == NULL && !slot->closed &&
           (slot->net == NULL || slot->revision < revision);
  g_mutex_unlock (&slot->lock);
  if (exited != NULL)
    {
      g_message ("A session's network keeper exited: starting another");
      sandbox_bubblewrap_session_net_close (exited);
    }
  if (!wanted)
    return net;
  started = sandbox_bubblewrap_session_net_start (kind, host_loopback, keeper, gateway, error);
  if (started == NULL)
    return NULL;
  return install (slot, revision, started);
}

/**
 * sandbox_bubblewrap_net_slot_close:
 * @slot: a slot
 *
 * For the session's stop, once its commands are gone: ends its network
 * now (sandbox_bubblewrap_session_net_close()) and never makes another.
 */
void
sandbox_bubblewrap_net_slot_close (SandboxBubblewrapNetSlot *slot)
{
  g_autoptr(SandboxBubblewrapSessionNet) net = NULL;

  g_mutex_lock (&slot->lock);
  slot->closed = TRUE;
  net = g_steal_pointer (&slot->net);
  g_mutex_unlock (&slot->lock);
  if (net != NULL)
    sandbox_bubblewrap_session_net_close (net);
}

/**
 * sandbox_bubblewrap_net_slot_drop:
 * @slot: a slot
 *
 * Closes the slot's network, if any, but not the slot: the next command
 * starts one again. For a restore, which replaces the keeper whose user
 * namespace an unprivileged host's network keeper is in; no command runs.
 */
void
sandbox_bubblewrap_net_slot_drop (SandboxBubblewrapNetSlot *slot)
{
  g_autoptr(SandboxBubblewrapSessionNet) net = NULL;

  g_mutex_lock (&slot->lock);
  net = g_steal_pointer (&slot->net);
  g_mutex_unlock (&slot->lock);
  if (net != NULL)
    sandbox_bubblewrap_session_net_close (net);
}
