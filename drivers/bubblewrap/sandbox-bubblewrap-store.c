/* sandbox-bubblewrap-store.c — templates, sessions and leases on disk
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

#include "sandbox-bubblewrap-store-private.h"

/*
 * The layout and semantics are the reference's sandboxStorage. The state
 * directory belongs to the trusted host; only workspace contents are shaped
 * by guests, so everything that walks into a workspace (copying a template
 * in, removing a session) goes through SandboxWorkspace, which never
 * follows a link out.
 *
 * Templates are written into a temporary directory and renamed into place;
 * losing that race to an identical key is fine. Directories are 0700, files
 * 0600.
 */

struct _SandboxBubblewrapStore
{
  char *root;       /* the realpath of the state directory */
  char *name;
  char *base;       /* root/sha256(name) */
  char *templates;  /* base/templates */
  char *sessions;   /* base/sessions */
  gboolean durable; /* fsync before renames and state writes */
  SandboxWorkspaceOwner guest;   /* who owns workspaces */
  gboolean give;    /* whether that is not the host: workspaces are given to it */
};

static gboolean
set_errno_error (GError    **error,
                 int         saved_errno,
                 const char *what,
                 const char *path)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "%s %s: %s", what, path, g_strerror (saved_errno));
  return FALSE;
}

static char *
sha256_hex (const char *text)
{
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, text, -1);
}

/* mkdir that accepts an existing directory. */
static gboolean
ensure_directory (const char  *path,
                  GError     **error)
{
  if (mkdir (path, 0700) == 0 || errno == EEXIST)
    return TRUE;
  return set_errno_error (error, errno, "Could not create directory", path);
}

static int
open_directory (const char  *path,
                GError     **error)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

  if (fd < 0)
    set_errno_error (error, errno, "Could not open directory", path);
  return fd;
}

/* Durability --------------------------------------------------------------- */

/* fsync()s @fd, the descriptor of @path. */
static gboolean
sync_fd (int          fd,
         const char  *path,
         GError     **error)
{
  if (fsync (fd) < 0)
    return set_errno_error (error, errno, "Could not sync", path);
  return TRUE;
}

static gboolean
sync_directory (const char  *path,
                GError     **error)
{
  g_auto(SandboxBubblewrapFd) fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

  if (fd < 0)
    return set_errno_error (error, errno, "Could not open directory", path);
  return sync_fd (fd, path, error);
}

/* fsync()s every file and directory of the tree @name under @parent_fd,
 * children before their directory. Never follows a link: the tree may be a
 * workspace a guest shaped. @path names the tree in errors. */
static gboolean
sync_tree (int          parent_fd,
           const char  *name,
           const char  *path,
           guint        depth,
           GError     **error)
{
  g_auto(SandboxBubblewrapFd) fd = -1;
  struct stat st;
  DIR *dir;
  struct dirent *entry;
  gboolean ok = TRUE;

  if (depth > 256)
    return set_errno_error (error, ELOOP, "Could not sync", path);
  fd = openat (parent_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0 && errno == ELOOP)
    return TRUE;   /* a symbolic link: its directory entry is synced with the parent */
  if (fd < 0)
    return set_errno_error (error, errno, "Could not open", path);
  if (fstat (fd, &st) < 0)
    return set_errno_error (error, errno, "Could not stat", path);
  if (S_ISREG (st.st_mode))
    return sync_fd (fd, path, error);
  if (!S_ISDIR (st.st_mode))
    return TRUE;

  dir = fdopendir (dup (fd));
  if (dir == NULL)
    return set_errno_error (error, errno, "Could not read directory", path);
  while (ok && (entry = readdir (dir)) != NULL)
    {
      g_autofree char *child = NULL;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      child = g_build_filename (path, entry->d_name, NULL);
      ok = sync_tree (fd, entry->d_name, child, depth + 1, error);
    }
  closedir (dir);
  return ok && sync_fd (fd, path, error);
}

/* Writes a new file, refusing to replace anything; syncs it if @durable. */
static gboolean
write_new_file_full (const char  *path,
                     const char  *contents,
                     gboolean     durable,
                     GError     **error)
{
  g_auto(SandboxBubblewrapFd) fd = -1;
  gsize length = strlen (contents);
  gsize written = 0;

  fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return set_errno_error (error, errno, "Could not create", path);
  while (written < length)
    {
      gssize n = write (fd, contents + written, length - written);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return set_errno_error (error, errno, "Could not write", path);
      written += n;
    }
  return !durable || sync_fd (fd, path, error);
}

/* Writes @path whole or not at all: a temporary file, synced if @durable,
 * renamed into place, and the directory synced after. */
static gboolean
write_file_atomically (const char  *path,
                       const char  *contents,
                       gboolean     durable,
                       GError     **error)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *temporary = g_strdup_printf ("%s.%s", path, uuid);
  g_autofree char *directory = g_path_get_dirname (path);

  if (!write_new_file_full (temporary, contents, durable, error))
    {
      unlink (temporary);
      return FALSE;
    }
  if (rename (temporary, path) < 0)
    {
      int saved_errno = errno;

      unlink (temporary);
      return set_errno_error (error, saved_errno, "Could not store", path);
    }
  return !durable || sync_directory (directory, error);
}

static void
store_free (SandboxBubblewrapStore *self)
{
  g_free (self->root);
  g_free (self->name);
  g_free (self->base);
  g_free (self->templates);
  g_free (self->sessions);
}

/**
 * sandbox_bubblewrap_store_open:
 * @state_directory: the backend's state directory
 * @name: the backend's name
 * @durable: whether to fsync files and directories before renames and
 *   state writes
 * @guest: who guests are: their workspaces belong to them
 * @error: return location for a #GError
 *
 * Creates @state_directory (mode 0700) if needed and resolves it.
 *
 * Returns: (transfer full): the store, or %NULL with a #GIOErrorEnum error
 */
SandboxBubblewrapStore *
sandbox_bubblewrap_store_open (const char                   *state_directory,
                               const char                   *name,
                               gboolean                      durable,
                               const SandboxBubblewrapGuest *guest,
                               GError                      **error)
{
  SandboxBubblewrapStore *self;
  g_autofree char *root = NULL;
  g_autofree char *digest = NULL;

  if (g_mkdir_with_parents (state_directory, 0700) < 0)
    {
      set_errno_error (error, errno, "Could not create the state directory", state_directory);
      return NULL;
    }
  root = realpath (state_directory, NULL);
  if (root == NULL)
    {
      set_errno_error (error, errno, "Could not resolve the state directory", state_directory);
      return NULL;
    }

  digest = sha256_hex (name);
  self = g_atomic_rc_box_new0 (SandboxBubblewrapStore);
  self->base = g_build_filename (root, digest, NULL);
  self->templates = g_build_filename (self->base, "templates", NULL);
  self->sessions = g_build_filename (self->base, "sessions", NULL);
  self->root = g_steal_pointer (&root);
  self->name = g_strdup (name);
  self->durable = durable;
  self->guest = (SandboxWorkspaceOwner) { guest->uid, guest->gid };
  self->give = guest->switched;
  return self;
}

/**
 * sandbox_bubblewrap_store_ref:
 * @self: a store
 *
 * Returns: (transfer full): @self
 */
