/* sandbox-gateway-ca.c — the certificate authority the gateway ends guests' TLS with
 *
 * After an allowed CONNECT the gateway answers the guest's TLS itself
 * (sandbox-gateway-tunnel.c), with a certificate for the CONNECT's host
 * signed by this CA, which the guest trusts. The CA belongs to a backend: a
 * directory (the backend's `<state-directory>/gateway-ca`) holding `ca.pem`,
 * the certificate guests get, and `ca.key`, mode 0600, which never leaves
 * the host. It is made on first use, with OpenSSL's libcrypto, and kept:
 * deleting the directory rotates it (the next gateway makes a new one).
 *
 * Several gateways of one backend may open the directory at once: the CA is
 * made in a fresh directory beside it and renamed into place, so a gateway
 * sees either no CA or a whole one; the loser of the race removes its own
 * and loads the winner's.
 *
 * Leaf certificates are made once per host name and kept in memory for the
 * CA's life; they share one key, made with the CA's value in memory only.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "sandbox-error.h"
#include "sandbox-gateway-ca-private.h"

#define CA_FILE "ca.pem"
#define KEY_FILE "ca.key"
#define CA_DAYS (10 * 365)
#define LEAF_DAYS 365
#define MAX_CACHED_LEAVES 1024

struct _SandboxGatewayCa
{
  gatomicrefcount ref_count;
  char *file;            /* the CA certificate's path, for guests */
  X509 *certificate;
  EVP_PKEY *key;
  EVP_PKEY *leaf_key;
  char *leaf_key_pem;

  GMutex lock;
  GHashTable *leaves;    /* lower-case host name → GTlsCertificate */
};

