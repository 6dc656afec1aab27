/* sandbox-test-fixture.c — one fixture for the suites that need a backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <grp.h>
#include <unistd.h>
#include <sys/prctl.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"

/**
 * sandbox_test_state_directory_new:
 *
 * Returns: (transfer full): a new empty directory in TMPDIR, for a
 *   backend's state; remove it with sandbox_test_state_directory_remove()
 */
char *
sandbox_test_state_directory_new (void)
{
  g_autoptr(GError) error = NULL;
  char *directory = g_dir_make_tmp ("sandbox-test-XXXXXX", &error);

  g_assert_no_error (error);
  return directory;
}

/**
 * sandbox_test_remove_tree:
 * @path: (nullable): a file or directory, or %NULL for nothing
 *
 * Removes @path and all in it, read-only workspaces and overlay work
 * directories too (rm -rf: the store's own modes are no reason to leave
 * debris in TMPDIR). Fails the test if that fails.
 */
void
sandbox_test_remove_tree (const char *path)
{
  const char *argv[] = { "rm", "-rf", "--", path, NULL };
  g_autoptr(GError) error = NULL;
  int status = 0;

  if (path == NULL)
    return;
  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
                &status, &error);
  g_assert_no_error (error);
  g_spawn_check_wait_status (status, &error);
  g_assert_no_error (error);
}

/**
 * sandbox_test_state_directory_remove:
 * @directory: (nullable): a state directory, or %NULL for nothing
 *
 * Removes @directory with everything in it (sandbox_test_remove_tree()).
 */
void
sandbox_test_state_directory_remove (const char *directory)
{
  sandbox_test_remove_tree (directory);
}

/**
 * sandbox_test_template_hello:
 *
 * Returns: (transfer full): the template most tests start from:
 *   "agent-workspace" with a file `hello.txt` that says "hello"
 */
SandboxTemplate *
sandbox_test_template_hello (void)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("agent-workspace");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_template_add_file (template_, "hello.txt", hello, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&template_);
}

/**
 * sandbox_test_template_add_text:
 *
 * Adds the file @path saying @text to @template_; fails the test unless
 * that works.
 */
void
sandbox_test_template_add_text (SandboxTemplate *template_,
                                const char      *path,
                                const char      *text)
{
  g_autoptr(GBytes) bytes = g_bytes_new (text, strlen (text));
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_template_add_file (template_, path, bytes, &error));
  g_assert_no_error (error);
}

/**
 * sandbox_test_prewarm:
 * @reused: (out) (optional): whether the store had it already
 *
 * Prewarms @template_ on @backend and fails the test unless that works.
 *
 * Returns: (transfer full): the template's key
 */
char *
sandbox_test_prewarm (SandboxBackend  *backend,
                      SandboxTemplate *template_,
                      gboolean        *reused)
{
  g_autoptr(GError) error = NULL;
  char *key = sandbox_backend_prewarm (backend, template_, reused, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (key);
  return key;
}

/**
 * sandbox_test_prewarm_hello:
 *
 * Returns: (transfer full): the key of sandbox_test_template_hello(),
 *   prewarmed on @backend
 */
char *
sandbox_test_prewarm_hello (SandboxBackend *backend)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();

  return sandbox_test_prewarm (backend, template_, NULL);
}

/**
 * sandbox_test_create_session:
 * @template_key: a prewarmed template's key
 *
 * Returns: (transfer full): a deny-all session of @template_key; fails the
 *   test unless it is made
 */
SandboxHandle *
sandbox_test_create_session (SandboxBackend *backend,
                             const char     *template_key)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  SandboxHandle *handle = sandbox_backend_create (backend, template_key, NULL, policy, NULL,
                                                  &error);

  g_assert_no_error (error);
  g_assert_nonnull (handle);
  return handle;
}

/**
 * sandbox_test_delete_session:
 *
 * Deletes @handle's session; fails the test unless that works.
 */
void
sandbox_test_delete_session (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;

  sandbox_handle_delete (handle, NULL, &error);
  g_assert_no_error (error);
}

/**
 * sandbox_test_fixture_set_up:
 * @fixture: zeroed, as g_test_add() gives it
 * @driver: the driver's name
 * @template_: (nullable): a template to prewarm, or %NULL for none
 * @...: the backend's extra properties as name/value pairs of strings, as
 *   sandbox_test_backend_new() takes them, then %NULL
 *
 * Makes the state directory, the backend on it (failing the test unless
 * that works) and, with @template_, its key.
 */
void
sandbox_test_fixture_set_up (SandboxTestFixture *fixture,
                             const char         *driver,
                             SandboxTemplate    *template_,
                             ...)
{
  va_list ap;

  va_start (ap, template_);
  sandbox_test_fixture_set_up_valist (fixture, driver, template_, ap);
  va_end (ap);
}

/**
 * sandbox_test_fixture_set_up_valist:
 * @ap: the backend's extra properties, as sandbox_test_fixture_set_up()
 *   takes them
 *
 * See sandbox_test_fixture_set_up().
 */
