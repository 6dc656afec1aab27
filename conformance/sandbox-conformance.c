/* sandbox-conformance.c — the black-box contract every backend must keep
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sandbox-backend.h"
#include "sandbox-conformance.h"
#include "sandbox-error.h"
#include "sandbox-path.h"

/**
 * SandboxConformance:
 *
 * The backend conformance suite: the black-box contract every driver must
 * keep, run against a driver by name. A custom driver's author runs it with
 * one command, `sandbox-conformance DRIVER`, and reads the result as TAP.
 *
 * The suite constructs its own backends with sandbox_backend_newv() from the
 * driver name and the properties given with
 * sandbox_conformance_set_backend_property(). When the driver has a
 * `state-directory` property and none is given, each run uses a fresh
 * temporary directory and removes it afterwards. It checks:
 *
 * - prewarm: the template key is sandbox_template_compute_key() of the
 *   template and backend name, deterministic, `reused` on repeat,
 *   independent of file order and sensitive to content;
 * - lifecycle: create, capture_state(), stop (idempotent; every operation
 *   then fails with %SANDBOX_ERROR_STOPPED), resume with the workspace kept,
 *   delete (capture_state() then fails with %SANDBOX_ERROR_STOPPED, resuming
 *   with %SANDBOX_ERROR_NOT_FOUND, deleting again is a no-op, templates stay);
 * - leases: a second owner, through the same or another backend object over
 *   the same state directory, gets %SANDBOX_ERROR_BUSY, and so does delete()
 *   by an older, stopped handle;
 * - state checks: a state of another backend or template is
 *   %SANDBOX_ERROR_STATE_MISMATCH; unknown templates and sessions are
 *   %SANDBOX_ERROR_NOT_FOUND;
 * - paths: canonical and `/workspace/` forms name the same file; `..`,
 *   absolute paths, backslashes, empty segments are %SANDBOX_ERROR_PATH, in
 *   file operations and as a command's working directory; the workspace root
 *   can't be removed;
 * - files: a missing file is %G_IO_ERROR_NOT_FOUND, writes create parents,
 *   removing a missing path succeeds, 1 MiB is accepted and more is
 *   %SANDBOX_ERROR_LIMIT;
 * - text: read_text() drops a leading BOM and fails on invalid UTF-8 with
 *   %G_CONVERT_ERROR_ILLEGAL_SEQUENCE; run() replaces invalid UTF-8 with
 *   U+FFFD while the raw bytes are kept;
 * - network: a policy the driver cannot enforce is refused with
 *   %SANDBOX_ERROR_UNAVAILABLE (or accepted), never with another error; a
 *   policy change while commands are live is %SANDBOX_ERROR_BUSY;
 * - commands: exit status, stdin, live #SandboxProcess::stdout-data,
 *   cancellation (%G_IO_ERROR_CANCELLED), the deadline and output cap
 *   (%SANDBOX_ERROR_LIMIT), admission at `max-concurrent-commands`
 *   (%SANDBOX_ERROR_BUSY before anything starts) and stop killing live
 *   commands.
 *
 * The command checks run only these commands, which a real driver finds in
 * its runtime and a scripted driver (such as `memory`) must declare:
 * `/usr/bin/cat conformance.txt` (prints the workspace file),
 * `/usr/bin/cat` (copies stdin to stdout), `/usr/bin/false` (exits 1),
 * `/usr/bin/printf \377` (writes the byte 0xFF), `/usr/bin/sleep 30` (runs
 * until killed) and `/usr/bin/yes` (writes without end). A driver that runs
 * no commands at all claims %SANDBOX_CONFORMANCE_FLAGS_NO_COMMANDS; the suite
 * then checks that every spawn is refused with %SANDBOX_ERROR_UNAVAILABLE and
 * skips the rest.
 *
 * Each check's result is emitted as #SandboxConformance::check-finished and,
 * when a stream is given to sandbox_conformance_run(), written as TAP.
 */

#define CHECK_FAILED(error, ...) \
  (g_set_error ((error), G_IO_ERROR, G_IO_ERROR_FAILED, __VA_ARGS__), FALSE)

#define DEADLINE_TEST_MS   300
#define SLOW_BOUND_US      (15 * G_USEC_PER_SEC)

struct _SandboxConformance
{
  GObject                  parent_instance;

  char                    *driver;
  SandboxConformanceFlags  flags;
  GPtrArray               *property_names;    /* (element-type utf8) */
  GArray                  *property_values;   /* (element-type GValue) */

  guint                    n_passed;
  guint                    n_failed;
  guint                    n_skipped;
};

enum {
  PROP_0,
  PROP_DRIVER,
  PROP_FLAGS,
  N_PROPS
};

enum {
  SIGNAL_CHECK_FINISHED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FLAGS_TYPE (SandboxConformanceFlags, sandbox_conformance_flags,
  G_DEFINE_ENUM_VALUE (SANDBOX_CONFORMANCE_FLAGS_NONE, "none"),
  G_DEFINE_ENUM_VALUE (SANDBOX_CONFORMANCE_FLAGS_NO_COMMANDS, "no-commands"))

G_DEFINE_ENUM_TYPE (SandboxConformanceOutcome, sandbox_conformance_outcome,
  G_DEFINE_ENUM_VALUE (SANDBOX_CONFORMANCE_OUTCOME_PASS, "pass"),
  G_DEFINE_ENUM_VALUE (SANDBOX_CONFORMANCE_OUTCOME_FAIL, "fail"),
  G_DEFINE_ENUM_VALUE (SANDBOX_CONFORMANCE_OUTCOME_SKIP, "skip"))

G_DEFINE_FINAL_TYPE (SandboxConformance, sandbox_conformance, G_TYPE_OBJECT)

/* ------------------------------------------------------------------------ */
/* The run context shared by the checks                                      */
/* ------------------------------------------------------------------------ */

typedef struct
{
  SandboxConformance *self;
  GCancellable       *cancellable;
  char               *temporary_directory;  /* owned by the run, removed after */
  SandboxBackend     *backend;
  char               *name;
  char               *key;                  /* template with conformance.txt */
  char               *other_key;            /* a second template */
  char               *skip_reason;          /* set by a check that doesn't apply */
} Run;

static const char hello[] = "hello from the conformance suite\n";

static gboolean
claims_commands (Run *run)
{
  return (run->self->flags & SANDBOX_CONFORMANCE_FLAGS_NO_COMMANDS) == 0;
}

static char *
describe_error (const GError *error)
{
  if (error == NULL)
    return g_strdup ("success");
  if (error->domain == SANDBOX_ERROR)
    return g_strdup_printf ("%s (“%s”)",
                            sandbox_error_code_name ((SandboxError) error->code),
                            error->message);
  return g_strdup_printf ("%s %d (“%s”)", g_quark_to_string (error->domain),
                          error->code, error->message);
}

static char *
describe_expected (GQuark domain,
                   int    code)
{
  if (domain == SANDBOX_ERROR)
    return g_strdup (sandbox_error_code_name ((SandboxError) code));
  return g_strdup_printf ("%s %d", g_quark_to_string (domain), code);
}

/* Takes *@actual, leaving %NULL; TRUE when it is the expected error. */
static gboolean
expect_error (GError     **actual,
              GQuark       domain,
              int          code,
              const char  *what,
              GError     **error)
{
  g_autoptr(GError) owned = g_steal_pointer (actual);
  g_autofree char *expected = describe_expected (domain, code);
  g_autofree char *got = describe_error (owned);

  if (owned != NULL && g_error_matches (owned, domain, code))
    return TRUE;

  return CHECK_FAILED (error, "%s: expected %s, got %s", what, expected, got);
}

/* Takes *@actual, leaving %NULL; TRUE when there is none. */
static gboolean
expect_success (GError     **actual,
                const char  *what,
                GError     **error)
{
  g_autoptr(GError) owned = g_steal_pointer (actual);
  g_autofree char *got = NULL;

  if (owned == NULL)
    return TRUE;

  got = describe_error (owned);
  return CHECK_FAILED (error, "%s: expected success, got %s", what, got);
}

static gboolean
expect_bytes (GBytes      *bytes,
              const void  *data,
              gsize        length,
              const char  *what,
              GError     **error)
{
  gsize size = 0;
  const guint8 *actual = g_bytes_get_data (bytes, &size);

  if (size == length && (length == 0 || memcmp (actual, data, length) == 0))
    return TRUE;

  return CHECK_FAILED (error, "%s: expected %" G_GSIZE_FORMAT " bytes of known content, "
                       "got %" G_GSIZE_FORMAT " different bytes", what, length, size);
}

static SandboxBackend *
new_backend (SandboxConformance  *self,
             const char          *state_directory,
             guint                max_concurrent_commands,
             GCancellable        *cancellable,
             GError             **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  g_autoptr(GArray) values = g_array_new (FALSE, TRUE, sizeof (GValue));
  g_auto(GValue) directory_value = G_VALUE_INIT;
  g_auto(GValue) limit_value = G_VALUE_INIT;
  gboolean have_directory = FALSE;

  for (guint i = 0; i < self->property_names->len; i++)
    {
      const char *name = g_ptr_array_index (self->property_names, i);

      if (g_str_equal (name, "state-directory"))
        have_directory = TRUE;
      if (max_concurrent_commands != 0 && g_str_equal (name, "max-concurrent-commands"))
        continue;
      g_ptr_array_add (names, (gpointer) name);
      g_array_append_vals (values, &g_array_index (self->property_values, GValue, i), 1);
    }

  if (state_directory != NULL && !have_directory)
    {
      g_value_init (&directory_value, G_TYPE_STRING);
      g_value_set_string (&directory_value, state_directory);
      g_ptr_array_add (names, (gpointer) "state-directory");
      g_array_append_vals (values, &directory_value, 1);
    }

  if (max_concurrent_commands != 0)
    {
      g_value_init (&limit_value, G_TYPE_UINT);
      g_value_set_uint (&limit_value, max_concurrent_commands);
      g_ptr_array_add (names, (gpointer) "max-concurrent-commands");
      g_array_append_vals (values, &limit_value, 1);
    }

  /* The GValues in @values are shallow copies owned by their originals. */
  return sandbox_backend_newv (self->driver, names->len, (const char **) names->pdata,
                               (const GValue *) values->data, cancellable, error);
}

static SandboxTemplate *
make_template (const char *name,
               gboolean    reversed,
               const char *extra)
{
  SandboxTemplate *template_ = sandbox_template_new (name);
  g_autoptr(GBytes) first = g_bytes_new_static (hello, strlen (hello));
  g_autoptr(GBytes) second = g_bytes_new_static ("nested\n", 7);
  g_autoptr(GError) error = NULL;

  if (!reversed)
    {
      sandbox_template_add_file (template_, "conformance.txt", first, &error);
      g_assert_no_error (error);
    }
  sandbox_template_add_file (template_, "dir/nested.txt", second, &error);
  g_assert_no_error (error);
  if (reversed)
    {
      sandbox_template_add_file (template_, "conformance.txt", first, &error);
      g_assert_no_error (error);
    }
  if (extra != NULL)
    {
      g_autoptr(GBytes) bytes = g_bytes_new (extra, strlen (extra));

      sandbox_template_add_file (template_, "extra.txt", bytes, &error);
      g_assert_no_error (error);
    }

  return template_;
}

static SandboxHandle *
new_session (Run     *run,
             GError **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  GError *local_error = NULL;
  SandboxHandle *handle;

  handle = sandbox_backend_create (run->backend, run->key, NULL, policy,
                                   run->cancellable, &local_error);
  if (handle == NULL)
    {
      expect_success (&local_error, "create (deny-all) from the prewarmed template", error);
      return NULL;
    }

  return handle;
}

static SandboxHandle *
resume_session (Run          *run,
                SandboxState *state,
                GError      **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();

  return sandbox_backend_create (run->backend, sandbox_state_get_template_key (state), state,
                                 policy, run->cancellable, error);
}

/* Removes a session the check no longer needs; errors don't matter here. */
static void
discard_session (SandboxHandle *handle)
{
  if (handle == NULL)
    return;
  sandbox_handle_delete (handle, NULL, NULL);
  g_object_unref (handle);
}

/* A handle that is deleted, not just released, when it goes out of scope. */
typedef SandboxHandle SandboxHandleDiscard;
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxHandleDiscard, discard_session)

