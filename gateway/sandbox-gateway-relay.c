/* sandbox-gateway-relay.c — the gateway's signals, relayed to its creator's context
 *
 * The gateway thread (sandbox-gateway-loop.c) hears of every request;
 * the gateway's ::audit and ::upstream-error belong to the context it was
 * created in. A relay queues what the thread hears and delivers it there in
 * batches, without keeping the gateway alive, dropping the oldest once too
 * much waits for a context nobody iterates.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include "sandbox-gateway-relay-private.h"
#include "sandbox-signal-context-private.h"

static void emission_free (gpointer data);

/* What the gateway thread needs to reach the gateway's signals in the
 * context they belong to, without keeping the gateway alive. */
struct _SandboxGatewayRelay
{
  gatomicrefcount ref_count;
  GWeakRef owner;
  SandboxGatewayRelayEmitFunc emit;

  /* Emissions waiting for the owner's context, and the source that delivers
   * them: under load one wakeup of the application's thread delivers many
   * events, instead of one wakeup (and one thread switch) per request. */
  GMutex lock;
  /* Guarded by @lock. */
  GMainContext *context;
  GQueue pending;        /* oldest first, at most RELAY_MAX_PENDING */
  GSource *source;       /* attached to @context while emissions wait */
  guint64 dropped;
  gint64 delivered_us;   /* when the last batch was delivered */
  gboolean closed;
};

/* Under load, a batch of emissions is delivered at most this often: each
 * delivery wakes the application's thread (an eventfd write and a thread
 * switch, which cost the gateway thread more than its own work on a busy
 * machine). An emission after a quiet spell is delivered at once. */
#define RELAY_INTERVAL_US 2000

/* Emissions waiting for a context nobody iterates cost memory (an event is
 * ~150 bytes with its strings) until the gateway goes: past this many, the
 * oldest is dropped for each new one. An application that iterates its
 * context gets a batch every RELAY_INTERVAL_US, so only a stall of about a
 * second under the heaviest load reaches it. */
#define RELAY_MAX_PENDING 1024

SandboxGatewayRelay *
sandbox_gateway_relay_new (GObject                     *owner,
                           SandboxGatewayRelayEmitFunc  emit)
{
  SandboxGatewayRelay *relay = g_new0 (SandboxGatewayRelay, 1);

  g_atomic_ref_count_init (&relay->ref_count);
  g_weak_ref_init (&relay->owner, owner);
  relay->emit = emit;
  g_mutex_init (&relay->lock);
  g_queue_init (&relay->pending);
  /* The creator's context — or its caller's, when it runs on a caller's
   * behalf in a worker thread, which has no thread-default context. */
  relay->context = sandbox_signal_context_ref ();
  return relay;
}

SandboxGatewayRelay *
sandbox_gateway_relay_ref (SandboxGatewayRelay *relay)
{
  g_atomic_ref_count_inc (&relay->ref_count);
  return relay;
}

void
sandbox_gateway_relay_unref (SandboxGatewayRelay *relay)
{
  if (!g_atomic_ref_count_dec (&relay->ref_count))
    return;

  g_assert (relay->source == NULL);
  g_weak_ref_clear (&relay->owner);
  g_main_context_unref (relay->context);
  g_queue_clear_full (&relay->pending, emission_free);
  g_mutex_clear (&relay->lock);
  g_free (relay);
}

typedef struct
{
  SandboxGatewayEvent *event;
  GError *cause;
} Emission;

static void
emission_free (gpointer data)
{
  Emission *emission = data;

  g_clear_pointer (&emission->event, sandbox_gateway_event_unref);
  g_clear_error (&emission->cause);
  g_free (emission);
}

static void
destroy_source (GSource *source)
{
  if (source == NULL)
    return;
  g_source_destroy (source);
  g_source_unref (source);
}

static gboolean
emit_in_owner_context (gpointer data)
{
  SandboxGatewayRelay *relay = data;
  g_autoptr(GObject) self = NULL;
  GQueue pending = G_QUEUE_INIT;
  Emission *emission;

  g_mutex_lock (&relay->lock);
  if (relay->source != g_main_current_source ())
    {
      /* Retargeted to another context, or closed, since this was queued:
       * the emissions are the new source's (or gone). */
      g_mutex_unlock (&relay->lock);
      return G_SOURCE_REMOVE;
    }
  pending = relay->pending;
  g_queue_init (&relay->pending);
  g_clear_pointer (&relay->source, g_source_unref);   /* removed on return */
  relay->delivered_us = g_get_monotonic_time ();
  g_mutex_unlock (&relay->lock);

  self = g_weak_ref_get (&relay->owner);
  while ((emission = g_queue_pop_head (&pending)) != NULL)
    {
      if (self != NULL)
        relay->emit (self, emission->event, emission->cause);
      emission_free (emission);
    }

  return G_SOURCE_REMOVE;
}

