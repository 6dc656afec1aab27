/* sandbox-bench.c — libsandbox measured side by side with the physical floor
 *
 * Every figure is a ratio of medians over interleaved rounds measured in this
 * one run (the machine is shared and noisy), with the 95th percentile beside
 * it. Prints a table and exits 1 when a target is missed.
 *
 *   sandbox-bench [--quick] [--only SECTION] [--keep]
 *
 * Sections: command, async, io, gateway, proxy, template, layering, snapshot, scale,
 * cluster, live.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <sandbox-backend-driver.h>
#include <sandbox-gateway.h>

#include "bench-common.h"
#include "bench-cpu.h"
#include "bench-many.h"
#include "bench-runtime.h"
#include "bench-floor.h"
#include "bench-gateway.h"
#include "bench-proxy.h"
#include "bench-session.h"
#include "bench-snapshot.h"
#include "bench-stream.h"
#include "bench-table.h"
#include "sandbox-bubblewrap-keeper-private.h"

extern char **environ;

static gboolean quick;
static gboolean keep;
static char *only;
static int many_sessions = 10000;

/* Helpers */

static int
run_host (const char * const *argv)
{
  pid_t pid;
  int status = -1;

  if (posix_spawn (&pid, argv[0], NULL, NULL, (char * const *) argv, environ) != 0)
    return -1;
  waitpid (pid, &status, 0);
  return status;
}

static void
remove_tree (const char *path)
{
  const char *argv[] = { "/bin/rm", "-rf", path, NULL };

  run_host (argv);
}

static char *
sha256_hex (const char *text)
{
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
}

/* Raw bwrap started as the guest's ids (a root host's guests are not root)
 * must pass every directory down to the workspace: the benchmark's own state
 * directories get search permission for all (their names stay unlisted). */
static void
open_way_for_guests (const char *state_directory,
                     const char *base,
                     const char *session_id)
{
  g_autofree char *root = g_path_get_dirname (state_directory);
  g_autofree char *store = g_build_filename (state_directory, base, NULL);
  g_autofree char *sessions = g_build_filename (store, "sessions", NULL);
  g_autofree char *session = g_build_filename (sessions, session_id, NULL);
  const char *ways[] = { root, state_directory, store, sessions, session };

  if (geteuid () != 0)
    return;
  for (gsize i = 0; i < G_N_ELEMENTS (ways); i++)
    {
      struct stat st;

      if (lstat (ways[i], &st) != 0 || !S_ISDIR (st.st_mode) ||
          chmod (ways[i], (st.st_mode & 07777) | 0111) != 0)
        g_error ("cannot open the way to a workspace at %s", ways[i]);
    }
}

/* On a root host each session's guest has ids of its own (guest-id-range):
 * the floor's bwrap runs as the ids the session's workspace belongs to, as
 * the driver's does. */
static void
floor_runs_as_owner_of (const char *workspace)
{
  struct stat st;

  if (geteuid () == 0 && stat (workspace, &st) == 0 && st.st_uid != 0)
    bench_floor_set_guest_ids (st.st_uid, st.st_gid);
}

/* The host path of a bubblewrap session's workspace, from the documented
 * store layout. */
static char *
workspace_of (const char    *state_directory,
              SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (handle, &error);
  g_autofree char *base = sha256_hex ("bubblewrap");
  g_autofree char *real = realpath (state_directory, NULL);

  g_autofree char *session = NULL;
  g_autofree char *layers = NULL;
  g_autofree char *workspace = NULL;

  check (error, "capture state");
  open_way_for_guests (real, base, sandbox_state_get_session_id (state));
  session = g_build_filename (real, base, "sessions", sandbox_state_get_session_id (state), NULL);
  /* A layered session's own directory: the floor binds it as a plain
   * directory (the template's files are not in it). */
  layers = g_build_filename (session, "layers", NULL);
  workspace = g_file_test (layers, G_FILE_TEST_IS_DIR) ? g_build_filename (layers, "upper", NULL)
                                                       : g_build_filename (session, "workspace",
                                                                           NULL);
  floor_runs_as_owner_of (workspace);
  return g_steal_pointer (&workspace);
}

static char *
template_data_of (const char *state_directory,
                  const char *key)
{
  g_autofree char *base = sha256_hex ("bubblewrap");
  g_autofree char *real = realpath (state_directory, NULL);

  return g_build_filename (real, base, "templates", key, "data", NULL);
}

/* The floor starts bwrap as the driver does: as the backend's guest ids,
 * with the backend's curated /etc and /tmp size on its command line. */
static void
floor_follows_guest_ids (SandboxBackend *backend)
{
  gint64 uid = -1, gid = -1;
  gboolean curated_etc = FALSE;
  g_autofree char *git_name = NULL;
  g_autofree char *git_email = NULL;
  guint64 tmp_size = 0;

  g_object_get (backend, "guest-uid", &uid, "guest-gid", &gid, "curated-etc", &curated_etc,
                "git-user-name", &git_name, "git-user-email", &git_email,
                "tmp-size", &tmp_size, NULL);
  if (uid > 0 && gid > 0)
    bench_floor_set_guest_ids ((uid_t) uid, (gid_t) gid);
  bench_floor_set_driver_settings (curated_etc, git_name, git_email, tmp_size);
}

/* @layering: "auto" (the default: layered where overlays work) or "copy". */
static SandboxBackend *
new_backend_with_ready (const char *state_directory,
                        guint       max_concurrent,
                        guint       max_ready,
                        const char *layering)
{
  g_autoptr(GError) error = NULL;
  SandboxBackend *backend = sandbox_backend_new ("bubblewrap", NULL, &error,
                                                 "state-directory", state_directory,
                                                 "max-concurrent-commands", max_concurrent,
                                                 "max-ready-sandboxes", max_ready,
                                                 "layering", layering,
                                                 NULL);

  check (error, "backend");
  floor_follows_guest_ids (backend);
  return backend;
}

static SandboxBackend *
new_backend (const char *state_directory,
             guint       max_concurrent)
{
  g_autoptr(GError) error = NULL;
  SandboxBackend *backend = sandbox_backend_new ("bubblewrap", NULL, &error,
                                                 "state-directory", state_directory,
                                                 "max-concurrent-commands", max_concurrent,
                                                 NULL);

  check (error, "backend");
  floor_follows_guest_ids (backend);
  return backend;
}

static char *
prewarm_small (SandboxBackend *backend,
               const char     *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new (name);
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello, sandbox\n", 15);
  char *key;

  sandbox_template_add_file (template_, "hello.txt", hello, &error);
  check (error, "template");
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  check (error, "prewarm");
  return key;
}

static double
api_run (SandboxSession *session,
         SandboxCommand *command)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = NULL;
  double start = bench_now_us ();

  result = sandbox_session_run (session, command, NULL, &error);
  check (error, "run");
  if (sandbox_result_get_exit_status (result) != 0)
    g_error ("run: exit status %d", sandbox_result_get_exit_status (result));
  return bench_now_us () - start;
}

static double
floor_run (const char         *workspace,
           const char * const *argv)
{
  double start = bench_now_us ();
  int status = bench_floor_run (workspace, argv, NULL, NULL);

  if (status != 0)
    g_error ("raw bwrap %s: wait status %d", argv[0], status);
  return bench_now_us () - start;
}

static gboolean
section_enabled (const char *name)
{
  /* "many" takes minutes: only when asked for. */
  if (only == NULL)
    return !g_str_equal (name, "many");
  return g_str_equal (only, name);
}

static char *state_root;

/* 1. Command round trip */

typedef struct
{
  guint pending;
  GMainLoop *loop;
} Batch;

static void
on_batch_run_done (GObject      *source,
                   GAsyncResult *result,
                   gpointer      data)
{
  Batch *batch = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) run = sandbox_session_run_finish (SANDBOX_SESSION (source), result, &error);

  check (error, "run async");
  if (--batch->pending == 0)
    g_main_loop_quit (batch->loop);
}

static double
api_batch (SandboxSession *session,
           SandboxCommand *command,
           guint           n)
{
  Batch batch = { n, g_main_loop_new (NULL, FALSE) };
  double start = bench_now_us ();

  for (guint i = 0; i < n; i++)
    sandbox_session_run_async (session, command, NULL, on_batch_run_done, &batch);
  g_main_loop_run (batch.loop);
  g_main_loop_unref (batch.loop);
  return bench_now_us () - start;
}

typedef struct
{
  const char *workspace;
  const char * const *argv;
} FloorJob;

static gpointer
floor_job (gpointer data)
{
  FloorJob *job = data;

  if (bench_floor_run (job->workspace, job->argv, NULL, NULL) != 0)
    g_error ("raw bwrap: failed");
  return NULL;
}

static double
floor_batch (const char         *workspace,
             const char * const *argv,
             guint               n)
{
  FloorJob job = { workspace, argv };
  GThread *threads[64];
  double start = bench_now_us ();

  for (guint i = 0; i < n; i++)
    threads[i] = g_thread_new ("bench-floor", floor_job, &job);
  for (guint i = 0; i < n; i++)
    g_thread_join (threads[i]);
  return bench_now_us () - start;
}

static double
reference_run (const char         *workspace,
               const char * const *argv)
{
  double start = bench_now_us ();
  int status = bench_floor_run_reference (workspace, argv);

  if (status != 0)
    g_error ("raw bwrap (reference argv) %s: wait status %d", argv[0], status);
  return bench_now_us () - start;
}

/* Long enough for a cold command's sandbox to be torn down and reaped
 * after it has completed (the stub reports first; see docs/benchmarks.md),
 * so that its CPU is in its own window, not the next operation's. */
#define COLD_SETTLE_US (20 * 1000)

/* A hot session: each command comes after a pause (an agent's think time),
 * by which the sandbox its previous command left ready has finished its
 * setup; the floor gets the same pause. Measured: the command alone. */
#define THINK_TIME_US (60 * 1000)

/* The floor of any ready sandbox: raw bwrap with the reference's argv,
 * started before the think time, its command a shell waiting for a line
 * and then exec'ing true. Measured: from the line to the reaped bwrap. */
static double
prestarted_run (const char *workspace,
                gboolean    reference)
{
  const char *waiting_argv[] = { "/bin/sh", "-c", "read -r _ && exec /usr/bin/true", NULL };
  g_autoptr(GBytes) line = g_bytes_new_static ("\n", 1);
  BenchFloorChild child;
  double start;
  int status;

  if (!(reference ? bench_floor_start_reference : bench_floor_start) (workspace, waiting_argv, &child))
    g_error ("raw bwrap (started ahead): could not start");
  g_usleep (THINK_TIME_US);
  start = bench_now_us ();
  status = bench_floor_finish (&child, line);
  if (status != 0)
    g_error ("raw bwrap (started ahead): wait status %d", status);
  return bench_now_us () - start;
}

/* prestarted_run()'s wall time into @wall, and the tree's CPU over the
 * whole of it (the bwrap started ahead included) into @cpu. */
static void
prestarted_measure (const char *workspace,
                    gboolean    reference,
                    Samples    *wall,
                    Samples    *cpu)
{
  BenchCpu window;

  bench_cpu_start (&window);
  samples_add (wall, prestarted_run (workspace, reference));
  samples_add (cpu, bench_cpu_stop (&window));
}

