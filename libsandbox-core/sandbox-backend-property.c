/* sandbox-backend-property.c — a backend property's value from text
 *
 * A driver's configuration is its backend's GObject properties, and people
 * give it as text: `sandboxctl --driver-option`, `sandbox-conformance
 * --property`, a configuration file. The text becomes a GValue of the
 * property's own type, checked against its GParamSpec, so that what
 * sandbox_backend_newv() is then given is already right, and a mistake is
 * one SANDBOX_ERROR_INVALID naming the property and what it takes.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <math.h>

#include "sandbox-backend.h"
#include "sandbox-backend-private.h"
#include "sandbox-error.h"

/* The text as it is quoted in an error: control characters (a terminal
 * escape in a hostile value) and bytes that are not UTF-8 escaped as C
 * does, the rest as given. */
static char *
quote_text (const char *text)
{
  char high_bytes[129];

  for (guint i = 0; i < 128; i++)
    high_bytes[i] = (char) (0x80 + i);
  high_bytes[128] = '\0';
  return g_strescape (text, g_utf8_validate (text, -1, NULL) ? high_bytes : NULL);
}

/* What is being parsed: the parsers below and their errors share it. */
typedef struct
{
  GType       backend_type;
  GParamSpec *pspec;
  const char *text;
} PropertyText;

/* "Property “x” of sandbox driver T takes WANTED, not “WRONG”": @wrong is
 * the text, or the one flag of it that is wrong. */
static void
set_wrong_value_error (const PropertyText  *input,
                       const char          *wanted,
                       const char          *wrong,
                       GError             **error)
{
  g_autofree char *quoted = quote_text (wrong);

  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Property “%s” of sandbox driver %s takes %s, not “%s”",
               input->pspec->name, g_type_name (input->backend_type), wanted, quoted);
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
parse_boolean (const PropertyText  *input,
               GValue              *value,
               GError             **error)
{
  /* Pairs: each word and its opposite. */
  static const char * const yes[] = { "true", "yes", "on", "1" };
  static const char * const no[] = { "false", "no", "off", "0" };

  for (guint i = 0; i < G_N_ELEMENTS (yes); i++)
    if (g_ascii_strcasecmp (input->text, yes[i]) == 0
        || g_ascii_strcasecmp (input->text, no[i]) == 0)
      {
        g_value_init (value, G_TYPE_BOOLEAN);
        g_value_set_boolean (value, g_ascii_strcasecmp (input->text, yes[i]) == 0);
        return TRUE;
      }
  set_wrong_value_error (input, "true or false", input->text, error);
  return FALSE;
}

/* An integer property's bounds, widened to 64 bits. */
typedef struct
{
  gboolean is_signed;
  gint64   min;
  guint64  max;
} IntegerRange;

/* FALSE for a property that is not an integer. */
static gboolean
integer_range (GParamSpec   *pspec,
               IntegerRange *range)
{
#define RANGE_OF(KIND) (range->min = G_PARAM_SPEC_##KIND (pspec)->minimum, \
                        range->max = G_PARAM_SPEC_##KIND (pspec)->maximum)
  range->is_signed = TRUE;
  if (G_IS_PARAM_SPEC_CHAR (pspec))
    RANGE_OF (CHAR);
  else if (G_IS_PARAM_SPEC_INT (pspec))
    RANGE_OF (INT);
  else if (G_IS_PARAM_SPEC_LONG (pspec))
    RANGE_OF (LONG);
  else if (G_IS_PARAM_SPEC_INT64 (pspec))
    RANGE_OF (INT64);
  else
    {
      range->is_signed = FALSE;
      if (G_IS_PARAM_SPEC_UCHAR (pspec))
        RANGE_OF (UCHAR);
      else if (G_IS_PARAM_SPEC_UINT (pspec))
        RANGE_OF (UINT);
      else if (G_IS_PARAM_SPEC_ULONG (pspec))
        RANGE_OF (ULONG);
      else if (G_IS_PARAM_SPEC_UINT64 (pspec))
        RANGE_OF (UINT64);
      else
        return FALSE;
    }
#undef RANGE_OF
  return TRUE;
}

/* Decimal only, within the property's own range: GLib's parsers refuse an
 * empty text, white space, trailing junk, overflow and, for an unsigned
 * property, any sign. */