SandboxBubblewrapStore *
sandbox_bubblewrap_store_ref (SandboxBubblewrapStore *self)
{
  return g_atomic_rc_box_acquire (self);
}

/**
 * sandbox_bubblewrap_store_unref:
 * @self: (transfer full): a store
 *
 * Drops a reference.
 */
void
sandbox_bubblewrap_store_unref (SandboxBubblewrapStore *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify) store_free);
}

/**
 * sandbox_bubblewrap_store_get_root:
 * @self: a store
 *
 * Returns: the resolved state directory
 */
const char *
sandbox_bubblewrap_store_get_root (SandboxBubblewrapStore *self)
{
  return self->root;
}

/* Templates -------------------------------------------------------------- */

static char *
ready_record (const char *backend,
              const char *template_key)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "backend");
  json_builder_add_string_value (builder, backend);
  json_builder_set_member_name (builder, "templateKey");
  json_builder_add_string_value (builder, template_key);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
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
          if (mkdirat (data_fd, parents, 0700) < 0 && errno != EEXIST)
            return set_errno_error (error, errno, "Could not create template directory", parents);
          g_hash_table_add (created, g_strdup (parents));
        }
      *slash++ = '/';
    }
  return TRUE;
}

static gboolean
write_template_file (int          data_fd,
                     const char  *relative,
                     GBytes      *contents,
                     GError     **error)
{
  g_auto(SandboxBubblewrapFd) fd = -1;
  gsize length;
  const guint8 *data = g_bytes_get_data (contents, &length);

  fd = openat (data_fd, relative, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return set_errno_error (error, errno, "Could not create template file", relative);
  while (length > 0)
    {
      gssize n = write (fd, data, length);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return set_errno_error (error, errno, "Could not write template file", relative);
      data += n;
      length -= n;
    }
  return TRUE;
}

/* The template is built in a fresh directory private to the trusted host
 * (no guest ever sees it before the rename), so plain *at() calls are safe
 * here: none of the contained-I/O defences against a racing guest, and one
 * open, write and close per file — as cheap as `cp -r`. */
static gboolean
write_template_files (SandboxTemplate  *template_,
                      int               data_fd,
                      GCancellable     *cancellable,
                      GError          **error)
{
  g_auto(GStrv) paths = sandbox_template_list_paths (template_);
  g_autoptr(GHashTable) created = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; paths[i] != NULL; i++)
    {
      g_autofree char *canonical = sandbox_path_canonicalize (paths[i], error);
      const char *relative;

      if (canonical == NULL)
        return FALSE;
      if (g_strcmp0 (canonical, SANDBOX_WORKSPACE) == 0)
        return sandbox_set_error_template_root (error);
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return FALSE;
      relative = sandbox_path_relative (canonical);
      if (!ensure_parent_directories (data_fd, relative, created, error) ||
          !write_template_file (data_fd, relative,
                                sandbox_template_lookup_file (template_, canonical), error))
        return FALSE;
    }
  return TRUE;
}

/* Builds the template in templates/<uuid> and renames it to templates/<key>. */
static gboolean
create_template (SandboxBubblewrapStore  *self,
                 SandboxTemplate         *template_,
                 const char              *key,
                 const char              *directory,
                 GCancellable            *cancellable,
                 GError                 **error)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *temporary = g_build_filename (self->templates, uuid, NULL);
  g_autofree char *data = g_build_filename (temporary, "data", NULL);
  g_autofree char *ready = g_build_filename (temporary, "ready", NULL);
  g_autofree char *record = ready_record (self->name, key);
  g_auto(SandboxBubblewrapFd) templates_fd = -1;
  g_autoptr(SandboxWorkspace) data_files = NULL;
  gboolean ok = FALSE;

  templates_fd = open_directory (self->templates, error);
  if (templates_fd < 0)
    return FALSE;
  if (mkdir (temporary, 0700) < 0)
    return set_errno_error (error, errno, "Could not create directory", temporary);

  if (mkdir (data, 0700) < 0)
    set_errno_error (error, errno, "Could not create directory", data);
  else if ((data_files = sandbox_workspace_open (data, SANDBOX_WORKSPACE_FLAGS_NONE, error)) &&
           write_template_files (template_, sandbox_workspace_get_fd (data_files), cancellable,
                                 error) &&
           write_new_file_full (ready, record, self->durable, error) &&
           (!self->durable || sync_tree (templates_fd, uuid, temporary, 0, error)))
    {
      if (rename (temporary, directory) == 0)
        ok = !self->durable || sync_fd (templates_fd, self->templates, error);
      else if (errno == EEXIST || errno == ENOTEMPTY)
        ok = TRUE;   /* an identical template won the race */
      else
        set_errno_error (error, errno, "Could not store template", directory);
    }

  /* Gone after a successful rename; a leftover otherwise. */
  sandbox_workspace_remove_tree_at (templates_fd, uuid, NULL);
  return ok;
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
  g_autofree char *key = sandbox_template_compute_key (template_, self->name, error);
  g_autofree char *directory = NULL;
  g_autofree char *ready = NULL;

  if (key == NULL)
    return NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  if (!ensure_directory (self->base, error) || !ensure_directory (self->templates, error))
    return NULL;

  directory = g_build_filename (self->templates, key, NULL);
  ready = g_build_filename (directory, "ready", NULL);
  if (g_file_test (ready, G_FILE_TEST_IS_REGULAR))
    {
      if (reused != NULL)
        *reused = TRUE;
      return g_steal_pointer (&key);
    }

  if (!create_template (self, template_, key, directory, cancellable, error))
    return NULL;
  if (reused != NULL)
    *reused = FALSE;
  return g_steal_pointer (&key);
}

