/* sandbox-memory-store.c — templates and sessions of memory backends
 *
 * The memory driver's stand-in for the bubblewrap driver's state directory:
 * templates under their content-addressed keys, sessions under their ids,
 * each session with its workspace, its saved #SandboxState and its lease.
 * The checks and their order are the core's session protocol
 * (sandbox-backend-protocol.c), which calls the steps below, so a test over
 * the memory driver sees the errors an application would see with
 * bubblewrap.
 *
 * A store without a state directory belongs to one backend object. Stores
 * with a state directory are shared by every memory backend of the process
 * with the same (lexically canonical) state directory and name, the way two
 * bubblewrap backends over one directory see the same sessions; they live as
 * long as the process. Nothing is ever written to disk.
 *
 * A snapshot is a template too: a copy of a session's workspace under a
 * key over its parent (the key the session was created from) and its
 * files, with its parent recorded, so a session's line and what depends
 * on a template are known, as in the bubblewrap store.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <unistd.h>

#include "sandbox-memory-store.h"

struct _SandboxMemoryStore
{
  GMutex      lock;
  char       *backend_name;
  GHashTable *templates;   /* key → SandboxMemoryWorkspace */
  GHashTable *template_names; /* key → the name it was prewarmed with */
  GHashTable *parents;     /* snapshot key → the key it lies over */
  GHashTable *sessions;    /* session id → SessionRecord */
};

typedef struct
{
  SandboxState           *state;
  SandboxMemoryWorkspace *workspace;
  gboolean                leased;
} SessionRecord;

static void
session_record_free (gpointer data)
{
  SessionRecord *record = data;

  g_clear_object (&record->state);
  g_clear_pointer (&record->workspace, sandbox_memory_workspace_unref);
  g_free (record);
}

static void
sandbox_memory_store_free (SandboxMemoryStore *self)
{
  g_clear_pointer (&self->templates, g_hash_table_unref);
  g_clear_pointer (&self->template_names, g_hash_table_unref);
  g_clear_pointer (&self->parents, g_hash_table_unref);
  g_clear_pointer (&self->sessions, g_hash_table_unref);
  g_clear_pointer (&self->backend_name, g_free);
  g_mutex_clear (&self->lock);
}

/**
 * sandbox_memory_store_new:
 * @backend_name: the name of the backend the store belongs to
 *
 * Creates an empty store for one backend object.
 *
 * Returns: (transfer full): the new store
 */
SandboxMemoryStore *
sandbox_memory_store_new (const char *backend_name)
{
  SandboxMemoryStore *self = g_atomic_rc_box_new0 (SandboxMemoryStore);

  g_return_val_if_fail (backend_name != NULL, NULL);

  g_mutex_init (&self->lock);
  self->backend_name = g_strdup (backend_name);
  self->templates = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                           (GDestroyNotify) sandbox_memory_workspace_unref);
  self->template_names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->parents = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, session_record_free);

  return self;
}

/**
 * sandbox_memory_store_get_shared:
 * @state_directory: a backend's state directory
 * @backend_name: the backend's name
 *
 * Gives the process-wide store of @state_directory and @backend_name,
 * creating it on first use. The directory is only a name: it is made
 * absolute and lexically canonical, never created or read.
 *
 * Returns: (transfer full): the shared store
 */
SandboxMemoryStore *
sandbox_memory_store_get_shared (const char *state_directory,
                                 const char *backend_name)
{
  static GMutex registry_lock;
  static GHashTable *registry;   /* directory + name digest → store */
  g_autofree char *directory = NULL;
  g_autofree char *name_digest = NULL;
  g_autofree char *key = NULL;
  SandboxMemoryStore *store;

  g_return_val_if_fail (state_directory != NULL, NULL);
  g_return_val_if_fail (backend_name != NULL, NULL);

  /* The same layout as the bubblewrap store, <root>/<sha256(name)>, so two
   * names under one directory stay apart. */
  directory = g_canonicalize_filename (state_directory, NULL);
  name_digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, backend_name, -1);
  key = g_build_filename (directory, name_digest, NULL);

  g_mutex_lock (&registry_lock);
  if (registry == NULL)
    registry = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                      (GDestroyNotify) sandbox_memory_store_unref);
  store = g_hash_table_lookup (registry, key);
  if (store == NULL)
    {
      store = sandbox_memory_store_new (backend_name);
      g_hash_table_insert (registry, g_steal_pointer (&key), store);
    }
  sandbox_memory_store_ref (store);
  g_mutex_unlock (&registry_lock);

  return store;
}

