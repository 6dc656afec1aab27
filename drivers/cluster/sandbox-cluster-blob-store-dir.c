/* sandbox-cluster-blob-store-dir.c — a blob store in a host directory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Layout: `<root>/blobs/<first 2 hex digits>/<digest>`,
 * `<root>/manifests/<digest>`, and `<root>/tmp/` where a put writes before
 * it names anything. A put writes a new temporary file while hashing, syncs
 * it, renames it to its digest and syncs the directory, so a crash leaves
 * either no object or the whole one (and at worst a temporary in tmp/).
 * Directories are 0700 and objects 0400: the store is the host's alone.
 * Every name below the root is opened relative to a directory descriptor
 * without following links.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>

#include "sandbox-cluster-blob-store-private.h"

struct _SandboxClusterBlobDir
{
  GObject parent_instance;

  /* O_RDONLY directories, so they can be synced. */
  int blobs_fd;
  int manifests_fd;
  int tmp_fd;
};

static void sandbox_cluster_blob_dir_store_init (SandboxClusterBlobStoreInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (SandboxClusterBlobDir, sandbox_cluster_blob_dir, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SANDBOX_CLUSTER_TYPE_BLOB_STORE,
                                                      sandbox_cluster_blob_dir_store_init))

static void
close_fd (int *fd)
{
  if (*fd >= 0)
    g_close (g_steal_fd (fd), NULL);
}

static gboolean
set_errno_error (GError     **error,
                 int          saved_errno,
                 const char  *what)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "Checkpoint store: cannot %s: %s", what, g_strerror (saved_errno));
  return FALSE;
}

/* Opens (creating it 0700 if needed) the directory @name of @parent_fd. */
static int
open_subdirectory (int          parent_fd,
                   const char  *name,
                   GError     **error)
{
  int fd;

  if (mkdirat (parent_fd, name, 0700) < 0 && errno != EEXIST)
    {
      set_errno_error (error, errno, "create a directory");
      return -1;
    }

  fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    set_errno_error (error, errno, "open a directory");
  return fd;
}

/*
 * open_fan_directory:
 * @self: the store
 * @digest: a blob's digest
 * @create: whether to create the directory if it is missing (and sync its
 *   parent, so the new name is as durable as the blob that follows)
 *
 * Returns: the directory of blobs sharing @digest's first two digits, or
 *   -1 with errno set
 */
static int
open_fan_directory (SandboxClusterBlobDir *self,
                    const char            *digest,
                    gboolean               create)
{
  char name[3] = { digest[0], digest[1], '\0' };
  int fd = openat (self->blobs_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd >= 0 || errno != ENOENT || !create)
    return fd;

  if (mkdirat (self->blobs_fd, name, 0700) < 0 && errno != EEXIST)
    return -1;
  if (fsync (self->blobs_fd) < 0)
    return -1;
  return openat (self->blobs_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static gboolean
object_has_size (int         dir_fd,
                 const char *name,
                 guint64     size)
{
  struct stat st;

  return fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode) &&
         (guint64) st.st_size == size;
}

static gboolean
sandbox_cluster_blob_dir_has_blob (SandboxClusterBlobStore *store,
                                   const char              *digest,
                                   guint64                  size)
{
  SandboxClusterBlobDir *self = SANDBOX_CLUSTER_BLOB_DIR (store);
  int fan_fd = open_fan_directory (self, digest, FALSE);
  gboolean has;

  if (fan_fd < 0)
    return FALSE;
  has = object_has_size (fan_fd, digest, size);
  close_fd (&fan_fd);
  return has;
}

/*
 * write_synced:
 * @contents: the bytes to store
 * @max_bytes: how many of them at most
 * @fd: the new temporary file
 * @digest: (out): the hex SHA-256 of what was written
 * @size: (out): how many bytes were written
 *
 * Returns: %TRUE when the bytes are written and synced
 */
static gboolean
write_synced (GInputStream  *contents,
              guint64        max_bytes,
              int            fd,
              char         **digest,
              guint64       *size,
              GCancellable  *cancellable,
              GError       **error)
{
  g_autoptr(GOutputStream) output = g_unix_output_stream_new (fd, FALSE);

  if (!sandbox_cluster_blob_copy (contents, max_bytes, output, digest, size, cancellable, error))
    return FALSE;
  if (fsync (fd) < 0)
    {
      g_clear_pointer (digest, g_free);
      return set_errno_error (error, errno, "sync a new object");
    }
  return TRUE;
}

/*
 * put_object:
 * @self: the store
 * @contents: the bytes to store
 * @max_bytes: how many of them at most
 * @is_blob: a blob (fanned out under blobs/) or a manifest
 * @digest: (out): the object's content address
 * @size: (out): its size
 *
 * Writes a temporary in tmp/, then names it by its digest unless an object
 * of that digest and size is there already, and syncs the directory.
 *
 * Returns: %TRUE on success
 */
static gboolean
put_object (SandboxClusterBlobDir  *self,
            GInputStream           *contents,
            guint64                 max_bytes,
            gboolean                is_blob,
            char                  **digest,
            guint64                *size,
            GCancellable           *cancellable,
            GError                **error)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *temporary = g_strconcat (uuid, ".part", NULL);
  g_autofree char *new_digest = NULL;
  guint64 new_size = 0;
  int fd;
  int dir_fd = -1;
  gboolean stored = FALSE;

  fd = openat (self->tmp_fd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);
  if (fd < 0)
    return set_errno_error (error, errno, "create a temporary object");

  if (!write_synced (contents, max_bytes, fd, &new_digest, &new_size, cancellable, error))
    goto out;
  close_fd (&fd);   /* synced: close() has nothing left to report */

  dir_fd = is_blob ? open_fan_directory (self, new_digest, TRUE)
                   : fcntl (self->manifests_fd, F_DUPFD_CLOEXEC, 0);
  if (dir_fd < 0)
    {
      set_errno_error (error, errno, "open an object directory");
      goto out;
    }

  if (object_has_size (dir_fd, new_digest, new_size))
    stored = TRUE;   /* deduplicated: the temporary goes */
  else if (renameat (self->tmp_fd, temporary, dir_fd, new_digest) < 0)
    set_errno_error (error, errno, "name a new object");
  else if (fsync (dir_fd) < 0)
    set_errno_error (error, errno, "sync an object directory");
  else
    {
      g_clear_pointer (&temporary, g_free);   /* renamed: nothing to remove */
      stored = TRUE;
    }

out:
  close_fd (&fd);
  close_fd (&dir_fd);
  if (temporary != NULL)
    unlinkat (self->tmp_fd, temporary, 0);
  if (stored)
    {
      *digest = g_steal_pointer (&new_digest);
      *size = new_size;
    }
  return stored;
}

