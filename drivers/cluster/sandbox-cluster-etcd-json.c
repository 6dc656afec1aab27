/* sandbox-cluster-etcd-json.c — strict parsers of etcd's gateway replies
 *
 * A reply is untrusted bytes from the network: it goes through the core's
 * strict RFC 8259 checker (depth-bounded, so a hostile nesting cannot run
 * json-glib out of stack), then every member we read is type-checked here.
 * Members we do not know are ignored (etcd adds some between versions);
 * members we read and find mistyped fail the whole reply. The gateway's
 * encoding (sandbox-cluster-etcd-private.h): int64 as strings, false and
 * zero omitted, bytes in base64.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <sandbox-backend-driver.h>

#include "sandbox-cluster-etcd-call-private.h"
#include "sandbox-json-private.h"

typedef struct
{
  const char *endpoint;
  GError **error;
} Parse;

static gboolean G_GNUC_PRINTF (2, 3)
malformed (Parse      *parse,
           const char *format,
           ...)
{
  g_autofree char *why = NULL;
  va_list args;

  va_start (args, format);
  why = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (parse->error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Malformed etcd reply from %s: %s", parse->endpoint, why);
  return FALSE;
}

/* An int64 member: a decimal string (the gateway's encoding) or a JSON
 * integer; absent means 0. */
static gboolean
read_int64 (Parse      *parse,
            JsonObject *object,
            const char *member,
            gint64     *out)
{
  JsonNode *node = json_object_get_member (object, member);
  g_autoptr(GError) local_error = NULL;

  *out = 0;
  if (node == NULL)
    return TRUE;
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_INT64)
    {
      *out = json_node_get_int (node);
      return TRUE;
    }
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING
      || !g_ascii_string_to_signed (json_node_get_string (node), 10, G_MININT64, G_MAXINT64,
                                    out, &local_error))
    return malformed (parse, "\"%s\" is not an int64", member);
  return TRUE;
}

static gboolean
read_non_negative (Parse      *parse,
                   JsonObject *object,
                   const char *member,
                   gint64     *out)
{
  if (!read_int64 (parse, object, member, out))
    return FALSE;
  if (*out < 0)
    return malformed (parse, "\"%s\" is negative", member);
  return TRUE;
}

static gboolean
read_boolean (Parse      *parse,
              JsonObject *object,
              const char *member,
              gboolean   *out)
{
  JsonNode *node = json_object_get_member (object, member);

  *out = FALSE;
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return malformed (parse, "\"%s\" is not a boolean", member);
  *out = json_node_get_boolean (node);
  return TRUE;
}

/* An optional object or array member: absent gives NULL and TRUE. */
static gboolean
read_container (Parse        *parse,
                JsonObject   *object,
                const char   *member,
                JsonNodeType  type,
                JsonNode    **out)
{
  JsonNode *node = json_object_get_member (object, member);

  *out = NULL;
  if (node == NULL)
    return TRUE;
  if (JSON_NODE_TYPE (node) != type)
    return malformed (parse, "\"%s\" is not an %s", member,
                      type == JSON_NODE_OBJECT ? "object" : "array");
  *out = node;
  return TRUE;
}

static gboolean
read_object (Parse       *parse,
             JsonObject  *object,
             const char  *member,
             JsonObject **out)
{
  JsonNode *node;

  if (!read_container (parse, object, member, JSON_NODE_OBJECT, &node))
    return FALSE;
  *out = node != NULL ? json_node_get_object (node) : NULL;
  return TRUE;
}

static gboolean
read_array (Parse      *parse,
            JsonObject *object,
            const char *member,
            JsonArray **out)
{
  JsonNode *node;

  if (!read_container (parse, object, member, JSON_NODE_ARRAY, &node))
    return FALSE;
  *out = node != NULL ? json_node_get_array (node) : NULL;
  return TRUE;
}

/* A bytes member, base64 on the wire; absent means empty. */
static gboolean
read_bytes (Parse       *parse,
            JsonObject  *object,
            const char  *member,
            GBytes     **out)
{
  JsonNode *node = json_object_get_member (object, member);

  if (node == NULL)
    {
      *out = g_bytes_new (NULL, 0);
      return TRUE;
    }
  *out = sandbox_json_node_is_string (node)
         ? sandbox_json_base64_decode (json_node_get_string (node)) : NULL;
  if (*out == NULL)
    return malformed (parse, "\"%s\" is not base64", member);
  return TRUE;
}

static gboolean
read_header_revision (Parse      *parse,
                      JsonObject *object,
                      gint64     *out_revision)
{
  JsonObject *header;

  *out_revision = 0;
  if (!read_object (parse, object, "header", &header))
    return FALSE;
  if (header == NULL)
    return TRUE;
  return read_non_negative (parse, header, "revision", out_revision);
}

void
sandbox_cluster_etcd_kv_free (SandboxClusterEtcdKv *kv)
{
  if (kv == NULL)
    return;
  g_free (kv->key);
  g_clear_pointer (&kv->value, g_bytes_unref);
  g_free (kv);
}

