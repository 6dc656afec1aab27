/* sandbox-bubblewrap-backend.c — the bubblewrap backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-bubblewrap-args-private.h"
#include "sandbox-bubblewrap-backend-private.h"
#include "sandbox-bubblewrap-driver-private.h"
#include "sandbox-bubblewrap-handle-private.h"
#include "sandbox-bubblewrap-layering-private.h"
#include "sandbox-bubblewrap-limits-private.h"
#include "sandbox-bubblewrap-quota-private.h"
#include "sandbox-bubblewrap-ready-private.h"
#include "sandbox-bubblewrap-seccomp-private.h"
#include "sandbox-bubblewrap-guest-ids-private.h"
#include "sandbox-bubblewrap-store-private.h"

/**
 * SandboxBubblewrapBackend:
 *
 * The reference backend: templates and sessions in a state directory,
 * commands in bubblewrap namespaces. Properties: `executable` (default
 * `/usr/bin/bwrap`), `name` (default `bubblewrap`), `state-directory`
 * (required; created 0700 and resolved), `max-concurrent-commands`, and
 * the hardening beyond the reference: `seccomp` (default on), `durable`
 * (default off), a bounded `/tmp` (`tmp-size`, 256 MiB by default), opt-in
 * resource limits (`max-file-size`,
 * `max-open-files`, `max-address-space`, and where a cgroup is delegated
 * `memory-limit`, `max-processes`, `cpu-percent`), the host identity of
 * guests (never root: `guest-id-range`, each session's own ids by default,
 * or `guest-uid`, `guest-gid` for all), the guests' curated
 * `/etc` (`curated-etc`, `git-user-name`, `git-user-email`), sandboxes
 * started ahead of a session's next command (`max-ready-sandboxes`,
 * `ready-idle-timeout-ms`), and
 * [method@Sandbox.Backend.recover_session] for leases left by a crashed owner.
 */

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
  PROP_LAYERING,
  PROP_WORKSPACE_LAYERING,
  PROP_LANDLOCK_ABI,
  PROP_HOST_LOOPBACK,
  PROP_WORKSPACE_QUOTA_BYTES,
  PROP_MAX_READY_SANDBOXES,
  PROP_READY_IDLE_TIMEOUT_MS,
};

static void sandbox_bubblewrap_backend_backend_iface_init  (SandboxBackendInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxBubblewrapBackend, sandbox_bubblewrap_backend,
                                SANDBOX_TYPE_BACKEND_BASE, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SANDBOX_TYPE_BACKEND,
                                                               sandbox_bubblewrap_backend_backend_iface_init))

/* What landlock_create_ruleset() says of the kernel's Landlock ABI: the
 * stub scopes sandboxes from 6 on (stub/sandbox-stub.c). */
static guint
landlock_abi (void)
{
  long abi = syscall (__NR_landlock_create_ruleset, NULL, 0, 1U /* …_VERSION */);

  return abi > 0 ? (guint) abi : 0;
}

/* The guint64 limits, alike but for their name, default and field (their
 * docs are in class_init()). */
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

/* The largest id a guest-uid or guest-gid may name: (uid_t) -1 means "no
 * change" to the kernel. */
#define GUEST_ID_MAX ((gint64) G_MAXUINT32 - 1)

/* The kernel's overflow id (what an id a user namespace does not map shows
 * as, "nobody" on most systems), from @path; 65534, its default, if the
 * file cannot be read. */
static guint32
read_overflow_id (const char *path)
{
  g_autofree char *contents = NULL;
  guint64 id = 0;

  if (g_file_get_contents (path, &contents, NULL, NULL))
    id = g_ascii_strtoull (contents, NULL, 10);
  return id > 0 && id <= GUEST_ID_MAX ? (guint32) id : 65534;
}

/* Whether @n_ids ids from @id are mapped in this process's user namespace
 * by the map at @path (/proc/self/uid_map or gid_map: "inside outside
 * count" lines), by one line. A root that is root only of a user namespace
 * (a container) can switch to mapped ids only. Without the file (no user
 * namespaces) every id is. */
