/* sandbox-runtime-unpack.c — a runtime from a root file system directory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Copies a host directory (made by mmdebstrap, say) into the empty target
 * directory, keeping what sandbox-runtime-unpack-private.h lists. The walk
 * holds a descriptor of the source directory and one of the target
 * directory at each level and does everything by a single entry name
 * relative to them: the source is read with AT_SYMLINK_NOFOLLOW, O_NOFOLLOW
 * and O_NONBLOCK (a FIFO swapped in never blocks), each file checked to be
 * regular on its descriptor; the target's entries are made with
 * mkdirat()/openat(O_CREAT | O_EXCL | O_NOFOLLOW)/symlinkat()/linkat(),
 * which create no more than the one name and follow nothing. A directory is
 * made 0700 and given its mode once its entries are in, so a read-only
 * directory of the source can still be filled.
 *
 * Also here: the budget every unpacker counts entries and bytes with.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-runtime-unpack-private.h"
#include "sandbox-workspace-private.h"

#define COPY_BUFFER_SIZE (64 * 1024)

void
sandbox_runtime_budget_init (SandboxRuntimeBudget       *budget,
                             const SandboxRuntimeLimits *limits,
                             SandboxRuntimeProgressFunc  progress,
                             gpointer                    user_data,
                             GCancellable               *cancellable)
{
  static const SandboxRuntimeLimits defaults = SANDBOX_RUNTIME_LIMITS_DEFAULT;

  *budget = (SandboxRuntimeBudget) {
    .limits = limits != NULL ? *limits : defaults,
    .progress = progress,
    .user_data = user_data,
    .cancellable = cancellable,
  };
}

/*
 * sandbox_runtime_budget_add_entry:
 * @budget: the running counts
 * @path: the entry about to be created, relative to the tree, for messages
 * @error: return location for a #GError
 *
 * Checks cancellation and counts one more entry, refusing it if that would
 * pass max_entries. Called before the entry is created.
 *
 * Returns: %TRUE if the entry may be created
 */
gboolean
sandbox_runtime_budget_add_entry (SandboxRuntimeBudget  *budget,
                                  const char            *path,
                                  GError               **error)
{
  if (g_cancellable_set_error_if_cancelled (budget->cancellable, error))
    return FALSE;

  if (budget->n_entries >= budget->limits.max_entries)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                   "Runtime has more than max_entries (%" G_GUINT64_FORMAT ") entries, at ‘%s’",
                   budget->limits.max_entries, path);
      return FALSE;
    }
  budget->n_entries++;

  if (budget->progress != NULL && budget->n_entries % SANDBOX_RUNTIME_PROGRESS_INTERVAL == 0)
    budget->progress (budget->n_entries, budget->n_bytes, budget->user_data);
  return TRUE;
}

/*
 * sandbox_runtime_budget_add_bytes:
 * @budget: the running counts
 * @size: a regular file's apparent size, as its header or stat() says,
 *   before any of it is written
 * @path: the file, relative to the tree, for messages
 * @error: return location for a #GError
 *
 * Returns: %TRUE if the file fits within max_bytes
 */
gboolean
sandbox_runtime_budget_add_bytes (SandboxRuntimeBudget  *budget,
                                  guint64                size,
                                  const char            *path,
                                  GError               **error)
{
  if (size > budget->limits.max_bytes - MIN (budget->n_bytes, budget->limits.max_bytes))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                   "Runtime files are larger than max_bytes (%" G_GUINT64_FORMAT " bytes), at ‘%s’ "
                   "(%" G_GUINT64_FORMAT " bytes)",
                   budget->limits.max_bytes, path, size);
      return FALSE;
    }
  budget->n_bytes += size;
  return TRUE;
}

/* Counts a device node, FIFO or socket that is left out, and says so. */
void
sandbox_runtime_budget_skip (SandboxRuntimeBudget *budget,
                             const char           *path,
                             const char           *kind)
{
  budget->n_skipped++;
  g_debug ("Runtime unpack: skipping %s ‘%s’", kind, path);
}

/* Reports the final counts once. */
void
sandbox_runtime_budget_finish (SandboxRuntimeBudget *budget)
{
  if (budget->n_skipped > 0)
    g_debug ("Runtime unpack: skipped %" G_GUINT64_FORMAT " special files", budget->n_skipped);
  if (budget->progress != NULL)
    budget->progress (budget->n_entries, budget->n_bytes, budget->user_data);
}

