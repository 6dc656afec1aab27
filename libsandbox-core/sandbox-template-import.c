/* sandbox-template-import.c — a template from a host directory, streamed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The tree being imported is the host's, but it may be a checkout the user
 * does not fully trust, or one that changes while it is read. Nothing in it
 * is ever followed: every entry is inspected with AT_SYMLINK_NOFOLLOW,
 * directories and files are opened with O_NOFOLLOW (a file also
 * O_NONBLOCK, and checked to be regular on its descriptor, so a FIFO
 * swapped in never blocks), and symbolic links are only read with
 * readlinkat(). File contents are not kept: the template records where
 * each file is and what it was (its stamp: inode, size, mtime, ctime), and
 * the file is read once, when a backend stores it, hashed as it is copied
 * (sandbox-template-stream.c), so a file is opened, read and written once
 * and what is stored is by construction what the key covers.
 *
 * A stamp can only tell a later change if that change moves the ctime,
 * and file times have a granularity (the coarse clock's tick on most file
 * systems, a second or two on some): a file changed within the same tick
 * as the import inspects it would keep its stamp. So a file whose ctime is
 * that recent (or in the future) is hashed here, in one 64 KiB buffer, as
 * git re-hashes its "racily clean" files, and checked against that digest
 * when it is stored.
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-digest-private.h"
#include "sandbox-error.h"
#include "sandbox-path.h"
#include "sandbox-template-private.h"

#define IMPORT_BUFFER_SIZE (64 * 1024)

/* How long ago a file's ctime must be for its stamp to be trusted, in µs:
 * longer than the tick of the coarse clock that stamps files (at most
 * 10 ms, HZ=100) on file systems with sub-second times, longer than FAT's
 * two seconds on those whose times are whole seconds (a ctime with no
 * nanoseconds: one in 10⁹ of the others also looks so, and is only hashed
 * early). */
#define SETTLED_FINE_US (20 * 1000)
#define SETTLED_COARSE_US (3 * G_USEC_PER_SEC)

/* Directories nest at most this deep (two descriptors are open per level). */
#define IMPORT_MAX_DEPTH 256

typedef struct
{
  SandboxTemplate *self;
  SandboxTemplateSource *source;
  GCancellable *cancellable;
  guint8 *buffer;
  GPtrArray *added; /* canonical paths this import added, for rollback */
  gint64 started;   /* g_get_real_time() when the import started */
} Import;

static gboolean
set_io_error_from_errno (GError    **error,
                         int         saved_errno,
                         const char *action,
                         const char *relative)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "Could not %s “%s” while importing a template: %s",
               action, relative, g_strerror (saved_errno));
  return FALSE;
}

static gboolean
set_changed_error (GError    **error,
                   const char *relative)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Template directory entry “%s” changed while importing", relative);
  return FALSE;
}

static gboolean
insert (Import                *import,
        const char            *relative,
        SandboxTemplateEntry  *entry,
        GError               **error)
{
  char *added = NULL;

  if (!sandbox_template_add_entry (import->self, relative, entry, &added, error))
    return FALSE;
  if (added != NULL)
    g_ptr_array_add (import->added, added);
  return TRUE;
}

/* Whether any change to the file inspected as @st, from now on, moves
 * its ctime: whether the ctime lies a whole granule of file times before
 * the import started. */
static gboolean
is_settled (const struct stat *st,
            gint64             started)
{
  gint64 ctime = (gint64) st->st_ctim.tv_sec * G_USEC_PER_SEC + st->st_ctim.tv_nsec / 1000;
  gint64 margin = st->st_ctim.tv_nsec != 0 ? SETTLED_FINE_US : SETTLED_COARSE_US;

  return ctime <= started - margin;
}

/* Hashes the regular file @name of @dir_fd now: a file too recently
 * changed for its stamp to be trusted. Sets @digest and @size. */
static gboolean
hash_file (Import      *import,
           int          dir_fd,
           const char  *name,
           const char  *relative,
           struct stat *st,
           char       **digest,
           guint64     *size,
           GError     **error)
{
  g_autoptr(SandboxDigest) hash = NULL;
  int fd;

  /* O_NOFOLLOW and O_NONBLOCK: an entry swapped for a symlink or a FIFO
   * since it was inspected fails here instead of escaping or blocking. */
  fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 && errno == ELOOP)
    return set_changed_error (error, relative);
  if (fd < 0)
    return set_io_error_from_errno (error, errno, "open", relative);
  if (fstat (fd, st) != 0 || !S_ISREG (st->st_mode))
    {
      close (fd);
      return set_changed_error (error, relative);
    }

  hash = sandbox_digest_new ();
  *size = 0;
  while (TRUE)
    {
      ssize_t n = read (fd, import->buffer, IMPORT_BUFFER_SIZE);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved_errno = errno;

          close (fd);
          return set_io_error_from_errno (error, saved_errno, "read", relative);
        }
      if (n == 0)
        break;
      sandbox_digest_update (hash, import->buffer, n);
      *size += n;
      if (g_cancellable_set_error_if_cancelled (import->cancellable, error))
        {
          close (fd);
          return FALSE;
        }
    }
  close (fd);
  *digest = sandbox_digest_finish_hex (hash);
  return TRUE;
}

