/* sandbox-test-backend.c — how the test suites make backends
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>

#include "sandbox-test-backend.h"

/**
 * sandbox_test_layering:
 *
 * What the run asks for in `SANDBOX_TEST_LAYERING`. Any other value than
 * "auto" or "copy" stops the test: a misspelt variable must not quietly
 * run the default.
 *
 * Returns: (nullable): "auto", "copy", or %NULL when unset or empty
 */
const char *
sandbox_test_layering (void)
{
  const char *value = g_getenv (SANDBOX_TEST_LAYERING_VARIABLE);

  if (value == NULL || value[0] == '\0')
    return NULL;
  if (!g_str_equal (value, "auto") && !g_str_equal (value, "copy"))
    g_error ("%s must be “auto” or “copy”, not “%s”", SANDBOX_TEST_LAYERING_VARIABLE, value);
  return value;
}

/**
 * sandbox_test_assert_layering:
 * @backend: a bubblewrap backend made with the run's layering
 *
 * Fails the test unless @backend does what the run asked: with "auto",
 * layered workspaces (the kernels this runs on support them, as root and
 * unprivileged; the probe's reason for refusing them is logged at INFO in
 * the "Sandbox" domain); with "copy", copies.
 */
void
sandbox_test_assert_layering (SandboxBackend *backend)
{
  const char *asked = sandbox_test_layering ();
  g_autofree char *chosen = NULL;

  if (asked == NULL)
    return;
  g_object_get (backend, "workspace-layering", &chosen, NULL);
  if (g_str_equal (asked, "auto") && g_strcmp0 (chosen, "overlay") != 0)
    g_error ("%s=auto, but the backend's workspaces are “%s”, not layered "
             "(G_MESSAGES_DEBUG=Sandbox shows why)", SANDBOX_TEST_LAYERING_VARIABLE, chosen);
  if (g_str_equal (asked, "copy"))
    g_assert_cmpstr (chosen, ==, "copy");
}

/* Sets @value from @text: "true"/"false" are booleans, only digits a
 * guint64, anything else a string. GObject converts to the property's own type. */
static void
value_from_text (GValue     *value,
                 const char *text)
{
  if (g_str_equal (text, "true") || g_str_equal (text, "false"))
    {
      g_value_init (value, G_TYPE_BOOLEAN);
      g_value_set_boolean (value, g_str_equal (text, "true"));
    }
  else if (text[0] != '\0' && text[strspn (text, "0123456789")] == '\0')
    {
      g_value_init (value, G_TYPE_UINT64);
      g_value_set_uint64 (value, g_ascii_strtoull (text, NULL, 10));
    }
  else
    {
      g_value_init (value, G_TYPE_STRING);
      g_value_set_string (value, text);
    }
}

static void
add_property (GPtrArray  *names,
              GArray     *values,
              const char *name,
              const char *text)
{
  g_ptr_array_add (names, (gpointer) name);
  g_array_set_size (values, values->len + 1);
  value_from_text (&g_array_index (values, GValue, values->len - 1), text);
}

/**
 * sandbox_test_backend_new_valist:
 * @driver: a driver's name: "bubblewrap", "memory", "cluster"
 * @state_directory: (nullable): the backend's state directory, or %NULL to
 *   set none
 * @error: return location for a #GError
 * @ap: extra properties as name/value pairs of strings, then %NULL
 *
 * See sandbox_test_backend_new().
 *
 * Returns: (transfer full) (nullable): a backend, or %NULL with @error set
 *   when construction failed
 */
SandboxBackend *
sandbox_test_backend_new_valist (const char  *driver,
                                 const char  *state_directory,
                                 GError     **error,
                                 va_list      ap)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GArray) values = g_array_new (FALSE, TRUE, sizeof (GValue));
  gboolean bubblewrap = g_str_equal (driver, "bubblewrap");
  const char *layering = bubblewrap ? sandbox_test_layering () : NULL;
  gboolean explicit_layering = FALSE;
  SandboxBackend *backend;
  const char *name;

  g_array_set_clear_func (values, (GDestroyNotify) g_value_unset);
  if (state_directory != NULL)
    {
      g_ptr_array_add (names, (gpointer) "state-directory");
      g_array_set_size (values, 1);
      g_value_init (&g_array_index (values, GValue, 0), G_TYPE_STRING);
      g_value_set_string (&g_array_index (values, GValue, 0), state_directory);
    }

  while ((name = va_arg (ap, const char *)) != NULL)
    {
      explicit_layering = explicit_layering || g_str_equal (name, "layering");
      add_property (names, values, name, va_arg (ap, const char *));
    }
  /* A test that names its layering is about that layering. */
  if (layering != NULL && !explicit_layering)
    add_property (names, values, "layering", layering);

  backend = sandbox_backend_newv (driver, names->len, (const char **) names->pdata,
                                  (const GValue *) values->data, NULL, error);
  if (backend != NULL && bubblewrap && !explicit_layering)
    sandbox_test_assert_layering (backend);
  return backend;
}