static gboolean
ids_are_mapped (const char *path,
                guint32     id,
                guint32     n_ids)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return TRUE;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      guint64 inside, outside, count;

      if (sscanf (lines[i], "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
                  &inside, &outside, &count) == 3 &&
          id >= inside && (guint64) id - inside + n_ids <= count)
        return TRUE;
    }
  return FALSE;
}

/*
 * Guests are never host uid 0 (issue 14): the kernel still trusts the
 * global root uid in places that ignore capabilities (sysctl permissions,
 * files owned by root), so a guest that is root without capabilities is one
 * missed file away from the host. A host that runs as root starts every
 * bwrap as the guest ids (see the launcher). By default each session's
 * guest has ids of its own, from guest-id-range (issue 31: one uid for all
 * sessions shared what the kernel keys by uid — signals, ptrace, /proc,
 * RLIMIT_NPROC — between them); an operator may name one service user for
 * all instead (guest-uid, guest-gid). A host that is not root can only
 * start bwrap as itself, so its guests have its ids, as before.
 */
static gboolean
resolve_shared_guest (SandboxBubblewrapBackend  *self,
                      GError                   **error)
{
  SandboxBubblewrapGuest *guest = &self->hardening.guest;

  guest->uid = self->guest_uid >= 0 ? (uid_t) self->guest_uid
                                    : read_overflow_id ("/proc/sys/kernel/overflowuid");
  guest->gid = self->guest_gid >= 0 ? (gid_t) self->guest_gid
                                    : read_overflow_id ("/proc/sys/kernel/overflowgid");
  guest->switched = TRUE;
  if (!ids_are_mapped ("/proc/self/uid_map", guest->uid, 1) ||
      !ids_are_mapped ("/proc/self/gid_map", guest->gid, 1))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "The guest ids %u:%u are not mapped in this process's user namespace; "
                   "set guest-uid and guest-gid to mapped ones",
                   (guint) guest->uid, (guint) guest->gid);
      return FALSE;
    }
  return TRUE;
}

/* Each session's own ids, from guest-id-range. The default range not
 * mapped here (a container's root) falls back to one shared guest, said in
 * the log; a range the operator named must be mapped. The overflow ids
 * stay the backend's own guest, which only the layering probe runs as. */
static gboolean
resolve_guest_range (SandboxBubblewrapBackend     *self,
                     SandboxBubblewrapGuestRange  *range,
                     GError                      **error)
{
  const char *text = self->guest_id_range != NULL ? self->guest_id_range
                                                  : SANDBOX_BUBBLEWRAP_GUEST_ID_RANGE_DEFAULT;

  if (!sandbox_bubblewrap_guest_range_parse (text, "/etc/subuid", "/etc/subgid", range, error))
    return FALSE;
  if (ids_are_mapped ("/proc/self/uid_map", range->uid_start, range->count) &&
      ids_are_mapped ("/proc/self/gid_map", range->gid_start, range->count))
    {
      self->per_session_guests = TRUE;
      return resolve_shared_guest (self, error);
    }
  if (self->guest_id_range != NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "guest-id-range “%s” is not mapped in this process's user namespace; "
                   "name mapped ids", text);
      return FALSE;
    }
  g_log_structured ("Sandbox", G_LOG_LEVEL_MESSAGE,
                    "SANDBOX_EVENT", "guest-ids",
                    "SANDBOX_DRIVER", "bubblewrap",
                    "MESSAGE", "Guests of all sessions share the overflow ids: the default "
                    "guest-id-range %s is not mapped in this user namespace",
                    SANDBOX_BUBBLEWRAP_GUEST_ID_RANGE_DEFAULT);
  return resolve_shared_guest (self, error);
}

static gboolean
resolve_guest_ids (SandboxBubblewrapBackend     *self,
                   SandboxBubblewrapGuestRange  *range,
                   GError                      **error)
{
  uid_t euid = geteuid ();
  gid_t egid = getegid ();
  gboolean shared = self->guest_uid >= 0 || self->guest_gid >= 0;

  if (self->guest_uid == 0 || self->guest_gid == 0)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "guest-uid and guest-gid must not be 0: guests never run as host root");
      return FALSE;
    }
  if (shared && self->guest_id_range != NULL)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "guest-id-range gives each session ids of its own, guest-uid and "
                           "guest-gid one pair for all: set one or the other");
      return FALSE;
    }
  if (euid != 0)
    {
      if ((self->guest_uid >= 0 && self->guest_uid != euid) ||
          (self->guest_gid >= 0 && self->guest_gid != egid) || self->guest_id_range != NULL)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       "Guests can run as other ids than the host's only when the host runs "
                       "as root; this host runs as %u:%u",
                       (guint) euid, (guint) egid);
          return FALSE;
        }
      self->hardening.guest = (SandboxBubblewrapGuest) { euid, egid, FALSE };
      return TRUE;
    }
  if (shared)
    return resolve_shared_guest (self, error);
  return resolve_guest_range (self, range, error);
}

