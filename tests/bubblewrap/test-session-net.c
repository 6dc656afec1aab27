/* test-session-net.c — a session's loopback, shared by its commands, against real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The commands of one session share one network namespace: a server a
 * background command starts (`python3 -m http.server`) answers the next
 * command on 127.0.0.1 — under deny-all, an allow-list (whose proxy
 * variables leave 127.0.0.1 alone) and allow-all. Each of these fails with
 * a namespace per command (drop `input.session_net = net` in
 * spawn_process() of sandbox-bubblewrap-driver.c to see it).
 *
 * The attacks: another session's command reaches nothing of it and binds
 * the same port itself (the namespaces are disjoint); a guest cannot bring
 * the loopback down or change its addresses (it has no capability over
 * the namespace: its owner is the network keeper's user namespace, or on
 * a root host the initial one); a guest that kills every process it can
 * see leaves the server and the namespace standing; another command's
 * abstract Unix socket refuses it where the kernel scopes sandboxes with
 * Landlock (ABI 6); and stop leaves no
 * network keeper behind (counted by process, as this process's children).
 * A port of it exposed to the host is a Unix socket in a directory only
 * the host's user enters, relaying each connection to the guest's server;
 * bad ports are refused, a connection with no server behind it is closed,
 * and stop removes the socket.
 * Run as root and, through run-unprivileged.sh, as an unprivileged user;
 * on layered and (-copy) copied workspaces.
 */

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gunixsocketaddress.h>
#include <sandbox.h>

#include "sandbox-test-bwrap-children.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"
#include "sandbox-test-upstream.h"

#define PORT "8471"

/* Fetches hello.txt from the session's server on 127.0.0.1, retrying
 * while it starts; prints what it got, or the last error and exits 3. */
#define FETCH_SCRIPT \
  "import time, urllib.request\n" \
  "error = None\n" \
  "for attempt in range(200):\n" \
  "    try:\n" \
  "        print(urllib.request.urlopen('http://127.0.0.1:" PORT "/hello.txt', timeout=5)" \
  ".read().decode(), end='')\n" \
  "        break\n" \
  "    except OSError as e:\n" \
  "        error = e\n" \
  "        time.sleep(0.05)\n" \
  "else:\n" \
  "    print('unreachable:', error)\n" \
  "    raise SystemExit(3)\n"

/* One try, no retry: what a command of another session gets. */
#define CONNECT_ONCE_SCRIPT \
  "import socket\n" \
  "try:\n" \
  "    socket.create_connection(('127.0.0.1', " PORT "), timeout=5)\n" \
  "    print('connected')\n" \
  "except OSError as e:\n" \
  "    print('refused' if isinstance(e, ConnectionRefusedError) else repr(e))\n"

#define BIND_SCRIPT \
  "import socket\n" \
  "s = socket.socket()\n" \
  "s.bind(('127.0.0.1', " PORT "))\n" \
  "print('bound')\n"

/* SIOCSIFFLAGS with lo down, and SIOCSIFADDR: both need CAP_NET_ADMIN
 * over the namespace. */
#define RECONFIGURE_SCRIPT \
  "import fcntl, socket, struct\n" \
  "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n" \
  "for name, request, argument in (\n" \
  "        ('down', 0x8914, struct.pack('16sh', b'lo', 0)),\n" \
  "        ('address', 0x8916, struct.pack('16sHH4s', b'lo', socket.AF_INET, 0,\n" \
  "                                        socket.inet_aton('10.9.9.9')))):\n" \
  "    try:\n" \
  "        fcntl.ioctl(s, request, argument + bytes(40 - len(argument)))\n" \
  "        print(name, 'changed')\n" \
  "    except PermissionError:\n" \
  "        print(name, 'refused')\n"

static void
set_up (SandboxTestFixture *f,
        gconstpointer       data)
{
  const char *policy_json = data;
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;

  /* No ready sandboxes: the children counted are the session's own. */
  sandbox_test_fixture_set_up (f, "bubblewrap", template_, "max-ready-sandboxes", "0", NULL);
  policy = sandbox_network_policy_new_from_json (policy_json, &error);
  g_assert_no_error (error);
  sandbox_test_fixture_open_session (f, policy);
}

