/* test-escape-store.c — the host's file calls, the store and the lease under
 * a hostile guest
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The attack class "store and lease races" of issue 14: a guest plants
 * symbolic links, FIFOs and swapping directories in its workspace for the
 * host's own file calls (read_bytes, write_bytes, remove_path), aiming at
 * the session's store files next to the workspace, whose host path it
 * reads in /proc/self/mountinfo; and two processes resume one session.
 * Modelled on:
 * - Docker CVE-2018-15664 (`docker cp` symlink-exchange race) and
 *   CVE-2014-6407 (host-side archive extraction following container
 *   symlinks);
 * - runc CVE-2021-30465 (a symlink swapped in while the runtime works on
 *   a container path) and CVE-2019-19921;
 * - flatpak CVE-2024-42472 (persistent directory as a symlink to a host
 *   path) and CVE-2021-43860-style host-side trust in sandbox files;
 * - a FIFO or socket at a path the host reads: the host blocks forever.
 * The SandboxWorkspace primitives are tested against host-side plants and
 * races in tests/workspace-fs/test-workspace-fs-*.c (read/fifo,
 * read/symlink-to-host-file, race/directory-symlink-swap, …); here the
 * guest itself plants them through real bubblewrap, aiming at the store.
 * Concurrent resumes that must lose no write are
 * /sandbox/hardening/store/concurrent-resume-loses-nothing; this file shows
 * two live owners never coexist.
 * Run as root and, through run-unprivileged.sh, as an unprivileged user.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "escape-common.h"

/* The session's store files a guest would like to read or overwrite. */
static const char * const store_files[] = { "state.json", "lease", NULL };

static GHashTable *
snapshot_store (const char *session_directory)
{
  GHashTable *snapshot = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GDir) dir = g_dir_open (session_directory, 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (session_directory, name, NULL);
      char *contents = NULL;

      if (!g_file_test (path, G_FILE_TEST_IS_DIR))
        g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
      g_hash_table_insert (snapshot, g_strdup (name), contents != NULL ? contents : g_strdup ("<dir>"));
    }
  return snapshot;
}

static void
assert_store_unchanged (const char *session_directory,
                        GHashTable *before)
{
  g_autoptr(GHashTable) after = snapshot_store (session_directory);
  GHashTableIter iter;
  gpointer name, contents;

  g_assert_cmpuint (g_hash_table_size (after), ==, g_hash_table_size (before));
  g_hash_table_iter_init (&iter, before);
  while (g_hash_table_iter_next (&iter, &name, &contents))
    g_assert_cmpstr (g_hash_table_lookup (after, name), ==, contents);
}

/* A host call's outcome may be an error or a contained success, never the
 * content of a store file. */
static void
assert_not_store_content (GBytes     *bytes,
                          GHashTable *store)
{
  GHashTableIter iter;
  gpointer name, contents;

  if (bytes == NULL)
    return;
  g_hash_table_iter_init (&iter, store);
  while (g_hash_table_iter_next (&iter, &name, &contents))
    {
      gsize length = 0;
      const char *data = g_bytes_get_data (bytes, &length);

      if (length == strlen (contents) && length > 0 && memcmp (data, contents, length) == 0)
        g_error ("a host read returned the store's %s", (const char *) name);
    }
}

/* Links a guest plants, by name: absolute host paths of the store (from
 * its mountinfo), relative ones climbing out, magic links. */
static char *
plant_links_script (const char *session_directory)
{
  return g_strdup_printf ("set -e; s='%s'; "
                          "ln -s \"$s/state.json\" abs-state; ln -s \"$s/lease\" abs-lease; "
                          "ln -s ../state.json rel-state; ln -s ../../../../../..\"$s\"/state.json deep-state; "
                          "ln -s \"$s\" abs-dir; ln -s .. up; "
                          "ln -s /proc/self/root\"$s\"/state.json magic-state; "
                          "ln -s /proc/1/cwd/../state.json magic-cwd; "
                          "mkdir -p nest; ln -s ../../state.json nest/state",
                          session_directory);
}

