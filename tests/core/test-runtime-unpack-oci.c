/* test-runtime-unpack-oci.c — runtimes from OCI image layouts, hostile ones
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Layouts come from umoci (a real image tool) where a well-formed image is
 * wanted, and are written here with libarchive's writer, GChecksum and
 * plain JSON where an image must be exactly what an attacker would make.
 * Hostile images unpack into target/rootfs, so that "../../etc/x" would
 * land inside the scratch root, where scratch_assert_outside_untouched()
 * looks.
 */

#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sandbox-error.h"
#include "sandbox-runtime-unpack-private.h"
#include "test-runtime-unpack-common.h"

#define LAYER_TAR "application/vnd.oci.image.layer.v1.tar"
#define LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define LAYER_ZSTD "application/vnd.oci.image.layer.v1.tar+zstd"

typedef struct
{
  const char *path;
  mode_t      type;      /* AE_IFREG, AE_IFDIR, AE_IFLNK, AE_IFCHR, … */
  mode_t      perm;
  const char *data;      /* a file's contents, a link's target */
  const char *hardlink;  /* a hard link's target, or NULL */
  gint64      sparse;    /* a sparse file's size, or 0 */
} TestEntry;

/* --- writing layers and layouts --------------------------------------- */

static la_ssize_t
append_to_array (struct archive *archive,
                 void           *data,
                 const void     *buffer,
                 size_t          length)
{
  g_byte_array_append (data, buffer, length);
  return length;
}

static void
add_entry (struct archive  *archive,
           const TestEntry *test_entry)
{
  struct archive_entry *entry = archive_entry_new ();
  gsize length = test_entry->data != NULL ? strlen (test_entry->data) : 0;

  archive_entry_set_pathname (entry, test_entry->path);
  archive_entry_set_perm (entry, test_entry->perm);
  archive_entry_set_uid (entry, 0);
  archive_entry_set_gid (entry, 0);
  if (test_entry->hardlink != NULL)
    {
      archive_entry_set_filetype (entry, AE_IFREG);
      archive_entry_set_hardlink (entry, test_entry->hardlink);
      archive_entry_set_size (entry, 0);
    }
  else
    {
      archive_entry_set_filetype (entry, test_entry->type);
      if (test_entry->type == AE_IFLNK)
        archive_entry_set_symlink (entry, test_entry->data);
      if (test_entry->type == AE_IFCHR)
        archive_entry_set_rdev (entry, makedev (1, 3));
      if (test_entry->type == AE_IFREG)
        archive_entry_set_size (entry, test_entry->sparse != 0 ? test_entry->sparse : (gint64) length);
      if (test_entry->sparse != 0)
        {
          /* One block of data at the start, the rest a hole. */
          archive_entry_sparse_add_entry (entry, 0, length);
          archive_entry_sparse_add_entry (entry, test_entry->sparse, 0);
        }
    }
  g_assert_cmpint (archive_write_header (archive, entry), ==, ARCHIVE_OK);
  if (test_entry->type == AE_IFREG && test_entry->hardlink == NULL && length > 0)
    g_assert_cmpint (archive_write_data (archive, test_entry->data, length), ==, (la_ssize_t) length);
  archive_entry_free (entry);
}

/* A tar layer, compressed as @media_type says. */
static GBytes *
build_layer (const char      *media_type,
             const TestEntry *entries,
             gsize            n_entries)
{
  GByteArray *array = g_byte_array_new ();
  struct archive *archive = archive_write_new ();

  g_assert_cmpint (archive_write_set_format_pax_restricted (archive), ==, ARCHIVE_OK);
  if (g_str_has_suffix (media_type, "+gzip"))
    g_assert_cmpint (archive_write_add_filter_gzip (archive), ==, ARCHIVE_OK);
  else if (g_str_has_suffix (media_type, "+zstd"))
    g_assert_cmpint (archive_write_add_filter_zstd (archive), ==, ARCHIVE_OK);
  archive_write_set_bytes_in_last_block (archive, 1);
  g_assert_cmpint (archive_write_open (archive, array, NULL, append_to_array, NULL), ==, ARCHIVE_OK);
  for (gsize i = 0; i < n_entries; i++)
    add_entry (archive, &entries[i]);
  g_assert_cmpint (archive_write_close (archive), ==, ARCHIVE_OK);
  archive_write_free (archive);
  return g_byte_array_free_to_bytes (array);
}

/* Writes @data as a blob of @layout. Returns its digest. */
static char *
put_blob (const char    *layout,
          gconstpointer  data,
          gsize          length)
{
  g_autofree char *hex = g_compute_checksum_for_data (G_CHECKSUM_SHA256, data, length);
  g_autofree char *directory = g_build_filename (layout, "blobs", "sha256", NULL);
  g_autofree char *path = g_build_filename (directory, hex, NULL);
  g_autoptr(GError) error = NULL;

  g_assert_no_errno (g_mkdir_with_parents (directory, 0755));
  g_file_set_contents_full (path, data, length, G_FILE_SET_CONTENTS_NONE, 0644, &error);
  g_assert_no_error (error);
  return g_strconcat ("sha256:", hex, NULL);
}

static void
put_text (const char *layout,
          const char *name,
          const char *text)
{
  g_autofree char *path = g_build_filename (layout, name, NULL);
  g_autoptr(GError) error = NULL;

  /* Without its flags, g_file_set_contents_full() may write over a longer
   * file in place. */
  unlink (path);
  g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_NONE, 0644, &error);
  g_assert_no_error (error);
}

