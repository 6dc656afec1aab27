/* sandbox-conformance.h — the black-box contract every backend must keep
 *
 * The header of libsandbox-conformance-1 (pkg-config sandbox-conformance-1),
 * which links libsandbox-1: include it alone, as <sandbox-conformance.h>.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sandbox.h>

G_BEGIN_DECLS

/**
 * SandboxConformanceFlags:
 * @SANDBOX_CONFORMANCE_FLAGS_NONE: run every check
 * @SANDBOX_CONFORMANCE_FLAGS_NO_COMMANDS: the driver does not run commands;
 *   instead of the command, limit and admission checks, the suite checks that
 *   every spawn is refused with %SANDBOX_ERROR_UNAVAILABLE
 *
 * What a driver claims, so the suite checks exactly that.
 */
typedef enum /*< flags >*/
{
  SANDBOX_CONFORMANCE_FLAGS_NONE        = 0,
  SANDBOX_CONFORMANCE_FLAGS_NO_COMMANDS = 1 << 0,
} SandboxConformanceFlags;

/**
 * SandboxConformanceOutcome:
 * @SANDBOX_CONFORMANCE_OUTCOME_PASS: the backend kept the contract
 * @SANDBOX_CONFORMANCE_OUTCOME_FAIL: the backend broke the contract
 * @SANDBOX_CONFORMANCE_OUTCOME_SKIP: the check does not apply to what the
 *   driver claims (see [flags@SandboxConformance.ConformanceFlags])
 *
 * The result of one conformance check.
 */
typedef enum
{
  SANDBOX_CONFORMANCE_OUTCOME_PASS,
  SANDBOX_CONFORMANCE_OUTCOME_FAIL,
  SANDBOX_CONFORMANCE_OUTCOME_SKIP,
} SandboxConformanceOutcome;

#define SANDBOX_TYPE_CONFORMANCE_FLAGS (sandbox_conformance_flags_get_type ())
SANDBOX_AVAILABLE_IN_ALL
GType sandbox_conformance_flags_get_type (void) G_GNUC_CONST;

#define SANDBOX_TYPE_CONFORMANCE_OUTCOME (sandbox_conformance_outcome_get_type ())
SANDBOX_AVAILABLE_IN_ALL
GType sandbox_conformance_outcome_get_type (void) G_GNUC_CONST;

#define SANDBOX_TYPE_CONFORMANCE (sandbox_conformance_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxConformance, sandbox_conformance, SANDBOX, CONFORMANCE, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxConformance      *sandbox_conformance_new                   (const char               *driver,
                                                                    SandboxConformanceFlags   flags);
SANDBOX_AVAILABLE_IN_ALL
const char              *sandbox_conformance_get_driver            (SandboxConformance       *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxConformanceFlags  sandbox_conformance_get_flags             (SandboxConformance       *self);
SANDBOX_AVAILABLE_IN_ALL
void                     sandbox_conformance_set_backend_property  (SandboxConformance       *self,
                                                                    const char               *name,
                                                                    const GValue             *value);
SANDBOX_AVAILABLE_IN_ALL
gboolean                 sandbox_conformance_parse_backend_property (SandboxConformance      *self,
                                                                    const char               *assignment,
                                                                    GError                  **error);
SANDBOX_AVAILABLE_IN_ALL
char                   **sandbox_conformance_list_checks           (void);
SANDBOX_AVAILABLE_IN_ALL
gboolean                 sandbox_conformance_run                   (SandboxConformance       *self,
                                                                    GOutputStream            *tap_output,
                                                                    GCancellable             *cancellable,
                                                                    GError                  **error);
SANDBOX_AVAILABLE_IN_ALL
guint                    sandbox_conformance_get_n_passed          (SandboxConformance       *self);
SANDBOX_AVAILABLE_IN_ALL
guint                    sandbox_conformance_get_n_failed          (SandboxConformance       *self);
SANDBOX_AVAILABLE_IN_ALL
guint                    sandbox_conformance_get_n_skipped         (SandboxConformance       *self);

G_END_DECLS
