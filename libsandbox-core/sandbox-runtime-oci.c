/* sandbox-runtime-oci.c — a runtime from an OCI image layout directory
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The layout (oci-layout, index.json, blobs/sha256/…) is not trusted. Every
 * blob read — a nested index, the manifest, the config, each layer — is
 * checked against its descriptor's size and SHA-256 digest as it is read: a
 * blob longer than its size stops the read at once, a mismatch is an error
 * once its last byte is in. A digest must be "sha256:" and 64 lowercase hex
 * digits before a path is built from it, and blobs are opened beneath the
 * layout with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) and checked to
 * be regular files. index.json and the JSON blobs are read whole, at most
 * MAX_JSON_BYTES.
 *
 * Which image: index.json's one manifest; if it lists several, the one
 * whose org.opencontainers.image.ref.name annotation is "latest", and an
 * error if there is no such one or more than one. A descriptor that is an
 * image index (a multi-platform image) is followed one level: its one
 * manifest, or the one for this machine's linux platform, and an error if
 * that is ambiguous. OCI and Docker (schema 2) manifests and indexes are
 * read; layers may be tar, tar+gzip or tar+zstd (the Docker gzip layer
 * too), each read with libarchive (its tar formats, the one filter its
 * media type names) and applied by sandbox-runtime-layer.c.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-runtime-layer-private.h"
#include "sandbox-workspace-private.h"

#define MAX_JSON_BYTES (4 * 1024 * 1024)
#define READ_BUFFER_SIZE (64 * 1024)
#define REF_NAME_ANNOTATION "org.opencontainers.image.ref.name"

#define OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define DOCKER_INDEX "application/vnd.docker.distribution.manifest.list.v2+json"
#define DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"

#if defined(__x86_64__)
# define HOST_ARCHITECTURE "amd64"
#elif defined(__aarch64__)
# define HOST_ARCHITECTURE "arm64"
#elif defined(__i386__)
# define HOST_ARCHITECTURE "386"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define HOST_ARCHITECTURE "ppc64le"
#elif defined(__s390x__)
# define HOST_ARCHITECTURE "s390x"
#elif defined(__riscv) && __riscv_xlen == 64
# define HOST_ARCHITECTURE "riscv64"
#else
# define HOST_ARCHITECTURE "unknown"
#endif

typedef enum
{
  LAYER_TAR,
  LAYER_GZIP,
  LAYER_ZSTD,
} LayerCompression;

static const struct
{
  const char       *media_type;
  LayerCompression  compression;
} layer_types[] = {
  { "application/vnd.oci.image.layer.v1.tar", LAYER_TAR },
  { "application/vnd.oci.image.layer.v1.tar+gzip", LAYER_GZIP },
  { "application/vnd.oci.image.layer.v1.tar+zstd", LAYER_ZSTD },
  { "application/vnd.oci.image.layer.nondistributable.v1.tar", LAYER_TAR },
  { "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", LAYER_GZIP },
  { "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd", LAYER_ZSTD },
  { "application/vnd.docker.image.rootfs.diff.tar.gzip", LAYER_GZIP },
};

/* What a descriptor says a blob is; strings borrowed from its JSON. */
typedef struct
{
  const char *media_type;
  const char *digest;
  gint64      size;
  JsonObject *object;
} Descriptor;

/* A blob being read and checked: its bytes go through read_blob() only. */
typedef struct
{
  int         fd;
  const char *digest;
  guint64     size;
  guint64     n_read;
  GChecksum  *checksum;
  guint8     *buffer;   /* READ_BUFFER_SIZE */
} Blob;

static gboolean
set_invalid (GError     **error,
             const char  *format,
             ...) G_GNUC_PRINTF (2, 3);

static gboolean
set_invalid (GError     **error,
             const char  *format,
             ...)
{
  va_list args;

  va_start (args, format);
  g_propagate_error (error, g_error_new_valist (SANDBOX_ERROR, SANDBOX_ERROR_INVALID, format, args));
  va_end (args);
  return FALSE;
}

