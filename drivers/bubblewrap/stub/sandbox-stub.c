/* sandbox-stub.c — the trusted first process of every sandbox
 *
 * bwrap runs this program (from a descriptor the host opened on it) as the
 * init of the sandbox's pid namespace (`--as-pid-1`). In order, it:
 *
 *  1. makes itself non-dumpable, so that no guest process can reach it
 *     through /proc/1/mem, ptrace or process_vm_writev;
 *  2. runs the pre-exec steps (stub_steps[] below: the workspace lock, and
 *     what a driver feature adds, such as the proxy's listener, which it
 *     hands to the host on its `handoff=FD` socket), then drops every
 *     capability;
 *  3. scopes itself and so the guest with Landlock, where the kernel has
 *     scoping (ABI 6, Linux 6.12): no abstract UNIX socket or process made
 *     outside the sandbox can be connected to or signalled;
 *     installs the session's seccomp filter (once: the guest inherits it);
 *  4. reads the command message from its control descriptor to EOF — at
 *     once for a command started cold, or whenever the host delivers one
 *     to a sandbox started ahead of time — and parses it whole;
 *  5. vforks the guest, which enters its cwd and executes the command with
 *     exactly the message's environment, descriptors 0, 1, 2 and nothing
 *     else (with a terminal, they are the terminal the `terminal=` step
 *     made, and the guest leads a session of its own on it), and hands
 *     the host a pidfd of the guest on the handoff socket, if it has one;
 *  6. reaps, and exits with the guest's status (128 + signal when it was
 *     killed; 127 or 126, as a shell gives, when it could not be
 *     executed); the kernel then kills whatever the guest left in the pid
 *     namespace.
 *
 * With `report=FD`, once the guest has exited the stub ends every other
 * process of the pid namespace itself (SIGKILL, reaping until none is
 * left) and only then writes the guest's status, and execvp()'s errno if
 * the guest could not be executed (a StubReport), on FD: the host
 * may take the command as over at once, with everything the guest wrote
 * in its pipes already, without waiting for the kernel to tear the
 * namespaces down after this process and for bwrap to exit.
 *
 * It trusts only the host: it runs before any guest process exists, and
 * anything malformed (arguments, message, filter) makes it exit 1 without
 * running anything. Plain C against libc, statically linked, and no
 * allocation: the message lives in static buffers.
 *
 * Usage: sandbox-stub control=FD [seccomp=FD] [report=FD] [handoff=FD]
 *                     [STEP-OPTION=VALUE…]
 *
 * Or, as a layered session's keeper of its one overlay mount, which is
 * no sandbox's init: sandbox-stub keep-overlay=NAME lower=DIR layers=DIR
 * (stub/sandbox-stub-keeper.c); or as a session's network keeper:
 * sandbox-stub keep-net [proxy=PORT] (stub/sandbox-stub-net.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/types.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox-stub-descriptor.h"
#include "sandbox-stub-keeper.h"
#include "sandbox-stub-message.h"
#include "sandbox-stub-net.h"
#include "sandbox-stub-steps.h"

/* The options of the stub itself; the steps' follow. */
static const char * const stub_options[] = {
  "control", "seccomp", "report", "handoff",
};

/* The pre-exec steps, in order. */
static const StubStep stub_steps[] = {
  { "lock", stub_step_lock_workspace },
  { "lock-fd", stub_step_lock_descriptor },
  { "proxy", stub_step_proxy_listener },
  { "terminal", stub_step_terminal },
};

#define MAX_FILTER_SIZE (BPF_MAXINSNS * sizeof (struct sock_filter))

/* Set by the vforked guest when execvp() fails: it shares this process's
 * memory, and this process resumes only once it has exited or executed. */
static volatile int guest_exec_errno;

/* The `handoff=FD` socket, or -1. Kept open in this process only: the
 * guest gets descriptors 0, 1 and 2. */
static int handoff_fd = -1;

