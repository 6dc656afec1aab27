/* sandboxctl-snapshot.c — snapshot, restore and fork
 *
 *   sandboxctl snapshot (--state FILE | --session ID)
 *   sandboxctl restore  (--state FILE | --session ID) KEY
 *   sandboxctl fork     (--state FILE | --session ID | --template KEY|NAME) [-n N]
 *
 * A snapshot is a session's workspace frozen as a template key
 * (sandbox_handle_snapshot()); fork creates sessions from one, as create
 * does from a template; restore resets a session to one in place
 * (sandbox_handle_restore()). Like the other session commands, snapshot
 * and restore hold the session's lease only while they work: a session
 * another sandboxctl holds (a long run, or the holder of its background
 * commands) is SANDBOX_BUSY, naming the owner, as write is. Only files are
 * snapshotted, never processes. See docs/sandboxctl.md.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <glib/gprintf.h>

#include "sandboxctl.h"

/* The most sessions one fork creates. */
#define FORK_COUNT_MAX 1000

/* What snapshot and restore print: with --json `{"sessionId": …, @member:
 * @key}`, else the text of @format. */
static void G_GNUC_PRINTF (5, 6)
print_done (SandboxctlContext *ctx,
            SandboxHandle     *handle,
            const char        *member,
            const char        *key,
            const char        *format,
            ...)
{
  va_list args;

  if (ctx->json)
    {
      g_autoptr(JsonObject) object = json_object_new ();

      json_object_set_string_member (object, "sessionId",
                                     sandbox_session_get_id (sandbox_handle_get_session (handle)));
      json_object_set_string_member (object, member, key);
      sandboxctl_print_json_object (object);
      return;
    }
  va_start (args, format);
  g_vprintf (format, args);
  va_end (args);
}

int
sandboxctl_cmd_snapshot (SandboxctlContext   *ctx,
                         char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *entries = sandboxctl_session_entries (&session_options);
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "Freeze the session's workspace as an immutable snapshot and "
                                   "print its key, a template key: create and fork take it, "
                                   "restore resets the session to it. Files only: processes are "
                                   "not snapshotted. Refused (SANDBOX_BUSY) while a command of "
                                   "the session runs.",
                                   entries, FALSE);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  int status = sandboxctl_resume_for_command (ctx, context, argv, 0, &session_options, &handle);

  if (handle == NULL)
    return status;

  key = sandbox_handle_snapshot (handle, ctx->cancellable, &error);
  if (key == NULL)
    status = sandboxctl_report_error (ctx, error);
  else
    print_done (ctx, handle, "snapshotKey", key, "%s\n", key);

  return sandboxctl_session_finish (ctx, handle, status);
}

/* A restore further along the session's line moves it onto the key, and
 * its state with it (sandbox_handle_restore()): --state's file follows,
 * written whole (a temporary renamed over it), only when it changed. */
static gboolean
update_state_file (const char     *path,
                   SandboxHandle  *handle,
                   GError        **error)
{
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (handle, error);
  g_autofree char *saved = NULL;
  g_autofree char *compact = NULL;
  g_autofree char *json = NULL;
  g_autoptr(SandboxState) old = NULL;

  if (state == NULL)
    return FALSE;
  if (g_file_get_contents (path, &saved, NULL, NULL) &&
      (old = sandbox_state_new_from_json (saved, NULL)) != NULL &&
      sandbox_state_equal (old, state))
    return TRUE;
  compact = sandbox_state_to_json (state);
  json = g_strconcat (compact, "\n", NULL);
  return g_file_set_contents (path, json, -1, error);
}

int
sandboxctl_cmd_restore (SandboxctlContext   *ctx,
                        char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *entries = sandboxctl_session_entries (&session_options);
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, "KEY",
                                   "Reset the session's workspace, in place, to KEY: its "
                                   "template or any snapshot of its line. The session keeps its "
                                   "id; what changed since is gone; a --state file is rewritten "
                                   "when the session moves onto another key. Refused "
                                   "(SANDBOX_BUSY) while a command of the session runs.",
                                   entries, FALSE);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  const char *key;
  int status = sandboxctl_resume_for_command (ctx, context, argv, 1, &session_options, &handle);

  if (handle == NULL)
    return status;
  key = (*argv)[1];

  if (!sandbox_handle_restore (handle, key, ctx->cancellable, &error) ||
      (session_options.state_file != NULL &&
       !update_state_file (session_options.state_file, handle, &error)))
    status = sandboxctl_report_error (ctx, error);
  else
    print_done (ctx, handle, "restoredTo", key, "restored: session %s to %s\n",
                sandbox_session_get_id (sandbox_handle_get_session (handle)), key);

  return sandboxctl_session_finish (ctx, handle, status);
}

