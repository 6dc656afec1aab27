/* test-cluster-driver.c: the `cluster` driver, hosts as processes, a real etcd
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every "host" is a cluster-driver-host process: its own state directory,
 * its own etcd lease, its own bubblewrap sandboxes; all share one etcd (the
 * fixture, on loopback) and one checkpoint store. Tests skip with the
 * reason when etcd is not installed.
 */

#include "config.h"

#include <signal.h>
#include <string.h>

#include <glib/gstdio.h>
#include <sandbox.h>

#include "etcd-fixture.h"

#define TTL_SECONDS 2

typedef struct
{
  GSubprocess *process;
  GDataInputStream *output;
  GOutputStream *input;
} Host;

typedef struct
{
  EtcdFixture *etcd;
  char *base;
  char *store;
  GPtrArray *hosts;
} Fixture;

static void
host_free (Host *host)
{
  if (g_subprocess_get_identifier (host->process) != NULL)
    {
      g_subprocess_send_signal (host->process, SIGCONT);
      g_output_stream_close (host->input, NULL, NULL);   /* exits at end of input */
    }
  g_subprocess_wait (host->process, NULL, NULL);
  g_clear_object (&host->process);
  g_clear_object (&host->output);
  g_free (host);
}

static char *
host_reply (Host *host)
{
  g_autoptr(GError) error = NULL;
  char *line = g_data_input_stream_read_line_utf8 (host->output, NULL, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (line);
  return line;
}

static void
host_send (Host       *host,
           const char *command)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *line = g_strconcat (command, "\n", NULL);

  g_output_stream_write_all (host->input, line, strlen (line), NULL, NULL, &error);
  g_assert_no_error (error);
}

/* Sends a command and returns its reply line. */
static char *
host_call (Host       *host,
           const char *command)
{
  host_send (host, command);
  return host_reply (host);
}

/* Sends a command that must succeed; returns what follows "ok ". */
static char *
host_ok (Host       *host,
         const char *command)
{
  g_autofree char *reply = host_call (host, command);

  if (!g_str_has_prefix (reply, "ok"))
    g_error ("‘%s’ failed: %s", command, reply);
  return g_strdup (reply[2] == ' ' ? reply + 3 : "");
}

/* A new host process; its first line is "ready" or "error …". */
static char *
host_spawn (Fixture     *fixture,
            const char  *endpoints,
            Host       **out)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *directory = g_path_get_dirname (self);
  g_autofree char *helper = g_build_filename (directory, "cluster-driver-host", NULL);
  g_autofree char *id = g_strdup_printf ("host-%u", fixture->hosts->len);
  g_autofree char *state = g_build_filename (fixture->base, id, NULL);
  g_autofree char *ttl = g_strdup_printf ("%d", TTL_SECONDS);
  Host *host = g_new0 (Host, 1);
  char *line;

  host->process = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                                    &error, helper, "--endpoints", endpoints, "--state", state,
                                    "--store", fixture->store, "--id", id, "--ttl", ttl, NULL);
  g_assert_no_error (error);
  host->output = g_data_input_stream_new (g_subprocess_get_stdout_pipe (host->process));
  host->input = g_subprocess_get_stdin_pipe (host->process);
  g_ptr_array_add (fixture->hosts, host);
  line = host_reply (host);
  *out = host;
  return line;
}

static Host *
host_start (Fixture *fixture)
{
  Host *host = NULL;
  g_autofree char *line = host_spawn (fixture, etcd_fixture_get_endpoints (fixture->etcd), &host);

  g_assert_cmpstr (line, ==, "ready");
  return host;
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->hosts = g_ptr_array_new_with_free_func ((GDestroyNotify) host_free);
  if (etcd_fixture_skip_if_missing ())
    return;
  fixture->etcd = etcd_fixture_start (1, &error);
  g_assert_no_error (error);
  fixture->base = g_dir_make_tmp ("test-cluster-driver-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->store = g_build_filename (fixture->base, "store", NULL);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_clear_pointer (&fixture->hosts, g_ptr_array_unref);
  g_clear_pointer (&fixture->etcd, etcd_fixture_free);
  if (fixture->base != NULL)
    {
      const char *argv[] = { "rm", "-rf", fixture->base, NULL };

      g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL,
                    NULL, NULL);
    }
  g_free (fixture->base);
  g_free (fixture->store);
}

