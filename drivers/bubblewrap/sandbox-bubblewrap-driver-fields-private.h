/* sandbox-bubblewrap-driver-fields-private.h — what a bubblewrap driver holds, for its files
 *
 * sandbox-bubblewrap-driver.c (the session's commands, files and stop)
 * and sandbox-bubblewrap-driver-layers.c (restoring its layers) share it;
 * nothing else sees a driver's fields.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-driver-private.h"
#include "sandbox-bubblewrap-keeper-private.h"
#include "sandbox-bubblewrap-limits-private.h"
#include "sandbox-bubblewrap-ports-private.h"
#include "sandbox-bubblewrap-process-private.h"
#include "sandbox-bubblewrap-ready-private.h"
#include "sandbox-bubblewrap-session-net-private.h"

G_BEGIN_DECLS

struct _SandboxBubblewrapDriver
{
  GObject parent_instance;

  /* Read-only after construction. */
  char *executable;
  char *session_id;           /* for the operators: on gateway events and logs */
  char *workspace;            /* a layered session's upper layer */
  /* Replaced by a restore (sandbox-bubblewrap-driver-layers.c), under
   * @layers_lock's writer side: read them under its reader side. */
  GRWLock layers_lock;
  SandboxWorkspaceFlags files_flags;
  gboolean layers_lost;       /* a restore could not mount them again */
  SandboxWorkspace *files;    /* contained I/O in the workspace (a layered
                               * session's: its keeper's overlay) */
  GBytes *seccomp_program;    /* NULL when syscalls are not filtered */
  SandboxBubblewrapLimits limits;
  SandboxBubblewrapCgroupRoot *cgroup_root;   /* NULL: no cgroup limits */
  SandboxBubblewrapGuest guest;               /* who guests are on the host */
  gboolean host_loopback;                     /* allow-all guests reach the host's loopback */
  SandboxBubblewrapEtc etc;                   /* the guests' /etc */
  char *gateway_ca_directory;                 /* the backend's gateway CA */
  char *upstream_ca_file;                     /* NULL: the system's store */
  char *runtime;                              /* NULL: the host's /usr */
  char *runtime_key;                          /* its key, for the coding probe */
  gboolean runtime_writable;                  /* the session's own copy of it */

  GWeakRef backend;           /* receives gateway-error */
  GWeakRef handle;            /* relays the gateway's audit stream */

  SandboxSessionGate *gate;   /* stopped state, admission, policy revision */

  SandboxBubblewrapReadyPool *ready_pool;   /* NULL: no ready sandboxes */
  SandboxBubblewrapTrees *trees;   /* the commands' sandboxes not reaped yet */
  GMutex ready_lock;
  /* Guarded by @ready_lock. */
  SandboxBubblewrapReady *ready;            /* the next command's sandbox */
  gboolean ready_closed;                    /* stopped: never start one again */
  /* A layered session's one overlay; its process ends at stop. Under
   * @layers_lock too. */
  SandboxBubblewrapKeeper *keeper;
  SandboxBubblewrapNetSlot net;      /* what the commands share */
  /* Idle helpers (sandbox-bubblewrap-driver-park.c). */
  guint park_timeout_ms;             /* 0: never parked */
  GMutex park_lock;
  /* Guarded by @park_lock. */
  gint64 last_use;                   /* monotonic, of the last command or file call */
  GSource *park_source;              /* (owned) (nullable): armed */
  SandboxBubblewrapPorts *ports;     /* its ports exposed to the host */
  /* Set under the gate's lock (see apply_policy_locked()): read it after
   * reading an allow-list policy from the gate. */
  SandboxGateway *gateway;    /* NULL until the first allow-list */
  GBytes *gateway_ca;         /* its CA's certificate, set with it */
};

G_END_DECLS
