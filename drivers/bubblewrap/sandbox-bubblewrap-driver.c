/* sandbox-bubblewrap-driver.c — one live bubblewrap session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>

#include "sandbox-bubblewrap-args-private.h"
#include "sandbox-bubblewrap-driver-fields-private.h"
#include "sandbox-bubblewrap-keeper-private.h"
#include "sandbox-bubblewrap-ports-private.h"
#include "sandbox-bubblewrap-session-net-private.h"
#include "sandbox-bubblewrap-limits-private.h"
#include "sandbox-bubblewrap-process-private.h"

/*
 * The driver of one live session: commands through bwrap with admission,
 * contained host-side file I/O, the network policy, and stop.
 *
 * The stopped state, admission, the policy and its revision are the
 * session gate's (#SandboxSessionGate): a slot is taken before anything
 * starts and released when the process completes, once its whole tree is
 * gone and both pipes are closed (see sandbox-bubblewrap-process.c), so stop
 * waits for every command.
 *
 * Ready sandboxes (sandbox-bubblewrap-ready.c): once a command's sandbox
 * has fully exited, the session starts the next command's sandbox, if the
 * backend's pool has room — not while the command runs, when bwrap's setup
 * would compete with it for the CPU and delay its completion. The next
 * command takes it when it was built for the policy revision of the
 * moment, else runs cold (and the stale one is killed). A policy change
 * and stop discard it at once. It is started while the ending command
 * still holds its admission slot, so the policy it is built from cannot
 * change meanwhile, and a stop, which waits for that command to complete,
 * discards it after.
 *
 * Network: deny-all and allow-all need no gateway. The first allow-list
 * policy starts one (a SandboxGateway on a socket in its own 0700 temporary
 * directory); it then follows every policy change and closes at stop. Its
 * socket is bound into the guest only while the policy is an allow-list —
 * less attack surface than the reference, which binds it always.
 */

static void sandbox_bubblewrap_driver_iface_init (SandboxDriverInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxBubblewrapDriver, sandbox_bubblewrap_driver,
                                G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SANDBOX_TYPE_DRIVER,
                                                               sandbox_bubblewrap_driver_iface_init))

static gboolean
check_active (SandboxBubblewrapDriver  *self,
              GCancellable             *cancellable,
              GError                  **error)
{
  return sandbox_session_gate_check_active (self->gate, cancellable, error);
}

static void
gateway_upstream_error_cb (SandboxGateway *gateway,
                           GError         *cause,
                           gpointer        data)
{
  SandboxBubblewrapDriver *self = data;
  g_autoptr(SandboxBackend) backend = g_weak_ref_get (&self->backend);

  if (backend != NULL)
    sandbox_backend_emit_gateway_error (backend, cause);
}

static void
gateway_audit_cb (SandboxGateway      *gateway,
                  SandboxGatewayEvent *event,
                  gpointer             data)
{
  SandboxBubblewrapDriver *self = data;
  g_autoptr(SandboxHandle) handle = g_weak_ref_get (&self->handle);

  if (handle != NULL)
    sandbox_handle_emit_gateway_audit (handle, event);
}

/**
 * sandbox_bubblewrap_driver_set_handle:
 * @self: a #SandboxBubblewrapDriver
 * @handle: the handle owning this session (not referenced)
 *
 * Tells the driver which handle relays its gateway's audit events.
 */
void
sandbox_bubblewrap_driver_set_handle (SandboxBubblewrapDriver *self,
                                      SandboxHandle           *handle)
{
  g_weak_ref_set (&self->handle, handle);
}

/* Guests connect to the gateway socket, which needs write permission on it:
 * when they are not the host's ids, it becomes theirs. By path, but in the
 * gateway's fresh 0700 directory that only the host can enter. */
static gboolean
give_gateway_to_guest (SandboxBubblewrapDriver  *self,
                       GError                  **error)
{
  const char *path = sandbox_gateway_get_socket_path (self->gateway);

  if (!self->guest.switched ||
      fchownat (AT_FDCWD, path, self->guest.uid, self->guest.gid, AT_SYMLINK_NOFOLLOW) == 0)
    return TRUE;
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
               "Could not give the gateway socket to the guest: %s", g_strerror (errno));
  return FALSE;
}

/* A parked session's gateway (sandbox-bubblewrap-driver-park.c) serves
 * again before a sandbox binds its socket: a new socket at the same path,
 * given to the guest as the first was. */
