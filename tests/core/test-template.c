/* test-template.c — SandboxTemplate and its key
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "sandbox-digest-private.h"
#include "sandbox-error.h"
#include "sandbox-path.h"
#include "sandbox-template-private.h"

#define MIN_KEY_ROWS 6

static GPtrArray *
load_rows (const char *file)
{
  const char *dir = g_getenv ("SANDBOX_CONFORMANCE_DIR");
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GError) error = NULL;
  GPtrArray *rows = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);

  g_assert_nonnull (dir);
  path = g_build_filename (dir, file, NULL);
  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);

  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autoptr(JsonParser) parser = json_parser_new ();

      if (*g_strstrip (lines[i]) == '\0')
        continue;
      json_parser_load_from_data (parser, lines[i], -1, &error);
      g_assert_no_error (error);
      g_ptr_array_add (rows, json_object_ref (json_node_get_object (json_parser_get_root (parser))));
    }
  return rows;
}

static GPtrArray *
load_key_rows (void)
{
  return load_rows ("template-keys.jsonl");
}

static void
test_key_row (gconstpointer data)
{
  JsonObject *row = (JsonObject *) data;
  JsonObject *files = json_object_get_object_member (row, "files_base64");
  g_autoptr(SandboxTemplate) template = sandbox_template_new (json_object_get_string_member (row, "template"));
  g_autoptr(GList) paths = json_object_get_members (files);
  const char *name = json_object_get_string_member (row, "name");
  g_autoptr(GError) error = NULL;
  g_autofree char *canonical = NULL;
  g_autofree char *key = NULL;

  for (GList *l = paths; l != NULL; l = l->next)
    {
      gsize length;
      guchar *decoded = g_base64_decode (json_object_get_string_member (files, l->data), &length);
      g_autoptr(GBytes) bytes = g_bytes_new_take (decoded, length);

      g_assert_true (sandbox_template_add_file (template, l->data, bytes, &error));
      g_assert_no_error (error);
    }

  canonical = sandbox_template_dup_canonical_json (template, name);
  g_assert_cmpstr (canonical, ==, json_object_get_string_member (row, "canonical_json"));

  key = sandbox_template_compute_key (template, name, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (key, ==, json_object_get_string_member (row, "key"));
  g_assert_true (sandbox_template_key_is_valid (key));
}

/* A row of template-entry-keys.jsonl: entries of every kind, added through
 * the public API, give the canonical JSON and key written there (computed
 * by an independent serializer, tests/vectors/README.md). */
static void
test_entry_key_row (gconstpointer data)
{
  JsonObject *row = (JsonObject *) data;
  JsonArray *entries = json_object_get_array_member (row, "entries");
  g_autoptr(SandboxTemplate) template = sandbox_template_new (json_object_get_string_member (row, "template"));
  const char *name = json_object_get_string_member (row, "name");
  g_autoptr(GError) error = NULL;
  g_autofree char *canonical = NULL;
  g_autofree char *key = NULL;

  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      JsonObject *entry = json_array_get_object_element (entries, i);
      const char *path = json_object_get_string_member (entry, "path");
      const char *kind = json_object_get_string_member (entry, "kind");

      if (g_str_equal (kind, "file"))
        {
          gsize length;
          guchar *decoded = g_base64_decode (json_object_get_string_member (entry, "base64"),
                                             &length);
          g_autoptr(GBytes) bytes = g_bytes_new_take (decoded, length);
          gboolean executable = json_object_get_boolean_member_with_default (entry, "executable",
                                                                             FALSE);

          g_assert_true (sandbox_template_add_file_full (template, path, bytes,
                                                         executable ? SANDBOX_TEMPLATE_FILE_EXECUTABLE
                                                                    : SANDBOX_TEMPLATE_FILE_NONE,
                                                         &error));
        }
      else if (g_str_equal (kind, "symlink"))
        g_assert_true (sandbox_template_add_symlink (template, path,
                                                     json_object_get_string_member (entry, "target"),
                                                     &error));
      else
        g_assert_true (sandbox_template_add_empty_directory (template, path, &error));
      g_assert_no_error (error);
    }

  canonical = sandbox_template_dup_canonical_json (template, name);
  g_assert_cmpstr (canonical, ==, json_object_get_string_member (row, "canonical_json"));
  key = sandbox_template_compute_key (template, name, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (key, ==, json_object_get_string_member (row, "key"));
}

/* No two rows of template-entry-keys.jsonl share a key: an executable, a
 * link or a directory never collides with a plain file. */
static void
test_entry_keys_differ (void)
{
  g_autoptr(GPtrArray) rows = load_rows ("template-entry-keys.jsonl");
  g_autoptr(GHashTable) keys = g_hash_table_new (g_str_hash, g_str_equal);

  g_assert_cmpuint (rows->len, >=, 9);
  for (guint i = 0; i < rows->len; i++)
    g_assert_true (g_hash_table_add (keys, (gpointer) json_object_get_string_member (rows->pdata[i], "key")));
}

static void
test_key_rows_exist (void)
{
  g_autoptr(GPtrArray) rows = load_key_rows ();

  g_assert_cmpuint (rows->len, >=, MIN_KEY_ROWS);
}

static void
test_serializer_escapes_like_javascript (void)
{
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("q\"\\/\b\f\n\r\t\x01\x1f\x7f\xe2\x80\xa8é");
  g_autofree char *canonical = sandbox_template_dup_canonical_json (template, "b");

  /* JSON.stringify(["b", "q\"\\/\b\f\n\r\t\x01\x1f\x7f\u2028é", []]) */
  g_assert_cmpstr (canonical, ==,
                   "[\"b\",\"q\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f\xe2\x80\xa8é\",[]]");
}

static void
test_key_sorts_paths_in_byte_order (void)
{
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GBytes) empty = g_bytes_new_static ("", 0);
  g_auto(GStrv) paths = NULL;
  /* Whole paths in byte order: "b.txt" before "b/c" ('.' < '/'), where
   * sorting by components would put the directory "b" first. */
  const char * const expected[] = { "/workspace/B", "/workspace/a", "/workspace/a.txt",
                                    "/workspace/b.txt", "/workspace/b/c", "/workspace/é", NULL };
  guint n = G_N_ELEMENTS (expected) - 1;

  for (guint i = 0; i < n; i++)
    g_assert_true (sandbox_template_add_file (template, expected[n - 1 - i] + strlen ("/workspace/"),
                                              empty, NULL));

  paths = sandbox_template_list_paths (template);
  g_assert_true (g_strv_equal ((const char * const *) paths, expected));
  g_assert_cmpuint (sandbox_template_get_n_files (template), ==, n);
}

