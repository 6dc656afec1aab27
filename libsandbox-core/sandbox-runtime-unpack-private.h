/* sandbox-runtime-unpack-private.h — a runtime's tree, unpacked contained
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A runtime is a root file system tree (usr/, etc/, bin -> usr/bin, …) that
 * sessions share read-only as their userland (issue 35). It is imported from
 * a root file system directory (sandbox_runtime_unpack_directory()) or from
 * an OCI image layout (sandbox_runtime_unpack_oci_layout()), into an empty
 * directory the caller made and later renames into its store, and addressed
 * by sandbox_runtime_compute_key().
 *
 * The source is not trusted. What the unpacked tree keeps:
 *
 * - directories, regular files and symbolic links; a symbolic link's target
 *   is kept verbatim (absolute targets too: the guest resolves them in its
 *   own root) and is never followed while unpacking;
 * - hard links between two entries of the tree, as hard links;
 * - the permission bits 0777, and the sticky bit on directories.
 *
 * What it drops: setuid and setgid bits, owners (the tree belongs to the
 * importing user), extended attributes (security.capability above all) and
 * times. Device nodes, FIFOs and sockets are skipped: they are counted and
 * logged with g_debug(), never created.
 *
 * Nothing outside the target directory is ever created, written, followed
 * or chmod'ed: everything is made with *at() calls relative to a directory
 * fd inside the target, with O_NOFOLLOW, and a path of several components
 * is resolved with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS). Entry
 * and byte counts are bounded by #SandboxRuntimeLimits, checked before
 * anything is written. On an error the target is left part filled: the
 * caller removes it (nothing is ever renamed here).
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/**
 * SandboxRuntimeLimits:
 * @max_bytes: the most the regular files' sizes may sum to, apparent sizes
 *   (a sparse file counts its full size)
 * @max_entries: the most files, directories, symbolic links and hard links
 *   the tree may hold together (skipped special files are not counted)
 *
 * What one unpack may create. Exceeding either is %SANDBOX_ERROR_LIMIT,
 * reported before the entry that would exceed it is written.
 */
typedef struct
{
  guint64 max_bytes;
  guint64 max_entries;
} SandboxRuntimeLimits;

/* The defaults: 16 GiB of file contents and a million entries, well above
 * a full desktop distribution's /usr (a Debian 12 GNOME install is about
 * 8 GiB and 300,000 entries), well below what fills a host. */
#define SANDBOX_RUNTIME_DEFAULT_MAX_BYTES   (G_GUINT64_CONSTANT (16) << 30)
#define SANDBOX_RUNTIME_DEFAULT_MAX_ENTRIES G_GUINT64_CONSTANT (1000000)
#define SANDBOX_RUNTIME_LIMITS_DEFAULT \
  { SANDBOX_RUNTIME_DEFAULT_MAX_BYTES, SANDBOX_RUNTIME_DEFAULT_MAX_ENTRIES }

/* Directories nest at most this deep in a runtime (a directory unpack holds
 * two descriptors open per level). */
#define SANDBOX_RUNTIME_MAX_DEPTH 128

/* How many entries pass between two calls of the progress function. */
#define SANDBOX_RUNTIME_PROGRESS_INTERVAL 256

/**
 * SandboxRuntimeProgressFunc:
 * @n_entries: entries created so far
 * @n_bytes: apparent bytes of regular files written so far
 * @user_data: the data given with the function
 *
 * Called every %SANDBOX_RUNTIME_PROGRESS_INTERVAL entries and once at the
 * end of a successful unpack, in the unpacking thread.
 */
typedef void (*SandboxRuntimeProgressFunc) (guint64  n_entries,
                                            guint64  n_bytes,
                                            gpointer user_data);

gboolean sandbox_runtime_unpack_directory     (int                         source_dirfd,
                                               int                         target_dirfd,
                                               const SandboxRuntimeLimits *limits,
                                               SandboxRuntimeProgressFunc  progress,
                                               gpointer                    user_data,
                                               GCancellable               *cancellable,
                                               GError                    **error);
gboolean sandbox_runtime_unpack_oci_layout    (int                         layout_dirfd,
                                               int                         target_dirfd,
                                               const SandboxRuntimeLimits *limits,
                                               SandboxRuntimeProgressFunc  progress,
                                               gpointer                    user_data,
                                               GCancellable               *cancellable,
                                               GError                    **error);
gboolean sandbox_runtime_source_is_oci_layout (int                         source_dirfd);
char    *sandbox_runtime_compute_key          (int                         tree_dirfd,
                                               GCancellable               *cancellable,
                                               GError                    **error);

/* What the unpackers share (sandbox-runtime-unpack.c): the running counts
 * against the limits, cancellation and progress, checked once per entry. */
typedef struct
{
  SandboxRuntimeLimits        limits;
  guint64                     n_entries;
  guint64                     n_bytes;
  guint64                     n_skipped;   /* devices, FIFOs, sockets */
  SandboxRuntimeProgressFunc  progress;
  gpointer                    user_data;
  GCancellable               *cancellable;
} SandboxRuntimeBudget;

void     sandbox_runtime_budget_init      (SandboxRuntimeBudget       *budget,
                                           const SandboxRuntimeLimits *limits,
                                           SandboxRuntimeProgressFunc  progress,
                                           gpointer                    user_data,
                                           GCancellable               *cancellable);
gboolean sandbox_runtime_budget_add_entry (SandboxRuntimeBudget       *budget,
                                           const char                 *path,
                                           GError                    **error);
gboolean sandbox_runtime_budget_add_bytes (SandboxRuntimeBudget       *budget,
                                           guint64                     size,
                                           const char                 *path,
                                           GError                    **error);
void     sandbox_runtime_budget_skip      (SandboxRuntimeBudget       *budget,
                                           const char                 *path,
                                           const char                 *kind);
void     sandbox_runtime_budget_finish    (SandboxRuntimeBudget       *budget);

/* The modes kept: 0777 on files and links, 0777 plus sticky on directories. */
#define SANDBOX_RUNTIME_FILE_MODE_MASK 0777
#define SANDBOX_RUNTIME_DIR_MODE_MASK  01777

gboolean sandbox_runtime_set_errno_error (GError     **error,
                                          int          saved_errno,
                                          const char  *action,
                                          const char  *path);

G_END_DECLS