static gboolean
parse_integer (const PropertyText  *input,
               const IntegerRange  *range,
               GValue              *value,
               GError             **error)
{
  gint64 number = 0;
  guint64 unsigned_number = 0;
  g_autofree char *wanted = NULL;

  if (range->is_signed
      ? !g_ascii_string_to_signed (input->text, 10, range->min, (gint64) range->max, &number, NULL)
      : !g_ascii_string_to_unsigned (input->text, 10, (guint64) range->min, range->max,
                                     &unsigned_number, NULL))
    {
      if (range->is_signed)
        wanted = g_strdup_printf ("an integer from %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT,
                                  range->min, (gint64) range->max);
      else
        wanted = g_strdup_printf ("an integer from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT,
                                  (guint64) range->min, range->max);
      set_wrong_value_error (input, wanted, input->text, error);
      return FALSE;
    }

  g_value_init (value, input->pspec->value_type);
  switch (G_TYPE_FUNDAMENTAL (input->pspec->value_type))
    {
    case G_TYPE_CHAR:
      g_value_set_schar (value, (gint8) number);
      break;
    case G_TYPE_INT:
      g_value_set_int (value, (int) number);
      break;
    case G_TYPE_LONG:
      g_value_set_long (value, (long) number);
      break;
    case G_TYPE_INT64:
      g_value_set_int64 (value, number);
      break;
    case G_TYPE_UCHAR:
      g_value_set_uchar (value, (guint8) unsigned_number);
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

/* Like the integers: no white space, nothing after the number, and neither
 * NaN nor an infinity (g_ascii_strtod() reads both, and NaN compares inside
 * every range). */
static gboolean
parse_double (const PropertyText  *input,
              GValue              *value,
              GError             **error)
{
  GParamSpec *pspec = input->pspec;
  gboolean is_double = G_IS_PARAM_SPEC_DOUBLE (pspec);
  double minimum = is_double ? G_PARAM_SPEC_DOUBLE (pspec)->minimum
                             : G_PARAM_SPEC_FLOAT (pspec)->minimum;
  double maximum = is_double ? G_PARAM_SPEC_DOUBLE (pspec)->maximum
                             : G_PARAM_SPEC_FLOAT (pspec)->maximum;
  char *end = NULL;
  double number = 0;

  if (input->text[0] != '\0' && !g_ascii_isspace (input->text[0]))
    {
      errno = 0;
      number = g_ascii_strtod (input->text, &end);
    }
  if (end == NULL || *end != '\0' || errno != 0 || !isfinite (number)
      || number < minimum || number > maximum)
    {
      g_autofree char *wanted = g_strdup_printf ("a number from %g to %g", minimum, maximum);

      set_wrong_value_error (input, wanted, input->text, error);
      return FALSE;
    }

  g_value_init (value, pspec->value_type);
  if (is_double)
    g_value_set_double (value, number);
  else
    g_value_set_float (value, (float) number);
  return TRUE;
}

/* An enum's or flags' value by nick, else by name. */
static gboolean
lookup_word (GTypeClass *klass,
             const char *word,
             guint      *found)
{
  if (G_IS_ENUM_CLASS (klass))
    {
      GEnumValue *value = g_enum_get_value_by_nick (G_ENUM_CLASS (klass), word);

      if (value == NULL)
        value = g_enum_get_value_by_name (G_ENUM_CLASS (klass), word);
      *found = value != NULL ? (guint) value->value : 0;
      return value != NULL;
    }
  else
    {
      GFlagsValue *value = g_flags_get_value_by_nick (G_FLAGS_CLASS (klass), word);

      if (value == NULL)
        value = g_flags_get_value_by_name (G_FLAGS_CLASS (klass), word);
      *found = value != NULL ? value->value : 0;
      return value != NULL;
    }
}

/* "one of red, green" or "flags from read, write", not “WORD”. */
static void
set_wrong_word_error (const PropertyText  *input,
                      GTypeClass          *klass,
                      const char          *word,
                      GError             **error)
{
  gboolean is_enum = G_IS_ENUM_CLASS (klass);
  guint n_values = is_enum ? G_ENUM_CLASS (klass)->n_values : G_FLAGS_CLASS (klass)->n_values;
  g_autoptr(GString) wanted = g_string_new (is_enum ? "one of " : "flags from ");

  for (guint i = 0; i < n_values; i++)
    g_string_append_printf (wanted, "%s%s", i ? ", " : "",
                            is_enum ? G_ENUM_CLASS (klass)->values[i].value_nick
                                    : G_FLAGS_CLASS (klass)->values[i].value_nick);
  set_wrong_value_error (input, wanted->str, word, error);
}

/* An enum is one nick (or name); flags are nicks separated by commas or |,
 * and an empty text is no flag. */
static gboolean
parse_enum_or_flags (const PropertyText  *input,
                     GValue              *value,
                     GError             **error)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (input->pspec->value_type);
  gboolean is_enum = G_IS_ENUM_CLASS (klass);
  char *one_word[] = { (char *) input->text, NULL };
  g_auto(GStrv) split = is_enum ? NULL : g_strsplit_set (input->text, ",|", -1);
  char **words = is_enum ? one_word : split;
  guint bits = 0;

  for (guint i = 0; words[i] != NULL; i++)
    {
      const char *word = is_enum ? words[i] : g_strstrip (words[i]);
      guint found;

      if (!is_enum && word[0] == '\0')
        continue;
      if (!lookup_word (klass, word, &found))
        {
          set_wrong_word_error (input, klass, word, error);
          return FALSE;
        }
      bits |= found;
    }

  g_value_init (value, input->pspec->value_type);
  if (is_enum)
    g_value_set_enum (value, (int) bits);
  else
    g_value_set_flags (value, bits);
  return TRUE;
}

static gboolean
parse_value (const PropertyText  *input,
             GValue              *value,
             GError             **error)
{
  GParamSpec *pspec = input->pspec;
  IntegerRange range;

  if (pspec->value_type == G_TYPE_STRING)
    {
      g_value_init (value, G_TYPE_STRING);
      g_value_set_string (value, input->text);
      return TRUE;
    }
  if (pspec->value_type == G_TYPE_STRV)
    {
      g_value_init (value, G_TYPE_STRV);
      g_value_take_boxed (value, g_strsplit (input->text, ",", -1));
      return TRUE;
    }
  if (pspec->value_type == G_TYPE_BOOLEAN)
    return parse_boolean (input, value, error);
  if (integer_range (pspec, &range))
    return parse_integer (input, &range, value, error);
  if (G_IS_PARAM_SPEC_DOUBLE (pspec) || G_IS_PARAM_SPEC_FLOAT (pspec))
    return parse_double (input, value, error);
  if (G_IS_PARAM_SPEC_ENUM (pspec) || G_IS_PARAM_SPEC_FLAGS (pspec))
    return parse_enum_or_flags (input, value, error);

  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Property “%s” of sandbox driver %s is a %s, which cannot be given as text",
               pspec->name, g_type_name (input->backend_type), g_type_name (pspec->value_type));
  return FALSE;
}

