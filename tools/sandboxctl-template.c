/* sandboxctl-template.c — building a template from --file and --dir
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandboxctl.h"

void
sandboxctl_template_options_clear (SandboxctlTemplateOptions *options)
{
  g_clear_pointer (&options->name, g_free);
  g_clear_pointer (&options->files, g_strfreev);
  g_clear_pointer (&options->directory, g_free);
  g_clear_pointer (&options->runtime, g_free);
}

gboolean
sandboxctl_template_options_given (SandboxctlTemplateOptions *options)
{
  return options->name != NULL || options->files != NULL || options->directory != NULL ||
         options->runtime != NULL;
}

static gboolean
add_host_file (SandboxTemplate  *template_,
               const char       *spec,
               GError          **error)
{
  const char *equals = strchr (spec, '=');
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_autoptr(GBytes) bytes = NULL;

  if (equals == NULL || equals == spec || equals[1] == '\0')
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--file expects PATH=HOSTFILE, not “%s”", spec);
      return FALSE;
    }
  path = g_strndup (spec, equals - spec);
  if (!g_file_get_contents (equals + 1, &contents, &length, error))
    return FALSE;
  bytes = g_bytes_new_take (g_steal_pointer (&contents), length);
  return sandbox_template_add_file (template_, path, bytes, error);
}

/**
 * sandboxctl_template_build:
 * @options: --template NAME, --dir HOSTDIR, --file PATH=HOSTFILE… and
 *   --runtime KEY [--writable-runtime]
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Builds the template: the directory's tree first, then the single files
 * (which may add to it). Without --dir and --file the template is empty.
 *
 * Returns: (transfer full): the template, or %NULL with @error set
 */
SandboxTemplate *
sandboxctl_template_build (SandboxctlTemplateOptions  *options,
                           GCancellable               *cancellable,
                           GError                    **error)
{
  g_autoptr(SandboxTemplate) template_ = NULL;

  if (options->name == NULL || options->name[0] == '\0')
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--template NAME is required");
      return NULL;
    }

  template_ = sandbox_template_new (options->name);
  if (options->runtime != NULL)
    {
      if (!sandbox_template_key_is_valid (options->runtime))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--runtime expects a runtime key (sandboxctl runtime list), not “%s”",
                       options->runtime);
          return NULL;
        }
      sandbox_template_set_runtime (template_, options->runtime);
      sandbox_template_set_runtime_writable (template_, options->writable_runtime);
    }
  else if (options->writable_runtime)
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           "--writable-runtime needs --runtime KEY");
      return NULL;
    }
  if (options->directory != NULL)
    {
      g_autoptr(GFile) directory = g_file_new_for_commandline_arg (options->directory);

      if (!sandbox_template_add_directory (template_, directory, cancellable, error))
        return NULL;
    }
  for (guint i = 0; options->files != NULL && options->files[i] != NULL; i++)
    if (!add_host_file (template_, options->files[i], error))
      return NULL;

  return g_steal_pointer (&template_);
}