/* Checks templates/<key>/ready against this backend. */
static gboolean
check_template_record (SandboxBubblewrapStore  *self,
                       const char              *key,
                       GError                 **error)
{
  g_autofree char *ready = g_build_filename (self->templates, key, "ready", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) local_error = NULL;
  JsonNode *root;
  JsonObject *record;
  const char *backend = NULL;
  const char *template_key = NULL;

  if (!g_file_get_contents (ready, &contents, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                     "Unknown sandbox template %s", key);
      else
        g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  if (json_parser_load_from_data (parser, contents, -1, NULL) &&
      (root = json_parser_get_root (parser)) != NULL && JSON_NODE_HOLDS_OBJECT (root))
    {
      record = json_node_get_object (root);
      if (json_object_has_member (record, "backend"))
        backend = json_node_get_string (json_object_get_member (record, "backend"));
      if (json_object_has_member (record, "templateKey"))
        template_key = json_node_get_string (json_object_get_member (record, "templateKey"));
    }
  if (g_strcmp0 (backend, self->name) != 0 || g_strcmp0 (template_key, key) != 0)
    return sandbox_set_error_foreign_template (error);
  return TRUE;
}

/* Sessions and leases ---------------------------------------------------- */

static char *
lease_path (const char *directory)
{
  return g_build_filename (directory, "lease", NULL);
}

/*
 * Leases. The lease file holds the owner's pid, as the reference's, and
 * while the session is owned its owner also holds an OFD write lock
 * (F_OFD_SETLK) on it. The kernel drops that lock when the owner dies, so
 * a lease file nobody holds a lock on was left by a crashed owner: stale.
 * create() still refuses it with BUSY — only
 * sandbox_bubblewrap_store_recover_session() takes it over, and only after
 * ending whatever is left of the dead owner's sandboxes (see "Leftovers"
 * below).
 *
 * The file is written and locked under a temporary name and then linked
 * into place, which fails if a lease exists: a lease is never visible
 * without its lock, so a lease without a lock is always stale.
 *
 * Every bwrap namespace of the session holds a read lock on the workspace
 * directory through its init (`--lock-file /workspace`); the kernel kills
 * a pid namespace when its init dies, so a lock there means processes of
 * some owner may still run.
 */

static gboolean
lock_lease_fd (int fd)
{
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

  return fcntl (fd, F_OFD_SETLK, &lock) == 0;
}

static gboolean
write_pid (int          fd,
           const char  *path,
           gboolean     durable,
           GError     **error)
{
  g_autofree char *pid = g_strdup_printf ("%d", (int) getpid ());
  gsize length = strlen (pid);

  if (ftruncate (fd, 0) < 0 || pwrite (fd, pid, length, 0) != (gssize) length)
    return set_errno_error (error, errno != 0 ? errno : EIO, "Could not write", path);
  if (durable && fdatasync (fd) < 0)
    return set_errno_error (error, errno, "Could not sync", path);
  return TRUE;
}

/* Creates and locks the lease; fails with BUSY if one exists. Returns the
 * locked descriptor. */
static int
acquire_lease (const char  *directory,
               gboolean     durable,
               GError     **error)
{
  g_autofree char *path = lease_path (directory);
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *temporary = g_strdup_printf ("%s.%s", path, uuid);
  g_auto(SandboxBubblewrapFd) fd = -1;
  int saved_errno;

  fd = open (temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    return set_errno_error (error, errno, "Could not create", temporary), -1;
  if (!write_pid (fd, temporary, durable, error))
    {
      unlink (temporary);
      return -1;
    }
  if (!lock_lease_fd (fd))
    {
      saved_errno = errno;
      unlink (temporary);
      return set_errno_error (error, saved_errno, "Could not lock", temporary), -1;
    }
  if (link (temporary, path) < 0)
    {
      saved_errno = errno;
      unlink (temporary);
      if (saved_errno == EEXIST)
        sandbox_set_error_has_owner (error);
      else
        set_errno_error (error, saved_errno, "Could not create", path);
      return -1;
    }
  unlink (temporary);
  return g_steal_fd (&fd);
}

/* Leftovers of a dead owner ---------------------------------------------------
 *
 * Since the launcher runs bwrap as the init of a pid namespace of its own,
 * with its parent-death signal armed before exec, nothing of a sandbox
 * outlives its owner. What recovery may still meet was left by an older
 * version (bwrap's --die-with-parent race, bubblewrap issue 633), by a
 * set-id bwrap (exec of which drops the parent-death signal) or by a bug.
 * Recovery ends it, once it holds the lease (so no live owner can start
 * more), and only what is identified beyond doubt as a sandbox of this
 * session:
 *
 * - bwrap's own processes — the monitor, the sandbox's init, the forks of
 *   its setup, none of which exec anything else: argv[0] is the backend's
 *   bwrap executable, the kernel's name for the process is bwrap's, and the
 *   arguments bind this workspace at /workspace, as the driver's command
 *   line did before it moved bwrap's options into an `--args` memfd (so
 *   this finds what older versions left, and bwraps run by hand; the
 *   driver's own sandboxes since then are found by their lock, below). A
 *   host process whose arguments merely name the workspace, or a bwrap of
 *   another session, is neither.
 * - the holder of a lock on the workspace directory, which the init of
 *   every sandbox of the session takes (bwrap's --lock-file), if it is a
 *   bwrap process that is the first of a pid namespace nested in ours. Any
 *   other holder — a host process — makes recovery refuse with BUSY: it is
 *   not ours to kill.
 *
 * Killing a sandbox's init kills the guest with its pid namespace. A
 * candidate is pinned with pidfd_open() before its /proc entries are read,
 * the pidfd must still be alive after the reading (or what was read may
 * have been a later process's that reused the pid), and the signal goes
 * through the pidfd.
 */

/* A process's cmdline can read empty for a moment (while it forks or
 * execs), so one scan can miss a live bwrap: the session counts as clean
 * only when several scans a little apart all find nothing. Recovery is
 * rare; the pauses cost it 20 ms. */
#define SCAN_ATTEMPTS 3
#define SCAN_PAUSE_US (10 * 1000)
/* Rounds of killing before recovery gives up on a session whose
 * leftovers keep coming back. */
#define LEFTOVER_ROUNDS 16
/* How long a SIGKILLed leftover may take to be gone. */
#define LEFTOVER_EXIT_TIMEOUT_MS 5000

static char *
read_proc_file (pid_t       pid,
                const char *name,
                gsize      *length)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/%s", (int) pid, name);
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, length, NULL))
    return NULL;
  return contents;
}

/* Whether @pid is a bwrap process by the kernel's name for it: the first
 * 15 bytes of the base name of the @executable it ran. */
static gboolean
process_is_named_like (pid_t       pid,
                       const char *executable)
{
  g_autofree char *basename = g_path_get_basename (executable);
  g_autofree char *comm = read_proc_file (pid, "comm", NULL);

  if (comm == NULL)
    return FALSE;
  g_strchomp (comm);
  return strncmp (comm, basename, 15) == 0 && strlen (comm) == MIN (strlen (basename), 15);
}

