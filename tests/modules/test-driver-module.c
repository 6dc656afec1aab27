/* test-driver-module.c — a minimal driver module for the module-loading tests
 *
 * Built twice, as "alpha" and "beta", to prove that modules are found by
 * name, that several load side by side, and that their backends validate
 * their configuration with a GError (through SandboxBackendBase).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <sandbox-backend-driver.h>

#ifndef TEST_DRIVER_NAME
# error "TEST_DRIVER_NAME must be defined"
#endif
/* A second module may provide the same driver under a type of its own and
 * a higher priority (tests/modules/alpha-again). */
#ifndef TEST_TYPE_NAME
# define TEST_TYPE_NAME "TestBackend_" TEST_DRIVER_NAME
#endif
#ifndef TEST_DRIVER_PRIORITY
# define TEST_DRIVER_PRIORITY 0
#endif

/* Registered by hand so that each build of this file gets its own type name
 * ("TestBackend_alpha", …) and several can be loaded into one process. The
 * name, state directory and admission limit are the core's
 * SandboxBackendBase's, registered below a dynamic type as every driver
 * module registers its backend. */
typedef struct { SandboxBackendBase parent_instance; } TestBackend;
typedef struct { SandboxBackendBaseClass parent_class; } TestBackendClass;

static GType test_backend_type;
#define TEST_TYPE_BACKEND (test_backend_type)

static char *
test_backend_prewarm (SandboxBackend *backend, SandboxTemplate *template_, gboolean *reused,
                      GCancellable *cancellable, GError **error)
{
  *reused = FALSE;
  return sandbox_template_compute_key (template_, sandbox_backend_get_name (backend), error);
}

static SandboxHandle *
test_backend_create (SandboxBackend *backend, const char *template_key, SandboxState *state,
                     SandboxNetworkPolicy *policy, GCancellable *cancellable, GError **error)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
               "Test driver %s holds no templates", TEST_DRIVER_NAME);
  return NULL;
}

#ifdef TEST_INNER_DRIVER
/* A driver built on another (tests/modules/wrapper): it makes a backend of
 * TEST_INNER_DRIVER named "inner", with the `TEST_INNER_DRIVER.NAME`
 * properties it was given, and keeps it as the object data "inner". */
static gboolean
test_backend_init_backend (SandboxBackendBase  *base,
                           GCancellable        *cancellable,
                           GError             **error)
{
  const char *names[] = { "name" };
  GValue values[1] = { G_VALUE_INIT };
  SandboxBackend *inner;

  g_value_init (&values[0], G_TYPE_STRING);
  g_value_set_static_string (&values[0], "inner");
  inner = sandbox_backend_base_new_inner (base, 1, names, values, cancellable, error);
  g_value_unset (&values[0]);
  if (inner == NULL)
    return FALSE;
  g_object_set_data_full (G_OBJECT (base), "inner", inner, g_object_unref);
  return TRUE;
}
#endif

static void
test_backend_class_init (TestBackendClass *klass)
{
  sandbox_backend_base_class_set_default_name (SANDBOX_BACKEND_BASE_CLASS (klass),
                                               TEST_DRIVER_NAME);
#ifdef TEST_INNER_DRIVER
  sandbox_backend_base_class_set_inner_driver (SANDBOX_BACKEND_BASE_CLASS (klass),
                                               TEST_INNER_DRIVER);
  SANDBOX_BACKEND_BASE_CLASS (klass)->init_backend = test_backend_init_backend;
#endif
}

static void
test_backend_iface_init (SandboxBackendInterface *iface)
{
  iface->prewarm = test_backend_prewarm;
  iface->create = test_backend_create;
}

static void
test_backend_register (GTypeModule *module)
{
  const GTypeInfo info = {
    .class_size = sizeof (TestBackendClass),
    .class_init = (GClassInitFunc) test_backend_class_init,
    .instance_size = sizeof (TestBackend),
  };
  const GInterfaceInfo backend_info = { (GInterfaceInitFunc) test_backend_iface_init, NULL, NULL };

  test_backend_type = g_type_module_register_type (module, SANDBOX_TYPE_BACKEND_BASE,
                                                   TEST_TYPE_NAME,
                                                   &info, G_TYPE_FLAG_FINAL);
  g_type_module_add_interface (module, test_backend_type, SANDBOX_TYPE_BACKEND, &backend_info);
}

G_MODULE_EXPORT void g_io_module_load (GIOModule *module);
G_MODULE_EXPORT void g_io_module_unload (GIOModule *module);
G_MODULE_EXPORT char **g_io_module_query (void);

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  g_type_module_use (G_TYPE_MODULE (module));   /* resident */
  test_backend_register (G_TYPE_MODULE (module));
  g_io_extension_point_implement (SANDBOX_BACKEND_EXTENSION_POINT_NAME,
                                  TEST_TYPE_BACKEND, TEST_DRIVER_NAME, TEST_DRIVER_PRIORITY);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *extension_points[] = { (char *) SANDBOX_BACKEND_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (extension_points);
}