static void
test_key_validates_names (void)
{
  g_autoptr(SandboxTemplate) unnamed = sandbox_template_new ("");
  g_autoptr(SandboxTemplate) named = sandbox_template_new ("t");
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;

  key = sandbox_template_compute_key (unnamed, "bubblewrap", &error);
  g_assert_null (key);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  key = sandbox_template_compute_key (named, "", &error);
  g_assert_null (key);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  key = sandbox_template_compute_key (named, "b\xff", &error);
  g_assert_null (key);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
}

static void
test_key_is_valid (void)
{
  g_assert_true (sandbox_template_key_is_valid ("2cd46ef62e087c27188a23334a1530bc5e0a74316988fdf902ce12bbbcda0ccf"));
  g_assert_false (sandbox_template_key_is_valid ("2CD46EF62E087C27188A23334A1530BC5E0A74316988FDF902CE12BBBCDA0CCF"));
  g_assert_false (sandbox_template_key_is_valid ("2cd46ef62e087c27188a23334a1530bc5e0a74316988fdf902ce12bbbcda0cc"));
  g_assert_false (sandbox_template_key_is_valid ("2cd46ef62e087c27188a23334a1530bc5e0a74316988fdf902ce12bbbcda0ccf0"));
  g_assert_false (sandbox_template_key_is_valid ("../../../../etc/passwd"));
  g_assert_false (sandbox_template_key_is_valid (""));
  g_assert_false (sandbox_template_key_is_valid (NULL));
}