/* Whether @cmdline is @executable's and binds @workspace at /workspace. */
static gboolean
cmdline_binds_workspace (const char *cmdline,
                         gsize       length,
                         const char *executable,
                         const char *workspace)
{
  g_autoptr(GPtrArray) args = g_ptr_array_new ();

  for (gsize i = 0; i < length; i += strlen (cmdline + i) + 1)
    g_ptr_array_add (args, (gpointer) (cmdline + i));
  if (args->len == 0 || strcmp (args->pdata[0], executable) != 0)
    return FALSE;
  for (guint i = 1; i + 2 < args->len; i++)
    if (strcmp (args->pdata[i], "--bind") == 0 &&
        strcmp (args->pdata[i + 1], workspace) == 0 &&
        strcmp (args->pdata[i + 2], SANDBOX_WORKSPACE) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
is_bwrap_of_workspace (pid_t       pid,
                       const char *executable,
                       const char *workspace)
{
  gsize length = 0;
  g_autofree char *cmdline = read_proc_file (pid, "cmdline", &length);

  return cmdline != NULL && length > 0 &&
         cmdline[length - 1] == '\0' &&   /* complete, not cut by an exec */
         cmdline_binds_workspace (cmdline, length, executable, workspace) &&
         process_is_named_like (pid, executable);
}

/* Whether @pid is the first process of a pid namespace nested in ours: its
 * NSpid line lists more than one pid, the last of them 1. */
static gboolean
is_nested_pid_namespace_init (pid_t pid)
{
  g_autofree char *status = read_proc_file (pid, "status", NULL);
  g_autofree char *pids = NULL;
  g_auto(GStrv) fields = NULL;
  const char *line;
  guint n;

  if (status == NULL || (line = strstr (status, "\nNSpid:\t")) == NULL)
    return FALSE;
  line += strlen ("\nNSpid:\t");
  pids = g_strndup (line, strcspn (line, "\n"));
  fields = g_strsplit (pids, "\t", -1);
  n = g_strv_length (fields);
  return n >= 2 && strcmp (fields[n - 1], "1") == 0;
}

static gboolean
is_sandbox_init (pid_t       pid,
                 const char *executable)
{
  return is_nested_pid_namespace_init (pid) && process_is_named_like (pid, executable);
}

static gboolean
pidfd_is_alive (int pidfd)
{
  struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

  return poll (&pfd, 1, 0) == 0;
}

typedef gboolean (*LeftoverCheck) (pid_t       pid,
                                   const char *executable,
                                   const char *workspace);

static gboolean
check_sandbox_init (pid_t       pid,
                    const char *executable,
                    const char *workspace)
{
  return is_sandbox_init (pid, executable);
}

/* A pidfd for @pid if it passes @check, read while it was pinned; else -1. */
static int
open_verified_leftover (pid_t          pid,
                        LeftoverCheck  check,
                        const char    *executable,
                        const char    *workspace)
{
  g_auto(SandboxBubblewrapFd) pidfd = pidfd_open (pid, 0);

  if (pidfd < 0 || !check (pid, executable, workspace) || !pidfd_is_alive (pidfd))
    return -1;
  return g_steal_fd (&pidfd);
}

static void
close_fd_in_array (gpointer data)
{
  sandbox_bubblewrap_fd_close (*(int *) data);
}

static GArray *
pidfd_array_new (void)
{
  GArray *pidfds = g_array_new (FALSE, FALSE, sizeof (int));

  g_array_set_clear_func (pidfds, close_fd_in_array);
  return pidfds;
}

/* Pidfds of the bwrap processes of @workspace that run now. */
static GArray *
find_bwrap_leftovers (const char *executable,
                      const char *workspace)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  GArray *pidfds = pidfd_array_new ();
  const char *name;

  while (proc != NULL && (name = g_dir_read_name (proc)) != NULL)
    {
      pid_t pid;
      int pidfd;

      if (!g_ascii_isdigit (name[0]))
        continue;
      pid = (pid_t) g_ascii_strtoll (name, NULL, 10);
      if (pid == getpid ())
        continue;
      pidfd = open_verified_leftover (pid, is_bwrap_of_workspace, executable, workspace);
      if (pidfd >= 0)
        g_array_append_val (pidfds, pidfd);
    }
  return pidfds;
}

typedef enum
{
  LOCK_FREE,
  LOCK_HELD_BY_SANDBOX,
  LOCK_HELD_BY_STRANGER,
} LockHolder;

/* Who holds a lock on the workspace directory; a sandbox's init is pinned
 * in *@pidfd. Only POSIX locks tell their holder (bwrap takes one). */
static LockHolder
workspace_lock_holder (const char *workspace,
                       const char *executable,
                       int        *pidfd)
{
  g_auto(SandboxBubblewrapFd) fd = open (workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

  *pidfd = -1;
  if (fd < 0)
    return errno == ENOENT ? LOCK_FREE : LOCK_HELD_BY_STRANGER;
  if (fcntl (fd, F_OFD_GETLK, &lock) < 0)
    return LOCK_HELD_BY_STRANGER;
  if (lock.l_type == F_UNLCK)
    return LOCK_FREE;
  if (lock.l_pid <= 0)   /* an OFD lock, or a holder outside our pid namespace */
    return LOCK_HELD_BY_STRANGER;
  *pidfd = open_verified_leftover (lock.l_pid, check_sandbox_init, executable, workspace);
  return *pidfd >= 0 ? LOCK_HELD_BY_SANDBOX : LOCK_HELD_BY_STRANGER;
}

/* SIGKILLs every process in @pidfds and waits, on the pidfds, until they
 * are gone. */
static void
kill_leftovers (GArray *pidfds)
{
  g_autofree struct pollfd *fds = g_new0 (struct pollfd, pidfds->len);
  gint64 deadline = g_get_monotonic_time () +
                    LEFTOVER_EXIT_TIMEOUT_MS * G_TIME_SPAN_MILLISECOND;

  for (guint i = 0; i < pidfds->len; i++)
    {
      fds[i].fd = g_array_index (pidfds, int, i);
      fds[i].events = POLLIN;
      pidfd_send_signal (fds[i].fd, SIGKILL, NULL, 0);
    }
  for (;;)
    {
      gint64 left = (deadline - g_get_monotonic_time ()) / G_TIME_SPAN_MILLISECOND;
      gboolean pending = FALSE;

      for (guint i = 0; i < pidfds->len; i++)
        if (fds[i].fd >= 0)
          pending = TRUE;
      if (!pending || left <= 0 || poll (fds, pidfds->len, (int) left) < 0)
        return;
      for (guint i = 0; i < pidfds->len; i++)
        if (fds[i].revents & POLLIN)
          fds[i].fd = -1;   /* gone; poll() skips negative descriptors */
    }
}

/* Ends what is left of the session's sandboxes (see above). Call with the
 * lease held. Fails with BUSY when a stranger holds the workspace lock or
 * leftovers keep coming. */
static gboolean
end_leftovers (SandboxBubblewrapLease  *lease,
               const char              *executable,
               GError                 **error)
{
  guint clean_scans = 0;

  for (guint round = 0; round < LEFTOVER_ROUNDS && clean_scans < SCAN_ATTEMPTS; round++)
    {
      g_autoptr(GArray) leftovers = find_bwrap_leftovers (executable, lease->workspace);
      int holder = -1;

      if (leftovers->len == 0)
        switch (workspace_lock_holder (lease->workspace, executable, &holder))
          {
          case LOCK_FREE:
            break;
          case LOCK_HELD_BY_SANDBOX:
            g_array_append_val (leftovers, holder);
            break;
          case LOCK_HELD_BY_STRANGER:
          default:
            return sandbox_set_error_previous_owner_live (error);
          }

      if (leftovers->len == 0)
        {
          if (++clean_scans < SCAN_ATTEMPTS)
            g_usleep (SCAN_PAUSE_US);
          continue;
        }
      clean_scans = 0;
      kill_leftovers (leftovers);
    }

  if (clean_scans < SCAN_ATTEMPTS)
    return sandbox_set_error_previous_owner_live (error);
  return TRUE;
}

/* Takes over a stale lease, ending its dead owner's leftovers. Returns the
 * locked descriptor, or -1: with BUSY when its owner lives or leftovers
 * cannot be ended; with nothing set and *@missing when there is no lease
 * to take over. */
static int
take_over_lease (SandboxBubblewrapLease  *lease,
                 const char              *executable,
                 gboolean                 durable,
                 gboolean                *missing,
                 GError                 **error)
{
  g_autofree char *path = lease_path (lease->directory);
  g_auto(SandboxBubblewrapFd) fd = -1;
  struct stat locked, current;

  *missing = FALSE;
  fd = open (path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT)
    {
      *missing = TRUE;
      return -1;
    }
  if (fd < 0)
    return set_errno_error (error, errno, "Could not open", path), -1;
  if (!lock_lease_fd (fd))
    {
      if (errno != EAGAIN && errno != EACCES)
        return set_errno_error (error, errno, "Could not lock", path), -1;
      sandbox_set_error_has_owner (error);
      return -1;
    }
  /* The owner may have released it between our open and our lock. */
  if (fstat (fd, &locked) < 0 || stat (path, &current) < 0 ||
      locked.st_dev != current.st_dev || locked.st_ino != current.st_ino)
    {
      *missing = TRUE;
      return -1;
    }
  if (!end_leftovers (lease, executable, error))
    return -1;   /* the lease stays stale: closing the descriptor unlocks it */
  if (!write_pid (fd, path, durable, error))
    return -1;
  return g_steal_fd (&fd);
}

/* The saved state of the session in @directory; NOT_FOUND without one. */
static SandboxState *
read_saved_state (const char  *directory,
                  const char  *session_id,
                  GError     **error)
{
  g_autofree char *path = g_build_filename (directory, "state.json", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(GError) local_error = NULL;

  if (!g_file_get_contents (path, &contents, NULL, &local_error))
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                     "Unknown sandbox session %s", session_id);
      else
        g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  return sandbox_state_new_from_json (contents, error);
}

static gboolean
check_saved_state (SandboxBubblewrapLease  *lease,
                   GError                 **error)
{
  g_autoptr(SandboxState) existing =
    read_saved_state (lease->directory, sandbox_state_get_session_id (lease->state), error);

  if (existing == NULL)
    return FALSE;
  if (!sandbox_state_equal (existing, lease->state))
    return sandbox_set_error_identity_mismatch (error);
  return TRUE;
}

static gboolean
populate_new_session (SandboxBubblewrapStore  *self,
                      SandboxBubblewrapLease  *lease,
                      const char              *template_key,
                      GCancellable            *cancellable,
                      GError                 **error)
{
  g_autofree char *data = g_build_filename (self->templates, template_key, "data", NULL);
  g_autofree char *state_path = g_build_filename (lease->directory, "state.json", NULL);
  g_autofree char *state_json = sandbox_state_to_json (lease->state);
  g_auto(SandboxBubblewrapFd) data_fd = -1;
  g_auto(SandboxBubblewrapFd) session_fd = -1;

  data_fd = open_directory (data, error);
  if (data_fd < 0)
    return FALSE;
  session_fd = open_directory (lease->directory, error);
  if (session_fd < 0)
    return FALSE;
  /* The copy belongs to the guest from the start: it never sees it before. */
  if (!sandbox_workspace_copy_tree_at (data_fd, session_fd, "workspace",
                                       self->give ? &self->guest : NULL, cancellable, error))
    return FALSE;
  if (self->durable)
    {
      g_autofree char *workspace = g_build_filename (lease->directory, "workspace", NULL);

      /* The workspace, then the session's entry in sessions/, before the
       * state that makes the session resumable. */
      if (!sync_tree (session_fd, "workspace", workspace, 0, error) ||
          !sync_directory (self->sessions, error))
        return FALSE;
    }
  return write_file_atomically (state_path, state_json, self->durable, error);
}

/*
 * Workspace ownership. A workspace belongs to the guest ids, which guests
 * of a root host are not (the backend's guest-uid). One of another owner —
 * left by an older version, whose root-hosted guests were host root, or
 * before guest-uid changed — is given to the guest ids when its session is
 * resumed: under the session's lease, and only when no namespace of the
 * session holds the workspace (its init's --lock-file), so no guest can
 * race the walk; by descriptor and without following any link
 * (sandbox_workspace_give_tree_at(), top directory last, so a workspace whose
 * top is the guest's was given whole).
 */
static gboolean
give_workspace_to_guest (SandboxBubblewrapStore  *self,
                         SandboxBubblewrapLease  *lease,
                         GError                 **error)
{
  g_auto(SandboxBubblewrapFd) session_fd = -1;
  g_auto(SandboxBubblewrapFd) workspace_fd = -1;
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  struct stat st;

  if (!self->give)
    return TRUE;
  session_fd = open_directory (lease->directory, error);
  if (session_fd < 0)
    return FALSE;
  workspace_fd = openat (session_fd, "workspace", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (workspace_fd < 0 || fstat (workspace_fd, &st) < 0)
    return set_errno_error (error, errno, "Could not open", lease->workspace);
  if (st.st_uid == self->guest.uid && st.st_gid == self->guest.gid)
    return TRUE;
  if (fcntl (workspace_fd, F_OFD_GETLK, &lock) < 0 || lock.l_type != F_UNLCK)
    return sandbox_set_error_previous_owner_live (error);
  return sandbox_workspace_give_tree_at (session_fd, "workspace", &self->guest, error);
}

static SandboxState *
new_session_state (SandboxBubblewrapStore  *self,
                   const char              *template_key,
                   GError                 **error)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *session_id = sha256_hex (uuid);

  return sandbox_state_new (self->name, session_id, template_key, error);
}

/* Takes the lease of an existing session, taking over a stale one; ends
 * what is left of earlier owners' sandboxes either way. */
static int
recover_lease (SandboxBubblewrapStore  *self,
               SandboxBubblewrapLease  *lease,
               const char              *executable,
               GError                 **error)
{
  /* A lease that vanishes between open and lock is retried a few times. */
  for (guint attempt = 0; attempt < 8; attempt++)
    {
      gboolean missing = FALSE;
      int fd = take_over_lease (lease, executable, self->durable, &missing, error);
      g_autoptr(GError) local_error = NULL;

      if (fd >= 0 || !missing)
        return fd;
      /* No lease: an ordinary resume, once nothing of an earlier owner is
       * left — ended under the new lease, so nobody starts more meanwhile. */
      fd = acquire_lease (lease->directory, self->durable, &local_error);
      if (fd >= 0 && !end_leftovers (lease, executable, error))
        {
          g_autofree char *path = lease_path (lease->directory);

          unlink (path);   /* still locked: nobody takes it for stale */
          close (fd);
          return -1;
        }
      if (fd >= 0)
        return fd;
      if (!g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return -1;
        }
    }
  sandbox_set_error_has_owner (error);
  return -1;
}

/* A host killed in the middle of a workspace write can leave a named
 * temporary in the workspace (on filesystems without O_TMPFILE, or between
 * linking and renaming a replacement). Such an owner leaves a stale lease,
 * so every session it touched comes back through recovery, which removes
 * them before anything runs in the workspace again. */
static void
remove_write_temporaries (SandboxBubblewrapLease *lease)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxWorkspace) workspace = sandbox_workspace_open (lease->workspace,
                                                                  SANDBOX_WORKSPACE_FLAGS_NONE,
                                                                  &error);
  guint removed;

  if (workspace == NULL)
    {
      g_debug ("Not looking for temporaries in %s: %s", lease->workspace, error->message);
      return;
    }
  removed = sandbox_workspace_remove_temporaries (workspace);
  if (removed > 0)
    g_debug ("Removed %u temporary files a crashed owner left in %s", removed, lease->workspace);
}

