/* sandbox-bubblewrap-process-prepare.c — preparing a command before its launch
 *
 * sandbox_bubblewrap_process_new() makes a SandboxBubblewrapProcess ready
 * to launch: in the session's ready sandbox when it can take the command,
 * else cold, with bwrap's status and the stub's report and handoff channels, its cgroup, its seccomp program and its
 * command line. Launching it and following it to its end is
 * sandbox-bubblewrap-process.c's.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <unistd.h>

#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-limits-private.h"
#include "sandbox-bubblewrap-process-fields-private.h"
#include "sandbox-bubblewrap-seccomp-private.h"
#include "sandbox-bubblewrap-stub-private.h"

/* Its bwrap command line was logged when the ready sandbox started (see
 * log_command_line() in sandbox-bubblewrap-args.c); the command, quoted,
 * at debug level when it is delivered. */
static void
log_ready_command (SandboxCommand *command)
{
  g_autoptr(GString) line = g_string_new ("ready sandbox: --");
  const char * const *args = sandbox_command_get_args (command);
  g_autofree char *executable = g_shell_quote (sandbox_command_get_executable (command));

  g_string_append_printf (line, " %s", executable);
  for (guint i = 0; args != NULL && args[i] != NULL; i++)
    {
      g_autofree char *quoted = g_shell_quote (args[i]);

      g_string_append_printf (line, " %s", quoted);
    }
  g_log_structured ("Sandbox", G_LOG_LEVEL_DEBUG,
                    "SANDBOX_EVENT", "ready-command",
                    "SANDBOX_DRIVER", "bubblewrap",
                    "MESSAGE", "%s", line->str);
}

/**
 * sandbox_bubblewrap_process_new:
 * @input: the session's setup and the validated command
 * @owner: (nullable): the driver, kept alive until the process completes
 * @ready: (transfer full) (nullable): the session's ready sandbox, if it
 *   has one
 * @revision: the policy revision @input was built from
 * @error: return location for a #GError
 *
 * Prepares a command without starting it: in @ready when it can be taken
 * (see sandbox_bubblewrap_ready_take()) and the command's message is small
 * enough, else cold (@ready is then discarded). Must be called in the
 * thread whose thread-default main context receives the output signals.
 *
 * Returns: (transfer full): the process, or %NULL with
 *   %SANDBOX_ERROR_UNAVAILABLE
 */
SandboxBubblewrapProcess *
sandbox_bubblewrap_process_new (const SandboxBubblewrapArgsInput  *input,
                                GObject                           *owner,
                                SandboxBubblewrapReady            *ready,
                                guint64                            revision,
                                GError                           **error)
{
  g_autoptr(SandboxBubblewrapProcess) self = NULL;
  SandboxBubblewrapTaken taken;
  int status_pipe[2];
  int report_pipe[2] = { -1, -1 };
  int handoff[2] = { -1, -1 };
  gboolean proxy = input->policy_kind == SANDBOX_NETWORK_POLICY_ALLOW_LIST && input->gateway != NULL;
  int seccomp_fd = -1;

  self = g_object_new (SANDBOX_TYPE_BUBBLEWRAP_PROCESS,
                       "timeout-ms", sandbox_command_get_timeout_ms (input->command),
                       "max-output-bytes", (guint64) sandbox_command_get_max_output_bytes (input->command),
                       NULL);
  if (!sandbox_bubblewrap_process_open_stdin (self, input->command, error))
    {
      sandbox_bubblewrap_ready_discard (ready);
      return NULL;
    }
  self->owner = owner != NULL ? g_object_ref (owner) : NULL;
  self->gateway = input->gateway != NULL ? g_object_ref (input->gateway) : NULL;
  self->message = sandbox_bubblewrap_stub_message_new (input->command, proxy, error);
  if (self->message == NULL)
    {
      sandbox_bubblewrap_ready_discard (ready);
      return NULL;
    }
  if (input->limits != NULL)
    self->limits = *input->limits;

  /* cgroups are joined before bwrap's exec: a ready sandbox has none; nor
   * has it a terminal, which its stub makes as it starts. */
  if (ready != NULL && (input->cgroup_root != NULL || self->wants_terminal ||
                        g_bytes_get_size (self->message) > SANDBOX_BUBBLEWRAP_READY_MESSAGE_MAX))
    g_clear_pointer (&ready, sandbox_bubblewrap_ready_discard);
  if (ready != NULL && sandbox_bubblewrap_ready_take (ready, revision, &taken))
    {
      log_ready_command (input->command);
      self->taken = taken.launched;
      self->status_fd = taken.status_fd;
      self->control_fd = taken.control_fd;
      if (taken.handoff_fd >= 0 && !sandbox_bubblewrap_process_take_handoff (self, taken.handoff_fd, error))
        return NULL;
      return g_steal_pointer (&self);
    }

  if (!sandbox_bubblewrap_launcher_open_pipe (status_pipe, TRUE, FALSE, error))
    return NULL;
  self->status_fd = status_pipe[0];
  if (input->cgroup_root != NULL)
    {
      self->cgroup = sandbox_bubblewrap_cgroup_new (input->cgroup_root, &self->limits, error);
      if (self->cgroup == NULL)
        {
          close (status_pipe[1]);
          return NULL;
        }
    }
  if (input->seccomp_program != NULL)
    {
      seccomp_fd = sandbox_bubblewrap_seccomp_open_program_fd (input->seccomp_program, error);
      if (seccomp_fd < 0)
        {
          close (status_pipe[1]);
          return NULL;
        }
    }
  /* A cgroup-limited command's stub reports too, for a failed exec; but
   * the host waits for its whole tree, the stub and bwrap included, to
   * leave the cgroup (see read_report()). */
  if (!sandbox_bubblewrap_launcher_open_pipe (report_pipe, TRUE, FALSE, error))
    {
      close (status_pipe[1]);
      sandbox_bubblewrap_fd_close (seccomp_fd);
      return NULL;
    }
  self->report_fd = report_pipe[0];
  if (!sandbox_bubblewrap_stub_handoff_open (handoff, error))
    {
      close (status_pipe[1]);
      close (report_pipe[1]);
      sandbox_bubblewrap_fd_close (seccomp_fd);
      return NULL;
    }
  if (!sandbox_bubblewrap_process_take_handoff (self, handoff[0], error))
    {
      close (status_pipe[1]);
      close (report_pipe[1]);
      close (handoff[1]);
      sandbox_bubblewrap_fd_close (seccomp_fd);
      return NULL;
    }
  self->args = sandbox_bubblewrap_args_new_for_command (input, status_pipe[1], seccomp_fd,
                                                        report_pipe[1], handoff[1], self->message,
                                                        error);
  if (self->args == NULL)
    return NULL;
  sandbox_bubblewrap_args_finish (self->args);
  return g_steal_pointer (&self);
}
