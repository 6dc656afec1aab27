/* test-snapshot-line.c — restores anywhere in a session's line, lines past
 * the depth bound, copying sessions from layered snapshots
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Real bwrap, real overlayfs. Run as root and as the unprivileged
 * sandbox-test (run-unprivileged.sh). Every tree is compared as a command
 * inside the sandbox sees it, by a full-tree digest.
 */

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/xattr.h>

#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"

/* Everything of /workspace a guest can tell apart but the top directory
 * (a layered session's is its upper layer's, a copying one's its
 * workspace's): each entry's type, mode and path (a link's target), then
 * each file's digest. */
#define TREE_DIGEST \
  "cd /workspace && find . -mindepth 1 -printf '%y %m %p -> %l\\n' | LC_ALL=C sort && " \
  "find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum"

/* The bound of sandbox-bubblewrap-store-layout-private.h: a session's
 * lower layers are at most this many snapshots and a bottom tree. */
#define MAX_DEPTH 32u

typedef struct
{
  char *state_directory;
  SandboxBackend *backend;
  SandboxBackend *copying;
  SandboxNetworkPolicy *policy;
  char *template_key;
  char *host_directory;
  SandboxHandle *handle;
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("line");
  g_autoptr(GError) error = NULL;

  fixture->state_directory = sandbox_test_state_directory_new ();
  fixture->backend = sandbox_test_bubblewrap_new (fixture->state_directory, &error,
                                                  "layering", "auto", NULL);
  g_assert_no_error (error);
  fixture->copying = sandbox_test_bubblewrap_new (fixture->state_directory, &error,
                                                  "layering", "copy", NULL);
  g_assert_no_error (error);
  fixture->policy = sandbox_network_policy_new_deny_all ();
  /* A host directory a guest can name but must never reach. */
  fixture->host_directory = g_build_filename (fixture->state_directory, "host-only", NULL);
  g_assert_cmpint (g_mkdir_with_parents (fixture->host_directory, 0755), ==, 0);

  sandbox_test_template_add_text (template_, "hello.txt", "hello");
  sandbox_test_template_add_text (template_, "src/main.c", "int main;");
  sandbox_test_template_add_text (template_, "src/util.c", "int util;");
  sandbox_test_template_add_text (template_, "old/a.txt", "a");
  sandbox_test_template_add_text (template_, "old/sub/b.txt", "b");
  fixture->template_key = sandbox_backend_prewarm (fixture->backend, template_, NULL, NULL,
                                                   &error);
  g_assert_no_error (error);
  fixture->handle = sandbox_test_create_session (fixture->backend, fixture->template_key);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  if (fixture->handle != NULL)
    sandbox_test_delete_session (fixture->handle);
  g_clear_object (&fixture->handle);
  g_clear_object (&fixture->backend);
  g_clear_object (&fixture->copying);
  g_clear_object (&fixture->policy);
  sandbox_test_remove_tree (fixture->state_directory);
  g_free (fixture->state_directory);
  g_free (fixture->host_directory);
  g_free (fixture->template_key);
}

static char *
tree_of (SandboxHandle *handle)
{
  return sandbox_test_guest_sh (sandbox_handle_get_session (handle), TREE_DIGEST);
}

static void
sh (SandboxHandle *handle,
    const char    *script)
{
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (handle), script),
                   ==, 0);
}

static char *
base_of (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (handle, &error);

  g_assert_no_error (error);
  return g_strdup (sandbox_state_get_template_key (state));
}

/* Stops @handle and resumes it from the state it reports. */
static SandboxHandle *
stop_and_resume (Fixture       *fixture,
                 SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (handle, &error);
  SandboxHandle *resumed;

  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  resumed = sandbox_backend_resume (fixture->backend, state, fixture->policy, NULL, &error);
  g_assert_no_error (error);
  return resumed;
}

