/* sandbox-gateway-loop.c — the one thread that serves every gateway
 *
 * All gateways of a process share one thread running its own GMainContext, so
 * a busy application main loop never stalls a guest, and a thousand idle
 * sessions cost a socket each rather than a thread each. The thread (a
 * SandboxContextThread) is started on first use and lives as long as the
 * process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <curl/curl.h>

#include "sandbox-context-thread-private.h"
#include "sandbox-gateway-loop-private.h"

static SandboxContextThread loop = SANDBOX_CONTEXT_THREAD_INIT ("sandbox-gateway");

/*
 * sandbox_gateway_loop_get_context:
 *
 * Returns: (transfer none): the gateway thread's context, starting the thread
 *   on first use.
 */
GMainContext *
sandbox_gateway_loop_get_context (void)
{
  static gsize curl_ready;

  /* libcurl's global state must be set up once, before any thread uses it. */
  if (g_once_init_enter (&curl_ready))
    {
      curl_global_init (CURL_GLOBAL_DEFAULT);
      g_once_init_leave (&curl_ready, 1);
    }
  return sandbox_context_thread_get_context (&loop);
}

gboolean
sandbox_gateway_loop_is_current (void)
{
  return sandbox_context_thread_is_current (&loop);
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
  sandbox_gateway_loop_get_context ();   /* libcurl first */
  sandbox_context_thread_invoke_sync (&loop, func, data);
}
