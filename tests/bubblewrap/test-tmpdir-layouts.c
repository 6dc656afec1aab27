/* test-tmpdir-layouts.c — the gateway and the workspace wherever TMPDIR and the state directory are
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The gateway's socket lives in a directory of its own under TMPDIR
 * (g_dir_make_tmp()), a session's workspace in the state directory. A
 * service may well put one under the other, both under one private
 * parent, or name either through a link. In every such layout an
 * allow-list session must work: a guest reaches a loopback upstream
 * through the gateway, and reads and writes its workspace, whether the
 * allow-list comes at create or later, layered or copied, as root (guests
 * as another uid, see sandbox-bubblewrap-guest.c) and unprivileged.
 *
 * g_get_tmp_dir() reads TMPDIR once per process, so each layout runs in a
 * subprocess started with TMPDIR set to it.
 */

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libsoup/soup.h>
#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"
#include "sandbox-test-upstream.h"

/* Where TMPDIR and the state directory are, relative to a fresh 0755 base
 * directory. Every directory made is 0700, as a service's own are; a link
 * names a directory made for it. */
typedef struct
{
  const char *name;
  const char *tmpdir;
  const char *state;
  const char *tmpdir_link_target;   /* nullable: TMPDIR is a link to this */
  const char *state_link_target;    /* nullable: the state directory is a link to this */
} Layout;

static const Layout layouts[] = {
  /* TMPDIR=/var/lib/app, state directory /var/lib/app/sandboxes. */
  { "state-under-tmpdir", "app", "app/sandboxes", NULL, NULL },
  { "tmpdir-under-state", "state/tmp", "state", NULL, NULL },
  { "one-parent", "app/tmp", "app/state", NULL, NULL },
  /* The same nesting as state-under-tmpdir, seen through links. */
  { "symlinked-tmpdir", "tmp", "app/sandboxes", "app", NULL },
  { "symlinked-state", "app", "state", NULL, "app/sandboxes" },
  /* Neither under the other, both private: the way to each covered apart. */
  { "apart", "tmp", "state", NULL, NULL },
};

/* Which run of a layout: its layering, and when the allow-list comes. */
typedef struct
{
  const Layout *layout;
  const char *layering;   /* "auto" (asserted layered) or "copy" */
  gboolean later;         /* created deny-all, allow-list set after */
} Case;

#define STATE_VARIABLE "SANDBOX_TEST_LAYOUT_STATE"

/* The upstream ------------------------------------------------------------- */

/* The kit's loopback server (tests/kit/sandbox-test-upstream.h), which
 * answers with the header the gateway injects: proof the request went
 * through it. */
static void
serve (SoupServer        *server,
       SoupServerMessage *msg,
       const char        *path,
       GHashTable        *query,
       gpointer           data)
{
  const char *token = soup_message_headers_get_one (soup_server_message_get_request_headers (msg),
                                                    "x-layout-token");
  g_autofree char *body = g_strdup_printf ("upstream saw %s", token != NULL ? token : "nothing");

  soup_server_message_set_status (msg, SOUP_STATUS_OK, NULL);
  soup_server_message_set_response (msg, "text/plain", SOUP_MEMORY_COPY, body, strlen (body));
}

/* The session, in the layout's subprocess ----------------------------------- */

static SandboxNetworkPolicy *
allow_upstream (SandboxTestUpstream *upstream,
                const char          *token)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *json = g_strdup_printf ("{\"allow\":[{\"origin\":\"http://127.0.0.1:%u\","
                                           "\"headers\":{\"x-layout-token\":\"%s\"}}]}",
                                           sandbox_test_upstream_get_port (upstream), token);
  SandboxNetworkPolicy *policy = sandbox_network_policy_new_from_json (json, &error);

  g_assert_no_error (error);
  return policy;
}

/* The gateway's socket directory really is in TMPDIR, the layout's. */
static void
assert_gateway_in_tmpdir (void)
{
  g_autoptr(GDir) tmp = g_dir_open (g_get_tmp_dir (), 0, NULL);
  const char *name;
  guint gateways = 0;

  g_assert_nonnull (tmp);
  while ((name = g_dir_read_name (tmp)) != NULL)
    gateways += g_str_has_prefix (name, "sandbox-gw-");
  g_assert_cmpuint (gateways, ==, 1);
}

