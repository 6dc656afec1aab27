/* test-snapshot.c — snapshots and forks of layered bubblewrap sessions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Real bwrap, real overlayfs. Run as root and as the unprivileged
 * sandbox-test (run-unprivileged.sh). Every tree is compared as a command
 * inside the sandbox sees it.
 */

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"

/* Everything of /workspace a guest can tell apart: each entry's type, mode
 * and path (a link's target), then each file's digest. */
#define TREE_DIGEST \
  "cd /workspace && find . -printf '%y %m %p -> %l\\n' | LC_ALL=C sort && " \
  "find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum"

typedef struct
{
  char *state_directory;
  SandboxBackend *backend;
  SandboxNetworkPolicy *policy;
  char *template_key;
  SandboxHandle *handle;
  SandboxSession *session;
} Fixture;

static SandboxHandle *
create (Fixture    *fixture,
        const char *key)
{
  return sandbox_test_create_session (fixture->backend, key);
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("snapshotted");
  g_autoptr(GError) error = NULL;
  g_autofree char *layering = NULL;

  fixture->state_directory = sandbox_test_state_directory_new ();
  fixture->backend = sandbox_test_bubblewrap_new (fixture->state_directory, &error,
                                                  "layering", "auto", NULL);
  g_assert_no_error (error);
  g_object_get (fixture->backend, "workspace-layering", &layering, NULL);
  g_assert_cmpstr (layering, ==, "overlay");
  fixture->policy = sandbox_network_policy_new_deny_all ();

  sandbox_test_template_add_text (template_, "hello.txt", "hello");
  sandbox_test_template_add_text (template_, "src/main.c", "int main;");
  sandbox_test_template_add_text (template_, "src/util.c", "int util;");
  sandbox_test_template_add_text (template_, "old/a.txt", "a");
  sandbox_test_template_add_text (template_, "old/sub/b.txt", "b");
  sandbox_test_template_add_text (template_, "opaque/gone.txt", "gone");
  fixture->template_key = sandbox_backend_prewarm (fixture->backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  fixture->handle = create (fixture, fixture->template_key);
  fixture->session = sandbox_handle_get_session (fixture->handle);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  if (fixture->handle != NULL)
    sandbox_test_delete_session (fixture->handle);
  g_clear_object (&fixture->handle);
  g_clear_object (&fixture->backend);
  g_clear_object (&fixture->policy);
  sandbox_test_remove_tree (fixture->state_directory);
  g_free (fixture->state_directory);
  g_free (fixture->template_key);
}

static char *
tree_of (SandboxHandle *handle)
{
  return sandbox_test_guest_sh (sandbox_handle_get_session (handle), TREE_DIGEST);
}

/* Whether @handle's tree is (@same) or is not @expected's. */
static void
assert_tree (SandboxHandle *handle,
             gboolean       same,
             const char    *expected)
{
  g_autofree char *tree = tree_of (handle);

  if (same)
    g_assert_cmpstr (tree, ==, expected);
  else
    g_assert_cmpstr (tree, !=, expected);
}

/* Edits, deletions of template files (whiteouts), a renamed directory, an
 * opaque one (removed and made again), new links, an empty directory and
 * modes. */
static void
make_changes (SandboxSession *session)
{
  g_free (sandbox_test_guest_sh (session,
                                 "cd /workspace && printf changed > hello.txt && rm src/util.c && "
                                 "mv old renamed && ln -s hello.txt link && "
                                 "ln -s /etc/passwd dangling && mkdir -p empty/deeper && "
                                 "chmod 0751 src && chmod 0600 src/main.c && "
                                 "rm -r opaque && mkdir opaque && printf new > opaque/new.txt"));
}

/* A snapshot is the session's files exactly; three forks each see exactly
 * that, and a write in one reaches no other, nor the parent session or the
 * template. */
static void
test_fork (Fixture       *fixture,
           gconstpointer  data)
{
  g_autofree char *before = tree_of (fixture->handle);
  g_autofree char *parent_tree = NULL;
  g_autofree char *key = NULL;
  g_autofree char *again = NULL;
  g_autoptr(SandboxHandle) pristine = NULL;
  g_autofree char *pristine_tree = NULL;
  SandboxHandle *forks[3];

  make_changes (fixture->session);
  parent_tree = tree_of (fixture->handle);
  g_assert_cmpstr (parent_tree, !=, before);
  g_assert_nonnull (strstr (parent_tree, "l 777 ./link -> hello.txt"));
  g_assert_nonnull (strstr (parent_tree, "d 751 ./src"));
  g_assert_nonnull (strstr (parent_tree, "d 755 ./empty/deeper"));
  g_assert_null (strstr (parent_tree, "util.c"));
  g_assert_null (strstr (parent_tree, "gone.txt"));

  key = sandbox_test_snapshot (fixture->handle);
  g_assert_cmpstr (key, !=, fixture->template_key);
  /* Nothing changed since: the same snapshot. */
  again = sandbox_test_snapshot (fixture->handle);
  g_assert_cmpstr (again, ==, key);
  assert_tree (fixture->handle, TRUE, parent_tree);

  for (guint i = 0; i < G_N_ELEMENTS (forks); i++)
    {
      g_autofree char *tree = NULL;

      forks[i] = create (fixture, key);
      g_assert_cmpstr (sandbox_session_get_id (sandbox_handle_get_session (forks[i])), !=,
                       sandbox_session_get_id (fixture->session));
      tree = tree_of (forks[i]);
      g_assert_cmpstr (tree, ==, parent_tree);
    }

  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (forks[0]),
                                 "cd /workspace && printf mine > hello.txt && "
                                 "printf x > renamed/x && rm link"));
  assert_tree (forks[0], FALSE, parent_tree);
  for (guint i = 1; i < G_N_ELEMENTS (forks); i++)
    {
      g_autofree char *tree = tree_of (forks[i]);

      g_assert_cmpstr (tree, ==, parent_tree);
    }
  assert_tree (fixture->handle, TRUE, parent_tree);
  pristine = create (fixture, fixture->template_key);
  pristine_tree = tree_of (pristine);
  g_assert_cmpstr (pristine_tree, ==, before);

  /* A snapshot of a fork lies over the first: its fork sees both. */
  {
    g_autofree char *fork_tree = tree_of (forks[0]);
    g_autofree char *second = sandbox_test_snapshot (forks[0]);
    g_autoptr(SandboxHandle) grandchild = create (fixture, second);
    g_autofree char *grandchild_tree = tree_of (grandchild);

    g_assert_cmpstr (second, !=, key);
    g_assert_cmpstr (grandchild_tree, ==, fork_tree);
    sandbox_test_delete_session (grandchild);
  }

  for (guint i = 0; i < G_N_ELEMENTS (forks); i++)
    {
      sandbox_test_delete_session (forks[i]);
      g_object_unref (forks[i]);
    }
  sandbox_test_delete_session (pristine);
}

