/* sandbox-workspace-overlay.c — the host's merged view of an overlay workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A layered workspace is what overlayfs makes of two directories inside the
 * sandbox: the lower layer (a template's data, shared and never written)
 * and the upper layer (the session's own, which the guest controls
 * completely). The host does not mount anything: it computes the same
 * merged view itself, by the rules of Documentation/filesystems/overlayfs.rst
 * with `userxattr`, `redirect_dir=nofollow`, `metacopy=off`:
 *
 *  - a name in the upper layer hides the same name in the lower one, except
 *    that an upper directory over a lower directory merges with it;
 *  - a whiteout (a 0/0 character device) in the upper layer hides the name
 *    and is itself invisible;
 *  - an upper directory with the xattr `user.overlay.opaque` = "y" hides the
 *    lower directory it would merge with (the workspace root is never
 *    opaque);
 *  - redirects and metacopy are off: their xattrs mean nothing here.
 *
 * Containment is the plain workspace's (sandbox-workspace.h), by other
 * means: openat2() cannot resolve across two trees, so the walk is done
 * here, one component at a time, each opened with O_NOFOLLOW on a
 * directory fd that itself came from this walk, starting at the two roots.
 * Symbolic links (in either layer) are never followed by the kernel: their
 * target is read and walked in the merged view, ".." popping the walk's
 * own stack, so an absolute target or a ".." above the root is
 * %SANDBOX_ERROR_PATH, as RESOLVE_BENEATH would have it, and at most
 * MAX_LINKS of them are followed (ELOOP, the kernel's 40).
 *
 * Changes go to the upper layer only, as overlayfs makes them:
 *
 *  - a write creates the missing directories of its parent in the upper
 *    layer (a lower directory is "copied up": an upper directory of the
 *    same mode; a name a whiteout hid becomes an opaque directory, put in
 *    place of the whiteout by RENAME_EXCHANGE) and then writes the file
 *    there exactly as a plain workspace does (sandbox_workspace_replace_file():
 *    O_TMPFILE, link or exchange), keeping the mode of the lower file it
 *    shadows;
 *  - a removal removes the upper entry, if any, and where the lower layer
 *    has the name leaves a whiteout instead, atomically: the whiteout is
 *    made under a temporary name and exchanged with the entry, which is
 *    then removed under that name. Since Linux 5.8 an unprivileged mknod()
 *    of a 0/0 character device is allowed for this purpose.
 *
 * The guest may, meanwhile, plant anything in the upper layer: whiteouts,
 * `user.overlay.*` xattrs, FIFOs, sockets, links, and rename directories.
 * None of it leads outside the two layers: nothing is opened but by a single
 * name on a descriptor of this walk, and a planted whiteout or opaque xattr
 * only hides lower entries, which is the guest's to do anyway.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-workspace-overlay-private.h"

/* The kernel's limit on symbolic links followed in one resolution. */
#define MAX_LINKS 40

/* Directories are opened for reading (getdents64(), fgetxattr() need it),
 * never through a link, never blocking. */
#define DIRECTORY_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* One directory of the merged view: the same directory in each layer. */
typedef struct
{
  int     upper;       /* the directory in the upper layer, or -1 */
  int     lower;       /* the visible directory in the lower layer, or -1 */
  char   *name;        /* its name in the level above; NULL for the root */
  mode_t  lower_mode;  /* the lower directory's permission bits */
} Level;

/* What one name of a merged directory is. */
typedef struct
{
  gboolean    in_upper;       /* something, whiteouts included, is in upper */
  gboolean    upper_whiteout;
  gboolean    in_lower;       /* the visible lower directory has it */
  struct stat upper_st;
  struct stat lower_st;
} Entry;

static void
level_clear (gpointer data)
{
  Level *level = data;

  sandbox_workspace_fd_clear (&level->upper);
  sandbox_workspace_fd_clear (&level->lower);
  g_clear_pointer (&level->name, g_free);
}

static gboolean
is_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

