/* sandboxctl-session.c — create, read, write, rm, stop and delete
 *
 * A session is addressed by the state JSON `create` printed (--state FILE)
 * or by its id (--session ID), whose saved state the backend looks up in
 * its store (sandbox_backend_lookup_state()). Every
 * command that resumes a session holds its exclusive lease only while it
 * works and stops the session (releasing the lease) before it exits.
 * Policies are never stored: each command takes --network again.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gunixinputstream.h>

#include "sandboxctl.h"

/* How long `stop` waits for a running sandboxctl to release a session. */
#define STOP_WAIT_DEFAULT_MS 10000
#define STOP_POLL_INTERVAL_US (50 * 1000)

void
sandboxctl_session_options_clear (SandboxctlSessionOptions *options)
{
  g_clear_pointer (&options->state_file, g_free);
  g_clear_pointer (&options->session_id, g_free);
}

/**
 * sandboxctl_session_entries:
 * @options: where the parsed values go
 *
 * Returns: (transfer full): --state and --session
 */
GOptionEntry *
sandboxctl_session_entries (SandboxctlSessionOptions *options)
{
  GOptionEntry entries[] = {
    { "state", 's', 0, G_OPTION_ARG_FILENAME, &options->state_file,
      "The session's state JSON, as printed by create (- for stdin)", "FILE" },
    { "session", 'S', 0, G_OPTION_ARG_STRING, &options->session_id,
      "The session's id (looked up in the state directory)", "ID" },
    G_OPTION_ENTRY_NULL
  };

  return g_memdup2 (entries, sizeof entries);
}

/* Session ids have the form of template keys: lowercase hex SHA-256. */
static gboolean
is_session_id (const char *id)
{
  return sandbox_template_key_is_valid (id);
}

static char *
read_state_file (const char  *path,
                 GError     **error)
{
  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GOutputStream) output = NULL;
  char zero = '\0';

  if (!g_str_equal (path, "-"))
    {
      char *contents = NULL;

      if (!g_file_get_contents (path, &contents, NULL, error))
        return NULL;
      return contents;
    }

  input = g_unix_input_stream_new (STDIN_FILENO, FALSE);
  output = g_memory_output_stream_new_resizable ();
  if (g_output_stream_splice (output, input, G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE, NULL, error) < 0 ||
      !g_output_stream_write_all (output, &zero, 1, NULL, NULL, error) ||
      !g_output_stream_close (output, NULL, error))
    return NULL;
  return g_memory_output_stream_steal_data (G_MEMORY_OUTPUT_STREAM (output));
}

/**
 * sandboxctl_session_load_state:
 * @options: --state or --session
 * @backend: the backend the session belongs to
 * @error: return location for a #GError
 *
 * Loads the session's reconnect descriptor. A malformed one is
 * %SANDBOX_ERROR_INVALID; an id with no saved state %SANDBOX_ERROR_NOT_FOUND.
 *
 * Returns: (transfer full): the state, or %NULL with @error set
 */
SandboxState *
sandboxctl_session_load_state (SandboxctlSessionOptions  *options,
                               SandboxBackend            *backend,
                               GError                   **error)
{
  g_autofree char *json = NULL;

  if ((options->state_file == NULL) == (options->session_id == NULL))
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "Give the session as either --state FILE or --session ID");
      return NULL;
    }

  if (options->session_id != NULL)
    {
      if (!is_session_id (options->session_id))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "“%s” is not a session id (64 lowercase hex digits)",
                       options->session_id);
          return NULL;
        }
      return sandbox_backend_lookup_state (backend, options->session_id, NULL, error);
    }

  json = read_state_file (options->state_file, error);
  if (json == NULL)
    return NULL;
  return sandbox_state_new_from_json (json, error);
}

static void explain_busy (SandboxBackend  *backend,
                          const char      *session_id,
                          GError         **error);

/**
 * sandboxctl_session_resume:
 * @ctx: the invocation, with its network options
 * @options: --state or --session
 * @backend_out: (out): the backend
 * @error: return location for a #GError
 *
 * Opens the backend and resumes the session under the policy of the
 * network options, taking its lease.
 *
 * Returns: (transfer full): the live handle, or %NULL with @error set
 */
