/* sandbox-digest.c — SHA-256 for content addresses
 *
 * A template's key hashes every byte of every file, so hashing is most of
 * what `prewarm` costs beyond copying. GLib's SHA-256 is portable C (about
 * 430 MB/s here); OpenSSL's libcrypto, already loaded by libcurl, uses the
 * CPU's SHA extensions or vector units (about 1.5 GB/s on the same machine).
 * The digests are the same bytes either way, so keys do not change.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <openssl/evp.h>

#include "sandbox-digest-private.h"

#define SHA256_BYTES 32

/* Fetched once: an explicit fetch is far cheaper per call than the implicit
 * one EVP_Digest() would make with a name, and the object is thread-safe. */
static gpointer
fetch_sha256 (gpointer data)
{
  EVP_MD *md = EVP_MD_fetch (NULL, "SHA256", NULL);

  if (md == NULL)
    g_error ("libcrypto provides no SHA-256 implementation");
  return md;
}

static const EVP_MD *
sha256 (void)
{
  static GOnce once = G_ONCE_INIT;

  return g_once (&once, fetch_sha256, NULL);
}

static char *
hex_from_digest (const unsigned char *digest)
{
  static const char hex[] = "0123456789abcdef";
  char *text;

  text = g_malloc (SHA256_BYTES * 2 + 1);
  for (guint i = 0; i < SHA256_BYTES; i++)
    {
      text[2 * i] = hex[digest[i] >> 4];
      text[2 * i + 1] = hex[digest[i] & 0xf];
    }
  text[SHA256_BYTES * 2] = '\0';

  return text;
}

char *
sandbox_digest_sha256_hex (gconstpointer data,
                           gsize         length)
{
  unsigned char digest[SHA256_BYTES];
  unsigned int digest_length = 0;

  if (!EVP_Digest (length > 0 ? data : "", length, digest, &digest_length, sha256 (), NULL) ||
      digest_length != SHA256_BYTES)
    g_error ("libcrypto failed to compute a SHA-256 digest");

  return hex_from_digest (digest);
}

char *
sandbox_digest_sha256_hex_bytes (GBytes *bytes)
{
  gsize length = 0;
  gconstpointer data = g_bytes_get_data (bytes, &length);

  return sandbox_digest_sha256_hex (data, length);
}

/* sandbox_digest_new:
 *
 * Starts a SHA-256 over contents that arrive in pieces (a file read in
 * 64 KiB buffers), so hashing a file never holds more than one buffer.
 * Out of memory in libcrypto aborts, as g_malloc() does. */
SandboxDigest *
sandbox_digest_new (void)
{
  EVP_MD_CTX *context = EVP_MD_CTX_new ();

  if (context == NULL || !EVP_DigestInit_ex (context, sha256 (), NULL))
    g_error ("libcrypto failed to start a SHA-256 digest");
  return (SandboxDigest *) context;
}

void
sandbox_digest_update (SandboxDigest *self,
                       gconstpointer  data,
                       gsize          length)
{
  if (length > 0 && !EVP_DigestUpdate ((EVP_MD_CTX *) self, data, length))
    g_error ("libcrypto failed to update a SHA-256 digest");
}

/* Returns the lowercase hex digest; @self cannot be updated afterwards. */
char *
sandbox_digest_finish_hex (SandboxDigest *self)
{
  unsigned char digest[SHA256_BYTES];
  unsigned int digest_length = 0;

  if (!EVP_DigestFinal_ex ((EVP_MD_CTX *) self, digest, &digest_length) ||
      digest_length != SHA256_BYTES)
    g_error ("libcrypto failed to compute a SHA-256 digest");
  return hex_from_digest (digest);
}

void
sandbox_digest_free (SandboxDigest *self)
{
  EVP_MD_CTX_free ((EVP_MD_CTX *) self);
}
