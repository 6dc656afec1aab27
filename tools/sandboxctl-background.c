/* sandboxctl-background.c — background commands that outlive sandboxctl
 *
 *   sandboxctl bg start (--state FILE | --session ID) [OPTION…] [--] EXECUTABLE [ARG…]
 *   sandboxctl bg list|output ID [--follow]|kill ID [--signal N]|wait ID (--state|--session)
 *
 * A session's background commands live in its holder, a detached
 * `sandboxctl hold` (sandboxctl-holder.c) that `bg start` starts when none
 * serves the session. These commands reach it on a peer-to-peer D-Bus
 * socket named by the session id, in $XDG_RUNTIME_DIR/sandboxctl-UID (else
 * $TMPDIR or /tmp): a directory that must be ours, mode 0700, and no
 * symlink, checked on an O_NOFOLLOW descriptor whose /proc/self/fd path
 * names the socket (which also keeps the address far below sun_path's 108
 * bytes whatever the base directory). The server takes only our own user.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib-unix.h>

#include "sandboxctl.h"
#include "sandboxctl-holder-dbus.h"

/* How long `bg start` waits for a new holder to resume its session. */
#define HOLDER_START_TIMEOUT_MS 60000
/* How often `bg output --follow` asks for more output. */
#define FOLLOW_INTERVAL_US (100 * 1000)

/**
 * sandboxctl_holder_open_dir:
 * @create: whether to create the directory when it is missing
 * @error: return location for a #GError
 *
 * Opens the directory of our holders' sockets, refusing (never following)
 * a symlink there, and refusing a directory another user owns or others
 * may enter: whoever could enter it could plant a socket of their own
 * where our commands look for our holder.
 *
 * Returns: a descriptor of the directory, or -1 with @error set
 */
int
sandboxctl_holder_open_dir (gboolean   create,
                            GError   **error)
{
  const char *base = g_getenv ("XDG_RUNTIME_DIR");
  g_autofree char *name = g_strdup_printf ("sandboxctl-%u", (guint) getuid ());
  g_autofree char *path = NULL;
  struct stat st;
  int fd;

  if (base == NULL || !g_path_is_absolute (base))
    base = g_get_tmp_dir ();
  path = g_build_filename (base, name, NULL);
  if (create && mkdir (path, 0700) != 0 && errno != EEXIST)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not create the holders' directory %s: %s", path,
                   g_strerror (saved_errno));
      return -1;
    }
  fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int saved_errno = errno;

      if (saved_errno == ELOOP || saved_errno == ENOTDIR)
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                     "Refusing the holders' directory %s: it is not a directory (a symlink?)",
                     path);
      else
        g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                     "Could not open the holders' directory %s: %s", path,
                     g_strerror (saved_errno));
      return -1;
    }
  if (fstat (fd, &st) != 0 || st.st_uid != getuid () || (st.st_mode & 0077) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "Refusing the holders' directory %s: it must be ours (uid %u) with mode "
                   "0700, not uid %u mode %04o", path, (guint) getuid (), (guint) st.st_uid,
                   (guint) (st.st_mode & 07777));
      close (fd);
      return -1;
    }
  return fd;
}

/**
 * sandboxctl_holder_address:
 * @dir_fd: the holders' directory, from sandboxctl_holder_open_dir()
 * @session_id: the session
 *
 * Returns: (transfer full): the D-Bus address of the session's holder socket,
 *   valid in this process while @dir_fd is open
 */
char *
sandboxctl_holder_address (int         dir_fd,
                           const char *session_id)
{
  return g_strdup_printf ("unix:path=/proc/self/fd/%d/%s", dir_fd, session_id);
}

/**
 * sandboxctl_session_id_of:
 * @ctx: the invocation
 * @options: --state or --session
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the session's id, or %NULL with @error set
 */
