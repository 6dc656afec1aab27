/* coding-fixture.h — what the coding test executables share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One bubblewrap session made from a template with hello.txt = "hello\n",
 * under a deny-all policy, and coding tools over it that authorize every
 * operation; calls through them parse their result JSON and keep it, so
 * tear-down can check that no result named a host path.
 */

#pragma once

#include <json-glib/json-glib.h>
#include <sandbox.h>

G_BEGIN_DECLS

typedef struct
{
  char *state_directory;
  SandboxBackend *backend;
  char *template_key;
  SandboxHandle *handle;
  SandboxSession *session;
  SandboxCodingTools *tools;
  GPtrArray *results;          /* every result JSON, for the leak checks */
  GPtrArray *tool_errors;      /* GError copies from ::tool-error */
  GPtrArray *operations;       /* SandboxCodingOperation seen by ::authorize */
} Fixture;

/* @data: the name of a boolean backend property to set, or NULL. */
void        fixture_set_up    (Fixture       *fixture,
                               gconstpointer  data);
void        fixture_tear_down (Fixture       *fixture,
                               gconstpointer  data);

/* The fixture's ::authorize handler: records @operation, allows it. */
gboolean    allow_all_cb      (SandboxCodingTools     *tools,
                               SandboxCodingOperation *operation,
                               Fixture                *fixture);

JsonObject *parse_object      (const char *json);
JsonObject *invoke_with       (Fixture            *fixture,
                               SandboxCodingTools *tools,
                               const char         *tool,
                               const char         *arguments);
JsonObject *invoke            (Fixture    *fixture,
                               const char *tool,
                               const char *arguments);

void        assert_ok         (JsonObject *result);
const char *error_code        (JsonObject *result);
const char *error_message     (JsonObject *result);
#define assert_error(result, code) g_assert_cmpstr (error_code (result), ==, (code))
void        assert_refusal    (JsonObject *result,
                               const char *reason);

char       *host_read         (Fixture    *fixture,
                               const char *path);
void        set_policy        (Fixture    *fixture,
                               const char *json);

/* TRUE (the test skipped) where bubblewrap is not installed: main()
 * then returns 77. */
gboolean    coding_test_skip_without_bwrap (void);

/* Registers /coding/NAME on the fixture. */
#define ADD(name, func) \
  g_test_add ("/coding/" name, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

G_END_DECLS
