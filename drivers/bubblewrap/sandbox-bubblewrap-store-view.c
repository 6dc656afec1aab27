/* sandbox-bubblewrap-store-view.c — the store's own view: listing and looking up
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

#include "sandbox-bubblewrap-store-layout-private.h"

/* The store's own view ------------------------------------------------------
 *
 * What sandbox_backend_list_sessions() and its siblings report, read from
 * the store's layout so that no tool has to know it. Workspaces are shaped
 * by guests: measuring one walks it by descriptor and never follows a link.
 */

/* Deeper trees are refused rather than exhausting file descriptors. */
#define MEASURE_MAX_DEPTH 256

/* Adds the non-directory entries under @dir_fd, and the bytes of its
 * regular files, to the counts; takes ownership of @dir_fd. Entries that
 * vanish or change kind while we walk are skipped. */
static gboolean
measure_directory (int          dir_fd,
                   const char  *path,
                   guint        depth,
                   guint64     *n_files,
                   guint64     *n_bytes,
                   GError     **error)
{
  DIR *dir;
  struct dirent *entry;
  gboolean ok = TRUE;

  if (depth > MEASURE_MAX_DEPTH)
    {
      close (dir_fd);
      return set_errno_error (error, ELOOP, "Could not measure", path);
    }
  dir = fdopendir (dir_fd);
  if (dir == NULL)
    {
      int saved_errno = errno;

      close (dir_fd);
      return set_errno_error (error, saved_errno, "Could not read directory", path);
    }
  while (ok && (errno = 0, entry = readdir (dir)) != NULL)
    {
      struct stat st;
      int child_fd;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      if (fstatat (dirfd (dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue;   /* removed while we walk */
      if (!S_ISDIR (st.st_mode))
        {
          *n_files += 1;
          if (S_ISREG (st.st_mode))
            *n_bytes += (guint64) st.st_size;
          continue;
        }
      child_fd = openat (dirfd (dir), entry->d_name,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child_fd >= 0)
        {
          g_autofree char *child = g_build_filename (path, entry->d_name, NULL);

          ok = measure_directory (child_fd, child, depth + 1, n_files, n_bytes, error);
        }
    }
  if (ok && errno != 0)
    ok = set_errno_error (error, errno, "Could not read directory", path);
  closedir (dir);
  return ok;
}

/*
 * sandbox_bubblewrap_store_measure_tree:
 * @path: a tree of the store (a template's data, a session's workspace)
 * @n_files: (out): its non-directory entries
 * @n_bytes: (out): the bytes of its regular files
 * @error: return location for a #GError
 *
 * What a [class@Sandbox.TemplateInfo] or [class@Sandbox.SessionInfo] of
 * the tree says: the same counts a copy of it reports
 * (sandbox_workspace_copy_tree_with_progress_at()).
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_bubblewrap_store_measure_tree (const char  *path,
                                       guint64     *n_files,
                                       guint64     *n_bytes,
                                       GError     **error)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  *n_files = 0;
  *n_bytes = 0;
  if (fd < 0)
    return set_errno_error (error, errno, "Could not open directory", path);
  return measure_directory (fd, path, 0, n_files, n_bytes, error);
}

/*
 * sandbox_bubblewrap_store_measure_template:
 * @self: a store
 * @key: a stored template's key
 * @n_files: (out): its non-directory entries
 * @n_bytes: (out): the bytes of its regular files
 * @error: return location for a #GError
 *
 * sandbox_bubblewrap_store_measure_tree() of the template's data, walked
 * the first time only: a create that reports its copy does not pay for
 * the walk again (two creates racing to be first both walk; the counts
 * are the same).
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_bubblewrap_store_measure_template (SandboxBubblewrapStore  *self,
                                           const char              *key,
                                           guint64                 *n_files,
                                           guint64                 *n_bytes,
                                           GError                 **error)
{
  g_autofree char *data = NULL;
  const guint64 *known;
  guint64 *measure;

  g_mutex_lock (&self->measures_lock);
  known = g_hash_table_lookup (self->measures, key);
  if (known != NULL)
    {
      *n_files = known[0];
      *n_bytes = known[1];
    }
  g_mutex_unlock (&self->measures_lock);
  if (known != NULL)
    return TRUE;

  data = g_build_filename (self->templates, key, "data", NULL);
  if (!sandbox_bubblewrap_store_measure_tree (data, n_files, n_bytes, error))
    return FALSE;
  measure = g_new (guint64, 2);
  measure[0] = *n_files;
  measure[1] = *n_bytes;
  g_mutex_lock (&self->measures_lock);
  g_hash_table_replace (self->measures, g_strdup (key), measure);
  g_mutex_unlock (&self->measures_lock);
  return TRUE;
}

/* The names in @directory that are ids or keys (in-flight temporaries are
 * not); a missing directory has none. */
GPtrArray *
sandbox_bubblewrap_store_list_ids (const char  *directory,
                                   GError     **error)
{
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) dir = g_dir_open (directory, 0, &local_error);
  const char *name;

  if (dir == NULL && g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    return g_steal_pointer (&ids);
  if (dir == NULL)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_file_error (local_error->code),
                   "%s", local_error->message);
      return NULL;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    if (sandbox_template_key_is_valid (name))
      g_ptr_array_add (ids, g_strdup (name));
  return g_steal_pointer (&ids);
}

/* The saved states of every stored session this store can read; a session
 * being created (no state yet) or one that is damaged is left out. */
GPtrArray *
sandbox_bubblewrap_store_collect_states (SandboxBubblewrapStore  *self,
                                         GError                 **error)
{
  g_autoptr(GPtrArray) ids = sandbox_bubblewrap_store_list_ids (self->sessions, error);
  GPtrArray *states;

  if (ids == NULL)
    return NULL;
  states = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < ids->len; i++)
    {
      g_autofree char *directory = g_build_filename (self->sessions, ids->pdata[i], NULL);
      g_autoptr(GError) local_error = NULL;
      SandboxState *state =
        sandbox_bubblewrap_store_read_state (directory, ids->pdata[i], &local_error);

      if (state != NULL && g_str_equal (sandbox_state_get_session_id (state), ids->pdata[i]))
        g_ptr_array_add (states, state);
      else if (state != NULL)
        g_warning ("Skipping session %s: its state names session %s", directory,
                   sandbox_state_get_session_id (state)), g_object_unref (state);
      else if (!g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
        g_warning ("Skipping session %s: %s", directory, local_error->message);
    }
  return states;
}

/* Who holds the lease in session @directory: the pid the lease file holds,
 * alive while someone holds its OFD lock (the kernel drops it when the
 * owner dies). *@owner is NULL when there is no lease. */
static gboolean
read_lease_owner (const char          *directory,
                  SandboxLeaseOwner  **owner,
                  GError             **error)
{
  g_autofree char *path = lease_path (directory);
  g_auto(SandboxBubblewrapFd) fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  char text[24] = { 0 };
  gint64 pid = 0;
  gssize length;

  *owner = NULL;
  if (fd < 0 && errno == ENOENT)
    return TRUE;
  if (fd < 0)
    return set_errno_error (error, errno, "Could not open", path);
  if (fcntl (fd, F_OFD_GETLK, &lock) < 0)
    return set_errno_error (error, errno, "Could not query the lock of", path);
  length = pread (fd, text, sizeof text - 1, 0);
  if (length < 0 ||
      !g_ascii_string_to_signed (g_strstrip (text), 10, 1, G_MAXINT, &pid, NULL))
    pid = 0;   /* a lease we cannot read is still a lease */
  *owner = sandbox_lease_owner_new ((int) pid, NULL, lock.l_type != F_UNLCK);
  return TRUE;
}

/**
 * sandbox_bubblewrap_store_list_sessions:
 * @self: a store
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type SandboxSessionInfo): the stored
 *   sessions, or %NULL with @error set
 */
GPtrArray *
sandbox_bubblewrap_store_list_sessions (SandboxBubblewrapStore  *self,
                                        GCancellable            *cancellable,
                                        GError                 **error)
{
  g_autoptr(GPtrArray) states = sandbox_bubblewrap_store_collect_states (self, error);
  g_autoptr(GPtrArray) sessions = NULL;

  if (states == NULL)
    return NULL;
  sessions = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < states->len; i++)
    {
      SandboxState *state = states->pdata[i];
      g_autofree char *directory =
        g_build_filename (self->sessions, sandbox_state_get_session_id (state), NULL);
      g_autofree char *workspace = session_workspace_path (directory);
      g_autoptr(SandboxLeaseOwner) owner = NULL;
      g_autoptr(GError) local_error = NULL;
      guint64 n_files, n_bytes;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      if (!read_lease_owner (directory, &owner, &local_error) ||
          !sandbox_bubblewrap_store_measure_tree (workspace, &n_files, &n_bytes, &local_error))
        {
          g_warning ("Skipping session %s: %s", directory, local_error->message);
          continue;
        }
      g_ptr_array_add (sessions, sandbox_session_info_new (state, owner, n_files, n_bytes));
    }
  return g_steal_pointer (&sessions);
}

/* Each snapshot's key among @keys → its parent's key (templates have none;
 * an unreadable parent is left out, as if a template). */
static GHashTable *
read_parents (SandboxBubblewrapStore *self,
              GPtrArray              *keys)
{
  GHashTable *parents = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);

  for (guint i = 0; i < keys->len; i++)
    {
      char *parent = NULL;

      if (sandbox_bubblewrap_store_read_parent (self, keys->pdata[i], &parent, NULL) &&
          parent != NULL)
        g_hash_table_insert (parents, g_strdup (keys->pdata[i]), parent);
    }
  return parents;
}