/**
 * sandbox_memory_store_ref:
 * @self: a store
 *
 * Returns: (transfer full): @self, with one more reference
 */
SandboxMemoryStore *
sandbox_memory_store_ref (SandboxMemoryStore *self)
{
  return g_atomic_rc_box_acquire (self);
}

/**
 * sandbox_memory_store_unref:
 * @self: (transfer full): a store
 *
 * Drops a reference; the last one frees every template and session.
 */
void
sandbox_memory_store_unref (SandboxMemoryStore *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify) sandbox_memory_store_free);
}

/* Copies one entry of @template_ into @workspace. */
static gboolean
copy_template_entry (SandboxTemplate         *template_,
                     const char              *canonical,
                     SandboxMemoryWorkspace  *workspace,
                     GError                 **error)
{
  const char *relative = sandbox_path_relative (canonical);
  g_autoptr(GBytes) contents = NULL;

  switch (sandbox_template_query_file_type (template_, canonical))
    {
    case G_FILE_TYPE_REGULAR:
      contents = sandbox_template_load_bytes (template_, canonical, NULL, error);
      return contents != NULL &&
             sandbox_memory_workspace_write (workspace, relative, contents,
                                             (sandbox_template_get_file_flags (template_, canonical) &
                                              SANDBOX_TEMPLATE_FILE_EXECUTABLE) != 0,
                                             error);
    case G_FILE_TYPE_SYMBOLIC_LINK:
      return sandbox_memory_workspace_make_symlink (workspace, relative,
                                                    sandbox_template_lookup_symlink (template_,
                                                                                     canonical),
                                                    error);
    case G_FILE_TYPE_DIRECTORY:
      return sandbox_memory_workspace_make_directory (workspace, relative, error);
    default:
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template entry %s is of no kind a workspace can hold", canonical);
      return FALSE;
    }
}

static SandboxMemoryWorkspace *
workspace_new_from_template (SandboxTemplate  *template_,
                             GError          **error)
{
  g_autoptr(SandboxMemoryWorkspace) workspace = sandbox_memory_workspace_new ();
  g_auto(GStrv) paths = sandbox_template_list_paths (template_);

  for (guint i = 0; paths[i] != NULL; i++)
    {
      g_autofree char *canonical = sandbox_path_canonicalize (paths[i], error);

      if (canonical == NULL)
        return NULL;
      if (g_str_equal (canonical, SANDBOX_WORKSPACE))
        {
          sandbox_set_error_template_root (error);
          return NULL;
        }
      if (!copy_template_entry (template_, canonical, workspace, error))
        return NULL;
    }

  return g_steal_pointer (&workspace);
}

/**
 * sandbox_memory_store_prewarm:
 * @self: a store
 * @template_: the template to store
 * @reused: (out): set to whether the key was already stored
 * @error: return location for a #GError, or %NULL
 *
 * Stores a snapshot of @template_ under its content-addressed key, computed
 * with the store's backend name. Storing an identical template again reuses
 * the stored one.
 *
 * Returns: (transfer full): the template key, or %NULL with @error set
 *   (%SANDBOX_ERROR_PATH or %G_IO_ERROR_NOT_DIRECTORY when the template's
 *   files cannot form a tree)
 */
char *
sandbox_memory_store_prewarm (SandboxMemoryStore  *self,
                              SandboxTemplate     *template_,
                              gboolean            *reused,
                              GError             **error)
{
  g_autofree char *key = NULL;
  g_autoptr(SandboxMemoryWorkspace) workspace = NULL;
  gboolean stored;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (template_), NULL);
  g_return_val_if_fail (reused != NULL, NULL);

  key = sandbox_template_compute_key (template_, self->backend_name, error);
  if (key == NULL)
    return NULL;

  g_mutex_lock (&self->lock);
  stored = g_hash_table_contains (self->templates, key);
  g_mutex_unlock (&self->lock);

  if (stored)
    {
      *reused = TRUE;
      return g_steal_pointer (&key);
    }

  /* Built outside the lock; a concurrent prewarm of the same key that wins
   * the race stored identical contents, which is fine. */
  workspace = workspace_new_from_template (template_, error);
  if (workspace == NULL)
    return NULL;

  g_mutex_lock (&self->lock);
  if (!g_hash_table_contains (self->templates, key))
    {
      g_hash_table_insert (self->templates, g_strdup (key), g_steal_pointer (&workspace));
      g_hash_table_insert (self->template_names, g_strdup (key),
                           g_strdup (sandbox_template_get_name (template_)));
    }
  g_mutex_unlock (&self->lock);

  *reused = FALSE;
  return g_steal_pointer (&key);
}

