/* sandbox-json.c — strict JSON for untrusted input
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * json-glib 1.6 is a lenient parser: it skips comments, accepts single-quoted
 * strings, lets a later duplicate member silently replace an earlier one and
 * cuts strings at an escaped NUL. Any of these lets two readers of the same
 * document disagree about what it says, so untrusted input first goes through
 * the RFC 8259 checker below and only then to json-glib to build the tree.
 */

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-json-private.h"

/* Deep enough for any document we accept, shallow enough that neither this
 * checker nor json-glib can run out of stack. */
#define MAX_DEPTH 64

typedef struct
{
  const char *data;
  gsize length;
  gsize pos;
  guint depth;
  const char *nul_message;
  GError **error;
  GArray *widen;   /* (element-type gsize) ends of integers to read as doubles */
} Checker;

static gboolean check_value (Checker *checker);

G_GNUC_PRINTF (2, 3)
static gboolean
fail (Checker    *checker,
      const char *format,
      ...)
{
  g_autofree char *problem = NULL;
  va_list args;

  va_start (args, format);
  problem = g_strdup_vprintf (format, args);
  va_end (args);

  g_set_error (checker->error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Invalid JSON at byte %" G_GSIZE_FORMAT ": %s", checker->pos, problem);
  return FALSE;
}

static gboolean
at_end (Checker *checker)
{
  return checker->pos >= checker->length;
}

static char
peek (Checker *checker)
{
  return at_end (checker) ? '\0' : checker->data[checker->pos];
}

static void
skip_whitespace (Checker *checker)
{
  while (!at_end (checker))
    {
      char c = checker->data[checker->pos];

      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        break;
      checker->pos++;
    }
}

static gboolean
expect_literal (Checker    *checker,
                const char *literal)
{
  gsize length = strlen (literal);

  if (checker->length - checker->pos < length ||
      memcmp (checker->data + checker->pos, literal, length) != 0)
    return fail (checker, "unexpected character");

  checker->pos += length;
  return TRUE;
}

static gboolean
skip_digits (Checker *checker)
{
  gsize start = checker->pos;

  while (g_ascii_isdigit (peek (checker)))
    checker->pos++;

  return checker->pos > start;
}

/* Whether the integer literal @digits (no sign, no leading zeros) of
 * @length digits lies outside gint64, negated if @negative. */
static gboolean
integer_overflows_int64 (const char *digits,
                         gsize       length,
                         gboolean    negative)
{
  const char *limit = negative ? "9223372036854775808" : "9223372036854775807";

  if (length != strlen (limit))
    return length > strlen (limit);
  return memcmp (digits, limit, length) > 0;
}

/* number = [ "-" ] int [ frac ] [ exp ]
 *
 * json-glib 1.6 reads every integer literal into a gint64 without checking
 * for overflow: 9223372036854775808 becomes INT64_MIN, -9223372036854775809
 * becomes INT64_MAX and anything longer saturates to -1, so a huge negative
 * number could pass a "positive integer" check. JSON.parse() reads such a
 * literal as the nearest double; the end of each one is recorded so the
 * document json-glib sees gets a ".0" there and does the same. */
static gboolean
check_number (Checker *checker)
{
  gboolean negative = FALSE;
  gsize int_start;

  if (peek (checker) == '-')
    {
      negative = TRUE;
      checker->pos++;
    }
  int_start = checker->pos;

  if (peek (checker) == '0')
    {
      checker->pos++;
      if (g_ascii_isdigit (peek (checker)))
        return fail (checker, "a number must not have leading zeros");
    }
  else if (!skip_digits (checker))
    return fail (checker, "expected a digit");

  if (peek (checker) != '.' && peek (checker) != 'e' && peek (checker) != 'E' &&
      integer_overflows_int64 (checker->data + int_start, checker->pos - int_start, negative))
    {
      if (checker->widen == NULL)
        checker->widen = g_array_new (FALSE, FALSE, sizeof (gsize));
      g_array_append_val (checker->widen, checker->pos);
    }

  if (peek (checker) == '.')
    {
      checker->pos++;
      if (!skip_digits (checker))
        return fail (checker, "expected a digit after the decimal point");
    }

  if (peek (checker) == 'e' || peek (checker) == 'E')
    {
      checker->pos++;
      if (peek (checker) == '+' || peek (checker) == '-')
        checker->pos++;
      if (!skip_digits (checker))
        return fail (checker, "expected a digit in the exponent");
    }

  return TRUE;
}

static gboolean
read_hex4 (Checker  *checker,
           gunichar *value)
{
  *value = 0;

  if (checker->length - checker->pos < 4)
    return fail (checker, "truncated \\u escape");

  for (guint i = 0; i < 4; i++)
    {
      int digit = g_ascii_xdigit_value (checker->data[checker->pos + i]);

      if (digit < 0)
        return fail (checker, "invalid \\u escape");
      *value = (*value << 4) | (gunichar) digit;
    }

  checker->pos += 4;
  return TRUE;
}

/* Reads the escape after a backslash into @decoded (if not NULL). */
static gboolean
check_escape (Checker *checker,
              GString *decoded)
{
  char c = peek (checker);
  gunichar unit;
  gunichar low;

  checker->pos++;
  switch (c)
    {
    case '"': case '\\': case '/':
      if (decoded != NULL)
        g_string_append_c (decoded, c);
      return TRUE;
    case 'b': case 'f': case 'n': case 'r': case 't':
      if (decoded != NULL)
        g_string_append_c (decoded, c == 'b' ? '\b' : c == 'f' ? '\f' :
                                    c == 'n' ? '\n' : c == 'r' ? '\r' : '\t');
      return TRUE;
    case 'u':
      break;
    default:
      checker->pos--;
      return fail (checker, "invalid escape sequence");
    }

  if (!read_hex4 (checker, &unit))
    return FALSE;

  /* json-glib would cut the string here, so a reader would see less than
   * the document says. */
  if (unit == 0)
    return fail (checker, "%s", checker->nul_message != NULL
                 ? checker->nul_message : "a string contains \\u0000 (NUL)");

  if (unit >= 0xDC00 && unit <= 0xDFFF)
    return fail (checker, "unpaired low surrogate escape");

  if (unit >= 0xD800 && unit <= 0xDBFF)
    {
      if (checker->length - checker->pos < 2 ||
          checker->data[checker->pos] != '\\' || checker->data[checker->pos + 1] != 'u')
        return fail (checker, "unpaired high surrogate escape");
      checker->pos += 2;
      if (!read_hex4 (checker, &low))
        return FALSE;
      if (low < 0xDC00 || low > 0xDFFF)
        return fail (checker, "unpaired high surrogate escape");
      unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    }

  if (decoded != NULL)
    g_string_append_unichar (decoded, unit);
  return TRUE;
}

/* The input is already known to be valid UTF-8, so only ASCII needs care. */
static gboolean
check_string (Checker *checker,
              GString *decoded)
{
  if (peek (checker) != '"')
    return fail (checker, "expected a double-quoted string");
  checker->pos++;

  while (!at_end (checker))
    {
      guchar c = (guchar) checker->data[checker->pos];

      if (c == '"')
        {
          checker->pos++;
          return TRUE;
        }
      if (c < 0x20)
        return fail (checker, "unescaped control character in a string");
      if (c == '\\')
        {
          checker->pos++;
          if (!check_escape (checker, decoded))
            return FALSE;
          continue;
        }
      if (decoded != NULL)
        g_string_append_c (decoded, (char) c);
      checker->pos++;
    }

  return fail (checker, "unterminated string");
}

static gboolean
enter_container (Checker *checker)
{
  if (++checker->depth > MAX_DEPTH)
    return fail (checker, "nesting deeper than %d levels", MAX_DEPTH);
  checker->pos++;
  skip_whitespace (checker);
  return TRUE;
}

/* Consumes @close if it comes next, leaving the container. */
static gboolean
leave_container (Checker *checker,
                 char     close)
{
  if (peek (checker) != close)
    return FALSE;
  checker->pos++;
  checker->depth--;
  return TRUE;
}

/* After a member or an element: a ',' means another follows (*@more), @close
 * ends the container, anything else is an error. */
static gboolean
check_separator (Checker  *checker,
                 char      close,
                 gboolean *more)
{
  skip_whitespace (checker);
  *more = peek (checker) == ',';
  if (*more)
    {
      checker->pos++;
      return TRUE;
    }
  if (leave_container (checker, close))
    return TRUE;
  return fail (checker, "expected ',' or '%c'", close);
}

static gboolean
check_object (Checker *checker)
{
  g_autoptr(GHashTable) names = NULL;
  gboolean more = TRUE;

  if (!enter_container (checker))
    return FALSE;
  if (leave_container (checker, '}'))
    return TRUE;

  names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  while (more)
    {
      g_autoptr(GString) name = g_string_new (NULL);
      gsize name_pos;

      skip_whitespace (checker);
      name_pos = checker->pos;
      if (!check_string (checker, name))
        return FALSE;

      if (!g_hash_table_add (names, g_string_free (g_steal_pointer (&name), FALSE)))
        {
          checker->pos = name_pos;
          return fail (checker, "duplicate member name");
        }

      skip_whitespace (checker);
      if (peek (checker) != ':')
        return fail (checker, "expected ':'");
      checker->pos++;

      if (!check_value (checker) || !check_separator (checker, '}', &more))
        return FALSE;
    }

  return TRUE;
}

static gboolean
check_array (Checker *checker)
{
  gboolean more = TRUE;

  if (!enter_container (checker))
    return FALSE;
  if (leave_container (checker, ']'))
    return TRUE;

  while (more)
    if (!check_value (checker) || !check_separator (checker, ']', &more))
      return FALSE;

  return TRUE;
}

static gboolean
check_value (Checker *checker)
{
  skip_whitespace (checker);

  switch (peek (checker))
    {
    case '{':
      return check_object (checker);
    case '[':
      return check_array (checker);
    case '"':
      return check_string (checker, NULL);
    case 't':
      return expect_literal (checker, "true");
    case 'f':
      return expect_literal (checker, "false");
    case 'n':
      return expect_literal (checker, "null");
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
      return check_number (checker);
    default:
      if (at_end (checker))
        return fail (checker, "unexpected end of input");
      return fail (checker, "unexpected character");
    }
}

/* On success, *@widen is NULL or the positions where ".0" must be inserted
 * (see check_number()). */
static gboolean
check_document (const char  *json,
                gsize        length,
                const char  *nul_message,
                GArray     **widen,
                GError     **error)
{
  Checker checker = { json, length, 0, 0, nul_message, error, NULL };
  g_autoptr(GArray) positions = NULL;
  const char *invalid = NULL;

  /* Also refuses raw NUL bytes, which JSON never allows unescaped. */
  if (!g_utf8_validate_len (json, length, &invalid))
    {
      checker.pos = (gsize) (invalid - json);
      return fail (&checker, "not valid UTF-8");
    }

  if (!check_value (&checker))
    {
      g_clear_pointer (&checker.widen, g_array_unref);
      return FALSE;
    }
  positions = g_steal_pointer (&checker.widen);

  skip_whitespace (&checker);
  if (!at_end (&checker))
    return fail (&checker, "unexpected data after the JSON value");

  *widen = g_steal_pointer (&positions);
  return TRUE;
}

/* @json with ".0" after each integer literal ending at a position in @widen. */
static char *
widen_integers (const char *json,
                gsize       length,
                GArray     *widen,
                gsize      *widened_length)
{
  GString *out = g_string_sized_new (length + 2 * widen->len);
  gsize copied = 0;

  for (guint i = 0; i < widen->len; i++)
    {
      gsize end = g_array_index (widen, gsize, i);

      g_string_append_len (out, json + copied, end - copied);
      g_string_append (out, ".0");
      copied = end;
    }
  g_string_append_len (out, json + copied, length - copied);

  *widened_length = out->len;
  return g_string_free (out, FALSE);
}

JsonNode *
sandbox_json_parse_strict (const char  *json,
                           gssize       length,
                           GError     **error)
{
  return sandbox_json_parse_strict_full (json, length, NULL, error);
}

JsonNode *
sandbox_json_parse_object (const char  *json,
                           GError     **error)
{
  g_autoptr(JsonNode) root = sandbox_json_parse_strict (json, -1, error);

  if (root == NULL || JSON_NODE_HOLDS_OBJECT (root))
    return g_steal_pointer (&root);
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Invalid input: expected object, received %s", sandbox_json_type_name (root));
  return NULL;
}

JsonNode *
sandbox_json_parse_strict_full (const char  *json,
                                gssize       length,
                                const char  *nul_message,
                                GError     **error)
{
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GArray) widen = NULL;
  g_autofree char *widened = NULL;
  gsize size;

  g_return_val_if_fail (json != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  size = length < 0 ? strlen (json) : (gsize) length;

  if (!check_document (json, size, nul_message, &widen, error))
    return NULL;
  if (widen != NULL)
    {
      widened = widen_integers (json, size, widen, &size);
      json = widened;
    }

  parser = json_parser_new_immutable ();
  if (!json_parser_load_from_data (parser, json, (gssize) size, &local_error))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Invalid JSON: %s", local_error->message);
      return NULL;
    }

  return json_node_ref (json_parser_get_root (parser));
}

