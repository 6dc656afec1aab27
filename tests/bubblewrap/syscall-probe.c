/* syscall-probe.c — tries one system call inside the guest
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `syscall-probe NAME` makes the call NAME stands for and prints the errno
 * it failed with, or 0 when it succeeded. test-hardening.c copies it into a
 * workspace and runs it under the seccomp filter and without. Two counters
 * measure resource limits instead: `count-forks` prints how many children
 * (of at most 600, all alive at once) it could fork, `count-open-files` how
 * many more files it could open.
 */


#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/btrfs.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/sched.h>

#ifndef AF_VSOCK
# define AF_VSOCK 40
#endif
#ifndef AF_ALG
# define AF_ALG 38
#endif

#define MAX_FORKS 600
#define MAX_OPEN_FILES 100000

/* Forks children that all stay alive until the last fork; returns how
 * many it got. */
static long
count_forks (void)
{
  long forked = 0;
  int hold[2];

  if (pipe (hold) < 0)
    return 0;
  for (; forked < MAX_FORKS; forked++)
    {
      pid_t pid = fork ();
      char byte;

      if (pid < 0)
        break;
      if (pid == 0)
        {
          close (hold[1]);
          (void) !read (hold[0], &byte, 1);
          _exit (0);
        }
    }
  close (hold[1]);
  while (wait (NULL) > 0)
    ;
  return forked;
}

static long
count_open_files (void)
{
  long opened = 0;

  while (opened < MAX_OPEN_FILES && open ("/dev/null", O_RDONLY) >= 0)
    opened++;
  return opened;
}

/* The result of a raw call: 0 or the errno. */
static long result (long ret);

/* Maps @size bytes without touching them: RLIMIT_AS refuses it. */
static long
probe_mmap (size_t size)
{
  void *p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  if (p == MAP_FAILED)
    return errno;
  munmap (p, size);
  return 0;
}

static long
result (long ret)
{
  return ret < 0 ? errno : 0;
}

/* Forks a child with raw clone flags; the child exits at once. */
static long
probe_clone (unsigned long flags)
{
  long pid = syscall (SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);

  if (pid == 0)
    _exit (0);
  if (pid > 0)
    waitpid (pid, NULL, 0);
  return result (pid);
}

static long
probe_clone3 (void)
{
  struct clone_args args;
  long pid;

  memset (&args, 0, sizeof args);
  args.exit_signal = SIGCHLD;
  pid = syscall (SYS_clone3, &args, sizeof args);
  if (pid == 0)
    _exit (0);
  if (pid > 0)
    waitpid (pid, NULL, 0);
  return result (pid);
}

/* PTRACE_TRACEME in a child: a traced probe would stop at its next signal. */
static long
probe_ptrace (void)
{
  int status = 0;
  pid_t pid = fork ();

  if (pid == 0)
    _exit (ptrace (PTRACE_TRACEME, 0, NULL, NULL) < 0 ? errno : 0);
  if (pid < 0 || waitpid (pid, &status, 0) < 0)
    return errno;
  return WIFEXITED (status) ? WEXITSTATUS (status) : 255;
}

