/* sandbox-conformance-snapshots.c — the checks of snapshots, forks and
 * restores of a session's workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-conformance-private.h"

/*
 * Every check starts from a template of its own (files, nested and empty
 * directories) and makes the same changes in a session: an edit, a
 * template file deleted, a directory renamed (its files written under the
 * new name and the old one removed, as mv does across overlay layers), a
 * new file, a new empty directory and, for a driver that runs commands, a
 * new symbolic link (`/usr/bin/ln -s moved link`). A tree is compared
 * through the file API over every path the template, the changes and the
 * forks name: each must be the file with its contents, a directory
 * (IS_DIRECTORY), or missing (NOT_FOUND). A driver whose snapshot() is
 * %G_IO_ERROR_NOT_SUPPORTED skips these checks.
 */

#define TREE_DIRECTORY "\001directory"
#define TREE_MISSING   "\001missing"
#define N_FORKS        3

static const char * const tree_paths[] = {
  "conformance.txt", "dir", "dir/nested.txt", "dir/sub", "dir/sub/deep.txt", "gone.txt", "empty",
  "moved", "moved/nested.txt", "moved/sub", "moved/sub/deep.txt", "new", "new/file.txt",
  "new/empty", "link", "link/nested.txt", "junk", "junk/file.txt", "fork-0.txt", "fork-1.txt",
  "fork-2.txt",
};

/* The changes, in order: a path and its new contents, or NULL to remove it. */
static const char * const changes[][2] = {
  { "conformance.txt", "edited\n" },
  { "gone.txt", NULL },
  { "moved/nested.txt", "nested\n" },
  { "moved/sub/deep.txt", "deep\n" },
  { "dir", NULL },
  { "new/file.txt", "new\n" },
  { "new/empty/file.txt", "x" },
  { "new/empty/file.txt", NULL },
};

static void
tree_set (GHashTable *tree,
          const char *path,
          const char *contents)
{
  g_hash_table_insert (tree, g_strdup (path), g_strdup (contents));
}

/* The template's tree: every other path of tree_paths missing. */
static GHashTable *
template_tree (void)
{
  GHashTable *tree = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (gsize i = 0; i < G_N_ELEMENTS (tree_paths); i++)
    tree_set (tree, tree_paths[i], TREE_MISSING);
  tree_set (tree, "conformance.txt", CONFORMANCE_HELLO);
  tree_set (tree, "dir", TREE_DIRECTORY);
  tree_set (tree, "dir/nested.txt", "nested\n");
  tree_set (tree, "dir/sub", TREE_DIRECTORY);
  tree_set (tree, "dir/sub/deep.txt", "deep\n");
  tree_set (tree, "gone.txt", "gone\n");
  tree_set (tree, "empty", TREE_DIRECTORY);
  return tree;
}

/* The tree after the changes (with the link when @link). */
static GHashTable *
changed_tree (gboolean link)
{
  GHashTable *tree = template_tree ();

  for (gsize i = 0; i < G_N_ELEMENTS (changes); i++)
    if (changes[i][1] != NULL)
      tree_set (tree, changes[i][0], changes[i][1]);
  g_hash_table_remove (tree, "new/empty/file.txt");   /* made and removed again */
  tree_set (tree, "new/empty", TREE_DIRECTORY);
  tree_set (tree, "new", TREE_DIRECTORY);
  tree_set (tree, "moved", TREE_DIRECTORY);
  tree_set (tree, "moved/sub", TREE_DIRECTORY);
  for (const char * const *gone = (const char * const[]) { "gone.txt", "dir", "dir/nested.txt",
                                                            "dir/sub", "dir/sub/deep.txt", NULL };
       *gone != NULL; gone++)
    tree_set (tree, *gone, TREE_MISSING);
  if (link)
    {
      tree_set (tree, "link", TREE_DIRECTORY);   /* followed to moved/ */
      tree_set (tree, "link/nested.txt", "nested\n");
    }
  return tree;
}

