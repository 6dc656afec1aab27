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
  gboolean               hidden;     /* not listed: started by sandboxctl itself */
  gboolean               has_subcommand;
} SandboxctlCommand;

static const SandboxctlCommand commands[] = {
  { "drivers", sandboxctl_cmd_drivers, "List the available sandbox drivers" },
  { "prewarm", sandboxctl_cmd_prewarm, "Store a template from files or a host directory; print its key" },
  { "create",  sandboxctl_cmd_create,  "Create a session from a template; print its state JSON" },
  { "run",     sandboxctl_cmd_run,     "Run a command in a session, streaming its output" },
  { "shell",   sandboxctl_cmd_shell,   "Open an interactive shell in a session, on a terminal" },
  { "read",    sandboxctl_cmd_read,    "Print a workspace file" },
  { "write",   sandboxctl_cmd_write,   "Write a workspace file from stdin, a host file or text" },
  { "rm",      sandboxctl_cmd_rm,      "Remove a workspace file or directory" },
  { "stop",    sandboxctl_cmd_stop,    "Stop a session (asks a running sandboxctl holding it to stop)" },
  { "delete",  sandboxctl_cmd_delete,  "Delete a session and its workspace" },
  { "snapshot", sandboxctl_cmd_snapshot, "Freeze a session's workspace as a snapshot; print its key" },
  { "restore", sandboxctl_cmd_restore, "Reset a session's workspace to one of its snapshots" },
  { "fork",    sandboxctl_cmd_fork,    "Create N sessions from a snapshot, or from a session" },
  { "recover", sandboxctl_cmd_recover, "Take over a session whose owner died (a stale lease)" },
  { "list",    sandboxctl_cmd_list,    "List the sessions and templates the driver stores" },
  { "templates", sandboxctl_cmd_templates, "List the templates the driver stores" },
  { "rm-template", sandboxctl_cmd_rm_template, "Delete a stored template no session needs" },
  { "runtime", sandboxctl_cmd_runtime, "Runtimes sessions run on: import, list, rm",
    FALSE, TRUE },
  { "bg",      sandboxctl_cmd_bg,      "Background commands: start, list, output, kill, wait",
    FALSE, TRUE },
  { "demo",    sandboxctl_cmd_demo,    "A guided tour of the whole system on this machine" },
  /* A session's holder, which `bg start` starts (sandboxctl-holder.c). */
  { "hold",    sandboxctl_cmd_hold,    "Hold a session for its background commands", TRUE },
};

/* Global options that take their value as the next argument. */
static const char * const global_value_options[] = {
  "--driver", "--state-dir", "--driver-option", "--max-concurrent-commands", NULL,
};

/* Global options without a value (--help and --version are main()'s own). */
static const char * const global_flag_options[] = {
  "--json", "--verbose", "-v", NULL,
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
    if (!commands[i].hidden)
      fprintf (stream, "  %-9s %s\n", commands[i].name, commands[i].summary);
  fprintf (stream, "  %-9s %s\n", "help", "This text, or “help COMMAND” for a command's options");
  fprintf (stream,
           "\n"
           "Global options (before or after the command):\n"
           "  --driver NAME                  Sandbox driver (default: bubblewrap)\n"
           "  --state-dir DIR                State directory (default: $SANDBOX_STATE_DIR,\n"
           "                                 else $XDG_STATE_HOME/sandbox)\n"
           "  --driver-option KEY=VALUE      Set a backend property (typed: seccomp=false,\n"
           "                                 memory-limit=268435456, …)\n"
           "  --max-concurrent-commands N    Admission limit (1…1024)\n"
           "  --json                         Machine-readable output, errors included\n"
           "  -v, --verbose                  Log what the library and the driver do\n"
           "  --version                      Print the versions of sandboxctl and libsandbox\n"
           "\n"
           "Run “sandboxctl COMMAND --help” for a command's options.\n"
           SANDBOXCTL_HELP_FOOTER "\n");
}

static const SandboxctlCommand *
find_command (const char *name)
{
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (commands[i].name, name))
      return &commands[i];
  return NULL;
}

/* What main() reads of argv before the command's own parser runs. */
typedef struct
{
  int         command_index;   /* 0 when there is no command */
  const char *unknown_option;  /* the first unknown option before the command */
  gboolean    help;
  gboolean    version;
  gboolean    json;
} GlobalScan;

static gboolean
is_global_option (const char *arg,
                  gboolean   *takes_next_value)
{
  *takes_next_value = FALSE;
  if (g_strv_contains (global_flag_options, arg))
    return TRUE;
  if (g_strv_contains (global_value_options, arg))
    {
      *takes_next_value = TRUE;
      return TRUE;
    }
  for (guint i = 0; global_value_options[i] != NULL; i++)
    if (g_str_has_prefix (arg, global_value_options[i]) &&
        arg[strlen (global_value_options[i])] == '=')
      return TRUE;
  return FALSE;
}

/* Finds the command name, skipping global options (and their separate
 * values) before it, and notes --help, --version and unknown options there.
 * --json is looked for up to "--" anywhere, so that even a usage error of
 * the command's own options comes out as JSON. */
