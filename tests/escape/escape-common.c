/* escape-common.c — helpers shared by the attacker's suite (tests/escape/)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape-common.h"
#include "sandbox-test-backend.h"

#define PROBE_GUEST_NAME ".escape-probe"

/**
 * escape_running_as_root:
 *
 * Returns: whether the test (the host side) runs as uid 0
 */
gboolean
escape_running_as_root (void)
{
  return geteuid () == 0;
}

/**
 * escape_state_directory_new:
 *
 * Returns: (transfer full): a fresh, empty state directory under $TMPDIR
 */
char *
escape_state_directory_new (void)
{
  g_autoptr(GError) error = NULL;
  char *directory = g_dir_make_tmp ("sandbox-escape-XXXXXX", &error);

  g_assert_no_error (error);
  return directory;
}

/**
 * escape_state_directory_remove:
 * @directory: a directory from escape_state_directory_new()
 *
 * Removes @directory and everything below it.
 */
void
escape_state_directory_remove (const char *directory)
{
  const char *argv[] = { "rm", "-rf", "--one-file-system", directory, NULL };
  g_autoptr(GError) error = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                NULL, NULL, &status, &error);
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
}

/**
 * escape_backend_new_valist:
 * @state_directory: the backend's state directory
 * @ap: name/value pairs of strings, then %NULL
 *
 * See escape_backend_new().
 *
 * Returns: (transfer full): a bubblewrap backend
 */
SandboxBackend *
escape_backend_new_valist (const char *state_directory,
                           va_list     ap)
{
  g_autoptr(GError) error = NULL;
  SandboxBackend *backend = sandbox_test_bubblewrap_new_valist (state_directory, &error, ap);

  g_assert_no_error (error);
  g_assert_nonnull (backend);
  return backend;
}

/**
 * escape_backend_new:
 * @state_directory: the backend's state directory
 * @...: extra properties as name/value pairs of strings ("true"/"false" for
 *   booleans, digits for numbers), then %NULL
 *
 * With the run's SANDBOX_TEST_LAYERING (sandbox-test-backend.h), checked.
 *
 * Returns: (transfer full): a bubblewrap backend on @state_directory
 */
SandboxBackend *
escape_backend_new (const char *state_directory,
                    ...)
{
  SandboxBackend *backend;
  va_list ap;

  va_start (ap, state_directory);
  backend = escape_backend_new_valist (state_directory, ap);
  va_end (ap);
  return backend;
}

/**
 * escape_prewarm:
 * @backend: a backend
 *
 * Prewarms the suite's template: `hello.txt` ("hello") and `dir/file.txt`.
 *
 * Returns: (transfer full): its template key
 */
char *
escape_prewarm (SandboxBackend *backend)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("escape");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(GBytes) file = g_bytes_new_static ("file", 4);
  g_autoptr(GError) error = NULL;
  char *key;

  g_assert_true (sandbox_template_add_file (template_, "hello.txt", hello, &error));
  g_assert_true (sandbox_template_add_file (template_, "dir/file.txt", file, &error));
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (key);
  return key;
}

/**
 * escape_create:
 * @backend: a backend
 * @template_key: a prewarmed template
 *
 * Returns: (transfer full): a new deny-all session's handle
 */
SandboxHandle *
escape_create (SandboxBackend *backend,
               const char     *template_key)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  SandboxHandle *handle = sandbox_backend_create (backend, template_key, NULL, policy,
                                                  NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (handle);
  return handle;
}

/**
 * escape_session_open:
 * @s: an all-zero #EscapeSession
 * @...: extra backend properties as for escape_backend_new(), then %NULL
 *
 * Fills @s: a fresh state directory, a backend on it, the suite's template
 * and a new deny-all session.
 */
void
escape_session_open (EscapeSession *s,
                     ...)
{
  va_list ap;

  g_assert_null (s->backend);
  s->state_directory = escape_state_directory_new ();
  va_start (ap, s);
  s->backend = escape_backend_new_valist (s->state_directory, ap);
  va_end (ap);
  s->template_key = escape_prewarm (s->backend);
  s->handle = escape_create (s->backend, s->template_key);
  s->session = sandbox_handle_get_session (s->handle);
}

/**
 * escape_session_stop:
 * @s: an open session
 *
 * Stops @s's session, keeping it.
 *
 * Returns: (transfer full): its state, for escape_session_resume()
 */
SandboxState *
escape_session_stop (EscapeSession *s)
{
  g_autoptr(GError) error = NULL;
  SandboxState *state = sandbox_handle_capture_state (s->handle, &error);

  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (s->handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&s->handle);
  s->session = NULL;
  return state;
}

