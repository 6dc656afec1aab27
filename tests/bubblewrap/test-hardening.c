/* test-hardening.c — the bubblewrap driver's hardening beyond the reference
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * No nested user namespaces, the default seccomp filter, lease recovery,
 * durability and resource limits, against real bubblewrap. Run as root and,
 * through run-unprivileged.sh, as an unprivileged user.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sandbox.h>

/* Helpers ------------------------------------------------------------------ */

static char *
make_state_directory (void)
{
  g_autoptr(GError) error = NULL;
  char *directory = g_dir_make_tmp ("sandbox-harden-XXXXXX", &error);

  g_assert_no_error (error);
  return directory;
}

static void
remove_state_directory (const char *directory)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", directory);

  g_assert_cmpint (system (command), ==, 0);
}

/* A backend on @state_directory with extra properties, NULL-terminated
 * name/value pairs of strings, booleans ("true"/"false") or numbers. */
static SandboxBackend *
new_backend_with (const char *state_directory,
                  ...)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GArray) values = g_array_new (FALSE, TRUE, sizeof (GValue));
  SandboxBackend *backend;
  const char *name;
  va_list ap;

  g_array_set_clear_func (values, (GDestroyNotify) g_value_unset);
  g_ptr_array_add (names, (gpointer) "state-directory");
  g_array_set_size (values, 1);
  g_value_init (&g_array_index (values, GValue, 0), G_TYPE_STRING);
  g_value_set_string (&g_array_index (values, GValue, 0), state_directory);

  va_start (ap, state_directory);
  while ((name = va_arg (ap, const char *)) != NULL)
    {
      const char *text = va_arg (ap, const char *);
      GValue *value;

      g_ptr_array_add (names, (gpointer) name);
      g_array_set_size (values, values->len + 1);
      value = &g_array_index (values, GValue, values->len - 1);
      if (g_str_equal (text, "true") || g_str_equal (text, "false"))
        {
          g_value_init (value, G_TYPE_BOOLEAN);
          g_value_set_boolean (value, g_str_equal (text, "true"));
        }
      else if (g_ascii_isdigit (text[0]))
        {
          g_value_init (value, G_TYPE_UINT64);
          g_value_set_uint64 (value, g_ascii_strtoull (text, NULL, 10));
        }
      else
        {
          g_value_init (value, G_TYPE_STRING);
          g_value_set_string (value, text);
        }
    }
  va_end (ap);

  backend = sandbox_backend_newv ("bubblewrap", names->len, (const char **) names->pdata,
                                  (const GValue *) values->data, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (backend);
  return backend;
}

static char *
prewarm_hello (SandboxBackend *backend)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("hardening");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(GError) error = NULL;
  char *key;

  g_assert_true (sandbox_template_add_file (template_, "hello.txt", hello, &error));
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  return key;
}

static SandboxHandle *
create_session (SandboxBackend *backend,
                const char     *key)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  SandboxHandle *handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);

  g_assert_no_error (error);
  return handle;
}

static void
delete_session (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;

  sandbox_handle_delete (handle, NULL, &error);
  g_assert_no_error (error);
}

static SandboxResult *
run_sh (SandboxSession *session,
        const char     *script,
        guint           timeout_ms,
        GError        **error)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sh");

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, script);
  if (timeout_ms > 0)
    sandbox_command_set_timeout_ms (command, timeout_ms);
  return sandbox_session_run (session, command, NULL, error);
}

/* Runs @script, asserts exit 0 and returns stdout. */
static char *
guest_sh (SandboxSession *session,
          const char     *script)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = run_sh (session, script, 0, &error);

  g_assert_no_error (error);
  if (sandbox_result_get_exit_status (result) != 0)
    {
      g_autofree char *err = sandbox_result_dup_stderr_text (result);
      g_error ("guest script failed (%d): %s\n%s", sandbox_result_get_exit_status (result),
               script, err);
    }
  return sandbox_result_dup_stdout_text (result);
}

