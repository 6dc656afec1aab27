/* sandbox-conformance-sessions.c — the checks of backends, templates and the
 * session lifecycle: properties, prewarm, create, leases, stop, resume,
 * delete and states that don't match
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-conformance-private.h"

static gboolean
check_backend_properties (ConformanceRun  *run,
                          GError         **error)
{
  g_autofree char *property_name = NULL;
  guint limit = 0;

  g_object_get (run->backend, "name", &property_name, "max-concurrent-commands", &limit, NULL);

  if (run->name == NULL || run->name[0] == '\0')
    return CHECK_FAILED (error, "sandbox_backend_get_name() is empty");
  if (g_strcmp0 (property_name, run->name) != 0)
    return CHECK_FAILED (error, "the name property (“%s”) differs from get_name() (“%s”)",
                         property_name, run->name);
  if (limit < 1 || limit > SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT)
    return CHECK_FAILED (error, "max-concurrent-commands is %u, outside 1 … %u",
                         limit, (guint) SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT);
  if (limit != sandbox_backend_get_max_concurrent_commands (run->backend))
    return CHECK_FAILED (error, "the max-concurrent-commands property differs from its getter");

  if (conformance_has_property (run->self, "max-concurrent-commands"))
    return TRUE;

  if (limit != SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS)
    return CHECK_FAILED (error, "max-concurrent-commands defaults to %u, expected %u",
                         limit, (guint) SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS);
  return TRUE;
}

static gboolean
check_prewarm_content_address (ConformanceRun  *run,
                               GError         **error)
{
  g_autoptr(SandboxTemplate) template_ = conformance_make_template ("conformance", FALSE, NULL);
  g_autofree char *expected = NULL;
  GError *local_error = NULL;

  if (!sandbox_template_key_is_valid (run->key))
    return CHECK_FAILED (error, "the template key “%s” is not 64 lowercase hex digits", run->key);

  expected = sandbox_template_compute_key (template_, run->name, &local_error);
  if (!conformance_expect_success (&local_error, "sandbox_template_compute_key()", error))
    return FALSE;
  if (g_strcmp0 (expected, run->key) != 0)
    return CHECK_FAILED (error, "prewarm gave key %s, the content address is %s", run->key, expected);
  return TRUE;
}

static gboolean
check_prewarm_reused (ConformanceRun  *run,
                      GError         **error)
{
  g_autoptr(SandboxTemplate) template_ = conformance_make_template ("conformance", FALSE, NULL);
  g_autofree char *unique_name = g_strdup_printf ("conformance-%08x%08x",
                                                  g_random_int (), g_random_int ());
  g_autoptr(SandboxTemplate) fresh = conformance_make_template (unique_name, FALSE, NULL);
  g_autofree char *again = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  gboolean reused = FALSE;
  GError *local_error = NULL;

  again = sandbox_backend_prewarm (run->backend, template_, &reused, run->cancellable,
                                   &local_error);
  if (!conformance_expect_success (&local_error, "prewarm of a stored template", error))
    return FALSE;
  if (!reused)
    return CHECK_FAILED (error, "a repeated prewarm did not report reused");
  if (g_strcmp0 (again, run->key) != 0)
    return CHECK_FAILED (error, "a repeated prewarm gave another key (%s, then %s)", run->key, again);

  reused = TRUE;
  first = sandbox_backend_prewarm (run->backend, fresh, &reused, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "prewarm of a new template", error))
    return FALSE;
  if (reused)
    return CHECK_FAILED (error, "the first prewarm of a never-seen template reported reused");

  reused = FALSE;
  second = sandbox_backend_prewarm (run->backend, fresh, &reused, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "second prewarm of the new template", error))
    return FALSE;
  if (!reused || g_strcmp0 (first, second) != 0)
    return CHECK_FAILED (error, "the second prewarm was not reused under the same key");
  return TRUE;
}

static gboolean
check_prewarm_order_and_content (ConformanceRun  *run,
                                 GError         **error)
{
  g_autoptr(SandboxTemplate) reversed = conformance_make_template ("conformance", TRUE, NULL);
  g_autofree char *reversed_key = NULL;
  GError *local_error = NULL;

  reversed_key = sandbox_backend_prewarm (run->backend, reversed, NULL, run->cancellable,
                                          &local_error);
  if (!conformance_expect_success (&local_error, "prewarm with the files added in another order",
                                   error))
    return FALSE;
  if (g_strcmp0 (reversed_key, run->key) != 0)
    return CHECK_FAILED (error, "the key depends on the order files were added in");
  if (g_strcmp0 (run->other_key, run->key) == 0)
    return CHECK_FAILED (error, "templates with different content share the key %s", run->key);
  return TRUE;
}

static gboolean
check_create_unknown_template (ConformanceRun  *run,
                               GError         **error)
{
  const char *unknown = "0000000000000000000000000000000000000000000000000000000000000000";

  return conformance_expect_create_refused (run, run->backend, unknown, NULL,
                                            SANDBOX_ERROR_NOT_FOUND,
                                            "create from a template never prewarmed succeeded",
                                            "create from a template never prewarmed", error);
}

static gboolean
check_create_fresh (ConformanceRun  *run,
                    GError         **error)
{
  SandboxHandle *handle = run->handle;
  g_autoptr(SandboxHandleDiscard) other = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) other_state = NULL;
  g_autoptr(GBytes) contents = NULL;
  g_autoptr(GBytes) nested = NULL;
  SandboxSession *session = run->session;
  GError *local_error = NULL;

  if (session == NULL || sandbox_session_get_id (session) == NULL)
    return CHECK_FAILED (error, "the handle has no session, or the session no id");

  state = conformance_capture_state (handle, "capture_state() of a live session", error);
  if (state == NULL)
    return FALSE;
  if (g_strcmp0 (sandbox_state_get_backend (state), run->name) != 0)
    return CHECK_FAILED (error, "the state names backend “%s”, expected “%s”",
                         sandbox_state_get_backend (state), run->name);
  if (g_strcmp0 (sandbox_state_get_template_key (state), run->key) != 0)
    return CHECK_FAILED (error, "the state names another template key");
  if (g_strcmp0 (sandbox_state_get_session_id (state), sandbox_session_get_id (session)) != 0)
    return CHECK_FAILED (error, "the state's session id differs from the session's id");

  contents = sandbox_session_read_bytes (session, "conformance.txt", run->cancellable,
                                         &local_error);
  if (!conformance_expect_success (&local_error, "reading a template file in a new session", error))
    return FALSE;
  if (!conformance_expect_bytes (contents, CONFORMANCE_HELLO, strlen (CONFORMANCE_HELLO),
                                 "conformance.txt", error))
    return FALSE;
  nested = sandbox_session_read_bytes (session, "dir/nested.txt", run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "reading a nested template file", error))
    return FALSE;
  if (!conformance_expect_bytes (nested, "nested\n", 7, "dir/nested.txt", error))
    return FALSE;

  other = conformance_new_session (run, error);
  if (other == NULL)
    return FALSE;
  other_state = conformance_capture_state (other, "capture_state() of a second session", error);
  if (other_state == NULL)
    return FALSE;
  if (g_strcmp0 (sandbox_state_get_session_id (state),
                 sandbox_state_get_session_id (other_state)) == 0)
    return CHECK_FAILED (error, "two new sessions got the same session id");
  return TRUE;
}

static gboolean
check_lease_exclusive (ConformanceRun  *run,
                       GError         **error)
{
  SandboxHandle *handle = run->handle;
  g_autoptr(SandboxState) state = NULL;
  GError *local_error = NULL;

  state = conformance_capture_state (handle, "capture_state()", error);
  if (state == NULL)
    return FALSE;

  if (!conformance_expect_resume_refused (run, state, SANDBOX_ERROR_BUSY,
                                          "a second owner attached to a live session",
                                          "resuming a session that has a live owner", error))
    return FALSE;

  /* The first owner is unaffected. */
  g_clear_object (&state);
  state = sandbox_handle_capture_state (handle, &local_error);
  return conformance_expect_success (&local_error,
                                     "the owner's capture_state() after a refused attach", error);
}