/* A backend whose idle sessions end their helpers after 300 ms, with its
 * default ready sandboxes (which go too). */
static void
set_up_idle (SandboxTestFixture *f,
             gconstpointer       data)
{
  const char *policy_json = data;
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_test_fixture_set_up (f, "bubblewrap", template_, "idle-helpers-timeout-ms", "300",
                               NULL);
  policy = sandbox_network_policy_new_from_json (policy_json, &error);
  g_assert_no_error (error);
  sandbox_test_fixture_open_session (f, policy);
}

static SandboxResult *
run_python (SandboxSession *session,
            const char     *script)
{
  const char *args[] = { "-c", script, NULL };
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/python3");
  g_autoptr(GError) error = NULL;
  SandboxResult *result;

  sandbox_command_set_args (command, args);
  result = sandbox_session_run (session, command, NULL, &error);
  g_assert_no_error (error);
  return result;
}

static char *
stdout_of (SandboxResult *result)
{
  gsize size;
  const char *data = g_bytes_get_data (sandbox_result_get_stdout_bytes (result), &size);

  return g_strndup (data, size);
}

static void
assert_python_prints (SandboxSession *session,
                      const char     *script,
                      const char     *expected)
{
  g_autoptr(SandboxResult) result = run_python (session, script);
  g_autofree char *printed = stdout_of (result);

  g_assert_cmpstr (printed, ==, expected);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
}

static SandboxProcess *
start_server (SandboxSession *session)
{
  const char *args[] = { "-m", "http.server", PORT, "--bind", "127.0.0.1",
                         "--directory", "/workspace", NULL };
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/python3");
  g_autoptr(GError) error = NULL;
  SandboxProcess *process;

  sandbox_command_set_args (command, args);
  process = sandbox_session_spawn_background (session, command, &error);
  g_assert_no_error (error);
  return process;
}

static void
test_server_answers_next_command (SandboxTestFixture *f,
                                  gconstpointer       data)
{
  g_autoptr(SandboxProcess) server = start_server (f->session);

  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
  /* And the one after: the namespace is the session's, not the first
   * client's. */
  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
  g_assert_false (sandbox_process_is_finished (server));
}

static void
test_sessions_disjoint (SandboxTestFixture *f,
                        gconstpointer       data)
{
  g_autoptr(SandboxProcess) server = start_server (f->session);
  g_autoptr(SandboxHandle) other = sandbox_test_create_session (f->backend, f->template_key);
  SandboxSession *other_session = sandbox_handle_get_session (other);

  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
  assert_python_prints (other_session, CONNECT_ONCE_SCRIPT, "refused\n");
  /* Its own port: free in its own namespace. */
  assert_python_prints (other_session, BIND_SCRIPT, "bound\n");
  sandbox_test_delete_session (other);
  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
}

static void
test_guest_cannot_reconfigure (SandboxTestFixture *f,
                               gconstpointer       data)
{
  g_autoptr(SandboxProcess) server = start_server (f->session);

  assert_python_prints (f->session, RECONFIGURE_SCRIPT, "down refused\naddress refused\n");
  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
}

static void
test_kill_everything_keeps_the_server (SandboxTestFixture *f,
                                       gconstpointer       data)
{
  const char *args[] = { "-c", "kill -KILL -1; exit 0", NULL };
  g_autoptr(SandboxProcess) server = start_server (f->session);
  g_autoptr(SandboxCommand) killer = sandbox_command_new ("/bin/sh");
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;

  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
  sandbox_command_set_args (killer, args);
  result = sandbox_session_run (f->session, killer, NULL, &error);
  g_assert_no_error (error);
  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
  g_assert_false (sandbox_process_is_finished (server));
}

/* An abstract Unix socket one command listens on: shared by the namespace,
 * but each command's stub scopes its sandbox with Landlock (ABI 6) where
 * the kernel has it, so another command is refused. */
