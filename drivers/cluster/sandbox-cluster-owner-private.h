/* sandbox-cluster-owner-private.h — host leases, session ownership and fencing in etcd
 *
 * Private to the cluster driver. A #SandboxClusterHost is one host's
 * membership of a cluster: it holds one etcd lease, renews it every TTL/3
 * on a thread of its own, and everything the host owns hangs off that lease.
 *
 * Key layout, under a prefix such as "/libsandbox/<cluster>/" (ends in "/"):
 *
 *   <prefix>hosts/<host-id>            {"freeSlots":N,"templates":[…]}  on the host's lease
 *   <prefix>sessions/<id>/owner        the owner's host id              on the owner's lease
 *   <prefix>sessions/<id>/record       {"templateKey":…,"manifest":…|null,"host":…,"epoch":"N"}
 *
 * Ownership: a session's owner key is created in a txn only if absent, on
 * the host's lease; its create_revision is the owner's *epoch*. Every later
 * write of the owner (checkpoint record, delete, release) is a txn that
 * compares the owner key's create_revision with that epoch, so a host whose
 * lease expired — and whose key was therefore deleted, maybe re-created by
 * another host with a later revision — can never write again: etcd refuses.
 * A host that dies or is cut off loses its lease after the TTL and its
 * sessions free themselves.
 *
 * Self-fencing: the host's deadline is the time its last successful renewal
 * was *sent* + TTL − margin (etcd counts the TTL from when it received the
 * renewal, which is later). At the deadline, or on a keepalive reply that
 * says the lease is gone, the host is *lost*: #SandboxClusterHost::lost is
 * emitted once (the driver kills every command and marks its handles
 * STOPPED) and every further fenced write is refused locally, before any
 * request, with %SANDBOX_ERROR_STOPPED, until it rejoins: its next claim
 * (sandbox_cluster_host_rejoin()) revokes the old lease, with every owner
 * key on it, and takes a new one once etcd answers again.
 *
 * Errors: %SANDBOX_ERROR_UNAVAILABLE when etcd does not answer (construction
 * included: there is no local-only fallback); %SANDBOX_ERROR_BUSY "Sandbox
 * session already has an owner" from claim; %SANDBOX_ERROR_STOPPED when a
 * fenced write is refused (the epoch is no longer the owner's, or the host
 * is lost); %SANDBOX_ERROR_NOT_FOUND from read for an unknown session.
 *
 * Threads: every function may be called from any thread; the sync ones
 * block on etcd (bounded by the client's timeout), the async ones run them
 * in a worker thread and complete in the caller's thread-default context.
 * ::lost is emitted in the thread-default main context of the thread that
 * made the host.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_CLUSTER_COMPILATION
# error "sandbox-cluster-owner-private.h is private to the cluster driver."
#endif

#include "sandbox-cluster-etcd-private.h"

G_BEGIN_DECLS

#define SANDBOX_CLUSTER_HOST_DEFAULT_TTL_SECONDS 10

#define SANDBOX_CLUSTER_TYPE_HOST (sandbox_cluster_host_get_type ())
G_DECLARE_FINAL_TYPE (SandboxClusterHost, sandbox_cluster_host, SANDBOX_CLUSTER, HOST, GObject)

/**
 * SandboxClusterSessionRecord:
 * @session_id: the session
 * @template_key: the template it was created from (from the record; NULL
 *   when the session has an owner key but no record yet)
 * @manifest_digest: the digest of its last checkpoint manifest, NULL if
 *   never checkpointed
 * @record_host: the host that wrote the record
 * @record_epoch: the epoch it was written under
 * @owner_host: the host that owns it now, NULL when unowned
 * @owner_epoch: the current owner's epoch, 0 when unowned
 */
typedef struct
{
  char *session_id;
  char *template_key;
  char *manifest_digest;
  char *record_host;
  gint64 record_epoch;
  char *owner_host;
  gint64 owner_epoch;
} SandboxClusterSessionRecord;

void sandbox_cluster_session_record_free (SandboxClusterSessionRecord *record);
/* For a record read after claiming its session under @epoch (a resume):
 * %SANDBOX_ERROR_UNAVAILABLE when it says it was written under @epoch or a
 * later one, which no owner had when it was written. */
