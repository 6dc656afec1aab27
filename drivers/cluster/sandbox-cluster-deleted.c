/* sandbox-cluster-deleted.c — local copies of sessions the cluster deleted
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Why the record's absence is the deletion record, and when a host looks:
 * sandbox-cluster-deleted-private.h.
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "sandbox-cluster-deleted-private.h"

/* Range operations per txn: etcd refuses more than --max-txn-ops (128 by
 * default) in one. */
#define BATCH 64

/* Of @ids, those whose record etcd does not hold, read in txns of range
 * operations (one request per BATCH ids, not one per session).
 * Returns: (transfer full) (element-type utf8 utf8): a set, or %NULL */
static GHashTable *
find_deleted (SandboxClusterBackend  *self,
              GPtrArray              *ids,
              GCancellable           *cancellable,
              GError                **error)
{
  g_autoptr(GHashTable) deleted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint first = 0; first < ids->len; first += BATCH)
    {
      guint n = MIN (BATCH, ids->len - first);
      g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
      g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;
      g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func (g_free);

      for (guint i = 0; i < n; i++)
        {
          char *key = sandbox_cluster_host_key (self->host, "sessions", ids->pdata[first + i],
                                                "record", NULL);

          g_ptr_array_add (keys, key);
          sandbox_cluster_etcd_txn_range (txn, TRUE, key, NULL);
        }
      result = sandbox_cluster_etcd_txn (self->etcd, txn, cancellable, error);
      if (result == NULL)
        return NULL;
      /* The reply is untrusted: one range per key asked, each holding that
       * key or nothing. Anything else reads as "not known to be deleted". */
      if (!result->succeeded || result->ranges->len != n)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       "etcd answered %u ranges for %u session records", result->ranges->len, n);
          return NULL;
        }
      for (guint i = 0; i < n; i++)
        {
          SandboxClusterEtcdRange *range = g_ptr_array_index (result->ranges, i);
          SandboxClusterEtcdKv *kv = range->kvs->len == 1 ? g_ptr_array_index (range->kvs, 0)
                                                          : NULL;

          if (range->kvs->len == 0)
            g_hash_table_add (deleted, g_strdup (ids->pdata[first + i]));
          else if (kv == NULL || strcmp (kv->key, keys->pdata[i]) != 0)
            return sandbox_cluster_set_error_malformed_key (error, keys->pdata[i]), NULL;
        }
    }
  return g_steal_pointer (&deleted);
}

void
sandbox_cluster_deleted_remove_local (SandboxClusterBackend *self,
                                      const char            *session_id,
                                      GCancellable          *cancellable)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) local = sandbox_backend_lookup_state (self->bubblewrap, session_id,
                                                                cancellable, &error);
  g_autofree char *marker = g_build_filename (self->markers, session_id, NULL);

  if (local != NULL)
    {
      g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
      /* Recovering ends what a crashed process of this host left running
       * of it; a copy a live handle holds is BUSY and stays for now. */
      g_autoptr(SandboxHandle) stale = sandbox_backend_recover_session (self->bubblewrap, local,
                                                                        deny, cancellable,
                                                                        &error);

      if (stale == NULL || !sandbox_handle_delete (stale, cancellable, &error))
        {
          g_message ("Could not remove this host's copy of session %s, deleted in the "
                     "cluster: %s", session_id, error->message);
          return;
        }
    }
  else if (!g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
    {
      g_message ("Could not look up this host's copy of session %s, deleted in the cluster: %s",
                 session_id, error->message);
      return;
    }
  if (g_unlink (marker) < 0 && errno != ENOENT)
    {
      g_message ("Could not remove %s: %s", marker, g_strerror (errno));
      return;
    }
  g_log_structured (G_LOG_DOMAIN, G_LOG_LEVEL_INFO, "SANDBOX_EVENT", "cluster-deleted-copy",
                    "SANDBOX_SESSION_ID", session_id,
                    "MESSAGE", "Removed host %s's copy of session %s: the cluster deleted it",
                    self->host_id, session_id);
}

gboolean
sandbox_cluster_deleted_filter (SandboxClusterBackend  *self,
                                GPtrArray              *sessions,
                                GCancellable           *cancellable,
                                GError                **error)
{
  g_autoptr(GPtrArray) ids = g_ptr_array_new ();
  g_autoptr(GHashTable) deleted = NULL;
  guint i = 0;

  for (guint j = 0; j < sessions->len; j++)
    {
      SandboxState *state = sandbox_session_info_get_state (sessions->pdata[j]);

      g_ptr_array_add (ids, (gpointer) sandbox_state_get_session_id (state));
    }
  deleted = find_deleted (self, ids, cancellable, error);
  if (deleted == NULL)
    return FALSE;
  while (i < sessions->len)
    {
      SandboxState *state = sandbox_session_info_get_state (sessions->pdata[i]);
      g_autofree char *session_id = g_strdup (sandbox_state_get_session_id (state));

      if (!g_hash_table_contains (deleted, session_id))
        {
          i++;
          continue;
        }
      g_ptr_array_remove_index (sessions, i);
      sandbox_cluster_deleted_remove_local (self, session_id, cancellable);
    }
  return TRUE;
}

/* The markers' names: a copy whose bubblewrap session is gone already (a
 * removal interrupted between the two) still has one. */
static void
add_marker_names (SandboxClusterBackend *self,
                  GPtrArray             *ids)
{
  g_autoptr(GDir) dir = g_dir_open (self->markers, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    if (sandbox_cluster_is_valid_name (name))
      g_ptr_array_add (ids, g_strdup (name));
}

void
sandbox_cluster_deleted_sweep (SandboxClusterBackend *self,
                               GCancellable          *cancellable)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sessions = sandbox_backend_list_sessions (self->bubblewrap, cancellable,
                                                                 &error);
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GHashTable) deleted = NULL;
  GHashTableIter iter;
  gpointer session_id;

  if (sessions == NULL)
    {
      g_message ("Could not list host %s's sessions for those deleted in the cluster: %s",
                 self->host_id, error->message);
      return;
    }
  for (guint i = 0; i < sessions->len; i++)
    {
      SandboxState *state = sandbox_session_info_get_state (sessions->pdata[i]);

      g_ptr_array_add (ids, g_strdup (sandbox_state_get_session_id (state)));
    }
  add_marker_names (self, ids);
  deleted = find_deleted (self, ids, cancellable, &error);
  if (deleted == NULL)
    {
      g_message ("Could not look for sessions deleted in the cluster: %s", error->message);
      return;
    }
  g_hash_table_iter_init (&iter, deleted);
  while (g_hash_table_iter_next (&iter, &session_id, NULL))
    sandbox_cluster_deleted_remove_local (self, session_id, cancellable);
}
