/* sandbox-memory-workspace.c — an in-memory workspace file tree
 *
 * A workspace is a map from workspace-relative paths ("dir/file.txt") to
 * entries: a file holds immutable #GBytes and whether it is executable, a
 * symbolic link its target, a directory nothing. The root "." is always a
 * directory and is never stored. Paths are resolved as the bubblewrap
 * driver's contained file API resolves them (openat2() with
 * RESOLVE_BENEATH): links that stay inside are followed, a link that is
 * absolute or climbs out, or 40 links in a row, is %SANDBOX_ERROR_PATH
 * "Path escapes the workspace"; the final component of a write or a removal
 * is never followed (a link there is replaced or removed). Every directory above a
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

#include <sandbox-backend-driver.h>

#include "sandbox-memory-workspace.h"

struct _SandboxMemoryWorkspace
{
  GMutex      lock;
  /* relative path → Entry (immutable, shared by copies) */
  GHashTable *entries;
};

typedef enum
{
  ENTRY_MISSING,
  ENTRY_FILE,
  ENTRY_DIRECTORY,
  ENTRY_SYMLINK,
} EntryKind;

typedef struct
{
  EntryKind kind;
  GBytes *contents;     /* ENTRY_FILE */
  gboolean executable;  /* ENTRY_FILE */
  char *target;         /* ENTRY_SYMLINK */
} Entry;

/* As Linux: at most 40 links followed in one resolution. */
#define MAX_LINKS_FOLLOWED 40

static void
entry_clear (Entry *entry)
{
  g_clear_pointer (&entry->contents, g_bytes_unref);
  g_free (entry->target);
}

static void
entry_free (gpointer data)
{
  g_atomic_rc_box_release_full (data, (GDestroyNotify) entry_clear);
}

static Entry *
entry_new (EntryKind   kind,
           GBytes     *contents,
           gboolean    executable,
           const char *target)
{
  Entry *entry = g_atomic_rc_box_new0 (Entry);

  entry->kind = kind;
  entry->contents = contents != NULL ? g_bytes_ref (contents) : NULL;
  entry->executable = executable;
  entry->target = g_strdup (target);
  return entry;
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
 * sandbox_memory_workspace_assign:
 * @self: a workspace
 * @source: the workspace whose files @self takes
 *
 * Replaces every entry of @self with those of @source. Entries are
 * immutable, so they are shared, not duplicated.
 */
void
sandbox_memory_workspace_assign (SandboxMemoryWorkspace *self,
                                 SandboxMemoryWorkspace *source)
{
  GHashTable *entries = entries_new ();
  GHashTableIter iter;
  gpointer path, entry;

  g_mutex_lock (&source->lock);
  g_hash_table_iter_init (&iter, source->entries);
  while (g_hash_table_iter_next (&iter, &path, &entry))
    g_hash_table_insert (entries, g_strdup (path), g_atomic_rc_box_acquire (entry));
  g_mutex_unlock (&source->lock);

  g_mutex_lock (&self->lock);
  g_hash_table_unref (self->entries);
  self->entries = entries;
  g_mutex_unlock (&self->lock);
}

/**
 * sandbox_memory_workspace_copy:
 * @self: a workspace
 *
 * Copies every entry of @self into a new workspace (see
 * sandbox_memory_workspace_assign()).
 *
 * Returns: (transfer full): the copy
 */
SandboxMemoryWorkspace *
sandbox_memory_workspace_copy (SandboxMemoryWorkspace *self)
{
  SandboxMemoryWorkspace *copy = sandbox_memory_workspace_new ();

  sandbox_memory_workspace_assign (copy, self);
  return copy;
}

static void
digest_string (GChecksum  *digest,
               const char *text)
{
  /* With its NUL: no path, link target or key holds one. */
  g_checksum_update (digest, (const guchar *) text, strlen (text) + 1);
}

/**
 * sandbox_memory_workspace_compute_key:
 * @self: a workspace
 * @parent: the key of what @self is a snapshot over
 *
 * Computes the content-addressed key of a snapshot of @self over @parent:
 * SHA-256 over @parent and, in path order, each entry's path, kind,
 * executable bit and contents' digest or link target. Equal trees over
 * one parent have one key.
 *
 * Returns: (transfer full): the key, 64 lowercase hexadecimal characters
 */
char *
sandbox_memory_workspace_compute_key (SandboxMemoryWorkspace *self,
                                      const char             *parent)
{
  g_autoptr(GChecksum) digest = g_checksum_new (G_CHECKSUM_SHA256);
  g_autoptr(GList) paths = NULL;

  digest_string (digest, "libsandbox-memory-snapshot-1");
  digest_string (digest, parent);
  g_mutex_lock (&self->lock);
  paths = g_list_sort (g_hash_table_get_keys (self->entries), (GCompareFunc) strcmp);
  for (GList *l = paths; l != NULL; l = l->next)
    {
      Entry *entry = g_hash_table_lookup (self->entries, l->data);
      g_autofree char *contents = NULL;
      char kind[] = { (char) ('0' + entry->kind), entry->executable ? 'x' : '-', '\0' };

      if (entry->kind == ENTRY_FILE)
        contents = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, entry->contents);
      digest_string (digest, l->data);
      digest_string (digest, kind);
      digest_string (digest, contents != NULL        ? contents
                             : entry->target != NULL ? entry->target
                                                     : "");
    }
  g_mutex_unlock (&self->lock);
  return g_strdup (g_checksum_get_string (digest));
}