/* A session with a checkpoint holding a = "checkpointed" and, on top, a
 * change never checkpointed; @host owns it live. Returns "KEY SESSION". */
static char *
make_session (Host *host)
{
  g_autofree char *key = host_ok (host, "prewarm");
  g_autofree char *create = g_strdup_printf ("create %s", key);
  g_autofree char *id = host_ok (host, create);
  g_autofree char *resume = g_strdup_printf ("resume %s %s", key, id);

  g_free (host_ok (host, "write a checkpointed"));
  g_free (host_ok (host, "stop"));
  g_free (host_ok (host, resume));
  g_free (host_ok (host, "write a lost-in-the-crash"));
  return g_strdup_printf ("%s %s", key, id);
}

/* Two hosts with the template; the first owns a session made by
 * make_session(), whose "KEY SESSION" goes to @session. */
static void
start_two_hosts (Fixture  *fixture,
                 Host    **a,
                 Host    **b,
                 char    **session)
{
  *a = host_start (fixture);
  *b = host_start (fixture);
  *session = make_session (*a);
  g_free (host_ok (*b, "prewarm"));
}

/* Resumes @session on @host until it is no longer BUSY; returns the reply. */
static char *
resume_when_free (Host       *host,
                  const char *session,
                  gint64     *waited_ms)
{
  g_autofree char *command = g_strdup_printf ("resume %s", session);
  gint64 start = g_get_monotonic_time ();

  while (TRUE)
    {
      char *reply = host_call (host, command);

      if (!g_str_has_prefix (reply, "error SANDBOX_BUSY") ||
          g_get_monotonic_time () - start > 30 * G_USEC_PER_SEC)
        {
          *waited_ms = (g_get_monotonic_time () - start) / 1000;
          return reply;
        }
      g_free (reply);
      g_usleep (100 * 1000);   /* polling etcd's view: no signal to wait on */
    }
}

/* A host killed with SIGKILL keeps its sessions until its lease expires
 * (BUSY before), then another host resumes them with the content of the
 * last checkpoint — not the change made after it. To see it fail, make
 * bring_local_copy() always take the fast path: the second host has no
 * copy of the session and its resume fails. */
static void
test_takeover_after_kill (Fixture       *fixture,
                          gconstpointer  data)
{
  Host *a, *b;
  g_autofree char *session = NULL;
  g_autofree char *busy = NULL;
  g_autofree char *resumed = NULL;
  g_autofree char *content = NULL;
  g_autofree char *resume = NULL;
  gint64 waited = 0;

  if (fixture->etcd == NULL)
    return;
  start_two_hosts (fixture, &a, &b, &session);

  resume = g_strdup_printf ("resume %s", session);
  busy = host_call (b, resume);
  g_assert_true (g_str_has_prefix (busy, "error SANDBOX_BUSY"));

  g_subprocess_force_exit (a->process);
  g_subprocess_wait (a->process, NULL, NULL);
  resumed = resume_when_free (b, session, &waited);
  g_test_message ("resumed on another host %" G_GINT64_FORMAT " ms after the kill (TTL %d s)",
                  waited, TTL_SECONDS);
  g_assert_cmpstr (resumed, ==, "ok");
  content = host_ok (b, "read a");
  g_assert_cmpstr (content, ==, "checkpointed");
}

/* A session whose host died before its first stop has no checkpoint: it
 * resumes elsewhere as a fresh copy of its template (the change made on the
 * dead host is lost, as the docs say). To see it fail, make
 * bring_local_copy() import a NULL digest as a checkpoint. */
static void
test_never_checkpointed (Fixture       *fixture,
                         gconstpointer  data)
{
  Host *a, *b;
  g_autofree char *key = NULL;
  g_autofree char *id = NULL;
  g_autofree char *create = NULL;
  g_autofree char *session = NULL;
  g_autofree char *resumed = NULL;
  g_autofree char *hello = NULL;
  g_autofree char *lost = NULL;
  gint64 waited = 0;

  if (fixture->etcd == NULL)
    return;
  a = host_start (fixture);
  b = host_start (fixture);
  key = host_ok (a, "prewarm");
  g_free (host_ok (b, "prewarm"));
  create = g_strdup_printf ("create %s", key);
  id = host_ok (a, create);
  g_free (host_ok (a, "write b never-checkpointed"));
  g_subprocess_force_exit (a->process);
  g_subprocess_wait (a->process, NULL, NULL);

  session = g_strdup_printf ("%s %s", key, id);
  resumed = resume_when_free (b, session, &waited);
  g_assert_cmpstr (resumed, ==, "ok");
  hello = host_ok (b, "read hello.txt");
  g_assert_cmpstr (hello, ==, "hello\\n");
  lost = host_call (b, "read b");
  g_test_message ("read b: %s", lost);
  g_assert_true (g_str_has_prefix (lost, "error g-io-error-quark"));
}

