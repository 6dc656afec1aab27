/* sandbox-cluster-checkpoint-materialise.c — a checkpoint back into a directory tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The tree is built in a new 0700 directory next to the target, which only
 * this host can reach, then renamed to the target's name: a missing or
 * damaged blob (each one is hashed as it is copied), a hostile manifest or a
 * full disk leaves nothing behind, and never a partial workspace under the
 * target's name. Even in that private directory every path is resolved
 * below its root with openat2() and no link is followed: the manifest is
 * checked, and this holds on its own.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <gio/gunixoutputstream.h>

#include "sandbox-cluster-checkpoint-private.h"

static gboolean
set_io_error (GError     **error,
              int          saved_errno,
              const char  *path)
{
  return sandbox_cluster_checkpoint_set_errno_error (error, saved_errno, "materialise", path);
}

/*
 * open_parent:
 * @root_fd: the tree being built
 * @path: an entry's path in it
 * @base: (out): the entry's last component
 *
 * Returns: @path's parent directory (O_PATH), or -1 with errno set
 */
static int
open_parent (int          root_fd,
             const char  *path,
             const char **base)
{
  struct open_how how = {
    .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
  };
  const char *slash = strrchr (path, '/');
  g_autofree char *parent = slash ? g_strndup (path, slash - path) : g_strdup (".");

  *base = slash ? slash + 1 : path;
  return syscall (SYS_openat2, root_fd, parent, &how, sizeof how);
}

/*
 * copy_blob:
 * @store: the blob store
 * @entry: a file entry
 * @fd: the new, empty file
 *
 * Copies the blob, reading one byte more than the entry claims, and checks
 * size and digest: a blob that is missing, shorter, longer or other than
 * its name says is %SANDBOX_ERROR_UNAVAILABLE.
 *
 * Returns: %TRUE when @fd holds exactly the entry's bytes
 */
static gboolean
copy_blob (SandboxClusterBlobStore    *store,
           const SandboxClusterEntry  *entry,
           int                         fd,
           GCancellable               *cancellable,
           GError                    **error)
{
  g_autoptr(GInputStream) input = NULL;
  g_autoptr(GOutputStream) output = g_unix_output_stream_new (fd, FALSE);
  g_autofree char *digest = NULL;
  guint64 size = 0;

  input = sandbox_cluster_blob_store_open_blob (store, entry->sha256, cancellable, error);
  if (input == NULL ||
      !sandbox_cluster_blob_copy (input, entry->size + 1, output, &digest, &size, cancellable,
                                  error))
    return FALSE;

  if (size != entry->size || strcmp (digest, entry->sha256) != 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox checkpoint blob %.12s… of ‘%s’ is corrupted", entry->sha256, entry->path);
      return FALSE;
    }
  return TRUE;
}

static gboolean
materialise_file (SandboxClusterBlobStore    *store,
                  int                         dir_fd,
                  const char                 *base,
                  const SandboxClusterEntry  *entry,
                  GCancellable               *cancellable,
                  GError                    **error)
{
  int fd = openat (dir_fd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                   0600);
  gboolean copied;

  if (fd < 0)
    return set_io_error (error, errno, entry->path);

  copied = copy_blob (store, entry, fd, cancellable, error);
  if (copied && fchmod (fd, entry->mode) < 0)
    copied = set_io_error (error, errno, entry->path);
  g_close (fd, NULL);
  return copied;
}

static gboolean
materialise_entry (SandboxClusterBlobStore    *store,
                   int                         root_fd,
                   const SandboxClusterEntry  *entry,
                   GCancellable               *cancellable,
                   GError                    **error)
{
  const char *base = NULL;
  int dir_fd = open_parent (root_fd, entry->path, &base);
  gboolean made = TRUE;

  if (dir_fd < 0)
    return set_io_error (error, errno, entry->path);

  switch (entry->kind)
    {
    case SANDBOX_CLUSTER_ENTRY_DIRECTORY:
      /* 0700 until everything inside is made; the mode comes last. */
      if (mkdirat (dir_fd, base, 0700) < 0)
        made = set_io_error (error, errno, entry->path);
      break;

    case SANDBOX_CLUSTER_ENTRY_FILE:
      made = materialise_file (store, dir_fd, base, entry, cancellable, error);
      break;

    case SANDBOX_CLUSTER_ENTRY_SYMLINK:
      if (symlinkat (entry->target, dir_fd, base) < 0)
        made = set_io_error (error, errno, entry->path);
      break;

    default:
      g_assert_not_reached ();
    }

  g_close (dir_fd, NULL);
  return made;
}

/*
 * set_directory_modes:
 * @root_fd: the tree being built
 * @entries: its entries, sorted by path
 *
 * Gives directories their modes deepest first (in reverse order every
 * directory comes after what it holds), each opened without following a
 * link, so a directory without owner rwx is only made so once it is full.
 *
 * Returns: %TRUE on success
 */
