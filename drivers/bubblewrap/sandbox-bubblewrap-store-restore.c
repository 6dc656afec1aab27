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
 * A session restores, in place and keeping its id, to any key of its line:
 * the template or snapshot it was created from (its base), any snapshot
 * whose parents lead to its base (taken from it or from any session of its
 * lineage), and any of its base's own parents back to the template — every
 * key whose line of parents ends at the template the session's ends at. A
 * key of another template's line is refused (INVALID).
 *
 * A layered session restores to its base, or to a layered snapshot whose
 * parent is its base, without changing its lower layers: an empty upper
 * layer, or that snapshot's data copied into one. Anywhere else in its
 * line it is *rebased*: the key becomes its base, its lower layers (and
 * its writable runtime's) that key's chain, its upper layers empty, and
 * its state.json names the key (sandbox_handle_capture_state() reports it,
 * and a resume needs it). The steps, and what a SIGKILL after each leaves:
 *
 *  1. empty new upper layers filled beside the old ones (restore-<uuid>):
 *     nothing changed; recovery removes them;
 *  2. each swapped in by one rename (RENAME_EXCHANGE): an empty upper
 *     layer over the *old* base, which is the old base's tree — the state
 *     still names it and its layers match (an empty layer matches any
 *     base); the old layers, under restore-<uuid>, go in recovery;
 *  3. state.json written to a temporary and renamed over the old one: the
 *     new base, over empty layers, from then on.
 *
 * So the state never names a base whose layers do not match the upper
 * layer: a crash leaves the session at its old base (emptied) or at the
 * new one. The key stays locked (shared, as a create holds its template)
 * from its check until the state names it, so no delete removes it
 * meanwhile.
 *
 * A copying session's workspace is swapped for a copy of the key's files
 * (one rename): a flat snapshot's or a template's data, or a layered
 * snapshot's chain materialised (sandbox-bubblewrap-store-merge.c). Its
 * state names the key where a layered session's would (its workspace
 * depends on no stored layer, so a crash between the swap and the state
 * leaves a session whose base is only its identity, not its files). */

/* How many parents a lineage walk follows: far more than a line holds
 * between flattenings, a bound for a damaged store. */
#define LINEAGE_MAX_STEPS 65536u

/* The template at the end of @key's line of parents. */
static char *
root_of (SandboxBubblewrapStore  *self,
         const char              *key,
         GError                 **error)
{
  g_autofree char *current = g_strdup (key);

  for (guint steps = 0; steps < LINEAGE_MAX_STEPS; steps++)
    {
      g_autofree char *parent = NULL;

      if (!sandbox_bubblewrap_store_read_parent (self, current, &parent, error))
        return NULL;
      if (parent == NULL)
        return g_steal_pointer (&current);
      g_free (current);
      current = g_steal_pointer (&parent);
    }
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH,
               "Snapshot %s lies over more than %u snapshots", key, LINEAGE_MAX_STEPS);
  return NULL;
}

/**
 * sandbox_bubblewrap_store_restore_source:
 * @self: a store
 * @lease: a live session's lease
 * @key: the key to restore to (a valid key)
 * @source: (out) (transfer full): the data to copy, %NULL for an empty
 *   upper layer
 * @rebase: (out): whether @key becomes the session's base (see above)
 * @error: return location for a #GError
 *
 * Returns: whether the session may restore to @key: %FALSE with
 *   %SANDBOX_ERROR_INVALID for a key outside its line, or the check of a
 *   stored snapshot's error
 */
