/* sandbox-cluster-host.c — one host's etcd lease, its renewal and its self-fencing
 *
 * The lease's state lives in a small reference-counted HostLease shared by
 * the #SandboxClusterHost and by the sources on the process-wide lease
 * thread (renewal every TTL/3, the deadline timer), so that dropping the
 * host stops everything without the thread keeping the host alive.
 *
 * The one rule: the host is alive only before its deadline, the time its
 * last successful renewal was *sent* + TTL − margin. That is checked
 * lazily by every fenced write (sandbox_cluster_host_is_lost()), so a host
 * that was frozen (SIGSTOP) and wakes up past its deadline refuses its
 * next write even before the deadline timer had a chance to run; the timer
 * makes ::lost arrive on time when nothing is being written.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <sandbox-backend-driver.h>

#include "sandbox-cluster-host-private.h"
#include "sandbox-context-thread-private.h"

/* Renewals and deadlines of every host of the process run here, away from
 * the application's main loop: a busy application must not miss its
 * renewals (that would only make it fence itself, but needlessly). */
static SandboxContextThread lease_thread = SANDBOX_CONTEXT_THREAD_INIT ("sandbox-cluster-lease");

typedef struct
{
  GMutex lock;
  gint64 deadline;              /* monotonic µs; under lock */
  gboolean lost;                /* under lock; never goes back */
  gboolean fenced;              /* under lock: ::lost has been handled */
  gboolean renewing;            /* a renewal is in flight (lease thread only) */

  SandboxClusterEtcd *etcd;
  gint64 id;
  guint ttl_seconds;
  gint64 margin_us;

  /* Lease thread only. */
  GSource *renew_source;
  GSource *deadline_source;
  GCancellable *cancellable;    /* cancels the renewal in flight on close */

  GWeakRef host;                /* for ::lost */
  GMainContext *owner_context;  /* where ::lost is emitted */
} HostLease;

struct _SandboxClusterHost
{
  GObject parent_instance;

  SandboxClusterEtcd *etcd;
  char *prefix;
  char *id;
  guint ttl_seconds;            /* asked for: a rejoin asks for it again */

  /* The lease in use, replaced by a rejoin (under lock). Leases replaced
   * stay in retired until the host goes: other threads may still read the
   * one they got, and its lease-thread sources hold their own references. */
  GMutex lock;
  HostLease *lease;
  GPtrArray *retired;
  GMutex rejoin_lock;           /* one rejoin at a time */
  gboolean closed;
};

G_DEFINE_FINAL_TYPE (SandboxClusterHost, sandbox_cluster_host, G_TYPE_OBJECT)