SandboxHandle *
sandboxctl_session_resume (SandboxctlContext         *ctx,
                           SandboxctlSessionOptions  *options,
                           SandboxBackend           **backend_out,
                           GError                   **error)
{
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  SandboxHandle *handle;

  policy = sandboxctl_network_build_policy (&ctx->network, error);
  if (policy == NULL)
    return NULL;
  backend = sandboxctl_open_backend (ctx, error);
  if (backend == NULL)
    return NULL;
  state = sandboxctl_session_load_state (options, backend, error);
  if (state == NULL)
    return NULL;

  sandboxctl_install_signal_handlers (ctx);
  handle = sandbox_backend_resume (backend, state, policy, ctx->cancellable, error);
  if (handle == NULL)
    explain_busy (backend, sandbox_state_get_session_id (state), error);
  if (handle != NULL && backend_out != NULL)
    *backend_out = g_steal_pointer (&backend);
  return handle;
}

/**
 * sandboxctl_session_finish:
 * @ctx: the invocation
 * @handle: a live handle
 * @status: the command's exit status so far
 *
 * Stops @handle, releasing the lease (a no-op after delete).
 *
 * Returns: @status, or the stop failure's exit code
 */
int
sandboxctl_session_finish (SandboxctlContext *ctx,
                           SandboxHandle     *handle,
                           int                status)
{
  g_autoptr(GError) error = NULL;

  if (sandbox_handle_stop (handle, NULL, &error))
    return status;
  if (status == SANDBOXCTL_EXIT_OK)
    return sandboxctl_report_error (ctx, error);
  g_printerr ("sandboxctl: also, stopping the session failed: %s\n", error->message);
  return status;
}

/**
 * sandboxctl_check_arguments:
 * @ctx: the invocation
 * @argv: the arguments left after the options
 * @expected: how many operands the command takes
 *
 * Reports a usage error unless exactly @expected operands are left.
 *
 * Returns: whether there are
 */
gboolean
sandboxctl_check_arguments (SandboxctlContext *ctx,
                            char             **argv,
                            guint              expected)
{
  guint n = g_strv_length (argv) - 1;

  if (n < expected)
    {
      sandboxctl_usage_error (ctx, "missing argument");
      return FALSE;
    }
  if (n > expected)
    {
      sandboxctl_usage_error (ctx, "unexpected argument “%s”", argv[expected + 1]);
      return FALSE;
    }
  return TRUE;
}

/* The start of every command that works in a session: parses the options,
 * checks for @n_arguments operands and resumes the session into *@handle.
 * Returns the exit status to leave with, or SANDBOXCTL_EXIT_OK to go on. */
int
sandboxctl_resume_for_command (SandboxctlContext         *ctx,
                               GOptionContext            *context,
                               char                    ***argv,
                               guint                      n_arguments,
                               SandboxctlSessionOptions  *options,
                               SandboxHandle            **handle)
{
  g_autoptr(GError) error = NULL;

  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (!sandboxctl_check_arguments (ctx, *argv, n_arguments))
    return SANDBOXCTL_EXIT_USAGE;
  *handle = sandboxctl_session_resume (ctx, options, NULL, &error);
  if (*handle == NULL)
    return sandboxctl_report_error (ctx, error);
  return SANDBOXCTL_EXIT_OK;
}

/* sandboxctl create ----------------------------------------------------- */

static gboolean
write_private_file (const char  *path,
                    const char  *contents,
                    GError     **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileOutputStream) stream =
    g_file_replace (file, NULL, FALSE, G_FILE_CREATE_PRIVATE | G_FILE_CREATE_REPLACE_DESTINATION,
                    NULL, error);

  if (stream == NULL)
    return FALSE;
  return g_output_stream_write_all (G_OUTPUT_STREAM (stream), contents, strlen (contents),
                                    NULL, NULL, error) &&
         g_output_stream_close (G_OUTPUT_STREAM (stream), NULL, error);
}

/**
 * sandboxctl_print_created:
 * @handle: a session just created
 * @output: (nullable): a file to save the state JSON to as well
 * @error: return location for a #GError
 *
 * Prints the new session's state JSON on a line of its own (what create
 * and fork print), after saving it to @output with mode 0600.
 *
 * Returns: whether it was printed
 */
gboolean
sandboxctl_print_created (SandboxHandle  *handle,
                          const char     *output,
                          GError        **error)
{
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (handle, error);
  g_autofree char *json = NULL;

  if (state == NULL)
    return FALSE;
  json = sandbox_state_to_json (state);
  if (output != NULL && !write_private_file (output, json, error))
    return FALSE;
  g_print ("%s\n", json);
  return TRUE;
}

