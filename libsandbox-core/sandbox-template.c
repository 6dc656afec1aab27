/* sandbox-template.c — the files a new workspace starts with
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "sandbox-digest-private.h"
#include "sandbox-error.h"
#include "sandbox-path.h"
#include "sandbox-template-private.h"

/**
 * SandboxTemplate:
 *
 * A named set of files (canonical workspace path → bytes) that new
 * workspaces are created from. Backends store a template once under its
 * key ([method@Sandbox.Template.compute_key]), so identical templates are shared.
 *
 * Only files are represented: a directory exists in a workspace because a
 * file lies below it, and empty directories are not kept. So no path can be
 * both a file and a directory: a file below another file (`a` and `a/b`)
 * is refused when it is added, not when a backend writes the tree.
 */
struct _SandboxTemplate
{
  GObject parent_instance;

  char *name;
  GHashTable *files; /* canonical path → GBytes */
  GHashTable *directories; /* canonical path of an implied directory → files below it */
};

enum {
  PROP_0,
  PROP_NAME,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (SandboxTemplate, sandbox_template, G_TYPE_OBJECT)

static void
sandbox_template_finalize (GObject *object)
{
  SandboxTemplate *self = SANDBOX_TEMPLATE (object);

  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->files, g_hash_table_unref);
  g_clear_pointer (&self->directories, g_hash_table_unref);

  G_OBJECT_CLASS (sandbox_template_parent_class)->finalize (object);
}

static void
sandbox_template_get_property (GObject    *object,
                               guint       prop_id,
                               GValue     *value,
                               GParamSpec *pspec)
{
  SandboxTemplate *self = SANDBOX_TEMPLATE (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_value_set_string (value, self->name);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_template_set_property (GObject      *object,
                               guint         prop_id,
                               const GValue *value,
                               GParamSpec   *pspec)
{
  SandboxTemplate *self = SANDBOX_TEMPLATE (object);

  switch (prop_id)
    {
    case PROP_NAME:
      g_free (self->name);
      self->name = g_value_dup_string (value);
      if (self->name == NULL)
        self->name = g_strdup ("");
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_template_class_init (SandboxTemplateClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_template_finalize;
  object_class->get_property = sandbox_template_get_property;
  object_class->set_property = sandbox_template_set_property;

  /**
   * SandboxTemplate:name:
   *
   * The template's name; part of its key.
   */
  properties[PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, "",
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
sandbox_template_init (SandboxTemplate *self)
{
  self->name = g_strdup ("");
  self->files = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify) g_bytes_unref);
  self->directories = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

/**
 * sandbox_template_new:
 * @name: the template's name, a non-empty UTF-8 string
 *
 * Creates a template with no files. The name is checked when it is used
 * ([method@Sandbox.Template.compute_key] refuses an empty or invalid one).
 *
 * Returns: (transfer full): a new [class@Sandbox.Template]
 */
SandboxTemplate *
sandbox_template_new (const char *name)
{
  g_return_val_if_fail (name != NULL, NULL);

  return g_object_new (SANDBOX_TYPE_TEMPLATE, "name", name, NULL);
}

/**
 * sandbox_template_get_name:
 * @self: a [class@Sandbox.Template]
 *
 * Gets the template's name.
 *
 * Returns: (transfer none): the template's name
 */
const char *
sandbox_template_get_name (SandboxTemplate *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);

  return self->name;
}

static gboolean
check_text (const char  *value,
            const char  *what,
            GError     **error)
{
  if (!g_utf8_validate (value, -1, NULL))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Invalid input: expected a valid UTF-8 string", what);
      return FALSE;
    }
  if (value[0] == '\0')
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Too small: expected string to have >=1 characters", what);
      return FALSE;
    }
  return TRUE;
}

/* ---- files and the directories they imply ---------------------------------- */

/* The canonical paths of @canonical's parent directories below the
 * workspace root, nearest the root first ("/workspace/a", "/workspace/a/b"
 * for "/workspace/a/b/c"). */
static GPtrArray *
list_parents (const char *canonical)
{
  GPtrArray *parents = g_ptr_array_new_with_free_func (g_free);
  const char *slash = canonical + strlen (SANDBOX_WORKSPACE "/");

  while ((slash = strchr (slash, '/')) != NULL)
    {
      g_ptr_array_add (parents, g_strndup (canonical, slash - canonical));
      slash++;
    }
  return parents;
}

/* The first file, in byte order, below the directory @canonical. */
static char *
find_file_below (SandboxTemplate *self,
                 const char      *canonical)
{
  g_autofree char *prefix = g_strconcat (canonical, "/", NULL);
  const char *first = NULL;
  GHashTableIter iter;
  gpointer path;

  g_hash_table_iter_init (&iter, self->files);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    if (g_str_has_prefix (path, prefix) && (first == NULL || strcmp (path, first) < 0))
      first = path;
  return g_strdup (first);
}

/* Refuses @canonical if a path can then be a file and a directory at once. */
static gboolean
check_no_file_directory_clash (SandboxTemplate  *self,
                               const char       *canonical,
                               GPtrArray        *parents,
                               GError          **error)
{
  if (g_hash_table_contains (self->files, canonical))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template already has a file at %s", canonical);
      return FALSE;
    }
  if (g_hash_table_contains (self->directories, canonical))
    {
      g_autofree char *below = find_file_below (self, canonical);

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template file %s cannot be added: the template has the file %s below it",
                   canonical, below);
      return FALSE;
    }
  for (guint i = 0; i < parents->len; i++)
    if (g_hash_table_contains (self->files, parents->pdata[i]))
      {
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                     "Template file %s cannot be added: it would lie below the file %s",
                     canonical, (const char *) parents->pdata[i]);
        return FALSE;
      }
  return TRUE;
}

