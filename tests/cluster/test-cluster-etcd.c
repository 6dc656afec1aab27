/* test-cluster-etcd.c — the private etcd client against a real etcd, and against liars
 *
 * The round trips run against Debian's etcd-server (started by
 * etcd-fixture.c on loopback); the gateway quirks the client relies on
 * (sandbox-cluster-etcd-private.h) are checked here, so an etcd that
 * changed them fails this test rather than the ownership layer.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <libsoup/soup.h>
#include <sandbox.h>

#include "etcd-fixture.h"
#include "sandbox-test-upstream.h"
#include "sandbox-cluster-etcd-private.h"

static EtcdFixture *shared_etcd;   /* one single-member etcd for the round trips */

static SandboxClusterEtcd *
client_for (const char *endpoints)
{
  g_autoptr(GError) error = NULL;
  SandboxClusterEtcd *etcd = sandbox_cluster_etcd_new_from_list (endpoints, 1000, &error);

  g_assert_no_error (error);
  return etcd;
}

static EtcdFixture *
need_etcd (void)
{
  g_autoptr(GError) error = NULL;

  if (etcd_fixture_skip_if_missing ())
    return NULL;
  if (shared_etcd == NULL)
    shared_etcd = etcd_fixture_start (1, &error);
  g_assert_no_error (error);
  return shared_etcd;
}

static GBytes *
text_bytes (const char *text)
{
  return g_bytes_new (text, strlen (text));
}

/* A key of its own for each test: the shared etcd keeps what earlier tests wrote. */
static char *
unique_key (const char *name)
{
  g_autofree char *uuid = g_uuid_string_random ();

  return g_strdup_printf ("/test/%s/%s", name, uuid);
}

