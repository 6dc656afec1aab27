/* sandbox-runtime-layer.c — OCI image layers applied to a runtime's tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * libarchive reads each layer's tar stream (sandbox-runtime-oci.c opens it);
 * the entries are written here, one at a time, with the same fd-relative
 * calls as the directory unpack, never with archive_write_disk (which works
 * on the process's working directory, not thread-safe in a library).
 *
 * An entry's path is checked before anything else: a leading "./" (tar's
 * own convention) is dropped, and then a path that is absolute, empty
 * between two slashes, or has a "." or ".." component is an error naming
 * the entry. The root itself ("." or "./") carries nothing that is kept.
 * Its parent directory is reached beneath the target with openat2(
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), or made one component at a time
 * (mkdirat, then openat O_NOFOLLOW) when a layer leaves parents out: a path
 * that goes through a symbolic link (evil -> /somewhere, then evil/x) is an
 * error, not followed. A hard link's target is checked the same way and
 * must already be an entry of the tree that is not a directory.
 *
 * Later layers override earlier ones as the OCI image spec says: an entry
 * replaces whatever was at its path (a directory merges with a directory),
 * ".wh.NAME" removes NAME from the layers below, ".wh..wh..opq" removes
 * everything of the layers below from its directory; what the same layer
 * made is kept by both. Directories are made 0700 and get their modes when
 * every layer is in, deepest first, so later layers can still write into
 * one a lower layer made read-only.
 *
 * Entries are counted as they are written (a file a later layer replaces
 * counts twice), and a regular file's size is counted from its header
 * before any of it is written; its data may not go past that size.
 */

#include "config.h"

#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-runtime-layer-private.h"
#include "sandbox-workspace-private.h"

#define WHITEOUT_PREFIX ".wh."
#define OPAQUE_WHITEOUT ".wh..wh..opq"

struct _SandboxRuntimeLayers
{
  int                   target_fd;
  SandboxRuntimeBudget *budget;
  GHashTable           *dir_modes;   /* path → its mode, + 1 (never 0) */
  GHashTable           *this_layer;  /* paths the layer being read made */
  const char           *layer;       /* its digest, for messages */
};

SandboxRuntimeLayers *
sandbox_runtime_layers_new (int                   target_fd,
                            SandboxRuntimeBudget *budget)
{
  SandboxRuntimeLayers *self = g_new0 (SandboxRuntimeLayers, 1);

  self->target_fd = target_fd;
  self->budget = budget;
  self->dir_modes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->this_layer = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  return self;
}

void
sandbox_runtime_layers_free (SandboxRuntimeLayers *self)
{
  g_hash_table_unref (self->dir_modes);
  g_hash_table_unref (self->this_layer);
  g_free (self);
}

static gboolean
set_entry_error (SandboxRuntimeLayers  *self,
                 GError               **error,
                 const char            *path,
                 const char            *problem)
{
  g_autofree char *shown = g_utf8_make_valid (path, -1);

  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Layer %s: entry ‘%s’ %s", self->layer, shown, problem);
  return FALSE;
}

static gboolean
set_errno_error (SandboxRuntimeLayers  *self,
                 GError               **error,
                 int                    saved_errno,
                 const char            *action,
                 const char            *path)
{
  g_autofree char *shown = g_utf8_make_valid (path, -1);

  if (saved_errno == ELOOP || saved_errno == ENOTDIR || saved_errno == EXDEV)
    return set_entry_error (self, error, path,
                            "goes through a symbolic link or a file, not a directory of the image");
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "Layer %s: cannot %s ‘%s’: %s", self->layer, action, shown, g_strerror (saved_errno));
  return FALSE;
}

/*
 * clean_entry_path:
 *
 * Returns: (transfer full): @raw without its leading "./" and trailing
 *   slashes, "" for the root, or %NULL with @error set if it is absolute or
 *   has an empty, "." or ".." component
 */