static void
test_abstract_sockets_per_command (SandboxTestFixture *f,
                                   gconstpointer       data)
{
  const char *args[] = { "-c",
                         "import socket, time\n"
                         "s = socket.socket(socket.AF_UNIX)\n"
                         "s.bind('\\0sandbox-test-abstract')\n"
                         "s.listen()\n"
                         "print('listening', flush=True)\n"
                         "time.sleep(60)\n", NULL };
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/python3");
  g_autoptr(SandboxProcess) listener = NULL;
  g_autoptr(GError) error = NULL;
  guint abi = 0;

  sandbox_command_set_args (command, args);
  listener = sandbox_session_spawn_background (f->session, command, &error);
  g_assert_no_error (error);
  g_object_get (f->backend, "landlock-abi", &abi, NULL);
  assert_python_prints (f->session,
                        "import socket, time\n"
                        "for attempt in range(200):\n"
                        "    try:\n"
                        "        socket.socket(socket.AF_UNIX).connect('\\0sandbox-test-abstract')\n"
                        "        print('connected'); break\n"
                        "    except PermissionError:\n"
                        "        print('refused'); break\n"
                        "    except ConnectionRefusedError:\n"
                        "        time.sleep(0.05)\n",
                        abi >= 6 ? "refused\n" : "connected\n");
}

/* This process's children that run the stub outside a sandbox: keepers
 * and network keepers (a sandbox's stub is bwrap's child, not ours). */
static guint
count_stub_children (void)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint n = 0;

  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc", name, "stat", NULL);
      g_autofree char *stat = NULL;
      const char *close_paren;
      int parent;
      char state;

      if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (path, &stat, NULL, NULL))
        continue;
      close_paren = strrchr (stat, ')');
      if (close_paren != NULL && sscanf (close_paren, ") %c %d", &state, &parent) == 2 &&
          parent == getpid () && state != 'Z' && strstr (stat, "(sandbox-stub)") != NULL)
        n++;
    }
  return n;
}

static void
test_stop_ends_the_network_keeper (SandboxTestFixture *f,
                                   gconstpointer       data)
{
  g_autoptr(SandboxProcess) server = NULL;
  g_autoptr(GError) error = NULL;
  guint before = count_stub_children ();

  /* A session with no command yet holds no network keeper. */
  server = start_server (f->session);
  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
  g_assert_cmpuint (count_stub_children (), ==, before + 1);
  g_assert_true (sandbox_handle_stop (f->handle, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_process_is_finished (server));
  /* The layered session's keeper goes at stop too. */
  g_assert_cmpuint (count_stub_children (), ==, 0);
}

/* This process's child that is the session's network keeper: a stub
 * outside every sandbox that is not a layered session's keeper. */
static pid_t
find_network_keeper (void)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  pid_t found = 0;

  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc", name, "stat", NULL);
      g_autofree char *cmdline_path = g_build_filename ("/proc", name, "cmdline", NULL);
      g_autofree char *stat = NULL;
      g_autofree char *cmdline = NULL;
      gsize length = 0;
      const char *close_paren;
      gboolean overlay = FALSE;
      int parent;
      char state;

      if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (path, &stat, NULL, NULL) ||
          !g_file_get_contents (cmdline_path, &cmdline, &length, NULL))
        continue;
      close_paren = strrchr (stat, ')');
      if (close_paren == NULL || sscanf (close_paren, ") %c %d", &state, &parent) != 2 ||
          parent != getpid () || state == 'Z' || strstr (stat, "(sandbox-stub)") == NULL)
        continue;
      for (gsize at = 0; at < length; at += strlen (cmdline + at) + 1)
        overlay |= g_str_has_prefix (cmdline + at, "keep-overlay=");
      if (!overlay)
        {
          g_assert_cmpint (found, ==, 0);
          found = atoi (name);
        }
    }
  return found;
}

/* A network keeper killed under a live session (the OOM killer, an
 * operator) is replaced on the next command, in a new namespace: a server
 * started then answers the commands after it. (The server started before
 * stays in the old namespace, with the commands that were there.) Make
 * sandbox_bubblewrap_net_slot_dup_or_start() keep a dead one to see the
 * command fail. */
