/* sandbox-gateway-loop.c — the one thread that serves every gateway
 *
 * All gateways of a process share one thread running its own GMainContext, so
 * a busy application main loop never stalls a guest, and a thousand idle
 * sessions cost a socket each rather than a thread each. The thread is started
 * on first use and lives as long as the process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <curl/curl.h>

#include "sandbox-gateway-loop-private.h"

static GMainContext *loop_context;
static GThread *loop_thread;

static gpointer
run_loop (gpointer data)
{
  GMainContext *context = data;

  g_main_context_push_thread_default (context);
  for (;;)
    g_main_context_iteration (context, TRUE);

  return NULL;
}

static gpointer
start_loop (gpointer data)
{
  /* libcurl's global state must be set up once, before any thread uses it. */
  curl_global_init (CURL_GLOBAL_DEFAULT);

  loop_context = g_main_context_new ();
  loop_thread = g_thread_new ("sandbox-gateway", run_loop, g_main_context_ref (loop_context));
  return loop_context;
}

/*
 * sandbox_gateway_loop_get_context:
 *
 * Returns: (transfer none): the gateway thread's context, starting the thread
 *   on first use.
 */
GMainContext *
sandbox_gateway_loop_get_context (void)
{
  static GOnce once = G_ONCE_INIT;

  return g_once (&once, start_loop, NULL);
}

gboolean
sandbox_gateway_loop_is_current (void)
{
  return loop_thread != NULL && g_thread_self () == loop_thread;
}

typedef struct
{
  GSourceFunc func;
  gpointer data;
  GMutex mutex;
  GCond cond;
  gboolean done;
} SyncCall;

static gboolean
run_sync_call (gpointer user_data)
{
  SyncCall *call = user_data;

  call->func (call->data);

  g_mutex_lock (&call->mutex);
  call->done = TRUE;
  g_cond_signal (&call->cond);
  g_mutex_unlock (&call->mutex);

  return G_SOURCE_REMOVE;
}

/*
 * sandbox_gateway_loop_invoke_sync:
 * @func: called once on the gateway thread; its return value is ignored
 * @data: passed to @func
 *
 * Runs @func on the gateway thread and waits for it to return. Called on the
 * gateway thread itself, it runs @func directly.
 */
void
sandbox_gateway_loop_invoke_sync (GSourceFunc func,
                                  gpointer    data)
{
  GMainContext *context = sandbox_gateway_loop_get_context ();
  SyncCall call = { func, data };

  if (sandbox_gateway_loop_is_current ())
    {
      func (data);
      return;
    }

  g_mutex_init (&call.mutex);
  g_cond_init (&call.cond);

  g_main_context_invoke (context, run_sync_call, &call);

  g_mutex_lock (&call.mutex);
  while (!call.done)
    g_cond_wait (&call.cond, &call.mutex);
  g_mutex_unlock (&call.mutex);

  g_mutex_clear (&call.mutex);
  g_cond_clear (&call.cond);
}
