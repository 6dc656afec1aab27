/* test-coding-shell.c — the coding tools' shell, over real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Commands, their working directory and shell, the ready sandboxes they
 * take, their deadlines, and what the model is shown of their output:
 * truncation within the budget, the artifacts keeping the whole, invalid
 * UTF-8, and a real build.
 */

#include <poll.h>
#include <string.h>
#include <sys/pidfd.h>
#include <unistd.h>

#include <json-glib/json-glib.h>
#include <sandbox.h>

#include "coding-fixture.h"
#include "sandbox-test-bwrap-children.h"

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

/* Under an allow-list the shell's commands find the gateway as every
 * command does, through http_proxy, and trust its CA through SSL_CERT_FILE
 * (tests/bubblewrap/test-proxy.c and test-tunnel.c have the rest): a host
 * no rule allows gets the gateway's 403 through it. */
static void
test_shell_proxy (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy =
    sandbox_network_policy_new_from_json ("{\"allow\":[{\"origin\":\"https://api.example.com\"}]}",
                                          &error);
  g_autoptr(JsonObject) result = NULL;

  g_assert_no_error (error);
  g_assert_true (sandbox_session_set_network_policy (fixture->session, policy, NULL, &error));
  g_assert_no_error (error);
  for (guint i = 0; i < 2; i++)
    {
      result = invoke (fixture, "shell", "{\"command\":\"echo $http_proxy $no_proxy; "
                                         "echo $SSL_CERT_FILE $(head -1 $SSL_CERT_FILE); "
                                         "curl -s -o /dev/null -w '%{http_code}' http://example.com/\"}");
      assert_ok (result);
      g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==,
                       "http://127.0.0.1:3128 localhost,127.0.0.1\n"
                       "/run/sandbox-gateway-ca.pem -----BEGIN CERTIFICATE-----\n403");
      g_clear_pointer (&result, json_object_unref);
    }
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

/* A real make run that lasts longer than the tools' default deadline (the
 * reference's is 10 s; 2 s here, so the test stays short), asked for with a
 * per-call timeout_ms, prints a lot and fails at the end: the model gets
 * make's own last line and the compiler's error before it. Drop
 * "timeout_ms" from the call to see it killed at 2 s with "Sandbox command
 * deadline exceeded". */
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
                              "\tfor i in $$(seq 1 6); do seq 14000 | sed \"s/^/CC unit$$i.o step /\"; "
                              "sleep 0.5; done\n",
                              NULL, &error);
  g_assert_no_error (error);
  sandbox_session_write_text (fixture->session, "build/main.c",
                              "int main (void) { return 0 }\n", NULL, &error);
  g_assert_no_error (error);
  g_object_set (fixture->tools, "shell-timeout-ms", 2000, NULL);

  started = g_get_monotonic_time ();
  result = invoke (fixture, "shell",
                   "{\"command\":\"make 2>&1\",\"cwd\":\"build\",\"timeout_ms\":90000}");
  assert_ok (result);
  g_assert_cmpint (g_get_monotonic_time () - started, >, 2 * G_USEC_PER_SEC);
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

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  /* For /coding/shell-ready-sandbox (a writer can only be set once). */
  ready_commands = g_ptr_array_new_with_free_func (g_free);
  g_log_set_writer_func (capture_ready_commands, NULL, NULL);

  if (coding_test_skip_without_bwrap ())
    return 77;

  ADD ("shell", test_shell);
  ADD ("shell-ready-sandbox", test_shell_ready_sandbox);
  ADD ("shell-proxy", test_shell_proxy);
  ADD ("shell-truncation", test_shell_truncation);
  ADD ("shell-invalid-utf8", test_shell_invalid_utf8);
  ADD ("shell-timeout", test_shell_timeout);
  ADD ("shell-large-output", test_shell_large_output);
  ADD ("shell-real-build", test_shell_real_build);

  return g_test_run ();
}
