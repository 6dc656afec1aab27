/* sandbox-memory-driver.c — one live session of the memory backend
 *
 * The #SandboxDriver of a memory session: file operations on the session's
 * in-memory workspace, scripted commands, and the network policy. It keeps
 * the bubblewrap driver's rules, through the same #SandboxSessionGate: at
 * most max-concurrent-commands live commands (%SANDBOX_ERROR_BUSY before
 * anything starts), 1 MiB file operations (%SANDBOX_ERROR_LIMIT), no policy
 * change while commands are live (%SANDBOX_ERROR_BUSY) and
 * %SANDBOX_ERROR_STOPPED for everything after stop.
 *
 * It executes nothing, so it can honestly enforce deny-all — and only
 * deny-all: allow-all and allow-list policies are refused with
 * %SANDBOX_ERROR_UNAVAILABLE, never silently accepted.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <string.h>

#include "sandbox-memory-driver.h"
#include "sandbox-memory-process.h"

struct _SandboxMemoryDriver
{
  GObject                 parent_instance;

  SandboxMemoryWorkspace *workspace;
  SandboxMemoryScript    *script;
  SandboxSessionGate     *gate;
};

static void sandbox_memory_driver_iface_init (SandboxDriverInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxMemoryDriver, sandbox_memory_driver, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SANDBOX_TYPE_DRIVER,
                                                               sandbox_memory_driver_iface_init))

/* The file-operation ritual (size, gate, path, limit) is the core's
 * (sandbox-driver.c): the operations below get a canonical path. */
static gboolean
sandbox_memory_driver_check_active (SandboxDriver  *driver,
                                    GCancellable   *cancellable,
                                    GError        **error)
{
  return sandbox_session_gate_check_active (SANDBOX_MEMORY_DRIVER (driver)->gate, cancellable,
                                            error);
}

static GBytes *
sandbox_memory_driver_read_bytes (SandboxDriver  *driver,
                                  const char     *path,
                                  GCancellable   *cancellable,
                                  GError        **error)
{
  return sandbox_memory_workspace_read (SANDBOX_MEMORY_DRIVER (driver)->workspace,
                                        sandbox_path_relative (path), error);
}

static gboolean
sandbox_memory_driver_write_bytes (SandboxDriver  *driver,
                                   const char     *path,
                                   GBytes         *contents,
                                   GCancellable   *cancellable,
                                   GError        **error)
{
  return sandbox_memory_workspace_write (SANDBOX_MEMORY_DRIVER (driver)->workspace,
                                         sandbox_path_relative (path), contents, FALSE, error);
}

static gboolean
sandbox_memory_driver_remove_path (SandboxDriver  *driver,
                                   const char     *path,
                                   GCancellable   *cancellable,
                                   GError        **error)
{
  return sandbox_memory_workspace_remove (SANDBOX_MEMORY_DRIVER (driver)->workspace,
                                          sandbox_path_relative (path), error);
}

/* The workspace path @executable names as execve() in the guest would see
 * it, or NULL if it is not in the workspace (a bare name is looked up in
 * PATH, which the memory driver does not model; other absolute paths are
 * the guest's system). */
static char *
workspace_executable (SandboxCommand *command)
{
  const char *executable = sandbox_command_get_executable (command);
  const char *cwd = sandbox_command_get_cwd (command);
  g_autofree char *path = NULL;
  g_autofree char *canonical = NULL;

  if (strchr (executable, '/') == NULL)
    return NULL;
  if (g_path_is_absolute (executable))
    {
      if (!g_str_has_prefix (executable, SANDBOX_WORKSPACE "/"))
        return NULL;
      path = g_strdup (executable);
    }
  else
    path = g_strconcat (cwd != NULL ? cwd : ".", "/", executable, NULL);

  /* "./configure" and "bin/../x" are fine in a shell: normalise lexically. */
  canonical = g_canonicalize_filename (path, SANDBOX_WORKSPACE);
  if (!g_str_has_prefix (canonical, SANDBOX_WORKSPACE "/"))
    return NULL;
  return g_strdup (canonical + strlen (SANDBOX_WORKSPACE "/"));
}

