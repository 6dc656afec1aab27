/* sandbox-cluster-checkpoint.c — walking a live workspace into a checkpoint
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The walk only ever descends: each step opens one entry name relative to
 * the directory descriptor it came from, with O_NOFOLLOW, and looks at what
 * it opened with fstat() before using it. A guest that swaps a directory for
 * a link between the listing and the open gets ELOOP (the entry is skipped);
 * one that renames a directory the walk is in only moves it elsewhere inside
 * the workspace (a guest sees nothing else to move it to). So the walk reads
 * nothing outside the workspace, and never blocks: FIFOs, sockets and
 * devices are never opened, and files are opened O_NONBLOCK and must be
 * regular. A file is read at most up to the size it had when it was opened.
 *
 * Each file is hashed first and stored only if the store lacks that blob,
 * so a checkpoint of an unchanged workspace reads it but writes only the
 * manifest. The bytes stored are hashed again as they are written, and the
 * manifest names what was stored (a file the guest changed in between is
 * recorded as it was stored).
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gio/gunixinputstream.h>

#include "sandbox-cluster-checkpoint-private.h"

typedef struct
{
  SandboxClusterBlobStore        *store;
  GCancellable                   *cancellable;
  GPtrArray                      *entries;
  SandboxClusterCheckpointStats   stats;
  dev_t                           device;   /* the workspace's filesystem */
} Walk;

/*
 * sandbox_cluster_checkpoint_set_errno_error:
 * @error: return location for a #GError
 * @saved_errno: the errno of the failed call
 * @action: "checkpoint" or "materialise"
 * @path: the workspace-relative path it failed on
 *
 * Returns: %FALSE
 */
gboolean
sandbox_cluster_checkpoint_set_errno_error (GError     **error,
                                            int          saved_errno,
                                            const char  *action,
                                            const char  *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "Cannot %s ‘%s’: %s", action, path, g_strerror (saved_errno));
  return FALSE;
}

static gboolean
set_walk_error (GError     **error,
                int          saved_errno,
                const char  *path)
{
  return sandbox_cluster_checkpoint_set_errno_error (error, saved_errno, "checkpoint", path);
}

/* Leaves @path out of the checkpoint, saying why. */
static gboolean
skip (Walk       *walk,
      const char *path,
      const char *reason)
{
  g_info ("Checkpoint skips ‘%s’: %s", path, reason);
  walk->stats.skipped++;
  return TRUE;
}

/* Whether an open() or readlink() of an entry found it replaced or gone. */
static gboolean
changed_meanwhile (int saved_errno)
{
  return saved_errno == ENOENT || saved_errno == ELOOP || saved_errno == ENOTDIR ||
         saved_errno == EINVAL || saved_errno == ENXIO;
}

/* An open() or readlink() of an entry failed: skipped if the guest replaced
 * or removed it meanwhile, else an error. */
static gboolean
skip_or_fail (Walk        *walk,
              int          saved_errno,
              const char  *path,
              GError     **error)
{
  if (changed_meanwhile (saved_errno))
    return skip (walk, path, "it changed while it was walked");
  return set_walk_error (error, saved_errno, path);
}

static SandboxClusterEntry *
add_entry (Walk                    *walk,
           const char              *path,
           SandboxClusterEntryKind  kind)
{
  SandboxClusterEntry *entry = g_new0 (SandboxClusterEntry, 1);

  entry->path = g_strdup (path);
  entry->kind = kind;
  g_ptr_array_add (walk->entries, entry);
  return entry;
}

/*
 * store_file:
 * @walk: the walk
 * @fd: a regular file open for reading, at offset 0
 * @size: its size when it was opened: no more is read
 * @entry: (inout): its entry; gets the stored size and digest
 *
 * Returns: %TRUE on success
 */
static gboolean
store_file (Walk                 *walk,
            int                   fd,
            guint64               size,
            SandboxClusterEntry  *entry,
            GError              **error)
{
  g_autoptr(GInputStream) input = g_unix_input_stream_new (fd, FALSE);

  if (!sandbox_cluster_blob_copy (input, size, NULL, &entry->sha256, &entry->size,
                                  walk->cancellable, error))
    return FALSE;
  if (sandbox_cluster_blob_store_has_blob (walk->store, entry->sha256, entry->size))
    return TRUE;

  g_clear_pointer (&entry->sha256, g_free);
  if (lseek (fd, 0, SEEK_SET) < 0)
    return set_walk_error (error, errno, entry->path);
  if (!sandbox_cluster_blob_store_put_blob (walk->store, input, size, &entry->sha256,
                                            &entry->size, walk->cancellable, error))
    return FALSE;
  walk->stats.blobs_written++;
  walk->stats.bytes_written += entry->size;
  return TRUE;
}

