/* sandbox-bubblewrap-store-restore.c — a session's files put back as a snapshot had them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sandbox-bubblewrap-quota-private.h"
#include "sandbox-bubblewrap-store-layout-private.h"
#include "stub/sandbox-stub-keeper.h"

/* Restores ----------------------------------------------------------------
 *
 * A session restores to its base (the template or snapshot it was created
 * from: an empty upper layer) or to a snapshot over that base (taken from
 * it, or from another session of the same base): its data copied into a
 * new upper layer, which the session's guest owns, swapped with the old
 * one in one rename (a crash leaves one or the other, whole) before the
 * old one is removed without following a link. A key further down the
 * session's line would change its lower layers: refused (INVALID) for
 * now. */

/**
 * sandbox_bubblewrap_store_restore_source:
 * @self: a store
 * @lease: a live session's lease
 * @key: the key to restore to (a valid key)
 * @source: (out) (transfer full): the data to copy, %NULL for the base
 * @error: return location for a #GError
 *
 * Returns: whether the session may restore to @key: %FALSE with
 *   %G_IO_ERROR_NOT_SUPPORTED for a copy, %SANDBOX_ERROR_INVALID for a
 *   key outside its line, or the check of a stored snapshot's error
 */
gboolean
sandbox_bubblewrap_store_restore_source (SandboxBubblewrapStore  *self,
                                         SandboxBubblewrapLease  *lease,
                                         const char              *key,
                                         char                   **source,
                                         GError                 **error)
{
  const char *base = sandbox_state_get_template_key (lease->state);
  g_autofree char *parent = NULL;

  gboolean copying = lease->layers == NULL;

  *source = NULL;
  /* A layered session's base is its lower layers: an empty upper layer. */
  if (g_str_equal (key, base))
    {
      if (copying)
        *source = g_build_filename (self->templates, base, "data", NULL);
      return TRUE;
    }
  if (!sandbox_bubblewrap_store_check_template (self, key, error) ||
      !sandbox_bubblewrap_store_read_parent (self, key, &parent, error))
    return FALSE;
  if (g_strcmp0 (parent, base) != 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s is not a snapshot over this session's template %s: a session restores "
                   "to its template or to a snapshot taken over it", key, base);
      return FALSE;
    }
  if (sandbox_bubblewrap_store_is_flat (self, key) != copying)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s was taken by a session that %s its template, and this one %s it: a "
                   "session restores to snapshots taken the way it keeps its files",
                   key, copying ? "layered over" : "copied", copying ? "copied" : "layers over");
      return FALSE;
    }
  *source = g_build_filename (self->templates, key, "data", NULL);
  return TRUE;
}

/* Makes layers/@name the session's next upper layer: a copy of @source
 * (or empty), the guest's, synced when the store is durable. */
