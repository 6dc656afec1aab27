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

#include "cluster-driver-kit.h"

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
  key = hosts_start_two (fixture, &a, &b);
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
  key = hosts_start_two (fixture, &a, &b);
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

/* A host frozen (SIGSTOP) past its lease: once it runs again it fences
 * itself — its command is killed, its handle STOPPED — and it never
 * publishes the checkpoint its stop would take: the session resumes
 * elsewhere with the last committed content. To see it fail, drop the
 * fencing in on_lost() (sandbox-cluster-backend.c): the frozen owner's handle
 * stays live (reads still answer) and its sleeper survives. @data is the
 * verb that starts the sleeper: a command, or a background command, which
 * the fence ends just the same. */
static void
test_frozen_owner_fenced (Fixture       *fixture,
                          gconstpointer  data)
{
  const char *spawn_verb = data;
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
  g_free (host_ok (a, spawn_verb));
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

/* Kills @host as a crash would, and waits until it is gone. */
static void
host_crash (Host *host)
{
  g_subprocess_force_exit (host->process);
  g_subprocess_wait (host->process, NULL, NULL);
}

/* A new session on @host holding a = "1" and checkpointed live, with a
 * sleeper running through the checkpoint, then a = "2" and b written
 * after it; @host owns it live. Returns "KEY SESSION". */
static char *
make_live_checkpointed (Host *host)
{
  g_autofree char *key = host_ok (host, "prewarm");
  g_autofree char *create = g_strdup_printf ("create %s", key);
  g_autofree char *id = host_ok (host, create);
  g_autofree char *after = NULL;

  g_free (host_ok (host, "write a 1"));
  g_free (host_ok (host, "spawn-sleep"));
  g_assert_true (sleeper_becomes (TRUE));
  g_free (host_ok (host, "checkpoint"));

  /* The session runs on: its command, its files. */
  g_assert_true (sleeper_runs ());
  g_free (host_ok (host, "write a 2"));
  g_free (host_ok (host, "write b after-the-checkpoint"));
  after = host_ok (host, "read a");
  g_assert_cmpstr (after, ==, "2");
  return g_strdup_printf ("%s %s", key, id);
}

/* Asserts the resumed session on @host is the live checkpoint's: a = "1",
 * no b. */
static void
assert_at_live_checkpoint (Host *host)
{
  g_autofree char *a = host_ok (host, "read a");
  g_autofree char *b = host_call (host, "read b");

  g_assert_cmpstr (a, ==, "1");
  g_test_message ("read b: %s", b);
  g_assert_true (g_str_has_prefix (b, "error g-io-error-quark"));
}

/* A live checkpoint, then the owner dies: another host resumes the
 * session as it was at the checkpoint, not as the session left it. To see
 * it fail, drop the commit from checkpoint_and_commit()
 * (sandbox-cluster-backend.c): the record names no checkpoint and the
 * resume is a fresh copy of the template (no a). */
static void
test_live_checkpoint_then_crash (Fixture       *fixture,
                                 gconstpointer  data)
{
  Host *a, *b;
  g_autofree char *session = NULL;
  g_autofree char *resumed = NULL;
  gint64 waited = 0;

  if (fixture->etcd == NULL)
    return;
  a = host_start (fixture);
  b = host_start (fixture);
  g_free (host_ok (b, "prewarm"));
  session = make_live_checkpointed (a);

  host_crash (a);
  resumed = resume_when_free (b, session, &waited);
  g_assert_cmpstr (resumed, ==, "ok");
  assert_at_live_checkpoint (b);
  g_assert_true (sleeper_becomes (FALSE));
}

/* The same, resumed on the crashed host itself (restarted on its state
 * directory): its copy of the session ran on after the checkpoint, so the
 * fast path must not take it for the checkpoint. To see it fail, write the
 * marker in sandbox_cluster_backend_checkpoint_live() as the stop's
 * checkpoint does: the resume then keeps a = "2" and b. */
static void
test_live_checkpoint_no_fast_path (Fixture       *fixture,
                                   gconstpointer  data)
{
  Host *a, *restarted = NULL;
  g_autofree char *session = NULL;
  g_autofree char *line = NULL;
  g_autofree char *resumed = NULL;
  gint64 waited = 0;

  if (fixture->etcd == NULL)
    return;
  a = host_start (fixture);
  session = make_live_checkpointed (a);

  host_crash (a);
  g_assert_true (sleeper_becomes (FALSE));
  line = host_spawn_as (fixture, NULL, etcd_fixture_get_endpoints (fixture->etcd), 0,
                        &restarted);
  g_assert_cmpstr (line, ==, "ready");
  resumed = resume_when_free (restarted, session, &waited);
  g_assert_cmpstr (resumed, ==, "ok");
  assert_at_live_checkpoint (restarted);
}

/* The etcd record of @session ("KEY SESSION"), as the hosts wrote it. */
static char *
read_record (Fixture    *fixture,
             const char *session)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *key = g_strdup_printf ("/test/sessions/%s/record", strchr (session, ' ') + 1);
  char *record = etcd_fixture_get_value (fixture->etcd, key, &error);

  g_assert_no_error (error);
  return record;
}

