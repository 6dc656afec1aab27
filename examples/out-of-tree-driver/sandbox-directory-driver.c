/* sandbox-directory-driver.c — a minimal out-of-tree libsandbox driver
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The "directory" driver keeps templates and sessions as plain host
 * directories under its state directory and runs no commands: spawning is
 * refused with SANDBOX_ERROR_UNAVAILABLE, so there is nothing to isolate and
 * deny-all is the only policy it enforces. It is small but complete: content-
 * addressed templates, sessions with an O_EXCL lease, resume from a
 * SandboxState, stop, delete and workspace file I/O. Run
 *
 *   sandbox-conformance --no-commands directory
 *
 * with SANDBOX_DRIVER_PATH pointing at the built module to check it.
 *
 * Layout: <state>/<sha256(name)>/templates/<key>/{ready,data/}
 *         <state>/<sha256(name)>/sessions/<id>/{lease,state.json,workspace/}
 *
 * All file I/O inside a workspace, and every copy into or removal of one,
 * goes through the core's SandboxWorkspace: no guest runs here, but a driver
 * that runs guest commands gets the same code, which never follows a link
 * a guest planted out of the workspace.
 */

#define _GNU_SOURCE   /* O_CLOEXEC */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <sandbox-backend-driver.h>

#define DEFAULT_NAME "directory"

/* ------------------------------------------------------------------------ */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------ */

/* rm -rf of @path, never following a link; a missing @path is fine. */
static gboolean
remove_tree (const char  *path,
             GError     **error)
{
  g_autofree char *parent = g_path_get_dirname (path);
  g_autofree char *name = g_path_get_basename (path);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(SandboxWorkspace) directory = NULL;

  directory = sandbox_workspace_open (parent, SANDBOX_WORKSPACE_FLAGS_NONE, &local_error);
  if (directory == NULL && g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    return TRUE;
  if (directory == NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  return sandbox_workspace_remove_tree_at (sandbox_workspace_get_fd (directory), name, error);
}

/* Creates @path (and its parents) and opens it for contained file I/O. */
static SandboxWorkspace *
make_directory (const char  *path,
                GError     **error)
{
  if (g_mkdir_with_parents (path, 0700) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not create %s: %s", path, g_strerror (saved_errno));
      return NULL;
    }
  return sandbox_workspace_open (path, SANDBOX_WORKSPACE_FLAGS_NONE, error);
}

static gboolean
write_file (const char  *path,
            const char  *contents,
            GError     **error)
{
  return g_file_set_contents_full (path, contents, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600,
                                   error);
}

/* Nothing runs, so nothing can reach a network: deny-all holds. Anything
 * else would be a promise the driver can't keep. */
static gboolean
check_policy (SandboxNetworkPolicy  *policy,
              GError               **error)
{
  if (sandbox_network_policy_get_kind (policy) == SANDBOX_NETWORK_POLICY_DENY_ALL)
    return TRUE;
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       "The directory driver supports only the deny-all network policy");
  return FALSE;
}

/* ------------------------------------------------------------------------ */
/* SandboxDirectoryDriver: one live session's workspace                      */
/* ------------------------------------------------------------------------ */

#define SANDBOX_TYPE_DIRECTORY_DRIVER (sandbox_directory_driver_get_type ())
G_DECLARE_FINAL_TYPE (SandboxDirectoryDriver, sandbox_directory_driver, SANDBOX, DIRECTORY_DRIVER,
                      GObject)

struct _SandboxDirectoryDriver
{
  GObject           parent_instance;
  SandboxWorkspace *workspace;
  gboolean          stopped;      /* atomic */
};

static void sandbox_directory_driver_iface_init (SandboxDriverInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxDirectoryDriver, sandbox_directory_driver, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SANDBOX_TYPE_DRIVER,
                                                               sandbox_directory_driver_iface_init))

static gboolean
check_live (SandboxDirectoryDriver  *self,
            GError                 **error)
{
  if (!g_atomic_int_get (&self->stopped))
    return TRUE;
  return sandbox_set_error_stopped (error);
}