int
sandboxctl_cmd_create (SandboxctlContext   *ctx,
                       char              ***argv)
{
  g_autofree char *template_arg = NULL;
  g_autofree char *template_key = NULL;
  g_autofree char *output = NULL;
  const GOptionEntry entries[] = {
    { "template", 't', 0, G_OPTION_ARG_STRING, &template_arg,
      "A stored template: its key (as printed by prewarm) or the name it was prewarmed with",
      "KEY|NAME" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &output,
      "Also save the state JSON to FILE (mode 0600)", "FILE" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "Create a session from a stored template, prove its isolation, "
                                   "print its state JSON and release it. Pass the JSON to the "
                                   "other commands with --state.", entries, TRUE);
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  SandboxctlProgressBar bar;
  int status = SANDBOXCTL_EXIT_OK;

  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (!sandboxctl_check_arguments (ctx, *argv, 0))
    return SANDBOXCTL_EXIT_USAGE;
  if (template_arg == NULL)
    return sandboxctl_usage_error (ctx, "--template KEY|NAME is required");

  policy = sandboxctl_network_build_policy (&ctx->network, &error);
  if (policy == NULL)
    return sandboxctl_report_error (ctx, error);
  backend = sandboxctl_open_backend (ctx, &error);
  if (backend != NULL)
    template_key = sandboxctl_resolve_template (ctx, backend, template_arg, &error);
  if (template_key == NULL)
    return sandboxctl_report_error (ctx, error);

  sandboxctl_install_signal_handlers (ctx);
  /* A backend that copies the template shows how far it is. */
  sandboxctl_progress_bar_start_create (&bar, backend, ctx->json);
  handle = sandbox_backend_create (backend, template_key, NULL, policy, ctx->cancellable, &error);
  sandboxctl_progress_bar_finish (&bar);
  if (handle == NULL)
    return sandboxctl_report_error (ctx, error);

  if (!sandboxctl_print_created (handle, output, &error))
    status = sandboxctl_report_error (ctx, error);

  return sandboxctl_session_finish (ctx, handle, status);
}

/* sandboxctl read ------------------------------------------------------- */

static void
print_file_json (const char *canonical_path,
                 GBytes     *contents)
{
  g_autoptr(JsonObject) object = json_object_new ();
  gsize size = 0;
  const guint8 *data = g_bytes_get_data (contents, &size);
  g_autofree char *base64 = g_base64_encode (data, size);

  json_object_set_string_member (object, "path", canonical_path);
  json_object_set_int_member (object, "size", size);
  json_object_set_string_member (object, "contentBase64", base64);
  sandboxctl_print_json_object (object);
}

int
sandboxctl_cmd_read (SandboxctlContext   *ctx,
                     char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *entries = sandboxctl_session_entries (&session_options);
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, "PATH",
                                   "Write the workspace file PATH (relative, or under /workspace) "
                                   "to stdout, byte for byte. With --json, print it as base64.",
                                   entries, TRUE);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GBytes) contents = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *canonical = NULL;
  int status = sandboxctl_resume_for_command (ctx, context, argv, 1, &session_options, &handle);

  if (handle == NULL)
    return status;

  canonical = sandbox_path_canonicalize ((*argv)[1], &error);
  if (canonical != NULL)
    contents = sandbox_session_read_bytes (sandbox_handle_get_session (handle), canonical,
                                           ctx->cancellable, &error);
  if (contents == NULL)
    status = sandboxctl_report_error (ctx, error);
  else if (ctx->json)
    print_file_json (canonical, contents);
  else if (!sandboxctl_write_all (STDOUT_FILENO, g_bytes_get_data (contents, NULL),
                                  g_bytes_get_size (contents), &error))
    status = sandboxctl_report_error (ctx, error);

  return sandboxctl_session_finish (ctx, handle, status);
}

/* sandboxctl write ------------------------------------------------------ */

GBytes *
sandboxctl_read_stdin (GError **error)
{
  g_autoptr(GInputStream) input = g_unix_input_stream_new (STDIN_FILENO, FALSE);
  g_autoptr(GOutputStream) output = g_memory_output_stream_new_resizable ();

  if (g_output_stream_splice (output, input, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, error) < 0)
    return NULL;
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (output));
}