/* templates/@key/@name in the store (one store per state directory). */
static char *
stored_file (Fixture    *fixture,
             const char *key,
             const char *name)
{
  g_autoptr(GDir) dir = g_dir_open (fixture->state_directory, 0, NULL);
  const char *entry;

  g_assert_nonnull (dir);
  while ((entry = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *templates = g_build_filename (fixture->state_directory, entry,
                                                     "templates", NULL);

      if (g_file_test (templates, G_FILE_TEST_IS_DIR))
        return g_build_filename (templates, key, name, NULL);
    }
  g_assert_not_reached ();
}

/* How many stored layers a session over @key lies over, read from the
 * store's records as sandbox_bubblewrap_store_lower_chain() reads them. */
static guint
lower_depth (Fixture    *fixture,
             const char *key)
{
  g_autofree char *current = g_strdup (key);
  guint depth = 1;

  for (;; depth++)
    {
      g_autofree char *flat = stored_file (fixture, current, "flat");
      g_autofree char *flattened = stored_file (fixture, current, "flattened");
      g_autofree char *parent = stored_file (fixture, current, "parent");
      g_autofree char *next = NULL;

      if (g_file_test (flat, G_FILE_TEST_EXISTS) ||
          (!g_file_get_contents (flattened, &next, NULL, NULL) &&
           !g_file_get_contents (parent, &next, NULL, NULL)))
        return depth;
      g_free (current);
      current = g_steal_pointer (&next);
    }
}

static void
assert_host_directory_untouched (Fixture *fixture)
{
  g_assert_cmpuint (sandbox_test_count_entries (fixture->host_directory), ==, 0);
}

/* A session restores to snapshots further down its line (taken by its
 * forks' forks) and back up to its base's parents, in place, keeping its
 * id; its state names the new base, and a stop and resume comes back on
 * the restored tree. Another template's key stays INVALID; a snapshot the
 * session now lies over cannot be deleted. */
static void
test_restore_along_line (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(SandboxTemplate) other = sandbox_template_new ("other");
  g_autoptr(SandboxHandle) child = NULL;
  g_autoptr(SandboxHandle) grandchild = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *id = g_strdup (sandbox_session_get_id (
                                    sandbox_handle_get_session (fixture->handle)));
  g_autofree char *pristine = tree_of (fixture->handle);
  g_autofree char *tree1 = NULL, *tree2 = NULL, *tree3 = NULL, *after = NULL;
  g_autofree char *key1 = NULL, *key2 = NULL, *key3 = NULL, *other_key = NULL;
  g_autofree char *base = NULL;

  sh (fixture->handle, "cd /workspace && printf one > hello.txt && rm src/util.c");
  tree1 = tree_of (fixture->handle);
  key1 = sandbox_test_snapshot (fixture->handle);
  child = sandbox_test_create_session (fixture->backend, key1);
  sh (child, "cd /workspace && rm -r old && mkdir old && printf two > old/new && ln -s x y");
  tree2 = tree_of (child);
  key2 = sandbox_test_snapshot (child);
  grandchild = sandbox_test_create_session (fixture->backend, key2);
  sh (grandchild, "cd /workspace && printf three > src/util.c && chmod 0700 src && rm y");
  tree3 = tree_of (grandchild);
  key3 = sandbox_test_snapshot (grandchild);

  /* Down: two snapshots below its own. */
  sh (fixture->handle, "cd /workspace && rm -rf ./* && printf junk > junk");
  sandbox_test_restore (fixture->handle, key3);
  g_assert_cmpstr (sandbox_session_get_id (sandbox_handle_get_session (fixture->handle)), ==,
                   id);
  after = tree_of (fixture->handle);
  g_assert_cmpstr (after, ==, tree3);
  base = base_of (fixture->handle);
  g_assert_cmpstr (base, ==, key3);
  /* It lies over key3 now: no delete takes it. */
  g_assert_false (sandbox_backend_delete_template (fixture->backend, key3, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);

  /* Its changes from there are its own, and survive a stop and resume. */
  sh (fixture->handle, "cd /workspace && printf four > four");
  g_clear_pointer (&tree3, g_free);
  tree3 = tree_of (fixture->handle);
  resumed = stop_and_resume (fixture, fixture->handle);
  g_clear_object (&fixture->handle);
  fixture->handle = g_object_ref (resumed);
  g_clear_pointer (&after, g_free);
  after = tree_of (resumed);
  g_assert_cmpstr (after, ==, tree3);

  /* Up: the grandchild to its base's parent, then to the template. */
  sandbox_test_restore (grandchild, key1);
  g_clear_pointer (&after, g_free);
  after = tree_of (grandchild);
  g_assert_cmpstr (after, ==, tree1);
  g_clear_pointer (&base, g_free);
  base = base_of (grandchild);
  g_assert_cmpstr (base, ==, key1);
  sandbox_test_restore (grandchild, fixture->template_key);
  g_clear_pointer (&after, g_free);
  after = tree_of (grandchild);
  g_assert_cmpstr (after, ==, pristine);
  /* And down again, to its old base's sibling line. */
  sandbox_test_restore (grandchild, key2);
  g_clear_pointer (&after, g_free);
  after = tree_of (grandchild);
  g_assert_cmpstr (after, ==, tree2);

  /* Another template's line: refused, nothing changed. */
  sandbox_test_template_add_text (other, "x", "x");
  other_key = sandbox_backend_prewarm (fixture->backend, other, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (sandbox_handle_restore (resumed, other_key, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "not in this session's line"));
  g_clear_error (&error);
  g_clear_pointer (&after, g_free);
  after = tree_of (resumed);
  g_assert_cmpstr (after, ==, tree3);

  sandbox_test_delete_session (grandchild);
  sandbox_test_delete_session (child);
}

/* 40 successive snapshot → fork → change steps: past the bound each
 * snapshot is flattened into one layer over the template, every fork sees
 * exactly its parent's tree (whiteouts, an opaque directory and modes
 * across the flattening included), and no line is longer than the bound.
 * A guest's link to a host directory, replaced by a directory of the same
 * name a step later, is removed by the flattening, never written through.
 * The first session restores to keys past the flattening. */
static void
test_flatten (Fixture       *fixture,
              gconstpointer  data)
{
  g_autoptr(SandboxHandle) current = g_object_ref (fixture->handle);
  g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) trees = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *after = NULL;
  gboolean flattened = FALSE;

  if (!g_test_slow ())
    {
      g_test_skip ("40 snapshots and forks: -m slow (workspace-snapshot-flatten)");
      return;
    }

  for (guint step = 1; step <= 40; step++)
    {
      g_autofree char *script = NULL;
      g_autofree char *expected = NULL;
      g_autofree char *forked = NULL;
      g_autofree char *key = NULL;
      g_autofree char *mark = NULL;
      SandboxHandle *next;

      if (step == 1)
        script = g_strdup_printf ("cd /workspace && ln -s %s escape", fixture->host_directory);
      else if (step == 2)
        script = g_strdup ("cd /workspace && rm escape && mkdir escape && printf x > escape/x");
      else if (step == 3)
        script = g_strdup ("cd /workspace && rm -r old && mkdir old && printf n > old/n");
      else if (step % 7 == 0)
        script = g_strdup_printf ("cd /workspace && rm layer-%u && chmod 0%o src", step - 1,
                                  step % 2 ? 0750 : 0755);
      else
        script = g_strdup_printf ("cd /workspace && printf %u > layer-%u && printf %u >> hello.txt",
                                  step, step, step);
      sh (current, script);
      expected = tree_of (current);
      key = sandbox_test_snapshot (current);
      g_assert_cmpuint (lower_depth (fixture, key), <=, MAX_DEPTH + 1);
      mark = stored_file (fixture, key, "flattened");
      flattened |= g_file_test (mark, G_FILE_TEST_EXISTS);
      next = sandbox_test_create_session (fixture->backend, key);
      forked = tree_of (next);
      g_assert_cmpstr (forked, ==, expected);
      assert_host_directory_untouched (fixture);
      if (current != fixture->handle)
        sandbox_test_delete_session (current);
      g_object_unref (current);
      current = next;
      g_ptr_array_add (keys, g_steal_pointer (&key));
      g_ptr_array_add (trees, g_steal_pointer (&expected));
    }
  g_assert_true (flattened);
  /* Restores into the line past the flattening, and to one before it. */
  sandbox_test_restore (fixture->handle, keys->pdata[39]);
  after = tree_of (fixture->handle);
  g_assert_cmpstr (after, ==, trees->pdata[39]);
  sandbox_test_restore (fixture->handle, keys->pdata[20]);
  g_clear_pointer (&after, g_free);
  after = tree_of (fixture->handle);
  g_assert_cmpstr (after, ==, trees->pdata[20]);
  assert_host_directory_untouched (fixture);
  sandbox_test_delete_session (current);
}

/* A copying session from a layered snapshot: its chain materialised, the
 * exact tree a layered fork sees (deletions, an opaque directory, links,
 * modes); it restores to another layered snapshot of the line, and
 * snapshots and forks itself. A link a guest made to a host directory,
 * replaced by a directory in the next layer, is removed, never written
 * through; overlayfs attributes a guest set mean nothing. */
static void
test_copy_from_layered (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(SandboxHandle) layered = NULL;
  g_autoptr(SandboxHandle) copied = NULL;
  g_autoptr(SandboxHandle) copied_fork = NULL;
  g_autofree char *plant = NULL;
  g_autofree char *tree1 = NULL, *tree2 = NULL, *seen = NULL, *flat_tree = NULL;
  g_autofree char *key1 = NULL, *key2 = NULL, *flat_key = NULL;

  plant = g_strdup_printf (
    "cd /workspace && printf one > hello.txt && rm src/util.c && mv old renamed && "
    "ln -s hello.txt link && mkdir -p empty/deeper && chmod 0751 src && "
    "ln -s %s escape && mkdir trap && /usr/bin/python3 -c '\n"
    "import os\n"
    "for call in (lambda: os.setxattr(\"src\", \"user.overlay.opaque\", b\"y\"),\n"
    "             lambda: os.setxattr(\"trap\", \"user.overlay.redirect\", b\"/renamed\")):\n"
    "    try:\n"
    "        call()\n"
    "    except OSError:\n"
    "        pass\n'", fixture->host_directory);
  sh (fixture->handle, plant);
  tree1 = tree_of (fixture->handle);
  key1 = sandbox_test_snapshot (fixture->handle);
  layered = sandbox_test_create_session (fixture->backend, key1);
  sh (layered, "cd /workspace && rm escape && mkdir escape && printf x > escape/x && "
               "rm -r renamed && mkdir renamed && printf n > renamed/n && rm link && "
               "chmod 0600 src/main.c");
  tree2 = tree_of (layered);
  key2 = sandbox_test_snapshot (layered);

  copied = sandbox_test_create_session (fixture->copying, key2);
  seen = tree_of (copied);
  g_assert_cmpstr (seen, ==, tree2);
  assert_host_directory_untouched (fixture);

  sandbox_test_restore (copied, key1);
  g_clear_pointer (&seen, g_free);
  seen = tree_of (copied);
  g_assert_cmpstr (seen, ==, tree1);
  sandbox_test_restore (copied, key2);
  g_clear_pointer (&seen, g_free);
  seen = tree_of (copied);
  g_assert_cmpstr (seen, ==, tree2);

  /* Its own snapshot is a flat one, forked by both layouts. */
  sh (copied, "printf mine > /workspace/mine");
  flat_tree = tree_of (copied);
  flat_key = sandbox_test_snapshot (copied);
  copied_fork = sandbox_test_create_session (fixture->copying, flat_key);
  g_clear_pointer (&seen, g_free);
  seen = tree_of (copied_fork);
  g_assert_cmpstr (seen, ==, flat_tree);
  /* And a layered session of the line restores to it. */
  sandbox_test_restore (layered, flat_key);
  g_clear_pointer (&seen, g_free);
  seen = tree_of (layered);
  g_assert_cmpstr (seen, ==, flat_tree);
  assert_host_directory_untouched (fixture);

  sandbox_test_delete_session (copied_fork);
  sandbox_test_delete_session (copied);
  sandbox_test_delete_session (layered);
}

/* A layer overlayfs would not make, as a crafted one from elsewhere (a
 * peer's published snapshot) may be: a directory that is not opaque over
 * a guest's link to a host directory in the layer below. Materialised,
 * the link is replaced, never merged into: nothing lands in the host
 * directory; overlayfs attributes planted in the layer (a redirect, a
 * metacopy mark) are not copied. Watched failing with the merge following
 * links (fstatat without AT_SYMLINK_NOFOLLOW, openat without O_NOFOLLOW
 * in sandbox-bubblewrap-store-merge.c): x was written into it; and with
 * kept_attribute() in sandbox-bubblewrap-store-snapshots.c keeping every
 * user.* attribute: the copy carried both. */
static void
test_crafted_layer (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(SandboxHandle) layered = NULL;
  g_autoptr(SandboxHandle) copied = NULL;
  g_autofree char *plant = g_strdup_printf ("ln -s %s /workspace/escape",
                                            fixture->host_directory);
  g_autofree char *key1 = NULL, *key2 = NULL, *escape = NULL, *escape_x = NULL, *seen = NULL;
  g_autofree char *attributes = NULL;

  sh (fixture->handle, plant);
  key1 = sandbox_test_snapshot (fixture->handle);
  layered = sandbox_test_create_session (fixture->backend, key1);
  sh (layered, "cd /workspace && rm escape && mkdir escape && printf x > escape/x");
  key2 = sandbox_test_snapshot (layered);
  escape = stored_file (fixture, key2, "data/escape");
  escape_x = stored_file (fixture, key2, "data/escape/x");
  /* overlayfs made it opaque (it replaced a whiteout): no longer. And
   * overlayfs' own attributes, which a copy must never carry to where a
   * later overlay (a flat snapshot's forks) would read them. */
  g_assert_cmpint (removexattr (escape, "user.overlay.opaque"), ==, 0);
  g_assert_cmpint (setxattr (escape, "user.overlay.redirect", "/", 1, 0), ==, 0);
  g_assert_cmpint (setxattr (escape_x, "user.overlay.metacopy", "", 0, 0), ==, 0);

  copied = sandbox_test_create_session (fixture->copying, key2);
  assert_host_directory_untouched (fixture);
  seen = sandbox_test_guest_sh (sandbox_handle_get_session (copied),
                                "cd /workspace && test -d escape && ! test -L escape && "
                                "cat escape/x");
  g_assert_cmpstr (seen, ==, "x");
  attributes = sandbox_test_guest_sh (sandbox_handle_get_session (copied),
                                      "cd /workspace && /usr/bin/python3 -c '"
                                      "import os; print(os.listxattr(\"escape\"), "
                                      "os.listxattr(\"escape/x\"))'");
  g_assert_cmpstr (attributes, ==, "[] []\n");
  sandbox_test_delete_session (copied);
  sandbox_test_delete_session (layered);
}

/* Crashes ----------------------------------------------------------------
 *
 * A host SIGKILLed in a restore that rebases the session (its upper layers
 * emptied, then its state.json naming the new base) leaves the session at
 * its old base or at the new one, its stored state naming the base its
 * layers are: recovered from the state the store has, it shows exactly
 * that base's tree, and its restore leftovers are gone. A restore that
 * wrote the state before emptying the layers would fail it whenever the
 * kill lands between the two (the state naming the new base over the old
 * upper layer); where the kill lands is chance, so this is not a proof. */

#define CRASH_FILES 200

/* Helper mode: a session on @key, and a snapshot two down its line; the
 * session fills its workspace and restores to that snapshot, then to
 * @key, again and again; prints its state and the snapshot's key first,
 * then waits to be killed. */
static int
helper_crash (const char *state_directory,
              const char *key)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend =
    sandbox_test_bubblewrap_new (state_directory, &error, "layering", "auto", NULL);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) child = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autofree char *json = NULL;
  g_autofree char *key1 = NULL;
  g_autofree char *key2 = NULL;
  const char *fill = "mkdir -p /workspace/many && cd /workspace/many && for i in $(seq 1 "
                     G_STRINGIFY (CRASH_FILES) "); do echo $i > f$i; done && echo -n %s > base";
  g_autofree char *fill_on_key = NULL;
  g_autofree char *fill_on_key2 = NULL;

  /* Never outlives the test, whatever becomes of it. */
  g_assert_no_errno (prctl (PR_SET_PDEATHSIG, SIGKILL));
  g_assert_no_error (error);
  handle = sandbox_test_create_session (backend, key);
  sh (handle, "printf one > /workspace/one");
  key1 = sandbox_test_snapshot (handle);
  child = sandbox_test_create_session (backend, key1);
  sh (child, "printf two > /workspace/two && rm /workspace/hello.txt");
  key2 = sandbox_test_snapshot (child);
  sandbox_test_delete_session (child);
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  json = sandbox_state_to_json (state);
  /* Prefixed: debug messages may go to stdout too (G_MESSAGES_DEBUG). */
  printf ("state %s\nkey %s\n", json, key2);
  fflush (stdout);
  /* Each fill ends naming the base it was written over. */
  fill_on_key = g_strdup_printf (fill, key);
  fill_on_key2 = g_strdup_printf (fill, key2);
  for (;;)
    {
      sh (handle, fill_on_key);
      g_assert_true (sandbox_handle_restore (handle, key2, NULL, NULL));
      sh (handle, fill_on_key2);
      g_assert_true (sandbox_handle_restore (handle, key, NULL, NULL));
    }
  return 1;
}

