/* test-runtime-unpack-common.h — what the runtime unpack tests share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* A scratch directory: source/ (a tree or an OCI layout), target/ (empty,
 * target_fd open on it) and outside/, the canary nothing may reach. */
typedef struct
{
  char *root;
  char *source;
  char *target;
  char *outside;
  int   target_fd;
} Scratch;

void  scratch_set_up                   (Scratch       *scratch,
                                        gconstpointer  data);
void  scratch_tear_down                (Scratch       *scratch,
                                        gconstpointer  data);
void  scratch_remove                   (const char    *path);
void  scratch_assert_outside_untouched (Scratch       *scratch);
char *tree_key                         (const char    *path);
guint sandbox_test_count_dir           (const char    *path);
void  runtime_unpack_make_sample_tree  (const char    *root);

/* test-runtime-unpack-oci.c */
void  runtime_unpack_oci_add_tests     (void);

G_END_DECLS
