/* test-bubblewrap-guest.c — what a guest of the bubblewrap driver gets, against real bubblewrap
 *
 * Commands (exit status, stdin, options, stdio, environment, namespaces,
 * containment, networks, live output, admission), nothing left behind by a
 * daemonizing guest at a deadline, an output cap, a cancel or a stop, and
 * file I/O against a hostile guest. The store, the lifecycle and the
 * errors are in test-bubblewrap.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-glib/json-glib.h>
#include <sandbox.h>

#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-session.h"

/* Fixture ------------------------------------------------------------------ */

/* The kit's fixture (tests/kit): a bubblewrap backend, the hello template,
 * and a deny-all session of it. */
typedef SandboxTestFixture Fixture;

/* Commands ----------------------------------------------------------------------- */

static void
test_exit_status_and_stdin (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxResult) killed = NULL;
  g_autoptr(SandboxResult) unread = NULL;
  g_autoptr(GBytes) input = g_bytes_new_static ("piped in", 8);
  g_autofree guint8 *large = g_malloc0 (4 * 1024 * 1024);
  g_autoptr(GBytes) large_input = g_bytes_new_take (g_steal_pointer (&large), 4 * 1024 * 1024);
  SandboxCommand *command;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  command = SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c", "cat; echo oops >&2; exit 7");
  sandbox_command_set_stdin (command, input);
  result = sandbox_test_run (fixture->session, command, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 7);
  out = sandbox_result_dup_stdout_text (result);
  err = sandbox_result_dup_stderr_text (result);
  g_assert_cmpstr (out, ==, "piped in");
  g_assert_cmpstr (err, ==, "oops\n");

  killed = sandbox_test_run (fixture->session, SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c", "kill -TERM $$"), &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (killed), ==, 128 + 15);

  /* A guest that never reads a large stdin: EPIPE is not an error. */
  command = SANDBOX_TEST_COMMAND ("/usr/bin/true");
  sandbox_command_set_stdin (command, large_input);
  unread = sandbox_test_run (fixture->session, command, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (unread), ==, 0);
}

static void
test_options_after_separator_are_the_command (Fixture       *fixture,
                                              gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) echoed = NULL;
  g_autoptr(SandboxResult) named = NULL;
  g_autofree char *out = NULL;
  g_autofree char *ran = NULL;
  SandboxCommand *command;

  echoed = sandbox_test_run (fixture->session,
                        SANDBOX_TEST_COMMAND ("/usr/bin/echo", "--bind", "/", "/", "--dev-bind", "/dev", "/dev"),
                        &error);
  g_assert_no_error (error);
  out = sandbox_result_dup_stdout_text (echoed);
  g_assert_cmpstr (out, ==, "--bind / / --dev-bind /dev /dev\n");

  /* An executable literally named --dev-bind is run as a program. */
  g_free (sandbox_test_guest_sh (fixture->session,
                    "printf '#!/bin/sh\\necho ran as a program \"$@\"\\n' > /workspace/--dev-bind;"
                    "chmod +x /workspace/--dev-bind"));
  command = SANDBOX_TEST_COMMAND ("--dev-bind", "/", "/");
  sandbox_command_setenv (command, "PATH", "/workspace");
  named = sandbox_test_run (fixture->session, command, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (named), ==, 0);
  ran = sandbox_result_dup_stdout_text (named);
  g_assert_cmpstr (ran, ==, "ran as a program / /\n");
}

static void
test_only_stdio_reaches_guest (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autofree char *fds = NULL;
  int leaked = open ("/dev/null", O_RDONLY);   /* not close-on-exec */

  g_assert_cmpint (leaked, >=, 0);
  fds = sandbox_test_guest_sh (fixture->session, "cd /proc/self/fd && echo *");
  /* The shell's glob runs in the shell itself: 0 1 2 and its own dir fd. */
  g_assert_true (g_str_equal (fds, "0 1 2 3\n") || g_str_equal (fds, "0 1 2\n"));
  close (leaked);
}

