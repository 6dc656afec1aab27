/* sandbox-bubblewrap-stub.c — the host's side of the trusted stub
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>

#include <gio/gunixfdmessage.h>

#include "sandbox-bubblewrap-stub-private.h"
#include "stub/sandbox-stub-message.h"

/*
 * Every sandbox runs stub/sandbox-stub.c first, as its pid 1: it takes the
 * workspace lock, runs the pre-exec steps, drops every capability,
 * installs the seccomp filter once (the guest inherits it: bwrap's own
 * init, which would need a second copy, does not exist under --as-pid-1),
 * then reads the command message and runs the guest. This file finds the
 * stub and writes the message (the format is in stub/sandbox-stub-message.h).
 */

#define STUB_NAME SANDBOX_BUBBLEWRAP_STUB_NAME

static char *
find_stub (void)
{
  const char *configured = secure_getenv ("SANDBOX_BUBBLEWRAP_STUB");
  Dl_info module;

  if (configured != NULL && configured[0] != '\0')
    return g_strdup (configured);
  /* A build tree: the stub is built beside the module. As trusted as the
   * module itself, which is running. */
  if (dladdr ((void *) find_stub, &module) != 0 && module.dli_fname != NULL)
    {
      g_autofree char *directory = g_path_get_dirname (module.dli_fname);
      g_autofree char *beside = g_build_filename (directory, STUB_NAME, NULL);

      if (g_file_test (beside, G_FILE_TEST_IS_EXECUTABLE) &&
          !g_file_test (beside, G_FILE_TEST_IS_DIR))
        return g_steal_pointer (&beside);
    }
  return g_strdup (SANDBOX_STUB_PATH);
}

/**
 * sandbox_bubblewrap_stub_get_path:
 * @error: return location for a #GError
 *
 * Finds the stub: `SANDBOX_BUBBLEWRAP_STUB` when set (tests, bench/), else
 * beside the driver module when it is there (a build tree), else where it
 * is installed (`$libexecdir/libsandbox`). Looked up once per process.
 *
 * Returns: (transfer none): its absolute path, or %NULL with
 *   %SANDBOX_ERROR_UNAVAILABLE when it is not an executable file there
 */
const char *
sandbox_bubblewrap_stub_get_path (GError **error)
{
  static gsize initialized = 0;
  static char *path = NULL;

  if (g_once_init_enter (&initialized))
    {
      g_autofree char *found = find_stub ();

      if (g_path_is_absolute (found) && g_file_test (found, G_FILE_TEST_IS_EXECUTABLE) &&
          !g_file_test (found, G_FILE_TEST_IS_DIR))
        path = g_steal_pointer (&found);
      else
        g_warning ("The sandbox stub %s is not an executable file", found);
      g_once_init_leave (&initialized, 1);
    }
  if (path == NULL)
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                 "Sandbox process could not start: the sandbox stub is missing (set "
                 "SANDBOX_BUBBLEWRAP_STUB or install it at %s)", SANDBOX_STUB_PATH);
  return path;
}

/* Whether the ELF file on @fd asks for no program interpreter: a 64-bit
 * executable of this machine's byte order without PT_INTERP. Anything
 * else, or a file that cannot be read, is not. */
