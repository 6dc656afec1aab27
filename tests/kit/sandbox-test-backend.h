/* sandbox-test-backend.h — how the test suites make backends
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * sandbox_test_backend_new() makes a backend of any driver by name, with
 * properties given as strings. For bubblewrap it is also the one place for what every suite against the bubblewrap backend needs from
 * its environment: SANDBOX_TEST_LAYERING. Unset, backends keep their
 * default (copied workspaces). "auto" or "copy" sets the backend's
 * `layering` property, so the same hostile suites run on overlay
 * workspaces too (meson registers them as NAME-layered); and with "auto"
 * every backend made here must really be layered
 * (`workspace-layering` = "overlay"): this machine's kernel supports it, so
 * a layered run can never quietly test copies instead.
 */

#pragma once

#include <stdarg.h>

#include <sandbox.h>

G_BEGIN_DECLS

#define SANDBOX_TEST_LAYERING_VARIABLE "SANDBOX_TEST_LAYERING"

const char     *sandbox_test_layering                  (void);
void            sandbox_test_assert_layering           (SandboxBackend *backend);

SandboxBackend *sandbox_test_backend_new_valist        (const char  *driver,
                                                        const char  *state_directory,
                                                        GError     **error,
                                                        va_list      ap);
SandboxBackend *sandbox_test_backend_new               (const char  *driver,
                                                        const char  *state_directory,
                                                        GError     **error,
                                                        ...) G_GNUC_NULL_TERMINATED;
SandboxBackend *sandbox_test_setup_backend             (const char  *driver,
                                                        const char  *state_directory,
                                                        ...) G_GNUC_NULL_TERMINATED;
SandboxBackend *sandbox_test_bubblewrap_new_valist     (const char  *state_directory,
                                                        GError     **error,
                                                        va_list      ap);
SandboxBackend *sandbox_test_bubblewrap_new            (const char  *state_directory,
                                                        GError     **error,
                                                        ...) G_GNUC_NULL_TERMINATED;

char           *sandbox_test_workspace_directory       (const char  *session_directory);
guint           sandbox_test_count_entries             (const char  *directory);

G_END_DECLS
