/* sandbox-digest-private.h — SHA-256 for content addresses
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The lowercase hex SHA-256 of @length bytes at @data (64 digits). */
char *sandbox_digest_sha256_hex       (gconstpointer data,
                                       gsize         length);
char *sandbox_digest_sha256_hex_bytes (GBytes       *bytes);

/* A SHA-256 computed piece by piece, for contents streamed from a file. */
typedef struct _SandboxDigest SandboxDigest;

SandboxDigest *sandbox_digest_new        (void);
void           sandbox_digest_update     (SandboxDigest *self,
                                          gconstpointer  data,
                                          gsize          length);
char          *sandbox_digest_finish_hex (SandboxDigest *self);
void           sandbox_digest_free       (SandboxDigest *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxDigest, sandbox_digest_free)

G_END_DECLS