static void
test_add_file_refuses_bad_paths (void)
{
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autoptr(GError) error = NULL;

  g_assert_false (sandbox_template_add_file (template, "../x", bytes, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_clear_error (&error);

  g_assert_false (sandbox_template_add_file (template, "/workspace", bytes, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_cmpstr (error->message, ==, "Template file cannot be the workspace root");
  g_clear_error (&error);

  g_assert_false (sandbox_template_add_file (template, ".", bytes, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_cmpuint (sandbox_template_get_n_files (template), ==, 0);
}

static void
test_add_file_refuses_duplicates (void)
{
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_template_add_file (template, "a/b", bytes, &error));
  g_assert_false (sandbox_template_add_file (template, "/workspace/a/b", bytes, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "/workspace/a/b"));
}

/* Whether @message names @path itself, not only a path below it. */
static gboolean
names_path (const char *message,
            const char *path)
{
  for (const char *at = strstr (message, path); at != NULL; at = strstr (at + 1, path))
    {
      char next = at[strlen (path)];

      if (next != '/' && next != '.' && !g_ascii_isalnum (next))
        return TRUE;
    }
  return FALSE;
}

/* A path cannot be a file and a directory at once: a file below a file is
 * refused when it is added, in either order and at any depth, naming both
 * paths. Without the check in sandbox_template_add_file() both adds succeed
 * (and prewarm failed later with a G_IO_ERROR). */
static void
test_add_file_refuses_file_below_file (void)
{
  static const struct { const char *first, *second; } pairs[] = {
    { "a", "a/b" },
    { "a/b", "a" },
    { "a/b", "a/b/c" },
    { "a/b/c", "a/b" },
    { "a", "a/b/c" },
    { "a/b/c", "/workspace/a" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (pairs); i++)
    {
      g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
      g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
      g_autoptr(GError) error = NULL;
      g_autofree char *first = g_strconcat ("/workspace/", pairs[i].first, NULL);
      g_autofree char *second = sandbox_path_canonicalize (pairs[i].second, NULL);

      g_assert_true (sandbox_template_add_file (template, pairs[i].first, bytes, &error));
      g_assert_no_error (error);
      g_assert_false (sandbox_template_add_file (template, pairs[i].second, bytes, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      if (!names_path (error->message, first) || !names_path (error->message, second))
        g_error ("Message “%s” does not name both %s and %s", error->message, first, second);
      g_clear_error (&error);

      /* The refused file is not there; the first one and siblings are fine. */
      g_assert_cmpuint (sandbox_template_get_n_files (template), ==, 1);
      g_assert_null (sandbox_template_lookup_file (template, second));
      g_assert_true (sandbox_template_add_file (template, "a.txt", bytes, &error));
      g_assert_true (sandbox_template_add_file (template, "ab/c", bytes, &error));
      g_assert_no_error (error);
    }
}

/* A file name that is a prefix of another but not its parent is no clash. */
static void
test_add_file_accepts_prefix_siblings (void)
{
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_template_add_file (template, "a", bytes, &error));
  g_assert_true (sandbox_template_add_file (template, "ab/c", bytes, &error));
  g_assert_true (sandbox_template_add_file (template, "a.d/c", bytes, &error));
  g_assert_true (sandbox_template_add_file (template, "ab/cd", bytes, &error));
  g_assert_true (sandbox_template_add_file (template, "ab/c.d/e", bytes, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sandbox_template_get_n_files (template), ==, 5);
}

static void
test_lookup_file_by_any_path (void)
{
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);

  g_assert_true (sandbox_template_add_file (template, "a/b", bytes, NULL));
  g_assert_true (sandbox_template_lookup_file (template, "a/b") == bytes);
  g_assert_true (sandbox_template_lookup_file (template, "/workspace/a/b") == bytes);
  g_assert_null (sandbox_template_lookup_file (template, "a"));
  g_assert_null (sandbox_template_lookup_file (template, "a/../a/b"));
}

/* Reads the whole of @path in @template (through read_file() for an
 * imported file). */
static GBytes *
read_all (SandboxTemplate  *template,
          const char       *path,
          GError          **error)
{
  return sandbox_template_load_bytes (template, path, NULL, error);
}

static void
assert_reads (SandboxTemplate *template,
              const char      *path,
              const char      *expected,
              gsize            length)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) contents = read_all (template, path, &error);

  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (contents, NULL), g_bytes_get_size (contents),
                   expected, length);
}

/* Asserts that an add was refused with SANDBOX_ERROR_INVALID, and clears it. */
static void
assert_invalid (gboolean   added,
                GError   **error)
{
  g_assert_false (added);
  g_assert_error (*error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (error);
}

static void
test_add_file_full_marks_executable (void)
{
  g_autoptr(SandboxTemplate) plain = sandbox_template_new ("t");
  g_autoptr(SandboxTemplate) executable = sandbox_template_new ("t");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("#!/bin/sh\n", 10);
  g_autoptr(GError) error = NULL;
  g_autofree char *plain_key = NULL;
  g_autofree char *executable_key = NULL;

  g_assert_true (sandbox_template_add_file (plain, "configure", bytes, &error));
  g_assert_true (sandbox_template_add_file_full (executable, "configure", bytes,
                                                 SANDBOX_TEMPLATE_FILE_EXECUTABLE, &error));
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_template_get_file_flags (plain, "configure"), ==,
                   SANDBOX_TEMPLATE_FILE_NONE);
  g_assert_cmpint (sandbox_template_get_file_flags (executable, "/workspace/configure"), ==,
                   SANDBOX_TEMPLATE_FILE_EXECUTABLE);
  g_assert_true (sandbox_template_lookup_file (executable, "configure") == bytes);
  assert_reads (executable, "configure", "#!/bin/sh\n", 10);

  plain_key = sandbox_template_compute_key (plain, "b", &error);
  executable_key = sandbox_template_compute_key (executable, "b", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (plain_key, !=, executable_key);
}

static void
test_add_symlink_checks_target (void)
{
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GError) error = NULL;
  g_autofree char *longest = g_strnfill (PATH_MAX - 1, 'a');
  g_autofree char *too_long = g_strnfill (PATH_MAX, 'a');
  const char *refused[] = { "", too_long, "bad\xff" };

  g_assert_true (sandbox_template_add_symlink (template, "abs", "/usr/bin/python3", &error));
  g_assert_true (sandbox_template_add_symlink (template, "up", "../../../etc/passwd", &error));
  g_assert_true (sandbox_template_add_symlink (template, "long", longest, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (sandbox_template_lookup_symlink (template, "up"), ==, "../../../etc/passwd");
  g_assert_cmpint (sandbox_template_query_file_type (template, "abs"), ==,
                   G_FILE_TYPE_SYMBOLIC_LINK);

  for (gsize i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_assert_false (sandbox_template_add_symlink (template, "x", refused[i], &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "/workspace/x"));
      g_clear_error (&error);
    }
  g_assert_false (sandbox_template_add_symlink (template, "/workspace", "a", &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
  g_assert_cmpuint (sandbox_template_get_n_files (template), ==, 3);
}

/* Nothing lies below a link: a backend writing a/b after the link a would
 * write through it. Remove the parent check in check_no_clash() and the
 * second add succeeds. */
static void
test_add_refuses_entries_below_symlink (void)
{
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_template_add_symlink (template, "lib", "/etc", &error));
  g_assert_false (sandbox_template_add_file (template, "lib/passwd", bytes, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_true (names_path (error->message, "/workspace/lib"));
  g_clear_error (&error);
  assert_invalid (sandbox_template_add_empty_directory (template, "lib/x", &error), &error);
  assert_invalid (sandbox_template_add_symlink (template, "lib/y", "z", &error), &error);
  /* Nor is a link a directory that already has entries below it. */
  g_assert_true (sandbox_template_add_file (template, "src/a", bytes, &error));
  assert_invalid (sandbox_template_add_symlink (template, "src", "x", &error), &error);
  g_assert_false (sandbox_template_add_symlink (template, "lib", "x", &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_cmpuint (sandbox_template_get_n_files (template), ==, 2);
}

/* An empty directory is listed while nothing lies below it; with an entry
 * below, the template (and its key) is the same as without it. */
static void
test_add_empty_directory (void)
{
  g_autoptr(SandboxTemplate) with = sandbox_template_new ("t");
  g_autoptr(SandboxTemplate) without = sandbox_template_new ("t");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) paths = NULL;
  g_autofree char *with_key = NULL;
  g_autofree char *without_key = NULL;
  const char * const expected[] = { "/workspace/a/b", "/workspace/c", NULL };

  g_assert_true (sandbox_template_add_empty_directory (with, "a/b", &error));
  g_assert_true (sandbox_template_add_empty_directory (with, "a/b", &error));
  g_assert_true (sandbox_template_add_empty_directory (with, "a", &error));
  g_assert_true (sandbox_template_add_empty_directory (with, "c", &error));
  g_assert_no_error (error);
  paths = sandbox_template_list_paths (with);
  g_assert_true (g_strv_equal ((const char * const *) paths, expected));
  g_assert_cmpuint (sandbox_template_get_n_files (with), ==, 2);
  g_assert_cmpint (sandbox_template_query_file_type (with, "a"), ==, G_FILE_TYPE_DIRECTORY);

  assert_invalid (sandbox_template_add_file (with, "c", bytes, &error), &error);

  g_assert_true (sandbox_template_add_file (with, "a/b/f", bytes, &error));
  g_assert_true (sandbox_template_add_file (with, "c/g", bytes, &error));
  g_assert_true (sandbox_template_add_file (without, "c/g", bytes, &error));
  g_assert_true (sandbox_template_add_file (without, "a/b/f", bytes, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (sandbox_template_get_n_files (with), ==, 2);
  with_key = sandbox_template_compute_key (with, "b", &error);
  without_key = sandbox_template_compute_key (without, "b", &error);
  g_assert_cmpstr (with_key, ==, without_key);

  /* A file where a directory is implied, and a directory below a file, are refused. */
  assert_invalid (sandbox_template_add_empty_directory (with, "c/g", &error), &error);
  g_assert_false (sandbox_template_add_empty_directory (with, "c/g/h", &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
}

static char *
make_tree (void)
{
  g_autoptr(GError) error = NULL;
  char *root = g_dir_make_tmp ("template-XXXXXX", &error);
  g_autofree char *nested = g_build_filename (root, "src", "deep", NULL);
  g_autofree char *empty = g_build_filename (root, "empty", NULL);
  g_autofree char *top = g_build_filename (root, "top.txt", NULL);
  g_autofree char *inner = g_build_filename (nested, "inner.bin", NULL);

  g_assert_no_error (error);
  g_assert_cmpint (g_mkdir_with_parents (nested, 0700), ==, 0);
  g_assert_cmpint (g_mkdir (empty, 0700), ==, 0);
  g_file_set_contents (top, "top\n", -1, &error);
  g_assert_no_error (error);
  g_file_set_contents (inner, "\0\1\2", 3, &error);
  g_assert_no_error (error);
  return root;
}

static void
test_add_directory_imports_nested_files (void)
{
  g_autofree char *root = make_tree ();
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) paths = NULL;
  const char * const expected[] = { "/workspace/empty", "/workspace/src/deep/inner.bin",
                                    "/workspace/top.txt", NULL };

  g_assert_true (sandbox_template_add_directory (template, directory, NULL, &error));
  g_assert_no_error (error);

  /* The empty directory is kept; src and src/deep are implied. */
  paths = sandbox_template_list_paths (template);
  g_assert_true (g_strv_equal ((const char * const *) paths, expected));
  g_assert_cmpint (sandbox_template_query_file_type (template, "empty"), ==,
                   G_FILE_TYPE_DIRECTORY);
  g_assert_cmpint (sandbox_template_query_file_type (template, "src"), ==, G_FILE_TYPE_DIRECTORY);
  g_assert_cmpint (sandbox_template_query_file_type (template, "top.txt"), ==,
                   G_FILE_TYPE_REGULAR);
  g_assert_cmpuint (sandbox_template_get_n_files (template), ==, 3);
  g_assert_cmpuint (sandbox_template_get_n_bytes (template), ==, 7);
  g_assert_cmpuint (sandbox_template_get_file_size (template, "src/deep/inner.bin"), ==, 3);

  /* Imported contents stay on the host until they are read. */
  g_assert_null (sandbox_template_lookup_file (template, "src/deep/inner.bin"));
  assert_reads (template, "src/deep/inner.bin", "\0\1\2", 3);
  assert_reads (template, "/workspace/top.txt", "top\n", 4);
}

/* Longer than the import's margin for files with sub-second times
 * (SETTLED_FINE_US, 20 ms): files older than this have stamps. */
#define SETTLE_US (60 * 1000)

/* Waits until the files of the tree at @root are old enough for the
 * import to trust their stamps instead of hashing them: FALSE (the test
 * skipped) where file times are whole seconds. */
static gboolean
settle_tree (const char *root)
{
  g_autofree char *probe = g_build_filename (root, "top.txt", NULL);
  struct stat st;

  g_assert_no_errno (stat (probe, &st));
  if (st.st_ctim.tv_nsec == 0)
    {
      g_test_skip ("file times here are whole seconds");
      return FALSE;
    }
  g_usleep (SETTLE_US);
  return TRUE;
}

/* Rewrites the file @path in place (same inode, same size): only its times
 * tell the change. */
static void
overwrite_in_place (const char *path,
                    const char *contents)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (pwrite (fd, contents, strlen (contents), 0), ==, strlen (contents));
  g_assert_no_errno (close (fd));
}

static SandboxTemplateEntry *
lookup_entry (SandboxTemplate *template,
              const char      *path)
{
  g_autofree char *canonical = sandbox_path_canonicalize (path, NULL);

  return sandbox_template_lookup_entry (template, canonical);
}

/* An imported tree has the key of the same tree added from memory: the
 * import is not a different template. */
static void
check_key_matches_memory (gboolean settled)
{
  g_autofree char *root = make_tree ();
  g_autofree char *script = g_build_filename (root, "configure", NULL);
  g_autofree char *link = g_build_filename (root, "src", "link", NULL);
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) imported = sandbox_template_new ("t");
  g_autoptr(SandboxTemplate) built = sandbox_template_new ("t");
  g_autoptr(GBytes) top = g_bytes_new_static ("top\n", 4);
  g_autoptr(GBytes) inner = g_bytes_new_static ("\0\1\2", 3);
  g_autoptr(GBytes) configure = g_bytes_new_static ("#!/bin/sh\n", 10);
  g_autoptr(GError) error = NULL;
  g_autofree char *imported_key = NULL;
  g_autofree char *built_key = NULL;

  g_file_set_contents (script, "#!/bin/sh\n", -1, &error);
  g_assert_no_error (error);
  g_assert_no_errno (chmod (script, 0700));
  g_assert_no_errno (symlink ("deep/inner.bin", link));
  if (settled && !settle_tree (root))
    return;
  g_assert_true (sandbox_template_add_directory (imported, directory, NULL, &error));
  g_assert_no_error (error);
  /* Hashed at the import if just written, when first read otherwise. */
  g_assert_true (lookup_entry (imported, "configure")->stamped == settled);

  g_assert_true (sandbox_template_add_file (built, "top.txt", top, &error));
  g_assert_true (sandbox_template_add_file (built, "src/deep/inner.bin", inner, &error));
  g_assert_true (sandbox_template_add_file_full (built, "configure", configure,
                                                 SANDBOX_TEMPLATE_FILE_EXECUTABLE, &error));
  g_assert_true (sandbox_template_add_symlink (built, "src/link", "deep/inner.bin", &error));
  g_assert_true (sandbox_template_add_empty_directory (built, "empty", &error));
  g_assert_no_error (error);

  imported_key = sandbox_template_compute_key (imported, "bubblewrap", &error);
  built_key = sandbox_template_compute_key (built, "bubblewrap", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (imported_key, ==, built_key);
}

static void
test_add_directory_key_matches_memory (void)
{
  check_key_matches_memory (FALSE);
}

/* The same with files whose digests are learnt when the key is computed. */
static void
test_add_directory_key_matches_memory_settled (void)
{
  check_key_matches_memory (TRUE);
}

/* A file the import inspects is not read then (its stamp is recorded) but
 * once, when it is first read to its end, which gives it its digest; a
 * second read is checked against it. */
static void
test_add_directory_reads_settled_files_once (void)
{
  g_autofree char *root = make_tree ();
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GError) error = NULL;
  g_autofree char *expected = sandbox_digest_sha256_hex ("top\n", 4);
  SandboxTemplateEntry *entry;

  if (!settle_tree (root))
    return;
  g_assert_true (sandbox_template_add_directory (template, directory, NULL, &error));
  g_assert_no_error (error);
  entry = lookup_entry (template, "top.txt");
  g_assert_true (entry->stamped);
  g_assert_null (entry->digest);
  g_assert_cmpuint (sandbox_template_get_file_size (template, "top.txt"), ==, 4);

  assert_reads (template, "top.txt", "top\n", 4);
  g_assert_cmpstr (entry->digest, ==, expected);
  assert_reads (template, "top.txt", "top\n", 4);
}

/* Hostile: a file changed after the import is never read as the imported
 * one, though nothing hashed it: changed bytes of the same size written in
 * place (same inode), a longer or shorter file, a symbolic link to a file
 * with the same bytes, a FIFO. Make matches_stamp() return TRUE and the
 * in-place case reads "TOP\n" without an error. */
static void
test_add_directory_detects_changes_to_settled_files (void)
{
  enum { IN_PLACE, LONGER, SHORTER, LINK, FIFO, N_CHANGES };

  for (guint change = 0; change < N_CHANGES; change++)
    {
      g_autofree char *root = make_tree ();
      g_autofree char *top = g_build_filename (root, "top.txt", NULL);
      g_autofree char *twin = g_build_filename (root, "twin", NULL);
      g_autoptr(GFile) directory = g_file_new_for_path (root);
      g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) contents = NULL;

      if (!settle_tree (root))
        return;
      g_assert_true (sandbox_template_add_directory (template, directory, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (lookup_entry (template, "top.txt")->stamped);

      switch (change)
        {
        case IN_PLACE:
          overwrite_in_place (top, "TOP\n");
          break;
        case LONGER:
          g_file_set_contents (top, "top\nmore", -1, &error);
          break;
        case SHORTER:
          g_assert_no_errno (truncate (top, 2));
          break;
        case LINK:
          g_file_set_contents (twin, "top\n", -1, &error);
          g_assert_no_errno (unlink (top));
          g_assert_no_errno (symlink ("twin", top));
          break;
        default:
          g_assert_no_errno (unlink (top));
          g_assert_no_errno (mkfifo (top, 0600));
        }
      g_assert_no_error (error);

      contents = read_all (template, "top.txt", &error);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
      g_assert_nonnull (strstr (error->message, "/workspace/top.txt"));
      g_assert_null (contents);
      g_clear_error (&error);
      /* Nor does the key stand for anything: it cannot be computed. */
      g_assert_null (sandbox_template_compute_key (template, "b", &error));
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
    }
}

/* Reads @stream to its end: everything, or NULL with @error set. */
static GBytes *
read_stream (GInputStream  *stream,
             GError       **error)
{
  g_autoptr(GOutputStream) sink = g_memory_output_stream_new_resizable ();

  if (g_output_stream_splice (sink, stream, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL,
                              error) < 0)
    return NULL;
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (sink));
}

/* Imports a settled make_tree() at @root and opens top.txt (its stamp is
 * checked then); NULL if the test was skipped. */
static GInputStream *
open_settled_top (const char       *root,
                  SandboxTemplate **template)
{
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(GError) error = NULL;
  GInputStream *stream;

  if (!settle_tree (root))
    return NULL;
  *template = sandbox_template_new ("t");
  g_assert_true (sandbox_template_add_directory (*template, directory, NULL, &error));
  g_assert_no_error (error);
  stream = sandbox_template_read_file (*template, "top.txt", NULL, &error);
  g_assert_no_error (error);
  return stream;
}

/* A file that grows or shrinks between its opening (stamp checked) and
 * its end fails the read: more bytes than imported as soon as they are
 * read, fewer at the end. Take out the size check of check_complete() and
 * the shorter file reads "to" without an error. */
static void
test_add_directory_detects_size_change_while_read (void)
{
  static const char *replacements[] = { "top\nmore", "to" };

  for (guint i = 0; i < G_N_ELEMENTS (replacements); i++)
    {
      g_autofree char *root = make_tree ();
      g_autofree char *top = g_build_filename (root, "top.txt", NULL);
      g_autoptr(SandboxTemplate) template = NULL;
      g_autoptr(GInputStream) stream = open_settled_top (root, &template);
      g_autoptr(GBytes) contents = NULL;
      g_autoptr(GError) error = NULL;

      if (stream == NULL)
        return;
      /* In place: the stream's descriptor still reads this file. */
      g_assert_no_errno (truncate (top, 0));
      overwrite_in_place (top, replacements[i]);

      contents = read_stream (stream, &error);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
      g_assert_null (contents);
      g_assert_null (lookup_entry (template, "top.txt")->digest);
    }
}

/* One pass: a file changed (same size) after its opening is read as it
 * now is, and what was read is what was hashed: the key covers exactly the
 * bytes the reader got. Any later read is refused: the file's stamp moved. */
static void
test_add_directory_key_covers_what_was_read (void)
{
  g_autofree char *root = make_tree ();
  g_autofree char *top = g_build_filename (root, "top.txt", NULL);
  g_autoptr(SandboxTemplate) template = NULL;
  g_autoptr(GInputStream) stream = open_settled_top (root, &template);
  g_autoptr(SandboxTemplate) built = sandbox_template_new ("t");
  g_autoptr(GBytes) changed = g_bytes_new_static ("TOP\n", 4);
  g_autoptr(GBytes) inner = g_bytes_new_static ("\0\1\2", 3);
  g_autoptr(GBytes) contents = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  g_autofree char *built_key = NULL;

  if (stream == NULL)
    return;
  overwrite_in_place (top, "TOP\n");
  contents = read_stream (stream, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (g_bytes_get_data (contents, NULL), g_bytes_get_size (contents), "TOP\n", 4);

  g_assert_true (sandbox_template_add_file (built, "top.txt", changed, &error));
  g_assert_true (sandbox_template_add_file (built, "src/deep/inner.bin", inner, &error));
  g_assert_true (sandbox_template_add_empty_directory (built, "empty", &error));
  g_assert_no_error (error);
  key = sandbox_template_compute_key (template, "b", &error);
  g_assert_no_error (error);
  built_key = sandbox_template_compute_key (built, "b", &error);
  g_assert_cmpstr (key, ==, built_key);

  g_clear_pointer (&contents, g_bytes_unref);
  contents = read_all (template, "top.txt", &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
}

/* Two readers of a file not read before: the first to finish gives it its
 * digest, the second is checked against it. Make settle_digest() accept
 * any digest and the second reader gets "TOP\n" without an error. */
static void
test_add_directory_second_reader_checks_first_digest (void)
{
  g_autofree char *root = make_tree ();
  g_autofree char *top = g_build_filename (root, "top.txt", NULL);
  g_autoptr(SandboxTemplate) template = NULL;
  g_autoptr(GInputStream) first = open_settled_top (root, &template);
  g_autoptr(GInputStream) second = NULL;
  g_autoptr(GBytes) contents = NULL;
  g_autoptr(GError) error = NULL;

  if (first == NULL)
    return;
  second = sandbox_template_read_file (template, "top.txt", NULL, &error);
  g_assert_no_error (error);

  contents = read_stream (first, &error);
  g_assert_no_error (error);
  g_clear_pointer (&contents, g_bytes_unref);
  overwrite_in_place (top, "TOP\n");
  contents = read_stream (second, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
  g_assert_null (contents);
}

/* Hostile: a file changed just before the import has a ctime that a change
 * right after it could keep (file times are as coarse as the kernel's
 * tick), so the import hashes it and the later read compares bytes. Make
 * is_settled() return TRUE and the entry has a stamp and no digest. */
static void
test_add_directory_hashes_recently_changed_files (void)
{
  g_autofree char *root = make_tree ();
  g_autofree char *top = g_build_filename (root, "top.txt", NULL);
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) contents = NULL;
  g_autofree char *expected = sandbox_digest_sha256_hex ("top\n", 4);
  SandboxTemplateEntry *entry;

  overwrite_in_place (top, "top\n");
  g_assert_true (sandbox_template_add_directory (template, directory, NULL, &error));
  g_assert_no_error (error);
  entry = lookup_entry (template, "top.txt");
  g_assert_false (entry->stamped);
  g_assert_cmpstr (entry->digest, ==, expected);

  overwrite_in_place (top, "TOP\n");
  contents = read_all (template, "top.txt", &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
  g_assert_null (contents);
}

/* Modes are normalised as git does: any execute bit makes an executable,
 * the rest of the mode is not kept. */
static void
test_add_directory_keeps_executable_bit (void)
{
  static const struct { mode_t mode; gboolean executable; } cases[] = {
    { 0755, TRUE }, { 0700, TRUE }, { 0744, TRUE }, { 0610, TRUE }, { 0601, TRUE },
    { 0644, FALSE }, { 0600, FALSE }, { 0666, FALSE }, { 04644, FALSE },
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *root = g_dir_make_tmp ("template-XXXXXX", &error);
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");

  g_assert_no_error (error);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("f%04o", (guint) cases[i].mode);
      g_autofree char *path = g_build_filename (root, name, NULL);

      g_file_set_contents (path, "x", -1, &error);
      g_assert_no_error (error);
      g_assert_no_errno (chmod (path, cases[i].mode));
    }
  g_assert_true (sandbox_template_add_directory (template, directory, NULL, &error));
  g_assert_no_error (error);

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *name = g_strdup_printf ("f%04o", (guint) cases[i].mode);

      g_assert_cmpint (sandbox_template_get_file_flags (template, name), ==,
                       cases[i].executable ? SANDBOX_TEMPLATE_FILE_EXECUTABLE
                                           : SANDBOX_TEMPLATE_FILE_NONE);
    }
}

/* Hostile: a link in the tree to a host secret is a link in the template,
 * its target verbatim; nothing is read through it (the template has no
 * digest of the secret, read_file() refuses it). Make import_entry() treat
 * S_ISLNK like a regular file and this test reads /etc/shadow's bytes. */
static void
test_add_directory_stores_symlinks_verbatim (void)
{
  g_autofree char *root = make_tree ();
  g_autofree char *secret = g_build_filename (root, "src", "shadow", NULL);
  g_autofree char *dir_link = g_build_filename (root, "etc", NULL);
  g_autofree char *relative_link = g_build_filename (root, "src", "deep", "up", NULL);
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GError) error = NULL;
  g_autoptr(GInputStream) stream = NULL;
  g_autofree char *canonical = NULL;

  g_assert_no_errno (symlink ("/etc/shadow", secret));
  g_assert_no_errno (symlink ("/etc", dir_link));
  g_assert_no_errno (symlink ("../../top.txt", relative_link));
  g_assert_true (sandbox_template_add_directory (template, directory, NULL, &error));
  g_assert_no_error (error);

  g_assert_cmpint (sandbox_template_query_file_type (template, "src/shadow"), ==,
                   G_FILE_TYPE_SYMBOLIC_LINK);
  g_assert_cmpstr (sandbox_template_lookup_symlink (template, "src/shadow"), ==, "/etc/shadow");
  g_assert_cmpstr (sandbox_template_lookup_symlink (template, "etc"), ==, "/etc");
  g_assert_cmpstr (sandbox_template_lookup_symlink (template, "src/deep/up"), ==,
                   "../../top.txt");
  g_assert_cmpuint (sandbox_template_get_file_size (template, "src/shadow"), ==, 0);
  g_assert_null (sandbox_template_lookup_file (template, "src/shadow"));

  stream = sandbox_template_read_file (template, "src/shadow", NULL, &error);
  g_assert_null (stream);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);

  canonical = sandbox_template_dup_canonical_json (template, "b");
  g_assert_nonnull (strstr (canonical, "[\"/workspace/src/shadow\",\"/etc/shadow\",\"symlink\"]"));
  g_assert_nonnull (strstr (canonical, "[\"/workspace/etc\",\"/etc\",\"symlink\"]"));
}

/* Hostile: a file swapped after the import is never stored as if it were
 * the imported one. Changed bytes of the same size, a longer or shorter
 * file, or a symbolic link in its place fail read_file()'s stream (or its
 * opening) with G_IO_ERROR_WRONG_ETAG. Make check_complete() return TRUE
 * and the same-size case reads "TOP\n" without an error. */
static void
test_add_directory_detects_changed_files (void)
{
  static const char *replacements[] = { "TOP\n", "top\nmore", "to", NULL };
  g_autofree char *root = make_tree ();
  g_autofree char *top = g_build_filename (root, "top.txt", NULL);
  g_autoptr(GFile) directory = g_file_new_for_path (root);

  for (guint i = 0; i <= G_N_ELEMENTS (replacements) - 1; i++)
    {
      g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) contents = NULL;

      g_file_set_contents (top, "top\n", -1, &error);
      g_assert_no_error (error);
      g_assert_true (sandbox_template_add_directory (template, directory, NULL, &error));
      g_assert_no_error (error);
      assert_reads (template, "top.txt", "top\n", 4);

      if (replacements[i] != NULL)
        g_file_set_contents (top, replacements[i], -1, &error);
      else
        {
          /* A link to a file with the very same bytes is still refused. */
          g_autofree char *twin = g_build_filename (root, "twin", NULL);

          g_file_set_contents (twin, "top\n", -1, &error);
          g_assert_no_errno (unlink (top));
          g_assert_no_errno (symlink (twin, top));
        }
      g_assert_no_error (error);

      contents = read_all (template, "top.txt", &error);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
      g_assert_nonnull (strstr (error->message, "/workspace/top.txt"));
      g_assert_null (contents);
      if (replacements[i] == NULL)
        {
          g_autofree char *twin = g_build_filename (root, "twin", NULL);

          g_assert_no_errno (unlink (top));
          g_assert_no_errno (unlink (twin));
        }
    }
}

/* Hostile: a parent directory swapped for a link after the import is not
 * followed when the file is read again, even a relative link that stays in
 * the tree, to a file with the same bytes. Drop RESOLVE_NO_SYMLINKS from
 * open_beneath() and this reads the twin. */
static void
test_add_directory_refuses_swapped_parent (void)
{
  g_autofree char *root = make_tree ();
  g_autoptr(GError) error = NULL;
  g_autofree char *src = g_build_filename (root, "src", NULL);
  g_autofree char *moved = g_build_filename (root, "moved", NULL);
  g_autofree char *twin_dir = g_build_filename (root, "twin", "deep", NULL);
  g_autofree char *twin = g_build_filename (twin_dir, "inner.bin", NULL);
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GBytes) contents = NULL;

  g_assert_true (sandbox_template_add_directory (template, directory, NULL, &error));
  g_assert_no_error (error);

  g_assert_no_errno (g_mkdir_with_parents (twin_dir, 0700));
  g_file_set_contents (twin, "\0\1\2", 3, &error);
  g_assert_no_error (error);
  g_assert_no_errno (rename (src, moved));
  g_assert_no_errno (symlink ("twin", src));

  contents = read_all (template, "src/deep/inner.bin", &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
  g_assert_null (contents);
}

/* Hostile: a FIFO swapped in for an imported file never blocks the read
 * that stores the template: it is not a regular file. Drop O_NONBLOCK in
 * open_beneath() and this test hangs. */
static void
test_add_directory_refuses_fifo_swapped_in (void)
{
  g_autofree char *root = make_tree ();
  g_autofree char *top = g_build_filename (root, "top.txt", NULL);
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) contents = NULL;

  g_assert_true (sandbox_template_add_directory (template, directory, NULL, &error));
  g_assert_no_error (error);
  g_assert_no_errno (unlink (top));
  g_assert_no_errno (mkfifo (top, 0600));

  contents = read_all (template, "top.txt", &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG);
  g_assert_null (contents);
}

static void
assert_import_refused (const char *root,
                       const char *named)
{
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GError) error = NULL;

  g_assert_false (sandbox_template_add_directory (template, directory, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  if (strstr (error->message, named) == NULL)
    g_error ("Message “%s” does not name “%s”", error->message, named);
  /* Nothing from a failed import stays behind. */
  g_assert_cmpuint (sandbox_template_get_n_files (template), ==, 0);
}

static void
test_add_directory_refuses_fifos (void)
{
  g_autofree char *root = make_tree ();
  g_autofree char *fifo = g_build_filename (root, "src", "deep", "pipe", NULL);

  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  assert_import_refused (root, "src/deep/pipe");
}

static void
test_add_directory_refuses_sockets (void)
{
  g_autofree char *root = make_tree ();
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_build_filename (root, "sock", NULL);
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (path);
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_DEFAULT, &error);

  g_assert_no_error (error);
  g_assert_true (g_socket_bind (socket, address, FALSE, &error));
  assert_import_refused (root, "sock");
}

/* An import clashing with a file already in the template is refused like
 * sandbox_template_add_file(), and rolled back entirely: the implied
 * directories of the files it had added are gone too. */
static void
test_add_directory_refuses_file_below_file (void)
{
  g_autofree char *root = make_tree ();
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) below = sandbox_template_new ("t");
  g_autoptr(SandboxTemplate) above = sandbox_template_new ("t");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autoptr(GError) error = NULL;

  /* The template's file "src" would have the tree's src/deep/inner.bin below it. */
  g_assert_true (sandbox_template_add_file (below, "src", bytes, &error));
  g_assert_false (sandbox_template_add_directory (below, directory, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_true (names_path (error->message, "/workspace/src"));
  g_assert_true (names_path (error->message, "/workspace/src/deep/inner.bin"));
  g_clear_error (&error);
  g_assert_cmpuint (sandbox_template_get_n_files (below), ==, 1);

  /* The template's top.txt/x would lie below the tree's file top.txt. */
  g_assert_true (sandbox_template_add_file (above, "top.txt/x", bytes, &error));
  g_assert_false (sandbox_template_add_directory (above, directory, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_true (names_path (error->message, "/workspace/top.txt"));
  g_assert_true (names_path (error->message, "/workspace/top.txt/x"));
  g_clear_error (&error);
  g_assert_cmpuint (sandbox_template_get_n_files (above), ==, 1);
  /* Whatever the import added before it failed left no directory behind. */
  g_assert_true (sandbox_template_add_file (above, "src", bytes, &error));
  g_assert_true (sandbox_template_add_file (above, "src.d/deep", bytes, &error));
  g_assert_no_error (error);
}

static void
test_add_directory_refuses_missing_directory (void)
{
  g_autoptr(GFile) directory = g_file_new_for_path ("/nonexistent/template/dir");
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GError) error = NULL;

  g_assert_false (sandbox_template_add_directory (template, directory, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
}

static void
test_add_directory_honours_cancellation (void)
{
  g_autofree char *root = make_tree ();
  g_autoptr(GFile) directory = g_file_new_for_path (root);
  g_autoptr(SandboxTemplate) template = sandbox_template_new ("t");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;

  g_cancellable_cancel (cancellable);
  g_assert_false (sandbox_template_add_directory (template, directory, cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (sandbox_template_get_n_files (template), ==, 0);
}

/* The digest behind every key is plain SHA-256: the same hex as GLib's, at
 * every length around the block size and for a large buffer, and the known
 * vectors of FIPS 180-2. */
static void
test_digest_is_sha256 (void)
{
  static const gsize lengths[] = { 0, 1, 55, 56, 63, 64, 65, 127, 128, 4096, 1 << 20 };
  g_autofree guint8 *data = g_malloc (1 << 20);
  g_autofree char *empty = sandbox_digest_sha256_hex ("", 0);
  g_autofree char *abc = sandbox_digest_sha256_hex ("abc", 3);

  for (gsize i = 0; i < (gsize) 1 << 20; i++)
    data[i] = (guint8) (i * 131 + (i >> 9));

  g_assert_cmpstr (empty, ==, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  g_assert_cmpstr (abc, ==, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  for (gsize i = 0; i < G_N_ELEMENTS (lengths); i++)
    {
      g_autoptr(GBytes) bytes = g_bytes_new_static (data, lengths[i]);
      g_autofree char *ours = sandbox_digest_sha256_hex_bytes (bytes);
      g_autofree char *glib = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);

      g_assert_cmpstr (ours, ==, glib);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GPtrArray) rows = NULL;
  g_autoptr(GPtrArray) entry_rows = NULL;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  rows = load_key_rows ();
  for (guint i = 0; i < rows->len; i++)
    {
      g_autofree char *path = g_strdup_printf ("/sandbox/template/key/row-%02u", i);

      g_test_add_data_func (path, g_ptr_array_index (rows, i), test_key_row);
    }

  g_test_add_func ("/sandbox/template/key/rows-exist", test_key_rows_exist);
  entry_rows = load_rows ("template-entry-keys.jsonl");
  for (guint i = 0; i < entry_rows->len; i++)
    {
      g_autofree char *path = g_strdup_printf ("/sandbox/template/key/entry-row-%u", i);

      g_test_add_data_func (path, g_ptr_array_index (entry_rows, i), test_entry_key_row);
    }
  g_test_add_func ("/sandbox/template/key/entry-keys-differ", test_entry_keys_differ);
  g_test_add_func ("/sandbox/template/add-file-full/marks-executable",
                   test_add_file_full_marks_executable);
  g_test_add_func ("/sandbox/template/add-symlink/checks-target", test_add_symlink_checks_target);
  g_test_add_func ("/sandbox/template/add/refuses-entries-below-symlink",
                   test_add_refuses_entries_below_symlink);
  g_test_add_func ("/sandbox/template/add-empty-directory", test_add_empty_directory);
  g_test_add_func ("/sandbox/template/key/digest-is-sha256", test_digest_is_sha256);
  g_test_add_func ("/sandbox/template/key/serializer-escapes-like-javascript",
                   test_serializer_escapes_like_javascript);
  g_test_add_func ("/sandbox/template/key/sorts-paths-in-byte-order",
                   test_key_sorts_paths_in_byte_order);
  g_test_add_func ("/sandbox/template/key/validates-names", test_key_validates_names);
  g_test_add_func ("/sandbox/template/key/is-valid", test_key_is_valid);
  g_test_add_func ("/sandbox/template/add-file/refuses-bad-paths", test_add_file_refuses_bad_paths);
  g_test_add_func ("/sandbox/template/add-file/refuses-duplicates", test_add_file_refuses_duplicates);
  g_test_add_func ("/sandbox/template/add-file/refuses-file-below-file",
                   test_add_file_refuses_file_below_file);
  g_test_add_func ("/sandbox/template/add-file/accepts-prefix-siblings",
                   test_add_file_accepts_prefix_siblings);
  g_test_add_func ("/sandbox/template/lookup-file-by-any-path", test_lookup_file_by_any_path);
  g_test_add_func ("/sandbox/template/add-directory/imports-nested-files",
                   test_add_directory_imports_nested_files);
  g_test_add_func ("/sandbox/template/add-directory/key-matches-memory",
                   test_add_directory_key_matches_memory);
  g_test_add_func ("/sandbox/template/add-directory/key-matches-memory-settled",
                   test_add_directory_key_matches_memory_settled);
  g_test_add_func ("/sandbox/template/add-directory/reads-settled-files-once",
                   test_add_directory_reads_settled_files_once);
  g_test_add_func ("/sandbox/template/add-directory/detects-changes-to-settled-files",
                   test_add_directory_detects_changes_to_settled_files);
  g_test_add_func ("/sandbox/template/add-directory/detects-size-change-while-read",
                   test_add_directory_detects_size_change_while_read);
  g_test_add_func ("/sandbox/template/add-directory/key-covers-what-was-read",
                   test_add_directory_key_covers_what_was_read);
  g_test_add_func ("/sandbox/template/add-directory/second-reader-checks-first-digest",
                   test_add_directory_second_reader_checks_first_digest);
  g_test_add_func ("/sandbox/template/add-directory/hashes-recently-changed-files",
                   test_add_directory_hashes_recently_changed_files);
  g_test_add_func ("/sandbox/template/add-directory/keeps-executable-bit",
                   test_add_directory_keeps_executable_bit);
  g_test_add_func ("/sandbox/template/add-directory/stores-symlinks-verbatim",
                   test_add_directory_stores_symlinks_verbatim);
  g_test_add_func ("/sandbox/template/add-directory/detects-changed-files",
                   test_add_directory_detects_changed_files);
  g_test_add_func ("/sandbox/template/add-directory/refuses-swapped-parent",
                   test_add_directory_refuses_swapped_parent);
  g_test_add_func ("/sandbox/template/add-directory/refuses-fifo-swapped-in",
                   test_add_directory_refuses_fifo_swapped_in);
  g_test_add_func ("/sandbox/template/add-directory/refuses-fifos", test_add_directory_refuses_fifos);
  g_test_add_func ("/sandbox/template/add-directory/refuses-sockets",
                   test_add_directory_refuses_sockets);
  g_test_add_func ("/sandbox/template/add-directory/refuses-file-below-file",
                   test_add_directory_refuses_file_below_file);
  g_test_add_func ("/sandbox/template/add-directory/refuses-missing-directory",
                   test_add_directory_refuses_missing_directory);
  g_test_add_func ("/sandbox/template/add-directory/honours-cancellation",
                   test_add_directory_honours_cancellation);

  return g_test_run ();
}
