/* test-memory-lifecycle.c — the memory backend: module, templates, create,
 * resume, lease, stop, delete and network policy
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "memory-test-common.h"

static SandboxHandle *
create_expecting_error (SandboxBackend  *backend,
                        const char      *template_key,
                        SandboxState    *state,
                        GError         **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();

  return sandbox_backend_create (backend, template_key, state, policy, NULL, error);
}

static void
assert_text (SandboxSession *session,
             const char     *path,
             const char     *expected)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = sandbox_session_read_text (session, path, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, expected);
}

static void
test_list_drivers_reports_memory (void)
{
  g_auto(GStrv) drivers = sandbox_list_drivers ();

  g_assert_true (g_strv_contains ((const char * const *) drivers, "memory"));
}

static void
test_backend_defaults (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = sandbox_backend_new ("memory", NULL, &error, NULL);
  g_auto(GStrv) policies = NULL;
  g_autofree char *directory = NULL;

  g_assert_no_error (error);
  g_assert_cmpstr (G_OBJECT_TYPE_NAME (backend), ==, "SandboxMemoryBackend");
  g_assert_true (G_IS_INITABLE (backend));
  g_assert_cmpstr (sandbox_backend_get_name (backend), ==, "memory");
  g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (backend), ==,
                    SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS);
  directory = sandbox_backend_dup_state_directory (backend);
  g_assert_null (directory);

  g_object_get (backend, "supported-network-policies", &policies, NULL);
  g_assert_cmpuint (g_strv_length (policies), ==, 1);
  g_assert_cmpstr (policies[0], ==, "deny-all");
}

static void
test_backend_rejects_empty_name (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = sandbox_backend_new ("memory", NULL, &error,
                                                           "name", "", NULL);

  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_null (backend);
}

static void
test_backend_rejects_admission_limit (void)
{
  const guint bad_limits[] = { 0, SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT + 1 };
  const guint good_limits[] = { 1, SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT };

  for (guint i = 0; i < G_N_ELEMENTS (bad_limits); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SandboxBackend) backend =
        sandbox_backend_new ("memory", NULL, &error,
                             "max-concurrent-commands", bad_limits[i], NULL);

      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "max-concurrent-commands"));
      g_assert_null (backend);
    }

  for (guint i = 0; i < G_N_ELEMENTS (good_limits); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SandboxBackend) backend =
        sandbox_backend_new ("memory", NULL, &error,
                             "max-concurrent-commands", good_limits[i], NULL);

      g_assert_no_error (error);
      g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (backend), ==,
                        good_limits[i]);
    }
}

static void
test_prewarm_is_content_addressed (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autoptr(SandboxTemplate) template_ = memory_test_template_new ();
  g_autoptr(SandboxTemplate) same = memory_test_template_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  gboolean reused = TRUE;

  expected = sandbox_template_compute_key (template_, "memory", &error);
  g_assert_no_error (error);

  first = sandbox_backend_prewarm (backend, template_, &reused, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (first, ==, expected);
  g_assert_true (sandbox_template_key_is_valid (first));
  g_assert_false (reused);

  second = sandbox_backend_prewarm (backend, same, &reused, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (second, ==, first);
  g_assert_true (reused);
}

static void
test_prewarm_key_includes_backend_name (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) other = sandbox_backend_new ("memory", NULL, &error,
                                                         "name", "other-memory", NULL);
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autoptr(SandboxTemplate) template_ = memory_test_template_new ();
  g_autofree char *key = NULL;
  g_autofree char *other_key = NULL;
  g_autofree char *expected = NULL;
  g_autoptr(SandboxHandle) handle = NULL;

  g_assert_no_error (error);
  key = memory_test_prewarm (backend);
  other_key = sandbox_backend_prewarm (other, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  expected = sandbox_template_compute_key (template_, "other-memory", &error);
  g_assert_no_error (error);

  g_assert_cmpstr (other_key, ==, expected);
  g_assert_cmpstr (other_key, !=, key);

  /* Each backend knows only its own templates. */
  handle = create_expecting_error (other, key, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_assert_null (handle);
}

