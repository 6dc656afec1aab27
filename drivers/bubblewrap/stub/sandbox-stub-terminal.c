/* sandbox-stub-terminal.c — the step that makes a command's terminal
 *
 * A command that asks for a terminal (`terminal=ROWSxCOLUMNS`) gets a
 * pseudo-terminal made here, inside the sandbox, from the devpts instance
 * bwrap's --dev mounted for this sandbox alone: no other sandbox and no
 * host terminal is in it. The step opens the master side, sizes it, keeps
 * the other side for the guest (stub_terminal_take(): the guest makes it
 * its controlling terminal and its descriptors 0, 1 and 2) and hands the
 * master to the host (stub_handoff()), which relays bytes to and from it
 * and never gives the guest a descriptor of its own terminal. No copy of
 * the master stays in the sandbox, so no guest process can read what is
 * typed or forge what is shown but through its own terminal.
 *
 * The other side is opened from the master (TIOCGPTPEER), not by its name
 * under /dev/pts: nothing resolves a path a guest could have touched (no
 * guest runs yet anyway).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox-stub-message.h"
#include "sandbox-stub-steps.h"

#ifndef TIOCGPTPEER
# define TIOCGPTPEER _IO ('T', 0x41)
#endif

/* The guest's side of the terminal, or -1 without one. */
static int guest_side = -1;

/* A dimension from the option: digits only, 1 to 65535; *@end is what
 * follows it. */
static int
parse_dimension (const char  *value,
                 const char **end)
{
  long n = 0;
  const char *c = value;

  for (; *c >= '0' && *c <= '9'; c++)
    if ((n = n * 10 + (*c - '0')) > 65535)
      return -1;
  *end = c;
  return c > value && n >= 1 ? (int) n : -1;
}

static int
parse_size (const char     *value,
            struct winsize *size)
{
  const char *end;
  int rows = parse_dimension (value, &end);
  int columns;

  if (rows < 0 || *end != 'x')
    return -1;
  columns = parse_dimension (end + 1, &end);
  if (columns < 0 || *end != '\0')
    return -1;
  size->ws_row = (unsigned short) rows;
  size->ws_col = (unsigned short) columns;
  return 0;
}

int
stub_step_terminal (const char *value)
{
  struct winsize size = { 0 };
  int unlock = 0;
  int master;

  if (parse_size (value, &size) < 0)
    {
      errno = EINVAL;
      return -1;
    }
  master = open ("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NOFOLLOW);
  if (master < 0)
    return -1;
  if (ioctl (master, TIOCSPTLCK, &unlock) < 0 ||
      ioctl (master, TIOCSWINSZ, &size) < 0 ||
      (guest_side = ioctl (master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
    {
      int saved_errno = errno;

      close (master);
      errno = saved_errno;
      return -1;
    }
  return stub_handoff (STUB_HANDOFF_TERMINAL, master);
}

int
stub_terminal_take (void)
{
  int fd = guest_side;

  guest_side = -1;
  return fd;
}