typedef enum
{
  FLAW_NONE,
  FLAW_MANIFEST_DIGEST,   /* the manifest blob changed after it was named */
  FLAW_LAYER_DIGEST,      /* a byte of the last layer changed likewise */
  FLAW_LAYER_SIZE,        /* the last layer's descriptor one byte short */
} Flaw;

/* An OCI layout of one image, its layers bottom first. */
static void
write_layout (const char  *layout,
              const char **media_types,
              GBytes     **layers,
              guint        n_layers,
              Flaw         flaw)
{
  g_autoptr(GString) manifest = g_string_new (NULL);
  g_autofree char *config = NULL;
  g_autofree char *manifest_digest = NULL;
  g_autofree char *index = NULL;
  const char *config_text = "{\"architecture\":\"amd64\",\"os\":\"linux\",\"rootfs\":{\"type\":\"layers\"}}";

  g_assert_no_errno (g_mkdir_with_parents (layout, 0755));
  put_text (layout, "oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}");
  config = put_blob (layout, config_text, strlen (config_text));
  g_string_append_printf (manifest,
                          "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
                          "\"config\":{\"mediaType\":\"application/vnd.oci.image.config.v1+json\","
                          "\"digest\":\"%s\",\"size\":%zu},\"layers\":[",
                          config, strlen (config_text));
  for (guint i = 0; i < n_layers; i++)
    {
      gsize size;
      const guint8 *data = g_bytes_get_data (layers[i], &size);
      g_autofree char *digest = NULL;

      digest = put_blob (layout, data, size);
      if (i + 1 == n_layers && flaw == FLAW_LAYER_DIGEST)
        {
          /* Same name and size, one byte of a file's contents changed. */
          g_autofree char *path = g_build_filename (layout, "blobs", "sha256", digest + 7, NULL);
          g_autofree guint8 *changed = g_memdup2 (data, size);
          guint8 *byte = memmem (changed, size, "payload", 7);

          g_assert_nonnull (byte);
          *byte = 'P';
          g_assert_true (g_file_set_contents (path, (const char *) changed, size, NULL));
        }
      g_string_append_printf (manifest, "%s{\"mediaType\":\"%s\",\"digest\":\"%s\",\"size\":%zu}",
                              i > 0 ? "," : "", media_types[i], digest,
                              size - (i + 1 == n_layers && flaw == FLAW_LAYER_SIZE ? 1 : 0));
    }
  g_string_append (manifest, "]}");
  manifest_digest = put_blob (layout, manifest->str, manifest->len);
  if (flaw == FLAW_MANIFEST_DIGEST)
    {
      g_autofree char *path = g_build_filename (layout, "blobs", "sha256", manifest_digest + 7, NULL);
      char *version = strstr (manifest->str, "\"schemaVersion\":2");

      version[strlen ("\"schemaVersion\":")] = '3';
      g_assert_true (g_file_set_contents (path, manifest->str, manifest->len, NULL));
    }
  index = g_strdup_printf ("{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":"
                           "\"application/vnd.oci.image.manifest.v1+json\",\"digest\":\"%s\",\"size\":%zu,"
                           "\"annotations\":{\"org.opencontainers.image.ref.name\":\"latest\"}}]}",
                           manifest_digest, manifest->len);
  put_text (layout, "index.json", index);
}

static void
write_one_layer_layout (const char      *layout,
                        const char      *media_type,
                        const TestEntry *entries,
                        gsize            n_entries,
                        Flaw             flaw)
{
  g_autoptr(GBytes) layer = build_layer (media_type, entries, n_entries);

  write_layout (layout, &media_type, &layer, 1, flaw);
}

static gboolean
unpack_layout_into (const char                 *layout,
                    const char                 *target,
                    const SandboxRuntimeLimits *limits,
                    GError                    **error)
{
  int layout_fd = open (layout, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int target_fd;
  gboolean ok;

  g_assert_cmpint (layout_fd, >=, 0);
  g_assert_no_errno (mkdir (target, 0755));
  target_fd = open (target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (target_fd, >=, 0);
  g_assert_true (sandbox_runtime_source_is_oci_layout (layout_fd));
  ok = sandbox_runtime_unpack_oci_layout (layout_fd, target_fd, limits, NULL, NULL, NULL, error);
  close (target_fd);
  close (layout_fd);
  return ok;
}

/* The scratch's layout unpacked into target/rootfs. */
static gboolean
unpack_scratch_layout (Scratch                    *scratch,
                       const SandboxRuntimeLimits *limits,
                       GError                    **error)
{
  g_autofree char *layout = g_build_filename (scratch->root, "layout", NULL);
  g_autofree char *rootfs = g_build_filename (scratch->target, "rootfs", NULL);

  return unpack_layout_into (layout, rootfs, limits, error);
}

static char *
scratch_layout (Scratch *scratch)
{
  return g_build_filename (scratch->root, "layout", NULL);
}

static char *
scratch_rootfs (Scratch *scratch)
{
  return g_build_filename (scratch->target, "rootfs", NULL);
}

static gboolean
exists_at (const char *root,
           const char *relative)
{
  g_autofree char *path = g_build_filename (root, relative, NULL);
  struct stat st;

  return lstat (path, &st) == 0;
}

/* The hostile layer refused with @code and a message holding @needle, and
 * nothing outside the target touched. */
static void
assert_refused (Scratch    *scratch,
                const char *media_type,
                const TestEntry *entries,
                gsize       n_entries,
                gint        code,
                const char *needle)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);

  write_one_layer_layout (layout, media_type, entries, n_entries, FLAW_NONE);
  g_assert_false (unpack_scratch_layout (scratch, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, code);
  if (strstr (error->message, needle) == NULL)
    g_error ("Expected “%s” in “%s”", needle, error->message);
  g_test_message ("Refused: %s", error->message);
  scratch_assert_outside_untouched (scratch);
  g_assert_cmpuint (sandbox_test_count_dir (scratch->target), ==, 1);
}

/* --- well-formed images ------------------------------------------------ */

static gboolean
run (const char * const *argv,
     const char         *cwd)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  int status = 0;

  if (!g_spawn_sync (cwd, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                     NULL, NULL, NULL, &err, &status, &error))
    {
      g_test_message ("%s: %s", argv[0], error->message);
      return FALSE;
    }
  if (!g_spawn_check_wait_status (status, &error))
    {
      g_test_message ("%s %s: %s: %s", argv[0], argv[1], error->message, err);
      return FALSE;
    }
  return TRUE;
}

