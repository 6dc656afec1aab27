/* test-cluster-runtime.c — runtimes that follow their templates between hosts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Two `cluster` backends in this process, each with its own state
 * directory (its own bubblewrap store), on one real etcd (etcd-fixture.c)
 * and one checkpoint store: host a imports a runtime and prewarms a
 * template on it; host b, which has neither, creates a session of the
 * template and runs on the runtime (drivers/cluster/
 * sandbox-cluster-runtime-share.c). Then records an attacker wrote to etcd.
 * The runtime is the tests' busybox (tests/bubblewrap/with-test-runtime.sh
 * makes it in tests/runtime-cache/busybox), copied with what a real root
 * file system has that a checkpoint must keep: a sticky tmp/, a read-only
 * directory, a hard link. Run as root and, through run-unprivileged.sh, as
 * an unprivileged user.
 */

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sandbox.h>

#include "etcd-fixture.h"
#include "sandbox-test-backend.h"
#include "sandbox-test-fixture.h"
#include "sandbox-test-runtime.h"
#include "sandbox-test-session.h"

#define PREFIX "/libsandbox/"

typedef struct
{
  EtcdFixture *etcd;
  char *base;
  char *store;
  SandboxBackend *a;
  SandboxBackend *b;
  char *runtime;          /* the busybox copy, imported on a */
  char *runtime_key;
} Fixture;

static void
run_shell (const char *script)
{
  const char *argv[] = { "/bin/sh", "-ec", script, NULL };
  g_autoptr(GError) error = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, NULL, &status,
                &error);
  g_assert_no_error (error);
  g_spawn_check_wait_status (status, &error);
  g_assert_no_error (error);
}

/* A copy of busybox at @base/@name with a sticky tmp/ (its key covers the
 * bit: a checkpoint dropping it publishes another runtime), a read-only
 * proc/, a hard link (a copy on the other host, the same key) and @extra
 * in etc/extra. */
static char *
make_runtime (const char *base,
              const char *name,
              const char *extra)
{
  g_autofree char *busybox = sandbox_test_runtime_path ("busybox");
  char *root = g_build_filename (base, name, NULL);
  g_autofree char *script = g_strdup_printf (
    "cp -a '%s' '%s'\n"
    "cd '%s'\n"
    "mkdir tmp proc\n"
    "chmod 1777 tmp\n"
    "chmod 0555 proc\n"
    "ln etc/os-release etc/os-release.hard\n"
    "printf '%%s\\n' '%s' > etc/extra\n",
    busybox, root, root, extra);

  run_shell (script);
  return root;
}

static gboolean
host_new (Fixture         *fixture,
          const char      *id,
          SandboxBackend **out)
{
  g_autofree char *state = g_build_filename (fixture->base, id, NULL);

  *out = sandbox_test_setup_backend ("cluster", state,
                                     "endpoints", etcd_fixture_get_endpoints (fixture->etcd),
                                     "host-id", id, "checkpoint-store", fixture->store, NULL);
  return *out != NULL;
}

typedef struct
{
  guint n_reports;
  guint64 n_entries;
  guint64 n_bytes;
} Progress;

static void
import_progress_cb (SandboxBackend *backend,
                    guint64         n_entries,
                    guint64         n_bytes,
                    gpointer        user_data)
{
  Progress *progress = user_data;

  progress->n_reports++;
  progress->n_entries = n_entries;
  progress->n_bytes = n_bytes;
}

static char *
prewarm_on (SandboxBackend *backend,
            const char     *runtime_key)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("cluster-runtime");

  sandbox_test_template_add_text (template_, "hello.txt", "hello\n");
  sandbox_template_set_runtime (template_, runtime_key);
  return sandbox_test_prewarm (backend, template_, NULL);
}

static guint
count_runtimes (SandboxBackend *backend)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) runtimes = sandbox_backend_list_runtimes (backend, NULL, &error);

  g_assert_no_error (error);
  return runtimes->len;
}

static guint
count_templates (SandboxBackend *backend)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) templates = sandbox_backend_list_templates (backend, NULL, &error);

  g_assert_no_error (error);
  return templates->len;
}

static char *
etcd_value (Fixture    *fixture,
            const char *directory,
            const char *key)
{
  g_autofree char *etcd_key = g_strconcat (PREFIX, directory, "/", key, NULL);
  g_autoptr(GError) error = NULL;
  char *value = etcd_fixture_get_value (fixture->etcd, etcd_key, &error);

  g_assert_no_error (error);
  return value;
}

