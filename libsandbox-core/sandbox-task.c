/* sandbox-task.c — the GTask plumbing the async forms share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-task-private.h"

GTask *
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

void
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

void
sandbox_task_return_boolean (GTask    *task,
                             gboolean  ok,
                             GError   *error)
{
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

void
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