void
sandbox_test_fixture_set_up_valist (SandboxTestFixture *fixture,
                                    const char         *driver,
                                    SandboxTemplate    *template_,
                                    va_list             ap)
{
  g_autoptr(GError) error = NULL;

  fixture->state_directory = sandbox_test_state_directory_new ();
  fixture->backend = sandbox_test_backend_new_valist (driver, fixture->state_directory, &error, ap);
  g_assert_no_error (error);
  g_assert_nonnull (fixture->backend);
  if (template_ != NULL)
    fixture->template_key = sandbox_test_prewarm (fixture->backend, template_, NULL);
}

/**
 * sandbox_test_fixture_open_session:
 * @policy: (nullable): the session's network policy, %NULL for deny-all
 *
 * Creates a session of the fixture's template (which it must have) as
 * `fixture->handle` and `fixture->session`; the tear-down deletes it.
 */
void
sandbox_test_fixture_open_session (SandboxTestFixture   *fixture,
                                   SandboxNetworkPolicy *policy)
{
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (fixture->template_key);
  g_assert_null (fixture->handle);
  if (policy == NULL)
    fixture->handle = sandbox_test_create_session (fixture->backend, fixture->template_key);
  else
    fixture->handle = sandbox_backend_create (fixture->backend, fixture->template_key, NULL,
                                              policy, NULL, &error);
  g_assert_no_error (error);
  fixture->session = sandbox_handle_get_session (fixture->handle);
}

/**
 * sandbox_test_fixture_set_up_session:
 * @driver: (type utf8): the driver's name, as g_test_add()'s test data
 *
 * A g_test_add() set-up: a backend of @driver, the hello template
 * (sandbox_test_template_hello()) prewarmed, and a deny-all session of it.
 */
void
sandbox_test_fixture_set_up_session (SandboxTestFixture *fixture,
                                     gconstpointer       driver)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_test_template_hello ();

  sandbox_test_fixture_set_up (fixture, driver, template_, NULL);
  sandbox_test_fixture_open_session (fixture, NULL);
}

/**
 * sandbox_test_fixture_tear_down:
 * @data: unused (a g_test_add() tear-down's test data)
 *
 * Deletes the session if there is one (failing the test if that fails),
 * drops the backend, then removes the state directory with everything in
 * it. Safe on a fixture that was only partly set up.
 */
void
sandbox_test_fixture_tear_down (SandboxTestFixture *fixture,
                                gconstpointer       data)
{
  if (fixture->handle != NULL)
    sandbox_test_delete_session (fixture->handle);
  g_clear_object (&fixture->handle);
  fixture->session = NULL;
  g_clear_object (&fixture->backend);
  g_clear_pointer (&fixture->template_key, g_free);
  sandbox_test_state_directory_remove (fixture->state_directory);
  g_clear_pointer (&fixture->state_directory, g_free);
}

/**
 * sandbox_test_become_unprivileged:
 *
 * Makes this process Debian's nobody (%SANDBOX_TEST_UNPRIVILEGED_ID), with
 * no supplementary groups, for the part of a test that must not be root;
 * run it in a g_test_trap_subprocess() child, as root. The process is made
 * dumpable again: changing ids cleared that, and LeakSanitizer, in the
 * sanitizer build, needs to ptrace it at exit.
 */
void
sandbox_test_become_unprivileged (void)
{
  g_assert_cmpint (setgroups (0, NULL), ==, 0);
  g_assert_cmpint (setgid (SANDBOX_TEST_UNPRIVILEGED_ID), ==, 0);
  g_assert_cmpint (setuid (SANDBOX_TEST_UNPRIVILEGED_ID), ==, 0);
  g_assert_cmpint (prctl (PR_SET_DUMPABLE, 1, 0, 0, 0), ==, 0);
}

/**
 * sandbox_test_snapshot:
 * @handle: a live session's handle
 *
 * Returns: (transfer full): the key of a new snapshot of it; fails the
 *   test otherwise
 */
char *
sandbox_test_snapshot (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;
  char *key = sandbox_handle_snapshot (handle, NULL, &error);

  g_assert_no_error (error);
  g_assert_true (sandbox_template_key_is_valid (key));
  return key;
}

/**
 * sandbox_test_restore:
 * @handle: a live session's handle
 * @key: what to restore it to
 *
 * Restores it; fails the test otherwise.
 */
void
sandbox_test_restore (SandboxHandle *handle,
                      const char    *key)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_handle_restore (handle, key, NULL, &error));
  g_assert_no_error (error);
}

/**
 * sandbox_test_stop_and_resume:
 * @backend: the backend @handle's session is of
 * @handle: a live session's handle
 *
 * Stops the session and resumes it from its state, deny-all.
 *
 * Returns: (transfer full): the resumed session's handle
 */
SandboxHandle *
sandbox_test_stop_and_resume (SandboxBackend *backend,
                              SandboxHandle  *handle)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (handle, &error);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  SandboxHandle *resumed;

  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  resumed = sandbox_backend_resume (backend, state, policy, NULL, &error);
  g_assert_no_error (error);
  return resumed;
}