static gboolean
sandbox_cluster_blob_dir_put_blob (SandboxClusterBlobStore  *store,
                                   GInputStream             *contents,
                                   guint64                   max_bytes,
                                   char                    **digest,
                                   guint64                  *size,
                                   GCancellable             *cancellable,
                                   GError                  **error)
{
  return put_object (SANDBOX_CLUSTER_BLOB_DIR (store), contents, max_bytes, TRUE, digest, size,
                     cancellable, error);
}

static gboolean
set_missing_error (GError     **error,
                   const char  *what,
                   const char  *digest,
                   int          saved_errno)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Sandbox checkpoint %s %.12s… is unavailable: %s", what, digest,
               g_strerror (saved_errno));
  return FALSE;
}

/*
 * open_regular:
 * @dir_fd: a store directory
 * @name: an object's name in it
 * @st: (out): the object's status
 *
 * Returns: the object open for reading (never a link, never blocking), or
 *   -1 with errno set
 */
static int
open_regular (int          dir_fd,
              const char  *name,
              struct stat *st)
{
  int fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

  if (fd < 0)
    return -1;
  if (fstat (fd, st) < 0 || !S_ISREG (st->st_mode))
    {
      close_fd (&fd);
      errno = EINVAL;
    }
  return fd;
}

static GInputStream *
sandbox_cluster_blob_dir_open_blob (SandboxClusterBlobStore  *store,
                                    const char               *digest,
                                    GCancellable             *cancellable,
                                    GError                  **error)
{
  SandboxClusterBlobDir *self = SANDBOX_CLUSTER_BLOB_DIR (store);
  int fan_fd = open_fan_directory (self, digest, FALSE);
  struct stat st;
  int fd;

  if (fan_fd < 0)
    {
      set_missing_error (error, "blob", digest, errno);
      return NULL;
    }
  fd = open_regular (fan_fd, digest, &st);
  if (fd < 0)
    set_missing_error (error, "blob", digest, errno);
  close_fd (&fan_fd);

  return fd < 0 ? NULL : g_unix_input_stream_new (fd, TRUE);
}

static char *
sandbox_cluster_blob_dir_put_manifest (SandboxClusterBlobStore  *store,
                                       GBytes                   *manifest,
                                       GCancellable             *cancellable,
                                       GError                  **error)
{
  g_autoptr(GInputStream) contents = g_memory_input_stream_new_from_bytes (manifest);
  char *digest = NULL;
  guint64 size = 0;

  if (!put_object (SANDBOX_CLUSTER_BLOB_DIR (store), contents, g_bytes_get_size (manifest), FALSE,
                   &digest, &size, cancellable, error))
    return NULL;
  return digest;
}

