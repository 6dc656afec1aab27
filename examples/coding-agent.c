/* coding-agent.c — mounting the coding tools for an agent loop
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A scripted fake "model" drives the tools the way an LLM with function
 * calling would: the host sends it the tool definitions, the model answers
 * with tool calls (a name and JSON arguments), the host runs each call with
 * sandbox_coding_tools_invoke() and sends the result JSON back. Here the
 * model's answers are a fixed list, so the loop is easy to read.
 *
 * Run: SANDBOX_DRIVER_PATH=build/drivers/bubblewrap build/examples/coding-agent
 */

#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>
#include <sandbox-backend-driver.h>

/* What the model "answers", one tool call per turn. */
static const struct
{
  const char *tool;
  const char *arguments;
} script[] = {
  { "list_files", "{}" },
  { "read_file", "{\"path\":\"calc.py\"}" },
  { "shell", "{\"command\":\"python3 calc.py || echo 'no python here'; echo $((6 * 7))\"}" },
  { "edit_file", "{\"path\":\"calc.py\",\"old_string\":\"a - b\",\"new_string\":\"a + b\"}" },
  { "write_file", "{\"path\":\"notes/README.md\",\"content\":\"Fixed add().\\n\"}" },
  { "read_file", "{\"path\":\"../../etc/passwd\"}" },    /* refused: outside */
  { "shell", "{\"command\":\"curl -s https://example.com\"}" },  /* refused by the host */
  { "shell", "{\"command\":\"grep -n 'a + b' calc.py\",\"cwd\":\".\"}" },
};

/* The host's policy: everything inside the workspace, but no curl. */
static gboolean
authorize_cb (SandboxCodingTools     *tools,
              SandboxCodingOperation *operation,
              gpointer                user_data)
{
  const char *command = sandbox_coding_operation_get_command (operation);

  return command == NULL || strstr (command, "curl") == NULL;
}

/* Refusal causes are for the host's log, never for the model. */
static void
tool_error_cb (SandboxCodingTools *tools,
               const char         *tool,
               GError             *cause,
               gpointer            user_data)
{
  g_printerr ("host log: %s refused: %s\n", tool ? tool : "(adapter)", cause->message);
}

static SandboxHandle *
create_session (SandboxBackend  *backend,
                GError         **error)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("agent-workspace");
  static const char source[] = "def add(a, b):\n    return a - b\n\nprint(add(2, 2))\n";
  g_autoptr(GBytes) calc = g_bytes_new_static (source, strlen (source));
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autofree char *key = NULL;

  if (!sandbox_template_add_file (template_, "calc.py", calc, error))
    return NULL;
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, error);
  if (key == NULL)
    return NULL;
  return sandbox_backend_create (backend, key, NULL, policy, NULL, error);
}

static void
remove_tree (const char *path)
{
  const char *argv[] = { "/usr/bin/rm", "-rf", "--", path, NULL };

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, NULL, NULL);
}

static gboolean
result_ok (const char *result_json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;

  if (!json_parser_load_from_data (parser, result_json, -1, NULL))
    return FALSE;
  root = json_parser_get_root (parser);
  return JSON_NODE_HOLDS_OBJECT (root) &&
         json_object_get_boolean_member_with_default (json_node_get_object (root), "ok", FALSE);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxCodingTools) tools = NULL;
  g_autofree char *definitions = NULL;
  g_autofree char *fixed = NULL;
  guint refused = 0;
  int status = EXIT_SUCCESS;

  state_directory = g_dir_make_tmp ("coding-agent-XXXXXX", &error);
  if (state_directory == NULL)
    goto fail;
  backend = sandbox_backend_new ("bubblewrap", NULL, &error,
                                 "state-directory", state_directory, NULL);
  if (backend == NULL)
    goto fail;
  handle = create_session (backend, &error);
  if (handle == NULL)
    goto fail;

  /* Mount the tools: authorization is deny-by-default, so connect it. */
  tools = sandbox_coding_tools_new (handle, &error);
  if (tools == NULL)
    goto fail;
  g_object_set (tools,
                "shell-timeout-ms", 10000,
                "max-shell-output-bytes", (guint64) 65536,
                NULL);
  g_signal_connect (tools, "authorize", G_CALLBACK (authorize_cb), NULL);
  g_signal_connect (tools, "tool-error", G_CALLBACK (tool_error_cb), NULL);

  /* This is what goes into the model's request. */
  definitions = sandbox_coding_tools_get_definitions_json (tools);
  g_print ("tools for the model: %zu bytes of JSON\n", strlen (definitions));

  /* The agent loop. */
  for (gsize i = 0; i < G_N_ELEMENTS (script); i++)
    {
      g_autofree char *result = NULL;

      g_print ("\nmodel → %s %s\n", script[i].tool, script[i].arguments);
      result = sandbox_coding_tools_invoke (tools, script[i].tool, script[i].arguments,
                                            NULL, &error);
      if (result == NULL)
        goto fail;   /* only cancellation gets here */
      g_print ("host  → %s\n", result);
      if (!result_ok (result))
        refused++;
    }

  /* The host checks the agent's work directly. */
  fixed = sandbox_session_read_text (sandbox_handle_get_session (handle), "calc.py", NULL, &error);
  if (fixed == NULL)
    goto fail;
  if (strstr (fixed, "return a + b") == NULL || refused != 2)
    {
      g_printerr ("unexpected outcome (%u refused calls):\n%s", refused, fixed);
      status = EXIT_FAILURE;
    }
  else
    g_print ("\ncalc.py is fixed; 2 calls were refused as expected\n");

  g_clear_object (&tools);
  if (!sandbox_handle_delete (handle, NULL, &error))
    goto fail;
  g_clear_object (&handle);
  g_clear_object (&backend);
  remove_tree (state_directory);   /* the template is still in it */
  return status;

fail:
  g_printerr ("coding-agent: %s\n", error ? error->message : "failed");
  if (handle != NULL)
    sandbox_handle_delete (handle, NULL, NULL);
  if (state_directory != NULL)
    remove_tree (state_directory);
  return EXIT_FAILURE;
}