/* The name of a special file's kind, for the skip message; NULL for the
 * kinds a runtime keeps. */
static const char *
special_kind (mode_t mode)
{
  if (S_ISCHR (mode) || S_ISBLK (mode))
    return "device node";
  if (S_ISFIFO (mode))
    return "FIFO";
  if (S_ISSOCK (mode))
    return "socket";
  return NULL;
}

typedef struct
{
  SandboxRuntimeBudget budget;
  int                  target_fd;
  GHashTable          *inodes;   /* "dev:ino" of a source file with several
                                  * links → its path in the tree */
  guint8              *buffer;   /* COPY_BUFFER_SIZE */
} DirectoryUnpack;

/**
 * sandbox_runtime_set_errno_error:
 * @error: return location for a #GError
 * @saved_errno: the errno of the failed call
 * @action: what was attempted ("open", "read", …)
 * @path: the path in the runtime it was attempted on
 *
 * Returns: %FALSE, with @error the #GIOErrorEnum of @saved_errno
 */
gboolean
sandbox_runtime_set_errno_error (GError     **error,
                                 int          saved_errno,
                                 const char  *action,
                                 const char  *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "Cannot %s ‘%s’ of the runtime: %s", action, path, g_strerror (saved_errno));
  return FALSE;
}

/* Copies @size bytes of @source_fd into @target_fd, never more: a file
 * that grows after it was counted is cut at the size the budget holds, one
 * that shrinks is an error. */
static gboolean
copy_contents (DirectoryUnpack  *unpack,
               int               source_fd,
               int               target_fd,
               guint64           size,
               const char       *path,
               GError          **error)
{
  while (size > 0)
    {
      ssize_t n = TEMP_FAILURE_RETRY (read (source_fd, unpack->buffer, MIN (size, COPY_BUFFER_SIZE)));

      if (n < 0)
        return sandbox_runtime_set_errno_error (error, errno, "read", path);
      if (n == 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       "Cannot read ‘%s’ of the runtime: it shrank while it was copied", path);
          return FALSE;
        }
      if (!sandbox_workspace_write_all (target_fd, unpack->buffer, n))
        return sandbox_runtime_set_errno_error (error, errno, "write", path);
      size -= n;
    }

  return TRUE;
}

/* A hard link's second name: linked to the first copy in the tree, whose
 * parent is resolved beneath the target without following any link.
 * Returns FALSE with errno set if it cannot be linked. */
static gboolean
link_again (DirectoryUnpack  *unpack,
            const char       *first,
            int               target_dir_fd,
            const char       *name)
{
  g_autofree char *parent = NULL;
  const char *first_name = sandbox_workspace_split_parent (first, &parent);
  g_auto(SandboxWorkspaceFd) parent_fd = -1;

  parent_fd = sandbox_workspace_open_beneath (unpack->target_fd, parent != NULL ? parent : ".",
                                              O_PATH | O_DIRECTORY, RESOLVE_NO_SYMLINKS);
  /* No AT_SYMLINK_FOLLOW: the new name is a link to the entry itself. */
  return parent_fd >= 0 && linkat (parent_fd, first_name, target_dir_fd, name, 0) == 0;
}

