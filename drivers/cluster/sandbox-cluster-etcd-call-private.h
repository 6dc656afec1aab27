/* sandbox-cluster-etcd-call-private.h — the etcd client's own internals
 *
 * Shared by the transport (sandbox-cluster-etcd.c), the reply parsers
 * (sandbox-cluster-etcd-json.c) and the requests (sandbox-cluster-etcd-ops.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-cluster-etcd-private.h"

G_BEGIN_DECLS

/* gRPC status codes etcd puts in its error replies. */
#define ETCD_GRPC_NOT_FOUND 5

/* A reply: who gave it, the HTTP status, the body as read (bounded). */
typedef struct
{
  char *endpoint;
  guint status;
  GBytes *body;
} EtcdReply;

EtcdReply *etcd_reply_new  (const char *endpoint,
                            guint       status,
                            GBytes     *body);
void       etcd_reply_free (EtcdReply  *reply);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (EtcdReply, etcd_reply_free)

void       etcd_call_async  (SandboxClusterEtcd   *self,
                             const char           *path,
                             JsonNode             *body,
                             GCancellable         *cancellable,
                             gpointer              source_tag,
                             GAsyncReadyCallback   callback,
                             gpointer              user_data);
EtcdReply *etcd_call_finish (SandboxClusterEtcd   *self,
                             GAsyncResult         *result,
                             GError              **error);

/* Parses @reply's body as a JSON object; an error reply (an "error" member,
 * or an HTTP status other than 200) fails with %SANDBOX_ERROR_UNAVAILABLE
 * naming @reply's endpoint and etcd's message, and *out_grpc_code (nullable)
 * says etcd's gRPC code (0 when there is none). */
JsonNode  *etcd_reply_parse (const char  *endpoint,
                             guint        status,
                             const char  *data,
                             gsize        length,
                             int         *out_grpc_code,
                             GError     **error);

/* The parsers of one reply object each (the public parsers are these on
 * top of etcd_reply_parse()). */
SandboxClusterEtcdRange     *etcd_parse_range_object     (const char  *endpoint,
                                                          JsonObject  *object,
                                                          GError     **error);
SandboxClusterEtcdTxnResult *etcd_parse_txn_object       (const char  *endpoint,
                                                          JsonObject  *object,
                                                          GError     **error);
gboolean                     etcd_parse_grant_object     (const char  *endpoint,
                                                          JsonObject  *object,
                                                          gint64      *out_id,
                                                          gint64      *out_ttl_seconds,
                                                          GError     **error);
gboolean                     etcd_parse_keepalive_object (const char  *endpoint,
                                                          JsonObject  *object,
                                                          gint64      *out_ttl_seconds,
                                                          GError     **error);

/* A sync call: the async one on a private main context, iterated until it
 * completes.
 *
 *   EtcdSync sync;
 *   etcd_sync_begin (&sync);
 *   thing_async (…, etcd_sync_done, &sync);
 *   ok = thing_finish (…, etcd_sync_wait (&sync), …);
 *   etcd_sync_end (&sync);
 */
typedef struct
{
  GMainContext *context;
  GAsyncResult *result;
} EtcdSync;

void          etcd_sync_begin (EtcdSync     *sync);
void          etcd_sync_done  (GObject      *source,
                               GAsyncResult *result,
                               gpointer      user_data);
GAsyncResult *etcd_sync_wait  (EtcdSync     *sync);
void          etcd_sync_end   (EtcdSync     *sync);

G_END_DECLS