static gboolean
wake_gateway (SandboxBubblewrapDriver  *self,
              GError                  **error)
{
  if (self->gateway == NULL || !sandbox_gateway_is_parked (self->gateway))
    return TRUE;
  return sandbox_gateway_unpark (self->gateway, error) && give_gateway_to_guest (self, error);
}

/* The guests get the certificate of the gateway's CA as bytes, never a
 * path into the state directory. */
static gboolean
read_gateway_ca (SandboxBubblewrapDriver  *self,
                 GError                  **error)
{
  const char *path = sandbox_gateway_get_ca_file (self->gateway);
  g_autofree char *pem = NULL;
  gsize length = 0;

  if (path == NULL)
    return TRUE;
  if (!g_file_get_contents (path, &pem, &length, error))
    return FALSE;
  self->gateway_ca = g_bytes_new_take (g_steal_pointer (&pem), length);
  return TRUE;
}

/* Called with the gate's lock held (or before the gate exists): makes the
 * gateway follow @policy, starting it for the first allow-list. */
static gboolean
apply_policy_locked (SandboxNetworkPolicy  *policy,
                     gpointer               data,
                     GError               **error)
{
  SandboxBubblewrapDriver *self = data;

  if (self->gateway != NULL)
    sandbox_gateway_set_policy (self->gateway, policy);
  else if (sandbox_network_policy_get_kind (policy) == SANDBOX_NETWORK_POLICY_ALLOW_LIST)
    {
      self->gateway = g_initable_new (SANDBOX_TYPE_GATEWAY, NULL, error,
                                      "policy", policy,
                                      "ca-directory", self->gateway_ca_directory,
                                      "upstream-ca-file", self->upstream_ca_file,
                                      "session-id", self->session_id,
                                      NULL);
      if (self->gateway == NULL)
        return FALSE;
      if (!read_gateway_ca (self, error) || !give_gateway_to_guest (self, error))
        {
          sandbox_gateway_close (self->gateway);
          g_clear_object (&self->gateway);
          return FALSE;
        }
      g_signal_connect_object (self->gateway, "upstream-error",
                               G_CALLBACK (gateway_upstream_error_cb), self, 0);
      g_signal_connect_object (self->gateway, "audit",
                               G_CALLBACK (gateway_audit_cb), self, 0);
    }
  return TRUE;
}

/* File I/O: the ritual (size, gate, path, limit) is the core's
 * (sandbox-driver.c); these get a canonical path. The workspace kit still
 * gets the bound, so that it never reads more than that. -------------- */

static gboolean
sandbox_bubblewrap_driver_iface_check_active (SandboxDriver  *driver,
                                              GCancellable   *cancellable,
                                              GError        **error)
{
  return check_active (SANDBOX_BUBBLEWRAP_DRIVER (driver), cancellable, error);
}

static GBytes *
sandbox_bubblewrap_driver_read_bytes (SandboxDriver  *driver,
                                      const char     *path,
                                      GCancellable   *cancellable,
                                      GError        **error)
{
  SandboxBubblewrapDriver *self = SANDBOX_BUBBLEWRAP_DRIVER (driver);
  g_autoptr(GRWLockReaderLocker) locker = sandbox_bubblewrap_driver_lock_files (self, cancellable,
                                                                               error);

  if (locker == NULL)
    return NULL;
  return sandbox_workspace_read (self->files, sandbox_path_relative (path),
                                 sandbox_driver_get_max_file_bytes (driver), error);
}

static gboolean
sandbox_bubblewrap_driver_write_bytes (SandboxDriver  *driver,
                                       const char     *path,
                                       GBytes         *contents,
                                       GCancellable   *cancellable,
                                       GError        **error)
{
  SandboxBubblewrapDriver *self = SANDBOX_BUBBLEWRAP_DRIVER (driver);
  g_autoptr(GRWLockReaderLocker) locker = sandbox_bubblewrap_driver_lock_files (self, cancellable,
                                                                               error);

  if (locker == NULL)
    return FALSE;
  return sandbox_workspace_write (self->files, sandbox_path_relative (path), contents,
                                  sandbox_driver_get_max_file_bytes (driver), error);
}

