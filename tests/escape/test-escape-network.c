/* test-escape-network.c — an allow-all guest reaches out, not the host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Users read "allow-all" as internet egress, not host IPC. An allow-all
 * guest that shared the host's network namespace reached every service
 * bound to the host's loopback (a database, a development server, a cloud
 * metadata proxy) and every abstract UNIX socket of the host. Here a host
 * listener on loopback must see no connection from the guest, whichever
 * address the guest tries (its own 127.0.0.1, slirp4netns's gateway
 * 10.0.2.2), while `curl` to a server outside still works (an "outside"
 * the test builds: a network namespace of its own behind a veth pair, see
 * escape-outside.c); and the backend's host-loopback opens the gateway on purpose.
 * Each is run twice in one session: the first command starts cold, the
 * second takes the ready sandbox started ahead of it.
 *
 * To see it fail: make add_own_network() (drivers/bubblewrap/
 * sandbox-bubblewrap-args.c) add `--share-net` instead; the loopback test
 * then connects.
 */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib.h>
#include <sandbox.h>

#include "escape-common.h"
#include "escape-outside.h"

#define ANSWER "HTTP/1.0 200 OK\r\nContent-Length: 14\r\nConnection: close\r\n\r\nfrom the host\n"

/* A TCP listener of the host's that answers every connection with ANSWER
 * and counts them. */
typedef struct
{
  int fd;
  guint16 port;
  char *address;
  GThread *thread;
  gint accepted;
  gint stopping;
} HostListener;

/* Reads the request's head (through slirp it may come in pieces), answers,
 * and reads to the client's end before closing: closing with unread bytes
 * sends a reset, which can overtake the answer on its way to the guest
 * (curl then fails with "connection reset", now and then). */
static void
answer_whole_request (int    client,
                      char  *buffer,
                      gsize  size)
{
  struct timeval timeout = { .tv_sec = 10 };
  gsize got = 0;
  ssize_t n;

  setsockopt (client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  while (got + 1 < size && (n = read (client, buffer + got, size - 1 - got)) > 0)
    {
      got += (gsize) n;
      buffer[got] = '\0';
      if (strstr (buffer, "\r\n\r\n") != NULL)
        break;
    }
  if (write (client, ANSWER, strlen (ANSWER)) < 0)
    g_debug ("answer: %s", g_strerror (errno));
  shutdown (client, SHUT_WR);
  while (read (client, buffer, size) > 0)
    ;
}

static gpointer
serve (gpointer data)
{
  HostListener *l = data;

  for (;;)
    {
      int client = accept4 (l->fd, NULL, NULL, SOCK_CLOEXEC);
      char buffer[1024];

      if (client < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if (g_atomic_int_get (&l->stopping))
        {
          close (client);
          break;
        }
      g_atomic_int_inc (&l->accepted);
      answer_whole_request (client, buffer, sizeof buffer);
      close (client);
    }
  return NULL;
}

static void
host_listener_start (HostListener *l,
                     const char   *address)
{
  struct sockaddr_in sin = { .sin_family = AF_INET };
  socklen_t length = sizeof sin;

  g_assert_cmpint (inet_pton (AF_INET, address, &sin.sin_addr), ==, 1);
  l->fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (l->fd, >=, 0);
  g_assert_cmpint (bind (l->fd, (struct sockaddr *) &sin, sizeof sin), ==, 0);
  g_assert_cmpint (listen (l->fd, 16), ==, 0);
  g_assert_cmpint (getsockname (l->fd, (struct sockaddr *) &sin, &length), ==, 0);
  l->port = ntohs (sin.sin_port);
  l->address = g_strdup (address);
  l->thread = g_thread_new ("host-listener", serve, l);
}

static void
host_listener_stop (HostListener *l)
{
  struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons (l->port) };
  int waker = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  /* accept() returns for this connection, and the thread sees stopping. */
  g_atomic_int_set (&l->stopping, 1);
  inet_pton (AF_INET, l->address, &sin.sin_addr);
  g_assert_cmpint (connect (waker, (struct sockaddr *) &sin, sizeof sin), ==, 0);
  g_thread_join (l->thread);
  close (waker);
  close (l->fd);
  g_free (l->address);
}

static void
allow_all (EscapeSession *s)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_allow_all ();
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_set_network_policy (s->session, policy, NULL, &error));
  g_assert_no_error (error);
}

/* curl's exit status fetching http://@address:@port/, its body in @out. */
static int
guest_curl (EscapeSession *s,
            const char    *address,
            guint16        port,
            char         **out)
{
  g_autofree char *script = g_strdup_printf ("exec curl -sS --max-time 10 http://%s:%u/",
                                             address, (guint) port);
  g_autofree char *err = NULL;

  return escape_sh_status (s->session, script, out, &err);
}

