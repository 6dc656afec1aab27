/* sandbox-json-private.h — strict JSON for untrusted input
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (SANDBOX_COMPILATION) && !defined (SANDBOX_JSON_STRICT_COMPILATION)
# error "This is a private header: link sandbox_json_strict_dep to use it."
#endif

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Parses @json as strict RFC 8259 JSON (json-glib 1.6 alone accepts comments,
 * single quotes and duplicate members, and truncates strings at "\u0000"), and
 * returns the root node. Any violation is SANDBOX_ERROR_INVALID. */
JsonNode *sandbox_json_parse_strict (const char  *json,
                                     gssize       length,
                                     GError     **error);

/* Like sandbox_json_parse_strict() for a document that must be one object:
 * another value is "Invalid input: expected object, received TYPE"
 * (SANDBOX_ERROR_INVALID), as the reference says. */
JsonNode *sandbox_json_parse_object (const char  *json,
                                     GError     **error);

/* Like sandbox_json_parse_strict(), but a string with an escaped NUL (which
 * json-glib cannot represent) is reported with @nul_message, so a caller can
 * say what such a string would have been; NULL gives the generic message. */
JsonNode *sandbox_json_parse_strict_full (const char  *json,
                                          gssize       length,
                                          const char  *nul_message,
                                          GError     **error);

/* The zod-style name of @node's JSON type ("undefined" for a missing member),
 * for messages such as "expected string, received number". */
const char *sandbox_json_type_name      (JsonNode *node);
gboolean    sandbox_json_node_is_string (JsonNode *node);

/* The bytes of @text, a JSON string carrying base64, or NULL if @text is not
 * strict base64: only the RFC 4648 alphabet, whole quanta, padding only at
 * the end (g_base64_decode() alone skips what it does not know). */
GBytes     *sandbox_json_base64_decode  (const char *text);

G_END_DECLS
