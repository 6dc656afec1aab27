/* sandbox-template.c — the files a new workspace starts with
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
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
#include "sandbox-path.h"
#include "sandbox-template-private.h"

/**
 * SandboxTemplate:
 *
 * A named tree that new workspaces are created from: what a checkout needs.
 * Backends store a template once under its key
 * ([method@Sandbox.Template.compute_key]), so identical templates are shared.
 *
 * A template holds entries at canonical workspace paths:
 *
 * - regular files, with their bytes and whether they are executable
 *   (workspaces see mode 0755 or 0644, as git normalises modes);
 * - symbolic links, whose target is kept verbatim and is only ever resolved
 *   inside the guest, never on the host;
 * - empty directories. Other directories exist because an entry lies below
 *   them.
 *
 * Anything else a file system holds is not kept: ownership, other mode bits,
 * timestamps and extended attributes; hard links become independent files.
 * Devices, FIFOs and sockets cannot be added at all.
 *
 * No path can be two things at once: an entry below a file or a symbolic
 * link (`a` and `a/b`) is refused when it is added, not when a backend
 * writes the tree.
 *
 * Files added from memory are held as #GBytes. Files imported with
 * [method@Sandbox.Template.add_directory] are not: the template records where
 * they are and what they were, and reads them from the host when a backend
 * stores them ([method@Sandbox.Template.read_file]), so a template of any
 * size costs little memory. Their digests are learnt as they are first
 * read.
 */
struct _SandboxTemplate
{
  GObject parent_instance;

  char *name;
  SandboxTemplateRuntime runtime;
  GHashTable *entries; /* canonical path → SandboxTemplateEntry */
  GHashTable *directories; /* canonical path of an implied directory → entries below it */
  guint n_listed; /* entries part of the key: all but directories with entries below */
  guint n_regular; /* regular files */
  guint64 n_bytes; /* the regular files' sizes */

  /* Progress of the files being read (by a backend storing the template),
   * reported in progress_context. Any thread may read files. */
  GMutex progress_lock;
  GMainContext *progress_context;
  GThread *progress_thread;  /* the prewarm caller's: emits directly (not a reference) */
  guint64 files_done;
  guint64 bytes_done;
  GSource *progress_idle;  /* an emission queued in progress_context */
};

enum {
  PROP_0,
  PROP_NAME,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum {
  SIGNAL_PROGRESS,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (SandboxTemplate, sandbox_template, G_TYPE_OBJECT)

static void
sandbox_template_finalize (GObject *object)
{
  SandboxTemplate *self = SANDBOX_TEMPLATE (object);

  g_clear_pointer (&self->name, g_free);
  g_clear_pointer (&self->runtime.key, g_free);
  g_clear_pointer (&self->entries, g_hash_table_unref);
  g_clear_pointer (&self->directories, g_hash_table_unref);
  /* A queued emission holds a reference, so none is pending here. */
  g_clear_pointer (&self->progress_context, g_main_context_unref);
  g_mutex_clear (&self->progress_lock);

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

  /**
   * SandboxTemplate::progress:
   * @self: the template
   * @files_done: how many of its regular files were read
   * @files_total: how many regular files it has
   * @bytes_done: how many of their bytes were read
   * @bytes_total: how many bytes they hold
   *
   * Reports how far a backend is in reading the template's files while it
   * stores them ([method@Sandbox.Backend.prewarm] and its async form start
   * the count at zero). Emitted in the thread-default main context of the
   * thread that started the prewarm, whatever thread the backend reads in:
   * directly when it reads in that thread (a blocking prewarm), otherwise
   * from an idle callback there, which gives the latest counts (reports
   * that come faster than the context runs are merged). A template that
   * was already stored is not read, so its prewarm emits nothing, once its
   * key is known without reading: an imported file's digest is learnt as
   * it is first read, so a template imported afresh may be read to learn
   * whether it is stored. Imported
   * files advance @bytes_done as they are read, 64 KiB at a time; files
   * held in memory when they are opened.
   */
  signals[SIGNAL_PROGRESS] =
    g_signal_new ("progress", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                  NULL, G_TYPE_NONE, 4, G_TYPE_UINT64, G_TYPE_UINT64, G_TYPE_UINT64,
                  G_TYPE_UINT64);
}

static void
sandbox_template_init (SandboxTemplate *self)
{
  self->name = g_strdup ("");
  self->entries = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) sandbox_template_entry_free);
  self->directories = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_mutex_init (&self->progress_lock);
}