static const char * const planted_reads[] = {
  "abs-state", "abs-lease", "rel-state", "deep-state", "abs-dir/state.json", "up/state.json",
  "up/lease", "magic-state", "magic-cwd", "nest/state", NULL
};

static const char * const planted_writes[] = {
  "abs-dir/state.json", "up/state.json", "up/lease", "abs-dir/owned", "up/owned",
  "nest/state", "abs-state", "rel-state", NULL
};

static const char * const planted_removals[] = {
  "abs-dir/state.json", "up/state.json", "up/lease", "abs-dir/lease", "up", "abs-dir", NULL
};

/* The guest plants links to the session's state.json and lease, by their
 * host paths and relative ones; the host's read_bytes, write_bytes and
 * remove_path through them never reach the store: reads fail or return
 * workspace content, writes land inside the workspace (replacing a link
 * is fine) or fail, removals remove the link at most. Afterwards the
 * store files are byte for byte what they were and the session resumes.
 *
 * To see it fail: in sandbox_workspace_open_beneath() (libsandbox-core/
 * sandbox-workspace-fd.c) resolve with RESOLVE_NO_XDEV alone, without
 * RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS: the host then reads the
 * session's state.json through rel-state (verified; the absolute links
 * stay refused there only because the test's / and $TMPDIR are different
 * mounts, which RESOLVE_NO_XDEV catches). */
static void
test_planted_links_to_the_store (void)
{
  EscapeSession s = { 0 };
  g_autofree char *session_directory = NULL;
  g_autofree char *script = NULL;
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) owned = g_bytes_new_static ("owned", 5);

  escape_session_open (&s, NULL);
  session_directory = escape_session_directory (&s);
  before = snapshot_store (session_directory);
  for (guint i = 0; store_files[i] != NULL; i++)
    g_assert_true (g_hash_table_contains (before, store_files[i]));
  script = plant_links_script (session_directory);
  g_free (escape_sh (s.session, script));

  for (guint i = 0; planted_reads[i] != NULL; i++)
    {
      g_autoptr(GError) read_error = NULL;
      g_autoptr(GBytes) bytes = sandbox_session_read_bytes (s.session, planted_reads[i], NULL,
                                                            &read_error);

      g_test_message ("read %s: %s", planted_reads[i],
                      bytes != NULL ? "contained content" : read_error->message);
      assert_not_store_content (bytes, before);
    }
  for (guint i = 0; planted_writes[i] != NULL; i++)
    {
      g_autoptr(GError) write_error = NULL;
      gboolean written = sandbox_session_write_bytes (s.session, planted_writes[i], owned, NULL,
                                                      &write_error);

      g_test_message ("write %s: %s", planted_writes[i],
                      written ? "contained" : write_error->message);
      assert_store_unchanged (session_directory, before);
    }
  for (guint i = 0; planted_removals[i] != NULL; i++)
    {
      g_autoptr(GError) remove_error = NULL;
      gboolean removed = sandbox_session_remove_path (s.session, planted_removals[i], NULL,
                                                      &remove_error);

      g_test_message ("remove %s: %s", planted_removals[i],
                      removed ? "contained" : remove_error->message);
      assert_store_unchanged (session_directory, before);
    }

  /* The session's own state still describes it: stop and resume. */
  state = sandbox_handle_capture_state (s.handle, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (s.handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&s.handle);
  s.handle = sandbox_backend_create (s.backend, s.template_key, state, policy, NULL, &error);
  g_assert_no_error (error);
  s.session = sandbox_handle_get_session (s.handle);
  escape_session_close (&s);
}

/* A guest swaps a directory `d` and a symlink `l` to the session
 * directory, `..` (renameat2 RENAME_EXCHANGE in a loop) while the host writes and reads
 * d/state.json and d/lease: every host call either works inside the
 * workspace or fails; the store never changes, no read returns it. The
 * primitive's own race test is workspace-fs race/directory-symlink-swap;
 * this one runs the swapper in a real guest against the real store.
 *
 * To see it fail: as for test_planted_links_to_the_store() (drop
 * RESOLVE_BENEATH in open_beneath()): reads then return the store's files
 * and writes land in the store whenever the swap is in place. */