static char *
describe_entry (const char *contents)
{
  if (g_str_equal (contents, TREE_DIRECTORY))
    return g_strdup ("a directory");
  if (g_str_equal (contents, TREE_MISSING))
    return g_strdup ("missing");
  return g_strdup_printf ("a file of %" G_GSIZE_FORMAT " known bytes", strlen (contents));
}

/* Reads every path of @tree in @session; fails naming @whose and the path. */
static gboolean
expect_tree (ConformanceRun  *run,
             SandboxSession  *session,
             GHashTable      *tree,
             const char      *whose,
             GError         **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS (tree_paths); i++)
    {
      const char *path = tree_paths[i];
      const char *expected = g_hash_table_lookup (tree, path);
      g_autoptr(GBytes) bytes = NULL;
      g_autofree char *what = NULL;
      g_autofree char *described = describe_entry (expected);
      GError *local_error = NULL;

      what = g_strdup_printf ("%s: “%s”, expected %s", whose, path, described);
      bytes = sandbox_session_read_bytes (session, path, run->cancellable, &local_error);
      if (g_str_equal (expected, TREE_MISSING))
        {
          if (!conformance_expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, what,
                                         error))
            return FALSE;
        }
      else if (g_str_equal (expected, TREE_DIRECTORY))
        {
          if (!conformance_expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY, what,
                                         error))
            return FALSE;
        }
      else if (!conformance_expect_success (&local_error, what, error) ||
               !conformance_expect_bytes (bytes, expected, strlen (expected), what, error))
        return FALSE;
    }
  return TRUE;
}

/* The checks' template; with @variant, one of its own (a file more). */
static char *
prewarm_tree_template (ConformanceRun  *run,
                       const char      *variant,
                       GError         **error)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("conformance-snapshots");
  g_autoptr(GHashTable) tree = template_tree ();
  GHashTableIter iter;
  gpointer path, contents;
  GError *local_error = NULL;
  char *key = NULL;

  g_hash_table_iter_init (&iter, tree);
  while (g_hash_table_iter_next (&iter, &path, &contents))
    {
      g_autoptr(GBytes) bytes = g_bytes_new (contents, strlen (contents));

      if (g_str_equal (path, "empty"))
        sandbox_template_add_empty_directory (template_, path, &local_error);
      else if (!g_str_equal (contents, TREE_DIRECTORY) && !g_str_equal (contents, TREE_MISSING))
        sandbox_template_add_file (template_, path, bytes, &local_error);
      if (!conformance_expect_success (&local_error, "building the snapshot checks' template",
                                       error))
        return NULL;
    }
  if (variant != NULL)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (variant, strlen (variant));

      sandbox_template_add_file (template_, "variant.txt", bytes, &local_error);
    }
  if (local_error == NULL)
    key = sandbox_backend_prewarm (run->backend, template_, NULL, run->cancellable,
                                   &local_error);
  conformance_expect_success (&local_error, "prewarming the snapshot checks' template", error);
  return key;
}

static SandboxHandle *
create_from (ConformanceRun  *run,
             const char      *key,
             const char      *what,
             GError         **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  GError *local_error = NULL;
  SandboxHandle *handle;

  handle = sandbox_backend_create (run->backend, key, NULL, policy, run->cancellable,
                                   &local_error);
  conformance_expect_success (&local_error, what, error);
  return handle;
}

/* A new session of @key, discarded after, must have @tree. */
static gboolean
expect_new_session_tree (ConformanceRun  *run,
                         const char      *key,
                         GHashTable      *tree,
                         const char      *whose,
                         GError         **error)
{
  g_autoptr(SandboxHandleDiscard) handle = create_from (run, key, whose, error);

  return handle != NULL &&
         expect_tree (run, sandbox_handle_get_session (handle), tree, whose, error);
}

static gboolean
write_file (ConformanceRun  *run,
            SandboxSession  *session,
            const char      *path,
            const char      *text,
            GError         **error)
{
  g_autofree char *what = g_strdup_printf ("write “%s”", path);
  GError *local_error = NULL;

  sandbox_session_write_text (session, path, text, run->cancellable, &local_error);
  return conformance_expect_success (&local_error, what, error);
}

