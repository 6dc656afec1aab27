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
 * @self: a #SandboxConformance
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
 * @self: a #SandboxConformance
 * @assignment: `KEY=VALUE`
 *
 * Sets a backend property from text, converted to the type the driver's
 * backend declares for it: strings as they are, numbers in decimal, booleans
 * as `true` or `false`, string lists separated by commas. This loads the
 * driver modules.
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
  g_autoptr(GTypeClass) klass = NULL;
  GParamSpec *pspec;
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

  type = conformance_lookup_backend_type (self->driver, error);
  if (type == G_TYPE_INVALID)
    return FALSE;
  klass = g_type_class_ref (type);
  pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), key);
  if (pspec == NULL || (pspec->flags & G_PARAM_WRITABLE) == 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "The %s driver's backend has no writable property “%s”", self->driver, key);
      return FALSE;
    }

  g_value_init (&value, pspec->value_type);
  if (pspec->value_type == G_TYPE_STRING)
    g_value_set_string (&value, text);
  else if (pspec->value_type == G_TYPE_STRV)
    {
      g_auto(GStrv) parts = g_strsplit (text, ",", -1);

      g_value_set_boxed (&value, parts);
    }
  else if (pspec->value_type == G_TYPE_BOOLEAN)
    {
      if (g_str_equal (text, "true"))
        g_value_set_boolean (&value, TRUE);
      else if (g_str_equal (text, "false"))
        g_value_set_boolean (&value, FALSE);
      else
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property “%s” expects true or false, got “%s”", key, text);
          return FALSE;
        }
    }
  else if (pspec->value_type == G_TYPE_UINT || pspec->value_type == G_TYPE_UINT64
           || pspec->value_type == G_TYPE_ULONG)
    {
      guint64 number = 0;
      GError *local_error = NULL;

      if (!g_ascii_string_to_unsigned (text, 10, 0, pspec->value_type == G_TYPE_UINT ? G_MAXUINT
                                                                             : G_MAXUINT64,
                                       &number, &local_error))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property “%s”: %s", key, local_error->message);
          g_error_free (local_error);
          return FALSE;
        }
      if (pspec->value_type == G_TYPE_UINT)
        g_value_set_uint (&value, (guint) number);
      else if (pspec->value_type == G_TYPE_ULONG)
        g_value_set_ulong (&value, (gulong) number);
      else
        g_value_set_uint64 (&value, number);
    }
  else if (pspec->value_type == G_TYPE_INT || pspec->value_type == G_TYPE_INT64)
    {
      gint64 number = 0;
      GError *local_error = NULL;

      if (!g_ascii_string_to_signed (text, 10, pspec->value_type == G_TYPE_INT ? G_MININT
                                                                              : G_MININT64,
                                     pspec->value_type == G_TYPE_INT ? G_MAXINT : G_MAXINT64,
                                     &number, &local_error))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property “%s”: %s", key, local_error->message);
          g_error_free (local_error);
          return FALSE;
        }
      if (pspec->value_type == G_TYPE_INT)
        g_value_set_int (&value, (int) number);
      else
        g_value_set_int64 (&value, number);
    }
  else
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Property “%s” has type %s, which can't be given as text", key,
                   g_type_name (pspec->value_type));
      return FALSE;
    }

  if (g_param_value_validate (pspec, &value))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Value “%s” is out of range for property “%s”", text, key);
      return FALSE;
    }

  sandbox_conformance_set_backend_property (self, key, &value);
  return TRUE;
}
