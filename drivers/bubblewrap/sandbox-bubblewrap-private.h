/* sandbox-bubblewrap-private.h — shared internals of the bubblewrap driver
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_BUBBLEWRAP_COMPILATION
# error "sandbox-bubblewrap-private.h is private to the bubblewrap driver."
#endif

#include <errno.h>
#include <sys/types.h>
#include <unistd.h>

#include <sandbox-backend-driver.h>

G_BEGIN_DECLS

/**
 * SandboxBubblewrapFd:
 *
 * A file descriptor that g_auto() closes: GLib 2.74 has no g_autofd.
 * The value -1 means "no descriptor".
 */
typedef int SandboxBubblewrapFd;

static inline void
sandbox_bubblewrap_fd_close (SandboxBubblewrapFd fd)
{
  if (fd >= 0)
    {
      int saved_errno = errno;

      close (fd);
      errno = saved_errno;
    }
}

G_DEFINE_AUTO_CLEANUP_FREE_FUNC (SandboxBubblewrapFd, sandbox_bubblewrap_fd_close, -1)

/**
 * sandbox_bubblewrap_clear_fd:
 * @fd_ptr: a pointer to a descriptor
 *
 * Closes *@fd_ptr if it is open and sets it to -1.
 */
static inline void
sandbox_bubblewrap_clear_fd (int *fd_ptr)
{
  int fd = *fd_ptr;

  *fd_ptr = -1;
  sandbox_bubblewrap_fd_close (fd);
}

/**
 * sandbox_bubblewrap_write_fully:
 * @fd: a blocking descriptor
 * @data: what to write
 * @size: its size in bytes
 *
 * Writes all of @data, through as many write()s as it takes, retrying the
 * ones a signal interrupts. (One read() or waitpid() retried so is glibc's
 * `TEMP_FAILURE_RETRY`.)
 *
 * Returns: %TRUE, or %FALSE with errno set (`EIO` when write() took
 *   nothing); how much was written then is unknown
 */
static inline gboolean
sandbox_bubblewrap_write_fully (int         fd,
                                const void *data,
                                gsize       size)
{
  const guint8 *next = data;

  while (size > 0)
    {
      gssize n = TEMP_FAILURE_RETRY (write (fd, next, size));

      if (n < 0)
        return FALSE;
      if (n == 0)
        {
          errno = EIO;
          return FALSE;
        }
      next += n;
      size -= n;
    }
  return TRUE;
}

/**
 * SANDBOX_BUBBLEWRAP_DEFAULT_EXECUTABLE:
 *
 * Where bwrap is looked for unless the backend's `executable` says otherwise.
 */
#define SANDBOX_BUBBLEWRAP_DEFAULT_EXECUTABLE "/usr/bin/bwrap"

/**
 * SANDBOX_BUBBLEWRAP_DEFAULT_NAME:
 *
 * The default backend name, part of every template key.
 */
#define SANDBOX_BUBBLEWRAP_DEFAULT_NAME "bubblewrap"

/* The default size of the guest's `/tmp`, in bytes (see the tmp-size
 * property for why). */
/* 256 MiB of /tmp and 64 MiB of /dev/shm (see
 * sandbox_bubblewrap_limits_split_tmp_size()). */
#define SANDBOX_BUBBLEWRAP_DEFAULT_TMP_SIZE (G_GUINT64_CONSTANT (320) * 1024 * 1024)

/**
 * SandboxBubblewrapLimits:
 * @tmp_size: what one command may hold in memory-backed files, in bytes:
 *   its `/tmp` and `/dev/shm` tmpfs together (0: each the kernel's
 *   default, half of the host's RAM)
 * @max_file_size: RLIMIT_FSIZE
 * @max_open_files: RLIMIT_NOFILE
 * @max_address_space: RLIMIT_AS, per process
 * @memory_limit: the memory of a command's whole tree (cgroup)
 * @max_processes: the processes of a command's whole tree (cgroup)
 * @cpu_percent: the CPU time of a command's whole tree, in percent of one
 *   CPU (cgroup)
 *
 * A command's resource limits; 0 everywhere means "not limited". When any
 * rlimit is set, core dumps are off too (RLIMIT_CORE 0).
 */
typedef struct
{
  guint64 tmp_size;
  guint64 max_file_size;
  guint64 max_open_files;
  guint64 max_address_space;
  guint64 memory_limit;
  guint64 max_processes;
  guint cpu_percent;
} SandboxBubblewrapLimits;

/**
 * SandboxBubblewrapCgroupRoot:
 *
 * Where commands' cgroups are created: a delegated cgroup v2 directory, or
 * as root the process's own v1 cgroups.
 */