/* Counts one more (@delta 1) or one fewer (-1) file below each of @parents. */
static void
count_files_below (SandboxTemplate *self,
                   GPtrArray       *parents,
                   int              delta)
{
  for (guint i = 0; i < parents->len; i++)
    {
      const char *parent = parents->pdata[i];
      guint count = GPOINTER_TO_UINT (g_hash_table_lookup (self->directories, parent)) + delta;

      if (count == 0)
        g_hash_table_remove (self->directories, parent);
      else
        g_hash_table_replace (self->directories, g_strdup (parent), GUINT_TO_POINTER (count));
    }
}

/* Takes out a file added before (an import's rollback). */
static void
remove_file (SandboxTemplate *self,
             const char      *canonical)
{
  g_autoptr(GPtrArray) parents = list_parents (canonical);

  if (g_hash_table_remove (self->files, canonical))
    count_files_below (self, parents, -1);
}

/**
 * sandbox_template_add_file:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path (see [func@Sandbox.path_canonicalize])
 * @contents: the file's bytes
 * @error: return location for a #GError, or %NULL
 *
 * Adds a file. Its parent directories are implied, so none of them can be
 * a file of the template, nor can a file of the template lie below @path.
 *
 * Returns: %TRUE on success; %FALSE with %SANDBOX_ERROR_PATH if @path is not
 *   a canonical workspace path or is the workspace root, or
 *   %SANDBOX_ERROR_INVALID if the template already has a file at @path, a
 *   file at one of its parent directories, or a file below it (the message
 *   names both paths)
 */
gboolean
sandbox_template_add_file (SandboxTemplate  *self,
                           const char       *path,
                           GBytes           *contents,
                           GError          **error)
{
  g_autofree char *canonical = NULL;
  g_autoptr(GPtrArray) parents = NULL;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  canonical = sandbox_path_canonicalize (path, error);
  if (canonical == NULL)
    return FALSE;

  if (g_str_equal (canonical, SANDBOX_WORKSPACE))
    return sandbox_set_error_template_root (error);

  parents = list_parents (canonical);
  if (!check_no_file_directory_clash (self, canonical, parents, error))
    return FALSE;

  count_files_below (self, parents, 1);
  g_hash_table_insert (self->files, g_steal_pointer (&canonical), g_bytes_ref (contents));
  return TRUE;
}

/* ---- importing a host directory ------------------------------------------ */

typedef struct
{
  SandboxTemplate *self;
  GCancellable *cancellable;
  GHashTable *added; /* canonical paths added by this import, for rollback */
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

static GBytes *
read_regular_file (int          dir_fd,
                   const char  *name,
                   const char  *relative,
                   GError     **error)
{
  g_autoptr(GByteArray) contents = g_byte_array_new ();
  struct stat st;
  int fd;

  /* O_NOFOLLOW and O_NONBLOCK: an entry swapped for a symlink or a FIFO
   * since it was listed fails here instead of escaping or blocking. */
  fd = openat (dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    {
      int saved_errno = errno;

      if (saved_errno == ELOOP)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Template directory entry “%s” is a symbolic link", relative);
          return NULL;
        }
      set_io_error_from_errno (error, saved_errno, "open", relative);
      return NULL;
    }

  if (fstat (fd, &st) != 0 || !S_ISREG (st.st_mode))
    {
      close (fd);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template directory entry “%s” is not a regular file", relative);
      return NULL;
    }

  while (TRUE)
    {
      guint8 buffer[65536];
      ssize_t n = read (fd, buffer, sizeof buffer);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          int saved_errno = errno;

          close (fd);
          set_io_error_from_errno (error, saved_errno, "read", relative);
          return NULL;
        }
      if (n == 0)
        break;
      g_byte_array_append (contents, buffer, (guint) n);
    }

  close (fd);
  return g_byte_array_free_to_bytes (g_steal_pointer (&contents));
}

