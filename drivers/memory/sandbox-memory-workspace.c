/* sandbox-memory-workspace.c — an in-memory workspace file tree
 *
 * A workspace is a map from workspace-relative paths ("dir/file.txt") to
 * entries: a file holds immutable #GBytes, a directory holds nothing. The
 * root "." is always a directory and is never stored. Every directory above a
 * stored entry is stored too (writes create their parents, as the bubblewrap
 * driver's contained writes do), so the map alone answers "is this a file, a
 * directory, or missing" the way a real file system would, including the
 * errors: reading a directory is %G_IO_ERROR_IS_DIRECTORY, going below a file
 * is %G_IO_ERROR_NOT_DIRECTORY.
 *
 * All operations take the workspace's lock, so the driver's blocking file
 * operations and scripted commands may use one workspace from any thread.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include <sandbox.h>

#include "sandbox-memory-workspace.h"

struct _SandboxMemoryWorkspace
{
  GMutex      lock;
  /* relative path → GBytes for a file, or NULL for a directory */
  GHashTable *entries;
};

typedef enum
{
  ENTRY_MISSING,
  ENTRY_FILE,
  ENTRY_DIRECTORY,
} EntryKind;

static void
entry_free (gpointer data)
{
  if (data != NULL)
    g_bytes_unref (data);
}

static GHashTable *
entries_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free, entry_free);
}

static void
sandbox_memory_workspace_free (SandboxMemoryWorkspace *self)
{
  g_clear_pointer (&self->entries, g_hash_table_unref);
  g_mutex_clear (&self->lock);
}

/**
 * sandbox_memory_workspace_new:
 *
 * Creates an empty workspace: only the root directory exists.
 *
 * Returns: (transfer full): the new workspace
 */
SandboxMemoryWorkspace *
sandbox_memory_workspace_new (void)
{
  SandboxMemoryWorkspace *self = g_atomic_rc_box_new0 (SandboxMemoryWorkspace);

  g_mutex_init (&self->lock);
  self->entries = entries_new ();

  return self;
}

/**
 * sandbox_memory_workspace_ref:
 * @self: a workspace
 *
 * Returns: (transfer full): @self, with one more reference
 */
SandboxMemoryWorkspace *
sandbox_memory_workspace_ref (SandboxMemoryWorkspace *self)
{
  return g_atomic_rc_box_acquire (self);
}

/**
 * sandbox_memory_workspace_unref:
 * @self: (transfer full): a workspace
 *
 * Drops a reference; the last one frees the workspace and its files.
 */
void
sandbox_memory_workspace_unref (SandboxMemoryWorkspace *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify) sandbox_memory_workspace_free);
}

/**
 * sandbox_memory_workspace_copy:
 * @self: a workspace
 *
 * Copies every file and directory of @self into a new workspace. File
 * contents are immutable #GBytes, so they are shared, not duplicated.
 *
 * Returns: (transfer full): the copy
 */
SandboxMemoryWorkspace *
sandbox_memory_workspace_copy (SandboxMemoryWorkspace *self)
{
  SandboxMemoryWorkspace *copy = sandbox_memory_workspace_new ();
  GHashTableIter iter;
  gpointer path, contents;

  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->entries);
  while (g_hash_table_iter_next (&iter, &path, &contents))
    g_hash_table_insert (copy->entries, g_strdup (path),
                         contents != NULL ? g_bytes_ref (contents) : NULL);
  g_mutex_unlock (&self->lock);

  return copy;
}

/**
 * sandbox_memory_workspace_measure:
 * @self: a workspace
 * @n_files: (out): set to the number of files (directories not counted)
 * @n_bytes: (out): set to the bytes those files hold
 *
 * Measures the workspace as the bubblewrap store measures one on disk.
 */
void
sandbox_memory_workspace_measure (SandboxMemoryWorkspace *self,
                                  guint64                *n_files,
                                  guint64                *n_bytes)
{
  GHashTableIter iter;
  gpointer contents;

  *n_files = 0;
  *n_bytes = 0;
  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->entries);
  while (g_hash_table_iter_next (&iter, NULL, &contents))
    if (contents != NULL)
      {
        *n_files += 1;
        *n_bytes += g_bytes_get_size (contents);
      }
  g_mutex_unlock (&self->lock);
}

