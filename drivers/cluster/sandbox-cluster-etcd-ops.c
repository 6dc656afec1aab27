/* sandbox-cluster-etcd-ops.c — the etcd requests: leases, range, txn
 *
 * Each request is a JSON body for one gateway path, sent by
 * etcd_call_async() and read back by the strict parsers; the sync variant
 * of each runs the async one on a private main context.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <sandbox-backend-driver.h>

#include "sandbox-cluster-etcd-call-private.h"

EtcdReply *
etcd_reply_new (const char *endpoint,
                guint       status,
                GBytes     *body)
{
  EtcdReply *reply = g_new0 (EtcdReply, 1);

  reply->endpoint = g_strdup (endpoint);
  reply->status = status;
  reply->body = g_bytes_ref (body);
  return reply;
}

void
etcd_reply_free (EtcdReply *reply)
{
  if (reply == NULL)
    return;
  g_free (reply->endpoint);
  g_bytes_unref (reply->body);
  g_free (reply);
}

char *
sandbox_cluster_etcd_prefix_end (const char *prefix)
{
  g_autofree char *end = g_strdup (prefix);
  gsize length = strlen (end);

  /* The first key after every key with this prefix: the prefix with its
   * last byte below 0xff incremented, the rest dropped. */
  while (length > 0)
    {
      guchar last = (guchar) end[length - 1];

      if (last < 0xff)
        {
          end[length - 1] = (char) (last + 1);
          end[length] = '\0';
          return g_steal_pointer (&end);
        }
      length--;
    }
  /* "\0" would mean "every key": never what a prefix of ours wants. */
  g_return_val_if_reached (NULL);
}

static void
add_bytes (JsonBuilder  *builder,
           const char   *member,
           gconstpointer data,
           gsize         length)
{
  g_autofree char *encoded = g_base64_encode (data, length);

  json_builder_set_member_name (builder, member);
  json_builder_add_string_value (builder, encoded);
}

static void
add_key (JsonBuilder *builder,
         const char  *member,
         const char  *key)
{
  add_bytes (builder, member, key, strlen (key));
}

/* The gateway reads int64 fields as strings (and writes them so). */
static void
add_int64 (JsonBuilder *builder,
           const char  *member,
           gint64       value)
{
  g_autofree char *text = g_strdup_printf ("%" G_GINT64_FORMAT, value);

  json_builder_set_member_name (builder, member);
  json_builder_add_string_value (builder, text);
}

/* ------------------------------------------------------------------------ */
/* Transactions.                                                             */

struct _SandboxClusterEtcdTxn
{
  JsonArray *compare;
  JsonArray *success;
  JsonArray *failure;
};

SandboxClusterEtcdTxn *
sandbox_cluster_etcd_txn_new (void)
{
  SandboxClusterEtcdTxn *txn = g_new0 (SandboxClusterEtcdTxn, 1);

  txn->compare = json_array_new ();
  txn->success = json_array_new ();
  txn->failure = json_array_new ();
  return txn;
}

void
sandbox_cluster_etcd_txn_free (SandboxClusterEtcdTxn *txn)
{
  if (txn == NULL)
    return;
  json_array_unref (txn->compare);
  json_array_unref (txn->success);
  json_array_unref (txn->failure);
  g_free (txn);
}

static const char *
compare_name (SandboxClusterEtcdCompare compare)
{
  switch (compare)
    {
    case SANDBOX_CLUSTER_ETCD_EQUAL:
      return "EQUAL";
    case SANDBOX_CLUSTER_ETCD_NOT_EQUAL:
      return "NOT_EQUAL";
    case SANDBOX_CLUSTER_ETCD_GREATER:
      return "GREATER";
    case SANDBOX_CLUSTER_ETCD_LESS:
      return "LESS";
    default:
      g_return_val_if_reached ("EQUAL");
    }
}

/* A condition: {"target": …, "key": …, "result": …, <field>: …}, the
 * field set by @add_field. */
static JsonBuilder *
begin_compare (const char                *target,
               const char                *key,
               SandboxClusterEtcdCompare  compare)
{
  JsonBuilder *builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "target");
  json_builder_add_string_value (builder, target);
  add_key (builder, "key", key);
  json_builder_set_member_name (builder, "result");
  json_builder_add_string_value (builder, compare_name (compare));
  return builder;
}

static void
end_into (JsonBuilder *builder,
          JsonArray   *array)
{
  json_builder_end_object (builder);
  json_array_add_element (array, json_builder_get_root (builder));
}