/* The sample tree imported as a directory and as an image umoci made of
 * it: the same key. */
static void
test_oci_umoci_same_key (Scratch       *scratch,
                         gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);
  g_autofree char *rootfs = scratch_rootfs (scratch);
  g_autofree char *bundle = g_build_filename (scratch->outside, "bundle", NULL);
  g_autofree char *bundle_rootfs = g_build_filename (bundle, "rootfs", NULL);
  g_autofree char *image = g_strconcat (layout, ":latest", NULL);
  g_autofree char *copy = g_strconcat (scratch->source, "/.", NULL);
  g_autofree char *direct = g_build_filename (scratch->target, "direct", NULL);
  g_autofree char *key_direct = NULL;
  g_autofree char *key_oci = NULL;
  const char *init[] = { "umoci", "init", "--layout", layout, NULL };
  const char *new_image[] = { "umoci", "new", "--image", image, NULL };
  const char *unpack[] = { "umoci", "unpack", "--rootless", "--image", image, bundle, NULL };
  const char *cp[] = { "cp", "-a", copy, bundle_rootfs, NULL };
  const char *repack[] = { "umoci", "repack", "--image", image, bundle, NULL };
  g_autofree char *umoci = g_find_program_in_path ("umoci");
  int source_fd, direct_fd;

  if (umoci == NULL)
    {
      g_test_skip ("umoci is not installed");
      return;
    }
  runtime_unpack_make_sample_tree (scratch->source);
  g_assert_true (run (init, NULL));
  g_assert_true (run (new_image, NULL));
  g_assert_true (run (unpack, NULL));
  g_assert_true (run (cp, NULL));
  g_assert_true (run (repack, NULL));
  scratch_remove (bundle);

  g_assert_true (unpack_layout_into (layout, rootfs, NULL, &error));
  g_assert_no_error (error);
  g_assert_no_errno (mkdir (direct, 0755));
  source_fd = open (scratch->source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  direct_fd = open (direct, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_true (sandbox_runtime_unpack_directory (source_fd, direct_fd, NULL, NULL, NULL, NULL, &error));
  g_assert_no_error (error);
  close (source_fd);
  close (direct_fd);

  key_direct = tree_key (direct);
  key_oci = tree_key (rootfs);
  g_assert_cmpstr (key_direct, ==, key_oci);

  /* What the image kept and lost, as the directory did. */
  {
    g_autofree char *su = g_build_filename (rootfs, "usr/bin/su", NULL);
    g_autofree char *tool = g_build_filename (rootfs, "usr/bin/tool", NULL);
    g_autofree char *tool_again = g_build_filename (rootfs, "usr/bin/tool-again", NULL);
    g_autofree char *host_etc = g_build_filename (rootfs, "host-etc", NULL);
    g_autofree char *link_target = g_file_read_link (host_etc, NULL);
    struct stat st, again;

    g_assert_no_errno (lstat (su, &st));
    g_assert_cmpint (st.st_mode & 07777, ==, 0755);
    g_assert_no_errno (lstat (tool, &st));
    g_assert_no_errno (lstat (tool_again, &again));
    g_assert_cmpuint (st.st_ino, ==, again.st_ino);
    g_assert_cmpstr (link_target, ==, "/etc");
  }

  /* A file of the image changed: another key. */
  {
    g_autofree char *other = g_build_filename (scratch->target, "other", NULL);
    g_autofree char *os_release = g_build_filename (bundle_rootfs, "etc/os-release", NULL);
    g_autofree char *key_other = NULL;

    g_assert_true (run (unpack, NULL));
    g_assert_true (g_file_set_contents (os_release, "ID=other\n", -1, NULL));
    g_assert_true (run (repack, NULL));
    scratch_remove (bundle);
    g_assert_true (unpack_layout_into (layout, other, NULL, &error));
    g_assert_no_error (error);
    key_other = tree_key (other);
    g_assert_cmpstr (key_other, !=, key_oci);
  }
}

/* The same layer as tar, tar+gzip and tar+zstd: the same tree. */
static void
test_oci_compressions (Scratch       *scratch,
                       gconstpointer  data)
{
  static const TestEntry entries[] = {
    { "./", AE_IFDIR, 0755 },
    { "./usr/", AE_IFDIR, 0755 },
    { "./usr/bin/", AE_IFDIR, 0755 },
    { "./usr/bin/tool", AE_IFREG, 0755, "#!/bin/sh\n" },
    { "./usr/bin/tool2", AE_IFREG, 0755, NULL, "./usr/bin/tool" },
    { "./bin", AE_IFLNK, 0777, "usr/bin" },
    { "./tmp/", AE_IFDIR, 01777 },
  };
  const char *types[] = { LAYER_TAR, LAYER_GZIP, LAYER_ZSTD };
  g_autofree char *first_key = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (types); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *layout = g_strdup_printf ("%s/layout-%u", scratch->outside, i);
      g_autofree char *target = g_strdup_printf ("%s/%u", scratch->target, i);
      g_autofree char *key = NULL;

      write_one_layer_layout (layout, types[i], entries, G_N_ELEMENTS (entries), FLAW_NONE);
      g_assert_true (unpack_layout_into (layout, target, NULL, &error));
      g_assert_no_error (error);
      key = tree_key (target);
      if (first_key == NULL)
        first_key = g_steal_pointer (&key);
      else
        g_assert_cmpstr (key, ==, first_key);
      g_assert_true (exists_at (target, "usr/bin/tool2"));
    }
}

