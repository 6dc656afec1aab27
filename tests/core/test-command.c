/* test-command.c — SandboxCommand
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-command.h"
#include "sandbox-error.h"

static void
assert_invalid (SandboxCommand *command,
                const char     *message)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (sandbox_command_validate (command, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  if (strstr (error->message, message) == NULL)
    g_error ("Message “%s” does not contain “%s”", error->message, message);
}

static void
test_defaults (void)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/true");
  g_auto(GStrv) environment = sandbox_command_get_environment (command);
  g_autoptr(GError) error = NULL;

  g_assert_cmpstr (sandbox_command_get_executable (command), ==, "/usr/bin/true");
  g_assert_cmpuint (g_strv_length ((GStrv) sandbox_command_get_args (command)), ==, 0);
  g_assert_cmpstr (sandbox_command_get_cwd (command), ==, ".");
  g_assert_cmpuint (sandbox_command_get_timeout_ms (command), ==, 30000);
  g_assert_cmpuint (sandbox_command_get_max_output_bytes (command), ==, 1048576);
  g_assert_null (sandbox_command_get_stdin (command));
  g_assert_cmpuint (g_strv_length (environment), ==, 0);
  g_assert_true (sandbox_command_validate (command, &error));
  g_assert_no_error (error);
}

static void
test_args (void)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("echo");
  const char * const args[] = { "a", "b c", NULL };
  const char * const expected[] = { "a", "b c", "d", NULL };

  sandbox_command_set_args (command, args);
  sandbox_command_add_arg (command, "d");
  g_assert_true (g_strv_equal ((const char * const *) sandbox_command_get_args (command), expected));

  /* Setting a command's own arguments back must not read freed memory. */
  sandbox_command_set_args (command, sandbox_command_get_args (command));
  g_assert_true (g_strv_equal (sandbox_command_get_args (command), expected));

  sandbox_command_set_args (command, NULL);
  g_assert_cmpuint (g_strv_length ((GStrv) sandbox_command_get_args (command)), ==, 0);
}

static void
test_environment_keeps_insertion_order (void)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("env");
  g_auto(GStrv) environment = NULL;
  const char * const expected[] = { "Z=1", "A=new", "M=3", NULL };

  sandbox_command_setenv (command, "Z", "1");
  sandbox_command_setenv (command, "A", "2");
  sandbox_command_setenv (command, "M", "3");
  sandbox_command_setenv (command, "A", "new");

  environment = sandbox_command_get_environment (command);
  g_assert_true (g_strv_equal ((const char * const *) environment, expected));
  g_assert_cmpstr (sandbox_command_getenv (command, "A"), ==, "new");
  g_assert_null (sandbox_command_getenv (command, "B"));
}

static void
test_validate_refuses_bad_environment_keys (void)
{
  g_autoptr(SandboxCommand) empty = sandbox_command_new ("env");
  g_autoptr(SandboxCommand) equals = sandbox_command_new ("env");

  sandbox_command_setenv (empty, "", "x");
  assert_invalid (empty, "environment");
  sandbox_command_setenv (equals, "A=B", "x");
  assert_invalid (equals, "must not contain");
}

static void
test_validate_refuses_empty_executable (void)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("");

  assert_invalid (command, "Too small: expected string to have >=1 characters");
}

static void
test_validate_checks_limits (void)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("x");
  g_autoptr(GError) error = NULL;

  sandbox_command_set_timeout_ms (command, 0);
  assert_invalid (command, "Too small: expected number to be >0");
  sandbox_command_set_timeout_ms (command, (guint) G_MAXINT32 + 1);
  assert_invalid (command, "Too big: expected number to be <=2147483647");
  sandbox_command_set_timeout_ms (command, G_MAXINT32);
  g_assert_true (sandbox_command_validate (command, &error));
  g_assert_no_error (error);

  sandbox_command_set_max_output_bytes (command, 0);
  assert_invalid (command, "maxOutputBytes: Too small: expected number to be >0");
}