/* How many of @parents' snapshots lie directly over @key. */
static guint
count_children (GHashTable *parents,
                const char *key)
{
  GHashTableIter iter;
  gpointer parent;
  guint n = 0;

  g_hash_table_iter_init (&iter, parents);
  while (g_hash_table_iter_next (&iter, NULL, &parent))
    n += g_str_equal (parent, key);
  return n;
}

/**
 * sandbox_bubblewrap_store_list_templates:
 * @self: a store
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type SandboxTemplateInfo): the stored
 *   templates of this backend, or %NULL with @error set
 */
GPtrArray *
sandbox_bubblewrap_store_list_templates (SandboxBubblewrapStore  *self,
                                         GCancellable            *cancellable,
                                         GError                 **error)
{
  g_autoptr(GPtrArray) keys = sandbox_bubblewrap_store_list_ids (self->templates, error);
  g_autoptr(GPtrArray) states = NULL;
  g_autoptr(GPtrArray) templates = NULL;
  g_autoptr(GHashTable) parents = NULL;

  if (keys == NULL || (states = sandbox_bubblewrap_store_collect_states (self, error)) == NULL)
    return NULL;
  parents = read_parents (self, keys);
  templates = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < keys->len; i++)
    {
      const char *key = keys->pdata[i];
      g_autofree char *data = g_build_filename (self->templates, key, "data", NULL);
      g_autofree char *name = NULL;
      g_autoptr(GError) local_error = NULL;
      guint64 n_files, n_bytes;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      if (!sandbox_bubblewrap_store_read_template_name (self, key, &name, &local_error) ||
          !sandbox_bubblewrap_store_measure_tree (data, &n_files, &n_bytes, &local_error))
        {
          g_warning ("Skipping template %s: %s", key, local_error->message);
          continue;
        }
      g_ptr_array_add (templates,
                       sandbox_template_info_new_with_lineage (key, name,
                                                               g_hash_table_lookup (parents, key),
                                                               n_files, n_bytes,
                                                               count_sessions_of (states, key),
                                                               count_children (parents, key)));
    }
  return g_steal_pointer (&templates);
}