static void
etcd_put (Fixture    *fixture,
          const char *directory,
          const char *key,
          const char *value)
{
  g_autofree char *etcd_key = g_strconcat (PREFIX, directory, "/", key, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true (etcd_fixture_put_value (fixture->etcd, etcd_key, value, &error));
  g_assert_no_error (error);
}

/* The member @member of the record @directory/@key, a string. */
static char *
etcd_member (Fixture    *fixture,
             const char *directory,
             const char *key,
             const char *member)
{
  g_autofree char *value = etcd_value (fixture, directory, key);
  g_autoptr(JsonNode) root = json_from_string (value, NULL);

  g_assert_nonnull (root);
  if (!json_object_has_member (json_node_get_object (root), member))
    return NULL;
  return g_strdup (json_object_get_string_member (json_node_get_object (root), member));
}

/* etcd, the directories, host a with the busybox copy imported. */
static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  gboolean reused = TRUE;

  if (etcd_fixture_skip_if_missing ())
    return;
  fixture->etcd = etcd_fixture_start (1, &error);
  g_assert_no_error (error);
  fixture->base = sandbox_test_state_directory_new ();
  fixture->store = g_build_filename (fixture->base, "store", NULL);
  fixture->runtime = make_runtime (fixture->base, "runtime", "one");
  host_new (fixture, "a", &fixture->a);
  host_new (fixture, "b", &fixture->b);
  fixture->runtime_key = sandbox_test_import_runtime (fixture->a, fixture->runtime, &reused);
  g_assert_false (reused);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_clear_object (&fixture->a);
  g_clear_object (&fixture->b);
  g_clear_pointer (&fixture->etcd, etcd_fixture_free);
  if (fixture->base != NULL)
    sandbox_test_remove_tree (fixture->base);
  g_clear_pointer (&fixture->base, g_free);
  g_clear_pointer (&fixture->store, g_free);
  g_clear_pointer (&fixture->runtime, g_free);
  g_clear_pointer (&fixture->runtime_key, g_free);
}

/* Whether b's incoming/ is empty: a fetch leaves nothing behind. */
static void
assert_incoming_empty (Fixture *fixture)
{
  g_autofree char *incoming = g_build_filename (fixture->base, "b", "incoming", NULL);
  g_autoptr(GDir) dir = g_dir_open (incoming, 0, NULL);

  g_assert_nonnull (dir);
  g_assert_null (g_dir_read_name (dir));
}

/* Creating a session of @template_key on b fails with UNAVAILABLE, and b
 * stores nothing: no runtime, no template. Returns the message. */
static char *
assert_b_refuses (Fixture    *fixture,
                  const char *template_key)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxHandle) handle = sandbox_backend_create (fixture->b, template_key, NULL,
                                                            policy, NULL, &error);

  g_assert_null (handle);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_test_message ("refused: %s", error->message);
  g_assert_cmpuint (count_runtimes (fixture->b), ==, 0);
  g_assert_cmpuint (count_templates (fixture->b), ==, 0);
  assert_incoming_empty (fixture);
  return g_strdup (error->message);
}

/* Host b runs a session of a's template on a's runtime, which it fetched
 * with the template: `cat /etc/os-release` shows the runtime's ID. Seen to
 * fail (b gets another key and refuses) with the sticky bit dropped in
 * sandbox-cluster-checkpoint.c, and with an empty etc/passwd added to the
 * tree before it is published, as bubblewrap's stored copy has. */
