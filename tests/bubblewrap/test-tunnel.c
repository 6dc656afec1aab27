/* test-tunnel.c — HTTPS through the allow-list's proxy, TLS ended by the host
 *
 * Real bwrap, real curl and Python inside the sandbox, a real loopback
 * HTTPS upstream with a CA the test made (the kit's TLS upstream), trusted
 * by the gateway through the backend's upstream-ca-file. Under an
 * allow-list a guest's `curl https://…` sends CONNECT to the proxy, the
 * gateway answers the guest's TLS with a certificate of the backend's CA,
 * which the guest trusts through the curated /etc bundle and
 * SSL_CERT_FILE and its kin, and forwards each request inside with the
 * rule's credential. The attacks: a host no rule allows is refused, the
 * credential is nowhere in the guest, and the CA's key is not readable from
 * any guest path.
 *
 * The upstream's certificate names localhost: the allowed origin is
 * https://localhost:PORT, which the guest's no_proxy would exempt from the
 * proxy, so the guest's commands clear no_proxy themselves.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"
#include "sandbox-test-upstream.h"

#define TOKEN "Bearer tunnel-secret-3e1d"
#define GUEST_CA "/run/sandbox-gateway-ca.pem"

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

static void
set_up (Fixture       *fixture,
        gconstpointer  data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;

  fixture->upstream = sandbox_test_upstream_start (SANDBOX_TEST_UPSTREAM_TLS, NULL, NULL);
  g_assert_nonnull (fixture->upstream);
  fixture->port = sandbox_test_upstream_get_port (fixture->upstream);
  fixture->events = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_gateway_event_unref);
  sandbox_test_fixture_set_up (&fixture->base, "bubblewrap", template_,
                               "upstream-ca-file", sandbox_test_upstream_get_ca_file (fixture->upstream),
                               NULL);
  json = g_strdup_printf ("{\"allow\":[{\"origin\":\"https://localhost:%u\","
                          "\"headers\":{\"Authorization\":\"" TOKEN "\"}}]}", fixture->port);
  policy = sandbox_network_policy_new_from_json (json, &error);
  g_assert_no_error (error);
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

/* The backend's CA directory, in its state directory. */
static char *
ca_path (Fixture    *fixture,
         const char *name)
{
  g_autofree char *state = NULL;

  g_object_get (fixture->base.backend, "state-directory", &state, NULL);
  return g_build_filename (state, "gateway-ca", name, NULL);
}

/* Every command under an allow-list names the gateway's CA, and the guest's
 * bundle is that CA alone: the certificate, not its key. */
static void
test_trust (Fixture       *fixture,
            gconstpointer  data)
{
  g_autofree char *environment = guest_sh (fixture, "env | grep -E '^(SSL_CERT_FILE|REQUESTS_CA_BUNDLE|"
                                           "NODE_EXTRA_CA_CERTS|GIT_SSL_CAINFO|CURL_CA_BUNDLE|"
                                           "PIP_CERT)=' | sort");
  g_autofree char *bundle = guest_sh (fixture, "cat /etc/ssl/certs/ca-certificates.crt");
  g_autofree char *own = guest_sh (fixture, "cat " GUEST_CA);
  g_autofree char *host_file = ca_path (fixture, "ca.pem");
  g_autofree char *host = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_cmpstr (environment, ==,
                   "CURL_CA_BUNDLE=" GUEST_CA "\n"
                   "GIT_SSL_CAINFO=" GUEST_CA "\n"
                   "NODE_EXTRA_CA_CERTS=" GUEST_CA "\n"
                   "PIP_CERT=" GUEST_CA "\n"
                   "REQUESTS_CA_BUNDLE=" GUEST_CA "\n"
                   "SSL_CERT_FILE=" GUEST_CA "\n");
  g_file_get_contents (host_file, &host, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (own, ==, host);
  g_assert_cmpstr (bundle, ==, host);
}

/* Twice: the first command's sandbox is started cold, the next one's is a
 * ready sandbox. Every audit event names the session. */
static void
test_curl (Fixture       *fixture,
           gconstpointer  data)
{
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *body = guest_sh (fixture, "no_proxy= curl -sS --fail https://localhost:%u/x?n=%u",
                                        fixture->port, i);
      g_autofree char *expected = g_strdup_printf ("GET /x?n=%u 0", i);
      SandboxTestRequest *request;

      g_assert_cmpstr (body, ==, expected);
      g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, i + 1);
      request = sandbox_test_upstream_get (fixture->upstream, i);
      g_assert_nonnull (strstr (request->headers, "Authorization: " TOKEN "\n"));
    }

  state = sandbox_handle_capture_state (fixture->base.handle, &error);
  g_assert_no_error (error);
  /* A CONNECT and a request in its tunnel, each time; the last may be
   * audited just after curl has its answer. */
  for (gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
       fixture->events->len < 4 && g_get_monotonic_time () < deadline;)
    g_main_context_iteration (NULL, FALSE) || (g_usleep (1000), TRUE);
  g_assert_cmpuint (fixture->events->len, >=, 4);
  for (guint i = 0; i < fixture->events->len; i++)
    g_assert_cmpstr (sandbox_gateway_event_get_session_id (g_ptr_array_index (fixture->events, i)), ==,
                     sandbox_state_get_session_id (state));
}

