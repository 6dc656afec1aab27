/* sandbox-bubblewrap-backend.c — the bubblewrap backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <unistd.h>

#include "sandbox-bubblewrap-args-private.h"
#include "sandbox-bubblewrap-backend-fields-private.h"
#include "sandbox-bubblewrap-driver-private.h"
#include "sandbox-bubblewrap-handle-private.h"
#include "sandbox-bubblewrap-layering-private.h"
#include "sandbox-bubblewrap-limits-private.h"
#include "sandbox-bubblewrap-quota-private.h"
#include "sandbox-bubblewrap-ready-private.h"
#include "sandbox-bubblewrap-seccomp-private.h"
#include "sandbox-bubblewrap-guest-ids-private.h"
#include "sandbox-bubblewrap-store-private.h"
#include "sandbox-bubblewrap-stub-private.h"

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

static void sandbox_bubblewrap_backend_backend_iface_init  (SandboxBackendInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxBubblewrapBackend, sandbox_bubblewrap_backend,
                                SANDBOX_TYPE_BACKEND_BASE, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SANDBOX_TYPE_BACKEND,
                                                               sandbox_bubblewrap_backend_backend_iface_init))

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
  if (self->hardening.upstream_ca_file != NULL &&
      (!g_path_is_absolute (self->hardening.upstream_ca_file) ||
       !g_file_test (self->hardening.upstream_ca_file, G_FILE_TEST_IS_REGULAR)))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "upstream-ca-file must be the absolute path of a file, not “%s”",
                   self->hardening.upstream_ca_file);
      return FALSE;
    }

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
  /* What builders killed with an earlier host left, before anything new. */
  sandbox_bubblewrap_store_remove_build_leftovers (self->store);
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
  /* Beside the sessions, never inside a workspace: no guest sees it. */
  self->hardening.gateway_ca_directory = g_build_filename (sandbox_bubblewrap_store_get_root (self->store),
                                                           "gateway-ca", NULL);
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

/* The steps of the core's session protocol (sandbox-backend-protocol.c):
 * the base runs create, resume, recover and delete in the reference's
 * order; the store does each step on disk. A lease is taken in one hook
 * and used in the next, so it waits in the base meanwhile. */

#define STORE_OF(base) (SANDBOX_BUBBLEWRAP_BACKEND (base)->store)

/* Keeps @lease, if a hook took one, for the next; whether it did. */
static gboolean
pending_add (SandboxBubblewrapBackend *self,
             SandboxBubblewrapLease   *lease)
{
  g_autofree char *session_id = NULL;

  if (lease == NULL)
    return FALSE;
  session_id = g_path_get_basename (lease->directory);
  sandbox_backend_base_hold_lease (SANDBOX_BACKEND_BASE (self), session_id, lease,
                                   (GDestroyNotify) sandbox_bubblewrap_lease_free);
  return TRUE;
}

static gboolean
sandbox_bubblewrap_backend_check_template (SandboxBackendBase  *base,
                                           const char          *template_key,
                                           GCancellable        *cancellable,
                                           GError             **error)
{
  return sandbox_bubblewrap_store_check_template (STORE_OF (base), template_key, error);
}

static gboolean
sandbox_bubblewrap_backend_has_session (SandboxBackendBase *base,
                                        const char         *session_id)
{
  return sandbox_bubblewrap_store_has_session (STORE_OF (base), session_id);
}

static gboolean
sandbox_bubblewrap_backend_take_lease (SandboxBackendBase  *base,
                                       const char          *session_id,
                                       GCancellable        *cancellable,
                                       GError             **error)
{
  return pending_add (SANDBOX_BUBBLEWRAP_BACKEND (base),
                      sandbox_bubblewrap_store_take_lease (STORE_OF (base), session_id, NULL,
                                                           error));
}

/* A stale lease — its file exists, nobody holds its OFD lock — is taken
 * over once no namespace of the session is left (see the store). */
static gboolean
sandbox_bubblewrap_backend_take_over_lease (SandboxBackendBase  *base,
                                            const char          *session_id,
                                            GCancellable        *cancellable,
                                            GError             **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (base);

  return pending_add (self, sandbox_bubblewrap_store_take_lease (self->store, session_id,
                                                                 self->executable, error));
}

/* A new session's directory goes; a resumed one keeps its workspace. */
static void
sandbox_bubblewrap_backend_release_lease (SandboxBackendBase *base,
                                          const char         *session_id)
{
  g_autoptr(SandboxBubblewrapLease) lease = sandbox_backend_base_steal_lease (base, session_id);

  if (lease != NULL)
    sandbox_bubblewrap_lease_abandon (lease);
}