static gboolean import_directory (Import      *import,
                                  int          dir_fd,
                                  const char  *prefix,
                                  GError     **error);

static gboolean
import_entry (Import      *import,
              int          dir_fd,
              const char  *name,
              const char  *relative,
              GError     **error)
{
  struct stat st;

  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
    return set_io_error_from_errno (error, errno, "inspect", relative);

  if (S_ISDIR (st.st_mode))
    {
      int child_fd = openat (dir_fd, name,
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      gboolean ok;

      if (child_fd < 0)
        {
          if (errno == ELOOP || errno == ENOTDIR)
            {
              g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "Template directory entry “%s” changed while importing", relative);
              return FALSE;
            }
          return set_io_error_from_errno (error, errno, "open", relative);
        }
      ok = import_directory (import, child_fd, relative, error);
      close (child_fd);
      return ok;
    }

  if (S_ISREG (st.st_mode))
    {
      g_autoptr(GBytes) contents = read_regular_file (dir_fd, name, relative, error);
      g_autofree char *canonical = NULL;

      if (contents == NULL)
        return FALSE;
      if (!sandbox_template_add_file (import->self, relative, contents, error))
        return FALSE;
      canonical = sandbox_path_canonicalize (relative, NULL);
      g_hash_table_add (import->added, g_steal_pointer (&canonical));
      return TRUE;
    }

  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Template directory entry “%s” is a %s; only regular files and directories "
               "can be imported", relative,
               S_ISLNK (st.st_mode) ? "symbolic link" :
               S_ISFIFO (st.st_mode) ? "FIFO" :
               S_ISSOCK (st.st_mode) ? "socket" : "device");
  return FALSE;
}

static gboolean
import_directory (Import      *import,
                  int          dir_fd,
                  const char  *prefix,
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

  while (ok && (errno = 0, entry = readdir (dir)) != NULL)
    {
      g_autofree char *relative = NULL;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      if (g_cancellable_set_error_if_cancelled (import->cancellable, error))
        {
          ok = FALSE;
          break;
        }

      relative = prefix != NULL ? g_strconcat (prefix, "/", entry->d_name, NULL)
                                : g_strdup (entry->d_name);
      ok = import_entry (import, dir_fd, entry->d_name, relative, error);
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
 * Adds every regular file below @directory, at the same relative path in
 * the workspace. Symbolic links are never followed: a symbolic link, FIFO,
 * socket or device anywhere in the tree is refused with
 * %SANDBOX_ERROR_INVALID naming it, as are entries swapped for one while the
 * tree is read. Empty directories are not represented. Every name must form
 * a canonical workspace path (%SANDBOX_ERROR_PATH otherwise), and a file of
 * the tree that would lie below a file the template already has, or above
 * one, is refused with %SANDBOX_ERROR_INVALID as [method@Sandbox.Template.add_file]
 * refuses it. On failure the
 * template is left as it was.
 *
 * This reads the whole tree synchronously; call it from a worker thread for
 * large trees.
 *
 * Returns: %TRUE on success; %FALSE with @error set
 */
gboolean
sandbox_template_add_directory (SandboxTemplate  *self,
                                GFile            *directory,
                                GCancellable     *cancellable,
                                GError          **error)
{
  g_autoptr(GHashTable) added = NULL;
  g_autofree char *path = NULL;
  Import import;
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

  added = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  import = (Import) { self, cancellable, added };
  ok = import_directory (&import, dir_fd, NULL, error);
  close (dir_fd);

  if (!ok)
    {
      GHashTableIter iter;
      gpointer canonical;

      g_hash_table_iter_init (&iter, added);
      while (g_hash_table_iter_next (&iter, &canonical, NULL))
        remove_file (self, canonical);
    }

  return ok;
}

/* ---- queries ---------------------------------------------------------------- */

/**
 * sandbox_template_get_n_files:
 * @self: a [class@Sandbox.Template]
 *
 * Gets how many files the template holds.
 *
 * Returns: the number of files in @self
 */
guint
sandbox_template_get_n_files (SandboxTemplate *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), 0);

  return g_hash_table_size (self->files);
}

static int
compare_paths (gconstpointer a,
               gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/**
 * sandbox_template_list_paths:
 * @self: a [class@Sandbox.Template]
 *
 * Lists the paths of the files in the template.
 *
 * Returns: (transfer full) (array zero-terminated=1): the canonical paths of
 *   the files, sorted in byte order
 */
char **
sandbox_template_list_paths (SandboxTemplate *self)
{
  char **paths;
  guint n;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);

  paths = (char **) g_hash_table_get_keys_as_array (self->files, &n);
  for (guint i = 0; i < n; i++)
    paths[i] = g_strdup (paths[i]);
  qsort (paths, n, sizeof (char *), compare_paths);
  return paths;
}

