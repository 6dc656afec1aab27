/* test-backend-protocol.c — the session protocol SandboxBackendBase runs
 *
 * A driver of this file's own answers the protocol's hooks and writes down
 * each call, so the tests see the order the base calls them in, where it
 * stops on each error and that a lease it took is released again. Its
 * new_handle always fails (a handle needs a live driver): the memory and
 * example drivers' suites and conformance cover the way to a handle.
 * It counts the leases it holds, and can cancel the caller's cancellable
 * when a hook is called, which that hook must then see.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <sandbox-backend-driver.h>

#define KEY "0000000000000000000000000000000000000000000000000000000000000001"
#define ID  "0000000000000000000000000000000000000000000000000000000000000002"

#define TEST_TYPE_PROTOCOL_BACKEND (test_protocol_backend_get_type ())
G_DECLARE_FINAL_TYPE (TestProtocolBackend, test_protocol_backend, TEST, PROTOCOL_BACKEND,
                      SandboxBackendBase)

struct _TestProtocolBackend
{
  SandboxBackendBase parent_instance;
  GString *calls;
  const char *fail;          /* the hook that fails, or NULL */
  SandboxState *stored;      /* what load_state gives */
  const char *cancel_at;     /* the hook that cancels the caller's cancellable */
  GCancellable *cancellable; /* the caller's */
  int leases;                /* taken and not yet released or removed */
};

static void
test_protocol_backend_iface_init (SandboxBackendInterface *iface)
{
  sandbox_backend_base_implement_sessions (iface);
}

G_DEFINE_FINAL_TYPE_WITH_CODE (TestProtocolBackend, test_protocol_backend,
                               SANDBOX_TYPE_BACKEND_BASE,
                               G_IMPLEMENT_INTERFACE (SANDBOX_TYPE_BACKEND,
                                                      test_protocol_backend_iface_init))

/* Records @hook, cancels the caller's cancellable if @hook is to; FALSE
 * if the @cancellable the hook got is cancelled, or (with a BUSY error
 * naming it) if it is to fail. */
static gboolean
call (SandboxBackendBase  *base,
      const char          *hook,
      GCancellable        *cancellable,
      GError             **error)
{
  TestProtocolBackend *self = TEST_PROTOCOL_BACKEND (base);

  g_string_append_printf (self->calls, "%s%s", self->calls->len > 0 ? " " : "", hook);
  if (g_strcmp0 (self->cancel_at, hook) == 0)
    g_cancellable_cancel (self->cancellable);
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  if (g_strcmp0 (self->fail, hook) != 0)
    return TRUE;
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY, "%s failed", hook);
  return FALSE;
}

/* A lease taken by a hook that succeeded. */
static gboolean
lease_taken (SandboxBackendBase *base,
             gboolean            taken)
{
  TEST_PROTOCOL_BACKEND (base)->leases += taken ? 1 : 0;
  return taken;
}

static gboolean
hook_check_policy (SandboxBackendBase *base, SandboxNetworkPolicy *policy, GError **error)
{
  return call (base, "check_policy", NULL, error);
}

static gboolean
hook_check_template (SandboxBackendBase *base, const char *key, GCancellable *cancellable,
                     GError **error)
{
  return call (base, "check_template", cancellable, error);
}

static gboolean
hook_has_session (SandboxBackendBase *base, const char *id)
{
  return call (base, "has_session", NULL, NULL);
}

static gboolean
hook_take_lease (SandboxBackendBase *base, const char *id, GCancellable *cancellable,
                 GError **error)
{
  return lease_taken (base, call (base, "take_lease", cancellable, error));
}

static gboolean
hook_take_over_lease (SandboxBackendBase *base, const char *id, GCancellable *cancellable,
                      GError **error)
{
  return lease_taken (base, call (base, "take_over_lease", cancellable, error));
}

static void
hook_release_lease (SandboxBackendBase *base, const char *id)
{
  call (base, "release_lease", NULL, NULL);
  TEST_PROTOCOL_BACKEND (base)->leases--;
}

static SandboxState *
hook_load_state (SandboxBackendBase *base, const char *id, GCancellable *cancellable,
                 GError **error)
{
  return call (base, "load_state", cancellable, error)
    ? g_object_ref (TEST_PROTOCOL_BACKEND (base)->stored)
    : NULL;
}

static gboolean
hook_new_session (SandboxBackendBase *base, SandboxState *state, GCancellable *cancellable,
                  GError **error)
{
  return lease_taken (base, call (base, "new_session", cancellable, error));
}