void
sandbox_cluster_etcd_txn_compare_create_revision (SandboxClusterEtcdTxn     *txn,
                                                  const char                *key,
                                                  SandboxClusterEtcdCompare  compare,
                                                  gint64                     revision)
{
  g_autoptr(JsonBuilder) builder = begin_compare ("CREATE", key, compare);

  add_int64 (builder, "create_revision", revision);
  end_into (builder, txn->compare);
}

void
sandbox_cluster_etcd_txn_compare_mod_revision (SandboxClusterEtcdTxn     *txn,
                                               const char                *key,
                                               SandboxClusterEtcdCompare  compare,
                                               gint64                     revision)
{
  g_autoptr(JsonBuilder) builder = begin_compare ("MOD", key, compare);

  add_int64 (builder, "mod_revision", revision);
  end_into (builder, txn->compare);
}

void
sandbox_cluster_etcd_txn_compare_value (SandboxClusterEtcdTxn     *txn,
                                        const char                *key,
                                        SandboxClusterEtcdCompare  compare,
                                        GBytes                    *value)
{
  g_autoptr(JsonBuilder) builder = begin_compare ("VALUE", key, compare);
  gsize length;
  gconstpointer data = g_bytes_get_data (value, &length);

  add_bytes (builder, "value", data, length);
  end_into (builder, txn->compare);
}

/* An operation: {"<kind>": {"key": …, …}}; the caller adds the rest of the
 * inner object, end_operation() closes both. */
static JsonBuilder *
begin_operation (const char *kind,
                 const char *key)
{
  JsonBuilder *builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, kind);
  json_builder_begin_object (builder);
  add_key (builder, "key", key);
  return builder;
}

static void
end_operation (SandboxClusterEtcdTxn *txn,
               gboolean               on_success,
               JsonBuilder           *builder)
{
  json_builder_end_object (builder);
  end_into (builder, on_success ? txn->success : txn->failure);
}

void
sandbox_cluster_etcd_txn_put (SandboxClusterEtcdTxn *txn,
                              gboolean               on_success,
                              const char            *key,
                              GBytes                *value,
                              gint64                 lease)
{
  g_autoptr(JsonBuilder) builder = begin_operation ("request_put", key);
  gsize length;
  gconstpointer data = g_bytes_get_data (value, &length);

  add_bytes (builder, "value", data, length);
  if (lease != 0)
    add_int64 (builder, "lease", lease);
  end_operation (txn, on_success, builder);
}

void
sandbox_cluster_etcd_txn_delete (SandboxClusterEtcdTxn *txn,
                                 gboolean               on_success,
                                 const char            *key,
                                 const char            *range_end)
{
  g_autoptr(JsonBuilder) builder = begin_operation ("request_delete_range", key);

  if (range_end != NULL)
    add_key (builder, "range_end", range_end);
  end_operation (txn, on_success, builder);
}

void
sandbox_cluster_etcd_txn_range (SandboxClusterEtcdTxn *txn,
                                gboolean               on_success,
                                const char            *key,
                                const char            *range_end)
{
  g_autoptr(JsonBuilder) builder = begin_operation ("request_range", key);

  if (range_end != NULL)
    add_key (builder, "range_end", range_end);
  end_operation (txn, on_success, builder);
}

static JsonNode *
txn_to_node (SandboxClusterEtcdTxn *txn)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_array_member (object, "compare", json_array_ref (txn->compare));
  json_object_set_array_member (object, "success", json_array_ref (txn->success));
  json_object_set_array_member (object, "failure", json_array_ref (txn->failure));
  json_node_take_object (node, object);
  return node;
}

/* ------------------------------------------------------------------------ */
/* The requests.                                                             */

static EtcdReply *
request_finish (SandboxClusterEtcd  *self,
                GAsyncResult        *result,
                gpointer             source_tag,
                GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == source_tag, NULL);

  return etcd_call_finish (self, result, error);
}

/* The reply's body as a checked JSON object (an error reply is an error). */
static JsonObject *
reply_object (EtcdReply  *reply,
              JsonNode  **out_root,
              int        *out_grpc_code,
              GError    **error)
{
  gsize length;
  const char *data = g_bytes_get_data (reply->body, &length);

  *out_root = etcd_reply_parse (reply->endpoint, reply->status, data, length, out_grpc_code, error);
  return *out_root != NULL ? json_node_get_object (*out_root) : NULL;
}

/* The checked object of the reply to the call @result finishes; @reply
 * and @root keep it alive. */
static JsonObject *
finish_object (SandboxClusterEtcd  *self,
               GAsyncResult        *result,
               gpointer             source_tag,
               EtcdReply          **reply,
               JsonNode           **root,
               GError             **error)
{
  *reply = request_finish (self, result, source_tag, error);
  return *reply != NULL ? reply_object (*reply, root, NULL, error) : NULL;
}

