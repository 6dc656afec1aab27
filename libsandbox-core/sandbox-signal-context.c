/* sandbox-signal-context.c — the main context a caller's signals belong to
 *
 * Signals are emitted in the thread-default main context of the thread that
 * made the call they belong to. A blocking call made in that thread sees it
 * as its own thread-default context; an _async entry point captures it
 * (sandbox_signal_context_ref()) before the work moves to a GTask worker,
 * which has no thread-default context of its own, and the worker opens a
 * scope with it around the blocking call.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-signal-context-private.h"

static GPrivate current_scope = G_PRIVATE_INIT (NULL);

/*
 * sandbox_signal_context_ref:
 *
 * The context signals of the current call belong to: the caller's, captured
 * by the innermost open scope of this thread, unless this thread pushed a
 * thread-default context of its own since (then that one, as for any call
 * made in it); otherwise this thread's thread-default context.
 *
 * Returns: (transfer full): the context
 */
GMainContext *
sandbox_signal_context_ref (void)
{
  SandboxSignalScope *scope = g_private_get (&current_scope);

  if (scope != NULL && scope->thread_default == g_main_context_get_thread_default ())
    return g_main_context_ref (scope->context);
  return g_main_context_ref_thread_default ();
}

gboolean
sandbox_signal_scope_is_open (void)
{
  SandboxSignalScope *scope = g_private_get (&current_scope);

  return scope != NULL && scope->thread_default == g_main_context_get_thread_default ();
}

/*
 * sandbox_signal_scope_begin:
 * @scope: a scope on the caller's stack
 * @context: the caller's context (not referenced: the caller keeps it alive
 *   until sandbox_signal_scope_end())
 */
void
sandbox_signal_scope_begin (SandboxSignalScope *scope,
                            GMainContext       *context)
{
  g_return_if_fail (scope != NULL);
  g_return_if_fail (context != NULL);

  scope->context = context;
  scope->thread_default = g_main_context_get_thread_default ();
  scope->outer = g_private_get (&current_scope);
  g_private_set (&current_scope, scope);
}

/*
 * sandbox_signal_scope_end:
 * @scope: the innermost open scope of this thread
 */
void
sandbox_signal_scope_end (SandboxSignalScope *scope)
{
  g_return_if_fail (g_private_get (&current_scope) == scope);

  g_private_set (&current_scope, scope->outer);
}
