/* sandboxctl.h — shared pieces of the sandboxctl command-line tool
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>
#include <sandbox.h>

G_BEGIN_DECLS

/* Exit codes. Guest exit statuses pass through `run` unchanged, so the
 * codes of sandboxctl's own failures sit in the band 80–91, which common
 * programs and shells leave unused (1, 2, 126, 127 and 128+N are taken). */
typedef enum
{
  SANDBOXCTL_EXIT_OK = 0,
  SANDBOXCTL_EXIT_FAILURE = 1,
  SANDBOXCTL_EXIT_USAGE = 2,          /* also G_OPTION_ERROR */
  SANDBOXCTL_EXIT_SANDBOX_BASE = 80,  /* + SandboxError code: 80 BUSY … 88 NOT_FOUND */
  SANDBOXCTL_EXIT_HOST_IO = 89,       /* G_IO_ERROR, G_FILE_ERROR */
  SANDBOXCTL_EXIT_ENCODING = 90,      /* G_CONVERT_ERROR: text is not UTF-8 */
  SANDBOXCTL_EXIT_DEMO_CHECK = 91,    /* a demo check did not hold */
  SANDBOXCTL_EXIT_NOT_EXECUTABLE = 126, /* run: EXECUTABLE exists in the guest but cannot run */
  SANDBOXCTL_EXIT_NOT_FOUND = 127,    /* run: no EXECUTABLE in the guest */
  SANDBOXCTL_EXIT_INTERRUPTED = 130,  /* SIGINT, SIGTERM or SIGHUP */
} SandboxctlExit;

/* run's own errors: EXECUTABLE missing or not executable in the guest. */
#define SANDBOXCTL_RUN_ERROR (sandboxctl_run_error_quark ())
GQuark sandboxctl_run_error_quark (void);

typedef enum
{
  SANDBOXCTL_RUN_ERROR_NOT_FOUND,       /* printed as COMMAND_NOT_FOUND, exit 127 */
  SANDBOXCTL_RUN_ERROR_NOT_EXECUTABLE,  /* printed as COMMAND_NOT_EXECUTABLE, exit 126 */
} SandboxctlRunError;

/* Network options of the commands that create or resume a session. */
typedef struct
{
  char      *network;      /* --network */
  GPtrArray *allow_rules;  /* SandboxctlAllowRule: each --allow and its --header specs */
} SandboxctlNetworkOptions;

/* Everything one invocation shares between its parts. */
typedef struct
{
  const char               *command_name;
  const char               *subcommand;   /* bg's: start, list, output, kill, wait */
  char                     *driver;
  char                     *state_dir;
  char                    **driver_options;
  int                       max_concurrent_commands;
  gboolean                  json;
  gboolean                  usage_json;   /* --json seen by main()'s early scan */
  gboolean                  verbose;
  gboolean                  events;       /* run --events: errors are error events */
  SandboxctlNetworkOptions  network;
  GCancellable             *cancellable;
} SandboxctlContext;

/* The end of every --help. */
#define SANDBOXCTL_HELP_FOOTER \
  "Exit status: 0 on success, 2 on a usage error, 80–91 for a sandbox or\n" \
  "host error; run passes the command's status through (126/127 when it\n" \
  "cannot be executed or is not found). See sandboxctl(1): “man sandboxctl”."

/* argv is a GStrv the command may parse in place (g_option_context_parse_strv). */
typedef int (*SandboxctlCommandFunc) (SandboxctlContext  *ctx,
                                      char             ***argv);

/* sandboxctl-common.c */
void            sandboxctl_context_clear          (SandboxctlContext  *ctx);
GOptionContext *sandboxctl_option_context_new     (SandboxctlContext  *ctx,
                                                   const char         *parameter_string,
                                                   const char         *summary,
                                                   const GOptionEntry *command_entries,
                                                   gboolean            with_network);
gboolean        sandboxctl_parse_options          (SandboxctlContext  *ctx,
                                                   GOptionContext     *context,
                                                   char             ***argv);
void            sandboxctl_enable_verbose         (void);
int             sandboxctl_report_usage           (SandboxctlContext  *ctx,
                                                   const char         *message);
JsonNode       *sandboxctl_error_to_node          (const GError       *error);
void            sandboxctl_print_error_json       (SandboxctlContext  *ctx,
                                                   const GError       *error);
int             sandboxctl_usage_error            (SandboxctlContext  *ctx,
                                                   const char         *format,
                                                   ...) G_GNUC_PRINTF (2, 3);
int             sandboxctl_exit_code_for_error    (const GError       *error);
int             sandboxctl_report_error           (SandboxctlContext  *ctx,
                                                   const GError       *error);
char           *sandboxctl_error_code_name        (const GError       *error);
char           *sandboxctl_default_state_dir      (void);
const char     *sandboxctl_driver_name            (SandboxctlContext  *ctx);
SandboxBackend *sandboxctl_open_backend           (SandboxctlContext  *ctx,
                                                   GError            **error);
void            sandboxctl_print_json             (JsonNode           *node);
void            sandboxctl_print_json_object      (JsonObject         *object);
JsonNode       *sandboxctl_state_to_node          (SandboxState       *state);
void            sandboxctl_install_signal_handlers (SandboxctlContext *ctx);
gboolean        sandboxctl_write_all              (int                 fd,
                                                   const guint8       *data,
                                                   gsize               length,
                                                   GError            **error);


/* sandboxctl-network.c */
const GOptionEntry   *sandboxctl_network_entries  (void);
SandboxNetworkPolicy *sandboxctl_network_build_policy (SandboxctlNetworkOptions  *options,
                                                   GError                   **error);