G_DEFINE_AUTOPTR_CLEANUP_FUNC (X509, X509_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (EVP_PKEY, EVP_PKEY_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (BIO, BIO_free)

static gboolean
openssl_failed (GError    **error,
                const char *what)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Could not %s for the gateway's certificate authority", what);
  return FALSE;
}

static char *
bio_to_string (BIO *bio)
{
  char *data = NULL;
  long length = BIO_get_mem_data (bio, &data);

  return g_strndup (data, (gsize) length);
}

static char *
certificate_to_pem (X509 *certificate)
{
  g_autoptr(BIO) bio = BIO_new (BIO_s_mem ());

  if (bio == NULL || PEM_write_bio_X509 (bio, certificate) != 1)
    return NULL;
  return bio_to_string (bio);
}

static char *
key_to_pem (EVP_PKEY *key)
{
  g_autoptr(BIO) bio = BIO_new (BIO_s_mem ());

  if (bio == NULL || PEM_write_bio_PrivateKey (bio, key, NULL, NULL, 0, NULL, NULL) != 1)
    return NULL;
  return bio_to_string (bio);
}

/* Making certificates */

static gboolean
add_extension (X509       *certificate,
               X509       *issuer,
               int         nid,
               const char *value)
{
  X509V3_CTX context;
  X509_EXTENSION *extension;
  gboolean added;

  X509V3_set_ctx (&context, issuer, certificate, NULL, NULL, 0);
  extension = X509V3_EXT_conf_nid (NULL, &context, nid, value);
  if (extension == NULL)
    return FALSE;
  added = X509_add_ext (certificate, extension, -1) == 1;
  X509_EXTENSION_free (extension);
  return added;
}

/* A random positive 128-bit serial: two certificates for one host (a CA
 * rotated, a gateway restarted) never share one. */
static gboolean
set_random_serial (X509 *certificate)
{
  guchar bytes[16];
  BIGNUM *number;
  gboolean set;

  if (RAND_bytes (bytes, sizeof bytes) != 1)
    return FALSE;
  bytes[0] &= 0x7f;
  number = BN_bin2bn (bytes, sizeof bytes, NULL);
  set = number != NULL && BN_to_ASN1_INTEGER (number, X509_get_serialNumber (certificate)) != NULL;
  BN_free (number);
  return set;
}

/* A certificate of @subject_key named @common_name, valid from an hour ago
 * (clocks differ a little) for @days, not yet signed. */
static X509 *
certificate_new (EVP_PKEY   *subject_key,
                 const char *common_name,
                 X509_NAME  *issuer_name,
                 long        days)
{
  g_autoptr(X509) certificate = X509_new ();
  X509_NAME *name;

  if (certificate == NULL || X509_set_version (certificate, 2) != 1 ||
      !set_random_serial (certificate) ||
      X509_gmtime_adj (X509_getm_notBefore (certificate), -3600) == NULL ||
      X509_gmtime_adj (X509_getm_notAfter (certificate), days * 24 * 3600) == NULL ||
      X509_set_pubkey (certificate, subject_key) != 1)
    return NULL;

  name = X509_get_subject_name (certificate);
  if (X509_NAME_add_entry_by_txt (name, "O", MBSTRING_UTF8, (const guchar *) "libsandbox", -1, -1, 0) != 1 ||
      X509_NAME_add_entry_by_txt (name, "CN", MBSTRING_UTF8, (const guchar *) common_name, -1, -1, 0) != 1 ||
      X509_set_issuer_name (certificate, issuer_name != NULL ? issuer_name : name) != 1)
    return NULL;

  return g_steal_pointer (&certificate);
}

static X509 *
make_ca_certificate (EVP_PKEY *key)
{
  g_autoptr(X509) certificate = certificate_new (key, "libsandbox gateway CA", NULL, CA_DAYS);

  if (certificate == NULL ||
      !add_extension (certificate, certificate, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
      !add_extension (certificate, certificate, NID_key_usage, "critical,keyCertSign,cRLSign") ||
      !add_extension (certificate, certificate, NID_subject_key_identifier, "hash") ||
      X509_sign (certificate, key, EVP_sha256 ()) <= 0)
    return NULL;

  return g_steal_pointer (&certificate);
}

static X509 *
make_leaf_certificate (SandboxGatewayCa *self,
                       const char       *hostname)
{
  g_autoptr(X509) certificate = NULL;
  g_autofree char *names = g_strdup_printf ("DNS:%s", hostname);

  certificate = certificate_new (self->leaf_key, hostname,
                                 X509_get_subject_name (self->certificate), LEAF_DAYS);
  if (certificate == NULL ||
      !add_extension (certificate, self->certificate, NID_basic_constraints, "critical,CA:FALSE") ||
      !add_extension (certificate, self->certificate, NID_key_usage, "critical,digitalSignature") ||
      !add_extension (certificate, self->certificate, NID_ext_key_usage, "serverAuth") ||
      !add_extension (certificate, self->certificate, NID_subject_alt_name, names) ||
      !add_extension (certificate, self->certificate, NID_authority_key_identifier, "keyid:always") ||
      X509_sign (certificate, self->key, EVP_sha256 ()) <= 0)
    return NULL;

  return g_steal_pointer (&certificate);
}

/* The CA on disk */

static gboolean
write_file (int          directory_fd,
            const char  *name,
            const char  *contents,
            mode_t       mode,
            GError     **error)
{
  int fd = openat (directory_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  gsize length = strlen (contents);
  gboolean written;

  if (fd < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
                   "Could not create the gateway CA's %s: %s", name, g_strerror (errno));
      return FALSE;
    }
  written = write (fd, contents, length) == (gssize) length && fsync (fd) == 0;
  if (!written)
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
                 "Could not write the gateway CA's %s: %s", name, g_strerror (errno));
  close (fd);
  return written;
}

/* Makes a CA in @staging, a fresh 0700 directory. */
static gboolean
make_ca (const char  *staging,
         GError     **error)
{
  g_autoptr(EVP_PKEY) key = EVP_EC_gen ("P-256");
  g_autoptr(X509) certificate = NULL;
  g_autofree char *certificate_pem = NULL;
  g_autofree char *key_pem = NULL;
  int fd;
  gboolean made;

  if (key == NULL)
    return openssl_failed (error, "make a key");
  certificate = make_ca_certificate (key);
  certificate_pem = certificate != NULL ? certificate_to_pem (certificate) : NULL;
  key_pem = key_to_pem (key);
  if (certificate_pem == NULL || key_pem == NULL)
    return openssl_failed (error, "make the certificate");

  fd = open (staging, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
                   "Could not open %s: %s", staging, g_strerror (errno));
      return FALSE;
    }
  made = write_file (fd, KEY_FILE, key_pem, 0600, error) &&
         write_file (fd, CA_FILE, certificate_pem, 0644, error);
  OPENSSL_cleanse (key_pem, strlen (key_pem));
  close (fd);
  return made;
}

static void
remove_staging (const char *staging)
{
  g_autofree char *key = g_build_filename (staging, KEY_FILE, NULL);
  g_autofree char *certificate = g_build_filename (staging, CA_FILE, NULL);

  g_unlink (key);
  g_unlink (certificate);
  g_rmdir (staging);
}