static EntryKind
lookup_locked (SandboxMemoryWorkspace  *self,
               const char              *relative,
               GBytes                 **contents)
{
  gpointer value = NULL;

  if (g_str_equal (relative, "."))
    return ENTRY_DIRECTORY;
  if (!g_hash_table_lookup_extended (self->entries, relative, NULL, &value))
    return ENTRY_MISSING;
  if (contents != NULL)
    *contents = value;

  return value != NULL ? ENTRY_FILE : ENTRY_DIRECTORY;
}

/* Finds the first proper ancestor of @relative that is a file, which makes
 * @relative unreachable the way ENOTDIR does. Returns it newly allocated, or
 * NULL when every existing ancestor is a directory. */
static char *
find_file_ancestor_locked (SandboxMemoryWorkspace *self,
                           const char             *relative)
{
  const char *slash;

  for (slash = strchr (relative, '/'); slash != NULL; slash = strchr (slash + 1, '/'))
    {
      g_autofree char *ancestor = g_strndup (relative, slash - relative);
      EntryKind kind = lookup_locked (self, ancestor, NULL);

      if (kind == ENTRY_FILE)
        return g_steal_pointer (&ancestor);
      if (kind == ENTRY_MISSING)
        return NULL;
    }

  return NULL;
}

static gboolean
set_not_directory_error (GError     **error,
                         const char  *ancestor)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY,
               "Workspace path “/workspace/%s” is a file, not a directory", ancestor);
  return FALSE;
}

static gboolean
set_is_directory_error (GError     **error,
                        const char  *relative)
{
  if (g_str_equal (relative, "."))
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY,
                         "Workspace path “/workspace” is a directory");
  else
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY,
                 "Workspace path “/workspace/%s” is a directory", relative);
  return FALSE;
}

/**
 * sandbox_memory_workspace_read:
 * @self: a workspace
 * @relative: a workspace-relative path, as [func@Sandbox.path_relative] gives
 * @error: return location for a #GError, or %NULL
 *
 * Reads a whole file. There is no size bound here; the driver applies
 * %SANDBOX_MAX_FILE_BYTES to the host's file operations.
 *
 * Returns: (transfer full): the file's contents, or %NULL with
 *   %G_IO_ERROR_NOT_FOUND, %G_IO_ERROR_IS_DIRECTORY or
 *   %G_IO_ERROR_NOT_DIRECTORY set
 */
GBytes *
sandbox_memory_workspace_read (SandboxMemoryWorkspace  *self,
                               const char              *relative,
                               GError                 **error)
{
  g_autofree char *file_ancestor = NULL;
  GBytes *contents = NULL;
  EntryKind kind;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (relative != NULL, NULL);

  g_mutex_lock (&self->lock);
  kind = lookup_locked (self, relative, &contents);
  if (kind == ENTRY_FILE)
    g_bytes_ref (contents);
  else if (kind == ENTRY_MISSING)
    file_ancestor = find_file_ancestor_locked (self, relative);
  g_mutex_unlock (&self->lock);

  switch (kind)
    {
    case ENTRY_FILE:
      return contents;
    case ENTRY_DIRECTORY:
      set_is_directory_error (error, relative);
      return NULL;
    case ENTRY_MISSING:
    default:
      if (file_ancestor != NULL)
        set_not_directory_error (error, file_ancestor);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                     "Workspace file “/workspace/%s” does not exist", relative);
      return NULL;
    }
}

static void
add_parent_directories_locked (SandboxMemoryWorkspace *self,
                               const char             *relative)
{
  const char *slash;

  for (slash = strchr (relative, '/'); slash != NULL; slash = strchr (slash + 1, '/'))
    {
      char *ancestor = g_strndup (relative, slash - relative);

      if (g_hash_table_contains (self->entries, ancestor))
        g_free (ancestor);
      else
        g_hash_table_insert (self->entries, ancestor, NULL);
    }
}

