/* sandbox-session.h
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
#include "sandbox-driver.h"
#include "sandbox-network-policy.h"
#include "sandbox-process.h"
#include "sandbox-result.h"

G_BEGIN_DECLS

/**
 * SANDBOX_GATEWAY_GUEST_SOCKET:
 *
 * Where the network gateway's socket appears inside the sandbox.
 */
#define SANDBOX_GATEWAY_GUEST_SOCKET "/run/sandbox-network.sock"

#define SANDBOX_TYPE_SESSION (sandbox_session_get_type ())

SANDBOX_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (SandboxSession, sandbox_session, SANDBOX, SESSION, GObject)

SANDBOX_AVAILABLE_IN_ALL
SandboxSession *sandbox_session_new (const char    *id,
                                     SandboxDriver *driver,
                                     const char    *gateway_socket);
SANDBOX_AVAILABLE_IN_ALL
const char     *sandbox_session_get_id             (SandboxSession *self);
SANDBOX_AVAILABLE_IN_ALL
const char     *sandbox_session_get_gateway_socket (SandboxSession *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxDriver  *sandbox_session_get_driver         (SandboxSession *self);
SANDBOX_AVAILABLE_IN_ALL
char           *sandbox_session_resolve_path       (SandboxSession *self,
                                                    const char     *path,
                                                    GError        **error);

SANDBOX_AVAILABLE_IN_ALL
GBytes *sandbox_session_read_bytes (SandboxSession *self,
                                    const char *path,
                                    GCancellable *cancellable,
                                    GError **error);
SANDBOX_AVAILABLE_IN_ALL
void sandbox_session_read_bytes_async (SandboxSession *self,
                                       const char *path,
                                       GCancellable *cancellable,
                                       GAsyncReadyCallback callback,
                                       gpointer user_data);
SANDBOX_AVAILABLE_IN_ALL
GBytes *sandbox_session_read_bytes_finish (SandboxSession *self,
                                           GAsyncResult *result,
                                           GError **error);
SANDBOX_AVAILABLE_IN_ALL
char *sandbox_session_read_text (SandboxSession *self,
                                 const char *path,
                                 GCancellable *cancellable,
                                 GError **error);
SANDBOX_AVAILABLE_IN_ALL
void sandbox_session_read_text_async (SandboxSession *self,
                                      const char *path,
                                      GCancellable *cancellable,
                                      GAsyncReadyCallback callback,
                                      gpointer user_data);
SANDBOX_AVAILABLE_IN_ALL
char *sandbox_session_read_text_finish (SandboxSession *self,
                                        GAsyncResult *result,
                                        GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean sandbox_session_write_bytes (SandboxSession *self,
                                      const char *path,
                                      GBytes *contents,
                                      GCancellable *cancellable,
                                      GError **error);
SANDBOX_AVAILABLE_IN_ALL
void sandbox_session_write_bytes_async (SandboxSession *self,
                                        const char *path,
                                        GBytes *contents,
                                        GCancellable *cancellable,
                                        GAsyncReadyCallback callback,
                                        gpointer user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean sandbox_session_write_bytes_finish (SandboxSession *self,
                                             GAsyncResult *result,
                                             GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean sandbox_session_write_text (SandboxSession *self,
                                     const char *path,
                                     const char *text,
                                     GCancellable *cancellable,
                                     GError **error);
SANDBOX_AVAILABLE_IN_ALL
void sandbox_session_write_text_async (SandboxSession *self,
                                       const char *path,
                                       const char *text,
                                       GCancellable *cancellable,
                                       GAsyncReadyCallback callback,
                                       gpointer user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean sandbox_session_write_text_finish (SandboxSession *self,
                                            GAsyncResult *result,
                                            GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean sandbox_session_remove_path (SandboxSession *self,
                                      const char *path,
                                      GCancellable *cancellable,
                                      GError **error);
SANDBOX_AVAILABLE_IN_ALL
void sandbox_session_remove_path_async (SandboxSession *self,
                                        const char *path,
                                        GCancellable *cancellable,
                                        GAsyncReadyCallback callback,
                                        gpointer user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean sandbox_session_remove_path_finish (SandboxSession *self,
                                             GAsyncResult *result,
                                             GError **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxProcess *sandbox_session_spawn (SandboxSession *self,
                                       SandboxCommand *command,
                                       GCancellable *cancellable,
                                       GError **error);
SANDBOX_AVAILABLE_IN_ALL
void sandbox_session_spawn_async (SandboxSession *self,
                                  SandboxCommand *command,
                                  GCancellable *cancellable,
                                  GAsyncReadyCallback callback,
                                  gpointer user_data);
SANDBOX_AVAILABLE_IN_ALL
SandboxProcess *sandbox_session_spawn_finish (SandboxSession *self,
                                              GAsyncResult *result,
                                              GError **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxProcess *sandbox_session_spawn_background (SandboxSession *self,
                                                  SandboxCommand *command,
                                                  GError **error);
SANDBOX_AVAILABLE_IN_ALL
GPtrArray *sandbox_session_list_background (SandboxSession *self);
SANDBOX_AVAILABLE_IN_ALL
SandboxProcess *sandbox_session_lookup_background (SandboxSession *self,
                                                   const char *id);
SANDBOX_AVAILABLE_IN_ALL
char *sandbox_session_expose_port (SandboxSession *self,
                                   guint port,
                                   GCancellable *cancellable,
                                   GError **error);
SANDBOX_AVAILABLE_IN_ALL
SandboxResult *sandbox_session_run (SandboxSession *self,
                                    SandboxCommand *command,
                                    GCancellable *cancellable,
                                    GError **error);
SANDBOX_AVAILABLE_IN_ALL
void sandbox_session_run_async (SandboxSession *self,
                                SandboxCommand *command,
                                GCancellable *cancellable,
                                GAsyncReadyCallback callback,
                                gpointer user_data);
SANDBOX_AVAILABLE_IN_ALL
SandboxResult *sandbox_session_run_finish (SandboxSession *self,
                                           GAsyncResult *result,
                                           GError **error);
SANDBOX_AVAILABLE_IN_ALL
gboolean sandbox_session_set_network_policy (SandboxSession *self,
                                             SandboxNetworkPolicy *policy,
                                             GCancellable *cancellable,
                                             GError **error);
SANDBOX_AVAILABLE_IN_ALL
void sandbox_session_set_network_policy_async (SandboxSession *self,
                                               SandboxNetworkPolicy *policy,
                                               GCancellable *cancellable,
                                               GAsyncReadyCallback callback,
                                               gpointer user_data);
SANDBOX_AVAILABLE_IN_ALL
gboolean sandbox_session_set_network_policy_finish (SandboxSession *self,
                                                    GAsyncResult *result,
                                                    GError **error);

G_END_DECLS