/**
 * sandbox_test_backend_new:
 * @driver: a driver's name: "bubblewrap", "memory", "cluster"
 * @state_directory: (nullable): the backend's state directory, or %NULL to
 *   set none
 * @error: return location for a #GError
 * @...: extra properties as name/value pairs of strings ("true"/"false"
 *   for booleans, digits for numbers), then %NULL
 *
 * A backend of @driver. A bubblewrap one gets the run's layering
 * (sandbox_test_layering()) unless the pairs name `layering` themselves,
 * checked with sandbox_test_assert_layering().
 *
 * Returns: (transfer full) (nullable): a backend, or %NULL with @error set
 *   when construction failed
 */
SandboxBackend *
sandbox_test_backend_new (const char  *driver,
                          const char  *state_directory,
                          GError     **error,
                          ...)
{
  SandboxBackend *backend;
  va_list ap;

  va_start (ap, error);
  backend = sandbox_test_backend_new_valist (driver, state_directory, error, ap);
  va_end (ap);
  return backend;
}

/**
 * sandbox_test_setup_backend:
 * @driver: a driver's name
 * @state_directory: (nullable): the backend's state directory
 * @...: extra properties as name/value pairs of strings, then %NULL
 *
 * sandbox_test_backend_new() for a test that needs the backend made: it
 * fails the test otherwise (as gst_check_setup_element() does).
 *
 * Returns: (transfer full): the backend
 */
SandboxBackend *
sandbox_test_setup_backend (const char *driver,
                            const char *state_directory,
                            ...)
{
  g_autoptr(GError) error = NULL;
  SandboxBackend *backend;
  va_list ap;

  va_start (ap, state_directory);
  backend = sandbox_test_backend_new_valist (driver, state_directory, &error, ap);
  va_end (ap);
  g_assert_no_error (error);
  g_assert_nonnull (backend);
  return backend;
}

/**
 * sandbox_test_bubblewrap_new_valist:
 *
 * sandbox_test_backend_new_valist() for "bubblewrap".
 *
 * Returns: (transfer full) (nullable): a bubblewrap backend
 */
SandboxBackend *
sandbox_test_bubblewrap_new_valist (const char  *state_directory,
                                    GError     **error,
                                    va_list      ap)
{
  return sandbox_test_backend_new_valist ("bubblewrap", state_directory, error, ap);
}

/**
 * sandbox_test_bubblewrap_new:
 * @state_directory: the backend's state directory
 * @error: return location for a #GError
 * @...: extra properties as name/value pairs of strings ("true"/"false"
 *   for booleans, digits for numbers), then %NULL
 *
 * A bubblewrap backend on @state_directory with the run's layering
 * (sandbox_test_layering()) unless the pairs name `layering` themselves;
 * checked with sandbox_test_assert_layering().
 *
 * Returns: (transfer full) (nullable): a bubblewrap backend, or %NULL with
 *   @error set when construction failed
 */
SandboxBackend *
sandbox_test_bubblewrap_new (const char  *state_directory,
                             GError     **error,
                             ...)
{
  SandboxBackend *backend;
  va_list ap;

  va_start (ap, error);
  backend = sandbox_test_bubblewrap_new_valist (state_directory, error, ap);
  va_end (ap);
  return backend;
}

/**
 * sandbox_test_workspace_directory:
 * @session_directory: the host path of a session's directory in the store
 *
 * Where the guest's files of that session are on the host, for tests that
 * plant or inspect them there: `workspace/` of a copied session, the
 * upper layer `layers/upper/` of a layered one (whose lower layer is the
 * template's data, which the guest never writes).
 *
 * Returns: (transfer full): the host path of the session's own workspace
 */
char *
sandbox_test_workspace_directory (const char *session_directory)
{
  g_autofree char *layers = g_build_filename (session_directory, "layers", NULL);

  if (g_file_test (layers, G_FILE_TEST_IS_DIR))
    return g_build_filename (layers, "upper", NULL);
  return g_build_filename (session_directory, "workspace", NULL);
}

/**
 * sandbox_test_count_entries:
 * @directory: a host directory, which must exist
 *
 * Returns: how many entries it has, "." and ".." left out
 */
guint
sandbox_test_count_entries (const char *directory)
{
  g_autoptr(GDir) dir = g_dir_open (directory, 0, NULL);
  guint count = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    count++;
  return count;
}
