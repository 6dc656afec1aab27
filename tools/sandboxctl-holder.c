/* sandboxctl-holder.c — `sandboxctl hold`: a session's holder
 *
 *   sandboxctl hold (--state FILE | --session ID) [--grace-s N] [--ready-fd FD]
 *
 * Background commands live in the process that spawned them, and every
 * other sandboxctl invocation stops its session when it exits. `bg start`
 * therefore starts this hidden mode once per session, detached: a sandboxctl
 * that resumes the session, holds its lease and serves the interface of
 * sandboxctl-holder.xml on a peer-to-peer D-Bus socket in a directory only
 * its user can enter (sandboxctl-background.c). Later invocations talk to it
 * there. It ends, stopping the session (which ends its background commands)
 * and releasing the lease, on SIGTERM (what `sandboxctl stop` sends the
 * sandboxctl holding a lease), SIGINT or SIGHUP, and on its own once no
 * background command has run and no request come for the grace period.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandboxctl.h"
#include "sandboxctl-holder-dbus.h"

#define HOLDER_GRACE_DEFAULT_S 60
/* How often the holder looks whether its background commands still run. */
#define HOLDER_CHECK_INTERVAL_S 1

typedef struct
{
  SandboxctlContext   *ctx;
  SandboxSession      *session;
  SandboxctlHolder1   *skeleton;
  GDBusServer         *server;
  GPtrArray           *connections;   /* GDBusConnection, one per client */
  GMainLoop           *loop;
  gint64               last_activity; /* monotonic µs of the last request or running command */
  gint64               grace_us;
  guint                idle_check;    /* holder_check_idle()'s source */
} Holder;

/* Every request, and every check that finds a command running, restarts
 * the grace period. */
static void
holder_touch (Holder *holder)
{
  holder->last_activity = g_get_monotonic_time ();
}

static gboolean
holder_check_idle (gpointer user_data)
{
  Holder *holder = user_data;
  g_autoptr(GPtrArray) processes = sandbox_session_list_background (holder->session);

  for (guint i = 0; i < processes->len; i++)
    if (!sandbox_process_is_finished (g_ptr_array_index (processes, i)))
      holder_touch (holder);
  if (g_get_monotonic_time () - holder->last_activity >= holder->grace_us)
    {
      g_debug ("No background command ran for the grace period: the holder ends");
      g_main_loop_quit (holder->loop);
      holder->idle_check = 0;
      return G_SOURCE_REMOVE;
    }
  return G_SOURCE_CONTINUE;
}

/* A command from SpawnBackground's and Run's arguments. */
static SandboxCommand *
command_from_request (const char * const  *argv,
                      GVariant            *options,
                      GError             **error)
{
  g_autoptr(SandboxCommand) command = NULL;
  g_autofree const char **environment = NULL;
  const char *cwd = NULL;
  guint32 timeout_ms = 0;
  guint64 max_output_bytes = 0;

  if (argv[0] == NULL)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID, "No command given");
      return NULL;
    }
  command = sandbox_command_new (argv[0]);
  sandbox_command_set_args (command, argv + 1);
  if (g_variant_lookup (options, "cwd", "&s", &cwd))
    sandbox_command_set_cwd (command, cwd);
  if (g_variant_lookup (options, "timeout-ms", "u", &timeout_ms) && timeout_ms > 0)
    sandbox_command_set_timeout_ms (command, timeout_ms);
  if (g_variant_lookup (options, "max-output-bytes", "t", &max_output_bytes) &&
      max_output_bytes > 0)
    sandbox_command_set_max_output_bytes (command, (gsize) max_output_bytes);
  if (g_variant_lookup (options, "env", "^a&s", &environment))
    for (guint i = 0; environment[i] != NULL; i++)
      {
        const char *equals = strchr (environment[i], '=');
        g_autofree char *key = NULL;

        if (equals == NULL || equals == environment[i])
          {
            g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                         "An environment entry must be KEY=VALUE, not “%s”", environment[i]);
            return NULL;
          }
        key = g_strndup (environment[i], equals - environment[i]);
        sandbox_command_setenv (command, key, equals + 1);
      }
  if (!sandbox_command_validate (command, error))
    return NULL;
  return g_steal_pointer (&command);
}