static int
guest_status (SandboxSession *session,
              const char     *script)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = run_sh (session, script, 0, &error);

  g_assert_no_error (error);
  return sandbox_result_get_exit_status (result);
}

/* A session of a backend built with the given extra properties. */
typedef struct
{
  char *state_directory;
  SandboxBackend *backend;
  char *template_key;
  SandboxHandle *handle;
  SandboxSession *session;
} Session;

static void
session_open (Session        *s,
              SandboxBackend *backend,
              char           *state_directory)
{
  s->state_directory = state_directory;
  s->backend = backend;
  s->template_key = prewarm_hello (backend);
  s->handle = create_session (backend, s->template_key);
  s->session = sandbox_handle_get_session (s->handle);
}

static void
session_close (Session *s)
{
  if (s->handle != NULL)
    delete_session (s->handle);
  g_clear_object (&s->handle);
  g_clear_object (&s->backend);
  g_clear_pointer (&s->template_key, g_free);
  if (s->state_directory != NULL)
    remove_state_directory (s->state_directory);
  g_clear_pointer (&s->state_directory, g_free);
}

/* No nested user namespaces ------------------------------------------------- */

static void
check_no_nested_userns (gboolean seccomp)
{
  char *directory = make_state_directory ();
  Session s = { 0 };
  g_autofree char *out = NULL;

  session_open (&s, new_backend_with (directory, "seccomp", seccomp ? "true" : "false", NULL),
                directory);
  /* The guest's own user namespace is there; a nested one is refused. */
  g_assert_cmpint (guest_status (s.session, "test -x /usr/bin/unshare"), ==, 0);
  g_assert_cmpint (guest_status (s.session, "unshare -Ur true"), !=, 0);
  g_assert_cmpint (guest_status (s.session, "unshare --user true"), !=, 0);
  /* Without the filter the refusal is bwrap's --disable-userns: the
   * guest's user namespace may hold no further one (ENOSPC). */
  out = guest_sh (s.session, "unshare -Ur true 2>&1 || true");
  g_assert_nonnull (strstr (out, seccomp ? "Operation not permitted" : "No space left on device"));
  session_close (&s);
}

static void
test_nested_userns_refused (void)
{
  check_no_nested_userns (TRUE);
}

static void
test_nested_userns_refused_without_seccomp (void)
{
  check_no_nested_userns (FALSE);
}

/* Seccomp ---------------------------------------------------------------------- */

static char *
probe_path (void)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *dir = NULL;

  g_assert_nonnull (self);
  dir = g_path_get_dirname (self);
  return g_build_filename (dir, "syscall-probe", NULL);
}

/* Copies the probe into the session's workspace. */
static void
install_probe (SandboxSession *session)
{
  g_autofree char *path = probe_path ();
  g_autofree char *contents = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) error = NULL;
  gsize length;

  g_assert_true (g_file_get_contents (path, &contents, &length, &error));
  g_assert_no_error (error);
  bytes = g_bytes_new_take (g_steal_pointer (&contents), length);
  g_assert_true (sandbox_session_write_bytes (session, "syscall-probe", bytes, NULL, &error));
  g_assert_no_error (error);
  g_free (guest_sh (session, "chmod 0755 /workspace/syscall-probe"));
}

/* Runs the probe for @names; returns name → errno. */
static GHashTable *
run_probes (SandboxSession     *session,
            const char * const *names)
{
  g_autofree char *joined = g_strjoinv (" ", (char **) names);
  g_autofree char *script = g_strdup_printf ("/workspace/syscall-probe %s", joined);
  g_autofree char *out = guest_sh (session, script);
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);
  GHashTable *results = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; lines[i] != NULL && lines[i][0] != '\0'; i++)
    {
      g_auto(GStrv) fields = g_strsplit (lines[i], " ", 2);

      g_assert_cmpuint (g_strv_length (fields), ==, 2);
      g_hash_table_insert (results, g_strdup (fields[0]),
                           GINT_TO_POINTER ((int) g_ascii_strtoll (fields[1], NULL, 10)));
    }
  g_assert_cmpuint (g_hash_table_size (results), ==, g_strv_length ((char **) names));
  return results;
}

