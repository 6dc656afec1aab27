/* bench-many.c — ten thousand sessions in one process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Issue 36 item 3: one layered bubblewrap backend holds N sessions (10,000
 * by default; deny-all, every tenth an allow-list) in this one process.
 * The per-session cost is measured the same way at 100 sessions and at N,
 * so that the ratio says whether it stays flat: a create, a first command
 * in a random session (one that has not run, or whose helpers ended after
 * idle-helpers-timeout-ms) and a hot command right after it in the same
 * one. Then `list` (informational: it reads every session's state), stop
 * all, resume all and delete all, each per session, the last hundred
 * against the first hundred. At the end nothing may be left: processes,
 * descriptors, mounts of this process and session directories are what
 * they were before the first create.
 *
 * Not part of the default run (--only many): creating and tearing down
 * 10,000 sessions takes minutes.
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include <sandbox.h>

#include "bench-common.h"
#include "bench-cpu.h"
#include "bench-many.h"
#include "bench-session.h"
#include "bench-table.h"

#define POINT_SAMPLES 30
#define IDLE_HELPERS_TIMEOUT_MS 1000

typedef struct
{
  Samples *create;
  Samples *first;
  Samples *hot;
} Point;

static void
point_clear (Point *point)
{
  g_clear_pointer (&point->create, samples_free);
  g_clear_pointer (&point->first, samples_free);
  g_clear_pointer (&point->hot, samples_free);
}

static guint
count_lines (const char *path)
{
  g_autofree char *text = NULL;
  guint n = 0;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return 0;
  for (const char *p = text; *p != '\0'; p++)
    n += *p == '\n';
  return n;
}

static guint
count_entries (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  while (dir != NULL && g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* The session directories of every store under @state (<state>/<store>/sessions). */
static guint
count_session_dirs (const char *state)
{
  g_autoptr(GDir) dir = g_dir_open (state, 0, NULL);
  const char *name;
  guint n = 0;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *sessions = g_build_filename (state, name, "sessions", NULL);

      n += count_entries (sessions);
    }
  return n;
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
  return bench_now_us () - start;
}

static SandboxNetworkPolicy *
policy_for (guint                 index,
            SandboxNetworkPolicy *deny_all,
            SandboxNetworkPolicy *allow_list)
{
  return index % 10 == 9 ? allow_list : deny_all;
}

static void
create_timed (SandboxBackend       *backend,
              const char           *key,
              GPtrArray            *handles,
              SandboxNetworkPolicy *deny_all,
              SandboxNetworkPolicy *allow_list,
              Samples              *samples)
{
  double start = bench_now_us ();

  g_ptr_array_add (handles, create_session (backend, key,
                                            policy_for (handles->len, deny_all, allow_list)));
  if (samples != NULL)
    samples_add (samples, bench_now_us () - start);
}

/* The per-session costs with @handles as they are: POINT_SAMPLES creates
 * (kept), and a first and a hot command in as many random sessions that
 * have not run since their helpers ended. */
static void
measure_point (SandboxBackend       *backend,
               const char           *key,
               GPtrArray            *handles,
               SandboxNetworkPolicy *deny_all,
               SandboxNetworkPolicy *allow_list,
               GRand                *rand,
               Point                *point)
{
  point->create = samples_new ();
  point->first = samples_new ();
  point->hot = samples_new ();
  for (guint i = 0; i < POINT_SAMPLES; i++)
    create_timed (backend, key, handles, deny_all, allow_list, point->create);
  /* Every helper of the sessions that ran before has ended. */
  g_usleep ((IDLE_HELPERS_TIMEOUT_MS + 1500) * 1000);
  for (guint i = 0; i < POINT_SAMPLES; i++)
    {
      SandboxHandle *handle = g_ptr_array_index (handles,
                                                 g_rand_int_range (rand, 0, handles->len));
      SandboxSession *session = sandbox_handle_get_session (handle);

      samples_add (point->first, run_true (session));
      samples_add (point->hot, run_true (session));
    }
}

static void
add_ratio_row (const char *what,
               guint       n,
               Samples    *at_n,
               Samples    *at_100)
{
  double ratio = samples_median (at_n) / samples_median (at_100);

  add_row (g_strdup_printf ("%u sessions: %s, at %u vs at 100", n, what, n),
           format_time (at_n), format_time (at_100), g_strdup_printf ("%.3fx", ratio),
           "<= 1.10x", TRUE, ratio <= 1.10);
}

/* Per-session times of @op over every handle, the last hundred against the
 * first hundred. */
typedef void (*EachFunc) (SandboxBackend *backend, GPtrArray *handles, GPtrArray *states,
                          guint index);

