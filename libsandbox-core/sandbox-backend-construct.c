/* sandbox-backend-construct.c — constructing a driver's backend
 *
 * sandbox_backend_new() and sandbox_backend_newv() make a backend of a
 * driver found with sandbox_lookup_driver() (sandbox-modules.c): the
 * property names and values, from C varargs or straight from a binding, are
 * checked against the driver's settable properties and converted to their
 * types; those of a driver's inner driver (`bubblewrap.tmp-size` for
 * `cluster`) are kept on the backend for its sandbox_backend_base_new_inner().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdarg.h>
#include <string.h>

#include <gobject/gvaluecollector.h>

#include "sandbox-backend.h"
#include "sandbox-backend-base.h"
#include "sandbox-backend-private.h"
#include "sandbox-error.h"

/**
 * sandbox_backend_new:
 * @driver: the driver's name, e.g. `bubblewrap` or `memory`
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 * @first_property_name: (nullable): the first property to set, followed by
 *   its value, then more name/value pairs, ending with %NULL
 * @...: the values and further names
 *
 * Creates a backend of the named driver, loading driver modules on first use
 * (see [func@Sandbox.list_drivers]). An unknown driver fails with
 * %SANDBOX_ERROR_UNAVAILABLE naming the directories searched; a bad
 * configuration with the driver's own error, usually %SANDBOX_ERROR_INVALID.
 *
 * Returns: (transfer full): a new backend, or %NULL with @error set
 */
SandboxBackend *
sandbox_backend_new (const char    *driver,
                     GCancellable  *cancellable,
                     GError       **error,
                     const char    *first_property_name,
                     ...)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GArray) values = NULL;
  GType type;
  va_list args;

  g_return_val_if_fail (driver != NULL, NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);

  type = sandbox_lookup_driver (driver, error);
  if (type == G_TYPE_INVALID)
    return NULL;

  /* Collected here rather than by g_initable_new_valist(), which cannot
   * take an inner driver's properties and would only warn of a mistake. */
  values = g_array_new (FALSE, TRUE, sizeof (GValue));
  g_array_set_clear_func (values, (GDestroyNotify) g_value_unset);
  va_start (args, first_property_name);
  for (const char *name = first_property_name; name != NULL; name = va_arg (args, const char *))
    {
      GType owner_type;
      GParamSpec *pspec = sandbox_backend_find_settable_property (type, name, &owner_type);
      g_autofree char *collect_error = NULL;
      GValue value = G_VALUE_INIT;

      if (pspec == NULL)
        {
          /* The value's type is unknown: nothing after it can be read. */
          va_end (args);
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Sandbox driver %s has no settable property \"%s\"",
                       g_type_name (type), name);
          return NULL;
        }
      G_VALUE_COLLECT_INIT (&value, pspec->value_type, args, 0, &collect_error);
      if (collect_error != NULL)
        {
          va_end (args);
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property \"%s\" of sandbox driver %s: %s", name, g_type_name (type),
                       collect_error);
          return NULL;
        }
      g_ptr_array_add (names, (gpointer) name);
      g_array_append_val (values, value);
    }
  va_end (args);

  return sandbox_backend_newv (driver, names->len, (const char **) names->pdata,
                               (const GValue *) values->data, cancellable, error);
}

/* Property values from bindings -------------------------------------------
 *
 * Bindings pass names and values straight from user input, so
 * sandbox_backend_newv() checks what GObject would only g_critical() or
 * g_warning() about (or crash on): every name is a settable property of the
 * driver, every value is set and converts to the property's type without
 * loss, and is within the property's range. A number converts to a
 * property of another numeric type only when it fits exactly (GLib's own
 * transforms are C casts: -1 would become 4294967295); anything else must
 * be of the property's type.
 */

/* A number as sign and magnitude, exact for every integer type; FALSE for
 * a value that is not an integer (a float with a fraction included). */
