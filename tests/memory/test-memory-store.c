/* test-memory-store.c — the backend's own view of its store, over the
 * memory driver: list_sessions, list_templates, lookup_state, the lease
 * owner and delete_template; and the core's checks and defaults for every
 * backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <unistd.h>

#include "memory-test-common.h"

static SandboxSessionInfo *
find_session (GPtrArray  *sessions,
              const char *session_id)
{
  for (guint i = 0; i < sessions->len; i++)
    {
      SandboxSessionInfo *info = g_ptr_array_index (sessions, i);

      if (g_str_equal (sandbox_state_get_session_id (sandbox_session_info_get_state (info)),
                       session_id))
        return info;
    }
  return NULL;
}

static SandboxState *
capture (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;
  SandboxState *state = sandbox_handle_capture_state (handle, &error);

  g_assert_no_error (error);
  return state;
}

static void
stop (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_handle_stop (handle, NULL, &error));
  g_assert_no_error (error);
}

static void
test_list_sessions_reports_state_lease_and_size (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (4);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxState) state = capture (handle);
  const char *id = sandbox_state_get_session_id (state);
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GPtrArray) after_stop = NULL;
  g_autoptr(GError) error = NULL;
  SandboxSessionInfo *info;
  SandboxLeaseOwner *owner;

  sessions = sandbox_backend_list_sessions (backend, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sessions->len, ==, 1);
  info = find_session (sessions, id);
  g_assert_nonnull (info);
  g_assert_true (sandbox_state_equal (sandbox_session_info_get_state (info), state));
  /* hello.txt (5 bytes) and docs/readme.md (9 bytes); docs/ is no file. */
  g_assert_cmpuint (sandbox_session_info_get_workspace_n_files (info), ==, 2);
  g_assert_cmpuint (sandbox_session_info_get_workspace_n_bytes (info), ==, 14);
  /* The live handle holds the lease, in this process. */
  owner = sandbox_session_info_get_lease_owner (info);
  g_assert_nonnull (owner);
  g_assert_cmpint (sandbox_lease_owner_get_pid (owner), ==, getpid ());
  g_assert_null (sandbox_lease_owner_get_host (owner));
  g_assert_true (sandbox_lease_owner_is_alive (owner));

  stop (handle);
  after_stop = sandbox_backend_list_sessions (backend, NULL, &error);
  g_assert_no_error (error);
  info = find_session (after_stop, id);
  g_assert_nonnull (info);
  g_assert_null (sandbox_session_info_get_lease_owner (info));
}

static void
test_list_sessions_sorted_by_id (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (4);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(GPtrArray) handles = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GError) error = NULL;

  for (guint i = 0; i < 8; i++)
    g_ptr_array_add (handles, memory_test_create (backend, key, NULL));
  sessions = sandbox_backend_list_sessions (backend, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sessions->len, ==, 8);
  for (guint i = 1; i < sessions->len; i++)
    {
      SandboxState *a = sandbox_session_info_get_state (g_ptr_array_index (sessions, i - 1));
      SandboxState *b = sandbox_session_info_get_state (g_ptr_array_index (sessions, i));

      g_assert_cmpstr (sandbox_state_get_session_id (a), <, sandbox_state_get_session_id (b));
    }
}

static void
test_list_sessions_async (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (4);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxState) state = capture (handle);
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_backend_list_sessions_async (backend, NULL, memory_test_store_result, &result);
  sessions = sandbox_backend_list_sessions_finish (backend, memory_test_await (&result), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (sessions->len, ==, 1);
  g_assert_nonnull (find_session (sessions, sandbox_state_get_session_id (state)));
}