char *
sandboxctl_session_id_of (SandboxctlContext         *ctx,
                          SandboxctlSessionOptions  *options,
                          GError                   **error)
{
  g_autoptr(SandboxBackend) backend = sandboxctl_open_backend (ctx, error);
  g_autoptr(SandboxState) state = NULL;

  if (backend != NULL)
    state = sandboxctl_session_load_state (options, backend, error);
  if (state == NULL)
    return NULL;
  return g_strdup (sandbox_state_get_session_id (state));
}

/**
 * sandboxctl_holder_check_socket:
 * @dir_fd: the holders' directory, from sandboxctl_holder_open_dir()
 * @session_id: the session
 * @error: return location for a #GError
 *
 * Looks at the session's holder socket without following a link: nothing
 * there is G_IO_ERROR_NOT_FOUND, anything but a socket of ours
 * G_IO_ERROR_PERMISSION_DENIED (never used, never replaced).
 *
 * Returns: whether a socket of ours is there (it may be a dead holder's:
 *   only a connection tells)
 */
gboolean
sandboxctl_holder_check_socket (int          dir_fd,
                                const char  *session_id,
                                GError     **error)
{
  struct stat st;

  if (fstatat (dir_fd, session_id, &st, AT_SYMLINK_NOFOLLOW) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "No holder serves session %s (it has no background commands)", session_id);
      return FALSE;
    }
  if (!S_ISSOCK (st.st_mode) || st.st_uid != getuid ())
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "Refusing session %s's holder socket: not a socket of ours", session_id);
      return FALSE;
    }
  return TRUE;
}

/**
 * sandboxctl_holder_serves:
 * @session_id: the session
 *
 * Returns: whether a holder's socket for @session_id is in place
 */
gboolean
sandboxctl_holder_serves (const char *session_id)
{
  gboolean found;
  int dir_fd = sandboxctl_holder_open_dir (FALSE, NULL);

  if (dir_fd < 0)
    return FALSE;
  found = sandboxctl_holder_check_socket (dir_fd, session_id, NULL);
  close (dir_fd);
  return found;
}

/* Connects to the session's holder. No holder is G_IO_ERROR_NOT_FOUND, a
 * dead one's socket G_IO_ERROR_CONNECTION_REFUSED. */