static void
test_killed_network_keeper_is_replaced (SandboxTestFixture *f,
                                        gconstpointer       data)
{
  g_autoptr(SandboxProcess) server = start_server (f->session);
  g_autoptr(SandboxProcess) again = NULL;
  g_autoptr(GError) error = NULL;
  pid_t keeper;

  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
  keeper = find_network_keeper ();
  g_assert_cmpint (keeper, >, 0);
  g_assert_cmpint (kill (keeper, SIGKILL), ==, 0);
  /* Reaped by the session only: wait until it is a zombie. */
  while (find_network_keeper () == keeper)
    g_usleep (10 * 1000);
  g_assert_true (sandbox_process_stop (server, NULL, &error));
  g_assert_no_error (error);
  again = start_server (f->session);
  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
  g_assert_cmpint (find_network_keeper (), >, 0);
  g_assert_cmpint (find_network_keeper (), !=, keeper);
}

/* Whether, within 5 s, this process has no helper child left: no stub
 * outside a sandbox (keepers) and no bwrap (a ready sandbox). */
static gboolean
helpers_end (void)
{
  for (guint i = 0; i < 500; i++)
    {
      g_autoptr(GArray) bwraps = sandbox_test_bwrap_children ();

      if (count_stub_children () == 0 && bwraps->len == 0)
        return TRUE;
      g_usleep (10 * 1000);
    }
  return FALSE;
}

/* An idle session (no command, no background command) ends its helpers
 * after idle-helpers-timeout-ms: the layered workspace's keeper, the
 * network keeper, the ready sandbox. What the guest wrote stays; a file
 * call and a command start what they need again; a background command
 * keeps them. Set the backend's timeout to 0 (never) to see the first
 * wait fail. */
static void
test_idle_helpers_end (SandboxTestFixture *f,
                       gconstpointer       data)
{
  g_autoptr(SandboxProcess) server = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) read = NULL;
  g_autofree char *out = NULL;

  g_free (sandbox_test_guest_sh (f->session, "echo -n guest > guest.txt"));
  g_assert_true (helpers_end ());
  read = sandbox_session_read_bytes (f->session, "guest.txt", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (read, NULL), g_bytes_get_size (read), "guest", 5);
  g_assert_true (sandbox_session_write_text (f->session, "host.txt", "host", NULL, &error));
  g_assert_no_error (error);
  g_assert_true (helpers_end ());
  out = sandbox_test_guest_sh (f->session, "cat guest.txt host.txt hello.txt");
  g_assert_cmpstr (out, ==, "guesthosthello");

  /* A server in the background holds them. */
  server = start_server (f->session);
  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
  g_usleep (1000 * 1000);
  g_assert_cmpuint (count_stub_children (), >, 0);
  assert_python_prints (f->session, FETCH_SCRIPT, "hello");
  g_assert_true (sandbox_process_stop (server, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (helpers_end ());
}

/* An upstream that answers with the token the gateway injected. */
static void
serve_token (SoupServer        *server,
             SoupServerMessage *msg,
             const char        *path,
             GHashTable        *query,
             gpointer           data)
{
  const char *token = soup_message_headers_get_one (soup_server_message_get_request_headers (msg),
                                                    "x-token");
  g_autofree char *body = g_strdup_printf ("token %s", token != NULL ? token : "none");

  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_COPY, body, strlen (body));
}

static SandboxNetworkPolicy *
allow_with_token (SandboxTestUpstream *upstream,
                  const char          *token)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *json = g_strdup_printf ("{\"allow\":[{\"origin\":\"%s\","
                                           "\"headers\":{\"x-token\":\"%s\"}}]}",
                                           sandbox_test_upstream_get_origin (upstream), token);
  SandboxNetworkPolicy *policy = sandbox_network_policy_new_from_json (json, &error);

  g_assert_no_error (error);
  return policy;
}

/* How many gateway sockets (bound at a path ending in network.sock) this
 * process listens on: /proc/net/unix's paths by inode, against the
 * inodes of this process's sockets. */