static void
test_list_templates_counts_sessions (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (4);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) first = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxHandle) second = memory_test_create (backend, key, NULL);
  g_autoptr(GPtrArray) templates = NULL;
  g_autoptr(GError) error = NULL;
  SandboxTemplateInfo *info;

  templates = sandbox_backend_list_templates (backend, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (templates->len, ==, 1);
  info = g_ptr_array_index (templates, 0);
  g_assert_cmpstr (sandbox_template_info_get_key (info), ==, key);
  g_assert_cmpuint (sandbox_template_info_get_n_files (info), ==, 2);
  g_assert_cmpuint (sandbox_template_info_get_n_bytes (info), ==, 14);
  g_assert_cmpuint (sandbox_template_info_get_n_sessions (info), ==, 2);
}

static void
test_lookup_state (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (4);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxState) state = capture (handle);
  g_autoptr(SandboxState) found = NULL;
  g_autoptr(SandboxState) unknown = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *other_id = g_strnfill (64, 'a');

  found = sandbox_backend_lookup_state (backend, sandbox_state_get_session_id (state), NULL,
                                        &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_state_equal (found, state));

  unknown = sandbox_backend_lookup_state (backend, other_id, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_assert_null (unknown);
}

static void
test_query_lease_owner (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (4);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxState) state = capture (handle);
  const char *id = sandbox_state_get_session_id (state);
  g_autoptr(SandboxLeaseOwner) owner = NULL;
  g_autoptr(SandboxLeaseOwner) none = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *other_id = g_strnfill (64, 'a');

  g_assert_true (sandbox_backend_query_lease_owner (backend, id, &owner, NULL, &error));
  g_assert_no_error (error);
  g_assert_nonnull (owner);
  g_assert_cmpint (sandbox_lease_owner_get_pid (owner), ==, getpid ());

  stop (handle);
  g_assert_true (sandbox_backend_query_lease_owner (backend, id, &none, NULL, &error));
  g_assert_no_error (error);
  g_assert_null (none);

  g_assert_false (sandbox_backend_query_lease_owner (backend, other_id, NULL, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
}

/* A template a stored session was created from stays: the session's resume
 * checks it. Make sandbox_memory_store_delete_template() skip its session
 * count and this test deletes it, and the resume below fails NOT_FOUND. */
static void
test_delete_template_busy_while_sessions_exist (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (4);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(SandboxHandle) handle = memory_test_create (backend, key, NULL);
  g_autoptr(SandboxState) state = capture (handle);
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(GPtrArray) templates = NULL;
  g_autoptr(GError) error = NULL;

  stop (handle);
  g_assert_false (sandbox_backend_delete_template (backend, key, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_clear_error (&error);

  resumed = memory_test_create (backend, key, state);
  g_assert_true (sandbox_handle_delete (resumed, NULL, &error));
  g_assert_no_error (error);

  g_assert_true (sandbox_backend_delete_template (backend, key, NULL, &error));
  g_assert_no_error (error);
  templates = sandbox_backend_list_templates (backend, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (templates->len, ==, 0);

  g_assert_false (sandbox_backend_delete_template (backend, key, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
}

static void
test_delete_template_async (void)
{
  g_autoptr(SandboxBackend) backend = memory_test_backend_new (4);
  g_autofree char *key = memory_test_prewarm (backend);
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;

  sandbox_backend_delete_template_async (backend, key, NULL, memory_test_store_result, &result);
  g_assert_true (sandbox_backend_delete_template_finish (backend, memory_test_await (&result),
                                                         &error));
  g_assert_no_error (error);
}

/* A backend that stores nothing and implements none of the store's view,
 * to see the core's defaults and checks. */

#define TEST_TYPE_BARE_BACKEND (test_bare_backend_get_type ())
G_DECLARE_FINAL_TYPE (TestBareBackend, test_bare_backend, TEST, BARE_BACKEND, GObject)

struct _TestBareBackend
{
  GObject parent_instance;
};

static guint bare_lookups;

static SandboxState *
bare_lookup_state (SandboxBackend  *self,
                   const char      *session_id,
                   GCancellable    *cancellable,
                   GError         **error)
{
  bare_lookups++;
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND, "none here");
  return NULL;
}

static void
test_bare_backend_iface_init (SandboxBackendInterface *iface)
{
  /* Only lookup_state, so that the checks in front of it can be seen. */
  iface->lookup_state = bare_lookup_state;
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestBareBackend, test_bare_backend, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SANDBOX_TYPE_BACKEND,
                                                      test_bare_backend_iface_init))

static void
test_bare_backend_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
test_bare_backend_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
}

static void
test_bare_backend_class_init (TestBareBackendClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = test_bare_backend_get_property;
  object_class->set_property = test_bare_backend_set_property;
  g_object_class_override_property (object_class, 1, "name");
  g_object_class_override_property (object_class, 2, "state-directory");
  g_object_class_override_property (object_class, 3, "max-concurrent-commands");
}

static void
test_bare_backend_init (TestBareBackend *self)
{
}

static void
test_defaults_are_not_supported (void)
{
  g_autoptr(SandboxBackend) backend = g_object_new (TEST_TYPE_BARE_BACKEND, NULL);
  g_autofree char *id = g_strnfill (64, 'a');
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GPtrArray) templates = NULL;
  g_autoptr(GError) error = NULL;

  sessions = sandbox_backend_list_sessions (backend, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_assert_cmpstr (error->message, ==,
                   "Listing sessions is not supported by the TestBareBackend driver");
  g_assert_null (sessions);
  g_clear_error (&error);

  templates = sandbox_backend_list_templates (backend, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_assert_null (templates);
  g_clear_error (&error);

  g_assert_false (sandbox_backend_query_lease_owner (backend, id, NULL, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);

  g_assert_false (sandbox_backend_delete_template (backend, id, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
}

/* Hostile ids never reach a driver's store, which may build paths from
 * them. Remove check_id() from sandbox_backend_lookup_state() in
 * libsandbox-core/sandbox-backend-store.c and bare_lookups counts them. */
static void
test_malformed_ids_never_reach_the_driver (void)
{
  g_autoptr(SandboxBackend) backend = g_object_new (TEST_TYPE_BARE_BACKEND, NULL);
  const char *hostile[] = {
    "", "..", "../../../../etc", "/etc/passwd",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",     /* 63 */
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",   /* 65 */
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",    /* upper */
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/.",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
  };

  bare_lookups = 0;
  for (guint i = 0; i < G_N_ELEMENTS (hostile); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(SandboxState) state = sandbox_backend_lookup_state (backend, hostile[i], NULL,
                                                                    &error);

      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_cmpstr (error->message, ==,
                       "Expected a session id: 64 lowercase hexadecimal characters");
      g_assert_null (state);
    }
  g_assert_cmpuint (bare_lookups, ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/memory/store/list-sessions-reports-state-lease-and-size",
                   test_list_sessions_reports_state_lease_and_size);
  g_test_add_func ("/sandbox/memory/store/list-sessions-sorted-by-id",
                   test_list_sessions_sorted_by_id);
  g_test_add_func ("/sandbox/memory/store/list-sessions-async", test_list_sessions_async);
  g_test_add_func ("/sandbox/memory/store/list-templates-counts-sessions",
                   test_list_templates_counts_sessions);
  g_test_add_func ("/sandbox/memory/store/lookup-state", test_lookup_state);
  g_test_add_func ("/sandbox/memory/store/query-lease-owner", test_query_lease_owner);
  g_test_add_func ("/sandbox/memory/store/delete-template-busy-while-sessions-exist",
                   test_delete_template_busy_while_sessions_exist);
  g_test_add_func ("/sandbox/memory/store/delete-template-async", test_delete_template_async);
  g_test_add_func ("/sandbox/store/defaults-are-not-supported", test_defaults_are_not_supported);
  g_test_add_func ("/sandbox/store/malformed-ids-never-reach-the-driver",
                   test_malformed_ids_never_reach_the_driver);

  return g_test_run ();
}
