/* coding-fixture.c — what the coding test executables share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>
#include <string.h>

#include "coding-fixture.h"
#include "sandbox-test-backend.h"

/* Fixture ------------------------------------------------------------------ */

gboolean
allow_all_cb (SandboxCodingTools     *tools,
              SandboxCodingOperation *operation,
              Fixture                *fixture)
{
  g_ptr_array_add (fixture->operations, g_object_ref (operation));
  return TRUE;
}

static void
tool_error_cb (SandboxCodingTools *tools,
               const char         *tool,
               GError             *cause,
               Fixture            *fixture)
{
  g_ptr_array_add (fixture->tool_errors, g_error_copy (cause));
}

static SandboxCodingTools *
new_tools (Fixture *fixture)
{
  g_autoptr(GError) error = NULL;
  SandboxCodingTools *tools = sandbox_coding_tools_new (fixture->handle, &error);

  g_assert_no_error (error);
  g_signal_connect (tools, "authorize", G_CALLBACK (allow_all_cb), fixture);
  g_signal_connect (tools, "tool-error", G_CALLBACK (tool_error_cb), fixture);
  return tools;
}

void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("agent-workspace");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello\n", 6);

  fixture->state_directory = g_dir_make_tmp ("sandbox-coding-XXXXXX", &error);
  g_assert_no_error (error);
  /* @data: a boolean backend property to set, or NULL. */
  if (data != NULL)
    fixture->backend = sandbox_test_bubblewrap_new (fixture->state_directory, &error,
                                                    (const char *) data, "true", NULL);
  else
    fixture->backend = sandbox_test_bubblewrap_new (fixture->state_directory, &error, NULL);
  g_assert_no_error (error);
  sandbox_template_add_file (template_, "hello.txt", hello, &error);
  g_assert_no_error (error);
  fixture->template_key = sandbox_backend_prewarm (fixture->backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  fixture->handle = sandbox_backend_create (fixture->backend, fixture->template_key, NULL,
                                            policy, NULL, &error);
  g_assert_no_error (error);
  fixture->session = sandbox_handle_get_session (fixture->handle);
  fixture->results = g_ptr_array_new_with_free_func (g_free);
  fixture->tool_errors = g_ptr_array_new_with_free_func ((GDestroyNotify) g_error_free);
  fixture->operations = g_ptr_array_new_with_free_func (g_object_unref);
  fixture->tools = new_tools (fixture);
}

/* No result may name a host path of the session: the state directory is
 * the prefix of all of them. */
static void
assert_no_host_paths (Fixture *fixture)
{
  for (guint i = 0; i < fixture->results->len; i++)
    {
      const char *result = g_ptr_array_index (fixture->results, i);

      if (strstr (result, fixture->state_directory) != NULL)
        g_error ("result names a host path: %s", result);
    }
}

void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *command = NULL;

  assert_no_host_paths (fixture);
  g_clear_object (&fixture->tools);
  if (fixture->handle != NULL)
    {
      sandbox_handle_delete (fixture->handle, NULL, &error);
      g_assert_no_error (error);
    }
  g_clear_object (&fixture->handle);
  g_clear_object (&fixture->backend);
  g_free (fixture->template_key);
  command = g_strdup_printf ("rm -rf '%s'", fixture->state_directory);
  g_assert_cmpint (system (command), ==, 0);
  g_free (fixture->state_directory);
  g_ptr_array_unref (fixture->results);
  g_ptr_array_unref (fixture->tool_errors);
  g_ptr_array_unref (fixture->operations);
}

/* Helpers ------------------------------------------------------------------ */

JsonObject *
parse_object (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

/* Invokes @tool and returns the parsed result, recording its JSON. */
JsonObject *
invoke_with (Fixture            *fixture,
             SandboxCodingTools *tools,
             const char         *tool,
             const char         *arguments)
{
  g_autoptr(GError) error = NULL;
  char *result = sandbox_coding_tools_invoke (tools, tool, arguments, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (result);
  g_ptr_array_add (fixture->results, result);
  return parse_object (result);
}

JsonObject *
invoke (Fixture    *fixture,
        const char *tool,
        const char *arguments)
{
  return invoke_with (fixture, fixture->tools, tool, arguments);
}

void
assert_ok (JsonObject *result)
{
  if (!json_object_get_boolean_member (result, "ok"))
    {
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), result);
      g_autofree char *text = json_to_string (node, FALSE);

      g_error ("expected an ok result, got %s", text);
    }
}

const char *
error_code (JsonObject *result)
{
  g_assert_false (json_object_get_boolean_member (result, "ok"));
  return json_object_get_string_member (json_object_get_object_member (result, "error"), "code");
}

const char *
error_message (JsonObject *result)
{
  return json_object_get_string_member (json_object_get_object_member (result, "error"), "message");
}

static const char *
error_reason (JsonObject *result)
{
  return json_object_get_string_member_with_default (json_object_get_object_member (result, "error"),
                                                     "reason", NULL);
}

void
assert_refusal (JsonObject *result,
                const char *reason)
{
  assert_error (result, "SANDBOX_UNAVAILABLE");
  g_assert_cmpstr (error_message (result), ==, "Sandbox session cannot execute this operation");
  g_assert_cmpstr (error_reason (result), ==, reason);
}

char *
host_read (Fixture    *fixture,
           const char *path)
{
  g_autoptr(GError) error = NULL;
  char *text = sandbox_session_read_text (fixture->session, path, NULL, &error);

  g_assert_no_error (error);
  return text;
}

void
set_policy (Fixture    *fixture,
            const char *json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (json, &error);

  g_assert_no_error (error);
  sandbox_session_set_network_policy (fixture->session, policy, NULL, &error);
  g_assert_no_error (error);
}

gboolean
coding_test_skip_without_bwrap (void)
{
  if (g_file_test ("/usr/bin/bwrap", G_FILE_TEST_IS_EXECUTABLE))
    return FALSE;
  g_test_skip ("bubblewrap is not installed");
  return TRUE;
}
