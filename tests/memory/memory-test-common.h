/* memory-test-common.h — shared set-up of the memory driver tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sandbox.h>

G_BEGIN_DECLS

/* A live session over the memory driver, created from the test template
 * (hello.txt = "hello", docs/readme.md = "# readme\n") and the fixture
 * script tests/memory/script.json. */
typedef struct
{
  SandboxBackend *backend;
  char           *template_key;
  SandboxHandle  *handle;
  SandboxSession *session;
} MemoryFixture;

char           *memory_test_script_path   (void);
SandboxBackend *memory_test_backend_new   (guint                  max_concurrent_commands);
SandboxTemplate *memory_test_template_new (void);
char           *memory_test_prewarm       (SandboxBackend        *backend);
SandboxHandle  *memory_test_create        (SandboxBackend        *backend,
                                           const char            *template_key,
                                           SandboxState          *state);
SandboxCommand *memory_test_command_new   (const char            *executable,
                                           ...) G_GNUC_NULL_TERMINATED;
void            memory_fixture_set_up     (MemoryFixture         *fixture,
                                           gconstpointer          data);
void            memory_fixture_tear_down  (MemoryFixture         *fixture,
                                           gconstpointer          data);
void            memory_test_store_result  (GObject               *source,
                                           GAsyncResult          *result,
                                           gpointer               user_data);
void            memory_test_drain         (void);
GAsyncResult   *memory_test_await         (GAsyncResult         **slot);

G_END_DECLS