/**
 * sandbox_memory_workspace_write:
 * @self: a workspace
 * @relative: a workspace-relative path, as [func@Sandbox.path_relative] gives
 * @contents: the file's new contents
 * @error: return location for a #GError, or %NULL
 *
 * Creates or replaces a file, creating its parent directories. Nothing
 * changes when the write fails.
 *
 * Returns: %TRUE on success, or %FALSE with %G_IO_ERROR_IS_DIRECTORY (the
 *   path is a directory) or %G_IO_ERROR_NOT_DIRECTORY (a parent is a file) set
 */
gboolean
sandbox_memory_workspace_write (SandboxMemoryWorkspace  *self,
                                const char              *relative,
                                GBytes                  *contents,
                                GError                 **error)
{
  g_autofree char *file_ancestor = NULL;
  EntryKind kind;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (relative != NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);

  g_mutex_lock (&self->lock);

  kind = lookup_locked (self, relative, NULL);
  if (kind == ENTRY_DIRECTORY)
    {
      g_mutex_unlock (&self->lock);
      return set_is_directory_error (error, relative);
    }

  file_ancestor = find_file_ancestor_locked (self, relative);
  if (file_ancestor != NULL)
    {
      g_mutex_unlock (&self->lock);
      return set_not_directory_error (error, file_ancestor);
    }

  add_parent_directories_locked (self, relative);
  g_hash_table_insert (self->entries, g_strdup (relative), g_bytes_ref (contents));

  g_mutex_unlock (&self->lock);

  return TRUE;
}

/**
 * sandbox_memory_workspace_make_directory:
 * @self: a workspace
 * @relative: a workspace-relative path, as [func@Sandbox.path_relative] gives
 * @error: return location for a #GError, or %NULL
 *
 * Creates a directory and its parents, as `mkdir -p` does: a directory that
 * is there already is fine.
 *
 * Returns: %TRUE on success, or %FALSE with %G_IO_ERROR_EXISTS (a file is
 *   there) or %G_IO_ERROR_NOT_DIRECTORY (a parent is a file) set
 */
gboolean
sandbox_memory_workspace_make_directory (SandboxMemoryWorkspace  *self,
                                         const char              *relative,
                                         GError                 **error)
{
  g_autofree char *file_ancestor = NULL;
  EntryKind kind;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (relative != NULL, FALSE);

  g_mutex_lock (&self->lock);
  kind = lookup_locked (self, relative, NULL);
  if (kind == ENTRY_MISSING)
    file_ancestor = find_file_ancestor_locked (self, relative);
  if (kind == ENTRY_MISSING && file_ancestor == NULL)
    {
      add_parent_directories_locked (self, relative);
      g_hash_table_insert (self->entries, g_strdup (relative), NULL);
    }
  g_mutex_unlock (&self->lock);

  if (file_ancestor != NULL)
    return set_not_directory_error (error, file_ancestor);
  if (kind == ENTRY_FILE)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                   "Workspace path “/workspace/%s” is a file", relative);
      return FALSE;
    }
  return TRUE;
}

static gboolean
path_is_at_or_below (const char *path,
                     const char *top)
{
  gsize length = strlen (top);

  return strncmp (path, top, length) == 0 && (path[length] == '\0' || path[length] == '/');
}

static gboolean
entry_is_at_or_below (gpointer key,
                      gpointer value,
                      gpointer user_data)
{
  return path_is_at_or_below (key, user_data);
}

/**
 * sandbox_memory_workspace_remove:
 * @self: a workspace
 * @relative: a workspace-relative path other than the root
 * @error: return location for a #GError, or %NULL
 *
 * Removes a file, or a directory with everything below it. A missing path
 * (including one below a file) is not an error, as with `rm -rf`.
 *
 * Returns: %TRUE on success, or %FALSE with %SANDBOX_ERROR_PATH when asked to
 *   remove the workspace root
 */
gboolean
sandbox_memory_workspace_remove (SandboxMemoryWorkspace  *self,
                                 const char              *relative,
                                 GError                 **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (relative != NULL, FALSE);

  if (g_str_equal (relative, "."))
    return sandbox_set_error_workspace_root (error);

  g_mutex_lock (&self->lock);
  g_hash_table_foreach_remove (self->entries, entry_is_at_or_below, (gpointer) relative);
  g_mutex_unlock (&self->lock);

  return TRUE;
}
