/* sandbox-template-files.c — a template's files, looked up and read
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The queries about one file of a template and the reading of its
 * contents, above the entries sandbox-template.c keeps: a file added from
 * memory reads from its bytes, an imported one through the checked stream
 * of sandbox-template-stream.c.
 */

#include "config.h"

#include "sandbox-path.h"
#include "sandbox-template-private.h"

/* The entry at @path in any accepted form, or NULL. */
static SandboxTemplateEntry *
lookup_path (SandboxTemplate *self,
             const char      *path)
{
  g_autofree char *canonical = sandbox_path_canonicalize (path, NULL);

  if (canonical == NULL)
    return NULL;
  return sandbox_template_lookup_entry (self, canonical);
}

/**
 * sandbox_template_lookup_file:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path in any accepted form (`"a.txt"`,
 *   `"/workspace/a.txt"`)
 *
 * Looks up the contents of a file added from memory
 * ([method@Sandbox.Template.add_file], [method@Sandbox.Template.add_file_full]).
 * Files imported with [method@Sandbox.Template.add_directory] stay on the
 * host until they are read: use [method@Sandbox.Template.read_file], which
 * works for every file.
 *
 * Returns: (transfer none) (nullable): the file's bytes, or %NULL if @self
 *   has no file added from memory there or @path is not a valid workspace
 *   path
 */
GBytes *
sandbox_template_lookup_file (SandboxTemplate *self,
                              const char      *path)
{
  SandboxTemplateEntry *entry;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  entry = lookup_path (self, path);
  return entry != NULL ? entry->contents : NULL;
}

/**
 * sandbox_template_get_file_flags:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path in any accepted form
 *
 * Gets the flags of the regular file at @path.
 *
 * Returns: its flags; %SANDBOX_TEMPLATE_FILE_NONE if there is no regular
 *   file at @path
 */
SandboxTemplateFileFlags
sandbox_template_get_file_flags (SandboxTemplate *self,
                                 const char      *path)
{
  SandboxTemplateEntry *entry;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), SANDBOX_TEMPLATE_FILE_NONE);
  g_return_val_if_fail (path != NULL, SANDBOX_TEMPLATE_FILE_NONE);

  entry = lookup_path (self, path);
  return entry != NULL && entry->type == G_FILE_TYPE_REGULAR ? entry->flags
                                                             : SANDBOX_TEMPLATE_FILE_NONE;
}

/**
 * sandbox_template_get_file_size:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path in any accepted form
 *
 * Gets the size of the regular file at @path (for an imported file: its
 * size when it was imported).
 *
 * Returns: its size in bytes; 0 if there is no regular file at @path
 */
guint64
sandbox_template_get_file_size (SandboxTemplate *self,
                                const char      *path)
{
  SandboxTemplateEntry *entry;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), 0);
  g_return_val_if_fail (path != NULL, 0);

  entry = lookup_path (self, path);
  return entry != NULL ? entry->size : 0;
}

/**
 * sandbox_template_lookup_symlink:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path in any accepted form
 *
 * Looks up the target of the symbolic link at @path.
 *
 * Returns: (transfer none) (nullable): the link's target, verbatim, or
 *   %NULL if there is no symbolic link at @path
 */
const char *
sandbox_template_lookup_symlink (SandboxTemplate *self,
                                 const char      *path)
{
  SandboxTemplateEntry *entry;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);

  entry = lookup_path (self, path);
  return entry != NULL ? entry->target : NULL;
}

/**
 * sandbox_template_read_file:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path in any accepted form
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * Opens the contents of the regular file at @path for reading, as
 * g_file_read() does. A file added from memory reads from its bytes. A file
 * imported with [method@Sandbox.Template.add_directory] is opened again on
 * the host (beneath the imported directory, never through a symbolic link,
 * never blocking on something that is no longer a regular file) and
 * checked: if it is no longer the file imported (another inode, size or
 * modification or change time), or it does not end at the imported size,
 * or its SHA-256 is not the one an earlier read (or the import) found, the
 * opening or a read fails with %G_IO_ERROR_WRONG_ETAG naming the path (as
 * g_file_replace() reports a file changed meanwhile) instead of returning
 * end-of-file. The first read to the end gives the file its digest: the
 * bytes it returned are the ones hashed. So what a backend stores is
 * exactly what the key covers, provided it keeps the bytes only once the
 * stream has reached its end without an error.
 *
 * Returns: (transfer full): a #GInputStream, or %NULL with @error set:
 *   %G_IO_ERROR_NOT_FOUND if there is no regular file at @path, or the
 *   error of opening the host file
 */
GInputStream *
sandbox_template_read_file (SandboxTemplate  *self,
                            const char       *path,
                            GCancellable     *cancellable,
                            GError          **error)
{
  g_autofree char *canonical = NULL;
  SandboxTemplateEntry *entry;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  canonical = sandbox_path_canonicalize (path, NULL);
  entry = canonical != NULL ? sandbox_template_lookup_entry (self, canonical) : NULL;
  if (entry == NULL || entry->type != G_FILE_TYPE_REGULAR)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   "Template has no regular file at %s", canonical != NULL ? canonical : path);
      return NULL;
    }
  if (entry->contents != NULL)
    {
      sandbox_template_report_progress (self, entry->size, TRUE);
      return g_memory_input_stream_new_from_bytes (entry->contents);
    }
  return sandbox_template_file_stream_new (self, entry, canonical, error);
}

/**
 * sandbox_template_load_bytes:
 * @self: a [class@Sandbox.Template]
 * @path: a workspace path in any accepted form
 * @cancellable: (nullable): a #GCancellable, or %NULL
 * @error: return location for a #GError, or %NULL
 *
 * Loads the whole contents of the regular file at @path, as g_file_load_bytes()
 * does, checked as [method@Sandbox.Template.read_file] checks them. For
 * backends that keep files in memory; a backend that writes them to disk
 * should stream them with [method@Sandbox.Template.read_file] instead.
 *
 * Returns: (transfer full): the contents, or %NULL with @error set as
 *   [method@Sandbox.Template.read_file] sets it
 */
GBytes *
sandbox_template_load_bytes (SandboxTemplate  *self,
                             const char       *path,
                             GCancellable     *cancellable,
                             GError          **error)
{
  g_autoptr(GInputStream) stream = NULL;
  g_autoptr(GOutputStream) sink = NULL;
  GBytes *contents;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  contents = sandbox_template_lookup_file (self, path);
  if (contents != NULL)
    {
      sandbox_template_report_progress (self, g_bytes_get_size (contents), TRUE);
      return g_bytes_ref (contents);
    }

  stream = sandbox_template_read_file (self, path, cancellable, error);
  if (stream == NULL)
    return NULL;
  sink = g_memory_output_stream_new_resizable ();
  if (g_output_stream_splice (sink, stream, G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE |
                              G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, cancellable, error) < 0)
    return NULL;
  return g_memory_output_stream_steal_as_bytes (G_MEMORY_OUTPUT_STREAM (sink));
}
