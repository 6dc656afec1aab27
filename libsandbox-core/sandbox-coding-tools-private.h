/* sandbox-coding-tools-private.h — what a call needs of its SandboxCodingTools
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The object (sandbox-coding-tools.c) holds the configuration under its
 * lock and owns the signals; sandbox-coding-invoke.c runs the calls
 * through these.
 */

#pragma once

#include "sandbox-coding-tools.h"
#include "sandbox-coding-schema-private.h"

G_BEGIN_DECLS

SandboxCodingCall    *sandbox_coding_tools_new_call        (SandboxCodingTools      *self);
/* NULL unless made by sandbox_coding_tools_new(). */
SandboxCodingBinding *sandbox_coding_tools_get_binding     (SandboxCodingTools      *self);
void                  sandbox_coding_tools_get_limits      (SandboxCodingTools      *self,
                                                            SandboxCodingLimits     *limits);
JsonNode             *sandbox_coding_tools_authorize       (SandboxCodingTools      *self,
                                                            const SandboxCodingCall *call);
void                  sandbox_coding_tools_snapshot        (SandboxCodingTools      *self,
                                                            SandboxCodingCall       *call);
void                  sandbox_coding_tools_emit_tool_error (SandboxCodingTools      *self,
                                                            const char              *tool,
                                                            const GError            *cause);

G_END_DECLS
