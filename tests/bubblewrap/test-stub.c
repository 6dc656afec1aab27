/* test-stub.c — the trusted stub (drivers/bubblewrap/stub/) against hostile input
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The parser on its own (every malformation refused), then the stub as bwrap
 * runs it, given malformed messages and arguments (it exits 1 and never runs
 * the command), capabilities bwrap left it (none reach the guest), and a
 * guest that goes for it through /proc/1 (unreachable). A guest that could
 * not be executed is reported to the host as data (StubReport), never as
 * text a guest could print. Run as root and, through run-unprivileged.sh,
 * as an unprivileged user.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gio.h>

#include "stub/sandbox-stub-message.h"

static char *strings[STUB_MESSAGE_MAX_STRINGS + 2];

/* A message as the driver writes it (sandbox-bubblewrap-stub.c), with a
 * header that may lie: @argc, @envc and @length as given (G_MAXUINT32:
 * the true value). */
static GByteArray *
message_build (const char * const *parts,
               guint32             argc,
               guint32             envc,
               guint32             length)
{
  GByteArray *message = g_byte_array_new ();
  guint32 header[5] = { STUB_MESSAGE_MAGIC, STUB_MESSAGE_VERSION, argc, envc, 0 };
  guint n = 0;

  g_byte_array_append (message, (const guint8 *) header, sizeof header);
  for (; parts[n] != NULL; n++)
    g_byte_array_append (message, (const guint8 *) parts[n], strlen (parts[n]) + 1);
  header[4] = length != G_MAXUINT32 ? length : message->len - sizeof header;
  memcpy (message->data, header, sizeof header);
  return message;
}

static int
parse (GByteArray  *message,
       StubMessage *parsed)
{
  return stub_message_parse ((char *) message->data, message->len, strings, parsed);
}

static void
test_parser_accepts_a_command (void)
{
  const char *parts[] = { "/workspace", "/usr/bin/env", "-0", "PATH=/usr/bin", "A=", NULL };
  g_autoptr(GByteArray) message = message_build (parts, 2, 2, G_MAXUINT32);
  StubMessage parsed;

  g_assert_cmpint (parse (message, &parsed), ==, 0);
  g_assert_cmpstr (parsed.cwd, ==, "/workspace");
  g_assert_cmpstr (parsed.argv[0], ==, "/usr/bin/env");
  g_assert_cmpstr (parsed.argv[1], ==, "-0");
  g_assert_null (parsed.argv[2]);
  g_assert_cmpstr (parsed.envp[0], ==, "PATH=/usr/bin");
  g_assert_cmpstr (parsed.envp[1], ==, "A=");
  g_assert_null (parsed.envp[2]);
}

/* Each a message the driver never writes: the parser refuses all of them. */
static void
test_parser_refuses_malformed (void)
{
  const char *ok[] = { "/workspace", "true", "A=b", NULL };
  const char *relative_cwd[] = { "workspace", "true", NULL };
  const char *empty_argv0[] = { "/workspace", "", NULL };
  const char *no_equals[] = { "/workspace", "true", "AB", NULL };
  const char *empty_key[] = { "/workspace", "true", "=b", NULL };
  struct {
    const char * const *parts;
    guint32 argc, envc, length;
    const char *why;
  } cases[] = {
    { ok, 1, 0, G_MAXUINT32, "a string more than the header says" },
    { ok, 1, 2, G_MAXUINT32, "a string fewer than the header says" },
    { ok, 0, 1, G_MAXUINT32, "argc 0" },
    { ok, G_MAXUINT32 - 1, 2, G_MAXUINT32, "counts that overflow" },
    { ok, 1, 1, 3, "a length shorter than the payload" },
    { ok, 1, 1, 100, "a length longer than the payload" },
    { relative_cwd, 1, 0, G_MAXUINT32, "a relative cwd" },
    { empty_argv0, 1, 0, G_MAXUINT32, "an empty executable" },
    { no_equals, 1, 1, G_MAXUINT32, "an environment entry without =" },
    { empty_key, 1, 1, G_MAXUINT32, "an environment entry with an empty key" },
  };
  StubMessage parsed;

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GByteArray) message = message_build (cases[i].parts, cases[i].argc,
                                                     cases[i].envc, cases[i].length);

      g_test_message ("%s", cases[i].why);
      g_assert_cmpint (parse (message, &parsed), ==, -1);
    }

  /* Byte-level damage to a good message. */
  {
    g_autoptr(GByteArray) message = message_build (ok, 1, 1, G_MAXUINT32);

    for (guint cut = 0; cut < message->len; cut++)
      g_assert_cmpint (stub_message_parse ((char *) message->data, cut, strings, &parsed), ==, -1);
    message->data[message->len - 1] = 'x';   /* no final NUL */
    g_assert_cmpint (parse (message, &parsed), ==, -1);
    message->data[message->len - 1] = '\0';
    message->data[0] ^= 1;                    /* the magic */
    g_assert_cmpint (parse (message, &parsed), ==, -1);
    message->data[0] ^= 1;
    message->data[4] = 2;                     /* the version */
    g_assert_cmpint (parse (message, &parsed), ==, -1);
  }
}

