/* sandbox-cluster-blob-store.c — the blob store interface
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Static types in a driver module are safe here: the cluster module is
 * resident (never unloaded), like the bubblewrap one.
 */

#include "config.h"

#include <string.h>

#include "sandbox-cluster-blob-store-private.h"

#define BLOB_COPY_BUFFER_SIZE (128 * 1024)

G_DEFINE_INTERFACE (SandboxClusterBlobStore, sandbox_cluster_blob_store, G_TYPE_OBJECT)

static void
sandbox_cluster_blob_store_default_init (SandboxClusterBlobStoreInterface *iface)
{
}

/*
 * sandbox_cluster_digest_is_valid:
 * @digest: (nullable): a would-be content address
 *
 * Content addresses become file and object names, so only the exact form
 * is accepted: 64 lowercase hex digits, nothing that could name a path.
 *
 * Returns: whether @digest is a lowercase hex SHA-256
 */
gboolean
sandbox_cluster_digest_is_valid (const char *digest)
{
  if (digest == NULL || strlen (digest) != SANDBOX_CLUSTER_DIGEST_LENGTH)
    return FALSE;

  for (const char *c = digest; *c != '\0'; c++)
    if (!g_ascii_isdigit (*c) && !(*c >= 'a' && *c <= 'f'))
      return FALSE;

  return TRUE;
}

/*
 * sandbox_cluster_blob_copy:
 * @contents: the bytes to read
 * @max_bytes: how many of them to read at most
 * @output: (nullable): where to write them, or %NULL to only hash them
 * @digest: (out) (transfer full): the hex SHA-256 of what was read
 * @size: (out): how many bytes were read
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads, hashes and copies in one pass with one buffer: how a store puts a
 * blob, how a checkpoint hashes a file before asking whether the store has
 * it, and how a blob is verified while it is materialised.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_cluster_blob_copy (GInputStream   *contents,
                           guint64         max_bytes,
                           GOutputStream  *output,
                           char          **digest,
                           guint64        *size,
                           GCancellable   *cancellable,
                           GError        **error)
{
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guint8 *buffer = g_malloc (BLOB_COPY_BUFFER_SIZE);
  guint64 copied = 0;

  while (copied < max_bytes)
    {
      gssize n = g_input_stream_read (contents, buffer, MIN (BLOB_COPY_BUFFER_SIZE, max_bytes - copied),
                                      cancellable, error);

      if (n < 0)
        return FALSE;
      if (n == 0)
        break;
      g_checksum_update (checksum, buffer, n);
      if (output != NULL &&
          !g_output_stream_write_all (output, buffer, n, NULL, cancellable, error))
        return FALSE;
      copied += n;
    }

  *digest = g_strdup (g_checksum_get_string (checksum));
  *size = copied;
  return TRUE;
}

/*
 * sandbox_cluster_blob_store_has_blob:
 * @self: a blob store
 * @digest: a content address
 * @size: the size the blob must have
 *
 * A blob of another size under that name is damaged: it counts as absent,
 * so the next put replaces it.
 *
 * Returns: whether the blob is stored
 */
gboolean
sandbox_cluster_blob_store_has_blob (SandboxClusterBlobStore *self,
                                     const char              *digest,
                                     guint64                  size)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_BLOB_STORE (self), FALSE);

  if (!sandbox_cluster_digest_is_valid (digest))
    return FALSE;

  return SANDBOX_CLUSTER_BLOB_STORE_GET_IFACE (self)->has_blob (self, digest, size);
}

/*
 * sandbox_cluster_blob_store_put_blob:
 * @self: a blob store
 * @contents: the bytes to store
 * @max_bytes: how many bytes of @contents to store at most (a file that
 *   grows while it is stored is cut at the size it had)
 * @digest: (out) (transfer full): the content address of what was stored
 * @size: (out): how many bytes were stored
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stores a blob durably; storing one that is already there is cheap.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_cluster_blob_store_put_blob (SandboxClusterBlobStore  *self,
                                     GInputStream             *contents,
                                     guint64                   max_bytes,
                                     char                    **digest,
                                     guint64                  *size,
                                     GCancellable             *cancellable,
                                     GError                  **error)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_BLOB_STORE (self), FALSE);
  g_return_val_if_fail (G_IS_INPUT_STREAM (contents), FALSE);
  g_return_val_if_fail (digest != NULL && size != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return SANDBOX_CLUSTER_BLOB_STORE_GET_IFACE (self)->put_blob (self, contents, max_bytes,
                                                                digest, size, cancellable, error);
}

/*
 * sandbox_cluster_blob_store_open_blob:
 * @self: a blob store
 * @digest: a content address
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * The stream gives the stored bytes as they are: the caller verifies them
 * against @digest. A missing blob is %SANDBOX_ERROR_UNAVAILABLE.
 *
 * Returns: (transfer full): the blob's bytes, or %NULL with @error set
 */
GInputStream *
sandbox_cluster_blob_store_open_blob (SandboxClusterBlobStore  *self,
                                      const char               *digest,
                                      GCancellable             *cancellable,
                                      GError                  **error)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_BLOB_STORE (self), NULL);
  g_return_val_if_fail (sandbox_cluster_digest_is_valid (digest), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return SANDBOX_CLUSTER_BLOB_STORE_GET_IFACE (self)->open_blob (self, digest, cancellable, error);
}

/*
 * sandbox_cluster_blob_store_put_manifest:
 * @self: a blob store
 * @manifest: a checkpoint's manifest
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stores a manifest durably.
 *
 * Returns: (transfer full): its content address, or %NULL with @error set
 */
char *
sandbox_cluster_blob_store_put_manifest (SandboxClusterBlobStore  *self,
                                         GBytes                   *manifest,
                                         GCancellable             *cancellable,
                                         GError                  **error)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_BLOB_STORE (self), NULL);
  g_return_val_if_fail (manifest != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return SANDBOX_CLUSTER_BLOB_STORE_GET_IFACE (self)->put_manifest (self, manifest, cancellable,
                                                                    error);
}

/*
 * sandbox_cluster_blob_store_get_manifest:
 * @self: a blob store
 * @digest: a manifest's content address
 * @max_bytes: the largest manifest accepted
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * A manifest that is missing, larger than @max_bytes or whose bytes do not
 * hash to @digest is %SANDBOX_ERROR_UNAVAILABLE.
 *
 * Returns: (transfer full): the manifest's verified bytes, or %NULL with
 *   @error set
 */
GBytes *
sandbox_cluster_blob_store_get_manifest (SandboxClusterBlobStore  *self,
                                         const char               *digest,
                                         gsize                     max_bytes,
                                         GCancellable             *cancellable,
                                         GError                  **error)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_BLOB_STORE (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!sandbox_cluster_digest_is_valid (digest))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "Expected a checkpoint digest (64 lowercase hex digits)");
      return NULL;
    }

  return SANDBOX_CLUSTER_BLOB_STORE_GET_IFACE (self)->get_manifest (self, digest, max_bytes,
                                                                    cancellable, error);
}