static void
run_case (const Case *test_case)
{
  const char *state_directory = g_getenv (STATE_VARIABLE);
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("layout");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxNetworkPolicy) allow = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *token = g_uuid_string_random ();
  g_autofree char *key = NULL;
  g_autofree char *chosen = NULL;
  g_autofree char *request = NULL;
  g_autofree char *answer = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *read_back = NULL;
  g_autofree char *written = NULL;
  SandboxSession *session;
  SandboxTestUpstream *upstream;

  g_assert_nonnull (state_directory);
  upstream = sandbox_test_upstream_start (SANDBOX_TEST_UPSTREAM_NONE, serve, NULL);
  allow = allow_upstream (upstream, token);

  backend = sandbox_test_bubblewrap_new (state_directory, &error,
                                         "layering", test_case->layering, NULL);
  g_assert_no_error (error);
  g_object_get (backend, "workspace-layering", &chosen, NULL);
  g_assert_cmpstr (chosen, ==, g_str_equal (test_case->layering, "auto") ? "overlay" : "copy");
  g_assert_true (sandbox_template_add_file (template_, "hello.txt", hello, &error));
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);

  handle = sandbox_backend_create (backend, key, NULL, test_case->later ? deny : allow,
                                   NULL, &error);
  g_assert_no_error (error);
  session = sandbox_handle_get_session (handle);
  if (test_case->later)
    {
      g_autofree char *none =
        sandbox_test_guest_sh (session, "test ! -e /run/sandbox-network.sock && echo none");

      g_assert_cmpstr (none, ==, "none\n");
      g_assert_true (sandbox_session_set_network_policy (session, allow, NULL, &error));
      g_assert_no_error (error);
    }
  assert_gateway_in_tmpdir ();

  /* Through the gateway, which adds the credential, to the upstream. */
  request = g_strdup_printf ("curl -sS --max-time 20 --unix-socket /run/sandbox-network.sock "
                             "http://127.0.0.1:%u/", sandbox_test_upstream_get_port (upstream));
  answer = sandbox_test_guest_sh (session, request);
  expected = g_strdup_printf ("upstream saw %s", token);
  g_assert_cmpstr (answer, ==, expected);

  /* The workspace: the template's file read, a new one written. */
  read_back = sandbox_test_guest_sh (session,
                                     "cat /workspace/hello.txt && echo guest > /workspace/out.txt");
  g_assert_cmpstr (read_back, ==, "hello");
  written = sandbox_session_read_text (session, "out.txt", NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (written, ==, "guest\n");

  g_assert_true (sandbox_handle_delete (handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&handle);
  g_clear_object (&backend);
  sandbox_test_upstream_stop (upstream);
}

/* The layout, in the test process --------------------------------------------- */

/* Makes @relative below @base, 0700 (as its parents, but @base), or a
 * link to @link_target there; returns its path as named. */
static char *
make_place (const char *base,
            const char *relative,
            const char *link_target)
{
  char *path = g_build_filename (base, relative, NULL);

  if (link_target != NULL)
    {
      g_autofree char *target = g_build_filename (base, link_target, NULL);

      g_assert_cmpint (g_mkdir_with_parents (target, 0700), ==, 0);
      g_assert_cmpint (symlink (target, path), ==, 0);
    }
  else
    g_assert_cmpint (g_mkdir_with_parents (path, 0700), ==, 0);
  return path;
}

static void
test_layout (gconstpointer data)
{
  const Case *test_case = data;
  const Layout *layout = test_case->layout;
  g_autoptr(GError) error = NULL;
  g_autofree char *base = NULL;
  g_autofree char *tmpdir = NULL;
  g_autofree char *state = NULL;
  g_autofree char *saved_tmpdir = g_strdup (g_getenv ("TMPDIR"));

  if (g_test_subprocess ())
    {
      run_case (test_case);
      return;
    }

  base = g_dir_make_tmp ("sandbox-layout-XXXXXX", &error);
  g_assert_no_error (error);
  /* Passable, so the layout's own directories are the private ones. */
  g_assert_cmpint (chmod (base, 0755), ==, 0);
  /* The state directory's parents first: a link's target may be in TMPDIR. */
  state = make_place (base, layout->state, layout->state_link_target);
  tmpdir = make_place (base, layout->tmpdir, layout->tmpdir_link_target);

  g_setenv ("TMPDIR", tmpdir, TRUE);
  g_setenv (STATE_VARIABLE, state, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  if (saved_tmpdir != NULL)
    g_setenv ("TMPDIR", saved_tmpdir, TRUE);
  else
    g_unsetenv ("TMPDIR");
  g_unsetenv (STATE_VARIABLE);

  sandbox_test_remove_tree (base);
  g_test_trap_assert_passed ();
}

int
main (int    argc,
      char **argv)
{
  static const char * const layerings[] = { "auto", "copy" };
  /* Static, not allocated: a subprocess runs one case and exits without
   * freeing the suite, and LeakSanitizer would count the others. */
  static Case cases[G_N_ELEMENTS (layouts) * G_N_ELEMENTS (layerings) * 2];
  guint n = 0;

  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (layouts); i++)
    for (guint j = 0; j < G_N_ELEMENTS (layerings); j++)
      for (guint later = 0; later <= 1; later++)
        {
          Case *test_case = &cases[n++];
          g_autofree char *path = NULL;

          test_case->layout = &layouts[i];
          test_case->layering = layerings[j];
          test_case->later = later;
          path = g_strdup_printf ("/sandbox/bubblewrap/tmpdir-layouts/%s/%s/%s",
                                  layouts[i].name,
                                  g_str_equal (layerings[j], "auto") ? "layered" : "copied",
                                  later ? "allow-list-later" : "allow-list-at-create");
          g_test_add_data_func (path, test_case, test_layout);
        }
  return g_test_run ();
}
