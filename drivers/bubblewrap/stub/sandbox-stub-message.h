/* sandbox-stub-message.h — the command message the host sends the stub
 *
 * Shared by the stub (which parses it) and the driver (which writes it).
 * Plain C, no GLib: the stub links nothing but libc.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * The message, in host byte order (host and stub are one machine):
 *
 *   uint32 magic     STUB_MESSAGE_MAGIC
 *   uint32 version   STUB_MESSAGE_VERSION
 *   uint32 argc      >= 1
 *   uint32 envc
 *   uint32 length    bytes of payload that follow, nothing after them
 *   payload          1 + argc + envc NUL-terminated strings:
 *                    cwd (absolute), argv[0] (non-empty) … argv[argc-1],
 *                    env[0] … env[envc-1] (each KEY=VALUE, KEY non-empty)
 *
 * The stub reads its control descriptor to EOF and parses the whole. Any
 * deviation — short, long, a string too many or too few, a missing NUL —
 * makes it exit without running anything.
 */

#define STUB_MESSAGE_MAGIC   0x43584253u   /* "SBXC" */
#define STUB_MESSAGE_VERSION 1u
#define STUB_MESSAGE_HEADER_SIZE (5 * sizeof (uint32_t))

/* What execve() would take at most (MAX_ARG_STRLEN is 128 KiB per string,
 * the whole bounded by a quarter of the stack rlimit): a larger message is
 * refused on the host, and rejected by the stub. */
#define STUB_MESSAGE_MAX_SIZE   (2u * 1024 * 1024)
#define STUB_MESSAGE_MAX_STRINGS 65536u

/*
 * The report, which a stub given `report=FD` writes on FD once its sandbox
 * is empty (host byte order):
 *
 *   int32 status       the guest's exit status, or 128 + the signal that
 *                      ended it
 *   int32 exec_errno   execvp()'s errno when the guest's executable could
 *                      not be executed (the guest never ran), else 0
 *
 * The host learns of a failed exec from exec_errno alone: whatever the
 * guest writes or exits with is the guest's own.
 */
typedef struct
{
  int32_t status;
  int32_t exec_errno;
} StubReport;

/*
 * A handoff: a descriptor the stub made inside the sandbox — where only it
 * can make it before the guest runs — and gives the host, on the
 * `handoff=FD` socket (SOCK_SEQPACKET, one datagram per descriptor):
 *
 *   uint32 magic   STUB_HANDOFF_MAGIC
 *   uint32 kind    what the descriptor is, a StubHandoffKind
 *
 * with exactly one descriptor attached (SCM_RIGHTS). The stub keeps no copy
 * and the guest never gets one. The host takes a datagram that deviates —
 * short, long, another magic, an unknown kind, no descriptor or more than
 * one — for a broken stub, and closes whatever came with it.
 */
#define STUB_HANDOFF_MAGIC 0x48584253u   /* "SBXH" */

typedef enum
{
  /* A TCP socket listening on 127.0.0.1 in the sandbox's network
   * namespace, on the port of the stub's `proxy=PORT` step. */
  STUB_HANDOFF_PROXY_LISTENER = 1,
  /* The master side of the guest's pseudo-terminal, made by the stub's
   * `terminal=ROWSxCOLUMNS` step; the guest has the other side. */
  STUB_HANDOFF_TERMINAL = 2,
  /* A pidfd of the guest, sent once it is spawned (whether or not its
   * exec succeeded): what the host signals it through. */
  STUB_HANDOFF_GUEST = 3,
} StubHandoffKind;

typedef struct
{
  uint32_t magic;
  uint32_t kind;
} StubHandoff;

typedef struct
{
  const char *cwd;
  char **argv;   /* NULL-terminated, argc entries */
  char **envp;   /* NULL-terminated, envc entries */
} StubMessage;

/* Parses @size bytes at @buffer in place. @strings has room for
 * STUB_MESSAGE_MAX_STRINGS + 2 pointers; @message's arrays point into it.
 * Returns 0, or -1 when the message is malformed. */
int stub_message_parse (char        *buffer,
                        size_t       size,
                        char       **strings,
                        StubMessage *message);
