/* sandbox-bubblewrap-network.c — an allow-all guest's own network
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <glib-unix.h>
#include <json-glib/json-glib.h>

#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-network-private.h"
#include "sandbox-bubblewrap-private.h"

/*
 * Allow-all without the host's namespace
 *
 * An allow-all guest used to share the host's network namespace, and with
 * it every service bound to the host's loopback and every abstract UNIX
 * socket of the host (an X server's among them). Now it gets a network
 * namespace of its own, like deny-all, whose only way out is slirp4netns:
 * user-mode networking that turns the guest's packets into the host's
 * ordinary sockets, so the guest reaches what any host program could
 * reach — but not the host's loopback (--disable-host-loopback, unless the
 * backend's host-loopback says otherwise), and no abstract socket, which
 * the kernel keys by network namespace.
 *
 * slirp4netns needs the namespace before the guest runs: bwrap reports
 * its sandbox's first process on --info-fd and waits on --block-fd. That
 * pid is one of the launcher's wrapper pid namespace (see the launcher),
 * so the host finds the process as bwrap's child in /proc and checks the
 * namespace it opens against the inode bwrap reported. slirp4netns joins
 * it by descriptor — and, for a host that is not root, the user namespace
 * that owns it, where it has the capabilities to configure it — then says
 * it is ready, and bwrap goes on. If slirp4netns fails the guest runs
 * with no way out (bwrap goes on at the block descriptor's EOF): it fails
 * closed, and the failure is logged.
 *
 * slirp4netns ends when its exit descriptor closes: when bwrap exits, and
 * with this process, since the kernel closes it then too. It runs as the
 * host's user under its own seccomp filter; a root host's also in its own
 * mount namespace with only CAP_NET_BIND_SERVICE (--enable-sandbox, which
 * an unprivileged slirp4netns cannot set up).
 *
 * Cost: one slirp4netns per sandbox. A ready sandbox (see
 * sandbox-bubblewrap-ready.c) pays it before its command arrives; a cold
 * command pays it in its start (measured by bench/: command-allow-all).
 */

#define SLIRP4NETNS "slirp4netns"
#define TUN_DEVICE "/dev/net/tun"
#define INFO_LIMIT 4096
#define STDERR_LIMIT 1024
/* How long slirp4netns may take to configure a session's namespace. */
#define READY_TIMEOUT_MS 10000

/* slirp4netns's descriptors, as it sees them. */
enum
{
  SLIRP_NETNS_FD = 3,
  SLIRP_USERNS_FD = 4,
  SLIRP_READY_FD = 5,
  SLIRP_EXIT_FD = 6,
};

struct _SandboxBubblewrapNetwork
{
  gboolean host_loopback;
  int info_fd;        /* bwrap's --info-fd, our end */
  int block_fd;       /* bwrap's --block-fd, our end: a byte lets it go on */
  int bwrap_pidfd;
  pid_t bwrap_pid;
  GString *info;
  GSubprocess *slirp;
  int ready_fd;       /* slirp4netns's --ready-fd, our end */
  int exit_fd;        /* slirp4netns's --exit-fd, our end */
  GSource *info_source;
  GSource *ready_source;
  GSource *exit_source;
};

static void
clear_fd (int *fd)
{
  if (*fd >= 0)
    close (*fd);
  *fd = -1;
}

/**
 * sandbox_bubblewrap_network_check:
 * @error: return location for a #GError
 *
 * Whether this host can give allow-all guests their own network. A
 * success holds for the rest of the process; a failure is checked again
 * on the next call.
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_UNAVAILABLE naming what is
 *   missing
 */