typedef struct
{
  const char *probe;
  int filtered;      /* the errno under the filter */
} Expectation;

static const Expectation denied[] = {
  { "tiocsti", EPERM },
  { "tiocsti-high-bits", EPERM },
  { "tioclinux", EPERM },
  { "unshare-user", EPERM },
  { "clone-user", EPERM },
  { "clone3", ENOSYS },
  { "setns", EPERM },
  { "keyctl", EPERM },
  { "add_key", EPERM },
  { "request_key", EPERM },
  { "ptrace", EPERM },
  { "perf_event_open", EPERM },
  { "personality-linux32", EPERM },
  { "personality-no-randomize", EPERM },
  { "personality-query", EPERM },
  { "kexec_load", EPERM },
  { "kexec_file_load", EPERM },
  { "init_module", EPERM },
  { "finit_module", EPERM },
  { "delete_module", EPERM },
  { "bpf", EPERM },
  { "userfaultfd", EPERM },
  { "mount", EPERM },
  { "umount2", EPERM },
  { "pivot_root", EPERM },
  { "chroot", EPERM },
  { "open_tree", ENOSYS },
  { "move_mount", ENOSYS },
  { "fsopen", ENOSYS },
  { "fsconfig", ENOSYS },
  { "fsmount", ENOSYS },
  { "fspick", ENOSYS },
  { "mount_setattr", ENOSYS },
  { "io_uring_setup", EPERM },
  { "io_uring_enter", EPERM },
  { "io_uring_register", EPERM },
  { "socket-packet", EAFNOSUPPORT },
  { "socket-vsock", EAFNOSUPPORT },
  { "socket-alg", EAFNOSUPPORT },
  { "socket-bluetooth", EAFNOSUPPORT },
  { "socket-x25", EAFNOSUPPORT },
};

/* What stays allowed. */
static const char * const allowed[] = {
  "clone", "personality-default",
  "socket-unix", "socket-inet", "socket-inet6", "socket-netlink",
  NULL
};

static void
test_seccomp_denies (void)
{
  char *directory = make_state_directory ();
  Session s = { 0 };
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GHashTable) results = NULL;

  session_open (&s, new_backend_with (directory, NULL), directory);
  install_probe (s.session);
  for (guint i = 0; i < G_N_ELEMENTS (denied); i++)
    g_ptr_array_add (names, (gpointer) denied[i].probe);
  for (guint i = 0; allowed[i] != NULL; i++)
    g_ptr_array_add (names, (gpointer) allowed[i]);
  g_ptr_array_add (names, NULL);

  results = run_probes (s.session, (const char * const *) names->pdata);
  for (guint i = 0; i < G_N_ELEMENTS (denied); i++)
    {
      int got = GPOINTER_TO_INT (g_hash_table_lookup (results, denied[i].probe));

      if (got != denied[i].filtered)
        g_error ("%s: expected errno %d (%s), got %d (%s)", denied[i].probe,
                 denied[i].filtered, g_strerror (denied[i].filtered), got, g_strerror (got));
    }
  for (guint i = 0; allowed[i] != NULL; i++)
    {
      int got = GPOINTER_TO_INT (g_hash_table_lookup (results, allowed[i]));

      if (got != 0)
        g_error ("%s: expected success, got %d (%s)", allowed[i], got, g_strerror (got));
    }
  session_close (&s);
}

/* With the filter off, the same probes reach the kernel: each denial above
 * is the filter's doing, not an accident of the environment. */