/* The core runs the file-operation ritual (size, this check, the path,
 * the read limit) around the operations below; @path is canonical. */
static gboolean
sandbox_directory_driver_check_active (SandboxDriver  *driver,
                                       GCancellable   *cancellable,
                                       GError        **error)
{
  return check_live (SANDBOX_DIRECTORY_DRIVER (driver), error) &&
         !g_cancellable_set_error_if_cancelled (cancellable, error);
}

static GBytes *
sandbox_directory_driver_read_bytes (SandboxDriver  *driver,
                                     const char     *path,
                                     GCancellable   *cancellable,
                                     GError        **error)
{
  return sandbox_workspace_read (SANDBOX_DIRECTORY_DRIVER (driver)->workspace,
                                 sandbox_path_relative (path),
                                 sandbox_driver_get_max_file_bytes (driver), error);
}

static gboolean
sandbox_directory_driver_write_bytes (SandboxDriver  *driver,
                                      const char     *path,
                                      GBytes         *contents,
                                      GCancellable   *cancellable,
                                      GError        **error)
{
  return sandbox_workspace_write (SANDBOX_DIRECTORY_DRIVER (driver)->workspace,
                                  sandbox_path_relative (path), contents,
                                  sandbox_driver_get_max_file_bytes (driver), error);
}

static gboolean
sandbox_directory_driver_remove_path (SandboxDriver  *driver,
                                      const char     *path,
                                      GCancellable   *cancellable,
                                      GError        **error)
{
  return sandbox_workspace_remove (SANDBOX_DIRECTORY_DRIVER (driver)->workspace,
                                   sandbox_path_relative (path), error);
}

static SandboxProcess *
sandbox_directory_driver_spawn (SandboxDriver   *driver,
                                SandboxCommand  *command,
                                GCancellable    *cancellable,
                                GError         **error)
{
  SandboxDirectoryDriver *self = SANDBOX_DIRECTORY_DRIVER (driver);

  if (!check_live (self, error))
    return NULL;
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "The directory driver runs no commands (refused “%s”)",
               sandbox_command_get_executable (command));
  return NULL;
}

static gboolean
sandbox_directory_driver_set_network_policy (SandboxDriver         *driver,
                                             SandboxNetworkPolicy  *policy,
                                             GCancellable          *cancellable,
                                             GError               **error)
{
  SandboxDirectoryDriver *self = SANDBOX_DIRECTORY_DRIVER (driver);

  if (!check_live (self, error))
    return FALSE;
  return check_policy (policy, error);
}

static void
sandbox_directory_driver_iface_init (SandboxDriverInterface *iface)
{
  iface->check_active = sandbox_directory_driver_check_active;
  iface->read_bytes = sandbox_directory_driver_read_bytes;
  iface->write_bytes = sandbox_directory_driver_write_bytes;
  iface->remove_path = sandbox_directory_driver_remove_path;
  iface->spawn = sandbox_directory_driver_spawn;
  iface->set_network_policy = sandbox_directory_driver_set_network_policy;
}

static void
sandbox_directory_driver_finalize (GObject *object)
{
  g_clear_pointer (&SANDBOX_DIRECTORY_DRIVER (object)->workspace, sandbox_workspace_unref);
  G_OBJECT_CLASS (sandbox_directory_driver_parent_class)->finalize (object);
}

static void
sandbox_directory_driver_class_init (SandboxDirectoryDriverClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_directory_driver_finalize;
}

static void
sandbox_directory_driver_class_finalize (SandboxDirectoryDriverClass *klass)
{
}

static void
sandbox_directory_driver_init (SandboxDirectoryDriver *self)
{
}

/* ------------------------------------------------------------------------ */
/* SandboxDirectoryHandle: the owner of a live session                       */
/* ------------------------------------------------------------------------ */

#define SANDBOX_TYPE_DIRECTORY_HANDLE (sandbox_directory_handle_get_type ())
G_DECLARE_FINAL_TYPE (SandboxDirectoryHandle, sandbox_directory_handle, SANDBOX, DIRECTORY_HANDLE,
                      SandboxHandle)

