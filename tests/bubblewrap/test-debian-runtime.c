/* test-debian-runtime.c — pytest and pip in a session on a real Debian runtime
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Issue 35's runtime made by the system's package tools: a Debian 12 root
 * file system with python3, pytest and pip, which with-debian-runtime.sh
 * builds with mmdebstrap once per build directory in
 * tests/runtime-cache/debian-pytest. A template on it runs `python3 -m
 * pytest` on a tiny project on a host that need not have pytest, sees the
 * runtime's /etc/os-release and none of the host's own programs, and runs
 * pip, whose installs fail while the runtime is read-only. In the suite
 * 'slow' (the first run downloads); as root and, through
 * run-unprivileged.sh, as an unprivileged user.
 *
 * The runtime is imported once per run of this program (some 135 MB), into
 * a backend that every case shares; each case prewarms its own template on
 * it and makes its own session (open_session_on_runtime()).
 */

#include <string.h>

#include <archive.h>
#include <archive_entry.h>
#include <glib/gstdio.h>
#include <sandbox.h>

#include "sandbox-test-fixture.h"
#include "sandbox-test-runtime.h"
#include "sandbox-test-session.h"

/* The backend and the imported runtime, made by the first case that asks. */
static SandboxTestFixture shared;
static char *runtime_key;

/* The runtime's key in the shared backend, imported on first use. */
static const char *
debian_runtime_key (void)
{
  g_autofree char *path = NULL;
  g_autoptr(GFile) source = NULL;
  g_autoptr(GError) error = NULL;
  gint64 started;

  if (runtime_key != NULL)
    return runtime_key;
  sandbox_test_fixture_set_up (&shared, "bubblewrap", NULL, NULL);
  path = sandbox_test_runtime_path ("debian-pytest");
  source = g_file_new_for_path (path);
  started = g_get_monotonic_time ();
  runtime_key = sandbox_backend_import_runtime (shared.backend, source, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_template_key_is_valid (runtime_key));
  g_test_message ("imported %s in %.1f s", path,
                  (g_get_monotonic_time () - started) / (double) G_USEC_PER_SEC);
  return runtime_key;
}

/* The wheel format's digest: SHA-256 in URL-safe base64 without padding. */
static char *
record_digest (const char *contents,
               gsize       size)
{
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  guint8 digest[32];
  gsize digest_size = sizeof digest;
  char *encoded;

  g_checksum_update (checksum, (const guchar *) contents, size);
  g_checksum_get_digest (checksum, digest, &digest_size);
  encoded = g_base64_encode (digest, digest_size);
  g_strdelimit (encoded, "+", '-');
  g_strdelimit (encoded, "/", '_');
  g_strdelimit (encoded, "=", '\0');
  return encoded;
}

static void
zip_add (struct archive *zip,
         const char     *path,
         const char     *contents)
{
  struct archive_entry *entry = archive_entry_new ();
  gsize size = strlen (contents);

  archive_entry_set_pathname (entry, path);
  archive_entry_set_filetype (entry, AE_IFREG);
  archive_entry_set_perm (entry, 0644);
  archive_entry_set_size (entry, size);
  /* A fixed time (zip's start in 1980), so that the same wheel is the
   * same template, stored once for every case. */
  archive_entry_set_mtime (entry, 1577836800 /* 2020-01-01 */, 0);
  g_assert_cmpint (archive_write_header (zip, entry), ==, ARCHIVE_OK);
  g_assert_cmpint (archive_write_data (zip, contents, size), ==, (la_ssize_t) size);
  archive_entry_free (entry);
}

/* pkg-0.1-py3-none-any.whl: a wheel is a zip of the package and its
 * dist-info (METADATA, WHEEL, and RECORD listing every file with its
 * digest), which pip installs from a file without any network. */