/* A cold session is no slower with ready sandboxes on: a session's first
 * command, and commands back to back (each comes within the launch delay of
 * the last, so its sandbox is launched when it is taken), on a default
 * backend against one without ready sandboxes, alternated. */
static void
bench_command_cold_default (void)
{
  g_autofree char *state = g_build_filename (state_root, "command-cold", NULL);
  g_autoptr(SandboxBackend) with_ready = new_backend (state, 8);
  g_autoptr(SandboxBackend) without = new_backend_with_ready (state, 8, 0, "auto");
  g_autofree char *key = prewarm_small (with_ready, "bench-command-cold");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxCommand) true_command = sandbox_command_new ("/usr/bin/true");
  g_autoptr(Samples) first_ready = samples_new (), first_none = samples_new ();
  g_autoptr(Samples) next_ready = samples_new (), next_none = samples_new ();
  g_autoptr(Samples) first_ready_cpu = samples_new (), first_none_cpu = samples_new ();
  g_autoptr(Samples) next_ready_cpu = samples_new (), next_none_cpu = samples_new ();
  guint rounds = quick ? 8 : 30;
  double ratio;

  g_printerr ("cold session: first and back-to-back commands, ready sandboxes on and off "
              "(%u rounds)\n", rounds);
  for (guint i = 0; i < rounds; i++)
    for (guint j = 0; j < 2; j++)
      {
        gboolean ready = (j == 0) == (i % 2 == 0);
        g_autoptr(SandboxHandle) handle = NULL;
        SandboxSession *session;
        BenchCpu cpu;

        /* The last session's delete may leave a sandbox being torn down
         * (a ready one it killed): not this session's CPU. */
        g_usleep (COLD_SETTLE_US);
        handle = create_session (ready ? with_ready : without, key, policy);
        session = sandbox_handle_get_session (handle);

        /* Each window closes when its command completes, since the next
         * comes at once: the first's sandbox's teardown lands in the
         * next's window, and the next's in the delete, outside both. */
        bench_cpu_start (&cpu);
        samples_add (ready ? first_ready : first_none, api_run (session, true_command));
        samples_add (ready ? first_ready_cpu : first_none_cpu, bench_cpu_stop (&cpu));
        bench_cpu_start (&cpu);
        samples_add (ready ? next_ready : next_none, api_run (session, true_command));
        samples_add (ready ? next_ready_cpu : next_none_cpu, bench_cpu_stop (&cpu));
        delete_session (handle);
      }
  ratio = samples_median (first_ready) / samples_median (first_none);
  add_row ("cold: a session's first command, ready sandboxes on vs off",
           format_time (first_ready), format_time (first_none), g_strdup_printf ("%.3fx", ratio),
           "<= 1.10x (no slower than without)", TRUE, ratio <= 1.10);
  set_row_cpu (bench_cpu_format_pair (first_ready_cpu, first_none_cpu));
  ratio = samples_median (next_ready) / samples_median (next_none);
  add_row ("cold: the next command at once, ready sandboxes on vs off",
           format_time (next_ready), format_time (next_none), g_strdup_printf ("%.3fx", ratio),
           "<= 1.10x (no slower than without)", TRUE, ratio <= 1.10);
  set_row_cpu (bench_cpu_format_pair (next_ready_cpu, next_none_cpu));
}

static void
bench_command_hot (void)
{
  g_autofree char *state = g_build_filename (state_root, "command-hot", NULL);
  g_autoptr(SandboxBackend) backend = new_backend (state, 8);
  g_autofree char *key = prewarm_small (backend, "bench-command-hot");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = create_session (backend, key, policy);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autofree char *workspace = workspace_of (state, handle);
  g_autoptr(SandboxCommand) true_command = sandbox_command_new ("/usr/bin/true");
  const char *true_argv[] = { "/usr/bin/true", NULL };
  g_autoptr(Samples) hot = samples_new (), reference = samples_new ();
  g_autoptr(Samples) prestarted = samples_new (), prestarted_driver = samples_new ();
  g_autoptr(Samples) hot_cpu = samples_new ();
  g_autoptr(Samples) prestarted_driver_cpu = samples_new ();
  guint rounds = quick ? 15 : 60;
  double ratio;

  g_printerr ("hot session: run true after %u ms think time (%u rounds)\n",
              THINK_TIME_US / 1000, rounds);
  api_run (session, true_command);   /* the session has run a command */
  reference_run (workspace, true_argv);
  for (guint i = 0; i < rounds; i++)
    {
      g_usleep (THINK_TIME_US);
      for (guint k = 0; k < 2; k++)
        {
          BenchCpu cpu;

          if ((k == 0) != (i % 2 == 0))
            {
              samples_add (reference, reference_run (workspace, true_argv));
              continue;
            }
          /* After the reference, the think time; after a hot command, its
           * window has had it. */
          if (k == 1)
            g_usleep (THINK_TIME_US);
          bench_cpu_start (&cpu);
          samples_add (hot, api_run (session, true_command));
          /* A hot command's CPU is also its sandbox's teardown and the
           * setup of the next one, which it queued: they run in the think
           * time after it, counted with it. */
          g_usleep (THINK_TIME_US);
          samples_add (hot_cpu, bench_cpu_stop (&cpu));
        }
      samples_add (prestarted, prestarted_run (workspace, TRUE));
      prestarted_measure (workspace, FALSE, prestarted_driver, prestarted_driver_cpu);
    }
  ratio = samples_median (hot) / samples_median (reference);
  add_row ("hot session: run true (ready sandbox)", format_time (hot), format_time (reference),
           g_strdup_printf ("%.3fx", ratio), "<= 0.3x raw bwrap, reference argv", TRUE,
           ratio <= 0.3);
  set_row_cpu (bench_cpu_format_pair (hot_cpu, NULL));
  ratio = samples_median (prestarted) / samples_median (reference);
  add_row ("raw bwrap started ahead, reference argv: answer true", format_time (prestarted),
           format_time (reference), g_strdup_printf ("%.3fx", ratio),
           "informational: the floor of any ready sandbox", FALSE, TRUE);
  set_row_cpu (g_strdup ("n/a"));
  ratio = samples_median (prestarted_driver) / samples_median (reference);
  add_row ("raw bwrap started ahead, driver argv: answer true", format_time (prestarted_driver),
           format_time (reference), g_strdup_printf ("%.3fx", ratio),
           "informational: the same with the hardening", FALSE, TRUE);
  set_row_cpu (bench_cpu_format_pair (prestarted_driver_cpu, NULL));
  ratio = samples_median (hot) / samples_median (prestarted_driver);
  add_row ("hot session vs raw bwrap started ahead, driver argv", format_time (hot),
           format_time (prestarted_driver), g_strdup_printf ("%.3fx", ratio),
           "informational: the library's own part", FALSE, TRUE);
  set_row_cpu (bench_cpu_format_pair (hot_cpu, prestarted_driver_cpu));
  delete_session (handle);
}

/* An allow-all command's network: the session's namespace, joined to the
 * outside by one slirp4netns per session
 * (drivers/bubblewrap/sandbox-bubblewrap-session-net.c), against a
 * deny-all one's, cold (every command starts bwrap; the session's first
 * command, run before the rounds, started slirp4netns) and hot (a ready
 * sandbox is up before its command). Alternating, in one run. */
static void
bench_command_allow_all (void)
{
  g_autofree char *state = g_build_filename (state_root, "command-allow-all", NULL);
  g_autoptr(SandboxBackend) cold_backend = new_backend_with_ready (state, 8, 0, "auto");
  g_autoptr(SandboxBackend) hot_backend = new_backend_with_ready (state, 8, 8, "auto");
  g_autofree char *key = prewarm_small (cold_backend, "bench-command-allow-all");
  g_autoptr(SandboxNetworkPolicy) deny_all = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxNetworkPolicy) allow_all = sandbox_network_policy_new_allow_all ();
  SandboxHandle *handles[4] = {
    create_session (cold_backend, key, deny_all), create_session (cold_backend, key, allow_all),
    create_session (hot_backend, key, deny_all), create_session (hot_backend, key, allow_all),
  };
  g_autoptr(SandboxCommand) true_command = sandbox_command_new ("/usr/bin/true");
  Samples *samples[4] = { samples_new (), samples_new (), samples_new (), samples_new () };
  static const char * const names[2] = { "cold", "hot" };
  guint rounds = quick ? 15 : 60;

  g_printerr ("allow-all vs deny-all: run true, cold and hot (%u rounds)\n", rounds);
  for (guint i = 0; i < G_N_ELEMENTS (handles); i++)
    api_run (sandbox_handle_get_session (handles[i]), true_command);
  for (guint round = 0; round < rounds; round++)
    for (guint i = 0; i < G_N_ELEMENTS (handles); i++)
      {
        /* Think time, so a ready sandbox (and its slirp4netns) is up. */
        g_usleep (THINK_TIME_US);
        samples_add (samples[i], api_run (sandbox_handle_get_session (handles[i]),
                                          true_command));
      }
  for (guint mode = 0; mode < 2; mode++)
    {
      Samples *deny = samples[2 * mode], *allow = samples[2 * mode + 1];
      double ratio = samples_median (allow) / samples_median (deny);
      g_autofree char *name = g_strdup_printf ("%s: run true, allow-all (slirp4netns) vs deny-all",
                                               names[mode]);

      add_row (name, format_time (allow), format_time (deny), g_strdup_printf ("%.3fx", ratio),
               "informational: the cost of allow-all's network", FALSE, TRUE);
    }
  for (guint i = 0; i < G_N_ELEMENTS (handles); i++)
    {
      delete_session (handles[i]);
      g_object_unref (handles[i]);
      samples_free (samples[i]);
    }
}

/* Issue 36, item 4: an _async entry point returns at once. Eight sessions,
 * each driven by a thread of its own with its own main context (as eight
 * UIs or workers would), issue their run_async calls in a row, all
 * together; each call's return is a sample. */
#define ASYNC_SESSIONS 8

typedef struct
{
  SandboxSession *session;
  guint calls;
  gint *go;
  Samples *returns;   /* this thread's: wall time of each call */
  Samples *cpu;       /* and the CPU time this thread spent in it */
} AsyncBurst;

static double
thread_cpu_us (void)
{
  struct timespec now;

  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e6 + now.tv_nsec / 1e3;
}

static void
async_run_done_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      data)
{
  guint *pending = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) run = sandbox_session_run_finish (SANDBOX_SESSION (source), result,
                                                             &error);

  check (error, "run_async");
  (*pending)--;
}

static gpointer
async_burst_thread (gpointer data)
{
  AsyncBurst *burst = data;
  g_autoptr(GMainContext) context = g_main_context_new ();
  guint pending = 0;

  g_main_context_push_thread_default (context);
  while (!g_atomic_int_get (burst->go))
    g_thread_yield ();
  for (guint i = 0; i < burst->calls; i++)
    {
      g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/true");
      double cpu_started = thread_cpu_us ();
      gint64 started = bench_now_us ();

      sandbox_session_run_async (burst->session, command, NULL, async_run_done_cb, &pending);
      samples_add (burst->returns, bench_now_us () - started);
      samples_add (burst->cpu, thread_cpu_us () - cpu_started);
      pending++;
    }
  while (pending > 0)
    g_main_context_iteration (context, TRUE);
  g_main_context_pop_thread_default (context);
  return NULL;
}

