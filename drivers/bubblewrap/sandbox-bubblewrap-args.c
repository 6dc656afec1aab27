/* sandbox-bubblewrap-args.c — the bwrap command-line builder
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "sandbox-bubblewrap-args-private.h"
#include "sandbox-bubblewrap-layering-private.h"
#include "sandbox-bubblewrap-limits-private.h"
#include "sandbox-bubblewrap-stub-private.h"

/* The first descriptor number bwrap sees for passed fds: 0, 1 and 2 are the
 * command's stdio. */
#define FIRST_PASSED_FD 3
/* Passed descriptors are kept at or above this number, so the launcher's
 * dup2() to 3, 4, … never overwrites one it still has to place. It bounds
 * how many a command line may pass: the status pipe, the options, the
 * stub, its control and seccomp descriptors, and the curated /etc's files
 * (eight, and the CA bundle) take fifteen. The launcher's report pipe
 * sits above all of them (REPORT_FD_FLOOR, 64). */
#define PASSED_FD_FLOOR 32

static void
close_fd_in_array (gpointer data)
{
  sandbox_bubblewrap_fd_close (*(int *) data);
}

/**
 * sandbox_bubblewrap_args_new:
 * @executable: the bwrap executable, argv[0]
 *
 * Returns: (transfer full): an empty command line for @executable
 */
SandboxBubblewrapArgs *
sandbox_bubblewrap_args_new (const char *executable)
{
  SandboxBubblewrapArgs *self = g_new0 (SandboxBubblewrapArgs, 1);

  self->argv = g_ptr_array_new_with_free_func (g_free);
  self->fds = g_array_new (FALSE, FALSE, sizeof (int));
  g_array_set_clear_func (self->fds, close_fd_in_array);
  g_ptr_array_add (self->argv, g_strdup (executable));
  return self;
}

/**
 * sandbox_bubblewrap_args_free:
 * @self: (transfer full): a command line
 *
 * Frees @self and closes every descriptor it still holds.
 */
void
sandbox_bubblewrap_args_free (SandboxBubblewrapArgs *self)
{
  if (self == NULL)
    return;
  g_ptr_array_unref (self->argv);
  g_array_unref (self->fds);
  sandbox_bubblewrap_guest_view_free (self->guest_view);
  sandbox_bubblewrap_network_free (self->network);
  sandbox_bubblewrap_session_net_unref (self->session_net);
  g_free (self);
}

/**
 * sandbox_bubblewrap_args_add:
 * @self: a command line
 * @arg: the argument to append
 *
 * Appends one argument.
 */
void
sandbox_bubblewrap_args_add (SandboxBubblewrapArgs *self,
                             const char            *arg)
{
  g_ptr_array_add (self->argv, g_strdup (arg));
}

/**
 * sandbox_bubblewrap_args_add_many:
 * @self: a command line
 * @...: arguments, then %NULL
 *
 * Appends several arguments.
 */
void
sandbox_bubblewrap_args_add_many (SandboxBubblewrapArgs *self,
                                  ...)
{
  va_list ap;
  const char *arg;

  va_start (ap, self);
  while ((arg = va_arg (ap, const char *)) != NULL)
    sandbox_bubblewrap_args_add (self, arg);
  va_end (ap);
}

/**
 * sandbox_bubblewrap_args_take_fd:
 * @self: a command line
 * @fd: (transfer full): a descriptor to pass to bwrap
 *
 * Takes @fd; the launcher places it in bwrap at the returned number. These
 * are the only descriptors besides 0, 1 and 2 that bwrap receives.
 *
 * Returns: the descriptor number @fd will have in bwrap
 */
int
sandbox_bubblewrap_args_take_fd (SandboxBubblewrapArgs *self,
                                 int                    fd)
{
  g_assert (self->fds->len < PASSED_FD_FLOOR - FIRST_PASSED_FD);

  if (fd >= 0 && fd < PASSED_FD_FLOOR)
    {
      int moved = fcntl (fd, F_DUPFD_CLOEXEC, PASSED_FD_FLOOR);

      close (fd);
      fd = moved;   /* -1 on failure: the launcher then refuses to spawn */
    }
  g_array_append_val (self->fds, fd);
  return FIRST_PASSED_FD + (int) self->fds->len - 1;
}

/**
 * sandbox_bubblewrap_args_finish:
 * @self: a command line
 *
 * %NULL-terminates the argument vector, making `self->argv->pdata` an argv.
 */
