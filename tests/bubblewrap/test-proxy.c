/* test-proxy.c — the allow-list's proxy, as a guest's own tools find it
 *
 * Real bwrap, real curl and Python inside the sandbox, a real loopback
 * upstream: under an allow-list every command has http_proxy and its kin
 * naming 127.0.0.1:3128 in its own network namespace, where the stub bound
 * a listener before the guest ran and handed it to the host's gateway.
 * Plain clients reach an allowed origin with the rule's header injected,
 * are refused elsewhere, and CONNECT to an IP literal is refused (403) with
 * nothing relayed (HTTPS tunnels: test-tunnel.c). The attacks: the guest cannot bind the port first, holds
 * no descriptor of the listener, and killing what it can loses nothing;
 * deny-all has neither variables nor listener.
 *
 * The upstream listens on ::1: no_proxy exempts localhost and 127.0.0.1,
 * which the guest's clients would otherwise try in their own namespace.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"
#include "sandbox-test-upstream.h"

#define TOKEN "Bearer proxy-secret-51c9"

typedef struct
{
  SandboxTestFixture base;
  SandboxTestUpstream *upstream;
  guint16 port;
  GPtrArray *events;   /* SandboxGatewayEvent, as the handle relayed them */
} Fixture;

static void
audit_cb (SandboxHandle       *handle,
          SandboxGatewayEvent *event,
          gpointer             data)
{
  Fixture *fixture = data;

  g_ptr_array_add (fixture->events, sandbox_gateway_event_ref (event));
}

static SandboxNetworkPolicy *
allow_upstream (Fixture *fixture)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *json = g_strdup_printf ("{\"allow\":[{\"origin\":\"http://[::1]:%u\","
                                           "\"headers\":{\"Authorization\":\"" TOKEN "\"}}]}",
                                           fixture->port);
  SandboxNetworkPolicy *policy = sandbox_network_policy_new_from_json (json, &error);

  g_assert_no_error (error);
  return policy;
}

static void
set_up (Fixture       *fixture,
        gconstpointer  data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autoptr(SandboxNetworkPolicy) policy = NULL;

  fixture->upstream = sandbox_test_upstream_start (SANDBOX_TEST_UPSTREAM_RAW_PATHS |
                                                   SANDBOX_TEST_UPSTREAM_IPV6, NULL, NULL);
  fixture->port = sandbox_test_upstream_get_port (fixture->upstream);
  fixture->events = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_gateway_event_unref);
  sandbox_test_fixture_set_up (&fixture->base, "bubblewrap", template_, NULL);
  policy = GPOINTER_TO_INT (data) ? NULL : allow_upstream (fixture);
  sandbox_test_fixture_open_session (&fixture->base, policy);
  g_signal_connect (fixture->base.handle, "gateway-audit", G_CALLBACK (audit_cb), fixture);
}

static void
tear_down (Fixture       *fixture,
           gconstpointer  data)
{
  if (fixture->base.handle != NULL)
    g_signal_handlers_disconnect_by_func (fixture->base.handle, audit_cb, fixture);
  sandbox_test_fixture_tear_down (&fixture->base, data);
  sandbox_test_upstream_stop (fixture->upstream);
  g_ptr_array_unref (fixture->events);
}

/* The audit events arrive in this thread's context. */
static SandboxGatewayEvent *
wait_for_event (Fixture *fixture,
                guint    count)
{
  for (guint i = 0; i < 500 && fixture->events->len < count; i++)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (10 * 1000);
    }
  g_assert_cmpuint (fixture->events->len, >=, count);
  return g_ptr_array_index (fixture->events, count - 1);
}

static char *
guest_sh (Fixture    *fixture,
          const char *format,
          ...) G_GNUC_PRINTF (2, 3);

static char *
guest_sh (Fixture    *fixture,
          const char *format,
          ...)
{
  g_autofree char *script = NULL;
  va_list args;

  va_start (args, format);
  script = g_strdup_vprintf (format, args);
  va_end (args);
  return sandbox_test_guest_sh (fixture->base.session, script);
}

static void
assert_upstream_saw_token (Fixture *fixture,
                           guint    index)
{
  SandboxTestRequest *request = sandbox_test_upstream_get (fixture->upstream, index);

  g_assert_nonnull (strstr (request->headers, "Authorization: " TOKEN "\n"));
}

static void
test_variables (Fixture       *fixture,
                gconstpointer  data)
{
  g_autofree char *environment = guest_sh (fixture, "env | grep -i _proxy= | sort");

  g_assert_cmpstr (environment, ==,
                   "HTTPS_PROXY=http://127.0.0.1:3128\n"
                   "HTTP_PROXY=http://127.0.0.1:3128\n"
                   "http_proxy=http://127.0.0.1:3128\n"
                   "https_proxy=http://127.0.0.1:3128\n"
                   "no_proxy=localhost,127.0.0.1\n");
}

/* Twice: the first command's sandbox is started cold, the next ones' are
 * ready sandboxes, started before their command. */
