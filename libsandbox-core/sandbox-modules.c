/* sandbox-modules.c — finding and loading driver modules
 *
 * Drivers are GIO modules implementing the "sandbox-backend" extension point,
 * the mechanism GIO itself uses for its TLS and VFS backends. They are loaded
 * on first request, never from a class_init (g-ir-scanner runs those).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <gmodule.h>

#include "sandbox-backend.h"
#include "sandbox-backend-private.h"
#include "sandbox-error.h"

typedef struct
{
  GIOExtensionPoint *extension_point;
  char **directories;
  GHashTable *drivers;   /* driver name → GType of the first module providing it */
  char *failures;   /* modules that could not be loaded or were not used, for error messages */
} DriverRegistry;

/* Module files an older version installed under another name. A package
 * upgrade removes them; `meson install` leaves them beside their successor,
 * which registers the same types, so they are never loaded. */
static const struct
{
  const char *name;
  const char *successor;
} obsolete_modules[] = {
  { "libsandboxbubblewrap." G_MODULE_SUFFIX, "libsandbox-bubblewrap." G_MODULE_SUFFIX },
};

static const char *
obsolete_module_successor (const char *basename)
{
  for (gsize i = 0; i < G_N_ELEMENTS (obsolete_modules); i++)
    if (g_str_equal (basename, obsolete_modules[i].name))
      return obsolete_modules[i].successor;
  return NULL;
}

static char **
driver_directories (void)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  /* Like GIO's own module path, ignored in setuid/setgid processes. */
  const char *path = secure_getenv ("SANDBOX_DRIVER_PATH");

  if (path != NULL)
    {
      g_auto(GStrv) entries = g_strsplit (path, G_SEARCHPATH_SEPARATOR_S, -1);

      for (guint i = 0; entries[i] != NULL; i++)
        if (entries[i][0] != '\0')
          g_strv_builder_add (builder, entries[i]);
    }
  g_strv_builder_add (builder, SANDBOX_DRIVERDIR);

  return g_strv_builder_end (builder);
}

/* GIO reports a module that fails to load on stderr only; we check first with
 * GModule so the failure can be part of the GError the caller gets. */
static gboolean
module_is_loadable (const char  *path,
                    char       **failure)
{
  GModule *module = g_module_open (path, G_MODULE_BIND_LAZY | G_MODULE_BIND_LOCAL);
  gpointer symbol = NULL;

  if (module == NULL)
    {
      *failure = g_strdup_printf ("%s: %s", path, g_module_error ());
      return FALSE;
    }

  if (!g_module_symbol (module, "g_io_module_load", &symbol) || symbol == NULL)
    {
      *failure = g_strdup_printf ("%s: not a driver module (no g_io_module_load)", path);
      g_module_close (module);
      return FALSE;
    }

  g_module_close (module);
  return TRUE;
}

static void
add_failure (GString    *failures,
             const char *format,
             ...) G_GNUC_PRINTF (2, 3);

static void
add_failure (GString    *failures,
             const char *format,
             ...)
{
  va_list args;

  if (failures->len > 0)
    g_string_append (failures, "; ");
  va_start (args, format);
  g_string_append_vprintf (failures, format, args);
  va_end (args);
}

/* Takes the drivers a module just loaded from @path registered: a name no
 * earlier module provides becomes that driver; a name one does is not used.
 * The search order decides, not the extensions' priorities. */
static void
take_new_drivers (DriverRegistry *registry,
                  const char     *path,
                  GHashTable     *seen_types,
                  GString        *failures)
{
  for (GList *l = g_io_extension_point_get_extensions (registry->extension_point);
       l != NULL; l = l->next)
    {
      const char *name = g_io_extension_get_name (l->data);
      GType type = g_io_extension_get_type (l->data);

      if (!g_hash_table_add (seen_types, GSIZE_TO_POINTER (type)))
        continue;   /* an earlier module's */
      if (g_hash_table_contains (registry->drivers, name))
        add_failure (failures, "%s: provides driver \"%s\" again, not used", path, name);
      else
        g_hash_table_insert (registry->drivers, g_strdup (name), GSIZE_TO_POINTER (type));
    }
}