static long
probe_perf_event_open (void)
{
  struct perf_event_attr attr;

  memset (&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.exclude_kernel = 1;
  return result (syscall (SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

static long
probe_socket (int family, int type)
{
  int fd = socket (family, type, 0);

  if (fd >= 0)
    close (fd);
  return result (fd);
}

/* A btrfs ioctl on the workspace; without the filter, off btrfs, the
 * kernel answers ENOTTY. */
static long
probe_btrfs (unsigned long request)
{
  static struct btrfs_ioctl_vol_args_v2 args;   /* the larger of the two */
  int fd = open ("/workspace", O_RDONLY | O_DIRECTORY);
  long ret;

  strcpy (args.name, "probe-subvolume");
  ret = result (ioctl (fd, request, &args));
  close (fd);
  return ret;
}

static long
probe (const char *name)
{
  char byte = 0;
  uint64_t params[16] = { 0 };   /* big enough for struct io_uring_params */

  if (strcmp (name, "count-forks") == 0)
    return count_forks ();
  if (strcmp (name, "count-open-files") == 0)
    return count_open_files ();
  if (strcmp (name, "mmap-3g") == 0)
    return probe_mmap ((size_t) 3 << 30);
  if (strcmp (name, "tiocsti") == 0)
    return result (ioctl (0, TIOCSTI, &byte));
  if (strcmp (name, "tiocsti-high-bits") == 0)
    return result (syscall (SYS_ioctl, 0, (unsigned long) TIOCSTI | (1ul << 32), &byte));
  if (strcmp (name, "tioclinux") == 0)
    return result (ioctl (0, TIOCLINUX, &byte));
  if (strcmp (name, "btrfs-subvol-create") == 0)
    return probe_btrfs (BTRFS_IOC_SUBVOL_CREATE);
  if (strcmp (name, "btrfs-subvol-create-v2") == 0)
    return probe_btrfs (BTRFS_IOC_SUBVOL_CREATE_V2);
  if (strcmp (name, "btrfs-snap-create") == 0)
    return probe_btrfs (BTRFS_IOC_SNAP_CREATE);
  if (strcmp (name, "btrfs-snap-create-v2") == 0)
    return probe_btrfs (BTRFS_IOC_SNAP_CREATE_V2);
  if (strcmp (name, "btrfs-subvol-setflags") == 0)
    return probe_btrfs (BTRFS_IOC_SUBVOL_SETFLAGS);
  if (strcmp (name, "unshare-user") == 0)
    return result (unshare (CLONE_NEWUSER));
  if (strcmp (name, "clone-user") == 0)
    return probe_clone (CLONE_NEWUSER);
  if (strcmp (name, "clone") == 0)
    return probe_clone (0);
  if (strcmp (name, "clone3") == 0)
    return probe_clone3 ();
  if (strcmp (name, "setns") == 0)
    return result (setns (open ("/proc/self/ns/uts", O_RDONLY), 0));
  if (strcmp (name, "keyctl") == 0)
    return result (syscall (SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
  if (strcmp (name, "add_key") == 0)
    return result (syscall (SYS_add_key, "user", "sandbox", "x", 1, KEY_SPEC_SESSION_KEYRING));
  if (strcmp (name, "request_key") == 0)
    return result (syscall (SYS_request_key, "user", "sandbox", NULL, 0));
  if (strcmp (name, "ptrace") == 0)
    return probe_ptrace ();
  if (strcmp (name, "perf_event_open") == 0)
    return probe_perf_event_open ();
  if (strcmp (name, "personality-linux32") == 0)
    return result (personality (PER_LINUX32));
  if (strcmp (name, "personality-no-randomize") == 0)
    return result (personality (PER_LINUX | ADDR_NO_RANDOMIZE));
  if (strcmp (name, "personality-query") == 0)
    return result (personality (0xffffffff));
  if (strcmp (name, "personality-default") == 0)
    return result (personality (PER_LINUX));
  if (strcmp (name, "kexec_load") == 0)
    return result (syscall (SYS_kexec_load, 0, 0, NULL, 0));
  if (strcmp (name, "kexec_file_load") == 0)
    return result (syscall (SYS_kexec_file_load, -1, -1, 0, "", 0));
  if (strcmp (name, "init_module") == 0)
    return result (syscall (SYS_init_module, "", 0, ""));
  if (strcmp (name, "finit_module") == 0)
    return result (syscall (SYS_finit_module, -1, "", 0));
  if (strcmp (name, "delete_module") == 0)
    return result (syscall (SYS_delete_module, "sandbox", 0));
  if (strcmp (name, "bpf") == 0)
    return result (syscall (SYS_bpf, 0, NULL, 0));
  if (strcmp (name, "userfaultfd") == 0)
    return result (syscall (SYS_userfaultfd, 0));
  if (strcmp (name, "mount") == 0)
    return result (mount ("none", "/tmp", "tmpfs", 0, NULL));
  if (strcmp (name, "umount2") == 0)
    return result (umount2 ("/tmp", MNT_DETACH));
  if (strcmp (name, "pivot_root") == 0)
    return result (syscall (SYS_pivot_root, "/tmp", "/tmp"));
  if (strcmp (name, "chroot") == 0)
    return result (chroot ("/tmp"));
  if (strcmp (name, "open_tree") == 0)
    return result (syscall (SYS_open_tree, AT_FDCWD, "/tmp", 0));
  if (strcmp (name, "move_mount") == 0)
    return result (syscall (SYS_move_mount, -1, "", AT_FDCWD, "/tmp", 0));
  if (strcmp (name, "fsopen") == 0)
    return result (syscall (SYS_fsopen, "tmpfs", 0));
  if (strcmp (name, "fsconfig") == 0)
    return result (syscall (SYS_fsconfig, -1, 0, NULL, NULL, 0));
  if (strcmp (name, "fsmount") == 0)
    return result (syscall (SYS_fsmount, -1, 0, 0));
  if (strcmp (name, "fspick") == 0)
    return result (syscall (SYS_fspick, AT_FDCWD, "/tmp", 0));
  if (strcmp (name, "mount_setattr") == 0)
    return result (syscall (SYS_mount_setattr, AT_FDCWD, "/tmp", 0, NULL, 0));
  if (strcmp (name, "io_uring_setup") == 0)
    return result (syscall (SYS_io_uring_setup, 1, params));
  if (strcmp (name, "io_uring_enter") == 0)
    return result (syscall (SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0));
  if (strcmp (name, "io_uring_register") == 0)
    return result (syscall (SYS_io_uring_register, -1, 0, NULL, 0));
  if (strcmp (name, "socket-packet") == 0)
    return probe_socket (AF_PACKET, SOCK_RAW);
  if (strcmp (name, "socket-vsock") == 0)
    return probe_socket (AF_VSOCK, SOCK_STREAM);
  if (strcmp (name, "socket-alg") == 0)
    return probe_socket (AF_ALG, SOCK_SEQPACKET);
  if (strcmp (name, "socket-bluetooth") == 0)
    return probe_socket (AF_BLUETOOTH, SOCK_STREAM);
  if (strcmp (name, "socket-x25") == 0)
    return probe_socket (AF_X25, SOCK_SEQPACKET);
  if (strcmp (name, "socket-unix") == 0)
    return probe_socket (AF_UNIX, SOCK_STREAM);
  if (strcmp (name, "socket-inet") == 0)
    return probe_socket (AF_INET, SOCK_STREAM);
  if (strcmp (name, "socket-inet6") == 0)
    return probe_socket (AF_INET6, SOCK_DGRAM);
  if (strcmp (name, "socket-netlink") == 0)
    return probe_socket (AF_NETLINK, SOCK_RAW);
  return -1;
}

int
main (int   argc,
      char *argv[])
{
  for (int i = 1; i < argc; i++)
    {
      long err = probe (argv[i]);

      if (err < 0)
        {
          fprintf (stderr, "unknown probe %s\n", argv[i]);
          return 2;
        }
      printf ("%s %ld\n", argv[i], err);
    }
  return 0;
}
