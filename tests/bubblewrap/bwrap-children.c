/* bwrap-children.c — the bwrap processes this test process runs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bwrap-children.h"

GArray *
bwrap_children (void)
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

GArray *
wait_for_bwrap_children (guint n)
{
  GArray *pids = bwrap_children ();

  for (guint waited = 0; pids->len < n && waited < 10 * 1000; waited += 5)
    {
      g_usleep (5 * 1000);
      g_array_unref (pids);
      pids = bwrap_children ();
    }
  return pids;
}
