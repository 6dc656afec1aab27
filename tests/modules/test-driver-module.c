/* test-driver-module.c — a minimal driver module for the module-loading tests
 *
 * Built twice, as "alpha" and "beta", to prove that modules are found by
 * name, that several load side by side, and that their backends validate
 * their configuration with a GError.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <sandbox.h>

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
 * ("TestBackend_alpha", …) and several can be loaded into one process. */
typedef struct _TestBackend TestBackend;
typedef struct { GObjectClass parent_class; } TestBackendClass;

static GType test_backend_type;
static gpointer test_backend_parent_class;
#define TEST_TYPE_BACKEND (test_backend_type)
#define TEST_BACKEND(o) (G_TYPE_CHECK_INSTANCE_CAST ((o), TEST_TYPE_BACKEND, TestBackend))

struct _TestBackend
{
  GObject parent_instance;
  char *name;
  char *state_directory;
  guint max_concurrent_commands;
};

enum {
  PROP_0,
  PROP_NAME,
  PROP_STATE_DIRECTORY,
  PROP_MAX_CONCURRENT_COMMANDS,
};


static void
test_backend_finalize (GObject *object)
{
  TestBackend *self = TEST_BACKEND (object);

  g_free (self->name);
  g_free (self->state_directory);
  G_OBJECT_CLASS (test_backend_parent_class)->finalize (object);
}

static void
test_backend_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  TestBackend *self = TEST_BACKEND (object);

  switch (prop_id)
    {
    case PROP_NAME: g_value_set_string (value, self->name); break;
    case PROP_STATE_DIRECTORY: g_value_set_string (value, self->state_directory); break;
    case PROP_MAX_CONCURRENT_COMMANDS: g_value_set_uint (value, self->max_concurrent_commands); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
test_backend_set_property (GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec)
{
  TestBackend *self = TEST_BACKEND (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_free (self->name);
      self->name = g_value_dup_string (value);
      if (self->name == NULL)
        self->name = g_strdup (TEST_DRIVER_NAME);
      break;
    case PROP_STATE_DIRECTORY:
      self->state_directory = g_value_dup_string (value);
      break;
    case PROP_MAX_CONCURRENT_COMMANDS:
      self->max_concurrent_commands = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static gboolean
test_backend_init_initable (GInitable *initable, GCancellable *cancellable, GError **error)
{
  TestBackend *self = TEST_BACKEND (initable);

  if (self->max_concurrent_commands < 1
      || self->max_concurrent_commands > SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "max-concurrent-commands must be between 1 and %d, not %u",
                   SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT, self->max_concurrent_commands);
      return FALSE;
    }

  return TRUE;
}

static char *
test_backend_prewarm (SandboxBackend *backend, SandboxTemplate *template_, gboolean *reused,
                      GCancellable *cancellable, GError **error)
{
  *reused = FALSE;
  return sandbox_template_compute_key (template_, TEST_BACKEND (backend)->name, error);
}

static SandboxHandle *
test_backend_create (SandboxBackend *backend, const char *template_key, SandboxState *state,
                     SandboxNetworkPolicy *policy, GCancellable *cancellable, GError **error)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
               "Test driver %s holds no templates", TEST_DRIVER_NAME);
  return NULL;
}

static void
test_backend_class_init (TestBackendClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  test_backend_parent_class = g_type_class_peek_parent (klass);

  object_class->finalize = test_backend_finalize;
  object_class->get_property = test_backend_get_property;
  object_class->set_property = test_backend_set_property;
  g_object_class_override_property (object_class, PROP_NAME, "name");
  g_object_class_override_property (object_class, PROP_STATE_DIRECTORY, "state-directory");
  g_object_class_override_property (object_class, PROP_MAX_CONCURRENT_COMMANDS,
                                    "max-concurrent-commands");
}

static void
test_backend_init (TestBackend *self)
{
  self->name = g_strdup (TEST_DRIVER_NAME);
  self->max_concurrent_commands = SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS;
}

static void
test_backend_iface_init (SandboxBackendInterface *iface)
{
  iface->prewarm = test_backend_prewarm;
  iface->create = test_backend_create;
}

static void
test_backend_initable_iface_init (GInitableIface *iface)
{
  iface->init = test_backend_init_initable;
}

static void
test_backend_register (GTypeModule *module)
{
  const GTypeInfo info = {
    .class_size = sizeof (TestBackendClass),
    .class_init = (GClassInitFunc) test_backend_class_init,
    .instance_size = sizeof (TestBackend),
    .instance_init = (GInstanceInitFunc) test_backend_init,
  };
  const GInterfaceInfo backend_info = { (GInterfaceInitFunc) test_backend_iface_init, NULL, NULL };
  const GInterfaceInfo initable_info = {
    (GInterfaceInitFunc) test_backend_initable_iface_init, NULL, NULL
  };

  test_backend_type = g_type_module_register_type (module, G_TYPE_OBJECT,
                                                   TEST_TYPE_NAME,
                                                   &info, G_TYPE_FLAG_FINAL);
  g_type_module_add_interface (module, test_backend_type, SANDBOX_TYPE_BACKEND, &backend_info);
  g_type_module_add_interface (module, test_backend_type, G_TYPE_INITABLE, &initable_info);
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
