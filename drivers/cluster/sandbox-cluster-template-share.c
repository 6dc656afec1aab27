/* sandbox-cluster-template-share.c — templates that follow their sessions
 *
 * See sandbox-cluster-template-share-private.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "sandbox-cluster-checkpoint-private.h"
#include "sandbox-cluster-host-private.h"
#include "sandbox-cluster-runtime-share-private.h"
#include "sandbox-cluster-template-share-private.h"
#include "sandbox-json-private.h"

/* "runtime" only when the template names one, so that a record of a
 * template without one reads as before runtimes were published. */
static GBytes *
record_value (const char *name,
              const char *manifest_digest,
              const char *runtime_key)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  char *text;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, name);
  json_builder_set_member_name (builder, "manifest");
  json_builder_add_string_value (builder, manifest_digest);
  if (runtime_key != NULL)
    {
      json_builder_set_member_name (builder, "runtime");
      json_builder_add_string_value (builder, runtime_key);
    }
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  text = json_to_string (root, FALSE);
  return g_bytes_new_take (text, strlen (text));
}

static gboolean
put_record (const SandboxClusterTemplateShare  *share,
            const char                         *template_key,
            const char                         *name,
            const char                         *manifest_digest,
            const char                         *runtime_key,
            GCancellable                       *cancellable,
            GError                            **error)
{
  g_autofree char *key = sandbox_cluster_host_key (share->host, "templates", template_key, NULL);
  g_autoptr(GBytes) value = record_value (name, manifest_digest, runtime_key);
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;

  sandbox_cluster_etcd_txn_put (txn, TRUE, key, value, 0);
  result = sandbox_cluster_etcd_txn (sandbox_cluster_host_get_etcd (share->host), txn,
                                     cancellable, error);
  return result != NULL;
}

/* The published record of @template_key (*@out_runtime_key %NULL when it
 * names no runtime): %SANDBOX_ERROR_NOT_FOUND when there is none,
 * %SANDBOX_ERROR_UNAVAILABLE when it is not one we would write. The runtime
 * key is checked here, before it becomes part of an etcd key or a path. */
static gboolean
read_record (const SandboxClusterTemplateShare  *share,
             const char                         *template_key,
             char                              **out_name,
             char                              **out_manifest_digest,
             char                              **out_runtime_key,
             GCancellable                       *cancellable,
             GError                            **error)
{
  g_autofree char *key = sandbox_cluster_host_key (share->host, "templates", template_key, NULL);
  g_autoptr(SandboxClusterEtcdRange) range = NULL;
  g_autoptr(JsonNode) root = NULL;
  SandboxClusterEtcdKv *kv;
  JsonObject *object;

  range = sandbox_cluster_etcd_range (sandbox_cluster_host_get_etcd (share->host), key, NULL,
                                      cancellable, error);
  if (range == NULL)
    return FALSE;
  if (range->kvs->len != 1 || strcmp (((SandboxClusterEtcdKv *) range->kvs->pdata[0])->key, key) != 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                   "Unknown sandbox template %s (not stored on this host, nor published to the "
                   "cluster by a prewarm)", template_key);
      return FALSE;
    }
  kv = range->kvs->pdata[0];
  object = sandbox_cluster_kv_parse_object (kv, &root, error);
  if (object == NULL)
    return FALSE;
  *out_runtime_key = NULL;
  if (!sandbox_cluster_read_string_member (object, "name", FALSE, out_name) ||
      !sandbox_cluster_read_string_member (object, "manifest", FALSE, out_manifest_digest) ||
      !sandbox_cluster_digest_is_valid (*out_manifest_digest) ||
      (json_object_has_member (object, "runtime") &&
       (!sandbox_cluster_read_string_member (object, "runtime", FALSE, out_runtime_key) ||
        !sandbox_template_key_is_valid (*out_runtime_key))))
    {
      g_clear_pointer (out_name, g_free);
      g_clear_pointer (out_manifest_digest, g_free);
      g_clear_pointer (out_runtime_key, g_free);
      return sandbox_cluster_set_error_malformed_key (error, kv->key);
    }
  return TRUE;
}

/**
 * sandbox_cluster_template_publish:
 * @share: the host's parts
 * @template_key: a template this host's bubblewrap store holds
 * @name: its name (part of its key)
 * @runtime_key: (nullable): the runtime it names (part of its key), which
 *   must be published already (sandbox_cluster_runtime_import())
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stores the template's files in the blob store (only the blobs it lacks)
 * and its record in etcd; a template already published is left as it is.
 * A runtime that is not published is %SANDBOX_ERROR_NOT_FOUND: no other host
 * could fetch the template.
 *
 * Returns: %TRUE when every host can fetch the template
 */