/* Whether the name is visible, and where from. */
static gboolean
entry_visible (const Entry *entry)
{
  return entry->in_upper ? !entry->upper_whiteout : entry->in_lower;
}

static const struct stat *
entry_stat (const Entry *entry)
{
  return entry->in_upper ? &entry->upper_st : &entry->lower_st;
}

static gboolean
entry_is_directory (const Entry *entry)
{
  return entry_visible (entry) && S_ISDIR (entry_stat (entry)->st_mode);
}

/* The layer's descriptor the visible entry is in. */
static int
entry_layer_fd (const Entry *entry,
                const Level *level)
{
  return entry->in_upper ? level->upper : level->lower;
}

static gboolean
is_opaque (int upper_fd)
{
  char value[2];

  return fgetxattr (upper_fd, SANDBOX_WORKSPACE_OVERLAY_OPAQUE_XATTR, value,
                    sizeof value) == 1 && value[0] == 'y';
}

/*
 * look_up:
 * @level: a merged directory
 * @name: an entry name
 * @entry: (out): what @name is in each layer
 *
 * Returns: %TRUE, or %FALSE with errno set when a layer cannot be examined
 */
static gboolean
look_up (const Level *level,
         const char  *name,
         Entry       *entry)
{
  memset (entry, 0, sizeof *entry);

  if (level->upper >= 0)
    {
      if (fstatat (level->upper, name, &entry->upper_st, AT_SYMLINK_NOFOLLOW) == 0)
        {
          entry->in_upper = TRUE;
          entry->upper_whiteout = is_whiteout (&entry->upper_st);
        }
      else if (errno != ENOENT)
        return FALSE;
    }
  if (level->lower >= 0)
    {
      if (fstatat (level->lower, name, &entry->lower_st, AT_SYMLINK_NOFOLLOW) == 0)
        entry->in_lower = TRUE;
      else if (errno != ENOENT)
        return FALSE;
    }
  return TRUE;
}

/*
 * descend:
 * @level: a merged directory
 * @name: a directory entry of it
 * @entry: what @name is, a visible directory
 * @child: (out): the merged directory @name
 *
 * Opens @name in the layers it is in: the upper directory, and the lower
 * one unless an upper non-directory or an opaque upper directory hides it.
 * A directory the guest swapped for something else meanwhile fails with
 * ENOTDIR or ELOOP.
 *
 * Returns: %TRUE, or %FALSE with errno set
 */
static gboolean
descend (const Level *level,
         const char  *name,
         const Entry *entry,
         Level       *child)
{
  gboolean lower_visible = entry->in_lower && S_ISDIR (entry->lower_st.st_mode);

  *child = (Level) { -1, -1, g_strdup (name), entry->lower_st.st_mode & 07777 };
  if (entry->in_upper)
    {
      child->upper = openat (level->upper, name, DIRECTORY_FLAGS);
      if (child->upper < 0)
        goto failed;
      lower_visible = lower_visible && !is_opaque (child->upper);
    }
  if (lower_visible)
    {
      child->lower = openat (level->lower, name, DIRECTORY_FLAGS);
      if (child->lower < 0)
        goto failed;
    }
  return TRUE;

failed:
  level_clear (child);
  return FALSE;
}

/* The walk's stack of merged directories, the root first. */
static GArray *
levels_new (SandboxWorkspace *self)
{
  GArray *levels = g_array_new (FALSE, TRUE, sizeof (Level));
  Level root = { -1, -1, NULL, 0755 };

  g_array_set_clear_func (levels, level_clear);
  root.upper = openat (self->fd, ".", DIRECTORY_FLAGS);
  root.lower = openat (self->lower_fd, ".", DIRECTORY_FLAGS);
  g_array_append_val (levels, root);
  if (root.upper < 0 || root.lower < 0)
    {
      g_array_unref (levels);
      return NULL;
    }
  return levels;
}

static Level *
top_level (GArray *levels)
{
  return &g_array_index (levels, Level, levels->len - 1);
}

