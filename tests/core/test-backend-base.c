/* test-backend-base.c — what SandboxBackendBase gives every driver
 *
 * A driver of this file's own derives from the base and knows nothing of
 * the name, the state directory or the admission limit: it sees them read
 * back, checked in init() before its own init_backend runs, and defaulted
 * as the interface documents. The in-tree drivers (bubblewrap, memory) and
 * the out-of-tree example derive from it too, so their suites test it as a
 * module registers it (dynamically).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <sandbox-backend-driver.h>

#define TEST_TYPE_BASED_BACKEND (test_based_backend_get_type ())
G_DECLARE_FINAL_TYPE (TestBasedBackend, test_based_backend, TEST, BASED_BACKEND,
                      SandboxBackendBase)

struct _TestBasedBackend
{
  SandboxBackendBase parent_instance;
  guint init_backend_calls;
  gboolean fail_init_backend;
};

static void
test_based_backend_iface_init (SandboxBackendInterface *iface)
{
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestBasedBackend, test_based_backend, SANDBOX_TYPE_BACKEND_BASE,
                               G_IMPLEMENT_INTERFACE (SANDBOX_TYPE_BACKEND,
                                                      test_based_backend_iface_init))

static gboolean
test_based_backend_init_backend (SandboxBackendBase  *base,
                                 GCancellable        *cancellable,
                                 GError             **error)
{
  TestBasedBackend *self = TEST_BASED_BACKEND (base);
  const char *directory = sandbox_backend_base_get_state_directory (base);

  self->init_backend_calls++;
  if (self->fail_init_backend)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, "not here");
      return FALSE;
    }
  /* What a driver does once it has resolved its directory. */
  if (directory != NULL)
    {
      g_autofree char *resolved = g_build_filename (directory, "resolved", NULL);

      sandbox_backend_base_set_state_directory (base, resolved);
    }
  return TRUE;
}

static void
test_based_backend_class_init (TestBasedBackendClass *klass)
{
  SandboxBackendBaseClass *base_class = SANDBOX_BACKEND_BASE_CLASS (klass);

  base_class->init_backend = test_based_backend_init_backend;
  sandbox_backend_base_class_set_default_name (base_class, "based");
}

static void
test_based_backend_init (TestBasedBackend *self)
{
}

/* A driver that names no default: a name must be given. */
#define TEST_TYPE_NAMELESS_BACKEND (test_nameless_backend_get_type ())
G_DECLARE_FINAL_TYPE (TestNamelessBackend, test_nameless_backend, TEST, NAMELESS_BACKEND,
                      SandboxBackendBase)

struct _TestNamelessBackend
{
  SandboxBackendBase parent_instance;
};

G_DEFINE_FINAL_TYPE_WITH_CODE (TestNamelessBackend, test_nameless_backend,
                               SANDBOX_TYPE_BACKEND_BASE,
                               G_IMPLEMENT_INTERFACE (SANDBOX_TYPE_BACKEND,
                                                      test_based_backend_iface_init))

static void
test_nameless_backend_class_init (TestNamelessBackendClass *klass)
{
}

static void
test_nameless_backend_init (TestNamelessBackend *self)
{
}

static void
test_defaults (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = g_initable_new (TEST_TYPE_BASED_BACKEND, NULL, &error,
                                                      NULL);

  g_assert_no_error (error);
  g_assert_true (SANDBOX_IS_BACKEND (backend));
  /* Through the interface, as applications read them, and through the
   * base, as the driver does. */
  g_assert_cmpstr (sandbox_backend_get_name (backend), ==, "based");
  g_assert_cmpstr (sandbox_backend_base_get_name (SANDBOX_BACKEND_BASE (backend)), ==, "based");
  g_assert_null (sandbox_backend_dup_state_directory (backend));
  g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (backend), ==,
                    SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS);
  g_assert_cmpuint (TEST_BASED_BACKEND (backend)->init_backend_calls, ==, 1);
}