static void
bench_async_returns (void)
{
  g_autofree char *state = g_build_filename (state_root, "async", NULL);
  g_autoptr(SandboxBackend) backend = new_backend (state, 16);
  g_autofree char *key = prewarm_small (backend, "bench-async");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(Samples) returns = samples_new (), cpu = samples_new ();
  SandboxHandle *handles[ASYNC_SESSIONS];
  AsyncBurst bursts[ASYNC_SESSIONS];
  GThread *threads[ASYNC_SESSIONS];
  guint rounds = quick ? 2 : 6;
  gint go = 0;
  double slowest = 0;

  g_printerr ("command: run_async returning, %u sessions launching together (%u rounds)\n",
              ASYNC_SESSIONS, rounds);
  for (guint i = 0; i < ASYNC_SESSIONS; i++)
    handles[i] = create_session (backend, key, policy);
  for (guint round = 0; round < rounds; round++)
    {
      g_atomic_int_set (&go, 0);
      for (guint i = 0; i < ASYNC_SESSIONS; i++)
        {
          bursts[i] = (AsyncBurst) { sandbox_handle_get_session (handles[i]), 11, &go,
                                     samples_new (), samples_new () };
          threads[i] = g_thread_new ("bench-async", async_burst_thread, &bursts[i]);
        }
      g_atomic_int_set (&go, 1);
      for (guint i = 0; i < ASYNC_SESSIONS; i++)
        {
          g_thread_join (threads[i]);
          for (guint j = 0; j < bursts[i].returns->values->len; j++)
            {
              samples_add (returns, g_array_index (bursts[i].returns->values, double, j));
              samples_add (cpu, g_array_index (bursts[i].cpu->values, double, j));
            }
          samples_free (bursts[i].returns);
          samples_free (bursts[i].cpu);
        }
    }
  for (guint j = 0; j < returns->values->len; j++)
    slowest = MAX (slowest, g_array_index (returns->values, double, j));
  /* On a loaded machine the wall time includes the caller's preemption;
   * the CPU time it spent in the call does not. */
  add_row ("run_async returns, 8 sessions launching 11 commands each together",
           format_time (returns), g_strdup ("-"),
           g_strdup_printf ("slowest %.2f ms; CPU in the call %.1f us (p95 %.1f)", slowest / 1000,
                            samples_median (cpu), samples_p95 (cpu)),
           "<= 0.2 ms, p95 of the wall time", TRUE, samples_p95 (returns) <= 200);
  for (guint i = 0; i < ASYNC_SESSIONS; i++)
    {
      delete_session (handles[i]);
      g_object_unref (handles[i]);
    }
}

/* The cold rounds' operations, in the order an even round runs them (an
 * odd round reverses it, so drift hits both sides alike). */
typedef enum
{
  COLD_API_TRUE,
  COLD_RAW_TRUE,
  COLD_REF_TRUE,
  COLD_API_CAT,
  COLD_RAW_CAT,
  COLD_LAYERED_TRUE,
  COLD_N_OPS
} ColdOp;

typedef struct
{
  SandboxSession *session, *layered;
  SandboxCommand *true_command, *cat_command;
  const char *workspace;
  Samples *wall[COLD_N_OPS], *cpu[COLD_N_OPS];
} ColdRounds;

static double
cold_op_run (ColdRounds *c,
             ColdOp      op)
{
  const char *true_argv[] = { "/usr/bin/true", NULL };
  const char *cat_argv[] = { "/usr/bin/cat", "hello.txt", NULL };

  switch (op)
    {
    case COLD_API_TRUE: return api_run (c->session, c->true_command);
    case COLD_RAW_TRUE: return floor_run (c->workspace, true_argv);
    case COLD_REF_TRUE: return reference_run (c->workspace, true_argv);
    case COLD_API_CAT: return api_run (c->session, c->cat_command);
    case COLD_RAW_CAT: return floor_run (c->workspace, cat_argv);
    case COLD_LAYERED_TRUE: return api_run (c->layered, c->true_command);
    case COLD_N_OPS: default: g_assert_not_reached ();
    }
}

/* One operation: its wall time, and the whole tree's CPU over it and its
 * aftermath. */
static void
cold_op_measure (ColdRounds *c,
                 ColdOp      op)
{
  BenchCpu cpu;

  bench_cpu_start (&cpu);
  samples_add (c->wall[op], cold_op_run (c, op));
  g_usleep (COLD_SETTLE_US);
  samples_add (c->cpu[op], bench_cpu_stop (&cpu));
}

/* Adds a row comparing @op with @floor_op, wall time and CPU. */
static void
cold_row (ColdRounds *c,
          const char *name,
          ColdOp      op,
          ColdOp      floor_op,
          const char *target,
          gboolean    judged,
          double      limit)
{
  double ratio = samples_median (c->wall[op]) / samples_median (c->wall[floor_op]);

  add_row (name, format_time (c->wall[op]), format_time (c->wall[floor_op]),
           g_strdup_printf ("%.3fx", ratio), target, judged, ratio <= limit);
  set_row_cpu (bench_cpu_format_pair (c->cpu[op],
                                      floor_op == COLD_REF_TRUE ? NULL : c->cpu[floor_op]));
}

static void
bench_command (void)
{
  g_autofree char *state = g_build_filename (state_root, "command", NULL);
  /* Cold: every command starts its bwrap, as without ready sandboxes. A
   * copied session, whose workspace the floor binds exactly as the driver
   * does; the layered one (the default) is measured against it. */
  g_autoptr(SandboxBackend) backend = new_backend_with_ready (state, 8, 0, "copy");
  g_autoptr(SandboxBackend) layered_backend = new_backend_with_ready (state, 8, 0, "auto");
  g_autofree char *key = prewarm_small (backend, "bench-command");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = create_session (backend, key, policy);
  g_autoptr(SandboxHandle) layered_handle = create_session (layered_backend, key, policy);
  SandboxSession *session = sandbox_handle_get_session (handle);
  SandboxSession *layered = sandbox_handle_get_session (layered_handle);
  g_autofree char *workspace = workspace_of (state, handle);
  g_autoptr(SandboxCommand) true_command = sandbox_command_new ("/usr/bin/true");
  g_autoptr(SandboxCommand) cat_command = sandbox_command_new ("/usr/bin/cat");
  const char *true_argv[] = { "/usr/bin/true", NULL };
  g_autoptr(Samples) api_par = samples_new (), raw_par = samples_new ();
  ColdRounds c = { session, layered, true_command, cat_command, workspace };
  guint rounds = quick ? 15 : 60;
  guint par_rounds = quick ? 5 : 20;
  double ratio;

  g_printerr ("command round trip (%u rounds, 8 concurrent: %u rounds)\n", rounds, par_rounds);
  sandbox_command_add_arg (cat_command, "hello.txt");
  for (guint op = 0; op < COLD_N_OPS; op++)
    {
      c.wall[op] = samples_new ();
      c.cpu[op] = samples_new ();
    }

  /* Warm up both paths. */
  for (guint i = 0; i < 3; i++)
    {
      api_run (session, true_command);
      api_run (layered, true_command);
      floor_run (workspace, true_argv);
    }

  for (guint i = 0; i < rounds; i++)
    for (guint k = 0; k < COLD_N_OPS; k++)
      cold_op_measure (&c, i % 2 == 0 ? k : COLD_N_OPS - 1 - k);

  cold_row (&c, "cold: run true, hardened, vs reference argv", COLD_API_TRUE, COLD_REF_TRUE,
            "<= 1.05x raw bwrap, reference argv", TRUE, 1.05);
  cold_row (&c, "cold: run true, layered session vs copied", COLD_LAYERED_TRUE, COLD_API_TRUE,
            "informational: entering the keeper's namespaces", FALSE, G_MAXDOUBLE);
  cold_row (&c, "raw bwrap, driver argv, vs reference argv", COLD_RAW_TRUE, COLD_REF_TRUE,
            "informational: the hardening's own cost", FALSE, G_MAXDOUBLE);
  cold_row (&c, "run /usr/bin/true, sequential", COLD_API_TRUE, COLD_RAW_TRUE,
            "<= 1.05x raw bwrap", TRUE, 1.05);
  cold_row (&c, "run cat hello.txt, sequential", COLD_API_CAT, COLD_RAW_CAT,
            "<= 1.05x raw bwrap", TRUE, 1.05);
  for (guint op = 0; op < COLD_N_OPS; op++)
    {
      samples_free (c.wall[op]);
      samples_free (c.cpu[op]);
    }

  for (guint i = 0; i < par_rounds; i++)
    {
      if (i % 2 == 0)
        {
          samples_add (api_par, api_batch (session, true_command, 8));
          samples_add (raw_par, floor_batch (workspace, true_argv, 8));
        }
      else
        {
          samples_add (raw_par, floor_batch (workspace, true_argv, 8));
          samples_add (api_par, api_batch (session, true_command, 8));
        }
    }

  {
    double api_rate = 8 / (samples_median (api_par) / 1e6);
    double raw_rate = 8 / (samples_median (raw_par) / 1e6);

    ratio = api_rate / raw_rate;
    add_row ("8 concurrent /usr/bin/true: throughput",
             g_strdup_printf ("%.0f cmd/s (batch p95 %.1f ms)", api_rate, samples_p95 (api_par) / 1000),
             g_strdup_printf ("%.0f cmd/s (batch p95 %.1f ms)", raw_rate, samples_p95 (raw_par) / 1000),
             g_strdup_printf ("%.3fx", ratio), ">= 0.95x raw bwrap", TRUE, ratio >= 0.95);
  }

  delete_session (layered_handle);
  delete_session (handle);
}

/* 2. Workspace file I/O */