static void
test_python (Fixture       *fixture,
             gconstpointer  data)
{
  g_autofree char *body = guest_sh (fixture,
                                    "no_proxy= /usr/bin/python3 -c 'import urllib.request, sys; "
                                    "sys.stdout.write(urllib.request.urlopen("
                                    "\"https://localhost:%u/py\").read().decode())'",
                                    fixture->port);

  g_assert_cmpstr (body, ==, "GET /py 0");
  g_assert_nonnull (strstr (sandbox_test_upstream_get (fixture->upstream, 0)->headers,
                            "Authorization: " TOKEN "\n"));
}

/* A host no rule allows: the CONNECT is refused, nothing goes upstream. */
static void
test_refused (Fixture       *fixture,
              gconstpointer  data)
{
  g_autofree char *status = guest_sh (fixture, "no_proxy= curl -s -o /dev/null -w '%%{http_connect}' "
                                      "https://api.example.com/ || true");
  g_autofree char *other_port = guest_sh (fixture, "no_proxy= curl -s -o /dev/null "
                                          "-w '%%{http_connect}' https://localhost:%u/ || true",
                                          fixture->port + 1);

  g_assert_cmpstr (status, ==, "403");
  g_assert_cmpstr (other_port, ==, "403");
  g_assert_cmpuint (sandbox_test_upstream_count (fixture->upstream), ==, 0);
}

/* After a request went through, the credential is in none of the guest's
 * environment, arguments or files (searched for with a pattern that does
 * not match the searching command's own arguments), and the CA's key neither as a file nor
 * as content anywhere the guest can read. */
static void
test_secrets_stay_on_host (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autofree char *key_file = ca_path (fixture, "ca.key");
  g_autofree char *key = NULL;
  g_auto(GStrv) lines = NULL;
  g_autofree char *search = NULL;
  g_autofree char *body = guest_sh (fixture, "no_proxy= curl -sS --fail https://localhost:%u/x",
                                    fixture->port);
  g_autoptr(GError) error = NULL;

  g_assert_cmpstr (body, ==, "GET /x 0");
  g_file_get_contents (key_file, &key, NULL, &error);
  g_assert_no_error (error);
  lines = g_strsplit (key, "\n", -1);
  /* The key's first line of base64: unique to this key. */
  g_assert_true (g_str_has_prefix (lines[0], "-----BEGIN"));
  g_assert_cmpuint (strlen (lines[1]), >, 32);

  g_assert_cmpint (sandbox_test_guest_status (fixture->base.session,
                                              "! env | grep -q 'tunnel-secre[t]' && "
                                              "! grep -qs 'tunnel-secre[t]' /proc/*/cmdline /proc/*/environ"),
                   ==, 0);
  g_assert_cmpint (sandbox_test_guest_status (fixture->base.session,
                                              "test -z \"$(find / -xdev -name ca.key 2>/dev/null)\" && "
                                              "test -z \"$(find / -path /proc -prune -o -path /sys -prune "
                                              "-o -name 'gateway-ca' -print 2>/dev/null)\""),
                   ==, 0);
  /* Every file but the host's read-only /usr and /lib (where the state
   * directory never is) and the kernel's: /etc, /run, /tmp, /workspace… */
  search = g_strdup_printf ("cd / && dirs=$(ls -A / | grep -vxE 'usr|lib|lib64|bin|sbin|proc|sys|dev') && "
                            "! grep -rqsF -e '%s' $dirs && ! grep -rqs 'tunnel-secre[t]' $dirs",
                            lines[1]);
  g_assert_cmpint (sandbox_test_guest_status (fixture->base.session, search), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/sandbox/bubblewrap/tunnel/" path, Fixture, NULL, set_up, func, tear_down)
  ADD ("trust", test_trust);
  ADD ("curl", test_curl);
  ADD ("python", test_python);
  ADD ("refused", test_refused);
  ADD ("secrets-stay-on-host", test_secrets_stay_on_host);
#undef ADD

  return g_test_run ();
}