static SandboxCommand *
probe_command (const char *executable,
               const char *arg)
{
  SandboxCommand *command = sandbox_command_new (executable);

  if (arg != NULL)
    sandbox_command_add_arg (command, arg);
  return command;
}

/* The backend type of @driver, loading the modules once. */
static GType
lookup_backend_type (const char  *driver,
                     GError     **error)
{
  g_auto(GStrv) names = sandbox_list_drivers ();
  GIOExtensionPoint *point;
  GIOExtension *extension;
  g_autofree char *available = NULL;

  point = g_io_extension_point_lookup (SANDBOX_BACKEND_EXTENSION_POINT_NAME);
  extension = point != NULL ? g_io_extension_point_get_extension_by_name (point, driver) : NULL;
  if (extension != NULL)
    return g_io_extension_get_type (extension);

  available = g_strjoinv (", ", names);
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Unknown sandbox driver “%s” (available: %s)", driver,
               available[0] != '\0' ? available : "none");
  return G_TYPE_INVALID;
}

/* ------------------------------------------------------------------------ */
/* The checks                                                                */
/* ------------------------------------------------------------------------ */

/* A new session whose state is captured and which is stopped again: where
 * the checks that resume, reattach or compare states start. */
static SandboxHandle *
new_stopped_session (Run           *run,
                     SandboxState **state,
                     GError       **error)
{
  g_autoptr(SandboxHandleDiscard) handle = new_session (run, error);
  GError *local_error = NULL;

  if (handle == NULL)
    return NULL;
  *state = sandbox_handle_capture_state (handle, &local_error);
  if (!expect_success (&local_error, "capture_state()", error))
    return NULL;
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    {
      expect_success (&local_error, "stop()", error);
      return NULL;
    }
  return g_steal_pointer (&handle);
}

static gboolean
check_backend_properties (Run     *run,
                          GError **error)
{
  g_autofree char *property_name = NULL;
  guint limit = 0;

  g_object_get (run->backend, "name", &property_name, "max-concurrent-commands", &limit, NULL);

  if (run->name == NULL || run->name[0] == '\0')
    return CHECK_FAILED (error, "sandbox_backend_get_name() is empty");
  if (g_strcmp0 (property_name, run->name) != 0)
    return CHECK_FAILED (error, "the name property (“%s”) differs from get_name() (“%s”)",
                         property_name, run->name);
  if (limit < 1 || limit > SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT)
    return CHECK_FAILED (error, "max-concurrent-commands is %u, outside 1 … %u",
                         limit, SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT);
  if (limit != sandbox_backend_get_max_concurrent_commands (run->backend))
    return CHECK_FAILED (error, "the max-concurrent-commands property differs from its getter");

  for (guint i = 0; i < run->self->property_names->len; i++)
    if (g_str_equal (g_ptr_array_index (run->self->property_names, i), "max-concurrent-commands"))
      return TRUE;

  if (limit != SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS)
    return CHECK_FAILED (error, "max-concurrent-commands defaults to %u, expected %u",
                         limit, SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS);
  return TRUE;
}

static gboolean
check_prewarm_content_address (Run     *run,
                               GError **error)
{
  g_autoptr(SandboxTemplate) template_ = make_template ("conformance", FALSE, NULL);
  g_autofree char *expected = NULL;
  GError *local_error = NULL;

  if (!sandbox_template_key_is_valid (run->key))
    return CHECK_FAILED (error, "the template key “%s” is not 64 lowercase hex digits", run->key);

  expected = sandbox_template_compute_key (template_, run->name, &local_error);
  if (!expect_success (&local_error, "sandbox_template_compute_key()", error))
    return FALSE;
  if (g_strcmp0 (expected, run->key) != 0)
    return CHECK_FAILED (error, "prewarm gave key %s, the content address is %s", run->key, expected);
  return TRUE;
}

static gboolean
check_prewarm_reused (Run     *run,
                      GError **error)
{
  g_autoptr(SandboxTemplate) template_ = make_template ("conformance", FALSE, NULL);
  g_autofree char *unique_name = g_strdup_printf ("conformance-%08x%08x",
                                                  g_random_int (), g_random_int ());
  g_autoptr(SandboxTemplate) fresh = make_template (unique_name, FALSE, NULL);
  g_autofree char *again = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  gboolean reused = FALSE;
  GError *local_error = NULL;

  again = sandbox_backend_prewarm (run->backend, template_, &reused, run->cancellable, &local_error);
  if (!expect_success (&local_error, "prewarm of a stored template", error))
    return FALSE;
  if (!reused)
    return CHECK_FAILED (error, "a repeated prewarm did not report reused");
  if (g_strcmp0 (again, run->key) != 0)
    return CHECK_FAILED (error, "a repeated prewarm gave another key (%s, then %s)", run->key, again);

  reused = TRUE;
  first = sandbox_backend_prewarm (run->backend, fresh, &reused, run->cancellable, &local_error);
  if (!expect_success (&local_error, "prewarm of a new template", error))
    return FALSE;
  if (reused)
    return CHECK_FAILED (error, "the first prewarm of a never-seen template reported reused");

  reused = FALSE;
  second = sandbox_backend_prewarm (run->backend, fresh, &reused, run->cancellable, &local_error);
  if (!expect_success (&local_error, "second prewarm of the new template", error))
    return FALSE;
  if (!reused || g_strcmp0 (first, second) != 0)
    return CHECK_FAILED (error, "the second prewarm was not reused under the same key");
  return TRUE;
}

static gboolean
check_prewarm_order_and_content (Run     *run,
                                 GError **error)
{
  g_autoptr(SandboxTemplate) reversed = make_template ("conformance", TRUE, NULL);
  g_autofree char *reversed_key = NULL;
  GError *local_error = NULL;

  reversed_key = sandbox_backend_prewarm (run->backend, reversed, NULL, run->cancellable,
                                          &local_error);
  if (!expect_success (&local_error, "prewarm with the files added in another order", error))
    return FALSE;
  if (g_strcmp0 (reversed_key, run->key) != 0)
    return CHECK_FAILED (error, "the key depends on the order files were added in");
  if (g_strcmp0 (run->other_key, run->key) == 0)
    return CHECK_FAILED (error, "templates with different content share the key %s", run->key);
  return TRUE;
}

static gboolean
check_create_unknown_template (Run     *run,
                               GError **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  GError *local_error = NULL;
  const char *unknown = "0000000000000000000000000000000000000000000000000000000000000000";

  handle = sandbox_backend_create (run->backend, unknown, NULL, policy, run->cancellable,
                                   &local_error);
  if (handle != NULL)
    return CHECK_FAILED (error, "create from a template never prewarmed succeeded");
  return expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                       "create from a template never prewarmed", error);
}

