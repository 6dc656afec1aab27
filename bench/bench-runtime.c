/* bench-runtime.c — sessions on a runtime against sessions on the host's /usr
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Issue 35's Bench section, side by side in the same rounds on one
 * bubblewrap backend: a command in a session whose template names a
 * runtime against one in a session on the host's /usr (target ≤ 1.05×),
 * cold (each in a new session: its first command) and hot (the next
 * command, from the ready sandbox); and create from the runtime's template
 * against create from a plain one (informational). The runtime is the one
 * the tests make (Debian's busybox-static, tests/bubblewrap/with-test-runtime.sh),
 * named by BENCH_RUNTIME_DIR; bench/run makes it.
 */

#include "config.h"

#include <sandbox.h>

#include "bench-common.h"
#include "bench-runtime.h"
#include "bench-session.h"
#include "bench-table.h"

static char *
prewarm_on (SandboxBackend *backend,
            const char     *runtime)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("bench-runtime");
  g_autoptr(GError) error = NULL;
  char *key;

  sandbox_template_add_file (template_, "hello.txt", g_bytes_new_static ("hello\n", 6), NULL);
  if (runtime != NULL)
    sandbox_template_set_runtime (template_, runtime);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  check (error, "prewarm");
  return key;
}

static double
run_true (SandboxSession *session)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/true");
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  double start = bench_now_us ();

  result = sandbox_session_run (session, command, NULL, &error);
  check (error, "run");
  if (sandbox_result_get_exit_status (result) != 0)
    g_error ("/usr/bin/true: exit %d", sandbox_result_get_exit_status (result));
  return bench_now_us () - start;
}

/* One round of one kind: a create, its first command, and after a pause
 * (the ready sandbox's setup) the next. */
static void
round_of (SandboxBackend       *backend,
          const char           *key,
          SandboxNetworkPolicy *policy,
          Samples              *create,
          Samples              *cold,
          Samples              *hot)
{
  double start = bench_now_us ();
  g_autoptr(SandboxHandle) handle = create_session (backend, key, policy);
  SandboxSession *session = sandbox_handle_get_session (handle);

  samples_add (create, bench_now_us () - start);
  samples_add (cold, run_true (session));
  g_usleep (60 * 1000);
  samples_add (hot, run_true (session));
  delete_session (handle);
}

static void
add_pair (const char *what,
          Samples    *runtime,
          Samples    *host,
          const char *target,
          gboolean    judged,
          double      bound)
{
  double ratio = samples_median (runtime) / samples_median (host);

  add_row (g_strdup (what), format_time (runtime), format_time (host),
           g_strdup_printf ("%.3fx", ratio), target, judged, !judged || ratio <= bound);
}

/**
 * bench_runtime:
 * @state_root: where the backend's state directory goes
 * @quick: fewer rounds
 *
 * Adds the rows described above, or none (saying why) without
 * BENCH_RUNTIME_DIR.
 */
void
bench_runtime (const char *state_root,
               gboolean    quick)
{
  const char *source = g_getenv ("BENCH_RUNTIME_DIR");
  g_autofree char *state = g_build_filename (state_root, "runtime", NULL);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(GFile) source_file = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *runtime = NULL;
  g_autofree char *on_runtime = NULL;
  g_autofree char *on_host = NULL;
  g_autoptr(Samples) create_r = samples_new (), create_h = samples_new ();
  g_autoptr(Samples) cold_r = samples_new (), cold_h = samples_new ();
  g_autoptr(Samples) hot_r = samples_new (), hot_h = samples_new ();
  guint rounds = quick ? 10 : 40;

  if (source == NULL)
    {
      g_printerr ("runtime: skipped (BENCH_RUNTIME_DIR names no runtime; bench/run makes one)\n");
      return;
    }
  backend = sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", state, NULL);
  check (error, "backend");
  source_file = g_file_new_for_path (source);
  runtime = sandbox_backend_import_runtime (backend, source_file, NULL, NULL, &error);
  check (error, "import runtime");
  on_runtime = prewarm_on (backend, runtime);
  on_host = prewarm_on (backend, NULL);

  g_printerr ("runtime: %u rounds, alternating\n", rounds);
  for (guint i = 0; i < rounds; i++)
    {
      gboolean runtime_first = i % 2 == 0;

      for (guint j = 0; j < 2; j++)
        {
          if ((j == 0) == runtime_first)
            round_of (backend, on_runtime, policy, create_r, cold_r, hot_r);
          else
            round_of (backend, on_host, policy, create_h, cold_h, hot_h);
        }
    }
  add_pair ("runtime: first command, on a runtime vs on the host's /usr", cold_r, cold_h,
            "<= 1.05x", TRUE, 1.05);
  add_pair ("runtime: hot command, on a runtime vs on the host's /usr", hot_r, hot_h,
            "<= 1.05x", TRUE, 1.05);
  add_pair ("runtime: create from a runtime's template vs a plain one", create_r, create_h,
            "informational", FALSE, 0);
}
