/* test-coding-exec.c — the interactive shell tools against real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A Python REPL fed across three calls, each call showing only what is
 * new; a command that ends within its yield; listing; killing; input to a
 * command that is over or unknown; a flood shown bounded (head and tail)
 * and never ending the command; a command that does not read refusing
 * input past its buffer instead of blocking the call; every call
 * authorized as an execution. And the one-shot shell's output streamed to
 * the host by ::shell-output as it comes, in the invoking thread.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <sandbox.h>

#include "coding-fixture.h"

static const char *
output_of (JsonObject *result)
{
  assert_ok (result);
  return json_object_get_string_member (result, "output");
}

static void
test_repl_across_calls (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(JsonObject) started = invoke (fixture, "exec_command",
                                          "{\"command\":\"python3 -i -q\",\"yield_time_ms\":3000}");
  g_autofree char *id = g_strdup (json_object_get_string_member (started, "id"));
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *third = NULL;
  g_autoptr(JsonObject) a = NULL;
  g_autoptr(JsonObject) b = NULL;
  g_autoptr(JsonObject) c = NULL;
  g_autoptr(JsonObject) killed = NULL;

  g_assert_true (json_object_get_boolean_member (started, "running"));
  g_assert_true (g_str_has_prefix (id, "bg-"));
  first = g_strdup_printf ("{\"id\":\"%s\",\"input\":\"x = 40\\n\",\"yield_time_ms\":500}", id);
  second = g_strdup_printf ("{\"id\":\"%s\",\"input\":\"x += 2\\n\",\"yield_time_ms\":500}", id);
  third = g_strdup_printf ("{\"id\":\"%s\",\"input\":\"print('x is', x)\\n\","
                           "\"yield_time_ms\":3000}", id);
  a = invoke (fixture, "write_stdin", first);
  b = invoke (fixture, "write_stdin", second);
  c = invoke (fixture, "write_stdin", third);
  assert_ok (a);
  assert_ok (b);
  /* Only what is new: the answer, not the earlier prompts again. */
  g_assert_true (g_str_has_prefix (output_of (c), "x is 42\n"));
  g_assert_true (json_object_get_boolean_member (c, "running"));

  {
    g_autofree char *kill = g_strdup_printf ("{\"id\":\"%s\"}", id);

    killed = invoke (fixture, "kill_command", kill);
    assert_ok (killed);
    g_assert_false (json_object_get_boolean_member (killed, "running"));
  }
  {
    g_autoptr(JsonObject) late = invoke (fixture, "write_stdin", first);

    assert_error (late, "SANDBOX_INVALID");
  }
}

static void
test_quick_list_and_unknown (Fixture       *fixture,
                             gconstpointer  data)
{
  /* Before the call: it must return when the command ends, not after
   * its 20 s yield. */
  gint64 started = g_get_monotonic_time ();
  g_autoptr(JsonObject) quick = invoke (fixture, "exec_command",
                                        "{\"command\":\"echo quick; exit 4\","
                                        "\"yield_time_ms\":20000}");
  g_autoptr(JsonObject) listed = NULL;
  g_autoptr(JsonObject) unknown = NULL;
  JsonArray *commands;

  g_assert_cmpstr (output_of (quick), ==, "quick\n");
  g_assert_false (json_object_get_boolean_member (quick, "running"));
  g_assert_cmpint (json_object_get_int_member (quick, "exit_status"), ==, 4);
  /* It returned when the command ended, not after its yield. */
  g_assert_cmpint (g_get_monotonic_time () - started, <, 15 * G_USEC_PER_SEC);

  listed = invoke (fixture, "list_commands", "{}");
  assert_ok (listed);
  commands = json_object_get_array_member (listed, "commands");
  g_assert_cmpuint (json_array_get_length (commands), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (commands, 0),
                                                  "command"), ==, "echo quick; exit 4");

  unknown = invoke (fixture, "write_stdin", "{\"id\":\"bg-999\",\"input\":\"\"}");
  assert_error (unknown, "SANDBOX_NOT_FOUND");
  g_assert_cmpuint (fixture->operations->len, >, 0);
  for (guint i = 0; i < fixture->operations->len; i++)
    g_assert_cmpint (sandbox_coding_operation_get_kind (g_ptr_array_index (fixture->operations, i)),
                     ==, SANDBOX_CODING_OPERATION_EXECUTE);
}