/**
 * sandbox_template_new:
 * @name: the template's name, a non-empty UTF-8 string
 *
 * Creates an empty template. The name is checked when it is used
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

/* The template's runtime, for sandbox-template-runtime.c. */
SandboxTemplateRuntime *
sandbox_template_get_runtime_slot (SandboxTemplate *self)
{
  return &self->runtime;
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

/* ---- entries ------------------------------------------------------------- */

void
sandbox_template_entry_free (SandboxTemplateEntry *entry)
{
  if (entry == NULL)
    return;
  g_free (entry->digest);
  g_clear_pointer (&entry->contents, g_bytes_unref);
  g_clear_pointer (&entry->source, sandbox_template_source_unref);
  g_free (entry->source_path);
  g_free (entry->target);
  g_free (entry);
}

SandboxTemplateSource *
sandbox_template_source_new (int         root_fd,
                             const char *root_path)
{
  SandboxTemplateSource *self = g_atomic_rc_box_new0 (SandboxTemplateSource);

  self->root_fd = root_fd;
  self->root_path = g_strdup (root_path);
  return self;
}

SandboxTemplateSource *
sandbox_template_source_ref (SandboxTemplateSource *self)
{
  return g_atomic_rc_box_acquire (self);
}

static void
sandbox_template_source_clear (SandboxTemplateSource *self)
{
  if (self->root_fd >= 0)
    close (self->root_fd);
  g_free (self->root_path);
}

void
sandbox_template_source_unref (SandboxTemplateSource *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify) sandbox_template_source_clear);
}

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

/* The first entry, in byte order, below the directory @canonical. */
static char *
find_entry_below (SandboxTemplate *self,
                  const char      *canonical)
{
  g_autofree char *prefix = g_strconcat (canonical, "/", NULL);
  const char *first = NULL;
  GHashTableIter iter;
  gpointer path;

  g_hash_table_iter_init (&iter, self->entries);
  while (g_hash_table_iter_next (&iter, &path, NULL))
    if (g_str_has_prefix (path, prefix) && (first == NULL || strcmp (path, first) < 0))
      first = path;
  return g_strdup (first);
}

static const char *
describe_type (GFileType type)
{
  switch (type)
    {
    case G_FILE_TYPE_SYMBOLIC_LINK:
      return "symbolic link";
    case G_FILE_TYPE_DIRECTORY:
      return "directory";
    default:
      return "file";
    }
}

/* Refuses @canonical if a path can then be two things at once. */
static gboolean
check_no_clash (SandboxTemplate  *self,
                const char       *canonical,
                GFileType         type,
                GPtrArray        *parents,
                GError          **error)
{
  SandboxTemplateEntry *existing = g_hash_table_lookup (self->entries, canonical);

  if (existing != NULL &&
      !(existing->type == G_FILE_TYPE_DIRECTORY && type == G_FILE_TYPE_DIRECTORY))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template already has a %s at %s", describe_type (existing->type), canonical);
      return FALSE;
    }
  if (type != G_FILE_TYPE_DIRECTORY && g_hash_table_contains (self->directories, canonical))
    {
      g_autofree char *below = find_entry_below (self, canonical);

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template %s %s cannot be added: the template has %s below it",
                   describe_type (type), canonical, below);
      return FALSE;
    }
  for (guint i = 0; i < parents->len; i++)
    {
      SandboxTemplateEntry *parent = g_hash_table_lookup (self->entries, parents->pdata[i]);

      if (parent != NULL && parent->type != G_FILE_TYPE_DIRECTORY)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Template %s %s cannot be added: it would lie below the %s %s",
                       describe_type (type), canonical, describe_type (parent->type),
                       (const char *) parents->pdata[i]);
          return FALSE;
        }
    }
  return TRUE;
}