static gboolean
unpack_file (DirectoryUnpack    *unpack,
             int                 source_dir_fd,
             int                 target_dir_fd,
             const char         *name,
             const struct stat  *st,
             const char         *path,
             GError            **error)
{
  g_auto(SandboxWorkspaceFd) source_fd = -1;
  g_auto(SandboxWorkspaceFd) target_fd = -1;
  g_autofree char *inode = NULL;
  struct stat opened;

  if (st->st_nlink > 1)
    {
      const char *first;

      inode = g_strdup_printf ("%ju:%ju", (uintmax_t) st->st_dev, (uintmax_t) st->st_ino);
      first = g_hash_table_lookup (unpack->inodes, inode);
      if (first != NULL)
        {
          if (link_again (unpack, first, target_dir_fd, name))
            return TRUE;
          /* A directory the first copy is in already has a mode that
           * keeps the user out, or the file has too many links: a copy. */
          if (errno != EACCES && errno != EPERM && errno != EMLINK)
            return sandbox_runtime_set_errno_error (error, errno, "link", path);
        }
    }

  source_fd = openat (source_dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (source_fd < 0)
    return sandbox_runtime_set_errno_error (error, errno, "open", path);
  /* What was opened may not be what was inspected: check it again. */
  if (fstat (source_fd, &opened) < 0)
    return sandbox_runtime_set_errno_error (error, errno, "inspect", path);
  if (!S_ISREG (opened.st_mode) || opened.st_ino != st->st_ino || opened.st_dev != st->st_dev)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "Cannot copy ‘%s’ of the runtime: it changed while it was copied", path);
      return FALSE;
    }
  if (!sandbox_runtime_budget_add_bytes (&unpack->budget, opened.st_size, path, error))
    return FALSE;

  target_fd = openat (target_dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (target_fd < 0)
    return sandbox_runtime_set_errno_error (error, errno, "create", path);
  if (!copy_contents (unpack, source_fd, target_fd, opened.st_size, path, error))
    return FALSE;
  /* The permission bits only: setuid and setgid are dropped. */
  if (fchmod (target_fd, opened.st_mode & SANDBOX_RUNTIME_FILE_MODE_MASK) < 0)
    return sandbox_runtime_set_errno_error (error, errno, "chmod", path);

  if (inode != NULL)
    g_hash_table_insert (unpack->inodes, g_steal_pointer (&inode), g_strdup (path));
  return TRUE;
}

static gboolean
unpack_symlink (int                 source_dir_fd,
                int                 target_dir_fd,
                const char         *name,
                const char         *path,
                GError            **error)
{
  char link_target[PATH_MAX + 1];
  ssize_t n = readlinkat (source_dir_fd, name, link_target, sizeof link_target);

  if (n < 0)
    return sandbox_runtime_set_errno_error (error, errno, "read the link", path);
  if (n > PATH_MAX)
    return sandbox_runtime_set_errno_error (error, ENAMETOOLONG, "read the link", path);
  link_target[n] = '\0';

  /* The target text verbatim; symlinkat() never resolves it. */
  if (symlinkat (link_target, target_dir_fd, name) < 0)
    return sandbox_runtime_set_errno_error (error, errno, "create the link", path);
  return TRUE;
}

static gboolean unpack_tree (DirectoryUnpack  *unpack,
                             int               source_dir_fd,
                             int               target_dir_fd,
                             const char       *prefix,
                             guint             depth,
                             GError          **error);

