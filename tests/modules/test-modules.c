/* test-modules.c — finding and loading driver modules
 *
 * The extension-point registry is process-global and loads once, so every
 * test runs in a subprocess with its own SANDBOX_DRIVER_PATH.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include <glib/gstdio.h>
#include <sandbox.h>

static char *
module_dir (const char *name)
{
  return g_test_build_filename (G_TEST_BUILT, "modules", name, NULL);
}

static void
use_driver_path (const char *first, ...)
{
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *path = NULL;
  const char *dir;
  va_list args;

  va_start (args, first);
  for (dir = first; dir != NULL; dir = va_arg (args, const char *))
    g_ptr_array_add (dirs, g_strdup (dir));
  va_end (args);
  g_ptr_array_add (dirs, NULL);

  path = g_strjoinv (":", (char **) dirs->pdata);
  g_setenv ("SANDBOX_DRIVER_PATH", path, TRUE);
}

static void
test_two_modules_found (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *alpha = module_dir ("alpha");
      g_autofree char *beta = module_dir ("beta");
      g_auto(GStrv) drivers = NULL;
      g_autoptr(SandboxBackend) backend = NULL;
      g_autoptr(GError) error = NULL;

      /* beta's directory comes first, yet the list is sorted by name */
      use_driver_path (beta, alpha, NULL);
      drivers = sandbox_list_drivers ();
      g_assert_cmpuint (g_strv_length (drivers), >=, 2);
      g_assert_true (g_strv_contains ((const char * const *) drivers, "alpha"));
      g_assert_true (g_strv_contains ((const char * const *) drivers, "beta"));
      for (guint i = 1; drivers[i] != NULL; i++)
        g_assert_cmpstr (drivers[i - 1], <, drivers[i]);

      backend = sandbox_backend_new ("beta", NULL, &error, NULL);
      g_assert_no_error (error);
      g_assert_cmpstr (G_OBJECT_TYPE_NAME (backend), ==, "TestBackend_beta");
      g_assert_true (sandbox_lookup_driver ("beta", &error) == G_OBJECT_TYPE (backend));
      g_assert_no_error (error);
      g_assert_true (g_type_is_a (sandbox_lookup_driver ("alpha", NULL), SANDBOX_TYPE_BACKEND));
      g_assert_cmpstr (sandbox_backend_get_name (backend), ==, "beta");
      g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (backend), ==,
                        SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_properties_reach_the_driver (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *alpha = module_dir ("alpha");
      g_autoptr(SandboxBackend) backend = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *state = NULL;

      use_driver_path (alpha, NULL);
      backend = sandbox_backend_new ("alpha", NULL, &error,
                                     "name", "custom",
                                     "state-directory", "/tmp/x",
                                     "max-concurrent-commands", 3,
                                     NULL);
      g_assert_no_error (error);
      g_assert_cmpstr (sandbox_backend_get_name (backend), ==, "custom");
      state = sandbox_backend_dup_state_directory (backend);
      g_assert_cmpstr (state, ==, "/tmp/x");
      g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (backend), ==, 3);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_unknown_driver_is_unavailable (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *alpha = module_dir ("alpha");
      g_autoptr(SandboxBackend) backend = NULL;
      g_autoptr(GError) error = NULL;
      g_autoptr(GError) lookup_error = NULL;

      use_driver_path (alpha, NULL);
      backend = sandbox_backend_new ("no-such-driver", NULL, &error, NULL);
      g_assert_null (backend);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message, "no-such-driver"));
      g_assert_nonnull (strstr (error->message, alpha));

      /* The lookup tools use before creating a backend says the same. */
      g_assert_true (sandbox_lookup_driver ("no-such-driver", &lookup_error) == G_TYPE_INVALID);
      g_assert_error (lookup_error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
      g_assert_cmpstr (lookup_error->message, ==, error->message);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_broken_module_is_reported (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *dir = g_dir_make_tmp ("sandbox-modules-XXXXXX", NULL);
      g_autofree char *broken = g_build_filename (dir, "libbroken.so", NULL);
      g_autofree char *alpha = module_dir ("alpha");
      g_autoptr(SandboxBackend) backend = NULL;
      g_autoptr(GError) error = NULL;
      g_auto(GStrv) drivers = NULL;

      g_assert_true (g_file_set_contents (broken, "not an ELF file", -1, NULL));
      use_driver_path (dir, alpha, NULL);

      /* A broken module does not stop the others from loading… */
      drivers = sandbox_list_drivers ();
      g_assert_true (g_strv_contains ((const char * const *) drivers, "alpha"));

      /* …and is named when a driver can't be found. */
      backend = sandbox_backend_new ("broken", NULL, &error, NULL);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message, "libbroken.so"));

      g_unlink (broken);
      g_rmdir (dir);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr_unmatched ("*CRITICAL*");
}

