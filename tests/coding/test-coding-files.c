/* test-coding-files.c — the coding tools' file tools, over real bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * read_file, write_file, edit_file and list_files, and their containment:
 * paths outside the workspace and links planted by the guest reach no host
 * file.
 */

#include <string.h>

#include <json-glib/json-glib.h>
#include <sandbox.h>

#include "coding-fixture.h"

static void
test_read_file (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autoptr(JsonObject) setup = NULL;

  setup = invoke (fixture, "shell",
                  "{\"command\":\"printf 'a\\\\nb\\\\nc\\\\nd' > lines.txt; "
                  "printf 'x\\\\000y' > nul.bin; printf '\\\\377\\\\376' > latin.bin; "
                  "mkdir dir; mkfifo fifo\"}");
  assert_ok (setup);
  g_assert_cmpint (json_object_get_int_member (setup, "exit_status"), ==, 0);

  result = invoke (fixture, "read_file", "{\"path\":\"hello.txt\"}");
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==, "hello\n");
  g_assert_cmpstr (json_object_get_string_member (result, "path"), ==, "/workspace/hello.txt");
  g_assert_cmpint (json_object_get_int_member (result, "total_lines"), ==, 1);
  g_assert_false (json_object_get_boolean_member (result, "truncated"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "read_file", "{\"path\":\"lines.txt\",\"offset\":2,\"limit\":2}");
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==, "b\nc\n");
  g_assert_cmpint (json_object_get_int_member (result, "start_line"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (result, "lines"), ==, 2);
  g_assert_cmpint (json_object_get_int_member (result, "total_lines"), ==, 4);
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "read_file", "{\"path\":\"lines.txt\",\"offset\":4}");
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "content"), ==, "d");
  g_assert_false (json_object_get_boolean_member (result, "truncated"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "read_file", "{\"path\":\"lines.txt\",\"offset\":9}");
  assert_error (result, "SANDBOX_INVALID");
  g_clear_pointer (&result, json_object_unref);

  /* Binary files are refused clearly, whatever makes them binary. */
  result = invoke (fixture, "read_file", "{\"path\":\"nul.bin\"}");
  assert_error (result, "SANDBOX_NOT_TEXT");
  g_assert_nonnull (strstr (error_message (result), "not UTF-8 text"));
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "read_file", "{\"path\":\"latin.bin\"}");
  assert_error (result, "SANDBOX_NOT_TEXT");
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "read_file", "{\"path\":\"missing.txt\"}");
  assert_error (result, "SANDBOX_NOT_FOUND");
  g_assert_nonnull (strstr (error_message (result), "/workspace/missing.txt"));
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "read_file", "{\"path\":\"dir\"}");
  assert_error (result, "SANDBOX_IS_DIRECTORY");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "read_file", "{\"path\":\"fifo\"}");
  assert_error (result, "SANDBOX_NOT_REGULAR_FILE");
}

static void
test_write_file (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *text = NULL;

  result = invoke (fixture, "write_file", "{\"path\":\"src/deep/main.c\",\"content\":\"int x; // é\\n\"}");
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "bytes_written"), ==, 13);
  text = host_read (fixture, "src/deep/main.c");
  g_assert_cmpstr (text, ==, "int x; // é\n");
  g_clear_pointer (&result, json_object_unref);

  /* The guest sees it. */
  result = invoke (fixture, "shell", "{\"command\":\"cat src/deep/main.c\"}");
  g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==, "int x; // é\n");
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "write_file", "{\"path\":\".\",\"content\":\"x\"}");
  assert_error (result, "SANDBOX_IS_DIRECTORY");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "write_file", "{\"path\":\"src\",\"content\":\"x\"}");
  assert_error (result, "SANDBOX_IS_DIRECTORY");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "write_file", "{\"path\":\"hello.txt/child\",\"content\":\"x\"}");
  assert_error (result, "SANDBOX_NOT_DIRECTORY");
}

static void
test_edit_file (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  g_autofree char *text = NULL;

  result = invoke (fixture, "write_file",
                   "{\"path\":\"code.py\",\"content\":\"a = 1\\nb = 1\\nprint(a)\\n\"}");
  assert_ok (result);
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "edit_file",
                   "{\"path\":\"code.py\",\"old_string\":\"a = 1\",\"new_string\":\"a = 2\"}");
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "replacements"), ==, 1);
  text = host_read (fixture, "code.py");
  g_assert_cmpstr (text, ==, "a = 2\nb = 1\nprint(a)\n");
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "edit_file",
                   "{\"path\":\"code.py\",\"old_string\":\"= \",\"new_string\":\"=\"}");
  assert_error (result, "SANDBOX_AMBIGUOUS");
  g_assert_nonnull (strstr (error_message (result), "2 times"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "edit_file",
                   "{\"path\":\"code.py\",\"old_string\":\"c = 3\",\"new_string\":\"x\"}");
  assert_error (result, "SANDBOX_NO_MATCH");
  g_assert_nonnull (strstr (error_message (result), "0 matches"));
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "edit_file",
                   "{\"path\":\"nothing.py\",\"old_string\":\"a\",\"new_string\":\"b\"}");
  assert_error (result, "SANDBOX_NOT_FOUND");
  g_clear_pointer (&result, json_object_unref);

  /* Unchanged after the failures. */
  g_free (text);
  text = host_read (fixture, "code.py");
  g_assert_cmpstr (text, ==, "a = 2\nb = 1\nprint(a)\n");
}