gboolean        sandboxctl_network_add_header_spec (SandboxNetworkPolicyBuilder *builder,
                                                   const char                  *origin,
                                                   const char                  *spec,
                                                   GError                     **error);
void            sandboxctl_network_options_clear  (SandboxctlNetworkOptions  *options);

/* sandboxctl-template.c */
typedef struct
{
  char  *name;
  char **files;      /* PATH=HOSTFILE */
  char  *directory;
  char  *runtime;    /* a runtime key, or NULL for the host's /usr */
  gboolean writable_runtime;   /* each session's own copy of it */
} SandboxctlTemplateOptions;

void             sandboxctl_template_options_clear (SandboxctlTemplateOptions *options);
gboolean         sandboxctl_template_options_given (SandboxctlTemplateOptions *options);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SandboxctlTemplateOptions, sandboxctl_template_options_clear)

/* A progress bar on stderr while a template is stored (prewarm) or copied
 * into a new session (create): drawn only when stderr is a terminal and
 * output is not --json. */
typedef struct
{
  GObject         *instance;   /* whose signal is drawn */
  gulong           handler;
  gboolean         drawn;
  gint64           last_draw;
  int              last_permille;
} SandboxctlProgressBar;

void             sandboxctl_progress_bar_start_prewarm (SandboxctlProgressBar  *bar,
                                                        SandboxTemplate        *template_,
                                                        gboolean                json);
void             sandboxctl_progress_bar_start_create  (SandboxctlProgressBar  *bar,
                                                        SandboxBackend         *backend,
                                                        gboolean                json);
void             sandboxctl_progress_bar_finish    (SandboxctlProgressBar      *bar);

SandboxTemplate *sandboxctl_template_build        (SandboxctlTemplateOptions  *options,
                                                   GCancellable               *cancellable,
                                                   GError                    **error);

/* sandboxctl-session.c: resolving --state/--session and leasing */
typedef struct
{
  char *state_file;
  char *session_id;
} SandboxctlSessionOptions;

void           sandboxctl_session_options_clear   (SandboxctlSessionOptions *options);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SandboxctlSessionOptions, sandboxctl_session_options_clear)

SandboxState  *sandboxctl_session_load_state      (SandboxctlSessionOptions *options,
                                                   SandboxBackend           *backend,
                                                   GError                  **error);
GOptionEntry  *sandboxctl_session_entries         (SandboxctlSessionOptions *options);
SandboxHandle *sandboxctl_session_resume          (SandboxctlContext        *ctx,
                                                   SandboxctlSessionOptions *options,
                                                   SandboxBackend          **backend_out,
                                                   GError                  **error);
int            sandboxctl_resume_for_command    (SandboxctlContext        *ctx,
                                                   GOptionContext           *context,
                                                   char                   ***argv,
                                                   guint                     n_arguments,
                                                   SandboxctlSessionOptions *options,
                                                   SandboxHandle           **handle);
gboolean       sandboxctl_check_arguments         (SandboxctlContext        *ctx,
                                                   char                    **argv,
                                                   guint                     expected);
gboolean       sandboxctl_print_created           (SandboxHandle            *handle,
                                                   const char               *output,
                                                   GError                  **error);
int            sandboxctl_session_finish          (SandboxctlContext        *ctx,
                                                   SandboxHandle            *handle,
                                                   int                       status);
GBytes        *sandboxctl_read_stdin              (GError                  **error);

/* sandboxctl-terminal.c: run -t and shell */
typedef struct _SandboxctlTerminal SandboxctlTerminal;

void                sandboxctl_terminal_prepare (SandboxCommand     *command);
SandboxctlTerminal *sandboxctl_terminal_attach  (SandboxProcess     *process);
void                sandboxctl_terminal_detach  (SandboxctlTerminal *terminal);

/* The subcommands */
char *sandboxctl_resolve_template (SandboxctlContext  *ctx,
                                   SandboxBackend     *backend,
                                   const char         *key_or_name,
                                   GError            **error);

int sandboxctl_cmd_drivers (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_prewarm (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_list    (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_templates (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_rm_template (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_runtime (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_create  (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_run     (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_shell   (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_read    (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_write   (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_rm      (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_stop    (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_delete  (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_recover (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_snapshot (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_restore (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_fork    (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_demo    (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_bg      (SandboxctlContext *ctx, char ***argv);
int sandboxctl_cmd_hold    (SandboxctlContext *ctx, char ***argv);

/* sandboxctl-background.c: a session's holder, seen from its clients */
#define SANDBOXCTL_HOLDER_OBJECT_PATH "/org/libsandbox/Sandboxctl/Holder"

int             sandboxctl_holder_open_dir        (gboolean                  create,
                                                   GError                  **error);
gboolean        sandboxctl_holder_check_socket    (int                       dir_fd,
                                                   const char               *session_id,
                                                   GError                  **error);
gboolean        sandboxctl_holder_serves          (const char               *session_id);
char           *sandboxctl_holder_address         (int                       dir_fd,
                                                   const char               *session_id);
char           *sandboxctl_session_id_of          (SandboxctlContext        *ctx,
                                                   SandboxctlSessionOptions *options,
                                                   GError                  **error);
SandboxResult  *sandboxctl_holder_run             (SandboxctlContext        *ctx,
                                                   SandboxctlSessionOptions *options,
                                                   const char * const       *argv,
                                                   GVariant                 *command_options,
                                                   int                      *exec_errno,
                                                   GError                  **error);
GVariant       *sandboxctl_command_options        (const char               *cwd,
                                                   const char * const       *environment,
                                                   int                       timeout_ms,
                                                   gint64                    max_output_bytes);

G_END_DECLS