static SandboxProcess *
lookup_or_fail (Holder                *holder,
                GDBusMethodInvocation *invocation,
                const char            *id)
{
  SandboxProcess *process = sandbox_session_lookup_background (holder->session, id);

  if (process == NULL)
    g_dbus_method_invocation_return_error (invocation, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                                           "No background command “%s” in this session", id);
  return process;
}

/* A finished command's exit status; -1 while it runs or when it ended in
 * an error instead of a status. */
static int
finished_status (SandboxProcess *process)
{
  g_autoptr(SandboxResult) result = NULL;

  if (!sandbox_process_is_finished (process))
    return -1;
  /* Returns at once: the command has completed. */
  result = sandbox_process_wait (process, NULL, NULL);
  return result != NULL ? sandbox_result_get_exit_status (result) : -1;
}

/* Spawns the command of a SpawnBackground or Run request, or replies with
 * the error and returns NULL. */
static SandboxProcess *
spawn_request (Holder                *holder,
               GDBusMethodInvocation *invocation,
               const char * const    *argv,
               GVariant              *options,
               gboolean               background)
{
  g_autoptr(SandboxCommand) command = NULL;
  SandboxProcess *process = NULL;
  GError *error = NULL;

  holder_touch (holder);
  command = command_from_request (argv, options, &error);
  if (command != NULL)
    process = background
              ? sandbox_session_spawn_background (holder->session, command, &error)
              : sandbox_session_spawn (holder->session, command, holder->ctx->cancellable,
                                       &error);
  if (process == NULL)
    g_dbus_method_invocation_take_error (invocation, error);
  return process;
}