static gboolean
check_create_fresh (Run     *run,
                    GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxHandleDiscard) other = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) other_state = NULL;
  g_autoptr(GBytes) contents = NULL;
  g_autoptr(GBytes) nested = NULL;
  SandboxSession *session;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);
  if (session == NULL || sandbox_session_get_id (session) == NULL)
    return CHECK_FAILED (error, "the handle has no session, or the session no id");

  state = sandbox_handle_capture_state (handle, &local_error);
  if (!expect_success (&local_error, "capture_state() of a live session", error))
    return FALSE;
  if (g_strcmp0 (sandbox_state_get_backend (state), run->name) != 0)
    return CHECK_FAILED (error, "the state names backend “%s”, expected “%s”",
                         sandbox_state_get_backend (state), run->name);
  if (g_strcmp0 (sandbox_state_get_template_key (state), run->key) != 0)
    return CHECK_FAILED (error, "the state names another template key");
  if (g_strcmp0 (sandbox_state_get_session_id (state), sandbox_session_get_id (session)) != 0)
    return CHECK_FAILED (error, "the state's session id differs from the session's id");

  contents = sandbox_session_read_bytes (session, "conformance.txt", run->cancellable, &local_error);
  if (!expect_success (&local_error, "reading a template file in a new session", error))
    return FALSE;
  if (!expect_bytes (contents, hello, strlen (hello), "conformance.txt", error))
    return FALSE;
  nested = sandbox_session_read_bytes (session, "dir/nested.txt", run->cancellable, &local_error);
  if (!expect_success (&local_error, "reading a nested template file", error))
    return FALSE;
  if (!expect_bytes (nested, "nested\n", 7, "dir/nested.txt", error))
    return FALSE;

  other = new_session (run, error);
  if (other == NULL)
    return FALSE;
  other_state = sandbox_handle_capture_state (other, &local_error);
  if (!expect_success (&local_error, "capture_state() of a second session", error))
    return FALSE;
  if (g_strcmp0 (sandbox_state_get_session_id (state),
                 sandbox_state_get_session_id (other_state)) == 0)
    return CHECK_FAILED (error, "two new sessions got the same session id");
  return TRUE;
}

static gboolean
check_lease_exclusive (Run     *run,
                       GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxHandle) intruder = NULL;
  g_autoptr(SandboxState) state = NULL;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  state = sandbox_handle_capture_state (handle, &local_error);
  if (!expect_success (&local_error, "capture_state()", error))
    return FALSE;

  intruder = resume_session (run, state, &local_error);
  if (intruder != NULL)
    return CHECK_FAILED (error, "a second owner attached to a live session");
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                     "resuming a session that has a live owner", error))
    return FALSE;

  /* The first owner is unaffected. */
  g_clear_object (&state);
  state = sandbox_handle_capture_state (handle, &local_error);
  return expect_success (&local_error, "the owner's capture_state() after a refused attach", error);
}

static gboolean
check_lease_second_backend (Run     *run,
                            GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxHandle) intruder = NULL;
  g_autoptr(SandboxBackend) second = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autofree char *directory = NULL;
  GError *local_error = NULL;

  directory = sandbox_backend_dup_state_directory (run->backend);
  if (directory == NULL)
    {
      run->skip_reason = g_strdup ("the backend has no state directory to share");
      return TRUE;
    }

  second = new_backend (run->self, run->temporary_directory, 0, run->cancellable, &local_error);
  if (!expect_success (&local_error, "constructing a second backend over the same state directory",
                       error))
    return FALSE;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  state = sandbox_handle_capture_state (handle, &local_error);
  if (!expect_success (&local_error, "capture_state()", error))
    return FALSE;

  intruder = sandbox_backend_create (second, run->key, state, policy, run->cancellable,
                                     &local_error);
  if (intruder != NULL)
    return CHECK_FAILED (error, "another backend object attached to a live session");
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                     "resuming a live session through another backend object", error))
    return FALSE;

  /* Once the owner stops, the other backend may take over. */
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    return expect_success (&local_error, "stop()", error);
  intruder = sandbox_backend_create (second, run->key, state, policy, run->cancellable,
                                     &local_error);
  if (!expect_success (&local_error, "resuming through another backend after stop", error))
    return FALSE;
  discard_session (g_steal_pointer (&intruder));
  return TRUE;
}

static gboolean
expect_stopped (SandboxSession  *session,
                Run             *run,
                GError         **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxCommand) command = probe_command ("/usr/bin/cat", "conformance.txt");
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  g_autoptr(GBytes) read = NULL;
  g_autoptr(SandboxProcess) process = NULL;
  GError *local_error = NULL;

  read = sandbox_session_read_bytes (session, "conformance.txt", run->cancellable, &local_error);
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED, "read after stop", error))
    return FALSE;
  sandbox_session_write_bytes (session, "after-stop.txt", bytes, run->cancellable, &local_error);
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED, "write after stop", error))
    return FALSE;
  sandbox_session_remove_path (session, "conformance.txt", run->cancellable, &local_error);
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED, "remove after stop",
                     error))
    return FALSE;
  process = sandbox_session_spawn (session, command, run->cancellable, &local_error);
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED, "spawn after stop", error))
    return FALSE;
  sandbox_session_set_network_policy (session, policy, run->cancellable, &local_error);
  return expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                       "set_network_policy after stop", error);
}

static gboolean
check_lifecycle_stop (Run     *run,
                      GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxState) state = NULL;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  if (sandbox_handle_is_stopped (handle))
    return CHECK_FAILED (error, "a new handle says it is stopped");
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    return expect_success (&local_error, "stop()", error);
  if (!sandbox_handle_is_stopped (handle))
    return CHECK_FAILED (error, "is_stopped() is FALSE after stop()");
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    return expect_success (&local_error, "a second stop()", error);
  if (!sandbox_handle_shutdown (handle, run->cancellable, &local_error))
    return expect_success (&local_error, "shutdown() after stop()", error);

  state = sandbox_handle_capture_state (handle, &local_error);
  if (!expect_success (&local_error, "capture_state() after stop (the state is what resumes)",
                       error))
    return FALSE;

  return expect_stopped (sandbox_handle_get_session (handle), run, error);
}

static gboolean
check_lifecycle_resume (Run     *run,
                        GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxHandleDiscard) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) resumed_state = NULL;
  g_autofree char *text = NULL;
  g_autofree char *json = NULL;
  SandboxSession *session;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);
  sandbox_session_write_text (session, "kept/across-stop.txt", "kept", run->cancellable,
                              &local_error);
  if (!expect_success (&local_error, "write_text()", error))
    return FALSE;
  sandbox_session_remove_path (session, "dir", run->cancellable, &local_error);
  if (!expect_success (&local_error, "removing a template directory", error))
    return FALSE;
  state = sandbox_handle_capture_state (handle, &local_error);
  if (!expect_success (&local_error, "capture_state()", error))
    return FALSE;
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    return expect_success (&local_error, "stop()", error);

  /* What is persisted is the JSON; resume from a parsed copy. */
  json = sandbox_state_to_json (state);
  g_clear_object (&state);
  state = sandbox_state_new_from_json (json, &local_error);
  if (!expect_success (&local_error, "parsing the captured state's JSON", error))
    return FALSE;

  resumed = resume_session (run, state, &local_error);
  if (!expect_success (&local_error, "resume from the captured state after stop", error))
    return FALSE;
  session = sandbox_handle_get_session (resumed);
  text = sandbox_session_read_text (session, "kept/across-stop.txt", run->cancellable,
                                    &local_error);
  if (!expect_success (&local_error, "reading a file written before stop", error))
    return FALSE;
  if (g_strcmp0 (text, "kept") != 0)
    return CHECK_FAILED (error, "the workspace did not survive stop and resume");
  g_clear_pointer (&text, g_free);
  text = sandbox_session_read_text (session, "dir/nested.txt", run->cancellable, &local_error);
  if (text != NULL)
    return CHECK_FAILED (error, "a file removed before stop came back on resume");
  if (!expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                     "reading a file removed before stop", error))
    return FALSE;

  resumed_state = sandbox_handle_capture_state (resumed, &local_error);
  if (!expect_success (&local_error, "capture_state() of the resumed session", error))
    return FALSE;
  if (!sandbox_state_equal (state, resumed_state))
    return CHECK_FAILED (error, "the resumed session's state differs from the one it resumed");
  return TRUE;
}

static gboolean
check_lifecycle_delete (Run     *run,
                        GError **error)
{
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxHandleDiscard) fresh = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) after = NULL;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  state = sandbox_handle_capture_state (handle, &local_error);
  if (!expect_success (&local_error, "capture_state()", error))
    return FALSE;
  if (!sandbox_handle_delete (handle, run->cancellable, &local_error))
    return expect_success (&local_error, "delete() of a live session", error);
  if (!sandbox_handle_is_deleted (handle) || !sandbox_handle_is_stopped (handle))
    return CHECK_FAILED (error, "after delete() the handle is not both stopped and deleted");

  after = sandbox_handle_capture_state (handle, &local_error);
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STOPPED,
                     "capture_state() after delete", error))
    return FALSE;
  if (!sandbox_handle_delete (handle, run->cancellable, &local_error))
    return expect_success (&local_error, "a second delete() (a no-op)", error);
  if (!expect_stopped (sandbox_handle_get_session (handle), run, error))
    return FALSE;

  resumed = resume_session (run, state, &local_error);
  if (resumed != NULL)
    return CHECK_FAILED (error, "a deleted session could be resumed");
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                     "resuming a deleted session", error))
    return FALSE;

  /* Templates outlive the sessions made from them. */
  fresh = new_session (run, error);
  return fresh != NULL;
}

