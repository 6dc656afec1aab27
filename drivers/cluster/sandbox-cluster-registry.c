/* sandbox-cluster-registry.c — hosts announce themselves; placement picks one
 *
 * A host's key lives on its lease: a host that dies leaves the registry by
 * itself after the TTL. Placement is best-of-K sampling (the "power of K
 * choices"): K random hosts, the best of them, so that many placers acting
 * at once on the same slightly stale view do not all pick the one emptiest
 * host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <sandbox-backend-driver.h>

#include "sandbox-cluster-host-private.h"
#include "sandbox-json-private.h"

void
sandbox_cluster_host_info_free (SandboxClusterHostInfo *info)
{
  if (info == NULL)
    return;
  g_free (info->host_id);
  g_strfreev (info->templates);
  g_free (info);
}

gboolean
sandbox_cluster_host_register (SandboxClusterHost  *self,
                               guint                free_slots,
                               const char *const   *templates,
                               GCancellable        *cancellable,
                               GError             **error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;
  g_autoptr(GBytes) value = NULL;
  g_autofree char *key = NULL;
  g_autofree char *text = NULL;
  gsize length;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), FALSE);

  if (!sandbox_cluster_host_check_alive (self, error))
    return FALSE;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "freeSlots");
  json_builder_add_int_value (builder, free_slots);
  json_builder_set_member_name (builder, "templates");
  json_builder_begin_array (builder);
  for (guint i = 0; templates != NULL && templates[i] != NULL; i++)
    json_builder_add_string_value (builder, templates[i]);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  text = json_to_string (root, FALSE);
  length = strlen (text);
  value = g_bytes_new_take (g_steal_pointer (&text), length);

  key = sandbox_cluster_host_key (self, "hosts", sandbox_cluster_host_get_id (self), NULL);
  sandbox_cluster_etcd_txn_put (txn, TRUE, key, value, sandbox_cluster_host_get_lease (self));
  result = sandbox_cluster_etcd_txn (sandbox_cluster_host_get_etcd (self), txn, cancellable, error);
  return result != NULL;
}

/* One host key's value; NULL (and an error) when it is not what
 * sandbox_cluster_host_register() writes. */
static SandboxClusterHostInfo *
parse_host (SandboxClusterEtcdKv  *kv,
            const char            *host_id,
            GError               **error)
{
  g_autoptr(SandboxClusterHostInfo) info = g_new0 (SandboxClusterHostInfo, 1);
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GPtrArray) templates = g_ptr_array_new_with_free_func (g_free);
  gsize length;
  const char *data = g_bytes_get_data (kv->value, &length);
  JsonObject *object;
  JsonNode *slots;
  JsonNode *list;

  if (length == 0 || memchr (data, '\0', length) != NULL
      || (root = sandbox_json_parse_strict (data, length, NULL)) == NULL
      || !JSON_NODE_HOLDS_OBJECT (root))
    goto malformed;
  object = json_node_get_object (root);
  slots = json_object_get_member (object, "freeSlots");
  list = json_object_get_member (object, "templates");
  if (slots == NULL || !JSON_NODE_HOLDS_VALUE (slots)
      || json_node_get_value_type (slots) != G_TYPE_INT64
      || json_node_get_int (slots) < 0 || json_node_get_int (slots) > G_MAXUINT
      || list == NULL || !JSON_NODE_HOLDS_ARRAY (list))
    goto malformed;
  for (guint i = 0; i < json_array_get_length (json_node_get_array (list)); i++)
    {
      JsonNode *element = json_array_get_element (json_node_get_array (list), i);

      if (!JSON_NODE_HOLDS_VALUE (element) || json_node_get_value_type (element) != G_TYPE_STRING)
        goto malformed;
      g_ptr_array_add (templates, g_strdup (json_node_get_string (element)));
    }
  g_ptr_array_add (templates, NULL);

  info->host_id = g_strdup (host_id);
  info->free_slots = (guint) json_node_get_int (slots);
  info->templates = (char **) g_ptr_array_free (g_steal_pointer (&templates), FALSE);
  return g_steal_pointer (&info);

malformed:
  sandbox_cluster_set_error_malformed_key (error, kv->key);
  return NULL;
}

GPtrArray *
sandbox_cluster_host_list_hosts (SandboxClusterHost  *self,
                                 GCancellable        *cancellable,
                                 GError             **error)
{
  g_autoptr(GPtrArray) hosts = NULL;
  g_autoptr(SandboxClusterEtcdRange) range = NULL;
  g_autofree char *hosts_key = NULL;
  gsize prefix_length;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), NULL);

  hosts_key = sandbox_cluster_host_key (self, "hosts", "", NULL);
  range = sandbox_cluster_host_range_under (self, hosts_key, cancellable, error);
  if (range == NULL)
    return NULL;

  hosts = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_cluster_host_info_free);
  prefix_length = strlen (hosts_key);
  for (guint i = 0; i < range->kvs->len; i++)
    {
      SandboxClusterEtcdKv *kv = g_ptr_array_index (range->kvs, i);
      const char *host_id = kv->key + prefix_length;
      SandboxClusterHostInfo *info;

      if (!sandbox_cluster_is_valid_name (host_id))
        return sandbox_cluster_set_error_malformed_key (error, kv->key), NULL;
      info = parse_host (kv, host_id, error);
      if (info == NULL)
        return NULL;
      g_ptr_array_add (hosts, info);
    }
  return g_steal_pointer (&hosts);
}

static gboolean
has_template (SandboxClusterHostInfo *info,
              const char             *template_key)
{
  return template_key != NULL && g_strv_contains ((const char *const *) info->templates, template_key);
}

/* Whether @a is a better place than @b: a free slot at all, then the
 * template already there (no copy to make), then more free slots. */
static gboolean
is_better (SandboxClusterHostInfo *a,
           SandboxClusterHostInfo *b,
           const char             *template_key)
{
  if (b == NULL)
    return TRUE;
  if ((a->free_slots > 0) != (b->free_slots > 0))
    return a->free_slots > 0;
  if (has_template (a, template_key) != has_template (b, template_key))
    return has_template (a, template_key);
  return a->free_slots > b->free_slots;
}

SandboxClusterHostInfo *
sandbox_cluster_pick_host (GPtrArray  *hosts,
                           guint       k,
                           const char *template_key,
                           GRand      *rand)
{
  SandboxClusterHostInfo *best = NULL;

  g_return_val_if_fail (hosts != NULL, NULL);
  g_return_val_if_fail (rand != NULL, NULL);

  if (hosts->len == 0)
    return NULL;
  for (guint i = 0; i < MAX (k, 1); i++)
    {
      SandboxClusterHostInfo *sample = g_ptr_array_index (hosts, g_rand_int_range (rand, 0, hosts->len));

      if (is_better (sample, best, template_key))
        best = sample;
    }
  return best->free_slots > 0 ? best : NULL;
}
