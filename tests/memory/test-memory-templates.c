/* test-memory-templates.c — what a template keeps, over the memory driver
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The memory driver holds a template as the bubblewrap driver does:
 * executables stay executable (a workspace executable without its execute
 * bit could not be executed, as data in the result, whatever the script
 * says), symbolic
 * links are links (followed while they stay in the workspace, refused when
 * they lead out, replaced rather than written through), and empty
 * directories exist.
 */

#include <errno.h>
#include <string.h>

#include "memory-test-common.h"

static const char script[] =
  "{\"commands\": ["
  "  {\"match\": {\"executable\": \"./configure\"}, \"stdout\": \"configured\\n\"},"
  "  {\"match\": {\"executable\": \"./plain.sh\"}, \"stdout\": \"ran\\n\"},"
  "  {\"match\": {\"executable\": \"node_modules/.bin/x\"}, \"stdout\": \"x\\n\"},"
  "  {\"match\": {\"executable\": \"/workspace/build\"}, \"stdout\": \"dir\\n\"},"
  "  {\"match\": {\"executable\": \"./gone\"}, \"stdout\": \"never\\n\"},"
  "  {\"match\": {\"executable\": \"./README/x\"}, \"stdout\": \"never\\n\"},"
  "  {\"match\": {\"executable\": \"/usr/bin/forger\"}, \"exit\": 127,"
  "   \"stderr\": \"bwrap: execvp /usr/bin/forger: No such file or directory\\n\"}"
  "]}";

typedef struct
{
  SandboxBackend *backend;
  SandboxHandle *handle;
  SandboxSession *session;
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("checkout");
  g_autoptr(GBytes) configure = g_bytes_new_static ("#!/bin/sh\n", 10);
  g_autoptr(GBytes) readme = g_bytes_new_static ("read me\n", 8);
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;

  fixture->backend = sandbox_backend_new ("memory", NULL, &error, "script", script, NULL);
  g_assert_no_error (error);
  g_assert_true (sandbox_template_add_file_full (template_, "configure", configure,
                                                 SANDBOX_TEMPLATE_FILE_EXECUTABLE, &error));
  g_assert_true (sandbox_template_add_file (template_, "plain.sh", configure, &error));
  g_assert_true (sandbox_template_add_file (template_, "README", readme, &error));
  g_assert_true (sandbox_template_add_file_full (template_, "node_modules/x/bin/x.js", configure,
                                                 SANDBOX_TEMPLATE_FILE_EXECUTABLE, &error));
  g_assert_true (sandbox_template_add_symlink (template_, "node_modules/.bin/x", "../x/bin/x.js",
                                               &error));
  g_assert_true (sandbox_template_add_symlink (template_, "docs/readme", "../README", &error));
  g_assert_true (sandbox_template_add_symlink (template_, "shadow", "/etc/shadow", &error));
  g_assert_true (sandbox_template_add_symlink (template_, "climb", "../../etc/passwd", &error));
  g_assert_true (sandbox_template_add_symlink (template_, "loop", "loop", &error));
  g_assert_true (sandbox_template_add_empty_directory (template_, "build", &error));
  g_assert_no_error (error);

  key = sandbox_backend_prewarm (fixture->backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  fixture->handle = memory_test_create (fixture->backend, key, NULL);
  fixture->session = sandbox_handle_get_session (fixture->handle);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  sandbox_handle_delete (fixture->handle, NULL, &error);
  g_assert_no_error (error);
  g_clear_object (&fixture->handle);
  g_clear_object (&fixture->backend);
}

static SandboxResult *
run (Fixture    *fixture,
     const char *executable)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new (executable);
  g_autoptr(GError) error = NULL;
  SandboxResult *result = sandbox_session_run (fixture->session, command, NULL, &error);

  g_assert_no_error (error);
  return result;
}

static void
assert_runs (Fixture    *fixture,
             const char *executable,
             int         status,
             const char *out,
             const char *err)
{
  g_autoptr(SandboxResult) result = run (fixture, executable);
  g_autofree char *stdout_text = sandbox_result_dup_stdout_text (result);
  g_autofree char *stderr_text = sandbox_result_dup_stderr_text (result);

  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, status);
  g_assert_cmpstr (stdout_text, ==, out);
  g_assert_cmpstr (stderr_text, ==, err);
}

/* @executable could not be executed, with @exec_errno (and the error
 * @code from sandbox_result_check_executed()), a shell's @status and no
 * output. */