static gboolean
add_file (Walk        *walk,
          int          dir_fd,
          const char  *name,
          const char  *path,
          GError     **error)
{
  struct stat st;
  SandboxClusterEntry *entry;
  gboolean stored;
  int fd;

  fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return skip_or_fail (walk, errno, path, error);
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    {
      g_close (fd, NULL);
      return skip (walk, path, "it changed while it was walked");
    }

  entry = add_entry (walk, path, SANDBOX_CLUSTER_ENTRY_FILE);
  entry->mode = st.st_mode & 0777;
  stored = store_file (walk, fd, st.st_size, entry, error);
  g_close (fd, NULL);
  return stored;
}

static gboolean
add_symlink (Walk        *walk,
             int          dir_fd,
             const char  *name,
             const char  *path,
             GError     **error)
{
  char target[SANDBOX_CLUSTER_CHECKPOINT_MAX_PATH];
  ssize_t length = readlinkat (dir_fd, name, target, sizeof target);

  if (length < 0)
    return skip_or_fail (walk, errno, path, error);
  if ((gsize) length >= sizeof target)
    return skip (walk, path, "its target is 4096 bytes or longer");
  target[length] = '\0';
  if (length == 0 || memchr (target, '\0', length) != NULL || !g_utf8_validate (target, length, NULL))
    return skip (walk, path, "its target is not UTF-8");

  add_entry (walk, path, SANDBOX_CLUSTER_ENTRY_SYMLINK)->target = g_strdup (target);
  return TRUE;
}

static gboolean walk_directory (Walk        *walk,
                                int          fd,
                                const char  *path,
                                guint        depth,
                                GError     **error);

static gboolean
add_directory (Walk        *walk,
               int          dir_fd,
               const char  *name,
               const char  *path,
               guint        depth,
               GError     **error)
{
  struct stat st;
  int fd;

  if (depth > SANDBOX_CLUSTER_CHECKPOINT_MAX_DEPTH)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_TOO_MANY_LINKS,
                   "Cannot checkpoint ‘%s’: directories nest deeper than %d levels", path,
                   SANDBOX_CLUSTER_CHECKPOINT_MAX_DEPTH);
      return FALSE;
    }

  fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return skip_or_fail (walk, errno, path, error);
  if (fstat (fd, &st) < 0 || st.st_dev != walk->device)
    {
      g_close (fd, NULL);
      return skip (walk, path, "it is another filesystem");
    }

  /* A directory's sticky bit is kept: a runtime's tmp/ (01777) is part of
   * its key, and a workspace's is harmless to give back. */
  add_entry (walk, path, SANDBOX_CLUSTER_ENTRY_DIRECTORY)->mode = st.st_mode & (0777 | S_ISVTX);
  /* walk_directory() owns @fd from here on */
  return walk_directory (walk, fd, path, depth, error);
}

/*
 * add_named:
 * @walk: the walk
 * @dir_fd: the directory being listed
 * @name: one of its entries
 * @path: the entry's workspace-relative path
 * @depth: the depth of @dir_fd
 *
 * Adds one entry by what it is now (not by what the listing said).
 *
 * Returns: %TRUE on success, skips included
 */