static int lock_template (SandboxBubblewrapStore  *self,
                          const char              *key,
                          GError                 **error);

static SandboxBubblewrapLease *
open_session (SandboxBubblewrapStore  *self,
              const char              *template_key,
              SandboxState            *saved,
              const char              *recover_executable,
              GCancellable            *cancellable,
              GError                 **error)
{
  g_autoptr(SandboxBubblewrapLease) lease = NULL;
  gboolean recover = recover_executable != NULL;
  g_autoptr(SandboxState) state = NULL;
  g_auto(SandboxBubblewrapFd) template_lock = -1;
  const char *session_id;

  if (!sandbox_template_key_is_valid (template_key))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "Expected a template key: 64 lowercase hexadecimal characters");
      return NULL;
    }
  if (saved != NULL &&
      (g_strcmp0 (sandbox_state_get_backend (saved), self->name) != 0 ||
       g_strcmp0 (sandbox_state_get_template_key (saved), template_key) != 0))
    {
      sandbox_set_error_state_mismatch (error);
      return NULL;
    }
  /* A new session holds its template until its state names it (see
   * "Deleting a template" below). */
  if (saved == NULL && (template_lock = lock_template (self, template_key, error)) < 0)
    return NULL;
  if (!check_template_record (self, template_key, error))
    return NULL;

  state = saved != NULL ? g_object_ref (saved) : new_session_state (self, template_key, error);
  if (state == NULL)
    return NULL;
  session_id = sandbox_state_get_session_id (state);
  if (!sandbox_template_key_is_valid (session_id))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "Expected a session id: 64 lowercase hexadecimal characters");
      return NULL;
    }

  lease = g_new0 (SandboxBubblewrapLease, 1);
  lease->lock_fd = -1;
  lease->store = sandbox_bubblewrap_store_ref (self);
  lease->state = g_steal_pointer (&state);
  lease->directory = g_build_filename (self->sessions, session_id, NULL);
  lease->workspace = g_build_filename (lease->directory, "workspace", NULL);
  lease->created = saved == NULL;

  if (lease->created)
    {
      if (!ensure_directory (self->sessions, error))
        return NULL;
      if (mkdir (lease->directory, 0700) < 0)
        {
          set_errno_error (error, errno, "Could not create session directory", lease->directory);
          return NULL;
        }
    }
  else if (!g_file_test (lease->directory, G_FILE_TEST_IS_DIR))
    {
      /* The reference would create an empty directory here and then fail;
       * we leave nothing behind. */
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                   "Unknown sandbox session %s", session_id);
      return NULL;
    }

  lease->lock_fd = recover ? recover_lease (self, lease, recover_executable, error)
                           : acquire_lease (lease->directory, self->durable, error);
  if (lease->lock_fd < 0)
    {
      if (lease->created)
        sandbox_bubblewrap_lease_abandon (lease);
      return NULL;
    }
  lease->held = TRUE;

  if (lease->created ? !populate_new_session (self, lease, template_key, cancellable, error)
                     : (!check_saved_state (lease, error) ||
                        !give_workspace_to_guest (self, lease, error)))
    {
      sandbox_bubblewrap_lease_abandon (lease);
      return NULL;
    }
  if (recover)
    remove_write_temporaries (lease);
  return g_steal_pointer (&lease);
}

