/* test-memory-script.c — the memory driver's script is checked strictly
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "memory-test-common.h"

typedef struct
{
  const char *script;
  const char *message_part;   /* the offending member, or what is wrong */
} BadScript;

static const BadScript bad_scripts[] = {
  { "not json", "not JSON" },
  { "[]", "must be a JSON object" },
  { "\"commands\"", "must be a JSON object" },
  { "{\"commandz\": []}", "“(document).commandz” is not a known member" },
  { "{\"commands\": {}}", "“commands” must be an array" },
  { "{\"commands\": [42]}", "“commands[0]” must be an object" },
  { "{\"commands\": [{}]}", "“commands[0].match” is required" },
  { "{\"commands\": [{\"match\": {}}]}", "“commands[0].match.executable” is required" },
  { "{\"commands\": [{\"match\": {\"executable\": \"\"}}]}",
    "“commands[0].match.executable” must not be empty" },
  { "{\"commands\": [{\"match\": {\"executable\": 5}}]}",
    "“commands[0].match.executable” must be a string" },
  { "{\"commands\": [{\"match\": {\"executable\": null}}]}",
    "“commands[0].match.executable” must be a string" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\", \"args\": \"a\"}}]}",
    "“commands[0].match.args” must be an array" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\", \"args\": [\"a\", 1]}}]}",
    "“commands[0].match.args[1]” must be a string" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\", \"argv\": []}}]}",
    "“commands[0].match.argv” is not a known member" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"shell\": true}]}",
    "“commands[0].shell” is not a known member" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}}, "
    "{\"match\": {\"executable\": \"/y\"}, \"exit\": 256}]}",
    "“commands[1].exit” must be an integer from 0 to 255" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"exit\": -1}]}", "“commands[0].exit”" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"exit\": 1.5}]}", "“commands[0].exit”" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"exit\": \"0\"}]}", "“commands[0].exit”" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"stdout\": 1}]}",
    "“commands[0].stdout” must be a string" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"stdout\": \"a\", "
    "\"stdout-base64\": \"YQ==\"}]}",
    "“commands[0].stdout-base64” cannot be combined with “stdout”" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"stderr-base64\": \"abc\"}]}",
    "“commands[0].stderr-base64” must be valid base64" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"stdout-base64\": \"ab=c\"}]}",
    "“commands[0].stdout-base64” must be valid base64" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"stdout-base64\": \"a*cd\"}]}",
    "“commands[0].stdout-base64” must be valid base64" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"delay-ms\": -1}]}",
    "“commands[0].delay-ms” must be an integer from 0 to 2147483647" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"delay-ms\": 2147483648}]}",
    "“commands[0].delay-ms”" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"stdout-from-stdin\": \"yes\"}]}",
    "“commands[0].stdout-from-stdin” must be true or false" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"stdout-from-file-arg\": 1}]}",
    "“commands[0].stdout-from-file-arg” must be true or false" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"writes\": [\"a\"]}]}",
    "“commands[0].writes” must be an object" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"writes\": {\"../x\": \"y\"}}]}",
    "“commands[0].writes.../x” does not name a workspace file" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"writes\": {\"/workspace\": \"y\"}}]}",
    "“commands[0].writes./workspace” names the workspace root" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"writes\": {\"a\": 1}}]}",
    "“commands[0].writes.a” must be a string" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"chunks\": {}}]}",
    "“commands[0].chunks” must be an array" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"chunks\": [{}]}]}",
    "“commands[0].chunks[0]” must have exactly one of" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, "
    "\"chunks\": [{\"stdout\": \"a\"}, {\"stdout\": \"a\", \"stderr\": \"b\"}]}]}",
    "“commands[0].chunks[1]” must have exactly one of" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, "
    "\"chunks\": [{\"stdout\": \"a\", \"delay-ms\": \"5\"}]}]}",
    "“commands[0].chunks[0].delay-ms” must be an integer" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"chunks\": [{\"stdin\": \"a\"}]}]}",
    "“commands[0].chunks[0].stdin” is not a known member" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"fault\": \"explode\"}]}",
    "“commands[0].fault” must be “spawn-failure”, “never-ends” or “output-flood”, not “explode”" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"fault\": \"spawn-failure\", "
    "\"stdout\": \"a\"}]}",
    "“commands[0].stdout” cannot be combined with the fault “spawn-failure”" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"fault\": \"never-ends\", "
    "\"exit\": 0}]}",
    "“commands[0].exit” cannot be combined with the fault “never-ends”" },
  { "{\"commands\": [{\"match\": {\"executable\": \"/x\"}, \"fault\": \"output-flood\", "
    "\"delay-ms\": 5}]}",
    "“commands[0].delay-ms” cannot be combined with the fault “output-flood”" },
  { "{\"default\": []}", "“default” must be an object" },
  { "{\"default\": {\"match\": {\"executable\": \"/x\"}}}", "“default.match” is not a known member" },
  { "{\"default\": {\"exit\": 300}}", "“default.exit” must be an integer from 0 to 255" },
};

