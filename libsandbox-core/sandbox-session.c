/* sandbox-session.c — paths, text and run() over any driver
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-error.h"
#include "sandbox-path.h"
#include "sandbox-session.h"

/**
 * SandboxSession:
 *
 * One live sandbox session as an application sees it.
 *
 * A session wraps a backend's #SandboxDriver and adds what every backend
 * needs the same way: workspace paths are canonicalized (see
 * sandbox_path_canonicalize()), commands are validated, text is converted
 * (reading text is fatal on invalid UTF-8 and drops a leading BOM; run()
 * replaces invalid UTF-8 with U+FFFD), and the workspace root can't be
 * removed. Custom backends get it for free with sandbox_session_new().
 *
 * Every operation comes as a blocking call and as an `_async`/`_finish` pair.
 */

struct _SandboxSession
{
  GObject parent_instance;

  char *id;
  char *gateway_socket;
  SandboxDriver *driver;
};

G_DEFINE_FINAL_TYPE (SandboxSession, sandbox_session, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_ID,
  PROP_DRIVER,
  PROP_GATEWAY_SOCKET,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
sandbox_session_finalize (GObject *object)
{
  SandboxSession *self = SANDBOX_SESSION (object);

  g_clear_pointer (&self->id, g_free);
  g_clear_pointer (&self->gateway_socket, g_free);
  g_clear_object (&self->driver);

  G_OBJECT_CLASS (sandbox_session_parent_class)->finalize (object);
}

static void
sandbox_session_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  SandboxSession *self = SANDBOX_SESSION (object);

  switch (prop_id)
    {
    case PROP_ID:
      g_value_set_string (value, self->id);
      break;
    case PROP_DRIVER:
      g_value_set_object (value, self->driver);
      break;
    case PROP_GATEWAY_SOCKET:
      g_value_set_string (value, self->gateway_socket);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_session_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  SandboxSession *self = SANDBOX_SESSION (object);

  switch (prop_id)
    {
    case PROP_ID:
      self->id = g_value_dup_string (value);
      break;
    case PROP_DRIVER:
      self->driver = g_value_dup_object (value);
      break;
    case PROP_GATEWAY_SOCKET:
      self->gateway_socket = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_session_class_init (SandboxSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_session_finalize;
  object_class->get_property = sandbox_session_get_property;
  object_class->set_property = sandbox_session_set_property;

  /**
   * SandboxSession:id:
   *
   * The session's identifier.
   */
  properties[PROP_ID] =
    g_param_spec_string ("id", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxSession:driver:
   *
   * The backend's driver for this session.
   */
  properties[PROP_DRIVER] =
    g_param_spec_object ("driver", NULL, NULL, SANDBOX_TYPE_DRIVER,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxSession:gateway-socket:
   *
   * Where the network gateway's socket appears inside the sandbox, or %NULL
   * when the backend serves none.
   */
  properties[PROP_GATEWAY_SOCKET] =
    g_param_spec_string ("gateway-socket", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
sandbox_session_init (SandboxSession *self)
{
}

/**
 * sandbox_session_new:
 * @id: the session's identifier
 * @driver: the backend's driver for this session
 * @gateway_socket: (nullable): the in-sandbox path of the network gateway's
 *   socket, or %NULL
 *
 * Wraps @driver in a session. Backends call this; applications get sessions
 * from sandbox_handle_get_session().
 *
 * Returns: (transfer full): a new #SandboxSession
 */
SandboxSession *
sandbox_session_new (const char    *id,
                     SandboxDriver *driver,
                     const char    *gateway_socket)
{
  g_return_val_if_fail (id != NULL && *id != '\0', NULL);
  g_return_val_if_fail (SANDBOX_IS_DRIVER (driver), NULL);

  return g_object_new (SANDBOX_TYPE_SESSION,
                       "id", id,
                       "driver", driver,
                       "gateway-socket", gateway_socket,
                       NULL);
}

/**
 * sandbox_session_get_id:
 * @self: a #SandboxSession
 *
 * Gets the identifier of the session.
 *
 * Returns: the session's identifier
 */
const char *
sandbox_session_get_id (SandboxSession *self)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);

  return self->id;
}

/**
 * sandbox_session_get_gateway_socket:
 * @self: a #SandboxSession
 *
 * Gets the path inside the sandbox where commands reach the network gateway.
 *
 * Returns: (nullable): where the gateway's socket appears inside the
 *   sandbox, or %NULL
 */
const char *
sandbox_session_get_gateway_socket (SandboxSession *self)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);

  return self->gateway_socket;
}

/**
 * sandbox_session_get_driver:
 * @self: a #SandboxSession
 *
 * Gets the driver that carries out the session's operations.
 *
 * Returns: (transfer none): the backend's driver for this session
 */
SandboxDriver *
sandbox_session_get_driver (SandboxSession *self)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);

  return self->driver;
}

/**
 * sandbox_session_resolve_path:
 * @self: a #SandboxSession
 * @path: a workspace-relative or `/workspace/…` path
 * @error: return location for a #GError
 *
 * Turns @path into the absolute path it names inside the sandbox, as
 * sandbox_path_canonicalize() does; the workspace is not accessed.
 *
 * Returns: (transfer full): the canonical path, or %NULL with
 *   %SANDBOX_ERROR_PATH
 */
char *
sandbox_session_resolve_path (SandboxSession  *self,
                              const char      *path,
                              GError         **error)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  return sandbox_path_canonicalize (path, error);
}

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
 * @self: a #SandboxSession
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
  g_autofree char *canonical = NULL;

  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  canonical = sandbox_path_canonicalize (path, error);
  if (canonical == NULL)
    return NULL;

  return sandbox_driver_read_bytes (self->driver, canonical, cancellable, error);
}