/* Snapshots while a command runs are refused (BUSY), and work again once
 * it is gone. */
static void
test_busy (Fixture       *fixture,
           gconstpointer  data)
{
  g_autoptr(SandboxCommand) command = SANDBOX_TEST_COMMAND ("/usr/bin/sleep", "60");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  g_autoptr(SandboxResult) result = NULL;

  process = sandbox_test_spawn (fixture->session, g_steal_pointer (&command), NULL, &error);
  g_assert_no_error (error);
  key = sandbox_handle_snapshot (fixture->handle, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_null (key);
  g_assert_nonnull (strstr (error->message, "taking a snapshot"));
  g_clear_error (&error);

  g_assert_true (sandbox_process_stop (process, NULL, &error));
  g_assert_no_error (error);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  key = sandbox_test_snapshot (fixture->handle);
}

/* A template or snapshot that a session or snapshot lies over stays. */
static void
test_delete_refused (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  g_autoptr(SandboxHandle) fork = NULL;

  make_changes (fixture->session);
  key = sandbox_test_snapshot (fixture->handle);
  fork = create (fixture, key);
  g_assert_false (sandbox_backend_delete_template (fixture->backend, key, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);

  sandbox_test_delete_session (fork);
  sandbox_test_delete_session (fixture->handle);
  g_clear_object (&fixture->handle);
  /* No session of the template is left; the snapshot still lies over it. */
  g_assert_false (sandbox_backend_delete_template (fixture->backend, fixture->template_key, NULL,
                                                   &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "snapshot"));
  g_clear_error (&error);

  g_assert_true (sandbox_backend_delete_template (fixture->backend, key, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_backend_delete_template (fixture->backend, fixture->template_key, NULL,
                                                  &error));
  g_assert_no_error (error);
}

/* @key's record in @listed. */
static SandboxTemplateInfo *
find_info (GPtrArray  *listed,
           const char *key)
{
  for (guint i = 0; i < listed->len; i++)
    if (g_str_equal (sandbox_template_info_get_key (listed->pdata[i]), key))
      return listed->pdata[i];
  g_assert_not_reached ();
}

/* The listing gives each snapshot's parent, its own layer's size and what
 * lies over it: template ← first ← second (taken in a fork of first). */
static void
test_lineage_listed (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autoptr(SandboxHandle) fork = NULL;
  g_autoptr(GPtrArray) listed = NULL;
  SandboxTemplateInfo *info;

  g_assert_true (sandbox_session_write_text (fixture->session, "one.txt", "1", NULL, &error));
  first = sandbox_test_snapshot (fixture->handle);
  fork = create (fixture, first);
  g_assert_true (sandbox_session_write_text (sandbox_handle_get_session (fork), "two.txt", "22",
                                             NULL, &error));
  second = sandbox_test_snapshot (fork);
  listed = sandbox_backend_list_templates (fixture->backend, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (listed->len, ==, 3);

  info = find_info (listed, fixture->template_key);
  g_assert_null (sandbox_template_info_get_parent_key (info));
  g_assert_cmpuint (sandbox_template_info_get_n_snapshots (info), ==, 1);
  g_assert_cmpuint (sandbox_template_info_get_n_sessions (info), ==, 1);
  g_assert_cmpuint (sandbox_template_info_get_n_files (info), ==, 6);

  /* Its own layer: one.txt only. */
  info = find_info (listed, first);
  g_assert_cmpstr (sandbox_template_info_get_parent_key (info), ==, fixture->template_key);
  g_assert_cmpuint (sandbox_template_info_get_n_snapshots (info), ==, 1);
  g_assert_cmpuint (sandbox_template_info_get_n_sessions (info), ==, 1);
  g_assert_cmpuint (sandbox_template_info_get_n_files (info), ==, 1);
  g_assert_cmpuint (sandbox_template_info_get_n_bytes (info), ==, 1);

  info = find_info (listed, second);
  g_assert_cmpstr (sandbox_template_info_get_parent_key (info), ==, first);
  g_assert_cmpuint (sandbox_template_info_get_n_snapshots (info), ==, 0);
  g_assert_cmpuint (sandbox_template_info_get_n_sessions (info), ==, 0);
  g_assert_cmpuint (sandbox_template_info_get_n_bytes (info), ==, 2);
  sandbox_test_delete_session (fork);
}

#define N_FORKS 100

/* 100 forks of one snapshot: each sees the snapshot and writes a file of
 * its own that no other fork, nor the parent, sees. Slow: only with -m slow
 * (the suite 'slow'). */
static void
test_hundred_forks (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(GPtrArray) forks = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;

  g_assert_true (sandbox_session_write_text (fixture->session, "hello.txt", "parent", NULL,
                                             &error));
  key = sandbox_test_snapshot (fixture->handle);
  for (guint i = 0; i < N_FORKS; i++)
    {
      g_autofree char *mine = g_strdup_printf ("%u", i);

      g_ptr_array_add (forks, create (fixture, key));
      g_assert_true (sandbox_session_write_text (sandbox_handle_get_session (forks->pdata[i]),
                                                 "fork.txt", mine, NULL, &error));
      g_assert_no_error (error);
    }
  for (guint i = 0; i < N_FORKS; i++)
    {
      SandboxSession *session = sandbox_handle_get_session (forks->pdata[i]);
      g_autofree char *expected = g_strdup_printf ("%u", i);
      g_autofree char *hello = sandbox_session_read_text (session, "hello.txt", NULL, &error);
      g_autofree char *mine = NULL;

      g_assert_no_error (error);
      g_assert_cmpstr (hello, ==, "parent");
      mine = sandbox_session_read_text (session, "fork.txt", NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (mine, ==, expected);
    }
  g_assert_null (sandbox_session_read_text (fixture->session, "fork.txt", NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  for (guint i = 0; i < N_FORKS; i++)
    sandbox_test_delete_session (forks->pdata[i]);
}

/* A fork stopped and resumed is layered over the snapshot again. */
static void
test_fork_resumes (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *parent_tree = NULL;
  g_autofree char *key = NULL;
  g_autofree char *resumed_tree = NULL;
  g_autoptr(SandboxHandle) fork = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;

  make_changes (fixture->session);
  parent_tree = tree_of (fixture->handle);
  key = sandbox_test_snapshot (fixture->handle);
  fork = create (fixture, key);
  state = sandbox_handle_capture_state (fork, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sandbox_state_get_template_key (state), ==, key);
  g_assert_true (sandbox_handle_stop (fork, NULL, &error));
  g_assert_no_error (error);
  resumed = sandbox_backend_resume (fixture->backend, state, fixture->policy, NULL, &error);
  g_assert_no_error (error);
  resumed_tree = tree_of (resumed);
  g_assert_cmpstr (resumed_tree, ==, parent_tree);
  sandbox_test_delete_session (resumed);
}

/* Restore puts back the exact tree of a snapshot, or of the template, in
 * place: same session, its files and commands working. */
static void
test_restore (Fixture       *fixture,
              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *pristine_tree = tree_of (fixture->handle);
  g_autofree char *snapshot_tree = NULL;
  g_autofree char *key = NULL;
  g_autofree char *hello = NULL;
  g_autofree char *after = NULL;
  g_autofree char *id = g_strdup (sandbox_session_get_id (fixture->session));

  make_changes (fixture->session);
  snapshot_tree = tree_of (fixture->handle);
  key = sandbox_test_snapshot (fixture->handle);
  g_free (sandbox_test_guest_sh (fixture->session,
                                 "cd /workspace && rm -rf ./* && printf junk > junk && "
                                 "mkdir src && printf j > src/main.c"));
  g_assert_true (sandbox_session_write_text (fixture->session, "hello.txt", "host", NULL,
                                             &error));
  g_assert_no_error (error);

  g_assert_true (sandbox_handle_restore (fixture->handle, key, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (sandbox_session_get_id (fixture->session), ==, id);
  after = tree_of (fixture->handle);
  g_assert_cmpstr (after, ==, snapshot_tree);
  hello = sandbox_session_read_text (fixture->session, "hello.txt", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hello, ==, "changed");

  /* Changes after a restore are the session's again; a restore to the
   * template drops them all. */
  g_assert_true (sandbox_session_write_text (fixture->session, "more.txt", "more", NULL,
                                             &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_restore (fixture->handle, fixture->template_key, NULL, &error));
  g_assert_no_error (error);
  g_clear_pointer (&after, g_free);
  after = tree_of (fixture->handle);
  g_assert_cmpstr (after, ==, pristine_tree);

  /* And back again, as often as wanted. */
  g_assert_true (sandbox_handle_restore (fixture->handle, key, NULL, &error));
  g_assert_no_error (error);
  g_clear_pointer (&after, g_free);
  after = tree_of (fixture->handle);
  g_assert_cmpstr (after, ==, snapshot_tree);
}

/* Restore refuses what is not in the session's line, and runs no command
 * over; it takes what is further down it. */
static void
test_restore_refused (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(SandboxTemplate) other = sandbox_template_new ("other");
  g_autoptr(SandboxCommand) command = SANDBOX_TEST_COMMAND ("/usr/bin/sleep", "60");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *other_key = NULL;
  g_autofree char *key = NULL;
  g_autofree char *grandchild_key = NULL;
  g_autoptr(SandboxHandle) fork = NULL;

  sandbox_test_template_add_text (other, "x", "x");
  other_key = sandbox_backend_prewarm (fixture->backend, other, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (sandbox_handle_restore (fixture->handle, other_key, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (sandbox_handle_restore (fixture->handle, "nonsense", NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_clear_error (&error);

  make_changes (fixture->session);
  key = sandbox_test_snapshot (fixture->handle);
  fork = create (fixture, key);
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (fork), "printf g > /workspace/g"));
  grandchild_key = sandbox_test_snapshot (fork);
  /* Further down its line: rebased (test-snapshot-line.c). */
  g_assert_true (sandbox_handle_restore (fixture->handle, grandchild_key, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -f /workspace/g"), ==, 0);
  /* The fork restores to its own base, the snapshot. */
  g_assert_true (sandbox_handle_restore (fork, key, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (fork),
                                              "test ! -e /workspace/g"), ==, 0);
  sandbox_test_delete_session (fork);

  process = sandbox_test_spawn (fixture->session, g_steal_pointer (&command), NULL, &error);
  g_assert_no_error (error);
  g_assert_false (sandbox_handle_restore (fixture->handle, key, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_nonnull (strstr (error->message, "restoring a snapshot"));
  g_clear_error (&error);
  g_assert_true (sandbox_process_stop (process, NULL, &error));
  g_assert_no_error (error);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_restore (fixture->handle, key, NULL, &error));
  g_assert_no_error (error);
}

/* What a guest plants before a snapshot — links to host paths, a hard
 * link, overlayfs' own attributes, a whiteout of its own — shows a fork
 * exactly what the guest saw, never a host file nor another session's
 * data. */
static void
test_guest_attacks (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autofree char *token = sandbox_test_unique_token ();
  g_autofree char *secret = g_build_filename (fixture->state_directory, "host-secret", NULL);
  g_autofree char *plant = NULL;
  g_autofree char *planted = NULL;
  g_autofree char *parent_tree = NULL;
  g_autofree char *key = NULL;
  g_autofree char *fork_tree = NULL;
  g_autofree char *seen = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *hello = NULL;
  g_autoptr(SandboxHandle) fork = NULL;
  g_autoptr(SandboxHandle) other = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_set_contents (secret, token, -1, &error));
  g_assert_no_error (error);
  other = create (fixture, fixture->template_key);
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (other),
                                 "printf other-session > /workspace/hello.txt"));

  plant = g_strdup_printf (
    "cd /workspace && ln -s %s leak && ln -s %s leakdir && printf ' again' >> hello.txt && "
    "ln hello.txt hard && mkdir trap && /usr/bin/python3 -c '\n"
    "import os\n"
    "for what, call in ((\"opaque\", lambda: os.setxattr(\"src\", \"user.overlay.opaque\", b\"y\")),\n"
    "                   (\"redirect\", lambda: os.setxattr(\"trap\", \"user.overlay.redirect\", b\"/old\")),\n"
    "                   (\"whiteout\", lambda: os.mknod(\"wh\", 0o20000, os.makedev(0, 0)))):\n"
    "    try:\n"
    "        call(); print(what, \"planted\")\n"
    "    except OSError as e:\n"
    "        print(what, \"refused\", e.errno)\n'",
    secret, fixture->state_directory);
  planted = sandbox_test_guest_sh (fixture->session, plant);
  g_test_message ("the guest's plants: %s", planted);
  parent_tree = tree_of (fixture->handle);
  key = sandbox_test_snapshot (fixture->handle);
  fork = create (fixture, key);
  fork_tree = tree_of (fork);
  g_assert_cmpstr (fork_tree, ==, parent_tree);
  g_assert_null (strstr (fork_tree, token));

  /* The links are links, to what the guest sees there (nothing). */
  seen = sandbox_test_guest_sh (sandbox_handle_get_session (fork),
                                "cd /workspace && readlink leak && test -L leakdir && "
                                "! cat leak 2>/dev/null && ! ls leakdir/ 2>/dev/null && "
                                "ls src && ls -A trap && cat hard && echo");
  g_assert_null (strstr (seen, token));
  expected = g_strdup_printf ("%s\nmain.c\nutil.c\nhello again\n", secret);
  g_assert_cmpstr (seen, ==, expected);
  g_assert_null (sandbox_session_read_text (sandbox_handle_get_session (fork), "leak", NULL,
                                            &error));
  g_assert_nonnull (error);
  g_clear_error (&error);

  /* The hard link is the fork's own file: writing it changes nothing
   * elsewhere. */
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (fork),
                                 "printf fork > /workspace/hard"));
  hello = sandbox_session_read_text (fixture->session, "hello.txt", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hello, ==, "hello again");
  g_clear_pointer (&hello, g_free);
  hello = sandbox_session_read_text (sandbox_handle_get_session (other), "hello.txt", NULL,
                                     &error);
  g_assert_no_error (error);
  g_assert_cmpstr (hello, ==, "other-session");
  sandbox_test_delete_session (fork);
  sandbox_test_delete_session (other);
}

/* Forks of forks lie over at most 32 snapshots (the keeper's options fit
 * in a page): the 33rd snapshot is flattened, not refused, and its fork
 * sees every layer's change (test-snapshot-line.c's flatten goes on). */
static void
test_depth_limit (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(SandboxHandle) current = g_object_ref (fixture->handle);
  g_autoptr(SandboxHandle) flattened = NULL;
  g_autofree char *count = NULL;
  g_autofree char *key = NULL;

  for (guint depth = 1; depth <= 32; depth++)
    {
      g_autofree char *script = g_strdup_printf ("printf %u > /workspace/layer-%u", depth, depth);
      g_autofree char *step_key = NULL;
      SandboxHandle *next;

      g_free (sandbox_test_guest_sh (sandbox_handle_get_session (current), script));
      step_key = sandbox_test_snapshot (current);
      next = create (fixture, step_key);
      if (current != fixture->handle)
        sandbox_test_delete_session (current);
      g_object_unref (current);
      current = next;
    }
  count = sandbox_test_guest_sh (sandbox_handle_get_session (current),
                                 "ls /workspace | grep -c '^layer-'");
  g_assert_cmpstr (count, ==, "32\n");
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (current),
                                 "rm /workspace/layer-1"));
  key = sandbox_test_snapshot (current);
  flattened = create (fixture, key);
  g_clear_pointer (&count, g_free);
  count = sandbox_test_guest_sh (sandbox_handle_get_session (flattened),
                                 "ls /workspace | grep -c '^layer-'; test ! -e /workspace/layer-1");
  g_assert_cmpstr (count, ==, "31\n");
  sandbox_test_delete_session (flattened);
  sandbox_test_delete_session (current);
}

/* @handle's tree but its top directory's line: a layered session's top is
 * its upper layer's (0755), a copying one's its workspace's (0700). */
static char *
tree_below_top (SandboxHandle *handle)
{
  g_autofree char *tree = tree_of (handle);
  g_auto(GStrv) lines = g_strsplit (tree, "\n", -1);
  GString *below = g_string_new (NULL);

  for (guint i = 0; lines[i] != NULL; i++)
    if (!g_str_has_suffix (lines[i], " . -> "))
      g_string_append_printf (below, "%s\n", lines[i]);
  return g_string_free (below, FALSE);
}

/* A session that copies its template (no overlayfs) snapshots its whole
 * workspace, a flat snapshot: copying and layered sessions fork from it,
 * it restores the copying session, and each layout restores to and is
 * created from the other's snapshots. */
static void
test_copy_layout (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) copying =
    sandbox_test_bubblewrap_new (fixture->state_directory, &error, "layering", "copy", NULL);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) copied_fork = NULL;
  g_autoptr(SandboxHandle) layered_fork = NULL;
  g_autoptr(SandboxHandle) refused = NULL;
  g_autofree char *pristine = NULL;
  g_autofree char *changed = NULL;
  g_autofree char *changed_below = NULL;
  g_autofree char *layered_below = NULL;
  g_autofree char *key = NULL;
  g_autofree char *layered_key = NULL;

  g_assert_no_error (error);
  handle = sandbox_test_create_session (copying, fixture->template_key);
  pristine = tree_of (handle);
  make_changes (sandbox_handle_get_session (handle));
  changed = tree_of (handle);
  changed_below = tree_below_top (handle);
  key = sandbox_test_snapshot (handle);
  g_assert_cmpstr (key, !=, fixture->template_key);

  /* Forks of both layouts see exactly the snapshot. */
  copied_fork = sandbox_test_create_session (copying, key);
  layered_fork = create (fixture, key);
  assert_tree (copied_fork, TRUE, changed);
  layered_below = tree_below_top (layered_fork);
  g_assert_cmpstr (layered_below, ==, changed_below);
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (copied_fork),
                                 "cd /workspace && printf mine > hello.txt"));
  assert_tree (handle, TRUE, changed);
  g_clear_pointer (&layered_below, g_free);
  layered_below = tree_below_top (layered_fork);
  g_assert_cmpstr (layered_below, ==, changed_below);

  /* Restored in place, to the snapshot and to the template. */
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (handle),
                                 "cd /workspace && rm -rf -- * .[!.]* && echo junk > junk"));
  g_assert_true (sandbox_handle_restore (handle, key, NULL, &error));
  g_assert_no_error (error);
  assert_tree (handle, TRUE, changed);
  g_assert_true (sandbox_handle_restore (handle, fixture->template_key, NULL, &error));
  g_assert_no_error (error);
  assert_tree (handle, TRUE, pristine);

  /* A layered fork's snapshot is a layer: a copying session gets its
   * chain materialised (test-snapshot-line.c tests the tree); a layered
   * session of the line restores to the flat snapshot, rebased onto it. */
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (layered_fork),
                                 "cd /workspace && printf layered > layered.txt"));
  layered_key = sandbox_test_snapshot (layered_fork);
  refused = sandbox_backend_create (copying, layered_key, NULL, fixture->policy, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (refused),
                                              "test -f /workspace/layered.txt"), ==, 0);
  sandbox_test_delete_session (refused);
  g_assert_true (sandbox_handle_restore (layered_fork, key, NULL, &error));
  g_assert_no_error (error);
  g_clear_pointer (&layered_below, g_free);
  layered_below = tree_below_top (layered_fork);
  g_assert_cmpstr (layered_below, ==, changed_below);
  g_assert_true (sandbox_handle_restore (fixture->handle, key, NULL, &error));
  g_assert_no_error (error);
  g_clear_pointer (&layered_below, g_free);
  layered_below = tree_below_top (fixture->handle);
  g_assert_cmpstr (layered_below, ==, changed_below);

  sandbox_test_delete_session (layered_fork);
  sandbox_test_delete_session (copied_fork);
  sandbox_test_delete_session (handle);
}

