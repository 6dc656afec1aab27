/* test-escape-fds.c — descriptors and sockets a guest could inherit or reach
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The attack class "fds and sockets inherited or reachable" of issue 14,
 * modelled on:
 * - runc CVE-2024-21626 ("Leaky Vessels"): a host directory descriptor
 *   leaked into the container, reached as /proc/self/fd/N or set as the
 *   process's cwd, gave the host filesystem;
 * - runc CVE-2016-9962: descriptors of the host's runc init reachable from
 *   the container before it dropped them;
 * - containerd CVE-2020-15257: an abstract unix socket of the host
 *   (containerd-shim's API) reachable from a container sharing the host's
 *   network namespace;
 * - flatpak's and bubblewrap's reliance on the caller to pass only the
 *   descriptors it means to (bwrap keeps whatever it inherits).
 * Run as root and, through run-unprivileged.sh, as an unprivileged user.
 */

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "escape-common.h"

/* Opens descriptors an application might have without O_CLOEXEC. */
static void
leak_host_descriptors (int leaked[4])
{
  int pair[2];

  leaked[0] = open ("/", O_RDONLY | O_DIRECTORY);
  leaked[1] = open (g_get_tmp_dir (), O_RDONLY | O_DIRECTORY);
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM, 0, pair), ==, 0);
  leaked[2] = pair[0];
  leaked[3] = pair[1];
  for (guint i = 0; i < 4; i++)
    {
      g_assert_cmpint (leaked[i], >=, 0);
      g_assert_cmpint (fcntl (leaked[i], F_GETFD) & FD_CLOEXEC, ==, 0);
    }
}

static void
close_descriptors (int fds[4])
{
  for (guint i = 0; i < 4; i++)
    close (fds[i]);
}

/* Descriptors the guest's command holds: exactly stdin, stdout and stderr,
 * all pipes, even though the host process holds inheritable descriptors
 * to / and $TMPDIR and a socket (CVE-2024-21626, CVE-2016-9962).
 *
 * To see it fail: remove the posix_spawn_file_actions_addclosefrom_np()
 * call and the close_range() calls in drivers/bubblewrap/
 * sandbox-bubblewrap-launcher.c: bwrap keeps what it inherits, and the
 * guest then lists the leaked descriptors (a directory of the host among
 * them). */
static void
test_only_stdio (void)
{
  EscapeSession s = { 0 };
  int leaked[4];
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;

  escape_session_open (&s, NULL);
  escape_install_probe (s.session);
  leak_host_descriptors (leaked);

  out = escape_probe (s.session, "fds");
  lines = g_strsplit (out, "\n", -1);
  if (g_strv_length (lines) != 4)   /* three lines and the empty tail */
    g_error ("the guest holds more than stdin, stdout and stderr:\n%s", out);
  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *prefix = g_strdup_printf ("%u pipe:[", i);

      if (!g_str_has_prefix (lines[i], prefix))
        g_error ("guest descriptor %u is not a pipe: %s\n%s", i, lines[i], out);
    }
  g_assert_cmpstr (lines[3], ==, "");

  close_descriptors (leaked);
  escape_session_close (&s);
}

/* Every descriptor of every process the guest can see (its command and
 * bwrap's init, pid 1 of the namespace) is a pipe, an eventfd, the
 * workspace (the init's --lock-file) or the listing's own /proc
 * directory: no directory or file of the host, no socket. The same
 * defence as test_only_stdio(), seen from /proc/N/fd; it fails the same
 * way. */