static void
test_seccomp_can_be_turned_off (void)
{
  char *directory = make_state_directory ();
  Session s = { 0 };
  static const char * const names[] = {
    "tiocsti", "ptrace", "clone3", "fsopen", "io_uring_setup", "unshare-user", NULL
  };
  g_autoptr(GHashTable) results = NULL;

  session_open (&s, new_backend_with (directory, "seccomp", "false", NULL), directory);
  install_probe (s.session);
  results = run_probes (s.session, names);
  /* stdin is a pipe, not a terminal. */
  g_assert_cmpint (GPOINTER_TO_INT (g_hash_table_lookup (results, "tiocsti")), ==, ENOTTY);
  g_assert_cmpint (GPOINTER_TO_INT (g_hash_table_lookup (results, "ptrace")), ==, 0);
  g_assert_cmpint (GPOINTER_TO_INT (g_hash_table_lookup (results, "clone3")), ==, 0);
  g_assert_cmpint (GPOINTER_TO_INT (g_hash_table_lookup (results, "fsopen")), !=, ENOSYS);
  g_assert_cmpint (GPOINTER_TO_INT (g_hash_table_lookup (results, "io_uring_setup")), !=, EPERM);
  /* --disable-userns still refuses a nested user namespace, differently. */
  g_assert_cmpint (GPOINTER_TO_INT (g_hash_table_lookup (results, "unshare-user")), ==, ENOSPC);
  session_close (&s);
}

static void
test_seccomp_ordinary_workloads (void)
{
  char *directory = make_state_directory ();
  Session s = { 0 };
  g_autofree char *out = NULL;
  g_autofree char *compiler = NULL;

  session_open (&s, new_backend_with (directory, NULL), directory);

  out = guest_sh (s.session,
                  "set -e; mkdir -p d/e; printf 'b\\na\\n' > d/e/f; sort d/e/f | tr -d '\\n'; "
                  "cp d/e/f g; ls d/e | wc -l | tr -d ' \\n'; "
                  "x=$(mktemp); echo t > \"$x\"; cat \"$x\"; rm -r d g \"$x\"; "
                  "( sleep 0.01 & wait ); echo done");
  g_assert_cmpstr (out, ==, "ab1t\ndone\n");

  if (g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_free (out);
      out = guest_sh (s.session,
                      "python3 -c '"
                      "import subprocess, threading, socket, os, tempfile\n"
                      "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
                      "a, b = socket.socketpair(); a.send(b\"x\"); assert b.recv(1) == b\"x\"\n"
                      "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM); s.close()\n"
                      "r = subprocess.run([\"echo\", \"py\"], capture_output=True, check=True)\n"
                      "print(r.stdout.decode().strip(), os.getpid() > 0)'");
      g_assert_cmpstr (out, ==, "py True\n");
    }
  else
    g_test_message ("python3 not installed: skipped the python workload");

  /* /usr/bin/cc goes through /etc/alternatives, which the guest lacks:
   * run what it resolves to. */
  compiler = realpath ("/usr/bin/cc", NULL);
  if (compiler != NULL && g_str_has_prefix (compiler, "/usr/"))
    {
      g_autofree char *script =
        g_strdup_printf ("printf '#include <stdio.h>\\nint main(void){puts(\"compiled\");return 0;}\\n'"
                         " > hello.c && %s -O1 -o hello hello.c && ./hello", compiler);

      g_free (out);
      out = guest_sh (s.session, script);
      g_assert_cmpstr (out, ==, "compiled\n");
    }
  else
    g_test_message ("no C compiler installed: skipped the compiler workload");

  session_close (&s);
}

/* Main --------------------------------------------------------------------------- */

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/hardening/userns/nested-refused", test_nested_userns_refused);
  g_test_add_func ("/sandbox/hardening/userns/nested-refused-without-seccomp",
                   test_nested_userns_refused_without_seccomp);
  g_test_add_func ("/sandbox/hardening/seccomp/denies", test_seccomp_denies);
  g_test_add_func ("/sandbox/hardening/seccomp/can-be-turned-off", test_seccomp_can_be_turned_off);
  g_test_add_func ("/sandbox/hardening/seccomp/ordinary-workloads", test_seccomp_ordinary_workloads);

  return g_test_run ();
}
