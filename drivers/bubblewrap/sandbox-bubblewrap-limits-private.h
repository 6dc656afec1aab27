/* sandbox-bubblewrap-limits-private.h — resource limits of guest commands
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"

G_BEGIN_DECLS

/**
 * SandboxBubblewrapCgroup:
 *
 * One command's cgroup (one directory per v1 hierarchy, or one in v2),
 * created with its limits before the command starts.
 */
typedef struct _SandboxBubblewrapCgroup SandboxBubblewrapCgroup;

gboolean                 sandbox_bubblewrap_limits_has_rlimits   (const SandboxBubblewrapLimits *limits);
gboolean                 sandbox_bubblewrap_limits_check_tmp_size (guint64                        tmp_size,
                                                                  GError                       **error);
void                     sandbox_bubblewrap_limits_split_tmp_size (guint64                        tmp_size,
                                                                  guint64                       *tmp,
                                                                  guint64                       *shm);
gboolean                 sandbox_bubblewrap_limits_wants_cgroup  (const SandboxBubblewrapLimits *limits);
gboolean                 sandbox_bubblewrap_cgroup_root_discover (const SandboxBubblewrapLimits  *limits,
                                                                  SandboxBubblewrapCgroupRoot   **root_out,
                                                                  GError                        **error);
SandboxBubblewrapCgroupRoot *sandbox_bubblewrap_cgroup_root_ref  (SandboxBubblewrapCgroupRoot   *root);
void                     sandbox_bubblewrap_cgroup_root_unref    (SandboxBubblewrapCgroupRoot   *root);

SandboxBubblewrapCgroup *sandbox_bubblewrap_cgroup_new           (SandboxBubblewrapCgroupRoot   *root,
                                                                  const SandboxBubblewrapLimits *limits,
                                                                  GError                       **error);
GArray                  *sandbox_bubblewrap_cgroup_get_procs_fds (SandboxBubblewrapCgroup       *self);
GError                  *sandbox_bubblewrap_cgroup_check_exceeded (SandboxBubblewrapCgroup      *self);
void                     sandbox_bubblewrap_cgroup_free          (SandboxBubblewrapCgroup       *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxBubblewrapCgroup, sandbox_bubblewrap_cgroup_free)

G_END_DECLS