static void
test_no_process_holds_host_descriptors (void)
{
  EscapeSession s = { 0 };
  int leaked[4];
  g_autofree char *out = NULL;
  g_auto(GStrv) lines = NULL;
  guint seen = 0;

  escape_session_open (&s, NULL);
  leak_host_descriptors (leaked);

  out = escape_sh (s.session,
                   "for f in /proc/[0-9]*/fd/* /proc/[0-9]*/cwd /proc/[0-9]*/root; do "
                   "  t=$(readlink \"$f\") && printf '%s %s\\n' \"$f\" \"$t\"; "
                   "done");
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      const char *target = strchr (lines[i], ' ');

      g_assert_nonnull (target);
      target++;
      seen++;
      if (g_str_has_prefix (target, "pipe:[") ||
          g_str_equal (target, "anon_inode:[eventfd]") ||
          g_str_equal (target, "/workspace") ||
          g_str_equal (target, "/") ||             /* /proc/N/root */
          g_str_has_prefix (target, "/proc/"))     /* the glob's own directory */
        continue;
      g_error ("a guest-visible process holds %s\n%s", lines[i], out);
    }
  g_assert_cmpuint (seen, >=, 6);

  close_descriptors (leaked);
  escape_session_close (&s);
}

/* CVE-2024-21626's other half: the process's working directory set to a
 * descriptor path. A command's cwd is a workspace path; `/proc/self/fd/3`,
 * `..` and absolute host paths are refused before anything runs.
 *
 * To see it fail: make sandbox_session_spawn() pass the cwd through
 * without sandbox_path_canonicalize(); the spawn then reaches bwrap. */
static void
test_cwd_is_never_a_descriptor (void)
{
  EscapeSession s = { 0 };
  static const char * const hostile[] = {
    "/proc/self/fd/3", "/proc/1/cwd", "..", "../..", "/", "/etc", "dir/../..", NULL
  };

  escape_session_open (&s, NULL);
  for (guint i = 0; hostile[i] != NULL; i++)
    {
      g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/pwd");
      g_autoptr(SandboxResult) result = NULL;
      g_autoptr(GError) error = NULL;

      sandbox_command_set_cwd (command, hostile[i]);
      result = sandbox_session_run (s.session, command, NULL, &error);
      if (result != NULL)
        {
          g_autofree char *out = sandbox_result_dup_stdout_text (result);

          g_error ("cwd %s was accepted; the guest ran in %s", hostile[i], out);
        }
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_PATH);
    }
  escape_session_close (&s);
}

/* Binds a listening abstract unix socket in the host's network namespace;
 * returns its descriptor and its name ("@…"). */
static int
listen_abstract (char **name)
{
  struct sockaddr_un address = { .sun_family = AF_UNIX };
  g_autofree char *text = g_strdup_printf ("@sandbox-escape-%d-%08x", getpid (),
                                           g_random_int ());
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_assert_cmpint (fd, >=, 0);
  memcpy (address.sun_path, text, strlen (text));
  address.sun_path[0] = '\0';
  g_assert_cmpint (bind (fd, (struct sockaddr *) &address,
                         offsetof (struct sockaddr_un, sun_path) + strlen (text)), ==, 0);
  g_assert_cmpint (listen (fd, 4), ==, 0);
  *name = g_steal_pointer (&text);
  return fd;
}

static int
probe_connect_in (const char *policy_json,
                  const char *name)
{
  EscapeSession s = { 0 };
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *arguments = g_strdup_printf ("connect '%s'", name);
  int err;

  escape_session_open (&s, NULL);
  policy = sandbox_network_policy_new_from_json (policy_json, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_session_set_network_policy (s.session, policy, NULL, &error));
  g_assert_no_error (error);
  escape_install_probe (s.session);
  err = escape_probe_errno (s.session, arguments);
  escape_session_close (&s);
  return err;
}

/* The highest Landlock ABI of this kernel, 0 without Landlock. */
static int
landlock_abi (void)
{
  long abi = syscall (__NR_landlock_create_ruleset, NULL, 0, 1U /* …_VERSION */);

  return abi > 0 ? (int) abi : 0;
}

