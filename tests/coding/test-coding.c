/* test-coding.c — the coding tools over real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include <json-glib/json-glib.h>
#include <sandbox.h>

#include "sandbox-test-bwrap-children.h"
#include "gated-session.h"
#include "sandbox-test-backend.h"

/* Fixture ------------------------------------------------------------------ */

typedef struct
{
  char *state_directory;
  SandboxBackend *backend;
  char *template_key;
  SandboxHandle *handle;
  SandboxSession *session;
  SandboxCodingTools *tools;
  GPtrArray *results;          /* every result JSON, for the leak checks */
  GPtrArray *tool_errors;      /* GError copies from ::tool-error */
  GPtrArray *operations;       /* SandboxCodingOperation seen by ::authorize */
} Fixture;

static gboolean
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

static void
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

static void
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

static JsonObject *
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
static JsonObject *
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

static JsonObject *
invoke (Fixture    *fixture,
        const char *tool,
        const char *arguments)
{
  return invoke_with (fixture, fixture->tools, tool, arguments);
}

static void
assert_ok (JsonObject *result)
{
  if (!json_object_get_boolean_member (result, "ok"))
    {
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), result);
      g_autofree char *text = json_to_string (node, FALSE);

      g_error ("expected an ok result, got %s", text);
    }
}

static const char *
error_code (JsonObject *result)
{
  g_assert_false (json_object_get_boolean_member (result, "ok"));
  return json_object_get_string_member (json_object_get_object_member (result, "error"), "code");
}

static const char *
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

#define assert_error(result, code) g_assert_cmpstr (error_code (result), ==, (code))

static void
assert_refusal (JsonObject *result,
                const char *reason)
{
  assert_error (result, "SANDBOX_UNAVAILABLE");
  g_assert_cmpstr (error_message (result), ==, "Sandbox session cannot execute this operation");
  g_assert_cmpstr (error_reason (result), ==, reason);
}

static char *
host_read (Fixture    *fixture,
           const char *path)
{
  g_autoptr(GError) error = NULL;
  char *text = sandbox_session_read_text (fixture->session, path, NULL, &error);

  g_assert_no_error (error);
  return text;
}

static void
set_policy (Fixture    *fixture,
            const char *json)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (json, &error);

  g_assert_no_error (error);
  sandbox_session_set_network_policy (fixture->session, policy, NULL, &error);
  g_assert_no_error (error);
}

/* Whether the process @pidfd refers to exits within @timeout_ms. */
static gboolean
has_exited (int pidfd,
            int timeout_ms)
{
  struct pollfd exited = { .fd = pidfd, .events = POLLIN };

  return poll (&exited, 1, timeout_ms) == 1;
}

/* The MESSAGE of every "ready-command" event since the last
 * ready_commands_clear(), in order: the bubblewrap driver logs one (at
 * DEBUG, in the "Sandbox" domain) each time a command takes a ready
 * sandbox (log_ready_command() in sandbox-bubblewrap-process.c). Every
 * message still goes on to GLib's default writer. */
static GMutex ready_commands_lock;
static GPtrArray *ready_commands;

static char *
field_text (const GLogField *field)
{
  return field->length < 0 ? g_strdup (field->value)
                            : g_strndup (field->value, (gsize) field->length);
}

static GLogWriterOutput
capture_ready_commands (GLogLevelFlags   level,
                        const GLogField *fields,
                        gsize            n_fields,
                        gpointer         user_data)
{
  g_autofree char *domain = NULL;
  g_autofree char *event = NULL;
  g_autofree char *message = NULL;

  for (gsize i = 0; i < n_fields; i++)
    {
      if (g_str_equal (fields[i].key, "GLIB_DOMAIN"))
        domain = field_text (&fields[i]);
      else if (g_str_equal (fields[i].key, "SANDBOX_EVENT"))
        event = field_text (&fields[i]);
      else if (g_str_equal (fields[i].key, "MESSAGE"))
        message = field_text (&fields[i]);
    }
  if (g_strcmp0 (domain, "Sandbox") == 0 && g_strcmp0 (event, "ready-command") == 0)
    {
      g_mutex_lock (&ready_commands_lock);
      g_ptr_array_add (ready_commands, g_steal_pointer (&message));
      g_mutex_unlock (&ready_commands_lock);
    }
  return g_log_writer_default (level, fields, n_fields, user_data);
}

static void
ready_commands_clear (void)
{
  g_mutex_lock (&ready_commands_lock);
  g_ptr_array_set_size (ready_commands, 0);
  g_mutex_unlock (&ready_commands_lock);
}

/* (transfer full): the captured messages, as a NULL-terminated copy. */
static char **
ready_commands_dup (void)
{
  GStrvBuilder *builder = g_strv_builder_new ();
  char **messages;

  g_mutex_lock (&ready_commands_lock);
  for (guint i = 0; i < ready_commands->len; i++)
    g_strv_builder_add (builder, g_ptr_array_index (ready_commands, i));
  g_mutex_unlock (&ready_commands_lock);
  messages = g_strv_builder_end (builder);
  g_strv_builder_unref (builder);
  return messages;
}

/* Tests -------------------------------------------------------------------- */

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
  const char *expected[] = { "shell", "read_file", "write_file", "edit_file", "list_files" };
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
    g_assert_nonnull (strstr (description, "background processes"));

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
    { "nope", "{}", INVALID ("Unknown tool; the tools are shell, read_file, write_file, edit_file and list_files") },
    { "", "{}", INVALID ("Unknown tool; the tools are shell, read_file, write_file, edit_file and list_files") },
    { "Shell", "{\"command\":\"true\"}", INVALID ("Unknown tool; the tools are shell, read_file, write_file, edit_file and list_files") },
    { "nope", "not json", INVALID ("Unknown tool; the tools are shell, read_file, write_file, edit_file and list_files") },
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
allow_cb (SandboxCodingTools     *tools,
          SandboxCodingOperation *operation,
          gpointer                data)
{
  return TRUE;
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

static void
test_shell (Fixture       *fixture,
            gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;

  result = invoke (fixture, "shell", "{\"command\":\"echo out; echo err >&2; pwd; exit 3\"}");
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "exit_status"), ==, 3);
  g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==, "out\n/workspace\n");
  g_assert_cmpstr (json_object_get_string_member (result, "stderr"), ==, "err\n");
  g_assert_false (json_object_get_boolean_member (result, "truncated"));
  g_assert_false (json_object_has_member (result, "artifact_id"));
  g_clear_pointer (&result, json_object_unref);

  /* A working directory inside the workspace. */
  result = invoke (fixture, "shell", "{\"command\":\"mkdir -p sub/dir\"}");
  assert_ok (result);
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "shell", "{\"command\":\"pwd\",\"cwd\":\"sub/dir\"}");
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==, "/workspace/sub/dir\n");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "shell", "{\"command\":\"pwd\",\"cwd\":\"../etc\"}");
  assert_error (result, "SANDBOX_PATH");
  g_clear_pointer (&result, json_object_unref);

  /* The shell's own configuration. */
  sandbox_coding_tools_set_shell (fixture->tools, "/usr/bin/bash");
  result = invoke (fixture, "shell", "{\"command\":\"echo $BASH_VERSION | cut -c1\"}");
  assert_ok (result);
  g_assert_cmpuint (strlen (json_object_get_string_member (result, "stdout")), ==, 2);
  g_clear_pointer (&result, json_object_unref);
  sandbox_coding_tools_set_shell (fixture->tools, NULL);
  {
    g_autofree char *shell = sandbox_coding_tools_dup_shell (fixture->tools);

    g_assert_cmpstr (shell, ==, "/usr/bin/sh");
  }

  /* Deadline: a structured limit, and the group is gone. */
  sandbox_coding_tools_set_shell_timeout_ms (fixture->tools, 300);
  result = invoke (fixture, "shell", "{\"command\":\"echo started; sleep 30\"}");
  assert_error (result, "SANDBOX_LIMIT");
  g_assert_cmpstr (error_message (result), ==, "Sandbox command deadline exceeded");
  g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==, "started\n");
}