/* What execve() would say of @command's executable if it names a
 * workspace file that is not a regular file with its execute bit: then
 * the command ends as the bubblewrap driver's does, whatever the script
 * says. 0 for any other executable, which the script answers. */
static int
exec_errno_of (SandboxMemoryDriver *self,
               SandboxCommand      *command)
{
  g_autofree char *relative = workspace_executable (command);
  g_autoptr(GError) error = NULL;
  gboolean executable = FALSE;

  if (relative == NULL ||
      (sandbox_memory_workspace_query_executable (self->workspace, relative, &executable,
                                                  &error) && executable))
    return 0;
  /* A directory, or a file without its x bit: EACCES. */
  if (error == NULL || g_error_matches (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY))
    return EACCES;
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY))
    return ENOTDIR;
  return ENOENT;
}

static SandboxProcess *
sandbox_memory_driver_spawn (SandboxDriver   *driver,
                             SandboxCommand  *command,
                             GCancellable    *cancellable,
                             GError         **error)
{
  SandboxMemoryDriver *self = SANDBOX_MEMORY_DRIVER (driver);
  g_autoptr(SandboxMemoryProcess) process = NULL;
  const SandboxMemoryRule *rule;
  int exec_errno;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  exec_errno = exec_errno_of (self, command);
  rule = sandbox_memory_script_lookup (self->script, sandbox_command_get_executable (command),
                                       sandbox_command_get_args (command));
  process = sandbox_memory_process_new (self, self->script, rule, exec_errno, self->workspace,
                                        command, error);
  if (process == NULL ||
      !sandbox_session_gate_admit (self->gate, SANDBOX_PROCESS (process), error))
    return NULL;

  /* An executable that cannot run never gets as far as the script. */
  if (exec_errno == 0 && rule->fault == SANDBOX_MEMORY_FAULT_SPAWN_FAILURE)
    {
      sandbox_session_gate_withdraw (self->gate, SANDBOX_PROCESS (process));
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "Sandbox process could not start");
      return NULL;
    }

  /* A stop between admission and launch kills a command not started yet:
   * it ends as soon as it is launched (see the process's kill). */
  sandbox_memory_process_launch (process, cancellable);
  return SANDBOX_PROCESS (g_steal_pointer (&process));
}

/**
 * sandbox_memory_driver_check_network_policy:
 * @policy: a network policy
 * @error: return location for a #GError, or %NULL
 *
 * Checks that the memory driver can enforce @policy. It runs nothing, so
 * deny-all holds trivially; it has no gateway and no host network to share,
 * so it refuses the other kinds rather than pretend.
 *
 * Returns: %TRUE for deny-all, otherwise %FALSE with
 *   %SANDBOX_ERROR_UNAVAILABLE naming the refused kind
 */
gboolean
sandbox_memory_driver_check_network_policy (SandboxNetworkPolicy  *policy,
                                            GError               **error)
{
  const char *kind;

  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (policy), FALSE);

  switch (sandbox_network_policy_get_kind (policy))
    {
    case SANDBOX_NETWORK_POLICY_DENY_ALL:
      return TRUE;
    case SANDBOX_NETWORK_POLICY_ALLOW_ALL:
      kind = "allow-all";
      break;
    case SANDBOX_NETWORK_POLICY_ALLOW_LIST:
    default:
      kind = "allow-list";
      break;
    }

  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "The memory driver cannot enforce the %s network policy; it supports only deny-all",
               kind);
  return FALSE;
}

static gboolean
apply_network_policy (SandboxNetworkPolicy  *policy,
                      gpointer               data,
                      GError               **error)
{
  return sandbox_memory_driver_check_network_policy (policy, error);
}

static gboolean
sandbox_memory_driver_set_network_policy (SandboxDriver         *driver,
                                          SandboxNetworkPolicy  *policy,
                                          GCancellable          *cancellable,
                                          GError               **error)
{
  SandboxMemoryDriver *self = SANDBOX_MEMORY_DRIVER (driver);

  return sandbox_session_gate_set_policy (self->gate, policy, apply_network_policy, NULL,
                                          cancellable, error);
}

