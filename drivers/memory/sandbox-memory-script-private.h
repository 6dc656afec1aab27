/* sandbox-memory-script-private.h — between a script and its parser
 *
 * sandbox-memory-script.c (the script and its answers) and
 * sandbox-memory-script-parse.c (reading a document into it) share it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-memory-script.h"

G_BEGIN_DECLS

struct _SandboxMemoryScript
{
  GPtrArray         *rules;          /* (element-type SandboxMemoryRule) */
  SandboxMemoryRule *default_rule;
};

/* sandbox-memory-script.c: an empty rule (exit 0, no output) and its free. */
SandboxMemoryRule *sandbox_memory_rule_new     (void);
void               sandbox_memory_rule_free    (gpointer              data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxMemoryRule, sandbox_memory_rule_free)

/* sandbox-memory-script-parse.c */
gboolean           sandbox_memory_script_parse (SandboxMemoryScript  *self,
                                                const char           *json,
                                                gssize                length,
                                                const char           *source,
                                                GError              **error);

G_END_DECLS