struct _SandboxDirectoryHandle
{
  SandboxHandle           parent_instance;
  SandboxDirectoryDriver *driver;
  SandboxBackendBase     *backend;
};

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxDirectoryHandle, sandbox_directory_handle,
                                SANDBOX_TYPE_HANDLE, G_TYPE_FLAG_FINAL, {})

static gboolean
sandbox_directory_handle_stop (SandboxHandle  *handle,
                               GCancellable   *cancellable,
                               GError        **error)
{
  SandboxDirectoryHandle *self = SANDBOX_DIRECTORY_HANDLE (handle);

  /* No commands to kill and no gateway to close: refuse further work and
   * release the lease. The workspace stays. */
  g_atomic_int_set (&self->driver->stopped, TRUE);
  SANDBOX_BACKEND_BASE_GET_CLASS (self->backend)->release_lease (
    self->backend, sandbox_session_get_id (sandbox_handle_get_session (handle)));
  return TRUE;
}

/* The core's protocol: the lease again (a newer owner makes this BUSY),
 * then remove_session. */
static gboolean
sandbox_directory_handle_delete_session (SandboxHandle  *handle,
                                         GCancellable   *cancellable,
                                         GError        **error)
{
  SandboxDirectoryHandle *self = SANDBOX_DIRECTORY_HANDLE (handle);
  const char *session_id = sandbox_session_get_id (sandbox_handle_get_session (handle));

  return sandbox_backend_base_delete_session (self->backend, session_id, cancellable, error);
}

static void
sandbox_directory_handle_finalize (GObject *object)
{
  SandboxDirectoryHandle *self = SANDBOX_DIRECTORY_HANDLE (object);

  g_clear_object (&self->driver);
  g_clear_object (&self->backend);
  G_OBJECT_CLASS (sandbox_directory_handle_parent_class)->finalize (object);
}

static void
sandbox_directory_handle_class_init (SandboxDirectoryHandleClass *klass)
{
  SandboxHandleClass *handle_class = SANDBOX_HANDLE_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = sandbox_directory_handle_finalize;
  handle_class->stop = sandbox_directory_handle_stop;
  handle_class->delete_session = sandbox_directory_handle_delete_session;
}

static void
sandbox_directory_handle_class_finalize (SandboxDirectoryHandleClass *klass)
{
}

static void
sandbox_directory_handle_init (SandboxDirectoryHandle *self)
{
}

/* ------------------------------------------------------------------------ */
/* SandboxDirectoryBackend                                                   */
/* ------------------------------------------------------------------------ */

#define SANDBOX_TYPE_DIRECTORY_BACKEND (sandbox_directory_backend_get_type ())
G_DECLARE_FINAL_TYPE (SandboxDirectoryBackend, sandbox_directory_backend, SANDBOX,
                      DIRECTORY_BACKEND, SandboxBackendBase)

/* The name, state directory and admission limit every backend has are the
 * core's SandboxBackendBase's: this driver keeps only what it adds. */
struct _SandboxDirectoryBackend
{
  SandboxBackendBase  parent_instance;
  char               *root;     /* <state>/<sha256(name)>, set by init() */
};

static void sandbox_directory_backend_iface_init (SandboxBackendInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxDirectoryBackend, sandbox_directory_backend,
                                SANDBOX_TYPE_BACKEND_BASE, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SANDBOX_TYPE_BACKEND,
                                                               sandbox_directory_backend_iface_init))

/* The base has checked the name and the admission limit. */
static gboolean
sandbox_directory_backend_init_backend (SandboxBackendBase  *base,
                                        GCancellable        *cancellable,
                                        GError             **error)
{
  SandboxDirectoryBackend *self = SANDBOX_DIRECTORY_BACKEND (base);
  const char *state_directory = sandbox_backend_base_get_state_directory (base);
  g_autofree char *name_hash = NULL;
  g_autofree char *resolved = NULL;

  if (state_directory == NULL || !g_path_is_absolute (state_directory))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "The directory driver needs an absolute state-directory");
      return FALSE;
    }
  if (g_mkdir_with_parents (state_directory, 0700) != 0
      || (resolved = realpath (state_directory, NULL)) == NULL)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not create the state directory %s: %s", state_directory,
                   g_strerror (saved_errno));
      return FALSE;
    }
  name_hash = g_compute_checksum_for_string (G_CHECKSUM_SHA256,
                                            sandbox_backend_base_get_name (base), -1);
  self->root = g_build_filename (resolved, name_hash, NULL);
  return TRUE;
}