void
sandbox_bubblewrap_args_finish (SandboxBubblewrapArgs *self)
{
  g_ptr_array_add (self->argv, NULL);
}

/*
 * /proc as a guest gets it: bwrap's --proc mounts a procfs of the guest's
 * pid namespace, but the kernel settings in it are the host's, and the
 * kernel guards most of them by the euid alone (a sysctl file is writable
 * by whoever is global uid 0, capabilities or not). bwrap 0.8 covers
 * /proc/sys only when access(W_OK) succeeds on the directory, which it
 * never does, so a guest that is host uid 0 could write
 * kernel/core_pattern: code execution on the host. The lists follow
 * Docker/runc's readonlyPaths and maskedPaths, plus what a review of
 * /proc found a root guest could read (slab and vmalloc layout, physical
 * page flags, every key user).
 *
 * How, with bwrap 0.8: every bind source is resolved below the host's root
 * (realpath as the sandbox user, then "/oldroot" + SRC), so
 * `--ro-bind /proc/sys /proc/sys` binds the *host's* /proc/sys over the
 * guest's; the guest's own one cannot be bound onto itself (no option
 * names a source in the new root) nor remounted (--remount-ro needs a
 * mount point, and /proc/sys is none). The host's /proc/sys is the same
 * kernel's tree and every per-namespace entry in it (net, ipc, uts, pid,
 * user) is looked up in the *reader's* namespaces, so the guest still sees
 * its own values. A mount the host adds below /proc/sys later (an
 * automounted binfmt_misc) propagates in without the read-only flag, as
 * under every bwrap --ro-bind; its files are root's, and guests are not
 * root (SandboxBubblewrapBackend:guest-uid).
 *
 * Masking binds /dev/null (on a nodev mount: opening it fails) over a
 * file, or a read-only tmpfs over a directory, and only where the host's
 * /proc has the entry: bwrap would try to create a missing destination,
 * which fails in a procfs. The guest's kernel is the host's, so the host's
 * /proc lists the same entries; /proc/sys must be there.
 */
static const char * const proc_read_only[] = { "sysrq-trigger", "irq", "bus", "fs" };
static const char * const proc_masked_files[] = {
  "kcore", "kmsg", "kallsyms", "keys", "key-users", "timer_list", "timer_stats",
  "sched_debug", "latency_stats", "slabinfo", "vmallocinfo",
  "kpagecount", "kpageflags", "kpagecgroup",
};
static const char * const proc_masked_directories[] = { "acpi", "scsi", "asound" };

static gboolean
host_proc_has (const char *name)
{
  g_autofree char *path = g_build_filename ("/proc", name, NULL);

  return access (path, F_OK) == 0;
}

static void
add_proc_covering (SandboxBubblewrapArgs *self)
{
  sandbox_bubblewrap_args_add_many (self, "--ro-bind", "/proc/sys", "/proc/sys", NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (proc_read_only); i++)
    {
      g_autofree char *path = g_build_filename ("/proc", proc_read_only[i], NULL);

      sandbox_bubblewrap_args_add_many (self, "--ro-bind-try", path, path, NULL);
    }
  for (gsize i = 0; i < G_N_ELEMENTS (proc_masked_files); i++)
    if (host_proc_has (proc_masked_files[i]))
      {
        g_autofree char *path = g_build_filename ("/proc", proc_masked_files[i], NULL);

        sandbox_bubblewrap_args_add_many (self, "--ro-bind", "/dev/null", path, NULL);
      }
  for (gsize i = 0; i < G_N_ELEMENTS (proc_masked_directories); i++)
    if (host_proc_has (proc_masked_directories[i]))
      {
        g_autofree char *path = g_build_filename ("/proc", proc_masked_directories[i], NULL);

        sandbox_bubblewrap_args_add_many (self, "--tmpfs", path, "--remount-ro", path, NULL);
      }
}

/* Moves the options (argv[1] up to the `--` at @separator) into a sealed
 * memfd that bwrap reads with `--args FD`: bwrap's own /proc/PID/cmdline
 * (which is also the guest's /proc/1/cmdline, its pid-namespace init being
 * a fork of bwrap) then shows `bwrap --args N -- COMMAND…` instead of host
 * paths such as the workspace's under the state directory. bwrap 0.8 takes
 * only options from the memfd: the command stays on the command line. */
