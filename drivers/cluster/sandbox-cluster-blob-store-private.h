/* sandbox-cluster-blob-store-private.h — where checkpoints keep their bytes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A blob store holds two kinds of content-addressed objects, both named by
 * the lowercase hex SHA-256 of their bytes: blobs (the contents of workspace
 * files) and manifests (a checkpoint's JSON, which names the blobs). Objects
 * are immutable: putting what is already there is a no-op, and nothing is
 * ever rewritten in place. Every put is durable when it returns (the bytes
 * and their name are synced), so the fenced etcd commit that follows can
 * name it. Readers trust nothing: the checkpoint code verifies every hash.
 *
 * The first implementation is a directory (SandboxClusterBlobDir), which
 * shared storage (NFS) serves as is; an object store is the same interface.
 */

#pragma once

#ifndef SANDBOX_CLUSTER_COMPILATION
# error "sandbox-cluster-blob-store-private.h is private to the cluster driver."
#endif

#include <sandbox-backend-driver.h>

G_BEGIN_DECLS

/* Hex digits of a SHA-256 content address. */
#define SANDBOX_CLUSTER_DIGEST_LENGTH 64

#define SANDBOX_CLUSTER_TYPE_BLOB_STORE (sandbox_cluster_blob_store_get_type ())
G_DECLARE_INTERFACE (SandboxClusterBlobStore, sandbox_cluster_blob_store,
                     SANDBOX_CLUSTER, BLOB_STORE, GObject)

/**
 * SandboxClusterBlobStoreInterface:
 * @has_blob: whether a blob of that digest and size is stored (any failure
 *   to tell counts as "no": the caller then puts it again)
 * @put_blob: stores at most @max_bytes bytes of a stream (fewer at its end)
 *   and returns their digest and size
 * @open_blob: a stream of a stored blob's bytes, unverified
 * @put_manifest: stores a manifest and returns its digest
 * @get_manifest: a stored manifest's bytes, verified against its digest
 *
 * Blocking calls, for a worker thread; all are thread-safe.
 */
struct _SandboxClusterBlobStoreInterface
{
  GTypeInterface parent_iface;

  gboolean      (*has_blob)     (SandboxClusterBlobStore  *self,
                                 const char               *digest,
                                 guint64                   size);
  gboolean      (*put_blob)     (SandboxClusterBlobStore  *self,
                                 GInputStream             *contents,
                                 guint64                   max_bytes,
                                 char                    **digest,
                                 guint64                  *size,
                                 GCancellable             *cancellable,
                                 GError                  **error);
  GInputStream *(*open_blob)    (SandboxClusterBlobStore  *self,
                                 const char               *digest,
                                 GCancellable             *cancellable,
                                 GError                  **error);
  char         *(*put_manifest) (SandboxClusterBlobStore  *self,
                                 GBytes                   *manifest,
                                 GCancellable             *cancellable,
                                 GError                  **error);
  GBytes       *(*get_manifest) (SandboxClusterBlobStore  *self,
                                 const char               *digest,
                                 gsize                     max_bytes,
                                 GCancellable             *cancellable,
                                 GError                  **error);
};

gboolean      sandbox_cluster_blob_store_has_blob     (SandboxClusterBlobStore  *self,
                                                       const char               *digest,
                                                       guint64                   size);
gboolean      sandbox_cluster_blob_store_put_blob     (SandboxClusterBlobStore  *self,
                                                       GInputStream             *contents,
                                                       guint64                   max_bytes,
                                                       char                    **digest,
                                                       guint64                  *size,
                                                       GCancellable             *cancellable,
                                                       GError                  **error);
GInputStream *sandbox_cluster_blob_store_open_blob    (SandboxClusterBlobStore  *self,
                                                       const char               *digest,
                                                       GCancellable             *cancellable,
                                                       GError                  **error);
char         *sandbox_cluster_blob_store_put_manifest (SandboxClusterBlobStore  *self,
                                                       GBytes                   *manifest,
                                                       GCancellable             *cancellable,
                                                       GError                  **error);
GBytes       *sandbox_cluster_blob_store_get_manifest (SandboxClusterBlobStore  *self,
                                                       const char               *digest,
                                                       gsize                     max_bytes,
                                                       GCancellable             *cancellable,
                                                       GError                  **error);

gboolean      sandbox_cluster_digest_is_valid         (const char               *digest);
gboolean      sandbox_cluster_blob_copy               (GInputStream             *contents,
                                                       guint64                   max_bytes,
                                                       GOutputStream            *output,
                                                       char                    **digest,
                                                       guint64                  *size,
                                                       GCancellable             *cancellable,
                                                       GError                  **error);

/**
 * SandboxClusterBlobDir:
 *
 * A blob store in a host directory: `<root>/blobs/<2 hex>/<digest>`,
 * `<root>/manifests/<digest>`, `<root>/tmp/` for puts in progress.
 */
#define SANDBOX_CLUSTER_TYPE_BLOB_DIR (sandbox_cluster_blob_dir_get_type ())
G_DECLARE_FINAL_TYPE (SandboxClusterBlobDir, sandbox_cluster_blob_dir,
                      SANDBOX_CLUSTER, BLOB_DIR, GObject)

SandboxClusterBlobDir *sandbox_cluster_blob_dir_new (const char  *path,
                                                     GError     **error);

G_END_DECLS
