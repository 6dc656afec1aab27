/* sandbox-bubblewrap-driver-private.h — one live bubblewrap session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"

G_BEGIN_DECLS

#define SANDBOX_TYPE_BUBBLEWRAP_DRIVER (sandbox_bubblewrap_driver_get_type ())
G_DECLARE_FINAL_TYPE (SandboxBubblewrapDriver, sandbox_bubblewrap_driver,
                      SANDBOX, BUBBLEWRAP_DRIVER, GObject)

SandboxBubblewrapDriver *sandbox_bubblewrap_driver_new            (const char              *executable,
                                                                   const char              *session_id,
                                                                   const char              *workspace,
                                                                   const char * const      *lowers,
                                                                   const char              *layers,
                                                                   guint                    max_concurrent_commands,
                                                                   SandboxNetworkPolicy    *policy,
                                                                   SandboxBackend          *backend,
                                                                   const SandboxBubblewrapHardening *hardening,
                                                                   GError                 **error);
gboolean                 sandbox_bubblewrap_driver_prove_isolation (SandboxBubblewrapDriver *self,
                                                                   GCancellable            *cancellable,
                                                                   GError                 **error);

/* For the coding binding (sandbox-bubblewrap-coding.c). */
gboolean                 sandbox_bubblewrap_driver_check_active    (SandboxBubblewrapDriver  *self,
                                                                    GError                  **error);
SandboxNetworkPolicyKind sandbox_bubblewrap_driver_get_policy_kind (SandboxBubblewrapDriver  *self,
                                                                    guint64                  *revision);
SandboxProcess          *sandbox_bubblewrap_driver_spawn_prepared  (SandboxBubblewrapDriver  *self,
                                                                    SandboxCommand           *command,
                                                                    guint64                   revision,
                                                                    GCancellable             *cancellable,
                                                                    GError                  **error);
GVariant                *sandbox_bubblewrap_driver_list_directory  (SandboxBubblewrapDriver  *self,
                                                                    const char               *path,
                                                                    guint                     max_entries,
                                                                    gboolean                 *truncated,
                                                                    GCancellable             *cancellable,
                                                                    GError                  **error);

void                     sandbox_bubblewrap_driver_stop           (SandboxBubblewrapDriver *self);
void                     sandbox_bubblewrap_driver_set_handle     (SandboxBubblewrapDriver *self,
                                                                   SandboxHandle           *handle);
gboolean                 sandbox_bubblewrap_driver_get_syscalls_filtered (SandboxBubblewrapDriver *self);
gboolean                 sandbox_bubblewrap_driver_get_resources_bounded (SandboxBubblewrapDriver *self);
gboolean                 sandbox_bubblewrap_driver_get_host_loopback (SandboxBubblewrapDriver *self);
const char              *sandbox_bubblewrap_driver_get_runtime_key (SandboxBubblewrapDriver *self);
gboolean                 sandbox_bubblewrap_driver_get_layered (SandboxBubblewrapDriver *self);

gboolean sandbox_bubblewrap_driver_run_quiet (SandboxBubblewrapDriver     *self,
                                              const char                  *what,
                                              SandboxSessionGateApplyFunc  run,
                                              gpointer                     user_data,
                                              GCancellable                *cancellable,
                                              GError                     **error);

/* Rewrites a layered session's upper layer; TRUE on success. */
typedef gboolean (*SandboxBubblewrapRefillFunc) (gpointer   data,
                                                 GError   **error);

gboolean sandbox_bubblewrap_driver_revive_keeper (SandboxBubblewrapDriver  *self,
                                                  GCancellable             *cancellable,
                                                  GError                  **error);
gboolean sandbox_bubblewrap_driver_set_layers_lost_error (GError **error);
void     sandbox_bubblewrap_driver_init_park  (SandboxBubblewrapDriver *self,
                                               guint                    timeout_ms);
void     sandbox_bubblewrap_driver_note_use   (SandboxBubblewrapDriver *self);
void     sandbox_bubblewrap_driver_clear_park (SandboxBubblewrapDriver *self);
GRWLockReaderLocker *sandbox_bubblewrap_driver_lock_files (SandboxBubblewrapDriver  *self,
                                                           GCancellable             *cancellable,
                                                           GError                  **error);
gboolean sandbox_bubblewrap_driver_replace_layers (SandboxBubblewrapDriver     *self,
                                                   const char * const          *lowers,
                                                   const char * const          *runtime_lowers,
                                                   const char                  *layers,
                                                   SandboxBubblewrapRefillFunc  refill,
                                                   gpointer                     refill_data,
                                                   GCancellable                *cancellable,
                                                   GError                     **error);

G_END_DECLS