static GBytes *
tiny_wheel (void)
{
  const char *module = "GREETING = 'hello from pkg'\n";
  const char *metadata = "Metadata-Version: 2.1\nName: pkg\nVersion: 0.1\n";
  const char *wheel = "Wheel-Version: 1.0\nGenerator: libsandbox-tests\n"
                      "Root-Is-Purelib: true\nTag: py3-none-any\n";
  g_autofree char *module_digest = record_digest (module, strlen (module));
  g_autofree char *metadata_digest = record_digest (metadata, strlen (metadata));
  g_autofree char *wheel_digest = record_digest (wheel, strlen (wheel));
  g_autofree char *record = g_strdup_printf (
    "pkg/__init__.py,sha256=%s,%zu\n"
    "pkg-0.1.dist-info/METADATA,sha256=%s,%zu\n"
    "pkg-0.1.dist-info/WHEEL,sha256=%s,%zu\n"
    "pkg-0.1.dist-info/RECORD,,\n",
    module_digest, strlen (module), metadata_digest, strlen (metadata),
    wheel_digest, strlen (wheel));
  struct archive *zip = archive_write_new ();
  gsize capacity = 64 * 1024;
  g_autofree char *buffer = g_malloc (capacity);
  size_t used = 0;

  g_assert_cmpint (archive_write_set_format_zip (zip), ==, ARCHIVE_OK);
  g_assert_cmpint (archive_write_open_memory (zip, buffer, capacity, &used), ==, ARCHIVE_OK);
  zip_add (zip, "pkg/__init__.py", module);
  zip_add (zip, "pkg-0.1.dist-info/METADATA", metadata);
  zip_add (zip, "pkg-0.1.dist-info/WHEEL", wheel);
  zip_add (zip, "pkg-0.1.dist-info/RECORD", record);
  g_assert_cmpint (archive_write_close (zip), ==, ARCHIVE_OK);
  archive_write_free (zip);
  return g_bytes_new (buffer, used);
}

/* A tiny Python project (a module and its test, which passes) and a local
 * wheel for pip under wheels/. */
static SandboxTemplate *
project_template (void)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("debian-pytest-project");
  g_autoptr(GBytes) wheel = tiny_wheel ();
  g_autoptr(GError) error = NULL;

  sandbox_test_template_add_text (template_, "calc.py", "def add(a, b):\n    return a + b\n");
  sandbox_test_template_add_text (template_, "test_calc.py",
                                  "from calc import add\n\n\n"
                                  "def test_add():\n    assert add(2, 3) == 5\n");
  g_assert_true (sandbox_template_add_file (template_, "wheels/pkg-0.1-py3-none-any.whl", wheel,
                                            &error));
  g_assert_no_error (error);
  return g_steal_pointer (&template_);
}

/* A program the host has in /usr and the runtime lacks, found now: the
 * tests' own tools are on the host, and mmdebstrap's essential set has none
 * of them. */
static const char *
host_only_file (const char *runtime)
{
  static const char * const candidates[] = {
    "/usr/bin/bwrap", "/usr/bin/meson", "/usr/bin/ninja", "/usr/bin/gcc", "/usr/bin/mmdebstrap",
  };

  for (guint i = 0; i < G_N_ELEMENTS (candidates); i++)
    {
      g_autofree char *in_runtime = g_build_filename (runtime, candidates[i], NULL);

      if (g_file_test (candidates[i], G_FILE_TEST_EXISTS) &&
          !g_file_test (in_runtime, G_FILE_TEST_EXISTS))
        {
          g_test_message ("host-only file: %s", candidates[i]);
          return candidates[i];
        }
    }
  g_error ("The host has none of the programs the Debian runtime lacks");
  return NULL;
}

/* A session of @template_ on the Debian runtime: the template names the
 * runtime, is prewarmed on the shared backend and the session made from
 * it; it fails the test unless the session is on the runtime, not on the
 * host's /usr (where a host with pip would pass the pip case too). Cases
 * that need another kind of session on the runtime (a writable runtime's)
 * set it up on @template_ before calling this. */
static SandboxHandle *
open_session_on_runtime (SandboxTemplate *template_)
{
  g_autofree char *runtime = sandbox_test_runtime_path ("debian-pytest");
  const char *host_only = host_only_file (runtime);
  g_autofree char *check = g_strdup_printf ("test -e %s", host_only);
  g_autofree char *template_key = NULL;
  SandboxHandle *handle;

  sandbox_template_set_runtime (template_, debian_runtime_key ());
  template_key = sandbox_test_prewarm (shared.backend, template_, NULL);
  handle = sandbox_test_create_session (shared.backend, template_key);
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (handle), check), ==, 1);
  return handle;
}

/* Runs @script with /usr/bin/sh in @session's /workspace, however it
 * exits (sandbox_test_guest_sh() fails the test unless it exits 0). */
static SandboxResult *
run_sh (SandboxSession *session,
        const char     *script)
{
  g_autoptr(GError) error = NULL;
  SandboxResult *result =
    sandbox_test_run (session, SANDBOX_TEST_COMMAND ("/usr/bin/sh", "-c", script), &error);

  g_assert_no_error (error);
  g_assert_nonnull (result);
  g_assert_true (sandbox_result_check_executed (result, &error));
  g_assert_no_error (error);
  return result;
}

