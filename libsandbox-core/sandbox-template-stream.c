/* sandbox-template-stream.c — an imported file, read again and checked
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A template imported from a host directory records each file's size and
 * SHA-256 but not its bytes. When a backend stores the template, this
 * stream reads the file again and hashes what it returns; at the end it
 * compares, and a file that changed since it was imported fails the read
 * that would have returned end-of-file. More bytes than recorded fail as
 * soon as they are read. The file is opened beneath the imported directory
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

#define SANDBOX_TYPE_TEMPLATE_FILE_STREAM (sandbox_template_file_stream_get_type ())
G_DECLARE_FINAL_TYPE (SandboxTemplateFileStream, sandbox_template_file_stream,
                      SANDBOX, TEMPLATE_FILE_STREAM, GInputStream)

struct _SandboxTemplateFileStream
{
  GInputStream parent_instance;

  int fd;
  char *canonical;      /* for messages */
  char *digest;         /* what the contents must hash to */
  guint64 size;         /* and their size */
  guint64 read;
  SandboxDigest *hash;  /* of what was read so far; NULL once checked */
  SandboxTemplate *owner;  /* reported to */
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

/* At end-of-file: whether what was read is what was imported. */
static gboolean
check_complete (SandboxTemplateFileStream  *self,
                GError                    **error)
{
  g_autofree char *digest = NULL;

  if (self->hash == NULL)
    return TRUE;
  digest = sandbox_digest_finish_hex (self->hash);
  g_clear_pointer (&self->hash, sandbox_digest_free);
  if (self->read != self->size || !g_str_equal (digest, self->digest))
    return set_changed_error (self, error);
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
  if (self->hash == NULL || self->read + n > self->size)
    return set_changed_error (self, error), -1;

  sandbox_digest_update (self->hash, buffer, n);
  self->read += n;
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
  g_free (self->digest);
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
  self->digest = g_strdup (entry->digest);
  self->size = entry->size;
  self->hash = sandbox_digest_new ();
  self->owner = g_object_ref (owner);
  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      set_changed_error (self, error);
      return NULL;
    }
  return G_INPUT_STREAM (g_steal_pointer (&self));
}
