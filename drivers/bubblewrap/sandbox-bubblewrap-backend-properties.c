/* sandbox-bubblewrap-backend-properties.c — the bubblewrap backend's properties
 *
 * The GObject properties of SandboxBubblewrapBackend: their table, their
 * documentation and their accessors. What they mean at init() is the
 * backend's (sandbox-bubblewrap-backend.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-bubblewrap-backend-fields-private.h"
#include "sandbox-bubblewrap-guest-ids-private.h"
#include "sandbox-bubblewrap-layering-private.h"
#include "sandbox-bubblewrap-ready-private.h"

enum {
  PROP_0,
  PROP_EXECUTABLE,
  PROP_SECCOMP,
  PROP_DURABLE,
  PROP_TMP_SIZE,
  PROP_MAX_FILE_SIZE,
  PROP_MAX_OPEN_FILES,
  PROP_MAX_ADDRESS_SPACE,
  PROP_MEMORY_LIMIT,
  PROP_MAX_PROCESSES,
  PROP_CPU_PERCENT,
  PROP_GUEST_UID,
  PROP_GUEST_GID,
  PROP_GUEST_ID_RANGE,
  PROP_CURATED_ETC,
  PROP_GIT_USER_NAME,
  PROP_GIT_USER_EMAIL,
  PROP_EXTRA_CA_CERTIFICATES,
  PROP_UPSTREAM_CA_FILE,
  PROP_LAYERING,
  PROP_WORKSPACE_LAYERING,
  PROP_LANDLOCK_ABI,
  PROP_HOST_LOOPBACK,
  PROP_WORKSPACE_QUOTA_BYTES,
  PROP_MAX_READY_SANDBOXES,
  PROP_READY_IDLE_TIMEOUT_MS,
  PROP_IDLE_HELPERS_TIMEOUT_MS,
};

/**
 * sandbox_bubblewrap_kernel_landlock_abi:
 *
 * What landlock_create_ruleset() says of the kernel's Landlock ABI: the
 * stub scopes sandboxes from %SANDBOX_BUBBLEWRAP_LANDLOCK_SCOPING_ABI on
 * (stub/sandbox-stub.c).
 *
 * Returns: the ABI, 0 without Landlock
 */
guint
sandbox_bubblewrap_kernel_landlock_abi (void)
{
  long abi = syscall (__NR_landlock_create_ruleset, NULL, 0, 1U /* …_VERSION */);

  return abi > 0 ? (guint) abi : 0;
}

/* The guint64 limits, alike but for their name, default and field (their
 * docs are in sandbox_bubblewrap_backend_install_properties()). */
static const struct
{
  guint       prop_id;
  const char *name;
  guint64     default_value;
  gsize       offset;   /* in SandboxBubblewrapLimits */
} limit_properties[] = {
  { PROP_TMP_SIZE, "tmp-size", SANDBOX_BUBBLEWRAP_DEFAULT_TMP_SIZE,
    G_STRUCT_OFFSET (SandboxBubblewrapLimits, tmp_size) },
  { PROP_MAX_FILE_SIZE, "max-file-size", 0,
    G_STRUCT_OFFSET (SandboxBubblewrapLimits, max_file_size) },
  { PROP_MAX_OPEN_FILES, "max-open-files", 0,
    G_STRUCT_OFFSET (SandboxBubblewrapLimits, max_open_files) },
  { PROP_MAX_ADDRESS_SPACE, "max-address-space", 0,
    G_STRUCT_OFFSET (SandboxBubblewrapLimits, max_address_space) },
  { PROP_MEMORY_LIMIT, "memory-limit", 0,
    G_STRUCT_OFFSET (SandboxBubblewrapLimits, memory_limit) },
  { PROP_MAX_PROCESSES, "max-processes", 0,
    G_STRUCT_OFFSET (SandboxBubblewrapLimits, max_processes) },
};

