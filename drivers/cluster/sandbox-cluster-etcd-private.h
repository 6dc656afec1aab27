/* sandbox-cluster-etcd-private.h — a small etcd v3 client over the HTTP/JSON gateway
 *
 * Private to the cluster driver. etcd 3.4 serves its gRPC API as JSON at
 * /v3/… on the client URL (grpc-gateway). What the gateway does that a
 * client must know, measured against Debian's etcd-server 3.4.23:
 *
 * - keys and values travel base64-encoded; int64 fields are JSON strings;
 * - false and zero fields are omitted: a txn reply without "succeeded" is a
 *   failed txn, a keepalive reply without "TTL" means the lease is gone, a
 *   range without "kvs" is empty;
 * - /v3/lease/keepalive is a stream: one request body gives one
 *   {"result": {…}} object and the stream ends;
 * - errors are {"error", "message", "code"} with a gRPC code (5 = not found,
 *   14 = unavailable, 4 = deadline exceeded) and an HTTP status;
 * - a prefix range needs range_end = the prefix with its last byte + 1.
 *
 * Every call tries the endpoints in order and moves to the next on a
 * connection failure, a timeout or an "unavailable" reply; when none answers
 * the error is %SANDBOX_ERROR_UNAVAILABLE naming the endpoints. Each attempt
 * has its own timeout (the #SandboxClusterEtcd:timeout-ms given at
 * construction), so a call takes at most endpoints × timeout. Replies are
 * bounded (#SANDBOX_CLUSTER_ETCD_MAX_REPLY_BYTES) and parsed strictly: a
 * malformed or oversized reply is a #GError (%SANDBOX_ERROR_UNAVAILABLE),
 * never a crash. Cancellation gives %G_IO_ERROR_CANCELLED.
 *
 * Threads: the object is immutable after construction; every function may
 * be called from any thread. The async variants complete in the
 * thread-default main context of the caller; the sync variants iterate a
 * private main context of their own.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_CLUSTER_COMPILATION
# error "sandbox-cluster-etcd-private.h is private to the cluster driver."
#endif

#include <gio/gio.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* The largest reply body read from etcd: a bigger one is refused. */
#define SANDBOX_CLUSTER_ETCD_MAX_REPLY_BYTES (8 * 1024 * 1024)
/* The default per-attempt timeout. */
#define SANDBOX_CLUSTER_ETCD_DEFAULT_TIMEOUT_MS 2000

#define SANDBOX_CLUSTER_TYPE_ETCD (sandbox_cluster_etcd_get_type ())
G_DECLARE_FINAL_TYPE (SandboxClusterEtcd, sandbox_cluster_etcd, SANDBOX_CLUSTER, ETCD, GObject)

/**
 * SandboxClusterEtcdKv:
 * @key: the key (etcd keys are bytes; ours are UTF-8 paths, and a key with a
 *   NUL byte is refused as malformed)
 * @value: the value
 * @create_revision: the revision that created the key (0: never happens in a reply)
 * @mod_revision: the revision of the last change
 * @version: the number of changes since creation
 * @lease: the lease the key is attached to, 0 for none
 */
typedef struct
{
  char *key;
  GBytes *value;
  gint64 create_revision;
  gint64 mod_revision;
  gint64 version;
  gint64 lease;
} SandboxClusterEtcdKv;

void sandbox_cluster_etcd_kv_free (SandboxClusterEtcdKv *kv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxClusterEtcdKv, sandbox_cluster_etcd_kv_free)

/**
 * SandboxClusterEtcdRange:
 * @revision: the store revision the reply was read at
 * @kvs: (element-type SandboxClusterEtcdKv): the keys, in key order
 * @count: how many keys the range matched (can exceed @kvs->len with a limit)
 * @more: whether keys were left out by a limit
 */
typedef struct
{
  gint64 revision;
  GPtrArray *kvs;
  gint64 count;
  gboolean more;
} SandboxClusterEtcdRange;

void sandbox_cluster_etcd_range_free (SandboxClusterEtcdRange *range);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxClusterEtcdRange, sandbox_cluster_etcd_range_free)

/**
 * SandboxClusterEtcdCompare:
 *
 * The comparison of a txn condition (etcd's Compare.result).
 */
typedef enum
{
  SANDBOX_CLUSTER_ETCD_EQUAL,
  SANDBOX_CLUSTER_ETCD_NOT_EQUAL,
  SANDBOX_CLUSTER_ETCD_GREATER,
  SANDBOX_CLUSTER_ETCD_LESS,
} SandboxClusterEtcdCompare;