static void
test_list_files (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autoptr(JsonObject) result = NULL;
  JsonArray *entries;
  JsonObject *entry;

  result = invoke (fixture, "shell",
                   "{\"command\":\"mkdir -p d/e && printf 1234 > d/f && ln -s f d/link\"}");
  assert_ok (result);
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "list_files", "{\"path\":\"d\"}");
  assert_ok (result);
  g_assert_false (json_object_get_boolean_member (result, "truncated"));
  entries = json_object_get_array_member (result, "entries");
  g_assert_cmpuint (json_array_get_length (entries), ==, 3);
  entry = json_array_get_object_element (entries, 0);
  g_assert_cmpstr (json_object_get_string_member (entry, "name"), ==, "e");
  g_assert_cmpstr (json_object_get_string_member (entry, "type"), ==, "directory");
  entry = json_array_get_object_element (entries, 1);
  g_assert_cmpstr (json_object_get_string_member (entry, "name"), ==, "f");
  g_assert_cmpstr (json_object_get_string_member (entry, "type"), ==, "file");
  g_assert_cmpint (json_object_get_int_member (entry, "size"), ==, 4);
  entry = json_array_get_object_element (entries, 2);
  g_assert_cmpstr (json_object_get_string_member (entry, "name"), ==, "link");
  g_assert_cmpstr (json_object_get_string_member (entry, "type"), ==, "symlink");
  g_clear_pointer (&result, json_object_unref);

  /* The root by default. */
  result = invoke (fixture, "list_files", NULL);
  assert_ok (result);
  g_assert_cmpstr (json_object_get_string_member (result, "path"), ==, "/workspace");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (result, "entries")), ==, 2);
  g_clear_pointer (&result, json_object_unref);

  /* Bounded. */
  result = invoke (fixture, "shell", "{\"command\":\"mkdir many && cd many && touch $(seq 1 50)\"}");
  g_clear_pointer (&result, json_object_unref);
  g_object_set (fixture->tools, "max-list-entries", 10, NULL);
  result = invoke (fixture, "list_files", "{\"path\":\"many\"}");
  assert_ok (result);
  g_assert_true (json_object_get_boolean_member (result, "truncated"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (result, "entries")), ==, 10);
  g_clear_pointer (&result, json_object_unref);

  result = invoke (fixture, "list_files", "{\"path\":\"d/f\"}");
  assert_error (result, "SANDBOX_NOT_DIRECTORY");
  g_clear_pointer (&result, json_object_unref);
  result = invoke (fixture, "list_files", "{\"path\":\"nowhere\"}");
  assert_error (result, "SANDBOX_NOT_FOUND");
}

/* Host files the escape attempts aim at: none may be read or changed. */
static char *
sha256_of_file (const char *path)
{
  g_autofree char *contents = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guint8 *) contents, length);
}