/* Makes the changes (see above) in @session. */
static gboolean
make_changes (ConformanceRun  *run,
              SandboxSession  *session,
              GError         **error)
{
  g_autoptr(SandboxCommand) ln = conformance_probe_command ("/usr/bin/ln", "-s");
  g_autoptr(SandboxResult) result = NULL;
  GError *local_error = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (changes); i++)
    {
      g_autofree char *what = g_strdup_printf ("%s “%s”", changes[i][1] ? "write" : "remove",
                                               changes[i][0]);

      if (changes[i][1] != NULL)
        sandbox_session_write_text (session, changes[i][0], changes[i][1], run->cancellable,
                                    &local_error);
      else
        sandbox_session_remove_path (session, changes[i][0], run->cancellable, &local_error);
      if (!conformance_expect_success (&local_error, what, error))
        return FALSE;
    }
  if (!conformance_claims_commands (run))
    return TRUE;
  sandbox_command_add_arg (ln, "moved");
  sandbox_command_add_arg (ln, "link");
  result = sandbox_session_run (session, ln, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "run /usr/bin/ln -s moved link", error))
    return FALSE;
  if (sandbox_result_get_exit_status (result) != 0)
    return CHECK_FAILED (error, "/usr/bin/ln -s moved link exited with status %d",
                         sandbox_result_get_exit_status (result));
  return TRUE;
}

/* sandbox_handle_snapshot(); %NULL with run->skip_reason set when the
 * driver has no snapshots, or with @error set. */
static char *
take_snapshot (ConformanceRun  *run,
               SandboxHandle   *handle,
               const char      *what,
               GError         **error)
{
  GError *local_error = NULL;
  char *key = sandbox_handle_snapshot (handle, run->cancellable, &local_error);

  if (key == NULL && g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED))
    {
      g_free (run->skip_reason);
      run->skip_reason = g_strdup_printf ("the driver has no snapshots (snapshot() is "
                                          "NOT_SUPPORTED: %s)", local_error->message);
      g_clear_error (&local_error);
      return NULL;
    }
  conformance_expect_success (&local_error, what, error);
  if (key != NULL && !sandbox_template_key_is_valid (key))
    {
      g_clear_pointer (&key, g_free);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "%s: the snapshot's key is not a template key", what);
    }
  return key;
}

/* A session of the checks' template (*@template_key, of @variant) with
 * the changes made, and its snapshot (returned); %NULL as take_snapshot().
 * Whether the driver has snapshots is asked first, of a plain session,
 * before anything it may not support (an empty directory, a link). */
static char *
snapshot_changed_session (ConformanceRun  *run,
                          const char      *variant,
                          char           **template_key,
                          SandboxHandle  **handle,
                          GError         **error)
{
  g_autoptr(SandboxHandleDiscard) plain = conformance_new_session (run, error);
  g_autofree char *probed = NULL;

  if (plain == NULL ||
      (probed = take_snapshot (run, plain, "snapshot() of a new session", error)) == NULL)
    return NULL;
  *template_key = prewarm_tree_template (run, variant, error);
  if (*template_key == NULL)
    return NULL;
  *handle = create_from (run, *template_key, "create from the snapshot checks' template", error);
  if (*handle == NULL ||
      !make_changes (run, sandbox_handle_get_session (*handle), error))
    return NULL;
  return take_snapshot (run, *handle, "snapshot() of a changed session", error);
}

