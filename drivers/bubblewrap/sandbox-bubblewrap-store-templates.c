/* sandbox-bubblewrap-store-templates.c — templates: storing, checking and deleting them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/pidfd.h>
#include <sys/stat.h>

#include <json-glib/json-glib.h>

#include "sandbox-bubblewrap-store-layout-private.h"

/* Templates -------------------------------------------------------------- */

/* templates/KEY/ready: {backend, templateKey, name}. The name is only
 * for listings (the key covers it); records written before it was added
 * have none. */
char *
sandbox_bubblewrap_store_ready_record (const char *backend,
                                       const char *template_key,
                                       const char *name)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "backend");
  json_builder_add_string_value (builder, backend);
  json_builder_set_member_name (builder, "templateKey");
  json_builder_add_string_value (builder, template_key);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, name);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/* Modes in data/ are what a guest sees (data/ is an overlay's lower layer,
 * or what a copy reads): 0755 for directories and executables, 0644 for
 * other files, whatever the umask. templates/ itself is 0700. */
#define TEMPLATE_DIRECTORY_MODE 0755
#define TEMPLATE_FILE_MODE 0644
#define TEMPLATE_EXECUTABLE_MODE 0755

#define TEMPLATE_COPY_BUFFER_SIZE (64 * 1024)

/* What every file of one write of data/ shares. */
typedef struct
{
  guint8 *buffer;          /* TEMPLATE_COPY_BUFFER_SIZE bytes */
  gboolean umask_clears;   /* whether the umask may take bits off a file's mode */
} TemplateWrite;

/* Whether the process's umask may clear bits of TEMPLATE_EXECUTABLE_MODE,
 * so that each created file needs an fchmod() (a twelfth of a 4 KiB
 * file's import on ext4). umask() cannot be read without setting it,
 * which would race other threads' creates, so it is read from
 * /proc/self/status; where that fails, assume it may. */
static gboolean
umask_may_clear_template_modes (void)
{
  g_autofree char *status = NULL;
  const char *line;
  char *end;
  guint64 mask;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return TRUE;
  line = strstr (status, "\nUmask:\t");
  if (line == NULL)
    return TRUE;
  line += strlen ("\nUmask:\t");
  mask = g_ascii_strtoull (line, &end, 8);
  if (end == line || *end != '\n' || mask > 0777)
    return TRUE;
  return (mask & TEMPLATE_EXECUTABLE_MODE) != 0;
}

static gboolean
make_template_directory (int          data_fd,
                         const char  *relative,
                         GError     **error)
{
  if (mkdirat (data_fd, relative, TEMPLATE_DIRECTORY_MODE) < 0 ||
      fchmodat (data_fd, relative, TEMPLATE_DIRECTORY_MODE, 0) < 0)
    return set_errno_error (error, errno, "Could not create template directory", relative);
  return TRUE;
}

/* Creates the directories leading to @relative below @data_fd, once each. */
static gboolean
ensure_parent_directories (int          data_fd,
                           const char  *relative,
                           GHashTable  *created,
                           GError     **error)
{
  g_autofree char *parents = g_strdup (relative);
  char *slash = parents;

  while ((slash = strchr (slash, '/')) != NULL)
    {
      *slash = '\0';
      if (!g_hash_table_contains (created, parents))
        {
          if (!make_template_directory (data_fd, parents, error))
            return FALSE;
          g_hash_table_add (created, g_strdup (parents));
        }
      *slash++ = '/';
    }
  return TRUE;
}

/* Streams one file's contents from the template into @fd. The template's
 * stream checks them against the key at its end, so this succeeds only if
 * what was written is what the key covers. */
static gboolean
copy_template_contents (SandboxTemplate  *template_,
                        const char       *canonical,
                        int               fd,
                        guint8           *buffer,
                        GCancellable     *cancellable,
                        GError          **error)
{
  g_autoptr(GInputStream) contents = sandbox_template_read_file (template_, canonical,
                                                                 cancellable, error);

  if (contents == NULL)
    return FALSE;
  while (TRUE)
    {
      gssize n = g_input_stream_read (contents, buffer, TEMPLATE_COPY_BUFFER_SIZE,
                                      cancellable, error);

      if (n < 0)
        return FALSE;
      if (n == 0)
        return TRUE;
      if (!sandbox_bubblewrap_write_fully (fd, buffer, n))
        return set_errno_error (error, errno, "Could not write template file",
                                sandbox_path_relative (canonical));
    }
}

