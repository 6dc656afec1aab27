/* sandboxctl-demo.c — a guided tour of libsandbox on this machine
 *
 * Runs every part of the system with the bubblewrap driver in a fresh
 * temporary state directory and checks each claim it prints: prewarm,
 * deny-all isolation, workspace persistence across stop and resume, the
 * exclusive lease, the allow-list gateway with an injected credential the
 * guest never sees (against a loopback upstream the demo serves itself),
 * limits, and delete. Exits 0 only when every check holds.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libsoup/soup.h>

#include <sandbox-backend-driver.h>

#include "sandboxctl.h"

#define DEMO_TOKEN_VARIABLE "SANDBOX_DEMO_TOKEN"
#define DEMO_TEMPLATE_NAME "demo-workspace"
#define DEMO_STEPS 7

/* The loopback upstream: answers whether the expected credential arrived. */
typedef struct
{
  GMainContext *context;
  GMainLoop    *loop;
  GThread      *thread;
  SoupServer   *server;
  char         *expected_authorization;
  guint         port;
  int           requests;              /* atomic */
  int           credentialed_requests; /* atomic */
} DemoUpstream;

typedef struct
{
  SandboxctlContext *ctx;
  char              *state_dir;
  SandboxBackend    *backend;
  DemoUpstream       upstream;
  char              *token;
  char              *template_key;
  guint              step;
  guint              passed;
  guint              failed;
} Demo;

/* Output ---------------------------------------------------------------- */

static void
demo_step (Demo       *demo,
           const char *title,
           const char *what_it_shows)
{
  demo->step++;
  g_print ("\n[%u/%d] %s\n      %s\n", demo->step, DEMO_STEPS, title, what_it_shows);
}

static void
demo_note (const char *format,
           ...) G_GNUC_PRINTF (1, 2);

static void
demo_note (const char *format,
           ...)
{
  g_autofree char *text = NULL;
  va_list args;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);
  g_print ("      %s\n", text);
}

static gboolean
demo_check (Demo       *demo,
            gboolean    holds,
            const char *format,
            ...) G_GNUC_PRINTF (3, 4);

static gboolean
demo_check (Demo       *demo,
            gboolean    holds,
            const char *format,
            ...)
{
  g_autofree char *claim = NULL;
  va_list args;

  va_start (args, format);
  claim = g_strdup_vprintf (format, args);
  va_end (args);

  g_print ("  %s %s\n", holds ? "ok  " : "FAIL", claim);
  if (holds)
    demo->passed++;
  else
    demo->failed++;
  return holds;
}

static int
demo_fatal (Demo         *demo,
            const char   *what,
            const GError *error)
{
  g_autofree char *code = sandboxctl_error_code_name (error);

  g_printerr ("sandboxctl demo: %s failed: %s: %s\n", what, code, error->message);
  return sandboxctl_exit_code_for_error (error);
}

/* Running guest commands ------------------------------------------------- */

static SandboxResult *
demo_run_full (SandboxHandle  *handle,
               guint           timeout_ms,
               gsize           max_output_bytes,
               GError        **error,
               const char     *executable,
               ...) G_GNUC_NULL_TERMINATED;

static SandboxResult *
demo_run_full (SandboxHandle  *handle,
               guint           timeout_ms,
               gsize           max_output_bytes,
               GError        **error,
               const char     *executable,
               ...)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new (executable);
  const char *arg;
  va_list args;

  va_start (args, executable);
  while ((arg = va_arg (args, const char *)) != NULL)
    sandbox_command_add_arg (command, arg);
  va_end (args);

  if (timeout_ms != 0)
    sandbox_command_set_timeout_ms (command, timeout_ms);
  if (max_output_bytes != 0)
    sandbox_command_set_max_output_bytes (command, max_output_bytes);
  return sandbox_session_run (sandbox_handle_get_session (handle), command, NULL, error);
}

#define demo_run(handle, error, ...) demo_run_full ((handle), 0, 0, (error), __VA_ARGS__, NULL)

static char *
result_stdout (SandboxResult *result)
{
  return result != NULL ? sandbox_result_dup_stdout_text (result) : g_strdup ("");
}

