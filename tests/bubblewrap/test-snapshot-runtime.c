/* test-snapshot-runtime.c — a writable runtime's layers along a session's
 * line: restores further down and up, and lines past the depth bound
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A session whose runtime is writable per session keeps its changes to it
 * in a second upper layer, which a snapshot freezes in runtime-data: a
 * restore that rebases the session puts its runtime overlay over the new
 * base's runtime layers, and a flattened snapshot merges them as it merges
 * the workspace's. The runtime is with-test-runtime.sh's busybox-static.
 * Run as root and, through run-unprivileged.sh, unprivileged.
 */

#include <string.h>

#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"

typedef SandboxTestFixture Fixture;

/* What a guest sees of its runtime's changes and its workspace. */
#define VIEW \
  "ls /usr/local/bin 2>&1; ls /usr/bin | grep -e '^rt-' -e '^extra'; " \
  "cat /usr/bin/extra /workspace/w 2>&1; true"

static char *
busybox_runtime_path (void)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *directory = NULL;
  char *path;

  g_assert_nonnull (self);
  directory = g_path_get_dirname (self);
  path = g_build_filename (directory, "..", "runtime-cache", "busybox", NULL);
  if (!g_file_test (path, G_FILE_TEST_IS_DIR))
    g_error ("No test runtime at %s: run this test through meson (with-test-runtime.sh)", path);
  return path;
}

/* A fixture whose template's runtime (busybox) is writable per session,
 * with a session open; FALSE (skipped) where sessions copy. */
static gboolean
set_up (Fixture *f)
{
  g_autofree char *busybox = busybox_runtime_path ();
  g_autoptr(GFile) source = g_file_new_for_path (busybox);
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();
  g_autoptr(GError) error = NULL;
  g_autofree char *layering = NULL;
  g_autofree char *runtime_key = NULL;

  sandbox_test_fixture_set_up (f, "bubblewrap", NULL, NULL);
  g_object_get (f->backend, "workspace-layering", &layering, NULL);
  if (g_strcmp0 (layering, "overlay") != 0)
    {
      g_test_skip ("this run copies its templates");
      sandbox_test_fixture_tear_down (f, NULL);
      return FALSE;
    }
  runtime_key = sandbox_backend_import_runtime (f->backend, source, NULL, NULL, &error);
  g_assert_no_error (error);
  sandbox_template_set_runtime (template_, runtime_key);
  sandbox_template_set_runtime_writable (template_, TRUE);
  f->template_key = sandbox_test_prewarm (f->backend, template_, NULL);
  sandbox_test_fixture_open_session (f, NULL);
  return TRUE;
}

static void
sh (SandboxHandle *handle,
    const char    *script)
{
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (handle), script),
                   ==, 0);
}

static char *
view_of (SandboxHandle *handle)
{
  return sandbox_test_guest_sh (sandbox_handle_get_session (handle), VIEW);
}

/* A session restored two snapshots down its line runs on that line's
 * runtime changes (and keeps them across a stop and resume); one restored
 * up to its base's parent, and to the template, on theirs. */
static void
test_restore_along_line (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) child = NULL;
  g_autoptr(SandboxHandle) grandchild = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autofree char *pristine = NULL, *view1 = NULL, *view3 = NULL, *seen = NULL;
  g_autofree char *key1 = NULL, *key2 = NULL, *key3 = NULL;

  if (!set_up (&f))
    return;
  pristine = view_of (f.handle);
  sh (f.handle, "mkdir -p /usr/local/bin && printf '#!/bin/sh\\necho tool\\n' > "
                "/usr/local/bin/tool && chmod 0755 /usr/local/bin/tool && "
                "echo one > /usr/bin/extra && echo w1 > /workspace/w");
  view1 = view_of (f.handle);
  key1 = sandbox_test_snapshot (f.handle);
  child = sandbox_test_create_session (f.backend, key1);
  sh (child, "rm /usr/local/bin/tool && echo two > /usr/bin/extra2");
  key2 = sandbox_test_snapshot (child);
  grandchild = sandbox_test_create_session (f.backend, key2);
  sh (grandchild, "echo three >> /usr/bin/extra && echo w3 > /workspace/w");
  view3 = view_of (grandchild);
  key3 = sandbox_test_snapshot (grandchild);

  sh (f.handle, "rm -r /usr/local/bin && echo junk > /usr/bin/extra");
  sandbox_test_restore (f.handle, key3);
  seen = view_of (f.handle);
  g_assert_cmpstr (seen, ==, view3);
  resumed = sandbox_test_stop_and_resume (f.backend, f.handle);
  g_clear_object (&f.handle);
  f.session = NULL;
  g_clear_pointer (&seen, g_free);
  seen = view_of (resumed);
  g_assert_cmpstr (seen, ==, view3);

  sandbox_test_restore (grandchild, key1);
  g_clear_pointer (&seen, g_free);
  seen = view_of (grandchild);
  g_assert_cmpstr (seen, ==, view1);
  sandbox_test_restore (grandchild, f.template_key);
  g_clear_pointer (&seen, g_free);
  seen = view_of (grandchild);
  g_assert_cmpstr (seen, ==, pristine);

  sandbox_test_delete_session (grandchild);
  sandbox_test_delete_session (child);
  sandbox_test_delete_session (resumed);
  sandbox_test_fixture_tear_down (&f, NULL);
}

/* 36 snapshot → fork → change steps of the runtime: past the bound the
 * runtime's layers are flattened too, and each fork runs on exactly its
 * parent's runtime (a deletion across the flattening included). */
static void
test_flatten (void)
{
  Fixture f = { 0 };
  g_autoptr(SandboxHandle) current = NULL;

  if (!g_test_slow ())
    {
      g_test_skip ("36 snapshots and forks: -m slow (snapshot-runtime-flatten)");
      return;
    }
  if (!set_up (&f))
    return;
  current = g_object_ref (f.handle);
  for (guint step = 1; step <= 36; step++)
    {
      g_autofree char *script = NULL;
      g_autofree char *expected = NULL;
      g_autofree char *forked = NULL;
      g_autofree char *key = NULL;
      SandboxHandle *next;

      if (step % 9 == 0)
        script = g_strdup_printf ("rm /usr/bin/rt-%u", step - 1);
      else
        script = g_strdup_printf ("echo %u > /usr/bin/rt-%u && echo %u >> /usr/bin/extra",
                                  step, step, step);
      sh (current, script);
      expected = view_of (current);
      key = sandbox_test_snapshot (current);
      next = sandbox_test_create_session (f.backend, key);
      forked = view_of (next);
      g_assert_cmpstr (forked, ==, expected);
      if (current != f.handle)
        sandbox_test_delete_session (current);
      g_object_unref (current);
      current = next;
    }
  sandbox_test_delete_session (current);
  sandbox_test_fixture_tear_down (&f, NULL);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/snapshot-runtime/restore-along-line", test_restore_along_line);
  g_test_add_func ("/snapshot-runtime/flatten", test_flatten);
  return g_test_run ();
}