static void
test_curl (Fixture       *fixture,
           gconstpointer  data)
{
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *body = guest_sh (fixture, "curl -sS --fail http://[::1]:%u/echo",
                                        fixture->port);
      SandboxGatewayEvent *event;

      g_assert_cmpuint (strlen (body), >, 0);
      g_assert_null (strstr (body, "proxy-secret"));
      g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, i + 1);
      assert_upstream_saw_token (fixture, i);
      event = wait_for_event (fixture, i + 1);
      g_assert_cmpint (sandbox_gateway_event_get_decision (event), ==, SANDBOX_GATEWAY_DECISION_ALLOWED);
      g_assert_cmpint (sandbox_gateway_event_get_arrival (event), ==, SANDBOX_GATEWAY_ARRIVAL_PROXY);
    }
}

static void
test_curl_denied (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *status = guest_sh (fixture, "curl -s -o /dev/null -w '%%{http_code}' "
                                      "http://api.example.com/x");

  g_assert_cmpstr (status, ==, "403");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
  g_assert_cmpstr (sandbox_gateway_event_get_reason (wait_for_event (fixture, 1)), ==,
                   "host-not-allowed");
}

/* The reference's way in is unchanged beside the proxy. */
static void
test_socket_unchanged (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autofree char *status = guest_sh (fixture, "curl -s -o /dev/null -w '%%{http_code}' "
                                      "--unix-socket /run/sandbox-network.sock "
                                      "http://[::1]:%u/echo", fixture->port);

  g_assert_cmpstr (status, ==, "200");
  assert_upstream_saw_token (fixture, 0);
  g_assert_cmpint (sandbox_gateway_event_get_arrival (wait_for_event (fixture, 1)), ==,
                   SANDBOX_GATEWAY_ARRIVAL_SOCKET);
}

static void
test_python (Fixture       *fixture,
             gconstpointer  data)
{
  g_autofree char *out = guest_sh (fixture,
    "python3 -c '\n"
    "import urllib.request, urllib.error\n"
    "print(urllib.request.urlopen(\"http://[::1]:%u/echo\", timeout=20).status)\n"
    "try:\n"
    "    urllib.request.urlopen(\"http://api.example.com/x\", timeout=20)\n"
    "except urllib.error.HTTPError as e:\n"
    "    print(e.code)\n"
    "'", fixture->port);

  g_assert_cmpstr (out, ==, "200\n403\n");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 1);
  assert_upstream_saw_token (fixture, 0);
}

/* curl's https:// through a proxy is a CONNECT: refused for a host no rule
 * allows, and for the allowed origin's host and port too, since it is an IP
 * literal (the gateway makes certificates for names only; tunnels are
 * tested in test-tunnel.c); the upstream sees nothing either way. */
static void
test_connect (Fixture       *fixture,
              gconstpointer  data)
{
  g_autofree char *denied = guest_sh (fixture, "curl -s -o /dev/null -w '%%{http_connect}' "
                                      "https://api.example.com/ || true");
  g_autofree char *other_port = guest_sh (fixture, "curl -s -o /dev/null -w '%%{http_connect}' "
                                          "https://[::1]:%u/ || true", fixture->port + 1);
  g_autofree char *allowed = guest_sh (fixture, "curl -s -o /dev/null -w '%%{http_connect}' "
                                       "https://[::1]:%u/echo || true", fixture->port);
  SandboxGatewayEvent *event;

  g_assert_cmpstr (denied, ==, "403");
  g_assert_cmpstr (other_port, ==, "403");
  g_assert_cmpstr (allowed, ==, "403");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
  event = wait_for_event (fixture, 3);
  g_assert_cmpstr (sandbox_gateway_event_get_method (event), ==, "CONNECT");
  g_assert_cmpstr (sandbox_gateway_event_get_reason (event), ==, "tunnel-to-ip-literal");
  g_assert_cmpuint (sandbox_gateway_event_get_status (event), ==, 403);
  g_assert_cmpstr (sandbox_gateway_event_get_reason (g_ptr_array_index (fixture->events, 0)), ==,
                   "host-not-allowed");
}

/* The stub bound the port before the guest ran: however the guest binds,
 * the address is in use. */
static void
test_guest_cannot_bind_port (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autofree char *out = guest_sh (fixture,
    "python3 -c '\n"
    "import socket, errno\n"
    "for address, option in ((\"127.0.0.1\", None), (\"127.0.0.1\", socket.SO_REUSEADDR),\n"
    "                        (\"127.0.0.1\", socket.SO_REUSEPORT), (\"0.0.0.0\", None)):\n"
    "    s = socket.socket()\n"
    "    if option is not None:\n"
    "        s.setsockopt(socket.SOL_SOCKET, option, 1)\n"
    "    try:\n"
    "        s.bind((address, 3128))\n"
    "        s.listen()\n"
    "        print(\"bound\")\n"
    "    except OSError as e:\n"
    "        print(errno.errorcode[e.errno])\n"
    "'");

  g_assert_cmpstr (out, ==, "EADDRINUSE\nEADDRINUSE\nEADDRINUSE\nEADDRINUSE\n");
}