static char *
clean_entry_path (SandboxRuntimeLayers  *self,
                  const char            *raw,
                  GError               **error)
{
  g_autofree char *path = NULL;
  const char *p = raw;
  gsize length;

  if (raw == NULL || raw[0] == '\0')
    {
      set_entry_error (self, error, "", "has no name");
      return NULL;
    }
  if (raw[0] == '/')
    {
      set_entry_error (self, error, raw, "is an absolute path");
      return NULL;
    }
  while (p[0] == '.' && p[1] == '/')
    p += 2;
  path = g_strdup (p);
  length = strlen (path);
  while (length > 0 && path[length - 1] == '/')
    path[--length] = '\0';
  if (length == 0 || strcmp (path, ".") == 0)
    return g_strdup ("");

  for (const char *segment = path;;)
    {
      const char *end = strchrnul (segment, '/');
      gsize n = end - segment;

      if (n == 0 || (n == 1 && segment[0] == '.') || (n == 2 && segment[0] == '.' && segment[1] == '.'))
        {
          set_entry_error (self, error, raw, "has an empty, “.” or “..” component");
          return NULL;
        }
      if (*end == '\0')
        break;
      segment = end + 1;
    }

  return g_steal_pointer (&path);
}

/* The parent of @path ("" for the root) and its last component. */
static const char *
split_path (const char  *path,
            char       **parent)
{
  const char *name = sandbox_workspace_split_parent (path, parent);

  if (*parent == NULL)
    *parent = g_strdup ("");
  return name;
}

static void
record_dir_mode (SandboxRuntimeLayers *self,
                 const char           *path,
                 mode_t                mode)
{
  g_hash_table_insert (self->dir_modes, g_strdup (path),
                       GUINT_TO_POINTER ((mode & SANDBOX_RUNTIME_DIR_MODE_MASK) + 1));
}

/*
 * open_directory:
 * @path: a checked path in the tree, "" for the root
 * @entry: the entry it is opened for, which errors name
 * @create: whether missing directories are made (0755 once finished)
 *
 * Returns: an O_PATH fd of the directory at @path, or -1 with @error set
 *   (%G_IO_ERROR_NOT_FOUND if it is missing and not @create,
 *   %SANDBOX_ERROR_INVALID if the path meets a symbolic link or a file)
 */
