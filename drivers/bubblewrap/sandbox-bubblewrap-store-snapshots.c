/* sandbox-bubblewrap-store-snapshots.c — a layered session's changes, frozen
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "sandbox-bubblewrap-quota-private.h"
#include "sandbox-bubblewrap-store-layout-private.h"
#include "stub/sandbox-stub-keeper.h"

/*
 * A snapshot of a layered session is its upper layer (its changes over
 * its template, or over the snapshot it was forked from: its parent),
 * copied into the store as templates/<key>/data beside a `parent` file
 * naming the parent's key and the `ready` record every template has. So
 * whatever takes a template key takes a snapshot's: a session created
 * from it is layered over the chain [its data, its parent's data, …, the
 * template's data] (sandbox_bubblewrap_store_lower_chain()), which the
 * keeper mounts as overlayfs' lower layers, top first.
 *
 * The copy walks only the upper layer, so its time and space follow the
 * session's changes, never the template. It keeps exactly what makes the
 * layer mean what it meant: directories (empty ones too), regular files'
 * contents, modes, symbolic links' targets, FIFOs and sockets, whiteouts
 * (0:0 character devices) and opaque directories (user.overlay.opaque,
 * the session's overlay mounts with userxattr). Of the other user.overlay.*
 * attributes only escaped ones (user.overlay.overlay.*, what a guest's
 * own user.overlay.* attributes are stored as) are kept, as they are: they
 * show the fork the guest's attributes again and mean nothing to overlayfs.
 * overlayfs' bookkeeping (origin, impure) and every attribute outside
 * user.* are left out; hard links become separate files; files are the
 * host's, as a template's data is (a fork's keeper shows them as its
 * guest's). Any other device refuses the snapshot.
 *
 * The key is sha256 over the parent's key and a digest of that tree: for
 * each entry, in name order, its path, type, mode, content digest or link
 * target, and kept attributes, each length-prefixed. Equal changes over
 * the same parent are one snapshot: the later copy is dropped.
 *
 * A session that copies its template (layering "copy": no overlayfs here)
 * has no layer of its changes: its snapshot is its whole workspace, copied
 * the same way, a *flat* snapshot (a `flat` file beside `parent`, and
 * "libsandbox-snapshot-flat-1" in its key), whose data is a whole tree: a
 * session layered over it has it as its only lower layer, and a copying
 * session is created from it by copying it, as from a template. Time and
 * space then follow the workspace, not the changes. A copying session is
 * created from a layered snapshot by materialising its chain
 * (sandbox-bubblewrap-store-merge.c); restores are
 * sandbox-bubblewrap-store-restore.c's.
 *
 * A layered session that already lies over SNAPSHOT_MAX_DEPTH snapshots
 * is not refused: its snapshot is *flattened*, its upper layer and every
 * layer of its chain but the bottom tree merged into one layer over that
 * tree (sandbox_bubblewrap_store_merge_layers_at()), a `flattened` file
 * naming the bottom's key beside `parent` (which still names the real
 * parent: the lineage stays). Forks of it lie over two layers again. Its
 * key is sha256 over "libsandbox-snapshot-flattened-1", the parent's key,
 * the bottom's key and the merged layer's digest (as stored, by the same
 * walk as any layer's), and the runtime part as below: deterministic, and
 * the same changes over the same line are one key.
 *
 * A session whose runtime is writable per session has a second upper
 * layer, its changes to the runtime (layers/runtime-upper): a snapshot
 * copies it the same way into runtime-data beside data, and its key
 * covers that tree's digest too ("runtime" and the digest after the
 * workspace's, only then, so no other snapshot's key changes). Its forks'
 * runtime overlays lie over it (sandbox_bubblewrap_store_runtime_of()),
 * and a restore puts it back as it puts back data. A flattened snapshot's
 * runtime-data is the runtime's layers merged the same way, over the
 * runtime's tree.
 */

