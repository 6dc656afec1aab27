/* sandbox-cluster-backend-fields-private.h — what a cluster backend holds, for its files
 *
 * sandbox-cluster-backend.c (the backend's methods and ::lost),
 * sandbox-cluster-backend-sessions.c (its sessions) and
 * sandbox-cluster-backend-init.c (its construction) share it; nothing
 * else sees a backend's fields.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-cluster-backend-private.h"
#include "sandbox-cluster-blob-store-private.h"
#include "sandbox-cluster-etcd-private.h"
#include "sandbox-cluster-host-private.h"
#include "sandbox-cluster-placement-private.h"

G_BEGIN_DECLS

struct _SandboxClusterBackend
{
  SandboxBackendBase parent_instance;

  /* properties */
  char *endpoints;
  char *prefix;
  char *host_id;
  guint lease_ttl;
  char *checkpoint_store;
  guint session_slots;

  /* from init */
  SandboxBackend *bubblewrap;
  SandboxClusterEtcd *etcd;
  SandboxClusterHost *host;
  SandboxClusterBlobStore *blobs;
  char *markers;        /* <state-directory>/checkpoints: what this host's copies are at */
  char *incoming;       /* <state-directory>/incoming: templates being fetched */
  SandboxClusterPlacement *placement;
  gulong lost_id;

  GMutex lock;
  GHashTable *live;     /* SandboxClusterHandle * (not owned): fenced on ::lost */
};

/* sandbox-cluster-backend-init.c: the backend's init_backend(). */
gboolean sandbox_cluster_backend_init_backend (SandboxBackendBase  *base,
                                               GCancellable        *cancellable,
                                               GError             **error);

/* sandbox-cluster-backend.c: a new handle is live (fenced on ::lost). */
void     sandbox_cluster_backend_track        (SandboxClusterBackend  *self,
                                               SandboxHandle          *handle);

/* sandbox-cluster-backend-sessions.c: the session protocol's hooks, set in
 * class_init, and the interface methods they make. */
void     sandbox_cluster_backend_class_init_sessions (SandboxBackendBaseClass *base_class);
void     sandbox_cluster_backend_implement_sessions  (SandboxBackendInterface *iface);

/* sandbox-cluster-backend.c: fences every live session of the backend
 * (@user_data) when @host lost its lease; connected to ::lost at init. */
void     sandbox_cluster_backend_on_lost      (SandboxClusterHost  *host,
                                               const GError        *reason,
                                               gpointer             user_data);

G_END_DECLS
