/* test-create-progress.c — SandboxBackend::create-progress of the bubblewrap backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A backend that copies templates (layering "copy") reports the copy of a
 * few hundred files: in the caller's thread, counting up, ending at the
 * totals the store lists for the template, throttled, and, for the async
 * form, all before the create's callback. A layered create copies nothing
 * and reports nothing.
 */

#include <stdlib.h>
#include <string.h>

#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"

#define N_FILES 300

typedef struct
{
  GThread *thread;        /* where every emission must come */
  char *session_id;       /* of the first emission */
  guint emissions;
  gboolean wrong_thread;
  gboolean other_session;
  gboolean went_back;
  gboolean totals_changed;
  guint64 last[4];        /* files done, files total, bytes done, bytes total */
  GAsyncResult *result;
  guint64 at_result[4];   /* last[] when the create's callback ran */
} ProgressLog;

static void
progress_log_clear (ProgressLog *log)
{
  g_clear_pointer (&log->session_id, g_free);
  g_clear_object (&log->result);
}

static void
progress_cb (SandboxBackend *backend,
             const char     *session_id,
             guint64         files_done,
             guint64         files_total,
             guint64         bytes_done,
             guint64         bytes_total,
             ProgressLog    *log)
{
  log->wrong_thread |= g_thread_self () != log->thread;
  if (log->session_id == NULL)
    log->session_id = g_strdup (session_id);
  log->other_session |= g_strcmp0 (log->session_id, session_id) != 0;
  log->went_back |= files_done < log->last[0] || bytes_done < log->last[2];
  log->totals_changed |= log->emissions > 0 &&
                         (files_total != log->last[1] || bytes_total != log->last[3]);
  log->last[0] = files_done;
  log->last[1] = files_total;
  log->last[2] = bytes_done;
  log->last[3] = bytes_total;
  log->emissions++;
}

static void
store_result (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  ProgressLog *log = user_data;

  log->result = g_object_ref (result);
  memcpy (log->at_result, log->last, sizeof log->last);
}

static char *
backend_layering (SandboxBackend *backend)
{
  char *value = NULL;

  g_object_get (backend, "workspace-layering", &value, NULL);
  return value;
}

/* N_FILES files of different sizes in a few directories, and a link. */
static char *
prewarm_template (SandboxBackend *backend)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("progress");
  g_autoptr(GError) error = NULL;
  char *key;

  for (guint i = 0; i < N_FILES; i++)
    {
      g_autofree char *path = g_strdup_printf ("dir%u/file%u.txt", i % 7, i);
      g_autofree char *text = g_strnfill (i * 13, 'x');
      g_autoptr(GBytes) bytes = g_bytes_new_take (g_steal_pointer (&text), i * 13);

      g_assert_true (sandbox_template_add_file (template_, path, bytes, &error));
      g_assert_no_error (error);
    }
  g_assert_true (sandbox_template_add_symlink (template_, "link", "dir0/file0.txt", &error));
  g_assert_no_error (error);
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  return key;
}

/* What the store lists for @key. */
static SandboxTemplateInfo *
lookup_template_info (SandboxBackend *backend,
                      const char     *key)
{
  g_autoptr(GPtrArray) templates = NULL;
  g_autoptr(GError) error = NULL;

  templates = sandbox_backend_list_templates (backend, NULL, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < templates->len; i++)
    if (g_str_equal (sandbox_template_info_get_key (templates->pdata[i]), key))
      return g_object_ref (templates->pdata[i]);
  g_assert_not_reached ();
}

static void
assert_progress_complete (ProgressLog    *log,
                          SandboxBackend *backend,
                          const char     *key,
                          SandboxHandle  *handle,
                          gint64          elapsed)
{
  g_autoptr(SandboxTemplateInfo) info = lookup_template_info (backend, key);
  SandboxSession *session = sandbox_handle_get_session (handle);

  g_assert_cmpuint (log->emissions, >, 0);
  g_assert_false (log->wrong_thread);
  g_assert_false (log->other_session);
  g_assert_false (log->went_back);
  g_assert_false (log->totals_changed);
  g_assert_cmpstr (log->session_id, ==, sandbox_session_get_id (session));
  /* The files and the link; the bytes of the files. */
  g_assert_cmpuint (sandbox_template_info_get_n_files (info), ==, N_FILES + 1);
  g_assert_cmpuint (log->last[1], ==, sandbox_template_info_get_n_files (info));
  g_assert_cmpuint (log->last[3], ==, sandbox_template_info_get_n_bytes (info));
  g_assert_cmpuint (log->last[0], ==, log->last[1]);
  g_assert_cmpuint (log->last[2], ==, log->last[3]);
  /* Throttled: one report per interval at most, and the final one. */
  g_test_message ("%u reports in %" G_GINT64_FORMAT " µs", log->emissions, elapsed);
  g_assert_cmpint (log->emissions, <=, 2 + elapsed / (50 * G_TIME_SPAN_MILLISECOND));
}

