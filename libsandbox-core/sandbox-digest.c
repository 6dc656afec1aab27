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

char *
sandbox_digest_sha256_hex (gconstpointer data,
                           gsize         length)
{
  static const char hex[] = "0123456789abcdef";
  unsigned char digest[SHA256_BYTES];
  unsigned int digest_length = 0;
  char *text;

  if (!EVP_Digest (length > 0 ? data : "", length, digest, &digest_length, sha256 (), NULL) ||
      digest_length != SHA256_BYTES)
    g_error ("libcrypto failed to compute a SHA-256 digest");

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
sandbox_digest_sha256_hex_bytes (GBytes *bytes)
{
  gsize length = 0;
  gconstpointer data = g_bytes_get_data (bytes, &length);

  return sandbox_digest_sha256_hex (data, length);
}