gboolean
sandbox_bubblewrap_network_check (GError **error)
{
  /* Every cold allow-all command asks, and each answer costs a PATH
   * search and an access(): once the host has passed, it passes for the
   * rest of the process (a slirp4netns gone later fails that sandbox's
   * start, which log_failure() reports). A failure is not kept, so
   * installing slirp4netns or opening up TUN_DEVICE later takes effect
   * without a restart. Any thread. */
  static gint passed = FALSE;
  g_autofree char *program = NULL;

  if (g_atomic_int_get (&passed))
    return TRUE;
  program = g_find_program_in_path (SLIRP4NETNS);
  if (program == NULL)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "An allow-all sandbox needs slirp4netns (Debian package "
                           "slirp4netns), which is not in PATH: its guest gets a network "
                           "namespace of its own, not the host's");
      return FALSE;
    }
  if (access (TUN_DEVICE, R_OK | W_OK) < 0)
    {
      int saved_errno = errno;

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "An allow-all sandbox needs " TUN_DEVICE " for slirp4netns: %s (Debian "
                   "makes it mode 0666)", g_strerror (saved_errno));
      return FALSE;
    }
  g_atomic_int_set (&passed, TRUE);
  return TRUE;
}

/**
 * sandbox_bubblewrap_network_new:
 * @host_loopback: whether the guest reaches the host's loopback (at
 *   10.0.2.2)
 * @info_fd: (out): for bwrap's --info-fd
 * @block_fd: (out): for bwrap's --block-fd
 * @error: return location for a #GError
 *
 * A network for one sandbox, attached once bwrap runs.
 *
 * Returns: (transfer full): the network, or %NULL with
 *   %SANDBOX_ERROR_UNAVAILABLE
 */
SandboxBubblewrapNetwork *
sandbox_bubblewrap_network_new (gboolean   host_loopback,
                                int       *info_fd,
                                int       *block_fd,
                                GError   **error)
{
  g_autoptr(SandboxBubblewrapNetwork) self = g_new0 (SandboxBubblewrapNetwork, 1);
  int info_pipe[2], block_pipe[2];

  self->host_loopback = host_loopback;
  self->info_fd = self->block_fd = self->bwrap_pidfd = self->ready_fd = self->exit_fd = -1;
  self->info = g_string_new (NULL);
  if (!sandbox_bubblewrap_network_check (error))
    return NULL;
  if (!sandbox_bubblewrap_launcher_open_pipe (info_pipe, TRUE, FALSE, error))
    return NULL;
  self->info_fd = info_pipe[0];
  if (!sandbox_bubblewrap_launcher_open_pipe (block_pipe, FALSE, FALSE, error))
    {
      close (info_pipe[1]);
      return NULL;
    }
  self->block_fd = block_pipe[1];
  *info_fd = info_pipe[1];
  *block_fd = block_pipe[0];
  return g_steal_pointer (&self);
}

/**
 * sandbox_bubblewrap_network_free:
 * @self: (transfer full) (nullable): a network
 *
 * Ends slirp4netns, if it runs, and frees @self.
 */
void
sandbox_bubblewrap_network_free (SandboxBubblewrapNetwork *self)
{
  if (self == NULL)
    return;
  sandbox_bubblewrap_source_destroy (&self->info_source);
  sandbox_bubblewrap_source_destroy (&self->ready_source);
  sandbox_bubblewrap_source_destroy (&self->exit_source);
  clear_fd (&self->info_fd);
  clear_fd (&self->block_fd);
  clear_fd (&self->bwrap_pidfd);
  clear_fd (&self->ready_fd);
  /* Its EOF ends slirp4netns; the kill is for one that hangs. GLib reaps it. */
  clear_fd (&self->exit_fd);
  if (self->slirp != NULL)
    g_subprocess_force_exit (self->slirp);
  g_clear_object (&self->slirp);
  g_string_free (self->info, TRUE);
  g_free (self);
}

static GSource *
watch_fd (SandboxBubblewrapNetwork *self,
          int                       fd,
          GUnixFDSourceFunc         callback,
          const char               *name)
{
  GSource *source = g_unix_fd_source_new (fd, G_IO_IN | G_IO_HUP | G_IO_ERR);

  g_source_set_callback (source, G_SOURCE_FUNC (callback), self, NULL);
  g_source_set_static_name (source, name);
  g_source_attach (source, sandbox_bubblewrap_launcher_get_context ());
  return source;
}

/* The guest goes on: with the network when @configured, else with none. */
static void
release_guest (SandboxBubblewrapNetwork *self,
               gboolean                  configured)
{
  if (configured && self->block_fd >= 0)
    sandbox_bubblewrap_write_fully (self->block_fd, "1", 1);
  clear_fd (&self->block_fd);
}

