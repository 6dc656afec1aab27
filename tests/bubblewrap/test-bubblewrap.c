/* test-bubblewrap.c — the bubblewrap driver against real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-glib/json-glib.h>
#include <sandbox.h>

/* Fixture ------------------------------------------------------------------ */

typedef struct
{
  char *state_directory;
  SandboxBackend *backend;
  char *template_key;
  SandboxHandle *handle;
  SandboxSession *session;
} Fixture;

/* A backend on @state_directory; @name and @executable may be NULL (defaults). */
static SandboxBackend *
new_backend (const char *state_directory,
             const char *name,
             const char *executable)
{
  g_autoptr(GError) error = NULL;
  const char *names[3] = { "state-directory" };
  GValue values[3] = { G_VALUE_INIT, G_VALUE_INIT, G_VALUE_INIT };
  guint n = 1;
  SandboxBackend *backend;

  g_value_init (&values[0], G_TYPE_STRING);
  g_value_set_string (&values[0], state_directory);
  if (name != NULL)
    {
      names[n] = "name";
      g_value_init (&values[n], G_TYPE_STRING);
      g_value_set_string (&values[n++], name);
    }
  if (executable != NULL)
    {
      names[n] = "executable";
      g_value_init (&values[n], G_TYPE_STRING);
      g_value_set_string (&values[n++], executable);
    }
  backend = sandbox_backend_newv ("bubblewrap", n, names, values, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (backend);
  for (guint i = 0; i < n; i++)
    g_value_unset (&values[i]);
  return backend;
}

static char *
prewarm_hello (SandboxBackend *backend,
               gboolean       *reused)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("agent-workspace");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(GError) error = NULL;
  char *key;

  g_assert_true (sandbox_template_add_file (template_, "hello.txt", hello, &error));
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, reused, NULL, &error);
  g_assert_no_error (error);
  return key;
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();

  fixture->state_directory = g_dir_make_tmp ("sandbox-bwrap-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->backend = new_backend (fixture->state_directory, NULL, NULL);
  fixture->template_key = prewarm_hello (fixture->backend, NULL);
  fixture->handle = sandbox_backend_create (fixture->backend, fixture->template_key, NULL,
                                            policy, NULL, &error);
  g_assert_no_error (error);
  fixture->session = sandbox_handle_get_session (fixture->handle);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  if (fixture->handle != NULL)
    {
      g_autoptr(GError) error = NULL;

      sandbox_handle_delete (fixture->handle, NULL, &error);
      g_assert_no_error (error);
    }
  g_clear_object (&fixture->handle);
  g_clear_object (&fixture->backend);
  g_free (fixture->template_key);
  if (fixture->state_directory != NULL)
    {
      g_autofree char *command = g_strdup_printf ("rm -rf '%s'", fixture->state_directory);

      g_assert_cmpint (system (command), ==, 0);
    }
  g_free (fixture->state_directory);
}

static SandboxCommand *
command_newv (const char * const *argv)
{
  SandboxCommand *command = sandbox_command_new (argv[0]);

  for (guint i = 1; argv[i] != NULL; i++)
    sandbox_command_add_arg (command, argv[i]);
  return command;
}

#define COMMAND(...) command_newv ((const char * const []) { __VA_ARGS__, NULL })

static SandboxResult *
run_command (SandboxSession *session,
             SandboxCommand *command,
             GError        **error)
{
  g_autoptr(SandboxCommand) owned = command;

  return sandbox_session_run (session, owned, NULL, error);
}

/* Starts @command, which it takes ownership of (the tests build commands
 * inline). */
static SandboxProcess *
spawn_owned (SandboxSession  *session,
             SandboxCommand  *command,
             GCancellable    *cancellable,
             GError         **error)
{
  g_autoptr(SandboxCommand) owned = command;

  return sandbox_session_spawn (session, owned, cancellable, error);
}

/* Runs a shell script in the guest and returns its stdout; asserts exit 0. */
static char *
guest_sh (SandboxSession *session,
          const char     *script)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result =
    run_command (session, COMMAND ("/usr/bin/sh", "-c", script), &error);

  g_assert_no_error (error);
  if (sandbox_result_get_exit_status (result) != 0)
    {
      g_autofree char *err = sandbox_result_dup_stderr_text (result);
      g_error ("guest script failed (%d): %s\n%s", sandbox_result_get_exit_status (result),
               script, err);
    }
  return sandbox_result_dup_stdout_text (result);
}

static int
guest_status (SandboxSession *session,
              const char     *script)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result =
    run_command (session, COMMAND ("/usr/bin/sh", "-c", script), &error);

  g_assert_no_error (error);
  return sandbox_result_get_exit_status (result);
}

static char *
unique_token (void)
{
  g_autofree char *uuid = g_uuid_string_random ();

  return g_strdup_printf ("sbxmark%s", uuid);
}

/* Counts host processes whose command line contains @token. */
static guint
count_processes_with (const char *token)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint count = 0;

  g_assert_nonnull (proc);
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      gsize length;

      if (!g_ascii_isdigit (name[0]) || atoi (name) == getpid ())
        continue;
      path = g_strdup_printf ("/proc/%s/cmdline", name);
      if (!g_file_get_contents (path, &cmdline, &length, NULL))
        continue;
      for (gsize i = 0; i < length; i++)
        if (cmdline[i] == '\0')
          cmdline[i] = ' ';
      if (strstr (cmdline, token) != NULL)
        count++;
    }
  return count;
}

/* The kernel may return an empty /proc/PID/cmdline while the process is
 * busy (seen on 6.x while it forks), so one scan can miss a live process:
 * presence is proven by any scan that sees it… */
static void
wait_for_processes_with (const char *token)
{
  gboolean seen = FALSE;

  for (guint i = 0; i < 500 && !seen; i++)
    {
      seen = count_processes_with (token) > 0;
      if (!seen)
        g_usleep (10 * 1000);
    }
  g_assert_true (seen);
}

/* …and absence only by several scans that all see none. */
static void
assert_no_processes_with (const char *token)
{
  for (guint i = 0; i < 5; i++)
    {
      g_assert_cmpuint (count_processes_with (token), ==, 0);
      g_usleep (20 * 1000);
    }
}

/* A guest that daemonizes: setsid, double fork, SIGTERM ignored, stdio
 * closed, its command line marked "<token>-daemon". */
static const char daemon_script[] =
  "token=\"$1\"\n"
  "trap '' TERM HUP INT\n"
  "( setsid /usr/bin/sh -c 'trap \"\" TERM HUP INT; while :; do /usr/bin/sleep 1; done' "
  "\"$token-daemon\" </dev/null >/dev/null 2>&1 & ) &\n"
  "echo started\n"
  "while :; do /usr/bin/sleep 1; done\n";

static SandboxCommand *
daemon_command (SandboxSession *session,
                const char     *token)
{
  g_autoptr(GError) error = NULL;

  sandbox_session_write_text (session, "daemon.sh", daemon_script, NULL, &error);
  g_assert_no_error (error);
  return COMMAND ("/usr/bin/sh", "/workspace/daemon.sh", token);
}

/* Templates ------------------------------------------------------------------ */

