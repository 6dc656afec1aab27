/* test-validation.c — every row of the conformance validation vectors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "sandbox-command.h"
#include "sandbox-error.h"
#include "sandbox-network-policy.h"
#include "sandbox-state.h"

#define MIN_ROWS 40

typedef struct
{
  char *kind;
  char *input;   /* the raw JSON text of the row's input, byte for byte */
  gboolean valid;
  char *reference_message;
} Row;

static void
row_free (gpointer data)
{
  Row *row = data;

  g_free (row->kind);
  g_free (row->input);
  g_free (row->reference_message);
  g_free (row);
}

/* Returns the end of the JSON value starting at @p. The vectors are trusted
 * and well-formed; this only has to find where a value ends. */
static const char *
skip_value (const char *p)
{
  int depth = 0;

  do
    {
      if (*p == '"')
        {
          for (p++; *p != '"'; p++)
            if (*p == '\\')
              p++;
          p++;
        }
      else if (*p == '{' || *p == '[')
        depth++, p++;
      else if (*p == '}' || *p == ']')
        depth--, p++;
      else if (depth == 0)
        {
          while (*p != '\0' && *p != ',' && *p != '}' && *p != ']')
            p++;
          return p;
        }
      else
        p++;
    }
  while (depth > 0 && *p != '\0');

  return p;
}

/* json-glib 1.6 cuts strings at "\u0000", so the input is taken from the
 * line's text instead of being re-serialized from a parsed tree. */
static char *
raw_member (const char *line,
            const char *name)
{
  g_autofree char *quoted = g_strdup_printf ("\"%s\"", name);
  const char *p = line;

  g_assert_true (*p == '{');
  p++;
  while (*p != '\0' && *p != '}')
    {
      const char *key = p + strspn (p, " ,");
      const char *key_end = skip_value (key);
      const char *value = key_end + strspn (key_end, " :");
      const char *value_end = skip_value (value);

      if ((gsize) (key_end - key) == strlen (quoted) && strncmp (key, quoted, strlen (quoted)) == 0)
        return g_strndup (value, value_end - value);
      p = value_end;
    }

  return NULL;
}

static GPtrArray *
load_rows (void)
{
  const char *dir = g_getenv ("SANDBOX_CONFORMANCE_DIR");
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GError) error = NULL;
  GPtrArray *rows = g_ptr_array_new_with_free_func (row_free);

  g_assert_nonnull (dir);
  path = g_build_filename (dir, "validation.jsonl", NULL);
  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);

  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonObject *object;
      Row *row;

      if (*g_strstrip (lines[i]) == '\0')
        continue;

      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
      object = json_node_get_object (json_parser_get_root (parser));

      row = g_new0 (Row, 1);
      row->kind = g_strdup (json_object_get_string_member (object, "kind"));
      row->valid = json_object_get_boolean_member (object, "valid");
      if (json_object_has_member (object, "reference_message"))
        row->reference_message = g_strdup (json_object_get_string_member (object,
                                                                          "reference_message"));
      row->input = raw_member (lines[i], "input");
      g_assert_nonnull (row->input);
      g_ptr_array_add (rows, row);
    }

  return rows;
}

static GObject *
parse_input (const Row  *row,
             GError    **error)
{
  if (g_str_equal (row->kind, "network-policy"))
    return G_OBJECT (sandbox_network_policy_new_from_json (row->input, error));
  if (g_str_equal (row->kind, "state"))
    return G_OBJECT (sandbox_state_new_from_json (row->input, error));
  if (g_str_equal (row->kind, "command"))
    return G_OBJECT (sandbox_command_new_from_json (row->input, error));

  g_error ("Unknown kind “%s” in validation.jsonl", row->kind);
}

static void
test_row (gconstpointer data)
{
  const Row *row = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) parsed = NULL;

  g_test_message ("%s: %s", row->kind, row->input);
  parsed = parse_input (row, &error);

  if (row->valid)
    {
      g_assert_no_error (error);
      g_assert_nonnull (parsed);
      return;
    }

  g_assert_null (parsed);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (row->reference_message);
  if (strstr (error->message, row->reference_message) == NULL)
    g_error ("Message “%s” does not contain the reference's “%s”",
             error->message, row->reference_message);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GPtrArray) rows = NULL;
  GHashTable *counters;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  rows = load_rows ();
  g_assert_cmpuint (rows->len, >=, MIN_ROWS);

  counters = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < rows->len; i++)
    {
      Row *row = g_ptr_array_index (rows, i);
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (counters, row->kind));
      g_autofree char *test_path = g_strdup_printf ("/sandbox/validation/%s/row-%02u",
                                                    row->kind, n);

      g_hash_table_insert (counters, row->kind, GUINT_TO_POINTER (n + 1));
      g_test_add_data_func (test_path, row, test_row);
    }
  g_hash_table_unref (counters);

  return g_test_run ();
}
