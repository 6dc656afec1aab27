/* sandbox-cluster-runtime-share.c — runtimes that follow their templates
 *
 * See sandbox-cluster-runtime-share-private.h.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-cluster-checkpoint-private.h"
#include "sandbox-cluster-host-private.h"
#include "sandbox-cluster-runtime-share-private.h"

static GBytes *
record_value (const char *manifest_digest)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  char *text;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "manifest");
  json_builder_add_string_value (builder, manifest_digest);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  text = json_to_string (root, FALSE);
  return g_bytes_new_take (text, strlen (text));
}

static gboolean
put_record (const SandboxClusterTemplateShare  *share,
            const char                         *runtime_key,
            const char                         *manifest_digest,
            GCancellable                       *cancellable,
            GError                            **error)
{
  g_autofree char *key = sandbox_cluster_host_key (share->host, "runtimes", runtime_key, NULL);
  g_autoptr(GBytes) value = record_value (manifest_digest);
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;

  sandbox_cluster_etcd_txn_put (txn, TRUE, key, value, 0);
  result = sandbox_cluster_etcd_txn (sandbox_cluster_host_get_etcd (share->host), txn,
                                     cancellable, error);
  return result != NULL;
}

/* The published record of @runtime_key (checked by the caller): its
 * manifest's digest, %SANDBOX_ERROR_NOT_FOUND when there is none,
 * %SANDBOX_ERROR_UNAVAILABLE when it is not one we would write. */
static char *
read_record (const SandboxClusterTemplateShare  *share,
             const char                         *runtime_key,
             GCancellable                       *cancellable,
             GError                            **error)
{
  g_autofree char *key = sandbox_cluster_host_key (share->host, "runtimes", runtime_key, NULL);
  g_autoptr(SandboxClusterEtcdRange) range = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *digest = NULL;
  SandboxClusterEtcdKv *kv;
  JsonObject *object;

  range = sandbox_cluster_etcd_range (sandbox_cluster_host_get_etcd (share->host), key, NULL,
                                      cancellable, error);
  if (range == NULL)
    return NULL;
  if (range->kvs->len != 1 || strcmp (((SandboxClusterEtcdKv *) range->kvs->pdata[0])->key, key) != 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                   "Unknown sandbox runtime %s (not published to the cluster by an import)",
                   runtime_key);
      return NULL;
    }
  kv = range->kvs->pdata[0];
  object = sandbox_cluster_kv_parse_object (kv, &root, error);
  if (object == NULL)
    return NULL;
  if (!sandbox_cluster_read_string_member (object, "manifest", FALSE, &digest) ||
      !sandbox_cluster_digest_is_valid (digest))
    {
      sandbox_cluster_set_error_malformed_key (error, kv->key);
      return NULL;
    }
  return g_steal_pointer (&digest);
}

/**
 * sandbox_cluster_runtime_is_published:
 * @share: the host's parts
 * @runtime_key: a runtime key (checked by the caller)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: %TRUE when etcd holds a valid record of @runtime_key; %FALSE
 *   with @error set otherwise (%SANDBOX_ERROR_NOT_FOUND when it holds none)
 */
gboolean
sandbox_cluster_runtime_is_published (const SandboxClusterTemplateShare  *share,
                                      const char                         *runtime_key,
                                      GCancellable                       *cancellable,
                                      GError                            **error)
{
  g_autofree char *digest = read_record (share, runtime_key, cancellable, error);

  return digest != NULL;
}

/* A new private directory incoming/runtime-<uuid>, named in *@entry. */
static int
make_incoming (const SandboxClusterTemplateShare  *share,
               int                                 incoming_fd,
               char                              **entry,
               GError                            **error)
{
  g_autofree char *uuid = g_uuid_string_random ();
  int fd;

  *entry = g_strconcat ("runtime-", uuid, NULL);
  if (mkdirat (incoming_fd, *entry, 0700) < 0 ||
      (fd = openat (incoming_fd, *entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    {
      sandbox_cluster_checkpoint_set_errno_error (error, errno, "create a directory in",
                                                  share->incoming);
      g_clear_pointer (entry, g_free);
      return -1;
    }
  return fd;
}

/* Imports the tree at incoming/@entry into this host's bubblewrap store
 * and keeps it only if it is the runtime @runtime_key: another one is
 * deleted again, unless the store held it already. */
static gboolean
import_tree (const SandboxClusterTemplateShare  *share,
             const char                         *runtime_key,
             const char                         *entry,
             GCancellable                       *cancellable,
             GError                            **error)
{
  g_autofree char *directory = g_build_filename (share->incoming, entry, NULL);
  g_autoptr(GFile) tree = g_file_new_for_path (directory);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *key = NULL;
  gboolean stored = FALSE;

  key = sandbox_backend_import_runtime (share->bubblewrap, tree, &stored, cancellable,
                                        &local_error);
  if (key == NULL)
    {
      if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_propagate_error (error, g_steal_pointer (&local_error));
      else
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                     "Sandbox runtime %s from the cluster could not be stored on this host: %s",
                     runtime_key, local_error->message);
      return FALSE;
    }
  if (strcmp (key, runtime_key) == 0)
    return TRUE;

  /* Best effort: nothing here names the runtime that came instead. */
  if (!stored)
    sandbox_backend_delete_runtime (share->bubblewrap, key, NULL, NULL);
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Sandbox runtime %s in the cluster's store is another runtime (%s): the store "
               "or its etcd record was changed", runtime_key, key);
  return FALSE;
}

/* Publishes the tree at @tree_fd, which hashes to @runtime_key. */
static gboolean
publish_tree (const SandboxClusterTemplateShare  *share,
              const char                         *runtime_key,
              int                                 tree_fd,
              GCancellable                       *cancellable,
              GError                            **error)
{
  SandboxClusterCheckpointStats stats = { 0, };
  g_autofree char *digest = sandbox_cluster_checkpoint_create (share->blobs, tree_fd, NULL,
                                                               &stats, cancellable, error);

  if (digest == NULL)
    return FALSE;
  /* An entry left out would publish another runtime under this key. */
  if (stats.skipped > 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox runtime %s could not be published: %u of its entries cannot be "
                   "stored in a checkpoint (names that are not UTF-8, files its owner cannot "
                   "read)", runtime_key, stats.skipped);
      return FALSE;
    }
  return put_record (share, runtime_key, digest, cancellable, error);
}

