/* sandboxctl-properties.c — --driver-option KEY=VALUE, typed by the property
 *
 * A driver's configuration is its backend's GObject properties. The text of
 * a --driver-option becomes a GValue of the property's own type, parsed and
 * range-checked against its GParamSpec, so booleans (seccomp, durable),
 * integers (every limit), enums and flags (by nick) and strings can all be
 * set from the shell. Mistakes are SANDBOX_ERROR_INVALID naming the option.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sandboxctl.h"

/**
 * sandboxctl_driver_type:
 * @driver: a driver name
 *
 * Loads the driver modules (once) and finds the type @driver registered.
 *
 * Returns: the backend type, or %G_TYPE_INVALID when no module provides
 *   @driver (sandbox_backend_newv() then says so, naming the directories)
 */
GType
sandboxctl_driver_type (const char *driver)
{
  g_auto(GStrv) drivers = sandbox_list_drivers ();
  GIOExtensionPoint *point;
  GIOExtension *extension;

  if (!g_strv_contains ((const char * const *) drivers, driver))
    return G_TYPE_INVALID;
  point = g_io_extension_point_lookup (SANDBOX_BACKEND_EXTENSION_POINT_NAME);
  extension = g_io_extension_point_get_extension_by_name (point, driver);
  return extension != NULL ? g_io_extension_get_type (extension) : G_TYPE_INVALID;
}

static char *
settable_property_names (GObjectClass *klass)
{
  g_autofree GParamSpec **pspecs = NULL;
  g_autoptr(GString) names = g_string_new (NULL);
  guint n_pspecs;

  pspecs = g_object_class_list_properties (klass, &n_pspecs);
  for (guint i = 0; i < n_pspecs; i++)
    if (pspecs[i]->flags & G_PARAM_WRITABLE)
      g_string_append_printf (names, "%s%s", names->len ? ", " : "", pspecs[i]->name);
  return g_string_free (g_steal_pointer (&names), FALSE);
}

static gboolean
parse_boolean (const char *text,
               gboolean   *out)
{
  static const char * const yes[] = { "true", "yes", "on", "1", NULL };
  static const char * const no[] = { "false", "no", "off", "0", NULL };

  for (guint i = 0; yes[i] != NULL; i++)
    if (g_ascii_strcasecmp (text, yes[i]) == 0)
      {
        *out = TRUE;
        return TRUE;
      }
  for (guint i = 0; no[i] != NULL; i++)
    if (g_ascii_strcasecmp (text, no[i]) == 0)
      {
        *out = FALSE;
        return TRUE;
      }
  return FALSE;
}

/* The bounds of an integer property, widened to 64 bits. */
static gboolean
integer_bounds (GParamSpec *pspec,
                gboolean   *is_signed,
                gint64     *min,
                guint64    *max)
{
  *is_signed = TRUE;
  if (G_IS_PARAM_SPEC_INT (pspec))
    *min = G_PARAM_SPEC_INT (pspec)->minimum, *max = G_PARAM_SPEC_INT (pspec)->maximum;
  else if (G_IS_PARAM_SPEC_LONG (pspec))
    *min = G_PARAM_SPEC_LONG (pspec)->minimum, *max = G_PARAM_SPEC_LONG (pspec)->maximum;
  else if (G_IS_PARAM_SPEC_INT64 (pspec))
    *min = G_PARAM_SPEC_INT64 (pspec)->minimum, *max = G_PARAM_SPEC_INT64 (pspec)->maximum;
  else
    {
      *is_signed = FALSE;
      if (G_IS_PARAM_SPEC_UINT (pspec))
        *min = G_PARAM_SPEC_UINT (pspec)->minimum, *max = G_PARAM_SPEC_UINT (pspec)->maximum;
      else if (G_IS_PARAM_SPEC_ULONG (pspec))
        *min = G_PARAM_SPEC_ULONG (pspec)->minimum, *max = G_PARAM_SPEC_ULONG (pspec)->maximum;
      else if (G_IS_PARAM_SPEC_UINT64 (pspec))
        *min = G_PARAM_SPEC_UINT64 (pspec)->minimum, *max = G_PARAM_SPEC_UINT64 (pspec)->maximum;
      else
        return FALSE;
    }
  return TRUE;
}