/* curl's status for a host address the guest must not reach: 7 is
 * "could not connect". */
static void
assert_unreachable (EscapeSession *s,
                    const char    *address,
                    HostListener  *l)
{
  g_autofree char *out = NULL;
  int status = guest_curl (s, address, l->port, &out);

  if (status == 0)
    g_error ("the guest reached the host's loopback through %s:%u: %s", address,
             (guint) l->port, out);
  g_assert_cmpint (status, ==, 7);
}

static void
test_no_host_loopback (void)
{
  EscapeSession s = { 0 };
  HostListener l = { 0 };

  host_listener_start (&l, "127.0.0.1");
  escape_session_open (&s, NULL);
  allow_all (&s);
  for (int round = 0; round < 2; round++)
    {
      assert_unreachable (&s, "127.0.0.1", &l);
      assert_unreachable (&s, "10.0.2.2", &l);
    }
  g_assert_cmpint (g_atomic_int_get (&l.accepted), ==, 0);
  escape_session_close (&s);
  host_listener_stop (&l);
}

/* In a subprocess: the outside moves the process into networks of its own,
 * which the rest of the tests must not see. */
static void
test_outside_reachable (void)
{
  EscapeOutside outside = { 0 };
  EscapeSession s = { 0 };

  if (!g_test_subprocess ())
    {
      g_test_trap_subprocess (NULL, 120 * G_USEC_PER_SEC,
                              G_TEST_SUBPROCESS_INHERIT_STDOUT |
                              G_TEST_SUBPROCESS_INHERIT_STDERR);
      g_test_trap_assert_passed ();
      return;
    }
  escape_outside_start (&outside);
  escape_session_open (&s, NULL);
  allow_all (&s);
  for (int round = 0; round < 2; round++)
    {
      g_autofree char *out = NULL;

      g_assert_cmpint (guest_curl (&s, ESCAPE_OUTSIDE_ADDRESS, outside.port, &out), ==, 0);
      g_assert_cmpstr (out, ==, ESCAPE_OUTSIDE_BODY);
    }
  escape_session_close (&s);
  g_assert_cmpuint (escape_outside_stop (&outside), ==, 2);
}

/* The guest's resolver is slirp4netns's, not the host's file (which may
 * name a resolver on the host's loopback the guest cannot reach). */
static void
test_resolver (void)
{
  EscapeSession s = { 0 };
  g_autofree char *out = NULL;

  escape_session_open (&s, NULL);
  allow_all (&s);
  out = escape_sh (s.session, "cat /etc/resolv.conf");
  g_assert_nonnull (strstr (out, "nameserver 10.0.2.3\n"));
  escape_session_close (&s);
}

static void
test_host_loopback_opt_in (void)
{
  EscapeSession s = { 0 };
  HostListener l = { 0 };
  gboolean host_loopback = FALSE;

  host_listener_start (&l, "127.0.0.1");
  escape_session_open (&s, "host-loopback", "true", NULL);
  g_object_get (s.backend, "host-loopback", &host_loopback, NULL);
  g_assert_true (host_loopback);
  allow_all (&s);
  for (int round = 0; round < 2; round++)
    {
      g_autofree char *out = NULL;

      g_assert_cmpint (guest_curl (&s, "10.0.2.2", l.port, &out), ==, 0);
      g_assert_cmpstr (out, ==, "from the host\n");
    }
  /* The guest's own loopback is still its own. */
  assert_unreachable (&s, "127.0.0.1", &l);
  g_assert_cmpint (g_atomic_int_get (&l.accepted), ==, 2);
  escape_session_close (&s);
  host_listener_stop (&l);
}

/* Every allow-all sandbox's slirp4netns ends with it. */
static void
test_no_slirp_left (void)
{
  EscapeSession s = { 0 };
  g_autofree char *needle = NULL;

  escape_session_open (&s, NULL);
  allow_all (&s);
  g_free (escape_sh (s.session, "true"));
  g_free (escape_sh (s.session, "true"));
  /* Its state directory is in no argument of slirp4netns: count them all,
   * before and after, since this suite runs alone (is_parallel: false). */
  escape_session_close (&s);
  escape_wait_until_no_process_with ("slirp4netns");
  g_assert_cmpuint (escape_count_processes_with_arg ("slirp4netns"), ==, 0);
}

/* Host crashes ------------------------------------------------------------ */

#define CRASH_TRIALS 12
#define KILL_WINDOW_US (60 * 1000)
#define ORPHANS_GRACE_MS 5000