static gboolean
check_snapshot_capture (ConformanceRun  *run,
                        GError         **error)
{
  g_autoptr(SandboxHandleDiscard) parent = NULL;
  g_autoptr(SandboxHandleDiscard) fork = NULL;
  g_autoptr(GHashTable) changed = changed_tree (conformance_claims_commands (run));
  g_autoptr(GHashTable) template_ = template_tree ();
  g_autofree char *template_key = NULL;
  g_autofree char *key = NULL;

  key = snapshot_changed_session (run, NULL, &template_key, &parent, error);
  if (key == NULL)
    return run->skip_reason != NULL;
  if (g_str_equal (key, template_key))
    return CHECK_FAILED (error, "the snapshot of a changed session has its template's key");
  if (!expect_tree (run, sandbox_handle_get_session (parent), changed,
                    "the session after its snapshot", error))
    return FALSE;
  /* What the session writes after its snapshot is not in it. */
  if (!write_file (run, sandbox_handle_get_session (parent), "junk/file.txt", "junk\n", error))
    return FALSE;
  fork = create_from (run, key, "create from the snapshot's key (a fork)", error);
  if (fork == NULL ||
      !expect_tree (run, sandbox_handle_get_session (fork), changed, "a fork", error))
    return FALSE;
  if (g_str_equal (sandbox_session_get_id (sandbox_handle_get_session (fork)),
                   sandbox_session_get_id (sandbox_handle_get_session (parent))))
    return CHECK_FAILED (error, "a fork has the id of the session it was forked from");
  return expect_new_session_tree (run, template_key, template_,
                                  "a new session of the template", error);
}

/* N forks of one snapshot: each sees exactly the snapshot, then writes a
 * file of its own and through the link, as the forked session writes one;
 * no write shows anywhere else. */
static gboolean
check_snapshot_forks_isolated (ConformanceRun  *run,
                               GError         **error)
{
  g_autoptr(SandboxHandleDiscard) parent = NULL;
  g_autoptr(SandboxHandleDiscard) fork0 = NULL;
  g_autoptr(SandboxHandleDiscard) fork1 = NULL;
  g_autoptr(SandboxHandleDiscard) fork2 = NULL;
  SandboxHandle **forks[N_FORKS] = { &fork0, &fork1, &fork2 };
  gboolean link = conformance_claims_commands (run);
  g_autoptr(GHashTable) changed = changed_tree (link);
  g_autoptr(GHashTable) template_ = template_tree ();
  g_autofree char *template_key = NULL;
  g_autofree char *key = NULL;

  key = snapshot_changed_session (run, NULL, &template_key, &parent, error);
  if (key == NULL)
    return run->skip_reason != NULL;
  for (guint i = 0; i < N_FORKS; i++)
    {
      g_autofree char *whose = g_strdup_printf ("fork %u before any fork wrote", i);

      *forks[i] = create_from (run, key, "create a fork from the snapshot's key", error);
      if (*forks[i] == NULL ||
          !expect_tree (run, sandbox_handle_get_session (*forks[i]), changed, whose, error))
        return FALSE;
    }
  if (!write_file (run, sandbox_handle_get_session (parent), "junk/file.txt", "junk\n", error))
    return FALSE;
  for (guint i = 0; i < N_FORKS; i++)
    {
      SandboxSession *session = sandbox_handle_get_session (*forks[i]);
      g_autofree char *own = g_strdup_printf ("fork-%u.txt", i);
      g_autofree char *text = g_strdup_printf ("written by fork %u\n", i);

      if (!write_file (run, session, own, text, error) ||
          !write_file (run, session, link ? "link/nested.txt" : "moved/nested.txt", text, error))
        return FALSE;
    }
  for (guint i = 0; i < N_FORKS; i++)
    {
      g_autoptr(GHashTable) expected = changed_tree (link);
      g_autofree char *own = g_strdup_printf ("fork-%u.txt", i);
      g_autofree char *text = g_strdup_printf ("written by fork %u\n", i);
      g_autofree char *whose = g_strdup_printf ("fork %u after every fork wrote", i);

      tree_set (expected, own, text);
      tree_set (expected, "moved/nested.txt", text);
      if (link)
        tree_set (expected, "link/nested.txt", text);
      if (!expect_tree (run, sandbox_handle_get_session (*forks[i]), expected, whose, error))
        return FALSE;
    }
  tree_set (changed, "junk", TREE_DIRECTORY);
  tree_set (changed, "junk/file.txt", "junk\n");
  if (!expect_tree (run, sandbox_handle_get_session (parent), changed,
                    "the forked session after its forks wrote", error))
    return FALSE;
  g_hash_table_unref (changed);
  changed = changed_tree (link);
  return expect_new_session_tree (run, key, changed, "a new fork after the others wrote",
                                  error) &&
         expect_new_session_tree (run, template_key, template_,
                                  "a new session of the template after the forks wrote", error);
}

