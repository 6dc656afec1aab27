/* sandbox-bubblewrap-store-sessions.c — sessions and their leases
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/pidfd.h>
#include <sys/stat.h>

#include <json-glib/json-glib.h>

#include "sandbox-bubblewrap-layering-private.h"
#include "sandbox-bubblewrap-quota-private.h"
#include "sandbox-bubblewrap-store-layout-private.h"

/* Sessions and leases ---------------------------------------------------- */

/*
 * Leases. The lease file holds the owner's pid, as the reference's, and
 * while the session is owned its owner also holds an OFD write lock
 * (F_OFD_SETLK) on it. The kernel drops that lock when the owner dies, so
 * a lease file nobody holds a lock on was left by a crashed owner: stale.
 * create() still refuses it with BUSY — only a recovery
 * (sandbox_bubblewrap_store_take_lease() with the bwrap executable) takes
 * it over, and only after ending whatever is left of the dead owner's
 * sandboxes (see "Leftovers" below).
 *
 * The file is written and locked under a temporary name and then linked
 * into place, which fails if a lease exists: a lease is never visible
 * without its lock, so a lease without a lock is always stale.
 *
 * Every bwrap namespace of the session holds a read lock on the workspace
 * directory through its init (`--lock-file /workspace`); the kernel kills
 * a pid namespace when its init dies, so a lock there means processes of
 * some owner may still run.
 */

static gboolean
lock_lease_fd (int fd)
{
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

  return fcntl (fd, F_OFD_SETLK, &lock) == 0;
}

static gboolean
write_pid (int          fd,
           const char  *path,
           gboolean     durable,
           GError     **error)
{
  g_autofree char *pid = g_strdup_printf ("%d", (int) getpid ());
  gsize length = strlen (pid);

  if (ftruncate (fd, 0) < 0 || pwrite (fd, pid, length, 0) != (gssize) length)
    return set_errno_error (error, errno != 0 ? errno : EIO, "Could not write", path);
  if (durable && fdatasync (fd) < 0)
    return set_errno_error (error, errno, "Could not sync", path);
  return TRUE;
}

/* Creates and locks the lease; fails with BUSY if one exists. Returns the
 * locked descriptor. */