/* Counts one more (@delta 1) or one fewer (-1) entry below each of
 * @parents, and keeps the count of listed entries: a directory entry is
 * listed only while nothing lies below it. */
static void
count_entries_below (SandboxTemplate *self,
                     GPtrArray       *parents,
                     int              delta)
{
  for (guint i = 0; i < parents->len; i++)
    {
      const char *parent = parents->pdata[i];
      guint count = GPOINTER_TO_UINT (g_hash_table_lookup (self->directories, parent)) + delta;
      gboolean explicit = g_hash_table_contains (self->entries, parent);

      if (count == 0)
        g_hash_table_remove (self->directories, parent);
      else
        g_hash_table_replace (self->directories, g_strdup (parent), GUINT_TO_POINTER (count));

      /* An explicit directory drops out of the key with its first entry
       * below and comes back with its last one gone. */
      if (explicit && delta > 0 && count == 1)
        self->n_listed--;
      else if (explicit && delta < 0 && count == 0)
        self->n_listed++;
    }
}

gboolean
sandbox_template_entry_is_listed (SandboxTemplate      *self,
                                  const char           *canonical,
                                  SandboxTemplateEntry *entry)
{
  return entry->type != G_FILE_TYPE_DIRECTORY ||
         !g_hash_table_contains (self->directories, canonical);
}

/* Adds @entry at @canonical (a canonical workspace path, not the root),
 * checking it against what the template holds. *@inserted says whether a
 * new entry was made (a directory already there is not one). */
static gboolean
insert_entry (SandboxTemplate       *self,
              const char            *canonical,
              SandboxTemplateEntry  *entry,
              gboolean              *inserted,
              GError               **error)
{
  g_autoptr(SandboxTemplateEntry) owned = entry;
  g_autoptr(GPtrArray) parents = list_parents (canonical);

  *inserted = FALSE;
  if (!check_no_clash (self, canonical, entry->type, parents, error))
    return FALSE;
  if (g_hash_table_contains (self->entries, canonical))
    return TRUE;  /* a directory that is there already */

  count_entries_below (self, parents, 1);
  if (sandbox_template_entry_is_listed (self, canonical, entry))
    self->n_listed++;
  if (entry->type == G_FILE_TYPE_REGULAR)
    self->n_regular++;
  self->n_bytes += entry->size;
  g_hash_table_insert (self->entries, g_strdup (canonical), g_steal_pointer (&owned));
  *inserted = TRUE;
  return TRUE;
}

void
sandbox_template_remove_entry (SandboxTemplate *self,
                               const char      *canonical)
{
  g_autoptr(GPtrArray) parents = list_parents (canonical);
  SandboxTemplateEntry *entry = g_hash_table_lookup (self->entries, canonical);

  if (entry == NULL)
    return;
  if (sandbox_template_entry_is_listed (self, canonical, entry))
    self->n_listed--;
  if (entry->type == G_FILE_TYPE_REGULAR)
    self->n_regular--;
  self->n_bytes -= entry->size;
  g_hash_table_remove (self->entries, canonical);
  count_entries_below (self, parents, -1);
}

SandboxTemplateEntry *
sandbox_template_lookup_entry (SandboxTemplate *self,
                               const char      *canonical)
{
  return g_hash_table_lookup (self->entries, canonical);
}

/* What a symbolic link may point to: text the key can hold, short enough
 * for symlink(2). Absolute targets are fine, they resolve in the guest. */
static gboolean
check_symlink_target (const char  *canonical,
                      const char  *target,
                      GError     **error)
{
  gsize length = strlen (target);

  if (length == 0 || length >= PATH_MAX || !g_utf8_validate (target, length, NULL))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template symbolic link %s: expected a UTF-8 target of 1 to %d bytes",
                   canonical, PATH_MAX - 1);
      return FALSE;
    }
  return TRUE;
}

