/* test-json.c — the strict JSON parser
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-json-private.h"

static void
assert_rejected (const char *json,
                 gssize      length,
                 const char *problem)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sandbox_json_parse_strict (json, length, &error);

  g_assert_null (node);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_true (g_str_has_prefix (error->message, "Invalid JSON at byte "));
  if (strstr (error->message, problem) == NULL)
    g_error ("“%s”: message “%s” does not mention “%s”", json, error->message, problem);
}

static JsonNode *
assert_accepted (const char *json)
{
  g_autoptr(GError) error = NULL;
  JsonNode *node = sandbox_json_parse_strict (json, -1, &error);

  g_assert_no_error (error);
  g_assert_nonnull (node);
  return node;
}

static void
test_rejects_comments (void)
{
  assert_rejected ("{\"a\": 1 /* c */}", -1, "expected ',' or '}'");
  assert_rejected ("// c\n{}", -1, "unexpected character");
  assert_rejected ("[1, # c\n 2]", -1, "unexpected character");
}

static void
test_rejects_single_quotes (void)
{
  assert_rejected ("{'a': 1}", -1, "expected a double-quoted string");
  assert_rejected ("['a']", -1, "unexpected character");
}

static void
test_rejects_duplicate_members (void)
{
  assert_rejected ("{\"a\": 1, \"a\": 2}", -1, "at byte 9: duplicate member name");
}

static void
test_rejects_duplicates_spelled_differently (void)
{
  /* "\u0061" is "a": the decoded names collide. */
  assert_rejected ("{\"a\": 1, \"\\u0061\": 2}", -1, "duplicate member name");
  /* Same name in different objects is fine. */
  g_autoptr(JsonNode) node = assert_accepted ("{\"a\": {\"a\": 1}, \"b\": [{\"a\": 2}, {\"a\": 3}]}");
}

static void
test_rejects_nul_escape (void)
{
  assert_rejected ("\"nul\\u0000\"", -1, "\\u0000");
  assert_rejected ("{\"a\\u0000b\": 1}", -1, "\\u0000");
}

static void
test_nul_message_is_the_callers (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sandbox_json_parse_strict_full ("[\"\\u0000\"]", -1,
                                                             "custom NUL message", &error);

  g_assert_null (node);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "custom NUL message"));
}

static void
test_rejects_lone_surrogates (void)
{
  assert_rejected ("\"\\ud800\"", -1, "unpaired high surrogate");
  assert_rejected ("\"\\ud800x\"", -1, "unpaired high surrogate");
  assert_rejected ("\"\\ud800\\u0041\"", -1, "unpaired high surrogate");
  assert_rejected ("\"\\udc00\"", -1, "unpaired low surrogate");
}

static void
test_accepts_surrogate_pairs (void)
{
  g_autoptr(JsonNode) node = assert_accepted ("\"\\ud83d\\ude00\"");

  g_assert_cmpstr (json_node_get_string (node), ==, "\xf0\x9f\x98\x80");
}

static void
test_rejects_trailing_data (void)
{
  assert_rejected ("{} {}", -1, "after the JSON value");
  assert_rejected ("1 2", -1, "after the JSON value");
  assert_rejected ("\"a\"x", -1, "after the JSON value");
}

static void
test_rejects_deep_nesting (void)
{
  g_autoptr(GString) deep = g_string_new (NULL);
  g_autoptr(GString) limit = g_string_new (NULL);
  g_autoptr(JsonNode) node = NULL;

  for (guint i = 0; i < 100000; i++)
    g_string_append_c (deep, '[');
  assert_rejected (deep->str, -1, "nesting deeper than 64");

  for (guint i = 0; i < 64; i++)
    g_string_append_c (limit, '[');
  for (guint i = 0; i < 64; i++)
    g_string_append_c (limit, ']');
  node = assert_accepted (limit->str);
}

static void
test_rejects_invalid_utf8 (void)
{
  assert_rejected ("\"\xff\"", -1, "not valid UTF-8");
  assert_rejected ("\"\xc0\xaf\"", -1, "not valid UTF-8");
  assert_rejected ("\"\xed\xa0\x80\"", -1, "not valid UTF-8");
}

static void
test_rejects_raw_nul_byte (void)
{
  assert_rejected ("\"a\0b\"", 5, "not valid UTF-8");
}