/* Pushes the components of @path in front of what is still to walk. */
static void
push_components (GQueue     *pending,
                 const char *path)
{
  g_auto(GStrv) components = g_strsplit (path, "/", -1);

  for (guint i = g_strv_length (components); i > 0; i--)
    g_queue_push_head (pending, g_strdup (components[i - 1]));
}

/* Follows the link @name of @level: its target's components go in front
 * of what is still to walk. */
static gboolean
follow_link (Level      *level,
             const char *name,
             Entry      *entry,
             GQueue     *pending,
             guint      *links)
{
  char target[PATH_MAX];
  ssize_t length;

  if (++*links > MAX_LINKS)
    {
      errno = ELOOP;
      return FALSE;
    }
  length = readlinkat (entry_layer_fd (entry, level), name, target, sizeof target - 1);
  if (length < 0)
    return FALSE;
  target[length] = '\0';
  /* As RESOLVE_BENEATH: an absolute link leaves the workspace. */
  if (target[0] == '/')
    {
      errno = EXDEV;
      return FALSE;
    }
  push_components (pending, target);
  return TRUE;
}

static gboolean ensure_upper   (SandboxWorkspace *self,
                                GArray           *levels);
static gboolean make_directory (SandboxWorkspace *self,
                                Level            *level,
                                const char       *name,
                                const Entry      *entry);

/*
 * walk:
 * @self: an overlay workspace
 * @relative: a checked workspace-relative path other than "."
 * @follow_final: whether a final symbolic link is followed (reads) or is
 *   the entry itself (writes, removals)
 * @create: whether missing directories on the way are made (in the upper
 *   layer, as a write's parents)
 * @levels: (out) (transfer full): the merged directories down to the
 *   final entry's parent (or to the final directory itself)
 * @final_name: (out) (transfer full): the final entry's name in the last
 *   level, or %NULL when the path resolved to that directory itself
 * @final: (out): what the final entry is
 *
 * Resolves @relative in the merged view (see the top of this file).
 *
 * Returns: %TRUE, or %FALSE with errno set: ENOENT, ENOTDIR, EXDEV or
 *   ELOOP for a way out, or what a layer said
 */
static gboolean
walk (SandboxWorkspace  *self,
      const char        *relative,
      gboolean           follow_final,
      gboolean           create,
      GArray           **levels,
      char             **final_name,
      Entry             *final)
{
  g_autoptr(GQueue) pending = g_queue_new ();
  g_autoptr(GArray) stack = levels_new (self);
  guint links = 0;
  char *component;

  *levels = NULL;
  *final_name = NULL;
  memset (final, 0, sizeof *final);
  if (stack == NULL)
    return FALSE;
  push_components (pending, relative);

  while ((component = g_queue_pop_head (pending)) != NULL)
    {
      g_autofree char *name = component;
      gboolean last = g_queue_is_empty (pending);
      Level *level = top_level (stack);
      Level child;
      Entry entry;

      /* Only link targets have these. */
      if (name[0] == '\0' || strcmp (name, ".") == 0)
        continue;
      if (strcmp (name, "..") == 0)
        {
          if (stack->len == 1)
            {
              errno = EXDEV;
              goto failed;
            }
          g_array_set_size (stack, stack->len - 1);
          continue;
        }

      if (!look_up (level, name, &entry))
        goto failed;
      if (last && !follow_final)
        {
          *final_name = g_steal_pointer (&name);
          *final = entry;
          *levels = g_steal_pointer (&stack);
          return TRUE;
        }

      if (!entry_visible (&entry))
        {
          if (!create)
            {
              errno = ENOENT;
              goto failed;
            }
          if (!ensure_upper (self, stack) ||
              !make_directory (self, top_level (stack), name, &entry) ||
              !look_up (top_level (stack), name, &entry))
            goto failed;
          level = top_level (stack);
        }

      if (S_ISLNK (entry_stat (&entry)->st_mode))
        {
          if (!follow_link (level, name, &entry, pending, &links))
            goto failed;
          continue;
        }
      if (entry_is_directory (&entry))
        {
          if (!descend (level, name, &entry, &child))
            goto failed;
          g_array_append_val (stack, child);
          continue;
        }
      if (!last)
        {
          errno = ENOTDIR;
          goto failed;
        }
      *final_name = g_steal_pointer (&name);
      *final = entry;
      *levels = g_steal_pointer (&stack);
      return TRUE;
    }

  /* The path named a directory: the last level itself. */
  *levels = g_steal_pointer (&stack);
  return TRUE;

failed:
  {
    int saved_errno = errno;

    g_queue_free_full (g_steal_pointer (&pending), g_free);
    errno = saved_errno;
    return FALSE;
  }
}