/* Helper mode: an allow-all session on @state_directory that starts a
 * long command, and a thread that SIGKILLs this process @kill_after µs
 * after the spawn begins: before, while or after bwrap and slirp4netns
 * start. */
static int
helper_crash (const char *state_directory,
              const char *kill_after)
{
  g_autoptr(SandboxBackend) backend = escape_backend_new (state_directory, NULL);
  g_autofree char *key = escape_prewarm (backend);
  g_autoptr(SandboxHandle) handle = escape_create (backend, key);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_allow_all ();
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sleep");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_session_set_network_policy (sandbox_handle_get_session (handle), policy,
                                                     NULL, &error));
  g_assert_no_error (error);
  sandbox_command_add_arg (command, "1000");
  escape_kill_self_after (kill_after);
  process = sandbox_session_spawn (sandbox_handle_get_session (handle), command, NULL, &error);
  g_assert_no_error (error);
  for (;;)
    g_main_context_iteration (NULL, TRUE);
  return 1;
}

/* The names of this process's children, for a failure message. */
static char *
describe_children (void)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  GString *names = g_string_new (NULL);
  const char *name;

  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = g_strdup_printf ("/proc/%s/stat", name);
      g_autofree char *stat = NULL;
      const char *close_paren;
      int ppid = 0;

      if (!g_ascii_isdigit (name[0]) || !g_file_get_contents (path, &stat, NULL, NULL))
        continue;
      close_paren = strrchr (stat, ')');
      if (close_paren != NULL && sscanf (close_paren + 2, "%*c %d", &ppid) == 1 &&
          ppid == getpid ())
        g_string_append_printf (names, " %s", stat);
    }
  return g_string_free (names, FALSE);
}

/* Waits for every child of this process to exit, reaping them; FALSE if
 * one is left after the grace time. */
static gboolean
reap_all_children (void)
{
  gint64 deadline = g_get_monotonic_time () + ORPHANS_GRACE_MS * 1000;

  while (g_get_monotonic_time () < deadline)
    {
      pid_t pid = waitpid (-1, NULL, WNOHANG);

      if (pid < 0 && errno == ECHILD)
        return TRUE;
      if (pid == 0)
        g_usleep (10 * 1000);
    }
  return FALSE;
}

/* A host killed at any moment of an allow-all command leaves nothing: its
 * slirp4netns ends with it (its exit descriptor closes), as bwrap and the
 * guest do. This process is the subreaper of its helpers, so whatever
 * outlives one is reparented here and found. Drop --exit-fd from
 * spawn_slirp() (drivers/bubblewrap/sandbox-bubblewrap-network.c) to see
 * slirp4netns left. */
static void
test_host_crash_leaves_no_slirp (void)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *directory = escape_state_directory_new ();

  g_assert_cmpint (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), ==, 0);
  for (guint trial = 0; trial < CRASH_TRIALS; trial++)
    {
      g_autofree char *kill_after = g_strdup_printf ("%u", g_random_int_range (0, KILL_WINDOW_US));
      const char *argv[] = { self, "--helper-crash", directory, kill_after, NULL };
      g_autoptr(GError) error = NULL;
      int status = 0;
      GPid pid = 0;

      g_spawn_async (NULL, (char **) argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
                     &error);
      g_assert_no_error (error);
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      if (!WIFSIGNALED (status) || WTERMSIG (status) != SIGKILL)
        g_error ("trial %u: the host helper was not killed (wait status %d)", trial, status);
      if (!reap_all_children ())
        {
          g_autofree char *left = describe_children ();

          g_error ("trial %u (kill after %s us): the killed host left%s", trial, kill_after, left);
        }
    }
  g_assert_cmpint (prctl (PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), ==, 0);
  escape_state_directory_remove (directory);
}

int
main (int    argc,
      char **argv)
{
  if (argc == 4 && g_str_equal (argv[1], "--helper-crash"))
    return helper_crash (argv[2], argv[3]);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sandbox/escape/network/no-host-loopback", test_no_host_loopback);
  g_test_add_func ("/sandbox/escape/network/outside-reachable", test_outside_reachable);
  g_test_add_func ("/sandbox/escape/network/resolver", test_resolver);
  g_test_add_func ("/sandbox/escape/network/host-loopback-opt-in", test_host_loopback_opt_in);
  g_test_add_func ("/sandbox/escape/network/no-slirp-left", test_no_slirp_left);
  g_test_add_func ("/sandbox/escape/network/host-crash-leaves-no-slirp",
                   test_host_crash_leaves_no_slirp);
  return g_test_run ();
}
