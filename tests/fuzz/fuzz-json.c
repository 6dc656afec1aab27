/* fuzz-json.c — the strict JSON front end every parser of untrusted input uses
 *
 * Properties: whatever sandbox_json_parse_strict() accepts is valid UTF-8
 * without NUL bytes, and has no duplicate object member in any spelling
 * ("a" and "\u0061" are the same name): a plain json-glib parser, which
 * silently keeps the last duplicate, sees exactly as many members as the
 * tree holds. Refusals are SANDBOX_ERROR_INVALID with a UTF-8 message.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#include "sandbox-json-private.h"
#include "sandbox-error.h"

static void
count_member (guint *count)
{
  (*count)++;
}

static guint
count_tree_members (JsonNode *node)
{
  guint count = 0;

  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObjectIter iter;
      JsonNode *member;

      json_object_iter_init (&iter, json_node_get_object (node));
      while (json_object_iter_next (&iter, NULL, &member))
        count += 1 + count_tree_members (member);
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        count += count_tree_members (json_array_get_element (array, i));
    }

  return count;
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_common_init ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;

  /* The explicit length lets embedded NULs through: they must be refused. */
  root = sandbox_json_parse_strict ((const char *) data, (gssize) size, &error);
  if (root == NULL)
    {
      FUZZ_CHECK (error != NULL);
      FUZZ_CHECK (g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID));
      FUZZ_CHECK (error->message != NULL && g_utf8_validate (error->message, -1, NULL));
      return 0;
    }
  FUZZ_CHECK (error == NULL);
  FUZZ_CHECK (memchr (data, '\0', size) == NULL);

  FUZZ_CHECK (g_utf8_validate ((const char *) data, (gssize) size, NULL));

  {
    g_autoptr(JsonParser) parser = json_parser_new ();
    guint parsed_members = 0;

    g_signal_connect_swapped (parser, "object-member", G_CALLBACK (count_member), &parsed_members);
    FUZZ_CHECK (json_parser_load_from_data (parser, (const char *) data, (gssize) size, NULL));
    /* Not json_node_equal(): the strict parser reads integers beyond gint64
     * as doubles, where json-glib alone wraps them. */
    FUZZ_CHECK (count_tree_members (root) == parsed_members);
  }

  return 0;
}
