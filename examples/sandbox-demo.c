/* sandbox-demo.c — the reference guide's example flow, end to end
 *
 * prewarm a template, create a session, run `cat` in it, capture its state,
 * stop it, resume it from the state, read the file back, delete it.
 *
 * Usage: sandbox-demo [DRIVER]   (default: bubblewrap when available,
 *                                 else the scripted memory driver)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdio.h>
#include <stdlib.h>

#include <sandbox-backend-driver.h>

/* The memory driver runs nothing: it answers commands from a script. */
static const char memory_script[] =
  "{\"commands\": [{\"match\": {\"executable\": \"/usr/bin/cat\", \"args\": [\"hello.txt\"]},"
  " \"stdout-from-file-arg\": true}]}";

static const char *
pick_driver (const char *requested)
{
  g_auto(GStrv) drivers = sandbox_list_drivers ();

  if (requested != NULL)
    return requested;
  if (g_strv_contains ((const char * const *) drivers, "bubblewrap"))
    return "bubblewrap";
  return "memory";
}

static gboolean
remove_tree (const char  *path,
             GError     **error)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileEnumerator) children = NULL;
  g_autoptr(GFileInfo) info = NULL;

  if (g_file_query_file_type (file, G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL) == G_FILE_TYPE_DIRECTORY)
    {
      children = g_file_enumerate_children (file, G_FILE_ATTRIBUTE_STANDARD_NAME,
                                            G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, error);
      if (children == NULL)
        return FALSE;
      while ((info = g_file_enumerator_next_file (children, NULL, error)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, g_file_info_get_name (info), NULL);

          g_clear_object (&info);
          if (!remove_tree (child, error))
            return FALSE;
        }
    }

  return g_file_delete (file, NULL, error);
}

static int
fail (const char *step,
      GError     *error)
{
  fprintf (stderr, "sandbox-demo: %s failed: %s (%s)\n", step, error->message,
           error->domain == SANDBOX_ERROR ? sandbox_error_code_name (error->code)
                                          : g_quark_to_string (error->domain));
  return EXIT_FAILURE;
}

int
main (int argc, char **argv)
{
  const char *driver = pick_driver (argc > 1 ? argv[1] : NULL);
  g_autofree char *state_directory = g_dir_make_tmp ("sandbox-demo-XXXXXX", NULL);
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxTemplate) template_ = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxCommand) command = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  g_autofree char *state_json = NULL;
  g_autofree char *stdout_text = NULL;
  g_autofree char *text = NULL;
  gboolean reused = FALSE;

  printf ("driver: %s\nstate directory: %s\n", driver, state_directory);

  if (g_str_equal (driver, "memory"))
    backend = sandbox_backend_new (driver, NULL, &error,
                                   "state-directory", state_directory,
                                   "script", memory_script, NULL);
  else
    backend = sandbox_backend_new (driver, NULL, &error,
                                   "state-directory", state_directory, NULL);
  if (backend == NULL)
    return fail ("creating the backend", error);

  template_ = sandbox_template_new ("agent-workspace");
  if (!sandbox_template_add_file (template_, "hello.txt", hello, &error))
    return fail ("building the template", error);

  key = sandbox_backend_prewarm (backend, template_, &reused, NULL, &error);
  if (key == NULL)
    return fail ("prewarm", error);
  printf ("prewarm: template %s (%s)\n", key, reused ? "reused" : "new");

  handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  if (handle == NULL)
    return fail ("create", error);

  command = sandbox_command_new ("/usr/bin/cat");
  sandbox_command_add_arg (command, "hello.txt");
  result = sandbox_session_run (sandbox_handle_get_session (handle), command, NULL, &error);
  if (result == NULL)
    return fail ("run", error);
  stdout_text = sandbox_result_dup_stdout_text (result);
  printf ("run: cat hello.txt → exit %d, stdout \"%s\"\n",
          sandbox_result_get_exit_status (result), stdout_text);

  state = sandbox_handle_capture_state (handle, &error);
  if (state == NULL)
    return fail ("capture state", error);
  state_json = sandbox_state_to_json (state);
  printf ("state: %s\n", state_json);

  if (!sandbox_handle_stop (handle, NULL, &error))
    return fail ("stop", error);
  printf ("stop: done\n");

  resumed = sandbox_backend_create (backend, key, state, policy, NULL, &error);
  if (resumed == NULL)
    return fail ("resume", error);
  text = sandbox_session_read_text (sandbox_handle_get_session (resumed), "hello.txt", NULL, &error);
  if (text == NULL)
    return fail ("read text", error);
  printf ("resume + read: hello.txt = \"%s\"\n", text);

  if (!sandbox_handle_delete (resumed, NULL, &error))
    return fail ("delete", error);
  printf ("delete: done\n");

  /* The demo's state directory is its own: leave nothing behind. */
  g_clear_object (&handle);
  g_clear_object (&resumed);
  g_clear_object (&backend);
  if (!remove_tree (state_directory, &error))
    return fail ("removing the state directory", error);

  return EXIT_SUCCESS;
}