/**
 * sandbox_session_read_text:
 * @self: a #SandboxSession
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
 * @self: a #SandboxSession
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
  g_autofree char *canonical = NULL;

  g_return_val_if_fail (SANDBOX_IS_SESSION (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);

  canonical = sandbox_path_canonicalize (path, error);
  if (canonical == NULL)
    return FALSE;

  return sandbox_driver_write_bytes (self->driver, canonical, contents, cancellable, error);
}

/**
 * sandbox_session_write_text:
 * @self: a #SandboxSession
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

static char *
canonicalize_removable (const char  *path,
                        GError     **error)
{
  g_autofree char *canonical = sandbox_path_canonicalize (path, error);

  if (canonical != NULL && g_str_equal (canonical, SANDBOX_WORKSPACE))
    {
      sandbox_set_error_workspace_root (error);
      return NULL;
    }

  return g_steal_pointer (&canonical);
}

/**
 * sandbox_session_remove_path:
 * @self: a #SandboxSession
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
  g_autofree char *canonical = NULL;

  g_return_val_if_fail (SANDBOX_IS_SESSION (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);

  canonical = canonicalize_removable (path, error);
  if (canonical == NULL)
    return FALSE;

  return sandbox_driver_remove_path (self->driver, canonical, cancellable, error);
}

/* A validated copy of @command whose working directory is canonical. */
static SandboxCommand *
prepare_command (SandboxCommand  *command,
                 GError         **error)
{
  g_autoptr(SandboxCommand) prepared = NULL;
  g_autofree char *cwd = NULL;

  if (!sandbox_command_validate (command, error))
    return NULL;

  cwd = sandbox_path_canonicalize (sandbox_command_get_cwd (command), error);
  if (cwd == NULL)
    return NULL;

  prepared = sandbox_command_copy (command);
  sandbox_command_set_cwd (prepared, cwd);
  return g_steal_pointer (&prepared);
}

