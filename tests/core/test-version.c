/* test-version.c — the run-time version checks and the version macros
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <sandbox.h>

static void
test_runtime_version_is_the_compiled_one (void)
{
  g_autofree char *running = g_strdup_printf ("%u.%u.%u", sandbox_get_major_version (),
                                              sandbox_get_minor_version (),
                                              sandbox_get_micro_version ());

  g_assert_cmpuint (sandbox_get_major_version (), ==, SANDBOX_MAJOR_VERSION);
  g_assert_cmpuint (sandbox_get_minor_version (), ==, SANDBOX_MINOR_VERSION);
  g_assert_cmpuint (sandbox_get_micro_version (), ==, SANDBOX_MICRO_VERSION);
  g_assert_cmpstr (running, ==, SANDBOX_VERSION_S);
  g_assert_cmpstr (running, ==, PACKAGE_VERSION);
}

static void
test_check_version (void)
{
  guint major = SANDBOX_MAJOR_VERSION;
  guint minor = SANDBOX_MINOR_VERSION;
  guint micro = SANDBOX_MICRO_VERSION;

  g_assert_true (sandbox_check_version (major, minor, micro));
  g_assert_true (sandbox_check_version (0, 0, 0));
  if (micro > 0)
    g_assert_true (sandbox_check_version (major, minor, micro - 1));
  if (minor > 0)
    g_assert_true (sandbox_check_version (major, minor - 1, 999));
  if (major > 0)
    g_assert_true (sandbox_check_version (major - 1, 999, 999));

  g_assert_false (sandbox_check_version (major, minor, micro + 1));
  g_assert_false (sandbox_check_version (major, minor + 1, 0));
  g_assert_false (sandbox_check_version (major + 1, 0, 0));
  g_assert_false (sandbox_check_version (G_MAXUINT, 0, 0));

  /* The run-time check agrees with the compile-time macro. */
  g_assert_true (SANDBOX_CHECK_VERSION (0, 0, 0));
  g_assert_false (SANDBOX_CHECK_VERSION (SANDBOX_MAJOR_VERSION + 1, 0, 0));
}

static void
test_current_stable_is_this_version (void)
{
  /* SANDBOX_VERSION_CUR_STABLE is kept by hand: a release that forgets to
   * move it (and add its SANDBOX_VERSION_x_y block) fails here. */
  g_assert_cmpint (SANDBOX_VERSION_CUR_STABLE, ==,
                   SANDBOX_ENCODE_VERSION (SANDBOX_MAJOR_VERSION, SANDBOX_MINOR_VERSION));
  g_assert_cmpint (SANDBOX_VERSION_MIN_REQUIRED, ==, SANDBOX_VERSION_CUR_STABLE);
  g_assert_cmpint (SANDBOX_VERSION_MAX_ALLOWED, ==, SANDBOX_VERSION_CUR_STABLE);
  g_assert_cmpint (SANDBOX_VERSION_PREV_STABLE, <=, SANDBOX_VERSION_CUR_STABLE);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/version/runtime", test_runtime_version_is_the_compiled_one);
  g_test_add_func ("/version/check", test_check_version);
  g_test_add_func ("/version/current-stable", test_current_stable_is_this_version);

  return g_test_run ();
}
