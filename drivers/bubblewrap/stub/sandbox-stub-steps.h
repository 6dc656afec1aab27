/* sandbox-stub-steps.h — the steps the stub runs before it waits
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

/*
 * A step runs inside the sandbox, after bwrap set it up and before the
 * seccomp filter, with whatever capabilities bwrap left the stub (none
 * unless the driver asks bwrap for one with --cap-add: then it must add
 * CAP_SETPCAP too, without which the stub cannot empty its bounding set
 * and refuses to go on). After the last step the stub drops every
 * capability, sets no_new_privs and then installs the filter.
 *
 * To add one: write `int stub_step_NAME (const char *value)` in its own
 * file (sandbox-stub-NAME.c, added to stub_sources in
 * drivers/bubblewrap/meson.build), declare it below and add a line to
 * stub_steps[] in sandbox-stub.c. @option names the stub argument
 * (`NAME=VALUE`) the step reads; the step runs only when the driver passed
 * it, and gets VALUE. A step returns 0, or -1 with errno set: the stub then
 * reports the step's name and exits without running the command.
 */

typedef struct
{
  const char *option;
  int (*run) (const char *value);
} StubStep;

#include <stdint.h>

/* sandbox-stub.c: the workspace lock every sandbox holds while it lives. */
int stub_step_lock_workspace (const char *value);
int stub_step_lock_descriptor (const char *value);

/* sandbox-stub-proxy.c: the proxy's listening socket, handed to the host. */
int stub_step_proxy_listener (const char *value);
/* The listening socket itself (a session's network keeper hands it over
 * its own way), or -1 with errno set. */
int stub_proxy_listen (const char *value);

/* sandbox-stub-terminal.c: the command's pseudo-terminal, whose master is
 * handed to the host; stub_terminal_take() gives the guest's side (once),
 * or -1 when the step did not run. */
int stub_step_terminal (const char *value);
int stub_terminal_take (void);

/* sandbox-stub.c: gives @fd (a StubHandoffKind @kind, see
 * sandbox-stub-message.h) to the host on the `handoff=FD` socket, and
 * closes it here. Returns 0, or -1 with errno set (EBADF without one). */
int stub_handoff (uint32_t kind,
                  int      fd);