/* Crashes ----------------------------------------------------------------
 *
 * A host SIGKILLed in the middle of a snapshot leaves a half-built
 * templates/<uuid>; in the middle of a restore, a layers/restore-<uuid>
 * (a half-filled upper layer, or the old one swapped out). Neither is
 * visible as a template or in the session, and the next backend on the
 * store (for a build nobody holds any more and older than a minute) or
 * the session's recovery removes them. To see it fail, take out the call
 * of sandbox_bubblewrap_store_remove_build_leftovers() in
 * sandbox-bubblewrap-backend.c, or of
 * sandbox_bubblewrap_store_remove_restore_leftovers() in
 * sandbox-bubblewrap-store-sessions.c: the leftover stays. */

#define CRASH_FILES 300

/* Helper mode: owns a session with many changed files over @key and
 * snapshots it (@what "snapshot") or restores it to its own snapshot
 * ("restore") again and again; prints its state and that snapshot's key
 * first, then waits to be killed. */
static int
helper_crash (const char *state_directory,
              const char *key,
              const char *what)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend =
    sandbox_test_bubblewrap_new (state_directory, &error, "layering",
                                 g_str_has_suffix (what, "-copy") ? "copy" : "auto", NULL);
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autofree char *json = NULL;
  g_autofree char *snapshot_key = NULL;

  /* Never outlives the test, whatever becomes of it. */
  g_assert_no_errno (prctl (PR_SET_PDEATHSIG, SIGKILL));
  g_assert_no_error (error);
  handle = sandbox_test_create_session (backend, key);
  g_free (sandbox_test_guest_sh (sandbox_handle_get_session (handle),
                                 "mkdir many && cd many && for i in $(seq 1 "
                                 G_STRINGIFY (CRASH_FILES) "); do echo $i > f$i; done"));
  snapshot_key = sandbox_test_snapshot (handle);
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  json = sandbox_state_to_json (state);
  /* Prefixed: debug messages may go to stdout too (G_MESSAGES_DEBUG). */
  printf ("state %s\nkey %s\n", json, snapshot_key);
  fflush (stdout);
  for (;;)
    {
      if (g_str_has_prefix (what, "restore"))
        g_assert_true (sandbox_handle_restore (handle, snapshot_key, NULL, NULL));
      else
        g_free (sandbox_test_snapshot (handle));
    }
  return 1;
}

