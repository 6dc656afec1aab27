/* sandbox-cluster-runtime-share-private.h — runtimes that follow their templates
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A template naming a runtime can only be fetched by a host whose
 * bubblewrap store holds that runtime too. So an import through the cluster
 * also publishes the runtime, as a prewarm publishes a template: its tree
 * goes to the shared blob store as a manifest (the checkpoint format), and
 * etcd maps the key to it, at <prefix>runtimes/<key> = {"manifest": digest}.
 *
 * What is published is the tree *as imported* — what the runtime's key is
 * computed over — not the bubblewrap store's copy: that store adds empty
 * identity files to the tree's etc/ after computing the key (the curated
 * /etc's mount points), so its copy walks to another key. The cluster
 * unpacks the source itself into <state-directory>/incoming/ with the
 * core's sandbox_runtime_import_at() (the one contained unpacker), imports
 * that tree into its bubblewrap store (checking the store computes the same
 * key) and publishes it. A runtime holding anything a manifest cannot keep
 * (a non-UTF-8 name, a file its owner cannot read) is refused rather than
 * published as another tree.
 *
 * A host fetching a template whose record names a runtime its store lacks
 * materialises the runtime's manifest in incoming/, imports it with the
 * public backend API and keeps it only if it hashes to the key asked for:
 * a store or a record that lies is SANDBOX_ERROR_UNAVAILABLE and leaves
 * nothing behind. The record is written unfenced: a key names its content,
 * so every host would write the same.
 */

#pragma once

#ifndef SANDBOX_CLUSTER_COMPILATION
# error "sandbox-cluster-runtime-share-private.h is private to the cluster driver."
#endif

#include "sandbox-cluster-template-share-private.h"

G_BEGIN_DECLS

char     *sandbox_cluster_runtime_import   (const SandboxClusterTemplateShare  *share,
                                            SandboxBackend                     *backend,
                                            GFile                              *source,
                                            gboolean                           *reused,
                                            GCancellable                       *cancellable,
                                            GError                            **error);
gboolean  sandbox_cluster_runtime_is_published (const SandboxClusterTemplateShare  *share,
                                                const char                         *runtime_key,
                                                GCancellable                       *cancellable,
                                                GError                            **error);
gboolean  sandbox_cluster_runtime_ensure   (const SandboxClusterTemplateShare  *share,
                                            const char                         *runtime_key,
                                            GCancellable                       *cancellable,
                                            GError                            **error);

G_END_DECLS
