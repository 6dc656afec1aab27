/* test-bubblewrap.c — the bubblewrap driver against real bubblewrap
 *
 * The store (template keys against the conformance vectors, its layout and
 * modes), the lifecycle of sessions and handles, the backend's and
 * create's errors, and allow-list sessions bound to their gateway. What a
 * guest gets is in test-bubblewrap-guest.c.
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

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"

/* Fixture ------------------------------------------------------------------ */

/* The kit's fixture (tests/kit): a bubblewrap backend, the hello template,
 * and a deny-all session of it. */
typedef SandboxTestFixture Fixture;

static char *
prewarm_hello (SandboxBackend *backend,
               gboolean       *reused)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();

  return sandbox_test_prewarm (backend, template_, reused);
}

/* Templates ------------------------------------------------------------------ */

static void
test_template_keys_conformance (void)
{
  const char *dir = g_getenv ("SANDBOX_CONFORMANCE_DIR");
  g_autofree char *path = g_build_filename (dir, "template-keys.jsonl", NULL);
  g_autofree char *contents = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
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
      backend = sandbox_test_setup_backend ("bubblewrap", state_directory, "name",
                                            json_object_get_string_member (row, "name"), NULL);
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
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autofree char *source = g_dir_make_tmp ("sandbox-src-XXXXXX", NULL);
  g_autofree char *sub = g_build_filename (source, "sub", NULL);
  g_autofree char *file = g_build_filename (sub, "f.txt", NULL);
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, NULL);
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
  text = sandbox_test_guest_sh (sandbox_handle_get_session (handle), "cat sub/f.txt");
  g_assert_cmpstr (text, ==, "from the host");
  sandbox_handle_delete (handle, NULL, &error);
  g_assert_no_error (error);
}

/* Lifecycle ------------------------------------------------------------------ */

static void
test_guide_example_flow (void)
{
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, NULL);
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

  result = sandbox_test_run (sandbox_handle_get_session (handle), SANDBOX_TEST_COMMAND ("/usr/bin/cat", "hello.txt"),
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
  g_autofree char *token = sandbox_test_unique_token ();

  process = sandbox_test_spawn (fixture->session, sandbox_test_daemon_command (fixture->session, token),
                                   NULL, &error);
  g_assert_no_error (error);
  sandbox_test_wait_for_processes_with (token);

  g_clear_object (&fixture->handle);
  sandbox_test_assert_no_processes_with (token);
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

  process = sandbox_test_spawn (fixture->session, SANDBOX_TEST_COMMAND ("/usr/bin/true"), NULL, &error);
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
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
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
  renamed = sandbox_test_setup_backend ("bubblewrap", fixture->state_directory, "name", "renamed", NULL);
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
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, "executable", executable, NULL);
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
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -e /run/sandbox-network.sock"), ==, 1);

  g_assert_true (sandbox_session_set_network_policy (fixture->session, allow_list, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -S /run/sandbox-network.sock"), ==, 0);
  g_signal_connect (fixture->backend, "gateway-error", G_CALLBACK (gateway_error_cb),
                    &gateway_errors);

  /* A host that is not allowed: 403 from the gateway. */
  denied = sandbox_test_guest_sh (fixture->session,
                     "curl -s -o /dev/null -w '%{http_code}' --unix-socket "
                     "/run/sandbox-network.sock http://example.com/");
  g_assert_cmpstr (denied, ==, "403");
  /* The allowed origin is down: 502, and the cause reaches gateway-error. */
  request = g_strdup_printf ("curl -s -o /dev/null -w '%%{http_code}' --unix-socket "
                             "/run/sandbox-network.sock http://127.0.0.1:%u/", port);
  failed = sandbox_test_guest_sh (fixture->session, request);
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
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "getent hosts example.com"), !=, 0);

  g_assert_true (sandbox_session_set_network_policy (fixture->session, deny, NULL, &error));
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -e /run/sandbox-network.sock"), ==, 1);
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
  g_autofree char *secret = sandbox_test_unique_token ();
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
  status = sandbox_test_guest_sh (fixture->session, request);
  g_assert_cmpstr (status, ==, "502");

  /* The guest looks everywhere it can: every process's environment and
   * command line, the workspace, /run, /etc and /tmp. The secret reaches the
   * scan on stdin, so it is in no command line or environment itself. */
  scan = SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c",
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
      g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (other), script), ==, 0);
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
  listing = sandbox_test_guest_sh (fixture->session, "cat /workspace/a/b/c.txt");
  g_assert_cmpstr (listing, ==, "deep");
  read_back = sandbox_session_read_bytes (fixture->session, "/workspace/a/b/c.txt", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (read_back, nested));
  g_assert_true (sandbox_session_remove_path (fixture->session, "a", NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -e /workspace/a"), ==, 1);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define FIXTURE_TEST(path, func) \
  g_test_add ("/sandbox/bubblewrap/" path, Fixture, "bubblewrap", sandbox_test_fixture_set_up_session, \
              func, sandbox_test_fixture_tear_down)

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

  return g_test_run ();
}