static SandboxctlHolder1 *
connect_holder (const char  *session_id,
                GError     **error)
{
  g_autoptr(GDBusConnection) connection = NULL;
  g_autofree char *address = NULL;
  SandboxctlHolder1 *proxy;
  int dir_fd = sandboxctl_holder_open_dir (FALSE, error);

  if (dir_fd < 0)
    {
      if (g_error_matches (*error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
        g_prefix_error (error, "No holder serves session %s: ", session_id);
      return NULL;
    }
  if (!sandboxctl_holder_check_socket (dir_fd, session_id, error))
    {
      close (dir_fd);
      return NULL;
    }
  address = sandboxctl_holder_address (dir_fd, session_id);
  connection = g_dbus_connection_new_for_address_sync (address,
                                                       G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT,
                                                       NULL, NULL, error);
  close (dir_fd);
  if (connection == NULL)
    return NULL;
  proxy = sandboxctl_holder1_proxy_new_sync (connection,
                                             G_DBUS_PROXY_FLAGS_DO_NOT_LOAD_PROPERTIES |
                                             G_DBUS_PROXY_FLAGS_DO_NOT_CONNECT_SIGNALS,
                                             NULL, SANDBOXCTL_HOLDER_OBJECT_PATH, NULL, error);
  /* A command's wait and run last as long as the command. */
  if (proxy != NULL)
    g_dbus_proxy_set_default_timeout (G_DBUS_PROXY (proxy), G_MAXINT);
  return proxy;
}

/* A holder's error comes back as the library's GError (GDBus carries its
 * domain and code); only the D-Bus name goes from its message. */
static int
report_remote_error (SandboxctlContext *ctx,
                     GError            *error)
{
  g_dbus_error_strip_remote_error (error);
  return sandboxctl_report_error (ctx, error);
}

static void
start_new_session (gpointer user_data)
{
  /* Our terminal's hangup and job control are not the holder's business. */
  setsid ();
}

/* Reads the new holder's report (sandboxctl-holder.c report_ready()):
 * nothing when it serves, else its error as (domain, code, message). */
static gboolean
read_ready_report (int      fd,
                   GError **error)
{
  g_autoptr(GByteArray) report = g_byte_array_new ();
  gint64 deadline = g_get_monotonic_time () + (gint64) HOLDER_START_TIMEOUT_MS * 1000;

  for (;;)
    {
      struct pollfd pfd = { fd, POLLIN, 0 };
      guint8 buffer[4096];
      gssize n;
      int timeout = (int) ((deadline - g_get_monotonic_time ()) / 1000);

      if (timeout <= 0 || poll (&pfd, 1, timeout) == 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                       "The session's holder did not start within %d ms",
                       HOLDER_START_TIMEOUT_MS);
          return FALSE;
        }
      n = read (fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      g_byte_array_append (report, buffer, n);
    }
  if (report->len > 0)
    {
      g_autoptr(GVariant) reported =
        g_variant_ref_sink (g_variant_new_from_data (G_VARIANT_TYPE ("(sis)"), report->data,
                                                     report->len, FALSE, NULL, NULL));
      const char *domain = NULL, *message = NULL;
      int code = 0;

      g_variant_get (reported, "(&si&s)", &domain, &code, &message);
      g_set_error (error, g_quark_from_string (domain), code,
                   "The session's holder could not start: %s", message);
      return FALSE;
    }
  return TRUE;
}

/* Starts `sandboxctl hold` for the session, detached (its own session,
 * stdin /dev/null, stdout and stderr to a log in the holders' directory,
 * none of our other descriptors) and waits until it serves or fails. */
static gboolean
start_holder (SandboxctlContext  *ctx,
              const char         *session_id,
              int                 grace_s,
              GError            **error)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) holder = NULL;
  g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *self = g_file_read_link ("/proc/self/exe", error);
  g_autofree char *log_path = NULL;
  int fds[2];
  int dir_fd;
  gboolean ready;

  if (self == NULL)
    return FALSE;
  if (ctx->network.allow_rules != NULL && ctx->network.allow_rules->len > 0)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "A holder takes --network deny-all|allow-all|FILE.json, not --allow");
      return FALSE;
    }
  dir_fd = sandboxctl_holder_open_dir (TRUE, error);
  if (dir_fd < 0)
    return FALSE;

  g_ptr_array_add (args, g_strdup (self));
  /* The same backend as ours: the global options that choose it. */
  if (ctx->driver != NULL)
    g_ptr_array_add (args, g_strdup_printf ("--driver=%s", ctx->driver));
  if (ctx->state_dir != NULL)
    {
      /* The holder runs in /, so as not to keep our directory busy. */
      g_autofree char *absolute = g_canonicalize_filename (ctx->state_dir, NULL);

      g_ptr_array_add (args, g_strdup_printf ("--state-dir=%s", absolute));
    }
  for (guint i = 0; ctx->driver_options != NULL && ctx->driver_options[i] != NULL; i++)
    {
      g_ptr_array_add (args, g_strdup ("--driver-option"));
      g_ptr_array_add (args, g_strdup (ctx->driver_options[i]));
    }
  if (ctx->max_concurrent_commands != 0)
    g_ptr_array_add (args, g_strdup_printf ("--max-concurrent-commands=%d",
                                            ctx->max_concurrent_commands));
  if (ctx->verbose)
    g_ptr_array_add (args, g_strdup ("--verbose"));
  g_ptr_array_add (args, g_strdup ("hold"));
  g_ptr_array_add (args, g_strdup_printf ("--session=%s", session_id));
  g_ptr_array_add (args, g_strdup_printf ("--grace-s=%d", grace_s));
  g_ptr_array_add (args, g_strdup ("--ready-fd=3"));
  if (ctx->network.network != NULL)
    g_ptr_array_add (args, g_strdup_printf ("--network=%s", ctx->network.network));
  g_ptr_array_add (args, NULL);

  if (!g_unix_open_pipe (fds, FD_CLOEXEC, error))
    {
      close (dir_fd);
      return FALSE;
    }
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_NONE);
  log_path = g_strdup_printf ("/proc/self/fd/%d/%s.log", dir_fd, session_id);
  g_subprocess_launcher_set_stdout_file_path (launcher, "/dev/null");
  g_subprocess_launcher_set_stderr_file_path (launcher, log_path);
  g_subprocess_launcher_set_cwd (launcher, "/");
  g_subprocess_launcher_set_child_setup (launcher, start_new_session, NULL, NULL);
  g_subprocess_launcher_take_fd (launcher, fds[1], 3);
  holder = g_subprocess_launcher_spawnv (launcher, (const char * const *) args->pdata, error);
  close (dir_fd);
  /* Our copy of the report pipe's write end goes with the launcher, so the
   * holder's close is its end of file. */
  g_clear_object (&launcher);
  if (holder == NULL)
    {
      close (fds[0]);
      return FALSE;
    }
  g_debug ("Started holder pid %s for session %s", g_subprocess_get_identifier (holder),
           session_id);
  ready = read_ready_report (fds[0], error);
  close (fds[0]);
  return ready;
}