static void
test_environment_is_cleared (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autofree char *out = NULL;
  SandboxCommand *command;

  g_setenv ("SANDBOX_TEST_HOST_SECRET", "host-secret-value", TRUE);
  command = SANDBOX_TEST_COMMAND ("/usr/bin/env");
  sandbox_command_setenv (command, "GREETING", "hi there");
  result = sandbox_test_run (fixture->session, command, &error);
  g_assert_no_error (error);
  out = sandbox_result_dup_stdout_text (result);
  g_assert_cmpstr (out, ==, "PATH=/usr/bin:/bin\nHOME=/workspace\nGREETING=hi there\n"
                   "PWD=/workspace\n");   /* bwrap sets PWD at --chdir */
  g_unsetenv ("SANDBOX_TEST_HOST_SECRET");
}

static char *
host_namespace (const char *kind)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/ns/%s", kind);

  return g_file_read_link (path, NULL);
}

static void
test_namespaces_differ_from_host (Fixture       *fixture,
                                  gconstpointer  data)
{
  const char *kinds[] = { "user", "pid", "ipc", "uts", "net", "mnt" };
  g_autofree char *out = sandbox_test_guest_sh (fixture->session,
                                   "for k in user pid ipc uts net mnt; do "
                                   "readlink /proc/self/ns/$k; done");
  g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

  g_assert_cmpuint (g_strv_length (lines), ==, G_N_ELEMENTS (kinds) + 1);
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_autofree char *host = host_namespace (kinds[i]);

      g_assert_nonnull (host);
      g_assert_true (g_str_has_prefix (lines[i], kinds[i]));
      g_assert_cmpstr (lines[i], !=, host);
    }
}

static void
test_containment (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *run_listing = NULL;
  g_autofree char *home_check = NULL;
  const char *home = g_get_home_dir ();

  /* /etc is the curated one (issue 21; tests/escape/test-escape-runtime.c),
   * never the host's: no shadow, no host users, no host configuration. */
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -e /etc/shadow"), ==, 1);
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "grep -q '^root:x:0:0:root:/root:' /etc/passwd"),
                   !=, 0);
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -e /etc/fstab || test -e /etc/os-release"),
                   ==, 1);
  home_check = g_strdup_printf ("test -e '%s'", home);
  if (!g_str_has_prefix (home, "/usr") && g_strcmp0 (home, "/") != 0)
    g_assert_cmpint (sandbox_test_guest_status (fixture->session, home_check), ==, 1);
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "touch /usr/sandbox-escape"), !=, 0);
  g_assert_false (g_file_test ("/usr/sandbox-escape", G_FILE_TEST_EXISTS));
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -e /var/run/dbus || test -e /tmp/.X11-unix"),
                   ==, 1);
  run_listing = sandbox_test_guest_sh (fixture->session, "ls -A /run");
  g_assert_cmpstr (run_listing, ==, "");

  /* /tmp is fresh for every command. */
  g_free (sandbox_test_guest_sh (fixture->session, "echo x > /tmp/left-behind"));
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -e /tmp/left-behind"), ==, 1);
  /* The workspace is writable and persists. */
  g_free (sandbox_test_guest_sh (fixture->session, "echo kept > /workspace/kept"));
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -e /workspace/kept"), ==, 0);
}

static void
test_deny_all_has_no_network (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(GSocketListener) listener = g_socket_listener_new ();
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *script = NULL;
  g_autoptr(GSocket) control = NULL;
  guint16 port;

  g_assert_true (g_socket_listener_add_address (listener, address, G_SOCKET_TYPE_STREAM,
                                                G_SOCKET_PROTOCOL_TCP, NULL, &bound, &error));
  g_assert_no_error (error);
  port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));

  /* The server is reachable from the host… */
  control = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_assert_true (g_socket_connect (control, bound, NULL, &error));
  g_assert_no_error (error);

  /* …but not from the guest, and there is no DNS. */
  script = g_strdup_printf ("echo hi > /dev/tcp/127.0.0.1/%u", port);
  {
    g_autoptr(SandboxResult) result =
      sandbox_test_run (fixture->session, SANDBOX_TEST_COMMAND ("/usr/bin/bash", "-c", script), &error);

    g_assert_no_error (error);
    g_assert_cmpint (sandbox_result_get_exit_status (result), !=, 0);
  }
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "getent hosts example.com"), !=, 0);
  g_assert_cmpint (sandbox_test_guest_status (fixture->session, "test -e /etc/resolv.conf"), ==, 1);
}