static gboolean
check_lease_second_backend (ConformanceRun  *run,
                            GError         **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxHandle) intruder = NULL;
  g_autoptr(SandboxBackend) second = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autofree char *directory = NULL;
  GError *local_error = NULL;

  directory = sandbox_backend_dup_state_directory (run->backend);
  if (directory == NULL)
    {
      run->skip_reason = g_strdup ("the backend has no state directory to share");
      return TRUE;
    }

  second = conformance_new_backend (run->self, run->temporary_directory, 0, run->cancellable,
                                    &local_error);
  if (!conformance_expect_success (&local_error,
                                   "constructing a second backend over the same state directory",
                                   error))
    return FALSE;

  handle = conformance_new_session (run, error);
  if (handle == NULL)
    return FALSE;
  state = conformance_capture_state (handle, "capture_state()", error);
  if (state == NULL)
    return FALSE;

  if (!conformance_expect_create_refused (run, second, run->key, state, SANDBOX_ERROR_BUSY,
                                          "another backend object attached to a live session",
                                          "resuming a live session through another backend object",
                                          error))
    return FALSE;

  /* Once the owner stops, the other backend may take over. */
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    return conformance_expect_success (&local_error, "stop()", error);
  intruder = sandbox_backend_create (second, run->key, state, policy, run->cancellable,
                                     &local_error);
  if (!conformance_expect_success (&local_error, "resuming through another backend after stop",
                                   error))
    return FALSE;
  conformance_discard_session (g_steal_pointer (&intruder));
  return TRUE;
}

