/* sandbox-cluster-owner.c — session ownership: claim, fenced writes, release, read
 *
 * The layout and the rules are in sandbox-cluster-owner-private.h. Every
 * write of an owner is one etcd txn whose condition is "the owner key's
 * create_revision is still my epoch": etcd is the one place that decides,
 * and a stale owner (its lease expired, the key deleted, perhaps created
 * again by another host at a later revision) fails the condition whatever
 * it believes about itself.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <sandbox-backend-driver.h>

#include "sandbox-cluster-host-private.h"
#include "sandbox-json-private.h"

void
sandbox_cluster_session_record_free (SandboxClusterSessionRecord *record)
{
  if (record == NULL)
    return;
  g_free (record->session_id);
  g_free (record->template_key);
  g_free (record->manifest_digest);
  g_free (record->record_host);
  g_free (record->owner_host);
  g_free (record);
}

static gboolean
check_session_id (const char  *session_id,
                  GError     **error)
{
  if (sandbox_cluster_is_valid_name (session_id))
    return TRUE;
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Expected a non-empty session id without \"/\", got \"%s\"",
               session_id != NULL ? session_id : "");
  return FALSE;
}

static GBytes *
node_to_bytes (JsonNode *node)
{
  g_autofree char *text = json_to_string (node, FALSE);
  gsize length = strlen (text);

  return g_bytes_new_take (g_steal_pointer (&text), length);
}

/* The owner key's value: the host, and a nonce that tells this claim from
 * any other, so that a claim whose reply was lost (and that the client
 * retried on another endpoint) recognises itself. */
static GBytes *
owner_value (const char *host_id,
             const char *claim)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, host_id);
  json_builder_set_member_name (builder, "claim");
  json_builder_add_string_value (builder, claim);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  return node_to_bytes (root);
}

/* See sandbox-cluster-host-private.h. */
gboolean
sandbox_cluster_read_string_member (JsonObject  *object,
                                    const char  *member,
                                    gboolean     nullable,
                                    char       **out)
{
  JsonNode *node = json_object_get_member (object, member);

  *out = NULL;
  if (node == NULL)
    return FALSE;
  if (nullable && JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING
      || json_node_get_string (node)[0] == '\0')
    return FALSE;
  *out = g_strdup (json_node_get_string (node));
  return TRUE;
}

JsonObject *
sandbox_cluster_kv_parse_object (SandboxClusterEtcdKv  *kv,
                                 JsonNode             **out_root,
                                 GError               **error)
{
  gsize length;
  const char *data = g_bytes_get_data (kv->value, &length);

  *out_root = NULL;
  if (length == 0 || memchr (data, '\0', length) != NULL
      || (*out_root = sandbox_json_parse_strict (data, length, NULL)) == NULL
      || !JSON_NODE_HOLDS_OBJECT (*out_root))
    {
      sandbox_cluster_set_error_malformed_key (error, kv->key);
      return NULL;
    }
  return json_node_get_object (*out_root);
}

static gboolean
read_owner (SandboxClusterEtcdKv         *kv,
            SandboxClusterSessionRecord  *record,
            GError                      **error)
{
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *claim = NULL;
  JsonObject *object = sandbox_cluster_kv_parse_object (kv, &root, error);

  if (object == NULL)
    return FALSE;
  if (!sandbox_cluster_read_string_member (object, "host", FALSE, &record->owner_host)
      || !sandbox_cluster_read_string_member (object, "claim", FALSE, &claim))
    return sandbox_cluster_set_error_malformed_key (error, kv->key);
  record->owner_epoch = kv->create_revision;
  return TRUE;
}

/* %SANDBOX_ERROR_UNAVAILABLE, as for a malformed key: a record that parses
 * but that no owner could have written (the reason names the member). */
