/* sandbox-runtime-import.c — a runtime's tree, unpacked for a driver's store
 *
 * A driver stores runtimes where it stores everything else, but what goes
 * into its directory is the same for every driver, and is where the
 * untrusted input is read: the contained unpacking
 * (sandbox-runtime-unpack.c) and the key (sandbox-runtime-key.c) stay in
 * the core, and this is the one door to them a driver module (which sees
 * public symbols only) has.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "sandbox-backend.h"
#include "sandbox-error.h"
#include "sandbox-runtime-import.h"
#include "sandbox-runtime-unpack-private.h"

/**
 * sandbox_runtime_import_at:
 * @source: a root file system directory, or an OCI image layout directory
 *   (told apart by its `oci-layout` file)
 * @target_dirfd: an empty directory the caller made, private to the host
 * @progress: (nullable) (scope call): called as entries are created
 * @user_data: data for @progress
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * For drivers storing runtimes ([method@Sandbox.Backend.import_runtime]):
 * unpacks @source into @target_dirfd, contained (nothing is created,
 * written or followed outside it; setuid and setgid bits, owners, extended
 * attributes, devices, FIFOs and sockets are dropped), within the default
 * limits, and computes the tree's key. On failure the target is left part
 * filled, for the caller to remove. Blocking.
 *
 * Returns: (transfer full): the tree's key, 64 lowercase hex digits, or
 *   %NULL with @error set: %SANDBOX_ERROR_INVALID when @source is not a
 *   local directory or holds what cannot be unpacked, %SANDBOX_ERROR_LIMIT
 *   when it is too large
 */
char *
sandbox_runtime_import_at (GFile                            *source,
                           int                               target_dirfd,
                           SandboxRuntimeImportProgressFunc  progress,
                           gpointer                          user_data,
                           GCancellable                     *cancellable,
                           GError                          **error)
{
  static const SandboxRuntimeLimits limits = SANDBOX_RUNTIME_LIMITS_DEFAULT;
  g_autofree char *path = NULL;
  int source_fd;
  gboolean ok;
  char *key = NULL;

  g_return_val_if_fail (G_IS_FILE (source), NULL);
  g_return_val_if_fail (target_dirfd >= 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  path = g_file_get_path (source);
  if (path == NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "A runtime is imported from a local directory, not %s",
                   g_file_peek_path (source) != NULL ? g_file_peek_path (source) : "a URI");
      return NULL;
    }
  /* The source's own path may go through links (the operator named it);
   * nothing below it is followed. */
  source_fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (source_fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Runtime source %s is not a directory: %s", path, g_strerror (saved_errno));
      return NULL;
    }
  if (sandbox_runtime_source_is_oci_layout (source_fd))
    ok = sandbox_runtime_unpack_oci_layout (source_fd, target_dirfd, &limits,
                                            (SandboxRuntimeProgressFunc) progress, user_data,
                                            cancellable, error);
  else
    ok = sandbox_runtime_unpack_directory (source_fd, target_dirfd, &limits,
                                           (SandboxRuntimeProgressFunc) progress, user_data,
                                           cancellable, error);
  close (source_fd);
  if (ok)
    key = sandbox_runtime_compute_key (target_dirfd, cancellable, error);
  return key;
}

/* A backend's ::import-progress, at most every 50 ms (the unpacker calls
 * every 256 entries), and the totals once unpacked. */
typedef struct
{
  SandboxBackend *backend;
  gint64 last;
  guint64 n_entries, n_bytes;
} ImportProgress;

static void
import_progress_cb (guint64  n_entries,
                    guint64  n_bytes,
                    gpointer user_data)
{
  ImportProgress *progress = user_data;
  gint64 now = g_get_monotonic_time ();

  progress->n_entries = n_entries;
  progress->n_bytes = n_bytes;
  if (now - progress->last < 50 * G_TIME_SPAN_MILLISECOND)
    return;
  progress->last = now;
  sandbox_backend_emit_import_progress (progress->backend, n_entries, n_bytes);
}

/**
 * sandbox_runtime_import_reporting:
 * @backend: the backend whose [signal@Sandbox.Backend::import-progress]
 *   reports the import
 * @source: as for [func@Sandbox.runtime_import_at]
 * @target_dirfd: as for [func@Sandbox.runtime_import_at]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * [func@Sandbox.runtime_import_at], reporting its progress on @backend at
 * most every 50 ms and its totals once @source is unpacked: what a
 * driver's [method@Sandbox.Backend.import_runtime] calls.
 *
 * Returns: (transfer full): the tree's key, or %NULL with @error set, as
 *   for [func@Sandbox.runtime_import_at]
 */
char *
sandbox_runtime_import_reporting (SandboxBackend  *backend,
                                  GFile           *source,
                                  int              target_dirfd,
                                  GCancellable    *cancellable,
                                  GError         **error)
{
  ImportProgress progress = { backend, g_get_monotonic_time (), 0, 0 };
  char *key;

  g_return_val_if_fail (SANDBOX_IS_BACKEND (backend), NULL);

  key = sandbox_runtime_import_at (source, target_dirfd, import_progress_cb, &progress,
                                   cancellable, error);
  if (key != NULL)
    sandbox_backend_emit_import_progress (backend, progress.n_entries, progress.n_bytes);
  return key;
}