/* The session protocol's steps (sandbox-backend-protocol.c runs them in
 * the reference's order; each takes the lock on its own). ---------------- */

static SessionRecord *
lookup_session_locked (SandboxMemoryStore  *self,
                       const char          *session_id,
                       GError             **error)
{
  SessionRecord *record = g_hash_table_lookup (self->sessions, session_id);

  if (record == NULL)
    sandbox_set_error_unknown_session (error, session_id);
  return record;
}

/* Whether a template (@sessions FALSE) or a session is stored under @key. */
gboolean
sandbox_memory_store_has (SandboxMemoryStore *self,
                          gboolean            sessions,
                          const char         *key)
{
  gboolean found;

  g_mutex_lock (&self->lock);
  found = g_hash_table_contains (sessions ? self->sessions : self->templates, key);
  g_mutex_unlock (&self->lock);
  return found;
}

/* Takes a session's lease: NOT_FOUND, or BUSY while it is held. */
gboolean
sandbox_memory_store_take_lease (SandboxMemoryStore  *self,
                                 const char          *session_id,
                                 GError             **error)
{
  SessionRecord *record;
  gboolean taken;

  g_mutex_lock (&self->lock);
  record = lookup_session_locked (self, session_id, error);
  taken = record != NULL && !record->leased;
  if (taken)
    record->leased = TRUE;
  else if (record != NULL)
    sandbox_set_error_has_owner (error);
  g_mutex_unlock (&self->lock);
  return taken;
}

/* Stores a new session under @state's id, its workspace a copy of the
 * template's, with its lease held; NOT_FOUND if the template went meanwhile. */
gboolean
sandbox_memory_store_new_session (SandboxMemoryStore  *self,
                                  SandboxState        *state,
                                  GError             **error)
{
  const char *template_key = sandbox_state_get_template_key (state);
  SandboxMemoryWorkspace *template_workspace;
  SessionRecord *record = NULL;

  g_mutex_lock (&self->lock);
  template_workspace = g_hash_table_lookup (self->templates, template_key);
  if (template_workspace != NULL)
    {
      record = g_new0 (SessionRecord, 1);
      record->state = g_object_ref (state);
      record->workspace = sandbox_memory_workspace_copy (template_workspace);
      record->leased = TRUE;
      g_hash_table_insert (self->sessions, g_strdup (sandbox_state_get_session_id (state)),
                           record);
    }
  g_mutex_unlock (&self->lock);
  return record != NULL || sandbox_set_error_unknown_template (error, template_key);
}

/* Releases a session's lease; a deleted session is ignored. */
void
sandbox_memory_store_release_lease (SandboxMemoryStore *self,
                                    const char         *session_id)
{
  SessionRecord *record;

  g_return_if_fail (self != NULL);
  g_return_if_fail (session_id != NULL);

  g_mutex_lock (&self->lock);
  record = g_hash_table_lookup (self->sessions, session_id);
  if (record != NULL)
    record->leased = FALSE;
  g_mutex_unlock (&self->lock);
}

/* Removes a session whose lease the caller holds, keeping templates. */
void
sandbox_memory_store_remove_session (SandboxMemoryStore *self,
                                     const char         *session_id)
{
  g_mutex_lock (&self->lock);
  g_hash_table_remove (self->sessions, session_id);
  g_mutex_unlock (&self->lock);
}

/* The store's own view ------------------------------------------------------ */

/* A memory session's lease is held by a handle of this very process. */
static SandboxLeaseOwner *
lease_owner_of (SessionRecord *record)
{
  return record->leased ? sandbox_lease_owner_new ((int) getpid (), NULL, TRUE) : NULL;
}