/**
 * sandbox_memory_driver_stop:
 * @self: a driver
 *
 * Stops the session: refuses every later operation with
 * %SANDBOX_ERROR_STOPPED, kills the live commands and blocks until they have
 * all completed. The workspace is kept. Must not be called on the worker thread,
 * which is what ends the commands.
 */
void
sandbox_memory_driver_stop (SandboxMemoryDriver *self)
{
  g_return_if_fail (SANDBOX_IS_MEMORY_DRIVER (self));

  /* Until every command has completed, not only given back its slot: when
   * stop returns, waiters have their results. */
  sandbox_session_gate_stop (self->gate, NULL, NULL);
}

/**
 * sandbox_memory_driver_run_quiet:
 * @self: a driver
 * @what: what @run does, for the refusal
 * @run: (scope call): called with %NULL, @user_data and @error
 * @user_data: data for @run
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs @run while no command of the session runs and none starts (see
 * sandbox_session_gate_run_quiet()): %SANDBOX_ERROR_BUSY while one runs.
 *
 * Returns: what @run returned
 */
gboolean
sandbox_memory_driver_run_quiet (SandboxMemoryDriver          *self,
                                 const char                   *what,
                                 SandboxSessionGateApplyFunc   run,
                                 gpointer                      user_data,
                                 GCancellable                 *cancellable,
                                 GError                      **error)
{
  return sandbox_session_gate_run_quiet (self->gate, what, run, user_data, cancellable, error);
}

/**
 * sandbox_memory_driver_new:
 * @workspace: the session's workspace
 * @script: how to answer commands
 * @max_concurrent_commands: the admission limit
 * @policy: the session's network policy, which must be deny-all (see
 *   sandbox_memory_driver_check_network_policy())
 *
 * Creates the driver of one live session.
 *
 * Returns: (transfer full): the new driver
 */
SandboxMemoryDriver *
sandbox_memory_driver_new (SandboxMemoryWorkspace *workspace,
                           SandboxMemoryScript    *script,
                           guint                   max_concurrent_commands,
                           SandboxNetworkPolicy   *policy)
{
  SandboxMemoryDriver *self;

  g_return_val_if_fail (workspace != NULL, NULL);
  g_return_val_if_fail (script != NULL, NULL);
  g_return_val_if_fail (max_concurrent_commands > 0, NULL);
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (policy), NULL);

  self = g_object_new (SANDBOX_TYPE_MEMORY_DRIVER, NULL);
  self->workspace = sandbox_memory_workspace_ref (workspace);
  self->script = sandbox_memory_script_ref (script);
  self->gate = sandbox_session_gate_new (max_concurrent_commands, policy);

  return self;
}

static void
sandbox_memory_driver_finalize (GObject *object)
{
  SandboxMemoryDriver *self = SANDBOX_MEMORY_DRIVER (object);

  g_clear_object (&self->gate);
  g_clear_pointer (&self->workspace, sandbox_memory_workspace_unref);
  g_clear_pointer (&self->script, sandbox_memory_script_unref);

  G_OBJECT_CLASS (sandbox_memory_driver_parent_class)->finalize (object);
}

static void
sandbox_memory_driver_iface_init (SandboxDriverInterface *iface)
{
  iface->check_active = sandbox_memory_driver_check_active;
  iface->read_bytes = sandbox_memory_driver_read_bytes;
  iface->write_bytes = sandbox_memory_driver_write_bytes;
  iface->remove_path = sandbox_memory_driver_remove_path;
  iface->spawn = sandbox_memory_driver_spawn;
  iface->set_network_policy = sandbox_memory_driver_set_network_policy;
}

static void
sandbox_memory_driver_class_init (SandboxMemoryDriverClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_memory_driver_finalize;
}

static void
sandbox_memory_driver_class_finalize (SandboxMemoryDriverClass *klass)
{
}

static void
sandbox_memory_driver_init (SandboxMemoryDriver *self)
{
}

/**
 * sandbox_memory_driver_register:
 * @module: the driver module
 *
 * Registers #SandboxMemoryDriver with @module.
 */
void
sandbox_memory_driver_register (GTypeModule *module)
{
  sandbox_memory_driver_register_type (module);
}
