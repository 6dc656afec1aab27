/* sandbox-runtime-key.c — a runtime tree's content address
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The key is the SHA-256, in 64 lowercase hex digits, of this
 * serialisation of the tree:
 *
 *   "sandbox-runtime-key 1\n"
 *   then one record per entry below the root (the root itself has none),
 *   in a pre-order walk where each directory's entries come in strcmp()
 *   order of their names (bytes, not locale), so readdir() order does not
 *   matter:
 *
 *     TYPE ' ' MODE ' ' LEN ':' PATH ' ' PAYLOAD '\n'
 *
 *   TYPE is 'd' (directory), 'f' (regular file) or 'l' (symbolic link);
 *   MODE the permission bits in four octal digits (07777 masked; a tree
 *   unpacked here only has 0777 and a directory's sticky bit); PATH the
 *   entry's path from the root, components joined by '/', LEN its length
 *   in bytes in decimal. PAYLOAD is "-" for a directory, the lowercase hex
 *   SHA-256 of the contents for a file, LEN ':' TARGET for a link (its
 *   target text verbatim). A file with several links is a file at each of
 *   its paths, so a hard link and a copy give the same key.
 *
 * Lengths before the variable parts keep two different trees from ever
 * serialising alike. Owners, times and extended attributes are not part of
 * it: the unpackers do not keep them. Device nodes, FIFOs and sockets have
 * no record: a tree holding one is refused (the unpackers never make one).
 * Nothing is followed: entries are inspected with AT_SYMLINK_NOFOLLOW and
 * opened through an O_NOFOLLOW descriptor.
 *
 * A tree may hold files and directories whose mode keeps even their owner
 * out (a Fedora image's /etc/shadow is 0000). Root reads them regardless;
 * any other user, if the entry is its own (an unpacked tree is), gets owner
 * read (and search, for a directory) added while it reads the entry, and
 * the mode given back after, so the key sees the tree's own modes. The
 * change is made on the inode an O_PATH descriptor holds (through
 * /proc/self/fd), never through a path that could have been swapped.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-digest-private.h"
#include "sandbox-error.h"
#include "sandbox-runtime-unpack-private.h"
#include "sandbox-workspace-private.h"

#define KEY_VERSION_LINE "sandbox-runtime-key 1\n"
#define READ_BUFFER_SIZE (64 * 1024)

/* No mode to give back. */
#define NO_RESTORE ((mode_t) -1)

typedef struct
{
  SandboxDigest *tree;
  GCancellable  *cancellable;
  guint8        *buffer;   /* READ_BUFFER_SIZE */
  GString       *record;
} KeyWalk;

/*
 * open_for_reading:
 * @dir_fd: the directory holding @name
 * @name: a file or directory of the tree
 * @directory: which of the two @name must be
 * @restore: (out): the mode to give back once read, or NO_RESTORE
 *
 * Returns: a descriptor to read @name with, or -1 with errno set
 */