static void
bench_io (void)
{
  g_autofree char *state = g_build_filename (state_root, "io", NULL);
  g_autoptr(SandboxBackend) backend = new_backend (state, 8);
  g_autofree char *key = prewarm_small (backend, "bench-io");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = create_session (backend, key, policy);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autofree char *workspace = workspace_of (state, handle);
  g_autoptr(Samples) api_read = samples_new (), api_write = samples_new ();
  g_autoptr(Samples) bwrap_read = samples_new (), bwrap_write = samples_new ();
  guint8 *data = g_malloc (4096);
  g_autoptr(GBytes) contents = NULL;
  const char *cat_argv[] = { "/usr/bin/cat", "data.bin", NULL };
  const char *tee_argv[] = { "/usr/bin/tee", "out.bin", NULL };
  guint rounds = quick ? 10 : 40;
  guint per_round = 50;
  double read_median, write_median, read_ratio, write_ratio;

  g_printerr ("workspace file I/O, 4 KiB (%u rounds x %u API calls, 1 bwrap each)\n", rounds, per_round);
  for (guint i = 0; i < 4096; i++)
    data[i] = (guint8) g_random_int ();
  contents = g_bytes_new_take (data, 4096);

  {
    g_autoptr(GError) error = NULL;

    sandbox_session_write_bytes (session, "data.bin", contents, NULL, &error);
    check (error, "write");
  }

  for (guint i = 0; i < rounds; i++)
    {
      g_autoptr(GByteArray) output = g_byte_array_new ();
      double start;

      for (guint j = 0; j < per_round; j++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(GBytes) read = NULL;

          start = bench_now_us ();
          read = sandbox_session_read_bytes (session, "data.bin", NULL, &error);
          samples_add (api_read, bench_now_us () - start);
          check (error, "read");
          g_assert (g_bytes_get_size (read) == 4096);

          start = bench_now_us ();
          sandbox_session_write_bytes (session, "out.bin", contents, NULL, &error);
          samples_add (api_write, bench_now_us () - start);
          check (error, "write");
        }

      start = bench_now_us ();
      if (bench_floor_run (workspace, cat_argv, NULL, output) != 0 || output->len != 4096)
        g_error ("cat in bwrap failed");
      samples_add (bwrap_read, bench_now_us () - start);

      start = bench_now_us ();
      if (bench_floor_run (workspace, tee_argv, contents, NULL) != 0)
        g_error ("tee in bwrap failed");
      samples_add (bwrap_write, bench_now_us () - start);
    }

  read_median = samples_median (api_read);
  write_median = samples_median (api_write);
  read_ratio = samples_median (bwrap_read) / read_median;
  write_ratio = samples_median (bwrap_write) / write_median;

  add_row ("read_bytes 4 KiB", format_time (api_read), NULL, NULL, "<= 20 us", TRUE, read_median <= 20);
  add_row ("read_bytes 4 KiB vs cat in bwrap", format_time (api_read), format_time (bwrap_read),
           g_strdup_printf ("%.0fx faster", read_ratio), ">= 50x faster", TRUE, read_ratio >= 50);
  add_row ("write_bytes 4 KiB", format_time (api_write), NULL, NULL, "<= 200 us", TRUE, write_median <= 200);
  add_row ("write_bytes 4 KiB vs tee in bwrap", format_time (api_write), format_time (bwrap_write),
           g_strdup_printf ("%.0fx faster", write_ratio), ">= 50x faster", TRUE, write_ratio >= 50);

  delete_session (handle);
}

/* 3. Gateway */

typedef struct
{
  const char *socket_path;   /* NULL: direct to the upstream */
  guint16 port;
  const char *request;
} Target;

static gpointer
target_open (gpointer data)
{
  Target *target = data;

  return GINT_TO_POINTER (target->socket_path != NULL ? bench_client_connect_unix (target->socket_path)
                                                      : bench_client_connect_tcp (target->port));
}

static gboolean
target_get (gpointer connection,
            gpointer data)
{
  Target *target = data;

  return bench_client_get (GPOINTER_TO_INT (connection), target->request, strlen (target->request));
}

static void
target_close (gpointer connection)
{
  close (GPOINTER_TO_INT (connection));
}

static double
throughput (const char *socket_path,
            guint16     port,
            const char *request,
            guint       n_clients,
            double      seconds)
{
  Target target = { socket_path, port, request };
  BenchRateClient client = { target_open, target_get, target_close, &target };

  return bench_rate (&client, n_clients, seconds);
}

/* throughput()'s rate into @rate, and the process's CPU per request over
 * it into @cpu. */
static void
measure_throughput (const char *socket_path,
                    guint16     port,
                    const char *request,
                    double      seconds,
                    Samples    *rate,
                    Samples    *cpu)
{
  double cpu_start = bench_cpu_process_us ();
  double start = bench_now_us ();
  double per_second = throughput (socket_path, port, request, 16, seconds);
  double requests = per_second * (bench_now_us () - start) / 1e6;

  samples_add (rate, per_second);
  samples_add (cpu, (bench_cpu_process_us () - cpu_start) / MAX (requests, 1));
}

typedef struct
{
  const char *socket_path;
  const char *relay_path;      /* the minimal relay, one thread */
  const char *relay2_path;     /* the same on two threads */
  guint16 port;
  GMainContext *app_context;
  gboolean done;
  guint64 audited;
} GatewayRun;

/* One timed GET on @fd, added to @samples, and the CPU the process spent
 * meanwhile to @cpu: the gateway, the relays and the upstream are threads
 * of this process, so that is the whole request's, client and upstream
 * included on both sides. Work a request leaves for after its response
 * (libsoup's and libcurl's completion, the audit event) lands in the next
 * request's window. */
static void
time_get (int         fd,
          const char *request,
          Samples    *samples,
          Samples    *cpu,
          const char *what)
{
  double cpu_start = bench_cpu_process_us ();
  double start = bench_now_us ();

  if (!bench_client_get (fd, request, strlen (request)))
    g_error ("%s request failed", what);
  samples_add (samples, bench_now_us () - start);
  samples_add (cpu, bench_cpu_process_us () - cpu_start);
}

static gpointer
gateway_measure (gpointer data)
{
  GatewayRun *run = data;
  g_autofree char *request = g_strdup_printf ("GET /data HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n\r\n", run->port);
  g_autoptr(Samples) gw = samples_new (), relay = samples_new (), direct = samples_new ();
  g_autoptr(Samples) gw_cpu = samples_new (), relay_cpu = samples_new (), direct_cpu = samples_new ();
  g_autoptr(Samples) gw_rate = samples_new (), relay_rate = samples_new (), direct_rate = samples_new ();
  g_autoptr(Samples) relay2_rate = samples_new ();
  g_autoptr(Samples) gw_rate_cpu = samples_new (), relay_rate_cpu = samples_new ();
  g_autoptr(Samples) direct_rate_cpu = samples_new (), relay2_rate_cpu = samples_new ();
  guint rounds = quick ? 10 : 40;
  guint per_round = 100;
  guint rate_rounds = quick ? 2 : 5;
  double seconds = quick ? 0.4 : 1.0;
  int gw_fd = bench_client_connect_unix (run->socket_path);
  int relay_fd = bench_client_connect_unix (run->relay_path);
  int direct_fd = bench_client_connect_tcp (run->port);
  double added, limit;

  g_printerr ("gateway GET, 1 KiB body (%u rounds x %u requests; 16 connections: %u rounds x %.1f s)\n",
              rounds, per_round, rate_rounds, seconds);

  for (guint i = 0; i < 200; i++)
    {
      bench_client_get (gw_fd, request, strlen (request));
      bench_client_get (relay_fd, request, strlen (request));
      bench_client_get (direct_fd, request, strlen (request));
    }

  for (guint i = 0; i < rounds; i++)
    for (guint j = 0; j < per_round; j++)
      {
        time_get (gw_fd, request, gw, gw_cpu, "gateway");
        time_get (relay_fd, request, relay, relay_cpu, "relay");
        time_get (direct_fd, request, direct, direct_cpu, "direct");
      }
  close (gw_fd);
  close (relay_fd);
  close (direct_fd);

  added = samples_median (gw) - samples_median (direct);
  limit = 1.5 * samples_median (direct) + 50;
  add_row ("gateway GET latency, 1 connection", format_time (gw), format_time (direct),
           g_strdup_printf ("%.2fx", samples_median (gw) / samples_median (direct)),
           "<= 1.5x direct + 50 us", TRUE, samples_median (gw) <= limit);
  set_row_cpu (bench_cpu_format_pair (gw_cpu, direct_cpu));
  add_row ("gateway added latency per request",
           g_strdup_printf ("%.1f us (limit %.1f)", added, limit - samples_median (direct)),
           NULL, NULL, "<= 60 us over direct (issue 20)", TRUE, added <= 60);
  set_row_cpu (g_strdup_printf ("%.1f us added", samples_median (gw_cpu) - samples_median (direct_cpu)));
  add_row ("minimal relay GET latency, 1 connection", format_time (relay), format_time (direct),
           g_strdup_printf ("%.2fx", samples_median (relay) / samples_median (direct)),
           "informational: a forwarder's floor", FALSE, TRUE);
  set_row_cpu (bench_cpu_format_pair (relay_cpu, direct_cpu));
  add_row ("minimal relay added latency per request",
           g_strdup_printf ("%.1f us", samples_median (relay) - samples_median (direct)),
           NULL, NULL, "", FALSE, TRUE);

  for (guint i = 0; i < rate_rounds; i++)
    {
      measure_throughput (run->socket_path, run->port, request, seconds, gw_rate, gw_rate_cpu);
      measure_throughput (run->relay_path, run->port, request, seconds, relay_rate, relay_rate_cpu);
      measure_throughput (run->relay2_path, run->port, request, seconds, relay2_rate,
                          relay2_rate_cpu);
      measure_throughput (NULL, run->port, request, seconds, direct_rate, direct_rate_cpu);
    }

  add_row ("gateway GET throughput, 16 connections",
           g_strdup_printf ("%.0f req/s (min %.0f)", samples_median (gw_rate), samples_quantile (gw_rate, 0)),
           g_strdup_printf ("%.0f req/s (min %.0f)", samples_median (direct_rate), samples_quantile (direct_rate, 0)),
           g_strdup_printf ("%.2fx", samples_median (gw_rate) / samples_median (direct_rate)),
           ">= 25,000 req/s", TRUE, samples_median (gw_rate) >= 25000);
  set_row_cpu (bench_cpu_format_pair (gw_rate_cpu, direct_rate_cpu));
  add_row ("minimal relay GET throughput, 16 connections",
           g_strdup_printf ("%.0f req/s (min %.0f)", samples_median (relay_rate), samples_quantile (relay_rate, 0)),
           g_strdup_printf ("%.0f req/s (min %.0f)", samples_median (direct_rate), samples_quantile (direct_rate, 0)),
           g_strdup_printf ("%.2fx", samples_median (relay_rate) / samples_median (direct_rate)),
           "informational: a forwarder's floor", FALSE, TRUE);
  set_row_cpu (bench_cpu_format_pair (relay_rate_cpu, direct_rate_cpu));
  add_row ("minimal relay on 2 threads, 16 connections",
           g_strdup_printf ("%.0f req/s (min %.0f)", samples_median (relay2_rate), samples_quantile (relay2_rate, 0)),
           g_strdup_printf ("%.0f req/s (min %.0f)", samples_median (direct_rate), samples_quantile (direct_rate, 0)),
           g_strdup_printf ("%.2fx", samples_median (relay2_rate) / samples_median (direct_rate)),
           "informational: a forwarder's floor", FALSE, TRUE);
  set_row_cpu (bench_cpu_format_pair (relay2_rate_cpu, direct_rate_cpu));
  add_row ("gateway throughput / minimal relay's", g_strdup_printf ("%.2fx", samples_median (gw_rate) / samples_median (relay_rate)),
           NULL, NULL, ">= 0.35x the minimal relay (issue 20)", TRUE,
           samples_median (gw_rate) >= 0.35 * samples_median (relay_rate));

  g_atomic_int_set (&run->done, TRUE);
  g_main_context_wakeup (run->app_context);
  return NULL;
}

static void
on_audit (SandboxGateway      *gateway,
          SandboxGatewayEvent *event,
          gpointer             data)
{
  GatewayRun *run = data;

  run->audited++;
}

