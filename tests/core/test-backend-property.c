/* test-backend-property.c — a backend property's value from text
 *
 * sandbox_backend_parse_property() is what `sandboxctl --driver-option` and
 * `sandbox-conformance --property` turn user text with. A backend type of
 * this file has a property of every type the parser knows (and some it
 * must refuse), and every row below is text someone could type: the good
 * forms become exactly the value meant, everything else is one
 * SANDBOX_ERROR_INVALID naming the property, with @value left unset.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <sandbox-backend-driver.h>

/* An enum and flags of this test's own, by nick and by name. */
typedef enum { TEST_COLOUR_RED, TEST_COLOUR_GREEN } TestColour;
typedef enum { TEST_MODE_READ = 1 << 0, TEST_MODE_WRITE = 1 << 1 } TestMode;

GType test_colour_get_type (void);
GType test_mode_get_type (void);

G_DEFINE_ENUM_TYPE (TestColour, test_colour,
                    G_DEFINE_ENUM_VALUE (TEST_COLOUR_RED, "red"),
                    G_DEFINE_ENUM_VALUE (TEST_COLOUR_GREEN, "green"))
G_DEFINE_FLAGS_TYPE (TestMode, test_mode,
                     G_DEFINE_ENUM_VALUE (TEST_MODE_READ, "read"),
                     G_DEFINE_ENUM_VALUE (TEST_MODE_WRITE, "write"))

#define TEST_TYPE_TYPED_BACKEND (test_typed_backend_get_type ())
G_DECLARE_FINAL_TYPE (TestTypedBackend, test_typed_backend, TEST, TYPED_BACKEND,
                      SandboxBackendBase)

/* Values are never stored: the parser only reads the pspecs. */
struct _TestTypedBackend
{
  SandboxBackendBase parent_instance;
};

static void
test_typed_backend_iface_init (SandboxBackendInterface *iface)
{
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestTypedBackend, test_typed_backend, SANDBOX_TYPE_BACKEND_BASE,
                               G_IMPLEMENT_INTERFACE (SANDBOX_TYPE_BACKEND,
                                                      test_typed_backend_iface_init))

static void
test_typed_backend_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  g_param_value_set_default (pspec, value);
}

static void
test_typed_backend_set_property (GObject *object, guint prop_id, const GValue *value,
                                 GParamSpec *pspec)
{
}

static void
test_typed_backend_class_init (TestTypedBackendClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
  GParamSpec *pspecs[] = {
    g_param_spec_string ("text", NULL, NULL, NULL, rw),
    g_param_spec_boolean ("switch", NULL, NULL, FALSE, rw),
    g_param_spec_char ("char", NULL, NULL, G_MININT8, G_MAXINT8, 0, rw),
    g_param_spec_uchar ("uchar", NULL, NULL, 0, G_MAXUINT8, 0, rw),
    g_param_spec_int ("small", NULL, NULL, -10, 10, 0, rw),
    g_param_spec_uint ("limit", NULL, NULL, 1, 1024, 8, rw),
    g_param_spec_uint ("uint", NULL, NULL, 0, G_MAXUINT, 0, rw),
    g_param_spec_long ("long", NULL, NULL, G_MINLONG, G_MAXLONG, 0, rw),
    g_param_spec_ulong ("ulong", NULL, NULL, 0, G_MAXULONG, 0, rw),
    g_param_spec_int64 ("int64", NULL, NULL, G_MININT64, G_MAXINT64, 0, rw),
    g_param_spec_uint64 ("uint64", NULL, NULL, 0, G_MAXUINT64, 0, rw),
    g_param_spec_double ("fraction", NULL, NULL, 0, 1, 0, rw),
    g_param_spec_float ("float", NULL, NULL, -1, 1, 0, rw),
    g_param_spec_enum ("colour", NULL, NULL, test_colour_get_type (), TEST_COLOUR_RED, rw),
    g_param_spec_flags ("mode", NULL, NULL, test_mode_get_type (), 0, rw),
    g_param_spec_boxed ("list", NULL, NULL, G_TYPE_STRV, rw),
    g_param_spec_object ("file", NULL, NULL, G_TYPE_FILE, rw),
    g_param_spec_boxed ("bytes", NULL, NULL, G_TYPE_BYTES, rw),
    g_param_spec_unichar ("unichar", NULL, NULL, 'a', rw),
    g_param_spec_string ("read-only", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS),
  };

  object_class->get_property = test_typed_backend_get_property;
  object_class->set_property = test_typed_backend_set_property;
  /* name, state-directory and max-concurrent-commands are the base's. */
  for (guint i = 0; i < G_N_ELEMENTS (pspecs); i++)
    g_object_class_install_property (object_class, 1 + i, pspecs[i]);
}