static void
test_prewarm_async (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autoptr(SandboxTemplate) template_ = memory_test_template_new ();
  g_autoptr(GAsyncResult) first_result = NULL;
  g_autoptr(GAsyncResult) second_result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  gboolean reused = TRUE;

  sandbox_backend_prewarm_async (backend, template_, NULL, memory_test_store_result,
                                 &first_result);
  first = sandbox_backend_prewarm_finish (backend, memory_test_await (&first_result), &reused,
                                          &error);
  g_assert_no_error (error);
  g_assert_false (reused);

  sandbox_backend_prewarm_async (backend, template_, NULL, memory_test_store_result,
                                 &second_result);
  second = sandbox_backend_prewarm_finish (backend, memory_test_await (&second_result), &reused,
                                           &error);
  g_assert_no_error (error);
  g_assert_true (reused);
  g_assert_cmpstr (first, ==, second);
}

static void
test_create_new_session (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) first = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxHandle) second = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) second_state = NULL;
  g_autoptr(GError) error = NULL;

  state = sandbox_handle_capture_state (first, &error);
  g_assert_no_error (error);
  second_state = sandbox_handle_capture_state (second, &error);
  g_assert_no_error (error);

  g_assert_cmpstr (sandbox_state_get_backend (state), ==, "memory");
  g_assert_cmpstr (sandbox_state_get_template_key (state), ==, key);
  g_assert_true (sandbox_template_key_is_valid (sandbox_state_get_session_id (state)));
  g_assert_cmpstr (sandbox_session_get_id (sandbox_handle_get_session (first)), ==,
                   sandbox_state_get_session_id (state));
  g_assert_cmpstr (sandbox_state_get_session_id (state), !=,
                   sandbox_state_get_session_id (second_state));
  g_assert_null (sandbox_session_get_gateway_socket (sandbox_handle_get_session (first)));
}

static void
test_create_async (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_backend_create_async (backend, key, NULL, policy, NULL, memory_test_store_result,
                                &result);
  handle = sandbox_backend_create_finish (backend, memory_test_await (&result), &error);
  g_assert_no_error (error);
  assert_text (sandbox_handle_get_session (handle), "hello.txt", "hello");
}

static void
test_create_unknown_template (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autofree char *unknown = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "unknown", -1);

  handle = create_expecting_error (backend, unknown, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_assert_null (handle);
}

static void
test_create_malformed_template_key (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autofree char *upper = g_ascii_strup (key, -1);
  const char *malformed[] = { "", "../templates", "abc", upper };

  for (guint i = 0; i < G_N_ELEMENTS (malformed); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SandboxHandle) handle = create_expecting_error (backend, malformed[i], NULL,
                                                                &error);

      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_null (handle);
    }
}

static void
test_create_refuses_unsupported_policies (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxNetworkPolicy) allow_all = sandbox_network_policy_new_allow_all ();
  g_autoptr(SandboxNetworkPolicy) allow_list = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) other = NULL;
  g_autoptr(GError) error = NULL;

  allow_list = sandbox_network_policy_new_from_json (
    "{\"allow\": [{\"origin\": \"https://api.example.com\", \"headers\": {\"authorization\": \"secret\"}}]}",
    &error);
  g_assert_no_error (error);

  handle = sandbox_backend_create (backend, key, NULL, allow_all, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "allow-all"));
  g_assert_null (handle);
  g_clear_error (&error);

  other = sandbox_backend_create (backend, key, NULL, allow_list, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "allow-list"));
  g_assert_null (strstr (error->message, "secret"));
  g_assert_null (other);
}

static void
test_create_cancelled (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;

  g_cancellable_cancel (cancellable);
  handle = sandbox_backend_create (backend, key, NULL, policy, cancellable, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (handle);
}

static void
test_stop_keeps_files_for_resume (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_session_write_text (sandbox_handle_get_session (handle), "work/progress.txt", "half",
                              NULL, &error);
  g_assert_no_error (error);
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);

  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_is_stopped (handle));

  resumed = memory_test_create (backend, key, state);
  assert_text (sandbox_handle_get_session (resumed), "work/progress.txt", "half");
  assert_text (sandbox_handle_get_session (resumed), "hello.txt", "hello");
  g_assert_cmpstr (sandbox_session_get_id (sandbox_handle_get_session (resumed)), ==,
                   sandbox_state_get_session_id (state));
}