static char message_buffer[STUB_MESSAGE_MAX_SIZE + 1];
static char *message_strings[STUB_MESSAGE_MAX_STRINGS + 2];
static struct sock_filter filter[BPF_MAXINSNS];

/* Writes "PROGRAM: WHAT[ DETAIL]: ERRNO TEXT" to stderr (the command's). */
static void
report (const char *program,
        const char *what,
        const char *detail,
        int         errno_value)
{
  const char *text = strerror (errno_value);
  struct iovec parts[] = {
    { (void *) program, strlen (program) },
    { (void *) ": ", 2 },
    { (void *) what, strlen (what) },
    { (void *) " ", detail != NULL ? 1 : 0 },
    { (void *) (detail != NULL ? detail : ""), detail != NULL ? strlen (detail) : 0 },
    { (void *) ": ", 2 },
    { (void *) text, strlen (text) },
    { (void *) "\n", 1 },
  };

  (void) ! writev (2, parts, sizeof parts / sizeof parts[0]);
}

static void __attribute__ ((noreturn))
fail (const char *what)
{
  report ("sandbox-stub", what, NULL, errno);
  _exit (1);
}

/* A descriptor number from a stub argument: digits only, at least 3. */
static int
parse_fd (const char *value)
{
  long fd = 0;

  if (value == NULL || value[0] == '\0')
    return -1;
  for (const char *c = value; *c != '\0'; c++)
    {
      if (*c < '0' || *c > '9' || fd > 65535)
        return -1;
      fd = fd * 10 + (*c - '0');
    }
  return fd >= 3 && fd <= 65535 ? (int) fd : -1;
}

/* The value of option @name among @argv's NAME=VALUE arguments, or NULL. */
static const char *
find_option (char       **argv,
             const char  *name)
{
  size_t length = strlen (name);

  for (int i = 1; argv[i] != NULL; i++)
    if (strncmp (argv[i], name, length) == 0 && argv[i][length] == '=')
      return argv[i] + length + 1;
  return NULL;
}

/* Every argument is a known option, given once. */
static int
options_are_known (char **argv)
{
  for (int i = 1; argv[i] != NULL; i++)
    {
      const char *equals = strchr (argv[i], '=');
      size_t length = equals != NULL ? (size_t) (equals - argv[i]) : 0;
      int known = 0;

      if (length == 0)
        return 0;
      for (size_t o = 0; o < sizeof stub_options / sizeof stub_options[0]; o++)
        if (strlen (stub_options[o]) == length && strncmp (argv[i], stub_options[o], length) == 0)
          known = 1;
      for (size_t s = 0; s < sizeof stub_steps / sizeof stub_steps[0]; s++)
        if (strlen (stub_steps[s].option) == length &&
            strncmp (argv[i], stub_steps[s].option, length) == 0)
          known = 1;
      if (!known)
        return 0;
      for (int j = 1; j < i; j++)
        if (strncmp (argv[j], argv[i], length + 1) == 0)
          return 0;
    }
  return 1;
}

/* Reads @fd to EOF into @buffer; returns the size, or -1 past @capacity. */
static ssize_t
read_to_end (int     fd,
             char   *buffer,
             size_t  capacity)
{
  size_t size = 0;

  for (;;)
    {
      ssize_t n = read (fd, buffer + size, capacity - size);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -1;
      if (n == 0)
        return (ssize_t) size;
      size += (size_t) n;
      if (size == capacity)
        {
          errno = E2BIG;
          return -1;
        }
    }
}

/* bwrap's --lock-file, which --as-pid-1 leaves untaken: a POSIX read lock
 * on /workspace for as long as this process, the sandbox's init, lives.
 * Lease recovery finds leftover sandboxes by it (and their init by
 * this program's name; see sandbox-bubblewrap-store-leftovers.c). */