/* Records the regular file @name of @dir_fd, inspected as @st: where it
 * is, and its stamp or (if it changed too recently) its digest. */
static gboolean
import_file (Import            *import,
             int                dir_fd,
             const char        *name,
             const char        *relative,
             const struct stat *inspected,
             GError           **error)
{
  SandboxTemplateEntry *entry;
  struct stat st = *inspected;
  char *digest = NULL;
  guint64 size = st.st_size;

  if (!is_settled (&st, import->started) &&
      !hash_file (import, dir_fd, name, relative, &st, &digest, &size, error))
    return FALSE;

  entry = g_new0 (SandboxTemplateEntry, 1);
  entry->type = G_FILE_TYPE_REGULAR;
  /* As git: any execute bit makes an executable file. */
  entry->flags = (st.st_mode & 0111) != 0 ? SANDBOX_TEMPLATE_FILE_EXECUTABLE
                                          : SANDBOX_TEMPLATE_FILE_NONE;
  entry->digest = digest;
  entry->size = size;
  entry->source = sandbox_template_source_ref (import->source);
  entry->source_path = g_strdup (relative);
  if (digest == NULL)
    {
      entry->stamped = TRUE;
      entry->stamp = (SandboxTemplateFileStamp) { st.st_dev, st.st_ino, st.st_mtim, st.st_ctim };
    }
  return insert (import, relative, entry, error);
}

/* Records the symbolic link @name of @dir_fd as it is, without following it. */
static gboolean
import_symlink (Import      *import,
                int          dir_fd,
                const char  *name,
                const char  *relative,
                GError     **error)
{
  char target[PATH_MAX];
  SandboxTemplateEntry *entry;
  ssize_t n = readlinkat (dir_fd, name, target, sizeof target);

  if (n < 0 && errno == EINVAL)
    return set_changed_error (error, relative);
  if (n < 0)
    return set_io_error_from_errno (error, errno, "read the link", relative);
  if ((gsize) n >= sizeof target)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template directory entry “%s” is a symbolic link with a target longer "
                   "than %d bytes", relative, PATH_MAX - 1);
      return FALSE;
    }
  entry = g_new0 (SandboxTemplateEntry, 1);
  entry->type = G_FILE_TYPE_SYMBOLIC_LINK;
  entry->target = g_strndup (target, n);
  return insert (import, relative, entry, error);
}

static gboolean import_directory (Import      *import,
                                  int          dir_fd,
                                  const char  *prefix,
                                  guint        depth,
                                  gboolean    *empty,
                                  GError     **error);

static gboolean
import_subdirectory (Import      *import,
                     int          dir_fd,
                     const char  *name,
                     const char  *relative,
                     guint        depth,
                     GError     **error)
{
  gboolean empty = FALSE;
  gboolean ok;
  int child_fd;

  if (depth >= IMPORT_MAX_DEPTH)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template directory entry “%s” nests deeper than %d levels",
                   relative, IMPORT_MAX_DEPTH);
      return FALSE;
    }
  child_fd = openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (child_fd < 0 && (errno == ELOOP || errno == ENOTDIR))
    return set_changed_error (error, relative);
  if (child_fd < 0)
    return set_io_error_from_errno (error, errno, "open", relative);

  ok = import_directory (import, child_fd, relative, depth + 1, &empty, error);
  close (child_fd);
  if (ok && empty)
    {
      SandboxTemplateEntry *entry = g_new0 (SandboxTemplateEntry, 1);

      entry->type = G_FILE_TYPE_DIRECTORY;
      ok = insert (import, relative, entry, error);
    }
  return ok;
}

static const char *
describe_special (mode_t mode)
{
  return S_ISFIFO (mode) ? "FIFO" : S_ISSOCK (mode) ? "socket" : "device";
}

static gboolean
import_entry (Import      *import,
              int          dir_fd,
              const char  *name,
              const char  *relative,
              guint        depth,
              GError     **error)
{
  struct stat st;

  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return set_io_error_from_errno (error, errno, "inspect", relative);

  if (S_ISDIR (st.st_mode))
    return import_subdirectory (import, dir_fd, name, relative, depth, error);
  if (S_ISREG (st.st_mode))
    return import_file (import, dir_fd, name, relative, &st, error);
  if (S_ISLNK (st.st_mode))
    return import_symlink (import, dir_fd, name, relative, error);

  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Template directory entry “%s” is a %s; only regular files, directories and "
               "symbolic links can be imported", relative, describe_special (st.st_mode));
  return FALSE;
}