/* Writes the files of @template_ into @directory/data, then the marker.
 * This small driver keeps regular files only: a template with symbolic
 * links or empty directories is refused, not stored differently. */
static gboolean
fill_template (const char       *directory,
               SandboxTemplate  *template_,
               const char       *key,
               GError          **error)
{
  g_autofree char *data_directory = g_build_filename (directory, "data", NULL);
  g_autofree char *marker = g_build_filename (directory, "ready", NULL);
  g_autoptr(SandboxWorkspace) data = make_directory (data_directory, error);
  g_auto(GStrv) paths = NULL;

  if (data == NULL)
    return FALSE;
  paths = sandbox_template_list_paths (template_);
  for (guint i = 0; paths[i] != NULL; i++)
    {
      g_autoptr(GBytes) contents = NULL;

      if (sandbox_template_query_file_type (template_, paths[i]) != G_FILE_TYPE_REGULAR)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       "The directory driver stores regular files only, not %s", paths[i]);
          return FALSE;
        }
      contents = sandbox_template_load_bytes (template_, paths[i], NULL, error);
      if (contents == NULL ||
          !sandbox_workspace_write (data, sandbox_path_relative (paths[i]), contents,
                                    G_MAXSIZE - 1, error))
        return FALSE;
    }
  return write_file (marker, key, error);
}

static char *
sandbox_directory_backend_prewarm (SandboxBackend   *backend,
                                   SandboxTemplate  *template_,
                                   gboolean         *reused,
                                   GCancellable     *cancellable,
                                   GError          **error)
{
  SandboxDirectoryBackend *self = SANDBOX_DIRECTORY_BACKEND (backend);
  const char *name = sandbox_backend_base_get_name (SANDBOX_BACKEND_BASE (backend));
  g_autofree char *key = NULL;
  g_autofree char *templates = NULL;
  g_autofree char *directory = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *temporary = NULL;

  key = sandbox_template_compute_key (template_, name, error);
  if (key == NULL)
    return NULL;
  templates = g_build_filename (self->root, "templates", NULL);
  directory = g_build_filename (templates, key, NULL);
  ready = g_build_filename (directory, "ready", NULL);
  if (g_file_test (ready, G_FILE_TEST_EXISTS))
    {
      *reused = TRUE;
      return g_steal_pointer (&key);
    }

  /* Build it aside and rename it into place; losing a race to the same key
   * is fine, the content is the same. */
  temporary = g_build_filename (templates, ".tmp-XXXXXX", NULL);
  if (g_mkdir_with_parents (templates, 0700) != 0 || g_mkdtemp_full (temporary, 0700) == NULL)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not create a template directory in %s: %s", templates,
                   g_strerror (saved_errno));
      return NULL;
    }
  if (!fill_template (temporary, template_, key, error))
    {
      remove_tree (temporary, NULL);
      return NULL;
    }
  if (g_rename (temporary, directory) != 0 && errno != EEXIST && errno != ENOTEMPTY)
    {
      int saved_errno = errno;

      remove_tree (temporary, NULL);
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not store template %s: %s", key, g_strerror (saved_errno));
      return NULL;
    }
  remove_tree (temporary, NULL);
  *reused = FALSE;
  return g_steal_pointer (&key);
}

/* The steps of the core's session protocol, which the base's create
 * (sandbox_backend_base_implement_sessions()) runs in the reference's
 * order. */

static char *
session_directory (SandboxBackendBase *base,
                   const char         *session_id)
{
  return g_build_filename (SANDBOX_DIRECTORY_BACKEND (base)->root, "sessions", session_id, NULL);
}