/**
 * sandbox_template_lookup_file:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path in any accepted form (`"a.txt"`,
 *   `"/workspace/a.txt"`)
 *
 * Looks up the contents of the file the template holds at @path.
 *
 * Returns: (transfer none) (nullable): the file's bytes, or %NULL if @self
 *   has no file there or @path is not a valid workspace path
 */
GBytes *
sandbox_template_lookup_file (SandboxTemplate *self,
                              const char      *path)
{
  g_autofree char *canonical = NULL;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  canonical = sandbox_path_canonicalize (path, NULL);
  if (canonical == NULL)
    return NULL;

  return g_hash_table_lookup (self->files, canonical);
}

/* ---- the key ----------------------------------------------------------------- */

/* Appends @value as ECMAScript's JSON.stringify() writes a (well-formed)
 * string: only '"', '\\' and control characters are escaped, with the short
 * forms where they exist and lowercase \u00xx otherwise; '/', DEL, U+2028
 * and U+2029 stay raw. The key depends on these exact bytes. */
static void
append_js_json_string (GString    *out,
                       const char *value)
{
  g_string_append_c (out, '"');
  for (const guchar *p = (const guchar *) value; *p != '\0'; p++)
    {
      switch (*p)
        {
        case '"':
          g_string_append (out, "\\\"");
          break;
        case '\\':
          g_string_append (out, "\\\\");
          break;
        case '\b':
          g_string_append (out, "\\b");
          break;
        case '\f':
          g_string_append (out, "\\f");
          break;
        case '\n':
          g_string_append (out, "\\n");
          break;
        case '\r':
          g_string_append (out, "\\r");
          break;
        case '\t':
          g_string_append (out, "\\t");
          break;
        default:
          if (*p < 0x20)
            g_string_append_printf (out, "\\u%04x", *p);
          else
            g_string_append_c (out, (char) *p);
        }
    }
  g_string_append_c (out, '"');
}

char *
sandbox_template_dup_canonical_json (SandboxTemplate *self,
                                     const char      *backend_name)
{
  g_auto(GStrv) paths = sandbox_template_list_paths (self);
  GString *out = g_string_new ("[");

  append_js_json_string (out, backend_name);
  g_string_append_c (out, ',');
  append_js_json_string (out, self->name);
  g_string_append (out, ",[");
  for (guint i = 0; paths[i] != NULL; i++)
    {
      GBytes *contents = g_hash_table_lookup (self->files, paths[i]);
      g_autofree char *digest = sandbox_digest_sha256_hex_bytes (contents);

      if (i > 0)
        g_string_append_c (out, ',');
      g_string_append_c (out, '[');
      append_js_json_string (out, paths[i]);
      g_string_append_c (out, ',');
      append_js_json_string (out, digest);
      g_string_append_c (out, ']');
    }
  g_string_append (out, "]]");

  return g_string_free (out, FALSE);
}

/**
 * sandbox_template_compute_key:
 * @self: a [class@Sandbox.Template]
 * @backend_name: the name of the backend the template is for
 * @error: return location for a #GError, or %NULL
 *
 * Computes the template's content address: the lowercase hex SHA-256 of the
 * compact JSON array `[backend_name, name, [[path, sha256hex(bytes)], …]]`,
 * serialized exactly as ECMAScript's `JSON.stringify()` does, with files
 * sorted by canonical path in byte order. Equal templates get equal keys in
 * every implementation of the design.
 *
 * Returns: (transfer full): 64 lowercase hex digits, or %NULL with
 *   %SANDBOX_ERROR_INVALID set if @backend_name or the template name is empty
 *   or not UTF-8
 */
char *
sandbox_template_compute_key (SandboxTemplate  *self,
                              const char       *backend_name,
                              GError          **error)
{
  g_autofree char *json = NULL;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);
  g_return_val_if_fail (backend_name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_text (backend_name, "backend name", error) ||
      !check_text (self->name, "template name", error))
    return NULL;

  json = sandbox_template_dup_canonical_json (self, backend_name);
  return sandbox_digest_sha256_hex (json, strlen (json));
}

/**
 * sandbox_template_key_is_valid:
 * @key: (nullable): a string
 *
 * Checks whether @key has the form of a template key.
 *
 * Returns: %TRUE if @key looks like a template key: exactly 64 lowercase
 *   hex digits
 */
gboolean
sandbox_template_key_is_valid (const char *key)
{
  gsize i;

  if (key == NULL)
    return FALSE;

  for (i = 0; key[i] != '\0'; i++)
    if (!g_ascii_isdigit (key[i]) && !(key[i] >= 'a' && key[i] <= 'f'))
      return FALSE;

  return i == 64;
}