/* Whiteouts remove what the layers below made, an opaque directory all of
 * it; what the same layer made stays; later entries replace earlier ones. */
static void
test_oci_whiteouts (Scratch       *scratch,
                    gconstpointer  data)
{
  static const TestEntry lower[] = {
    { "a/", AE_IFDIR, 0755 },
    { "a/x", AE_IFREG, 0644, "x" },
    { "a/y", AE_IFREG, 0644, "y" },
    { "b/", AE_IFDIR, 0555 },
    { "b/old", AE_IFREG, 0644, "old" },
    { "b/sub/", AE_IFDIR, 0755 },
    { "b/sub/deep", AE_IFREG, 0644, "deep" },
    { "c", AE_IFREG, 0644, "c was a file" },
    { "d/", AE_IFDIR, 0755 },
    { "d/inside", AE_IFREG, 0644, "d was a directory" },
    { "e", AE_IFREG, 0644, "e was a file" },
  };
  static const TestEntry upper[] = {
    { "a/.wh.x", AE_IFREG, 0644, "" },
    { "b/new", AE_IFREG, 0644, "new" },
    { "b/.wh..wh..opq", AE_IFREG, 0644, "" },
    { "c/", AE_IFDIR, 0750 },
    { "c/now", AE_IFREG, 0644, "now a directory" },
    { "d", AE_IFREG, 0600, "now a file" },
    { "e", AE_IFLNK, 0777, "a/y" },
    { ".wh.never-there", AE_IFREG, 0644, "" },
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);
  g_autofree char *rootfs = scratch_rootfs (scratch);
  g_autoptr(GBytes) lower_layer = build_layer (LAYER_GZIP, lower, G_N_ELEMENTS (lower));
  g_autoptr(GBytes) upper_layer = build_layer (LAYER_TAR, upper, G_N_ELEMENTS (upper));
  GBytes *layers[] = { lower_layer, upper_layer };
  const char *types[] = { LAYER_GZIP, LAYER_TAR };
  g_autofree char *b = g_build_filename (rootfs, "b", NULL);
  g_autofree char *d = g_build_filename (rootfs, "d", NULL);
  struct stat st;

  write_layout (layout, types, layers, 2, FLAW_NONE);
  g_assert_true (unpack_scratch_layout (scratch, NULL, &error));
  g_assert_no_error (error);

  g_assert_false (exists_at (rootfs, "a/x"));
  g_assert_true (exists_at (rootfs, "a/y"));
  g_assert_false (exists_at (rootfs, "a/.wh.x"));
  g_assert_false (exists_at (rootfs, "b/old"));
  g_assert_false (exists_at (rootfs, "b/sub"));
  g_assert_true (exists_at (rootfs, "b/new"));
  g_assert_false (exists_at (rootfs, "b/.wh..wh..opq"));
  g_assert_true (exists_at (rootfs, "c/now"));
  g_assert_false (exists_at (rootfs, ".wh.never-there"));
  g_assert_no_errno (lstat (b, &st));
  g_assert_cmpint (st.st_mode & 07777, ==, 0555);
  g_assert_no_errno (lstat (d, &st));
  g_assert_true (S_ISREG (st.st_mode));
  g_assert_cmpint (st.st_mode & 07777, ==, 0600);
  {
    g_autofree char *e = g_build_filename (rootfs, "e", NULL);
    g_autofree char *target = g_file_read_link (e, NULL);

    g_assert_cmpstr (target, ==, "a/y");
  }
  {
    g_autofree char *c = g_build_filename (rootfs, "c", NULL);

    g_assert_no_errno (lstat (c, &st));
    g_assert_true (S_ISDIR (st.st_mode));
    g_assert_cmpint (st.st_mode & 07777, ==, 0750);
  }
}

/* Modes that keep even the owner out (Fedora's /etc/shadow is 0000): the
 * unpack gives them, the key still reads the entries and gives the modes
 * back, and sees what is inside. */