/* The shell tool's commands take ready sandboxes as direct commands do (the
 * binding spawns through the driver's own path): the session's first is
 * cold, and after a pause long enough for the next sandbox to launch, the
 * second runs in that sandbox (the driver's ready-command event says so:
 * the sandbox's bwrap ending would not, a discarded one ends too). Pass
 * FALSE for prepare_next in sandbox_bubblewrap_driver_spawn_prepared() to
 * see no sandbox started after a shell call; discard the ready sandbox
 * for prepared launches in spawn_process() (sandbox-bubblewrap-driver.c)
 * to see the second run cold, with no event. */
static void
test_shell_ready_sandbox (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(GArray) children = NULL;
  g_auto(GStrv) taken = NULL;
  int pidfd;

  ready_commands_clear ();
  result = invoke (fixture, "shell", "{\"command\":\"echo first\"}");
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==, "first\n");
  g_clear_pointer (&result, json_object_unref);
  taken = ready_commands_dup ();
  g_assert_cmpstrv (taken, ((const char * const[]) { NULL }));
  g_clear_pointer (&taken, g_strfreev);

  /* The agent's think time: until the next sandbox runs, its stub waiting. */
  children = sandbox_test_wait_for_bwrap_children (1);
  g_assert_cmpuint (children->len, ==, 1);
  pidfd = pidfd_open (g_array_index (children, pid_t, 0), 0);
  g_assert_cmpint (pidfd, >=, 0);

  result = invoke (fixture, "shell", "{\"command\":\"echo second\"}");
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==, "second\n");
  taken = ready_commands_dup ();
  g_assert_cmpstrv (taken, ((const char * const[]) {
                              "ready sandbox: -- '/usr/bin/sh' '-c' 'echo second'", NULL }));
  /* Taken, so it ends with its command, as every sandbox does. */
  g_assert_true (has_exited (pidfd, 10 * 1000));
  close (pidfd);
}

static void
test_shell_truncation (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(GBytes) full = NULL;
  g_autoptr(GBytes) full_err = NULL;
  g_autoptr(GBytes) newest = NULL;
  g_autofree char *id = NULL;

  sandbox_coding_tools_set_max_shell_output_bytes (fixture->tools, 100);

  /* Output over the model's cap: truncated, the whole kept as an artifact. */
  result = invoke (fixture, "shell", "{\"command\":\"seq 1 1000; echo oops >&2\"}");
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "exit_status"), ==, 0);
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  /* 100 bytes of output (95 of stdout: 48 of head, 47 of tail) and the marker. */
  g_assert_cmpuint (strlen (json_object_get_string_member (result, "stdout")) +
                    strlen (json_object_get_string_member (result, "stderr")), <=,
                    100 + strlen ("[... 3798 bytes omitted ...]\n"));
  g_assert_cmpstr (json_object_get_string_member (result, "stderr"), ==, "oops\n");
  g_assert_true (g_str_has_prefix (json_object_get_string_member (result, "stdout"), "1\n2\n3\n"));
  g_assert_nonnull (strstr (json_object_get_string_member (result, "stdout"),
                            "\n[... 3798 bytes omitted ...]\n"));
  g_assert_true (g_str_has_suffix (json_object_get_string_member (result, "stdout"),
                                   "\n998\n999\n1000\n"));
  id = g_strdup (json_object_get_string_member (result, "artifact_id"));
  g_assert_nonnull (id);
  full = sandbox_coding_tools_get_artifact (fixture->tools, id, &full_err);
  g_assert_nonnull (full);
  g_assert_cmpuint (g_bytes_get_size (full), ==, 3893);   /* seq 1 1000 */
  g_assert_cmpmem (g_bytes_get_data (full_err, NULL), g_bytes_get_size (full_err), "oops\n", 5);
  g_assert_null (sandbox_coding_tools_get_artifact (fixture->tools, "artifact-999", NULL));
  g_clear_pointer (&result, json_object_unref);
  g_clear_pointer (&full, g_bytes_unref);

  /* Output over the command's own cap: killed, the artifact holds what
   * arrived within the cap. */
  g_object_set (fixture->tools, "max-command-output-bytes", (guint64) 4096, NULL);
  result = invoke (fixture, "shell", "{\"command\":\"seq 1 100; sleep 0.3; yes\"}");
  assert_error (result, "SANDBOX_LIMIT");
  g_assert_cmpstr (error_message (result), ==, "Sandbox output limit exceeded");
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  full = sandbox_coding_tools_get_artifact (fixture->tools,
                                            json_object_get_string_member (result, "artifact_id"),
                                            NULL);
  g_assert_nonnull (full);
  g_assert_cmpuint (g_bytes_get_size (full), <=, 4096);
  g_assert_cmpuint (g_bytes_get_size (full), >=, 292);   /* seq 1 100 */
  g_assert_cmpmem (g_bytes_get_data (full, NULL), 8, "1\n2\n3\n4\n", 8);
  g_clear_pointer (&result, json_object_unref);
  g_clear_pointer (&full, g_bytes_unref);

  /* Artifacts are bounded: the oldest goes first. */
  g_object_set (fixture->tools, "max-artifacts", 1, NULL);
  result = invoke (fixture, "shell", "{\"command\":\"seq 1 100\"}");
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  newest = sandbox_coding_tools_get_artifact (fixture->tools,
                                              json_object_get_string_member (result, "artifact_id"),
                                              NULL);
  g_assert_nonnull (newest);
  g_assert_null (sandbox_coding_tools_get_artifact (fixture->tools, id, NULL));
  g_free (id);
  id = g_strdup (json_object_get_string_member (result, "artifact_id"));
  g_clear_pointer (&result, json_object_unref);

  /* No artifacts at all: still truncated, nothing kept, nothing named. */
  g_object_set (fixture->tools, "max-artifacts", 0, NULL);
  {
    guint max_artifacts = 1;

    g_object_get (fixture->tools, "max-artifacts", &max_artifacts, NULL);
    g_assert_cmpuint (max_artifacts, ==, 0);
  }
  result = invoke (fixture, "shell", "{\"command\":\"seq 1 100\"}");
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  g_assert_false (json_object_has_member (result, "artifact_id"));
  /* … and the one kept before stays. */
  g_clear_pointer (&newest, g_bytes_unref);
  newest = sandbox_coding_tools_get_artifact (fixture->tools, id, NULL);
  g_assert_nonnull (newest);
}

/* A build outlasts a short deadline: the default fits builds (two
 * minutes), the model can ask for more per call up to the host's bound,
 * and the bound is enforced. To see it fail, drop timeout_ms from
 * shell_args in sandbox-coding-schema.c (the call is then refused as an
 * unknown argument), or ignore it in sandbox_coding_tools_snapshot() (the
 * 2 s command then meets the 1 s default deadline). */
static void
test_shell_timeout (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  const char *bad[] = {
    "{\"command\":\"true\",\"timeout_ms\":0}",
    "{\"command\":\"true\",\"timeout_ms\":-5}",
    "{\"command\":\"true\",\"timeout_ms\":1.5}",
    "{\"command\":\"true\",\"timeout_ms\":\"3000\"}",
    "{\"command\":\"true\",\"timeout_ms\":null}",
    "{\"command\":\"true\",\"timeout_ms\":true}",
  };
  guint timeout_ms = 0;
  guint max_timeout_ms = 0;
  guint64 max_command_output = 0;

  g_object_get (fixture->tools,
                "shell-timeout-ms", &timeout_ms,
                "max-shell-timeout-ms", &max_timeout_ms,
                "max-command-output-bytes", &max_command_output,
                NULL);
  g_assert_cmpuint (timeout_ms, ==, 120000);
  g_assert_cmpuint (max_timeout_ms, ==, 600000);
  g_assert_cmpuint (max_command_output, ==, 8 * 1024 * 1024);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(JsonObject) refused = invoke (fixture, "shell", bad[i]);

      g_test_message ("%s", bad[i]);
      assert_error (refused, "SANDBOX_INVALID");
    }

  /* Past the host's bound: refused before anything runs, naming the bound. */
  g_object_set (fixture->tools, "shell-timeout-ms", 1000, "max-shell-timeout-ms", 5000, NULL);
  result = invoke (fixture, "shell", "{\"command\":\"touch ran\",\"timeout_ms\":5001}");
  assert_error (result, "SANDBOX_LIMIT");
  g_assert_cmpstr (error_message (result), ==,
                   "timeout_ms of shell exceeds the host's maximum of 5000 ms");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "shell", "{\"command\":\"test -e ran\"}");
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "exit_status"), ==, 1);
  g_clear_pointer (&result, json_object_unref);

  /* A 2 s "build" under a 1 s default: killed without timeout_ms... */
  result = invoke (fixture, "shell", "{\"command\":\"sleep 2; echo built\"}");
  assert_error (result, "SANDBOX_LIMIT");
  g_assert_cmpstr (error_message (result), ==, "Sandbox command deadline exceeded");
  g_clear_pointer (&result, json_object_unref);

  /* ...finished with it... */
  result = invoke (fixture, "shell", "{\"command\":\"sleep 2; echo built\",\"timeout_ms\":5000}");
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "exit_status"), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==, "built\n");
  g_clear_pointer (&result, json_object_unref);

  /* ...and a shorter one than the default is honoured too. */
  result = invoke (fixture, "shell", "{\"command\":\"sleep 5\",\"timeout_ms\":200}");
  assert_error (result, "SANDBOX_LIMIT");
  g_assert_cmpstr (error_message (result), ==, "Sandbox command deadline exceeded");
}

