/* sandbox-bubblewrap-ports.c — ports of a session's loopback, reachable from the host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <gio/gunixsocketaddress.h>

#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-ports-private.h"

/*
 * A server a session's command runs listens in the session's network
 * namespace (sandbox-bubblewrap-session-net.c), which no host socket can
 * reach. An exposed port is a Unix socket the host listens on, PORT in a
 * directory of its own (0700, made with g_dir_make_tmp()); each connection
 * to it gets a new TCP socket of the namespace from the network keeper,
 * connected to 127.0.0.1:PORT there, and the two are spliced. The guest
 * gets no host socket, port or path: only the bytes of connections the
 * host's side opened.
 *
 * Threads: the listeners and the splices run on the launcher thread; a
 * connection's setup (asking the network keeper, connecting) blocks, so it
 * runs in a worker thread. The session's network is the one of the moment
 * of each connection: after a policy change, the new one's.
 */

/* How long a connection to the guest's port may take to be accepted. */
#define CONNECT_TIMEOUT_S 10

struct _SandboxBubblewrapPorts
{
  GMutex lock;
  /* Guarded by @lock. */
  char *directory;          /* NULL until the first port, and after close */
  GHashTable *services;     /* port → GSocketService */
  gboolean closed;

  SandboxBubblewrapPortsNetFunc dup_net;
  GWeakRef owner;           /* @dup_net's object: the driver */
};

/* What one connection's setup gets: the port and the way to the network.
 * Shared (g_atomic_rc_box) by the service's signal and each connection's
 * task, which may outlive the service. */
typedef struct
{
  guint16 port;
  SandboxBubblewrapPortsNetFunc dup_net;
  GWeakRef owner;
} Exposed;

static void
exposed_clear (gpointer data)
{
  Exposed *exposed = data;

  g_weak_ref_clear (&exposed->owner);
}

static void
exposed_release (gpointer data)
{
  g_atomic_rc_box_release_full (data, exposed_clear);
}

static void
exposed_closure_release (gpointer  data,
                         GClosure *closure)
{
  exposed_release (data);
}

/**
 * sandbox_bubblewrap_ports_new:
 * @dup_net: how a connection finds the session's network
 * @owner: what @dup_net is called with (weak: a connection after it is
 *   gone is closed)
 *
 * Returns: (transfer full): a session's exposed ports, none yet
 */
SandboxBubblewrapPorts *
sandbox_bubblewrap_ports_new (SandboxBubblewrapPortsNetFunc  dup_net,
                              GObject                       *owner)
{
  SandboxBubblewrapPorts *self = g_new0 (SandboxBubblewrapPorts, 1);

  g_mutex_init (&self->lock);
  self->services = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  self->dup_net = dup_net;
  g_weak_ref_init (&self->owner, owner);
  return self;
}

/* The guest's side of a connection, on the host's until the splice. */
#define GUEST_SIDE_KEY "sandbox-bubblewrap-guest-side"

static void
splice_done_cb (GObject      *object,
                GAsyncResult *result,
                gpointer      data)
{
  g_autoptr(GError) error = NULL;

  if (!g_io_stream_splice_finish (result, &error))
    g_debug ("An exposed port's connection ended: %s", error->message);
}

/* Launcher thread: the bytes go both ways until either side closes.
 * @data: the host's side (a reference), with the guest's attached. */
static gboolean
start_splice_cb (gpointer data)
{
  g_autoptr(GSocketConnection) host = data;
  g_autoptr(GSocketConnection) guest = g_object_steal_data (G_OBJECT (host), GUEST_SIDE_KEY);

  g_io_stream_splice_async (G_IO_STREAM (host), G_IO_STREAM (guest),
                            G_IO_STREAM_SPLICE_CLOSE_STREAM1 | G_IO_STREAM_SPLICE_CLOSE_STREAM2,
                            G_PRIORITY_DEFAULT, NULL, splice_done_cb, NULL);
  return G_SOURCE_REMOVE;
}

/* A TCP socket of the session's namespace, connected to the port. */
static GSocket *
connect_to_guest (Exposed  *exposed,
                  GError  **error)
{
  g_autoptr(GObject) owner = g_weak_ref_get (&exposed->owner);
  g_autoptr(SandboxBubblewrapSessionNet) net = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, exposed->port);
  g_autoptr(GSocket) socket = NULL;

  net = owner != NULL ? exposed->dup_net (owner) : NULL;
  if (net == NULL)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                           "The session has no network: stopped, or no command ran yet");
      return NULL;
    }
  socket = sandbox_bubblewrap_session_net_new_socket (net, error);
  if (socket == NULL)
    return NULL;
  g_socket_set_timeout (socket, CONNECT_TIMEOUT_S);
  if (!g_socket_connect (socket, address, NULL, error))
    return NULL;
  g_socket_set_timeout (socket, 0);
  return g_steal_pointer (&socket);
}

/* Worker thread: one connection's way to the guest's port, or its end. */
static void
relay_thread (GTask        *task,
              gpointer      source_object,
              gpointer      data,
              GCancellable *cancellable)
{
  GSocketConnection *host = data;
  Exposed *exposed = g_object_get_data (G_OBJECT (task), "exposed");
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = connect_to_guest (exposed, &error);

  if (socket == NULL)
    {
      g_debug ("An exposed port %u refused a connection: %s", exposed->port, error->message);
      g_io_stream_close (G_IO_STREAM (host), NULL, NULL);
      return;
    }
  g_object_set_data_full (G_OBJECT (host), GUEST_SIDE_KEY,
                          g_socket_connection_factory_create_connection (socket),
                          g_object_unref);
  g_main_context_invoke (sandbox_bubblewrap_launcher_get_context (), start_splice_cb,
                         g_object_ref (host));
}