static SandboxState *
sandbox_bubblewrap_backend_load_state (SandboxBackendBase  *base,
                                       const char          *session_id,
                                       GCancellable        *cancellable,
                                       GError             **error)
{
  return sandbox_bubblewrap_store_lookup_state (STORE_OF (base), session_id, error);
}

static gboolean
sandbox_bubblewrap_backend_new_session (SandboxBackendBase  *base,
                                        SandboxState        *state,
                                        GCancellable        *cancellable,
                                        GError             **error)
{
  return pending_add (SANDBOX_BUBBLEWRAP_BACKEND (base),
                      sandbox_bubblewrap_store_new_session (STORE_OF (base), state,
                                                            SANDBOX_BACKEND (base), cancellable,
                                                            error));
}

/* Settles a resumed session's ids and workspace, proves isolation in the
 * leased session and hands it to a new handle. On failure the lease keeps
 * waiting: the base's release_lease abandons it. */
/* A session on a runtime runs a static stub (see
 * sandbox_bubblewrap_stub_check_static()); one writable per session is an
 * overlay in the session's layers: a session that copies its template has
 * none (no overlayfs here). */
static gboolean
check_runtime (SandboxBubblewrapLease  *lease,
               const char              *runtime,
               gboolean                 writable,
               GError                 **error)
{
  if (runtime != NULL && !sandbox_bubblewrap_stub_check_static (error))
    return FALSE;
  if (!writable || lease->layers != NULL)
    return TRUE;
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
               "Sandbox template %s has a runtime writable per session, which needs layered "
               "workspaces (overlayfs); this backend copies its templates (its `layering` is "
               "copy)", sandbox_state_get_template_key (lease->state));
  return FALSE;
}

static SandboxHandle *
sandbox_bubblewrap_backend_new_handle (SandboxBackendBase    *base,
                                       SandboxState          *state,
                                       SandboxNetworkPolicy  *policy,
                                       GCancellable          *cancellable,
                                       GError               **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (base);
  const char *session_id = sandbox_state_get_session_id (state);
  g_autoptr(SandboxBubblewrapLease) lease = sandbox_backend_base_steal_lease (base, session_id);
  g_autoptr(SandboxBubblewrapDriver) driver = NULL;
  SandboxBubblewrapHardening hardening = self->hardening;
  g_autofree char *runtime_key = NULL;
  g_autofree char *runtime = NULL;
  g_auto(GStrv) runtime_lowers = NULL;

  g_return_val_if_fail (lease != NULL, NULL);

  if ((lease->created ||
       sandbox_bubblewrap_store_prepare_resumed (self->store, lease, state, error)) &&
      sandbox_bubblewrap_store_runtime_of (self->store, sandbox_state_get_template_key (state),
                                           &runtime_key, &runtime, &runtime_lowers, error) &&
      check_runtime (lease, runtime, runtime_lowers != NULL, error))
    {
      /* The session's own guest (sandbox-bubblewrap-guest-ids.c), and the
       * runtime its template names. */
      hardening.guest = lease->guest;
      hardening.runtime = runtime;
      hardening.runtime_key = runtime_key;
      hardening.runtime_lowers = (const char * const *) runtime_lowers;
      driver = sandbox_bubblewrap_driver_new (
        self->executable, session_id, lease->workspace, (const char * const *) lease->lowers, lease->layers,
        sandbox_backend_base_get_max_concurrent_commands (base), policy, SANDBOX_BACKEND (self),
        &hardening, error);
    }
  if (driver != NULL && sandbox_bubblewrap_driver_prove_isolation (driver, cancellable, error))
    return sandbox_bubblewrap_handle_new (driver, g_steal_pointer (&lease), base);
  if (driver != NULL)
    sandbox_bubblewrap_driver_stop (driver);
  pending_add (self, g_steal_pointer (&lease));
  return NULL;
}

