/* test-coding-session.c — the coding tools and their session's state, over real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The network policy and the restrictions the host requires, prepared
 * launches going stale, admission shared with direct commands, refusals
 * after a stop, no credential in any result, and calls cancelled before
 * or during their work (the file tools' on a gated session).
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <sandbox.h>

#include "coding-fixture.h"
#include "gated-session.h"

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

static gboolean
allow_cb (SandboxCodingTools     *tools,
          SandboxCodingOperation *operation,
          gpointer                data)
{
  return TRUE;
}

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

  if (coding_test_skip_without_bwrap ())
    return 77;

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