static char *
read_prefixed_line (GDataInputStream *out,
                    const char       *prefix)
{
  for (;;)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *line = g_data_input_stream_read_line (out, NULL, NULL, &error);

      g_assert_no_error (error);
      g_assert_nonnull (line);
      if (g_str_has_prefix (line, prefix))
        return g_strdup (line + strlen (prefix));
    }
}

/* @tree (taken) without the lines of the helper's many/. */
static char *
without_fill (char *tree)
{
  g_auto(GStrv) lines = g_strsplit (tree, "\n", -1);
  g_autoptr(GString) kept = g_string_new (NULL);

  for (guint i = 0; lines[i] != NULL; i++)
    if (lines[i][0] != '\0' && strstr (lines[i], "./many") == NULL)
      g_string_append_printf (kept, "%s\n", lines[i]);
  g_free (tree);
  return g_string_free (g_steal_pointer (&kept), FALSE);
}

static guint
count_restores (const char *layers)
{
  g_autoptr(GDir) dir = g_dir_open (layers, 0, NULL);
  const char *name;
  guint count = 0;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    count += g_str_has_prefix (name, "restore-");
  return count;
}

static void
test_crash_in_rebase (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) helper = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) stored = NULL;
  g_autoptr(SandboxBackend) after = NULL;
  g_autoptr(SandboxHandle) recovered = NULL;
  g_autoptr(SandboxHandle) base = NULL;
  g_autofree char *json = NULL, *key2 = NULL, *layers = NULL;
  g_autofree char *expected = NULL, *seen = NULL, *fill_base = NULL;
  guint waited;

  helper = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, self, "--helper-crash",
                             fixture->state_directory, fixture->template_key, NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (helper));
  json = read_prefixed_line (out, "state ");
  key2 = read_prefixed_line (out, "key ");
  state = sandbox_state_new_from_json (json, &error);
  g_assert_no_error (error);
  layers = g_build_filename (fixture->state_directory, digest, "sessions",
                             sandbox_state_get_session_id (state), "layers", NULL);

  /* Killed while a restore is under way, its second time round at least. */
  g_usleep (G_USEC_PER_SEC / 2);
  for (waited = 0; count_restores (layers) == 0 && waited < 30000; waited++)
    g_usleep (1000);
  g_assert_cmpuint (count_restores (layers), >, 0);
  g_subprocess_force_exit (helper);
  g_assert_true (g_subprocess_wait (helper, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_term_sig (helper), ==, SIGKILL);

  /* The base the store's state names is the tree the session shows. */
  after = sandbox_test_bubblewrap_new (fixture->state_directory, &error, "layering", "auto",
                                       NULL);
  g_assert_no_error (error);
  stored = sandbox_backend_lookup_state (after, sandbox_state_get_session_id (state), NULL,
                                         &error);
  g_assert_no_error (error);
  g_test_message ("killed at base %s", sandbox_state_get_template_key (stored));
  g_assert_true (g_str_equal (sandbox_state_get_template_key (stored), key2) ||
                 g_str_equal (sandbox_state_get_template_key (stored), fixture->template_key));
  recovered = sandbox_backend_recover_session (after, stored, fixture->policy, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (count_restores (layers), ==, 0);
  base = sandbox_test_create_session (after, sandbox_state_get_template_key (stored));
  /* Killed before the new (empty) upper layer was swapped in, the restore
   * did not happen: the session is as it was, its base with the helper's
   * fill (many/, whole or, killed in the next fill, in part) over it.
   * After the swap it is its base, or the new one. Either way everything
   * but many/ is the named base's. */
  expected = without_fill (tree_of (base));
  seen = without_fill (tree_of (recovered));
  g_assert_cmpstr (seen, ==, expected);
  /* A fill the session still shows was written over the base its state
   * names: its upper layer never lies over another base's. */
  fill_base = sandbox_test_guest_sh (sandbox_handle_get_session (recovered),
                                     "cat /workspace/many/base 2>/dev/null; true");
  if (fill_base[0] != '\0')
    g_assert_cmpstr (fill_base, ==, sandbox_state_get_template_key (stored));
  sandbox_test_delete_session (base);
  sandbox_test_delete_session (recovered);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 4 && g_str_equal (argv[1], "--helper-crash"))
    return helper_crash (argv[2], argv[3]);
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/snapshot-line/restore-along-line", Fixture, NULL, fixture_set_up,
              test_restore_along_line, fixture_tear_down);
  g_test_add ("/snapshot-line/copy-from-layered", Fixture, NULL, fixture_set_up,
              test_copy_from_layered, fixture_tear_down);
  g_test_add ("/snapshot-line/crafted-layer", Fixture, NULL, fixture_set_up,
              test_crafted_layer, fixture_tear_down);
  g_test_add ("/snapshot-line/crash-in-rebase", Fixture, NULL, fixture_set_up,
              test_crash_in_rebase, fixture_tear_down);
  g_test_add ("/snapshot-line/flatten", Fixture, NULL, fixture_set_up, test_flatten,
              fixture_tear_down);
  return g_test_run ();
}