static void
test_oci_unreadable_modes (Scratch       *scratch,
                           gconstpointer  data)
{
  TestEntry entries[] = {
    { "etc/", AE_IFDIR, 0755 },
    { "etc/shadow", AE_IFREG, 0000, "root:*:19000:0:99999:7:::" },
    { "locked/", AE_IFDIR, 0000 },
    { "locked/inside", AE_IFREG, 0644, "one" },
    { "locked/sub/", AE_IFDIR, 0300 },
    { "locked/sub/deeper", AE_IFREG, 0200, "write only" },
  };
  g_autofree char *first_key = NULL;

  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *layout = g_strdup_printf ("%s/layout-%u", scratch->outside, i);
      g_autofree char *target = g_strdup_printf ("%s/%u", scratch->target, i);
      g_autofree char *shadow = g_build_filename (target, "etc/shadow", NULL);
      g_autofree char *locked = g_build_filename (target, "locked", NULL);
      g_autofree char *key = NULL;
      g_autofree char *again = NULL;
      struct stat st;

      entries[3].data = i == 0 ? "one" : "two";
      write_one_layer_layout (layout, LAYER_GZIP, entries, G_N_ELEMENTS (entries), FLAW_NONE);
      g_assert_true (unpack_layout_into (layout, target, NULL, &error));
      g_assert_no_error (error);
      key = tree_key (target);
      again = tree_key (target);
      g_assert_cmpstr (key, ==, again);
      g_assert_no_errno (lstat (shadow, &st));
      g_assert_cmpint (st.st_mode & 07777, ==, 0000);
      g_assert_no_errno (lstat (locked, &st));
      g_assert_cmpint (st.st_mode & 07777, ==, 0000);
      if (first_key == NULL)
        first_key = g_steal_pointer (&key);
      else
        g_assert_cmpstr (key, !=, first_key);
    }
}

/* An index.json naming a multi-platform image index: followed one level,
 * to its one manifest, or to the one for this machine's platform. */
static void
test_oci_nested_index (Scratch       *scratch,
                       gconstpointer  data)
{
  static const TestEntry entries[] = {
    { "file", AE_IFREG, 0644, "payload" },
  };
  g_autofree char *layout = scratch_layout (scratch);
  g_autofree char *index_path = g_build_filename (layout, "index.json", NULL);
  g_autofree char *index = NULL;
  g_autofree char *item = NULL;

#if !defined(__x86_64__)
  g_test_skip ("The platform case is written for linux/amd64");
  return;
#endif
  write_one_layer_layout (layout, LAYER_TAR, entries, G_N_ELEMENTS (entries), FLAW_NONE);
  g_assert_true (g_file_get_contents (index_path, &index, NULL, NULL));
  {
    const char *open_list = strchr (index, '[');
    const char *close_list = strrchr (index, ']');

    /* The manifest's descriptor without its closing brace. */
    item = g_strndup (open_list + 1, close_list - open_list - 2);
  }

  for (guint i = 0; i < 3; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *target = g_strdup_printf ("%s/%u", scratch->target, i);
      g_autofree char *nested = NULL;
      g_autofree char *nested_digest = NULL;
      g_autofree char *top = NULL;

      if (i == 0)
        nested = g_strdup_printf ("{\"schemaVersion\":2,\"manifests\":[%s}]}", item);
      else
        nested = g_strdup_printf ("{\"schemaVersion\":2,\"manifests\":["
                                  "%s,\"platform\":{\"os\":\"linux\",\"architecture\":\"s390x\"}},"
                                  "%s,\"platform\":{\"os\":\"linux\",\"architecture\":\"%s\"}}]}",
                                  item, item, i == 1 ? "amd64" : "arm64");
      nested_digest = put_blob (layout, nested, strlen (nested));
      top = g_strdup_printf ("{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":"
                             "\"application/vnd.oci.image.index.v1+json\",\"digest\":\"%s\",\"size\":%zu}]}",
                             nested_digest, strlen (nested));
      put_text (layout, "index.json", top);
      if (i < 2)
        {
          gboolean ok = unpack_layout_into (layout, target, NULL, &error);

          g_assert_no_error (error);
          g_assert_true (ok);
          g_assert_true (exists_at (target, "file"));
        }
      else
        {
          g_assert_false (unpack_layout_into (layout, target, NULL, &error));
          g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
          g_assert_nonnull (strstr (error->message, "0 manifests for linux/amd64"));
        }
    }
}

/* --- hostile images ----------------------------------------------------- */

static void
test_hostile_dotdot (Scratch       *scratch,
                     gconstpointer  data)
{
  static const TestEntry entries[] = {
    { "../../etc/", AE_IFDIR, 0755 },
    { "../../etc/x", AE_IFREG, 0644, "escaped" },
  };

  assert_refused (scratch, LAYER_TAR, entries, G_N_ELEMENTS (entries), SANDBOX_ERROR_INVALID,
                  "‘../../etc/’ has an empty, “.” or “..” component");
}

static void
test_hostile_dotdot_inside (Scratch       *scratch,
                            gconstpointer  data)
{
  static const TestEntry entries[] = {
    { "usr/", AE_IFDIR, 0755 },
    { "usr/../../outside/x", AE_IFREG, 0644, "escaped" },
  };

  assert_refused (scratch, LAYER_TAR, entries, G_N_ELEMENTS (entries), SANDBOX_ERROR_INVALID,
                  "‘usr/../../outside/x’ has an empty");
}

static void
test_hostile_absolute (Scratch       *scratch,
                       gconstpointer  data)
{
  g_autofree char *outside_file = g_build_filename (scratch->outside, "absolute", NULL);
  const TestEntry entries[] = {
    { outside_file, AE_IFREG, 0644, "escaped" },
  };

  assert_refused (scratch, LAYER_TAR, entries, G_N_ELEMENTS (entries), SANDBOX_ERROR_INVALID,
                  "is an absolute path");
}

/* A link to the canary, then a file written through it: in one layer, and
 * in the next. */