/**
 * sandbox_memory_workspace_measure:
 * @self: a workspace
 * @n_files: (out): set to the number of files and symbolic links
 *   (directories not counted)
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
  gpointer value;

  *n_files = 0;
  *n_bytes = 0;
  g_mutex_lock (&self->lock);
  g_hash_table_iter_init (&iter, self->entries);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Entry *entry = value;

      if (entry->kind != ENTRY_DIRECTORY)
        *n_files += 1;
      if (entry->kind == ENTRY_FILE)
        *n_bytes += g_bytes_get_size (entry->contents);
    }
  g_mutex_unlock (&self->lock);
}

static EntryKind
lookup_locked (SandboxMemoryWorkspace  *self,
               const char              *relative,
               Entry                  **found)
{
  Entry *entry;

  if (g_str_equal (relative, "."))
    return ENTRY_DIRECTORY;
  entry = g_hash_table_lookup (self->entries, relative);
  if (found != NULL)
    *found = entry;
  return entry != NULL ? entry->kind : ENTRY_MISSING;
}

static gboolean
set_escape_error (GError **error)
{
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, "Path escapes the workspace");
  return FALSE;
}

/* Pushes the components of @path onto @pending so the first comes out first. */
static void
push_components (GPtrArray  *pending,
                 const char *path)
{
  g_auto(GStrv) parts = g_strsplit (path, "/", -1);

  for (guint i = g_strv_length (parts); i > 0; i--)
    g_ptr_array_add (pending, g_strdup (parts[i - 1]));
}

/*
 * resolve_locked:
 * @relative: a canonical workspace-relative path, or "."
 * @follow_final: whether a link at the final component is followed too
 *
 * Resolves the links along @relative as RESOLVE_BENEATH does. A missing
 * component ends the resolution there (what follows is kept as it is).
 *
 * Returns: (transfer full): the resolved relative path ("." for the root),
 *   or %NULL with %SANDBOX_ERROR_PATH set
 */
static char *
resolve_locked (SandboxMemoryWorkspace  *self,
                const char              *relative,
                gboolean                 follow_final,
                GError                 **error)
{
  g_autoptr(GPtrArray) pending = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) resolved = g_ptr_array_new_with_free_func (g_free);
  guint links = 0;

  if (!g_str_equal (relative, "."))
    push_components (pending, relative);
  while (pending->len > 0)
    {
      g_autofree char *part = g_ptr_array_steal_index (pending, pending->len - 1);
      g_autofree char *candidate = NULL;
      Entry *entry = NULL;

      if (part[0] == '\0' || g_str_equal (part, "."))
        continue;
      if (g_str_equal (part, ".."))
        {
          if (resolved->len == 0)
            return set_escape_error (error), NULL;
          g_ptr_array_remove_index (resolved, resolved->len - 1);
          continue;
        }
      g_ptr_array_add (resolved, g_steal_pointer (&part));
      g_ptr_array_add (resolved, NULL);
      candidate = g_strjoinv ("/", (char **) resolved->pdata);
      g_ptr_array_remove_index (resolved, resolved->len - 1);

      if (lookup_locked (self, candidate, &entry) != ENTRY_SYMLINK ||
          (pending->len == 0 && !follow_final))
        continue;
      if (++links > MAX_LINKS_FOLLOWED || g_path_is_absolute (entry->target))
        return set_escape_error (error), NULL;
      g_ptr_array_remove_index (resolved, resolved->len - 1);
      push_components (pending, entry->target);
    }

  if (resolved->len == 0)
    return g_strdup (".");
  g_ptr_array_add (resolved, NULL);
  return g_strjoinv ("/", (char **) resolved->pdata);
}

/* Finds the first proper ancestor of @relative (resolved) that is not a
 * directory, which makes @relative unreachable the way ENOTDIR does.
 * Returns it newly allocated, or NULL when every existing ancestor is a
 * directory. */