/* Canonicalizes @path for a new entry: not the workspace root. */
static char *
canonicalize_entry_path (const char  *path,
                         GError     **error)
{
  g_autofree char *canonical = sandbox_path_canonicalize (path, error);

  if (canonical == NULL)
    return NULL;
  if (g_str_equal (canonical, SANDBOX_WORKSPACE))
    {
      sandbox_set_error_template_root (error);
      return NULL;
    }
  return g_steal_pointer (&canonical);
}

gboolean
sandbox_template_add_entry (SandboxTemplate       *self,
                            const char            *path,
                            SandboxTemplateEntry  *entry,
                            char                 **added,
                            GError               **error)
{
  g_autoptr(SandboxTemplateEntry) owned = entry;
  g_autofree char *canonical = canonicalize_entry_path (path, error);
  gboolean inserted;

  if (canonical == NULL)
    return FALSE;
  if (entry->type == G_FILE_TYPE_SYMBOLIC_LINK &&
      !check_symlink_target (canonical, entry->target, error))
    return FALSE;
  if (!insert_entry (self, canonical, g_steal_pointer (&owned), &inserted, error))
    return FALSE;
  if (added != NULL)
    *added = inserted ? g_steal_pointer (&canonical) : NULL;
  return TRUE;
}

/**
 * sandbox_template_add_file:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path (see [func@Sandbox.path_canonicalize])
 * @contents: the file's bytes
 * @error: return location for a #GError, or %NULL
 *
 * Adds a plain (not executable) file, as
 * [method@Sandbox.Template.add_file_full] does with
 * %SANDBOX_TEMPLATE_FILE_NONE.
 *
 * Returns: %TRUE on success; %FALSE with %SANDBOX_ERROR_PATH if @path is not
 *   a canonical workspace path or is the workspace root, or
 *   %SANDBOX_ERROR_INVALID if the template already has an entry at @path, a
 *   file or symbolic link at one of its parent directories, or an entry
 *   below it (the message names both paths)
 */
gboolean
sandbox_template_add_file (SandboxTemplate  *self,
                           const char       *path,
                           GBytes           *contents,
                           GError          **error)
{
  return sandbox_template_add_file_full (self, path, contents, SANDBOX_TEMPLATE_FILE_NONE, error);
}

/**
 * sandbox_template_add_file_full:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path (see [func@Sandbox.path_canonicalize])
 * @contents: the file's bytes
 * @flags: %SANDBOX_TEMPLATE_FILE_EXECUTABLE for an executable file
 * @error: return location for a #GError, or %NULL
 *
 * Adds a regular file. Its parent directories are implied, so none of them
 * can be a file or symbolic link of the template, nor can an entry of the
 * template lie below @path. Workspaces see an executable file with mode
 * 0755, any other with 0644.
 *
 * Returns: %TRUE on success; %FALSE with %SANDBOX_ERROR_PATH if @path is not
 *   a canonical workspace path or is the workspace root, or
 *   %SANDBOX_ERROR_INVALID if the template already has an entry at @path, a
 *   file or symbolic link at one of its parent directories, or an entry
 *   below it (the message names both paths)
 */
