/* sandbox-bubblewrap-trees.c — counting a session's sandboxes until reaped
 *
 * A SandboxBubblewrapTrees counts the sandboxes of a session launched and
 * not reaped yet (see "Life of a command" in sandbox-bubblewrap-process.c):
 * each process enters it at its launch and leaves it when its bwrap is
 * reaped, and a stopping session waits for it to be empty.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-process-private.h"

struct _SandboxBubblewrapTrees
{
  GMutex lock;
  GCond emptied;
  guint n_trees;   /* guarded by @lock */
};

static void
trees_clear (gpointer data)
{
  SandboxBubblewrapTrees *trees = data;

  g_mutex_clear (&trees->lock);
  g_cond_clear (&trees->emptied);
}

/**
 * sandbox_bubblewrap_trees_new:
 *
 * Returns: (transfer full): a count of launched sandboxes not reaped yet
 */
SandboxBubblewrapTrees *
sandbox_bubblewrap_trees_new (void)
{
  SandboxBubblewrapTrees *trees = g_atomic_rc_box_new0 (SandboxBubblewrapTrees);

  g_mutex_init (&trees->lock);
  g_cond_init (&trees->emptied);
  return trees;
}

SandboxBubblewrapTrees *
sandbox_bubblewrap_trees_ref (SandboxBubblewrapTrees *trees)
{
  return g_atomic_rc_box_acquire (trees);
}

void
sandbox_bubblewrap_trees_unref (SandboxBubblewrapTrees *trees)
{
  g_atomic_rc_box_release_full (trees, trees_clear);
}

void
sandbox_bubblewrap_trees_enter (SandboxBubblewrapTrees *trees)
{
  g_mutex_lock (&trees->lock);
  trees->n_trees++;
  g_mutex_unlock (&trees->lock);
}

void
sandbox_bubblewrap_trees_leave (SandboxBubblewrapTrees *trees)
{
  g_mutex_lock (&trees->lock);
  if (--trees->n_trees == 0)
    g_cond_broadcast (&trees->emptied);
  g_mutex_unlock (&trees->lock);
}

/**
 * sandbox_bubblewrap_trees_is_empty:
 * @trees: a count
 *
 * Returns: whether every sandbox it counts is reaped now; any thread
 */
gboolean
sandbox_bubblewrap_trees_is_empty (SandboxBubblewrapTrees *trees)
{
  gboolean empty;

  g_mutex_lock (&trees->lock);
  empty = trees->n_trees == 0;
  g_mutex_unlock (&trees->lock);
  return empty;
}

/**
 * sandbox_bubblewrap_trees_wait:
 * @trees: a count
 *
 * Blocks until every sandbox it counts is reaped. Not on the launcher
 * thread, which reaps them.
 */
void
sandbox_bubblewrap_trees_wait (SandboxBubblewrapTrees *trees)
{
  g_assert (!sandbox_bubblewrap_launcher_is_current ());
  g_mutex_lock (&trees->lock);
  while (trees->n_trees > 0)
    g_cond_wait (&trees->emptied, &trees->lock);
  g_mutex_unlock (&trees->lock);
}