static int
result_status (SandboxResult *result)
{
  return result != NULL ? sandbox_result_get_exit_status (result) : -1;
}

/* The loopback upstream ------------------------------------------------- */

static void
upstream_handle_request (SoupServer        *server,
                         SoupServerMessage *message,
                         const char        *path,
                         GHashTable        *query,
                         gpointer           user_data)
{
  DemoUpstream *upstream = user_data;
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (message);
  const char *authorization = soup_message_headers_get_one (headers, "Authorization");
  gboolean credentialed = g_strcmp0 (authorization, upstream->expected_authorization) == 0;
  const char *body = credentialed ? "upstream: the expected credential arrived\n"
                                  : "upstream: no credential\n";

  g_atomic_int_inc (&upstream->requests);
  if (credentialed)
    g_atomic_int_inc (&upstream->credentialed_requests);
  soup_server_message_set_status (message, credentialed ? 200 : 401, NULL);
  soup_server_message_set_response (message, "text/plain", SOUP_MEMORY_STATIC, body, strlen (body));
}

static gpointer
upstream_thread (gpointer data)
{
  DemoUpstream *upstream = data;

  g_main_context_push_thread_default (upstream->context);
  g_main_loop_run (upstream->loop);
  g_main_context_pop_thread_default (upstream->context);
  return NULL;
}

/* Serves HTTP on 127.0.0.1 (never anything but loopback) in a thread of
 * its own, so blocking sandbox calls in the main thread never stall it. */
static gboolean
upstream_start (DemoUpstream  *upstream,
                const char    *expected_authorization,
                GError       **error)
{
  GSList *uris;
  gboolean listening;

  upstream->expected_authorization = g_strdup (expected_authorization);
  upstream->context = g_main_context_new ();
  upstream->loop = g_main_loop_new (upstream->context, FALSE);

  g_main_context_push_thread_default (upstream->context);
  upstream->server = soup_server_new ("server-header", "sandboxctl-demo-upstream", NULL);
  soup_server_add_handler (upstream->server, NULL, upstream_handle_request, upstream, NULL);
  listening = soup_server_listen_local (upstream->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, error);
  g_main_context_pop_thread_default (upstream->context);
  if (!listening)
    return FALSE;

  uris = soup_server_get_uris (upstream->server);
  upstream->port = uris != NULL ? (guint) g_uri_get_port (uris->data) : 0;
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  upstream->thread = g_thread_new ("demo-upstream", upstream_thread, upstream);
  return TRUE;
}

static void
upstream_stop (DemoUpstream *upstream)
{
  if (upstream->thread != NULL)
    {
      g_main_loop_quit (upstream->loop);
      g_clear_pointer (&upstream->thread, g_thread_join);
    }
  if (upstream->server != NULL)
    {
      g_main_context_push_thread_default (upstream->context);
      soup_server_disconnect (upstream->server);
      g_clear_object (&upstream->server);
      g_main_context_pop_thread_default (upstream->context);
    }
  g_clear_pointer (&upstream->loop, g_main_loop_unref);
  g_clear_pointer (&upstream->context, g_main_context_unref);
  g_clear_pointer (&upstream->expected_authorization, g_free);
}

/* The steps -------------------------------------------------------------- */

static int
step_prewarm (Demo *demo)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new (DEMO_TEMPLATE_NAME);
  g_autoptr(GBytes) readme = g_bytes_new_static ("hello from the template\n", 24);
  g_autoptr(GBytes) script = g_bytes_new_static ("#!/bin/sh\necho \"hello from $0\"\n", 31);
  g_autoptr(GError) error = NULL;
  g_autofree char *again = NULL;
  gboolean reused = TRUE;

  demo_step (demo, "Prewarm a template",
             "Templates are stored once under a content-addressed key (sandboxctl prewarm).");
  if (!sandbox_template_add_file (template_, "README.txt", readme, &error) ||
      !sandbox_template_add_file (template_, "bin/hello.sh", script, &error))
    return demo_fatal (demo, "building the template", error);

  demo->template_key = sandbox_backend_prewarm (demo->backend, template_, &reused, NULL, &error);
  if (demo->template_key == NULL)
    return demo_fatal (demo, "prewarm", error);
  demo_note ("template key %s (README.txt, bin/hello.sh)", demo->template_key);
  demo_check (demo, !reused, "the first prewarm stores the template");

  again = sandbox_backend_prewarm (demo->backend, template_, &reused, NULL, &error);
  if (again == NULL)
    return demo_fatal (demo, "prewarm again", error);
  demo_check (demo, reused && g_str_equal (again, demo->template_key),
              "prewarming the same files again reuses the same key");
  return SANDBOXCTL_EXIT_OK;
}