static gboolean
check_snapshot_same_key (ConformanceRun  *run,
                         GError         **error)
{
  g_autoptr(SandboxHandleDiscard) first = NULL;
  g_autoptr(SandboxHandleDiscard) second = NULL;
  g_autofree char *template_key = NULL;
  g_autofree char *key = NULL;
  g_autofree char *again = NULL;
  g_autofree char *same = NULL;
  g_autofree char *other = NULL;

  key = snapshot_changed_session (run, NULL, &template_key, &first, error);
  if (key == NULL)
    return run->skip_reason != NULL;
  again = take_snapshot (run, first, "a second snapshot() with no change between", error);
  if (again == NULL)
    return FALSE;
  if (!g_str_equal (key, again))
    return CHECK_FAILED (error, "two snapshots of one unchanged session have different keys");
  second = create_from (run, template_key, "create a second session of the template", error);
  if (second == NULL || !make_changes (run, sandbox_handle_get_session (second), error))
    return FALSE;
  same = take_snapshot (run, second, "snapshot() of the same changes", error);
  if (same == NULL)
    return FALSE;
  if (!g_str_equal (key, same))
    return CHECK_FAILED (error, "the same changes over the same template have different keys");
  if (!write_file (run, sandbox_handle_get_session (second), "conformance.txt", "other\n", error))
    return FALSE;
  other = take_snapshot (run, second, "snapshot() after one more change", error);
  if (other == NULL)
    return FALSE;
  if (g_str_equal (key, other))
    return CHECK_FAILED (error, "different changes have the same snapshot key");
  return TRUE;
}

static gboolean
restore (ConformanceRun  *run,
         SandboxHandle   *handle,
         const char      *key,
         const char      *what,
         GError         **error)
{
  GError *local_error = NULL;

  sandbox_handle_restore (handle, key, run->cancellable, &local_error);
  return conformance_expect_success (&local_error, what, error);
}

static gboolean
check_snapshot_restore (ConformanceRun  *run,
                        GError         **error)
{
  static const char * const top[] = { "conformance.txt", "moved", "new", "link", "empty" };
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(GHashTable) changed = changed_tree (conformance_claims_commands (run));
  g_autoptr(GHashTable) template_ = template_tree ();
  g_autoptr(SandboxState) before = NULL;
  g_autoptr(SandboxState) after = NULL;
  g_autofree char *template_key = NULL;
  g_autofree char *key = NULL;
  SandboxSession *session;
  GError *local_error = NULL;

  key = snapshot_changed_session (run, NULL, &template_key, &handle, error);
  if (key == NULL)
    return run->skip_reason != NULL;
  session = sandbox_handle_get_session (handle);
  before = conformance_capture_state (handle, "capture_state() before the restore", error);
  if (before == NULL)
    return FALSE;

  /* rm -rf of the workspace, then something else. */
  for (gsize i = 0; i < G_N_ELEMENTS (top); i++)
    {
      sandbox_session_remove_path (session, top[i], run->cancellable, &local_error);
      if (!conformance_expect_success (&local_error, "removing the whole workspace", error))
        return FALSE;
    }
  if (!write_file (run, session, "junk/file.txt", "junk\n", error))
    return FALSE;

  if (!restore (run, handle, key, "restore() to the snapshot after removing everything", error) ||
      !expect_tree (run, session, changed, "the session restored to its snapshot", error))
    return FALSE;
  after = conformance_capture_state (handle, "capture_state() after the restore", error);
  if (after == NULL)
    return FALSE;
  if (!g_str_equal (sandbox_state_get_session_id (before), sandbox_state_get_session_id (after)) ||
      !g_str_equal (sandbox_state_get_template_key (before),
                    sandbox_state_get_template_key (after)))
    return CHECK_FAILED (error, "restore() changed the session's id or template");
  if (!conformance_expect_resume_refused (run, after, SANDBOX_ERROR_BUSY,
                                          "a second owner took the session's lease after "
                                          "restore()", "resuming a restored live session", error))
    return FALSE;

  if (!restore (run, handle, template_key, "restore() to the session's template", error) ||
      !expect_tree (run, session, template_, "the session restored to its template", error))
    return FALSE;
  return restore (run, handle, key, "restore() to the snapshot again", error) &&
         expect_tree (run, session, changed, "the session restored to its snapshot again",
                      error);
}

