/* sandbox-cluster-backend-sessions.c — a session's life on this host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The hooks of the session protocol SandboxBackendBase runs. A new session
 * is a record committed under this host's claim (no checkpoint yet: the
 * template is its content). A resume (and a recovery: etcd's lease frees
 * a dead owner) claims the session (BUSY while another host owns it),
 * reads the record, then takes the fast path — this host's bubblewrap
 * store has the session exactly at the record's checkpoint (a marker
 * written after each commit here and removed while the session is live)
 * — or imports the checkpoint (or a fresh template copy, for a session
 * never checkpointed); then bubblewrap resumes it. delete: claim again,
 * fenced delete of the record, then bubblewrap's delete; the other hosts'
 * copies go when they next look (sandbox-cluster-deleted-private.h).
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include <glib/gstdio.h>

#include "sandbox-cluster-backend-fields-private.h"
#include "sandbox-cluster-checkpoint-private.h"
#include "sandbox-cluster-deleted-private.h"
#include "sandbox-cluster-handle-private.h"
#include "sandbox-cluster-owner-private.h"

/* A marker's contents for a local copy made from the template alone. */
#define MARKER_TEMPLATE "template"

/* Markers ------------------------------------------------------------------ */

static char *
marker_path (SandboxClusterBackend *self,
             const char            *session_id)
{
  return g_build_filename (self->markers, session_id, NULL);
}

/* What this host's copy of the session is at: a manifest digest,
 * MARKER_TEMPLATE, or NULL when it is not known to be at any checkpoint. */
static char *
read_marker (SandboxClusterBackend *self,
             const char            *session_id)
{
  g_autofree char *path = marker_path (self, session_id);
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;
  return contents;
}

static gboolean
write_marker (SandboxClusterBackend  *self,
              const char             *session_id,
              const char             *digest,
              GError                **error)
{
  g_autofree char *path = marker_path (self, session_id);

  return g_file_set_contents_full (path, digest != NULL ? digest : MARKER_TEMPLATE, -1,
                                   G_FILE_SET_CONTENTS_CONSISTENT, 0600, error);
}

static void
remove_marker (SandboxClusterBackend *self,
               const char            *session_id)
{
  g_autofree char *path = marker_path (self, session_id);

  if (g_unlink (path) < 0 && errno != ENOENT)
    g_warning ("Could not remove %s: %s", path, g_strerror (errno));
}

/* Checkpoints, release, delete --------------------------------------------- */

/* Walks the session's workspace into the blob store and commits the
 * manifest to its record, fenced on @epoch: a host that has lost its lease
 * (or whose epoch another owner has replaced) publishes nothing,
 * SANDBOX_ERROR_STOPPED. Returns: (transfer full): the committed manifest's
 * digest, or NULL */
static char *
checkpoint_and_commit (SandboxClusterBackend  *self,
                       SandboxState           *state,
                       gint64                  epoch,
                       GCancellable           *cancellable,
                       GError                **error)
{
  const char *session_id = sandbox_state_get_session_id (state);
  g_autofree char *digest = NULL;
  int fd;

  fd = sandbox_backend_open_session_files (self->bubblewrap, session_id, cancellable, error);
  if (fd < 0)
    return NULL;
  digest = sandbox_cluster_checkpoint_create (self->blobs, fd, session_id, NULL, cancellable,
                                              error);
  g_close (fd, NULL);

  /* Blobs and manifest are durable: the fenced commit is the commit point. */
  if (digest == NULL ||
      !sandbox_cluster_host_commit (self->host, session_id, epoch,
                                    sandbox_state_get_template_key (state), digest,
                                    cancellable, error))
    return NULL;
  return g_steal_pointer (&digest);
}

/* A stop's checkpoint: no guest changes the workspace any more, so this
 * host's copy is exactly at it, and the marker says so (the fast path of
 * the next resume here). */
gboolean
sandbox_cluster_backend_checkpoint_stopped (SandboxClusterBackend  *self,
                                            SandboxState           *state,
                                            gint64                  epoch,
                                            GCancellable           *cancellable,
                                            GError                **error)
{
  g_autofree char *digest = checkpoint_and_commit (self, state, epoch, cancellable, error);

  return digest != NULL &&
         write_marker (self, sandbox_state_get_session_id (state), digest, error);
}