static void
test_given_values_read_back (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autofree char *directory = NULL;

  backend = g_initable_new (TEST_TYPE_BASED_BACKEND, NULL, &error,
                            "name", "mine",
                            "state-directory", "/state",
                            "max-concurrent-commands", SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT,
                            NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (sandbox_backend_get_name (backend), ==, "mine");
  g_assert_cmpuint (sandbox_backend_base_get_max_concurrent_commands (
                      SANDBOX_BACKEND_BASE (backend)),
                    ==, SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT);
  /* As the driver resolved it in init_backend. */
  directory = sandbox_backend_dup_state_directory (backend);
  g_assert_cmpstr (directory, ==, "/state/resolved");

  /* A NULL name is the driver's own, as the interface documents. */
  g_clear_object (&backend);
  backend = g_initable_new (TEST_TYPE_BASED_BACKEND, NULL, &error, "name", NULL, NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (sandbox_backend_get_name (backend), ==, "based");
}

/* Every backend refuses these in init(), before the driver's own checks
 * (remove a check from sandbox_backend_base_initable_init(): its row is
 * then constructed). */
static void
test_common_properties_checked (void)
{
  const struct {
    const char *name;
    guint       max;
    const char *says;
  } rows[] = {
    { "", 1, "non-empty" },
    { "x", 0, "between 1 and 1024, not 0" },
    { "x", SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT + 1, "between 1 and 1024, not 1025" },
    { "x", G_MAXUINT, "between 1 and 1024" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GObject) backend = g_object_new (TEST_TYPE_BASED_BACKEND,
                                                 "name", rows[i].name,
                                                 "max-concurrent-commands", rows[i].max,
                                                 NULL);

      g_assert_false (g_initable_init (G_INITABLE (backend), NULL, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, rows[i].says));
      /* The driver's init_backend never sees a bad configuration. */
      g_assert_cmpuint (TEST_BASED_BACKEND (backend)->init_backend_calls, ==, 0);
    }
}

static void
test_init_backend_once (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) backend = g_object_new (TEST_TYPE_BASED_BACKEND, NULL);
  TestBasedBackend *self = TEST_BASED_BACKEND (backend);

  /* A failure of the driver's own is the driver's error, and init() may
   * be tried again. */
  self->fail_init_backend = TRUE;
  g_assert_false (g_initable_init (G_INITABLE (backend), NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_clear_error (&error);

  self->fail_init_backend = FALSE;
  g_assert_true (g_initable_init (G_INITABLE (backend), NULL, &error));
  g_assert_no_error (error);
  /* Once it has succeeded, init() does not open the backend again. */
  g_assert_true (g_initable_init (G_INITABLE (backend), NULL, &error));
  g_assert_cmpuint (self->init_backend_calls, ==, 2);
}

static void
test_no_default_name (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = g_initable_new (TEST_TYPE_NAMELESS_BACKEND, NULL, &error,
                                                      NULL);

  g_assert_null (backend);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  backend = g_initable_new (TEST_TYPE_NAMELESS_BACKEND, NULL, &error, "name", "given", NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (sandbox_backend_get_name (backend), ==, "given");
}

static void
test_properties_are_the_interface_s (void)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (TEST_TYPE_BASED_BACKEND);
  gpointer iface = g_type_default_interface_peek (SANDBOX_TYPE_BACKEND);
  const char *names[] = { "name", "state-directory", "max-concurrent-commands" };

  /* One definition (docs, range, flags): the interface's. */
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), names[i]);

      /* (GObject answers with the target of the override.) */
      g_assert_nonnull (pspec);
      g_assert_true (pspec == g_object_interface_find_property (iface, names[i]));
      g_assert_true (pspec->owner_type == SANDBOX_TYPE_BACKEND);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/backend-base/defaults", test_defaults);
  g_test_add_func ("/sandbox/backend-base/given-values-read-back", test_given_values_read_back);
  g_test_add_func ("/sandbox/backend-base/common-properties-checked",
                   test_common_properties_checked);
  g_test_add_func ("/sandbox/backend-base/init-backend-once", test_init_backend_once);
  g_test_add_func ("/sandbox/backend-base/no-default-name", test_no_default_name);
  g_test_add_func ("/sandbox/backend-base/properties-are-the-interface-s",
                   test_properties_are_the_interface_s);

  return g_test_run ();
}