static void
move_options_into_args_fd (SandboxBubblewrapArgs *self,
                           guint                  separator)
{
  g_autoptr(GByteArray) packed = g_byte_array_new ();
  char fd_arg[16];
  int fd;

  g_assert (separator >= 1 && separator < self->argv->len);
  g_assert (strcmp (g_ptr_array_index (self->argv, separator), "--") == 0);
  for (guint i = 1; i < separator; i++)
    {
      const char *arg = g_ptr_array_index (self->argv, i);

      g_byte_array_append (packed, (const guint8 *) arg, strlen (arg) + 1);
    }
  g_ptr_array_remove_range (self->argv, 1, separator - 1);
  fd = sandbox_bubblewrap_sealed_memfd_new ("sandbox-bwrap-args", (const char *) packed->data,
                                            packed->len);
  g_snprintf (fd_arg, sizeof fd_arg, "%d", sandbox_bubblewrap_args_take_fd (self, fd));
  g_ptr_array_insert (self->argv, 1, g_strdup ("--args"));
  g_ptr_array_insert (self->argv, 2, g_strdup (fd_arg));
}

/* Whether @arg reads the same to a shell unquoted (the common case: options
 * and paths), so that the logged command line stays readable. */
static gboolean
is_shell_word (const char *arg)
{
  if (arg[0] == '\0')
    return FALSE;
  for (const char *c = arg; *c != '\0'; c++)
    if (!g_ascii_isalnum (*c) && strchr ("-_./,:=+@%", *c) == NULL)
      return FALSE;
  return TRUE;
}

/* The whole command line, options included, as the shell would quote it:
 * at debug level in the "Sandbox" domain with the lifecycle events, so that
 * `G_MESSAGES_DEBUG=Sandbox` (and `sandboxctl -v`) show what bwrap is asked
 * to do (docs/operations.md, "Log fields"). It holds the guest's command and
 * environment, which only debug messages may; header values never reach a
 * command line. The descriptors it names are this process's. */
static void
append_quoted (GString    *line,
               const char *arg)
{
  g_autofree char *quoted = is_shell_word (arg) ? g_strdup (arg) : g_shell_quote (arg);

  g_string_append_printf (line, line->len > 0 ? " %s" : "%s", quoted);
}

/* …and the command the stub receives, after a second `--`. */
static void
log_command_line (SandboxBubblewrapArgs *self,
                  const char            *session_id,
                  SandboxCommand        *command)
{
  g_autoptr(GString) line = g_string_new (NULL);
  const char * const *args = command != NULL ? sandbox_command_get_args (command) : NULL;

  for (guint i = 0; i < self->argv->len; i++)
    append_quoted (line, g_ptr_array_index (self->argv, i));
  if (command != NULL)
    {
      append_quoted (line, "--");
      append_quoted (line, sandbox_command_get_executable (command));
      for (guint i = 0; args != NULL && args[i] != NULL; i++)
        append_quoted (line, args[i]);
    }
  /* Named by its session, so that an operator ties a sandbox to it. */
  g_log_structured ("Sandbox", G_LOG_LEVEL_DEBUG,
                    "SANDBOX_EVENT", "bwrap-argv",
                    "SANDBOX_DRIVER", "bubblewrap",
                    "SANDBOX_SESSION_ID", session_id != NULL ? session_id : "",
                    "MESSAGE", "%s", line->str);
}

/* `--as-pid-1 -- /proc/self/fd/N control=C [seccomp=S] lock=/workspace`:
 * the stub (see stub/sandbox-stub.c), which bwrap runs as the sandbox's
 * pid 1 from the descriptor @stub_fd. Returns where the `--` is. */
/* `--size N --perms MODE --tmpfs DEST`, unsized when @size is 0. */
static void
add_tmpfs (SandboxBubblewrapArgs *self,
           guint64                size,
           const char            *mode,
           const char            *dest)
{
  char size_arg[32];

  if (size > 0)
    {
      g_snprintf (size_arg, sizeof size_arg, "%" G_GUINT64_FORMAT, size);
      sandbox_bubblewrap_args_add_many (self, "--size", size_arg, NULL);
    }
  sandbox_bubblewrap_args_add_many (self, "--perms", mode, "--tmpfs", dest, NULL);
}

/* The only places a guest can keep files in memory, /tmp and /dev/shm,
 * sized to share @limits' tmp-size; /dev itself (bwrap's --dev tmpfs,
 * sized by the kernel's default) read-only once /dev/shm is in it. /run is
 * a directory on the root, read-only with it. */
