/* sandbox-conformance-workspace.c — the checks of a session's workspace:
 * paths, file semantics and limits, text, and network policies
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-conformance-private.h"

static gboolean
check_path_canonical (ConformanceRun  *run,
                      GError         **error)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static ("canonical", 9);
  g_autoptr(GBytes) read = NULL;
  g_autoptr(GBytes) again = NULL;
  SandboxSession *session = run->session;
  GError *local_error = NULL;

  sandbox_session_write_bytes (session, "paths/a.txt", bytes, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "write “paths/a.txt”", error))
    return FALSE;
  read = sandbox_session_read_bytes (session, "/workspace/paths/a.txt", run->cancellable,
                                     &local_error);
  if (!conformance_expect_success (&local_error, "read “/workspace/paths/a.txt”", error))
    return FALSE;
  if (!conformance_expect_bytes (read, "canonical", 9, "/workspace/paths/a.txt", error))
    return FALSE;
  sandbox_session_remove_path (session, "/workspace/paths/a.txt", run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "remove “/workspace/paths/a.txt”", error))
    return FALSE;
  again = sandbox_session_read_bytes (session, "paths/a.txt", run->cancellable, &local_error);
  return conformance_expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                                   "reading a removed file", error);
}

static gboolean
check_path_rejected (ConformanceRun  *run,
                     GError         **error)
{
  static const char * const bad[] = {
    "../escape", "a/../../escape", "/etc/passwd", "a\\b", "a//b", "./a", "a/./b", "a/",
    "", "/workspace/", "/workspace/../etc", "/workspace//a",
  };
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  SandboxSession *session = run->session;
  GError *local_error = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GBytes) read = NULL;
      g_autofree char *what = NULL;

      what = g_strdup_printf ("read “%s”", bad[i]);
      read = sandbox_session_read_bytes (session, bad[i], run->cancellable, &local_error);
      if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, what, error))
        return FALSE;

      g_free (what);
      what = g_strdup_printf ("write “%s”", bad[i]);
      sandbox_session_write_bytes (session, bad[i], bytes, run->cancellable, &local_error);
      if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, what, error))
        return FALSE;

      g_free (what);
      what = g_strdup_printf ("remove “%s”", bad[i]);
      sandbox_session_remove_path (session, bad[i], run->cancellable, &local_error);
      if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, what, error))
        return FALSE;

      if (bad[i][0] != '\0')
        {
          g_autoptr(SandboxCommand) command = conformance_probe_command ("/usr/bin/cat",
                                                                         "conformance.txt");
          g_autoptr(SandboxProcess) process = NULL;

          sandbox_command_set_cwd (command, bad[i]);
          g_free (what);
          what = g_strdup_printf ("spawn with working directory “%s”", bad[i]);
          process = sandbox_session_spawn (session, command, run->cancellable, &local_error);
          if (process != NULL)
            sandbox_process_stop (process, NULL, NULL);
          if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, what,
                                         error))
            return FALSE;
        }
    }
  return TRUE;
}

static gboolean
check_path_root_removal (ConformanceRun  *run,
                         GError         **error)
{
  static const char * const roots[] = { "/workspace", "." };
  g_autoptr(GBytes) read = NULL;
  SandboxSession *session = run->session;
  GError *local_error = NULL;

  for (gsize i = 0; i < G_N_ELEMENTS (roots); i++)
    {
      g_autofree char *what = g_strdup_printf ("remove “%s”", roots[i]);

      sandbox_session_remove_path (session, roots[i], run->cancellable, &local_error);
      if (!conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, what, error))
        return FALSE;
    }

  read = sandbox_session_read_bytes (session, "conformance.txt", run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "reading a file after the refused root removals",
                                   error))
    return FALSE;
  return conformance_expect_bytes (read, CONFORMANCE_HELLO, strlen (CONFORMANCE_HELLO),
                                   "conformance.txt", error);
}

static gboolean
check_files (ConformanceRun  *run,
             GError         **error)
{
  g_autoptr(GBytes) bytes = g_bytes_new_static ("deep", 4);
  g_autoptr(GBytes) read = NULL;
  g_autoptr(GBytes) missing = NULL;
  SandboxSession *session = run->session;
  GError *local_error = NULL;

  missing = sandbox_session_read_bytes (session, "no/such/file", run->cancellable, &local_error);
  if (!conformance_expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                                 "reading a missing file",
                                 error))
    return FALSE;
  sandbox_session_write_bytes (session, "new/parent/dirs/file.txt", bytes, run->cancellable,
                               &local_error);
  if (!conformance_expect_success (&local_error, "writing below parents that do not exist yet",
                                   error))
    return FALSE;
  read = sandbox_session_read_bytes (session, "new/parent/dirs/file.txt", run->cancellable,
                                     &local_error);
  if (!conformance_expect_success (&local_error, "reading it back", error))
    return FALSE;
  if (!conformance_expect_bytes (read, "deep", 4, "new/parent/dirs/file.txt", error))
    return FALSE;
  g_clear_pointer (&read, g_bytes_unref);

  /* Writing replaces the whole file. */
  sandbox_session_write_text (session, "conformance.txt", "short", run->cancellable,
                              &local_error);
  if (!conformance_expect_success (&local_error, "overwriting a file with shorter contents", error))
    return FALSE;
  read = sandbox_session_read_bytes (session, "conformance.txt", run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "reading the overwritten file", error))
    return FALSE;
  if (!conformance_expect_bytes (read, "short", 5, "the overwritten file", error))
    return FALSE;

  sandbox_session_remove_path (session, "new", run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "removing a directory tree", error))
    return FALSE;
  sandbox_session_remove_path (session, "new", run->cancellable, &local_error);
  return conformance_expect_success (&local_error,
                                     "removing a path that does not exist (like rm -rf)", error);
}

