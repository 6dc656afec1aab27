/* sandbox-cluster-template-share-private.h — templates that follow their sessions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A session can resume on any host, but a host can only run it from a
 * template its own bubblewrap store holds. So a prewarm through the cluster
 * also publishes the template: its files go to the shared blob store as a
 * manifest (the checkpoint format), and etcd maps the key to it, at
 * <prefix>templates/<key> = {"name": …, "manifest": digest, "runtime": key}
 * ("runtime" only when the template names one, which is then published
 * too: sandbox-cluster-runtime-share-private.h). A host asked
 * to create or resume from a template it lacks fetches it: materialises the
 * manifest in <state-directory>/incoming/, imports it with the public
 * template API (on its runtime, fetched first when the host lacks it), and
 * keeps it only if it hashes to the key it was asked for,
 * so a store or an etcd value that lies yields SANDBOX_ERROR_UNAVAILABLE,
 * never another template's files. The record is written unfenced: a key
 * names its content, so every host would write the same.
 */

#pragma once

#ifndef SANDBOX_CLUSTER_COMPILATION
# error "sandbox-cluster-template-share-private.h is private to the cluster driver."
#endif

#include "sandbox-cluster-blob-store-private.h"
#include "sandbox-cluster-owner-private.h"

G_BEGIN_DECLS

typedef struct
{
  SandboxClusterHost *host;
  SandboxClusterBlobStore *blobs;
  SandboxBackend *bubblewrap;
  const char *incoming;   /* this host's scratch directory for fetches */
} SandboxClusterTemplateShare;

gboolean sandbox_cluster_template_publish (const SandboxClusterTemplateShare  *share,
                                           const char                         *template_key,
                                           const char                         *name,
                                           const char                         *runtime_key,
                                           GCancellable                       *cancellable,
                                           GError                            **error);
gboolean sandbox_cluster_template_fetch   (const SandboxClusterTemplateShare  *share,
                                           const char                         *template_key,
                                           GCancellable                       *cancellable,
                                           GError                            **error);

G_END_DECLS
