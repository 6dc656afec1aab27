/* sandbox-bubblewrap-ready.c — sandboxes started before their command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <glib-unix.h>

#include "sandbox-bubblewrap-ready-private.h"
#include "sandbox-bubblewrap-seccomp-private.h"
#include "sandbox-bubblewrap-stub-private.h"

/*
 * A ready sandbox is a fresh bwrap started for a session ahead of its next
 * command: every namespace, mount, the ephemeral /tmp, the seccomp filter
 * and no capabilities, exactly as a command's (the same
 * sandbox_bubblewrap_args_new_for_sandbox()), whose stub waits on a control
 * socket instead of a memfd. The next command of the session takes it and
 * sends its message (argv, environment, cwd); its pipes were created with
 * it. One sandbox still runs one command: a taken sandbox is never given
 * back, and the next one is started fresh.
 *
 * A ready sandbox is discarded (SIGKILL through its pidfd, then reaped) by
 * its session's policy change, stop and delete, and by its own idle
 * timeout; one whose bwrap died is reaped by the launcher. A take checks
 * the policy revision it was built for, so a sandbox from an older policy
 * is never used whatever the timing. The pool bounds how many exist per
 * backend: a slot is held from start until the sandbox is taken or gone.
 *
 * Threads: start, take and discard run on any thread; the launch, the exit
 * watch and the idle timeout run on the launcher thread. @lock guards the
 * state they share. A start only reserves the slot and copies the session's
 * setup: it runs on the launcher thread as the previous command ends,
 * before that command completes, so the command line (its memfds, the
 * stub's descriptor) is built when the sandbox launches.
 */

/* What a ready sandbox is built from, its own copy: the session may be
 * gone by the time it launches. */
typedef struct
{
  char *executable;
  char *session_id;
  char *workspace;
  SandboxBubblewrapKeeper *keeper;   /* the session's, which outlives this sandbox */
  SandboxBubblewrapSessionNet *session_net;   /* held until it launches */
  char *gateway_socket;
  GBytes *gateway_ca;
  SandboxNetworkPolicyKind policy_kind;
  GBytes *seccomp_program;
  SandboxBubblewrapGuest guest;
  SandboxBubblewrapEtc etc;
  /* The session's runtime, which never changes: a ready sandbox belongs
   * to one session (its driver's), so it never serves another runtime. */
  char *runtime;
  guint has_guest : 1;
  guint has_etc : 1;
  guint host_loopback : 1;
} ReadySetup;

struct _SandboxBubblewrapReadyPool
{
  guint max_ready;
  guint idle_timeout_ms;
  gint n_ready;   /* atomic */
};

struct _SandboxBubblewrapReady
{
  SandboxBubblewrapReadyPool *pool;
  guint64 revision;

  GMutex lock;
  /* Guarded by @lock. */
  ReadySetup *setup;                 /* until launched */
  SandboxBubblewrapLimits limits;
  SandboxBubblewrapTaken sandbox;    /* launched.pid 0 until launched */
  GSource *exit_source;
  GSource *idle_source;
  guint launched : 1;
  guint slot_held : 1;
  guint finished : 1;                /* taken, discarded, dead or failed */
};

/* Pool ------------------------------------------------------------------- */

/**
 * sandbox_bubblewrap_ready_pool_new:
 * @max_ready: how many ready sandboxes may exist at once (0: none)
 * @idle_timeout_ms: how long one waits for its command before it is
 *   discarded
 *
 * Returns: (transfer full): a backend's bound on its ready sandboxes
 */
SandboxBubblewrapReadyPool *
sandbox_bubblewrap_ready_pool_new (guint max_ready,
                                   guint idle_timeout_ms)
{
  SandboxBubblewrapReadyPool *pool = g_atomic_rc_box_new0 (SandboxBubblewrapReadyPool);

  pool->max_ready = max_ready;
  pool->idle_timeout_ms = idle_timeout_ms;
  return pool;
}