/* The stub under bwrap -------------------------------------------------- */

typedef struct
{
  char *workspace;
  int status;
  char *out;
  char *err;
  gboolean reported;   /* with a report descriptor: whether a report came */
  StubReport report;
  int handoff;         /* our end of the stub's handoff socket, fd 6 in bwrap */
} Run;

static void
run_clear (Run *run)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", run->workspace);

  g_assert_cmpint (system (command), ==, 0);
  g_free (run->workspace);
  g_free (run->out);
  g_free (run->err);
  close (run->handoff);
}

static int
memfd_with (const void *data,
            gsize       size)
{
  int fd = memfd_create ("test-stub", MFD_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, data, size), ==, (gssize) size);
  g_assert_cmpint (lseek (fd, 0, SEEK_SET), ==, 0);
  return fd;
}

/* Runs bwrap (the reference's isolation, a workspace of its own) with the
 * stub as pid 1, @message on its control fd 3, @stub_args after the
 * stub's path (NULL: "control=3 lock=/workspace") and @bwrap_extra before
 * `--`. A pipe's write end is fd 5, for a "report=5" among @stub_args;
 * what comes out of it is @run's report. A SOCK_SEQPACKET socket is fd 6,
 * for a "handoff=6": @run->handoff is its other end. */
static void
run_stub (Run                *run,
          GByteArray         *message,
          const char * const *stub_args,
          const char * const *bwrap_extra)
{
  int report_pipe[2];
  int handoff[2];
  const char *stub = g_getenv ("SANDBOX_BUBBLEWRAP_STUB");
  const char *default_args[] = { "control=3", "lock=/workspace", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  int stub_fd;

  g_assert_nonnull (stub);
  run->workspace = g_dir_make_tmp ("sandbox-stub-XXXXXX", &error);
  g_assert_no_error (error);
  stub_fd = open (stub, O_PATH | O_CLOEXEC);
  g_assert_cmpint (stub_fd, >=, 0);

  g_ptr_array_add (argv, (gpointer) "bwrap");
  for (const char * const *a = (const char *[]) {
         "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session",
         "--cap-drop", "ALL", "--ro-bind", "/usr", "/usr", "--ro-bind", "/lib", "/lib",
         "--ro-bind", "/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
         "--symlink", "usr/sbin", "/sbin", "--proc", "/proc", "--dev", "/dev",
         "--tmpfs", "/tmp", "--clearenv", NULL }; *a != NULL; a++)
    g_ptr_array_add (argv, (gpointer) *a);
  g_ptr_array_add (argv, (gpointer) "--bind");
  g_ptr_array_add (argv, run->workspace);
  g_ptr_array_add (argv, (gpointer) "/workspace");
  for (guint i = 0; bwrap_extra != NULL && bwrap_extra[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) bwrap_extra[i]);
  g_ptr_array_add (argv, (gpointer) "--as-pid-1");
  g_ptr_array_add (argv, (gpointer) "--");
  g_ptr_array_add (argv, (gpointer) "/proc/self/fd/4");
  for (const char * const *a = stub_args != NULL ? stub_args : default_args; *a != NULL; a++)
    g_ptr_array_add (argv, (gpointer) *a);
  g_ptr_array_add (argv, NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_take_fd (launcher, memfd_with (message->data, message->len), 3);
  g_subprocess_launcher_take_fd (launcher, stub_fd, 4);
  g_assert_cmpint (pipe2 (report_pipe, O_CLOEXEC), ==, 0);
  g_subprocess_launcher_take_fd (launcher, report_pipe[1], 5);
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, handoff), ==, 0);
  g_subprocess_launcher_take_fd (launcher, handoff[1], 6);
  run->handoff = handoff[0];
  process = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_clear_object (&launcher);   /* closes our copy of the write end */
  g_subprocess_communicate_utf8 (process, NULL, NULL, &run->out, &run->err, &error);
  g_assert_no_error (error);
  run->status = g_subprocess_get_exit_status (process);
  run->reported = read (report_pipe[0], &run->report, sizeof run->report) == sizeof run->report;
  close (report_pipe[0]);
}