gboolean sandbox_cluster_session_record_check_claimed (const SandboxClusterSessionRecord  *record,
                                                       gint64                              epoch,
                                                       GError                            **error);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxClusterSessionRecord, sandbox_cluster_session_record_free)

/**
 * SandboxClusterHostInfo:
 * @host_id: the host
 * @free_slots: the command slots it had free when it last registered
 * @templates: (array zero-terminated=1): the template keys present on it
 */
typedef struct
{
  char *host_id;
  guint free_slots;
  char **templates;
} SandboxClusterHostInfo;

void sandbox_cluster_host_info_free (SandboxClusterHostInfo *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxClusterHostInfo, sandbox_cluster_host_info_free)

/* Grants the host's lease (etcd down → %SANDBOX_ERROR_UNAVAILABLE) and starts
 * renewing it. @prefix must end in "/"; @host_id is non-empty without "/";
 * @ttl_seconds 0 means the default (10 s); the margin is TTL/10, at least
 * 200 ms. */
SandboxClusterHost *sandbox_cluster_host_new             (SandboxClusterEtcd  *etcd,
                                                          const char          *prefix,
                                                          const char          *host_id,
                                                          guint                ttl_seconds,
                                                          GCancellable        *cancellable,
                                                          GError             **error);
/* Stops renewing and revokes the lease (best effort): every session the
 * host owns is free at once. The host is lost afterwards, for good (no
 * rejoin). Idempotent. */
void                sandbox_cluster_host_close           (SandboxClusterHost  *self);
/* %TRUE at once while the host is alive. A lost host whose ::lost handlers
 * have run (its sessions fenced) revokes its old lease — so no write under
 * one of its epochs can ever succeed again, even where etcd still held the
 * lease — and takes a new one with the same TTL: alive again, its sessions
 * claimable anew. Blocking (two etcd calls). %SANDBOX_ERROR_STOPPED while
 * ::lost is still being handled, after close, and when etcd does not
 * answer (its reason in the message): the host stays lost, and a later
 * call retries. */
gboolean            sandbox_cluster_host_rejoin          (SandboxClusterHost  *self,
                                                          GCancellable        *cancellable,
                                                          GError             **error);

const char         *sandbox_cluster_host_get_id          (SandboxClusterHost  *self);
const char         *sandbox_cluster_host_get_prefix      (SandboxClusterHost  *self);
SandboxClusterEtcd *sandbox_cluster_host_get_etcd        (SandboxClusterHost  *self);
gint64              sandbox_cluster_host_get_lease       (SandboxClusterHost  *self);
guint               sandbox_cluster_host_get_ttl_seconds (SandboxClusterHost  *self);
gboolean            sandbox_cluster_host_is_lost         (SandboxClusterHost  *self);
/* The self-fencing deadline, in g_get_monotonic_time() microseconds. */
gint64              sandbox_cluster_host_get_deadline    (SandboxClusterHost  *self);

/* Claims @session_id for this host; *out_epoch is the owner key's create
 * revision. %SANDBOX_ERROR_BUSY while another host (or this one, under an
 * earlier claim still held) owns it. Claiming does not need a record: a new
 * session is claimed, then committed. */
gboolean sandbox_cluster_host_claim          (SandboxClusterHost  *self,
                                              const char          *session_id,
                                              gint64              *out_epoch,
                                              GCancellable        *cancellable,
                                              GError             **error);
