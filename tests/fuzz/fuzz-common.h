/* fuzz-common.h — shared setup for the libFuzzer targets
 *
 * Every target makes GLib criticals and warnings fatal, so a failed
 * g_return_if_fail() or a g_warning() reached from hostile input aborts the
 * run and libFuzzer reports it as a crash, with the input that caused it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <glib.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Aborts, so libFuzzer saves the input, unless @condition holds. Unlike
 * g_assert() it cannot be compiled out. */
#define FUZZ_CHECK(condition) \
  G_STMT_START { \
    if (G_UNLIKELY (!(condition))) \
      { \
        g_printerr ("%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
        abort (); \
      } \
  } G_STMT_END

static inline void
fuzz_common_init (void)
{
  /* GSlice caches would hide use-after-free from ASan (GLib 2.74 still has it). */
  g_setenv ("G_SLICE", "always-malloc", TRUE);
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  g_log_set_fatal_mask ("Sandbox", G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  g_log_set_fatal_mask ("Sandbox-Gateway", G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
}

/* A NUL-terminated copy of the input, for the C-string APIs. Bytes after an
 * embedded NUL are unreachable through those APIs, which is what a caller
 * passing a C string gets too. */
static inline char *
fuzz_dup_string (const uint8_t *data,
                 size_t         size)
{
  return g_strndup ((const char *) data, size);
}
