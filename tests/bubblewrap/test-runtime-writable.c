/* test-runtime-writable.c — a runtime each session may change for itself
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A template may make its runtime writable per session
 * (sandbox_template_set_runtime_writable()): each layered session's
 * commands see the runtime through an overlay whose upper layer is the
 * session's own (layers/runtime-upper, mounted by its keeper), so what
 * they install into /usr persists across commands, stop and resume, and
 * snapshots, and no other session and not the stored runtime see it. The
 * runtime is with-test-runtime.sh's busybox-static. Run as root and,
 * through run-unprivileged.sh, as an unprivileged user.
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-runtime.h"
#include "sandbox-test-session.h"

typedef SandboxTestFixture Fixture;

/* What a guest installs: a program in /usr/local/bin and a library file
 * in a directory the runtime has (a copy-up of /usr/bin too). */
#define INSTALL \
  "mkdir -p /usr/local/bin && printf '#!/bin/sh\\necho installed\\n' > /usr/local/bin/tool && " \
  "chmod 0755 /usr/local/bin/tool && echo extra > /usr/bin/extra"

static char *
import_busybox (SandboxBackend *backend)
{
  g_autofree char *busybox = sandbox_test_runtime_path ("busybox");

  return sandbox_test_import_runtime (backend, busybox, NULL);
}

/* The hello template on @runtime_key, writable per session or not. */
static char *
prewarm_on (SandboxBackend *backend,
            const char     *runtime_key,
            gboolean        writable)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();

  sandbox_template_set_runtime (template_, runtime_key);
  sandbox_template_set_runtime_writable (template_, writable);
  g_assert_true (sandbox_template_get_runtime_writable (template_) == writable);
  return sandbox_test_prewarm (backend, template_, NULL);
}

static gboolean
backend_layers (SandboxBackend *backend)
{
  g_autofree char *layering = NULL;

  g_object_get (backend, "workspace-layering", &layering, NULL);
  return g_strcmp0 (layering, "overlay") == 0;
}

/* @f's backend, the busybox runtime imported (@runtime_key), the hello
 * template on it writable per session, and a session of it; FALSE (the
 * test skipped) where the run copies its templates: see
 * /bubblewrap/runtime-writable/copy for that. */
static gboolean
set_up_session (Fixture  *f,
                char    **runtime_key)
{
  sandbox_test_fixture_set_up (f, "bubblewrap", NULL, NULL);
  if (!backend_layers (f->backend))
    {
      g_test_skip ("this run copies its templates");
      sandbox_test_fixture_tear_down (f, NULL);
      return FALSE;
    }
  *runtime_key = import_busybox (f->backend);
  f->template_key = prewarm_on (f->backend, *runtime_key, TRUE);
  sandbox_test_fixture_open_session (f, NULL);
  return TRUE;
}

/* Whether any stored runtime's tree (STATE/STORE/runtimes/KEY/tree) holds
 * @path. */
static gboolean
stored_runtime_has (const char *state_directory,
                    const char *path)
{
  g_autoptr(GDir) stores = g_dir_open (state_directory, 0, NULL);
  const char *store;
  guint n_trees = 0;

  while (stores != NULL && (store = g_dir_read_name (stores)) != NULL)
    {
      g_autofree char *runtimes = g_build_filename (state_directory, store, "runtimes", NULL);
      g_autoptr(GDir) dir = g_dir_open (runtimes, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *tree = g_build_filename (runtimes, name, "tree", NULL);
          g_autofree char *file = g_build_filename (tree, path, NULL);

          if (!g_file_test (tree, G_FILE_TEST_IS_DIR))
            continue;
          n_trees++;
          if (g_file_test (file, G_FILE_TEST_EXISTS) || g_file_test (file, G_FILE_TEST_IS_SYMLINK))
            return TRUE;
        }
    }
  /* Where the store keeps runtimes: otherwise this proves nothing. */
  g_assert_cmpuint (n_trees, >=, 1);
  return FALSE;
}

