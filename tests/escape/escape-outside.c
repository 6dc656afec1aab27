/* escape-outside.c — an "outside" network a test builds for itself
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An allow-all guest must reach an internet server and nothing of the
 * host's. A test cannot dial the internet, and serving from the host's own
 * LAN address proves less (and is missing on some hosts), so the test
 * builds its own outside: it moves itself into a network namespace of its
 * own (owned, when it is not root, by a user namespace of its own: the
 * backend then runs as that unprivileged user exactly as it would outside
 * it), makes a second namespace, the outside, joins the two with a veth
 * pair (198.51.100.1 here, 198.51.100.2 there: TEST-NET-2, routed nowhere
 * real), and serves HTTP there. slirp4netns turns the guest's connection
 * into an ordinary socket of the test's namespace, which the veth carries
 * out. Everything ends with the test's process: a namespace with no
 * process left is gone, and its veth with it.
 *
 * Call escape_outside_start() first thing in a test's subprocess
 * (g_test_trap_subprocess()): a user namespace can only be entered while
 * the process has a single thread.
 */

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "escape-outside.h"

#define IP "/usr/sbin/ip"
#define HERE_ADDRESS "198.51.100.1/24"
#define THERE_ADDRESS ESCAPE_OUTSIDE_ADDRESS "/24"
#define ANSWER "HTTP/1.0 200 OK\r\nContent-Length: 13\r\nConnection: close\r\n\r\n" \
  ESCAPE_OUTSIDE_BODY

/* The user namespace's root powers survive exec() only as ambient
 * capabilities when the process is not uid 0 in it; `ip` needs
 * CAP_NET_ADMIN. For root they are there anyway. */
static void
keep_net_admin_across_exec (void)
{
  struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2];

  if (getuid () == 0)
    return;
  if (syscall (SYS_capget, &header, data) < 0)
    _exit (120);
  data[0].inheritable = data[0].permitted;
  data[1].inheritable = data[1].permitted;
  if (syscall (SYS_capset, &header, data) < 0 ||
      prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_NET_ADMIN, 0, 0) < 0)
    _exit (121);
}

/* Runs `ip` with @argv (NULL-terminated, argv[0] included) and fails the
 * test unless it succeeds. Only fork, exec and wait: it also runs in the
 * server's child. */
static void
run_ip (const char *const *argv)
{
  int status = 0;
  pid_t pid = fork ();

  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    {
      keep_net_admin_across_exec ();
      execv (IP, (char *const *) argv);
      _exit (127);
    }
  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    g_error ("`%s %s %s …` failed (wait status %d)", argv[0], argv[1], argv[2], status);
}

static void
write_map (const char *file,
           const char *text)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents_full (file, text, -1, G_FILE_SET_CONTENTS_NONE, 0644, &error);
  g_assert_no_error (error);
}

/* Root takes a network namespace; anyone else a user namespace that maps
 * only themselves (so the backend still runs unprivileged) and owns a
 * network namespace. */
static void
enter_own_network (void)
{
  uid_t uid = getuid ();
  gid_t gid = getgid ();
  g_autofree char *uid_map = NULL;
  g_autofree char *gid_map = NULL;

  if (uid == 0)
    {
      g_assert_cmpint (unshare (CLONE_NEWNET), ==, 0);
      return;
    }
  if (unshare (CLONE_NEWUSER | CLONE_NEWNET) < 0)
    g_error ("could not enter a user and network namespace of the test's own: %s",
             g_strerror (errno));
  uid_map = g_strdup_printf ("%u %u 1\n", (guint) uid, (guint) uid);
  gid_map = g_strdup_printf ("%u %u 1\n", (guint) gid, (guint) gid);
  write_map ("/proc/self/setgroups", "deny\n");
  write_map ("/proc/self/uid_map", uid_map);
  write_map ("/proc/self/gid_map", gid_map);
}

static guint16
listen_anywhere (int *fd)
{
  struct sockaddr_in address = { .sin_family = AF_INET };
  socklen_t length = sizeof address;

  *fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (*fd, >=, 0);
  g_assert_cmpint (bind (*fd, (struct sockaddr *) &address, sizeof address), ==, 0);
  g_assert_cmpint (listen (*fd, 16), ==, 0);
  g_assert_cmpint (getsockname (*fd, (struct sockaddr *) &address, &length), ==, 0);
  return ntohs (address.sin_port);
}

/* Reads the request's head (it may come in pieces), answers, and reads to
 * the client's end before closing: closing with unread bytes sends a
 * reset, which can overtake the answer. */
