/* test-network-policy.c — SandboxNetworkPolicy and its builder
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-network-policy-private.h"

static void
test_deny_and_allow_all (void)
{
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxNetworkPolicy) allow = sandbox_network_policy_new_allow_all ();
  g_autofree char *deny_json = sandbox_network_policy_to_redacted_json (deny);
  g_autofree char *allow_json = sandbox_network_policy_to_redacted_json (allow);

  g_assert_cmpint (sandbox_network_policy_get_kind (deny), ==, SANDBOX_NETWORK_POLICY_DENY_ALL);
  g_assert_cmpint (sandbox_network_policy_get_kind (allow), ==, SANDBOX_NETWORK_POLICY_ALLOW_ALL);
  g_assert_cmpuint (sandbox_network_policy_get_n_rules (deny), ==, 0);
  g_assert_cmpstr (deny_json, ==, "\"deny-all\"");
  g_assert_cmpstr (allow_json, ==, "\"allow-all\"");
}

static SandboxNetworkPolicy *
policy_with_origin (const char  *origin,
                    GError     **error)
{
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();

  if (!sandbox_network_policy_builder_add_origin (builder, origin, error))
    return NULL;
  return sandbox_network_policy_builder_build (builder, error);
}

static void
assert_rule (const char *origin,
             const char *normalized,
             const char *host,
             const char *hostname,
             guint16     port)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = policy_with_origin (origin, &error);
  const SandboxNetworkRule *rule;

  g_assert_no_error (error);
  rule = sandbox_network_policy_get_rule (policy, 0);
  g_assert_cmpstr (rule->origin, ==, normalized);
  g_assert_cmpstr (sandbox_network_policy_get_rule_origin (policy, 0), ==, normalized);
  g_assert_cmpstr (rule->host, ==, host);
  g_assert_cmpstr (rule->hostname, ==, hostname);
  g_assert_cmpuint (rule->port, ==, port);
}

static void
test_origins_are_normalized (void)
{
  assert_rule ("https://api.example.com", "https://api.example.com", "api.example.com",
               "api.example.com", 443);
  assert_rule ("HTTPS://API.Example.com/", "https://api.example.com", "api.example.com",
               "api.example.com", 443);
  assert_rule ("https://api.example.com:443", "https://api.example.com", "api.example.com",
               "api.example.com", 443);
  assert_rule ("http://api.example.com:80/", "http://api.example.com", "api.example.com",
               "api.example.com", 80);
  assert_rule ("https://api.example.com:8443", "https://api.example.com:8443",
               "api.example.com:8443", "api.example.com", 8443);
  assert_rule ("http://127.0.0.1:8080", "http://127.0.0.1:8080", "127.0.0.1:8080",
               "127.0.0.1", 8080);
  assert_rule ("http://[::1]:8080", "http://[::1]:8080", "[::1]:8080", "[::1]", 8080);
  assert_rule ("http://[0:0::1]", "http://[::1]", "[::1]", "[::1]", 80);
}

static void
assert_origin_refused (const char *origin)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = policy_with_origin (origin, &error);

  if (policy != NULL)
    g_error ("Origin “%s” was accepted", origin);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_true (g_str_has_prefix (error->message, "Expected an HTTP origin"));
}

static void
test_refuses_non_origins (void)
{
  assert_origin_refused ("https://api.example.com/v1");
  assert_origin_refused ("https://api.example.com/?");
  assert_origin_refused ("https://api.example.com?q");
  assert_origin_refused ("https://api.example.com/#");
  assert_origin_refused ("https://user@api.example.com");
  assert_origin_refused ("https://@api.example.com");
  assert_origin_refused ("https://:pw@api.example.com");
  assert_origin_refused ("ftp://api.example.com");
  assert_origin_refused ("api.example.com");
  assert_origin_refused ("https:api.example.com");
  assert_origin_refused ("https:///");
  assert_origin_refused ("https://");
  assert_origin_refused ("");
}

static void
test_refuses_guri_leniencies (void)
{
  assert_origin_refused (" https://api.example.com");
  assert_origin_refused ("https://api.example.com ");
  assert_origin_refused ("https://api example.com");
  assert_origin_refused ("https://api.example.com\\@evil.com");
  assert_origin_refused ("https://api%2eexample.com");
  assert_origin_refused ("http://[fe80::1%25eth0]");
  assert_origin_refused ("https://api.example.com:");
  assert_origin_refused ("https://api.example.com:0");
  assert_origin_refused ("https://api.example.com:65536");
  assert_origin_refused ("https://api.example.com:+80");
  assert_origin_refused ("https://api.\xc3\xa9xample.com");
}

static void
test_refuses_bad_hosts (void)
{
  assert_origin_refused ("https://*.example.com");
  assert_origin_refused ("https://a_b.example.com");
  assert_origin_refused ("https://-a.example.com");
  assert_origin_refused ("https://a..example.com");
  assert_origin_refused ("https://api.example.com.");
  assert_origin_refused ("https://127.1");
  assert_origin_refused ("https://0x7f.0.0.1");
  assert_origin_refused ("https://1.2.3.4.5");
  assert_origin_refused ("https://01.2.3.4");
  assert_origin_refused ("https://256.0.0.1");
  assert_origin_refused ("https://[1.2.3.4]");
  assert_origin_refused ("https://[::1");
}

static void
test_headers_in_order (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (
    "{\"allow\": [{\"origin\": \"https://api.example.com\","
    " \"headers\": {\"X-Api-Key\": \"k1\", \"accept\": \"application/json\"}}]}", &error);
  g_auto(GStrv) names = NULL;
  const char * const expected_names[] = { "X-Api-Key", "accept", NULL };
  const char * const expected_values[] = { "k1", "application/json", NULL };
  const SandboxNetworkRule *rule;

  g_assert_no_error (error);
  names = sandbox_network_policy_get_rule_header_names (policy, 0);
  g_assert_true (g_strv_equal ((const char * const *) names, expected_names));
  rule = sandbox_network_policy_get_rule (policy, 0);
  g_assert_true (g_strv_equal ((const char * const *) rule->header_values, expected_values));
}

static void
test_find_rule_by_host (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (
    "{\"allow\": [{\"origin\": \"https://api.example.com\"},"
    " {\"origin\": \"http://127.0.0.1:8080\"}]}", &error);

  g_assert_no_error (error);
  g_assert_cmpuint (sandbox_network_policy_get_n_rules (policy), ==, 2);
  g_assert_true (sandbox_network_policy_find_rule (policy, "API.example.COM") ==
                 sandbox_network_policy_get_rule (policy, 0));
  g_assert_true (sandbox_network_policy_find_rule (policy, "127.0.0.1:8080") ==
                 sandbox_network_policy_get_rule (policy, 1));
  g_assert_null (sandbox_network_policy_find_rule (policy, "api.example.com:443"));
  g_assert_null (sandbox_network_policy_find_rule (policy, "127.0.0.1"));
  g_assert_null (sandbox_network_policy_find_rule (policy, "evil.com"));
  g_assert_null (sandbox_network_policy_find_rule (policy, NULL));
}

static void assert_json_refused (const char *json,
                                 const char *message);

/* "pattern" opts a rule into one leading wildcard label; "origin" stays
 * exact (the reference refuses a wildcard host there). */