/* A value written into /etc/gitconfig between quotes: one line of
 * printable text that cannot end the quoted string or start an escape. */
static gboolean
check_git_value (const char  *property,
                 const char  *value,
                 GError     **error)
{
  if (value != NULL && value[0] != '\0' && g_utf8_validate (value, -1, NULL))
    {
      const char *p;

      for (p = value; *p != '\0'; p++)
        if ((guchar) *p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
          break;
      if (*p == '\0')
        return TRUE;
    }
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "%s must be non-empty UTF-8 without control characters, quotes or backslashes",
               property);
  return FALSE;
}

/* The base has checked the name and the admission limit. */
/* Layered workspaces where the probe says they work (unless layering is
 * "copy"); copies elsewhere, said in the log. */
static gboolean
choose_layering (SandboxBubblewrapBackend  *self,
                 GError                   **error)
{
  g_autoptr(GError) local_error = NULL;

  if (g_strcmp0 (self->layering, SANDBOX_BUBBLEWRAP_LAYERING_COPY) == 0)
    return TRUE;
  if (g_strcmp0 (self->layering, SANDBOX_BUBBLEWRAP_LAYERING_AUTO) != 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "layering must be “auto” or “copy”, not “%s”",
                   self->layering != NULL ? self->layering : "");
      return FALSE;
    }
  self->layered = sandbox_bubblewrap_layering_probe (sandbox_bubblewrap_store_get_root (self->store),
                                                     &self->hardening.guest, &local_error);
  if (!self->layered)
    g_log_structured ("Sandbox", G_LOG_LEVEL_INFO,
                      "SANDBOX_EVENT", "layering",
                      "SANDBOX_DRIVER", "bubblewrap",
                      "MESSAGE", "Workspaces are copied: %s", local_error->message);
  sandbox_bubblewrap_store_set_layered (self->store, self->layered);
  return TRUE;
}