static void
test_hostile_symlink_then_file (Scratch       *scratch,
                                gconstpointer  data)
{
  const TestEntry entries[] = {
    { "evil", AE_IFLNK, 0777, scratch->outside },
    { "evil/x", AE_IFREG, 0644, "escaped" },
  };

  assert_refused (scratch, LAYER_TAR, entries, G_N_ELEMENTS (entries), SANDBOX_ERROR_INVALID,
                  "‘evil/x’ goes through a symbolic link");
}

static void
test_hostile_symlink_across_layers (Scratch       *scratch,
                                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);
  g_autofree char *relative = g_strdup ("../../outside");
  const TestEntry first[] = {
    { "evil", AE_IFLNK, 0777, scratch->outside },
    { "rel", AE_IFLNK, 0777, relative },
  };
  static const TestEntry second[] = {
    { "evil/x", AE_IFREG, 0644, "escaped" },
    { "rel/", AE_IFDIR, 0755 },
    { "rel/y", AE_IFREG, 0644, "escaped" },
  };
  g_autoptr(GBytes) first_layer = build_layer (LAYER_TAR, first, G_N_ELEMENTS (first));
  g_autoptr(GBytes) second_layer = build_layer (LAYER_TAR, second, G_N_ELEMENTS (second));
  GBytes *layers[] = { first_layer, second_layer };
  const char *types[] = { LAYER_TAR, LAYER_TAR };

  write_layout (layout, types, layers, 2, FLAW_NONE);
  g_assert_false (unpack_scratch_layout (scratch, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "goes through a symbolic link"));
  scratch_assert_outside_untouched (scratch);
}

static void
test_hostile_hardlink_host (Scratch       *scratch,
                            gconstpointer  data)
{
  static const TestEntry entries[] = {
    { "passwd", AE_IFREG, 0644, NULL, "/etc/passwd" },
  };

  assert_refused (scratch, LAYER_TAR, entries, G_N_ELEMENTS (entries), SANDBOX_ERROR_INVALID,
                  "‘/etc/passwd’ is an absolute path");
}

static void
test_hostile_hardlink_dotdot (Scratch       *scratch,
                              gconstpointer  data)
{
  static const TestEntry entries[] = {
    { "secret", AE_IFREG, 0644, NULL, "../../secret" },
  };
  g_autofree char *secret = g_build_filename (scratch->root, "secret", NULL);

  /* A host file next to the target, two levels up from target/rootfs. */
  g_assert_true (g_file_set_contents (secret, "host secret", -1, NULL));
  assert_refused (scratch, LAYER_TAR, entries, G_N_ELEMENTS (entries), SANDBOX_ERROR_INVALID,
                  "‘../../secret’ has an empty");
}

static void
test_hostile_hardlink_missing (Scratch       *scratch,
                               gconstpointer  data)
{
  static const TestEntry entries[] = {
    { "link", AE_IFREG, 0644, NULL, "no/such/file" },
  };

  assert_refused (scratch, LAYER_TAR, entries, G_N_ELEMENTS (entries), SANDBOX_ERROR_INVALID,
                  "is a hard link to no entry of the image");
}

static void
test_hostile_setuid_and_device (Scratch       *scratch,
                                gconstpointer  data)
{
  static const TestEntry entries[] = {
    { "usr/bin/", AE_IFDIR, 0755 },
    { "usr/bin/su", AE_IFREG, 04755, "setuid root" },
    { "usr/bin/wall", AE_IFREG, 02755, "setgid" },
    { "dev/", AE_IFDIR, 0755 },
    { "dev/mem", AE_IFCHR, 0666 },
    { "dev/fifo", AE_IFIFO, 0666 },
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);
  g_autofree char *rootfs = scratch_rootfs (scratch);
  g_autofree char *su = g_build_filename (rootfs, "usr/bin/su", NULL);
  g_autofree char *wall = g_build_filename (rootfs, "usr/bin/wall", NULL);
  struct stat st;

  write_one_layer_layout (layout, LAYER_GZIP, entries, G_N_ELEMENTS (entries), FLAW_NONE);
  g_assert_true (unpack_scratch_layout (scratch, NULL, &error));
  g_assert_no_error (error);
  g_assert_no_errno (lstat (su, &st));
  g_assert_cmpint (st.st_mode & 07777, ==, 0755);
  g_assert_cmpint (st.st_uid, ==, geteuid ());
  g_assert_no_errno (lstat (wall, &st));
  g_assert_cmpint (st.st_mode & 07777, ==, 0755);
  g_assert_true (exists_at (rootfs, "dev"));
  g_assert_false (exists_at (rootfs, "dev/mem"));
  g_assert_false (exists_at (rootfs, "dev/fifo"));
}

