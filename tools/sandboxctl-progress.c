/* sandboxctl-progress.c — a progress bar on stderr for prewarm and create
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * SandboxTemplate::progress (prewarm reading a template) and
 * SandboxBackend::create-progress (create copying one) carry the same
 * counts; one bar draws both.
 */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include "sandboxctl.h"

#define PROGRESS_BAR_WIDTH 30
/* Redraws at most this often (µs), except the first and the last. */
#define PROGRESS_REDRAW_INTERVAL (100 * G_TIME_SPAN_MILLISECOND)

static void
draw (SandboxctlProgressBar *bar,
      guint64                files_done,
      guint64                files_total,
      guint64                bytes_done,
      guint64                bytes_total)
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

static void
draw_template_progress (SandboxTemplate       *template_,
                        guint64                files_done,
                        guint64                files_total,
                        guint64                bytes_done,
                        guint64                bytes_total,
                        SandboxctlProgressBar *bar)
{
  draw (bar, files_done, files_total, bytes_done, bytes_total);
}

static void
draw_create_progress (SandboxBackend        *backend,
                      const char            *session_id,
                      guint64                files_done,
                      guint64                files_total,
                      guint64                bytes_done,
                      guint64                bytes_total,
                      SandboxctlProgressBar *bar)
{
  draw (bar, files_done, files_total, bytes_done, bytes_total);
}

/* Connects @callback to @signal of @instance, if stderr is a terminal and
 * output is not JSON: scripts and pipes see nothing of the bar. */
static void
start (SandboxctlProgressBar *bar,
       gpointer               instance,
       const char            *signal,
       GCallback              callback,
       gboolean               json)
{
  *bar = (SandboxctlProgressBar) { 0, };
  if (json || !isatty (STDERR_FILENO))
    return;
  bar->instance = g_object_ref (instance);
  bar->handler = g_signal_connect (instance, signal, callback, bar);
}

/**
 * sandboxctl_progress_bar_start_prewarm:
 * @bar: the bar's state
 * @template_: the template about to be stored
 * @json: whether output is --json (then no bar)
 *
 * Draws [signal@Sandbox.Template::progress] as a bar on stderr while the
 * template is stored, if stderr is a terminal and output is not JSON.
 */
void
sandboxctl_progress_bar_start_prewarm (SandboxctlProgressBar *bar,
                                       SandboxTemplate       *template_,
                                       gboolean               json)
{
  start (bar, template_, "progress", G_CALLBACK (draw_template_progress), json);
}

/**
 * sandboxctl_progress_bar_start_create:
 * @bar: the bar's state
 * @backend: the backend about to create a session
 * @json: whether output is --json (then no bar)
 *
 * Draws [signal@Sandbox.Backend::create-progress] as a bar on stderr while
 * a session is created, if stderr is a terminal and output is not JSON. A
 * create that copies nothing (a layered workspace) draws no bar.
 */
void
sandboxctl_progress_bar_start_create (SandboxctlProgressBar *bar,
                                      SandboxBackend        *backend,
                                      gboolean               json)
{
  start (bar, backend, "create-progress", G_CALLBACK (draw_create_progress), json);
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
  if (bar->instance == NULL)
    return;
  g_clear_signal_handler (&bar->handler, bar->instance);
  g_clear_object (&bar->instance);
  if (bar->drawn)
    g_printerr ("\n");
}