/* A host frozen past its lease refuses a checkpoint once it runs again
 * (STOPPED), and the record still names the checkpoint it had. Three
 * things refuse it: the handle fenced by on_lost(), the host's own check
 * of its deadline before a write (fenced_txn() in sandbox-cluster-owner.c),
 * and etcd's compare on the epoch (the other host owns it now). To see it
 * fail, take all three out: the checkpoint succeeds and the record then
 * names the frozen host's workspace. */
static void
test_checkpoint_refused_after_lease_lost (Fixture       *fixture,
                                          gconstpointer  data)
{
  Host *a, *b;
  g_autofree char *session = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *resumed = NULL;
  g_autofree char *reply = NULL;
  g_autofree char *content = NULL;
  gint64 waited = 0;

  if (fixture->etcd == NULL)
    return;
  start_two_hosts (fixture, &a, &b, &session);
  before = read_record (fixture, session);
  g_test_message ("record: %s", before);

  g_subprocess_send_signal (a->process, SIGSTOP);
  resumed = resume_when_free (b, session, &waited);   /* the lease expired */
  g_assert_cmpstr (resumed, ==, "ok");
  g_subprocess_send_signal (a->process, SIGCONT);

  reply = host_call (a, "checkpoint");
  g_test_message ("the frozen owner's checkpoint: %s", reply);
  g_assert_true (g_str_has_prefix (reply, "error SANDBOX_STOPPED"));
  after = read_record (fixture, session);
  g_assert_cmpstr (after, ==, before);
  content = host_ok (b, "read a");
  g_assert_cmpstr (content, ==, "checkpointed");
}

/* After stop, a checkpoint is STOPPED and publishes nothing. To see it
 * fail, drop the stopped check from begin_checkpoint() (sandbox-handle.c):
 * the checkpoint then walks and commits a session this host released. */
static void
test_checkpoint_after_stop (Fixture       *fixture,
                            gconstpointer  data)
{
  Host *a;
  g_autofree char *key = NULL;
  g_autofree char *create = NULL;
  g_autofree char *id = NULL;
  g_autofree char *session = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *reply = NULL;

  if (fixture->etcd == NULL)
    return;
  a = host_start (fixture);
  key = host_ok (a, "prewarm");
  create = g_strdup_printf ("create %s", key);
  id = host_ok (a, create);
  session = g_strdup_printf ("%s %s", key, id);
  g_free (host_ok (a, "write a stopped"));
  g_free (host_ok (a, "stop"));
  before = read_record (fixture, session);

  reply = host_call (a, "checkpoint");
  g_assert_cmpstr (reply, ==, "error SANDBOX_STOPPED Sandbox session is stopped");
  after = read_record (fixture, session);
  g_assert_cmpstr (after, ==, before);
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
    line = host_spawn (fixture, NULL, endpoint, &host);
  }
  /* From etcd, not from a driver that failed to load. */
  g_assert_true (g_str_has_prefix (line, "error SANDBOX_UNAVAILABLE"));
  g_assert_nonnull (strstr (line, "etcd"));
  g_assert_false (g_subprocess_wait_check (host->process, NULL, NULL));
}

/* The registry as @host reads it (list-hosts), unescaped. */
static char *
registry_of (Host *host)
{
  g_autofree char *escaped = host_ok (host, "hosts");

  return g_strcompress (escaped);
}

static char *
registry_entry (const char *host_id,
                guint       free_slots,
                const char *template_key)
{
  return g_strdup_printf ("{\"hostId\":\"%s\",\"freeSlots\":%u,\"templates\":[%s%s%s]}",
                          host_id, free_slots, template_key != NULL ? "\"" : "",
                          template_key != NULL ? template_key : "",
                          template_key != NULL ? "\"" : "");
}

