/* sandbox-conformance-fixtures.c — what the checks are written with: the
 * expectations (which describe a failure in the reference's terms) and the
 * backends, templates, sessions and commands they run on
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-conformance-private.h"

gboolean
conformance_claims_commands (ConformanceRun *run)
{
  return (run->self->flags & SANDBOX_CONFORMANCE_FLAGS_NO_COMMANDS) == 0;
}

/* Whether the suite was given a backend property named @name. */
gboolean
conformance_has_property (SandboxConformance *self,
                          const char         *name)
{
  for (guint i = 0; i < self->property_names->len; i++)
    if (g_str_equal (g_ptr_array_index (self->property_names, i), name))
      return TRUE;
  return FALSE;
}

char *
conformance_describe_error (const GError *error)
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
gboolean
conformance_expect_error (GError     **actual,
                          GQuark       domain,
                          int          code,
                          const char  *what,
                          GError     **error)
{
  g_autoptr(GError) owned = g_steal_pointer (actual);
  g_autofree char *expected = describe_expected (domain, code);
  g_autofree char *got = conformance_describe_error (owned);

  if (owned != NULL && g_error_matches (owned, domain, code))
    return TRUE;

  return CHECK_FAILED (error, "%s: expected %s, got %s", what, expected, got);
}

/* Takes *@actual, leaving %NULL; TRUE when there is none. */
gboolean
conformance_expect_success (GError     **actual,
                            const char  *what,
                            GError     **error)
{
  g_autoptr(GError) owned = g_steal_pointer (actual);
  g_autofree char *got = NULL;

  if (owned == NULL)
    return TRUE;

  got = conformance_describe_error (owned);
  return CHECK_FAILED (error, "%s: expected success, got %s", what, got);
}

gboolean
conformance_expect_bytes (GBytes      *bytes,
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

SandboxBackend *
conformance_new_backend (SandboxConformance  *self,
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

SandboxTemplate *
conformance_make_template (const char *name,
                           gboolean    reversed,
                           const char *extra)
{
  SandboxTemplate *template_ = sandbox_template_new (name);
  g_autoptr(GBytes) first = g_bytes_new_static (CONFORMANCE_HELLO, strlen (CONFORMANCE_HELLO));
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

SandboxHandle *
conformance_new_session (ConformanceRun  *run,
                         GError         **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  GError *local_error = NULL;
  SandboxHandle *handle;

  handle = sandbox_backend_create (run->backend, run->key, NULL, policy,
                                   run->cancellable, &local_error);
  if (handle == NULL)
    {
      conformance_expect_success (&local_error, "create (deny-all) from the prewarmed template",
                                  error);
      return NULL;
    }

  return handle;
}

SandboxHandle *
conformance_resume_session (ConformanceRun  *run,
                            SandboxState    *state,
                            GError         **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();

  return sandbox_backend_resume (run->backend, state, policy, run->cancellable, error);
}

/* Creates a session of @backend from @key, resuming @state when given; the
 * backend must refuse it with the SANDBOX_ERROR @code. @accepted says what a
 * handle would mean, @what what was refused. */
gboolean
conformance_expect_create_refused (ConformanceRun  *run,
                                   SandboxBackend  *backend,
                                   const char      *key,
                                   SandboxState    *state,
                                   int              code,
                                   const char      *accepted,
                                   const char      *what,
                                   GError         **error)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  GError *local_error = NULL;

  handle = sandbox_backend_create (backend, key, state, policy, run->cancellable, &local_error);
  if (handle != NULL)
    return CHECK_FAILED (error, "%s", accepted);
  return conformance_expect_error (&local_error, SANDBOX_ERROR, code, what, error);
}

/* conformance_expect_create_refused() of resuming @state under its own
 * template, as conformance_resume_session() does. */
gboolean
conformance_expect_resume_refused (ConformanceRun  *run,
                                   SandboxState    *state,
                                   int              code,
                                   const char      *accepted,
                                   const char      *what,
                                   GError         **error)
{
  return conformance_expect_create_refused (run, run->backend,
                                            sandbox_state_get_template_key (state), state, code,
                                            accepted, what, error);
}

/* @handle's state; %NULL, with @error saying that @what failed, if none. */
SandboxState *
conformance_capture_state (SandboxHandle  *handle,
                           const char     *what,
                           GError        **error)
{
  GError *local_error = NULL;
  SandboxState *state = sandbox_handle_capture_state (handle, &local_error);

  if (!conformance_expect_success (&local_error, what, error))
    g_clear_object (&state);
  return state;
}

/* Removes a session the check no longer needs; errors don't matter here. */
void
conformance_discard_session (SandboxHandle *handle)
{
  if (handle == NULL)
    return;
  sandbox_handle_delete (handle, NULL, NULL);
  g_object_unref (handle);
}

SandboxCommand *
conformance_probe_command (const char *executable,
                           const char *arg)
{
  SandboxCommand *command = sandbox_command_new (executable);

  if (arg != NULL)
    sandbox_command_add_arg (command, arg);
  return command;
}

/* A new session whose state is captured and which is stopped again: where
 * the checks that resume, reattach or compare states start. */
SandboxHandle *
conformance_new_stopped_session (ConformanceRun  *run,
                                 SandboxState   **state,
                                 GError         **error)
{
  g_autoptr(SandboxHandleDiscard) handle = conformance_new_session (run, error);
  GError *local_error = NULL;

  if (handle == NULL)
    return NULL;
  *state = sandbox_handle_capture_state (handle, &local_error);
  if (!conformance_expect_success (&local_error, "capture_state()", error))
    return NULL;
  if (!sandbox_handle_stop (handle, run->cancellable, &local_error))
    {
      conformance_expect_success (&local_error, "stop()", error);
      return NULL;
    }
  return g_steal_pointer (&handle);
}