static gboolean
check_lease_old_handle_delete (Run     *run,
                               GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxHandleDiscard) owner = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autofree char *text = NULL;
  GError *local_error = NULL;

  handle = new_stopped_session (run, &state, error);
  if (handle == NULL)
    return FALSE;

  owner = resume_session (run, state, &local_error);
  if (!expect_success (&local_error, "resume after stop", error))
    return FALSE;

  sandbox_handle_delete (handle, run->cancellable, &local_error);
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                     "delete() by an older handle while a new owner holds the lease", error))
    return FALSE;

  text = sandbox_session_read_text (sandbox_handle_get_session (owner), "conformance.txt",
                                    run->cancellable, &local_error);
  if (!expect_success (&local_error, "the new owner's read after the refused delete", error))
    return FALSE;
  if (g_strcmp0 (text, hello) != 0)
    return CHECK_FAILED (error, "the refused delete changed the workspace");
  return TRUE;
}

static gboolean
check_state_mismatch_backend (Run     *run,
                              GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) foreign = NULL;
  g_autofree char *other_name = NULL;
  GError *local_error = NULL;

  handle = new_stopped_session (run, &state, error);
  if (handle == NULL)
    return FALSE;

  other_name = g_strconcat (run->name, "-other", NULL);
  foreign = sandbox_state_new (other_name, sandbox_state_get_session_id (state), run->key,
                               &local_error);
  if (!expect_success (&local_error, "sandbox_state_new()", error))
    return FALSE;
  resumed = resume_session (run, foreign, &local_error);
  if (resumed != NULL)
    return CHECK_FAILED (error, "a state naming another backend was accepted");
  return expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH,
                       "resuming a state that names another backend", error);
}

static gboolean
check_state_mismatch_template (Run     *run,
                               GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) forged = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  GError *local_error = NULL;

  handle = new_stopped_session (run, &state, error);
  if (handle == NULL)
    return FALSE;

  /* The state's template differs from the one asked for. */
  resumed = sandbox_backend_create (run->backend, run->other_key, state, policy,
                                    run->cancellable, &local_error);
  if (resumed != NULL)
    return CHECK_FAILED (error, "a state was resumed under another template key");
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH,
                     "resuming with a template key that differs from the state's", error))
    return FALSE;

  /* The state's session belongs to another template than the state says. */
  forged = sandbox_state_new (run->name, sandbox_state_get_session_id (state), run->other_key,
                              &local_error);
  if (!expect_success (&local_error, "sandbox_state_new()", error))
    return FALSE;
  resumed = sandbox_backend_create (run->backend, run->other_key, forged, policy,
                                    run->cancellable, &local_error);
  if (resumed != NULL)
    return CHECK_FAILED (error, "a session was resumed under a template it was not made from");
  return expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_STATE_MISMATCH,
                       "resuming a session with a state naming another template", error);
}

static gboolean
check_state_unknown_session (Run     *run,
                             GError **error)
{
  g_autoptr(SandboxHandle) resumed = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree char *nonce = g_strdup_printf ("%08x%08x", g_random_int (), g_random_int ());
  GError *local_error = NULL;

  g_checksum_update (checksum, (const guchar *) nonce, -1);
  state = sandbox_state_new (run->name, g_checksum_get_string (checksum), run->key,
                             &local_error);
  if (!expect_success (&local_error, "sandbox_state_new()", error))
    return FALSE;
  resumed = resume_session (run, state, &local_error);
  if (resumed != NULL)
    return CHECK_FAILED (error, "a session that never existed was resumed");
  return expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                       "resuming a session that never existed", error);
}

static gboolean
check_path_canonical (Run     *run,
                      GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_static ("canonical", 9);
  g_autoptr(GBytes) read = NULL;
  g_autoptr(GBytes) again = NULL;
  SandboxSession *session;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);

  sandbox_session_write_bytes (session, "paths/a.txt", bytes, run->cancellable, &local_error);
  if (!expect_success (&local_error, "write “paths/a.txt”", error))
    return FALSE;
  read = sandbox_session_read_bytes (session, "/workspace/paths/a.txt", run->cancellable,
                                     &local_error);
  if (!expect_success (&local_error, "read “/workspace/paths/a.txt”", error))
    return FALSE;
  if (!expect_bytes (read, "canonical", 9, "/workspace/paths/a.txt", error))
    return FALSE;
  sandbox_session_remove_path (session, "/workspace/paths/a.txt", run->cancellable, &local_error);
  if (!expect_success (&local_error, "remove “/workspace/paths/a.txt”", error))
    return FALSE;
  again = sandbox_session_read_bytes (session, "paths/a.txt", run->cancellable, &local_error);
  return expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                       "reading a removed file", error);
}

static gboolean
check_path_rejected (Run     *run,
                     GError **error)
{
  static const char * const bad[] = {
    "../escape", "a/../../escape", "/etc/passwd", "a\\b", "a//b", "./a", "a/./b", "a/",
    "", "/workspace/", "/workspace/../etc", "/workspace//a",
  };
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_static ("x", 1);
  SandboxSession *session;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);

  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GBytes) read = NULL;
      g_autofree char *what = NULL;

      what = g_strdup_printf ("read “%s”", bad[i]);
      read = sandbox_session_read_bytes (session, bad[i], run->cancellable, &local_error);
      if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, what, error))
        return FALSE;

      g_free (what);
      what = g_strdup_printf ("write “%s”", bad[i]);
      sandbox_session_write_bytes (session, bad[i], bytes, run->cancellable, &local_error);
      if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, what, error))
        return FALSE;

      g_free (what);
      what = g_strdup_printf ("remove “%s”", bad[i]);
      sandbox_session_remove_path (session, bad[i], run->cancellable, &local_error);
      if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, what, error))
        return FALSE;

      if (bad[i][0] != '\0')
        {
          g_autoptr(SandboxCommand) command = probe_command ("/usr/bin/cat", "conformance.txt");
          g_autoptr(SandboxProcess) process = NULL;

          sandbox_command_set_cwd (command, bad[i]);
          g_free (what);
          what = g_strdup_printf ("spawn with working directory “%s”", bad[i]);
          process = sandbox_session_spawn (session, command, run->cancellable, &local_error);
          if (process != NULL)
            sandbox_process_stop (process, NULL, NULL);
          if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, what, error))
            return FALSE;
        }
    }
  return TRUE;
}

static gboolean
check_path_root_removal (Run     *run,
                         GError **error)
{
  static const char * const roots[] = { "/workspace", "." };
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(GBytes) read = NULL;
  SandboxSession *session;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);

  for (gsize i = 0; i < G_N_ELEMENTS (roots); i++)
    {
      g_autofree char *what = g_strdup_printf ("remove “%s”", roots[i]);

      sandbox_session_remove_path (session, roots[i], run->cancellable, &local_error);
      if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_PATH, what, error))
        return FALSE;
    }

  read = sandbox_session_read_bytes (session, "conformance.txt", run->cancellable, &local_error);
  if (!expect_success (&local_error, "reading a file after the refused root removals", error))
    return FALSE;
  return expect_bytes (read, hello, strlen (hello), "conformance.txt", error);
}

static gboolean
check_files (Run     *run,
             GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(GBytes) bytes = g_bytes_new_static ("deep", 4);
  g_autoptr(GBytes) read = NULL;
  g_autoptr(GBytes) missing = NULL;
  SandboxSession *session;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);

  missing = sandbox_session_read_bytes (session, "no/such/file", run->cancellable, &local_error);
  if (!expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "reading a missing file",
                     error))
    return FALSE;
  sandbox_session_write_bytes (session, "new/parent/dirs/file.txt", bytes, run->cancellable,
                               &local_error);
  if (!expect_success (&local_error, "writing below parents that do not exist yet", error))
    return FALSE;
  read = sandbox_session_read_bytes (session, "new/parent/dirs/file.txt", run->cancellable,
                                     &local_error);
  if (!expect_success (&local_error, "reading it back", error))
    return FALSE;
  if (!expect_bytes (read, "deep", 4, "new/parent/dirs/file.txt", error))
    return FALSE;
  g_clear_pointer (&read, g_bytes_unref);

  /* Writing replaces the whole file. */
  sandbox_session_write_text (session, "conformance.txt", "short", run->cancellable,
                              &local_error);
  if (!expect_success (&local_error, "overwriting a file with shorter contents", error))
    return FALSE;
  read = sandbox_session_read_bytes (session, "conformance.txt", run->cancellable, &local_error);
  if (!expect_success (&local_error, "reading the overwritten file", error))
    return FALSE;
  if (!expect_bytes (read, "short", 5, "the overwritten file", error))
    return FALSE;

  sandbox_session_remove_path (session, "new", run->cancellable, &local_error);
  if (!expect_success (&local_error, "removing a directory tree", error))
    return FALSE;
  sandbox_session_remove_path (session, "new", run->cancellable, &local_error);
  return expect_success (&local_error, "removing a path that does not exist (like rm -rf)", error);
}