/* allow-all: not the host's network namespace (the reference's
 * --share-net) but one of its own with a way out: slirp4netns's tap0 and
 * the default route through it (see test-escape-network.c for what it
 * reaches and what not). */
static void
test_allow_all_has_own_network (Fixture       *fixture,
                                gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) allow_all = sandbox_network_policy_new_allow_all ();
  g_autoptr(GError) error = NULL;
  g_autofree char *guest_net = NULL;
  g_autofree char *routes = NULL;
  g_autofree char *host_net = host_namespace ("net");

  g_assert_true (sandbox_session_set_network_policy (fixture->session, allow_all, NULL, &error));
  g_assert_no_error (error);
  guest_net = sandbox_test_guest_sh (fixture->session, "readlink /proc/self/ns/net");
  g_strchomp (guest_net);
  g_assert_cmpstr (guest_net, !=, host_net);
  routes = sandbox_test_guest_sh (fixture->session, "cat /proc/net/route");
  g_assert_nonnull (strstr (routes, "tap0\t00000000\t"));
}

typedef struct
{
  GMainLoop *loop;
  GString *streamed;
  SandboxResult *result;
  GError *error;
} StreamData;

static void
stdout_data_cb (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  StreamData *stream = user_data;

  g_string_append_len (stream->streamed, g_bytes_get_data (data, NULL), g_bytes_get_size (data));
}

static void
wait_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  StreamData *stream = user_data;

  stream->result = sandbox_process_wait_finish (SANDBOX_PROCESS (object), result, &stream->error);
  g_main_loop_quit (stream->loop);
}

static void
test_output_streams_live (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  StreamData stream = { g_main_loop_new (NULL, FALSE), g_string_new (NULL), NULL, NULL };

  process = sandbox_test_spawn (fixture->session,
                                   SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c", "echo one; sleep 0.2; echo two"),
                                   NULL, &error);
  g_assert_no_error (error);
  g_signal_connect (process, "stdout-data", G_CALLBACK (stdout_data_cb), &stream);
  sandbox_process_wait_async (process, NULL, wait_done_cb, &stream);
  g_main_loop_run (stream.loop);
  g_assert_no_error (stream.error);
  g_assert_cmpstr (stream.streamed->str, ==, "one\ntwo\n");
  g_assert_cmpint (sandbox_result_get_exit_status (stream.result), ==, 0);
  g_object_unref (stream.result);
  g_string_free (stream.streamed, TRUE);
  g_main_loop_unref (stream.loop);
}

/* Teardown leaves nothing behind ------------------------------------------------ */

static void
test_deadline_kills_daemons (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autofree char *token = sandbox_test_unique_token ();
  g_autofree char *daemon = g_strdup_printf ("%s-daemon", token);
  SandboxCommand *command = sandbox_test_daemon_command (fixture->session, token);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = NULL;

  sandbox_command_set_timeout_ms (command, 1000);
  result = sandbox_test_run (fixture->session, command, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox command deadline exceeded");
  sandbox_test_assert_no_processes_with (token);
}

static void
test_output_cap_kills_daemons (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autofree char *token = sandbox_test_unique_token ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autofree char *script =
    g_strdup_printf ("/usr/bin/sh /workspace/daemon.sh %s > /dev/null & sleep 0.5; "
                     "while :; do echo flooding; done", token);

  g_object_unref (sandbox_test_daemon_command (fixture->session, token));
  process = sandbox_test_spawn (fixture->session, SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c", script),
                                   NULL, &error);
  g_assert_no_error (error);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_cmpstr (error->message, ==, "Sandbox output limit exceeded");
  sandbox_test_assert_no_processes_with (token);
}

static void
test_cancel_kills_daemons (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autofree char *token = sandbox_test_unique_token ();
  g_autofree char *daemon = g_strdup_printf ("%s-daemon", token);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;

  process = sandbox_test_spawn (fixture->session, sandbox_test_daemon_command (fixture->session, token),
                                   cancellable, &error);
  g_assert_no_error (error);
  sandbox_test_wait_for_processes_with (daemon);
  g_cancellable_cancel (cancellable);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  sandbox_test_assert_no_processes_with (token);
}

static void
test_stop_kills_daemons (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autofree char *token = sandbox_test_unique_token ();
  g_autofree char *daemon = g_strdup_printf ("%s-daemon", token);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxProcess) second = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autofree char *token2 = sandbox_test_unique_token ();

  process = sandbox_test_spawn (fixture->session, sandbox_test_daemon_command (fixture->session, token),
                                   NULL, &error);
  g_assert_no_error (error);
  sandbox_test_wait_for_processes_with (daemon);
  g_assert_true (sandbox_process_stop (process, NULL, &error));
  sandbox_test_assert_no_processes_with (token);
  result = sandbox_process_wait (process, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 137);

  /* Stopping the session kills its commands the same way. */
  second = sandbox_test_spawn (fixture->session, sandbox_test_daemon_command (fixture->session, token2),
                                  NULL, &error);
  g_assert_no_error (error);
  sandbox_test_wait_for_processes_with (token2);
  g_assert_true (sandbox_handle_stop (fixture->handle, NULL, &error));
  sandbox_test_assert_no_processes_with (token2);
}