static void
test_patterns (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (
    "{\"allow\": [{\"pattern\": \"https://*.Example.com/\", \"headers\": {\"X-A\": \"1\"}},"
    " {\"origin\": \"https://api.example.com\"},"
    " {\"pattern\": \"http://*.svc.test:8080\"}]}", &error);
  g_autofree char *json = NULL;

  g_assert_no_error (error);
  g_assert_true (sandbox_network_policy_find_rule (policy, "www.example.com") ==
                 sandbox_network_policy_get_rule (policy, 0));
  g_assert_true (sandbox_network_policy_find_rule (policy, "WWW.EXAMPLE.COM") ==
                 sandbox_network_policy_get_rule (policy, 0));
  /* An exact origin wins over the pattern that covers it. */
  g_assert_true (sandbox_network_policy_find_rule (policy, "api.example.com") ==
                 sandbox_network_policy_get_rule (policy, 1));
  g_assert_true (sandbox_network_policy_find_rule (policy, "a.svc.test:8080") ==
                 sandbox_network_policy_get_rule (policy, 2));
  g_assert_null (sandbox_network_policy_find_rule (policy, "example.com"));
  g_assert_null (sandbox_network_policy_find_rule (policy, "a.b.example.com"));
  g_assert_null (sandbox_network_policy_find_rule (policy, "www.example.com:443"));
  g_assert_null (sandbox_network_policy_find_rule (policy, "www.example.com:8443"));
  g_assert_null (sandbox_network_policy_find_rule (policy, "www.example.com.evil.test"));
  g_assert_null (sandbox_network_policy_find_rule (policy, "-x.example.com"));
  g_assert_null (sandbox_network_policy_find_rule (policy, "a.svc.test"));
  g_assert_null (sandbox_network_policy_find_rule (policy, "a.svc.test:08080"));
  g_assert_null (sandbox_network_policy_find_rule (policy, "[::1]:8080"));

  /* Its JSON says pattern again. */
  json = sandbox_network_policy_to_redacted_json (policy);
  g_assert_nonnull (strstr (json, "\"pattern\":\"https://*.example.com\""));
}