static gboolean
sandbox_bubblewrap_driver_remove_path (SandboxDriver  *driver,
                                       const char     *path,
                                       GCancellable   *cancellable,
                                       GError        **error)
{
  SandboxBubblewrapDriver *self = SANDBOX_BUBBLEWRAP_DRIVER (driver);
  g_autoptr(GRWLockReaderLocker) locker = sandbox_bubblewrap_driver_lock_files (self, cancellable,
                                                                               error);

  if (locker == NULL)
    return FALSE;
  return sandbox_workspace_remove (self->files, sandbox_path_relative (path), error);
}

/* Commands -------------------------------------------------------------- */

/* The policy kind, its revision and, for an allow-list, the gateway
 * socket to bind. The gateway was started under the gate's lock before the
 * gate could give out that allow-list, and it is never replaced. */
static SandboxNetworkPolicyKind
current_network (SandboxBubblewrapDriver  *self,
                 char                    **gateway_socket,
                 GBytes                  **gateway_ca,
                 guint64                  *revision)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_session_gate_dup_policy (self->gate, revision);
  SandboxNetworkPolicyKind kind = sandbox_network_policy_get_kind (policy);

  *gateway_socket = kind == SANDBOX_NETWORK_POLICY_ALLOW_LIST
                    ? g_strdup (sandbox_gateway_get_socket_path (self->gateway))
                    : NULL;
  *gateway_ca = kind == SANDBOX_NETWORK_POLICY_ALLOW_LIST && self->gateway_ca != NULL
                ? g_bytes_ref (self->gateway_ca)
                : NULL;
  return kind;
}

/* The session's ready sandbox, taken out of the driver. */
static SandboxBubblewrapReady *
steal_ready (SandboxBubblewrapDriver *self)
{
  SandboxBubblewrapReady *ready;

  g_mutex_lock (&self->ready_lock);
  ready = g_steal_pointer (&self->ready);
  g_mutex_unlock (&self->ready_lock);
  return ready;
}

/* What every sandbox of the session is built from, but its command and
 * its network. */
static SandboxBubblewrapArgsInput
session_input (SandboxBubblewrapDriver *self)
{
  return (SandboxBubblewrapArgsInput) {
    .executable = self->executable,
    .session_id = self->session_id,
    .workspace = self->workspace,
    .keeper = self->keeper,
    .seccomp_program = self->seccomp_program,
    .limits = &self->limits,
    .cgroup_root = self->cgroup_root,
    .guest = &self->guest,
    .etc = self->etc.curated ? &self->etc : NULL,
    .host_loopback = self->host_loopback,
    .runtime = self->runtime,
  };
}

/* Starts the next command's sandbox from the current policy, unless the
 * session has one or is stopped. */
static void
prepare_next_sandbox (SandboxBubblewrapDriver *self)
{
  SandboxBubblewrapArgsInput input = session_input (self);
  g_autofree char *gateway_socket = NULL;
  g_autoptr(GBytes) gateway_ca = NULL;
  g_autoptr(SandboxBubblewrapSessionNet) net = NULL;
  guint64 revision;

  if (self->ready_pool == NULL || self->cgroup_root != NULL)
    return;
  /* Stopping: nothing would take it. (A stop that begins after this check
   * discards it, see sandbox_bubblewrap_driver_stop().) */
  if (sandbox_session_gate_is_stopped (self->gate))
    return;
  input.policy_kind = current_network (self, &gateway_socket, &gateway_ca, &revision);
  input.gateway_socket = gateway_socket;
  input.gateway_ca = gateway_ca;
  /* Launcher thread: no network keeper is started here. Without the
   * policy's network, the next command makes it, cold. */
  net = sandbox_bubblewrap_net_slot_dup (&self->net, revision);
  if (net == NULL)
    return;
  input.session_net = net;
  g_mutex_lock (&self->ready_lock);
  if (self->ready == NULL && !self->ready_closed)
    self->ready = sandbox_bubblewrap_ready_start (self->ready_pool, &input, revision);
  g_mutex_unlock (&self->ready_lock);
}

/* Launcher thread: a command's sandbox is gone (see
 * SandboxBubblewrapProcessExitedFunc). The command still holds its slot:
 * the current policy is the one it ran under. */
static void
command_exited_cb (SandboxBubblewrapProcess *process,
                   GObject                  *owner)
{
  sandbox_bubblewrap_driver_note_use (SANDBOX_BUBBLEWRAP_DRIVER (owner));
  prepare_next_sandbox (SANDBOX_BUBBLEWRAP_DRIVER (owner));
}

/* @prepared_revision: the policy revision a coding launch was prepared
 * at, or NULL for a direct command. @prepare_next: whether to start the
 * next command's sandbox once this one has exited (not for the proof of
 * isolation at create). */
