/* sandbox-cluster-deleted-private.h — local copies of sessions the cluster deleted
 *
 * A session is deleted by one host: the fenced delete of its etcd keys,
 * then that host's own copy. Every other host that had the session keeps a
 * copy (its bubblewrap session: workspace, state.json; its checkpoint
 * marker) until it notices. What tells it is the record's absence: a
 * session's record is written before any host makes a copy of it (create
 * commits it before the import; a resume reads it under its claim first)
 * and removed before the deleting host removes its own, and session ids
 * are random and never reused, so a copy whose record is gone is of a
 * deleted session for good. No tombstone is written, so none accumulates.
 *
 * A host checks at its start (every copy it has), on every list (the
 * copies listed: those gone are left out and removed) and on every resume
 * of a session whose record is gone (load_state). The read of the local
 * copies always comes before the read of etcd, so a copy made meanwhile is
 * never taken for a deleted one.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-cluster-backend-fields-private.h"

G_BEGIN_DECLS

/* Removes from @sessions (element-type SandboxSessionInfo: this host's
 * bubblewrap list, read before this call) the sessions whose record is
 * gone from etcd, and removes this host's copies of them (best effort,
 * logged). %SANDBOX_ERROR_UNAVAILABLE when etcd cannot be read: then
 * nothing is left out, and the caller must not show the list. */
gboolean sandbox_cluster_deleted_filter       (SandboxClusterBackend  *self,
                                               GPtrArray              *sessions,
                                               GCancellable           *cancellable,
                                               GError                **error);

/* Removes this host's copy of @session_id (its bubblewrap session, then its
 * marker), which the cluster deleted: best effort, logged. A copy a live
 * handle of this process still holds (a fenced one) stays until a later
 * sweep. */
void     sandbox_cluster_deleted_remove_local (SandboxClusterBackend  *self,
                                               const char             *session_id,
                                               GCancellable           *cancellable);

/* At construction: every copy this host has whose record is gone is
 * removed. Best effort: etcd has just answered, but a failure is logged,
 * never the construction's error (the next list or start tries again). */
void     sandbox_cluster_deleted_sweep        (SandboxClusterBackend  *self,
                                               GCancellable           *cancellable);

G_END_DECLS