/* Launcher thread: a host program connected to the exposed socket. */
static gboolean
incoming_cb (GSocketService    *service,
             GSocketConnection *connection,
             GObject           *source_object,
             gpointer           data)
{
  Exposed *exposed = data;
  g_autoptr(GTask) task = g_task_new (NULL, NULL, NULL, NULL);

  g_object_set_data_full (G_OBJECT (task), "exposed", g_atomic_rc_box_acquire (exposed),
                          exposed_release);
  g_task_set_task_data (task, g_object_ref (connection), g_object_unref);
  g_task_run_in_thread (task, relay_thread);
  return TRUE;
}

typedef struct
{
  SandboxBubblewrapPorts *self;
  guint16 port;
  char *path;
  GSocketService *service;
  GError *error;
} ListenCall;

/* Launcher thread, so that the service's sources are its context's. */
static gboolean
listen_cb (gpointer data)
{
  ListenCall *call = data;
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (call->path);
  g_autoptr(GSocketService) service = g_socket_service_new ();
  g_autoptr(GObject) owner = g_weak_ref_get (&call->self->owner);
  Exposed *exposed = g_atomic_rc_box_new0 (Exposed);

  exposed->port = call->port;
  exposed->dup_net = call->self->dup_net;
  g_weak_ref_init (&exposed->owner, owner);
  g_signal_connect_data (service, "incoming", G_CALLBACK (incoming_cb), exposed,
                         exposed_closure_release, 0);
  if (g_socket_listener_add_address (G_SOCKET_LISTENER (service), address,
                                     G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT, NULL,
                                     NULL, &call->error))
    {
      g_socket_service_start (service);
      call->service = g_steal_pointer (&service);
    }
  return G_SOURCE_REMOVE;
}

static gboolean
make_directory_locked (SandboxBubblewrapPorts  *self,
                       GError                 **error)
{
  g_autoptr(GError) cause = NULL;

  if (self->directory != NULL)
    return TRUE;
  /* 0700: only the host's user connects. */
  self->directory = g_dir_make_tmp ("sandbox-ports-XXXXXX", &cause);
  if (self->directory == NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not expose the port: %s", cause->message);
      return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_ports_expose:
 * @self: a session's ports
 * @port: the port of the session's loopback
 * @error: return location for a #GError
 *
 * Listens on a Unix socket for @port, once (again: the same path).
 *
 * Returns: (transfer full): the socket's path, or %NULL with
 *   %SANDBOX_ERROR_STOPPED after close, %SANDBOX_ERROR_UNAVAILABLE when
 *   the socket cannot be made
 */
char *
sandbox_bubblewrap_ports_expose (SandboxBubblewrapPorts  *self,
                                 guint16                  port,
                                 GError                 **error)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  char name[8];
  ListenCall call = { .self = self, .port = port };

  if (self->closed)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                           "The session is stopped: its ports are closed");
      return NULL;
    }
  if (!make_directory_locked (self, error))
    return NULL;
  g_snprintf (name, sizeof name, "%u", (guint) port);
  call.path = g_build_filename (self->directory, name, NULL);
  if (g_hash_table_contains (self->services, GUINT_TO_POINTER (port)))
    return call.path;
  sandbox_bubblewrap_launcher_run_sync (listen_cb, &call);
  if (call.service == NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not expose the port: %s", call.error->message);
      g_clear_error (&call.error);
      g_free (call.path);
      return NULL;
    }
  g_hash_table_insert (self->services, GUINT_TO_POINTER (port), call.service);
  return call.path;
}

/* Launcher thread: no connection is accepted after this. */
static gboolean
stop_services_cb (gpointer data)
{
  GHashTable *services = data;
  GHashTableIter iter;
  gpointer service;

  g_hash_table_iter_init (&iter, services);
  while (g_hash_table_iter_next (&iter, NULL, &service))
    {
      g_socket_service_stop (service);
      g_socket_listener_close (service);
    }
  g_hash_table_remove_all (services);
  return G_SOURCE_REMOVE;
}

/**
 * sandbox_bubblewrap_ports_close:
 * @self: a session's ports
 *
 * Stops listening on every exposed port and removes the sockets and their
 * directory: for the session's stop. Connections spliced already end with
 * their guest's side. Idempotent.
 */
void
sandbox_bubblewrap_ports_close (SandboxBubblewrapPorts *self)
{
  g_autoptr(GMutexLocker) locker = g_mutex_locker_new (&self->lock);
  GHashTableIter iter;
  gpointer port;

  self->closed = TRUE;
  if (self->directory == NULL)
    return;
  g_hash_table_iter_init (&iter, self->services);
  while (g_hash_table_iter_next (&iter, &port, NULL))
    {
      char name[8];
      g_autofree char *path = NULL;

      g_snprintf (name, sizeof name, "%u", GPOINTER_TO_UINT (port));
      path = g_build_filename (self->directory, name, NULL);
      g_unlink (path);
    }
  sandbox_bubblewrap_launcher_run_sync (stop_services_cb, self->services);
  if (g_rmdir (self->directory) < 0)
    g_debug ("Could not remove %s: %s", self->directory, g_strerror (errno));
  g_clear_pointer (&self->directory, g_free);
}

/**
 * sandbox_bubblewrap_ports_free:
 * @self: (transfer full) (nullable): a session's ports
 *
 * Closes them (sandbox_bubblewrap_ports_close()) and frees @self.
 */
void
sandbox_bubblewrap_ports_free (SandboxBubblewrapPorts *self)
{
  if (self == NULL)
    return;
  sandbox_bubblewrap_ports_close (self);
  g_hash_table_unref (self->services);
  g_weak_ref_clear (&self->owner);
  g_mutex_clear (&self->lock);
  g_free (self);
}