/**
 * SandboxClusterEtcdTxn:
 *
 * A transaction being built: conditions (all must hold), then the
 * operations of the success branch and of the failure branch. Build it,
 * then sandbox_cluster_etcd_txn() it; not thread-safe while building.
 */
typedef struct _SandboxClusterEtcdTxn SandboxClusterEtcdTxn;

SandboxClusterEtcdTxn *sandbox_cluster_etcd_txn_new                     (void);
void                   sandbox_cluster_etcd_txn_free                    (SandboxClusterEtcdTxn     *txn);
/* A missing key has create_revision, mod_revision and version 0. */
void                   sandbox_cluster_etcd_txn_compare_create_revision (SandboxClusterEtcdTxn     *txn,
                                                                         const char                *key,
                                                                         SandboxClusterEtcdCompare  compare,
                                                                         gint64                     revision);
void                   sandbox_cluster_etcd_txn_compare_mod_revision    (SandboxClusterEtcdTxn     *txn,
                                                                         const char                *key,
                                                                         SandboxClusterEtcdCompare  compare,
                                                                         gint64                     revision);
void                   sandbox_cluster_etcd_txn_compare_value           (SandboxClusterEtcdTxn     *txn,
                                                                         const char                *key,
                                                                         SandboxClusterEtcdCompare  compare,
                                                                         GBytes                    *value);
/* @on_success: TRUE adds to the success branch, FALSE to the failure branch.
 * @lease: 0 for none. @range_end: NULL for the key alone. */
void                   sandbox_cluster_etcd_txn_put                     (SandboxClusterEtcdTxn     *txn,
                                                                         gboolean                   on_success,
                                                                         const char                *key,
                                                                         GBytes                    *value,
                                                                         gint64                     lease);
void                   sandbox_cluster_etcd_txn_delete                  (SandboxClusterEtcdTxn     *txn,
                                                                         gboolean                   on_success,
                                                                         const char                *key,
                                                                         const char                *range_end);
void                   sandbox_cluster_etcd_txn_range                   (SandboxClusterEtcdTxn     *txn,
                                                                         gboolean                   on_success,
                                                                         const char                *key,
                                                                         const char                *range_end);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxClusterEtcdTxn, sandbox_cluster_etcd_txn_free)

/**
 * SandboxClusterEtcdTxnResult:
 * @succeeded: whether the conditions held (the success branch ran)
 * @revision: the store revision after the txn
 * @ranges: (element-type SandboxClusterEtcdRange): the replies of the
 *   range operations of the branch that ran, in order
 */
typedef struct
{
  gboolean succeeded;
  gint64 revision;
  GPtrArray *ranges;
} SandboxClusterEtcdTxnResult;

void sandbox_cluster_etcd_txn_result_free (SandboxClusterEtcdTxnResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxClusterEtcdTxnResult, sandbox_cluster_etcd_txn_result_free)

/* @endpoints: client URLs such as "http://127.0.0.1:2379" (http or https,
 * no path); @timeout_ms: per attempt, 0 for the default. %SANDBOX_ERROR_INVALID
 * on a malformed endpoint list. No request is made. */
SandboxClusterEtcd *sandbox_cluster_etcd_new           (const char *const  *endpoints,
                                                        guint               timeout_ms,
                                                        GError            **error);
/* A comma-separated list, as sandboxctl's endpoints=… option gives it. */
SandboxClusterEtcd *sandbox_cluster_etcd_new_from_list (const char         *endpoints,
                                                        guint               timeout_ms,
                                                        GError            **error);
const char *const  *sandbox_cluster_etcd_get_endpoints (SandboxClusterEtcd *self);
guint               sandbox_cluster_etcd_get_timeout_ms (SandboxClusterEtcd *self);

/* The range_end that makes a range over every key starting with @prefix. */
char               *sandbox_cluster_etcd_prefix_end    (const char         *prefix);

/* Leases. A granted lease's TTL can be larger than asked (etcd's minimum). */
gboolean sandbox_cluster_etcd_lease_grant            (SandboxClusterEtcd   *self,
                                                      gint64                ttl_seconds,
                                                      gint64               *out_id,
                                                      gint64               *out_ttl_seconds,
                                                      GCancellable         *cancellable,
                                                      GError              **error);