static SandboxBubblewrapProcess *
spawn_process_locked (SandboxBubblewrapDriver  *self,
               SandboxCommand           *command,
               const guint64            *prepared_revision,
               gboolean                  prepare_next,
               GCancellable             *cancellable,
               GError                  **error)
{
  g_autoptr(SandboxBubblewrapProcess) process = NULL;
  g_autoptr(GError) cause = NULL;
  g_autofree char *gateway_socket = NULL;
  g_autoptr(GBytes) gateway_ca = NULL;
  g_autoptr(SandboxBubblewrapSessionNet) net = NULL;
  guint64 revision;
  SandboxBubblewrapArgsInput input = session_input (self);

  input.command = command;
  input.policy_kind = current_network (self, &gateway_socket, &gateway_ca, &revision);
  input.gateway_ca = gateway_ca;
  if (prepared_revision != NULL)
    revision = *prepared_revision;
  input.gateway_socket = gateway_socket;
  /* It takes the proxy listener the command's stub hands over. */
  input.gateway = gateway_socket != NULL ? self->gateway : NULL;

  if (g_cancellable_set_error_if_cancelled (cancellable, error) || !wake_gateway (self, error))
    return NULL;
  /* The proof of isolation at create runs in a namespace of its own: a
   * session without commands holds no network keeper. */
  if (prepare_next)
    {
      net = sandbox_bubblewrap_net_slot_dup_or_start (&self->net, revision, input.policy_kind,
                                                      self->host_loopback, self->keeper,
                                                      input.gateway, &cause);
      if (net == NULL && cause != NULL)
        {
          if (!check_active (self, NULL, error))
            return NULL;
          g_propagate_error (error, g_steal_pointer (&cause));
          return NULL;
        }
      input.session_net = net;
    }

  /* A session stopped or deleted meanwhile is STOPPED, whatever building
   * its command line then met (a deleted layered session's lock file is
   * gone). */
  process = sandbox_bubblewrap_process_new (&input, G_OBJECT (self), steal_ready (self),
                                            revision, &cause);
  if (process == NULL)
    {
      if (!check_active (self, NULL, error))
        return NULL;
      g_propagate_error (error, g_steal_pointer (&cause));
      return NULL;
    }
  sandbox_bubblewrap_process_set_trees (process, self->trees);
  if (prepare_next)
    sandbox_bubblewrap_process_set_exited_func (process, command_exited_cb);
  /* The arguments were built from the policy at @revision: a process set up
   * from a policy that has changed since is refused. */
  if (!sandbox_session_gate_admit_prepared (self->gate, SANDBOX_PROCESS (process), revision,
                                            error))
    return NULL;
  if (!sandbox_bubblewrap_process_launch (process, error))
    {
      sandbox_session_gate_withdraw (self->gate, SANDBOX_PROCESS (process));
      return NULL;
    }

  sandbox_process_start (SANDBOX_PROCESS (process), cancellable);
  sandbox_bubblewrap_process_mark_started (process);
  return g_steal_pointer (&process);
}

/* A command is built from the keeper and launched in its namespaces: no
 * restore replaces it meanwhile. */
static SandboxBubblewrapProcess *
spawn_process (SandboxBubblewrapDriver  *self,
               SandboxCommand           *command,
               const guint64            *prepared_revision,
               gboolean                  prepare_next,
               GCancellable             *cancellable,
               GError                  **error)
{
  g_autoptr(GRWLockReaderLocker) locker = NULL;

  sandbox_bubblewrap_driver_note_use (self);
  if (!sandbox_bubblewrap_driver_revive_keeper (self, cancellable, error))
    return NULL;
  /* Its idle time starts again after the keeper did (see -driver-park.c). */
  sandbox_bubblewrap_driver_note_use (self);
  locker = g_rw_lock_reader_locker_new (&self->layers_lock);
  if (self->layers_lost)
    {
      sandbox_bubblewrap_driver_set_layers_lost_error (error);
      return NULL;
    }
  return spawn_process_locked (self, command, prepared_revision, prepare_next, cancellable,
                               error);
}

static SandboxProcess *
sandbox_bubblewrap_driver_spawn (SandboxDriver   *driver,
                                 SandboxCommand  *command,
                                 GCancellable    *cancellable,
                                 GError         **error)
{
  return SANDBOX_PROCESS (spawn_process (SANDBOX_BUBBLEWRAP_DRIVER (driver),
                                         command, NULL, TRUE, cancellable, error));
}