static gboolean
sandbox_directory_backend_check_policy (SandboxBackendBase    *base,
                                        SandboxNetworkPolicy  *policy,
                                        GError               **error)
{
  return check_policy (policy, error);
}

static gboolean
sandbox_directory_backend_check_template (SandboxBackendBase  *base,
                                          const char          *template_key,
                                          GCancellable        *cancellable,
                                          GError             **error)
{
  g_autofree char *ready = g_build_filename (SANDBOX_DIRECTORY_BACKEND (base)->root, "templates",
                                             template_key, "ready", NULL);

  return g_file_test (ready, G_FILE_TEST_IS_REGULAR) ||
         sandbox_set_error_unknown_template (error, template_key);
}

static gboolean
sandbox_directory_backend_has_session (SandboxBackendBase *base,
                                       const char         *session_id)
{
  g_autofree char *directory = session_directory (base, session_id);

  return g_file_test (directory, G_FILE_TEST_IS_DIR);
}

/* The lease is a file made with O_EXCL, holding the owner's pid. */
static gboolean
sandbox_directory_backend_take_lease (SandboxBackendBase  *base,
                                      const char          *session_id,
                                      GCancellable        *cancellable,
                                      GError             **error)
{
  g_autofree char *directory = session_directory (base, session_id);
  g_autofree char *lease = g_build_filename (directory, "lease", NULL);
  g_autofree char *pid = g_strdup_printf ("%d", (int) getpid ());
  int fd = open (lease, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  int saved_errno = errno;

  if (fd < 0 && saved_errno == EEXIST)
    return sandbox_set_error_has_owner (error);
  if (fd < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not create the lease %s: %s", lease, g_strerror (saved_errno));
      return FALSE;
    }
  if (write (fd, pid, strlen (pid)) < 0)
    g_warning ("Could not record the owner in %s: %s", lease, g_strerror (errno));
  close (fd);
  return TRUE;
}

static void
sandbox_directory_backend_release_lease (SandboxBackendBase *base,
                                         const char         *session_id)
{
  g_autofree char *directory = session_directory (base, session_id);
  g_autofree char *lease = g_build_filename (directory, "lease", NULL);

  g_unlink (lease);
}

static SandboxState *
sandbox_directory_backend_load_state (SandboxBackendBase  *base,
                                      const char          *session_id,
                                      GCancellable        *cancellable,
                                      GError             **error)
{
  g_autofree char *directory = session_directory (base, session_id);
  g_autofree char *path = g_build_filename (directory, "state.json", NULL);
  g_autofree char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, error))
    return NULL;
  return sandbox_state_new_from_json (contents, error);
}

/* The session directory with its lease, a copy of the template's data and
 * the state; nothing of it is left on failure. */
static gboolean
sandbox_directory_backend_new_session (SandboxBackendBase  *base,
                                       SandboxState        *state,
                                       GCancellable        *cancellable,
                                       GError             **error)
{
  g_autofree char *directory = session_directory (base, sandbox_state_get_session_id (state));
  g_autofree char *data_directory = g_build_filename (SANDBOX_DIRECTORY_BACKEND (base)->root,
                                                      "templates",
                                                      sandbox_state_get_template_key (state),
                                                      "data", NULL);
  g_autofree char *state_path = g_build_filename (directory, "state.json", NULL);
  g_autofree char *json = sandbox_state_to_json (state);
  g_autoptr(SandboxWorkspace) data = NULL;
  g_autoptr(SandboxWorkspace) session = make_directory (directory, error);

  if (session == NULL)
    return FALSE;
  if (!sandbox_directory_backend_take_lease (base, sandbox_state_get_session_id (state),
                                             cancellable, error)
      || (data = sandbox_workspace_open (data_directory, SANDBOX_WORKSPACE_FLAGS_NONE,
                                         error)) == NULL
      || !sandbox_workspace_copy_tree (data, session, "workspace", NULL, cancellable, error)
      || !write_file (state_path, json, error))
    {
      remove_tree (directory, NULL);
      return FALSE;
    }
  return TRUE;
}