static gboolean
check_files_limit (Run     *run,
                   GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autofree guint8 *data = g_malloc (SANDBOX_MAX_FILE_BYTES + 1);
  g_autoptr(GBytes) largest = NULL;
  g_autoptr(GBytes) too_large = NULL;
  g_autoptr(GBytes) read = NULL;
  SandboxSession *session;
  GError *local_error = NULL;

  for (gsize i = 0; i <= SANDBOX_MAX_FILE_BYTES; i++)
    data[i] = (guint8) (i * 7 + 3);
  largest = g_bytes_new (data, SANDBOX_MAX_FILE_BYTES);
  too_large = g_bytes_new (data, SANDBOX_MAX_FILE_BYTES + 1);

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);

  sandbox_session_write_bytes (session, "large.bin", largest, run->cancellable, &local_error);
  if (!expect_success (&local_error, "writing exactly 1 MiB", error))
    return FALSE;
  read = sandbox_session_read_bytes (session, "large.bin", run->cancellable, &local_error);
  if (!expect_success (&local_error, "reading exactly 1 MiB", error))
    return FALSE;
  if (!expect_bytes (read, data, SANDBOX_MAX_FILE_BYTES, "the 1 MiB file", error))
    return FALSE;
  sandbox_session_write_bytes (session, "larger.bin", too_large, run->cancellable, &local_error);
  return expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                       "writing 1 MiB + 1 byte", error);
}

static gboolean
check_text (Run     *run,
            GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(GBytes) bom = g_bytes_new_static ("\xEF\xBB\xBFhi", 5);
  g_autoptr(GBytes) invalid = g_bytes_new_static ("ok\xFFno", 5);
  g_autoptr(GBytes) utf8 = NULL;
  g_autofree char *text = NULL;
  g_autofree char *bad = NULL;
  SandboxSession *session;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);

  sandbox_session_write_bytes (session, "bom.txt", bom, run->cancellable, &local_error);
  if (!expect_success (&local_error, "write bom.txt", error))
    return FALSE;
  text = sandbox_session_read_text (session, "bom.txt", run->cancellable, &local_error);
  if (!expect_success (&local_error, "read_text of a file with a BOM", error))
    return FALSE;
  if (g_strcmp0 (text, "hi") != 0)
    return CHECK_FAILED (error, "read_text kept the BOM or changed the text");

  sandbox_session_write_bytes (session, "invalid.txt", invalid, run->cancellable, &local_error);
  if (!expect_success (&local_error, "write invalid.txt", error))
    return FALSE;
  bad = sandbox_session_read_text (session, "invalid.txt", run->cancellable, &local_error);
  if (bad != NULL)
    return CHECK_FAILED (error, "read_text accepted invalid UTF-8");
  if (!expect_error (&local_error, G_CONVERT_ERROR, G_CONVERT_ERROR_ILLEGAL_SEQUENCE,
                     "read_text of invalid UTF-8", error))
    return FALSE;

  sandbox_session_write_text (session, "utf8.txt", "h\xC3\xA9llo \xE2\x9C\x93", run->cancellable,
                              &local_error);
  if (!expect_success (&local_error, "write_text of non-ASCII text", error))
    return FALSE;
  utf8 = sandbox_session_read_bytes (session, "utf8.txt", run->cancellable, &local_error);
  if (!expect_success (&local_error, "read it back as bytes", error))
    return FALSE;
  return expect_bytes (utf8, "h\xC3\xA9llo \xE2\x9C\x93", 10, "the UTF-8 encoding", error);
}

/* A policy is either enforced or refused as UNAVAILABLE, never anything else. */
static gboolean
expect_enforced_or_unavailable (SandboxSession        *session,
                                SandboxNetworkPolicy  *policy,
                                const char            *what,
                                Run                   *run,
                                GError               **error)
{
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  GError *local_error = NULL;

  if (sandbox_session_set_network_policy (session, policy, run->cancellable, &local_error))
    {
      sandbox_session_set_network_policy (session, deny, run->cancellable, &local_error);
      return expect_success (&local_error, "returning to deny-all", error);
    }
  return expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, what, error);
}

static gboolean
check_network_policies (Run     *run,
                        GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxNetworkPolicy) allow_all = sandbox_network_policy_new_allow_all ();
  g_autoptr(SandboxNetworkPolicy) allow_list = NULL;
  g_autoptr(SandboxHandle) created = NULL;
  SandboxSession *session;
  GError *local_error = NULL;

  allow_list = sandbox_network_policy_new_from_json (
    "{\"allow\":[{\"origin\":\"http://127.0.0.1:9/\",\"headers\":{\"x-conformance\":\"1\"}}]}",
    &local_error);
  if (!expect_success (&local_error, "building an allow-list policy", error))
    return FALSE;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);

  sandbox_session_set_network_policy (session, deny, run->cancellable, &local_error);
  if (!expect_success (&local_error, "setting deny-all with no live commands", error))
    return FALSE;
  if (!expect_enforced_or_unavailable (session, allow_all, "set allow-all", run, error))
    return FALSE;
  if (!expect_enforced_or_unavailable (session, allow_list, "set an allow-list", run, error))
    return FALSE;

  created = sandbox_backend_create (run->backend, run->key, NULL, allow_list, run->cancellable,
                                    &local_error);
  if (created != NULL)
    {
      discard_session (g_steal_pointer (&created));
      return TRUE;
    }
  return expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                       "create with an allow-list", error);
}

static gboolean
check_commands_refused (Run     *run,
                        GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) command = probe_command ("/usr/bin/cat", "conformance.txt");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  GError *local_error = NULL;

  if (claims_commands (run))
    {
      run->skip_reason = g_strdup ("the driver claims to run commands");
      return TRUE;
    }

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  process = sandbox_session_spawn (sandbox_handle_get_session (handle), command,
                                   run->cancellable, &local_error);
  if (process != NULL)
    return CHECK_FAILED (error, "a driver that claims no commands started one");
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, "spawn", error))
    return FALSE;
  result = sandbox_session_run (sandbox_handle_get_session (handle), command, run->cancellable,
                                &local_error);
  return expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, "run", error);
}

static gboolean
check_command_run (Run     *run,
                   GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) cat = probe_command ("/usr/bin/cat", "conformance.txt");
  g_autoptr(SandboxCommand) false_ = probe_command ("/usr/bin/false", NULL);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(SandboxResult) failed = NULL;
  g_autofree char *text = NULL;
  SandboxSession *session;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);

  sandbox_session_write_text (session, "conformance.txt", "written by the host\n",
                              run->cancellable, &local_error);
  if (!expect_success (&local_error, "write_text", error))
    return FALSE;
  result = sandbox_session_run (session, cat, run->cancellable, &local_error);
  if (!expect_success (&local_error, "run /usr/bin/cat conformance.txt", error))
    return FALSE;
  if (sandbox_result_get_exit_status (result) != 0)
    return CHECK_FAILED (error, "/usr/bin/cat exited with %d",
                         sandbox_result_get_exit_status (result));
  text = sandbox_result_dup_stdout_text (result);
  if (g_strcmp0 (text, "written by the host\n") != 0)
    return CHECK_FAILED (error, "the command did not see the file the host wrote (stdout “%s”)",
                         text);

  failed = sandbox_session_run (session, false_, run->cancellable, &local_error);
  if (!expect_success (&local_error, "run /usr/bin/false", error))
    return FALSE;
  if (sandbox_result_get_exit_status (failed) != 1)
    return CHECK_FAILED (error, "/usr/bin/false exited with %d, expected 1",
                         sandbox_result_get_exit_status (failed));
  return TRUE;
}

static gboolean
check_command_stdin (Run     *run,
                     GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) cat = probe_command ("/usr/bin/cat", NULL);
  g_autoptr(GBytes) input = g_bytes_new_static ("from stdin\n", 11);
  g_autoptr(SandboxResult) result = NULL;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  sandbox_command_set_stdin (cat, input);
  result = sandbox_session_run (sandbox_handle_get_session (handle), cat, run->cancellable,
                                &local_error);
  if (!expect_success (&local_error, "run /usr/bin/cat with stdin", error))
    return FALSE;
  return expect_bytes (sandbox_result_get_stdout_bytes (result), "from stdin\n", 11,
                       "stdout of cat with stdin", error);
}

static void
collect_output (SandboxProcess *process,
                GBytes         *data,
                GByteArray     *collected)
{
  gsize size = 0;
  const guint8 *bytes = g_bytes_get_data (data, &size);

  g_byte_array_append (collected, bytes, size);
}

static gboolean
check_command_live_output (Run     *run,
                           GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) cat = probe_command ("/usr/bin/cat", "conformance.txt");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GByteArray) collected = g_byte_array_new ();
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  process = sandbox_session_spawn (sandbox_handle_get_session (handle), cat, run->cancellable,
                                   &local_error);
  if (!expect_success (&local_error, "spawn /usr/bin/cat conformance.txt", error))
    return FALSE;
  g_signal_connect (process, "stdout-data", G_CALLBACK (collect_output), collected);
  result = sandbox_process_wait (process, run->cancellable, &local_error);
  g_signal_handlers_disconnect_by_func (process, collect_output, collected);
  if (!expect_success (&local_error, "wait", error))
    return FALSE;
  if (!expect_bytes (sandbox_result_get_stdout_bytes (result), hello, strlen (hello),
                     "the result's stdout", error))
    return FALSE;
  /* Output that arrived before the handler was connected is not replayed, so
   * what the signal saw must be a suffix of the result. */
  if (collected->len > strlen (hello)
      || memcmp (collected->data, hello + strlen (hello) - collected->len, collected->len) != 0)
    return CHECK_FAILED (error, "stdout-data delivered bytes that are not the command's output");
  return TRUE;
}