static gboolean G_GNUC_PRINTF (3, 4)
set_error_record_refused (GError     **error,
                          const char  *session_id,
                          const char  *format,
                          ...)
{
  g_autofree char *reason = NULL;
  va_list args;

  va_start (args, format);
  reason = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Sandbox session %s's record in etcd is refused: %s", session_id, reason);
  return FALSE;
}

/* What a record can be, whoever wrote it, given etcd's own metadata for
 * its key (which no writer of values chooses): see "Session records" in
 * docs/cluster.md. */
static gboolean
check_record (SandboxClusterEtcdKv         *kv,
              SandboxClusterSessionRecord  *record,
              GError                      **error)
{
  if (!sandbox_cluster_is_valid_name (record->record_host))
    return set_error_record_refused (error, record->session_id, "its \"host\" is no host id");
  /* Only the commit that creates a record names no checkpoint (see
   * sandbox_cluster_host_commit()): a later write of null would silently
   * resume a checkpointed session as a fresh copy of its template. */
  if (record->manifest_digest == NULL && kv->version != 1)
    return set_error_record_refused (error, record->session_id,
                                     "its \"manifest\" is null, but the record was written "
                                     "%" G_GINT64_FORMAT " times: only its first write names "
                                     "no checkpoint", kv->version);
  /* A commit is a txn fenced on its epoch, the create revision of an owner
   * key that existed before it: the revision that wrote it is later. */
  if (record->record_epoch >= kv->mod_revision)
    return set_error_record_refused (error, record->session_id,
                                     "its \"epoch\" %" G_GINT64_FORMAT " is not before the "
                                     "revision that wrote it (%" G_GINT64_FORMAT ")",
                                     record->record_epoch, kv->mod_revision);
  return TRUE;
}

/* See sandbox-cluster-owner-private.h. */
gboolean
sandbox_cluster_session_record_check_claimed (const SandboxClusterSessionRecord  *record,
                                              gint64                              epoch,
                                              GError                            **error)
{
  /* No record yet: nothing to bind (the caller says what that means). */
  if (record->template_key == NULL)
    return TRUE;
  /* Every epoch a legitimate record was written under was an owner's before
   * this claim, which is the newest: a later one was made up. */
  if (record->record_epoch >= epoch)
    return set_error_record_refused (error, record->session_id,
                                     "its \"epoch\" %" G_GINT64_FORMAT " is not before this "
                                     "host's claim (epoch %" G_GINT64_FORMAT ")",
                                     record->record_epoch, epoch);
  return TRUE;
}

static gboolean
read_record (SandboxClusterEtcdKv         *kv,
             SandboxClusterSessionRecord  *record,
             GError                      **error)
{
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *epoch = NULL;
  JsonObject *object = sandbox_cluster_kv_parse_object (kv, &root, error);

  if (object == NULL)
    return FALSE;
  if (!sandbox_cluster_read_string_member (object, "templateKey", FALSE, &record->template_key)
      || !sandbox_cluster_read_string_member (object, "manifest", TRUE, &record->manifest_digest)
      || !sandbox_cluster_read_string_member (object, "host", FALSE, &record->record_host)
      || !sandbox_cluster_read_string_member (object, "epoch", FALSE, &epoch)
      || !g_ascii_string_to_signed (epoch, 10, 1, G_MAXINT64, &record->record_epoch, NULL))
    return sandbox_cluster_set_error_malformed_key (error, kv->key);
  return check_record (kv, record, error);
}

/* Fills @record from one of a session's keys: ".../owner" or ".../record"
 * (@leaf); other keys under the session are ignored. */
static gboolean
read_session_key (SandboxClusterEtcdKv         *kv,
                  const char                   *leaf,
                  SandboxClusterSessionRecord  *record,
                  GError                      **error)
{
  if (strcmp (leaf, "owner") == 0)
    return read_owner (kv, record, error);
  if (strcmp (leaf, "record") == 0)
    return read_record (kv, record, error);
  return TRUE;
}

/* ------------------------------------------------------------------------ */

