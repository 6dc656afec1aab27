/* sandbox-bubblewrap-process-fields-private.h — what a bwrap process holds, for its files
 *
 * sandbox-bubblewrap-process.c (its launch, its pipes and its end),
 * sandbox-bubblewrap-process-prepare.c (making one ready to launch),
 * sandbox-bubblewrap-process-handoff.c (the stub's handoff socket),
 * sandbox-bubblewrap-process-stdin.c (the guest's standard input) and
 * sandbox-bubblewrap-process-live.c (its terminal and its signals) share
 * it; nothing else sees a process's fields.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib-unix.h>

#include "sandbox-bubblewrap-launcher-private.h"
#include "sandbox-bubblewrap-limits-private.h"
#include "sandbox-bubblewrap-process-private.h"

G_BEGIN_DECLS

struct _SandboxBubblewrapProcess
{
  SandboxProcess parent_instance;

  /* Set before the launch, then owned by the launcher thread. */
  SandboxBubblewrapArgs *args;       /* a cold start's; NULL in a ready sandbox */
  SandboxBubblewrapLaunched taken;   /* a ready sandbox's bwrap; pid 0 when cold */
  int control_fd;                    /* its stub's control socket */
  int report_fd;                     /* where the stub reports, or -1 */
  GSocket *handoff;                  /* where the stub hands over descriptors, or NULL */
  SandboxGateway *gateway;           /* the session's, under an allow-list */
  GBytes *message;                   /* the command, for that stub */
  GBytes *stdin_bytes;        /* stdin's bytes, or a streamed stdin's chunk */
  int stdin_reader;           /* a streamed stdin's driver end, or -1 */
  gboolean wants_terminal;    /* the stub makes a terminal and hands it over */
  GObject *owner;             /* the driver, kept alive until completion */
  SandboxBubblewrapProcessExitedFunc exited_func;   /* nullable */
  int status_fd;
  SandboxBubblewrapLimits limits;
  SandboxBubblewrapCgroup *cgroup;   /* NULL without cgroup limits */

  /* Launcher thread only. */
  int stdin_fd;
  int stdout_fd;
  int stderr_fd;
  int terminal_fd;            /* the terminal's master, once handed over */
  GSource *terminal_source;
  GSource *stdin_source;
  GSource *stdin_reader_source;
  GSource *stdout_source;
  GSource *stderr_source;
  GSource *status_source;
  GSource *report_source;
  GSource *handoff_source;
  GSource *bwrap_source;
  guint proxy_listener_id;    /* in @gateway, 0 when none */
  guint terminal_handed : 1;  /* the stub handed a terminal over (once only) */
  gsize stdin_written;
  GString *status;
  int exit_status;
  int exec_errno;             /* the stub's report: the guest could not be executed */
  SandboxBubblewrapTrees *trees;     /* nullable; counts this one from launch to reap */
  guint output_capped : 1;
  guint reported : 1;         /* the stub reported its sandbox empty */
  guint over : 1;             /* the command's end was handled */

  GMutex lock;
  /* Guarded by @lock. */
  GPid bwrap_pid;
  int bwrap_pidfd;
  int guest_pidfd;            /* the guest's, handed over by the stub, or -1 */
  int terminal_control_fd;    /* a copy of the terminal's master, for resizing */
  guint64 pending_signals;    /* sent before @guest_pidfd came: bit N - 1 for N */
  guint terminal_rows;        /* the size asked while @terminal_control_fd was -1 */
  guint terminal_columns;
  guint bwrap_reaped : 1;
  guint kill_requested : 1;
  guint isolated : 1;         /* bwrap reported a namespace child */
  guint started : 1;
  guint finished : 1;
  guint completed : 1;
};

/* sandbox-bubblewrap-process.c */
GSource *sandbox_bubblewrap_process_watch_fd      (SandboxBubblewrapProcess  *self,
                                                   int                        fd,
                                                   GIOCondition               condition,
                                                   GUnixFDSourceFunc          callback,
                                                   const char                *name);

gboolean sandbox_bubblewrap_process_read_output  (SandboxBubblewrapProcess  *self,
                                                   SandboxOutputStream        stream,
                                                   int                       *fd,
                                                   GSource                  **source);
void     sandbox_bubblewrap_process_drain_output  (SandboxBubblewrapProcess  *self,
                                                   SandboxOutputStream        stream,
                                                   int                       *fd,
                                                   GSource                  **source);

/* sandbox-bubblewrap-process-stdin.c */
gboolean sandbox_bubblewrap_process_open_stdin    (SandboxBubblewrapProcess  *self,
                                                   SandboxCommand            *command,
                                                   GError                   **error);
void     sandbox_bubblewrap_process_start_stdin   (SandboxBubblewrapProcess  *self);
void     sandbox_bubblewrap_process_finish_stdin  (SandboxBubblewrapProcess  *self);
void     sandbox_bubblewrap_process_stdin_to_terminal (SandboxBubblewrapProcess *self);

/* sandbox-bubblewrap-process-handoff.c */
gboolean sandbox_bubblewrap_process_take_handoff  (SandboxBubblewrapProcess  *self,
                                                   int                        fd,
                                                   GError                   **error);
gboolean sandbox_bubblewrap_process_handoff_cb    (int                        fd,
                                                   GIOCondition               condition,
                                                   gpointer                   data);
void     sandbox_bubblewrap_process_close_handoff (SandboxBubblewrapProcess  *self);
void     sandbox_bubblewrap_process_receive_handoffs (SandboxBubblewrapProcess *self);

/* sandbox-bubblewrap-process-live.c */
void     sandbox_bubblewrap_process_take_terminal (SandboxBubblewrapProcess  *self,
                                                   int                        master);
void     sandbox_bubblewrap_process_take_guest    (SandboxBubblewrapProcess  *self,
                                                   int                        pidfd);
void     sandbox_bubblewrap_process_drain_terminal (SandboxBubblewrapProcess *self);
void     sandbox_bubblewrap_process_close_live    (SandboxBubblewrapProcess  *self);
void     sandbox_bubblewrap_process_type_eof      (SandboxBubblewrapProcess  *self);
gboolean sandbox_bubblewrap_process_send_signal   (SandboxProcess            *process,
                                                   int                        signum,
                                                   GError                   **error);
void     sandbox_bubblewrap_process_resize_terminal (SandboxProcess          *process,
                                                   guint                      rows,
                                                   guint                      columns);

G_END_DECLS