static void
test_hostile_sparse (Scratch       *scratch,
                     gconstpointer  data)
{
  static const TestEntry entries[] = {
    { "huge", AE_IFREG, 0644, "payload", NULL, G_GINT64_CONSTANT (10) << 30 },
  };
  SandboxRuntimeLimits limits = { G_GUINT64_CONSTANT (1) << 30, 1000 };
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);
  g_autofree char *rootfs = scratch_rootfs (scratch);
  gint64 start;

  write_one_layer_layout (layout, LAYER_GZIP, entries, G_N_ELEMENTS (entries), FLAW_NONE);
  start = g_get_monotonic_time ();
  g_assert_false (unpack_scratch_layout (scratch, &limits, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_nonnull (strstr (error->message, "max_bytes (1073741824 bytes), at ‘huge’ (10737418240 bytes)"));
  g_assert_cmpint (g_get_monotonic_time () - start, <, G_USEC_PER_SEC);
  g_assert_false (exists_at (rootfs, "huge"));
  scratch_assert_outside_untouched (scratch);
}

/* A million empty files' headers: 1,000 gzip members of the same 1,000
 * headers, concatenated (gzip readers read on from member to member), so
 * the blob is a few MB and quick to write. */
static void
test_hostile_tar_bomb (Scratch       *scratch,
                       gconstpointer  data)
{
  SandboxRuntimeLimits limits = { SANDBOX_RUNTIME_DEFAULT_MAX_BYTES, 1000 };
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);
  g_autofree char *rootfs = scratch_rootfs (scratch);
  g_autoptr(GByteArray) raw = g_byte_array_new ();
  g_autoptr(GByteArray) member = g_byte_array_new ();
  g_autoptr(GByteArray) bomb = g_byte_array_new ();
  g_autoptr(GZlibCompressor) compressor = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 9);
  g_autoptr(GOutputStream) memory = g_memory_output_stream_new_resizable ();
  g_autoptr(GOutputStream) gzip = g_converter_output_stream_new (memory, G_CONVERTER (compressor));
  g_autoptr(GBytes) layer = NULL;
  const char *type = LAYER_GZIP;
  struct archive *archive;
  gint64 start;

  /* One member: 1,000 ustar headers, the end-of-archive blocks cut off. */
  archive = archive_write_new ();
  archive_write_set_format_ustar (archive);
  archive_write_set_bytes_in_last_block (archive, 1);
  g_assert_cmpint (archive_write_open (archive, raw, NULL, append_to_array, NULL), ==, ARCHIVE_OK);
  for (guint i = 0; i < 1000; i++)
    {
      g_autofree char *name = g_strdup_printf ("f%04u", i);
      TestEntry entry = { name, AE_IFREG, 0644 };

      add_entry (archive, &entry);
    }
  archive_write_close (archive);
  archive_write_free (archive);
  g_assert_cmpuint (raw->len, ==, 1000 * 512 + 1024);
  g_byte_array_set_size (raw, 1000 * 512);
  g_assert_true (g_output_stream_write_all (gzip, raw->data, raw->len, NULL, NULL, NULL));
  g_assert_true (g_output_stream_close (gzip, NULL, NULL));
  g_byte_array_append (member, g_memory_output_stream_get_data (G_MEMORY_OUTPUT_STREAM (memory)),
                       g_memory_output_stream_get_data_size (G_MEMORY_OUTPUT_STREAM (memory)));

  for (guint i = 0; i < 1000; i++)
    g_byte_array_append (bomb, member->data, member->len);
  g_test_message ("Tar bomb: %u bytes of gzip for 1,000,000 headers", bomb->len);
  layer = g_byte_array_free_to_bytes (g_steal_pointer (&bomb));
  write_layout (layout, &type, &layer, 1, FLAW_NONE);

  start = g_get_monotonic_time ();
  g_assert_false (unpack_scratch_layout (scratch, &limits, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_LIMIT);
  g_assert_nonnull (strstr (error->message, "max_entries (1000)"));
  g_assert_cmpuint (sandbox_test_count_dir (rootfs), ==, 1000);
  g_test_message ("Refused after %" G_GINT64_FORMAT " ms", (g_get_monotonic_time () - start) / 1000);
}