static guint
count_gateway_listeners (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  g_autoptr(GHashTable) inodes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *table = NULL;
  g_auto(GStrv) lines = NULL;
  const char *name;
  guint n = 0;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc/self/fd", name, NULL);
      g_autofree char *target = g_file_read_link (path, NULL);

      /* "socket:[INODE]" */
      if (target != NULL && g_str_has_prefix (target, "socket:["))
        g_hash_table_add (inodes, g_strndup (target + 8, strlen (target) - 9));
    }
  g_assert_true (g_file_get_contents ("/proc/net/unix", &table, NULL, NULL));
  lines = g_strsplit (table, "\n", -1);
  for (guint i = 1; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit_set (g_strstrip (lines[i]), " ", -1);
      guint n_fields = g_strv_length (fields);

      /* Num RefCount Protocol Flags Type St Inode [Path] */
      if (n_fields >= 8 && g_str_has_suffix (fields[n_fields - 1], "/network.sock") &&
          g_hash_table_contains (inodes, fields[n_fields - 2]))
        n++;
    }
  return n;
}

static char *
fetch_through_gateway (SandboxSession      *session,
                       SandboxTestUpstream *upstream)
{
  g_autofree char *script = g_strdup_printf ("curl -s --unix-socket %s %s/",
                                             SANDBOX_GATEWAY_GUEST_SOCKET,
                                             sandbox_test_upstream_get_origin (upstream));

  return sandbox_test_guest_sh (session, script);
}

static char *
fetch_through_proxy (SandboxSession      *session,
                     SandboxTestUpstream *upstream)
{
  g_autofree char *script = g_strdup_printf ("curl -s %s/",
                                             sandbox_test_upstream_get_origin (upstream));

  return sandbox_test_guest_sh (session, script);
}

/* An idle allow-list session parks its gateway too: no socket, no
 * connection, no upstream handle left (its listening socket gone);
 * the next command finds it serving again, under the policy set while it
 * was parked. Without the park in park_locked() the count stays. */
static void
test_idle_gateway_parks (void)
{
  SandboxTestFixture f = { 0 };
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  SandboxTestUpstream *upstream = sandbox_test_upstream_start (SANDBOX_TEST_UPSTREAM_IPV6,
                                                               serve_token, NULL);
  g_autoptr(SandboxNetworkPolicy) first = allow_with_token (upstream, "first");
  g_autoptr(SandboxNetworkPolicy) second = allow_with_token (upstream, "second");
  g_autoptr(GError) error = NULL;
  g_autofree char *answer = NULL;
  guint parked = 1;

  sandbox_test_fixture_set_up (&f, "bubblewrap", template_, "idle-helpers-timeout-ms", "300",
                               NULL);
  sandbox_test_fixture_open_session (&f, first);
  answer = fetch_through_gateway (f.session, upstream);
  g_assert_cmpstr (answer, ==, "token first");
  g_assert_cmpuint (count_gateway_listeners (), ==, 1);
  g_assert_true (helpers_end ());
  /* The park follows the helpers' end, in the same pass. */
  for (guint i = 0; i < 200 && (parked = count_gateway_listeners ()) > 0; i++)
    g_usleep (10 * 1000);
  g_assert_cmpuint (parked, ==, 0);

  g_assert_true (sandbox_session_set_network_policy (f.session, second, NULL, &error));
  g_assert_no_error (error);
  g_clear_pointer (&answer, g_free);
  answer = fetch_through_gateway (f.session, upstream);
  g_assert_cmpstr (answer, ==, "token second");
  g_assert_cmpuint (count_gateway_listeners (), ==, 1);
  g_assert_true (helpers_end ());
  /* Through the guest's proxy (its http_proxy), which the network keeper
   * hands the gateway again. */
  g_clear_pointer (&answer, g_free);
  answer = fetch_through_proxy (f.session, upstream);
  g_assert_cmpstr (answer, ==, "token second");

  sandbox_test_fixture_tear_down (&f, NULL);
  sandbox_test_upstream_stop (upstream);
}

