/* sandbox-bubblewrap-store-runtimes.c — runtimes: importing, naming, deleting them
 *
 * A runtime is stored as runtimes/<key>/{ready,tree/}: tree/ is the
 * unpacked root file system its sessions see as /usr, /bin, /lib*, /sbin
 * and /etc (sandbox-bubblewrap-args.c), ready its record. It is built like
 * a template: in runtimes/<uuid>, made and flock()ed by
 * sandbox_bubblewrap_store_begin_build(), renamed to runtimes/<key> once
 * whole, and removed by the build leftovers' cleanup when a host died
 * meanwhile. A template naming a runtime records its key in
 * templates/<key>/runtime; a snapshot inherits its parent's.
 *
 * A runtime is never writable by a guest: a root host's files belong to
 * root and guests are other ids; an unprivileged host's are bound
 * read-only, in a user namespace without capabilities, which cannot
 * remount them.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <sys/file.h>

#include <json-glib/json-glib.h>

#include "sandbox-bubblewrap-store-layout-private.h"

#define RUNTIME_TREE "tree"

/* The names the curated /etc binds its own files over
 * (sandbox_bubblewrap_etc_add()). The runtime's etc/ is bound read-only,
 * where bwrap cannot make a missing mount point: made here, empty, at
 * import, so that a sandbox costs one mount per file and none for the
 * rest of the runtime's /etc. (The other way, a tmpfs /etc with each of
 * the runtime's entries bound into it, costs a mount per entry: about 80
 * in a minimal Debian, 0.2 ms each.) Its key is computed before: the
 * same tree imported twice has the same key. */
static const char * const curated_etc_names[] = {
  "passwd", "group", "nsswitch.conf", "hosts", "hostname", "gitconfig", "resolv.conf",
};

static gboolean
runtime_is_stored (SandboxBubblewrapStore *self,
                   const char             *key)
{
  g_autofree char *ready = g_build_filename (self->runtimes, key, "ready", NULL);

  return g_file_test (ready, G_FILE_TEST_IS_REGULAR);
}

static gboolean
set_unknown_runtime (GError    **error,
                     const char *key)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
               "Unknown sandbox runtime %s: import it first", key);
  return FALSE;
}

/* Makes @name below @dir_fd an empty regular file unless it is one: a
 * symbolic link there (resolv.conf often is one) is replaced, since a bind
 * onto it would follow it. Never follows anything. */
static gboolean
make_mount_point (int          dir_fd,
                  const char  *name,
                  GError     **error)
{
  struct stat st;
  int fd;

  if (fstatat (dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (S_ISREG (st.st_mode))
        return TRUE;
      if (!S_ISLNK (st.st_mode))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "The runtime's etc/%s is neither a file nor a symbolic link", name);
          return FALSE;
        }
      if (unlinkat (dir_fd, name, 0) < 0)
        return set_errno_error (error, errno, "Could not replace runtime file etc/", name);
    }
  fd = openat (dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 || fchmod (fd, 0644) < 0)
    {
      int saved_errno = errno;

      if (fd >= 0)
        close (fd);
      return set_errno_error (error, saved_errno, "Could not create runtime file etc/", name);
    }
  close (fd);
  return TRUE;
}

/* Opens (or makes) the real directory @name below @dir_fd; -1 when it is
 * something else, a link above all, which is left alone. */
static int
open_real_directory (int         dir_fd,
                     const char *name,
                     gboolean    create)
{
  if (create)
    mkdirat (dir_fd, name, 0755);
  return openat (dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Gives tree/etc the mount points the curated /etc needs (see above). An
 * etc that is not a directory (a link could lead a bind out of the tree
 * on the host) is refused. The CA bundle's is made only where
 * etc/ssl/certs is a real directory; the sandbox binds over it only then
 * (see sandbox_bubblewrap_etc_add_runtime()). */
static gboolean
prepare_etc (int          tree_fd,
             GError     **error)
{
  g_auto(SandboxBubblewrapFd) etc_fd = open_real_directory (tree_fd, "etc", TRUE);
  g_auto(SandboxBubblewrapFd) ssl_fd = -1;
  g_auto(SandboxBubblewrapFd) certs_fd = -1;

  if (etc_fd < 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "The runtime's etc is not a directory: %s", g_strerror (errno));
      return FALSE;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (curated_etc_names); i++)
    if (!make_mount_point (etc_fd, curated_etc_names[i], error))
      return FALSE;
  ssl_fd = open_real_directory (etc_fd, "ssl", TRUE);
  if (ssl_fd >= 0)
    certs_fd = open_real_directory (ssl_fd, "certs", TRUE);
  return certs_fd < 0 || make_mount_point (certs_fd, "ca-certificates.crt", error);
}

/* runtimes/KEY/ready: {backend, runtimeKey, entries, bytes}. */
static char *
runtime_record (const char *backend,
                const char *key,
                guint64     n_entries,
                guint64     n_bytes)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "backend");
  json_builder_add_string_value (builder, backend);
  json_builder_set_member_name (builder, "runtimeKey");
  json_builder_add_string_value (builder, key);
  json_builder_set_member_name (builder, "entries");
  json_builder_add_int_value (builder, (gint64) n_entries);
  json_builder_set_member_name (builder, "bytes");
  json_builder_add_int_value (builder, (gint64) n_bytes);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/* Completes the runtime built in runtimes/@uuid and renames it to
 * runtimes/@key, unless one is stored there already (*@reused). */