static void
test_typed_backend_init (TestTypedBackend *self)
{
}

/* Parses NAME=TEXT; on failure checks the one error channel. */
static gboolean
parse (const char  *name,
       const char  *text,
       GValue      *value,
       GError     **error)
{
  gboolean ok = sandbox_backend_parse_property (TEST_TYPE_TYPED_BACKEND, name, text, value, error);

  /* One error channel: FALSE with an error and no value, or TRUE with a
   * value and no error. */
  g_assert_true (ok == (*error == NULL));
  g_assert_true (ok == G_IS_VALUE (value));
  return ok;
}

/* The text is refused, with an error naming the property and @says. */
static void
assert_refused (const char *name,
                const char *text,
                const char *says)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autoptr(GError) error = NULL;
  g_autofree char *named = g_strdup_printf ("“%s”", name);

  if (parse (name, text, &value, &error))
    g_error ("%s=%s was accepted", name, text);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  if (strstr (error->message, named) == NULL || strstr (error->message, says) == NULL)
    g_error ("%s=%s: “%s” does not name the property and say “%s”",
             name, text, error->message, says);
}

/* The text is accepted; returns the value for the caller to check. */
static void
assert_parsed (const char *name,
               const char *text,
               GValue     *value)
{
  g_autoptr(GError) error = NULL;

  parse (name, text, value, &error);
  g_assert_no_error (error);
  g_assert_true (G_IS_VALUE (value));
}

#define ASSERT_PARSED(name, text, type, getter, expected) \
  G_STMT_START { \
    g_auto(GValue) _value = G_VALUE_INIT; \
    assert_parsed (name, text, &_value); \
    g_assert_true (G_VALUE_HOLDS (&_value, type)); \
    g_assert_true (getter (&_value) == (expected)); \
  } G_STMT_END

static void
test_strings (void)
{
  g_auto(GValue) value = G_VALUE_INIT;

  /* As given, = and commas included: a string is never split. */
  assert_parsed ("text", "a=b, c\n", &value);
  g_assert_cmpstr (g_value_get_string (&value), ==, "a=b, c\n");
  g_value_unset (&value);
  assert_parsed ("text", "", &value);
  g_assert_cmpstr (g_value_get_string (&value), ==, "");
}

static void
test_booleans (void)
{
  const char *yes[] = { "true", "TRUE", "yes", "Yes", "on", "1" };
  const char *no[] = { "false", "False", "no", "NO", "off", "0" };
  /* Near misses: a typo must not silently mean false (or true). */
  const char *bad[] = { "", "maybe", "2", "10", "00", "-1", " true", "true ", "truex", "t", "y",
                        "tr\xffue" };

  for (guint i = 0; i < G_N_ELEMENTS (yes); i++)
    ASSERT_PARSED ("switch", yes[i], G_TYPE_BOOLEAN, g_value_get_boolean, TRUE);
  for (guint i = 0; i < G_N_ELEMENTS (no); i++)
    ASSERT_PARSED ("switch", no[i], G_TYPE_BOOLEAN, g_value_get_boolean, FALSE);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    assert_refused ("switch", bad[i], "takes true or false");
}

/* What no integer property takes: an empty text, white space, trailing
 * junk, other bases, a fraction, an exponent. */
static const char *not_integers[] = {
  "", " 1", "1 ", "\t1", "1\n", "1x", "x1", "0x10", "1.0", "1e3", "1,000", "1_000", "--1",
  "+-1", "one", "١",   /* an Arabic-Indic digit one */
};