static void
test_rejects_control_characters (void)
{
  assert_rejected ("\"a\nb\"", -1, "unescaped control character");
  assert_rejected ("\"a\tb\"", -1, "unescaped control character");
}

static void
test_rejects_bad_escapes (void)
{
  assert_rejected ("\"\\x41\"", -1, "invalid escape");
  assert_rejected ("\"\\u12\"", -1, "truncated \\u escape");
  assert_rejected ("\"\\u12G4\"", -1, "invalid \\u escape");
  assert_rejected ("\"\\'\"", -1, "invalid escape");
}

static void
test_rejects_bad_numbers (void)
{
  assert_rejected ("01", -1, "leading zeros");
  assert_rejected ("1.", -1, "decimal point");
  assert_rejected (".5", -1, "unexpected character");
  assert_rejected ("+1", -1, "unexpected character");
  assert_rejected ("1e", -1, "exponent");
  assert_rejected ("-", -1, "expected a digit");
  assert_rejected ("NaN", -1, "unexpected character");
  assert_rejected ("Infinity", -1, "unexpected character");
  assert_rejected ("0x10", -1, "after the JSON value");
}

static void
test_rejects_structural_errors (void)
{
  assert_rejected ("", -1, "unexpected end of input");
  assert_rejected ("   ", -1, "unexpected end of input");
  assert_rejected ("[1,]", -1, "unexpected character");
  assert_rejected ("{\"a\":1,}", -1, "expected a double-quoted string");
  assert_rejected ("{\"a\" 1}", -1, "expected ':'");
  assert_rejected ("[1 2]", -1, "expected ',' or ']'");
  assert_rejected ("\"abc", -1, "unterminated string");
  assert_rejected ("tru", -1, "unexpected character");
  assert_rejected ("{1: 2}", -1, "expected a double-quoted string");
}

static void
test_reports_byte_offset (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sandbox_json_parse_strict ("[1, 2, x]", -1, &error);

  g_assert_null (node);
  g_assert_cmpstr (error->message, ==, "Invalid JSON at byte 7: unexpected character");
}

static void
test_accepts_valid_documents (void)
{
  g_autoptr(JsonNode) object = assert_accepted (" {\"a\": [1, -2.5e+3, true, false, null, \"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\"], \"b\": {}} ");
  g_autoptr(JsonNode) string = assert_accepted ("\"deny-all\"");
  g_autoptr(JsonNode) number = assert_accepted ("0");
  g_autoptr(JsonNode) big = assert_accepted ("2147483648");
  JsonArray *array;

  g_assert_true (JSON_NODE_HOLDS_OBJECT (object));
  array = json_object_get_array_member (json_node_get_object (object), "a");
  g_assert_cmpuint (json_array_get_length (array), ==, 6);
  g_assert_cmpfloat (json_array_get_double_element (array, 1), ==, -2500.0);
  g_assert_cmpstr (json_array_get_string_element (array, 5), ==, "\"\\/\b\f\n\r\t\xc3\xa9");
  g_assert_cmpstr (json_node_get_string (string), ==, "deny-all");
  g_assert_cmpint (json_node_get_int (number), ==, 0);
  g_assert_cmpint (json_node_get_int (big), ==, G_GINT64_CONSTANT (2147483648));
}

static void
test_respects_length (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = sandbox_json_parse_strict ("[1]garbage", 3, &error);

  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (node));
}

/* json-glib 1.6 wraps integer literals outside gint64 (-9223372036854775809
 * became INT64_MAX, so a huge negative number passed "positive" checks);
 * like JSON.parse() they are read as the nearest double instead. */
