/* sandbox-test-bwrap-children.c — the bwrap processes this test process runs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox-test-bwrap-children.h"

GArray *
sandbox_test_bwrap_children (void)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  GArray *pids = g_array_new (FALSE, FALSE, sizeof (pid_t));
  const char *name;

  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = g_build_filename ("/proc", name, "stat", NULL);
      g_autofree char *stat = NULL;
      const char *close_paren;
      pid_t pid, parent;
      char state;

      if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (path, &stat, NULL, NULL))
        continue;
      /* The name in parentheses may hold anything: read after the last ")". */
      close_paren = strrchr (stat, ')');
      if (close_paren == NULL || sscanf (close_paren, ") %c %d", &state, &parent) != 2 ||
          parent != getpid () || state == 'Z' || strstr (stat, "(bwrap)") == NULL)
        continue;
      pid = (pid_t) g_ascii_strtoll (name, NULL, 10);
      g_array_append_val (pids, pid);
    }
  return pids;
}

/* Whether @pid has a child that is not a zombie: a bwrap whose sandbox
 * runs (its init, the stub, is that child), not one still setting its
 * sandbox up or one whose sandbox has ended (a command may complete while
 * its bwrap exits: see sandbox-bubblewrap-process.c). */
static gboolean
has_live_child (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", (int) pid, (int) pid);
  g_autofree char *children = NULL;
  g_auto(GStrv) pids = NULL;

  if (!g_file_get_contents (path, &children, NULL, NULL))
    return FALSE;
  pids = g_strsplit (g_strstrip (children), " ", -1);
  for (guint i = 0; pids[i] != NULL; i++)
    {
      g_autofree char *stat_path = g_strdup_printf ("/proc/%s/stat", pids[i]);
      g_autofree char *stat = NULL;
      const char *close_paren;
      unsigned int flags;
      char state;

      /* Not a zombie, and not exiting (PF_EXITING, 0x4 in field 9). */
      if (pids[i][0] != '\0' && g_file_get_contents (stat_path, &stat, NULL, NULL) &&
          (close_paren = strrchr (stat, ')')) != NULL &&
          sscanf (close_paren, ") %c %*d %*d %*d %*d %*d %u", &state, &flags) == 2 &&
          state != 'Z' && (flags & 0x4) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Exactly @n bwrap children, each with its sandbox running. */
static gboolean
settled_at (GArray *pids,
            guint   n)
{
  if (pids->len != n)
    return FALSE;
  for (guint i = 0; i < pids->len; i++)
    if (!has_live_child (g_array_index (pids, pid_t, i)))
      return FALSE;
  return TRUE;
}

static gboolean
same_pids (GArray *a,
           GArray *b)
{
  /* An empty GArray's data may be NULL, which memcmp() must not see. */
  return a->len == b->len &&
         (a->len == 0 || memcmp (a->data, b->data, a->len * sizeof (pid_t)) == 0);
}

/* Settled in two looks 5 ms apart, the same bwraps: a sandbox that ends
 * (the stub between its report and its exit) is gone by the second. */
GArray *
sandbox_test_wait_for_bwrap_children (guint n)
{
  GArray *pids = sandbox_test_bwrap_children ();
  GArray *before = NULL;

  for (guint waited = 0; waited < 10 * 1000; waited += 5)
    {
      gboolean settled = settled_at (pids, n);

      if (settled && before != NULL && same_pids (before, pids))
        break;
      g_clear_pointer (&before, g_array_unref);
      if (settled)
        before = g_array_ref (pids);
      g_usleep (5 * 1000);
      g_array_unref (pids);
      pids = sandbox_test_bwrap_children ();
    }
  g_clear_pointer (&before, g_array_unref);
  return pids;
}
