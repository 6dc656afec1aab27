/* sandbox-path.c — canonical workspace paths
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-error.h"
#include "sandbox-path.h"

#define WORKSPACE_PREFIX SANDBOX_WORKSPACE "/"

static gboolean
relative_path_is_canonical (const char *relative)
{
  const char *segment = relative;

  if (*relative == '\0' || *relative == '/' || strchr (relative, '\\') != NULL)
    return FALSE;

  /* Every segment must be a real name: no "", "." or "..". */
  while (TRUE)
    {
      const char *end = strchr (segment, '/');
      gsize length = end != NULL ? (gsize) (end - segment) : strlen (segment);

      if (length == 0 ||
          (length == 1 && segment[0] == '.') ||
          (length == 2 && segment[0] == '.' && segment[1] == '.'))
        return FALSE;

      if (end == NULL)
        return TRUE;
      segment = end + 1;
    }
}

/**
 * sandbox_path_canonicalize:
 * @path: a workspace path: `"/workspace"`, `"."`, a path relative to the
 *   workspace, or one under `"/workspace/"`
 * @error: return location for a #GError, or %NULL
 *
 * Turns a path an agent gives into the absolute path it names inside the
 * sandbox. Only canonical paths are accepted, so there is never anything to
 * normalize and nothing can point outside the workspace: the relative part
 * must be non-empty valid UTF-8 that does not start with `/`, contains no
 * backslash and has no segment that is empty, `.` or `..`. (A C string cannot
 * contain NUL, which the reference also refuses.)
 *
 * `"/workspace"` and `"."` name the workspace root; `"/workspace/"` with a
 * trailing slash is refused like any other empty segment.
 *
 * Returns: (transfer full): `"/workspace"` or `"/workspace/<relative>"`, or
 *   %NULL with %SANDBOX_ERROR_PATH set
 */
char *
sandbox_path_canonicalize (const char  *path,
                           GError     **error)
{
  const char *relative;

  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!g_utf8_validate (path, -1, NULL))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH,
                           "Expected a canonical workspace-relative path (the path is not valid UTF-8)");
      return NULL;
    }

  if (g_str_equal (path, SANDBOX_WORKSPACE) || g_str_equal (path, "."))
    return g_strdup (SANDBOX_WORKSPACE);

  relative = g_str_has_prefix (path, WORKSPACE_PREFIX)
    ? path + strlen (WORKSPACE_PREFIX)
    : path;

  if (!relative_path_is_canonical (relative))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH,
                   "Expected a canonical workspace-relative path, got “%s”", path);
      return NULL;
    }

  return g_strconcat (WORKSPACE_PREFIX, relative, NULL);
}

/**
 * sandbox_path_relative:
 * @canonical_path: a path returned by [func@Sandbox.path_canonicalize]
 *
 * Gives the part of a canonical path below the workspace, the form to use
 * relative to a workspace directory on the host.
 *
 * Returns: (transfer none): a pointer into @canonical_path after
 *   `"/workspace/"`, or the static string `"."` for the workspace root itself
 */
const char *
sandbox_path_relative (const char *canonical_path)
{
  g_return_val_if_fail (canonical_path != NULL, NULL);

  if (g_str_equal (canonical_path, SANDBOX_WORKSPACE))
    return ".";

  g_return_val_if_fail (g_str_has_prefix (canonical_path, WORKSPACE_PREFIX), NULL);

  return canonical_path + strlen (WORKSPACE_PREFIX);
}