static void
check_no_host_etc (Demo          *demo,
                   SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;
  /* The guest's /etc is the curated one (issue 21): never the host's shadow. */
  g_autoptr(SandboxResult) result = demo_run (handle, &error, "/usr/bin/test", "-e", "/etc/shadow");
  g_autoptr(SandboxResult) listing = demo_run (handle, &error, "/usr/bin/ls", "-A", "/");
  g_autofree char *root = result_stdout (listing);

  g_strdelimit (root, "\n", ' ');
  demo_note ("the guest's / holds: %s", g_strstrip (root));
  demo_check (demo, result_status (result) == 1,
              "the host's /etc/shadow is not visible inside (test -e /etc/shadow → 1)");
}

/* bwrap itself sets PWD to the working directory it changed into. */
static gboolean
is_expected_guest_variable (const char *line)
{
  return g_str_has_prefix (line, "PATH=") || g_str_has_prefix (line, "HOME=") ||
         g_str_has_prefix (line, "PWD=" SANDBOX_WORKSPACE);
}

static void
check_clear_environment (Demo          *demo,
                         SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = demo_run (handle, &error, "/usr/bin/env");
  g_autofree char *env = result_stdout (result);
  g_auto(GStrv) lines = g_strsplit (g_strstrip (env), "\n", -1);
  g_auto(GStrv) host_environment = g_get_environ ();
  gboolean cleared = result_status (result) == 0;
  g_autoptr(GString) names = g_string_new (NULL);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (!is_expected_guest_variable (lines[i]))
        cleared = FALSE;
      g_string_append_printf (names, "%s%.*s", names->len > 0 ? ", " : "",
                              (int) strcspn (lines[i], "="), lines[i]);
    }
  demo_check (demo, cleared && strstr (env, demo->token) == NULL,
              "the environment is cleared: only %s inside (the host has %u variables, "
              "including $%s)", names->str, g_strv_length (host_environment), DEMO_TOKEN_VARIABLE);
}

static void
check_read_only_runtime (Demo          *demo,
                         SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result =
    demo_run (handle, &error, "/bin/sh", "-c", "echo pwned > /usr/sandbox-demo-pwned");

  demo_check (demo, result_status (result) != 0 &&
                    !g_file_test ("/usr/sandbox-demo-pwned", G_FILE_TEST_EXISTS),
              "the runtime is read-only: writing to /usr fails (exit %d)", result_status (result));
}

static void
check_no_network (Demo          *demo,
                  SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u/", demo->upstream.port);
  int before = g_atomic_int_get (&demo->upstream.requests);
  g_autoptr(SandboxResult) result =
    demo_run_full (handle, 10000, 0, &error, "/usr/bin/curl", "-sS", "--max-time", "5", url, NULL);
  g_autoptr(SandboxResult) namespace = demo_run (handle, &error, "/usr/bin/readlink", "/proc/self/ns/net");
  g_autofree char *guest_ns = result_stdout (namespace);
  g_autofree char *host_ns = g_file_read_link ("/proc/self/ns/net", NULL);

  demo_check (demo, result_status (result) != 0 &&
                    g_atomic_int_get (&demo->upstream.requests) == before,
              "no network: curl to the demo's server on host loopback %s fails (exit %d)",
              url, result_status (result));
  g_strstrip (guest_ns);
  demo_check (demo, guest_ns[0] != '\0' && g_strcmp0 (guest_ns, host_ns) != 0,
              "its own network namespace: %s inside, %s on the host", guest_ns,
              host_ns != NULL ? host_ns : "?");
}