static gboolean
write_template_file (SandboxTemplate      *template_,
                     int                   data_fd,
                     const char           *canonical,
                     const TemplateWrite  *write,
                     GCancellable         *cancellable,
                     GError              **error)
{
  const char *relative = sandbox_path_relative (canonical);
  mode_t mode = (sandbox_template_get_file_flags (template_, canonical) &
                 SANDBOX_TEMPLATE_FILE_EXECUTABLE) ? TEMPLATE_EXECUTABLE_MODE
                                                   : TEMPLATE_FILE_MODE;
  g_auto(SandboxBubblewrapFd) fd = -1;

  fd = openat (data_fd, relative, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0 || (write->umask_clears && fchmod (fd, mode) < 0))
    return set_errno_error (error, errno, "Could not create template file", relative);
  return copy_template_contents (template_, canonical, fd, write->buffer, cancellable, error);
}

/* One entry of the template into data/: a file, a symbolic link (its
 * target verbatim; symlinkat() never resolves it) or an empty directory. */
static gboolean
write_template_entry (SandboxTemplate      *template_,
                      int                   data_fd,
                      const char           *canonical,
                      const TemplateWrite  *write,
                      GCancellable         *cancellable,
                      GError              **error)
{
  const char *relative = sandbox_path_relative (canonical);

  switch (sandbox_template_query_file_type (template_, canonical))
    {
    case G_FILE_TYPE_REGULAR:
      return write_template_file (template_, data_fd, canonical, write, cancellable, error);
    case G_FILE_TYPE_SYMBOLIC_LINK:
      if (symlinkat (sandbox_template_lookup_symlink (template_, canonical), data_fd,
                     relative) < 0)
        return set_errno_error (error, errno, "Could not create template link", relative);
      return TRUE;
    case G_FILE_TYPE_DIRECTORY:
      return make_template_directory (data_fd, relative, error);
    default:
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template entry %s is of no kind a workspace can hold", canonical);
      return FALSE;
    }
}

/* The template is built in a fresh directory private to the trusted host
 * (no guest ever sees it before the rename), so plain *at() calls are safe
 * here: none of the contained-I/O defences against a racing guest, and one
 * open, write and close per file — as cheap as `cp -r`. Entries come in
 * byte order, parents first; a template never has an entry below a file or
 * link, so no path written here goes through a link written before. */
static gboolean
write_template_files (SandboxTemplate  *template_,
                      int               data_fd,
                      GCancellable     *cancellable,
                      GError          **error)
{
  g_auto(GStrv) paths = sandbox_template_list_paths (template_);
  g_autoptr(GHashTable) created = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autofree guint8 *buffer = g_malloc (TEMPLATE_COPY_BUFFER_SIZE);
  TemplateWrite write = { buffer, umask_may_clear_template_modes () };

  for (guint i = 0; paths[i] != NULL; i++)
    {
      g_autofree char *canonical = sandbox_path_canonicalize (paths[i], error);

      if (canonical == NULL)
        return FALSE;
      if (g_strcmp0 (canonical, SANDBOX_WORKSPACE) == 0)
        return sandbox_set_error_template_root (error);
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      if (!ensure_parent_directories (data_fd, sandbox_path_relative (canonical), created,
                                      error) ||
          !write_template_entry (template_, data_fd, canonical, &write, cancellable, error))
        return FALSE;
    }
  return TRUE;
}

/* Marks a template a prewarm read entirely: every file it had then has
 * its digest, so its key costs no reading any more. Only a hint: a file
 * added since is read by sandbox_template_compute_key() (and read again,
 * checked, by the copy), which costs what it did before files were hashed
 * as they were copied, and stores the same. */
static GQuark
read_quark (void)
{
  return g_quark_from_static_string ("sandbox-bubblewrap-template-read");
}

/* Whether the key of @template_ can be computed without reading its files
 * (as far as the public API tells): every regular file is held in memory,
 * or a prewarm read them all. Imported files are hashed when first read. */
