/* sandbox-test-session.h — running commands in a test's sessions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Commands built inline, shell scripts in the guest whose failure fails the
 * test, and the host's view of the processes a guest left behind (found by
 * a unique token in their command lines).
 */

#pragma once

#include <sandbox.h>

G_BEGIN_DECLS

SandboxCommand *sandbox_test_command_newv              (const char * const *argv);
/* A command from its argv, inline: SANDBOX_TEST_COMMAND ("/usr/bin/true"). */
#define SANDBOX_TEST_COMMAND(...) \
  sandbox_test_command_newv ((const char * const []) { __VA_ARGS__, NULL })

SandboxResult  *sandbox_test_run                       (SandboxSession     *session,
                                                        SandboxCommand     *command,
                                                        GError            **error);
SandboxProcess *sandbox_test_spawn                     (SandboxSession     *session,
                                                        SandboxCommand     *command,
                                                        GCancellable       *cancellable,
                                                        GError            **error);
char           *sandbox_test_guest_sh                  (SandboxSession     *session,
                                                        const char         *script);
int             sandbox_test_guest_status              (SandboxSession     *session,
                                                        const char         *script);

SandboxCommand *sandbox_test_daemon_command            (SandboxSession     *session,
                                                        const char         *token);

char           *sandbox_test_unique_token              (void);
guint           sandbox_test_count_processes_with      (const char         *token);
void            sandbox_test_wait_for_processes_with   (const char         *token);
void            sandbox_test_assert_no_processes_with  (const char         *token);

G_END_DECLS