/* Gives what was just made at @name in @dir_fd to the workspace's owner. */
static gboolean
give_entry (SandboxWorkspace *self,
            int               dir_fd,
            const char       *name)
{
  SandboxWorkspaceOwner owner;

  if (!sandbox_workspace_owner_of_root (self->fd, &owner))
    return TRUE;
  return fchownat (dir_fd, name, owner.uid, owner.gid, AT_SYMLINK_NOFOLLOW) == 0;
}

/*
 * ensure_upper:
 * @self: an overlay workspace
 * @levels: a walk's stack
 *
 * Copies the directories of @levels up that are only in the lower layer:
 * each gets an upper directory of the lower one's mode, given to the
 * workspace's owner, merged with the lower one (not opaque). One the guest
 * made meanwhile is taken as it is.
 *
 * Returns: %TRUE when every level has its upper directory, or %FALSE with
 *   errno set
 */
static gboolean
ensure_upper (SandboxWorkspace *self,
              GArray           *levels)
{
  for (guint i = 1; i < levels->len; i++)
    {
      Level *parent = &g_array_index (levels, Level, i - 1);
      Level *level = &g_array_index (levels, Level, i);
      gboolean made;

      if (level->upper >= 0)
        continue;
      made = mkdirat (parent->upper, level->name, level->lower_mode | 0700) == 0;
      if (!made && errno != EEXIST)
        return FALSE;
      if (made && !give_entry (self, parent->upper, level->name))
        return FALSE;
      level->upper = openat (parent->upper, level->name, DIRECTORY_FLAGS);
      if (level->upper < 0)
        return FALSE;
    }
  return TRUE;
}

/*
 * exchange_into_place:
 * @dir_fd: an upper directory
 * @temporary: a new entry's name in it
 * @name: the entry it replaces
 *
 * Puts @temporary in place of @name atomically and removes what was there,
 * whatever it was (a tree included, never following a link).
 *
 * Returns: %TRUE, or %FALSE with errno set (@temporary then removed)
 */
static gboolean
exchange_into_place (int         dir_fd,
                     const char *temporary,
                     const char *name)
{
  g_autoptr(GError) error = NULL;

  if (renameat2 (dir_fd, temporary, dir_fd, name, RENAME_EXCHANGE) < 0)
    {
      int saved_errno = errno;

      /* Gone meanwhile: a plain rename then. */
      if (saved_errno == ENOENT && renameat (dir_fd, temporary, dir_fd, name) == 0)
        return TRUE;
      sandbox_workspace_remove_entry (dir_fd, temporary, temporary, NULL);
      errno = saved_errno;
      return FALSE;
    }
  if (!sandbox_workspace_remove_entry (dir_fd, temporary, temporary, &error))
    {
      /* The new entry is in place; what it replaced stays under the
       * temporary name, which only this host ever picks. */
      g_debug ("Could not remove a replaced overlay entry: %s", error->message);
    }
  return TRUE;
}

static int
make_directory_at (int         dir_fd,
                   const char *name,
                   gpointer    data)
{
  return mkdirat (dir_fd, name, 0700);
}

static int
make_whiteout_at (int         dir_fd,
                  const char *name,
                  gpointer    data)
{
  return mknodat (dir_fd, name, S_IFCHR | 0, makedev (0, 0));
}

