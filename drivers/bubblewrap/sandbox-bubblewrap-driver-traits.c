/* sandbox-bubblewrap-driver-traits.c — what a session's coding binding reports of its driver
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-bubblewrap-driver-fields-private.h"

/* Read-only after construction: any thread. */

/**
 * sandbox_bubblewrap_driver_get_syscalls_filtered:
 * @self: a driver
 *
 * For the coding binding's `syscalls-filtered` restriction.
 *
 * Returns: whether every command of the session runs under the default
 *   seccomp filter
 */
gboolean
sandbox_bubblewrap_driver_get_syscalls_filtered (SandboxBubblewrapDriver *self)
{
  return self->seccomp_program != NULL;
}

/**
 * sandbox_bubblewrap_driver_get_resources_bounded:
 * @self: a driver
 *
 * For the coding binding's `resources-bounded` restriction.
 *
 * Returns: whether the memory and the number of processes of every
 *   command's whole tree are bounded by a cgroup (rlimits alone bound
 *   neither a fork bomb nor a tree of memory hogs)
 */
gboolean
sandbox_bubblewrap_driver_get_resources_bounded (SandboxBubblewrapDriver *self)
{
  return self->cgroup_root != NULL && self->limits.memory_limit > 0 &&
         self->limits.max_processes > 0;
}

/**
 * sandbox_bubblewrap_driver_get_host_loopback:
 * @self: a driver
 *
 * For the coding binding's `host-ipc-isolated` restriction.
 *
 * Returns: whether the session's allow-all guests reach the host's
 *   loopback (the backend's host-loopback)
 */
gboolean
sandbox_bubblewrap_driver_get_host_loopback (SandboxBubblewrapDriver *self)
{
  return self->host_loopback;
}

/**
 * sandbox_bubblewrap_driver_get_layered:
 * @self: a driver
 *
 * For the coding binding's workspace layering.
 *
 * Returns: whether the session's workspace is its keeper's overlay (set
 *   at construction, kept after stop), rather than a copy
 */
gboolean
sandbox_bubblewrap_driver_get_layered (SandboxBubblewrapDriver *self)
{
  return self->keeper != NULL;
}

/**
 * sandbox_bubblewrap_driver_get_runtime_key:
 * @self: a driver
 *
 * For the coding binding's probe.
 *
 * Returns: (nullable): the key of the runtime the session's commands run
 *   on, or %NULL for the host's /usr
 */
const char *
sandbox_bubblewrap_driver_get_runtime_key (SandboxBubblewrapDriver *self)
{
  return self->runtime_key;
}