static gboolean
value_get_integer (const GValue *value,
                   gboolean     *negative,
                   guint64      *magnitude)
{
  gint64 signed_value;
  gdouble real;

  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_CHAR:
      signed_value = g_value_get_schar (value);
      break;
    case G_TYPE_INT:
      signed_value = g_value_get_int (value);
      break;
    case G_TYPE_LONG:
      signed_value = g_value_get_long (value);
      break;
    case G_TYPE_INT64:
      signed_value = g_value_get_int64 (value);
      break;
    case G_TYPE_UCHAR:
      *negative = FALSE;
      *magnitude = g_value_get_uchar (value);
      return TRUE;
    case G_TYPE_UINT:
      *negative = FALSE;
      *magnitude = g_value_get_uint (value);
      return TRUE;
    case G_TYPE_ULONG:
      *negative = FALSE;
      *magnitude = g_value_get_ulong (value);
      return TRUE;
    case G_TYPE_UINT64:
      *negative = FALSE;
      *magnitude = g_value_get_uint64 (value);
      return TRUE;
    case G_TYPE_FLOAT:
    case G_TYPE_DOUBLE:
      /* Some bindings (GJS) have only doubles. */
      real = G_VALUE_HOLDS_FLOAT (value) ? g_value_get_float (value) : g_value_get_double (value);
      *negative = real < 0;
      if (*negative)
        real = -real;
      /* Also FALSE for NaN and infinities. */
      if (!(real < 0x1p64))
        return FALSE;
      *magnitude = (guint64) real;
      return (gdouble) *magnitude == real;
    default:
      return FALSE;
    }

  *negative = signed_value < 0;
  *magnitude = signed_value < 0 ? (guint64) -(signed_value + 1) + 1 : (guint64) signed_value;
  return TRUE;
}

static gboolean
fits_signed (gboolean negative,
             guint64  magnitude,
             gint64   max)
{
  return negative ? magnitude <= (guint64) max + 1 : magnitude <= (guint64) max;
}

static gint64
to_signed (gboolean negative,
           guint64  magnitude)
{
  return negative ? -(gint64) (magnitude - 1) - 1 : (gint64) magnitude;
}

/* Sets @value, initialized to an integer type, to the number; FALSE when
 * the type cannot hold it. */
static gboolean
value_set_integer (GValue   *value,
                   gboolean  negative,
                   guint64   magnitude)
{
  switch (G_TYPE_FUNDAMENTAL (G_VALUE_TYPE (value)))
    {
    case G_TYPE_CHAR:
      if (!fits_signed (negative, magnitude, G_MAXINT8))
        return FALSE;
      g_value_set_schar (value, to_signed (negative, magnitude));
      return TRUE;
    case G_TYPE_INT:
      if (!fits_signed (negative, magnitude, G_MAXINT))
        return FALSE;
      g_value_set_int (value, to_signed (negative, magnitude));
      return TRUE;
    case G_TYPE_LONG:
      if (!fits_signed (negative, magnitude, G_MAXLONG))
        return FALSE;
      g_value_set_long (value, to_signed (negative, magnitude));
      return TRUE;
    case G_TYPE_INT64:
      if (!fits_signed (negative, magnitude, G_MAXINT64))
        return FALSE;
      g_value_set_int64 (value, to_signed (negative, magnitude));
      return TRUE;
    case G_TYPE_UCHAR:
      if (negative || magnitude > G_MAXUINT8)
        return FALSE;
      g_value_set_uchar (value, magnitude);
      return TRUE;
    case G_TYPE_UINT:
      if (negative || magnitude > G_MAXUINT)
        return FALSE;
      g_value_set_uint (value, magnitude);
      return TRUE;
    case G_TYPE_ULONG:
      if (negative || magnitude > G_MAXULONG)
        return FALSE;
      g_value_set_ulong (value, magnitude);
      return TRUE;
    case G_TYPE_UINT64:
      if (negative)
        return FALSE;
      g_value_set_uint64 (value, magnitude);
      return TRUE;
    default:
      return FALSE;
    }
}

/* Converts @value into @converted, initialized here to @pspec's type. */
static gboolean
convert_property_value (GType          type,
                        GParamSpec    *pspec,
                        const GValue  *value,
                        GValue        *converted,
                        GError       **error)
{
  gboolean negative;
  guint64 magnitude;
  gboolean ok;

  g_value_init (converted, pspec->value_type);
  if (g_value_type_compatible (G_VALUE_TYPE (value), pspec->value_type))
    {
      g_value_copy (value, converted);
      ok = TRUE;
    }
  else if (value_get_integer (value, &negative, &magnitude))
    {
      ok = value_set_integer (converted, negative, magnitude);
      if (!ok && value_set_integer (converted, FALSE, 0))
        {
          /* A number of the wrong size, rather than of the wrong kind. */
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property \"%s\" of sandbox driver %s is out of range",
                       pspec->name, g_type_name (type));
          return FALSE;
        }
    }
  else
    ok = FALSE;

  if (!ok)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Property \"%s\" of sandbox driver %s takes a %s, not a %s",
                   pspec->name, g_type_name (type), g_type_name (pspec->value_type),
                   G_VALUE_TYPE_NAME (value));
      return FALSE;
    }

  /* The property's own bounds: GObject would clamp with a g_warning(). */
  if (g_param_value_validate (pspec, converted))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Property \"%s\" of sandbox driver %s is out of range",
                   pspec->name, g_type_name (type));
      return FALSE;
    }
  return TRUE;
}

