/* fuzz-stub-message.c — the trusted stub's command-message parser
 *
 * The stub (drivers/bubblewrap/stub/) parses what arrives on its control
 * descriptor with stub_message_parse(), compiled in here as is. Properties
 * of an accepted message: an absolute cwd, a non-empty argv[0], argv and
 * envp NULL-terminated with every string inside the input, every
 * environment entry KEY=VALUE with a non-empty key, and as many strings as
 * the header says. Nothing is read or written outside the buffer (ASan).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#include "../../drivers/bubblewrap/stub/sandbox-stub-message.c"

static char *strings[STUB_MESSAGE_MAX_STRINGS + 2];

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_common_init ();
  return 0;
}

static gboolean
inside (const char *string,
        const char *buffer,
        size_t      size)
{
  return string >= buffer && string + strlen (string) < buffer + size;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  /* Exactly @size bytes, so ASan sees any read past them. */
  g_autofree char *buffer = g_malloc (MAX (size, 1));
  StubMessage message;
  guint32 argc, envc;
  guint n;

  memcpy (buffer, data, size);
  if (stub_message_parse (buffer, size, strings, &message) < 0)
    return 0;

  memcpy (&argc, buffer + 8, sizeof argc);
  memcpy (&envc, buffer + 12, sizeof envc);
  FUZZ_CHECK (inside (message.cwd, buffer, size) && message.cwd[0] == '/');
  for (n = 0; message.argv[n] != NULL; n++)
    FUZZ_CHECK (inside (message.argv[n], buffer, size));
  FUZZ_CHECK (n == argc && n >= 1 && message.argv[0][0] != '\0');
  for (n = 0; message.envp[n] != NULL; n++)
    {
      const char *equals = strchr (message.envp[n], '=');

      FUZZ_CHECK (inside (message.envp[n], buffer, size));
      FUZZ_CHECK (equals != NULL && equals != message.envp[n]);
    }
  FUZZ_CHECK (n == envc);
  return 0;
}