/* See sandbox-json-private.h. */
const char *
sandbox_json_type_name (JsonNode *node)
{
  if (node == NULL)
    return "undefined";

  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      return "object";
    case JSON_NODE_ARRAY:
      return "array";
    case JSON_NODE_NULL:
      return "null";
    case JSON_NODE_VALUE:
    default:
      break;
    }

  switch (json_node_get_value_type (node))
    {
    case G_TYPE_BOOLEAN:
      return "boolean";
    case G_TYPE_STRING:
      return "string";
    default:
      return "number";
    }
}

/* Whether @node is present and holds a JSON string. */
gboolean
sandbox_json_node_is_string (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_STRING;
}

GBytes *
sandbox_json_base64_decode (const char *text)
{
  gsize length = strlen (text);
  gsize padding = 0;
  guchar *data;

  if (length % 4 != 0)
    return NULL;
  for (gsize i = 0; i < length; i++)
    {
      char c = text[i];

      if (c == '=')
        {
          if (i + 2 < length)
            return NULL;
          padding++;
        }
      else if (padding > 0 || !(g_ascii_isalnum (c) || c == '+' || c == '/'))
        return NULL;
    }
  if (length == 0)
    return g_bytes_new (NULL, 0);
  data = g_base64_decode (text, &length);
  return g_bytes_new_take (data, length);
}