static gboolean
check_command_invalid_utf8 (Run     *run,
                            GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) printf_ = probe_command ("/usr/bin/printf", "\\377");
  g_autoptr(SandboxResult) result = NULL;
  g_autofree char *text = NULL;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  result = sandbox_session_run (sandbox_handle_get_session (handle), printf_, run->cancellable,
                                &local_error);
  if (!expect_success (&local_error, "run /usr/bin/printf \\377", error))
    return FALSE;
  if (!expect_bytes (sandbox_result_get_stdout_bytes (result), "\xFF", 1,
                     "the raw stdout bytes", error))
    return FALSE;
  text = sandbox_result_dup_stdout_text (result);
  if (g_strcmp0 (text, "\xEF\xBF\xBD") != 0)
    return CHECK_FAILED (error, "invalid UTF-8 output was not replaced with U+FFFD");
  return TRUE;
}

static gboolean
check_command_cancel (Run     *run,
                      GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) sleep_ = probe_command ("/usr/bin/sleep", "30");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  gint64 start;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  process = sandbox_session_spawn (sandbox_handle_get_session (handle), sleep_, cancellable,
                                   &local_error);
  if (!expect_success (&local_error, "spawn /usr/bin/sleep 30", error))
    return FALSE;
  start = g_get_monotonic_time ();
  g_cancellable_cancel (cancellable);
  result = sandbox_process_wait (process, run->cancellable, &local_error);
  if (!expect_error (&local_error, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                     "waiting for a command whose spawn was cancelled", error))
    return FALSE;
  if (g_get_monotonic_time () - start > SLOW_BOUND_US)
    return CHECK_FAILED (error, "cancellation took more than 15 s");
  if (!sandbox_process_is_finished (process))
    return CHECK_FAILED (error, "the cancelled process is not finished");
  return TRUE;
}

static gboolean
check_limits_deadline (Run     *run,
                       GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) sleep_ = probe_command ("/usr/bin/sleep", "30");
  g_autoptr(SandboxResult) result = NULL;
  gint64 start;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  sandbox_command_set_timeout_ms (sleep_, DEADLINE_TEST_MS);
  start = g_get_monotonic_time ();
  result = sandbox_session_run (sandbox_handle_get_session (handle), sleep_, run->cancellable,
                                &local_error);
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                     "run /usr/bin/sleep 30 with a 300 ms deadline", error))
    return FALSE;
  if (g_get_monotonic_time () - start > SLOW_BOUND_US)
    return CHECK_FAILED (error, "the deadline took more than 15 s to fire");
  return TRUE;
}

static gboolean
check_limits_output (Run     *run,
                     GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) yes = probe_command ("/usr/bin/yes", NULL);
  g_autoptr(SandboxResult) result = NULL;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  sandbox_command_set_max_output_bytes (yes, 4096);
  sandbox_command_set_timeout_ms (yes, 10000);
  result = sandbox_session_run (sandbox_handle_get_session (handle), yes, run->cancellable,
                                &local_error);
  return expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                       "run /usr/bin/yes with a 4096-byte output cap", error);
}

static gboolean
stop_all (GPtrArray *processes)
{
  for (guint i = 0; i < processes->len; i++)
    sandbox_process_stop (g_ptr_array_index (processes, i), NULL, NULL);
  return TRUE;
}

static gboolean
check_admission (Run     *run,
                 GError **error)
{
  g_autoptr(SandboxBackend) limited = NULL;
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GPtrArray) processes = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(SandboxProcess) refused = NULL;
  g_autoptr(SandboxProcess) admitted = NULL;
  g_autoptr(SandboxCommand) sleep_ = probe_command ("/usr/bin/sleep", "30");
  SandboxSession *session;
  GError *local_error = NULL;
  const guint limit = 2;

  limited = new_backend (run->self, run->temporary_directory, limit, run->cancellable,
                         &local_error);
  if (!expect_success (&local_error, "constructing a backend with max-concurrent-commands 2",
                       error))
    return FALSE;
  if (sandbox_backend_get_max_concurrent_commands (limited) != limit)
    return CHECK_FAILED (error, "max-concurrent-commands was not applied");
  handle = sandbox_backend_create (limited, run->key, NULL, policy, run->cancellable,
                                   &local_error);
  if (!expect_success (&local_error, "create", error))
    return FALSE;
  session = sandbox_handle_get_session (handle);

  for (guint i = 0; i < limit; i++)
    {
      SandboxProcess *process = sandbox_session_spawn (session, sleep_, run->cancellable,
                                                       &local_error);

      if (!expect_success (&local_error, "spawning up to the admission limit", error))
        return stop_all (processes) && FALSE;
      g_ptr_array_add (processes, process);
    }

  refused = sandbox_session_spawn (session, sleep_, run->cancellable, &local_error);
  if (refused != NULL)
    sandbox_process_stop (refused, NULL, NULL);
  if (!expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                     "spawning past max-concurrent-commands", error))
    return stop_all (processes) && FALSE;

  /* A stopped command gives its slot back. */
  sandbox_process_stop (g_ptr_array_index (processes, 0), run->cancellable, &local_error);
  if (!expect_success (&local_error, "stopping a command", error))
    return stop_all (processes) && FALSE;
  admitted = sandbox_session_spawn (session, sleep_, run->cancellable, &local_error);
  if (admitted != NULL)
    g_ptr_array_add (processes, g_object_ref (admitted));
  stop_all (processes);
  return expect_success (&local_error, "spawning after a stopped command freed its slot", error);
}

static gboolean
check_network_policy_busy (Run     *run,
                           GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) sleep_ = probe_command ("/usr/bin/sleep", "30");
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxProcess) process = NULL;
  SandboxSession *session;
  GError *local_error = NULL;
  gboolean ok;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  session = sandbox_handle_get_session (handle);
  process = sandbox_session_spawn (session, sleep_, run->cancellable, &local_error);
  if (!expect_success (&local_error, "spawn /usr/bin/sleep 30", error))
    return FALSE;
  sandbox_session_set_network_policy (session, deny, run->cancellable, &local_error);
  ok = expect_error (&local_error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY,
                     "changing the network policy while a command is live", error);
  sandbox_process_stop (process, NULL, NULL);
  if (!ok)
    return FALSE;

  sandbox_session_set_network_policy (session, deny, run->cancellable, &local_error);
  return expect_success (&local_error, "changing the policy once the command is stopped", error);
}

static gboolean
check_lifecycle_stop_kills (Run     *run,
                            GError **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxCommand) sleep_ = probe_command ("/usr/bin/sleep", "30");
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) ignored = NULL;
  gint64 start;
  GError *local_error = NULL;

  handle = new_session (run, error);
  if (handle == NULL)
    return FALSE;
  process = sandbox_session_spawn (sandbox_handle_get_session (handle), sleep_, run->cancellable,
                                   &local_error);
  if (!expect_success (&local_error, "spawn /usr/bin/sleep 30", error))
    return FALSE;
  start = g_get_monotonic_time ();
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    return expect_success (&local_error, "stop() with a live command", error);
  /* Killed is killed: a result with a signal status or an error both do. */
  result = sandbox_process_wait (process, run->cancellable, &ignored);
  if (g_get_monotonic_time () - start > SLOW_BOUND_US)
    return CHECK_FAILED (error, "stop() took more than 15 s to end a live command");
  if (!sandbox_process_is_finished (process))
    return CHECK_FAILED (error, "a command outlived stop()");
  if (result != NULL && sandbox_result_get_exit_status (result) == 0)
    return CHECK_FAILED (error, "a command killed by stop() reported success");
  return TRUE;
}

typedef gboolean (*CheckFunc) (Run     *run,
                               GError **error);

typedef struct
{
  const char *name;
  CheckFunc   func;
  gboolean    runs_commands;
} Check;

static const Check checks[] = {
  { "backend/properties", check_backend_properties, FALSE },
  { "prewarm/content-addressed-key", check_prewarm_content_address, FALSE },
  { "prewarm/reused-on-repeat", check_prewarm_reused, FALSE },
  { "prewarm/order-independent-content-sensitive", check_prewarm_order_and_content, FALSE },
  { "create/unknown-template-not-found", check_create_unknown_template, FALSE },
  { "create/fresh-session", check_create_fresh, FALSE },
  { "lease/exclusive", check_lease_exclusive, FALSE },
  { "lease/shared-state-directory", check_lease_second_backend, FALSE },
  { "lease/old-handle-delete-busy", check_lease_old_handle_delete, FALSE },
  { "lifecycle/stop", check_lifecycle_stop, FALSE },
  { "lifecycle/resume", check_lifecycle_resume, FALSE },
  { "lifecycle/delete", check_lifecycle_delete, FALSE },
  { "state/mismatch-backend", check_state_mismatch_backend, FALSE },
  { "state/mismatch-template", check_state_mismatch_template, FALSE },
  { "state/unknown-session-not-found", check_state_unknown_session, FALSE },
  { "path/canonical-forms", check_path_canonical, FALSE },
  { "path/rejected", check_path_rejected, FALSE },
  { "path/root-removal-refused", check_path_root_removal, FALSE },
  { "files/semantics", check_files, FALSE },
  { "files/limit", check_files_limit, FALSE },
  { "text/read-text", check_text, FALSE },
  { "network/policies-enforced-or-refused", check_network_policies, FALSE },
  { "command/refused-without-commands", check_commands_refused, FALSE },
  { "command/run", check_command_run, TRUE },
  { "command/stdin", check_command_stdin, TRUE },
  { "command/live-output", check_command_live_output, TRUE },
  { "command/invalid-utf8-replaced", check_command_invalid_utf8, TRUE },
  { "command/cancel", check_command_cancel, TRUE },
  { "limits/deadline", check_limits_deadline, TRUE },
  { "limits/output", check_limits_output, TRUE },
  { "admission/busy", check_admission, TRUE },
  { "network/policy-change-busy", check_network_policy_busy, TRUE },
  { "lifecycle/stop-kills-commands", check_lifecycle_stop_kills, TRUE },
};