static gboolean
sandbox_bubblewrap_backend_init_backend (SandboxBackendBase  *base,
                                         GCancellable        *cancellable,
                                         GError             **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (base);
  const char *state_directory = sandbox_backend_base_get_state_directory (base);
  SandboxBubblewrapGuestRange guest_range = { 0 };

  if (self->executable == NULL || !g_path_is_absolute (self->executable))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "The bwrap executable must be an absolute path, not “%s”",
                   self->executable != NULL ? self->executable : "");
      return FALSE;
    }
  if (state_directory == NULL || state_directory[0] == '\0')
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "The bubblewrap backend requires a state-directory");
      return FALSE;
    }

  if (!resolve_guest_ids (self, &guest_range, error))
    return FALSE;
  if (!check_git_value ("git-user-name", self->hardening.etc.git_name, error) ||
      !check_git_value ("git-user-email", self->hardening.etc.git_email, error))
    return FALSE;
  if (!sandbox_bubblewrap_etc_load_ca_bundle (&self->hardening.etc, error))
    return FALSE;

  if (self->seccomp)
    {
      self->hardening.seccomp_program = sandbox_bubblewrap_seccomp_get_program (error);
      if (self->hardening.seccomp_program == NULL)
        return FALSE;
    }

  if (!sandbox_bubblewrap_limits_check_tmp_size (self->limits.tmp_size, error))
    return FALSE;
  if (self->limits.max_open_files > 0 && self->limits.max_open_files < 16)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "max-open-files must be at least 16, not %" G_GUINT64_FORMAT,
                   self->limits.max_open_files);
      return FALSE;
    }
  if (self->limits.max_processes > 0 && self->limits.max_processes < 4)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "max-processes must be at least 4, not %" G_GUINT64_FORMAT,
                   self->limits.max_processes);
      return FALSE;
    }
  if (self->limits.cpu_percent > 100 * g_get_num_processors ())
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "cpu-percent must be at most 100 × %u CPUs, not %u",
                   g_get_num_processors (), self->limits.cpu_percent);
      return FALSE;
    }
  self->hardening.limits = self->limits;
  self->hardening.durable = self->durable;
  if (self->max_ready_sandboxes > 0)
    self->hardening.ready_pool = sandbox_bubblewrap_ready_pool_new (self->max_ready_sandboxes,
                                                                    self->ready_idle_timeout_ms);
  /* A limit that cannot be enforced here fails construction. */
  if (!sandbox_bubblewrap_cgroup_root_discover (&self->limits, &self->hardening.cgroup_root,
                                                error))
    return FALSE;

  self->store = sandbox_bubblewrap_store_open (state_directory,
                                               sandbox_backend_base_get_name (base),
                                               self->durable, &self->hardening.guest, error);
  if (self->store == NULL)
    return FALSE;
  if (self->per_session_guests)
    sandbox_bubblewrap_store_set_guest_range (self->store, &guest_range);
  if (!choose_layering (self, error))
    return FALSE;
  if (!sandbox_bubblewrap_quota_check (sandbox_bubblewrap_store_get_root (self->store),
                                       self->workspace_quota_bytes, error))
    return FALSE;
  if (self->workspace_quota_bytes > 0 && !self->seccomp)
    {
      /* Only the filter keeps a guest from making a subvolume of its own
       * in the workspace, outside the workspace's qgroup. */
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "workspace-quota-bytes cannot be enforced without the seccomp filter "
                           "(seccomp=FALSE): a guest could write past it in a btrfs subvolume "
                           "of its own");
      return FALSE;
    }
  if (self->workspace_quota_bytes > 0 && self->layered)
    {
      /* An overlay makes a work directory for each sandbox next to its
       * upper layer, in the same subvolume (copy-up renames from one to
       * the other): with the upper layer full, no sandbox could start. */
      g_log_structured ("Sandbox", G_LOG_LEVEL_INFO,
                        "SANDBOX_EVENT", "layering",
                        "SANDBOX_DRIVER", "bubblewrap",
                        "MESSAGE", "Workspaces are copied: workspace-quota-bytes is set");
      self->layered = FALSE;
      sandbox_bubblewrap_store_set_layered (self->store, FALSE);
    }
  sandbox_bubblewrap_store_set_workspace_quota (self->store, self->workspace_quota_bytes);
  /* Read back as resolved. */
  sandbox_backend_base_set_state_directory (base, sandbox_bubblewrap_store_get_root (self->store));
  return TRUE;
}

static char *
sandbox_bubblewrap_backend_prewarm (SandboxBackend   *backend,
                                    SandboxTemplate  *template_,
                                    gboolean         *reused,
                                    GCancellable     *cancellable,
                                    GError          **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);

  return sandbox_bubblewrap_store_prewarm (self->store, template_, reused, cancellable, error);
}

/* Proves isolation in the leased session and hands it to a new handle. */
static SandboxHandle *
start_session (SandboxBubblewrapBackend  *self,
               SandboxBubblewrapLease    *lease,
               SandboxNetworkPolicy      *policy,
               GCancellable              *cancellable,
               GError                   **error)
{
  g_autoptr(SandboxBubblewrapLease) owned = lease;
  g_autoptr(SandboxBubblewrapDriver) driver = NULL;
  g_autoptr(GError) local_error = NULL;
  SandboxBubblewrapHardening hardening = self->hardening;

  /* The session's own guest (sandbox-bubblewrap-guest-ids.c). */
  hardening.guest = lease->guest;
  driver = sandbox_bubblewrap_driver_new (self->executable, lease->workspace, lease->lower,
                                          lease->layers,
                                          sandbox_backend_base_get_max_concurrent_commands (
                                            SANDBOX_BACKEND_BASE (self)),
                                          policy,
                                          SANDBOX_BACKEND (self), &hardening, &local_error);
  if (driver == NULL ||
      !sandbox_bubblewrap_driver_prove_isolation (driver, cancellable, &local_error))
    {
      if (driver != NULL)
        sandbox_bubblewrap_driver_stop (driver);
      /* A new session's directory goes; a resumed one keeps its workspace. */
      sandbox_bubblewrap_lease_abandon (lease);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }

  return sandbox_bubblewrap_handle_new (driver, g_steal_pointer (&owned));
}