/*
 * make_directory:
 * @self: an overlay workspace
 * @level: a merged directory whose upper directory exists
 * @name: a name not visible in it
 * @entry: what @name is
 *
 * Makes the directory @name (0700, the workspace owner's) in the upper
 * layer. Over a whiteout it is opaque — the lower entry the whiteout hid
 * must stay hidden — and takes the whiteout's place atomically.
 *
 * Returns: %TRUE, or %FALSE with errno set
 */
static gboolean
make_directory (SandboxWorkspace *self,
                Level            *level,
                const char       *name,
                const Entry      *entry)
{
  char temporary[64];

  if (!entry->in_upper)
    {
      if (make_directory_at (level->upper, name, NULL) < 0)
        return errno == EEXIST;
      return give_entry (self, level->upper, name);
    }

  if (sandbox_workspace_make_temporary (level->upper, temporary, make_directory_at, NULL) < 0)
    return FALSE;
  {
    g_auto(SandboxWorkspaceFd) fd = openat (level->upper, temporary, DIRECTORY_FLAGS);

    if (fd < 0 ||
        fsetxattr (fd, SANDBOX_WORKSPACE_OVERLAY_OPAQUE_XATTR, "y", 1, 0) < 0 ||
        !give_entry (self, level->upper, temporary))
      {
        int saved_errno = errno;

        unlinkat (level->upper, temporary, AT_REMOVEDIR);
        errno = saved_errno;
        return FALSE;
      }
  }
  return exchange_into_place (level->upper, temporary, name);
}

/*
 * white_out:
 * @self: an overlay workspace
 * @level: the merged directory holding @name, with its upper directory
 * @name: a name the lower layer has
 * @entry: what @name is
 *
 * Hides @name: a whiteout takes the place of the upper entry (atomically,
 * which is then removed) or, without one, is made at @name.
 *
 * Returns: %TRUE, or %FALSE with errno set
 */
static gboolean
white_out (SandboxWorkspace *self,
           Level            *level,
           const char       *name,
           const Entry      *entry)
{
  char temporary[64];

  if (entry->upper_whiteout)
    return TRUE;
  if (!entry->in_upper)
    {
      if (make_whiteout_at (level->upper, name, NULL) == 0)
        return give_entry (self, level->upper, name);
      if (errno != EEXIST)
        return FALSE;
      /* The guest made something meanwhile: replaced as below. */
    }

  if (sandbox_workspace_make_temporary (level->upper, temporary, make_whiteout_at, NULL) < 0)
    return FALSE;
  if (!give_entry (self, level->upper, temporary))
    {
      int saved_errno = errno;

      unlinkat (level->upper, temporary, 0);
      errno = saved_errno;
      return FALSE;
    }
  return exchange_into_place (level->upper, temporary, name);
}

static gboolean
set_walk_error (GError     **error,
                int          saved_errno,
                const char  *action,
                const char  *relative)
{
  if (saved_errno == ENOTDIR && g_str_equal (action, "write"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY,
                   "Cannot write ‘%s’: a parent is not a directory", relative);
      return FALSE;
    }
  return sandbox_workspace_set_errno_error (error, saved_errno, action, relative);
}

/* Fast paths ------------------------------------------------------------ */

/*
 * The walk costs two opens and two stats a level. Two common cases are
 * decided by one kernel resolution instead, with the same result:
 *
 *  - the path resolves in the upper layer through real directories only
 *    (RESOLVE_NO_SYMLINKS) to something that is not a whiteout: upper
 *    entries hide the lower ones whatever they are, and an opaque xattr
 *    hides only lower entries, so that is the merged entry;
 *  - the path's first component is not in the upper layer at all: nothing
 *    of that subtree is, so it resolves in the lower layer through real
 *    directories only exactly as merged.
 *
 * Anything else (a link on the way, a whiteout, a miss) takes the walk.
 */
static int
open_in_layer (int         layer_fd,
               const char *relative,
               guint64     flags)
{
  return sandbox_workspace_open_beneath (layer_fd, relative, flags, RESOLVE_NO_SYMLINKS);
}