static gboolean
key_is_known (SandboxTemplate *template_)
{
  g_auto(GStrv) paths = NULL;

  if (g_object_get_qdata (G_OBJECT (template_), read_quark ()) != NULL)
    return TRUE;
  paths = sandbox_template_list_paths (template_);
  for (guint i = 0; paths[i] != NULL; i++)
    if (sandbox_template_query_file_type (template_, paths[i]) == G_FILE_TYPE_REGULAR &&
        sandbox_template_lookup_file (template_, paths[i]) == NULL)
      return FALSE;
  return TRUE;
}

/* Whether a template named @name may be stored here. Its key covers the
 * name, so a stored template with that key has a record with that name:
 * with none, the key cannot be stored and copying first costs nothing
 * extra. Records from before names were recorded have none and count as
 * "maybe", as does a store that cannot be listed. */
static gboolean
name_may_be_stored (SandboxBubblewrapStore *self,
                    const char             *name)
{
  g_autoptr(GPtrArray) keys = sandbox_bubblewrap_store_list_ids (self->templates, NULL);

  if (keys == NULL)
    return TRUE;
  for (guint i = 0; i < keys->len; i++)
    {
      g_autofree char *stored = NULL;

      /* Another backend's, or damaged: never this template's key. */
      if (!sandbox_bubblewrap_store_read_template_name (self, keys->pdata[i], &stored, NULL))
        continue;
      if (stored == NULL || g_str_equal (stored, name))
        return TRUE;
    }
  return FALSE;
}

/* Refuses, before anything is copied, what sandbox_template_compute_key()
 * would refuse after: it checks the names first, and an empty template
 * with the same name has nothing to read. */
static gboolean
check_key_names (SandboxBubblewrapStore  *self,
                 SandboxTemplate         *template_,
                 GError                 **error)
{
  g_autoptr(SandboxTemplate) empty = sandbox_template_new (sandbox_template_get_name (template_));
  g_autofree char *key = sandbox_template_compute_key (empty, self->name, error);

  return key != NULL;
}

static gboolean
template_is_stored (SandboxBubblewrapStore *self,
                    const char             *key)
{
  g_autofree char *ready = g_build_filename (self->templates, key, "ready", NULL);

  return g_file_test (ready, G_FILE_TEST_IS_REGULAR);
}

/* Builds in progress ------------------------------------------------------
 *
 * A template or a snapshot is built in templates/<uuid> and renamed to
 * templates/<key> once whole. Its builder holds an flock() on that
 * directory until it is renamed or removed, so what a host killed
 * meanwhile left is a directory nobody locks:
 * sandbox_bubblewrap_store_remove_build_leftovers() removes those. One
 * changed less than LEFTOVER_MIN_AGE_S ago is left alone: its builder may
 * be between the mkdir() and the flock() (the directory's mtime, not its
 * ctime, so that a test can age it). */
#define LEFTOVER_MIN_AGE_S 60

/**
 * sandbox_bubblewrap_store_begin_build:
 * @directory: the host path of templates/ (or runtimes/), for errors
 * @templates_fd: its descriptor
 * @uuid: (out) (transfer full): the new directory's name
 * @error: return location for a #GError
 *
 * Makes templates/<uuid> for a template or a snapshot to be built in
 * (runtimes/<uuid> for a runtime).
 *
 * Returns: the directory's descriptor, locked until it is closed; -1 with
 *   @error set
 */
