/* sandbox-cluster-placement.c — this host in the registry, and picking a host
 *
 * See sandbox-cluster-placement-private.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include <sandbox-backend-driver.h>

#include "sandbox-cluster-placement-private.h"

struct _SandboxClusterPlacement
{
  SandboxClusterHost *host;
  guint session_slots;

  GMutex lock;
  GHashTable *templates;   /* keys stored here */
  guint n_live;
};

SandboxClusterPlacement *
sandbox_cluster_placement_new (SandboxClusterHost *host,
                               guint               session_slots,
                               GPtrArray          *templates)
{
  SandboxClusterPlacement *self = g_new0 (SandboxClusterPlacement, 1);

  self->host = g_object_ref (host);
  self->session_slots = session_slots;
  g_mutex_init (&self->lock);
  self->templates = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; templates != NULL && i < templates->len; i++)
    g_hash_table_add (self->templates,
                      g_strdup (sandbox_template_info_get_key (templates->pdata[i])));
  return self;
}

void
sandbox_cluster_placement_free (SandboxClusterPlacement *self)
{
  if (self == NULL)
    return;
  g_object_unref (self->host);
  g_hash_table_unref (self->templates);
  g_mutex_clear (&self->lock);
  g_free (self);
}

void
sandbox_cluster_placement_set_live (SandboxClusterPlacement *self,
                                    guint                    n_live)
{
  g_mutex_lock (&self->lock);
  self->n_live = n_live;
  g_mutex_unlock (&self->lock);
}

void
sandbox_cluster_placement_add_template (SandboxClusterPlacement *self,
                                        const char              *template_key)
{
  g_mutex_lock (&self->lock);
  g_hash_table_add (self->templates, g_strdup (template_key));
  g_mutex_unlock (&self->lock);
}

void
sandbox_cluster_placement_remove_template (SandboxClusterPlacement *self,
                                           const char              *template_key)
{
  g_mutex_lock (&self->lock);
  g_hash_table_remove (self->templates, template_key);
  g_mutex_unlock (&self->lock);
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b,
                 gpointer      user_data)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Writes this host's registry key from the current view. Two announcements
 * racing may land in either order; the next change corrects a stale one. */
gboolean
sandbox_cluster_placement_announce (SandboxClusterPlacement  *self,
                                    GCancellable             *cancellable,
                                    GError                  **error)
{
  g_autofree const char **keys = NULL;
  g_auto(GStrv) templates = NULL;
  guint free_slots;

  g_mutex_lock (&self->lock);
  free_slots = self->session_slots > self->n_live ? self->session_slots - self->n_live : 0;
  keys = (const char **) g_hash_table_get_keys_as_array (self->templates, NULL);
  templates = g_strdupv ((char **) keys);
  g_mutex_unlock (&self->lock);

  g_qsort_with_data (templates, g_strv_length (templates), sizeof (char *),
                     compare_strings, NULL);
  return sandbox_cluster_host_register (self->host, free_slots, (const char *const *) templates,
                                        cancellable, error);
}

char *
sandbox_cluster_placement_pick (SandboxClusterPlacement  *self,
                                const char               *template_key,
                                guint                     samples,
                                GError                  **error)
{
  g_autoptr(GPtrArray) hosts = sandbox_cluster_host_list_hosts (self->host, NULL, error);
  g_autoptr(GRand) rand = NULL;
  SandboxClusterHostInfo *best;

  if (hosts == NULL)
    return NULL;
  rand = g_rand_new ();
  best = sandbox_cluster_pick_host (hosts, samples > 0 ? samples : SANDBOX_CLUSTER_DEFAULT_PICK_SAMPLES,
                                    template_key, rand);
  if (best == NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "No host of the cluster has a free session slot (%u registered)", hosts->len);
      return NULL;
    }
  return g_strdup (best->host_id);
}

char *
sandbox_cluster_placement_list_json (SandboxClusterPlacement  *self,
                                     GError                  **error)
{
  g_autoptr(GPtrArray) hosts = sandbox_cluster_host_list_hosts (self->host, NULL, error);
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(JsonNode) root = NULL;

  if (hosts == NULL)
    return NULL;
  builder = json_builder_new ();
  json_builder_begin_array (builder);
  for (guint i = 0; i < hosts->len; i++)
    {
      SandboxClusterHostInfo *info = hosts->pdata[i];

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "hostId");
      json_builder_add_string_value (builder, info->host_id);
      json_builder_set_member_name (builder, "freeSlots");
      json_builder_add_int_value (builder, info->free_slots);
      json_builder_set_member_name (builder, "templates");
      json_builder_begin_array (builder);
      for (guint j = 0; info->templates[j] != NULL; j++)
        json_builder_add_string_value (builder, info->templates[j]);
      json_builder_end_array (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  root = json_builder_get_root (builder);
  return json_to_string (root, FALSE);
}