/* The rest of the first line of @out that starts with @prefix. */
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

/* The names in @directory that @is_leftover picks. */
static guint
count_names (const char *directory,
             gboolean  (*is_leftover) (const char *name))
{
  g_autoptr(GDir) dir = g_dir_open (directory, 0, NULL);
  const char *name;
  guint count = 0;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    count += is_leftover (name);
  return count;
}

static gboolean
is_build (const char *name)
{
  return g_uuid_string_is_valid (name);
}

static gboolean
is_restore (const char *name)
{
  return g_str_has_prefix (name, "restore-");
}

/* Sets every build in @templates a minute and more back, as time would. */
static void
age_builds (const char *templates)
{
  g_autoptr(GDir) dir = g_dir_open (templates, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (is_build (name))
      {
        g_autofree char *path = g_build_filename (templates, name, NULL);
        struct timespec times[2] = { { time (NULL) - 120, 0 }, { time (NULL) - 120, 0 } };

        g_assert_no_errno (utimensat (AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW));
      }
}

static void
test_crash (Fixture       *fixture,
            gconstpointer  data)
{
  const char *what = data;
  gboolean restoring = g_str_has_prefix (what, "restore");
  const char *layering = g_str_has_suffix (what, "-copy") ? "copy" : "auto";
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *templates = g_build_filename (fixture->state_directory, digest, "templates",
                                                 NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) helper = NULL;
  g_autoptr(GDataInputStream) out = NULL;
  g_autofree char *json = NULL;
  g_autofree char *snapshot_key = NULL;
  g_autofree char *layers = NULL;
  g_autofree char *expected = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxBackend) after = NULL;
  g_autoptr(SandboxHandle) recovered = NULL;
  g_autoptr(SandboxHandle) fork = NULL;
  g_autoptr(GPtrArray) listed = NULL;
  const char *watched;
  gboolean (*is_leftover) (const char *name) = restoring ? is_restore : is_build;
  guint waited;

  helper = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error, self, "--helper-crash",
                             fixture->state_directory, fixture->template_key, what, NULL);
  g_assert_no_error (error);
  out = g_data_input_stream_new (g_subprocess_get_stdout_pipe (helper));
  json = read_prefixed_line (out, "state ");
  snapshot_key = read_prefixed_line (out, "key ");
  state = sandbox_state_new_from_json (json, &error);
  g_assert_no_error (error);
  layers = g_build_filename (fixture->state_directory, digest, "sessions",
                             sandbox_state_get_session_id (state),
                             g_str_equal (layering, "copy") ? NULL : "layers", NULL);
  watched = restoring ? layers : templates;

  /* Killed while a build or a restore is under way. */
  for (waited = 0; count_names (watched, is_leftover) == 0 && waited < 30000; waited++)
    g_usleep (1000);
  g_assert_cmpuint (count_names (watched, is_leftover), >, 0);
  g_subprocess_force_exit (helper);
  g_assert_true (g_subprocess_wait (helper, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_term_sig (helper), ==, SIGKILL);

  /* Nothing half-made is a template. */
  listed = sandbox_backend_list_templates (fixture->backend, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (listed->len, ==, 2);

  /* A build a minute old that nobody holds goes when a backend opens the
   * store; the session's restore leftovers go when it is recovered. */
  age_builds (templates);
  /* A child the builder forked may hold its lock a moment longer. */
  for (guint tries = 0; tries < 100; tries++)
    {
      g_clear_object (&after);
      after = sandbox_test_bubblewrap_new (fixture->state_directory, &error,
                                           "layering", layering, NULL);
      g_assert_no_error (error);
      if (count_names (templates, is_build) == 0)
        break;
      g_usleep (50 * 1000);
    }
  g_assert_cmpuint (count_names (templates, is_build), ==, 0);
  recovered = sandbox_backend_recover_session (after, state, fixture->policy, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (count_names (layers, is_restore), ==, 0);

  /* The session has its files, as they were snapshotted (a fork of the
   * same layout shows them the same way). */
  fork = sandbox_test_create_session (after, snapshot_key);
  expected = tree_of (fork);
  assert_tree (recovered, TRUE, expected);
  sandbox_test_delete_session (fork);
  sandbox_test_delete_session (recovered);
}

/* What is not a leftover stays: a build its builder still locks, however
 * old, and one younger than a minute, which its builder may not have locked
 * yet. Make is_build_leftover() in sandbox-bubblewrap-store-templates.c
 * answer TRUE and both are removed. */
static void
test_build_in_progress_kept (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *templates = g_build_filename (fixture->state_directory, digest, "templates",
                                                 NULL);
  g_autofree char *locked_name = g_uuid_string_random ();
  g_autofree char *young_name = g_uuid_string_random ();
  g_autofree char *locked = g_build_filename (templates, locked_name, NULL);
  g_autofree char *young = g_build_filename (templates, young_name, NULL);
  g_autoptr(GError) error = NULL;
  int lock;

  g_assert_no_errno (mkdir (locked, 0700));
  g_assert_no_errno (mkdir (young, 0700));
  lock = open (locked, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (lock, >=, 0);
  g_assert_no_errno (flock (lock, LOCK_EX));
  {
    struct timespec times[2] = { { time (NULL) - 120, 0 }, { time (NULL) - 120, 0 } };
    g_autoptr(SandboxBackend) again = NULL;

    g_assert_no_errno (utimensat (AT_FDCWD, locked, times, 0));
    again = sandbox_test_bubblewrap_new (fixture->state_directory, &error, NULL);
    g_assert_no_error (error);
    g_assert_true (g_file_test (locked, G_FILE_TEST_IS_DIR));
    g_assert_true (g_file_test (young, G_FILE_TEST_IS_DIR));
  }
  /* Its builder gone, the old one goes. */
  close (lock);
  {
    g_autoptr(SandboxBackend) again = sandbox_test_bubblewrap_new (fixture->state_directory,
                                                                   &error, NULL);

    g_assert_no_error (error);
    g_assert_false (g_file_test (locked, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_test (young, G_FILE_TEST_IS_DIR));
  }
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 5 && g_str_equal (argv[1], "--helper-crash"))
    return helper_crash (argv[2], argv[3], argv[4]);

  g_test_init (&argc, &argv, NULL);

  g_test_add ("/snapshot/copy-layout", Fixture, NULL, fixture_set_up, test_copy_layout,
              fixture_tear_down);
  g_test_add ("/snapshot/fork", Fixture, NULL, fixture_set_up, test_fork, fixture_tear_down);
  g_test_add ("/snapshot/fork-resumes", Fixture, NULL, fixture_set_up, test_fork_resumes,
              fixture_tear_down);
  g_test_add ("/snapshot/restore", Fixture, NULL, fixture_set_up, test_restore,
              fixture_tear_down);
  g_test_add ("/snapshot/restore-refused", Fixture, NULL, fixture_set_up, test_restore_refused,
              fixture_tear_down);
  g_test_add ("/snapshot/guest-attacks", Fixture, NULL, fixture_set_up, test_guest_attacks,
              fixture_tear_down);
  g_test_add ("/snapshot/depth-limit", Fixture, NULL, fixture_set_up, test_depth_limit,
              fixture_tear_down);
  g_test_add ("/snapshot/busy", Fixture, NULL, fixture_set_up, test_busy, fixture_tear_down);
  g_test_add ("/snapshot/delete-refused", Fixture, NULL, fixture_set_up, test_delete_refused,
              fixture_tear_down);
  g_test_add ("/snapshot/lineage-listed", Fixture, NULL, fixture_set_up, test_lineage_listed,
              fixture_tear_down);
  if (g_test_slow ())
    g_test_add ("/snapshot/hundred-forks", Fixture, NULL, fixture_set_up, test_hundred_forks,
                fixture_tear_down);
  g_test_add ("/snapshot/crash-in-snapshot", Fixture, "snapshot", fixture_set_up, test_crash,
              fixture_tear_down);
  g_test_add ("/snapshot/crash-in-restore", Fixture, "restore", fixture_set_up, test_crash,
              fixture_tear_down);
  g_test_add ("/snapshot/crash-in-copied-restore", Fixture, "restore-copy", fixture_set_up,
              test_crash, fixture_tear_down);
  g_test_add ("/snapshot/build-in-progress-kept", Fixture, NULL, fixture_set_up,
              test_build_in_progress_kept, fixture_tear_down);

  return g_test_run ();
}