static GBytes *
write_contents (const char  *from_file,
                const char  *text,
                GError     **error)
{
  if (text != NULL)
    return g_bytes_new (text, strlen (text));
  if (from_file != NULL)
    {
      char *contents = NULL;
      gsize length = 0;

      if (!g_file_get_contents (from_file, &contents, &length, error))
        return NULL;
      return g_bytes_new_take (contents, length);
    }
  return sandboxctl_read_stdin (error);
}

int
sandboxctl_cmd_write (SandboxctlContext   *ctx,
                      char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *session_entries = sandboxctl_session_entries (&session_options);
  g_autofree char *from_file = NULL;
  g_autofree char *text = NULL;
  const GOptionEntry entries[] = {
    { "from", 0, 0, G_OPTION_ARG_FILENAME, &from_file,
      "Copy the contents of a host file", "HOSTFILE" },
    { "text", 0, 0, G_OPTION_ARG_STRING, &text,
      "Write TEXT", "TEXT" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, "PATH",
                                   "Write the workspace file PATH (creating its parents) from "
                                   "stdin, --from HOSTFILE or --text TEXT.",
                                   entries, TRUE);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GBytes) contents = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *canonical = NULL;
  int status = SANDBOXCTL_EXIT_OK;

  g_option_group_add_entries (g_option_context_get_main_group (context), session_entries);
  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (!sandboxctl_check_arguments (ctx, *argv, 1))
    return SANDBOXCTL_EXIT_USAGE;
  if (from_file != NULL && text != NULL)
    return sandboxctl_usage_error (ctx, "--from and --text exclude each other");

  canonical = sandbox_path_canonicalize ((*argv)[1], &error);
  if (canonical == NULL)
    return sandboxctl_report_error (ctx, error);
  contents = write_contents (from_file, text, &error);
  if (contents == NULL)
    return sandboxctl_report_error (ctx, error);

  handle = sandboxctl_session_resume (ctx, &session_options, NULL, &error);
  if (handle == NULL)
    return sandboxctl_report_error (ctx, error);

  if (!sandbox_session_write_bytes (sandbox_handle_get_session (handle), canonical, contents,
                                    ctx->cancellable, &error))
    {
      status = sandboxctl_report_error (ctx, error);
    }
  else if (ctx->json)
    {
      g_autoptr(JsonObject) object = json_object_new ();

      json_object_set_string_member (object, "path", canonical);
      json_object_set_int_member (object, "size", g_bytes_get_size (contents));
      sandboxctl_print_json_object (object);
    }

  return sandboxctl_session_finish (ctx, handle, status);
}

/* sandboxctl rm --------------------------------------------------------- */

int
sandboxctl_cmd_rm (SandboxctlContext   *ctx,
                   char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *entries = sandboxctl_session_entries (&session_options);
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, "PATH",
                                   "Remove the workspace file or directory PATH (recursively, "
                                   "never following links). The workspace root cannot be removed.",
                                   entries, TRUE);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  int status = sandboxctl_resume_for_command (ctx, context, argv, 1, &session_options, &handle);

  if (handle == NULL)
    return status;

  if (!sandbox_session_remove_path (sandbox_handle_get_session (handle), (*argv)[1],
                                    ctx->cancellable, &error))
    status = sandboxctl_report_error (ctx, error);

  return sandboxctl_session_finish (ctx, handle, status);
}

/* sandboxctl stop ------------------------------------------------------- */

static char *
process_name (int pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/comm", pid);
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;
  return g_strstrip (contents);
}

/* Waits until nobody holds the session's lease (or the session is gone). */
static gboolean
wait_for_release (SandboxBackend *backend,
                  const char     *session_id,
                  guint           timeout_ms)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  for (;;)
    {
      g_autoptr(SandboxLeaseOwner) owner = NULL;
      g_autoptr(GError) error = NULL;

      if (sandbox_backend_query_lease_owner (backend, session_id, &owner, NULL, &error)
          ? owner == NULL
          : g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
        return TRUE;
      if (g_get_monotonic_time () >= deadline)
        return FALSE;
      g_usleep (STOP_POLL_INTERVAL_US);
    }
}

/* Whether @owner is a sandboxctl on this host, which stops on SIGTERM;
 * sets BUSY saying whom to ask otherwise. */
