/* sandbox-bubblewrap-backend-fields-private.h — what a bubblewrap backend holds, for its files
 *
 * sandbox-bubblewrap-backend.c (init() and the backend's methods) and
 * sandbox-bubblewrap-backend-properties.c (its properties) share it;
 * nothing else sees a backend's fields.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-backend-private.h"
#include "sandbox-bubblewrap-store-private.h"

G_BEGIN_DECLS

/* The name, state directory and admission limit are the core's
 * SandboxBackendBase's. */
struct _SandboxBubblewrapBackend
{
  SandboxBackendBase parent_instance;

  char *executable;
  gboolean seccomp;
  gboolean durable;
  SandboxBubblewrapLimits limits;
  char *layering;      /* as set: "auto" or "copy" */
  gboolean layered;    /* what init() found: new sessions are layered */
  guint max_ready_sandboxes;
  guint ready_idle_timeout_ms;
  guint64 workspace_quota_bytes;
  gint64 guest_uid;   /* as set; -1: automatic */
  gint64 guest_gid;
  char *guest_id_range;   /* as set; NULL: the default */
  gboolean per_session_guests;   /* what init() found: each session's own ids */

  SandboxBubblewrapStore *store;   /* set by init() */
  SandboxBubblewrapHardening hardening;   /* set by init() */
};

/* The largest id a guest-uid or guest-gid may name: (uid_t) -1 means "no
 * change" to the kernel. */
#define GUEST_ID_MAX ((gint64) G_MAXUINT32 - 1)

/* sandbox-bubblewrap-backend-properties.c */
void sandbox_bubblewrap_backend_install_properties (GObjectClass *object_class);

G_END_DECLS