static void
print_id (SandboxctlContext *ctx,
          const char        *id)
{
  if (ctx->json)
    {
      g_autoptr(JsonObject) object = json_object_new ();

      json_object_set_string_member (object, "id", id);
      sandboxctl_print_json_object (object);
    }
  else
    {
      g_print ("%s\n", id);
    }
}

/**
 * sandboxctl_command_options:
 * @cwd: (nullable): the working directory
 * @environment: (nullable): KEY=VALUE pairs
 * @timeout_ms: the deadline, 0 for the default
 * @max_output_bytes: the output cap, 0 for the default
 *
 * Returns: (transfer floating): a command's options as the holder takes them
 */
GVariant *
sandboxctl_command_options (const char         *cwd,
                            const char * const *environment,
                            int                 timeout_ms,
                            gint64              max_output_bytes)
{
  GVariantDict dict;

  g_variant_dict_init (&dict, NULL);
  if (cwd != NULL)
    g_variant_dict_insert (&dict, "cwd", "s", cwd);
  if (environment != NULL)
    g_variant_dict_insert (&dict, "env", "^as", environment);
  if (timeout_ms > 0)
    g_variant_dict_insert (&dict, "timeout-ms", "u", (guint32) timeout_ms);
  if (max_output_bytes > 0)
    g_variant_dict_insert (&dict, "max-output-bytes", "t", (guint64) max_output_bytes);
  return g_variant_dict_end (&dict);
}

