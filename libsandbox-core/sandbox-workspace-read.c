/* sandbox-workspace-read.c — reading and listing a hostile workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Reads open with O_NONBLOCK and insist on a regular file, so a FIFO or a
 * socket never blocks the host, and are bounded whatever st_size claims.
 * Listings examine entries with fstatat(AT_SYMLINK_NOFOLLOW) on the
 * directory fd, so a link is reported, never followed.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-workspace-private.h"

/*
 * read_bounded:
 * @fd: a regular file open for reading
 * @size_hint: the file's size according to fstat()
 * @max_bytes: the most bytes the caller accepts
 * @relative: the workspace-relative path, for messages
 * @error: return location for a #GError
 *
 * Reads @fd to its end, but never more than @max_bytes + 1 bytes: the guest
 * may grow the file after fstat(), and one byte past the bound is enough to
 * know it is over.
 *
 * Returns: (transfer full): the contents, or %NULL with @error set
 */
static GBytes *
read_bounded (int          fd,
              gsize        size_hint,
              gsize        max_bytes,
              const char  *relative,
              GError     **error)
{
  gsize capacity = MIN (size_hint, max_bytes) + 1;
  gsize length = 0;
  g_autofree guint8 *buffer = g_malloc (capacity);

  while (TRUE)
    {
      ssize_t n;

      if (length == capacity)
        {
          if (capacity > max_bytes)
            {
              sandbox_set_error_read_limit (error);
              return NULL;
            }
          /* The file grew since fstat(): keep going up to the bound. */
          capacity = MIN (MAX (capacity * 2, 4096), max_bytes + 1);
          buffer = g_realloc (buffer, capacity);
        }

      n = read (fd, buffer + length, capacity - length);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          sandbox_workspace_set_errno_error (error, errno, "read", relative);
          return NULL;
        }
      if (n == 0)
        break;
      length += n;
    }

  if (length > max_bytes)
    {
      sandbox_set_error_read_limit (error);
      return NULL;
    }

  return g_bytes_new_take (g_steal_pointer (&buffer), length);
}

/* Reports a failed open for reading: opening a socket fails with ENXIO,
 * which says what it is. */
gboolean
sandbox_workspace_set_read_open_error (GError     **error,
                                       int          saved_errno,
                                       const char  *relative)
{
  if (saved_errno == ENXIO)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                   "Cannot read ‘%s’: not a regular file", relative);
      return FALSE;
    }
  return sandbox_workspace_set_errno_error (error, saved_errno, "read", relative);
}

/*
 * sandbox_workspace_read_opened:
 * @fd: what a read opened (O_RDONLY | O_NONBLOCK, never a link)
 * @max_bytes: the largest file accepted
 * @relative: the workspace-relative path, for messages
 * @error: return location for a #GError
 *
 * Insists on a regular file no larger than @max_bytes and reads it, bounded
 * whatever it grows to meanwhile.
 *
 * Returns: (transfer full): the contents, or %NULL with @error set
 */
GBytes *
sandbox_workspace_read_opened (int          fd,
                               gsize        max_bytes,
                               const char  *relative,
                               GError     **error)
{
  struct stat st;

  if (fstat (fd, &st) < 0)
    {
      sandbox_workspace_set_errno_error (error, errno, "read", relative);
      return NULL;
    }

  if (S_ISDIR (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY,
                   "Cannot read ‘%s’: it is a directory", relative);
      return NULL;
    }

  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_REGULAR_FILE,
                   "Cannot read ‘%s’: not a regular file", relative);
      return NULL;
    }

  if (st.st_size < 0 || (guint64) st.st_size > max_bytes)
    {
      sandbox_set_error_read_limit (error);
      return NULL;
    }

  return read_bounded (fd, st.st_size, max_bytes, relative, error);
}

/**
 * sandbox_workspace_read:
 * @self: a workspace
 * @relative: a canonical workspace-relative path
 * @max_bytes: the largest file accepted
 * @error: return location for a #GError
 *
 * Reads a whole regular file of the workspace. Symbolic links that stay
 * inside the workspace are followed; any way out is %SANDBOX_ERROR_PATH.
 * A directory is %G_IO_ERROR_IS_DIRECTORY, a FIFO, socket or device
 * %G_IO_ERROR_NOT_REGULAR_FILE (without blocking), a missing file
 * %G_IO_ERROR_NOT_FOUND and a file over @max_bytes %SANDBOX_ERROR_LIMIT.
 *
 * Returns: (transfer full): the contents, or %NULL with @error set
 */