static gboolean
expect_restore_refused (ConformanceRun  *run,
                        SandboxHandle   *handle,
                        const char      *key,
                        const char      *what,
                        GError         **error)
{
  GError *local_error = NULL;

  if (sandbox_handle_restore (handle, key, run->cancellable, &local_error))
    return CHECK_FAILED (error, "%s: expected INVALID, got success", what);
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID, what,
                                   error);
}

/* A snapshot over one of the session's snapshots is further down its
 * line: a backend refuses the restore (INVALID), or makes it (bubblewrap:
 * the session then lies over @deeper, and its state names it) and comes
 * back up to @key the same way. */
static gboolean
check_restore_further_down (ConformanceRun  *run,
                            SandboxHandle   *handle,
                            const char      *key,
                            const char      *deeper,
                            GHashTable      *changed,
                            GError         **error)
{
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GBytes) bytes = NULL;
  GError *local_error = NULL;

  if (!sandbox_handle_restore (handle, deeper, run->cancellable, &local_error))
    return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                                     "restore() to a snapshot over one of the session's "
                                     "snapshots", error);
  bytes = sandbox_session_read_bytes (session, "fork-0.txt", run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "reading the fork's file after a restore "
                                   "further down the line", error))
    return FALSE;
  if (g_bytes_get_size (bytes) != 5 || memcmp (g_bytes_get_data (bytes, NULL), "fork\n", 5) != 0)
    return CHECK_FAILED (error, "restore() further down the line: fork-0.txt is not the fork's");
  state = conformance_capture_state (handle, "capture_state() after a restore further down",
                                     error);
  if (state == NULL)
    return FALSE;
  if (!g_str_equal (sandbox_state_get_template_key (state), deeper))
    return CHECK_FAILED (error, "restore() further down the line: the state names %s, not %s",
                         sandbox_state_get_template_key (state), deeper);
  if (!restore (run, handle, key, "restore() back up the session's line", error) ||
      !expect_tree (run, session, changed, "the session restored back up its line", error))
    return FALSE;
  g_clear_pointer (&bytes, g_bytes_unref);
  bytes = sandbox_session_read_bytes (session, "fork-0.txt", run->cancellable, &local_error);
  return conformance_expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                                   "the fork's file after a restore back up the line", error);
}

static gboolean
check_snapshot_restore_foreign (ConformanceRun  *run,
                                GError         **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxHandleDiscard) stranger = NULL;
  g_autoptr(SandboxHandleDiscard) fork = NULL;
  g_autoptr(GHashTable) changed = changed_tree (conformance_claims_commands (run));
  g_autofree char *template_key = NULL;
  g_autofree char *key = NULL;
  g_autofree char *strange = NULL;
  g_autofree char *deeper = NULL;

  key = snapshot_changed_session (run, NULL, &template_key, &handle, error);
  if (key == NULL)
    return run->skip_reason != NULL;
  stranger = conformance_new_session (run, error);
  if (stranger == NULL)
    return FALSE;
  strange = take_snapshot (run, stranger, "snapshot() of a session of another template", error);
  fork = strange != NULL ? create_from (run, key, "create a fork", error) : NULL;
  if (fork == NULL)
    return FALSE;
  if (!write_file (run, sandbox_handle_get_session (fork), "fork-0.txt", "fork\n", error))
    return FALSE;
  deeper = take_snapshot (run, fork, "snapshot() of the fork", error);
  if (deeper == NULL)
    return FALSE;

  if (!expect_restore_refused (run, handle, run->other_key, "restore() to another template",
                               error) ||
      !expect_restore_refused (run, handle, strange,
                               "restore() to a snapshot over another template", error) ||
      !expect_restore_refused (run, handle, "not-a-key", "restore() to a malformed key", error))
    return FALSE;
  if (!expect_tree (run, sandbox_handle_get_session (handle), changed,
                    "the session after the refused restores", error) ||
      !check_restore_further_down (run, handle, key, deeper, changed, error))
    return FALSE;
  /* The fork's own line: its template (the snapshot) and a snapshot over it. */
  return restore (run, fork, key, "restore() of a fork to the snapshot it was created from",
                  error) &&
         restore (run, fork, deeper, "restore() of a fork to its own snapshot", error);
}