static void
test_integers (void)
{
  const char *names[] = { "char", "uchar", "small", "limit", "uint", "long", "ulong", "int64",
                          "uint64" };

  for (guint n = 0; n < G_N_ELEMENTS (names); n++)
    for (guint i = 0; i < G_N_ELEMENTS (not_integers); i++)
      assert_refused (names[n], not_integers[i], "takes an integer from");

  /* Each width at its ends, and one past them (give parse_integer()'s
   * g_ascii_string_to_unsigned() 0 and G_MAXUINT64 instead of the
   * property's bounds: uchar=256 is then accepted, as 0). */
  ASSERT_PARSED ("char", "-128", G_TYPE_CHAR, g_value_get_schar, -128);
  ASSERT_PARSED ("char", "127", G_TYPE_CHAR, g_value_get_schar, 127);
  assert_refused ("char", "128", "from -128 to 127");
  assert_refused ("char", "-129", "from -128 to 127");
  ASSERT_PARSED ("uchar", "255", G_TYPE_UCHAR, g_value_get_uchar, 255);
  assert_refused ("uchar", "256", "from 0 to 255");

  ASSERT_PARSED ("small", "-10", G_TYPE_INT, g_value_get_int, -10);
  ASSERT_PARSED ("small", "+10", G_TYPE_INT, g_value_get_int, 10);
  ASSERT_PARSED ("small", "007", G_TYPE_INT, g_value_get_int, 7);   /* decimal, not octal */
  assert_refused ("small", "11", "from -10 to 10");
  assert_refused ("small", "-11", "from -10 to 10");
  assert_refused ("small", "2147483648", "from -10 to 10");

  /* The property's own range, not its type's: max-concurrent-commands. */
  ASSERT_PARSED ("limit", "1", G_TYPE_UINT, g_value_get_uint, 1);
  ASSERT_PARSED ("limit", "1024", G_TYPE_UINT, g_value_get_uint, 1024);
  assert_refused ("limit", "0", "from 1 to 1024");
  assert_refused ("limit", "1025", "from 1 to 1024");
  assert_refused ("limit", "4294967304", "from 1 to 1024");   /* 2^32 + 8: 8 if it wrapped */

  ASSERT_PARSED ("uint", "4294967295", G_TYPE_UINT, g_value_get_uint, G_MAXUINT);
  assert_refused ("uint", "4294967296", "from 0 to 4294967295");
  ASSERT_PARSED ("long", "-1", G_TYPE_LONG, g_value_get_long, -1);
  ASSERT_PARSED ("ulong", "1", G_TYPE_ULONG, g_value_get_ulong, 1);

  ASSERT_PARSED ("int64", "9223372036854775807", G_TYPE_INT64, g_value_get_int64, G_MAXINT64);
  ASSERT_PARSED ("int64", "-9223372036854775808", G_TYPE_INT64, g_value_get_int64, G_MININT64);
  assert_refused ("int64", "9223372036854775808", "takes an integer from");
  assert_refused ("int64", "-9223372036854775809", "takes an integer from");
  assert_refused ("int64", "99999999999999999999999999", "takes an integer from");

  ASSERT_PARSED ("uint64", "18446744073709551615", G_TYPE_UINT64, g_value_get_uint64,
                 G_MAXUINT64);
  assert_refused ("uint64", "18446744073709551616", "from 0 to 18446744073709551615");
  /* A sign on an unsigned property: -1 must not become 2^64 - 1. */
  assert_refused ("uint64", "-1", "from 0 to");
  assert_refused ("uint64", "-0", "from 0 to");
  assert_refused ("uint64", "+1", "from 0 to");
  assert_refused ("uint", "-4294967295", "from 0 to");   /* strtoul() would give 1 */
}

static void
test_doubles (void)
{
  /* NaN compares inside every range and an infinity is no number anyone
   * means (remove the isfinite() check in parse_double(): "nan" then
   * passes the range check, and only GObject's own validation catches it,
   * without saying what the property takes); white space and junk as for
   * integers; no locale's comma. */
  const char *bad[] = { "", "nan", "NAN", "-nan", "inf", "-inf", "infinity", " 0.5", "0.5 ",
                        "0,5", "0.5x", "1.5", "-0.1", "1e-400", "1e400", "." };

  ASSERT_PARSED ("fraction", "0.5", G_TYPE_DOUBLE, g_value_get_double, 0.5);
  ASSERT_PARSED ("fraction", "1e0", G_TYPE_DOUBLE, g_value_get_double, 1.0);
  ASSERT_PARSED ("fraction", "0", G_TYPE_DOUBLE, g_value_get_double, 0.0);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    assert_refused ("fraction", bad[i], "takes a number from 0 to 1");

  ASSERT_PARSED ("float", "-0.25", G_TYPE_FLOAT, g_value_get_float, -0.25f);
  assert_refused ("float", "1.01", "takes a number from -1 to 1");
  assert_refused ("float", "nan", "takes a number from -1 to 1");
}