GBytes *
sandbox_workspace_read (SandboxWorkspace  *self,
                        const char        *relative,
                        gsize              max_bytes,
                        GError           **error)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (max_bytes < G_MAXSIZE, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!sandbox_workspace_check_relative (relative, error))
    return NULL;
  return self->ops->read (self, relative, max_bytes, error);
}

/* The read of a plain workspace: what sandbox_workspace_read() says. */
GBytes *
sandbox_workspace_plain_read (SandboxWorkspace  *self,
                              const char        *relative,
                              gsize              max_bytes,
                              GError           **error)
{
  g_auto(SandboxWorkspaceFd) fd = -1;

  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. */
  fd = sandbox_workspace_open_beneath (self->fd, relative, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
  if (fd < 0)
    {
      sandbox_workspace_set_read_open_error (error, errno, relative);
      return NULL;
    }

  return sandbox_workspace_read_opened (fd, max_bytes, relative, error);
}

const char *
sandbox_workspace_entry_type_name (mode_t mode)
{
  if (S_ISREG (mode))
    return "file";
  if (S_ISDIR (mode))
    return "directory";
  if (S_ISLNK (mode))
    return "symlink";
  return "other";
}

/**
 * sandbox_workspace_list:
 * @self: a workspace
 * @relative: a canonical workspace-relative directory path, or "."
 * @max_entries: the most entries to return, at least 1
 * @truncated: (out): set to whether entries were left out
 * @error: return location for a #GError
 *
 * Lists a directory of the workspace. The directory itself is resolved
 * beneath the root (symbolic links that stay inside are followed, any way
 * out is %SANDBOX_ERROR_PATH); its entries are examined with
 * fstatat(AT_SYMLINK_NOFOLLOW) on the directory fd, so a symbolic link is
 * reported as "symlink" with its own size and never followed. Entries that
 * vanish while listing are skipped; names that are not UTF-8 are shown with
 * U+FFFD. A file is %G_IO_ERROR_NOT_DIRECTORY.
 *
 * Returns: (transfer full): a non-floating `a(sst)` #GVariant of
 *   (name, type, size), or %NULL with @error set
 */
GVariant *
sandbox_workspace_list (SandboxWorkspace  *self,
                        const char        *relative,
                        guint              max_entries,
                        gboolean          *truncated,
                        GError           **error)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (max_entries > 0, NULL);
  g_return_val_if_fail (truncated != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  *truncated = FALSE;
  if (!sandbox_workspace_check_relative (relative, error))
    return NULL;
  return self->ops->list (self, relative, max_entries, truncated, error);
}

/* The listing of a plain workspace: what sandbox_workspace_list() says. */
GVariant *
sandbox_workspace_plain_list (SandboxWorkspace  *self,
                              const char        *relative,
                              guint              max_entries,
                              gboolean          *truncated,
                              GError           **error)
{
  g_auto(SandboxWorkspaceFd) fd = -1;
  g_autofree guint8 *buffer = NULL;
  SandboxWorkspaceDirents dirents;
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sst)"));
  guint count = 0;

  /* O_DIRECTORY: a FIFO or socket fails at once instead of blocking. */
  fd = sandbox_workspace_open_beneath (self->fd, relative,
                                       O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_NOCTTY, 0);
  if (fd < 0)
    {
      sandbox_workspace_set_errno_error (error, errno, "list", relative);
      return NULL;
    }

  buffer = g_malloc (SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE);
  sandbox_workspace_dirents_init (&dirents, fd, buffer);
  while (TRUE)
    {
      struct dirent64 *entry;
      g_autofree char *name = NULL;
      struct stat st;

      if (!sandbox_workspace_dirents_next (&dirents, &entry))
        {
          sandbox_workspace_set_errno_error (error, errno, "list", relative);
          return NULL;
        }
      if (entry == NULL)
        break;
      if (fstatat (fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;   /* removed meanwhile */
      if (count == max_entries)
        {
          *truncated = TRUE;
          return g_variant_ref_sink (g_variant_builder_end (&builder));
        }

      name = g_utf8_make_valid (entry->d_name, -1);
      g_variant_builder_add (&builder, "(sst)", name, sandbox_workspace_entry_type_name (st.st_mode),
                             (guint64) MAX (st.st_size, 0));
      count++;
    }

  return g_variant_ref_sink (g_variant_builder_end (&builder));
}