static void
test_symlink_swapped_during_host_calls (void)
{
  EscapeSession s = { 0 };
  g_autofree char *session_directory = NULL;
  g_autofree char *setup = NULL;
  g_autoptr(GHashTable) before = NULL;
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/workspace/.escape-probe");
  g_autoptr(SandboxProcess) swapper = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) owned = g_bytes_new_static ("owned", 5);
  g_autofree char *swaps = NULL;
  guint contained_writes = 0;

  escape_session_open (&s, NULL);
  escape_install_probe (s.session);
  session_directory = escape_session_directory (&s);
  /* Relative: an absolute link could also be stopped by RESOLVE_NO_XDEV
   * alone wherever the host's / is another mount than the store's. */
  setup = g_strdup ("set -e; mkdir d; ln -s .. l");
  g_free (escape_sh (s.session, setup));
  before = snapshot_store (session_directory);

  sandbox_command_add_arg (command, "swap-loop");
  sandbox_command_add_arg (command, "d");
  sandbox_command_add_arg (command, "l");
  sandbox_command_add_arg (command, "3");
  swapper = sandbox_session_spawn (s.session, command, NULL, &error);
  g_assert_no_error (error);

  while (!sandbox_process_is_finished (swapper))
    {
      for (guint i = 0; store_files[i] != NULL; i++)
        {
          g_autofree char *path = g_strdup_printf ("d/%s", store_files[i]);
          g_autoptr(GBytes) bytes = sandbox_session_read_bytes (s.session, path, NULL, NULL);

          assert_not_store_content (bytes, before);
          if (sandbox_session_write_bytes (s.session, path, owned, NULL, NULL))
            contained_writes++;
        }
      /* The store's files are rewritten by no one else while this runs. */
      {
        g_autoptr(GHashTable) now = snapshot_store (session_directory);

        for (guint i = 0; store_files[i] != NULL; i++)
          g_assert_cmpstr (g_hash_table_lookup (now, store_files[i]), ==,
                           g_hash_table_lookup (before, store_files[i]));
      }
      g_main_context_iteration (NULL, FALSE);
    }
  result = sandbox_process_wait (swapper, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  swaps = sandbox_result_dup_stdout_text (result);
  g_test_message ("%s guest swaps, %u contained host writes", g_strstrip (swaps), contained_writes);
  g_assert_cmpint (atoi (swaps), >, 0);
  assert_store_unchanged (session_directory, before);
  escape_session_close (&s);
}

/* A FIFO the guest makes where the host reads or writes: the host call
 * returns promptly (an error for the read; the write replaces the FIFO),
 * even with a guest process holding the FIFO's other end open, so a guest
 * cannot hang the host's file API (or a coding agent's read tool).
 *
 * To see it fail: remove O_NONBLOCK from the read path's open in
 * libsandbox-core/sandbox-workspace-read.c (and its refusal of
 * non-regular files): the read then blocks until the guest writes. */