static void
test_lease_round_trip (void)
{
  EtcdFixture *fixture = need_etcd ();
  g_autoptr(SandboxClusterEtcd) etcd = NULL;
  g_autoptr(GError) error = NULL;
  gint64 id = 0;
  gint64 ttl = 0;

  if (fixture == NULL)
    return;
  etcd = client_for (etcd_fixture_get_endpoints (fixture));

  g_assert_true (sandbox_cluster_etcd_lease_grant (etcd, 5, &id, &ttl, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (id, !=, 0);
  g_assert_cmpint (ttl, ==, 5);

  g_assert_true (sandbox_cluster_etcd_lease_keepalive (etcd, id, &ttl, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (ttl, ==, 5);

  g_assert_true (sandbox_cluster_etcd_lease_revoke (etcd, id, NULL, &error));
  g_assert_no_error (error);

  /* The quirk: a keepalive of a gone lease is a success without "TTL". */
  ttl = -1;
  g_assert_true (sandbox_cluster_etcd_lease_keepalive (etcd, id, &ttl, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (ttl, ==, 0);

  /* Revoking it again is fine (etcd says NOT_FOUND; the lease is gone as asked). */
  g_assert_true (sandbox_cluster_etcd_lease_revoke (etcd, id, NULL, &error));
  g_assert_no_error (error);
}

static SandboxClusterEtcdTxnResult *
create_if_absent (SandboxClusterEtcd *etcd,
                  const char         *key,
                  const char         *value,
                  gint64              lease)
{
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autoptr(GBytes) bytes = text_bytes (value);
  g_autoptr(GError) error = NULL;
  SandboxClusterEtcdTxnResult *result;

  sandbox_cluster_etcd_txn_compare_create_revision (txn, key, SANDBOX_CLUSTER_ETCD_EQUAL, 0);
  sandbox_cluster_etcd_txn_put (txn, TRUE, key, bytes, lease);
  sandbox_cluster_etcd_txn_range (txn, FALSE, key, NULL);
  result = sandbox_cluster_etcd_txn (etcd, txn, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static void
test_txn_create_if_absent (void)
{
  EtcdFixture *fixture = need_etcd ();
  g_autoptr(SandboxClusterEtcd) etcd = NULL;
  g_autoptr(SandboxClusterEtcdTxnResult) first = NULL;
  g_autoptr(SandboxClusterEtcdTxnResult) second = NULL;
  g_autofree char *key = unique_key ("create");
  SandboxClusterEtcdRange *range;
  SandboxClusterEtcdKv *kv;

  if (fixture == NULL)
    return;
  etcd = client_for (etcd_fixture_get_endpoints (fixture));

  first = create_if_absent (etcd, key, "one", 0);
  g_assert_true (first->succeeded);
  g_assert_cmpint (first->revision, >, 0);
  g_assert_cmpuint (first->ranges->len, ==, 0);

  /* The quirk: a failed txn has no "succeeded" member at all. */
  second = create_if_absent (etcd, key, "two", 0);
  g_assert_false (second->succeeded);
  g_assert_cmpuint (second->ranges->len, ==, 1);
  range = g_ptr_array_index (second->ranges, 0);
  g_assert_cmpuint (range->kvs->len, ==, 1);
  kv = g_ptr_array_index (range->kvs, 0);
  g_assert_cmpstr (kv->key, ==, key);
  g_assert_cmpmem (g_bytes_get_data (kv->value, NULL), g_bytes_get_size (kv->value), "one", 3);
  /* The put's revision is the key's create revision: what an epoch is. */
  g_assert_cmpint (kv->create_revision, ==, first->revision);
  g_assert_cmpint (kv->mod_revision, ==, first->revision);
  g_assert_cmpint (kv->version, ==, 1);
}

static void
put_key (SandboxClusterEtcd *etcd,
         const char         *key,
         const char         *value,
         gint64              lease)
{
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autoptr(GBytes) bytes = text_bytes (value);
  g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_cluster_etcd_txn_put (txn, TRUE, key, bytes, lease);
  result = sandbox_cluster_etcd_txn (etcd, txn, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (result->succeeded);
}

static void
test_range_prefix (void)
{
  EtcdFixture *fixture = need_etcd ();
  g_autoptr(SandboxClusterEtcd) etcd = NULL;
  g_autoptr(SandboxClusterEtcdRange) prefix_range = NULL;
  g_autoptr(SandboxClusterEtcdRange) exact = NULL;
  g_autoptr(SandboxClusterEtcdRange) empty = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *base = unique_key ("range");
  g_autofree char *a = g_strconcat (base, "/a/", NULL);
  g_autofree char *a1 = g_strconcat (base, "/a/1", NULL);
  g_autofree char *a2 = g_strconcat (base, "/a/2", NULL);
  g_autofree char *b1 = g_strconcat (base, "/b/1", NULL);
  g_autofree char *a_end = sandbox_cluster_etcd_prefix_end (a);
  g_autofree char *missing = g_strconcat (base, "/missing", NULL);

  if (fixture == NULL)
    return;
  etcd = client_for (etcd_fixture_get_endpoints (fixture));
  put_key (etcd, a2, "2", 0);
  put_key (etcd, a1, "1", 0);
  put_key (etcd, b1, "b", 0);

  prefix_range = sandbox_cluster_etcd_range (etcd, a, a_end, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (prefix_range->kvs->len, ==, 2);
  g_assert_cmpint (prefix_range->count, ==, 2);
  g_assert_false (prefix_range->more);
  g_assert_cmpstr (((SandboxClusterEtcdKv *) g_ptr_array_index (prefix_range->kvs, 0))->key, ==, a1);
  g_assert_cmpstr (((SandboxClusterEtcdKv *) g_ptr_array_index (prefix_range->kvs, 1))->key, ==, a2);

  /* Without range_end a range is the one key: the prefix itself is no key. */
  exact = sandbox_cluster_etcd_range (etcd, a, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (exact->kvs->len, ==, 0);

  /* The quirk: an empty range has neither "kvs" nor "count". */
  empty = sandbox_cluster_etcd_range (etcd, missing, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (empty->kvs->len, ==, 0);
  g_assert_cmpint (empty->count, ==, 0);
  g_assert_cmpint (empty->revision, >, 0);
}

static void
test_prefix_end (void)
{
  g_autofree char *end = sandbox_cluster_etcd_prefix_end ("/libsandbox/c/");
  g_autofree char *high = sandbox_cluster_etcd_prefix_end ("a\xff");

  g_assert_cmpstr (end, ==, "/libsandbox/c0");
  g_assert_cmpstr (high, ==, "b");
}

static void
test_txn_compares_and_lease (void)
{
  EtcdFixture *fixture = need_etcd ();
  g_autoptr(SandboxClusterEtcd) etcd = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = unique_key ("compare");
  g_autoptr(SandboxClusterEtcdTxnResult) created = NULL;
  g_autoptr(SandboxClusterEtcdRange) range = NULL;
  g_autoptr(SandboxClusterEtcdRange) gone = NULL;
  g_autoptr(GBytes) right = text_bytes ("v");
  g_autoptr(GBytes) wrong = text_bytes ("w");
  gint64 lease = 0;
  gint64 ttl = 0;
  SandboxClusterEtcdKv *kv;

  if (fixture == NULL)
    return;
  etcd = client_for (etcd_fixture_get_endpoints (fixture));
  g_assert_true (sandbox_cluster_etcd_lease_grant (etcd, 30, &lease, &ttl, NULL, &error));
  g_assert_no_error (error);

  created = create_if_absent (etcd, key, "v", lease);
  g_assert_true (created->succeeded);
  range = sandbox_cluster_etcd_range (etcd, key, NULL, NULL, &error);
  g_assert_no_error (error);
  kv = g_ptr_array_index (range->kvs, 0);
  g_assert_cmpint (kv->lease, ==, lease);

  /* Each compare, held and not held. */
  for (guint i = 0; i < 6; i++)
    {
      g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
      g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;
      gboolean expected = (i % 2) == 0;

      switch (i)
        {
        case 0: sandbox_cluster_etcd_txn_compare_value (txn, key, SANDBOX_CLUSTER_ETCD_EQUAL, right); break;
        case 1: sandbox_cluster_etcd_txn_compare_value (txn, key, SANDBOX_CLUSTER_ETCD_EQUAL, wrong); break;
        case 2: sandbox_cluster_etcd_txn_compare_mod_revision (txn, key, SANDBOX_CLUSTER_ETCD_EQUAL, kv->mod_revision); break;
        case 3: sandbox_cluster_etcd_txn_compare_mod_revision (txn, key, SANDBOX_CLUSTER_ETCD_GREATER, kv->mod_revision); break;
        case 4: sandbox_cluster_etcd_txn_compare_create_revision (txn, key, SANDBOX_CLUSTER_ETCD_LESS, kv->create_revision + 1); break;
        case 5: sandbox_cluster_etcd_txn_compare_create_revision (txn, key, SANDBOX_CLUSTER_ETCD_NOT_EQUAL, kv->create_revision); break;
        default: g_assert_not_reached ();
        }
      result = sandbox_cluster_etcd_txn (etcd, txn, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (result->succeeded, ==, expected);
    }

  /* A key on a lease goes with it. */
  g_assert_true (sandbox_cluster_etcd_lease_revoke (etcd, lease, NULL, &error));
  g_assert_no_error (error);
  gone = sandbox_cluster_etcd_range (etcd, key, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (gone->kvs->len, ==, 0);
}

static void
test_txn_delete (void)
{
  EtcdFixture *fixture = need_etcd ();
  g_autoptr(SandboxClusterEtcd) etcd = NULL;
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;
  g_autoptr(SandboxClusterEtcdRange) left = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *base = unique_key ("delete");
  g_autofree char *prefix = g_strconcat (base, "/", NULL);
  g_autofree char *end = sandbox_cluster_etcd_prefix_end (prefix);
  g_autofree char *x = g_strconcat (prefix, "x", NULL);
  g_autofree char *y = g_strconcat (prefix, "y", NULL);
  g_autofree char *z = g_strconcat (base, "z", NULL);
  g_autofree char *base_end = sandbox_cluster_etcd_prefix_end (base);

  if (fixture == NULL)
    return;
  etcd = client_for (etcd_fixture_get_endpoints (fixture));
  put_key (etcd, x, "x", 0);
  put_key (etcd, y, "y", 0);
  put_key (etcd, z, "z", 0);

  sandbox_cluster_etcd_txn_delete (txn, TRUE, prefix, end);
  sandbox_cluster_etcd_txn_range (txn, TRUE, base, base_end);
  result = sandbox_cluster_etcd_txn (etcd, txn, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (result->succeeded);
  /* The range in the same txn sees the delete: only z is left. */
  left = g_ptr_array_steal_index (result->ranges, 0);
  g_assert_cmpuint (left->kvs->len, ==, 1);
  g_assert_cmpstr (((SandboxClusterEtcdKv *) g_ptr_array_index (left->kvs, 0))->key, ==, z);
}

/* ------------------------------------------------------------------------ */
/* Unreachable etcd.                                                         */

/* A loopback port nobody listens on: bound, then closed. */
static char *
dead_endpoint (void)
{
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  g_assert_true (g_socket_bind (socket, address, FALSE, NULL));
  bound = g_socket_get_local_address (socket, NULL);
  return g_strdup_printf ("http://127.0.0.1:%u",
                          g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound)));
}

/* A listener that never accepts: connections complete (the kernel's
 * backlog) and no byte ever comes back, as with a frozen member. */
static GSocket *
black_hole (char **out_endpoint)
{
  g_autoptr(GSocket) socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM,
                                            G_SOCKET_PROTOCOL_TCP, NULL);
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  g_assert_true (g_socket_bind (socket, address, FALSE, NULL));
  g_assert_true (g_socket_listen (socket, NULL));
  bound = g_socket_get_local_address (socket, NULL);
  *out_endpoint = g_strdup_printf ("http://127.0.0.1:%u",
                                   g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound)));
  return g_steal_pointer (&socket);
}

static void
test_unavailable (void)
{
  g_autofree char *dead = dead_endpoint ();
  g_autoptr(SandboxClusterEtcd) etcd = client_for (dead);
  g_autoptr(GError) error = NULL;
  gint64 id;

  g_assert_false (sandbox_cluster_etcd_lease_grant (etcd, 5, &id, NULL, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, dead));
}

/* Take out the per-attempt timeout source in etcd_call_attempt() and this
 * test hangs on the black hole until meson's timeout. */
static void
test_timeout_then_next_endpoint (void)
{
  EtcdFixture *fixture = need_etcd ();
  g_autofree char *hole = NULL;
  g_autoptr(GSocket) listener = black_hole (&hole);
  g_autofree char *endpoints = NULL;
  g_autoptr(SandboxClusterEtcd) etcd = NULL;
  g_autoptr(SandboxClusterEtcd) only_hole = NULL;
  g_autoptr(SandboxClusterEtcdRange) range = NULL;
  g_autoptr(GError) error = NULL;

  if (fixture == NULL)
    return;

  only_hole = client_for (hole);
  range = sandbox_cluster_etcd_range (only_hole, "/x", NULL, NULL, &error);
  g_assert_null (range);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, hole));
  g_assert_nonnull (strstr (error->message, "within 1000 ms"));
  g_clear_error (&error);

  endpoints = g_strconcat (hole, ",", etcd_fixture_get_endpoints (fixture), NULL);
  etcd = client_for (endpoints);
  range = sandbox_cluster_etcd_range (etcd, "/x", NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (range);
}

static gpointer
cancel_soon (gpointer data)
{
  /* Long enough for the call to be waiting on the black hole. */
  g_usleep (200 * 1000);
  g_cancellable_cancel (data);
  return NULL;
}

static void
test_cancel (void)
{
  g_autofree char *hole = NULL;
  g_autoptr(GSocket) listener = black_hole (&hole);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxClusterEtcd) etcd = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(SandboxClusterEtcdRange) range = NULL;
  g_autoptr(GThread) canceller = NULL;

  /* A long timeout: only the cancellation can end this call early. */
  etcd = sandbox_cluster_etcd_new_from_list (hole, 60000, &error);
  g_assert_no_error (error);
  canceller = g_thread_new ("canceller", cancel_soon, cancellable);
  range = sandbox_cluster_etcd_range (etcd, "/x", NULL, cancellable, &error);
  g_assert_null (range);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_thread_join (g_steal_pointer (&canceller));
}

static void
test_invalid_endpoints (void)
{
  const char *invalid[] = {
    "", "ftp://127.0.0.1:2379", "http://127.0.0.1:2379/v3", "http://user@127.0.0.1:2379",
    "http://127.0.0.1:2379?x", "127.0.0.1:2379", "http://127.0.0.1:2379,", NULL,
  };

  for (guint i = 0; invalid[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SandboxClusterEtcd) etcd = sandbox_cluster_etcd_new_from_list (invalid[i], 0, &error);

      g_assert_null (etcd);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
    }
}

/* ------------------------------------------------------------------------ */
/* Hostile replies: an error, never a crash, never a wrong value.            */

static void
test_hostile_replies (void)
{
  const char *replies[] = {
    "",
    "null",
    "[]",
    "{",
    "{\"kvs\": 1}",
    "{\"kvs\": [1]}",
    "{\"kvs\": [{\"key\": 5}]}",
    "{\"kvs\": [{\"key\": \"not base64!\"}]}",
    "{\"kvs\": [{\"key\": \"YQ==\", \"create_revision\": \"x\"}]}",
    "{\"kvs\": [{\"key\": \"YQ==\", \"create_revision\": \"99999999999999999999\"}]}",
    "{\"kvs\": [{\"key\": \"YQ==\", \"create_revision\": \"-1\", \"mod_revision\": \"1\"}]}",
    "{\"kvs\": [{\"key\": \"YQ==\"}]}",                                  /* create_revision 0 */
    "{\"kvs\": [{\"key\": \"AA==\", \"create_revision\": \"1\", \"mod_revision\": \"1\"}]}", /* NUL key */
    "{\"kvs\": [{\"key\": \"YQ==\", \"create_revision\": \"2\", \"mod_revision\": \"1\"}]}",
    "{\"kvs\": [{\"key\": \"YQ==\", \"create_revision\": \"1\", \"mod_revision\": \"1\"}], \"count\": \"0\"}",
    "{\"header\": []}",
    "{\"more\": \"yes\"}",
    "{\"error\": \"etcdserver: no leader\", \"code\": 14}",
    "{\"kvs\": [], \"kvs\": []}",                                        /* duplicate member */
    "{} trailing",
    "{\"a\": 1} /* comment */",
    "{\"kvs\":\"\\u0000\"}",
    "{\"count\": 1.5}",
    NULL,
  };
  g_autoptr(GString) deep = g_string_new ("{\"kvs\":");

  for (guint i = 0; replies[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SandboxClusterEtcdRange) range = NULL;

      range = sandbox_cluster_etcd_parse_range ("http://liar", replies[i], strlen (replies[i]), &error);
      if (range != NULL)
        g_error ("accepted %s", replies[i]);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message, "http://liar"));
    }

  /* Nesting that would run a recursive parser out of stack. */
  for (guint i = 0; i < 1000000; i++)
    g_string_append_c (deep, '[');
  {
    g_autoptr(GError) error = NULL;

    g_assert_null (sandbox_cluster_etcd_parse_range ("http://liar", deep->str, deep->len, &error));
    g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  }

  /* A NUL inside the length. */
  {
    g_autoptr(GError) error = NULL;

    g_assert_null (sandbox_cluster_etcd_parse_range ("http://liar", "{}\0{", 4, &error));
    g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  }
}

static void
test_hostile_txn_and_lease_replies (void)
{
  const char *txns[] = {
    "{\"succeeded\": \"true\"}",
    "{\"responses\": {}}",
    "{\"responses\": [1]}",
    "{\"responses\": [{\"response_range\": []}]}",
    "{\"responses\": [{\"response_range\": {\"kvs\": [{}]}}]}",
    NULL,
  };
  const char *grants[] = {
    "{}", "{\"ID\": \"1\"}", "{\"TTL\": \"5\"}", "{\"ID\": \"1\", \"TTL\": \"-5\"}",
    "{\"ID\": true, \"TTL\": \"5\"}", NULL,
  };
  const char *keepalives[] = {
    "{}", "{\"result\": 1}", "{\"result\": {\"TTL\": \"x\"}}",
    "{\"error\": {\"grpc_code\": 5, \"message\": \"lease not found\"}}", NULL,
  };

  for (guint i = 0; txns[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;

      g_assert_null (sandbox_cluster_etcd_parse_txn ("http://liar", txns[i], strlen (txns[i]), &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
    }
  for (guint i = 0; grants[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      gint64 id, ttl;

      g_assert_false (sandbox_cluster_etcd_parse_grant ("http://liar", grants[i], strlen (grants[i]),
                                                        &id, &ttl, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
    }
  for (guint i = 0; keepalives[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      gint64 ttl;

      g_assert_false (sandbox_cluster_etcd_parse_keepalive ("http://liar", keepalives[i],
                                                            strlen (keepalives[i]), &ttl, &error));
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
    }
}

/* A fake etcd on loopback that answers what the test says: the kit's
 * upstream (tests/kit) with this handler, in a thread of its own. */
typedef struct
{
  guint status;
  GBytes *body;
  guint requests;
} Liar;

static void
liar_handler (SoupServer        *server,
              SoupServerMessage *message,
              const char        *path,
              GHashTable        *query,
              gpointer           user_data)
{
  Liar *liar = user_data;

  soup_server_message_set_status (message, liar->status, NULL);
  soup_server_message_set_response (message, "application/json", SOUP_MEMORY_COPY,
                                    g_bytes_get_data (liar->body, NULL), g_bytes_get_size (liar->body));
}

static void
range_done (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  GError **error = user_data;
  g_autoptr(SandboxClusterEtcdRange) range = NULL;

  range = sandbox_cluster_etcd_range_finish (SANDBOX_CLUSTER_ETCD (source), result, error);
  g_assert_null (range);
  g_assert_nonnull (*error);
}

static GError *
range_from_liar (Liar *liar)
{
  SandboxTestUpstream *upstream = sandbox_test_upstream_start (SANDBOX_TEST_UPSTREAM_NONE,
                                                               liar_handler, liar);
  g_autoptr(SandboxClusterEtcd) etcd = client_for (sandbox_test_upstream_get_origin (upstream));
  GError *error = NULL;

  /* The client runs on this thread's context: the async call, iterated. */
  sandbox_cluster_etcd_range_async (etcd, "/x", NULL, NULL, range_done, &error);
  while (error == NULL)
    g_main_context_iteration (NULL, TRUE);
  liar->requests = sandbox_test_upstream_count (upstream);
  sandbox_test_upstream_stop (upstream);
  return error;
}

/* Remove the cap check in etcd_call_read_cb() and the client reads the
 * whole 9 MiB: this test then fails on the message. */
static void
test_huge_reply (void)
{
  gsize size = SANDBOX_CLUSTER_ETCD_MAX_REPLY_BYTES + 1024 * 1024;
  g_autofree char *huge = g_malloc (size);
  Liar liar = { 200, NULL, 0 };
  g_autoptr(GError) error = NULL;

  memset (huge, ' ', size);
  huge[0] = '{';
  huge[size - 1] = '}';
  liar.body = g_bytes_new_take (g_steal_pointer (&huge), size);
  error = range_from_liar (&liar);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "exceeds"));
  g_bytes_unref (liar.body);
}

static void
test_server_error_reply (void)
{
  Liar liar = { 503, NULL, 0 };
  g_autoptr(GError) error = NULL;

  liar.body = text_bytes ("{\"error\":\"etcdserver: no leader\",\"code\":14}");
  error = range_from_liar (&liar);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "HTTP 503"));
  g_assert_cmpuint (liar.requests, ==, 1);
  g_bytes_unref (liar.body);
}

int
main (int    argc,
      char **argv)
{
  int status;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/cluster/etcd/prefix-end", test_prefix_end);
  g_test_add_func ("/cluster/etcd/invalid-endpoints", test_invalid_endpoints);
  g_test_add_func ("/cluster/etcd/unavailable", test_unavailable);
  g_test_add_func ("/cluster/etcd/cancel", test_cancel);
  g_test_add_func ("/cluster/etcd/hostile-replies", test_hostile_replies);
  g_test_add_func ("/cluster/etcd/hostile-txn-and-lease-replies", test_hostile_txn_and_lease_replies);
  g_test_add_func ("/cluster/etcd/huge-reply", test_huge_reply);
  g_test_add_func ("/cluster/etcd/server-error-reply", test_server_error_reply);
  g_test_add_func ("/cluster/etcd/lease-round-trip", test_lease_round_trip);
  g_test_add_func ("/cluster/etcd/txn-create-if-absent", test_txn_create_if_absent);
  g_test_add_func ("/cluster/etcd/txn-compares-and-lease", test_txn_compares_and_lease);
  g_test_add_func ("/cluster/etcd/txn-delete", test_txn_delete);
  g_test_add_func ("/cluster/etcd/range-prefix", test_range_prefix);
  g_test_add_func ("/cluster/etcd/timeout-then-next-endpoint", test_timeout_then_next_endpoint);

  status = g_test_run ();
  g_clear_pointer (&shared_etcd, etcd_fixture_free);
  return status;
}