static SandboxHandle *
sandbox_directory_backend_new_handle (SandboxBackendBase    *base,
                                      SandboxState          *state,
                                      SandboxNetworkPolicy  *policy,
                                      GCancellable          *cancellable,
                                      GError               **error)
{
  g_autofree char *directory = session_directory (base, sandbox_state_get_session_id (state));
  g_autofree char *workspace_directory = g_build_filename (directory, "workspace", NULL);
  g_autoptr(SandboxWorkspace) workspace = NULL;
  SandboxDirectoryDriver *driver;
  g_autoptr(SandboxSession) session = NULL;
  SandboxDirectoryHandle *handle;

  workspace = sandbox_workspace_open (workspace_directory, SANDBOX_WORKSPACE_FLAGS_NONE, error);
  if (workspace == NULL)
    return NULL;
  driver = g_object_new (SANDBOX_TYPE_DIRECTORY_DRIVER, NULL);
  driver->workspace = g_steal_pointer (&workspace);
  session = sandbox_session_new (sandbox_state_get_session_id (state), SANDBOX_DRIVER (driver),
                                 NULL);
  handle = g_object_new (SANDBOX_TYPE_DIRECTORY_HANDLE, "session", session, "state", state, NULL);
  handle->driver = driver;
  handle->backend = g_object_ref (base);
  return SANDBOX_HANDLE (handle);
}

static gboolean
sandbox_directory_backend_remove_session (SandboxBackendBase  *base,
                                          const char          *session_id,
                                          GCancellable        *cancellable,
                                          GError             **error)
{
  g_autofree char *directory = session_directory (base, session_id);

  return remove_tree (directory, error);
}

static void
sandbox_directory_backend_iface_init (SandboxBackendInterface *iface)
{
  iface->prewarm = sandbox_directory_backend_prewarm;
  sandbox_backend_base_implement_sessions (iface);   /* create, lookup_state */
}

static void
sandbox_directory_backend_finalize (GObject *object)
{
  SandboxDirectoryBackend *self = SANDBOX_DIRECTORY_BACKEND (object);

  g_free (self->root);
  G_OBJECT_CLASS (sandbox_directory_backend_parent_class)->finalize (object);
}

static void
sandbox_directory_backend_class_init (SandboxDirectoryBackendClass *klass)
{
  SandboxBackendBaseClass *base_class = SANDBOX_BACKEND_BASE_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = sandbox_directory_backend_finalize;
  base_class->init_backend = sandbox_directory_backend_init_backend;
  base_class->check_policy = sandbox_directory_backend_check_policy;
  base_class->check_template = sandbox_directory_backend_check_template;
  base_class->has_session = sandbox_directory_backend_has_session;
  base_class->take_lease = sandbox_directory_backend_take_lease;
  base_class->release_lease = sandbox_directory_backend_release_lease;
  base_class->load_state = sandbox_directory_backend_load_state;
  base_class->new_session = sandbox_directory_backend_new_session;
  base_class->new_handle = sandbox_directory_backend_new_handle;
  base_class->remove_session = sandbox_directory_backend_remove_session;
  sandbox_backend_base_class_set_default_name (base_class, DEFAULT_NAME);
}

static void
sandbox_directory_backend_class_finalize (SandboxDirectoryBackendClass *klass)
{
}

static void
sandbox_directory_backend_init (SandboxDirectoryBackend *self)
{
}

/* ------------------------------------------------------------------------ */
/* The GIO module entry points — the only exported symbols                   */
/* ------------------------------------------------------------------------ */

/* Types of a loaded driver can't be unregistered: the module stays resident. */
static void
register_types (GTypeModule *module)
{
  sandbox_directory_driver_register_type (module);
  sandbox_directory_handle_register_type (module);
  sandbox_directory_backend_register_type (module);
}

SANDBOX_DEFINE_DRIVER_MODULE (DEFAULT_NAME, SANDBOX_TYPE_DIRECTORY_BACKEND, register_types)