void
sandbox_cluster_etcd_range_free (SandboxClusterEtcdRange *range)
{
  if (range == NULL)
    return;
  g_clear_pointer (&range->kvs, g_ptr_array_unref);
  g_free (range);
}

void
sandbox_cluster_etcd_txn_result_free (SandboxClusterEtcdTxnResult *result)
{
  if (result == NULL)
    return;
  g_clear_pointer (&result->ranges, g_ptr_array_unref);
  g_free (result);
}

static SandboxClusterEtcdKv *
parse_kv (Parse    *parse,
          JsonNode *node)
{
  g_autoptr(SandboxClusterEtcdKv) kv = g_new0 (SandboxClusterEtcdKv, 1);
  g_autoptr(GBytes) key = NULL;
  JsonObject *object;
  const char *key_data;
  gsize key_length;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return malformed (parse, "a key-value is not an object"), NULL;
  object = json_node_get_object (node);
  if (!read_bytes (parse, object, "key", &key)
      || !read_bytes (parse, object, "value", &kv->value)
      || !read_non_negative (parse, object, "create_revision", &kv->create_revision)
      || !read_non_negative (parse, object, "mod_revision", &kv->mod_revision)
      || !read_non_negative (parse, object, "version", &kv->version)
      || !read_int64 (parse, object, "lease", &kv->lease))
    return NULL;

  /* Our keys are paths: text without NUL. A key that exists was created at
   * some revision, so create_revision 0 is a lie as well. */
  key_data = g_bytes_get_data (key, &key_length);
  if (key_length == 0 || memchr (key_data, '\0', key_length) != NULL
      || !g_utf8_validate_len (key_data, key_length, NULL))
    return malformed (parse, "a key is empty, has a NUL byte or is not UTF-8"), NULL;
  if (kv->create_revision == 0 || kv->mod_revision < kv->create_revision)
    return malformed (parse, "a key-value has impossible revisions"), NULL;
  kv->key = g_strndup (key_data, key_length);
  return g_steal_pointer (&kv);
}

static SandboxClusterEtcdRange *
parse_range_object (Parse      *parse,
                    JsonObject *object)
{
  g_autoptr(SandboxClusterEtcdRange) range = g_new0 (SandboxClusterEtcdRange, 1);
  JsonArray *kvs;

  range->kvs = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_cluster_etcd_kv_free);
  if (!read_header_revision (parse, object, &range->revision)
      || !read_non_negative (parse, object, "count", &range->count)
      || !read_boolean (parse, object, "more", &range->more)
      || !read_array (parse, object, "kvs", &kvs))
    return NULL;

  for (guint i = 0; kvs != NULL && i < json_array_get_length (kvs); i++)
    {
      SandboxClusterEtcdKv *kv = parse_kv (parse, json_array_get_element (kvs, i));

      if (kv == NULL)
        return NULL;
      g_ptr_array_add (range->kvs, kv);
    }
  if (range->count < (gint64) range->kvs->len)
    return malformed (parse, "\"count\" is smaller than the keys given"), NULL;
  return g_steal_pointer (&range);
}

/* The error object of a unary reply ({"error": "…", "message": "…", "code": N})
 * or of a streamed one ({"error": {"grpc_code": N, "message": "…"}}). */
static gboolean
describe_error (JsonObject  *object,
                char       **out_message,
                int         *out_code)
{
  JsonNode *error = json_object_get_member (object, "error");
  JsonObject *holder = object;
  const char *code_member = "code";
  JsonNode *message;
  JsonNode *code;

  if (error == NULL)
    return FALSE;
  if (JSON_NODE_HOLDS_OBJECT (error))
    {
      holder = json_node_get_object (error);
      code_member = "grpc_code";
    }
  message = json_object_get_member (holder, "message");
  code = json_object_get_member (holder, code_member);
  if (message != NULL && JSON_NODE_HOLDS_VALUE (message)
      && json_node_get_value_type (message) == G_TYPE_STRING)
    *out_message = g_strdup (json_node_get_string (message));
  else
    *out_message = g_strdup ("no message");
  if (code != NULL && JSON_NODE_HOLDS_VALUE (code)
      && json_node_get_value_type (code) == G_TYPE_INT64
      && json_node_get_int (code) > 0 && json_node_get_int (code) < 100)
    *out_code = (int) json_node_get_int (code);
  return TRUE;
}

JsonNode *
etcd_reply_parse (const char  *endpoint,
                  guint        status,
                  const char  *data,
                  gsize        length,
                  int         *out_grpc_code,
                  GError     **error)
{
  Parse parse = { endpoint, error };
  g_autoptr(GError) local_error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *message = NULL;
  int code = 0;

  if (out_grpc_code != NULL)
    *out_grpc_code = 0;
  if (length > SANDBOX_CLUSTER_ETCD_MAX_REPLY_BYTES)
    return malformed (&parse, "larger than %u bytes", SANDBOX_CLUSTER_ETCD_MAX_REPLY_BYTES), NULL;
  if (memchr (data, '\0', length) != NULL)
    return malformed (&parse, "a NUL byte"), NULL;
  root = sandbox_json_parse_strict (data, length, &local_error);
  if (root == NULL)
    {
      if (status != 200)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       "etcd at %s answered HTTP %u", endpoint, status);
          return NULL;
        }
      return malformed (&parse, "%s", local_error->message), NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (root))
    return malformed (&parse, "not a JSON object"), NULL;

  if (describe_error (json_node_get_object (root), &message, &code) || status != 200)
    {
      if (out_grpc_code != NULL)
        *out_grpc_code = code;
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "etcd at %s refused the request: %s (HTTP %u, code %d)",
                   endpoint, message != NULL ? message : "no message", status, code);
      return NULL;
    }
  return g_steal_pointer (&root);
}