gboolean
sandbox_template_add_file_full (SandboxTemplate           *self,
                                const char                *path,
                                GBytes                    *contents,
                                SandboxTemplateFileFlags   flags,
                                GError                   **error)
{
  SandboxTemplateEntry *entry;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (contents != NULL, FALSE);
  g_return_val_if_fail ((flags & ~SANDBOX_TEMPLATE_FILE_EXECUTABLE) == 0, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  entry = g_new0 (SandboxTemplateEntry, 1);
  entry->type = G_FILE_TYPE_REGULAR;
  entry->flags = flags;
  entry->contents = g_bytes_ref (contents);
  entry->size = g_bytes_get_size (contents);
  entry->digest = sandbox_digest_sha256_hex_bytes (contents);
  return sandbox_template_add_entry (self, path, entry, NULL, error);
}

/**
 * sandbox_template_add_symlink:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path (see [func@Sandbox.path_canonicalize])
 * @target: what the link points to: any UTF-8 text of 1 to 4095 bytes,
 *   relative (`../lib/x.js`) or absolute (`/usr/bin/python3`)
 * @error: return location for a #GError, or %NULL
 *
 * Adds a symbolic link, stored verbatim. The target is resolved only inside
 * the guest, where `/workspace` is the workspace: an absolute link into the
 * workspace names it as `/workspace/…`. The host never follows it, neither
 * when storing the template nor when copying or removing a workspace; the
 * host-side file API refuses a link that leads out of the workspace.
 * Placement is checked as [method@Sandbox.Template.add_file_full] checks it.
 *
 * Returns: %TRUE on success; %FALSE with %SANDBOX_ERROR_PATH for a bad
 *   @path, or %SANDBOX_ERROR_INVALID for a bad @target or a clash with an
 *   entry the template has
 */
gboolean
sandbox_template_add_symlink (SandboxTemplate  *self,
                              const char       *path,
                              const char       *target,
                              GError          **error)
{
  SandboxTemplateEntry *entry;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (target != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  entry = g_new0 (SandboxTemplateEntry, 1);
  entry->type = G_FILE_TYPE_SYMBOLIC_LINK;
  entry->target = g_strdup (target);
  return sandbox_template_add_entry (self, path, entry, NULL, error);
}

/**
 * sandbox_template_add_empty_directory:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path (see [func@Sandbox.path_canonicalize])
 * @error: return location for a #GError, or %NULL
 *
 * Makes sure the workspace has a directory at @path even if no entry lies
 * below it (as `mkdir -p`: a directory that is there already, added or
 * implied, is fine). Workspaces see it with mode 0755. A directory with
 * entries below it is implied by them, so adding one and then a file below
 * it gives the same template, and the same key, as adding the file alone.
 *
 * Returns: %TRUE on success; %FALSE with %SANDBOX_ERROR_PATH for a bad
 *   @path, or %SANDBOX_ERROR_INVALID if a file or symbolic link is at @path
 *   or at one of its parents
 */
gboolean
sandbox_template_add_empty_directory (SandboxTemplate  *self,
                                      const char       *path,
                                      GError          **error)
{
  SandboxTemplateEntry *entry;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), FALSE);
  g_return_val_if_fail (path != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  entry = g_new0 (SandboxTemplateEntry, 1);
  entry->type = G_FILE_TYPE_DIRECTORY;
  return sandbox_template_add_entry (self, path, entry, NULL, error);
}

/* ---- queries ---------------------------------------------------------------- */

/**
 * sandbox_template_get_n_files:
 * @self: a [class@Sandbox.Template]
 *
 * Gets how many entries the template holds: files, symbolic links and
 * empty directories, what [method@Sandbox.Template.list_paths] lists.
 *
 * Returns: the number of entries in @self
 */
guint
sandbox_template_get_n_files (SandboxTemplate *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), 0);

  return self->n_listed;
}

/**
 * sandbox_template_get_n_bytes:
 * @self: a [class@Sandbox.Template]
 *
 * Gets how many bytes the template's regular files hold together.
 *
 * Returns: the total size of the files in @self
 */
guint64
sandbox_template_get_n_bytes (SandboxTemplate *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), 0);

  return self->n_bytes;
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
 * Lists the paths of the template's entries: its files, symbolic links and
 * empty directories ([method@Sandbox.Template.query_file_type] tells which).
 * Directories with entries below them are implied and not listed.
 *
 * Returns: (transfer full) (array zero-terminated=1): the canonical paths,
 *   sorted in byte order, so parents come before what lies below them
 */
char **
sandbox_template_list_paths (SandboxTemplate *self)
{
  GPtrArray *paths;
  GHashTableIter iter;
  gpointer path, entry;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);

  paths = g_ptr_array_sized_new (self->n_listed + 1);
  g_hash_table_iter_init (&iter, self->entries);
  while (g_hash_table_iter_next (&iter, &path, &entry))
    if (sandbox_template_entry_is_listed (self, path, entry))
      g_ptr_array_add (paths, g_strdup (path));
  g_ptr_array_sort (paths, compare_paths);
  g_ptr_array_add (paths, NULL);
  return (char **) g_ptr_array_free (paths, FALSE);
}