static gboolean
first_component_missing (int         upper_fd,
                         const char *relative)
{
  const char *slash = strchr (relative, '/');
  g_autofree char *first = g_strndup (relative, slash != NULL ? (gsize) (slash - relative)
                                                              : strlen (relative));
  struct stat st;

  return fstatat (upper_fd, first, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* A regular file the fast paths resolved, or -1 for the walk. */
static int
open_regular_fast (SandboxWorkspace *self,
                   const char       *relative)
{
  guint64 flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW;
  int layer_fd = self->fd;
  int fd = open_in_layer (layer_fd, relative, flags);
  struct stat st;

  if (fd < 0 && errno == ENOENT && first_component_missing (self->fd, relative))
    fd = open_in_layer (self->lower_fd, relative, flags);
  if (fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode))
    return fd;
  sandbox_workspace_fd_clear (&fd);
  return -1;
}

static GBytes *
overlay_read (SandboxWorkspace  *self,
              const char        *relative,
              gsize              max_bytes,
              GError           **error)
{
  g_autoptr(GArray) levels = NULL;
  g_autofree char *name = NULL;
  g_auto(SandboxWorkspaceFd) fd = open_regular_fast (self, relative);
  Entry entry;

  if (fd >= 0)
    return sandbox_workspace_read_opened (fd, max_bytes, relative, error);
  if (!walk (self, relative, TRUE, FALSE, &levels, &name, &entry))
    {
      set_walk_error (error, errno, "read", relative);
      return NULL;
    }
  if (name == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY,
                   "Cannot read ‘%s’: it is a directory", relative);
      return NULL;
    }

  /* O_NONBLOCK: a FIFO never waits for a writer. O_NOFOLLOW: the walk
   * said this is no link; one swapped in meanwhile is refused. */
  fd = openat (entry_layer_fd (&entry, top_level (levels)), name,
               O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      sandbox_workspace_set_read_open_error (error, errno, relative);
      return NULL;
    }
  return sandbox_workspace_read_opened (fd, max_bytes, relative, error);
}

/* Whether @dir_fd has no entry @name (one that cannot be examined
 * counts as there). */