static const char *
member_string (JsonObject *object,
               const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

static JsonObject *
member_object (JsonObject *object,
               const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static JsonArray *
member_array (JsonObject *object,
              const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;

  return node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

/* "sha256:" and 64 lowercase hex digits; anything else never becomes a
 * path. */
static gboolean
check_digest (const char  *digest,
              GError     **error)
{
  if (digest == NULL || !g_str_has_prefix (digest, "sha256:") || strlen (digest) != 7 + 64)
    goto invalid;
  for (const char *p = digest + 7; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p) && !(*p >= 'a' && *p <= 'f'))
      goto invalid;
  return TRUE;

invalid:
  return set_invalid (error, "OCI layout: expected a digest ‘sha256:’ and 64 lowercase hex digits, not ‘%s’",
                      digest != NULL ? digest : "(none)");
}

static gboolean
parse_descriptor (JsonNode    *node,
                  Descriptor  *descriptor,
                  GError     **error)
{
  JsonObject *object = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  JsonNode *size = object != NULL ? json_object_get_member (object, "size") : NULL;

  if (object == NULL || member_string (object, "mediaType") == NULL ||
      size == NULL || !JSON_NODE_HOLDS_VALUE (size) || json_node_get_value_type (size) != G_TYPE_INT64 ||
      json_node_get_int (size) < 0)
    return set_invalid (error, "OCI layout: a descriptor without a mediaType, a digest or a size");
  *descriptor = (Descriptor) {
    .media_type = member_string (object, "mediaType"),
    .digest = member_string (object, "digest"),
    .size = json_node_get_int (size),
    .object = object,
  };
  return check_digest (descriptor->digest, error);
}

static int
open_file (int          layout_fd,
           const char  *path,
           GError     **error)
{
  g_auto(SandboxWorkspaceFd) fd = -1;
  struct stat st;

  fd = sandbox_workspace_open_beneath (layout_fd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY,
                                       RESOLVE_NO_SYMLINKS);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "OCI layout: cannot open ‘%s’: %s", path, g_strerror (saved_errno));
      return -1;
    }
  if (!S_ISREG (st.st_mode))
    {
      set_invalid (error, "OCI layout: ‘%s’ is not a regular file", path);
      return -1;
    }
  return g_steal_fd (&fd);
}

static gboolean
blob_open (Blob              *blob,
           int                layout_fd,
           const Descriptor  *descriptor,
           GError           **error)
{
  g_autofree char *path = g_strconcat ("blobs/sha256/", descriptor->digest + 7, NULL);

  *blob = (Blob) {
    .fd = open_file (layout_fd, path, error),
    .digest = descriptor->digest,
    .size = descriptor->size,
    .checksum = g_checksum_new (G_CHECKSUM_SHA256),
    .buffer = g_malloc (READ_BUFFER_SIZE),
  };
  return blob->fd >= 0;
}

static void
blob_clear (Blob *blob)
{
  sandbox_workspace_fd_clear (&blob->fd);
  g_clear_pointer (&blob->checksum, g_checksum_free);
  g_clear_pointer (&blob->buffer, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Blob, blob_clear)

/* The next bytes of the blob, hashed; never past its size (-1, EFBIG). */
static ssize_t
blob_read (Blob *blob)
{
  ssize_t n;

  /* One byte more than may be left, to see a blob longer than its size. */
  n = TEMP_FAILURE_RETRY (read (blob->fd, blob->buffer, MIN (READ_BUFFER_SIZE, blob->size - blob->n_read + 1)));
  if (n < 0)
    return -1;
  if ((guint64) n > blob->size - blob->n_read)
    {
      errno = EFBIG;
      return -1;
    }
  blob->n_read += n;
  g_checksum_update (blob->checksum, blob->buffer, n);
  return n;
}

/* Reads what is left of the blob and compares it with its descriptor. */
static gboolean
blob_check (Blob    *blob,
            GError **error)
{
  ssize_t n;

  while ((n = blob_read (blob)) > 0)
    ;
  if (n < 0 && errno == EFBIG)
    return set_invalid (error, "OCI layout: blob %s is larger than its descriptor's size (%" G_GUINT64_FORMAT ")",
                        blob->digest, blob->size);
  if (n < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "OCI layout: cannot read blob %s: %s", blob->digest, g_strerror (saved_errno));
      return FALSE;
    }
  if (blob->n_read != blob->size)
    return set_invalid (error, "OCI layout: blob %s has %" G_GUINT64_FORMAT " bytes, its descriptor says %"
                        G_GUINT64_FORMAT, blob->digest, blob->n_read, blob->size);
  if (strcmp (g_checksum_get_string (blob->checksum), blob->digest + 7) != 0)
    return set_invalid (error, "OCI layout: blob %s does not match its digest (its SHA-256 is %s)",
                        blob->digest, g_checksum_get_string (blob->checksum));
  return TRUE;
}