static gboolean
check_owner_is_sandboxctl (SandboxLeaseOwner  *owner,
                           GError            **error)
{
  int pid = sandbox_lease_owner_get_pid (owner);
  g_autofree char *name = NULL;

  if (pid == 0)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                           "Sandbox session already has an owner (unreadable lease)");
      return FALSE;
    }
  if (!sandbox_lease_owner_is_alive (owner))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "Sandbox session already has an owner: a stale lease of pid %d, which is no "
                   "longer running. Take it over with `sandboxctl recover`", pid);
      return FALSE;
    }
  if (sandbox_lease_owner_get_host (owner) != NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "Sandbox session already has an owner: pid %d on host %s; stop it there",
                   pid, sandbox_lease_owner_get_host (owner));
      return FALSE;
    }
  name = process_name (pid);
  if (g_strcmp0 (name, "sandboxctl") != 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "Sandbox session already has an owner: pid %d (%s), not a sandboxctl; "
                   "stop it in that program", pid, name != NULL ? name : "unknown");
      return FALSE;
    }
  return TRUE;
}

/* A resume refused as BUSY says who holds the session and what to do, as
 * stop does: the holder's pid, whether its lease is stale (recover), on
 * another host, or a sandboxctl that stop can ask to end. */
static void
explain_busy (SandboxBackend  *backend,
              const char      *session_id,
              GError         **error)
{
  g_autoptr(SandboxLeaseOwner) owner = NULL;
  GError *explained = NULL;

  if (error == NULL || !g_error_matches (*error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY) ||
      !sandbox_backend_query_lease_owner (backend, session_id, &owner, NULL, NULL) ||
      owner == NULL)
    return;
  if (check_owner_is_sandboxctl (owner, &explained) && sandboxctl_holder_serves (session_id))
    explained = g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                             "Sandbox session already has an owner: pid %d, the sandboxctl "
                             "holding its background commands (`sandboxctl bg list`); "
                             "`sandboxctl stop` ends it and them",
                             sandbox_lease_owner_get_pid (owner));
  else if (explained == NULL)
    explained = g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                             "Sandbox session already has an owner: pid %d, a sandboxctl; "
                             "`sandboxctl stop` asks it to end",
                             sandbox_lease_owner_get_pid (owner));
  g_clear_error (error);
  g_propagate_error (error, explained);
}

/* Asks the sandboxctl holding the session to stop: SIGTERM cancels its
 * command, and it stops the session on its way out. */
static gboolean
stop_running_owner (SandboxBackend     *backend,
                    const char         *session_id,
                    SandboxLeaseOwner  *owner,
                    guint               timeout_ms,
                    GError            **error)
{
  int pid = sandbox_lease_owner_get_pid (owner);

  if (!check_owner_is_sandboxctl (owner, error))
    return FALSE;
  if (kill (pid, SIGTERM) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not signal the session's owner, pid %d: %s", pid,
                   g_strerror (saved_errno));
      return FALSE;
    }
  if (!wait_for_release (backend, session_id, timeout_ms))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "Sandbox session already has an owner: pid %d did not release it within %u ms",
                   pid, timeout_ms);
      return FALSE;
    }
  return TRUE;
}

static void
print_stopped (SandboxctlContext *ctx,
               const char        *session_id,
               int                owner)
{
  if (ctx->json)
    {
      g_autoptr(JsonObject) object = json_object_new ();

      json_object_set_string_member (object, "sessionId", session_id);
      if (owner > 0)
        json_object_set_int_member (object, "stoppedOwner", owner);
      else
        json_object_set_null_member (object, "stoppedOwner");
      sandboxctl_print_json_object (object);
    }
  else if (owner > 0)
    {
      g_print ("stopped: sandboxctl pid %d released session %s\n", owner, session_id);
    }
  else
    {
      g_print ("stopped: session %s was not running\n", session_id);
    }
}

/* Nobody holds it: resuming proves it exists and is free; stopping leaves
 * it as it was. Policies do not matter for that, so deny-all. */
static gboolean
stop_free_session (SandboxctlContext  *ctx,
                   SandboxBackend     *backend,
                   SandboxState       *state,
                   GError            **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;

  handle = sandbox_backend_create (backend, sandbox_state_get_template_key (state), state,
                                   policy, ctx->cancellable, error);
  return handle != NULL && sandbox_handle_stop (handle, NULL, error);
}