/**
 * escape_session_resume:
 * @s: a session stopped with escape_session_stop()
 * @state: its state
 *
 * Resumes it, deny-all.
 */
void
escape_session_resume (EscapeSession *s,
                       SandboxState  *state)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;

  s->handle = sandbox_backend_create (s->backend, s->template_key, state, policy, NULL, &error);
  g_assert_no_error (error);
  s->session = sandbox_handle_get_session (s->handle);
}

/**
 * escape_session_close:
 * @s: a session from escape_session_open()
 *
 * Deletes the session (if still there) and removes the state directory.
 */
void
escape_session_close (EscapeSession *s)
{
  if (s->handle != NULL)
    {
      g_autoptr(GError) error = NULL;

      sandbox_handle_delete (s->handle, NULL, &error);
      g_assert_no_error (error);
    }
  s->session = NULL;
  g_clear_object (&s->handle);
  g_clear_object (&s->backend);
  g_clear_pointer (&s->template_key, g_free);
  if (s->state_directory != NULL)
    escape_state_directory_remove (s->state_directory);
  g_clear_pointer (&s->state_directory, g_free);
}

/**
 * escape_session_directory:
 * @s: an open session
 *
 * The store layout of docs/DESIGN §5:
 * `<root>/<sha256(name)>/sessions/<sessionId>`.
 *
 * Returns: (transfer full): the host path of the session's directory
 */
char *
escape_session_directory (EscapeSession *s)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (s->handle, &error);
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *root = realpath (s->state_directory, NULL);

  g_assert_no_error (error);
  g_assert_nonnull (root);
  return g_build_filename (root, digest, "sessions", sandbox_state_get_session_id (state), NULL);
}

/**
 * escape_workspace_directory:
 * @s: an open session
 *
 * Returns: (transfer full): the host path of the session's workspace (of
 *   a layered session, its upper layer)
 */
char *
escape_workspace_directory (EscapeSession *s)
{
  g_autofree char *session = escape_session_directory (s);

  return sandbox_test_workspace_directory (session);
}

/**
 * escape_run_sh:
 * @session: a live session
 * @script: a `sh -c` script
 * @timeout_ms: the command's deadline, 0 for the default
 * @error: return location for an error
 *
 * Returns: (transfer full): the result, or %NULL with @error set
 */
SandboxResult *
escape_run_sh (SandboxSession *session,
               const char     *script,
               guint           timeout_ms,
               GError        **error)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sh");

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, script);
  if (timeout_ms > 0)
    sandbox_command_set_timeout_ms (command, timeout_ms);
  return sandbox_session_run (session, command, NULL, error);
}

/**
 * escape_sh_status:
 * @session: a live session
 * @script: a `sh -c` script
 * @out: (out) (optional): its stdout
 * @err: (out) (optional): its stderr
 *
 * Runs @script, which must run to its end (no sandbox error).
 *
 * Returns: its exit status
 */
int
escape_sh_status (SandboxSession *session,
                  const char     *script,
                  char          **out,
                  char          **err)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = escape_run_sh (session, script, 0, &error);

  g_assert_no_error (error);
  if (out != NULL)
    *out = sandbox_result_dup_stdout_text (result);
  if (err != NULL)
    *err = sandbox_result_dup_stderr_text (result);
  return sandbox_result_get_exit_status (result);
}

/**
 * escape_sh:
 * @session: a live session
 * @script: a `sh -c` script
 *
 * Runs @script and fails the test unless it exits 0.
 *
 * Returns: (transfer full): its stdout
 */
char *
escape_sh (SandboxSession *session,
           const char     *script)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = escape_sh_status (session, script, &out, &err);

  if (status != 0)
    g_error ("guest script failed (%d): %s\nstdout: %s\nstderr: %s", status, script, out, err);
  return g_steal_pointer (&out);
}

static char *
probe_host_path (void)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *dir = NULL;

  g_assert_nonnull (self);
  dir = g_path_get_dirname (self);
  return g_build_filename (dir, "escape-probe", NULL);
}

/**
 * escape_install_probe:
 * @session: a live session
 *
 * Copies escape-probe (built next to the test) into the workspace as
 * `/workspace/.escape-probe`, executable.
 */
void
escape_install_probe (SandboxSession *session)
{
  g_autofree char *path = probe_host_path ();
  g_autofree char *contents = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (path, &contents, &length, &error));
  g_assert_no_error (error);
  bytes = g_bytes_new_take (g_steal_pointer (&contents), length);
  g_assert_true (sandbox_session_write_bytes (session, PROBE_GUEST_NAME, bytes, NULL, &error));
  g_assert_no_error (error);
  g_free (escape_sh (session, "chmod 0755 /workspace/" PROBE_GUEST_NAME));
}