static SandboxHandle *
hook_new_handle (SandboxBackendBase *base, SandboxState *state, SandboxNetworkPolicy *policy,
                 GCancellable *cancellable, GError **error)
{
  if (call (base, "new_handle", cancellable, error))
    g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, "no handle here");
  return NULL;
}

static gboolean
hook_remove_session (SandboxBackendBase *base, const char *id, GCancellable *cancellable,
                     GError **error)
{
  gboolean removed = call (base, "remove_session", cancellable, error);

  TEST_PROTOCOL_BACKEND (base)->leases -= removed ? 1 : 0;
  return removed;
}

static void
test_protocol_backend_finalize (GObject *object)
{
  TestProtocolBackend *self = TEST_PROTOCOL_BACKEND (object);

  g_string_free (self->calls, TRUE);
  g_clear_object (&self->stored);
  g_clear_object (&self->cancellable);
  G_OBJECT_CLASS (test_protocol_backend_parent_class)->finalize (object);
}

static void
test_protocol_backend_class_init (TestProtocolBackendClass *klass)
{
  SandboxBackendBaseClass *base_class = SANDBOX_BACKEND_BASE_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = test_protocol_backend_finalize;
  sandbox_backend_base_class_set_default_name (base_class, "protocol");
  base_class->check_policy = hook_check_policy;
  base_class->check_template = hook_check_template;
  base_class->has_session = hook_has_session;
  base_class->take_lease = hook_take_lease;
  base_class->take_over_lease = hook_take_over_lease;
  base_class->release_lease = hook_release_lease;
  base_class->load_state = hook_load_state;
  base_class->new_session = hook_new_session;
  base_class->new_handle = hook_new_handle;
  base_class->remove_session = hook_remove_session;
}

static void
test_protocol_backend_init (TestProtocolBackend *self)
{
  self->calls = g_string_new (NULL);
}

static TestProtocolBackend *
backend_new (const char *fail)
{
  TestProtocolBackend *self = g_object_new (TEST_TYPE_PROTOCOL_BACKEND, NULL);

  g_assert_true (g_initable_init (G_INITABLE (self), NULL, NULL));
  self->fail = fail;
  self->stored = sandbox_state_new ("protocol", ID, KEY, NULL);
  return self;
}

/* Runs create (resuming @saved if not NULL), or with @recover
 * recover_session, and checks the hooks called and the error. */
static void
check_open (gboolean      recover,
            const char   *fail,
            const char   *key,
            SandboxState *saved,
            const char   *expected_calls,
            SandboxError  expected_code)
{
  g_autoptr(TestProtocolBackend) self = backend_new (fail);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxHandle) handle = NULL;

  handle = recover
    ? sandbox_backend_recover_session (SANDBOX_BACKEND (self), saved, policy, NULL, &error)
    : sandbox_backend_create (SANDBOX_BACKEND (self), key, saved, policy, NULL, &error);
  g_assert_null (handle);
  g_assert_error (error, SANDBOX_ERROR, (int) expected_code);
  g_assert_cmpstr (self->calls->str, ==, expected_calls);
}

#define check_create(...) check_open (FALSE, __VA_ARGS__)
#define check_recover(fail, ...) check_open (TRUE, fail, NULL, __VA_ARGS__)

static void
test_create_order (void)
{
  check_create (NULL, KEY, NULL,
                "check_policy check_template new_session new_handle release_lease",
                SANDBOX_ERROR_UNAVAILABLE);
  check_create ("check_policy", KEY, NULL, "check_policy", SANDBOX_ERROR_BUSY);
  check_create (NULL, "not-a-key", NULL, "check_policy", SANDBOX_ERROR_INVALID);
  check_create ("check_template", KEY, NULL, "check_policy check_template",
                SANDBOX_ERROR_BUSY);
  /* A session that could not be stored holds no lease to release. */
  check_create ("new_session", KEY, NULL, "check_policy check_template new_session",
                SANDBOX_ERROR_BUSY);
}

static void
test_resume_order (void)
{
  g_autoptr(SandboxState) saved = sandbox_state_new ("protocol", ID, KEY, NULL);
  g_autoptr(SandboxState) other_backend = sandbox_state_new ("elsewhere", ID, KEY, NULL);
  g_autoptr(SandboxState) other_id = sandbox_state_new (
    "protocol", "0000000000000000000000000000000000000000000000000000000000000003", KEY, NULL);

  check_create (NULL, KEY, saved,
                "check_policy check_template has_session take_lease load_state new_handle "
                "release_lease",
                SANDBOX_ERROR_UNAVAILABLE);
  check_create (NULL, KEY, other_backend, "check_policy", SANDBOX_ERROR_STATE_MISMATCH);
  check_create ("has_session", KEY, saved, "check_policy check_template has_session",
                SANDBOX_ERROR_NOT_FOUND);
  check_create ("take_lease", KEY, saved, "check_policy check_template has_session take_lease",
                SANDBOX_ERROR_BUSY);
  check_create ("load_state", KEY, saved,
                "check_policy check_template has_session take_lease load_state release_lease",
                SANDBOX_ERROR_BUSY);
  /* What is stored is not what the caller saved. */
  check_create (NULL, KEY, other_id,
                "check_policy check_template has_session take_lease load_state release_lease",
                SANDBOX_ERROR_STATE_MISMATCH);
}

