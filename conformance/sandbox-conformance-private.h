/* sandbox-conformance-private.h — what the suite's files share: the run
 * context, the check tables and the helpers the checks are written with
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_CONFORMANCE_COMPILATION
# error "sandbox-conformance-private.h is private to libsandbox-conformance."
#endif

#include "sandbox-conformance.h"

G_BEGIN_DECLS

/* A check's failure: sets @error and is FALSE, in one expression. */
#define CHECK_FAILED(error, ...) \
  (g_set_error ((error), G_IO_ERROR, G_IO_ERROR_FAILED, __VA_ARGS__), FALSE)

#define DEADLINE_TEST_MS   300
#define SLOW_BOUND_US      (15 * G_USEC_PER_SEC)

struct _SandboxConformance
{
  GObject                  parent_instance;

  char                    *driver;
  SandboxConformanceFlags  flags;
  GPtrArray               *property_names;    /* (element-type utf8) */
  GArray                  *property_values;   /* (element-type GValue) */

  guint                    n_passed;
  guint                    n_failed;
  guint                    n_skipped;
};

/* The run context shared by the checks. */
typedef struct
{
  SandboxConformance *self;
  GCancellable       *cancellable;
  char               *temporary_directory;  /* owned by the run, removed after */
  SandboxBackend     *backend;
  char               *name;
  char               *key;                  /* template with conformance.txt */
  char               *other_key;            /* a second template */
  char               *skip_reason;          /* set by a check that doesn't apply */
  /* For a check whose row asks for a fixture: a new session from the
   * prewarmed template (deny-all), deleted after the check, and for
   * CONFORMANCE_FIXTURE_STOPPED_SESSION its state captured before it was stopped. */
  SandboxHandle      *handle;
  SandboxSession     *session;
  SandboxState       *state;
} ConformanceRun;

/* What the run sets up for a check before calling it. */
typedef enum
{
  CONFORMANCE_FIXTURE_NONE,
  CONFORMANCE_FIXTURE_SESSION,          /* run->handle, run->session */
  CONFORMANCE_FIXTURE_STOPPED_SESSION,  /* the same, stopped, and run->state */
} ConformanceFixture;

typedef gboolean (*ConformanceCheckFunc) (ConformanceRun  *run,
                                          GError         **error);

typedef struct
{
  const char           *name;
  ConformanceCheckFunc  func;
  gboolean              runs_commands;
  ConformanceFixture    fixture;
} ConformanceCheck;

/* The checks, in the order they run (their TAP numbers): one table per file,
 * sessions, then workspace, then commands, then live processes, then
 * snapshots; each ends with a NULL name. */
extern const ConformanceCheck conformance_session_checks[];
extern const ConformanceCheck conformance_workspace_checks[];
extern const ConformanceCheck conformance_command_checks[];
extern const ConformanceCheck conformance_live_checks[];
extern const ConformanceCheck conformance_snapshot_checks[];

/* The contents of the template's conformance.txt. */
#define CONFORMANCE_HELLO "hello from the conformance suite\n"

gboolean         conformance_claims_commands     (ConformanceRun       *run);
gboolean         conformance_has_property        (SandboxConformance   *self,
                                                  const char           *name);
char            *conformance_describe_error      (const GError         *error);
gboolean         conformance_expect_error        (GError              **actual,
                                                  GQuark                domain,
                                                  int                   code,
                                                  const char           *what,
                                                  GError              **error);
gboolean         conformance_expect_success      (GError              **actual,
                                                  const char           *what,
                                                  GError              **error);
gboolean         conformance_expect_bytes        (GBytes               *bytes,
                                                  const void           *data,
                                                  gsize                 length,
                                                  const char           *what,
                                                  GError              **error);
SandboxBackend  *conformance_new_backend         (SandboxConformance   *self,
                                                  const char           *state_directory,
                                                  guint                 max_concurrent_commands,
                                                  GCancellable         *cancellable,
                                                  GError              **error);
SandboxTemplate *conformance_make_template       (const char           *name,
                                                  gboolean              reversed,
                                                  const char           *extra);
SandboxHandle   *conformance_new_session         (ConformanceRun       *run,
                                                  GError              **error);
SandboxHandle   *conformance_resume_session      (ConformanceRun       *run,
                                                  SandboxState         *state,
                                                  GError              **error);
SandboxHandle   *conformance_new_stopped_session (ConformanceRun       *run,
                                                  SandboxState        **state,
                                                  GError              **error);
gboolean         conformance_expect_create_refused (ConformanceRun     *run,
                                                    SandboxBackend     *backend,
                                                    const char         *key,
                                                    SandboxState       *state,
                                                    int                 code,
                                                    const char         *accepted,
                                                    const char         *what,
                                                    GError            **error);
gboolean         conformance_expect_resume_refused (ConformanceRun     *run,
                                                    SandboxState       *state,
                                                    int                 code,
                                                    const char         *accepted,
                                                    const char         *what,
                                                    GError            **error);
SandboxState    *conformance_capture_state         (SandboxHandle      *handle,
                                                    const char         *what,
                                                    GError            **error);
void             conformance_discard_session     (SandboxHandle        *handle);
SandboxCommand  *conformance_probe_command       (const char           *executable,
                                                  const char           *arg);

/* A handle that is deleted, not just released, when it goes out of scope. */
typedef SandboxHandle SandboxHandleDiscard;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxHandleDiscard, conformance_discard_session)

G_END_DECLS