static void
add_memory_backed_mounts (SandboxBubblewrapArgs         *self,
                          const SandboxBubblewrapLimits *limits)
{
  guint64 tmp_size = 0;
  guint64 shm_size = 0;

  if (limits != NULL)
    sandbox_bubblewrap_limits_split_tmp_size (limits->tmp_size, &tmp_size, &shm_size);
  sandbox_bubblewrap_args_add_many (self, "--dev", "/dev", NULL);
  add_tmpfs (self, shm_size, "01777", "/dev/shm");
  sandbox_bubblewrap_args_add_many (self, "--remount-ro", "/dev", NULL);
  add_tmpfs (self, tmp_size, "0755", "/tmp");
  sandbox_bubblewrap_args_add_many (self, "--dir", "/run", NULL);
}

/* The workspace at /workspace: the copied workspace, or a layered
 * session's keeper's overlay (this bwrap runs in the keeper's mount
 * namespace, where layers/mount is that overlay). The layers themselves
 * stay out of reach. */
static void
add_workspace (SandboxBubblewrapArgs            *self,
               const SandboxBubblewrapArgsInput *input)
{
  sandbox_bubblewrap_args_add_many (self,
                                    "--bind",
                                    input->keeper != NULL
                                    ? sandbox_bubblewrap_keeper_get_mount (input->keeper)
                                    : input->workspace,
                                    SANDBOX_WORKSPACE,
                                    NULL);
}

/* The stub's lock, which lease recovery looks for: on /workspace, the
 * copied workspace's directory, or, for a layered session, on its lock
 * file (layers/lock), which is not in the sandbox: the stub gets it open
 * (`lock-fd=N`). Returns FALSE with @error when it cannot be opened. */
static gboolean
add_lock (SandboxBubblewrapArgs            *self,
          const SandboxBubblewrapArgsInput *input,
          GError                          **error)
{
  g_autofree char *lock_arg = NULL;
  int fd;

  if (input->keeper == NULL)
    {
      sandbox_bubblewrap_args_add (self, "lock=" SANDBOX_WORKSPACE);
      return TRUE;
    }
  fd = open (sandbox_bubblewrap_keeper_get_lock (input->keeper),
             O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: could not open the session's lock: %s",
                   g_strerror (saved_errno));
      return FALSE;
    }
  lock_arg = g_strdup_printf ("lock-fd=%d", sandbox_bubblewrap_args_take_fd (self, fd));
  sandbox_bubblewrap_args_add (self, lock_arg);
  return TRUE;
}

/* `NAME=N`, N the number @fd gets in bwrap. */
static void
add_stub_fd_option (SandboxBubblewrapArgs *self,
                    const char            *name,
                    int                    fd)
{
  g_autofree char *option =
    g_strdup_printf ("%s=%d", name, sandbox_bubblewrap_args_take_fd (self, fd));

  sandbox_bubblewrap_args_add (self, option);
}

static guint
add_stub (SandboxBubblewrapArgs            *self,
          const SandboxBubblewrapArgsInput *input,
          int                               stub_fd,
          int                               control_fd,
          int                               seccomp_fd,
          int                               report_fd,
          int                               handoff_fd)
{
  g_autofree char *stub_arg = NULL;
  g_autofree char *control_arg = NULL;
  guint separator;

  sandbox_bubblewrap_args_add (self, "--as-pid-1");
  separator = self->argv->len;
  stub_arg = g_strdup_printf ("/proc/self/fd/%d", sandbox_bubblewrap_args_take_fd (self, stub_fd));
  sandbox_bubblewrap_args_add_many (self, "--", stub_arg, NULL);
  control_arg = g_strdup_printf ("control=%d", sandbox_bubblewrap_args_take_fd (self, control_fd));
  sandbox_bubblewrap_args_add (self, control_arg);
  if (seccomp_fd >= 0)
    add_stub_fd_option (self, "seccomp", seccomp_fd);
  if (report_fd >= 0)
    add_stub_fd_option (self, "report", report_fd);
  if (handoff_fd >= 0)
    add_stub_fd_option (self, "handoff", handoff_fd);
  /* The proxy's listener, which the stub hands over (see
   * stub/sandbox-stub-proxy.c), unless the session's network keeper
   * made it for all its commands. */
  if (handoff_fd >= 0 && input->policy_kind == SANDBOX_NETWORK_POLICY_ALLOW_LIST &&
      input->session_net == NULL)
    {
      g_autofree char *proxy_arg = g_strdup_printf ("proxy=%u", SANDBOX_BUBBLEWRAP_PROXY_PORT);

      sandbox_bubblewrap_args_add (self, proxy_arg);
    }
  /* A terminal the stub makes in the sandbox's own devpts and hands over
   * (see stub/sandbox-stub-terminal.c). */
  if (handoff_fd >= 0 && input->command != NULL && sandbox_command_get_terminal (input->command))
    {
      g_autofree char *terminal_arg =
        g_strdup_printf ("terminal=%ux%u", sandbox_command_get_terminal_rows (input->command),
                         sandbox_command_get_terminal_columns (input->command));

      sandbox_bubblewrap_args_add (self, terminal_arg);
    }
  return separator;
}

