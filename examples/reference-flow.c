/* reference-flow.c — the reference guide's example, in C
 *
 * The TypeScript sandbox's guide opens with one flow: a backend, a template
 * prewarmed from one file, a session that runs `cat`, its state captured,
 * the session stopped and resumed from that state, the file read back, the
 * session deleted. This is that flow with libsandbox, line for line; the
 * porting page (docs/guide/porting.md) shows it beside the TypeScript and
 * the Python (examples/reference-flow.py). tests: docs/meson.build runs it
 * against real bubblewrap.
 *
 * Usage: reference-flow [STATE-DIRECTORY]   (default /var/lib/my-app/sandboxes)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdio.h>
#include <stdlib.h>

#include <sandbox-backend-driver.h>

static int
fail (GError *error)
{
  fprintf (stderr, "reference-flow: %s\n", error->message);
  return EXIT_FAILURE;
}

static void
on_gateway_error (SandboxBackend *backend,
                  GError         *cause,
                  gpointer        user_data)
{
  g_printerr ("Internal sandbox gateway error: %s\n", cause->message);
}

int
main (int argc, char **argv)
{
  const char *state_directory = argc > 1 ? argv[1] : "/var/lib/my-app/sandboxes";
  g_autoptr(GError) error = NULL;

  g_autoptr(SandboxBackend) backend =
    sandbox_backend_new ("bubblewrap", NULL, &error,
                         "state-directory", state_directory,
                         "max-concurrent-commands", 8,
                         NULL);
  if (backend == NULL)
    return fail (error);
  g_signal_connect (backend, "gateway-error", G_CALLBACK (on_gateway_error), NULL);

  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("agent-workspace");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  if (!sandbox_template_add_file (template_, "hello.txt", hello, &error))
    return fail (error);
  g_autofree char *key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  if (key == NULL)
    return fail (error);

  g_autoptr(SandboxNetworkPolicy) deny_all = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = sandbox_backend_create (backend, key, NULL, deny_all,
                                                            NULL, &error);
  if (handle == NULL)
    return fail (error);

  g_autoptr(SandboxCommand) cat = sandbox_command_new ("/usr/bin/cat");
  sandbox_command_add_arg (cat, "hello.txt");
  g_autoptr(SandboxResult) result =
    sandbox_session_run (sandbox_handle_get_session (handle), cat, NULL, &error);
  if (result == NULL)
    return fail (error);
  g_autofree char *stdout_text = sandbox_result_dup_stdout_text (result);
  printf ("%s\n", stdout_text);

  /* Persist this descriptor in the host's store (sandbox_state_to_json ()). */
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (handle, &error);
  if (state == NULL || !sandbox_handle_stop (handle, NULL, &error))
    return fail (error);

  g_autoptr(SandboxHandle) resumed = sandbox_backend_create (backend, key, state, deny_all,
                                                             NULL, &error);
  if (resumed == NULL)
    return fail (error);
  g_autofree char *text =
    sandbox_session_read_text (sandbox_handle_get_session (resumed), "hello.txt", NULL, &error);
  if (text == NULL)
    return fail (error);
  printf ("%s\n", text);
  if (!sandbox_handle_delete (resumed, NULL, &error))
    return fail (error);

  /* The reference's `finally { handle.shutdown () }`: dropping the last
   * reference to a live handle stops it too; this one is stopped already. */
  return EXIT_SUCCESS;
}
