/* fuzz-command.c — sandbox_command_new_from_json()
 *
 * Properties: an accepted command validates, its limits are in range, its
 * environment entries are KEY=VALUE with a non-empty key, and a copy
 * validates and agrees with the original.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#include "sandbox-command.h"
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
  g_autoptr(SandboxCommand) command = NULL;
  g_autoptr(SandboxCommand) copy = NULL;
  g_auto(GStrv) environment = NULL;
  g_auto(GStrv) copy_environment = NULL;

  command = sandbox_command_new_from_json (json, &error);
  if (command == NULL)
    {
      FUZZ_CHECK (error != NULL);
      FUZZ_CHECK (error->domain == SANDBOX_ERROR);
      FUZZ_CHECK (g_utf8_validate (error->message, -1, NULL));
      return 0;
    }

  FUZZ_CHECK (sandbox_command_validate (command, &error));
  FUZZ_CHECK (sandbox_command_get_executable (command)[0] != '\0');
  FUZZ_CHECK (sandbox_command_get_timeout_ms (command) >= 1);
  FUZZ_CHECK (sandbox_command_get_timeout_ms (command) <= SANDBOX_COMMAND_MAX_TIMEOUT_MS);
  FUZZ_CHECK (sandbox_command_get_max_output_bytes (command) >= 1);
  FUZZ_CHECK (sandbox_command_get_cwd (command) != NULL);

  environment = sandbox_command_get_environment (command);
  for (guint i = 0; environment != NULL && environment[i] != NULL; i++)
    {
      const char *equals = strchr (environment[i], '=');
      g_autofree char *key = NULL;

      FUZZ_CHECK (equals != NULL && equals != environment[i]);
      key = g_strndup (environment[i], equals - environment[i]);
      FUZZ_CHECK (g_strcmp0 (sandbox_command_getenv (command, key), equals + 1) == 0);
    }

  copy = sandbox_command_copy (command);
  FUZZ_CHECK (sandbox_command_validate (copy, &error));
  FUZZ_CHECK (g_str_equal (sandbox_command_get_executable (copy),
                           sandbox_command_get_executable (command)));
  FUZZ_CHECK (g_strv_equal (sandbox_command_get_args (copy), sandbox_command_get_args (command)));
  FUZZ_CHECK (g_str_equal (sandbox_command_get_cwd (copy), sandbox_command_get_cwd (command)));
  FUZZ_CHECK (sandbox_command_get_timeout_ms (copy) == sandbox_command_get_timeout_ms (command));
  copy_environment = sandbox_command_get_environment (copy);
  FUZZ_CHECK ((environment == NULL) == (copy_environment == NULL));
  if (environment != NULL)
    FUZZ_CHECK (g_strv_equal ((const char * const *) environment,
                              (const char * const *) copy_environment));

  return 0;
}