/* How long the isolation proof's command may run where the guest may have
 * replaced it. */
#define PROOF_ON_WRITABLE_RUNTIME_TIMEOUT_MS 5000

/**
 * sandbox_bubblewrap_driver_prove_isolation:
 * @self: a driver
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs `/usr/bin/true` through bwrap, as the reference does, and also
 * requires that bwrap reported the namespace it created: an `executable`
 * that merely exits 0 proves nothing. Fails with
 * %SANDBOX_ERROR_UNAVAILABLE "Bubblewrap could not establish isolation".
 *
 * On a runtime writable per session, `/usr/bin/true` is the guest's own
 * to change (or delete): there bwrap's report alone is the proof, and the
 * command gets a deadline, so that what a guest did to its /usr cannot
 * keep its session from resuming.
 *
 * Returns: %TRUE if a command ran isolated
 */
gboolean
sandbox_bubblewrap_driver_prove_isolation (SandboxBubblewrapDriver  *self,
                                           GCancellable             *cancellable,
                                           GError                  **error)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/true");
  g_autoptr(SandboxBubblewrapProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) cause = NULL;

  sandbox_command_set_cwd (command, SANDBOX_WORKSPACE);
  if (self->runtime_writable)
    sandbox_command_set_timeout_ms (command, PROOF_ON_WRITABLE_RUNTIME_TIMEOUT_MS);
  process = spawn_process (self, command, NULL, FALSE, cancellable, &cause);
  if (process != NULL)
    result = sandbox_process_wait (SANDBOX_PROCESS (process), NULL, &cause);
  /* The guest's own /usr/bin/true ran past its deadline: isolated all the
   * same, if bwrap said so. */
  if (self->runtime_writable && process != NULL &&
      g_error_matches (cause, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT) &&
      sandbox_bubblewrap_process_was_isolated (process))
    g_clear_error (&cause);

  if (result != NULL && !self->runtime_writable && sandbox_result_get_exit_status (result) != 0)
    cause = g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                         "%s exited with status %d", self->executable,
                         sandbox_result_get_exit_status (result));
  else if (result != NULL && !sandbox_bubblewrap_process_was_isolated (process))
    cause = g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                         "%s did not report a sandbox process", self->executable);

  if (cause != NULL)
    {
      if (g_error_matches (cause, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_propagate_error (error, g_steal_pointer (&cause));
      else
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                     "Bubblewrap could not establish isolation: %s", cause->message);
      return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_driver_stop:
 * @self: a driver
 *
 * Refuses everything from now on, kills every live command and waits until
 * each one's whole tree is gone. Idempotent and thread-safe.
 */
void
sandbox_bubblewrap_driver_stop (SandboxBubblewrapDriver *self)
{
  sandbox_bubblewrap_driver_clear_park (self);
  /* SIGKILL, as the reference: the commands' waiters see status 137. */
  sandbox_session_gate_stop (self->gate, NULL, NULL);
  /* And the next command's sandbox, which no command will take. */
  g_mutex_lock (&self->ready_lock);
  self->ready_closed = TRUE;
  g_mutex_unlock (&self->ready_lock);
  sandbox_bubblewrap_ready_discard (steal_ready (self));
  /* A command may have completed before its sandbox was reaped (its stub
   * reported it empty): what is left of it, its stub and bwrap exiting,
   * still holds the workspace's lock and sits in the keeper's namespaces. */
  sandbox_bubblewrap_trees_wait (self->trees);
  /* Every command and the ready sandbox are gone. A command refused
   * from now on may still be building its arguments from @keeper, which
   * stays until finalize. */
  g_mutex_lock (&self->ready_lock);
  if (self->keeper != NULL)
    sandbox_bubblewrap_keeper_stop (self->keeper);
  g_mutex_unlock (&self->ready_lock);
  /* And the network keeper and the ports exposed from it. */
  sandbox_bubblewrap_ports_close (self->ports);
  sandbox_bubblewrap_net_slot_close (&self->net);

  /* Removes the socket and its temporary directory. */
  if (self->gateway != NULL)
    sandbox_gateway_close (self->gateway);
}

/**
 * sandbox_bubblewrap_driver_run_quiet:
 * @self: a driver
 * @what: what @run does, for the refusal
 * @run: (scope call): called with %NULL, @user_data and @error
 * @user_data: data for @run
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs @run while no command of the session runs and none starts (see
 * sandbox_session_gate_run_quiet()), and no file call goes through the
 * workspace: %SANDBOX_ERROR_BUSY while a command runs.
 *
 * Returns: what @run returned
 */
gboolean
sandbox_bubblewrap_driver_run_quiet (SandboxBubblewrapDriver     *self,
                                     const char                  *what,
                                     SandboxSessionGateApplyFunc  run,
                                     gpointer                     user_data,
                                     GCancellable                *cancellable,
                                     GError                     **error)
{
  /* Before the gate's lock, as commands take them. */
  g_autoptr(GRWLockWriterLocker) locker = g_rw_lock_writer_locker_new (&self->layers_lock);

  return sandbox_session_gate_run_quiet (self->gate, what, run, user_data, cancellable, error);
}

/* Coding binding hooks --------------------------------------------------- */

/**
 * sandbox_bubblewrap_driver_check_active:
 * @self: a driver
 * @error: return location for a #GError
 *
 * Returns: %FALSE with %SANDBOX_ERROR_STOPPED once the driver is stopped
 */
gboolean
sandbox_bubblewrap_driver_check_active (SandboxBubblewrapDriver  *self,
                                        GError                  **error)
{
  return check_active (self, NULL, error);
}

/**
 * sandbox_bubblewrap_driver_get_policy_kind:
 * @self: a driver
 * @revision: (out): the revision of the current policy
 *
 * Returns: the current policy's kind, read atomically with @revision
 */
SandboxNetworkPolicyKind
sandbox_bubblewrap_driver_get_policy_kind (SandboxBubblewrapDriver *self,
                                           guint64                 *revision)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_session_gate_dup_policy (self->gate, revision);

  return sandbox_network_policy_get_kind (policy);
}

/**
 * sandbox_bubblewrap_driver_spawn_prepared:
 * @self: a driver
 * @command: the command
 * @revision: the policy revision the launch was prepared at
 * @cancellable: (nullable): cancels the command
 * @error: return location for a #GError
 *
 * Spawns a coding launch like a direct command (same admission), refused
 * with %SANDBOX_ERROR_BUSY when the policy changed since @revision.
 *
 * Returns: (transfer full): the process, or %NULL with @error set
 */
SandboxProcess *
sandbox_bubblewrap_driver_spawn_prepared (SandboxBubblewrapDriver  *self,
                                          SandboxCommand           *command,
                                          guint64                   revision,
                                          GCancellable             *cancellable,
                                          GError                  **error)
{
  return SANDBOX_PROCESS (spawn_process (self, command, &revision, TRUE, cancellable, error));
}

/**
 * sandbox_bubblewrap_driver_list_directory:
 * @self: a driver
 * @path: a canonical workspace path
 * @max_entries: the most entries to return
 * @truncated: (out): whether entries were left out
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the contained listing (see
 *   [method@Sandbox.Workspace.list]), or %NULL with @error set
 */
GVariant *
sandbox_bubblewrap_driver_list_directory (SandboxBubblewrapDriver  *self,
                                          const char               *path,
                                          guint                     max_entries,
                                          gboolean                 *truncated,
                                          GCancellable             *cancellable,
                                          GError                  **error)
{
  g_autoptr(GRWLockReaderLocker) locker = NULL;

  if (!check_active (self, cancellable, error))
    return NULL;
  locker = sandbox_bubblewrap_driver_lock_files (self, cancellable, error);
  if (locker == NULL)
    return NULL;
  return sandbox_workspace_list (self->files, sandbox_path_relative (path),
                                 max_entries, truncated, error);
}

/* Exposed ports ---------------------------------------------------------- */

static SandboxBubblewrapSessionNet *
dup_current_net (GObject *owner)
{
  return sandbox_bubblewrap_net_slot_dup_current (&SANDBOX_BUBBLEWRAP_DRIVER (owner)->net);
}

static char *
sandbox_bubblewrap_driver_expose_port (SandboxDriver  *driver,
                                       guint16         port,
                                       GCancellable   *cancellable,
                                       GError        **error)
{
  SandboxBubblewrapDriver *self = SANDBOX_BUBBLEWRAP_DRIVER (driver);

  if (!check_active (self, cancellable, error))
    return NULL;
  return sandbox_bubblewrap_ports_expose (self->ports, port, error);
}

/* Network policy -------------------------------------------------------- */

static gboolean
sandbox_bubblewrap_driver_set_network_policy (SandboxDriver         *driver,
                                              SandboxNetworkPolicy  *policy,
                                              GCancellable          *cancellable,
                                              GError               **error)
{
  SandboxBubblewrapDriver *self = SANDBOX_BUBBLEWRAP_DRIVER (driver);

  /* The next command is set up from the new policy; launches prepared (or
   * arguments built) before it are refused at admission, and a ready
   * sandbox built before it is never taken (its revision is older): it goes
   * now. */
  if (!sandbox_session_gate_set_policy (self->gate, policy, apply_policy_locked, self,
                                        cancellable, error))
    return FALSE;
  sandbox_bubblewrap_ready_discard (steal_ready (self));
  return TRUE;
}

/* Object ---------------------------------------------------------------- */

/**
 * sandbox_bubblewrap_driver_new:
 * @executable: the bwrap executable
 * @session_id: the session's id, on its gateway's events and its log lines
 * @workspace: the host path of the session's workspace (of a layered one,
 *   its upper layer)
 * @lowers: (nullable): of a layered session, the host paths of its lower
 *   layers, top first; %NULL for a copy
 * @layers: (nullable): of a layered session, the directory holding its
 *   upper layer and overlayfs' work directory
 * @max_concurrent_commands: the admission limit
 * @policy: the initial network policy
 * @backend: (nullable): the backend whose [signal@Sandbox.Backend::gateway-error]
 *   reports the gateway's failures (held weakly)
 * @hardening: what every command runs under beyond namespaces
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the driver, or %NULL if the workspace cannot be
 *   opened or the gateway cannot start
 */
SandboxBubblewrapDriver *
sandbox_bubblewrap_driver_new (const char            *executable,
                               const char            *session_id,
                               const char            *workspace,
                               const char * const    *lowers,
                               const char            *layers,
                               guint                  max_concurrent_commands,
                               SandboxNetworkPolicy  *policy,
                               SandboxBackend        *backend,
                               const SandboxBubblewrapHardening *hardening,
                               GError               **error)
{
  g_autoptr(SandboxBubblewrapDriver) self = NULL;
  g_autoptr(SandboxWorkspace) files = NULL;
  g_autoptr(SandboxBubblewrapKeeper) keeper = NULL;
  /* Durable: host-side workspace writes are synced before they are named. */
  SandboxWorkspaceFlags flags = hardening->durable ? SANDBOX_WORKSPACE_FLAGS_DURABLE
                                                   : SANDBOX_WORKSPACE_FLAGS_NONE;

  g_return_val_if_fail ((lowers == NULL) == (layers == NULL), NULL);

  /* A layered session's files are its keeper's overlay, the one its
   * commands share. */
  if (lowers != NULL)
    {
      keeper = sandbox_bubblewrap_keeper_start (lowers, hardening->runtime_lowers, layers,
                                                &hardening->guest, error);
      if (keeper == NULL)
        return NULL;
      files = sandbox_bubblewrap_keeper_open_workspace (keeper, flags, error);
    }
  else
    files = sandbox_workspace_open (workspace, flags, error);
  if (files == NULL)
    return NULL;

  self = g_object_new (SANDBOX_TYPE_BUBBLEWRAP_DRIVER, NULL);
  self->executable = g_strdup (executable);
  self->session_id = g_strdup (session_id);
  self->workspace = g_strdup (workspace);
  self->files = g_steal_pointer (&files);
  self->files_flags = flags;
  self->keeper = g_steal_pointer (&keeper);
  if (hardening->seccomp_program != NULL)
    self->seccomp_program = g_bytes_ref (hardening->seccomp_program);
  self->limits = hardening->limits;
  if (hardening->cgroup_root != NULL)
    self->cgroup_root = sandbox_bubblewrap_cgroup_root_ref (hardening->cgroup_root);
  self->guest = hardening->guest;
  self->host_loopback = hardening->host_loopback;
  self->gateway_ca_directory = g_strdup (hardening->gateway_ca_directory);
  self->upstream_ca_file = g_strdup (hardening->upstream_ca_file);
  self->runtime = g_strdup (hardening->runtime);
  self->runtime_key = g_strdup (hardening->runtime_key);
  self->runtime_writable = hardening->runtime_lowers != NULL;
  sandbox_bubblewrap_etc_copy (&self->etc, &hardening->etc);
  if (hardening->ready_pool != NULL)
    self->ready_pool = sandbox_bubblewrap_ready_pool_ref (hardening->ready_pool);
  g_weak_ref_set (&self->backend, backend);
  /* No command can be admitted before the gate exists. */
  if (!apply_policy_locked (policy, self, error))
    return NULL;
  self->gate = sandbox_session_gate_new (max_concurrent_commands, policy);
  self->trees = sandbox_bubblewrap_trees_new ();
  self->ports = sandbox_bubblewrap_ports_new (dup_current_net, G_OBJECT (self));
  sandbox_bubblewrap_driver_init_park (self, hardening->idle_helpers_timeout_ms);
  return g_steal_pointer (&self);
}

static void
sandbox_bubblewrap_driver_finalize (GObject *object)
{
  SandboxBubblewrapDriver *self = SANDBOX_BUBBLEWRAP_DRIVER (object);

  /* Live processes hold a reference: none can be left here. */
  g_assert (self->gate == NULL || sandbox_session_gate_get_n_live (self->gate) == 0);
  g_clear_object (&self->gate);
  sandbox_bubblewrap_ready_discard (g_steal_pointer (&self->ready));
  g_clear_pointer (&self->ports, sandbox_bubblewrap_ports_free);
  sandbox_bubblewrap_net_slot_clear (&self->net);
  g_clear_pointer (&self->keeper, sandbox_bubblewrap_keeper_free);
  g_clear_pointer (&self->ready_pool, sandbox_bubblewrap_ready_pool_unref);
  g_clear_pointer (&self->trees, sandbox_bubblewrap_trees_unref);
  g_mutex_clear (&self->ready_lock);
  g_rw_lock_clear (&self->layers_lock);
  sandbox_bubblewrap_driver_clear_park (self);
  g_mutex_clear (&self->park_lock);
  g_clear_pointer (&self->files, sandbox_workspace_unref);
  if (self->gateway != NULL)
    sandbox_gateway_close (self->gateway);
  g_clear_object (&self->gateway);
  g_clear_pointer (&self->gateway_ca, g_bytes_unref);
  g_free (self->gateway_ca_directory);
  g_free (self->upstream_ca_file);
  g_free (self->runtime);
  g_free (self->runtime_key);
  g_weak_ref_clear (&self->backend);
  g_weak_ref_clear (&self->handle);
  g_clear_pointer (&self->seccomp_program, g_bytes_unref);
  g_clear_pointer (&self->cgroup_root, sandbox_bubblewrap_cgroup_root_unref);
  g_free (self->executable);
  g_free (self->session_id);
  g_free (self->workspace);
  sandbox_bubblewrap_etc_clear (&self->etc);

  G_OBJECT_CLASS (sandbox_bubblewrap_driver_parent_class)->finalize (object);
}

static void
sandbox_bubblewrap_driver_class_init (SandboxBubblewrapDriverClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_bubblewrap_driver_finalize;
}

static void
sandbox_bubblewrap_driver_class_finalize (SandboxBubblewrapDriverClass *klass)
{
}

static void
sandbox_bubblewrap_driver_iface_init (SandboxDriverInterface *iface)
{
  iface->check_active = sandbox_bubblewrap_driver_iface_check_active;
  iface->read_bytes = sandbox_bubblewrap_driver_read_bytes;
  iface->write_bytes = sandbox_bubblewrap_driver_write_bytes;
  iface->remove_path = sandbox_bubblewrap_driver_remove_path;
  iface->spawn = sandbox_bubblewrap_driver_spawn;
  iface->set_network_policy = sandbox_bubblewrap_driver_set_network_policy;
  iface->expose_port = sandbox_bubblewrap_driver_expose_port;
}

static void
sandbox_bubblewrap_driver_init (SandboxBubblewrapDriver *self)
{
  g_weak_ref_init (&self->backend, NULL);
  g_weak_ref_init (&self->handle, NULL);
  g_mutex_init (&self->ready_lock);
  g_rw_lock_init (&self->layers_lock);
  g_mutex_init (&self->park_lock);
  sandbox_bubblewrap_net_slot_init (&self->net);
}

/**
 * sandbox_bubblewrap_driver_register:
 * @module: the driver module
 *
 * Registers #SandboxBubblewrapDriver with @module.
 */
void
sandbox_bubblewrap_driver_register (GTypeModule *module)
{
  sandbox_bubblewrap_driver_register_type (module);
}