int
sandbox_bubblewrap_store_begin_build (const char              *directory,
                                      int                      templates_fd,
                                      char                   **uuid,
                                      GError                 **error)
{
  g_autofree char *name = g_uuid_string_random ();
  g_auto(SandboxBubblewrapFd) fd = -1;

  if (mkdirat (templates_fd, name, 0700) < 0 ||
      (fd = openat (templates_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
      TEMP_FAILURE_RETRY (flock (fd, LOCK_EX)) < 0)
    {
      int saved_errno = errno;
      g_autofree char *path = g_build_filename (directory, name, NULL);

      unlinkat (templates_fd, name, AT_REMOVEDIR);
      return set_errno_error (error, saved_errno, "Could not create directory", path), -1;
    }
  *uuid = g_steal_pointer (&name);
  return g_steal_fd (&fd);
}

/* Whether templates/@name is a build its builder no longer holds. */
static gboolean
is_build_leftover (int         templates_fd,
                   const char *name)
{
  g_auto(SandboxBubblewrapFd) fd = -1;
  struct stat st;

  if (!g_uuid_string_is_valid (name) ||
      fstatat (templates_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR (st.st_mode) ||
      st.st_mtime > time (NULL) - LEFTOVER_MIN_AGE_S)
    return FALSE;
  /* Nobody takes an abandoned build up again: the lock need not be kept
   * while it is removed (another store opening may remove it first). */
  fd = openat (templates_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  return fd >= 0 && flock (fd, LOCK_EX | LOCK_NB) == 0;
}

/* Removes the builds in @directory (templates/ or runtimes/) that nobody
 * holds. */
static guint
remove_build_leftovers_in (const char *directory)
{
  g_autoptr(GDir) dir = g_dir_open (directory, 0, NULL);
  g_auto(SandboxBubblewrapFd) templates_fd = -1;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  guint removed = 0;
  const char *name;

  if (dir == NULL || (templates_fd = open_directory (directory, NULL)) < 0)
    return 0;
  /* Listed first: removing while reading a directory may skip entries. */
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  for (guint i = 0; i < names->len; i++)
    {
      const char *leftover = g_ptr_array_index (names, i);

      if (!is_build_leftover (templates_fd, leftover))
        continue;
      if (sandbox_workspace_remove_tree_at (templates_fd, leftover, NULL))
        removed++;
    }
  if (removed > 0)
    g_log_structured ("Sandbox", G_LOG_LEVEL_INFO, "SANDBOX_EVENT", "leftovers",
                      "SANDBOX_DRIVER", "bubblewrap",
                      "MESSAGE", "Removed %u half-built templates, snapshots or runtimes in %s",
                      removed, directory);
  return removed;
}

/**
 * sandbox_bubblewrap_store_remove_build_leftovers:
 * @self: a store
 *
 * Removes the templates, snapshots and runtimes that builders killed with
 * their host left half-built (see above). Best effort.
 *
 * Returns: how many were removed
 */
guint
sandbox_bubblewrap_store_remove_build_leftovers (SandboxBubblewrapStore *self)
{
  return remove_build_leftovers_in (self->templates) + remove_build_leftovers_in (self->runtimes);
}

/* Completes the template built in templates/@uuid and renames it to
 * templates/@key, unless one is stored there already (*@reused). */
static gboolean
name_template (SandboxBubblewrapStore  *self,
               SandboxTemplate         *template_,
               int                      templates_fd,
               const char              *uuid,
               const char              *key,
               gboolean                *reused,
               GError                 **error)
{
  g_autofree char *temporary = g_build_filename (self->templates, uuid, NULL);
  g_autofree char *ready = g_build_filename (temporary, "ready", NULL);
  g_autofree char *directory = g_build_filename (self->templates, key, NULL);
  g_autofree char *record = sandbox_bubblewrap_store_ready_record (self->name, key, sandbox_template_get_name (template_));

  *reused = template_is_stored (self, key);
  if (*reused)
    return TRUE;
  if (!sandbox_bubblewrap_store_record_runtime (self, template_, temporary, error) ||
      !sandbox_bubblewrap_store_write_new_file (ready, record, self->durable, error) ||
      (self->durable &&
       !sandbox_bubblewrap_store_sync_tree (templates_fd, uuid, temporary, 0, error)))
    return FALSE;
  if (rename (temporary, directory) == 0)
    return !self->durable || sync_fd (templates_fd, self->templates, error);
  if (errno == EEXIST || errno == ENOTEMPTY)
    return TRUE;   /* an identical template won the race */
  return set_errno_error (error, errno, "Could not store template", directory);
}

/* Builds the template in templates/<uuid> and renames it to
 * templates/<key>. @known_key is NULL when some imported file was never
 * read: the files' digests, and so the key, are learnt as they are copied
 * (one read of each file, hashed as it is written). Whether the key is
 * stored is looked at again at the end (*@reused: another prewarm stored
 * it meanwhile; the copy is dropped). Returns the key. */
static char *
create_template (SandboxBubblewrapStore  *self,
                 SandboxTemplate         *template_,
                 const char              *known_key,
                 gboolean                *reused,
                 GCancellable            *cancellable,
                 GError                 **error)
{
  g_autofree char *uuid = NULL;
  g_autofree char *data = NULL;
  g_autofree char *key = NULL;
  g_auto(SandboxBubblewrapFd) templates_fd = -1;
  g_auto(SandboxBubblewrapFd) build = -1;
  g_autoptr(SandboxWorkspace) data_files = NULL;
  gboolean ok = FALSE;

  templates_fd = open_directory (self->templates, error);
  if (templates_fd < 0 ||
      (build = sandbox_bubblewrap_store_begin_build (self->templates, templates_fd, &uuid,
                                                       error)) < 0)
    return NULL;
  data = g_build_filename (self->templates, uuid, "data", NULL);

  if (mkdir (data, 0700) < 0)
    set_errno_error (error, errno, "Could not create directory", data);
  else if ((data_files = sandbox_workspace_open (data, SANDBOX_WORKSPACE_FLAGS_NONE, error)) &&
           write_template_files (template_, sandbox_workspace_get_fd (data_files), cancellable,
                                 error))
    {
      /* Every file was read to its end without a change: no more I/O here. */
      key = known_key != NULL ? g_strdup (known_key)
                              : sandbox_template_compute_key (template_, self->name, error);
      ok = key != NULL && name_template (self, template_, templates_fd, uuid, key, reused, error);
    }

  /* Gone after a successful rename; a leftover otherwise. */
  sandbox_workspace_remove_tree_at (templates_fd, uuid, NULL);
  return ok ? g_steal_pointer (&key) : NULL;
}

/**
 * sandbox_bubblewrap_store_prewarm:
 * @self: a store
 * @template_: the template
 * @reused: (out) (optional): set to whether the template was already stored
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Stores @template_ under its content-addressed key.
 *
 * Returns: (transfer full): the template key, or %NULL with @error set
 */
char *
sandbox_bubblewrap_store_prewarm (SandboxBubblewrapStore  *self,
                                  SandboxTemplate         *template_,
                                  gboolean                *reused,
                                  GCancellable            *cancellable,
                                  GError                 **error)
{
  g_autofree char *key = NULL;
  g_auto(SandboxBubblewrapFd) runtime_lock = -1;
  gboolean stored = FALSE;
  char *created;

  if (!check_key_names (self, template_, error))
    return NULL;
  /* Held until the template is stored: its runtime cannot go meanwhile. */
  if (!sandbox_bubblewrap_store_lock_runtime (self, template_, &runtime_lock, error))
    return NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  if (!ensure_directory (self->base, error) || !ensure_directory (self->templates, error))
    return NULL;

  /* Where the key costs no reading, a stored template is not read again.
   * Otherwise reading the files only to learn the key would read each
   * twice (hash, then copy and check it); they are hashed as they are
   * copied instead, unless a template of this name is stored, which may be
   * this one: then hashing first spares a copy that would be dropped (and
   * costs, if it is not this one, the two reads it always did). */
  if (key_is_known (template_) ||
      name_may_be_stored (self, sandbox_template_get_name (template_)))
    {
      key = sandbox_template_compute_key (template_, self->name, error);
      if (key == NULL)
        return NULL;
      if (template_is_stored (self, key))
        {
          if (reused != NULL)
            *reused = TRUE;
          return g_steal_pointer (&key);
        }
    }

  created = create_template (self, template_, key, &stored, cancellable, error);
  if (created == NULL)
    return NULL;
  g_object_set_qdata (G_OBJECT (template_), read_quark (), GINT_TO_POINTER (TRUE));
  if (reused != NULL)
    *reused = stored;
  return created;
}

/* Reads templates/<key>/ready: its record's string member @member, or NULL. */
static char *
dup_record_member (JsonObject *record,
                   const char *member)
{
  JsonNode *node = json_object_get_member (record, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return g_strdup (json_node_get_string (node));
}

/* Checks templates/<key>/ready against this backend; @name (optional) gets
 * the template's name, or NULL if the record has none. */
static gboolean
read_template_record (SandboxBubblewrapStore  *self,
                      const char              *key,
                      char                   **name,
                      GError                 **error)
{
  g_autofree char *ready = g_build_filename (self->templates, key, "ready", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local_error = NULL;
  g_autofree char *backend = NULL;
  g_autofree char *template_key = NULL;
  JsonNode *root;

  if (!g_file_get_contents (ready, &contents, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        sandbox_set_error_unknown_template (error, key);
      else
        g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  if (json_parser_load_from_data (parser, contents, -1, NULL) &&
      (root = json_parser_get_root (parser)) != NULL && JSON_NODE_HOLDS_OBJECT (root))
    {
      backend = dup_record_member (json_node_get_object (root), "backend");
      template_key = dup_record_member (json_node_get_object (root), "templateKey");
      if (name != NULL)
        *name = dup_record_member (json_node_get_object (root), "name");
    }
  if (g_strcmp0 (backend, self->name) != 0 || g_strcmp0 (template_key, key) != 0)
    {
      if (name != NULL)
        g_clear_pointer (name, g_free);
      return sandbox_set_error_foreign_template (error);
    }
  return TRUE;
}

gboolean
sandbox_bubblewrap_store_check_template (SandboxBubblewrapStore  *self,
                                         const char              *key,
                                         GError                 **error)
{
  return read_template_record (self, key, NULL, error);
}

/* Checks the template as sandbox_bubblewrap_store_check_template() does
 * and sets @name to its recorded name (NULL if it has none). */
gboolean
sandbox_bubblewrap_store_read_template_name (SandboxBubblewrapStore  *self,
                                             const char              *key,
                                             char                   **name,
                                             GError                 **error)
{
  *name = NULL;
  return read_template_record (self, key, name, error);
}

/**
 * sandbox_bubblewrap_store_open_template:
 * @self: a store
 * @key: a stored template's key
 * @error: return location for a #GError
 *
 * For sandbox_backend_open_template_files().
 *
 * Returns: an O_PATH directory descriptor, or -1 with @error set
 */
int
sandbox_bubblewrap_store_open_template (SandboxBubblewrapStore  *self,
                                        const char              *key,
                                        GError                 **error)
{
  g_autofree char *data = NULL;
  int fd;

  if (!sandbox_template_key_is_valid (key))
    {
      sandbox_set_error_unknown_template (error, key);
      return -1;
    }
  if (!read_template_record (self, key, NULL, error))
    return -1;
  data = g_build_filename (self->templates, key, "data", NULL);
  fd = open (data, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    sandbox_set_error_unknown_template (error, key);
  else if (fd < 0)
    set_errno_error (error, errno, "Could not open", data);
  return fd;
}

/**
 * sandbox_bubblewrap_store_try_lock_entry:
 * @ready_fd: an entry's `ready` record, open
 * @what: "template" or "runtime", for the messages
 * @key: the entry's key
 * @busy_reason: why a held lock means it is busy
 * @error: return location for a #GError
 *
 * Takes an exclusive flock() on an entry about to be deleted, without
 * waiting: whoever holds a shared one is using it.
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_BUSY naming @busy_reason
 */
gboolean
sandbox_bubblewrap_store_try_lock_entry (int          ready_fd,
                                         const char  *what,
                                         const char  *key,
                                         const char  *busy_reason,
                                         GError     **error)
{
  if (flock (ready_fd, LOCK_EX | LOCK_NB) == 0)
    return TRUE;
  if (errno != EWOULDBLOCK)
    {
      g_autofree char *doing = g_strdup_printf ("Could not lock %s", what);

      return set_errno_error (error, errno, doing, key);
    }
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY, "Sandbox %s %s is in use: %s", what,
               key, busy_reason);
  return FALSE;
}

/**
 * sandbox_bubblewrap_store_remove_entry:
 * @self: a store
 * @parent: the store's directory of such entries (templates/, runtimes/)
 * @key: the entry's name there, locked by the caller
 * @what: "template" or "runtime", for the messages
 * @error: return location for a #GError
 *
 * Renames the entry out of sight (to a random name, which a restart
 * cleans as a leftover if this process dies), syncs @parent when the store
 * is durable, and removes it without following a link.
 *
 * Returns: %TRUE when it is gone, or %FALSE with @error set
 */
gboolean
sandbox_bubblewrap_store_remove_entry (SandboxBubblewrapStore  *self,
                                       const char              *parent,
                                       const char              *key,
                                       const char              *what,
                                       GError                 **error)
{
  g_autofree char *directory = g_build_filename (parent, key, NULL);
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *doomed = g_build_filename (parent, uuid, NULL);
  g_auto(SandboxBubblewrapFd) parent_fd = open_directory (parent, error);

  if (parent_fd < 0)
    return FALSE;
  if (rename (directory, doomed) < 0)
    {
      g_autofree char *doing = g_strdup_printf ("Could not remove %s", what);

      return set_errno_error (error, errno, doing, directory);
    }
  if (self->durable && !sync_fd (parent_fd, parent, error))
    return FALSE;
  /* Out of sight now: what a failure here leaves is an unnamed leftover. */
  return sandbox_workspace_remove_tree_at (parent_fd, uuid, error);
}

/*
 * Deleting a template. Sessions are copies, but a resume checks the
 * template it came from, so a template with stored sessions stays (BUSY).
 * A create holds a shared flock() on templates/<key>/ready from checking
 * the template until its state.json names it (lock_template()); the delete
 * takes it exclusively (without waiting: BUSY), counts the sessions, and
 * renames the template out of the way before removing it, so a create that
 * waited for the lock finds no template (NOT_FOUND).
 */

static int
open_template_ready (SandboxBubblewrapStore  *self,
                     const char              *key,
                     GError                 **error)
{
  g_autofree char *ready = g_build_filename (self->templates, key, "ready", NULL);
  int fd = open (ready, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

  if (fd < 0 && errno == ENOENT)
    sandbox_set_error_unknown_template (error, key);
  else if (fd < 0)
    set_errno_error (error, errno, "Could not open", ready);
  return fd;
}

/* A shared lock on the template, held while a session is created from it. */
int
sandbox_bubblewrap_store_lock_template (SandboxBubblewrapStore  *self,
                                        const char              *key,
                                        GError                 **error)
{
  g_auto(SandboxBubblewrapFd) fd = open_template_ready (self, key, error);

  if (fd < 0)
    return -1;
  if (TEMP_FAILURE_RETRY (flock (fd, LOCK_SH)) < 0)
    return set_errno_error (error, errno, "Could not lock template", key), -1;
  return g_steal_fd (&fd);
}

/**
 * sandbox_bubblewrap_store_delete_template:
 * @self: a store
 * @key: a template key (checked by the caller)
 * @error: return location for a #GError
 *
 * Removes a template no stored session was created from.
 *
 * Returns: %TRUE when it is gone, or %FALSE with @error set:
 *   %SANDBOX_ERROR_NOT_FOUND, %SANDBOX_ERROR_BUSY (sessions of it exist, or
 *   one is being created), %SANDBOX_ERROR_STATE_MISMATCH (another backend's)
 */
gboolean
sandbox_bubblewrap_store_delete_template (SandboxBubblewrapStore  *self,
                                          const char              *key,
                                          GError                 **error)
{
  g_auto(SandboxBubblewrapFd) ready_fd = -1;
  g_autoptr(GPtrArray) states = NULL;
  guint n_sessions;

  g_return_val_if_fail (sandbox_template_key_is_valid (key), FALSE);

  ready_fd = open_template_ready (self, key, error);
  if (ready_fd < 0)
    return FALSE;
  if (!sandbox_bubblewrap_store_try_lock_entry (ready_fd, "template", key,
                                                "a session is being created from it", error))
    return FALSE;
  if (!sandbox_bubblewrap_store_check_template (self, key, error) ||
      (states = sandbox_bubblewrap_store_collect_states (self, error)) == NULL)
    return FALSE;
  n_sessions = count_sessions_of (states, key);
  if (n_sessions > 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "Sandbox template %s is used by %u stored sessions; delete them first",
                   key, n_sessions);
      return FALSE;
    }
  /* Each snapshot over it is a session's lower layer, or will be. */
  n_sessions = sandbox_bubblewrap_store_count_children (self, key);
  if (n_sessions > 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "Sandbox template %s has %u stored snapshots over it; delete them first",
                   key, n_sessions);
      return FALSE;
    }
  return sandbox_bubblewrap_store_remove_entry (self, self->templates, key, "template", error);
}