/**
 * escape_probe:
 * @session: a live session with the probe installed
 * @arguments: the probe's arguments, as shell words
 *
 * Runs `/workspace/.escape-probe ARGUMENTS` and fails the test unless it
 * exits 0 (an unknown probe exits 2).
 *
 * Returns: (transfer full): its stdout
 */
char *
escape_probe (SandboxSession *session,
              const char     *arguments)
{
  g_autofree char *script = g_strdup_printf ("exec /workspace/" PROBE_GUEST_NAME " %s",
                                             arguments);

  return escape_sh (session, script);
}

/**
 * escape_probe_errno:
 * @session: a live session with the probe installed
 * @arguments: one probe and its arguments
 *
 * Returns: the errno the probe's call failed with, 0 when it succeeded
 */
int
escape_probe_errno (SandboxSession *session,
                    const char     *arguments)
{
  g_autofree char *out = escape_probe (session, arguments);
  char *end = NULL;
  gint64 value = g_ascii_strtoll (out, &end, 10);

  if (end == out || (*end != '\n' && *end != '\0'))
    g_error ("probe %s printed %s, not an errno", arguments, out);
  return (int) value;
}

/**
 * escape_count_processes_with_arg:
 * @needle: a string
 *
 * Returns: how many processes, other than this one, have an argument
 *   containing @needle
 */
guint
escape_count_processes_with_arg (const char *needle)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint count = 0;

  g_assert_nonnull (proc);
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      gsize length;

      if (!g_ascii_isdigit (name[0]) || atoi (name) == getpid ())
        continue;
      path = g_strdup_printf ("/proc/%s/cmdline", name);
      if (!g_file_get_contents (path, &cmdline, &length, NULL))
        continue;
      for (gsize i = 0; i < length; i += strlen (cmdline + i) + 1)
        if (strstr (cmdline + i, needle) != NULL)
          {
            count++;
            break;
          }
    }
  return count;
}

/**
 * escape_wait_until_no_process_with:
 * @needle: a string
 *
 * Waits up to 10 s for every process with an argument containing @needle to
 * be gone (the kernel reaps a killed namespace asynchronously; /proc has no
 * change notification), then asserts none is left.
 */
void
escape_wait_until_no_process_with (const char *needle)
{
  for (guint i = 0; i < 1000 && escape_count_processes_with_arg (needle) > 0; i++)
    g_usleep (10 * 1000);
  g_assert_cmpuint (escape_count_processes_with_arg (needle), ==, 0);
}

static gpointer
killer_thread (gpointer data)
{
  g_usleep (GPOINTER_TO_UINT (data));
  kill (getpid (), SIGKILL);
  return NULL;
}

/**
 * escape_kill_self_after:
 * @delay_us: decimal microseconds
 *
 * Starts a thread that SIGKILLs this process @delay_us from now: a host
 * crashing at a chosen moment of what it does next.
 */
void
escape_kill_self_after (const char *delay_us)
{
  guint delay = (guint) g_ascii_strtoull (delay_us, NULL, 10);

  g_thread_unref (g_thread_new ("killer", killer_thread, GUINT_TO_POINTER (delay)));
}

/**
 * escape_find_guest_pid:
 * @argv0: a guest process's argv[0]
 * @marker: its last argument
 *
 * Returns: the host pid of the process whose argv[0] is @argv0 and whose
 *   last argument is @marker, or 0
 */
int
escape_find_guest_pid (const char *argv0,
                       const char *marker)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;

  g_assert_nonnull (proc);
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      gsize length = 0;
      const char *last = NULL;

      if (!g_ascii_isdigit (name[0]))
        continue;
      path = g_strdup_printf ("/proc/%s/cmdline", name);
      if (!g_file_get_contents (path, &cmdline, &length, NULL) || length == 0 ||
          strcmp (cmdline, argv0) != 0)
        continue;
      for (gsize i = 0; i < length; i += strlen (cmdline + i) + 1)
        last = cmdline + i;
      if (last != NULL && strcmp (last, marker) == 0)
        return atoi (name);
    }
  return 0;
}

/**
 * escape_status_field:
 * @pid: a host pid
 * @key: a field of /proc/@pid/status
 *
 * Returns: (transfer full): the field's value, e.g. "Uid" → "0\t0\t0\t0"
 */
char *
escape_status_field (int         pid,
                     const char *key)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", pid);
  g_autofree char *status = NULL;
  g_autofree char *prefix = g_strdup_printf ("\n%s:\t", key);
  const char *line;

  g_assert_true (g_file_get_contents (path, &status, NULL, NULL));
  line = strstr (status, prefix);
  g_assert_nonnull (line);
  line += strlen (prefix);
  return g_strndup (line, strcspn (line, "\n"));
}