/* The key says whether the runtime is writable, and only when it is. */
static void
test_key (void)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autoptr(GError) error = NULL;
  g_autofree char *plain = NULL;
  g_autofree char *read_only = NULL;
  g_autofree char *writable = NULL;
  g_autofree char *again = NULL;

  /* Without a runtime it means nothing. */
  sandbox_template_set_runtime_writable (template_, TRUE);
  g_assert_false (sandbox_template_get_runtime_writable (template_));
  plain = sandbox_template_compute_key (template_, "bubblewrap", &error);
  sandbox_template_set_runtime (template_, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  writable = sandbox_template_compute_key (template_, "bubblewrap", &error);
  sandbox_template_set_runtime_writable (template_, FALSE);
  read_only = sandbox_template_compute_key (template_, "bubblewrap", &error);
  sandbox_template_set_runtime_writable (template_, TRUE);
  again = sandbox_template_compute_key (template_, "bubblewrap", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (plain, !=, read_only);
  g_assert_cmpstr (read_only, !=, writable);
  g_assert_cmpstr (writable, ==, again);
}

/* What a session installs into its runtime stays its own: across
 * commands, stop and resume; not in another session of the template, not
 * in one of the read-only template, not in the stored runtime. */
static void
test_install_persists (void)
{
  Fixture f = { 0 };
  g_autofree char *runtime_key = NULL;
  g_autofree char *read_only_key = NULL;
  g_autofree char *ran = NULL;
  g_autofree char *mounts = NULL;
  g_autofree char *owner = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxHandle) other = NULL;
  g_autoptr(SandboxHandle) plain = NULL;
  g_auto(GStrv) lines = NULL;

  if (!set_up_session (&f, &runtime_key))
    return;
  read_only_key = prewarm_on (f.backend, runtime_key, FALSE);
  g_assert_cmpstr (f.template_key, !=, read_only_key);

  g_assert_cmpint (sandbox_test_guest_status (f.session, INSTALL), ==, 0);
  ran = sandbox_test_guest_sh (f.session, "/usr/local/bin/tool; cat /usr/bin/extra; cat /workspace/hello.txt");
  g_assert_cmpstr (ran, ==, "installed\nextra\nhello");
  /* Writable but never nosuid- or nodev-less; /etc stays read-only. */
  mounts = sandbox_test_guest_sh (f.session, "grep -E ' /(usr|etc) ' /proc/self/mounts");
  lines = g_strsplit (mounts, "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), >=, 2);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      if (lines[i][0] == '\0')
        continue;
      g_assert_nonnull (strstr (lines[i], "nosuid"));
      g_assert_nonnull (strstr (lines[i], "nodev"));
      g_assert_nonnull (strstr (lines[i], strstr (lines[i], " /usr ") != NULL ? " rw," : " ro,"));
    }
  g_assert_cmpint (sandbox_test_guest_status (f.session, "touch /etc/x 2>/dev/null"), !=, 0);
  /* The guest's, as the workspace is. */
  owner = sandbox_test_guest_sh (f.session, "stat -c %u /usr/local/bin/tool; id -u");
  lines = (g_strfreev (lines), g_strsplit (owner, "\n", -1));
  g_assert_cmpstr (lines[0], ==, lines[1]);
  g_assert_false (stored_runtime_has (f.state_directory, "usr/local/bin/tool"));
  g_assert_false (stored_runtime_has (f.state_directory, "usr/bin/extra"));

  resumed = sandbox_test_stop_and_resume (f.backend, f.handle);
  g_clear_pointer (&ran, g_free);
  ran = sandbox_test_guest_sh (sandbox_handle_get_session (resumed), "/usr/local/bin/tool");
  g_assert_cmpstr (ran, ==, "installed\n");

  other = sandbox_test_create_session (f.backend, f.template_key);
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (other),
                                              "test -e /usr/local/bin/tool"), ==, 1);
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (other),
                                              "test -e /usr/bin/extra"), ==, 1);
  plain = sandbox_test_create_session (f.backend, read_only_key);
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (plain),
                                              "test -e /usr/bin/extra"), ==, 1);
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (plain),
                                              "touch /usr/bin/extra 2>/dev/null"), !=, 0);

  sandbox_test_delete_session (plain);
  sandbox_test_delete_session (other);
  sandbox_test_delete_session (resumed);
  g_clear_object (&f.handle);
  f.session = NULL;
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* The guest may delete or replace its /usr/bin/true, which each resume
 * runs to prove isolation: its session still resumes. */
static void
test_guest_breaks_its_true (void)
{
  Fixture f = { 0 };
  g_autofree char *runtime_key = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxHandle) again = NULL;
  g_autofree char *ran = NULL;

  if (!set_up_session (&f, &runtime_key))
    return;
  g_assert_cmpint (sandbox_test_guest_status (f.session, "rm /usr/bin/true"), ==, 0);
  resumed = sandbox_test_stop_and_resume (f.backend, f.handle);
  ran = sandbox_test_guest_sh (sandbox_handle_get_session (resumed), "echo still");
  g_assert_cmpstr (ran, ==, "still\n");
  /* One that never ends: the proof's deadline ends it. */
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (resumed),
                                              "printf '#!/bin/sh\\nwhile :; do :; done\\n' > "
                                              "/usr/bin/true && chmod 0755 /usr/bin/true"), ==, 0);
  again = sandbox_test_stop_and_resume (f.backend, resumed);
  g_clear_pointer (&ran, g_free);
  ran = sandbox_test_guest_sh (sandbox_handle_get_session (again), "echo again");
  g_assert_cmpstr (ran, ==, "again\n");
  sandbox_test_delete_session (again);
  g_clear_object (&f.handle);
  f.session = NULL;
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* A snapshot keeps what the session installed; its forks start from it and
 * change it for themselves; a restore puts back the snapshot's runtime or
 * the template's. The key covers the runtime's changes. */