static SandboxSessionInfo *
session_info_new (SessionRecord *record)
{
  g_autoptr(SandboxLeaseOwner) owner = lease_owner_of (record);
  guint64 n_files, n_bytes;

  sandbox_memory_workspace_measure (record->workspace, &n_files, &n_bytes);
  return sandbox_session_info_new (record->state, owner, n_files, n_bytes);
}

/**
 * sandbox_memory_store_list_sessions:
 * @self: a store
 *
 * Returns: (transfer container) (element-type SandboxSessionInfo): the sessions
 */
GPtrArray *
sandbox_memory_store_list_sessions (SandboxMemoryStore *self)
{
  GPtrArray *sessions = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer record;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->sessions);
  while (g_hash_table_iter_next (&iter, NULL, &record))
    g_ptr_array_add (sessions, session_info_new (record));
  g_mutex_unlock (&self->lock);
  return sessions;
}

static guint
count_sessions_of_locked (SandboxMemoryStore *self,
                          const char         *template_key)
{
  GHashTableIter iter;
  gpointer value;
  guint n = 0;

  g_hash_table_iter_init (&iter, self->sessions);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      SessionRecord *record = value;

      if (g_str_equal (sandbox_state_get_template_key (record->state), template_key))
        n++;
    }
  return n;
}

static guint
count_snapshots_of_locked (SandboxMemoryStore *self,
                           const char         *key)
{
  GHashTableIter iter;
  gpointer parent;
  guint n = 0;

  g_hash_table_iter_init (&iter, self->parents);
  while (g_hash_table_iter_next (&iter, NULL, &parent))
    n += g_str_equal (parent, key);
  return n;
}

/**
 * sandbox_memory_store_list_templates:
 * @self: a store
 *
 * Lists templates and snapshots with their lineage; a snapshot's size is
 * its whole tree's (it holds every file, not a layer).
 *
 * Returns: (transfer container) (element-type SandboxTemplateInfo): the templates
 */
GPtrArray *
sandbox_memory_store_list_templates (SandboxMemoryStore *self)
{
  GPtrArray *templates = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer key, workspace;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->templates);
  while (g_hash_table_iter_next (&iter, &key, &workspace))
    {
      guint64 n_files, n_bytes;

      sandbox_memory_workspace_measure (workspace, &n_files, &n_bytes);
      g_ptr_array_add (templates,
                       sandbox_template_info_new_with_lineage (
                         key, g_hash_table_lookup (self->template_names, key),
                         g_hash_table_lookup (self->parents, key), n_files, n_bytes,
                         count_sessions_of_locked (self, key),
                         count_snapshots_of_locked (self, key)));
    }
  g_mutex_unlock (&self->lock);
  return templates;
}

/**
 * sandbox_memory_store_lookup_state:
 * @self: a store
 * @session_id: a session id
 * @workspace: (out) (optional) (transfer full): set to the session's workspace
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the session's state, or %NULL with
 *   %SANDBOX_ERROR_NOT_FOUND
 */
SandboxState *
sandbox_memory_store_lookup_state (SandboxMemoryStore       *self,
                                   const char               *session_id,
                                   SandboxMemoryWorkspace  **workspace,
                                   GError                  **error)
{
  SessionRecord *record;
  SandboxState *state = NULL;

  g_mutex_lock (&self->lock);
  record = lookup_session_locked (self, session_id, error);
  if (record != NULL)
    state = g_object_ref (record->state);
  if (record != NULL && workspace != NULL)
    *workspace = sandbox_memory_workspace_ref (record->workspace);
  g_mutex_unlock (&self->lock);
  return state;
}

/**
 * sandbox_memory_store_query_lease_owner:
 * @self: a store
 * @session_id: a session id
 * @owner: (out) (transfer full) (nullable): set to the lease's owner, this
 *   process, or %NULL when the lease is free
 * @error: return location for a #GError
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_NOT_FOUND
 */
gboolean
sandbox_memory_store_query_lease_owner (SandboxMemoryStore  *self,
                                        const char          *session_id,
                                        SandboxLeaseOwner  **owner,
                                        GError             **error)
{
  SessionRecord *record;

  g_mutex_lock (&self->lock);
  record = lookup_session_locked (self, session_id, error);
  if (record != NULL)
    *owner = lease_owner_of (record);
  g_mutex_unlock (&self->lock);
  return record != NULL;
}