static void
time_each (const char     *what,
           SandboxBackend *backend,
           GPtrArray      *handles,
           GPtrArray      *states,
           EachFunc        op)
{
  g_autoptr(Samples) head = samples_new ();
  g_autoptr(Samples) tail = samples_new ();
  guint n = handles->len;
  double all = bench_now_us ();
  double ratio;

  for (guint i = 0; i < n; i++)
    {
      double start = bench_now_us ();

      op (backend, handles, states, i);
      if (i < 100)
        samples_add (head, bench_now_us () - start);
      else if (i >= n - 100)
        samples_add (tail, bench_now_us () - start);
    }
  g_printerr ("  %s: %u sessions in %.1f s\n", what, n, (bench_now_us () - all) / 1e6);
  ratio = samples_median (tail) / samples_median (head);
  add_row (g_strdup_printf ("%u sessions: %s, last 100 vs first 100", n, what),
           format_time (tail), format_time (head), g_strdup_printf ("%.3fx", ratio),
           "<= 1.10x", TRUE, ratio <= 1.10);
}

static void
stop_one (SandboxBackend *backend,
          GPtrArray      *handles,
          GPtrArray      *states,
          guint           index)
{
  SandboxHandle *handle = g_ptr_array_index (handles, index);
  g_autoptr(GError) error = NULL;

  g_ptr_array_add (states, sandbox_handle_capture_state (handle, &error));
  check (error, "capture");
  sandbox_handle_stop (handle, NULL, &error);
  check (error, "stop");
}

static SandboxNetworkPolicy *deny_all_policy, *allow_list_policy;

static void
resume_one (SandboxBackend *backend,
            GPtrArray      *handles,
            GPtrArray      *states,
            guint           index)
{
  g_autoptr(GError) error = NULL;
  SandboxHandle *handle = sandbox_backend_resume (backend, g_ptr_array_index (states, index),
                                                  policy_for (index, deny_all_policy,
                                                              allow_list_policy),
                                                  NULL, &error);

  check (error, "resume");
  g_object_unref (g_ptr_array_index (handles, index));
  handles->pdata[index] = handle;
}

static void
delete_one (SandboxBackend *backend,
            GPtrArray      *handles,
            GPtrArray      *states,
            guint           index)
{
  delete_session (g_ptr_array_index (handles, index));
}

static void
time_list (SandboxBackend *backend,
           guint           n,
           gboolean        report)
{
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(Samples) samples = samples_new ();

  for (guint i = 0; i < 3; i++)
    {
      double start = bench_now_us ();

      g_clear_pointer (&sessions, g_ptr_array_unref);
      sessions = sandbox_backend_list_sessions (backend, NULL, &error);
      check (error, "list");
      samples_add (samples, bench_now_us () - start);
    }
  if (report)
    add_row (g_strdup_printf ("%u sessions: list (%u listed)", n, sessions->len),
             format_time (samples), NULL, NULL, "informational", FALSE, TRUE);
}

typedef struct
{
  GHashTable *fd_targets;   /* "fd -> target" texts */
  guint fds;
  guint mounts;
  guint processes;
  guint session_dirs;
} Leftovers;