static gboolean
on_spawn_background (SandboxctlHolder1     *skeleton,
                     GDBusMethodInvocation *invocation,
                     const char * const    *argv,
                     GVariant              *options,
                     gpointer               user_data)
{
  g_autoptr(SandboxProcess) process = spawn_request (user_data, invocation, argv, options, TRUE);

  if (process == NULL)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  g_debug ("Started background command %s (%s)", sandbox_process_get_background_id (process),
           argv[0]);
  sandboxctl_holder1_complete_spawn_background (skeleton, invocation,
                                                sandbox_process_get_background_id (process));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_list (SandboxctlHolder1     *skeleton,
         GDBusMethodInvocation *invocation,
         gpointer               user_data)
{
  Holder *holder = user_data;
  g_autoptr(GPtrArray) processes = sandbox_session_list_background (holder->session);
  GVariantBuilder builder;

  holder_touch (holder);
  g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(sasxbi)"));
  for (guint i = 0; i < processes->len; i++)
    {
      SandboxProcess *process = g_ptr_array_index (processes, i);
      GDateTime *start = sandbox_process_get_start_time (process);

      g_variant_builder_add (&builder, "(s^asxbi)",
                             sandbox_process_get_background_id (process),
                             sandbox_process_get_argv (process),
                             start != NULL ? g_date_time_to_unix (start) * G_USEC_PER_SEC +
                                             g_date_time_get_microsecond (start)
                                           : (gint64) 0,
                             sandbox_process_is_finished (process),
                             finished_status (process));
    }
  sandboxctl_holder1_complete_list (skeleton, invocation, g_variant_builder_end (&builder));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_read_output (SandboxctlHolder1     *skeleton,
                GDBusMethodInvocation *invocation,
                const char            *id,
                guint64                from,
                gpointer               user_data)
{
  Holder *holder = user_data;
  g_autoptr(SandboxProcess) process = lookup_or_fail (holder, invocation, id);
  g_autoptr(GBytes) data = NULL;
  guint64 next = 0, skipped = 0;
  gboolean finished;

  holder_touch (holder);
  if (process == NULL)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  /* Whether it finished before the read: then the read holds its last bytes. */
  finished = sandbox_process_is_finished (process);
  data = sandbox_process_read_output (process, from, &next, &skipped);
  sandboxctl_holder1_complete_read_output (skeleton, invocation,
                                           g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING,
                                                                     data, TRUE),
                                           next, skipped, finished, finished_status (process));
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_signal (SandboxctlHolder1     *skeleton,
           GDBusMethodInvocation *invocation,
           const char            *id,
           int                    signum,
           gpointer               user_data)
{
  Holder *holder = user_data;
  g_autoptr(SandboxProcess) process = lookup_or_fail (holder, invocation, id);
  GError *error = NULL;

  holder_touch (holder);
  if (process == NULL)
    return G_DBUS_METHOD_INVOCATION_HANDLED;
  if (!sandbox_process_send_signal (process, signum, &error))
    g_dbus_method_invocation_take_error (invocation, error);
  else
    sandboxctl_holder1_complete_signal (skeleton, invocation);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

/* Outlives the holder's loop: the session's stop completes the waits left. */
typedef struct
{
  SandboxctlHolder1     *skeleton;
  GDBusMethodInvocation *invocation;
  gboolean               run;       /* Run's reply, else Wait's */
} PendingWait;

static void
on_waited (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  PendingWait *pending = user_data;
  g_autoptr(SandboxResult) process_result = NULL;
  GError *error = NULL;

  process_result = sandbox_process_wait_finish (SANDBOX_PROCESS (source), result, &error);
  if (process_result == NULL)
    g_dbus_method_invocation_take_error (pending->invocation, error);
  else if (!pending->run)
    sandboxctl_holder1_complete_wait (pending->skeleton, pending->invocation,
                                      sandbox_result_get_exit_status (process_result));
  else
    sandboxctl_holder1_complete_run (
      pending->skeleton, pending->invocation,
      sandbox_result_get_exit_status (process_result),
      g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING,
                                sandbox_result_get_stdout_bytes (process_result), TRUE),
      g_variant_new_from_bytes (G_VARIANT_TYPE_BYTESTRING,
                                sandbox_result_get_stderr_bytes (process_result), TRUE),
      sandbox_result_get_exec_errno (process_result));
  g_object_unref (pending->skeleton);
  g_free (pending);
}

static void
wait_and_reply (Holder                *holder,
                SandboxProcess        *process,
                GDBusMethodInvocation *invocation,
                gboolean               run)
{
  PendingWait *pending = g_new0 (PendingWait, 1);

  pending->skeleton = g_object_ref (holder->skeleton);
  pending->invocation = invocation;
  pending->run = run;
  /* The session's end completes every wait: stopping it ends its commands. */
  sandbox_process_wait_async (process, NULL, on_waited, pending);
}

static gboolean
on_wait (SandboxctlHolder1     *skeleton,
         GDBusMethodInvocation *invocation,
         const char            *id,
         gpointer               user_data)
{
  Holder *holder = user_data;
  g_autoptr(SandboxProcess) process = lookup_or_fail (holder, invocation, id);

  holder_touch (holder);
  if (process != NULL)
    wait_and_reply (holder, process, invocation, FALSE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static gboolean
on_run (SandboxctlHolder1     *skeleton,
        GDBusMethodInvocation *invocation,
        const char * const    *argv,
        GVariant              *options,
        gpointer               user_data)
{
  g_autoptr(SandboxProcess) process = spawn_request (user_data, invocation, argv, options, FALSE);

  if (process != NULL)
    wait_and_reply (user_data, process, invocation, TRUE);
  return G_DBUS_METHOD_INVOCATION_HANDLED;
}

static void
on_connection_closed (GDBusConnection *connection,
                      gboolean         remote_peer_vanished,
                      GError          *error,
                      gpointer         user_data)
{
  Holder *holder = user_data;

  g_dbus_interface_skeleton_unexport_from_connection (
    G_DBUS_INTERFACE_SKELETON (holder->skeleton), connection);
  g_ptr_array_remove (holder->connections, connection);
}

/* GDBusServer has checked that the peer runs as our user
 * (G_DBUS_SERVER_FLAGS_AUTHENTICATION_REQUIRE_SAME_USER) before this. */
static gboolean
on_new_connection (GDBusServer     *server,
                   GDBusConnection *connection,
                   gpointer         user_data)
{
  Holder *holder = user_data;
  g_autoptr(GError) error = NULL;

  holder_touch (holder);
  if (!g_dbus_interface_skeleton_export (G_DBUS_INTERFACE_SKELETON (holder->skeleton),
                                         connection, SANDBOXCTL_HOLDER_OBJECT_PATH, &error))
    {
      g_warning ("Could not serve a client: %s", error->message);
      return FALSE;
    }
  g_ptr_array_add (holder->connections, g_object_ref (connection));
  g_signal_connect (connection, "closed", G_CALLBACK (on_connection_closed), holder);
  return TRUE;
}

/* Makes the socket's place ready: the lease is ours, so a socket left there
 * is a dead holder's and goes. Anything but a socket of ours is refused. */
static gboolean
clear_stale_socket (int          dir_fd,
                    const char  *name,
                    GError     **error)
{
  g_autoptr(GError) local_error = NULL;

  if (!sandboxctl_holder_check_socket (dir_fd, name, &local_error))
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  g_debug ("Replacing a dead holder's socket");
  if (unlinkat (dir_fd, name, 0) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not remove a dead holder's socket: %s", g_strerror (saved_errno));
      return FALSE;
    }
  return TRUE;
}

static gboolean
holder_serve (Holder      *holder,
              int          dir_fd,
              GError     **error)
{
  const char *session_id = sandbox_session_get_id (holder->session);
  g_autofree char *address = NULL;
  g_autofree char *guid = g_dbus_generate_guid ();

  if (!clear_stale_socket (dir_fd, session_id, error))
    return FALSE;
  address = sandboxctl_holder_address (dir_fd, session_id);
  holder->server = g_dbus_server_new_sync (address,
                                           G_DBUS_SERVER_FLAGS_AUTHENTICATION_REQUIRE_SAME_USER,
                                           guid, NULL, NULL, error);
  if (holder->server == NULL)
    return FALSE;
  /* The directory alone keeps others out; the socket's mode says so too. */
  if (fchmodat (dir_fd, session_id, 0600, 0) != 0)
    g_debug ("Could not chmod the holder socket: %s", g_strerror (errno));
  g_signal_connect (holder->server, "new-connection", G_CALLBACK (on_new_connection), holder);
  g_dbus_server_start (holder->server);
  return TRUE;
}

/* Tells the sandboxctl that started us whether we serve: an empty message
 * when we do, else the error as data, (domain, code, message). */
static void
report_ready (int           ready_fd,
              const GError *error)
{
  g_autoptr(GVariant) report = NULL;
  g_autoptr(GError) write_error = NULL;

  if (ready_fd < 0)
    return;
  if (error != NULL)
    {
      report = g_variant_ref_sink (g_variant_new ("(sis)", g_quark_to_string (error->domain),
                                                  error->code, error->message));
      if (!sandboxctl_write_all (ready_fd, g_variant_get_data (report),
                                 g_variant_get_size (report), &write_error))
        g_debug ("%s", write_error->message);
    }
  close (ready_fd);
}

static void
on_cancelled (GCancellable *cancellable,
              gpointer      user_data)
{
  g_main_loop_quit (user_data);
}

int
sandboxctl_cmd_hold (SandboxctlContext   *ctx,
                     char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *session_entries = sandboxctl_session_entries (&session_options);
  int grace_s = HOLDER_GRACE_DEFAULT_S;
  int ready_fd = -1;
  const GOptionEntry entries[] = {
    { "grace-s", 0, 0, G_OPTION_ARG_INT, &grace_s,
      "Seconds to stay after the last background command ended (default 60)", "N" },
    { "ready-fd", 0, 0, G_OPTION_ARG_INT, &ready_fd,
      "Report on FD whether the holder serves, then close it", "FD" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "Hold a session for its background commands (started by "
                                   "“bg start”, not by hand).", entries, TRUE);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  Holder holder = { 0 };
  g_autofree char *log_name = NULL;
  int dir_fd = -1;
  int status = SANDBOXCTL_EXIT_OK;
  gulong cancelled_id;

  g_option_group_add_entries (g_option_context_get_main_group (context), session_entries);
  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (grace_s < 0)
    return sandboxctl_usage_error (ctx, "--grace-s must not be negative");

  handle = sandboxctl_session_resume (ctx, &session_options, NULL, &error);
  if (handle != NULL)
    dir_fd = sandboxctl_holder_open_dir (TRUE, &error);
  holder.ctx = ctx;
  holder.loop = loop;
  holder.grace_us = (gint64) grace_s * G_USEC_PER_SEC;
  holder.connections = g_ptr_array_new_with_free_func (g_object_unref);
  holder.skeleton = sandboxctl_holder1_skeleton_new ();
  if (handle != NULL)
    holder.session = sandbox_handle_get_session (handle);
  g_signal_connect (holder.skeleton, "handle-spawn-background",
                    G_CALLBACK (on_spawn_background), &holder);
  g_signal_connect (holder.skeleton, "handle-list", G_CALLBACK (on_list), &holder);
  g_signal_connect (holder.skeleton, "handle-read-output", G_CALLBACK (on_read_output), &holder);
  g_signal_connect (holder.skeleton, "handle-signal", G_CALLBACK (on_signal), &holder);
  g_signal_connect (holder.skeleton, "handle-wait", G_CALLBACK (on_wait), &holder);
  g_signal_connect (holder.skeleton, "handle-run", G_CALLBACK (on_run), &holder);

  if (dir_fd < 0 || !holder_serve (&holder, dir_fd, &error))
    {
      report_ready (ready_fd, error);
      status = sandboxctl_report_error (ctx, error);
    }
  else
    {
      report_ready (ready_fd, NULL);
      holder_touch (&holder);
      holder.idle_check = g_timeout_add_seconds (HOLDER_CHECK_INTERVAL_S, holder_check_idle,
                                                 &holder);
      /* sandboxctl_session_resume() made SIGTERM, SIGINT and SIGHUP cancel. */
      cancelled_id = g_cancellable_connect (ctx->cancellable, G_CALLBACK (on_cancelled),
                                            loop, NULL);
      g_main_loop_run (loop);
      g_cancellable_disconnect (ctx->cancellable, cancelled_id);
      /* Stopping the session below may iterate the main context: nothing
       * that points at @holder, on our stack, may run then. */
      g_clear_handle_id (&holder.idle_check, g_source_remove);
      g_debug ("The holder of session %s ends", sandbox_session_get_id (holder.session));
      g_dbus_server_stop (holder.server);
      /* The socket goes before the lease: no client reaches a holder that
       * left. Its log (our stderr) goes too: nothing of it outlives it. */
      unlinkat (dir_fd, sandbox_session_get_id (holder.session), 0);
      log_name = g_strconcat (sandbox_session_get_id (holder.session), ".log", NULL);
      unlinkat (dir_fd, log_name, 0);
    }

  for (guint i = 0; i < holder.connections->len; i++)
    {
      GDBusConnection *connection = g_ptr_array_index (holder.connections, i);

      g_signal_handlers_disconnect_by_data (connection, &holder);
      g_dbus_interface_skeleton_unexport_from_connection (
        G_DBUS_INTERFACE_SKELETON (holder.skeleton), connection);
    }
  if (holder.server != NULL)
    g_signal_handlers_disconnect_by_data (holder.server, &holder);
  g_signal_handlers_disconnect_by_data (holder.skeleton, &holder);
  g_clear_pointer (&holder.connections, g_ptr_array_unref);
  g_clear_object (&holder.server);
  g_clear_object (&holder.skeleton);
  if (dir_fd >= 0)
    close (dir_fd);
  if (handle == NULL)
    return status;
  /* Stopping the session ends its background commands and releases the lease. */
  return sandboxctl_session_finish (ctx, handle, status);
}