static char *
find_file_ancestor_locked (SandboxMemoryWorkspace *self,
                           const char             *relative)
{
  const char *slash;

  for (slash = strchr (relative, '/'); slash != NULL; slash = strchr (slash + 1, '/'))
    {
      g_autofree char *ancestor = g_strndup (relative, slash - relative);
      EntryKind kind = lookup_locked (self, ancestor, NULL);

      if (kind == ENTRY_FILE || kind == ENTRY_SYMLINK)
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

/* The regular file @relative leads to (through links), or NULL with an
 * error as a read reports it. */
static Entry *
lookup_file_locked (SandboxMemoryWorkspace  *self,
                    const char              *relative,
                    GError                 **error)
{
  g_autofree char *resolved = resolve_locked (self, relative, TRUE, error);
  g_autofree char *file_ancestor = NULL;
  Entry *entry = NULL;

  if (resolved == NULL)
    return NULL;
  switch (lookup_locked (self, resolved, &entry))
    {
    case ENTRY_FILE:
      return entry;
    case ENTRY_DIRECTORY:
      set_is_directory_error (error, relative);
      return NULL;
    default:
      file_ancestor = find_file_ancestor_locked (self, resolved);
      if (file_ancestor != NULL)
        set_not_directory_error (error, file_ancestor);
      else
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                     "Workspace file “/workspace/%s” does not exist", relative);
      return NULL;
    }
}

/**
 * sandbox_memory_workspace_read:
 * @self: a workspace
 * @relative: a workspace-relative path, as [func@Sandbox.path_relative] gives
 * @error: return location for a #GError, or %NULL
 *
 * Reads a whole file, following links that stay in the workspace. There is
 * no size bound here; the core's file operations apply the session's
 * (sandbox_driver_get_max_file_bytes()).
 *
 * Returns: (transfer full): the file's contents, or %NULL with
 *   %G_IO_ERROR_NOT_FOUND, %G_IO_ERROR_IS_DIRECTORY,
 *   %G_IO_ERROR_NOT_DIRECTORY or %SANDBOX_ERROR_PATH set
 */
GBytes *
sandbox_memory_workspace_read (SandboxMemoryWorkspace  *self,
                               const char              *relative,
                               GError                 **error)
{
  GBytes *contents = NULL;
  Entry *entry;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (relative != NULL, NULL);

  g_mutex_lock (&self->lock);
  entry = lookup_file_locked (self, relative, error);
  if (entry != NULL)
    contents = g_bytes_ref (entry->contents);
  g_mutex_unlock (&self->lock);

  return contents;
}

/**
 * sandbox_memory_workspace_query_executable:
 * @self: a workspace
 * @relative: a workspace-relative path
 * @executable: (out): set to whether the file is executable
 * @error: return location for a #GError, or %NULL
 *
 * Looks at the file @relative leads to as execve() would.
 *
 * Returns: %TRUE if it is a regular file, or %FALSE with the error a read
 *   would report
 */
gboolean
sandbox_memory_workspace_query_executable (SandboxMemoryWorkspace  *self,
                                           const char              *relative,
                                           gboolean                *executable,
                                           GError                 **error)
{
  Entry *entry;

  g_mutex_lock (&self->lock);
  entry = lookup_file_locked (self, relative, error);
  *executable = entry != NULL && entry->executable;
  g_mutex_unlock (&self->lock);

  return entry != NULL;
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
        g_hash_table_insert (self->entries, ancestor, entry_new (ENTRY_DIRECTORY, NULL, FALSE, NULL));
    }
}

/* Where an entry at @relative goes: its parents resolved through links, its
 * final component not. Returns it, or NULL with %SANDBOX_ERROR_PATH. */
static char *
resolve_parent_locked (SandboxMemoryWorkspace  *self,
                       const char              *relative,
                       GError                 **error)
{
  const char *slash = strrchr (relative, '/');
  g_autofree char *parent = NULL;
  g_autofree char *resolved = NULL;

  if (slash == NULL)
    return g_strdup (relative);
  parent = g_strndup (relative, slash - relative);
  resolved = resolve_locked (self, parent, TRUE, error);
  if (resolved == NULL)
    return NULL;
  return g_str_equal (resolved, ".") ? g_strdup (slash + 1)
                                     : g_strconcat (resolved, slash, NULL);
}

/* Puts @entry (taking it) at @relative: over a file or link, never over a
 * directory or below a file. */
static gboolean
put_entry (SandboxMemoryWorkspace  *self,
           const char              *relative,
           Entry                   *entry,
           GError                 **error)
{
  g_autofree char *file_ancestor = NULL;
  g_autofree char *target = NULL;
  gboolean ok = FALSE;

  g_mutex_lock (&self->lock);
  target = resolve_parent_locked (self, relative, error);
  if (target == NULL)
    ;
  else if (lookup_locked (self, target, NULL) == ENTRY_DIRECTORY)
    set_is_directory_error (error, relative);
  else if ((file_ancestor = find_file_ancestor_locked (self, target)) != NULL)
    set_not_directory_error (error, file_ancestor);
  else
    {
      add_parent_directories_locked (self, target);
      g_hash_table_insert (self->entries, g_steal_pointer (&target), g_steal_pointer (&entry));
      ok = TRUE;
    }
  g_mutex_unlock (&self->lock);

  g_clear_pointer (&entry, entry_free);
  return ok;
}