static gboolean
import_directory (Import      *import,
                  int          dir_fd,
                  const char  *prefix,
                  guint        depth,
                  gboolean    *empty,
                  GError     **error)
{
  int list_fd = dup (dir_fd);
  DIR *dir;
  struct dirent *entry;
  gboolean ok = TRUE;

  if (list_fd < 0 || (dir = fdopendir (list_fd)) == NULL)
    {
      int saved_errno = errno;

      if (list_fd >= 0)
        close (list_fd);
      return set_io_error_from_errno (error, saved_errno, "list", prefix ? prefix : ".");
    }

  *empty = TRUE;
  while (ok && (errno = 0, entry = readdir (dir)) != NULL)
    {
      g_autofree char *relative = NULL;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      *empty = FALSE;
      if (g_cancellable_set_error_if_cancelled (import->cancellable, error))
        {
          ok = FALSE;
          break;
        }

      relative = prefix != NULL ? g_strconcat (prefix, "/", entry->d_name, NULL)
                                : g_strdup (entry->d_name);
      ok = import_entry (import, dir_fd, entry->d_name, relative, depth, error);
    }

  if (ok && errno != 0)
    ok = set_io_error_from_errno (error, errno, "list", prefix ? prefix : ".");

  closedir (dir);
  return ok;
}

/**
 * sandbox_template_add_directory:
 * @self: a [class@Sandbox.Template]
 * @directory: a local directory on the host
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * Adds the tree below @directory, at the same relative paths in the
 * workspace, as a checkout needs it:
 *
 * - regular files, executable (mode 0755 in workspaces) if any of their
 *   execute bits is set, plain (0644) otherwise, as git normalises modes;
 * - symbolic links as links, their targets verbatim: never followed, so a
 *   link to `/etc/shadow` is a link in the template, and nothing is read
 *   through it, here or later;
 * - empty directories.
 *
 * Hard links become independent files; ownership, other mode bits,
 * timestamps and extended attributes are not kept. A FIFO, socket or device
 * anywhere in the tree is refused with %SANDBOX_ERROR_INVALID naming it
 * (without opening it), as is an entry swapped for another kind while the
 * tree is read. Every name must form a canonical workspace path
 * (%SANDBOX_ERROR_PATH otherwise), directories may nest 256 deep, and an
 * entry that clashes with one the template has is refused as
 * [method@Sandbox.Template.add_file_full] refuses it. On failure the template
 * is left as it was.
 *
 * The files' contents are not held in memory, nor read here: each file's
 * inode, size and times are recorded, and it is read once, when a backend
 * stores the template (hashed as it is copied, so what is stored is what
 * the key covers) or when [method@Sandbox.Template.compute_key] needs its
 * digest. A file that is no longer the one recorded then fails with
 * %G_IO_ERROR_WRONG_ETAG (see [method@Sandbox.Template.read_file]). A file
 * changed too recently for its times to tell a later change (within a few
 * milliseconds of the import, or a few seconds on a file system with
 * whole-second times) is hashed here, and later checked against that
 * digest. So @directory must stay in place, unchanged, until the template
 * is stored; the template keeps a descriptor of it open until it is
 * finalized.
 *
 * This reads the whole tree (its directories, and recently changed files)
 * synchronously; call it from a worker thread for large trees.
 *
 * Returns: %TRUE on success; %FALSE with @error set
 */
gboolean
sandbox_template_add_directory (SandboxTemplate  *self,
                                GFile            *directory,
                                GCancellable     *cancellable,
                                GError          **error)
{
  g_autoptr(GPtrArray) added = NULL;
  g_autoptr(SandboxTemplateSource) source = NULL;
  g_autofree char *path = NULL;
  g_autofree guint8 *buffer = NULL;
  Import import;
  gboolean empty;
  gboolean ok;
  int dir_fd;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), FALSE);
  g_return_val_if_fail (G_IS_FILE (directory), FALSE);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  path = g_file_get_path (directory);
  if (path == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                           "A template can only be imported from a local directory");
      return FALSE;
    }

  dir_fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open template directory “%s”: %s", path, g_strerror (saved_errno));
      return FALSE;
    }

  /* The source owns dir_fd: the files are opened beneath it again later. */
  source = sandbox_template_source_new (dir_fd, path);
  added = g_ptr_array_new_with_free_func (g_free);
  buffer = g_malloc (IMPORT_BUFFER_SIZE);
  import = (Import) { self, source, cancellable, buffer, added, g_get_real_time () };
  ok = import_directory (&import, dir_fd, NULL, 0, &empty, error);

  if (!ok)
    for (guint i = added->len; i > 0; i--)
      sandbox_template_remove_entry (self, added->pdata[i - 1]);

  return ok;
}