static void
delete_session (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;

  sandbox_handle_delete (handle, NULL, &error);
  g_assert_no_error (error);
}

/* A blocking create that copies reports in the calling thread, up to the
 * totals the store lists; so does the next one, whose totals the store
 * measured before. Take the sandbox_backend_emit_create_progress() call
 * out of the bubblewrap store's report_copy() and no emission comes;
 * store the measure of sandbox_bubblewrap_store_measure_template() with
 * files and bytes swapped and the second create's totals are wrong. */
static void
test_copy_reports_progress (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, "layering", "copy", NULL);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autofree char *key = prewarm_template (backend);
  ProgressLog log = { g_thread_self (), };
  gint64 started;

  g_signal_connect (backend, "create-progress", G_CALLBACK (progress_cb), &log);
  started = g_get_monotonic_time ();
  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  assert_progress_complete (&log, backend, key, handle, g_get_monotonic_time () - started);
  delete_session (handle);
  g_clear_object (&handle);
  progress_log_clear (&log);

  log = (ProgressLog) { g_thread_self (), };
  started = g_get_monotonic_time ();
  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  assert_progress_complete (&log, backend, key, handle, g_get_monotonic_time () - started);

  delete_session (handle);
  progress_log_clear (&log);
  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
}

/* The async form reports in the caller's context, not the worker's, and
 * every report comes before the create's callback, even when the context
 * runs only after the create is complete (the sleep: a create takes about
 * 0.1 s here; a slower one makes the test pass without proving the order).
 * Attach the queued reports at G_PRIORITY_DEFAULT_IDLE instead of
 * G_PRIORITY_DEFAULT in sandbox_backend_emit_create_progress() and the
 * callback sees none. */
static void
test_async_copy_reports_before_the_callback (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, "layering", "copy", NULL);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autofree char *key = prewarm_template (backend);
  ProgressLog log = { g_thread_self (), };
  gint64 started;

  g_signal_connect (backend, "create-progress", G_CALLBACK (progress_cb), &log);
  started = g_get_monotonic_time ();
  sandbox_backend_create_async (backend, key, NULL, policy, NULL, store_result, &log);
  g_usleep (G_USEC_PER_SEC);
  while (log.result == NULL)
    g_main_context_iteration (NULL, TRUE);
  handle = sandbox_backend_create_finish (backend, log.result, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (log.at_result, sizeof log.at_result, log.last, sizeof log.last);
  assert_progress_complete (&log, backend, key, handle, g_get_monotonic_time () - started);

  delete_session (handle);
  progress_log_clear (&log);
  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
}

/* Resuming copies nothing: no report. */
static void
test_resume_reports_nothing (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, "layering", "copy", NULL);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autofree char *key = prewarm_template (backend);
  ProgressLog log = { g_thread_self (), };

  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&handle);

  g_signal_connect (backend, "create-progress", G_CALLBACK (progress_cb), &log);
  handle = sandbox_backend_create (backend, key, state, policy, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (log.emissions, ==, 0);

  delete_session (handle);
  progress_log_clear (&log);
  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
}

/* A layered create copies nothing: no report (as documented). */
static void
test_layered_create_reports_nothing (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *state_directory = sandbox_test_state_directory_new ();
  g_autoptr(SandboxBackend) backend = sandbox_test_setup_backend ("bubblewrap", state_directory, "layering", "auto", NULL);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autofree char *layering = backend_layering (backend);
  g_autofree char *key = NULL;
  ProgressLog log = { g_thread_self (), };

  if (!g_str_equal (layering, "overlay"))
    {
      g_test_skip ("overlays are unavailable here");
      g_clear_object (&backend);
      sandbox_test_remove_tree (state_directory);
      return;
    }
  key = prewarm_template (backend);
  g_signal_connect (backend, "create-progress", G_CALLBACK (progress_cb), &log);
  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (log.emissions, ==, 0);

  delete_session (handle);
  progress_log_clear (&log);
  g_clear_object (&backend);
  sandbox_test_remove_tree (state_directory);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/bubblewrap/create-progress/copy", test_copy_reports_progress);
  g_test_add_func ("/sandbox/bubblewrap/create-progress/async-copy-before-callback",
                   test_async_copy_reports_before_the_callback);
  g_test_add_func ("/sandbox/bubblewrap/create-progress/resume-reports-nothing",
                   test_resume_reports_nothing);
  g_test_add_func ("/sandbox/bubblewrap/create-progress/layered-reports-nothing",
                   test_layered_create_reports_nothing);

  return g_test_run ();
}