/**
 * sandbox_bubblewrap_store_open_session:
 * @self: a store
 * @template_key: the template the session belongs to
 * @saved: (nullable): the state of a session to resume, or %NULL to create one
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Creates a session from a stored template (a new id, the template copied
 * into the workspace) or resumes one, under the session's exclusive lease.
 * Errors as the reference: %SANDBOX_ERROR_INVALID for a malformed key or
 * session id, %SANDBOX_ERROR_STATE_MISMATCH, %SANDBOX_ERROR_NOT_FOUND for an
 * unknown template or session, %SANDBOX_ERROR_BUSY when the lease is held.
 *
 * Returns: (transfer full): the leased session, or %NULL with @error set
 */
SandboxBubblewrapLease *
sandbox_bubblewrap_store_open_session (SandboxBubblewrapStore  *self,
                                       const char              *template_key,
                                       SandboxState            *saved,
                                       GCancellable            *cancellable,
                                       GError                 **error)
{
  return open_session (self, template_key, saved, NULL, cancellable, error);
}

/**
 * sandbox_bubblewrap_store_recover_session:
 * @self: a store
 * @saved: the state of the session to recover
 * @executable: the bwrap executable the session's sandboxes ran
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Resumes the session @saved describes like
 * sandbox_bubblewrap_store_open_session(), taking over a stale lease — one
 * whose owner died without releasing it. Whatever is left of an earlier
 * owner's sandboxes is killed first, under the new lease (see "Leftovers"
 * above). Fails with %SANDBOX_ERROR_BUSY while the owner lives, and when a
 * process that is not one of the session's sandboxes holds its workspace
 * lock. Without a lease this is an ordinary resume.
 *
 * Returns: (transfer full): the leased session, or %NULL with @error set
 */
SandboxBubblewrapLease *
sandbox_bubblewrap_store_recover_session (SandboxBubblewrapStore  *self,
                                          SandboxState            *saved,
                                          const char              *executable,
                                          GCancellable            *cancellable,
                                          GError                 **error)
{
  return open_session (self, sandbox_state_get_template_key (saved), saved, executable,
                       cancellable, error);
}

/**
 * sandbox_bubblewrap_store_delete_session:
 * @self: a store
 * @session_id: the session to delete
 * @error: return location for a #GError
 *
 * Takes the session's lease (%SANDBOX_ERROR_BUSY if someone holds it) and
 * removes the session directory without following any link the guest
 * planted. Templates stay. A session that no longer exists is success.
 *
 * Returns: %TRUE when the session is gone
 */
gboolean
sandbox_bubblewrap_store_delete_session (SandboxBubblewrapStore  *self,
                                         const char              *session_id,
                                         GError                 **error)
{
  g_autofree char *directory = g_build_filename (self->sessions, session_id, NULL);
  g_autofree char *lease = lease_path (directory);
  g_auto(SandboxBubblewrapFd) sessions_fd = -1;
  g_auto(SandboxBubblewrapFd) lock_fd = -1;
  g_autoptr(GError) local_error = NULL;

  if (!g_file_test (directory, G_FILE_TEST_IS_DIR))
    return TRUE;
  lock_fd = acquire_lease (directory, self->durable, error);
  if (lock_fd < 0)
    return FALSE;

  sessions_fd = open_directory (self->sessions, &local_error);
  if (sessions_fd >= 0 && sandbox_workspace_remove_tree_at (sessions_fd, session_id, &local_error))
    return !self->durable || sync_fd (sessions_fd, self->sessions, error);

  unlink (lease);
  g_propagate_error (error, g_steal_pointer (&local_error));
  return FALSE;
}

/**
 * sandbox_bubblewrap_lease_release:
 * @lease: a leased session
 *
 * Gives up the lease; the session stays. Idempotent.
 */
void
sandbox_bubblewrap_lease_release (SandboxBubblewrapLease *lease)
{
  g_autofree char *path = NULL;

  if (!lease->held)
    return;
  lease->held = FALSE;
  path = lease_path (lease->directory);
  /* Unlinked while still locked, so nobody takes the file for stale. */
  if (unlink (path) < 0 && errno != ENOENT)
    g_warning ("Could not release the lease %s: %s", path, g_strerror (errno));
  sandbox_bubblewrap_clear_fd (&lease->lock_fd);
}