/* Commands and file calls from two threads on a session whose helpers end
 * after 1 ms of idleness: every call starts what it needs and none fails
 * or sees another workspace. */
typedef struct
{
  SandboxSession *session;
  guint id;
} Caller;

static gpointer
call_repeatedly (gpointer data)
{
  Caller *caller = data;

  for (guint i = 0; i < 15; i++)
    {
      g_autofree char *name = g_strdup_printf ("t%u-%u.txt", caller->id, i);
      g_autofree char *script = g_strdup_printf ("cat %s; echo -n +%u > %s", name, i, name);
      g_autofree char *text = g_strdup_printf ("%u", i);
      g_autofree char *expected = g_strdup_printf ("%u", i);
      g_autofree char *out = NULL;
      g_autoptr(GBytes) back = NULL;
      g_autoptr(GError) error = NULL;

      g_assert_true (sandbox_session_write_text (caller->session, name, text, NULL, &error));
      g_assert_no_error (error);
      out = sandbox_test_guest_sh (caller->session, script);
      g_assert_cmpstr (out, ==, expected);
      back = sandbox_session_read_bytes (caller->session, name, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (g_bytes_get_size (back), ==, strlen (text) + 1);
      g_usleep (g_random_int_range (0, 5000));
    }
  return NULL;
}

static void
set_up_idle_at_once (SandboxTestFixture *f,
                     gconstpointer       data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();

  sandbox_test_fixture_set_up (f, "bubblewrap", template_, "idle-helpers-timeout-ms", "1",
                               NULL);
  sandbox_test_fixture_open_session (f, policy);
}

static void
test_idle_helpers_race (SandboxTestFixture *f,
                        gconstpointer       data)
{
  Caller callers[] = { { f->session, 0 }, { f->session, 1 } };
  GThread *threads[G_N_ELEMENTS (callers)];

  for (guint i = 0; i < G_N_ELEMENTS (callers); i++)
    threads[i] = g_thread_new ("caller", call_repeatedly, &callers[i]);
  for (guint i = 0; i < G_N_ELEMENTS (callers); i++)
    g_thread_join (threads[i]);
  g_assert_true (helpers_end ());
}

/* Sends a GET for hello.txt to @path and reads the whole answer, or NULL
 * when the connection is closed without one. */
static char *
get_through (const char *path)
{
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (path);
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) answer = g_string_new (NULL);
  static const char request[] = "GET /hello.txt HTTP/1.0\r\n\r\n";
  GInputStream *input;
  char buffer[4096];
  gssize got;

  connection = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL, &error);
  g_assert_no_error (error);
  if (!g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (connection)),
                                  request, sizeof request - 1, NULL, NULL, NULL))
    return NULL;
  input = g_io_stream_get_input_stream (G_IO_STREAM (connection));
  while ((got = g_input_stream_read (input, buffer, sizeof buffer, NULL, NULL)) > 0)
    g_string_append_len (answer, buffer, got);
  return answer->len > 0 ? g_strdup (answer->str) : NULL;
}

