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
  if (have ("node"))
    assert_guest_says (&s, "node -e 'process.stdout.write (require (\"os\").userInfo ().username)'",
                       g_str_equal (uid, "0\n") ? "root" : "sandbox");
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

/* POSIX shared memory and semaphores live in /dev/shm, a tmpfs of its own
 * in a read-only /dev since issue 31: Python's multiprocessing (a lock, a
 * queue to a child process) and shared_memory still work there, and
 * /dev/shm holds nothing of them afterwards. */
static void
test_shared_memory_works (void)
{
  EscapeSession s = { 0 };

  if (!have ("python3"))
    {
      g_test_skip ("no python3");
      return;
    }
  escape_session_open (&s, NULL);
  assert_guest_says (&s,
                     "python3 -c '\n"
                     "import multiprocessing as mp\n"
                     "from multiprocessing import shared_memory\n"
                     "def put(q): q.put(42)\n"
                     "if __name__ == \"__main__\":\n"
                     "    lock = mp.Lock(); lock.acquire(); lock.release()\n"
                     "    q = mp.Queue(); p = mp.Process(target=put, args=(q,)); p.start()\n"
                     "    print(q.get()); p.join()\n"
                     "    m = shared_memory.SharedMemory(create=True, size=1 << 20)\n"
                     "    m.buf[0] = 7; print(m.buf[0]); m.close(); m.unlink()\n"
                     "' && ls -A /dev/shm | wc -l",
                     "42\n7\n0\n");
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
  /* The synthesized files are the guest's own (bwrap writes them as the
   * guest): only /etc's read-only mount keeps them as they are. */
  g_assert_cmpint (escape_sh_status (s.session, "chmod 0666 /etc/passwd", NULL, NULL), !=, 0);
  g_assert_cmpint (escape_sh_status (s.session, "rm -f /etc/hosts", NULL, NULL), !=, 0);
  g_assert_cmpint (escape_sh_status (s.session, "test -e /etc/hosts", NULL, NULL), ==, 0);
  passwd = guest_ok (&s, "cat /etc/passwd");
  g_assert_null (strstr (passwd, "root:x:0:0:root:/root"));
  assert_guest_says (&s, "hostname", "sandbox\n");
  escape_session_close (&s);
}

/* The host files the curated /etc copies rather than binds (the dynamic
 * linker's cache, openssl.cnf) are the host's bytes, and read-only like
 * the rest of /etc although the guest owns the copies. */
static void
test_etc_host_copies (void)
{
  static const char * const files[] = { "/etc/ld.so.cache", "/etc/ssl/openssl.cnf" };
  EscapeSession s = { 0 };

  escape_session_open (&s, NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *contents = NULL;
      gsize length;
      g_autofree char *host_sum = NULL;
      g_autofree char *script = NULL;
      g_autofree char *expected = NULL;

      if (!g_file_get_contents (files[i], &contents, &length, NULL))
        continue;   /* the host lacks it: so does the guest (etc-is-curated) */
      host_sum = g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *) contents, length);
      script = g_strdup_printf ("sha256sum < %s | cut -d' ' -f1", files[i]);
      expected = g_strconcat (host_sum, "\n", NULL);
      assert_guest_says (&s, script, expected);
      g_clear_pointer (&script, g_free);
      script = g_strdup_printf ("echo x >> %s", files[i]);
      g_assert_cmpint (escape_sh_status (s.session, script, NULL, NULL), !=, 0);
      g_clear_pointer (&script, g_free);
      script = g_strdup_printf ("chmod 0666 %s", files[i]);
      g_assert_cmpint (escape_sh_status (s.session, script, NULL, NULL), !=, 0);
    }
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

/* The guest's /proc/1/cmdline names no host path. Its pid 1 is the stub
 * (drivers/bubblewrap/stub/), run from an inherited descriptor with only
 * descriptor numbers for arguments; bwrap's own command line, whose
 * options come through --args FD, is outside the guest's pid namespace.
 * Make add_stub() in sandbox-bubblewrap-args.c run the stub by its host
 * path (sandbox_bubblewrap_stub_get_path()) to see it fail. /proc/self/mountinfo still shows the
 * workspace's source path (docs/guide/runtime.md). */
static void
test_cmdline_names_no_host_path (void)
{
  EscapeSession s = { 0 };
  g_autofree char *init = NULL;

  escape_session_open (&s, NULL);
  init = guest_ok (&s, "tr '\\0' ' ' < /proc/1/cmdline");
  g_test_message ("guest /proc/1/cmdline: %s", init);
  /* A layered session's stub locks the session's lock file, which it
   * gets open (sandbox-bubblewrap-keeper.c). */
  g_assert_true (g_regex_match_simple ("^/proc/self/fd/[0-9]+ control=[0-9]+ (seccomp=[0-9]+ )?"
                                       "(report=[0-9]+ )?(handoff=[0-9]+ )?"
                                       "(lock=/workspace|lock-fd=[0-9]+) $",
                                       init, 0, 0));
  g_assert_null (strstr (init, s.state_directory));
  escape_session_close (&s);
}

