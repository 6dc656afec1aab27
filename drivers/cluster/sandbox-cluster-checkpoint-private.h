/* sandbox-cluster-checkpoint-private.h — workspaces as content-addressed checkpoints
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A checkpoint is a manifest naming blobs in a blob store. Creating one walks
 * a workspace the guest may be changing at that very moment: it descends by
 * directory descriptor one entry name at a time, never follows a link and
 * never opens what is not a regular file or directory, so whatever the guest
 * renames or swaps it reads nothing outside the workspace. Materialising one
 * verifies every blob and either produces the whole tree or nothing.
 *
 * What a checkpoint keeps: regular files (contents, and the permission bits
 * exactly, `mode & 0777`: a session's workspace, unlike a template, may hold
 * private 0600 files or read-only ones, and a resumed guest expects them as
 * they were; setuid, setgid and sticky bits are dropped), directories (empty
 * ones too, with their permission bits and sticky bit: a runtime's tmp/ is
 * 01777, and its key covers it), symbolic links verbatim (never
 * followed; dangling or absolute ones too). Hard links become separate
 * copies. FIFOs, sockets and devices are skipped with the reason logged, as
 * are names and link targets that are not UTF-8 (a manifest is JSON).
 * Owners and times are not kept: the importing store gives the tree to its
 * guest.
 *
 * The manifest is compact JSON, one canonical form:
 *
 *   {"version":2,"session":"<session id>","entries":[
 *     {"path":"bin","kind":"directory","mode":493},
 *     {"path":"bin/run","kind":"file","mode":493,"size":12,"sha256":"…"},
 *     {"path":"latest","kind":"symlink","target":"bin/run"}]}
 *
 * "session" names the session the checkpoint was taken of (null for a
 * template's): a manifest is content-addressed, so it is the only thing
 * that ties a digest to one session, and materialising is only ever asked
 * for the session (or template) it names — a record that points a session
 * at another's checkpoint, whose files that other guest chose, is refused.
 * Version 1 named no session and is no longer read (refused like any
 * other invalid manifest). Entries are sorted by path in byte order (so a
 * parent comes before what it holds), the workspace root itself not
 * listed. A manifest is accepted only if it is exactly what this code
 * writes for the session and entries it parses into, so anything json-glib
 * would read loosely (a NUL in a string, an integer out of range, an
 * unknown member, a duplicate) is refused.
 */

#pragma once

#ifndef SANDBOX_CLUSTER_COMPILATION
# error "sandbox-cluster-checkpoint-private.h is private to the cluster driver."
#endif

#include "sandbox-cluster-blob-store-private.h"

G_BEGIN_DECLS

/* Bounds on what a checkpoint holds, and so on what a manifest may claim. */
#define SANDBOX_CLUSTER_CHECKPOINT_MAX_ENTRIES        1000000
#define SANDBOX_CLUSTER_CHECKPOINT_MAX_DEPTH          256
#define SANDBOX_CLUSTER_CHECKPOINT_MAX_PATH           4096
#define SANDBOX_CLUSTER_CHECKPOINT_MAX_FILE_BYTES     (G_GUINT64_CONSTANT (1) << 40)
#define SANDBOX_CLUSTER_CHECKPOINT_MAX_MANIFEST_BYTES (256 * 1024 * 1024)

typedef enum
{
  SANDBOX_CLUSTER_ENTRY_DIRECTORY,
  SANDBOX_CLUSTER_ENTRY_FILE,
  SANDBOX_CLUSTER_ENTRY_SYMLINK,
} SandboxClusterEntryKind;

/**
 * SandboxClusterEntry:
 * @path: the workspace-relative path ("dir/file")
 * @kind: what it is
 * @mode: a file's permission bits (at most 0777), a directory's with its
 *   sticky bit (at most 01777)
 * @size: a file's size
 * @sha256: a file's content address
 * @target: a symbolic link's target, verbatim
 *
 * One entry of a manifest.
 */
typedef struct
{
  char                    *path;
  SandboxClusterEntryKind  kind;
  guint                    mode;
  guint64                  size;
  char                    *sha256;
  char                    *target;
} SandboxClusterEntry;

void       sandbox_cluster_entry_free         (SandboxClusterEntry *entry);

GBytes    *sandbox_cluster_manifest_serialize (const char  *session_id,
                                               GPtrArray   *entries);
GPtrArray *sandbox_cluster_manifest_parse     (GBytes      *manifest,
                                               char       **out_session_id,
                                               GError     **error);

/**
 * SandboxClusterCheckpointStats:
 * @entries: entries in the manifest
 * @skipped: entries left out (special files, non-UTF-8 names, entries that
 *   changed while they were walked)
 * @blobs_written: blobs the store did not have yet
 * @bytes_written: their bytes
 *
 * What creating a checkpoint did.
 */
typedef struct
{
  guint   entries;
  guint   skipped;
  guint   blobs_written;
  guint64 bytes_written;
} SandboxClusterCheckpointStats;

/* @session_id: the session whose workspace it is, %NULL for a template. */
char     *sandbox_cluster_checkpoint_create      (SandboxClusterBlobStore        *store,
                                                  int                             workspace_fd,
                                                  const char                     *session_id,
                                                  SandboxClusterCheckpointStats  *stats,
                                                  GCancellable                   *cancellable,
                                                  GError                        **error);
/* @session_id: the session the checkpoint must be of, %NULL for a template. */
gboolean  sandbox_cluster_checkpoint_materialise (SandboxClusterBlobStore        *store,
                                                  const char                     *digest,
                                                  const char                     *session_id,
                                                  int                             parent_fd,
                                                  const char                     *name,
                                                  GCancellable                   *cancellable,
                                                  GError                        **error);
gboolean  sandbox_cluster_checkpoint_set_errno_error (GError     **error,
                                                     int          saved_errno,
                                                     const char  *action,
                                                     const char  *path);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxClusterEntry, sandbox_cluster_entry_free)

G_END_DECLS