static void
test_expose_port (SandboxTestFixture *f,
                  gconstpointer       data)
{
  g_autoptr(SandboxProcess) server = start_server (f->session);
  g_autofree char *path = NULL;
  g_autofree char *again = NULL;
  g_autofree char *directory = NULL;
  g_autofree char *answer = NULL;
  g_autoptr(GError) error = NULL;
  struct stat st;

  path = sandbox_session_expose_port (f->session, 8471, NULL, &error);
  g_assert_no_error (error);
  again = sandbox_session_expose_port (f->session, 8471, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (again, ==, path);
  directory = g_path_get_dirname (path);
  g_assert_cmpint (stat (directory, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 07777, ==, 0700);
  g_assert_cmpint (st.st_uid, ==, getuid ());

  /* The server may still be starting: retried while nothing answers. */
  for (guint i = 0; i < 200 && answer == NULL; i++)
    {
      answer = get_through (path);
      if (answer == NULL)
        g_usleep (50 * 1000);
    }
  g_assert_nonnull (answer);
  g_assert_true (g_str_has_prefix (answer, "HTTP/1.0 200"));
  g_assert_true (g_str_has_suffix (answer, "\r\n\r\nhello"));

  g_assert_true (sandbox_handle_stop (f->handle, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (directory, G_FILE_TEST_EXISTS));
  g_clear_pointer (&again, g_free);
  again = sandbox_session_expose_port (f->session, 8471, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED);
  g_assert_null (again);
}

static void
test_expose_port_refused (SandboxTestFixture *f,
                          gconstpointer       data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  g_autoptr(SandboxResult) result = NULL;

  g_assert_null (sandbox_session_expose_port (f->session, 0, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_null (sandbox_session_expose_port (f->session, 65536, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  /* No command ran yet: no network, and a connection is closed. */
  path = sandbox_session_expose_port (f->session, 8471, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (get_through (path));
  /* A network, but nothing listening on the port: closed too. */
  result = run_python (f->session, "print('ran')");
  g_assert_null (get_through (path));
}

#define DENY_ALL "\"deny-all\""
#define ALLOW_LIST "{\"allow\":[{\"origin\":\"https://example.invalid\"}]}"
#define ALLOW_ALL "\"allow-all\""

int
main (int    argc,
      char **argv)
{
  static const struct
  {
    const char *name;
    const char *policy;
  } policies[] = {
    { "deny-all", DENY_ALL },
    { "allow-list", ALLOW_LIST },
    { "allow-all", ALLOW_ALL },
  };

  g_test_init (&argc, &argv, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (policies); i++)
    {
      g_autofree char *path = g_strdup_printf ("/sandbox/session-net/%s/server-answers-next",
                                               policies[i].name);

      g_test_add (path, SandboxTestFixture, policies[i].policy, set_up,
                  test_server_answers_next_command, sandbox_test_fixture_tear_down);
    }
  g_test_add ("/sandbox/session-net/sessions-disjoint", SandboxTestFixture, DENY_ALL,
              set_up, test_sessions_disjoint, sandbox_test_fixture_tear_down);
  g_test_add ("/sandbox/session-net/guest-cannot-reconfigure", SandboxTestFixture, DENY_ALL,
              set_up, test_guest_cannot_reconfigure, sandbox_test_fixture_tear_down);
  g_test_add ("/sandbox/session-net/kill-everything-keeps-the-server", SandboxTestFixture,
              DENY_ALL, set_up, test_kill_everything_keeps_the_server,
              sandbox_test_fixture_tear_down);
  g_test_add ("/sandbox/session-net/abstract-sockets-per-command", SandboxTestFixture,
              DENY_ALL, set_up, test_abstract_sockets_per_command,
              sandbox_test_fixture_tear_down);
  g_test_add ("/sandbox/session-net/expose-port", SandboxTestFixture, DENY_ALL, set_up,
              test_expose_port, sandbox_test_fixture_tear_down);
  g_test_add ("/sandbox/session-net/expose-port-refused", SandboxTestFixture, DENY_ALL, set_up,
              test_expose_port_refused, sandbox_test_fixture_tear_down);
  g_test_add ("/sandbox/session-net/stop-ends-the-network-keeper", SandboxTestFixture,
              ALLOW_LIST, set_up, test_stop_ends_the_network_keeper,
              sandbox_test_fixture_tear_down);
  g_test_add ("/sandbox/session-net/killed-network-keeper-is-replaced", SandboxTestFixture,
              DENY_ALL, set_up, test_killed_network_keeper_is_replaced,
              sandbox_test_fixture_tear_down);
  g_test_add ("/sandbox/session-net/idle-helpers-end", SandboxTestFixture, DENY_ALL,
              set_up_idle, test_idle_helpers_end, sandbox_test_fixture_tear_down);
  g_test_add_func ("/sandbox/session-net/idle-gateway-parks", test_idle_gateway_parks);
  g_test_add ("/sandbox/session-net/idle-helpers-race", SandboxTestFixture, NULL,
              set_up_idle_at_once, test_idle_helpers_race, sandbox_test_fixture_tear_down);
  return g_test_run ();
}
