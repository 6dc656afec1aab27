/* sandbox-memory-worker.c — the memory driver's own worker thread
 *
 * Scripted commands produce their output and reach their exit on timers. Those
 * timers run on a thread the module owns, with its own GMainContext (see
 * libsandbox-core/sandbox-context-thread.c), so that a caller blocking its
 * main thread in sandbox_process_wait() (or a busy application main loop)
 * never stops a scripted command from finishing. The thread lives as long as
 * the process, like the module itself.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "sandbox-context-thread-private.h"
#include "sandbox-memory-worker.h"

static SandboxContextThread worker = SANDBOX_CONTEXT_THREAD_INIT ("sandbox-memory");

/**
 * sandbox_memory_worker_get_context:
 *
 * Gives the main context of the memory driver's worker thread, starting the
 * thread on first use.
 *
 * Returns: (transfer none): the worker thread's main context
 */
GMainContext *
sandbox_memory_worker_get_context (void)
{
  return sandbox_context_thread_get_context (&worker);
}

/**
 * sandbox_memory_worker_attach:
 * @source: a source to dispatch on the worker thread
 *
 * Attaches @source to the worker thread's main context. The caller keeps its
 * own reference to @source.
 */
void
sandbox_memory_worker_attach (GSource *source)
{
  sandbox_context_thread_attach (&worker, source);
}