static void
test_patterns_refused (void)
{
  const char *bad[] = {
    "https://*", "https://*.com", "https://*.", "https://*.0.0.1", "https://*.[::1]",
    "https://a.*.example.com", "https://*a.example.com", "https://**.example.com",
    "https://api.example.com", "ftp://*.example.com", "https://*.example.com/path",
    "https://user@*.example.com",
  };

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *json = g_strdup_printf ("{\"allow\": [{\"pattern\": \"%s\"}]}", bad[i]);

      assert_json_refused (json, "allow[0].pattern: Expected an HTTP origin pattern");
    }
  /* The reference's own field stays exact. */
  assert_json_refused ("{\"allow\": [{\"origin\": \"https://*.example.com\"}]}",
                       "allow[0].origin: Expected an HTTP origin (");
  assert_json_refused ("{\"allow\": [{\"origin\": \"https://a.test\","
                       " \"pattern\": \"https://*.a.test\"}]}", "an origin or a pattern, not both");
  assert_json_refused ("{\"allow\": [{\"pattern\": \"https://*.a.test\"},"
                       " {\"pattern\": \"https://*.A.test\"}]}", "appears twice");
}

static void
test_builder_adds_pattern (void)
{
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_network_policy_builder_add_pattern (builder, "https://*.corp.test",
                                                             &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_network_policy_builder_add_header (builder, "https://*.corp.test",
                                                            "Authorization", "x", &error));
  g_assert_no_error (error);
  g_assert_false (sandbox_network_policy_builder_add_pattern (builder, "https://*", &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);
  policy = sandbox_network_policy_builder_build (builder, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sandbox_network_policy_find_rule (policy, "git.corp.test"));
}

static void
test_redacted_json_hides_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (
    "{\"allow\": [{\"origin\": \"https://API.example.com:443/\","
    " \"headers\": {\"authorization\": \"Bearer s3cr3t-token\"}}, {\"origin\": \"http://b.test\"}]}",
    &error);
  g_autofree char *json = NULL;
  g_autoptr(SandboxNetworkPolicy) reparsed = NULL;

  g_assert_no_error (error);
  json = sandbox_network_policy_to_redacted_json (policy);
  g_assert_null (strstr (json, "s3cr3t"));
  g_assert_cmpstr (json, ==,
                   "{\"allow\":[{\"origin\":\"https://api.example.com\",\"headers\":"
                   "{\"authorization\":\"<redacted>\"}},{\"origin\":\"http://b.test\","
                   "\"headers\":{}}]}");

  /* The redacted form is itself a valid policy. */
  reparsed = sandbox_network_policy_new_from_json (json, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sandbox_network_policy_get_n_rules (reparsed), ==, 2);
}

static void
test_errors_never_echo_header_values (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (
    "{\"allow\": [{\"origin\": \"https://a.test\","
    " \"headers\": {\"x-a\": \"s3cr3t\\r\\nX-Injected: 1\"}}]}", &error);
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();
  g_autoptr(GError) origin_error = NULL;

  g_assert_null (policy);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "Invalid header value"));
  g_assert_null (strstr (error->message, "s3cr3t"));

  g_assert_false (sandbox_network_policy_builder_add_origin (builder, "https://user:s3cr3t@a.test",
                                                             &origin_error));
  g_assert_null (strstr (origin_error->message, "s3cr3t"));
}

