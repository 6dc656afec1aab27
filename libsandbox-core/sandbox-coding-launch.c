/* sandbox-coding-launch.c — a command prepared by the coding tools, bound to a policy revision
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-coding-launch-private.h"
#include "sandbox-error.h"

/**
 * SandboxCodingLaunch:
 *
 * A command prepared by [method@Sandbox.CodingTools.prepare]: the required
 * restrictions held when it was prepared, and it is bound to the network
 * policy revision of that moment. It can be spawned once; a policy change
 * in between makes the spawn fail with %SANDBOX_ERROR_BUSY.
 */
struct _SandboxCodingLaunch
{
  GObject parent_instance;

  SandboxCodingBinding *binding;
  SandboxCommand *command;
  guint64 revision;
  int spawned;   /* atomic */
};

G_DEFINE_FINAL_TYPE (SandboxCodingLaunch, sandbox_coding_launch, G_TYPE_OBJECT)

static void
sandbox_coding_launch_finalize (GObject *object)
{
  SandboxCodingLaunch *self = SANDBOX_CODING_LAUNCH (object);

  g_clear_object (&self->binding);
  g_clear_object (&self->command);

  G_OBJECT_CLASS (sandbox_coding_launch_parent_class)->finalize (object);
}

static void
sandbox_coding_launch_class_init (SandboxCodingLaunchClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_coding_launch_finalize;
}

static void
sandbox_coding_launch_init (SandboxCodingLaunch *self)
{
}

/* Made by the coding tools' prepare, once @command's restrictions are
 * checked against the policy at @revision. */
SandboxCodingLaunch *
sandbox_coding_launch_new (SandboxCodingBinding *binding,
                           SandboxCommand       *command,
                           guint64               revision)
{
  SandboxCodingLaunch *self;

  self = g_object_new (SANDBOX_TYPE_CODING_LAUNCH, NULL);
  self->binding = g_object_ref (binding);
  self->command = sandbox_command_copy (command);
  self->revision = revision;
  return self;
}

/**
 * sandbox_coding_launch_get_revision:
 * @self: a [class@Sandbox.CodingLaunch]
 *
 * Gets the network policy revision the launch was prepared at.
 *
 * Returns: the network policy revision the launch is bound to
 */
guint64
sandbox_coding_launch_get_revision (SandboxCodingLaunch *self)
{
  g_return_val_if_fail (SANDBOX_IS_CODING_LAUNCH (self), 0);
  return self->revision;
}

/**
 * sandbox_coding_launch_spawn:
 * @self: a [class@Sandbox.CodingLaunch]
 * @cancellable: (nullable): cancels the command
 * @error: return location for a #GError
 *
 * Starts the prepared command in the sandbox, under the admission limit
 * shared with direct commands. Fails with %SANDBOX_ERROR_BUSY "Sandbox
 * policy changed after command preparation" if the network policy changed
 * since preparation or the launch was already spawned, with
 * %SANDBOX_ERROR_BUSY when the admission limit is reached, and with
 * %SANDBOX_ERROR_STOPPED after stop. Does not block.
 *
 * Output signals of the process are emitted in the thread-default main
 * context of the calling thread.
 *
 * Returns: (transfer full): the running process, or %NULL with @error set
 */
SandboxProcess *
sandbox_coding_launch_spawn (SandboxCodingLaunch  *self,
                             GCancellable         *cancellable,
                             GError              **error)
{
  g_return_val_if_fail (SANDBOX_IS_CODING_LAUNCH (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!sandbox_coding_binding_check_active (self->binding, error))
    return NULL;
  if (!g_atomic_int_compare_and_exchange (&self->spawned, FALSE, TRUE))
    {
      sandbox_set_error_policy_changed (error);
      return NULL;
    }
  return sandbox_coding_binding_spawn (self->binding, self->command, self->revision,
                                       cancellable, error);
}
