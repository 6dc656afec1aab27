/* sandbox-bubblewrap-seccomp.c — the default seccomp filter of the guest
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>

#include <seccomp.h>
#include <linux/btrfs.h>

#include "sandbox-bubblewrap-seccomp-private.h"

/*
 * A deny-list in the spirit of flatpak's setup_seccomp(): everything is
 * allowed except the calls below, which are the kernel's usual escape and
 * attack surface for an unprivileged process. docs/security.md gives the
 * reason for each rule. The guest already runs without capabilities in its
 * own user namespace, so many of these would fail anyway; the filter makes
 * the refusal independent of kernel bugs in the namespaced code paths.
 *
 * The filter is compiled once per process and loaded by bwrap (--seccomp FD)
 * just before it executes the command, so bwrap's own setup is not filtered.
 * Only the native architecture is allowed: a syscall made through another
 * ABI (the i386 `int 0x80` entry or x32 from an x86-64 process, a classic
 * filter bypass) kills the process.
 */

typedef struct
{
  const char *name;
  int errno_value;
  /* An argument comparison, or none when @n_args is 0. */
  guint n_args;
  struct scmp_arg_cmp args[1];
} Rule;

#define DENY(syscall, err) { syscall, err, 0, { { 0 } } }
#define DENY_IF(syscall, err, cmp) { syscall, err, 1, { cmp } }

static const Rule rules[] = {
  /* Kernel keyrings are not namespaced. */
  DENY ("keyctl", EPERM),
  DENY ("add_key", EPERM),
  DENY ("request_key", EPERM),

  /* ptrace: seccomp cannot tell which pid namespace the tracee is in. */
  DENY ("ptrace", EPERM),

  /* Performance counters leak host information and have a long CVE record. */
  DENY ("perf_event_open", EPERM),

  /* Loading kernels, modules and eBPF; userfaultfd stalls kernel paths. */
  DENY ("kexec_load", EPERM),
  DENY ("kexec_file_load", EPERM),
  DENY ("init_module", EPERM),
  DENY ("finit_module", EPERM),
  DENY ("delete_module", EPERM),
  DENY ("bpf", EPERM),
  DENY ("userfaultfd", EPERM),

  /* The mount family. The new mount API answers ENOSYS so tools fall back
   * to mount(2), which is refused with EPERM like the rest. */
  DENY ("mount", EPERM),
  DENY ("umount", EPERM),
  DENY ("umount2", EPERM),
  DENY ("pivot_root", EPERM),
  DENY ("chroot", EPERM),
  DENY ("open_tree", ENOSYS),
  DENY ("move_mount", ENOSYS),
  DENY ("fsopen", ENOSYS),
  DENY ("fsconfig", ENOSYS),
  DENY ("fsmount", ENOSYS),
  DENY ("fspick", ENOSYS),
  DENY ("mount_setattr", ENOSYS),

  /* No new user namespaces (bwrap --disable-userns says the same through
   * user.max_user_namespaces); clone3 hides its flags in memory the filter
   * cannot read, so it answers ENOSYS and libc falls back to clone. */
  DENY_IF ("clone", EPERM, SCMP_A0 (SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)),
  DENY_IF ("unshare", EPERM, SCMP_A0 (SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)),
  DENY ("setns", EPERM),
  DENY ("clone3", ENOSYS),

  /* io_uring performs operations the filter never sees. */
  DENY ("io_uring_setup", EPERM),
  DENY ("io_uring_enter", EPERM),
  DENY ("io_uring_register", EPERM),

  /* Pushing input into, or reprogramming, a terminal. ioctl's request is
   * an int: compare only the low 32 bits (CVE-2019-10063). */
  DENY_IF ("ioctl", EPERM, SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, (int) TIOCSTI)),
  DENY_IF ("ioctl", EPERM, SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, (int) TIOCLINUX)),

  /* btrfs subvolumes and snapshots, which any user may make in a directory
   * it can write: a subvolume is outside the qgroup of the workspace's
   * (workspace-quota-bytes), so a guest would write past its quota there;
   * and one it made read-only could not be removed with its session. */
  DENY_IF ("ioctl", EPERM, SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, (int) BTRFS_IOC_SUBVOL_CREATE)),
  DENY_IF ("ioctl", EPERM,
           SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, (int) BTRFS_IOC_SUBVOL_CREATE_V2)),
  DENY_IF ("ioctl", EPERM, SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, (int) BTRFS_IOC_SNAP_CREATE)),
  DENY_IF ("ioctl", EPERM, SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, (int) BTRFS_IOC_SNAP_CREATE_V2)),
  DENY_IF ("ioctl", EPERM,
           SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, (int) BTRFS_IOC_SUBVOL_SETFLAGS)),

  /* Execution domains other than the default: READ_IMPLIES_EXEC,
   * ADDR_NO_RANDOMIZE and the like weaken the guest's own defences and
   * have served kernel exploits. As flatpak, only PER_LINUX itself is
   * allowed, so the query 0xffffffff is refused too. */
  DENY_IF ("personality", EPERM, SCMP_A0 (SCMP_CMP_NE, PER_LINUX)),
};

/* socket(): the families a coding workload needs. Everything else answers
 * EAFNOSUPPORT, what a kernel without that family says, so programs fall
 * back instead of failing hard. */
static const int allowed_families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };

static gboolean
set_seccomp_error (GError    **error,
                   int         result,
                   const char *what)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Could not build the seccomp filter: %s: %s", what, g_strerror (-result));
  return FALSE;
}