/* A live session's checkpoint: the session runs on past it, so its copy
 * here is not at it and gets no marker (a live session has none: see
 * sandbox_cluster_backend_new_handle()); a resume here after a crash
 * imports it. */
gboolean
sandbox_cluster_backend_checkpoint_live (SandboxClusterBackend  *self,
                                         SandboxState           *state,
                                         gint64                  epoch,
                                         GCancellable           *cancellable,
                                         GError                **error)
{
  g_autofree char *digest = checkpoint_and_commit (self, state, epoch, cancellable, error);

  return digest != NULL;
}

gboolean
sandbox_cluster_backend_release (SandboxClusterBackend  *self,
                                 SandboxState           *state,
                                 gint64                  epoch,
                                 GCancellable           *cancellable,
                                 GError                **error)
{
  return sandbox_cluster_host_release (self->host, sandbox_state_get_session_id (state), epoch,
                                       cancellable, error);
}

/* The import's SandboxWorkspaceFillFunc: the checkpoint, materialised, if
 * it is one of this session (see sandbox-cluster-checkpoint-private.h). */
static gboolean
materialise_checkpoint (int            parent_fd,
                        const char    *name,
                        gpointer       user_data,
                        GCancellable  *cancellable,
                        GError       **error)
{
  const char *const *args = user_data;   /* { backend, digest, session id } */
  SandboxClusterBackend *self = (SandboxClusterBackend *) args[0];

  if (sandbox_cluster_checkpoint_materialise (self->blobs, args[1], args[2], parent_fd, name,
                                              cancellable, error))
    return TRUE;
  g_prefix_error (error, "Sandbox session %s cannot resume from its record's \"manifest\": ",
                  args[2]);
  return FALSE;
}

/*
 * bring_local_copy:
 * @self: the backend
 * @state: the session, claimed by this host
 * @digest: (nullable): the record's checkpoint; %NULL: never checkpointed
 *
 * Makes this host's bubblewrap store hold the session as of @digest: as it
 * is when the marker says so (the fast path), else imported. Whatever an
 * earlier process of this host left of a copy at another point goes first
 * (a recover ends what is left of its sandboxes and its lease).
 *
 * Returns: %TRUE when the store holds the session at @digest
 */
static gboolean
bring_local_copy (SandboxClusterBackend  *self,
                  SandboxState           *state,
                  const char             *digest,
                  GCancellable           *cancellable,
                  GError                **error)
{
  const char *session_id = sandbox_state_get_session_id (state);
  g_autofree char *marker = read_marker (self, session_id);
  g_autoptr(SandboxState) local = sandbox_backend_lookup_state (self->bubblewrap, session_id,
                                                                cancellable, NULL);
  gconstpointer args[] = { self, digest, session_id };
  SandboxWorkspaceFillFunc populate = digest != NULL ? materialise_checkpoint : NULL;

  /* This host stopped the session at a checkpoint, and no owner writes a
   * record without one after that: the etcd record was replaced. */
  if (digest == NULL && marker != NULL && strcmp (marker, MARKER_TEMPLATE) != 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox session %s's record in etcd is refused: its \"manifest\" is null, "
                   "but this host stopped the session at checkpoint %s", session_id, marker);
      return FALSE;
    }

  if (local != NULL && marker != NULL &&
      g_strcmp0 (marker, digest != NULL ? digest : MARKER_TEMPLATE) == 0)
    return TRUE;

  remove_marker (self, session_id);
  if (local != NULL)
    {
      g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
      g_autoptr(SandboxHandle) stale = sandbox_backend_recover_session (self->bubblewrap, state,
                                                                        deny, cancellable, error);

      if (stale == NULL || !sandbox_handle_stop (stale, cancellable, error))
        return FALSE;
    }
  /* check_template has fetched the template if this host lacked it. */
  return sandbox_backend_import_session (self->bubblewrap, state, populate, (gpointer) args,
                                         cancellable, error);
}

/* The session protocol's hooks --------------------------------------------
 *
 * A session is stored when etcd holds its record; its lease is this
 * host's claim of the record's owner key, whose create revision is the
 * epoch every later write is fenced on. The claim waits in the base
 * (sandbox_backend_base_hold_lease()) from take_lease or new_session until
 * new_handle gives its epoch to the handle, or release_lease or
 * remove_session ends it; with it, the checkpoint load_state read under it.
 */
typedef struct
{
  gint64 epoch;
  char *digest;   /* NULL: never checkpointed (or a new session) */
} Claim;

