/* test-memory-files.c — workspace file operations of a session over the
 * memory driver
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "memory-test-common.h"

static void
assert_file_text (SandboxSession *session,
                  const char     *path,
                  const char     *expected)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = sandbox_session_read_text (session, path, NULL, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, expected);
}

static void
assert_file_missing (SandboxSession *session,
                     const char     *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) contents = sandbox_session_read_bytes (session, path, NULL, &error);

  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_null (contents);
}

static void
test_read_template_file (MemoryFixture *fixture,
                         gconstpointer  data)
{
  assert_file_text (fixture->session, "hello.txt", "hello");
  assert_file_text (fixture->session, "/workspace/docs/readme.md", "# readme\n");
}

static void
test_write_then_read_bytes (MemoryFixture *fixture,
                            gconstpointer  data)
{
  static const guint8 binary[] = { 0x00, 0xff, 0x10, 0x00, 0x7f };
  g_autoptr(GBytes) contents = g_bytes_new_static (binary, sizeof binary);
  g_autoptr(GBytes) read = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_write_bytes (fixture->session, "bin/data", contents, NULL, &error));
  g_assert_no_error (error);

  read = sandbox_session_read_bytes (fixture->session, "/workspace/bin/data", NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (read, contents));
}

static void
test_write_then_read_bytes_async (MemoryFixture *fixture,
                                  gconstpointer  data)
{
  g_autoptr(GBytes) contents = g_bytes_new_static ("async bytes", 11);
  g_autoptr(GAsyncResult) written = NULL;
  g_autoptr(GAsyncResult) read_result = NULL;
  g_autoptr(GBytes) read = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_session_write_bytes_async (fixture->session, "async.bin", contents, NULL,
                                     memory_test_store_result, &written);
  g_assert_true (sandbox_session_write_bytes_finish (fixture->session,
                                                     memory_test_await (&written), &error));
  g_assert_no_error (error);

  sandbox_session_read_bytes_async (fixture->session, "async.bin", NULL,
                                    memory_test_store_result, &read_result);
  read = sandbox_session_read_bytes_finish (fixture->session, memory_test_await (&read_result),
                                            &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (read, contents));
}

static void
test_write_then_read_text_async (MemoryFixture *fixture,
                                 gconstpointer  data)
{
  g_autoptr(GAsyncResult) written = NULL;
  g_autoptr(GAsyncResult) read_result = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_session_write_text_async (fixture->session, "notes/ünïcode.txt", "grüße ✓\n", NULL,
                                    memory_test_store_result, &written);
  g_assert_true (sandbox_session_write_text_finish (fixture->session,
                                                    memory_test_await (&written), &error));
  g_assert_no_error (error);

  sandbox_session_read_text_async (fixture->session, "notes/ünïcode.txt", NULL,
                                   memory_test_store_result, &read_result);
  text = sandbox_session_read_text_finish (fixture->session, memory_test_await (&read_result),
                                           &error);
  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, "grüße ✓\n");
}

static void
test_write_replaces_file (MemoryFixture *fixture,
                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_write_text (fixture->session, "hello.txt", "bye", NULL, &error));
  g_assert_no_error (error);
  assert_file_text (fixture->session, "hello.txt", "bye");
}

static void
test_read_text_drops_bom (MemoryFixture *fixture,
                          gconstpointer  data)
{
  g_autoptr(GBytes) contents = g_bytes_new_static ("\xEF\xBB\xBFtext", 7);
  g_autoptr(GError) error = NULL;

  sandbox_session_write_bytes (fixture->session, "bom.txt", contents, NULL, &error);
  g_assert_no_error (error);
  assert_file_text (fixture->session, "bom.txt", "text");
}

static void
test_read_text_rejects_invalid_utf8 (MemoryFixture *fixture,
                                     gconstpointer  data)
{
  g_autoptr(GBytes) contents = g_bytes_new_static ("ok\xff", 3);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  sandbox_session_write_bytes (fixture->session, "latin1.txt", contents, NULL, &error);
  g_assert_no_error (error);

  text = sandbox_session_read_text (fixture->session, "latin1.txt", NULL, &error);
  g_assert_error (error, G_CONVERT_ERROR, G_CONVERT_ERROR_ILLEGAL_SEQUENCE);
  g_assert_null (text);
}

static void
test_read_missing_file (MemoryFixture *fixture,
                        gconstpointer  data)
{
  assert_file_missing (fixture->session, "missing.txt");
  assert_file_missing (fixture->session, "docs/missing/deeper.txt");
}

static void
test_read_directory (MemoryFixture *fixture,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) root_error = NULL;
  g_autoptr(GBytes) contents = sandbox_session_read_bytes (fixture->session, "docs", NULL, &error);
  g_autoptr(GBytes) root = sandbox_session_read_bytes (fixture->session, "/workspace", NULL,
                                                       &root_error);

  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  g_assert_null (contents);
  g_assert_error (root_error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  g_assert_null (root);
}

static void
test_read_below_file (MemoryFixture *fixture,
                      gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) contents = sandbox_session_read_bytes (fixture->session, "hello.txt/x",
                                                           NULL, &error);

  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
  g_assert_null (contents);
}

static void
test_write_creates_parents (MemoryFixture *fixture,
                            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) parent = NULL;

  g_assert_true (sandbox_session_write_text (fixture->session, "a/b/c/file.txt", "deep", NULL,
                                             &error));
  g_assert_no_error (error);
  assert_file_text (fixture->session, "a/b/c/file.txt", "deep");

  parent = sandbox_session_read_bytes (fixture->session, "a/b", NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
}

static void
test_write_over_directory (MemoryFixture *fixture,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (sandbox_session_write_text (fixture->session, "docs", "x", NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY);
  assert_file_text (fixture->session, "docs/readme.md", "# readme\n");
}

static void
test_write_below_file (MemoryFixture *fixture,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (sandbox_session_write_text (fixture->session, "hello.txt/inner/x", "x", NULL,
                                              &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY);
  assert_file_text (fixture->session, "hello.txt", "hello");
}

static void
test_write_limit (MemoryFixture *fixture,
                  gconstpointer  data)
{
  g_autofree guint8 *buffer = g_malloc0 (SANDBOX_MAX_FILE_BYTES + 1);
  g_autoptr(GBytes) largest = g_bytes_new_static (buffer, SANDBOX_MAX_FILE_BYTES);
  g_autoptr(GBytes) too_large = g_bytes_new_static (buffer, SANDBOX_MAX_FILE_BYTES + 1);
  g_autoptr(GBytes) read = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_write_bytes (fixture->session, "max.bin", largest, NULL, &error));
  g_assert_no_error (error);
  read = sandbox_session_read_bytes (fixture->session, "max.bin", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (read), ==, SANDBOX_MAX_FILE_BYTES);

  g_assert_false (sandbox_session_write_bytes (fixture->session, "big.bin", too_large, NULL,
                                               &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox file write limit exceeded");
  assert_file_missing (fixture->session, "big.bin");
}

static void
test_read_limit (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("large");
  g_autofree guint8 *buffer = g_malloc0 (SANDBOX_MAX_FILE_BYTES + 1);
  g_autoptr(GBytes) too_large = g_bytes_new_static (buffer, SANDBOX_MAX_FILE_BYTES + 1);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GBytes) read = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;

  /* Templates are snapshots of host files and may hold more than a file
   * operation may move. */
  sandbox_template_add_file (template_, "large.bin", too_large, &error);
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  handle = memory_test_create (backend, key, NULL);

  read = sandbox_session_read_bytes (sandbox_handle_get_session (handle), "large.bin", NULL,
                                     &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox file read limit exceeded");
  g_assert_null (read);
}