int
sandboxctl_cmd_stop (SandboxctlContext   *ctx,
                     char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *session_entries = sandboxctl_session_entries (&session_options);
  int wait_ms = STOP_WAIT_DEFAULT_MS;
  const GOptionEntry entries[] = {
    { "wait-ms", 0, 0, G_OPTION_ARG_INT, &wait_ms,
      "How long to wait for a running owner to release the session (default 10000)", "MS" },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "Stop a session. When a sandboxctl (e.g. a long run) holds its "
                                   "lease, ask it to stop (SIGTERM: its command is killed and the "
                                   "lease released) and wait. Otherwise resume the session and stop "
                                   "it, which checks that it exists and is free. Another program's "
                                   "lease, or a stale one, is SANDBOX_BUSY.",
                                   entries, FALSE);
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxLeaseOwner) owner = NULL;
  g_autoptr(GError) error = NULL;
  const char *session_id;

  g_option_group_add_entries (g_option_context_get_main_group (context), session_entries);
  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (!sandboxctl_check_arguments (ctx, *argv, 0))
    return SANDBOXCTL_EXIT_USAGE;
  if (wait_ms < 0)
    return sandboxctl_usage_error (ctx, "--wait-ms must not be negative");

  backend = sandboxctl_open_backend (ctx, &error);
  if (backend == NULL)
    return sandboxctl_report_error (ctx, error);
  state = sandboxctl_session_load_state (&session_options, backend, &error);
  if (state == NULL)
    return sandboxctl_report_error (ctx, error);
  session_id = sandbox_state_get_session_id (state);

  if (!sandbox_backend_query_lease_owner (backend, session_id, &owner, ctx->cancellable, &error))
    return sandboxctl_report_error (ctx, error);
  if (owner != NULL
      ? !stop_running_owner (backend, session_id, owner, (guint) wait_ms, &error)
      : !stop_free_session (ctx, backend, state, &error))
    return sandboxctl_report_error (ctx, error);

  print_stopped (ctx, session_id, owner != NULL ? sandbox_lease_owner_get_pid (owner) : 0);
  return SANDBOXCTL_EXIT_OK;
}

/* sandboxctl delete ----------------------------------------------------- */

int
sandboxctl_cmd_delete (SandboxctlContext   *ctx,
                       char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *entries = sandboxctl_session_entries (&session_options);
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "Delete a session: its state and workspace. Templates stay.",
                                   entries, FALSE);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *session_id = NULL;
  int status = sandboxctl_resume_for_command (ctx, context, argv, 0, &session_options, &handle);

  if (handle == NULL)
    return status;
  session_id = g_strdup (sandbox_session_get_id (sandbox_handle_get_session (handle)));

  if (!sandbox_handle_delete (handle, NULL, &error))
    status = sandboxctl_report_error (ctx, error);
  else if (ctx->json)
    g_print ("{\"deleted\":\"%s\"}\n", session_id);
  else
    g_print ("deleted: session %s\n", session_id);

  return sandboxctl_session_finish (ctx, handle, status);
}

/**
 * sandboxctl_cmd_recover:
 * @ctx: the invocation
 * @argv: (inout): the remaining arguments
 *
 * `sandboxctl recover`: takes over a session whose owner died (a stale
 * lease), once none of the dead owner's sandboxed processes are left, then
 * releases it again. A live owner, or processes still left, is SANDBOX_BUSY.
 *
 * Returns: the exit status
 */
int
sandboxctl_cmd_recover (SandboxctlContext   *ctx,
                        char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *entries = sandboxctl_session_entries (&session_options);
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "Take over a session whose owner died, once none of its "
                                   "sandboxed processes are left; the workspace is kept.",
                                   entries, FALSE);
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;

  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (!sandboxctl_check_arguments (ctx, *argv, 0))
    return SANDBOXCTL_EXIT_USAGE;

  policy = sandbox_network_policy_new_deny_all ();
  backend = sandboxctl_open_backend (ctx, &error);
  if (backend != NULL)
    state = sandboxctl_session_load_state (&session_options, backend, &error);
  if (state != NULL)
    handle = sandbox_backend_recover_session (backend, state, policy, ctx->cancellable, &error);
  if (handle == NULL)
    return sandboxctl_report_error (ctx, error);

  if (ctx->json)
    g_print ("{\"recovered\":\"%s\"}\n", sandbox_state_get_session_id (state));
  else
    g_print ("recovered: session %s (its lease is released again)\n",
             sandbox_state_get_session_id (state));

  return sandboxctl_session_finish (ctx, handle, SANDBOXCTL_EXIT_OK);
}