static JsonNode *
parse_json (const char  *data,
            gsize        length,
            const char  *what,
            GError     **error)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  g_autoptr(GError) local_error = NULL;

  if (!json_parser_load_from_data (parser, data, length, &local_error))
    {
      set_invalid (error, "OCI layout: %s is not JSON: %s", what, local_error->message);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      set_invalid (error, "OCI layout: %s is not a JSON object", what);
      return NULL;
    }
  return json_node_ref (json_parser_get_root (parser));
}

/* A JSON blob, read whole and checked before it is parsed. */
static JsonNode *
read_json_blob (int                layout_fd,
                const Descriptor  *descriptor,
                GError           **error)
{
  g_auto(Blob) blob = { .fd = -1 };
  g_autoptr(GByteArray) data = g_byte_array_new ();
  ssize_t n;

  if (descriptor->size > MAX_JSON_BYTES)
    {
      set_invalid (error, "OCI layout: blob %s is larger than %d bytes", descriptor->digest, MAX_JSON_BYTES);
      return NULL;
    }
  if (!blob_open (&blob, layout_fd, descriptor, error))
    return NULL;
  while ((n = blob_read (&blob)) > 0)
    g_byte_array_append (data, blob.buffer, n);
  if (!blob_check (&blob, error))
    return NULL;
  return parse_json ((const char *) data->data, data->len, descriptor->digest, error);
}

/* A file of the layout that has no digest: oci-layout, index.json. */
static JsonNode *
read_json_file (int          layout_fd,
                const char  *name,
                GError     **error)
{
  g_auto(SandboxWorkspaceFd) fd = open_file (layout_fd, name, error);
  g_autofree char *data = NULL;
  gsize length = 0;

  if (fd < 0)
    return NULL;
  data = g_malloc (MAX_JSON_BYTES + 1);
  while (length <= MAX_JSON_BYTES)
    {
      ssize_t n = TEMP_FAILURE_RETRY (read (fd, data + length, MAX_JSON_BYTES + 1 - length));

      if (n < 0)
        {
          int saved_errno = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       "OCI layout: cannot read ‘%s’: %s", name, g_strerror (saved_errno));
          return NULL;
        }
      if (n == 0)
        return parse_json (data, length, name, error);
      length += n;
    }
  set_invalid (error, "OCI layout: ‘%s’ is larger than %d bytes", name, MAX_JSON_BYTES);
  return NULL;
}

static gboolean
is_index_type (const char *media_type)
{
  return g_strcmp0 (media_type, OCI_INDEX) == 0 || g_strcmp0 (media_type, DOCKER_INDEX) == 0;
}

static gboolean
is_manifest_type (const char *media_type)
{
  return g_strcmp0 (media_type, OCI_MANIFEST) == 0 || g_strcmp0 (media_type, DOCKER_MANIFEST) == 0;
}

/*
 * choose_manifest:
 * @index: an image index (index.json or a nested one)
 * @nested: %FALSE for index.json, which chooses by the "latest" ref name;
 *   %TRUE for a nested index, which chooses by platform
 *
 * Returns: %TRUE with @chosen filled in, or %FALSE if there is no single one
 */
