/* fuzz-path.c — sandbox_path_canonicalize()
 *
 * Properties of an accepted path: it is /workspace or /workspace/<relative>,
 * valid UTF-8, with no backslash and no empty, "." or ".." segment;
 * canonicalizing it again gives the same string; sandbox_path_relative()
 * agrees. A rejection is always SANDBOX_ERROR_PATH.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#include "sandbox-path.h"
#include "sandbox-error.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_common_init ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *path = fuzz_dup_string (data, size);
  g_autoptr(GError) error = NULL;
  g_autofree char *canonical = NULL;
  g_autofree char *again = NULL;
  g_auto(GStrv) segments = NULL;
  const char *relative;

  canonical = sandbox_path_canonicalize (path, &error);
  if (canonical == NULL)
    {
      FUZZ_CHECK (g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH));
      FUZZ_CHECK (g_utf8_validate (error->message, -1, NULL));
      return 0;
    }

  FUZZ_CHECK (g_utf8_validate (canonical, -1, NULL));
  FUZZ_CHECK (strchr (canonical, '\\') == NULL);
  FUZZ_CHECK (g_str_equal (canonical, SANDBOX_WORKSPACE) ||
              g_str_has_prefix (canonical, SANDBOX_WORKSPACE "/"));

  again = sandbox_path_canonicalize (canonical, &error);
  FUZZ_CHECK (again != NULL && g_str_equal (again, canonical));

  relative = sandbox_path_relative (canonical);
  FUZZ_CHECK (relative != NULL);
  if (g_str_equal (canonical, SANDBOX_WORKSPACE))
    return 0;

  FUZZ_CHECK (g_str_equal (relative, canonical + strlen (SANDBOX_WORKSPACE "/")));
  segments = g_strsplit (relative, "/", -1);
  for (guint i = 0; segments[i] != NULL; i++)
    {
      FUZZ_CHECK (segments[i][0] != '\0');
      FUZZ_CHECK (!g_str_equal (segments[i], "."));
      FUZZ_CHECK (!g_str_equal (segments[i], ".."));
    }

  return 0;
}