static gboolean
fill_new_upper (SandboxBubblewrapStore  *self,
                SandboxBubblewrapLease  *lease,
                int                      layers_fd,
                const char              *name,
                const char              *source,
                GError                 **error)
{
  g_autofree char *path = g_build_filename (lease->layers, name, NULL);
  g_auto(SandboxBubblewrapFd) from = -1;
  g_auto(SandboxBubblewrapFd) to = -1;
  g_autofree char *tree = NULL;
  SandboxWorkspaceOwner owner;
  const SandboxWorkspaceOwner *guest = sandbox_bubblewrap_lease_owner (lease, &owner);

  if (mkdirat (layers_fd, name, 0755) < 0 ||
      (to = openat (layers_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    return set_errno_error (error, errno, "Could not create directory", path);
  if (source != NULL && ((from = open_directory (source, error)) < 0 ||
                         (tree = sandbox_bubblewrap_store_copy_layer_at (from, to, path, NULL, error)) == NULL))
    return FALSE;
  return (guest == NULL || sandbox_workspace_give_tree_at (layers_fd, name, guest, error)) &&
         (!self->durable ||
          sandbox_bubblewrap_store_sync_tree (layers_fd, name, path, 0, error));
}

#define RESTORE_PREFIX "restore-"

/**
 * sandbox_bubblewrap_store_remove_restore_leftovers:
 * @lease: a recovered session's lease, none of whose sandboxes runs
 *
 * Removes what a host killed in a restore left in the session's layers/
 * (or, for a copying session, its directory): a half-filled new upper
 * layer or workspace, or the old one swapped out (see
 * sandbox_bubblewrap_store_refill()). The lease keeps anyone else from
 * restoring meanwhile.
 *
 * Returns: how many were removed
 */
guint
sandbox_bubblewrap_store_remove_restore_leftovers (SandboxBubblewrapLease *lease)
{
  const char *where = lease->layers != NULL ? lease->layers : lease->directory;
  g_autoptr(GDir) dir = g_dir_open (where, 0, NULL);
  g_auto(SandboxBubblewrapFd) layers_fd = -1;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;
  guint removed = 0;

  if (dir == NULL || (layers_fd = open_directory (where, NULL)) < 0)
    return 0;
  /* Listed first: removing while reading a directory may skip entries. */
  while ((name = g_dir_read_name (dir)) != NULL)
    if (g_str_has_prefix (name, RESTORE_PREFIX))
      g_ptr_array_add (names, g_strdup (name));
  for (guint i = 0; i < names->len; i++)
    removed += sandbox_workspace_remove_tree_at (layers_fd, g_ptr_array_index (names, i), NULL);
  return removed;
}

typedef struct
{
  int source_fd;
  const SandboxWorkspaceOwner *guest;
  gboolean exact;
} FillFrom;

/* @name made in @parent_fd, the guest's: an exact copy of a flat
 * snapshot's data (modes too, as a snapshot keeps them), or a template's
 * copied as a create copies it (a SandboxBubblewrapFillFunc). */
static gboolean
fill_from_source (int            parent_fd,
                  const char    *name,
                  gpointer       data,
                  GCancellable  *cancellable,
                  GError       **error)
{
  FillFrom *fill = data;
  g_auto(SandboxBubblewrapFd) to = -1;
  g_autofree char *tree = NULL;

  if (!fill->exact)
    return sandbox_workspace_copy_tree_at (fill->source_fd, parent_fd, name, fill->guest,
                                           cancellable, error);
  if (mkdirat (parent_fd, name, 0700) < 0 ||
      (to = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    return set_errno_error (error, errno, "Could not create directory", name);
  tree = sandbox_bubblewrap_store_copy_layer_at (fill->source_fd, to, name, cancellable, error);
  return tree != NULL &&
         (fill->guest == NULL || sandbox_workspace_give_tree_at (parent_fd, name, fill->guest,
                                                                 error));
}

/**
 * sandbox_bubblewrap_store_copy_exactly:
 * @self: a store
 * @lease: a copying session's lease
 * @session_fd: the descriptor of the session's directory
 * @name: what to make there
 * @source: the directory to copy: a flat snapshot's data, or a template's
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Makes @name the session's next workspace: a copy of @source (exact for a
 * flat snapshot's, as a create makes it for a template's), the guest's, with the store's workspace quota (a subvolume of its own when
 * there is one), synced when the store is durable. Nothing is left when it
 * fails.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_bubblewrap_store_copy_exactly (SandboxBubblewrapStore  *self,
                                       SandboxBubblewrapLease  *lease,
                                       int                      session_fd,
                                       const char              *name,
                                       const char              *source,
                                       GCancellable            *cancellable,
                                       GError                 **error)
{
  g_autofree char *path = g_build_filename (lease->directory, name, NULL);
  g_autofree char *stored = g_path_get_dirname (source);
  g_autofree char *flat = g_build_filename (stored, "flat", NULL);
  g_auto(SandboxBubblewrapFd) from = open_directory (source, error);
  SandboxWorkspaceOwner owner;
  FillFrom fill = { from, sandbox_bubblewrap_lease_owner (lease, &owner),
                    g_file_test (flat, G_FILE_TEST_EXISTS) };

  if (from < 0 ||
      !sandbox_bubblewrap_quota_fill_directory (session_fd, name, self->workspace_quota,
                                                fill_from_source, &fill, cancellable, error))
    {
      sandbox_workspace_remove_tree_at (session_fd, name, NULL);
      return FALSE;
    }
  return !self->durable || sandbox_bubblewrap_store_sync_tree (session_fd, name, path, 0, error);
}

/* Where a restore to @source (a snapshot's data, NULL for the base) finds
 * the session's runtime changes: the snapshot's runtime-data, or NULL
 * (none: an empty layer). */
static char *
runtime_source (const char *source)
{
  g_autofree char *stored = source != NULL ? g_path_get_dirname (source) : NULL;
  g_autofree char *layer = stored != NULL ? g_build_filename (stored, RUNTIME_LAYER, NULL)
                                          : NULL;

  return layer != NULL && g_file_test (layer, G_FILE_TEST_IS_DIR) ? g_steal_pointer (&layer)
                                                                 : NULL;
}

/* One upper layer of a restore: @target in @where_fd and the new one
 * filled beside it under @name. */
typedef struct
{
  const char *target;
  char *name;
  gboolean filled;
} Swap;

static gboolean
swap_in (int    where_fd,
         Swap  *swap)
{
  return renameat2 (where_fd, swap->name, where_fd, swap->target, RENAME_EXCHANGE) == 0;
}

/**
 * sandbox_bubblewrap_store_refill:
 * @self: a store
 * @lease: a live session's lease: a layered one's overlay is not mounted,
 *   no command of a copying one runs
 * @source: (nullable): from sandbox_bubblewrap_store_restore_source()
 * @error: return location for a #GError
 *
 * Replaces the session's upper layer with a copy of @source, or an empty
 * one (and its writable runtime's upper layer likewise, with the
 * snapshot's runtime-data); a copying session's workspace with a copy of
 * @source (see above). Both new layers are filled before either is
 * swapped in, so a failure to fill (a full disk) changes nothing; a crash
 * between the two swaps leaves the workspace restored and the runtime
 * not.
 *
 * Returns: %TRUE on success; on failure the old layers or workspace are there
 */
gboolean
sandbox_bubblewrap_store_refill (SandboxBubblewrapStore  *self,
                                 SandboxBubblewrapLease  *lease,
                                 const char              *source,
                                 GError                 **error)
{
  gboolean copying = lease->layers == NULL;
  const char *where = copying ? lease->directory : lease->layers;
  g_auto(SandboxBubblewrapFd) where_fd = open_directory (where, error);
  g_autofree char *runtime = runtime_source (source);
  Swap swaps[] = {
    { copying ? "workspace" : "upper", NULL, FALSE },
    { STUB_KEEPER_RUNTIME_UPPER, NULL, FALSE },
  };
  struct stat st;
  gsize n_swaps = 1, swapped = 0;
  gboolean ok = TRUE;

  if (where_fd < 0)
    return FALSE;
  if (!copying && fstatat (where_fd, STUB_KEEPER_RUNTIME_UPPER, &st, AT_SYMLINK_NOFOLLOW) == 0)
    n_swaps = 2;
  for (gsize i = 0; i < n_swaps; i++)
    {
      g_autofree char *uuid = g_uuid_string_random ();

      swaps[i].name = g_strconcat (RESTORE_PREFIX, uuid, NULL);
    }
  swaps[0].filled = copying ? sandbox_bubblewrap_store_copy_exactly (self, lease, where_fd,
                                                                     swaps[0].name, source,
                                                                     NULL, error)
                            : fill_new_upper (self, lease, where_fd, swaps[0].name, source,
                                              error);
  if (swaps[0].filled && n_swaps == 2)
    swaps[1].filled = fill_new_upper (self, lease, where_fd, swaps[1].name, runtime, error);
  /* One rename swaps each: a crash leaves one or the other, whole. */
  for (; swapped < n_swaps && swaps[n_swaps - 1].filled && swap_in (where_fd, &swaps[swapped]);
       swapped++)
    ;
  if (swapped < n_swaps)
    {
      if (error == NULL || *error == NULL)
        set_errno_error (error, errno, "Could not replace the files of", where);
      ok = FALSE;
    }
  /* The old ones, now under their names; or the new ones not swapped in. */
  for (gsize i = 0; i < n_swaps; i++)
    {
      if (ok)
        ok = sandbox_workspace_remove_tree_at (where_fd, swaps[i].name, error);
      else
        sandbox_workspace_remove_tree_at (where_fd, swaps[i].name, NULL);
      g_free (swaps[i].name);
    }
  return ok;
}
