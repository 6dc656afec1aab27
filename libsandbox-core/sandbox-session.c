/* sandbox-session.c — paths, text and run() over any driver: the object
 *
 * This file holds the object and its properties; the workspace file
 * operations are in sandbox-session-files.c, the commands in
 * sandbox-session-commands.c, background commands in
 * sandbox-session-background.c and the network policy in
 * sandbox-session-policy.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-path.h"
#include "sandbox-session-private.h"

/**
 * SandboxSession:
 *
 * One live sandbox session as an application sees it.
 *
 * A session wraps a backend's [iface@Sandbox.Driver] and adds what every backend
 * needs the same way: workspace paths are canonicalized (see
 * [func@Sandbox.path_canonicalize]), commands are validated, text is converted
 * (reading text is fatal on invalid UTF-8 and drops a leading BOM; run()
 * replaces invalid UTF-8 with U+FFFD), and the workspace root can't be
 * removed. Custom backends get it for free with [ctor@Sandbox.Session.new].
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
 * from [method@Sandbox.Handle.get_session].
 *
 * Returns: (transfer full): a new [class@Sandbox.Session]
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
 * @self: a [class@Sandbox.Session]
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
 * @self: a [class@Sandbox.Session]
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
 * @self: a [class@Sandbox.Session]
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
 * @self: a [class@Sandbox.Session]
 * @path: a workspace-relative or `/workspace/…` path
 * @error: return location for a #GError
 *
 * Turns @path into the absolute path it names inside the sandbox, as
 * [func@Sandbox.path_canonicalize] does; the workspace is not accessed.
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

/* ----- what the async forms share ----- */

GTask *
sandbox_session_task_new (SandboxSession      *self,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data,
                          gpointer             source_tag,
                          const char          *name)
{
  return sandbox_task_new (self, source_tag, name, cancellable, callback, user_data);
}

void
sandbox_session_return_boolean_cb (GObject      *object,
                                   GAsyncResult *result,
                                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  gboolean (*finish) (SandboxDriver *, GAsyncResult *, GError **) =
    g_task_get_task_data (task);
  GError *error = NULL;
  gboolean ok = finish (SANDBOX_DRIVER (object), result, &error);

  sandbox_task_return_boolean (task, ok, error);
}