/* Checks @names and @values against @type's properties (its own, and
 * those of the driver it wraps: see "Inner drivers" below); fills
 * @converted (n_properties values, unset on entry) with the values to
 * construct with. */
static gboolean
convert_properties (GType          type,
                    guint          n_properties,
                    const char   **names,
                    const GValue  *values,
                    GValue        *converted,
                    GError       **error)
{
  g_autofree GParamSpec **pspecs = g_new0 (GParamSpec *, n_properties + 1);

  for (guint i = 0; i < n_properties; i++)
    {
      GType owner_type;
      GParamSpec *pspec;

      if (names[i] == NULL)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property name %u of sandbox driver %s is missing", i, g_type_name (type));
          return FALSE;
        }

      pspec = pspecs[i] = sandbox_backend_find_settable_property (type, names[i], &owner_type);
      if (pspec == NULL)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Sandbox driver %s has no settable property \"%s\"",
                       g_type_name (type), names[i]);
          return FALSE;
        }
      /* "state-directory" and "state_directory" are one property. */
      for (guint j = 0; j < i; j++)
        if (pspecs[j] == pspec)
          {
            g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                         "Property \"%s\" of sandbox driver %s is given twice",
                         names[i], g_type_name (type));
            return FALSE;
          }

      if (!G_IS_VALUE (&values[i]))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property \"%s\" of sandbox driver %s has no value",
                       pspec->name, g_type_name (owner_type));
          return FALSE;
        }

      if (!convert_property_value (owner_type, pspec, &values[i], &converted[i], error))
        return FALSE;
    }

  return TRUE;
}

/* Inner drivers -------------------------------------------------------------
 *
 * A driver built on another backend (the `cluster` driver over a
 * `bubblewrap` backend it makes) takes that backend's properties as its
 * own, named with the inner driver's name and a dot: `bubblewrap.tmp-size`
 * (a dot is in no GObject property name). The wrapping driver declares its
 * inner driver (sandbox_backend_base_class_set_inner_driver());
 * sandbox_backend_newv() checks such properties against the inner driver's
 * and keeps them on the new backend, and the driver's
 * sandbox_backend_base_new_inner() constructs the inner backend with them
 * and its own. So a wrapping driver mirrors none of them.
 */

#define INNER_SEPARATOR '.'

/* What newv() kept for sandbox_backend_base_new_inner(). */
typedef struct
{
  GPtrArray *names;   /* the inner driver's names, without the prefix */
  GArray *values;     /* GValue, converted to the inner properties' types */
} InnerProperties;

static void
inner_properties_free (gpointer data)
{
  InnerProperties *inner = data;

  g_ptr_array_unref (inner->names);
  g_array_unref (inner->values);
  g_free (inner);
}

static GQuark
inner_properties_quark (void)
{
  return g_quark_from_static_string ("sandbox-backend-inner-properties");
}

/* The driver @type's backends wrap, or NULL. */
static const char *
inner_driver_of (GType type)
{
  g_autoptr(GTypeClass) klass = NULL;

  if (!g_type_is_a (type, SANDBOX_TYPE_BACKEND_BASE))
    return NULL;
  klass = g_type_class_ref (type);
  return SANDBOX_BACKEND_BASE_CLASS (klass)->inner_driver;
}

/*
 * sandbox_backend_find_settable_property:
 * @type: a driver's backend type
 * @name: a property name: the driver's own, or `DRIVER.NAME` for a
 *   property of the driver @type wraps
 * @owner_type: (out): the backend type whose property it is
 *
 * Returns: (nullable): the settable property @name names, or %NULL
 */
