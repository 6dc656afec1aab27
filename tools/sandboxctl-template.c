/* sandboxctl-template.c — building a template from --file and --dir
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include "sandboxctl.h"

void
sandboxctl_template_options_clear (SandboxctlTemplateOptions *options)
{
  g_clear_pointer (&options->name, g_free);
  g_clear_pointer (&options->files, g_strfreev);
  g_clear_pointer (&options->directory, g_free);
}

gboolean
sandboxctl_template_options_given (SandboxctlTemplateOptions *options)
{
  return options->name != NULL || options->files != NULL || options->directory != NULL;
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
 * @options: --template NAME, --dir HOSTDIR and --file PATH=HOSTFILE…
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

/* Progress ------------------------------------------------------------------ */

#define PROGRESS_BAR_WIDTH 30
/* Redraws at most this often (µs), except the first and the last. */
#define PROGRESS_REDRAW_INTERVAL (100 * G_TIME_SPAN_MILLISECOND)

static void
draw_progress (SandboxTemplate       *template_,
               guint64                files_done,
               guint64                files_total,
               guint64                bytes_done,
               guint64                bytes_total,
               SandboxctlProgressBar *bar)
{
  g_autofree char *done_text = g_format_size (bytes_done);
  g_autofree char *total_text = g_format_size (bytes_total);
  char cells[PROGRESS_BAR_WIDTH + 1];
  gint64 now = g_get_monotonic_time ();
  gboolean complete = files_done >= files_total && bytes_done >= bytes_total;
  /* Bytes measure the work; a template of empty files has files only. */
  int permille = bytes_total > 0 ? (int) (bytes_done * 1000 / bytes_total)
                 : files_total > 0 ? (int) (files_done * 1000 / files_total) : 1000;
  int filled = permille * PROGRESS_BAR_WIDTH / 1000;

  if (bar->drawn && !complete &&
      (permille == bar->last_permille || now - bar->last_draw < PROGRESS_REDRAW_INTERVAL))
    return;
  memset (cells, '#', filled);
  memset (cells + filled, ' ', PROGRESS_BAR_WIDTH - filled);
  cells[PROGRESS_BAR_WIDTH] = '\0';
  /* \r and erase-line: the bar stays on one terminal line. */
  g_printerr ("\r\033[K[%s] %3d%%  %" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT " files  %s/%s",
              cells, permille / 10, files_done, files_total, done_text, total_text);
  bar->drawn = TRUE;
  bar->last_draw = now;
  bar->last_permille = permille;
}

/**
 * sandboxctl_progress_bar_start:
 * @bar: the bar's state
 * @template_: the template about to be stored
 * @json: whether output is --json (then no bar)
 *
 * Draws [signal@Sandbox.Template::progress] as a bar on stderr while the
 * template is stored, if stderr is a terminal and output is not JSON:
 * scripts and pipes see nothing of it.
 */
void
sandboxctl_progress_bar_start (SandboxctlProgressBar *bar,
                               SandboxTemplate       *template_,
                               gboolean               json)
{
  *bar = (SandboxctlProgressBar) { 0, };
  if (json || !isatty (STDERR_FILENO))
    return;
  bar->template_ = g_object_ref (template_);
  bar->handler = g_signal_connect (template_, "progress", G_CALLBACK (draw_progress), bar);
}

/**
 * sandboxctl_progress_bar_finish:
 * @bar: the bar's state
 *
 * Stops drawing and ends the bar's line, if one was drawn.
 */
void
sandboxctl_progress_bar_finish (SandboxctlProgressBar *bar)
{
  if (bar->template_ == NULL)
    return;
  g_clear_signal_handler (&bar->handler, bar->template_);
  g_clear_object (&bar->template_);
  if (bar->drawn)
    g_printerr ("\n");
}