/**
 * sandbox_session_spawn:
 * @self: a #SandboxSession
 * @command: the command to run
 * @cancellable: (nullable): cancelling it kills the command
 * @error: return location for a #GError
 *
 * Starts @command and returns at once. Invalid commands fail with
 * %SANDBOX_ERROR_INVALID (or %SANDBOX_ERROR_PATH for the working
 * directory); a full admission limit with %SANDBOX_ERROR_BUSY before
 * anything starts.
 *
 * Returns: (transfer full): the running command, or %NULL with @error set
 */
SandboxProcess *
sandbox_session_spawn (SandboxSession  *self,
                       SandboxCommand  *command,
                       GCancellable    *cancellable,
                       GError         **error)
{
  g_autoptr(SandboxCommand) prepared = NULL;

  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);
  g_return_val_if_fail (SANDBOX_IS_COMMAND (command), NULL);

  prepared = prepare_command (command, error);
  if (prepared == NULL)
    return NULL;

  return sandbox_driver_spawn (self->driver, prepared, cancellable, error);
}

/**
 * sandbox_session_run:
 * @self: a #SandboxSession
 * @command: the command to run
 * @cancellable: (nullable): cancelling it kills the command
 * @error: return location for a #GError
 *
 * Runs @command to the end. Use sandbox_result_dup_stdout_text() for its
 * output as text (invalid UTF-8 replaced with U+FFFD).
 *
 * Returns: (transfer full): the command's result, or %NULL with @error set
 */
SandboxResult *
sandbox_session_run (SandboxSession  *self,
                     SandboxCommand  *command,
                     GCancellable    *cancellable,
                     GError         **error)
{
  g_autoptr(SandboxProcess) process = sandbox_session_spawn (self, command, cancellable, error);

  if (process == NULL)
    return NULL;

  /* The spawn's cancellable already kills the command, so wait without one:
   * the result then carries G_IO_ERROR_CANCELLED once the command is gone. */
  return sandbox_process_wait (process, NULL, error);
}

/**
 * sandbox_session_set_network_policy:
 * @self: a #SandboxSession
 * @policy: the new policy
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Replaces the session's network policy. Refused with %SANDBOX_ERROR_BUSY
 * while commands are live, and with %SANDBOX_ERROR_UNAVAILABLE when the
 * backend can't enforce @policy.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_session_set_network_policy (SandboxSession        *self,
                                    SandboxNetworkPolicy  *policy,
                                    GCancellable          *cancellable,
                                    GError               **error)
{
  g_return_val_if_fail (SANDBOX_IS_SESSION (self), FALSE);
  g_return_val_if_fail (SANDBOX_IS_NETWORK_POLICY (policy), FALSE);

  return sandbox_driver_set_network_policy (self->driver, policy, cancellable, error);
}

/* ----- async forms ----- */

static GTask *
session_task_new (SandboxSession      *self,
                  GCancellable        *cancellable,
                  GAsyncReadyCallback  callback,
                  gpointer             user_data,
                  gpointer             source_tag,
                  const char          *name)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, source_tag);
  g_task_set_name (task, name);
  return task;
}

static void
read_bytes_cb (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  GBytes *bytes = sandbox_driver_read_bytes_finish (SANDBOX_DRIVER (object), result, &error);

  if (bytes == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, bytes, (GDestroyNotify) g_bytes_unref);
}

/**
 * sandbox_session_read_bytes_async:
 * @self: a #SandboxSession
 * @path: a workspace path
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Reads a whole workspace file; see sandbox_session_read_bytes().
 */