/**
 * sandbox_backend_parse_property:
 * @backend_type: a driver's backend type (a #GObject type implementing
 *   [iface@Sandbox.Backend])
 * @name: the property's name
 * @text: the property's value as text
 * @value: (out caller-allocates): an unset #GValue, initialized to the
 *   property's type on success
 * @error: return location for a #GError
 *
 * Turns the text of a backend property, as a user writes it on a command
 * line (`sandboxctl --driver-option`, `sandbox-conformance --property`) or
 * in a configuration file, into a value of the property's own type, ready
 * for [func@Sandbox.Backend.newv]:
 *
 * - strings as given;
 * - booleans as `true`/`false`, `yes`/`no`, `on`/`off` or `1`/`0`, in any case;
 * - integers of every width in decimal, within the property's own minimum
 *   and maximum (no sign on an unsigned property, no white space, nothing
 *   after the digits);
 * - doubles and floats within the property's range, finite;
 * - enums by nick (or name);
 * - flags by nick (or name), separated by commas or `|`;
 * - string lists (#GStrv) separated by commas.
 *
 * Properties of any other type cannot be given as text. A driver built on
 * another takes that driver's properties as `DRIVER.NAME`
 * ([method@Sandbox.BackendBaseClass.set_inner_driver]).
 *
 * Returns: %TRUE with @value set; %FALSE with %SANDBOX_ERROR_INVALID naming
 *   the property and what is wrong: an unknown or read-only property (the
 *   message lists the settable ones), a value that is not of the property's
 *   form or out of its range, or a type that cannot be given as text
 */
gboolean
sandbox_backend_parse_property (GType        backend_type,
                                const char  *name,
                                const char  *text,
                                GValue      *value,
                                GError     **error)
{
  g_autoptr(GTypeClass) klass = NULL;
  PropertyText input = { backend_type, NULL, text };

  g_return_val_if_fail (g_type_is_a (backend_type, SANDBOX_TYPE_BACKEND), FALSE);
  g_return_val_if_fail (G_TYPE_IS_OBJECT (backend_type), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);
  g_return_val_if_fail (text != NULL, FALSE);
  g_return_val_if_fail (value != NULL && !G_IS_VALUE (value), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  klass = g_type_class_ref (backend_type);
  input.pspec = sandbox_backend_find_settable_property (backend_type, name, &input.backend_type);
  if (input.pspec == NULL)
    {
      g_autofree char *names = settable_property_names (G_OBJECT_CLASS (klass));
      g_autofree char *quoted = quote_text (name);

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Sandbox driver %s has no settable property “%s” (it has: %s)",
                   g_type_name (backend_type), quoted, names);
      return FALSE;
    }

  if (!parse_value (&input, value, error))
    return FALSE;

  /* What the parsers above do not know of a pspec (a string's character
   * set, a subclass's own rules): GObject would change it with a warning. */
  if (g_param_value_validate (input.pspec, value))
    {
      g_value_unset (value);
      set_wrong_value_error (&input, "another value", text, error);
      return FALSE;
    }
  return TRUE;
}
