/* sandbox-test-runtime.c — the runtimes the tests build once per build directory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "sandbox-test-runtime.h"

/**
 * sandbox_test_runtime_path:
 * @name: a runtime tests/bubblewrap/with-test-runtime.sh (or its kin) made
 *   in the build directory's tests/runtime-cache, e.g. "busybox"
 *
 * Finds it beside the running test's own directory (a suite's directory
 * in the build tree's tests/). Stops the test when it is not there: the
 * test was not run through meson, which makes it first.
 *
 * Returns: (transfer full): its path
 */
char *
sandbox_test_runtime_path (const char *name)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *directory = NULL;
  char *path;

  g_assert_nonnull (self);
  directory = g_path_get_dirname (self);
  path = g_build_filename (directory, "..", "runtime-cache", name, NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    g_error ("No test runtime at %s: run this test through meson, which makes it", path);
  return path;
}

/**
 * sandbox_test_import_runtime:
 * @backend: a backend that stores runtimes
 * @path: the runtime's root file system
 * @reused: (out) (optional): whether it was stored already
 *
 * Returns: (transfer full): the runtime's key; fails the test otherwise
 */
char *
sandbox_test_import_runtime (SandboxBackend *backend,
                             const char     *path,
                             gboolean       *reused)
{
  g_autoptr(GFile) source = g_file_new_for_path (path);
  g_autoptr(GError) error = NULL;
  char *key = sandbox_backend_import_runtime (backend, source, reused, NULL, &error);

  g_assert_no_error (error);
  g_assert_true (sandbox_template_key_is_valid (key));
  return key;
}

/**
 * sandbox_test_find_runtime:
 * @backend: a backend that stores runtimes
 * @key: a runtime's key
 *
 * Returns: (transfer full) (nullable): what @backend lists for @key, or
 *   %NULL when it does not list it
 */
SandboxRuntimeInfo *
sandbox_test_find_runtime (SandboxBackend *backend,
                           const char     *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) runtimes = sandbox_backend_list_runtimes (backend, NULL, &error);

  g_assert_no_error (error);
  for (guint i = 0; i < runtimes->len; i++)
    if (g_str_equal (sandbox_runtime_info_get_key (runtimes->pdata[i]), key))
      return g_object_ref (runtimes->pdata[i]);
  return NULL;
}