/* The saved state of a session the session protocol found stored (a
 * state.json missing meanwhile is NOT_FOUND). */
SandboxState *
sandbox_bubblewrap_store_lookup_state (SandboxBubblewrapStore  *self,
                                       const char              *session_id,
                                       GError                 **error)
{
  g_autofree char *directory = g_build_filename (self->sessions, session_id, NULL);

  return sandbox_bubblewrap_store_read_state (directory, session_id, error);
}

/**
 * sandbox_bubblewrap_store_query_lease_owner:
 * @self: a store
 * @session_id: a session id (checked by the caller)
 * @owner: (out) (transfer full) (nullable): set to the lease's owner, or
 *   %NULL when nobody holds it
 * @error: return location for a #GError
 *
 * Returns: %TRUE, or %FALSE with @error set (%SANDBOX_ERROR_NOT_FOUND for
 *   an unknown session)
 */
gboolean
sandbox_bubblewrap_store_query_lease_owner (SandboxBubblewrapStore  *self,
                                            const char              *session_id,
                                            SandboxLeaseOwner      **owner,
                                            GError                 **error)
{
  g_autofree char *directory = g_build_filename (self->sessions, session_id, NULL);

  g_return_val_if_fail (sandbox_template_key_is_valid (session_id), FALSE);

  if (!sandbox_bubblewrap_store_has_session (self, session_id))
    return sandbox_set_error_unknown_session (error, session_id);
  return read_lease_owner (directory, owner, error);
}