static void
test_stop_is_idempotent (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(GAsyncResult) stopped = NULL;
  g_autoptr(GAsyncResult) shut_down = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_shutdown (handle, NULL, &error));
  g_assert_no_error (error);

  sandbox_handle_stop_async (handle, NULL, memory_test_store_result, &stopped);
  g_assert_true (sandbox_handle_stop_finish (handle, memory_test_await (&stopped), &error));
  g_assert_no_error (error);
  sandbox_handle_shutdown_async (handle, NULL, memory_test_store_result, &shut_down);
  g_assert_true (sandbox_handle_shutdown_finish (handle, memory_test_await (&shut_down), &error));
  g_assert_no_error (error);
}

static void
test_operations_after_stop (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/usr/bin/true", NULL);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GBytes) contents = g_bytes_new_static ("x", 1);
  g_autoptr(GError) read_error = NULL;
  g_autoptr(GError) write_error = NULL;
  g_autoptr(GError) remove_error = NULL;
  g_autoptr(GError) spawn_error = NULL;
  g_autoptr(GError) run_error = NULL;
  g_autoptr(GError) policy_error = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) read = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxState) state = NULL;

  sandbox_handle_stop (handle, NULL, &error);
  g_assert_no_error (error);

  read = sandbox_session_read_bytes (session, "hello.txt", NULL, &read_error);
  sandbox_session_write_bytes (session, "hello.txt", contents, NULL, &write_error);
  sandbox_session_remove_path (session, "hello.txt", NULL, &remove_error);
  process = sandbox_session_spawn (session, command, NULL, &spawn_error);
  result = sandbox_session_run (session, command, NULL, &run_error);
  sandbox_session_set_network_policy (session, policy, NULL, &policy_error);

  g_assert_error (read_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_cmpstr (read_error->message, ==, "Sandbox session is stopped");
  g_assert_error (write_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_error (remove_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_error (spawn_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_cmpstr (spawn_error->message, ==, "Sandbox session is stopped");
  g_assert_error (run_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_error (policy_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);

  /* A stopped (not deleted) handle still describes its session. */
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
}

static void
test_stop_kills_live_commands (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (2);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxCommand) forever = memory_test_command_new ("/bin/forever", NULL);
  g_autoptr(SandboxProcess) first = NULL;
  g_autoptr(SandboxProcess) second = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  first = sandbox_session_spawn (sandbox_handle_get_session (handle), forever, NULL, &error);
  g_assert_no_error (error);
  second = sandbox_session_spawn (sandbox_handle_get_session (handle), forever, NULL, &error);
  g_assert_no_error (error);

  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);

  /* Stop returns only once the commands are gone. */
  g_assert_true (sandbox_process_is_finished (first));
  g_assert_true (sandbox_process_is_finished (second));
  result = sandbox_process_wait (first, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 137);

  memory_test_drain ();
}

static void
test_lease_is_exclusive (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxHandle) intruder = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GError) error = NULL;

  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);

  intruder = create_expecting_error (backend, key, state, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Sandbox session already has an owner");
  g_assert_null (intruder);
  g_clear_error (&error);

  /* The live owner is unaffected, and the lease is free after its stop. */
  assert_text (sandbox_handle_get_session (handle), "hello.txt", "hello");
  sandbox_handle_stop (handle, NULL, &error);
  g_assert_no_error (error);
  resumed = memory_test_create (backend, key, state);
}

static void
test_state_mismatch (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxTemplate) other_template = sandbox_template_new ("other");
  g_autofree char *other_key = NULL;
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) other_backend = NULL;
  g_autoptr(SandboxState) other_template_state = NULL;
  g_autoptr(SandboxHandle) refused = NULL;
  g_autoptr(GError) error = NULL;
  const char *session_id;

  other_key = sandbox_backend_prewarm (backend, other_template, NULL, NULL, &error);
  g_assert_no_error (error);
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  sandbox_handle_stop (handle, NULL, &error);
  g_assert_no_error (error);
  session_id = sandbox_state_get_session_id (state);

  /* The state names another backend. */
  other_backend = sandbox_state_new ("bubblewrap", session_id, key, &error);
  g_assert_no_error (error);
  refused = create_expecting_error (backend, key, other_backend, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH);
  g_assert_cmpstr (error->message, ==, "Reconnect state does not match backend and template");
  g_clear_error (&error);

  /* The state's template is not the one asked for. */
  refused = create_expecting_error (backend, other_key, state, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH);
  g_assert_cmpstr (error->message, ==, "Reconnect state does not match backend and template");
  g_clear_error (&error);

  /* Consistent with itself, but not with the saved session. */
  other_template_state = sandbox_state_new ("memory", session_id, other_key, &error);
  g_assert_no_error (error);
  refused = create_expecting_error (backend, other_key, other_template_state, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH);
  g_assert_cmpstr (error->message, ==, "Reconnect identity does not match saved session");
  g_assert_null (refused);
}