/* The key fork creates from: --template's, or a snapshot of the session,
 * taken under its lease, which is released again before the forks. */
static char *
fork_source_key (SandboxctlContext         *ctx,
                 SandboxctlSessionOptions  *session_options,
                 const char                *template_arg,
                 SandboxBackend            *backend,
                 GError                   **error)
{
  g_autoptr(SandboxHandle) handle = NULL;
  g_autofree char *key = NULL;

  if (template_arg != NULL)
    return sandboxctl_resolve_template (ctx, backend, template_arg, error);

  handle = sandboxctl_session_resume (ctx, session_options, NULL, error);
  if (handle == NULL)
    return NULL;
  key = sandbox_handle_snapshot (handle, ctx->cancellable, error);
  if (key == NULL)
    {
      sandbox_handle_stop (handle, NULL, NULL);
      return NULL;
    }
  if (!sandbox_handle_stop (handle, NULL, error))
    return NULL;
  return g_steal_pointer (&key);
}

/* Deletes the sessions a failed fork created before it failed: a fork
 * makes all N or none. */
static void
delete_forks (GPtrArray *handles)
{
  for (guint i = 0; i < handles->len; i++)
    {
      SandboxHandle *handle = g_ptr_array_index (handles, i);
      g_autoptr(GError) error = NULL;

      if (!sandbox_handle_delete (handle, NULL, &error))
        g_printerr ("sandboxctl: also, deleting the fork %s failed: %s\n",
                    sandbox_session_get_id (sandbox_handle_get_session (handle)),
                    error->message);
    }
}

int
sandboxctl_cmd_fork (SandboxctlContext   *ctx,
                     char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *session_entries = sandboxctl_session_entries (&session_options);
  g_autofree char *template_arg = NULL;
  int count = 1;
  const GOptionEntry entries[] = {
    { "template", 't', 0, G_OPTION_ARG_STRING, &template_arg,
      "Fork a snapshot (or template): its key, or the name a template was prewarmed with",
      "KEY|NAME" },
    { "count", 'n', 0, G_OPTION_ARG_INT, &count,
      "How many sessions to create (1…1000, default 1)", "N" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "Create N sessions from a snapshot key (--template), or from a "
                                   "session (--state or --session), which is snapshotted once "
                                   "first. Each has its own id, lease and changes; print their "
                                   "state JSON, one line each, as create does. All or none: "
                                   "when one fails, those already made are deleted. Processes "
                                   "do not survive a fork.",
                                   entries, TRUE);
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GPtrArray) handles = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  guint sources;

  g_option_group_add_entries (g_option_context_get_main_group (context), session_entries);
  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (!sandboxctl_check_arguments (ctx, *argv, 0))
    return SANDBOXCTL_EXIT_USAGE;
  sources = (template_arg != NULL) + (session_options.state_file != NULL) +
            (session_options.session_id != NULL);
  if (sources != 1)
    return sandboxctl_usage_error (ctx, "give what to fork as one of --template KEY|NAME, "
                                   "--state FILE or --session ID");
  if (count < 1 || count > FORK_COUNT_MAX)
    return sandboxctl_usage_error (ctx, "--count must be 1…%d", FORK_COUNT_MAX);

  policy = sandboxctl_network_build_policy (&ctx->network, &error);
  if (policy == NULL)
    return sandboxctl_report_error (ctx, error);
  backend = sandboxctl_open_backend (ctx, &error);
  if (backend == NULL)
    return sandboxctl_report_error (ctx, error);
  sandboxctl_install_signal_handlers (ctx);
  key = fork_source_key (ctx, &session_options, template_arg, backend, &error);
  if (key == NULL)
    return sandboxctl_report_error (ctx, error);

  for (int i = 0; i < count; i++)
    {
      SandboxHandle *handle = sandbox_backend_create (backend, key, NULL, policy,
                                                      ctx->cancellable, &error);

      if (handle == NULL)
        break;
      g_ptr_array_add (handles, handle);
    }
  if (error != NULL)
    {
      int status = sandboxctl_report_error (ctx, error);

      delete_forks (handles);
      return status;
    }

  /* Printed only once all exist, each released as it is printed. */
  for (guint i = 0; i < handles->len; i++)
    {
      SandboxHandle *handle = g_ptr_array_index (handles, i);
      int status = SANDBOXCTL_EXIT_OK;

      if (!sandboxctl_print_created (handle, NULL, &error))
        status = sandboxctl_report_error (ctx, error);
      status = sandboxctl_session_finish (ctx, handle, status);
      if (status != SANDBOXCTL_EXIT_OK)
        return status;
    }
  return SANDBOXCTL_EXIT_OK;
}