static void
bench_gateway (void)
{
  g_autoptr(GError) error = NULL;
  guint16 port = bench_upstream_start ();
  g_autofree char *json = g_strdup_printf ("{\"allow\": [{\"origin\": \"http://127.0.0.1:%u\", "
                                           "\"headers\": {\"Authorization\": \"Bearer bench\"}}]}", port);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (json, &error);
  g_autoptr(SandboxGateway) gateway = NULL;
  g_autofree char *relay_directory = NULL;
  g_autofree char *relay_path = NULL;
  g_autofree char *relay2_path = NULL;
  GatewayRun run = { 0 };
  GThread *thread;

  check (error, "policy");
  gateway = sandbox_gateway_new (policy, &error);
  check (error, "gateway");

  /* The application's thread runs its main loop, as a real one does, and
   * receives the audit events. */
  g_signal_connect (gateway, "audit", G_CALLBACK (on_audit), &run);
  run.socket_path = sandbox_gateway_get_socket_path (gateway);
  relay_directory = g_dir_make_tmp ("sandbox-bench-relay-XXXXXX", &error);
  check (error, "relay directory");
  run.relay_path = relay_path = bench_relay_start (relay_directory, port, 1);
  run.relay2_path = relay2_path = bench_relay_start (relay_directory, port, 2);
  run.port = port;
  run.app_context = g_main_context_default ();
  thread = g_thread_new ("bench-gateway", gateway_measure, &run);
  while (!g_atomic_int_get (&run.done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (thread);
  while (g_main_context_iteration (NULL, FALSE))
    ;
  g_printerr ("  (%" G_GUINT64_FORMAT " audit events delivered to the application thread)\n", run.audited);
  /* The relay thread runs until the process exits; its socket goes now. */
  g_unlink (relay_path);
  g_unlink (relay2_path);
  g_rmdir (relay_directory);
}

/* A streamed answer: the guest's first byte against the upstream's own, and
 * (without --quick) a 60 s event stream through a rule that allows it. */
typedef struct
{
  const char *socket_path;
  guint16 port;
  guint16 long_port;
  gboolean done;
  GMainContext *app_context;
} StreamRun;

static gpointer
stream_measure (gpointer data)
{
  StreamRun *run = data;
  g_autoptr(Samples) gw = samples_new (), direct = samples_new ();
  guint rounds = quick ? 5 : 20;
  double first_byte, limit;
  guint n_events;

  g_printerr ("gateway streamed answer: first event after 10 ms, then one every 100 ms (%u rounds)\n", rounds);
  for (guint i = 0; i < rounds; i++)
    {
      if (!bench_sse_get (run->socket_path, run->port, &first_byte, &n_events) || n_events != 3)
        g_error ("stream bench: the gateway's answer was not whole");
      samples_add (gw, first_byte);
      if (!bench_sse_get (NULL, run->port, &first_byte, &n_events) || n_events != 3)
        g_error ("stream bench: the upstream's answer was not whole");
      samples_add (direct, first_byte);
    }
  limit = samples_median (direct) + 1000;
  add_row ("gateway streamed answer: time to first event", format_time (gw), format_time (direct),
           g_strdup_printf ("+%.0f us", samples_median (gw) - samples_median (direct)),
           "<= direct + 1 ms", TRUE, samples_median (gw) <= limit);

  if (!quick)
    {
      double start = bench_now_us ();
      gboolean whole = bench_sse_get (run->socket_path, run->long_port, &first_byte, &n_events);
      double seconds = (bench_now_us () - start) / 1e6;

      add_row ("60 s event stream through the gateway",
               g_strdup_printf ("%s: %u events in %.1f s", whole ? "whole" : "cut", n_events, seconds),
               NULL, NULL, "passes whole", TRUE, whole && n_events == 600);
    }

  g_atomic_int_set (&run->done, TRUE);
  g_main_context_wakeup (run->app_context);
  return NULL;
}

static void
bench_gateway_stream (void)
{
  g_autoptr(GError) error = NULL;
  guint16 port = bench_sse_upstream_start (10, 100, 3);
  guint16 long_port = bench_sse_upstream_start (10, 100, 600);
  g_autofree char *json = g_strdup_printf ("{\"allow\": [{\"origin\": \"http://127.0.0.1:%u\", \"stream\": true}, "
                                           "{\"origin\": \"http://127.0.0.1:%u\", "
                                           "\"stream\": {\"timeoutMs\": 120000}}]}", port, long_port);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_from_json (json, &error);
  g_autoptr(SandboxGateway) gateway = NULL;
  StreamRun run = { 0 };
  GThread *thread;

  check (error, "stream policy");
  gateway = sandbox_gateway_new (policy, &error);
  check (error, "stream gateway");
  run = (StreamRun) { sandbox_gateway_get_socket_path (gateway), port, long_port, FALSE,
                      g_main_context_default () };
  thread = g_thread_new ("bench-stream", stream_measure, &run);
  while (!g_atomic_int_get (&run.done))
    g_main_context_iteration (NULL, TRUE);
  g_thread_join (thread);
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* 4. Templates and sessions */

static void
write_tree (const char *directory,
            guint       n_files)
{
  g_mkdir_with_parents (directory, 0700);
  for (guint i = 0; i < n_files; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/file-%04u.txt", directory, i);
      char data[4096];

      for (guint j = 0; j < sizeof data; j++)
        data[j] = 'a' + (char) ((i * 7 + j) % 26);
      g_file_set_contents (path, data, sizeof data, NULL);
    }
}

static double
cp_tree (const char *from,
         const char *to)
{
  const char *argv[] = { "/bin/cp", "-r", from, to, NULL };
  double start = bench_now_us ();

  if (run_host (argv) != 0)
    g_error ("cp -r failed");
  return bench_now_us () - start;
}

/* Writes back what is dirty on @root's filesystem, so that no measurement
 * pays for the writeback of the one before it (on disk, each round's copies
 * leave megabytes of dirty pages; the next step would otherwise be slowed by
 * their flushing, whichever step that is). */
static void
settle (const char *root)
{
  int fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  if (fd < 0 || syncfs (fd) < 0)
    g_error ("syncfs %s: %s", root, g_strerror (errno));
  close (fd);
}

typedef double (*FloorFunc) (const char *from,
                             const char *to);

/* Imports @source as the template @name and prewarms it, and measures
 * @floor_func copying @source to @copy beside it. The disk's speed drifts
 * within seconds here: each pair of measurements alternates, by @round,
 * which side goes first. Returns the template's key. */
static char *
prewarm_beside (SandboxBackend *backend,
                const char     *root,
                const char     *source,
                const char     *name,
                const char     *copy,
                guint           round,
                FloorFunc       floor_func,
                Samples        *prewarm,
                Samples        *floor)
{
  g_autoptr(GFile) source_file = g_file_new_for_path (source);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new (name);
  g_autoptr(GError) error = NULL;
  char *key;
  double start;

  if (round % 2 == 1)
    {
      settle (root);
      samples_add (floor, floor_func (source, copy));
    }
  settle (root);
  start = bench_now_us ();
  sandbox_template_add_directory (template_, source_file, NULL, &error);
  check (error, "add_directory");
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  check (error, "prewarm");
  samples_add (prewarm, bench_now_us () - start);
  if (round % 2 == 0)
    {
      settle (root);
      samples_add (floor, floor_func (source, copy));
    }
  return key;
}

static void
bench_template_on (const char *label,
                   const char *root)
{
  g_autofree char *state = g_build_filename (root, "state", NULL);
  g_autofree char *source = g_build_filename (root, "tree", NULL);
  g_autoptr(SandboxBackend) backend = new_backend (state, 8);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(Samples) prewarm = samples_new (), create = samples_new ();
  g_autoptr(Samples) cp = samples_new (), cp_create = samples_new (), bwrap = samples_new ();
  g_autoptr(Samples) create_copy = samples_new ();
  g_autoptr(GPtrArray) copies = g_ptr_array_new_with_free_func (g_free);
  guint rounds = quick ? 4 : 12;
  const char *true_argv[] = { "/usr/bin/true", NULL };
  g_autofree char *name = NULL;
  double ratio;

  g_printerr ("template and session creation, 1,000 x 4 KiB on %s (%u rounds)\n", label, rounds);
  g_mkdir_with_parents (root, 0700);
  write_tree (source, 1000);

  for (guint i = 0; i < rounds; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SandboxHandle) handle = NULL;
      g_autofree char *key = NULL;
      g_autofree char *copy = g_strdup_printf ("%s/copy-%u", root, i);
      g_autofree char *copy2 = g_strdup_printf ("%s/copy-create-%u", root, i);
      g_autofree char *data = NULL;
      g_autofree char *workspace = NULL;
      double start;

      /* A fresh name each round: prewarm is content-addressed and would
       * reuse the template otherwise. */
      g_free (name);
      name = g_strdup_printf ("bench-tree-%u-%d", i, (int) getpid ());

      key = prewarm_beside (backend, root, source, name, copy, i, cp_tree, prewarm, cp);

      data = template_data_of (state, key);
      if (i % 2 == 1)
        {
          settle (root);
          samples_add (cp_create, cp_tree (data, copy2));
        }

      settle (root);
      start = bench_now_us ();
      handle = create_session (backend, key, policy);
      samples_add (create, bench_now_us () - start);

      if (i % 2 == 0)
        {
          settle (root);
          samples_add (cp_create, cp_tree (data, copy2));
        }

      workspace = workspace_of (state, handle);
      samples_add (bwrap, floor_run (workspace, true_argv));

      delete_session (handle);
      /* Removed after the rounds: on an ext4 without a journal (this
       * VM's disk), a create in a block group skips, one by one, every
       * inode deleted there in the last minute (find_inode_bit() and
       * recently_deleted(): 55 % of a prewarm's CPU in perf), so the
       * side that creates where the last round deleted paid up to 20x. */
      g_ptr_array_add (copies, g_steal_pointer (&copy));
      g_ptr_array_add (copies, g_steal_pointer (&copy2));
    }
  for (guint i = 0; i < copies->len; i++)
    remove_tree (g_ptr_array_index (copies, i));

  for (guint i = 0; i < create->values->len; i++)
    samples_add (create_copy, g_array_index (create->values, double, i) - samples_median (bwrap));

  ratio = samples_median (prewarm) / samples_median (cp);
  add_row (g_strdup_printf ("prewarm 1,000 x 4 KiB (%s)", label), format_time (prewarm), format_time (cp),
           g_strdup_printf ("%.2fx", ratio), "<= 1.2x cp -r", TRUE, ratio <= 1.2);
  ratio = samples_median (create) / samples_median (cp_create);
  add_row (g_strdup_printf ("create, total (%s)", label), format_time (create), format_time (cp_create),
           g_strdup_printf ("%.2fx", ratio), "informational", FALSE, TRUE);
  ratio = samples_median (create_copy) / samples_median (cp_create);
  add_row (g_strdup_printf ("create - one bwrap round trip (%s)", label), format_time (create_copy),
           format_time (cp_create), g_strdup_printf ("%.2fx", ratio), "<= 1.2x cp -r", TRUE, ratio <= 1.2);
}

/* A big tree: @n_files files of @file_size bytes each, real data. */
static void
write_big_tree (const char *directory,
                guint       n_files,
                gsize       file_size)
{
  g_autofree guint8 *data = g_malloc (file_size);

  g_mkdir_with_parents (directory, 0700);
  for (guint i = 0; i < n_files; i++)
    {
      g_autofree char *path = g_strdup_printf ("%s/big-%02u.bin", directory, i);
      g_autoptr(GError) error = NULL;

      for (gsize j = 0; j < file_size; j++)
        data[j] = (guint8) (j * 131 + i * 7 + (j >> 12));
      g_file_set_contents (path, (const char *) data, file_size, &error);
      check (error, "write big tree");
    }
}

/* What prewarm is measured against: copying the tree and hashing it, the
 * two things a content-addressed store does with every byte. */
static double
cp_and_hash_tree (const char *from,
                  const char *to)
{
  g_autofree char *script = g_strdup_printf ("cp -r '%s' '%s' && find '%s' -type f -exec "
                                             "sha256sum {} + >/dev/null", from, to, from);
  const char *argv[] = { "/bin/sh", "-c", script, NULL };
  double start = bench_now_us ();

  if (run_host (argv) != 0)
    g_error ("cp -r + sha256sum failed");
  return bench_now_us () - start;
}

/* Prewarm of a big tree (issue 17 item 2: import streams, and stores by
 * reading every file again, checked against its digest) against cp -r plus
 * sha256sum of the same tree, alternating which goes first. */
static void
bench_big_prewarm_on (const char *label,
                      const char *root)
{
  g_autofree char *state = g_build_filename (root, "big-state", NULL);
  g_autofree char *source = g_build_filename (root, "big-tree", NULL);
  g_autoptr(SandboxBackend) backend = new_backend (state, 8);
  g_autoptr(Samples) prewarm = samples_new (), floor = samples_new ();
  guint n_files = quick ? 4 : 16;
  gsize file_size = 16 * 1024 * 1024;
  guint rounds = quick ? 2 : 4;
  g_autofree char *row = g_strdup_printf ("prewarm %u x 16 MiB (%s)", n_files, label);
  double ratio;

  g_printerr ("prewarm of a big tree, %u x 16 MiB on %s (%u rounds)\n", n_files, label, rounds);
  write_big_tree (source, n_files, file_size);

  for (guint i = 0; i < rounds; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *name = g_strdup_printf ("bench-big-%u-%d", i, (int) getpid ());
      g_autofree char *copy = g_strdup_printf ("%s/big-copy-%u", root, i);
      g_autofree char *key = NULL;

      key = prewarm_beside (backend, root, source, name, copy, i, cp_and_hash_tree, prewarm,
                            floor);

      sandbox_backend_delete_template (backend, key, NULL, &error);
      check (error, "delete_template");
      remove_tree (copy);
    }
  remove_tree (source);

  ratio = samples_median (prewarm) / samples_median (floor);
  add_row (row, format_time (prewarm), format_time (floor), g_strdup_printf ("%.2fx", ratio),
           "<= 1.2x cp -r + sha256sum", TRUE, ratio <= 1.2);
}

static void
bench_template (void)
{
  g_autofree char *tmpfs = g_strdup_printf ("/dev/shm/sandbox-bench-%d", (int) getpid ());
  g_autofree char *disk = g_build_filename (state_root, "template-disk", NULL);

  bench_template_on ("tmpfs", tmpfs);
  bench_template_on ("disk", disk);
  bench_big_prewarm_on ("tmpfs", tmpfs);
  bench_big_prewarm_on ("disk", disk);
  if (!keep)
    remove_tree (tmpfs);
}

/* 4b. Layered workspaces (issue 17 item 3) */

/* A tree of @n_files small files, 1,000 to a directory. */
static void
write_small_tree (const char *directory,
                  guint       n_files)
{
  for (guint i = 0; i < n_files; i++)
    {
      g_autofree char *dir = g_strdup_printf ("%s/d%04u", directory, i / 1000);
      g_autofree char *path = g_strdup_printf ("%s/f%05u", dir, i);

      if (i % 1000 == 0)
        g_mkdir_with_parents (dir, 0755);
      if (!g_file_set_contents (path, "layered\n", 8, NULL))
        g_error ("cannot write %s", path);
    }
}

static char *
prewarm_tree (SandboxBackend *backend,
              const char     *source,
              const char     *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = g_file_new_for_path (source);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new (name);
  char *key;

  sandbox_template_add_directory (template_, file, NULL, &error);
  check (error, "add_directory");
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  check (error, "prewarm");
  return key;
}

/* Create (with its isolation proof) and the first command, from @key. */
static void
create_and_first_command (SandboxBackend       *backend,
                          const char           *key,
                          SandboxNetworkPolicy *policy,
                          Samples              *create,
                          Samples              *first)
{
  g_autoptr(SandboxHandle) handle = NULL;
  double start = bench_now_us ();

  handle = create_session (backend, key, policy);
  samples_add (create, bench_now_us () - start);
  samples_add (first, api_run (sandbox_handle_get_session (handle),
                               sandbox_command_new ("/usr/bin/true")));
  delete_session (handle);
}

static void
bench_layering_create_on (const char *label,
                          const char *root)
{
  g_autofree char *state = g_build_filename (root, "state", NULL);
  g_autofree char *big_tree = g_build_filename (root, "big", NULL);
  g_autofree char *small_tree = g_build_filename (root, "small", NULL);
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(Samples) big_create = samples_new (), small_create = samples_new ();
  g_autoptr(Samples) big_first = samples_new (), small_first = samples_new ();
  g_autofree char *big = NULL;
  g_autofree char *small = NULL;
  guint n_files = quick ? 20000 : 100000;
  guint rounds = quick ? 6 : 20;
  double ratio;

  g_printerr ("layered create, %u files vs 10 on %s (%u rounds)\n", n_files, label, rounds);
  g_mkdir_with_parents (root, 0700);
  backend = new_layered_backend (state);
  write_small_tree (big_tree, n_files);
  write_small_tree (small_tree, 10);
  big = prewarm_tree (backend, big_tree, "bench-layering-big");
  small = prewarm_tree (backend, small_tree, "bench-layering-small");
  remove_tree (big_tree);

  for (guint i = 0; i < rounds; i++)
    {
      /* Alternating which goes first, as the disk's speed drifts. */
      if (i % 2 == 0)
        create_and_first_command (backend, big, policy, big_create, big_first);
      create_and_first_command (backend, small, policy, small_create, small_first);
      if (i % 2 == 1)
        create_and_first_command (backend, big, policy, big_create, big_first);
    }

  ratio = samples_median (big_create) / samples_median (small_create);
  add_row (g_strdup_printf ("layered create, %uk vs 10 files (%s)", n_files / 1000, label),
           format_time (big_create), format_time (small_create), g_strdup_printf ("%.2fx", ratio),
           "<= 1.2x", TRUE, ratio <= 1.2);
  ratio = samples_median (big_first) / samples_median (small_first);
  add_row (g_strdup_printf ("first command, %uk vs 10 files (%s)", n_files / 1000, label),
           format_time (big_first), format_time (small_first), g_strdup_printf ("%.2fx", ratio),
           "<= 1.2x", TRUE, ratio <= 1.2);
}

/* Host-side 4 KiB read and write on a layered session's workspace (a
 * file of the lower layer, one of the upper) against the same on a plain
 * one, side by side in the same rounds, through the core's
 * SandboxWorkspace — on the descriptor of a keeper's overlay, as a layered
 * bubblewrap session's file calls are (sandbox-bubblewrap-keeper.c). */
static void
bench_layering_io (void)
{
  g_autofree char *root = g_build_filename (state_root, "layering-io", NULL);
  g_autofree char *lower = g_build_filename (root, "lower", NULL);
  g_autofree char *layers = g_build_filename (root, "layers", NULL);
  g_autofree char *upper = g_build_filename (layers, "upper", NULL);
  g_autofree char *work = g_build_filename (layers, "work", NULL);
  g_autofree char *plain = g_build_filename (root, "plain", NULL);
  SandboxBubblewrapGuest host = { getuid (), getgid (), FALSE };
  g_autoptr(SandboxBubblewrapKeeper) keeper = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxWorkspace) layered = NULL;
  g_autoptr(SandboxWorkspace) copied = NULL;
  g_autoptr(Samples) lower_read = samples_new (), upper_read = samples_new ();
  g_autoptr(Samples) plain_read = samples_new (), upper_write = samples_new ();
  g_autoptr(Samples) plain_write = samples_new (), lower_write = samples_new ();
  guint8 *data = g_malloc (4096);
  g_autoptr(GBytes) contents = NULL;
  guint rounds = quick ? 2000 : 10000;
  const char *dirs[] = { lower, upper, work, plain };
  double ratio;

  g_printerr ("host-side 4 KiB I/O, overlay vs plain workspace (%u rounds)\n", rounds);
  for (guint i = 0; i < 4096; i++)
    data[i] = (guint8) g_random_int ();
  contents = g_bytes_new_take (data, 4096);
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      g_autofree char *sub = g_build_filename (dirs[i], "src", "lib", NULL);

      g_mkdir_with_parents (dirs[i] == work ? dirs[i] : sub, 0755);
    }
  {
    g_autofree char *lower_file = g_build_filename (lower, "src", "lib", "lower.bin", NULL);

    g_file_set_contents (lower_file, (const char *) g_bytes_get_data (contents, NULL), 4096, &error);
    check (error, "lower file");
  }
  copied = sandbox_workspace_open (plain, SANDBOX_WORKSPACE_FLAGS_NONE, &error);
  check (error, "open");
  keeper = sandbox_bubblewrap_keeper_start ((const char * const[]) { lower, NULL }, NULL, layers, &host,
                                            &error);
  check (error, "start a keeper");
  layered = sandbox_bubblewrap_keeper_open_workspace (keeper, SANDBOX_WORKSPACE_FLAGS_NONE,
                                                      &error);
  check (error, "open the overlay");
  sandbox_workspace_write (layered, "src/lib/upper.bin", contents, G_MAXSIZE - 1, &error);
  check (error, "write");
  sandbox_workspace_write (copied, "src/lib/plain.bin", contents, G_MAXSIZE - 1, &error);
  check (error, "write");

  for (guint i = 0; i < rounds; i++)
    {
      struct { SandboxWorkspace *ws; const char *path; Samples *samples; } reads[] = {
        { layered, "src/lib/lower.bin", lower_read },
        { layered, "src/lib/upper.bin", upper_read },
        { copied, "src/lib/plain.bin", plain_read },
      };
      struct { SandboxWorkspace *ws; const char *path; Samples *samples; } writes[] = {
        { layered, "src/lib/upper.bin", upper_write },
        { copied, "src/lib/plain.bin", plain_write },
      };
      double start;

      for (guint j = 0; j < G_N_ELEMENTS (reads); j++)
        {
          g_autoptr(GBytes) read = NULL;

          start = bench_now_us ();
          read = sandbox_workspace_read (reads[j].ws, reads[j].path, G_MAXSIZE - 1, &error);
          samples_add (reads[j].samples, bench_now_us () - start);
          check (error, "read");
        }
      for (guint j = 0; j < G_N_ELEMENTS (writes); j++)
        {
          start = bench_now_us ();
          sandbox_workspace_write (writes[j].ws, writes[j].path, contents, G_MAXSIZE - 1, &error);
          samples_add (writes[j].samples, bench_now_us () - start);
          check (error, "write");
        }
      /* A write over a lower file: its first copy-up, each round anew. */
      sandbox_workspace_remove (layered, "src/lib/lower-copy.bin", &error);
      check (error, "remove");
      start = bench_now_us ();
      sandbox_workspace_write (layered, "src/lib/lower-copy.bin", contents, G_MAXSIZE - 1, &error);
      samples_add (lower_write, bench_now_us () - start);
      check (error, "write");
    }

  ratio = samples_median (lower_read) / samples_median (plain_read);
  add_row ("host 4 KiB read, lower layer vs plain", format_time (lower_read),
           format_time (plain_read), g_strdup_printf ("%.2fx", ratio), "<= 1.5x", TRUE, ratio <= 1.5);
  ratio = samples_median (upper_read) / samples_median (plain_read);
  add_row ("host 4 KiB read, upper layer vs plain", format_time (upper_read),
           format_time (plain_read), g_strdup_printf ("%.2fx", ratio), "<= 1.5x", TRUE, ratio <= 1.5);
  ratio = samples_median (upper_write) / samples_median (plain_write);
  add_row ("host 4 KiB write, upper layer vs plain", format_time (upper_write),
           format_time (plain_write), g_strdup_printf ("%.2fx", ratio), "<= 1.5x", TRUE, ratio <= 1.5);
  ratio = samples_median (lower_write) / samples_median (plain_write);
  add_row ("host 4 KiB new file in a lower dir vs plain", format_time (lower_write),
           format_time (plain_write), g_strdup_printf ("%.2fx", ratio), "informational", FALSE, TRUE);
  g_clear_pointer (&layered, sandbox_workspace_unref);
  g_clear_pointer (&keeper, sandbox_bubblewrap_keeper_free);
  remove_tree (root);
}

