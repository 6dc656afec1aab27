/* sandbox-context-thread.c — a thread with its own main context
 *
 * Deadlines, scripted commands and gateways must make progress while the
 * application's main loop is busy or blocked in a synchronous call, so each
 * runs on a thread of its own that iterates its own GMainContext. Such a
 * thread lives as long as the process.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "sandbox-context-thread-private.h"

static gpointer
run_context (gpointer data)
{
  GMainContext *context = data;

  g_main_context_push_thread_default (context);
  for (;;)
    g_main_context_iteration (context, TRUE);

  return NULL;
}

/*
 * sandbox_context_thread_get_context:
 * @self: a #SandboxContextThread
 *
 * Returns: (transfer none): the thread's main context, the thread started on
 *   first use
 */
GMainContext *
sandbox_context_thread_get_context (SandboxContextThread *self)
{
  if (g_once_init_enter (&self->context))
    {
      GMainContext *context = g_main_context_new ();

      /* Set before the context is published: is_current() reads it after. */
      self->thread = g_thread_new (self->name, run_context, g_main_context_ref (context));
      g_once_init_leave (&self->context, context);
    }

  return self->context;
}

/*
 * sandbox_context_thread_is_current:
 * @self: a #SandboxContextThread
 *
 * Returns: whether the caller runs on @self's thread
 */
gboolean
sandbox_context_thread_is_current (SandboxContextThread *self)
{
  return g_atomic_pointer_get (&self->context) != NULL && g_thread_self () == self->thread;
}

/*
 * sandbox_context_thread_attach:
 * @self: a #SandboxContextThread
 * @source: a #GSource
 *
 * Attaches @source to the thread's context, starting the thread if need be.
 */
void
sandbox_context_thread_attach (SandboxContextThread *self,
                               GSource              *source)
{
  g_return_if_fail (source != NULL);

  g_source_attach (source, sandbox_context_thread_get_context (self));
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
 * sandbox_context_thread_invoke_sync:
 * @self: a #SandboxContextThread
 * @func: called once on the thread; its return value is ignored
 * @data: data for @func
 *
 * Runs @func on the thread and waits until it has returned; on the thread
 * itself it just calls @func.
 */
void
sandbox_context_thread_invoke_sync (SandboxContextThread *self,
                                    GSourceFunc           func,
                                    gpointer              data)
{
  GMainContext *context = sandbox_context_thread_get_context (self);
  SyncCall call = { func, data };

  if (sandbox_context_thread_is_current (self))
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