static void
scan_arguments (int         argc,
                char      **argv,
                GlobalScan *scan)
{
  for (int i = 1; i < argc && !g_str_equal (argv[i], "--"); i++)
    if (g_str_equal (argv[i], "--json"))
      scan->json = TRUE;

  for (int i = 1; i < argc; i++)
    {
      gboolean takes_next_value;

      if (argv[i][0] != '-' || argv[i][1] == '\0')
        {
          scan->command_index = i;
          return;
        }
      if (g_str_equal (argv[i], "--"))
        return;
      if (g_str_equal (argv[i], "--help") || g_str_equal (argv[i], "-h"))
        scan->help = TRUE;
      else if (g_str_equal (argv[i], "--version"))
        scan->version = TRUE;
      else if (is_global_option (argv[i], &takes_next_value))
        i += takes_next_value ? 1 : 0;
      else if (scan->unknown_option == NULL)
        scan->unknown_option = argv[i];
    }
}

static int
print_version (gboolean json)
{
  /* The library's version at run time, which may be newer than ours. */
  g_autofree char *library = g_strdup_printf ("%u.%u.%u", sandbox_get_major_version (),
                                              sandbox_get_minor_version (),
                                              sandbox_get_micro_version ());

  if (json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) node = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "sandboxctl");
      json_builder_add_string_value (builder, PACKAGE_VERSION);
      json_builder_set_member_name (builder, "libsandbox");
      json_builder_add_string_value (builder, library);
      json_builder_end_object (builder);
      node = json_builder_get_root (builder);
      sandboxctl_print_json (node);
    }
  else
    {
      g_print ("sandboxctl %s (libsandbox %s)\n", PACKAGE_VERSION, library);
    }
  return SANDBOXCTL_EXIT_OK;
}

int
main (int    argc,
      char **argv)
{
  SandboxctlContext ctx = { 0 };
  const SandboxctlCommand *command;
  g_auto(GStrv) command_argv = NULL;
  GlobalScan scan = { 0 };
  int status;

  setlocale (LC_ALL, "");
  /* A closed pipe must not kill us while we hold a lease: writes fail with
   * EPIPE instead, and the command cleans up. */
  signal (SIGPIPE, SIG_IGN);
  g_set_prgname ("sandboxctl");
  /* Log messages (-v's debug ones too) go to stderr: stdout is the output. */
  g_log_writer_default_set_use_stderr (TRUE);

  scan_arguments (argc, argv, &scan);
  ctx.usage_json = scan.json;

  if (scan.unknown_option != NULL)
    {
      g_autofree char *message =
        g_strdup_printf ("unknown option “%s” (a command's own options go after the command)",
                         scan.unknown_option);

      return sandboxctl_report_usage (&ctx, message);
    }
  if (scan.version)
    return print_version (scan.json);
  /* "help COMMAND" is "COMMAND --help". */
  if (scan.command_index != 0 && g_str_equal (argv[scan.command_index], "help") &&
      scan.command_index + 1 < argc && find_command (argv[scan.command_index + 1]) != NULL)
    {
      const SandboxctlCommand *helped = find_command (argv[scan.command_index + 1]);
      g_auto(GStrv) help_argv = g_new0 (char *, 3);

      help_argv[0] = g_strdup_printf ("sandboxctl %s", helped->name);
      help_argv[1] = g_strdup ("--help");
      g_set_prgname (help_argv[0]);
      ctx.command_name = helped->name;
      ctx.cancellable = g_cancellable_new ();
      status = helped->func (&ctx, &help_argv);
      sandboxctl_context_clear (&ctx);
      return status;
    }
  if (scan.command_index == 0 || g_str_equal (argv[scan.command_index], "help"))
    {
      if (scan.help || scan.command_index != 0)
        {
          print_usage (stdout);
          return SANDBOXCTL_EXIT_OK;
        }
      if (scan.json)
        return sandboxctl_report_usage (&ctx, "missing COMMAND");
      print_usage (stderr);
      return SANDBOXCTL_EXIT_USAGE;
    }

  command = find_command (argv[scan.command_index]);
  if (command == NULL)
    {
      g_autofree char *message = g_strdup_printf ("unknown command “%s”",
                                                  argv[scan.command_index]);

      if (scan.json)
        return sandboxctl_report_usage (&ctx, message);
      g_printerr ("sandboxctl: %s\n\n", message);
      print_usage (stderr);
      return SANDBOXCTL_EXIT_USAGE;
    }

  /* A command with subcommands ("bg start") takes the word after it. */
  if (command->has_subcommand && scan.command_index + 1 < argc &&
      argv[scan.command_index + 1][0] != '-')
    ctx.subcommand = argv[scan.command_index + 1];

  /* argv without the command name: "sandboxctl COMMAND" as argv[0], then the
   * options before and after it. */
  command_argv = g_new0 (char *, argc + 1);
  command_argv[0] = ctx.subcommand != NULL
                    ? g_strdup_printf ("sandboxctl %s %s", command->name, ctx.subcommand)
                    : g_strdup_printf ("sandboxctl %s", command->name);
  for (int i = 1, j = 1; i < argc; i++)
    if (i != scan.command_index && (ctx.subcommand == NULL || i != scan.command_index + 1))
      command_argv[j++] = g_strdup (argv[i]);

  /* GOptionContext's --help names the program by its prgname. */
  g_set_prgname (command_argv[0]);
  ctx.command_name = command->name;
  ctx.cancellable = g_cancellable_new ();
  status = command->func (&ctx, &command_argv);
  sandboxctl_context_clear (&ctx);

  return status;
}