/* N hosts racing to resume one session: exactly one wins, the others are
 * BUSY. To see it fail, make resume_session() skip the claim. */
static void
test_racing_resume (Fixture       *fixture,
                    gconstpointer  data)
{
  Host *hosts[4];
  g_autofree char *key = NULL;
  g_autofree char *id = NULL;
  g_autofree char *create = NULL;
  g_autofree char *resume = NULL;
  guint won = 0, busy = 0;

  if (fixture->etcd == NULL)
    return;
  for (guint i = 0; i < G_N_ELEMENTS (hosts); i++)
    {
      hosts[i] = host_start (fixture);
      g_free (key);
      key = host_ok (hosts[i], "prewarm");
    }
  create = g_strdup_printf ("create %s", key);
  id = host_ok (hosts[0], create);
  g_free (host_ok (hosts[0], "write a shared"));
  g_free (host_ok (hosts[0], "stop"));

  /* All at once: every request is written before any reply is read. */
  resume = g_strdup_printf ("resume %s %s", key, id);
  for (guint i = 0; i < G_N_ELEMENTS (hosts); i++)
    host_send (hosts[i], resume);
  for (guint i = 0; i < G_N_ELEMENTS (hosts); i++)
    {
      g_autofree char *reply = host_reply (hosts[i]);

      g_test_message ("host %u: %s", i, reply);
      if (strcmp (reply, "ok") == 0)
        {
          g_autofree char *content = host_ok (hosts[i], "read a");

          g_assert_cmpstr (content, ==, "shared");
          won++;
        }
      else if (g_str_has_prefix (reply, "error SANDBOX_BUSY"))
        busy++;
    }
  g_assert_cmpuint (won, ==, 1);
  g_assert_cmpuint (busy, ==, G_N_ELEMENTS (hosts) - 1);
}

/* A blob damaged in the shared store: the resume on another host fails
 * with UNAVAILABLE, never a workspace with other content. To see it fail,
 * drop the digest check in copy_blob() (checkpoint-materialise.c): the
 * resume then succeeds with the forged bytes. */
static void
test_corrupted_blob (Fixture       *fixture,
                     gconstpointer  data)
{
  Host *a, *b;
  g_autofree char *key = NULL;
  g_autofree char *id = NULL;
  g_autofree char *create = NULL;
  g_autofree char *resume = NULL;
  g_autofree char *reply = NULL;
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "genuine", -1);
  g_autofree char *fan = g_strndup (digest, 2);
  g_autofree char *blob = NULL;
  g_autoptr(GError) error = NULL;

  if (fixture->etcd == NULL)
    return;
  a = host_start (fixture);
  b = host_start (fixture);
  key = host_ok (a, "prewarm");
  g_free (host_ok (b, "prewarm"));
  create = g_strdup_printf ("create %s", key);
  id = host_ok (a, create);
  g_free (host_ok (a, "write data genuine"));
  g_free (host_ok (a, "stop"));

  blob = g_build_filename (fixture->store, "blobs", fan, digest, NULL);
  g_assert_no_errno (g_chmod (blob, 0600));
  g_file_set_contents (blob, "forged!", -1, &error);
  g_assert_no_error (error);

  resume = g_strdup_printf ("resume %s %s", key, id);
  reply = host_call (b, resume);
  g_assert_true (g_str_has_prefix (reply, "error SANDBOX_UNAVAILABLE"));
}

/* Whether a process runs `sleep 98765` (the helper's spawn-sleep). */
static gboolean
sleeper_runs (void)
{
  const char *argv[] = { "pgrep", "-f", "^/usr/bin/sleep 98765$", NULL };
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                NULL, NULL, NULL, NULL, &status, NULL);
  return g_spawn_check_wait_status (status, NULL);
}