static gboolean
choose_manifest (JsonObject  *index,
                 gboolean     nested,
                 Descriptor  *chosen,
                 GError     **error)
{
  JsonArray *manifests = member_array (index, "manifests");
  guint n_matches = 0;

  if (manifests == NULL || json_array_get_length (manifests) == 0)
    return set_invalid (error, "OCI layout: an image index lists no manifests");
  if (json_array_get_length (manifests) == 1)
    return parse_descriptor (json_array_get_element (manifests, 0), chosen, error);

  for (guint i = 0; i < json_array_get_length (manifests); i++)
    {
      Descriptor descriptor;
      gboolean match;

      if (!parse_descriptor (json_array_get_element (manifests, i), &descriptor, error))
        return FALSE;
      if (!nested)
        match = g_strcmp0 (member_string (member_object (descriptor.object, "annotations"),
                                          REF_NAME_ANNOTATION), "latest") == 0;
      else
        {
          JsonObject *platform = member_object (descriptor.object, "platform");

          match = g_strcmp0 (member_string (platform, "os"), "linux") == 0 &&
                  g_strcmp0 (member_string (platform, "architecture"), HOST_ARCHITECTURE) == 0;
        }
      if (match && n_matches++ == 0)
        *chosen = descriptor;
    }

  if (n_matches != 1)
    return set_invalid (error, nested
                        ? "OCI layout: a multi-platform index has %u manifests for linux/" HOST_ARCHITECTURE
                          ", expected one"
                        : "OCI layout: index.json lists several images and %u are tagged “latest”, expected one",
                        n_matches);
  return TRUE;
}

static la_ssize_t
archive_read_blob (struct archive  *archive,
                   void            *data,
                   const void     **buffer)
{
  Blob *blob = data;
  ssize_t n = blob_read (blob);

  if (n < 0 && errno == EFBIG)
    archive_set_error (archive, EFBIG, "blob %s is larger than its descriptor's size", blob->digest);
  else if (n < 0)
    archive_set_error (archive, errno, "cannot read blob %s: %s", blob->digest, g_strerror (errno));
  *buffer = blob->buffer;
  return n;
}

static gboolean
apply_layer (SandboxRuntimeLayers  *layers,
             int                    layout_fd,
             const Descriptor      *descriptor,
             GError               **error)
{
  g_auto(Blob) blob = { .fd = -1 };
  struct archive *archive;
  gboolean ok;
  gsize i;

  for (i = 0; i < G_N_ELEMENTS (layer_types); i++)
    if (strcmp (descriptor->media_type, layer_types[i].media_type) == 0)
      break;
  if (i == G_N_ELEMENTS (layer_types))
    return set_invalid (error, "OCI layout: layer %s has the unsupported media type ‘%s’",
                        descriptor->digest, descriptor->media_type);
  if (!blob_open (&blob, layout_fd, descriptor, error))
    return FALSE;

  archive = archive_read_new ();
  archive_read_support_format_tar (archive);
  if (layer_types[i].compression == LAYER_GZIP)
    archive_read_support_filter_gzip (archive);
  else if (layer_types[i].compression == LAYER_ZSTD)
    archive_read_support_filter_zstd (archive);
  else
    archive_read_support_filter_none (archive);

  if (archive_read_open (archive, &blob, NULL, archive_read_blob, NULL) != ARCHIVE_OK)
    ok = set_invalid (error, "Layer %s is not a readable tar archive: %s", descriptor->digest,
                      archive_error_string (archive));
  else
    ok = sandbox_runtime_layers_apply (layers, archive, descriptor->digest, error);
  archive_read_free (archive);

  /* What the tar's end left unread is hashed too. */
  return ok && blob_check (&blob, error);
}

/**
 * sandbox_runtime_unpack_oci_layout:
 * @layout_dirfd: an OCI image layout directory
 * @target_dirfd: an empty directory the caller made
 * @limits: (nullable): the bounds, or %NULL for the defaults
 * @progress: (nullable) (scope call): called every few hundred entries
 * @user_data: data for @progress
 * @cancellable: (nullable): checked between entries
 * @error: return location for a #GError
 *
 * Unpacks the layout's image, as the comment at the top of
 * sandbox-runtime-oci.c chooses it, into @target_dirfd, every layer in
 * order, keeping and dropping what sandbox-runtime-unpack-private.h lists.
 * Invalid entries, layouts and blobs that do not match their digests are
 * %SANDBOX_ERROR_INVALID; limits %SANDBOX_ERROR_LIMIT.
 *
 * Returns: %TRUE when the whole image was unpacked; on %FALSE the target
 *   holds part of it, and the caller removes it
 */
