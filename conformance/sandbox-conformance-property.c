/* sandbox-conformance-property.c — the backend properties the suite gives
 * every backend it constructs, set as values or parsed from text
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-conformance-private.h"

/**
 * sandbox_conformance_set_backend_property:
 * @self: a [class@SandboxConformance.Conformance]
 * @name: a construct property of the driver's backend
 * @value: its value
 *
 * Sets a property every backend the suite constructs gets, such as a
 * memory driver's `script-file` or a bubblewrap backend's `executable`.
 * Setting a property again replaces its value. Without `state-directory` the
 * suite makes a temporary one for each run.
 */
void
sandbox_conformance_set_backend_property (SandboxConformance *self,
                                          const char         *name,
                                          const GValue       *value)
{
  GValue copy = G_VALUE_INIT;

  g_return_if_fail (SANDBOX_IS_CONFORMANCE (self));
  g_return_if_fail (name != NULL);
  g_return_if_fail (G_IS_VALUE (value));

  g_value_init (&copy, G_VALUE_TYPE (value));
  g_value_copy (value, &copy);

  for (guint i = 0; i < self->property_names->len; i++)
    if (g_str_equal (g_ptr_array_index (self->property_names, i), name))
      {
        GValue *slot = &g_array_index (self->property_values, GValue, i);

        g_value_unset (slot);
        *slot = copy;
        return;
      }

  g_ptr_array_add (self->property_names, g_strdup (name));
  g_array_append_vals (self->property_values, &copy, 1);
}

/**
 * sandbox_conformance_parse_backend_property:
 * @self: a [class@SandboxConformance.Conformance]
 * @assignment: `KEY=VALUE`
 *
 * Sets a backend property from text, converted to the type the driver's
 * backend declares for it by [func@Sandbox.Backend.parse_property]: strings as
 * they are, numbers in decimal within the property's range, booleans as
 * `true` or `false`, enums and flags by nick, string lists separated by
 * commas. This loads the driver modules.
 *
 * Returns: %TRUE on success; %SANDBOX_ERROR_UNAVAILABLE for an unknown
 *   driver, %SANDBOX_ERROR_INVALID for an unknown property or a value of the
 *   wrong form
 */
gboolean
sandbox_conformance_parse_backend_property (SandboxConformance  *self,
                                            const char          *assignment,
                                            GError             **error)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autofree char *key = NULL;
  const char *equals;
  const char *text;
  GType type;

  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), FALSE);
  g_return_val_if_fail (assignment != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  equals = strchr (assignment, '=');
  if (equals == NULL || equals == assignment)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Expected KEY=VALUE, got “%s”", assignment);
      return FALSE;
    }
  key = g_strndup (assignment, equals - assignment);
  text = equals + 1;

  type = sandbox_lookup_driver (self->driver, error);
  if (type == G_TYPE_INVALID)
    return FALSE;
  if (!sandbox_backend_parse_property (type, key, text, &value, error))
    return FALSE;

  sandbox_conformance_set_backend_property (self, key, &value);
  return TRUE;
}