void
sandbox_session_read_bytes_async (SandboxSession      *self,
                                  const char          *path,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *canonical = NULL;
  GError *error = NULL;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (path != NULL);

  task = session_task_new (self, cancellable, callback, user_data,
                           sandbox_session_read_bytes_async, "[sandbox] read bytes");
  canonical = sandbox_path_canonicalize (path, &error);
  if (canonical == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  sandbox_driver_read_bytes_async (self->driver, canonical, cancellable, read_bytes_cb,
                                   g_steal_pointer (&task));
}

/**
 * sandbox_session_read_bytes_finish:
 * @self: a #SandboxSession
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with sandbox_session_read_bytes_async().
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
  if (text == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, text, g_free);
}

/**
 * sandbox_session_read_text_async:
 * @self: a #SandboxSession
 * @path: a workspace path
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Reads a workspace file as UTF-8 text; see sandbox_session_read_text().
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

  task = session_task_new (self, cancellable, callback, user_data,
                           sandbox_session_read_text_async, "[sandbox] read text");
  sandbox_session_read_bytes_async (self, path, cancellable, read_text_cb, task);
}

/**
 * sandbox_session_read_text_finish:
 * @self: a #SandboxSession
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with sandbox_session_read_text_async().
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

static void
boolean_cb (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  gboolean (*finish) (SandboxDriver *, GAsyncResult *, GError **) =
    g_task_get_task_data (task);
  GError *error = NULL;

  if (!finish (SANDBOX_DRIVER (object), result, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/**
 * sandbox_session_write_bytes_async:
 * @self: a #SandboxSession
 * @path: a workspace path
 * @contents: the new contents
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Replaces a workspace file; see sandbox_session_write_bytes().
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
  g_autofree char *canonical = NULL;
  GError *error = NULL;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (path != NULL);
  g_return_if_fail (contents != NULL);

  task = session_task_new (self, cancellable, callback, user_data,
                           sandbox_session_write_bytes_async, "[sandbox] write bytes");
  canonical = sandbox_path_canonicalize (path, &error);
  if (canonical == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  g_task_set_task_data (task, sandbox_driver_write_bytes_finish, NULL);
  sandbox_driver_write_bytes_async (self->driver, canonical, contents, cancellable, boolean_cb,
                                    g_steal_pointer (&task));
}

/**
 * sandbox_session_write_bytes_finish:
 * @self: a #SandboxSession
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with sandbox_session_write_bytes_async().
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

  if (!sandbox_session_write_bytes_finish (SANDBOX_SESSION (object), result, &error))
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

/**
 * sandbox_session_write_text_async:
 * @self: a #SandboxSession
 * @path: a workspace path
 * @text: the new contents, as UTF-8 text
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Replaces a workspace file with @text; see sandbox_session_write_text().
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

  task = session_task_new (self, cancellable, callback, user_data,
                           sandbox_session_write_text_async, "[sandbox] write text");
  bytes = encode_text (text);
  sandbox_session_write_bytes_async (self, path, bytes, cancellable, write_text_cb, task);
}

/**
 * sandbox_session_write_text_finish:
 * @self: a #SandboxSession
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with sandbox_session_write_text_async().
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
 * @self: a #SandboxSession
 * @path: a workspace path other than the workspace root
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Removes a file or a directory tree; see sandbox_session_remove_path().
 */
void
sandbox_session_remove_path_async (SandboxSession      *self,
                                   const char          *path,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *canonical = NULL;
  GError *error = NULL;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (path != NULL);

  task = session_task_new (self, cancellable, callback, user_data,
                           sandbox_session_remove_path_async, "[sandbox] remove path");
  canonical = canonicalize_removable (path, &error);
  if (canonical == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  g_task_set_task_data (task, sandbox_driver_remove_path_finish, NULL);
  sandbox_driver_remove_path_async (self->driver, canonical, cancellable, boolean_cb,
                                    g_steal_pointer (&task));
}

/**
 * sandbox_session_remove_path_finish:
 * @self: a #SandboxSession
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with sandbox_session_remove_path_async().
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

static void
spawn_cb (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  SandboxProcess *process = sandbox_driver_spawn_finish (SANDBOX_DRIVER (object), result, &error);

  if (process == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, process, g_object_unref);
}

/**
 * sandbox_session_spawn_async:
 * @self: a #SandboxSession
 * @command: the command to run
 * @cancellable: (nullable): cancelling it kills the command
 * @callback: (scope async): called once the command has started
 * @user_data: data for @callback
 *
 * Starts @command; see sandbox_session_spawn().
 */
void
sandbox_session_spawn_async (SandboxSession      *self,
                             SandboxCommand      *command,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(SandboxCommand) prepared = NULL;
  GError *error = NULL;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (SANDBOX_IS_COMMAND (command));

  task = session_task_new (self, cancellable, callback, user_data,
                           sandbox_session_spawn_async, "[sandbox] spawn");
  prepared = prepare_command (command, &error);
  if (prepared == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  sandbox_driver_spawn_async (self->driver, prepared, cancellable, spawn_cb,
                              g_steal_pointer (&task));
}

/**
 * sandbox_session_spawn_finish:
 * @self: a #SandboxSession
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with sandbox_session_spawn_async().
 *
 * Returns: (transfer full): the running command, or %NULL with @error set
 */
SandboxProcess *
sandbox_session_spawn_finish (SandboxSession  *self,
                              GAsyncResult    *result,
                              GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
run_wait_cb (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  SandboxResult *run_result = sandbox_process_wait_finish (SANDBOX_PROCESS (object), result, &error);

  if (run_result == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, run_result, g_object_unref);
}

static void
run_spawn_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(SandboxProcess) process = NULL;
  GError *error = NULL;

  process = sandbox_session_spawn_finish (SANDBOX_SESSION (object), result, &error);
  if (process == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  sandbox_process_wait_async (process, NULL, run_wait_cb, g_steal_pointer (&task));
}

/**
 * sandbox_session_run_async:
 * @self: a #SandboxSession
 * @command: the command to run
 * @cancellable: (nullable): cancelling it kills the command
 * @callback: (scope async): called when the command is over
 * @user_data: data for @callback
 *
 * Runs @command to the end; see sandbox_session_run().
 */
void
sandbox_session_run_async (SandboxSession      *self,
                           SandboxCommand      *command,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  GTask *task;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (SANDBOX_IS_COMMAND (command));

  task = session_task_new (self, cancellable, callback, user_data,
                           sandbox_session_run_async, "[sandbox] run");
  sandbox_session_spawn_async (self, command, cancellable, run_spawn_cb, task);
}

/**
 * sandbox_session_run_finish:
 * @self: a #SandboxSession
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with sandbox_session_run_async().
 *
 * Returns: (transfer full): the command's result, or %NULL with @error set
 */
SandboxResult *
sandbox_session_run_finish (SandboxSession  *self,
                            GAsyncResult    *result,
                            GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * sandbox_session_set_network_policy_async:
 * @self: a #SandboxSession
 * @policy: the new policy
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async): called when done
 * @user_data: data for @callback
 *
 * Replaces the session's network policy; see
 * sandbox_session_set_network_policy().
 */
void
sandbox_session_set_network_policy_async (SandboxSession        *self,
                                          SandboxNetworkPolicy  *policy,
                                          GCancellable          *cancellable,
                                          GAsyncReadyCallback    callback,
                                          gpointer               user_data)
{
  GTask *task;

  g_return_if_fail (SANDBOX_IS_SESSION (self));
  g_return_if_fail (SANDBOX_IS_NETWORK_POLICY (policy));

  task = session_task_new (self, cancellable, callback, user_data,
                           sandbox_session_set_network_policy_async,
                           "[sandbox] set network policy");
  g_task_set_task_data (task, sandbox_driver_set_network_policy_finish, NULL);
  sandbox_driver_set_network_policy_async (self->driver, policy, cancellable, boolean_cb, task);
}

/**
 * sandbox_session_set_network_policy_finish:
 * @self: a #SandboxSession
 * @result: the #GAsyncResult
 * @error: return location for a #GError
 *
 * Finishes an operation started with
 * sandbox_session_set_network_policy_async().
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_session_set_network_policy_finish (SandboxSession  *self,
                                           GAsyncResult    *result,
                                           GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