static gboolean
unpack_directory (DirectoryUnpack    *unpack,
                  int                 source_dir_fd,
                  int                 target_dir_fd,
                  const char         *name,
                  const char         *path,
                  guint               depth,
                  GError            **error)
{
  g_auto(SandboxWorkspaceFd) source_fd = -1;
  g_auto(SandboxWorkspaceFd) target_fd = -1;
  struct stat opened;

  if (depth >= SANDBOX_RUNTIME_MAX_DEPTH)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                   "Runtime directories nest deeper than %d levels, at ‘%s’",
                   SANDBOX_RUNTIME_MAX_DEPTH, path);
      return FALSE;
    }

  source_fd = openat (source_dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (source_fd < 0)
    return sandbox_runtime_set_errno_error (error, errno, "open", path);
  if (fstat (source_fd, &opened) < 0)
    return sandbox_runtime_set_errno_error (error, errno, "inspect", path);

  /* Owner-only until it is filled, its own mode afterwards. */
  if (mkdirat (target_dir_fd, name, 0700) < 0)
    return sandbox_runtime_set_errno_error (error, errno, "create", path);
  target_fd = openat (target_dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (target_fd < 0)
    return sandbox_runtime_set_errno_error (error, errno, "open", path);

  if (!unpack_tree (unpack, source_fd, target_fd, path, depth + 1, error))
    return FALSE;

  if (fchmod (target_fd, opened.st_mode & SANDBOX_RUNTIME_DIR_MODE_MASK) < 0)
    return sandbox_runtime_set_errno_error (error, errno, "chmod", path);
  return TRUE;
}

/* Unpacks the entries of @source_dir_fd into @target_dir_fd; @prefix is
 * their directory's path in the tree ("" at the top). */
static gboolean
unpack_tree (DirectoryUnpack  *unpack,
             int               source_dir_fd,
             int               target_dir_fd,
             const char       *prefix,
             guint             depth,
             GError          **error)
{
  g_autofree guint8 *dirents_buffer = g_malloc (SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE);
  SandboxWorkspaceDirents dirents;
  struct dirent64 *entry;

  sandbox_workspace_dirents_init (&dirents, source_dir_fd, dirents_buffer);
  while (TRUE)
    {
      g_autofree char *path = NULL;
      const char *kind;
      struct stat st;
      gboolean ok;

      if (!sandbox_workspace_dirents_next (&dirents, &entry))
        return sandbox_runtime_set_errno_error (error, errno, "list", prefix[0] != '\0' ? prefix : ".");
      if (entry == NULL)
        return TRUE;

      path = prefix[0] != '\0' ? g_strconcat (prefix, "/", entry->d_name, NULL) : g_strdup (entry->d_name);
      if (fstatat (source_dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return sandbox_runtime_set_errno_error (error, errno, "inspect", path);

      kind = special_kind (st.st_mode);
      if (kind != NULL)
        {
          if (g_cancellable_set_error_if_cancelled (unpack->budget.cancellable, error))
            return FALSE;
          sandbox_runtime_budget_skip (&unpack->budget, path, kind);
          continue;
        }

      if (!sandbox_runtime_budget_add_entry (&unpack->budget, path, error))
        return FALSE;

      if (S_ISDIR (st.st_mode))
        ok = unpack_directory (unpack, source_dir_fd, target_dir_fd, entry->d_name, path, depth, error);
      else if (S_ISREG (st.st_mode))
        ok = unpack_file (unpack, source_dir_fd, target_dir_fd, entry->d_name, &st, path, error);
      else if (S_ISLNK (st.st_mode))
        ok = unpack_symlink (source_dir_fd, target_dir_fd, entry->d_name, path, error);
      else
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                       "Cannot copy ‘%s’ of the runtime: unknown file type 0%o",
                       path, (unsigned) (st.st_mode & S_IFMT));
          ok = FALSE;
        }
      if (!ok)
        return FALSE;
    }
}

/**
 * sandbox_runtime_unpack_directory:
 * @source_dirfd: the root file system directory to import
 * @target_dirfd: an empty directory the caller made
 * @limits: (nullable): the bounds, or %NULL for the defaults
 * @progress: (nullable) (scope call): called every few hundred entries
 * @user_data: data for @progress
 * @cancellable: (nullable): checked between entries
 * @error: return location for a #GError
 *
 * Copies the tree under @source_dirfd into @target_dirfd, keeping and
 * dropping what sandbox-runtime-unpack-private.h lists: device nodes, FIFOs
 * and sockets are skipped, setuid and setgid bits dropped. A file with
 * several links in the source is copied once and linked again. The root's
 * own mode is not copied: @target_dirfd keeps the one its maker gave it.
 *
 * Returns: %TRUE when the whole tree was copied; on %FALSE the target holds
 *   part of it, and the caller removes it
 */
gboolean
sandbox_runtime_unpack_directory (int                         source_dirfd,
                                  int                         target_dirfd,
                                  const SandboxRuntimeLimits *limits,
                                  SandboxRuntimeProgressFunc  progress,
                                  gpointer                    user_data,
                                  GCancellable               *cancellable,
                                  GError                    **error)
{
  g_autoptr(GHashTable) inodes = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_autofree guint8 *buffer = g_malloc (COPY_BUFFER_SIZE);
  g_auto(SandboxWorkspaceFd) source_fd = -1;
  DirectoryUnpack unpack = { .target_fd = target_dirfd, .inodes = inodes, .buffer = buffer };

  sandbox_runtime_budget_init (&unpack.budget, limits, progress, user_data, cancellable);

  /* A descriptor of its own to read the listing with, whatever
   * @source_dirfd's offset and flags are. */
  source_fd = openat (source_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (source_fd < 0)
    return sandbox_runtime_set_errno_error (error, errno, "open", ".");

  if (!unpack_tree (&unpack, source_fd, target_dirfd, "", 0, error))
    return FALSE;
  sandbox_runtime_budget_finish (&unpack.budget);
  return TRUE;
}