/* containerd CVE-2020-15257: abstract unix sockets live in the network
 * namespace, not the filesystem, so no mount rule hides them. Under every
 * policy the guest has its own network namespace (allow-all's is joined to
 * the outside by slirp4netns, see test-escape-network.c), where the host's
 * abstract socket does not exist (ECONNREFUSED). The stub's Landlock
 * scoping (ABI 6, Linux 6.12) is the second wall: give allow-all the
 * host's namespace again (`--share-net` in add_own_network(),
 * drivers/bubblewrap/sandbox-bubblewrap-args.c) to see it refuse the
 * connection (EPERM), and take scope_with_landlock() out of the stub
 * (stub/sandbox-stub.c) as well to see the probe connect (0). */
static void
test_host_abstract_socket (void)
{
  g_autofree char *name = NULL;
  int listener = listen_abstract (&name);

  g_assert_cmpint (probe_connect_in ("\"deny-all\"", name), ==, ECONNREFUSED);
  g_assert_cmpint (probe_connect_in ("{\"allow\":[{\"origin\":\"http://127.0.0.1:9/\"}]}", name),
                   ==, ECONNREFUSED);
  g_assert_cmpint (probe_connect_in ("\"allow-all\"", name), ==, ECONNREFUSED);
  close (listener);
}

/* The backend tells the host which Landlock ABI its sandboxes get. */
static void
test_landlock_abi_reported (void)
{
  g_autofree char *directory = escape_state_directory_new ();
  g_autoptr(SandboxBackend) backend = escape_backend_new (directory, NULL);
  guint abi = G_MAXUINT;

  g_object_get (backend, "landlock-abi", &abi, NULL);
  g_assert_cmpuint (abi, ==, landlock_abi ());
  g_clear_object (&backend);
  escape_state_directory_remove (directory);
}

/* …and so does the coding tools' probe, which is what an agent platform
 * reads of a session: the ABI the sandboxes are scoped with, 0 below the
 * scoping ABI 6 (where the stub applies no Landlock). To see it fail:
 * report sandbox_bubblewrap_kernel_landlock_abi () unconditionally in
 * sandbox_bubblewrap_coding_get_landlock_abi() on a kernel below 6, or drop
 * the binding's get_landlock_abi (the report then says 0 here). */
static void
test_landlock_abi_in_probe (void)
{
  EscapeSession s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxCodingTools) tools = NULL;
  g_autoptr(GVariant) report = NULL;
  g_auto(GStrv) restrictions = NULL;
  g_autofree char *grade = NULL;
  const char *layering = NULL;
  const char *reported_grade = NULL;
  const char *reported_layering = NULL;
  g_autofree const char **reported_restrictions = NULL;
  guint expected = landlock_abi () >= 6 ? (guint) landlock_abi () : 0;
  guint abi = G_MAXUINT;

  escape_session_open (&s, NULL);
  tools = sandbox_coding_tools_new (s.handle, &error);
  g_assert_no_error (error);
  report = sandbox_coding_tools_probe_report (tools, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_is_of_type (report, G_VARIANT_TYPE_VARDICT));
  g_assert_true (g_variant_lookup (report, "landlock-abi", "u", &abi));
  g_assert_cmpuint (abi, ==, expected);

  /* The rest says what probe_full() says. */
  grade = sandbox_coding_tools_probe_full (tools, &restrictions, &layering, &error);
  g_assert_no_error (error);
  g_assert_true (g_variant_lookup (report, "grade", "&s", &reported_grade));
  g_assert_cmpstr (reported_grade, ==, grade);
  g_assert_true (g_variant_lookup (report, "workspace-layering", "&s", &reported_layering));
  g_assert_cmpstr (reported_layering, ==, layering);
  g_assert_true (g_variant_lookup (report, "restrictions", "^a&s", &reported_restrictions));
  g_assert_true (g_strv_equal ((const char *const *) restrictions,
                               (const char *const *) reported_restrictions));

  g_clear_object (&tools);
  escape_session_close (&s);
}

