/* sandbox-stub-message.c — parsing the command message, nothing else
 *
 * No I/O and no allocation: the fuzzer (tests/fuzz/fuzz-stub-message.c)
 * runs exactly this file.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "sandbox-stub-message.h"

static uint32_t
read_u32 (const char *p)
{
  uint32_t value;

  memcpy (&value, p, sizeof value);
  return value;
}

static int
is_environment_pair (const char *pair)
{
  const char *equals = strchr (pair, '=');

  return equals != NULL && equals != pair;
}

int
stub_message_parse (char        *buffer,
                    size_t       size,
                    char       **strings,
                    StubMessage *message)
{
  uint32_t argc, envc, length;
  uint64_t n_strings;
  size_t found = 0;
  char *payload, *end;

  if (size < STUB_MESSAGE_HEADER_SIZE || size > STUB_MESSAGE_MAX_SIZE)
    return -1;
  if (read_u32 (buffer) != STUB_MESSAGE_MAGIC || read_u32 (buffer + 4) != STUB_MESSAGE_VERSION)
    return -1;
  argc = read_u32 (buffer + 8);
  envc = read_u32 (buffer + 12);
  length = read_u32 (buffer + 16);
  n_strings = 1 + (uint64_t) argc + envc;
  if (argc < 1 || n_strings > STUB_MESSAGE_MAX_STRINGS)
    return -1;
  if (length != size - STUB_MESSAGE_HEADER_SIZE || length == 0)
    return -1;
  payload = buffer + STUB_MESSAGE_HEADER_SIZE;
  end = payload + length;
  if (end[-1] != '\0')
    return -1;

  /* Exactly n_strings strings, the last one ending at the last byte. */
  for (char *p = payload; p < end; p += strlen (p) + 1)
    {
      if (found == n_strings)
        return -1;
      strings[found++] = p;
    }
  if (found != n_strings)
    return -1;

  message->cwd = strings[0];
  if (message->cwd[0] != '/')
    return -1;
  /* argv and envp each need a NULL after them: argv's overwrites cwd's slot
   * moved one down. */
  memmove (strings, strings + 1, (argc + envc) * sizeof (char *));
  strings[argc + envc] = NULL;
  memmove (strings + argc + 1, strings + argc, (envc + 1) * sizeof (char *));
  strings[argc] = NULL;
  message->argv = strings;
  message->envp = strings + argc + 1;
  if (message->argv[0][0] == '\0')
    return -1;
  for (uint32_t i = 0; i < envc; i++)
    if (!is_environment_pair (message->envp[i]))
      return -1;
  return 0;
}