static void
test_builder_empty_allows_nothing (void)
{
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_builder_build (builder, &error);
  g_autofree char *json = NULL;

  g_assert_no_error (error);
  g_assert_cmpint (sandbox_network_policy_get_kind (policy), ==, SANDBOX_NETWORK_POLICY_ALLOW_LIST);
  g_assert_cmpuint (sandbox_network_policy_get_n_rules (policy), ==, 0);
  json = sandbox_network_policy_to_redacted_json (policy);
  g_assert_cmpstr (json, ==, "{\"allow\":[]}");
}

static void
test_builder_refuses_duplicate_hosts (void)
{
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_network_policy_builder_add_origin (builder, "https://a.test", &error));
  g_assert_true (sandbox_network_policy_builder_add_origin (builder, "https://a.test:8443", &error));
  g_assert_false (sandbox_network_policy_builder_add_origin (builder, "http://A.test", &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "Each gateway host must have exactly one origin"));
}

static void
test_builder_adds_headers (void)
{
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  const SandboxNetworkRule *rule;

  g_assert_true (sandbox_network_policy_builder_add_origin (builder, "https://a.test", &error));
  g_assert_true (sandbox_network_policy_builder_add_header (builder, "https://a.test/",
                                                            "Authorization", "Bearer t", &error));
  g_assert_no_error (error);
  policy = sandbox_network_policy_builder_build (builder, &error);

  /* Later changes to the builder do not reach a built policy. */
  g_assert_true (sandbox_network_policy_builder_add_header (builder, "https://a.test",
                                                            "x-b", "2", &error));
  rule = sandbox_network_policy_find_rule (policy, "a.test");
  g_assert_cmpuint (g_strv_length (rule->header_names), ==, 1);
  g_assert_cmpstr (rule->header_names[0], ==, "Authorization");
  g_assert_cmpstr (rule->header_values[0], ==, "Bearer t");
}