static void
test_reads_out_of_range_integers_as_doubles (void)
{
  g_autoptr(JsonNode) node =
    assert_accepted ("[9223372036854775807, -9223372036854775808, 9223372036854775808,"
                     " -9223372036854775809, 18446744073709551617, -99999999999999999999999,"
                     " 12345678901234567890.5, 1]");
  JsonArray *array = json_node_get_array (node);
  JsonNode *element;

  element = json_array_get_element (array, 0);
  g_assert_true (json_node_get_value_type (element) == G_TYPE_INT64);
  g_assert_cmpint (json_node_get_int (element), ==, G_MAXINT64);
  element = json_array_get_element (array, 1);
  g_assert_true (json_node_get_value_type (element) == G_TYPE_INT64);
  g_assert_cmpint (json_node_get_int (element), ==, G_MININT64);

  element = json_array_get_element (array, 2);
  g_assert_true (json_node_get_value_type (element) == G_TYPE_DOUBLE);
  g_assert_cmpfloat (json_node_get_double (element), ==, 9223372036854775808.0);
  element = json_array_get_element (array, 3);
  g_assert_true (json_node_get_value_type (element) == G_TYPE_DOUBLE);
  g_assert_cmpfloat (json_node_get_double (element), ==, -9223372036854775809.0);
  element = json_array_get_element (array, 4);
  g_assert_true (json_node_get_value_type (element) == G_TYPE_DOUBLE);
  g_assert_cmpfloat (json_node_get_double (element), ==, 18446744073709551617.0);
  element = json_array_get_element (array, 5);
  g_assert_true (json_node_get_value_type (element) == G_TYPE_DOUBLE);
  g_assert_cmpfloat (json_node_get_double (element), <, -9.9e22);

  /* Literals that already are doubles, and the rest of the document, are untouched. */
  element = json_array_get_element (array, 6);
  g_assert_cmpfloat (json_node_get_double (element), ==, 12345678901234567890.5);
  g_assert_cmpint (json_node_get_int (json_array_get_element (array, 7)), ==, 1);
  g_assert_cmpuint (json_array_get_length (array), ==, 8);
}

static void
test_out_of_range_integer_in_object (void)
{
  g_autoptr(JsonNode) node = assert_accepted ("{\"n\": -9223372036854775809}");
  JsonNode *member = json_object_get_member (json_node_get_object (node), "n");

  g_assert_true (json_node_get_value_type (member) == G_TYPE_DOUBLE);
  g_assert_cmpfloat (json_node_get_double (member), <, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/json/rejects-comments", test_rejects_comments);
  g_test_add_func ("/sandbox/json/rejects-single-quotes", test_rejects_single_quotes);
  g_test_add_func ("/sandbox/json/rejects-duplicate-members", test_rejects_duplicate_members);
  g_test_add_func ("/sandbox/json/rejects-duplicates-spelled-differently",
                   test_rejects_duplicates_spelled_differently);
  g_test_add_func ("/sandbox/json/rejects-nul-escape", test_rejects_nul_escape);
  g_test_add_func ("/sandbox/json/nul-message-is-the-callers", test_nul_message_is_the_callers);
  g_test_add_func ("/sandbox/json/rejects-lone-surrogates", test_rejects_lone_surrogates);
  g_test_add_func ("/sandbox/json/accepts-surrogate-pairs", test_accepts_surrogate_pairs);
  g_test_add_func ("/sandbox/json/rejects-trailing-data", test_rejects_trailing_data);
  g_test_add_func ("/sandbox/json/rejects-deep-nesting", test_rejects_deep_nesting);
  g_test_add_func ("/sandbox/json/rejects-invalid-utf8", test_rejects_invalid_utf8);
  g_test_add_func ("/sandbox/json/rejects-raw-nul-byte", test_rejects_raw_nul_byte);
  g_test_add_func ("/sandbox/json/rejects-control-characters", test_rejects_control_characters);
  g_test_add_func ("/sandbox/json/rejects-bad-escapes", test_rejects_bad_escapes);
  g_test_add_func ("/sandbox/json/rejects-bad-numbers", test_rejects_bad_numbers);
  g_test_add_func ("/sandbox/json/rejects-structural-errors", test_rejects_structural_errors);
  g_test_add_func ("/sandbox/json/reports-byte-offset", test_reports_byte_offset);
  g_test_add_func ("/sandbox/json/accepts-valid-documents", test_accepts_valid_documents);
  g_test_add_func ("/sandbox/json/respects-length", test_respects_length);
  g_test_add_func ("/sandbox/json/reads-out-of-range-integers-as-doubles",
                   test_reads_out_of_range_integers_as_doubles);
  g_test_add_func ("/sandbox/json/out-of-range-integer-in-object",
                   test_out_of_range_integer_in_object);

  return g_test_run ();
}
