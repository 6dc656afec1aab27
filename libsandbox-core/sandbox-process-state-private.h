/* sandbox-process-state-private.h — the state SandboxProcess's files share
 *
 * SandboxProcess is one class in three files: the object and how its output
 * reaches the owner context (sandbox-process.c), what drivers report
 * (sandbox-process-report.c), waiting and stopping
 * (sandbox-process-wait.c), a streamed standard input
 * (sandbox-process-stdin.c), signals and a terminal
 * (sandbox-process-live.c) and a background command's bounded output
 * (sandbox-process-background.c). This is what they share; nothing else includes it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-process.h"
#include "sandbox-idle-clock-private.h"
#include "sandbox-output-log-private.h"
#include "sandbox-session-gate.h"

G_BEGIN_DECLS

typedef struct
{
  SandboxOutputStream stream;
  GBytes *data;
} OutputEvent;

typedef struct
{
  GMutex mutex;
  GCond cond;

  guint timeout_ms;
  gsize max_output_bytes;

  /* Where output signals are emitted: the spawning thread's context. */
  GMainContext *owner_context;

  GByteArray *stdout_buffer;
  GByteArray *stderr_buffer;
  gsize output_bytes;

  GQueue pending_output;
  GSource *dispatch;   /* the queued output dispatch on the owner context */

  GSource *deadline;
  GCancellable *cancellable;
  gulong cancelled_id;

  GError *failure;
  int exit_status;
  SandboxResult *result;

  GPtrArray *waiters;
  /* Cancelled once the process completes, made on demand
   * (sandbox_process_dup_ended()): an end a thread can wait for on a context
   * of its own, where the waiters are answered on the owner context. */
  GCancellable *ended;

  SandboxSessionGate *gate;   /* holds the admission slot, if admitted */

  /* The consumer's end of a streamed stdin (sandbox-process-stdin.c). */
  GOutputStream *stdin_stream;

  /* A background command's (sandbox-process-background.c): its id, its
   * command line and start, and its output as a bounded log instead of
   * the stdout and stderr buffers. */
  char *background_id;
  SandboxIdleClock *idle_clock;   /* its session's: calls on it count */
  char **argv;
  GDateTime *start_time;
  SandboxOutputLog log;

  guint terminal : 1;   /* sandbox_process_open_terminal() made its input */
  guint background : 1; /* sandbox_process_make_background() made it one */
  guint started : 1;
  guint kill_requested : 1;
  guint completed : 1;
} SandboxProcessPrivate;

SandboxProcessPrivate *sandbox_process_get_private (SandboxProcess *self);

void sandbox_process_schedule_dispatch_locked (SandboxProcess *self);
void sandbox_process_cancel_dispatch         (SandboxProcess *self);
void sandbox_process_drain                   (SandboxProcess *self);
void sandbox_process_output_event_free       (OutputEvent    *event);
void sandbox_process_queue_output_locked     (SandboxProcess      *self,
                                              SandboxOutputStream  stream,
                                              const guint8        *data,
                                              gsize                length);
void sandbox_process_log_output_locked       (SandboxProcess      *self,
                                              SandboxOutputStream  stream,
                                              const guint8        *data,
                                              gsize                length);

G_END_DECLS