static int
acquire_lease (const char  *directory,
               gboolean     durable,
               GError     **error)
{
  g_autofree char *path = lease_path (directory);
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *temporary = g_strdup_printf ("%s.%s", path, uuid);
  g_auto(SandboxBubblewrapFd) fd = -1;
  int saved_errno;

  fd = open (temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return set_errno_error (error, errno, "Could not create", temporary), -1;
  if (!write_pid (fd, temporary, durable, error))
    {
      unlink (temporary);
      return -1;
    }
  if (!lock_lease_fd (fd))
    {
      saved_errno = errno;
      unlink (temporary);
      return set_errno_error (error, saved_errno, "Could not lock", temporary), -1;
    }
  if (link (temporary, path) < 0)
    {
      saved_errno = errno;
      unlink (temporary);
      if (saved_errno == EEXIST)
        sandbox_set_error_has_owner (error);
      else
        set_errno_error (error, saved_errno, "Could not create", path);
      return -1;
    }
  unlink (temporary);
  return g_steal_fd (&fd);
}

static int
take_over_lease (SandboxBubblewrapLease  *lease,
                 const char              *executable,
                 gboolean                 durable,
                 gboolean                *missing,
                 GError                 **error)
{
  g_autofree char *path = lease_path (lease->directory);
  g_auto(SandboxBubblewrapFd) fd = -1;
  struct stat locked, current;

  *missing = FALSE;
  fd = open (path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT)
    {
      *missing = TRUE;
      return -1;
    }
  if (fd < 0)
    return set_errno_error (error, errno, "Could not open", path), -1;
  if (!lock_lease_fd (fd))
    {
      if (errno != EAGAIN && errno != EACCES)
        return set_errno_error (error, errno, "Could not lock", path), -1;
      sandbox_set_error_has_owner (error);
      return -1;
    }
  /* The owner may have released it between our open and our lock. */
  if (fstat (fd, &locked) < 0 || stat (path, &current) < 0 ||
      locked.st_dev != current.st_dev || locked.st_ino != current.st_ino)
    {
      *missing = TRUE;
      return -1;
    }
  if (!sandbox_bubblewrap_lease_end_leftovers (lease, executable, error))
    return -1;   /* the lease stays stale: closing the descriptor unlocks it */
  if (!write_pid (fd, path, durable, error))
    return -1;
  return g_steal_fd (&fd);
}

/* The saved state of the session in @directory; NOT_FOUND without one. */
SandboxState *
sandbox_bubblewrap_store_read_state (const char  *directory,
                                     const char  *session_id,
                                     GError     **error)
{
  g_autofree char *path = g_build_filename (directory, "state.json", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) local_error = NULL;

  if (!g_file_get_contents (path, &contents, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        sandbox_set_error_unknown_session (error, session_id);
      else
        g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  return sandbox_state_new_from_json (contents, error);
}

/* Makes a layered session's layers/{upper,work}, the guest's from the
 * start: nothing of the template is copied. (Never with a quota: the
 * backend copies new sessions then.) */
static gboolean
make_layers (SandboxBubblewrapLease  *lease,
             int                      session_fd,
             GError                 **error)
{
  const char *directory = lease->directory;
  g_auto(SandboxBubblewrapFd) layers_fd = -1;
  SandboxWorkspaceOwner owner;

  if (mkdirat (session_fd, SESSION_LAYERS, 0700) < 0)
    return set_errno_error (error, errno, "Could not create the layers of", directory);
  layers_fd = openat (session_fd, SESSION_LAYERS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (layers_fd < 0 ||
      mkdirat (layers_fd, "upper", 0755) < 0 ||
      mkdirat (layers_fd, "work", 0700) < 0)
    return set_errno_error (error, errno, "Could not create the layers of", directory);
  return sandbox_bubblewrap_lease_owner (lease, &owner) == NULL ||
         sandbox_workspace_give_tree_at (session_fd, SESSION_LAYERS, &owner, error);
}

/* A copy's progress, as SandboxBackend::create-progress reports it. */
typedef struct
{
  SandboxBackend *reporter;
  const char *session_id;
  guint64 files_total;
  guint64 bytes_total;
  /* What fill_copy() needs besides. */
  int data_fd;
  const SandboxWorkspaceOwner *owner;
  gboolean reported;
} CopyReport;

static void
report_copy (guint64  files_done,
             guint64  bytes_done,
             gpointer data)
{
  CopyReport *report = data;

  sandbox_backend_emit_create_progress (report->reporter, report->session_id, files_done,
                                        report->files_total, bytes_done, report->bytes_total);
}

/* The template's data copied as @name in @parent_fd (a
 * SandboxBubblewrapFillFunc; @data is a CopyReport). */
static gboolean
fill_copy (int            parent_fd,
           const char    *name,
           gpointer       data,
           GCancellable  *cancellable,
           GError       **error)
{
  CopyReport *report = data;

  if (!report->reported)
    return sandbox_workspace_copy_tree_at (report->data_fd, parent_fd, name, report->owner,
                                           cancellable, error);
  return sandbox_workspace_copy_tree_with_progress_at (report->data_fd, parent_fd, name,
                                                       report->owner, report_copy, report,
                                                       cancellable, error);
}

/* Copies the template's data into the new session's workspace/, which
 * belongs to the guest from the start: it never sees it before. Only a
 * copy someone listens to is reported: the totals cost a walk of the
 * template (the first time). */
static gboolean
copy_template (SandboxBubblewrapStore  *self,
               SandboxBubblewrapLease  *lease,
               const char              *template_key,
               int                      data_fd,
               int                      session_fd,
               SandboxBackend          *reporter,
               GCancellable            *cancellable,
               GError                 **error)
{
  SandboxWorkspaceOwner owner;
  CopyReport report = { reporter, sandbox_state_get_session_id (lease->state), 0, 0,
                        data_fd, sandbox_bubblewrap_lease_owner (lease, &owner), FALSE };

  report.reported = reporter != NULL &&
                    g_signal_has_handler_pending (reporter,
                                                  g_signal_lookup ("create-progress",
                                                                   SANDBOX_TYPE_BACKEND),
                                                  0, FALSE);
  if (report.reported &&
      !sandbox_bubblewrap_store_measure_template (self, template_key, &report.files_total,
                                                  &report.bytes_total, error))
    return FALSE;
  return sandbox_bubblewrap_quota_fill_directory (session_fd, "workspace", self->workspace_quota,
                                                  fill_copy, &report, cancellable, error);
}

static gboolean
populate_new_session (SandboxBubblewrapStore  *self,
                      SandboxBubblewrapLease  *lease,
                      const char              *template_key,
                      SandboxBackend          *reporter,
                      GCancellable            *cancellable,
                      GError                 **error)
{
  g_autofree char *data = g_build_filename (self->templates, template_key, "data", NULL);
  g_autofree char *state_path = g_build_filename (lease->directory, "state.json", NULL);
  g_autofree char *state_json = sandbox_state_to_json (lease->state);
  const char *workspace_name = lease->layers != NULL ? SESSION_LAYERS : "workspace";
  g_auto(SandboxBubblewrapFd) data_fd = -1;
  g_auto(SandboxBubblewrapFd) session_fd = -1;

  data_fd = open_directory (data, error);
  if (data_fd < 0)
    return FALSE;
  session_fd = open_directory (lease->directory, error);
  if (session_fd < 0)
    return FALSE;
  if (lease->layers != NULL)
    {
      /* Over a snapshot: its layers, then its parents'. */
      lease->lowers = sandbox_bubblewrap_store_lower_chain (self, template_key, error);
      if (lease->lowers == NULL ||
          !sandbox_bubblewrap_store_give_template_to_host (self, template_key, error) ||
          !make_layers (lease, session_fd, error))
        return FALSE;
    }
  else if (sandbox_bubblewrap_store_is_flat (self, template_key) ||
           sandbox_bubblewrap_store_is_layer (self, template_key))
    {
      /* A snapshot keeps modes, which a template's copy makes its own; a
       * layered one's chain is materialised. */
      if (!sandbox_bubblewrap_store_copy_exactly (self, lease, session_fd, "workspace", data,
                                                  cancellable, error))
        return FALSE;
    }
  else if (!copy_template (self, lease, template_key, data_fd, session_fd, reporter, cancellable,
                           error))
    return FALSE;
  if (self->durable)
    {
      g_autofree char *workspace = g_build_filename (lease->directory, workspace_name, NULL);

      /* The workspace, then the session's entry in sessions/, before the
       * state that makes the session resumable. */
      if (!sandbox_bubblewrap_store_sync_tree (session_fd, workspace_name, workspace, 0, error) ||
          !sandbox_bubblewrap_store_sync_directory (self->sessions, error))
        return FALSE;
    }
  return sandbox_bubblewrap_store_write_atomically (state_path, state_json, self->durable, error);
}

/*
 * Workspace ownership. A workspace belongs to its session's guest ids,
 * which guests of a root host are not. One of another owner — left by an
 * older version (whose root-hosted guests were host root, or all one uid),
 * made by the cluster's import as the host's, or from before the session's
 * ids changed — is given to the guest ids when its session is resumed: under the session's lease, and only when no namespace of the
 * session holds the workspace (its init's --lock-file), so no guest can
 * race the walk; by descriptor and without following any link
 * (sandbox_workspace_give_tree_at(), top directory last, so a workspace whose
 * top is the guest's was given whole).
 */
/* Whether nothing holds a lock on @layers/lock (missing: nothing ever did). */
static gboolean
layers_lock_is_free (const char *layers)
{
  g_autofree char *path = g_build_filename (layers, "lock", NULL);
  g_auto(SandboxBubblewrapFd) fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

  if (fd < 0)
    return errno == ENOENT;
  return fcntl (fd, F_OFD_GETLK, &lock) == 0 && lock.l_type == F_UNLCK;
}

static gboolean
give_workspace_to_guest (SandboxBubblewrapStore  *self,
                         SandboxBubblewrapLease  *lease,
                         GError                 **error)
{
  const char *name = lease->layers != NULL ? SESSION_LAYERS : "workspace";
  const char *template_key = sandbox_state_get_template_key (lease->state);
  g_auto(SandboxBubblewrapFd) session_fd = -1;
  g_auto(SandboxBubblewrapFd) top_fd = -1;
  g_auto(SandboxBubblewrapFd) lock_fd = -1;
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  SandboxWorkspaceOwner owner;
  struct stat st;

  if (sandbox_bubblewrap_lease_owner (lease, &owner) == NULL)
    return TRUE;
  session_fd = open_directory (lease->directory, error);
  if (session_fd < 0)
    return FALSE;
  top_fd = openat (session_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (top_fd < 0 || fstat (top_fd, &st) < 0)
    return set_errno_error (error, errno, "Could not open", lease->workspace);
  if (st.st_uid == owner.uid && st.st_gid == owner.gid)
    return TRUE;
  /* The namespaces' lock is on the workspace (a layered session's lock
   * file, or, from before its keeper, its upper layer). */
  lock_fd = open (lease->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (lock_fd < 0)
    return set_errno_error (error, errno, "Could not open", lease->workspace);
  if (fcntl (lock_fd, F_OFD_GETLK, &lock) < 0 || lock.l_type != F_UNLCK)
    return sandbox_set_error_previous_owner_live (error);
  if (lease->layers != NULL && !layers_lock_is_free (lease->layers))
    return sandbox_set_error_previous_owner_live (error);
  if (lease->layers != NULL &&
      !sandbox_bubblewrap_store_give_template_to_host (self, template_key, error))
    return FALSE;
  return sandbox_workspace_give_tree_at (session_fd, name, &owner, error);
}

/* Takes the lease of an existing session, taking over a stale one; ends
 * what is left of earlier owners' sandboxes either way. */
static int
recover_lease (SandboxBubblewrapStore  *self,
               SandboxBubblewrapLease  *lease,
               const char              *executable,
               GError                 **error)
{
  /* A lease that vanishes between open and lock is retried a few times. */
  for (guint attempt = 0; attempt < 8; attempt++)
    {
      gboolean missing = FALSE;
      int fd = take_over_lease (lease, executable, self->durable, &missing, error);
      g_autoptr(GError) local_error = NULL;

      if (fd >= 0 || !missing)
        return fd;
      /* No lease: an ordinary resume, once nothing of an earlier owner is
       * left — ended under the new lease, so nobody starts more meanwhile. */
      fd = acquire_lease (lease->directory, self->durable, &local_error);
      if (fd >= 0 && !sandbox_bubblewrap_lease_end_leftovers (lease, executable, error))
        {
          g_autofree char *path = lease_path (lease->directory);

          unlink (path);   /* still locked: nobody takes it for stale */
          close (fd);
          return -1;
        }
      if (fd >= 0)
        return fd;
      if (!g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return -1;
        }
    }
  sandbox_set_error_has_owner (error);
  return -1;
}

/* A host killed in the middle of a workspace write can leave a named
 * temporary in the workspace (on filesystems without O_TMPFILE, or between
 * linking and renaming a replacement). Such an owner leaves a stale lease,
 * so every session it touched comes back through recovery, which removes
 * them before anything runs in the workspace again. */
static void
remove_write_temporaries (SandboxBubblewrapLease *lease)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxWorkspace) workspace = sandbox_workspace_open (lease->workspace,
                                                                  SANDBOX_WORKSPACE_FLAGS_NONE,
                                                                  &error);
  guint removed;

  if (workspace == NULL)
    {
      g_debug ("Not looking for temporaries in %s: %s", lease->workspace, error->message);
      return;
    }
  removed = sandbox_workspace_remove_temporaries (workspace);
  if (removed > 0)
    g_log_structured ("Sandbox", G_LOG_LEVEL_INFO, "SANDBOX_EVENT", "leftovers",
                      "SANDBOX_DRIVER", "bubblewrap",
                      "SANDBOX_SESSION_ID", sandbox_state_get_session_id (lease->state),
                      "MESSAGE", "Removed %u temporary files a crashed owner left in %s",
                      removed, lease->workspace);
}

/* A lease on the session @session_id, not taken yet, with the paths of
 * its layout: layered over @template_key's data (which a resumed
 * session's state names later) or a workspace of its own. */
static SandboxBubblewrapLease *
lease_new (SandboxBubblewrapStore  *self,
           const char              *session_id,
           const char              *template_key,
           gboolean                 layered)
{
  SandboxBubblewrapLease *lease = g_new0 (SandboxBubblewrapLease, 1);

  lease->lock_fd = -1;
  lease->store = sandbox_bubblewrap_store_ref (self);
  lease->directory = g_build_filename (self->sessions, session_id, NULL);
  if (layered)
    {
      lease->layers = g_build_filename (lease->directory, SESSION_LAYERS, NULL);
      lease->workspace = g_build_filename (lease->layers, "upper", NULL);
    }
  else
    lease->workspace = g_build_filename (lease->directory, "workspace", NULL);
  return lease;
}

/* The directory of the new session @state names, made and leased, in the
 * layout @layered says; nothing is left behind on failure. A create fills
 * it from the template, an import from elsewhere. */
SandboxBubblewrapLease *
sandbox_bubblewrap_store_make_session (SandboxBubblewrapStore  *self,
                                       SandboxState            *state,
                                       gboolean                 layered,
                                       GError                 **error)
{
  g_autoptr(SandboxBubblewrapLease) lease = lease_new (self, sandbox_state_get_session_id (state),
                                                      sandbox_state_get_template_key (state),
                                                      layered);

  lease->state = g_object_ref (state);
  lease->created = TRUE;   /* abandoning it removes the directory */
  if (!ensure_directory (self->sessions, error))
    return NULL;
  if (mkdir (lease->directory, 0700) < 0)
    return set_errno_error (error, errno, "Could not create session directory",
                            lease->directory), NULL;
  lease->lock_fd = acquire_lease (lease->directory, self->durable, error);
  if (lease->lock_fd < 0)
    {
      sandbox_bubblewrap_lease_abandon (lease);
      return NULL;
    }
  lease->held = TRUE;
  return g_steal_pointer (&lease);
}

/* Whether the session @session_id (checked by the caller) is stored. */
gboolean
sandbox_bubblewrap_store_has_session (SandboxBubblewrapStore *self,
                                      const char             *session_id)
{
  g_autofree char *directory = g_build_filename (self->sessions, session_id, NULL);

  return g_file_test (directory, G_FILE_TEST_IS_DIR);
}

/* Takes a stored session's lease (BUSY while someone holds it); with the
 * bwrap its sandboxes ran, also a stale one, killing what is left of earlier
 * owners' sandboxes first (see "Leftovers"). The lease's state and lower
 * layer wait for sandbox_bubblewrap_store_prepare_resumed(). */
SandboxBubblewrapLease *
sandbox_bubblewrap_store_take_lease (SandboxBubblewrapStore  *self,
                                     const char              *session_id,
                                     const char              *recover_executable,
                                     GError                 **error)
{
  g_autofree char *directory = g_build_filename (self->sessions, session_id, NULL);
  g_autoptr(SandboxBubblewrapLease) lease = lease_new (self, session_id, NULL,
                                                      session_is_layered (directory));

  lease->recovered = recover_executable != NULL;
  lease->lock_fd = lease->recovered ? recover_lease (self, lease, recover_executable, error)
                                    : acquire_lease (lease->directory, self->durable, error);
  if (lease->lock_fd < 0)
    return NULL;
  lease->held = TRUE;
  return g_steal_pointer (&lease);
}

/* Creates the session @state names under its lease: its guest ids, its
 * workspace a copy of the template's data (reported by @reporter's
 * ::create-progress) or layered over it. Leaves nothing behind on failure. */
SandboxBubblewrapLease *
sandbox_bubblewrap_store_new_session (SandboxBubblewrapStore  *self,
                                      SandboxState            *state,
                                      SandboxBackend          *reporter,
                                      GCancellable            *cancellable,
                                      GError                 **error)
{
  const char *template_key = sandbox_state_get_template_key (state);
  g_autoptr(SandboxBubblewrapLease) lease = NULL;
  g_auto(SandboxBubblewrapFd) template_lock = -1;

  /* A new session holds its template until its state names it (see
   * "Deleting a template"); a delete that held the lock first leaves no
   * template to find. */
  template_lock = sandbox_bubblewrap_store_lock_template (self, template_key, error);
  if (template_lock < 0 || !sandbox_bubblewrap_store_check_template (self, template_key, error))
    return NULL;

  lease = sandbox_bubblewrap_store_make_session (self, state, self->overlay, error);
  if (lease == NULL)
    return NULL;
  if (!sandbox_bubblewrap_store_assign_guest (self, lease, error) ||
      !populate_new_session (self, lease, template_key, reporter, cancellable, error))
    {
      sandbox_bubblewrap_lease_abandon (lease);
      return NULL;
    }
  return g_steal_pointer (&lease);
}

/* Under the lease of a resumed session whose stored @state the caller
 * checked: its guest ids and its workspace's owner settled, and after a
 * recovery what the crashed owner left removed. */
gboolean
sandbox_bubblewrap_store_prepare_resumed (SandboxBubblewrapStore  *self,
                                          SandboxBubblewrapLease  *lease,
                                          SandboxState            *state,
                                          GError                 **error)
{
  g_set_object (&lease->state, state);
  if (lease->layers != NULL && lease->lowers == NULL &&
      (lease->lowers = sandbox_bubblewrap_store_lower_chain (
         self, sandbox_state_get_template_key (state), error)) == NULL)
    return FALSE;
  if (!sandbox_bubblewrap_store_assign_guest (self, lease, error) ||
      !give_workspace_to_guest (self, lease, error))
    return FALSE;
  if (lease->recovered)
    {
      remove_write_temporaries (lease);
      /* Recovery ended every sandbox of the session: the overlay work
       * directories of those that died with the owner go too. */
      if (lease->layers != NULL &&
          sandbox_bubblewrap_layering_remove_all_work (lease->layers) > 0)
        g_debug ("Removed the overlay work directories a crashed owner left in %s",
                 lease->layers);
      if (sandbox_bubblewrap_store_remove_restore_leftovers (lease) > 0)
        g_debug ("Removed what a restore a crashed owner left in %s", lease->directory);
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_store_set_layered:
 * @self: a store
 * @layered: whether sessions created from now on are layered
 *
 * Chooses how new sessions get their workspace: layered over the
 * template's data (the backend found overlayfs usable here) or copied.
 * Existing sessions keep theirs. Called by the backend before it is shared.
 */
void
sandbox_bubblewrap_store_set_layered (SandboxBubblewrapStore *self,
                                      gboolean                layered)
{
  self->overlay = layered;
}

/**
 * sandbox_bubblewrap_store_set_guest_range:
 * @self: a store
 * @range: the ids sessions' guests are given, one uid and gid each
 *
 * Gives each session's guest host ids of its own from @range, instead of
 * the one guest sandbox_bubblewrap_store_open() was given (a root host's
 * default, see sandbox-bubblewrap-guest-ids.c). A session keeps its ids
 * across stop and resume. Called by the backend before it is shared.
 */
void
sandbox_bubblewrap_store_set_guest_range (SandboxBubblewrapStore            *self,
                                          const SandboxBubblewrapGuestRange *range)
{
  self->per_session = TRUE;
  self->range = *range;
}

/**
 * sandbox_bubblewrap_store_set_workspace_quota:
 * @self: a store
 * @quota_bytes: what each new session may hold on disk, or 0 for no limit
 *
 * Gives each session created from now on a directory of its own limited
 * to @quota_bytes (see sandbox-bubblewrap-quota.c); the backend checked
 * that it can be enforced. Existing sessions keep theirs. Called by the
 * backend before it is shared.
 */
void
sandbox_bubblewrap_store_set_workspace_quota (SandboxBubblewrapStore *self,
                                              guint64                 quota_bytes)
{
  self->workspace_quota = quota_bytes;
}

/* Removes the leased session's directory without following any link the
 * guest planted, then its guest ids; templates stay. The lease goes with
 * the directory, or is released on failure. */
gboolean
sandbox_bubblewrap_store_remove_session (SandboxBubblewrapStore  *self,
                                         SandboxBubblewrapLease  *lease,
                                         GError                 **error)
{
  g_autofree char *session_id = g_path_get_basename (lease->directory);
  g_auto(SandboxBubblewrapFd) sessions_fd = -1;
  g_autoptr(GError) local_error = NULL;
  SandboxBubblewrapGuest guest = { 0 };

  sandbox_bubblewrap_store_read_guest_ids (lease->directory, &guest);
  sessions_fd = open_directory (self->sessions, &local_error);
  if (sessions_fd >= 0 && sandbox_workspace_remove_tree_at (sessions_fd, session_id, &local_error))
    {
      lease->held = FALSE;   /* the lease went with the directory */
      /* Its ids go once its directory is gone: nothing of it runs then. */
      sandbox_bubblewrap_store_release_guest_ids (self, lease->directory, &guest);
      return !self->durable || sync_fd (sessions_fd, self->sessions, error);
    }

  sandbox_bubblewrap_lease_release (lease);
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

/**
 * sandbox_bubblewrap_lease_release:
 * @lease: a leased session
 *
 * Gives up the lease; the session stays. Idempotent.
 */
void
sandbox_bubblewrap_lease_release (SandboxBubblewrapLease *lease)
{
  g_autofree char *path = NULL;

  if (!lease->held)
    return;
  lease->held = FALSE;
  path = lease_path (lease->directory);
  /* Unlinked while still locked, so nobody takes the file for stale. */
  if (unlink (path) < 0 && errno != ENOENT)
    g_warning ("Could not release the lease %s: %s", path, g_strerror (errno));
  sandbox_bubblewrap_clear_fd (&lease->lock_fd);
}

/**
 * sandbox_bubblewrap_lease_abandon:
 * @lease: a leased session
 *
 * Undoes a session that could not be opened: a newly created session's
 * directory is removed, a resumed one is kept; the lease is released.
 */
void
sandbox_bubblewrap_lease_abandon (SandboxBubblewrapLease *lease)
{
  if (lease->created)
    {
      g_auto(SandboxBubblewrapFd) sessions_fd = open_directory (lease->store->sessions, NULL);
      g_autoptr(GError) error = NULL;

      if (sessions_fd >= 0 &&
          !sandbox_workspace_remove_tree_at (sessions_fd,
                                             sandbox_state_get_session_id (lease->state), &error))
        g_warning ("Could not remove the abandoned session %s: %s",
                   lease->directory, error->message);
      else
        sandbox_bubblewrap_store_release_guest_ids (lease->store, lease->directory, &lease->guest);
      lease->held = FALSE;   /* the lease went with the directory */
    }
  sandbox_bubblewrap_lease_release (lease);
}

/**
 * sandbox_bubblewrap_lease_free:
 * @lease: (transfer full): a leased session
 *
 * Frees @lease; the lease itself must have been released or handed on.
 */
void
sandbox_bubblewrap_lease_free (SandboxBubblewrapLease *lease)
{
  if (lease == NULL)
    return;
  sandbox_bubblewrap_clear_fd (&lease->lock_fd);
  g_clear_pointer (&lease->store, sandbox_bubblewrap_store_unref);
  g_clear_object (&lease->state);
  g_free (lease->directory);
  g_free (lease->workspace);
  g_strfreev (lease->lowers);
  g_free (lease->layers);
  g_free (lease);
}