static void
test_validate_refuses_invalid_utf8 (void)
{
  g_autoptr(SandboxCommand) executable = sandbox_command_new ("x\xff");
  g_autoptr(SandboxCommand) arg = sandbox_command_new ("x");
  g_autoptr(SandboxCommand) value = sandbox_command_new ("x");

  assert_invalid (executable, "executable");
  sandbox_command_add_arg (arg, "ok");
  sandbox_command_add_arg (arg, "\xc3");
  assert_invalid (arg, "args[1]");
  sandbox_command_setenv (value, "A", "\xfe");
  assert_invalid (value, "UTF-8");
}

static void
test_copy_is_deep (void)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("x");
  g_autoptr(SandboxCommand) copy = NULL;
  g_autoptr(GBytes) input = g_bytes_new_static ("in", 2);
  g_auto(GStrv) environment = NULL;

  sandbox_command_add_arg (command, "a");
  sandbox_command_set_cwd (command, "sub");
  sandbox_command_setenv (command, "K", "V");
  sandbox_command_set_timeout_ms (command, 5);
  sandbox_command_set_max_output_bytes (command, 7);
  sandbox_command_set_stdin (command, input);

  copy = sandbox_command_copy (command);
  sandbox_command_add_arg (command, "b");
  sandbox_command_setenv (command, "K", "changed");
  sandbox_command_set_cwd (command, "other");

  g_assert_cmpstr (sandbox_command_get_executable (copy), ==, "x");
  g_assert_cmpuint (g_strv_length ((GStrv) sandbox_command_get_args (copy)), ==, 1);
  g_assert_cmpstr (sandbox_command_get_args (copy)[0], ==, "a");
  g_assert_cmpstr (sandbox_command_get_cwd (copy), ==, "sub");
  g_assert_cmpstr (sandbox_command_getenv (copy, "K"), ==, "V");
  g_assert_cmpuint (sandbox_command_get_timeout_ms (copy), ==, 5);
  g_assert_cmpuint (sandbox_command_get_max_output_bytes (copy), ==, 7);
  g_assert_true (g_bytes_equal (sandbox_command_get_stdin (copy), input));
  environment = sandbox_command_get_environment (copy);
  g_assert_cmpuint (g_strv_length (environment), ==, 1);
}

static void
test_properties (void)
{
  g_autoptr(SandboxCommand) command = NULL;
  g_auto(GStrv) args = NULL;
  g_autofree char *cwd = NULL;
  const char * const values[] = { "1", "2", NULL };
  guint timeout;
  guint64 max_output;

  command = g_object_new (SANDBOX_TYPE_COMMAND,
                          "executable", "ls",
                          "args", values,
                          "cwd", "src",
                          "timeout-ms", 10u,
                          "max-output-bytes", (guint64) 20,
                          NULL);
  g_object_get (command, "args", &args, "cwd", &cwd, "timeout-ms", &timeout,
                "max-output-bytes", &max_output, NULL);

  g_assert_cmpstr (sandbox_command_get_executable (command), ==, "ls");
  g_assert_true (g_strv_equal ((const char * const *) args, values));
  g_assert_cmpstr (cwd, ==, "src");
  g_assert_cmpuint (timeout, ==, 10);
  g_assert_cmpuint (max_output, ==, 20);
}

static void
test_from_json_reads_every_field (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxCommand) command = sandbox_command_new_from_json (
    "{\"executable\": \"/usr/bin/env\", \"args\": [\"a\", \"b\"], \"cwd\": \"sub\","
    " \"environment\": {\"B\": \"2\", \"A\": \"1\"}, \"timeoutMs\": 1e3,"
    " \"maxOutputBytes\": 10}", &error);
  g_auto(GStrv) environment = NULL;
  const char * const args[] = { "a", "b", NULL };
  const char * const expected_environment[] = { "B=2", "A=1", NULL };

  g_assert_no_error (error);
  g_assert_cmpstr (sandbox_command_get_executable (command), ==, "/usr/bin/env");
  g_assert_true (g_strv_equal (sandbox_command_get_args (command), args));
  g_assert_cmpstr (sandbox_command_get_cwd (command), ==, "sub");
  g_assert_cmpuint (sandbox_command_get_timeout_ms (command), ==, 1000);
  g_assert_cmpuint (sandbox_command_get_max_output_bytes (command), ==, 10);
  environment = sandbox_command_get_environment (command);
  g_assert_true (g_strv_equal ((const char * const *) environment, expected_environment));
}

