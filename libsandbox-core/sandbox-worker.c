/* sandbox-worker.c — the library's own long-lived worker thread
 *
 * Deadlines must fire even while the application's main loop is busy or
 * blocked in a synchronous call, so they run on a thread of our own with its
 * own GMainContext (see sandbox-context-thread.c). The thread lives as long
 * as the process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-context-thread-private.h"
#include "sandbox-worker-private.h"

static SandboxContextThread worker = SANDBOX_CONTEXT_THREAD_INIT ("sandbox-worker");

/*
 * sandbox_worker_get_context:
 *
 * Returns: (transfer none): the worker thread's main context, started on
 *   first use
 */
GMainContext *
sandbox_worker_get_context (void)
{
  return sandbox_context_thread_get_context (&worker);
}

/*
 * sandbox_worker_attach:
 * @source: a source to run on the worker thread
 *
 * Attaches @source to the worker's context.
 */
void
sandbox_worker_attach (GSource *source)
{
  sandbox_context_thread_attach (&worker, source);
}