enum
{
  SIGNAL_LOST,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
host_lease_clear (HostLease *lease)
{
  g_assert (lease->renew_source == NULL && lease->deadline_source == NULL);
  g_mutex_clear (&lease->lock);
  g_clear_object (&lease->etcd);
  g_clear_object (&lease->cancellable);
  g_weak_ref_clear (&lease->host);
  g_main_context_unref (lease->owner_context);
}

static HostLease *
host_lease_ref (HostLease *lease)
{
  return g_atomic_rc_box_acquire (lease);
}

static void
host_lease_unref (HostLease *lease)
{
  g_atomic_rc_box_release_full (lease, (GDestroyNotify) host_lease_clear);
}

static gboolean
host_lease_is_lost (HostLease *lease)
{
  gboolean lost;

  g_mutex_lock (&lease->lock);
  lost = lease->lost || g_get_monotonic_time () >= lease->deadline;
  g_mutex_unlock (&lease->lock);
  return lost;
}

typedef struct
{
  HostLease *lease;
  GError *reason;
} LostEmission;

static gboolean
emit_lost (gpointer data)
{
  LostEmission *emission = data;
  g_autoptr(SandboxClusterHost) host = g_weak_ref_get (&emission->lease->host);

  if (host != NULL)
    g_signal_emit (host, signals[SIGNAL_LOST], 0, emission->reason);
  /* Every handler has fenced what it had under this lease: only now may
   * the host rejoin with another (sandbox_cluster_host_rejoin()). */
  g_mutex_lock (&emission->lease->lock);
  emission->lease->fenced = TRUE;
  g_mutex_unlock (&emission->lease->lock);
  return G_SOURCE_REMOVE;
}

static void
lost_emission_free (LostEmission *emission)
{
  host_lease_unref (emission->lease);
  g_error_free (emission->reason);
  g_free (emission);
}

static void
host_lease_stop_sources (HostLease *lease)
{
  if (lease->renew_source != NULL)
    g_source_destroy (lease->renew_source);
  g_clear_pointer (&lease->renew_source, g_source_unref);
  if (lease->deadline_source != NULL)
    g_source_destroy (lease->deadline_source);
  g_clear_pointer (&lease->deadline_source, g_source_unref);
  g_cancellable_cancel (lease->cancellable);
}

/* Lease thread: the host is lost from now on; ::lost goes out once. */
static void
host_lease_lose (HostLease  *lease,
                 const char *why)
{
  LostEmission *emission;
  gboolean was_lost;

  g_mutex_lock (&lease->lock);
  was_lost = lease->lost;
  lease->lost = TRUE;
  g_mutex_unlock (&lease->lock);
  host_lease_stop_sources (lease);
  if (was_lost)
    return;

  g_debug ("cluster lease %" G_GINT64_FORMAT " lost: %s", lease->id, why);
  emission = g_new0 (LostEmission, 1);
  emission->lease = host_lease_ref (lease);
  emission->reason = g_error_new (SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                                  "Sandbox host lost its cluster lease: %s", why);
  g_main_context_invoke_full (lease->owner_context, G_PRIORITY_DEFAULT, emit_lost,
                              emission, (GDestroyNotify) lost_emission_free);
}

static gboolean
deadline_reached (gpointer data)
{
  HostLease *lease = data;

  /* The source is destroyed by host_lease_lose(): drop our pointer first. */
  g_clear_pointer (&lease->deadline_source, g_source_unref);
  host_lease_lose (lease, "its deadline passed without a renewal");
  return G_SOURCE_REMOVE;
}

/* Lease thread: (re)arms the timer for lease->deadline. */
static void
host_lease_arm_deadline (HostLease *lease)
{
  gint64 remaining_us;

  if (lease->deadline_source != NULL)
    g_source_destroy (lease->deadline_source);
  g_clear_pointer (&lease->deadline_source, g_source_unref);

  g_mutex_lock (&lease->lock);
  remaining_us = MAX (lease->deadline - g_get_monotonic_time (), 0);
  g_mutex_unlock (&lease->lock);

  lease->deadline_source = g_timeout_source_new ((guint) ((remaining_us + 999) / 1000));
  g_source_set_name (lease->deadline_source, "sandbox-cluster-deadline");
  g_source_set_callback (lease->deadline_source, deadline_reached,
                         host_lease_ref (lease), (GDestroyNotify) host_lease_unref);
  g_source_attach (lease->deadline_source, g_main_context_get_thread_default ());
}

typedef struct
{
  HostLease *lease;
  gint64 sent_at;
} Renewal;

static void
renewed_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  Renewal *renewal = user_data;
  HostLease *lease = renewal->lease;
  g_autoptr(GError) error = NULL;
  gint64 ttl = 0;
  gboolean lost;

  lease->renewing = FALSE;
  if (!sandbox_cluster_etcd_lease_keepalive_finish (SANDBOX_CLUSTER_ETCD (source), result,
                                                    &ttl, &error))
    {
      /* Not fatal by itself: the deadline decides. */
      g_debug ("cluster lease %" G_GINT64_FORMAT " not renewed: %s", lease->id, error->message);
    }
  else if (ttl == 0)
    {
      host_lease_lose (lease, "etcd says the lease is gone");
    }
  else
    {
      g_mutex_lock (&lease->lock);
      lost = lease->lost || g_get_monotonic_time () >= lease->deadline;
      /* Too late is too late: a renewal answered after the deadline does
       * not bring the host back (its commands are being killed). */
      if (!lost)
        lease->deadline = MAX (lease->deadline,
                               renewal->sent_at + ttl * G_USEC_PER_SEC - lease->margin_us);
      g_mutex_unlock (&lease->lock);
      if (lost)
        host_lease_lose (lease, "its deadline passed before the renewal came back");
      else
        host_lease_arm_deadline (lease);
    }

  host_lease_unref (lease);
  g_free (renewal);
}

