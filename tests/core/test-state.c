/* test-state.c — SandboxState
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-state.h"

static void
test_new_keeps_fields (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = sandbox_state_new ("bubblewrap", "abc", "def", &error);

  g_assert_no_error (error);
  g_assert_cmpstr (sandbox_state_get_backend (state), ==, "bubblewrap");
  g_assert_cmpstr (sandbox_state_get_session_id (state), ==, "abc");
  g_assert_cmpstr (sandbox_state_get_template_key (state), ==, "def");
}

static void
assert_new_refused (const char *backend,
                    const char *session_id,
                    const char *template_key,
                    const char *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = sandbox_state_new (backend, session_id, template_key, &error);

  g_assert_null (state);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  if (strstr (error->message, message) == NULL)
    g_error ("Message “%s” does not contain “%s”", error->message, message);
}

static void
test_new_refuses_empty_fields (void)
{
  assert_new_refused ("", "a", "b", "backend: Too small: expected string to have >=1 characters");
  assert_new_refused ("a", "", "b", "sessionId: Too small");
  assert_new_refused ("a", "b", "", "templateKey: Too small");
}

static void
test_new_refuses_invalid_utf8 (void)
{
  assert_new_refused ("a", "\xff", "b", "sessionId: Invalid input");
}

static void
test_to_json_is_compact_and_ordered (void)
{
  g_autoptr(SandboxState) state = sandbox_state_new ("bubblewrap", "s\"1", "k", NULL);
  g_autofree char *json = sandbox_state_to_json (state);

  g_assert_cmpstr (json, ==, "{\"backend\":\"bubblewrap\",\"sessionId\":\"s\\\"1\",\"templateKey\":\"k\"}");
}

static void
test_json_round_trip (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = sandbox_state_new ("b", "é\n", "k", NULL);
  g_autofree char *json = sandbox_state_to_json (state);
  g_autoptr(SandboxState) parsed = sandbox_state_new_from_json (json, &error);
  g_autoptr(SandboxState) other = sandbox_state_new ("b", "é\n", "k2", NULL);

  g_assert_no_error (error);
  g_assert_true (sandbox_state_equal (state, parsed));
  g_assert_false (sandbox_state_equal (state, other));
}

static void
test_from_json_refuses_wrong_types (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state =
    sandbox_state_new_from_json ("{\"backend\": [], \"sessionId\": \"a\", \"templateKey\": \"b\"}",
                                 &error);

  g_assert_null (state);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_cmpstr (error->message, ==, "backend: Invalid input: expected string, received array");
}

static void
test_from_json_refuses_malformed_json (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state =
    sandbox_state_new_from_json ("{\"backend\": \"a\", \"backend\": \"b\", \"sessionId\": \"a\", "
                                 "\"templateKey\": \"b\"}", &error);

  g_assert_null (state);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/state/new-keeps-fields", test_new_keeps_fields);
  g_test_add_func ("/sandbox/state/new-refuses-empty-fields", test_new_refuses_empty_fields);
  g_test_add_func ("/sandbox/state/new-refuses-invalid-utf8", test_new_refuses_invalid_utf8);
  g_test_add_func ("/sandbox/state/to-json-is-compact-and-ordered", test_to_json_is_compact_and_ordered);
  g_test_add_func ("/sandbox/state/json-round-trip", test_json_round_trip);
  g_test_add_func ("/sandbox/state/from-json-refuses-wrong-types", test_from_json_refuses_wrong_types);
  g_test_add_func ("/sandbox/state/from-json-refuses-malformed-json",
                   test_from_json_refuses_malformed_json);

  return g_test_run ();
}