static int
open_for_reading (int          dir_fd,
                  const char  *name,
                  gboolean     directory,
                  mode_t      *restore)
{
  mode_t needed = directory ? S_IRUSR | S_IXUSR : S_IRUSR;
  g_auto(SandboxWorkspaceFd) path_fd = -1;
  char proc_path[64];
  struct stat st;
  int fd;

  *restore = NO_RESTORE;
  path_fd = openat (dir_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (path_fd < 0 || fstat (path_fd, &st) < 0)
    return -1;
  if (directory ? !S_ISDIR (st.st_mode) : !S_ISREG (st.st_mode))
    {
      errno = EINVAL;
      return -1;
    }
  g_snprintf (proc_path, sizeof proc_path, "/proc/self/fd/%d", path_fd);
  if ((st.st_mode & needed) != needed && geteuid () != 0 && st.st_uid == geteuid ())
    {
      if (chmod (proc_path, (st.st_mode & 07777) | needed) < 0)
        return -1;
      *restore = st.st_mode & 07777;
    }

  /* The inode path_fd holds, whatever its name points at by now. */
  fd = open (proc_path, O_RDONLY | O_NOCTTY | O_CLOEXEC | (directory ? O_DIRECTORY : O_NONBLOCK));
  if (fd < 0 && *restore != NO_RESTORE)
    {
      int saved_errno = errno;

      chmod (proc_path, *restore);
      *restore = NO_RESTORE;
      errno = saved_errno;
    }
  return fd;
}

/* Gives @fd back the mode open_for_reading() widened. */
static gboolean
restore_mode (int          fd,
              mode_t       restore,
              const char  *path,
              GError     **error)
{
  if (restore != NO_RESTORE && fchmod (fd, restore) < 0)
    return sandbox_runtime_set_errno_error (error, errno, "give back the mode of", path);
  return TRUE;
}

static gint
compare_names (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* The names in a directory, sorted. */
static GPtrArray *
list_sorted (int          dir_fd,
             const char  *path,
             GError     **error)
{
  g_autofree guint8 *buffer = g_malloc (SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  SandboxWorkspaceDirents dirents;
  struct dirent64 *entry;

  sandbox_workspace_dirents_init (&dirents, dir_fd, buffer);
  while (TRUE)
    {
      if (!sandbox_workspace_dirents_next (&dirents, &entry))
        {
          sandbox_runtime_set_errno_error (error, errno, "list", path);
          return NULL;
        }
      if (entry == NULL)
        break;
      g_ptr_array_add (names, g_strdup (entry->d_name));
    }
  g_ptr_array_sort (names, compare_names);
  return g_steal_pointer (&names);
}

static char *
file_digest (KeyWalk     *walk,
             int          dir_fd,
             const char  *name,
             const char  *path,
             GError     **error)
{
  g_autoptr(SandboxDigest) digest = sandbox_digest_new ();
  g_auto(SandboxWorkspaceFd) fd = -1;
  mode_t restore;

  fd = open_for_reading (dir_fd, name, FALSE, &restore);
  if (fd < 0)
    {
      sandbox_runtime_set_errno_error (error, errno, "open", path);
      return NULL;
    }

  while (TRUE)
    {
      ssize_t n = TEMP_FAILURE_RETRY (read (fd, walk->buffer, READ_BUFFER_SIZE));

      if (n < 0)
        {
          sandbox_runtime_set_errno_error (error, errno, "read", path);
          restore_mode (fd, restore, path, NULL);
          return NULL;
        }
      if (n == 0)
        break;
      sandbox_digest_update (digest, walk->buffer, n);
    }

  if (!restore_mode (fd, restore, path, error))
    return NULL;
  return sandbox_digest_finish_hex (digest);
}

static void
append_counted (GString    *out,
                const char *text)
{
  g_string_append_printf (out, "%zu:%s", strlen (text), text);
}

static gboolean walk_directory (KeyWalk     *walk,
                                int          dir_fd,
                                const char  *prefix,
                                guint        depth,
                                GError     **error);

static gboolean
walk_entry (KeyWalk     *walk,
            int          dir_fd,
            const char  *name,
            const char  *path,
            guint        depth,
            GError     **error)
{
  struct stat st;
  GString *record = walk->record;
  g_auto(SandboxWorkspaceFd) child_fd = -1;
  mode_t restore;

  if (g_cancellable_set_error_if_cancelled (walk->cancellable, error))
    return FALSE;
  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return sandbox_runtime_set_errno_error (error, errno, "inspect", path);

  g_string_truncate (record, 0);
  if (S_ISDIR (st.st_mode))
    g_string_append_c (record, 'd');
  else if (S_ISREG (st.st_mode))
    g_string_append_c (record, 'f');
  else if (S_ISLNK (st.st_mode))
    g_string_append_c (record, 'l');
  else
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Runtime tree holds ‘%s’, neither a directory, a file nor a link", path);
      return FALSE;
    }
  g_string_append_printf (record, " %04o ", (unsigned) (st.st_mode & 07777));
  append_counted (record, path);
  g_string_append_c (record, ' ');

  if (S_ISREG (st.st_mode))
    {
      g_autofree char *hex = file_digest (walk, dir_fd, name, path, error);

      if (hex == NULL)
        return FALSE;
      g_string_append (record, hex);
    }
  else if (S_ISLNK (st.st_mode))
    {
      char target[PATH_MAX + 1];
      ssize_t n = readlinkat (dir_fd, name, target, sizeof target);

      if (n < 0 || n > PATH_MAX)
        return sandbox_runtime_set_errno_error (error, n < 0 ? errno : ENAMETOOLONG, "read the link", path);
      target[n] = '\0';
      append_counted (record, target);
    }
  else
    g_string_append_c (record, '-');
  g_string_append_c (record, '\n');
  sandbox_digest_update (walk->tree, record->str, record->len);

  if (!S_ISDIR (st.st_mode))
    return TRUE;

  if (depth >= SANDBOX_RUNTIME_MAX_DEPTH)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                   "Runtime directories nest deeper than %d levels, at ‘%s’",
                   SANDBOX_RUNTIME_MAX_DEPTH, path);
      return FALSE;
    }
  child_fd = open_for_reading (dir_fd, name, TRUE, &restore);
  if (child_fd < 0)
    return sandbox_runtime_set_errno_error (error, errno, "open", path);
  if (!walk_directory (walk, child_fd, path, depth + 1, error))
    {
      restore_mode (child_fd, restore, path, NULL);
      return FALSE;
    }
  return restore_mode (child_fd, restore, path, error);
}