static void
test_containment (Fixture       *fixture,
                  gconstpointer  data)
{
  const char *outside_paths[] = {
    "/etc/passwd", "../hello.txt", "/workspace/../etc/passwd", "a/../../etc", "./hello.txt",
    "a//b", "/", "/tmp", "", "\\\\etc",
  };
  g_autofree char *host_dir = g_build_filename (fixture->state_directory, "outside", NULL);
  g_autofree char *host_file = g_build_filename (host_dir, "target.txt", NULL);
  g_autofree char *before = NULL;
  g_autofree char *script = NULL;
  g_autofree char *after = NULL;
  g_autoptr(JsonObject) result = NULL;
  JsonArray *entries;

  /* A host directory next to the sessions, with a file the links target. */
  g_assert_cmpint (g_mkdir_with_parents (host_dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (host_file, "host secret\n", -1, NULL));
  before = sha256_of_file (host_file);

  for (guint i = 0; i < G_N_ELEMENTS (outside_paths); i++)
    {
      g_autofree char *read_args = g_strdup_printf ("{\"path\":\"%s\"}", outside_paths[i]);
      g_autofree char *write_args = g_strdup_printf ("{\"path\":\"%s\",\"content\":\"x\"}",
                                                     outside_paths[i]);
      g_autofree char *edit_args =
        g_strdup_printf ("{\"path\":\"%s\",\"old_string\":\"r\",\"new_string\":\"x\"}",
                         outside_paths[i]);
      g_autoptr(JsonObject) r1 = invoke (fixture, "read_file", read_args);
      g_autoptr(JsonObject) r2 = invoke (fixture, "write_file", write_args);
      g_autoptr(JsonObject) r3 = invoke (fixture, "edit_file", edit_args);

      assert_error (r1, "SANDBOX_PATH");
      assert_error (r2, "SANDBOX_PATH");
      assert_error (r3, "SANDBOX_PATH");
      /* The rejected path is not echoed back. */
      if (strlen (outside_paths[i]) > 1)
        g_assert_null (strstr (error_message (r1), outside_paths[i]));
      if (strcmp (outside_paths[i], "/") != 0 && outside_paths[i][0] != '\0')
        {
          g_autoptr(JsonObject) r4 = invoke (fixture, "list_files", read_args);

          assert_error (r4, "SANDBOX_PATH");
        }
    }

  /* Symbolic links planted by the shell tool, pointing out of the
   * workspace: absolute, relative through .., and a directory link. */
  script = g_strdup_printf ("{\"command\":\"ln -s %s abs-file && ln -s %s abs-dir && "
                            "ln -s ../../../../../../../../../../../%s rel-file && "
                            "ln -s /etc etc && ln -s / root\"}",
                            host_file, host_dir, host_file);
  result = invoke (fixture, "shell", script);
  assert_ok (result);
  g_assert_cmpint (json_object_get_int_member (result, "exit_status"), ==, 0);
  g_clear_pointer (&result, json_object_unref);

  {
    const char *reads[] = { "abs-file", "rel-file", "abs-dir/target.txt", "etc/passwd",
                            "root/etc/passwd" };

    for (guint i = 0; i < G_N_ELEMENTS (reads); i++)
      {
        g_autofree char *args = g_strdup_printf ("{\"path\":\"%s\"}", reads[i]);
        g_autofree char *edit = g_strdup_printf ("{\"path\":\"%s\",\"old_string\":\"host\","
                                                 "\"new_string\":\"owned\"}", reads[i]);
        g_autoptr(JsonObject) r = invoke (fixture, "read_file", args);
        g_autoptr(JsonObject) e = invoke (fixture, "edit_file", edit);

        assert_error (r, "SANDBOX_PATH");
        assert_error (e, "SANDBOX_PATH");
      }
  }
  {
    /* Writing through a directory link is refused; writing over a file
     * link replaces the link inside the workspace, never the target. */
    const char *writes[] = { "abs-dir/target.txt", "abs-dir/new.txt", "etc/evil", "root/tmp/evil" };

    for (guint i = 0; i < G_N_ELEMENTS (writes); i++)
      {
        g_autofree char *args = g_strdup_printf ("{\"path\":\"%s\",\"content\":\"owned\"}",
                                                 writes[i]);
        g_autoptr(JsonObject) w = invoke (fixture, "write_file", args);

        assert_error (w, "SANDBOX_PATH");
      }
    result = invoke (fixture, "write_file", "{\"path\":\"abs-file\",\"content\":\"owned\"}");
    if (json_object_get_boolean_member (result, "ok"))
      {
        g_autofree char *text = host_read (fixture, "abs-file");

        g_assert_cmpstr (text, ==, "owned");
      }
    else
      assert_error (result, "SANDBOX_PATH");
    g_clear_pointer (&result, json_object_unref);
  }
  {
    const char *lists[] = { "abs-dir", "etc", "root" };

    for (guint i = 0; i < G_N_ELEMENTS (lists); i++)
      {
        g_autofree char *args = g_strdup_printf ("{\"path\":\"%s\"}", lists[i]);
        g_autoptr(JsonObject) l = invoke (fixture, "list_files", args);

        assert_error (l, "SANDBOX_PATH");
      }
  }

  /* The links themselves are listed, not followed. */
  result = invoke (fixture, "list_files", "{}");
  assert_ok (result);
  entries = json_object_get_array_member (result, "entries");
  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      JsonObject *entry = json_array_get_object_element (entries, i);
      const char *name = json_object_get_string_member (entry, "name");

      if (strcmp (name, "hello.txt") != 0 && strcmp (name, "abs-file") != 0)
        g_assert_cmpstr (json_object_get_string_member (entry, "type"), ==, "symlink");
    }
  g_clear_pointer (&result, json_object_unref);

  after = sha256_of_file (host_file);
  g_assert_cmpstr (before, ==, after);
  g_assert_false (g_file_test ("/etc/evil", G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test ("/tmp/evil", G_FILE_TEST_EXISTS));
  {
    g_autofree char *new_file = g_build_filename (host_dir, "new.txt", NULL);

    g_assert_false (g_file_test (new_file, G_FILE_TEST_EXISTS));
  }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  if (coding_test_skip_without_bwrap ())
    return 77;

  ADD ("read-file", test_read_file);
  ADD ("write-file", test_write_file);
  ADD ("edit-file", test_edit_file);
  ADD ("list-files", test_list_files);
  ADD ("containment", test_containment);

  return g_test_run ();
}