/**
 * sandbox_bubblewrap_lease_abandon:
 * @lease: a leased session
 *
 * Undoes a session that could not be opened: a newly created session's
 * directory is removed, a resumed one is kept; the lease is released.
 */
void
sandbox_bubblewrap_lease_abandon (SandboxBubblewrapLease *lease)
{
  if (lease->created)
    {
      g_auto(SandboxBubblewrapFd) sessions_fd = open_directory (lease->store->sessions, NULL);
      g_autoptr(GError) error = NULL;

      if (sessions_fd >= 0 &&
          !sandbox_workspace_remove_tree_at (sessions_fd,
                                             sandbox_state_get_session_id (lease->state), &error))
        g_warning ("Could not remove the abandoned session %s: %s",
                   lease->directory, error->message);
      lease->held = FALSE;   /* the lease went with the directory */
      sandbox_bubblewrap_clear_fd (&lease->lock_fd);
    }
  sandbox_bubblewrap_lease_release (lease);
}

/**
 * sandbox_bubblewrap_lease_free:
 * @lease: (transfer full): a leased session
 *
 * Frees @lease; the lease itself must have been released or handed on.
 */
void
sandbox_bubblewrap_lease_free (SandboxBubblewrapLease *lease)
{
  if (lease == NULL)
    return;
  sandbox_bubblewrap_clear_fd (&lease->lock_fd);
  g_clear_pointer (&lease->store, sandbox_bubblewrap_store_unref);
  g_clear_object (&lease->state);
  g_free (lease->directory);
  g_free (lease->workspace);
  g_free (lease);
}

/* The store's own view ------------------------------------------------------
 *
 * What sandbox_backend_list_sessions() and its siblings report, read from
 * the layout above so that no tool has to know it. Workspaces are shaped
 * by guests: measuring one walks it by descriptor and never follows a link.
 */

/* Deeper trees are refused rather than exhausting file descriptors. */
#define MEASURE_MAX_DEPTH 256

/* Adds the non-directory entries under @dir_fd, and the bytes of its
 * regular files, to the counts; takes ownership of @dir_fd. Entries that
 * vanish or change kind while we walk are skipped. */
static gboolean
measure_directory (int          dir_fd,
                   const char  *path,
                   guint        depth,
                   guint64     *n_files,
                   guint64     *n_bytes,
                   GError     **error)
{
  DIR *dir;
  struct dirent *entry;
  gboolean ok = TRUE;

  if (depth > MEASURE_MAX_DEPTH)
    {
      close (dir_fd);
      return set_errno_error (error, ELOOP, "Could not measure", path);
    }
  dir = fdopendir (dir_fd);
  if (dir == NULL)
    {
      int saved_errno = errno;

      close (dir_fd);
      return set_errno_error (error, saved_errno, "Could not read directory", path);
    }
  while (ok && (errno = 0, entry = readdir (dir)) != NULL)
    {
      struct stat st;
      int child_fd;

      if (g_str_equal (entry->d_name, ".") || g_str_equal (entry->d_name, ".."))
        continue;
      if (fstatat (dirfd (dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue;   /* removed while we walk */
      if (!S_ISDIR (st.st_mode))
        {
          *n_files += 1;
          if (S_ISREG (st.st_mode))
            *n_bytes += (guint64) st.st_size;
          continue;
        }
      child_fd = openat (dirfd (dir), entry->d_name,
                         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child_fd >= 0)
        {
          g_autofree char *child = g_build_filename (path, entry->d_name, NULL);

          ok = measure_directory (child_fd, child, depth + 1, n_files, n_bytes, error);
        }
    }
  if (ok && errno != 0)
    ok = set_errno_error (error, errno, "Could not read directory", path);
  closedir (dir);
  return ok;
}

static gboolean
measure_tree (const char  *path,
              guint64     *n_files,
              guint64     *n_bytes,
              GError     **error)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  *n_files = 0;
  *n_bytes = 0;
  if (fd < 0)
    return set_errno_error (error, errno, "Could not open directory", path);
  return measure_directory (fd, path, 0, n_files, n_bytes, error);
}

/* The names in @directory that are ids or keys (in-flight temporaries are
 * not); a missing directory has none. */
static GPtrArray *
list_ids (const char  *directory,
          GError     **error)
{
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) dir = g_dir_open (directory, 0, &local_error);
  const char *name;

  if (dir == NULL && g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
    return g_steal_pointer (&ids);
  if (dir == NULL)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_file_error (local_error->code),
                   "%s", local_error->message);
      return NULL;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    if (sandbox_template_key_is_valid (name))
      g_ptr_array_add (ids, g_strdup (name));
  return g_steal_pointer (&ids);
}

/* The saved states of every stored session this store can read; a session
 * being created (no state yet) or one that is damaged is left out. */
static GPtrArray *
collect_states (SandboxBubblewrapStore  *self,
                GError                 **error)
{
  g_autoptr(GPtrArray) ids = list_ids (self->sessions, error);
  GPtrArray *states;

  if (ids == NULL)
    return NULL;
  states = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < ids->len; i++)
    {
      g_autofree char *directory = g_build_filename (self->sessions, ids->pdata[i], NULL);
      g_autoptr(GError) local_error = NULL;
      SandboxState *state = read_saved_state (directory, ids->pdata[i], &local_error);

      if (state != NULL && g_str_equal (sandbox_state_get_session_id (state), ids->pdata[i]))
        g_ptr_array_add (states, state);
      else if (state != NULL)
        g_warning ("Skipping session %s: its state names session %s", directory,
                   sandbox_state_get_session_id (state)), g_object_unref (state);
      else if (!g_error_matches (local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND))
        g_warning ("Skipping session %s: %s", directory, local_error->message);
    }
  return states;
}

/* Who holds the lease in session @directory: the pid the lease file holds,
 * alive while someone holds its OFD lock (the kernel drops it when the
 * owner dies). *@owner is NULL when there is no lease. */
static gboolean
read_lease_owner (const char          *directory,
                  SandboxLeaseOwner  **owner,
                  GError             **error)
{
  g_autofree char *path = lease_path (directory);
  g_auto(SandboxBubblewrapFd) fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  char text[24] = { 0 };
  gint64 pid = 0;
  gssize length;

  *owner = NULL;
  if (fd < 0 && errno == ENOENT)
    return TRUE;
  if (fd < 0)
    return set_errno_error (error, errno, "Could not open", path);
  if (fcntl (fd, F_OFD_GETLK, &lock) < 0)
    return set_errno_error (error, errno, "Could not query the lock of", path);
  length = pread (fd, text, sizeof text - 1, 0);
  if (length < 0 ||
      !g_ascii_string_to_signed (g_strstrip (text), 10, 1, G_MAXINT, &pid, NULL))
    pid = 0;   /* a lease we cannot read is still a lease */
  *owner = sandbox_lease_owner_new ((int) pid, NULL, lock.l_type != F_UNLCK);
  return TRUE;
}

