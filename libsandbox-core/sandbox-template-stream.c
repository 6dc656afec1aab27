/* sandbox-template-stream.c — an imported file, read and checked
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A template imported from a host directory records each file's size and
 * stamp (sandbox-template-import.c), or, for a file changed too recently
 * for a stamp, its SHA-256, but not its bytes. When a backend stores the
 * template, this stream reads the file and hashes what it returns. A file
 * whose stamp differs (another inode, size or time) fails at its opening;
 * more bytes than recorded fail as soon as they are read; at the end, fewer
 * bytes, or a digest other than one known from the import or an earlier
 * read, fail the read that would have returned end-of-file. Otherwise the
 * digest of a first read becomes the file's: the bytes the caller got are
 * exactly the ones hashed, so a backend that keeps them only after a clean
 * end stores content its key covers, whatever the host did meanwhile, in
 * one pass over the file. The file is opened beneath the imported directory
 * with openat2() and RESOLVE_NO_SYMLINKS (or, where the kernel lacks it, a
 * component at a time with O_NOFOLLOW), so a component swapped for a link
 * since the import is refused rather than followed, and with O_NONBLOCK and
 * a check on the descriptor, so something that is no longer a regular file
 * never blocks or is read.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-digest-private.h"
#include "sandbox-template-private.h"

#define READ_BUFFER_SIZE (64 * 1024)

#define SANDBOX_TYPE_TEMPLATE_FILE_STREAM (sandbox_template_file_stream_get_type ())
G_DECLARE_FINAL_TYPE (SandboxTemplateFileStream, sandbox_template_file_stream,
                      SANDBOX, TEMPLATE_FILE_STREAM, GInputStream)

struct _SandboxTemplateFileStream
{
  GInputStream parent_instance;

  int fd;
  char *canonical;      /* for messages */
  SandboxTemplateEntry *entry;  /* owner's: its size and digest (NULL if unread) */
  guint64 read;
  gboolean at_end;      /* a short read reached the recorded size */
  SandboxDigest *hash;  /* of what was read so far; NULL once checked */
  SandboxTemplate *owner;  /* keeps entry; reported to, unless NULL */
};

G_DEFINE_FINAL_TYPE (SandboxTemplateFileStream, sandbox_template_file_stream, G_TYPE_INPUT_STREAM)

static gboolean
set_changed_error (SandboxTemplateFileStream  *self,
                   GError                    **error)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG,
               "Template file %s changed on the host since it was imported", self->canonical);
  return FALSE;
}

/* Makes @digest (taken) the entry's if it has none yet; otherwise says
 * whether it is the one it has. Two readers may race here: one sets it,
 * the other compares with it. */
static gboolean
settle_digest (SandboxTemplateFileStream *self,
               char                      *digest)
{
  const char *known;
  gboolean same;

  if (g_atomic_pointer_compare_and_exchange (&self->entry->digest, NULL, digest))
    return TRUE;
  known = g_atomic_pointer_get (&self->entry->digest);
  same = g_str_equal (known, digest);
  g_free (digest);
  return same;
}

/* At end-of-file: whether what was read is what was imported. */
static gboolean
check_complete (SandboxTemplateFileStream  *self,
                GError                    **error)
{
  char *digest;

  if (self->hash == NULL)
    return TRUE;
  digest = sandbox_digest_finish_hex (self->hash);
  g_clear_pointer (&self->hash, sandbox_digest_free);
  if (self->read != self->entry->size)
    {
      g_free (digest);
      return set_changed_error (self, error);
    }
  if (!settle_digest (self, digest))
    return set_changed_error (self, error);
  if (self->owner != NULL)
    sandbox_template_report_progress (self->owner, 0, TRUE);
  return TRUE;
}

static gssize
sandbox_template_file_stream_read (GInputStream  *stream,
                                   void          *buffer,
                                   gsize          count,
                                   GCancellable  *cancellable,
                                   GError       **error)
{
  SandboxTemplateFileStream *self = SANDBOX_TEMPLATE_FILE_STREAM (stream);
  gssize n;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return -1;
  if (self->at_end)
    return check_complete (self, error) ? 0 : -1;
  do
    n = read (self->fd, buffer, count);
  while (n < 0 && errno == EINTR);

  if (n < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not read template file %s: %s", self->canonical,
                   g_strerror (saved_errno));
      return -1;
    }
  if (n == 0)
    return check_complete (self, error) ? 0 : -1;
  if (self->hash == NULL || self->read + n > self->entry->size)
    return set_changed_error (self, error), -1;

  sandbox_digest_update (self->hash, buffer, n);
  self->read += n;
  /* A regular file reads short only at its end: one that reached the size
   * it had is complete, without a read(2) to see 0 (one system call per
   * file; a file growing after this moment was read as it was). */
  self->at_end = (gsize) n < count && self->read == self->entry->size;
  if (self->owner != NULL)
    sandbox_template_report_progress (self->owner, n, FALSE);
  return n;
}

static gboolean
sandbox_template_file_stream_close (GInputStream  *stream,
                                    GCancellable  *cancellable,
                                    GError       **error)
{
  SandboxTemplateFileStream *self = SANDBOX_TEMPLATE_FILE_STREAM (stream);

  if (self->fd >= 0)
    close (self->fd);
  self->fd = -1;
  return TRUE;
}

static void
sandbox_template_file_stream_finalize (GObject *object)
{
  SandboxTemplateFileStream *self = SANDBOX_TEMPLATE_FILE_STREAM (object);

  if (self->fd >= 0)
    close (self->fd);
  g_free (self->canonical);
  g_clear_pointer (&self->hash, sandbox_digest_free);
  g_clear_object (&self->owner);

  G_OBJECT_CLASS (sandbox_template_file_stream_parent_class)->finalize (object);
}