/* A command that leaves a mark in the workspace, so that a run is seen. */
static GByteArray *
marking_message (guint32 envc_delta)
{
  const char *parts[] = { "/workspace", "/usr/bin/sh", "-c", "echo ran > /workspace/ran; "
                          "grep -E '^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs|Seccomp):' /proc/self/status",
                          "PATH=/usr/bin:/bin", NULL };

  return message_build (parts, 3, 1 + envc_delta, G_MAXUINT32);
}

static gboolean
ran (Run *run)
{
  g_autofree char *mark = g_build_filename (run->workspace, "ran", NULL);

  return g_file_test (mark, G_FILE_TEST_EXISTS);
}

static void
test_stub_runs_a_command (void)
{
  g_autoptr(GByteArray) message = marking_message (0);
  Run run = { 0 };

  run_stub (&run, message, NULL, NULL);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_true (ran (&run));
  g_assert_nonnull (strstr (run.out, "Seccomp:\t0"));   /* no filter given, none set */
  run_clear (&run);
}

/* Malformed: the stub exits 1 and runs nothing. Make receive_message() in
 * stub/sandbox-stub.c go on after a failed parse to see the mark appear. */
static void
test_stub_refuses_malformed_message (void)
{
  g_autoptr(GByteArray) miscounted = marking_message (1);
  g_autoptr(GByteArray) truncated = marking_message (0);
  GByteArray *messages[] = { miscounted, truncated };

  g_byte_array_set_size (truncated, truncated->len - 5);
  for (gsize i = 0; i < G_N_ELEMENTS (messages); i++)
    {
      Run run = { 0 };

      run_stub (&run, messages[i], NULL, NULL);
      g_assert_cmpint (run.status, ==, 1);
      g_assert_false (ran (&run));
      g_assert_nonnull (strstr (run.err, "sandbox-stub: read the command"));
      run_clear (&run);
    }
}

/* Arguments the driver never passes: refused before anything else. */
static void
test_stub_refuses_malformed_arguments (void)
{
  g_autoptr(GByteArray) message = marking_message (0);
  const char *unknown[] = { "control=3", "evil=1", NULL };
  const char *twice[] = { "control=3", "control=3", NULL };
  const char *bad_fd[] = { "control=3x", NULL };
  const char *low_fd[] = { "control=0", NULL };
  const char *no_control[] = { "lock=/workspace", NULL };
  const char *bare[] = { "control", NULL };
  const char * const *cases[] = { unknown, twice, bad_fd, low_fd, no_control, bare };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run run = { 0 };

      run_stub (&run, message, cases[i], NULL);
      g_assert_cmpint (run.status, ==, 1);
      g_assert_false (ran (&run));
      run_clear (&run);
    }
}

/* The proxy step needs its handoff socket and a port; without either the
 * stub refuses to run the command. */
static void
test_stub_refuses_proxy_without_handoff (void)
{
  g_autoptr(GByteArray) message = marking_message (0);
  const char *no_handoff[] = { "control=3", "proxy=3128", NULL };
  const char *no_port[] = { "control=3", "handoff=6", "proxy=0", NULL };
  const char *bad_port[] = { "control=3", "handoff=6", "proxy=65536", NULL };
  const char * const *cases[] = { no_handoff, no_port, bad_port };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run run = { 0 };

      run_stub (&run, message, cases[i], NULL);
      g_assert_cmpint (run.status, ==, 1);
      g_assert_false (ran (&run));
      g_assert_nonnull (strstr (run.err, "sandbox-stub: proxy"));
      run_clear (&run);
    }
}

