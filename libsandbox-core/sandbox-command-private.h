/* sandbox-command-private.h — the command's fields, for its three files
 *
 * SandboxCommand is the object and its accessors (sandbox-command.c), the
 * terminal it may ask for (sandbox-command-terminal.c) and what the
 * reference's schema accepts: validation and the strict JSON form
 * (sandbox-command-schema.c). Nothing else includes this.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-command.h"

G_BEGIN_DECLS


struct _SandboxCommand
{
  GObject parent_instance;

  char *executable;
  GPtrArray *args;        /* (element-type utf8), NULL-terminated */
  char *cwd;
  GPtrArray *env_keys;    /* (element-type utf8), insertion order */
  GPtrArray *env_values;  /* (element-type utf8), same order */
  guint timeout_ms;
  guint64 max_output_bytes;
  GBytes *stdin_bytes;
  gboolean stdin_stream;
  guint terminal;          /* a boolean, kept as guint for set_terminal_field() */
  guint terminal_rows;
  guint terminal_columns;
  char *terminal_type;
};

G_END_DECLS