gboolean
sandbox_cluster_template_publish (const SandboxClusterTemplateShare  *share,
                                  const char                         *template_key,
                                  const char                         *name,
                                  const char                         *runtime_key,
                                  GCancellable                       *cancellable,
                                  GError                            **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *published_name = NULL;
  g_autofree char *published_runtime = NULL;
  g_autofree char *digest = NULL;
  SandboxClusterCheckpointStats stats = { 0, };
  int fd;

  if (read_record (share, template_key, &published_name, &digest, &published_runtime,
                   cancellable, &local_error))
    return TRUE;
  if (!g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  g_clear_error (&local_error);
  if (runtime_key != NULL &&
      !sandbox_cluster_runtime_is_published (share, runtime_key, cancellable, &local_error))
    {
      if (g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                     "Sandbox template %s names runtime %s, which is not published to the "
                     "cluster: import it through the cluster backend", template_key,
                     runtime_key);
      else
        g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  fd = sandbox_backend_open_template_files (share->bubblewrap, template_key, NULL, error);
  if (fd < 0)
    return FALSE;
  digest = sandbox_cluster_checkpoint_create (share->blobs, fd, NULL, &stats, cancellable, error);
  close (fd);
  if (digest == NULL)
    return FALSE;
  /* A template is made of what a manifest holds: an entry left out would
   * publish another template under this key. */
  if (stats.skipped > 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox template %s could not be published: %u of its entries cannot be "
                   "stored in a checkpoint", template_key, stats.skipped);
      return FALSE;
    }
  return put_record (share, template_key, name, digest, runtime_key, cancellable, error);
}

/* A template made of the files under @directory on @runtime_key (if not
 * %NULL; stored here already), stored in this host's bubblewrap store:
 * %TRUE only when it is @template_key. */
static gboolean
import_directory (const SandboxClusterTemplateShare  *share,
                  const char                         *template_key,
                  const char                         *name,
                  const char                         *runtime_key,
                  const char                         *directory,
                  GCancellable                       *cancellable,
                  GError                            **error)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new (name);
  g_autoptr(GFile) root = g_file_new_for_path (directory);
  g_autofree char *key = NULL;

  if (!sandbox_template_add_directory (template_, root, cancellable, error))
    return FALSE;
  if (runtime_key != NULL)
    sandbox_template_set_runtime (template_, runtime_key);
  key = sandbox_backend_prewarm (share->bubblewrap, template_, NULL, cancellable, error);
  if (key == NULL)
    return FALSE;
  if (strcmp (key, template_key) == 0)
    return TRUE;

  /* Best effort: nothing here refers to the template that came instead. */
  sandbox_backend_delete_template (share->bubblewrap, key, NULL, NULL);
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Sandbox template %s in the cluster's store is another template (%s): the "
               "store or its etcd record was changed", template_key, key);
  return FALSE;
}

/**
 * sandbox_cluster_template_fetch:
 * @share: the host's parts
 * @template_key: a template this host's bubblewrap store lacks
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stores the published template @template_key in this host's bubblewrap
 * store, and first the runtime it names if this host lacks it
 * (sandbox_cluster_runtime_ensure()). %SANDBOX_ERROR_NOT_FOUND when it was
 * never published; any
 * mismatch between what the store holds and the key is
 * %SANDBOX_ERROR_UNAVAILABLE, and nothing of it is kept.
 *
 * Returns: %TRUE when this host's store holds @template_key
 */
gboolean
sandbox_cluster_template_fetch (const SandboxClusterTemplateShare  *share,
                                const char                         *template_key,
                                GCancellable                       *cancellable,
                                GError                            **error)
{
  g_autofree char *name = NULL;
  g_autofree char *digest = NULL;
  g_autofree char *runtime_key = NULL;
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *entry = g_strconcat ("template-", uuid, NULL);
  g_autofree char *directory = g_build_filename (share->incoming, entry, NULL);
  gboolean imported;
  int incoming_fd;

  if (!read_record (share, template_key, &name, &digest, &runtime_key, cancellable, error))
    return FALSE;
  if (runtime_key != NULL &&
      !sandbox_cluster_runtime_ensure (share, runtime_key, cancellable, error))
    return FALSE;

  incoming_fd = open (share->incoming, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (incoming_fd < 0)
    return sandbox_cluster_checkpoint_set_errno_error (error, errno, "open",
                                                       share->incoming);
  imported = sandbox_cluster_checkpoint_materialise (share->blobs, digest, NULL, incoming_fd,
                                                     entry, cancellable, error) &&
             import_directory (share, template_key, name, runtime_key, directory, cancellable,
                               error);
  sandbox_workspace_remove_tree_at (incoming_fd, entry, NULL);   /* best effort */
  close (incoming_fd);
  return imported;
}