static void
log_failure (SandboxBubblewrapNetwork *self,
             const char               *why)
{
  g_autofree char *said = NULL;
  GInputStream *err = self->slirp != NULL ? g_subprocess_get_stderr_pipe (self->slirp) : NULL;

  if (err != NULL)
    {
      char buffer[STDERR_LIMIT];
      int fd = g_unix_input_stream_get_fd (G_UNIX_INPUT_STREAM (err));
      gssize n;

      g_unix_set_fd_nonblocking (fd, TRUE, NULL);
      n = read (fd, buffer, sizeof buffer - 1);
      if (n > 0)
        said = g_strndup (buffer, n);
    }
  g_log_structured (G_LOG_DOMAIN, G_LOG_LEVEL_WARNING,
                    "SANDBOX_EVENT", "network-failed",
                    "SANDBOX_DRIVER", "bubblewrap",
                    "MESSAGE", "An allow-all sandbox runs with no network: %s%s%s", why,
                    said != NULL ? ": " : "", said != NULL ? g_strstrip (said) : "");
}

/* Reads slirp4netns's ready byte from @fd: TRUE if it said ready ('1').
 * On a non-blocking @fd with nothing to read yet, @would_block is set. */
static gboolean
read_ready_byte (int       fd,
                 gboolean *would_block)
{
  char byte = 0;
  gssize n = TEMP_FAILURE_RETRY (read (fd, &byte, 1));

  *would_block = n < 0 && errno == EAGAIN;
  return n == 1 && byte == '1';
}

static gboolean
ready_cb (int          fd,
          GIOCondition condition,
          gpointer     data)
{
  SandboxBubblewrapNetwork *self = data;
  gboolean would_block;
  gboolean ready = read_ready_byte (self->ready_fd, &would_block);

  if (would_block)
    return G_SOURCE_CONTINUE;
  if (ready)
    release_guest (self, TRUE);
  else
    {
      log_failure (self, "slirp4netns did not configure its namespace");
      release_guest (self, FALSE);
    }
  clear_fd (&self->ready_fd);
  g_clear_pointer (&self->ready_source, g_source_unref);
  return G_SOURCE_REMOVE;
}

/* The host pid of bwrap's only child: the sandbox's first process. */
static pid_t
find_sandbox_process (pid_t bwrap_pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children",
                                           (int) bwrap_pid, (int) bwrap_pid);
  g_autofree char *text = NULL;
  guint64 pid;
  char *end;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  pid = g_ascii_strtoull (text, &end, 10);
  if (end == text || pid == 0 || pid > G_MAXINT32)
    return 0;
  return (pid_t) pid;
}

/* The sandbox's network namespace, checked against the one bwrap named,
 * or -1; *ended says whether that is because the sandbox is gone. */