/* delete_template() of @key must fail with BUSY when @busy, else succeed. */
static gboolean
expect_delete (ConformanceRun  *run,
               const char      *key,
               gboolean         busy,
               const char      *what,
               GError         **error)
{
  GError *local_error = NULL;

  if (sandbox_backend_delete_template (run->backend, key, run->cancellable, &local_error))
    return !busy || CHECK_FAILED (error, "%s: expected BUSY, got success", what);
  if (!busy)
    return conformance_expect_success (&local_error, what, error);
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY, what, error);
}

static gboolean
check_snapshot_delete_busy (ConformanceRun  *run,
                            GError         **error)
{
  g_autoptr(SandboxHandleDiscard) parent = NULL;
  g_autoptr(SandboxHandleDiscard) fork = NULL;
  g_autofree char *template_key = NULL;
  g_autofree char *key = NULL;
  g_autofree char *deeper = NULL;
  GError *local_error = NULL;

  /* A template of its own, which it deletes in the end. */
  key = snapshot_changed_session (run, "delete", &template_key, &parent, error);
  if (key == NULL)
    return run->skip_reason != NULL;
  fork = create_from (run, key, "create a fork", error);
  if (fork == NULL)
    return FALSE;
  if (!sandbox_backend_delete_template (run->backend, key, run->cancellable, &local_error) &&
      g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED))
    {
      run->skip_reason = g_strdup_printf ("the driver cannot delete templates: %s",
                                          local_error->message);
      g_clear_error (&local_error);
      return TRUE;
    }
  if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                                 "delete_template() of a snapshot a session was forked from",
                                 error))
    return FALSE;
  if (!write_file (run, sandbox_handle_get_session (fork), "fork-0.txt", "fork\n", error))
    return FALSE;
  deeper = take_snapshot (run, fork, "snapshot() of the fork", error);
  if (deeper == NULL)
    return FALSE;
  g_clear_pointer (&fork, conformance_discard_session);
  g_clear_pointer (&parent, conformance_discard_session);
  if (!expect_delete (run, key, TRUE,
                      "delete_template() of a snapshot another snapshot lies over", error) ||
      !expect_delete (run, template_key, TRUE,
                      "delete_template() of a template a snapshot lies over", error) ||
      !expect_delete (run, deeper, FALSE, "delete_template() of a snapshot nothing uses", error) ||
      !expect_delete (run, key, FALSE, "delete_template() of a snapshot no longer used", error) ||
      !expect_delete (run, template_key, FALSE, "delete_template() of the template after its "
                      "snapshots", error))
    return FALSE;
  return conformance_expect_create_refused (run, run->backend, key, NULL, SANDBOX_ERROR_NOT_FOUND,
                                            "a session was created from a deleted snapshot",
                                            "create from a deleted snapshot", error);
}

