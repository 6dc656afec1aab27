/* sandbox-bubblewrap-store-merge.c — a chain of layers merged into one
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <dirent.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "sandbox-bubblewrap-store-layout-private.h"

/*
 * Two uses, one walk. A snapshot past SNAPSHOT_MAX_DEPTH is stored over a
 * flattened base: the chain's layers merged into one *layer* (as_layer),
 * which over the chain's bottom tree means what the whole chain meant, so
 * whiteouts and opaque marks stay where they still hide something below.
 * A copying session created from (or restored to) a layered snapshot gets
 * the chain *materialised*: bottom tree and layers merged into a plain
 * tree, whiteouts and opaque marks applied and dropped.
 *
 * The layers are applied bottom first into a directory this process made,
 * as overlayfs reads them: a whiteout removes what lies below (and, in a
 * layer, stays); a directory over a directory merges with it unless it is
 * opaque (user.overlay.opaque "y", the session overlays' userxattr mark),
 * its own mode and attributes winning; anything else replaces what lies
 * below. A directory replacing a whiteout or a non-directory is marked
 * opaque in a layer, as overlayfs stops looking below there.
 *
 * Every step is relative to a descriptor, and nothing is followed: what a
 * guest made a link in one layer is removed as any other entry when the
 * next layer has a directory there, never written through. Entries are
 * copied by sandbox_bubblewrap_store_copy_entry_at(), which keeps only
 * what a snapshot keeps (no device but a whiteout, no overlayfs attribute
 * but the opaque mark and escaped ones).
 */

#define MERGE_MAX_NESTING 256u
#define OPAQUE_ATTRIBUTE "user.overlay.opaque"

static gboolean
is_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

static gboolean
is_opaque (int fd)
{
  char value[2];

  return fgetxattr (fd, OPAQUE_ATTRIBUTE, value, sizeof value) == 1 && value[0] == 'y';
}

static gboolean
set_opaque (int          fd,
            gboolean     opaque,
            const char  *path,
            GError     **error)
{
  if (opaque && fsetxattr (fd, OPAQUE_ATTRIBUTE, "y", 1, 0) < 0)
    return set_errno_error (error, errno, "Could not mark opaque", path);
  if (!opaque && fremovexattr (fd, OPAQUE_ATTRIBUTE) < 0 && errno != ENODATA)
    return set_errno_error (error, errno, "Could not unmark", path);
  return TRUE;
}