/**
 * sandbox_memory_workspace_write:
 * @self: a workspace
 * @relative: a workspace-relative path, as [func@Sandbox.path_relative] gives
 * @contents: the file's new contents
 * @executable: whether the file is executable
 * @error: return location for a #GError, or %NULL
 *
 * Creates or replaces a file, creating its parent directories. A link at
 * @relative is replaced, not written through (links above it are
 * followed), as the bubblewrap driver's writes do. Nothing changes when
 * the write fails.
 *
 * Returns: %TRUE on success, or %FALSE with %G_IO_ERROR_IS_DIRECTORY (the
 *   path is a directory), %G_IO_ERROR_NOT_DIRECTORY (a parent is a file) or
 *   %SANDBOX_ERROR_PATH (a parent link leads out) set
 */
gboolean
sandbox_memory_workspace_write (SandboxMemoryWorkspace  *self,
                                const char              *relative,
                                GBytes                  *contents,
                                gboolean                 executable,
                                GError                 **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (relative != NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);

  return put_entry (self, relative, entry_new (ENTRY_FILE, contents, executable, NULL), error);
}

/**
 * sandbox_memory_workspace_make_symlink:
 * @self: a workspace
 * @relative: a workspace-relative path
 * @target: the link's target, kept verbatim
 * @error: return location for a #GError, or %NULL
 *
 * Creates or replaces a symbolic link, creating its parent directories.
 *
 * Returns: %TRUE on success, or %FALSE with @error set as for a write
 */
gboolean
sandbox_memory_workspace_make_symlink (SandboxMemoryWorkspace  *self,
                                       const char              *relative,
                                       const char              *target,
                                       GError                 **error)
{
  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (relative != NULL, FALSE);
  g_return_val_if_fail (target != NULL, FALSE);

  return put_entry (self, relative, entry_new (ENTRY_SYMLINK, NULL, FALSE, target), error);
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
 * Returns: %TRUE on success, or %FALSE with %G_IO_ERROR_EXISTS (a file or
 *   link is there), %G_IO_ERROR_NOT_DIRECTORY (a parent is a file) or
 *   %SANDBOX_ERROR_PATH set
 */
gboolean
sandbox_memory_workspace_make_directory (SandboxMemoryWorkspace  *self,
                                         const char              *relative,
                                         GError                 **error)
{
  g_autofree char *file_ancestor = NULL;
  g_autofree char *target = NULL;
  EntryKind kind = ENTRY_MISSING;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (relative != NULL, FALSE);

  g_mutex_lock (&self->lock);
  target = resolve_parent_locked (self, relative, error);
  if (target != NULL)
    {
      kind = lookup_locked (self, target, NULL);
      if (kind == ENTRY_MISSING)
        file_ancestor = find_file_ancestor_locked (self, target);
      if (kind == ENTRY_MISSING && file_ancestor == NULL)
        {
          add_parent_directories_locked (self, target);
          g_hash_table_insert (self->entries, g_strdup (target),
                               entry_new (ENTRY_DIRECTORY, NULL, FALSE, NULL));
        }
    }
  g_mutex_unlock (&self->lock);

  if (target == NULL)
    return FALSE;
  if (file_ancestor != NULL)
    return set_not_directory_error (error, file_ancestor);
  if (kind == ENTRY_FILE || kind == ENTRY_SYMLINK)
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
 * @relative: a workspace-relative path other than the root (the core's
 *   file ritual refuses a removal of the root before it gets here)
 * @error: return location for a #GError, or %NULL
 *
 * Removes a file or link (never what a link points to), or a directory
 * with everything below it. A missing path (including one below a file) is
 * not an error, as with `rm -rf`.
 *
 * Returns: %TRUE on success, or %FALSE with %SANDBOX_ERROR_PATH when a
 *   parent link leads out
 */
gboolean
sandbox_memory_workspace_remove (SandboxMemoryWorkspace  *self,
                                 const char              *relative,
                                 GError                 **error)
{
  g_autofree char *target = NULL;

  g_return_val_if_fail (self != NULL, FALSE);
  g_return_val_if_fail (relative != NULL && !g_str_equal (relative, "."), FALSE);

  g_mutex_lock (&self->lock);
  target = resolve_parent_locked (self, relative, error);
  if (target != NULL)
    g_hash_table_foreach_remove (self->entries, entry_is_at_or_below, target);
  g_mutex_unlock (&self->lock);

  return target != NULL;
}