/**
 * sandbox_bubblewrap_store_list_sessions:
 * @self: a store
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (element-type SandboxSessionInfo): the stored
 *   sessions, or %NULL with @error set
 */
GPtrArray *
sandbox_bubblewrap_store_list_sessions (SandboxBubblewrapStore  *self,
                                        GCancellable            *cancellable,
                                        GError                 **error)
{
  g_autoptr(GPtrArray) states = collect_states (self, error);
  g_autoptr(GPtrArray) sessions = NULL;

  if (states == NULL)
    return NULL;
  sessions = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < states->len; i++)
    {
      SandboxState *state = states->pdata[i];
      g_autofree char *directory =
        g_build_filename (self->sessions, sandbox_state_get_session_id (state), NULL);
      g_autofree char *workspace = g_build_filename (directory, "workspace", NULL);
      g_autoptr(SandboxLeaseOwner) owner = NULL;
      g_autoptr(GError) local_error = NULL;
      guint64 n_files, n_bytes;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      if (!read_lease_owner (directory, &owner, &local_error) ||
          !measure_tree (workspace, &n_files, &n_bytes, &local_error))
        {
          g_warning ("Skipping session %s: %s", directory, local_error->message);
          continue;
        }
      g_ptr_array_add (sessions, sandbox_session_info_new (state, owner, n_files, n_bytes));
    }
  return g_steal_pointer (&sessions);
}

static guint
count_sessions_of (GPtrArray  *states,
                   const char *template_key)
{
  guint n = 0;

  for (guint i = 0; i < states->len; i++)
    if (g_str_equal (sandbox_state_get_template_key (states->pdata[i]), template_key))
      n++;
  return n;
}

/**
 * sandbox_bubblewrap_store_list_templates:
 * @self: a store
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Returns: (transfer full) (element-type SandboxTemplateInfo): the stored
 *   templates of this backend, or %NULL with @error set
 */
GPtrArray *
sandbox_bubblewrap_store_list_templates (SandboxBubblewrapStore  *self,
                                         GCancellable            *cancellable,
                                         GError                 **error)
{
  g_autoptr(GPtrArray) keys = list_ids (self->templates, error);
  g_autoptr(GPtrArray) states = NULL;
  g_autoptr(GPtrArray) templates = NULL;

  if (keys == NULL || (states = collect_states (self, error)) == NULL)
    return NULL;
  templates = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < keys->len; i++)
    {
      const char *key = keys->pdata[i];
      g_autofree char *data = g_build_filename (self->templates, key, "data", NULL);
      g_autoptr(GError) local_error = NULL;
      guint64 n_files, n_bytes;

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        return NULL;
      if (!check_template_record (self, key, &local_error) ||
          !measure_tree (data, &n_files, &n_bytes, &local_error))
        {
          g_warning ("Skipping template %s: %s", key, local_error->message);
          continue;
        }
      g_ptr_array_add (templates, sandbox_template_info_new (key, n_files, n_bytes,
                                                             count_sessions_of (states, key)));
    }
  return g_steal_pointer (&templates);
}

static gboolean
check_session_exists (SandboxBubblewrapStore  *self,
                      const char              *directory,
                      const char              *session_id,
                      GError                 **error)
{
  if (g_file_test (directory, G_FILE_TEST_IS_DIR))
    return TRUE;
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
               "Unknown sandbox session %s", session_id);
  return FALSE;
}

/**
 * sandbox_bubblewrap_store_lookup_state:
 * @self: a store
 * @session_id: a session id (checked by the caller)
 * @error: return location for a #GError
 *
 * Returns: (transfer full): the session's saved state, or %NULL with
 *   @error set (%SANDBOX_ERROR_NOT_FOUND for an unknown session)
 */
SandboxState *
sandbox_bubblewrap_store_lookup_state (SandboxBubblewrapStore  *self,
                                       const char              *session_id,
                                       GError                 **error)
{
  g_autofree char *directory = g_build_filename (self->sessions, session_id, NULL);

  g_return_val_if_fail (sandbox_template_key_is_valid (session_id), NULL);

  if (!check_session_exists (self, directory, session_id, error))
    return NULL;
  return read_saved_state (directory, session_id, error);
}

/**
 * sandbox_bubblewrap_store_query_lease_owner:
 * @self: a store
 * @session_id: a session id (checked by the caller)
 * @owner: (out) (transfer full) (nullable): set to the lease's owner, or
 *   %NULL when nobody holds it
 * @error: return location for a #GError
 *
 * Returns: %TRUE, or %FALSE with @error set (%SANDBOX_ERROR_NOT_FOUND for
 *   an unknown session)
 */
gboolean
sandbox_bubblewrap_store_query_lease_owner (SandboxBubblewrapStore  *self,
                                            const char              *session_id,
                                            SandboxLeaseOwner      **owner,
                                            GError                 **error)
{
  g_autofree char *directory = g_build_filename (self->sessions, session_id, NULL);

  g_return_val_if_fail (sandbox_template_key_is_valid (session_id), FALSE);

  return check_session_exists (self, directory, session_id, error) &&
         read_lease_owner (directory, owner, error);
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
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                 "Unknown sandbox template %s", key);
  else if (fd < 0)
    set_errno_error (error, errno, "Could not open", ready);
  return fd;
}

/* A shared lock on the template, held while a session is created from it. */
static int
lock_template (SandboxBubblewrapStore  *self,
               const char              *key,
               GError                 **error)
{
  g_auto(SandboxBubblewrapFd) fd = open_template_ready (self, key, error);

  if (fd < 0)
    return -1;
  while (flock (fd, LOCK_SH) < 0)
    if (errno != EINTR)
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
  g_autofree char *directory = g_build_filename (self->templates, key, NULL);
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *doomed = g_build_filename (self->templates, uuid, NULL);
  g_auto(SandboxBubblewrapFd) ready_fd = -1;
  g_auto(SandboxBubblewrapFd) templates_fd = -1;
  g_autoptr(GPtrArray) states = NULL;
  guint n_sessions;

  g_return_val_if_fail (sandbox_template_key_is_valid (key), FALSE);

  ready_fd = open_template_ready (self, key, error);
  if (ready_fd < 0)
    return FALSE;
  if (flock (ready_fd, LOCK_EX | LOCK_NB) < 0)
    {
      if (errno != EWOULDBLOCK)
        return set_errno_error (error, errno, "Could not lock template", key);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "Sandbox template %s is in use: a session is being created from it", key);
      return FALSE;
    }
  if (!check_template_record (self, key, error) ||
      (states = collect_states (self, error)) == NULL)
    return FALSE;
  n_sessions = count_sessions_of (states, key);
  if (n_sessions > 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                   "Sandbox template %s is used by %u stored sessions; delete them first",
                   key, n_sessions);
      return FALSE;
    }

  templates_fd = open_directory (self->templates, error);
  if (templates_fd < 0)
    return FALSE;
  if (rename (directory, doomed) < 0)
    return set_errno_error (error, errno, "Could not remove template", directory);
  if (self->durable && !sync_fd (templates_fd, self->templates, error))
    return FALSE;
  /* Out of sight now: what a failure here leaves is an unnamed leftover. */
  return sandbox_workspace_remove_tree_at (templates_fd, uuid, error);
}