/* A TLS server on 127.0.0.1 answering each connection with one fixed HTTP
 * response, in a thread of its own (the test's calls block). */
typedef struct
{
  GSocketListener *listener;
  GTlsCertificate *certificate;
  GCancellable *cancellable;
  GThread *thread;
  guint16 port;
} TlsServer;

static gpointer
tls_server_thread (gpointer data)
{
  TlsServer *server = data;

  for (;;)
    {
      g_autoptr(GSocketConnection) connection = NULL;
      g_autoptr(GIOStream) tls = NULL;
      char request[4096];
      static const char answer[] = "HTTP/1.0 200 OK\r\nContent-Length: 14\r\n"
                                   "Connection: close\r\n\r\nhello over tls";

      connection = g_socket_listener_accept (server->listener, NULL, server->cancellable, NULL);
      if (connection == NULL)
        return NULL;
      tls = g_tls_server_connection_new (G_IO_STREAM (connection), server->certificate, NULL);
      /* A client that refuses the certificate ends the handshake: fine. */
      if (tls == NULL ||
          !g_tls_connection_handshake (G_TLS_CONNECTION (tls), server->cancellable, NULL) ||
          g_input_stream_read (g_io_stream_get_input_stream (tls), request, sizeof request,
                               server->cancellable, NULL) <= 0)
        continue;
      g_output_stream_write_all (g_io_stream_get_output_stream (tls), answer, strlen (answer),
                                 NULL, server->cancellable, NULL);
      g_io_stream_close (tls, NULL, NULL);
    }
}

static void
tls_server_start (TlsServer  *server,
                  const char *cert_path,
                  const char *key_path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  server->certificate = g_tls_certificate_new_from_files (cert_path, key_path, &error);
  g_assert_no_error (error);
  server->listener = g_socket_listener_new ();
  g_socket_listener_add_address (server->listener, address, G_SOCKET_TYPE_STREAM,
                                 G_SOCKET_PROTOCOL_TCP, NULL, &bound, &error);
  g_assert_no_error (error);
  server->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
  server->cancellable = g_cancellable_new ();
  server->thread = g_thread_new ("tls-server", tls_server_thread, server);
}

static void
tls_server_stop (TlsServer *server)
{
  g_cancellable_cancel (server->cancellable);
  g_thread_join (server->thread);
  g_socket_listener_close (server->listener);
  g_clear_object (&server->listener);
  g_clear_object (&server->certificate);
  g_clear_object (&server->cancellable);
}

/* Runs openssl with @args (a shell word list) in @directory. */
static void
openssl (const char *directory,
         const char *args)
{
  g_autofree char *command = g_strdup_printf ("openssl %s", args);
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) argv = NULL;
  int status = 0;

  g_shell_parse_argv (command, NULL, &argv, &error);
  g_assert_no_error (error);
  g_spawn_sync (directory, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                NULL, NULL, &err, &status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("%s failed: %s", command, err);
}

/* A throw-away CA (ca.pem) and a certificate for localhost and 127.0.0.1
 * it signed (server.pem, server.key), in @directory. */