static void
test_bad_scripts_name_the_member (void)
{
  for (guint i = 0; i < G_N_ELEMENTS (bad_scripts); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SandboxBackend) backend = sandbox_backend_new ("memory", NULL, &error,
                                                               "script", bad_scripts[i].script,
                                                               NULL);

      g_test_message ("script: %s", bad_scripts[i].script);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_null (backend);
      if (strstr (error->message, bad_scripts[i].message_part) == NULL)
        g_error ("“%s” does not say “%s”", error->message, bad_scripts[i].message_part);
      g_assert_true (g_str_has_prefix (error->message, "Invalid memory driver script"));
    }
}

static void
test_script_file_errors_name_the_file (void)
{
  g_autofree char *path = g_build_filename (g_get_user_config_dir (), "bad-script.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;

  g_assert_true (g_mkdir_with_parents (g_get_user_config_dir (), 0700) == 0);
  g_file_set_contents (path, "{\"commands\": [{\"match\": {\"executable\": 1}}]}", -1, &error);
  g_assert_no_error (error);

  backend = sandbox_backend_new ("memory", NULL, &error, "script-file", path, NULL);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, "“commands[0].match.executable”"));
  g_assert_null (backend);
}

static void
test_missing_script_file (void)
{
  g_autofree char *path = g_build_filename (g_get_user_config_dir (), "absent.json", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = sandbox_backend_new ("memory", NULL, &error,
                                                           "script-file", path, NULL);

  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "absent.json"));
  g_assert_null (backend);
}

static void
test_script_entries_come_before_file_entries (void)
{
  g_autofree char *path = memory_test_script_path ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autofree char *key = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxCommand) overridden = memory_test_command_new ("/usr/bin/cat", "hello.txt",
                                                                  NULL);
  g_autoptr(SandboxCommand) from_file = memory_test_command_new ("/usr/bin/false", NULL);
  g_autoptr(SandboxResult) first = NULL;
  g_autoptr(SandboxResult) second = NULL;
  g_autofree char *out = NULL;

  backend = sandbox_backend_new ("memory", NULL, &error,
                                 "script", "{\"commands\": [{\"match\": {\"executable\": "
                                           "\"/usr/bin/cat\"}, \"stdout\": \"from script\"}]}",
                                 "script-file", path,
                                 NULL);
  g_assert_no_error (error);
  key = memory_test_prewarm (backend);
  handle = memory_test_create (backend, key, NULL);

  first = sandbox_session_run (sandbox_handle_get_session (handle), overridden, NULL, &error);
  g_assert_no_error (error);
  out = sandbox_result_dup_stdout_text (first);
  g_assert_cmpstr (out, ==, "from script");

  second = sandbox_session_run (sandbox_handle_get_session (handle), from_file, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (second), ==, 1);

  memory_test_drain ();
}

static void
test_only_one_default (void)
{
  g_autofree char *path = memory_test_script_path ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;

  backend = sandbox_backend_new ("memory", NULL, &error,
                                 "script", "{\"default\": {\"exit\": 3}}",
                                 "script-file", path,
                                 NULL);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "“default” is declared by both"));
  g_assert_null (backend);
}

static void
test_base64_output_is_bytes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autofree char *key = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxCommand) command = memory_test_command_new ("/bin/bytes", NULL);
  g_autoptr(SandboxResult) result = NULL;
  gsize out_length = 0;
  const guint8 *out;

  backend = sandbox_backend_new ("memory", NULL, &error,
                                 "script", "{\"commands\": [{\"match\": {\"executable\": "
                                           "\"/bin/bytes\"}, \"stdout-base64\": \"AP8Q\", "
                                           "\"stderr-base64\": \"\"}]}",
                                 NULL);
  g_assert_no_error (error);
  key = memory_test_prewarm (backend);
  handle = memory_test_create (backend, key, NULL);

  result = sandbox_session_run (sandbox_handle_get_session (handle), command, NULL, &error);
  g_assert_no_error (error);
  out = g_bytes_get_data (sandbox_result_get_stdout_bytes (result), &out_length);
  g_assert_cmpmem (out, out_length, "\x00\xff\x10", 3);
  g_assert_cmpuint (g_bytes_get_size (sandbox_result_get_stderr_bytes (result)), ==, 0);

  memory_test_drain ();
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/memory/script/bad-scripts-name-the-member",
                   test_bad_scripts_name_the_member);
  g_test_add_func ("/sandbox/memory/script/script-file-errors-name-the-file",
                   test_script_file_errors_name_the_file);
  g_test_add_func ("/sandbox/memory/script/missing-script-file", test_missing_script_file);
  g_test_add_func ("/sandbox/memory/script/script-entries-come-before-file-entries",
                   test_script_entries_come_before_file_entries);
  g_test_add_func ("/sandbox/memory/script/only-one-default", test_only_one_default);
  g_test_add_func ("/sandbox/memory/script/base64-output-is-bytes", test_base64_output_is_bytes);

  return g_test_run ();
}