static int
open_directory (SandboxRuntimeLayers  *self,
                const char            *path,
                const char            *entry,
                gboolean               create,
                GError               **error)
{
  g_auto(SandboxWorkspaceFd) fd = -1;
  g_auto(GStrv) components = NULL;
  g_autoptr(GString) walked = NULL;

  fd = sandbox_workspace_open_beneath (self->target_fd, path[0] != '\0' ? path : ".",
                                       O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
  if (fd >= 0)
    return g_steal_fd (&fd);
  if (errno != ENOENT || !create)
    {
      set_errno_error (self, error, errno, "open", entry);
      return -1;
    }

  /* A layer that leaves parents out: make them, a name at a time. */
  components = g_strsplit (path, "/", -1);
  walked = g_string_new (NULL);
  fd = openat (self->target_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      set_errno_error (self, error, errno, "open", entry);
      return -1;
    }
  for (guint i = 0; components[i] != NULL; i++)
    {
      int next;

      if (walked->len > 0)
        g_string_append_c (walked, '/');
      g_string_append (walked, components[i]);
      next = openat (fd, components[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0 && errno == ENOENT)
        {
          if (!sandbox_runtime_budget_add_entry (self->budget, walked->str, error))
            return -1;
          if (mkdirat (fd, components[i], 0700) < 0)
            {
              set_errno_error (self, error, errno, "create", walked->str);
              return -1;
            }
          record_dir_mode (self, walked->str, 0755);
          g_hash_table_add (self->this_layer, g_strdup (walked->str));
          next = openat (fd, components[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
      if (next < 0)
        {
          set_errno_error (self, error, errno, "open", entry);
          return -1;
        }
      sandbox_workspace_fd_clear (&fd);
      fd = next;
    }

  return g_steal_fd (&fd);
}

/* Removes @name of @parent_fd, at @path, whatever it is, and forgets the
 * modes of the directories that went with it. */
static gboolean
remove_existing (SandboxRuntimeLayers  *self,
                 int                    parent_fd,
                 const char            *name,
                 const char            *path,
                 GError               **error)
{
  GHashTableIter iter;
  const char *key;
  gsize length = strlen (path);

  if (!sandbox_workspace_remove_entry (parent_fd, name, path, error))
    return FALSE;

  g_hash_table_iter_init (&iter, self->dir_modes);
  while (g_hash_table_iter_next (&iter, (gpointer *) &key, NULL))
    if (strncmp (key, path, length) == 0 && (key[length] == '\0' || key[length] == '/'))
      g_hash_table_iter_remove (&iter);
  return TRUE;
}

static gboolean
apply_whiteout (SandboxRuntimeLayers  *self,
                const char            *path,
                GError               **error)
{
  g_autofree char *parent = NULL;
  const char *name = split_path (path, &parent);
  g_auto(SandboxWorkspaceFd) dir_fd = -1;
  const char *hidden = name + strlen (WHITEOUT_PREFIX);

  if (g_cancellable_set_error_if_cancelled (self->budget->cancellable, error))
    return FALSE;

  if (strcmp (name, OPAQUE_WHITEOUT) == 0)
    {
      g_auto(SandboxWorkspaceFd) list_fd = -1;
      g_autofree guint8 *buffer = NULL;
      g_autoptr(GPtrArray) lower = g_ptr_array_new_with_free_func (g_free);
      SandboxWorkspaceDirents dirents;
      struct dirent64 *entry;

      dir_fd = open_directory (self, parent, path, TRUE, error);
      if (dir_fd < 0)
        return FALSE;
      list_fd = openat (dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (list_fd < 0)
        return set_errno_error (self, error, errno, "list", parent);
      buffer = g_malloc (SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE);
      sandbox_workspace_dirents_init (&dirents, list_fd, buffer);
      while (TRUE)
        {
          g_autofree char *child = NULL;

          if (!sandbox_workspace_dirents_next (&dirents, &entry))
            return set_errno_error (self, error, errno, "list", parent);
          if (entry == NULL)
            break;
          child = parent[0] != '\0' ? g_strconcat (parent, "/", entry->d_name, NULL)
                                    : g_strdup (entry->d_name);
          if (!g_hash_table_contains (self->this_layer, child))
            g_ptr_array_add (lower, g_steal_pointer (&child));
        }
      for (guint i = 0; i < lower->len; i++)
        {
          const char *child = g_ptr_array_index (lower, i);
          g_autofree char *unused = NULL;

          if (!remove_existing (self, dir_fd, split_path (child, &unused), child, error))
            return FALSE;
        }
      return TRUE;
    }

  if (hidden[0] == '\0' || strcmp (hidden, ".") == 0 || strcmp (hidden, "..") == 0)
    return set_entry_error (self, error, path, "is a whiteout of no entry");

  {
    g_autoptr(GError) local_error = NULL;

    dir_fd = open_directory (self, parent, path, FALSE, &local_error);
    /* Nothing to hide where there is no directory. */
    if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
      return TRUE;
    if (dir_fd < 0)
      {
        g_propagate_error (error, g_steal_pointer (&local_error));
        return FALSE;
      }
  }
  {
    g_autofree char *target = parent[0] != '\0' ? g_strconcat (parent, "/", hidden, NULL) : g_strdup (hidden);

    /* A whiteout hides the layers below, not its own. */
    if (g_hash_table_contains (self->this_layer, target))
      return TRUE;
    return remove_existing (self, dir_fd, hidden, target, error);
  }
}

/* Writes the entry's data, which may be sparse, within its counted size. */
static gboolean
write_file (SandboxRuntimeLayers  *self,
            struct archive        *archive,
            struct archive_entry  *entry,
            int                    parent_fd,
            const char            *name,
            const char            *path,
            GError               **error)
{
  g_auto(SandboxWorkspaceFd) fd = -1;
  gint64 size = archive_entry_size (entry);

  fd = openat (parent_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return set_errno_error (self, error, errno, "create", path);

  while (TRUE)
    {
      const void *block;
      size_t length;
      la_int64_t offset;
      int r = archive_read_data_block (archive, &block, &length, &offset);

      if (r == ARCHIVE_EOF)
        break;
      if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Layer %s: cannot read ‘%s’: %s", self->layer, path,
                       archive_error_string (archive));
          return FALSE;
        }
      if (offset < 0 || offset > size || (guint64) length > (guint64) (size - offset))
        return set_entry_error (self, error, path, "holds more data than its size");
      for (const guint8 *p = block; length > 0;)
        {
          ssize_t n = TEMP_FAILURE_RETRY (pwrite (fd, p, length, offset));

          if (n < 0)
            return set_errno_error (self, error, errno, "write", path);
          p += n;
          offset += n;
          length -= n;
        }
    }

  /* A sparse file's last hole; the permission bits only. */
  if (ftruncate (fd, size) < 0)
    return set_errno_error (self, error, errno, "write", path);
  if (fchmod (fd, archive_entry_perm (entry) & SANDBOX_RUNTIME_FILE_MODE_MASK) < 0)
    return set_errno_error (self, error, errno, "chmod", path);
  return TRUE;
}

/* A hard link to an entry of the tree other than a directory. */
static gboolean
write_hard_link (SandboxRuntimeLayers  *self,
                 const char            *raw_target,
                 int                    parent_fd,
                 const char            *name,
                 const char            *path,
                 GError               **error)
{
  g_autofree char *target = clean_entry_path (self, raw_target, error);
  g_autofree char *target_parent = NULL;
  g_auto(SandboxWorkspaceFd) target_parent_fd = -1;
  const char *target_name;
  struct stat st;

  if (target == NULL)
    return FALSE;
  if (target[0] == '\0')
    return set_entry_error (self, error, path, "is a hard link to the root");
  target_name = split_path (target, &target_parent);
  {
    g_autoptr(GError) local_error = NULL;

    target_parent_fd = open_directory (self, target_parent, path, FALSE, &local_error);
    if (g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
      return set_entry_error (self, error, path, "is a hard link to no entry of the image");
    if (target_parent_fd < 0)
      {
        g_propagate_error (error, g_steal_pointer (&local_error));
        return FALSE;
      }
  }
  if (fstatat (target_parent_fd, target_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return set_entry_error (self, error, path, "is a hard link to no entry of the image");
  if (S_ISDIR (st.st_mode))
    return set_entry_error (self, error, path, "is a hard link to a directory");
  /* No AT_SYMLINK_FOLLOW: a link to a symbolic link links the link. */
  if (linkat (target_parent_fd, target_name, parent_fd, name, 0) < 0)
    return set_errno_error (self, error, errno, "link", path);
  return TRUE;
}

static gboolean
apply_entry (SandboxRuntimeLayers  *self,
             struct archive        *archive,
             struct archive_entry  *entry,
             GError               **error)
{
  g_autofree char *path = clean_entry_path (self, archive_entry_pathname (entry), error);
  g_autofree char *parent = NULL;
  g_auto(SandboxWorkspaceFd) parent_fd = -1;
  const char *name;
  const char *hard_link;
  mode_t type;
  struct stat st;
  gboolean ok;

  if (path == NULL)
    return FALSE;
  if (path[0] == '\0')
    return TRUE;   /* the root: the caller's directory keeps its mode */
  name = split_path (path, &parent);
  if (g_str_has_prefix (name, WHITEOUT_PREFIX))
    return apply_whiteout (self, path, error);

  hard_link = archive_entry_hardlink (entry);
  type = archive_entry_filetype (entry);
  if (hard_link == NULL && (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFIFO || type == AE_IFSOCK))
    {
      if (g_cancellable_set_error_if_cancelled (self->budget->cancellable, error))
        return FALSE;
      sandbox_runtime_budget_skip (self->budget, path,
                                   type == AE_IFIFO ? "FIFO" : type == AE_IFSOCK ? "socket" : "device node");
      return TRUE;
    }
  if (hard_link == NULL && type != AE_IFDIR && type != AE_IFREG && type != AE_IFLNK)
    return set_entry_error (self, error, path, "is of an unknown type");

  if (!sandbox_runtime_budget_add_entry (self->budget, path, error))
    return FALSE;
  if (hard_link == NULL && type == AE_IFREG &&
      !sandbox_runtime_budget_add_bytes (self->budget, MAX (archive_entry_size (entry), 0), path, error))
    return FALSE;

  parent_fd = open_directory (self, parent, path, TRUE, error);
  if (parent_fd < 0)
    return FALSE;

  if (fstatat (parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (hard_link == NULL && type == AE_IFDIR && S_ISDIR (st.st_mode))
        {
          record_dir_mode (self, path, archive_entry_perm (entry));
          g_hash_table_add (self->this_layer, g_steal_pointer (&path));
          return TRUE;
        }
      if (!remove_existing (self, parent_fd, name, path, error))
        return FALSE;
    }
  else if (errno != ENOENT)
    return set_errno_error (self, error, errno, "inspect", path);

  if (hard_link != NULL)
    ok = write_hard_link (self, hard_link, parent_fd, name, path, error);
  else if (type == AE_IFDIR)
    {
      ok = mkdirat (parent_fd, name, 0700) == 0 || set_errno_error (self, error, errno, "create", path);
      if (ok)
        record_dir_mode (self, path, archive_entry_perm (entry));
    }
  else if (type == AE_IFREG)
    ok = write_file (self, archive, entry, parent_fd, name, path, error);
  else
    {
      const char *link_target = archive_entry_symlink (entry);

      /* The target text verbatim; symlinkat() never resolves it. */
      ok = link_target != NULL && link_target[0] != '\0'
             ? (symlinkat (link_target, parent_fd, name) == 0 ||
                set_errno_error (self, error, errno, "create the link", path))
             : set_entry_error (self, error, path, "is a symbolic link to nothing");
    }

  if (ok)
    g_hash_table_add (self->this_layer, g_steal_pointer (&path));
  return ok;
}

/*
 * sandbox_runtime_layers_apply:
 * @archive: a libarchive reader open on the layer's tar stream
 * @layer: the layer's digest, for messages
 *
 * Applies every entry of the layer on top of what the layers below made.
 *
 * Returns: %TRUE when the whole layer was read and applied
 */
gboolean
sandbox_runtime_layers_apply (SandboxRuntimeLayers  *self,
                              struct archive        *archive,
                              const char            *layer,
                              GError               **error)
{
  self->layer = layer;
  g_hash_table_remove_all (self->this_layer);

  while (TRUE)
    {
      struct archive_entry *entry;
      int r = archive_read_next_header (archive, &entry);

      if (r == ARCHIVE_EOF)
        return TRUE;
      if (r == ARCHIVE_WARN)
        g_debug ("Layer %s: %s", layer, archive_error_string (archive));
      else if (r != ARCHIVE_OK)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Layer %s is not a readable tar archive: %s", layer,
                       archive_error_string (archive));
          return FALSE;
        }
      if (!apply_entry (self, archive, entry, error))
        return FALSE;
    }
}

static gint
compare_deepest_first (gconstpointer a,
                       gconstpointer b)
{
  /* Descending: a directory's entries ("a/b") sort after it ("a"). */
  return -strcmp (*(const char * const *) a, *(const char * const *) b);
}

/*
 * sandbox_runtime_layers_finish:
 *
 * Gives every directory its mode once all layers are in.
 *
 * Returns: %TRUE when every directory has its mode
 */
gboolean
sandbox_runtime_layers_finish (SandboxRuntimeLayers  *self,
                               GError               **error)
{
  g_autofree gpointer *paths = NULL;
  guint n_paths;

  self->layer = "(all)";
  paths = g_hash_table_get_keys_as_array (self->dir_modes, &n_paths);
  qsort (paths, n_paths, sizeof (gpointer), compare_deepest_first);
  for (guint i = 0; i < n_paths; i++)
    {
      const char *path = paths[i];
      guint mode = GPOINTER_TO_UINT (g_hash_table_lookup (self->dir_modes, path)) - 1;
      g_auto(SandboxWorkspaceFd) path_fd = open_directory (self, path, path, FALSE, error);
      g_auto(SandboxWorkspaceFd) fd = -1;

      if (path_fd < 0)
        return FALSE;
      fd = openat (path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0 || fchmod (fd, mode) < 0)
        return set_errno_error (self, error, errno, "chmod", path);
    }

  return TRUE;
}