static int
bg_start (SandboxctlContext         *ctx,
          SandboxctlSessionOptions  *session_options,
          GOptionContext            *context,
          char                    ***argv)
{
  int timeout_ms = 0, grace_s = 60;
  gint64 max_output_bytes = 0;
  g_autofree char *cwd = NULL;
  g_auto(GStrv) environment = NULL;
  g_auto(GStrv) command_line = NULL;
  const GOptionEntry entries[] = {
    { "timeout-ms", 0, 0, G_OPTION_ARG_INT, &timeout_ms,
      "Deadline in milliseconds (default an hour)", "N" },
    { "max-output-bytes", 0, 0, G_OPTION_ARG_INT64, &max_output_bytes,
      "Size of the output log kept (its head and tail; default 1048576)", "N" },
    { "cwd", 'C', 0, G_OPTION_ARG_STRING, &cwd,
      "Working directory inside the workspace (default .)", "DIR" },
    { "env", 'e', 0, G_OPTION_ARG_STRING_ARRAY, &environment,
      "Set an environment variable of the command (repeatable)", "KEY=VALUE" },
    { "grace-s", 0, 0, G_OPTION_ARG_INT, &grace_s,
      "A new holder stays N seconds after its last command ended (default 60)", "N" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &command_line, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(SandboxctlHolder1) holder = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *session_id = NULL;
  g_autofree char *id = NULL;

  g_option_group_add_entries (g_option_context_get_main_group (context), entries);
  g_option_context_set_strict_posix (context, TRUE);
  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (command_line == NULL || command_line[0] == NULL)
    return sandboxctl_usage_error (ctx, "missing EXECUTABLE");
  if (grace_s < 0 || timeout_ms < 0 || max_output_bytes < 0)
    return sandboxctl_usage_error (ctx, "--grace-s, --timeout-ms and --max-output-bytes "
                                        "must not be negative");

  session_id = sandboxctl_session_id_of (ctx, session_options, &error);
  if (session_id == NULL)
    return sandboxctl_report_error (ctx, error);
  holder = connect_holder (session_id, &error);
  if (holder == NULL && (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) ||
                         g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED)))
    {
      g_debug ("%s: starting a holder", error->message);
      g_clear_error (&error);
      if (start_holder (ctx, session_id, grace_s, &error))
        holder = connect_holder (session_id, &error);
    }
  if (holder == NULL)
    return sandboxctl_report_error (ctx, error);
  if (!sandboxctl_holder1_call_spawn_background_sync (
         holder, (const char * const *) command_line,
         sandboxctl_command_options (cwd, (const char * const *) environment, timeout_ms,
                                     max_output_bytes),
         &id, ctx->cancellable, &error))
    return report_remote_error (ctx, error);
  print_id (ctx, id);
  return SANDBOXCTL_EXIT_OK;
}

static void
print_list (SandboxctlContext *ctx,
            GVariant          *commands)
{
  g_autoptr(JsonArray) array = json_array_new ();
  GVariantIter iter;
  const char *id;
  g_autofree const char **command_argv = NULL;
  gint64 start_us;
  gboolean finished;
  int status;

  g_variant_iter_init (&iter, commands);
  while (g_variant_iter_next (&iter, "(&s^a&sxbi)", &id, &command_argv, &start_us, &finished,
                              &status))
    {
      g_autoptr(GDateTime) start = g_date_time_new_from_unix_utc (start_us / G_USEC_PER_SEC);
      g_autofree char *start_text = g_date_time_format_iso8601 (start);
      g_autofree char *joined = g_strjoinv (" ", (char **) command_argv);

      if (ctx->json)
        {
          JsonObject *object = json_object_new ();
          JsonArray *argv_array = json_array_new ();

          for (guint i = 0; command_argv[i] != NULL; i++)
            json_array_add_string_element (argv_array, command_argv[i]);
          json_object_set_string_member (object, "id", id);
          json_object_set_array_member (object, "argv", argv_array);
          json_object_set_string_member (object, "startTime", start_text);
          json_object_set_string_member (object, "state", finished ? "finished" : "running");
          if (finished && status >= 0)
            json_object_set_int_member (object, "exitStatus", status);
          else
            json_object_set_null_member (object, "exitStatus");
          json_array_add_object_element (array, object);
        }
      else if (finished)
        {
          g_autofree char *state = status >= 0 ? g_strdup_printf ("exited %d", status)
                                               : g_strdup ("failed");

          g_print ("%s\t%s\t%s\t%s\n", id, start_text, state, joined);
        }
      else
        {
          g_print ("%s\t%s\trunning\t%s\n", id, start_text, joined);
        }
      g_clear_pointer (&command_argv, g_free);
    }
  if (ctx->json)
    {
      g_autoptr(JsonNode) node = json_node_new (JSON_NODE_ARRAY);

      json_node_set_array (node, array);
      sandboxctl_print_json (node);
    }
}

