/* sandbox-stub-proxy.c — the step that makes the guest's HTTP proxy listener
 *
 * Under an allow-list the guest's HTTP clients find the gateway through
 * `http_proxy=http://127.0.0.1:PORT`. What listens there must be nothing the
 * guest can kill, replace or bind first: so this step, run by the stub
 * before any guest process exists, binds and listens on 127.0.0.1:PORT in
 * the sandbox's network namespace and hands the listening socket to the
 * host (stub_handoff()), whose gateway accepts on it directly. No copy is
 * left in the sandbox: the port stays taken for as long as the host holds
 * the socket, so a guest's bind() of it fails with EADDRINUSE, and a guest
 * that kills every process it can see leaves the listener where it is.
 *
 * bwrap's --unshare-net brings the namespace's loopback interface up
 * (loopback_setup() in bubblewrap's network.c) before the stub runs; a
 * namespace where it is down makes bind() fail with EADDRNOTAVAIL, and the
 * stub then refuses to run the command.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox-stub-message.h"
#include "sandbox-stub-steps.h"

#define PROXY_BACKLOG 128

/* A port from the `proxy=PORT` option: digits only, 1 to 65535. */
static int
parse_port (const char *value)
{
  long port = 0;

  if (value[0] == '\0')
    return -1;
  for (const char *c = value; *c != '\0'; c++)
    {
      if (*c < '0' || *c > '9' || port > 65535)
        return -1;
      port = port * 10 + (*c - '0');
    }
  return port >= 1 && port <= 65535 ? (int) port : -1;
}

int
stub_proxy_listen (const char *value)
{
  struct sockaddr_in address = {
    .sin_family = AF_INET,
    .sin_addr.s_addr = htonl (INADDR_LOOPBACK),
  };
  int port = parse_port (value);
  int fd;

  if (port < 0)
    {
      errno = EINVAL;
      return -1;
    }
  address.sin_port = htons ((uint16_t) port);
  /* Neither SO_REUSEADDR nor SO_REUSEPORT: no other socket may share it. */
  fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  if (bind (fd, (struct sockaddr *) &address, sizeof address) < 0 ||
      listen (fd, PROXY_BACKLOG) < 0)
    {
      int saved_errno = errno;

      close (fd);
      errno = saved_errno;
      return -1;
    }
  return fd;
}

int
stub_step_proxy_listener (const char *value)
{
  int fd = stub_proxy_listen (value);

  if (fd < 0)
    return -1;
  return stub_handoff (STUB_HANDOFF_PROXY_LISTENER, fd);
}
