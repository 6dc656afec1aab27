/* sandbox-bubblewrap-launcher-private.h — the long-lived thread bwrap is spawned from
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"

G_BEGIN_DECLS

GMainContext *sandbox_bubblewrap_launcher_get_context (void);
gboolean      sandbox_bubblewrap_launcher_is_current  (void);
void          sandbox_bubblewrap_launcher_run_sync    (GSourceFunc   func,
                                                       gpointer      data);
GPid          sandbox_bubblewrap_launcher_spawn       (const char * const *argv,
                                                       int            stdin_fd,
                                                       int            stdout_fd,
                                                       int            stderr_fd,
                                                       GArray        *passed_fds,
                                                       GError       **error);

G_END_DECLS
