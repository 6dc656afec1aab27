/* test-coding-calls.c — what every coding tool call goes through, over real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The tool definitions the model sees, the strict argument checks and their
 * exact messages, and the host's authorization of each operation; and no
 * coding tools at all on a backend without a coding binding (the memory
 * driver).
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <sandbox.h>

#include "coding-fixture.h"

static void
test_no_binding (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = sandbox_backend_new ("memory", NULL, &error, NULL);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("t");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxCodingTools) tools = NULL;
  g_autofree char *key = NULL;

  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);

  g_assert_null (sandbox_handle_get_coding_binding (handle));
  tools = sandbox_coding_tools_new (handle, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_cmpstr (error->message, ==, "Backend does not expose a host coding workspace");
  g_assert_null (tools);
}

static void
test_definitions (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *json = sandbox_coding_tools_get_definitions_json (fixture->tools);
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  const char *expected[] = { "shell", "read_file", "write_file", "edit_file", "list_files",
                             "exec_command", "write_stdin", "list_commands", "kill_command",
                             "search_files" };
  JsonArray *array;

  json_parser_load_from_data (parser, json, -1, &error);
  g_assert_no_error (error);
  array = json_node_get_array (json_parser_get_root (parser));
  g_assert_cmpuint (json_array_get_length (array), ==, G_N_ELEMENTS (expected));
  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      JsonObject *tool = json_array_get_object_element (array, i);
      JsonObject *parameters = json_object_get_object_member (tool, "parameters");

      g_assert_cmpstr (json_object_get_string_member (tool, "name"), ==, expected[i]);
      g_assert_cmpuint (strlen (json_object_get_string_member (tool, "description")), >, 10);
      g_assert_cmpstr (json_object_get_string_member (parameters, "type"), ==, "object");
      g_assert_false (json_object_get_boolean_member (parameters, "additionalProperties"));
      g_assert_nonnull (json_object_get_object_member (parameters, "properties"));
    }

  /* The shell takes a deadline, bounded by the host's maximum which the
   * schema states; the description says what survives a call. */
  {
    JsonObject *shell = json_array_get_object_element (array, 0);
    JsonObject *properties = json_object_get_object_member (
      json_object_get_object_member (shell, "parameters"), "properties");
    JsonObject *timeout = json_object_get_object_member (properties, "timeout_ms");
    const char *description = json_object_get_string_member (shell, "description");
    g_autofree char *again = NULL;
    g_autoptr(JsonParser) reparsed = json_parser_new ();

    g_assert_nonnull (timeout);
    g_assert_cmpstr (json_object_get_string_member (timeout, "type"), ==, "integer");
    g_assert_cmpint (json_object_get_int_member (timeout, "minimum"), ==, 1);
    g_assert_cmpint (json_object_get_int_member (timeout, "maximum"), ==,
                     SANDBOX_CODING_DEFAULT_MAX_SHELL_TIMEOUT_MS);
    g_assert_nonnull (strstr (description, "only files under /workspace persist"));
    g_assert_nonnull (strstr (description, "/tmp"));
    g_assert_nonnull (strstr (description, "processes it leaves behind"));

    g_object_set (fixture->tools, "max-shell-timeout-ms", 4321, NULL);
    again = sandbox_coding_tools_get_definitions_json (fixture->tools);
    json_parser_load_from_data (reparsed, again, -1, &error);
    g_assert_no_error (error);
    shell = json_array_get_object_element (json_node_get_array (json_parser_get_root (reparsed)), 0);
    properties = json_object_get_object_member (
      json_object_get_object_member (shell, "parameters"), "properties");
    timeout = json_object_get_object_member (properties, "timeout_ms");
    g_assert_cmpint (json_object_get_int_member (timeout, "maximum"), ==, 4321);
  }
}

/* The Anthropic shape is the same definitions with the schema under
 * "input_schema": parse both and compare them member by member. */