static gboolean
name_runtime (SandboxBubblewrapStore  *self,
              int                      runtimes_fd,
              const char              *uuid,
              const char              *key,
              gboolean                *reused,
              GError                 **error)
{
  g_autofree char *temporary = g_build_filename (self->runtimes, uuid, NULL);
  g_autofree char *tree = g_build_filename (temporary, RUNTIME_TREE, NULL);
  g_autofree char *ready = g_build_filename (temporary, "ready", NULL);
  g_autofree char *directory = g_build_filename (self->runtimes, key, NULL);
  g_autofree char *record = NULL;
  guint64 n_entries, n_bytes;

  *reused = runtime_is_stored (self, key);
  if (*reused)
    return TRUE;
  if (!sandbox_bubblewrap_store_measure_tree (tree, &n_entries, &n_bytes, error))
    return FALSE;
  record = runtime_record (self->name, key, n_entries, n_bytes);
  if (!sandbox_bubblewrap_store_write_new_file (ready, record, self->durable, error) ||
      (self->durable &&
       !sandbox_bubblewrap_store_sync_tree (runtimes_fd, uuid, temporary, 0, error)))
    return FALSE;
  if (rename (temporary, directory) == 0)
    return !self->durable || sync_fd (runtimes_fd, self->runtimes, error);
  if (errno == EEXIST || errno == ENOTEMPTY)
    {
      *reused = TRUE;   /* an identical runtime won the race */
      return TRUE;
    }
  return set_errno_error (error, errno, "Could not store runtime", directory);
}

/**
 * sandbox_bubblewrap_store_import_runtime:
 * @self: a store
 * @source: a root file system or OCI image layout directory
 * @reused: (out): set to whether the runtime was already stored
 * @reporter: the backend whose ::import-progress reports the unpacking
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Unpacks @source into runtimes/<uuid>/tree (sandbox_runtime_import_at()
 * is the contained part), prepares its etc/ and renames it to
 * runtimes/<key>, or drops it when that key is stored already.
 *
 * Returns: (transfer full): the runtime's key, or %NULL with @error set
 */