static void
test_stop_right_after_spawn (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autofree char *token = sandbox_test_unique_token ();
  g_autoptr(GError) error = NULL;
  GRand *rand = g_rand_new ();

  g_object_unref (sandbox_test_daemon_command (fixture->session, token));
  for (guint i = 0; i < 200; i++)
    {
      g_autoptr(SandboxProcess) process = NULL;

      process = sandbox_test_spawn (fixture->session,
                                       SANDBOX_TEST_COMMAND ("/usr/bin/sh", "/workspace/daemon.sh", token),
                                       NULL, &error);
      g_assert_no_error (error);
      g_usleep (g_rand_int_range (rand, 0, 20 * 1000));
      g_assert_true (sandbox_process_stop (process, NULL, &error));
      g_assert_no_error (error);
      g_assert_true (sandbox_process_is_finished (process));
    }
  g_rand_free (rand);
  /* bwrap's own command line names the token too: nothing at all is left. */
  sandbox_test_assert_no_processes_with (token);
}

typedef struct
{
  SandboxSession *session;
  SandboxProcess *process;
} SpawnInThread;

static gpointer
spawn_in_thread (gpointer data)
{
  SpawnInThread *spawn = data;
  g_autoptr(GError) error = NULL;

  spawn->process = sandbox_test_spawn (spawn->session,
                                          SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c", "sleep 1; echo survived"),
                                          NULL, &error);
  g_assert_no_error (error);
  return NULL;
}

static void
test_spawning_thread_may_exit (Fixture       *fixture,
                               gconstpointer  data)
{
  SpawnInThread spawn = { fixture->session, NULL };
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  g_thread_join (g_thread_new ("short-lived", spawn_in_thread, &spawn));
  result = sandbox_process_wait (spawn.process, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sandbox_result_get_exit_status (result), ==, 0);
  out = sandbox_result_dup_stdout_text (result);
  g_assert_cmpstr (out, ==, "survived\n");
  g_object_unref (spawn.process);
}

