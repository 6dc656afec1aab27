/* escape-common.h — helpers shared by the attacker's suite (tests/escape/)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every test file of the suite is one attack class against the bubblewrap
 * backend. These helpers give each file a private state directory, a backend
 * with extra properties, a session, and ways to run guest commands and the
 * guest probe (escape-probe.c). Helpers assert on unexpected failures: an
 * attack case is about what the guest can reach, not about error plumbing.
 */

#pragma once

#include <sandbox.h>

G_BEGIN_DECLS

/* A state directory, a backend on it, a template and one live session. */
typedef struct
{
  char *state_directory;
  SandboxBackend *backend;
  char *template_key;
  SandboxHandle *handle;
  SandboxSession *session;   /* owned by handle */
} EscapeSession;

gboolean        escape_running_as_root        (void);

char           *escape_state_directory_new    (void);
void            escape_state_directory_remove (const char *directory);

SandboxBackend *escape_backend_new            (const char *state_directory,
                                               ...) G_GNUC_NULL_TERMINATED;
SandboxBackend *escape_backend_new_valist     (const char *state_directory,
                                               va_list     ap);

char           *escape_prewarm                (SandboxBackend *backend);
SandboxHandle  *escape_create                 (SandboxBackend *backend,
                                               const char     *template_key);

void            escape_session_open           (EscapeSession *s,
                                               ...) G_GNUC_NULL_TERMINATED;
void            escape_session_close          (EscapeSession *s);
SandboxState   *escape_session_stop           (EscapeSession *s);
void            escape_session_resume         (EscapeSession *s,
                                               SandboxState  *state);
char           *escape_session_directory      (EscapeSession *s);
char           *escape_workspace_directory    (EscapeSession *s);

SandboxResult  *escape_run_sh                 (SandboxSession *session,
                                               const char     *script,
                                               guint           timeout_ms,
                                               GError        **error);
int             escape_sh_status              (SandboxSession *session,
                                               const char     *script,
                                               char          **out,
                                               char          **err);
char           *escape_sh                     (SandboxSession *session,
                                               const char     *script);

void            escape_install_probe          (SandboxSession *session);
char           *escape_probe                  (SandboxSession *session,
                                               const char     *arguments);
int             escape_probe_errno            (SandboxSession *session,
                                               const char     *arguments);

guint           escape_count_processes_with_arg (const char *needle);
void            escape_wait_until_no_process_with (const char *needle);

void            escape_kill_self_after        (const char *delay_us);

int             escape_find_guest_pid         (const char *argv0,
                                               const char *marker);
char           *escape_status_field           (int         pid,
                                               const char *key);

G_END_DECLS