static void
assert_exec_fails (Fixture    *fixture,
                   const char *executable,
                   int         exec_errno,
                   int         code,
                   int         status)
{
  g_autoptr(SandboxResult) result = run (fixture, executable);
  g_autoptr(GError) error = NULL;
  int property = 0;

  g_test_message ("%s", executable);
  g_assert_cmpint (sandbox_result_get_exec_errno (result), ==, exec_errno);
  g_object_get (result, "exec-errno", &property, NULL);
  g_assert_cmpint (property, ==, exec_errno);
  g_assert_false (sandbox_result_check_executed (result, &error));
  g_assert_error (error, G_IO_ERROR, code);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, status);
  g_assert_cmpuint (g_bytes_get_size (sandbox_result_get_stdout_bytes (result)), ==, 0);
  g_assert_cmpuint (g_bytes_get_size (sandbox_result_get_stderr_bytes (result)), ==, 0);
}

/* The execute bit is what decides, as in the guest. Make lookup_rule()
 * skip the workspace check and ./plain.sh answers "ran". */
static void
test_executable_bit_decides (Fixture       *fixture,
                             gconstpointer  data)
{
  assert_runs (fixture, "./configure", 0, "configured\n", "");
  assert_runs (fixture, "node_modules/.bin/x", 0, "x\n", "");
  assert_exec_fails (fixture, "./plain.sh", EACCES, G_IO_ERROR_PERMISSION_DENIED, 126);
  assert_exec_fails (fixture, "/workspace/build", EACCES, G_IO_ERROR_PERMISSION_DENIED, 126);
  assert_exec_fails (fixture, "./gone", ENOENT, G_IO_ERROR_NOT_FOUND, 127);
  assert_exec_fails (fixture, "./README/x", ENOTDIR, G_IO_ERROR_NOT_DIRECTORY, 127);
}

/* A command that ran is no exec failure, whatever it prints or exits with:
 * here one that exits 127 with what a failed exec used to print. */
static void
test_exit_127_is_not_exec_failure (Fixture       *fixture,
                                   gconstpointer  data)
{
  g_autoptr(SandboxResult) result = run (fixture, "/usr/bin/forger");
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 127);
  g_assert_cmpint (sandbox_result_get_exec_errno (result), ==, 0);
  g_assert_true (sandbox_result_check_executed (result, &error));
  g_assert_no_error (error);
}

static void
assert_read_fails (Fixture    *fixture,
                   const char *path,
                   GQuark      domain,
                   int         code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) contents = sandbox_session_read_bytes (fixture->session, path, NULL, &error);

  g_assert_error (error, domain, code);
  g_assert_null (contents);
}

/* Links are followed while they stay inside, like the bubblewrap driver's
 * RESOLVE_BENEATH: an absolute link, one that climbs out and a loop are
 * SANDBOX_ERROR_PATH. */
static void
test_links_resolve_inside (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = sandbox_session_read_text (fixture->session, "docs/readme", NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "read me\n");
  assert_read_fails (fixture, "shadow", SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  assert_read_fails (fixture, "climb", SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  assert_read_fails (fixture, "loop", SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  assert_read_fails (fixture, "build", G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
}

/* A write at a link replaces the link, never the file it points to; a
 * removal removes the link only. */
static void
test_writes_replace_links (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(GBytes) contents = g_bytes_new_static ("new", 3);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *readme = NULL;

  g_assert_true (sandbox_session_write_bytes (fixture->session, "docs/readme", contents, NULL,
                                              &error));
  g_assert_no_error (error);
  text = sandbox_session_read_text (fixture->session, "docs/readme", NULL, &error);
  readme = sandbox_session_read_text (fixture->session, "README", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "new");
  g_assert_cmpstr (readme, ==, "read me\n");

  g_assert_true (sandbox_session_remove_path (fixture->session, "node_modules/.bin/x", NULL,
                                              &error));
  g_assert_no_error (error);
  g_clear_pointer (&text, g_free);
  text = sandbox_session_read_text (fixture->session, "node_modules/x/bin/x.js", NULL, &error);
  g_assert_no_error (error);
  assert_read_fails (fixture, "node_modules/.bin/x", G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
}

/* The store lists the template with its name. */
static void
test_listing_names_template (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) templates = sandbox_backend_list_templates (fixture->backend, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpuint (templates->len, ==, 1);
  g_assert_cmpstr (sandbox_template_info_get_name (templates->pdata[0]), ==, "checkout");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/sandbox/memory/templates/" path, Fixture, NULL, fixture_set_up, func, \
              fixture_tear_down)
  ADD ("executable-bit-decides", test_executable_bit_decides);
  ADD ("exit-127-is-not-exec-failure", test_exit_127_is_not_exec_failure);
  ADD ("links-resolve-inside", test_links_resolve_inside);
  ADD ("writes-replace-links", test_writes_replace_links);
  ADD ("listing-names-template", test_listing_names_template);
#undef ADD

  return g_test_run ();
}