/* The top-level names of a runtime that the guest sees as the host's
 * /usr, /bin, /lib* and /sbin otherwise; etc is the curated /etc's
 * (sandbox_bubblewrap_etc_add_runtime()). */
static const char * const runtime_top_names[] = {
  "usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32",
};

/* The session's runtime instead of the host's /usr: each of
 * runtime_top_names that @runtime has is, if a directory, bound read-only
 * (bwrap's binds are nosuid and nodev unless --dev-bind asks otherwise),
 * if a symbolic link (a merged /usr's bin -> usr/bin), made as that link
 * inside the sandbox, where its target is resolved. A link is never a
 * bind's source: bwrap resolves sources on the host, where a runtime's
 * link could name any host path. Anything else there is left out. The
 * runtime is the store's, immutable once imported. Nothing of the host's
 * /usr is bound; the stub runs from a descriptor.
 *
 * A runtime writable per session is bound writable from the session's
 * overlay of it instead (@writable, layers/runtime-mount in the keeper's
 * namespaces, which bwrap starts in): the same names, as the stored
 * tree's top level has them, which its overlay's shows unchanged (the
 * guest never sees that top level, only what is bound of it). */
static void
add_runtime (SandboxBubblewrapArgs *self,
             const char            *runtime,
             const char            *writable)
{
  g_auto(SandboxBubblewrapFd) runtime_fd = open (runtime, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const char *bind = writable != NULL ? "--bind" : "--ro-bind";

  for (gsize i = 0; runtime_fd >= 0 && i < G_N_ELEMENTS (runtime_top_names); i++)
    {
      const char *name = runtime_top_names[i];
      g_autofree char *destination = g_strconcat ("/", name, NULL);
      g_autofree char *stored = g_build_filename (runtime, name, NULL);
      g_autofree char *source = g_build_filename (writable != NULL ? writable : runtime, name,
                                                  NULL);
      struct stat st;

      if (fstatat (runtime_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISDIR (st.st_mode))
        sandbox_bubblewrap_args_add_many (self, bind, source, destination, NULL);
      else if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (stored, NULL);

          if (target != NULL)
            sandbox_bubblewrap_args_add_many (self, "--symlink", target, destination, NULL);
        }
    }
}

/* An allow-all guest's resolv.conf, naming slirp4netns's DNS (the
 * curated /etc writes it itself). */
static void
add_resolv_conf (SandboxBubblewrapArgs            *self,
                 const SandboxBubblewrapArgsInput *input)
{
  static const char resolv_conf[] = SANDBOX_BUBBLEWRAP_NETWORK_RESOLV_CONF;
  char fd_arg[16];
  int fd;

  if (input->etc != NULL)
    return;
  fd = sandbox_bubblewrap_sealed_memfd_new ("sandbox-resolv", resolv_conf,
                                            sizeof resolv_conf - 1);
  g_snprintf (fd_arg, sizeof fd_arg, "%d", sandbox_bubblewrap_args_take_fd (self, fd));
  sandbox_bubblewrap_args_add_many (self, "--perms", "0644", "--ro-bind-data", fd_arg,
                                    "/etc/resolv.conf", NULL);
}

/* An allow-all guest's network: a namespace of its own like deny-all's
 * (--unshare-all), which slirp4netns joins while bwrap waits (see
 * sandbox-bubblewrap-network.c), and a resolv.conf naming its DNS. */
static gboolean
add_own_network (SandboxBubblewrapArgs             *self,
                 const SandboxBubblewrapArgsInput  *input,
                 GError                           **error)
{
  char info_arg[16], block_arg[16];
  int info_fd, block_fd;

  self->network = sandbox_bubblewrap_network_new (input->host_loopback, &info_fd, &block_fd,
                                                  error);
  if (self->network == NULL)
    return FALSE;
  g_snprintf (info_arg, sizeof info_arg, "%d", sandbox_bubblewrap_args_take_fd (self, info_fd));
  g_snprintf (block_arg, sizeof block_arg, "%d", sandbox_bubblewrap_args_take_fd (self, block_fd));
  sandbox_bubblewrap_args_add_many (self, "--info-fd", info_arg, "--block-fd", block_arg, NULL);
  add_resolv_conf (self, input);
  return TRUE;
}

/**
 * sandbox_bubblewrap_args_new_for_sandbox:
 * @input: the session's setup; its command, if any, is only logged
 * @status_fd: (transfer full): the write end of the pipe bwrap reports its
 *   status on (`--json-status-fd`)
 * @seccomp_fd: (transfer full): a descriptor holding @input's seccomp
 *   program, or -1 when it has none
 * @control_fd: (transfer full): where the stub reads its command message
 *   (to EOF)
 * @report_fd: (transfer full): where the stub reports, once the guest has
 *   exited, that no process of the sandbox is left (`report=`; see
 *   stub/sandbox-stub.c), or -1 for no report
 * @handoff_fd: (transfer full): the stub's end of the socket on which it
 *   hands descriptors to the host (`handoff=`, see
 *   sandbox_bubblewrap_stub_handoff_open()), or -1 for none; under an
 *   allow-list the stub then binds the proxy's listener and hands it over
 *   (`proxy=`%SANDBOX_BUBBLEWRAP_PROXY_PORT)
 * @error: return location for a #GError
 *
 * Builds `bwrap --json-status-fd N <reference bubblewrapArgs> --as-pid-1 --
 * /proc/self/fd/N control=C [seccomp=S] lock=/workspace`: a sandbox whose first process is
 * the trusted stub, which runs the command it reads on @control_fd.
 * Deviations from the reference's list, each deliberate:
 *
 * - `--unshare-user` follows `--unshare-all`. `--unshare-all` only *tries* a
 *   user namespace; asking for it outright makes bwrap fail instead of
 *   silently sharing the host's user namespace.
 * - /proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus and /proc/fs
 *   are read-only and the host-wide state files of /proc masked, after
 *   `--proc` (see add_proc_covering()).
 * - `--disable-userns`: the guest cannot create nested user namespaces
 *   (`unshare -Ur` fails), the door to most namespaced kernel attack
 *   surface.
 * - `--size N` before `--tmpfs /tmp` and a `--tmpfs /dev/shm` of its own:
 *   the two share the backend's tmp-size, 320 MiB unless it says otherwise
 *   (0 leaves the sizes out: each tmpfs may then fill half of the host's
 *   RAM); /dev (`--remount-ro /dev`) and the root (`--remount-ro /`, last)
 *   are read-only, so a guest holds no more in memory-backed files.
 * - The gateway socket is bound only when the session has a gateway
 *   (an allow-list policy). The reference binds it always; binding nothing
 *   under deny-all and allow-all is less attack surface.
 * - The socket appears at %SANDBOX_GATEWAY_GUEST_SOCKET, and with it the
 *   gateway's CA certificate (see sandbox_bubblewrap_etc_add_gateway_ca()).
 * - A curated read-only /etc and `--hostname sandbox`, unless the backend's
 *   curated-etc is off (see sandbox-bubblewrap-etc.c).
 * - `--as-pid-1` and the stub (stub/sandbox-stub.c) instead of bwrap's own
 *   init: the stub takes the read lock on /workspace that `--lock-file`
 *   took (lease recovery finds a dead owner's sandboxes by it), installs
 *   the seccomp filter once where bwrap's `--seccomp` installed it twice
 *   (in its init and in the command), and receives the command's argv,
 *   environment (PATH and HOME as the reference sets them, the command's,
 *   PWD) and cwd on @control_fd instead of bwrap's `--setenv`, `--chdir`
 *   and command line — which is what lets a sandbox start before its
 *   command is known. bwrap runs it from an inherited descriptor
 *   (`/proc/self/fd/N`), so the sandbox needs no mount for it.
 * - The options reach bwrap through `--args FD`, a sealed memfd, so that
 *   the guest's /proc/1/cmdline names no host path (see
 *   move_options_into_args_fd()).
 *
 * When the guest is not the host (a root host), the command line is the
 * same; @self's guest_view says how bwrap's process reaches the workspace
 * and the socket as the guest and becomes it before exec.
 *
 * Returns: (transfer full): the command line, not yet finished, or %NULL
 *   with %SANDBOX_ERROR_UNAVAILABLE when the stub is missing
 */
SandboxBubblewrapArgs *
sandbox_bubblewrap_args_new_for_sandbox (const SandboxBubblewrapArgsInput  *input,
                                         int                                status_fd,
                                         int                                seccomp_fd,
                                         int                                control_fd,
                                         int                                report_fd,
                                         int                                handoff_fd,
                                         GError                           **error)
{
  g_autoptr(SandboxBubblewrapArgs) self = sandbox_bubblewrap_args_new (input->executable);
  int stub_fd = sandbox_bubblewrap_stub_open (error);
  char status_fd_arg[16];
  guint separator;

  if (stub_fd < 0)
    {
      sandbox_bubblewrap_fd_close (status_fd);
      sandbox_bubblewrap_fd_close (seccomp_fd);
      sandbox_bubblewrap_fd_close (control_fd);
      sandbox_bubblewrap_fd_close (report_fd);
      sandbox_bubblewrap_fd_close (handoff_fd);
      return NULL;
    }

  g_snprintf (status_fd_arg, sizeof status_fd_arg, "%d",
              sandbox_bubblewrap_args_take_fd (self, status_fd));
  sandbox_bubblewrap_args_add_many (self, "--json-status-fd", status_fd_arg, NULL);

  sandbox_bubblewrap_args_add_many (self,
                                    "--unshare-all",
                                    "--unshare-user",
                                    "--disable-userns",
                                    "--die-with-parent",
                                    "--new-session",
                                    "--cap-drop", "ALL",
                                    NULL);
  if (input->runtime != NULL)
    add_runtime (self, input->runtime,
                 input->keeper != NULL ? sandbox_bubblewrap_keeper_get_runtime_mount (input->keeper)
                                       : NULL);
  else
    sandbox_bubblewrap_args_add_many (self,
                                      "--ro-bind", "/usr", "/usr",
                                      "--ro-bind", "/lib", "/lib",
                                      "--ro-bind", "/lib64", "/lib64",
                                      "--symlink", "usr/bin", "/bin",
                                      "--symlink", "usr/sbin", "/sbin",
                                      NULL);
  sandbox_bubblewrap_args_add_many (self, "--proc", "/proc", NULL);
  /* The session's network namespace, which the launcher starts bwrap in. */
  if (input->session_net != NULL)
    sandbox_bubblewrap_args_add (self, "--share-net");
  add_proc_covering (self);
  add_memory_backed_mounts (self, input->limits);
  add_workspace (self, input);
  if (input->runtime != NULL)
    sandbox_bubblewrap_etc_add_runtime (self,
                                        input->guest != NULL ? input->guest->uid : getuid (),
                                        input->guest != NULL ? input->guest->gid : getgid (),
                                        input->etc,
                                        input->policy_kind == SANDBOX_NETWORK_POLICY_ALLOW_ALL,
                                        input->runtime);
  else if (input->etc != NULL)
    sandbox_bubblewrap_etc_add (self,
                                input->guest != NULL ? input->guest->uid : getuid (),
                                input->guest != NULL ? input->guest->gid : getgid (),
                                input->etc, input->policy_kind == SANDBOX_NETWORK_POLICY_ALLOW_ALL);
  if (input->gateway_socket != NULL)
    sandbox_bubblewrap_args_add_many (self, "--ro-bind", input->gateway_socket,
                                      SANDBOX_GATEWAY_GUEST_SOCKET, NULL);
  if (input->gateway_socket != NULL && input->gateway_ca != NULL)
    sandbox_bubblewrap_etc_add_gateway_ca (self, input->gateway_ca, input->etc != NULL,
                                           input->runtime);
  sandbox_bubblewrap_args_add (self, "--clearenv");
  /* The curated /etc writes resolv.conf itself, before it is read-only. */
  if (input->policy_kind == SANDBOX_NETWORK_POLICY_ALLOW_ALL && input->session_net != NULL)
    add_resolv_conf (self, input);
  else if (input->policy_kind == SANDBOX_NETWORK_POLICY_ALLOW_ALL &&
           !add_own_network (self, input, error))
    {
      sandbox_bubblewrap_fd_close (seccomp_fd);
      sandbox_bubblewrap_fd_close (control_fd);
      sandbox_bubblewrap_fd_close (report_fd);
      sandbox_bubblewrap_fd_close (handoff_fd);
      return NULL;
    }
  /* The root's tmpfs is the guest's as much as /tmp is, and unbounded:
   * read-only once every mount point on it is made (as flatpak does). */
  sandbox_bubblewrap_args_add_many (self, "--remount-ro", "/", NULL);
  separator = add_stub (self, input, stub_fd, control_fd, seccomp_fd, report_fd, handoff_fd);
  if (!add_lock (self, input, error))
    return NULL;
  log_command_line (self, input->session_id, input->command);
  move_options_into_args_fd (self, separator);

  if (input->session_net != NULL)
    self->session_net = sandbox_bubblewrap_session_net_ref (input->session_net);
  if (input->keeper != NULL)
    {
      self->enter_pid = sandbox_bubblewrap_keeper_get_pid (input->keeper);
      /* Stopped: never a sandbox outside the overlay's namespaces, where
       * layers/mount is an empty directory. */
      if (self->enter_pid == 0)
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       "Sandbox process could not start: the session's overlay is gone");
          return NULL;
        }
      /* The keeper's mount namespace, which bwrap runs in, has the way to
       * its layers made for the guest's ids already (the keeper's own
       * guest view): only the gateway socket may need one, and a deny-all
       * or allow-all sandbox gets no mount of its own for that. */
      self->guest_view = sandbox_bubblewrap_guest_view_new (input->guest, NULL,
                                                            input->gateway_socket);
    }
  else
    self->guest_view = sandbox_bubblewrap_guest_view_new (input->guest, input->workspace,
                                                          input->gateway_socket);
  if (input->runtime != NULL)
    sandbox_bubblewrap_guest_view_expose_runtime (self->guest_view, input->runtime);
  return g_steal_pointer (&self);
}

