/* sandbox-template-private.h — template internals for backends and tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sys/types.h>
#include <time.h>

#include "sandbox-template.h"

G_BEGIN_DECLS

/* The runtime a template names (sandbox-template-runtime.c): its key, or
 * NULL, and whether each session gets a writable copy of it. */
typedef struct
{
  char *key;
  gboolean writable;
} SandboxTemplateRuntime;

SandboxTemplateRuntime *sandbox_template_get_runtime_slot (SandboxTemplate *self);

/* An imported host directory, shared by the files read from it: its
 * descriptor (files are opened again beneath it when they are stored) and
 * its path, for messages. Reference-counted. */
typedef struct
{
  int root_fd;
  char *root_path;
} SandboxTemplateSource;

SandboxTemplateSource *sandbox_template_source_new   (int                    root_fd,
                                                      const char            *root_path);
SandboxTemplateSource *sandbox_template_source_ref   (SandboxTemplateSource *self);
void                   sandbox_template_source_unref (SandboxTemplateSource *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxTemplateSource, sandbox_template_source_unref)

/* What an imported file was when the import inspected it: a file still
 * with this inode, size and both times is taken to be unchanged. Recorded
 * only for files whose ctime lies far enough in the past that any later
 * change moves it (see import_file()). */
typedef struct
{
  dev_t dev;
  ino_t ino;
  struct timespec mtime;
  struct timespec ctime;
} SandboxTemplateFileStamp;

/* One entry of a template: a regular file (its bytes in memory, or where
 * they are on the host), a symbolic link, or a directory. */
typedef struct
{
  GFileType type;
  /* G_FILE_TYPE_REGULAR */
  SandboxTemplateFileFlags flags;
  /* Lowercase hex SHA-256 of the contents. NULL for an imported file not
   * read yet: the first read to its end sets it, once, atomically (any
   * thread may read files); read it with g_atomic_pointer_get(). */
  char *digest;
  guint64 size;
  GBytes *contents;                /* added from memory, or NULL… */
  SandboxTemplateSource *source;   /* …imported: source_path below source */
  char *source_path;
  gboolean stamped;                /* imported with a stamp (digest NULL then) */
  SandboxTemplateFileStamp stamp;
  /* G_FILE_TYPE_SYMBOLIC_LINK */
  char *target;
} SandboxTemplateEntry;

void sandbox_template_entry_free (SandboxTemplateEntry *entry);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxTemplateEntry, sandbox_template_entry_free)

/* Adds @entry (taking it) at @path, a workspace path that is not the root,
 * checking the path, a link's target and the entry against what the
 * template holds. *@added (if not NULL) gets the canonical path when a new
 * entry was made, or NULL (a directory already there is not one). */
gboolean sandbox_template_add_entry    (SandboxTemplate       *self,
                                        const char            *path,
                                        SandboxTemplateEntry  *entry,
                                        char                 **added,
                                        GError               **error);
/* Takes out an entry inserted before (an import's rollback). */
void     sandbox_template_remove_entry (SandboxTemplate       *self,
                                        const char            *canonical);
/* The entry at @canonical, or NULL. */
SandboxTemplateEntry *sandbox_template_lookup_entry (SandboxTemplate *self,
                                                     const char      *canonical);
/* Whether a directory entry at @canonical has nothing below it (it is then
 * part of the key), or any other entry is there. */
gboolean sandbox_template_entry_is_listed (SandboxTemplate      *self,
                                           const char           *canonical,
                                           SandboxTemplateEntry *entry);

/* sandbox-template-stream.c, for sandbox_template_read_file()
 * (sandbox-template-files.c): opens a stream over an imported file that
 * fails if the file is no longer what was imported: at its opening if its
 * stamp differs, at its end if it does not have the imported size, or the
 * digest of an earlier read. At its end, the digest of a file read for the
 * first time becomes the entry's. It reports its progress to @owner (if
 * not NULL). */
GInputStream *sandbox_template_file_stream_new (SandboxTemplate       *owner,
                                                SandboxTemplateEntry  *entry,
                                                const char            *canonical,
                                                GError               **error);

/* Reads (and hashes) every imported file never read to its end, so that
 * every digest, and the key, are known. */
gboolean sandbox_template_read_unread_files (SandboxTemplate  *self,
                                             GError          **error);

/* Starts counting the files read from zero, for SandboxTemplate::progress
 * emitted in @context (the prewarm caller's thread-default context). */
void sandbox_template_begin_progress  (SandboxTemplate *self,
                                       GMainContext    *context);
/* @bytes more were read; @file_done: one more file was read to its end. */
void sandbox_template_report_progress (SandboxTemplate *self,
                                       guint64          bytes,
                                       gboolean         file_done);

/* The exact bytes sandbox_template_compute_key() hashes (no validation of
 * the names; every file must have been read, see
 * sandbox_template_read_unread_files()): [backend_name, name, [entry, …]]
 * as JSON.stringify writes it, where an entry is [path, sha256hex] for a
 * plain file and
 * [path, sha256hex, "executable"], [path, target, "symlink"] or
 * [path, "", "directory"] for the other kinds. */
char *sandbox_template_dup_canonical_json (SandboxTemplate *self,
                                           const char      *backend_name);

G_END_DECLS