static gboolean
elf_has_no_interpreter (int fd)
{
  Elf64_Ehdr header;

  if (pread (fd, &header, sizeof header, 0) != (gssize) sizeof header ||
      memcmp (header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != (G_BYTE_ORDER == G_LITTLE_ENDIAN ? ELFDATA2LSB : ELFDATA2MSB) ||
      header.e_phentsize != sizeof (Elf64_Phdr) || header.e_phnum == 0 ||
      header.e_phnum > 1024)
    return FALSE;
  for (guint i = 0; i < header.e_phnum; i++)
    {
      Elf64_Phdr program;

      if (pread (fd, &program, sizeof program,
                 (off_t) (header.e_phoff + (guint64) i * sizeof program)) != (gssize) sizeof program ||
          program.p_type == PT_INTERP)
        return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_stub_check_static:
 * @error: return location for a #GError
 *
 * The stub runs inside the sandbox before it has dropped its capabilities
 * and installed the seccomp filter. Linked dynamically, it would load the
 * dynamic loader and libc of the sandbox's /usr, which on a runtime are
 * the runtime's (an image's author's; on a runtime writable per session,
 * the guest's own) and could skip every one of its steps. So a session on
 * a runtime needs a static stub (the build makes one where libc.a is
 * there). Checked once per process.
 *
 * Returns: %TRUE when the stub needs no program interpreter, or %FALSE
 *   with %G_IO_ERROR_NOT_SUPPORTED
 */
gboolean
sandbox_bubblewrap_stub_check_static (GError **error)
{
  static gsize initialized = 0;
  static gboolean is_static = FALSE;
  const char *path = sandbox_bubblewrap_stub_get_path (error);

  if (path == NULL)
    return FALSE;
  if (g_once_init_enter (&initialized))
    {
      int fd = open (path, O_RDONLY | O_CLOEXEC);

      is_static = fd >= 0 && elf_has_no_interpreter (fd);
      if (fd >= 0)
        close (fd);
      g_once_init_leave (&initialized, 1);
    }
  if (!is_static)
    g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                 "Sessions on a runtime need a statically linked sandbox stub, and %s is not "
                 "one (it would load the runtime's own dynamic loader and libc before its "
                 "seccomp filter); build it where libc.a is installed (libc6-dev)", path);
  return is_static;
}

/**
 * sandbox_bubblewrap_stub_open:
 * @error: return location for a #GError
 *
 * bwrap runs the stub as `/proc/self/fd/N`, N a descriptor it inherits:
 * the sandbox needs no mount for it wherever it is installed, and its
 * /proc/1/cmdline names no host path. The file is opened once per process
 * (`O_PATH`); each sandbox gets a duplicate.
 *
 * Returns: a close-on-exec descriptor of the stub for one bwrap, or -1
 *   with %SANDBOX_ERROR_UNAVAILABLE
 */
int
sandbox_bubblewrap_stub_open (GError **error)
{
  static gsize initialized = 0;
  static int stub_fd = -1;
  int fd;

  if (g_once_init_enter (&initialized))
    {
      const char *path = sandbox_bubblewrap_stub_get_path (NULL);

      if (path != NULL)
        stub_fd = open (path, O_PATH | O_CLOEXEC);
      g_once_init_leave (&initialized, 1);
    }
  if (stub_fd < 0)
    return sandbox_bubblewrap_stub_get_path (error) != NULL
           ? (g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "Sandbox process could not start: could not open the sandbox stub"), -1)
           : -1;
  fd = fcntl (stub_fd, F_DUPFD_CLOEXEC, 3);
  if (fd < 0)
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                 "Sandbox process could not start: %s", g_strerror (errno));
  return fd;
}

static void
append_u32 (GByteArray *message,
            guint32     value)
{
  g_byte_array_append (message, (const guint8 *) &value, sizeof value);
}

static void
append_string (GByteArray *message,
               const char *string)
{
  g_byte_array_append (message, (const guint8 *) string, strlen (string) + 1);
}

/* Where an allow-list guest's HTTP clients look for their proxy: curl,
 * Python, pip, git, npm and Go read one spelling or the other. */
static const char * const proxy_variables[] = {
  "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
};

/* Where they look for the CAs they trust, which must name the gateway's:
 * OpenSSL (and so Python's ssl, git, wget), Python requests, Node, git,
 * curl and pip. */
static const char * const ca_variables[] = {
  "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO",
  "CURL_CA_BUNDLE", "PIP_CERT",
};

/* The guest's environment as bwrap built it before the stub: PATH and HOME,
 * with @proxy the proxy variables, the command's (a key given again
 * replaces the earlier value in place), and PWD, which bwrap set to the
 * directory it entered. */
static char **
guest_environment (SandboxCommand *command,
                   const char     *cwd,
                   gboolean        proxy)
{
  g_auto(GStrv) pairs = sandbox_command_get_environment (command);
  char **environment = g_new0 (char *, 1);

  environment = g_environ_setenv (environment, "PATH", "/usr/bin:/bin", TRUE);
  environment = g_environ_setenv (environment, "HOME", SANDBOX_WORKSPACE, TRUE);
  if (proxy)
    {
      g_autofree char *url = g_strdup_printf ("http://127.0.0.1:%u", SANDBOX_BUBBLEWRAP_PROXY_PORT);

      for (gsize i = 0; i < G_N_ELEMENTS (proxy_variables); i++)
        environment = g_environ_setenv (environment, proxy_variables[i], url, TRUE);
      environment = g_environ_setenv (environment, "no_proxy", "localhost,127.0.0.1", TRUE);
      for (gsize i = 0; i < G_N_ELEMENTS (ca_variables); i++)
        environment = g_environ_setenv (environment, ca_variables[i],
                                        SANDBOX_BUBBLEWRAP_GATEWAY_CA_FILE, TRUE);
    }
  for (guint i = 0; pairs != NULL && pairs[i] != NULL; i++)
    {
      const char *equals = strchr (pairs[i], '=');
      g_autofree char *key = NULL;

      /* Validated by the core: every entry is KEY=VALUE with a non-empty key. */
      if (equals == NULL || equals == pairs[i])
        continue;
      key = g_strndup (pairs[i], equals - pairs[i]);
      environment = g_environ_setenv (environment, key, equals + 1, TRUE);
    }
  return g_environ_setenv (environment, "PWD", cwd, TRUE);
}