/**
 * sandbox_bubblewrap_args_new_for_command:
 * @input: the session's setup and the command
 * @status_fd: (transfer full): as for sandbox_bubblewrap_args_new_for_sandbox()
 * @seccomp_fd: (transfer full): as for sandbox_bubblewrap_args_new_for_sandbox()
 * @report_fd: (transfer full): as for sandbox_bubblewrap_args_new_for_sandbox()
 * @handoff_fd: (transfer full): as for sandbox_bubblewrap_args_new_for_sandbox()
 * @message: (nullable): the command's stub message, if made already
 * @error: return location for a #GError
 *
 * A sandbox for @input's command, started now: the stub's control
 * descriptor is a sealed memfd that holds the command's message already.
 *
 * Returns: (transfer full): the command line, not yet finished, or %NULL
 *   with %SANDBOX_ERROR_UNAVAILABLE
 */
SandboxBubblewrapArgs *
sandbox_bubblewrap_args_new_for_command (const SandboxBubblewrapArgsInput  *input,
                                         int                                status_fd,
                                         int                                seccomp_fd,
                                         int                                report_fd,
                                         int                                handoff_fd,
                                         GBytes                            *message,
                                         GError                           **error)
{
  gboolean proxy = handoff_fd >= 0 && input->policy_kind == SANDBOX_NETWORK_POLICY_ALLOW_LIST;
  g_autoptr(GBytes) made = message != NULL ? g_bytes_ref (message)
                                           : sandbox_bubblewrap_stub_message_new (input->command,
                                                                                  proxy, error);
  int control_fd;

  if (made == NULL)
    {
      sandbox_bubblewrap_fd_close (status_fd);
      sandbox_bubblewrap_fd_close (seccomp_fd);
      sandbox_bubblewrap_fd_close (report_fd);
      sandbox_bubblewrap_fd_close (handoff_fd);
      return NULL;
    }
  /* A failed memfd is passed as -1, which the launcher refuses to spawn with. */
  control_fd = sandbox_bubblewrap_sealed_memfd_new ("sandbox-command",
                                                    g_bytes_get_data (made, NULL),
                                                    g_bytes_get_size (made));
  return sandbox_bubblewrap_args_new_for_sandbox (input, status_fd, seccomp_fd, control_fd,
                                                  report_fd, handoff_fd, error);
}

/**
 * sandbox_bubblewrap_args_set_net_extras:
 * @self: a finished command line
 * @extras: what the launcher does for it
 *
 * Tells the launcher which session network namespace bwrap starts in.
 */
void
sandbox_bubblewrap_args_set_net_extras (const SandboxBubblewrapArgs  *self,
                                        SandboxBubblewrapSpawnExtras *extras)
{
  if (self->session_net == NULL)
    return;
  extras->net_pid = sandbox_bubblewrap_session_net_get_pid (self->session_net);
  extras->net_owns_user = sandbox_bubblewrap_session_net_owns_user (self->session_net);
}
