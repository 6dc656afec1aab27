/* sandboxctl.c — the command-line front end of libsandbox
 *
 *   sandboxctl [GLOBAL-OPTION…] COMMAND [OPTION…] [ARGUMENT…]
 *
 * Global options may come before or after the command. Each command has its
 * own GOptionContext and --help. See docs/sandboxctl.md.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "sandboxctl.h"

typedef struct
{
  const char            *name;
  SandboxctlCommandFunc  func;
  const char            *summary;
} SandboxctlCommand;

static const SandboxctlCommand commands[] = {
  { "drivers", sandboxctl_cmd_drivers, "List the available sandbox drivers" },
  { "prewarm", sandboxctl_cmd_prewarm, "Store a template from files or a host directory; print its key" },
  { "create",  sandboxctl_cmd_create,  "Create a session from a template; print its state JSON" },
  { "run",     sandboxctl_cmd_run,     "Run a command in a session, streaming its output" },
  { "read",    sandboxctl_cmd_read,    "Print a workspace file" },
  { "write",   sandboxctl_cmd_write,   "Write a workspace file from stdin, a host file or text" },
  { "rm",      sandboxctl_cmd_rm,      "Remove a workspace file or directory" },
  { "stop",    sandboxctl_cmd_stop,    "Stop a session (asks a running sandboxctl holding it to stop)" },
  { "delete",  sandboxctl_cmd_delete,  "Delete a session and its workspace" },
  { "recover", sandboxctl_cmd_recover, "Take over a session whose owner died (a stale lease)" },
  { "list",    sandboxctl_cmd_list,    "List sessions and templates in the state directory" },
  { "demo",    sandboxctl_cmd_demo,    "A guided tour of the whole system on this machine" },
};

/* Global options that take their value as the next argument. */
static const char * const global_value_options[] = {
  "--driver", "--state-dir", "--driver-option", "--max-concurrent-commands", NULL,
};

static void
print_usage (FILE *stream)
{
  fprintf (stream,
           "Usage:\n"
           "  sandboxctl [GLOBAL-OPTION…] COMMAND [OPTION…]\n"
           "\n"
           "Run untrusted commands in bubblewrap sandboxes.\n"
           "\n"
           "Commands:\n");
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (stream, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf (stream,
           "\n"
           "Global options (before or after the command):\n"
           "  --driver NAME                  Sandbox driver (default: bubblewrap)\n"
           "  --state-dir DIR                State directory (default: $SANDBOX_STATE_DIR,\n"
           "                                 else $XDG_STATE_HOME/sandbox)\n"
           "  --driver-option KEY=VALUE      Set a string property of the backend\n"
           "  --max-concurrent-commands N    Admission limit (1…1024)\n"
           "  --json                         Machine-readable output\n"
           "\n"
           "Run “sandboxctl COMMAND --help” for a command's options.\n");
}

static const SandboxctlCommand *
find_command (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (commands[i].name, name))
      return &commands[i];
  return NULL;
}

/* The index of the command name in argv, skipping global options (and their
 * separate values) before it; 0 when there is none. */
static int
find_command_index (int    argc,
                    char **argv)
{
  for (int i = 1; i < argc; i++)
    {
      if (argv[i][0] != '-')
        return i;
      if (g_str_equal (argv[i], "--"))
        return 0;
      if (g_strv_contains (global_value_options, argv[i]))
        i++;
    }
  return 0;
}

static gboolean
is_help_request (int    argc,
                 char **argv)
{
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--help") || g_str_equal (argv[i], "-h"))
      return TRUE;
  return FALSE;
}

int
main (int    argc,
      char **argv)
{
  SandboxctlContext ctx = { 0 };
  const SandboxctlCommand *command;
  g_auto(GStrv) command_argv = NULL;
  int index;
  int status;

  setlocale (LC_ALL, "");
  /* A closed pipe must not kill us while we hold a lease: writes fail with
   * EPIPE instead, and the command cleans up. */
  signal (SIGPIPE, SIG_IGN);
  g_set_prgname ("sandboxctl");

  index = find_command_index (argc, argv);
  if (index == 0)
    {
      if (is_help_request (argc, argv))
        {
          print_usage (stdout);
          return SANDBOXCTL_EXIT_OK;
        }
      print_usage (stderr);
      return SANDBOXCTL_EXIT_USAGE;
    }

  if (g_str_equal (argv[index], "help"))
    {
      print_usage (stdout);
      return SANDBOXCTL_EXIT_OK;
    }
  command = find_command (argv[index]);
  if (command == NULL)
    {
      g_printerr ("sandboxctl: unknown command “%s”\n\n", argv[index]);
      print_usage (stderr);
      return SANDBOXCTL_EXIT_USAGE;
    }

  /* argv without the command name: "sandboxctl COMMAND" as argv[0], then the
   * options before and after it. */
  command_argv = g_new0 (char *, argc + 1);
  command_argv[0] = g_strdup_printf ("sandboxctl %s", command->name);
  for (int i = 1, j = 1; i < argc; i++)
    if (i != index)
      command_argv[j++] = g_strdup (argv[i]);

  /* GOptionContext's --help names the program by its prgname. */
  g_set_prgname (command_argv[0]);
  ctx.command_name = command->name;
  ctx.cancellable = g_cancellable_new ();
  status = command->func (&ctx, &command_argv);
  sandboxctl_context_clear (&ctx);

  return status;
}
