/* cluster-driver-host.c — one host of the `cluster` driver as its own process
 *
 *   cluster-driver-host --endpoints URLS --state DIR --store DIR --id HOST --ttl SECONDS
 *
 * Makes a `cluster` backend through the driver kit (sandbox_backend_new(),
 * as an application does) and prints "ready", or "error CODE MESSAGE" and
 * exits 1. Then reads one command a line on stdin and answers one line
 * ("ok …" or "error CODE MESSAGE"), with at most one live session:
 *
 *   prewarm                 → ok KEY     (a fixed template: hello.txt)
 *   create KEY              → ok SESSION
 *   resume KEY SESSION      → ok
 *   write PATH TEXT         → ok
 *   read PATH               → ok TEXT    (C-escaped: "hello\\n")
 *   spawn-sleep             → ok         (`sleep 98765`, which runs until killed)
 *   spawn-background-sleep  → ok         (the same as one of the session's background commands)
 *   checkpoint              → ok         (of the live session, which runs on)
 *   stop                    → ok
 *   delete                  → ok
 *   hosts                   → ok JSON    (the "list-hosts" action signal)
 *   pick KEY|- K            → ok HOST    (the "pick-host" action signal; "-": no template)
 *
 * End of input exits 0 (dropping the handle stops the session).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sandbox.h>

typedef struct
{
  SandboxBackend *backend;
  SandboxHandle *handle;
  SandboxProcess *sleeper;
} Host;

static void
answer_error (const GError *error)
{
  const char *code = error->domain == SANDBOX_ERROR ? sandbox_error_code_name (error->code)
                                                    : g_quark_to_string (error->domain);

  printf ("error %s %s\n", code, error->message);
  fflush (stdout);
}

/* @text C-escaped, so a reply is one line whatever a file holds. */
static void
answer_ok (const char *text)
{
  g_autofree char *escaped = text != NULL ? g_strescape (text, NULL) : NULL;

  printf (escaped != NULL ? "ok %s\n" : "ok\n", escaped);
  fflush (stdout);
}

static SandboxSession *
session (Host    *host,
         GError **error)
{
  if (host->handle == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "no session");
      return NULL;
    }
  return sandbox_handle_get_session (host->handle);
}

static char *
do_prewarm (Host    *host,
            GError **error)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("cluster-test");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello\n", 6);

  if (!sandbox_template_add_file (template_, "hello.txt", hello, error))
    return NULL;
  return sandbox_backend_prewarm (host->backend, template_, NULL, NULL, error);
}

static gboolean
do_open (Host        *host,
         const char  *key,
         const char  *session_id,
         char       **id_out,
         GError     **error)
{
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();

  if (session_id != NULL)
    {
      state = sandbox_state_new ("cluster", session_id, key, error);
      if (state == NULL)
        return FALSE;
    }
  g_clear_object (&host->handle);
  host->handle = sandbox_backend_create (host->backend, key, state, policy, NULL, error);
  if (host->handle == NULL)
    return FALSE;
  if (id_out != NULL)
    {
      g_autoptr(SandboxState) captured = sandbox_handle_capture_state (host->handle, error);

      if (captured == NULL)
        return FALSE;
      *id_out = g_strdup (sandbox_state_get_session_id (captured));
    }
  return TRUE;
}

static gboolean
do_spawn_sleep (Host     *host,
                gboolean  background,
                GError  **error)
{
  SandboxSession *live = session (host, error);
  g_autoptr(SandboxCommand) command = NULL;
  const char *args[] = { "98765", NULL };

  if (live == NULL)
    return FALSE;
  command = sandbox_command_new ("/usr/bin/sleep");
  sandbox_command_set_args (command, args);
  sandbox_command_set_timeout_ms (command, 600000);
  g_clear_object (&host->sleeper);
  host->sleeper = background ? sandbox_session_spawn_background (live, command, error)
                             : sandbox_session_spawn (live, command, NULL, error);
  return host->sleeper != NULL;
}

static char *
do_pick (Host        *host,
         const char  *arguments,
         GError     **error)
{
  g_auto(GStrv) words = g_strsplit (arguments != NULL ? arguments : "", " ", 2);
  char *host_id = NULL;

  if (g_strv_length (words) != 2)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "pick KEY|- K");
      return NULL;
    }
  g_signal_emit_by_name (host->backend, "pick-host",
                         strcmp (words[0], "-") == 0 ? NULL : words[0],
                         (guint) g_ascii_strtoull (words[1], NULL, 10), &host_id);
  if (host_id == NULL)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no host picked");
  return host_id;
}