static gboolean
have_program (const char *program)
{
  g_autofree char *path = g_find_program_in_path (program);

  return path != NULL;
}

/* A real make run that lasts longer than the reference's 10 s default
 * (set here as the tools' default), asked for with a per-call timeout_ms,
 * prints megabytes and fails at the end: the model gets make's own last
 * line and the compiler's error before it. Drop "timeout_ms" from the
 * call to see it killed at 10 s with "Sandbox command deadline exceeded". */
static void
test_shell_real_build (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) lines = NULL;
  const char *shown;
  guint n_lines;
  gint64 started;

  if (!have_program ("make") || !have_program ("cc"))
    {
      g_test_skip ("make or cc is not installed");
      return;
    }
  sandbox_session_write_text (fixture->session, "build/Makefile",
                              "all: objects main\n"
                              "objects:\n"
                              "\tfor i in $$(seq 1 21); do seq 4000 | sed \"s/^/CC unit$$i.o step /\"; "
                              "sleep 0.5; done\n",
                              NULL, &error);
  g_assert_no_error (error);
  sandbox_session_write_text (fixture->session, "build/main.c",
                              "int main (void) { return 0 }\n", NULL, &error);
  g_assert_no_error (error);
  g_object_set (fixture->tools, "shell-timeout-ms", 10000, NULL);

  started = g_get_monotonic_time ();
  result = invoke (fixture, "shell",
                   "{\"command\":\"make 2>&1\",\"cwd\":\"build\",\"timeout_ms\":90000}");
  assert_ok (result);
  g_assert_cmpint (g_get_monotonic_time () - started, >, 10 * G_USEC_PER_SEC);
  g_assert_cmpint (json_object_get_int_member (result, "exit_status"), ==, 2);
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  shown = json_object_get_string_member (result, "stdout");
  lines = g_strsplit (shown, "\n", -1);
  n_lines = g_strv_length (lines);
  g_assert_cmpuint (n_lines, >, 3);
  g_assert_cmpstr (lines[n_lines - 1], ==, "");
  g_assert_true (g_str_has_prefix (lines[n_lines - 2], "make: *** "));
  g_assert_true (g_str_has_suffix (lines[n_lines - 2], "Error 1"));
  g_assert_nonnull (strstr (shown, "main.c:1:"));
  g_assert_nonnull (strstr (shown, "error: expected"));
}

/* A failing build prints a lot and its error last: the model sees the
 * head, a marker and the tail with the error, the command is not killed
 * for exceeding the model's budget (seq 300000 prints about 2 MB, twice
 * the old 1 MiB command cap), and the artifact holds everything. Before
 * the fix the result showed only the first 64 KiB and `seq 300000` was
 * killed ("Sandbox output limit exceeded"). */
static void
test_shell_large_output (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(GBytes) full = NULL;
  g_autoptr(GString) expected = g_string_new (NULL);
  g_autofree char *marker = NULL;
  const char *last_line = "main.c:3:1: error: expected ';' before '}' token\n";
  const char *shown;

  for (guint i = 1; i <= 300000; i++)
    g_string_append_printf (expected, "%u\n", i);
  g_string_append (expected, last_line);

  result = invoke (fixture, "shell",
                   "{\"command\":\"seq 300000; echo \\\"main.c:3:1: error: expected ';' "
                   "before '}' token\\\"; exit 2\"}");
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "exit_status"), ==, 2);
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  shown = json_object_get_string_member (result, "stdout");
  g_assert_true (g_str_has_prefix (shown, "1\n2\n3\n"));
  g_assert_true (g_str_has_suffix (shown, last_line));
  /* Half the default budget each side (all ASCII), the rest named. */
  marker = g_strdup_printf ("\n[... %" G_GSIZE_FORMAT " bytes omitted ...]\n",
                            expected->len - SANDBOX_CODING_DEFAULT_MAX_SHELL_OUTPUT_BYTES);
  g_assert_nonnull (strstr (shown, marker));
  g_assert_cmpuint (strlen (shown), <=, SANDBOX_CODING_DEFAULT_MAX_SHELL_OUTPUT_BYTES + strlen (marker));

  full = sandbox_coding_tools_get_artifact (fixture->tools,
                                            json_object_get_string_member (result, "artifact_id"),
                                            NULL);
  g_assert_nonnull (full);
  g_assert_cmpmem (g_bytes_get_data (full, NULL), g_bytes_get_size (full),
                   expected->str, expected->len);
}

/* Shows @command's stdout (and stderr) under a max-shell-output-bytes of
 * @budget: the parsed result. */
static JsonObject *
shell_with_budget (Fixture    *fixture,
                   gsize       budget,
                   const char *command)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *arguments = NULL;
  JsonObject *result;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "command");
  json_builder_add_string_value (builder, command);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  arguments = json_to_string (root, FALSE);

  sandbox_coding_tools_set_max_shell_output_bytes (fixture->tools, budget);
  result = invoke (fixture, "shell", arguments);
  assert_ok (result);
  return result;
}

static void
assert_shown (JsonObject *result,
              const char *out,
              const char *err,
              gboolean    truncated)
{
  g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==, out);
  g_assert_cmpstr (json_object_get_string_member (result, "stderr"), ==, err);
  g_assert_cmpint (json_object_get_boolean_member (result, "truncated"), ==, truncated);
  g_assert_cmpint (json_object_has_member (result, "artifact_id"), ==, truncated);
}

/* Invalid UTF-8 in a command's output shows as U+FFFD and costs the budget
 * what it cost the command: one byte each, so nothing valid is lost and
 * nothing is marked truncated below the limit; past the limit the cut
 * never splits a character. Before the fix the budget was taken in raw
 * bytes and applied after the replacement (each invalid byte grows to
 * three): printf 'x\377y' showed "x" as truncated and 'caf\351 ok\n'
 * showed "caf\uFFFD o". */