void     sandbox_cluster_host_claim_async    (SandboxClusterHost  *self,
                                              const char          *session_id,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
gboolean sandbox_cluster_host_claim_finish   (SandboxClusterHost  *self,
                                              GAsyncResult        *result,
                                              gint64              *out_epoch,
                                              GError             **error);

/* Fenced: writes the session's record (@manifest_digest NULL: no checkpoint
 * yet) if @epoch is still the owner's. Blobs and manifest must be durable
 * before this call: it is the commit point. A NULL @manifest_digest only
 * creates the record: over an existing one it is %SANDBOX_ERROR_INVALID
 * (a reader refuses a null manifest in a record written more than once). */
gboolean sandbox_cluster_host_commit         (SandboxClusterHost  *self,
                                              const char          *session_id,
                                              gint64               epoch,
                                              const char          *template_key,
                                              const char          *manifest_digest,
                                              GCancellable        *cancellable,
                                              GError             **error);
void     sandbox_cluster_host_commit_async   (SandboxClusterHost  *self,
                                              const char          *session_id,
                                              gint64               epoch,
                                              const char          *template_key,
                                              const char          *manifest_digest,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
gboolean sandbox_cluster_host_commit_finish  (SandboxClusterHost  *self,
                                              GAsyncResult        *result,
                                              GError             **error);

/* Fenced: deletes the owner key, leaving the record for the next owner.
 * Releasing an epoch that is no longer the owner's is
 * %SANDBOX_ERROR_STOPPED (nothing is written). */
gboolean sandbox_cluster_host_release        (SandboxClusterHost  *self,
                                              const char          *session_id,
                                              gint64               epoch,
                                              GCancellable        *cancellable,
                                              GError             **error);
void     sandbox_cluster_host_release_async  (SandboxClusterHost  *self,
                                              const char          *session_id,
                                              gint64               epoch,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
gboolean sandbox_cluster_host_release_finish (SandboxClusterHost  *self,
                                              GAsyncResult        *result,
                                              GError             **error);

/* Fenced: deletes the record and the owner key in one txn. */
gboolean sandbox_cluster_host_delete         (SandboxClusterHost  *self,
                                              const char          *session_id,
                                              gint64               epoch,
                                              GCancellable        *cancellable,
                                              GError             **error);
void     sandbox_cluster_host_delete_async   (SandboxClusterHost  *self,
                                              const char          *session_id,
                                              gint64               epoch,
                                              GCancellable        *cancellable,
                                              GAsyncReadyCallback  callback,
                                              gpointer             user_data);
gboolean sandbox_cluster_host_delete_finish  (SandboxClusterHost  *self,
                                              GAsyncResult        *result,
                                              GError             **error);

/* Reads the record and the owner key at one revision.
 * %SANDBOX_ERROR_NOT_FOUND when neither exists. */
SandboxClusterSessionRecord *sandbox_cluster_host_read_session        (SandboxClusterHost  *self,
                                                                       const char          *session_id,
                                                                       GCancellable        *cancellable,
                                                                       GError             **error);
void                         sandbox_cluster_host_read_session_async  (SandboxClusterHost  *self,
                                                                       const char          *session_id,
                                                                       GCancellable        *cancellable,
                                                                       GAsyncReadyCallback  callback,
                                                                       gpointer             user_data);
SandboxClusterSessionRecord *sandbox_cluster_host_read_session_finish (SandboxClusterHost  *self,
                                                                       GAsyncResult        *result,
                                                                       GError             **error);
/* (element-type SandboxClusterSessionRecord): every session with a record
 * or an owner, by session id. */
GPtrArray                   *sandbox_cluster_host_list_sessions       (SandboxClusterHost  *self,
                                                                       GCancellable        *cancellable,
                                                                       GError             **error);

/* Host registry: (re)writes this host's key on its lease. */
gboolean   sandbox_cluster_host_register   (SandboxClusterHost  *self,
                                            guint                free_slots,
                                            const char *const   *templates,
                                            GCancellable        *cancellable,
                                            GError             **error);
/* (element-type SandboxClusterHostInfo): the live hosts, by host id. */
GPtrArray *sandbox_cluster_host_list_hosts (SandboxClusterHost  *self,
                                            GCancellable        *cancellable,
                                            GError             **error);
/* Best of @k random samples of @hosts (with replacement): the most free
 * slots, a host that has @template_key (nullable) first. NULL when @hosts
 * is empty or no sample has a free slot. (transfer none) */
SandboxClusterHostInfo *sandbox_cluster_pick_host (GPtrArray   *hosts,
                                                   guint        k,
                                                   const char  *template_key,
                                                   GRand       *rand);

G_END_DECLS