/* An owner key on no lease is no host's: every claim puts it on the
 * claiming host's lease, which ends with the host. One left without (by a
 * tool, an operator's etcdctl, an older version) would hold its session
 * for good; it is removed, if still the same key, and said so. */
static gboolean
remove_orphan_owner (SandboxClusterHost    *self,
                     const char            *session_id,
                     SandboxClusterEtcdKv  *kv,
                     GCancellable          *cancellable,
                     GError               **error)
{
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;

  sandbox_cluster_etcd_txn_compare_mod_revision (txn, kv->key, SANDBOX_CLUSTER_ETCD_EQUAL,
                                                 kv->mod_revision);
  sandbox_cluster_etcd_txn_delete (txn, TRUE, kv->key, NULL);
  result = sandbox_cluster_etcd_txn (sandbox_cluster_host_get_etcd (self), txn, cancellable,
                                     error);
  if (result == NULL)
    return FALSE;
  g_log_structured (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE,
                    "SANDBOX_EVENT", "cluster-orphan-owner",
                    "SANDBOX_SESSION_ID", session_id,
                    "MESSAGE", "Removed the owner key of session %s, which was on no lease "
                               "(revision %" G_GINT64_FORMAT "): no host could ever have "
                               "freed it", session_id, kv->mod_revision);
  return TRUE;
}

static gboolean
claim (SandboxClusterHost  *self,
       const char          *session_id,
       gboolean             may_repair,
       gint64              *out_epoch,
       GCancellable        *cancellable,
       GError             **error)
{
  g_autofree char *owner_key = NULL;
  g_autofree char *claim_id = g_uuid_string_random ();
  g_autoptr(GBytes) value = NULL;
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;
  SandboxClusterEtcdRange *range;
  SandboxClusterEtcdKv *kv;

  owner_key = sandbox_cluster_host_key (self, "sessions", session_id, "owner", NULL);
  value = owner_value (sandbox_cluster_host_get_id (self), claim_id);
  sandbox_cluster_etcd_txn_compare_create_revision (txn, owner_key, SANDBOX_CLUSTER_ETCD_EQUAL, 0);
  sandbox_cluster_etcd_txn_put (txn, TRUE, owner_key, value, sandbox_cluster_host_get_lease (self));
  sandbox_cluster_etcd_txn_range (txn, TRUE, owner_key, NULL);
  sandbox_cluster_etcd_txn_range (txn, FALSE, owner_key, NULL);
  result = sandbox_cluster_etcd_txn (sandbox_cluster_host_get_etcd (self), txn, cancellable, error);
  if (result == NULL)
    return FALSE;

  /* Both branches read the owner key back: it exists in either. */
  range = result->ranges->len == 1 ? g_ptr_array_index (result->ranges, 0) : NULL;
  kv = range != NULL && range->kvs->len == 1 ? g_ptr_array_index (range->kvs, 0) : NULL;
  if (kv == NULL)
    return sandbox_cluster_set_error_malformed_key (error, owner_key);

  if (!result->succeeded && kv->lease == 0 && may_repair)
    return remove_orphan_owner (self, session_id, kv, cancellable, error) &&
           claim (self, session_id, FALSE, out_epoch, cancellable, error);
  if (!result->succeeded && !g_bytes_equal (kv->value, value))
    return sandbox_set_error_has_owner (error);
  if (out_epoch != NULL)
    *out_epoch = kv->create_revision;
  return TRUE;
}

gboolean
sandbox_cluster_host_claim (SandboxClusterHost  *self,
                            const char          *session_id,
                            gint64              *out_epoch,
                            GCancellable        *cancellable,
                            GError             **error)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), FALSE);

  /* Every create, resume and delete starts with a claim: a host that lost
   * its lease rejoins here, once etcd answers again. */
  if (!check_session_id (session_id, error) || !sandbox_cluster_host_rejoin (self, cancellable,
                                                                             error))
    return FALSE;
  return claim (self, session_id, TRUE, out_epoch, cancellable, error);
}