gboolean
sandbox_bubblewrap_store_restore_source (SandboxBubblewrapStore  *self,
                                         SandboxBubblewrapLease  *lease,
                                         const char              *key,
                                         char                   **source,
                                         gboolean                *rebase,
                                         GError                 **error)
{
  const char *base = sandbox_state_get_template_key (lease->state);
  g_autofree char *parent = NULL;
  g_autofree char *root = NULL;
  g_autofree char *base_root = NULL;
  gboolean copying = lease->layers == NULL;

  *source = NULL;
  *rebase = FALSE;
  /* A layered session's base is its lower layers: an empty upper layer. */
  if (g_str_equal (key, base))
    {
      if (copying)
        *source = g_build_filename (self->templates, base, "data", NULL);
      return TRUE;
    }
  if (!sandbox_bubblewrap_store_check_template (self, key, error) ||
      !sandbox_bubblewrap_store_read_parent (self, key, &parent, error) ||
      (root = root_of (self, key, error)) == NULL ||
      (base_root = root_of (self, base, error)) == NULL)
    return FALSE;
  if (!g_str_equal (root, base_root))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s is not in this session's line: it comes from template %s, the session "
                   "from template %s; a session restores to its template and the snapshots "
                   "taken over it", key, root, base_root);
      return FALSE;
    }
  *source = g_build_filename (self->templates, key, "data", NULL);
  /* A snapshot over its base: copied into the session, nothing else
   * changes (a layer only where it lies over the same lower layers). */
  if (g_strcmp0 (parent, base) == 0)
    {
      g_autofree char *below = NULL;

      if (!sandbox_bubblewrap_store_read_flattened (self, key, &below, error))
        return FALSE;
      if (copying || (below == NULL && sandbox_bubblewrap_store_is_layer (self, key)))
        return TRUE;
    }
  /* Elsewhere the key becomes its base: a layered session's layers start
   * empty over it, a copying one's workspace is a copy of it. */
  if (!copying)
    g_clear_pointer (source, g_free);
  *rebase = TRUE;
  return TRUE;
}

/**
 * sandbox_bubblewrap_store_rebase_state:
 * @self: a store
 * @lease: a layered session's lease whose upper layers are empty, or a
 *   copying one's whose workspace is @key's files
 * @key: its new base
 * @lowers: (transfer full) (nullable): @key's lower chain (%NULL for a
 *   copying session)
 * @error: return location for a #GError
 *
 * Step 3 above: the session's state.json names @key, and its lease too.
 *
 * Returns: %TRUE on success; on failure the state names the old base
 */
gboolean
sandbox_bubblewrap_store_rebase_state (SandboxBubblewrapStore  *self,
                                       SandboxBubblewrapLease  *lease,
                                       const char              *key,
                                       char                   **lowers,
                                       GError                 **error)
{
  g_auto(GStrv) owned_lowers = lowers;
  g_autofree char *path = g_build_filename (lease->directory, "state.json", NULL);
  g_autofree char *json = NULL;
  g_autoptr(SandboxState) state = sandbox_state_new (sandbox_state_get_backend (lease->state),
                                                     sandbox_state_get_session_id (lease->state),
                                                     key, error);

  if (state == NULL)
    return FALSE;
  json = sandbox_state_to_json (state);
  if (!sandbox_bubblewrap_store_write_atomically (path, json, self->durable, error))
    return FALSE;
  g_set_object (&lease->state, state);
  if (owned_lowers != NULL)
    {
      g_strfreev (lease->lowers);
      lease->lowers = g_steal_pointer (&owned_lowers);
    }
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
  char **chain;
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

  /* A layered snapshot: its chain materialised (whiteouts applied). */
  if (fill->chain != NULL)
    return sandbox_bubblewrap_store_merge_layers_at ((const char * const *) fill->chain, FALSE,
                                                     parent_fd, name, cancellable, error) &&
           (fill->guest == NULL ||
            sandbox_workspace_give_tree_at (parent_fd, name, fill->guest, error));
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
 * @source: the directory to copy: a snapshot's data, or a template's
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Makes @name the session's next workspace: a copy of @source (exact for a
 * flat snapshot's, as a create makes it for a template's; a layered
 * snapshot's chain materialised), the guest's, with the store's workspace
 * quota (a subvolume of its own when there is one), synced when the store
 * is durable. Nothing is left when it fails.
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
  g_autofree char *key = g_path_get_basename (stored);
  g_auto(SandboxBubblewrapFd) from = open_directory (source, error);
  g_auto(GStrv) chain = NULL;
  SandboxWorkspaceOwner owner;
  FillFrom fill = { from, sandbox_bubblewrap_lease_owner (lease, &owner),
                    g_file_test (flat, G_FILE_TEST_EXISTS), NULL };

  if (from >= 0 && sandbox_bubblewrap_store_is_layer (self, key) &&
      (fill.chain = chain = sandbox_bubblewrap_store_lower_chain (self, key, error)) == NULL)
    return FALSE;
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