static void
test_admission_limit (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(GPtrArray) live = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) refused = NULL;
  g_autoptr(SandboxProcess) admitted = NULL;
  g_autofree char *token = sandbox_test_unique_token ();
  SandboxProcess *first;

  g_assert_cmpuint (sandbox_backend_get_max_concurrent_commands (fixture->backend), ==, 8);
  for (guint i = 0; i < 8; i++)
    {
      SandboxProcess *process =
        sandbox_test_spawn (fixture->session,
                               SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c", "sleep 30", token), NULL, &error);

      g_assert_no_error (error);
      g_ptr_array_add (live, process);
    }

  refused = sandbox_test_spawn (fixture->session, SANDBOX_TEST_COMMAND ("/usr/bin/true"), NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Sandbox command concurrency limit reached");
  g_clear_error (&error);

  g_assert_false (sandbox_session_set_network_policy (fixture->session, deny, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (error->message, ==, "Stop live commands before changing network policy");
  g_clear_error (&error);

  /* A slot frees once a command is completely gone. */
  first = g_ptr_array_index (live, 0);
  g_assert_true (sandbox_process_stop (first, NULL, &error));
  admitted = sandbox_test_spawn (fixture->session, SANDBOX_TEST_COMMAND ("/usr/bin/true"), NULL, &error);
  g_assert_no_error (error);
  g_object_unref (sandbox_process_wait (admitted, NULL, &error));

  g_assert_true (sandbox_handle_stop (fixture->handle, NULL, &error));
  sandbox_test_assert_no_processes_with (token);
}

/* Contained file I/O against a hostile guest ---------------------------------- */

static void
assert_read_refused (SandboxSession *session,
                     const char     *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = sandbox_session_read_bytes (session, path, NULL, &error);

  g_assert_null (bytes);
  g_assert_nonnull (error);
}

static void
test_planted_symlinks_stay_inside (Fixture       *fixture,
                                   gconstpointer  data)
{
  g_autofree char *host_dir = g_dir_make_tmp ("sandbox-host-XXXXXX", NULL);
  g_autofree char *host_file = g_build_filename (host_dir, "precious", NULL);
  g_autofree char *evil = g_build_filename (host_dir, "evil", NULL);
  g_autofree char *plant = NULL;
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *session_dir = g_build_filename (fixture->state_directory, digest, "sessions",
                                                   sandbox_session_get_id (fixture->session), NULL);
  g_autofree char *outside = g_build_filename (session_dir, "escaped", NULL);
  g_autoptr(GBytes) payload = g_bytes_new_static ("payload", 7);
  g_autoptr(GError) error = NULL;
  g_autofree char *precious = NULL;

  g_assert_true (g_file_set_contents (host_file, "keep me", -1, NULL));
  /* The guest cannot see host_dir, but it can name it in a link. */
  plant = g_strdup_printf ("cd /workspace && ln -s /etc/passwd passwd && ln -s .. up && "
                           "ln -s '%s' hostdir && ln -s '%s' hostfile && ln -s up/escaped esc",
                           host_dir, host_file);
  g_free (sandbox_test_guest_sh (fixture->session, plant));

  assert_read_refused (fixture->session, "passwd");
  assert_read_refused (fixture->session, "up/state.json");
  assert_read_refused (fixture->session, "hostfile");
  assert_read_refused (fixture->session, "hostdir/precious");

  g_assert_false (sandbox_session_write_bytes (fixture->session, "hostdir/evil", payload, NULL, &error));
  g_clear_error (&error);
  g_assert_false (sandbox_session_write_bytes (fixture->session, "up/escaped", payload, NULL, &error));
  g_clear_error (&error);
  sandbox_session_write_bytes (fixture->session, "esc", payload, NULL, &error);
  g_clear_error (&error);
  g_assert_false (g_file_test (evil, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (outside, G_FILE_TEST_EXISTS));

  /* Removing a link removes the link, never its target. */
  g_assert_true (sandbox_session_remove_path (fixture->session, "hostdir", NULL, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_session_remove_path (fixture->session, "up", NULL, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_get_contents (host_file, &precious, NULL, NULL));
  g_assert_cmpstr (precious, ==, "keep me");
  g_assert_true (g_file_test (session_dir, G_FILE_TEST_IS_DIR));

  /* Deleting the session must not follow the remaining links either. */
  g_assert_true (sandbox_handle_delete (fixture->handle, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&fixture->handle);
  g_assert_true (g_file_test (host_file, G_FILE_TEST_IS_REGULAR));
  g_assert_true (g_file_test ("/etc/passwd", G_FILE_TEST_IS_REGULAR));
}

static void
test_swapped_symlink_race (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxProcess) swapper = NULL;
  g_autoptr(GBytes) payload = g_bytes_new_static ("written", 7);
  g_autofree char *passwd = NULL;
  guint reads_ok = 0;
  gint64 end;

  g_assert_true (g_file_get_contents ("/etc/passwd", &passwd, NULL, NULL));
  g_free (sandbox_test_guest_sh (fixture->session, "cd /workspace && echo inside > real && ln -s real swap"));
  swapper = sandbox_test_spawn (fixture->session,
                                   SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c",
                                            "cd /workspace; while :; do "
                                            "ln -sfn /etc/passwd tmp1 && mv -T tmp1 swap; "
                                            "ln -sfn real tmp2 && mv -T tmp2 swap; done"),
                                   NULL, &error);
  g_assert_no_error (error);

  end = g_get_monotonic_time () + G_USEC_PER_SEC;
  while (g_get_monotonic_time () < end)
    {
      g_autoptr(GBytes) bytes = sandbox_session_read_bytes (fixture->session, "swap", NULL, NULL);

      if (bytes != NULL)
        {
          g_autofree char *text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));

          /* The link's in-workspace target, or the file our write put there. */
          g_assert_true (g_str_equal (text, "inside\n") || g_str_equal (text, "written"));
          reads_ok++;
        }
      sandbox_session_write_bytes (fixture->session, "swap", payload, NULL, NULL);
    }
  g_assert_true (sandbox_process_stop (swapper, NULL, &error));
  g_assert_true (g_file_test ("/etc/passwd", G_FILE_TEST_IS_REGULAR));
  {
    g_autofree char *after = NULL;

    g_assert_true (g_file_get_contents ("/etc/passwd", &after, NULL, NULL));
    g_assert_cmpstr (after, ==, passwd);
  }
  g_test_message ("%u reads got the in-workspace target", reads_ok);
}

static void
test_special_files_fail_promptly (Fixture       *fixture,
                                  gconstpointer  data)
{
  gint64 start;

  g_free (sandbox_test_guest_sh (fixture->session,
                    "cd /workspace && mkfifo fifo && truncate -s 10G sparse && ln hello.txt hard"));
  start = g_get_monotonic_time ();
  assert_read_refused (fixture->session, "fifo");
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);

  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) bytes = sandbox_session_read_bytes (fixture->session, "sparse", NULL, &error);

    g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
    g_assert_null (bytes);
  }

  if (g_file_test ("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE))
    {
      g_free (sandbox_test_guest_sh (fixture->session,
                        "cd /workspace && /usr/bin/python3 -c "
                        "'import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")'"));
      start = g_get_monotonic_time ();
      assert_read_refused (fixture->session, "sock");
      g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
    }

  /* A file hard-linked by the guest is replaced, not written through. */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(GBytes) payload = g_bytes_new_static ("replaced", 8);
    g_autoptr(GBytes) original = NULL;

    g_assert_true (sandbox_session_write_bytes (fixture->session, "hard", payload, NULL, &error));
    g_assert_no_error (error);
    original = sandbox_session_read_bytes (fixture->session, "hello.txt", NULL, &error);
    g_assert_no_error (error);
    g_assert_cmpmem (g_bytes_get_data (original, NULL), g_bytes_get_size (original), "hello", 5);
  }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

#define FIXTURE_TEST(path, func) \
  g_test_add ("/sandbox/bubblewrap/" path, Fixture, "bubblewrap", sandbox_test_fixture_set_up_session, \
              func, sandbox_test_fixture_tear_down)

  FIXTURE_TEST ("exit-status-and-stdin", test_exit_status_and_stdin);
  FIXTURE_TEST ("options-after-separator-are-the-command",
                test_options_after_separator_are_the_command);
  FIXTURE_TEST ("only-stdio-reaches-guest", test_only_stdio_reaches_guest);
  FIXTURE_TEST ("environment-is-cleared", test_environment_is_cleared);
  FIXTURE_TEST ("namespaces-differ-from-host", test_namespaces_differ_from_host);
  FIXTURE_TEST ("containment", test_containment);
  FIXTURE_TEST ("deny-all-has-no-network", test_deny_all_has_no_network);
  FIXTURE_TEST ("allow-all-has-own-network", test_allow_all_has_own_network);
  FIXTURE_TEST ("output-streams-live", test_output_streams_live);
  FIXTURE_TEST ("deadline-kills-daemons", test_deadline_kills_daemons);
  FIXTURE_TEST ("output-cap-kills-daemons", test_output_cap_kills_daemons);
  FIXTURE_TEST ("cancel-kills-daemons", test_cancel_kills_daemons);
  FIXTURE_TEST ("stop-kills-daemons", test_stop_kills_daemons);
  FIXTURE_TEST ("stop-right-after-spawn", test_stop_right_after_spawn);
  FIXTURE_TEST ("spawning-thread-may-exit", test_spawning_thread_may_exit);
  FIXTURE_TEST ("admission-limit", test_admission_limit);
  FIXTURE_TEST ("planted-symlinks-stay-inside", test_planted_symlinks_stay_inside);
  FIXTURE_TEST ("swapped-symlink-race", test_swapped_symlink_race);
  FIXTURE_TEST ("special-files-fail-promptly", test_special_files_fail_promptly);

  return g_test_run ();
}
