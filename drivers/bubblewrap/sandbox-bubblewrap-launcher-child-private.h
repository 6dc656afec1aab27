/* sandbox-bubblewrap-launcher-child-private.h — what the launcher tells its child
 *
 * sandbox-bubblewrap-launcher.c prepares a ChildSetup and reads the
 * ChildReport; sandbox-bubblewrap-launcher-child.c is the child that
 * reads the one and writes the other.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sys/resource.h>

#include "sandbox-bubblewrap-launcher-private.h"

G_BEGIN_DECLS

/* What the child does, prepared before clone(): the child only reads it. */
typedef struct
{
  const char * const *argv;
  int stdin_fd;
  int stdout_fd;
  int stderr_fd;
  GArray *passed_fds;
  GArray *cgroup_procs_fds;       /* nullable */
  const SandboxBubblewrapGuestView *guest_view;   /* nullable: the guest is the host */
  struct rlimit rlimits[4];
  int resources[4];
  guint n_rlimits;
  int clone_flags;
  char uid_map[32];               /* with CLONE_NEWUSER only */
  char gid_map[32];
  pid_t host_pid;                 /* the parent, in the host's pid numbering */
  int host_proc_fd;               /* the host's /proc */
  int report_fd;
  int enter_pidfd;                /* a keeper whose namespaces to enter, or -1 */
  int net_pidfd;                  /* a session's network keeper, or -1 */
  int net_flags;                  /* what to enter of it: its network namespace,
                                   * and its user namespace when that is the
                                   * one bwrap's process starts in */
  gboolean net_first;             /* its namespaces before the keeper's */
  char *entered_stack;            /* the stack top of bwrap's process then */
  pid_t entered_pid;              /* bwrap's, written by the intermediate child */
} ChildSetup;

/* The steps of the child's setup, named in the error when one fails. */
typedef enum
{
  STEP_SIGNALS,
  STEP_ENTER,
  STEP_ENTER_NET,
  STEP_PROCESS_GROUP,
  STEP_CGROUPS,
  STEP_ID_MAPS,
  STEP_PROC,
  STEP_GUEST_VIEW,
  STEP_GUEST_IDS,
  STEP_PARENT_DEATH_SIGNAL,
  STEP_DESCRIPTORS,
  STEP_RLIMITS,
  STEP_EXEC,
} ChildStep;

typedef struct
{
  int step;
  int errno_value;
} ChildReport;

/* Clones the child that runs @setup and execs bwrap; see the file. Returns
 * the pid, or -1 with errno. */
pid_t sandbox_bubblewrap_launcher_clone_child (ChildSetup *setup);

G_END_DECLS