static SandboxHandle *
sandbox_bubblewrap_backend_create (SandboxBackend        *backend,
                                   const char            *template_key,
                                   SandboxState          *state,
                                   SandboxNetworkPolicy  *policy,
                                   GCancellable          *cancellable,
                                   GError               **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);
  SandboxBubblewrapLease *lease;

  lease = sandbox_bubblewrap_store_open_session (self->store, template_key, state, backend,
                                                 cancellable, error);
  if (lease == NULL)
    return NULL;
  return start_session (self, lease, policy, cancellable, error);
}

/* A stale lease — its file exists, nobody holds its OFD lock — is taken
 * over once no namespace of the session is left (see the store). */
static SandboxHandle *
sandbox_bubblewrap_backend_recover_session (SandboxBackend        *backend,
                                            SandboxState          *state,
                                            SandboxNetworkPolicy  *policy,
                                            GCancellable          *cancellable,
                                            GError               **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);
  SandboxBubblewrapLease *lease;

  if (g_strcmp0 (sandbox_state_get_backend (state),
                 sandbox_backend_base_get_name (SANDBOX_BACKEND_BASE (self))) != 0)
    {
      sandbox_set_error_state_mismatch (error);
      return NULL;
    }
  lease = sandbox_bubblewrap_store_recover_session (self->store, state, self->executable,
                                                    cancellable, error);
  if (lease == NULL)
    return NULL;
  return start_session (self, lease, policy, cancellable, error);
}

/* Sessions and templates in and out (sandbox-backend-transfer.c): the
 * cluster driver's way to move them between hosts. */

static gboolean
sandbox_bubblewrap_backend_import_session (SandboxBackend            *backend,
                                           SandboxState              *state,
                                           SandboxWorkspaceFillFunc   fill,
                                           gpointer                   user_data,
                                           GCancellable              *cancellable,
                                           GError                   **error)
{
  return sandbox_bubblewrap_store_import_session (SANDBOX_BUBBLEWRAP_BACKEND (backend)->store,
                                                  state, fill, user_data, cancellable, error);
}

static int
sandbox_bubblewrap_backend_open_session_files (SandboxBackend  *backend,
                                               const char      *session_id,
                                               GCancellable    *cancellable,
                                               GError         **error)
{
  return sandbox_bubblewrap_store_open_workspace (SANDBOX_BUBBLEWRAP_BACKEND (backend)->store,
                                                  session_id, error);
}

static int
sandbox_bubblewrap_backend_open_template_files (SandboxBackend  *backend,
                                                const char      *template_key,
                                                GCancellable    *cancellable,
                                                GError         **error)
{
  return sandbox_bubblewrap_store_open_template (SANDBOX_BUBBLEWRAP_BACKEND (backend)->store,
                                                 template_key, error);
}

/* The store's own view: the state directory's layout stays the store's. */

static GPtrArray *
sandbox_bubblewrap_backend_list_sessions (SandboxBackend  *backend,
                                          GCancellable    *cancellable,
                                          GError         **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);

  return sandbox_bubblewrap_store_list_sessions (self->store, cancellable, error);
}

static GPtrArray *
sandbox_bubblewrap_backend_list_templates (SandboxBackend  *backend,
                                           GCancellable    *cancellable,
                                           GError         **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);

  return sandbox_bubblewrap_store_list_templates (self->store, cancellable, error);
}

static SandboxState *
sandbox_bubblewrap_backend_lookup_state (SandboxBackend  *backend,
                                         const char      *session_id,
                                         GCancellable    *cancellable,
                                         GError         **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);

  return sandbox_bubblewrap_store_lookup_state (self->store, session_id, error);
}

static gboolean
sandbox_bubblewrap_backend_query_lease_owner (SandboxBackend      *backend,
                                              const char          *session_id,
                                              SandboxLeaseOwner  **owner,
                                              GCancellable        *cancellable,
                                              GError             **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);

  return sandbox_bubblewrap_store_query_lease_owner (self->store, session_id, owner, error);
}

