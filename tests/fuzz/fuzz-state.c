/* fuzz-state.c — sandbox_state_new_from_json()
 *
 * Properties: an accepted state has three non-empty UTF-8 fields, and
 * sandbox_state_to_json() writes JSON that reads back as an equal state.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#include "sandbox-state.h"
#include "sandbox-error.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_common_init ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *json = fuzz_dup_string (data, size);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autoptr(SandboxState) again = NULL;
  g_autofree char *written = NULL;

  state = sandbox_state_new_from_json (json, &error);
  if (state == NULL)
    {
      FUZZ_CHECK (g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID));
      FUZZ_CHECK (g_utf8_validate (error->message, -1, NULL));
      return 0;
    }

  FUZZ_CHECK (sandbox_state_get_backend (state)[0] != '\0');
  FUZZ_CHECK (sandbox_state_get_session_id (state)[0] != '\0');
  FUZZ_CHECK (sandbox_state_get_template_key (state)[0] != '\0');
  FUZZ_CHECK (g_utf8_validate (sandbox_state_get_backend (state), -1, NULL));
  FUZZ_CHECK (g_utf8_validate (sandbox_state_get_session_id (state), -1, NULL));
  FUZZ_CHECK (g_utf8_validate (sandbox_state_get_template_key (state), -1, NULL));

  written = sandbox_state_to_json (state);
  FUZZ_CHECK (written != NULL);
  again = sandbox_state_new_from_json (written, &error);
  if (again == NULL)
    g_printerr ("%s does not read back: %s\n", written, error->message);
  FUZZ_CHECK (again != NULL);
  FUZZ_CHECK (sandbox_state_equal (state, again));

  return 0;
}