static void
test_definitions_input_schema (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autofree char *plain = sandbox_coding_tools_get_definitions_json (fixture->tools);
  g_autofree char *shaped =
    sandbox_coding_tools_get_definitions_json_full (fixture->tools,
                                                    SANDBOX_CODING_DEFINITION_SHAPE_INPUT_SCHEMA);
  g_autoptr(JsonNode) plain_root = json_from_string (plain, NULL);
  g_autoptr(JsonNode) shaped_root = json_from_string (shaped, NULL);
  JsonArray *plain_tools = json_node_get_array (plain_root);
  JsonArray *shaped_tools = json_node_get_array (shaped_root);
  g_autofree char *default_shape =
    sandbox_coding_tools_get_definitions_json_full (fixture->tools,
                                                    SANDBOX_CODING_DEFINITION_SHAPE_PARAMETERS);

  g_assert_cmpstr (default_shape, ==, plain);
  g_assert_cmpuint (json_array_get_length (shaped_tools), ==, json_array_get_length (plain_tools));
  for (guint i = 0; i < json_array_get_length (plain_tools); i++)
    {
      JsonObject *a = json_array_get_object_element (plain_tools, i);
      JsonObject *b = json_array_get_object_element (shaped_tools, i);

      g_assert_cmpuint (json_object_get_size (b), ==, 3);
      g_assert_false (json_object_has_member (b, "parameters"));
      g_assert_cmpstr (json_object_get_string_member (a, "name"), ==,
                       json_object_get_string_member (b, "name"));
      g_assert_cmpstr (json_object_get_string_member (a, "description"), ==,
                       json_object_get_string_member (b, "description"));
      g_assert_true (json_node_equal (json_object_get_member (a, "parameters"),
                                      json_object_get_member (b, "input_schema")));
    }
}

/* The definitions the model sees are generated from the tool table; they
 * must stay byte-identical to what the hand-written JSON gave (the golden
 * copies in tests/coding/ were produced by that code). Change one character
 * of a description or a member's place in the table and this test fails. */
static void
assert_definitions_golden (SandboxCodingTools *tools,
                           const char         *golden_name)
{
  /* Not G_TEST_SRCDIR: run-unprivileged.sh does not pass it on. */
  g_autofree char *path = g_build_filename (CODING_TEST_SOURCE_DIR, golden_name, NULL);
  g_autofree char *json = sandbox_coding_tools_get_definitions_json (tools);
  g_autofree char *golden = NULL;
  g_autoptr(GError) error = NULL;
  gsize length;

  g_file_get_contents (path, &golden, &length, &error);
  g_assert_no_error (error);
  /* The file ends with one newline that the definitions do not have. */
  g_assert_true (length > 0 && golden[length - 1] == '\n');
  golden[length - 1] = '\0';
  g_assert_cmpstr (json, ==, golden);
}

static void
test_definitions_golden (Fixture       *fixture,
                         gconstpointer  data)
{
  assert_definitions_golden (fixture->tools, "definitions-default.json");

  /* The two numbers the host configures appear where the golden copy has them. */
  g_object_set (fixture->tools,
                "shell-timeout-ms", 1234,
                "max-shell-timeout-ms", 98765,
                NULL);
  assert_definitions_golden (fixture->tools, "definitions-configured.json");
}

/* Every branch of the strict argument check, with its exact result: which
 * check speaks first when several would, and the very words. The messages
 * are the ones the hand-written checks gave; the table-driven check must
 * repeat them. Swap two checks (e.g. the path before the unknown-argument
 * pass, or the shell command's emptiness after the timeout bound) and a row
 * fails. */
/* What an unknown tool's name gets: every tool named. */
#define UNKNOWN_TOOL \
  "Unknown tool; the tools are shell, read_file, write_file, edit_file, list_files, " \
  "exec_command, write_stdin, list_commands, kill_command and search_files"

