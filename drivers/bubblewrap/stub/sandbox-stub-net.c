/* sandbox-stub-net.c — the stub's network mode: one network namespace per session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `sandbox-stub keep-net [proxy=PORT]`, started by the host (through the
 * launcher) once per live session and network policy, with a
 * SOCK_SEQPACKET socket to the host at 0, 1 and 2.
 *
 * It makes the session's network namespace — not root, in a user
 * namespace of its own that maps only its own ids, which owns it — brings
 * its loopback up, and under an allow-list binds the guest's HTTP proxy
 * listener on 127.0.0.1:PORT there (stub_proxy_listen(), as a sandbox's
 * stub used to for each command). Then it drops every capability and
 * answers "N", with the listener attached when it made one, or "E" and a
 * message. Every command of the session is started in this namespace (the
 * launcher's setns()), so a server one command starts answers the next on
 * 127.0.0.1, while each keeps its own pid namespace, /tmp and filter.
 *
 * Afterwards it serves one request: "S" asks for a new TCP socket of the
 * namespace, sent back attached to an "S" (or "E" and a message), which
 * the host connects to a guest's port (a port exposed to the host): a
 * socket belongs to the namespace it was made in, and the host, a
 * multi-threaded process, cannot enter one. Anything else, or the host
 * closing its end, ends it; so do the host's stop and its death (the
 * parent-death signal the launcher armed). The namespace lives on while a
 * command is in it.
 */

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox-stub-descriptor.h"
#include "sandbox-stub-keeper.h"
#include "sandbox-stub-net.h"
#include "sandbox-stub-steps.h"

#define ANSWER_FD 1
#define REQUEST_FD 0

/* Root makes the namespace where it is; anyone else first needs a user
 * namespace to own it. */
static int
enter_new_network (void)
{
  if (geteuid () == 0)
    return unshare (CLONE_NEWNET);
  return stub_enter_own_user_namespace (CLONE_NEWNET);
}

/* A new namespace's loopback is down; up, the kernel gives it 127.0.0.1
 * and ::1. */
static int
bring_loopback_up (void)
{
  struct ifreq request = { 0 };
  int fd = socket (AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int result;

  if (fd < 0)
    return -1;
  strncpy (request.ifr_name, "lo", IFNAMSIZ - 1);
  result = ioctl (fd, SIOCGIFFLAGS, &request);
  if (result == 0)
    {
      request.ifr_flags |= IFF_UP;
      result = ioctl (fd, SIOCSIFFLAGS, &request);
    }
  close (fd);
  return result;
}

static int
answer (char  kind,
        int   fd)
{
  if (fd >= 0)
    return stub_send_descriptor (ANSWER_FD, &kind, 1, fd);
  return send (ANSWER_FD, &kind, 1, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* "S": a TCP socket of this namespace, unconnected. */
static void __attribute__ ((noreturn))
serve_requests (void)
{
  for (;;)
    {
      char request[16];
      ssize_t got = recv (REQUEST_FD, request, sizeof request, 0);
      int fd;

      if (got < 0 && errno == EINTR)
        continue;
      if (got != 1 || request[0] != 'S')
        _exit (0);
      fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0)
        {
          char message[128];
          int length = snprintf (message, sizeof message, "E%s", strerror (errno));

          (void) ! send (ANSWER_FD, message, (size_t) length, MSG_NOSIGNAL);
          continue;
        }
      if (answer ('S', fd) < 0)
        _exit (1);
      close (fd);
    }
}

void
stub_keep_net (int    argc,
               char **argv)
{
  const char *proxy = NULL;
  int listener = -1;

  if (argc == 3 && strncmp (argv[2], "proxy=", 6) == 0)
    proxy = argv[2] + 6;
  else if (argc != 2)
    {
      errno = EINVAL;
      stub_helper_fail ("usage: sandbox-stub " STUB_NET_OPTION " [proxy=PORT]");
    }
  if (enter_new_network () < 0)
    stub_helper_fail ("make its network namespace");
  if (bring_loopback_up () < 0)
    stub_helper_fail ("bring its loopback up");
  if (proxy != NULL && (listener = stub_proxy_listen (proxy)) < 0)
    stub_helper_fail ("listen on the proxy's port");
  stub_drop_capabilities ();
  if (answer ('N', listener) < 0)
    stub_helper_fail ("answer");
  if (listener >= 0)
    close (listener);
  close (2);
  serve_requests ();
}
