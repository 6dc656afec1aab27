/* test-cluster-netcut.c: a cluster host cut off from etcd fences itself in time
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The owner host runs in a network namespace of the test's own, reaching
 * etcd only through a veth pair; setting the pair down is a real network
 * cut (the host process keeps running and talking to the test on its
 * pipes). Another host, in this namespace, then waits to take the session
 * over. Root only: skipped with the reason otherwise, or when `ip netns`
 * or etcd is missing.
 *
 * The network is made and removed by the test process, the cluster (etcd
 * and the hosts) lives in a g_test_trap_subprocess() child: a failed
 * assertion aborts the child, and the parent's teardown still removes the
 * namespace and the links.
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <sandbox.h>

#include "cluster-driver-kit.h"

/* The names of one run end in its pid: a run killed before its teardown
 * leaves them behind, and the next run removes them (and only those whose
 * run is gone: other test runs may be live on this machine). */
#define NETCUT_PREFIX "sbx-nc-"

/* How the parent tells its child which network it made: "NETNS LINK ADDRESS". */
#define NETCUT_ENV "SANDBOX_TEST_NETCUT"

typedef struct
{
  Fixture cluster;
  char *netns;           /* sbx-nc-PID */
  char *outer_link;      /* sbx-nc-PIDa, in this namespace */
  char *inner_link;      /* sbx-nc-PIDb, in the owner's */
  char *outer_address;   /* 10.213.N.1, where etcd also listens */
  gboolean made_network; /* the parent, which removes it */
  gboolean ready;        /* FALSE: the test was skipped */
} NetCut;

/* g_test_message() for the trap child, which GLib runs quiet: the timings
 * belong in the log of a run that failed. */
static void note (const char *format, ...) G_GNUC_PRINTF (1, 2);

static void
note (const char *format,
      ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);
  if (g_test_subprocess ())
    g_printerr ("# %s\n", message);
  else
    g_test_message ("%s", message);
}

static gboolean ip_run (char **out, GError **error, ...) G_GNUC_NULL_TERMINATED;

/* Runs `ip ARGS…`; FALSE with its stderr in @error when it fails. */
static gboolean
ip_run (char    **out,
        GError  **error,
        ...)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) argv = NULL;
  g_autofree char *err = NULL;
  g_autofree char *command = NULL;
  int status = 0;
  const char *arg;
  va_list args;

  g_strv_builder_add (builder, "ip");
  va_start (args, error);
  while ((arg = va_arg (args, const char *)) != NULL)
    g_strv_builder_add (builder, arg);
  va_end (args);
  argv = g_strv_builder_end (builder);

  if (!g_spawn_sync (NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, out, &err, &status,
                     error))
    return FALSE;
  if (g_spawn_check_wait_status (status, NULL))
    return TRUE;
  command = g_strjoinv (" ", argv);
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "‘%s’ failed: %s", command,
               g_strstrip (err));
  return FALSE;
}

/* The pid a leftover name ends in (before its a/b suffix), or 0. */
static pid_t
leftover_pid (const char *name)
{
  guint64 pid = 0;
  const char *digits = name + strlen (NETCUT_PREFIX);
  char *end = NULL;

  if (!g_str_has_prefix (name, NETCUT_PREFIX) || !g_ascii_isdigit (digits[0]))
    return 0;
  pid = g_ascii_strtoull (digits, &end, 10);
  if (!(end[0] == '\0' || ((end[0] == 'a' || end[0] == 'b') && end[1] == '\0')))
    return 0;
  return (pid_t) pid;
}

static gboolean
leftover_is_stale (const char *name)
{
  pid_t pid = leftover_pid (name);

  return pid > 0 && (pid == getpid () || (kill (pid, 0) < 0 && errno == ESRCH));
}