/* Waits (polling: the sleeper is another host's grandchild, no signal
 * reaches this process) until sleeper_runs() is @expected, for 10 s at most. */
static gboolean
sleeper_becomes (gboolean expected)
{
  for (guint i = 0; i < 100; i++)
    {
      if (sleeper_runs () == expected)
        return TRUE;
      g_usleep (100 * 1000);
    }
  return FALSE;
}

/* A host frozen (SIGSTOP) past its lease: once it runs again it fences
 * itself — its command is killed, its handle STOPPED — and it never
 * publishes the checkpoint its stop would take: the session resumes
 * elsewhere with the last committed content. To see it fail, drop the
 * fencing in on_lost() (sandbox-cluster-backend.c): the frozen owner's handle
 * stays live (reads still answer) and its sleeper survives. */
static void
test_frozen_owner_fenced (Fixture       *fixture,
                          gconstpointer  data)
{
  Host *a, *b;
  g_autofree char *session = NULL;
  g_autofree char *reply = NULL;
  g_autofree char *stop = NULL;
  g_autofree char *resumed = NULL;
  g_autofree char *content = NULL;
  gint64 waited = 0;

  if (fixture->etcd == NULL)
    return;
  start_two_hosts (fixture, &a, &b, &session);
  g_free (host_ok (a, "spawn-sleep"));
  g_assert_true (sleeper_becomes (TRUE));

  g_subprocess_send_signal (a->process, SIGSTOP);
  resumed = resume_when_free (b, session, &waited);   /* the lease expired */
  g_assert_cmpstr (resumed, ==, "ok");
  g_subprocess_send_signal (a->process, SIGCONT);

  /* A notices at its deadline, or at its next renewal at the latest. */
  reply = host_call (a, "read a");
  for (guint i = 0; i < 100 && !g_str_has_prefix (reply, "error SANDBOX_STOPPED"); i++)
    {
      g_usleep (100 * 1000);
      g_free (reply);
      reply = host_call (a, "read a");
    }
  g_test_message ("the frozen owner, running again: %s", reply);
  g_assert_true (g_str_has_prefix (reply, "error SANDBOX_STOPPED"));
  stop = host_call (a, "stop");
  g_assert_cmpstr (stop, ==, "ok");   /* already stopped: nothing published */

  content = host_ok (b, "read a");
  g_assert_cmpstr (content, ==, "checkpointed");
  g_free (host_ok (b, "stop"));
  g_assert_true (sleeper_becomes (FALSE));
}

/* etcd not answering at construction: UNAVAILABLE, no local fallback. To
 * see it fail, make init_backend() carry on without a host. */
static void
test_etcd_down (Fixture       *fixture,
                gconstpointer  data)
{
  Host *host = NULL;
  g_autofree char *line = NULL;

  if (fixture->etcd == NULL)
    return;
  /* A port nothing listens on: the fixture's, once it is stopped. */
  {
    g_autofree char *endpoint = g_strdup (etcd_fixture_get_endpoint (fixture->etcd, 0));

    etcd_fixture_stop_member (fixture->etcd, 0);
    line = host_spawn (fixture, endpoint, &host);
  }
  /* From etcd, not from a driver that failed to load. */
  g_assert_true (g_str_has_prefix (line, "error SANDBOX_UNAVAILABLE"));
  g_assert_nonnull (strstr (line, "etcd"));
  g_assert_false (g_subprocess_wait_check (host->process, NULL, NULL));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/cluster-driver/takeover-after-kill", Fixture, NULL, fixture_set_up,
              test_takeover_after_kill, fixture_tear_down);
  g_test_add ("/cluster-driver/never-checkpointed", Fixture, NULL, fixture_set_up,
              test_never_checkpointed, fixture_tear_down);
  g_test_add ("/cluster-driver/racing-resume", Fixture, NULL, fixture_set_up,
              test_racing_resume, fixture_tear_down);
  g_test_add ("/cluster-driver/corrupted-blob", Fixture, NULL, fixture_set_up,
              test_corrupted_blob, fixture_tear_down);
  g_test_add ("/cluster-driver/frozen-owner-fenced", Fixture, NULL, fixture_set_up,
              test_frozen_owner_fenced, fixture_tear_down);
  g_test_add ("/cluster-driver/etcd-down", Fixture, NULL, fixture_set_up, test_etcd_down,
              fixture_tear_down);

  return g_test_run ();
}
