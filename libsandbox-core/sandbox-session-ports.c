/* sandbox-session-ports.c — a port of the session's loopback, reachable from the host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend-private.h"
#include "sandbox-error.h"
#include "sandbox-session-private.h"

/**
 * sandbox_session_expose_port:
 * @self: a [class@Sandbox.Session]
 * @port: a TCP port of the session's loopback, 1 to 65535
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Makes @port of the session's loopback — where a server that one of its
 * commands runs (a background dev server, say) listens on `127.0.0.1` —
 * reachable from the host: the returned path is a Unix socket the
 * application connects to, and each connection is relayed to a new
 * connection to `127.0.0.1:@port` in the session's network namespace.
 * Nothing of the guest reaches the host but those bytes: the socket is in
 * a directory only the host's user can enter, and no port of the host is
 * opened. Whether a server listens there is seen at each connection, which
 * is closed at once when none does. The socket goes with the session's
 * stop or delete. Exposing the same port again returns the same path.
 *
 * Returns: (transfer full): the socket's path, or %NULL with
 *   %SANDBOX_ERROR_INVALID for a port out of range, %SANDBOX_ERROR_STOPPED
 *   for a stopped session, and %G_IO_ERROR_NOT_SUPPORTED when the driver
 *   has no loopback of the session's own
 */
char *
sandbox_session_expose_port (SandboxSession  *self,
                             guint            port,
                             GCancellable    *cancellable,
                             GError         **error)
{
  SandboxDriver *driver;
  SandboxDriverInterface *iface;

  g_return_val_if_fail (SANDBOX_IS_SESSION (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (port < 1 || port > G_MAXUINT16)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "port: expected a TCP port from 1 to 65535, got %u", port);
      return NULL;
    }
  driver = sandbox_session_driver_for_call (self);
  iface = SANDBOX_DRIVER_GET_IFACE (driver);
  if (iface->expose_port == NULL)
    {
      sandbox_set_error_not_supported (G_OBJECT_TYPE (driver), "Exposed ports", TRUE, error);
      return NULL;
    }
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  return iface->expose_port (driver, (guint16) port, cancellable, error);
}