/* The next handoff on @channel: one datagram, a StubHandoff of @kind with
 * exactly one descriptor attached, which is returned. */
static int
receive_handoff (int      channel,
                 guint32  kind)
{
  StubHandoff handoff = { 0 };
  struct iovec part = { &handoff, sizeof handoff + 1 };
  union
  {
    char buffer[CMSG_SPACE (2 * sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr received = {
    .msg_iov = &part, .msg_iovlen = 1,
    .msg_control = control.buffer, .msg_controllen = sizeof control.buffer,
  };
  struct cmsghdr *header;
  int fd;

  g_assert_cmpint (recvmsg (channel, &received, MSG_DONTWAIT | MSG_CMSG_CLOEXEC), ==,
                   sizeof handoff);
  g_assert_cmphex (handoff.magic, ==, STUB_HANDOFF_MAGIC);
  g_assert_cmpuint (handoff.kind, ==, kind);
  header = CMSG_FIRSTHDR (&received);
  g_assert_nonnull (header);
  g_assert_cmpint (header->cmsg_type, ==, SCM_RIGHTS);
  g_assert_cmpuint (header->cmsg_len, ==, CMSG_LEN (sizeof (int)));
  memcpy (&fd, CMSG_DATA (header), sizeof fd);
  g_assert_null (CMSG_NXTHDR (&received, header));
  return fd;
}

/* Once the guest is spawned, the stub hands over a pidfd of it, and
 * nothing after. */
static void
assert_guest_handed_last (Run *run)
{
  StubHandoff handoff;
  int pidfd = receive_handoff (run->handoff, STUB_HANDOFF_GUEST);
  char path[64];
  g_autofree char *target = NULL;

  g_snprintf (path, sizeof path, "/proc/self/fd/%d", pidfd);
  target = g_file_read_link (path, NULL);
  g_assert_cmpstr (target, ==, "anon_inode:[pidfd]");
  close (pidfd);
  g_assert_cmpint (recv (run->handoff, &handoff, sizeof handoff, MSG_DONTWAIT), <=, 0);
}

/* The proxy's listener, bound on 127.0.0.1:PORT inside the sandbox (in a
 * namespace of its own: bwrap's --unshare-net brought its loopback up). */
static void
test_stub_hands_over_proxy_listener (void)
{
  g_autoptr(GByteArray) message = marking_message (0);
  const char *args[] = { "control=3", "handoff=6", "proxy=3128", NULL };
  Run run = { 0 };
  struct sockaddr_in address;
  socklen_t length = sizeof address;
  int listening = 0;
  socklen_t option_length = sizeof listening;
  int fd;

  run_stub (&run, message, args, NULL);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_true (ran (&run));
  fd = receive_handoff (run.handoff, STUB_HANDOFF_PROXY_LISTENER);
  g_assert_cmpint (getsockname (fd, (struct sockaddr *) &address, &length), ==, 0);
  g_assert_cmpint (address.sin_family, ==, AF_INET);
  g_assert_cmphex (ntohl (address.sin_addr.s_addr), ==, INADDR_LOOPBACK);
  g_assert_cmpuint (ntohs (address.sin_port), ==, 3128);
  g_assert_cmpint (getsockopt (fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &option_length), ==, 0);
  g_assert_true (listening);
  close (fd);
  assert_guest_handed_last (&run);
  run_clear (&run);
}

/* A terminal: the master of a pseudo-terminal of the asked size, handed
 * over before the guest runs; the guest's descriptors 0, 1 and 2 are its
 * other side, and the guest leads a session of its own on it. */
static void
test_stub_hands_over_terminal (void)
{
  const char *parts[] = { "/", "/bin/sh", "-c",
                          "[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && "
                          "[ \"$(ps -o sid= -p $$ | tr -d ' ')\" = \"$$\" ] && "
                          "stty size >&2; echo ran > /proc/self/fd/1", NULL };
  g_autoptr(GByteArray) message = message_build (parts, 3, 0, G_MAXUINT32);
  const char *args[] = { "control=3", "handoff=6", "terminal=33x101", NULL };
  Run run = { 0 };
  struct winsize size = { 0 };
  char shown[256] = { 0 };
  gssize n;
  int master;

  run_stub (&run, message, args, NULL);
  g_assert_cmpint (run.status, ==, 0);
  master = receive_handoff (run.handoff, STUB_HANDOFF_TERMINAL);
  g_assert_cmpint (ioctl (master, TIOCGWINSZ, &size), ==, 0);
  g_assert_cmpuint (size.ws_row, ==, 33);
  g_assert_cmpuint (size.ws_col, ==, 101);
  n = read (master, shown, sizeof shown - 1);
  g_assert_cmpint (n, >, 0);
  g_assert_cmpstr (shown, ==, "33 101\r\nran\r\n");
  /* Nothing holds the other side now: the guest and the stub are gone. */
  g_assert_cmpint (read (master, shown, sizeof shown), ==, -1);
  g_assert_cmpint (errno, ==, EIO);
  close (master);
  assert_guest_handed_last (&run);
  run_clear (&run);
}

/* The terminal step needs its handoff socket and a size it can take. */
static void
test_stub_refuses_malformed_terminal (void)
{
  g_autoptr(GByteArray) message = marking_message (0);
  const char *values[] = { "terminal=0x80", "terminal=24x0", "terminal=24x", "terminal=x80",
                           "terminal=24x80x1", "terminal=65536x80", "terminal=24x99999999999",
                           "terminal=-1x80", "terminal=24 x80", "terminal=" };

  for (gsize i = 0; i <= G_N_ELEMENTS (values); i++)
    {
      const char *with_handoff[] = { "control=3", "handoff=6",
                                     i < G_N_ELEMENTS (values) ? values[i] : "terminal=24x80",
                                     NULL };
      const char *without[] = { "control=3", "terminal=24x80", NULL };
      Run run = { 0 };

      run_stub (&run, message, i < G_N_ELEMENTS (values) ? with_handoff : without, NULL);
      g_assert_cmpint (run.status, ==, 1);
      g_assert_false (ran (&run));
      g_assert_nonnull (strstr (run.err, "sandbox-stub: terminal"));
      run_clear (&run);
    }
}

/* A filter the stub cannot read whole is refused. */
static void
test_stub_refuses_malformed_filter (void)
{
  g_autoptr(GByteArray) message = marking_message (0);
  const char *args[] = { "control=3", "seccomp=5", NULL };
  Run run = { 0 };

  /* fd 5 is not open: the filter cannot be read, nothing runs. */
  run_stub (&run, message, args, NULL);
  g_assert_cmpint (run.status, ==, 1);
  g_assert_false (ran (&run));
  g_assert_nonnull (strstr (run.err, "sandbox-stub: read the seccomp filter"));
  run_clear (&run);
}

/* Whatever bwrap leaves the stub (overlay's mount step gets CAP_SYS_ADMIN,
 * with CAP_SETPCAP to empty the bounding set), the guest has no
 * capability and cannot gain one: comment out drop_capabilities() in
 * stub/sandbox-stub.c to see CapEff, CapPrm and CapBnd non-zero here.
 * Given a capability without CAP_SETPCAP, the stub refuses to go on. */
static void
test_stub_drops_capabilities (void)
{
  g_autoptr(GByteArray) message = marking_message (0);
  const char *bwrap_extra[] = { "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP", NULL };
  const char *no_setpcap[] = { "--cap-add", "CAP_SYS_ADMIN", NULL };
  Run run = { 0 };

  run_stub (&run, message, NULL, bwrap_extra);
  g_test_message ("%s%s", run.out, run.err);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_true (ran (&run));
  for (const char * const *set = (const char *[]) { "CapInh", "CapPrm", "CapEff", "CapBnd",
                                                    "CapAmb", NULL }; *set != NULL; set++)
    {
      g_autofree char *line = g_strdup_printf ("%s:\t0000000000000000\n", *set);

      g_assert_nonnull (strstr (run.out, line));
    }
  g_assert_nonnull (strstr (run.out, "NoNewPrivs:\t1\n"));
  run_clear (&run);

  memset (&run, 0, sizeof run);
  run_stub (&run, message, NULL, no_setpcap);
  g_assert_cmpint (run.status, ==, 1);
  g_assert_false (ran (&run));
  g_assert_nonnull (strstr (run.err, "sandbox-stub: drop bounding capabilities"));
  run_clear (&run);
}

/* The guest cannot reach its pid 1 (the stub, which holds the control fd
 * and the workspace lock) through /proc/1/mem: the stub is non-dumpable.
 * Remove the PR_SET_DUMPABLE call in stub/sandbox-stub.c to see the guest
 * open it (same uid, no Yama on Debian). */
static void
test_stub_unreachable_from_guest (void)
{
  const char *parts[] = { "/workspace", "/usr/bin/sh", "-c",
                          "if (exec 3</proc/1/mem) 2>/dev/null; then echo opened; else echo refused; fi; "
                          "cat /proc/1/environ >/dev/null 2>&1 && echo environ || echo no-environ",
                          NULL };
  g_autoptr(GByteArray) message = message_build (parts, 3, 0, G_MAXUINT32);
  Run run = { 0 };

  run_stub (&run, message, NULL, NULL);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpstr (run.out, ==, "refused\nno-environ\n");
  run_clear (&run);
}

/* The guest is not pid 1, and gets exactly 0, 1 and 2. */
static void
test_stub_guest_is_child_with_stdio_only (void)
{
  const char *parts[] = { "/workspace", "/usr/bin/sh", "-c",
                          "echo $$; ls /proc/self/fd | sort -n | tr '\\n' ' '", NULL };
  g_autoptr(GByteArray) message = message_build (parts, 3, 0, G_MAXUINT32);
  Run run = { 0 };

  run_stub (&run, message, NULL, NULL);
  g_assert_cmpint (run.status, ==, 0);
  /* ls itself opens one directory fd, 3. */
  g_assert_cmpstr (run.out, ==, "2\n0 1 2 3 ");
  run_clear (&run);
}

/* The guest's exit status is the sandbox's; a signal is 128 + its number. */
static void
test_stub_exit_status (void)
{
  const char *exits[] = { "/workspace", "/usr/bin/sh", "-c", "exit 7", NULL };
  const char *killed[] = { "/workspace", "/usr/bin/sh", "-c", "kill -9 $$", NULL };
  const char *missing[] = { "/workspace", "/nonexistent", NULL };
  g_autoptr(GByteArray) m1 = message_build (exits, 3, 0, G_MAXUINT32);
  g_autoptr(GByteArray) m2 = message_build (killed, 3, 0, G_MAXUINT32);
  g_autoptr(GByteArray) m3 = message_build (missing, 1, 0, G_MAXUINT32);
  Run run = { 0 };

  run_stub (&run, m1, NULL, NULL);
  g_assert_cmpint (run.status, ==, 7);
  run_clear (&run);
  memset (&run, 0, sizeof run);
  run_stub (&run, m2, NULL, NULL);
  g_assert_cmpint (run.status, ==, 128 + 9);
  run_clear (&run);
  memset (&run, 0, sizeof run);
  run_stub (&run, m3, NULL, NULL);
  g_assert_cmpint (run.status, ==, 127);
  run_clear (&run);
}

static const char * const reporting[] = { "control=3", "lock=/workspace", "report=5", NULL };

/* Runs @argv (cwd /workspace, PATH /usr/bin) under a reporting stub. */
static void
run_reporting (Run                *run,
               const char * const *argv)
{
  g_autoptr(GPtrArray) parts = g_ptr_array_new ();
  g_autoptr(GByteArray) message = NULL;
  guint32 argc = 0;

  g_ptr_array_add (parts, (gpointer) "/workspace");
  for (; argv[argc] != NULL; argc++)
    g_ptr_array_add (parts, (gpointer) argv[argc]);
  g_ptr_array_add (parts, (gpointer) "PATH=/usr/bin");
  g_ptr_array_add (parts, NULL);
  message = message_build ((const char * const *) parts->pdata, argc, 1, G_MAXUINT32);
  run_stub (run, message, reporting, NULL);
}

/* An executable that cannot be executed is execvp()'s errno in the report,
 * with a shell's status and nothing on the guest's stderr that a guest
 * could have written: not there (ENOENT, 127), no execute bit or a
 * directory (EACCES, 126). */
static void
test_stub_reports_exec_failure (void)
{
  struct {
    const char *executable;
    int exec_errno;
    int status;
  } cases[] = {
    { "/nonexistent", ENOENT, 127 },
    { "no-such-tool", ENOENT, 127 },            /* searched in the message's PATH */
    { "/usr/lib/os-release/x", ENOTDIR, 127 },
    { "/usr/lib/os-release", EACCES, 126 },      /* a file without its execute bit */
    { "/usr", EACCES, 126 },                     /* a directory */
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run run = { 0 };

      g_test_message ("%s", cases[i].executable);
      run_reporting (&run, (const char *[]) { cases[i].executable, NULL });
      g_assert_true (run.reported);
      g_assert_cmpint (run.report.exec_errno, ==, cases[i].exec_errno);
      g_assert_cmpint (run.report.status, ==, cases[i].status);
      g_assert_cmpint (run.status, ==, cases[i].status);
      g_assert_cmpstr (run.err, ==, "");
      run_clear (&run);
    }
}

/* A guest that was executed is reported so, whatever it says or exits with:
 * one that exits 127 or 126 itself, or prints what a failed exec used to
 * print, is no exec failure. */
static void
test_stub_reports_executed_guest (void)
{
  const char *forged = "echo 'bwrap: execvp /nonexistent: No such file or directory' >&2; exit 1";
  struct {
    const char *script;
    int status;
  } cases[] = {
    { "exit 127", 127 },
    { "exit 126", 126 },
    { forged, 1 },
    { "exit 0", 0 },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      Run run = { 0 };

      g_test_message ("%s", cases[i].script);
      run_reporting (&run, (const char *[]) { "/usr/bin/sh", "-c", cases[i].script, NULL });
      g_assert_true (run.reported);
      g_assert_cmpint (run.report.exec_errno, ==, 0);
      g_assert_cmpint (run.report.status, ==, cases[i].status);
      g_assert_cmpint (run.status, ==, cases[i].status);
      run_clear (&run);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/stub/parser/accepts-a-command", test_parser_accepts_a_command);
  g_test_add_func ("/sandbox/stub/parser/refuses-malformed", test_parser_refuses_malformed);
  g_test_add_func ("/sandbox/stub/runs-a-command", test_stub_runs_a_command);
  g_test_add_func ("/sandbox/stub/refuses-malformed-message", test_stub_refuses_malformed_message);
  g_test_add_func ("/sandbox/stub/refuses-malformed-arguments",
                   test_stub_refuses_malformed_arguments);
  g_test_add_func ("/sandbox/stub/refuses-malformed-filter", test_stub_refuses_malformed_filter);
  g_test_add_func ("/sandbox/stub/refuses-proxy-without-handoff",
                   test_stub_refuses_proxy_without_handoff);
  g_test_add_func ("/sandbox/stub/hands-over-proxy-listener", test_stub_hands_over_proxy_listener);
  g_test_add_func ("/sandbox/stub/hands-over-terminal", test_stub_hands_over_terminal);
  g_test_add_func ("/sandbox/stub/refuses-malformed-terminal",
                   test_stub_refuses_malformed_terminal);
  g_test_add_func ("/sandbox/stub/drops-capabilities", test_stub_drops_capabilities);
  g_test_add_func ("/sandbox/stub/unreachable-from-guest", test_stub_unreachable_from_guest);
  g_test_add_func ("/sandbox/stub/guest-is-child-with-stdio-only",
                   test_stub_guest_is_child_with_stdio_only);
  g_test_add_func ("/sandbox/stub/exit-status", test_stub_exit_status);
  g_test_add_func ("/sandbox/stub/reports-exec-failure", test_stub_reports_exec_failure);
  g_test_add_func ("/sandbox/stub/reports-executed-guest", test_stub_reports_executed_guest);
  return g_test_run ();
}