static JsonNode *
lease_request (gint64 id)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  add_int64 (builder, "ID", id);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}

void
sandbox_cluster_etcd_lease_grant_async (SandboxClusterEtcd  *self,
                                        gint64               ttl_seconds,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) body = NULL;

  g_return_if_fail (SANDBOX_CLUSTER_IS_ETCD (self));
  g_return_if_fail (ttl_seconds > 0);

  json_builder_begin_object (builder);
  add_int64 (builder, "TTL", ttl_seconds);
  json_builder_end_object (builder);
  body = json_builder_get_root (builder);
  etcd_call_async (self, "/v3/lease/grant", body, cancellable,
                   sandbox_cluster_etcd_lease_grant_async, callback, user_data);
}

gboolean
sandbox_cluster_etcd_lease_grant_finish (SandboxClusterEtcd  *self,
                                         GAsyncResult        *result,
                                         gint64              *out_id,
                                         gint64              *out_ttl_seconds,
                                         GError             **error)
{
  g_autoptr(EtcdReply) reply = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object = finish_object (self, result, sandbox_cluster_etcd_lease_grant_async,
                                      &reply, &root, error);
  gint64 id = 0;
  gint64 ttl = 0;

  if (object == NULL || !etcd_parse_grant_object (reply->endpoint, object, &id, &ttl, error))
    return FALSE;
  if (out_id != NULL)
    *out_id = id;
  if (out_ttl_seconds != NULL)
    *out_ttl_seconds = ttl;
  return TRUE;
}

gboolean
sandbox_cluster_etcd_lease_grant (SandboxClusterEtcd  *self,
                                  gint64               ttl_seconds,
                                  gint64              *out_id,
                                  gint64              *out_ttl_seconds,
                                  GCancellable        *cancellable,
                                  GError             **error)
{
  EtcdSync sync;
  gboolean ok;

  etcd_sync_begin (&sync);
  sandbox_cluster_etcd_lease_grant_async (self, ttl_seconds, cancellable, etcd_sync_done, &sync);
  ok = sandbox_cluster_etcd_lease_grant_finish (self, etcd_sync_wait (&sync),
                                                out_id, out_ttl_seconds, error);
  etcd_sync_end (&sync);
  return ok;
}

void
sandbox_cluster_etcd_lease_keepalive_async (SandboxClusterEtcd  *self,
                                            gint64               id,
                                            GCancellable        *cancellable,
                                            GAsyncReadyCallback  callback,
                                            gpointer             user_data)
{
  g_autoptr(JsonNode) body = lease_request (id);

  g_return_if_fail (SANDBOX_CLUSTER_IS_ETCD (self));

  etcd_call_async (self, "/v3/lease/keepalive", body, cancellable,
                   sandbox_cluster_etcd_lease_keepalive_async, callback, user_data);
}

gboolean
sandbox_cluster_etcd_lease_keepalive_finish (SandboxClusterEtcd  *self,
                                             GAsyncResult        *result,
                                             gint64              *out_ttl_seconds,
                                             GError             **error)
{
  g_autoptr(EtcdReply) reply = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object = finish_object (self, result, sandbox_cluster_etcd_lease_keepalive_async,
                                      &reply, &root, error);
  gint64 ttl = 0;

  if (object == NULL || !etcd_parse_keepalive_object (reply->endpoint, object, &ttl, error))
    return FALSE;
  if (out_ttl_seconds != NULL)
    *out_ttl_seconds = ttl;
  return TRUE;
}

gboolean
sandbox_cluster_etcd_lease_keepalive (SandboxClusterEtcd  *self,
                                      gint64               id,
                                      gint64              *out_ttl_seconds,
                                      GCancellable        *cancellable,
                                      GError             **error)
{
  EtcdSync sync;
  gboolean ok;

  etcd_sync_begin (&sync);
  sandbox_cluster_etcd_lease_keepalive_async (self, id, cancellable, etcd_sync_done, &sync);
  ok = sandbox_cluster_etcd_lease_keepalive_finish (self, etcd_sync_wait (&sync),
                                                    out_ttl_seconds, error);
  etcd_sync_end (&sync);
  return ok;
}

void
sandbox_cluster_etcd_lease_revoke_async (SandboxClusterEtcd  *self,
                                         gint64               id,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data)
{
  g_autoptr(JsonNode) body = lease_request (id);

  g_return_if_fail (SANDBOX_CLUSTER_IS_ETCD (self));

  etcd_call_async (self, "/v3/lease/revoke", body, cancellable,
                   sandbox_cluster_etcd_lease_revoke_async, callback, user_data);
}