SandboxBubblewrapReadyPool *
sandbox_bubblewrap_ready_pool_ref (SandboxBubblewrapReadyPool *pool)
{
  return g_atomic_rc_box_acquire (pool);
}

void
sandbox_bubblewrap_ready_pool_unref (SandboxBubblewrapReadyPool *pool)
{
  if (pool != NULL)
    g_atomic_rc_box_release (pool);
}

/**
 * sandbox_bubblewrap_ready_pool_get_n_ready:
 * @pool: a pool
 *
 * Returns: how many ready sandboxes hold a slot now (starting or waiting)
 */
guint
sandbox_bubblewrap_ready_pool_get_n_ready (SandboxBubblewrapReadyPool *pool)
{
  return (guint) g_atomic_int_get (&pool->n_ready);
}

static gboolean
pool_try_acquire (SandboxBubblewrapReadyPool *pool)
{
  gint n;

  do
    {
      n = g_atomic_int_get (&pool->n_ready);
      if ((guint) n >= pool->max_ready)
        return FALSE;
    }
  while (!g_atomic_int_compare_and_exchange (&pool->n_ready, n, n + 1));
  return TRUE;
}

/* Ready sandboxes -------------------------------------------------------- */

static ReadySetup *
setup_new (const SandboxBubblewrapArgsInput *input)
{
  ReadySetup *setup = g_new0 (ReadySetup, 1);

  setup->executable = g_strdup (input->executable);
  setup->session_id = g_strdup (input->session_id);
  setup->workspace = g_strdup (input->workspace);
  setup->keeper = input->keeper;
  if (input->session_net != NULL)
    setup->session_net = sandbox_bubblewrap_session_net_ref (input->session_net);
  setup->gateway_socket = g_strdup (input->gateway_socket);
  if (input->gateway_ca != NULL)
    setup->gateway_ca = g_bytes_ref (input->gateway_ca);
  setup->policy_kind = input->policy_kind;
  setup->host_loopback = input->host_loopback;
  if (input->seccomp_program != NULL)
    setup->seccomp_program = g_bytes_ref (input->seccomp_program);
  setup->has_guest = input->guest != NULL;
  if (input->guest != NULL)
    setup->guest = *input->guest;
  setup->has_etc = input->etc != NULL;
  if (input->etc != NULL)
    sandbox_bubblewrap_etc_copy (&setup->etc, input->etc);
  setup->runtime = g_strdup (input->runtime);
  return setup;
}

static void
setup_free (ReadySetup *setup)
{
  g_free (setup->executable);
  g_free (setup->session_id);
  g_free (setup->workspace);
  g_free (setup->gateway_socket);
  g_free (setup->runtime);
  g_clear_pointer (&setup->session_net, sandbox_bubblewrap_session_net_unref);
  g_clear_pointer (&setup->gateway_ca, g_bytes_unref);
  g_clear_pointer (&setup->seccomp_program, g_bytes_unref);
  sandbox_bubblewrap_etc_clear (&setup->etc);
  g_free (setup);
}

static SandboxBubblewrapReady *
ready_ref (SandboxBubblewrapReady *self)
{
  return g_atomic_rc_box_acquire (self);
}

static void
ready_clear (gpointer data)
{
  SandboxBubblewrapReady *self = data;

  g_assert (self->sandbox.launched.pid == 0);
  g_clear_pointer (&self->setup, setup_free);
  sandbox_bubblewrap_clear_fd (&self->sandbox.status_fd);
  sandbox_bubblewrap_clear_fd (&self->sandbox.control_fd);
  sandbox_bubblewrap_clear_fd (&self->sandbox.handoff_fd);
  sandbox_bubblewrap_ready_pool_unref (self->pool);
  g_mutex_clear (&self->lock);
}

static void
ready_unref (gpointer data)
{
  g_atomic_rc_box_release_full (data, ready_clear);
}