/* A recovery is a resume whose lease is taken over, never merely taken. */
static void
test_recover_order (void)
{
  g_autoptr(SandboxState) saved = sandbox_state_new ("protocol", ID, KEY, NULL);
  g_autoptr(SandboxState) other_backend = sandbox_state_new ("elsewhere", ID, "not-a-key", NULL);
  g_autoptr(SandboxState) bad_key = sandbox_state_new ("protocol", ID, "not-a-key", NULL);
  g_autoptr(TestProtocolBackend) self = backend_new (NULL);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  SandboxBackendBaseClass *klass = SANDBOX_BACKEND_BASE_GET_CLASS (self);
  g_autoptr(GError) error = NULL;

  check_recover (NULL, saved,
                 "check_policy check_template has_session take_over_lease load_state "
                 "new_handle release_lease",
                 SANDBOX_ERROR_UNAVAILABLE);
  check_recover ("take_over_lease", saved,
                 "check_policy check_template has_session take_over_lease", SANDBOX_ERROR_BUSY);
  /* The backend's name is checked first, before the template key. */
  check_recover (NULL, other_backend, "", SANDBOX_ERROR_STATE_MISMATCH);
  check_recover (NULL, bad_key, "check_policy", SANDBOX_ERROR_INVALID);

  /* A driver without the hook cannot recover, and says so before any hook. */
  klass->take_over_lease = NULL;
  g_assert_null (sandbox_backend_recover_session (SANDBOX_BACKEND (self), saved, policy, NULL,
                                                  &error));
  klass->take_over_lease = hook_take_over_lease;
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_cmpstr (self->calls->str, ==, "");
}

static void
test_delete_order (void)
{
  g_autoptr(TestProtocolBackend) self = backend_new (NULL);
  g_autoptr(TestProtocolBackend) busy = backend_new ("take_lease");
  g_autoptr(TestProtocolBackend) gone = backend_new ("has_session");
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_backend_base_delete_session (SANDBOX_BACKEND_BASE (self), ID, NULL,
                                                      &error));
  g_assert_no_error (error);
  g_assert_cmpstr (self->calls->str, ==, "has_session take_lease remove_session");

  g_assert_false (sandbox_backend_base_delete_session (SANDBOX_BACKEND_BASE (busy), ID, NULL,
                                                       &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY);
  g_assert_cmpstr (busy->calls->str, ==, "has_session take_lease");

  g_clear_error (&error);
  g_assert_true (sandbox_backend_base_delete_session (SANDBOX_BACKEND_BASE (gone), ID, NULL,
                                                      &error));
  g_assert_no_error (error);
  g_assert_cmpstr (gone->calls->str, ==, "has_session");
}

static void
test_lookup_state (void)
{
  g_autoptr(TestProtocolBackend) self = backend_new (NULL);
  g_autoptr(TestProtocolBackend) gone = backend_new ("has_session");
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) none = NULL;

  state = sandbox_backend_lookup_state (SANDBOX_BACKEND (self), ID, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (sandbox_state_equal (state, self->stored));
  g_assert_cmpstr (self->calls->str, ==, "has_session load_state");

  none = sandbox_backend_lookup_state (SANDBOX_BACKEND (gone), ID, NULL, &error);
  g_assert_null (none);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND);
  g_assert_cmpstr (error->message, ==, "Unknown sandbox session " ID);
}

