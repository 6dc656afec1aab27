/* sandbox-task-private.h — the GTask plumbing the async forms share
 *
 * Every blocking operation of the library has an async form that runs it
 * in GIO's thread pool, or waits for another async call, and gives back
 * %TRUE, a pointer or the error. The task is made, tagged and named, run
 * and answered the same way everywhere: here, once.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* A task whose source object is @source_object, tagged and named for its
 * operation. */
static inline GTask *
sandbox_task_new (gpointer             source_object,
                  gpointer             source_tag,
                  const char          *name,
                  GCancellable        *cancellable,
                  GAsyncReadyCallback  callback,
                  gpointer             user_data)
{
  GTask *task = g_task_new (source_object, cancellable, callback, user_data);

  g_task_set_source_tag (task, source_tag);
  g_task_set_name (task, name);
  return task;
}

/* The same task, with @task_data (freed with @task_data_destroy), run by
 * @thread_func in GIO's thread pool. */
static inline void
sandbox_task_run_in_thread (gpointer             source_object,
                            gpointer             task_data,
                            GDestroyNotify       task_data_destroy,
                            GTaskThreadFunc      thread_func,
                            gpointer             source_tag,
                            const char          *name,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_autoptr(GTask) task = sandbox_task_new (source_object, source_tag, name, cancellable,
                                            callback, user_data);

  g_task_set_task_data (task, task_data, task_data_destroy);
  g_task_run_in_thread (task, thread_func);
}

/* Returns %TRUE from @task if @ok, else @error (taken). */
static inline void
sandbox_task_return_boolean (GTask    *task,
                             gboolean  ok,
                             GError   *error)
{
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

/* Returns @pointer (freed with @destroy) from @task, or @error (taken)
 * when @pointer is %NULL. */
static inline void
sandbox_task_return_pointer (GTask          *task,
                             gpointer        pointer,
                             GDestroyNotify  destroy,
                             GError         *error)
{
  if (pointer != NULL)
    g_task_return_pointer (task, pointer, destroy);
  else
    g_task_return_error (task, error);
}

G_END_DECLS