int
stub_step_lock_workspace (const char *value)
{
  struct flock lock = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
  int fd = open (value, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return -1;
  return fcntl (fd, F_SETLK, &lock);   /* the descriptor stays open */
}

/* The same lock on a file the host opened for it: a layered session's
 * lock file (sandbox-bubblewrap-keeper.c), which is not in the sandbox.
 * The descriptor stays open in this process only (the guest gets
 * descriptors 0, 1 and 2, and cannot reach this non-dumpable one's). */
int
stub_step_lock_descriptor (const char *value)
{
  struct flock lock = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
  int fd = parse_fd (value);

  if (fd < 0)
    {
      errno = EBADF;
      return -1;
    }
  if (fcntl (fd, F_SETFD, FD_CLOEXEC) < 0)
    return -1;
  return fcntl (fd, F_SETLK, &lock);
}

/* One datagram, a StubHandoff with @fd attached (see
 * sandbox-stub-message.h); @fd is closed here whatever happens. */
int
stub_handoff (uint32_t kind,
              int      fd)
{
  StubHandoff handoff = { STUB_HANDOFF_MAGIC, kind };
  int sent, saved_errno;

  if (handoff_fd < 0)
    {
      close (fd);
      errno = EBADF;
      return -1;
    }
  sent = stub_send_descriptor (handoff_fd, &handoff, sizeof handoff, fd);
  saved_errno = errno;
  close (fd);
  errno = saved_errno;
  return sent;
}

static void
run_steps (char **argv)
{
  for (size_t s = 0; s < sizeof stub_steps / sizeof stub_steps[0]; s++)
    {
      const char *value = find_option (argv, stub_steps[s].option);

      if (value != NULL && stub_steps[s].run (value) < 0)
        fail (stub_steps[s].option);
    }
}

/* No capability survives into the guest, whatever a step was given: the
 * ambient and bounding sets emptied, then the rest, and no_new_privs, so
 * that no exec (set-id, file capabilities) gains any back. Emptying the
 * bounding set needs CAP_SETPCAP: a driver that gives the stub any
 * capability gives it that one too, or the stub refuses to go on. */
void
stub_drop_capabilities (void)
{
  struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2] = { { 0 } };

  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    fail ("drop ambient capabilities");
  for (int cap = 0; prctl (PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
    if (prctl (PR_CAPBSET_READ, cap, 0, 0, 0) == 1 &&
        prctl (PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
      fail ("drop bounding capabilities");
  if (syscall (SYS_capset, &header, data) < 0)
    fail ("drop capabilities");
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    fail ("set no_new_privs");
}

/* Landlock's ABI 6 scoping, defined here: Debian 12's headers predate it.
 * The ruleset's layout is the kernel's stable ABI; it handles no file or
 * network access, only the scopes. */
#define STUB_LANDLOCK_SCOPING_ABI 6
#define STUB_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define STUB_LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#define STUB_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)

struct stub_landlock_ruleset_attr
{
  __u64 handled_access_fs;
  __u64 handled_access_net;
  __u64 scoped;
};

/* Under allow-all the guest shares the host's network namespace, and with
 * it every abstract UNIX socket of the host (X11's @/tmp/.X11-unix/X0,
 * session buses): scoped, a process can connect only to those made inside
 * its own domain, and signal only processes there — the sandbox's. A
 * kernel without scoping (ABI < 6, or Landlock off) leaves nothing to do;
 * the backend's landlock-abi property tells the host. no_new_privs is set
 * already, as landlock_restrict_self() requires. */
static void
scope_with_landlock (void)
{
  struct stub_landlock_ruleset_attr ruleset = {
    .scoped = STUB_LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | STUB_LANDLOCK_SCOPE_SIGNAL,
  };
  long abi = syscall (__NR_landlock_create_ruleset, NULL, 0,
                      STUB_LANDLOCK_CREATE_RULESET_VERSION);
  int fd;

  if (abi < STUB_LANDLOCK_SCOPING_ABI)
    return;
  fd = (int) syscall (__NR_landlock_create_ruleset, &ruleset, sizeof ruleset, 0);
  if (fd < 0)
    fail ("make the Landlock ruleset");
  if (syscall (__NR_landlock_restrict_self, fd, 0) < 0)
    fail ("scope itself with Landlock");
  close (fd);
}

/* The session's filter, a classic BPF program (sandbox-bubblewrap-seccomp.c),
 * installed as bwrap's --seccomp would (no_new_privs is set already). */
static void
install_filter (int fd)
{
  ssize_t size = read_to_end (fd, (char *) filter, sizeof filter + 1);
  struct sock_fprog program;

  if (size <= 0 || size % sizeof (struct sock_filter) != 0)
    {
      errno = size < 0 ? errno : EINVAL;
      fail ("read the seccomp filter");
    }
  close (fd);
  program.len = (unsigned short) (size / sizeof (struct sock_filter));
  program.filter = filter;
  if (syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program) < 0)
    fail ("install the seccomp filter");
}

static void
receive_message (int          fd,
                 StubMessage *message)
{
  ssize_t size = read_to_end (fd, message_buffer, sizeof message_buffer);

  if (size < 0)
    fail ("read the command");
  close (fd);
  if (stub_message_parse (message_buffer, (size_t) size, message_strings, message) < 0)
    {
      errno = EINVAL;
      fail ("read the command");
    }
}

/* A guest with a terminal leads a session of its own whose controlling
 * terminal it is (job control works, and hanging it up reaches the
 * guest's jobs), on descriptors 0, 1 and 2. */
static void
enter_terminal (int terminal)
{
  if (setsid () < 0)
    fail ("setsid");
  if (ioctl (terminal, TIOCSCTTY, 0) < 0)
    fail ("take the terminal");
  for (int fd = 0; fd <= 2; fd++)
    if (dup2 (terminal, fd) < 0)
      fail ("take the terminal");
}

/* The guest: its cwd, its environment, descriptors 0, 1 and 2 only. */
static void __attribute__ ((noreturn))
exec_guest (const StubMessage *message,
            int                terminal)
{
  extern char **environ;

  if (terminal >= 0)
    enter_terminal (terminal);
  if (close_range (3, ~0U, 0) < 0)
    fail ("close descriptors");
  if (chdir (message->cwd) < 0)
    fail ("chdir");
  /* Through environ, so that execvp() searches the message's PATH
   * (execvpe() would search this process's). The vforked child shares
   * this process's globals: the stub's environ is the message's from here
   * on, and the stub never reads it again. */
  environ = message->envp;
  execvp (message->argv[0], message->argv);
  /* Data for the host (see wait_for_guest()), not a line on the guest's
   * stderr: a guest can write any line, but not this variable. */
  guest_exec_errno = errno;
  _exit (guest_exec_errno == ENOENT || guest_exec_errno == ENOTDIR ? 127 : 126);
}

/* vfork(): the child only closes descriptors, changes directory and
 * executes, without allocating, so it needs no copy of this process's
 * memory. A fork() copied its page tables and then took copy-on-write
 * faults on both sides: about 1.4 ms of a 5.5 ms command in a ready sandbox
 * on a two-vCPU VM. A function of its own, so that no variable of main()
 * lives across the vfork() (the child runs on this frame's stack). */
static pid_t __attribute__ ((noinline))
spawn_guest (const StubMessage *message,
             int                terminal)
{
  pid_t guest = vfork ();

  if (guest == 0)
    exec_guest (message, terminal);
  return guest;
}

/* The host signals the guest through a pidfd of it (which cannot reach a
 * recycled pid), given once the guest exists. A stub that cannot make one
 * leaves the host without: signals then fail there, the command runs. */
static void
hand_over_guest (pid_t guest)
{
  int pidfd;

  if (handoff_fd < 0)
    return;
  pidfd = (int) syscall (SYS_pidfd_open, guest, 0);
  if (pidfd >= 0)
    (void) stub_handoff (STUB_HANDOFF_GUEST, pidfd);
}

/* SIGKILLs every other process of the pid namespace and reaps until none
 * is left: every process of it descends from this one (orphans come here),
 * and kill(-1) reaches them all, zombies included. A fork the kill races
 * fails, since its parent has the signal pending. Returns 0 if a process
 * the kill reached is not reapable here (it cannot happen: the guest has
 * neither the capabilities to change its ids nor to make a namespace);
 * the kernel then ends it as this process exits. */
static int
end_the_sandbox (void)
{
  for (;;)
    {
      int reaped = 0;

      if (kill (-1, SIGKILL) < 0)
        return errno == ESRCH;
      for (;;)
        {
          pid_t pid = wait (NULL);

          if (pid > 0)
            reaped = 1;
          else if (errno != EINTR)
            break;
        }
      if (!reaped)
        return 0;
    }
}

/* Reaps until the guest is gone; its status is the sandbox's. With
 * @report_fd, the status and @exec_errno (a StubReport) are written there
 * once the sandbox is empty. */
static void __attribute__ ((noreturn))
wait_for_guest (pid_t guest,
                int   exec_errno,
                int   report_fd)
{
  for (;;)
    {
      int status, code;
      pid_t pid = wait (&status);

      if (pid < 0 && errno == EINTR)
        continue;
      if (pid < 0)
        fail ("wait");
      if (pid != guest)
        continue;
      code = WIFSIGNALED (status) ? 128 + WTERMSIG (status) : WEXITSTATUS (status);
      if (report_fd >= 0 && end_the_sandbox ())
        {
          StubReport report = { code, exec_errno };

          (void) ! write (report_fd, &report, sizeof report);
        }
      _exit (code);
    }
}

int
main (int    argc,
      char **argv)
{
  StubMessage message;
  int control_fd, seccomp_fd = -1, report_fd = -1, terminal;
  pid_t guest;

  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    fail ("make itself non-dumpable");
  /* Run from /proc/self/fd/N, its name would be N: lease recovery knows a
   * sandbox's init by this one (SANDBOX_BUBBLEWRAP_STUB_NAME). */
  if (prctl (PR_SET_NAME, "sandbox-stub", 0, 0, 0) < 0)
    fail ("name itself");
  if (argc >= 2 && strncmp (argv[1], STUB_KEEPER_OPTION, strlen (STUB_KEEPER_OPTION)) == 0)
    stub_keep_overlay (argc, argv);
  if (argc >= 2 && strcmp (argv[1], STUB_NET_OPTION) == 0)
    stub_keep_net (argc, argv);
  if (argc < 2 || !options_are_known (argv))
    {
      errno = EINVAL;
      fail ("usage: sandbox-stub control=FD [seccomp=FD] [OPTION=VALUE…]");
    }
  control_fd = parse_fd (find_option (argv, "control"));
  if (control_fd < 0 ||
      (find_option (argv, "seccomp") != NULL &&
       (seccomp_fd = parse_fd (find_option (argv, "seccomp"))) < 0) ||
      (find_option (argv, "report") != NULL &&
       (report_fd = parse_fd (find_option (argv, "report"))) < 0) ||
      (find_option (argv, "handoff") != NULL &&
       (handoff_fd = parse_fd (find_option (argv, "handoff"))) < 0))
    {
      errno = EBADF;
      fail ("usage: sandbox-stub control=FD [seccomp=FD] [OPTION=VALUE…]");
    }

  run_steps (argv);
  stub_drop_capabilities ();
  scope_with_landlock ();
  if (seccomp_fd >= 0)
    install_filter (seccomp_fd);
  receive_message (control_fd, &message);

  terminal = stub_terminal_take ();
  guest = spawn_guest (&message, terminal);
  if (guest < 0)
    fail ("vfork");
  hand_over_guest (guest);
  /* The guest has them now; this process only waits. Without its copy of
   * the terminal, the host's master reads EIO once the guest and all it
   * started are gone. */
  if (terminal >= 0)
    close (terminal);
  close (0);
  close (1);
  close (2);
  wait_for_guest (guest, guest_exec_errno, report_fd);
}