static void
test_remove_file (MemoryFixture *fixture,
                  gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_remove_path (fixture->session, "hello.txt", NULL, &error));
  g_assert_no_error (error);
  assert_file_missing (fixture->session, "hello.txt");
  assert_file_text (fixture->session, "docs/readme.md", "# readme\n");
}

static void
test_remove_directory_recursively (MemoryFixture *fixture,
                                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  sandbox_session_write_text (fixture->session, "docs/deep/er/file.txt", "x", NULL, &error);
  g_assert_no_error (error);
  sandbox_session_write_text (fixture->session, "docs-sibling.txt", "kept", NULL, &error);
  g_assert_no_error (error);

  g_assert_true (sandbox_session_remove_path (fixture->session, "docs", NULL, &error));
  g_assert_no_error (error);

  assert_file_missing (fixture->session, "docs/readme.md");
  assert_file_missing (fixture->session, "docs/deep/er/file.txt");
  assert_file_missing (fixture->session, "docs");
  assert_file_text (fixture->session, "docs-sibling.txt", "kept");
}

static void
test_remove_missing_is_fine (MemoryFixture *fixture,
                             gconstpointer  data)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_remove_path (fixture->session, "never/was", NULL, &error));
  g_assert_no_error (error);

  sandbox_session_remove_path_async (fixture->session, "hello.txt", NULL,
                                     memory_test_store_result, &result);
  g_assert_true (sandbox_session_remove_path_finish (fixture->session,
                                                     memory_test_await (&result), &error));
  g_assert_no_error (error);
  assert_file_missing (fixture->session, "hello.txt");
}