/**
 * sandbox_memory_store_delete_template:
 * @self: a store
 * @template_key: a template key
 * @error: return location for a #GError
 *
 * Removes a template (or snapshot) no session was created from and no
 * snapshot lies over.
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_NOT_FOUND or
 *   %SANDBOX_ERROR_BUSY (sessions or snapshots of the template exist)
 */
gboolean
sandbox_memory_store_delete_template (SandboxMemoryStore  *self,
                                      const char          *template_key,
                                      GError             **error)
{
  guint n_sessions = 0, n_snapshots;
  gboolean found;

  g_mutex_lock (&self->lock);
  found = g_hash_table_contains (self->templates, template_key);
  if (found)
    n_sessions = count_sessions_of_locked (self, template_key);
  n_snapshots = count_snapshots_of_locked (self, template_key);
  if (found && n_sessions == 0 && n_snapshots == 0)
    {
      g_hash_table_remove (self->templates, template_key);
      g_hash_table_remove (self->template_names, template_key);
      g_hash_table_remove (self->parents, template_key);
    }
  g_mutex_unlock (&self->lock);

  if (!found)
    return sandbox_set_error_unknown_template (error, template_key);
  if (n_sessions > 0 || n_snapshots > 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "Sandbox template %s is used by %u stored sessions and %u stored snapshots; "
                   "delete them first", template_key, n_sessions, n_snapshots);
      return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_memory_store_snapshot:
 * @self: a store
 * @session_id: a live session, no command of which runs
 * @error: return location for a #GError
 *
 * Stores a copy of the session's workspace as a snapshot over the key it
 * was created from (see above); the same files over the same parent are
 * stored once.
 *
 * Returns: (transfer full): the snapshot's key, or %NULL with
 *   %SANDBOX_ERROR_NOT_FOUND
 */
char *
sandbox_memory_store_snapshot (SandboxMemoryStore  *self,
                               const char          *session_id,
                               GError             **error)
{
  g_autoptr(SandboxMemoryWorkspace) copy = NULL;
  SessionRecord *record;
  const char *parent;
  char *key = NULL;

  g_mutex_lock (&self->lock);
  record = lookup_session_locked (self, session_id, error);
  parent = record != NULL ? sandbox_state_get_template_key (record->state) : NULL;
  if (record != NULL)
    {
      copy = sandbox_memory_workspace_copy (record->workspace);
      key = sandbox_memory_workspace_compute_key (copy, parent);
    }
  if (key != NULL && !g_hash_table_contains (self->templates, key))
    {
      const char *name = g_hash_table_lookup (self->template_names, parent);

      g_hash_table_insert (self->templates, g_strdup (key), g_steal_pointer (&copy));
      g_hash_table_insert (self->template_names, g_strdup (key),
                           g_strdup_printf ("%s (snapshot)", name != NULL ? name : parent));
      g_hash_table_insert (self->parents, g_strdup (key), g_strdup (parent));
    }
  g_mutex_unlock (&self->lock);
  return key;
}

/**
 * sandbox_memory_store_restore:
 * @self: a store
 * @session_id: a live session, no command of which runs
 * @key: the key it was created from, or a snapshot over that key
 * @error: return location for a #GError
 *
 * Replaces the files of the session's workspace, in place, with those of
 * @key.
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_NOT_FOUND or
 *   %SANDBOX_ERROR_INVALID (@key is outside the session's line)
 */
gboolean
sandbox_memory_store_restore (SandboxMemoryStore  *self,
                              const char          *session_id,
                              const char          *key,
                              GError             **error)
{
  SandboxMemoryWorkspace *source = NULL;
  SessionRecord *record;
  const char *base = NULL;

  g_mutex_lock (&self->lock);
  record = lookup_session_locked (self, session_id, error);
  if (record != NULL)
    {
      base = sandbox_state_get_template_key (record->state);
      source = g_hash_table_lookup (self->templates, key);
    }
  if (source == NULL && record != NULL)
    sandbox_set_error_unknown_template (error, key);
  else if (source != NULL && !g_str_equal (key, base) &&
           g_strcmp0 (g_hash_table_lookup (self->parents, key), base) != 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s is not a snapshot over this session's template %s: a session restores "
                   "to its template or to a snapshot taken over it", key, base);
      source = NULL;
    }
  if (source != NULL)
    sandbox_memory_workspace_assign (record->workspace, source);
  g_mutex_unlock (&self->lock);
  return source != NULL;
}