static void
test_resume_unknown_session (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autofree char *unknown_id = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "nobody", -1);
  g_autoptr(SandboxState) unknown = NULL;
  g_autoptr(SandboxState) malformed = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;

  unknown = sandbox_state_new ("memory", unknown_id, key, &error);
  g_assert_no_error (error);
  handle = create_expecting_error (backend, key, unknown, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_assert_null (handle);
  g_clear_error (&error);

  /* A session id is a key too: anything else is refused before lookup. */
  malformed = sandbox_state_new ("memory", "../../etc", key, &error);
  g_assert_no_error (error);
  handle = create_expecting_error (backend, key, malformed, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_null (handle);
}

static void
test_delete_removes_session (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxHandle) fresh = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) after = NULL;
  g_autoptr(GError) error = NULL;

  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);

  g_assert_true (sandbox_handle_delete (handle, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_is_deleted (handle));

  /* Deleting twice is a no-op. */
  g_assert_true (sandbox_handle_delete (handle, NULL, &error));
  g_assert_no_error (error);

  after = sandbox_handle_capture_state (handle, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_cmpstr (error->message, ==, "Sandbox session is deleted");
  g_assert_null (after);
  g_clear_error (&error);

  resumed = create_expecting_error (backend, key, state, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_assert_null (resumed);
  g_clear_error (&error);

  /* The template is kept. */
  fresh = memory_test_create (backend, key, NULL);
  assert_text (sandbox_handle_get_session (fresh), "hello.txt", "hello");
}

static void
test_delete_async (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;

  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);

  sandbox_handle_delete_async (handle, NULL, memory_test_store_result, &result);
  g_assert_true (sandbox_handle_delete_finish (handle, memory_test_await (&result), &error));
  g_assert_no_error (error);

  resumed = create_expecting_error (backend, key, state, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
}

static void
test_delete_by_stale_handle_is_busy (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) old = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxHandle) owner = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GError) error = NULL;

  state = sandbox_handle_capture_state (old, &error);
  g_assert_no_error (error);
  sandbox_handle_stop (old, NULL, &error);
  g_assert_no_error (error);

  owner = memory_test_create (backend, key, state);

  g_assert_false (sandbox_handle_delete (old, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_false (sandbox_handle_is_deleted (old));
  assert_text (sandbox_handle_get_session (owner), "hello.txt", "hello");
}

static void
test_last_unref_stops (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  SandboxHandle *handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxSession) session = g_object_ref (sandbox_handle_get_session (handle));
  g_autoptr(SandboxCommand) forever = memory_test_command_new ("/bin/forever", NULL);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  process = sandbox_session_spawn (session, forever, NULL, &error);
  g_assert_no_error (error);

  g_object_unref (handle);

  /* The command was killed, the session refuses work and the lease is free. */
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 137);
  g_assert_false (sandbox_session_remove_path (session, "hello.txt", NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  resumed = memory_test_create (backend, key, state);

  memory_test_drain ();
}

static void
test_sessions_outlive_handles_not_backend (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autoptr(SandboxBackend) other = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autofree char *other_key = memory_test_prewarm (other);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxHandle) elsewhere = NULL;
  g_autoptr(GError) error = NULL;

  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  sandbox_handle_stop (handle, NULL, &error);
  g_assert_no_error (error);

  /* Same name, same template key, but without a state directory each
   * backend object has its own sessions. */
  g_assert_cmpstr (key, ==, other_key);
  elsewhere = create_expecting_error (other, key, state, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_assert_null (elsewhere);
}

static void
test_state_directory_shares_sessions (void)
{
  g_autofree char *directory = g_build_filename (g_get_user_state_dir (), "sandboxes", NULL);
  g_autofree char *elsewhere_directory = g_build_filename (g_get_user_state_dir (), "other",
                                                           NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) first = sandbox_backend_new ("memory", NULL, &error,
                                                         "state-directory", directory, NULL);
  g_autoptr(SandboxBackend) second = NULL;
  g_autoptr(SandboxBackend) elsewhere = NULL;
  g_autofree char *key = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxHandle) refused = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autofree char *with_dots = NULL;

  g_assert_no_error (error);
  key = memory_test_prewarm (first);
  handle = memory_test_create (first, key, NULL);
  sandbox_session_write_text (sandbox_handle_get_session (handle), "shared.txt", "yes", NULL,
                              &error);
  g_assert_no_error (error);
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  sandbox_handle_stop (handle, NULL, &error);
  g_assert_no_error (error);

  /* Another backend over the same directory (spelled differently) sees it. */
  with_dots = g_build_filename (directory, "..", "sandboxes", NULL);
  second = sandbox_backend_new ("memory", NULL, &error, "state-directory", with_dots, NULL);
  g_assert_no_error (error);
  resumed = memory_test_create (second, key, state);
  assert_text (sandbox_handle_get_session (resumed), "shared.txt", "yes");

  /* The memory driver never touches the directory itself. */
  g_assert_false (g_file_test (directory, G_FILE_TEST_EXISTS));

  elsewhere = sandbox_backend_new ("memory", NULL, &error,
                                   "state-directory", elsewhere_directory, NULL);
  g_assert_no_error (error);
  refused = create_expecting_error (elsewhere, key, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
}

static void
test_set_network_policy (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autoptr(SandboxNetworkPolicy) deny_all = sandbox_network_policy_new_deny_all ();
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_set_network_policy (session, deny_all, NULL, &error));
  g_assert_no_error (error);

  sandbox_session_set_network_policy_async (session, deny_all, NULL, memory_test_store_result,
                                            &result);
  g_assert_true (sandbox_session_set_network_policy_finish (session, memory_test_await (&result),
                                                            &error));
  g_assert_no_error (error);
}