/* Runs @txn (its operations already added) under the fence: only if the
 * session's owner key still has @epoch as its create revision. */
static gboolean
fenced_txn (SandboxClusterHost     *self,
            const char             *session_id,
            gint64                  epoch,
            SandboxClusterEtcdTxn  *txn,
            GCancellable           *cancellable,
            GError                **error)
{
  g_autofree char *owner_key = NULL;
  g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;

  if (!check_session_id (session_id, error) || !sandbox_cluster_host_check_alive (self, error))
    return FALSE;
  if (epoch <= 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Expected an owner epoch above 0, got %" G_GINT64_FORMAT, epoch);
      return FALSE;
    }

  owner_key = sandbox_cluster_host_key (self, "sessions", session_id, "owner", NULL);
  sandbox_cluster_etcd_txn_compare_create_revision (txn, owner_key, SANDBOX_CLUSTER_ETCD_EQUAL, epoch);
  result = sandbox_cluster_etcd_txn (sandbox_cluster_host_get_etcd (self), txn, cancellable, error);
  if (result == NULL)
    return FALSE;
  if (!result->succeeded)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                   "Sandbox session %s is no longer owned under epoch %" G_GINT64_FORMAT
                   ": the write of host %s is refused",
                   session_id, epoch, sandbox_cluster_host_get_id (self));
      return FALSE;
    }
  return TRUE;
}

static GBytes *
record_value (SandboxClusterHost *self,
              const char         *template_key,
              const char         *manifest_digest,
              gint64              epoch)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *epoch_text = g_strdup_printf ("%" G_GINT64_FORMAT, epoch);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "templateKey");
  json_builder_add_string_value (builder, template_key);
  json_builder_set_member_name (builder, "manifest");
  if (manifest_digest != NULL)
    json_builder_add_string_value (builder, manifest_digest);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "host");
  json_builder_add_string_value (builder, sandbox_cluster_host_get_id (self));
  json_builder_set_member_name (builder, "epoch");
  json_builder_add_string_value (builder, epoch_text);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  return node_to_bytes (root);
}

/* A commit of no checkpoint failed with *@error (STOPPED): when the reason
 * is that the record exists, says that instead. Returns %FALSE. */
static gboolean
refuse_null_over_record (SandboxClusterHost  *self,
                         const char          *session_id,
                         const char          *record_key,
                         GCancellable        *cancellable,
                         GError             **error)
{
  g_autoptr(SandboxClusterEtcdRange) range =
    sandbox_cluster_etcd_range (sandbox_cluster_host_get_etcd (self), record_key, NULL,
                                cancellable, NULL);

  if (range == NULL || range->kvs->len == 0)
    return FALSE;
  g_clear_error (error);
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Sandbox session %s already has a record: only its first commit may name no "
               "checkpoint", session_id);
  return FALSE;
}

gboolean
sandbox_cluster_host_commit (SandboxClusterHost  *self,
                             const char          *session_id,
                             gint64               epoch,
                             const char          *template_key,
                             const char          *manifest_digest,
                             GCancellable        *cancellable,
                             GError             **error)
{
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autofree char *record_key = NULL;
  g_autoptr(GBytes) value = NULL;
  g_autoptr(GError) local_error = NULL;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), FALSE);

  if (template_key == NULL || template_key[0] == '\0'
      || (manifest_digest != NULL && manifest_digest[0] == '\0'))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "Expected a template key and a non-empty manifest digest or none");
      return FALSE;
    }
  if (!check_session_id (session_id, error))
    return FALSE;

  record_key = sandbox_cluster_host_key (self, "sessions", session_id, "record", NULL);
  value = record_value (self, template_key, manifest_digest, epoch);
  /* No checkpoint: only as the record's first write (a new session), which
   * is what lets a reader refuse a null written later. */
  if (manifest_digest == NULL)
    sandbox_cluster_etcd_txn_compare_create_revision (txn, record_key,
                                                      SANDBOX_CLUSTER_ETCD_EQUAL, 0);
  sandbox_cluster_etcd_txn_put (txn, TRUE, record_key, value, 0);
  if (fenced_txn (self, session_id, epoch, txn, cancellable, &local_error))
    return TRUE;
  if (manifest_digest == NULL &&
      g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED))
    refuse_null_over_record (self, session_id, record_key, cancellable, &local_error);
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

