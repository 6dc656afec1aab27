/* sandbox-signal-context-private.h — the main context a caller's signals belong to
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Marks a blocking call made on a caller's behalf in another thread (the
 * GTask worker of an _async entry point): while the scope is open, objects
 * created in this thread that deliver signals later (a gateway's relay)
 * deliver them in @context, the caller's, instead of this thread's
 * thread-default context. Scopes nest; each lives on the stack of the
 * thread that opened it. */
typedef struct _SandboxSignalScope SandboxSignalScope;

struct _SandboxSignalScope
{
  /*< private >*/
  GMainContext *context;
  GMainContext *thread_default;
  SandboxSignalScope *outer;
};

GMainContext *sandbox_signal_context_ref (void);
/* Whether the current call is made on a caller's behalf in another thread
 * (an open scope applies, as sandbox_signal_context_ref() decides): then a
 * signal of the call must be queued to that context, not emitted here. */
gboolean      sandbox_signal_scope_is_open (void);
void          sandbox_signal_scope_begin (SandboxSignalScope *scope,
                                          GMainContext       *context);
void          sandbox_signal_scope_end   (SandboxSignalScope *scope);

G_END_DECLS