/* Removes the namespaces and links of runs that died before their teardown. */
static void
remove_leftovers (void)
{
  g_autofree char *namespaces = NULL;
  g_autofree char *links = NULL;
  g_auto(GStrv) lines = NULL;

  if (ip_run (&namespaces, NULL, "netns", "list", NULL))
    {
      lines = g_strsplit (namespaces, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        {
          g_autofree char *name = g_strndup (lines[i], strcspn (lines[i], " "));

          if (leftover_is_stale (name))
            {
              g_test_message ("removing the leftover namespace %s", name);
              ip_run (NULL, NULL, "netns", "delete", name, NULL);
            }
        }
      g_clear_pointer (&lines, g_strfreev);
    }
  /* "N: NAME@PEER: <…". A deleted namespace is torn down by the kernel a
   * moment later, its veth pair with it: a link may still be listed. */
  if (ip_run (&links, NULL, "-o", "link", "show", NULL))
    {
      lines = g_strsplit (links, "\n", -1);
      for (guint i = 0; lines[i] != NULL; i++)
        {
          const char *start = strstr (lines[i], ": ");
          g_autofree char *name = start != NULL ? g_strndup (start + 2, strcspn (start + 2, "@:"))
                                                : NULL;

          if (name != NULL && leftover_is_stale (name))
            {
              g_test_message ("removing the leftover link %s", name);
              ip_run (NULL, NULL, "link", "delete", name, NULL);
            }
        }
    }
}

/* 10.213.N.0/30 with N from the pid, moved on while another run's outer
 * address holds it. */
static guint
pick_subnet (void)
{
  for (guint i = 0; i < 256; i++)
    {
      guint n = ((guint) getpid () + i) % 256;
      g_autofree char *subnet = g_strdup_printf ("10.213.%u.0/30", n);
      g_autofree char *holders = NULL;

      if (ip_run (&holders, NULL, "-o", "addr", "show", "to", subnet, NULL) &&
          holders[0] == '\0')
        return n;
    }
  g_error ("every 10.213.N.0/30 is in use on this host");
}

/* The namespace with lo up and the veth pair, addresses on both ends. */
static void
make_network (NetCut *fixture)
{
  g_autoptr(GError) error = NULL;
  guint n = pick_subnet ();
  g_autofree char *outer = g_strdup_printf ("10.213.%u.1/30", n);
  g_autofree char *inner = g_strdup_printf ("10.213.%u.2/30", n);

  fixture->outer_address = g_strdup_printf ("10.213.%u.1", n);
  if (ip_run (NULL, &error, "link", "add", fixture->outer_link, "type", "veth",
              "peer", "name", fixture->inner_link, NULL) &&
      ip_run (NULL, &error, "link", "set", fixture->inner_link, "netns", fixture->netns, NULL) &&
      ip_run (NULL, &error, "addr", "add", outer, "dev", fixture->outer_link, NULL) &&
      ip_run (NULL, &error, "link", "set", fixture->outer_link, "up", NULL) &&
      ip_run (NULL, &error, "-n", fixture->netns, "addr", "add", inner,
              "dev", fixture->inner_link, NULL) &&
      ip_run (NULL, &error, "-n", fixture->netns, "link", "set", fixture->inner_link, "up", NULL))
    ip_run (NULL, &error, "-n", fixture->netns, "link", "set", "lo", "up", NULL);
  g_assert_no_error (error);
}

/* The parent: checks, then makes the namespace and the links. */
static void
make_test_network (NetCut *fixture)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *list = NULL;
  g_autofree char *shared = NULL;

  if (getuid () != 0)
    {
      g_test_skip ("needs root: it makes a network namespace and a veth pair");
      return;
    }
  if (!ip_run (&list, &error, "netns", "list", NULL))
    {
      g_autofree char *reason = g_strdup_printf ("ip netns is unavailable: %s", error->message);

      g_test_skip (reason);
      return;
    }
  if (etcd_fixture_skip_if_missing ())
    return;

  remove_leftovers ();
  fixture->netns = g_strdup_printf (NETCUT_PREFIX "%d", (int) getpid ());
  fixture->outer_link = g_strconcat (fixture->netns, "a", NULL);
  fixture->inner_link = g_strconcat (fixture->netns, "b", NULL);
  g_assert_cmpuint (strlen (fixture->outer_link), <, 16);   /* IFNAMSIZ */
  if (!ip_run (NULL, &error, "netns", "add", fixture->netns, NULL))
    {
      g_autofree char *reason = g_strdup_printf ("cannot make a network namespace: %s",
                                                 error->message);

      g_test_skip (reason);
      return;
    }
  fixture->made_network = TRUE;
  make_network (fixture);
  shared = g_strdup_printf ("%s %s %s", fixture->netns, fixture->outer_link,
                            fixture->outer_address);
  g_setenv (NETCUT_ENV, shared, TRUE);   /* the child inherits it */
  fixture->ready = TRUE;
}

/* The child: the parent's network, then etcd on it and on loopback. */
static void
start_test_cluster (NetCut *fixture)
{
  g_auto(GStrv) shared = g_strsplit (g_getenv (NETCUT_ENV), " ", 3);

  g_assert_cmpuint (g_strv_length (shared), ==, 3);
  fixture->netns = g_strdup (shared[0]);
  fixture->outer_link = g_strdup (shared[1]);
  fixture->outer_address = g_strdup (shared[2]);
  fixture->ready = fixture_start (&fixture->cluster, fixture->outer_address);
}