/* Removes @fd's user.* attributes: a directory's upper one replaces them. */
static gboolean
clear_attributes (int          fd,
                  const char  *path,
                  GError     **error)
{
  g_autofree char *list = NULL;
  ssize_t size = flistxattr (fd, NULL, 0);

  if (size <= 0)
    return TRUE;
  list = g_malloc (size);
  if ((size = flistxattr (fd, list, size)) < 0)
    return set_errno_error (error, errno, "Could not list the attributes of", path);
  for (ssize_t i = 0; i < size; i += strlen (list + i) + 1)
    if (g_str_has_prefix (list + i, "user.") && fremovexattr (fd, list + i) < 0)
      return set_errno_error (error, errno, "Could not replace the attributes of", path);
  return TRUE;
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

static GPtrArray *
list_names (int          fd,
            const char  *path,
            GError     **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int listed = fcntl (fd, F_DUPFD_CLOEXEC, 3);
  DIR *directory = listed >= 0 ? fdopendir (listed) : NULL;
  struct dirent *entry;

  if (directory == NULL)
    {
      int saved_errno = errno;

      if (listed >= 0)
        close (listed);
      return set_errno_error (error, saved_errno, "Could not list", path), NULL;
    }
  while ((entry = readdir (directory)) != NULL)
    if (strcmp (entry->d_name, ".") != 0 && strcmp (entry->d_name, "..") != 0)
      g_ptr_array_add (names, g_strdup (entry->d_name));
  closedir (directory);
  g_ptr_array_sort (names, compare_names);
  return g_steal_pointer (&names);
}

typedef struct
{
  gboolean as_layer;
  GCancellable *cancellable;
} Merge;

static gboolean apply_directory (Merge       *merge,
                                 int          from,
                                 int          to,
                                 const char  *path,
                                 guint        nesting,
                                 GError     **error);

/* The directory @name of a layer (@from) over what @to holds there. */
static gboolean
apply_subdirectory (Merge             *merge,
                    int                from,
                    int                to,
                    const char        *name,
                    const char        *path,
                    const struct stat *below,
                    guint              nesting,
                    GError           **error)
{
  g_auto(SandboxBubblewrapFd) source = openat (from, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
                                                           O_CLOEXEC);
  g_auto(SandboxBubblewrapFd) target = -1;
  struct stat st;
  gboolean opaque, merged, hides;

  if (source < 0 || fstat (source, &st) < 0)
    return set_errno_error (error, errno, "Could not open", path);
  opaque = is_opaque (source);
  merged = below != NULL && S_ISDIR (below->st_mode) && !opaque;
  /* In a layer, a directory that replaced something hides what lies
   * further down, as overlayfs stops there. */
  hides = merge->as_layer && (opaque || below != NULL);
  if (!merged && below != NULL && !sandbox_workspace_remove_tree_at (to, name, error))
    return FALSE;
  if (!merged && mkdirat (to, name, 0700) < 0)
    return set_errno_error (error, errno, "Could not create directory", path);
  target = openat (to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (target < 0)
    return set_errno_error (error, errno, "Could not open", path);
  if (merged)
    {
      hides = merge->as_layer && is_opaque (target);
      /* Writable while the layers above fill it. */
      if (fchmod (target, 0700) < 0)
        return set_errno_error (error, errno, "Could not merge into", path);
      if (!clear_attributes (target, path, error))
        return FALSE;
    }
  if (!sandbox_bubblewrap_store_copy_attributes_at (source, target, path, error) ||
      !set_opaque (target, hides, path, error) ||
      !apply_directory (merge, source, target, path, nesting + 1, error))
    return FALSE;
  if (fchmod (target, st.st_mode & 07777) < 0)
    return set_errno_error (error, errno, "Could not set the mode of", path);
  return TRUE;
}

/* Applies the layer directory @from over @to (see above). */
static gboolean
apply_directory (Merge       *merge,
                 int          from,
                 int          to,
                 const char  *path,
                 guint        nesting,
                 GError     **error)
{
  g_autoptr(GPtrArray) names = NULL;

  if (nesting > MERGE_MAX_NESTING)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                   "Could not merge %s: directories nest deeper than %u", path,
                   MERGE_MAX_NESTING);
      return FALSE;
    }
  if (g_cancellable_set_error_if_cancelled (merge->cancellable, error) ||
      (names = list_names (from, path, error)) == NULL)
    return FALSE;
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      g_autofree char *child = g_strconcat (path, "/", name, NULL);
      struct stat st, below;
      gboolean present;

      if (fstatat (from, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return set_errno_error (error, errno, "Could not examine", child);
      present = fstatat (to, name, &below, AT_SYMLINK_NOFOLLOW) == 0;
      if (!present && errno != ENOENT)
        return set_errno_error (error, errno, "Could not examine", child);
      if (S_ISDIR (st.st_mode))
        {
          if (!apply_subdirectory (merge, from, to, name, child, present ? &below : NULL,
                                   nesting, error))
            return FALSE;
          continue;
        }
      if (present && !sandbox_workspace_remove_tree_at (to, name, error))
        return FALSE;
      if (is_whiteout (&st))
        {
          if (merge->as_layer && mknodat (to, name, S_IFCHR, makedev (0, 0)) < 0)
            return set_errno_error (error, errno, "Could not keep whiteout", child);
          continue;
        }
      if (!sandbox_bubblewrap_store_copy_entry_at (from, to, name, child, merge->cancellable,
                                                   error))
        return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_store_merge_layers_at:
 * @layers: host paths of directories, top first
 * @as_layer: whether the result is a layer over what lies below the last
 *   of @layers (whiteouts and opaque marks kept), or a plain tree (the last
 *   of @layers a whole tree, whiteouts and opaque marks applied)
 * @parent_fd: where to make @name
 * @name: the directory to make, which must not exist
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Merges @layers as overlayfs reads them (see above). What is left of
 * @name on failure is the caller's to remove.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_bubblewrap_store_merge_layers_at (const char * const  *layers,
                                          gboolean             as_layer,
                                          int                  parent_fd,
                                          const char          *name,
                                          GCancellable        *cancellable,
                                          GError             **error)
{
  Merge merge = { as_layer, cancellable };
  g_auto(SandboxBubblewrapFd) to = -1;
  guint n = g_strv_length ((char **) layers);
  mode_t mode = 0755;

  if (mkdirat (parent_fd, name, 0700) < 0 ||
      (to = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    return set_errno_error (error, errno, "Could not create directory", name);
  for (guint i = n; i-- > 0;)
    {
      g_auto(SandboxBubblewrapFd) from = open_directory (layers[i], error);
      struct stat st;

      if (from < 0)
        return FALSE;
      if (fstat (from, &st) < 0)
        return set_errno_error (error, errno, "Could not examine", layers[i]);
      mode = st.st_mode & 07777;
      /* The top directory's attributes are the uppermost layer's. */
      if (!clear_attributes (to, name, error) ||
          !sandbox_bubblewrap_store_copy_attributes_at (from, to, name, error) ||
          !set_opaque (to, FALSE, name, error) ||
          !apply_directory (&merge, from, to, "", 0, error))
        return FALSE;
    }
  if (fchmod (to, mode) < 0)
    return set_errno_error (error, errno, "Could not set the mode of", name);
  return TRUE;
}