static gboolean
dispatch_relay (GSource     *source,
                GSourceFunc  callback,
                gpointer     user_data)
{
  return callback (user_data);
}

static GSourceFuncs relay_source_funcs = {
  .dispatch = dispatch_relay,
};

/* Called with @lock held: a source on @context that delivers what is
 * pending, at @ready_us (0: at once). It holds a reference to the relay
 * until it is dispatched or destroyed; the relay keeps one to the source. */
static void
relay_attach_locked (SandboxGatewayRelay *relay,
                     gint64               ready_us)
{
  GSource *source = g_source_new (&relay_source_funcs, sizeof (GSource));

  g_source_set_ready_time (source, ready_us);
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, emit_in_owner_context, sandbox_gateway_relay_ref (relay),
                         (GDestroyNotify) sandbox_gateway_relay_unref);
  g_source_set_static_name (source, "[sandbox] gateway signal");
  relay->source = source;
  g_source_attach (source, relay->context);
}

/* Always through a source: g_main_context_invoke() would run the emission
 * right here, on the gateway thread, whenever no thread owns the context.
 * Emissions keep their order; one source delivers all that are pending. */
void
sandbox_gateway_relay_queue (SandboxGatewayRelay *relay,
                             SandboxGatewayEvent *event,
                             const GError        *cause)
{
  Emission *emission = g_new0 (Emission, 1);
  Emission *dropped = NULL;

  emission->event = event != NULL ? sandbox_gateway_event_ref (event) : NULL;
  emission->cause = cause != NULL ? g_error_copy (cause) : NULL;

  g_mutex_lock (&relay->lock);
  if (relay->closed)
    {
      dropped = g_steal_pointer (&emission);
    }
  else
    {
      if (relay->pending.length >= RELAY_MAX_PENDING)
        {
          dropped = g_queue_pop_head (&relay->pending);
          relay->dropped++;
        }
      g_queue_push_tail (&relay->pending, g_steal_pointer (&emission));
      if (relay->source == NULL)
        relay_attach_locked (relay, relay->delivered_us > 0
                                    ? relay->delivered_us + RELAY_INTERVAL_US : 0);
    }
  g_mutex_unlock (&relay->lock);

  g_clear_pointer (&dropped, emission_free);
}

/* Signals go to @context from now on, the emissions already waiting too. */
void
sandbox_gateway_relay_set_context (SandboxGatewayRelay *relay,
                                   GMainContext        *context)
{
  GMainContext *old_context = NULL;
  GSource *old_source = NULL;

  g_mutex_lock (&relay->lock);
  if (!relay->closed && relay->context != context)
    {
      old_context = relay->context;
      relay->context = g_main_context_ref (context);
      old_source = g_steal_pointer (&relay->source);
      if (old_source != NULL)
        relay_attach_locked (relay, 0);
    }
  g_mutex_unlock (&relay->lock);

  destroy_source (old_source);
  g_clear_pointer (&old_context, g_main_context_unref);
}

/* The gateway goes: nothing waits for its context any more, and no source
 * keeps the relay (or the emissions) alive. */
void
sandbox_gateway_relay_close (SandboxGatewayRelay *relay)
{
  GQueue pending = G_QUEUE_INIT;
  GSource *source;

  g_mutex_lock (&relay->lock);
  relay->closed = TRUE;
  pending = relay->pending;
  g_queue_init (&relay->pending);
  source = g_steal_pointer (&relay->source);
  g_mutex_unlock (&relay->lock);

  destroy_source (source);
  g_queue_clear_full (&pending, emission_free);
}

guint64
sandbox_gateway_relay_get_dropped (SandboxGatewayRelay *relay)
{
  guint64 dropped;

  g_mutex_lock (&relay->lock);
  dropped = relay->dropped;
  g_mutex_unlock (&relay->lock);
  return dropped;
}