/**
 * sandbox_bubblewrap_stub_message_new:
 * @command: a validated command
 * @proxy: whether the command's sandbox has the proxy listener (an
 *   allow-list's): its environment then names it (`http_proxy` and its
 *   kin, `no_proxy` for the loopback) and the gateway's CA
 *   (`SSL_CERT_FILE` and its kin, %SANDBOX_BUBBLEWRAP_GATEWAY_CA_FILE),
 *   unless the command sets them itself
 * @error: return location for a #GError
 *
 * Returns: (transfer full): @command as the stub reads it, or %NULL with
 *   %SANDBOX_ERROR_UNAVAILABLE when it is larger than execve() takes
 *   (%SANDBOX_ERROR_PATH for a cwd outside the workspace)
 */
GBytes *
sandbox_bubblewrap_stub_message_new (SandboxCommand  *command,
                                     gboolean         proxy,
                                     GError         **error)
{
  const char * const *args = sandbox_command_get_args (command);
  g_autofree char *cwd = NULL;
  g_auto(GStrv) environment = NULL;
  g_autoptr(GByteArray) message = g_byte_array_new ();
  guint argc = 1 + (args != NULL ? g_strv_length ((char **) args) : 0);
  guint envc;
  gsize strings = 0;
  guint32 length;

  /* Sessions canonicalize it; a coding launch may still say ".". */
  cwd = sandbox_path_canonicalize (sandbox_command_get_cwd (command) != NULL
                                   ? sandbox_command_get_cwd (command) : ".", error);
  if (cwd == NULL)
    return NULL;
  environment = guest_environment (command, cwd, proxy);
  envc = g_strv_length (environment);

  append_u32 (message, STUB_MESSAGE_MAGIC);
  append_u32 (message, STUB_MESSAGE_VERSION);
  append_u32 (message, argc);
  append_u32 (message, envc);
  append_u32 (message, 0);   /* the length, once known */
  append_string (message, cwd);
  append_string (message, sandbox_command_get_executable (command));
  for (guint i = 0; args != NULL && args[i] != NULL; i++)
    append_string (message, args[i]);
  for (guint i = 0; i < envc; i++)
    append_string (message, environment[i]);
  strings = 1 + (gsize) argc + envc;

  if (message->len > STUB_MESSAGE_MAX_SIZE || strings > STUB_MESSAGE_MAX_STRINGS)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: its arguments and environment "
                   "exceed %u bytes or %u strings",
                   STUB_MESSAGE_MAX_SIZE, STUB_MESSAGE_MAX_STRINGS);
      return NULL;
    }
  length = message->len - STUB_MESSAGE_HEADER_SIZE;
  memcpy (message->data + 4 * sizeof (guint32), &length, sizeof length);
  return g_byte_array_free_to_bytes (g_steal_pointer (&message));
}

/**
 * sandbox_bubblewrap_stub_steal_passed_fd:
 * @messages: (array length=n_messages): the control messages
 *   g_socket_receive_message() gave; each is unreffed here, the array is
 *   the caller's
 * @n_fds: (out) (optional): how many descriptors came with them in all
 *
 * The host's side of stub/sandbox-stub-descriptor.c, for the keeper's
 * answer and the stub's handoffs alike.
 *
 * Returns: the first descriptor passed (close-on-exec), or -1; every other
 *   one is closed
 */
int
sandbox_bubblewrap_stub_steal_passed_fd (GSocketControlMessage **messages,
                                         gint                    n_messages,
                                         guint                  *n_fds)
{
  guint count = 0;
  int fd = -1;

  for (gint i = 0; i < n_messages; i++)
    {
      if (G_IS_UNIX_FD_MESSAGE (messages[i]))
        {
          gint n = 0;
          g_autofree int *fds = g_unix_fd_message_steal_fds (G_UNIX_FD_MESSAGE (messages[i]), &n);

          for (gint k = 0; k < n; k++, count++)
            if (fd < 0)
              fd = fds[k];
            else
              sandbox_bubblewrap_fd_close (fds[k]);
        }
      g_object_unref (messages[i]);
    }
  if (n_fds != NULL)
    *n_fds = count;
  return fd;
}