GParamSpec *
sandbox_backend_find_settable_property (GType       type,
                                        const char *name,
                                        GType      *owner_type)
{
  const char *separator = strchr (name, INNER_SEPARATOR);
  const char *inner = NULL;
  g_autoptr(GTypeClass) klass = NULL;
  GParamSpec *pspec;

  *owner_type = type;
  if (separator != NULL)
    {
      inner = inner_driver_of (type);
      if (inner == NULL || strlen (inner) != (gsize) (separator - name) ||
          strncmp (inner, name, separator - name) != 0)
        return NULL;
      *owner_type = sandbox_lookup_driver (inner, NULL);
      if (*owner_type == G_TYPE_INVALID)
        return NULL;
      name = separator + 1;
    }
  klass = g_type_class_ref (*owner_type);
  pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), name);
  return pspec != NULL && (pspec->flags & G_PARAM_WRITABLE) ? pspec : NULL;
}

/* Splits @names and @converted (newv()'s) into the backend's own and the
 * inner driver's (without the prefix, taken into @inner). */
static void
split_inner_properties (guint            n_properties,
                        const char     **names,
                        GValue          *converted,
                        GPtrArray       *own_names,
                        GArray          *own_values,
                        InnerProperties *inner)
{
  for (guint i = 0; i < n_properties; i++)
    {
      const char *separator = strchr (names[i], INNER_SEPARATOR);
      GValue moved = G_VALUE_INIT;

      g_value_init (&moved, G_VALUE_TYPE (&converted[i]));
      g_value_copy (&converted[i], &moved);
      if (separator != NULL)
        {
          g_ptr_array_add (inner->names, g_strdup (separator + 1));
          g_array_append_val (inner->values, moved);
        }
      else
        {
          g_ptr_array_add (own_names, (gpointer) names[i]);
          g_array_append_val (own_values, moved);
        }
    }
}

static GArray *
new_value_array (void)
{
  GArray *values = g_array_new (FALSE, TRUE, sizeof (GValue));

  g_array_set_clear_func (values, (GDestroyNotify) g_value_unset);
  return values;
}

/**
 * sandbox_backend_base_class_set_inner_driver:
 * @klass: a driver's backend class
 * @driver: the driver whose backend this driver's backends are built on
 *   (`bubblewrap` for `cluster`)
 *
 * For a driver's class_init(): declares that its backends make a backend
 * of @driver (with [method@Sandbox.BackendBase.new_inner]), and take that
 * backend's properties as their own, named `DRIVER.NAME`
 * (`bubblewrap.tmp-size`), in [func@Sandbox.Backend.newv],
 * [func@Sandbox.Backend.new] and [func@Sandbox.Backend.parse_property].
 */
void
sandbox_backend_base_class_set_inner_driver (SandboxBackendBaseClass *klass,
                                             const char              *driver)
{
  g_return_if_fail (SANDBOX_IS_BACKEND_BASE_CLASS (klass));
  g_return_if_fail (driver != NULL && strchr (driver, INNER_SEPARATOR) == NULL);

  klass->inner_driver = g_intern_string (driver);
}

/* Whether @inner sets what @names already does; the error names it. */
static gboolean
check_inner_not_set_by_driver (SandboxBackendBase     *self,
                               GType                   inner_type,
                               const InnerProperties  *inner,
                               guint                   n_properties,
                               const char            **names,
                               GError                **error)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (inner_type);
  const char *driver = SANDBOX_BACKEND_BASE_GET_CLASS (self)->inner_driver;

  for (guint i = 0; i < inner->names->len; i++)
    for (guint j = 0; j < n_properties; j++)
      if (g_object_class_find_property (G_OBJECT_CLASS (klass), inner->names->pdata[i]) ==
          g_object_class_find_property (G_OBJECT_CLASS (klass), names[j]))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property \"%s%c%s\" of sandbox driver %s is that driver's own to set",
                       driver, INNER_SEPARATOR, (const char *) inner->names->pdata[i],
                       G_OBJECT_TYPE_NAME (self));
          return FALSE;
        }
  return TRUE;
}

/**
 * sandbox_backend_base_new_inner:
 * @self: a backend whose class has an inner driver
 *   ([method@Sandbox.BackendBaseClass.set_inner_driver])
 * @n_properties: the number of properties the driver sets itself
 * @names: (array length=n_properties): their names
 * @values: (array length=n_properties): their values
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * For a driver's @init_backend: makes the backend it is built on, with
 * @names and @values and the inner driver's properties @self was given
 * (`DRIVER.NAME`). One of those naming a property the driver sets itself
 * fails with %SANDBOX_ERROR_INVALID; otherwise as
 * [func@Sandbox.Backend.newv].
 *
 * Returns: (transfer full): the inner backend, or %NULL with @error set
 */