static int
bg_list (SandboxctlContext        *ctx,
         SandboxctlHolder1        *holder)
{
  g_autoptr(GVariant) commands = NULL;
  g_autoptr(GError) error = NULL;

  if (holder != NULL &&
      !sandboxctl_holder1_call_list_sync (holder, &commands, ctx->cancellable, &error))
    return report_remote_error (ctx, error);
  /* No holder: the session has no background commands. */
  if (commands == NULL)
    commands = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("(sasxbi)"), NULL, 0));
  print_list (ctx, commands);
  return SANDBOXCTL_EXIT_OK;
}

/* Writes the command's output log from the start (re-attaching): what is
 * kept, then, with @follow, what comes until the command ends, whose exit
 * status is then ours. What the log dropped is said on stderr. */
static int
bg_output (SandboxctlContext *ctx,
           SandboxctlHolder1 *holder,
           const char        *id,
           gboolean           follow)
{
  guint64 from = 0;

  for (;;)
    {
      g_autoptr(GVariant) data = NULL;
      g_autoptr(GError) error = NULL;
      guint64 next = 0, skipped = 0;
      gboolean finished = FALSE;
      int status = -1;
      gsize length = 0;
      const guint8 *bytes;

      if (!sandboxctl_holder1_call_read_output_sync (holder, id, from, &data, &next, &skipped,
                                                     &finished, &status, ctx->cancellable,
                                                     &error))
        return report_remote_error (ctx, error);
      if (skipped > 0)
        g_printerr ("sandboxctl: [%" G_GUINT64_FORMAT " bytes of output dropped here]\n",
                    skipped);
      bytes = g_variant_get_fixed_array (data, &length, 1);
      if (!sandboxctl_write_all (STDOUT_FILENO, bytes, length, &error))
        return sandboxctl_report_error (ctx, error);
      from = next;
      if (length > 0)
        continue;
      /* Read to the end: finished before that read, nothing more comes. */
      if (!follow)
        return SANDBOXCTL_EXIT_OK;
      if (finished)
        return status >= 0 ? status : SANDBOXCTL_EXIT_FAILURE;
      g_usleep (FOLLOW_INTERVAL_US);
    }
}

/**
 * sandboxctl_cmd_bg:
 * @ctx: the invocation, with its subcommand
 * @argv: (inout): the remaining arguments
 *
 * `sandboxctl bg start|list|output|kill|wait`.
 *
 * Returns: the exit status
 */