static void
answer (int connection)
{
  char buffer[4096];
  gsize have = 0;
  struct pollfd p = { .fd = connection, .events = POLLIN };

  while (have < sizeof buffer - 1 && poll (&p, 1, 5000) == 1)
    {
      ssize_t n = read (connection, buffer + have, sizeof buffer - 1 - have);

      if (n <= 0)
        break;
      have += n;
      buffer[have] = '\0';
      if (strstr (buffer, "\r\n\r\n") != NULL)
        break;
    }
  if (write (connection, ANSWER, strlen (ANSWER)) < 0)
    return;
  shutdown (connection, SHUT_WR);
  while (poll (&p, 1, 5000) == 1 && read (connection, buffer, sizeof buffer) > 0)
    ;
}

/* The outside's process: its own namespace, its end of the veth, the
 * server. Never returns. */
static void
run_outside (int to_test,
             int from_test,
             int accepted)
{
  const char *const address[] = { IP, "address", "add", THERE_ADDRESS, "dev", "sbxo1", NULL };
  const char *const up[] = { IP, "link", "set", "sbxo1", "up", NULL };
  const char *const lo_up[] = { IP, "link", "set", "lo", "up", NULL };
  guint16 port;
  char go;
  int listener;

  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (unshare (CLONE_NEWNET) < 0)
    _exit (122);
  port = listen_anywhere (&listener);
  /* The test moves the veth's other end in here, then says go. */
  if (write (to_test, &port, sizeof port) != sizeof port || read (from_test, &go, 1) != 1)
    _exit (123);
  run_ip (lo_up);
  run_ip (address);
  run_ip (up);
  if (write (to_test, &go, 1) != 1)
    _exit (124);
  for (;;)
    {
      int connection = accept4 (listener, NULL, NULL, SOCK_CLOEXEC);

      if (connection < 0)
        continue;
      if (write (accepted, "+", 1) != 1)
        _exit (125);
      answer (connection);
      close (connection);
    }
}

/**
 * escape_outside_start:
 * @outside: (out caller-allocates): the outside, for escape_outside_stop()
 *
 * Moves this process into a network of its own and builds the outside:
 * ESCAPE_OUTSIDE_ADDRESS:@outside->port answers HTTP with
 * ESCAPE_OUTSIDE_BODY.
 */
void
escape_outside_start (EscapeOutside *outside)
{
  const char *const lo_up[] = { IP, "link", "set", "lo", "up", NULL };
  const char *const here_address[] = { IP, "address", "add", HERE_ADDRESS, "dev", "sbxo0", NULL };
  const char *const here_up[] = { IP, "link", "set", "sbxo0", "up", NULL };
  g_autofree char *server_pid = NULL;
  int to_test[2], from_test[2], accepted[2];
  char ready;

  enter_own_network ();
  run_ip (lo_up);
  g_assert_cmpint (pipe2 (to_test, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (from_test, O_CLOEXEC), ==, 0);
  g_assert_cmpint (pipe2 (accepted, O_CLOEXEC | O_NONBLOCK), ==, 0);
  outside->server = fork ();
  g_assert_cmpint (outside->server, >=, 0);
  if (outside->server == 0)
    run_outside (to_test[1], from_test[0], accepted[1]);
  close (to_test[1]);
  close (from_test[0]);
  close (accepted[1]);
  outside->accepted_fd = accepted[0];
  g_assert_cmpint (read (to_test[0], &outside->port, sizeof outside->port), ==,
                   sizeof outside->port);

  server_pid = g_strdup_printf ("%d", (int) outside->server);
  {
    const char *const veth[] = { IP, "link", "add", "sbxo0", "type", "veth", "peer", "name",
                                 "sbxo1", "netns", server_pid, NULL };

    run_ip (veth);
  }
  run_ip (here_address);
  run_ip (here_up);
  g_assert_cmpint (write (from_test[1], "g", 1), ==, 1);
  g_assert_cmpint (read (to_test[0], &ready, 1), ==, 1);
  close (to_test[0]);
  close (from_test[1]);
}

/**
 * escape_outside_stop:
 * @outside: a started outside
 *
 * Ends the outside's server.
 *
 * Returns: how many connections it served
 */
guint
escape_outside_stop (EscapeOutside *outside)
{
  guint served = 0;
  char byte;
  int status;

  g_assert_cmpint (kill (outside->server, SIGKILL), ==, 0);
  g_assert_cmpint (waitpid (outside->server, &status, 0), ==, outside->server);
  while (read (outside->accepted_fd, &byte, 1) == 1)
    served++;
  close (outside->accepted_fd);
  return served;
}
