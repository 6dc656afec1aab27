/* test-cluster-records.c: session records in etcd are checked, not trusted
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The attacker of these tests can write etcd keys (here through the
 * fixture, as etcdctl would): each test forges one member of a stopped
 * session's record, and a resume on another host must refuse it with
 * SANDBOX_ERROR_UNAVAILABLE naming the session and the member — then,
 * the genuine record put back, resume it with its own files: a refusal
 * leaves nothing behind (no owner, no copy of the session). Hosts are
 * cluster-driver-host processes, as in test-cluster-driver.c.
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>
#include <sandbox.h>

#include "cluster-driver-kit.h"

/* A new session of @key on @host holding a = @content, stopped (so
 * checkpointed). Returns its id. */
static char *
stopped_session (Host       *host,
                 const char *key,
                 const char *content)
{
  g_autofree char *create = g_strdup_printf ("create %s", key);
  g_autofree char *write = g_strdup_printf ("write a %s", content);
  char *id = host_ok (host, create);

  g_free (host_ok (host, write));
  g_free (host_ok (host, "stop"));
  return id;
}

static char *
record_key (const char *id)
{
  return g_strdup_printf ("/test/sessions/%s/record", id);
}

static char *
get_record (Fixture    *fixture,
            const char *id)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *key = record_key (id);
  char *record = etcd_fixture_get_value (fixture->etcd, key, &error);

  g_assert_no_error (error);
  return record;
}

static void
put_record (Fixture    *fixture,
            const char *id,
            const char *record)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *key = record_key (id);

  g_assert_true (etcd_fixture_put_value (fixture->etcd, key, record, &error));
  g_assert_no_error (error);
}

static void
delete_record (Fixture    *fixture,
               const char *id)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *key = record_key (id);

  g_assert_true (etcd_fixture_delete_key (fixture->etcd, key, &error));
  g_assert_no_error (error);
}

/* @genuine, a record, with its @member set to @value (taken over). */
static char *
forged_record (const char *genuine,
               const char *member,
               JsonNode   *value)
{
  g_autoptr(JsonNode) root = json_from_string (genuine, NULL);

  g_assert_nonnull (root);
  json_object_set_member (json_node_get_object (root), member, value);
  return json_to_string (root, FALSE);
}

static JsonNode *
string_node (const char *text)
{
  JsonNode *node = json_node_new (JSON_NODE_VALUE);

  json_node_set_string (node, text);
  return node;
}

/* The record member @member of session @id as it is now. */
static char *
record_member (Fixture    *fixture,
               const char *id,
               const char *member)
{
  g_autofree char *record = get_record (fixture, id);
  g_autoptr(JsonNode) root = json_from_string (record, NULL);

  return g_strdup (json_object_get_string_member (json_node_get_object (root), member));
}

/* Resuming @id on @host is refused: UNAVAILABLE, naming @id and @member. */
static void
assert_resume_refused (Host       *host,
                       const char *key,
                       const char *id,
                       const char *member)
{
  g_autofree char *resume = g_strdup_printf ("resume %s %s", key, id);
  g_autofree char *reply = host_call (host, resume);
  g_autofree char *quoted = g_strdup_printf ("\"%s\"", member);

  g_test_message ("resume with a forged %s: %s", member, reply);
  g_assert_true (g_str_has_prefix (reply, "error SANDBOX_UNAVAILABLE "));
  g_assert_nonnull (strstr (reply, id));
  g_assert_nonnull (strstr (reply, quoted));
}

/* With the genuine record back, @id resumes on @host with a = @content:
 * the refusal left no owner and no half-made copy behind. */
static void
assert_resumes_genuine (Fixture    *fixture,
                        Host       *host,
                        const char *key,
                        const char *id,
                        const char *genuine,
                        const char *content)
{
  g_autofree char *resume = g_strdup_printf ("resume %s %s", key, id);
  g_autofree char *reply = NULL;
  g_autofree char *read = NULL;

  put_record (fixture, id, genuine);
  reply = host_call (host, resume);
  g_assert_cmpstr (reply, ==, "ok");
  read = host_ok (host, "read a");
  g_assert_cmpstr (read, ==, content);
  g_free (host_ok (host, "stop"));
}