gboolean
sandbox_cluster_etcd_lease_revoke_finish (SandboxClusterEtcd  *self,
                                          GAsyncResult        *result,
                                          GError             **error)
{
  g_autoptr(EtcdReply) reply = request_finish (self, result, sandbox_cluster_etcd_lease_revoke_async, error);
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) local_error = NULL;
  int code;

  if (reply == NULL)
    return FALSE;
  /* Gone already (expired, or revoked by an earlier attempt whose reply
   * was lost): what the caller wanted. */
  if (reply_object (reply, &root, &code, &local_error) == NULL && code != ETCD_GRPC_NOT_FOUND)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return TRUE;
}

gboolean
sandbox_cluster_etcd_lease_revoke (SandboxClusterEtcd  *self,
                                   gint64               id,
                                   GCancellable        *cancellable,
                                   GError             **error)
{
  EtcdSync sync;
  gboolean ok;

  etcd_sync_begin (&sync);
  sandbox_cluster_etcd_lease_revoke_async (self, id, cancellable, etcd_sync_done, &sync);
  ok = sandbox_cluster_etcd_lease_revoke_finish (self, etcd_sync_wait (&sync), error);
  etcd_sync_end (&sync);
  return ok;
}

void
sandbox_cluster_etcd_range_async (SandboxClusterEtcd  *self,
                                  const char          *key,
                                  const char          *range_end,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) body = NULL;

  g_return_if_fail (SANDBOX_CLUSTER_IS_ETCD (self));
  g_return_if_fail (key != NULL && key[0] != '\0');

  json_builder_begin_object (builder);
  add_key (builder, "key", key);
  if (range_end != NULL)
    add_key (builder, "range_end", range_end);
  json_builder_end_object (builder);
  body = json_builder_get_root (builder);
  etcd_call_async (self, "/v3/kv/range", body, cancellable,
                   sandbox_cluster_etcd_range_async, callback, user_data);
}

SandboxClusterEtcdRange *
sandbox_cluster_etcd_range_finish (SandboxClusterEtcd  *self,
                                   GAsyncResult        *result,
                                   GError             **error)
{
  g_autoptr(EtcdReply) reply = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object = finish_object (self, result, sandbox_cluster_etcd_range_async, &reply,
                                      &root, error);

  return object != NULL ? etcd_parse_range_object (reply->endpoint, object, error) : NULL;
}

SandboxClusterEtcdRange *
sandbox_cluster_etcd_range (SandboxClusterEtcd  *self,
                            const char          *key,
                            const char          *range_end,
                            GCancellable        *cancellable,
                            GError             **error)
{
  SandboxClusterEtcdRange *range;
  EtcdSync sync;

  etcd_sync_begin (&sync);
  sandbox_cluster_etcd_range_async (self, key, range_end, cancellable, etcd_sync_done, &sync);
  range = sandbox_cluster_etcd_range_finish (self, etcd_sync_wait (&sync), error);
  etcd_sync_end (&sync);
  return range;
}

void
sandbox_cluster_etcd_txn_async (SandboxClusterEtcd    *self,
                                SandboxClusterEtcdTxn *txn,
                                GCancellable          *cancellable,
                                GAsyncReadyCallback    callback,
                                gpointer               user_data)
{
  g_autoptr(JsonNode) body = NULL;

  g_return_if_fail (SANDBOX_CLUSTER_IS_ETCD (self));
  g_return_if_fail (txn != NULL);

  body = txn_to_node (txn);
  etcd_call_async (self, "/v3/kv/txn", body, cancellable,
                   sandbox_cluster_etcd_txn_async, callback, user_data);
}

SandboxClusterEtcdTxnResult *
sandbox_cluster_etcd_txn_finish (SandboxClusterEtcd  *self,
                                 GAsyncResult        *result,
                                 GError             **error)
{
  g_autoptr(EtcdReply) reply = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonObject *object = finish_object (self, result, sandbox_cluster_etcd_txn_async, &reply,
                                      &root, error);

  return object != NULL ? etcd_parse_txn_object (reply->endpoint, object, error) : NULL;
}

SandboxClusterEtcdTxnResult *
sandbox_cluster_etcd_txn (SandboxClusterEtcd     *self,
                          SandboxClusterEtcdTxn  *txn,
                          GCancellable           *cancellable,
                          GError                **error)
{
  SandboxClusterEtcdTxnResult *result;
  EtcdSync sync;

  etcd_sync_begin (&sync);
  sandbox_cluster_etcd_txn_async (self, txn, cancellable, etcd_sync_done, &sync);
  result = sandbox_cluster_etcd_txn_finish (self, etcd_sync_wait (&sync), error);
  etcd_sync_end (&sync);
  return result;
}
