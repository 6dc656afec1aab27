/* memory-test-common.c — shared set-up of the memory driver tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "memory-test-common.h"

/**
 * memory_test_script_path:
 *
 * Returns: (transfer full): the path of the fixture script
 */
char *
memory_test_script_path (void)
{
  return g_test_build_filename (G_TEST_DIST, "memory", "script.json", NULL);
}

/**
 * memory_test_backend_new:
 * @max_concurrent_commands: the admission limit
 *
 * Returns: (transfer full): a memory backend running the fixture script
 */
SandboxBackend *
memory_test_backend_new (guint max_concurrent_commands)
{
  g_autofree char *script = memory_test_script_path ();
  g_autoptr(GError) error = NULL;
  SandboxBackend *backend;

  backend = sandbox_backend_new ("memory", NULL, &error,
                                 "script-file", script,
                                 "max-concurrent-commands", max_concurrent_commands,
                                 NULL);
  g_assert_no_error (error);
  g_assert_nonnull (backend);

  return backend;
}

/**
 * memory_test_template_new:
 *
 * Returns: (transfer full): the test template
 */
SandboxTemplate *
memory_test_template_new (void)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("agent-workspace");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(GBytes) readme = g_bytes_new_static ("# readme\n", 9);
  g_autoptr(GError) error = NULL;

  sandbox_template_add_file (template_, "hello.txt", hello, &error);
  g_assert_no_error (error);
  sandbox_template_add_file (template_, "docs/readme.md", readme, &error);
  g_assert_no_error (error);

  return g_steal_pointer (&template_);
}

/**
 * memory_test_prewarm:
 * @backend: a memory backend
 *
 * Returns: (transfer full): the key of the test template in @backend
 */
char *
memory_test_prewarm (SandboxBackend *backend)
{
  g_autoptr(SandboxTemplate) template_ = memory_test_template_new ();
  g_autoptr(GError) error = NULL;
  char *key;

  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (key);

  return key;
}

/**
 * memory_test_create:
 * @backend: a memory backend
 * @template_key: a stored template
 * @state: (nullable): a state to resume
 *
 * Returns: (transfer full): a live handle under deny-all
 */
SandboxHandle *
memory_test_create (SandboxBackend *backend,
                    const char     *template_key,
                    SandboxState   *state)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  SandboxHandle *handle;

  handle = sandbox_backend_create (backend, template_key, state, policy, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (handle);

  return handle;
}

/**
 * memory_test_command_new:
 * @executable: the executable
 * @...: arguments, then %NULL
 *
 * Returns: (transfer full): a command
 */
SandboxCommand *
memory_test_command_new (const char *executable,
                         ...)
{
  SandboxCommand *command = sandbox_command_new (executable);
  const char *arg;
  va_list args;

  va_start (args, executable);
  while ((arg = va_arg (args, const char *)) != NULL)
    sandbox_command_add_arg (command, arg);
  va_end (args);

  return command;
}

/**
 * memory_fixture_set_up:
 * @fixture: the fixture
 * @data: (nullable): a pointer to the admission limit, or %NULL for 2
 *
 * Creates a live session over the memory driver.
 */
void
memory_fixture_set_up (MemoryFixture *fixture,
                       gconstpointer  data)
{
  fixture->backend = memory_test_backend_new (data != NULL ? *(const guint *) data : 2);
  fixture->template_key = memory_test_prewarm (fixture->backend);
  fixture->handle = memory_test_create (fixture->backend, fixture->template_key, NULL);
  fixture->session = sandbox_handle_get_session (fixture->handle);
}

/**
 * memory_fixture_tear_down:
 * @fixture: the fixture
 * @data: unused
 *
 * Stops and drops the session and the backend.
 */
void
memory_fixture_tear_down (MemoryFixture *fixture,
                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  sandbox_handle_stop (fixture->handle, NULL, &error);
  g_assert_no_error (error);

  fixture->session = NULL;
  g_clear_object (&fixture->handle);
  g_clear_pointer (&fixture->template_key, g_free);
  g_clear_object (&fixture->backend);

  memory_test_drain ();
}

/**
 * memory_test_drain:
 *
 * A blocking wait leaves the output dispatch of its process queued on this
 * thread's main context, holding the process (and through it the session);
 * runs what is pending there, so nothing outlives the test.
 */
void
memory_test_drain (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/**
 * memory_test_store_result:
 * @source: the source object
 * @result: the result
 * @user_data: a `GAsyncResult **` to store a reference to @result in
 *
 * A #GAsyncReadyCallback for memory_test_await().
 */
void
memory_test_store_result (GObject      *source,
                          GAsyncResult *result,
                          gpointer      user_data)
{
  GAsyncResult **slot = user_data;

  g_assert_null (*slot);
  *slot = g_object_ref (result);
}

/**
 * memory_test_await:
 * @slot: where memory_test_store_result() stores the result
 *
 * Iterates the thread-default main context until the result arrives.
 *
 * Returns: (transfer none): the result, still owned by @slot
 */
GAsyncResult *
memory_test_await (GAsyncResult **slot)
{
  while (*slot == NULL)
    g_main_context_iteration (NULL, TRUE);

  return *slot;
}
