/* sandbox-log-private.h — lifecycle events as structured log messages
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-backend.h"
#include "sandbox-driver.h"
#include "sandbox-handle.h"
#include "sandbox-network-policy.h"
#include "sandbox-process.h"
#include "sandbox-state.h"

G_BEGIN_DECLS

/*
 * What an operator reads (docs/operations.md, "Log fields"): every lifecycle
 * event is one g_log_structured() message in the "Sandbox" domain, whichever
 * component (core, gateway, driver) reports it, so that the one switch
 * `G_MESSAGES_DEBUG=Sandbox` shows them all (GLib 2.74 matches a domain as a
 * substring of the variable, later versions as a whole word: "Sandbox"
 * matches only "Sandbox" in both). The driver is a field, SANDBOX_DRIVER.
 *
 * Levels: G_LOG_LEVEL_DEBUG for normal flow, refusals and limit kills
 * included (the caller gets them as errors); G_LOG_LEVEL_INFO only for a
 * session taken over from a dead owner. Both are silent unless
 * G_MESSAGES_DEBUG selects them. Nothing here logs at message or above.
 *
 * Never logged: header values (policies appear as their redacted JSON), the
 * command's environment or arguments (those appear only in the bubblewrap
 * driver's debug message with its bwrap argument list).
 */

#define SANDBOX_LOG_DOMAIN "Sandbox"

void sandbox_log_session_opened  (SandboxBackend        *backend,
                                  const char            *event,
                                  const char            *template_key,
                                  SandboxState          *state,
                                  SandboxNetworkPolicy  *policy,
                                  gpointer const        *objects,
                                  GError               **error);
void sandbox_log_handle_event    (SandboxHandle         *handle,
                                  const char            *event,
                                  gboolean               ok,
                                  GError               **error);
void sandbox_log_spawned         (gpointer               spawner,
                                  SandboxProcess        *process,
                                  GError               **error);
void sandbox_log_policy_changed  (SandboxDriver         *driver,
                                  SandboxNetworkPolicy  *policy,
                                  gboolean               ok,
                                  GError               **error);
void sandbox_log_limit_kill      (SandboxProcess        *process,
                                  const GError          *reason);
void sandbox_log_gateway_event   (const char            *event,
                                  const char            *socket_path,
                                  const char            *session_id,
                                  SandboxNetworkPolicy  *policy);

G_END_DECLS
