/* sandbox-stub-descriptor.c — a descriptor sent to the host
 *
 * The one way the stub gives the host something it made: the keeper's
 * overlay root (sandbox-stub-keeper.c), and what the stub hands over on its
 * handoff socket (stub_handoff() in sandbox-stub.c). The host reads both
 * with sandbox_bubblewrap_stub_steal_passed_fd().
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "sandbox-stub-descriptor.h"

int
stub_send_descriptor (int         channel,
                      const void *data,
                      size_t      size,
                      int         fd)
{
  struct iovec part = { (void *) data, size };
  union
  {
    char buffer[CMSG_SPACE (sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr message = {
    .msg_iov = &part,
    .msg_iovlen = 1,
    .msg_control = control.buffer,
    .msg_controllen = sizeof control.buffer,
  };
  struct cmsghdr *header;
  ssize_t sent;

  memset (control.buffer, 0, sizeof control.buffer);
  header = CMSG_FIRSTHDR (&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (header), &fd, sizeof (int));
  do
    sent = sendmsg (channel, &message, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (sent < 0)
    return -1;
  if ((size_t) sent != size)
    {
      errno = EMSGSIZE;
      return -1;
    }
  return 0;
}