/* Ends the ready state, with @lock held: no watch, no slot. */
static void
finish_locked (SandboxBubblewrapReady *self)
{
  self->finished = TRUE;
  sandbox_bubblewrap_source_destroy (&self->exit_source);
  sandbox_bubblewrap_source_destroy (&self->idle_source);
  g_clear_pointer (&self->setup, setup_free);
  if (self->slot_held)
    {
      self->slot_held = FALSE;
      g_atomic_int_dec_and_test (&self->pool->n_ready);
    }
}

/* Kills and reaps what runs, with @lock held. */
static void
kill_locked (SandboxBubblewrapReady *self)
{
  sandbox_bubblewrap_launched_kill_and_reap (&self->sandbox.launched);
  sandbox_bubblewrap_clear_fd (&self->sandbox.status_fd);
  sandbox_bubblewrap_clear_fd (&self->sandbox.control_fd);
  sandbox_bubblewrap_clear_fd (&self->sandbox.handoff_fd);
  finish_locked (self);
}

/* Launcher thread: bwrap exited before any command took it. */
static gboolean
exited_cb (int          fd,
           GIOCondition condition,
           gpointer     data)
{
  SandboxBubblewrapReady *self = data;

  g_mutex_lock (&self->lock);
  if (!self->finished)
    kill_locked (self);   /* reaps: it is gone already */
  g_mutex_unlock (&self->lock);
  return G_SOURCE_REMOVE;
}

/* Launcher thread: nobody came for it in time. */
static gboolean
idle_cb (gpointer data)
{
  SandboxBubblewrapReady *self = data;

  g_mutex_lock (&self->lock);
  if (!self->finished)
    kill_locked (self);
  g_mutex_unlock (&self->lock);
  return G_SOURCE_REMOVE;
}

static GSource *
attach (GSource     *source,
        GSourceFunc  callback,
        gpointer     data,
        const char  *name)
{
  g_source_set_callback (source, callback, ready_ref (data), ready_unref);
  g_source_set_static_name (source, name);
  g_source_attach (source, sandbox_bubblewrap_launcher_get_context ());
  return source;
}

/* Launcher thread, with @lock held: the command line from the setup, with
 * the sandbox's status pipe and control socket (our ends in @sandbox). */
static SandboxBubblewrapArgs *
build_locked (SandboxBubblewrapReady  *self,
              GError                 **error)
{
  ReadySetup *setup = self->setup;
  SandboxBubblewrapArgsInput input = {
    .executable = setup->executable,
    .session_id = setup->session_id,
    .workspace = setup->workspace,
    .keeper = setup->keeper,
    .session_net = setup->session_net,
    .gateway_socket = setup->gateway_socket,
    .gateway_ca = setup->gateway_ca,
    .policy_kind = setup->policy_kind,
    .seccomp_program = setup->seccomp_program,
    .limits = &self->limits,
    .guest = setup->has_guest ? &setup->guest : NULL,
    .etc = setup->has_etc ? &setup->etc : NULL,
    .host_loopback = setup->host_loopback,
    .runtime = setup->runtime,
  };
  SandboxBubblewrapArgs *args;
  int status_pipe[2];
  int control[2];
  int handoff[2] = { -1, -1 };
  int seccomp_fd = -1;
  int report_fd;

  /* Under an allow-list the stub hands the proxy's listener over as it
   * starts: it waits in the socket for the command that takes the sandbox,
   * and so does the guest's pidfd, once it is spawned. */
  if (!sandbox_bubblewrap_stub_handoff_open (handoff, error))
    return NULL;
  self->sandbox.handoff_fd = handoff[0];
  if (!sandbox_bubblewrap_launcher_open_pipe (status_pipe, TRUE, FALSE, error))
    {
      sandbox_bubblewrap_fd_close (handoff[1]);
      return NULL;
    }
  self->sandbox.status_fd = status_pipe[0];
  if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) < 0)
    {
      int saved_errno = errno;

      close (status_pipe[1]);
      sandbox_bubblewrap_fd_close (handoff[1]);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not create the stub's control socket: %s", g_strerror (saved_errno));
      return NULL;
    }
  self->sandbox.control_fd = control[0];
  if (setup->seccomp_program != NULL)
    {
      seccomp_fd = sandbox_bubblewrap_seccomp_open_program_fd (setup->seccomp_program, error);
      if (seccomp_fd < 0)
        {
          close (status_pipe[1]);
          close (control[1]);
          sandbox_bubblewrap_fd_close (handoff[1]);
          return NULL;
        }
    }
  /* The stub reports the end of its sandbox on the same socket (see
   * sandbox-bubblewrap-process.c). */
  report_fd = fcntl (control[1], F_DUPFD_CLOEXEC, 3);
  if (report_fd < 0)
    {
      int saved_errno = errno;

      close (status_pipe[1]);
      close (control[1]);
      sandbox_bubblewrap_fd_close (seccomp_fd);
      sandbox_bubblewrap_fd_close (handoff[1]);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not duplicate the stub's control socket: %s", g_strerror (saved_errno));
      return NULL;
    }
  args = sandbox_bubblewrap_args_new_for_sandbox (&input, status_pipe[1], seccomp_fd, control[1],
                                                  report_fd, handoff[1], error);
  if (args != NULL)
    sandbox_bubblewrap_args_finish (args);
  return args;
}

