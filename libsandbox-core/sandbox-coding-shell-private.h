/* sandbox-coding-shell-private.h — the shell tool, its launches and its artifacts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-coding-call-private.h"
#include "sandbox-coding-launch.h"
#include "sandbox-command.h"

G_BEGIN_DECLS

/* The SandboxCodingToolFunc of `shell`, for the schema's table. */
gboolean                sandbox_coding_shell                (SandboxCodingCall       *call,
                                                             GCancellable            *cancellable,
                                                             GError                 **error);

gboolean                sandbox_coding_run_command          (SandboxCodingCall       *call,
                                                             SandboxCommand          *command,
                                                             gboolean                 emit,
                                                             GByteArray              *out,
                                                             GByteArray              *err,
                                                             SandboxResult          **result,
                                                             GError                 **failure,
                                                             GCancellable            *cancellable,
                                                             GError                 **error);
gboolean                sandbox_coding_output_overflowed    (const GError            *failure);
char                   *sandbox_coding_model_text           (GByteArray              *bytes,
                                                             gsize                    budget,
                                                             gboolean                *cut);

SandboxCodingLaunch    *sandbox_coding_shell_prepare_launch (SandboxCodingBinding    *binding,
                                                             SandboxCommand          *command,
                                                             const char * const      *required,
                                                             GError                 **error);

SandboxCodingArtifacts *sandbox_coding_artifacts_new        (void);
void                    sandbox_coding_artifacts_free       (SandboxCodingArtifacts  *self);
guint                   sandbox_coding_artifacts_get_max    (SandboxCodingArtifacts  *self);
void                    sandbox_coding_artifacts_set_max    (SandboxCodingArtifacts  *self,
                                                             guint                    max_artifacts);
GBytes                 *sandbox_coding_artifacts_lookup     (SandboxCodingArtifacts  *self,
                                                             const char              *id,
                                                             GBytes                 **stderr_bytes);

G_END_DECLS
