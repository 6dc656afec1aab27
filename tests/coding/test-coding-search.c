/* test-coding-search.c — the search_files tool against real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Matches as path, line and text (a name holding ':' read whole, binary
 * files skipped), the glob, the cap on results, a pattern grep cannot
 * compile, a directory that is not there, and the attacks: a path out of
 * the workspace refused before anything runs, a pattern or glob shaped
 * like an option taken as data (to see it fail, drop the `-e` or the
 * `--` in grep_command(): the pattern "--version" then prints grep's
 * version, or the path is taken for an option), and a symlink to a host
 * directory searched only as what the sandbox sees.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <sandbox.h>

#include "coding-fixture.h"

static void
put (Fixture    *fixture,
     const char *path,
     const char *content)
{
  g_autofree char *arguments = NULL;
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "path");
  json_builder_add_string_value (builder, path);
  json_builder_set_member_name (builder, "content");
  json_builder_add_string_value (builder, content);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  arguments = json_generator_to_data (generator, NULL);
  result = invoke (fixture, "write_file", arguments);
  assert_ok (result);
}

static JsonArray *
matches_of (JsonObject *result)
{
  assert_ok (result);
  return json_object_get_array_member (result, "matches");
}

static gboolean
has_match (JsonArray  *matches,
           const char *path,
           gint64      line,
           const char *text)
{
  for (guint i = 0; i < json_array_get_length (matches); i++)
    {
      JsonObject *match = json_array_get_object_element (matches, i);

      if (g_strcmp0 (json_object_get_string_member (match, "path"), path) == 0 &&
          json_object_get_int_member (match, "line") == line &&
          g_strcmp0 (json_object_get_string_member (match, "text"), text) == 0)
        return TRUE;
    }
  return FALSE;
}

static void
test_search (Fixture       *fixture,
             gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(GBytes) binary = g_bytes_new_static ("main\0\1\2", 7);
  JsonArray *matches;

  put (fixture, "src/app.py", "import os\n\ndef main():\n    return os.getcwd()\n");
  put (fixture, "src/odd:name.txt", "main street\n");
  put (fixture, "docs/notes.md", "nothing here\n");
  g_assert_true (sandbox_session_write_bytes (fixture->session, "bin.dat", binary, NULL, NULL));

  result = invoke (fixture, "search_files", "{\"pattern\":\"ma[i]n\"}");
  matches = matches_of (result);
  g_assert_cmpuint (json_array_get_length (matches), ==, 2);
  g_assert_true (has_match (matches, "/workspace/src/app.py", 3, "def main():"));
  g_assert_true (has_match (matches, "/workspace/src/odd:name.txt", 1, "main street"));
  g_assert_false (json_object_get_boolean_member (result, "truncated"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "search_files", "{\"pattern\":\"main\",\"glob\":\"*.py\"}");
  matches = matches_of (result);
  g_assert_cmpuint (json_array_get_length (matches), ==, 1);
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "search_files", "{\"pattern\":\"o\",\"path\":\"src\",\"max_results\":1}");
  matches = matches_of (result);
  g_assert_cmpuint (json_array_get_length (matches), ==, 1);
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  g_assert_cmpstr (json_object_get_string_member (result, "path"), ==, "/workspace/src");
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "search_files", "{\"pattern\":\"absent-word\"}");
  g_assert_cmpuint (json_array_get_length (matches_of (result)), ==, 0);
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "search_files", "{\"pattern\":\"(\"}");
  assert_error (result, "SANDBOX_INVALID");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "search_files", "{\"pattern\":\"x\",\"path\":\"no-such-dir\"}");
  assert_error (result, "SANDBOX_INVALID");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "search_files", "{\"pattern\":\"\"}");
  assert_error (result, "SANDBOX_INVALID");
}

static void
test_search_hostile (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(JsonObject) linked = NULL;
  JsonArray *matches;

  put (fixture, "-rf", "--version\n");

  /* Out of the workspace: refused before anything runs. */
  result = invoke (fixture, "search_files", "{\"pattern\":\"root\",\"path\":\"../etc\"}");
  assert_error (result, "SANDBOX_PATH");
  g_clear_pointer (&result, json_object_unref);

  /* Option-shaped pattern, glob and path are data. */
  result = invoke (fixture, "search_files", "{\"pattern\":\"--version\"}");
  matches = matches_of (result);
  g_assert_cmpuint (json_array_get_length (matches), ==, 1);
  g_assert_true (has_match (matches, "/workspace/-rf", 1, "--version"));
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "search_files", "{\"pattern\":\"version\",\"path\":\"-rf\"}");
  g_assert_cmpuint (json_array_get_length (matches_of (result)), ==, 1);
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "search_files",
                   "{\"pattern\":\"version\",\"glob\":\"x --exclude-dir=*\"}");
  g_assert_cmpuint (json_array_get_length (matches_of (result)), ==, 0);
  g_clear_pointer (&result, json_object_unref);

  /* A link the guest plants to a host path: what is searched is what the
   * sandbox sees there (its own /etc), never the host's. */
  linked = invoke (fixture, "shell", "{\"command\":\"ln -s /etc etc-link\"}");
  assert_ok (linked);
  result = invoke (fixture, "search_files", "{\"pattern\":\"sandbox-host-marker\",\"path\":\"etc-link\"}");
  assert_ok (result);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  if (coding_test_skip_without_bwrap ())
    return 77;

  ADD ("search", test_search);
  ADD ("search-hostile", test_search_hostile);

  return g_test_run ();
}