static gboolean
check_files_limit (ConformanceRun  *run,
                   GError         **error)
{
  g_autofree guint8 *data = g_malloc (SANDBOX_MAX_FILE_BYTES + 1);
  g_autoptr(GBytes) largest = NULL;
  g_autoptr(GBytes) too_large = NULL;
  g_autoptr(GBytes) read = NULL;
  SandboxSession *session = run->session;
  GError *local_error = NULL;

  for (gsize i = 0; i <= SANDBOX_MAX_FILE_BYTES; i++)
    data[i] = (guint8) (i * 7 + 3);
  largest = g_bytes_new (data, SANDBOX_MAX_FILE_BYTES);
  too_large = g_bytes_new (data, SANDBOX_MAX_FILE_BYTES + 1);

  sandbox_session_write_bytes (session, "large.bin", largest, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "writing exactly 1 MiB", error))
    return FALSE;
  read = sandbox_session_read_bytes (session, "large.bin", run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "reading exactly 1 MiB", error))
    return FALSE;
  if (!conformance_expect_bytes (read, data, SANDBOX_MAX_FILE_BYTES, "the 1 MiB file", error))
    return FALSE;
  sandbox_session_write_bytes (session, "larger.bin", too_large, run->cancellable, &local_error);
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                                   "writing 1 MiB + 1 byte", error);
}

