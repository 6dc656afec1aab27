/* test-error.c — the reference's contract errors, each typed once
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every row pairs a setter with the code and text the reference design
 * (../shared/reference/002_*.txt) gives: mistype a message or a code in
 * sandbox-error.c and its row fails.
 */

#include <sandbox.h>

typedef gboolean (*SetError) (GError **error);

typedef struct
{
  const char   *name;
  SetError      set;
  SandboxError  code;
  const char   *message;
} ContractRow;

static const ContractRow rows[] = {
  { "stopped", sandbox_set_error_stopped, SANDBOX_ERROR_STOPPED,
    "Sandbox session is stopped" },
  { "deleted", sandbox_set_error_deleted, SANDBOX_ERROR_STOPPED,
    "Sandbox session is deleted" },
  { "has-owner", sandbox_set_error_has_owner, SANDBOX_ERROR_BUSY,
    "Sandbox session already has an owner" },
  { "previous-owner-live", sandbox_set_error_previous_owner_live, SANDBOX_ERROR_BUSY,
    "Sandbox session still has processes of its previous owner" },
  { "concurrency-limit", sandbox_set_error_concurrency_limit, SANDBOX_ERROR_BUSY,
    "Sandbox command concurrency limit reached" },
  { "commands-live", sandbox_set_error_commands_live, SANDBOX_ERROR_BUSY,
    "Stop live commands before changing network policy" },
  { "policy-changed", sandbox_set_error_policy_changed, SANDBOX_ERROR_BUSY,
    "Sandbox policy changed after command preparation" },
  { "state-mismatch", sandbox_set_error_state_mismatch, SANDBOX_ERROR_STATE_MISMATCH,
    "Reconnect state does not match backend and template" },
  { "identity-mismatch", sandbox_set_error_identity_mismatch, SANDBOX_ERROR_STATE_MISMATCH,
    "Reconnect identity does not match saved session" },
  { "foreign-template", sandbox_set_error_foreign_template, SANDBOX_ERROR_STATE_MISMATCH,
    "Template belongs to another backend" },
  { "template-root", sandbox_set_error_template_root, SANDBOX_ERROR_PATH,
    "Template file cannot be the workspace root" },
  { "workspace-root", sandbox_set_error_workspace_root, SANDBOX_ERROR_PATH,
    "Cannot remove the workspace root" },
  { "read-limit", sandbox_set_error_read_limit, SANDBOX_ERROR_LIMIT,
    "Sandbox file read limit exceeded" },
  { "write-limit", sandbox_set_error_write_limit, SANDBOX_ERROR_LIMIT,
    "Sandbox file write limit exceeded" },
};

static void
test_contract_error (gconstpointer data)
{
  const ContractRow *row = data;
  g_autoptr(GError) error = NULL;

  /* FALSE and an error together: one error channel. */
  g_assert_false (row->set (&error));
  g_assert_error (error, SANDBOX_ERROR, (int) row->code);
  g_assert_cmpstr (error->message, ==, row->message);

  /* A caller that ignores the error still gets FALSE. */
  g_assert_false (row->set (NULL));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *path = g_strdup_printf ("/error/contract/%s", rows[i].name);
      g_test_add_data_func (path, &rows[i], test_contract_error);
    }
  return g_test_run ();
}