static gboolean
expect_stopped (SandboxSession  *session,
                ConformanceRun             *run,
                GError         **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxCommand) command = conformance_probe_command ("/usr/bin/cat", "conformance.txt");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autoptr(GBytes) read = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  GError *local_error = NULL;

  read = sandbox_session_read_bytes (session, "conformance.txt", run->cancellable, &local_error);
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                                 "read after stop", error))
    return FALSE;
  sandbox_session_write_bytes (session, "after-stop.txt", bytes, run->cancellable, &local_error);
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                                 "write after stop", error))
    return FALSE;
  sandbox_session_remove_path (session, "conformance.txt", run->cancellable, &local_error);
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                                 "remove after stop",
                                 error))
    return FALSE;
  process = sandbox_session_spawn (session, command, run->cancellable, &local_error);
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                                 "spawn after stop", error))
    return FALSE;
  sandbox_session_set_network_policy (session, policy, run->cancellable, &local_error);
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                                   "set_network_policy after stop", error);
}

static gboolean
check_lifecycle_stop (ConformanceRun  *run,
                      GError         **error)
{
  SandboxHandle *handle = run->handle;
  g_autoptr(SandboxState) state = NULL;
  GError *local_error = NULL;

  if (sandbox_handle_is_stopped (handle))
    return CHECK_FAILED (error, "a new handle says it is stopped");
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    return conformance_expect_success (&local_error, "stop()", error);
  if (!sandbox_handle_is_stopped (handle))
    return CHECK_FAILED (error, "is_stopped() is FALSE after stop()");
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    return conformance_expect_success (&local_error, "a second stop()", error);
  if (!sandbox_handle_shutdown (handle, run->cancellable, &local_error))
    return conformance_expect_success (&local_error, "shutdown() after stop()", error);

  state = conformance_capture_state (handle,
                                     "capture_state() after stop (the state is what resumes)",
                                     error);
  if (state == NULL)
    return FALSE;

  return expect_stopped (run->session, run, error);
}