static char *
do_hosts (Host    *host,
          GError **error)
{
  char *json = NULL;

  g_signal_emit_by_name (host->backend, "list-hosts", &json);
  if (json == NULL)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_FAILED, "no host list");
  return json;
}

static void
run_command (Host *host,
             char *line)
{
  g_auto(GStrv) words = g_strsplit (g_strchomp (line), " ", 3);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  const char *verb = words[0] != NULL ? words[0] : "";
  gboolean ok = FALSE;

  if (strcmp (verb, "prewarm") == 0)
    ok = (text = do_prewarm (host, &error)) != NULL;
  else if (strcmp (verb, "create") == 0 && words[1] != NULL)
    ok = do_open (host, words[1], NULL, &text, &error);
  else if (strcmp (verb, "resume") == 0 && words[1] != NULL && words[2] != NULL)
    ok = do_open (host, words[1], words[2], NULL, &error);
  else if (strcmp (verb, "write") == 0 && words[1] != NULL && words[2] != NULL)
    ok = session (host, &error) != NULL &&
         sandbox_session_write_text (session (host, NULL), words[1], words[2], NULL, &error);
  else if (strcmp (verb, "read") == 0 && words[1] != NULL)
    ok = session (host, &error) != NULL &&
         (text = sandbox_session_read_text (session (host, NULL), words[1], NULL, &error)) != NULL;
  else if (strcmp (verb, "spawn-sleep") == 0)
    ok = do_spawn_sleep (host, FALSE, &error);
  else if (strcmp (verb, "spawn-background-sleep") == 0)
    ok = do_spawn_sleep (host, TRUE, &error);
  else if (strcmp (verb, "checkpoint") == 0)
    ok = host->handle != NULL && sandbox_handle_checkpoint (host->handle, NULL, &error);
  else if (strcmp (verb, "stop") == 0)
    ok = host->handle != NULL && sandbox_handle_stop (host->handle, NULL, &error);
  else if (strcmp (verb, "hosts") == 0)
    ok = (text = do_hosts (host, &error)) != NULL;
  else if (strcmp (verb, "pick") == 0 && words[1] != NULL && words[2] != NULL)
    {
      g_autofree char *arguments = g_strjoin (" ", words[1], words[2], NULL);

      ok = (text = do_pick (host, arguments, &error)) != NULL;
    }
  else if (strcmp (verb, "delete") == 0)
    ok = host->handle != NULL && sandbox_handle_delete (host->handle, NULL, &error);
  else
    g_set_error (&error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, "unknown command ‘%s’", verb);

  if (ok)
    answer_ok (text);
  else
    {
      if (error == NULL)
        g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_FAILED, "no session");
      answer_error (error);
    }
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *endpoints = NULL;
  g_autofree char *state = NULL;
  g_autofree char *store = NULL;
  g_autofree char *id = NULL;
  int ttl = 0;
  GOptionEntry entries[] = {
    { "endpoints", 0, 0, G_OPTION_ARG_STRING, &endpoints, NULL, NULL },
    { "state", 0, 0, G_OPTION_ARG_FILENAME, &state, NULL, NULL },
    { "store", 0, 0, G_OPTION_ARG_FILENAME, &store, NULL, NULL },
    { "id", 0, 0, G_OPTION_ARG_STRING, &id, NULL, NULL },
    { "ttl", 0, 0, G_OPTION_ARG_INT, &ttl, NULL, NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;
  Host host = { NULL, NULL, NULL };
  char line[4096];

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      answer_error (error);
      return 1;
    }

  host.backend = sandbox_backend_new ("cluster", NULL, &error,
                                      "endpoints", endpoints,
                                      "state-directory", state,
                                      "checkpoint-store", store,
                                      "host-id", id,
                                      "lease-ttl", (guint) ttl,
                                      "prefix", "/test/",
                                      NULL);
  if (host.backend == NULL)
    {
      answer_error (error);
      return 1;
    }
  printf ("ready\n");
  fflush (stdout);

  while (fgets (line, sizeof line, stdin) != NULL)
    run_command (&host, line);

  g_clear_object (&host.sleeper);
  g_clear_object (&host.handle);
  g_clear_object (&host.backend);
  return 0;
}