static void
test_planted_fifo_never_blocks (void)
{
  EscapeSession s = { 0 };
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sh");
  g_autoptr(SandboxProcess) holder = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GBytes) data = g_bytes_new_static ("data", 4);
  g_autoptr(GError) error = NULL;
  g_autoptr(GTimer) timer = NULL;
  g_autofree char *kind = NULL;

  escape_session_open (&s, NULL);
  g_free (escape_sh (s.session, "mkfifo fifo fifo2 && mkdir -p dir && mkfifo dir/fifo"));
  /* A guest process sits on the FIFO (opened for reading and writing, so
   * it never blocks itself) for the whole test. */
  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, "exec 3<>/workspace/fifo; exec sleep 30");
  holder = sandbox_session_spawn (s.session, command, NULL, &error);
  g_assert_no_error (error);

  timer = g_timer_new ();
  bytes = sandbox_session_read_bytes (s.session, "fifo", NULL, &error);
  g_assert_null (bytes);
  g_assert_nonnull (error);
  g_test_message ("read fifo: %s", error->message);
  g_clear_error (&error);
  bytes = sandbox_session_read_bytes (s.session, "dir/fifo", NULL, &error);
  g_assert_null (bytes);
  g_clear_error (&error);
  g_assert_true (sandbox_session_write_bytes (s.session, "fifo2", data, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (g_timer_elapsed (timer, NULL), <, 5.0);
  kind = escape_sh (s.session, "stat -c %F fifo2");
  g_assert_cmpstr (kind, ==, "regular file\n");

  sandbox_process_stop (holder, NULL, &error);
  g_assert_no_error (error);
  escape_session_close (&s);
}

/* The helper side of test_two_resumers(): resumes the session and says
 * OWNER (then holds it until stdin closes) or BUSY. */
static int
resume_helper (const char *state_directory,
               const char *state_json,
               const char *template_key)
{
  g_autoptr(SandboxBackend) backend = escape_backend_new (state_directory, NULL);
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  char byte;

  state = sandbox_state_new_from_json (state_json, &error);
  g_assert_no_error (error);
  handle = sandbox_backend_create (backend, template_key, state, policy, NULL, &error);
  if (handle == NULL)
    {
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
      printf ("BUSY\n");
      fflush (stdout);
      return 0;
    }
  printf ("OWNER\n");
  fflush (stdout);
  while (read (0, &byte, 1) > 0)
    ;
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  return 0;
}

#define RESUMERS 4
#define RESUME_ROUNDS 3

/* Several processes resume one stopped session at once: exactly one
 * becomes its owner, every other gets SANDBOX_BUSY, while the owner lives.
 *
 * To see it fail: in acquire_lease() (drivers/bubblewrap/
 * sandbox-bubblewrap-store.c) put the lease in place with rename()
 * instead of link(): several helpers then say OWNER. */
static void
test_two_resumers (void)
{
  EscapeSession s = { 0 };
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);

  escape_session_open (&s, NULL);
  state = sandbox_handle_capture_state (s.handle, &error);
  g_assert_no_error (error);
  json = sandbox_state_to_json (state);
  g_assert_true (sandbox_handle_stop (s.handle, NULL, &error));
  g_assert_no_error (error);

  for (guint round = 0; round < RESUME_ROUNDS; round++)
    {
      const char *argv[] = { self, "--resume-helper", s.state_directory, json, s.template_key, NULL };
      GPid pids[RESUMERS];
      int ins[RESUMERS], outs[RESUMERS];
      guint owners = 0, busy = 0;

      for (guint i = 0; i < RESUMERS; i++)
        {
          g_spawn_async_with_pipes (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL,
                                    NULL, &pids[i], &ins[i], &outs[i], NULL, &error);
          g_assert_no_error (error);
        }
      for (guint i = 0; i < RESUMERS; i++)
        {
          char line[16] = { 0 };
          ssize_t length = 0, got;

          while (length < (ssize_t) sizeof line - 1 &&
                 (got = read (outs[i], line + length, sizeof line - 1 - length)) > 0)
            {
              length += got;
              if (strchr (line, '\n') != NULL)
                break;
            }
          if (g_str_equal (line, "OWNER\n"))
            owners++;
          else if (g_str_equal (line, "BUSY\n"))
            busy++;
          else
            g_error ("resume helper said %s", line);
        }
      g_assert_cmpuint (owners, ==, 1);
      g_assert_cmpuint (busy, ==, RESUMERS - 1);
      for (guint i = 0; i < RESUMERS; i++)
        {
          int status = 0;

          close (ins[i]);
          g_assert_cmpint (waitpid (pids[i], &status, 0), ==, pids[i]);
          g_assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
          g_spawn_close_pid (pids[i]);
          close (outs[i]);
        }
    }
  g_clear_object (&s.handle);
  s.session = NULL;
  escape_session_close (&s);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 5 && g_str_equal (argv[1], "--resume-helper"))
    return resume_helper (argv[2], argv[3], argv[4]);

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/escape/store/planted-links-to-the-store",
                   test_planted_links_to_the_store);
  g_test_add_func ("/sandbox/escape/store/symlink-swapped-during-host-calls",
                   test_symlink_swapped_during_host_calls);
  g_test_add_func ("/sandbox/escape/store/planted-fifo-never-blocks",
                   test_planted_fifo_never_blocks);
  g_test_add_func ("/sandbox/escape/store/two-resumers", test_two_resumers);

  return g_test_run ();
}