static void
bench_layering (void)
{
  g_autofree char *tmpfs = g_strdup_printf ("/dev/shm/sandbox-bench-layering-%d", (int) getpid ());
  g_autofree char *disk = g_build_filename (state_root, "layering-disk", NULL);

  bench_layering_io ();
  bench_layering_create_on ("tmpfs", tmpfs);
  bench_layering_create_on ("disk", disk);
  if (!keep)
    remove_tree (tmpfs);
}

/* 5. Scale */

static guint
count_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint count = 0;

  while (g_dir_read_name (dir) != NULL)
    count++;
  return count - 1; /* the directory being read */
}

static gsize
rss_bytes (void)
{
  g_autofree char *statm = NULL;
  unsigned long size = 0, resident = 0;

  malloc_trim (0);
  if (g_file_get_contents ("/proc/self/statm", &statm, NULL, NULL))
    sscanf (statm, "%lu %lu", &size, &resident);
  return resident * (gsize) sysconf (_SC_PAGESIZE);
}

#ifdef BENCH_CLUSTER
#include "bench-cluster.h"

/* Issue 18: resume on another host from a 1,000-file checkpoint, against a
 * local resume (where the session was stopped), in the same rounds. */
static void
bench_cluster (void)
{
  g_autoptr(Samples) local = samples_new ();
  g_autoptr(Samples) remote = samples_new ();
  g_autoptr(GError) error = NULL;
  guint rounds = quick ? 2 : 5;

  if (!bench_cluster_resume (state_root, 1000, rounds, local, remote, &error))
    {
      g_print ("cluster: skipped: %s\n", error->message);
      return;
    }
  add_row ("cluster resume, 1,000 files, same host", format_time (local), NULL, NULL, "",
           FALSE, FALSE);
  add_row ("cluster resume, 1,000 files, other host", format_time (remote), format_time (local),
           g_strdup_printf ("%.2fx", samples_median (remote) / samples_median (local)), "",
           FALSE, FALSE);
}
#else
static void
bench_cluster (void)
{
  g_print ("cluster: skipped: built without the tests (the etcd fixture)\n");
}
#endif

