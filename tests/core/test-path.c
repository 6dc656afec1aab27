/* test-path.c — canonical workspace paths
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-path.h"

static void
assert_canonical (const char *path,
                  const char *expected)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *canonical = sandbox_path_canonicalize (path, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (canonical, ==, expected);
}

static void
assert_refused (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *canonical = sandbox_path_canonicalize (path, &error);

  if (canonical != NULL)
    g_error ("“%s” was accepted as “%s”", path, canonical);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_true (g_str_has_prefix (error->message, "Expected a canonical workspace-relative path"));
}

static void
test_accepts_workspace_root (void)
{
  assert_canonical ("/workspace", "/workspace");
  assert_canonical (".", "/workspace");
}

static void
test_accepts_relative_paths (void)
{
  assert_canonical ("a", "/workspace/a");
  assert_canonical ("a/b.txt", "/workspace/a/b.txt");
  assert_canonical (".hidden/x", "/workspace/.hidden/x");
  assert_canonical ("...", "/workspace/...");
  assert_canonical ("dir/ü.txt", "/workspace/dir/ü.txt");
  assert_canonical ("workspace", "/workspace/workspace");
}

static void
test_strips_workspace_prefix (void)
{
  assert_canonical ("/workspace/a", "/workspace/a");
  assert_canonical ("/workspace/a/b", "/workspace/a/b");
  assert_canonical ("/workspace/workspace", "/workspace/workspace");
}

static void
test_refuses_empty_segments (void)
{
  assert_refused ("");
  assert_refused ("/workspace/");
  assert_refused ("a//b");
  assert_refused ("a/");
  assert_refused ("/workspace//a");
}

static void
test_refuses_dot_segments (void)
{
  assert_refused ("..");
  assert_refused ("a/..");
  assert_refused ("../a");
  assert_refused ("a/./b");
  assert_refused ("./a");
  assert_refused ("/workspace/..");
  assert_refused ("/workspace/.");
  assert_refused ("/workspace/a/../../etc");
}

static void
test_refuses_absolute_paths (void)
{
  assert_refused ("/etc/passwd");
  assert_refused ("/");
  assert_refused ("/workspacefoo");
  assert_refused ("/workspace/../etc");
  assert_refused ("//workspace/a");
}

static void
test_refuses_backslashes (void)
{
  assert_refused ("a\\b");
  assert_refused ("\\");
  assert_refused ("..\\a");
}

static void
test_refuses_invalid_utf8 (void)
{
  assert_refused ("a\xff");
  assert_refused ("\xc0\xae\xc0\xae");
}

static void
test_relative_of_root_is_dot (void)
{
  g_assert_cmpstr (sandbox_path_relative ("/workspace"), ==, ".");
}

static void
test_relative_strips_prefix (void)
{
  g_autofree char *canonical = sandbox_path_canonicalize ("a/b", NULL);

  g_assert_cmpstr (sandbox_path_relative (canonical), ==, "a/b");
  g_assert_true (sandbox_path_relative (canonical) == canonical + strlen ("/workspace/"));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/path/accepts-workspace-root", test_accepts_workspace_root);
  g_test_add_func ("/sandbox/path/accepts-relative-paths", test_accepts_relative_paths);
  g_test_add_func ("/sandbox/path/strips-workspace-prefix", test_strips_workspace_prefix);
  g_test_add_func ("/sandbox/path/refuses-empty-segments", test_refuses_empty_segments);
  g_test_add_func ("/sandbox/path/refuses-dot-segments", test_refuses_dot_segments);
  g_test_add_func ("/sandbox/path/refuses-absolute-paths", test_refuses_absolute_paths);
  g_test_add_func ("/sandbox/path/refuses-backslashes", test_refuses_backslashes);
  g_test_add_func ("/sandbox/path/refuses-invalid-utf8", test_refuses_invalid_utf8);
  g_test_add_func ("/sandbox/path/relative-of-root-is-dot", test_relative_of_root_is_dot);
  g_test_add_func ("/sandbox/path/relative-strips-prefix", test_relative_strips_prefix);

  return g_test_run ();
}