static gboolean
check_text (ConformanceRun  *run,
            GError         **error)
{
  g_autoptr(GBytes) bom = g_bytes_new_static ("\xEF\xBB\xBFhi", 5);
  g_autoptr(GBytes) invalid = g_bytes_new_static ("ok\xFFno", 5);
  g_autoptr(GBytes) utf8 = NULL;
  g_autofree char *text = NULL;
  g_autofree char *bad = NULL;
  SandboxSession *session = run->session;
  GError *local_error = NULL;

  sandbox_session_write_bytes (session, "bom.txt", bom, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "write bom.txt", error))
    return FALSE;
  text = sandbox_session_read_text (session, "bom.txt", run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "read_text of a file with a BOM", error))
    return FALSE;
  if (g_strcmp0 (text, "hi") != 0)
    return CHECK_FAILED (error, "read_text kept the BOM or changed the text");

  sandbox_session_write_bytes (session, "invalid.txt", invalid, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "write invalid.txt", error))
    return FALSE;
  bad = sandbox_session_read_text (session, "invalid.txt", run->cancellable, &local_error);
  if (bad != NULL)
    return CHECK_FAILED (error, "read_text accepted invalid UTF-8");
  if (!conformance_expect_error (&local_error, G_CONVERT_ERROR, G_CONVERT_ERROR_ILLEGAL_SEQUENCE,
                                 "read_text of invalid UTF-8", error))
    return FALSE;

  sandbox_session_write_text (session, "utf8.txt", "h\xC3\xA9llo \xE2\x9C\x93", run->cancellable,
                              &local_error);
  if (!conformance_expect_success (&local_error, "write_text of non-ASCII text", error))
    return FALSE;
  utf8 = sandbox_session_read_bytes (session, "utf8.txt", run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "read it back as bytes", error))
    return FALSE;
  return conformance_expect_bytes (utf8, "h\xC3\xA9llo \xE2\x9C\x93", 10, "the UTF-8 encoding",
                                   error);
}

/* A policy is either enforced or refused as UNAVAILABLE, never anything else. */
static gboolean
expect_enforced_or_unavailable (SandboxSession        *session,
                                SandboxNetworkPolicy  *policy,
                                const char            *what,
                                ConformanceRun                   *run,
                                GError               **error)
{
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  GError *local_error = NULL;

  if (sandbox_session_set_network_policy (session, policy, run->cancellable, &local_error))
    {
      sandbox_session_set_network_policy (session, deny, run->cancellable, &local_error);
      return conformance_expect_success (&local_error, "returning to deny-all", error);
    }
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, what,
                                   error);
}

static gboolean
check_network_policies (ConformanceRun  *run,
                        GError         **error)
{
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxNetworkPolicy) allow_all = sandbox_network_policy_new_allow_all ();
  g_autoptr(SandboxNetworkPolicy) allow_list = NULL;
  g_autoptr(SandboxHandle) created = NULL;
  SandboxSession *session = run->session;
  GError *local_error = NULL;

  allow_list = sandbox_network_policy_new_from_json (
    "{\"allow\":[{\"origin\":\"http://127.0.0.1:9/\",\"headers\":{\"x-conformance\":\"1\"}}]}",
    &local_error);
  if (!conformance_expect_success (&local_error, "building an allow-list policy", error))
    return FALSE;

  sandbox_session_set_network_policy (session, deny, run->cancellable, &local_error);
  if (!conformance_expect_success (&local_error, "setting deny-all with no live commands", error))
    return FALSE;
  if (!expect_enforced_or_unavailable (session, allow_all, "set allow-all", run, error))
    return FALSE;
  if (!expect_enforced_or_unavailable (session, allow_list, "set an allow-list", run, error))
    return FALSE;

  created = sandbox_backend_create (run->backend, run->key, NULL, allow_list, run->cancellable,
                                    &local_error);
  if (created != NULL)
    {
      conformance_discard_session (g_steal_pointer (&created));
      return TRUE;
    }
  return conformance_expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                                   "create with an allow-list", error);
}

const ConformanceCheck conformance_workspace_checks[] = {
  { "path/canonical-forms", check_path_canonical, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "path/rejected", check_path_rejected, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "path/root-removal-refused", check_path_root_removal, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "files/semantics", check_files, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "files/limit", check_files_limit, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "text/read-text", check_text, FALSE, CONFORMANCE_FIXTURE_SESSION },
  { "network/policies-enforced-or-refused", check_network_policies,
    FALSE, CONFORMANCE_FIXTURE_SESSION },
  { NULL, NULL, FALSE, FALSE }
};