/* Unpacks @source into @tree_fd (incoming/@entry), stores it here and
 * publishes it unless it is published already (*@reused). */
static char *
import_at (const SandboxClusterTemplateShare  *share,
           SandboxBackend                     *backend,
           GFile                              *source,
           int                                 tree_fd,
           const char                         *entry,
           gboolean                           *reused,
           GCancellable                       *cancellable,
           GError                            **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *key = NULL;

  key = sandbox_runtime_import_reporting (backend, source, tree_fd, cancellable, error);
  if (key == NULL || !import_tree (share, key, entry, cancellable, error))
    return NULL;
  *reused = sandbox_cluster_runtime_is_published (share, key, cancellable, &local_error);
  if (!*reused)
    {
      if (!g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      if (!publish_tree (share, key, tree_fd, cancellable, error))
        return NULL;
    }
  return g_steal_pointer (&key);
}

/**
 * sandbox_cluster_runtime_import:
 * @share: the host's parts
 * @backend: the cluster backend, whose ::import-progress reports the import
 * @source: a root file system or OCI image layout directory
 * @reused: (out): set to whether the cluster had the runtime published
 *   already
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Unpacks @source (contained, by the core's unpacker) into incoming/,
 * stores that tree in this host's bubblewrap store and publishes it, as
 * imported: see the header for why not the store's copy.
 *
 * Returns: (transfer full): the runtime's key, or %NULL with @error set
 */
char *
sandbox_cluster_runtime_import (const SandboxClusterTemplateShare  *share,
                                SandboxBackend                     *backend,
                                GFile                              *source,
                                gboolean                           *reused,
                                GCancellable                       *cancellable,
                                GError                            **error)
{
  g_autofree char *entry = NULL;
  char *key = NULL;
  int incoming_fd, tree_fd;

  incoming_fd = open (share->incoming, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (incoming_fd < 0)
    {
      sandbox_cluster_checkpoint_set_errno_error (error, errno, "open", share->incoming);
      return NULL;
    }
  tree_fd = make_incoming (share, incoming_fd, &entry, error);
  if (tree_fd >= 0)
    {
      key = import_at (share, backend, source, tree_fd, entry, reused, cancellable, error);
      close (tree_fd);
      sandbox_workspace_remove_tree_at (incoming_fd, entry, NULL);   /* best effort */
    }
  close (incoming_fd);
  return key;
}

/* Stores the published runtime @runtime_key in this host's bubblewrap
 * store, or nothing. */
static gboolean
fetch (const SandboxClusterTemplateShare  *share,
       const char                         *runtime_key,
       GCancellable                       *cancellable,
       GError                            **error)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *entry = g_strconcat ("runtime-", uuid, NULL);
  g_autofree char *digest = NULL;
  g_autoptr(GError) local_error = NULL;
  gboolean imported;
  int incoming_fd;

  digest = read_record (share, runtime_key, cancellable, &local_error);
  if (digest == NULL)
    {
      /* The template's record names it: a runtime no host published is a
       * record that lies, not a template that does not exist. */
      if (g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                     "Sandbox runtime %s is not stored on this host nor published to the "
                     "cluster", runtime_key);
      else
        g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  incoming_fd = open (share->incoming, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (incoming_fd < 0)
    return sandbox_cluster_checkpoint_set_errno_error (error, errno, "open",
                                                       share->incoming);
  imported = sandbox_cluster_checkpoint_materialise (share->blobs, digest, NULL, incoming_fd,
                                                     entry, cancellable, error) &&
             import_tree (share, runtime_key, entry, cancellable, error);
  sandbox_workspace_remove_tree_at (incoming_fd, entry, NULL);   /* best effort */
  close (incoming_fd);
  return imported;
}

/**
 * sandbox_cluster_runtime_ensure:
 * @share: the host's parts
 * @runtime_key: a runtime key (checked by the caller)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Makes sure this host's bubblewrap store holds @runtime_key, fetching it
 * from the cluster when it does not. Any mismatch between what the
 * cluster's store holds and the key is %SANDBOX_ERROR_UNAVAILABLE, and
 * nothing of it is kept.
 *
 * Returns: %TRUE when this host's store holds @runtime_key
 */
gboolean
sandbox_cluster_runtime_ensure (const SandboxClusterTemplateShare  *share,
                                const char                         *runtime_key,
                                GCancellable                       *cancellable,
                                GError                            **error)
{
  g_autoptr(GPtrArray) runtimes = sandbox_backend_list_runtimes (share->bubblewrap, cancellable,
                                                                 error);

  if (runtimes == NULL)
    return FALSE;
  for (guint i = 0; i < runtimes->len; i++)
    if (strcmp (sandbox_runtime_info_get_key (runtimes->pdata[i]), runtime_key) == 0)
      return TRUE;
  return fetch (share, runtime_key, cancellable, error);
}