static gboolean
renew (gpointer data)
{
  HostLease *lease = data;
  Renewal *renewal;

  if (lease->renewing)
    return G_SOURCE_CONTINUE;
  lease->renewing = TRUE;
  renewal = g_new0 (Renewal, 1);
  renewal->lease = host_lease_ref (lease);
  renewal->sent_at = g_get_monotonic_time ();
  sandbox_cluster_etcd_lease_keepalive_async (lease->etcd, lease->id, lease->cancellable,
                                              renewed_cb, renewal);
  return G_SOURCE_CONTINUE;
}

static gboolean
host_lease_start (gpointer data)
{
  HostLease *lease = data;

  lease->renew_source = g_timeout_source_new (lease->ttl_seconds * 1000 / 3);
  g_source_set_name (lease->renew_source, "sandbox-cluster-renew");
  g_source_set_callback (lease->renew_source, renew,
                         host_lease_ref (lease), (GDestroyNotify) host_lease_unref);
  g_source_attach (lease->renew_source, g_main_context_get_thread_default ());
  host_lease_arm_deadline (lease);
  return G_SOURCE_REMOVE;
}

static gboolean
host_lease_stop (gpointer data)
{
  HostLease *lease = data;

  g_mutex_lock (&lease->lock);
  lease->lost = TRUE;
  g_mutex_unlock (&lease->lock);
  host_lease_stop_sources (lease);
  return G_SOURCE_REMOVE;
}

/* ------------------------------------------------------------------------ */

static void
sandbox_cluster_host_dispose (GObject *object)
{
  sandbox_cluster_host_close (SANDBOX_CLUSTER_HOST (object));

  G_OBJECT_CLASS (sandbox_cluster_host_parent_class)->dispose (object);
}

static void
sandbox_cluster_host_finalize (GObject *object)
{
  SandboxClusterHost *self = SANDBOX_CLUSTER_HOST (object);

  g_clear_pointer (&self->lease, host_lease_unref);
  g_clear_pointer (&self->retired, g_ptr_array_unref);
  g_mutex_clear (&self->lock);
  g_mutex_clear (&self->rejoin_lock);
  g_clear_object (&self->etcd);
  g_free (self->prefix);
  g_free (self->id);

  G_OBJECT_CLASS (sandbox_cluster_host_parent_class)->finalize (object);
}

static void
sandbox_cluster_host_class_init (SandboxClusterHostClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = sandbox_cluster_host_dispose;
  object_class->finalize = sandbox_cluster_host_finalize;

  /**
   * SandboxClusterHost::lost:
   * @self: the host
   * @reason: why (a %SANDBOX_ERROR_STOPPED error)
   *
   * The host passed its self-fencing deadline, or etcd said its lease is
   * gone: every command of every session it owns must be killed and its
   * handles marked stopped. Emitted once, in the thread-default main
   * context of the thread that made the host.
   */
  signals[SIGNAL_LOST] = g_signal_new ("lost", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                       0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_ERROR);
}

static void
sandbox_cluster_host_init (SandboxClusterHost *self)
{
  g_mutex_init (&self->lock);
  g_mutex_init (&self->rejoin_lock);
  self->retired = g_ptr_array_new_with_free_func ((GDestroyNotify) host_lease_unref);
}

/* The lease in use: valid while the host lives (see retired). */
static HostLease *
current_lease (SandboxClusterHost *self)
{
  HostLease *lease;

  g_mutex_lock (&self->lock);
  lease = self->lease;
  g_mutex_unlock (&self->lock);
  return lease;
}

/* A new lease's state, not started yet: its deadline counts from @sent_at,
 * when its grant was sent. */
static HostLease *
host_lease_new (SandboxClusterHost *self,
                gint64              id,
                gint64              granted_ttl,
                gint64              sent_at,
                GMainContext       *owner_context)
{
  HostLease *lease = g_atomic_rc_box_new0 (HostLease);

  g_mutex_init (&lease->lock);
  lease->etcd = g_object_ref (self->etcd);
  lease->id = id;
  lease->ttl_seconds = (guint) MIN (granted_ttl, G_MAXUINT / 1000);
  lease->margin_us = MAX (lease->ttl_seconds * G_USEC_PER_SEC / 10, 200 * 1000);
  lease->deadline = sent_at + lease->ttl_seconds * G_USEC_PER_SEC - lease->margin_us;
  lease->cancellable = g_cancellable_new ();
  g_weak_ref_init (&lease->host, self);
  lease->owner_context = g_main_context_ref (owner_context);
  return lease;
}

gboolean
sandbox_cluster_is_valid_name (const char *name)
{
  return name != NULL && name[0] != '\0' && strchr (name, '/') == NULL
    && g_utf8_validate (name, -1, NULL);
}