gboolean
sandbox_cluster_host_release (SandboxClusterHost  *self,
                              const char          *session_id,
                              gint64               epoch,
                              GCancellable        *cancellable,
                              GError             **error)
{
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autofree char *owner_key = NULL;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), FALSE);

  if (!check_session_id (session_id, error))
    return FALSE;
  owner_key = sandbox_cluster_host_key (self, "sessions", session_id, "owner", NULL);
  sandbox_cluster_etcd_txn_delete (txn, TRUE, owner_key, NULL);
  return fenced_txn (self, session_id, epoch, txn, cancellable, error);
}

gboolean
sandbox_cluster_host_delete (SandboxClusterHost  *self,
                             const char          *session_id,
                             gint64               epoch,
                             GCancellable        *cancellable,
                             GError             **error)
{
  g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
  g_autofree char *session_key = NULL;
  g_autofree char *session_end = NULL;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), FALSE);

  if (!check_session_id (session_id, error))
    return FALSE;
  /* The record, the owner key and anything else under the session. */
  session_key = sandbox_cluster_host_key (self, "sessions", session_id, "", NULL);
  session_end = sandbox_cluster_etcd_prefix_end (session_key);
  sandbox_cluster_etcd_txn_delete (txn, TRUE, session_key, session_end);
  return fenced_txn (self, session_id, epoch, txn, cancellable, error);
}

SandboxClusterSessionRecord *
sandbox_cluster_host_read_session (SandboxClusterHost  *self,
                                   const char          *session_id,
                                   GCancellable        *cancellable,
                                   GError             **error)
{
  g_autoptr(SandboxClusterSessionRecord) record = NULL;
  g_autoptr(SandboxClusterEtcdRange) range = NULL;
  g_autofree char *session_key = NULL;
  gsize key_length;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), NULL);

  if (!check_session_id (session_id, error))
    return NULL;
  session_key = sandbox_cluster_host_key (self, "sessions", session_id, "", NULL);
  /* One range: the owner and the record as of one revision. */
  range = sandbox_cluster_host_range_under (self, session_key, cancellable, error);
  if (range == NULL)
    return NULL;
  if (range->kvs->len == 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                   "Unknown sandbox session %s in the cluster", session_id);
      return NULL;
    }

  record = g_new0 (SandboxClusterSessionRecord, 1);
  record->session_id = g_strdup (session_id);
  key_length = strlen (session_key);
  for (guint i = 0; i < range->kvs->len; i++)
    {
      SandboxClusterEtcdKv *kv = g_ptr_array_index (range->kvs, i);

      if (!read_session_key (kv, kv->key + key_length, record, error))
        return NULL;
    }
  return g_steal_pointer (&record);
}