static gboolean
add_named (Walk        *walk,
           int          dir_fd,
           const char  *name,
           const char  *path,
           guint        depth,
           GError     **error)
{
  struct stat st;

  if (walk->entries->len >= SANDBOX_CLUSTER_CHECKPOINT_MAX_ENTRIES)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                   "Cannot checkpoint ‘%s’: the workspace has more than %d entries", path,
                   SANDBOX_CLUSTER_CHECKPOINT_MAX_ENTRIES);
      return FALSE;
    }
  if (!g_utf8_validate (name, -1, NULL))
    return skip (walk, path, "its name is not UTF-8");
  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? skip (walk, path, "it changed while it was walked")
                           : set_walk_error (error, errno, path);

  if (S_ISDIR (st.st_mode))
    return add_directory (walk, dir_fd, name, path, depth + 1, error);
  if (S_ISREG (st.st_mode))
    return add_file (walk, dir_fd, name, path, error);
  if (S_ISLNK (st.st_mode))
    return add_symlink (walk, dir_fd, name, path, error);
  if (S_ISFIFO (st.st_mode))
    return skip (walk, path, "a FIFO");
  if (S_ISSOCK (st.st_mode))
    return skip (walk, path, "a socket");
  return skip (walk, path, "a device node");
}

/*
 * walk_directory:
 * @walk: the walk
 * @fd: (transfer full): a directory open for reading
 * @path: its workspace-relative path ("" for the root)
 * @depth: its depth below the root
 *
 * Returns: %TRUE on success
 */
static gboolean
walk_directory (Walk        *walk,
                int          fd,
                const char  *path,
                guint        depth,
                GError     **error)
{
  DIR *dir = fdopendir (fd);
  gboolean walked = TRUE;

  if (dir == NULL)
    {
      set_walk_error (error, errno, path[0] ? path : ".");
      g_close (fd, NULL);
      return FALSE;
    }

  while (walked)
    {
      struct dirent *entry;
      g_autofree char *entry_path = NULL;

      errno = 0;
      entry = readdir (dir);
      if (entry == NULL)
        {
          if (errno != 0)
            walked = set_walk_error (error, errno, path[0] ? path : ".");
          break;
        }
      if (strcmp (entry->d_name, ".") == 0 || strcmp (entry->d_name, "..") == 0)
        continue;
      if (g_cancellable_set_error_if_cancelled (walk->cancellable, error))
        {
          walked = FALSE;
          break;
        }

      entry_path = path[0] ? g_strconcat (path, "/", entry->d_name, NULL) : g_strdup (entry->d_name);
      walked = add_named (walk, dirfd (dir), entry->d_name, entry_path, depth, error);
    }

  closedir (dir);
  return walked;
}

static int
compare_paths (gconstpointer a,
               gconstpointer b)
{
  const SandboxClusterEntry *entry_a = *(SandboxClusterEntry *const *) a;
  const SandboxClusterEntry *entry_b = *(SandboxClusterEntry *const *) b;

  return strcmp (entry_a->path, entry_b->path);
}

/*
 * sandbox_cluster_checkpoint_create:
 * @store: where the blobs and the manifest go
 * @workspace_fd: the workspace root (any directory fd, O_PATH included)
 * @session_id: (nullable): the session the workspace is of, named in the
 *   manifest; %NULL for a template
 * @stats: (out caller-allocates) (optional): what was done
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Walks the workspace, stores the blobs it lacks and then the manifest, all
 * durably: the digest returned names a checkpoint that survives a crash
 * from here on, ready for a fenced commit.
 *
 * Returns: (transfer full): the manifest's digest, or %NULL with @error set
 */
char *
sandbox_cluster_checkpoint_create (SandboxClusterBlobStore        *store,
                                   int                             workspace_fd,
                                   const char                     *session_id,
                                   SandboxClusterCheckpointStats  *stats,
                                   GCancellable                   *cancellable,
                                   GError                        **error)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_cluster_entry_free);
  g_autoptr(GBytes) manifest = NULL;
  Walk walk = { store, cancellable, entries, { 0, }, 0 };
  struct stat st;
  char *digest;
  int fd;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_BLOB_STORE (store), NULL);
  g_return_val_if_fail (workspace_fd >= 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  fd = openat (workspace_fd, ".", O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      set_walk_error (error, errno, ".");
      if (fd >= 0)
        g_close (fd, NULL);
      return NULL;
    }
  walk.device = st.st_dev;

  if (!walk_directory (&walk, fd, "", 0, error))
    return NULL;

  g_ptr_array_sort (entries, compare_paths);
  manifest = sandbox_cluster_manifest_serialize (session_id, entries);
  digest = sandbox_cluster_blob_store_put_manifest (store, manifest, cancellable, error);
  if (digest == NULL)
    return NULL;

  walk.stats.entries = entries->len;
  if (stats != NULL)
    *stats = walk.stats;
  return digest;
}