static void
test_template_keys_conformance (void)
{
  const char *dir = g_getenv ("SANDBOX_CONFORMANCE_DIR");
  g_autofree char *path = g_build_filename (dir, "template-keys.jsonl", NULL);
  g_autofree char *contents = NULL;
  g_autofree char *state_directory = g_dir_make_tmp ("sandbox-bwrap-XXXXXX", NULL);
  g_auto(GStrv) lines = NULL;
  g_autoptr(GError) error = NULL;
  guint rows = 0;

  g_assert_nonnull (dir);
  g_assert_true (g_file_get_contents (path, &contents, NULL, &error));
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autoptr(SandboxBackend) backend = NULL;
      g_autoptr(SandboxTemplate) template_ = NULL;
      g_autofree char *key = NULL;
      g_autofree char *again = NULL;
      JsonObject *row, *files;
      GList *members;
      gboolean reused = TRUE;

      if (lines[i][0] == '\0')
        continue;
      g_assert_true (json_parser_load_from_data (parser, lines[i], -1, &error));
      row = json_node_get_object (json_parser_get_root (parser));
      backend = new_backend (state_directory, json_object_get_string_member (row, "name"), NULL);
      template_ = sandbox_template_new (json_object_get_string_member (row, "template"));
      files = json_object_get_object_member (row, "files_base64");
      members = json_object_get_members (files);
      for (GList *l = members; l != NULL; l = l->next)
        {
          gsize length;
          guchar *data = g_base64_decode (json_object_get_string_member (files, l->data), &length);
          g_autoptr(GBytes) bytes = g_bytes_new_take (data, length);

          g_assert_true (sandbox_template_add_file (template_, l->data, bytes, &error));
        }
      g_list_free (members);

      key = sandbox_backend_prewarm (backend, template_, &reused, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (key, ==, json_object_get_string_member (row, "key"));
      g_assert_false (reused);
      again = sandbox_backend_prewarm (backend, template_, &reused, NULL, &error);
      g_assert_cmpstr (again, ==, key);
      g_assert_true (reused);
      rows++;
    }
  g_assert_cmpuint (rows, >=, 6);
}

static void
assert_mode (const char *path,
             mode_t      mode)
{
  struct stat st;

  g_assert_cmpint (lstat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, mode);
}

static void
test_store_layout_and_modes (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *base = g_build_filename (fixture->state_directory, digest, NULL);
  g_autofree char *template_dir = g_build_filename (base, "templates", fixture->template_key, NULL);
  g_autofree char *ready = g_build_filename (template_dir, "ready", NULL);
  g_autofree char *data_file = g_build_filename (template_dir, "data", "hello.txt", NULL);
  g_autofree char *session_dir = g_build_filename (base, "sessions",
                                                   sandbox_session_get_id (fixture->session), NULL);
  g_autofree char *lease = g_build_filename (session_dir, "lease", NULL);
  g_autofree char *state = g_build_filename (session_dir, "state.json", NULL);
  g_autofree char *workspace_file = g_build_filename (session_dir, "workspace", "hello.txt", NULL);
  g_autofree char *layers = g_build_filename (session_dir, "layers", NULL);
  g_autofree char *lease_contents = NULL;
  g_autofree char *pid = g_strdup_printf ("%d", getpid ());
  g_autoptr(GDir) templates = NULL;
  g_autofree char *templates_path = NULL;

  assert_mode (base, 0700);
  assert_mode (template_dir, 0700);
  assert_mode (ready, 0600);
  assert_mode (data_file, 0644);
  assert_mode (session_dir, 0700);
  assert_mode (state, 0600);
  assert_mode (lease, 0600);
  /* A layered session (the default) has only its own layers: the
   * template's hello.txt is not copied into its upper layer. */
  if (g_file_test (layers, G_FILE_TEST_IS_DIR))
    {
      g_autofree char *upper = g_build_filename (layers, "upper", NULL);
      g_autofree char *upper_file = g_build_filename (upper, "hello.txt", NULL);
      g_autofree char *lock = g_build_filename (layers, "lock", NULL);

      assert_mode (layers, 0700);
      assert_mode (upper, 0755);
      assert_mode (lock, 0644);
      g_assert_false (g_file_test (upper_file, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (workspace_file, G_FILE_TEST_EXISTS));
    }
  else
    assert_mode (workspace_file, 0600);
  g_assert_true (g_file_get_contents (lease, &lease_contents, NULL, NULL));
  g_assert_cmpstr (lease_contents, ==, pid);
  g_assert_true (g_regex_match_simple ("^[0-9a-f]{64}$", sandbox_session_get_id (fixture->session),
                                       0, 0));

  /* No temporary directory is left next to the template. */
  templates_path = g_path_get_dirname (template_dir);
  templates = g_dir_open (templates_path, 0, NULL);
  g_assert_cmpstr (g_dir_read_name (templates), ==, fixture->template_key);
  g_assert_null (g_dir_read_name (templates));
}

static void
test_prewarm_from_directory (void)
{
  g_autofree char *state_directory = g_dir_make_tmp ("sandbox-bwrap-XXXXXX", NULL);
  g_autofree char *source = g_dir_make_tmp ("sandbox-src-XXXXXX", NULL);
  g_autofree char *sub = g_build_filename (source, "sub", NULL);
  g_autofree char *file = g_build_filename (sub, "f.txt", NULL);
  g_autoptr(SandboxBackend) backend = new_backend (state_directory, NULL, NULL);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("from-dir");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GFile) directory = g_file_new_for_path (source);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  g_autofree char *text = NULL;

  g_assert_cmpint (mkdir (sub, 0700), ==, 0);
  g_assert_true (g_file_set_contents (file, "from the host", -1, NULL));
  g_assert_true (sandbox_template_add_directory (template_, directory, NULL, &error));
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  text = guest_sh (sandbox_handle_get_session (handle), "cat sub/f.txt");
  g_assert_cmpstr (text, ==, "from the host");
  sandbox_handle_delete (handle, NULL, &error);
  g_assert_no_error (error);
}

/* Lifecycle ------------------------------------------------------------------ */