GPtrArray *
sandbox_cluster_host_list_sessions (SandboxClusterHost  *self,
                                    GCancellable        *cancellable,
                                    GError             **error)
{
  g_autoptr(GPtrArray) records = NULL;
  g_autoptr(SandboxClusterEtcdRange) range = NULL;
  g_autofree char *sessions_key = NULL;
  SandboxClusterSessionRecord *current = NULL;
  gsize prefix_length;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), NULL);

  sessions_key = sandbox_cluster_host_key (self, "sessions", "", NULL);
  range = sandbox_cluster_host_range_under (self, sessions_key, cancellable, error);
  if (range == NULL)
    return NULL;

  /* The keys come sorted: a session's keys are consecutive. */
  records = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_cluster_session_record_free);
  prefix_length = strlen (sessions_key);
  for (guint i = 0; i < range->kvs->len; i++)
    {
      SandboxClusterEtcdKv *kv = g_ptr_array_index (range->kvs, i);
      const char *rest = kv->key + prefix_length;
      const char *slash = strchr (rest, '/');
      g_autofree char *session_id = NULL;

      if (slash == NULL || slash == rest)
        return sandbox_cluster_set_error_malformed_key (error, kv->key), NULL;
      session_id = g_strndup (rest, slash - rest);
      if (current == NULL || strcmp (current->session_id, session_id) != 0)
        {
          current = g_new0 (SandboxClusterSessionRecord, 1);
          current->session_id = g_steal_pointer (&session_id);
          g_ptr_array_add (records, current);
        }
      if (!read_session_key (kv, slash + 1, current, error))
        return NULL;
    }
  return g_steal_pointer (&records);
}

/* ------------------------------------------------------------------------ */
/* Async variants: the sync call in a worker thread.                        */

typedef enum
{
  OWNER_CLAIM,
  OWNER_COMMIT,
  OWNER_RELEASE,
  OWNER_DELETE,
  OWNER_READ,
} OwnerOperation;

typedef struct
{
  OwnerOperation operation;
  char *session_id;
  gint64 epoch;
  char *template_key;
  char *manifest_digest;
} OwnerCall;

static void
owner_call_free (OwnerCall *call)
{
  g_free (call->session_id);
  g_free (call->template_key);
  g_free (call->manifest_digest);
  g_free (call);
}

static void
owner_call_run (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  SandboxClusterHost *self = source_object;
  OwnerCall *call = task_data;
  GError *error = NULL;
  gint64 epoch = 0;
  SandboxClusterSessionRecord *record;
  gboolean ok = FALSE;

  switch (call->operation)
    {
    case OWNER_CLAIM:
      ok = sandbox_cluster_host_claim (self, call->session_id, &epoch, cancellable, &error);
      break;
    case OWNER_COMMIT:
      ok = sandbox_cluster_host_commit (self, call->session_id, call->epoch, call->template_key,
                                        call->manifest_digest, cancellable, &error);
      break;
    case OWNER_RELEASE:
      ok = sandbox_cluster_host_release (self, call->session_id, call->epoch, cancellable, &error);
      break;
    case OWNER_DELETE:
      ok = sandbox_cluster_host_delete (self, call->session_id, call->epoch, cancellable, &error);
      break;
    case OWNER_READ:
      record = sandbox_cluster_host_read_session (self, call->session_id, cancellable, &error);
      if (record != NULL)
        g_task_return_pointer (task, record, (GDestroyNotify) sandbox_cluster_session_record_free);
      else
        g_task_return_error (task, error);
      return;
    default:
      g_assert_not_reached ();
    }

  if (!ok)
    g_task_return_error (task, error);
  else if (call->operation == OWNER_CLAIM)
    g_task_return_int (task, epoch);
  else
    g_task_return_boolean (task, TRUE);
}

static void
owner_call_start (SandboxClusterHost  *self,
                  OwnerCall           *call,
                  GCancellable        *cancellable,
                  gpointer             source_tag,
                  GAsyncReadyCallback  callback,
                  gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, source_tag);
  g_task_set_name (task, "sandbox-cluster-owner");
  g_task_set_task_data (task, call, (GDestroyNotify) owner_call_free);
  g_task_run_in_thread (task, owner_call_run);
}

static OwnerCall *
owner_call_new (OwnerOperation  operation,
                const char     *session_id,
                gint64          epoch)
{
  OwnerCall *call = g_new0 (OwnerCall, 1);

  call->operation = operation;
  call->session_id = g_strdup (session_id);
  call->epoch = epoch;
  return call;
}