static int
step_isolation (Demo           *demo,
                SandboxHandle **handle_out)
{
  g_autoptr(SandboxNetworkPolicy) deny_all = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *hello = NULL;

  demo_step (demo, "Create a session under deny-all and look around inside",
             "Commands run in bubblewrap namespaces (sandboxctl create; sandboxctl run).");
  handle = sandbox_backend_create (demo->backend, demo->template_key, NULL, deny_all, NULL, &error);
  if (handle == NULL)
    return demo_fatal (demo, "create", error);
  demo_note ("session %s", sandbox_session_get_id (sandbox_handle_get_session (handle)));

  result = demo_run (handle, &error, "/bin/sh", "bin/hello.sh");
  hello = result_stdout (result);
  demo_check (demo, g_str_has_prefix (hello, "hello from"),
              "the template's files are in /workspace: sh bin/hello.sh → %s", g_strstrip (hello));

  check_no_host_etc (demo, handle);
  check_clear_environment (demo, handle);
  check_read_only_runtime (demo, handle);
  check_no_network (demo, handle);

  *handle_out = g_steal_pointer (&handle);
  return SANDBOXCTL_EXIT_OK;
}

static int
step_persistence (Demo           *demo,
                  SandboxHandle  *handle,
                  SandboxState  **state_out,
                  SandboxHandle **resumed_out)
{
  g_autoptr(SandboxNetworkPolicy) deny_all = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *state_json = NULL;
  g_autofree char *text = NULL;

  demo_step (demo, "Stop and resume: the workspace persists",
             "A small state descriptor reconnects to the session (sandboxctl run --state FILE).");
  result = demo_run (handle, &error, "/bin/sh", "-c", "echo 'written inside the sandbox' > notes.txt");
  demo_check (demo, result_status (result) == 0, "the guest writes notes.txt in /workspace");

  state = sandbox_handle_capture_state (handle, &error);
  if (state == NULL)
    return demo_fatal (demo, "capture state", error);
  state_json = sandbox_state_to_json (state);
  demo_note ("state: %s", state_json);
  if (!sandbox_handle_stop (handle, NULL, &error))
    return demo_fatal (demo, "stop", error);

  g_clear_object (&result);
  result = demo_run (handle, &error, "/usr/bin/true");
  demo_check (demo, g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED),
              "after stop the old handle refuses: %s", error != NULL ? error->message : "it ran");
  g_clear_error (&error);

  resumed = sandbox_backend_create (demo->backend, demo->template_key, state, deny_all, NULL, &error);
  if (resumed == NULL)
    return demo_fatal (demo, "resume", error);
  text = sandbox_session_read_text (sandbox_handle_get_session (resumed), "notes.txt", NULL, &error);
  demo_check (demo, g_strcmp0 (text, "written inside the sandbox\n") == 0,
              "resumed from the state, notes.txt is still there (read from the host side)");

  *state_out = g_steal_pointer (&state);
  *resumed_out = g_steal_pointer (&resumed);
  return SANDBOXCTL_EXIT_OK;
}

static int
step_busy_lease (Demo         *demo,
                 SandboxState *state)
{
  g_autoptr(SandboxNetworkPolicy) deny_all = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) second = NULL;
  g_autoptr(GError) error = NULL;

  demo_step (demo, "One owner at a time",
             "A live session holds an exclusive lease; a second attach is refused.");
  second = sandbox_backend_create (demo->backend, demo->template_key, state, deny_all, NULL, &error);
  demo_check (demo, second == NULL && g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY),
              "attaching again while the session is live → %s%s%s",
              error != NULL ? sandbox_error_code_name (error->code) : "attached",
              error != NULL ? ": " : "", error != NULL ? error->message : "");
  return SANDBOXCTL_EXIT_OK;
}

static SandboxNetworkPolicy *
demo_allow_list (Demo        *demo,
                 const char  *origin,
                 GError     **error)
{
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();

  /* The same path as `--allow ORIGIN --header authorization=@SANDBOX_DEMO_TOKEN`. */
  if (!sandbox_network_policy_builder_add_origin (builder, origin, error) ||
      !sandboxctl_network_add_header_spec (builder, origin,
                                           "authorization=@" DEMO_TOKEN_VARIABLE, error))
    return NULL;
  return sandbox_network_policy_builder_build (builder, error);
}