static void
test_argument_messages (Fixture       *fixture,
                        gconstpointer  data)
{
  static const struct {
    const char *tool;
    const char *arguments;
    const char *expected;
  } calls[] = {
#define INVALID(message) "{\"ok\":false,\"error\":{\"code\":\"SANDBOX_INVALID\",\"message\":\"" message "\"}}"
#define LIMIT(message) "{\"ok\":false,\"error\":{\"code\":\"SANDBOX_LIMIT\",\"message\":\"" message "\"}}"
#define PATH(tool) "{\"ok\":false,\"error\":{\"code\":\"SANDBOX_PATH\",\"message\":\"" tool " needs a path " \
  "inside the workspace: relative to /workspace (or starting with /workspace/), without '..', '.' or " \
  "empty segments\"}}"
    /* The tool's name. */
    { "nope", "{}", INVALID (UNKNOWN_TOOL) },
    { "", "{}", INVALID (UNKNOWN_TOOL) },
    { "Shell", "{\"command\":\"true\"}", INVALID (UNKNOWN_TOOL) },
    { "nope", "not json", INVALID (UNKNOWN_TOOL) },
    /* Not an object. */
    { "read_file", "[]", INVALID ("Arguments of read_file must be a JSON object") },
    { "read_file", "\"path\"", INVALID ("Arguments of read_file must be a JSON object") },
    { "read_file", "null", INVALID ("Arguments of read_file must be a JSON object") },
    { "shell", "{", INVALID ("Arguments of shell must be a JSON object") },
    { "list_files", "{} {}", INVALID ("Arguments of list_files must be a JSON object") },
    /* No arguments at all is an empty object. */
    { "read_file", NULL, INVALID ("Missing required argument path of read_file") },
    { "read_file", "", INVALID ("Missing required argument path of read_file") },
    /* Unknown members, for each tool: the message lists the tool's arguments. */
    { "shell", "{\"command\":\"true\",\"env\":{}}", INVALID ("Unknown argument for shell; its arguments are: command, cwd, timeout_ms") },
    { "read_file", "{\"path\":\"hello.txt\",\"extra\":true}", INVALID ("Unknown argument for read_file; its arguments are: path, offset, limit") },
    { "write_file", "{\"Path\":\"a\",\"content\":\"\"}", INVALID ("Unknown argument for write_file; its arguments are: path, content") },
    { "edit_file", "{\"path\":\"a\",\"old_string\":\"x\",\"new_string\":\"y\",\"all\":true}", INVALID ("Unknown argument for edit_file; its arguments are: path, old_string, new_string") },
    { "list_files", "{\"recursive\":true}", INVALID ("Unknown argument for list_files; its arguments are: path") },
    /* Members are checked in their order, before anything is missing. */
    { "read_file", "{\"extra\":1,\"offset\":0}", INVALID ("Unknown argument for read_file; its arguments are: path, offset, limit") },
    { "read_file", "{\"offset\":0,\"extra\":1}", INVALID ("Argument offset of read_file must be a positive integer") },
    { "write_file", "{\"content\":1}", INVALID ("Argument content of write_file must be a string") },
    /* Strings. */
    { "read_file", "{\"path\":1}", INVALID ("Argument path of read_file must be a string") },
    { "read_file", "{\"path\":null}", INVALID ("Argument path of read_file must be a string") },
    { "read_file", "{\"path\":[\"a\"]}", INVALID ("Argument path of read_file must be a string") },
    { "shell", "{\"command\":[\"ls\"]}", INVALID ("Argument command of shell must be a string") },
    { "shell", "{\"command\":\"true\",\"cwd\":true}", INVALID ("Argument cwd of shell must be a string") },
    { "edit_file", "{\"path\":\"a\",\"old_string\":\"x\",\"new_string\":0}", INVALID ("Argument new_string of edit_file must be a string") },
    { "list_files", "{\"path\":{}}", INVALID ("Argument path of list_files must be a string") },
    /* Positive integers. */
    { "read_file", "{\"path\":\"hello.txt\",\"offset\":0}", INVALID ("Argument offset of read_file must be a positive integer") },
    { "read_file", "{\"path\":\"hello.txt\",\"limit\":-3}", INVALID ("Argument limit of read_file must be a positive integer") },
    { "read_file", "{\"path\":\"hello.txt\",\"limit\":1.5}", INVALID ("Argument limit of read_file must be a positive integer") },
    { "read_file", "{\"path\":\"hello.txt\",\"offset\":\"2\"}", INVALID ("Argument offset of read_file must be a positive integer") },
    { "read_file", "{\"path\":\"hello.txt\",\"offset\":true}", INVALID ("Argument offset of read_file must be a positive integer") },
    { "read_file", "{\"path\":\"hello.txt\",\"offset\":null}", INVALID ("Argument offset of read_file must be a positive integer") },
    { "shell", "{\"command\":\"true\",\"timeout_ms\":0}", INVALID ("Argument timeout_ms of shell must be a positive integer") },
    /* Missing, in the order of the tool's arguments. */
    { "shell", "{}", INVALID ("Missing required argument command of shell") },
    { "shell", "{\"cwd\":\".\"}", INVALID ("Missing required argument command of shell") },
    { "write_file", "{}", INVALID ("Missing required argument path of write_file") },
    { "write_file", "{\"path\":\"a\"}", INVALID ("Missing required argument content of write_file") },
    { "edit_file", "{\"new_string\":\"y\"}", INVALID ("Missing required argument path of edit_file") },
    { "edit_file", "{\"path\":\"a\",\"new_string\":\"y\"}", INVALID ("Missing required argument old_string of edit_file") },
    { "edit_file", "{\"path\":\"a\",\"old_string\":\"x\"}", INVALID ("Missing required argument new_string of edit_file") },
    /* The path, after the members and before the tools' own bounds. */
    { "read_file", "{\"path\":\"../etc/passwd\"}", PATH ("read_file") },
    { "read_file", "{\"path\":\"/etc/passwd\"}", PATH ("read_file") },
    { "read_file", "{\"path\":\"\"}", PATH ("read_file") },
    { "write_file", "{\"path\":\"a/./b\",\"content\":\"\"}", PATH ("write_file") },
    { "list_files", "{\"path\":\"/workspace/\"}", PATH ("list_files") },
    { "shell", "{\"command\":\"\",\"cwd\":\"..\",\"timeout_ms\":999999999}", PATH ("shell") },
    { "edit_file", "{\"path\":\"a//b\",\"old_string\":\"\",\"new_string\":\"\"}", PATH ("edit_file") },
    /* The shell's bounds: the command first, then the deadline. */
    { "shell", "{\"command\":\"\"}", INVALID ("The shell command is empty") },
    { "shell", "{\"command\":\"\",\"timeout_ms\":999999999}", INVALID ("The shell command is empty") },
    { "shell", "{\"command\":\"true\",\"timeout_ms\":600001}", LIMIT ("timeout_ms of shell exceeds the host's maximum of 600000 ms") },
    { "shell", "{\"command\":\"true\",\"timeout_ms\":9223372036854775807}", LIMIT ("timeout_ms of shell exceeds the host's maximum of 600000 ms") },
    /* The edit's bounds: old_string first, then the two strings together. */
    { "edit_file", "{\"path\":\"hello.txt\",\"old_string\":\"\",\"new_string\":\"x\"}", INVALID ("old_string of edit_file is empty") },
    { "edit_file", "{\"path\":\"hello.txt\",\"old_string\":\"\",\"new_string\":\"\"}", INVALID ("old_string of edit_file is empty") },
    { "edit_file", "{\"path\":\"hello.txt\",\"old_string\":\"hello\",\"new_string\":\"hello\"}", INVALID ("old_string and new_string of edit_file are identical") },
    /* At the bounds, the call runs. */
    { "shell", "{\"command\":\"true\",\"timeout_ms\":600000}", "{\"ok\":true,\"exit_status\":0,\"stdout\":\"\",\"stderr\":\"\",\"truncated\":false}" },
    { "shell", "{\"command\":\"true\",\"timeout_ms\":1,\"cwd\":\"/workspace\"}", NULL },
    { "read_file", "{\"path\":\"hello.txt\",\"offset\":1,\"limit\":1}", "{\"ok\":true,\"path\":\"/workspace/hello.txt\",\"content\":\"hello\\n\",\"start_line\":1,\"lines\":1,\"total_lines\":1,\"truncated\":false}" },
    { "edit_file", "{\"path\":\"hello.txt\",\"old_string\":\"h\",\"new_string\":\"\"}", "{\"ok\":true,\"path\":\"/workspace/hello.txt\",\"replacements\":1}" },
    { "list_files", "{\"path\":\".\"}", "{\"ok\":true,\"path\":\"/workspace\",\"entries\":[{\"name\":\"hello.txt\",\"type\":\"file\",\"size\":5}],\"truncated\":false}" },
    /* Arguments not given take the table's defaults: the workspace root, line 1, 2000 lines. */
    { "list_files", "{}", "{\"ok\":true,\"path\":\"/workspace\",\"entries\":[{\"name\":\"hello.txt\",\"type\":\"file\",\"size\":5}],\"truncated\":false}" },
    { "read_file", "{\"path\":\"hello.txt\"}", "{\"ok\":true,\"path\":\"/workspace/hello.txt\",\"content\":\"ello\\n\",\"start_line\":1,\"lines\":1,\"total_lines\":1,\"truncated\":false}" },
#undef INVALID
#undef LIMIT
#undef PATH
  };
  g_autoptr(GString) huge = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    {
      g_autoptr(GError) error = NULL;
      char *result = sandbox_coding_tools_invoke (fixture->tools, calls[i].tool, calls[i].arguments,
                                                  NULL, &error);

      g_assert_no_error (error);
      g_ptr_array_add (fixture->results, result);
      g_test_message ("%s %s → %s", calls[i].tool, calls[i].arguments, result);
      /* A one-millisecond deadline may or may not be met: the call ran. */
      if (calls[i].expected == NULL)
        g_assert_null (strstr (result, "SANDBOX_INVALID"));
      else
        g_assert_cmpstr (result, ==, calls[i].expected);
    }
  /* Every call that reached the host was authorized with its tool's kind. */
  g_assert_cmpuint (fixture->operations->len, ==, 7);

  /* Arguments over the size cap, checked before they are parsed. */
  huge = g_string_new ("{\"command\":\"");
  while (huge->len <= 4 * 1024 * 1024)
    g_string_append (huge, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
  {
    g_autofree char *result = sandbox_coding_tools_invoke (fixture->tools, "shell", huge->str, NULL, NULL);

    g_assert_cmpstr (result, ==, "{\"ok\":false,\"error\":{\"code\":\"SANDBOX_LIMIT\",\"message\":"
                                 "\"Arguments of shell exceed 4194304 bytes\"}}");
  }
  /* A command over its own cap, in valid arguments. */
  g_string_truncate (huge, strlen ("{\"command\":\""));
  while (huge->len <= 64 * 1024 + strlen ("{\"command\":\""))
    g_string_append (huge, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
  g_string_append (huge, "\",\"timeout_ms\":999999999}");
  {
    g_autofree char *result = sandbox_coding_tools_invoke (fixture->tools, "shell", huge->str, NULL, NULL);

    g_assert_cmpstr (result, ==, "{\"ok\":false,\"error\":{\"code\":\"SANDBOX_LIMIT\",\"message\":"
                                 "\"The shell command exceeds 65536 bytes\"}}");
  }
  /* The bound the model is held to is the host's current one. */
  g_object_set (fixture->tools, "max-shell-timeout-ms", 50, NULL);
  {
    g_autofree char *result = sandbox_coding_tools_invoke (fixture->tools, "shell",
                                                           "{\"command\":\"true\",\"timeout_ms\":51}",
                                                           NULL, NULL);

    g_assert_cmpstr (result, ==, "{\"ok\":false,\"error\":{\"code\":\"SANDBOX_LIMIT\",\"message\":"
                                 "\"timeout_ms of shell exceeds the host's maximum of 50 ms\"}}");
  }
}

static gboolean
deny_cb (SandboxCodingTools     *tools,
         SandboxCodingOperation *operation,
         gpointer                data)
{
  return FALSE;
}

static gboolean
deny_secret_path_cb (SandboxCodingTools     *tools,
                     SandboxCodingOperation *operation,
                     gpointer                data)
{
  return !g_str_has_prefix (sandbox_coding_operation_get_path (operation), "/workspace/secret");
}

static void
test_authorization (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxCodingTools) tools = sandbox_coding_tools_new (fixture->handle, &error);
  const char *calls[][2] = {
    { "shell", "{\"command\":\"touch /workspace/ran\"}" },
    { "read_file", "{\"path\":\"hello.txt\"}" },
    { "write_file", "{\"path\":\"new.txt\",\"content\":\"x\"}" },
    { "edit_file", "{\"path\":\"hello.txt\",\"old_string\":\"hello\",\"new_string\":\"bye\"}" },
    { "list_files", "{}" },
  };
  g_autoptr(JsonObject) result = NULL;
  SandboxCodingOperation *operation;

  g_assert_no_error (error);

  /* Deny by default: no handler at all. */
  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    {
      g_autoptr(JsonObject) denied = invoke_with (fixture, tools, calls[i][0], calls[i][1]);

      assert_error (denied, "SANDBOX_DENIED");
    }
  /* A handler that says no. */
  g_signal_connect (tools, "authorize", G_CALLBACK (deny_cb), NULL);
  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    {
      g_autoptr(JsonObject) denied = invoke_with (fixture, tools, calls[i][0], calls[i][1]);

      assert_error (denied, "SANDBOX_DENIED");
    }
  {
    g_autofree char *hello = host_read (fixture, "hello.txt");
    g_autoptr(GBytes) bytes = sandbox_session_read_bytes (fixture->session, "new.txt", NULL, &error);

    g_assert_cmpstr (hello, ==, "hello\n");
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
    g_clear_error (&error);
  }
  {
    g_autoptr(JsonObject) ran = invoke_with (fixture, tools, "shell", "{\"command\":\"true\"}");
    g_autoptr(GBytes) bytes = NULL;

    assert_error (ran, "SANDBOX_DENIED");
    bytes = sandbox_session_read_bytes (fixture->session, "ran", NULL, &error);
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
    g_clear_error (&error);
  }

  /* The operations the host sees: tool, kind, canonical path, command. */
  result = invoke (fixture, "shell", "{\"command\":\"echo hi\",\"cwd\":\"/workspace/\"}");
  assert_error (result, "SANDBOX_PATH");   /* "/workspace/" has an empty relative part */
  g_clear_pointer (&result, json_object_unref);
  g_ptr_array_set_size (fixture->operations, 0);
  result = invoke (fixture, "shell", "{\"command\":\"echo hi\"}");
  assert_ok (result);
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "read_file", "{\"path\":\"/workspace/hello.txt\"}");
  assert_ok (result);
  g_assert_cmpuint (fixture->operations->len, ==, 2);
  operation = g_ptr_array_index (fixture->operations, 0);
  g_assert_cmpstr (sandbox_coding_operation_get_tool (operation), ==, "shell");
  g_assert_cmpint (sandbox_coding_operation_get_kind (operation), ==, SANDBOX_CODING_OPERATION_EXECUTE);
  g_assert_cmpstr (sandbox_coding_operation_get_command (operation), ==, "echo hi");
  g_assert_cmpstr (sandbox_coding_operation_get_path (operation), ==, "/workspace");
  operation = g_ptr_array_index (fixture->operations, 1);
  g_assert_cmpint (sandbox_coding_operation_get_kind (operation), ==, SANDBOX_CODING_OPERATION_READ);
  g_assert_cmpstr (sandbox_coding_operation_get_path (operation), ==, "/workspace/hello.txt");
  g_assert_null (sandbox_coding_operation_get_command (operation));
  g_clear_pointer (&result, json_object_unref);

  /* The optional path authorizer. */
  g_signal_connect (fixture->tools, "authorize-path", G_CALLBACK (deny_secret_path_cb), NULL);
  result = invoke (fixture, "write_file", "{\"path\":\"secret/key\",\"content\":\"x\"}");
  assert_error (result, "SANDBOX_DENIED");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "write_file", "{\"path\":\"public/key\",\"content\":\"x\"}");
  assert_ok (result);
}