static gboolean
sandbox_bubblewrap_backend_remove_session (SandboxBackendBase  *base,
                                           const char          *session_id,
                                           GCancellable        *cancellable,
                                           GError             **error)
{
  g_autoptr(SandboxBubblewrapLease) lease = sandbox_backend_base_steal_lease (base, session_id);

  return sandbox_bubblewrap_store_remove_session (STORE_OF (base), lease, error);
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
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);

  /* An older copy of the session here goes first, under its own lease. */
  return sandbox_bubblewrap_store_check_import (self->store, state, error) &&
         sandbox_backend_base_delete_session (SANDBOX_BACKEND_BASE (self),
                                              sandbox_state_get_session_id (state),
                                              cancellable, error) &&
         sandbox_bubblewrap_store_import_session (self->store, state, fill, user_data,
                                                  cancellable, error);
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

static char *
sandbox_bubblewrap_backend_import_runtime (SandboxBackend  *backend,
                                           GFile           *source,
                                           gboolean        *reused,
                                           GCancellable    *cancellable,
                                           GError         **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);

  return sandbox_bubblewrap_store_import_runtime (self->store, source, reused, backend,
                                                  cancellable, error);
}

static GPtrArray *
sandbox_bubblewrap_backend_list_runtimes (SandboxBackend  *backend,
                                          GCancellable    *cancellable,
                                          GError         **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);

  return sandbox_bubblewrap_store_list_runtimes (self->store, cancellable, error);
}

static gboolean
sandbox_bubblewrap_backend_delete_runtime (SandboxBackend  *backend,
                                           const char      *runtime_key,
                                           GCancellable    *cancellable,
                                           GError         **error)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (backend);

  return sandbox_bubblewrap_store_delete_runtime (self->store, runtime_key, error);
}

static void
sandbox_bubblewrap_backend_finalize (GObject *object)
{
  SandboxBubblewrapBackend *self = SANDBOX_BUBBLEWRAP_BACKEND (object);

  g_clear_pointer (&self->store, sandbox_bubblewrap_store_unref);
  g_clear_pointer (&self->hardening.seccomp_program, g_bytes_unref);
  g_clear_pointer (&self->hardening.cgroup_root, sandbox_bubblewrap_cgroup_root_unref);
  g_clear_pointer (&self->hardening.ready_pool, sandbox_bubblewrap_ready_pool_unref);
  g_clear_pointer (&self->hardening.gateway_ca_directory, g_free);
  g_clear_pointer (&self->hardening.upstream_ca_file, g_free);
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

  object_class->finalize = sandbox_bubblewrap_backend_finalize;
  base_class->init_backend = sandbox_bubblewrap_backend_init_backend;
  base_class->check_template = sandbox_bubblewrap_backend_check_template;
  base_class->has_session = sandbox_bubblewrap_backend_has_session;
  base_class->take_lease = sandbox_bubblewrap_backend_take_lease;
  base_class->take_over_lease = sandbox_bubblewrap_backend_take_over_lease;
  base_class->release_lease = sandbox_bubblewrap_backend_release_lease;
  base_class->load_state = sandbox_bubblewrap_backend_load_state;
  base_class->new_session = sandbox_bubblewrap_backend_new_session;
  base_class->new_handle = sandbox_bubblewrap_backend_new_handle;
  base_class->remove_session = sandbox_bubblewrap_backend_remove_session;
  sandbox_backend_base_class_set_default_name (base_class, SANDBOX_BUBBLEWRAP_DEFAULT_NAME);

  sandbox_bubblewrap_backend_install_properties (object_class);
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
  self->hardening.idle_helpers_timeout_ms = SANDBOX_BUBBLEWRAP_DEFAULT_IDLE_HELPERS_TIMEOUT_MS;
  self->guest_uid = -1;
  self->guest_gid = -1;
}

static void
sandbox_bubblewrap_backend_backend_iface_init (SandboxBackendInterface *iface)
{
  sandbox_backend_base_implement_sessions (iface);
  iface->prewarm = sandbox_bubblewrap_backend_prewarm;
  iface->list_sessions = sandbox_bubblewrap_backend_list_sessions;
  iface->list_templates = sandbox_bubblewrap_backend_list_templates;
  iface->query_lease_owner = sandbox_bubblewrap_backend_query_lease_owner;
  iface->delete_template = sandbox_bubblewrap_backend_delete_template;
  iface->import_session = sandbox_bubblewrap_backend_import_session;
  iface->open_session_files = sandbox_bubblewrap_backend_open_session_files;
  iface->open_template_files = sandbox_bubblewrap_backend_open_template_files;
  iface->import_runtime = sandbox_bubblewrap_backend_import_runtime;
  iface->list_runtimes = sandbox_bubblewrap_backend_list_runtimes;
  iface->delete_runtime = sandbox_bubblewrap_backend_delete_runtime;
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