typedef struct _SandboxBubblewrapCgroupRoot SandboxBubblewrapCgroupRoot;

/**
 * SandboxBubblewrapGuest:
 * @uid: the host uid every guest process runs as
 * @gid: the host gid every guest process runs as
 * @switched: whether these are not the host's own ids (the host runs as
 *   root): bwrap is then started as @uid:@gid, and what the host creates in
 *   a workspace is given to them
 *
 * Who guests are on the host (SandboxBubblewrapBackend:guest-uid).
 */
typedef struct
{
  uid_t uid;
  gid_t gid;
  gboolean switched;
} SandboxBubblewrapGuest;

/**
 * SandboxBubblewrapEtc:
 * @curated: whether guests get the curated /etc (see
 *   sandbox-bubblewrap-etc.c); %FALSE: the reference's argument list, no /etc
 * @git_name: the default git user.name in /etc/gitconfig
 * @git_email: the default git user.email in /etc/gitconfig
 * @extra_ca_path: (nullable): the PEM file of
 *   SandboxBubblewrapBackend:extra-ca-certificates
 * @ca_bundle: (nullable): the guests' CA bundle — the host's and the extra
 *   certificates — when @extra_ca_path is set; built once per backend
 *
 * The guest's /etc (SandboxBubblewrapBackend:curated-etc).
 */
typedef struct
{
  gboolean curated;
  char *git_name;
  char *git_email;
  char *extra_ca_path;
  GBytes *ca_bundle;
} SandboxBubblewrapEtc;

/**
 * SandboxBubblewrapHardening:
 * @seccomp_program: (nullable): the seccomp filter every command runs
 *   under, or %NULL when the backend's `seccomp` is off
 * @limits: every command's resource limits
 * @cgroup_root: (nullable): where the cgroup limits of @limits are put in
 *   force, or %NULL where the host delegates no cgroup
 * @durable: whether host-side workspace writes are synced to disk before
 *   they are named (the backend's `durable`)
 * @guest: the host identity of guests
 * @etc: the guests' /etc
 * @ready_pool: (nullable): the bound on the backend's ready sandboxes, or
 *   %NULL when it keeps none (max-ready-sandboxes 0)
 * @host_loopback: whether allow-all guests reach the host's loopback (the
 *   backend's `host-loopback`)
 * @gateway_ca_directory: where the CA the gateways end tunnels' TLS with
 *   is kept (`<state-directory>/gateway-ca`)
 * @upstream_ca_file: (nullable): the CA certificates the gateways trust for
 *   upstreams (the backend's `upstream-ca-file`); %NULL: the system's
 * @idle_helpers_timeout_ms: how long an idle session keeps its helper
 *   processes (the backend's `idle-helpers-timeout-ms`); 0: until stop
 * @runtime: (nullable): the host path of the tree one session's commands
 *   see as /usr, /bin, /lib*, /sbin and /etc (its template's runtime, see
 *   sandbox-bubblewrap-store-runtimes.c); %NULL: the host's. Set per
 *   session, never in the backend's own
 * @runtime_key: (nullable): with @runtime, its key
 * @runtime_lowers: (nullable): with @runtime writable per session, the
 *   lower layers of the session's overlay of it, top first (see
 *   sandbox_bubblewrap_store_runtime_of()); %NULL: @runtime read-only
 *
 * What a backend adds to the reference's isolation, for every command of
 * its sessions. Owned by the backend; drivers take their own references.
 */
typedef struct
{
  GBytes *seccomp_program;
  SandboxBubblewrapLimits limits;
  SandboxBubblewrapCgroupRoot *cgroup_root;
  gboolean durable;
  SandboxBubblewrapGuest guest;
  SandboxBubblewrapEtc etc;
  struct _SandboxBubblewrapReadyPool *ready_pool;
  gboolean host_loopback;
  char *gateway_ca_directory;
  char *upstream_ca_file;
  guint idle_helpers_timeout_ms;
  const char *runtime;
  const char *runtime_key;
  const char * const *runtime_lowers;
} SandboxBubblewrapHardening;

#define SANDBOX_BUBBLEWRAP_DEFAULT_IDLE_HELPERS_TIMEOUT_MS 60000

/* Dynamic type registration, called from g_io_module_load(). */
void sandbox_bubblewrap_backend_register (GTypeModule *module);
void sandbox_bubblewrap_driver_register  (GTypeModule *module);
void sandbox_bubblewrap_handle_register  (GTypeModule *module);
void sandbox_bubblewrap_process_register (GTypeModule *module);

G_END_DECLS