static void
check_gateway (Demo          *demo,
               SandboxHandle *handle,
               const char    *origin)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *url = g_strdup_printf ("%s/whoami", origin);
  g_autoptr(SandboxResult) allowed =
    demo_run_full (handle, 15000, 0, &error, "/usr/bin/curl", "-sS", "--max-time", "10",
                   "--unix-socket", SANDBOX_GATEWAY_GUEST_SOCKET, url, NULL);
  g_autofree char *answer = result_stdout (allowed);
  g_autoptr(SandboxResult) denied =
    demo_run_full (handle, 15000, 0, &error, "/usr/bin/curl", "-s", "--max-time", "10",
                   "-o", "/dev/null", "-w", "%{http_code}",
                   "--unix-socket", SANDBOX_GATEWAY_GUEST_SOCKET, "http://127.0.0.1:1/", NULL);
  g_autofree char *denied_status = result_stdout (denied);
  g_autoptr(SandboxResult) env = demo_run (handle, &error, "/usr/bin/env");
  g_autofree char *guest_env = result_stdout (env);
  g_autoptr(SandboxResult) direct =
    demo_run_full (handle, 10000, 0, &error, "/usr/bin/curl", "-sS", "--max-time", "5", url, NULL);
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (handle, NULL);
  g_autofree char *state_json = state != NULL ? sandbox_state_to_json (state) : g_strdup ("");

  demo_note ("guest: curl --unix-socket %s %s", SANDBOX_GATEWAY_GUEST_SOCKET, url);
  demo_check (demo, result_status (allowed) == 0 &&
                    strstr (answer, "expected credential arrived") != NULL &&
                    g_atomic_int_get (&demo->upstream.credentialed_requests) >= 1,
              "the upstream received the credential the host injected: %s",
              g_strstrip (answer));
  demo_check (demo, strstr (answer, demo->token) == NULL && strstr (guest_env, demo->token) == NULL &&
                    strstr (state_json, demo->token) == NULL,
              "the guest never sees it: not in its environment, the response or the saved state");
  demo_check (demo, g_str_equal (g_strstrip (denied_status), "403"),
              "another origin (http://127.0.0.1:1, not allowed) is refused by the gateway "
              "(HTTP %s)", denied_status);
  demo_check (demo, result_status (direct) != 0,
              "direct TCP is still impossible: curl %s without the socket fails (exit %d)",
              url, result_status (direct));
}

static int
step_gateway (Demo          *demo,
              SandboxHandle *handle)
{
  g_autofree char *origin = g_strdup_printf ("http://127.0.0.1:%u", demo->upstream.port);
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;

  demo_step (demo, "The allow-list gateway injects a credential the guest cannot see",
             "HTTP to allowed origins only, through a Unix socket "
             "(sandboxctl run --allow ORIGIN --header authorization=@ENVVAR).");
  demo_note ("upstream: %s, served by this demo on host loopback; credential from $%s",
             origin, DEMO_TOKEN_VARIABLE);

  policy = demo_allow_list (demo, origin, &error);
  if (policy == NULL)
    return demo_fatal (demo, "building the allow-list", error);
  if (!sandbox_session_set_network_policy (sandbox_handle_get_session (handle), policy, NULL, &error))
    return demo_fatal (demo, "setting the allow-list policy", error);

  check_gateway (demo, handle, origin);
  return SANDBOXCTL_EXIT_OK;
}

