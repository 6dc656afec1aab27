/* test-result.c — SandboxResult
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-result.h"

static char *
stdout_text (const char *data,
             gsize       length)
{
  g_autoptr(GBytes) bytes = g_bytes_new (data, length);
  g_autoptr(SandboxResult) result = sandbox_result_new (0, bytes, NULL);

  return sandbox_result_dup_stdout_text (result);
}

static void
test_null_output_is_empty (void)
{
  g_autoptr(SandboxResult) result = sandbox_result_new (137, NULL, NULL);
  g_autofree char *out = sandbox_result_dup_stdout_text (result);
  g_autofree char *err = sandbox_result_dup_stderr_text (result);

  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 137);
  g_assert_nonnull (sandbox_result_get_stdout_bytes (result));
  g_assert_cmpuint (g_bytes_get_size (sandbox_result_get_stderr_bytes (result)), ==, 0);
  g_assert_cmpstr (out, ==, "");
  g_assert_cmpstr (err, ==, "");
}

static void
test_keeps_bytes (void)
{
  g_autoptr(GBytes) out = g_bytes_new ("\xff\x00o", 3);
  g_autoptr(GBytes) err = g_bytes_new ("e", 1);
  g_autoptr(SandboxResult) result = sandbox_result_new (1, out, err);

  g_assert_true (g_bytes_equal (sandbox_result_get_stdout_bytes (result), out));
  g_assert_true (g_bytes_equal (sandbox_result_get_stderr_bytes (result), err));
}

static void
test_text_drops_leading_bom (void)
{
  g_autofree char *text = stdout_text ("\xef\xbb\xbfhi\xef\xbb\xbf", 8);

  /* Only the leading mark goes, as with TextDecoder. */
  g_assert_cmpstr (text, ==, "hi\xef\xbb\xbf");
}

static void
test_text_replaces_invalid_utf8 (void)
{
  g_autofree char *lone = stdout_text ("a\xff" "b", 3);
  g_autofree char *truncated = stdout_text ("a\xe2\x82", 3);
  g_autofree char *surrogate = stdout_text ("\xed\xa0\x80", 3);
  g_autofree char *overlong = stdout_text ("\xc0\xaf", 2);
  g_autofree char *interrupted = stdout_text ("\xe2\x82" "x\xf0\x9f\x98\x80", 7);

  g_assert_cmpstr (lone, ==, "a\xef\xbf\xbd" "b");
  /* A truncated sequence is one error, not one per byte. */
  g_assert_cmpstr (truncated, ==, "a\xef\xbf\xbd");
  g_assert_cmpstr (surrogate, ==, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  g_assert_cmpstr (overlong, ==, "\xef\xbf\xbd\xef\xbf\xbd");
  g_assert_cmpstr (interrupted, ==, "\xef\xbf\xbdx\xf0\x9f\x98\x80");
}

static void
test_text_keeps_valid_utf8 (void)
{
  const char *valid = "héllo \xe2\x82\xac \xf4\x8f\xbf\xbf";
  g_autofree char *text = stdout_text (valid, strlen (valid));

  g_assert_cmpstr (text, ==, valid);
}

static void
test_text_keeps_nul (void)
{
  g_autofree char *text = stdout_text ("a\0b", 3);

  g_assert_cmpint (memcmp (text, "a\0b", 4), ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/result/null-output-is-empty", test_null_output_is_empty);
  g_test_add_func ("/sandbox/result/keeps-bytes", test_keeps_bytes);
  g_test_add_func ("/sandbox/result/text-drops-leading-bom", test_text_drops_leading_bom);
  g_test_add_func ("/sandbox/result/text-replaces-invalid-utf8", test_text_replaces_invalid_utf8);
  g_test_add_func ("/sandbox/result/text-keeps-valid-utf8", test_text_keeps_valid_utf8);
  g_test_add_func ("/sandbox/result/text-keeps-nul", test_text_keeps_nul);

  return g_test_run ();
}
