/* fuzz-cluster-etcd.c — the cluster driver's parsers of etcd's replies
 *
 * A reply is untrusted bytes from the network (drivers/cluster/
 * sandbox-cluster-etcd-json.c, compiled in here as is). The first input byte
 * picks the parser (range, txn, lease grant, keepalive), the rest is the
 * body. Properties: exactly one of a result and an error; every error is
 * SANDBOX_ERROR_UNAVAILABLE with a UTF-8 message naming the endpoint; an
 * accepted range has non-empty UTF-8 keys without NUL, possible revisions and
 * a count no smaller than its keys; an accepted grant has an ID and a TTL; no
 * TTL is ever negative. Nothing is read or written outside the input (ASan).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#define SANDBOX_CLUSTER_COMPILATION
#include "../../drivers/cluster/sandbox-cluster-etcd-json.c"

#define ENDPOINT "http://etcd.invalid:2379"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_common_init ();
  g_log_set_fatal_mask ("Sandbox-Cluster", G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  return 0;
}

static void
check_error (const GError *error)
{
  FUZZ_CHECK (error != NULL);
  FUZZ_CHECK (g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE));
  FUZZ_CHECK (g_utf8_validate (error->message, -1, NULL));
  FUZZ_CHECK (strstr (error->message, ENDPOINT) != NULL);
}

static void
check_range (const SandboxClusterEtcdRange *range)
{
  FUZZ_CHECK (range->revision >= 0);
  FUZZ_CHECK (range->count >= (gint64) range->kvs->len);
  for (guint i = 0; i < range->kvs->len; i++)
    {
      const SandboxClusterEtcdKv *kv = range->kvs->pdata[i];

      FUZZ_CHECK (kv->key != NULL && kv->key[0] != '\0');
      FUZZ_CHECK (g_utf8_validate (kv->key, -1, NULL));
      FUZZ_CHECK (kv->value != NULL);
      FUZZ_CHECK (kv->create_revision > 0 && kv->mod_revision >= kv->create_revision);
      FUZZ_CHECK (kv->version >= 0);
    }
}

static void
fuzz_range (const char *body,
            gsize       length)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxClusterEtcdRange) range =
    sandbox_cluster_etcd_parse_range (ENDPOINT, body, length, &error);

  if (range == NULL)
    return check_error (error);
  FUZZ_CHECK (error == NULL);
  check_range (range);
}

static void
fuzz_txn (const char *body,
          gsize       length)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxClusterEtcdTxnResult) result =
    sandbox_cluster_etcd_parse_txn (ENDPOINT, body, length, &error);

  if (result == NULL)
    return check_error (error);
  FUZZ_CHECK (error == NULL);
  FUZZ_CHECK (result->revision >= 0);
  FUZZ_CHECK (result->succeeded == TRUE || result->succeeded == FALSE);
  for (guint i = 0; i < result->ranges->len; i++)
    check_range (result->ranges->pdata[i]);
}

static void
fuzz_grant (const char *body,
            gsize       length)
{
  g_autoptr(GError) error = NULL;
  gint64 id = -1, ttl = -1;

  if (!sandbox_cluster_etcd_parse_grant (ENDPOINT, body, length, &id, &ttl, &error))
    return check_error (error);
  FUZZ_CHECK (error == NULL);
  FUZZ_CHECK (id != 0 && ttl > 0);
}

static void
fuzz_keepalive (const char *body,
                gsize       length)
{
  g_autoptr(GError) error = NULL;
  gint64 ttl = -1;

  if (!sandbox_cluster_etcd_parse_keepalive (ENDPOINT, body, length, &ttl, &error))
    return check_error (error);
  FUZZ_CHECK (error == NULL);
  FUZZ_CHECK (ttl >= 0);   /* 0: the lease is gone, which the caller acts on */
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  /* The parsers get the body as it came off the wire, not NUL-terminated:
   * a copy of exactly its bytes lets ASan see a read past the end. */
  g_autofree char *body = NULL;
  gsize length;

  if (size == 0)
    return 0;
  length = size - 1;
  body = g_malloc (MAX (length, 1));   /* an empty body still has an address */
  memcpy (body, data + 1, length);
  switch (data[0] % 4)
    {
    case 0: fuzz_range (body, length); break;
    case 1: fuzz_txn (body, length); break;
    case 2: fuzz_grant (body, length); break;
    default: fuzz_keepalive (body, length); break;
    }
  return 0;
}