static void
read_leftovers (const char *state,
                Leftovers  *out)
{
  g_autoptr(GDir) fds = g_dir_open ("/proc/self/fd", 0, NULL);
  BenchTree tree;

  const char *name;

  out->fds = 0;
  out->fd_targets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  while ((name = g_dir_read_name (fds)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc/self/fd", name, NULL);
      g_autofree char *target = g_file_read_link (path, NULL);

      g_hash_table_add (out->fd_targets, g_strdup_printf ("%s -> %s", name, target));
      out->fds++;
    }
  out->mounts = count_lines ("/proc/self/mountinfo");
  bench_tree_read (&tree);
  out->processes = tree.n_processes;
  out->session_dirs = count_session_dirs (state);
}

/**
 * bench_many:
 * @state_root: where the backend's state directory goes
 * @n: how many sessions (at least 200)
 *
 * Adds the rows described above.
 */
void
bench_many (const char *state_root,
            guint       n)
{
  g_autofree char *state = g_build_filename (state_root, "many", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("bench-many");
  g_autoptr(GPtrArray) handles = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) states = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GRand) rand = g_rand_new_with_seed (36);
  g_autofree char *key = NULL;
  Point at_100 = { 0, }, at_n = { 0, };
  Leftovers before, after;
  double start;

  n = MAX (n, 200);
  backend = sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", state,
                                 "layering", "auto",
                                 "idle-helpers-timeout-ms", IDLE_HELPERS_TIMEOUT_MS,
                                 "ready-idle-timeout-ms", IDLE_HELPERS_TIMEOUT_MS, NULL);
  check (error, "backend");
  deny_all_policy = sandbox_network_policy_new_deny_all ();
  allow_list_policy = sandbox_network_policy_new_from_json (
    "{\"allow\": [{\"origin\": \"http://127.0.0.1:9\", "
    "\"headers\": {\"Authorization\": \"Bearer bench\"}}]}", &error);
  check (error, "policy");
  sandbox_template_add_file (template_, "README",
                             g_bytes_new_static ("many\n", 5), NULL);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  check (error, "prewarm");
  /* What the first sessions of each kind make once for all (the gateway's
   * thread, the launcher's) is not theirs. */
  for (guint i = 0; i < 10; i++)
    create_timed (backend, key, handles, deny_all_policy, allow_list_policy, NULL);
  for (guint i = 0; i < handles->len; i++)
    run_true (sandbox_handle_get_session (g_ptr_array_index (handles, i)));
  time_list (backend, handles->len, FALSE);
  for (guint i = 0; i < handles->len; i++)
    stop_one (backend, handles, states, i);
  for (guint i = 0; i < handles->len; i++)
    resume_one (backend, handles, states, i);
  for (guint i = 0; i < handles->len; i++)
    delete_session (g_ptr_array_index (handles, i));
  g_ptr_array_set_size (handles, 0);
  g_ptr_array_set_size (states, 0);
  g_usleep ((IDLE_HELPERS_TIMEOUT_MS + 1500) * 1000);
  read_leftovers (state, &before);

  g_printerr ("many: %u sessions (layered; deny-all, every tenth an allow-list)\n", n);
  start = bench_now_us ();
  while (handles->len < 100 - POINT_SAMPLES)
    create_timed (backend, key, handles, deny_all_policy, allow_list_policy, NULL);
  measure_point (backend, key, handles, deny_all_policy, allow_list_policy, rand, &at_100);
  while (handles->len < n - POINT_SAMPLES)
    {
      create_timed (backend, key, handles, deny_all_policy, allow_list_policy, NULL);
      if (handles->len % 1000 == 0)
        g_printerr ("  %u sessions after %.0f s\n", handles->len,
                    (bench_now_us () - start) / 1e6);
    }
  measure_point (backend, key, handles, deny_all_policy, allow_list_policy, rand, &at_n);
  g_printerr ("  %u sessions created and measured in %.0f s\n", n,
              (bench_now_us () - start) / 1e6);

  add_ratio_row ("create", n, at_n.create, at_100.create);
  add_ratio_row ("first command in a random session", n, at_n.first, at_100.first);
  add_ratio_row ("hot command in a random session", n, at_n.hot, at_100.hot);
  time_list (backend, n, TRUE);
  time_each ("stop", backend, handles, states, stop_one);
  time_each ("resume", backend, handles, states, resume_one);
  time_each ("delete", backend, handles, states, delete_one);
  g_ptr_array_set_size (handles, 0);
  g_ptr_array_set_size (states, 0);

  /* The helpers of the last sessions end on their timers; a descriptor
   * may be open for a moment on another thread (a synchronous call's
   * context): looked at until it is all gone, for 5 s at most. */
  g_usleep ((IDLE_HELPERS_TIMEOUT_MS + 1500) * 1000);
  for (guint i = 0; i < 20; i++)
    {
      read_leftovers (state, &after);
      if (i == 19 || (after.fds <= before.fds && after.processes <= before.processes &&
                      after.session_dirs <= before.session_dirs))
        break;
      g_hash_table_unref (after.fd_targets);
      g_usleep (250 * 1000);
    }
  add_row (g_strdup_printf ("%u sessions: left after delete all (fds, mounts, processes, "
                            "session directories)", n),
           g_strdup_printf ("%+d, %+d, %+d, %+d", (int) after.fds - (int) before.fds,
                            (int) after.mounts - (int) before.mounts,
                            (int) after.processes - (int) before.processes,
                            (int) after.session_dirs - (int) before.session_dirs),
           NULL, NULL, "0, 0, 0, 0", TRUE,
           after.fds <= before.fds && after.mounts <= before.mounts &&
           after.processes <= before.processes && after.session_dirs <= before.session_dirs);

  /* What is left, for whoever has to find out why. */
  {
    GHashTableIter iter;
    gpointer fd;

    g_hash_table_iter_init (&iter, after.fd_targets);
    while (g_hash_table_iter_next (&iter, &fd, NULL))
      if (!g_hash_table_contains (before.fd_targets, fd))
        g_printerr ("  left open: %s\n", (const char *) fd);
  }
  g_hash_table_unref (before.fd_targets);
  g_hash_table_unref (after.fd_targets);
  point_clear (&at_100);
  point_clear (&at_n);
  g_clear_object (&deny_all_policy);
  g_clear_object (&allow_list_policy);
}