static void
test_guide_example_flow (void)
{
  g_autofree char *state_directory = g_dir_make_tmp ("sandbox-bwrap-XXXXXX", NULL);
  g_autoptr(SandboxBackend) backend = new_backend (state_directory, NULL, NULL);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  g_autofree char *out = NULL;
  g_autofree char *text = NULL;
  g_autofree char *session_dir = NULL;
  g_autofree char *template_dir = NULL;
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  gboolean reused = TRUE;

  key = prewarm_hello (backend, &reused);
  g_assert_false (reused);
  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);

  result = run_command (sandbox_handle_get_session (handle), COMMAND ("/usr/bin/cat", "hello.txt"),
                        &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  out = sandbox_result_dup_stdout_text (result);
  g_assert_cmpstr (out, ==, "hello");

  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sandbox_state_get_backend (state), ==, "bubblewrap");
  g_assert_cmpstr (sandbox_state_get_template_key (state), ==, key);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);

  resumed = sandbox_backend_create (backend, key, state, policy, NULL, &error);
  g_assert_no_error (error);
  text = sandbox_session_read_text (sandbox_handle_get_session (resumed), "hello.txt", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "hello");

  g_assert_true (sandbox_handle_delete (resumed, NULL, &error));
  g_assert_no_error (error);
  /* Deleting twice is a no-op; the old handle's shutdown too. */
  g_assert_true (sandbox_handle_delete (resumed, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_shutdown (handle, NULL, &error));
  g_assert_no_error (error);

  session_dir = g_build_filename (state_directory, digest, "sessions",
                                  sandbox_state_get_session_id (state), NULL);
  template_dir = g_build_filename (state_directory, digest, "templates", key, "ready", NULL);
  g_assert_false (g_file_test (session_dir, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (template_dir, G_FILE_TEST_EXISTS));

  g_clear_object (&state);
  state = sandbox_handle_capture_state (resumed, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_null (state);
}

static void
test_concurrent_attach_is_busy (Fixture       *fixture,
                                gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (fixture->handle, NULL);
  g_autoptr(SandboxHandle) second = NULL;
  g_autoptr(SandboxHandle) third = NULL;
  g_autoptr(GError) error = NULL;

  second = sandbox_backend_create (fixture->backend, fixture->template_key, state, policy,
                                   NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Sandbox session already has an owner");
  g_assert_null (second);
  g_clear_error (&error);

  /* An older handle cannot delete once someone else attached. */
  g_assert_true (sandbox_handle_stop (fixture->handle, NULL, &error));
  third = sandbox_backend_create (fixture->backend, fixture->template_key, state, policy,
                                  NULL, &error);
  g_assert_no_error (error);
  g_assert_false (sandbox_handle_delete (fixture->handle, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);
  g_assert_true (sandbox_handle_delete (third, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&fixture->handle);
}

static void
test_last_unref_stops (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (fixture->handle, NULL);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *token = unique_token ();

  process = spawn_owned (fixture->session, daemon_command (fixture->session, token),
                                   NULL, &error);
  g_assert_no_error (error);
  wait_for_processes_with (token);

  g_clear_object (&fixture->handle);
  assert_no_processes_with (token);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 137);

  /* The lease was released: the session can be resumed and deleted. */
  fixture->handle = sandbox_backend_create (fixture->backend, fixture->template_key, state,
                                            policy, NULL, &error);
  g_assert_no_error (error);
}

static void
test_stopped_session_refuses (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_allow_all ();
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_handle_stop (fixture->handle, NULL, &error));
  g_assert_true (sandbox_handle_stop (fixture->handle, NULL, &error));

  process = spawn_owned (fixture->session, COMMAND ("/usr/bin/true"), NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_cmpstr (error->message, ==, "Sandbox session is stopped");
  g_clear_error (&error);
  g_assert_null (sandbox_session_read_bytes (fixture->session, "hello.txt", NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_clear_error (&error);
  g_assert_false (sandbox_session_write_bytes (fixture->session, "x", bytes, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_clear_error (&error);
  g_assert_false (sandbox_session_remove_path (fixture->session, "hello.txt", NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_clear_error (&error);
  g_assert_false (sandbox_session_set_network_policy (fixture->session, policy, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
}

/* Errors ----------------------------------------------------------------------- */

static void
test_backend_validation (void)
{
  g_autofree char *state_directory = g_dir_make_tmp ("sandbox-bwrap-XXXXXX", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  struct stat st;
  g_autofree char *nested = g_build_filename (state_directory, "a", "b", NULL);

  backend = sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", state_directory,
                                 "name", "", NULL);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);
  backend = sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", state_directory,
                                 "max-concurrent-commands", 0, NULL);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);
  backend = sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", state_directory,
                                 "max-concurrent-commands", 1025, NULL);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);
  backend = sandbox_backend_new ("bubblewrap", NULL, &error, NULL);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  backend = sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", nested,
                                 "max-concurrent-commands", 1024, NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (sandbox_backend_get_name (backend), ==, "bubblewrap");
  g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (backend), ==, 1024);
  g_assert_cmpint (stat (nested, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);
}

static void
test_create_errors (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxState) other_template = NULL;
  g_autoptr(SandboxState) other_backend = NULL;
  g_autoptr(SandboxState) unknown = NULL;
  g_autoptr(SandboxBackend) renamed = NULL;
  g_autoptr(GError) error = NULL;
  const char *missing_key = "0000000000000000000000000000000000000000000000000000000000000000";

  handle = sandbox_backend_create (fixture->backend, "not-a-key", NULL, policy, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  handle = sandbox_backend_create (fixture->backend, missing_key, NULL, policy, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_clear_error (&error);

  other_template = sandbox_state_new ("bubblewrap", sandbox_session_get_id (fixture->session),
                                      missing_key, NULL);
  handle = sandbox_backend_create (fixture->backend, fixture->template_key, other_template, policy,
                                   NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH);
  g_assert_cmpstr (error->message, ==, "Reconnect state does not match backend and template");
  g_clear_error (&error);

  other_backend = sandbox_state_new ("other", sandbox_session_get_id (fixture->session),
                                     fixture->template_key, NULL);
  handle = sandbox_backend_create (fixture->backend, fixture->template_key, other_backend, policy,
                                   NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH);
  g_clear_error (&error);

  unknown = sandbox_state_new ("bubblewrap", missing_key, fixture->template_key, NULL);
  handle = sandbox_backend_create (fixture->backend, fixture->template_key, unknown, policy,
                                   NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* A template of another backend name is unknown to this one. */
  renamed = new_backend (fixture->state_directory, "renamed", NULL);
  handle = sandbox_backend_create (renamed, fixture->template_key, NULL, policy, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
}

static guint
count_sessions (const char *state_directory)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *sessions = g_build_filename (state_directory, digest, "sessions", NULL);
  g_autoptr(GDir) dir = g_dir_open (sessions, 0, NULL);
  guint count = 0;

  while (dir != NULL && g_dir_read_name (dir) != NULL)
    count++;
  return count;
}

static void
assert_isolation_fails (const char *executable)
{
  g_autofree char *state_directory = g_dir_make_tmp ("sandbox-bwrap-XXXXXX", NULL);
  g_autoptr(SandboxBackend) backend = new_backend (state_directory, NULL, executable);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = prewarm_hello (backend, NULL);

  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_true (g_str_has_prefix (error->message, "Bubblewrap could not establish isolation: "));
  g_assert_null (handle);
  g_assert_cmpuint (count_sessions (state_directory), ==, 0);
}

static void
test_isolation_failure_is_unavailable (void)
{
  g_autofree char *fake = NULL;
  g_autofree char *dir = g_dir_make_tmp ("sandbox-fake-XXXXXX", NULL);
  g_autofree char *marker = g_build_filename (dir, "ran-on-host", NULL);
  g_autofree char *script = NULL;

  assert_isolation_fails ("/nonexistent/bwrap");
  assert_isolation_fails ("/usr/bin/false");

  /* An "isolation" tool that exits 0 without creating a sandbox (here: one
   * that would run the command on the host) is refused too. */
  fake = g_build_filename (dir, "fake-bwrap", NULL);
  script = g_strdup_printf ("#!/bin/sh\ntouch '%s'\nexit 0\n", marker);
  g_assert_true (g_file_set_contents (fake, script, -1, NULL));
  g_assert_cmpint (chmod (fake, 0755), ==, 0);
  assert_isolation_fails (fake);
}

static void
gateway_error_cb (SandboxBackend *backend,
                  const GError   *cause,
                  gpointer        data)
{
  guint *count = data;

  g_atomic_int_inc (count);
}

static void
gateway_audit_cb (SandboxHandle       *handle,
                  SandboxGatewayEvent *event,
                  gpointer             data)
{
  GString *log = data;
  g_autofree char *decision = g_enum_to_string (SANDBOX_TYPE_GATEWAY_DECISION,
                                                sandbox_gateway_event_get_decision (event));

  g_string_append_printf (log, "%s %s %s %s|",
                          sandbox_gateway_event_get_method (event),
                          sandbox_gateway_event_get_host (event),
                          sandbox_gateway_event_get_path (event),
                          decision);
}

/* A loopback port nothing listens on. */
static guint16
closed_loopback_port (void)
{
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  g_assert_true (g_socket_bind (socket, address, TRUE, NULL));
  bound = g_socket_get_local_address (socket, NULL);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

static void
test_allow_list_binds_gateway (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  guint16 port = closed_loopback_port ();
  g_autofree char *json = g_strdup_printf ("{\"allow\":[{\"origin\":\"http://127.0.0.1:%u\","
                                           "\"headers\":{\"x-token\":\"host-only\"}}]}", port);
  g_autoptr(SandboxNetworkPolicy) allow_list = sandbox_network_policy_new_from_json (json, &error);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autofree char *denied = NULL;
  g_autofree char *failed = NULL;
  g_autofree char *request = NULL;
  guint gateway_errors = 0;
  g_autoptr(GString) audit = g_string_new (NULL);
  g_autofree char *expected_failure = NULL;

  g_assert_no_error (error);
  g_signal_connect (fixture->handle, "gateway-audit", G_CALLBACK (gateway_audit_cb), audit);
  g_assert_cmpstr (sandbox_session_get_gateway_socket (fixture->session), ==,
                   SANDBOX_GATEWAY_GUEST_SOCKET);
  /* deny-all binds no socket at all. */
  g_assert_cmpint (guest_status (fixture->session, "test -e /run/sandbox-network.sock"), ==, 1);

  g_assert_true (sandbox_session_set_network_policy (fixture->session, allow_list, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (guest_status (fixture->session, "test -S /run/sandbox-network.sock"), ==, 0);
  g_signal_connect (fixture->backend, "gateway-error", G_CALLBACK (gateway_error_cb),
                    &gateway_errors);

  /* A host that is not allowed: 403 from the gateway. */
  denied = guest_sh (fixture->session,
                     "curl -s -o /dev/null -w '%{http_code}' --unix-socket "
                     "/run/sandbox-network.sock http://example.com/");
  g_assert_cmpstr (denied, ==, "403");
  /* The allowed origin is down: 502, and the cause reaches gateway-error. */
  request = g_strdup_printf ("curl -s -o /dev/null -w '%%{http_code}' --unix-socket "
                             "/run/sandbox-network.sock http://127.0.0.1:%u/", port);
  failed = guest_sh (fixture->session, request);
  g_assert_cmpstr (failed, ==, "502");
  /* Emitted in the context of the thread that started the gateway. */
  for (guint i = 0; i < 200 && g_atomic_int_get (&gateway_errors) == 0; i++)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (10 * 1000);
    }
  g_assert_cmpuint (g_atomic_int_get (&gateway_errors), >, 0);

  /* The handle relays the gateway's audit stream: one event per request,
   * in order, each with its decision. */
  expected_failure = g_strdup_printf ("GET 127.0.0.1:%u / SANDBOX_GATEWAY_DECISION_FAILED|", port);
  for (guint i = 0; i < 200 && strstr (audit->str, expected_failure) == NULL; i++)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (10 * 1000);
    }
  g_assert_nonnull (strstr (audit->str, "GET example.com / SANDBOX_GATEWAY_DECISION_DENIED|"));
  g_assert_nonnull (strstr (audit->str, expected_failure));
  g_assert_null (strstr (audit->str, "host-only"));
  g_signal_handlers_disconnect_by_func (fixture->handle, gateway_audit_cb, audit);
  /* Still no network namespace of the host's. */
  g_assert_cmpint (guest_status (fixture->session, "getent hosts example.com"), !=, 0);

  g_assert_true (sandbox_session_set_network_policy (fixture->session, deny, NULL, &error));
  g_assert_cmpint (guest_status (fixture->session, "test -e /run/sandbox-network.sock"), ==, 1);
  g_signal_handlers_disconnect_by_func (fixture->backend, gateway_error_cb, &gateway_errors);
}

/* Greps @root (recursively, without following links) for @needle on the host. */
static gboolean
host_tree_contains (const char *root,
                    const char *needle)
{
  g_autoptr(GDir) dir = g_dir_open (root, 0, NULL);
  const char *name;

  if (dir == NULL)
    return FALSE;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (root, name, NULL);
      g_autofree char *contents = NULL;
      gsize length;

      if (g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        continue;
      if (g_file_test (path, G_FILE_TEST_IS_DIR))
        {
          if (host_tree_contains (path, needle))
            return TRUE;
        }
      else if (g_file_test (path, G_FILE_TEST_IS_REGULAR) &&
               g_file_get_contents (path, &contents, &length, NULL) &&
               g_strstr_len (contents, length, needle) != NULL)
        return TRUE;
    }
  return FALSE;
}

static void
test_credentials_never_reach_the_guest (Fixture       *fixture,
                                        gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *secret = unique_token ();
  guint16 port = closed_loopback_port ();
  g_autofree char *json = g_strdup_printf ("{\"allow\":[{\"origin\":\"http://127.0.0.1:%u\","
                                           "\"headers\":{\"authorization\":\"Bearer %s\"}}]}",
                                           port, secret);
  g_autoptr(SandboxNetworkPolicy) allow_list = sandbox_network_policy_new_from_json (json, &error);
  g_autofree char *request = NULL;
  g_autofree char *status = NULL;
  g_autoptr(SandboxCommand) scan = NULL;
  g_autoptr(GBytes) pattern = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autofree char *state_json = NULL;
  g_autofree char *found = NULL;

  g_assert_no_error (error);
  g_assert_true (sandbox_session_set_network_policy (fixture->session, allow_list, NULL, &error));
  g_assert_no_error (error);

  /* A request goes through the gateway, which injects the credential. */
  request = g_strdup_printf ("curl -s -o /dev/null -w '%%{http_code}' --unix-socket "
                             "/run/sandbox-network.sock http://127.0.0.1:%u/", port);
  status = guest_sh (fixture->session, request);
  g_assert_cmpstr (status, ==, "502");

  /* The guest looks everywhere it can: every process's environment and
   * command line, the workspace, /run, /etc and /tmp. The secret reaches the
   * scan on stdin, so it is in no command line or environment itself. */
  scan = COMMAND ("/usr/bin/sh", "-c",
                  "cat > /tmp/.pattern; "
                  "grep -rslF -f /tmp/.pattern /proc/[0-9]*/environ /proc/[0-9]*/cmdline "
                  "/workspace /run /etc 2>/dev/null; "
                  "find /tmp -type f ! -name .pattern -exec grep -slF -f /tmp/.pattern {} +; "
                  "echo END");
  pattern = g_bytes_new (secret, strlen (secret));
  sandbox_command_set_stdin (scan, pattern);
  result = sandbox_session_run (fixture->session, scan, NULL, &error);
  g_assert_no_error (error);
  found = sandbox_result_dup_stdout_text (result);
  g_assert_cmpstr (found, ==, "END\n");

  /* Nor is it in the saved state, or anywhere in the state directory. */
  state = sandbox_handle_capture_state (fixture->handle, &error);
  g_assert_no_error (error);
  state_json = sandbox_state_to_json (state);
  g_assert_null (strstr (state_json, secret));
  g_assert_false (host_tree_contains (fixture->state_directory, secret));
}

static void
test_deny_all_guest_cannot_reach_another_gateway (Fixture       *fixture,
                                                  gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) allow_list =
    sandbox_network_policy_new_from_json ("{\"allow\":[{\"origin\":\"http://127.0.0.1:9\"}]}",
                                          &error);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) other = NULL;
  g_autoptr(GDir) tmp = NULL;
  const char *name;
  guint sockets = 0;

  g_assert_no_error (error);
  /* This session serves a gateway on a host socket… */
  g_assert_true (sandbox_session_set_network_policy (fixture->session, allow_list, NULL, &error));
  g_assert_no_error (error);

  /* …which a deny-all guest of another session cannot reach by any of the
   * host paths gateway sockets live at. */
  other = sandbox_backend_create (fixture->backend, fixture->template_key, NULL, deny, NULL, &error);
  g_assert_no_error (error);
  tmp = g_dir_open (g_get_tmp_dir (), 0, NULL);
  g_assert_nonnull (tmp);
  while ((name = g_dir_read_name (tmp)) != NULL)
    {
      g_autofree char *socket_path = NULL;
      g_autofree char *script = NULL;

      if (!g_str_has_prefix (name, "sandbox-gw-"))
        continue;
      socket_path = g_build_filename (g_get_tmp_dir (), name, "network.sock", NULL);
      if (!g_file_test (socket_path, G_FILE_TEST_EXISTS))
        continue;
      sockets++;
      script = g_strdup_printf ("test ! -e '%s' && "
                                "! curl -s --max-time 5 --unix-socket '%s' http://127.0.0.1:9/ "
                                "&& ! test -e /run/sandbox-network.sock",
                                socket_path, socket_path);
      g_assert_cmpint (guest_status (sandbox_handle_get_session (other), script), ==, 0);
    }
  g_assert_cmpuint (sockets, >, 0);

  g_assert_true (sandbox_handle_delete (other, NULL, &error));
  g_assert_no_error (error);
}

static void
test_file_limits_and_paths (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree guint8 *big = g_malloc0 (SANDBOX_MAX_FILE_BYTES + 1);
  g_autoptr(GBytes) too_big = g_bytes_new_take (g_steal_pointer (&big), SANDBOX_MAX_FILE_BYTES + 1);
  g_autoptr(GBytes) nested = g_bytes_new_static ("deep", 4);
  g_autoptr(GBytes) read_back = NULL;
  g_autofree char *listing = NULL;

  g_assert_false (sandbox_session_write_bytes (fixture->session, "big", too_big, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_clear_error (&error);

  g_assert_null (sandbox_session_read_bytes (fixture->session, "../etc/passwd", NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_clear_error (&error);

  /* Writes create parent directories; the guest sees the file. */
  g_assert_true (sandbox_session_write_bytes (fixture->session, "a/b/c.txt", nested, NULL, &error));
  g_assert_no_error (error);
  listing = guest_sh (fixture->session, "cat /workspace/a/b/c.txt");
  g_assert_cmpstr (listing, ==, "deep");
  read_back = sandbox_session_read_bytes (fixture->session, "/workspace/a/b/c.txt", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (read_back, nested));
  g_assert_true (sandbox_session_remove_path (fixture->session, "a", NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (guest_status (fixture->session, "test -e /workspace/a"), ==, 1);
}

/* Commands ----------------------------------------------------------------------- */

static void
test_exit_status_and_stdin (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxResult) killed = NULL;
  g_autoptr(SandboxResult) unread = NULL;
  g_autoptr(GBytes) input = g_bytes_new_static ("piped in", 8);
  g_autofree guint8 *large = g_malloc0 (4 * 1024 * 1024);
  g_autoptr(GBytes) large_input = g_bytes_new_take (g_steal_pointer (&large), 4 * 1024 * 1024);
  SandboxCommand *command;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  command = COMMAND ("/usr/bin/sh", "-c", "cat; echo oops >&2; exit 7");
  sandbox_command_set_stdin (command, input);
  result = run_command (fixture->session, command, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 7);
  out = sandbox_result_dup_stdout_text (result);
  err = sandbox_result_dup_stderr_text (result);
  g_assert_cmpstr (out, ==, "piped in");
  g_assert_cmpstr (err, ==, "oops\n");

  killed = run_command (fixture->session, COMMAND ("/usr/bin/sh", "-c", "kill -TERM $$"), &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (killed), ==, 128 + 15);

  /* A guest that never reads a large stdin: EPIPE is not an error. */
  command = COMMAND ("/usr/bin/true");
  sandbox_command_set_stdin (command, large_input);
  unread = run_command (fixture->session, command, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (unread), ==, 0);
}

static void
test_options_after_separator_are_the_command (Fixture       *fixture,
                                              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) echoed = NULL;
  g_autoptr(SandboxResult) named = NULL;
  g_autofree char *out = NULL;
  g_autofree char *ran = NULL;
  SandboxCommand *command;

  echoed = run_command (fixture->session,
                        COMMAND ("/usr/bin/echo", "--bind", "/", "/", "--dev-bind", "/dev", "/dev"),
                        &error);
  g_assert_no_error (error);
  out = sandbox_result_dup_stdout_text (echoed);
  g_assert_cmpstr (out, ==, "--bind / / --dev-bind /dev /dev\n");

  /* An executable literally named --dev-bind is run as a program. */
  g_free (guest_sh (fixture->session,
                    "printf '#!/bin/sh\\necho ran as a program \"$@\"\\n' > /workspace/--dev-bind;"
                    "chmod +x /workspace/--dev-bind"));
  command = COMMAND ("--dev-bind", "/", "/");
  sandbox_command_setenv (command, "PATH", "/workspace");
  named = run_command (fixture->session, command, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (named), ==, 0);
  ran = sandbox_result_dup_stdout_text (named);
  g_assert_cmpstr (ran, ==, "ran as a program / /\n");
}

static void
test_only_stdio_reaches_guest (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autofree char *fds = NULL;
  int leaked = open ("/dev/null", O_RDONLY);   /* not close-on-exec */

  g_assert_cmpint (leaked, >=, 0);
  fds = guest_sh (fixture->session, "cd /proc/self/fd && echo *");
  /* The shell's glob runs in the shell itself: 0 1 2 and its own dir fd. */
  g_assert_true (g_str_equal (fds, "0 1 2 3\n") || g_str_equal (fds, "0 1 2\n"));
  close (leaked);
}

static void
test_environment_is_cleared (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autofree char *out = NULL;
  SandboxCommand *command;

  g_setenv ("SANDBOX_TEST_HOST_SECRET", "host-secret-value", TRUE);
  command = COMMAND ("/usr/bin/env");
  sandbox_command_setenv (command, "GREETING", "hi there");
  result = run_command (fixture->session, command, &error);
  g_assert_no_error (error);
  out = sandbox_result_dup_stdout_text (result);
  g_assert_cmpstr (out, ==, "PATH=/usr/bin:/bin\nHOME=/workspace\nGREETING=hi there\n"
                   "PWD=/workspace\n");   /* bwrap sets PWD at --chdir */
  g_unsetenv ("SANDBOX_TEST_HOST_SECRET");
}

static char *
host_namespace (const char *kind)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/ns/%s", kind);

  return g_file_read_link (path, NULL);
}

static void
test_namespaces_differ_from_host (Fixture       *fixture,
                                  gconstpointer  data)
{
  const char *kinds[] = { "user", "pid", "ipc", "uts", "net", "mnt" };
  g_autofree char *out = guest_sh (fixture->session,
                                   "for k in user pid ipc uts net mnt; do "
                                   "readlink /proc/self/ns/$k; done");
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

  g_assert_cmpuint (g_strv_length (lines), ==, G_N_ELEMENTS (kinds) + 1);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_autofree char *host = host_namespace (kinds[i]);

      g_assert_nonnull (host);
      g_assert_true (g_str_has_prefix (lines[i], kinds[i]));
      g_assert_cmpstr (lines[i], !=, host);
    }
}

static void
test_containment (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *run_listing = NULL;
  g_autofree char *home_check = NULL;
  const char *home = g_get_home_dir ();

  /* /etc is the curated one (issue 21; tests/escape/test-escape-runtime.c),
   * never the host's: no shadow, no host users, no host configuration. */
  g_assert_cmpint (guest_status (fixture->session, "test -e /etc/shadow"), ==, 1);
  g_assert_cmpint (guest_status (fixture->session, "grep -q '^root:x:0:0:root:/root:' /etc/passwd"),
                   !=, 0);
  g_assert_cmpint (guest_status (fixture->session, "test -e /etc/fstab || test -e /etc/os-release"),
                   ==, 1);
  home_check = g_strdup_printf ("test -e '%s'", home);
  if (!g_str_has_prefix (home, "/usr") && g_strcmp0 (home, "/") != 0)
    g_assert_cmpint (guest_status (fixture->session, home_check), ==, 1);
  g_assert_cmpint (guest_status (fixture->session, "touch /usr/sandbox-escape"), !=, 0);
  g_assert_false (g_file_test ("/usr/sandbox-escape", G_FILE_TEST_EXISTS));
  g_assert_cmpint (guest_status (fixture->session, "test -e /var/run/dbus || test -e /tmp/.X11-unix"),
                   ==, 1);
  run_listing = guest_sh (fixture->session, "ls -A /run");
  g_assert_cmpstr (run_listing, ==, "");

  /* /tmp is fresh for every command. */
  g_free (guest_sh (fixture->session, "echo x > /tmp/left-behind"));
  g_assert_cmpint (guest_status (fixture->session, "test -e /tmp/left-behind"), ==, 1);
  /* The workspace is writable and persists. */
  g_free (guest_sh (fixture->session, "echo kept > /workspace/kept"));
  g_assert_cmpint (guest_status (fixture->session, "test -e /workspace/kept"), ==, 0);
}

static void
test_deny_all_has_no_network (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(GSocketListener) listener = g_socket_listener_new ();
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *script = NULL;
  g_autoptr(GSocket) control = NULL;
  guint16 port;

  g_assert_true (g_socket_listener_add_address (listener, address, G_SOCKET_TYPE_STREAM,
                                                G_SOCKET_PROTOCOL_TCP, NULL, &bound, &error));
  g_assert_no_error (error);
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));

  /* The server is reachable from the host… */
  control = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_assert_true (g_socket_connect (control, bound, NULL, &error));
  g_assert_no_error (error);

  /* …but not from the guest, and there is no DNS. */
  script = g_strdup_printf ("echo hi > /dev/tcp/127.0.0.1/%u", port);
  {
    g_autoptr(SandboxResult) result =
      run_command (fixture->session, COMMAND ("/usr/bin/bash", "-c", script), &error);

    g_assert_no_error (error);
    g_assert_cmpint (sandbox_result_get_exit_status (result), !=, 0);
  }
  g_assert_cmpint (guest_status (fixture->session, "getent hosts example.com"), !=, 0);
  g_assert_cmpint (guest_status (fixture->session, "test -e /etc/resolv.conf"), ==, 1);
}

static void
test_allow_all_shares_network (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) allow_all = sandbox_network_policy_new_allow_all ();
  g_autoptr(GError) error = NULL;
  g_autofree char *guest_net = NULL;
  g_autofree char *host_net = host_namespace ("net");

  g_assert_true (sandbox_session_set_network_policy (fixture->session, allow_all, NULL, &error));
  g_assert_no_error (error);
  guest_net = guest_sh (fixture->session, "readlink /proc/self/ns/net");
  g_strchomp (guest_net);
  g_assert_cmpstr (guest_net, ==, host_net);
}

typedef struct
{
  GMainLoop *loop;
  GString *streamed;
  SandboxResult *result;
  GError *error;
} StreamData;

static void
stdout_data_cb (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  StreamData *stream = user_data;

  g_string_append_len (stream->streamed, g_bytes_get_data (data, NULL), g_bytes_get_size (data));
}

static void
wait_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  StreamData *stream = user_data;

  stream->result = sandbox_process_wait_finish (SANDBOX_PROCESS (object), result, &stream->error);
  g_main_loop_quit (stream->loop);
}

static void
test_output_streams_live (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  StreamData stream = { g_main_loop_new (NULL, FALSE), g_string_new (NULL), NULL, NULL };

  process = spawn_owned (fixture->session,
                                   COMMAND ("/usr/bin/sh", "-c", "echo one; sleep 0.2; echo two"),
                                   NULL, &error);
  g_assert_no_error (error);
  g_signal_connect (process, "stdout-data", G_CALLBACK (stdout_data_cb), &stream);
  sandbox_process_wait_async (process, NULL, wait_done_cb, &stream);
  g_main_loop_run (stream.loop);
  g_assert_no_error (stream.error);
  g_assert_cmpstr (stream.streamed->str, ==, "one\ntwo\n");
  g_assert_cmpint (sandbox_result_get_exit_status (stream.result), ==, 0);
  g_object_unref (stream.result);
  g_string_free (stream.streamed, TRUE);
  g_main_loop_unref (stream.loop);
}

/* Teardown leaves nothing behind ------------------------------------------------ */

static void
test_deadline_kills_daemons (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autofree char *token = unique_token ();
  g_autofree char *daemon = g_strdup_printf ("%s-daemon", token);
  SandboxCommand *command = daemon_command (fixture->session, token);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = NULL;

  sandbox_command_set_timeout_ms (command, 1000);
  result = run_command (fixture->session, command, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox command deadline exceeded");
  assert_no_processes_with (token);
}

static void
test_output_cap_kills_daemons (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autofree char *token = unique_token ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autofree char *script =
    g_strdup_printf ("/usr/bin/sh /workspace/daemon.sh %s > /dev/null & sleep 0.5; "
                     "while :; do echo flooding; done", token);

  g_object_unref (daemon_command (fixture->session, token));
  process = spawn_owned (fixture->session, COMMAND ("/usr/bin/sh", "-c", script),
                                   NULL, &error);
  g_assert_no_error (error);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox output limit exceeded");
  assert_no_processes_with (token);
}

static void
test_cancel_kills_daemons (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autofree char *token = unique_token ();
  g_autofree char *daemon = g_strdup_printf ("%s-daemon", token);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;

  process = spawn_owned (fixture->session, daemon_command (fixture->session, token),
                                   cancellable, &error);
  g_assert_no_error (error);
  wait_for_processes_with (daemon);
  g_cancellable_cancel (cancellable);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  assert_no_processes_with (token);
}

static void
test_stop_kills_daemons (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autofree char *token = unique_token ();
  g_autofree char *daemon = g_strdup_printf ("%s-daemon", token);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxProcess) second = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autofree char *token2 = unique_token ();

  process = spawn_owned (fixture->session, daemon_command (fixture->session, token),
                                   NULL, &error);
  g_assert_no_error (error);
  wait_for_processes_with (daemon);
  g_assert_true (sandbox_process_stop (process, NULL, &error));
  assert_no_processes_with (token);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 137);

  /* Stopping the session kills its commands the same way. */
  second = spawn_owned (fixture->session, daemon_command (fixture->session, token2),
                                  NULL, &error);
  g_assert_no_error (error);
  wait_for_processes_with (token2);
  g_assert_true (sandbox_handle_stop (fixture->handle, NULL, &error));
  assert_no_processes_with (token2);
}

static void
test_stop_right_after_spawn (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autofree char *token = unique_token ();
  g_autoptr(GError) error = NULL;
  GRand *rand = g_rand_new ();

  g_object_unref (daemon_command (fixture->session, token));
  for (guint i = 0; i < 200; i++)
    {
      g_autoptr(SandboxProcess) process = NULL;

      process = spawn_owned (fixture->session,
                                       COMMAND ("/usr/bin/sh", "/workspace/daemon.sh", token),
                                       NULL, &error);
      g_assert_no_error (error);
      g_usleep (g_rand_int_range (rand, 0, 20 * 1000));
      g_assert_true (sandbox_process_stop (process, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (sandbox_process_is_finished (process));
    }
  g_rand_free (rand);
  /* bwrap's own command line names the token too: nothing at all is left. */
  assert_no_processes_with (token);
}

typedef struct
{
  SandboxSession *session;
  SandboxProcess *process;
} SpawnInThread;

static gpointer
spawn_in_thread (gpointer data)
{
  SpawnInThread *spawn = data;
  g_autoptr(GError) error = NULL;

  spawn->process = spawn_owned (spawn->session,
                                          COMMAND ("/usr/bin/sh", "-c", "sleep 1; echo survived"),
                                          NULL, &error);
  g_assert_no_error (error);
  return NULL;
}

static void
test_spawning_thread_may_exit (Fixture       *fixture,
                               gconstpointer  data)
{
  SpawnInThread spawn = { fixture->session, NULL };
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  g_thread_join (g_thread_new ("short-lived", spawn_in_thread, &spawn));
  result = sandbox_process_wait (spawn.process, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  out = sandbox_result_dup_stdout_text (result);
  g_assert_cmpstr (out, ==, "survived\n");
  g_object_unref (spawn.process);
}

static void
test_admission_limit (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(GPtrArray) live = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) refused = NULL;
  g_autoptr(SandboxProcess) admitted = NULL;
  g_autofree char *token = unique_token ();
  SandboxProcess *first;

  g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (fixture->backend), ==, 8);
  for (guint i = 0; i < 8; i++)
    {
      SandboxProcess *process =
        spawn_owned (fixture->session,
                               COMMAND ("/usr/bin/sh", "-c", "sleep 30", token), NULL, &error);

      g_assert_no_error (error);
      g_ptr_array_add (live, process);
    }

  refused = spawn_owned (fixture->session, COMMAND ("/usr/bin/true"), NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Sandbox command concurrency limit reached");
  g_clear_error (&error);

  g_assert_false (sandbox_session_set_network_policy (fixture->session, deny, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Stop live commands before changing network policy");
  g_clear_error (&error);

  /* A slot frees once a command is completely gone. */
  first = g_ptr_array_index (live, 0);
  g_assert_true (sandbox_process_stop (first, NULL, &error));
  admitted = spawn_owned (fixture->session, COMMAND ("/usr/bin/true"), NULL, &error);
  g_assert_no_error (error);
  g_object_unref (sandbox_process_wait (admitted, NULL, &error));

  g_assert_true (sandbox_handle_stop (fixture->handle, NULL, &error));
  assert_no_processes_with (token);
}

/* Contained file I/O against a hostile guest ---------------------------------- */

static void
assert_read_refused (SandboxSession *session,
                     const char     *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = sandbox_session_read_bytes (session, path, NULL, &error);

  g_assert_null (bytes);
  g_assert_nonnull (error);
}

static void
test_planted_symlinks_stay_inside (Fixture       *fixture,
                                   gconstpointer  data)
{
  g_autofree char *host_dir = g_dir_make_tmp ("sandbox-host-XXXXXX", NULL);
  g_autofree char *host_file = g_build_filename (host_dir, "precious", NULL);
  g_autofree char *evil = g_build_filename (host_dir, "evil", NULL);
  g_autofree char *plant = NULL;
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *session_dir = g_build_filename (fixture->state_directory, digest, "sessions",
                                                   sandbox_session_get_id (fixture->session), NULL);
  g_autofree char *outside = g_build_filename (session_dir, "escaped", NULL);
  g_autoptr(GBytes) payload = g_bytes_new_static ("payload", 7);
  g_autoptr(GError) error = NULL;
  g_autofree char *precious = NULL;

  g_assert_true (g_file_set_contents (host_file, "keep me", -1, NULL));
  /* The guest cannot see host_dir, but it can name it in a link. */
  plant = g_strdup_printf ("cd /workspace && ln -s /etc/passwd passwd && ln -s .. up && "
                           "ln -s '%s' hostdir && ln -s '%s' hostfile && ln -s up/escaped esc",
                           host_dir, host_file);
  g_free (guest_sh (fixture->session, plant));

  assert_read_refused (fixture->session, "passwd");
  assert_read_refused (fixture->session, "up/state.json");
  assert_read_refused (fixture->session, "hostfile");
  assert_read_refused (fixture->session, "hostdir/precious");

  g_assert_false (sandbox_session_write_bytes (fixture->session, "hostdir/evil", payload, NULL, &error));
  g_clear_error (&error);
  g_assert_false (sandbox_session_write_bytes (fixture->session, "up/escaped", payload, NULL, &error));
  g_clear_error (&error);
  sandbox_session_write_bytes (fixture->session, "esc", payload, NULL, &error);
  g_clear_error (&error);
  g_assert_false (g_file_test (evil, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (outside, G_FILE_TEST_EXISTS));

  /* Removing a link removes the link, never its target. */
  g_assert_true (sandbox_session_remove_path (fixture->session, "hostdir", NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_session_remove_path (fixture->session, "up", NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (host_file, &precious, NULL, NULL));
  g_assert_cmpstr (precious, ==, "keep me");
  g_assert_true (g_file_test (session_dir, G_FILE_TEST_IS_DIR));

  /* Deleting the session must not follow the remaining links either. */
  g_assert_true (sandbox_handle_delete (fixture->handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&fixture->handle);
  g_assert_true (g_file_test (host_file, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test ("/etc/passwd", G_FILE_TEST_IS_REGULAR));
}

static void
test_swapped_symlink_race (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) swapper = NULL;
  g_autoptr(GBytes) payload = g_bytes_new_static ("written", 7);
  g_autofree char *passwd = NULL;
  guint reads_ok = 0;
  gint64 end;

  g_assert_true (g_file_get_contents ("/etc/passwd", &passwd, NULL, NULL));
  g_free (guest_sh (fixture->session, "cd /workspace && echo inside > real && ln -s real swap"));
  swapper = spawn_owned (fixture->session,
                                   COMMAND ("/usr/bin/sh", "-c",
                                            "cd /workspace; while :; do "
                                            "ln -sfn /etc/passwd tmp1 && mv -T tmp1 swap; "
                                            "ln -sfn real tmp2 && mv -T tmp2 swap; done"),
                                   NULL, &error);
  g_assert_no_error (error);

  end = g_get_monotonic_time () + G_USEC_PER_SEC;
  while (g_get_monotonic_time () < end)
    {
      g_autoptr(GBytes) bytes = sandbox_session_read_bytes (fixture->session, "swap", NULL, NULL);

      if (bytes != NULL)
        {
          g_autofree char *text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));

          /* The link's in-workspace target, or the file our write put there. */
          g_assert_true (g_str_equal (text, "inside\n") || g_str_equal (text, "written"));
          reads_ok++;
        }
      sandbox_session_write_bytes (fixture->session, "swap", payload, NULL, NULL);
    }
  g_assert_true (sandbox_process_stop (swapper, NULL, &error));
  g_assert_true (g_file_test ("/etc/passwd", G_FILE_TEST_IS_REGULAR));
  {
    g_autofree char *after = NULL;

    g_assert_true (g_file_get_contents ("/etc/passwd", &after, NULL, NULL));
    g_assert_cmpstr (after, ==, passwd);
  }
  g_test_message ("%u reads got the in-workspace target", reads_ok);
}

static void
test_special_files_fail_promptly (Fixture       *fixture,
                                  gconstpointer  data)
{
  gint64 start;

  g_free (guest_sh (fixture->session,
                    "cd /workspace && mkfifo fifo && truncate -s 10G sparse && ln hello.txt hard"));
  start = g_get_monotonic_time ();
  assert_read_refused (fixture->session, "fifo");
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);

  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) bytes = sandbox_session_read_bytes (fixture->session, "sparse", NULL, &error);

    g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
    g_assert_null (bytes);
  }

  if (g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_free (guest_sh (fixture->session,
                        "cd /workspace && /usr/bin/python3 -c "
                        "'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")'"));
      start = g_get_monotonic_time ();
      assert_read_refused (fixture->session, "sock");
      g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
    }

  /* A file hard-linked by the guest is replaced, not written through. */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) payload = g_bytes_new_static ("replaced", 8);
    g_autoptr(GBytes) original = NULL;

    g_assert_true (sandbox_session_write_bytes (fixture->session, "hard", payload, NULL, &error));
    g_assert_no_error (error);
    original = sandbox_session_read_bytes (fixture->session, "hello.txt", NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpmem (g_bytes_get_data (original, NULL), g_bytes_get_size (original), "hello", 5);
  }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define FIXTURE_TEST(path, func) \
  g_test_add ("/sandbox/bubblewrap/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  g_test_add_func ("/sandbox/bubblewrap/template-keys-conformance", test_template_keys_conformance);
  g_test_add_func ("/sandbox/bubblewrap/prewarm-from-directory", test_prewarm_from_directory);
  g_test_add_func ("/sandbox/bubblewrap/guide-example-flow", test_guide_example_flow);
  g_test_add_func ("/sandbox/bubblewrap/backend-validation", test_backend_validation);
  g_test_add_func ("/sandbox/bubblewrap/isolation-failure-is-unavailable",
                   test_isolation_failure_is_unavailable);
  FIXTURE_TEST ("store-layout-and-modes", test_store_layout_and_modes);
  FIXTURE_TEST ("concurrent-attach-is-busy", test_concurrent_attach_is_busy);
  FIXTURE_TEST ("last-unref-stops", test_last_unref_stops);
  FIXTURE_TEST ("stopped-session-refuses", test_stopped_session_refuses);
  FIXTURE_TEST ("create-errors", test_create_errors);
  FIXTURE_TEST ("allow-list-binds-gateway", test_allow_list_binds_gateway);
  FIXTURE_TEST ("credentials-never-reach-the-guest", test_credentials_never_reach_the_guest);
  FIXTURE_TEST ("deny-all-guest-cannot-reach-another-gateway",
                test_deny_all_guest_cannot_reach_another_gateway);
  FIXTURE_TEST ("file-limits-and-paths", test_file_limits_and_paths);
  FIXTURE_TEST ("exit-status-and-stdin", test_exit_status_and_stdin);
  FIXTURE_TEST ("options-after-separator-are-the-command",
                test_options_after_separator_are_the_command);
  FIXTURE_TEST ("only-stdio-reaches-guest", test_only_stdio_reaches_guest);
  FIXTURE_TEST ("environment-is-cleared", test_environment_is_cleared);
  FIXTURE_TEST ("namespaces-differ-from-host", test_namespaces_differ_from_host);
  FIXTURE_TEST ("containment", test_containment);
  FIXTURE_TEST ("deny-all-has-no-network", test_deny_all_has_no_network);
  FIXTURE_TEST ("allow-all-shares-network", test_allow_all_shares_network);
  FIXTURE_TEST ("output-streams-live", test_output_streams_live);
  FIXTURE_TEST ("deadline-kills-daemons", test_deadline_kills_daemons);
  FIXTURE_TEST ("output-cap-kills-daemons", test_output_cap_kills_daemons);
  FIXTURE_TEST ("cancel-kills-daemons", test_cancel_kills_daemons);
  FIXTURE_TEST ("stop-kills-daemons", test_stop_kills_daemons);
  FIXTURE_TEST ("stop-right-after-spawn", test_stop_right_after_spawn);
  FIXTURE_TEST ("spawning-thread-may-exit", test_spawning_thread_may_exit);
  FIXTURE_TEST ("admission-limit", test_admission_limit);
  FIXTURE_TEST ("planted-symlinks-stay-inside", test_planted_symlinks_stay_inside);
  FIXTURE_TEST ("swapped-symlink-race", test_swapped_symlink_race);
  FIXTURE_TEST ("special-files-fail-promptly", test_special_files_fail_promptly);

  return g_test_run ();
}