static gboolean
set_directory_modes (int          root_fd,
                     GPtrArray   *entries,
                     GError     **error)
{
  for (guint i = entries->len; i-- > 0;)
    {
      const SandboxClusterEntry *entry = entries->pdata[i];
      const char *base = NULL;
      int dir_fd;
      int fd;

      if (entry->kind != SANDBOX_CLUSTER_ENTRY_DIRECTORY)
        continue;

      dir_fd = open_parent (root_fd, entry->path, &base);
      fd = dir_fd < 0 ? -1 : openat (dir_fd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 || fchmod (fd, entry->mode) < 0)
        {
          set_io_error (error, errno, entry->path);
          if (fd >= 0)
            g_close (fd, NULL);
          if (dir_fd >= 0)
            g_close (dir_fd, NULL);
          return FALSE;
        }
      g_close (fd, NULL);
      g_close (dir_fd, NULL);
    }

  return TRUE;
}

static gboolean
materialise_tree (SandboxClusterBlobStore  *store,
                  GPtrArray                *entries,
                  int                       root_fd,
                  GCancellable             *cancellable,
                  GError                  **error)
{
  for (guint i = 0; i < entries->len; i++)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error) ||
          !materialise_entry (store, root_fd, entries->pdata[i], cancellable, error))
        return FALSE;
    }

  return set_directory_modes (root_fd, entries, error);
}

/* A manifest is bound to the session it was taken of (@named, NULL for a
 * template's): materialising it for another would hand one session the
 * files of another (whose guest chose them), or a template's in place of a
 * session's checkpoint. */
static gboolean
check_bound (const char  *digest,
             const char  *named,
             const char  *session_id,
             GError     **error)
{
  if (g_strcmp0 (named, session_id) == 0)
    return TRUE;
  if (session_id == NULL)
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                 "Sandbox checkpoint %s is not a template's: its manifest names session %s",
                 digest, named);
  else
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                 "Sandbox checkpoint %s is not one of session %s: its manifest names %s%s",
                 digest, session_id, named != NULL ? "session " : "no session (a template's)",
                 named != NULL ? named : "");
  return FALSE;
}

/*
 * sandbox_cluster_checkpoint_materialise:
 * @store: where the checkpoint is
 * @digest: the checkpoint's manifest digest
 * @session_id: (nullable): the session the checkpoint must be of; %NULL:
 *   it must be a template's
 * @parent_fd: the directory to create the tree in
 * @name: the tree's name in @parent_fd; it must not exist
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Creates @name (mode 0700) holding the checkpoint's tree. A missing or
 * damaged manifest or blob, a manifest this code would not have written, or
 * one that names another session than @session_id (or none), is
 * %SANDBOX_ERROR_UNAVAILABLE; an existing @name is %G_IO_ERROR_EXISTS.
 * On any failure nothing is left in @parent_fd.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_cluster_checkpoint_materialise (SandboxClusterBlobStore  *store,
                                        const char               *digest,
                                        const char               *session_id,
                                        int                       parent_fd,
                                        const char               *name,
                                        GCancellable             *cancellable,
                                        GError                  **error)
{
  g_autoptr(GBytes) manifest = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_autofree char *named = NULL;
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *temporary = g_strconcat (".materialise-", uuid, NULL);
  struct stat st;
  gboolean made;
  int root_fd;

  g_return_val_if_fail (SANDBOX_CLUSTER_IS_BLOB_STORE (store), FALSE);
  g_return_val_if_fail (parent_fd >= 0, FALSE);
  g_return_val_if_fail (name != NULL && name[0] != '\0' && strchr (name, '/') == NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  manifest = sandbox_cluster_blob_store_get_manifest (store, digest,
                                                      SANDBOX_CLUSTER_CHECKPOINT_MAX_MANIFEST_BYTES,
                                                      cancellable, error);
  if (manifest == NULL ||
      (entries = sandbox_cluster_manifest_parse (manifest, &named, error)) == NULL ||
      !check_bound (digest, named, session_id, error))
    return FALSE;

  if (fstatat (parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return set_io_error (error, EEXIST, name);
  if (errno != ENOENT)
    return set_io_error (error, errno, name);

  if (mkdirat (parent_fd, temporary, 0700) < 0)
    return set_io_error (error, errno, name);
  root_fd = openat (parent_fd, temporary, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root_fd < 0)
    made = set_io_error (error, errno, name);
  else
    {
      made = materialise_tree (store, entries, root_fd, cancellable, error);
      g_close (root_fd, NULL);
    }

  if (made && renameat2 (parent_fd, temporary, parent_fd, name, RENAME_NOREPLACE) < 0)
    made = set_io_error (error, errno, name);
  if (!made)
    sandbox_workspace_remove_tree_at (parent_fd, temporary, NULL);   /* best effort */
  return made;
}