static gboolean
name_is_missing (int         dir_fd,
                 const char *name)
{
  struct stat st;

  return fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* Adds the entries of @dir_fd to @builder, but those @skip_fd has (any
 * entry: a whiteout hides) and, in the upper layer, whiteouts. */
static gboolean
list_layer (int              dir_fd,
            int              skip_fd,
            gboolean         upper,
            GVariantBuilder *builder,
            guint           *count,
            guint            max_entries,
            gboolean        *truncated)
{
  g_autofree guint8 *buffer = g_malloc (SANDBOX_WORKSPACE_DIRENT_BUFFER_SIZE);
  SandboxWorkspaceDirents dirents;

  sandbox_workspace_dirents_init (&dirents, dir_fd, buffer);
  while (TRUE)
    {
      struct dirent64 *entry;
      g_autofree char *name = NULL;
      struct stat st;

      if (!sandbox_workspace_dirents_next (&dirents, &entry))
        return FALSE;
      if (entry == NULL)
        return TRUE;
      if (fstatat (dir_fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;   /* removed meanwhile */
      if (upper && is_whiteout (&st))
        continue;
      if (skip_fd >= 0 && !name_is_missing (skip_fd, entry->d_name))
        continue;
      if (*count == max_entries)
        {
          *truncated = TRUE;
          return TRUE;
        }

      name = g_utf8_make_valid (entry->d_name, -1);
      g_variant_builder_add (builder, "(sst)", name, sandbox_workspace_entry_type_name (st.st_mode),
                             (guint64) MAX (st.st_size, 0));
      (*count)++;
    }
}

static GVariant *
overlay_list (SandboxWorkspace  *self,
              const char        *relative,
              guint              max_entries,
              gboolean          *truncated,
              GError           **error)
{
  g_auto(GVariantBuilder) builder = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE ("a(sst)"));
  g_autoptr(GArray) levels = NULL;
  g_autofree char *name = NULL;
  Level *level;
  guint count = 0;
  Entry entry;

  if (strcmp (relative, ".") == 0)
    levels = levels_new (self);
  else if (walk (self, relative, TRUE, FALSE, &levels, &name, &entry) && name != NULL)
    errno = ENOTDIR;
  if (levels == NULL || name != NULL)
    {
      sandbox_workspace_set_errno_error (error, errno, "list", relative);
      return NULL;
    }

  level = top_level (levels);
  if ((level->upper >= 0 &&
       !list_layer (level->upper, -1, TRUE, &builder, &count, max_entries, truncated)) ||
      (level->lower >= 0 && !*truncated &&
       !list_layer (level->lower, level->upper, FALSE, &builder, &count, max_entries,
                    truncated)))
    {
      sandbox_workspace_set_errno_error (error, errno, "list", relative);
      return NULL;
    }
  return g_variant_ref_sink (g_variant_builder_end (&builder));
}

static gboolean
overlay_write (SandboxWorkspace  *self,
               const char        *relative,
               GBytes            *contents,
               GError           **error)
{
  g_autoptr(GArray) levels = NULL;
  g_autofree char *name = NULL;
  SandboxWorkspaceOwner root_owner;
  const SandboxWorkspaceOwner *owner;
  mode_t inherited_mode = 0;
  Entry entry;

  owner = sandbox_workspace_owner_of_root (self->fd, &root_owner) ? &root_owner : NULL;
  /* Replacing what the upper layer has, through real directories: what
   * the walk would find (see "Fast paths"). */
  {
    g_autofree char *parent = NULL;
    const char *final = sandbox_workspace_split_parent (relative, &parent);
    g_auto(SandboxWorkspaceFd) parent_fd =
      parent != NULL ? open_in_layer (self->fd, parent, O_PATH | O_DIRECTORY)
                     : fcntl (self->fd, F_DUPFD_CLOEXEC, 3);
    struct stat st;

    if (parent_fd >= 0 && fstatat (parent_fd, final, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        !is_whiteout (&st) && !S_ISDIR (st.st_mode))
      return sandbox_workspace_replace_file (parent_fd, final, contents, self->flags, 0,
                                             relative, owner, error);
  }
  if (!walk (self, relative, FALSE, TRUE, &levels, &name, &entry))
    return set_walk_error (error, errno, "write", relative);
  if (entry_is_directory (&entry))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_IS_DIRECTORY,
                   "Cannot write ‘%s’: it is a directory", relative);
      return FALSE;
    }
  /* Shadowing a lower file keeps its mode, as replacing one would. */
  if (!entry.in_upper && entry.in_lower && S_ISREG (entry.lower_st.st_mode))
    inherited_mode = entry.lower_st.st_mode & 0777;
  if (!ensure_upper (self, levels))
    return sandbox_workspace_set_errno_error (error, errno, "write", relative);

  return sandbox_workspace_replace_file (top_level (levels)->upper, name, contents, self->flags,
                                         inherited_mode, relative, owner, error);
}

static gboolean
overlay_remove (SandboxWorkspace  *self,
                const char        *relative,
                GError           **error)
{
  g_autoptr(GArray) levels = NULL;
  g_autofree char *name = NULL;
  Level *level;
  Entry entry;

  if (!walk (self, relative, FALSE, FALSE, &levels, &name, &entry))
    {
      if (errno == ENOENT)
        return TRUE;
      return set_walk_error (error, errno, "remove", relative);
    }
  level = top_level (levels);

  /* Nothing below to hide: as in a plain workspace. */
  if (!entry.in_lower)
    {
      if (!entry.in_upper || entry.upper_whiteout)
        return TRUE;
      return sandbox_workspace_remove_entry (level->upper, name, relative, error);
    }

  if (!ensure_upper (self, levels) || !white_out (self, top_level (levels), name, &entry))
    return sandbox_workspace_set_errno_error (error, errno, "remove", relative);
  return TRUE;
}

const SandboxWorkspaceOps sandbox_workspace_overlay_ops = {
  .read = overlay_read,
  .list = overlay_list,
  .write = overlay_write,
  .remove = overlay_remove,
};
