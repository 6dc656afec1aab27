/* sandbox-task-private.h — the GTask plumbing the async forms share
 *
 * Every blocking operation of the library has an async form that runs it
 * in GIO's thread pool, or waits for another async call, and gives back
 * %TRUE or the error. The task is made, tagged and named, run and
 * answered the same way everywhere: here, once.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_COMPILATION
# error "This is a private header."
#endif

#include <gio/gio.h>

G_BEGIN_DECLS

/* A task whose source object is @source_object, tagged and named for its
 * operation. */
GTask *sandbox_task_new             (gpointer             source_object,
                                     gpointer             source_tag,
                                     const char          *name,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data);

/* The same task, with @task_data (freed with @task_data_destroy), run by
 * @thread_func in GIO's thread pool. */
void   sandbox_task_run_in_thread   (gpointer             source_object,
                                     gpointer             task_data,
                                     GDestroyNotify       task_data_destroy,
                                     GTaskThreadFunc      thread_func,
                                     gpointer             source_tag,
                                     const char          *name,
                                     GCancellable        *cancellable,
                                     GAsyncReadyCallback  callback,
                                     gpointer             user_data);

/* Returns @pointer (freed with @destroy) from @task, or @error (taken)
 * when @pointer is %NULL. */
void   sandbox_task_return_pointer  (GTask               *task,
                                     gpointer             pointer,
                                     GDestroyNotify       destroy,
                                     GError              *error);

/* Returns %TRUE from @task if @ok, else @error (taken). */
void   sandbox_task_return_boolean  (GTask               *task,
                                     gboolean             ok,
                                     GError              *error);

G_END_DECLS