static void
claim_free (Claim *claim)
{
  g_free (claim->digest);
  g_free (claim);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Claim, claim_free)

static void
hold_claim (SandboxClusterBackend *self,
            const char            *session_id,
            Claim                 *claim)
{
  sandbox_backend_base_hold_lease (SANDBOX_BACKEND_BASE (self), session_id, claim,
                                   (GDestroyNotify) claim_free);
}

/* Claims @session_id in etcd; the claim waits in the base. */
static gboolean
claim_session (SandboxClusterBackend  *self,
               const char             *session_id,
               gint64                 *epoch,
               GCancellable           *cancellable,
               GError                **error)
{
  Claim *claim;

  if (!sandbox_cluster_host_claim (self->host, session_id, epoch, cancellable, error))
    return FALSE;
  claim = g_new0 (Claim, 1);
  claim->epoch = *epoch;
  hold_claim (self, session_id, claim);
  return TRUE;
}

/* Also take_over_lease: etcd's lease has freed the claim of a host that
 * died, so a recovery claims as a resume does (BUSY while the host lives). */
static gboolean
sandbox_cluster_backend_take_lease (SandboxBackendBase  *base,
                                    const char          *session_id,
                                    GCancellable        *cancellable,
                                    GError             **error)
{
  gint64 epoch;

  return claim_session (SANDBOX_CLUSTER_BACKEND (base), session_id, &epoch, cancellable,
                        error);
}

static void
sandbox_cluster_backend_release_lease (SandboxBackendBase *base,
                                       const char         *session_id)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (base);
  g_autoptr(Claim) claim = sandbox_backend_base_steal_lease (base, session_id);

  /* Best effort: the owner key would go with this host's lease anyway. */
  if (claim != NULL)
    sandbox_cluster_host_release (self->host, session_id, claim->epoch, NULL, NULL);
}

/* Whether etcd holds a record is only known under a claim (another host
 * may be deleting it): load_state answers NOT_FOUND then, and the delete
 * of a session gone meanwhile removes only its claim. */
static gboolean
sandbox_cluster_backend_has_session (SandboxBackendBase *base,
                                     const char         *session_id)
{
  return TRUE;
}

/* A session's state is the cluster's: from its etcd record, whatever host
 * last had it. Returns: (transfer full) (nullable): the record, with a
 * template key (a record that is only an owner key is no session) */
static SandboxClusterSessionRecord *
read_session (SandboxClusterBackend  *self,
              const char             *session_id,
              GCancellable           *cancellable,
              SandboxState          **state,
              GError                **error)
{
  g_autoptr(SandboxClusterSessionRecord) record =
    sandbox_cluster_host_read_session (self->host, session_id, cancellable, error);

  if (record != NULL && record->template_key == NULL)
    sandbox_set_error_unknown_session (error, session_id);
  if (record == NULL || record->template_key == NULL)
    return NULL;
  *state = sandbox_state_new (sandbox_backend_base_get_name (SANDBOX_BACKEND_BASE (self)),
                              session_id, record->template_key, error);
  return *state != NULL ? g_steal_pointer (&record) : NULL;
}

/* SandboxBackend::lookup_state: the record, claimed or not (the base's
 * would call load_state, which runs under a claim). */
static SandboxState *
sandbox_cluster_backend_lookup_state (SandboxBackend  *backend,
                                      const char      *session_id,
                                      GCancellable    *cancellable,
                                      GError         **error)
{
  SandboxState *state = NULL;
  g_autoptr(SandboxClusterSessionRecord) record =
    read_session (SANDBOX_CLUSTER_BACKEND (backend), session_id, cancellable, &state, error);

  return state;
}

/* Under this host's claim: the record must predate the claim, and its
 * checkpoint is what new_handle brings here. */