static gboolean
check_lifecycle_resume (ConformanceRun  *run,
                        GError         **error)
{
  SandboxHandle *handle = run->handle;
  g_autoptr(SandboxHandleDiscard) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) resumed_state = NULL;
  g_autofree char *text = NULL;
  g_autofree char *json = NULL;
  SandboxSession *session = run->session;
  GError *local_error = NULL;

  sandbox_session_write_text (session, "kept/across-stop.txt", "kept", run->cancellable,
                              &local_error);
  if (!conformance_expect_success (&local_error, "write_text()", error))
    return FALSE;
  sandbox_session_remove_path (session, "dir", run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "removing a template directory", error))
    return FALSE;
  state = conformance_capture_state (handle, "capture_state()", error);
  if (state == NULL)
    return FALSE;
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    return conformance_expect_success (&local_error, "stop()", error);

  /* What is persisted is the JSON; resume from a parsed copy. */
  json = sandbox_state_to_json (state);
  g_clear_object (&state);
  state = sandbox_state_new_from_json (json, &local_error);
  if (!conformance_expect_success (&local_error, "parsing the captured state's JSON", error))
    return FALSE;

  resumed = conformance_resume_session (run, state, &local_error);
  if (!conformance_expect_success (&local_error, "resume from the captured state after stop",
                                   error))
    return FALSE;
  session = sandbox_handle_get_session (resumed);
  text = sandbox_session_read_text (session, "kept/across-stop.txt", run->cancellable,
                                    &local_error);
  if (!conformance_expect_success (&local_error, "reading a file written before stop", error))
    return FALSE;
  if (g_strcmp0 (text, "kept") != 0)
    return CHECK_FAILED (error, "the workspace did not survive stop and resume");
  g_clear_pointer (&text, g_free);
  text = sandbox_session_read_text (session, "dir/nested.txt", run->cancellable, &local_error);
  if (text != NULL)
    return CHECK_FAILED (error, "a file removed before stop came back on resume");
  if (!conformance_expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                                 "reading a file removed before stop", error))
    return FALSE;

  resumed_state = conformance_capture_state (resumed, "capture_state() of the resumed session",
                                             error);
  if (resumed_state == NULL)
    return FALSE;
  if (!sandbox_state_equal (state, resumed_state))
    return CHECK_FAILED (error, "the resumed session's state differs from the one it resumed");
  return TRUE;
}

static gboolean
check_lifecycle_delete (ConformanceRun  *run,
                        GError         **error)
{
  SandboxHandle *handle = run->handle;
  g_autoptr(SandboxHandleDiscard) fresh = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) after = NULL;
  GError *local_error = NULL;

  state = conformance_capture_state (handle, "capture_state()", error);
  if (state == NULL)
    return FALSE;
  if (!sandbox_handle_delete (handle, run->cancellable, &local_error))
    return conformance_expect_success (&local_error, "delete() of a live session", error);
  if (!sandbox_handle_is_deleted (handle) || !sandbox_handle_is_stopped (handle))
    return CHECK_FAILED (error, "after delete() the handle is not both stopped and deleted");

  after = sandbox_handle_capture_state (handle, &local_error);
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                                 "capture_state() after delete", error))
    return FALSE;
  if (!sandbox_handle_delete (handle, run->cancellable, &local_error))
    return conformance_expect_success (&local_error, "a second delete() (a no-op)", error);
  if (!expect_stopped (run->session, run, error))
    return FALSE;

  if (!conformance_expect_resume_refused (run, state, SANDBOX_ERROR_NOT_FOUND,
                                          "a deleted session could be resumed",
                                          "resuming a deleted session", error))
    return FALSE;

  /* Templates outlive the sessions made from them. */
  fresh = conformance_new_session (run, error);
  return fresh != NULL;
}

static gboolean
check_lease_old_handle_delete (ConformanceRun  *run,
                               GError         **error)
{
  SandboxHandle *handle = run->handle;
  g_autoptr(SandboxHandleDiscard) owner = NULL;
  SandboxState *state = run->state;
  g_autofree char *text = NULL;
  GError *local_error = NULL;

  owner = conformance_resume_session (run, state, &local_error);
  if (!conformance_expect_success (&local_error, "resume after stop", error))
    return FALSE;

  sandbox_handle_delete (handle, run->cancellable, &local_error);
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                                 "delete() by an older handle while a new owner holds the lease",
                                 error))
    return FALSE;

  text = sandbox_session_read_text (sandbox_handle_get_session (owner), "conformance.txt",
                                    run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "the new owner's read after the refused delete",
                                   error))
    return FALSE;
  if (g_strcmp0 (text, CONFORMANCE_HELLO) != 0)
    return CHECK_FAILED (error, "the refused delete changed the workspace");
  return TRUE;
}