/* The listener is there, in the sandbox's namespace, and no process the
 * guest can see holds it: no descriptor of the guest's is a socket but
 * those it made, and no /proc/PID/fd it can read names the listener. */
static void
test_guest_holds_no_listener (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autofree char *out = guest_sh (fixture,
    "inode=$(awk '$2 == \"0100007F:0C38\" && $4 == \"0A\" { print $10 }' /proc/net/tcp)\n"
    "test -n \"$inode\" || { echo no-listener; exit 0; }\n"
    "ls /proc/self/fd | sort -n | tr '\\n' ' '; echo\n"
    "for fd in /proc/[0-9]*/fd/*; do\n"
    "  if [ \"$(readlink \"$fd\" 2>/dev/null)\" = \"socket:[$inode]\" ]; then echo \"held: $fd\"; fi\n"
    "done\n"
    "echo done");

  /* ls's own directory descriptor is the 3. */
  g_assert_cmpstr (out, ==, "0 1 2 3 \ndone\n");
}

/* Killing every process it can reach leaves the proxy serving: the
 * listener is no process's. */
static void
test_guest_kills_everything (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autofree char *script = g_strdup_printf (
    "import os, signal, subprocess, urllib.request\n"
    "child = subprocess.Popen([\"sleep\", \"60\"])\n"
    "os.kill(-1, signal.SIGKILL)\n"
    "print(child.wait())\n"
    "print(urllib.request.urlopen(\"http://[::1]:%u/echo\", timeout=20).status)\n",
    fixture->port);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result =
    sandbox_test_run (fixture->base.session,
                      SANDBOX_TEST_COMMAND ("/usr/bin/python3", "-c", script), &error);
  g_autofree char *out = NULL;
  g_autofree char *after = guest_sh (fixture, "curl -sS -o /dev/null -w '%%{http_code}' "
                                     "http://[::1]:%u/echo", fixture->port);

  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  out = sandbox_result_dup_stdout_text (result);
  /* Killing every process it can reach (kill(-1) spares the caller): its
   * child, not the proxy. */
  g_assert_cmpstr (out, ==, "-9\n200\n");
  g_assert_cmpstr (after, ==, "200");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 2);
}

/* Deny-all: no variables, nothing listening on the port. */
static void
test_deny_all_has_no_proxy (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autofree char *out = guest_sh (fixture,
    "env | grep -ci _proxy= || true\n"
    "python3 -c '\n"
    "import socket, errno\n"
    "try:\n"
    "    socket.create_connection((\"127.0.0.1\", 3128), timeout=5)\n"
    "    print(\"connected\")\n"
    "except OSError as e:\n"
    "    print(errno.errorcode[e.errno])\n"
    "'");

  g_assert_cmpstr (out, ==, "0\nECONNREFUSED\n");
}

/* A policy change from deny-all to the allow-list gives the next command
 * its proxy, and back again takes it away. */
static void
test_policy_change (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) allow = allow_upstream (fixture);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  g_autofree char *status = NULL;

  g_assert_true (sandbox_session_set_network_policy (fixture->base.session, allow, NULL, &error));
  g_assert_no_error (error);
  status = guest_sh (fixture, "curl -sS -o /dev/null -w '%%{http_code}' http://[::1]:%u/echo",
                     fixture->port);
  g_assert_cmpstr (status, ==, "200");
  g_assert_true (sandbox_session_set_network_policy (fixture->base.session, deny, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_test_guest_status (fixture->base.session,
                                              "test -z \"$http_proxy\" && "
                                              "! curl -s http://[::1]:1/"), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ALLOW_LIST_TEST(path, func) \
  g_test_add ("/sandbox/bubblewrap/proxy/" path, Fixture, GINT_TO_POINTER (FALSE), set_up, func, \
              tear_down)
#define DENY_ALL_TEST(path, func) \
  g_test_add ("/sandbox/bubblewrap/proxy/" path, Fixture, GINT_TO_POINTER (TRUE), set_up, func, \
              tear_down)
  ALLOW_LIST_TEST ("variables", test_variables);
  ALLOW_LIST_TEST ("curl", test_curl);
  ALLOW_LIST_TEST ("curl-denied", test_curl_denied);
  ALLOW_LIST_TEST ("socket-unchanged", test_socket_unchanged);
  ALLOW_LIST_TEST ("python", test_python);
  ALLOW_LIST_TEST ("connect", test_connect);
  ALLOW_LIST_TEST ("guest-cannot-bind-port", test_guest_cannot_bind_port);
  ALLOW_LIST_TEST ("guest-holds-no-listener", test_guest_holds_no_listener);
  ALLOW_LIST_TEST ("guest-kills-everything", test_guest_kills_everything);
  DENY_ALL_TEST ("deny-all-has-no-proxy", test_deny_all_has_no_proxy);
  DENY_ALL_TEST ("policy-change", test_policy_change);
#undef ALLOW_LIST_TEST
#undef DENY_ALL_TEST

  return g_test_run ();
}