static int
open_sandbox_netns (pid_t     bwrap_pid,
                    gint64    inode,
                    gboolean *ended)
{
  pid_t pid = find_sandbox_process (bwrap_pid);
  g_autofree char *path = NULL;
  struct stat st;
  int fd;

  /* bwrap writes its info after its child exists, and has no other
   * child: none there means it has ended (a ready sandbox discarded as
   * soon as it launched, for one), and nobody is left to run without a
   * network. */
  *ended = (pid == 0);
  if (pid == 0)
    return -1;
  path = g_strdup_printf ("/proc/%d/ns/net", (int) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  if (fstat (fd, &st) < 0 || (gint64) st.st_ino != inode)
    {
      close (fd);
      return -1;
    }
  return fd;
}

static gboolean
spawn_slirp (SandboxBubblewrapNetwork  *self,
             int                        netns_fd,
             GError                   **error)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  int ready_pipe[2], exit_pipe[2];

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_SILENCE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_ptr_array_add (argv, (char *) SLIRP4NETNS);
  g_ptr_array_add (argv, (char *) "--configure");
  g_ptr_array_add (argv, (char *) "--mtu=65520");
  if (!self->host_loopback)
    g_ptr_array_add (argv, (char *) "--disable-host-loopback");
  /* Its own mount namespace, with every capability but
   * CAP_NET_BIND_SERVICE dropped: for a root host's. A host that is not
   * root cannot make it one (it has no capability to drop, either). */
  if (geteuid () == 0)
    g_ptr_array_add (argv, (char *) "--enable-sandbox");
  g_ptr_array_add (argv, (char *) "--enable-seccomp");
  g_ptr_array_add (argv, (char *) "--ready-fd=5");
  g_ptr_array_add (argv, (char *) "--exit-fd=6");
  g_ptr_array_add (argv, (char *) "--netns-type=path");
  /* Not root: the capabilities to configure the namespace are its
   * owner's. (Root has them already, and joining would cost it its own
   * over the tun device.) */
  if (geteuid () != 0)
    {
      int userns_fd = ioctl (netns_fd, NS_GET_USERNS);

      if (userns_fd < 0)
        {
          int saved_errno = errno;

          close (netns_fd);
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       "Could not open the namespace's user namespace: %s",
                       g_strerror (saved_errno));
          return FALSE;
        }
      g_subprocess_launcher_take_fd (launcher, userns_fd, SLIRP_USERNS_FD);
      g_ptr_array_add (argv, (char *) "--userns-path=/proc/self/fd/4");
    }
  g_subprocess_launcher_take_fd (launcher, netns_fd, SLIRP_NETNS_FD);
  g_ptr_array_add (argv, (char *) "/proc/self/fd/3");
  g_ptr_array_add (argv, (char *) "tap0");
  g_ptr_array_add (argv, NULL);

  if (!sandbox_bubblewrap_launcher_open_pipe (ready_pipe, TRUE, FALSE, error))
    return FALSE;
  self->ready_fd = ready_pipe[0];
  g_subprocess_launcher_take_fd (launcher, ready_pipe[1], SLIRP_READY_FD);
  if (!sandbox_bubblewrap_launcher_open_pipe (exit_pipe, FALSE, FALSE, error))
    return FALSE;
  self->exit_fd = exit_pipe[1];
  g_subprocess_launcher_take_fd (launcher, exit_pipe[0], SLIRP_EXIT_FD);

  self->slirp = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata,
                                              error);
  return self->slirp != NULL;
}

/* bwrap's info: the sandbox's first process and its namespaces. */
static gboolean
parse_info (const char *text,
            gint64     *netns_inode)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;
  JsonObject *object;

  if (!json_parser_load_from_data (parser, text, -1, NULL))
    return FALSE;
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return FALSE;
  object = json_node_get_object (root);
  if (!json_object_has_member (object, "net-namespace"))
    return FALSE;
  *netns_inode = json_object_get_int_member (object, "net-namespace");
  return *netns_inode > 0;
}

static void
attach_slirp (SandboxBubblewrapNetwork *self)
{
  g_autoptr(GError) error = NULL;
  gint64 inode = 0;
  gboolean ended = FALSE;
  int netns_fd;

  if (!parse_info (self->info->str, &inode))
    return;   /* bwrap failed before its sandbox existed */
  netns_fd = open_sandbox_netns (self->bwrap_pid, inode, &ended);
  if (netns_fd < 0 && ended)
    {
      g_debug ("An allow-all sandbox ended before its network was attached");
      release_guest (self, FALSE);
      return;
    }
  if (netns_fd < 0)
    {
      log_failure (self, "its network namespace could not be found");
      release_guest (self, FALSE);
      return;
    }
  if (!spawn_slirp (self, netns_fd, &error))
    {
      log_failure (self, error->message);
      release_guest (self, FALSE);
      return;
    }
  self->ready_source = watch_fd (self, self->ready_fd, ready_cb, "[sandbox] slirp4netns ready");
}

static gboolean
info_cb (int          fd,
         GIOCondition condition,
         gpointer     data)
{
  SandboxBubblewrapNetwork *self = data;
  char buffer[1024];
  gssize n;

  n = TEMP_FAILURE_RETRY (read (self->info_fd, buffer, sizeof buffer));
  if (n < 0 && errno == EAGAIN)
    return G_SOURCE_CONTINUE;
  if (n > 0 && self->info->len < INFO_LIMIT)
    {
      g_string_append_len (self->info, buffer, n);
      return G_SOURCE_CONTINUE;
    }
  if (n > 0)
    return G_SOURCE_CONTINUE;   /* more than bwrap ever says: ignored */
  /* bwrap closes it once written. */
  clear_fd (&self->info_fd);
  g_clear_pointer (&self->info_source, g_source_unref);
  attach_slirp (self);
  return G_SOURCE_REMOVE;
}