static void
test_shell_invalid_utf8 (Fixture       *fixture,
                         gconstpointer  data)
{
  const struct
  {
    gsize budget;
    const char *command;
    const char *out;
    const char *err;
    gboolean truncated;
  } cases[] = {
    /* The two cases, under the default budget and at exactly their size. */
    { 1048576, "printf 'x\\377y'", "x\xef\xbf\xbdy", "", FALSE },
    { 3, "printf 'x\\377y'", "x\xef\xbf\xbdy", "", FALSE },
    { 1048576, "printf 'caf\\351 ok\\n'", "caf\xef\xbf\xbd ok\n", "", FALSE },
    { 8, "printf 'caf\\351 ok\\n'", "caf\xef\xbf\xbd ok\n", "", FALSE },
    /* Only binary: every byte replaced, none lost. */
    { 4, "printf '\\377\\376\\000\\200'",
      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", "", FALSE },
    /* A cut past the limit keeps the head (the larger half) and the tail,
     * at a byte that is a whole (invalid) unit... */
    { 3, "printf 'x\\377yz'", "x\xef\xbf\xbd\n[... 1 byte omitted ...]\nz", "", TRUE },
    { 2, "printf 'ab\\377z'", "a\n[... 2 bytes omitted ...]\nz", "", TRUE },
    { 2, "printf 'abc\\377'", "a\n[... 2 bytes omitted ...]\n\xef\xbf\xbd", "", TRUE },
    /* ...and never inside a valid character (the euro sign is 3 bytes),
     * at either end. */
    { 4, "printf 'ab\\342\\202\\254cd'", "ab\n[... 3 bytes omitted ...]\ncd", "", TRUE },
    { 10, "printf 'ab\\342\\202\\254cdefghij'", "ab\xe2\x82\xac\n[... 3 bytes omitted ...]\nfghij",
      "", TRUE },
    { 4, "printf 'abcd\\342\\202\\254'", "ab\n[... 5 bytes omitted ...]\n", "", TRUE },
    { 6, "printf 'abcd\\342\\202\\254'", "abc\n[... 1 byte omitted ...]\n\xe2\x82\xac", "", TRUE },
    /* A truncated sequence is two invalid units, like the whole output's... */
    { 4, "printf 'ab\\342\\202Zcde'", "ab\n[... 4 bytes omitted ...]\nde", "", TRUE },
    { 6, "printf 'ab\\342\\202Zcde'", "ab\xef\xbf\xbd\n[... 2 bytes omitted ...]\ncde", "", TRUE },
    /* ...and lone continuation bytes at the tail's start are whole units
     * too: at most three are skipped. */
    { 10, "printf '12345678\\202\\202\\202\\202\\202\\202x'", "12345\n[... 8 bytes omitted ...]\n"
      "\xef\xbf\xbdx", "", TRUE },
    /* Both streams share the budget in the command's bytes. */
    { 6, "printf 'x\\377y'; printf 'e\\377r' >&2", "x\xef\xbf\xbdy", "e\xef\xbf\xbdr", FALSE },
    { 5, "printf 'x\\377y'; printf 'e\\377r' >&2", "x\n[... 1 byte omitted ...]\ny",
      "e\xef\xbf\xbdr", TRUE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(JsonObject) result = NULL;

      g_test_message ("%s under %" G_GSIZE_FORMAT " bytes", cases[i].command, cases[i].budget);
      result = shell_with_budget (fixture, cases[i].budget, cases[i].command);
      assert_shown (result, cases[i].out, cases[i].err, cases[i].truncated);
    }
}

static void
test_read_file (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(JsonObject) setup = NULL;

  setup = invoke (fixture, "shell",
                  "{\"command\":\"printf 'a\\\\nb\\\\nc\\\\nd' > lines.txt; "
                  "printf 'x\\\\000y' > nul.bin; printf '\\\\377\\\\376' > latin.bin; "
                  "mkdir dir; mkfifo fifo\"}");
  assert_ok (setup);
  g_assert_cmpint (json_object_get_int_member (setup, "exit_status"), ==, 0);

  result = invoke (fixture, "read_file", "{\"path\":\"hello.txt\"}");
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==, "hello\n");
  g_assert_cmpstr (json_object_get_string_member (result, "path"), ==, "/workspace/hello.txt");
  g_assert_cmpint (json_object_get_int_member (result, "total_lines"), ==, 1);
  g_assert_false (json_object_get_boolean_member (result, "truncated"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "read_file", "{\"path\":\"lines.txt\",\"offset\":2,\"limit\":2}");
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==, "b\nc\n");
  g_assert_cmpint (json_object_get_int_member (result, "start_line"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (result, "lines"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (result, "total_lines"), ==, 4);
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "read_file", "{\"path\":\"lines.txt\",\"offset\":4}");
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==, "d");
  g_assert_false (json_object_get_boolean_member (result, "truncated"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "read_file", "{\"path\":\"lines.txt\",\"offset\":9}");
  assert_error (result, "SANDBOX_INVALID");
  g_clear_pointer (&result, json_object_unref);

  /* Binary files are refused clearly, whatever makes them binary. */
  result = invoke (fixture, "read_file", "{\"path\":\"nul.bin\"}");
  assert_error (result, "SANDBOX_NOT_TEXT");
  g_assert_nonnull (strstr (error_message (result), "not UTF-8 text"));
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "read_file", "{\"path\":\"latin.bin\"}");
  assert_error (result, "SANDBOX_NOT_TEXT");
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "read_file", "{\"path\":\"missing.txt\"}");
  assert_error (result, "SANDBOX_NOT_FOUND");
  g_assert_nonnull (strstr (error_message (result), "/workspace/missing.txt"));
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "read_file", "{\"path\":\"dir\"}");
  assert_error (result, "SANDBOX_IS_DIRECTORY");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "read_file", "{\"path\":\"fifo\"}");
  assert_error (result, "SANDBOX_NOT_REGULAR_FILE");
}

static void
test_write_file (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *text = NULL;

  result = invoke (fixture, "write_file", "{\"path\":\"src/deep/main.c\",\"content\":\"int x; // é\\n\"}");
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "bytes_written"), ==, 13);
  text = host_read (fixture, "src/deep/main.c");
  g_assert_cmpstr (text, ==, "int x; // é\n");
  g_clear_pointer (&result, json_object_unref);

  /* The guest sees it. */
  result = invoke (fixture, "shell", "{\"command\":\"cat src/deep/main.c\"}");
  g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==, "int x; // é\n");
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "write_file", "{\"path\":\".\",\"content\":\"x\"}");
  assert_error (result, "SANDBOX_IS_DIRECTORY");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "write_file", "{\"path\":\"src\",\"content\":\"x\"}");
  assert_error (result, "SANDBOX_IS_DIRECTORY");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "write_file", "{\"path\":\"hello.txt/child\",\"content\":\"x\"}");
  assert_error (result, "SANDBOX_NOT_DIRECTORY");
}

static void
test_edit_file (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *text = NULL;

  result = invoke (fixture, "write_file",
                   "{\"path\":\"code.py\",\"content\":\"a = 1\\nb = 1\\nprint(a)\\n\"}");
  assert_ok (result);
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "edit_file",
                   "{\"path\":\"code.py\",\"old_string\":\"a = 1\",\"new_string\":\"a = 2\"}");
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "replacements"), ==, 1);
  text = host_read (fixture, "code.py");
  g_assert_cmpstr (text, ==, "a = 2\nb = 1\nprint(a)\n");
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "edit_file",
                   "{\"path\":\"code.py\",\"old_string\":\"= \",\"new_string\":\"=\"}");
  assert_error (result, "SANDBOX_AMBIGUOUS");
  g_assert_nonnull (strstr (error_message (result), "2 times"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "edit_file",
                   "{\"path\":\"code.py\",\"old_string\":\"c = 3\",\"new_string\":\"x\"}");
  assert_error (result, "SANDBOX_NO_MATCH");
  g_assert_nonnull (strstr (error_message (result), "0 matches"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "edit_file",
                   "{\"path\":\"nothing.py\",\"old_string\":\"a\",\"new_string\":\"b\"}");
  assert_error (result, "SANDBOX_NOT_FOUND");
  g_clear_pointer (&result, json_object_unref);

  /* Unchanged after the failures. */
  g_free (text);
  text = host_read (fixture, "code.py");
  g_assert_cmpstr (text, ==, "a = 2\nb = 1\nprint(a)\n");
}

static void
test_list_files (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  JsonArray *entries;
  JsonObject *entry;

  result = invoke (fixture, "shell",
                   "{\"command\":\"mkdir -p d/e && printf 1234 > d/f && ln -s f d/link\"}");
  assert_ok (result);
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "list_files", "{\"path\":\"d\"}");
  assert_ok (result);
  g_assert_false (json_object_get_boolean_member (result, "truncated"));
  entries = json_object_get_array_member (result, "entries");
  g_assert_cmpuint (json_array_get_length (entries), ==, 3);
  entry = json_array_get_object_element (entries, 0);
  g_assert_cmpstr (json_object_get_string_member (entry, "name"), ==, "e");
  g_assert_cmpstr (json_object_get_string_member (entry, "type"), ==, "directory");
  entry = json_array_get_object_element (entries, 1);
  g_assert_cmpstr (json_object_get_string_member (entry, "name"), ==, "f");
  g_assert_cmpstr (json_object_get_string_member (entry, "type"), ==, "file");
  g_assert_cmpint (json_object_get_int_member (entry, "size"), ==, 4);
  entry = json_array_get_object_element (entries, 2);
  g_assert_cmpstr (json_object_get_string_member (entry, "name"), ==, "link");
  g_assert_cmpstr (json_object_get_string_member (entry, "type"), ==, "symlink");
  g_clear_pointer (&result, json_object_unref);

  /* The root by default. */
  result = invoke (fixture, "list_files", NULL);
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "path"), ==, "/workspace");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (result, "entries")), ==, 2);
  g_clear_pointer (&result, json_object_unref);

  /* Bounded. */
  result = invoke (fixture, "shell", "{\"command\":\"mkdir many && cd many && touch $(seq 1 50)\"}");
  g_clear_pointer (&result, json_object_unref);
  g_object_set (fixture->tools, "max-list-entries", 10, NULL);
  result = invoke (fixture, "list_files", "{\"path\":\"many\"}");
  assert_ok (result);
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (result, "entries")), ==, 10);
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "list_files", "{\"path\":\"d/f\"}");
  assert_error (result, "SANDBOX_NOT_DIRECTORY");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "list_files", "{\"path\":\"nowhere\"}");
  assert_error (result, "SANDBOX_NOT_FOUND");
}