static void
test_follows_template (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxRuntimeInfo) info = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *template_key = NULL;
  g_autofree char *recorded = NULL;
  g_autofree char *os_release = NULL;
  g_autofree char *extra = NULL;
  g_autofree char *again = NULL;
  g_autofree char *published = NULL;
  Progress progress = { 0 };
  gboolean reused = FALSE;

  if (fixture->etcd == NULL)
    return;
  published = etcd_member (fixture, "runtimes", fixture->runtime_key, "manifest");
  g_assert_nonnull (published);

  /* Published already: reused, on a host that stored it too and one that
   * did not (b stores it now), with the unpacking's progress. */
  g_signal_connect (fixture->b, "import-progress", G_CALLBACK (import_progress_cb), &progress);
  again = sandbox_test_import_runtime (fixture->b, fixture->runtime, &reused);
  g_assert_true (reused);
  g_assert_cmpstr (again, ==, fixture->runtime_key);
  g_assert_cmpuint (progress.n_reports, >=, 1);
  g_assert_cmpuint (progress.n_bytes, >, 1000000);   /* busybox */
  g_assert_cmpuint (count_runtimes (fixture->b), ==, 1);
  g_assert_true (sandbox_backend_delete_runtime (fixture->b, again, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_runtimes (fixture->b), ==, 0);

  template_key = prewarm_on (fixture->a, fixture->runtime_key);
  recorded = etcd_member (fixture, "templates", template_key, "runtime");
  g_assert_cmpstr (recorded, ==, fixture->runtime_key);

  handle = sandbox_backend_create (fixture->b, template_key, NULL, policy, NULL, &error);
  g_assert_no_error (error);
  os_release = sandbox_test_guest_sh (sandbox_handle_get_session (handle),
                                      "cat /etc/os-release");
  g_assert_nonnull (strstr (os_release, "ID=libsandbox-test-runtime\n"));
  extra = sandbox_test_guest_sh (sandbox_handle_get_session (handle), "cat /etc/extra");
  g_assert_cmpstr (extra, ==, "one\n");
  assert_incoming_empty (fixture);

  info = sandbox_test_find_runtime (fixture->b, fixture->runtime_key);
  g_assert_nonnull (info);
  g_assert_cmpuint (sandbox_runtime_info_get_n_templates (info), ==, 1);

  /* Named by a stored template: b cannot delete it. */
  g_assert_false (sandbox_backend_delete_runtime (fixture->b, fixture->runtime_key, NULL,
                                                  &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
}

/* A template without a runtime: its record has no "runtime" member, so it
 * reads as records written before runtimes were published. */
static void
test_no_runtime_no_member (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("no-runtime");
  g_autofree char *template_key = NULL;
  g_autofree char *runtime = NULL;
  g_autofree char *manifest = NULL;

  if (fixture->etcd == NULL)
    return;
  sandbox_test_template_add_text (template_, "hello.txt", "hello\n");
  template_key = sandbox_test_prewarm (fixture->a, template_, NULL);
  runtime = etcd_member (fixture, "templates", template_key, "runtime");
  manifest = etcd_member (fixture, "templates", template_key, "manifest");
  g_assert_null (runtime);
  g_assert_nonnull (manifest);
}

/* A runtime writable per session keeps a session's changes in its host's
 * layers, which checkpoints do not carry: the cluster refuses such a
 * template rather than resume it elsewhere without them. */
static void
test_writable_refused (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("writable");
  g_autoptr(GError) error = NULL;

  if (fixture->etcd == NULL)
    return;
  sandbox_template_set_runtime (template_, fixture->runtime_key);
  sandbox_template_set_runtime_writable (template_, TRUE);
  g_assert_null (sandbox_backend_prewarm (fixture->a, template_, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "writable"));
}

/* list and delete on a cluster backend are its host's: a runtime no
 * template names goes, its record stays (other hosts' templates may name
 * it); an unknown key is NOT_FOUND. A prewarm naming a runtime its host
 * lacks fetches it from the cluster; one naming a runtime nobody published
 * is NOT_FOUND. */
static void
test_list_and_delete (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(SandboxRuntimeInfo) info = NULL;
  g_autoptr(SandboxTemplate) template_ = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *unknown = g_strnfill (64, 'a');
  g_autofree char *manifest = NULL;

  if (fixture->etcd == NULL)
    return;
  info = sandbox_test_find_runtime (fixture->a, fixture->runtime_key);
  g_assert_nonnull (info);
  g_assert_cmpuint (sandbox_runtime_info_get_n_templates (info), ==, 0);
  g_assert_cmpuint (sandbox_runtime_info_get_n_bytes (info), >, 1000000);
  g_assert_cmpuint (count_runtimes (fixture->b), ==, 0);

  g_assert_true (sandbox_backend_delete_runtime (fixture->a, fixture->runtime_key, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (count_runtimes (fixture->a), ==, 0);
  manifest = etcd_member (fixture, "runtimes", fixture->runtime_key, "manifest");
  g_assert_nonnull (manifest);

  g_assert_false (sandbox_backend_delete_runtime (fixture->a, unknown, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_free (prewarm_on (fixture->b, fixture->runtime_key));
  g_assert_cmpuint (count_runtimes (fixture->b), ==, 1);
  template_ = sandbox_template_new ("nowhere");
  sandbox_template_set_runtime (template_, unknown);
  g_assert_null (sandbox_backend_prewarm (fixture->b, template_, NULL, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_assert_cmpuint (count_runtimes (fixture->b), ==, 1);
}

/* An attacker points runtimes/KEY at another runtime's manifest (a tree
 * that hashes to another key): b refuses the template and keeps neither
 * runtime. Seen to fail (b kept the other runtime, then refused the
 * template with NOT_FOUND) with import_tree()'s key comparison removed. */
static void
test_forged_runtime_record (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autofree char *other = NULL;
  g_autofree char *other_key = NULL;
  g_autofree char *other_manifest = NULL;
  g_autofree char *forged = NULL;
  g_autofree char *template_key = NULL;
  g_autofree char *message = NULL;

  if (fixture->etcd == NULL)
    return;
  other = make_runtime (fixture->base, "other", "two");
  other_key = sandbox_test_import_runtime (fixture->a, other, NULL);
  g_assert_cmpstr (other_key, !=, fixture->runtime_key);
  template_key = prewarm_on (fixture->a, fixture->runtime_key);

  other_manifest = etcd_member (fixture, "runtimes", other_key, "manifest");
  forged = g_strdup_printf ("{\"manifest\":\"%s\"}", other_manifest);
  etcd_put (fixture, "runtimes", fixture->runtime_key, forged);

  message = assert_b_refuses (fixture, template_key);
  g_assert_nonnull (strstr (message, "is another runtime"));
}

/* An attacker makes a template's record name what is no runtime key: b
 * refuses the record itself, naming it, before the value is used as part
 * of an etcd key, and stores nothing. Seen to fail (the refusal named no
 * record: b looked the value up as a runtime) with read_record()'s
 * sandbox_template_key_is_valid() check removed. */
static void
test_invalid_runtime_key (Fixture       *fixture,
                          gconstpointer  data)
{
  static const char * const hostile[] = {
    "../../sessions/x/record",
    /* A valid key in capitals: etcd holds a record there (below). */
    "@UPPER@",
    "",
  };
  g_autofree char *template_key = NULL;
  g_autofree char *manifest = NULL;
  g_autofree char *runtime_manifest = NULL;
  g_autofree char *upper = NULL;
  g_autofree char *upper_record = NULL;
  g_autofree char *record_key = NULL;

  if (fixture->etcd == NULL)
    return;
  template_key = prewarm_on (fixture->a, fixture->runtime_key);
  manifest = etcd_member (fixture, "templates", template_key, "manifest");
  runtime_manifest = etcd_member (fixture, "runtimes", fixture->runtime_key, "manifest");
  upper = g_ascii_strup (fixture->runtime_key, -1);
  /* What the lookup of the capitalised key would find: the real runtime. */
  upper_record = g_strdup_printf ("{\"manifest\":\"%s\"}", runtime_manifest);
  etcd_put (fixture, "runtimes", upper, upper_record);
  record_key = g_strconcat (PREFIX, "templates/", template_key, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (hostile); i++)
    {
      const char *runtime = g_str_equal (hostile[i], "@UPPER@") ? upper : hostile[i];
      g_autofree char *forged = g_strdup_printf ("{\"name\":\"cluster-runtime\","
                                                 "\"manifest\":\"%s\",\"runtime\":\"%s\"}",
                                                 manifest, runtime);
      g_autofree char *message = NULL;

      etcd_put (fixture, "templates", template_key, forged);
      message = assert_b_refuses (fixture, template_key);
      g_assert_nonnull (strstr (message, record_key));
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/cluster-runtime/follows-template", Fixture, NULL, fixture_set_up,
              test_follows_template, fixture_tear_down);
  g_test_add ("/cluster-runtime/no-runtime-no-member", Fixture, NULL, fixture_set_up,
              test_no_runtime_no_member, fixture_tear_down);
  g_test_add ("/cluster-runtime/writable-refused", Fixture, NULL, fixture_set_up,
              test_writable_refused, fixture_tear_down);
  g_test_add ("/cluster-runtime/list-and-delete", Fixture, NULL, fixture_set_up,
              test_list_and_delete, fixture_tear_down);
  g_test_add ("/cluster-runtime/forged-runtime-record", Fixture, NULL, fixture_set_up,
              test_forged_runtime_record, fixture_tear_down);
  g_test_add ("/cluster-runtime/invalid-runtime-key", Fixture, NULL, fixture_set_up,
              test_invalid_runtime_key, fixture_tear_down);
  return g_test_run ();
}