static gboolean
add_rule (scmp_filter_ctx          ctx,
          const char              *name,
          int                      errno_value,
          guint                    n_args,
          const struct scmp_arg_cmp *args,
          GError                 **error)
{
  int syscall_nr = seccomp_syscall_resolve_name (name);
  int result;

  /* Fail closed: a name this libseccomp does not know is not silently
   * left open. */
  if (syscall_nr == __NR_SCMP_ERROR)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not build the seccomp filter: unknown syscall %s", name);
      return FALSE;
    }
  result = seccomp_rule_add_array (ctx, SCMP_ACT_ERRNO (errno_value), syscall_nr, n_args, args);
  if (result < 0)
    return set_seccomp_error (error, result, name);
  return TRUE;
}

/* Denies @name unless its argument @arg is one of @allowed (ascending,
 * small numbers): libseccomp 2.5 takes one comparison per argument and
 * rule, so each value between allowed ones gets an equality rule, and one
 * rule covers everything above, as flatpak does. */
static gboolean
add_allow_only_rules (scmp_filter_ctx      ctx,
                      const char          *name,
                      guint                arg,
                      int                  errno_value,
                      const scmp_datum_t  *allowed,
                      guint                n_allowed,
                      GError             **error)
{
  scmp_datum_t value = 0;
  struct scmp_arg_cmp cmp;

  for (guint i = 0; i < n_allowed; i++)
    {
      g_assert (allowed[i] < 256);
      for (; value < allowed[i]; value++)
        {
          cmp = (struct scmp_arg_cmp) { arg, SCMP_CMP_EQ, value, 0 };
          if (!add_rule (ctx, name, errno_value, 1, &cmp, error))
            return FALSE;
        }
      value = allowed[i] + 1;
    }
  cmp = (struct scmp_arg_cmp) { arg, SCMP_CMP_GE, value, 0 };
  return add_rule (ctx, name, errno_value, 1, &cmp, error);
}

static GBytes *
export_filter (scmp_filter_ctx   ctx,
               GError          **error)
{
  g_auto(SandboxBubblewrapFd) fd = memfd_create ("sandbox-seccomp", MFD_CLOEXEC);
  g_autofree guint8 *program = NULL;
  off_t size;
  int result;

  if (fd < 0)
    return set_seccomp_error (error, -errno, "memfd_create"), NULL;
  result = seccomp_export_bpf (ctx, fd);
  if (result < 0)
    return set_seccomp_error (error, result, "export"), NULL;
  size = lseek (fd, 0, SEEK_END);
  if (size <= 0 || lseek (fd, 0, SEEK_SET) < 0)
    return set_seccomp_error (error, -EIO, "export"), NULL;
  program = g_malloc (size);
  if (read (fd, program, size) != size)
    return set_seccomp_error (error, -EIO, "export"), NULL;
  return g_bytes_new_take (g_steal_pointer (&program), size);
}

static GBytes *
build_filter (GError **error)
{
  scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
  g_autofree scmp_datum_t *families = NULL;
  GBytes *program = NULL;
  int result;

  if (ctx == NULL)
    return set_seccomp_error (error, -ENOMEM, "init"), NULL;

  /* bwrap sets no_new_privs itself before loading the filter. */
  result = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (result < 0)
    {
      set_seccomp_error (error, result, "no_new_privs");
      goto out;
    }

  for (guint i = 0; i < G_N_ELEMENTS (rules); i++)
    if (!add_rule (ctx, rules[i].name, rules[i].errno_value, rules[i].n_args, rules[i].args, error))
      goto out;

  families = g_new (scmp_datum_t, G_N_ELEMENTS (allowed_families));
  for (guint i = 0; i < G_N_ELEMENTS (allowed_families); i++)
    families[i] = allowed_families[i];
  if (!add_allow_only_rules (ctx, "socket", 0, EAFNOSUPPORT, families,
                             G_N_ELEMENTS (allowed_families), error))
    goto out;

  program = export_filter (ctx, error);

out:
  seccomp_release (ctx);
  return program;
}

/**
 * sandbox_bubblewrap_seccomp_get_program:
 * @error: return location for a #GError
 *
 * Compiles the default filter on first use; thread-safe.
 *
 * Returns: (transfer full): the filter as a classic BPF program, ready for
 *   bwrap's `--seccomp`, or %NULL with %SANDBOX_ERROR_UNAVAILABLE
 */
GBytes *
sandbox_bubblewrap_seccomp_get_program (GError **error)
{
  static GMutex lock;
  static GBytes *program = NULL;
  GBytes *result;

  g_mutex_lock (&lock);
  if (program == NULL)
    program = build_filter (error);
  result = program != NULL ? g_bytes_ref (program) : NULL;
  g_mutex_unlock (&lock);
  return result;
}

/**
 * sandbox_bubblewrap_seccomp_open_program_fd:
 * @program: a program from sandbox_bubblewrap_seccomp_get_program()
 * @error: return location for a #GError
 *
 * Puts @program in a sealed memfd positioned at its start, for one bwrap to
 * read.
 *
 * Returns: a close-on-exec descriptor, or -1 with %SANDBOX_ERROR_UNAVAILABLE
 */
int
sandbox_bubblewrap_seccomp_open_program_fd (GBytes  *program,
                                            GError **error)
{
  g_auto(SandboxBubblewrapFd) fd = memfd_create ("sandbox-seccomp",
                                                 MFD_CLOEXEC | MFD_ALLOW_SEALING);
  gsize size;
  const guint8 *data = g_bytes_get_data (program, &size);

  if (fd < 0)
    return set_seccomp_error (error, -errno, "memfd_create"), -1;
  if (!sandbox_bubblewrap_write_fully (fd, data, size))
    return set_seccomp_error (error, -errno, "write"), -1;
  if (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
      lseek (fd, 0, SEEK_SET) < 0)
    return set_seccomp_error (error, -errno, "seal"), -1;
  return g_steal_fd (&fd);
}