/* Host files the escape attempts aim at: none may be read or changed. */
static char *
sha256_of_file (const char *path)
{
  g_autofree char *contents = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guint8 *) contents, length);
}

static void
test_containment (Fixture       *fixture,
                  gconstpointer  data)
{
  const char *outside_paths[] = {
    "/etc/passwd", "../hello.txt", "/workspace/../etc/passwd", "a/../../etc", "./hello.txt",
    "a//b", "/", "/tmp", "", "\\\\etc",
  };
  g_autofree char *host_dir = g_build_filename (fixture->state_directory, "outside", NULL);
  g_autofree char *host_file = g_build_filename (host_dir, "target.txt", NULL);
  g_autofree char *before = NULL;
  g_autofree char *script = NULL;
  g_autofree char *after = NULL;
  g_autoptr(JsonObject) result = NULL;
  JsonArray *entries;

  /* A host directory next to the sessions, with a file the links target. */
  g_assert_cmpint (g_mkdir_with_parents (host_dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (host_file, "host secret\n", -1, NULL));
  before = sha256_of_file (host_file);

  for (guint i = 0; i < G_N_ELEMENTS (outside_paths); i++)
    {
      g_autofree char *read_args = g_strdup_printf ("{\"path\":\"%s\"}", outside_paths[i]);
      g_autofree char *write_args = g_strdup_printf ("{\"path\":\"%s\",\"content\":\"x\"}",
                                                     outside_paths[i]);
      g_autofree char *edit_args =
        g_strdup_printf ("{\"path\":\"%s\",\"old_string\":\"r\",\"new_string\":\"x\"}",
                         outside_paths[i]);
      g_autoptr(JsonObject) r1 = invoke (fixture, "read_file", read_args);
      g_autoptr(JsonObject) r2 = invoke (fixture, "write_file", write_args);
      g_autoptr(JsonObject) r3 = invoke (fixture, "edit_file", edit_args);

      assert_error (r1, "SANDBOX_PATH");
      assert_error (r2, "SANDBOX_PATH");
      assert_error (r3, "SANDBOX_PATH");
      /* The rejected path is not echoed back. */
      if (strlen (outside_paths[i]) > 1)
        g_assert_null (strstr (error_message (r1), outside_paths[i]));
      if (strcmp (outside_paths[i], "/") != 0 && outside_paths[i][0] != '\0')
        {
          g_autoptr(JsonObject) r4 = invoke (fixture, "list_files", read_args);

          assert_error (r4, "SANDBOX_PATH");
        }
    }

  /* Symbolic links planted by the shell tool, pointing out of the
   * workspace: absolute, relative through .., and a directory link. */
  script = g_strdup_printf ("{\"command\":\"ln -s %s abs-file && ln -s %s abs-dir && "
                            "ln -s ../../../../../../../../../../../%s rel-file && "
                            "ln -s /etc etc && ln -s / root\"}",
                            host_file, host_dir, host_file);
  result = invoke (fixture, "shell", script);
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "exit_status"), ==, 0);
  g_clear_pointer (&result, json_object_unref);

  {
    const char *reads[] = { "abs-file", "rel-file", "abs-dir/target.txt", "etc/passwd",
                            "root/etc/passwd" };

    for (guint i = 0; i < G_N_ELEMENTS (reads); i++)
      {
        g_autofree char *args = g_strdup_printf ("{\"path\":\"%s\"}", reads[i]);
        g_autofree char *edit = g_strdup_printf ("{\"path\":\"%s\",\"old_string\":\"host\","
                                                 "\"new_string\":\"owned\"}", reads[i]);
        g_autoptr(JsonObject) r = invoke (fixture, "read_file", args);
        g_autoptr(JsonObject) e = invoke (fixture, "edit_file", edit);

        assert_error (r, "SANDBOX_PATH");
        assert_error (e, "SANDBOX_PATH");
      }
  }
  {
    /* Writing through a directory link is refused; writing over a file
     * link replaces the link inside the workspace, never the target. */
    const char *writes[] = { "abs-dir/target.txt", "abs-dir/new.txt", "etc/evil", "root/tmp/evil" };

    for (guint i = 0; i < G_N_ELEMENTS (writes); i++)
      {
        g_autofree char *args = g_strdup_printf ("{\"path\":\"%s\",\"content\":\"owned\"}",
                                                 writes[i]);
        g_autoptr(JsonObject) w = invoke (fixture, "write_file", args);

        assert_error (w, "SANDBOX_PATH");
      }
    result = invoke (fixture, "write_file", "{\"path\":\"abs-file\",\"content\":\"owned\"}");
    if (json_object_get_boolean_member (result, "ok"))
      {
        g_autofree char *text = host_read (fixture, "abs-file");

        g_assert_cmpstr (text, ==, "owned");
      }
    else
      assert_error (result, "SANDBOX_PATH");
    g_clear_pointer (&result, json_object_unref);
  }
  {
    const char *lists[] = { "abs-dir", "etc", "root" };

    for (guint i = 0; i < G_N_ELEMENTS (lists); i++)
      {
        g_autofree char *args = g_strdup_printf ("{\"path\":\"%s\"}", lists[i]);
        g_autoptr(JsonObject) l = invoke (fixture, "list_files", args);

        assert_error (l, "SANDBOX_PATH");
      }
  }

  /* The links themselves are listed, not followed. */
  result = invoke (fixture, "list_files", "{}");
  assert_ok (result);
  entries = json_object_get_array_member (result, "entries");
  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      JsonObject *entry = json_array_get_object_element (entries, i);
      const char *name = json_object_get_string_member (entry, "name");

      if (strcmp (name, "hello.txt") != 0 && strcmp (name, "abs-file") != 0)
        g_assert_cmpstr (json_object_get_string_member (entry, "type"), ==, "symlink");
    }
  g_clear_pointer (&result, json_object_unref);

  after = sha256_of_file (host_file);
  g_assert_cmpstr (before, ==, after);
  g_assert_false (g_file_test ("/etc/evil", G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test ("/tmp/evil", G_FILE_TEST_EXISTS));
  {
    g_autofree char *new_file = g_build_filename (host_dir, "new.txt", NULL);

    g_assert_false (g_file_test (new_file, G_FILE_TEST_EXISTS));
  }
}

/* host-ipc-isolated holds under every policy, but allow-all on a backend
 * whose host-loopback opens the host's loopback to it (the fixture's
 * data). */
static void
test_host_ipc_isolated (Fixture       *fixture,
                        gconstpointer  data)
{
  static const char * const policies[] = { "\"deny-all\"",
                                           "{\"allow\":[{\"origin\":\"http://127.0.0.1:9/\"}]}",
                                           "\"allow-all\"" };

  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_auto(GStrv) restrictions = NULL;
      g_autofree char *grade = NULL;
      g_autoptr(GError) error = NULL;
      gboolean open_loopback = i == 2;

      set_policy (fixture, policies[i]);
      grade = sandbox_coding_tools_probe (fixture->tools, &restrictions, &error);
      g_assert_no_error (error);
      g_assert_cmpint (g_strv_contains ((const char * const *) restrictions, "host-ipc-isolated"),
                       ==, !open_loopback);
    }
}

