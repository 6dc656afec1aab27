/* sandbox-driver.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <gio/gio.h>

#include "sandbox-version-macros.h"
#include "sandbox-command.h"
#include "sandbox-network-policy.h"
#include "sandbox-process.h"

G_BEGIN_DECLS

/**
 * SANDBOX_MAX_FILE_BYTES:
 *
 * The default bound on a single workspace file read or write (1 MiB); a
 * backend may set another ([property@Sandbox.BackendBase:max-file-bytes]),
 * which [method@Sandbox.Driver.get_max_file_bytes] gives.
 */
#define SANDBOX_MAX_FILE_BYTES 1048576

#define SANDBOX_TYPE_DRIVER (sandbox_driver_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_INTERFACE (SandboxDriver, sandbox_driver, SANDBOX, DRIVER, GObject)

/**
 * SandboxDriverInterface:
 * @parent_iface: the parent interface
 * @read_bytes: reads a whole workspace file (blocking, thread-safe)
 * @write_bytes: replaces a workspace file, creating parent directories
 *   (blocking, thread-safe)
 * @remove_path: removes a file or directory tree (blocking, thread-safe)
 * @spawn: starts a command; must not block on the command, and must refuse
 *   with %SANDBOX_ERROR_BUSY before starting anything when the admission limit
 *   is reached
 * @set_network_policy: replaces the session's network policy, or refuses a
 *   policy the driver cannot enforce
 * @read_bytes_async: async form of @read_bytes; the default runs @read_bytes in
 *   a thread
 * @read_bytes_finish: finishes @read_bytes_async
 * @write_bytes_async: async form of @write_bytes; the default runs it in a thread
 * @write_bytes_finish: finishes @write_bytes_async
 * @remove_path_async: async form of @remove_path; the default runs it in a thread
 * @remove_path_finish: finishes @remove_path_async
 * @spawn_async: async form of @spawn; the default calls @spawn
 * @spawn_finish: finishes @spawn_async
 * @set_network_policy_async: async form of @set_network_policy; the default
 *   runs it in a thread
 * @set_network_policy_finish: finishes @set_network_policy_async
 * @check_active: refuses a file operation on a stopped session
 *   (%SANDBOX_ERROR_STOPPED) or with @cancellable cancelled; usually
 *   [method@Sandbox.SessionGate.check_active] of the driver's gate. Optional.
 * @expose_port: makes a TCP port of the session's loopback reachable from
 *   the host as a Unix socket, until the session stops, and returns the
 *   socket's path. Optional: without it
 *   [method@Sandbox.Session.expose_port] fails with
 *   %G_IO_ERROR_NOT_SUPPORTED.
 *
 * Every workspace file operation runs the reference's ritual in the public
 * wrappers ([method@Sandbox.Driver.read_bytes] and the others, which the
 * async defaults run too), once for every driver: the size of what is
 * written (%SANDBOX_ERROR_LIMIT), @check_active, the path (made canonical,
 * %SANDBOX_ERROR_PATH; a removal never names the workspace root), the
 * driver's operation with the canonical path, and last the size of what
 * was read (%SANDBOX_ERROR_LIMIT). @read_bytes, @write_bytes and
 * @remove_path do only the operation.
 *
 * What a backend implements for one live session. Every path it receives is
 * canonical (see [func@Sandbox.path_canonicalize]) and every command has been
 * validated, with a canonical working directory. [class@Sandbox.Session] adds path
 * handling, text conversion and run() on top.
 */
struct _SandboxDriverInterface
{
  GTypeInterface parent_iface;

  GBytes         *(*read_bytes)                (SandboxDriver         *self,
                                                const char            *path,
                                                GCancellable          *cancellable,
                                                GError               **error);
  gboolean        (*write_bytes)               (SandboxDriver         *self,
                                                const char            *path,
                                                GBytes                *contents,
                                                GCancellable          *cancellable,
                                                GError               **error);
  gboolean        (*remove_path)               (SandboxDriver         *self,
                                                const char            *path,
                                                GCancellable          *cancellable,
                                                GError               **error);
  SandboxProcess *(*spawn)                     (SandboxDriver         *self,
                                                SandboxCommand        *command,
                                                GCancellable          *cancellable,
                                                GError               **error);
  gboolean        (*set_network_policy)        (SandboxDriver         *self,
                                                SandboxNetworkPolicy  *policy,
                                                GCancellable          *cancellable,
                                                GError               **error);