/* Launcher thread: builds and starts bwrap, unless the sandbox was
 * discarded or launched (by its take, see sandbox_bubblewrap_ready_take())
 * since. */
static gboolean
launch_cb (gpointer data)
{
  SandboxBubblewrapReady *self = data;
  SandboxBubblewrapSpawnExtras extras = SANDBOX_BUBBLEWRAP_SPAWN_EXTRAS_INIT;
  g_autoptr(SandboxBubblewrapArgs) args = NULL;
  g_autoptr(GError) error = NULL;

  g_mutex_lock (&self->lock);
  if (self->finished || self->launched)
    {
      g_mutex_unlock (&self->lock);
      return G_SOURCE_REMOVE;
    }
  args = build_locked (self, &error);
  if (args != NULL)
    {
      extras.limits = &self->limits;
      extras.guest_view = args->guest_view;
      extras.enter_pid = args->enter_pid;
      extras.network = &args->network;
  sandbox_bubblewrap_args_set_net_extras (args, &extras);
    }
  if (args == NULL ||
      !sandbox_bubblewrap_launcher_start ((const char * const *) args->argv->pdata, args->fds,
                                          &extras, &self->sandbox.launched, &error))
    {
      g_debug ("No ready sandbox: %s", error->message);
      kill_locked (self);
      g_mutex_unlock (&self->lock);
      return G_SOURCE_REMOVE;
    }
  /* bwrap has its copies of the passed descriptors, which @args closes. */
  g_clear_pointer (&self->setup, setup_free);
  self->launched = TRUE;
  self->exit_source = attach (g_unix_fd_source_new (self->sandbox.launched.pidfd, G_IO_IN),
                              G_SOURCE_FUNC (exited_cb), self, "[sandbox] ready bwrap exit");
  self->idle_source = attach (g_timeout_source_new (self->pool->idle_timeout_ms),
                              idle_cb, self, "[sandbox] ready idle timeout");
  g_mutex_unlock (&self->lock);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_bubblewrap_ready_start:
 * @pool: the backend's pool
 * @input: the session's setup, without a command
 * @revision: the policy revision @input was built from
 *
 * Starts a sandbox for the session's next command, if @pool has room: its
 * bwrap is launched on the launcher thread,
 * %SANDBOX_BUBBLEWRAP_READY_LAUNCH_DELAY_MS after this returns.
 *
 * Returns: (transfer full) (nullable): the ready sandbox, or %NULL when
 *   the pool is full (one that cannot be built or spawned ends at its
 *   launch, and is never taken)
 */
SandboxBubblewrapReady *
sandbox_bubblewrap_ready_start (SandboxBubblewrapReadyPool       *pool,
                                const SandboxBubblewrapArgsInput *input,
                                guint64                           revision)
{
  SandboxBubblewrapReady *self;
  GSource *launch;

  g_return_val_if_fail (input->command == NULL, NULL);
  /* Not copied into the setup: the driver never starts a cgroup-limited
   * session's sandbox ahead of time. */
  g_return_val_if_fail (input->cgroup_root == NULL, NULL);

  if (!pool_try_acquire (pool))
    return NULL;
  self = g_atomic_rc_box_new0 (SandboxBubblewrapReady);
  g_mutex_init (&self->lock);
  self->pool = sandbox_bubblewrap_ready_pool_ref (pool);
  self->slot_held = TRUE;
  self->revision = revision;
  self->sandbox = (SandboxBubblewrapTaken) SANDBOX_BUBBLEWRAP_TAKEN_INIT;
  if (input->limits != NULL)
    self->limits = *input->limits;
  self->setup = setup_new (input);

  /* Queued, even on the launcher thread, where g_main_context_invoke()
   * would launch at once: called there as a command ends, the launch must
   * delay neither that command's completion nor its waiter (see
   * SANDBOX_BUBBLEWRAP_READY_LAUNCH_DELAY_MS). */
  launch = g_timeout_source_new (SANDBOX_BUBBLEWRAP_READY_LAUNCH_DELAY_MS);
  g_source_set_priority (launch, G_PRIORITY_HIGH);
  g_source_unref (attach (launch, launch_cb, self, "[sandbox] ready bwrap launch"));
  return self;
}

/* Whether the sandbox, built for @revision, still waits for its launch. */
static gboolean
is_queued (SandboxBubblewrapReady *self,
           guint64                 revision)
{
  gboolean queued;

  g_mutex_lock (&self->lock);
  queued = !self->finished && !self->launched && self->revision == revision;
  g_mutex_unlock (&self->lock);
  return queued;
}

/**
 * sandbox_bubblewrap_ready_take:
 * @self: (transfer full): a ready sandbox
 * @revision: the session's policy revision now
 * @taken: (out caller-allocates): the sandbox, when this returns %TRUE
 *
 * Hands the sandbox over to a command: only when it was built for
 * @revision and still runs. One whose launch is still queued (a command
 * that came within %SANDBOX_BUBBLEWRAP_READY_LAUNCH_DELAY_MS of the last)
 * is launched now, on the launcher thread: that costs what the command's
 * cold start would, and every command after a session's first runs in a
 * sandbox started the same way. Otherwise it is discarded. Either way
 * @self is consumed.
 *
 * Returns: whether @taken holds a sandbox waiting for its message
 */
gboolean
sandbox_bubblewrap_ready_take (SandboxBubblewrapReady *self,
                               guint64                 revision,
                               SandboxBubblewrapTaken *taken)
{
  struct pollfd exited = { .events = POLLIN };
  gboolean usable;

  if (is_queued (self, revision))
    sandbox_bubblewrap_launcher_run_sync (launch_cb, self);

  g_mutex_lock (&self->lock);
  exited.fd = self->sandbox.launched.pidfd;
  usable = !self->finished && self->launched && self->revision == revision &&
           poll (&exited, 1, 0) == 0;
  if (usable)
    {
      *taken = self->sandbox;
      self->sandbox = (SandboxBubblewrapTaken) SANDBOX_BUBBLEWRAP_TAKEN_INIT;
      finish_locked (self);
    }
  else if (!self->finished)
    kill_locked (self);
  g_mutex_unlock (&self->lock);
  ready_unref (self);
  return usable;
}

/**
 * sandbox_bubblewrap_ready_discard:
 * @self: (transfer full) (nullable): a ready sandbox
 *
 * Kills it, if it runs, and reaps it before returning: no process of it
 * is left.
 */
void
sandbox_bubblewrap_ready_discard (SandboxBubblewrapReady *self)
{
  if (self == NULL)
    return;
  g_mutex_lock (&self->lock);
  if (!self->finished)
    kill_locked (self);
  g_mutex_unlock (&self->lock);
  ready_unref (self);
}