/* `python3 -m pytest -q` in /workspace: the project's test passes (exit 0,
 * "1 passed"); with a failing test added, exit 1 and "1 failed, 1 passed".
 * pytest is the runtime's: its module is a file of the runtime's tree. */
static void
test_pytest (void)
{
  g_autoptr(SandboxTemplate) template_ = project_template ();
  g_autoptr(SandboxHandle) handle = open_session_on_runtime (template_);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autofree char *runtime = sandbox_test_runtime_path ("debian-pytest");
  g_autofree char *module = NULL;
  g_autofree char *in_runtime = NULL;
  g_autoptr(SandboxResult) passing = NULL;
  g_autoptr(SandboxResult) failing = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  passing = run_sh (session, "python3 -m pytest -q");
  out = sandbox_result_dup_stdout_text (passing);
  err = sandbox_result_dup_stderr_text (passing);
  g_test_message ("pytest: %s%s", out, err);
  g_assert_cmpint (sandbox_result_get_exit_status (passing), ==, 0);
  g_assert_nonnull (strstr (out, "1 passed"));
  g_assert_null (strstr (out, "failed"));
  g_clear_pointer (&out, g_free);
  g_clear_pointer (&err, g_free);

  failing = run_sh (session,
                    "printf '\\n\\ndef test_wrong():\\n    assert add(2, 2) == 5\\n' >> test_calc.py"
                    " && python3 -m pytest -q");
  out = sandbox_result_dup_stdout_text (failing);
  err = sandbox_result_dup_stderr_text (failing);
  g_test_message ("pytest with a failing test: %s%s", out, err);
  g_assert_cmpint (sandbox_result_get_exit_status (failing), ==, 1);
  g_assert_nonnull (strstr (out, "1 failed, 1 passed"));
  g_assert_nonnull (strstr (out, "test_wrong"));

  module = sandbox_test_guest_sh (session, "python3 -c 'import pytest; print(pytest.__file__)'");
  g_strchomp (module);
  g_assert_true (g_path_is_absolute (module));
  in_runtime = g_build_filename (runtime, module, NULL);
  g_assert_true (g_file_test (in_runtime, G_FILE_TEST_IS_REGULAR));
  sandbox_test_delete_session (handle);
}

/* The runtime's /etc/os-release, byte for byte as the runtime directory
 * has it (Debian's, where the host's /usr gives none: the curated /etc has
 * no os-release); none of the host's own programs is checked in every
 * case, by open_session_on_runtime(). */
