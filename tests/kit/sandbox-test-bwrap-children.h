/* sandbox-test-bwrap-children.h — the bwrap processes this test process runs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* (element-type pid_t): the live (not zombie) bwrap children of this
 * process, as /proc shows them now. */
GArray *sandbox_test_bwrap_children          (void);
/* The same once exactly @n are there, each with its sandbox running (its
 * init alive), or after 10 s: a ready sandbox is launched on the launcher
 * thread, a moment after what started it, and a command may complete a
 * moment before its bwrap has exited. */
GArray *sandbox_test_wait_for_bwrap_children (guint n);

G_END_DECLS
