/* sandbox-session-files.c — the session's workspace files: read, write, remove
 *
 * Text is converted here, once for every backend; paths, sizes and the
 * session's state are checked by the driver's public wrappers
 * (sandbox-driver.c), which run the file-operation ritual in the
 * reference's order for every form of every operation.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-path.h"
#include "sandbox-session-private.h"

/* ----- text conversion ----- */

/* As TextDecoder("utf-8", { fatal: true }): invalid UTF-8 is an error and a
 * leading byte order mark is dropped. */
static char *
decode_text_strictly (GBytes  *bytes,
                      GError **error)
{
  gsize length;
  const char *data = g_bytes_get_data (bytes, &length);
  const char *end;

  if (length >= 3 && memcmp (data, "\xEF\xBB\xBF", 3) == 0)
    {
      data += 3;
      length -= 3;
    }

  if (!g_utf8_validate_len (data, length, &end))
    {
      g_set_error (error, G_CONVERT_ERROR, G_CONVERT_ERROR_ILLEGAL_SEQUENCE,
                   "File is not valid UTF-8 text (invalid byte sequence at offset %"
                   G_GSIZE_FORMAT ")",
                   (gsize) (end - data));
      return NULL;
    }

  return g_strndup (data, length);
}

static GBytes *
encode_text (const char *text)
{
  return g_bytes_new (text, strlen (text));
}

/* ----- blocking forms ----- */

/**
 * sandbox_session_read_bytes:
 * @self: a [class@Sandbox.Session]
 * @path: a workspace path
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads a whole workspace file (at most %SANDBOX_MAX_FILE_BYTES).
 *
 * Returns: (transfer full): the file's contents, or %NULL with @error set
 */
GBytes *
sandbox_session_read_bytes (SandboxSession  *self,
                            const char      *path,
                            GCancellable    *cancellable,
                            GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  return sandbox_driver_read_bytes (sandbox_session_driver_for_call (self), path,
                                    cancellable, error);
}

/**
 * sandbox_session_read_text:
 * @self: a [class@Sandbox.Session]
 * @path: a workspace path
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Reads a workspace file as UTF-8 text. Invalid UTF-8 is an error
 * (%G_CONVERT_ERROR_ILLEGAL_SEQUENCE); a leading byte order mark is dropped.
 *
 * Returns: (transfer full): the text, or %NULL with @error set
 */
char *
sandbox_session_read_text (SandboxSession  *self,
                           const char      *path,
                           GCancellable    *cancellable,
                           GError         **error)
{
  g_autoptr(GBytes) bytes = sandbox_session_read_bytes (self, path, cancellable, error);

  if (bytes == NULL)
    return NULL;

  return decode_text_strictly (bytes, error);
}

/**
 * sandbox_session_write_bytes:
 * @self: a [class@Sandbox.Session]
 * @path: a workspace path
 * @contents: the new contents (at most %SANDBOX_MAX_FILE_BYTES)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Replaces a workspace file, creating parent directories.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_session_write_bytes (SandboxSession  *self,
                             const char      *path,
                             GBytes          *contents,
                             GCancellable    *cancellable,
                             GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);

  return sandbox_driver_write_bytes (sandbox_session_driver_for_call (self), path, contents,
                                     cancellable, error);
}

/**
 * sandbox_session_write_text:
 * @self: a [class@Sandbox.Session]
 * @path: a workspace path
 * @text: the new contents, as UTF-8 text
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Replaces a workspace file with @text, creating parent directories.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_session_write_text (SandboxSession  *self,
                            const char      *path,
                            const char      *text,
                            GCancellable    *cancellable,
                            GError         **error)
{
  g_autoptr(GBytes) bytes = NULL;

  g_return_val_if_fail (text != NULL, FALSE);

  bytes = encode_text (text);
  return sandbox_session_write_bytes (self, path, bytes, cancellable, error);
}

/**
 * sandbox_session_remove_path:
 * @self: a [class@Sandbox.Session]
 * @path: a workspace path other than the workspace root
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Removes a file or a directory tree. A missing path is not an error; the
 * workspace root can't be removed (%SANDBOX_ERROR_PATH).
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_session_remove_path (SandboxSession  *self,
                             const char      *path,
                             GCancellable    *cancellable,
                             GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  return sandbox_driver_remove_path (sandbox_session_driver_for_call (self), path,
                                     cancellable, error);
}

/* ----- async forms ----- */

static void
read_bytes_cb (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  GBytes *bytes = sandbox_driver_read_bytes_finish (SANDBOX_DRIVER (object), result, &error);

  sandbox_task_return_pointer (task, bytes, (GDestroyNotify) g_bytes_unref, error);
}

/**
 * sandbox_session_read_bytes_async:
 * @self: a [class@Sandbox.Session]
 * @path: a workspace path
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Reads a whole workspace file; see [method@Sandbox.Session.read_bytes].
 */