/* ------------------------------------------------------------------------ */
/* The object                                                                */
/* ------------------------------------------------------------------------ */

static void
clear_value (gpointer data)
{
  g_value_unset (data);
}

static void
sandbox_conformance_finalize (GObject *object)
{
  SandboxConformance *self = SANDBOX_CONFORMANCE (object);

  g_clear_pointer (&self->driver, g_free);
  g_clear_pointer (&self->property_names, g_ptr_array_unref);
  g_clear_pointer (&self->property_values, g_array_unref);

  G_OBJECT_CLASS (sandbox_conformance_parent_class)->finalize (object);
}

static void
sandbox_conformance_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  SandboxConformance *self = SANDBOX_CONFORMANCE (object);

  switch (prop_id)
    {
    case PROP_DRIVER:
      g_value_set_string (value, self->driver);
      break;
    case PROP_FLAGS:
      g_value_set_flags (value, self->flags);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_conformance_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  SandboxConformance *self = SANDBOX_CONFORMANCE (object);

  switch (prop_id)
    {
    case PROP_DRIVER:
      self->driver = g_value_dup_string (value);
      break;
    case PROP_FLAGS:
      self->flags = g_value_get_flags (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_conformance_class_init (SandboxConformanceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_conformance_finalize;
  object_class->get_property = sandbox_conformance_get_property;
  object_class->set_property = sandbox_conformance_set_property;

  /**
   * SandboxConformance:driver:
   *
   * The name of the driver under test, as sandbox_backend_new() takes it.
   */
  properties[PROP_DRIVER] =
    g_param_spec_string ("driver", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxConformance:flags:
   *
   * What the driver claims; see #SandboxConformanceFlags.
   */
  properties[PROP_FLAGS] =
    g_param_spec_flags ("flags", NULL, NULL, SANDBOX_TYPE_CONFORMANCE_FLAGS,
                        SANDBOX_CONFORMANCE_FLAGS_NONE,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SandboxConformance::check-finished:
   * @self: the suite
   * @number: the check's number, from 1, as in TAP
   * @name: the check's name, such as `lease/exclusive`
   * @outcome: whether the backend kept the contract
   * @detail: (nullable): what went wrong, or why the check was skipped
   *
   * Emitted after each check, in the thread that called
   * sandbox_conformance_run().
   */
  signals[SIGNAL_CHECK_FINISHED] =
    g_signal_new ("check-finished",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 4,
                  G_TYPE_UINT,
                  G_TYPE_STRING,
                  SANDBOX_TYPE_CONFORMANCE_OUTCOME,
                  G_TYPE_STRING);
}

static void
sandbox_conformance_init (SandboxConformance *self)
{
  self->property_names = g_ptr_array_new_with_free_func (g_free);
  self->property_values = g_array_new (FALSE, TRUE, sizeof (GValue));
  g_array_set_clear_func (self->property_values, clear_value);
}

/**
 * sandbox_conformance_new:
 * @driver: the name of the driver under test
 * @flags: what the driver claims
 *
 * Creates the conformance suite for @driver. Nothing is loaded until
 * sandbox_conformance_run().
 *
 * Returns: (transfer full): a new #SandboxConformance
 */
SandboxConformance *
sandbox_conformance_new (const char              *driver,
                         SandboxConformanceFlags  flags)
{
  g_return_val_if_fail (driver != NULL, NULL);

  return g_object_new (SANDBOX_TYPE_CONFORMANCE, "driver", driver, "flags", flags, NULL);
}

/**
 * sandbox_conformance_get_driver:
 * @self: a #SandboxConformance
 *
 * Gets the name of the driver the suite checks.
 *
 * Returns: the name of the driver under test
 */
const char *
sandbox_conformance_get_driver (SandboxConformance *self)
{
  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), NULL);

  return self->driver;
}

/**
 * sandbox_conformance_get_flags:
 * @self: a #SandboxConformance
 *
 * Gets what the driver claims, which decides the checks that apply.
 *
 * Returns: what the driver claims
 */
SandboxConformanceFlags
sandbox_conformance_get_flags (SandboxConformance *self)
{
  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), SANDBOX_CONFORMANCE_FLAGS_NONE);

  return self->flags;
}

/**
 * sandbox_conformance_set_backend_property:
 * @self: a #SandboxConformance
 * @name: a construct property of the driver's backend
 * @value: its value
 *
 * Sets a property every backend the suite constructs gets, such as a
 * memory driver's `script-file` or a bubblewrap backend's `executable`.
 * Setting a property again replaces its value. Without `state-directory` the
 * suite makes a temporary one for each run.
 */
void
sandbox_conformance_set_backend_property (SandboxConformance *self,
                                          const char         *name,
                                          const GValue       *value)
{
  GValue copy = G_VALUE_INIT;

  g_return_if_fail (SANDBOX_IS_CONFORMANCE (self));
  g_return_if_fail (name != NULL);
  g_return_if_fail (G_IS_VALUE (value));

  g_value_init (&copy, G_VALUE_TYPE (value));
  g_value_copy (value, &copy);

  for (guint i = 0; i < self->property_names->len; i++)
    if (g_str_equal (g_ptr_array_index (self->property_names, i), name))
      {
        GValue *slot = &g_array_index (self->property_values, GValue, i);

        g_value_unset (slot);
        *slot = copy;
        return;
      }

  g_ptr_array_add (self->property_names, g_strdup (name));
  g_array_append_vals (self->property_values, &copy, 1);
}

/**
 * sandbox_conformance_parse_backend_property:
 * @self: a #SandboxConformance
 * @assignment: `KEY=VALUE`
 *
 * Sets a backend property from text, converted to the type the driver's
 * backend declares for it: strings as they are, numbers in decimal, booleans
 * as `true` or `false`, string lists separated by commas. This loads the
 * driver modules.
 *
 * Returns: %TRUE on success; %SANDBOX_ERROR_UNAVAILABLE for an unknown
 *   driver, %SANDBOX_ERROR_INVALID for an unknown property or a value of the
 *   wrong form
 */
gboolean
sandbox_conformance_parse_backend_property (SandboxConformance  *self,
                                            const char          *assignment,
                                            GError             **error)
{
  g_auto(GValue) value = G_VALUE_INIT;
  g_autofree char *key = NULL;
  g_autoptr(GTypeClass) klass = NULL;
  GParamSpec *pspec;
  const char *equals;
  const char *text;
  GType type;

  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), FALSE);
  g_return_val_if_fail (assignment != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  equals = strchr (assignment, '=');
  if (equals == NULL || equals == assignment)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Expected KEY=VALUE, got “%s”", assignment);
      return FALSE;
    }
  key = g_strndup (assignment, equals - assignment);
  text = equals + 1;

  type = lookup_backend_type (self->driver, error);
  if (type == G_TYPE_INVALID)
    return FALSE;
  klass = g_type_class_ref (type);
  pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), key);
  if (pspec == NULL || (pspec->flags & G_PARAM_WRITABLE) == 0)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "The %s driver's backend has no writable property “%s”", self->driver, key);
      return FALSE;
    }

  g_value_init (&value, pspec->value_type);
  if (pspec->value_type == G_TYPE_STRING)
    g_value_set_string (&value, text);
  else if (pspec->value_type == G_TYPE_STRV)
    {
      g_auto(GStrv) parts = g_strsplit (text, ",", -1);

      g_value_set_boxed (&value, parts);
    }
  else if (pspec->value_type == G_TYPE_BOOLEAN)
    {
      if (g_str_equal (text, "true"))
        g_value_set_boolean (&value, TRUE);
      else if (g_str_equal (text, "false"))
        g_value_set_boolean (&value, FALSE);
      else
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property “%s” expects true or false, got “%s”", key, text);
          return FALSE;
        }
    }
  else if (pspec->value_type == G_TYPE_UINT || pspec->value_type == G_TYPE_UINT64
           || pspec->value_type == G_TYPE_ULONG)
    {
      guint64 number = 0;
      GError *local_error = NULL;

      if (!g_ascii_string_to_unsigned (text, 10, 0, pspec->value_type == G_TYPE_UINT ? G_MAXUINT
                                                                             : G_MAXUINT64,
                                       &number, &local_error))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property “%s”: %s", key, local_error->message);
          g_error_free (local_error);
          return FALSE;
        }
      if (pspec->value_type == G_TYPE_UINT)
        g_value_set_uint (&value, (guint) number);
      else if (pspec->value_type == G_TYPE_ULONG)
        g_value_set_ulong (&value, (gulong) number);
      else
        g_value_set_uint64 (&value, number);
    }
  else if (pspec->value_type == G_TYPE_INT || pspec->value_type == G_TYPE_INT64)
    {
      gint64 number = 0;
      GError *local_error = NULL;

      if (!g_ascii_string_to_signed (text, 10, pspec->value_type == G_TYPE_INT ? G_MININT
                                                                              : G_MININT64,
                                     pspec->value_type == G_TYPE_INT ? G_MAXINT : G_MAXINT64,
                                     &number, &local_error))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Property “%s”: %s", key, local_error->message);
          g_error_free (local_error);
          return FALSE;
        }
      if (pspec->value_type == G_TYPE_INT)
        g_value_set_int (&value, (int) number);
      else
        g_value_set_int64 (&value, number);
    }
  else
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Property “%s” has type %s, which can't be given as text", key,
                   g_type_name (pspec->value_type));
      return FALSE;
    }

  if (g_param_value_validate (pspec, &value))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "Value “%s” is out of range for property “%s”", text, key);
      return FALSE;
    }

  sandbox_conformance_set_backend_property (self, key, &value);
  return TRUE;
}