/**
 * sandbox_template_query_file_type:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path in any accepted form
 *
 * Tells what the template holds at @path.
 *
 * Returns: %G_FILE_TYPE_REGULAR, %G_FILE_TYPE_SYMBOLIC_LINK or
 *   %G_FILE_TYPE_DIRECTORY (an empty directory, or one implied by what lies
 *   below it, the workspace root included); %G_FILE_TYPE_UNKNOWN if @self
 *   holds nothing there or @path is not a valid workspace path
 */
GFileType
sandbox_template_query_file_type (SandboxTemplate *self,
                                  const char      *path)
{
  g_autofree char *canonical = NULL;
  SandboxTemplateEntry *entry;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), G_FILE_TYPE_UNKNOWN);
  g_return_val_if_fail (path != NULL, G_FILE_TYPE_UNKNOWN);

  canonical = sandbox_path_canonicalize (path, NULL);
  if (canonical == NULL)
    return G_FILE_TYPE_UNKNOWN;
  if (g_str_equal (canonical, SANDBOX_WORKSPACE) ||
      g_hash_table_contains (self->directories, canonical))
    return G_FILE_TYPE_DIRECTORY;
  entry = g_hash_table_lookup (self->entries, canonical);
  return entry != NULL ? entry->type : G_FILE_TYPE_UNKNOWN;
}

/* ---- progress ---------------------------------------------------------------- */

void
sandbox_template_begin_progress (SandboxTemplate *self,
                                 GMainContext    *context)
{
  g_mutex_lock (&self->progress_lock);
  g_clear_pointer (&self->progress_context, g_main_context_unref);
  self->progress_context = context != NULL ? g_main_context_ref (context) : NULL;
  self->progress_thread = g_thread_self ();
  self->files_done = 0;
  self->bytes_done = 0;
  g_mutex_unlock (&self->progress_lock);
}

static void
emit_progress (SandboxTemplate *self,
               guint64          files_done,
               guint64          bytes_done)
{
  g_signal_emit (self, signals[SIGNAL_PROGRESS], 0, files_done, (guint64) self->n_regular,
                 bytes_done, self->n_bytes);
}

static gboolean
emit_queued_progress (gpointer data)
{
  SandboxTemplate *self = data;
  guint64 files_done, bytes_done;

  g_mutex_lock (&self->progress_lock);
  g_clear_pointer (&self->progress_idle, g_source_unref);
  files_done = self->files_done;
  bytes_done = self->bytes_done;
  g_mutex_unlock (&self->progress_lock);

  emit_progress (self, files_done, bytes_done);
  return G_SOURCE_REMOVE;
}

void
sandbox_template_report_progress (SandboxTemplate *self,
                                  guint64          bytes,
                                  gboolean         file_done)
{
  guint64 files_done, bytes_done;
  gboolean direct;

  g_mutex_lock (&self->progress_lock);
  self->bytes_done += bytes;
  self->files_done += file_done ? 1 : 0;
  files_done = self->files_done;
  bytes_done = self->bytes_done;
  /* The caller's own thread (a blocking prewarm) emits directly; a worker
   * queues the emission to the caller's context. (Comparing contexts would
   * not do: a worker without one of its own has the global default too.)
   * Without a prewarm (a backend reading on its own), directly. */
  direct = self->progress_context == NULL || g_thread_self () == self->progress_thread;
  if (!direct && self->progress_idle == NULL)
    {
      self->progress_idle = g_idle_source_new ();
      g_source_set_static_name (self->progress_idle, "[sandbox] template progress");
      g_source_set_callback (self->progress_idle, emit_queued_progress, g_object_ref (self),
                             g_object_unref);
      g_source_attach (self->progress_idle, self->progress_context);
    }
  g_mutex_unlock (&self->progress_lock);

  if (direct)
    emit_progress (self, files_done, bytes_done);
}