static void
test_not_initialized (void)
{
  g_autoptr(TestProtocolBackend) self = g_object_new (TEST_TYPE_PROTOCOL_BACKEND, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_false (sandbox_backend_base_check_ready (SANDBOX_BACKEND_BASE (self), NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_true (g_str_has_suffix (error->message,
                                   "backend was not initialized; create it with "
                                   "sandbox_backend_new()"));
}

/* Opens (create, resume @saved or recover it) or with @delete deletes a
 * session with a cancellable that @cancel_at cancels when it is called:
 * that hook sees it cancelled, the call fails with G_IO_ERROR_CANCELLED
 * and no lease is left held. */
static void
check_cancelled (const char   *cancel_at,
                 const char   *operation,
                 SandboxState *saved,
                 const char   *expected_calls)
{
  g_autoptr(TestProtocolBackend) self = backend_new (NULL);
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  SandboxBackend *backend = SANDBOX_BACKEND (self);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxState) state = NULL;

  self->cancel_at = cancel_at;
  self->cancellable = g_cancellable_new ();
  if (g_str_equal (operation, "delete"))
    g_assert_false (sandbox_backend_base_delete_session (SANDBOX_BACKEND_BASE (self), ID,
                                                         self->cancellable, &error));
  else if (g_str_equal (operation, "lookup"))
    g_assert_null ((state = sandbox_backend_lookup_state (backend, ID, self->cancellable,
                                                          &error)));
  else if (g_str_equal (operation, "recover"))
    g_assert_null ((handle = sandbox_backend_recover_session (backend, saved, policy,
                                                              self->cancellable, &error)));
  else
    g_assert_null ((handle = sandbox_backend_create (backend, KEY, saved, policy,
                                                     self->cancellable, &error)));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpstr (self->calls->str, ==, expected_calls);
  g_assert_cmpint (self->leases, ==, 0);
}

/* Every hook that may block gets the caller's cancellable. */
static void
test_cancelled_hooks (void)
{
  g_autoptr(SandboxState) saved = sandbox_state_new ("protocol", ID, KEY, NULL);

  check_cancelled ("check_template", "create", NULL, "check_policy check_template");
  check_cancelled ("new_session", "create", NULL, "check_policy check_template new_session");
  check_cancelled ("new_handle", "create", NULL,
                   "check_policy check_template new_session new_handle release_lease");
  check_cancelled ("check_template", "create", saved, "check_policy check_template");
  check_cancelled ("take_lease", "create", saved,
                   "check_policy check_template has_session take_lease");
  check_cancelled ("load_state", "create", saved,
                   "check_policy check_template has_session take_lease load_state "
                   "release_lease");
  check_cancelled ("new_handle", "create", saved,
                   "check_policy check_template has_session take_lease load_state new_handle "
                   "release_lease");
  check_cancelled ("take_over_lease", "recover", saved,
                   "check_policy check_template has_session take_over_lease");
  check_cancelled ("load_state", "recover", saved,
                   "check_policy check_template has_session take_over_lease load_state "
                   "release_lease");
  check_cancelled ("take_lease", "delete", NULL, "has_session take_lease");
  check_cancelled ("remove_session", "delete", NULL,
                   "has_session take_lease remove_session release_lease");
  check_cancelled ("load_state", "lookup", NULL, "has_session load_state");
}

static void
count_freed (gpointer lease)
{
  (*(guint *) lease)++;
}

/* A lease held between hooks is the holder's until stolen back, one a
 * session; what the backend still holds when it goes is freed with it. */
static void
test_held_leases (void)
{
  TestProtocolBackend *self = backend_new (NULL);
  SandboxBackendBase *base = SANDBOX_BACKEND_BASE (self);
  guint first = 0, second = 0, other = 0;

  g_assert_null (sandbox_backend_base_steal_lease (base, ID));
  sandbox_backend_base_hold_lease (base, ID, &first, count_freed);
  g_assert_true (sandbox_backend_base_steal_lease (base, ID) == &first);
  g_assert_null (sandbox_backend_base_steal_lease (base, ID));
  g_assert_cmpuint (first, ==, 0);

  /* Held again: a session holds one lease, the later one. */
  sandbox_backend_base_hold_lease (base, ID, &first, count_freed);
  sandbox_backend_base_hold_lease (base, ID, &second, count_freed);
  g_assert_cmpuint (first, ==, 1);
  sandbox_backend_base_hold_lease (base, KEY, &other, NULL);
  g_assert_true (sandbox_backend_base_steal_lease (base, KEY) == &other);

  g_object_unref (self);
  g_assert_cmpuint (second, ==, 1);
  g_assert_cmpuint (first, ==, 1);
  g_assert_cmpuint (other, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/backend-protocol/create-order", test_create_order);
  g_test_add_func ("/sandbox/backend-protocol/resume-order", test_resume_order);
  g_test_add_func ("/sandbox/backend-protocol/recover-order", test_recover_order);
  g_test_add_func ("/sandbox/backend-protocol/delete-order", test_delete_order);
  g_test_add_func ("/sandbox/backend-protocol/lookup-state", test_lookup_state);
  g_test_add_func ("/sandbox/backend-protocol/cancelled-hooks", test_cancelled_hooks);
  g_test_add_func ("/sandbox/backend-protocol/not-initialized", test_not_initialized);
  g_test_add_func ("/sandbox/backend-protocol/held-leases", test_held_leases);

  return g_test_run ();
}