char *
sandbox_bubblewrap_store_import_runtime (SandboxBubblewrapStore  *self,
                                         GFile                   *source,
                                         gboolean                *reused,
                                         SandboxBackend          *reporter,
                                         GCancellable            *cancellable,
                                         GError                 **error)
{
  g_autofree char *uuid = NULL;
  g_autofree char *key = NULL;
  g_auto(SandboxBubblewrapFd) runtimes_fd = -1;
  g_auto(SandboxBubblewrapFd) build = -1;
  g_auto(SandboxBubblewrapFd) tree_fd = -1;
  gboolean ok = FALSE;

  if (!ensure_directory (self->base, error) || !ensure_directory (self->runtimes, error))
    return NULL;
  runtimes_fd = open_directory (self->runtimes, error);
  if (runtimes_fd < 0 ||
      (build = sandbox_bubblewrap_store_begin_build (self->runtimes, runtimes_fd, &uuid,
                                                       error)) < 0)
    return NULL;
  /* 0755: a root host's guests pass it (the way to it is made for them,
   * see sandbox_bubblewrap_guest_view_expose_runtime()). */
  if (mkdirat (build, RUNTIME_TREE, 0755) < 0 || fchmodat (build, RUNTIME_TREE, 0755, 0) < 0 ||
      (tree_fd = openat (build, RUNTIME_TREE,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    set_errno_error (error, errno, "Could not create directory", RUNTIME_TREE);
  else if ((key = sandbox_runtime_import_reporting (reporter, source, tree_fd, cancellable,
                                                    error)) != NULL)
    ok = prepare_etc (tree_fd, error) &&
         name_runtime (self, runtimes_fd, uuid, key, reused, error);

  /* Gone after a successful rename; a leftover otherwise. */
  sandbox_workspace_remove_tree_at (runtimes_fd, uuid, NULL);
  return ok ? g_steal_pointer (&key) : NULL;
}

/* Reads templates/@key/runtime: TRUE with *@runtime NULL when the
 * template names none. */
static gboolean
read_template_runtime (SandboxBubblewrapStore  *self,
                       const char              *key,
                       char                   **runtime,
                       GError                 **error)
{
  g_autofree char *path = g_build_filename (self->templates, key, "runtime", NULL);
  g_autoptr(GError) local_error = NULL;

  *runtime = NULL;
  if (!g_file_get_contents (path, runtime, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return TRUE;
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (!sandbox_template_key_is_valid (*runtime))
    {
      g_clear_pointer (runtime, g_free);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH,
                   "Sandbox template %s names no valid runtime", key);
      return FALSE;
    }
  return TRUE;
}

/* Whether templates/@key names its runtime writable per session. */
static gboolean
template_runtime_is_writable (SandboxBubblewrapStore *self,
                              const char             *key)
{
  g_autofree char *path = g_build_filename (self->templates, key, RUNTIME_WRITABLE, NULL);

  return g_file_test (path, G_FILE_TEST_EXISTS);
}

/* The runtime @key's sessions run on: a template's own, a snapshot's
 * template's (NULL without one); and, when it is writable, the session's
 * frozen changes to it on the way down, top first (each snapshot's
 * runtime-data, see sandbox-bubblewrap-store-snapshots.c). */
static gboolean
find_runtime (SandboxBubblewrapStore  *self,
              const char              *key,
              char                   **runtime,
              gboolean                *writable,
              GStrvBuilder            *layers,
              GError                 **error)
{
  g_autofree char *current = g_strdup (key);

  *writable = FALSE;
  for (guint depth = 0; depth <= SNAPSHOT_MAX_DEPTH; depth++)
    {
      g_autofree char *parent = NULL;
      g_autofree char *layer = g_build_filename (self->templates, current, RUNTIME_LAYER, NULL);

      if (!read_template_runtime (self, current, runtime, error))
        return FALSE;
      if (*runtime != NULL)
        {
          *writable = template_runtime_is_writable (self, current);
          return TRUE;
        }
      if (g_file_test (layer, G_FILE_TEST_IS_DIR))
        g_strv_builder_add (layers, layer);
      /* A flattened snapshot's runtime-data lies over the runtime's tree:
       * on to the bottom of its line, which names the runtime. */
      if (!sandbox_bubblewrap_store_read_flattened (self, current, &parent, error) ||
          (parent == NULL &&
           !sandbox_bubblewrap_store_read_parent (self, current, &parent, error)))
        return FALSE;
      if (parent == NULL)
        return TRUE;
      g_free (current);
      current = g_steal_pointer (&parent);
    }
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH,
               "Sandbox template %s lies over too many snapshots", key);
  return FALSE;
}

/**
 * sandbox_bubblewrap_store_runtime_of:
 * @self: a store
 * @template_key: a stored template's (or snapshot's) key
 * @key: (out) (transfer full) (nullable): the runtime's key, or %NULL when
 *   the template names none
 * @tree: (out) (transfer full) (nullable): the host path of the runtime's
 *   tree, or %NULL when the template names none (the host's /usr)
 * @writable_lowers: (out) (transfer full) (nullable): for a runtime
 *   writable per session, the lower layers of a session's overlay of it,
 *   top first: the snapshots' changes to it, then @tree; %NULL for a
 *   read-only one
 * @error: return location for a #GError
 *
 * Returns: %TRUE with @tree set, or %FALSE with @error set:
 *   %SANDBOX_ERROR_NOT_FOUND when the runtime it names is not stored
 */
gboolean
sandbox_bubblewrap_store_runtime_of (SandboxBubblewrapStore  *self,
                                     const char              *template_key,
                                     char                   **key,
                                     char                   **tree,
                                     char                  ***writable_lowers,
                                     GError                 **error)
{
  g_autoptr(GStrvBuilder) layers = g_strv_builder_new ();
  g_autofree char *runtime = NULL;
  gboolean writable;

  *key = NULL;
  *tree = NULL;
  *writable_lowers = NULL;
  if (!find_runtime (self, template_key, &runtime, &writable, layers, error))
    return FALSE;
  if (runtime == NULL)
    return TRUE;
  if (!runtime_is_stored (self, runtime))
    return set_unknown_runtime (error, runtime);
  *tree = g_build_filename (self->runtimes, runtime, RUNTIME_TREE, NULL);
  *key = g_steal_pointer (&runtime);
  if (writable)
    {
      g_strv_builder_add (layers, *tree);
      *writable_lowers = g_strv_builder_end (layers);
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_store_lock_runtime:
 * @self: a store
 * @template_: a template being stored
 * @lock_fd: (out): a descriptor holding a shared lock on the runtime the
 *   template names, for as long as it is being stored; -1 when it names none
 * @error: return location for a #GError
 *
 * Checks that the runtime @template_ names is stored, and keeps it so
 * (sandbox_bubblewrap_store_delete_runtime() refuses a locked one) until
 * the template records it.
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_NOT_FOUND naming the key
 *   (%SANDBOX_ERROR_INVALID for what is no key)
 */
gboolean
sandbox_bubblewrap_store_lock_runtime (SandboxBubblewrapStore  *self,
                                       SandboxTemplate         *template_,
                                       int                     *lock_fd,
                                       GError                 **error)
{
  const char *runtime = sandbox_template_get_runtime (template_);
  g_autofree char *ready = NULL;
  int fd;

  *lock_fd = -1;
  if (runtime == NULL)
    return TRUE;
  if (!sandbox_template_key_is_valid (runtime))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Template %s names no runtime key: expected 64 lowercase hexadecimal "
                   "characters", sandbox_template_get_name (template_));
      return FALSE;
    }
  ready = g_build_filename (self->runtimes, runtime, "ready", NULL);
  fd = open (ready, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? set_unknown_runtime (error, runtime)
                           : set_errno_error (error, errno, "Could not open", ready);
  if (TEMP_FAILURE_RETRY (flock (fd, LOCK_SH)) < 0)
    {
      int saved_errno = errno;

      close (fd);
      return set_errno_error (error, saved_errno, "Could not lock runtime", runtime);
    }
  /* A delete that held it meanwhile renamed it away before unlocking. */
  if (!runtime_is_stored (self, runtime))
    {
      close (fd);
      return set_unknown_runtime (error, runtime);
    }
  *lock_fd = fd;
  return TRUE;
}

/**
 * sandbox_bubblewrap_store_record_runtime:
 * @self: a store
 * @template_: a template being stored
 * @build: the host path of the directory it is built in
 * @error: return location for a #GError
 *
 * Writes @build/runtime naming @template_'s runtime, if it has one, and
 * @build/runtime-writable when each session may change it.
 *
 * Returns: %TRUE on success
 */
gboolean
sandbox_bubblewrap_store_record_runtime (SandboxBubblewrapStore  *self,
                                         SandboxTemplate         *template_,
                                         const char              *build,
                                         GError                 **error)
{
  const char *runtime = sandbox_template_get_runtime (template_);
  g_autofree char *path = NULL;
  g_autofree char *writable = NULL;

  if (runtime == NULL)
    return TRUE;
  path = g_build_filename (build, "runtime", NULL);
  writable = g_build_filename (build, RUNTIME_WRITABLE, NULL);
  return sandbox_bubblewrap_store_write_new_file (path, runtime, self->durable, error) &&
         (!sandbox_template_get_runtime_writable (template_) ||
          sandbox_bubblewrap_store_write_new_file (writable, "", self->durable, error));
}

/* How many stored templates name @key, and how many stored sessions run
 * on it. */
static void
count_users (SandboxBubblewrapStore *self,
             const char             *key,
             GPtrArray              *templates,
             GPtrArray              *states,
             guint                  *n_templates,
             guint                  *n_sessions)
{
  *n_templates = 0;
  *n_sessions = 0;
  for (guint i = 0; i < templates->len; i++)
    {
      g_autofree char *runtime = NULL;

      if (read_template_runtime (self, templates->pdata[i], &runtime, NULL) &&
          g_strcmp0 (runtime, key) == 0)
        {
          (*n_templates)++;
          if (states != NULL)
            *n_sessions += count_sessions_of (states, templates->pdata[i]);
        }
    }
}

static SandboxRuntimeInfo *
read_runtime_info (SandboxBubblewrapStore *self,
                   const char             *key,
                   GPtrArray              *templates,
                   GPtrArray              *states)
{
  g_autofree char *ready = g_build_filename (self->runtimes, key, "ready", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *record;
  JsonNode *root;
  guint n_templates, n_sessions;

  /* Another backend's, or damaged: not listed. */
  if (!g_file_get_contents (ready, &contents, NULL, NULL) ||
      !json_parser_load_from_data (parser, contents, -1, NULL) ||
      (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  record = json_node_get_object (root);
  if (g_strcmp0 (json_object_get_string_member_with_default (record, "backend", ""),
                 self->name) != 0)
    return NULL;
  count_users (self, key, templates, states, &n_templates, &n_sessions);
  return sandbox_runtime_info_new (key, json_object_get_int_member_with_default (record, "entries", 0),
                                   json_object_get_int_member_with_default (record, "bytes", 0),
                                   n_templates, n_sessions);
}

/**
 * sandbox_bubblewrap_store_list_runtimes:
 * @self: a store
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: (transfer container) (element-type SandboxRuntimeInfo): the
 *   stored runtimes, or %NULL with @error set
 */
GPtrArray *
sandbox_bubblewrap_store_list_runtimes (SandboxBubblewrapStore  *self,
                                        GCancellable            *cancellable,
                                        GError                 **error)
{
  g_autoptr(GPtrArray) keys = sandbox_bubblewrap_store_list_ids (self->runtimes, error);
  g_autoptr(GPtrArray) templates = NULL;
  g_autoptr(GPtrArray) states = NULL;
  g_autoptr(GPtrArray) runtimes = g_ptr_array_new_with_free_func (g_object_unref);

  if (keys == NULL ||
      (templates = sandbox_bubblewrap_store_list_ids (self->templates, error)) == NULL ||
      (states = sandbox_bubblewrap_store_collect_states (self, error)) == NULL)
    return NULL;
  for (guint i = 0; i < keys->len; i++)
    {
      SandboxRuntimeInfo *info;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      info = read_runtime_info (self, keys->pdata[i], templates, states);
      if (info != NULL)
        g_ptr_array_add (runtimes, info);
    }
  return g_steal_pointer (&runtimes);
}

/**
 * sandbox_bubblewrap_store_delete_runtime:
 * @self: a store
 * @key: a runtime key (checked by the caller)
 * @error: return location for a #GError
 *
 * Removes a runtime no stored template names.
 *
 * Returns: %TRUE when it is gone, or %FALSE with @error set:
 *   %SANDBOX_ERROR_NOT_FOUND, %SANDBOX_ERROR_BUSY (templates name it, or
 *   one naming it is being stored)
 */
gboolean
sandbox_bubblewrap_store_delete_runtime (SandboxBubblewrapStore  *self,
                                         const char              *key,
                                         GError                 **error)
{
  g_autofree char *ready = g_build_filename (self->runtimes, key, "ready", NULL);
  g_autoptr(GPtrArray) templates = NULL;
  g_auto(SandboxBubblewrapFd) ready_fd = -1;
  guint n_templates, n_sessions;

  g_return_val_if_fail (sandbox_template_key_is_valid (key), FALSE);

  ready_fd = open (ready, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (ready_fd < 0)
    return errno == ENOENT ? set_unknown_runtime (error, key)
                           : set_errno_error (error, errno, "Could not open", ready);
  /* Held until it is renamed away: a prewarm naming it waits for none,
   * it is refused here (see sandbox_bubblewrap_store_lock_runtime()). */
  if (!sandbox_bubblewrap_store_try_lock_entry (ready_fd, "runtime", key,
                                                "a template naming it is being stored", error))
    return FALSE;
  templates = sandbox_bubblewrap_store_list_ids (self->templates, error);
  if (templates == NULL)
    return FALSE;
  count_users (self, key, templates, NULL, &n_templates, &n_sessions);
  if (n_templates > 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "Sandbox runtime %s is named by %u stored templates; delete them first",
                   key, n_templates);
      return FALSE;
    }
  return sandbox_bubblewrap_store_remove_entry (self, self->runtimes, key, "runtime", error);
}
