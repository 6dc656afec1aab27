/* sandbox-test-fixture.h — one fixture for the suites that need a backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A state directory of the test's own in a temporary directory, removed
 * with everything in it after the test; a backend of any driver on it; and,
 * when asked for, a template prewarmed on that backend. Suites embed
 * SandboxTestFixture first in their own fixture struct, or use it as is.
 */

#pragma once

#include <stdarg.h>

#include <sandbox.h>

G_BEGIN_DECLS

/* What the unprivileged parts of a test run as: Debian's nobody. */
#define SANDBOX_TEST_UNPRIVILEGED_ID 65534

typedef struct
{
  char *state_directory;    /* made in TMPDIR, removed at tear-down */
  SandboxBackend *backend;
  char *template_key;       /* the prewarmed template's key, or NULL */
  SandboxHandle *handle;    /* sandbox_test_fixture_open_session()'s, or NULL */
  SandboxSession *session;  /* the handle's session */
} SandboxTestFixture;

char           *sandbox_test_state_directory_new    (void);
void            sandbox_test_state_directory_remove (const char          *directory);
void            sandbox_test_remove_tree            (const char          *path);

SandboxTemplate *sandbox_test_template_hello        (void);
void            sandbox_test_template_add_text      (SandboxTemplate     *template_,
                                                     const char          *path,
                                                     const char          *text);
char           *sandbox_test_prewarm                (SandboxBackend      *backend,
                                                     SandboxTemplate     *template_,
                                                     gboolean            *reused);

char           *sandbox_test_prewarm_hello          (SandboxBackend      *backend);
SandboxHandle  *sandbox_test_create_session         (SandboxBackend      *backend,
                                                     const char          *template_key);
void            sandbox_test_delete_session         (SandboxHandle       *handle);
char           *sandbox_test_snapshot               (SandboxHandle       *handle);
void            sandbox_test_restore                (SandboxHandle       *handle,
                                                     const char          *key);
SandboxHandle  *sandbox_test_stop_and_resume        (SandboxBackend      *backend,
                                                     SandboxHandle       *handle);

void            sandbox_test_fixture_set_up         (SandboxTestFixture  *fixture,
                                                     const char          *driver,
                                                     SandboxTemplate     *template_,
                                                     ...) G_GNUC_NULL_TERMINATED;
void            sandbox_test_fixture_set_up_valist  (SandboxTestFixture  *fixture,
                                                     const char          *driver,
                                                     SandboxTemplate     *template_,
                                                     va_list              ap);
void            sandbox_test_fixture_open_session   (SandboxTestFixture  *fixture,
                                                     SandboxNetworkPolicy *policy);
void            sandbox_test_fixture_set_up_session (SandboxTestFixture  *fixture,
                                                     gconstpointer        driver);
void            sandbox_test_fixture_tear_down      (SandboxTestFixture  *fixture,
                                                     gconstpointer        data);

void            sandbox_test_become_unprivileged    (void);

G_END_DECLS