SandboxBackend *
sandbox_backend_base_new_inner (SandboxBackendBase  *self,
                                guint                n_properties,
                                const char         **names,
                                const GValue        *values,
                                GCancellable        *cancellable,
                                GError             **error)
{
  const char *driver;
  InnerProperties *inner;
  g_autoptr(GPtrArray) all_names = g_ptr_array_new ();
  g_autoptr(GArray) all_values = NULL;
  GType inner_type;

  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (self), NULL);
  driver = SANDBOX_BACKEND_BASE_GET_CLASS (self)->inner_driver;
  g_return_val_if_fail (driver != NULL, NULL);

  inner_type = sandbox_lookup_driver (driver, error);
  if (inner_type == G_TYPE_INVALID)
    return NULL;
  inner = g_object_get_qdata (G_OBJECT (self), inner_properties_quark ());
  if (inner != NULL &&
      !check_inner_not_set_by_driver (self, inner_type, inner, n_properties, names, error))
    return NULL;

  all_values = g_array_sized_new (FALSE, TRUE, sizeof (GValue), n_properties);
  for (guint i = 0; i < n_properties; i++)
    {
      g_ptr_array_add (all_names, (gpointer) names[i]);
      g_array_append_vals (all_values, &values[i], 1);
    }
  for (guint i = 0; inner != NULL && i < inner->names->len; i++)
    {
      g_ptr_array_add (all_names, inner->names->pdata[i]);
      g_array_append_vals (all_values, &g_array_index (inner->values, GValue, i), 1);
    }
  /* The values are borrowed: all_values owns none. */
  return sandbox_backend_newv (driver, all_names->len, (const char **) all_names->pdata,
                               (const GValue *) all_values->data, cancellable, error);
}

/**
 * sandbox_backend_newv:
 * @driver: the driver's name, e.g. `bubblewrap` or `memory`
 * @n_properties: the number of properties
 * @names: (array length=n_properties): the property names
 * @values: (array length=n_properties): the property values
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Creates a backend of the named driver; see [func@Sandbox.Backend.new]. Every
 * name must be a settable property of the driver (or, for a driver built on
 * another, `DRIVER.NAME` for one of that driver's: see
 * [method@Sandbox.BackendBaseClass.set_inner_driver]), given once; every value
 * must be set and convert to the property's type — the same type, or a
 * number that fits the property's numeric type exactly — and be within the
 * property's range. Otherwise fails with %SANDBOX_ERROR_INVALID naming the
 * property (or, for a %NULL name, its position).
 *
 * Returns: (transfer full): a new backend, or %NULL with @error set
 */
SandboxBackend *
sandbox_backend_newv (const char    *driver,
                      guint          n_properties,
                      const char   **names,
                      const GValue  *values,
                      GCancellable  *cancellable,
                      GError       **error)
{
  g_autoptr(GObject) backend = NULL;
  GValue *converted;
  GType type;
  gboolean ok;

  g_return_val_if_fail (driver != NULL, NULL);
  g_return_val_if_fail (n_properties == 0 || (names != NULL && values != NULL), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  type = sandbox_lookup_driver (driver, error);
  if (type == G_TYPE_INVALID)
    return NULL;

  converted = g_new0 (GValue, n_properties);
  ok = convert_properties (type, n_properties, names, values, converted, error);
  if (ok)
    {
      g_autoptr(GPtrArray) own_names = g_ptr_array_new ();
      g_autoptr(GArray) own_values = new_value_array ();
      InnerProperties *inner = g_new0 (InnerProperties, 1);

      inner->names = g_ptr_array_new_with_free_func (g_free);
      inner->values = new_value_array ();
      split_inner_properties (n_properties, names, converted, own_names, own_values, inner);
      backend = g_object_new_with_properties (type, own_names->len,
                                              (const char **) own_names->pdata,
                                              (const GValue *) own_values->data);
      g_object_set_qdata_full (backend, inner_properties_quark (), inner, inner_properties_free);
    }
  for (guint i = 0; i < n_properties; i++)
    if (G_IS_VALUE (&converted[i]))
      g_value_unset (&converted[i]);
  g_free (converted);

  if (!ok || !g_initable_init (G_INITABLE (backend), cancellable, error))
    return NULL;

  return (SandboxBackend *) g_steal_pointer (&backend);
}