static void
assert_json_refused (const char *json,
                     const char *message)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxCommand) command = sandbox_command_new_from_json (json, &error);

  g_assert_null (command);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  if (strstr (error->message, message) == NULL)
    g_error ("%s: message “%s” does not contain “%s”", json, error->message, message);
}

static void
test_from_json_refuses_bad_values (void)
{
  assert_json_refused ("[]", "Invalid input: expected object, received array");
  assert_json_refused ("{\"executable\": null}", "expected string, received null");
  assert_json_refused ("{\"executable\": \"x\", \"cwd\": true}", "cwd: Invalid input: expected string, received boolean");
  assert_json_refused ("{\"executable\": \"x\", \"environment\": []}", "expected record, received array");
  assert_json_refused ("{\"executable\": \"x\", \"environment\": {\"\": \"v\"}}", "must be non-empty");
  assert_json_refused ("{\"executable\": \"x\", \"environment\": {\"A=B\": \"v\"}}", "must not contain");
  assert_json_refused ("{\"executable\": \"x\", \"timeoutMs\": \"5\"}", "expected number, received string");
  assert_json_refused ("{\"executable\": \"x\", \"timeoutMs\": 1e400}", "expected int, received number");
  assert_json_refused ("{\"executable\": \"x\", \"timeoutMs\": -0.5}", "expected int, received number");
  assert_json_refused ("{\"executable\": \"x\", \"timeoutMs\": 1e30}", "Too big: expected number to be <=2147483647");
  assert_json_refused ("{\"executable\": \"x\", \"maxOutputBytes\": -3}", "Too small: expected number to be >0");
  assert_json_refused ("{\"executable\": \"x\", \"maxOutputBytes\": 1e20}", "Too big");
  assert_json_refused ("{\"executable\": \"x\", \"args\": [\"a\\u0000b\"]}", "\\u0000");
  assert_json_refused ("{\"executable\": \"x\", \"executable\": \"y\"}", "duplicate member name");
}

/* Integers beyond gint64 used to wrap in json-glib: 18446744073709551617
 * was "Too small" and -9223372036854775809 "Too big". */
static void
test_from_json_out_of_range_integers (void)
{
  assert_json_refused ("{\"executable\": \"x\", \"timeoutMs\": 9223372036854775808}",
                       "timeoutMs: Too big: expected number to be <=2147483647");
  assert_json_refused ("{\"executable\": \"x\", \"timeoutMs\": 18446744073709551617}",
                       "timeoutMs: Too big: expected number to be <=2147483647");
  assert_json_refused ("{\"executable\": \"x\", \"timeoutMs\": -9223372036854775809}",
                       "timeoutMs: Too small: expected number to be >0");
  assert_json_refused ("{\"executable\": \"x\", \"maxOutputBytes\": 99999999999999999999999}",
                       "maxOutputBytes: Too big");
  assert_json_refused ("{\"executable\": \"x\", \"maxOutputBytes\": -99999999999999999999999}",
                       "maxOutputBytes: Too small: expected number to be >0");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/command/defaults", test_defaults);
  g_test_add_func ("/sandbox/command/args", test_args);
  g_test_add_func ("/sandbox/command/environment-keeps-insertion-order",
                   test_environment_keeps_insertion_order);
  g_test_add_func ("/sandbox/command/validate-refuses-bad-environment-keys",
                   test_validate_refuses_bad_environment_keys);
  g_test_add_func ("/sandbox/command/validate-refuses-empty-executable",
                   test_validate_refuses_empty_executable);
  g_test_add_func ("/sandbox/command/validate-checks-limits", test_validate_checks_limits);
  g_test_add_func ("/sandbox/command/validate-refuses-invalid-utf8",
                   test_validate_refuses_invalid_utf8);
  g_test_add_func ("/sandbox/command/copy-is-deep", test_copy_is_deep);
  g_test_add_func ("/sandbox/command/properties", test_properties);
  g_test_add_func ("/sandbox/command/from-json-reads-every-field", test_from_json_reads_every_field);
  g_test_add_func ("/sandbox/command/from-json-out-of-range-integers",
                   test_from_json_out_of_range_integers);
  g_test_add_func ("/sandbox/command/from-json-refuses-bad-values",
                   test_from_json_refuses_bad_values);

  return g_test_run ();
}