static void
test_required_network_denied (Fixture       *fixture,
                              gconstpointer  data)
{
  const char *required[] = { "network-denied", "write-contained", "process-contained",
                             "secrets-hidden", NULL };
  g_autoptr(JsonObject) result = NULL;
  g_auto(GStrv) restrictions = NULL;
  g_autofree char *grade = NULL;
  g_autoptr(GError) error = NULL;
  GError *cause;

  sandbox_coding_tools_set_required_restrictions (fixture->tools, required);

  /* Deny-all: network-denied holds. */
  grade = sandbox_coding_tools_probe (fixture->tools, &restrictions, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (grade, ==, "full");
  for (guint i = 0; required[i] != NULL; i++)
    g_assert_true (g_strv_contains ((const char * const *) restrictions, required[i]));
  g_clear_pointer (&restrictions, g_strfreev);
  g_clear_pointer (&grade, g_free);
  result = invoke (fixture, "shell", "{\"command\":\"echo ok\"}");
  assert_ok (result);
  g_clear_pointer (&result, json_object_unref);

  /* Allow-all: refused, with the cause on ::tool-error. */
  set_policy (fixture, "\"allow-all\"");
  grade = sandbox_coding_tools_probe (fixture->tools, &restrictions, &error);
  g_assert_no_error (error);
  g_assert_false (g_strv_contains ((const char * const *) restrictions, "network-denied"));
  g_assert_true (g_strv_contains ((const char * const *) restrictions, "write-contained"));
  g_assert_true (g_strv_contains ((const char * const *) restrictions, "host-ipc-isolated"));
  g_clear_pointer (&restrictions, g_strfreev);
  g_assert_cmpuint (fixture->tool_errors->len, ==, 0);
  result = invoke (fixture, "shell", "{\"command\":\"touch ran\"}");
  assert_refusal (result, "SANDBOX_NETWORK_DENIED");
  g_assert_cmpuint (fixture->tool_errors->len, ==, 1);
  cause = g_ptr_array_index (fixture->tool_errors, 0);
  g_assert_error (cause, SANDBOX_ERROR, SANDBOX_ERROR_NETWORK_DENIED);
  g_assert_cmpstr (cause->message, ==, "Sandbox policy no longer satisfies required restrictions");
  g_clear_pointer (&result, json_object_unref);
  {
    g_autoptr(GBytes) bytes = sandbox_session_read_bytes (fixture->session, "ran", NULL, &error);

    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
    g_clear_error (&error);
  }

  /* Re-checked after each policy change. */
  set_policy (fixture, "\"deny-all\"");
  result = invoke (fixture, "shell", "{\"command\":\"echo ok\"}");
  assert_ok (result);
  g_clear_pointer (&result, json_object_unref);
  set_policy (fixture, "{\"allow\":[{\"origin\":\"https://api.example.com\",\"headers\":{}}]}");
  result = invoke (fixture, "shell", "{\"command\":\"echo ok\"}");
  assert_refusal (result, "SANDBOX_NETWORK_DENIED");
  g_clear_pointer (&result, json_object_unref);

  /* The default requirements do not include network-denied. */
  sandbox_coding_tools_set_required_restrictions (fixture->tools, NULL);
  result = invoke (fixture, "shell", "{\"command\":\"echo ok\"}");
  assert_ok (result);
  g_clear_pointer (&result, json_object_unref);

  /* The public adapter: prepare refuses with the fixed reason. */
  {
    g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/true");
    g_autoptr(SandboxCodingLaunch) launch =
      sandbox_coding_tools_prepare (fixture->tools, command, required, &error);

    g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
    g_assert_cmpstr (error->message, ==, "Sandbox session cannot execute this operation");
    g_assert_null (launch);
    cause = g_ptr_array_index (fixture->tool_errors, fixture->tool_errors->len - 1);
    g_assert_error (cause, SANDBOX_ERROR, SANDBOX_ERROR_NETWORK_DENIED);
  }
}

static void
test_stale_launch (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/true");
  g_autoptr(SandboxCodingLaunch) launch = NULL;
  g_autoptr(SandboxCodingLaunch) fresh = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  guint64 revision;

  launch = sandbox_coding_tools_prepare (fixture->tools, command, NULL, &error);
  g_assert_no_error (error);
  revision = sandbox_coding_launch_get_revision (launch);

  /* A policy change between prepare and spawn invalidates the launch. */
  set_policy (fixture, "\"allow-all\"");
  process = sandbox_coding_launch_spawn (launch, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Sandbox policy changed after command preparation");
  g_assert_null (process);
  g_clear_error (&error);

  /* Even one back to the same kind. */
  fresh = sandbox_coding_tools_prepare (fixture->tools, command, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sandbox_coding_launch_get_revision (fresh), >, revision);
  set_policy (fixture, "\"allow-all\"");
  process = sandbox_coding_launch_spawn (fresh, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);
  g_clear_object (&fresh);

  /* A launch prepared now runs, once. */
  fresh = sandbox_coding_tools_prepare (fixture->tools, command, NULL, &error);
  g_assert_no_error (error);
  process = sandbox_coding_launch_spawn (fresh, NULL, &error);
  g_assert_no_error (error);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  g_clear_object (&process);
  process = sandbox_coding_launch_spawn (fresh, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_null (process);
}

typedef struct
{
  Fixture *fixture;
  guint pending;
  GPtrArray *results;
} AsyncCalls;

static void
invoked_cb (GObject      *source,
            GAsyncResult *res,
            gpointer      data)
{
  AsyncCalls *calls = data;
  g_autoptr(GError) error = NULL;
  char *result = sandbox_coding_tools_invoke_finish (SANDBOX_CODING_TOOLS (source), res, &error);

  g_assert_no_error (error);
  g_ptr_array_add (calls->results, g_strdup (result));
  g_ptr_array_add (calls->fixture->results, result);
  calls->pending--;
}

static gboolean
all_started (Fixture *fixture)
{
  for (guint i = 0; i < 8; i++)
    {
      g_autofree char *path = g_strdup_printf ("started-%u", i);
      g_autoptr(GBytes) bytes = sandbox_session_read_bytes (fixture->session, path, NULL, NULL);

      if (bytes == NULL)
        return FALSE;
    }
  return TRUE;
}

static void
test_admission_shared (Fixture       *fixture,
                       gconstpointer  data)
{
  AsyncCalls calls = { fixture, 0, g_ptr_array_new_with_free_func (g_free) };
  g_autoptr(SandboxCommand) direct = sandbox_command_new ("/usr/bin/true");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(JsonObject) ninth = NULL;
  g_autoptr(GError) error = NULL;
  gint64 deadline;

  sandbox_coding_tools_set_shell_timeout_ms (fixture->tools, 60000);
  for (guint i = 0; i < 8; i++)
    {
      g_autofree char *args = g_strdup_printf ("{\"command\":\"touch started-%u; exec sleep 60\"}", i);

      calls.pending++;
      sandbox_coding_tools_invoke_async (fixture->tools, "shell", args, NULL, invoked_cb, &calls);
    }

  deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  while (!all_started (fixture))
    {
      g_assert_cmpint (g_get_monotonic_time (), <, deadline);
      g_main_context_iteration (NULL, FALSE);
      g_usleep (20000);
    }
  g_assert_cmpuint (calls.pending, ==, 8);

  /* 8 live shell calls fill the default limit: a direct command is refused. */
  process = sandbox_session_spawn (fixture->session, direct, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Sandbox command concurrency limit reached");
  g_assert_null (process);
  g_clear_error (&error);

  /* And so is a ninth shell call, as a result the model can read. */
  ninth = invoke (fixture, "shell", "{\"command\":\"touch ninth\"}");
  assert_error (ninth, "SANDBOX_BUSY");

  /* A policy change is refused while they run. */
  {
    g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_allow_all ();

    g_assert_false (sandbox_session_set_network_policy (fixture->session, policy, NULL, &error));
    g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
    g_clear_error (&error);
  }

  /* Stop kills the coding commands too. */
  sandbox_handle_stop (fixture->handle, NULL, &error);
  g_assert_no_error (error);
  while (calls.pending > 0)
    g_main_context_iteration (NULL, TRUE);
  for (guint i = 0; i < calls.results->len; i++)
    {
      g_autoptr(JsonObject) result = parse_object (g_ptr_array_index (calls.results, i));

      g_assert_true (json_object_get_boolean_member (result, "ok"));
      g_assert_cmpint (json_object_get_int_member (result, "exit_status"), ==, 137);
    }
  g_ptr_array_unref (calls.results);
}

static void
test_refusal_after_stop (Fixture       *fixture,
                         gconstpointer  data)
{
  const char *calls[][2] = {
    { "shell", "{\"command\":\"echo hi\"}" },
    { "read_file", "{\"path\":\"hello.txt\"}" },
    { "write_file", "{\"path\":\"new.txt\",\"content\":\"x\"}" },
    { "edit_file", "{\"path\":\"hello.txt\",\"old_string\":\"hello\",\"new_string\":\"bye\"}" },
    { "list_files", "{}" },
    { "nope", "{}" },
  };
  g_autoptr(SandboxCodingTools) fresh = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *grade = NULL;
  GError *cause;

  state = sandbox_handle_capture_state (fixture->handle, &error);
  g_assert_no_error (error);
  sandbox_handle_stop (fixture->handle, NULL, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    {
      g_autoptr(JsonObject) refused = invoke (fixture, calls[i][0], calls[i][1]);

      assert_refusal (refused, "SANDBOX_STOPPED");
      cause = g_ptr_array_index (fixture->tool_errors, fixture->tool_errors->len - 1);
      g_assert_error (cause, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
    }
  g_assert_cmpuint (fixture->tool_errors->len, ==, G_N_ELEMENTS (calls));

  grade = sandbox_coding_tools_probe (fixture->tools, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_cmpstr (error->message, ==, "Sandbox session cannot execute this operation");
  g_assert_null (grade);
  g_clear_error (&error);
  {
    g_auto(GStrv) restrictions = NULL;
    const char *layering = "unset";

    grade = sandbox_coding_tools_probe_full (fixture->tools, &restrictions, &layering, &error);
    g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
    g_assert_null (grade);
    g_assert_null (restrictions);
    g_assert_null (layering);
    g_clear_error (&error);
  }

  /* New tools from a stopped handle are refused outright. */
  fresh = sandbox_coding_tools_new (fixture->handle, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_null (fresh);
  g_clear_error (&error);

  /* After a reconnect, tools come from the new handle; the old stay dead. */
  resumed = sandbox_backend_create (fixture->backend, fixture->template_key, state, policy,
                                    NULL, &error);
  g_assert_no_error (error);
  fresh = sandbox_coding_tools_new (resumed, &error);
  g_assert_no_error (error);
  g_signal_connect (fresh, "authorize", G_CALLBACK (allow_all_cb), fixture);
  result = invoke_with (fixture, fresh, "read_file", "{\"path\":\"hello.txt\"}");
  assert_ok (result);
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "read_file", "{\"path\":\"hello.txt\"}");
  assert_refusal (result, "SANDBOX_STOPPED");

  g_clear_object (&fresh);
  sandbox_handle_delete (resumed, NULL, &error);
  g_assert_no_error (error);
  g_clear_object (&fixture->handle);   /* already stopped; the resumed one deleted it */
}

static void
test_no_credentials (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *secret = g_strdup_printf ("Bearer sk-%s", uuid);
  g_autofree char *policy = g_strdup_printf ("{\"allow\":[{\"origin\":\"http://api.example.com\","
                                             "\"headers\":{\"authorization\":\"%s\"}}]}", secret);
  const char *required[] = { "network-denied", NULL };
  const char *calls[][2] = {
    { "shell", "{\"command\":\"env; cat /proc/self/cmdline; ls -la /run; cat /run/* 2>&1; "
               "grep -r sk- /run /tmp /etc /workspace 2>/dev/null | head\"}" },
    { "shell", "{\"command\":\"exit 1\",\"cwd\":\"nowhere\"}" },
    { "read_file", "{\"path\":\"hello.txt\"}" },
    { "read_file", "{\"path\":\"missing\"}" },
    { "read_file", "{\"path\":\"/etc/passwd\"}" },
    { "write_file", "{\"path\":\"w.txt\",\"content\":\"x\"}" },
    { "edit_file", "{\"path\":\"w.txt\",\"old_string\":\"y\",\"new_string\":\"z\"}" },
    { "list_files", "{}" },
    { "list_files", "{\"path\":\"missing\"}" },
    { "nope", "{\"x\":1}" },
  };

  set_policy (fixture, policy);
  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    {
      g_autoptr(JsonObject) result = invoke (fixture, calls[i][0], calls[i][1]);
    }
  /* Refusals too: the restriction refusal and the stopped refusal. */
  sandbox_coding_tools_set_required_restrictions (fixture->tools, required);
  {
    g_autoptr(JsonObject) result = invoke (fixture, "shell", "{\"command\":\"env\"}");

    assert_refusal (result, "SANDBOX_NETWORK_DENIED");
  }
  {
    g_autoptr(GError) error = NULL;

    sandbox_handle_stop (fixture->handle, NULL, &error);
    g_assert_no_error (error);
  }
  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    {
      g_autoptr(JsonObject) result = invoke (fixture, calls[i][0], calls[i][1]);

      assert_refusal (result, "SANDBOX_STOPPED");
    }

  g_assert_cmpuint (fixture->results->len, ==, 2 * G_N_ELEMENTS (calls) + 1);
  for (guint i = 0; i < fixture->results->len; i++)
    {
      const char *result = g_ptr_array_index (fixture->results, i);

      g_assert_null (strstr (result, uuid));
      g_assert_null (strstr (result, fixture->state_directory));
    }
  for (guint i = 0; i < fixture->tool_errors->len; i++)
    {
      GError *cause = g_ptr_array_index (fixture->tool_errors, i);

      g_assert_null (strstr (cause->message, uuid));
    }
}

/* Cancellation ------------------------------------------------------------- */

/* One tool call in flight: started by invoke_in_thread() (the blocking
 * form, in a thread of its own) or invoke_async_call(), finished by
 * call_finish_wait(). */
typedef struct
{
  SandboxCodingTools *tools;
  const char *tool;
  const char *arguments;
  GCancellable *cancellable;
  GThread *thread;
  gboolean done;
  char *result;
  GError *error;
} PendingCall;

static gpointer
invoke_thread_func (gpointer data)
{
  PendingCall *call = data;

  call->result = sandbox_coding_tools_invoke (call->tools, call->tool, call->arguments,
                                              call->cancellable, &call->error);
  return NULL;
}

static void
invoke_in_thread (PendingCall *call)
{
  call->thread = g_thread_new ("invoke", invoke_thread_func, call);
}

static void
pending_call_done_cb (GObject      *source,
                      GAsyncResult *res,
                      gpointer      data)
{
  PendingCall *call = data;

  call->result = sandbox_coding_tools_invoke_finish (SANDBOX_CODING_TOOLS (source), res,
                                                     &call->error);
  call->done = TRUE;
}

static void
invoke_async_call (PendingCall *call)
{
  sandbox_coding_tools_invoke_async (call->tools, call->tool, call->arguments, call->cancellable,
                                     pending_call_done_cb, call);
}

static void
call_finish_wait (PendingCall *call)
{
  if (call->thread != NULL)
    g_thread_join (g_steal_pointer (&call->thread));
  else
    while (!call->done)
      g_main_context_iteration (NULL, TRUE);
}

/* A cancelled call has one outcome: no result, and G_IO_ERROR_CANCELLED. */
static void
assert_cancelled (PendingCall *call)
{
  g_assert_error (call->error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (call->result);
  g_clear_error (&call->error);
}

static void
count_tool_error_cb (SandboxCodingTools *tools,
                     const char         *tool,
                     GError             *cause,
                     guint              *count)
{
  (*count)++;
}

typedef struct
{
  const char *tool;
  const char *arguments;
  GateOps blocking;
} GatedCase;

/* Every file tool, cancelled while its I/O is in progress (the gated
 * session's read, write or listing waits for the cancellation), reports
 * the cancellation and nothing else — in both forms. Before the fix the
 * four "return local_error == NULL" sites of the file tools (now
 * sandbox-coding-file-tools.c) reported success with the error set, and
 * the result was built from no JSON (a json_to_string CRITICAL): make
 * take_file_error() return TRUE for a cancellation and the cases abort
 * here. */
static void
test_cancel_file_tools (void)
{
  const GatedCase cases[] = {
    { "read_file", "{\"path\":\"file.txt\"}", GATE_READ },
    { "write_file", "{\"path\":\"file.txt\",\"content\":\"new\"}", GATE_WRITE },
    { "edit_file", "{\"path\":\"file.txt\",\"old_string\":\"hello\",\"new_string\":\"bye\"}",
      GATE_READ },
    { "edit_file", "{\"path\":\"file.txt\",\"old_string\":\"hello\",\"new_string\":\"bye\"}",
      GATE_WRITE },
    { "list_files", "{}", GATE_LIST },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    for (guint async = 0; async <= 1; async++)
      {
        g_autoptr(GCancellable) cancellable = g_cancellable_new ();
        g_autoptr(SandboxHandle) handle = NULL;
        g_autoptr(SandboxCodingTools) tools = NULL;
        g_autoptr(GError) error = NULL;
        PendingCall call = { 0 };
        guint tool_errors = 0;
        Gate *gate;

        g_test_message ("%s through the %s gate, %s", cases[i].tool,
                        cases[i].blocking == GATE_READ ? "read"
                        : cases[i].blocking == GATE_WRITE ? "write" : "list",
                        async ? "async" : "sync");
        handle = gated_handle_new ("hello world\n", cases[i].blocking, &gate);
        tools = sandbox_coding_tools_new (handle, &error);
        g_assert_no_error (error);
        g_signal_connect (tools, "authorize", G_CALLBACK (allow_cb), NULL);
        g_signal_connect (tools, "tool-error", G_CALLBACK (count_tool_error_cb), &tool_errors);

        call.tools = tools;
        call.tool = cases[i].tool;
        call.arguments = cases[i].arguments;
        call.cancellable = cancellable;
        if (async)
          invoke_async_call (&call);
        else
          invoke_in_thread (&call);

        gate_wait_entered (gate);
        g_cancellable_cancel (cancellable);
        call_finish_wait (&call);

        assert_cancelled (&call);
        g_assert_cmpuint (gate_get_entered (gate), ==, 1);
        g_assert_cmpuint (tool_errors, ==, 0);
        /* An edit cancelled while reading never writes. */
        if (g_str_equal (cases[i].tool, "edit_file") && cases[i].blocking == GATE_READ)
          g_assert_cmpuint (gate_get_writes (gate), ==, 0);
      }
}

/* Cancelled before it starts: the same outcome, and no I/O at all. */
static void
test_cancel_before_start (void)
{
  const char *calls[][2] = {
    { "read_file", "{\"path\":\"file.txt\"}" },
    { "write_file", "{\"path\":\"file.txt\",\"content\":\"new\"}" },
    { "edit_file", "{\"path\":\"file.txt\",\"old_string\":\"hello\",\"new_string\":\"bye\"}" },
    { "list_files", "{}" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    for (guint async = 0; async <= 1; async++)
      {
        g_autoptr(GCancellable) cancellable = g_cancellable_new ();
        g_autoptr(SandboxHandle) handle = NULL;
        g_autoptr(SandboxCodingTools) tools = NULL;
        g_autoptr(GError) error = NULL;
        PendingCall call = { 0 };
        Gate *gate;

        handle = gated_handle_new ("hello world\n", GATE_READ | GATE_WRITE | GATE_LIST, &gate);
        tools = sandbox_coding_tools_new (handle, &error);
        g_assert_no_error (error);
        g_signal_connect (tools, "authorize", G_CALLBACK (allow_cb), NULL);

        call.tools = tools;
        call.tool = calls[i][0];
        call.arguments = calls[i][1];
        call.cancellable = cancellable;
        g_cancellable_cancel (cancellable);
        if (async)
          invoke_async_call (&call);
        else
          invoke_in_thread (&call);
        call_finish_wait (&call);

        assert_cancelled (&call);
        g_assert_cmpuint (gate_get_entered (gate), ==, 0);
        g_assert_cmpuint (gate_get_writes (gate), ==, 0);
      }
}

/* A binding that does not say how its workspace is made is reported as a
 * copy: the conservative answer for an operator sizing creates. */
static void
test_probe_layering_default (void)
{
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxCodingTools) tools = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *grade = NULL;
  const char *layering = NULL;
  Gate *gate;

  handle = gated_handle_new ("hello world\n", 0, &gate);
  tools = sandbox_coding_tools_new (handle, &error);
  g_assert_no_error (error);
  grade = sandbox_coding_tools_probe_full (tools, NULL, &layering, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (grade, ==, "full");
  g_assert_cmpstr (layering, ==, SANDBOX_WORKSPACE_LAYERING_COPY);
}

/* A shell call cancelled while its command runs: the command is killed (a
 * policy change, refused while commands are live, goes through at once)
 * and the call reports the cancellation, in both forms. */
static void
test_cancel_shell (Fixture       *fixture,
                   gconstpointer  data)
{
  sandbox_coding_tools_set_shell_timeout_ms (fixture->tools, 60000);
  for (guint async = 0; async <= 1; async++)
    {
      g_autoptr(GCancellable) cancellable = g_cancellable_new ();
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) started = NULL;
      g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
      g_autofree char *arguments = g_strdup_printf ("{\"command\":\"touch started-%u; exec sleep 60\"}",
                                                    async);
      g_autofree char *marker = g_strdup_printf ("started-%u", async);
      PendingCall call = { fixture->tools, "shell", arguments, cancellable };
      gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;

      if (async)
        invoke_async_call (&call);
      else
        invoke_in_thread (&call);

      /* The command's own sign of life: nothing else says it runs. */
      while ((started = sandbox_session_read_bytes (fixture->session, marker, NULL, NULL)) == NULL)
        {
          g_assert_cmpint (g_get_monotonic_time (), <, deadline);
          g_main_context_iteration (NULL, FALSE);
          g_usleep (20000);
        }

      g_cancellable_cancel (cancellable);
      call_finish_wait (&call);
      assert_cancelled (&call);

      g_assert_true (sandbox_session_set_network_policy (fixture->session, policy, NULL, &error));
      g_assert_no_error (error);
    }
  g_assert_cmpuint (fixture->tool_errors->len, ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  /* For /coding/shell-ready-sandbox (a writer can only be set once). */
  ready_commands = g_ptr_array_new_with_free_func (g_free);
  g_log_set_writer_func (capture_ready_commands, NULL, NULL);

  if (!g_file_test ("/usr/bin/bwrap", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("bubblewrap is not installed");
      return 77;
    }

#define ADD(name, func) \
  g_test_add ("/coding/" name, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  g_test_add_func ("/coding/no-binding", test_no_binding);
  ADD ("definitions", test_definitions);
  ADD ("definitions-golden", test_definitions_golden);
  ADD ("argument-messages", test_argument_messages);
  ADD ("authorization", test_authorization);
  ADD ("bad-arguments", test_bad_arguments);
  ADD ("shell", test_shell);
  ADD ("shell-ready-sandbox", test_shell_ready_sandbox);
  ADD ("shell-truncation", test_shell_truncation);
  ADD ("shell-invalid-utf8", test_shell_invalid_utf8);
  ADD ("shell-timeout", test_shell_timeout);
  ADD ("shell-large-output", test_shell_large_output);
  ADD ("shell-real-build", test_shell_real_build);
  ADD ("read-file", test_read_file);
  ADD ("write-file", test_write_file);
  ADD ("edit-file", test_edit_file);
  ADD ("list-files", test_list_files);
  ADD ("containment", test_containment);
  ADD ("required-network-denied", test_required_network_denied);
  g_test_add ("/coding/host-ipc-isolated-but-host-loopback", Fixture, "host-loopback",
              fixture_set_up, test_host_ipc_isolated, fixture_tear_down);
  ADD ("stale-launch", test_stale_launch);
  ADD ("admission-shared", test_admission_shared);
  ADD ("refusal-after-stop", test_refusal_after_stop);
  ADD ("no-credentials", test_no_credentials);
  g_test_add_func ("/coding/cancel/file-tools", test_cancel_file_tools);
  g_test_add_func ("/coding/cancel/before-start", test_cancel_before_start);
  g_test_add_func ("/coding/probe-layering-default", test_probe_layering_default);
  ADD ("cancel/shell", test_cancel_shell);

  return g_test_run ();
}