void     sandbox_cluster_etcd_lease_grant_async      (SandboxClusterEtcd   *self,
                                                      gint64                ttl_seconds,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
gboolean sandbox_cluster_etcd_lease_grant_finish     (SandboxClusterEtcd   *self,
                                                      GAsyncResult         *result,
                                                      gint64               *out_id,
                                                      gint64               *out_ttl_seconds,
                                                      GError              **error);
/* *out_ttl_seconds = 0 when the lease is gone (expired or revoked): that is
 * a successful call, not an error. */
gboolean sandbox_cluster_etcd_lease_keepalive        (SandboxClusterEtcd   *self,
                                                      gint64                id,
                                                      gint64               *out_ttl_seconds,
                                                      GCancellable         *cancellable,
                                                      GError              **error);
void     sandbox_cluster_etcd_lease_keepalive_async  (SandboxClusterEtcd   *self,
                                                      gint64                id,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
gboolean sandbox_cluster_etcd_lease_keepalive_finish (SandboxClusterEtcd   *self,
                                                      GAsyncResult         *result,
                                                      gint64               *out_ttl_seconds,
                                                      GError              **error);
/* Revoking a lease that is already gone succeeds. */
gboolean sandbox_cluster_etcd_lease_revoke           (SandboxClusterEtcd   *self,
                                                      gint64                id,
                                                      GCancellable         *cancellable,
                                                      GError              **error);
void     sandbox_cluster_etcd_lease_revoke_async     (SandboxClusterEtcd   *self,
                                                      gint64                id,
                                                      GCancellable         *cancellable,
                                                      GAsyncReadyCallback   callback,
                                                      gpointer              user_data);
gboolean sandbox_cluster_etcd_lease_revoke_finish    (SandboxClusterEtcd   *self,
                                                      GAsyncResult         *result,
                                                      GError              **error);

/* @range_end: NULL for @key alone. */
SandboxClusterEtcdRange     *sandbox_cluster_etcd_range        (SandboxClusterEtcd     *self,
                                                                const char             *key,
                                                                const char             *range_end,
                                                                GCancellable           *cancellable,
                                                                GError                **error);
void                         sandbox_cluster_etcd_range_async  (SandboxClusterEtcd     *self,
                                                                const char             *key,
                                                                const char             *range_end,
                                                                GCancellable           *cancellable,
                                                                GAsyncReadyCallback     callback,
                                                                gpointer                user_data);
SandboxClusterEtcdRange     *sandbox_cluster_etcd_range_finish (SandboxClusterEtcd     *self,
                                                                GAsyncResult           *result,
                                                                GError                **error);

SandboxClusterEtcdTxnResult *sandbox_cluster_etcd_txn          (SandboxClusterEtcd     *self,
                                                                SandboxClusterEtcdTxn  *txn,
                                                                GCancellable           *cancellable,
                                                                GError                **error);
void                         sandbox_cluster_etcd_txn_async    (SandboxClusterEtcd     *self,
                                                                SandboxClusterEtcdTxn  *txn,
                                                                GCancellable           *cancellable,
                                                                GAsyncReadyCallback     callback,
                                                                gpointer                user_data);
SandboxClusterEtcdTxnResult *sandbox_cluster_etcd_txn_finish   (SandboxClusterEtcd     *self,
                                                                GAsyncResult           *result,
                                                                GError                **error);

/* The reply parsers, exposed for the tests and the fuzzer: @data is an
 * untrusted reply body from @endpoint (named in errors). */
SandboxClusterEtcdRange     *sandbox_cluster_etcd_parse_range     (const char  *endpoint,
                                                                   const char  *data,
                                                                   gsize        length,
                                                                   GError     **error);
SandboxClusterEtcdTxnResult *sandbox_cluster_etcd_parse_txn       (const char  *endpoint,
                                                                   const char  *data,
                                                                   gsize        length,
                                                                   GError     **error);
gboolean                     sandbox_cluster_etcd_parse_grant     (const char  *endpoint,
                                                                   const char  *data,
                                                                   gsize        length,
                                                                   gint64      *out_id,
                                                                   gint64      *out_ttl_seconds,
                                                                   GError     **error);
gboolean                     sandbox_cluster_etcd_parse_keepalive (const char  *endpoint,
                                                                   const char  *data,
                                                                   gsize        length,
                                                                   gint64      *out_ttl_seconds,
                                                                   GError     **error);

G_END_DECLS
