/* sandbox-cluster-host-private.h — what the ownership files share
 *
 * sandbox-cluster-host.c (the lease), sandbox-cluster-owner.c (sessions)
 * and sandbox-cluster-registry.c (hosts) implement the one header
 * sandbox-cluster-owner-private.h; these are their common helpers.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-cluster-owner-private.h"

G_BEGIN_DECLS

/* A session or host id usable as one key segment: non-empty UTF-8, no "/". */
gboolean sandbox_cluster_is_valid_name     (const char          *name);

/* %SANDBOX_ERROR_STOPPED once the host is lost (its deadline passed). */
gboolean sandbox_cluster_host_check_alive  (SandboxClusterHost  *self,
                                            GError             **error);

/* The host's prefix followed by the NULL-terminated segments, "/"-joined:
 * sandbox_cluster_host_key (host, "sessions", id, "owner", NULL). */
char    *sandbox_cluster_host_key          (SandboxClusterHost  *self,
                                            const char          *first_segment,
                                            ...) G_GNUC_NULL_TERMINATED;

/* Every key under @directory_key (a key ending in "/"), each checked to
 * really be under it (a reply is untrusted). */
SandboxClusterEtcdRange *sandbox_cluster_host_range_under (SandboxClusterHost  *self,
                                                           const char          *directory_key,
                                                           GCancellable        *cancellable,
                                                           GError             **error);

/* An etcd value that must be one JSON object (strictly parsed): the object,
 * in *@out_root's tree, or %NULL with "Malformed cluster key …" set. */
JsonObject *sandbox_cluster_kv_parse_object (SandboxClusterEtcdKv  *kv,
                                             JsonNode             **out_root,
                                             GError               **error);

/* A string member of an untrusted object: present and a non-empty string,
 * or (when @nullable) null. %FALSE otherwise, with no error set. */
gboolean sandbox_cluster_read_string_member (JsonObject  *object,
                                             const char  *member,
                                             gboolean     nullable,
                                             char       **out);

/* %SANDBOX_ERROR_UNAVAILABLE "Malformed cluster key …": etcd holds a key of
 * ours that we did not write so. Returns %FALSE. */
gboolean sandbox_cluster_set_error_malformed_key (GError     **error,
                                                  const char  *key);

G_END_DECLS
