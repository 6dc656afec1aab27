/* escape-probe.c — what a hostile guest tries, one call at a time
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The attacker's suite copies this program into a workspace
 * (escape_install_probe()) and runs `escape-probe NAME ARGS…` inside the
 * guest. Probes that make one call print the errno it failed with, or 0 when
 * it succeeded; `fds` prints one line per open descriptor. Exit status 2 is
 * an unknown probe or wrong arguments. Add a probe here when the shell
 * cannot make the call.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <termios.h>
#include <unistd.h>

static int
result (long ret)
{
  return ret < 0 ? errno : 0;
}

/* `fds`: "N TARGET" for each open descriptor but the one listing them. */
static int
probe_fds (void)
{
  DIR *dir = opendir ("/proc/self/fd");
  struct dirent *entry;

  if (dir == NULL)
    return 2;
  while ((entry = readdir (dir)) != NULL)
    {
      char path[PATH_MAX], target[PATH_MAX];
      ssize_t length;

      if (entry->d_name[0] == '.' || atoi (entry->d_name) == dirfd (dir))
        continue;
      snprintf (path, sizeof path, "/proc/self/fd/%s", entry->d_name);
      length = readlink (path, target, sizeof target - 1);
      if (length < 0)
        length = 0;
      target[length] = '\0';
      printf ("%s %s\n", entry->d_name, target);
    }
  closedir (dir);
  return 0;
}

/* Connects a stream socket to @name: "@NAME" is abstract, else a path. */
static int
probe_connect (const char *name)
{
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  socklen_t length;
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int err;

  if (fd < 0)
    return errno;
  if (strlen (name) >= sizeof address.sun_path)
    return ENAMETOOLONG;
  memcpy (address.sun_path, name, strlen (name));
  length = offsetof (struct sockaddr_un, sun_path) + strlen (name);
  if (name[0] == '@')
    address.sun_path[0] = '\0';
  else
    length++;
  err = result (connect (fd, (struct sockaddr *) &address, length));
  close (fd);
  return err;
}

/* TIOCSTI on @fd: pushes a byte into the terminal's input (CVE-2017-5226). */
static int
probe_tiocsti (int fd)
{
  char byte = '\n';

  return result (ioctl (fd, TIOCSTI, &byte));
}

/* Opens the controlling terminal, if the guest has one. */
static int
probe_open_tty (void)
{
  int fd = open ("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

  if (fd < 0)
    return errno;
  close (fd);
  return 0;
}

/* Opens the controlling terminal and pushes a newline into its input: the
 * attack of CVE-2017-5226, where the pushed input reaches the host's shell
 * once the sandbox exits. */
static int
probe_tiocsti_tty (void)
{
  char byte = '\n';
  int fd = open ("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  int err;

  if (fd < 0)
    return errno;
  err = result (ioctl (fd, TIOCSTI, &byte));
  close (fd);
  return err;
}

static int
probe_ptrace_attach (pid_t pid)
{
  int err = result (ptrace (PTRACE_ATTACH, pid, NULL, NULL));

  if (err == 0)
    {
      waitpid (pid, NULL, __WALL);
      ptrace (PTRACE_DETACH, pid, NULL, NULL);
    }
  return err;
}

/* Opens @path for writing without creating it. */
static int
probe_open_write (const char *path)
{
  int fd = open (path, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

  if (fd < 0)
    return errno;
  close (fd);
  return 0;
}

/* Exchanges @a and @b (renameat2 RENAME_EXCHANGE) as fast as it can for
 * @seconds; prints how many exchanges succeeded. A guest racing the host's
 * file calls between a directory and a symlink. */
static int
probe_swap_loop (const char *a,
                 const char *b,
                 double      seconds)
{
  struct timespec start, now;
  unsigned long swaps = 0;

  clock_gettime (CLOCK_MONOTONIC, &start);
  do
    {
      for (int i = 0; i < 64; i++)
        if (syscall (SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0)
          swaps++;
      clock_gettime (CLOCK_MONOTONIC, &now);
    }
  while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
  printf ("%lu\n", swaps);
  return 0;
}

/* Hard-links @path into @destination through an O_PATH descriptor
 * (linkat AT_EMPTY_PATH, unprivileged since Linux 6.10), the way to name a
 * file reached through a magic link such as /proc/1/exe. */
static int
probe_link_fd (const char *path,
               const char *destination)
{
  int fd = open (path, O_PATH | O_CLOEXEC);
  int err;

  if (fd < 0)
    return errno;
  err = result (linkat (fd, "", AT_FDCWD, destination, AT_EMPTY_PATH));
  close (fd);
  return err;
}

static int
usage (const char *name)
{
  fprintf (stderr, "escape-probe: unknown probe or arguments: %s\n", name);
  return 2;
}

int
main (int   argc,
      char *argv[])
{
  const char *name = argc > 1 ? argv[1] : "";
  int err;

  if (strcmp (name, "fds") == 0 && argc == 2)
    return probe_fds ();
  if (strcmp (name, "swap-loop") == 0 && argc == 5)
    return probe_swap_loop (argv[2], argv[3], atof (argv[4]));
  if (strcmp (name, "connect") == 0 && argc == 3)
    err = probe_connect (argv[2]);
  else if (strcmp (name, "tiocsti") == 0 && argc == 3)
    err = probe_tiocsti (atoi (argv[2]));
  else if (strcmp (name, "tiocsti-tty") == 0 && argc == 2)
    err = probe_tiocsti_tty ();
  else if (strcmp (name, "open-tty") == 0 && argc == 2)
    err = probe_open_tty ();
  else if (strcmp (name, "ptrace-attach") == 0 && argc == 3)
    err = probe_ptrace_attach (atoi (argv[2]));
  else if (strcmp (name, "kill") == 0 && argc == 4)
    err = result (kill (atoi (argv[2]), atoi (argv[3])));
  else if (strcmp (name, "link-fd") == 0 && argc == 4)
    err = probe_link_fd (argv[2], argv[3]);
  else if (strcmp (name, "open-write") == 0 && argc == 3)
    err = probe_open_write (argv[2]);
  else
    return usage (name);
  printf ("%d\n", err);
  return 0;
}