static void
test_enums_and_flags (void)
{
  GType colour = test_colour_get_type ();
  GType mode = test_mode_get_type ();
  const char *bad_colours[] = { "", "blue", "Red", "1", "red ", "red,green", "TEST_COLOUR" };

  ASSERT_PARSED ("colour", "green", colour, g_value_get_enum, TEST_COLOUR_GREEN);
  ASSERT_PARSED ("colour", "TEST_COLOUR_GREEN", colour, g_value_get_enum, TEST_COLOUR_GREEN);
  for (guint i = 0; i < G_N_ELEMENTS (bad_colours); i++)
    assert_refused ("colour", bad_colours[i], "takes one of red, green");

  ASSERT_PARSED ("mode", "read,write", mode, g_value_get_flags, TEST_MODE_READ | TEST_MODE_WRITE);
  ASSERT_PARSED ("mode", " write | TEST_MODE_READ ", mode, g_value_get_flags,
                 TEST_MODE_READ | TEST_MODE_WRITE);
  ASSERT_PARSED ("mode", "", mode, g_value_get_flags, 0);
  ASSERT_PARSED ("mode", ",,", mode, g_value_get_flags, 0);
  /* The error quotes the flag that is wrong, not the whole text. */
  assert_refused ("mode", "read,execute", "takes flags from read, write, not “execute”");
  assert_refused ("mode", "3", "takes flags from read, write");
}

static void
test_string_lists (void)
{
  g_auto(GValue) value = G_VALUE_INIT;
  const char * const *list;

  assert_parsed ("list", "a,b c,", &value);
  list = g_value_get_boxed (&value);
  g_assert_cmpuint (g_strv_length ((char **) list), ==, 3);
  g_assert_cmpstr (list[0], ==, "a");
  g_assert_cmpstr (list[1], ==, "b c");
  g_assert_cmpstr (list[2], ==, "");
  g_value_unset (&value);

  assert_parsed ("list", "", &value);
  g_assert_cmpuint (g_strv_length (g_value_get_boxed (&value)), ==, 0);
}

static void
test_other_types_refused (void)
{
  /* By the type's name: text cannot be a GFile, bytes, or a character
   * (a unichar is a guint underneath, but no integer). */
  assert_refused ("file", "/etc/passwd", "is a GFile, which cannot be given as text");
  assert_refused ("bytes", "abc", "is a GBytes, which cannot be given as text");
  assert_refused ("unichar", "97", "cannot be given as text");
}

static void
test_unknown_and_read_only (void)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autoptr(GError) error = NULL;

  g_assert_false (parse ("no-such-property", "1", &value, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "no settable property “no-such-property”"));
  /* It lists what can be set, and only that. */
  g_assert_nonnull (strstr (error->message, "max-concurrent-commands"));
  g_assert_nonnull (strstr (error->message, "switch"));
  g_assert_null (strstr (error->message, "read-only"));
  g_clear_error (&error);

  assert_refused ("read-only", "x", "no settable property");

  /* "max_concurrent_commands" is the same property, as GObject has it. */
  ASSERT_PARSED ("max_concurrent_commands", "4", G_TYPE_UINT, g_value_get_uint, 4);
}

static void
test_hostile_text_quoted (void)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autoptr(GError) error = NULL;

  /* A terminal escape or a byte that is not UTF-8 reaches the user's
   * terminal (and sandboxctl --json) escaped (return @text as it is in
   * quote_text() to see these fail). */
  g_assert_false (parse ("small", "\033[2J1", &value, &error));
  g_assert_null (strchr (error->message, '\033'));
  g_assert_nonnull (strstr (error->message, "“\\033[2J1”"));
  g_clear_error (&error);

  g_assert_false (parse ("switch", "\xff\xfe", &value, &error));
  g_assert_true (g_utf8_validate (error->message, -1, NULL));
  g_assert_nonnull (strstr (error->message, "“\\377\\376”"));
  g_clear_error (&error);

  g_assert_false (parse ("no\nsuch", "1", &value, &error));
  g_assert_null (strchr (error->message, '\n'));
  g_clear_error (&error);

  /* UTF-8 text stays readable. */
  g_assert_false (parse ("colour", "grün", &value, &error));
  g_assert_nonnull (strstr (error->message, "“grün”"));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/backend-property/strings", test_strings);
  g_test_add_func ("/sandbox/backend-property/booleans", test_booleans);
  g_test_add_func ("/sandbox/backend-property/integers", test_integers);
  g_test_add_func ("/sandbox/backend-property/doubles", test_doubles);
  g_test_add_func ("/sandbox/backend-property/enums-and-flags", test_enums_and_flags);
  g_test_add_func ("/sandbox/backend-property/string-lists", test_string_lists);
  g_test_add_func ("/sandbox/backend-property/other-types-refused", test_other_types_refused);
  g_test_add_func ("/sandbox/backend-property/unknown-and-read-only", test_unknown_and_read_only);
  g_test_add_func ("/sandbox/backend-property/hostile-text-quoted", test_hostile_text_quoted);

  return g_test_run ();
}
