/* sandbox-worker.c — the library's own long-lived worker thread
 *
 * Deadlines must fire even while the application's main loop is busy or
 * blocked in a synchronous call, so they run on a thread of our own with its
 * own GMainContext. The thread lives as long as the process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-worker-private.h"

static gpointer
sandbox_worker_main (gpointer data)
{
  GMainContext *context = data;

  g_main_context_push_thread_default (context);
  for (;;)
    g_main_context_iteration (context, TRUE);

  return NULL;
}

/*
 * sandbox_worker_get_context:
 *
 * Returns: (transfer none): the worker thread's main context, started on
 *   first use
 */
GMainContext *
sandbox_worker_get_context (void)
{
  static GMainContext *context;

  if (g_once_init_enter (&context))
    {
      GMainContext *new_context = g_main_context_new ();
      GThread *thread = g_thread_new ("sandbox-worker", sandbox_worker_main,
                                      g_main_context_ref (new_context));

      g_thread_unref (thread);
      g_once_init_leave (&context, new_context);
    }

  return context;
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
  g_source_attach (source, sandbox_worker_get_context ());
}