/* The shape of every attack: stopped session @id's record (a = @content)
 * with @member forged to @value (taken) is refused on @b and on @a, the
 * host that made it (which has it at a checkpoint, yet reads the record
 * too); the genuine record put back, it resumes on @b. */
static void
assert_forgery_refused (Fixture    *fixture,
                        Host       *a,
                        Host       *b,
                        const char *key,
                        const char *id,
                        const char *member,
                        JsonNode   *value,
                        const char *content)
{
  g_autofree char *genuine = get_record (fixture, id);
  g_autofree char *forged = forged_record (genuine, member, value);

  put_record (fixture, id, forged);
  assert_resume_refused (b, key, id, member);
  assert_resume_refused (a, key, id, member);
  assert_resumes_genuine (fixture, b, key, id, genuine, content);
}

/* Session 1's record naming session 2's checkpoint: without the manifest's
 * binding to its session (sandbox_cluster_checkpoint_materialise() checking
 * the manifest's "session"), session 1 resumes with session 2's files. */
static void
test_manifest_of_another_session (Fixture       *fixture,
                                  gconstpointer  data)
{
  Host *a, *b;
  g_autofree char *key = NULL;
  g_autofree char *one = NULL;
  g_autofree char *two = NULL;
  g_autofree char *manifest_two = NULL;

  if (fixture->etcd == NULL)
    return;
  key = hosts_start_two (fixture, &a, &b);
  one = stopped_session (a, key, "one");
  two = stopped_session (a, key, "two");

  manifest_two = record_member (fixture, two, "manifest");
  assert_forgery_refused (fixture, a, b, key, one, "manifest", string_node (manifest_two), "one");
}

/* A checkpointed session's record set back to "manifest": null: without
 * the checks (a record written again never names no checkpoint; a host
 * that stopped the session at a checkpoint knows it had one), the session
 * resumes silently as a fresh copy of its template. */
static void
test_null_manifest_after_checkpoint (Fixture       *fixture,
                                     gconstpointer  data)
{
  Host *a, *b;
  g_autofree char *key = NULL;
  g_autofree char *id = NULL;
  g_autofree char *genuine = NULL;
  g_autofree char *forged = NULL;

  if (fixture->etcd == NULL)
    return;
  key = hosts_start_two (fixture, &a, &b);
  id = stopped_session (a, key, "checkpointed");
  assert_forgery_refused (fixture, a, b, key, id, "manifest", json_node_new (JSON_NODE_NULL),
                          "checkpointed");

  /* Deleted and written again, the record is at its first write once more:
   * only a host that knows a checkpoint (its marker: it stopped the session
   * at one) can tell. See "Session records" in docs/cluster.md. */
  genuine = get_record (fixture, id);
  forged = forged_record (genuine, "manifest", json_node_new (JSON_NODE_NULL));
  delete_record (fixture, id);
  put_record (fixture, id, forged);
  assert_resume_refused (a, key, id, "manifest");

  assert_resumes_genuine (fixture, b, key, id, genuine, "checkpointed");
}

/* A record's "epoch" from the future (no owner had it when the record was
 * written, nor before this resume's claim), and a "host" that is no host
 * id: without the checks both resume as if genuine. */
static void
test_epoch_and_host_checked (Fixture       *fixture,
                             gconstpointer  data)
{
  Host *a, *b;
  g_autofree char *key = NULL;
  g_autofree char *id = NULL;

  if (fixture->etcd == NULL)
    return;
  key = hosts_start_two (fixture, &a, &b);
  id = stopped_session (a, key, "checkpointed");
  assert_forgery_refused (fixture, a, b, key, id, "epoch", string_node ("999999999"),
                          "checkpointed");
  assert_forgery_refused (fixture, a, b, key, id, "host", string_node ("not/a/host"),
                          "checkpointed");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/cluster-records/manifest-of-another-session", Fixture, NULL, fixture_set_up,
              test_manifest_of_another_session, fixture_tear_down);
  g_test_add ("/cluster-records/null-manifest-after-checkpoint", Fixture, NULL, fixture_set_up,
              test_null_manifest_after_checkpoint, fixture_tear_down);
  g_test_add ("/cluster-records/epoch-and-host-checked", Fixture, NULL, fixture_set_up,
              test_epoch_and_host_checked, fixture_tear_down);

  return g_test_run ();
}