static void
test_bad_arguments (Fixture       *fixture,
                    gconstpointer  data)
{
  const char *calls[][3] = {
    { "nope", "{}", "SANDBOX_INVALID" },
    { "read_file", "[]", "SANDBOX_INVALID" },
    { "read_file", "{", "SANDBOX_INVALID" },
    { "read_file", "not json", "SANDBOX_INVALID" },
    { "read_file", "{}", "SANDBOX_INVALID" },
    { "read_file", "{\"path\":1}", "SANDBOX_INVALID" },
    { "read_file", "{\"path\":\"hello.txt\",\"extra\":true}", "SANDBOX_INVALID" },
    { "read_file", "{\"path\":\"hello.txt\",\"offset\":0}", "SANDBOX_INVALID" },
    { "read_file", "{\"path\":\"hello.txt\",\"limit\":-3}", "SANDBOX_INVALID" },
    /* Strict JSON: an integer past 64 bits must not wrap around into a valid
     * offset, and a duplicate member must not pick one of the values. */
    { "read_file", "{\"path\":\"hello.txt\",\"offset\":-9223372036854775809}", "SANDBOX_INVALID" },
    { "read_file", "{\"path\":\"../etc/passwd\",\"path\":\"hello.txt\"}", "SANDBOX_INVALID" },
    { "read_file", "/* comment */ {\"path\":\"hello.txt\"}", "SANDBOX_INVALID" },
    { "read_file", "{\"path\":\"hello.txt\",\"limit\":1.5}", "SANDBOX_INVALID" },
    { "read_file", "{\"path\":\"hello.txt\",\"offset\":\"2\"}", "SANDBOX_INVALID" },
    { "read_file", "{\"path\":null}", "SANDBOX_INVALID" },
    { "write_file", "{\"path\":\"a\"}", "SANDBOX_INVALID" },
    { "edit_file", "{\"path\":\"hello.txt\",\"old_string\":\"\",\"new_string\":\"x\"}", "SANDBOX_INVALID" },
    { "shell", "{\"command\":\"\"}", "SANDBOX_INVALID" },
    { "shell", "{\"command\":[\"ls\"]}", "SANDBOX_INVALID" },
    { "list_files", "{\"path\":{}}", "SANDBOX_INVALID" },
  };
  g_autofree char *huge = NULL;
  g_autoptr(JsonObject) result = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    {
      g_autoptr(JsonObject) bad = invoke (fixture, calls[i][0], calls[i][1]);

      assert_error (bad, calls[i][2]);
      g_assert_cmpuint (strlen (error_message (bad)), >, 10);
    }

  /* A command longer than the cap. */
  huge = g_strdup_printf ("{\"command\":\"%0*d\"}", 70000, 0);
  result = invoke (fixture, "shell", huge);
  assert_error (result, "SANDBOX_LIMIT");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  if (coding_test_skip_without_bwrap ())
    return 77;

  g_test_add_func ("/coding/no-binding", test_no_binding);
  ADD ("definitions", test_definitions);
  ADD ("definitions-input-schema", test_definitions_input_schema);
  ADD ("definitions-golden", test_definitions_golden);
  ADD ("argument-messages", test_argument_messages);
  ADD ("authorization", test_authorization);
  ADD ("bad-arguments", test_bad_arguments);

  return g_test_run ();
}