static void
test_set_network_policy_refuses_unsupported (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autoptr(SandboxNetworkPolicy) allow_all = sandbox_network_policy_new_allow_all ();
  g_autoptr(SandboxNetworkPolicy) allow_list = NULL;
  g_autoptr(GError) error = NULL;

  allow_list = sandbox_network_policy_new_from_json ("{\"allow\": []}", &error);
  g_assert_no_error (error);

  g_assert_false (sandbox_session_set_network_policy (session, allow_all, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "allow-all"));
  g_clear_error (&error);

  g_assert_false (sandbox_session_set_network_policy (session, allow_list, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "allow-list"));
}

static void
test_set_network_policy_busy_while_commands_live (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autoptr(SandboxNetworkPolicy) deny_all = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxCommand) forever = memory_test_command_new ("/bin/forever", NULL);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) error = NULL;

  process = sandbox_session_spawn (session, forever, NULL, &error);
  g_assert_no_error (error);

  g_assert_false (sandbox_session_set_network_policy (session, deny_all, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Stop live commands before changing network policy");
  g_clear_error (&error);

  sandbox_process_stop (process, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_session_set_network_policy (session, deny_all, NULL, &error));
  g_assert_no_error (error);

  memory_test_drain ();
}

/* The reference guide's example, over the memory driver. */
static void
test_guide_example_flow (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("agent-workspace");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxCommand) cat = memory_test_command_new ("/usr/bin/cat", "hello.txt", NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) reparsed = NULL;
  g_autofree char *state_json = NULL;
  g_autofree char *key = NULL;
  g_autofree char *out = NULL;
  g_autofree char *text = NULL;

  backend = sandbox_backend_new ("memory", NULL, &error,
                                 "script", "{\"commands\": [{\"match\": {\"executable\": "
                                           "\"/usr/bin/cat\"}, \"stdout-from-file-arg\": true}]}",
                                 "max-concurrent-commands", 8,
                                 NULL);
  g_assert_no_error (error);

  sandbox_template_add_file (template_, "hello.txt", hello, &error);
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);

  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);

  result = sandbox_session_run (sandbox_handle_get_session (handle), cat, NULL, &error);
  g_assert_no_error (error);
  out = sandbox_result_dup_stdout_text (result);
  g_assert_cmpstr (out, ==, "hello");

  /* Persisted by the host as JSON, read back later. */
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  state_json = sandbox_state_to_json (state);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);

  reparsed = sandbox_state_new_from_json (state_json, &error);
  g_assert_no_error (error);
  resumed = sandbox_backend_create (backend, key, reparsed, policy, NULL, &error);
  g_assert_no_error (error);
  text = sandbox_session_read_text (sandbox_handle_get_session (resumed), "hello.txt", NULL,
                                    &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "hello");

  g_assert_true (sandbox_handle_delete (resumed, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_shutdown (handle, NULL, &error));
  g_assert_no_error (error);

  memory_test_drain ();
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/memory/lifecycle/list-drivers-reports-memory",
                   test_list_drivers_reports_memory);
  g_test_add_func ("/sandbox/memory/lifecycle/backend-defaults", test_backend_defaults);
  g_test_add_func ("/sandbox/memory/lifecycle/backend-rejects-empty-name",
                   test_backend_rejects_empty_name);
  g_test_add_func ("/sandbox/memory/lifecycle/backend-rejects-admission-limit",
                   test_backend_rejects_admission_limit);
  g_test_add_func ("/sandbox/memory/lifecycle/prewarm-is-content-addressed",
                   test_prewarm_is_content_addressed);
  g_test_add_func ("/sandbox/memory/lifecycle/prewarm-key-includes-backend-name",
                   test_prewarm_key_includes_backend_name);
  g_test_add_func ("/sandbox/memory/lifecycle/prewarm-async", test_prewarm_async);
  g_test_add_func ("/sandbox/memory/lifecycle/create-new-session", test_create_new_session);
  g_test_add_func ("/sandbox/memory/lifecycle/create-async", test_create_async);
  g_test_add_func ("/sandbox/memory/lifecycle/create-unknown-template",
                   test_create_unknown_template);
  g_test_add_func ("/sandbox/memory/lifecycle/create-malformed-template-key",
                   test_create_malformed_template_key);
  g_test_add_func ("/sandbox/memory/lifecycle/create-refuses-unsupported-policies",
                   test_create_refuses_unsupported_policies);
  g_test_add_func ("/sandbox/memory/lifecycle/create-cancelled", test_create_cancelled);
  g_test_add_func ("/sandbox/memory/lifecycle/stop-keeps-files-for-resume",
                   test_stop_keeps_files_for_resume);
  g_test_add_func ("/sandbox/memory/lifecycle/stop-is-idempotent", test_stop_is_idempotent);
  g_test_add_func ("/sandbox/memory/lifecycle/operations-after-stop",
                   test_operations_after_stop);
  g_test_add_func ("/sandbox/memory/lifecycle/stop-kills-live-commands",
                   test_stop_kills_live_commands);
  g_test_add_func ("/sandbox/memory/lifecycle/lease-is-exclusive", test_lease_is_exclusive);
  g_test_add_func ("/sandbox/memory/lifecycle/state-mismatch", test_state_mismatch);
  g_test_add_func ("/sandbox/memory/lifecycle/resume-unknown-session",
                   test_resume_unknown_session);
  g_test_add_func ("/sandbox/memory/lifecycle/delete-removes-session",
                   test_delete_removes_session);
  g_test_add_func ("/sandbox/memory/lifecycle/delete-async", test_delete_async);
  g_test_add_func ("/sandbox/memory/lifecycle/delete-by-stale-handle-is-busy",
                   test_delete_by_stale_handle_is_busy);
  g_test_add_func ("/sandbox/memory/lifecycle/last-unref-stops", test_last_unref_stops);
  g_test_add_func ("/sandbox/memory/lifecycle/sessions-outlive-handles-not-backend",
                   test_sessions_outlive_handles_not_backend);
  g_test_add_func ("/sandbox/memory/lifecycle/state-directory-shares-sessions",
                   test_state_directory_shares_sessions);
  g_test_add_func ("/sandbox/memory/lifecycle/set-network-policy", test_set_network_policy);
  g_test_add_func ("/sandbox/memory/lifecycle/set-network-policy-refuses-unsupported",
                   test_set_network_policy_refuses_unsupported);
  g_test_add_func ("/sandbox/memory/lifecycle/set-network-policy-busy-while-commands-live",
                   test_set_network_policy_busy_while_commands_live);
  g_test_add_func ("/sandbox/memory/lifecycle/guide-example-flow", test_guide_example_flow);

  return g_test_run ();
}