/* Each host announces itself (free session slots, templates stored) on its
 * lease, again when either changes; pick-host prefers a host with the
 * template; a killed host leaves the registry with its lease. To see it
 * fail, drop the announce() calls in sandbox-cluster-backend.c. */
static void
test_registry_and_placement (Fixture       *fixture,
                             gconstpointer  data)
{
  Host *a, *b;
  g_autofree char *key = NULL;
  g_autofree char *pick = NULL;
  g_autofree char *create = NULL;
  g_autofree char *session = NULL;
  g_autofree char *picked = NULL;
  g_autofree char *a_entry = NULL;
  g_autofree char *b_entry = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *registry = NULL;
  gint64 deadline;

  if (fixture->etcd == NULL)
    return;
  a = host_start (fixture);
  b = host_start (fixture);

  a_entry = registry_entry ("host-0", 64, NULL);
  b_entry = registry_entry ("host-1", 64, NULL);
  expected = g_strdup_printf ("[%s,%s]", a_entry, b_entry);
  registry = registry_of (b);
  g_assert_cmpstr (registry, ==, expected);

  /* A prewarm on a: a announces the template and, with a live session, one
   * slot fewer. */
  key = host_ok (a, "prewarm");
  create = g_strdup_printf ("create %s", key);
  session = host_ok (a, create);
  g_free (a_entry);
  a_entry = registry_entry ("host-0", 63, key);
  g_free (expected);
  expected = g_strdup_printf ("[%s,%s]", a_entry, b_entry);
  g_free (registry);
  registry = registry_of (b);
  g_assert_cmpstr (registry, ==, expected);

  /* With enough samples both hosts are seen: the one with the template wins
   * although b has more free slots. */
  pick = g_strdup_printf ("pick %s 64", key);
  picked = host_ok (b, pick);
  g_assert_cmpstr (picked, ==, "host-0");
  g_free (host_ok (a, "stop"));
  g_free (a_entry);
  a_entry = registry_entry ("host-0", 64, key);
  g_free (expected);
  expected = g_strdup_printf ("[%s,%s]", a_entry, b_entry);
  g_free (registry);
  registry = registry_of (b);
  g_assert_cmpstr (registry, ==, expected);

  /* A dead host leaves with its lease: b is the only place left. */
  g_subprocess_force_exit (a->process);
  g_subprocess_wait (a->process, NULL, NULL);
  deadline = g_get_monotonic_time () + (TTL_SECONDS + 3) * G_USEC_PER_SEC;
  do
    {
      g_free (registry);
      g_usleep (100 * 1000);
      registry = registry_of (b);
    }
  while (strstr (registry, "host-0") != NULL && g_get_monotonic_time () < deadline);
  g_free (expected);
  expected = g_strdup_printf ("[%s]", b_entry);
  g_assert_cmpstr (registry, ==, expected);
  g_free (picked);
  picked = host_ok (b, pick);
  g_assert_cmpstr (picked, ==, "host-1");
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
  g_test_add ("/cluster-driver/frozen-owner-fenced", Fixture, "spawn-sleep", fixture_set_up,
              test_frozen_owner_fenced, fixture_tear_down);
  g_test_add ("/cluster-driver/frozen-owner-fenced-background", Fixture,
              "spawn-background-sleep", fixture_set_up, test_frozen_owner_fenced,
              fixture_tear_down);
  g_test_add ("/cluster-driver/live-checkpoint-then-crash", Fixture, NULL, fixture_set_up,
              test_live_checkpoint_then_crash, fixture_tear_down);
  g_test_add ("/cluster-driver/live-checkpoint-no-fast-path", Fixture, NULL, fixture_set_up,
              test_live_checkpoint_no_fast_path, fixture_tear_down);
  g_test_add ("/cluster-driver/checkpoint-refused-after-lease-lost", Fixture, NULL, fixture_set_up,
              test_checkpoint_refused_after_lease_lost, fixture_tear_down);
  g_test_add ("/cluster-driver/checkpoint-after-stop", Fixture, NULL, fixture_set_up,
              test_checkpoint_after_stop, fixture_tear_down);
  g_test_add ("/cluster-driver/registry-and-placement", Fixture, NULL, fixture_set_up,
              test_registry_and_placement, fixture_tear_down);
  g_test_add ("/cluster-driver/etcd-down", Fixture, NULL, fixture_set_up, test_etcd_down,
              fixture_tear_down);

  return g_test_run ();
}