SandboxClusterHost *
sandbox_cluster_host_new (SandboxClusterEtcd  *etcd,
                          const char          *prefix,
                          const char          *host_id,
                          guint                ttl_seconds,
                          GCancellable        *cancellable,
                          GError             **error)
{
  g_autoptr(SandboxClusterHost) self = NULL;
  g_autoptr(GMainContext) context = NULL;
  HostLease *lease;
  gint64 sent_at;
  gint64 id;
  gint64 granted_ttl;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_ETCD (etcd), NULL);

  if (prefix == NULL || !g_str_has_prefix (prefix, "/") || !g_str_has_suffix (prefix, "/"))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Expected a cluster key prefix that starts and ends with \"/\", got \"%s\"",
                   prefix != NULL ? prefix : "");
      return NULL;
    }
  if (!sandbox_cluster_is_valid_name (host_id))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Expected a non-empty cluster host id without \"/\", got \"%s\"",
                   host_id != NULL ? host_id : "");
      return NULL;
    }
  if (ttl_seconds == 0)
    ttl_seconds = SANDBOX_CLUSTER_HOST_DEFAULT_TTL_SECONDS;

  sent_at = g_get_monotonic_time ();
  if (!sandbox_cluster_etcd_lease_grant (etcd, ttl_seconds, &id, &granted_ttl, cancellable, error))
    return NULL;

  self = g_object_new (SANDBOX_CLUSTER_TYPE_HOST, NULL);
  self->etcd = g_object_ref (etcd);
  self->prefix = g_strdup (prefix);
  self->id = g_strdup (host_id);
  self->ttl_seconds = ttl_seconds;

  context = g_main_context_ref_thread_default ();
  lease = host_lease_new (self, id, granted_ttl, sent_at, context);
  self->lease = lease;

  sandbox_context_thread_invoke_sync (&lease_thread, host_lease_start, lease);
  return g_steal_pointer (&self);
}

void
sandbox_cluster_host_close (SandboxClusterHost *self)
{
  g_autoptr(GError) error = NULL;
  HostLease *lease;

  g_return_if_fail (SANDBOX_CLUSTER_IS_HOST (self));

  /* Not while a rejoin swaps the lease: the one stopped is the last. */
  g_mutex_lock (&self->rejoin_lock);
  if (self->closed || self->lease == NULL)
    {
      g_mutex_unlock (&self->rejoin_lock);
      return;
    }
  self->closed = TRUE;
  g_mutex_unlock (&self->rejoin_lock);
  lease = current_lease (self);
  sandbox_context_thread_invoke_sync (&lease_thread, host_lease_stop, lease);
  /* Best effort: when etcd does not answer, the lease expires by itself. */
  if (!sandbox_cluster_etcd_lease_revoke (self->etcd, lease->id, NULL, &error))
    g_debug ("cluster lease %" G_GINT64_FORMAT " not revoked: %s", lease->id, error->message);
}

gboolean
sandbox_cluster_host_rejoin (SandboxClusterHost  *self,
                             GCancellable        *cancellable,
                             GError             **error)
{
  g_autoptr(GError) local_error = NULL;
  HostLease *old;
  HostLease *lease;
  gboolean fenced;
  gint64 sent_at, id, granted_ttl;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), FALSE);

  g_mutex_lock (&self->rejoin_lock);
  old = current_lease (self);
  if (!host_lease_is_lost (old))
    {
      g_mutex_unlock (&self->rejoin_lock);
      return TRUE;
    }
  g_mutex_lock (&old->lock);
  fenced = old->fenced;
  g_mutex_unlock (&old->lock);
  /* Closed: for good. Not fenced yet: ::lost is still on its way, and the
   * handles it stops must not outlive the old lease under a new one. */
  if (self->closed || !fenced)
    {
      g_mutex_unlock (&self->rejoin_lock);
      return sandbox_cluster_host_check_alive (self, error);
    }

  /* The old lease goes first, with every owner key on it: etcd may still
   * hold it (a restarted etcd extends every lease), and its epochs must
   * never be the owners' again, whatever a write still in flight under
   * them does. Then a new lease, renewed and fenced like the first. */
  sent_at = g_get_monotonic_time ();
  if (!sandbox_cluster_etcd_lease_revoke (self->etcd, old->id, cancellable, &local_error) ||
      !sandbox_cluster_etcd_lease_grant (self->etcd, self->ttl_seconds, &id, &granted_ttl,
                                         cancellable, &local_error))
    {
      g_mutex_unlock (&self->rejoin_lock);
      /* Still lost: STOPPED, as before the attempt, with etcd's reason. */
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                   "Sandbox host %s lost its cluster lease and cannot rejoin yet: %s", self->id,
                   local_error->message);
      return FALSE;
    }
  lease = host_lease_new (self, id, granted_ttl, sent_at, old->owner_context);
  g_mutex_lock (&self->lock);
  g_ptr_array_add (self->retired, self->lease);
  self->lease = lease;
  g_mutex_unlock (&self->lock);
  sandbox_context_thread_invoke_sync (&lease_thread, host_lease_start, lease);
  g_mutex_unlock (&self->rejoin_lock);

  g_log_structured (G_LOG_DOMAIN, G_LOG_LEVEL_MESSAGE, "SANDBOX_EVENT", "cluster-rejoined",
                    "MESSAGE", "Host %s rejoined the cluster with lease %" G_GINT64_FORMAT
                               " (lease %" G_GINT64_FORMAT " revoked)",
                    self->id, id, old->id);
  return TRUE;
}