static void
test_os_release (void)
{
  g_autoptr(SandboxTemplate) template_ = project_template ();
  g_autoptr(SandboxHandle) handle = open_session_on_runtime (template_);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autofree char *runtime = sandbox_test_runtime_path ("debian-pytest");
  g_autofree char *os_release_path = g_build_filename (runtime, "etc", "os-release", NULL);
  g_autofree char *expected = NULL;
  g_autofree char *os_release = NULL;
  g_autoptr(GError) error = NULL;

  /* A link to ../usr/lib/os-release in Debian, resolved in the runtime. */
  g_assert_true (g_file_get_contents (os_release_path, &expected, NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (expected, "ID=debian\n"));
  os_release = sandbox_test_guest_sh (session, "cat /etc/os-release");
  g_assert_cmpstr (os_release, ==, expected);

  /* The runtime's own python3 is there. */
  g_assert_cmpint (sandbox_test_guest_status (session, "test -x /usr/bin/python3"), ==, 0);
  sandbox_test_delete_session (handle);
}

/* pip runs; installing the template's wheel fails, as the runtime is
 * read-only (the guest cannot write /usr/local's site-packages), with
 * pip's error naming the read-only file system, and leaves no package. */
static void
test_pip (void)
{
  g_autoptr(SandboxTemplate) template_ = project_template ();
  g_autoptr(SandboxHandle) handle = open_session_on_runtime (template_);
  SandboxSession *session = sandbox_handle_get_session (handle);
  g_autofree char *version = NULL;
  g_autoptr(SandboxResult) install = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  version = sandbox_test_guest_sh (session, "pip --version");
  g_assert_true (g_str_has_prefix (version, "pip "));
  g_assert_nonnull (strstr (version, "/usr/lib/python3/dist-packages/pip"));

  /* --no-user: a system install, as a writable runtime will take it (pip
   * would fall back to ~/.local, in the workspace); --break-system-packages:
   * past Debian's EXTERNALLY-MANAGED, to the install itself. */
  install = run_sh (session,
                    "pip install --no-index --no-user --break-system-packages"
                    " --disable-pip-version-check --no-cache-dir"
                    " wheels/pkg-0.1-py3-none-any.whl");
  out = sandbox_result_dup_stdout_text (install);
  err = sandbox_result_dup_stderr_text (install);
  g_test_message ("pip install: %s%s", out, err);
  g_assert_cmpint (sandbox_result_get_exit_status (install), !=, 0);
  g_assert_nonnull (strstr (err, "Read-only file system"));
  g_assert_cmpint (sandbox_test_guest_status (session, "python3 -c 'import pkg' 2>/dev/null"),
                   ==, 1);
  sandbox_test_delete_session (handle);
}

/* On a runtime writable per session the same install succeeds, into
 * /usr/local (pip's system install, as the guest owns its copy of the
 * runtime), and the package stays across the session's commands, stop
 * and resume; another session of the same template has none. dpkg, which
 * needs root, refuses even a local package: the guest is not root. */
static void
test_pip_writable (void)
{
  g_autoptr(SandboxTemplate) template_ = project_template ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxHandle) other = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxResult) install = NULL;
  g_autoptr(SandboxResult) dpkg = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *layering = NULL;
  g_autofree char *where = NULL;
  g_autofree char *again = NULL;
  g_autofree char *err = NULL;

  debian_runtime_key ();
  g_object_get (shared.backend, "workspace-layering", &layering, NULL);
  if (g_strcmp0 (layering, "overlay") != 0)
    {
      g_test_skip ("a writable runtime needs layered sessions; this run copies");
      return;
    }
  sandbox_template_set_runtime_writable (template_, TRUE);
  handle = open_session_on_runtime (template_);
  g_assert_true (sandbox_template_get_runtime_writable (template_));

  install = run_sh (sandbox_handle_get_session (handle),
                    "pip install --no-index --break-system-packages --disable-pip-version-check"
                    " --no-cache-dir wheels/pkg-0.1-py3-none-any.whl");
  err = sandbox_result_dup_stderr_text (install);
  g_test_message ("pip install on a writable runtime: %s", err);
  g_assert_cmpint (sandbox_result_get_exit_status (install), ==, 0);
  where = sandbox_test_guest_sh (sandbox_handle_get_session (handle),
                                 "python3 -c 'import pkg; print(pkg.GREETING, pkg.__file__)'");
  g_assert_true (g_str_has_prefix (where, "hello from pkg /usr/local/lib/python3"));

  dpkg = run_sh (sandbox_handle_get_session (handle), "dpkg -i wheels/none.deb");
  g_clear_pointer (&err, g_free);
  err = sandbox_result_dup_stderr_text (dpkg);
  g_assert_cmpint (sandbox_result_get_exit_status (dpkg), !=, 0);
  g_assert_nonnull (strstr (err, "requires superuser privilege"));

  state = sandbox_handle_capture_state (handle, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
  resumed = sandbox_backend_resume (shared.backend, state, policy, NULL, &error);
  g_assert_no_error (error);
  again = sandbox_test_guest_sh (sandbox_handle_get_session (resumed),
                                 "python3 -c 'import pkg; print(pkg.GREETING)'");
  g_assert_cmpstr (again, ==, "hello from pkg\n");

  other = open_session_on_runtime (template_);
  g_assert_cmpint (sandbox_test_guest_status (sandbox_handle_get_session (other),
                                              "python3 -c 'import pkg' 2>/dev/null"), ==, 1);
  sandbox_test_delete_session (other);
  sandbox_test_delete_session (resumed);
}

int
main (int   argc,
      char *argv[])
{
  int status;

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/bubblewrap/debian-runtime/pytest", test_pytest);
  g_test_add_func ("/bubblewrap/debian-runtime/os-release", test_os_release);
  g_test_add_func ("/bubblewrap/debian-runtime/pip", test_pip);
  g_test_add_func ("/bubblewrap/debian-runtime/pip-writable", test_pip_writable);

  status = g_test_run ();
  if (shared.backend != NULL)
    sandbox_test_fixture_tear_down (&shared, NULL);
  g_free (runtime_key);
  return status;
}