static void
assert_header_refused (const char *origin,
                       const char *name,
                       const char *value,
                       const char *message)
{
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_network_policy_builder_add_origin (builder, "https://a.test", NULL));
  g_assert_true (sandbox_network_policy_builder_add_header (builder, "https://a.test", "X-Set",
                                                            "v", NULL));
  g_assert_false (sandbox_network_policy_builder_add_header (builder, origin, name, value, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  if (strstr (error->message, message) == NULL)
    g_error ("Message “%s” does not contain “%s”", error->message, message);
}

static void
test_builder_refuses_bad_headers (void)
{
  assert_header_refused ("https://b.test", "x-a", "v", "has not been added");
  assert_header_refused ("https://a.test", "Host", "v", "Routing and hop-by-hop headers");
  assert_header_refused ("https://a.test", "CONNECTION", "v", "Routing and hop-by-hop headers");
  assert_header_refused ("https://a.test", "bad name", "v", "Invalid input");
  assert_header_refused ("https://a.test", "", "v", "Invalid input");
  assert_header_refused ("https://a.test", "x-é", "v", "Invalid input");
  assert_header_refused ("https://a.test", "x-a", "a\nb", "Invalid header value");
  assert_header_refused ("https://a.test", "x-a", "a\rb", "Invalid header value");
  assert_header_refused ("https://a.test", "x-set", "w", "more than once");
}

static void
assert_json_refused (const char *json,
                     const char *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (json, &error);

  g_assert_null (policy);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  if (strstr (error->message, message) == NULL)
    g_error ("%s: message “%s” does not contain “%s”", json, error->message, message);
}

static void
test_from_json_refuses_bad_shapes (void)
{
  assert_json_refused ("[]", "Invalid input");
  assert_json_refused ("true", "Invalid input");
  assert_json_refused ("{\"allow\": {}}", "allow: Invalid input: expected array, received object");
  assert_json_refused ("{\"allow\": [\"https://a.test\"]}", "allow[0]: Invalid input: expected object");
  assert_json_refused ("{\"allow\": [{}]}", "allow[0].origin: Invalid input: expected string, received undefined");
  assert_json_refused ("{\"allow\": [{\"origin\": \"https://a.test\", \"headers\": []}]}",
                       "expected record, received array");
  assert_json_refused ("{\"allow\": [{\"origin\": \"https://a.test\", \"headers\": {\"x\": null}}]}",
                       "Invalid input: expected string, received null");
  assert_json_refused ("{\"allow\": [{\"origin\": \"https://a.test\", \"headers\": {\"X-A\": \"1\", \"x-a\": \"2\"}}]}",
                       "more than once");
  assert_json_refused ("\"deny-all\" // comment", "Invalid JSON");
}

/* A rule's streaming opt-in: the short and the long form, and back. */
static void
test_stream_from_json (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (
    "{\"allow\": [{\"origin\": \"https://a.test\", \"stream\": true},"
    " {\"origin\": \"https://b.test\", \"stream\": {\"maxBytes\": 5000000, \"timeoutMs\": 60000}},"
    " {\"origin\": \"https://c.test\", \"stream\": false},"
    " {\"origin\": \"https://d.test\", \"stream\": {\"idleTimeoutMs\": 86400000}}]}", &error);
  g_autoptr(SandboxNetworkPolicy) again = NULL;
  g_autofree char *json = NULL;
  g_autofree char *json_again = NULL;
  guint64 max_bytes;
  guint idle_ms, timeout_ms;

  g_assert_no_error (error);
  g_assert_true (sandbox_network_policy_get_rule_stream (policy, 0, &max_bytes, &idle_ms, &timeout_ms));
  g_assert_cmpuint (max_bytes, ==, 0);
  g_assert_cmpuint (idle_ms, ==, 0);
  g_assert_cmpuint (timeout_ms, ==, 0);
  g_assert_true (sandbox_network_policy_get_rule_stream (policy, 1, &max_bytes, &idle_ms, &timeout_ms));
  g_assert_cmpuint (max_bytes, ==, 5000000);
  g_assert_cmpuint (idle_ms, ==, 0);
  g_assert_cmpuint (timeout_ms, ==, 60000);
  g_assert_false (sandbox_network_policy_get_rule_stream (policy, 2, NULL, NULL, NULL));
  g_assert_true (sandbox_network_policy_get_rule_stream (policy, 3, NULL, &idle_ms, NULL));
  g_assert_cmpuint (idle_ms, ==, 86400000);

  json = sandbox_network_policy_to_redacted_json (policy);
  g_assert_cmpstr (json, ==,
                   "{\"allow\":[{\"origin\":\"https://a.test\",\"headers\":{},\"stream\":true},"
                   "{\"origin\":\"https://b.test\",\"headers\":{},\"stream\":{\"maxBytes\":5000000,\"timeoutMs\":60000}},"
                   "{\"origin\":\"https://c.test\",\"headers\":{}},"
                   "{\"origin\":\"https://d.test\",\"headers\":{},\"stream\":{\"idleTimeoutMs\":86400000}}]}");
  again = sandbox_network_policy_new_from_json (json, &error);
  g_assert_no_error (error);
  json_again = sandbox_network_policy_to_redacted_json (again);
  g_assert_cmpstr (json_again, ==, json);
}

static void
test_stream_refuses_bad_limits (void)
{
#define RULE(stream) "{\"allow\": [{\"origin\": \"https://a.test\", \"stream\": " stream "}]}"
  assert_json_refused (RULE ("1"), "allow[0].stream: Invalid input: expected boolean or object, received number");
  assert_json_refused (RULE ("\"yes\""), "expected boolean or object, received string");
  assert_json_refused (RULE ("null"), "expected boolean or object, received null");
  assert_json_refused (RULE ("[]"), "expected boolean or object, received array");
  assert_json_refused (RULE ("{\"maxbytes\": 1}"), "allow[0].stream: Unrecognized key: \"maxbytes\"");
  assert_json_refused (RULE ("{\"maxBytes\": 0}"), "allow[0].stream.maxBytes: Invalid input: expected an integer from 1 to 1099511627776");
  assert_json_refused (RULE ("{\"maxBytes\": -1}"), "stream.maxBytes: Invalid input: expected an integer");
  assert_json_refused (RULE ("{\"maxBytes\": 1.5}"), "stream.maxBytes: Invalid input: expected an integer");
  assert_json_refused (RULE ("{\"maxBytes\": \"10\"}"), "stream.maxBytes: Invalid input: expected an integer");
  assert_json_refused (RULE ("{\"maxBytes\": 1099511627777}"), "stream.maxBytes: Invalid input");
  assert_json_refused (RULE ("{\"maxBytes\": 99999999999999999999}"), "stream.maxBytes: Invalid input");
  assert_json_refused (RULE ("{\"timeoutMs\": 86400001}"), "stream.timeoutMs: Invalid input: expected an integer from 1 to 86400000");
  assert_json_refused (RULE ("{\"idleTimeoutMs\": 4294967296}"), "stream.idleTimeoutMs: Invalid input");
  assert_json_refused (RULE ("{\"idleTimeoutMs\": true}"), "stream.idleTimeoutMs: Invalid input");
#undef RULE
}

static void
test_builder_sets_stream (void)
{
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  guint timeout_ms;

  g_assert_false (sandbox_network_policy_builder_set_stream (builder, "https://a.test", 0, 0, 0, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "has not been added"));
  g_clear_error (&error);

  g_assert_true (sandbox_network_policy_builder_add_origin (builder, "https://A.test/", &error));
  g_assert_false (sandbox_network_policy_builder_set_stream (builder, "https://a.test",
                                                             (G_GUINT64_CONSTANT (1) << 40) + 1, 0, 0, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (sandbox_network_policy_builder_set_stream (builder, "https://a.test", 0, 0, 86400001, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  g_assert_true (sandbox_network_policy_builder_set_stream (builder, "https://a.test", 0, 0, 90000, &error));
  g_assert_no_error (error);
  policy = sandbox_network_policy_builder_build (builder, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_network_policy_get_rule_stream (policy, 0, NULL, NULL, &timeout_ms));
  g_assert_cmpuint (timeout_ms, ==, 90000);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/network-policy/deny-and-allow-all", test_deny_and_allow_all);
  g_test_add_func ("/sandbox/network-policy/origins-are-normalized", test_origins_are_normalized);
  g_test_add_func ("/sandbox/network-policy/refuses-non-origins", test_refuses_non_origins);
  g_test_add_func ("/sandbox/network-policy/refuses-guri-leniencies", test_refuses_guri_leniencies);
  g_test_add_func ("/sandbox/network-policy/refuses-bad-hosts", test_refuses_bad_hosts);
  g_test_add_func ("/sandbox/network-policy/headers-in-order", test_headers_in_order);
  g_test_add_func ("/sandbox/network-policy/find-rule-by-host", test_find_rule_by_host);
  g_test_add_func ("/sandbox/network-policy/redacted-json-hides-values", test_redacted_json_hides_values);
  g_test_add_func ("/sandbox/network-policy/errors-never-echo-header-values",
                   test_errors_never_echo_header_values);
  g_test_add_func ("/sandbox/network-policy/builder-empty-allows-nothing",
                   test_builder_empty_allows_nothing);
  g_test_add_func ("/sandbox/network-policy/builder-refuses-duplicate-hosts",
                   test_builder_refuses_duplicate_hosts);
  g_test_add_func ("/sandbox/network-policy/builder-adds-headers", test_builder_adds_headers);
  g_test_add_func ("/sandbox/network-policy/builder-refuses-bad-headers",
                   test_builder_refuses_bad_headers);
  g_test_add_func ("/sandbox/network-policy/from-json-refuses-bad-shapes",
                   test_from_json_refuses_bad_shapes);
  g_test_add_func ("/sandbox/network-policy/stream-from-json", test_stream_from_json);
  g_test_add_func ("/sandbox/network-policy/stream-refuses-bad-limits", test_stream_refuses_bad_limits);
  g_test_add_func ("/sandbox/network-policy/builder-sets-stream", test_builder_sets_stream);
  g_test_add_func ("/sandbox/network-policy/patterns", test_patterns);
  g_test_add_func ("/sandbox/network-policy/patterns-refused", test_patterns_refused);
  g_test_add_func ("/sandbox/network-policy/builder-adds-pattern", test_builder_adds_pattern);

  return g_test_run ();
}
