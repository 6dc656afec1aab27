/* sandbox-bubblewrap-store.c — the state directory: opening it, durability
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

/* mkdir that accepts an existing directory. */
/* Durability --------------------------------------------------------------- */

gboolean
sandbox_bubblewrap_store_sync_directory (const char  *path,
                                         GError     **error)
{
  g_auto(SandboxBubblewrapFd) fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

  if (fd < 0)
    return set_errno_error (error, errno, "Could not open directory", path);
  return sync_fd (fd, path, error);
}

/* fsync()s every file and directory of the tree @name under @parent_fd,
 * children before their directory. Never follows a link: the tree may be a
 * workspace a guest shaped. @path names the tree in errors. */
gboolean
sandbox_bubblewrap_store_sync_tree (int          parent_fd,
                                    const char  *name,
                                    const char  *path,
                                    guint        depth,
                                    GError     **error)
{
  g_auto(SandboxBubblewrapFd) fd = -1;
  struct stat st;
  DIR *dir;
  struct dirent *entry;
  gboolean ok = TRUE;

  if (depth > 256)
    return set_errno_error (error, ELOOP, "Could not sync", path);
  fd = openat (parent_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 && errno == ELOOP)
    return TRUE;   /* a symbolic link: its directory entry is synced with the parent */
  if (fd < 0)
    return set_errno_error (error, errno, "Could not open", path);
  if (fstat (fd, &st) < 0)
    return set_errno_error (error, errno, "Could not stat", path);
  if (S_ISREG (st.st_mode))
    return sync_fd (fd, path, error);
  if (!S_ISDIR (st.st_mode))
    return TRUE;

  dir = fdopendir (dup (fd));
  if (dir == NULL)
    return set_errno_error (error, errno, "Could not read directory", path);
  while (ok && (entry = readdir (dir)) != NULL)
    {
      g_autofree char *child = NULL;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      child = g_build_filename (path, entry->d_name, NULL);
      ok = sandbox_bubblewrap_store_sync_tree (fd, entry->d_name, child, depth + 1, error);
    }
  closedir (dir);
  return ok && sync_fd (fd, path, error);
}

/* Writes a new file, refusing to replace anything; syncs it if @durable. */
gboolean
sandbox_bubblewrap_store_write_new_file (const char  *path,
                                         const char  *contents,
                                         gboolean     durable,
                                         GError     **error)
{
  g_auto(SandboxBubblewrapFd) fd = -1;

  fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return set_errno_error (error, errno, "Could not create", path);
  if (!sandbox_bubblewrap_write_fully (fd, contents, strlen (contents)))
    return set_errno_error (error, errno, "Could not write", path);
  return !durable || sync_fd (fd, path, error);
}

/* Writes @path whole or not at all: a temporary file, synced if @durable,
 * renamed into place, and the directory synced after. */
gboolean
sandbox_bubblewrap_store_write_atomically (const char  *path,
                                           const char  *contents,
                                           gboolean     durable,
                                           GError     **error)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *temporary = g_strdup_printf ("%s.%s", path, uuid);
  g_autofree char *directory = g_path_get_dirname (path);

  if (!sandbox_bubblewrap_store_write_new_file (temporary, contents, durable, error))
    {
      unlink (temporary);
      return FALSE;
    }
  if (rename (temporary, path) < 0)
    {
      int saved_errno = errno;

      unlink (temporary);
      return set_errno_error (error, saved_errno, "Could not store", path);
    }
  return !durable || sandbox_bubblewrap_store_sync_directory (directory, error);
}

static void
store_free (SandboxBubblewrapStore *self)
{
  g_free (self->root);
  g_free (self->name);
  g_free (self->base);
  g_free (self->templates);
  g_free (self->sessions);
  g_free (self->runtimes);
  g_clear_pointer (&self->measures, g_hash_table_unref);
  g_mutex_clear (&self->measures_lock);
}

/**
 * sandbox_bubblewrap_store_open:
 * @state_directory: the backend's state directory
 * @name: the backend's name
 * @durable: whether to fsync files and directories before renames and
 *   state writes
 * @guest: who guests are: their workspaces belong to them
 * @error: return location for a #GError
 *
 * Creates @state_directory (mode 0700) if needed and resolves it.
 *
 * Returns: (transfer full): the store, or %NULL with a #GIOErrorEnum error
 */
SandboxBubblewrapStore *
sandbox_bubblewrap_store_open (const char                   *state_directory,
                               const char                   *name,
                               gboolean                      durable,
                               const SandboxBubblewrapGuest *guest,
                               GError                      **error)
{
  SandboxBubblewrapStore *self;
  g_autofree char *root = NULL;
  g_autofree char *digest = NULL;

  if (g_mkdir_with_parents (state_directory, 0700) < 0)
    {
      set_errno_error (error, errno, "Could not create the state directory", state_directory);
      return NULL;
    }
  root = realpath (state_directory, NULL);
  if (root == NULL)
    {
      set_errno_error (error, errno, "Could not resolve the state directory", state_directory);
      return NULL;
    }

  digest = sha256_hex (name);
  self = g_atomic_rc_box_new0 (SandboxBubblewrapStore);
  self->base = g_build_filename (root, digest, NULL);
  self->templates = g_build_filename (self->base, "templates", NULL);
  self->sessions = g_build_filename (self->base, "sessions", NULL);
  self->runtimes = g_build_filename (self->base, "runtimes", NULL);
  self->root = g_steal_pointer (&root);
  self->name = g_strdup (name);
  self->durable = durable;
  self->guest = (SandboxWorkspaceOwner) { guest->uid, guest->gid };
  self->give = guest->switched;
  g_mutex_init (&self->measures_lock);
  self->measures = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return self;
}

/**
 * sandbox_bubblewrap_store_ref:
 * @self: a store
 *
 * Returns: (transfer full): @self
 */
SandboxBubblewrapStore *
sandbox_bubblewrap_store_ref (SandboxBubblewrapStore *self)
{
  return g_atomic_rc_box_acquire (self);
}

/**
 * sandbox_bubblewrap_store_unref:
 * @self: (transfer full): a store
 *
 * Drops a reference.
 */
void
sandbox_bubblewrap_store_unref (SandboxBubblewrapStore *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify) store_free);
}

/**
 * sandbox_bubblewrap_store_get_root:
 * @self: a store
 *
 * Returns: the resolved state directory
 */
const char *
sandbox_bubblewrap_store_get_root (SandboxBubblewrapStore *self)
{
  return self->root;
}