static gboolean
check_snapshot_busy_while_command_runs (ConformanceRun  *run,
                                        GError         **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) sleep_ = conformance_probe_command ("/usr/bin/sleep", "30");
  g_autoptr(SandboxProcess) process = NULL;
  g_autofree char *template_key = NULL;
  g_autofree char *key = NULL;
  g_autofree char *busy = NULL;
  g_autofree char *after = NULL;
  GError *local_error = NULL;
  gboolean ok;

  key = snapshot_changed_session (run, NULL, &template_key, &handle, error);
  if (key == NULL)
    return run->skip_reason != NULL;
  process = sandbox_session_spawn (sandbox_handle_get_session (handle), sleep_, run->cancellable,
                                   &local_error);
  if (!conformance_expect_success (&local_error, "spawn /usr/bin/sleep 30", error))
    return FALSE;
  busy = sandbox_handle_snapshot (handle, run->cancellable, &local_error);
  if (busy != NULL)
    ok = CHECK_FAILED (error, "snapshot() while a command runs: expected BUSY, got a key");
  else
    ok = conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                                   "snapshot() while a command runs", error);
  if (ok && sandbox_handle_restore (handle, template_key, run->cancellable, &local_error))
    ok = CHECK_FAILED (error, "restore() while a command runs: expected BUSY, got success");
  else if (ok)
    ok = conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                                   "restore() while a command runs", error);
  sandbox_process_stop (process, NULL, NULL);
  if (!ok)
    return FALSE;
  after = take_snapshot (run, handle, "snapshot() once the command was stopped", error);
  if (after == NULL)
    return FALSE;
  return g_str_equal (key, after) ||
         CHECK_FAILED (error, "the snapshot after a refused one has another key, with no change "
                       "between");
}

/* @key's record in the backend's listing, or NULL with @error set. */
static SandboxTemplateInfo *
find_listed (ConformanceRun  *run,
             const char      *key,
             GError         **error)
{
  g_autoptr(GPtrArray) listed = NULL;
  GError *local_error = NULL;

  listed = sandbox_backend_list_templates (run->backend, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "list_templates()", error))
    return NULL;
  for (guint i = 0; i < listed->len; i++)
    if (g_str_equal (sandbox_template_info_get_key (listed->pdata[i]), key))
      return g_object_ref (listed->pdata[i]);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "list_templates() does not list %s", key);
  return NULL;
}

static gboolean
check_snapshot_lineage_listed (ConformanceRun  *run,
                               GError         **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxTemplateInfo) snapshot = NULL;
  g_autoptr(SandboxTemplateInfo) template_ = NULL;
  g_autofree char *template_key = NULL;
  g_autofree char *key = NULL;

  key = snapshot_changed_session (run, NULL, &template_key, &handle, error);
  if (key == NULL)
    return run->skip_reason != NULL;
  snapshot = find_listed (run, key, error);
  template_ = snapshot != NULL ? find_listed (run, template_key, error) : NULL;
  if (template_ == NULL)
    return FALSE;
  if (g_strcmp0 (sandbox_template_info_get_parent_key (snapshot), template_key) != 0)
    return CHECK_FAILED (error, "the snapshot is listed with parent %s, not its session's "
                         "template", sandbox_template_info_get_parent_key (snapshot));
  if (sandbox_template_info_get_parent_key (template_) != NULL)
    return CHECK_FAILED (error, "a prewarmed template is listed with a parent");
  if (sandbox_template_info_get_n_snapshots (template_) == 0)
    return CHECK_FAILED (error, "the template is listed with no snapshot over it");
  return TRUE;
}

const ConformanceCheck conformance_snapshot_checks[] = {
  { "snapshot/fork-sees-the-snapshot", check_snapshot_capture, FALSE, CONFORMANCE_FIXTURE_NONE },
  { "snapshot/forks-isolated", check_snapshot_forks_isolated, FALSE, CONFORMANCE_FIXTURE_NONE },
  { "snapshot/same-changes-same-key", check_snapshot_same_key, FALSE, CONFORMANCE_FIXTURE_NONE },
  { "snapshot/restore-exact-tree", check_snapshot_restore, FALSE, CONFORMANCE_FIXTURE_NONE },
  { "snapshot/restore-foreign-key-invalid", check_snapshot_restore_foreign,
    FALSE, CONFORMANCE_FIXTURE_NONE },
  { "snapshot/delete-in-use-busy", check_snapshot_delete_busy, FALSE, CONFORMANCE_FIXTURE_NONE },
  { "snapshot/lineage-listed", check_snapshot_lineage_listed, FALSE, CONFORMANCE_FIXTURE_NONE },
  { "snapshot/busy-while-command-runs", check_snapshot_busy_while_command_runs,
    TRUE, CONFORMANCE_FIXTURE_NONE },
  { NULL, NULL, FALSE, FALSE }
};