static void
test_snapshot_fork_restore (void)
{
  Fixture f = { 0 };
  g_autofree char *runtime_key = NULL;
  g_autofree char *key = NULL;
  g_autofree char *other_key = NULL;
  g_autofree char *ran = NULL;
  g_autoptr(SandboxHandle) fork = NULL;
  g_autoptr(SandboxHandle) other = NULL;
  SandboxSession *forked;

  if (!set_up_session (&f, &runtime_key))
    return;
  g_assert_cmpint (sandbox_test_guest_status (f.session, INSTALL " && echo w > /workspace/w"),
                   ==, 0);
  key = sandbox_test_snapshot (f.handle);

  /* The same workspace changes without the runtime's: another key. */
  other = sandbox_test_create_session (f.backend, f.template_key);
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (other),
                                              "echo w > /workspace/w"), ==, 0);
  other_key = sandbox_test_snapshot (other);
  g_assert_cmpstr (other_key, !=, key);

  fork = sandbox_test_create_session (f.backend, key);
  forked = sandbox_handle_get_session (fork);
  ran = sandbox_test_guest_sh (forked, "/usr/local/bin/tool; cat /usr/bin/extra /workspace/w");
  g_assert_cmpstr (ran, ==, "installed\nextra\nw\n");
  g_assert_cmpint (sandbox_test_guest_status (forked, "echo fork > /usr/bin/extra && "
                                                      "rm /usr/local/bin/tool"), ==, 0);
  g_clear_pointer (&ran, g_free);
  ran = sandbox_test_guest_sh (f.session, "/usr/local/bin/tool; cat /usr/bin/extra");
  g_assert_cmpstr (ran, ==, "installed\nextra\n");

  sandbox_test_restore (f.handle, f.template_key);
  g_assert_cmpint (sandbox_test_guest_status (f.session, "test -e /usr/bin/extra"), ==, 1);
  g_assert_cmpint (sandbox_test_guest_status (f.session, "test -e /usr/local/bin/tool"), ==, 1);
  g_assert_cmpint (sandbox_test_guest_status (f.session, "test -e /workspace/w"), ==, 1);
  sandbox_test_restore (f.handle, key);
  g_clear_pointer (&ran, g_free);
  ran = sandbox_test_guest_sh (f.session, "/usr/local/bin/tool; cat /usr/bin/extra /workspace/w");
  g_assert_cmpstr (ran, ==, "installed\nextra\nw\n");
  /* The fork's own changes are its own still. */
  g_clear_pointer (&ran, g_free);
  ran = sandbox_test_guest_sh (forked, "cat /usr/bin/extra; test -e /usr/local/bin/tool || echo gone");
  g_assert_cmpstr (ran, ==, "fork\ngone\n");

  sandbox_test_delete_session (fork);
  sandbox_test_delete_session (other);
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* A backend that copies its templates has no overlay to give a runtime:
 * a session of a writable-runtime template is refused, and leaves nothing. */
static void
test_copy_refused (void)
{
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autoptr(SandboxBackend) backend = sandbox_test_bubblewrap_new (state_directory, NULL,
                                                                   "layering", "copy", NULL);
  g_autofree char *runtime_key = import_busybox (backend);
  g_autofree char *template_key = prewarm_on (backend, runtime_key, TRUE);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GError) error = NULL;

  handle = sandbox_backend_create (backend, template_key, NULL, policy, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "writable"));
  g_assert_null (handle);
  g_clear_error (&error);
  sessions = sandbox_backend_list_sessions (backend, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sessions->len, ==, 0);
  g_clear_object (&backend);
  sandbox_test_state_directory_remove (state_directory);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/bubblewrap/runtime-writable/key", test_key);
  g_test_add_func ("/bubblewrap/runtime-writable/install-persists", test_install_persists);
  g_test_add_func ("/bubblewrap/runtime-writable/guest-breaks-its-true",
                   test_guest_breaks_its_true);
  g_test_add_func ("/bubblewrap/runtime-writable/snapshot-fork-restore",
                   test_snapshot_fork_restore);
  g_test_add_func ("/bubblewrap/runtime-writable/copy", test_copy_refused);

  return g_test_run ();
}
