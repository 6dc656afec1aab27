/* sandbox-cluster-placement-private.h — this host in the registry, and picking a host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every cluster backend announces its host in the registry
 * (sandbox-cluster-registry.c, a key on the host's lease, so a dead host
 * leaves by itself): how many of its session slots are free
 * (:session-slots minus the sessions live here) and which templates it
 * stores. It announces again whenever either changes. Announcing is
 * advisory — placement only — so a failure after construction is logged,
 * never an error of the create or stop that caused it; admission is
 * unchanged. The "pick-host" and "list-hosts" action signals of the backend
 * read the registry.
 */

#pragma once

#ifndef SANDBOX_CLUSTER_COMPILATION
# error "sandbox-cluster-placement-private.h is private to the cluster driver."
#endif

#include "sandbox-cluster-owner-private.h"

G_BEGIN_DECLS

/* The default of SandboxClusterBackend:session-slots, and best-of-K's K. */
#define SANDBOX_CLUSTER_DEFAULT_SESSION_SLOTS 64
#define SANDBOX_CLUSTER_DEFAULT_PICK_SAMPLES  2

typedef struct _SandboxClusterPlacement SandboxClusterPlacement;

SandboxClusterPlacement *sandbox_cluster_placement_new      (SandboxClusterHost       *host,
                                                             guint                     session_slots,
                                                             GPtrArray                *templates);
void                     sandbox_cluster_placement_free     (SandboxClusterPlacement  *self);
gboolean                 sandbox_cluster_placement_announce (SandboxClusterPlacement  *self,
                                                             GCancellable             *cancellable,
                                                             GError                  **error);
void                     sandbox_cluster_placement_set_live (SandboxClusterPlacement  *self,
                                                             guint                     n_live);
void                     sandbox_cluster_placement_add_template    (SandboxClusterPlacement *self,
                                                                    const char              *template_key);
void                     sandbox_cluster_placement_remove_template (SandboxClusterPlacement *self,
                                                                    const char              *template_key);
char                    *sandbox_cluster_placement_pick     (SandboxClusterPlacement  *self,
                                                             const char               *template_key,
                                                             guint                     samples,
                                                             GError                  **error);
char                    *sandbox_cluster_placement_list_json (SandboxClusterPlacement *self,
                                                              GError                 **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxClusterPlacement, sandbox_cluster_placement_free)

G_END_DECLS