  void            (*read_bytes_async)          (SandboxDriver         *self,
                                                const char            *path,
                                                GCancellable          *cancellable,
                                                GAsyncReadyCallback    callback,
                                                gpointer               user_data);
  GBytes         *(*read_bytes_finish)         (SandboxDriver         *self,
                                                GAsyncResult          *result,
                                                GError               **error);
  void            (*write_bytes_async)         (SandboxDriver         *self,
                                                const char            *path,
                                                GBytes                *contents,
                                                GCancellable          *cancellable,
                                                GAsyncReadyCallback    callback,
                                                gpointer               user_data);
  gboolean        (*write_bytes_finish)        (SandboxDriver         *self,
                                                GAsyncResult          *result,
                                                GError               **error);
  void            (*remove_path_async)         (SandboxDriver         *self,
                                                const char            *path,
                                                GCancellable          *cancellable,
                                                GAsyncReadyCallback    callback,
                                                gpointer               user_data);
  gboolean        (*remove_path_finish)        (SandboxDriver         *self,
                                                GAsyncResult          *result,
                                                GError               **error);
  void            (*spawn_async)               (SandboxDriver         *self,
                                                SandboxCommand        *command,
                                                GCancellable          *cancellable,
                                                GAsyncReadyCallback    callback,
                                                gpointer               user_data);
  SandboxProcess *(*spawn_finish)              (SandboxDriver         *self,
                                                GAsyncResult          *result,
                                                GError               **error);
  void            (*set_network_policy_async)  (SandboxDriver         *self,
                                                SandboxNetworkPolicy  *policy,
                                                GCancellable          *cancellable,
                                                GAsyncReadyCallback    callback,
                                                gpointer               user_data);
  gboolean        (*set_network_policy_finish) (SandboxDriver         *self,
                                                GAsyncResult          *result,
                                                GError               **error);

  gboolean        (*check_active)              (SandboxDriver         *self,
                                                GCancellable          *cancellable,
                                                GError               **error);

  char           *(*expose_port)               (SandboxDriver         *self,
                                                guint16                port,
                                                GCancellable          *cancellable,
                                                GError               **error);

  /*< private >*/
  gpointer _padding[10];
};

SANDBOX_AVAILABLE_IN_ALL
gsize           sandbox_driver_get_max_file_bytes        (SandboxDriver         *self);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_driver_set_max_file_bytes        (SandboxDriver         *self,
                                                          gsize                  max_bytes);
SANDBOX_AVAILABLE_IN_ALL
GBytes         *sandbox_driver_read_bytes                (SandboxDriver         *self,
                                                          const char            *path,
                                                          GCancellable          *cancellable,
                                                          GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_driver_read_bytes_async          (SandboxDriver         *self,
                                                          const char            *path,
                                                          GCancellable          *cancellable,
                                                          GAsyncReadyCallback    callback,
                                                          gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
GBytes         *sandbox_driver_read_bytes_finish         (SandboxDriver         *self,
                                                          GAsyncResult          *result,
                                                          GError               **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_driver_write_bytes               (SandboxDriver         *self,
                                                          const char            *path,
                                                          GBytes                *contents,
                                                          GCancellable          *cancellable,
                                                          GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_driver_write_bytes_async         (SandboxDriver         *self,
                                                          const char            *path,
                                                          GBytes                *contents,
                                                          GCancellable          *cancellable,
                                                          GAsyncReadyCallback    callback,
                                                          gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_driver_write_bytes_finish        (SandboxDriver         *self,
                                                          GAsyncResult          *result,
                                                          GError               **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_driver_remove_path               (SandboxDriver         *self,
                                                          const char            *path,
                                                          GCancellable          *cancellable,
                                                          GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_driver_remove_path_async         (SandboxDriver         *self,
                                                          const char            *path,
                                                          GCancellable          *cancellable,
                                                          GAsyncReadyCallback    callback,
                                                          gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_driver_remove_path_finish        (SandboxDriver         *self,
                                                          GAsyncResult          *result,
                                                          GError               **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxProcess *sandbox_driver_spawn                     (SandboxDriver         *self,
                                                          SandboxCommand        *command,
                                                          GCancellable          *cancellable,
                                                          GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_driver_spawn_async               (SandboxDriver         *self,
                                                          SandboxCommand        *command,
                                                          GCancellable          *cancellable,
                                                          GAsyncReadyCallback    callback,
                                                          gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
SandboxProcess *sandbox_driver_spawn_finish              (SandboxDriver         *self,
                                                          GAsyncResult          *result,
                                                          GError               **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_driver_set_network_policy        (SandboxDriver         *self,
                                                          SandboxNetworkPolicy  *policy,
                                                          GCancellable          *cancellable,
                                                          GError               **error);
SANDBOX_AVAILABLE_IN_ALL
void            sandbox_driver_set_network_policy_async  (SandboxDriver         *self,
                                                          SandboxNetworkPolicy  *policy,
                                                          GCancellable          *cancellable,
                                                          GAsyncReadyCallback    callback,
                                                          gpointer               user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean        sandbox_driver_set_network_policy_finish (SandboxDriver         *self,
                                                          GAsyncResult          *result,
                                                          GError               **error);

G_END_DECLS
