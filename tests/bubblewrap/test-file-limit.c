/* test-file-limit.c — SandboxBackendBase:max-file-bytes, the bound on one workspace file
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A backend's max-file-bytes bounds the session's file operations both
 * ways, below and above the 1 MiB default: a write of exactly the bound
 * goes through and one byte more is SANDBOX_ERROR_LIMIT with the file left
 * as it was; a file a command made larger than the bound cannot be read;
 * a bound above the default lets a larger file through both ways; and the
 * coding tools' read_file says the session's bound. Against real
 * bubblewrap, and the memory driver (where applications meet it in
 * tests). To see it fail, make sandbox_driver_get_max_file_bytes() return
 * SANDBOX_MAX_FILE_BYTES: the small bound's write of 4097 bytes succeeds.
 */

#include <string.h>

#include <sandbox.h>

#include "sandbox-test-fixture.h"

#define SMALL 4096
#define LARGE (3 * 1024 * 1024)

static GBytes *
bytes_of (gsize size,
          char  fill)
{
  guint8 *data = g_malloc (size);

  memset (data, fill, size);
  return g_bytes_new_take (data, size);
}

static gboolean
authorize_cb (SandboxCodingTools     *tools,
              SandboxCodingOperation *operation,
              gpointer                data)
{
  return TRUE;
}

static void
set_up_with (SandboxTestFixture *f,
             const char         *driver,
             guint               max_bytes)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autofree char *bound = g_strdup_printf ("%u", max_bytes);

  sandbox_test_fixture_set_up (f, driver, template_, "max-file-bytes", bound, NULL);
  sandbox_test_fixture_open_session (f, NULL);
}

static void
assert_writes_up_to (SandboxTestFixture *f,
                     gsize               bound)
{
  g_autoptr(GBytes) exact = bytes_of (bound, 'a');
  g_autoptr(GBytes) over = bytes_of (bound + 1, 'b');
  g_autoptr(GBytes) read = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_write_bytes (f->session, "file", exact, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (sandbox_session_write_bytes (f->session, "file", over, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_clear_error (&error);

  read = sandbox_session_read_bytes (f->session, "file", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (read, exact));
}

static void
test_small_bound (SandboxTestFixture *f,
                  gconstpointer       data)
{
  const char *driver = data;
  g_autoptr(GError) error = NULL;

  set_up_with (f, driver, SMALL);
  g_assert_cmpuint (sandbox_driver_get_max_file_bytes (sandbox_session_get_driver (f->session)),
                    ==, SMALL);
  assert_writes_up_to (f, SMALL);

  if (g_str_equal (driver, "bubblewrap"))
    {
      const char *args[] = { "-c", "head -c 5000 /dev/zero > /workspace/made", NULL };
      g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sh");
      g_autoptr(SandboxResult) result = NULL;
      g_autoptr(GBytes) read = NULL;
      g_autoptr(SandboxCodingTools) tools = NULL;
      g_autofree char *answer = NULL;

      sandbox_command_set_args (command, args);
      result = sandbox_session_run (f->session, command, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
      read = sandbox_session_read_bytes (f->session, "made", NULL, &error);
      g_assert_null (read);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
      g_clear_error (&error);

      tools = sandbox_coding_tools_new (f->handle, &error);
      g_assert_no_error (error);
      g_signal_connect (tools, "authorize", G_CALLBACK (authorize_cb), NULL);
      answer = sandbox_coding_tools_invoke (tools, "read_file",
                                            "{\"path\": \"/workspace/made\"}", NULL, &error);
      g_assert_no_error (error);
      g_assert_nonnull (strstr (answer, "files are limited to 4096 bytes"));
    }
}

static void
test_large_bound (SandboxTestFixture *f,
                  gconstpointer       data)
{
  set_up_with (f, data, LARGE);
  assert_writes_up_to (f, LARGE);
}

static void
no_set_up (SandboxTestFixture *f,
           gconstpointer       data)
{
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/bubblewrap/file-limit/small", SandboxTestFixture, "bubblewrap",
              no_set_up, test_small_bound, sandbox_test_fixture_tear_down);
  g_test_add ("/bubblewrap/file-limit/large", SandboxTestFixture, "bubblewrap",
              no_set_up, test_large_bound, sandbox_test_fixture_tear_down);
  g_test_add ("/memory/file-limit/small", SandboxTestFixture, "memory",
              no_set_up, test_small_bound, sandbox_test_fixture_tear_down);
  g_test_add ("/memory/file-limit/large", SandboxTestFixture, "memory",
              no_set_up, test_large_bound, sandbox_test_fixture_tear_down);

  return g_test_run ();
}
