/* sandbox-state.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_STATE (sandbox_state_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxState, sandbox_state, SANDBOX, STATE, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxState *sandbox_state_new               (const char    *backend,
                                               const char    *session_id,
                                               const char    *template_key,
                                               GError       **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxState *sandbox_state_new_from_json     (const char    *json,
                                               GError       **error);
SANDBOX_AVAILABLE_IN_ALL
char         *sandbox_state_to_json           (SandboxState  *self);
SANDBOX_AVAILABLE_IN_ALL
const char   *sandbox_state_get_backend       (SandboxState  *self);
SANDBOX_AVAILABLE_IN_ALL
const char   *sandbox_state_get_session_id    (SandboxState  *self);
SANDBOX_AVAILABLE_IN_ALL
const char   *sandbox_state_get_template_key  (SandboxState  *self);
SANDBOX_AVAILABLE_IN_ALL
gboolean      sandbox_state_equal             (SandboxState  *a,
                                               SandboxState  *b);

G_END_DECLS
