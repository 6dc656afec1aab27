/* sandbox-coding-schema-private.h — the coding tools' table, their
 * definitions and their strict argument check
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-coding-call-private.h"
#include "sandbox-coding-operation.h"

G_BEGIN_DECLS

/* The host's numbers the definitions and the argument check depend on. */
typedef struct
{
  guint shell_timeout_ms;
  guint max_shell_timeout_ms;
} SandboxCodingLimits;

typedef enum
{
  SANDBOX_CODING_ARG_STRING,   /* a JSON string */
  SANDBOX_CODING_ARG_PATH,     /* a JSON string naming a workspace path, "." when not given */
  SANDBOX_CODING_ARG_COUNT,    /* a JSON integer, at least 1 */
  SANDBOX_CODING_ARG_FLAG,     /* a JSON boolean, false when not given */
} SandboxCodingArgType;

/* One argument of a tool: its schema, where its value goes, its bounds.
 * The bounds are checked after the path, in the order of the arguments. */
typedef struct
{
  const char *name;
  SandboxCodingArgType type;
  gboolean required;
  const char *description;
  gsize offset;                 /* of its char *, gint64 or gboolean in SandboxCodingCall */
  gint64 fallback;              /* COUNT: the value when not given */
  gboolean non_empty;           /* STRING: "minLength": 1 */
  guint (*maximum_ms) (const SandboxCodingLimits *limits);  /* COUNT: the host's bound */
  JsonNode *(*check) (const SandboxCodingCall *call);       /* bounds the schema does not state */
} SandboxCodingArgEntry;

/* One tool: what the model is told, what the host authorizes, what runs. */
struct _SandboxCodingToolEntry
{
  const char *name;
  SandboxCodingOperationKind kind;
  const char *description;
  char *(*describe) (const SandboxCodingLimits *limits);   /* instead of a fixed description */
  const SandboxCodingArgEntry *args;                        /* ends with a NULL name */
  SandboxCodingToolFunc run;
};

const SandboxCodingToolEntry *sandbox_coding_schema_lookup          (const char                 *name);
JsonNode                     *sandbox_coding_schema_unknown_tool    (void);
char                         *sandbox_coding_schema_dup_definitions (const SandboxCodingLimits  *limits,
                                                                     const char                 *schema_member);
JsonNode                     *sandbox_coding_schema_parse           (SandboxCodingCall          *call,
                                                                     const char                 *arguments_json,
                                                                     const SandboxCodingLimits  *limits);
gboolean                      sandbox_coding_schema_dispatch        (SandboxCodingCall          *call,
                                                                     GCancellable               *cancellable,
                                                                     GError                    **error);

G_END_DECLS