gboolean
sandbox_runtime_unpack_oci_layout (int                         layout_dirfd,
                                   int                         target_dirfd,
                                   const SandboxRuntimeLimits *limits,
                                   SandboxRuntimeProgressFunc  progress,
                                   gpointer                    user_data,
                                   GCancellable               *cancellable,
                                   GError                    **error)
{
  g_autoptr(JsonNode) layout = NULL;
  g_autoptr(JsonNode) index = NULL;
  g_autoptr(JsonNode) nested = NULL;
  g_autoptr(JsonNode) manifest = NULL;
  g_autoptr(SandboxRuntimeLayers) layers = NULL;
  SandboxRuntimeBudget budget;
  Descriptor chosen;
  JsonArray *layer_list;
  JsonObject *config;

  sandbox_runtime_budget_init (&budget, limits, progress, user_data, cancellable);

  layout = read_json_file (layout_dirfd, "oci-layout", error);
  if (layout == NULL)
    return FALSE;
  if (g_strcmp0 (member_string (json_node_get_object (layout), "imageLayoutVersion"), "1.0.0") != 0)
    return set_invalid (error, "OCI layout: oci-layout does not say imageLayoutVersion 1.0.0");

  index = read_json_file (layout_dirfd, "index.json", error);
  if (index == NULL || !choose_manifest (json_node_get_object (index), FALSE, &chosen, error))
    return FALSE;
  if (is_index_type (chosen.media_type))
    {
      nested = read_json_blob (layout_dirfd, &chosen, error);
      if (nested == NULL || !choose_manifest (json_node_get_object (nested), TRUE, &chosen, error))
        return FALSE;
    }
  if (!is_manifest_type (chosen.media_type))
    return set_invalid (error, "OCI layout: %s is a ‘%s’, not an image manifest", chosen.digest,
                        chosen.media_type);

  manifest = read_json_blob (layout_dirfd, &chosen, error);
  if (manifest == NULL)
    return FALSE;
  layer_list = member_array (json_node_get_object (manifest), "layers");
  if (layer_list == NULL)
    return set_invalid (error, "OCI layout: manifest %s has no layers", chosen.digest);

  /* The config is not used, but checked like every blob the image names. */
  config = member_object (json_node_get_object (manifest), "config");
  if (config != NULL)
    {
      Descriptor descriptor;
      g_autoptr(JsonNode) config_node = NULL;

      if (!parse_descriptor (json_object_get_member (json_node_get_object (manifest), "config"),
                             &descriptor, error))
        return FALSE;
      config_node = read_json_blob (layout_dirfd, &descriptor, error);
      if (config_node == NULL)
        return FALSE;
    }

  layers = sandbox_runtime_layers_new (target_dirfd, &budget);
  for (guint i = 0; i < json_array_get_length (layer_list); i++)
    {
      Descriptor descriptor;

      if (g_cancellable_set_error_if_cancelled (cancellable, error) ||
          !parse_descriptor (json_array_get_element (layer_list, i), &descriptor, error) ||
          !apply_layer (layers, layout_dirfd, &descriptor, error))
        return FALSE;
    }
  if (!sandbox_runtime_layers_finish (layers, error))
    return FALSE;

  sandbox_runtime_budget_finish (&budget);
  return TRUE;
}

/**
 * sandbox_runtime_source_is_oci_layout:
 * @source_dirfd: a directory to import a runtime from
 *
 * Tells an OCI image layout (it has an `oci-layout` file) from a root file
 * system directory, which import copies as it is.
 *
 * Returns: %TRUE if @source_dirfd holds a regular file `oci-layout`
 */
gboolean
sandbox_runtime_source_is_oci_layout (int source_dirfd)
{
  struct stat st;

  return fstatat (source_dirfd, "oci-layout", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode);
}