static int
step_limits (Demo          *demo,
             SandboxHandle *handle)
{
  g_autoptr(GError) deadline_error = NULL;
  g_autoptr(GError) output_error = NULL;
  g_autoptr(SandboxResult) slept = NULL;
  g_autoptr(SandboxResult) flooded = NULL;
  gint64 started = g_get_monotonic_time ();
  gint64 elapsed_ms;

  demo_step (demo, "Limits: a deadline and an output cap",
             "The command's whole process group is killed (sandboxctl run --timeout-ms, "
             "--max-output-bytes).");
  slept = demo_run_full (handle, 200, 0, &deadline_error, "/usr/bin/sleep", "5", NULL);
  elapsed_ms = (g_get_monotonic_time () - started) / 1000;
  demo_check (demo, g_error_matches (deadline_error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT) &&
                    elapsed_ms < 4000,
              "sleep 5 with a 200 ms deadline → %s after %" G_GINT64_FORMAT " ms",
              deadline_error != NULL ? deadline_error->message : "it finished", elapsed_ms);

  flooded = demo_run_full (handle, 10000, 4096, &output_error, "/usr/bin/yes", NULL);
  demo_check (demo, g_error_matches (output_error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT),
              "yes with a 4096-byte output cap → %s",
              output_error != NULL ? output_error->message : "it finished");
  return SANDBOXCTL_EXIT_OK;
}

static int
step_delete (Demo          *demo,
             SandboxHandle *handle,
             SandboxState  *state)
{
  g_autoptr(SandboxNetworkPolicy) deny_all = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) again = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) stored = NULL;
  g_autoptr(GPtrArray) templates = NULL;
  gboolean template_kept = FALSE;

  demo_step (demo, "Delete", "The session's state and workspace go; templates stay (sandboxctl delete).");
  if (!sandbox_handle_delete (handle, NULL, &error))
    return demo_fatal (demo, "delete", error);
  stored = sandbox_backend_lookup_state (demo->backend, sandbox_state_get_session_id (state),
                                         NULL, &error);
  demo_check (demo, stored == NULL && g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND),
              "the backend no longer stores the session");
  g_clear_error (&error);
  again = sandbox_backend_create (demo->backend, demo->template_key, state, deny_all, NULL, &error);
  demo_check (demo, again == NULL && g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND),
              "resuming it now → %s", error != NULL ? sandbox_error_code_name (error->code) : "resumed");
  g_clear_error (&error);
  templates = sandbox_backend_list_templates (demo->backend, NULL, &error);
  for (guint i = 0; templates != NULL && i < templates->len; i++)
    template_kept |= g_str_equal (sandbox_template_info_get_key (g_ptr_array_index (templates, i)),
                                  demo->template_key);
  demo_check (demo, template_kept, "the template is still stored for the next session");
  return SANDBOXCTL_EXIT_OK;
}

/* The tour --------------------------------------------------------------- */

static int
demo_preflight (Demo *demo)
{
  const char * const required[] = { "/usr/bin/bwrap", "/usr/bin/curl", NULL };

  for (guint i = 0; required[i] != NULL; i++)
    if (!g_file_test (required[i], G_FILE_TEST_IS_EXECUTABLE))
      {
        g_printerr ("sandboxctl demo: %s is missing; install the %s package (./dev demo does)\n",
                    required[i], i == 0 ? "bubblewrap" : "curl");
        return SANDBOXCTL_EXIT_SANDBOX_BASE + SANDBOX_ERROR_UNAVAILABLE;
      }
  return SANDBOXCTL_EXIT_OK;
}

static int
demo_setup (Demo *demo)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *random = g_uuid_string_random ();
  g_autofree char *authorization = NULL;

  demo->state_dir = g_dir_make_tmp ("sandboxctl-demo-XXXXXX", &error);
  if (demo->state_dir == NULL)
    return demo_fatal (demo, "making a temporary state directory", error);

  demo->backend = sandbox_backend_new ("bubblewrap", NULL, &error,
                                       "state-directory", demo->state_dir, NULL);
  if (demo->backend == NULL)
    {
      g_printerr ("sandboxctl demo: bubblewrap is not available on this machine\n");
      return demo_fatal (demo, "creating the bubblewrap backend", error);
    }

  /* The credential lives in our environment only, as a user's token would. */
  demo->token = g_strdup_printf ("demo-secret-%s", random);
  authorization = g_strdup_printf ("Bearer %s", demo->token);
  g_setenv (DEMO_TOKEN_VARIABLE, authorization, TRUE);
  if (!upstream_start (&demo->upstream, authorization, &error))
    return demo_fatal (demo, "starting the loopback upstream", error);
  return SANDBOXCTL_EXIT_OK;
}