static gboolean
check_state_mismatch_backend (ConformanceRun  *run,
                              GError         **error)
{
  SandboxState *state = run->state;
  g_autoptr(SandboxState) foreign = NULL;
  g_autofree char *other_name = NULL;
  GError *local_error = NULL;

  other_name = g_strconcat (run->name, "-other", NULL);
  foreign = sandbox_state_new (other_name, sandbox_state_get_session_id (state), run->key,
                               &local_error);
  if (!conformance_expect_success (&local_error, "sandbox_state_new()", error))
    return FALSE;
  return conformance_expect_resume_refused (run, foreign, SANDBOX_ERROR_STATE_MISMATCH,
                                            "a state naming another backend was accepted",
                                            "resuming a state that names another backend", error);
}

static gboolean
check_state_mismatch_template (ConformanceRun  *run,
                               GError         **error)
{
  SandboxState *state = run->state;
  g_autoptr(SandboxState) forged = NULL;
  GError *local_error = NULL;

  /* The state's template differs from the one asked for. */
  if (!conformance_expect_create_refused (run, run->backend, run->other_key, state,
                                          SANDBOX_ERROR_STATE_MISMATCH,
                                          "a state was resumed under another template key",
                                          "resuming with a template key that differs from the "
                                          "state's", error))
    return FALSE;

  /* The state's session belongs to another template than the state says. */
  forged = sandbox_state_new (run->name, sandbox_state_get_session_id (state), run->other_key,
                              &local_error);
  if (!conformance_expect_success (&local_error, "sandbox_state_new()", error))
    return FALSE;
  return conformance_expect_create_refused (run, run->backend, run->other_key, forged,
                                            SANDBOX_ERROR_STATE_MISMATCH,
                                            "a session was resumed under a template it was not "
                                            "made from",
                                            "resuming a session with a state naming another "
                                            "template", error);
}

static gboolean
check_state_unknown_session (ConformanceRun  *run,
                             GError         **error)
{
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree char *nonce = g_strdup_printf ("%08x%08x", g_random_int (), g_random_int ());
  GError *local_error = NULL;

  g_checksum_update (checksum, (const guchar *) nonce, -1);
  state = sandbox_state_new (run->name, g_checksum_get_string (checksum), run->key,
                             &local_error);
  if (!conformance_expect_success (&local_error, "sandbox_state_new()", error))
    return FALSE;
  return conformance_expect_resume_refused (run, state, SANDBOX_ERROR_NOT_FOUND,
                                            "a session that never existed was resumed",
                                            "resuming a session that never existed", error);
}

const ConformanceCheck conformance_session_checks[] = {
  { "backend/properties", check_backend_properties, FALSE, CONFORMANCE_FIXTURE_NONE },
  { "prewarm/content-addressed-key", check_prewarm_content_address,
    FALSE, CONFORMANCE_FIXTURE_NONE },
  { "prewarm/reused-on-repeat", check_prewarm_reused, FALSE, CONFORMANCE_FIXTURE_NONE },
  { "prewarm/order-independent-content-sensitive", check_prewarm_order_and_content,
    FALSE, CONFORMANCE_FIXTURE_NONE },
  { "create/unknown-template-not-found", check_create_unknown_template,
    FALSE, CONFORMANCE_FIXTURE_NONE },
  { "create/fresh-session", check_create_fresh, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "lease/exclusive", check_lease_exclusive, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "lease/shared-state-directory", check_lease_second_backend, FALSE, CONFORMANCE_FIXTURE_NONE },
  { "lease/old-handle-delete-busy", check_lease_old_handle_delete,
    FALSE, CONFORMANCE_FIXTURE_STOPPED_SESSION },
  { "lifecycle/stop", check_lifecycle_stop, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "lifecycle/resume", check_lifecycle_resume, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "lifecycle/delete", check_lifecycle_delete, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "state/mismatch-backend", check_state_mismatch_backend,
    FALSE, CONFORMANCE_FIXTURE_STOPPED_SESSION },
  { "state/mismatch-template", check_state_mismatch_template,
    FALSE, CONFORMANCE_FIXTURE_STOPPED_SESSION },
  { "state/unknown-session-not-found", check_state_unknown_session,
    FALSE, CONFORMANCE_FIXTURE_NONE },
  { NULL, NULL, FALSE, FALSE }
};
