/* sandbox-bubblewrap-layering-private.h — layered workspaces: probe and mount
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "stub/sandbox-stub-overlay.h"

G_BEGIN_DECLS

/* Where a layered session's layers are bound inside the sandbox, for the
 * stub's overlay step (stub/sandbox-stub-overlay.c) to mount /workspace
 * from, before it covers them: lower/ (the template's data, read-only)
 * and layers/ (upper/ and work/, one mount as overlayfs requires). */
#define SANDBOX_BUBBLEWRAP_OVERLAY_DIR "/run/sandbox-overlay"

/* Where a sandbox of a session with a keeper finds the session's lock
 * file (layers/lock, empty and read-only) for the stub's lock. */
#define SANDBOX_BUBBLEWRAP_LOCK_FILE "/run/sandbox-lock"

/* The capabilities the stub needs in the sandbox's user namespace to
 * mount the overlay (CAP_SYS_ADMIN) and that overlayfs then works with as
 * its mounter (it copies up and makes whiteouts with the mounter's
 * credentials: DAC_OVERRIDE for its 0000 work directories, FOWNER, CHOWN,
 * FSETID to keep owners and modes on copy-up), and CAP_SETPCAP to empty
 * the bounding set afterwards. All of them hold only over what the ids the
 * namespace maps own — the guest's own files — and the stub drops every
 * one before the guest runs. */
#define SANDBOX_BUBBLEWRAP_OVERLAY_CAPABILITIES \
  "CAP_SYS_ADMIN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_CHOWN", "CAP_FSETID", "CAP_SETPCAP"

/* The overlay's options, after lowerdir, upperdir and workdir: xattrs in
 * the user.* namespace (the only ones a user namespace may set), no
 * redirects followed or made, no metacopy (both would trust xattrs the
 * guest controls), no index, no xino. */
#define SANDBOX_BUBBLEWRAP_OVERLAY_OPTIONS SANDBOX_STUB_OVERLAY_OPTIONS

/* The values of SandboxBubblewrapBackend:layering and :workspace-layering. */
#define SANDBOX_BUBBLEWRAP_LAYERING_AUTO    "auto"
#define SANDBOX_BUBBLEWRAP_LAYERING_COPY    "copy"
#define SANDBOX_BUBBLEWRAP_LAYERING_OVERLAY "overlay"

#define SANDBOX_BUBBLEWRAP_DEFAULT_LAYERING SANDBOX_BUBBLEWRAP_LAYERING_COPY

gboolean sandbox_bubblewrap_layering_probe       (const char                   *directory,
                                                  const SandboxBubblewrapGuest *guest,
                                                  GError                      **error);

char    *sandbox_bubblewrap_layering_new_work_name (void);
gboolean sandbox_bubblewrap_layering_make_work   (const char                   *layers,
                                                  const char                   *name,
                                                  const SandboxBubblewrapGuest *guest,
                                                  GError                      **error);
void     sandbox_bubblewrap_layering_remove_work (const char                   *layers,
                                                  const char                   *name);
guint    sandbox_bubblewrap_layering_remove_all_work (const char               *layers);

G_END_DECLS
