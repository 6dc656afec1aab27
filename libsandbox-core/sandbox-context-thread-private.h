/* sandbox-context-thread-private.h — a thread with its own main context
 *
 * Internal, not installed: a static library (sandbox_context_thread_dep in
 * libsandbox-core/meson.build) linked into libsandbox-1 (the core worker, the
 * gateway loop) and into the in-tree memory driver module (its worker).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (SANDBOX_COMPILATION) && !defined (SANDBOX_CONTEXT_THREAD_COMPILATION)
# error "This is a private header: link sandbox_context_thread_dep to use it."
#endif

#include <glib.h>

G_BEGIN_DECLS

/*
 * SandboxContextThread:
 *
 * A thread started on first use that iterates its own #GMainContext for as
 * long as the process lives. Declare one statically with
 * SANDBOX_CONTEXT_THREAD_INIT(); every function is thread-safe.
 */
typedef struct
{
  /*< private >*/
  const char *name;
  GMainContext *context;   /* published once the thread runs */
  GThread *thread;
} SandboxContextThread;

#define SANDBOX_CONTEXT_THREAD_INIT(thread_name) { (thread_name), NULL, NULL }

GMainContext *sandbox_context_thread_get_context (SandboxContextThread *self);
gboolean      sandbox_context_thread_is_current  (SandboxContextThread *self);
void          sandbox_context_thread_attach      (SandboxContextThread *self,
                                                  GSource              *source);
void          sandbox_context_thread_invoke_sync (SandboxContextThread *self,
                                                  GSourceFunc           func,
                                                  gpointer              data);

G_END_DECLS