static gboolean
owner_call_finish_boolean (SandboxClusterHost  *self,
                           GAsyncResult        *result,
                           gpointer             source_tag,
                           GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == source_tag, FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

void
sandbox_cluster_host_claim_async (SandboxClusterHost  *self,
                                  const char          *session_id,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_return_if_fail (SANDBOX_CLUSTER_IS_HOST (self));

  owner_call_start (self, owner_call_new (OWNER_CLAIM, session_id, 0), cancellable,
                    sandbox_cluster_host_claim_async, callback, user_data);
}

gboolean
sandbox_cluster_host_claim_finish (SandboxClusterHost  *self,
                                   GAsyncResult        *result,
                                   gint64              *out_epoch,
                                   GError             **error)
{
  gint64 epoch;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == sandbox_cluster_host_claim_async, FALSE);

  epoch = g_task_propagate_int (G_TASK (result), error);
  if (epoch <= 0)
    return FALSE;
  if (out_epoch != NULL)
    *out_epoch = epoch;
  return TRUE;
}

void
sandbox_cluster_host_commit_async (SandboxClusterHost  *self,
                                   const char          *session_id,
                                   gint64               epoch,
                                   const char          *template_key,
                                   const char          *manifest_digest,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  OwnerCall *call;

  g_return_if_fail (SANDBOX_CLUSTER_IS_HOST (self));

  call = owner_call_new (OWNER_COMMIT, session_id, epoch);
  call->template_key = g_strdup (template_key);
  call->manifest_digest = g_strdup (manifest_digest);
  owner_call_start (self, call, cancellable, sandbox_cluster_host_commit_async, callback, user_data);
}

gboolean
sandbox_cluster_host_commit_finish (SandboxClusterHost  *self,
                                    GAsyncResult        *result,
                                    GError             **error)
{
  return owner_call_finish_boolean (self, result, sandbox_cluster_host_commit_async, error);
}

void
sandbox_cluster_host_release_async (SandboxClusterHost  *self,
                                    const char          *session_id,
                                    gint64               epoch,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  g_return_if_fail (SANDBOX_CLUSTER_IS_HOST (self));

  owner_call_start (self, owner_call_new (OWNER_RELEASE, session_id, epoch), cancellable,
                    sandbox_cluster_host_release_async, callback, user_data);
}

gboolean
sandbox_cluster_host_release_finish (SandboxClusterHost  *self,
                                     GAsyncResult        *result,
                                     GError             **error)
{
  return owner_call_finish_boolean (self, result, sandbox_cluster_host_release_async, error);
}

void
sandbox_cluster_host_delete_async (SandboxClusterHost  *self,
                                   const char          *session_id,
                                   gint64               epoch,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_return_if_fail (SANDBOX_CLUSTER_IS_HOST (self));

  owner_call_start (self, owner_call_new (OWNER_DELETE, session_id, epoch), cancellable,
                    sandbox_cluster_host_delete_async, callback, user_data);
}

gboolean
sandbox_cluster_host_delete_finish (SandboxClusterHost  *self,
                                    GAsyncResult        *result,
                                    GError             **error)
{
  return owner_call_finish_boolean (self, result, sandbox_cluster_host_delete_async, error);
}

void
sandbox_cluster_host_read_session_async (SandboxClusterHost  *self,
                                         const char          *session_id,
                                         GCancellable        *cancellable,
                                         GAsyncReadyCallback  callback,
                                         gpointer             user_data)
{
  g_return_if_fail (SANDBOX_CLUSTER_IS_HOST (self));

  owner_call_start (self, owner_call_new (OWNER_READ, session_id, 0), cancellable,
                    sandbox_cluster_host_read_session_async, callback, user_data);
}

SandboxClusterSessionRecord *
sandbox_cluster_host_read_session_finish (SandboxClusterHost  *self,
                                          GAsyncResult        *result,
                                          GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == sandbox_cluster_host_read_session_async, NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