static gboolean
walk_directory (KeyWalk     *walk,
                int          dir_fd,
                const char  *prefix,
                guint        depth,
                GError     **error)
{
  g_autoptr(GPtrArray) names = list_sorted (dir_fd, prefix[0] != '\0' ? prefix : ".", error);

  if (names == NULL)
    return FALSE;

  for (guint i = 0; i < names->len; i++)
    {
      const char *name = g_ptr_array_index (names, i);
      g_autofree char *path = prefix[0] != '\0' ? g_strconcat (prefix, "/", name, NULL) : g_strdup (name);

      if (!walk_entry (walk, dir_fd, name, path, depth, error))
        return FALSE;
    }

  return TRUE;
}

/**
 * sandbox_runtime_compute_key:
 * @tree_dirfd: the root of an unpacked runtime tree
 * @cancellable: (nullable): checked between entries
 * @error: return location for a #GError
 *
 * Computes the content address of the tree, as the comment at the top of
 * sandbox-runtime-key.c serialises it: the same tree gives the same key
 * whether it was unpacked from a directory or from an OCI layout.
 *
 * Returns: (transfer full) (nullable): 64 lowercase hex digits, or %NULL
 *   with @error set
 */
char *
sandbox_runtime_compute_key (int            tree_dirfd,
                             GCancellable  *cancellable,
                             GError       **error)
{
  g_autoptr(SandboxDigest) tree = sandbox_digest_new ();
  g_autofree guint8 *buffer = g_malloc (READ_BUFFER_SIZE);
  g_autoptr(GString) record = g_string_new (NULL);
  g_auto(SandboxWorkspaceFd) root_fd = -1;
  KeyWalk walk = { tree, cancellable, buffer, record };

  root_fd = openat (tree_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0)
    {
      sandbox_runtime_set_errno_error (error, errno, "open", ".");
      return NULL;
    }

  sandbox_digest_update (tree, KEY_VERSION_LINE, strlen (KEY_VERSION_LINE));
  if (!walk_directory (&walk, root_fd, "", 0, error))
    return NULL;
  return sandbox_digest_finish_hex (tree);
}
