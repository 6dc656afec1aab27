/* sandbox-bubblewrap-ready-private.h — sandboxes started before their command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"
#include "sandbox-bubblewrap-args-private.h"
#include "sandbox-bubblewrap-launcher-private.h"

G_BEGIN_DECLS

/* The defaults of SandboxBubblewrapBackend:max-ready-sandboxes and
 * :ready-idle-timeout-ms. */
#define SANDBOX_BUBBLEWRAP_DEFAULT_MAX_READY 8
#define SANDBOX_BUBBLEWRAP_DEFAULT_READY_IDLE_TIMEOUT_MS 30000

/* How long a ready sandbox's launch waits after its start. It is started
 * as the previous command ends, on the launcher thread, and bwrap's spawn
 * there (a fork of this process: page tables copied under its mmap lock,
 * then copy-on-write faults until exec) held up that command's waiter by
 * about a millisecond on a loaded two-core machine — a waiter that needs
 * some 30 us to return when the launch comes later. Small against an
 * agent's think time and against bwrap's own setup. */
#define SANDBOX_BUBBLEWRAP_READY_LAUNCH_DELAY_MS 5

/* A command message larger than this goes the cold way (a memfd): a ready
 * sandbox's socket takes it without blocking the launcher thread. */
#define SANDBOX_BUBBLEWRAP_READY_MESSAGE_MAX (64 * 1024)

typedef struct _SandboxBubblewrapReadyPool SandboxBubblewrapReadyPool;
typedef struct _SandboxBubblewrapReady SandboxBubblewrapReady;

/**
 * SandboxBubblewrapTaken:
 * @launched: the running bwrap, its pipes and pidfd
 * @status_fd: the read end of its --json-status-fd pipe
 * @control_fd: our end of the stub's control socket, where the stub also
 *   reports the end of its sandbox: the guest's status, as an int, once
 *   no process of it is left (EOF without it: see the pidfd)
 * @handoff_fd: our end of the stub's handoff socket, or -1 (not under an
 *   allow-list): the proxy's listener waits there, handed over as the
 *   sandbox started
 *
 * A ready sandbox handed over to the command that will run in it.
 */
typedef struct
{
  SandboxBubblewrapLaunched launched;
  int status_fd;
  int control_fd;
  int handoff_fd;
} SandboxBubblewrapTaken;

#define SANDBOX_BUBBLEWRAP_TAKEN_INIT { SANDBOX_BUBBLEWRAP_LAUNCHED_INIT, -1, -1, -1 }

SandboxBubblewrapReadyPool *sandbox_bubblewrap_ready_pool_new   (guint max_ready,
                                                                 guint idle_timeout_ms);
SandboxBubblewrapReadyPool *sandbox_bubblewrap_ready_pool_ref   (SandboxBubblewrapReadyPool *pool);
void                        sandbox_bubblewrap_ready_pool_unref (SandboxBubblewrapReadyPool *pool);
guint                       sandbox_bubblewrap_ready_pool_get_n_ready (SandboxBubblewrapReadyPool *pool);

SandboxBubblewrapReady *sandbox_bubblewrap_ready_start   (SandboxBubblewrapReadyPool       *pool,
                                                          const SandboxBubblewrapArgsInput *input,
                                                          guint64                           revision);
gboolean                sandbox_bubblewrap_ready_take    (SandboxBubblewrapReady           *self,
                                                          guint64                           revision,
                                                          SandboxBubblewrapTaken           *taken);
void                    sandbox_bubblewrap_ready_discard (SandboxBubblewrapReady           *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxBubblewrapReadyPool, sandbox_bubblewrap_ready_pool_unref)

G_END_DECLS