void
sandbox_session_read_bytes_async (SandboxSession      *self,
                                  const char          *path,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (path != NULL);

  task = sandbox_session_task_new (self, cancellable, callback, user_data,
                                   sandbox_session_read_bytes_async, "[sandbox] read bytes");
  sandbox_driver_read_bytes_async (sandbox_session_driver_for_call (self), path, cancellable,
                                   read_bytes_cb, g_steal_pointer (&task));
}

/**
 * sandbox_session_read_bytes_finish:
 * @self: a [class@Sandbox.Session]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Session.read_bytes_async].
 *
 * Returns: (transfer full): the file's contents, or %NULL with @error set
 */
GBytes *
sandbox_session_read_bytes_finish (SandboxSession  *self,
                                   GAsyncResult    *result,
                                   GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
read_text_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GBytes) bytes = NULL;
  GError *error = NULL;
  char *text;

  bytes = sandbox_session_read_bytes_finish (SANDBOX_SESSION (object), result, &error);
  if (bytes == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  text = decode_text_strictly (bytes, &error);
  sandbox_task_return_pointer (task, text, g_free, error);
}

/**
 * sandbox_session_read_text_async:
 * @self: a [class@Sandbox.Session]
 * @path: a workspace path
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Reads a workspace file as UTF-8 text; see [method@Sandbox.Session.read_text].
 */
void
sandbox_session_read_text_async (SandboxSession      *self,
                                 const char          *path,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (path != NULL);

  task = sandbox_session_task_new (self, cancellable, callback, user_data,
                                   sandbox_session_read_text_async, "[sandbox] read text");
  sandbox_session_read_bytes_async (self, path, cancellable, read_text_cb, task);
}

/**
 * sandbox_session_read_text_finish:
 * @self: a [class@Sandbox.Session]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Session.read_text_async].
 *
 * Returns: (transfer full): the text, or %NULL with @error set
 */
char *
sandbox_session_read_text_finish (SandboxSession  *self,
                                  GAsyncResult    *result,
                                  GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * sandbox_session_write_bytes_async:
 * @self: a [class@Sandbox.Session]
 * @path: a workspace path
 * @contents: the new contents
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Replaces a workspace file; see [method@Sandbox.Session.write_bytes].
 */
void
sandbox_session_write_bytes_async (SandboxSession      *self,
                                   const char          *path,
                                   GBytes              *contents,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (path != NULL);
  g_return_if_fail (contents != NULL);

  task = sandbox_session_task_new (self, cancellable, callback, user_data,
                                   sandbox_session_write_bytes_async, "[sandbox] write bytes");
  g_task_set_task_data (task, sandbox_driver_write_bytes_finish, NULL);
  sandbox_driver_write_bytes_async (sandbox_session_driver_for_call (self), path, contents,
                                    cancellable, sandbox_session_return_boolean_cb,
                                    g_steal_pointer (&task));
}

/**
 * sandbox_session_write_bytes_finish:
 * @self: a [class@Sandbox.Session]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Session.write_bytes_async].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_session_write_bytes_finish (SandboxSession  *self,
                                    GAsyncResult    *result,
                                    GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
write_text_cb (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  gboolean ok = sandbox_session_write_bytes_finish (SANDBOX_SESSION (object), result, &error);

  sandbox_task_return_boolean (task, ok, error);
}

/**
 * sandbox_session_write_text_async:
 * @self: a [class@Sandbox.Session]
 * @path: a workspace path
 * @text: the new contents, as UTF-8 text
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Replaces a workspace file with @text; see [method@Sandbox.Session.write_text].
 */
void
sandbox_session_write_text_async (SandboxSession      *self,
                                  const char          *path,
                                  const char          *text,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(GBytes) bytes = NULL;
  GTask *task;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (text != NULL);

  task = sandbox_session_task_new (self, cancellable, callback, user_data,
                                   sandbox_session_write_text_async, "[sandbox] write text");
  bytes = encode_text (text);
  sandbox_session_write_bytes_async (self, path, bytes, cancellable, write_text_cb, task);
}

/**
 * sandbox_session_write_text_finish:
 * @self: a [class@Sandbox.Session]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Session.write_text_async].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_session_write_text_finish (SandboxSession  *self,
                                   GAsyncResult    *result,
                                   GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/**
 * sandbox_session_remove_path_async:
 * @self: a [class@Sandbox.Session]
 * @path: a workspace path other than the workspace root
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Removes a file or a directory tree; see [method@Sandbox.Session.remove_path].
 */
void
sandbox_session_remove_path_async (SandboxSession      *self,
                                   const char          *path,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (path != NULL);

  task = sandbox_session_task_new (self, cancellable, callback, user_data,
                                   sandbox_session_remove_path_async, "[sandbox] remove path");
  g_task_set_task_data (task, sandbox_driver_remove_path_finish, NULL);
  sandbox_driver_remove_path_async (sandbox_session_driver_for_call (self), path, cancellable,
                                    sandbox_session_return_boolean_cb, g_steal_pointer (&task));
}

/**
 * sandbox_session_remove_path_finish:
 * @self: a [class@Sandbox.Session]
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with [method@Sandbox.Session.remove_path_async].
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_session_remove_path_finish (SandboxSession  *self,
                                    GAsyncResult    *result,
                                    GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