/* How deep a layer's directories may nest. */
#define SNAPSHOT_MAX_NESTING 256u

typedef struct
{
  GChecksum *digest;
  GCancellable *cancellable;
} LayerCopy;

static void
digest_field (GChecksum  *digest,
              const void *data,
              gsize       length)
{
  guint64 prefix = GUINT64_TO_LE ((guint64) length);

  g_checksum_update (digest, (const guchar *) &prefix, sizeof prefix);
  g_checksum_update (digest, data, length);
}

static void
digest_string (GChecksum  *digest,
               const char *text)
{
  digest_field (digest, text, strlen (text));
}

static gboolean
kept_attribute (const char *name)
{
  if (!g_str_has_prefix (name, "user."))
    return FALSE;
  if (!g_str_has_prefix (name, "user.overlay."))
    return TRUE;
  return g_str_equal (name, "user.overlay.opaque") ||
         g_str_has_prefix (name, "user.overlay.overlay.");
}

static int
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(char * const *) a, *(char * const *) b);
}

/* Copies the kept attributes of @from to @to, and digests them. */
static gboolean
copy_attributes (int          from,
                 int          to,
                 GChecksum   *digest,
                 const char  *path,
                 GError     **error)
{
  g_autofree char *list = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  ssize_t size = flistxattr (from, NULL, 0);

  if (size < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
    size = 0;
  if (size < 0)
    return set_errno_error (error, errno, "Could not list the attributes of", path);
  list = g_malloc (size + 1);
  if (size > 0 && (size = flistxattr (from, list, size)) < 0)
    return set_errno_error (error, errno, "Could not list the attributes of", path);
  for (ssize_t i = 0; i < size; i += strlen (list + i) + 1)
    if (kept_attribute (list + i))
      g_ptr_array_add (names, list + i);
  g_ptr_array_sort (names, compare_names);
  digest_field (digest, &names->len, sizeof names->len);
  for (guint i = 0; i < names->len; i++)
    {
      const char *name = names->pdata[i];
      char value[4096];
      ssize_t length = fgetxattr (from, name, value, sizeof value);

      if (length < 0)
        return set_errno_error (error, errno, "Could not read an attribute of", path);
      if (fsetxattr (to, name, value, length, 0) < 0)
        return set_errno_error (error, errno, "Could not keep an attribute of", path);
      digest_string (digest, name);
      digest_field (digest, value, length);
    }
  return TRUE;
}

static gboolean
copy_contents (int          from,
               int          to,
               GChecksum   *digest,
               const char  *path,
               GError     **error)
{
  g_autoptr(GChecksum) contents = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree char *buffer = g_malloc (65536);

  for (;;)
    {
      ssize_t n = TEMP_FAILURE_RETRY (read (from, buffer, 65536));

      if (n < 0)
        return set_errno_error (error, errno, "Could not read", path);
      if (n == 0)
        break;
      g_checksum_update (contents, (const guchar *) buffer, n);
      for (ssize_t done = 0; done < n;)
        {
          ssize_t w = TEMP_FAILURE_RETRY (write (to, buffer + done, n - done));

          if (w < 0)
            return set_errno_error (error, errno, "Could not write the copy of", path);
          done += w;
        }
    }
  digest_string (digest, g_checksum_get_string (contents));
  return TRUE;
}

/* Whether @fd is the regular file @seen describes. */
static gboolean
same_regular_file (int                fd,
                   const struct stat *seen)
{
  struct stat st;

  return fstat (fd, &st) == 0 && S_ISREG (st.st_mode) &&
         st.st_dev == seen->st_dev && st.st_ino == seen->st_ino;
}

static gboolean copy_directory (LayerCopy   *copy,
                                int          from,
                                int          to,
                                const char  *path,
                                guint        nesting,
                                GError     **error);

/* Digests the entry @path's type and mode, the part every entry has. */
static void
digest_entry (LayerCopy   *copy,
              const char  *path,
              char         type,
              mode_t       mode)
{
  char mode_text[16];

  g_snprintf (mode_text, sizeof mode_text, "%o", (unsigned) (mode & 07777));
  digest_string (copy->digest, path);
  digest_field (copy->digest, &type, 1);
  digest_string (copy->digest, mode_text);
}

static gboolean
copy_entry (LayerCopy   *copy,
            int          from,
            int          to,
            const char  *name,
            const char  *path,
            guint        nesting,
            GError     **error)
{
  g_auto(SandboxBubblewrapFd) source = -1;
  g_auto(SandboxBubblewrapFd) target = -1;
  struct stat st;
  mode_t mode;

  if (fstatat (from, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return set_errno_error (error, errno, "Could not examine", path);
  mode = st.st_mode & 07777;
  switch (st.st_mode & S_IFMT)
    {
    case S_IFDIR:
      digest_entry (copy, path, 'd', mode);
      source = openat (from, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (source < 0 || mkdirat (to, name, 0700) < 0 ||
          (target = openat (to, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return set_errno_error (error, errno, "Could not copy directory", path);
      if (!copy_attributes (source, target, copy->digest, path, error) ||
          !copy_directory (copy, source, target, path, nesting + 1, error))
        return FALSE;
      if (fchmod (target, mode) < 0)
        return set_errno_error (error, errno, "Could not set the mode of", path);
      return TRUE;
    case S_IFREG:
      digest_entry (copy, path, 'f', mode);
      /* The gate keeps every guest process out while this runs; should one
       * still swap the file for a FIFO or another file after the fstatat(),
       * O_NONBLOCK keeps the open from hanging and the check refuses it. */
      source = openat (from, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
      if (source >= 0 && !same_regular_file (source, &st))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                       "Could not snapshot %s: it changed while being copied", path);
          return FALSE;
        }
      target = source < 0 ? -1 : openat (to, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
                                                   O_CLOEXEC, 0600);
      if (target < 0)
        return set_errno_error (error, errno, "Could not copy file", path);
      if (!copy_contents (source, target, copy->digest, path, error) ||
          !copy_attributes (source, target, copy->digest, path, error))
        return FALSE;
      if (fchmod (target, mode) < 0)
        return set_errno_error (error, errno, "Could not set the mode of", path);
      return TRUE;
    case S_IFLNK:
      {
        g_autofree char *link = g_malloc (PATH_MAX + 1);
        ssize_t length = readlinkat (from, name, link, PATH_MAX);

        if (length < 0)
          return set_errno_error (error, errno, "Could not read link", path);
        link[length] = '\0';
        digest_entry (copy, path, 'l', 0);
        digest_string (copy->digest, link);
        if (symlinkat (link, to, name) < 0)
          return set_errno_error (error, errno, "Could not copy link", path);
        return TRUE;
      }
    case S_IFCHR:
      if (st.st_rdev != makedev (0, 0))
        break;
      /* A whiteout: overlayfs makes them mode 0. */
      digest_entry (copy, path, 'w', 0);
      if (mknodat (to, name, S_IFCHR, makedev (0, 0)) < 0)
        return set_errno_error (error, errno, "Could not copy whiteout", path);
      return TRUE;
    case S_IFIFO:
    case S_IFSOCK:
      digest_entry (copy, path, S_ISFIFO (st.st_mode) ? 'p' : 's', mode);
      if (mknodat (to, name, (st.st_mode & S_IFMT) | 0600, 0) < 0 ||
          fchmodat (to, name, mode, 0) < 0)
        return set_errno_error (error, errno, "Could not copy", path);
      return TRUE;
    default:
      break;
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
               "Could not snapshot %s: a device file", path);
  return FALSE;
}

static gboolean
copy_directory (LayerCopy   *copy,
                int          from,
                int          to,
                const char  *path,
                guint        nesting,
                GError     **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  int listed = fcntl (from, F_DUPFD_CLOEXEC, 3);
  DIR *directory;
  struct dirent *entry;

  if (nesting > SNAPSHOT_MAX_NESTING)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                   "Could not snapshot %s: directories nest deeper than %u", path,
                   SNAPSHOT_MAX_NESTING);
      return FALSE;
    }
  if (g_cancellable_set_error_if_cancelled (copy->cancellable, error))
    return FALSE;
  if (listed < 0 || (directory = fdopendir (listed)) == NULL)
    {
      int saved_errno = errno;

      if (listed >= 0)
        close (listed);
      return set_errno_error (error, saved_errno, "Could not list", path);
    }
  while ((entry = readdir (directory)) != NULL)
    if (strcmp (entry->d_name, ".") != 0 && strcmp (entry->d_name, "..") != 0)
      g_ptr_array_add (names, g_strdup (entry->d_name));
  closedir (directory);
  g_ptr_array_sort (names, compare_names);
  for (guint i = 0; i < names->len; i++)
    {
      g_autofree char *child = g_strconcat (path, "/", names->pdata[i], NULL);

      if (!copy_entry (copy, from, to, names->pdata[i], child, nesting, error))
        return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_store_copy_entry_at:
 * @from: the directory holding @name
 * @to: the directory to copy it into, where @name does not exist
 * @name: an entry's name
 * @path: its path, for messages
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Copies one entry of a layer (a directory with all it holds) as a
 * snapshot does (see above), for sandbox-bubblewrap-store-merge.c.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_bubblewrap_store_copy_entry_at (int            from,
                                        int            to,
                                        const char    *name,
                                        const char    *path,
                                        GCancellable  *cancellable,
                                        GError       **error)
{
  g_autoptr(GChecksum) digest = g_checksum_new (G_CHECKSUM_SHA256);
  LayerCopy copy = { digest, cancellable };

  return copy_entry (&copy, from, to, name, path, 0, error);
}

/**
 * sandbox_bubblewrap_store_copy_attributes_at:
 * @from: a file or directory
 * @to: another
 * @path: @from's path, for messages
 * @error: return location for a #GError
 *
 * Copies the attributes a snapshot keeps (see above).
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_bubblewrap_store_copy_attributes_at (int          from,
                                             int          to,
                                             const char  *path,
                                             GError     **error)
{
  g_autoptr(GChecksum) digest = g_checksum_new (G_CHECKSUM_SHA256);

  return copy_attributes (from, to, digest, path, error);
}

/* Reads templates/@key/parent: TRUE with *@parent NULL for a template. */
gboolean
sandbox_bubblewrap_store_read_parent (SandboxBubblewrapStore  *self,
                                      const char              *key,
                                      char                   **parent,
                                      GError                 **error)
{
  g_autofree char *path = g_build_filename (self->templates, key, "parent", NULL);
  g_autoptr(GError) local_error = NULL;

  *parent = NULL;
  if (!g_file_get_contents (path, parent, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (!sandbox_template_key_is_valid (*parent))
    {
      g_clear_pointer (parent, g_free);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH,
                   "Snapshot %s names no valid parent", key);
      return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_store_read_flattened:
 * @self: a store
 * @key: a stored template's or snapshot's key
 * @below: (out) (transfer full): for a flattened snapshot, the key of the
 *   whole tree its data lies over; %NULL otherwise
 * @error: return location for a #GError
 *
 * Returns: %TRUE, or %FALSE with @error set when the record is damaged
 */
gboolean
sandbox_bubblewrap_store_read_flattened (SandboxBubblewrapStore  *self,
                                         const char              *key,
                                         char                   **below,
                                         GError                 **error)
{
  g_autofree char *path = g_build_filename (self->templates, key, FLATTENED_MARK, NULL);
  g_autoptr(GError) local_error = NULL;

  *below = NULL;
  if (!g_file_get_contents (path, below, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (!sandbox_template_key_is_valid (*below))
    {
      g_clear_pointer (below, g_free);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH,
                   "Snapshot %s names no valid flattened base", key);
      return FALSE;
    }
  return TRUE;
}

/* Whether @key is a flat snapshot: its data a whole tree (see above). */
gboolean
sandbox_bubblewrap_store_is_flat (SandboxBubblewrapStore *self,
                                  const char             *key)
{
  g_autofree char *path = g_build_filename (self->templates, key, "flat", NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/**
 * sandbox_bubblewrap_store_lower_chain:
 * @self: a store
 * @key: a stored template's or snapshot's key (checked by the caller)
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the host paths of the lower layers of a
 *   session layered over @key, top first: its data, then each parent's
 *   down to the template's; %NULL with %SANDBOX_ERROR_LIMIT past
 *   %SNAPSHOT_MAX_DEPTH snapshots, or another error when a parent is not
 *   stored
 */
char **
sandbox_bubblewrap_store_lower_chain (SandboxBubblewrapStore  *self,
                                      const char              *key,
                                      GError                 **error)
{
  g_autoptr(GStrvBuilder) chain = g_strv_builder_new ();
  g_autofree char *current = g_strdup (key);

  for (guint depth = 0; current != NULL; depth++)
    {
      g_autofree char *parent = NULL;

      if (depth > SNAPSHOT_MAX_DEPTH)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                       "Snapshot %s lies over more than %u snapshots", key, SNAPSHOT_MAX_DEPTH);
          return NULL;
        }
      if (!sandbox_bubblewrap_store_check_template (self, current, error) ||
          !sandbox_bubblewrap_store_read_parent (self, current, &parent, error))
        return NULL;
      g_autofree char *data = g_build_filename (self->templates, current, "data", NULL);

      g_autofree char *below = NULL;

      g_strv_builder_add (chain, data);
      if (!sandbox_bubblewrap_store_read_flattened (self, current, &below, error))
        return NULL;
      /* A flat snapshot's data is a whole tree: nothing lies below it; a
       * flattened one's lies over the bottom of its line. */
      if (sandbox_bubblewrap_store_is_flat (self, current))
        g_clear_pointer (&parent, g_free);
      else if (below != NULL)
        {
          g_free (parent);
          parent = g_steal_pointer (&below);
        }
      g_free (current);
      current = g_steal_pointer (&parent);
    }
  return g_strv_builder_end (chain);
}

/* Whether @key's data is a layer over a parent's (a layered session's
 * snapshot), not a whole tree (a template, or a flat snapshot). */
gboolean
sandbox_bubblewrap_store_is_layer (SandboxBubblewrapStore *self,
                                   const char             *key)
{
  g_autofree char *path = g_build_filename (self->templates, key, "parent", NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS) && !sandbox_bubblewrap_store_is_flat (self, key);
}

/**
 * sandbox_bubblewrap_store_count_children:
 * @self: a store
 * @key: a stored template's or snapshot's key
 *
 * Returns: how many stored snapshots have @key as their parent
 */
guint
sandbox_bubblewrap_store_count_children (SandboxBubblewrapStore *self,
                                         const char             *key)
{
  g_autoptr(GPtrArray) keys = sandbox_bubblewrap_store_list_ids (self->templates, NULL);
  guint n = 0;

  for (guint i = 0; keys != NULL && i < keys->len; i++)
    {
      g_autofree char *parent = NULL;

      if (sandbox_bubblewrap_store_read_parent (self, keys->pdata[i], &parent, NULL) && g_strcmp0 (parent, key) == 0)
        n++;
    }
  return n;
}

/**
 * sandbox_bubblewrap_store_copy_layer_at:
 * @from: a layer's directory
 * @to: an empty directory
 * @path: @to's path, for messages
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Copies the layer @from into @to, keeping exactly what the layer means
 * (see above).
 *
 * Returns: (transfer full): the digest of the tree, hex; %NULL with @error
 */
char *
sandbox_bubblewrap_store_copy_layer_at (int            from,
                                        int            to,
                                        const char    *path,
                                        GCancellable  *cancellable,
                                        GError       **error)
{
  g_autoptr(GChecksum) digest = g_checksum_new (G_CHECKSUM_SHA256);
  LayerCopy copy = { digest, cancellable };
  struct stat st;

  if (fstat (from, &st) < 0)
    return set_errno_error (error, errno, "Could not examine the layer for", path), NULL;
  digest_entry (&copy, "", 'd', st.st_mode);
  if (!copy_attributes (from, to, digest, "/", error) ||
      !copy_directory (&copy, from, to, "", 0, error))
    return NULL;
  if (fchmod (to, st.st_mode & 07777) < 0)
    return set_errno_error (error, errno, "Could not set the mode of", path), NULL;
  return g_strdup (g_checksum_get_string (digest));
}

/* Copies @upper into @data, made here. */
static char *
copy_layer (const char    *upper,
            const char    *data,
            GCancellable  *cancellable,
            GError       **error)
{
  g_auto(SandboxBubblewrapFd) from = open_directory (upper, error);
  g_auto(SandboxBubblewrapFd) to = -1;

  if (from < 0)
    return NULL;
  if (mkdir (data, 0700) < 0)
    return set_errno_error (error, errno, "Could not create directory", data), NULL;
  to = open_directory (data, error);
  if (to < 0)
    return NULL;
  return sandbox_bubblewrap_store_copy_layer_at (from, to, data, cancellable, error);
}

/* A layered session's changes to its writable runtime, copied into
 * @build/runtime-data: TRUE with *@digest the tree's, or NULL for a
 * session without them. */
static gboolean
copy_runtime_layer (SandboxBubblewrapLease  *lease,
                    const char              *build,
                    char                   **digest,
                    GCancellable            *cancellable,
                    GError                 **error)
{
  g_autofree char *upper = NULL;
  g_autofree char *data = g_build_filename (build, RUNTIME_LAYER, NULL);
  struct stat st;

  *digest = NULL;
  if (lease->layers == NULL)
    return TRUE;
  upper = g_build_filename (lease->layers, STUB_KEEPER_RUNTIME_UPPER, NULL);
  if (lstat (upper, &st) < 0 && errno == ENOENT)
    return TRUE;
  *digest = copy_layer (upper, data, cancellable, error);
  return *digest != NULL;
}

static char *
snapshot_name (SandboxBubblewrapStore *self,
               const char             *parent)
{
  g_autofree char *name = NULL;

  if (!sandbox_bubblewrap_store_read_template_name (self, parent, &name, NULL) || name == NULL)
    return g_strdup_printf ("snapshot of %.12s", parent);
  return g_strdup_printf ("%s (snapshot)", name);
}

/* Merges @layers (top first) into a layer over what lies below the last,
 * made as @build/@name, and returns its digest: merged in a scratch
 * directory beside it, then copied as a snapshot copies a layer, so the
 * stored layer and its digest are exactly what the copy keeps. */
static char *
merge_layer (const char * const  *layers,
             const char          *build,
             const char          *name,
             GCancellable        *cancellable,
             GError             **error)
{
  g_autofree char *scratch_name = g_strconcat ("merging-", name, NULL);
  g_autofree char *scratch = g_build_filename (build, scratch_name, NULL);
  g_autofree char *data = g_build_filename (build, name, NULL);
  g_auto(SandboxBubblewrapFd) build_fd = open_directory (build, error);
  char *digest = NULL;

  if (build_fd < 0)
    return NULL;
  if (sandbox_bubblewrap_store_merge_layers_at (layers, TRUE, build_fd, scratch_name,
                                                cancellable, error))
    digest = copy_layer (scratch, data, cancellable, error);
  sandbox_workspace_remove_tree_at (build_fd, scratch_name, NULL);
  return digest;
}

/* @first, then @chain but its last element (the whole tree at the
 * bottom). */
static char **
layers_above_bottom (const char  *first,
                     char       **chain)
{
  g_autoptr(GStrvBuilder) layers = g_strv_builder_new ();
  guint n = g_strv_length (chain);

  g_strv_builder_add (layers, first);
  for (guint i = 0; i + 1 < n; i++)
    g_strv_builder_add (layers, chain[i]);
  return g_strv_builder_end (layers);
}

/* A session past SNAPSHOT_MAX_DEPTH: its changes and every layer of its
 * line but the bottom tree merged into one layer over that tree (and its
 * runtime's likewise over the runtime's tree): *@bottom its key. */
static gboolean
flatten_layers (SandboxBubblewrapStore  *self,
                SandboxBubblewrapLease  *lease,
                char                   **chain,
                const char              *build,
                char                   **bottom,
                char                   **tree,
                char                   **runtime_tree,
                GCancellable            *cancellable,
                GError                 **error)
{
  g_auto(GStrv) layers = layers_above_bottom (lease->workspace, chain);
  g_autofree char *bottom_dir = g_path_get_dirname (chain[g_strv_length (chain) - 1]);
  g_autofree char *upper = g_build_filename (lease->layers, STUB_KEEPER_RUNTIME_UPPER, NULL);
  g_autofree char *runtime_key = NULL;
  g_autofree char *runtime = NULL;
  g_auto(GStrv) runtime_lowers = NULL;
  g_auto(GStrv) runtime_layers = NULL;
  struct stat st;

  *bottom = g_path_get_basename (bottom_dir);
  *tree = merge_layer ((const char * const *) layers, build, "data", cancellable, error);
  if (*tree == NULL)
    return FALSE;
  if (lstat (upper, &st) < 0 && errno == ENOENT)
    return TRUE;
  if (!sandbox_bubblewrap_store_runtime_of (self, sandbox_state_get_template_key (lease->state),
                                            &runtime_key, &runtime, &runtime_lowers, error))
    return FALSE;
  if (runtime_lowers == NULL)
    return TRUE;
  runtime_layers = layers_above_bottom (upper, runtime_lowers);
  *runtime_tree = merge_layer ((const char * const *) runtime_layers, build, RUNTIME_LAYER,
                               cancellable, error);
  return *runtime_tree != NULL;
}

/* Writes the record of templates/@uuid (and its `flat` mark) and renames
 * it to templates/@key, unless that is stored already. */
static gboolean
name_snapshot (SandboxBubblewrapStore  *self,
               int                      templates_fd,
               const char              *uuid,
               const char              *key,
               const char              *parent,
               gboolean                 flat,
               const char              *flattened,
               GError                 **error)
{
  g_autofree char *temporary = g_build_filename (self->templates, uuid, NULL);
  g_autofree char *parent_path = g_build_filename (temporary, "parent", NULL);
  g_autofree char *flat_path = g_build_filename (temporary, "flat", NULL);
  g_autofree char *flattened_path = g_build_filename (temporary, FLATTENED_MARK, NULL);
  g_autofree char *ready = g_build_filename (temporary, "ready", NULL);
  g_autofree char *directory = g_build_filename (self->templates, key, NULL);
  g_autofree char *name = snapshot_name (self, parent);
  g_autofree char *record = sandbox_bubblewrap_store_ready_record (self->name, key, name);

  if (!sandbox_bubblewrap_store_write_new_file (parent_path, parent, self->durable, error) ||
      (flat && !sandbox_bubblewrap_store_write_new_file (flat_path, "", self->durable, error)) ||
      (flattened != NULL &&
       !sandbox_bubblewrap_store_write_new_file (flattened_path, flattened, self->durable,
                                                 error)) ||
      !sandbox_bubblewrap_store_write_new_file (ready, record, self->durable, error) ||
      (self->durable &&
       !sandbox_bubblewrap_store_sync_tree (templates_fd, uuid, temporary, 0, error)))
    return FALSE;
  if (rename (temporary, directory) == 0)
    return !self->durable || sync_fd (templates_fd, self->templates, error);
  if (errno == EEXIST || errno == ENOTEMPTY)
    return TRUE;   /* the same changes over the same parent, stored already */
  return set_errno_error (error, errno, "Could not store snapshot", directory);
}

/**
 * sandbox_bubblewrap_store_snapshot:
 * @self: a store
 * @lease: a live session's lease; no command of it runs
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stores the session's changes as a snapshot over its template, or a
 * copying session's workspace as a flat snapshot (see above). The session
 * itself is left as it is.
 *
 * Returns: (transfer full): the snapshot's key, or %NULL with @error set
 */
char *
sandbox_bubblewrap_store_snapshot (SandboxBubblewrapStore  *self,
                                   SandboxBubblewrapLease  *lease,
                                   GCancellable            *cancellable,
                                   GError                 **error)
{
  const char *parent = sandbox_state_get_template_key (lease->state);
  g_autofree char *uuid = NULL;
  g_autofree char *data = NULL;
  g_autofree char *tree = NULL;
  g_autofree char *key = NULL;
  g_autofree char *build_path = NULL;
  g_autofree char *runtime_tree = NULL;
  g_auto(GStrv) chain = NULL;
  g_auto(SandboxBubblewrapFd) templates_fd = -1;
  g_auto(SandboxBubblewrapFd) build = -1;
  g_autofree char *bottom = NULL;
  gboolean flat = lease->layers == NULL;
  gboolean flattened;
  gboolean ok;

  chain = sandbox_bubblewrap_store_lower_chain (self, parent, error);
  if (chain == NULL)
    return NULL;
  /* Past the bound, a layer over the line's bottom tree (see above). */
  flattened = !flat && g_strv_length (chain) > SNAPSHOT_MAX_DEPTH;
  templates_fd = open_directory (self->templates, error);
  if (templates_fd < 0 ||
      (build = sandbox_bubblewrap_store_begin_build (self->templates, templates_fd, &uuid,
                                                       error)) < 0)
    return NULL;
  build_path = g_build_filename (self->templates, uuid, NULL);
  data = g_build_filename (build_path, "data", NULL);
  if (flattened)
    ok = flatten_layers (self, lease, chain, build_path, &bottom, &tree, &runtime_tree,
                         cancellable, error);
  else
    ok = (tree = copy_layer (lease->workspace, data, cancellable, error)) != NULL &&
         copy_runtime_layer (lease, build_path, &runtime_tree, cancellable, error);
  if (ok)
    {
      g_autofree char *runtime_part = runtime_tree != NULL
                                      ? g_strconcat ("\nruntime\n", runtime_tree, NULL)
                                      : g_strdup ("");
      g_autofree char *material = NULL;

      if (flattened)
        material = g_strconcat ("libsandbox-snapshot-flattened-1\n", parent, "\n", bottom, "\n",
                                tree, runtime_part, NULL);
      else
        material = g_strconcat (flat ? "libsandbox-snapshot-flat-1" : "libsandbox-snapshot-1",
                                "\n", parent, "\n", tree, runtime_part, NULL);
      key = sha256_hex (material);
    }
  ok = key != NULL && name_snapshot (self, templates_fd, uuid, key, parent, flat, bottom, error);
  /* Gone after a successful rename; a duplicate or a leftover otherwise. */
  sandbox_workspace_remove_tree_at (templates_fd, uuid, NULL);
  return ok ? g_steal_pointer (&key) : NULL;
}