/* The state directory holds workspaces the guest shaped: it is removed with
 * the kit's `rm -rf`, which never follows a symbolic link and checks every
 * step back up (sandbox_workspace_remove_tree_at()). */
static gboolean
remove_state_directory (const char  *path,
                        GError     **error)
{
  g_autofree char *parent = g_path_get_dirname (path);
  g_autofree char *name = g_path_get_basename (path);
  gboolean removed;
  int parent_fd;

  parent_fd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open directory %s: %s", parent, g_strerror (saved_errno));
      return FALSE;
    }
  removed = sandbox_workspace_remove_tree_at (parent_fd, name, error);
  close (parent_fd);
  return removed;
}

static void
demo_teardown (Demo     *demo,
               gboolean  keep)
{
  upstream_stop (&demo->upstream);
  g_clear_object (&demo->backend);
  g_unsetenv (DEMO_TOKEN_VARIABLE);
  if (demo->state_dir != NULL && !keep)
    {
      g_autoptr(GError) error = NULL;

      if (!remove_state_directory (demo->state_dir, &error))
        g_printerr ("sandboxctl demo: could not remove %s: %s\n", demo->state_dir, error->message);
    }
  else if (demo->state_dir != NULL)
    {
      g_print ("State kept in %s\n", demo->state_dir);
    }
  g_clear_pointer (&demo->state_dir, g_free);
  g_clear_pointer (&demo->token, g_free);
  g_clear_pointer (&demo->template_key, g_free);
}

static int
demo_tour (Demo *demo)
{
  g_autoptr(SandboxHandle) first = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  int status;

  g_print ("sandboxctl demo — libsandbox on this machine, bubblewrap driver\n"
           "state directory: %s (fresh, removed afterwards)\n", demo->state_dir);

  if ((status = step_prewarm (demo)) != SANDBOXCTL_EXIT_OK ||
      (status = step_isolation (demo, &first)) != SANDBOXCTL_EXIT_OK ||
      (status = step_persistence (demo, first, &state, &resumed)) != SANDBOXCTL_EXIT_OK ||
      (status = step_busy_lease (demo, state)) != SANDBOXCTL_EXIT_OK ||
      (status = step_gateway (demo, resumed)) != SANDBOXCTL_EXIT_OK ||
      (status = step_limits (demo, resumed)) != SANDBOXCTL_EXIT_OK ||
      (status = step_delete (demo, resumed, state)) != SANDBOXCTL_EXIT_OK)
    return status;
  return SANDBOXCTL_EXIT_OK;
}

int
sandboxctl_cmd_demo (SandboxctlContext   *ctx,
                     char              ***argv)
{
  gboolean keep = FALSE;
  const GOptionEntry entries[] = {
    { "keep", 0, 0, G_OPTION_ARG_NONE, &keep,
      "Keep the temporary state directory afterwards", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "A guided tour that shows every part of the system on this "
                                   "machine with the bubblewrap driver, checking each claim: "
                                   "prewarm, deny-all isolation, persistence across stop and "
                                   "resume, the lease, the allow-list gateway with a hidden "
                                   "credential, limits and delete. Exits 0 when all hold.",
                                   entries, FALSE);
  Demo demo = { .ctx = ctx };
  int status;

  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (g_strv_length (*argv) > 1)
    return sandboxctl_usage_error (ctx, "unexpected argument “%s”", (*argv)[1]);
  if (ctx->driver != NULL && !g_str_equal (ctx->driver, "bubblewrap"))
    return sandboxctl_usage_error (ctx, "the demo shows the bubblewrap driver only");

  status = demo_preflight (&demo);
  if (status == SANDBOXCTL_EXIT_OK)
    status = demo_setup (&demo);
  if (status == SANDBOXCTL_EXIT_OK)
    status = demo_tour (&demo);
  demo_teardown (&demo, keep);

  if (status != SANDBOXCTL_EXIT_OK)
    return status;
  g_print ("\n%u checks passed, %u failed.\n", demo.passed, demo.failed);
  return demo.failed == 0 ? SANDBOXCTL_EXIT_OK : SANDBOXCTL_EXIT_DEMO_CHECK;
}
