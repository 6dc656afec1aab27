/* sandbox-conformance-tool.c — run the backend conformance suite, print TAP
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   sandbox-conformance [--no-commands] [--property KEY=VALUE]… DRIVER
 *   sandbox-conformance --list
 *
 * Exit status: 0 when every check passed or was skipped, 1 when a check
 * failed, 2 when the suite could not run (unknown driver, bad property,
 * setup failure) or the arguments were wrong.
 */

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>

#include <gio/gunixoutputstream.h>
#include <sandbox-conformance.h>

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(SandboxConformance) suite = NULL;
  g_autoptr(GOutputStream) out = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) assignments = NULL;
  gboolean no_commands = FALSE;
  gboolean list = FALSE;
  const GOptionEntry entries[] = {
    { "property", 'p', 0, G_OPTION_ARG_STRING_ARRAY, &assignments,
      "Set a backend construct property (repeatable)", "KEY=VALUE" },
    { "no-commands", 0, 0, G_OPTION_ARG_NONE, &no_commands,
      "The driver runs no commands: check that spawns are refused with "
      "SANDBOX_UNAVAILABLE and skip the command checks", NULL },
    { "list", 'l', 0, G_OPTION_ARG_NONE, &list, "List the checks and exit", NULL },
    G_OPTION_ENTRY_NULL
  };

  setlocale (LC_ALL, "");

  context = g_option_context_new ("DRIVER — check a sandbox driver against the backend contract");
  g_option_context_add_main_entries (context, entries, NULL);
  g_option_context_set_description (context,
    "Prints TAP on standard output. Drivers are loaded from SANDBOX_DRIVER_PATH and the\n"
    "installed driver directory. Without a state-directory property each run uses a\n"
    "fresh temporary directory. Command checks run /usr/bin/cat, false, printf, sleep\n"
    "and yes inside the sandbox; a scripted driver must declare them.");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("sandbox-conformance: %s\n", error->message);
      return 2;
    }

  if (list)
    {
      g_auto(GStrv) checks = sandbox_conformance_list_checks ();

      for (guint i = 0; checks[i] != NULL; i++)
        g_print ("%s\n", checks[i]);
      return 0;
    }

  if (argc != 2)
    {
      g_autofree char *help = g_option_context_get_help (context, TRUE, NULL);

      g_printerr ("%s", help);
      return 2;
    }

  suite = sandbox_conformance_new (argv[1], no_commands ? SANDBOX_CONFORMANCE_FLAGS_NO_COMMANDS
                                                        : SANDBOX_CONFORMANCE_FLAGS_NONE);
  for (guint i = 0; assignments != NULL && assignments[i] != NULL; i++)
    if (!sandbox_conformance_parse_backend_property (suite, assignments[i], &error))
      {
        printf ("Bail out! %s\n", error->message);
        g_printerr ("sandbox-conformance: %s\n", error->message);
        return 2;
      }

  out = g_unix_output_stream_new (STDOUT_FILENO, FALSE);
  if (!sandbox_conformance_run (suite, out, NULL, &error))
    {
      g_printerr ("sandbox-conformance: %s\n", error->message);
      return 2;
    }

  g_printerr ("sandbox-conformance: %s driver: %u passed, %u failed, %u skipped\n",
              argv[1], sandbox_conformance_get_n_passed (suite),
              sandbox_conformance_get_n_failed (suite),
              sandbox_conformance_get_n_skipped (suite));
  return sandbox_conformance_get_n_failed (suite) == 0 ? 0 : 1;
}
