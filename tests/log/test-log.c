/* test-log.c — the lifecycle events as structured log messages, captured
 * with a log writer, over the memory driver and real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>
#include <string.h>

#include <sandbox.h>

/* A credential the host injects: it must never appear in any field of any
 * message, whatever the level. */
#define SECRET_FRAGMENT "s3cr3t-t0ken"
#define SECRET_VALUE "Bearer " SECRET_FRAGMENT "-never-logged"
#define SECRET_HEADER "X-Upstream-Token"

static const char memory_script[] =
  "{\"commands\": ["
  "  {\"match\": {\"executable\": \"/usr/bin/true\"}},"
  "  {\"match\": {\"executable\": \"/bin/forever\"}, \"fault\": \"never-ends\"},"
  "  {\"match\": {\"executable\": \"/bin/flood\"}, \"fault\": \"output-flood\"}"
  "]}";

/* Every message the process logged since the last capture_reset(), each as
 * its fields, in order; and every field that ever held the header value. */
static GMutex captured_lock;
static GPtrArray *captured;   /* (element-type GHashTable) */
static GString *leaks;

static GLogWriterOutput
capture_writer (GLogLevelFlags   level,
                const GLogField *fields,
                gsize            n_fields,
                gpointer         user_data)
{
  GHashTable *message = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  GHashTableIter iter;
  gpointer key, value;

  for (gsize i = 0; i < n_fields; i++)
    {
      gsize length = fields[i].length < 0 ? strlen (fields[i].value) : (gsize) fields[i].length;

      g_hash_table_insert (message, g_strdup (fields[i].key),
                           g_strndup (fields[i].value, length));
    }
  g_mutex_lock (&captured_lock);
  g_hash_table_iter_init (&iter, message);
  while (g_hash_table_iter_next (&iter, &key, &value))
    if (strstr (value, SECRET_FRAGMENT) != NULL)
      g_string_append_printf (leaks, "%s=%s\n", (char *) key, (char *) value);
  g_ptr_array_add (captured, message);
  g_mutex_unlock (&captured_lock);

  /* Warnings and worse still show (and abort where the test says so). */
  if (level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    return g_log_writer_default (level, fields, n_fields, user_data);
  return G_LOG_WRITER_HANDLED;
}

static void
capture_reset (void)
{
  g_mutex_lock (&captured_lock);
  g_ptr_array_set_size (captured, 0);
  g_mutex_unlock (&captured_lock);
}

static const char *
field (GHashTable *message,
       const char *key)
{
  return g_hash_table_lookup (message, key);
}

/* The first captured "Sandbox" message with SANDBOX_EVENT @event (and, if
 * given, SANDBOX_ERROR @error_name; "" for none), or NULL. */
static GHashTable *
find_event (const char *event,
            const char *error_name)
{
  GHashTable *found = NULL;

  g_mutex_lock (&captured_lock);
  for (guint i = 0; i < captured->len && found == NULL; i++)
    {
      GHashTable *message = g_ptr_array_index (captured, i);

      if (g_strcmp0 (field (message, "GLIB_DOMAIN"), "Sandbox") == 0 &&
          g_strcmp0 (field (message, "SANDBOX_EVENT"), event) == 0 &&
          (error_name == NULL ||
           g_strcmp0 (field (message, "SANDBOX_ERROR"), error_name[0] ? error_name : NULL) == 0))
        found = message;
    }
  g_mutex_unlock (&captured_lock);
  return found;
}

static GHashTable *
expect_event (const char   *event,
              const char   *error_name,
              const char   *driver,
              SandboxState *state,
              const char   *priority)
{
  GHashTable *message = find_event (event, error_name);

  if (message == NULL)
    g_error ("no %s event (error %s) was logged", event, error_name ? error_name : "any");
  if (g_strcmp0 (field (message, "SANDBOX_DRIVER"), driver) != 0)
    g_error ("%s event: driver %s, not %s (%s)", event, field (message, "SANDBOX_DRIVER"),
             driver, field (message, "MESSAGE"));
  g_assert_cmpstr (field (message, "PRIORITY"), ==, priority);
  g_assert_nonnull (field (message, "MESSAGE"));
  if (state != NULL)
    {
      g_assert_cmpstr (field (message, "SANDBOX_SESSION_ID"), ==,
                       sandbox_state_get_session_id (state));
      g_assert_cmpstr (field (message, "SANDBOX_TEMPLATE_KEY"), ==,
                       sandbox_state_get_template_key (state));
    }
  return message;
}

/* The attack: a header value set on an allow-list rule, looked for in every
 * field of every message of any level and domain. Log the policy with its
 * values in sandbox_log_policy_changed() (for instance append
 * sandbox_network_policy_get_rule (policy, 0)->header_values[0] to the
 * redacted JSON there) and both lifecycle tests fail here. */
static void
assert_secret_never_logged (void)
{
  g_autofree char *leaked = NULL;

  /* Not under the lock: g_error() logs through capture_writer(). */
  g_mutex_lock (&captured_lock);
  leaked = g_strdup (leaks->str);
  g_mutex_unlock (&captured_lock);
  if (leaked[0] != '\0')
    g_error ("the header value was logged:\n%s", leaked);
}

static SandboxNetworkPolicy *
secret_policy_new (void)
{
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();
  g_autoptr(GError) error = NULL;
  SandboxNetworkPolicy *policy;

  sandbox_network_policy_builder_add_origin (builder, "http://127.0.0.1:9/", &error);
  g_assert_no_error (error);
  sandbox_network_policy_builder_add_header (builder, "http://127.0.0.1:9/", SECRET_HEADER,
                                             SECRET_VALUE, &error);
  g_assert_no_error (error);
  policy = sandbox_network_policy_builder_build (builder, &error);
  g_assert_no_error (error);
  return policy;
}

static SandboxTemplate *
template_new (void)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("log-test");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(GError) error = NULL;

  sandbox_template_add_file (template_, "hello.txt", hello, &error);
  g_assert_no_error (error);
  return g_steal_pointer (&template_);
}