/* Reads the host path of the gateway socket bound into @session's guest
 * from its mountinfo (the root of the mount at the guest socket path). */
static char *
guest_gateway_host_path (SandboxSession *session)
{
  g_autofree char *out = escape_sh (session,
                                    "while read -r id parent dev root point rest; do "
                                    "  [ \"$point\" = /run/sandbox-network.sock ] && "
                                    "    printf '%s' \"$root\"; "
                                    "done < /proc/self/mountinfo; true");

  g_assert_cmpstr (out, !=, "");
  return g_steal_pointer (&out);
}

/* The gateway socket of another session is not reachable: a guest that
 * learns it from its own mountinfo (where it appears as a host path,
 * e.g. /tmp/sandbox-gateway-XXXXXX/…) cannot connect to it from another
 * session, nor does its own gateway answer for another session's policy.
 * Each guest sees only its own socket, bound at /run/sandbox-network.sock;
 * the host's /tmp is never in the guest (its /tmp is a fresh tmpfs).
 *
 * To see it fail: bind the host's temporary directory into the guest
 * (e.g. `--bind /tmp /tmp` instead of `--tmpfs /tmp` in
 * sandbox-bubblewrap-args.c, or `--bind $TMPDIR $TMPDIR` for the
 * unprivileged run): session B then connects to A's socket (0). */
static void
test_other_session_gateway (void)
{
  EscapeSession a = { 0 };
  EscapeSession b = { 0 };
  g_autoptr(SandboxNetworkPolicy) policy = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *host_path = NULL;
  g_autofree char *arguments = NULL;

  escape_session_open (&a, NULL);
  policy = sandbox_network_policy_new_from_json ("{\"allow\":[{\"origin\":\"http://127.0.0.1:9/\"}]}",
                                                 &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_session_set_network_policy (a.session, policy, NULL, &error));
  g_assert_no_error (error);
  escape_install_probe (a.session);
  /* A reaches its own gateway: the probe works. */
  g_assert_cmpint (escape_probe_errno (a.session, "connect /run/sandbox-network.sock"), ==, 0);
  host_path = guest_gateway_host_path (a.session);
  g_test_message ("session A's gateway socket is %s on the host", host_path);
  g_assert_true (g_file_test (host_path, G_FILE_TEST_EXISTS));

  /* B, deny-all and with an allow-list of its own, cannot. */
  escape_session_open (&b, NULL);
  escape_install_probe (b.session);
  arguments = g_strdup_printf ("connect '%s'", host_path);
  g_assert_cmpint (escape_probe_errno (b.session, arguments), ==, ENOENT);
  g_assert_cmpint (escape_probe_errno (b.session, "connect /run/sandbox-network.sock"), ==, ENOENT);
  g_assert_true (sandbox_session_set_network_policy (b.session, policy, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (escape_probe_errno (b.session, arguments), ==, ENOENT);
  {
    g_autofree char *own_path = guest_gateway_host_path (b.session);

    g_assert_cmpstr (own_path, !=, host_path);
  }

  escape_session_close (&b);
  escape_session_close (&a);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/escape/fds/only-stdio", test_only_stdio);
  g_test_add_func ("/sandbox/escape/fds/no-process-holds-host-descriptors",
                   test_no_process_holds_host_descriptors);
  g_test_add_func ("/sandbox/escape/fds/cwd-is-never-a-descriptor",
                   test_cwd_is_never_a_descriptor);
  g_test_add_func ("/sandbox/escape/fds/host-abstract-socket", test_host_abstract_socket);
  g_test_add_func ("/sandbox/escape/fds/landlock-abi-reported", test_landlock_abi_reported);
  g_test_add_func ("/sandbox/escape/fds/landlock-abi-in-probe", test_landlock_abi_in_probe);
  g_test_add_func ("/sandbox/escape/fds/other-session-gateway", test_other_session_gateway);

  return g_test_run ();
}