static SandboxState *
sandbox_cluster_backend_load_state (SandboxBackendBase  *base,
                                    const char          *session_id,
                                    GCancellable        *cancellable,
                                    GError             **error)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (base);
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(SandboxClusterSessionRecord) record =
    read_session (self, session_id, cancellable, &state, &local_error);
  Claim *claim = sandbox_backend_base_steal_lease (base, session_id);

  g_return_val_if_fail (claim != NULL, NULL);
  hold_claim (self, session_id, claim);
  /* No record under this host's claim: deleted (ids are never reused), so
   * a copy this host still has is removed, never resumed. */
  if (g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
    sandbox_cluster_deleted_remove_local (self, session_id, cancellable);
  if (record == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  if (!sandbox_cluster_session_record_check_claimed (record, claim->epoch, error))
    return NULL;
  claim->digest = g_strdup (record->manifest_digest);
  return g_steal_pointer (&state);
}

/* A new session is its first record (no checkpoint: the template is its
 * content), committed under this host's claim of its fresh id, which
 * nobody else can own. new_handle makes the local copy, as for a resume. */
static gboolean
sandbox_cluster_backend_new_session (SandboxBackendBase  *base,
                                     SandboxState        *state,
                                     GCancellable        *cancellable,
                                     GError             **error)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (base);
  const char *session_id = sandbox_state_get_session_id (state);
  gint64 epoch;

  if (!claim_session (self, session_id, &epoch, cancellable, error))
    return FALSE;
  if (sandbox_cluster_host_commit (self->host, session_id, epoch,
                                   sandbox_state_get_template_key (state), NULL, cancellable,
                                   error))
    return TRUE;
  sandbox_cluster_backend_release_lease (base, session_id);
  return FALSE;
}

/* This host's bubblewrap store gets the session at the record's
 * checkpoint, then bubblewrap resumes it (taking over a lease a crashed
 * process of this host left: the claim already excludes every other
 * owner); the handle keeps the claim's epoch. */
static SandboxHandle *
sandbox_cluster_backend_new_handle (SandboxBackendBase    *base,
                                    SandboxState          *state,
                                    SandboxNetworkPolicy  *policy,
                                    GCancellable          *cancellable,
                                    GError               **error)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (base);
  const char *session_id = sandbox_state_get_session_id (state);
  g_autoptr(Claim) claim = sandbox_backend_base_steal_lease (base, session_id);
  g_autoptr(SandboxHandle) inner = NULL;
  SandboxHandle *handle;

  g_return_val_if_fail (claim != NULL, NULL);

  if (bring_local_copy (self, state, claim->digest, cancellable, error))
    {
      /* The session is live here from now on: the marker goes before it runs. */
      remove_marker (self, session_id);
      inner = sandbox_backend_recover_session (self->bubblewrap, state, policy, cancellable,
                                               error);
    }
  if (inner == NULL)
    {
      /* The base's release_lease releases it. */
      hold_claim (self, session_id, g_steal_pointer (&claim));
      return NULL;
    }
  handle = sandbox_cluster_handle_new (self, inner, claim->epoch);
  sandbox_cluster_backend_track (self, handle);
  return handle;
}

/* The fenced delete of everything under the session in etcd; the handle
 * then deletes bubblewrap's copy. A delete that failed (cancelled, say)
 * holds the claim again for the base's release_lease. */
static gboolean
sandbox_cluster_backend_remove_session (SandboxBackendBase  *base,
                                        const char          *session_id,
                                        GCancellable        *cancellable,
                                        GError             **error)
{
  SandboxClusterBackend *self = SANDBOX_CLUSTER_BACKEND (base);
  g_autoptr(Claim) claim = sandbox_backend_base_steal_lease (base, session_id);

  if (!sandbox_cluster_host_delete (self->host, session_id, claim->epoch, cancellable, error))
    {
      hold_claim (self, session_id, g_steal_pointer (&claim));
      return FALSE;
    }
  remove_marker (self, session_id);
  return TRUE;
}

/* Called from class_init. */
void
sandbox_cluster_backend_class_init_sessions (SandboxBackendBaseClass *base_class)
{
  base_class->has_session = sandbox_cluster_backend_has_session;
  base_class->take_lease = sandbox_cluster_backend_take_lease;
  base_class->take_over_lease = sandbox_cluster_backend_take_lease;
  base_class->release_lease = sandbox_cluster_backend_release_lease;
  base_class->load_state = sandbox_cluster_backend_load_state;
  base_class->new_session = sandbox_cluster_backend_new_session;
  base_class->new_handle = sandbox_cluster_backend_new_handle;
  base_class->remove_session = sandbox_cluster_backend_remove_session;
}

/* Called from the SandboxBackend interface init. */
void
sandbox_cluster_backend_implement_sessions (SandboxBackendInterface *iface)
{
  sandbox_backend_base_implement_sessions (iface);
  iface->lookup_state = sandbox_cluster_backend_lookup_state;
}