/**
 * sandbox_bubblewrap_stub_handoff_open:
 * @fds: (out caller-allocates): the host's end, then the stub's
 * @error: return location for a #GError
 *
 * The socket on which a stub hands descriptors to the host (its
 * `handoff=FD`; the format is in stub/sandbox-stub-message.h): a
 * close-on-exec SOCK_SEQPACKET pair, so that each handoff is one datagram.
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_UNAVAILABLE
 */
gboolean
sandbox_bubblewrap_stub_handoff_open (int      fds[2],
                                      GError **error)
{
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: no handoff socket: %s", g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_stub_handoff_receive:
 * @channel: the host's end of a handoff socket, non-blocking
 * @kind: (out): what the descriptor is, a StubHandoffKind
 * @error: return location for a #GError
 *
 * Takes the next handoff, without blocking. A datagram that is not exactly
 * a StubHandoff of a known kind with one descriptor is refused, and any
 * descriptor that came with it closed.
 *
 * Returns: the descriptor (close-on-exec), or -1 with
 *   %G_IO_ERROR_WOULD_BLOCK when none waits, %G_IO_ERROR_CLOSED when the
 *   stub is gone, %G_IO_ERROR_INVALID_DATA for a malformed handoff and
 *   another #GIOErrorEnum when the socket fails
 */
int
sandbox_bubblewrap_stub_handoff_receive (GSocket  *channel,
                                         guint32  *kind,
                                         GError  **error)
{
  /* One byte more than a handoff, to see a longer datagram. */
  union
  {
    StubHandoff handoff;
    char bytes[sizeof (StubHandoff) + 1];
  } buffer;
  GInputVector vector = { &buffer, sizeof buffer };
  g_autofree GSocketControlMessage **messages = NULL;
  gint n_messages = 0;
  gint flags = 0;
  guint n_fds = 0;
  gssize got;
  int fd;

  got = g_socket_receive_message (channel, NULL, &vector, 1, &messages, &n_messages, &flags,
                                  NULL, error);
  fd = sandbox_bubblewrap_stub_steal_passed_fd (messages, n_messages, &n_fds);
  if (got < 0)
    return -1;
  if (got == 0 && n_fds == 0)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CLOSED, "The sandbox stub is gone");
      return -1;
    }
  if (got != sizeof (StubHandoff) || (flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || n_fds != 1 ||
      buffer.handoff.magic != STUB_HANDOFF_MAGIC ||
      (buffer.handoff.kind != STUB_HANDOFF_PROXY_LISTENER &&
       buffer.handoff.kind != STUB_HANDOFF_TERMINAL &&
       buffer.handoff.kind != STUB_HANDOFF_GUEST))
    {
      sandbox_bubblewrap_fd_close (fd);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "The sandbox stub handed over something malformed");
      return -1;
    }
  *kind = buffer.handoff.kind;
  return fd;
}

/**
 * sandbox_bubblewrap_stub_receive_answer:
 * @socket: the host's end of a stub helper's socket (a keeper's, a
 *   network keeper's), blocking or with a timeout
 * @expected: the answer's kind: one byte
 * @fd: (out): the descriptor that came with it, or -1
 * @error: return location for a #GError
 *
 * Reads one answer of the stub in a helper mode: @expected with at most
 * one descriptor, or "E" and a message.
 *
 * Returns: %TRUE, or %FALSE with @error holding the helper's message, the
 *   socket's failure or "it exited" (no descriptor kept)
 */
gboolean
sandbox_bubblewrap_stub_receive_answer (GSocket  *socket,
                                        char      expected,
                                        int      *fd,
                                        GError  **error)
{
  g_autofree GSocketControlMessage **messages = NULL;
  g_autoptr(GError) cause = NULL;
  char buffer[256];
  GInputVector vector = { buffer, sizeof buffer - 1 };
  gint n_messages = 0;
  gssize got;

  got = g_socket_receive_message (socket, NULL, &vector, 1, &messages, &n_messages, NULL, NULL,
                                  &cause);
  *fd = sandbox_bubblewrap_stub_steal_passed_fd (messages, n_messages, NULL);
  if (got == 1 && buffer[0] == expected)
    return TRUE;
  sandbox_bubblewrap_clear_fd (fd);
  buffer[got > 0 ? got : 0] = '\0';
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       cause != NULL ? cause->message
                       : got > 1 && buffer[0] == 'E' ? buffer + 1 : "it exited before it answered");
  return FALSE;
}