static void
sandbox_template_file_stream_class_init (SandboxTemplateFileStreamClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GInputStreamClass *stream_class = G_INPUT_STREAM_CLASS (klass);

  object_class->finalize = sandbox_template_file_stream_finalize;
  stream_class->read_fn = sandbox_template_file_stream_read;
  stream_class->close_fn = sandbox_template_file_stream_close;
}

static void
sandbox_template_file_stream_init (SandboxTemplateFileStream *self)
{
  self->fd = -1;
}

/* The same resolution without openat2() (Linux before 5.6, or valgrind
 * 3.19, which answers ENOSYS): one component at a time, each opened with
 * O_NOFOLLOW relative to the directory before it, so a link anywhere on
 * the path fails with ELOOP as it does above. @relative comes from the
 * import's own walk: it has no "..", no "." and no empty component. */
static int
open_beneath_by_components (int         root_fd,
                            const char *relative)
{
  g_auto(GStrv) names = g_strsplit (relative, "/", -1);
  int dir_fd = root_fd;
  int fd = -1;

  for (guint i = 0; names[i] != NULL; i++)
    {
      gboolean last = names[i + 1] == NULL;
      int flags = last ? O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC
                       : O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

      do
        fd = openat (dir_fd, names[i], flags);
      while (fd < 0 && errno == EINTR);
      /* O_PATH | O_NOFOLLOW opens a link itself rather than failing, and
       * O_DIRECTORY then refuses it with ENOTDIR: say ELOOP, as openat2()
       * would have. */
      if (fd < 0 && errno == ENOTDIR && !last)
        {
          struct stat st;

          if (fstatat (dir_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (st.st_mode))
            errno = ELOOP;
        }
      if (dir_fd != root_fd)
        {
          int saved_errno = errno;

          close (dir_fd);
          errno = saved_errno;
        }
      if (fd < 0)
        return -1;
      dir_fd = fd;
    }
  return fd;
}

/* Opens @relative beneath @root_fd without following any symbolic link,
 * magic link or "..". */
static int
open_beneath (int         root_fd,
              const char *relative)
{
  struct open_how how = {
    .flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
  };
  int fd;

  do
    fd = syscall (SYS_openat2, root_fd, relative, &how, sizeof how);
  while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  if (fd < 0 && errno == ENOSYS)
    return open_beneath_by_components (root_fd, relative);
  return fd;
}

static gboolean
same_time (const struct timespec *a,
           const struct timespec *b)
{
  return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* Whether the open file @st is still the one the import inspected. */
static gboolean
matches_stamp (const SandboxTemplateEntry *entry,
               const struct stat          *st)
{
  const SandboxTemplateFileStamp *stamp = &entry->stamp;

  return !entry->stamped ||
         (st->st_dev == stamp->dev && st->st_ino == stamp->ino &&
          (guint64) st->st_size == entry->size &&
          same_time (&st->st_mtim, &stamp->mtime) && same_time (&st->st_ctim, &stamp->ctime));
}

GInputStream *
sandbox_template_file_stream_new (SandboxTemplate       *owner,
                                  SandboxTemplateEntry  *entry,
                                  const char            *canonical,
                                  GError               **error)
{
  g_autoptr(SandboxTemplateFileStream) self = NULL;
  struct stat st;
  int fd;

  fd = open_beneath (entry->source->root_fd, entry->source_path);
  if (fd < 0)
    {
      int saved_errno = errno;

      if (saved_errno == ELOOP || saved_errno == EXDEV)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_WRONG_ETAG,
                       "Template file %s changed on the host since it was imported "
                       "(a symbolic link is in its way)", canonical);
          return NULL;
        }
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open template file %s (%s/%s): %s", canonical,
                   entry->source->root_path, entry->source_path, g_strerror (saved_errno));
      return NULL;
    }

  self = g_object_new (SANDBOX_TYPE_TEMPLATE_FILE_STREAM, NULL);
  self->fd = fd;
  self->canonical = g_strdup (canonical);
  self->entry = entry;
  self->hash = sandbox_digest_new ();
  self->owner = owner != NULL ? g_object_ref (owner) : NULL;
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode) || !matches_stamp (entry, &st))
    {
      set_changed_error (self, error);
      return NULL;
    }
  return G_INPUT_STREAM (g_steal_pointer (&self));
}

/* Reads the file of @entry to its end, which settles its digest. */
static gboolean
read_to_end (SandboxTemplateEntry  *entry,
             const char            *canonical,
             guint8                *buffer,
             gsize                  size,
             GError               **error)
{
  g_autoptr(GInputStream) stream = sandbox_template_file_stream_new (NULL, entry, canonical,
                                                                     error);
  gssize n;

  if (stream == NULL)
    return FALSE;
  while ((n = g_input_stream_read (stream, buffer, size, NULL, error)) > 0)
    ;
  return n == 0;
}

/* For a key without a store (sandbox_template_compute_key() called first):
 * a pass that only hashes. Not progress: no backend is storing the files. */
gboolean
sandbox_template_read_unread_files (SandboxTemplate  *self,
                                    GError          **error)
{
  g_auto(GStrv) paths = sandbox_template_list_paths (self);
  g_autofree guint8 *buffer = NULL;

  for (guint i = 0; paths[i] != NULL; i++)
    {
      SandboxTemplateEntry *entry = sandbox_template_lookup_entry (self, paths[i]);

      if (entry->type != G_FILE_TYPE_REGULAR || g_atomic_pointer_get (&entry->digest) != NULL)
        continue;
      if (buffer == NULL)
        buffer = g_malloc (READ_BUFFER_SIZE);
      if (!read_to_end (entry, paths[i], buffer, READ_BUFFER_SIZE, error))
        return FALSE;
    }
  return TRUE;
}