static void
test_remove_root_refused (MemoryFixture *fixture,
                          gconstpointer  data)
{
  const char *roots[] = { "/workspace", "." };

  for (guint i = 0; i < G_N_ELEMENTS (roots); i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_false (sandbox_session_remove_path (fixture->session, roots[i], NULL, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
      g_assert_cmpstr (error->message, ==, "Cannot remove the workspace root");
    }

  assert_file_text (fixture->session, "hello.txt", "hello");
}

static void
test_non_canonical_paths_refused (MemoryFixture *fixture,
                                  gconstpointer  data)
{
  const char *paths[] = {
    "../etc/passwd", "/etc/passwd", "docs/../hello.txt", "./hello.txt", "docs//readme.md",
    "docs\\readme.md", "", "/workspace/",
  };
  g_autoptr(GBytes) contents = g_bytes_new_static ("x", 1);

  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      g_autoptr(GError) read_error = NULL;
      g_autoptr(GError) write_error = NULL;
      g_autoptr(GError) remove_error = NULL;
      g_autoptr(GBytes) read = NULL;

      read = sandbox_session_read_bytes (fixture->session, paths[i], NULL, &read_error);
      g_assert_error (read_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
      g_assert_false (sandbox_session_write_bytes (fixture->session, paths[i], contents, NULL,
                                                   &write_error));
      g_assert_error (write_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
      g_assert_false (sandbox_session_remove_path (fixture->session, paths[i], NULL,
                                                   &remove_error));
      g_assert_error (remove_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
    }
}

static void
test_driver_checks_paths_itself (MemoryFixture *fixture,
                                 gconstpointer  data)
{
  SandboxDriver *driver = sandbox_session_get_driver (fixture->session);
  g_autoptr(GBytes) contents = g_bytes_new_static ("x", 1);
  g_autoptr(GError) read_error = NULL;
  g_autoptr(GError) write_error = NULL;
  g_autoptr(GError) root_error = NULL;
  g_autoptr(GBytes) read = NULL;

  /* The driver is public: a caller that skips the session gets no further. */
  read = sandbox_driver_read_bytes (driver, "/workspace/../etc/passwd", NULL, &read_error);
  g_assert_error (read_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_null (read);
  g_assert_false (sandbox_driver_write_bytes (driver, "/etc/passwd", contents, NULL,
                                              &write_error));
  g_assert_error (write_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);

  g_assert_false (sandbox_driver_remove_path (driver, SANDBOX_WORKSPACE, NULL, &root_error));
  g_assert_error (root_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_cmpstr (root_error->message, ==, "Cannot remove the workspace root");
  assert_file_text (fixture->session, "hello.txt", "hello");
}

static void
test_cancelled_operations (MemoryFixture *fixture,
                           gconstpointer  data)
{
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GBytes) contents = g_bytes_new_static ("x", 1);
  g_autoptr(GError) read_error = NULL;
  g_autoptr(GError) write_error = NULL;
  g_autoptr(GBytes) read = NULL;

  g_cancellable_cancel (cancellable);

  read = sandbox_session_read_bytes (fixture->session, "hello.txt", cancellable, &read_error);
  g_assert_error (read_error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (sandbox_session_write_bytes (fixture->session, "new.txt", contents,
                                               cancellable, &write_error));
  g_assert_error (write_error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  assert_file_missing (fixture->session, "new.txt");
}

static void
test_template_conflict_refused (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (1);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("conflict");
  g_autoptr(GBytes) contents = g_bytes_new_static ("x", 1);
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;

  /* "a" cannot be both a file and the directory holding "a/b": the
   * template refuses "a/b" (issue 14), so prewarm never meets the clash. */
  sandbox_template_add_file (template_, "a", contents, &error);
  g_assert_no_error (error);
  sandbox_template_add_file (template_, "a/b", contents, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (key);
}

static void
test_sessions_do_not_share_files (MemoryFixture *fixture,
                                  gconstpointer  data)
{
  g_autoptr(SandboxHandle) other = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_session_write_text (fixture->session, "hello.txt", "changed", NULL, &error);
  g_assert_no_error (error);

  /* A new session starts from the template, not from another session. */
  other = memory_test_create (fixture->backend, fixture->template_key, NULL);
  assert_file_text (sandbox_handle_get_session (other), "hello.txt", "hello");
  assert_file_text (fixture->session, "hello.txt", "changed");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define ADD(path, func) \
  g_test_add ("/sandbox/memory/files/" path, MemoryFixture, NULL, \
              memory_fixture_set_up, func, memory_fixture_tear_down)

  ADD ("read-template-file", test_read_template_file);
  ADD ("write-then-read-bytes", test_write_then_read_bytes);
  ADD ("write-then-read-bytes-async", test_write_then_read_bytes_async);
  ADD ("write-then-read-text-async", test_write_then_read_text_async);
  ADD ("write-replaces-file", test_write_replaces_file);
  ADD ("read-text-drops-bom", test_read_text_drops_bom);
  ADD ("read-text-rejects-invalid-utf8", test_read_text_rejects_invalid_utf8);
  ADD ("read-missing-file", test_read_missing_file);
  ADD ("read-directory", test_read_directory);
  ADD ("read-below-file", test_read_below_file);
  ADD ("write-creates-parents", test_write_creates_parents);
  ADD ("write-over-directory", test_write_over_directory);
  ADD ("write-below-file", test_write_below_file);
  ADD ("write-limit", test_write_limit);
  ADD ("remove-file", test_remove_file);
  ADD ("remove-directory-recursively", test_remove_directory_recursively);
  ADD ("remove-missing-is-fine", test_remove_missing_is_fine);
  ADD ("remove-root-refused", test_remove_root_refused);
  ADD ("non-canonical-paths-refused", test_non_canonical_paths_refused);
  ADD ("driver-checks-paths-itself", test_driver_checks_paths_itself);
  ADD ("cancelled-operations", test_cancelled_operations);
  ADD ("sessions-do-not-share-files", test_sessions_do_not_share_files);
#undef ADD

  g_test_add_func ("/sandbox/memory/files/read-limit", test_read_limit);
  g_test_add_func ("/sandbox/memory/files/template-conflict-refused",
                   test_template_conflict_refused);

  return g_test_run ();
}