static void
netcut_set_up (NetCut        *fixture,
               gconstpointer  data)
{
  if (g_test_subprocess ())
    start_test_cluster (fixture);
  else
    make_test_network (fixture);
}

static void
netcut_tear_down (NetCut        *fixture,
                  gconstpointer  data)
{
  /* Hosts first: a process still in the namespace would keep it alive. */
  fixture_stop (&fixture->cluster);
  if (fixture->made_network)
    {
      /* The inner end goes with the namespace, and the pair with it; the
       * outer one is deleted in case moving the inner end failed. */
      ip_run (NULL, NULL, "netns", "delete", fixture->netns, NULL);
      ip_run (NULL, NULL, "link", "delete", fixture->outer_link, NULL);
      g_unsetenv (NETCUT_ENV);
    }
  g_free (fixture->netns);
  g_free (fixture->outer_link);
  g_free (fixture->inner_link);
  g_free (fixture->outer_address);
}

/* Parses /proc/PID/stat: its state letter and parent. */
static gboolean
proc_stat (pid_t  pid,
           char  *state,
           pid_t *parent)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *contents = NULL;
  const char *after_name;
  int parent_pid = 0;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return FALSE;
  /* The name in parentheses may hold anything, spaces and ")" included. */
  after_name = strrchr (contents, ')');
  if (after_name == NULL || sscanf (after_name + 1, " %c %d", state, &parent_pid) != 2)
    return FALSE;
  *parent = parent_pid;
  return TRUE;
}

/* Dead: no such process, or a zombie not reaped yet. */
static gboolean
pid_is_alive (pid_t pid)
{
  char state = 0;
  pid_t parent = 0;

  return proc_stat (pid, &state, &parent) && state != 'Z' && state != 'X';
}

/* @pid and its ancestors up to, not including, @host; NULL when @host is
 * not among its ancestors. */
static GArray *
descent_from (pid_t pid,
              GPid  host)
{
  g_autoptr(GArray) pids = g_array_new (FALSE, FALSE, sizeof (pid_t));

  while (pid != host)
    {
      char state = 0;
      pid_t parent = 0;

      if (pid <= 1 || !proc_stat (pid, &state, &parent))
        return NULL;
      g_array_append_val (pids, pid);
      pid = parent;
    }
  return g_steal_pointer (&pids);
}

/* The processes of @host's sleeper: `sleep 98765` and every ancestor below
 * @host (bubblewrap's, whatever the bubblewrap backend puts in between).
 * Only @host's: another test run on this machine may have a sleeper too.
 * Waits for it 10 s at most (polling, as sleeper_becomes() does). */
static GArray *
find_sleeper (GPid host)
{
  const char *argv[] = { "pgrep", "-f", "^/usr/bin/sleep 98765$", NULL };

  for (guint i = 0; i < 100; i++)
    {
      g_autofree char *out = NULL;
      g_auto(GStrv) lines = NULL;

      g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, NULL,
                    NULL, NULL);
      lines = g_strsplit (out != NULL ? out : "", "\n", -1);
      for (guint j = 0; lines[j] != NULL; j++)
        {
          GArray *pids = lines[j][0] != '\0'
            ? descent_from ((pid_t) g_ascii_strtoll (lines[j], NULL, 10), host) : NULL;

          if (pids != NULL)
            return pids;
        }
      g_usleep (100 * 1000);
    }
  g_error ("no sleeper of host %d after 10 s", (int) host);
}