/* Makes the CA at @directory unless there is one. */
static gboolean
ensure_ca (const char  *directory,
           GError     **error)
{
  g_autofree char *parent = g_path_get_dirname (directory);
  g_autofree char *staging = g_build_filename (parent, ".gateway-ca-XXXXXX", NULL);

  if (g_file_test (directory, G_FILE_TEST_IS_DIR))
    return TRUE;
  if (g_mkdtemp_full (staging, 0700) == NULL)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
                   "Could not make the gateway CA in %s: %s", parent, g_strerror (errno));
      return FALSE;
    }
  if (!make_ca (staging, error))
    {
      remove_staging (staging);
      return FALSE;
    }
  if (rename (staging, directory) != 0)
    {
      int saved = errno;

      remove_staging (staging);
      /* Another gateway made it first: use theirs. */
      if (saved == EEXIST || saved == ENOTEMPTY)
        return TRUE;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Could not put the gateway CA in place at %s: %s", directory, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

static gboolean
load_ca (SandboxGatewayCa  *self,
         const char        *directory,
         GError           **error)
{
  g_autofree char *key_path = g_build_filename (directory, KEY_FILE, NULL);
  g_autoptr(BIO) key_bio = NULL;
  g_autoptr(BIO) certificate_bio = NULL;
  GStatBuf status;

  /* A key others can read is no secret any more: refuse it, rather than
   * sign with it. */
  if (g_lstat (key_path, &status) != 0 || !S_ISREG (status.st_mode) ||
      (status.st_mode & 077) != 0 || status.st_uid != geteuid ())
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "The gateway CA key %s is missing, or not a file of mode 0600 of this user",
                   key_path);
      return FALSE;
    }

  self->file = g_build_filename (directory, CA_FILE, NULL);
  key_bio = BIO_new_file (key_path, "r");
  certificate_bio = BIO_new_file (self->file, "r");
  if (key_bio != NULL)
    self->key = PEM_read_bio_PrivateKey (key_bio, NULL, NULL, NULL);
  if (certificate_bio != NULL)
    self->certificate = PEM_read_bio_X509 (certificate_bio, NULL, NULL, NULL);
  if (self->key == NULL || self->certificate == NULL ||
      X509_check_private_key (self->certificate, self->key) != 1)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "The gateway CA in %s is not a certificate and its key", directory);
      return FALSE;
    }
  return TRUE;
}

/*
 * sandbox_gateway_ca_open:
 * @directory: where the CA is, or is to be made; its parent must exist
 *
 * Returns: (transfer full): the CA, or %NULL with @error set
 */
SandboxGatewayCa *
sandbox_gateway_ca_open (const char  *directory,
                         GError     **error)
{
  g_autoptr(SandboxGatewayCa) self = g_new0 (SandboxGatewayCa, 1);

  g_atomic_ref_count_init (&self->ref_count);
  g_mutex_init (&self->lock);
  self->leaves = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);

  if (!ensure_ca (directory, error) || !load_ca (self, directory, error))
    return NULL;

  self->leaf_key = EVP_EC_gen ("P-256");
  self->leaf_key_pem = self->leaf_key != NULL ? key_to_pem (self->leaf_key) : NULL;
  if (self->leaf_key_pem == NULL)
    {
      openssl_failed (error, "make a key");
      return NULL;
    }

  return g_steal_pointer (&self);
}

SandboxGatewayCa *
sandbox_gateway_ca_ref (SandboxGatewayCa *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
sandbox_gateway_ca_unref (SandboxGatewayCa *self)
{
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  g_free (self->file);
  X509_free (self->certificate);
  EVP_PKEY_free (self->key);
  EVP_PKEY_free (self->leaf_key);
  if (self->leaf_key_pem != NULL)
    OPENSSL_cleanse (self->leaf_key_pem, strlen (self->leaf_key_pem));
  g_free (self->leaf_key_pem);
  g_hash_table_unref (self->leaves);
  g_mutex_clear (&self->lock);
  g_free (self);
}

/* Returns: (type filename): the CA certificate's PEM file, what guests trust */
const char *
sandbox_gateway_ca_get_file (SandboxGatewayCa *self)
{
  return self->file;
}

static GTlsCertificate *
make_leaf (SandboxGatewayCa  *self,
           const char        *hostname,
           GError           **error)
{
  g_autoptr(X509) certificate = make_leaf_certificate (self, hostname);
  g_autofree char *certificate_pem = certificate != NULL ? certificate_to_pem (certificate) : NULL;
  g_autofree char *pem = NULL;
  GTlsCertificate *leaf;

  if (certificate_pem == NULL)
    {
      openssl_failed (error, "make a certificate");
      return NULL;
    }
  pem = g_strconcat (certificate_pem, self->leaf_key_pem, NULL);
  leaf = g_tls_certificate_new_from_pem (pem, -1, error);
  OPENSSL_cleanse (pem, strlen (pem));
  return leaf;
}

/*
 * sandbox_gateway_ca_dup_leaf:
 * @hostname: a DNS name (not an IP literal), as the CONNECT named it
 *
 * May be called from any thread.
 *
 * Returns: (transfer full): a certificate and key for @hostname, signed by
 *   the CA, made on first use and then kept
 */
GTlsCertificate *
sandbox_gateway_ca_dup_leaf (SandboxGatewayCa  *self,
                             const char        *hostname,
                             GError           **error)
{
  g_autofree char *key = g_ascii_strdown (hostname, -1);
  GTlsCertificate *leaf;

  g_mutex_lock (&self->lock);
  leaf = g_hash_table_lookup (self->leaves, key);
  if (leaf != NULL)
    g_object_ref (leaf);
  else
    {
      leaf = make_leaf (self, key, error);
      /* Host names come from the policy, so the cache stays small; the
       * bound is for a policy replaced many times. */
      if (leaf != NULL && g_hash_table_size (self->leaves) >= MAX_CACHED_LEAVES)
        g_hash_table_remove_all (self->leaves);
      if (leaf != NULL)
        g_hash_table_insert (self->leaves, g_steal_pointer (&key), g_object_ref (leaf));
    }
  g_mutex_unlock (&self->lock);

  return leaf;
}