static void
make_test_ca (const char *directory)
{
  g_autofree char *ext = g_build_filename (directory, "server.ext", NULL);
  g_autoptr(GError) error = NULL;

  openssl (directory, "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                      "-keyout ca.key -out ca.pem -days 2 -subj /CN=libsandbox-test-CA "
                      "-addext basicConstraints=critical,CA:TRUE "
                      "-addext keyUsage=critical,keyCertSign");
  openssl (directory, "req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                      "-keyout server.key -out server.csr -subj /CN=localhost");
  g_file_set_contents (ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\n", -1, &error);
  g_assert_no_error (error);
  openssl (directory, "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
                      "-days 2 -extfile server.ext -out server.pem");
}

/* curl https:// under allow-all to a loopback server whose CA the test
 * made: refused (exit 60) with the host's bundle alone, answered once the
 * backend's extra-ca-certificates names the CA, and the host's own CAs are
 * still there. Drop the add_data() of the bundle in
 * sandbox_bubblewrap_etc_add() to see the second session fail with 60. */
static void
test_extra_ca_certificates (void)
{
  g_autofree char *directory = NULL;
  g_autofree char *ca = NULL;
  g_autofree char *cert = NULL;
  g_autofree char *key = NULL;
  g_autofree char *curl = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxNetworkPolicy) allow_all = sandbox_network_policy_new_allow_all ();
  TlsServer server = { 0 };
  EscapeSession plain = { 0 };
  EscapeSession trusting = { 0 };

  if (!have ("curl") || !have ("openssl"))
    {
      g_test_skip ("curl or openssl is not installed");
      return;
    }
  directory = g_dir_make_tmp ("sandbox-test-ca-XXXXXX", &error);
  g_assert_no_error (error);
  make_test_ca (directory);
  ca = g_build_filename (directory, "ca.pem", NULL);
  cert = g_build_filename (directory, "server.pem", NULL);
  key = g_build_filename (directory, "server.key", NULL);
  tls_server_start (&server, cert, key);
  /* The server is on the host's loopback, which an allow-all guest
   * reaches at 10.0.2.2 only with host-loopback; the name stays the
   * certificate's. */
  curl = g_strdup_printf ("curl -sS --max-time 20 --connect-to localhost:%u:10.0.2.2:%u "
                          "https://localhost:%u/", server.port, server.port, server.port);

  escape_session_open (&plain, "host-loopback", "true", NULL);
  g_assert_true (sandbox_session_set_network_policy (plain.session, allow_all, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (escape_sh_status (plain.session, curl, NULL, NULL), ==, 60);
  escape_session_close (&plain);

  escape_session_open (&trusting, "extra-ca-certificates", ca, "host-loopback", "true", NULL);
  g_assert_true (sandbox_session_set_network_policy (trusting.session, allow_all, NULL, &error));
  g_assert_no_error (error);
  assert_guest_says (&trusting, curl, "hello over tls");
  if (g_file_test ("/etc/ssl/certs/ca-certificates.crt", G_FILE_TEST_IS_REGULAR))
    assert_guest_says (&trusting, "test \"$(grep -c BEGIN /etc/ssl/certs/ca-certificates.crt)\" -gt 1 "
                                  "&& echo host-cas-kept", "host-cas-kept\n");
  escape_session_close (&trusting);

  tls_server_stop (&server);
  escape_state_directory_remove (directory);
}

/* Whatever is not a file of certificates is refused when the backend is
 * made, naming the property. */
static void
test_extra_ca_certificates_refused (void)
{
  g_autofree char *directory = escape_state_directory_new ();
  g_autofree char *key = g_build_filename (directory, "ca.key", NULL);
  g_autofree char *mixed = g_build_filename (directory, "mixed.pem", NULL);
  g_autofree char *empty = g_build_filename (directory, "empty.pem", NULL);
  g_autofree char *missing = g_build_filename (directory, "missing.pem", NULL);
  g_autofree char *ca = NULL;
  g_autofree char *key_text = NULL;
  g_autofree char *ca_text = NULL;
  g_autofree char *mixed_text = NULL;
  g_autoptr(GError) error = NULL;
  const char *bad[] = { "relative.pem", key, mixed, empty, missing, directory };

  if (!have ("openssl"))
    {
      g_test_skip ("openssl is not installed");
      return;
    }
  make_test_ca (directory);
  ca = g_build_filename (directory, "ca.pem", NULL);
  g_file_get_contents (ca, &ca_text, NULL, &error);
  g_assert_no_error (error);
  g_file_get_contents (key, &key_text, NULL, &error);
  g_assert_no_error (error);
  mixed_text = g_strconcat (ca_text, key_text, NULL);
  g_file_set_contents (mixed, mixed_text, -1, &error);
  g_assert_no_error (error);
  g_file_set_contents (empty, "", 0, &error);
  g_assert_no_error (error);

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(SandboxBackend) backend =
        sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", directory,
                             "extra-ca-certificates", bad[i], NULL);

      g_test_message ("%s: %s", bad[i], error != NULL ? error->message : "accepted");
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_nonnull (strstr (error->message, "extra-ca-certificates"));
      g_assert_null (backend);
      g_clear_error (&error);
    }

  {
    g_autoptr(SandboxBackend) backend =
      sandbox_backend_new ("bubblewrap", NULL, &error, "state-directory", directory,
                           "extra-ca-certificates", ca, "curated-etc", FALSE, NULL);

    g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
    g_assert_null (backend);
    g_clear_error (&error);
  }
  escape_state_directory_remove (directory);
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
  g_test_add_func ("/escape/runtime/shared-memory-works", test_shared_memory_works);
  g_test_add_func ("/escape/runtime/etc-is-curated", test_etc_is_curated);
  g_test_add_func ("/escape/runtime/etc-host-copies", test_etc_host_copies);
  g_test_add_func ("/escape/runtime/reference-has-no-etc", test_reference_has_no_etc);
  g_test_add_func ("/escape/runtime/git-identity", test_git_identity);
  g_test_add_func ("/escape/runtime/cmdline-names-no-host-path", test_cmdline_names_no_host_path);
  g_test_add_func ("/escape/runtime/extra-ca-certificates", test_extra_ca_certificates);
  g_test_add_func ("/escape/runtime/extra-ca-certificates-refused",
                   test_extra_ca_certificates_refused);
  return g_test_run ();
}