static gboolean
set_integer (GParamSpec  *pspec,
             const char  *text,
             GValue      *value,
             GError     **error)
{
  gboolean is_signed;
  gint64 min;
  guint64 max;
  gint64 signed_number = 0;
  guint64 unsigned_number = 0;
  gboolean parsed;

  integer_bounds (pspec, &is_signed, &min, &max);
  if (is_signed)
    parsed = g_ascii_string_to_signed (text, 10, min, (gint64) max, &signed_number, NULL);
  else
    parsed = g_ascii_string_to_unsigned (text, 10, (guint64) min, max, &unsigned_number, NULL);
  if (!parsed)
    {
      if (is_signed)
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                     "--driver-option %s takes an integer from %" G_GINT64_FORMAT
                     " to %" G_GINT64_FORMAT ", not “%s”",
                     pspec->name, min, (gint64) max, text);
      else
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                     "--driver-option %s takes an integer from %" G_GUINT64_FORMAT
                     " to %" G_GUINT64_FORMAT ", not “%s”",
                     pspec->name, (guint64) min, max, text);
      return FALSE;
    }

  g_value_init (value, pspec->value_type);
  switch (G_TYPE_FUNDAMENTAL (pspec->value_type))
    {
    case G_TYPE_INT:
      g_value_set_int (value, (int) signed_number);
      break;
    case G_TYPE_LONG:
      g_value_set_long (value, (long) signed_number);
      break;
    case G_TYPE_INT64:
      g_value_set_int64 (value, signed_number);
      break;
    case G_TYPE_UINT:
      g_value_set_uint (value, (guint) unsigned_number);
      break;
    case G_TYPE_ULONG:
      g_value_set_ulong (value, (gulong) unsigned_number);
      break;
    default:
      g_value_set_uint64 (value, unsigned_number);
      break;
    }
  return TRUE;
}

static char *
enum_nicks (GType type)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (type);
  g_autoptr(GString) nicks = g_string_new (NULL);

  for (guint i = 0; i < klass->n_values; i++)
    g_string_append_printf (nicks, "%s%s", i ? ", " : "", klass->values[i].value_nick);
  return g_string_free (g_steal_pointer (&nicks), FALSE);
}

static gboolean
set_enum (GParamSpec  *pspec,
          const char  *text,
          GValue      *value,
          GError     **error)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (pspec->value_type);
  GEnumValue *found = g_enum_get_value_by_nick (klass, text);
  g_autofree char *nicks = NULL;

  if (found == NULL)
    found = g_enum_get_value_by_name (klass, text);
  if (found == NULL)
    {
      nicks = enum_nicks (pspec->value_type);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "--driver-option %s takes one of %s, not “%s”", pspec->name, nicks, text);
      return FALSE;
    }
  g_value_init (value, pspec->value_type);
  g_value_set_enum (value, found->value);
  return TRUE;
}

/* Flags are nicks separated by commas or |; an empty value is no flag. */
static gboolean
set_flags (GParamSpec  *pspec,
           const char  *text,
           GValue      *value,
           GError     **error)
{
  g_autoptr(GFlagsClass) klass = g_type_class_ref (pspec->value_type);
  g_auto(GStrv) words = g_strsplit_set (text, ",|", -1);
  guint flags = 0;

  for (guint i = 0; words[i] != NULL; i++)
    {
      const char *word = g_strstrip (words[i]);
      GFlagsValue *found;

      if (word[0] == '\0')
        continue;
      found = g_flags_get_value_by_nick (klass, word);
      if (found == NULL)
        found = g_flags_get_value_by_name (klass, word);
      if (found == NULL)
        {
          g_autoptr(GString) nicks = g_string_new (NULL);

          for (guint j = 0; j < klass->n_values; j++)
            g_string_append_printf (nicks, "%s%s", j ? ", " : "", klass->values[j].value_nick);
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "--driver-option %s takes flags from %s, not “%s”",
                       pspec->name, nicks->str, word);
          return FALSE;
        }
      flags |= found->value;
    }
  g_value_init (value, pspec->value_type);
  g_value_set_flags (value, flags);
  return TRUE;
}