static char *
prewarm (SandboxBackend *backend)
{
  g_autoptr(SandboxTemplate) template_ = template_new ();
  g_autoptr(GError) error = NULL;
  char *key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);

  g_assert_no_error (error);
  return key;
}

static SandboxCommand *
command_new (const char *executable)
{
  return sandbox_command_new (executable);
}

static SandboxBackend *
memory_backend_new (void)
{
  g_autoptr(GError) error = NULL;
  SandboxBackend *backend = sandbox_backend_new ("memory", NULL, &error,
                                                 "script", memory_script,
                                                 "max-concurrent-commands", 1,
                                                 NULL);

  g_assert_no_error (error);
  return backend;
}

/* One session through every event the core logs, over the memory driver. */
static void
test_memory_lifecycle_events (void)
{
  g_autoptr(SandboxBackend) backend = memory_backend_new ();
  g_autofree char *key = prewarm (backend);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxNetworkPolicy) secret = secret_policy_new ();
  g_autoptr(SandboxCommand) forever = command_new ("/bin/forever");
  g_autoptr(SandboxCommand) flood = command_new ("/bin/flood");
  g_autoptr(SandboxCommand) true_ = command_new ("/usr/bin/true");
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxHandle) refused = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxProcess) live = NULL;
  g_autoptr(SandboxProcess) second = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  SandboxSession *session;
  GHashTable *message;

  capture_reset ();
  handle = sandbox_backend_create (backend, key, NULL, deny, NULL, &error);
  g_assert_no_error (error);
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  session = sandbox_handle_get_session (handle);
  message = expect_event ("create", "", "memory", state, "7");
  g_assert_nonnull (strstr (field (message, "MESSAGE"), sandbox_state_get_session_id (state)));

  /* A second owner is refused: the create event carries the error. */
  refused = sandbox_backend_create (backend, key, state, deny, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);
  expect_event ("resume", "SANDBOX_BUSY", "memory", state, "7");

  /* The memory driver refuses allow-lists: logged with the header's name,
   * never its value. */
  g_assert_false (sandbox_session_set_network_policy (session, secret, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_clear_error (&error);
  message = expect_event ("policy", "SANDBOX_UNAVAILABLE", "memory", state, "7");
  g_assert_cmpstr (field (message, "SANDBOX_POLICY"), ==, "allow-list");
  g_assert_cmpstr (field (message, "SANDBOX_POLICY_RULES"), ==, "1");
  g_assert_nonnull (strstr (field (message, "MESSAGE"), SECRET_HEADER));

  /* Admission: the limit is 1. */
  live = sandbox_session_spawn (session, forever, NULL, &error);
  g_assert_no_error (error);
  second = sandbox_session_spawn (session, true_, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);
  expect_event ("spawn", "SANDBOX_BUSY", "memory", state, "7");

  /* A policy change while a command is live is refused too. */
  g_assert_false (sandbox_session_set_network_policy (session, deny, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);
  message = expect_event ("policy", "SANDBOX_BUSY", "memory", state, "7");
  g_assert_cmpstr (field (message, "SANDBOX_POLICY"), ==, "deny-all");
  g_assert_cmpstr (field (message, "SANDBOX_POLICY_RULES"), ==, "0");
  g_assert_null (find_event ("limit-kill", NULL));

  /* Stopping kills the live command: not a limit. */
  sandbox_handle_stop (handle, NULL, &error);
  g_assert_no_error (error);
  expect_event ("stop", "", "memory", state, "7");
  g_clear_object (&live);
  g_assert_null (find_event ("limit-kill", NULL));

  resumed = sandbox_backend_create (backend, key, state, deny, NULL, &error);
  g_assert_no_error (error);
  expect_event ("resume", "", "memory", state, "7");
  session = sandbox_handle_get_session (resumed);

  g_assert_true (sandbox_session_set_network_policy (session, deny, NULL, &error));
  g_assert_no_error (error);
  expect_event ("policy", "", "memory", state, "7");

  /* Limit kills: the output cap and the deadline. */
  sandbox_command_set_max_output_bytes (flood, 16);
  result = sandbox_session_run (session, flood, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_clear_error (&error);
  message = expect_event ("limit-kill", "SANDBOX_LIMIT", "memory", state, "7");
  g_assert_nonnull (strstr (field (message, "MESSAGE"), "output limit"));
  capture_reset ();
  sandbox_command_set_timeout_ms (forever, 20);
  result = sandbox_session_run (session, forever, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_clear_error (&error);
  message = expect_event ("limit-kill", "SANDBOX_LIMIT", "memory", state, "7");
  g_assert_nonnull (strstr (field (message, "MESSAGE"), "deadline"));

  sandbox_handle_delete (resumed, NULL, &error);
  g_assert_no_error (error);
  expect_event ("stop", "", "memory", state, "7");
  expect_event ("delete", "", "memory", state, "7");

  assert_secret_never_logged ();
}

static void
run_memory_session (void)
{
  g_autoptr(SandboxBackend) backend = memory_backend_new ();
  g_autofree char *key = prewarm (backend);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxCommand) true_ = command_new ("/usr/bin/true");
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  handle = sandbox_backend_create (backend, key, NULL, deny, NULL, &error);
  g_assert_no_error (error);
  result = sandbox_session_run (sandbox_handle_get_session (handle), true_, NULL, &error);
  g_assert_no_error (error);
  sandbox_handle_delete (handle, NULL, &error);
  g_assert_no_error (error);
}

/* With GLib's own writer: nothing on stderr unless G_MESSAGES_DEBUG names
 * "Sandbox" (or "all"). Log one event at message level in sandbox-log.c and
 * the first half fails. */
static void
test_silent_by_default (void)
{
  if (g_test_subprocess ())
    {
      g_unsetenv ("G_MESSAGES_DEBUG");
      run_memory_session ();
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stdout ("");
  g_test_trap_assert_stderr ("");
}

static void
test_shown_with_messages_debug (void)
{
  if (g_test_subprocess ())
    {
      g_setenv ("G_MESSAGES_DEBUG", "Sandbox", TRUE);
      run_memory_session ();
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  /* GLib's writer prints debug messages on stdout. */
  g_test_trap_assert_stdout ("*Sandbox-DEBUG*Created memory session*"
                             "*Stopped session*Deleted session*");
}

/* Real bubblewrap ---------------------------------------------------------- */

static SandboxBackend *
bubblewrap_backend_new (char **state_directory)
{
  g_autoptr(GError) error = NULL;
  SandboxBackend *backend;

  *state_directory = g_dir_make_tmp ("sandbox-log-XXXXXX", &error);
  g_assert_no_error (error);
  backend = sandbox_backend_new ("bubblewrap", NULL, &error,
                                 "state-directory", *state_directory, NULL);
  g_assert_no_error (error);
  return backend;
}

static void
remove_tree (const char *path)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", path);

  g_assert_cmpint (system (command), ==, 0);
}

/* What a host killed in the middle of a workspace write leaves (see
 * sandbox-workspace-write.c): in <state>/<sha256(name)>/sessions/<id>/,
 * workspace/ of a copied session, layers/upper/ of a layered one. */
static void
plant_write_temporary (const char   *state_directory,
                       SandboxState *state)
{
  g_autofree char *store = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *session = g_build_filename (state_directory, store, "sessions",
                                               sandbox_state_get_session_id (state), NULL);
  g_autofree char *layers = g_build_filename (session, "layers", NULL);
  g_autofree char *path = g_file_test (layers, G_FILE_TEST_IS_DIR)
                          ? g_build_filename (layers, "upper", ".sandbox-write-0123456789abcdef.tmp",
                                              NULL)
                          : g_build_filename (session, "workspace",
                                              ".sandbox-write-0123456789abcdef.tmp", NULL);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, "half-written", -1, &error);
  g_assert_no_error (error);
}

static void
test_bubblewrap_lifecycle_events (void)
{
  g_autofree char *state_directory = NULL;
  g_autoptr(SandboxBackend) backend = bubblewrap_backend_new (&state_directory);
  g_autofree char *key = prewarm (backend);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxNetworkPolicy) secret = secret_policy_new ();
  g_autoptr(SandboxCommand) true_ = command_new ("/usr/bin/true");
  g_autoptr(SandboxCommand) yes = command_new ("/usr/bin/yes");
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) recovered = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *socket_path = NULL;
  GHashTable *message;

  capture_reset ();
  handle = sandbox_backend_create (backend, key, NULL, secret, NULL, &error);
  g_assert_no_error (error);
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);

  /* The gateway started for the allow-list, before the session had a
   * handle, and names the session already. */
  message = expect_event ("gateway-start", "", NULL, NULL, "7");
  g_assert_cmpstr (field (message, "SANDBOX_SESSION_ID"), ==, sandbox_state_get_session_id (state));
  socket_path = g_strdup (field (message, "SANDBOX_GATEWAY_SOCKET"));
  g_assert_nonnull (socket_path);
  g_assert_cmpstr (field (message, "SANDBOX_POLICY"), ==, "allow-list");
  g_assert_cmpstr (field (message, "SANDBOX_POLICY_RULES"), ==, "1");
  expect_event ("create", "", "bubblewrap", state, "7");

  /* The bwrap command line, quoted, at debug, named by its session. */
  capture_reset ();
  result = sandbox_session_run (sandbox_handle_get_session (handle), true_, NULL, &error);
  g_assert_no_error (error);
  message = expect_event ("bwrap-argv", "", "bubblewrap", NULL, "7");
  g_assert_cmpstr (field (message, "SANDBOX_SESSION_ID"), ==, sandbox_state_get_session_id (state));
  g_assert_true (g_str_has_suffix (field (message, "MESSAGE"), " -- /usr/bin/true"));
  g_assert_nonnull (strstr (field (message, "MESSAGE"), " --unshare-all "));
  g_clear_object (&result);

  sandbox_command_set_max_output_bytes (yes, 64);
  result = sandbox_session_run (sandbox_handle_get_session (handle), yes, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_clear_error (&error);
  expect_event ("limit-kill", "SANDBOX_LIMIT", "bubblewrap", state, "7");

  g_assert_true (sandbox_session_set_network_policy (sandbox_handle_get_session (handle), deny,
                                                     NULL, &error));
  g_assert_no_error (error);
  message = expect_event ("policy", "", "bubblewrap", state, "7");
  g_assert_cmpstr (field (message, "SANDBOX_POLICY"), ==, "deny-all");

  sandbox_handle_stop (handle, NULL, &error);
  g_assert_no_error (error);
  message = expect_event ("gateway-stop", "", NULL, NULL, "7");
  g_assert_cmpstr (field (message, "SANDBOX_GATEWAY_SOCKET"), ==, socket_path);
  g_assert_cmpstr (field (message, "SANDBOX_SESSION_ID"), ==, sandbox_state_get_session_id (state));
  expect_event ("stop", "", "bubblewrap", state, "7");

  /* Recovering a session: info, the one level above debug the events use.
   * A write temporary a crashed owner left is removed, which the driver
   * reports as its own info event. */
  capture_reset ();
  plant_write_temporary (state_directory, state);
  recovered = sandbox_backend_recover_session (backend, state, deny, NULL, &error);
  g_assert_no_error (error);
  expect_event ("recover", "", "bubblewrap", state, "6");
  message = expect_event ("leftovers", NULL, "bubblewrap", NULL, "6");
  g_assert_cmpstr (field (message, "SANDBOX_SESSION_ID"), ==,
                   sandbox_state_get_session_id (state));
  sandbox_handle_delete (recovered, NULL, &error);
  g_assert_no_error (error);
  expect_event ("delete", "", "bubblewrap", state, "7");

  assert_secret_never_logged ();
  remove_tree (state_directory);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  captured = g_ptr_array_new_with_free_func ((GDestroyNotify) g_hash_table_unref);
  leaks = g_string_new (NULL);
  /* The subprocesses keep GLib's writer: they test what it shows. */
  if (!g_test_subprocess ())
    g_log_set_writer_func (capture_writer, NULL, NULL);

  g_test_add_func ("/sandbox/log/memory/lifecycle-events", test_memory_lifecycle_events);
  g_test_add_func ("/sandbox/log/memory/silent-by-default", test_silent_by_default);
  g_test_add_func ("/sandbox/log/memory/shown-with-messages-debug",
                   test_shown_with_messages_debug);
  g_test_add_func ("/sandbox/log/bubblewrap/lifecycle-events", test_bubblewrap_lifecycle_events);

  return g_test_run ();
}