static void
load_directory (DriverRegistry   *registry,
                const char       *directory,
                GHashTable       *loaded,
                GHashTable       *seen_types,
                GString          *failures)
{
  g_autoptr(GDir) dir = g_dir_open (directory, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (dir == NULL)
    return;

  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_suffix (name, "." G_MODULE_SUFFIX))
      g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);

  for (guint i = 0; i < names->len; i++)
    {
      const char *basename = g_ptr_array_index (names, i);
      g_autofree char *path = g_build_filename (directory, basename, NULL);
      g_autofree char *failure = NULL;
      const char *successor = obsolete_module_successor (basename);
      GIOModule *module;

      /* The first directory providing a module name wins. */
      if (g_hash_table_contains (loaded, basename))
        continue;

      if (successor != NULL)
        {
          add_failure (failures, "%s: obsolete name of %s, not loaded", path, successor);
          continue;
        }

      if (!module_is_loadable (path, &failure))
        {
          add_failure (failures, "%s", failure);
          continue;
        }

      module = g_io_module_new (path);
      if (!g_type_module_use (G_TYPE_MODULE (module)))
        {
          add_failure (failures, "%s: could not be loaded", path);
          g_object_unref (module);
          continue;
        }
      /* Drivers stay loaded for the life of the process: their types may be
       * in use anywhere. The module keeps the use count it got above. */
      g_hash_table_add (loaded, g_strdup (basename));
      take_new_drivers (registry, path, seen_types, failures);
    }
}

static DriverRegistry *
driver_registry_get (void)
{
  static DriverRegistry *registry;

  if (g_once_init_enter (&registry))
    {
      DriverRegistry *new_registry = g_new0 (DriverRegistry, 1);
      g_autoptr(GHashTable) loaded = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      g_autoptr(GHashTable) seen_types = g_hash_table_new (NULL, NULL);
      g_autoptr(GString) failures = g_string_new (NULL);

      new_registry->extension_point =
        g_io_extension_point_register (SANDBOX_BACKEND_EXTENSION_POINT_NAME);
      g_io_extension_point_set_required_type (new_registry->extension_point,
                                              SANDBOX_TYPE_BACKEND);
      new_registry->directories = driver_directories ();
      new_registry->drivers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

      for (guint i = 0; new_registry->directories[i] != NULL; i++)
        load_directory (new_registry, new_registry->directories[i], loaded, seen_types,
                        failures);

      new_registry->failures = g_string_free (g_steal_pointer (&failures), FALSE);
      g_once_init_leave (&registry, new_registry);
    }

  return registry;
}

static int
compare_names (const void *a,
               const void *b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

/**
 * sandbox_list_drivers:
 *
 * Loads the driver modules (once per process) and lists the drivers they
 * provide. Modules are searched in the colon-separated `SANDBOX_DRIVER_PATH`
 * (ignored in setuid programs), then in `$libdir/sandbox-1/drivers`, each
 * directory's modules in byte order of their file names. When two modules
 * provide one driver name, the first loaded in that order is the driver.
 *
 * Returns: (transfer full) (array zero-terminated=1): the driver names, sorted
 */
char **
sandbox_list_drivers (void)
{
  DriverRegistry *registry = driver_registry_get ();
  guint n_names;
  char **names = (char **) g_hash_table_get_keys_as_array (registry->drivers, &n_names);

  for (guint i = 0; i < n_names; i++)
    names[i] = g_strdup (names[i]);
  qsort (names, n_names, sizeof (char *), compare_names);
  return names;
}

/**
 * sandbox_lookup_driver:
 * @driver: the driver's name, e.g. `bubblewrap` or `memory`
 * @error: return location for a #GError
 *
 * Finds the backend type the named driver registered, loading the driver
 * modules on first use (see [func@Sandbox.list_drivers]). Tools use it to
 * look at a driver's properties before creating a backend, e.g. to parse
 * their values with [func@Sandbox.Backend.parse_property].
 *
 * An unknown driver fails with %SANDBOX_ERROR_UNAVAILABLE naming the
 * directories searched and the modules that failed to load.
 *
 * Returns: the driver's backend type (it implements
 *   [iface@Sandbox.Backend]), or %G_TYPE_INVALID with @error set
 */
GType
sandbox_lookup_driver (const char  *driver,
                       GError     **error)
{
  DriverRegistry *registry;
  gpointer type;
  g_autofree char *searched = NULL;

  g_return_val_if_fail (driver != NULL, G_TYPE_INVALID);
  g_return_val_if_fail (error == NULL || *error == NULL, G_TYPE_INVALID);

  registry = driver_registry_get ();
  if (g_hash_table_lookup_extended (registry->drivers, driver, NULL, &type))
    return (GType) GPOINTER_TO_SIZE (type);

  searched = g_strjoinv (", ", registry->directories);
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Sandbox driver \"%s\" is not available (searched %s%s%s)",
               driver, searched,
               registry->failures[0] != '\0' ? "; failed to load: " : "",
               registry->failures);
  return G_TYPE_INVALID;
}