static gboolean
sandbox_bubblewrap_backend_delete_template (SandboxBackend  *backend,
                                            const char      *template_key,
                                            GCancellable    *cancellable,
                                            GError         **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);

  return sandbox_bubblewrap_store_delete_template (self->store, template_key, error);
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
      g_value_set_uint (value, landlock_abi ());
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
    case PROP_EXTRA_CA_CERTIFICATES:
      g_value_set_string (value, self->hardening.etc.extra_ca_path);
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
    case PROP_EXTRA_CA_CERTIFICATES:
      g_free (self->hardening.etc.extra_ca_path);
      self->hardening.etc.extra_ca_path = g_value_dup_string (value);
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

static void
sandbox_bubblewrap_backend_finalize (GObject *object)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (object);

  g_clear_pointer (&self->store, sandbox_bubblewrap_store_unref);
  g_clear_pointer (&self->hardening.seccomp_program, g_bytes_unref);
  g_clear_pointer (&self->hardening.cgroup_root, sandbox_bubblewrap_cgroup_root_unref);
  g_clear_pointer (&self->hardening.ready_pool, sandbox_bubblewrap_ready_pool_unref);
  sandbox_bubblewrap_etc_clear (&self->hardening.etc);
  g_free (self->executable);
  g_free (self->layering);
  g_free (self->guest_id_range);

  G_OBJECT_CLASS (sandbox_bubblewrap_backend_parent_class)->finalize (object);
}

static void
sandbox_bubblewrap_backend_class_init (SandboxBubblewrapBackendClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SandboxBackendBaseClass *base_class = SANDBOX_BACKEND_BASE_CLASS (klass);

  object_class->get_property = sandbox_bubblewrap_backend_get_property;
  object_class->set_property = sandbox_bubblewrap_backend_set_property;
  object_class->finalize = sandbox_bubblewrap_backend_finalize;
  base_class->init_backend = sandbox_bubblewrap_backend_init_backend;
  sandbox_backend_base_class_set_default_name (base_class, SANDBOX_BUBBLEWRAP_DEFAULT_NAME);

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
}

static void
sandbox_bubblewrap_backend_class_finalize (SandboxBubblewrapBackendClass *klass)
{
}

static void
sandbox_bubblewrap_backend_init (SandboxBubblewrapBackend *self)
{
  self->executable = g_strdup (SANDBOX_BUBBLEWRAP_DEFAULT_EXECUTABLE);
  self->layering = g_strdup (SANDBOX_BUBBLEWRAP_DEFAULT_LAYERING);
  self->seccomp = TRUE;
  self->max_ready_sandboxes = SANDBOX_BUBBLEWRAP_DEFAULT_MAX_READY;
  self->ready_idle_timeout_ms = SANDBOX_BUBBLEWRAP_DEFAULT_READY_IDLE_TIMEOUT_MS;
  self->guest_uid = -1;
  self->guest_gid = -1;
}

static void
sandbox_bubblewrap_backend_backend_iface_init (SandboxBackendInterface *iface)
{
  iface->prewarm = sandbox_bubblewrap_backend_prewarm;
  iface->create = sandbox_bubblewrap_backend_create;
  iface->recover_session = sandbox_bubblewrap_backend_recover_session;
  iface->list_sessions = sandbox_bubblewrap_backend_list_sessions;
  iface->list_templates = sandbox_bubblewrap_backend_list_templates;
  iface->lookup_state = sandbox_bubblewrap_backend_lookup_state;
  iface->query_lease_owner = sandbox_bubblewrap_backend_query_lease_owner;
  iface->delete_template = sandbox_bubblewrap_backend_delete_template;
  iface->import_session = sandbox_bubblewrap_backend_import_session;
  iface->open_session_files = sandbox_bubblewrap_backend_open_session_files;
  iface->open_template_files = sandbox_bubblewrap_backend_open_template_files;
}

/**
 * sandbox_bubblewrap_backend_register:
 * @module: the driver module
 *
 * Registers #SandboxBubblewrapBackend with @module.
 */
void
sandbox_bubblewrap_backend_register (GTypeModule *module)
{
  sandbox_bubblewrap_backend_register_type (module);
}