/* The field of the limit @prop_id is, or NULL for another property. */
static guint64 *
limit_field (SandboxBubblewrapBackend *self,
             guint                     prop_id)
{
  for (guint i = 0; i < G_N_ELEMENTS (limit_properties); i++)
    if (limit_properties[i].prop_id == prop_id)
      return G_STRUCT_MEMBER_P (&self->limits, limit_properties[i].offset);
  return NULL;
}

static void
sandbox_bubblewrap_backend_get_property (GObject    *object,
                                         guint       prop_id,
                                         GValue     *value,
                                         GParamSpec *pspec)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (object);
  guint64 *limit = limit_field (self, prop_id);

  if (limit != NULL)
    {
      g_value_set_uint64 (value, *limit);
      return;
    }
  switch (prop_id)
    {
    case PROP_LAYERING:
      g_value_set_string (value, self->layering);
      break;
    case PROP_WORKSPACE_LAYERING:
      g_value_set_string (value, self->layered ? SANDBOX_BUBBLEWRAP_LAYERING_OVERLAY
                                               : SANDBOX_BUBBLEWRAP_LAYERING_COPY);
      break;
    case PROP_LANDLOCK_ABI:
      g_value_set_uint (value, sandbox_bubblewrap_kernel_landlock_abi ());
      break;
    case PROP_WORKSPACE_QUOTA_BYTES:
      g_value_set_uint64 (value, self->workspace_quota_bytes);
      break;
    case PROP_HOST_LOOPBACK:
      g_value_set_boolean (value, self->hardening.host_loopback);
      break;
    case PROP_EXECUTABLE:
      g_value_set_string (value, self->executable);
      break;
    case PROP_SECCOMP:
      g_value_set_boolean (value, self->seccomp);
      break;
    case PROP_CURATED_ETC:
      g_value_set_boolean (value, self->hardening.etc.curated);
      break;
    case PROP_GIT_USER_NAME:
      g_value_set_string (value, self->hardening.etc.git_name);
      break;
    case PROP_GIT_USER_EMAIL:
      g_value_set_string (value, self->hardening.etc.git_email);
      break;
    case PROP_MAX_READY_SANDBOXES:
      g_value_set_uint (value, self->max_ready_sandboxes);
      break;
    case PROP_READY_IDLE_TIMEOUT_MS:
      g_value_set_uint (value, self->ready_idle_timeout_ms);
      break;
    case PROP_IDLE_HELPERS_TIMEOUT_MS:
      g_value_set_uint (value, self->hardening.idle_helpers_timeout_ms);
      break;
    case PROP_EXTRA_CA_CERTIFICATES:
      g_value_set_string (value, self->hardening.etc.extra_ca_path);
      break;
    case PROP_UPSTREAM_CA_FILE:
      g_value_set_string (value, self->hardening.upstream_ca_file);
      break;
    case PROP_DURABLE:
      g_value_set_boolean (value, self->durable);
      break;
    case PROP_CPU_PERCENT:
      g_value_set_uint (value, self->limits.cpu_percent);
      break;
    case PROP_GUEST_UID:
      /* The ids in force once init() has run; -1 when each session has its
       * own. */
      g_value_set_int64 (value, self->store == NULL ? self->guest_uid
                                : self->per_session_guests ? -1
                                : (gint64) self->hardening.guest.uid);
      break;
    case PROP_GUEST_GID:
      g_value_set_int64 (value, self->store == NULL ? self->guest_gid
                                : self->per_session_guests ? -1
                                : (gint64) self->hardening.guest.gid);
      break;
    case PROP_GUEST_ID_RANGE:
      g_value_set_string (value, self->guest_id_range != NULL ? self->guest_id_range
                                 : self->per_session_guests
                                 ? SANDBOX_BUBBLEWRAP_GUEST_ID_RANGE_DEFAULT : NULL);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_bubblewrap_backend_set_property (GObject      *object,
                                         guint         prop_id,
                                         const GValue *value,
                                         GParamSpec   *pspec)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (object);
  guint64 *limit = limit_field (self, prop_id);

  if (limit != NULL)
    {
      *limit = g_value_get_uint64 (value);
      return;
    }
  switch (prop_id)
    {
    case PROP_WORKSPACE_QUOTA_BYTES:
      self->workspace_quota_bytes = g_value_get_uint64 (value);
      break;
    case PROP_HOST_LOOPBACK:
      self->hardening.host_loopback = g_value_get_boolean (value);
      break;
    case PROP_LAYERING:
      g_free (self->layering);
      self->layering = g_value_dup_string (value);
      break;
    case PROP_EXECUTABLE:
      g_free (self->executable);
      self->executable = g_value_dup_string (value);
      if (self->executable == NULL)
        self->executable = g_strdup (SANDBOX_BUBBLEWRAP_DEFAULT_EXECUTABLE);
      break;
    case PROP_SECCOMP:
      self->seccomp = g_value_get_boolean (value);
      break;
    case PROP_DURABLE:
      self->durable = g_value_get_boolean (value);
      break;
    case PROP_CURATED_ETC:
      self->hardening.etc.curated = g_value_get_boolean (value);
      break;
    case PROP_GIT_USER_NAME:
      g_free (self->hardening.etc.git_name);
      self->hardening.etc.git_name = g_value_dup_string (value);
      break;
    case PROP_GIT_USER_EMAIL:
      g_free (self->hardening.etc.git_email);
      self->hardening.etc.git_email = g_value_dup_string (value);
      break;
    case PROP_MAX_READY_SANDBOXES:
      self->max_ready_sandboxes = g_value_get_uint (value);
      break;
    case PROP_READY_IDLE_TIMEOUT_MS:
      self->ready_idle_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_IDLE_HELPERS_TIMEOUT_MS:
      self->hardening.idle_helpers_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_EXTRA_CA_CERTIFICATES:
      g_free (self->hardening.etc.extra_ca_path);
      self->hardening.etc.extra_ca_path = g_value_dup_string (value);
      break;
    case PROP_UPSTREAM_CA_FILE:
      g_free (self->hardening.upstream_ca_file);
      self->hardening.upstream_ca_file = g_value_dup_string (value);
      break;
    case PROP_CPU_PERCENT:
      self->limits.cpu_percent = g_value_get_uint (value);
      break;
    case PROP_GUEST_UID:
      self->guest_uid = g_value_get_int64 (value);
      break;
    case PROP_GUEST_GID:
      self->guest_gid = g_value_get_int64 (value);
      break;
    case PROP_GUEST_ID_RANGE:
      g_free (self->guest_id_range);
      self->guest_id_range = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* Installs SandboxBubblewrapBackend's properties and their accessors on
 * @object_class, from sandbox_bubblewrap_backend_class_init(). */
void
sandbox_bubblewrap_backend_install_properties (GObjectClass *object_class)
{
  object_class->get_property = sandbox_bubblewrap_backend_get_property;
  object_class->set_property = sandbox_bubblewrap_backend_set_property;

  /**
   * SandboxBubblewrapBackend:executable:
   *
   * The bwrap executable. A bogus one makes create() fail with
   * %SANDBOX_ERROR_UNAVAILABLE; nothing ever runs outside bwrap.
   */
  g_object_class_install_property (object_class, PROP_EXECUTABLE,
    g_param_spec_string ("executable", NULL, NULL, SANDBOX_BUBBLEWRAP_DEFAULT_EXECUTABLE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:seccomp:
   *
   * Whether commands run under the default seccomp filter (on by
   * default; see docs/security.md for what it refuses and why). Turn it
   * off only for workloads that need a refused call, such as a debugger
   * (ptrace).
   */
  g_object_class_install_property (object_class, PROP_SECCOMP,
    g_param_spec_boolean ("seccomp", NULL, NULL, TRUE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:durable:
   *
   * Whether the store syncs files and directories to disk before every
   * rename and state write (off by default), so a power loss cannot leave
   * a half-written template, session or state.json behind, and whether
   * [method@Sandbox.Session.write_bytes] syncs the new file before naming it and
   * its directory after. Costs an fsync per file written into a template
   * or a new session, and two per workspace write.
   */
  g_object_class_install_property (object_class, PROP_DURABLE,
    g_param_spec_boolean ("durable", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:tmp-size:
   *
   * What one command may hold in memory-backed files, in bytes: its
   * `/tmp` and `/dev/shm` tmpfs together. `/dev/shm` gets a quarter, at
   * most 64 MiB, and `/tmp` the rest; a write past either fails with
   * ENOSPC. Everything else a guest sees outside `/workspace` is
   * read-only (the root, `/dev`, `/etc`, `/run`), so nothing else can hold
   * its files in memory. 320 MiB by default (a 256 MiB `/tmp` and a
   * 64 MiB `/dev/shm`): the same on every host, so a command that fits on
   * one fits on all, and far below the RAM of any host while ample for
   * compilers' and package managers' temporary files (larger scratch data
   * belongs in `/workspace`, or raise this). Each command has its own, so
   * a backend's commands may hold up to tmp-size ×
   * #SandboxBubblewrapBackend:max-concurrent-commands (a ready sandbox's
   * are empty until its command comes).
   *
   * 0 is the explicit choice of the kernel's default, half of the host's
   * RAM for each of the two per command: effectively unbounded. Any other
   * value below two pages is refused at construction.
   */

  /* The limits below and tmp-size are installed from limit_properties. */

  /**
   * SandboxBubblewrapBackend:max-file-size:
   *
   * RLIMIT_FSIZE of every guest process: the largest file it may write, in bytes (0: unlimited).
   */

  /**
   * SandboxBubblewrapBackend:max-open-files:
   *
   * RLIMIT_NOFILE of every guest process (0: inherited).
   */

  /**
   * SandboxBubblewrapBackend:max-address-space:
   *
   * RLIMIT_AS of every guest process, in bytes (0: unlimited).
   */

  /**
   * SandboxBubblewrapBackend:memory-limit:
   *
   * The memory of each command's whole process tree, in bytes (0: unlimited). Needs a delegated cgroup (v2, or v1 as root): without one, construction fails with %SANDBOX_ERROR_UNAVAILABLE. Over it the kernel kills and the command fails with %SANDBOX_ERROR_LIMIT.
   */

  /**
   * SandboxBubblewrapBackend:max-processes:
   *
   * The number of processes (tasks, threads included) of each command's whole tree (0: unlimited; at least 4). Needs a delegated cgroup: without one, construction fails with %SANDBOX_ERROR_UNAVAILABLE. A command that hits it fails with %SANDBOX_ERROR_LIMIT.
   */
  for (guint i = 0; i < G_N_ELEMENTS (limit_properties); i++)
    g_object_class_install_property (object_class, limit_properties[i].prop_id,
      g_param_spec_uint64 (limit_properties[i].name, NULL, NULL, 0, G_MAXUINT64,
                           limit_properties[i].default_value,
                           G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:cpu-percent:
   *
   * The CPU time of each command's whole tree, in percent of one CPU
   * (1 … 100 × the CPUs this process may use; 0: unlimited). Needs a delegated cgroup: without
   * one, construction fails with %SANDBOX_ERROR_UNAVAILABLE.
   */
  g_object_class_install_property (object_class, PROP_CPU_PERCENT,
    g_param_spec_uint ("cpu-percent", NULL, NULL, 0, G_MAXUINT / 1000, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:guest-uid:
   *
   * One host uid all guest commands run as, never 0. -1 (the default) is
   * automatic: when the host runs as root, each session's guest has a uid
   * and gid of its own (#SandboxBubblewrapBackend:guest-id-range);
   * otherwise the host's own uid, the only one it can start bwrap as
   * (naming another fails with %SANDBOX_ERROR_UNAVAILABLE, as do ids a
   * root of a user namespace, such as a container's, has not mapped).
   * Setting it (or guest-gid) on a root host makes guests of all sessions
   * share these ids and the kernel's per-user limits that go with them
   * (processes, inotify instances, …), and lets one session's guest signal
   * another's processes it can name: the unset default is safer. Workspaces and what the
   * host writes into them belong to the guest's uid; a workspace of another
   * owner (an older version's, or before a change of this property) is
   * given to it when its session is resumed. Reads back the uid in force
   * once the backend is initialized: -1 when each session has its own.
   */
  g_object_class_install_property (object_class, PROP_GUEST_UID,
    g_param_spec_int64 ("guest-uid", NULL, NULL, -1, GUEST_ID_MAX, -1,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:guest-gid:
   *
   * The host gid guest commands run as, never 0; -1 (the default) is
   * automatic as for #SandboxBubblewrapBackend:guest-uid (the overflow gid,
   * `/proc/sys/kernel/overflowgid`, when the host runs as root). Guests
   * have no supplementary groups.
   */
  g_object_class_install_property (object_class, PROP_GUEST_GID,
    g_param_spec_int64 ("guest-gid", NULL, NULL, -1, GUEST_ID_MAX, -1,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:guest-id-range:
   *
   * Where a root host takes each session's guest ids from (unless
   * #SandboxBubblewrapBackend:guest-uid or guest-gid name one pair for
   * all): `START:COUNT` (uid and gid alike), or a name whose first ranges
   * in `/etc/subuid` and `/etc/subgid` are used. %NULL (the default) is
   * `1879048192:65536`, a block systemd leaves unused. Each session keeps
   * its ids from create to delete (across stop and resume), recorded in
   * its state directory; an id is given to another session only once its
   * session is deleted. Ids must not overlap any user's or another state
   * directory's: reserve the range for this host's sessions (e.g. an
   * `/etc/subuid` and `/etc/subgid` line `libsandbox:1879048192:65536`
   * and `guest-id-range` `libsandbox`). Must not hold 0 or 65534
   * (%SANDBOX_ERROR_INVALID); ids not mapped in this process's user
   * namespace fail with %SANDBOX_ERROR_UNAVAILABLE, except that an unmapped
   * default falls back to one shared pair, the overflow ids, said in the
   * log. Setting it on a host that does not run as root fails with
   * %SANDBOX_ERROR_UNAVAILABLE. Reads back the range in force, %NULL when
   * sessions do not get ids of their own.
   */
  g_object_class_install_property (object_class, PROP_GUEST_ID_RANGE,
    g_param_spec_string ("guest-id-range", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:curated-etc:
   *
   * Whether guests get a curated read-only `/etc` (the default): the host's
   * `/etc/alternatives`, `/etc/ld.so.cache`, `/etc/ssl/certs` and
   * `/etc/ssl/openssl.cnf` where they exist, `/etc/localtime` (the host's
   * zone, or UTC), and synthesized `passwd` and `group` naming the guest's
   * uid and gid (user `sandbox`, home `/workspace`), `nsswitch.conf`,
   * `hosts`, `hostname` (`sandbox`, also the guest's host name) and
   * `gitconfig` (#SandboxBubblewrapBackend:git-user-name and
   * #SandboxBubblewrapBackend:git-user-email). Never the host's `/etc`
   * wholesale. %FALSE gives the reference's exact argument list: no `/etc`
   * at all (but `resolv.conf` under allow-all), the host's host name.
   */
  g_object_class_install_property (object_class, PROP_CURATED_ETC,
    g_param_spec_boolean ("curated-etc", NULL, NULL, TRUE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:git-user-name:
   *
   * The git `user.name` of guests' `/etc/gitconfig`, so that `git commit`
   * works without any environment; a repository's or `GIT_AUTHOR_NAME`
   * still wins. Printable text without quotes or backslashes.
   */
  g_object_class_install_property (object_class, PROP_GIT_USER_NAME,
    g_param_spec_string ("git-user-name", NULL, NULL, "Sandbox",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:git-user-email:
   *
   * The git `user.email` of guests' `/etc/gitconfig`, as
   * #SandboxBubblewrapBackend:git-user-name.
   */
  g_object_class_install_property (object_class, PROP_GIT_USER_EMAIL,
    g_param_spec_string ("git-user-email", NULL, NULL, "sandbox@sandbox.invalid",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:upstream-ca-file:
   *
   * An absolute path to a PEM file of the CA certificates the sessions'
   * gateways trust for `https` upstreams, instead of the system's store
   * (tests use it for their own CA); %NULL, the default, uses the system's.
   * Guests never see it.
   */
  g_object_class_install_property (object_class, PROP_UPSTREAM_CA_FILE,
    g_param_spec_string ("upstream-ca-file", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:extra-ca-certificates:
   *
   * An absolute path to a PEM file of CA certificates guests trust besides
   * the host's (a company's TLS-inspecting proxy, a test CA): guests see
   * `/etc/ssl/certs/ca-certificates.crt` as the host's bundle followed by
   * these certificates, the file curl, git, Python and OpenSSL read. Read
   * once, when the backend is made; at most 4 MiB, every block a
   * certificate. Needs #SandboxBubblewrapBackend:curated-etc. %NULL (the
   * default): the host's bundle only.
   */
  g_object_class_install_property (object_class, PROP_EXTRA_CA_CERTIFICATES,
    g_param_spec_string ("extra-ca-certificates", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:layering:
   *
   * How new sessions get their workspace from the template. `auto` (the
   * default): layered — one overlay per live session, the template's data
   * below, the session's own directory above, so creating a session copies
   * nothing — where the backend's probe at construction finds overlayfs
   * usable in a user namespace on the state directory's filesystem, copied
   * elsewhere (the reason is logged); `copy`: always copied. Sessions keep
   * the layout they were created with. What was chosen is
   * #SandboxBubblewrapBackend:workspace-layering.
   */
  g_object_class_install_property (object_class, PROP_LAYERING,
    g_param_spec_string ("layering", NULL, NULL, SANDBOX_BUBBLEWRAP_DEFAULT_LAYERING,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:workspace-layering:
   *
   * How this backend's new sessions get their workspace: `overlay` or
   * `copy` (see #SandboxBubblewrapBackend:layering).
   */
  g_object_class_install_property (object_class, PROP_WORKSPACE_LAYERING,
    g_param_spec_string ("workspace-layering", NULL, NULL, SANDBOX_BUBBLEWRAP_LAYERING_COPY,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:workspace-quota-bytes:
   *
   * What each session may hold on disk, in bytes: its workspace (or the
   * overlay's upper layer, a layered session's own files) and its state
   * files. A guest writing past it gets EDQUOT ("Disk quota exceeded"), and
   * so does [method@Sandbox.Session.write_bytes]; other sessions and the
   * host's other files on the filesystem are not touched. 0 (the default):
   * no limit but the filesystem's.
   *
   * Each new session's workspace is a btrfs subvolume of its own with a
   * qgroup limit, so the state directory must be on btrfs with quotas
   * enabled (`btrfs quota enable`), and the process needs CAP_SYS_ADMIN (a
   * root host), with the seccomp filter on (#SandboxBubblewrapBackend:seccomp:
   * it refuses a guest subvolumes of its own, which would be outside the
   * quota); anywhere else construction fails with
   * %SANDBOX_ERROR_UNAVAILABLE saying why. The limit stays with the
   * session across stop and resume; the session's lease and state are
   * outside it, so a full session can still be resumed and deleted.
   * Sessions created before it was set have none. New sessions are copied,
   * not layered (#SandboxBubblewrapBackend:workspace-layering says
   * `copy`): an overlay needs a work directory next to its upper layer for
   * every sandbox, which a full quota would refuse.
   */
  g_object_class_install_property (object_class, PROP_WORKSPACE_QUOTA_BYTES,
    g_param_spec_uint64 ("workspace-quota-bytes", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:landlock-abi:
   *
   * The Landlock ABI of the host's kernel, 0 without Landlock. From 6
   * (Linux 6.12) every sandbox's first process scopes itself and the
   * guest: no abstract UNIX socket made outside the sandbox can be
   * connected to, and no process outside it signalled. (Every guest has a
   * network namespace of its own, which holds its abstract sockets apart
   * already: this is the second wall.)
   */
  /**
   * SandboxBubblewrapBackend:host-loopback:
   *
   * Whether guests under an allow-all policy reach the host's loopback, at
   * 10.0.2.2. An allow-all guest has a network namespace of its own,
   * joined to the outside by slirp4netns (user-mode networking: Debian's
   * package `slirp4netns`, and `/dev/net/tun` usable by the host's user),
   * so it reaches whatever a host program could reach but the services
   * bound to the host's loopback and the host's abstract UNIX sockets —
   * unless this is %TRUE, which opens the former (a database or
   * development server of the host's, say). %FALSE by default. Without
   * slirp4netns an allow-all command fails with %SANDBOX_ERROR_UNAVAILABLE.
   */
  g_object_class_install_property (object_class, PROP_HOST_LOOPBACK,
    g_param_spec_boolean ("host-loopback", NULL, NULL, FALSE,
                          G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_property (object_class, PROP_LANDLOCK_ABI,
    g_param_spec_uint ("landlock-abi", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:max-ready-sandboxes:
   *
   * How many ready sandboxes the backend's sessions may hold at once: a
   * session that has run a command starts the sandbox of its next one
   * ahead of time (a fresh bwrap with all its namespaces, mounts, `/tmp`
   * and filter, waiting for the command), so that command skips bwrap's
   * setup. Isolation per command is unchanged: one sandbox per command,
   * never reused. 8 by default; 0 turns them off. Sessions with cgroup
   * limits (#SandboxBubblewrapBackend:memory-limit and the like) keep
   * none. Each costs two idle processes (bwrap and the stub) and their
   * mount table until it is taken or times out
   * (#SandboxBubblewrapBackend:ready-idle-timeout-ms).
   */
  g_object_class_install_property (object_class, PROP_MAX_READY_SANDBOXES,
    g_param_spec_uint ("max-ready-sandboxes", NULL, NULL, 0, 1024,
                       SANDBOX_BUBBLEWRAP_DEFAULT_MAX_READY,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:ready-idle-timeout-ms:
   *
   * How long a ready sandbox waits for its command before it is discarded
   * (killed, its slot freed), in milliseconds: 30000 by default, so that
   * an agent's next shell command after a pause still finds one. A
   * network-policy change, stop and delete discard it at once.
   */
  g_object_class_install_property (object_class, PROP_READY_IDLE_TIMEOUT_MS,
    g_param_spec_uint ("ready-idle-timeout-ms", NULL, NULL, 1, G_MAXINT,
                       SANDBOX_BUBBLEWRAP_DEFAULT_READY_IDLE_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBubblewrapBackend:idle-helpers-timeout-ms:
   *
   * How long a live session with nothing running (no command, no
   * background command) keeps its helper processes, in milliseconds: a
   * layered session's overlay keeper, the network keeper its commands
   * share, and its ready sandbox; an allow-list's gateway is parked
   * (sandbox_gateway_park()). Then they end, and the session holds no
   * process, no mount and no socket until its next command or file call,
   * which starts them again over the same layers (a few milliseconds,
   * once).
   * 60000 by default; 0 keeps them until stop.
   */
  g_object_class_install_property (object_class, PROP_IDLE_HELPERS_TIMEOUT_MS,
    g_param_spec_uint ("idle-helpers-timeout-ms", NULL, NULL, 0, G_MAXINT,
                       SANDBOX_BUBBLEWRAP_DEFAULT_IDLE_HELPERS_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));
}