int
sandboxctl_cmd_bg (SandboxctlContext   *ctx,
                   char              ***argv)
{
  g_auto(SandboxctlSessionOptions) session_options = { 0 };
  g_autofree GOptionEntry *session_entries = sandboxctl_session_entries (&session_options);
  const char *sub = ctx->subcommand != NULL ? ctx->subcommand : "";
  gboolean follow = FALSE;
  int signum = SIGTERM;
  const GOptionEntry entries[] = {
    { "follow", 'f', 0, G_OPTION_ARG_NONE, &follow,
      "output: keep writing output as it comes until the command ends; exit with its status",
      NULL },
    { "signal", 0, 0, G_OPTION_ARG_INT, &signum, "kill: the signal's number (default 15)", "N" },
    G_OPTION_ENTRY_NULL
  };
  gboolean start = g_str_equal (sub, "start");
  gboolean takes_id = g_str_equal (sub, "output") || g_str_equal (sub, "kill") ||
                      g_str_equal (sub, "wait");
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, start ? "[--] EXECUTABLE [ARGUMENT…]"
                                              : takes_id ? "ID" : NULL,
                                   "Background commands that outlive sandboxctl: “bg start” "
                                   "starts one in the session's holder (starting the holder when "
                                   "none serves it) and prints its id; “bg list” lists them; "
                                   "“bg output ID [--follow]” writes its output; “bg kill ID "
                                   "[--signal N]” signals it; “bg wait ID” waits for it and "
                                   "exits with its status. `sandboxctl stop` ends the holder and "
                                   "them.", start ? NULL : entries, start);
  g_autoptr(SandboxctlHolder1) holder = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *session_id = NULL;
  int status;

  g_option_group_add_entries (g_option_context_get_main_group (context), session_entries);
  if (start)
    return bg_start (ctx, &session_options, context, argv);
  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (!takes_id && !g_str_equal (sub, "list"))
    return sandboxctl_usage_error (ctx, "“bg” needs a subcommand: start, list, output, kill "
                                        "or wait");
  if (g_strv_length (*argv) != (takes_id ? 2u : 1u))
    return sandboxctl_usage_error (ctx, takes_id ? "bg %s takes one ID" : "bg %s takes no "
                                   "argument", sub);

  session_id = sandboxctl_session_id_of (ctx, &session_options, &error);
  if (session_id != NULL)
    holder = connect_holder (session_id, &error);
  /* No holder, or a dead one's socket: no background commands. */
  if (holder == NULL && g_str_equal (sub, "list") &&
      (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) ||
       g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED)))
    return bg_list (ctx, NULL);
  if (holder == NULL)
    return sandboxctl_report_error (ctx, error);

  /* No signal handlers: a client holds no lease, and SIGINT may end it
   * anywhere (the holder and its commands go on). */
  if (g_str_equal (sub, "list"))
    return bg_list (ctx, holder);
  if (g_str_equal (sub, "output"))
    return bg_output (ctx, holder, (*argv)[1], follow);
  if (g_str_equal (sub, "kill"))
    {
      if (!sandboxctl_holder1_call_signal_sync (holder, (*argv)[1], signum, ctx->cancellable,
                                                &error))
        return report_remote_error (ctx, error);
      return SANDBOXCTL_EXIT_OK;
    }
  if (!sandboxctl_holder1_call_wait_sync (holder, (*argv)[1], &status, ctx->cancellable, &error))
    return report_remote_error (ctx, error);
  if (ctx->json)
    g_print ("{\"exitStatus\":%d}\n", status);
  return status;
}

/**
 * sandboxctl_holder_run:
 * @ctx: the invocation
 * @options: --state or --session
 * @argv: the command line
 * @command_options: (transfer floating): as sandboxctl_command_options() makes them
 * @exec_errno: (out): the errno of a failed exec, 0 when the command ran
 * @error: return location for a #GError
 *
 * Runs a one-shot command through the session's holder: `run` does when a
 * holder holds the lease it would need.
 *
 * Returns: (transfer full): the command's result, or %NULL with @error set
 *   (G_IO_ERROR_NOT_FOUND when no holder serves the session)
 */
SandboxResult *
sandboxctl_holder_run (SandboxctlContext         *ctx,
                       SandboxctlSessionOptions  *options,
                       const char * const        *argv,
                       GVariant                  *command_options,
                       int                       *exec_errno,
                       GError                   **error)
{
  g_autoptr(GVariant) sunk = g_variant_ref_sink (command_options);
  g_autoptr(SandboxctlHolder1) holder = NULL;
  g_autoptr(GVariant) out = NULL;
  g_autoptr(GVariant) err = NULL;
  g_autoptr(GBytes) out_bytes = NULL;
  g_autoptr(GBytes) err_bytes = NULL;
  g_autofree char *session_id = sandboxctl_session_id_of (ctx, options, error);
  int status = 0;

  if (session_id != NULL)
    holder = connect_holder (session_id, error);
  if (holder == NULL)
    return NULL;
  g_debug ("Running %s through session %s's holder", argv[0], session_id);
  if (!sandboxctl_holder1_call_run_sync (holder, argv, sunk, &status, &out, &err, exec_errno,
                                         ctx->cancellable, error))
    {
      g_dbus_error_strip_remote_error (*error);
      return NULL;
    }
  out_bytes = g_variant_get_data_as_bytes (out);
  err_bytes = g_variant_get_data_as_bytes (err);
  return sandbox_result_new (status, out_bytes, err_bytes);
}
