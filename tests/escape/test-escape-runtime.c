/* test-escape-runtime.c — the runtime real tools find in a guest
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Issue 21: without an /etc, `make` with an implicit rule failed (cc is an
 * /etc/alternatives link), awk and which exited 127, whoami, getpass and
 * git commit found no user. The curated /etc fixes that without handing the
 * guest the host's /etc: only the listed binds and synthesized files.
 *
 * To see them fail: make curated-etc default to FALSE in
 * sandbox-bubblewrap-backend.c (every tool case fails, the listing shows
 * no /etc), or bind "/etc" wholesale in sandbox-bubblewrap-etc.c (the
 * listing then shows shadow and the host's files).
 */

#include <string.h>
#include <unistd.h>

#include <sandbox.h>

#include "escape-common.h"

/* Runs @script in @s, asserting it exits 0; its stdout. */
static char *
guest_ok (EscapeSession *s,
          const char    *script)
{
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = escape_sh_status (s->session, script, &out, &err);

  if (status != 0)
    g_error ("guest script failed (%d): %s\n%s%s", status, script, out, err);
  return g_steal_pointer (&out);
}

/* Runs @script in @s, asserting it exits 0 and prints exactly @expected. */
static void
assert_guest_says (EscapeSession *s,
                   const char    *script,
                   const char    *expected)
{
  g_autofree char *out = guest_ok (s, script);

  g_assert_cmpstr (out, ==, expected);
}

static gboolean
have (const char *program)
{
  g_autofree char *path = g_build_filename ("/usr/bin", program, NULL);

  return access (path, X_OK) == 0;
}

static void
test_tools_work (void)
{
  EscapeSession s = { 0 };
  g_autofree char *uid = NULL;
  g_autofree char *user = NULL;
  g_autofree char *passwd_line = NULL;

  escape_session_open (&s, NULL);
  uid = guest_ok (&s, "id -u");
  user = guest_ok (&s, "whoami");
  g_assert_cmpstr (user, ==, g_str_equal (uid, "0\n") ? "root\n" : "sandbox\n");
  passwd_line = guest_ok (&s, "getent passwd \"$(id -u)\" | cut -d: -f1,6");
  g_assert_cmpstr (passwd_line, ==, g_str_equal (uid, "0\n") ? "root:/workspace\n"
                                                             : "sandbox:/workspace\n");
  g_free (guest_ok (&s, "id -gn"));

  assert_guest_says (&s, "echo a b | awk '{print $2}'", "b\n");
  assert_guest_says (&s, "which sh", "/usr/bin/sh\n");
  if (have ("python3"))
    assert_guest_says (&s, "python3 -c 'import getpass; print(getpass.getuser())'", user);
  if (have ("make") && have ("cc"))
    {
      g_autofree char *built = guest_ok (&s, "printf 'int main (void) { return 0; }\\n' > hello.c && "
                                             "make hello >/dev/null && ./hello && echo built");

      g_assert_cmpstr (built, ==, "built\n");
    }
  if (have ("git"))
    {
      g_autofree char *author = guest_ok (&s, "mkdir repo && cd repo && git init -q && "
                                              "echo x > f && git add f && git commit -qm first && "
                                              "git log -1 --format='%an <%ae>'");

      g_assert_cmpstr (author, ==, "Sandbox <sandbox@sandbox.invalid>\n");
    }
  escape_session_close (&s);
}

/* /etc holds exactly the curated entries, read-only; no host users. */
static void
test_etc_is_curated (void)
{
  EscapeSession s = { 0 };
  g_autofree char *listing = NULL;
  g_autofree char *passwd = NULL;

  escape_session_open (&s, NULL);
  listing = guest_ok (&s, "ls -A /etc | tr '\\n' ' '");
  /* alternatives, ld.so.cache and ssl are the host's, where it has them. */
  g_assert_true (g_regex_match_simple ("^(alternatives )?gitconfig group hostname hosts "
                                       "(ld\\.so\\.cache )?localtime nsswitch\\.conf passwd "
                                       "(ssl )?$", listing, 0, 0));
  g_assert_cmpint (escape_sh_status (s.session, "test -e /etc/shadow", NULL, NULL), !=, 0);
  g_assert_cmpint (escape_sh_status (s.session, "echo x > /etc/passwd", NULL, NULL), !=, 0);
  g_assert_cmpint (escape_sh_status (s.session, "touch /etc/new", NULL, NULL), !=, 0);
  passwd = guest_ok (&s, "cat /etc/passwd");
  g_assert_null (strstr (passwd, "root:x:0:0:root:/root"));
  assert_guest_says (&s, "hostname", "sandbox\n");
  escape_session_close (&s);
}

/* curated-etc=false is the reference's argument list: no /etc at all. */
static void
test_reference_has_no_etc (void)
{
  EscapeSession s = { 0 };

  escape_session_open (&s, "curated-etc", "false", NULL);
  g_assert_cmpint (escape_sh_status (s.session, "test -e /etc", NULL, NULL), !=, 0);
  g_assert_cmpint (escape_sh_status (s.session, "whoami", NULL, NULL), !=, 0);
  escape_session_close (&s);
}

/* The host names the default git identity; a value that could inject
 * configuration is refused. */
static void
test_git_identity (void)
{
  EscapeSession s = { 0 };
  g_autofree char *directory = escape_state_directory_new ();
  g_autoptr(GError) error = NULL;
  const char *bad[] = { "a\"b", "a\\b", "a\nb", "" };

  escape_session_open (&s, "git-user-name", "Ada Lovelace", "git-user-email", "ada@example.org",
                       NULL);
  assert_guest_says (&s, "git config --system user.name; git config --system user.email",
                     "Ada Lovelace\nada@example.org\n");
  escape_session_close (&s);

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(SandboxBackend) backend =
        sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", directory,
                             "git-user-name", bad[i], NULL);

      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_null (backend);
      g_clear_error (&error);
    }
  escape_state_directory_remove (directory);
}

/* bwrap's arguments come through --args FD: the guest's /proc/1/cmdline
 * (its init is a fork of bwrap) names no host path. Before, it was the
 * whole command line with the workspace's path under the state directory;
 * make move_options_into_args_fd() return at once to see it fail. /proc/self/mountinfo still shows the
 * workspace's source path (docs/guide/runtime.md). */
static void
test_cmdline_names_no_host_path (void)
{
  EscapeSession s = { 0 };
  g_autofree char *init = NULL;

  escape_session_open (&s, NULL);
  init = guest_ok (&s, "tr '\\0' ' ' < /proc/1/cmdline");
  g_test_message ("guest /proc/1/cmdline: %s", init);
  g_assert_true (g_regex_match_simple ("^/usr/bin/bwrap --args [0-9]+ -- /usr/bin/sh -c ", init, 0, 0));
  g_assert_null (strstr (init, s.state_directory));
  escape_session_close (&s);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  if (!g_file_test ("/usr/bin/bwrap", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("bubblewrap is not installed");
      return 77;
    }

  g_test_add_func ("/escape/runtime/tools-work", test_tools_work);
  g_test_add_func ("/escape/runtime/etc-is-curated", test_etc_is_curated);
  g_test_add_func ("/escape/runtime/reference-has-no-etc", test_reference_has_no_etc);
  g_test_add_func ("/escape/runtime/git-identity", test_git_identity);
  g_test_add_func ("/escape/runtime/cmdline-names-no-host-path", test_cmdline_names_no_host_path);
  return g_test_run ();
}