/**
 * sandbox_conformance_list_checks:
 *
 * Lists the checks sandbox_conformance_run() performs, in order; their
 * numbers in TAP are their positions from 1.
 *
 * Returns: (transfer full) (array zero-terminated=1): the check names
 */
char **
sandbox_conformance_list_checks (void)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  for (gsize i = 0; i < G_N_ELEMENTS (checks); i++)
    g_strv_builder_add (builder, checks[i].name);
  return g_strv_builder_end (builder);
}

static int
remove_entry (const char        *path,
              const struct stat *st,
              int                type,
              struct FTW        *ftw)
{
  if (remove (path) != 0)
    g_warning ("Could not remove %s: %s", path, g_strerror (errno));
  return 0;
}

static gboolean
write_tap (GOutputStream  *tap_output,
           GCancellable   *cancellable,
           GError        **error,
           const char     *format,
           ...) G_GNUC_PRINTF (4, 5);

static gboolean
write_tap (GOutputStream  *tap_output,
           GCancellable   *cancellable,
           GError        **error,
           const char     *format,
           ...)
{
  g_autofree char *text = NULL;
  va_list args;

  if (tap_output == NULL)
    return TRUE;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);

  return g_output_stream_write_all (tap_output, text, strlen (text), NULL, cancellable, error)
         && g_output_stream_flush (tap_output, cancellable, error);
}

/* Each line of @detail becomes a TAP diagnostic. */
static char *
tap_diagnostic (const char *detail)
{
  g_auto(GStrv) lines = g_strsplit (detail, "\n", -1);
  GString *out = g_string_new (NULL);

  for (guint i = 0; lines[i] != NULL; i++)
    g_string_append_printf (out, "# %s\n", lines[i]);
  return g_string_free (out, FALSE);
}

static gboolean
prepare_run (Run      *run,
             GError  **error)
{
  SandboxConformance *self = run->self;
  g_autoptr(SandboxTemplate) template_ = make_template ("conformance", FALSE, NULL);
  g_autoptr(SandboxTemplate) other = make_template ("conformance", FALSE, "other");
  gboolean wants_directory = TRUE;

  for (guint i = 0; i < self->property_names->len; i++)
    if (g_str_equal (g_ptr_array_index (self->property_names, i), "state-directory"))
      wants_directory = FALSE;

  if (wants_directory)
    {
      g_autoptr(GTypeClass) klass = NULL;
      GType type = lookup_backend_type (self->driver, error);

      if (type == G_TYPE_INVALID)
        return FALSE;
      /* Only drivers with a state-directory property get one. */
      klass = g_type_class_ref (type);
      if (g_object_class_find_property (G_OBJECT_CLASS (klass), "state-directory") != NULL)
        {
          run->temporary_directory = g_dir_make_tmp ("sandbox-conformance-XXXXXX", error);
          if (run->temporary_directory == NULL)
            return FALSE;
        }
    }

  run->backend = new_backend (self, run->temporary_directory, 0, run->cancellable, error);
  if (run->backend == NULL)
    return FALSE;
  run->name = g_strdup (sandbox_backend_get_name (run->backend));
  run->key = sandbox_backend_prewarm (run->backend, template_, NULL, run->cancellable, error);
  if (run->key == NULL)
    return FALSE;
  run->other_key = sandbox_backend_prewarm (run->backend, other, NULL, run->cancellable, error);
  return run->other_key != NULL;
}

static void
finish_run (Run *run)
{
  g_clear_object (&run->backend);
  if (run->temporary_directory != NULL)
    nftw (run->temporary_directory, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  g_clear_pointer (&run->temporary_directory, g_free);
  g_clear_pointer (&run->name, g_free);
  g_clear_pointer (&run->key, g_free);
  g_clear_pointer (&run->other_key, g_free);
  g_clear_pointer (&run->skip_reason, g_free);
}

/**
 * sandbox_conformance_run:
 * @self: a #SandboxConformance
 * @tap_output: (nullable): where to write the results as TAP (version 13
 *   compatible: a plan, one `ok`/`not ok` line per check, diagnostics as
 *   `#` lines, skips as `# SKIP`)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs every check against fresh backends of the driver, in the calling
 * thread, blocking. Each result is emitted as
 * #SandboxConformance::check-finished and counted (see
 * sandbox_conformance_get_n_failed()). A check that fails does not stop the
 * run.
 *
 * The suite's setup — constructing a backend and prewarming its templates —
 * must succeed for any check to run; when it does not, this returns %FALSE
 * with that error (and writes `Bail out!` to @tap_output).
 *
 * Returns: %TRUE when every check ran (whatever the results), %FALSE with
 *   @error set when the suite could not run
 */
gboolean
sandbox_conformance_run (SandboxConformance  *self,
                         GOutputStream       *tap_output,
                         GCancellable        *cancellable,
                         GError             **error)
{
  Run run = { self, cancellable, NULL, NULL, NULL, NULL, NULL, NULL };
  g_autoptr(GError) setup_error = NULL;
  gboolean ok = TRUE;

  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), FALSE);
  g_return_val_if_fail (tap_output == NULL || G_IS_OUTPUT_STREAM (tap_output), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  self->n_passed = self->n_failed = self->n_skipped = 0;

  if (!write_tap (tap_output, cancellable, error, "TAP version 13\n# sandbox-conformance %s\n",
                  self->driver))
    return FALSE;

  if (!prepare_run (&run, &setup_error))
    {
      g_autofree char *described = describe_error (setup_error);

      write_tap (tap_output, cancellable, NULL, "Bail out! %s driver: %s\n", self->driver,
                 described);
      g_prefix_error (&setup_error, "Conformance suite for the %s driver could not start: ",
                      self->driver);
      finish_run (&run);
      g_propagate_error (error, g_steal_pointer (&setup_error));
      return FALSE;
    }

  if (!write_tap (tap_output, cancellable, error, "1..%u\n", (guint) G_N_ELEMENTS (checks)))
    {
      finish_run (&run);
      return FALSE;
    }

  for (gsize i = 0; i < G_N_ELEMENTS (checks); i++)
    {
      const Check *check = &checks[i];
      g_autoptr(GError) failure = NULL;
      SandboxConformanceOutcome outcome;
      g_autofree char *detail = NULL;
      g_autofree char *diagnostic = NULL;
      guint number = i + 1;

      g_clear_pointer (&run.skip_reason, g_free);

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          ok = FALSE;
          break;
        }

      if (check->runs_commands && !claims_commands (&run))
        run.skip_reason = g_strdup ("the driver claims no commands (no-commands)");
      else if (!check->func (&run, &failure) && failure == NULL)
        g_set_error_literal (&failure, G_IO_ERROR, G_IO_ERROR_FAILED,
                             "the check failed without saying why");

      if (failure != NULL)
        {
          outcome = SANDBOX_CONFORMANCE_OUTCOME_FAIL;
          detail = g_strdup (failure->message);
          self->n_failed++;
          diagnostic = tap_diagnostic (detail);
          ok = write_tap (tap_output, cancellable, error, "not ok %u - %s\n%s", number,
                          check->name, diagnostic);
        }
      else if (run.skip_reason != NULL)
        {
          outcome = SANDBOX_CONFORMANCE_OUTCOME_SKIP;
          detail = g_strdup (run.skip_reason);
          self->n_skipped++;
          ok = write_tap (tap_output, cancellable, error, "ok %u - %s # SKIP %s\n", number,
                          check->name, detail);
        }
      else
        {
          outcome = SANDBOX_CONFORMANCE_OUTCOME_PASS;
          self->n_passed++;
          ok = write_tap (tap_output, cancellable, error, "ok %u - %s\n", number, check->name);
        }

      g_signal_emit (self, signals[SIGNAL_CHECK_FINISHED], 0, number, check->name, outcome,
                     detail);
      if (!ok)
        break;
    }

  finish_run (&run);
  return ok;
}

/**
 * sandbox_conformance_get_n_passed:
 * @self: a #SandboxConformance
 *
 * Counts the checks that passed in the last sandbox_conformance_run().
 *
 * Returns: how many checks passed in the last run
 */
guint
sandbox_conformance_get_n_passed (SandboxConformance *self)
{
  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), 0);

  return self->n_passed;
}

/**
 * sandbox_conformance_get_n_failed:
 * @self: a #SandboxConformance
 *
 * Counts the checks that failed in the last sandbox_conformance_run().
 *
 * Returns: how many checks failed in the last run; a driver conforms when
 *   this is 0 after a successful sandbox_conformance_run()
 */
guint
sandbox_conformance_get_n_failed (SandboxConformance *self)
{
  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), 0);

  return self->n_failed;
}

/**
 * sandbox_conformance_get_n_skipped:
 * @self: a #SandboxConformance
 *
 * Counts the checks skipped in the last sandbox_conformance_run() because
 * they don't apply to what the driver claims.
 *
 * Returns: how many checks did not apply in the last run
 */
guint
sandbox_conformance_get_n_skipped (SandboxConformance *self)
{
  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), 0);

  return self->n_skipped;
}
