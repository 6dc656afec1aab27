/* sandbox-memory-worker.c — the memory driver's own worker thread
 *
 * Scripted commands produce their output and reach their exit on timers. Those
 * timers run on a thread the module owns, with its own GMainContext, so that a
 * caller blocking its main thread in sandbox_process_wait() (or a busy
 * application main loop) never stops a scripted command from finishing. The
 * thread lives as long as the process, like the module itself.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "sandbox-memory-worker.h"

static gpointer
sandbox_memory_worker_main (gpointer data)
{
  GMainContext *context = data;

  g_main_context_push_thread_default (context);
  for (;;)
    g_main_context_iteration (context, TRUE);

  return NULL;
}

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
  static GMainContext *context;

  if (g_once_init_enter (&context))
    {
      GMainContext *new_context = g_main_context_new ();
      GThread *thread = g_thread_new ("sandbox-memory", sandbox_memory_worker_main,
                                      g_main_context_ref (new_context));

      g_thread_unref (thread);
      g_once_init_leave (&context, new_context);
    }

  return context;
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
  g_return_if_fail (source != NULL);

  g_source_attach (source, sandbox_memory_worker_get_context ());
}