/*
 * sandbox_cluster_blob_dir_get_manifest:
 *
 * Reads one byte more than the manifest's size (a manifest growing
 * meanwhile then fails its digest), refuses one larger than @max_bytes
 * without reading it, and checks the digest of what was read.
 */
static GBytes *
sandbox_cluster_blob_dir_get_manifest (SandboxClusterBlobStore  *store,
                                       const char               *digest,
                                       gsize                     max_bytes,
                                       GCancellable             *cancellable,
                                       GError                  **error)
{
  SandboxClusterBlobDir *self = SANDBOX_CLUSTER_BLOB_DIR (store);
  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *actual = NULL;
  struct stat st;
  int fd;

  fd = open_regular (self->manifests_fd, digest, &st);
  if (fd < 0)
    {
      set_missing_error (error, "manifest", digest, errno);
      return NULL;
    }
  input = g_unix_input_stream_new (fd, TRUE);

  if ((guint64) st.st_size <= max_bytes)
    bytes = g_input_stream_read_bytes (input, st.st_size + 1, cancellable, error);
  else
    bytes = g_bytes_new (NULL, 0);
  if (bytes == NULL)
    return NULL;
  if ((guint64) st.st_size > max_bytes || g_bytes_get_size (bytes) > max_bytes)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox checkpoint manifest %.12s… is larger than %" G_GSIZE_FORMAT " bytes",
                   digest, max_bytes);
      return NULL;
    }

  actual = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, bytes);
  if (strcmp (actual, digest) != 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox checkpoint manifest %.12s… is corrupted (its bytes hash to %.12s…)",
                   digest, actual);
      return NULL;
    }

  return g_steal_pointer (&bytes);
}

static void
sandbox_cluster_blob_dir_store_init (SandboxClusterBlobStoreInterface *iface)
{
  iface->has_blob = sandbox_cluster_blob_dir_has_blob;
  iface->put_blob = sandbox_cluster_blob_dir_put_blob;
  iface->open_blob = sandbox_cluster_blob_dir_open_blob;
  iface->put_manifest = sandbox_cluster_blob_dir_put_manifest;
  iface->get_manifest = sandbox_cluster_blob_dir_get_manifest;
}

static void
sandbox_cluster_blob_dir_finalize (GObject *object)
{
  SandboxClusterBlobDir *self = SANDBOX_CLUSTER_BLOB_DIR (object);

  close_fd (&self->blobs_fd);
  close_fd (&self->manifests_fd);
  close_fd (&self->tmp_fd);

  G_OBJECT_CLASS (sandbox_cluster_blob_dir_parent_class)->finalize (object);
}

static void
sandbox_cluster_blob_dir_class_init (SandboxClusterBlobDirClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_cluster_blob_dir_finalize;
}

static void
sandbox_cluster_blob_dir_init (SandboxClusterBlobDir *self)
{
  self->blobs_fd = -1;
  self->manifests_fd = -1;
  self->tmp_fd = -1;
}

/* Opens (creating them) blobs/, manifests/ and tmp/ below the root. */
static gboolean
open_layout (SandboxClusterBlobDir  *self,
             int                     root_fd,
             GError                **error)
{
  if ((self->blobs_fd = open_subdirectory (root_fd, "blobs", error)) < 0 ||
      (self->manifests_fd = open_subdirectory (root_fd, "manifests", error)) < 0 ||
      (self->tmp_fd = open_subdirectory (root_fd, "tmp", error)) < 0)
    return FALSE;
  if (fsync (root_fd) < 0)
    return set_errno_error (error, errno, "sync the store directory");
  return TRUE;
}

/*
 * sandbox_cluster_blob_dir_new:
 * @path: the store's directory, created (0700, with its parents) if missing
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the store, or %NULL with @error set
 */
SandboxClusterBlobDir *
sandbox_cluster_blob_dir_new (const char  *path,
                              GError     **error)
{
  g_autoptr(SandboxClusterBlobDir) self = NULL;
  int root_fd;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (g_mkdir_with_parents (path, 0700) < 0)
    {
      set_errno_error (error, errno, "create the store directory");
      return NULL;
    }
  root_fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    {
      set_errno_error (error, errno, "open the store directory");
      return NULL;
    }

  self = g_object_new (SANDBOX_CLUSTER_TYPE_BLOB_DIR, NULL);
  if (!open_layout (self, root_fd, error))
    {
      close_fd (&root_fd);
      return NULL;
    }

  close_fd (&root_fd);
  return g_steal_pointer (&self);
}