/* Live processes */

#define KEYSTROKE_SCRIPT "stty raw -echo; echo ready; exec cat"

/* Waits until @seen holds @wanted (keystroke bench), iterating @context. */
static void
keystroke_wait (GMainContext *context,
                GString      *seen,
                const char   *wanted)
{
  double until = bench_now_us () + 20e6;

  while (strstr (seen->str, wanted) == NULL && bench_now_us () < until)
    g_main_context_iteration (context, TRUE);
  if (strstr (seen->str, wanted) == NULL)
    g_error ("keystroke: never saw “%s”", wanted);
}

static void
keystroke_seen_cb (SandboxProcess *process,
                   GBytes         *data,
                   GString        *seen)
{
  gsize size;
  const char *bytes = g_bytes_get_data (data, &size);

  g_string_append_len (seen, bytes, size);
}

/* One byte typed on a command's terminal and the same byte back from the
 * guest (cat, the terminal raw and without echo: the byte makes the whole
 * trip through the guest, not only the kernel's echo). */
static double
keystroke_api (SandboxProcess *process,
               GString        *seen,
               char            key)
{
  GOutputStream *keys = sandbox_process_get_stdin_stream (process);
  char wanted[2] = { key, '\0' };
  double start = bench_now_us ();

  g_string_truncate (seen, 0);
  g_output_stream_write_all (keys, &key, 1, NULL, NULL, NULL);
  keystroke_wait (NULL, seen, wanted);
  return bench_now_us () - start;
}

/* The floor: the same trip through a pseudo-terminal of the host's own,
 * cat on it, no sandbox and no library. */
static double
keystroke_floor (int  master,
                 char key)
{
  double start = bench_now_us ();
  char got = 0;

  if (write (master, &key, 1) != 1)
    g_error ("keystroke floor: write: %s", g_strerror (errno));
  while (got != key)
    if (read (master, &got, 1) != 1)
      g_error ("keystroke floor: read: %s", g_strerror (errno));
  return bench_now_us () - start;
}

static GPid
keystroke_floor_start (int *master)
{
  const char *argv[] = { "/bin/sh", "-c", KEYSTROKE_SCRIPT, NULL };
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  char name[64];
  char line[64] = { 0 };
  gsize length = 0;
  pid_t pid;
  int slave;

  *master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (*master < 0 || grantpt (*master) < 0 || unlockpt (*master) < 0 ||
      ptsname_r (*master, name, sizeof name) != 0 ||
      (slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
    g_error ("keystroke floor: no pseudo-terminal: %s", g_strerror (errno));
  posix_spawn_file_actions_init (&actions);
  for (int fd = 0; fd <= 2; fd++)
    posix_spawn_file_actions_adddup2 (&actions, slave, fd);
  posix_spawnattr_init (&attributes);
  posix_spawnattr_setflags (&attributes, POSIX_SPAWN_SETSID);
  if (posix_spawn (&pid, argv[0], &actions, &attributes, (char **) argv, environ) != 0)
    g_error ("keystroke floor: spawn failed");
  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attributes);
  close (slave);
  while (strstr (line, "ready\n") == NULL && length + 1 < sizeof line &&
         read (*master, line + length, 1) == 1)
    length++;
  return pid;
}

/* Issue 38: a keystroke's round trip through a command's terminal, against
 * the same through a host pseudo-terminal. */
static void
bench_live (void)
{
  g_autofree char *state = g_build_filename (state_root, "live", NULL);
  g_autoptr(SandboxBackend) backend = new_backend (state, 8);
  g_autofree char *key = prewarm_small (backend, "bench-live");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = create_session (backend, key, policy);
  const char *args[] = { "-c", KEYSTROKE_SCRIPT, NULL };
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/bin/sh");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GString) seen = g_string_new (NULL);
  g_autoptr(Samples) api = samples_new (), floor_ = samples_new ();
  g_autoptr(GError) error = NULL;
  guint rounds = quick ? 50 : 400;
  int master, status;
  GPid floor_pid;
  double ratio;

  g_printerr ("live: keystroke round trip through a terminal (%u rounds)\n", rounds);
  sandbox_command_set_args (command, args);
  sandbox_command_set_terminal (command, TRUE);
  sandbox_command_set_timeout_ms (command, 600000);
  process = sandbox_session_spawn (sandbox_handle_get_session (handle), command, NULL, &error);
  check (error, "spawn on a terminal");
  g_signal_connect (process, "stdout-data", G_CALLBACK (keystroke_seen_cb), seen);
  keystroke_wait (NULL, seen, "ready\n");
  floor_pid = keystroke_floor_start (&master);
  for (guint i = 0; i < rounds; i++)
    {
      char key_typed = 'a' + i % 26;

      if (i % 2 == 0)
        {
          samples_add (api, keystroke_api (process, seen, key_typed));
          samples_add (floor_, keystroke_floor (master, key_typed));
        }
      else
        {
          samples_add (floor_, keystroke_floor (master, key_typed));
          samples_add (api, keystroke_api (process, seen, key_typed));
        }
    }
  close (master);
  waitpid (floor_pid, &status, 0);
  sandbox_process_stop (process, NULL, NULL);
  g_signal_handlers_disconnect_by_data (process, seen);
  ratio = samples_median (api) / samples_median (floor_);
  add_row ("keystroke round trip through a terminal", format_time (api), format_time (floor_),
           g_strdup_printf ("%.2fx", ratio),
           "informational: floor is a host pty, no sandbox", FALSE, TRUE);
  delete_session (handle);
}

/* Issue 38: a hot command in a session that has a background server
 * running (a Python HTTP server, serving nobody), against the same in a
 * session without one, alternated. */
static void
bench_live_background (void)
{
  g_autofree char *state = g_build_filename (state_root, "live-background", NULL);
  g_autoptr(SandboxBackend) backend = new_backend (state, 8);
  g_autofree char *key = prewarm_small (backend, "bench-live-background");
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) busy = create_session (backend, key, policy);
  g_autoptr(SandboxHandle) idle = create_session (backend, key, policy);
  const char *server_args[] = { "-m", "http.server", "8000", NULL };
  g_autoptr(SandboxCommand) server = sandbox_command_new ("/usr/bin/python3");
  g_autoptr(SandboxCommand) true_command = sandbox_command_new ("/usr/bin/true");
  g_autoptr(SandboxProcess) serving = NULL;
  g_autoptr(Samples) with_server = samples_new (), without = samples_new ();
  g_autoptr(GError) error = NULL;
  guint rounds = quick ? 15 : 60;
  double ratio;

  g_printerr ("live: a command beside a background server (%u rounds)\n", rounds);
  sandbox_command_set_args (server, server_args);
  serving = sandbox_session_spawn_background (sandbox_handle_get_session (busy), server, &error);
  check (error, "background server");
  api_run (sandbox_handle_get_session (busy), true_command);
  api_run (sandbox_handle_get_session (idle), true_command);
  for (guint i = 0; i < rounds; i++)
    {
      g_usleep (THINK_TIME_US);
      samples_add (i % 2 == 0 ? with_server : without,
                   api_run (sandbox_handle_get_session (i % 2 == 0 ? busy : idle), true_command));
      g_usleep (THINK_TIME_US);
      samples_add (i % 2 == 0 ? without : with_server,
                   api_run (sandbox_handle_get_session (i % 2 == 0 ? idle : busy), true_command));
    }
  if (sandbox_process_is_finished (serving))
    g_error ("the background server ended during the bench");
  ratio = samples_median (with_server) / samples_median (without);
  add_row ("hot command beside a background server", format_time (with_server),
           format_time (without), g_strdup_printf ("%.2fx", ratio),
           "informational: floor is a session without one", FALSE, TRUE);
  delete_session (busy);
  delete_session (idle);
}