SandboxClusterEtcdRange *
etcd_parse_range_object (const char  *endpoint,
                         JsonObject  *object,
                         GError     **error)
{
  Parse parse = { endpoint, error };

  return parse_range_object (&parse, object);
}

SandboxClusterEtcdTxnResult *
etcd_parse_txn_object (const char  *endpoint,
                       JsonObject  *object,
                       GError     **error)
{
  Parse parse = { endpoint, error };
  g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;
  JsonArray *responses;

  result = g_new0 (SandboxClusterEtcdTxnResult, 1);
  result->ranges = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_cluster_etcd_range_free);
  if (!read_header_revision (&parse, object, &result->revision)
      || !read_boolean (&parse, object, "succeeded", &result->succeeded)
      || !read_array (&parse, object, "responses", &responses))
    return NULL;

  for (guint i = 0; responses != NULL && i < json_array_get_length (responses); i++)
    {
      JsonNode *node = json_array_get_element (responses, i);
      JsonObject *range_object;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        return malformed (&parse, "a txn response is not an object"), NULL;
      if (!read_object (&parse, json_node_get_object (node), "response_range", &range_object))
        return NULL;
      if (range_object != NULL)
        {
          SandboxClusterEtcdRange *range = parse_range_object (&parse, range_object);

          if (range == NULL)
            return NULL;
          g_ptr_array_add (result->ranges, range);
        }
    }
  return g_steal_pointer (&result);
}

gboolean
etcd_parse_grant_object (const char  *endpoint,
                         JsonObject  *object,
                         gint64      *out_id,
                         gint64      *out_ttl_seconds,
                         GError     **error)
{
  Parse parse = { endpoint, error };

  if (!read_int64 (&parse, object, "ID", out_id)
      || !read_non_negative (&parse, object, "TTL", out_ttl_seconds))
    return FALSE;
  if (*out_id == 0 || *out_ttl_seconds == 0)
    return malformed (&parse, "a lease grant without an ID or a TTL");
  return TRUE;
}

gboolean
etcd_parse_keepalive_object (const char  *endpoint,
                             JsonObject  *object,
                             gint64      *out_ttl_seconds,
                             GError     **error)
{
  Parse parse = { endpoint, error };
  JsonObject *result;

  /* The stream's one message: {"result": {…}}. */
  if (!read_object (&parse, object, "result", &result))
    return FALSE;
  if (result == NULL)
    return malformed (&parse, "a keepalive reply without a result");
  /* No "TTL" (zero, omitted) is how the gateway says the lease is gone. */
  return read_non_negative (&parse, result, "TTL", out_ttl_seconds);
}

/* The public parsers: a whole reply body, as etcd_reply_parse() checks it
 * with HTTP 200, then the object. */

SandboxClusterEtcdRange *
sandbox_cluster_etcd_parse_range (const char  *endpoint,
                                  const char  *data,
                                  gsize        length,
                                  GError     **error)
{
  g_autoptr(JsonNode) root = etcd_reply_parse (endpoint, 200, data, length, NULL, error);

  return root != NULL ? etcd_parse_range_object (endpoint, json_node_get_object (root), error) : NULL;
}

SandboxClusterEtcdTxnResult *
sandbox_cluster_etcd_parse_txn (const char  *endpoint,
                                const char  *data,
                                gsize        length,
                                GError     **error)
{
  g_autoptr(JsonNode) root = etcd_reply_parse (endpoint, 200, data, length, NULL, error);

  return root != NULL ? etcd_parse_txn_object (endpoint, json_node_get_object (root), error) : NULL;
}

gboolean
sandbox_cluster_etcd_parse_grant (const char  *endpoint,
                                  const char  *data,
                                  gsize        length,
                                  gint64      *out_id,
                                  gint64      *out_ttl_seconds,
                                  GError     **error)
{
  g_autoptr(JsonNode) root = etcd_reply_parse (endpoint, 200, data, length, NULL, error);

  return root != NULL && etcd_parse_grant_object (endpoint, json_node_get_object (root),
                                                  out_id, out_ttl_seconds, error);
}

gboolean
sandbox_cluster_etcd_parse_keepalive (const char  *endpoint,
                                      const char  *data,
                                      gsize        length,
                                      gint64      *out_ttl_seconds,
                                      GError     **error)
{
  g_autoptr(JsonNode) root = etcd_reply_parse (endpoint, 200, data, length, NULL, error);

  return root != NULL && etcd_parse_keepalive_object (endpoint, json_node_get_object (root),
                                                      out_ttl_seconds, error);
}