/* The number of manifests (checkpoints) in the store. */
static guint
count_manifests (Fixture *cluster)
{
  g_autofree char *path = g_build_filename (cluster->store, "manifests", NULL);
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  guint n = 0;

  while (dir != NULL && g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

typedef struct
{
  GArray *pids;
  gint64 gone_at;        /* every sleeper process first seen dead; G_MAXINT64 before */
  gint64 last_look_at;   /* the last look, just before the last resume was sent */
} SleeperWatch;

static void
look_at_sleeper (gpointer user_data)
{
  SleeperWatch *watch = user_data;

  watch->last_look_at = g_get_monotonic_time ();
  if (watch->gone_at != G_MAXINT64)
    return;
  for (guint i = 0; i < watch->pids->len; i++)
    if (pid_is_alive (g_array_index (watch->pids, pid_t, i)))
      return;
  watch->gone_at = g_get_monotonic_time ();
}

/* The child's part of test_network_cut_fenced(). */
static void
network_cut_fenced (NetCut *fixture)
{
  Fixture *cluster = &fixture->cluster;
  const char *wrapper[] = { "ip", "netns", "exec", fixture->netns, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *session = NULL;
  g_autofree char *resume = NULL;
  g_autofree char *busy = NULL;
  g_autofree char *resumed = NULL;
  g_autofree char *reply = NULL;
  g_autofree char *stop = NULL;
  g_autofree char *content = NULL;
  SleeperWatch watch = { NULL, G_MAXINT64, 0 };
  Host *owner = NULL, *other;
  guint manifests;
  gint64 cut_at, took_over_at, waited = 0;

  ready = host_spawn (cluster, wrapper, etcd_fixture_get_extra_endpoints (cluster->etcd), &owner);
  g_assert_cmpstr (ready, ==, "ready");
  other = host_start (cluster);
  session = make_session (owner);
  g_free (host_ok (other, "prewarm"));
  g_free (host_ok (owner, "spawn-sleep"));
  watch.pids = find_sleeper ((GPid) g_ascii_strtoll (g_subprocess_get_identifier (owner->process),
                                                     NULL, 10));
  note ("the sleeper's processes: %u", watch.pids->len);

  resume = g_strdup_printf ("resume %s", session);
  busy = host_call (other, resume);
  g_assert_true (g_str_has_prefix (busy, "error SANDBOX_BUSY"));   /* the owner is alive */
  manifests = count_manifests (cluster);

  cut_at = g_get_monotonic_time ();
  ip_run (NULL, &error, "link", "set", fixture->outer_link, "down", NULL);
  g_assert_no_error (error);
  resumed = resume_when_free_watching (other, session, look_at_sleeper, &watch, &waited);
  g_assert_cmpstr (resumed, ==, "ok");
  /* The claim happened after the last look: the sleeper must have been
   * seen gone by then. */
  took_over_at = watch.last_look_at;
  if (watch.gone_at != G_MAXINT64)
    note ("after the cut: sleeper gone at %" G_GINT64_FORMAT " ms, taken over after "
          "%" G_GINT64_FORMAT " ms (TTL %d s)", (watch.gone_at - cut_at) / 1000,
          (took_over_at - cut_at) / 1000, TTL_SECONDS);
  else
    note ("after the cut: taken over after %" G_GINT64_FORMAT " ms (TTL %d s) "
          "while the sleeper still ran", (took_over_at - cut_at) / 1000, TTL_SECONDS);
  g_assert_cmpint (watch.gone_at, <=, took_over_at);
  g_assert_cmpint (took_over_at - cut_at, <=, (TTL_SECONDS + 2) * G_USEC_PER_SEC);

  /* The kill and the STOPPED state come from one stop, but the session
   * may say STOPPED a moment after its commands are gone. */
  reply = host_call (owner, "read a");
  for (guint i = 0; i < 20 && !g_str_has_prefix (reply, "error SANDBOX_STOPPED"); i++)
    {
      g_usleep (100 * 1000);
      g_free (reply);
      reply = host_call (owner, "read a");
    }
  note ("the cut owner: %s", reply);
  g_assert_true (g_str_has_prefix (reply, "error SANDBOX_STOPPED"));
  stop = host_call (owner, "stop");
  g_assert_cmpstr (stop, ==, "ok");   /* already stopped: nothing published */
  g_assert_cmpuint (count_manifests (cluster), ==, manifests);

  content = host_ok (other, "read a");
  g_assert_cmpstr (content, ==, "checkpointed");
  g_array_unref (watch.pids);
}

/* The owner cut off from etcd (its veth down) kills its commands at its
 * own deadline, before its lease expires in etcd, so before another host
 * can take the session over; its handle is STOPPED and it publishes no
 * checkpoint. To see it fail, empty the kill loop of on_lost()
 * (sandbox-cluster-backend.c): the second host takes over while the cut
 * owner's sleeper still runs. */
static void
test_network_cut_fenced (NetCut        *fixture,
                         gconstpointer  data)
{
  if (!fixture->ready)
    return;
  if (g_test_subprocess ())
    {
      network_cut_fenced (fixture);
      return;
    }
  g_test_trap_subprocess (NULL, 90 * G_USEC_PER_SEC,
                          G_TEST_SUBPROCESS_INHERIT_STDOUT | G_TEST_SUBPROCESS_INHERIT_STDERR);
  /* Not g_test_trap_assert_passed(): its abort would skip the teardown. */
  if (!g_test_trap_has_passed ())
    {
      g_printerr ("the test's child failed: its error is above\n");
      g_test_fail ();
    }
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/cluster-driver/network-cut-fenced", NetCut, NULL, netcut_set_up,
              test_network_cut_fenced, netcut_tear_down);

  return g_test_run ();
}