static void
assert_flaw_refused (Scratch    *scratch,
                     const char *media_type,
                     Flaw        flaw,
                     const char *needle)
{
  static const TestEntry entries[] = {
    { "file", AE_IFREG, 0644, "payload" },
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);
  g_autoptr(GBytes) layer = build_layer (media_type, entries, G_N_ELEMENTS (entries));

  write_layout (layout, &media_type, &layer, 1, flaw);
  g_assert_false (unpack_scratch_layout (scratch, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  if (strstr (error->message, needle) == NULL)
    g_error ("Expected “%s” in “%s”", needle, error->message);
  scratch_assert_outside_untouched (scratch);
}

static void
test_hostile_manifest_digest (Scratch       *scratch,
                              gconstpointer  data)
{
  assert_flaw_refused (scratch, LAYER_TAR, FLAW_MANIFEST_DIGEST, "does not match its digest");
}

static void
test_hostile_layer_digest (Scratch       *scratch,
                           gconstpointer  data)
{
  assert_flaw_refused (scratch, LAYER_TAR, FLAW_LAYER_DIGEST, "does not match its digest");
}

static void
test_hostile_layer_size (Scratch       *scratch,
                         gconstpointer  data)
{
  assert_flaw_refused (scratch, LAYER_GZIP, FLAW_LAYER_SIZE, "larger than its descriptor's size");
}

/* A gzip layer cut short in the middle of a file's data, after its first
 * entries were read, its descriptor naming the cut blob. */
static void
test_hostile_truncated_gzip (Scratch       *scratch,
                             gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);
  g_autofree char *rootfs = scratch_rootfs (scratch);
  g_autofree char *noise = g_malloc (256 * 1024 + 1);
  TestEntry entries[] = {
    { "first", AE_IFREG, 0644, "the first file is whole" },
    { "noise", AE_IFREG, 0644, noise },
  };
  g_autoptr(GBytes) whole = NULL;
  g_autoptr(GBytes) cut = NULL;
  const char *type = LAYER_GZIP;

  /* Incompressible, so that half the blob ends inside its data. */
  for (gsize i = 0; i < 256 * 1024; i++)
    noise[i] = (char) g_random_int_range (1, 256);
  noise[256 * 1024] = '\0';
  whole = build_layer (LAYER_GZIP, entries, G_N_ELEMENTS (entries));
  cut = g_bytes_new_from_bytes (whole, 0, g_bytes_get_size (whole) / 2);

  write_layout (layout, &type, &cut, 1, FLAW_NONE);
  g_assert_false (unpack_scratch_layout (scratch, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_test_message ("Refused: %s", error->message);
  g_assert_nonnull (strstr (error->message, "cannot read ‘noise’"));
  g_assert_true (exists_at (rootfs, "first"));
  scratch_assert_outside_untouched (scratch);
}

/* A digest that would be a path out of blobs/. */
static void
test_hostile_digest_path (Scratch       *scratch,
                          gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);
  g_autofree char *rootfs = scratch_rootfs (scratch);

  g_assert_no_errno (mkdir (layout, 0755));
  put_text (layout, "oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}");
  put_text (layout, "index.json",
            "{\"schemaVersion\":2,\"manifests\":[{\"mediaType\":\"application/vnd.oci.image.manifest.v1+json\","
            "\"digest\":\"sha256:../../../../etc/passwd\",\"size\":10}]}");
  g_assert_false (unpack_layout_into (layout, rootfs, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "expected a digest"));
}

/* Several images and none tagged "latest": which one is not guessed. */
static void
test_oci_ambiguous_index (Scratch       *scratch,
                          gconstpointer  data)
{
  static const TestEntry entries[] = {
    { "file", AE_IFREG, 0644, "payload" },
  };
  g_autoptr(GError) error = NULL;
  g_autofree char *layout = scratch_layout (scratch);
  g_autofree char *rootfs = scratch_rootfs (scratch);
  g_autofree char *index_path = g_build_filename (layout, "index.json", NULL);
  g_autofree char *index = NULL;
  g_autofree char *twice = NULL;
  char *latest;

  write_one_layer_layout (layout, LAYER_TAR, entries, G_N_ELEMENTS (entries), FLAW_NONE);
  g_assert_true (g_file_get_contents (index_path, &index, NULL, NULL));
  /* The same manifest listed twice, then untagged. */
  {
    const char *open_list = strchr (index, '[');
    const char *close_list = strrchr (index, ']');
    g_autofree char *item = g_strndup (open_list + 1, close_list - open_list - 1);

    twice = g_strdup_printf ("{\"schemaVersion\":2,\"manifests\":[%s,%s]}", item, item);
  }
  put_text (layout, "index.json", twice);
  g_assert_false (unpack_layout_into (layout, rootfs, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_nonnull (strstr (error->message, "2 are tagged “latest”"));
  g_clear_error (&error);
  scratch_remove (rootfs);

  latest = strstr (twice, "\"latest\"");
  memcpy (latest, "\"oldest\"", 8);
  put_text (layout, "index.json", twice);
  g_assert_true (unpack_layout_into (layout, rootfs, NULL, &error));
  g_assert_no_error (error);
}

void
runtime_unpack_oci_add_tests (void)
{
#define ADD(path, func) g_test_add (path, Scratch, NULL, scratch_set_up, func, scratch_tear_down)
  ADD ("/runtime-unpack/oci/umoci-same-key", test_oci_umoci_same_key);
  ADD ("/runtime-unpack/oci/compressions", test_oci_compressions);
  ADD ("/runtime-unpack/oci/whiteouts", test_oci_whiteouts);
  ADD ("/runtime-unpack/oci/ambiguous-index", test_oci_ambiguous_index);
  ADD ("/runtime-unpack/oci/unreadable-modes", test_oci_unreadable_modes);
  ADD ("/runtime-unpack/oci/nested-index", test_oci_nested_index);
  ADD ("/runtime-unpack/hostile/dotdot", test_hostile_dotdot);
  ADD ("/runtime-unpack/hostile/dotdot-inside", test_hostile_dotdot_inside);
  ADD ("/runtime-unpack/hostile/absolute", test_hostile_absolute);
  ADD ("/runtime-unpack/hostile/symlink-then-file", test_hostile_symlink_then_file);
  ADD ("/runtime-unpack/hostile/symlink-across-layers", test_hostile_symlink_across_layers);
  ADD ("/runtime-unpack/hostile/hardlink-host", test_hostile_hardlink_host);
  ADD ("/runtime-unpack/hostile/hardlink-dotdot", test_hostile_hardlink_dotdot);
  ADD ("/runtime-unpack/hostile/hardlink-missing", test_hostile_hardlink_missing);
  ADD ("/runtime-unpack/hostile/setuid-and-device", test_hostile_setuid_and_device);
  ADD ("/runtime-unpack/hostile/sparse-10-gib", test_hostile_sparse);
  ADD ("/runtime-unpack/hostile/tar-bomb", test_hostile_tar_bomb);
  ADD ("/runtime-unpack/hostile/manifest-digest", test_hostile_manifest_digest);
  ADD ("/runtime-unpack/hostile/layer-digest", test_hostile_layer_digest);
  ADD ("/runtime-unpack/hostile/layer-size", test_hostile_layer_size);
  ADD ("/runtime-unpack/hostile/truncated-gzip", test_hostile_truncated_gzip);
  ADD ("/runtime-unpack/hostile/digest-path", test_hostile_digest_path);
#undef ADD
}