static gboolean
set_double (GParamSpec  *pspec,
            const char  *text,
            GValue      *value,
            GError     **error)
{
  double minimum = G_IS_PARAM_SPEC_DOUBLE (pspec) ? G_PARAM_SPEC_DOUBLE (pspec)->minimum
                                                  : G_PARAM_SPEC_FLOAT (pspec)->minimum;
  double maximum = G_IS_PARAM_SPEC_DOUBLE (pspec) ? G_PARAM_SPEC_DOUBLE (pspec)->maximum
                                                  : G_PARAM_SPEC_FLOAT (pspec)->maximum;
  char *end = NULL;
  double number;

  errno = 0;
  number = g_ascii_strtod (text, &end);
  if (text[0] == '\0' || *end != '\0' || errno != 0 || number < minimum || number > maximum)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "--driver-option %s takes a number from %g to %g, not “%s”",
                   pspec->name, minimum, maximum, text);
      return FALSE;
    }
  g_value_init (value, pspec->value_type);
  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    g_value_set_double (value, number);
  else
    g_value_set_float (value, (float) number);
  return TRUE;
}

/**
 * sandboxctl_property_value_from_string:
 * @type: the driver's backend type
 * @name: the property's name
 * @text: the value as given on the command line
 * @value: (out caller-allocates): an unset #GValue, initialized on success
 * @error: return location for a #GError
 *
 * Turns `--driver-option NAME=TEXT` into a value of the property's type:
 * strings as given; booleans as true/false, yes/no, on/off or 1/0; integers
 * in decimal within the property's range; numbers; enums by nick or name;
 * flags as nicks separated by commas. An unknown or read-only property, a
 * type that cannot be given as text, or a bad value is
 * %SANDBOX_ERROR_INVALID.
 *
 * Returns: whether @value holds the property's value
 */
gboolean
sandboxctl_property_value_from_string (GType        type,
                                       const char  *name,
                                       const char  *text,
                                       GValue      *value,
                                       GError     **error)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (type);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), name);
  gboolean is_signed;
  gint64 min;
  guint64 max;

  if (pspec == NULL || !(pspec->flags & G_PARAM_WRITABLE))
    {
      g_autofree char *names = settable_property_names (G_OBJECT_CLASS (klass));

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Sandbox driver %s has no settable property “%s” (it has: %s)",
                   g_type_name (type), name, names);
      return FALSE;
    }

  if (pspec->value_type == G_TYPE_STRING)
    {
      g_value_init (value, G_TYPE_STRING);
      g_value_set_string (value, text);
      return TRUE;
    }
  if (pspec->value_type == G_TYPE_BOOLEAN)
    {
      gboolean flag;

      if (!parse_boolean (text, &flag))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "--driver-option %s takes true or false, not “%s”", pspec->name, text);
          return FALSE;
        }
      g_value_init (value, G_TYPE_BOOLEAN);
      g_value_set_boolean (value, flag);
      return TRUE;
    }
  if (integer_bounds (pspec, &is_signed, &min, &max))
    return set_integer (pspec, text, value, error);
  if (G_IS_PARAM_SPEC_DOUBLE (pspec) || G_IS_PARAM_SPEC_FLOAT (pspec))
    return set_double (pspec, text, value, error);
  if (G_IS_PARAM_SPEC_ENUM (pspec))
    return set_enum (pspec, text, value, error);
  if (G_IS_PARAM_SPEC_FLAGS (pspec))
    return set_flags (pspec, text, value, error);

  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "--driver-option %s is a %s, which cannot be given on the command line",
               pspec->name, g_type_name (pspec->value_type));
  return FALSE;
}