static void
test_flood_and_deaf_command (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(JsonObject) flood = invoke (fixture, "exec_command",
                                        "{\"command\":\"seq 1 300000; sleep 60\","
                                        "\"yield_time_ms\":3000}");
  g_autoptr(JsonObject) deaf = NULL;
  g_autoptr(JsonObject) pushed = NULL;
  g_autoptr(GString) input = g_string_new ("{\"id\":\"");
  const char *shown = output_of (flood);

  g_assert_true (json_object_get_boolean_member (flood, "running"));
  g_assert_true (json_object_get_boolean_member (flood, "truncated"));
  g_assert_true (g_str_has_prefix (shown, "1\n2\n3\n"));
  g_assert_nonnull (strstr (shown, "omitted"));
  g_assert_cmpuint (strlen (shown), <, 2 * SANDBOX_CODING_DEFAULT_MAX_SHELL_OUTPUT_BYTES);

  /* A command that never reads: input fills its buffers, then is refused. */
  deaf = invoke (fixture, "exec_command", "{\"command\":\"exec sleep 60\",\"yield_time_ms\":100}");
  g_string_append (input, json_object_get_string_member (deaf, "id"));
  g_string_append (input, "\",\"input\":\"");
  for (guint i = 0; i < 60000; i++)
    g_string_append_c (input, 'y');
  g_string_append (input, "\",\"yield_time_ms\":100}");
  for (guint round = 0; round < 20; round++)
    {
      g_clear_pointer (&pushed, json_object_unref);
      pushed = invoke (fixture, "write_stdin", input->str);
      if (!json_object_get_boolean_member (pushed, "ok"))
        break;
    }
  assert_error (pushed, "SANDBOX_BUSY");
}

/* tty: a program that only prompts on a terminal, answered across calls. */
static void
test_exec_on_a_terminal (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(JsonObject) started = invoke (fixture, "exec_command",
                                          "{\"command\":\"python3 -q\",\"tty\":true,"
                                          "\"yield_time_ms\":3000}");
  g_autofree char *typed = NULL;
  g_autoptr(JsonObject) answer = NULL;
  g_autoptr(JsonObject) refused = NULL;

  g_assert_nonnull (strstr (output_of (started), ">>> "));
  typed = g_strdup_printf ("{\"id\":\"%s\",\"input\":\"print(6 * 7)\\r\","
                           "\"yield_time_ms\":3000}",
                           json_object_get_string_member (started, "id"));
  answer = invoke (fixture, "write_stdin", typed);
  /* The terminal echoes what was typed, then the answer. */
  g_assert_nonnull (strstr (output_of (answer), "print(6 * 7)\r\n42\r\n"));
  refused = invoke (fixture, "exec_command", "{\"command\":\"true\",\"tty\":\"yes\"}");
  assert_error (refused, "SANDBOX_INVALID");
}

typedef struct
{
  GString *seen;
  GThread *thread;          /* where every emission came */
  gint64 first_us;          /* when the first chunk came */
  gboolean wrong_thread;
} Live;

static void
shell_output_cb (SandboxCodingTools  *tools,
                 SandboxOutputStream  stream,
                 GBytes              *data,
                 Live                *live)
{
  gsize size;
  const char *bytes = g_bytes_get_data (data, &size);

  if (live->seen->len == 0)
    live->first_us = g_get_monotonic_time ();
  if (g_thread_self () != live->thread)
    live->wrong_thread = TRUE;
  g_string_append_len (live->seen, bytes, size);
}

static void
invoke_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  char **json = user_data;

  *json = sandbox_coding_tools_invoke_finish (SANDBOX_CODING_TOOLS (source), result, NULL);
}

/* A shell call's output reaches ::shell-output as it comes, in the
 * invoking thread, blocking and async alike. */
static void
test_shell_output_live (Fixture       *fixture,
                        gconstpointer  data)
{
  const char *arguments = "{\"command\":\"echo early; sleep 1; echo late\"}";
  Live live = { g_string_new (NULL), g_thread_self (), 0, FALSE };
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *async_json = NULL;
  gulong handler;
  gint64 returned;

  handler = g_signal_connect (fixture->tools, "shell-output", G_CALLBACK (shell_output_cb), &live);
  result = invoke (fixture, "shell", arguments);
  returned = g_get_monotonic_time ();
  assert_ok (result);
  g_assert_cmpstr (live.seen->str, ==, "early\nlate\n");
  /* The first chunk came a second before the call returned. */
  g_assert_cmpint (returned - live.first_us, >, 500 * 1000);
  g_assert_false (live.wrong_thread);

  g_string_truncate (live.seen, 0);
  sandbox_coding_tools_invoke_async (fixture->tools, "shell", arguments, NULL, invoke_done_cb,
                                     &async_json);
  while (async_json == NULL)
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_assert_cmpstr (live.seen->str, ==, "early\nlate\n");
  g_assert_false (live.wrong_thread);

  /* Other tools stream nothing. */
  g_string_truncate (live.seen, 0);
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "search_files", "{\"pattern\":\"hello\"}");
  assert_ok (result);
  g_assert_cmpuint (live.seen->len, ==, 0);
  g_signal_handler_disconnect (fixture->tools, handler);
  g_string_free (live.seen, TRUE);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  if (coding_test_skip_without_bwrap ())
    return 77;

  ADD ("exec-repl-across-calls", test_repl_across_calls);
  ADD ("exec-quick-list-and-unknown", test_quick_list_and_unknown);
  ADD ("exec-flood-and-deaf-command", test_flood_and_deaf_command);
  ADD ("shell-output-live", test_shell_output_live);
  ADD ("exec-on-a-terminal", test_exec_on_a_terminal);

  return g_test_run ();
}