static gboolean
bwrap_exited_cb (int          fd,
                 GIOCondition condition,
                 gpointer     data)
{
  SandboxBubblewrapNetwork *self = data;

  g_clear_pointer (&self->exit_source, g_source_unref);
  sandbox_bubblewrap_network_free (self);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_bubblewrap_network_attach:
 * @self: (transfer full): a network whose descriptors bwrap has
 * @bwrap_pid: bwrap's pid
 * @bwrap_pidfd: a pidfd on it (duplicated)
 *
 * Attaches slirp4netns to bwrap's sandbox once it exists, then lets the
 * guest go on; ends it when bwrap exits. Must run on the launcher thread.
 */
void
sandbox_bubblewrap_network_attach (SandboxBubblewrapNetwork *self,
                                   pid_t                     bwrap_pid,
                                   int                       bwrap_pidfd)
{
  self->bwrap_pid = bwrap_pid;
  self->bwrap_pidfd = fcntl (bwrap_pidfd, F_DUPFD_CLOEXEC, 3);
  if (self->bwrap_pidfd < 0)
    {
      /* Nothing would end it: the guest goes on with no network. */
      log_failure (self, g_strerror (errno));
      sandbox_bubblewrap_network_free (self);
      return;
    }
  self->info_source = watch_fd (self, self->info_fd, info_cb, "[sandbox] bwrap info");
  self->exit_source = watch_fd (self, self->bwrap_pidfd, bwrap_exited_cb,
                                "[sandbox] allow-all bwrap exit");
}

/* Waits for slirp4netns's ready byte on @self's ready descriptor. */
static gboolean
wait_until_ready (SandboxBubblewrapNetwork  *self,
                  GError                   **error)
{
  struct pollfd ready = { .fd = self->ready_fd, .events = POLLIN };
  gboolean would_block;
  int polled;

  g_unix_set_fd_nonblocking (self->ready_fd, FALSE, NULL);
  polled = TEMP_FAILURE_RETRY (poll (&ready, 1, READY_TIMEOUT_MS));
  if (polled == 1 && read_ready_byte (self->ready_fd, &would_block))
    return TRUE;
  log_failure (self, polled == 0 ? "slirp4netns did not answer in time"
                                 : "slirp4netns did not configure its namespace");
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       "An allow-all session's network could not be set up: slirp4netns "
                       "did not configure its namespace");
  return FALSE;
}

/**
 * sandbox_bubblewrap_network_start_in:
 * @host_loopback: whether guests reach the host's loopback (at 10.0.2.2)
 * @netns_fd: (transfer full): the network namespace to join to the
 *   outside: a session's, which its commands share (see
 *   sandbox-bubblewrap-session-net.c)
 * @error: return location for a #GError
 *
 * Starts slirp4netns in @netns_fd and waits until it has configured it.
 * Any thread but the launcher's.
 *
 * Returns: (transfer full): the network, which ends slirp4netns when
 *   freed, or %NULL with %SANDBOX_ERROR_UNAVAILABLE
 */
SandboxBubblewrapNetwork *
sandbox_bubblewrap_network_start_in (gboolean   host_loopback,
                                     int        netns_fd,
                                     GError   **error)
{
  g_autoptr(SandboxBubblewrapNetwork) self = g_new0 (SandboxBubblewrapNetwork, 1);
  g_autoptr(GError) cause = NULL;

  self->host_loopback = host_loopback;
  self->info_fd = self->block_fd = self->bwrap_pidfd = self->ready_fd = self->exit_fd = -1;
  self->info = g_string_new (NULL);
  if (!sandbox_bubblewrap_network_check (error))
    {
      close (netns_fd);
      return NULL;
    }
  if (!spawn_slirp (self, netns_fd, &cause))
    {
      log_failure (self, cause->message);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "An allow-all session's network could not be set up: %s", cause->message);
      return NULL;
    }
  if (!wait_until_ready (self, error))
    return NULL;
  clear_fd (&self->ready_fd);
  return g_steal_pointer (&self);
}