/* Short, so the scale section sees its ready sandboxes time out. */
#define SCALE_READY_IDLE_TIMEOUT_MS 2000
/* Before each timed run: longer than a ready sandbox's launch delay and
 * setup, as the hot session's think time is. */
#define SCALE_RUN_PAUSE_MS 60

/* Issue 36 item 2: idle sessions cost nothing. Once the sessions' helpers
 * have ended (idle-helpers-timeout-ms, as short as the ready sandboxes'
 * timeout here), what the whole process tree holds per session: this
 * process's RSS and fds and every descendant's processes and RSS. */
static void
bench_scale_idle_tree (guint       n,
                       const char *label,
                       gsize       rss_before,
                       guint       fds_before)
{
  BenchTree tree;
  double rss_per, fds_per, processes_per;

  /* The helpers end on a timer: give them a moment beyond it. */
  for (guint i = 0; i < 50; i++)
    {
      bench_tree_read (&tree);
      if (tree.n_processes == 0)
        break;
      g_usleep (100 * 1000);
    }
  rss_per = ((double) rss_bytes () + tree.rss_bytes - rss_before) / (n - 1) / 1024;
  fds_per = (double) ((int) count_fds () - (int) fds_before) / (n - 1);
  processes_per = (double) tree.n_processes / (n - 1);
  add_row (g_strdup_printf ("%u %s sessions idle, helpers ended: tree RSS per session", n,
                            label),
           g_strdup_printf ("%.1f KiB", rss_per), NULL, NULL, "<= 16 KiB", TRUE, rss_per <= 16);
  add_row (g_strdup_printf ("%u %s sessions idle, helpers ended: processes per session", n,
                            label),
           g_strdup_printf ("%.3f", processes_per), NULL, NULL, "0", TRUE, tree.n_processes == 0);
  add_row (g_strdup_printf ("%u %s sessions idle, helpers ended: fds per session", n, label),
           g_strdup_printf ("%.2f", fds_per), NULL, NULL, "<= 2", TRUE, fds_per <= 2);
}

static void
bench_scale_kind (SandboxBackend       *backend,
                  const char           *key,
                  const char           *label,
                  SandboxNetworkPolicy *policy,
                  guint                 n)
{
  g_autoptr(GPtrArray) handles = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/true");
  g_autoptr(Samples) first = samples_new (), last = samples_new ();
  guint rounds = quick ? 10 : 30;
  gsize rss_before, rss_after;
  guint fds_before, fds_after;
  double rss_per, fds_per, ratio;
  double start;

  g_printerr ("scale: %u idle %s sessions\n", n, label);

  /* The first session and one command warm everything up that is shared. */
  g_ptr_array_add (handles, create_session (backend, key, policy));
  api_run (sandbox_handle_get_session (g_ptr_array_index (handles, 0)), command);
  rss_before = rss_bytes ();
  fds_before = count_fds ();

  start = bench_now_us ();
  while (handles->len < n)
    g_ptr_array_add (handles, create_session (backend, key, policy));
  g_printerr ("  created %u sessions in %.1f s\n", n - 1, (bench_now_us () - start) / 1e6);

  rss_after = rss_bytes ();
  fds_after = count_fds ();
  rss_per = (double) ((gssize) rss_after - (gssize) rss_before) / (n - 1) / 1024;
  fds_per = (double) ((int) fds_after - (int) fds_before) / (n - 1);

  /* Each run after a pause in which the sandbox its session's previous
   * run left ready has finished its setup: every sample is then a hot
   * command. Back to back, a run took that sandbox anywhere between just
   * launched and ready, and since a command completes before its bwrap
   * is reaped, the next one starts sooner: the two medians swung between
   * 0.9x and 1.6x of each other from run to run. */
  for (guint i = 0; i < rounds; i++)
    {
      SandboxSession *s_first = sandbox_handle_get_session (g_ptr_array_index (handles, 0));
      SandboxSession *s_last = sandbox_handle_get_session (g_ptr_array_index (handles, n - 1));
      gboolean first_first = i % 2 == 0;

      for (guint j = 0; j < 2; j++)
        {
          gboolean is_first = (j == 0) == first_first;

          g_usleep (SCALE_RUN_PAUSE_MS * 1000);
          samples_add (is_first ? first : last, api_run (is_first ? s_first : s_last, command));
        }
    }

  /* A command in every session: each leaves a ready sandbox while the
   * backend's pool has room (max-ready-sandboxes). Once their idle timeout
   * has passed, the sessions must cost what idle ones do. */
  start = bench_now_us ();
  for (guint i = 0; i < handles->len; i++)
    api_run (sandbox_handle_get_session (g_ptr_array_index (handles, i)), command);
  g_printerr ("  ran a command in each of the %u sessions in %.1f s\n", n,
              (bench_now_us () - start) / 1e6);
  g_usleep ((SCALE_READY_IDLE_TIMEOUT_MS + 500) * 1000);
  bench_scale_idle_tree (n, label, rss_before, fds_before);
  {
    gsize rss_idle = rss_bytes ();
    double fds_idle = (double) ((int) count_fds () - (int) fds_before) / (n - 1);
    double rss_idle_per = (double) ((gssize) rss_idle - (gssize) rss_before) / (n - 1) / 1024;

    add_row (g_strdup_printf ("%u %s sessions after runs, ready timed out: RSS per session", n,
                              label),
             g_strdup_printf ("%.1f KiB", rss_idle_per), NULL, NULL, "<= 64 KiB", TRUE,
             rss_idle_per <= 64);
    add_row (g_strdup_printf ("%u %s sessions after runs, ready timed out: fds per session", n,
                              label),
             g_strdup_printf ("%.2f", fds_idle), NULL, NULL, "<= 4", TRUE, fds_idle <= 4);
  }

  ratio = samples_median (last) / samples_median (first);
  add_row (g_strdup_printf ("%u idle %s sessions: RSS per session", n, label),
           g_strdup_printf ("%.1f KiB", rss_per), NULL, NULL, "<= 64 KiB", TRUE, rss_per <= 64);
  add_row (g_strdup_printf ("%u idle %s sessions: fds per session", n, label),
           g_strdup_printf ("%.2f", fds_per), NULL, NULL, "<= 4", TRUE, fds_per <= 4);
  add_row (g_strdup_printf ("%u idle %s sessions: run, last vs first", n, label),
           format_time (last), format_time (first), g_strdup_printf ("%.3fx", ratio),
           "<= 1.10x", TRUE, ratio <= 1.10);

  start = bench_now_us ();
  for (guint i = 0; i < handles->len; i++)
    delete_session (g_ptr_array_index (handles, i));
  g_printerr ("  deleted in %.1f s\n", (bench_now_us () - start) / 1e6);
}

static void
bench_scale (void)
{
  g_autofree char *state = g_build_filename (state_root, "scale", NULL);
  g_autoptr(GError) backend_error = NULL;
  g_autoptr(SandboxBackend) backend =
    sandbox_backend_new ("bubblewrap", NULL, &backend_error, "state-directory", state,
                         "ready-idle-timeout-ms", SCALE_READY_IDLE_TIMEOUT_MS,
                         "idle-helpers-timeout-ms", SCALE_READY_IDLE_TIMEOUT_MS, NULL);
  g_autofree char *key = prewarm_small (backend, "bench-scale");
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) deny_all = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxNetworkPolicy) allow_list =
    sandbox_network_policy_new_from_json ("{\"allow\": [{\"origin\": \"http://127.0.0.1:9\", "
                                          "\"headers\": {\"Authorization\": \"Bearer bench\"}}]}", &error);
  guint n = quick ? 200 : 1000;

  check (backend_error, "backend");
  floor_follows_guest_ids (backend);
  check (error, "policy");
  bench_scale_kind (backend, key, "deny-all", deny_all, n);
  bench_scale_kind (backend, key, "allow-list", allow_list, n);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = g_option_context_new ("— libsandbox benchmarks");
  g_autoptr(GError) error = NULL;
  GOptionEntry entries[] = {
    { "quick", 'q', 0, G_OPTION_ARG_NONE, &quick, "Fewer rounds (for development)", NULL },
    { "only", 0, 0, G_OPTION_ARG_STRING, &only, "Run one section: command, async, io, gateway, proxy, template, layering, snapshot, runtime, scale, cluster, live, many (not run by default)", "SECTION" },
    { "sessions", 0, 0, G_OPTION_ARG_INT, &many_sessions, "How many sessions the section 'many' holds (10000)", "N" },
    { "keep", 0, 0, G_OPTION_ARG_NONE, &keep, "Keep the state directories", NULL },
    { NULL }
  };
  struct rlimit limit;
  guint missed = 0;
  double start = bench_now_us ();

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }

  /* A thousand sessions with gateways need more than the default 1024. */
  if (getrlimit (RLIMIT_NOFILE, &limit) == 0)
    {
      limit.rlim_cur = limit.rlim_max;
      setrlimit (RLIMIT_NOFILE, &limit);
    }

  state_root = g_strdup_printf ("/var/tmp/sandbox-bench-%d", (int) getpid ());
  /* Passable (not listable) by others: run as root, the raw-bwrap floor
   * starts bwrap as the guest ids, which must reach the disk rows'
   * workspaces below here (the library covers its own way down; the floor
   * does not). With 0700 the disk template section died at its first
   * floor run ("Can't find source path …: Permission denied"). */
  g_mkdir_with_parents (state_root, 0711);

  if (!bench_floor_init (TRUE, &error))
    g_error ("seccomp program: %s", error->message);

  if (section_enabled ("command"))
    {
      bench_command ();
      bench_command_hot ();
      bench_command_cold_default ();
      bench_command_allow_all ();
    }
  if (section_enabled ("async"))
    bench_async_returns ();
  if (section_enabled ("io"))
    bench_io ();
  if (section_enabled ("gateway"))
    {
      bench_gateway ();
      bench_gateway_stream ();
    }
  if (section_enabled ("proxy"))
#ifdef BENCH_PROXY
    bench_proxy (state_root, quick);
#else
    g_printerr ("proxy: not built (its rows use the test kit: configure with the tests)\n");
#endif
  if (section_enabled ("template"))
    bench_template ();
  if (section_enabled ("layering"))
    bench_layering ();
  if (section_enabled ("snapshot"))
    bench_snapshot (state_root, quick);
  if (section_enabled ("runtime"))
    bench_runtime (state_root, quick);
  if (section_enabled ("scale"))
    bench_scale ();
  if (section_enabled ("cluster"))
    bench_cluster ();
  if (section_enabled ("many"))
    bench_many (state_root, (guint) MAX (many_sessions, 0));
  if (section_enabled ("live"))
    {
      bench_live ();
      bench_live_background ();
    }

  print_table ();
  missed = count_missed ();
  g_print ("\n%u target(s) missed; ran in %.0f s%s\n", missed, (bench_now_us () - start) / 1e6,
           quick ? " (--quick)" : "");

  if (!keep)
    remove_tree (state_root);
  return missed == 0 ? 0 : 1;
}