static void
test_bad_configuration_is_invalid (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *alpha = module_dir ("alpha");
      g_autoptr(GError) error = NULL;
      SandboxBackend *backend;

      use_driver_path (alpha, NULL);
      backend = sandbox_backend_new ("alpha", NULL, &error, "max-concurrent-commands", 0, NULL);
      g_assert_null (backend);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_clear_error (&error);

      backend = sandbox_backend_new ("alpha", NULL, &error, "max-concurrent-commands", 1025, NULL);
      g_assert_null (backend);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

/* A driver built on another (tests/modules/wrapper over alpha) takes the
 * inner driver's properties as `alpha.NAME`, through newv(), new() and
 * parse_property(); they reach the inner backend. One naming a property
 * the wrapper sets itself, one the inner driver lacks, and another
 * driver's prefix are refused with an error naming them, never a warning. */
static void
test_inner_driver_properties (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *alpha = module_dir ("alpha");
      g_autofree char *wrapper = module_dir ("wrapper");
      g_autoptr(GError) error = NULL;
      g_autoptr(SandboxBackend) backend = NULL;
      const char *names[] = { "alpha.max-concurrent-commands" };
      const char *const refused[] = { "alpha.name", "alpha.no-such-property", "beta.name",
                                      "alpha.", ".name", "wrapper.name" };
      GValue values[1] = { G_VALUE_INIT };
      GType type;
      SandboxBackend *inner;

      use_driver_path (alpha, wrapper, NULL);

      g_value_init (&values[0], G_TYPE_UINT);
      g_value_set_uint (&values[0], 3);
      backend = sandbox_backend_newv ("wrapper", 1, names, values, NULL, &error);
      g_assert_no_error (error);
      inner = g_object_get_data (G_OBJECT (backend), "inner");
      g_assert_nonnull (inner);
      g_assert_cmpstr (sandbox_backend_get_name (inner), ==, "inner");
      g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (inner), ==, 3);
      /* The wrapper's own is its own. */
      g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (backend), ==,
                        SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS);
      g_clear_object (&backend);

      for (gsize i = 0; i < G_N_ELEMENTS (refused); i++)
        {
          const char *one[] = { refused[i] };
          GValue text = G_VALUE_INIT;

          g_value_init (&text, G_TYPE_STRING);
          g_value_set_static_string (&text, "x");
          g_assert_null (sandbox_backend_newv ("wrapper", 1, one, &text, NULL, &error));
          g_test_message ("%s: %s", refused[i], error != NULL ? error->message : "accepted");
          g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
          g_assert_nonnull (strstr (error->message, refused[i]));
          g_clear_error (&error);
          g_value_unset (&text);
        }

      /* The varargs form: collected by the inner property's type. */
      backend = sandbox_backend_new ("wrapper", NULL, &error,
                                     "alpha.max-concurrent-commands", 4u, NULL);
      g_assert_no_error (error);
      inner = g_object_get_data (G_OBJECT (backend), "inner");
      g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (inner), ==, 4);
      g_clear_object (&backend);
      g_assert_null (sandbox_backend_new ("wrapper", NULL, &error, "alpha.nope", 1u, NULL));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_clear_error (&error);

      /* As text, the way sandboxctl's --driver-option gives it. */
      type = sandbox_lookup_driver ("wrapper", &error);
      g_assert_no_error (error);
      g_value_unset (&values[0]);
      g_assert_true (sandbox_backend_parse_property (type, "alpha.max-concurrent-commands", "5",
                                                     &values[0], &error));
      g_assert_no_error (error);
      g_assert_cmpuint (g_value_get_uint (&values[0]), ==, 5);
      g_value_unset (&values[0]);
      g_assert_false (sandbox_backend_parse_property (type, "alpha.max-concurrent-commands",
                                                      "five", &values[0], &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_clear_error (&error);
      /* alpha itself wraps nothing. */
      type = sandbox_lookup_driver ("alpha", &error);
      g_assert_false (sandbox_backend_parse_property (type, "alpha.name", "x", &values[0],
                                                      &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr_unmatched ("*CRITICAL*");
  g_test_trap_assert_stderr_unmatched ("*WARNING*");
}

static void
test_newv_checks_names_and_types (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *alpha = module_dir ("alpha");
      g_autoptr(GError) error = NULL;
      g_autoptr(SandboxBackend) backend = NULL;
      const char *names[] = { "max-concurrent-commands" };
      const char *bad_names[] = { "no-such-property" };
      GValue values[1] = { G_VALUE_INIT };

      use_driver_path (alpha, NULL);

      g_value_init (&values[0], G_TYPE_STRING);
      g_value_set_string (&values[0], "eight");
      g_assert_null (sandbox_backend_newv ("alpha", 1, names, values, NULL, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_clear_error (&error);

      g_assert_null (sandbox_backend_newv ("alpha", 1, bad_names, values, NULL, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "no-such-property"));
      g_clear_error (&error);
      g_value_unset (&values[0]);

      /* What GObject would only g_critical() about, crash on, or wrap and
       * clamp with a warning: a NULL name, an unset value, a negative
       * number for an unsigned property, a number past its range. */
      {
        const char *null_names[] = { NULL };

        g_value_init (&values[0], G_TYPE_UINT);
        g_value_set_uint (&values[0], 5);
        g_assert_null (sandbox_backend_newv ("alpha", 1, null_names, values, NULL, &error));
        g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
        g_clear_error (&error);
        g_value_unset (&values[0]);
      }
      g_assert_null (sandbox_backend_newv ("alpha", 1, names, values, NULL, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "\"max-concurrent-commands\" of sandbox driver"));
      g_assert_nonnull (strstr (error->message, "no value"));
      g_clear_error (&error);
      for (guint i = 0; i < 2; i++)
        {
          /* -1 would wrap to 4294967295, 2^32 to 0 with GLib's own transform. */
          const gint64 out_of_range[] = { -1, G_MAXUINT32 + (gint64) 1 };

          g_value_init (&values[0], G_TYPE_INT64);
          g_value_set_int64 (&values[0], out_of_range[i]);
          g_assert_null (sandbox_backend_newv ("alpha", 1, names, values, NULL, &error));
          g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
          g_assert_nonnull (strstr (error->message, "\"max-concurrent-commands\""));
          g_assert_nonnull (strstr (error->message, "out of range"));
          g_clear_error (&error);
          g_value_unset (&values[0]);
        }

      /* A number of another integer type converts when it fits. */
      g_value_init (&values[0], G_TYPE_INT);
      g_value_set_int (&values[0], 5);
      backend = sandbox_backend_newv ("alpha", 1, names, values, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (backend), ==, 5);
      g_value_unset (&values[0]);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr_unmatched ("*CRITICAL*");
}

static void
test_first_directory_wins (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *alpha = module_dir ("alpha");
      g_autofree char *beta = module_dir ("beta");
      g_autofree char *dir = g_dir_make_tmp ("sandbox-modules-XXXXXX", NULL);
      g_autofree char *alpha_so = g_build_filename (alpha, "libtest-driver-alpha.so", NULL);
      g_autofree char *shadow = g_build_filename (dir, "libtest-driver-beta.so", NULL);
      g_autofree char *contents = NULL;
      g_auto(GStrv) drivers = NULL;
      gsize length;

      /* A module named like beta's but providing alpha, earlier in the
       * path: it shadows beta's module, so only alpha is available. */
      g_assert_true (g_file_get_contents (alpha_so, &contents, &length, NULL));
      g_assert_true (g_file_set_contents (shadow, contents, length, NULL));
      use_driver_path (dir, beta, NULL);

      drivers = sandbox_list_drivers ();
      g_assert_true (g_strv_contains ((const char * const *) drivers, "alpha"));
      g_assert_false (g_strv_contains ((const char * const *) drivers, "beta"));

      g_unlink (shadow);
      g_rmdir (dir);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static guint
count_driver (char       **drivers,
              const char  *name)
{
  guint count = 0;

  for (guint i = 0; drivers[i] != NULL; i++)
    if (g_str_equal (drivers[i], name))
      count++;
  return count;
}

static void
test_first_provider_of_a_driver_wins (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *alpha = module_dir ("alpha");
      g_autofree char *alpha_again = module_dir ("alpha-again");
      g_auto(GStrv) drivers = NULL;
      g_autoptr(SandboxBackend) backend = NULL;
      g_autoptr(SandboxBackend) missing = NULL;
      g_autoptr(GError) error = NULL;

      /* Two modules provide "alpha"; alpha-again's at a higher priority,
       * which GIO's own lookup (g_io_extension_point_get_extension_by_name)
       * prefers: look drivers up that way in sandbox-modules.c and the
       * backend below is a TestBackend_alpha_again, and "alpha" is listed
       * twice. The search order decides: alpha's directory comes first. */
      use_driver_path (alpha, alpha_again, NULL);
      drivers = sandbox_list_drivers ();
      g_assert_cmpuint (count_driver (drivers, "alpha"), ==, 1);

      backend = sandbox_backend_new ("alpha", NULL, &error, NULL);
      g_assert_no_error (error);
      g_assert_cmpstr (G_OBJECT_TYPE_NAME (backend), ==, "TestBackend_alpha");

      /* The module that was not used is named where a missing driver is. */
      missing = sandbox_backend_new ("no-such-driver", NULL, &error, NULL);
      g_assert_null (missing);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message, "libtest-driver-alpha-again.so: provides driver \"alpha\" again"));
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

#ifdef TEST_BUBBLEWRAP_MODULE
/* Copies the bubblewrap module into a new directory under each name. */
static char *
bubblewrap_module_copies (const char *first_name, ...)
{
  g_autofree char *contents = NULL;
  char *dir = g_dir_make_tmp ("sandbox-modules-XXXXXX", NULL);
  const char *name;
  gsize length;
  va_list args;

  g_assert_nonnull (dir);
  g_assert_true (g_file_get_contents (TEST_BUBBLEWRAP_MODULE, &contents, &length, NULL));
  va_start (args, first_name);
  for (name = first_name; name != NULL; name = va_arg (args, const char *))
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_assert_true (g_file_set_contents (path, contents, length, NULL));
    }
  va_end (args);
  return dir;
}

static void
remove_module_copies (const char *dir)
{
  g_autoptr(GDir) listing = g_dir_open (dir, 0, NULL);
  const char *name;

  while ((name = g_dir_read_name (listing)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  g_rmdir (dir);
}

static void
test_obsolete_module_name_is_not_loaded (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *dir = bubblewrap_module_copies ("libsandbox-bubblewrap.so",
                                                       "libsandboxbubblewrap.so", NULL);
      g_auto(GStrv) drivers = NULL;

      /* A `meson install` over an install from before the rename leaves
       * libsandboxbubblewrap.so beside libsandbox-bubblewrap.so (a package
       * upgrade removes it). Both register SandboxBubblewrapBackend: load
       * the old one too (drop it from obsolete_modules in sandbox-modules.c)
       * and GLib warns "Two different plugins tried to register", which
       * fails this subprocess. */
      use_driver_path (dir, NULL);
      drivers = sandbox_list_drivers ();
      g_assert_cmpuint (count_driver (drivers, "bubblewrap"), ==, 1);

      remove_module_copies (dir);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr_unmatched ("*Two different plugins*");
}

static void
test_obsolete_module_alone_is_reported (void)
{
  if (g_test_subprocess ())
    {
      g_autofree char *dir = bubblewrap_module_copies ("libsandboxbubblewrap.so", NULL);
      g_autoptr(SandboxBackend) backend = NULL;
      g_autoptr(GError) error = NULL;

      /* Only the old name: the driver is unavailable, and the error says
       * why the file there was not used. */
      use_driver_path (dir, NULL);
      backend = sandbox_backend_new ("bubblewrap", NULL, &error, NULL);
      g_assert_null (backend);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message,
                                "libsandboxbubblewrap.so: obsolete name of libsandbox-bubblewrap.so, not loaded"));

      remove_module_copies (dir);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}
#endif

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/modules/two-modules-found", test_two_modules_found);
  g_test_add_func ("/sandbox/modules/properties-reach-the-driver", test_properties_reach_the_driver);
  g_test_add_func ("/sandbox/modules/unknown-driver-is-unavailable", test_unknown_driver_is_unavailable);
  g_test_add_func ("/sandbox/modules/broken-module-is-reported", test_broken_module_is_reported);
  g_test_add_func ("/sandbox/modules/bad-configuration-is-invalid", test_bad_configuration_is_invalid);
  g_test_add_func ("/sandbox/modules/newv-checks-names-and-types", test_newv_checks_names_and_types);
  g_test_add_func ("/sandbox/modules/inner-driver-properties", test_inner_driver_properties);
  g_test_add_func ("/sandbox/modules/first-directory-wins", test_first_directory_wins);
  g_test_add_func ("/sandbox/modules/first-provider-of-a-driver-wins",
                   test_first_provider_of_a_driver_wins);
#ifdef TEST_BUBBLEWRAP_MODULE
  g_test_add_func ("/sandbox/modules/obsolete-module-name-is-not-loaded",
                   test_obsolete_module_name_is_not_loaded);
  g_test_add_func ("/sandbox/modules/obsolete-module-alone-is-reported",
                   test_obsolete_module_alone_is_reported);
#endif

  return g_test_run ();
}