const char *
sandbox_cluster_host_get_id (SandboxClusterHost *self)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), NULL);

  return self->id;
}

const char *
sandbox_cluster_host_get_prefix (SandboxClusterHost *self)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), NULL);

  return self->prefix;
}

SandboxClusterEtcd *
sandbox_cluster_host_get_etcd (SandboxClusterHost *self)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), NULL);

  return self->etcd;
}

gint64
sandbox_cluster_host_get_lease (SandboxClusterHost *self)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), 0);

  return current_lease (self)->id;
}

guint
sandbox_cluster_host_get_ttl_seconds (SandboxClusterHost *self)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), 0);

  return current_lease (self)->ttl_seconds;
}

gboolean
sandbox_cluster_host_is_lost (SandboxClusterHost *self)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), TRUE);

  return host_lease_is_lost (current_lease (self));
}

gint64
sandbox_cluster_host_get_deadline (SandboxClusterHost *self)
{
  HostLease *lease;
  gint64 deadline;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_HOST (self), 0);

  lease = current_lease (self);
  g_mutex_lock (&lease->lock);
  deadline = lease->deadline;
  g_mutex_unlock (&lease->lock);
  return deadline;
}

gboolean
sandbox_cluster_host_check_alive (SandboxClusterHost  *self,
                                  GError             **error)
{
  if (!host_lease_is_lost (current_lease (self)))
    return TRUE;
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
               "Sandbox host %s lost its cluster lease: it writes nothing more", self->id);
  return FALSE;
}

char *
sandbox_cluster_host_key (SandboxClusterHost *self,
                          const char         *first_segment,
                          ...)
{
  g_autoptr(GString) key = g_string_new (self->prefix);
  const char *segment = first_segment;
  va_list args;

  va_start (args, first_segment);
  while (segment != NULL)
    {
      if (key->str[key->len - 1] != '/')
        g_string_append_c (key, '/');
      g_string_append (key, segment);
      segment = va_arg (args, const char *);
    }
  va_end (args);
  return g_string_free (g_steal_pointer (&key), FALSE);
}

gboolean
sandbox_cluster_set_error_malformed_key (GError     **error,
                                         const char  *key)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Malformed cluster key %s in etcd", key);
  return FALSE;
}

SandboxClusterEtcdRange *
sandbox_cluster_host_range_under (SandboxClusterHost  *self,
                                  const char          *directory_key,
                                  GCancellable        *cancellable,
                                  GError             **error)
{
  g_autofree char *end = sandbox_cluster_etcd_prefix_end (directory_key);
  g_autoptr(SandboxClusterEtcdRange) range = NULL;

  range = sandbox_cluster_etcd_range (self->etcd, directory_key, end, cancellable, error);
  if (range == NULL)
    return NULL;
  for (guint i = 0; i < range->kvs->len; i++)
    {
      SandboxClusterEtcdKv *kv = g_ptr_array_index (range->kvs, i);

      if (!g_str_has_prefix (kv->key, directory_key) || kv->key[strlen (directory_key)] == '\0')
        return sandbox_cluster_set_error_malformed_key (error, kv->key), NULL;
    }
  return g_steal_pointer (&range);
}
